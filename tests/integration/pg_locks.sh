#!/bin/sh
# pg_locks.sh: pg_locks and pg_database's oid as PostgreSQL's regression
# test (advisory_lock.sql) and its users query them: one scripted sequence
# (tests/integration/pg/pg_locks_test.py: three sessions holding bigint,
# int pair and xact locks, one waiting; psql's \gset of the database oid,
# the regression test's two queries; every column through psycopg 3 with
# $n parameters) run against PostgreSQL 15 and against $LG_BIN, whose
# outputs must be the same line for line; then the shapes leasegate
# refuses (0A000). Prints "ok N - what" / "not ok N - what".
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/gw.sh"
. "$here/pg/pgcluster.sh"
work=$(mktemp -d /tmp/lg-pg-locks.XXXXXX)
chmod 755 "$work"
lgpid=
trap '[ -z "$lgpid" ] || { kill $lgpid; wait $lgpid; } 2>/dev/null; pgc_stop; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
n=0 fail=0
say() { n=$((n + 1)); echo "$1 $n - $2"; [ "$1" = ok ] || fail=1; }
. "$here/pg/twin.sh"

twin_run "$here/pg/pg_locks_test.py" 90 || exit 1

# what only leasegate checks (the refusals) comes after the shared part
if grep -v -e '^not refused' -e '^refused with' "$work/leasegate.out" |
	diff -u "$work/postgres.out" - >"$work/diff"; then
	say ok "pg_locks and pg_database answer as on PostgreSQL 15 ($(wc -l <"$work/postgres.out") lines)"
else
	say "not ok" "pg_locks and pg_database answer as on PostgreSQL 15 (- PostgreSQL, + leasegate)"
	sed 's/^/# /' "$work/diff"
fi
if grep -q -e '^not refused' -e '^refused with' "$work/leasegate.out"; then
	say "not ok" "joins, OR, functions in WHERE, count(*) with columns: 0A000"
	grep -e '^not refused' -e '^refused with' "$work/leasegate.out" | sed 's/^/# /'
else
	say ok "joins, OR, functions in WHERE, count(*) with columns: 0A000"
fi
exit $fail
