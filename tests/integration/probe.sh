#!/bin/sh
# probe: `leasegate --probe` (gateway/admin/probe.c), the image's HEALTHCHECK,
# against the real binary's admin port: 0 on 200 with the status line
# printed, 1 on 503, 404, a refused connection, a listener that never
# answers (within its 3 s bound), an admin port turned off; the port and
# the address come from the same flags and LEASEGATE_* variables as the
# server's. Prints `ok <n> <what>`.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
work=$(mktemp -d "${LG_WORK:-/tmp}/probe.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
n=0
ok() {
	n=$((n + 1))
	echo "ok $n $1"
}
fail() {
	n=$((n + 1))
	echo "not ok $n $1"
	for f in "$work"/*.log "$work"/out "$work"/err; do
		[ -f "$f" ] && sed "s|^|# $(basename "$f"): |" "$f"
	done
	exit 1
}
. "$(dirname "$0")/../support/gw.sh"
wait_admin() {
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$1/healthz"; do
		i=$((i + 1))
		[ $i -gt 200 ] && fail "the gateway's admin port $1 did not open"
		sleep 0.05
	done
}
probe() {
	"$LG_BIN" --probe "$@" >"$work/out" 2>"$work/err"
}

admin=$(gw_free_port)
"$LG_BIN" --bind 0.0.0.0 --port 0 --pg-port 0 --admin-port "$admin" >"$work/gw.log" 2>&1 &
pids="$pids $!"
wait_admin "$admin"
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$admin/readyz"; do
	i=$((i + 1))
	[ $i -gt 200 ] && fail "the gateway did not become ready"
	sleep 0.05
done

probe /readyz --admin-port "$admin" && grep -q '^HTTP/1.1 200 OK$' "$work/out" ||
	fail "--probe /readyz on a ready gateway (--bind 0.0.0.0: asked on 127.0.0.1) exits 0"
ok "--probe /readyz on a ready gateway exits 0, status line on stdout"
probe --admin-port "$admin" && grep -q ' 200 ' "$work/out" ||
	fail "--probe without a path asks /readyz"
ok "--probe without a path asks /readyz"
LEASEGATE_ADMIN_PORT=$admin probe /healthz && grep -q ' 200 ' "$work/out" ||
	fail "--probe /healthz takes the port from LEASEGATE_ADMIN_PORT"
ok "--probe /healthz takes the port from LEASEGATE_ADMIN_PORT"
if probe /nothing --admin-port "$admin"; then fail "--probe /nothing (404) exits 1"; fi
grep -q '404' "$work/err" || fail "--probe /nothing names the answer on stderr"
ok "--probe of a missing path (404) exits 1, the answer on stderr"

# a gateway whose table is not reachable: alive, not ready (503)
dead=$(gw_free_port)
admin2=$(gw_free_port)
AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y AWS_REGION=us-east-1 "$LG_BIN" --port 0 --pg-port 0 \
	--admin-port "$admin2" --table locks --endpoint "http://127.0.0.1:$dead" >"$work/gw2.log" 2>&1 &
pids="$pids $!"
wait_admin "$admin2"
if probe /readyz --admin-port "$admin2"; then fail "--probe /readyz on a gateway not ready exits 1"; fi
grep -q '503' "$work/err" || fail "--probe /readyz on a gateway not ready names the 503"
probe /healthz --admin-port "$admin2" || fail "--probe /healthz on a gateway not ready exits 0"
ok "a gateway whose table is unreachable: /readyz 503 exits 1, /healthz exits 0"

closed=$(gw_free_port)
if probe --admin-port "$closed"; then fail "--probe of a closed port exits 1"; fi
grep -q 'cannot connect' "$work/err" || fail "--probe of a closed port says it cannot connect"
ok "--probe of a closed port exits 1: cannot connect"

# a listener that accepts and never answers: the probe gives up in time
silent=$(gw_free_port)
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $silent)); s.listen(8)
c = s.accept(); time.sleep(30)" &
pids="$pids $!"
# listening before the probe (a loaded machine starts Python slowly): this
# connection is the one accepted, the probe's waits in the backlog
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $silent), 1)" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "the silent listener did not start"
	sleep 0.1
done
t0=$(date +%s)
if probe --admin-port "$silent"; then fail "--probe of a silent listener exits 1"; fi
t=$(($(date +%s) - t0))
grep -q 'no answer within 3000 ms' "$work/err" && [ "$t" -le 5 ] ||
	fail "--probe of a silent listener gives up after 3 s (took ${t}s)"
ok "--probe of a listener that never answers exits 1 after its 3 s bound (${t}s)"

if probe --admin-port 0; then fail "--probe with --admin-port 0 exits 1"; fi
grep -q 'admin port is off' "$work/err" || fail "--probe with --admin-port 0 says the port is off"
if probe --no-such-option 1; then fail "--probe with an unknown option exits 1"; fi
grep -q "unknown option '--no-such-option'" "$work/err" ||
	fail "--probe names an unknown option"
ok "--probe with the admin port off, or an unknown option, exits 1 saying why"
