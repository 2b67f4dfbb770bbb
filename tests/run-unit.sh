#!/bin/sh
# Runs every unit test binary given; fails when one fails.
fail=0
for t in "$@"; do
	if "$t" >"$t.log" 2>&1; then
		echo "PASS $(basename "$t") ($(grep -c '^\[       OK \]' "$t.log") tests)"
	else
		echo "FAIL $(basename "$t")"; cat "$t.log"; fail=1
	fi
done
exit $fail
