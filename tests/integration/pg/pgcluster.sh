# pgcluster.sh: a throw-away PostgreSQL 15 cluster, sourced (POSIX sh) by
# tests/integration/pg/run_drivers.sh (PG_TARGET=postgres) and by
# bench/pg_compare.sh. SCRAM-SHA-256 over TCP on 127.0.0.1, a role
# `leasegate` (password s3cret) owning a database `locks`.
#
#   pgc_start DIR PORT [postgres -c options...]   initdb in DIR/data, start
#   pgc_stop                                       stop it (fast), keep DIR
#   pgc_sql SQL                                    run SQL as the superuser
#
# As root the server runs as the `postgres` user (or nobody): DIR is handed
# to that user. PG_BINDIR overrides /usr/lib/postgresql/15/bin.
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
pgc_dir=
pgc_port=

_pgc() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$pgc_user" -- "$@"
	else
		"$@"
	fi
}

pgc_start() {
	pgc_dir=$1 pgc_port=$2
	shift 2
	[ -x "$PG_BINDIR/initdb" ] || { echo "no PostgreSQL server in $PG_BINDIR (apt-get install postgresql)" >&2; return 1; }
	pgc_user=postgres
	id postgres >/dev/null 2>&1 || pgc_user=nobody
	mkdir -p "$pgc_dir/data"
	printf 's3cret\n' >"$pgc_dir/pw"
	[ "$(id -u)" = 0 ] && chown -R "$pgc_user" "$pgc_dir"
	_pgc "$PG_BINDIR/initdb" -D "$pgc_dir/data" -U postgres --auth-local=trust \
		--auth-host=scram-sha-256 --pwfile="$pgc_dir/pw" -E UTF8 --locale=C.UTF-8 \
		>"$pgc_dir/initdb.log" 2>&1 || { cat "$pgc_dir/initdb.log" >&2; return 1; }
	_pgc "$PG_BINDIR/pg_ctl" -D "$pgc_dir/data" -l "$pgc_dir/server.log" -w -t 30 start \
		-o "-p $pgc_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$pgc_dir \
		    -c password_encryption=scram-sha-256 -c fsync=off $*" \
		>"$pgc_dir/pg_ctl.log" 2>&1 || { cat "$pgc_dir/pg_ctl.log" "$pgc_dir/server.log" >&2; return 1; }
	pgc_sql "CREATE ROLE leasegate LOGIN PASSWORD 's3cret'" >/dev/null &&
		pgc_sql "CREATE DATABASE locks OWNER leasegate" >/dev/null
}

pgc_sql() {
	_pgc "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$pgc_dir" -p "$pgc_port" \
		-U postgres -d "${PGC_DB:-postgres}" -c "$1"
}

pgc_stop() {
	[ -n "$pgc_dir" ] && [ -f "$pgc_dir/data/postmaster.pid" ] &&
		_pgc "$PG_BINDIR/pg_ctl" -D "$pgc_dir/data" -m fast -w stop >/dev/null 2>&1
	return 0
}
