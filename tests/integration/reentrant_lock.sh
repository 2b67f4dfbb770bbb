#!/bin/sh
# reentrant_lock: a Redisson-style reentrant lock (a hash on the lock key,
# holder -> hold count; PUBLISH on release, SUBSCRIBE to wait), written for
# the test as Redisson's scripts do it, run by redis-py (reentrant_lock.py,
# Debian's python3-redis) against the real binary ($LG_BIN) (issue 28) on:
#   embedded   one gateway on the embedded store
#   moto-pair  two gateways on one table of moto ($LG_MOTO): holder 1 and
#              the subscriber on a, holder 2 on b
# Then: messages published with redis-cli on a reach a subscriber on b, in
# order (through the table, --pubsub-poll); a gateway c started with
# --pubsub-poll 0 neither hears nor is heard.
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

# across replicas (RESP2): a burst of five and a binary message published
# with redis-cli on a reach a subscriber on b in order; a gateway started
# with --pubsub-poll 0 on the same table neither hears nor is heard. The
# subscribers (redis-py) write each message as it comes: channel, then the
# message in hex.
gw_start c "lg-rlock-$$" --pubsub-poll 0
subscriber() { # subscriber PORT SECONDS WANT OUT: until WANT messages or SECONDS
	timeout -k 2 $(($2 + 5)) "$py" -c '
import sys, time, redis
port, secs, want = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
p = redis.Redis(port=port, socket_timeout=secs + 2).pubsub()
p.subscribe("far")
print("subscribed", flush=True)
got, end = 0, time.monotonic() + secs
while got < want and time.monotonic() < end:
    m = p.get_message(timeout=0.1)
    if m and m["type"] == "message":
        print(m["channel"].decode(), m["data"].hex(), flush=True)
        got += 1
' "$1" "$2" "$3" >"$4" 2>&1
}
subscriber "$port_b" 5 6 "$work/far.out" &
sub=$!
subscriber "$port_c" 2 99 "$work/far-c.out" &
subc=$!
for f in far far-c; do
	i=0
	until grep -q subscribed "$work/$f.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && break
		sleep 0.05
	done
done
sleep 0.3 # the channel's first read on b: where its log stands
# the five pipelined on one connection: their appends must not overtake
# one another (one append of a channel at a time)
n=$(printf 'PUBLISH far m%s\n' 1 2 3 4 5 | redis-cli -p "$port_a" | tr -d '\n')
n="$n$(printf 'x\001\377y' | redis-cli -p "$port_a" -x PUBLISH far)$(redis-cli -p "$port_c" PUBLISH far from-c)"
wait $sub $subc
got=$(tr '\n' ' ' <"$work/far.out")
want="subscribed far 6d31 far 6d32 far 6d33 far 6d34 far 6d35 far 7801ff79 "
[ "$n" = 0000001 ] && [ "$got" = "$want" ] &&
	say ok "moto-pair: PUBLISH on a (5 and a binary one; each answers 0, none here) reaches b's subscriber in order, once; c's (--pubsub-poll 0; 1, its own subscriber) does not" ||
	say "not ok" "moto-pair: PUBLISH across replicas: answers $n (want 0000001), b's subscriber got: $got (want $want)"
got=$(redis-cli -p "$port_a" INFO pubsub | grep -E '^(sent_to_table|send_failed):' | tr -d '\r' | tr '\n' ' ')/$(redis-cli -p "$port_b" INFO pubsub | grep -E '^received_from_table:' | tr -d '\r')
case $got in
"sent_to_table:"*" send_failed:0 /received_from_table:"[1-9]*) say ok "moto-pair: INFO pubsub counts them: $got" ;;
*) say "not ok" "moto-pair: INFO pubsub: $got" ;;
esac
got=$(tr '\n' ' ' <"$work/far-c.out")
[ "$got" = "subscribed far 66726f6d2d63 " ] &&
	say ok "moto-pair: a gateway with --pubsub-poll 0 hears no other replica, only its own" ||
	say "not ok" "moto-pair: --pubsub-poll 0: $got"

for g in embedded a b c; do
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
