"""The history the stress harness records for tests/stress/lincheck.py: one
JSON line per client operation (client, replica, proto, op, name, invoke,
complete, result, token, and lease_ms / wait / mode for acquires, limit and
slot for a semaphore's), every time in
seconds since the harness started, on its one monotonic clock. And a
PostgreSQL client (psycopg2, asynchronous, so that every call has a
deadline: a stopped gateway does not hang it) that records what it does.
"""
import json
import re
import select
import threading
import time

import psycopg2
import psycopg2.extensions

T0 = time.monotonic()


def now():
    """Seconds since the harness started, on the monotonic clock."""
    return time.monotonic() - T0


class History:
    """JSON lines, appended by every client thread."""

    def __init__(self, path):
        self.path = path
        self.f = open(path, "w")
        self.mu = threading.Lock()
        self.count = 0

    def add(self, client, replica, proto, op, name, invoke, complete, result, token=None,
            **extra):
        rec = {"client": client, "replica": replica, "proto": proto, "op": op, "name": name,
               "invoke": round(invoke, 6), "complete": round(complete, 6), "result": result,
               "token": token}
        rec.update(extra)
        with self.mu:
            self.f.write(json.dumps(rec) + "\n")
            self.count += 1

    def close(self):
        with self.mu:
            self.f.close()


LOST_NOTICE = re.compile(r'the lease of lock "([^"]+)" \(fencing token (\d+)\) was lost')
UNWRITTEN_NOTICE = re.compile(r"WARNING: .*the release of '([^']+)' was not written")


class PgError(Exception):
    """An answer that is an error (sqlstate set) or no answer (sqlstate
    None: the connection is gone)."""

    def __init__(self, sqlstate, msg):
        super().__init__(msg)
        self.sqlstate = sqlstate


class Pg:
    """One PostgreSQL session on a gateway, every call bounded by timeout."""

    def __init__(self, port, dbname, timeout):
        self.timeout = timeout
        self.conn = psycopg2.connect(host="127.0.0.1", port=port, dbname=dbname,
                                     user="stress", connect_timeout=2, async_=1)
        self._wait()

    def _wait(self):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                state = self.conn.poll()
            except psycopg2.Error as e:  # no SQLSTATE: the connection is gone
                raise PgError(e.pgcode if not self.conn.closed else None, str(e).strip())
            if state == psycopg2.extensions.POLL_OK:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise PgError(None, "timeout")
            fd = self.conn.fileno()
            if state == psycopg2.extensions.POLL_READ:
                select.select([fd], [], [], min(left, 0.5))
            else:
                select.select([], [fd], [], min(left, 0.5))

    def query(self, sql):
        """The first column of the first row, or None."""
        row = self.query_row(sql)
        return row[0] if row else None

    def query_row(self, sql):
        """The first row, or None."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
        except psycopg2.Error as e:
            raise PgError(getattr(e, "pgcode", None), str(e).strip())
        self._wait()
        return cur.fetchone() if cur.description else None

    def take_notices(self):
        """What the gateway told in notices since the last call: the (name,
        token) of every loss reported, and the names of the releases it
        could not write (WARNING 58000: the session holds the lock no more,
        the lock may still be held until its lease runs out)."""
        lost, unwritten = [], set()
        for n in self.conn.notices:
            m = LOST_NOTICE.search(n)
            if m:
                lost.append((m.group(1), int(m.group(2))))
            m = UNWRITTEN_NOTICE.search(n)
            if m:
                unwritten.add(m.group(1))
        del self.conn.notices[:]
        return lost, unwritten

    def close(self):
        try:
            self.conn.close()
        except psycopg2.Error:
            pass
