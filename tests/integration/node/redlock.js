'use strict';
// redlock 4 (npm), unmodified, over ioredis 5, against leasegate (issue 14).
// Run by ../redis_lock_lib.sh with LG_SETUP (a name for the output),
// LG_PORT_A (the holder's gateway) and LG_PORT_B (the contender's: another
// gateway of the same table, or the same one). redlock runs its Lua scripts
// with EVALSHA (EVAL on NOSCRIPT); leasegate knows them by their SHA1 for
// one resource, and runs them as Lua for several.
// Prints `ok <setup>: <what>` / `not ok ...`; exits 1 when any failed.
const Redis = require('ioredis');
const Redlock = require('redlock');

const setup = process.env.LG_SETUP || 'leasegate';
const portA = Number(process.env.LG_PORT_A);
const portB = Number(process.env.LG_PORT_B || portA);
const run = String(process.pid);
let failed = 0;

setTimeout(() => {
	console.log(`not ok ${setup}: redlock.js ran within 60 s`);
	process.exit(1);
}, 60000).unref();

function check(ok, what, got) {
	if (!ok) failed++;
	const extra = ok || got === undefined ? '' : ` (got ${JSON.stringify(got)})`;
	console.log(`${ok ? 'ok' : 'not ok'} ${setup}: redlock: ${what}${extra}`);
	return ok;
}

// The error a promise rejects with, or null when it resolves.
async function rejection(p) {
	try {
		await p;
		return null;
	} catch (e) {
		return e;
	}
}

const a = new Redis({ port: portA, host: '127.0.0.1', lazyConnect: true });
const b = new Redis({ port: portB, host: '127.0.0.1', lazyConnect: true });
const clientErrors = [];
const holder = new Redlock([a], { retryCount: 0 });
const tryOnce = new Redlock([b], { retryCount: 0 });
const waiter = new Redlock([b], { retryCount: 80, retryDelay: 100, retryJitter: 20 });
for (const r of [holder, tryOnce, waiter]) r.on('clientError', (e) => clientErrors.push(String(e)));

async function basics() {
	const name = `redlock-${run}`;
	const lock = await holder.lock(name, 10000);
	check(typeof lock.value === 'string' && lock.value.length === 32, 'lock() takes a free lock');
	check((await a.get(name)) === lock.value, 'GET answers the lock\'s value');
	let pttl = await a.pttl(name);
	check(pttl > 8000 && pttl <= 10000, 'PTTL: what remains of the 10 s lease', pttl);
	const refused = await rejection(tryOnce.lock(name, 10000));
	check(refused !== null && refused.name === 'LockError',
		'another client\'s lock() (no retries) is refused while held', refused && refused.message);
	await lock.extend(4000);
	pttl = await a.pttl(name);
	check(pttl > 3000 && pttl <= 4000, 'extend(4000) replaces the lease: 4 s remain', pttl);
	check((await rejection(lock.unlock())) === null, 'unlock() resolves');
	check((await a.get(name)) === null, 'unlocked: GET nil');
	const next = await tryOnce.lock(name, 10000);
	check(next.value !== lock.value && (await b.get(name)) === next.value,
		'the other client locks it now');
	const stale = await rejection(lock.unlock());
	check(stale !== null && stale.name === 'LockError',
		'the first lock\'s unlock() then fails: not its lease', stale && stale.message);
	check((await a.get(name)) === next.value, '... and leaves the new holder\'s lock');
	await next.unlock();
}

async function takeover() {
	const name = `redlock-short-${run}`;
	const lock = await holder.lock(name, 2000);
	const t0 = Date.now();
	const taken = await rejection(waiter.lock(name, 2000).then((l) => {
		takeover.lock = l;
	}));
	const took = (Date.now() - t0) / 1000;
	console.log(`# ${setup}: redlock's retries took the lock over after ${took.toFixed(2)} s`);
	check(taken === null && took >= 1.8, 'a lock of 2 s never unlocked is taken over once it ran out',
		taken ? taken.message : took);
	const stale = await rejection(lock.unlock());
	check(stale !== null && stale.name === 'LockError',
		'the first holder\'s unlock() then fails', stale && stale.message);
	if (takeover.lock) await takeover.lock.unlock();
}

// Several resources: redlock 4 sends EVALSHA of its script with two keys,
// leasegate answers NOSCRIPT, and redlock sends EVAL with the body, which
// runs as Lua: all the keys or none, in one commit. The other gateway sees
// both; a lock on [r2, r3] from there is refused and leaves r3 free.
async function multi() {
	clientErrors.length = 0;
	const r1 = `r1-${run}`, r2 = `r2-${run}`, r3 = `r3-${run}`;
	const lock = await holder.lock([r1, r2], 5000);
	check((await b.get(r1)) === lock.value && (await b.get(r2)) === lock.value,
		'a lock on two resources holds both (GET on the other gateway)');
	const refused = await rejection(tryOnce.lock([r2, r3], 5000));
	check(refused !== null && refused.name === 'LockError',
		'a lock on [r2, r3] from the other gateway is refused: r2 is held',
		refused && refused.message);
	check((await b.exists(r3)) === 0, '... and writes nothing: r3 stays free');
	await lock.extend(8000);
	const pttl = [await b.pttl(r1), await b.pttl(r2)];
	check(pttl.every((t) => t > 7000 && t <= 8000), 'extend(8000) extends both', pttl);
	check((await rejection(lock.unlock())) === null, 'unlock() resolves');
	check((await b.exists(r1, r2)) === 0, 'unlocked: both free on the other gateway');
	const next = await tryOnce.lock([r2, r3], 5000);
	check((await a.get(r3)) === next.value, 'then [r2, r3] is taken from the other gateway');
	await next.unlock();
	check(clientErrors.length === 0, 'no client errors', clientErrors);
}

(async () => {
	await a.connect();
	await b.connect();
	for (const part of [basics, takeover, multi]) {
		try {
			await part();
		} catch (e) {
			check(false, `${part.name} ran to its end`, String((e && e.stack) || e));
		}
	}
	a.disconnect();
	b.disconnect();
	process.exit(failed ? 1 : 0);
})();
