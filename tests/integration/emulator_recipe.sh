#!/bin/bash
# emulator_recipe.sh: the recipe of docs/dynamodb.md "Try it locally,
# without an AWS account" runs as written: the ```sh block after the
# comment "tests/integration/emulator_recipe.sh runs this block", with only
# the ports changed (a free one for the emulator, for the Redis port, none
# for PostgreSQL and admin) and the binary ($LG_BIN); its redis-cli takes
# the lock (retried while the table opens: -LOADING) and its aws CLI scan
# shows the lock's item. Prints "ok N - what" / "not ok N - what".
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/gw.sh"
work=$(mktemp -d "${LG_WORK:-/tmp}/emulator_recipe.XXXXXX")
spid=
# the block runs in a process group of its own: its background emulator
# and gateway end with it, however it ends
trap '[ -n "$spid" ] && kill -- -$spid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

awk '/^<!-- tests\/integration\/emulator_recipe.sh runs this block -->$/ { on = 1; next }
	on && /^```sh$/ { take = 1; next }
	take && /^```$/ { exit }
	take' "$root/docs/dynamodb.md" >"$work/block.sh"
grep -q 'moto_serial.py' "$work/block.sh" && grep -q -- '--endpoint' "$work/block.sh" ||
	{ bad "docs/dynamodb.md has the emulator block"; exit 1; }
ok "docs/dynamodb.md has the emulator block"

mport=$(gw_free_port) rport=$(gw_free_port)
# The block as a reader runs it, from the source tree, with this run's
# ports and binary; redis-cli waits for the gateway and its table
# (connection refused, LOADING) as a reader would by trying again (its
# failure to connect is no error of the block's bash -e: a slow start, as
# make check's, refused the first try and ended the block at once).
{
	echo 'redis-cli() { for i in $(seq 600); do out=$(command redis-cli -p '"$rport"' "$@" 2>&1) || true; case $out in LOADING* | *"Connection refused"*) sleep 0.1 ;; *) echo "$out"; return 0 ;; esac; done; echo "$out"; return 1; }'
	sed -e "s/^PORT=5000$/PORT=$mport/" \
		-e "s|^build/leasegate |$LG_BIN --port $rport --pg-port 0 --admin-port 0 |" "$work/block.sh"
} >"$work/run.sh"
grep -q "PORT=$mport" "$work/run.sh" && grep -q -- "--port $rport" "$work/run.sh" ||
	{ bad "the block's ports could be set (PORT=5000, build/leasegate)"; exit 1; }
# the emulator takes a moment to listen: the block's own order (moto, then
# the gateway, which retries the table until it answers)
(cd "$root" && unset AWS_PROFILE AWS_ENDPOINT_URL && exec setsid bash -e "$work/run.sh") >"$work/out" 2>"$work/err" &
spid=$!
wait $spid
rc=$?
if [ $rc = 0 ] && grep -qx '1' "$work/out"; then
	ok "its redis-cli LOCK.ACQUIRE demo 30000 answers 1 on the emulator's table"
else
	bad "the block runs and takes the lock (rc $rc)"; sed 's/^/# /' "$work/out" "$work/err" | tail -20
fi
if grep -q '"LOCK#demo"' "$work/out"; then
	ok "its aws dynamodb scan shows the lock's item LOCK#demo"
else
	bad "the scan shows LOCK#demo"; sed 's/^/# /' "$work/out" | tail -20
fi
exit $fail
