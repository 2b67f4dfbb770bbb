#!/bin/sh
# ab_compare: two leasegate binaries side by side (A: before a change, B:
# after it), on the embedded store, with the rows of redis_compare.sh:
# PING inline and multibulk, LOCK.STATE, the lock cycle, without and with
# pipelining (-P 16), 50 clients.
#
#   bench/ab_compare.sh BINARY_A BINARY_B
#
# Both servers run at once, pinned to CPU 0 (the load generators to CPU 1),
# and every measurement alternates A, B, B, A, A, B... REPEAT times (the
# order swapped each time), so that a shared machine's slow spells weigh on
# both alike; each figure is the best of its runs (other work only ever
# lowers one). Prints requests (cycles) per second of A and B, the ratio
# B/A of the bests, and the ratios of the REPEAT pairs run back to back:
# their median and range (how far one pair can be from the others).
#
#   BUILD     build directory of bench_lockcycle (default build)
#   CLIENTS   connections (default 50)
#   CYCLE_SECONDS   duration of each lock-cycle run (default 2)
#   REPEAT    runs of each measurement per binary (default 5)
#   TESTS     tests to run (default "ping_inline ping_mbulk state cycle")
#   PIPELINES pipeline depths (default "1 16")
set -u
[ $# -eq 2 ] || { echo "usage: $0 BINARY_A BINARY_B"; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
cycle=$root/${BUILD:-build}/bench/bench_lockcycle
clients=${CLIENTS:-50}
seconds=${CYCLE_SECONDS:-2}
repeat=${REPEAT:-5}
for x in "$1" "$2" "$cycle"; do
	[ -x "$x" ] || { echo "missing $x"; exit 2; }
done
command -v redis-benchmark >/dev/null || { echo "missing redis-benchmark"; exit 2; }
work=$(mktemp -d /tmp/ab_compare.XXXXXX)
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
srv_cpu= cli_cpu=
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	srv_cpu="taskset -c 0" cli_cpu="taskset -c 1"
fi
pa=$(free_port)
pb=$(free_port)
$srv_cpu "$1" --port "$pa" --pg-port 0 --admin-port 0 --log-level warn >"$work/a.log" 2>&1 &
ida=$!
$srv_cpu "$2" --port "$pb" --pg-port 0 --admin-port 0 --log-level warn >"$work/b.log" 2>&1 &
idb=$!
trap 'kill $ida $idb 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for p in "$pa" "$pb"; do
	i=0
	until [ "$(redis-cli -p "$p" PING 2>/dev/null)" = PONG ]; do
		i=$((i + 1))
		[ $i -gt 200 ] && { echo "a server did not start"; cat "$work"/*.log; exit 2; }
		sleep 0.05
	done
	redis-cli -p "$p" LOCK.ACQUIRE x 30000 >/dev/null # released as redis-cli leaves
done

# one PORT PIPELINE N TEST: the rate of one run
one() {
	case $4 in
	cycle) $cli_cpu "$cycle" "$1" lock "$clients" "$2" "$seconds" 2>>"$work/err" |
		awk '$1 == "cycles_per_s" { print $2 }' ;;
	state) $cli_cpu redis-benchmark -h 127.0.0.1 -p "$1" -c "$clients" -n "$3" -P "$2" --csv \
		LOCK.STATE x 2>>"$work/err" | awk -F'"' 'NR == 2 { print $4 }' ;;
	*) $cli_cpu redis-benchmark -h 127.0.0.1 -p "$1" -c "$clients" -n "$3" -P "$2" --csv \
		-t "$4" 2>>"$work/err" | awk -F'"' 'NR == 2 { print $4 }' ;;
	esac
}

printf '%-22s %3s %12s %12s %7s %14s %s\n' "test ($clients clients)" "-P" "A" "B" "B/A" "pairs: median" "range"
for pl in ${PIPELINES:-1 16}; do
	for t in ${TESTS:-ping_inline ping_mbulk state cycle}; do
		if [ "$pl" = 1 ]; then n=100000; else n=1000000; fi
		[ "$t" = state ] && [ "$pl" = 16 ] && n=300000
		ba=0 bb=0 i=0 pairs=
		while [ $i -lt "$repeat" ]; do
			if [ $((i % 2)) = 0 ]; then
				ra=$(one "$pa" "$pl" "$n" "$t")
				rb=$(one "$pb" "$pl" "$n" "$t")
			else
				rb=$(one "$pb" "$pl" "$n" "$t")
				ra=$(one "$pa" "$pl" "$n" "$t")
			fi
			ba=$(awk -v x="${ra:-0}" -v y="$ba" 'BEGIN { print (x > y ? x : y) }')
			bb=$(awk -v x="${rb:-0}" -v y="$bb" 'BEGIN { print (x > y ? x : y) }')
			pairs="$pairs $(awk -v a="${ra:-0}" -v b="${rb:-0}" 'BEGIN { print (a > 0 ? b / a : 0) }')"
			i=$((i + 1))
		done
		printf '%-22s %3s %12.0f %12.0f %7s %14s %s\n' "$t" "$pl" "$ba" "$bb" \
			"$(awk -v a="$ba" -v b="$bb" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "?" }')" \
			"$(echo $pairs | tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m }')" \
			"$(echo $pairs | tr ' ' '\n' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }')"
	done
done
[ -s "$work/err" ] && { echo "-- load generator messages:"; sort "$work/err" | uniq -c | head; }
echo "(best of $repeat alternating runs each, $(nproc) CPUs${srv_cpu:+, servers on CPU 0, clients on CPU 1})"
