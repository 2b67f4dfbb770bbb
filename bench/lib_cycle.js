// lib_cycle: a lock library's acquire+release cycle, CLIENTS connections
// at once for SECONDS, against one server (PORT): redlock 5 (npm
// redlock@5.0.0-beta.2: EVALSHA of its acquire script, then of its
// release script) over ioredis, random names. Run by bench/lib_compare.sh.
// Prints one line: "cycles <n> errors <n> seconds <s>".
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock5').default;

const port = Number(process.env.PORT);
const clients = Number(process.env.CLIENTS || 50);
const seconds = Number(process.env.SECONDS || 2);
let cycles = 0, errors = 0, stop = false;

async function worker(i) {
	const c = new Redis({ port, maxRetriesPerRequest: 1 });
	const lock = new Redlock([c], { retryCount: 0, driftFactor: 0.01, automaticExtensionThreshold: 0 });
	let n = 0;
	while (!stop) {
		const key = `bench-${process.pid}-${i}-${n++}`;
		try {
			const l = await lock.acquire([key], 5000);
			await l.release();
			cycles++;
		} catch (e) {
			errors++;
		}
	}
	c.disconnect();
}

async function main() {
	const warm = new Redis({ port });
	await warm.ping();
	warm.disconnect();
	const t0 = process.hrtime.bigint();
	const ws = [];
	for (let i = 0; i < clients; i++) ws.push(worker(i));
	setTimeout(() => { stop = true; }, seconds * 1000);
	await Promise.all(ws);
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	console.log(`cycles ${cycles} errors ${errors} seconds ${s.toFixed(2)}`);
}
main();
