'use strict';
// Unmodified Node.js Redis clients against leasegate: ioredis 5 (default
// options: INFO as its ready check, CLIENT SETNAME/SETINFO at connect) and
// node-redis 4 (createClient + sendCommand). Run by ../node_clients.sh with
// LG_PORT = a leasegate on the embedded store and LG_N0 = the number of the
// last `ok` line it printed. Prints `ok <n> <what>`; exits 1 at the first
// failed check.
const assert = require('node:assert/strict');
const Redis = require('ioredis');
const { createClient } = require('redis');

const port = Number(process.env.LG_PORT);
assert.ok(port > 0, 'LG_PORT must name the leasegate port');
const host = '127.0.0.1';
const ioredisVersion = require('ioredis/package.json').version;
const BAD_LEASE = 'ERR lease-ms must be an integer from 1000 to 86400000';

let n = Number(process.env.LG_N0 || 0);
const clients = [];

// The whole run must end well before the runner's patience does.
setTimeout(() => {
	console.log(`not ok ${n + 1} timed out after 25 s`);
	process.exit(1);
}, 25000).unref();

async function check(what, fn) {
	n++;
	try {
		await fn();
	} catch (e) {
		console.log(`not ok ${n} ${what}`);
		console.log(String((e && e.stack) || e).replace(/^/gm, '# '));
		process.exit(1);
	}
	console.log(`ok ${n} ${what}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// RESP2 flat pairs -> object
function pairs(arr) {
	assert.ok(Array.isArray(arr), `want flat pairs, got ${JSON.stringify(arr)}`);
	assert.equal(arr.length % 2, 0);
	const o = {};
	for (let i = 0; i < arr.length; i += 2) o[arr[i]] = arr[i + 1];
	return o;
}

// CLIENT INFO line -> object (name=... lib-name=... resp=...)
function clientInfo(line) {
	const o = {};
	for (const kv of String(line).trim().split(' ')) {
		const i = kv.indexOf('=');
		o[kv.slice(0, i)] = kv.slice(i + 1);
	}
	return o;
}

// Resolves once INFO leases (read with FN) shows `waits:<want>`; 3 s at most.
async function awaitWaits(fn, want) {
	let info = '';
	for (let i = 0; i < 300; i++) {
		info = await fn();
		if (new RegExp(`^waits:${want}\\r?$`, 'm').test(info)) return;
		await sleep(10);
	}
	assert.fail(`INFO leases never showed waits:${want}:\n${info}`);
}

async function ioredis(name) {
	const r = new Redis({ host, port, connectionName: name });
	clients.push(r);
	await new Promise((resolve, reject) => {
		r.once('ready', resolve);
		r.once('error', reject);
	});
	return r;
}

async function nodeRedis(name) {
	const c = createClient({ url: `redis://${host}:${port}`, name });
	clients.push(c);
	c.on('error', () => {}); // a failed command rejects its own promise
	await c.connect();
	return c;
}

async function main() {
	// ---------------------------------------------------------------- ioredis
	let a, b, c;
	await check(`ioredis ${ioredisVersion}: connects, INFO ready check passes`, async () => {
		a = await ioredis('io-a');
		assert.equal(a.status, 'ready');
		const info = await a.info();
		assert.match(info, /^redis_version:\d+\.\d+\.\d+\r?$/m);
		assert.match(info, /^loading:0\r?$/m); // what the ready check waits on
	});
	await check('ioredis: connectionName set (CLIENT SETNAME), CLIENT SETINFO lib-name/lib-ver recorded', async () => {
		assert.equal(await a.client('GETNAME'), 'io-a');
		const ci = clientInfo(await a.client('INFO'));
		assert.equal(ci.name, 'io-a');
		assert.equal(ci['lib-name'], 'ioredis');
		assert.equal(ci['lib-ver'], ioredisVersion);
		assert.equal(ci.resp, '2');
	});
	b = await ioredis('io-b');
	c = await ioredis('io-c');

	let t1;
	await check("ioredis: call('LOCK.ACQUIRE') returns an integer fencing token", async () => {
		t1 = await a.call('LOCK.ACQUIRE', 'io-lock', 10000, 'HOLDER', 'io-a');
		assert.equal(typeof t1, 'number');
		assert.ok(Number.isInteger(t1) && t1 >= 1, `token ${t1}`);
	});
	await check('ioredis: LOCK.STATE flat pairs, mine 1 for the holder, 0 for another connection', async () => {
		assert.deepEqual(await a.call('LOCK.STATE', 'io-lock'),
			['held', 1, 'holder', 'io-a', 'lease-ms', 10000, 'fencing-token', t1, 'mine', 1, 'heartbeat', 'lease']);
		assert.deepEqual(await b.call('LOCK.STATE', 'io-lock'),
			['held', 1, 'holder', 'io-a', 'lease-ms', 10000, 'fencing-token', t1, 'mine', 0, 'heartbeat', 'lease']);
	});
	await check('ioredis: a second client is refused: null', async () => {
		assert.equal(await b.call('LOCK.ACQUIRE', 'io-lock', 10000), null);
		assert.equal(await b.call('LOCK.RELEASE', 'io-lock'), 0);
	});
	await check('ioredis: LOCK.RENEW by the holder, and by (name, token) from another connection: 1', async () => {
		assert.equal(await a.call('LOCK.RENEW', 'io-lock'), 1);
		assert.equal(await b.call('LOCK.RENEW', 'io-lock', t1), 1);
		assert.equal(await b.call('LOCK.RENEW', 'io-lock'), 0);
	});
	await check('ioredis: LOCK.RELEASE 1, again 0, then held 0 and another client acquires', async () => {
		assert.equal(await a.call('LOCK.RELEASE', 'io-lock'), 1);
		assert.equal(await a.call('LOCK.RELEASE', 'io-lock'), 0);
		assert.equal(pairs(await b.call('LOCK.STATE', 'io-lock')).held, 0);
		const t = await b.call('LOCK.ACQUIRE', 'io-lock', 10000);
		assert.ok(t > t1, `token ${t} after ${t1}`);
		assert.equal(await b.call('LOCK.RELEASE', 'io-lock', t), 1);
	});

	await check('ioredis: pipeline() of 6 lock commands, replies in order, the bad one an error', async () => {
		const res = await a.pipeline()
			.call('LOCK.ACQUIRE', 'io-pipe', 10000, 'HOLDER', 'io-pipe')
			.call('LOCK.STATE', 'io-pipe')
			.call('LOCK.RENEW', 'io-pipe')
			.call('LOCK.RELEASE', 'io-pipe')
			.call('LOCK.RELEASE', 'io-pipe')
			.call('LOCK.ACQUIRE', 'io-pipe', 5)
			.exec();
		assert.equal(res.length, 6);
		const [[e0, tok]] = res;
		assert.equal(e0, null);
		assert.ok(Number.isInteger(tok) && tok >= 1);
		assert.deepEqual(res.slice(1, 5), [
			[null, ['held', 1, 'holder', 'io-pipe', 'lease-ms', 10000, 'fencing-token', tok, 'mine', 1, 'heartbeat', 'lease']],
			[null, 1], [null, 1], [null, 0],
		]);
		assert.ok(res[5][0] instanceof Error);
		assert.equal(res[5][0].message, BAD_LEASE);
	});

	await check('ioredis: a WAIT acquire is handed the lock when the holder releases', async () => {
		const ta = await a.call('LOCK.ACQUIRE', 'io-wait', 10000, 'HOLDER', 'io-a');
		assert.ok(ta >= 1);
		// lease 10 s, WAIT 5 s: only the release can end this wait with a token
		const waiting = b.call('LOCK.ACQUIRE', 'io-wait', 10000, 'WAIT', 5000, 'HOLDER', 'io-b');
		await awaitWaits(() => c.info('leases'), 1);
		const released = Date.now();
		assert.equal(await a.call('LOCK.RELEASE', 'io-wait'), 1);
		const tb = await waiting;
		const ms = Date.now() - released;
		assert.equal(tb, ta + 1);
		assert.ok(ms < 1000, `handed over after ${ms} ms`);
		assert.deepEqual(await b.call('LOCK.STATE', 'io-wait'),
			['held', 1, 'holder', 'io-b', 'lease-ms', 10000, 'fencing-token', tb, 'mine', 1, 'heartbeat', 'lease']);
	});

	await check('ioredis: disconnect() releases: a WAIT on another client gets the lock', async () => {
		const tb = pairs(await a.call('LOCK.STATE', 'io-wait'))['fencing-token'];
		assert.equal(await a.call('LOCK.ACQUIRE', 'io-wait', 10000), null);
		const waiting = a.call('LOCK.ACQUIRE', 'io-wait', 10000, 'WAIT', 3000, 'HOLDER', 'io-a');
		await awaitWaits(() => c.info('leases'), 1);
		const ended = new Promise((r) => b.once('end', r));
		b.disconnect();
		// lease 10 s, WAIT 3 s: only the release at close can hand it over
		assert.equal(await waiting, tb + 1);
		await ended; // and ioredis did not reconnect
		assert.equal(pairs(await c.call('LOCK.STATE', 'io-wait')).holder, 'io-a');
	});

	await check('ioredis: LEADER.CAMPAIGN token (same token while leading), a rival times out: null', async () => {
		const tl = await a.call('LEADER.CAMPAIGN', 'io-leader', 10000, 'HOLDER', 'io-a');
		assert.ok(Number.isInteger(tl) && tl >= 1);
		assert.equal(await a.call('LEADER.CAMPAIGN', 'io-leader', 10000), tl);
		assert.equal(await c.call('LEADER.CAMPAIGN', 'io-leader', 10000, 'WAIT', 300, 'HOLDER', 'io-c'), null);
		assert.deepEqual(await c.call('LEADER.WATCH', 'io-leader'),
			['holder', 'io-a', 'fencing-token', tl, 'lease-ms', 10000]);
	});
	await check('ioredis: LEADER.RESIGN 1 hands the term to the waiting campaigner, again 0', async () => {
		const tl = (await c.call('LEADER.WATCH', 'io-leader'))[3];
		const waiting = c.call('LEADER.CAMPAIGN', 'io-leader', 10000, 'WAIT', 5000, 'HOLDER', 'io-c');
		await awaitWaits(() => a.info('leases'), 1);
		assert.equal(await a.call('LEADER.RESIGN', 'io-leader'), 1);
		assert.equal(await waiting, tl + 1);
		assert.equal(await a.call('LEADER.RESIGN', 'io-leader'), 0);
		assert.deepEqual(await a.call('LEADER.WATCH', 'io-leader'),
			['holder', 'io-c', 'fencing-token', tl + 1, 'lease-ms', 10000]);
		assert.equal(await c.call('LEADER.RESIGN', 'io-leader'), 1);
	});

	await check('ioredis: a bad lease-ms rejects with ReplyError "-ERR ..."; the connection still works', async () => {
		await assert.rejects(a.call('LOCK.ACQUIRE', 'io-err', 5), (e) => {
			assert.equal(e.name, 'ReplyError');
			assert.equal(e.message, BAD_LEASE);
			return true;
		});
		await assert.rejects(a.call('LOCK.ACQUIRE', 'io-err'),
			{ message: "ERR wrong number of arguments for 'lock.acquire' command" });
		assert.equal(await a.ping(), 'PONG');
		assert.equal(await a.call('LOCK.STATE', 'io-err'), null);
	});

	// ------------------------------------------------------------- node-redis
	let na, nb;
	const nrVersion = require('redis/package.json').version;
	await check(`node-redis ${nrVersion}: createClient({url, name}).connect(), ping() PONG`, async () => {
		na = await nodeRedis('nr-a');
		assert.equal(na.isReady, true);
		assert.equal(await na.ping(), 'PONG');
	});
	await check('node-redis: info() and info("leases")', async () => {
		const info = await na.info();
		assert.match(info, /^# Server\r?$/m);
		assert.match(info, /^redis_version:\d+\.\d+\.\d+\r?$/m);
		assert.match(info, /^# Leases\r?$/m);
		const leases = await na.info('leases');
		assert.match(leases, /^leases_held:\d+\r?$/m);
		assert.doesNotMatch(leases, /^# Server/m);
	});
	await check('node-redis: name set (CLIENT SETNAME), CLIENT SETINFO lib-name recorded, RESP2', async () => {
		assert.equal(await na.clientGetName(), 'nr-a');
		const ci = clientInfo(await na.sendCommand(['CLIENT', 'INFO']));
		assert.equal(ci.name, 'nr-a');
		assert.equal(ci['lib-name'], 'node-redis');
		assert.match(ci['lib-ver'], /^\d+\.\d+\.\d+$/); // the version @redis/client says it is
		assert.equal(ci.resp, '2');
	});
	console.log('# node-redis 4.x speaks RESP2 only (RESP3 came with node-redis 5): no RESP3 case here');
	nb = await nodeRedis('nr-b');

	let tn;
	await check('node-redis: sendCommand LOCK.ACQUIRE returns a token; LOCK.STATE flat pairs', async () => {
		tn = await na.sendCommand(['LOCK.ACQUIRE', 'nr-lock', '10000', 'HOLDER', 'nr-a']);
		assert.ok(Number.isInteger(tn) && tn >= 1, `token ${tn}`);
		assert.deepEqual(await na.sendCommand(['LOCK.STATE', 'nr-lock']),
			['held', 1, 'holder', 'nr-a', 'lease-ms', 10000, 'fencing-token', tn, 'mine', 1, 'heartbeat', 'lease']);
	});
	await check('node-redis: a second client is refused: null (and so is a lock ioredis holds)', async () => {
		assert.equal(await nb.sendCommand(['LOCK.ACQUIRE', 'nr-lock', '10000']), null);
		assert.equal(await nb.sendCommand(['LOCK.ACQUIRE', 'io-wait', '10000']), null);
		assert.equal(pairs(await nb.sendCommand(['LOCK.STATE', 'nr-lock'])).mine, 0);
	});
	await check('node-redis: commands issued together (auto-pipelined) answer in order', async () => {
		const res = await Promise.all([
			na.sendCommand(['LOCK.RENEW', 'nr-lock']),
			na.sendCommand(['LOCK.RENEW', 'nr-lock', String(tn)]),
			na.sendCommand(['LOCK.RENEW', 'nr-lock', String(tn + 100)]),
			na.sendCommand(['LOCK.STATE', 'nr-lock']),
			na.sendCommand(['LOCK.STATE', 'nr-none']),
		]);
		assert.deepEqual(res, [1, 1, 0,
			['held', 1, 'holder', 'nr-a', 'lease-ms', 10000, 'fencing-token', tn, 'mine', 1, 'heartbeat', 'lease'], null]);
	});
	await check('node-redis: a WAIT acquire is handed the lock at LOCK.RELEASE (1, again 0)', async () => {
		const waiting = nb.sendCommand(['LOCK.ACQUIRE', 'nr-lock', '10000', 'WAIT', '5000', 'HOLDER', 'nr-b']);
		await awaitWaits(() => na.info('leases'), 1);
		assert.equal(await na.sendCommand(['LOCK.RELEASE', 'nr-lock']), 1);
		assert.equal(await waiting, tn + 1);
		assert.equal(await na.sendCommand(['LOCK.RELEASE', 'nr-lock']), 0);
		assert.equal(pairs(await na.sendCommand(['LOCK.STATE', 'nr-lock'])).holder, 'nr-b');
	});
	await check('node-redis: quit() releases: a WAIT on another client gets the lock', async () => {
		const waiting = na.sendCommand(['LOCK.ACQUIRE', 'nr-lock', '10000', 'WAIT', '3000', 'HOLDER', 'nr-a']);
		await awaitWaits(() => c.info('leases'), 1);
		assert.equal(await nb.quit(), 'OK');
		assert.equal(await waiting, tn + 2);
		assert.equal(await na.sendCommand(['LOCK.RELEASE', 'nr-lock', String(tn + 2)]), 1);
	});
	await check('node-redis: LEADER.CAMPAIGN token, LEADER.RESIGN 1', async () => {
		const tl = await na.sendCommand(['LEADER.CAMPAIGN', 'nr-leader', '10000', 'HOLDER', 'nr-a']);
		assert.ok(Number.isInteger(tl) && tl >= 1);
		assert.equal(await na.sendCommand(['LEADER.RESIGN', 'nr-leader']), 1);
		assert.equal(await na.sendCommand(['LEADER.RESIGN', 'nr-leader']), 0);
	});
	await check('node-redis: a bad lease-ms rejects with ErrorReply "-ERR ..."; the client still works', async () => {
		await assert.rejects(na.sendCommand(['LOCK.ACQUIRE', 'nr-err', '5']), (e) => {
			assert.equal(e.constructor.name, 'ErrorReply');
			assert.equal(e.message, BAD_LEASE);
			return true;
		});
		assert.equal(await na.ping(), 'PONG');
	});

	await check('every client closes; no lease is left held', async () => {
		await na.quit();
		await c.quit();
		a.disconnect();
		const probe = new Redis({ host, port, enableReadyCheck: false, lazyConnect: true });
		clients.push(probe);
		let info = '';
		for (let i = 0; i < 300; i++) {
			info = await probe.info('leases');
			if (/^leases_held:0\r?$/m.test(info)) break;
			await sleep(10);
		}
		assert.match(info, /^leases_held:0\r?$/m);
		assert.match(info, /^waits:0\r?$/m);
		probe.disconnect();
	});
}

main().then(() => process.exit(0), (e) => {
	console.log(`not ok ${n + 1} unexpected: ${(e && e.stack) || e}`);
	process.exit(1);
});
