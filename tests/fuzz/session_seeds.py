#!/usr/bin/env python3
"""Writes the seeds of fuzz_session (tests/fuzz/corpus/fuzz_session/) in the
encoding tests/fuzz/fuzz_session.c reads: the first byte picks a mode of its
`modes` table, a logged-in mode's second byte a login of its `logins` table,
and in the framed PostgreSQL mode each message is a type byte, a 16-bit
big-endian body length and the body (the harness writes the real length).

Run it after changing those tables: python3 tests/fuzz/session_seeds.py
"""
import os
import struct

# fuzz_session.c's modes and logins, by index
REDIS_RAW, PG_RAW, ADMIN, REDIS_LOGIN, PG_FRAMED, PG_LOGIN_RAW = range(6)
ADMIN_USER, APP, READER, LOCKER, DEFAULT, APP_WRONG, GONE = range(7)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_session")


def resp(*args):
    """One RESP multibulk request."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def frame(typ, body):
    """One message of the framed PostgreSQL mode."""
    return typ + struct.pack(">H", len(body)) + body


def pg_wire(typ, body):
    """One PostgreSQL message as on the wire (the raw modes)."""
    return typ + struct.pack(">I", len(body) + 4) + body


def startup(user):
    body = struct.pack(">I", 3 << 16) + b"user\0" + user + b"\0database\0d\0\0"
    return struct.pack(">I", len(body) + 4) + body


def parse(name, sql, oids=()):
    return name + b"\0" + sql + b"\0" + struct.pack(">H", len(oids)) + b"".join(
        struct.pack(">I", o) for o in oids)


def bind(portal, stmt, fmts, values, rfmts=()):
    """Bind: fmts and rfmts are int16 format codes (any value), values
    bytes or None (NULL)."""
    out = portal + b"\0" + stmt + b"\0" + struct.pack(">H", len(fmts))
    out += b"".join(struct.pack(">h", f) for f in fmts)
    out += struct.pack(">H", len(values))
    for v in values:
        out += struct.pack(">i", -1) if v is None else struct.pack(">I", len(v)) + v
    out += struct.pack(">H", len(rfmts)) + b"".join(struct.pack(">h", f) for f in rfmts)
    return out


def describe(kind, name):
    return kind + name + b"\0"


def execute(portal, rows=0):
    return portal + b"\0" + struct.pack(">I", rows)


def extended(stmt, sql, oids, fmts, values, rfmts=()):
    """Parse, Bind, Describe, Execute, Sync of one statement."""
    return (frame(b"P", parse(stmt, sql, oids)) + frame(b"B", bind(b"", stmt, fmts, values, rfmts))
            + frame(b"D", describe(b"P", b"")) + frame(b"E", execute(b"")) + frame(b"S", b""))


INT8 = 20
SEEDS = {
    # the raw modes (unchanged encodings: the first byte only)
    "pg_simple": bytes([PG_RAW]) + startup(b"admin") + pg_wire(b"p", b"adminpw\0") + pg_wire(
        b"Q", b"select pg_advisory_lock(1); select pg_try_advisory_lock(2); "
        b"SET lock_timeout = '1s'; BEGIN; select pg_advisory_xact_lock(3); COMMIT; "
        b"select leasegate.acquire('x', 1000)\0") + pg_wire(b"X", b""),
    "pg_extended": bytes([PG_RAW]) + startup(b"app") + pg_wire(b"p", b"apppw\0") +
    pg_wire(b"P", parse(b"s1", b"select pg_advisory_unlock($1)")) +
    pg_wire(b"B", bind(b"p1", b"s1", [], [b"7"])) + pg_wire(b"D", describe(b"P", b"p1")) +
    pg_wire(b"E", execute(b"p1")) + pg_wire(b"C", b"Sp1\0") + pg_wire(b"S", b""),
    # logged in, framed: Bind's format codes, text, binary and odd ones
    "pg_bind_formats": bytes([PG_FRAMED, ADMIN_USER]) +
    extended(b"", b"select pg_advisory_lock($1)", [INT8], [1], [struct.pack(">q", 42)], [1]) +
    extended(b"", b"select pg_advisory_unlock($1)", [], [0], [b"42"]) +
    extended(b"s2", b"select pg_advisory_unlock($1, $2)", [], [0, 1], [b"1", None], [0, 1]),
    "pg_bind_odd_formats": bytes([PG_FRAMED, APP]) +
    extended(b"", b"select pg_try_advisory_lock($1, $2)", [], [-32768], [b"1", b"2"]) +
    extended(b"", b"select pg_try_advisory_lock($1, $2)", [], [0, -255], [b"1", b"2"]) +
    extended(b"", b"select pg_try_advisory_lock($1, $2)", [], [2, 256], [b"1", None], [-1]),
    "pg_leasegate_acl": bytes([PG_FRAMED, APP]) +
    extended(b"", b"select leasegate.acquire($1, $2)", [], [0, 0], [b"orders:1", b"1000"]) +
    extended(b"", b"select leasegate.acquire($1, $2)", [], [0], [b"other", b"1000"]) +
    extended(b"", b"select leasegate.state($1)", [], [], [b"view:1"]) +
    frame(b"Q", b"select leasegate.release('orders:1')\0"),
    "pg_reader": bytes([PG_FRAMED, READER]) +
    extended(b"", b"select leasegate.state($1)", [], [0], [b"a"]) +
    frame(b"Q", b"select pg_advisory_lock(1)\0") + frame(b"X", b""),
    "pg_login_raw": bytes([PG_LOGIN_RAW, LOCKER]) +
    pg_wire(b"Q", b"select pg_advisory_lock(1); SHOW ALL\0") + pg_wire(b"S", b""),
    # Redis, logged in: allowed and refused by each user's rules
    "redis_app": bytes([REDIS_LOGIN, APP]) + resp("LOCK.ACQUIRE", "orders:1", 1000) +
    resp("LOCK.ACQUIRE", "other", 1000) + resp("LOCK.STATE", "view:1") +
    resp("LOCK.ACQUIRE", "view:1", 1000) + resp("LOCK.RELEASE", "orders:1", 1) +
    resp("LEADER.CAMPAIGN", "jobs:a", 1000) + resp("EVAL", "return 1", 1, "orders:2") +
    resp("EVAL", "return 1", "x0000000000000000000000", "other") + resp("ACL", "WHOAMI"),
    "redis_reader": bytes([REDIS_LOGIN, READER]) + resp("LOCK.STATE", "a") +
    resp("LOCK.ACQUIRE", "a", 1000) + resp("ACL", "WHOAMI") + resp("LOCK.LIST"),
    "redis_locker": bytes([REDIS_LOGIN, LOCKER]) + resp("LOCK.ACQUIRE", "lx", 1000) +
    resp("LOCK.RENEW", "lx", 1, 2000) + resp("LOCK.STATE", "lx") + resp("LOCK.RELEASE", "lx", 1) +
    resp("LOCK.ACQUIRE", "mx", 1000),
    "redis_admin": bytes([REDIS_LOGIN, ADMIN_USER]) + resp("ACL", "LIST") +
    resp("ACL", "GETUSER", "app") + resp("CONFIG", "GET", "*") + resp("CLIENT", "LIST") +
    resp("LOCK.LIST", "TABLE"),
    "redis_wrong": bytes([REDIS_LOGIN, APP_WRONG]) + resp("LOCK.ACQUIRE", "orders:1", 1000) +
    resp("AUTH", "gone", "gonepw") + resp("HELLO", 3, "AUTH", "app", "apppw"),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    # the raw seeds written by hand: their mode byte only
    for name, mode in (("admin", ADMIN), ("redis_compat", REDIS_RAW),
                       ("redis_locks", REDIS_RAW), ("redis_multibulk", REDIS_RAW)):
        path = os.path.join(OUT, name)
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(bytes([mode]) + data[1:])
    print("%d seeds in %s" % (len(SEEDS) + 4, OUT))


if __name__ == "__main__":
    main()
