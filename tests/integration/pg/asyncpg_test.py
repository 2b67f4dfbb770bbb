"""asyncpg (its own protocol code: extended protocol only, prepared
statements, binary parameters and results) against leasegate's PostgreSQL
port, or any server given by PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE.
Prints one `ok`/`not ok` line per check."""
import asyncio
import os

import asyncpg

D = "asyncpg"
K = 4000  # this driver's keys: 4000..4009


def check(what, got, want):
    print(f"ok {D}: {what}" if got == want else f"not ok {D}: {what}: got {got!r}, want {want!r}")


async def main():
    a = await asyncpg.connect()  # asyncpg reads PG* from the environment too
    b = await asyncpg.connect()
    check("connect with SCRAM, SELECT 1", await a.fetchval("SELECT 1"), 1)
    lock = await a.prepare("SELECT pg_advisory_lock($1)")
    check("pg_advisory_lock's parameter is int8, its result void",
          ([t.name for t in lock.get_parameters()], lock.get_attributes()[0].type.name),
          (["int8"], "void"))
    await lock.fetchval(K)
    tok = await a.fetchval("SELECT leasegate.token($1)", K)
    check("leasegate.token of the held lock is a positive bigint", type(tok) is int and tok > 0, True)
    try_ = await b.prepare("SELECT pg_try_advisory_lock($1)")
    check("another session's try is refused while held", await try_.fetchval(K), False)
    check("pg_advisory_unlock returns true", await a.fetchval("SELECT pg_advisory_unlock($1)", K), True)
    check("then the other session's try succeeds", await try_.fetchval(K), True)
    check("and it unlocks", await b.fetchval("SELECT pg_advisory_unlock($1)", K), True)
    check("unlock of a lock not held: false", await a.fetchval("SELECT pg_advisory_unlock($1)", K), False)

    async with a.transaction():  # BEGIN ... COMMIT
        await a.execute("SELECT pg_advisory_xact_lock($1)", K + 1)
        check("xact lock: another session's try refused in the transaction",
              await try_.fetchval(K + 1), False)
    check("xact lock released at COMMIT", await try_.fetchval(K + 1), True)
    await b.execute("SELECT pg_advisory_unlock($1)", K + 1)

    name = "pg-test-asyncpg"
    t1 = await a.fetchval("SELECT leasegate.acquire($1, $2)", name, 30000)
    check("leasegate.acquire returns a token", type(t1) is int and t1 > 0, True)
    check("leasegate.acquire by another session: NULL",
          await b.fetchval("SELECT leasegate.acquire($1, $2)", name, 30000), None)
    check("leasegate.release: true", await a.fetchval("SELECT leasegate.release($1)", name), True)
    t2 = await b.fetchval("SELECT leasegate.acquire($1, $2)", name, 30000)
    check("the next holder's token is greater", t2 is not None and t2 > t1, True)
    await b.execute("SELECT leasegate.release($1)", name)

    check("holder takes a lock", await a.fetchval("SELECT pg_try_advisory_lock($1)", K + 2), True)
    await a.close()
    for _ in range(200):  # 2 s at most
        if await try_.fetchval(K + 2):
            break
        await asyncio.sleep(0.01)
    check("the holder's disconnect releases it (the other's try succeeds within 2 s)",
          await b.fetchval("SELECT pg_advisory_unlock($1)", K + 2), True)
    await b.close()

    try:
        await asyncpg.connect(password="wrong-" + os.environ.get("PGPASSWORD", ""))
        check("a wrong password is refused: 28P01", "connected", "28P01")
    except asyncpg.PostgresError as e:
        check("a wrong password is refused: 28P01", e.sqlstate, "28P01")


asyncio.run(main())
