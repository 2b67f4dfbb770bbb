#!/bin/sh
# Installs the Debian packages leasegate needs, when missing:
#   ./deps.sh run    what building and running the gateway need (make, make run)
#   ./deps.sh test   those and what the tests, benchmarks and fuzzers need
#                    (make test, check, stress, bench, fuzz)
#   ./deps.sh --print run|test   lists the packages of that set, installs nothing
# `make run` installs only the first set: the test set holds servers
# (redis-server, postgresql) whose Debian packages start a service on install,
# on the ports leasegate would use (6379, 5432).
# As root it runs apt-get; otherwise it prints the exact command and stops.
set -e
RUN_PKGS="build-essential pkg-config libevent-dev libhiredis-dev libcjson-dev
libcurl4-openssl-dev libssl-dev liblua5.1-0-dev"
# libcmocka-dev, libpq-dev: the unit and integration tests' libraries;
# redis-server, redis-tools, postgresql-client, python3-redis: clients and a
# reference Redis of the tests and benchmarks; prometheus: promtool;
# postgresql-15 to golang-github-jackc-pgx-v4-dev: the PostgreSQL drivers'
# tests (tests/integration/pg/: server, pgbench, psycopg2, psycopg 3, asyncpg,
# pgjdbc run as `java File.java`, Go and pgx v4 with its dependencies, built
# offline in GOPATH mode) and bench/pg_compare.sh; python3-sqlalchemy to
# golang-github-lib-pq-dev: the ORMs, pools and poolers of
# tests/integration/pg_orms.sh and bench/pg_orm_compare.sh (SQLAlchemy 1.4,
# Django, pgbouncer: a server on port 6432 once installed, HikariCP with its
# slf4j, Go's lib/pq); golang-github-gomodule-redigo-dev: redigo's MULTI/WATCH
# (tests/integration/multi_clients.sh); clang-format: make format;
# iproute2: the network namespace of tests/integration/protected_mode.sh;
# clang and its libFuzzer runtime: make fuzz; python3-pytest: the pytest
# example of docs/testing.md (tests/integration/test_mode_examples.sh).
TEST_PKGS="$RUN_PKGS libcmocka-dev libpq-dev redis-server redis-tools postgresql-client curl
python3-redis prometheus openssl clang-format iproute2 clang libclang-rt-14-dev
postgresql-15 python3-psycopg2 python3-psycopg python3-asyncpg libpostgresql-jdbc-java
openjdk-17-jre-headless golang-go golang-github-jackc-pgx-v4-dev python3-sqlalchemy
python3-django pgbouncer libhikaricp-java libslf4j-java golang-github-lib-pq-dev python3-pytest
golang-github-gomodule-redigo-dev"

print=""
if [ "$1" = "--print" ]; then
	print=1
	shift
fi
case "${1:-test}" in
run) PKGS=$RUN_PKGS ;;
test) PKGS=$TEST_PKGS ;;
*)
	echo "usage: $0 [--print] run|test" >&2
	exit 2
	;;
esac
if [ -n "$print" ]; then
	echo $PKGS
	[ "${1:-test}" = test ] && echo "nodejs npm (unless a Node is installed)"
	exit 0
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# Node.js and npm (the Node clients' test) unless a Node is installed already.
if [ "${1:-test}" = test ]; then
	command -v npm >/dev/null || missing="$missing nodejs npm"
fi
# moto (the DynamoDB emulator of the integration tests) comes from the machine's Python.
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "leasegate needs these packages; run as root:" >&2
	echo "  apt-get update && $cmd" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
$cmd >/dev/null
