"""SQLAlchemy 1.4 (Debian's python3-sqlalchemy) against leasegate's
PostgreSQL port, or any server given by PGHOST, PGPORT, PGUSER, PGPASSWORD,
PGDATABASE: create_engine with a pool and pool_pre_ping, through psycopg2
and asyncpg (create_async_engine); select(func.pg_advisory_lock(k)),
func.pg_try_advisory_xact_lock inside engine.begin(). SQLAlchemy 1.4 has no
psycopg (3) dialect (2.0 brings it): checked, so that a newer SQLAlchemy is
noticed. Prints one `ok`/`not ok` line per check."""
import asyncio
import os

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

D = "sqlalchemy"
K = 7000  # this program's keys: 7000..7019


def check(what, got, want):
    print(("ok" if got == want else "not ok") + f" {D}: {what}" +
          ("" if got == want else f": got {got!r}, want {want!r}"))


def url(driver):
    e = os.environ
    return (f"postgresql+{driver}://{e['PGUSER']}:{e['PGPASSWORD']}@{e['PGHOST']}:"
            f"{e['PGPORT']}/{e['PGDATABASE']}")


def sync_psycopg2():
    eng = sa.create_engine(url("psycopg2"), pool_size=2, max_overflow=0, pool_pre_ping=True)
    a = eng.connect()
    a.execute(sa.select(sa.func.pg_advisory_lock(K)))
    check("psycopg2: select(func.pg_advisory_lock) at connect (version, current_schema, "
          "hstore lookup)", a.execute(sa.select(sa.func.pg_advisory_lock(K))).scalar(), "")
    with eng.connect() as b:
        check("psycopg2: a second pooled connection is refused the lock",
              b.execute(sa.select(sa.func.pg_try_advisory_lock(K))).scalar(), False)
    check("psycopg2: pg_advisory_unlock twice (reentrant)",
          [a.execute(sa.select(sa.func.pg_advisory_unlock(K))).scalar() for _ in range(2)],
          [True, True])
    a.close()
    with eng.begin() as c:
        got = c.execute(sa.select(sa.func.pg_try_advisory_xact_lock(K + 1))).scalar()
        with eng.connect() as other:
            held = other.execute(sa.select(sa.func.pg_try_advisory_lock(K + 1))).scalar()
    check("psycopg2: pg_try_advisory_xact_lock in engine.begin(), held inside", (got, held),
          (True, False))
    with eng.connect() as c:
        check("psycopg2: ... and released at its COMMIT",
              c.execute(sa.select(sa.func.pg_try_advisory_lock(K + 1))).scalar(), True)
        c.execute(sa.select(sa.func.pg_advisory_unlock(K + 1)))
    # pool_pre_ping pings each checkout: a failed ping would replace the
    # connection, so the same DBAPI connection each time means it passed
    ids = set()
    for _ in range(5):
        with eng.connect() as c:
            ids.add(id(c.connection.dbapi_connection))
    check("psycopg2: pool_pre_ping keeps the pooled connections (pings pass)", len(ids) <= 2,
          True)
    eng.dispose()


async def async_asyncpg():
    eng = create_async_engine(url("asyncpg"), pool_size=2, max_overflow=0, pool_pre_ping=True)
    async with eng.connect() as a:
        await a.execute(sa.select(sa.func.pg_advisory_lock(K + 2)))
        async with eng.connect() as b:
            got = (await b.execute(sa.select(sa.func.pg_try_advisory_lock(K + 2)))).scalar()
        check("asyncpg: pg_advisory_lock (json codecs' pg_type lookups at connect), refused "
              "to another pooled connection", got, False)
        check("asyncpg: pg_advisory_unlock",
              (await a.execute(sa.select(sa.func.pg_advisory_unlock(K + 2)))).scalar(), True)
        await a.commit()
    async with eng.begin() as c:
        got = (await c.execute(sa.select(sa.func.pg_try_advisory_xact_lock(K + 3)))).scalar()
    check("asyncpg: pg_try_advisory_xact_lock in engine.begin()", got, True)
    async with eng.connect() as c:
        got = (await c.execute(sa.select(sa.func.pg_try_advisory_lock(K + 3)))).scalar()
        await c.execute(sa.select(sa.func.pg_advisory_unlock(K + 3)))
        await c.commit()
    check("asyncpg: ... released at its COMMIT", got, True)
    ids = set()
    for _ in range(5):
        async with eng.connect() as c:
            raw = await c.get_raw_connection()
            ids.add(id(raw.dbapi_connection))
    check("asyncpg: pool_pre_ping keeps the pooled connections (pings pass)", len(ids) <= 2,
          True)
    await eng.dispose()


def psycopg3():
    try:
        sa.create_engine(url("psycopg"))
        check(f"psycopg (3): SQLAlchemy {sa.__version__} has a dialect: test it here", False,
              True)
    except sa.exc.NoSuchModuleError:
        check(f"psycopg (3): SQLAlchemy {sa.__version__} has no psycopg dialect (2.0 has)",
              sa.__version__.startswith("1."), True)


sync_psycopg2()
asyncio.run(async_asyncpg())
psycopg3()
