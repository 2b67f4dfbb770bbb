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
# Each runs under a time limit (IT_TIMEOUT seconds, default 240: the
# longest takes about 35 s on an idle 2-core machine), killed with the
# processes it started and failed, named, when it runs out; all of them
# within IT_BUDGET seconds (default 900; the suite takes about 8 minutes on
# an idle 2-core machine).
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
trap '[ -z "${moto_pid:-}" ] || { kill $moto_pid; wait $moto_pid; } 2>/dev/null; if [ -n "${IT_KEEP:-}" ]; then echo "# kept $work"; else rm -rf "$work"; fi' EXIT
trap 'exit 1' HUP INT TERM
if ! moto_start "$root" "$work"; then
	rt_fail moto "$moto_error"
	rt_close "integration tests"
	exit 1
fi
export LG_BIN="$root/$BUILD/leasegate" AWS_REGION=us-east-1
export LG_WORK="$work"

limit=${IT_TIMEOUT:-240}
rt_budget "${IT_BUDGET:-900}"
only() { [ -z "${IT_ONLY:-}" ] || case " $IT_ONLY " in *" $1 "*) ;; *) return 1 ;; esac; }
[ -x "$LG_BIN" ] || rt_fail leasegate "not built (no executable $LG_BIN)"
for src in "$root"/tests/integration/it_*.c; do
	name=$(basename "$src" .c)
	only "$name" || continue
	t="$root/$BUILD/tests/$name"
	if [ -x "$t" ]; then
		rt_run "$name" "$limit" "$work/$name.log" cmocka "$t"
	else
		rt_fail "$name" "not built (no executable $t)"
	fi
done
for t in "$root"/tests/integration/*.sh; do
	name=$(basename "$t")
	only "$name" || continue
	if [ -x "$t" ]; then
		rt_run "$name" "$limit" "$work/$name.log" script "$t"
	else
		rt_fail "$name" "not executable (chmod +x $t)"
	fi
done
rt_close "integration tests"
