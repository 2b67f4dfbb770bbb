#!/usr/bin/env node
// Fenced writes through leasegate from Node.js: take a lease, then write
// DynamoDB items that commit only while the lease still holds the lock
// (LOCK.TRANSACT). Items are marshalled as the AWS SDK does
// (@aws-sdk/util-dynamodb) and sent over the Redis protocol (ioredis).
//
//   node fenced.js [host] [port] [table] [lock]
//
// Needs: npm install ioredis @aws-sdk/util-dynamodb; a leasegate started
// with --table and --fenced-tables naming the table written here.
'use strict';
const Redis = require('ioredis');
const { marshall } = require('@aws-sdk/util-dynamodb');

const [host = '127.0.0.1', port = '6379', table = 'orders', lock = 'nightly-report'] =
  process.argv.slice(2);

async function main() {
  // One connection: the lease belongs to the connection that took it.
  const r = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 0 });
  await r.connect();
  const token = await r.call('LOCK.ACQUIRE', lock, '30000', 'WAIT', '0');
  console.log(`holding ${lock} with fencing token ${token}`);
  try {
    for (let n = 0; n < 3; n++) {
      const items = [{
        Put: {
          TableName: table,
          Item: marshall({ id: `order-${n}`, status: 'shipped', writtenUnderToken: token }),
        },
      }];
      try {
        await r.call('LOCK.TRANSACT', lock, String(token), JSON.stringify(items));
      } catch (e) {
        const [code, ...rest] = e.message.split(' ');
        if (code === 'LOST') {
          // Checked by DynamoDB at commit: nothing was written. Stop.
          console.error(`lease lost (${rest.join(' ')}): stopping`);
          return 1;
        }
        if (code === 'TXCANCELLED') {
          console.error('cancelled:', JSON.parse(rest.join(' ')));
          return 1;
        }
        throw e; // TRYAGAIN: retry later; ERR: a bad request
      }
      console.log(`order-${n} written under token ${token}`);
    }
  } finally {
    await r.call('LOCK.RELEASE', lock);
    r.disconnect();
  }
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
