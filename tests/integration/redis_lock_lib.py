#!/usr/bin/python3
"""redis-py's Lock, unmodified, against leasegate (issue 14).

    /usr/bin/python3 redis_lock_lib.py SETUP PORT_A [PORT_B]

SETUP names the run in the output (embedded, moto, moto-pair). The lock's
holder talks to PORT_A, its contender to PORT_B (PORT_A when not given):
two gateways on one table make the contender another replica. Checks:
blocking acquire (blocking_timeout), locked(), owned(), a contender's
non-blocking acquire refused while held and its blocking acquire served
after the release, extend (added and replaced), reacquire, PTTL/TTL/GET as
the lock shows them, a lease of timeout=2 that is never released taken
over by the contender once it ran out (and then LockNotOwnedError for its
first holder), DEL by an operator (also of a LOCK.ACQUIRE lock, whose
connection is told LOST forced), LOCK.RELEASE by token of a library's lock,
redis.asyncio's Lock, the scripts by SHA1 (EVALSHA, SCRIPT LOAD/EXISTS,
EVAL with redis-py's own bodies) and an unknown script refused with
NOSCRIPT. Prints "ok ..." / "not ok ..." lines; exits 1 when
any failed.
"""
import hashlib
import os
import socket
import sys
import threading
import time

import redis
from redis.exceptions import LockNotOwnedError, NoScriptError, ResponseError
from redis.lock import Lock

setup = sys.argv[1]
port_a = int(sys.argv[2])
port_b = int(sys.argv[3]) if len(sys.argv) > 3 else port_a
failed = 0
run = f"{os.getpid()}"


def check(ok, what, got=None):
    global failed
    failed += not ok
    extra = "" if ok or got is None else f" (got {got!r})"
    print(f"{'ok' if ok else 'not ok'} {setup}: {what}{extra}", flush=True)
    return ok


def client(port):
    return redis.Redis(port=port, socket_timeout=30)


ra, rb = client(port_a), client(port_b)
fence = lambda r, name: dict(zip(*[iter(r.execute_command("LOCK.STATE", name))] * 2))[b"fencing-token"]


def basics():
    name = f"report-{run}"
    a = ra.lock(name, timeout=10)
    check(a.acquire(blocking_timeout=2) is True, "acquire (blocking_timeout=2) takes a free lock")
    check(a.locked() and a.owned(), "locked() and owned() for its holder")
    # thread_local=False: its acquire runs in a thread, its checks here
    b = rb.lock(name, timeout=10, thread_local=False)
    check(b.locked() and not b.owned(), "another client sees it locked(), not owned()")
    check(b.acquire(blocking=False) is False, "another client's non-blocking acquire fails while held")
    got = ra.get(name)
    check(got == a.local.token, "GET answers the holder's token (the library's value)", got)
    pttl = ra.pttl(name)
    check(8000 < pttl <= 10000, "PTTL: what remains of the 10 s lease", pttl)
    check(ra.ttl(name) in (9, 10), "TTL in seconds", ra.ttl(name))

    check(a.extend(5) is True, "extend(5) (added to what remains)")
    pttl = ra.pttl(name)
    check(13000 < pttl <= 15000, "after extend(5): about 15 s remain", pttl)
    check(a.extend(3, replace_ttl=True) is True, "extend(3, replace_ttl=True)")
    pttl = ra.pttl(name)
    check(2000 < pttl <= 3000, "after extend(3, replace_ttl=True): 3 s remain", pttl)
    check(a.reacquire() is True, "reacquire()")
    pttl = ra.pttl(name)
    check(8000 < pttl <= 10000, "after reacquire(): the whole timeout (10 s) remains", pttl)
    check(a.owned(), "still owned() after extend and reacquire")
    token = fence(ra, name)

    # the contender blocks; the holder releases; the contender gets it
    got = {}

    def contend():
        t0 = time.monotonic()
        got["acquired"] = b.acquire(blocking_timeout=15)
        got["took"] = time.monotonic() - t0

    t = threading.Thread(target=contend)
    t.start()
    time.sleep(0.5)
    a.release()
    t.join()
    check(got.get("acquired") is True, "a blocking acquire is served after the release", got)
    check(got.get("took", 99) < 5, "... within 5 s of it", got.get("took"))
    check(b.owned() and not a.owned(), "the new holder owns it, the old one does not")
    t2 = fence(rb, name)
    check(t2 > token, "LOCK.STATE shows a higher fencing token for the new holder", (token, t2))
    try:
        a.release()
        check(False, "releasing a lock released already raises LockError")
    except redis.exceptions.LockError:
        check(True, "releasing a lock released already raises LockError")
    b.release()
    check(not b.locked() and ra.get(name) is None and ra.pttl(name) == -2,
          "released: not locked(), GET nil, PTTL -2")
    with ra.lock(name, timeout=5, blocking_timeout=2) as held:
        check(held.owned(), "the lock as a context manager")
    check(not ra.lock(name).locked(), "... released when the block ends")


def takeover():
    name = f"short-{run}"
    a = ra.lock(name, timeout=2)
    check(a.acquire(blocking=False), "a lock with timeout=2 taken (and never released)")
    b = rb.lock(name, timeout=2)
    t0 = time.monotonic()
    ok = b.acquire(blocking_timeout=10)
    took = time.monotonic() - t0
    print(f"# {setup}: the contender took the lock over {took:.2f} s after it began trying")
    check(ok is True, "the contender takes it over once the lease ran out", took)
    # no early takeover; a takeover waits for a whole lease seen unchanged
    check(1.8 <= took <= 6.0, "... after the lease (2 s), within about two leases", round(took, 2))
    check(b.owned() and not a.owned(), "the contender owns it now")
    # release last: it forgets the token, extend and reacquire need it
    for what, op in (("extend", lambda: a.extend(1)), ("reacquire", a.reacquire),
                     ("release", a.release)):
        try:
            op()
            check(False, f"{what} by the holder taken over raises LockNotOwnedError")
        except LockNotOwnedError:
            check(True, f"{what} by the holder taken over raises LockNotOwnedError")
        except redis.exceptions.LockError as e:
            check(False, f"{what} by the holder taken over raises LockNotOwnedError", e)
    b.release()


def operator_del():
    name = f"stuck-{run}"
    a = ra.lock(name, timeout=30)
    check(a.acquire(blocking=False), "a lock for an operator to delete")
    check(rb.delete(name, f"nothing-{run}") == 1, "DEL of a held and a free lock answers 1")
    check(not a.locked(), "deleted: not locked()")
    try:
        a.release()
        check(False, "its holder's release then raises LockNotOwnedError")
    except LockNotOwnedError:
        check(True, "its holder's release then raises LockNotOwnedError")
    a2 = ra.lock(name, timeout=30)
    check(a2.acquire(blocking=False), "the lock is free for the next")
    check(ra.pexpire(name, 60000) is True and 50000 < ra.pttl(name) <= 60000,
          "PEXPIRE renews whatever holds it with that lease", ra.pttl(name))
    check(ra.expire(name, 20) is True and 15000 < ra.pttl(name) <= 20000,
          "EXPIRE in seconds", ra.pttl(name))
    a2.release()
    check(ra.pexpire(name, 5000) is False, "PEXPIRE of a free lock answers 0")
    check(ra.delete(name) == 0, "DEL of a free lock answers 0")


def scripts():
    bodies = {"release": Lock.LUA_RELEASE_SCRIPT, "extend": Lock.LUA_EXTEND_SCRIPT,
              "reacquire": Lock.LUA_REACQUIRE_SCRIPT}
    for what, body in bodies.items():
        sha = hashlib.sha1(body.encode()).hexdigest()
        got = ra.script_load(body)
        check(got == sha, f"SCRIPT LOAD of redis-py's {what} script answers its SHA1", got)
        check(ra.script_exists(sha, sha.upper(), "0" * 40) == [True, True, False],
              f"SCRIPT EXISTS knows the {what} script (any case), not another")
    check(ra.script_flush() is True and ra.script_exists(hashlib.sha1(
        Lock.LUA_RELEASE_SCRIPT.encode()).hexdigest()) == [True],
        "SCRIPT FLUSH answers OK and forgets no known script")
    name = f"eval-{run}"
    a = ra.lock(name, timeout=10)
    a.acquire(blocking=False)
    check(ra.eval(Lock.LUA_RELEASE_SCRIPT, 1, name, b"not-the-token") == 0,
          "EVAL of the release script with another value: 0, still held")
    check(ra.eval(Lock.LUA_RELEASE_SCRIPT, 1, name, a.local.token) == 1 and not a.locked(),
          "EVAL of the release script with the holder's value: 1, released")
    try:
        ra.evalsha("0" * 40, 0)
        check(False, "EVALSHA of an unknown script: NOSCRIPT")
    except NoScriptError:
        check(True, "EVALSHA of an unknown script: NOSCRIPT")
    other = ra.register_script("return redis.call('get', KEYS[1])")
    ra.set(name, "mine", nx=True, px=10000)
    check(other(keys=[name]) == b"mine",
          "a script no library uses, through redis-py's Script (EVALSHA, NOSCRIPT, SCRIPT "
          "LOAD, EVALSHA): it runs, GET inside it reads the lock's value")
    check(ra.eval("return {1, 'two', {ok='x'}}", 0) == [1, b"two", b"x"],
          "EVAL of a script of its own: Lua's values as Redis converts them")
    ra.delete(name)


def lock_commands():
    """The key commands on a lock taken with LOCK.ACQUIRE, and LOCK.RELEASE
    by token on a library's detached lease."""
    name = f"session-{run}"
    holder = redis.Redis(port=port_a, socket_timeout=30, single_connection_client=True)
    token = holder.execute_command("LOCK.ACQUIRE", name, 10000)
    got = rb.get(name)
    check(got is not None and 0 < rb.pttl(name) <= 10000,
          "GET and PTTL show a lock taken with LOCK.ACQUIRE", got)
    check(rb.delete(name) == 1, "DEL takes a LOCK.ACQUIRE lock away")
    try:
        holder.execute_command("LOCK.RENEW", name)
        check(False, "its holding connection is then told LOST forced")
    except ResponseError as e:
        check(str(e) == "LOST forced", "its holding connection is then told LOST forced", str(e))
    holder.close()
    name = f"detached-{run}"
    a = ra.lock(name, timeout=10)
    a.acquire(blocking=False)
    token = fence(ra, name)
    check(rb.execute_command("LOCK.RELEASE", name, token) == 1 and not a.locked(),
          "LOCK.RELEASE name token (another connection) ends a library's lock")
    try:
        a.release()
        check(False, "... and its release then raises LockNotOwnedError")
    except LockNotOwnedError:
        check(True, "... and its release then raises LockNotOwnedError")
    # connections that close while their command waits for the store
    for cmd in ([b"DEL", b"gone-1", b"gone-2", b"gone-3"],
                [b"SET", f"gone-{run}".encode(), b"v", b"NX", b"PX", b"5000"],
                [b"EVALSHA", Lock.lua_release.sha.encode(), b"1", b"gone-1", b"v"]):
        s = socket.create_connection(("127.0.0.1", port_a))
        s.sendall(b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in cmd))
        s.close()
    check(ra.ping() and ra.delete(f"gone-{run}") in (0, 1),
          "connections closed while DEL, SET and EVALSHA run: the gateway goes on")


def asyncio_lock():
    import asyncio
    import redis.asyncio as aioredis

    async def main():
        r = aioredis.Redis(port=port_a)
        lock = r.lock(f"aio-{run}", timeout=5)
        got = [await lock.acquire(blocking_timeout=2), await lock.owned(),
               await lock.extend(2), await r.pttl(f"aio-{run}")]
        await lock.release()
        got.append(await lock.locked())
        await r.close()
        return got

    got = asyncio.run(main())
    check(got[:3] == [True, True, True] and 6000 < got[3] <= 7000 and got[4] is False,
          "redis.asyncio's Lock: acquire, owned, extend, release", got)


def ran_out():
    """A lease that ran out shows as no key on the replica that took it,
    as Redis's key would have expired (another replica shows it until it
    has watched it for a lease: the takeover rule)."""
    name = f"ran-out-{run}"
    a = ra.lock(name, timeout=1)
    check(a.acquire(blocking=False), "a lock with timeout=1 taken")
    time.sleep(1.3)
    check(ra.get(name) is None and ra.pttl(name) == -2 and not a.locked(),
          "its lease ran out: GET nil, PTTL -2, not locked()", (ra.get(name), ra.pttl(name)))


def nothing():
    name = f"never-{run}"
    check(ra.get(name) is None and ra.pttl(name) == -2 and ra.ttl(name) == -2,
          "a lock never taken: GET nil, PTTL -2, TTL -2")


for part in (nothing, ran_out, basics, scripts, operator_del, lock_commands, asyncio_lock, takeover):
    try:
        part()
    except Exception as e:  # a failure, named: never a traceback only
        check(False, f"{part.__name__} ran to its end", f"{type(e).__name__}: {e}")
sys.exit(1 if failed else 0)
