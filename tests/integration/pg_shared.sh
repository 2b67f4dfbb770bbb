#!/bin/sh
# pg_shared.sh: PostgreSQL's shared advisory locks (pg_advisory_lock_shared,
# pg_try_advisory_lock_shared, pg_advisory_unlock_shared and the xact
# variants) as PostgreSQL 15 answers them: one scripted sequence of three
# sessions (tests/integration/pg/pg_shared_test.py: readers shutting out a
# writer, reentrant shared holds, unlocks not held and their WARNINGs, a
# writer waiting for the last reader, a reader waiting for the writer,
# transaction-level shared holds ending at COMMIT, an (int, int) key, the
# pg_locks rows of each step) run against PostgreSQL 15 and against
# $LG_BIN, whose outputs must be the same line for line; then two
# gateways on one moto table (tests/integration/pg/pg_shared_replicas.py:
# readers on both, writers waiting across them, a reader's gateway killed).
# Prints "ok N - what" / "not ok N - what".
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/gw.sh"
. "$here/pg/pgcluster.sh"
work=$(mktemp -d /tmp/lg-pg-shared.XXXXXX)
chmod 755 "$work"
lgpid=
trap '[ -z "$lgpid" ] || { kill $lgpid; wait $lgpid; } 2>/dev/null; pgc_stop; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
n=0 fail=0
say() { n=$((n + 1)); echo "$1 $n - $2"; [ "$1" = ok ] || fail=1; }
. "$here/pg/twin.sh"

twin_run "$here/pg/pg_shared_test.py" 120 || exit 1
if diff -u "$work/postgres.out" "$work/leasegate.out" >"$work/diff"; then
	say ok "shared advisory locks answer as on PostgreSQL 15 ($(wc -l <"$work/postgres.out") lines)"
else
	say "not ok" "shared advisory locks answer as on PostgreSQL 15 (- PostgreSQL, + leasegate)"
	sed 's/^/# /' "$work/diff"
fi
kill $lgpid; wait $lgpid 2>/dev/null; lgpid=

# two gateways on one table of moto (3 s leases): readers on both, writers
# waiting across them, a reader's gateway killed
[ -n "${LG_MOTO:-}" ] || { say "not ok" "LG_MOTO is set (run through tests/run-integration.sh)"; exit 1; }
table="lg-shared-$$"
gws=
for i in 1 2; do
	p=$(gw_free_port) pg=$(gw_free_port)
	AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_REGION=us-east-1 \
		AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO "$LG_BIN" --port "$p" --pg-port "$pg" \
		--pg-password s3cret --admin-port 0 --holder-label "gw-$i" --table "$table" \
		--create-table --default-lease 3s 2>"$work/gw$i.log" &
	gws="$gws $!"
	eval "pg$i=$pg pid$i=$!"
	gw_ready "$p" 300 || { say "not ok" "gateway $i starts"; sed 's/^/# /' "$work/gw$i.log"; kill $gws; exit 1; }
done
LG_PG1=$pg1 LG_PG2=$pg2 LG_GW2_PID=$pid2 timeout -k 5 120 /usr/bin/python3 \
	"$here/pg/pg_shared_replicas.py" >"$work/replicas.out" 2>&1
rc=$?
kill $gws 2>/dev/null; wait 2>/dev/null
while read -r line; do
	case $line in
	"ok "*) say ok "two gateways: ${line#ok * - }" ;;
	"not ok "*) say "not ok" "two gateways: ${line#not ok * - }" ;;
	*) echo "$line" ;;
	esac
done <"$work/replicas.out"
[ $rc -eq 0 ] || { say "not ok" "pg_shared_replicas.py exits 0 (it exited $rc)"; sed 's/^/# /' "$work/gw1.log" | tail -5; }
exit $fail
