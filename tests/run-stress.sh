#!/bin/sh
# make stress: the contention and fault-injection safety checks of
# tests/stress/stress.py (3 gateways on one fresh table, 9 clients, SIGSTOP,
# SIGKILL and a DynamoDB blackhole of the holder's gateway; 0 overlapping
# holds and strictly rising tokens), on the serialized moto
# (tests/moto_serial.py, signature checking on, keys from
# tests/moto_setup.py) that this script starts as tests/run-integration.sh
# does. The STRESS_* variables of stress.py pass through (STRESS_SECONDS,
# default 60). Before it: stress.py --selftest (the checks fail on crafted
# violations) and release_after_stall.py (a RELEASE read by a gateway
# continued after a stall past its lease answers -LOST). Gateway and proxy
# logs are kept in $BUILD/stress/. Exits non-zero on any violation.
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/$BUILD/stress"
rm -rf "$work"
mkdir -p "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
INITIAL_NO_AUTH_ACTION_COUNT=5 python3 "$root/tests/moto_serial.py" -H 127.0.0.1 -p "$port" \
	>"$work/moto.log" 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null; wait $moto 2>/dev/null' EXIT
trap 'exit 1' HUP INT TERM
i=0
until curl -s "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 300 ] || ! kill -0 $moto 2>/dev/null; then
		echo "moto did not start:"
		cat "$work/moto.log"
		exit 1
	fi
	sleep 0.1
done
setup=$(timeout 60 python3 "$root/tests/moto_setup.py" "http://127.0.0.1:$port") || {
	echo "moto_setup.py could not create the IAM users"
	exit 1
}
eval "$setup"
export LG_AK LG_SK LG_MOTO="http://127.0.0.1:$port" LG_BIN="$root/$BUILD/leasegate" LG_WORK="$work"
/usr/bin/python3 -c 'import redis' 2>/dev/null || {
	echo "redis-py is missing for /usr/bin/python3: apt-get install python3-redis"
	exit 1
}
# A bound on the whole run: the clients' time, the faults' (each at least
# once), and the last waits.
rc=0
/usr/bin/python3 "$root/tests/stress/stress.py" --selftest || rc=1
timeout -k 10 60 /usr/bin/python3 "$root/tests/stress/release_after_stall.py" || rc=1
timeout -k 10 $((${STRESS_SECONDS:-60} + 120)) /usr/bin/python3 "$root/tests/stress/stress.py" || rc=1
exit $rc
