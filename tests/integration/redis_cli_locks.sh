#!/bin/sh
# redis_cli_locks: LOCK.* through redis-cli, as an operator would use it,
# against the real binary ($LG_BIN) on the embedded store: a holder's
# long-lived session (redis-cli reading a fifo), LOCK.STATE seen from other
# connections in RESP2 and RESP3, a waiter handed the lock, errors, and
# `redis-cli --pipe`. Prints `ok <n> <what>`; exits 1 at the first mismatch.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
work=$(mktemp -d "${LG_WORK:-/tmp}/redis_cli_locks.XXXXXX")
. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port)
"$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 --holder-label gw-cli \
	>"$work/leasegate.log" 2>&1 &
gw=$!
holder=
waiter=
cleanup() {
	exec 3>&- 2>/dev/null
	for p in $holder $waiter $gw; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

cli() { redis-cli -p "$port" "$@"; }

# reply ARGS...: one command's reply as redis-cli shows it to a person
# (--no-raw: nil is "(nil)", not an empty line), with its stderr and, when
# not 0, its exit status: a dead server or a refused connection never
# looks like a nil.
reply() {
	_out=$(cli --no-raw "$@" 2>&1)
	_rc=$?
	[ $_rc = 0 ] || _out="$_out (redis-cli exit status $_rc)"
	printf '%s' "$_out"
}

n=0
# check WHAT WANT GOT
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		printf -- '--- want:\n%s\n--- got:\n%s\n' "$2" "$3"
		echo "--- leasegate log:"
		cat "$work/leasegate.log"
		exit 1
	fi
}

# eventually WHAT WANT ARGS...: check, once `cli ARGS` answers WANT or 3 s
# have passed (a closed connection's release is asynchronous)
eventually() {
	what=$1 want=$2
	shift 2
	i=0
	while [ "$(cli "$@")" != "$want" ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.01
	done
	check "$what" "$want" "$(cli "$@")"
}

# waits (5 s at most) until FILE has at least N lines
await_lines() {
	i=0
	while [ "$(wc -l <"$1")" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -gt 500 ] && return 1
		sleep 0.01
	done
}

gw_ready "$port" || { echo "not ok 0 leasegate did not start"; cat "$work/leasegate.log"; exit 1; }

check "no item yet: nil" "(nil)" "$(reply LOCK.STATE nightly-report)"

# The holder: one redis-cli session fed line by line through a fifo.
mkfifo "$work/in"
: >"$work/out"
cli <"$work/in" >>"$work/out" 2>&1 &
holder=$!
exec 3>"$work/in"
echo "LOCK.ACQUIRE nightly-report 30000 HOLDER cron-1" >&3
await_lines "$work/out" 1
check "holder acquires: token 1" "1" "$(sed -n 1p "$work/out")"

check "LOCK.STATE from another connection, RESP2 flat pairs" "held
1
holder
cron-1
lease-ms
30000
fencing-token
1
mine
0
heartbeat
lease" "$(cli LOCK.STATE nightly-report)"

check "LOCK.STATE in RESP3 (-3), a map" "held 1
holder cron-1
lease-ms 30000
fencing-token 1
mine 0
heartbeat lease" "$(cli -3 LOCK.STATE nightly-report)"

check "another connection is refused: nil" "(nil)" "$(reply LOCK.ACQUIRE nightly-report 30000)"
check "WAIT 300 times out: nil" "(nil)" \
	"$(reply LOCK.ACQUIRE nightly-report 30000 WAIT 300)"

echo "LOCK.STATE nightly-report" >&3
await_lines "$work/out" 13
check "the holder sees mine 1" "mine
1" "$(sed -n 10,11p "$work/out")"

# A waiter in its own redis-cli, handed the lock when the holder releases.
cli LOCK.ACQUIRE nightly-report 30000 WAIT 0 HOLDER cron-2 >"$work/waiter" 2>&1 &
waiter=$!
i=0
until cli INFO leases | grep -q '^waits:1'; do
	i=$((i + 1))
	[ $i -gt 500 ] && break
	sleep 0.01
done
check "one waiter queued" "waits:1" "$(cli INFO leases | grep '^waits:' | tr -d '\r')"
echo "LOCK.RELEASE nightly-report" >&3
await_lines "$work/out" 14
check "the holder releases: 1" "1" "$(sed -n 14p "$work/out")"
wait "$waiter"
waiter=
check "the waiter was handed the lock: token 2" "2" "$(cat "$work/waiter")"
# its redis-cli has exited, so its lease went with the connection
eventually "released when the waiter's connection closed" "held 0
holder 
lease-ms 0
fencing-token 2
mine 0
heartbeat lease" -3 LOCK.STATE nightly-report

echo "LOCK.RELEASE nightly-report" >&3
await_lines "$work/out" 15
check "a second release: 0" "0" "$(sed -n 15p "$work/out")"
exec 3>&-
wait "$holder"
holder=

check "bad lease-ms" "ERR lease-ms must be an integer from 1000 to 86400000" \
	"$(cli LOCK.ACQUIRE nightly-report 5)"
check "unknown option" "ERR syntax error" "$(cli LOCK.ACQUIRE nightly-report 5000 NX)"
check "arity" "ERR wrong number of arguments for 'lock.state' command" "$(cli LOCK.STATE)"

# --pipe: RESP requests in one stream, then redis-cli's own ECHO marker.
resp() {
	printf '*%d\r\n' $#
	for a in "$@"; do printf '$%d\r\n%s\r\n' ${#a} "$a"; done
}
{
	resp LOCK.ACQUIRE p1 10000
	resp LOCK.ACQUIRE p2 10000 HOLDER bulk
	resp LOCK.STATE p1
	resp LOCK.RENEW p1
	resp LOCK.RELEASE p1
	resp LOCK.RELEASE p1
} >"$work/pipe"
out=$(cli --pipe <"$work/pipe" 2>&1)
rc=$?
check "--pipe: every reply, no error" "0 errors: 0, replies: 6" "$rc $(echo "$out" | tail -1)"
eventually "--pipe's p2 was released with its connection" "held 0
holder 
lease-ms 0
fencing-token 1
mine 0
heartbeat lease" -3 LOCK.STATE p2

printf 'LOCK.ACQUIRE p3 10000\r\nLOCK.ACQUIRE p3 10\r\nLOCK.STATE p3\r\n' >"$work/pipe"
out=$(cli --pipe <"$work/pipe" 2>&1)
rc=$?
check "--pipe, inline, one bad lease-ms: counted, exit 1" "1 errors: 1, replies: 3" \
	"$rc $(echo "$out" | tail -1)"
check "--pipe's error is the server's" "ERR lease-ms must be an integer from 1000 to 86400000" \
	"$(echo "$out" | grep '^ERR')"

kill -TERM "$gw"
wait "$gw"
check "SIGTERM: exit 0" "0" "$?"
gw=
