#!/bin/sh
# run_drivers: unmodified PostgreSQL drivers against leasegate's PostgreSQL
# port, each one a short program of this folder making the same checks:
# connect with SCRAM-SHA-256; pg_advisory_lock (void), leasegate.token,
# pg_try_advisory_lock refused to a second session while held,
# pg_advisory_unlock (true, then false when not held); pg_advisory_xact_lock
# in a transaction, released at COMMIT; leasegate.acquire/release and a
# greater token for the next holder; the holder's disconnect releasing its
# lock at once; a wrong password refused (28P01).
#
#   psql        psql_test.sh       psql scripted (simple protocol)
#   psycopg2    psycopg2_test.py   Debian python3-psycopg2 (libpq)
#   psycopg3    psycopg3_test.py   Debian python3-psycopg (libpq, extended, binary)
#   asyncpg     asyncpg_test.py    Debian python3-asyncpg (extended, binary)
#   jdbc        JdbcTest.java      Debian libpostgresql-jdbc-java, `java File.java`,
#                                  past prepareThreshold (server-prepared)
#   node-pg     node_pg.js         `pg` from npm, locked in ../node/package-lock.json
#   pgx         pgx_test_main.go   Debian golang-github-jackc-pgx-v4-dev (pgx v4, pure Go,
#                                  extended, statement cache, binary), built offline
#                                  with Debian's golang-go in GOPATH mode
#   examples    examples_test.sh   examples/pg_singleton.py and .js, linked by
#                                  docs/guides/singleton-job.md; one of two copies leads, takeover at SIGKILL
#
# and the ORMs, pools and poolers applications reach them through (run by
# ../pg_orms.sh; not in the default list):
#   sqlalchemy  sqlalchemy_test.py Debian python3-sqlalchemy 1.4: psycopg2 and asyncpg
#                                  engines, pool_pre_ping (it has no psycopg 3 dialect)
#   django      django_test.py     Debian python3-django: a second DATABASES alias
#   hikari      HikariTest.java    Debian libhikaricp-java over pgjdbc: 10 threads
#   gopool      gopool_test_main.go database/sql + lib/pq (golang-github-lib-pq-dev),
#                                  pgx v4's pgxpool; built offline like pgx
#   node-pool   node_pool.js       node-postgres's Pool
#   pgbouncer   pgbouncer_test.sh  Debian pgbouncer, session and transaction pooling
#   strict      strict_test.py     PostgreSQL 15's SQLSTATEs for bad types and messages
#
# PG_TARGET picks the server:
#   leasegate (default)  $LG_BIN --port 0 --admin-port 0 --pg-port P --pg-password s3cret
#   postgres             a throw-away PostgreSQL 15 cluster (pgcluster.sh), with
#                        standins.sql for the leasegate.* functions
# Either way the drivers get PGHOST, PGPORT, PGUSER=leasegate,
# PGPASSWORD=s3cret, PGDATABASE=locks. PG_DRIVERS (default: all eight, the
# names above) picks drivers. Prints `ok <n> <driver>: <what>` per check;
# exits 1 when any failed.
#
# Not in the suite until the front-end is merged (tests/run-integration.sh
# runs tests/integration/*.sh only); then it joins it through an executable
# tests/integration/pg_drivers.sh of one line:
#   exec "$(dirname "$0")/pg/run_drivers.sh" "$@"
# Meanwhile: PG_TARGET=postgres tests/integration/pg/run_drivers.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
target=${PG_TARGET:-leasegate}
drivers=${PG_DRIVERS:-psql psycopg2 psycopg3 asyncpg jdbc node-pg pgx examples}
py=/usr/bin/python3 # Debian's, where python3-psycopg2 & co. install
jar=${PG_JDBC_JAR:-/usr/share/java/postgresql.jar}
work=$(mktemp -d "${LG_WORK:-/tmp}/pg_drivers.XXXXXX")
pgdir= # the cluster's, in /tmp: its user may not reach into $LG_WORK
gw=
. "$here/pgcluster.sh"
cleanup() {
	[ -n "$gw" ] && kill "$gw" 2>/dev/null
	pgc_stop
	wait 2>/dev/null
	rm -rf "$work" $pgdir
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

n=0
failed=0
# say ok|not ok WHAT
say() {
	n=$((n + 1))
	echo "$1 $n $2"
	[ "$1" = ok ] || failed=1
}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
case $target in
leasegate)
	: "${LG_BIN:?LG_BIN must name the leasegate binary}"
	"$LG_BIN" --port 0 --admin-port 0 --pg-port "$port" --pg-password s3cret \
		>"$work/leasegate.log" 2>&1 &
	gw=$!
	i=0
	until pg_isready -q -h 127.0.0.1 -p "$port" -t 1; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$gw" 2>/dev/null; then
			say "not ok" "leasegate answers on its PostgreSQL port ($port)"
			sed 's/^/# /' "$work/leasegate.log"
			exit 1
		fi
		sleep 0.05
	done
	;;
postgres)
	pgdir=$(mktemp -d /tmp/pg_drivers_pg.XXXXXX)
	chmod 755 "$pgdir"
	if ! pgc_start "$pgdir/pg" "$port" >"$work/pgc.log" 2>&1 ||
		! PGC_DB=locks pgc_sql "$(cat "$here/standins.sql")" >>"$work/pgc.log" 2>&1; then
		say "not ok" "a PostgreSQL 15 cluster starts ($PG_BINDIR)"
		sed 's/^/# /' "$work/pgc.log"
		exit 1
	fi
	;;
*)
	echo "not ok 1 PG_TARGET must be leasegate or postgres, not '$target'"
	exit 1
	;;
esac
say ok "$target listens on 127.0.0.1:$port"
export PGHOST=127.0.0.1 PGPORT=$port PGUSER=leasegate PGPASSWORD=s3cret PGDATABASE=locks
unset PGSERVICE PGSSLMODE PGOPTIONS PGCONNECT_TIMEOUT

# driver NAME CMD...: runs CMD (60 s at most), numbers its ok/not ok lines;
# an exit status not 0 is one more failure, with its other output shown
driver() {
	name=$1
	shift
	timeout -k 5 60 "$@" >"$work/$name.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) say ok "${line#ok }" ;;
		"not ok "*) say "not ok" "${line#not ok }" ;;
		esac
	done <"$work/$name.out"
	if [ $rc != 0 ]; then
		say "not ok" "$name: its program exited $rc"
		grep -v -e '^ok ' -e '^not ok ' "$work/$name.out" | sed 's/^/# /'
	fi
}

# needs NAME WHAT COMMAND...: a failure naming what to install when COMMAND fails
needs() {
	_name=$1 _what=$2
	shift 2
	"$@" >/dev/null 2>&1 && return 0
	say "not ok" "$_name: needs $_what (deps.sh installs it)"
	return 1
}

# npm_ci: node-postgres from ../node/package-lock.json in $work/node, once
npm_ci() {
	[ -d "$work/node/node_modules/pg" ] && return 0
	needs node-pg "Node.js >= 18 and npm" command -v npm || return 1
	mkdir -p "$work/node"
	cp "$here/../node/package.json" "$here/../node/package-lock.json" "$here/node_pg.js" \
		"$work/node/"
	if (cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
		>"$work/npm.log" 2>&1; then
		say ok "node-pg: npm ci from the lockfile: pg $(cd "$work/node" &&
			node -p "require('pg/package.json').version")"
	else
		say "not ok" "node-pg: npm ci"
		sed 's/^/# /' "$work/npm.log"
		return 1
	fi
}

# go_build: the pgx program into $work/pgx_test, offline: GOPATH mode on
# Debian's Go sources (/usr/share/gocode), no module proxy
gopath=${PG_GOPATH:-/usr/share/gocode}
go_build() {
	needs pgx "Go (golang-go)" command -v go || return 1
	needs pgx "pgx v4 (golang-github-jackc-pgx-v4-dev)" \
		test -d "$gopath/src/github.com/jackc/pgx/v4" || return 1
	# the build cache: the user's, else one in $work (a build from scratch)
	gocache=$(go env GOCACHE 2>/dev/null) && [ -n "$gocache" ] && [ "$gocache" != off ] ||
		gocache=$work/gocache
	if GOPATH=$gopath GO111MODULE=off GOFLAGS= GOPROXY=off GOCACHE=$gocache \
		timeout -k 5 300 go build -o "$work/pgx_test" "$here/pgx_test_main.go" \
		>"$work/go.log" 2>&1; then
		say ok "pgx: go build (GOPATH mode, $(go env GOVERSION), pgx $(dpkg-query -W \
			-f='${Version}' golang-github-jackc-pgx-v4-dev 2>/dev/null))"
	else
		say "not ok" "pgx: go build"
		sed 's/^/# /' "$work/go.log"
		return 1
	fi
}

# go_build_pools: the Go pools' program into $work/gopool_test, as go_build
go_build_pools() {
	needs gopool "Go (golang-go)" command -v go || return 1
	needs gopool "lib/pq (golang-github-lib-pq-dev)" test -d "$gopath/src/github.com/lib/pq" ||
		return 1
	gocache=$(go env GOCACHE 2>/dev/null) && [ -n "$gocache" ] && [ "$gocache" != off ] ||
		gocache=$work/gocache
	if GOPATH=$gopath GO111MODULE=off GOFLAGS= GOPROXY=off GOCACHE=$gocache \
		timeout -k 5 300 go build -o "$work/gopool_test" "$here/gopool_test_main.go" \
		>"$work/gopool_go.log" 2>&1; then
		say ok "gopool: go build (lib/pq $(dpkg-query -W -f='${Version}' \
			golang-github-lib-pq-dev 2>/dev/null), pgxpool)"
	else
		say "not ok" "gopool: go build"
		sed 's/^/# /' "$work/gopool_go.log"
		return 1
	fi
}
hikari_cp=$jar:/usr/share/java/HikariCP.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar

for d in $drivers; do
	case $d in
	psql)
		needs psql "psql (postgresql-client)" command -v psql &&
			driver psql sh "$here/psql_test.sh" ;;
	psycopg2)
		needs psycopg2 python3-psycopg2 $py -c 'import psycopg2' &&
			driver psycopg2 $py "$here/psycopg2_test.py" ;;
	psycopg3)
		needs psycopg3 python3-psycopg $py -c 'import psycopg' &&
			driver psycopg3 $py "$here/psycopg3_test.py" ;;
	asyncpg)
		needs asyncpg python3-asyncpg $py -c 'import asyncpg' &&
			driver asyncpg $py "$here/asyncpg_test.py" ;;
	jdbc)
		needs jdbc "a Java 17 JDK (openjdk-17-jdk-headless)" command -v java &&
			needs jdbc "libpostgresql-jdbc-java ($jar)" test -r "$jar" &&
			driver jdbc java -cp "$jar" "$here/JdbcTest.java" ;;
	node-pg)
		npm_ci && driver node-pg node "$work/node/node_pg.js" ;;
	pgx)
		go_build && driver pgx "$work/pgx_test" ;;
	examples)
		needs examples "python3-psycopg" $py -c 'import psycopg' && npm_ci &&
			NODE_PATH=$work/node/node_modules driver examples sh "$here/examples_test.sh" ;;
	sqlalchemy)
		needs sqlalchemy python3-sqlalchemy $py -c 'import sqlalchemy, psycopg2, asyncpg' &&
			driver sqlalchemy $py "$here/sqlalchemy_test.py" ;;
	django)
		needs django python3-django $py -c 'import django, psycopg2' &&
			driver django $py "$here/django_test.py" ;;
	hikari)
		needs hikari "a Java 17 JDK (openjdk-17-jdk-headless)" command -v java &&
			needs hikari "libhikaricp-java" test -r /usr/share/java/HikariCP.jar &&
			driver hikari java -cp "$hikari_cp" "$here/HikariTest.java" ;;
	gopool)
		go_build_pools && driver gopool "$work/gopool_test" ;;
	node-pool)
		npm_ci && cp "$here/node_pool.js" "$work/node/" &&
			driver node-pool node "$work/node/node_pool.js" ;;
	pgbouncer)
		needs pgbouncer pgbouncer command -v pgbouncer &&
			LG_LOG=${gw:+$work/leasegate.log} driver pgbouncer sh "$here/pgbouncer_test.sh" ;;
	strict)
		needs strict "python3-psycopg2, python3-asyncpg" $py -c 'import psycopg2, asyncpg' &&
			PG_TARGET=$target driver strict $py "$here/strict_test.py" ;;
	*) say "not ok" "unknown driver '$d' in PG_DRIVERS" ;;
	esac
done

if [ -n "$gw" ]; then
	kill -TERM "$gw"
	wait "$gw"
	rc=$?
	gw=
	if [ $rc = 0 ]; then say ok "leasegate exits 0 at SIGTERM after the drivers"; else
		say "not ok" "leasegate exits 0 at SIGTERM after the drivers (got $rc)"
		sed 's/^/# /' "$work/leasegate.log"
	fi
fi
exit $failed
