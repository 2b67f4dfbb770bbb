#!/bin/sh
# make stress: the contention and fault-injection safety checks of
# tests/stress/stress.py (3 gateways on one fresh table, 9 clients, SIGSTOP,
# SIGKILL and a DynamoDB blackhole of the holder's gateway; 0 overlapping
# holds and strictly rising tokens), once per heartbeat mode (--heartbeat
# lease, replica, and mixed: both on one table; STRESS_HEARTBEATS picks
# them, "lease replica mixed" by default), on the serialized moto
# (tests/moto_serial.py, signature checking on, keys from
# tests/moto_setup.py) that this script starts as tests/run-integration.sh
# does. The STRESS_* variables of stress.py pass through (STRESS_SECONDS,
# default 60). Before it: stress.py --selftest (the checks fail on crafted
# violations) and release_after_stall.py (a RELEASE read by a gateway
# continued after a stall past its lease answers -LOST). Gateway and proxy
# logs are kept in $BUILD/stress/. Then tests/stress/fenced.py: fenced
# writes (LOCK.TRANSACT) under SIGSTOP and SIGKILL of two gateways; no
# append of a superseded holder, tokens only rising in the list. stress.py
# also records every operation of its Redis and PostgreSQL clients
# ($BUILD/stress/stress-history.jsonl) and checks it with
# tests/stress/lincheck.py; so does tests/stress/xact_commit.py
# ($BUILD/stress/xact-history.jsonl). Exits non-zero on any violation.
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/$BUILD/stress"
rm -rf "$work"
mkdir -p "$work"
. "$root/tests/support/moto.sh"
trap '[ -z "${moto_pid:-}" ] || { kill $moto_pid; wait $moto_pid; } 2>/dev/null' EXIT
trap 'exit 1' HUP INT TERM
moto_start "$root" "$work" || { echo "$moto_error"; exit 1; }
export LG_BIN="$root/$BUILD/leasegate" LG_WORK="$work"
/usr/bin/python3 -c 'import redis, psycopg2' 2>/dev/null || {
	echo "redis-py or psycopg2 is missing for /usr/bin/python3: apt-get install python3-redis python3-psycopg2"
	exit 1
}
# A bound on the whole run: the clients' time, the faults' (each at least
# once), and the last waits.
rc=0
/usr/bin/python3 "$root/tests/stress/stress.py" --selftest || rc=1
timeout -k 10 60 /usr/bin/python3 "$root/tests/stress/release_after_stall.py" || rc=1
# In each heartbeat mode (STRESS_HEARTBEATS, default all three): per lease
# (its files in $work), one per replica (in $work/replica) and the
# rollout's middle state, both on the table (in $work/mixed).
for mode in ${STRESS_HEARTBEATS:-lease replica mixed}; do
	dir="$work"
	[ "$mode" = lease ] || { dir="$work/$mode" && mkdir -p "$dir"; }
	LG_WORK="$dir" STRESS_HEARTBEAT=$mode timeout -k 10 $((${STRESS_SECONDS:-60} + 120)) \
		/usr/bin/python3 "$root/tests/stress/stress.py" || rc=1
done
# The history checker: its self-test, then the PostgreSQL xact-lock
# scenario (COMMIT on replica A, then a try on replica B, 40 rounds; its
# history checked by tests/stress/lincheck.py).
/usr/bin/python3 "$root/tests/stress/lincheck.py" --selftest || rc=1
timeout -k 10 120 /usr/bin/python3 "$root/tests/stress/xact_commit.py" || rc=1
# Fenced writes: two gateways, one list appended to under LOCK.TRANSACT,
# SIGSTOP and SIGKILL (tests/stress/fenced.py; FENCED_SECONDS, default 40).
/usr/bin/python3 "$root/tests/stress/fenced.py" --selftest || rc=1
timeout -k 10 $((${FENCED_SECONDS:-40} + 90)) /usr/bin/python3 "$root/tests/stress/fenced.py" || rc=1
exit $rc
