#!/usr/bin/python3
"""pg_shared_test.py: one scripted sequence of shared and exclusive advisory
locks from three sessions, every answer printed (results, WARNINGs, the
pg_locks rows of the key with the sessions named), so that
tests/integration/pg_shared.sh can run it against PostgreSQL 15 and against
leasegate and compare the two outputs line by line.

Sessions (psycopg 3, autocommit; the connection from PG* variables): A, B
and C take and release key 7 shared and exclusive (a try refused by
readers, reentrant shared holds, unlocks not held, an exclusive wait for
the last reader, a shared wait for the writer), a reader's try on key 6
refused behind a waiting writer, B holds key 8 shared in a
transaction (both xact variants) until COMMIT, A an (int, int) key; D only
looks (pg_locks).
"""
import sys
import threading
import time

import psycopg

target = sys.argv[1] if len(sys.argv) > 1 else "postgres"
out = []
warnings = []


def connect(letter):
    conn = psycopg.connect(autocommit=True)
    conn.add_notice_handler(
        lambda d: warnings.append("%s %s: %s" % (letter, d.severity, d.message_primary)))
    return conn


def say(letter, conn, sql):
    """Runs sql on the session letter; prints its result and notices."""
    try:
        row = conn.execute(sql).fetchone()
        val = row[0] if row is not None else None
        res = "" if val == "" or val is None else str(val).lower()[0]
    except psycopg.Error as e:
        res = "ERROR %s" % e.sqlstate
    out.append("%s: %s -> %s" % (letter, sql, res))
    while warnings:
        out.append("  " + warnings.pop(0))


def rows(d, names, key, what):
    cur = d.execute(
        "SELECT pid, mode, granted FROM pg_locks WHERE locktype = 'advisory' AND "
        "objid = %d ORDER BY mode, granted DESC" % key)
    got = sorted("%s %s %s" % (names.get(p, "?"), m, g) for p, m, g in cur.fetchall())
    out.append("pg_locks %s (%s): %s" % (key, what, ", ".join(got) or "none"))


def waiting(d, key):
    deadline = time.time() + 20
    while d.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                    "objid = %d AND granted = false" % key).fetchone()[0] == 0:
        if time.time() > deadline:
            return False
        time.sleep(0.05)
    return True


def background(letter, conn, sql):
    """Runs sql on a thread; its answer is printed by finish(), in order."""
    t = threading.Thread(target=lambda: conn.execute(sql).fetchone())
    t.start()
    return t, letter, sql


def finish(bg):
    t, letter, sql = bg
    t.join(30)
    out.append("%s: %s -> %s" % (letter, sql, "returned" if not t.is_alive() else "still waits"))
    return not t.is_alive()


def main():
    a, b, c, d = connect("A"), connect("B"), connect("C"), connect("D")
    names = {}
    for letter, conn in (("A", a), ("B", b), ("C", c)):
        names[conn.execute("SELECT pg_backend_pid()").fetchone()[0]] = letter

    say("A", a, "SELECT pg_try_advisory_lock_shared(7)")
    say("B", b, "SELECT pg_try_advisory_lock_shared(7)")
    say("C", c, "SELECT pg_try_advisory_lock(7)")
    say("C", c, "SELECT pg_try_advisory_lock_shared(7)")
    say("A", a, "SELECT pg_advisory_lock_shared(7)")
    rows(d, names, 7, "three readers")
    say("C", c, "SELECT pg_advisory_unlock_shared(7)")
    say("A", a, "SELECT pg_advisory_unlock_shared(7)")
    say("A", a, "SELECT pg_advisory_unlock_shared(7)")
    say("A", a, "SELECT pg_advisory_unlock_shared(7)")
    say("A", a, "SELECT pg_advisory_unlock(7)")

    # C waits for the last reader, B
    bg = background("C", c, "SELECT pg_advisory_lock(7)")
    out.append("C waits: %s" % waiting(d, 7))
    rows(d, names, 7, "B reads, C waits")
    say("B", b, "SELECT pg_advisory_unlock_shared(7)")
    out.append("C got it: %s" % finish(bg))
    say("A", a, "SELECT pg_try_advisory_lock_shared(7)")
    say("B", b, "SELECT pg_advisory_unlock(7)")

    # A waits shared for the writer C
    bg = background("A", a, "SELECT pg_advisory_lock_shared(7)")
    out.append("A waits: %s" % waiting(d, 7))
    rows(d, names, 7, "C writes, A waits")
    say("C", c, "SELECT pg_advisory_unlock(7)")
    out.append("A got it: %s" % finish(bg))
    say("B", b, "SELECT pg_try_advisory_lock_shared(7)")
    rows(d, names, 7, "A and B read")
    say("A", a, "SELECT pg_advisory_unlock_all()")
    say("B", b, "SELECT pg_advisory_unlock_shared(7)")
    say("C", c, "SELECT pg_try_advisory_lock(7)")
    say("C", c, "SELECT pg_advisory_unlock(7)")

    # transaction-level shared holds end at COMMIT
    b.execute("BEGIN")
    say("B", b, "SELECT pg_advisory_xact_lock_shared(8)")
    say("B", b, "SELECT pg_try_advisory_xact_lock_shared(8)")
    say("C", c, "SELECT pg_try_advisory_lock(8)")
    say("A", a, "SELECT pg_try_advisory_xact_lock_shared(8)")
    rows(d, names, 8, "B in a transaction")
    say("B", b, "SELECT pg_advisory_unlock_shared(8)")
    b.execute("COMMIT")
    out.append("B: COMMIT")
    say("C", c, "SELECT pg_try_advisory_lock(8)")
    say("C", c, "SELECT pg_advisory_unlock(8)")

    # a waiting writer stops new readers: PostgreSQL queues them behind it
    say("A", a, "SELECT pg_try_advisory_lock_shared(6)")
    bg = background("C", c, "SELECT pg_advisory_lock(6)")
    out.append("C waits: %s" % waiting(d, 6))
    time.sleep(0.5)
    say("B", b, "SELECT pg_try_advisory_lock_shared(6)")
    say("A", a, "SELECT pg_advisory_unlock_shared(6)")
    out.append("C got it: %s" % finish(bg))
    say("B", b, "SELECT pg_try_advisory_lock_shared(6)")
    say("C", c, "SELECT pg_advisory_unlock(6)")
    say("B", b, "SELECT pg_try_advisory_lock_shared(6)")
    say("B", b, "SELECT pg_advisory_unlock_shared(6)")

    # an (int, int) key
    say("A", a, "SELECT pg_try_advisory_lock_shared(1, 2)")
    say("B", b, "SELECT pg_try_advisory_lock(1, 2)")
    say("B", b, "SELECT pg_try_advisory_lock_shared(1, 2)")
    say("A", a, "SELECT pg_advisory_unlock_shared(1, 2)")
    say("B", b, "SELECT pg_advisory_unlock_shared(1, 2)")
    say("C", c, "SELECT pg_try_advisory_lock(1, 2)")
    rows(d, names, 2, "C alone")
    for conn in (a, b, c, d):
        conn.close()
    print("\n".join(out))


if __name__ == "__main__":
    main()
