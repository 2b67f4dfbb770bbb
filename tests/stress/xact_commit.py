#!/usr/bin/python3
"""A PostgreSQL transaction-scoped advisory lock across two replicas: on
gateway A, `BEGIN; SELECT pg_advisory_xact_lock(1); COMMIT;`; right after
A's COMMIT returns, a session on gateway B calls `pg_try_advisory_lock(1)`
(and unlocks it when granted). Nothing else uses the lock, so once A's
COMMIT has answered, B's try must be granted: a refusal means the COMMIT
answered before the release was written to DynamoDB.

    /usr/bin/python3 tests/stress/xact_commit.py   (LG_BIN, LG_MOTO, LG_AK,
                                                    LG_SK, LG_WORK set)

XACT_TRIES rounds (40). Every operation goes to the history
$LG_WORK/xact-history.jsonl (tests/stress/history.py), which
tests/stress/lincheck.py then checks: its "ok" / "not ok" lines, and this
script's own count of refusals after an answered COMMIT. Exit status 1 on
any violation.
"""
import os
import subprocess
import sys
import time

import stress
from history import History, Pg, PgError, now

TRIES = int(os.environ.get("XACT_TRIES", 40))
LEASE_MS = 2000
DB = "xact"
NAME = f"pg:{DB}:1"
TIMEOUT = 10


class Direct:
    """Where a gateway of stress.Gateway reaches DynamoDB: moto itself."""

    def __init__(self):
        self.port = int(stress.MOTO.rsplit(":", 1)[1])


def call(hist, pg, client, gw, sql):
    """Runs sql, records it as op; returns (result, value)."""
    inv = now()
    try:
        v = pg.query(sql)
        res = None
    except PgError as e:
        v, res = None, ("lost" if e.sqlstate == "55000" else
                        "error" if e.sqlstate is None else "failed:" + e.sqlstate)
    comp = now()
    lost, unwritten = pg.take_notices()
    for lost_name, token in lost:
        hist.add(client, gw, "pg", "lost", lost_name, inv, comp, "lost", token)
    if res is None and NAME in unwritten:
        res = "unwritten"  # the release's WARNING 58000
    return inv, comp, res, v


def main():
    table = f"lg-xact-{os.getpid()}-{int(time.time())}"
    path = os.path.join(stress.WORK, "xact-history.jsonl")
    hist = History(path)
    gws = []
    refused = granted = 0
    try:
        gws = [stress.Gateway(i, table, Direct()) for i in range(2)]
        a = Pg(gws[0].pg_port, DB, TIMEOUT)
        b = Pg(gws[1].pg_port, DB, TIMEOUT)
        for p in (a, b):
            p.query(f"SET leasegate.lease_ms = {LEASE_MS}")
        for _ in range(TRIES):
            a.query("BEGIN")
            inv, comp, res, _ = call(hist, a, "A", 0,
                                     "SELECT pg_advisory_xact_lock(1)")
            tok = None
            if res is None:
                tok = a.query("SELECT leasegate.token(1)")
            hist.add("A", 0, "pg", "acquire", NAME, inv, comp,
                     "granted" if res is None else res, tok, lease_ms=LEASE_MS, wait=True)
            inv, comp, res, _ = call(hist, a, "A", 0, "COMMIT")
            hist.add("A", 0, "pg", "commit", NAME, inv, comp, res or "ok")
            inv, comp, res, v = call(hist, b, "B", 1,
                                     "SELECT pg_try_advisory_lock(1)")
            r = res or ("granted" if v else "refused")
            hist.add("B", 1, "pg", "acquire", NAME, inv, comp, r, None, lease_ms=LEASE_MS,
                     wait=False)
            if r == "granted":
                granted += 1
                inv, comp, res, v = call(hist, b, "B", 1,
                                         "SELECT pg_advisory_unlock(1)")
                hist.add("B", 1, "pg", "unlock", NAME, inv, comp,
                         res or ("ok" if v else "notheld"))
            elif r == "refused":
                refused += 1
                time.sleep(0.05)  # let the release land before the next round
        a.close()
        b.close()
    finally:
        for g in gws:
            g.stop_for_good()
        hist.close()
    print(f"# {TRIES} rounds: B's try right after A's COMMIT granted {granted}, refused "
          f"{refused}; history {path} ({hist.count} ops)")
    ok = refused == 0
    print(f"{'ok' if ok else 'not ok'} xact_commit: a try on replica B right after a COMMIT "
          f"on replica A is granted ({refused} refusals in {TRIES} tries)")
    chk = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "lincheck.py"),
                          path])
    return 0 if ok and chk.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
