#!/bin/sh
# protected_mode.sh: protected mode seen from a client beyond loopback.
# The client runs in a network namespace of its own, joined to the host by
# a veth pair on 198.18.0.0/15 (the range reserved for such tests): the
# gateway, bound to 0.0.0.0, sees it come from 198.18.x.2, not from
# loopback. Needs root (ip netns); without it every check is a skip, which
# CI refuses. Checks redis-cli and psql from there: refused with Redis's
# DENIED and PostgreSQL's 28000 while no password is set, served with one
# (NOAUTH until AUTH; SCRAM) or with --protected-mode no; loopback and the
# Unix socket always served; an ACL user without a password refused on
# both ports from beyond loopback.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "  $l"; done; fail=1; }

id=$$
ns=lgpm$id
host_if=lgpm${id}a
peer_if=lgpm${id}b
# a /30 of 198.18.0.0/15 from the pid, so that runs side by side differ
oct=$((id % 250 + 1))
host_ip=198.18.$oct.1
peer_ip=198.18.$oct.2
work=$(mktemp -d /tmp/lg-pm.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	ip link del "$host_if" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
if ! { ip netns add "$ns" &&
	ip link add "$host_if" type veth peer name "$peer_if" &&
	ip link set "$peer_if" netns "$ns" &&
	ip addr add "$host_ip/30" dev "$host_if" && ip link set "$host_if" up &&
	ip -n "$ns" addr add "$peer_ip/30" dev "$peer_if" &&
	ip -n "$ns" link set "$peer_if" up && ip -n "$ns" link set lo up; } 2>"$work/ip.err"; then
	echo "skip - no network namespace (needs root and ip netns): $(cat "$work/ip.err")"
	exit 0
fi
remote() { ip netns exec "$ns" "$@"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'; }

# start NAME OPTIONS...: a gateway on 0.0.0.0 with a Redis and a PostgreSQL
# port; sets rport, pport, sock
start() {
	name=$1; shift
	rport=$(free_port) pport=$(free_port) sock="$work/$name.sock"
	"$LG_BIN" --bind 0.0.0.0 --port "$rport" --pg-port "$pport" --admin-port 0 \
		--unixsocket "$sock" "$@" 2>"$work/$name.log" &
	gw=$!
	pids="$pids $gw"
	i=0
	until redis-cli -p "$rport" PING >/dev/null 2>&1 ||
		redis-cli -p "$rport" PING 2>&1 | grep -q NOAUTH; do
		i=$((i + 1))
		[ $i -gt 200 ] && { echo "leasegate did not start"; cat "$work/$name.log"; exit 1; }
		sleep 0.05
	done
}
stop() { kill "$gw"; wait "$gw" 2>/dev/null; }

# expect WHAT PATTERN COMMAND...: the command's output matches the glob
expect() {
	what=$1 want=$2; shift 2
	got=$("$@" 2>&1)
	case "$got" in
	$want) ok "$what" ;;
	*) notok "$what" "got:  $(printf %s "$got" | head -c 400)" "want: $want" ;;
	esac
}

# 1. no password: remote clients refused, local ones served
start open
echo "# client in network namespace $ns at $peer_ip, gateway at $host_ip"
expect "redis-cli from $peer_ip: DENIED" \
	"DENIED leasegate is running in protected mode because protected mode is enabled and no password is set for the default user.*--protected-mode no*" \
	remote redis-cli -h "$host_ip" -p "$rport" PING
expect "LOCK.ACQUIRE from $peer_ip: DENIED too" "DENIED *" \
	remote redis-cli -h "$host_ip" -p "$rport" LOCK.ACQUIRE a
expect "psql from $peer_ip: 28000 with the same text" \
	"*FATAL:  leasegate is running in protected mode because protected mode is enabled and no password is set for PostgreSQL users*--protected-mode no*" \
	remote psql -X "host=$host_ip port=$pport user=u dbname=d sslmode=disable" -c "select 1"
# the ErrorResponse's fields, read off the wire (no driver needed)
expect "startup from $peer_ip: FATAL, SQLSTATE 28000" "S=FATAL C=28000" \
	remote python3 -c 'import socket, struct, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
body = struct.pack("!i", 196608) + b"user\0u\0database\0d\0\0"
s.sendall(struct.pack("!i", len(body) + 4) + body)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
assert data[:1] == b"E", data[:40]
fields = dict((f[:1].decode(), f[1:].decode()) for f in data[5:].split(b"\0") if f)
print("S=%s C=%s" % (fields["S"], fields["C"]))' "$host_ip" "$pport"
expect "redis-cli on loopback: served" "PONG" redis-cli -h 127.0.0.1 -p "$rport" PING
expect "redis-cli on the Unix socket: served" "PONG" redis-cli -s "$sock" PING
expect "psql on loopback: served" "1" \
	psql -X -At "host=127.0.0.1 port=$pport user=u dbname=d sslmode=disable" -c "select 1"
expect "refusals counted in rejected_connections" "*rejected_connections:4*" \
	redis-cli -p "$rport" INFO stats
expect "a refusal is logged, once a minute with the count" \
	"*protected mode: refused a redis client from $peer_ip:*--protected-mode no*" cat "$work/open.log"
n=$((n + 1))
lines=$(grep -c "protected mode: refused" "$work/open.log")
[ "$lines" = 1 ] && echo "ok $n - 4 refusals, 1 log line" ||
	{ echo "not ok $n - 4 refusals, $lines log lines"; fail=1; }
stop

# 2. passwords set: remote clients authenticate as anyone
start pw --requirepass rpw-secret --pg-password pgpw-secret
expect "with --requirepass, remote: NOAUTH, not DENIED" "NOAUTH*" \
	remote redis-cli -h "$host_ip" -p "$rport" PING
expect "with --requirepass, remote AUTH: served" "PONG" \
	remote redis-cli -h "$host_ip" -p "$rport" --no-auth-warning -a rpw-secret PING
expect "with --pg-password, remote psql: served" "1" \
	remote env PGPASSWORD=pgpw-secret psql -X -At \
	"host=$host_ip port=$pport user=u dbname=d sslmode=disable" -c "select 1"
stop

# 3. a password on one port only: the other stays protected
start half --requirepass rpw-secret
expect "Redis with a password: remote NOAUTH" "NOAUTH*" \
	remote redis-cli -h "$host_ip" -p "$rport" PING
expect "PostgreSQL in trust: remote still refused" "*FATAL:  leasegate is running in protected mode*" \
	remote psql -X "host=$host_ip port=$pport user=u dbname=d sslmode=disable" -c "select 1"
stop

# 3b. the ACL file decides for the Redis port: a default user with a
# password is as --requirepass; a nopass default user is no password
printf 'user default on >acl-secret ~* &* +@all\n' >"$work/pw.acl"
chmod 600 "$work/pw.acl"
start aclpw --aclfile "$work/pw.acl"
expect "--aclfile, default with a password: remote NOAUTH" "NOAUTH*" \
	remote redis-cli -h "$host_ip" -p "$rport" PING
expect "--aclfile, default with a password: remote AUTH served" "PONG" \
	remote redis-cli -h "$host_ip" -p "$rport" --no-auth-warning -a acl-secret PING
stop
printf 'user default on nopass ~* &* +@all\nuser app on >app-secret ~* +@all\n' >"$work/nopass.acl"
chmod 600 "$work/nopass.acl"
start aclnopass --aclfile "$work/nopass.acl"
expect "--aclfile, default nopass: remote DENIED" "DENIED *" \
	remote redis-cli -h "$host_ip" -p "$rport" PING
stop

# 3c. a user without a password (nopass) beside users with one: both
# ports refuse it from beyond loopback, and serve it on loopback
printf '%s\n' 'user default on >acl-secret ~* &* +@all' 'user open on nopass ~* +@all' \
	>"$work/mixed.acl"
chmod 600 "$work/mixed.acl"
start mixed --aclfile "$work/mixed.acl"
expect "nopass user, remote AUTH: DENIED, connection closed" \
	"AUTH failed: DENIED leasegate is running in protected mode because protected mode is enabled and no password is set for the user 'open'*" \
	remote redis-cli -h "$host_ip" -p "$rport" --no-auth-warning --user open --pass any PING
expect "nopass user, remote HELLO 3 AUTH: DENIED" "*DENIED *user 'open'*" \
	remote redis-cli -h "$host_ip" -p "$rport" HELLO 3 AUTH open any
expect "nopass user, remote psql: refused the same" \
	"*FATAL:  leasegate is running in protected mode*" \
	remote psql -X "host=$host_ip port=$pport user=open dbname=d sslmode=disable" -c "select 1"
expect "nopass user on loopback: served" "PONG" \
	redis-cli -h 127.0.0.1 -p "$rport" --no-auth-warning --user open --pass any PING
expect "user with a password, remote: served" "PONG" \
	remote redis-cli -h "$host_ip" -p "$rport" --no-auth-warning --user default --pass acl-secret PING
stop

# 4. --protected-mode no (as Redis writes it)
start off --protected-mode no
expect "--protected-mode no: remote redis-cli served" "PONG" \
	remote redis-cli -h "$host_ip" -p "$rport" PING
expect "--protected-mode no: remote psql served" "1" \
	remote psql -X -At "host=$host_ip port=$pport user=u dbname=d sslmode=disable" -c "select 1"
expect "CONFIG GET protected-mode" "protected-mode
no" redis-cli -p "$rport" CONFIG GET protected-mode
stop

[ $fail -eq 0 ]
