#!/bin/sh
# open_messages.sh: what the gateway says when it opens a DynamoDB table
# (moto): with --create-table on a missing table, a line that it created
# the table, naming it, the region, the keys, the billing mode and the TTL
# attribute; opening the same table again, no such line. Opening a table
# reads its first items (one Scan) unless this open created it: another
# application's table with string keys is opened with a warning naming the
# attributes found; one with a number key is refused, the message naming
# the keys and their types. The log says which credential source is tried,
# then that credentials were found (environment keys, a container
# endpoint), or why none were (instance metadata not answering) (issue 27).
# Slot items of names held shared are no foreign items.
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

# the Scans each open sent (INFO dynamodb, the HTTP requests)
scans() { redis-cli -p "$port" INFO dynamodb | tr -d '\r' | sed -n 's/^requests_Scan://p'; }

saved=$table table="lg-open-new-$$"
start scan-created --create-table
s1=$(scans)
stop
start scan-again
s2=$(scans)
stop
table=$saved
if [ "$s1" = 0 ] && [ "$s2" = 1 ] && ! grep -q "not leasegate's" "$dir/scan-again.log"; then
	ok "no Scan when --create-table made the table; one at the next open, no warning"
else bad "Scans at open: $s1 when created (want 0), $s2 after (want 1)" "$(cat "$dir/scan-again.log")"; fi

# a table where names were held shared keeps slot items (SLOT#<k>#<name>):
# leasegate's own, no warning at the next open
saved=$table table="lg-open-slots-$$"
start slots-first --create-table
printf 'LOCK.ACQUIRE r 5000 SHARED\nLOCK.ACQUIRE s 5000 LIMIT 2 DETACH\n' | redis-cli -p "$port" >/dev/null
stop
start slots-again
stop
table=$saved
if grep -q "DynamoDB table lg-open-slots-$$ open" "$dir/slots-again.log" &&
	! grep -q "not leasegate's" "$dir/slots-again.log"; then
	ok "slot items of shared holds: no warning at the next open"
else bad "slot items warned about" "$(cat "$dir/slots-again.log")"; fi

# boto3 on moto: python3 -c CODE ARGS...
boto() {
	code=$1; shift
	AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK python3 -c "
import sys, boto3
d = boto3.client('dynamodb', endpoint_url='$LG_MOTO', region_name='us-east-1')
$code" "$@"
}

# a table of replicas in --heartbeat replica keeps their session items
# (SESSION#<replica>#<incarnation>, _type SESSION) and revocations
# (REVOKE#SESSION#..., _type REVOKE), in the layouts the store writes
# (it_store_dynamodb reads them so with boto3): leasegate's own, no warning
saved=$table table="lg-open-sessions-$$"
start sessions-first --create-table
stop
boto "
s = 'SESSION#gw-1#' + '0' * 32
d.put_item(TableName=sys.argv[1], Item={'pk': {'S': s}, '_type': {'S': 'SESSION'},
    'rvn': {'S': 'r1'}, 'maxLeaseMs': {'N': '30000'}, 'revSeq': {'N': '1'}})
d.put_item(TableName=sys.argv[1], Item={'pk': {'S': 'REVOKE#' + s}, '_type': {'S': 'REVOKE'},
    'revs': {'SS': ['0000000000000000007#' + '0' * 64 + '#x']}})" "$table"
start sessions-again
stop
table=$saved
if grep -q "DynamoDB table lg-open-sessions-$$ open" "$dir/sessions-again.log" &&
	! grep -q "not leasegate's" "$dir/sessions-again.log"; then
	ok "session and revocation items: no warning at the next open"
else bad "session or revocation items warned about" "$(cat "$dir/sessions-again.log")"; fi
orders="lg-orders-$$"
boto "
d.create_table(TableName=sys.argv[1], BillingMode='PAY_PER_REQUEST',
    AttributeDefinitions=[{'AttributeName': 'orderId', 'AttributeType': 'S'}],
    KeySchema=[{'AttributeName': 'orderId', 'KeyType': 'HASH'}])
for i in range(3):
    d.put_item(TableName=sys.argv[1], Item={'orderId': {'S': 'o%d' % i},
        'customer': {'S': 'c'}, 'total': {'N': '12'}})" "$orders"
saved=$table table=$orders
start orders
stop
table=$saved
want="DynamoDB table $orders holds items that are not leasegate's locks: 3 of the first 3 read, with attributes"
line=$(grep -F "$want" "$dir/orders.log")
case $line in
*orderId*customer*total* | *orderId*total*customer* | *customer*orderId*total* | *customer*total*orderId* | *total*orderId*customer* | *total*customer*orderId*)
	ok "a business table with string keys: opened, with a warning naming its attributes" ;;
*) bad "a business table: no warning '$want ...orderId, customer, total'" "$(cat "$dir/orders.log")" ;;
esac

numeric="lg-numeric-$$"
boto "
d.create_table(TableName=sys.argv[1], BillingMode='PAY_PER_REQUEST',
    AttributeDefinitions=[{'AttributeName': 'id', 'AttributeType': 'N'},
        {'AttributeName': 'at', 'AttributeType': 'B'}],
    KeySchema=[{'AttributeName': 'id', 'KeyType': 'HASH'},
        {'AttributeName': 'at', 'KeyType': 'RANGE'}])" "$numeric"
port=$(gw_free_port)
AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO \
	AWS_REGION=us-east-1 timeout 20 "$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 \
	--table "$numeric" 2>"$dir/numeric.log"
rc=$?
want="table $numeric has partition key id (number N), sort key at (binary B); a lock table's keys must be strings"
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q -F "$want" "$dir/numeric.log"; then
	ok "a table with number/binary keys: refused, naming the keys and types (exit $rc)"
else bad "a table with number/binary keys (exit $rc): no '$want'" "$(cat "$dir/numeric.log")"; fi

# --- credentials: what is tried, then what was found, or why none
# line N of log that has text (0: none)
line_of() { grep -n -F "$2" "$1" | head -1 | cut -d: -f1 | grep . || echo 0; }
a=$(line_of "$dir/create.log" "credentials: trying the environment (AWS_ACCESS_KEY_ID)")
b=$(line_of "$dir/create.log" "credentials from the environment (AWS_ACCESS_KEY_ID)")
if [ "$a" -gt 0 ] && [ "$b" -gt "$a" ] && ! grep -q "instance metadata" "$dir/create.log"; then
	ok "keys in the environment: tried (line $a), then found (line $b)"
else bad "keys in the environment: tried at line $a, found at line $b" "$(cat "$dir/create.log")"; fi

# nothing but instance metadata, which does not answer: tried, then failed
imds="http://127.0.0.1:$(gw_free_port)"
port=$(gw_free_port)
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
	-u AWS_WEB_IDENTITY_TOKEN_FILE -u AWS_CONTAINER_CREDENTIALS_FULL_URI \
	-u AWS_CONTAINER_CREDENTIALS_RELATIVE_URI HOME="$dir" \
	AWS_SHARED_CREDENTIALS_FILE="$dir/none" AWS_CONFIG_FILE="$dir/none" \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="$imds" AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO \
	AWS_REGION=us-east-1 "$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 \
	--table "$table" 2>"$dir/imds.log" &
pid=$!
i=0
until grep -q "credentials: none from" "$dir/imds.log" || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
stop
a=$(line_of "$dir/imds.log" "credentials: trying EC2 instance metadata (IMDSv2 at $imds); nothing in the environment, web identity, shared files or container")
b=$(line_of "$dir/imds.log" "credentials: none from EC2 instance metadata (IMDSv2 at $imds): instance metadata credentials:")
if [ "$a" -gt 0 ] && [ "$b" -gt "$a" ] && ! grep -q "credentials from" "$dir/imds.log"; then
	ok "only instance metadata, not answering: tried (line $a), then said failed (line $b), never found"
else bad "instance metadata: tried at line $a, failed at line $b" "$(cat "$dir/imds.log")"; fi

# a container endpoint that answers: tried, then found, and the table opens
cport=$(gw_free_port)
python3 -c '
import http.server, json, os, sys
body = json.dumps({"AccessKeyId": os.environ["LG_AK"], "SecretAccessKey": os.environ["LG_SK"]}).encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "$cport" &
stub=$!
port=$(gw_free_port)
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
	-u AWS_WEB_IDENTITY_TOKEN_FILE HOME="$dir" \
	AWS_SHARED_CREDENTIALS_FILE="$dir/none" AWS_CONFIG_FILE="$dir/none" \
	AWS_CONTAINER_CREDENTIALS_FULL_URI="http://127.0.0.1:$cport/creds" \
	AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO AWS_REGION=us-east-1 "$LG_BIN" --port "$port" \
	--pg-port 0 --admin-port 0 --table "$table" 2>"$dir/container.log" &
pid=$!
gw_ready "$port"
ready=$?
stop
kill $stub 2>/dev/null
wait $stub 2>/dev/null
a=$(line_of "$dir/container.log" "credentials: trying the container endpoint http://127.0.0.1:$cport/creds; nothing in the environment, web identity or shared files")
b=$(line_of "$dir/container.log" "credentials from the container endpoint http://127.0.0.1:$cport/creds")
# (an open tried before the endpoint answered must not say the endpoint is unset)
if [ "$ready" = 0 ] && [ "$a" -gt 0 ] && [ "$b" -gt "$a" ] &&
	! grep -q "no AWS_CONTAINER_CREDENTIALS_FULL_URI" "$dir/container.log"; then
	ok "a container endpoint: tried (line $a), then found (line $b), the table open"
else bad "a container endpoint (ready $ready): tried at line $a, found at line $b" "$(cat "$dir/container.log")"; fi

echo "1..$n"
exit $fail
