"""Django (Debian's python3-django) with a second DATABASES alias, `locks`,
pointing at leasegate's PostgreSQL port (or any server given by PGHOST,
PGPORT, PGUSER, PGPASSWORD, PGDATABASE), django.contrib.postgres installed
(its hstore and citext lookups at connect) and USE_TZ (SET TIME ZONE at
connect). A minimal settings module, no project. Prints one `ok`/`not ok`
line per check."""
import os

import django
from django.conf import settings

D = "django"
K = 7100  # this program's keys: 7100..7109
e = os.environ
settings.configure(
    USE_TZ=True,
    TIME_ZONE="Europe/Paris",
    INSTALLED_APPS=["django.contrib.postgres"],
    DATABASES={
        "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"},
        "locks": {"ENGINE": "django.db.backends.postgresql", "HOST": e["PGHOST"],
                  "PORT": e["PGPORT"], "NAME": e["PGDATABASE"], "USER": e["PGUSER"],
                  "PASSWORD": e["PGPASSWORD"], "CONN_MAX_AGE": 60},
        "locks2": {"ENGINE": "django.db.backends.postgresql", "HOST": e["PGHOST"],
                   "PORT": e["PGPORT"], "NAME": e["PGDATABASE"], "USER": e["PGUSER"],
                   "PASSWORD": e["PGPASSWORD"]},
    })
django.setup()
from django.db import connections, transaction  # noqa: E402


def check(what, got, want):
    print(("ok" if got == want else "not ok") + f" {D}: {what}" +
          ("" if got == want else f": got {got!r}, want {want!r}"))


def one(alias, sql, args=()):
    with connections[alias].cursor() as c:
        c.execute(sql, args)
        return c.fetchone()[0]


with connections["locks"].cursor() as c:
    c.execute("SELECT pg_advisory_lock(%s)", [K])
    check(f"Django {django.get_version()}: connections['locks'].cursor().execute("
          "'SELECT pg_advisory_lock(%s)', [k]) (hstore, citext, SET TIME ZONE at connect)",
          c.fetchone()[0], "")
check("the second alias is refused the lock", one("locks2", "SELECT pg_try_advisory_lock(%s)",
                                                    [K]), False)
check("SHOW TIME ZONE: the UTC Django set", one("locks", "SHOW TIME ZONE"), "UTC")
check("pg_advisory_unlock", one("locks", "SELECT pg_advisory_unlock(%s)", [K]), True)
with transaction.atomic(using="locks"):
    got = one("locks", "SELECT pg_try_advisory_xact_lock(%s)", [K + 1])
    held = one("locks2", "SELECT pg_try_advisory_lock(%s)", [K + 1])
check("pg_try_advisory_xact_lock in transaction.atomic(using='locks')", (got, held),
      (True, False))
check("... released at its end", one("locks2", "SELECT pg_try_advisory_lock(%s)", [K + 1]), True)
one("locks2", "SELECT pg_advisory_unlock(%s)", [K + 1])
check("is_usable() (its SELECT 1)", connections["locks"].is_usable(), True)
connections.close_all()
