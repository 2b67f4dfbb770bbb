#!/usr/bin/python3
"""pg_locks_test.py: one scripted sequence of advisory locks and pg_locks /
pg_database queries, its answers printed normalised (session pids, the
database oid, virtual transactions and wait start times replaced by what
they stand for), so that tests/integration/pg_locks.sh can run it against
PostgreSQL 15 and against leasegate and compare the two outputs line by
line. The regression test's own queries (src/test/regress/sql/
advisory_lock.sql) run through psql, with \\gset, as there.

Sessions (psycopg 3, autocommit; the connection from PG* variables):
  A  pg_advisory_lock(1) twice, (2, 3), (-1), (5000000000)
  B  in a transaction: pg_advisory_xact_lock(10), (20, 30), and
     pg_advisory_lock(11)
  C  pg_advisory_lock(1): waits for A (granted false)
then A releases 1 twice (C gets it) and B commits (its xact locks go).

Argument "leasegate": also checks what only leasegate answers (shapes
refused with 0A000); PostgreSQL runs those.
"""
import os
import re
import subprocess
import sys
import threading
import time

import psycopg

target = sys.argv[1] if len(sys.argv) > 1 else "postgres"

REGRESS = r"""SELECT oid AS datoid FROM pg_database WHERE datname = current_database() \gset
SELECT locktype, classid, objid, objsubid, mode, granted
	FROM pg_locks WHERE locktype = 'advisory' AND database = :datoid
	ORDER BY classid, objid, objsubid;
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = :datoid;
"""

# with a waiter, two rows share a key: granted orders them
REGRESS_WAIT = r"""SELECT oid AS datoid FROM pg_database WHERE datname = current_database() \gset
SELECT locktype, classid, objid, objsubid, mode, granted
	FROM pg_locks WHERE locktype = 'advisory' AND database = :datoid
	ORDER BY classid, objid, objsubid, granted DESC;
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = :datoid;
SELECT objid, granted FROM pg_catalog.pg_locks AS l
	WHERE l.locktype = 'advisory' AND l.granted <> true;
SELECT classid, objid FROM pg_locks WHERE locktype = 'advisory'
	ORDER BY classid DESC, 2 DESC LIMIT 2;
"""


def psql(script):
    """The script's output from psql (aligned, as the regression test)."""
    r = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"], input=script,
                       capture_output=True, text=True, timeout=30)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        out += "psql exited %d\n" % r.returncode
    return out


def connect():
    return psycopg.connect(autocommit=True)


def one(conn, sql, params=None):
    return conn.execute(sql, params).fetchone()[0]


def main():
    out = []
    a, b, c, d = connect(), connect(), connect(), connect()
    names = {}
    for letter, conn in (("A", a), ("B", b), ("C", c)):
        names[one(conn, "SELECT pg_backend_pid()")] = letter
    datoid = one(d, "SELECT oid FROM pg_database WHERE datname = current_database()")
    out.append("datoid by name equals: %s" %
               (one(d, "SELECT oid FROM pg_catalog.pg_database WHERE datname = 'locks'") == datoid))
    out.append("datoid by $1 equals: %s" %
               (one(d, "SELECT oid AS datoid FROM pg_database d WHERE d.datname = %s",
                    ["locks"]) == datoid))

    for sql in ("SELECT pg_advisory_lock(1)", "SELECT pg_advisory_lock(1)",
                "SELECT pg_advisory_lock(2, 3)", "SELECT pg_advisory_lock(-1)",
                "SELECT pg_advisory_lock(5000000000)"):
        a.execute(sql)
    b.execute("BEGIN")
    for sql in ("SELECT pg_advisory_xact_lock(10)", "SELECT pg_advisory_xact_lock(20, 30)",
                "SELECT pg_advisory_lock(11)"):
        b.execute(sql)
    out.append("== held, the regression test's queries")
    out.append(psql(REGRESS))

    waiter = threading.Thread(target=lambda: c.execute("SELECT pg_advisory_lock(1)"))
    waiter.start()
    deadline = time.time() + 10
    while one(d, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                 "granted = false") == 0:
        if time.time() > deadline:
            out.append("the waiter never showed")
            break
        time.sleep(0.05)
    out.append("== C waits for 1")
    out.append(psql(REGRESS_WAIT))

    # every column, sessions and values normalised; $1 parameters
    cur = d.execute(
        "SELECT * FROM pg_locks WHERE locktype = 'advisory' AND database = %s "
        "ORDER BY classid, objid, objsubid, granted DESC", [datoid])
    out.append("columns: " + " ".join("%s:%d" % (col.name, col.type_code)
                                      for col in cur.description))
    vx = {}
    for row in cur.fetchall():
        r = dict(zip([col.name for col in cur.description], row))
        if not re.fullmatch(r"\d+/\d+", r["virtualtransaction"]):
            out.append("bad virtualtransaction %r" % r["virtualtransaction"])
        vx.setdefault(names.get(r["pid"]), set()).add(r["virtualtransaction"])
        out.append(" ".join(str(x) for x in (
            r["locktype"], r["database"] == datoid, r["relation"], r["page"], r["tuple"],
            r["virtualxid"], r["transactionid"], r["classid"], r["objid"], r["objsubid"],
            names.get(r["pid"], "?"), r["mode"], r["granted"], r["fastpath"],
            "waitstart set" if r["waitstart"] is not None else "waitstart null")))
    out.append("one virtualtransaction per session: %s" %
               all(len(v) == 1 for v in vx.values()))
    pid_a = [p for p, n in names.items() if n == "A"][0]
    out.append("A's rows by $1: %d" % one(
        d, "SELECT count(*) FROM pg_locks WHERE pid = %s AND locktype = %s", [pid_a, "advisory"]))
    out.append("A's rows !=: %d" % one(
        d, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid != %d" % pid_a))

    a.execute("SELECT pg_advisory_unlock(1)")
    a.execute("SELECT pg_advisory_unlock(1)")
    waiter.join(10)
    out.append("C got 1: %s" % (not waiter.is_alive()))
    b.execute("COMMIT")
    out.append("== A released 1 to C, B committed")
    out.append(psql(REGRESS))

    if target == "leasegate":
        for sql in ("SELECT * FROM pg_locks WHERE pid = pg_backend_pid()",
                    "SELECT * FROM pg_locks WHERE granted OR true",
                    "SELECT * FROM pg_locks l JOIN pg_database d ON l.database = d.oid",
                    "SELECT count(*), pid FROM pg_locks"):
            try:
                d.execute(sql)
                out.append("not refused: " + sql)
            except psycopg.Error as e:
                if e.sqlstate != "0A000":
                    out.append("refused with %s: %s" % (e.sqlstate, sql))
    for conn in (a, b, c, d):
        conn.close()
    print("\n".join(out))


if __name__ == "__main__":
    main()
