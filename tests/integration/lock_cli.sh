#!/bin/bash
# lock_cli: `leasegate lock NAME -- command` against the real binary
# ($LG_BIN): the command's environment and exit status, a second copy
# refused (--no-wait), waiting (--wait, its token larger), a wait that runs
# out, a command not found, signals forwarded, the lease lost while the
# command runs (the gateway killed; on moto, the item deleted) -> SIGTERM
# to the command and exit 76, the lock released at the end, bad options.
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK).
# Prints "ok <what>" per check, "skip <what>" without LG_MOTO, and
# "FAIL: <what>" (exit 1) at the first failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
work=$(mktemp -d "${LG_WORK:-/tmp}/lock_cli.XXXXXX")
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$work"/*.log "$work"/*.err; do
		[ -s "$f" ] || continue
		echo "== $f"
		cat "$f"
	done
	exit 1
}
ok() { echo "ok $*"; }

now_ms() { date +%s%3N; }
. "$(dirname "$0")/../support/gw.sh"

# wait_for FILE REGEX MS: true once a line of FILE matches.
wait_for() {
	local end=$(($(now_ms) + $3))
	while [ "$(now_ms)" -lt $end ]; do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# wait_exit PID MS: true once PID has exited (its status in $rc).
wait_exit() {
	local end=$(($(now_ms) + $2))
	while kill -0 "$1" 2>/dev/null; do
		[ "$(now_ms)" -lt $end ] || return 1
		sleep 0.02
	done
	wait "$1"
	rc=$?
	return 0
}

# start_gw NAME [TABLE]: starts leasegate on a free port, sets port_NAME
# and pid_NAME.
start_gw() {
	local name=$1 table=${2:-} port
	port=$(gw_free_port)
	if [ -n "$table" ]; then
		AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_REGION=us-east-1 \
			AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO "$LG_BIN" --port "$port" --pg-port 0 \
			--admin-port 0 --table "$table" --create-table >"$work/gw-$name.log" 2>&1 &
	else
		"$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 >"$work/gw-$name.log" 2>&1 &
	fi
	pids+=($!)
	eval "port_$name=$port pid_$name=$!"
	wait_for "$work/gw-$name.log" "ready: redis protocol" 10000 || fail "gateway $name did not start"
}

# lock PORT ARGS...: runs `leasegate lock -p PORT ARGS` in the foreground
# (stdout in $out, stderr in $work/last.err, status in $rc).
lock() {
	local port=$1
	shift
	out=$("$LG_BIN" lock -p "$port" "$@" 2>"$work/last.err")
	rc=$?
}

# expect_rc WANT WHAT: the last lock's status.
expect_rc() {
	[ "$rc" = "$1" ] || fail "$2: exit status $rc, want $1 (stderr: $(cat "$work/last.err"))"
}

# not_held PORT NAME WHAT: LOCK.STATE says the lock is not held.
not_held() {
	local st
	st=$(redis-cli -p "$1" -3 LOCK.STATE "$2" | head -1)
	[ "$st" = "held 0" ] || fail "$3: LOCK.STATE $2 says '$st', want 'held 0'"
}

command -v redis-cli >/dev/null || fail "redis-cli is missing: apt-get install redis-tools"

# --- usage ---
for bad in "" "--lease 500ms job true" "--lease soon job true" "--bogus job true" \
	"--wait 1s --no-wait job true" "job" "-p 70000 job true" "--user u job true"; do
	# shellcheck disable=SC2086
	"$LG_BIN" lock $bad >/dev/null 2>"$work/usage.err"
	rc=$?
	[ "$rc" = 64 ] || fail "usage '$bad': exit status $rc, want 64"
	[ -s "$work/usage.err" ] || fail "usage '$bad': no message"
done
ok "bad options: exit 64 with a message"
"$LG_BIN" lock --help | grep -q '^usage: leasegate lock' || fail "lock --help"
"$LG_BIN" lock --help | grep -q '^   76 ' || fail "lock --help lists no exit status 76"
"$LG_BIN" --help | grep -q 'lock \[options\] NAME' || fail "leasegate --help does not mention lock"
ok "--help of lock and of leasegate"

# --- on the embedded store ---
start_gw emb
P=$port_emb

lock "$P" job -- sh -c 'echo "$LEASEGATE_LOCK $LEASEGATE_TOKEN"'
expect_rc 0 "echo"
[ "$out" = "job 1" ] || fail "the command's environment: '$out', want 'job 1'"
ok "the command runs with LEASEGATE_LOCK and LEASEGATE_TOKEN ('$out')"
not_held "$P" job "released at the end"
ok "released at the end (LOCK.STATE: held 0)"

lock "$P" job -- sh -c 'exit 3'
expect_rc 3 "exit 3"
ok "the command's exit status is passed through (3)"
LEASEGATE_PORT=$P "$LG_BIN" lock job -- sh -c 'kill -USR1 $$' 2>"$work/last.err"
rc=$?
expect_rc $((128 + 10)) "killed by SIGUSR1 (LEASEGATE_PORT)"
ok "a command killed by a signal: 128+signal; LEASEGATE_PORT is the port"

lock "$P" job -- no-such-command-here
expect_rc 127 "command not found"
grep -q 'no-such-command-here: command not found' "$work/last.err" || fail "no 'command not found' message"
printf 'echo hi\n' >"$work/not-executable"
chmod 644 "$work/not-executable"
lock "$P" job -- "$work/not-executable"
expect_rc 126 "not executable"
ok "command not found: 127; not executable: 126"
not_held "$P" job "released after a command that could not start"

# The first holds; a second is refused at once; a third waits for it.
"$LG_BIN" lock -p "$P" --holder first job -- sh -c \
	'echo "$LEASEGATE_TOKEN" >"$0/t1"; sleep 1.5; echo end >"$0/end1"' "$work" 2>"$work/first.err" &
first=$!
pids+=($first)
wait_for "$work/t1" . 3000 || fail "the first copy did not run"
[ "$(redis-cli -p "$P" -3 LOCK.STATE job | sed -n 2p)" = "holder first" ] || fail "--holder not shown"
ok "--holder labels the lease"
t0=$(now_ms)
lock "$P" --no-wait job -- true
expect_rc 75 "--no-wait while held"
[ $(($(now_ms) - t0)) -lt 1000 ] || fail "--no-wait took $(($(now_ms) - t0)) ms"
ok "--no-wait while another holds: 75 at once"
lock "$P" --wait 200ms job -- true
expect_rc 75 "--wait 200ms while held"
ok "--wait that runs out: 75"
lock "$P" --wait 10s job -- sh -c '[ -f "$0/end1" ] && echo "$LEASEGATE_TOKEN"' "$work"
expect_rc 0 "--wait 10s after the first"
wait_exit "$first" 5000 || fail "the first copy did not end"
[ "$rc" = 0 ] || fail "the first copy's status: $rc"
t1=$(cat "$work/t1")
[ -n "$out" ] && [ "$out" -gt "$t1" ] || fail "the waiter's token '$out' is not larger than $t1"
ok "--wait gets the lock once the first command ended (tokens $t1, $out)"

lock "$P" --wait 1s job2 -- true
expect_rc 0 "--wait 1s on a free lock"
"$LG_BIN" lock -p "$P" job2 -- sleep 5 2>"$work/long.err" &
long=$!
pids+=($long)
sleep 0.3
t0=$(now_ms)
lock "$P" --wait 1s job2 -- true
expect_rc 75 "--wait 1s while held"
el=$(($(now_ms) - t0))
[ $el -ge 900 ] && [ $el -lt 4000 ] || fail "--wait 1s gave up after $el ms"
kill -TERM "$long"; wait "$long" 2>/dev/null
ok "--wait 1s runs out after $el ms: 75"

# Signals sent to leasegate lock go to the command.
"$LG_BIN" lock -p "$P" job3 -- sh -c \
	'trap "echo term >\"$0/sig\"; exit 5" TERM; echo up >"$0/up"; sleep 30 & wait' "$work" \
	2>"$work/sig.err" &
sp=$!
pids+=($sp)
wait_for "$work/up" . 3000 || fail "the signalled command did not start"
kill -TERM "$sp"
wait_exit "$sp" 5000 || fail "SIGTERM: leasegate lock did not exit"
[ "$rc" = 5 ] || fail "SIGTERM forwarded: exit status $rc, want the command's 5"
[ "$(cat "$work/sig" 2>/dev/null)" = term ] || fail "SIGTERM was not forwarded to the command"
not_held "$P" job3 "released after a forwarded SIGTERM"
ok "SIGTERM is forwarded to the command; its status (5) is the exit status; released"

# leasegate lock itself paused (^Z, SIGSTOP) past several PINGs: the
# gateway kept renewing, so the lease is not taken for lost once it goes on.
"$LG_BIN" lock -p "$P" --lease 3s job8 -- sleep 3.5 2>"$work/pause.err" &
pp=$!
pids+=($pp)
sleep 0.5
kill -STOP "$pp"
sleep 2.5
kill -CONT "$pp"
wait_exit "$pp" 5000 || fail "paused: leasegate lock did not exit"
[ "$rc" = 0 ] || fail "paused for 2.5 s (PING every 1 s): exit status $rc, want 0 ($(cat "$work/pause.err"))"
ok "leasegate lock paused past its PINGs: not a loss, exit 0"

# Released behind its back by (name, token) from another connection: the
# lease ended before the command did, so 76 (seen at the latest by the
# LOCK.RELEASE at the end, which answers 0).
rm -f "$work/t9"
"$LG_BIN" lock -p "$P" job9 -- sh -c 'echo "$LEASEGATE_TOKEN" >"$0"; sleep 1' "$work/t9" \
	2>"$work/rel.err" &
rp=$!
pids+=($rp)
wait_for "$work/t9" . 3000 || fail "job9 did not start"
[ "$(redis-cli -p "$P" LOCK.RELEASE job9 "$(cat "$work/t9")")" = 1 ] || fail "job9: LOCK.RELEASE by token"
wait_exit "$rp" 5000 || fail "released by token: leasegate lock did not exit"
[ "$rc" = 76 ] || fail "released by token from elsewhere: exit status $rc, want 76"
grep -q 'job9' "$work/rel.err" || fail "released by token: no message"
ok "released by (name, token) from another connection while the command ran: 76"

# The command does not inherit the connection: leasegate lock killed, the
# gateway sees the connection close and releases, though the command runs on.
"$LG_BIN" lock -p "$P" job5 -- sh -c 'echo $$ >"$0/up5"; exec sleep 30' "$work" &
kp=$!
pids+=($kp)
wait_for "$work/up5" . 3000 || fail "job5 did not start"
orphan=$(cat "$work/up5") # the command's pid (sh exec'd sleep)
pids+=($orphan)
kill -9 "$kp"
end=$(($(now_ms) + 3000))
until [ "$(redis-cli -p "$P" -3 LOCK.STATE job5 | head -1)" = "held 0" ]; do
	[ "$(now_ms)" -lt $end ] || fail "leasegate lock killed: the lock stays held (the command keeps the connection?)"
	sleep 0.05
done
kill -0 "$orphan" 2>/dev/null || fail "the command died with leasegate lock"
kill -9 "$orphan"
ok "leasegate lock killed: its connection closes and the lock is released"

# Unreachable gateway: 69 with the reason.
lock "$(gw_free_port)" job -- true
expect_rc 69 "nothing listening"
grep -q 'cannot connect to 127.0.0.1:' "$work/last.err" || fail "no 'cannot connect' message"
ok "no gateway: 69 ($(cat "$work/last.err"))"

# AUTH, and a Unix socket, on a gateway with --requirepass.
sock="$work/gw.sock"
"$LG_BIN" --port 0 --unixsocket "$sock" --requirepass s3cret --pg-port 0 --admin-port 0 \
	>"$work/gw-auth.log" 2>&1 &
pids+=($!)
wait_for "$work/gw-auth.log" "ready: redis protocol" 10000 || fail "gateway auth did not start"
"$LG_BIN" lock -s "$sock" -a s3cret job -- sh -c 'echo "$LEASEGATE_TOKEN"' >"$work/out" 2>"$work/last.err"
rc=$?
expect_rc 0 "-s and -a"
[ "$(cat "$work/out")" = 1 ] || fail "-s and -a: printed '$(cat "$work/out")'"
LEASEGATE_PASSWORD=s3cret "$LG_BIN" lock -s "$sock" --user default job -- true 2>"$work/last.err"
rc=$?
expect_rc 0 "--user default with LEASEGATE_PASSWORD"
ok "a Unix socket (-s), AUTH with -a, and --user with LEASEGATE_PASSWORD"
"$LG_BIN" lock -s "$sock" job -- true 2>"$work/last.err"
rc=$?
expect_rc 69 "no password"
grep -q 'NOAUTH' "$work/last.err" || fail "no password: no NOAUTH in '$(cat "$work/last.err")'"
"$LG_BIN" lock -s "$sock" -a wrong job -- true 2>"$work/last.err"
rc=$?
expect_rc 69 "a wrong password"
grep -q 'WRONGPASS' "$work/last.err" || fail "a wrong password: no WRONGPASS in '$(cat "$work/last.err")'"
ok "no password or a wrong one: 69, with the gateway's NOAUTH / WRONGPASS"

# -- lease lost: the gateway dies while the command runs --
lost_run() { # PORT NAME TAG LEASE: starts a command that marks SIGTERM
	rm -f "$work/up-$3" "$work/term-$3"
	"$LG_BIN" lock -p "$1" --lease "$4" --grace 5s "$2" -- sh -c \
		'trap "echo term >\"$0\"; exit 0" TERM; echo up >"$1"; sleep 60 & wait' \
		"$work/term-$3" "$work/up-$3" 2>"$work/lost-$3.err" &
	lp=$!
	pids+=($lp)
	wait_for "$work/up-$3" . 5000 || fail "$3: the command did not start"
}
lost_run "$P" job4 kill 3s
kill -9 "$pid_emb"
wait_exit "$lp" 3000 || fail "gateway killed: leasegate lock did not exit"
[ "$rc" = 76 ] || fail "gateway killed: exit status $rc, want 76"
[ "$(cat "$work/term-kill" 2>/dev/null)" = term ] || fail "gateway killed: the command got no SIGTERM"
grep -q 'lost the lock job4' "$work/lost-kill.err" || fail "gateway killed: no message"
ok "gateway killed (kill -9): the command gets SIGTERM, exit 76"

# -- a command that ignores SIGTERM is killed after --grace --
start_gw grace
rm -f "$work/pid7"
"$LG_BIN" lock -p "$port_grace" --grace 1s job7 -- sh -c \
	'trap "" TERM; echo $$ >"$0"; exec sleep 60' "$work/pid7" 2>"$work/grace.err" &
lp=$!
pids+=($lp)
wait_for "$work/pid7" . 3000 || fail "grace: the command did not start"
cmd_pid=$(cat "$work/pid7")
pids+=($cmd_pid)
t0=$(now_ms)
kill -9 "$pid_grace"
wait_exit "$lp" 5000 || fail "grace: leasegate lock did not exit"
el=$(($(now_ms) - t0))
[ "$rc" = 76 ] || fail "grace: exit status $rc, want 76"
kill -0 "$cmd_pid" 2>/dev/null && fail "grace: the command that ignores SIGTERM still runs"
[ $el -ge 900 ] || fail "grace: SIGKILL after $el ms, before --grace 1s"
ok "a command that ignores SIGTERM is killed after --grace 1s ($el ms), exit 76"

# -- lease lost: the gateway hangs (SIGSTOP): PINGs go unanswered --
start_gw stop
lost_run "$port_stop" job6 stop 3s
t0=$(now_ms)
kill -STOP "$pid_stop"
wait_exit "$lp" 5000 || { kill -CONT "$pid_stop"; fail "gateway stopped: leasegate lock did not exit"; }
el=$(($(now_ms) - t0))
kill -CONT "$pid_stop"
[ "$rc" = 76 ] || fail "gateway stopped: exit status $rc, want 76"
[ "$(cat "$work/term-stop" 2>/dev/null)" = term ] || fail "gateway stopped: the command got no SIGTERM"
grep -q 'no answer to PING' "$work/lost-stop.err" || fail "gateway stopped: no PING message"
ok "gateway stopped (SIGSTOP): a PING unanswered after $el ms, SIGTERM, exit 76"

# -- lease lost: on moto, the item deleted behind the gateway's back --
if [ -z "${LG_MOTO:-}" ]; then
	echo "skip the deleted item on moto: no LG_MOTO (tests/run-integration.sh sets it)"
	exit 0
fi
table=lg-lockcli-$$
start_gw ddb "$table"
D=$port_ddb
lock "$D" ddb-job -- sh -c 'echo "$LEASEGATE_LOCK $LEASEGATE_TOKEN"'
expect_rc 0 "on moto"
[ "$out" = "ddb-job 1" ] || fail "on moto: '$out', want 'ddb-job 1'"
not_held "$D" ddb-job "on moto, released at the end"
ok "on moto: runs with the token, released at the end"
lost_run "$D" ddb-job del 3s
t0=$(now_ms)
python3 - "$table" ddb-job <<'PY' || fail "boto3 could not delete the lock item"
import os, sys, boto3
t, n = sys.argv[1:3]
d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'], region_name='us-east-1',
                 aws_access_key_id=os.environ['LG_AK'], aws_secret_access_key=os.environ['LG_SK'])
k = {}
for e in d.describe_table(TableName=t)['Table']['KeySchema']:
    k[e['AttributeName']] = {'S': 'LOCK#' + n if e['KeyType'] == 'HASH' else 'LOCK'}
d.delete_item(TableName=t, Key=k, ConditionExpression='attribute_exists(#o)',
              ExpressionAttributeNames={'#o': 'owner'})
PY
wait_exit "$lp" 8000 || fail "item deleted: leasegate lock did not exit"
[ "$rc" = 76 ] || fail "item deleted: exit status $rc, want 76"
[ "$(cat "$work/term-del" 2>/dev/null)" = term ] || fail "item deleted: the command got no SIGTERM"
grep -q 'LOST deleted' "$work/lost-del.err" || fail "item deleted: no 'LOST deleted' message"
ok "on moto, the item deleted: pushed LOST deleted after $(($(now_ms) - t0)) ms, SIGTERM, exit 76"
