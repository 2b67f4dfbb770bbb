#!/usr/bin/python3
"""pg_shared_replicas.py: shared advisory locks through two gateways on one
DynamoDB table (tests/integration/pg_shared.sh starts them on moto with
3 s leases). Sessions A and C on gateway 1, B and D on gateway 2:
  - readers on both gateways hold key 7 together; a writer on either is
    refused while one of them holds;
  - D (gateway 2) waits for the last reader (B, on its own gateway), not
    granted while A (the other gateway) still reads;
  - A waits shared for D, the writer of the other gateway;
  - phase-fair: C (gateway 1) writes key 11, B (gateway 2) waits shared,
    A (gateway 1, queued behind C) waits to write; C's release grants B
    before A, and A once B is done;
  - six clients on both gateways take key 5 at random shared or exclusive
    for 8 s: no exclusive hold overlaps another;
  - B holds key 9 shared and D key 10 exclusively, their gateway is
    killed (SIGKILL): C's exclusive wait on gateway 1 is granted once the
    dead reader's slot stood still a whole lease, and A's shared wait once
    the dead writer's item did, not before.
Prints "ok N - what" / "not ok N - what"; exits 1 on a failure.
Environment: LG_PG1, LG_PG2 (ports), LG_GW2_PID.
"""
import os
import random
import signal
import threading
import time

import psycopg

n = 0
failed = False


def check(cond, what):
    global n, failed
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what), flush=True)
    failed |= not cond


def connect(port):
    return psycopg.connect(host="127.0.0.1", port=int(port), user="leasegate",
                           password="s3cret", dbname="locks", autocommit=True)


def one(conn, sql):
    return conn.execute(sql).fetchone()[0]


def timed(conn, sql):
    """Runs sql in a thread: (thread, result dict with 'at' once done)."""
    res = {}

    def go():
        conn.execute(sql)
        res["at"] = time.monotonic()
    t = threading.Thread(target=go)
    t.start()
    return t, res


def mixed_race(seconds=8.0, clients=6):
    """Clients on both gateways take key 5 at random shared or exclusive
    (tries and waits), hold it a moment and give it back, all at once; each
    hold is recorded from the grant's answer to the unlock's send on one
    clock (this process). An exclusive hold must overlap no other hold."""
    holds, errors = [], []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def loop(i):
        conn = connect(os.environ["LG_PG1" if i % 2 else "LG_PG2"])
        conn.execute("SET lock_timeout = 2000")
        rnd = random.Random(i)
        while time.monotonic() < stop_at:
            shared = rnd.random() < 0.7
            wait = rnd.random() < 0.5
            fn = ("pg_advisory_lock" if wait else "pg_try_advisory_lock") + (
                "_shared" if shared else "")
            try:
                got = conn.execute("SELECT %s(5)" % fn).fetchone()[0]
            except psycopg.errors.LockNotAvailable:
                continue
            except psycopg.Error as e:
                errors.append("%s: %s" % (fn, e))
                continue
            if got is False:
                continue
            start = time.monotonic()
            time.sleep(rnd.uniform(0, 0.05))
            end = time.monotonic()
            un = "pg_advisory_unlock" + ("_shared" if shared else "")
            ok = conn.execute("SELECT %s(5)" % un).fetchone()[0]
            with lock:
                holds.append((start, end, shared, i, ok))
        conn.close()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    bad = []
    holds.sort()
    for j, (s0, e0, sh0, c0, _) in enumerate(holds):
        for s1, e1, sh1, c1, _ in holds[j + 1:]:
            if s1 >= e0:
                break
            if not (sh0 and sh1):
                bad.append((s0, e0, sh0, c0, s1, e1, sh1, c1))
    readers = sum(1 for h in holds if h[2])
    print("# mixed race: %d holds (%d shared, %d exclusive) by %d clients on two gateways"
          % (len(holds), readers, len(holds) - readers, clients))
    for b in bad[:5]:
        print("# overlap: %r" % (b,))
    check(not errors, "the mixed race ran without errors (%s)" % "; ".join(errors[:3]))
    check(len(holds) - readers > 0 and readers > 0, "the race granted both kinds")
    check(not bad, "no exclusive hold overlapped another hold (%d overlaps)" % len(bad))
    check(all(h[4] for h in holds), "every unlock answered true")


def readers_before_the_next_writer(a, b, c):
    """C writes 11 on gateway 1; B waits to read on gateway 2; A waits to
    write on gateway 1, behind C on the same gateway; C releases: B is
    granted first, A only once B has stopped reading."""
    check(one(c, "SELECT pg_try_advisory_lock(11)") is True, "C writes 11 (gateway 1)")
    tb, resb = timed(b, "SELECT pg_advisory_lock_shared(11)")
    time.sleep(0.5)
    ta, resa = timed(a, "SELECT pg_advisory_lock(11)")
    time.sleep(1.5)
    check(not resb and not resa, "B (reading) and A (writing) wait while C writes")
    released = time.monotonic()
    check(one(c, "SELECT pg_advisory_unlock(11)") is True, "C stops writing")
    tb.join(10)
    check("at" in resb, "B, waiting to read on gateway 2, is granted")
    check("at" not in resa, "A, the next writer on C's own gateway, is not granted before B")
    if "at" in resb:
        print("# B granted %d ms after C released (lease 3000 ms)"
              % ((resb["at"] - released) * 1000))
    time.sleep(0.5)
    check("at" not in resa, "A still waits while B reads")
    stopped = time.monotonic()
    check(one(b, "SELECT pg_advisory_unlock_shared(11)") is True, "B stops reading")
    ta.join(10)
    check("at" in resa, "A is granted once B has gone")
    if "at" in resa:
        print("# A granted %d ms after B stopped reading" % ((resa["at"] - stopped) * 1000))
        check(one(a, "SELECT pg_advisory_unlock(11)") is True, "A stops writing")


def main():
    a, c = connect(os.environ["LG_PG1"]), connect(os.environ["LG_PG1"])
    b, d = connect(os.environ["LG_PG2"]), connect(os.environ["LG_PG2"])
    check(one(a, "SELECT pg_try_advisory_lock_shared(7)") is True, "A reads 7 on gateway 1")
    check(one(b, "SELECT pg_try_advisory_lock_shared(7)") is True,
          "B reads 7 on gateway 2 at the same time")
    check(one(c, "SELECT pg_try_advisory_lock(7)") is False, "C's exclusive try is refused")
    check(one(d, "SELECT pg_try_advisory_lock(7)") is False, "D's exclusive try is refused")

    t, res = timed(d, "SELECT pg_advisory_lock(7)")
    time.sleep(0.5)
    check(one(a, "SELECT pg_advisory_unlock_shared(7)") is True, "A stops reading")
    time.sleep(2.5)
    check("at" not in res, "D still waits while B reads")
    released = time.monotonic()
    check(one(b, "SELECT pg_advisory_unlock_shared(7)") is True, "B stops reading")
    t.join(15)
    check("at" in res, "D is granted once the last reader has gone")
    if "at" in res:
        print("# D granted %d ms after the last reader left" % ((res["at"] - released) * 1000))

    check(one(a, "SELECT pg_try_advisory_lock_shared(7)") is False,
          "A's shared try is refused while D (the other gateway) writes")
    t, res = timed(a, "SELECT pg_advisory_lock_shared(7)")
    time.sleep(1)
    released = time.monotonic()
    check(one(d, "SELECT pg_advisory_unlock(7)") is True, "D stops writing")
    t.join(15)
    check("at" in res, "A, waiting shared on the other gateway, is granted")
    if "at" in res:
        print("# A granted %d ms after the writer left" % ((res["at"] - released) * 1000))
    check(one(a, "SELECT pg_advisory_unlock_shared(7)") is True, "A stops reading")

    readers_before_the_next_writer(a, b, c)
    mixed_race()

    check(one(b, "SELECT pg_try_advisory_lock_shared(9)") is True, "B reads 9")
    check(one(d, "SELECT pg_try_advisory_lock(10)") is True, "D writes 10")
    os.kill(int(os.environ["LG_GW2_PID"]), signal.SIGKILL)
    killed = time.monotonic()
    check(one(a, "SELECT pg_try_advisory_lock_shared(10)") is False,
          "A cannot read 10 at once: D's lease has not run out")
    ta, resa = timed(a, "SELECT pg_advisory_lock_shared(10)")
    check(one(c, "SELECT pg_try_advisory_lock(9)") is False,
          "C cannot write 9 at once: B's lease has not run out")
    t, res = timed(c, "SELECT pg_advisory_lock(9)")
    t.join(30)
    check("at" in res, "C is granted 9 after the dead reader's slot is removed")
    if "at" in res:
        ms = (res["at"] - killed) * 1000
        print("# C granted %d ms after the reader's gateway was killed (lease 3000 ms)" % ms)
        check(ms >= 3000, "not before a whole lease of the reader's slot")
    ta.join(30)
    check("at" in resa, "A is granted 10 shared after the dead writer is ended")
    if "at" in resa:
        ms = (resa["at"] - killed) * 1000
        print("# A granted %d ms after the writer's gateway was killed (lease 3000 ms)" % ms)
        check(ms >= 3000, "not before a whole lease of the writer's item")
    for conn in (a, c):
        conn.close()
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
