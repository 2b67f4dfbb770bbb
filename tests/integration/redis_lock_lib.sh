#!/bin/sh
# redis_lock_lib: Redis lock libraries, unmodified, against the real binary
# ($LG_BIN) (issue 14). redis-cli checks the errors (a key without an
# expiry, a bad value, expiry or option, an unknown script, a library's
# script called with two keys: NOSCRIPT); redis_lock_lib.py runs redis-py's Lock
# (Debian's python3-redis, /usr/bin/python3) on three setups:
#   embedded   one gateway on the embedded store
#   moto       one gateway on a table of moto ($LG_MOTO) it creates
#   moto-pair  two gateways on one table: the holder on one, the
#              contender on the other (another replica)
# and node/redlock.js runs redlock 4 (npm, over ioredis 5; versions from
# node/package-lock.json, `npm ci` into $LG_WORK) on embedded and moto-pair.
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
# Prints `ok <what>` / `not ok <what>`; exits 1 when any check failed.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3 # Debian's, where python3-redis installs
. "$(dirname "$0")/../support/gw.sh"
gw_script_init redis_lock_lib


# lib SETUP PORT [PORT]: redis_lock_lib.py on those gateways
lib() {
	timeout -k 5 120 $py "$here/redis_lock_lib.py" "$@" >"$work/lib-$1.out" 2>&1
	rc=$?
	cat "$work/lib-$1.out"
	grep -q '^not ok' "$work/lib-$1.out" && failed=1
	if [ $rc != 0 ] && ! grep -q '^not ok' "$work/lib-$1.out"; then
		say "not ok" "$1: redis_lock_lib.py exited $rc"
	fi
}

if ! $py -c 'import redis.lock' 2>/dev/null; then
	say "not ok" "redis_lock_lib needs python3-redis for $py (deps.sh installs it)"
	exit 1
fi

gw_start embedded
# error ARGS... WANT: the error redis-cli shows for one command starts with WANT
error() {
	_want=$(eval "echo \"\${$#}\"")
	_args=
	while [ $# -gt 1 ]; do
		_args="$_args '$1'"
		shift
	done
	_got=$(eval "redis-cli -p $port_embedded $_args" 2>&1)
	case $_got in
	"$_want"*) say ok "redis-cli:$_args -> $_want..." ;;
	*) say "not ok" "redis-cli:$_args -> $_want... (got: $_got)" ;;
	esac
}
# SET's forms other than NX PX run as in a script: a key is a lease
error SET k v "ERR a key of leasegate is a lease, it needs an expiry"
error SET k v NX "ERR a key of leasegate is a lease, it needs an expiry"
error SET k v NX PX 5000 XX "ERR syntax error"
error SET k v NX KEEPTTL "ERR a key of leasegate is a lease, it needs an expiry"
error SET k v NX PXAT 0 "ERR invalid expire time in 'set' command"
error SET k v NX PX 999 "ERR PX must be 1000 to 86400000 milliseconds"
error SET k v NX EX 86401 "ERR EX must be 1 to 86400 seconds"
error SET k v NX PX 0 "ERR invalid expire time in 'set' command"
error SET k v NX PX soon "ERR value is not an integer or out of range"
error SET k "two words" NX PX 5000 "ERR a lock's value must be 1 to 62 printable ASCII characters, no space"
error SET k "" NX PX 5000 "ERR a lock's value must be 1 to 62"
error SET k "$(printf '%063d' 7)" NX PX 5000 "ERR a lock's value must be 1 to 62"
error PEXPIRE k 500 "ERR PEXPIRE's time must be 1000 to 86400000 milliseconds"
error PEXPIRE k 5000 NX FOO "ERR Unsupported option FOO"
error PEXPIRE k 5000 NX XX "ERR NX and XX, GT or LT options at the same time are not compatible"
error EVALSHA 0000000000000000000000000000000000000000 1 k v "NOSCRIPT No matching script."
error EVAL 'return redis.call("zadd", KEYS[1], 1, "m")' 1 k "ERR leasegate's scripts run the commands of the lock keyspace"
error EVAL 'return redis.call("hset", KEYS[1], "f", 1)' 1 k "ERR key 'k' has no expiry at the end of the script"
error EVAL 'return redis.call("get", "k2")' 1 k "ERR script tried accessing a key not passed in KEYS"
# a library's script called otherwise than the library does (two keys):
# NOSCRIPT, so that the library sends EVAL with the body (runs as Lua)
error EVALSHA c3f8721cbb97f72bc19e972846bd7aaf91901658 2 k j v "NOSCRIPT No matching script."
# a value of 62 is taken, and the lock answers like a Redis key
v62=$(printf 'v%061d' 1)
got=$(redis-cli -p "$port_embedded" SET k "$v62" NX PX 5000)/$(redis-cli -p "$port_embedded" SET k other NX PX 5000)/$(redis-cli -p "$port_embedded" GET k)/$(redis-cli -p "$port_embedded" DEL k)/$(redis-cli -p "$port_embedded" GET k)
if [ "$got" = "OK//$v62/1/" ]; then
	say ok "redis-cli: SET NX PX (62-byte value) OK, again nil, GET the value, DEL 1, GET nil"
else
	say "not ok" "redis-cli: SET NX PX (62-byte value) OK, again nil, GET the value, DEL 1, GET nil (got $got)"
fi

# SET NX of a lock this very connection holds (LOCK.ACQUIRE): nil, as
# Redis answers for a key that exists, not an error
got=$(printf 'LOCK.ACQUIRE mine 5000\nSET mine v NX PX 5000\nLOCK.RELEASE mine\n' |
	redis-cli -p "$port_embedded" --no-raw 2>&1 | tr '\n' '/')
if [ "$got" = "(integer) 1/(nil)/(integer) 1/" ]; then
	say ok "redis-cli: SET NX PX of a lock the same connection holds: nil"
else
	say "not ok" "redis-cli: SET NX PX of a lock the same connection holds: nil (got $got)"
fi

lib embedded "$port_embedded"

if [ -z "${LG_MOTO:-}" ]; then
	say "not ok" "moto setups: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 1
fi
gw_start moto "lg-rlib-$$"
lib moto "$port_moto"
gw_start a "lg-rlib-pair-$$"
gw_start b "lg-rlib-pair-$$"
lib moto-pair "$port_a" "$port_b"

# redlock SETUP PORT_A PORT_B: node/redlock.js on those gateways
redlock() {
	LG_SETUP=$1 LG_PORT_A=$2 LG_PORT_B=$3 timeout -k 5 90 node "$work/node/redlock.js" \
		>"$work/redlock-$1.out" 2>&1
	rc=$?
	cat "$work/redlock-$1.out"
	grep -q '^not ok' "$work/redlock-$1.out" && failed=1
	if [ $rc != 0 ] && ! grep -q '^not ok' "$work/redlock-$1.out"; then
		say "not ok" "$1: redlock.js exited $rc"
	fi
}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	say "not ok" "redlock needs Node.js (>= 18) and npm (deps.sh installs them)"
else
	mkdir "$work/node"
	cp "$here/node/package.json" "$here/node/package-lock.json" "$here/node/redlock.js" \
		"$work/node/"
	if (cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
		>"$work/npm.log" 2>&1; then
		say ok "npm ci from the lockfile: redlock $(cd "$work/node" &&
			node -p "require('redlock/package.json').version")"
		redlock embedded "$port_embedded" "$port_embedded"
		redlock moto-pair "$port_a" "$port_b"
	else
		say "not ok" "npm ci (redlock)"
		sed 's/^/# /' "$work/npm.log"
	fi
fi

# every gateway stops cleanly (under make check: no leak, LeakSanitizer
# would make the exit status non-zero)
for g in embedded moto a b; do
	eval "p=\$pid_$g"
	kill -TERM "$p"
	wait "$p"
	rc=$?
	if [ $rc = 0 ]; then say ok "gateway $g exits 0 at SIGTERM"; else say "not ok" "gateway $g exits 0 at SIGTERM (got $rc)"; fi
done
pids=

if [ $failed != 0 ]; then
	for f in "$work"/gw-*.log; do
		echo "# $(basename "$f"):"
		tail -n 30 "$f" | sed 's/^/#   /'
	done
fi
exit $failed
