#!/usr/bin/env python3
"""A singleton job through leasegate's PostgreSQL port: run any number of
copies; the one holding advisory lock KEY works, the others try again every
few seconds, and one of them takes over once the holder's connection closes
(it stops, crashes or loses its lease). Plain pg_try_advisory_lock, so the
same code runs against PostgreSQL itself, but for leasegate.token (the
fencing token). Needs psycopg 3 (Debian's python3-psycopg, or pip install
psycopg).

    pg_singleton.py [--dsn DSN] [--key 42] [--retry 2] [--step 0.5]

DSN is a libpq connect string or URI, e.g.
postgresql://leasegate:s3cret@127.0.0.1:5432/locks; PGHOST, PGPORT, PGUSER,
PGPASSWORD and PGDATABASE fill in what it leaves out.
"""
import argparse
import signal
import sys
import time

import psycopg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default="")
    ap.add_argument("--key", type=int, default=42)
    ap.add_argument("--retry", type=float, default=2, help="seconds between tries")
    ap.add_argument("--step", type=float, default=0.5, help="seconds per unit of work")
    args = ap.parse_args()
    stopping = False

    def on_signal(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def one(conn, sql):
        return conn.execute(sql, (args.key,)).fetchone()[0]

    while not stopping:
        try:
            # One connection of its own for the lock holder, in autocommit:
            # the lock belongs to this session and ends with it.
            with psycopg.connect(args.dsn, autocommit=True) as conn:
                while not stopping and not one(conn, "SELECT pg_try_advisory_lock(%s)"):
                    time.sleep(args.retry)
                if stopping:
                    break
                token = one(conn, "SELECT leasegate.token(%s)")
                print(f"leading token={token}", flush=True)
                while not stopping:
                    # One unit of work. Writes elsewhere carry the token, so a
                    # store that keeps the highest token seen refuses a stale leader.
                    print(f"working token={token}", flush=True)
                    time.sleep(args.step)
                    # Still the holder? A lost lease makes this call fail.
                    if one(conn, "SELECT leasegate.token(%s)") != token:
                        raise psycopg.OperationalError("the lock was lost")
                # Stopping while leading: hand the lock on now, not at the close.
                one(conn, "SELECT pg_advisory_unlock(%s)")
                print(f"released token={token}", flush=True)
        except psycopg.Error as e:
            print(f"lost: {e}; trying again", flush=True)
            time.sleep(args.retry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
