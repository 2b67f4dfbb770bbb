#!/bin/sh
# Installs the Debian packages leasegate's build and tests need, when missing.
# As root it runs apt-get; otherwise it prints the exact command and stops.
set -e
PKGS="build-essential pkg-config libevent-dev libhiredis-dev libcmocka-dev libcjson-dev
libcurl4-openssl-dev libssl-dev libpq-dev redis-server redis-tools postgresql-client curl
python3-redis prometheus openssl iproute2 clang libclang-rt-14-dev
postgresql-15 python3-psycopg2 python3-psycopg python3-asyncpg libpostgresql-jdbc-java
openjdk-17-jre-headless golang-go golang-github-jackc-pgx-v4-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# Node.js and npm (the Node clients' test) unless a Node is installed already.
command -v npm >/dev/null || missing="$missing nodejs npm"
# postgresql-15 to openjdk-17-jre-headless: the PostgreSQL drivers' tests
# (tests/integration/pg/: server, pgbench, psycopg2, psycopg 3, asyncpg,
# pgjdbc run as `java File.java`, Go and pgx v4 with its dependencies, built
# offline in GOPATH mode) and bench/pg_compare.sh.
# iproute2: the network namespace of tests/integration/protected_mode.sh;
# clang and its libFuzzer runtime: make fuzz.
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
