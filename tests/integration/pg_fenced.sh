#!/bin/sh
# pg_fenced.sh: leasegate.transact() and leasegate.check() from psycopg 3
# (Debian's /usr/bin/python3, extended protocol with parameters, and a
# simple query with literals) against a gateway on moto's DynamoDB with
# --fenced-tables, items read back with boto3: a write under the lease
# commits; the client's failed condition is 23000 with the reasons; a
# table not allowed 22023; a lock taken behind the gateway's back 55000 and
# nothing written; check true / false. Under a shared hold
# (pg_advisory_lock_shared, its token from leasegate.token): a reader
# writes; a reader on a second gateway on the same table has the same
# group token and sees the write (a ConditionCheck of its own); after
# pg_advisory_unlock_shared the same write is refused (22023) and nothing
# written; a reader whose slot was taken behind its gateway's back is
# refused 55000 taken_over. Prints "ok N - what" / "not ok".
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
: "${LG_MOTO:?run under tests/run-integration.sh (LG_MOTO)}"
work=${LG_WORK:-/tmp}
. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port)
pgport=$(gw_free_port)
port2=$(gw_free_port)
pgport2=$(gw_free_port)
locks=lgpgf-$$-locks
data=lgpgf-$$-data
log=$(mktemp /tmp/lg-pgf.XXXXXX)
log2=$(mktemp /tmp/lg-pgf.XXXXXX)
boto="$work/pg_fenced_boto.py"
cat >"$boto" <<'EOF'
import os, sys, json, boto3
d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'], region_name='us-east-1',
                 aws_access_key_id=os.environ['LG_AK'], aws_secret_access_key=os.environ['LG_SK'])
op, t = sys.argv[1:3]
if op == 'create':
    d.create_table(TableName=t, BillingMode='PAY_PER_REQUEST',
                   AttributeDefinitions=[{'AttributeName': 'id', 'AttributeType': 'S'}],
                   KeySchema=[{'AttributeName': 'id', 'KeyType': 'HASH'}])
elif op == 'get':
    i = d.get_item(TableName=t, Key={'id': {'S': sys.argv[3]}}, ConsistentRead=True).get('Item')
    print(json.dumps(i, sort_keys=True) if i else 'none')
elif op == 'steal':
    d.update_item(TableName=t, Key={'pk': {'S': 'LOCK#' + sys.argv[3]}},
                  UpdateExpression='SET #o = :o, #r = :r ADD #f :one',
                  ExpressionAttributeNames={'#o': 'owner', '#r': 'rvn', '#f': 'fence'},
                  ExpressionAttributeValues={':o': {'S': 'intruder'}, ':r': {'S': 'x'},
                                             ':one': {'N': '1'}})
elif op == 'steal_slot':  # the held slot of a shared lock: another owner
    for k in range(99):
        key = {'pk': {'S': 'SLOT#%d#%s' % (k, sys.argv[3])}}
        i = d.get_item(TableName=t, Key=key, ConsistentRead=True).get('Item')
        if i and 'owner' in i:
            d.update_item(TableName=t, Key=key, UpdateExpression='SET #o = :o, #r = :r',
                          ExpressionAttributeNames={'#o': 'owner', '#r': 'rvn'},
                          ExpressionAttributeValues={':o': {'S': 'intruder'},
                                                     ':r': {'S': 'x'}})
            print(k)
            break
EOF
python3 "$boto" create "$data" || { echo "not ok 1 - create $data"; exit 1; }
AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK "$LG_BIN" --port "$port" --pg-port "$pgport" \
	--admin-port 0 --table "$locks" --create-table --endpoint "$LG_MOTO" --region us-east-1 \
	--partition-key pk --fenced-tables "$data" 2>"$log" &
pid=$!
pid2=
trap 'kill $pid $pid2 2>/dev/null; wait $pid $pid2 2>/dev/null; rm -f "$log" "$log2" "$boto"' EXIT
# ready: the Redis port (open from the start) answers PONG, no longer -LOADING
gw_ready "$port" || { echo "not ok 1 - leasegate did not start"; cat "$log"; exit 1; }
# a second gateway on the same table (readers on both)
AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK "$LG_BIN" --port "$port2" \
	--pg-port "$pgport2" --admin-port 0 --table "$locks" --endpoint "$LG_MOTO" \
	--region us-east-1 --partition-key pk --fenced-tables "$data" 2>"$log2" &
pid2=$!
gw_ready "$port2" || { echo "not ok 1 - the second leasegate did not start"; cat "$log2"; exit 1; }

BOTO="$boto" DATA="$data" LOCKS="$locks" PGPORT=$pgport PGPORT2=$pgport2 /usr/bin/python3 - <<'EOF'
import json, os, subprocess, sys
import psycopg

data, locks, boto = os.environ['DATA'], os.environ['LOCKS'], os.environ['BOTO']
n = 0
failed = False

def ok(cond, what, got=None):
    global n, failed
    n += 1
    print(('ok %d - %s' % (n, what)) if cond else ('not ok %d - %s: got %r' % (n, what, got)))
    failed |= not cond

def item(id):
    return subprocess.run(['python3', boto, 'get', data, id], check=True, capture_output=True,
                          text=True).stdout.strip()

def put(id, extra=None):
    p = {'TableName': data, 'Item': {'id': {'S': id}}}
    p.update(extra or {})
    return json.dumps([{'Put': p}])

def sqlstate(conn, sql, params):
    try:
        with conn.cursor() as c:
            c.execute(sql, params)
            return 'ok', c.fetchone()[0]
    except psycopg.Error as e:
        return e.sqlstate, str(e)

conn = psycopg.connect(host='127.0.0.1', port=int(os.environ['PGPORT']), user='leasegate',
                       dbname='locks', autocommit=True)
cur = conn.cursor()
cur.execute('SELECT leasegate.acquire(%s, %s)', ('job', 30000))
token = cur.fetchone()[0]
cur.execute('SELECT leasegate.transact(%s, %s, %s)', ('job', token, put('p1')))
ok(cur.fetchone()[0] is True and item('p1') != 'none', 'transact commits under the lease')
cur.execute("SELECT leasegate.transact('job', %d, '%s'::json)" % (token, put('p2')),
            prepare=False)
ok(item('p2') != 'none', 'transact with literals, items ::json')
cur.execute('SELECT leasegate.check(%s, %s)', ('job', token))
ok(cur.fetchone()[0] is True, 'check: held')
cur.execute('SELECT leasegate.check(%s, %s)', ('job', token + 1))
ok(cur.fetchone()[0] is False, 'check: another token')

# a request id of the client's: a resend is applied once
add = json.dumps([{'Update': {'TableName': data, 'Key': {'id': {'S': 'cnt'}},
                              'UpdateExpression': 'ADD n :one',
                              'ExpressionAttributeValues': {':one': {'N': '1'}}}}])
for _ in range(2):
    cur.execute('SELECT leasegate.transact(%s, %s, %s, %s)', ('job', token, add, 'pg-req-1'))
    ok(cur.fetchone()[0] is True, 'transact with a request id: t')
ok('"n": {"N": "1"}' in item('cnt'), 'the resend with the same request id applied once',
   item('cnt'))
st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s, %s)',
                   ('job', token, add, 'not an id'))
ok(st == '22023' and 'request id' in msg, 'a bad request id: 22023', (st, msg))

st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)',
                   ('job', token, put('p1', {'ConditionExpression': 'attribute_not_exists(id)'})))
ok(st == '23000' and 'ConditionalCheckFailed' in msg, 'client condition: 23000 with reasons',
   (st, msg))
st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)',
                   ('job', token, json.dumps([{'Put': {'TableName': 'audit', 'Item': {}}}])))
ok(st == '22023' and '--fenced-tables' in msg, 'table not allowed: 22023', (st, msg))
st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)', ('job', token, 'nope'))
ok(st == '22023', 'invalid JSON: 22023', (st, msg))
st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)', ('job', token, None))
ok(st == '22004', 'NULL: 22004', (st, msg))

subprocess.run(['python3', boto, 'steal', locks, 'job'], check=True)
st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)', ('job', token, put('p3')))
ok(st == '55000' and 'taken_over' in msg, 'lock stolen: 55000 taken_over', (st, msg))
ok(item('p3') == 'none', 'nothing written after the loss', item('p3'))
st, got = sqlstate(conn, 'SELECT leasegate.check(%s, %s)', ('job', token))
ok(st == 'ok' and got is False, 'check: lost', (st, got))

# under a shared hold: a reader (pg_advisory_lock_shared(42) of database
# locks is the lock pg:locks:42), its token the readers' group token
name = 'pg:locks:42'
cur.execute('SELECT pg_advisory_lock_shared(42)')
cur.execute('SELECT leasegate.token(42)')
rt = cur.fetchone()[0]
ok(isinstance(rt, int) and rt > 0, 'leasegate.token of a shared hold', rt)
st, got = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)', (name, rt, put('s1')))
ok(st == 'ok' and got is True and item('s1') != 'none', 'a reader writes under its shared hold',
   (st, got, item('s1')))

def check_item(id):
    return json.dumps([{'ConditionCheck': {'TableName': data, 'Key': {'id': {'S': id}},
                                           'ConditionExpression': 'attribute_exists(id)'}}])

conn2 = psycopg.connect(host='127.0.0.1', port=int(os.environ['PGPORT2']), user='leasegate',
                        dbname='locks', autocommit=True)
cur2 = conn2.cursor()
cur2.execute('SELECT pg_advisory_lock_shared(42)')
cur2.execute('SELECT leasegate.token(42)')
rt2 = cur2.fetchone()[0]
ok(rt2 == rt, 'a reader on the second gateway: the same group token', (rt, rt2))
st, got = sqlstate(conn2, 'SELECT leasegate.transact(%s, %s, %s)', (name, rt2, check_item('s1')))
ok(st == 'ok' and got is True, 'the second gateway sees the write (its ConditionCheck holds)',
   (st, got))
st, msg = sqlstate(conn2, 'SELECT leasegate.transact(%s, %s, %s)',
                   (name, rt2, check_item('s-none')))
ok(st == '23000', 'the second gateway: an item not written fails its ConditionCheck', (st, msg))

cur.execute('SELECT pg_advisory_unlock_shared(42)')
ok(cur.fetchone()[0] is True, 'the first reader unlocks')
st, msg = sqlstate(conn, 'SELECT leasegate.transact(%s, %s, %s)', (name, rt, put('s2')))
ok(st == '22023' and 'no lease' in msg, 'after the unlock the same write is refused: 22023',
   (st, msg))
ok(item('s2') == 'none', 'nothing written after the unlock', item('s2'))

k = subprocess.run(['python3', boto, 'steal_slot', locks, name], check=True,
                   capture_output=True, text=True).stdout.strip()
ok(k != '', "the second reader's slot taken behind its gateway", k)
st, msg = sqlstate(conn2, 'SELECT leasegate.transact(%s, %s, %s)', (name, rt2, put('s3')))
ok(st == '55000' and 'taken_over' in msg, 'a reader whose slot was taken: 55000 taken_over',
   (st, msg))
ok(item('s3') == 'none', 'nothing written after the loss', item('s3'))
sys.exit(1 if failed else 0)
EOF
