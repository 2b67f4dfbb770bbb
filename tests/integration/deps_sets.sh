#!/bin/sh
# deps_sets.sh: `make run` installs only what building and running need
# (./deps.sh run), `make test` the rest too: no test server (redis-server,
# postgresql, whose Debian packages start a service on the ports leasegate
# binds), no test library or tool in the run set; every library the
# Makefile links is in it. "ok N - what" / "not ok N - what".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

run=" $(./deps.sh --print run | tr '\n' ' ') "
test=" $(./deps.sh --print test | tr '\n' ' ') "
for p in redis-server redis-tools postgresql-15 postgresql-client prometheus nodejs \
	libcmocka-dev libpq-dev python3-redis openjdk-17-jre-headless golang-go clang-format \
	python3-pytest; do
	case "$run" in
	*" $p "*) bad "run set holds the test package $p" ;;
	*) ok "run set without $p" ;;
	esac
	case "$test" in
	*" $p "*) ok "test set has $p" ;;
	*) [ "$p" = nodejs ] && ok "test set has nodejs (when no Node)" || bad "test set lacks $p" ;;
	esac
done
# the libraries the Makefile builds with, by their Debian -dev package
for p in build-essential pkg-config libevent-dev libhiredis-dev libcjson-dev \
	libcurl4-openssl-dev libssl-dev liblua5.1-0-dev; do
	case "$run" in
	*" $p "*) ok "run set has $p" ;;
	*) bad "run set lacks $p" ;;
	esac
done
# make run asks for the run set, make test for the test set
make -n run 2>/dev/null | grep -q '^\./deps\.sh run$' && ok "make run: ./deps.sh run" ||
	bad "make run does not call ./deps.sh run"
make -n test 2>/dev/null | grep -q '^\./deps\.sh test$' && ok "make test: ./deps.sh test" ||
	bad "make test does not call ./deps.sh test"
exit $fail
