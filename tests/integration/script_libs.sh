#!/bin/sh
# script_libs: lock libraries that run their own Lua scripts, unmodified,
# against the real binary ($LG_BIN) (issue 28): node/script_libs.js runs
# redlock 5, @sesamecare-oss/redlock and redis-semaphore (Mutex,
# RedlockMutex; Semaphore's clear error) over ioredis (versions from
# node/package-lock.json, `npm ci` into $LG_WORK) on two setups:
#   embedded   one gateway on the embedded store
#   moto-pair  two gateways on one table of moto ($LG_MOTO): the holder on
#              one, the contender on the other (scripts commit with
#              TransactWriteItems)
# Then redis-cli, on moto-pair: a script reading A and writing B runs
# against a script reading B and writing A, from the two replicas at
# once, many times: never both write (no write skew).
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
# Prints `ok <what>` / `not ok <what>`; exits 1 when any check failed.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../support/gw.sh"
gw_script_init script_libs


libs() { # libs SETUP PORT_A PORT_B
	LG_SETUP=$1 LG_PORT_A=$2 LG_PORT_B=$3 timeout -k 5 120 node "$work/node/script_libs.js" \
		>"$work/libs-$1.out" 2>&1
	rc=$?
	cat "$work/libs-$1.out"
	grep -q '^not ok' "$work/libs-$1.out" && failed=1
	if [ $rc != 0 ] && ! grep -q '^not ok' "$work/libs-$1.out"; then
		say "not ok" "$1: script_libs.js exited $rc"
	fi
}

if [ -z "${LG_MOTO:-}" ]; then
	say "not ok" "moto setups: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 1
fi
gw_start embedded
gw_start a "lg-slib-$$"
gw_start b "lg-slib-$$"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	say "not ok" "script_libs needs Node.js (>= 18) and npm (deps.sh installs them)"
else
	mkdir "$work/node"
	cp "$here/node/package.json" "$here/node/package-lock.json" \
		"$here/node/script_libs.js" "$work/node/"
	if (cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
		>"$work/npm.log" 2>&1; then
		v() { (cd "$work/node" && node -p "JSON.parse(require('fs').readFileSync('node_modules/$1/package.json')).version"); }
		say ok "npm ci from the lockfile: redlock5 $(v redlock5), @sesamecare-oss/redlock $(v @sesamecare-oss/redlock), redis-semaphore $(v redis-semaphore)"
		libs embedded "$port_embedded" "$port_embedded"
		libs moto-pair "$port_a" "$port_b"
	else
		say "not ok" "npm ci (script_libs)"
		sed 's/^/# /' "$work/npm.log"
	fi
fi

# no write skew across replicas: "if KEYS[1] is absent, take KEYS[2]",
# once as (x, y) on gateway a and once as (y, x) on gateway b, started
# together; a serial order lets exactly one of them write.
skew='if redis.call("exists", KEYS[1]) == 0 then return redis.call("set", KEYS[2], ARGV[1], "PX", 60000) and 1 or 0 end return 0'
both=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	redis-cli -p "$port_a" EVAL "$skew" 2 "x-$i" "y-$i" a >"$work/skew-a" 2>&1 &
	pa=$!
	redis-cli -p "$port_b" EVAL "$skew" 2 "y-$i" "x-$i" b >"$work/skew-b" 2>&1 &
	pb=$!
	wait $pa $pb
	got="$(cat "$work/skew-a")/$(cat "$work/skew-b")"
	case $got in
	1/0 | 0/1) ;;
	*) both=$((both + 1)); echo "# round $i: $got" ;;
	esac
done
[ $both = 0 ] && say ok "moto-pair: read-A-write-B against read-B-write-A from two replicas, 10 rounds: one writes each time, never both" ||
	say "not ok" "moto-pair: write skew or errors in $both of 10 rounds"

# a compare-and-extend with its own reply, no library's
cae='local v = redis.call("get", KEYS[1]) if v ~= ARGV[1] then return {err="NOTOWNER held by " .. tostring(v)} end redis.call("pexpire", KEYS[1], ARGV[2]) return {ok="EXTENDED " .. redis.call("pttl", KEYS[1])}'
redis-cli -p "$port_a" SET cae me NX PX 5000 >/dev/null
got=$(redis-cli -p "$port_b" EVAL "$cae" 1 cae me 20000)
case $got in "EXTENDED 20000" | "EXTENDED 199"*) say ok "moto-pair: compare-and-extend on the other replica: $got" ;;
*) say "not ok" "moto-pair: compare-and-extend: $got" ;; esac
got=$(redis-cli -p "$port_b" EVAL "$cae" 1 cae you 20000)
case $got in "NOTOWNER held by me"*) say ok "moto-pair: compare-and-extend of another value: its own error ($got)" ;;
*) say "not ok" "moto-pair: compare-and-extend of another value: $got" ;; esac

# the script cache in the table: SCRIPT LOAD on a, EVALSHA on b (which
# never saw it) runs it; b's SCRIPT FLUSH forgets its own copy only; an
# unknown SHA1 is NOSCRIPT on both. Then redis-py: a Script registered and
# loaded through a client of a, called through a client of b.
body='return "cached " .. ARGV[1]'
sha=$(redis-cli -p "$port_a" SCRIPT LOAD "$body")
got=$(redis-cli -p "$port_b" EVALSHA "$sha" 0 x 2>&1)
[ "$got" = "cached x" ] && say ok "moto-pair: SCRIPT LOAD on a, EVALSHA on b runs it ($got)" ||
	say "not ok" "moto-pair: EVALSHA on b of a script loaded on a: $got"
got=$(redis-cli -p "$port_b" SCRIPT EXISTS "$sha" | tr '\n' ' ')
[ "$got" = "1 " ] && say ok "moto-pair: b keeps the script it read (SCRIPT EXISTS 1)" ||
	say "not ok" "moto-pair: SCRIPT EXISTS on b after its EVALSHA: $got"
redis-cli -p "$port_b" SCRIPT FLUSH >/dev/null
got="$(redis-cli -p "$port_b" SCRIPT EXISTS "$sha")/$(redis-cli -p "$port_b" EVALSHA "$sha" 0 y 2>&1)"
[ "$got" = "0/cached y" ] && say ok "moto-pair: SCRIPT FLUSH on b forgets b's copy only: the table's runs again ($got)" ||
	say "not ok" "moto-pair: after SCRIPT FLUSH on b: $got"
got="$(redis-cli -p "$port_a" EVALSHA 0123456789abcdef0123456789abcdef01234567 0 2>&1)/$(redis-cli -p "$port_b" EVALSHA ffffffffffffffffffffffffffffffffffffffff 0 2>&1)"
case $got in "NOSCRIPT"*"/NOSCRIPT"*) say ok "moto-pair: an SHA1 the table lacks: NOSCRIPT" ;;
*) say "not ok" "moto-pair: unknown SHA1: $got" ;; esac
got=$(/usr/bin/python3 - "$port_a" "$port_b" <<'PY' 2>&1
import sys, redis
a = redis.Redis(port=int(sys.argv[1])); b = redis.Redis(port=int(sys.argv[2]))
body = "return redis.call('set', KEYS[1], ARGV[1], 'PX', 20000) and 'taken by ' .. ARGV[1]"
script = a.register_script(body)
a.script_load(body)
calls = []
orig = b.execute_command
def spy(*args, **kw):
    calls.append(args[0])
    return orig(*args, **kw)
b.execute_command = spy
print(script(keys=["py-cache-key"], args=["me"], client=b).decode(), "/", ",".join(calls))
PY
)
[ "$got" = "taken by me / EVALSHA" ] && say ok "moto-pair: redis-py Script loaded on a, called through b: one EVALSHA, no NOSCRIPT ($got)" ||
	say "not ok" "moto-pair: redis-py Script across replicas: $got"

# a reply that holds itself (make fuzz found it taking the gateway's memory
# without bound): an error bounded by the run's memory limit, and the same
# connection is answered next
got=$(printf '%s\n' "EVAL \"local t = {} for i = 1, 90 do t[i] = t end return t\" 0" "PING" |
	timeout 20 redis-cli -p "$port_embedded" 2>&1 | tr '\n' '|')
case $got in "ERR the script's reply is larger than its memory limit (33554432 bytes)|"*"PONG|")
	say ok "embedded: a script's reply that holds itself is an error, then PONG ($got)" ;;
*) say "not ok" "embedded: a script's reply that holds itself: $got" ;; esac

# a replica opened on a table that holds cached scripts: its look at the
# first items does not take SCRIPT#<sha1> items for another application's
# (a table of its own: c caches a script in it, d opens it)
gw_start c "lg-slib-scripts-$$"
redis-cli -p "$port_c" SCRIPT LOAD 'return 1' >/dev/null
gw_start d "lg-slib-scripts-$$"
if grep -q "holds items that are not leasegate's locks" "$work/gw-d.log"; then
	say "not ok" "moto: a replica opened on a table with a cached script warns of foreign items"
	sed 's/^/# /' "$work/gw-d.log"
else
	say ok "moto: a replica opened on a table with a cached script does not take it for a foreign item"
fi

for g in embedded a b c d; do
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
