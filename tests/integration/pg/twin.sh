# twin.sh: one scripted sequence run against PostgreSQL 15 and against
# leasegate, sourced (POSIX sh) by pg_locks.sh and pg_shared.sh after
# tests/support/gw.sh and pgcluster.sh, with $work, $LG_BIN and say()
# ("ok"/"not ok" WHAT) defined.
#
#   twin_run SCRIPT SECONDS   runs `/usr/bin/python3 SCRIPT TARGET` (PG*
#                             variables set, at most SECONDS) on a fresh
#                             PostgreSQL 15 cluster (TARGET postgres), then
#                             on $LG_BIN on the embedded store (TARGET
#                             leasegate), into $work/TARGET.out; leaves that
#                             gateway running as $lgpid (the caller stops it)
#                             and returns 1 when a server would not start.
twin_out() { # twin_out SCRIPT SECONDS TARGET PORT
	PGHOST=127.0.0.1 PGPORT=$4 PGUSER=leasegate PGPASSWORD=s3cret PGDATABASE=locks \
		timeout -k 5 "$2" /usr/bin/python3 "$1" "$3" >"$work/$3.out" 2>&1
}

twin_run() {
	_tport=$(gw_free_port)
	if ! pgc_start "$work/pg" "$_tport" >"$work/pgc.log" 2>&1; then
		say "not ok" "a PostgreSQL 15 cluster starts ($PG_BINDIR)"
		sed 's/^/# /' "$work/pgc.log"
		return 1
	fi
	if twin_out "$1" "$2" postgres "$_tport"; then
		say ok "the sequence runs on PostgreSQL 15"
	else
		say "not ok" "the sequence runs on PostgreSQL 15"
		sed 's/^/# /' "$work/postgres.out"
	fi
	pgc_stop
	_tport=$(gw_free_port)
	_tpg=$(gw_free_port)
	"$LG_BIN" --port "$_tport" --pg-port "$_tpg" --pg-password s3cret --admin-port 0 \
		2>"$work/leasegate.log" &
	lgpid=$!
	if ! gw_ready "$_tport"; then
		say "not ok" "leasegate starts"
		sed 's/^/# /' "$work/leasegate.log"
		return 1
	fi
	if twin_out "$1" "$2" leasegate "$_tpg"; then
		say ok "the sequence runs on leasegate"
	else
		say "not ok" "the sequence runs on leasegate"
		sed 's/^/# /' "$work/leasegate.out"
	fi
}
