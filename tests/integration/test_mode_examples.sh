#!/bin/sh
# test_mode_examples: the examples of docs/testing.md, run for real against
# $LG_BIN with --test-mode: examples/testing/test_sweeper_redis.py (pytest,
# redis-py) and test_sweeper_psycopg.py (pytest, psycopg 3) with Debian's
# /usr/bin/python3 (their conftest.py starts a leasegate per test), and
# sweeper.test.js (node:test, ioredis from tests/integration/node's
# lockfile, `npm ci` into a copy under $LG_WORK) against a leasegate this
# script starts. Each checks that a service stops working on LOST and works
# again after a new campaign, with no sleep. Prints `ok <n> <what>`; exits
# 1 at the first failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
examples=$(cd "$here/../../examples/testing" && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/test_mode_examples.XXXXXX") || exit 1
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

py=/usr/bin/python3
$py -c 'import pytest, redis, psycopg' 2>/dev/null ||
	fail "0 needs pytest, redis-py and psycopg 3 for $py (./deps.sh test: python3-pytest python3-redis python3-psycopg)"
LG_BIN=$(cd "$(dirname "$LG_BIN")" && pwd)/$(basename "$LG_BIN")
export LG_BIN
(cd "$examples" && $py -m pytest -q -p no:cacheprovider test_sweeper_redis.py) \
	>"$work/pytest_redis.log" 2>&1 || fail "1 pytest examples/testing/test_sweeper_redis.py" pytest_redis.log
echo "ok 1 pytest examples/testing/test_sweeper_redis.py (redis-py)"
(cd "$examples" && $py -m pytest -q -p no:cacheprovider test_sweeper_psycopg.py) \
	>"$work/pytest_pg.log" 2>&1 || fail "2 pytest examples/testing/test_sweeper_psycopg.py" pytest_pg.log
echo "ok 2 pytest examples/testing/test_sweeper_psycopg.py (psycopg)"

command -v node >/dev/null && command -v npm >/dev/null ||
	fail "3 the Node example needs Node.js (>= 18) and npm on PATH"
. "$here/../support/gw.sh"
port=$(gw_free_port)
"$LG_BIN" --test-mode --port "$port" --pg-port 0 --admin-port 0 >"$work/leasegate.log" 2>&1 &
gw=$!
mkdir "$work/node"
cp "$here/node/package.json" "$here/node/package-lock.json" "$work/node/"
(cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
	>"$work/npm.log" 2>&1 || fail "3 npm ci" npm.log
gw_ready "$port" || fail "3 leasegate did not start" leasegate.log
LG_PORT=$port NODE_PATH="$work/node/node_modules" node --test "$examples/sweeper.test.js" \
	>"$work/node.log" 2>&1 || fail "3 node --test examples/testing/sweeper.test.js" node.log
echo "ok 3 node --test examples/testing/sweeper.test.js (ioredis)"
kill -TERM "$gw"
wait "$gw"
rc=$?
gw=
[ $rc -eq 0 ] || fail "4 leasegate exits 0 at SIGTERM after the Node example (got $rc)" leasegate.log
echo "ok 4 leasegate exits 0 at SIGTERM after the Node example"
