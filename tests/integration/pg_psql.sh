#!/bin/sh
# pg_psql.sh: scripted psql sessions (psql -v ON_ERROR_STOP=1, unaligned,
# tuples only) against $LG_BIN's PostgreSQL port with SCRAM, checking each
# output, and \set variables as an interactive user would use them;
# prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
. "$(dirname "$0")/../support/gw.sh"
port=$(gw_free_port)
pgport=$(gw_free_port)
log=$(mktemp /tmp/lg-psql.XXXXXX)
"$LG_BIN" --port "$port" --pg-port "$pgport" --pg-password s3cret --admin-port 0 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
export PGPASSWORD=s3cret PGHOST=127.0.0.1 PGPORT=$pgport PGUSER=leasegate PGDATABASE=locks
i=0
until psql -X -c 'SELECT 1' >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "leasegate did not start"; cat "$log"; exit 1; }
	sleep 0.05
done

n=0 fail=0
check() { # check "what" "expected output" "script"
	n=$((n + 1))
	got=$(printf '%s\n' "$3" | psql -X -q -A -t -v ON_ERROR_STOP=1 2>&1)
	if [ "$got" = "$2" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"; echo "  got:  $got"; echo "  want: $2"; fail=1
	fi
}

check "lock, try, unlock (void, bool)" "
t
t
t
WARNING:  you don't own a lock of type ExclusiveLock
f" "SELECT pg_advisory_lock(42);
SELECT pg_try_advisory_lock(42);
SELECT pg_advisory_unlock(42);
SELECT pg_advisory_unlock(42);
SELECT pg_advisory_unlock(42);"

check "unlock not held warns" "WARNING:  you don't own a lock of type ExclusiveLock
f" "SELECT pg_advisory_unlock(7);"

check "leasegate.acquire token and release" "1
t
f" "SELECT leasegate.acquire('psql-job', 30000);
SELECT leasegate.release('psql-job');
SELECT leasegate.release('psql-job');"

check "\\set variables, xact lock in a transaction" "t
t
1" "\\set key 99
BEGIN;
SELECT pg_try_advisory_xact_lock(:key);
SELECT pg_try_advisory_xact_lock(:key);
SELECT leasegate.token(:key);
COMMIT;"

check "SET / SHOW" "250ms
UTC" "SET lock_timeout = '250ms';
SHOW lock_timeout;
SHOW TimeZone;"

check "an unsupported statement stops the script" "ERROR:  leasegate serves locks only: SELECT * FROM pg_class
HINT:  leasegate answers the advisory lock functions, leasegate.acquire/release/state/token/transact/check, transaction control and SET/SHOW; see docs/postgresql.md." "SELECT * FROM pg_class;
SELECT 1;"

check "shared locks, reentrant (tests/integration/pg_shared.sh has the rest)" "t
t
t
t" "SELECT pg_try_advisory_lock_shared(1);
SELECT pg_try_advisory_lock_shared(1);
SELECT pg_advisory_unlock_shared(1);
SELECT pg_advisory_unlock_shared(1);"

n=$((n + 1))
got=$(PGPASSWORD=wrong psql -X -c 'SELECT 1' 2>&1)
case "$got" in
*'password authentication failed for user "leasegate"'*) echo "ok $n - wrong password refused" ;;
*) echo "not ok $n - wrong password refused"; echo "  got: $got"; fail=1 ;;
esac

exit $fail
