// MULTI/EXEC/WATCH from Node.js clients against leasegate
// (../multi_clients.sh): ioredis multi() and node-redis (redis 4) multi(),
// with WATCH broken by a write from another connection (LG_PORT_B: the same
// gateway, or another replica on the same table). Prints `ok <what>` /
// `not ok <what>`; exits 1 when a check failed.
'use strict';
const Redis = require('ioredis');
const { createClient, WatchError } = require('redis');

const setup = process.env.LG_SETUP || 'embedded';
const portA = Number(process.env.LG_PORT_A);
const portB = Number(process.env.LG_PORT_B || portA);
let failed = 0;
function check(cond, what, detail) {
	console.log(`${cond ? 'ok' : 'not ok'} ${setup}: ${what}${cond || detail === undefined ? '' : ` (${JSON.stringify(detail)})`}`);
	if (!cond) failed = 1;
}
const run = `${process.pid}-${Date.now() % 100000}`;

async function ioredisMulti() {
	const a = new Redis({ port: portA, maxRetriesPerRequest: 1 });
	const b = new Redis({ port: portB, maxRetriesPerRequest: 1 });
	const k = `io-${run}`;
	let got = await a.multi().set(k, 'me', 'PX', 20000, 'NX').get(k).pttl(k).exec();
	check(got[0][1] === 'OK' && got[1][1] === 'me' && got[2][1] > 15000,
		'ioredis multi(): SET NX PX, GET, PTTL', got);
	got = await b.multi().set(k, 'you', 'PX', 20000, 'NX').get(k).exec();
	check(got[0][1] === null && got[1][1] === 'me', 'ioredis multi() from B: SET NX refused, GET shows A', got);
	// WATCH broken by B: exec() answers null
	const w = `io-w-${run}`;
	await a.watch(w);
	await b.set(w, 'b', 'PX', 20000, 'NX');
	got = await a.multi().set(w, 'a', 'PX', 20000).exec();
	check(got === null, 'ioredis: WATCH broken by B, exec() is null', got);
	check((await a.get(w)) === 'b', "ioredis: the queued SET did not run");
	// WATCH unchanged: exec() runs
	await a.watch(w);
	got = await a.multi().del(w).exec();
	check(got !== null && got[0][1] === 1, 'ioredis: WATCH unchanged, exec() runs the DEL', got);
	// a command outside the keyspace: EXECABORT
	let msg = '';
	try {
		await a.multi().set(`${k}-x`, 'v', 'PX', 5000).zadd(k, 1, 'm').exec();
	} catch (e) {
		msg = String(e && e.message);
	}
	check(/EXECABORT/.test(msg), 'ioredis: ZADD queued, exec() fails with EXECABORT', msg);
	check((await a.get(`${k}-x`)) === null, 'ioredis: nothing of the aborted transaction ran');
	a.disconnect();
	b.disconnect();
}

async function nodeRedisMulti() {
	const a = createClient({ socket: { port: portA } });
	const b = createClient({ socket: { port: portB } });
	await a.connect();
	await b.connect();
	const k = `nr-${run}`;
	let got = await a.multi().set(k, 'me', { NX: true, PX: 20000 }).get(k).exec();
	check(got[0] === 'OK' && got[1] === 'me', 'node-redis multi(): SET NX PX, GET', got);
	// WATCH on an isolated connection, broken by B
	const w = `nr-w-${run}`;
	let threw = '';
	try {
		await a.executeIsolated(async (iso) => {
			await iso.watch(w);
			await b.set(w, 'b', { NX: true, PX: 20000 });
			return iso.multi().set(w, 'a', { PX: 20000 }).exec();
		});
	} catch (e) {
		threw = e instanceof WatchError ? 'WatchError' : String(e && e.message);
	}
	check(threw === 'WatchError', 'node-redis: WATCH broken by B, exec() throws WatchError', threw);
	check((await a.get(w)) === 'b', 'node-redis: the queued SET did not run');
	got = await a.executeIsolated(async (iso) => {
		await iso.watch(w);
		const v = await iso.get(w);
		return iso.multi().del(w).get(w).exec().then((r) => [v, ...r]);
	});
	check(got[0] === 'b' && got[1] === 1 && got[2] === null,
		'node-redis: WATCH/GET/MULTI/DEL/EXEC (compare-and-delete)', got);
	await a.quit();
	await b.quit();
}

async function main() {
	try {
		await ioredisMulti();
		await nodeRedisMulti();
	} catch (e) {
		check(false, 'the clients run without an exception', e && e.stack);
	}
	process.exit(failed);
}
main();
