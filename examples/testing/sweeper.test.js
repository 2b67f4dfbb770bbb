// A service that works while it leads, tested with node:test, ioredis and
// leasegate --test-mode: it stops working when its lease is lost (LOST) and
// works again after a new campaign, with no sleep (docs/testing.md).
// $LG_PORT: the Redis port of a leasegate started with --test-mode.
'use strict';
const { test, after } = require('node:test');
const assert = require('node:assert');
const Redis = require('ioredis');

const PORT = Number(process.env.LG_PORT);
const LEASE_MS = 30000;
const clients = [];
function connect() {
	const c = new Redis({ port: PORT, host: '127.0.0.1' });
	clients.push(c);
	return c;
}
after(() => clients.forEach((c) => c.disconnect()));

// The service under test: leads `name` and sweeps while it leads.
class Sweeper {
	constructor(name) {
		this.redis = connect();
		this.name = name;
		this.token = null;
		this.swept = 0;
	}
	async campaign() {
		this.token = await this.redis.call('LEADER.CAMPAIGN', this.name, LEASE_MS, 'WAIT', 0);
		return this.token;
	}
	// One round of work, only while leading: false once the term is lost.
	async sweep() {
		if (this.token === null) return false;
		try { // answered at once while this term lasts, -LOST once it is lost
			await this.redis.call('LEADER.CAMPAIGN', this.name, LEASE_MS);
		} catch (e) {
			if (!String(e.message).startsWith('LOST')) throw e;
			this.token = null;
			return false;
		}
		this.swept++;
		return true;
	}
}

test('stops on LOST and resumes after a new campaign', async () => {
	const svc = new Sweeper('order-sweeper');
	const t = connect(); // the test's own connection
	const waiter = connect();
	await waiter.ping(); // connected before it is needed
	assert.strictEqual(await svc.campaign(), 1);
	assert.strictEqual(await svc.sweep(), true);

	// another pod takes the lock, as a crashed holder that never renews
	assert.strictEqual(
		await t.call('LOCK.SIMULATE', 'HOLDER', svc.name, LEASE_MS, 'another-pod'), 2);
	await t.call('DEBUG.CLOCK', 'ADVANCE', LEASE_MS / 3); // the next renewal runs
	assert.strictEqual(await svc.sweep(), false); // LOST: the service stopped

	const refused = waiter.call('LOCK.WAITREFUSAL', svc.name); // before the campaign
	const again = svc.campaign();
	assert.strictEqual(await refused, 1); // the campaign found the lock held and waits
	await t.call('DEBUG.CLOCK', 'ADVANCE', LEASE_MS); // a whole lease of the crashed holder
	assert.strictEqual(await again, 3);
	assert.strictEqual(await svc.sweep(), true);
	assert.strictEqual(svc.swept, 2);
});
