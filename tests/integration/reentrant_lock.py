"""A Redisson-style reentrant lock (a hash on the lock key: holder ->
hold count, a wake-up channel published at release), written for this test
as Redisson's scripts do it (no Redisson here), run by redis-py (Debian's
python3-redis, /usr/bin/python3) through EVAL/EVALSHA against leasegate
(../reentrant_lock.sh). Holder 1 on LG_PORT_A, holder 2 on LG_PORT_B (the
same gateway, or another replica on the same table); the subscriber on
LG_PORT_A, where the release runs. Prints `ok <what>` / `not ok <what>`;
exits 1 when a check failed."""
import os
import sys
import time

import redis

setup = os.environ.get("LG_SETUP", "embedded")
a = redis.Redis(port=int(os.environ["LG_PORT_A"]), socket_timeout=20)
b = redis.Redis(port=int(os.environ.get("LG_PORT_B", os.environ["LG_PORT_A"])), socket_timeout=20)
failed = False


def check(cond, what, detail=None):
    global failed
    print("%s %s: %s%s" % ("ok" if cond else "not ok", setup, what,
                           "" if cond or detail is None else " (%r)" % (detail,)))
    if not cond:
        failed = True


# tryLock: KEYS[1] lock, ARGV[1] lease ms, ARGV[2] holder: nil when taken
# (or taken again), else the PTTL of the holder's lease
LOCK = """
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
"""
# unlock: KEYS[1] lock, KEYS[2] channel, ARGV[1] message, ARGV[2] lease
# ms, ARGV[3] holder: nil not held, 0 still held (count > 0), 1 released
UNLOCK = """
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
"""
run = "%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000)
name, chan = "rlock-%s" % run, "rlock-chan-%s" % run
h1, h2 = "uuid-1:%s" % run, "uuid-2:%s" % run
lock_a, unlock_a = a.register_script(LOCK), a.register_script(UNLOCK)
lock_b, unlock_b = b.register_script(LOCK), b.register_script(UNLOCK)

sub = a.pubsub()
sub.subscribe(chan)
first = sub.get_message(timeout=5)
# a waiter of the other replica subscribes there (across replicas, the
# messages reach it through the table: pubsub-poll)
sub_b = b.pubsub()
sub_b.subscribe(chan)
check(sub_b.get_message(timeout=5) is not None, "SUBSCRIBE on B confirmed")
check(first is not None and first["type"] == "subscribe", "SUBSCRIBE confirmed", first)

check(lock_a(keys=[name], args=[20000, h1]) is None, "holder 1 takes the lock")
check(lock_a(keys=[name], args=[20000, h1]) is None, "holder 1 takes it again (reentrant)")
check(a.hget(name, h1) == b"2" and b.hlen(name) == 1, "HGET/HLEN: one holder, count 2",
      (a.hget(name, h1), b.hlen(name)))
check(b.type(name) == b"hash" and b.hexists(name, h1) == 1, "TYPE hash, HEXISTS from B")
try:
    got = b.get(name)
except redis.ResponseError as e:
    got = str(e)
check(str(got).startswith("WRONGTYPE"), "GET of the hash from B: WRONGTYPE, as Redis", got)
fence1 = dict(zip(*[iter(a.execute_command("LOCK.STATE", name))] * 2)).get(b"fencing-token")
pttl = lock_b(keys=[name], args=[20000, h2])
check(isinstance(pttl, int) and 15000 < pttl <= 20000, "holder 2 is refused with the PTTL", pttl)
check(unlock_b(keys=[name, chan], args=["free", 20000, h2]) is None,
      "holder 2 cannot unlock holder 1's lock")
check(unlock_a(keys=[name, chan], args=["free", 20000, h1]) == 0, "one unlock: still held (0)")
check(sub.get_message(timeout=0.5) is None, "no message while it is still held")
check(lock_b(keys=[name], args=[20000, h2]) is not None, "holder 2 still refused")
check(unlock_a(keys=[name, chan], args=["free", 20000, h1]) == 1, "second unlock releases (1)")
check(b.exists(name) == 0, "the key is gone")
msg = sub.get_message(timeout=5)
check(msg is not None and msg["type"] == "message" and msg["data"] == b"free",
      "the release's PUBLISH reaches the subscriber after the commit", msg)
msg = sub_b.get_message(timeout=5)
check(msg is not None and msg["type"] == "message" and msg["data"] == b"free",
      "... and the waiter subscribed on B (the wake-up)", msg)
check(lock_b(keys=[name], args=[20000, h2]) is None, "holder 2 takes the lock")
fence2 = dict(zip(*[iter(a.execute_command("LOCK.STATE", name))] * 2)).get(b"fencing-token")
check(fence1 is not None and fence2 is not None and int(fence2) > int(fence1),
      "a new holder gets the next fencing token", (fence1, fence2))
check(lock_b(keys=[name], args=[20000, h2]) is None and b.hget(name, h2) == b"2",
      "holder 2 takes it again: no new fence needed, count 2")
fence3 = dict(zip(*[iter(a.execute_command("LOCK.STATE", name))] * 2)).get(b"fencing-token")
check(fence3 == fence2, "a reentrant hold keeps the fencing token", (fence2, fence3))

# a script that fails publishes nothing and writes nothing
try:
    a.eval("redis.call('publish', KEYS[2], 'x') redis.call('hset', KEYS[1], 'f', 'v') "
           "return redis.call('nosuchcommand')", 2, name + "-x", chan)
    check(False, "a failing script answers an error")
except redis.ResponseError:
    check(True, "a failing script answers an error")
check(sub.get_message(timeout=0.5) is None and a.exists(name + "-x") == 0,
      "a failing script publishes nothing and writes nothing")
check(sub_b.get_message(timeout=0.5) is None, "... nothing reaches B either")
# a hash key left without an expiry is refused
try:
    a.eval("return redis.call('hset', KEYS[1], 'f', 'v')", 1, name + "-y")
    check(False, "HSET of a new key without PEXPIRE is refused")
except redis.ResponseError as e:
    check("no expiry" in str(e), "HSET of a new key without PEXPIRE is refused: %s" % str(e)[:60])
here = 2 if setup == "embedded" else 1  # B's subscriber is on A's gateway then
check(a.publish(chan, "direct") == here and sub.get_message(timeout=5)["data"] == b"direct",
      "PUBLISH from a client reaches the subscribers of this replica (answers how many)")
msg = sub_b.get_message(timeout=5)
check(msg is not None and msg["data"] == b"direct", "... and B's", msg)
time.sleep(0.5)  # several reads of the channel on both replicas
check(sub.get_message(timeout=0.1) is None and sub_b.get_message(timeout=0.1) is None,
      "each message reached each subscriber once")
sub.unsubscribe(chan)
sub_b.unsubscribe(chan)
sys.exit(1 if failed else 0)
