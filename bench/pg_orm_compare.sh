#!/bin/sh
# pg_orm_compare: the lock loop of an application on a pooled SQLAlchemy
# engine (psycopg2), against leasegate's PostgreSQL port (embedded store)
# and against this machine's PostgreSQL 15, one after the other: each
# server pinned to CPU 0, the clients (PROCS processes of
# bench/pg_orm_loop.py, one pooled connection each) to CPU 1. A cycle is a
# pool checkout with its pre-ping, pg_try_advisory_lock and
# pg_advisory_unlock on a random key (4 round trips with psycopg2's
# implicit BEGIN / the pool's ROLLBACK at checkin). Prints cycles per
# second, the server's CPU time per cycle, and the ratios leasegate /
# PostgreSQL against the target of issue 29 (>= 2x). With the clients on
# one CPU, cycles/s is bounded by SQLAlchemy's own cost per cycle: the
# server CPU per cycle is what the server spends, whatever the client.
#
#   BUILD  build directory (default build); LG_BIN overrides the binary
#   PROCS  client processes (default 4); SECS  seconds per run (default 5)
#   REPEAT runs of each, interleaved, the best reported (default 3)
#   LG_ARGS more options of leasegate (say --busy-poll-us 0)
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
lg_bin=${LG_BIN:-$root/$BUILD/leasegate}
procs=${PROCS:-4}
secs=${SECS:-5}
repeat=${REPEAT:-3}
py=/usr/bin/python3
. "$root/tests/integration/pg/pgcluster.sh"
[ -x "$PG_BINDIR/postgres" ] || { echo "missing $PG_BINDIR/postgres (apt-get install postgresql-15)"; exit 2; }
$py -c 'import sqlalchemy, psycopg2' 2>/dev/null ||
	{ echo "missing python3-sqlalchemy / python3-psycopg2 (./deps.sh test)"; exit 2; }
[ -x "$lg_bin" ] || { echo "missing $lg_bin (make)"; exit 2; }

work=$(mktemp -d /tmp/pg_orm_compare.XXXXXX)
[ "$(id -u)" = 0 ] && chmod 755 "$work"
srv_cpu= cli_cpu=
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	srv_cpu="taskset -c 0" cli_cpu="taskset -c 1"
fi
lpid=
trap '[ -n "$lpid" ] && kill $lpid 2>/dev/null; pgc_stop; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pport=$(free_port)
mkdir "$work/pg"
pgc_start "$work/pg" "$pport" >"$work/pgc.log" 2>&1 || { echo "PostgreSQL did not start"; cat "$work/pgc.log"; exit 2; }
ppid=$(head -1 "$work/pg/data/postmaster.pid")
[ -n "$srv_cpu" ] && taskset -a -cp 0 "$ppid" >/dev/null
lport=$(free_port)
$srv_cpu "$lg_bin" --port 0 --admin-port 0 --pg-port "$lport" --pg-password s3cret \
	--log-level warn ${LG_ARGS:-} >"$work/leasegate.log" 2>&1 &
lpid=$!
i=0
until pg_isready -q -h 127.0.0.1 -p "$lport" -t 1; do
	i=$((i + 1))
	[ $i -gt 60 ] && { echo "leasegate did not start"; cat "$work/leasegate.log"; exit 2; }
	sleep 0.05
done

url="postgresql+psycopg2://leasegate:s3cret@127.0.0.1"
# the runs interleaved (PostgreSQL, leasegate, ...), the best of each kept:
# a machine shared with other work slows some runs down, either server's
run() { $cli_cpu $py "$root/bench/pg_orm_loop.py" "$url:$1/locks" "$procs" "$secs" "$2"; }
i=0
while [ $i -lt "$repeat" ]; do
	run "$pport" "$ppid" >>"$work/pg.runs"
	run "$lport" "$lpid" >>"$work/lg.runs"
	i=$((i + 1))
done
best() { sort -k1,1nr "$1" | head -1; }
p=$(best "$work/pg.runs")
l=$(best "$work/lg.runs")
echo "SQLAlchemy $($py -c 'import sqlalchemy; print(sqlalchemy.__version__)') + psycopg2, pooled:" \
	"checkout (pre-ping) + pg_try_advisory_lock + pg_advisory_unlock on random keys," \
	"$procs client processes, ${secs}s runs, best of $repeat${srv_cpu:+; server on CPU 0, clients on CPU 1}"
printf '%-22s %12s %12s %7s %8s\n' "" PostgreSQL leasegate ratio target
echo "$p $l" | awk '{
	r1 = $1 > 0 ? $3 / $1 : 0; r2 = $4 > 0 ? $2 / $4 : 0
	printf "%-22s %12s %12s %7.2f %8s\n", "cycles/s", $1, $3, r1, (r1 >= 2 ? ">=2 ok" : ">=2 MISS")
	printf "%-22s %12s %12s %7.2f %8s\n", "server CPU us/cycle", $2, $4, r2, (r2 >= 2 ? ">=2 ok" : ">=2 MISS")
}'
exit 0
