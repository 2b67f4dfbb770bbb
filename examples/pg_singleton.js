#!/usr/bin/env node
// A singleton job through leasegate's PostgreSQL port: run any number of
// copies; the one holding advisory lock KEY works, the others try again
// every few seconds, and one of them takes over once the holder's
// connection closes (it stops, crashes or loses its lease). Plain
// pg_try_advisory_lock, so the same code runs against PostgreSQL itself,
// but for leasegate.token (the fencing token). Needs node-postgres
// (npm install pg).
//
//   node pg_singleton.js [connection-uri] [key]
//
// e.g. postgresql://leasegate:s3cret@127.0.0.1:5432/locks; PGHOST, PGPORT,
// PGUSER, PGPASSWORD and PGDATABASE fill in what it leaves out.
'use strict';
const { Client } = require('pg');

const connectionString = process.argv[2] || undefined;
const key = process.argv[3] || '42'; // a string: bigint keys keep every digit
const retryMs = 2000, stepMs = 500;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let stopping = false;
process.on('SIGTERM', () => { stopping = true; });
process.on('SIGINT', () => { stopping = true; });

async function one(client, sql) {
  const r = await client.query({ text: sql, values: [key], rowMode: 'array' });
  return r.rows[0][0];
}

async function lead(client) {
  while (!stopping && !(await one(client, 'SELECT pg_try_advisory_lock($1)'))) await sleep(retryMs);
  if (stopping) return;
  const token = await one(client, 'SELECT leasegate.token($1)'); // int8: a string
  console.log(`leading token=${token}`);
  while (!stopping) {
    // One unit of work. Writes elsewhere carry the token, so a store that
    // keeps the highest token seen refuses a stale leader.
    console.log(`working token=${token}`);
    await sleep(stepMs);
    // Still the holder? A lost lease makes this call fail.
    if ((await one(client, 'SELECT leasegate.token($1)')) !== token) throw new Error('the lock was lost');
  }
  // Stopping while leading: hand the lock on now, not at the close.
  await one(client, 'SELECT pg_advisory_unlock($1)');
  console.log(`released token=${token}`);
}

async function main() {
  while (!stopping) {
    // One connection of its own for the lock holder (not a pool): the lock
    // belongs to this session and ends with it.
    const client = new Client({ connectionString });
    client.on('error', () => {}); // a dropped connection fails the next query
    try {
      await client.connect();
      await lead(client);
    } catch (e) {
      console.log(`lost: ${e.message}; trying again`);
      await sleep(retryMs);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

main();
