#!/bin/sh
# acl_clients.sh: users and ACLs through real clients — redis-cli (AUTH,
# HELLO 3 AUTH over RESP3, NOPERM, ACL LIST/LOAD), redis-py and psycopg 3
# (Debian's /usr/bin/python3) and psql — against $LG_BIN with --aclfile.
# Prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port) pgport=$(gw_free_port)
dir=$(mktemp -d /tmp/lg-acl-cli.XXXXXX)
acl=$dir/users.acl log=$dir/log
cat >"$acl" <<'USERS'
# users of acl_clients.sh
user default off
user app on >apppw ~orders:* ~pg:shop:* +@lock +@leader +@connection
user ops on >opspw allkeys +@all
USERS
chmod 600 "$acl"
"$LG_BIN" --port "$port" --pg-port "$pgport" --admin-port 0 --aclfile "$acl" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
i=0
until redis-cli -p "$port" PING 2>/dev/null | grep -q NOAUTH; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "leasegate did not start"; cat "$log"; exit 1; }
	sleep 0.05
done

n=0 fail=0
report() { # report "what" "got" "want"
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"; echo "  got:  $2"; echo "  want: $3"; fail=1
	fi
}
rc() { redis-cli -p "$port" --no-auth-warning "$@" 2>&1; }

report "NOAUTH before AUTH" "$(rc PING)" "NOAUTH Authentication required."
report "AUTH user pass" "$(rc --user app --pass apppw LOCK.STATE orders:1)" ""
report "a lock name outside the patterns" \
	"$(rc --user app --pass apppw LOCK.ACQUIRE invoices:1 5000)" \
	"NOPERM No permissions to access a key"
report "a command outside the categories" "$(rc --user app --pass apppw CONFIG GET port)" \
	"NOPERM User app has no permissions to run the 'config|get' command"
report "WRONGPASS" "$(rc --user app --pass nope PING | head -1)" \
	"AUTH failed: WRONGPASS invalid username-password pair or user is disabled."
got=$(rc -3 HELLO 3 AUTH app apppw | tr -d '\n')
case "$got" in
*server*redis*proto*3*) report "HELLO 3 AUTH (RESP3)" ok ok ;;
*) report "HELLO 3 AUTH (RESP3)" "$got" "a map with proto 3" ;;
esac
# (redis-cli -3 says HELLO 3 first itself: NOAUTH, then ours)
report "HELLO 3 AUTH, wrong password" "$(rc -3 HELLO 3 AUTH app nope | grep -o "WRONGPASS.*")" \
	"WRONGPASS invalid username-password pair or user is disabled."
list=$(rc --user ops --pass opspw ACL LIST)
case "$list" in
*apppw* | *opspw* | *'>'*) report "ACL LIST shows no password" "$list" "digests only" ;;
*"user app on #"*) report "ACL LIST shows no password" ok ok ;;
*) report "ACL LIST shows no password" "$list" "user app on #..." ;;
esac

# leasegate lock: AUTH as a user with --user and -a
"$LG_BIN" lock -p "$port" --user app -a apppw --no-wait orders:cli -- true 2>"$dir/cli.err"
report "leasegate lock --user: a lock the patterns cover" "$?" "0"
"$LG_BIN" lock -p "$port" --user app -a apppw --no-wait invoices:cli -- true 2>"$dir/cli.err"
rc=$?
report "leasegate lock --user: outside the patterns, not run" \
	"$rc $(grep -c 'NOPERM No permissions to access a key' "$dir/cli.err")" "69 1"
"$LG_BIN" lock -p "$port" --user app -a nope --no-wait orders:cli -- true 2>"$dir/cli.err"
report "leasegate lock --user: wrong password" \
	"$? $(grep -c WRONGPASS "$dir/cli.err")" "69 1"

# psql: the same users
pq() { PGPASSWORD=$2 PGCONNECT_TIMEOUT=5 psql "host=127.0.0.1 port=$pgport user=$1 dbname=$3 sslmode=disable" -XAtqc "$4" 2>&1; }
report "psql: pg_advisory_lock in pg:shop:*" "$(pq app apppw shop 'SELECT pg_try_advisory_lock(1)')" "t"
report "psql: pg_advisory_lock outside" "$(pq app apppw other 'SELECT pg_try_advisory_lock(1)' | head -1)" \
	'ERROR:  permission denied for lock "pg:other:1"'
report "psql: wrong password" "$(pq app nope shop 'SELECT 1' | grep -o 'password authentication failed for user "app"')" \
	'password authentication failed for user "app"'

# ACL LOAD after an edit, seen by redis-py and psycopg 3
cat >"$acl" <<'USERS'
user app on >apppw ~invoices:* ~pg:other:* +@lock +@connection
user ops on >opspw allkeys +@all
USERS
report "ACL LOAD" "$(rc --user ops --pass opspw ACL LOAD)" "OK"
out=$(/usr/bin/python3 - "$port" "$pgport" <<'PY' 2>&1
import sys
import psycopg
import redis

port, pgport = int(sys.argv[1]), int(sys.argv[2])
r = redis.Redis(port=port, username="app", password="apppw")
print("redis-py acquire invoices:", r.execute_command("LOCK.ACQUIRE", "invoices:1", 5000) > 0)
try:
    r.execute_command("LOCK.ACQUIRE", "orders:1", 5000)
    print("redis-py orders: allowed")
except redis.exceptions.NoPermissionError as e:
    print("redis-py orders:", e)
try:
    redis.Redis(port=port, username="app", password="wrong").ping()
except redis.exceptions.ResponseError as e:  # redis-py 4.3: WRONGPASS as is
    print("redis-py wrong password:", e)
with psycopg.connect(host="127.0.0.1", port=pgport, user="app", password="apppw",
                     dbname="other", sslmode="disable") as c:
    print("psycopg lock:", c.execute("SELECT pg_try_advisory_lock(5)").fetchone()[0])
with psycopg.connect(host="127.0.0.1", port=pgport, user="app", password="apppw",
                     dbname="shop", sslmode="disable") as c:
    try:
        c.execute("SELECT pg_try_advisory_lock(5)")
    except psycopg.errors.InsufficientPrivilege as e:
        print("psycopg denied:", e.sqlstate)
PY
)
report "redis-py and psycopg after ACL LOAD" "$out" "redis-py acquire invoices: True
redis-py orders: No permissions to access a key
redis-py wrong password: WRONGPASS invalid username-password pair or user is disabled.
psycopg lock: True
psycopg denied: 42501"
report "no password in the log" "$(grep -c -e apppw -e opspw -e nope "$log")" "0"
exit $fail
