#!/bin/sh
# open_messages.sh: what the gateway says when it opens a DynamoDB table
# (moto): with --create-table on a missing table, a line that it created
# the table, naming it, the region, the keys, the billing mode and the TTL
# attribute; opening the same table again, no such line.
# Prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
: "${LG_MOTO:?needs moto (tests/run-integration.sh sets LG_MOTO)}"
. "$(dirname "$0")/../support/gw.sh"
dir=$(mktemp -d /tmp/lg-open.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "  $l"; done; fail=1; }
table="lg-open-$$"

# start NAME ARGS...: a gateway on moto until PING answers, its log in $dir/NAME.log
start() {
	name=$1; shift
	port=$(gw_free_port)
	AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO \
		AWS_REGION=us-east-1 "$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 \
		--table "$table" "$@" 2>"$dir/$name.log" &
	pid=$!
	gw_ready "$port" || { bad "$name: leasegate did not start" "$(cat "$dir/$name.log")"; return 1; }
}
stop() { kill $pid 2>/dev/null; wait $pid 2>/dev/null; pid=; }

start create --create-table --ttl-attribute expiresAt
stop
want="created DynamoDB table $table in region us-east-1 (--create-table): partition key pk, no sort key, billing mode PAY_PER_REQUEST, TTL attribute expiresAt"
if [ "$(grep -c -F "$want" "$dir/create.log")" = 1 ]; then ok "--create-table: '$want'"
else bad "--create-table: no line '$want'" "$(cat "$dir/create.log")"; fi

start again --create-table --ttl-attribute expiresAt
stop
if ! grep -q "created DynamoDB table" "$dir/again.log" && grep -q "DynamoDB table $table open" "$dir/again.log"; then
	ok "the table there already: opened, not said created"
else bad "the second open" "$(cat "$dir/again.log")"; fi

echo "1..$n"
exit $fail
