// Lock libraries that run their own Lua scripts, unmodified, against
// leasegate (../script_libs.sh): redlock 5 (npm redlock@5.0.0-beta.2, as
// "redlock5"), @sesamecare-oss/redlock, redis-semaphore (Mutex,
// RedlockMutex; its Semaphore answers the clear error), over ioredis. The
// holder connects to LG_PORT_A, the contender to LG_PORT_B (the same
// gateway, or another replica on the same table). Prints `ok <what>` /
// `not ok <what>`; exits 1 when a check failed.
'use strict';
const Redis = require('ioredis');
const Redlock5 = require('redlock5').default;
const Sesame = require('@sesamecare-oss/redlock').Redlock;
const { Mutex, RedlockMutex, Semaphore } = require('redis-semaphore');

const setup = process.env.LG_SETUP || 'embedded';
const portA = Number(process.env.LG_PORT_A);
const portB = Number(process.env.LG_PORT_B || portA);
let failed = 0;
function check(cond, what, detail) {
	console.log(`${cond ? 'ok' : 'not ok'} ${setup}: ${what}${cond || !detail ? '' : ` (${detail})`}`);
	if (!cond) failed = 1;
}
const run = `${process.pid}-${Date.now() % 100000}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function redlockFamily(name, make, a, b) {
	const rA = make(a), rB = make(b);
	const key = `${name}-${run}`;
	const lock = await rA.acquire([key], 5000);
	check(lock !== undefined, `${name}: acquire`);
	let refused = false;
	try {
		await rB.acquire([key], 5000);
	} catch (e) {
		refused = true;
	}
	check(refused, `${name}: a second acquire from the other connection is refused`);
	const pttl = await a.pttl(key);
	check(pttl > 3000 && pttl <= 5000, `${name}: PTTL shows the lease`, pttl);
	const extended = await lock.extend(10000);
	const pttl2 = await b.pttl(key);
	check(pttl2 > 8000, `${name}: extend (its script) stretches the lease`, pttl2);
	await extended.release();
	check((await b.get(key)) === null, `${name}: release (its script) frees the key`);
	const again = await rB.acquire([key], 2000);
	check(again !== undefined, `${name}: the other connection takes it after the release`);
	await again.release();
	// two resources at once: one script over both KEYS, one transaction
	const k2 = [`${key}-x`, `${key}-y`];
	const both = await rA.acquire(k2, 5000);
	check((await b.get(k2[0])) !== null && (await b.get(k2[1])) !== null,
		`${name}: one acquire of two resources holds both`);
	await both.release();
	check((await b.get(k2[0])) === null && (await b.get(k2[1])) === null,
		`${name}: one release frees both`);
}

async function semaphoreLib(a, b) {
	const key = `sem-${run}`;
	const m = new Mutex(a, key, { lockTimeout: 5000, refreshInterval: 1500, acquireTimeout: 500, retryInterval: 50 });
	await m.acquire();
	check(m.isAcquired, 'redis-semaphore Mutex: acquire');
	const other = new Mutex(b, key, { lockTimeout: 5000, acquireTimeout: 300, retryInterval: 50 });
	check(!(await other.tryAcquire()), 'redis-semaphore Mutex: another Mutex cannot take it');
	await sleep(2000); // a refresh (its script) ran
	check(m.isAcquired && (await b.pttl(`mutex:${key}`)) > 3000,
		'redis-semaphore Mutex: the refresh script keeps the lease', await b.pttl(`mutex:${key}`));
	await m.release();
	check((await b.get(`mutex:${key}`)) === null, 'redis-semaphore Mutex: release (its script) frees it');
	check(await other.tryAcquire(), 'redis-semaphore Mutex: the other takes it after the release');
	await other.release();

	const rm = new RedlockMutex([a], `r${key}`, { lockTimeout: 5000, acquireTimeout: 500, retryInterval: 50 });
	await rm.acquire();
	check((await b.get(`mutex:r${key}`)) !== null, 'redis-semaphore RedlockMutex: acquire');
	await rm.release();
	check((await b.get(`mutex:r${key}`)) === null,
		'redis-semaphore RedlockMutex: release frees the lock (not only reports it)');

	const s = new Semaphore(a, `s${key}`, 2, { acquireTimeout: 300, retryInterval: 50 });
	let msg = '';
	try {
		await s.acquire();
	} catch (e) {
		msg = String(e && e.message);
	}
	check(/sorted-set semaphores/.test(msg), "redis-semaphore Semaphore: the error names what it needs", msg);
}

async function main() {
	const a = new Redis({ port: portA, lazyConnect: false, maxRetriesPerRequest: 1 });
	const b = new Redis({ port: portB, lazyConnect: false, maxRetriesPerRequest: 1 });
	const opts = { retryCount: 0, driftFactor: 0.01 };
	try {
		await redlockFamily('redlock 5', (c) => new Redlock5([c], opts), a, b);
		await redlockFamily('@sesamecare-oss/redlock', (c) => new Sesame([c], opts), a, b);
		await semaphoreLib(a, b);
	} catch (e) {
		check(false, 'the libraries run without an exception', e && e.stack);
	}
	a.disconnect();
	b.disconnect();
	process.exit(failed);
}
main();
