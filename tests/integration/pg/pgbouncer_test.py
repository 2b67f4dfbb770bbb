"""psycopg2 through pgbouncer (Debian's) in front of leasegate's PostgreSQL
port, or any server: PGHOST/PGPORT name the pgbouncer, argv[1] its
pool_mode. Session pooling: each client has a server connection of its
own while connected, a session lock is refused to another client and freed
when its holder disconnects (pgbouncer's DISCARD ALL). Transaction pooling
(one server connection): the next client's transaction runs on the
connection whose session holds the lock, so it "takes" it too: why session
locks are unsafe there (pg_advisory_xact_lock is not). Prints one
`ok`/`not ok` line per check."""
import sys
import time

import psycopg2

D = "pgbouncer"
K = 7500  # this program's keys: 7500..7509
mode = sys.argv[1]


def check(what, got, want):
    print(("ok" if got == want else "not ok") + f" {D} {mode}: {what}" +
          ("" if got == want else f": got {got!r}, want {want!r}"))


def connect(app):
    c = psycopg2.connect("", application_name=app)
    c.autocommit = True
    return c


def one(c, sql, *args):
    cur = c.cursor()
    cur.execute(sql, args)
    return cur.fetchone()[0]


a, b = connect("app_a"), connect("app_b")
if mode == "session":
    check("pg_advisory_lock through the pooler", one(a, "SELECT pg_advisory_lock(%s)", K), "")
    check("another client is refused it", one(b, "SELECT pg_try_advisory_lock(%s)", K), False)
    a.close()  # pgbouncer runs DISCARD ALL on a's server connection
    got = False
    for _ in range(40):
        got = one(b, "SELECT pg_try_advisory_lock(%s)", K)
        if got:
            break
        time.sleep(0.05)
    check("the holder's disconnect frees it (DISCARD ALL at the server connection's reset)",
          got, True)
    check("pg_advisory_unlock", one(b, "SELECT pg_advisory_unlock(%s)", K), True)
    with b:  # a transaction
        b.autocommit = False
        check("pg_try_advisory_xact_lock in a transaction",
              one(b, "SELECT pg_try_advisory_xact_lock(%s)", K + 1), True)
else:
    check("pg_advisory_lock as app_a", one(a, "SELECT pg_advisory_lock(%s)", K + 2), "")
    check("app_b's transaction runs on the same server connection and 'takes' it too "
          "(session locks are unsafe behind transaction pooling)",
          one(b, "SELECT pg_try_advisory_lock(%s)", K + 2), True)
    one(b, "SELECT pg_advisory_unlock_all()")
    b.autocommit = False
    got = one(b, "SELECT pg_try_advisory_xact_lock(%s)", K + 3)
    b.commit()
    check("pg_try_advisory_xact_lock (safe here: it ends with the transaction)", got, True)
    check("... and is free after COMMIT", one(a, "SELECT pg_try_advisory_lock(%s)", K + 3),
          True)
    one(a, "SELECT pg_advisory_unlock_all()")
a.close()
b.close()
