"""Input strictness as PostgreSQL 15's, against leasegate's PostgreSQL port
or any server given by PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE (each
SQLSTATE below is what PostgreSQL 15 answers): function arguments resolved
by type (psycopg2), an unsupported or unresolvable parameterised statement
failing at prepare with its own error (asyncpg: never "the server expects
0 arguments"), and raw messages: a Bind parameter length of -2, format
code 7 (a NULL's too), format counts that do not match, a Query with bytes
past its NUL. Prints one `ok`/`not ok` line per check."""
import asyncio
import hashlib
import hmac
import base64
import os
import socket
import struct

import asyncpg
import psycopg2

D = "strict"
e = os.environ


def check(what, got, want):
    print(("ok" if got == want else "not ok") + f" {D}: {what}" +
          ("" if got == want else f": got {got!r}, want {want!r}"))


def sqlstate(sql):
    c = psycopg2.connect("")
    c.autocommit = True
    try:
        c.cursor().execute(sql)
        return "00000"
    except psycopg2.Error as x:
        return x.pgcode
    finally:
        c.close()


for sql, want in [("SELECT pg_advisory_lock(true)", "42883"),
                  ("SELECT pg_advisory_lock(1::text)", "42883"),
                  ("SELECT pg_try_advisory_lock(1, 3000000000)", "42883"),
                  ("SELECT pg_try_advisory_lock('1')", "00000"),
                  ("SELECT pg_advisory_unlock(1::smallint)", "00000")]:
    check(f"{sql}: {want}", sqlstate(sql), want)


async def asyncpg_prepare():
    c = await asyncpg.connect()
    try:
        for sql in ["SELECT relname FROM no_such_table WHERE oid = $1",
                    "SELECT pg_advisory_lock($1::text)"]:
            try:
                await c.fetchval(sql, 1)
                got = "ran"
            except asyncpg.PostgresError as x:
                got = "PostgresError"
            except asyncpg.InterfaceError as x:
                got = f"InterfaceError: {x}"
            check(f"asyncpg: {sql} fails at prepare with its real error", got,
                  "PostgresError")
    finally:
        await c.close()


asyncio.run(asyncpg_prepare())

# --- raw messages ---


def msg(t, body):
    return t + struct.pack("!i", len(body) + 4) + body


def cstr(s):
    return s.encode() + b"\0"


def recv(s):
    h = b""
    while len(h) < 5:
        d = s.recv(5 - len(h))
        if not d:
            raise EOFError("connection closed")
        h += d
    n = struct.unpack("!i", h[1:])[0] - 4
    b = b""
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d:
            raise EOFError("connection closed")
        b += d
    return h[:1], b


def scram(s, pw):
    """SCRAM-SHA-256 (RFC 5802/7677), as the server asks for it."""
    nonce = base64.b64encode(os.urandom(18)).decode()
    first = f"n=,r={nonce}"
    s.sendall(msg(b"p", cstr("SCRAM-SHA-256") + struct.pack("!i", len(first) + 3) +
                  b"n,," + first.encode()))
    t, b = recv(s)
    sf = b[4:].decode()
    f = dict(kv.split("=", 1) for kv in sf.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", pw.encode(), base64.b64decode(f["s"]), int(f["i"]))
    ck = hmac.new(salted, b"Client Key", "sha256").digest()
    final = f"c=biws,r={f['r']}"
    auth = f"{first},{sf},{final}".encode()
    sig = hmac.new(hashlib.sha256(ck).digest(), auth, "sha256").digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(ck, sig))).decode()
    s.sendall(msg(b"p", f"{final},p={proof}".encode()))


def connect():
    s = socket.create_connection((e["PGHOST"], int(e["PGPORT"])), timeout=10)
    body = struct.pack("!i", 196608) + cstr("user") + cstr(e["PGUSER"]) + cstr("database") + \
        cstr(e["PGDATABASE"]) + b"\0"
    s.sendall(struct.pack("!i", len(body) + 4) + body)
    while True:
        t, b = recv(s)
        if t == b"R" and struct.unpack("!i", b[:4])[0] == 10:
            scram(s, e["PGPASSWORD"])
        elif t == b"R" and struct.unpack("!i", b[:4])[0] == 3:
            s.sendall(msg(b"p", cstr(e["PGPASSWORD"])))
        elif t == b"E":
            raise RuntimeError(b)
        elif t == b"Z":
            return s


def answer(s, data):
    """The message types up to ReadyForQuery, an error as its SQLSTATE."""
    s.sendall(data)
    out = []
    while True:
        t, b = recv(s)
        if t == b"E":
            out.append(dict((f[:1].decode(), f[1:].decode()) for f in b.split(b"\0") if f)["C"])
        elif t != b"N":
            out.append(t.decode())
        if t == b"Z":
            return out


def bind(fmts, params, lens=None):
    b = cstr("") + cstr("") + struct.pack("!h", len(fmts)) + \
        b"".join(struct.pack("!h", f) for f in fmts) + struct.pack("!h", len(params))
    for i, p in enumerate(params):
        n = lens[i] if lens else (-1 if p is None else len(p))
        b += struct.pack("!i", n) + (p or b"")
    return msg(b"B", b + struct.pack("!h", 0))


PARSE = msg(b"P", cstr("") + cstr("SELECT pg_try_advisory_lock($1::bigint)") +
            struct.pack("!h", 0))
EXEC_SYNC = msg(b"E", cstr("") + struct.pack("!i", 0)) + msg(b"S", b"")
s = connect()
for what, data, want in [
        ("Bind parameter length -2: 08P01", PARSE + bind([0], [b""], [-2]) + EXEC_SYNC,
         ["1", "08P01", "Z"]),
        ("Bind format code 7: 22023", PARSE + bind([7], [b"5"]) + EXEC_SYNC,
         ["1", "22023", "Z"]),
        ("Bind format code 7 of a NULL: 22023", PARSE + bind([7], [None]) + EXEC_SYNC,
         ["1", "22023", "Z"]),
        ("Bind of 2 format codes for 1 parameter: 08P01", PARSE + bind([0, 0], [b"5"]) +
         EXEC_SYNC, ["1", "08P01", "Z"]),
        ("result format code 7: 22023 at Execute",
         PARSE + msg(b"B", cstr("") + cstr("") + struct.pack("!hhi", 0, 1, 1) + b"5" +
                     struct.pack("!hh", 1, 7)) + EXEC_SYNC, ["1", "2", "22023", "Z"]),
        ("a Query with bytes past its NUL: 08P01", msg(b"Q", b"SELECT 1\0SELECT 2\0"),
         ["08P01", "Z"]),
        ("... and the session goes on", msg(b"Q", cstr("SELECT 1")), ["T", "D", "C", "Z"]),
        ("an unsupported Parse fails there, Describe skipped to Sync",
         msg(b"P", cstr("") + cstr("SELECT relname FROM no_such_table WHERE oid = $1") +
             struct.pack("!h", 0)) + msg(b"D", b"S" + cstr("")) + msg(b"S", b""),
         ["0A000" if e.get("PG_TARGET", "leasegate") == "leasegate" else "42P01", "Z"])]:
    check(what, answer(s, data), want)
s.close()
