#!/bin/sh
# Integration tests: starts tests/moto_serial.py (moto_server's DynamoDB,
# IAM and STS emulator applying one request at a time, so that a double
# grant seen by a test is leasegate's, never the emulator's: see
# tests/moto_race.py) with signature checking on, then runs every
# build/tests/it_* binary (one per tests/integration/it_*.c) and every
# tests/integration/*.sh script with these variables set:
#   LG_BIN             the leasegate binary
#   LG_MOTO            the moto endpoint (http://127.0.0.1:PORT)
#   LG_AK, LG_SK       keys of an IAM user allowed everything
#   LG_DENIED_AK/_SK   keys of an IAM user allowed nothing
#   LG_WORK            a scratch directory, removed at the end
#   AWS_REGION         us-east-1
# The tests run IT_JOBS at a time (default 2: most of their time is spent
# waiting on leases and timeouts, not on a core), each lane of them on a
# moto of its own, taking the next test from one queue; the tests of
# IT_SERIAL (below: they load the machine, or take a default port) then
# run alone. A test's PASS/FAIL block is printed whole when it ends.
# Each runs under a time limit (IT_TIMEOUT seconds, default 240: the
# longest takes about 80 s on an idle 2-core machine), killed with the
# processes it started and failed, named, when it runs out; all of them
# within IT_BUDGET seconds (default 900; the suite takes about 9 minutes
# with 2 lanes on an idle 2-core machine, 16 with one: IT_JOBS=1).
# A binary that is missing or a script that is not executable fails.
# IT_ONLY="it_locks redis_cli.sh" runs only the tests named (while
# working on them; make test runs all).
# IT_KEEP=1 keeps the work directory (logs, histories) and prints its path.
# Closing line: "N passed, N failed, N skipped"; exits non-zero on any
# failure (tests/support/runner.sh).
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/support/runner.sh"
work=$(mktemp -d /tmp/leasegate-it.XXXXXX)
. "$root/tests/support/moto.sh"
lanes=
trap 'for p in $lanes; do kill $p 2>/dev/null; wait $p 2>/dev/null; done; [ -z "${moto_pid:-}" ] || { kill $moto_pid; wait $moto_pid; } 2>/dev/null; if [ -n "${IT_KEEP:-}" ]; then echo "# kept $work"; else rm -rf "$work"; fi' EXIT
trap 'exit 1' HUP INT TERM
if ! moto_start "$root" "$work"; then
	rt_fail moto "$moto_error"
	rt_close "integration tests"
	exit 1
fi
export LG_BIN="$root/$BUILD/leasegate" AWS_REGION=us-east-1
export LG_WORK="$work"

limit=${IT_TIMEOUT:-240}
jobs=${IT_JOBS:-2}
# Alone, after the lanes: the stress runs (their progress checks want the
# machine's cores) and port_taken.sh (it holds the default port 6379).
serial=${IT_SERIAL:-stress_short.sh fenced_stress.sh port_taken.sh}
rt_budget "${IT_BUDGET:-900}"
only() { [ -z "${IT_ONLY:-}" ] || case " $IT_ONLY " in *" $1 "*) ;; *) return 1 ;; esac; }
alone() { case " $serial " in *" $1 "*) ;; *) return 1 ;; esac; }

# The list of tests, a line each: "KIND NAME PATH", the lanes' in
# $work/queue, the serial ones in $work/serial.
: >"$work/queue"
: >"$work/serial"
queue() { # queue KIND NAME PATH
	if alone "$2"; then echo "$1 $2 $3" >>"$work/serial"; else echo "$1 $2 $3" >>"$work/queue"; fi
}
[ -x "$LG_BIN" ] || rt_fail leasegate "not built (no executable $LG_BIN)"
for src in "$root"/tests/integration/it_*.c; do
	name=$(basename "$src" .c)
	only "$name" || continue
	t="$root/$BUILD/tests/$name"
	if [ -x "$t" ]; then queue cmocka "$name" "$t"; else rt_fail "$name" "not built (no executable $t)"; fi
done
for t in "$root"/tests/integration/*.sh; do
	name=$(basename "$t")
	only "$name" || continue
	if [ -x "$t" ]; then queue script "$name" "$t"; else rt_fail "$name" "not executable (chmod +x $t)"; fi
done

# run_one KIND NAME PATH: runs a test, then prints its block whole.
run_one() {
	rt_run "$2" "$limit" "$work/$2.log" "$1" "$3" >"$work/$2.out"
	flock "$work/print.lock" cat "$work/$2.out"
}

# next_test: prints the queue's next line (none when it is empty).
echo 0 >"$work/next"
next_test() {
	flock "$work/queue.lock" sh -c 'n=$(($(cat "$1/next") + 1)); echo $n >"$1/next"; sed -n "${n}p" "$1/queue"' _ "$work"
}

# lane I: runs queued tests until none is left (lane 1 on the moto above,
# the others each on one of its own), then writes its counts to
# $work/lane.I.
lane() {
	if [ "$1" != 1 ]; then
		mkdir "$work/lane$1"
		moto_pid=
		trap '[ -z "$moto_pid" ] || { kill $moto_pid; wait $moto_pid; } 2>/dev/null' EXIT
		trap 'exit 1' HUP INT TERM
		if ! moto_start "$root" "$work/lane$1"; then
			rt_fail "moto (lane $1)" "$moto_error"
			echo "$rt_passed $rt_failed $rt_skipped" >"$work/lane.$1"
			return
		fi
	fi
	while read -r kind name path <<-EOT
		$(next_test)
	EOT
	do
		[ -n "$kind" ] || break
		run_one "$kind" "$name" "$path"
	done
	echo "$rt_passed $rt_failed $rt_skipped" >"$work/lane.$1"
}

i=1
while [ "$i" -le "$jobs" ]; do
	(lane $i) &
	lanes="$lanes $!"
	i=$((i + 1))
done
wait $lanes
lanes=
for f in "$work"/lane.*; do
	[ -f "$f" ] || continue
	read -r p f2 s <"$f"
	rt_passed=$((rt_passed + p)) rt_failed=$((rt_failed + f2)) rt_skipped=$((rt_skipped + s))
done
[ "$(ls "$work"/lane.* 2>/dev/null | wc -l)" = "$jobs" ] || rt_fail lanes "a lane ended without its counts"
while read -r kind name path; do
	run_one "$kind" "$name" "$path"
done <"$work/serial"
rt_close "integration tests"
