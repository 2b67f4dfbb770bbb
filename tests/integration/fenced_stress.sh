#!/bin/sh
# fenced_stress: tests/stress/fenced.py (what make stress runs for 40 s) for
# about 15 s on the suite's serialized moto: clients on two gateways contend
# for one lock and append to one list under LOCK.TRANSACT while a gateway
# is SIGSTOPped past a lease and SIGKILLed; its "ok" / "not ok" lines: the
# tokens in the list only rise, no append of a superseded holder, every OK
# append once and no refused one, progress.
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
set -u
[ -n "${LG_MOTO:-}" ] || {
	echo "not ok fenced_stress: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 1
}
/usr/bin/python3 -c 'import redis' 2>/dev/null || {
	echo "not ok fenced_stress: redis-py is missing for /usr/bin/python3"
	exit 1
}
# The checks themselves first: they must fail on crafted violations.
/usr/bin/python3 "$(dirname "$0")/../stress/fenced.py" --selftest || exit 1
export FENCED_SECONDS=${FENCED_SECONDS:-15}
exec /usr/bin/python3 "$(dirname "$0")/../stress/fenced.py"
