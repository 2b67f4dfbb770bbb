#!/usr/bin/env python3
"""A TCP proxy in front of the DynamoDB emulator that a test can switch off.

    ddb_proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT

Up (at start, and after SIGUSR2): every connection is forwarded to the
target. Down (after SIGUSR1): the open connections are reset and new ones
are accepted and reset at once, as a store that has gone away. Used by
it_leader (transient errors while campaigning); standard library only.
"""
import signal
import socket
import struct
import sys
import threading

listen_port, target_host, target_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
lock = threading.Lock()
conns = set()
up = True


def reset(s):
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    except OSError:
        pass


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
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
    threading.Thread(target=pump, args=(client, server), daemon=True).start()
    threading.Thread(target=pump, args=(server, client), daemon=True).start()
