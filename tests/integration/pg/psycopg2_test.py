"""psycopg2 (libpq, simple protocol, client-side parameters) against
leasegate's PostgreSQL port, or any server given by PGHOST, PGPORT, PGUSER,
PGPASSWORD, PGDATABASE. Prints one `ok`/`not ok` line per check."""
import os
import time

import psycopg2

D = "psycopg2"
K = 2000  # this driver's keys: 2000..2009


def check(what, got, want):
    print(f"ok {D}: {what}" if got == want else f"not ok {D}: {what}: got {got!r}, want {want!r}")


def connect(**kw):
    c = psycopg2.connect(**kw)  # libpq reads PG* from the environment
    c.autocommit = True
    return c


def one(conn, sql, *args):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()[0]


def oid(conn, sql, *args):  # the type OID of the result's column
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.description[0].type_code


a, b = connect(), connect()
check("connect with SCRAM, SELECT 1", one(a, "SELECT 1"), 1)
check("pg_advisory_lock returns void (OID 2278)", oid(a, "SELECT pg_advisory_lock(%s)", K), 2278)
tok = one(a, "SELECT leasegate.token(%s)", K)
check("leasegate.token of the held lock is a positive bigint", type(tok) is int and tok > 0, True)
check("another session's try is refused while held", one(b, "SELECT pg_try_advisory_lock(%s)", K), False)
check("pg_advisory_unlock returns true", one(a, "SELECT pg_advisory_unlock(%s)", K), True)
check("then the other session's try succeeds", one(b, "SELECT pg_try_advisory_lock(%s)", K), True)
check("and it unlocks", one(b, "SELECT pg_advisory_unlock(%s)", K), True)
check("unlock of a lock not held: false", one(a, "SELECT pg_advisory_unlock(%s)", K), False)

a.autocommit = False  # psycopg2 sends BEGIN before the first statement
one(a, "SELECT pg_advisory_xact_lock(%s)", K + 1)
check("xact lock: another session's try refused in the transaction",
      one(b, "SELECT pg_try_advisory_lock(%s)", K + 1), False)
a.commit()
a.autocommit = True
check("xact lock released at COMMIT", one(b, "SELECT pg_try_advisory_lock(%s)", K + 1), True)
one(b, "SELECT pg_advisory_unlock(%s)", K + 1)

t1 = one(a, "SELECT leasegate.acquire(%s, %s)", "pg-test-psycopg2", 30000)
check("leasegate.acquire returns a token", type(t1) is int and t1 > 0, True)
check("leasegate.acquire by another session: NULL",
      one(b, "SELECT leasegate.acquire(%s, %s)", "pg-test-psycopg2", 30000), None)
check("leasegate.release: true", one(a, "SELECT leasegate.release(%s)", "pg-test-psycopg2"), True)
t2 = one(b, "SELECT leasegate.acquire(%s, %s)", "pg-test-psycopg2", 30000)
check("the next holder's token is greater", t2 is not None and t2 > t1, True)
one(b, "SELECT leasegate.release(%s)", "pg-test-psycopg2")

check("holder takes a lock", one(a, "SELECT pg_try_advisory_lock(%s)", K + 2), True)
a.close()
deadline = time.monotonic() + 2
while not one(b, "SELECT pg_try_advisory_lock(%s)", K + 2) and time.monotonic() < deadline:
    time.sleep(0.01)
check("the holder's disconnect releases it (the other's try succeeds within 2 s)",
      one(b, "SELECT pg_advisory_unlock(%s)", K + 2), True)
b.close()

try:
    connect(password="wrong-" + os.environ.get("PGPASSWORD", ""))
    check("a wrong password is refused", "connected", "28P01")
except psycopg2.OperationalError as e:
    # libpq gives no SQLSTATE for a failed connection: 28P01's message
    check("a wrong password is refused (28P01: password authentication failed)",
          "password authentication failed" in str(e), True)
