# moto.sh: starts the DynamoDB emulator of the tests, for the scripts that
# need one of their own (tests/run-integration.sh, tests/run-stress.sh).
# Sourced, not run:
#
#   . tests/support/moto.sh
#   moto_start ROOT WORKDIR || { echo "$moto_error"; ...; exit 1; }
#   trap 'kill $moto_pid ...' EXIT
#
# moto_start runs tests/moto_serial.py (moto applying one request at a
# time, signature checking on after INITIAL_NO_AUTH_ACTION_COUNT unsigned
# actions) on a free port, its log in WORKDIR/moto.log, waits for it (30 s
# at most), creates the IAM users with tests/moto_setup.py and exports
# LG_MOTO, LG_AK, LG_SK, LG_DENIED_AK and LG_DENIED_SK. moto_pid is set as
# soon as the server is started, so that the caller can stop it whatever
# happens next. Returns 1 with moto_error set when it cannot.

moto_start() {
	_root=$1 _work=$2
	moto_error=
	_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	INITIAL_NO_AUTH_ACTION_COUNT=5 python3 "$_root/tests/moto_serial.py" -H 127.0.0.1 \
		-p "$_port" >"$_work/moto.log" 2>&1 &
	moto_pid=$!
	_i=0
	until curl -s "http://127.0.0.1:$_port/moto-api/" >/dev/null 2>&1; do
		_i=$((_i + 1))
		if [ $_i -gt 300 ] || ! kill -0 "$moto_pid" 2>/dev/null; then
			moto_error="moto did not start: $(cat "$_work/moto.log")"
			return 1
		fi
		sleep 0.1
	done
	if ! _setup=$(timeout 60 python3 "$_root/tests/moto_setup.py" "http://127.0.0.1:$_port"); then
		moto_error="moto_setup.py could not create the IAM users"
		return 1
	fi
	eval "$_setup"
	export LG_AK LG_SK LG_DENIED_AK LG_DENIED_SK LG_MOTO="http://127.0.0.1:$_port"
	return 0
}
