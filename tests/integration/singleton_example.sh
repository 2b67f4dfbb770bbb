#!/bin/bash
# singleton_example: the "Run a singleton job" examples against the real
# leasegate: examples/singleton.py (redis-py, Debian's python3-redis for
# /usr/bin/python3), examples/singleton.sh (redis-cli) and
# examples/singleton.js (ioredis, at the version of
# node_fenced/package-lock.json, as fenced_examples.sh installs it: `npm
# ci` into a scratch directory under $LG_WORK). For each:
#   - the first copy leads, a second waits;
#   - SIGTERM of the leader: it resigns, the second leads (higher token);
#   - on two gateways on moto: the leader's gateway stopped past its lease,
#     another client leads; continued, the example reports the loss, stops
#     its work, campaigns again and leads again once the lock is free;
#   - the example's gateway drained (SIGTERM, --drain-grace): it adopts
#     its term on the other gateway and works on with the same token.
# Run by tests/run-integration.sh (LG_BIN, LG_MOTO, LG_AK, LG_SK, LG_WORK);
# installs nothing else. Prints "ok <what>" per case, "skip <what>" for the
# cases it cannot run (no LG_MOTO), "FAIL: <what>" and exits 1 at the first
# failure.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/singleton.XXXXXX")
PY=/usr/bin/python3
LEASE=2000
pids=()

cleanup() {
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$work"/*.log; do
		echo "== $f"
		cat "$f"
	done
	exit 1
}

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

# last_token FILE: the token of the last "leading token=N" line.
last_token() { sed -n 's/^leading token=\([0-9]*\)$/\1/p' "$1" | tail -1; }

# start_gw NAME [TABLE [OPTION...]]: starts leasegate, sets port_NAME and pid_NAME.
start_gw() {
	local name=$1 table=${2:-} port
	shift
	[ $# -gt 0 ] && shift
	port=$(gw_free_port)
	if [ -n "$table" ]; then
		AWS_ACCESS_KEY_ID=$LG_AK AWS_SECRET_ACCESS_KEY=$LG_SK AWS_REGION=us-east-1 \
			AWS_ENDPOINT_URL_DYNAMODB=$LG_MOTO "$LG_BIN" --port "$port" --pg-port 0 \
			--admin-port 0 --table "$table" --create-table "$@" >"$work/gw-$name.log" 2>&1 &
	else
		"$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 >"$work/gw-$name.log" 2>&1 &
	fi
	pids+=($!)
	eval "port_$name=$port pid_$name=$!"
	wait_for "$work/gw-$name.log" "ready: redis protocol" 10000 || fail "gateway $name did not start"
}

# run_example KIND PORT NAME LOG [ALSO]: starts one copy of the example
# (KIND py, sh or js; ALSO: HOST:PORT of the gateway to reconnect to), sets $ex.
run_example() {
	local kind=$1 port=$2 name=$3 log=$4 also=${5:-}
	case $kind in
	py)
		$PY "$root/examples/singleton.py" --port "$port" --also "$also" --name "$name" \
			--lease-ms $LEASE --step 0.2 >"$log" 2>&1 &
		;;
	js)
		NODE_PATH=$work/node/node_modules node "$root/examples/singleton.js" --port "$port" \
			--also "$also" --name "$name" --lease-ms $LEASE --step 0.2 >"$log" 2>&1 &
		;;
	*)
		STEP=0.2 LEASEGATE_PORT=$port LEASEGATE_ALSO=$also \
			"$root/examples/singleton.sh" "$name" $LEASE >"$log" 2>&1 &
		;;
	esac
	ex=$!
	pids+=($ex)
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

# The first copy leads, the second waits; SIGTERM hands on at once.
resign_hands_on() {
	local kind=$1 l1=$work/$1-1.log l2=$work/$1-2.log e1 e2 t1 t2 t0
	run_example "$kind" "$port_emb" "job-$kind" "$l1"
	e1=$ex
	wait_for "$l1" '^working token=' 5000 || fail "$kind: the first copy does not lead"
	run_example "$kind" "$port_emb" "job-$kind" "$l2"
	e2=$ex
	sleep 1
	grep -q leading "$l2" && fail "$kind: two leaders"
	t0=$(now_ms)
	kill -TERM "$e1"
	wait_for "$l2" '^working token=' 3000 || fail "$kind: SIGTERM of the leader did not hand on"
	echo "$kind: SIGTERM of the leading copy -> the other leads after $(($(now_ms) - t0)) ms"
	wait_exit "$e1" 3000 || fail "$kind: the first copy did not exit"
	[ "$rc" = 0 ] || fail "$kind: exit status $rc"
	t1=$(last_token "$l1") t2=$(last_token "$l2")
	grep -q "^resigned token=$t1$" "$l1" || fail "$kind: no resign"
	[ "$t2" -gt "$t1" ] || fail "$kind: token $t2 after $t1"
	kill -TERM "$e2"
	wait_exit "$e2" 3000 || fail "$kind: the second copy did not exit"
	grep -q "^resigned token=$t2$" "$l2" || fail "$kind: no resign of the second copy"
	echo "ok $kind: one copy leads, SIGTERM resigns and hands on (tokens $t1, $t2)"
}

# The leader's gateway stopped past its lease: another client leads; the
# example, continued, reports the loss and leads again once it can.
loss_campaign_again() {
	local kind=$1 log=$work/$1-loss.log flog=$work/$1-follower.log e t1 t2 t3 fpid
	run_example "$kind" "$port_g1" "loss-$kind" "$log"
	e=$ex
	wait_for "$log" '^working token=' 5000 || fail "$kind: does not lead on moto"
	t1=$(last_token "$log")
	# Another client on the other gateway waits, leads, holds for a while
	# and leaves (closing its connection releases the lock).
	{ echo "LEADER.CAMPAIGN loss-$kind $LEASE"; sleep 6; } | redis-cli -p "$port_g2" >"$flog" 2>&1 &
	fpid=$!
	pids+=($fpid)
	sleep 0.3
	kill -STOP "$pid_g1"
	wait_for "$flog" '^[0-9]+$' $((3 * LEASE)) || { kill -CONT "$pid_g1"; fail "$kind: no takeover"; }
	t2=$(head -1 "$flog")
	kill -CONT "$pid_g1"
	[ "$t2" -gt "$t1" ] || fail "$kind: takeover token $t2 after $t1"
	wait_for "$log" '^lost: LOST (expired|taken_over); campaigning again$' 3000 ||
		fail "$kind: the loss was not reported"
	# No work after the loss until it leads again.
	local worked
	worked=$(sed -n '/^lost:/,$p' "$log" | grep -c '^working' || true)
	echo "$kind: $(grep '^lost:' "$log")"
	wait_for "$log" "^leading token=$((t2 + 1))$" 10000 || fail "$kind: does not lead again"
	t3=$(last_token "$log")
	[ "$worked" = 0 ] || fail "$kind: worked $worked time(s) after the loss before leading again"
	echo "$kind: tokens $t1, lost to $t2, leads again with $t3"
	kill -TERM "$e"
	wait_exit "$e" 3000 || fail "$kind: did not exit"
	echo "ok $kind: the loss reported, no work after it, leads again"
}

# The leader's gateway restarts (SIGTERM, --drain-grace): the example
# reconnects to the other gateway and adopts its term (the same token) and
# works on; a second copy waiting there leads only after it resigns.
adopt_across_restart() {
	local kind=$1 log=$work/$1-adopt.log flog=$work/$1-adopt-2.log e e2 t1 d=d$1 dport
	start_gw "$d" "$table" --drain-grace 5s
	eval "dport=\$port_$d"
	run_example "$kind" "$dport" "adopt-$kind" "$log" "127.0.0.1:$port_g2"
	e=$ex
	wait_for "$log" '^working token=' 5000 || fail "$kind: does not lead through $d"
	t1=$(last_token "$log")
	run_example "$kind" "$port_g2" "adopt-$kind" "$flog"
	e2=$ex
	sleep 0.5
	eval "kill -TERM \$pid_$d"
	wait_for "$log" "^adopted token=$t1$" 8000 || fail "$kind: did not adopt its term"
	local n
	n=$(grep -c "^working token=$t1$" "$log")
	sleep 0.6
	[ "$(grep -c "^working token=$t1$" "$log")" -gt "$n" ] || fail "$kind: no work after the adopt"
	grep -q '^leading' "$flog" && fail "$kind: the other copy led during the restart"
	kill -TERM "$e"
	wait_exit "$e" 3000 || fail "$kind: did not exit"
	grep -q "^resigned token=$t1$" "$log" || fail "$kind: no resign after the adopt"
	wait_for "$flog" "^leading token=$((t1 + 1))$" 5000 ||
		fail "$kind: the other copy does not lead next"
	kill -TERM "$e2"
	wait_exit "$e2" 3000 || fail "$kind: the second copy did not exit"
	echo "ok $kind: its gateway drained, it adopted its term on the other (token $t1) and worked on; the other copy led next ($((t1 + 1)))"
}

[ -n "${LG_BIN:-}" ] || fail "LG_BIN is not set"
$PY -c 'import redis' 2>/dev/null ||
	fail "redis-py is missing for $PY: apt-get install python3-redis"
command -v redis-cli >/dev/null || fail "redis-cli is missing: apt-get install redis-tools"
command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are missing"
# ioredis for singleton.js, at the lockfile's version (fenced_examples.sh's).
mkdir -p "$work/node" &&
	cp "$root/tests/integration/node_fenced/package.json" \
		"$root/tests/integration/node_fenced/package-lock.json" "$work/node/" &&
	(cd "$work/node" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) \
		>"$work/npm.log" 2>&1 || fail "npm ci (ioredis) from node_fenced/package-lock.json"

# The guide docs/guides/singleton-job.md links these examples (not copies
# of them: examples/ is the one source), each link resolving.
check_docs() {
	local doc=$root/docs/guides/singleton-job.md
	[ -f "$doc" ] || fail "no docs/guides/singleton-job.md"
	$PY - "$doc" examples/singleton.py examples/singleton.sh examples/singleton.js <<-'EOF' ||
		import os, re, sys
		doc = sys.argv[1]
		text = open(doc).read()
		links = re.findall(r"\]\(([^)#\s]+)\)", text)
		for want in sys.argv[2:]:
		    hits = [l for l in links
		            if os.path.normpath(os.path.join(os.path.dirname(doc), l)).endswith("/" + want)]
		    if not hits:
		        sys.exit(f"{doc}: no link to {want}")
		    if not os.path.isfile(os.path.join(os.path.dirname(doc), hits[0])):
		        sys.exit(f"{doc}: its link {hits[0]} does not resolve")
		if any(s in text for s in ("#!/usr/bin/env python3", "coproc LG", "#!/usr/bin/env node")):
		    sys.exit(f"{doc}: holds a copy of an example: link it instead")
	EOF
		fail "the singleton guide does not link the examples"
	echo "ok docs/guides/singleton-job.md links examples/singleton.py, .sh and .js"
}

check_docs
start_gw emb
for kind in py sh js; do
	resign_hands_on $kind
done
if [ -n "${LG_MOTO:-}" ]; then
	table=lg-singleton-$$
	start_gw g1 "$table"
	start_gw g2 "$table"
	for kind in py sh js; do
		loss_campaign_again $kind
	done
	for kind in py sh js; do
		adopt_across_restart $kind
	done
else
	# Counted and printed as a skip by the runner (and refused by .ci/run).
	echo "skip the loss cases: no LG_MOTO (tests/run-integration.sh sets it)"
fi
