#!/bin/sh
# reentrant_lock: a Redisson-style reentrant lock (a hash on the lock key,
# holder -> hold count; PUBLISH on release, SUBSCRIBE to wait), written for
# the test as Redisson's scripts do it, run by redis-py (reentrant_lock.py,
# Debian's python3-redis) against the real binary ($LG_BIN) (issue 28) on:
#   embedded   one gateway on the embedded store
#   moto-pair  two gateways on one table of moto ($LG_MOTO): holder 1 and
#              the subscriber on a, holder 2 on b
# Then redis-cli: a message published on a does not reach a subscriber on
# b (what holds across replicas: waiters poll).
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
# Prints `ok <what>` / `not ok <what>`; exits 1 when any check failed.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3 # Debian's, where python3-redis installs
. "$(dirname "$0")/../support/gw.sh"
gw_script_init reentrant_lock


lib() { # lib SETUP PORT_A PORT_B
	LG_SETUP=$1 LG_PORT_A=$2 LG_PORT_B=$3 timeout -k 5 120 "$py" "$here/reentrant_lock.py" \
		>"$work/py-$1.out" 2>&1
	rc=$?
	cat "$work/py-$1.out"
	grep -q '^not ok' "$work/py-$1.out" && failed=1
	if [ $rc != 0 ] && ! grep -q '^not ok' "$work/py-$1.out"; then
		say "not ok" "$1: reentrant_lock.py exited $rc"
		sed 's/^/# /' "$work/py-$1.out"
	fi
}

if [ -z "${LG_MOTO:-}" ]; then
	say "not ok" "moto setups: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 1
fi
gw_start embedded
gw_start a "lg-rlock-$$"
gw_start b "lg-rlock-$$"
lib embedded "$port_embedded" "$port_embedded"
lib moto-pair "$port_a" "$port_b"

# across replicas: a subscriber on b hears nothing of a PUBLISH on a
(printf 'SUBSCRIBE far\n'; sleep 1.5) | timeout 5 redis-cli -p "$port_b" >"$work/far.out" 2>&1 &
sub=$!
sleep 0.5
n=$(redis-cli -p "$port_a" PUBLISH far hello)
wait $sub
got="$n/$(tr '\n' ' ' <"$work/far.out")"
[ "$got" = "0/subscribe far 1 " ] &&
	say ok "moto-pair: PUBLISH on a reaches no subscriber on b (0; b's subscriber sees only its subscribe)" ||
	say "not ok" "moto-pair: PUBLISH across replicas: $got"

for g in embedded a b; do
	eval "p=\$pid_$g"
	kill -TERM "$p"
	wait "$p" 2>/dev/null
	rc=$?
	[ $rc = 0 ] && say ok "gateway $g exits 0 at SIGTERM" || {
		say "not ok" "gateway $g exits $rc at SIGTERM"
		sed 's/^/# /' "$work/gw-$g.log"
	}
done
pids=
exit $failed
