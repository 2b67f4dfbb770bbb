#!/bin/sh
# node_clients: unmodified Node.js Redis clients against the real binary
# ($LG_BIN) on the embedded store: ioredis 5 with its default options (the
# INFO ready check, CLIENT SETNAME/SETINFO at connect) and node-redis 4
# (createClient, sendCommand; RESP2 only). The exact versions come from
# node/package-lock.json, installed by `npm ci` into a copy under $LG_WORK
# (npm's own cache makes later runs fast). node/clients.js holds the checks.
# Needs Node.js >= 18 and npm. Prints `ok <n> <what>`; exits 1 at the first
# failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/node_clients.XXXXXX")
gw=
cleanup() {
	[ -n "$gw" ] && kill "$gw" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

fail() {
	echo "not ok $1"
	if [ -n "${2:-}" ] && [ -f "$work/$2" ]; then sed 's/^/# /' "$work/$2"; fi
	exit 1
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	fail "0 node_clients needs Node.js (>= 18) and npm on PATH"
fi
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ] ||
	fail "0 node_clients needs Node.js >= 18, found $(node --version)"

. "$here/../support/gw.sh"
port=$(gw_free_port)
"$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 >"$work/leasegate.log" 2>&1 &
gw=$!

# npm ci while leasegate starts
mkdir "$work/node"
cp "$here/node/package.json" "$here/node/package-lock.json" "$here/node/"*.js "$work/node/"
(cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
	>"$work/npm.log" 2>&1 || fail "1 npm ci" npm.log
v() { (cd "$work/node" && node -p "require('$1/package.json').version"); }
echo "ok 1 npm ci from the lockfile: ioredis $(v ioredis), redis $(v redis) (@redis/client $(v @redis/client))"

gw_ready "$port" || fail "2 leasegate did not start" leasegate.log

LG_PORT=$port LG_N0=1 node "$work/node/clients.js" >"$work/clients.out" 2>&1
rc=$?
cat "$work/clients.out"
if [ $rc -ne 0 ]; then
	echo "# leasegate log:"
	sed 's/^/# /' "$work/leasegate.log"
	exit 1
fi
n=$(($(grep -c '^ok ' "$work/clients.out") + 2))

kill -TERM "$gw"
wait "$gw"
rc=$?
gw=
[ $rc -eq 0 ] || fail "$n leasegate exits 0 at SIGTERM after the clients (got $rc)" leasegate.log
echo "ok $n leasegate exits 0 at SIGTERM after the clients"
