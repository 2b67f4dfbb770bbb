#!/bin/sh
# stress_short: tests/stress/stress.py (what make stress runs for 60 s) for
# about 15 s on the suite's serialized moto, twice: in per-lease mode (the
# default, --heartbeat lease), then with one heartbeat per replica
# (STRESS_HEARTBEAT=session: every gateway --heartbeat replica on an even
# seed, the rollout's middle state, both modes on the table, on an odd one;
# its files in $LG_WORK/session). Each run: 3 gateways on one fresh table,
# 9 clients contending for 3 locks (and 3 more locking them with Lua
# scripts, 3 Redis readers with LOCK.ACQUIRE ... SHARED, 3 PostgreSQL
# clients on their own keys and 2 more holding those keys shared, 4 Redis
# clients of a semaphore of 2), and each fault once on the gateway
# serving the most holds (SIGSTOP past a lease then SIGCONT, SIGKILL and a
# restart, DynamoDB cut off for 2 leases through ddb_proxy.py), and a
# rolling restart (each gateway drained with SIGTERM, --drain-grace, and
# started again: clients adopt their leases elsewhere). Its "ok" /
# "not ok" lines: strictly rising tokens, 0 overlapping holds, fenced
# refusals only for holds told of their loss, every client served, the
# recorded history linearizable (tests/stress/lincheck.py), the session
# heartbeats each gateway's mode says; and first, --selftest: the same
# checks fail on crafted histories, and release_after_stall.py.
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
set -u
[ -n "${LG_MOTO:-}" ] || {
	echo "not ok stress_short: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 1
}
/usr/bin/python3 -c 'import redis, psycopg2' 2>/dev/null || {
	echo "not ok stress_short: redis-py or psycopg2 is missing for /usr/bin/python3: apt-get install python3-redis python3-psycopg2"
	exit 1
}
# The checks themselves first: they must fail on crafted violations.
/usr/bin/python3 "$(dirname "$0")/../stress/stress.py" --selftest || exit 1
# A RELEASE read by a gateway continued after a stall past its lease, once
# the lock was taken over elsewhere: -LOST, never 1 (3 trials, ~4 s).
/usr/bin/python3 "$(dirname "$0")/../stress/release_after_stall.py" || rc=1
# The history checker (tests/stress/lincheck.py) is enforced here as in
# make stress: tests/integration/lincheck.sh tests the checker itself.
export STRESS_SECONDS=${STRESS_SECONDS:-15} STRESS_QUIET=${STRESS_QUIET:-1}
STRESS_HEARTBEAT=lease /usr/bin/python3 "$(dirname "$0")/../stress/stress.py" || rc=1
mkdir -p "$LG_WORK/session"
LG_WORK="$LG_WORK/session" STRESS_HEARTBEAT=session \
	/usr/bin/python3 "$(dirname "$0")/../stress/stress.py" || rc=1
exit ${rc:-0}
