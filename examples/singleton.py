#!/usr/bin/env python3
"""A singleton job on leasegate: run any number of copies; one leads and
works, the others wait, and one of them takes over when the leader stops,
crashes or loses its lease. A leader whose gateway restarts (a rolling
update, --drain-grace) reconnects and adopts its term: it goes on working
with the same token. Needs redis-py (pip install redis, or Debian's
python3-redis).

    singleton.py [--host H] [--port P] [--also HOST:PORT,...] [--name N]
                 [--lease-ms MS]
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


class Flags:
    stopping = False     # SIGTERM/SIGINT came
    campaigning = False  # blocked in LEADER.CAMPAIGN


def work(r, args, token, flags):
    """Units of work while this connection leads, until stopping. Raises
    ResponseError LOST when the term is lost, ConnectionError when the
    gateway goes."""
    while not flags.stopping:
        # One unit of work. Writes elsewhere carry the token, so a store
        # that keeps the highest token seen refuses a stale leader.
        print(f"working token={token}", flush=True)
        time.sleep(args.step)
        # Still leading? While it leads, CAMPAIGN answers this term's token
        # at once (no DynamoDB request); a lost term answers -LOST <reason>.
        if r.execute_command("LEADER.CAMPAIGN", args.name, args.lease_ms) != token:
            raise redis.ResponseError("LOST new term")


def adopt(r, name, token, secret):
    """LEADER.ADOPT on a new connection: the term's new secret, or None when
    it cannot be adopted (its gateway's grace is over, or it ended). Tries
    for a few seconds: the old gateway marks the term adoptable as it
    closes its connections."""
    for _ in range(50):
        try:
            got = r.execute_command("LEADER.ADOPT", name, token, secret)
        except redis.ConnectionError:
            got = 0
        if got != 0:
            return got[1]
        time.sleep(0.1)
    return None


def lead(r, connect, args, token, secret, flags):
    """Works while leading; across a restart of the gateway, reconnects and
    adopts the term. Returns the connection, and whether it still leads
    (stopping) or lost the term."""
    while True:
        try:
            work(r, args, token, flags)
            return r, True
        except redis.ResponseError as e:
            if not str(e).startswith("LOST"):
                raise
            print(f"lost: {e}; campaigning again", flush=True)
            return r, False
        except redis.ConnectionError as e:
            # The gateway went (a rolling update drains it: the term stays
            # held a while): reconnect, to another gateway if there are
            # some, and adopt it with its token and secret.
            r = connect()
            secret = adopt(r, args.name, token, secret)
            if secret is None:
                print(f"lost: connection ({e}), the term not adoptable; campaigning again",
                      flush=True)
                return r, False
            print(f"adopted token={token}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--also", default="",
                    help="more gateways to reconnect to, HOST:PORT,... (behind a Service: none)")
    ap.add_argument("--name", default="nightly-report")
    ap.add_argument("--lease-ms", type=int, default=30000)
    ap.add_argument("--step", type=float, default=0.5, help="seconds per unit of work")
    args = ap.parse_args()
    label = f"{socket.gethostname()}:{os.getpid()}"
    servers = [(args.host, args.port)] + [
        (h, int(p)) for h, p in (x.rsplit(":", 1) for x in args.also.split(",") if x)]
    turn = [0]

    def connect():
        # One connection at a time: a term belongs to the connection that
        # campaigned (or adopted it), and closing it hands the lock on.
        host, port = servers[turn[0] % len(servers)]
        turn[0] += 1
        return redis.Redis(host=host, port=port, single_connection_client=True,
                           socket_timeout=None)

    flags = Flags()

    def on_signal(*_):
        flags.stopping = True
        if flags.campaigning:  # blocked in CAMPAIGN: leave now, the close cancels it
            raise Stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    r = connect()
    while not flags.stopping:
        flags.campaigning = True
        try:
            # Blocks until this connection leads: [token, secret]. The
            # fencing token names the term; the secret lets a new
            # connection adopt it if this one's gateway restarts.
            token, secret = r.execute_command("LEADER.CAMPAIGN", args.name, args.lease_ms,
                                              "HOLDER", label, "ADOPTABLE")
        except Stop:
            return 0
        except redis.ConnectionError as e:
            print(f"leasegate unreachable ({e}); retrying", flush=True)
            r = connect()
            time.sleep(1)
            continue
        finally:
            flags.campaigning = False
        print(f"leading token={token}", flush=True)
        r, leads = lead(r, connect, args, token, secret, flags)
        if leads:
            # Stopping while leading: hand the lock on now rather than at the close.
            r.execute_command("LEADER.RESIGN", args.name)
            print(f"resigned token={token}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
