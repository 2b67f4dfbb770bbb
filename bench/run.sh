#!/bin/sh
# Runs every benchmark in one go and prints their figures.
#   BUILD   the build directory (default build)
# Each bench_* binary prints its own report; bench/*.sh scripts (side-by-side
# runs against redis-server, moto...) run after them.
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
for b in "$root/$BUILD"/bench/bench_*; do
	[ -x "$b" ] || continue
	# the load generator of redis_compare.sh, which runs it below
	[ "$(basename "$b")" = bench_lockcycle ] && continue
	echo "== $(basename "$b")"
	"$b" || echo "($(basename "$b") failed)"
done
for s in "$root"/bench/*.sh; do
	# ab_compare.sh compares two binaries given by hand
	case $(basename "$s") in run.sh | ab_compare.sh) continue ;; esac
	echo "== $(basename "$s")"
	BUILD=$BUILD "$s" || echo "($(basename "$s") failed)"
done
