#!/bin/sh
# Integration tests: starts a moto_server (DynamoDB, IAM and STS emulator)
# with signature checking on, then runs every build/tests/it_* binary and
# every tests/integration/*.sh script with these variables set:
#   LG_BIN             the leasegate binary
#   LG_MOTO            the moto endpoint (http://127.0.0.1:PORT)
#   LG_AK, LG_SK       keys of an IAM user allowed everything
#   LG_DENIED_AK/_SK   keys of an IAM user allowed nothing
#   AWS_REGION         us-east-1
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/leasegate-it.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
INITIAL_NO_AUTH_ACTION_COUNT=5 python3 -m moto.server -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null; wait $moto 2>/dev/null; rm -rf "$work"' EXIT
i=0
until curl -s "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "moto_server did not start"; cat "$work/moto.log"; exit 1; }
	sleep 0.1
done
eval "$(python3 "$root/tests/moto_setup.py" "http://127.0.0.1:$port")" || exit 1
export LG_AK LG_SK LG_DENIED_AK LG_DENIED_SK
export LG_MOTO="http://127.0.0.1:$port" LG_BIN="$root/$BUILD/leasegate" AWS_REGION=us-east-1
export LG_WORK="$work"
fail=0
for t in "$root/$BUILD"/tests/it_* "$root"/tests/integration/*.sh; do
	[ -x "$t" ] || continue
	case "$t" in *.log) continue ;; esac
	name=$(basename "$t")
	if "$t" >"$work/$name.log" 2>&1; then
		echo "PASS $name ($(grep -c -e '^\[       OK \]' -e '^ok ' "$work/$name.log") tests)"
	else
		echo "FAIL $name"; cat "$work/$name.log"; fail=1
	fi
done
exit $fail
