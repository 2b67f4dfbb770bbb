#!/bin/sh
# lib_compare: a lock library's acquire+release cycle through leasegate
# (embedded store) next to the same against a redis-server on this
# machine: redlock 5 (npm redlock@5.0.0-beta.2 over ioredis, the versions
# of tests/integration/node/package-lock.json, `npm ci` into a scratch
# directory): EVALSHA of its acquire script then of its release script,
# random names, CLIENTS connections at once (bench/lib_cycle.js). On
# leasegate each is a Lua script run as a serializable transaction over
# the lock keyspace (gateway/script); on Redis, Redis's own Lua.
#
# Both servers are pinned to CPU 0 and the clients to CPU 1 when there are
# two CPUs. Prints cycles per second, the server's CPU time per cycle
# (user + system from /proc/PID/stat over the run) and the ratios
# leasegate/redis, best of REPEAT runs of SECONDS each. Target (issue 28):
# rate >= 1.0x Redis's.
#
#   BUILD (build), CLIENTS (50), SECONDS (3), REPEAT (3)
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
lg_bin=${LG_BIN:-$root/$BUILD/leasegate}
clients=${CLIENTS:-50}
seconds=${SECONDS_EACH:-${SECONDS:-3}}
repeat=${REPEAT:-3}
[ -x "$lg_bin" ] || { echo "missing $lg_bin (make)"; exit 2; }
for x in redis-server redis-cli node npm; do
	command -v "$x" >/dev/null || { echo "missing $x"; exit 2; }
done
work=$(mktemp -d /tmp/lib_compare.XXXXXX)
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
srv_cpu= cli_cpu=
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	srv_cpu="taskset -c 0" cli_cpu="taskset -c 1"
fi
cp "$root/tests/integration/node/package.json" "$root/tests/integration/node/package-lock.json" \
	"$root/bench/lib_cycle.js" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >"$work/npm.log" 2>&1 ||
	{ echo "npm ci failed"; cat "$work/npm.log"; rm -rf "$work"; exit 2; }
rport=$(free_port)
lport=$(free_port)
$srv_cpu redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no \
	>"$work/redis.log" 2>&1 &
rpid=$!
$srv_cpu "$lg_bin" --port "$lport" --pg-port 0 --admin-port 0 --log-level warn \
	>"$work/leasegate.log" 2>&1 &
lpid=$!
trap 'kill $rpid $lpid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for p in "$rport" "$lport"; do
	i=0
	until [ "$(redis-cli -p "$p" PING 2>/dev/null)" = PONG ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "server on $p did not start"; exit 1; }
		sleep 0.05
	done
done
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# run PID PORT: "rate cpu_us_per_cycle", best rate of REPEAT runs (and the
# lowest CPU per cycle)
run() {
	best_rate=0 best_cpu=
	for _ in $(seq "$repeat"); do
		t0=$(cpu_ticks "$1")
		out=$(cd "$work" && PORT=$2 CLIENTS=$clients SECONDS=$seconds $cli_cpu node lib_cycle.js)
		t1=$(cpu_ticks "$1")
		set -- "$1" "$2" $out
		n=$4 errs=$6 s=$8
		[ "$errs" = 0 ] || echo "# $errs errors on port $2" >&2
		rate=$(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.0f", n / s }')
		cpu=$(awk -v t=$((t1 - t0)) -v n="$n" -v hz="$hz" 'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }')
		[ "$rate" -gt "$best_rate" ] && best_rate=$rate
		if [ -z "$best_cpu" ] || awk -v a="$cpu" -v b="$best_cpu" 'BEGIN { exit !(a < b) }'; then
			best_cpu=$cpu
		fi
		set -- "$1" "$2"
	done
	echo "$best_rate $best_cpu"
}
set -- $(run $rpid "$rport")
r_rate=$1 r_cpu=$2
set -- $(run $lpid "$lport")
l_rate=$1 l_cpu=$2
printf '%-34s %12s %14s\n' "redlock 5 acquire+release" "cycles/s" "server us/cycle"
printf '%-34s %12s %14s\n' "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')" "$r_rate" "$r_cpu"
printf '%-34s %12s %14s\n' "leasegate (embedded)" "$l_rate" "$l_cpu"
awk -v l="$l_rate" -v r="$r_rate" -v lc="$l_cpu" -v rc="$r_cpu" 'BEGIN {
	printf "ratio leasegate/redis: rate %.2fx (target >= 1.0), CPU per cycle %.2fx\n", l / r, lc / rc }'
