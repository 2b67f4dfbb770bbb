#!/usr/bin/env python3
"""A singleton job on leasegate: run any number of copies; one leads and
works, the others wait, and one of them takes over when the leader stops,
crashes or loses its lease. Needs redis-py (pip install redis, or Debian's
python3-redis).

    singleton.py [--host H] [--port P] [--name N] [--lease-ms MS]
"""
import argparse
import os
import signal
import socket
import sys
import time

import redis


class Stop(Exception):
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--name", default="nightly-report")
    ap.add_argument("--lease-ms", type=int, default=30000)
    ap.add_argument("--step", type=float, default=0.5, help="seconds per unit of work")
    args = ap.parse_args()
    label = f"{socket.gethostname()}:{os.getpid()}"

    # One connection for the whole run: a term belongs to the connection
    # that campaigned, and closing it hands the lock on.
    r = redis.Redis(host=args.host, port=args.port, single_connection_client=True,
                    socket_timeout=None)
    stopping = campaigning = False

    def on_signal(*_):
        nonlocal stopping
        stopping = True
        if campaigning:  # blocked in CAMPAIGN: leave now, the close cancels it
            raise Stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    while not stopping:
        campaigning = True
        try:
            # Blocks until this connection leads; the fencing token names the term.
            token = r.execute_command("LEADER.CAMPAIGN", args.name, args.lease_ms,
                                      "HOLDER", label)
        except Stop:
            return 0
        except redis.ConnectionError as e:
            print(f"leasegate unreachable ({e}); retrying", flush=True)
            time.sleep(1)
            continue
        finally:
            campaigning = False
        print(f"leading token={token}", flush=True)
        try:
            while not stopping:
                # One unit of work. Writes elsewhere carry the token, so a
                # store that keeps the highest token seen refuses a stale leader.
                print(f"working token={token}", flush=True)
                time.sleep(args.step)
                # Still leading? While it leads, CAMPAIGN answers this term's
                # token at once (no DynamoDB request); a lost term answers
                # -LOST <reason> once.
                if r.execute_command("LEADER.CAMPAIGN", args.name, args.lease_ms) != token:
                    raise redis.ResponseError("LOST new term")
        except redis.ResponseError as e:
            if not str(e).startswith("LOST"):
                raise
            print(f"lost: {e}; campaigning again", flush=True)
            continue
        except redis.ConnectionError as e:
            print(f"lost: connection ({e}); campaigning again", flush=True)
            continue
        # Stopping while leading: hand the lock on now rather than at the close.
        r.execute_command("LEADER.RESIGN", args.name)
        print(f"resigned token={token}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
