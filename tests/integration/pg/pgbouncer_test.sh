#!/bin/sh
# pgbouncer_test: Debian's pgbouncer in front of the server at PGHOST:PGPORT
# (leasegate, or PostgreSQL), in session and in transaction pooling, each
# running pgbouncer_test.py through it. For leasegate (LG_LOG: its log),
# transaction pooling is also detected: the second client's
# SET application_name on a connection holding session locks is logged as
# a WARNING ("a pooler in transaction mode shares it").
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
dir=$(mktemp -d /tmp/pgbouncer_test.XXXXXX)
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown nobody "$dir" # pgbouncer refuses to run as root: -u nobody
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
bport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf '"%s" "%s"\n' "$PGUSER" "$PGPASSWORD" >"$dir/users.txt"
# start MODE: pgbouncer in MODE on $bport, one server connection per pool
start() {
	cat >"$dir/pgb.ini" <<EOI
[databases]
$PGDATABASE = host=$PGHOST port=$PGPORT dbname=$PGDATABASE
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bport
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = $1
default_pool_size = ${2:-5}
logfile = $dir/pgb.log
pidfile = $dir/pgb.pid
EOI
	chmod 644 "$dir/pgb.ini" "$dir/users.txt"
	if [ "$(id -u)" = 0 ]; then pgbouncer -u nobody "$dir/pgb.ini" >/dev/null 2>&1 &
	else pgbouncer "$dir/pgb.ini" >/dev/null 2>&1 & fi
	pid=$!
	i=0
	until pg_isready -q -h 127.0.0.1 -p "$bport" -t 1; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "not ok pgbouncer $1: starts"
			sed 's/^/# /' "$dir/pgb.log"
			pid=
			return 1
		fi
		sleep 0.05
	done
	echo "ok pgbouncer $1: $(pgbouncer --version | head -1) listens"
}
stop() {
	[ -n "$pid" ] && kill "$pid" && wait "$pid"
	pid=
}
rc=0
start session && PGHOST=127.0.0.1 PGPORT=$bport $py "$here/pgbouncer_test.py" session || rc=1
stop
start transaction 1 && PGHOST=127.0.0.1 PGPORT=$bport $py "$here/pgbouncer_test.py" transaction || rc=1
stop
if [ -n "${LG_LOG:-}" ]; then
	if grep -q 'application_name "app_a" are held by this connection, now application_name "app_b": a pooler in transaction mode shares it' "$LG_LOG"; then
		echo "ok pgbouncer transaction: leasegate logs the connection shared by app_a and app_b"
	else
		echo "not ok pgbouncer transaction: leasegate logs the connection shared by app_a and app_b"
		rc=1
	fi
fi
exit $rc
