#!/bin/sh
# Runs every unit test binary given (cmocka), each under a time limit of
# UNIT_TIMEOUT seconds (default 60: they take well under a second each, a
# hundred times that under the sanitizers of `make check` on a loaded
# machine is still inside it; a test that loops forever fails, named,
# instead of hanging `make test`), all of them within UNIT_BUDGET seconds
# (default 240). Prints a PASS/FAIL/SKIP line per binary and the closing
# line "N passed, N failed, N skipped" (tests, not binaries); exits
# non-zero when one failed (see tests/support/runner.sh).
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/support/runner.sh"
limit=${UNIT_TIMEOUT:-60}
rt_budget "${UNIT_BUDGET:-240}"
[ $# -gt 0 ] || rt_fail run-unit.sh "no test binary given"
for t in "$@"; do
	if [ -x "$t" ]; then
		rt_run "$(basename "$t")" "$limit" "$t.log" cmocka "$t"
	else
		rt_fail "$(basename "$t")" "not built (no executable $t)"
	fi
done
rt_close "unit tests"
