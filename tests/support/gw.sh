# gw.sh: what the integration scripts share to run a gateway. Sourced:
#
#   . "$(dirname "$0")/../support/gw.sh"
#   port=$(gw_free_port)
#   "$LG_BIN" --port "$port" ... 2>"$log" &
#   gw_ready "$port" || { echo "not ok 1 - leasegate did not start"; cat "$log"; exit 1; }
#
# gw_free_port prints a TCP port free on 127.0.0.1 now, drawn from
# 20000-31999: below the kernel's ephemeral ports, so that neither another
# bind to port 0 nor a client's connect takes it before the gateway binds
# it (tests/support/gwproc.c's gp_free_port draws alike).
# gw_ready PORT [TRIES] waits until the Redis port PORT answers PING with
# PONG — open and past -LOADING, the store open — polling every 50 ms,
# TRIES times at most (default 200: 10 s); returns 1 if it never did.
# gw_script_init NAME sets up a script's $work, $pids, $failed and say;
# gw_start NAME [TABLE] then starts a named gateway (both below).

gw_free_port() {
	python3 -c '
import random, socket
for port in [random.randrange(20000, 32000) for _ in range(64)] + [0]:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(s.getsockname()[1])
    break
'
}

gw_ready() {
	_gw_i=0
	until [ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ]; do
		_gw_i=$((_gw_i + 1))
		[ "$_gw_i" -gt "${2:-200}" ] && return 1
		sleep 0.05
	done
	return 0
}

# gw_start NAME [TABLE [OPTION...]]: a gateway named NAME on a free port, on the
# embedded store or on TABLE of the suite's moto ($LG_MOTO, keys $LG_AK and
# $LG_SK; the table made if missing), logging to $work/gw-NAME.log; sets
# port_NAME and pid_NAME and adds the pid to $pids (the caller's cleanup
# kills them), with the OPTIONs given. A gateway that does not answer
# within 30 s is reported with
# the caller's `say "not ok" ...` and its log, and the script exits 1.
gw_start() {
	_port=$(gw_free_port)
	_name=$1 _table=${2:-}
	shift
	[ $# -gt 0 ] && shift
	if [ -n "$_table" ]; then
		AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_REGION=us-east-1 \
			AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO "$LG_BIN" --port "$_port" --pg-port 0 \
			--admin-port 0 --holder-label "gw-$_name" --table "$_table" --create-table \
			"$@" >"$work/gw-$_name.log" 2>&1 &
	else
		"$LG_BIN" --port "$_port" --pg-port 0 --admin-port 0 --holder-label "gw-$_name" \
			"$@" >"$work/gw-$_name.log" 2>&1 &
	fi
	pids="$pids $!"
	eval "pid_$_name=$!"
	if ! gw_ready "$_port" 300; then
		say "not ok" "gateway $_name starts"
		sed 's/^/# /' "$work/gw-$_name.log"
		exit 1
	fi
	eval "port_$_name=$_port"
}

# gw_script_init NAME: a scratch directory $work (NAME.XXXXXX under
# $LG_WORK), an empty $pids, failed=0 and `say ok|"not ok" WHAT` (prints,
# and sets failed on "not ok"); at exit the processes of $pids are killed
# and $work removed.
gw_script_init() {
	work=$(mktemp -d "${LG_WORK:-/tmp}/$1.XXXXXX")
	pids=
	failed=0
	trap gw_script_cleanup EXIT
	trap 'exit 1' HUP INT TERM
	say() {
		echo "$1 $2"
		[ "$1" = ok ] || failed=1
	}
}
gw_script_cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
