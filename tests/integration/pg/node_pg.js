// node-postgres (`pg` from npm, the version locked in
// ../node/package-lock.json; pure JavaScript, extended protocol for
// parameterised queries) against leasegate's PostgreSQL port, or any server
// given by PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE (pg reads them).
// Prints one `ok`/`not ok` line per check.
'use strict';
const { Client } = require('pg');

const D = 'node-pg';
const K = 6000; // this driver's keys: 6000..6009

function check(what, got, want) {
  if (got === want) console.log(`ok ${D}: ${what}`);
  else console.log(`not ok ${D}: ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

async function connect(opts) {
  const c = new Client(opts);
  await c.connect();
  return c;
}

// one(c, sql, ...values) or one(c, {name, text, values}): the first column of the first row
async function one(c, q, ...values) {
  const query = typeof q === 'string' ? { text: q, values } : q;
  const r = await c.query({ ...query, rowMode: 'array' });
  return r.rows[0][0];
}

async function main() {
  const a = await connect(), b = await connect();
  check('connect with SCRAM, SELECT 1', await one(a, 'SELECT 1'), 1);
  const r = await a.query('SELECT pg_advisory_lock($1)', [K]);
  check('pg_advisory_lock returns void (OID 2278)', r.fields[0].dataTypeID, 2278);
  // int8 comes back as a string in pg: no precision lost
  const tok = await one(a, 'SELECT leasegate.token($1)', K);
  check('leasegate.token of the held lock is a positive bigint (a string)', /^[1-9][0-9]*$/.test(tok), true);
  // a named statement: parsed once per connection, then Bind/Execute
  const tryB = (k) => one(b, { name: 'try', text: 'SELECT pg_try_advisory_lock($1)', values: [k] });
  check("another session's try is refused while held (named statement)", await tryB(K), false);
  check('pg_advisory_unlock returns true', await one(a, 'SELECT pg_advisory_unlock($1)', K), true);
  check("then the other session's try succeeds (the same statement)", await tryB(K), true);
  check('and it unlocks', await one(b, 'SELECT pg_advisory_unlock($1)', K), true);
  check('unlock of a lock not held: false', await one(a, 'SELECT pg_advisory_unlock($1)', K), false);

  await a.query('BEGIN');
  await a.query('SELECT pg_advisory_xact_lock($1)', [K + 1]);
  check("xact lock: another session's try refused in the transaction", await tryB(K + 1), false);
  await a.query('COMMIT');
  check('xact lock released at COMMIT', await tryB(K + 1), true);
  await one(b, 'SELECT pg_advisory_unlock($1)', K + 1);

  const name = 'pg-test-node-pg';
  const t1 = await one(a, 'SELECT leasegate.acquire($1, $2)', name, 30000);
  check('leasegate.acquire returns a token', /^[1-9][0-9]*$/.test(t1), true);
  check('leasegate.acquire by another session: NULL',
    await one(b, 'SELECT leasegate.acquire($1, $2)', name, 30000), null);
  check('leasegate.release: true', await one(a, 'SELECT leasegate.release($1)', name), true);
  const t2 = await one(b, 'SELECT leasegate.acquire($1, $2)', name, 30000);
  check("the next holder's token is greater", t2 !== null && BigInt(t2) > BigInt(t1), true);
  await one(b, 'SELECT leasegate.release($1)', name);

  check('holder takes a lock', await one(a, 'SELECT pg_try_advisory_lock($1)', K + 2), true);
  await a.end();
  for (let i = 0; i < 200 && !(await tryB(K + 2)); i++) await new Promise((r) => setTimeout(r, 10));
  check("the holder's disconnect releases it (the other's try succeeds within 2 s)",
    await one(b, 'SELECT pg_advisory_unlock($1)', K + 2), true);
  await b.end();

  try {
    const c = await connect({ password: 'wrong-' + (process.env.PGPASSWORD || '') });
    await c.end();
    check('a wrong password is refused: 28P01', 'connected', '28P01');
  } catch (e) {
    check('a wrong password is refused: 28P01', e.code, '28P01');
  }
}

main().catch((e) => {
  console.log(`not ok ${D}: ${e.stack}`);
  process.exit(1);
});
