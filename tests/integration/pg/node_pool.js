// node-postgres's Pool (`pg` from npm, locked in ../node/package-lock.json)
// against leasegate's PostgreSQL port, or any server given by PGHOST,
// PGPORT, PGUSER, PGPASSWORD, PGDATABASE: a session lock on a checked-out
// client (pool.connect), refused to the pool's other clients; a
// transaction lock; pool.query's parameterised one-shot queries. Prints
// one `ok`/`not ok` line per check.
'use strict';
const { Pool } = require('pg');

const D = 'node-pool';
const K = 7400; // this program's keys: 7400..7409

function check(what, got, want) {
  if (got === want) console.log(`ok ${D}: ${what}`);
  else console.log(`not ok ${D}: ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

async function main() {
  const pool = new Pool({ max: 4 });
  const a = await pool.connect();
  await a.query('SELECT pg_advisory_lock($1)', [K]);
  let r = await pool.query('SELECT pg_try_advisory_lock($1) AS ok', [K]);
  check("a checked-out client's pg_advisory_lock is refused to pool.query", r.rows[0].ok, false);
  r = await a.query('SELECT pg_advisory_unlock($1) AS ok', [K]);
  check('pg_advisory_unlock', r.rows[0].ok, true);
  await a.query('BEGIN');
  r = await a.query('SELECT pg_try_advisory_xact_lock($1) AS ok', [K + 1]);
  const inside = r.rows[0].ok;
  r = await pool.query('SELECT pg_try_advisory_lock($1) AS ok', [K + 1]);
  check('pg_try_advisory_xact_lock in BEGIN, held against the pool', [inside, r.rows[0].ok].join(), 'true,false');
  await a.query('COMMIT');
  a.release();
  const all = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(() => pool.query('SELECT 1 AS one')));
  check('8 concurrent pool.query on 4 connections', all.every((x) => x.rows[0].one === 1), true);
  check('the pool made 4 connections at most', pool.totalCount <= 4, true);
  const b = await pool.connect();
  r = await b.query('SELECT pg_try_advisory_lock($1) AS ok', [K + 1]);
  check('the xact lock went at COMMIT', r.rows[0].ok, true);
  await b.query('SELECT pg_advisory_unlock($1)', [K + 1]);
  b.release();
  await pool.end();
}

main().catch((e) => {
  console.log(`not ok ${D}: ${e.stack || e}`);
  process.exit(1);
});
