#!/usr/bin/env python3
"""Fenced writes through leasegate: take a lease, then write DynamoDB items
that commit only while the lease still holds the lock (LOCK.TRANSACT). The
items are serialized as every AWS SDK does (boto3's TypeSerializer) and
sent over the Redis protocol (redis-py); leasegate adds the check of the
lock and sends one TransactWriteItems.

    fenced.py [--host H] [--port P] [--table orders] [--lock nightly-report]

Needs redis-py and boto3 (pip install redis boto3), and a leasegate started
with --table and --fenced-tables naming the table written here.
"""
import argparse
import json
import sys

import redis
from boto3.dynamodb.types import TypeSerializer


def transact_items(table, order_id, status, token):
    """TransactItems as the DynamoDB API takes them: one Put of the order,
    and the fencing token written along, so a reader sees who wrote it."""
    ser = TypeSerializer()
    item = {"id": order_id, "status": status, "writtenUnderToken": token}
    return [{"Put": {"TableName": table,
                     "Item": {k: ser.serialize(v) for k, v in item.items()}}}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--table", default="orders")
    ap.add_argument("--lock", default="nightly-report")
    ap.add_argument("--lease-ms", type=int, default=30000)
    args = ap.parse_args()

    # One connection: the lease belongs to the connection that took it.
    r = redis.Redis(host=args.host, port=args.port, single_connection_client=True)
    token = r.execute_command("LOCK.ACQUIRE", args.lock, args.lease_ms, "WAIT", 0)
    print(f"holding {args.lock} with fencing token {token}")
    try:
        for n in range(3):
            items = transact_items(args.table, f"order-{n}", "shipped", token)
            try:
                r.execute_command("LOCK.TRANSACT", args.lock, token, json.dumps(items))
            except redis.ResponseError as e:
                code, _, detail = str(e).partition(" ")
                if code == "LOST":
                    # The lease no longer holds the lock, checked by DynamoDB
                    # at commit: nothing was written. Stop; the next holder
                    # does the work.
                    print(f"lease lost ({detail}): stopping", file=sys.stderr)
                    return 1
                if code == "TXCANCELLED":
                    # One of our own conditions failed: the reasons, item by item.
                    print(f"cancelled: {json.loads(detail)}", file=sys.stderr)
                    return 1
                raise  # TRYAGAIN: retry later; ERR: a bad request
            print(f"order-{n} written under token {token}")
    finally:
        r.execute_command("LOCK.RELEASE", args.lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
