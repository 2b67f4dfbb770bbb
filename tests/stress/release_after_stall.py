#!/usr/bin/python3
"""A RELEASE that a stalled gateway reads before it notices its lease ended.

    /usr/bin/python3 tests/stress/release_after_stall.py   (LG_BIN, LG_MOTO,
                                                           LG_AK, LG_SK set)

Two gateways on one fresh table. Client A takes lock x on gateway 1
(lease 1000 ms); gateway 1 is stopped (SIGSTOP); client B on gateway 2
takes x over (a higher token) once the lease has run out; A, still
believing it holds x, sends LOCK.RELEASE x, which waits in gateway 1's
socket; gateway 1 is continued (SIGCONT). A's lease ended while the
gateway was stopped and the lock was taken over before A's RELEASE was
even read, so the README's rules want -LOST (expired or taken_over); an
answer of 1 ("released") tells A it held the lock to the end although B
held it at the same time. Also checked: A's LOCK.STATE answer and B's hold.
Prints "ok ..." / "not ok ..." lines; exit status 1 on any "not ok".
Repeats the scenario STALL_TRIALS times (3).
"""
import os
import signal
import socket
import subprocess
import sys
import time

import redis

BIN = os.environ["LG_BIN"]
MOTO = os.environ["LG_MOTO"]
WORK = os.environ.get("LG_WORK") or "/tmp"
LEASE = 1000
failed = 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(table, i):
    port = free_port()
    env = dict(os.environ, AWS_ACCESS_KEY_ID=os.environ["LG_AK"],
               AWS_SECRET_ACCESS_KEY=os.environ["LG_SK"], AWS_REGION="us-east-1",
               AWS_ENDPOINT_URL_DYNAMODB=MOTO)
    logf = open(os.path.join(WORK, f"stall-gw{i}.log"), "a")
    p = subprocess.Popen([BIN, "--port", str(port), "--pg-port", "0", "--admin-port", "0",
                          "--table", table, "--create-table"], env=env, stdout=logf, stderr=logf)
    for _ in range(400):
        # ready: the Redis port, open from the start, no longer answers -LOADING
        try:
            with socket.create_connection(("127.0.0.1", port), 0.5) as s:
                s.settimeout(1)
                s.sendall(b"PING\r\n")
                r = s.recv(64)
            if r and not r.startswith(b"-LOADING"):
                return p, port
        except OSError:
            pass
        time.sleep(0.025)
    raise SystemExit("gateway did not start")


def check(ok, what):
    global failed
    failed += not ok
    print(f"{'ok' if ok else 'not ok'} {what}", flush=True)


def trial(n, table, ports, g1):
    name = f"stall-{n}"
    a = redis.Redis(port=ports[0], socket_timeout=15, single_connection_client=True)
    b = redis.Redis(port=ports[1], socket_timeout=15, single_connection_client=True)
    t1 = a.execute_command("LOCK.ACQUIRE", name, LEASE, "HOLDER", "A")
    g1.send_signal(signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        t2 = b.execute_command("LOCK.ACQUIRE", name, LEASE, "WAIT", 10000, "HOLDER", "B")
        took = time.monotonic() - t0
        # A's RELEASE, sent while B holds x; gateway 1 reads it when continued.
        a_sock = a.connection
        a_sock.send_command("LOCK.RELEASE", name)
        time.sleep(0.2)
    finally:
        g1.send_signal(signal.SIGCONT)
    try:
        rel = str(a_sock.read_response())
    except redis.ResponseError as e:
        rel = "-" + str(e)
    state = b.execute_command("LOCK.STATE", name)
    print(f"# trial {n}: A token {t1}; gateway 1 stopped; B took over after {took:.2f} s "
          f"with token {t2}; A's RELEASE sent then, answered {rel}; "
          f"LOCK.STATE from B: {state}")
    check(t2 is not None and t2 > t1, f"trial {n}: B took the lock over with a higher token")
    check(rel.startswith("-LOST"),
          f"trial {n}: A's RELEASE after its lease ended and was taken over answers -LOST "
          f"(got {rel})")
    check(str(b.execute_command("LOCK.RELEASE", name)) == "1", f"trial {n}: B still held x")
    a.close()
    b.close()


def main():
    table = f"lg-stall-{os.getpid()}"
    gws = []
    try:
        g1, p1 = start(table, 1)
        gws.append(g1)
        g2, p2 = start(table, 2)
        gws.append(g2)
        for n in range(int(os.environ.get("STALL_TRIALS", 3))):
            trial(n, table, (p1, p2), g1)
    finally:
        for g in gws:
            g.send_signal(signal.SIGCONT)
            g.terminate()
            g.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
