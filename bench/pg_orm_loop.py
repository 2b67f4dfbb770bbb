"""The client of bench/pg_orm_compare.sh: PROCS processes, each a pooled
SQLAlchemy 1.4 engine (psycopg2, pool_size 1, pool_pre_ping) running, for
SECS seconds, the loop an application writes around a critical section:

    with engine.connect() as c:          # a pool checkout (and its ping)
        if c.execute(select(func.pg_try_advisory_lock(k))).scalar():
            c.execute(select(func.pg_advisory_unlock(k)))

on random keys of its own. argv: URL PROCS SECS SERVER_PIDS (comma-separated:
the processes whose CPU time is the server's). Prints one line: cycles/s
and the server's CPU microseconds per cycle (utime + stime of the server
processes and their children alive at the end, /proc)."""
import multiprocessing as mp
import os
import random
import sys
import time

import sqlalchemy as sa


def cpu_ticks(pids):
    """utime + stime of pids and of their children (PostgreSQL's backends)."""
    want = set(pids)
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(d) in want or int(st[1]) in want:  # st[1]: ppid
            total += int(st[11]) + int(st[12])
    return total


def worker(url, secs, seed, start, out):
    eng = sa.create_engine(url, pool_size=1, max_overflow=0, pool_pre_ping=True)
    rnd = random.Random(seed)
    base = seed * 10_000_000
    with eng.connect() as c:  # connect (and the dialect's first queries) before the clock
        c.execute(sa.select(sa.func.pg_try_advisory_lock(base)))
        c.execute(sa.select(sa.func.pg_advisory_unlock(base)))
    start.wait()
    n = 0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        k = base + rnd.randrange(1, 1_000_000)
        with eng.connect() as c:
            if c.execute(sa.select(sa.func.pg_try_advisory_lock(k))).scalar():
                c.execute(sa.select(sa.func.pg_advisory_unlock(k)))
        n += 1
    start.wait()  # every process done before the CPU is read
    out.put(n)
    start.wait()  # ... and read while the connections are still open
    eng.dispose()


def main():
    url, procs, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    pids = [int(p) for p in sys.argv[4].split(",")]
    start = mp.Barrier(procs + 1)
    out = mp.Queue()
    ps = [mp.Process(target=worker, args=(url, secs, i + 1, start, out)) for i in range(procs)]
    for p in ps:
        p.start()
    start.wait()
    t0, c0 = time.monotonic(), cpu_ticks(pids)
    start.wait()
    t1, c1 = time.monotonic(), cpu_ticks(pids)
    cycles = sum(out.get() for _ in ps)
    start.wait()
    for p in ps:
        p.join()
    hz = os.sysconf("SC_CLK_TCK")
    print(f"{cycles / (t1 - t0):.0f} {1e6 * (c1 - c0) / hz / max(cycles, 1):.1f}")


if __name__ == "__main__":
    main()
