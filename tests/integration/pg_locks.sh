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
run() { # run TARGET PORT: the test's output in $work/TARGET.out
	PGHOST=127.0.0.1 PGPORT=$2 PGUSER=leasegate PGPASSWORD=s3cret PGDATABASE=locks \
		timeout -k 5 90 /usr/bin/python3 "$here/pg/pg_locks_test.py" "$1" >"$work/$1.out" 2>&1
}

pgport=$(gw_free_port)
if ! pgc_start "$work/pg" "$pgport" >"$work/pgc.log" 2>&1; then
	say "not ok" "a PostgreSQL 15 cluster starts ($PG_BINDIR)"
	sed 's/^/# /' "$work/pgc.log"
	exit 1
fi
if run postgres "$pgport"; then
	say ok "the sequence runs on PostgreSQL 15"
else
	say "not ok" "the sequence runs on PostgreSQL 15"
	sed 's/^/# /' "$work/postgres.out"
fi
pgc_stop

port=$(gw_free_port)
lgport=$(gw_free_port)
"$LG_BIN" --port "$port" --pg-port "$lgport" --pg-password s3cret --admin-port 0 \
	2>"$work/leasegate.log" &
lgpid=$!
gw_ready "$port" || { say "not ok" "leasegate starts"; sed 's/^/# /' "$work/leasegate.log"; exit 1; }
if run leasegate "$lgport"; then
	say ok "the sequence runs on leasegate"
else
	say "not ok" "the sequence runs on leasegate"
	sed 's/^/# /' "$work/leasegate.out"
fi

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
