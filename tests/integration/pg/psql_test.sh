#!/bin/sh
# psql, scripted, against leasegate's PostgreSQL port or any server given by
# PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE. The holder is one psql
# session running the script below; the other session is a psql started by
# the script itself (\!) while the holder keeps its locks. Prints one
# `ok`/`not ok` line per check.
set -u
D=psql
k=1000 # this driver's keys: 1000..1009 (the \! lines name 1000 and 1001 too)
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
other() { psql -X -q -At -P null='(null)' -c "$1" 2>&1; }

psql -X -q -At -v ON_ERROR_STOP=1 -P null='(null)' -v k=$k -v k1=$((k + 1)) -v k2=$((k + 2)) \
	>"$out" 2>"$out.err" <<'EOF_SQL'
SELECT 1;
SELECT pg_advisory_lock(:k);
SELECT leasegate.token(:k);
\! psql -X -q -At -c "SELECT pg_try_advisory_lock(1000)"
SELECT pg_advisory_unlock(:k);
\! psql -X -q -At -c "SELECT pg_try_advisory_lock(1000)"
SELECT pg_advisory_unlock(:k);
BEGIN;
SELECT pg_advisory_xact_lock(:k1);
\! psql -X -q -At -c "SELECT pg_try_advisory_lock(1001)"
COMMIT;
\! psql -X -q -At -c "SELECT pg_try_advisory_lock(1001)"
SELECT leasegate.acquire('pg-test-psql', 30000);
\! psql -X -q -At -P null='(null)' -c "SELECT leasegate.acquire('pg-test-psql', 30000)"
SELECT leasegate.release('pg-test-psql');
SELECT pg_try_advisory_lock(:k2);
EOF_SQL
rc=$?

n=0
# check WHAT WANT: the next line of the holder's output is WANT (a
# pattern for case, e.g. [1-9]*)
check() {
	n=$((n + 1))
	got=$(sed -n "${n}p" "$out")
	case $got in
	$2) echo "ok $D: $1" ;;
	*) echo "not ok $D: $1: got '$got', want '$2'" ;;
	esac
}
check "connect with SCRAM, SELECT 1" 1
check "pg_advisory_lock returns void (an empty value, not NULL)" ""
check "leasegate.token of the held lock is a positive bigint" "[1-9]*"
check "another session's try is refused while held" f
check "pg_advisory_unlock returns true" t
check "then the other session's try succeeds (and its exit releases it)" t
check "unlock of a lock not held: false" f
check "pg_advisory_xact_lock in a transaction returns void" ""
check "xact lock: another session's try refused in the transaction" f
check "xact lock released at COMMIT" t
check "leasegate.acquire returns a token" "[1-9]*"
check "leasegate.acquire by another session: NULL" "(null)"
check "leasegate.release: true" t
check "holder takes a lock" t
got=$(grep -c 'WARNING:' "$out.err")
[ "$rc" = 0 ] && [ "$got" = 1 ]
check2() { if [ "$2" = "$3" ]; then echo "ok $D: $1"; else echo "not ok $D: $1: got '$3', want '$2'"; fi; }
check2 "the script ran to its end, one WARNING notice (for the unlock not held)" "0 1" "$rc $got"
[ "$rc" = 0 ] || sed 's/^/# /' "$out.err"

# the holder's psql has exited: its lock is free at once (2 s at most)
i=0
until [ "$(other "SELECT pg_try_advisory_lock($((k + 2)))")" = t ] || [ $i -ge 200 ]; do
	i=$((i + 1))
	sleep 0.01
done
check2 "the holder's disconnect releases it (the other's try succeeds within 2 s)" t \
	"$(other "SELECT pg_try_advisory_lock($((k + 2)))")"
check2 "two statements in one query string: one answer each" "t
t" "$(other "SELECT pg_try_advisory_lock($k); SELECT pg_advisory_unlock($k)")"

err=$(PGPASSWORD="wrong-${PGPASSWORD:-}" psql -X -At -c 'SELECT 1' 2>&1)
rc=$?
# libpq prints no SQLSTATE for a failed connection: 28P01's message
case $err in *"password authentication failed"*) got=refused ;; *) got=$err ;; esac
check2 "a wrong password is refused (28P01: password authentication failed, exit 2)" "2 refused" "$rc $got"
