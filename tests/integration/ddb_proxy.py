#!/usr/bin/env python3
"""A TCP proxy in front of the DynamoDB emulator that a test can switch off.

    ddb_proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT

Up (at start, and after SIGUSR2): every connection is forwarded to the
target. Down (after SIGUSR1): the open connections are reset and new ones
are accepted and reset at once, as a store that has gone away. Used by
it_leader (transient errors while campaigning) and the stress harness;
standard library only.

With DDB_PROXY_LOG=FILE set, every chunk forwarded is appended to FILE as
a JSON line: t (the monotonic clock, seconds: the stress harness's clock
less its start), c (the connection's number), d (">" to the target, "<"
back) and b (the bytes, as latin-1). tests/stress/ddb_trace.py reads it.
"""
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

listen_port, target_host, target_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
lock = threading.Lock()
conns = set()
up = True
trace = open(os.environ["DDB_PROXY_LOG"], "a") if os.environ.get("DDB_PROXY_LOG") else None


def record(conn, direction, data):
    """One forwarded chunk to DDB_PROXY_LOG, if set."""
    if trace is None:
        return
    line = json.dumps({"t": time.monotonic(), "c": conn, "d": direction,
                       "b": data.decode("latin-1")})
    with lock:
        trace.write(line + "\n")
        trace.flush()


def reset(s):
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    except OSError:
        pass


def pump(src, dst, conn, direction):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            record(conn, direction, data)
            dst.sendall(data)
    except OSError:
        pass
    with lock:
        for s in (src, dst):
            if s in conns:
                conns.discard(s)
                reset(s)


def down(*_):
    global up
    with lock:
        up = False
        for s in list(conns):
            reset(s)
        conns.clear()


def back_up(*_):
    global up
    up = True


signal.signal(signal.SIGUSR1, down)
signal.signal(signal.SIGUSR2, back_up)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", listen_port))
srv.listen(64)
accepted = 0
while True:
    client, _ = srv.accept()
    if not up:
        reset(client)
        continue
    try:
        server = socket.create_connection((target_host, target_port))
    except OSError:
        reset(client)
        continue
    with lock:
        conns.update((client, server))
    accepted += 1
    threading.Thread(target=pump, args=(client, server, accepted, ">"), daemon=True).start()
    threading.Thread(target=pump, args=(server, client, accepted, "<"), daemon=True).start()
