"""redis-py's pipeline() against leasegate (../multi_clients.sh): the
transactional pipeline (MULTI/EXEC, the default), the non-transactional
one, WATCH with WatchError, EXECABORT, DISCARD, and a command outside the
lock keyspace refused at queue time. Connection A on LG_PORT_A, B (the
other writer) on LG_PORT_B: the same gateway, or another replica on the
same table. Debian's python3-redis (/usr/bin/python3). Prints `ok <what>`
/ `not ok <what>`; exits 1 when a check failed."""
import os
import sys
import time

import redis

setup = os.environ.get("LG_SETUP", "embedded")
port_a = int(os.environ["LG_PORT_A"])
port_b = int(os.environ.get("LG_PORT_B", port_a))
failed = False
run = "%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000)


def check(cond, what, detail=None):
    global failed
    print("%s %s: %s%s" % ("ok" if cond else "not ok", setup, what,
                           "" if cond or detail is None else " (%r)" % (detail,)))
    if not cond:
        failed = True


def key(name):
    return "mc-%s-%s" % (name, run)


a = redis.Redis(port=port_a, socket_timeout=20)
b = redis.Redis(port=port_b, socket_timeout=20)

# the default pipeline is transactional: MULTI, the commands, EXEC
k = key("tx")
got = a.pipeline().set(k, "me", nx=True, px=20000).get(k).pttl(k).execute()
check(got[0] is True and got[1] == b"me" and 15000 < got[2] <= 20000,
      "pipeline(): SET NX PX, GET, PTTL in one MULTI/EXEC", got)
got = b.pipeline().set(k, "you", nx=True, px=20000).get(k).execute()
check(got == [None, b"me"], "pipeline() from B: SET NX refused, GET shows A's value", got)

# non-transactional: the commands one by one, same replies
k2 = key("notx")
got = a.pipeline(transaction=False).set(k2, "me", nx=True, px=20000).get(k2).execute()
check(got == [True, b"me"], "pipeline(transaction=False)", got)

# a release by compare-and-delete under WATCH (redis-py's documented pattern)
def release_if(conn, name, value):
    with conn.pipeline() as p:
        p.watch(name)
        if p.get(name) != value:
            p.unwatch()
            return False
        p.multi()
        p.delete(name)
        return p.execute() == [1]


check(not release_if(b, k, b"you"), "WATCH/GET/UNWATCH: B does not release A's lock")
check(a.get(k) == b"me", "A's lock still held", a.get(k))
check(release_if(a, k, b"me"), "WATCH/GET/MULTI/DEL/EXEC: A releases its lock")
check(b.get(k) is None, "the lock is gone for B", b.get(k))

# a WATCH broken by another connection's write (on the other replica in
# the pair setup): EXEC answers nil, redis-py raises WatchError, and the
# queued write did not happen
k3 = key("watch")
p = a.pipeline()
p.watch(k3)
check(p.get(k3) is None, "WATCH then GET: free")
check(b.set(k3, "b", nx=True, px=20000) is True, "B takes the watched key")
p.multi()
p.set(k3, "a", px=20000)
try:
    p.execute()
    check(False, "EXEC after the watched key changed raises WatchError")
except redis.WatchError:
    check(True, "EXEC after the watched key changed raises WatchError")
p.reset()
check(a.get(k3) == b"b", "the queued SET did not run: B's value stays", a.get(k3))

# WATCH unchanged: EXEC runs
k4 = key("watch-ok")
with a.pipeline() as p:
    p.watch(k4)
    p.multi()
    p.set(k4, "a", nx=True, px=20000)
    got = p.execute()
check(got == [True], "WATCH on an unchanged key: EXEC runs", got)

# an expiry renewed by B between WATCH and EXEC breaks the WATCH too
with a.pipeline() as p:
    p.watch(k4)
    b.pexpire(k4, 30000)
    p.multi()
    p.delete(k4)
    try:
        p.execute()
        check(False, "a PEXPIRE from B breaks A's WATCH")
    except redis.WatchError:
        check(True, "a PEXPIRE from B breaks A's WATCH")
check(a.get(k4) == b"a", "and the DEL did not run", a.get(k4))

# a command outside the lock keyspace: refused at queue time, EXEC aborts
# and runs nothing
k5 = key("abort")
p = a.pipeline()
p.set(k5, "x", nx=True, px=20000)
p.execute_command("LOCK.ACQUIRE", k5, 5000)
try:
    p.execute()
    check(False, "a LOCK.ACQUIRE queued: EXECABORT")
except redis.ResponseError as e:
    check("EXECABORT" in str(e) or "lock.acquire" in str(e).lower(),
          "a LOCK.ACQUIRE queued: the transaction aborts (%s)" % str(e)[:100], str(e))
check(a.get(k5) is None, "nothing of the aborted transaction ran", a.get(k5))

# raw: the queue-time error names the command; DISCARD forgets the queue
c = a.connection_pool.get_connection("x")
c.send_command("MULTI")
check(c.read_response() == b"OK", "MULTI answers OK")
c.send_command("SET", k5, "x", "NX", "PX", "20000")
check(c.read_response() == b"QUEUED", "SET is QUEUED")
c.send_command("ZADD", k5, "1", "m")
try:
    c.read_response()
    check(False, "ZADD is refused at queue time")
except redis.ResponseError as e:
    check("zadd" in str(e).lower(), "ZADD is refused at queue time, named: %s" % str(e)[:80], str(e))
c.send_command("DISCARD")
check(c.read_response() == b"OK", "DISCARD answers OK")
c.send_command("EXEC")
try:
    c.read_response()
    check(False, "EXEC after DISCARD")
except redis.ResponseError as e:
    check("EXEC without MULTI" in str(e), "EXEC after DISCARD: EXEC without MULTI", str(e))
a.connection_pool.release(c)
check(a.get(k5) is None, "the discarded SET did not run", a.get(k5))

# a runtime error of one command does not undo the others (Redis's rule)
k6 = key("partial")
got = a.pipeline().set(k6, "x", nx=True, px=20000).set(key("bad"), "y", px=999999999999) \
    .get(k6).execute(raise_on_error=False)
check(got[0] is True and isinstance(got[1], redis.ResponseError) and got[2] == b"x",
      "a command that fails inside EXEC leaves the others applied", got)

# the keyspace commands outside MULTI (EXISTS, TYPE, MGET, PEXPIRETIME,
# EXPIRETIME), from B, on keys A holds: a lock taken by value and a lease
# A's connection holds with LOCK.ACQUIRE
try:
    k7, k8, k9 = key("ex1"), key("ex2"), key("ex3")
    check(a.set(k7, "v7", nx=True, px=20000) is True, "A takes a lock by value")
    check(a.execute_command("LOCK.ACQUIRE", k8, 20000) > 0, "A's connection takes a lease (LOCK.ACQUIRE)")
    got = b.exists(k7, k8, k9, k7)
    check(got == 3, "EXISTS from B: both held keys, one twice, the free one not", got)
    got = [b.type(k7), b.type(k9)]
    check(got == [b"string", b"none"], "TYPE from B: string / none", got)
    got = b.mget(k7, k9)
    check(got == [b"v7", None], "MGET from B: the value and nil", got)
    now_ms = int(time.time() * 1000)
    got = b.execute_command("PEXPIRETIME", k7)
    check(now_ms + 10000 < got <= now_ms + 21000, "PEXPIRETIME from B: the lease's end", got)
    check(b.execute_command("EXPIRETIME", k9) == -2, "EXPIRETIME of a free key: -2")
except redis.RedisError as e:
    check(False, "EXISTS/TYPE/MGET/PEXPIRETIME/EXPIRETIME outside MULTI", str(e))

# SET's other forms (XX, GET, KEEPTTL, PXAT, no NX), PEXPIRE's options and
# MSET/MSETNX outside scripts run as a script's would, one commit each; the
# other connection (another replica in the pair) sees what they did
def token(conn, name):
    st = conn.execute_command("LOCK.STATE", name)
    st = dict(zip(st[::2], st[1::2])) if isinstance(st, list) else st
    return st[b"fencing-token"] if st else None


try:
    k10, k11, k12, k13 = key("setx"), key("ms1"), key("ms2"), key("ms3")
    check(b.set(k10, "x1", xx=True, px=20000) is None and a.exists(k10) == 0,
          "SET XX of a free key from B: nil, and A sees no key")
    check(b.set(k10, "x1", px=20000) is True and a.get(k10) == b"x1",
          "SET PX without NX from B takes the free key; A reads its value")
    t1 = token(a, k10)
    got = a.set(k10, "x2", xx=True, keepttl=True, get=True)
    check(got == b"x1", "SET XX KEEPTTL GET from A: the old value", got)
    got = (b.get(k10), b.pttl(k10), token(b, k10))
    check(got[0] == b"x2" and 10000 < got[1] <= 20000 and got[2] > t1,
          "... B reads the new value, the TTL kept, and a higher fencing token (a new holder)",
          (got, t1))
    pxat = int(time.time() * 1000) + 30000
    check(b.set(k10, "x2", pxat=pxat) is True, "SET PXAT from B")
    got = a.execute_command("PEXPIRETIME", k10)
    check(got == pxat, "... A's PEXPIRETIME is the time given", (got, pxat))
    got = [b.execute_command("PEXPIRE", k10, 5000, "GT"),
           b.execute_command("PEXPIRE", k10, 60000, "GT")]
    check(got == [0, 1] and 50000 < a.pttl(k10) <= 60000,
          "PEXPIRE GT from B: 0 for a shorter time, 1 for a longer; A reads the new TTL", got)
    err = None
    try:
        b.mset({k11: "m1", k12: "m2"})
    except redis.ResponseError as e:
        err = str(e)
    check(err is not None and "has no expiry" in err and a.exists(k11, k12) == 0,
          "MSET alone from B: the error that a key needs an expiry, nothing written", err)
    got = b.pipeline().mset({k11: "m1", k12: "m2"}).pexpire(k11, 20000) \
        .pexpire(k12, 20000).execute()
    check(got == [True, True, True] and a.mget(k11, k12) == [b"m1", b"m2"],
          "MSET then PEXPIRE in MULTI from B; A reads both", got)
    got = a.pipeline().msetnx({k12: "n2", k13: "n3"}).pexpire(k13, 20000).execute()
    check(got == [False, False] and b.exists(k13) == 0 and b.get(k12) == b"m2",
          "MSETNX in MULTI from A with one key held: 0, nothing written (B sees k3 free, "
          "k2 unchanged)", got)
    a.delete(k10, k11, k12)
except redis.RedisError as e:
    check(False, "SET's forms, PEXPIRE's options, MSET/MSETNX outside scripts", str(e))

sys.exit(1 if failed else 0)
