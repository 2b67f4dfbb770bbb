#!/bin/sh
# redis_cli.sh: a scripted redis-cli session against $LG_BIN, checking each
# output; prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port)
log=$(mktemp /tmp/lg-cli.XXXXXX)
"$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
gw_ready "$port" 100 || { echo "leasegate did not start"; cat "$log"; exit 1; }

n=0 fail=0
check() { # check "what" "expected" command...
	what=$1 want=$2; shift 2
	n=$((n + 1))
	got=$(redis-cli -p "$port" "$@" 2>&1)
	if [ "$got" = "$want" ]; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"; echo "  got:  $got"; echo "  want: $want"; fail=1
	fi
}

check "PING" "PONG" PING
check "PING message" "hello" PING hello
check "ECHO with spaces" "a b c" ECHO "a b c"
n=$((n + 1))
got=$(redis-cli -p "$port" -3 HELLO 3 | head -6)
case "$got" in
*"server"*"redis"*"version"*"7.0.0"*"proto"*"3"*) echo "ok $n - HELLO 3 map" ;;
*) echo "not ok $n - HELLO 3 map"; echo "  got: $got"; fail=1 ;;
esac
check "unknown command" "ERR unknown command 'NOPE', with args beginning with: 'x' " NOPE x
check "wrong arity" "ERR wrong number of arguments for 'echo' command" ECHO
check "SELECT 0" "OK" SELECT 0
check "SELECT 1" "ERR DB index is out of range" SELECT 1
check "CLIENT GETNAME unset" "" CLIENT GETNAME
n=$((n + 1))
if redis-cli -p "$port" INFO | tr -d '\r' | grep -qx 'loading:0'; then
	echo "ok $n - INFO has loading:0"
else
	echo "not ok $n - INFO has loading:0"; fail=1
fi
n=$((n + 1))
if redis-cli -p "$port" INFO clients | tr -d '\r' | grep -qx 'connected_clients:1'; then
	echo "ok $n - INFO clients counts this client"
else
	echo "not ok $n - INFO clients counts this client"; fail=1
fi
check "CONFIG GET" "$(printf 'maxclients\n10000')" CONFIG GET maxclients
# CONFIG GET * answers every option of the table (--options), and CONFIG
# GET takes several patterns
n=$((n + 1))
missing=$(redis-cli -p "$port" CONFIG GET '*' | awk 'NR % 2 == 1' | sort >"$log.got" &&
	"$LG_BIN" --options | cut -f1 | sort | comm -23 - "$log.got" | tr '\n' ' ')
rm -f "$log.got"
if [ -z "$missing" ]; then
	echo "ok $n - CONFIG GET * has every option of --options"
else
	echo "not ok $n - CONFIG GET * lacks: $missing"; fail=1
fi
check "CONFIG GET two patterns" "$(printf 'port\n%s\nmaxclients\n10000' "$port")" CONFIG GET maxclients port
n=$((n + 1))
got=$(redis-cli -p "$port" COMMAND COUNT)
if [ "$got" -ge 11 ] 2>/dev/null; then
	echo "ok $n - COMMAND COUNT counts the built-ins"
else
	echo "not ok $n - COMMAND COUNT ($got)"; fail=1
fi
# one redis-cli session, several commands, state kept between them
n=$((n + 1))
got=$(printf 'CLIENT SETNAME tool\nCLIENT GETNAME\nHELLO 3\nCLIENT GETNAME\n' |
	redis-cli -p "$port" 2>&1 | grep -c tool)
if [ "$got" = "2" ]; then
	echo "ok $n - session state across commands"
else
	echo "not ok $n - session state across commands ($got)"; fail=1
fi
# pipe mode: 1000 commands, 1000 replies
n=$((n + 1))
got=$(i=0; while [ $i -lt 1000 ]; do echo "PING"; i=$((i + 1)); done |
	redis-cli -p "$port" 2>&1 | grep -c PONG)
if [ "$got" = "1000" ]; then
	echo "ok $n - 1000 pipelined PINGs"
else
	echo "not ok $n - 1000 pipelined PINGs ($got)"; fail=1
fi
# SIGTERM: exits 0
n=$((n + 1))
kill -TERM $pid
if wait $pid; then
	echo "ok $n - SIGTERM exits 0"
else
	echo "not ok $n - SIGTERM exits 0"; fail=1
fi
trap 'rm -f "$log"' EXIT
exit $fail
