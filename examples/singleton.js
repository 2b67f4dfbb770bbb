#!/usr/bin/env node
// A singleton job on leasegate from Node.js: run any number of copies; one
// leads and works, the others wait, and one of them takes over when the
// leader stops, crashes or loses its lease. A leader whose gateway restarts
// (a rolling update, --drain-grace) reconnects and adopts its term: it goes
// on working with the same token. Needs ioredis (npm install ioredis).
//
//   node singleton.js [--host H] [--port P] [--also HOST:PORT,...] [--name N]
//                     [--lease-ms MS] [--step S]
//
// LEASEGATE_HOST, LEASEGATE_PORT and LEASEGATE_ALSO fill in what the flags
// leave out.
'use strict';
const os = require('node:os');
const { parseArgs } = require('node:util');
const Redis = require('ioredis');
const { ReplyError } = Redis;

const { values: opt } = parseArgs({
  options: {
    host: { type: 'string', default: process.env.LEASEGATE_HOST || '127.0.0.1' },
    port: { type: 'string', default: process.env.LEASEGATE_PORT || '6379' },
    // more gateways to reconnect to (behind a Service: none)
    also: { type: 'string', default: process.env.LEASEGATE_ALSO || '' },
    name: { type: 'string', default: 'nightly-report' },
    'lease-ms': { type: 'string', default: '30000' },
    step: { type: 'string', default: '0.5' }, // seconds per unit of work
  },
});
const name = opt.name, leaseMs = opt['lease-ms'], stepMs = Number(opt.step) * 1000;
const servers = [`${opt.host}:${opt.port}`, ...opt.also.split(',').filter(Boolean)].map((s) => {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
});
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const isLost = (e) => e instanceof ReplyError && e.message.startsWith('LOST');
let r = null, turn = 0;
let stopping = false;    // SIGTERM/SIGINT came
let campaigning = false; // blocked in LEADER.CAMPAIGN

// One connection at a time: a term belongs to the connection that
// campaigned (or adopted it), and closing it hands the lock on. So no
// automatic reconnect (retryStrategy: null): a lost connection fails the
// command in flight, and the code below decides what the new one does.
function connect() {
  hangUp();
  const { host, port } = servers[turn++ % servers.length];
  r = new Redis({ host, port, lazyConnect: true, retryStrategy: () => null });
  r.on('error', () => {}); // reported by the command that fails
}
// Closes it. Once: ioredis's disconnect() of a closed connection would
// hold the process up for 2 s.
function hangUp() {
  if (r && r.status !== 'end') r.disconnect();
}

// Units of work while this connection leads, until stopping. Throws
// ReplyError LOST when the term is lost, another error when the gateway goes.
async function work(token) {
  while (!stopping) {
    // One unit of work. Writes elsewhere carry the token, so a store that
    // keeps the highest token seen refuses a stale leader.
    console.log(`working token=${token}`);
    await sleep(stepMs);
    // Still leading? While it leads, CAMPAIGN answers this term's token at
    // once (no DynamoDB request); a lost term answers -LOST <reason>.
    if ((await r.call('LEADER.CAMPAIGN', name, leaseMs)) !== token) {
      throw new ReplyError('LOST new term');
    }
  }
}

// LEADER.ADOPT on a new connection: the term's new secret, or null when it
// cannot be adopted (its gateway's grace is over, or it ended). Tries for a
// few seconds: the old gateway marks the term adoptable as it closes its
// connections.
async function adopt(token, secret) {
  for (let i = 0; i < 50; i++) {
    try {
      const got = await r.call('LEADER.ADOPT', name, token, secret);
      if (got !== 0) return got[1]; // [token, new secret]
    } catch (e) {
      if (isLost(e)) return null;
      if (!(e instanceof ReplyError)) connect(); // this one failed too: the next
    }
    await sleep(100);
  }
  return null;
}

// Works while leading; across a restart of the gateway, reconnects and
// adopts the term. True when stopping (it still leads), false when the
// term was lost.
async function lead(token, secret) {
  for (;;) {
    try {
      await work(token);
      return true;
    } catch (e) {
      if (isLost(e)) {
        console.log(`lost: ${e.message}; campaigning again`);
        return false;
      }
      if (e instanceof ReplyError) throw e;
      // The gateway went (a rolling update drains it: the term stays held
      // a while): reconnect, to another gateway if there are some, and
      // adopt it with its token and secret.
      connect();
      secret = await adopt(token, secret);
      if (secret === null) {
        console.log(`lost: connection (${e.message}), the term not adoptable; campaigning again`);
        return false;
      }
      console.log(`adopted token=${token}`);
    }
  }
}

function onSignal() {
  stopping = true;
  if (campaigning) hangUp(); // blocked in CAMPAIGN: leave now, the close cancels it
}
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);

async function main() {
  const label = `${os.hostname()}:${process.pid}`;
  connect();
  while (!stopping) {
    let token, secret;
    campaigning = true;
    try {
      // Blocks until this connection leads: [token, secret]. The fencing
      // token names the term; the secret lets a new connection adopt it if
      // this one's gateway restarts.
      [token, secret] = await r.call('LEADER.CAMPAIGN', name, leaseMs, 'HOLDER', label, 'ADOPTABLE');
    } catch (e) {
      if (stopping) break;
      if (e instanceof ReplyError) throw e;
      console.log(`leasegate unreachable (${e.message}); retrying`);
      connect();
      await sleep(1000);
      continue;
    } finally {
      campaigning = false;
    }
    console.log(`leading token=${token}`);
    if (await lead(token, secret)) {
      // Stopping while leading: hand the lock on now rather than at the close.
      await r.call('LEADER.RESIGN', name);
      console.log(`resigned token=${token}`);
    }
  }
  hangUp();
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
