#!/bin/sh
# multi_clients: MULTI/EXEC/DISCARD/WATCH/UNWATCH from real clients,
# unmodified, against the real binary ($LG_BIN) (issue 28): redis-py's
# pipeline() transactional and not, with WATCH (multi_clients.py, Debian's
# python3-redis), ioredis multi() and node-redis multi() with WATCH
# (node/multi_clients.js; versions from node/package-lock.json, `npm ci`
# into $LG_WORK), redigo (go/redigo_main.go, Debian's
# golang-github-gomodule-redigo-dev, built offline in GOPATH mode), and
# redis-cli for the replies themselves, on:
#   embedded   one gateway on the embedded store
#   moto-pair  two gateways on one table of moto ($LG_MOTO): the
#              transaction on one, the write that breaks its WATCH on the
#              other
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
# Prints `ok <what>` / `not ok <what>`; exits 1 when any check failed.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3 # Debian's, where python3-redis installs
. "$(dirname "$0")/../support/gw.sh"
gw_script_init multi_clients


# redigo, built offline in GOPATH mode on Debian's Go sources
gopath=/usr/share/gocode
if ! command -v go >/dev/null || [ ! -d "$gopath/src/github.com/gomodule/redigo/redis" ]; then
	say "not ok" "redigo needs Go (golang-go) and golang-github-gomodule-redigo-dev (deps.sh installs them)"
else
	gocache=$(go env GOCACHE 2>/dev/null) && [ -n "$gocache" ] && [ "$gocache" != off ] ||
		gocache=$work/gocache
	if GOPATH=$gopath GO111MODULE=off GOFLAGS= GOPROXY=off GOCACHE=$gocache \
		timeout -k 5 300 go build -o "$work/redigo_test" "$here/go/redigo_main.go" \
		>"$work/go.log" 2>&1; then
		say ok "redigo: go build (GOPATH mode, redigo $(dpkg-query -W -f='${Version}' \
			golang-github-gomodule-redigo-dev 2>/dev/null))"
	else
		say "not ok" "redigo: go build"
		sed 's/^/# /' "$work/go.log"
	fi
fi

# clients SETUP PORT_A PORT_B: the Python, Node and Go checks
clients() {
	for c in py node go; do
		if [ $c = go ]; then
			[ -x "$work/redigo_test" ] || continue
			LG_SETUP=$1 LG_PORT_A=$2 LG_PORT_B=$3 timeout -k 5 120 "$work/redigo_test" \
				>"$work/$c-$1.out" 2>&1
		elif [ $c = py ]; then
			LG_SETUP=$1 LG_PORT_A=$2 LG_PORT_B=$3 timeout -k 5 120 "$py" \
				"$here/multi_clients.py" >"$work/$c-$1.out" 2>&1
		else
			[ -d "$work/node/node_modules" ] || continue
			LG_SETUP=$1 LG_PORT_A=$2 LG_PORT_B=$3 timeout -k 5 120 node \
				"$work/node/multi_clients.js" >"$work/$c-$1.out" 2>&1
		fi
		rc=$?
		cat "$work/$c-$1.out"
		grep -q '^not ok' "$work/$c-$1.out" && failed=1
		if [ $rc != 0 ] && ! grep -q '^not ok' "$work/$c-$1.out"; then
			say "not ok" "$1: multi_clients ($c) exited $rc"
		fi
	done
}

if [ -z "${LG_MOTO:-}" ]; then
	say "not ok" "moto setups: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 1
fi
gw_start embedded
gw_start a "lg-multi-$$"
gw_start b "lg-multi-$$"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	say "not ok" "multi_clients needs Node.js (>= 18) and npm (deps.sh installs them)"
else
	mkdir "$work/node"
	cp "$here/node/package.json" "$here/node/package-lock.json" \
		"$here/node/multi_clients.js" "$work/node/"
	if (cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
		>"$work/npm.log" 2>&1; then
		v() { (cd "$work/node" && node -p "JSON.parse(require('fs').readFileSync('node_modules/$1/package.json')).version"); }
		say ok "npm ci from the lockfile: ioredis $(v ioredis), redis $(v redis)"
	else
		say "not ok" "npm ci (multi_clients)"
		sed 's/^/# /' "$work/npm.log"
		rm -rf "$work/node/node_modules"
	fi
fi
clients embedded "$port_embedded" "$port_embedded"
clients moto-pair "$port_a" "$port_b"

# the replies themselves, as redis-cli prints them (RESP2)
got=$(printf 'MULTI\nSET rc-x v NX PX 20000\nPTTL rc-x\nGET rc-x\nEXEC\n' |
	redis-cli -p "$port_a" | tr '\n' ' ')
[ "$got" = "OK QUEUED QUEUED QUEUED OK 20000 v " ] &&
	say ok "redis-cli: MULTI, QUEUED, EXEC's replies in order ($got)" ||
	say "not ok" "redis-cli: MULTI/EXEC: $got"
got=$(printf 'EXEC\nDISCARD\nMULTI\nMULTI\nWATCH rc-x\nLOCK.ACQUIRE rc-y 5000\nEXEC\n' |
	redis-cli -p "$port_a" 2>&1 | tr '\n' '|')
case $got in
"ERR EXEC without MULTI||ERR DISCARD without MULTI||OK|ERR MULTI calls can not be nested||ERR WATCH inside MULTI is not allowed||ERR leasegate's MULTI runs the commands of the lock keyspace"*"'lock.acquire' is not one of them||EXECABORT Transaction discarded because of previous errors.|"*)
	say ok "redis-cli: the errors of Redis (EXEC/DISCARD without MULTI, nested MULTI, WATCH inside MULTI, EXECABORT) and the refusal naming the command" ;;
*) say "not ok" "redis-cli: errors: $got" ;;
esac
# a watched key renewed by the lease core's heartbeats is not changed: a
# LOCK.ACQUIRE lease of 3 s (renewed every second) held on b while a
# watches it for 2.5 s: EXEC runs; the holder's release then breaks the
# next WATCH
(printf 'LOCK.ACQUIRE rc-hb 3000\n'; sleep 3.5) | redis-cli -p "$port_b" >/dev/null &
hb=$!
sleep 0.3
got=$( (printf 'WATCH rc-hb\n'; sleep 2.5; printf 'MULTI\nPTTL rc-hb\nEXEC\n') |
	redis-cli -p "$port_a" | tr '\n' ' ')
case $got in
"OK OK QUEUED "[0-9]*" ") say ok "moto-pair: a WATCH across the holder's heartbeats (another replica): EXEC runs ($got)" ;;
*) say "not ok" "moto-pair: WATCH across heartbeats: $got" ;;
esac
got=$( (printf 'WATCH rc-hb\n'; sleep 1.5; printf 'MULTI\nPTTL rc-hb\nEXEC\n') |
	redis-cli -p "$port_a" | tr '\n' ' ')
wait $hb
case $got in
"OK OK QUEUED  ") say ok "moto-pair: the holder's release on b breaks a WATCH on a: EXEC is nil" ;;
*) say "not ok" "moto-pair: WATCH across the release: $got" ;;
esac

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
