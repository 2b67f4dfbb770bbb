#!/bin/sh
# port_taken.sh: a protocol port held by another process stops the start
# with one message (not the log line and a copy on stderr) that names the
# port and the reason: "port N is in use by another process"; when the port
# is the default one (6379, the user gave only --pg-port, as a newcomer
# with a Redis server running does), the message says it is the default
# rather than blaming a --port the user did not write. The ports are
# held by a Python listener on 127.0.0.1 (6379 only when free: when
# another process has it, that one holds it).
# Prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
. "$(dirname "$0")/../support/gw.sh"
dir=$(mktemp -d /tmp/lg-port.XXXXXX)
holder=
trap '[ -n "$holder" ] && kill $holder 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "  $l"; done; fail=1; }

# hold PORT: a listener on 127.0.0.1:PORT until killed ($holder); false
# when the port cannot be had (another process has it)
hold() {
	# the last holder's "held" must not be read as this one's (the
	# background job truncates the file in its own time)
	rm -f "$dir/hold.out"
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
s.listen()
print("held", flush=True)
time.sleep(600)' "$1" >"$dir/hold.out" 2>/dev/null &
	holder=$!
	i=0
	until grep -q held "$dir/hold.out" 2>/dev/null; do
		kill -0 $holder 2>/dev/null || { holder=; return 1; }
		i=$((i + 1)); [ $i -gt 400 ] && return 1
		sleep 0.05
	done
}
release() { [ -n "$holder" ] && kill $holder 2>/dev/null; wait $holder 2>/dev/null; holder=; }

# A gateway that starts after all (the port was not held) is stopped
# after 30 s, failing the check, instead of running until the suite's limit.
lg() { timeout 30 "$LG_BIN" "$@"; }

# 1. --port given and taken
port=$(gw_free_port)
hold "$port" || bad "could not hold port $port"
lg --port "$port" --pg-port 0 --admin-port 0 >"$dir/out" 2>"$dir/err"; rc=$?
release
lines=$(grep -c "port $port is in use by another process" "$dir/err")
if [ $rc = 1 ] && [ "$lines" = 1 ] && grep -q "bad value for --port" "$dir/err" &&
	[ "$(grep -c . "$dir/err")" = 1 ]; then
	ok "--port $port taken: exit 1, one line: $(cat "$dir/err" | cut -c26-)"
else bad "--port $port taken: exit $rc, $lines lines name the port" "$(cat "$dir/err")"; fi

# 2. the default port taken, only --pg-port given
if hold 6379 || ! /usr/bin/python3 -c 'import socket; socket.socket().bind(("127.0.0.1", 6379))' 2>/dev/null; then
	pg=$(gw_free_port)
	lg --pg-port "$pg" --admin-port 0 >"$dir/out" 2>"$dir/err"; rc=$?
	release
	if [ $rc = 1 ] && [ "$(grep -c . "$dir/err")" = 1 ] &&
		grep -q "the Redis port (--port, by default 6379): cannot listen on 127.0.0.1:6379: port 6379 is in use by another process" "$dir/err" &&
		! grep -q "bad value for --port" "$dir/err"; then
		ok "default port 6379 taken, --pg-port $pg: one line naming the default: $(cut -c26- "$dir/err")"
	else bad "default port 6379 taken: exit $rc" "$(cat "$dir/err")"; fi
else
	bad "port 6379: neither free to hold nor taken"
fi

# 3. with --log-file, the log has it and stderr once too
port=$(gw_free_port)
hold "$port" || bad "could not hold port $port"
lg --port "$port" --pg-port 0 --admin-port 0 --log-file "$dir/log" >"$dir/out" 2>"$dir/err"; rc=$?
release
if [ $rc = 1 ] && [ "$(grep -c "port $port is in use" "$dir/err")" = 1 ] &&
	[ "$(grep -c "port $port is in use" "$dir/log")" = 1 ]; then
	ok "with --log-file: once in the log, once on stderr"
else bad "with --log-file: exit $rc" "stderr: $(cat "$dir/err")" "log: $(cat "$dir/log")"; fi

echo "1..$n"
exit $fail
