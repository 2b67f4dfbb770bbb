#!/bin/sh
# instr_compare: the server's instructions per request (callgrind), for one
# or more leasegate binaries, on the rows of redis_compare.sh with one
# client: PING -P16, LOCK.STATE -P16 (a free lock), the lock cycle
# (LOCK.ACQUIRE + LOCK.RELEASE, bench_lockcycle) -P16 and -P1.
#
#   bench/instr_compare.sh BINARY [BINARY...]
#
# Deterministic where wall-clock rates on a shared machine are not: each
# binary runs under valgrind --tool=callgrind, is warmed up, its counters
# are zeroed (callgrind_control -z), the workload runs, the counters are
# dumped; the figure is the instructions counted over the requests (or
# cycles) of that window, without start-up, first-use costs or shutdown.
# Needs valgrind, redis-benchmark, redis-cli and build/bench/bench_lockcycle
# (make bench, or make build/bench/bench_lockcycle).
#
#   BUILD     build directory of bench_lockcycle (default build)
#   ROWS      rows to measure (default "ping state cycle16 cycle1")
set -u
[ $# -ge 1 ] || { echo "usage: $0 BINARY [BINARY...]"; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
cycle=$root/${BUILD:-build}/bench/bench_lockcycle
rows=${ROWS:-ping state cycle16 cycle1}
[ -x "$cycle" ] || { echo "$cycle: not built (make $cycle)"; exit 1; }
work=$(mktemp -d /tmp/instr.XXXXXX)
trap 'rm -rf "$work"' EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# load PORT ROW N: runs N requests (cycles: seconds) of ROW; prints the count
load() {
	case $2 in
	ping) redis-benchmark -p "$1" -c 1 -n "$3" -P 16 PING >/dev/null && echo "$3" ;;
	state) redis-benchmark -p "$1" -c 1 -n "$3" -P 16 LOCK.STATE x >/dev/null && echo "$3" ;;
	cycle16) "$cycle" "$1" lock 1 16 "$4" | awk '$1=="cycles_per_s"{print $6}' ;;
	cycle1) "$cycle" "$1" lock 1 1 "$4" | awk '$1=="cycles_per_s"{print $6}' ;;
	esac
}

# measure BINARY ROW: instructions per request
measure() {
	port=$(free_port)
	out=$work/cg.out
	rm -f "$out"*
	valgrind --tool=callgrind --callgrind-out-file="$out" "$1" --port "$port" --pg-port 0 \
		--admin-port 0 --busy-poll-us 0 --log-level warn >/dev/null 2>"$work/err" &
	pid=$!
	i=0
	until [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || { echo "$1 did not start"; kill $pid; return 1; }
		sleep 0.2
	done
	load "$port" "$2" 2000 1 >/dev/null # warm up
	callgrind_control -z $pid >/dev/null 2>&1
	n=$(load "$port" "$2" 100000 4)
	callgrind_control -d $pid >/dev/null 2>&1
	kill -INT $pid
	wait $pid 2>/dev/null
	f=$(ls "$out".* 2>/dev/null | head -1)
	ir=$(grep -m1 '^summary:\|^totals:' "$f" | awk '{print $2}')
	python3 -c "print(round($ir / $n, 1))"
}

printf '%-10s' row
for b in "$@"; do printf ' %14s' "$(basename "$b")"; done
[ $# -ge 2 ] && printf ' %8s' "last/1st"
echo
for row in $rows; do
	printf '%-10s' "$row"
	first= last=
	for b in "$@"; do
		v=$(measure "$b" "$row") || exit 1
		printf ' %14s' "$v"
		[ -n "$first" ] || first=$v
		last=$v
	done
	[ $# -ge 2 ] && printf ' %8s' "$(python3 -c "print(round($last / $first, 3))")"
	echo
done
echo "(server instructions per request, callgrind; one client; cycle rows per LOCK.ACQUIRE + LOCK.RELEASE)"
