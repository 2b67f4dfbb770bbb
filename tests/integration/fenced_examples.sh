#!/bin/sh
# fenced_examples: the fenced writes of docs/guides/fenced-writes.md run
# against a gateway on moto's DynamoDB with --fenced-tables: the examples
# it links, examples/fenced.py (boto3's TypeSerializer + redis-py) and
# examples/fenced.js (@aws-sdk/util-dynamodb's marshall + ioredis,
# installed with `npm ci` from node_fenced/package-lock.json into
# $LG_WORK), as they are; and the page's own ```python and ```js blocks
# (those after a "fenced_examples.sh runs this block" comment), with only
# the port and the table changed. The items each wrote are read back with
# boto3. Prints "ok N - what" / "not ok N - what".
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
: "${LG_MOTO:?run under tests/run-integration.sh (LG_MOTO)}"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/fenced_examples.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port)
orders=lgfx-$$-orders
cat >"$work/boto.py" <<'EOF'
import os, sys, boto3
d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'], region_name='us-east-1',
                 aws_access_key_id=os.environ['LG_AK'], aws_secret_access_key=os.environ['LG_SK'])
op, t = sys.argv[1:3]
if op == 'create':
    d.create_table(TableName=t, BillingMode='PAY_PER_REQUEST',
                   AttributeDefinitions=[{'AttributeName': 'id', 'AttributeType': 'S'}],
                   KeySchema=[{'AttributeName': 'id', 'KeyType': 'HASH'}])
elif op == 'delete-items':
    for i in ('order-0', 'order-1', 'order-2'):
        d.delete_item(TableName=t, Key={'id': {'S': i}})
else:
    for i in ('order-0', 'order-1', 'order-2'):
        it = d.get_item(TableName=t, Key={'id': {'S': i}}, ConsistentRead=True).get('Item', {})
        print(i, it.get('status', {}).get('S'), it.get('writtenUnderToken', {}).get('N'))
EOF
python3 "$work/boto.py" create "$orders"
AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK "$LG_BIN" --port "$port" --pg-port 0 \
	--admin-port 0 --table "lgfx-$$-locks" --create-table --endpoint "$LG_MOTO" \
	--region us-east-1 --fenced-tables "$orders" 2>"$work/gw.log" &
pid=$!
# ready: the Redis port (open from the start) answers PONG, no longer -LOADING
gw_ready "$port" || { notok "leasegate did not start"; cat "$work/gw.log"; exit 1; }

# The guide's blocks: the ```LANG block after each marker comment, with
# this run's port and table.
doc=$root/docs/guides/fenced-writes.md
snippet() { # snippet LANG OUT
	awk -v lang="$1" '/^<!-- tests\/integration\/fenced_examples.sh runs this block -->$/ { on = 1; next }
		on && $0 == "```" lang { take = 1; next }
		take && /^```$/ { exit }
		on && !take && /^```/ { on = 0 }
		take' "$doc" | sed -e "s/port=6379/port=$port/; s/port: 6379/port: $port/" \
		-e "s/\"orders\"/\"$orders\"/; s/'orders'/'$orders'/" >"$2"
	grep -q "LOCK.TRANSACT" "$2" && grep -q "$port" "$2" && grep -q "$orders" "$2"
}
got_items() { # got_items ID: "status token" of the item ID
	python3 "$work/boto.py" get "$orders" | sed -n "s/^$1 //p"
}
if snippet python "$work/doc.py" &&
	PYTHONPATH=/usr/lib/python3/dist-packages python3 "$work/doc.py" >"$work/docpy.out" 2>&1; then
	ok "the guide's Python block runs"
else
	notok "the guide's Python block runs"; sed 's/^/# /' "$work/doc.py" "$work/docpy.out"
fi
got=$(got_items order-1)
case $got in "shipped "[0-9]*) ok "its item written under token ${got#shipped }" ;;
*) notok "the guide's Python block wrote its item"; echo "# got: $got" ;; esac
python3 "$work/boto.py" delete-items "$orders"

# Python: boto3 (pyenv's python3) and redis-py (Debian's dist-packages).
if PYTHONPATH=/usr/lib/python3/dist-packages python3 "$root/examples/fenced.py" --port "$port" \
	--table "$orders" --lock py-report >"$work/py.out" 2>&1; then
	ok "examples/fenced.py runs"
else
	notok "examples/fenced.py runs"; sed 's/^/# /' "$work/py.out"
fi
token=$(sed -n 's/^holding py-report with fencing token \([0-9]*\)$/\1/p' "$work/py.out")
want="order-0 shipped $token
order-1 shipped $token
order-2 shipped $token"
got=$(python3 "$work/boto.py" get "$orders")
[ -n "$token" ] && [ "$got" = "$want" ] && ok "its items written under token $token" ||
	{ notok "its items written"; echo "# got: $got"; }

# Node.js: ioredis and @aws-sdk/util-dynamodb at the versions of the lockfile.
python3 "$work/boto.py" delete-items "$orders"
cp "$here/node_fenced/package.json" "$here/node_fenced/package-lock.json" "$work/"
if ! (cd "$work" && npm ci --no-audit --no-fund >npm.log 2>&1); then
	notok "npm ci (ioredis, @aws-sdk/util-dynamodb)"; sed 's/^/# /' "$work/npm.log"
	exit 1
fi
if NODE_PATH="$work/node_modules" node "$root/examples/fenced.js" 127.0.0.1 "$port" "$orders" \
	js-report >"$work/js.out" 2>&1; then
	ok "examples/fenced.js runs"
else
	notok "examples/fenced.js runs"; sed 's/^/# /' "$work/js.out"
fi
token=$(sed -n 's/^holding js-report with fencing token \([0-9]*\)$/\1/p' "$work/js.out")
want="order-0 shipped $token
order-1 shipped $token
order-2 shipped $token"
got=$(python3 "$work/boto.py" get "$orders")
[ -n "$token" ] && [ "$got" = "$want" ] && ok "its items written under token $token" ||
	{ notok "its items written"; echo "# got: $got"; }

# The guide's Node.js block, an ES module in $work (its imports resolve in
# $work/node_modules).
python3 "$work/boto.py" delete-items "$orders"
if snippet js "$work/doc.mjs" && (cd "$work" && node doc.mjs) >"$work/docjs.out" 2>&1; then
	ok "the guide's Node.js block runs"
else
	notok "the guide's Node.js block runs"; sed 's/^/# /' "$work/doc.mjs" "$work/docjs.out"
fi
got=$(got_items order-1)
case $got in "shipped "[0-9]*) ok "its item written under token ${got#shipped }" ;;
*) notok "the guide's Node.js block wrote its item"; echo "# got: $got" ;; esac
exit $fail
