#!/bin/sh
# tls_clients.sh: TLS on both ports with real clients. Makes a CA, a
# server certificate (SANs 127.0.0.1, localhost and the Kubernetes Service
# name leasegate.default.svc.cluster.local) and a client certificate with
# the openssl CLI in a scratch directory, then:
#   gateway A: --port and --tls-port side by side, --tls-auth-clients yes
#     (mutual TLS): redis-cli --tls refused without a client certificate,
#     served with one; redis-py ssl=True LOCK.ACQUIRE/RELEASE; a lock taken
#     over TLS is held for the plain port; INFO; psql sslmode=verify-full
#     (by IP, and by the Service's DNS name), psycopg and psycopg2 over
#     TLS; a certificate for another name refused by verify-full; data
#     sent behind an SSLRequest refused (08P01); /metrics counts the failed
#     handshakes; SIGHUP reloads the certificate (a session open across it
#     keeps working, a new one sees the new serial and subject), a reload
#     with a mismatched key keeps the old one and says why. TLS session
#     resumption (openssl s_client -sess_out/-sess_in, TLS 1.2 and 1.3):
#     a session of the PostgreSQL port (no certificate) offered to the
#     Redis TLS port gets a full handshake and is refused; one of the
#     Redis TLS port (with a certificate) resumes there without it, and
#     not on the PostgreSQL port nor after SIGHUP.
#   gateway B: --tls-auth-clients no, --pg-tls required: redis-cli with
#     the CA only; plaintext psql refused with 28000, TLS psql served.
#   gateway C: --pg-password: psql channel_binding=require served over
#     TLS (SCRAM-SHA-256-PLUS, tls-server-end-point) and refused by libpq
#     without TLS; a client of the script's own: the mechanisms offered,
#     a wrong binding refused (28000), 'y' where PLUS was offered refused,
#     p= under SCRAM-SHA-256 refused, PLUS without TLS refused.
#   gateway D: --pg-auth password: psql over TLS served, over plain TCP
#     refused (28000) before the password is asked.
#   a mismatched key, an unreadable key: the start refused, naming the
#     option and the file.
# Prints "ok N - what" / "not ok N - what"; exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
PY=/usr/bin/python3
command -v redis-cli >/dev/null && command -v psql >/dev/null && command -v openssl >/dev/null ||
	{ echo "skip - redis-cli, psql or openssl missing"; exit 77; }
work=$(mktemp -d "${LG_WORK:-/tmp}/lg-tls.XXXXXX")
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; wait $p 2>/dev/null; done; rm -rf "$work"' EXIT
. "$(dirname "$0")/../support/gw.sh"

n=0 fail=0
pass() { n=$((n + 1)); printf 'ok %s - %s\n' "$n" "$1"; }
flunk() {
	n=$((n + 1)); printf 'not ok %s - %s\n' "$n" "$1"; shift
	for l in "$@"; do printf '  %s\n' "$l"; done
	fail=1
}
# expect "what" "output" "pattern" (a shell case pattern)
expect() {
	case "$2" in
	$3) pass "$1" ;;
	*) flunk "$1" "got:  $2" "want: $3" ;;
	esac
}

# ---- certificates (keys stay in the scratch directory) ----
svc=leasegate.default.svc.cluster.local
cert() { # cert NAME SUBJECT SERIAL [SAN]
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/$1.key" \
		-out "$work/$1.csr" -subj "$2" 2>/dev/null || return 1
	if [ -n "${4:-}" ]; then printf 'subjectAltName=%s\n' "$4" >"$work/$1.ext"; else : >"$work/$1.ext"; fi
	openssl x509 -req -in "$work/$1.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
		-set_serial "$3" -days 2 -extfile "$work/$1.ext" -out "$work/$1.crt" 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca.key" \
	-out "$work/ca.crt" -days 2 -subj "/CN=leasegate test CA" 2>/dev/null &&
	cert server "/CN=$svc" 0x1001 "DNS:$svc,DNS:localhost,IP:127.0.0.1" &&
	cert server2 "/CN=$svc/O=reloaded" 0x2002 "DNS:$svc,DNS:localhost,IP:127.0.0.1" &&
	cert other "/CN=other.default.svc.cluster.local" 0x3003 "DNS:other.default.svc.cluster.local" &&
	cert client "/CN=app" 0x4004 ||
	{ echo "not ok 1 - openssl could not make the test certificates"; exit 1; }
cp "$work/server.crt" "$work/live.crt" && cp "$work/server.key" "$work/live.key"

start() { # start LOG ARGS...: sets gw_pid; waits for the admin port
	log=$1; shift
	"$LG_BIN" "$@" >"$log" 2>&1 &
	gw_pid=$!
	pids="$pids $gw_pid"
}
wait_port() {
	i=0
	until $PY -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 100 ] && { echo "not ok - leasegate did not start"; cat "$2"; exit 1; }
		sleep 0.05
	done
}

# ---- gateway A: mutual TLS on the Redis TLS port ----
port=$(gw_free_port) tport=$(gw_free_port) pgport=$(gw_free_port) admin=$(gw_free_port)
start "$work/a.log" --port "$port" --tls-port "$tport" --pg-port "$pgport" --admin-port "$admin" \
	--tls-cert-file "$work/live.crt" --tls-key-file "$work/live.key" \
	--tls-ca-cert-file "$work/ca.crt"
a_pid=$gw_pid
wait_port "$tport" "$work/a.log"
wait_port "$pgport" "$work/a.log"

tls_cli() { redis-cli -h 127.0.0.1 -p "$tport" --tls --cacert "$work/ca.crt" "$@" 2>&1; }
mtls_cli() { tls_cli --cert "$work/client.crt" --key "$work/client.key" "$@"; }

expect "redis-cli --tls without a client certificate is refused" \
	"$(tls_cli PING)" "*[Ee]rror*"
expect "redis-cli --tls with a client certificate: PING" "$(mtls_cli PING)" "PONG"
expect "redis-cli --tls: LOCK.ACQUIRE over TLS" "$(mtls_cli LOCK.ACQUIRE cli-tls 30000)" "[0-9]*"
expect "redis-cli on the plain port beside it" \
	"$(redis-cli -h 127.0.0.1 -p "$port" LOCK.ACQUIRE plain-side 30000 2>&1)" "[0-9]*"
expect "INFO server shows the TLS port and that certificates are required" \
	"$(mtls_cli INFO server | tr -d '\r' | grep '^tls_')" "tls_port:$tport
tls_auth_clients:yes"

got=$($PY - "$port" "$tport" "$work" <<'EOF' 2>&1
import sys, redis
port, tport, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
tls = redis.Redis(host="127.0.0.1", port=tport, ssl=True, ssl_ca_certs=f"{work}/ca.crt",
                  ssl_certfile=f"{work}/client.crt", ssl_keyfile=f"{work}/client.key",
                  single_connection_client=True)
plain = redis.Redis(host="127.0.0.1", port=port, single_connection_client=True)
token = tls.execute_command("LOCK.ACQUIRE", "py-tls", 30000)
held_plain = plain.execute_command("LOCK.ACQUIRE", "py-tls", 30000)  # held over TLS: nil
released = tls.execute_command("LOCK.RELEASE", "py-tls")
after = plain.execute_command("LOCK.ACQUIRE", "py-tls", 30000)
print(f"token={token} plain-while-held={held_plain} released={released} plain-after={after is not None}")
EOF
)
expect "redis-py ssl=True: LOCK.ACQUIRE/RELEASE over TLS, the plain port sees the same lock" "$got" \
	"token=[0-9]* plain-while-held=None released=1 plain-after=True"

PGU="user=app dbname=locks port=$pgport sslrootcert=$work/ca.crt"
expect "psql sslmode=verify-full by IP: pg_advisory_lock(1) over TLS" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=verify-full $PGU" \
		-c 'SELECT pg_advisory_lock(1)' -c 'SELECT pg_advisory_unlock(1)' 2>&1)" "
t"
expect "psql sslmode=verify-full by the Service's DNS name" \
	"$(psql -X -A -t "host=$svc hostaddr=127.0.0.1 sslmode=verify-full $PGU" \
		-c 'SELECT pg_try_advisory_lock(2)' 2>&1)" "t"
expect "psql sslmode=verify-full to another name is refused by the client" \
	"$(psql -X -A -t "host=other.default.svc.cluster.local hostaddr=127.0.0.1 sslmode=verify-full $PGU" \
		-c 'SELECT 1' 2>&1)" "*does not match host name*"
expect "psql: \\conninfo says SSL" \
	"$(psql -X "host=localhost sslmode=verify-full $PGU" -c '\conninfo' 2>&1)" "*SSL connection (protocol: TLSv1.3*"

got=$($PY - "$pgport" "$work" "$svc" <<'EOF' 2>&1
import sys, psycopg, psycopg2
pgport, work, svc = sys.argv[1], sys.argv[2], sys.argv[3]
dsn = f"host={svc} hostaddr=127.0.0.1 port={pgport} user=app dbname=locks sslmode=verify-full sslrootcert={work}/ca.crt"
with psycopg.connect(dsn) as c:
    c.execute("SELECT pg_advisory_lock(1)")
    print("psycopg", c.pgconn.ssl_in_use, c.execute("SELECT pg_try_advisory_lock(1)").fetchone()[0])
c2 = psycopg2.connect(dsn)
cur = c2.cursor()
cur.execute("SELECT pg_advisory_lock(7)")
cur.execute("SELECT pg_advisory_unlock(7)")
print("psycopg2", cur.fetchone()[0])
EOF
)
expect "psycopg 3 and psycopg2 with sslmode=verify-full: advisory locks over TLS" "$got" "psycopg True True
psycopg2 True"

got=$($PY - "$pgport" <<'EOF' 2>&1
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
ssl_request = b"\0\0\0\x08\x04\xd2\x16\x2f"
startup = b"\0\0\0\x16\0\x03\0\0user\0app\0\0"
s.sendall(ssl_request + startup)  # the startup packet before the answer
data = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
print(data[:1].decode(), "C08P01" in data.decode(errors="replace"),
      "received unencrypted data after SSL request" in data.decode(errors="replace"))
EOF
)
expect "data sent behind an SSLRequest is refused (08P01, CVE-2021-23214)" "$got" "E True True"

failed=$(curl -s "http://127.0.0.1:$admin/metrics" | awk '/^leasegate_tls_handshakes_failed_total /{print $2}')
expect "/metrics counts the failed handshake (no client certificate)" "$failed" "[1-9]*"

# ---- TLS session resumption: per port and certificate policy ----
# s_client saves a session (-sess_out) on one port and offers it again
# (-sess_in); it prints "Reused" when the server resumed it, "New" for a
# full handshake. On the Redis TLS port it sends PING: PONG means a command
# ran. A session made on the PostgreSQL port (no certificate asked) must
# not let a client past the Redis port's required certificate.
resume() { # resume VERSION redis|pg IN|- OUT|- [s_client options]: "Reused|New[ PONG]"
	_v=$1 _kind=$2 _in=$3 _out=$4
	shift 4
	if [ "$_kind" = pg ]; then
		set -- -connect "127.0.0.1:$pgport" -starttls postgres "$@"
		_say=''
	else
		set -- -connect "127.0.0.1:$tport" "$@"
		_say='PING\r\n'
	fi
	[ "$_in" = - ] || set -- -sess_in "$_in" "$@"
	[ "$_out" = - ] || set -- -sess_out "$_out" "$@"
	# TLS 1.3 tickets come after the handshake: s_client waits for them
	_o=$( (printf "$_say"; sleep 1) |
		timeout 10 openssl s_client "-$_v" -CAfile "$work/ca.crt" "$@" 2>&1)
	printf '%s' "$(printf '%s\n' "$_o" | grep -a -o -m1 -E '^(New|Reused)')"
	case "$_o" in *PONG*) printf ' PONG' ;; esac
}
for v in tls1_2 tls1_3; do
	expect "$v: a session made on the PostgreSQL port without a certificate" \
		"$(resume $v pg - "$work/pg-$v.sess")" "New"
	expect "$v: resumed on the PostgreSQL port" "$(resume $v pg "$work/pg-$v.sess" -)" "Reused"
	expect "$v: offered to the Redis TLS port (certificate required): a full handshake, refused" \
		"$(resume $v redis "$work/pg-$v.sess" -)" "New"
	expect "$v: a session made on the Redis TLS port with a client certificate" \
		"$(resume $v redis - "$work/mtls-$v.sess" -cert "$work/client.crt" -key "$work/client.key")" \
		"New PONG"
	expect "$v: resumed on the Redis TLS port, its verified certificate carried" \
		"$(resume $v redis "$work/mtls-$v.sess" -)" "Reused PONG"
	expect "$v: offered to the PostgreSQL port: a full handshake" \
		"$(resume $v pg "$work/mtls-$v.sess" -)" "New"
done

# ---- SIGHUP: a new certificate for new sessions, live ones kept ----
got=$($PY - "$tport" "$work" "$a_pid" <<'EOF' 2>&1
import os, shutil, signal, socket, ssl, sys, time
import redis
tport, work, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def served_cert():
    ctx = ssl.create_default_context(cafile=f"{work}/ca.crt")
    ctx.load_cert_chain(f"{work}/client.crt", f"{work}/client.key")
    with socket.create_connection(("127.0.0.1", tport)) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            der = s.getpeercert(binary_form=True)
            c = s.getpeercert()
            return format(int(c["serialNumber"], 16), "x"), dict(x[0] for x in c["subject"]).get("organizationName", "-")
old = redis.Redis(host="127.0.0.1", port=tport, ssl=True, ssl_ca_certs=f"{work}/ca.crt",
                  ssl_certfile=f"{work}/client.crt", ssl_keyfile=f"{work}/client.key",
                  single_connection_client=True)
token = old.execute_command("LOCK.ACQUIRE", "across-reload", 30000)
print("before", *served_cert())
shutil.copy(f"{work}/server2.crt", f"{work}/live.crt")
shutil.copy(f"{work}/server2.key", f"{work}/live.key")
os.kill(pid, signal.SIGHUP)
time.sleep(0.3)
print("after", *served_cert())
print("old session", old.execute_command("LOCK.RENEW", "across-reload"),
      old.execute_command("LOCK.RELEASE", "across-reload"))
# a key that does not match the certificate: refused, the reloaded one stays
shutil.copy(f"{work}/other.key", f"{work}/live.key")
os.kill(pid, signal.SIGHUP)
time.sleep(0.3)
print("bad key", *served_cert())
EOF
)
expect "SIGHUP: a session open across the reload keeps working, new ones see the new certificate" \
	"$got" "before 1001 -
after 2002 reloaded
old session 1 1
bad key 2002 reloaded"
expect "a reload with a mismatched key is logged with the option and the file" \
	"$(grep 'TLS files not reloaded' "$work/a.log")" \
	"*SIGHUP: TLS files not reloaded, the previous ones stay in use: bad value for --tls-key-file: $work/live.key is not the key of the certificate*"
expect "/metrics counts the failed reload" \
	"$(curl -s "http://127.0.0.1:$admin/metrics" | grep '^leasegate_tls_reloads_failed_total')" \
	"leasegate_tls_reloads_failed_total 1"
for v in tls1_2 tls1_3; do
	expect "$v: a session of the context before SIGHUP is not resumed after it (refused)" \
		"$(resume $v redis "$work/mtls-$v.sess" -)" "New"
done

# ---- gateway B: no client certificates, PostgreSQL TLS required ----
port=$(gw_free_port) tport=$(gw_free_port) pgport=$(gw_free_port)
start "$work/b.log" --port "$port" --tls-port "$tport" --pg-port "$pgport" --admin-port 0 \
	--tls-cert-file "$work/server.crt" --tls-key-file "$work/server.key" \
	--tls-auth-clients no --pg-tls required
wait_port "$tport" "$work/b.log"
wait_port "$pgport" "$work/b.log"
expect "--tls-auth-clients no: redis-cli --tls with the CA only" "$(tls_cli LOCK.ACQUIRE b 30000)" "[0-9]*"
expect "--tls-auth-clients no: INFO says so" \
	"$(tls_cli INFO server | tr -d '\r' | grep '^tls_auth_clients')" "tls_auth_clients:no"
PGU="user=app dbname=locks port=$pgport sslrootcert=$work/ca.crt"
expect "--pg-tls required: plaintext psql refused, naming the rule" \
	"$(psql -X "host=127.0.0.1 sslmode=disable $PGU" -c 'SELECT 1' 2>&1)" \
	'*FATAL:  no pg_hba.conf entry for host "127.0.0.1", user "app", database "locks", no encryption*--pg-tls required*'
got=$($PY - "$pgport" <<'EOF' 2>&1
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
body = b"\0\3\0\0user\0app\0database\0locks\0\0"
s.sendall(len(body + b"1234").to_bytes(4, "big") + body)
data = b""
while (b := s.recv(4096)):
    data += b
fields = dict((f[:1].decode(), f[1:].decode()) for f in data[5:].split(b"\0") if f)
print(data[:1].decode(), fields.get("S"), fields.get("C"))
EOF
)
expect "--pg-tls required: a plaintext startup gets FATAL 28000" "$got" "E FATAL 28000"
expect "--pg-tls required: psql sslmode=require served" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=require $PGU" -c 'SELECT pg_advisory_lock(5)' 2>&1)" ""
expect "--pg-tls required: psql sslmode=prefer (the default) goes over TLS" \
	"$(psql -X -A -t "host=127.0.0.1 $PGU" -c 'SELECT pg_try_advisory_lock(6)' 2>&1)" "t"

# ---- gateway C: SCRAM-SHA-256-PLUS (channel binding) ----
port=$(gw_free_port) pgport=$(gw_free_port)
start "$work/c.log" --port "$port" --pg-port "$pgport" --admin-port 0 \
	--tls-cert-file "$work/server.crt" --tls-key-file "$work/server.key" --pg-password s3cret
wait_port "$pgport" "$work/c.log"
PGU="user=app dbname=locks port=$pgport sslrootcert=$work/ca.crt password=s3cret"
expect "psql channel_binding=require over TLS (SCRAM-SHA-256-PLUS)" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=verify-full channel_binding=require $PGU" \
		-c 'SELECT pg_try_advisory_lock(9)' 2>&1)" "t"
expect "psql channel_binding=require without TLS: libpq refuses" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=disable channel_binding=require $PGU" \
		-c 'SELECT 1' 2>&1)" "*channel binding required, but SSL not in use*"
expect "psql over TLS with channel_binding=disable (SCRAM-SHA-256, n): served" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=require channel_binding=disable $PGU" \
		-c 'SELECT 1' 2>&1)" "1"
# A SCRAM client of its own: the mechanisms offered, then an exchange with
# a chosen mechanism, gs2 flag and binding (the server certificate's
# SHA-256, its signature being ECDSA with SHA-256), the right password.
scram() { # scram tls|plain MECH FLAG good|wrong|none: "mechs=... -> OK" or "-> E CODE MESSAGE"
	$PY - "$pgport" "$work" "$@" <<'EOF2' 2>&1
import base64, hashlib, hmac, socket, ssl, struct, sys
port, work, how, mech, flag, binding = int(sys.argv[1]), sys.argv[2], *sys.argv[3:7]
def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b
def recv_msg(s):
    h = recvn(s, 5)
    return h[:1], recvn(s, struct.unpack("!I", h[1:])[0] - 4)
def send(s, t, body):
    s.sendall(t + struct.pack("!I", len(body) + 4) + body)
def verdict(t, b):
    if t == b"E":
        f = dict((x[:1].decode(), x[1:].decode()) for x in b.split(b"\0") if x)
        return f"E {f.get('C')} {f.get('M')}"
    return f"{t.decode()} {struct.unpack('!I', b[:4])[0]}"
s = socket.create_connection(("127.0.0.1", port))
der = b""
if how == "tls":
    s.sendall(struct.pack("!II", 8, 80877103))
    assert recvn(s, 1) == b"S"
    ctx = ssl.create_default_context(cafile=f"{work}/ca.crt")
    s = ctx.wrap_socket(s, server_hostname="localhost")
    der = s.getpeercert(binary_form=True)
body = struct.pack("!I", 196608) + b"user\0app\0database\0locks\0\0"
s.sendall(struct.pack("!I", len(body) + 4) + body)
t, b = recv_msg(s)
mechs = ",".join(m.decode() for m in b[4:].split(b"\0") if m)
gs2 = (flag + ",,").encode()
data = {"good": hashlib.sha256(der).digest(), "none": b""}.get(binding)
if data is None:
    data = bytearray(hashlib.sha256(der).digest()); data[0] ^= 1; data = bytes(data)
bare = b"n=,r=fyko+d2lbbFgONRv9qkxdawL"
first = gs2 + bare
send(s, b"p", mech.encode() + b"\0" + struct.pack("!I", len(first)) + first)
t, b = recv_msg(s)
if t != b"R" or struct.unpack("!I", b[:4])[0] != 11:
    print(f"mechs={mechs} ->", verdict(t, b)); sys.exit()
sfirst = b[4:]
a = dict(x.split(b"=", 1) for x in sfirst.split(b","))
salted = hashlib.pbkdf2_hmac("sha256", b"s3cret", base64.b64decode(a[b"s"]), int(a[b"i"]))
ckey = hmac.new(salted, b"Client Key", "sha256").digest()
without = b"c=" + base64.b64encode(gs2 + data) + b",r=" + a[b"r"]
sig = hmac.new(hashlib.sha256(ckey).digest(), bare + b"," + sfirst + b"," + without, "sha256").digest()
proof = base64.b64encode(bytes(x ^ y for x, y in zip(ckey, sig)))
send(s, b"p", without + b",p=" + proof)
t, b = recv_msg(s)
if t == b"R" and struct.unpack("!I", b[:4])[0] == 12:
    t, b = recv_msg(s)
print(f"mechs={mechs} ->", "OK" if (t, b[:4]) == (b"R", bytes(4)) else verdict(t, b))
EOF2
}
P=tls-server-end-point
expect "TLS: SCRAM-SHA-256-PLUS offered first; PLUS with the certificate's hash: served" \
	"$(scram tls SCRAM-SHA-256-PLUS p=$P good)" "mechs=SCRAM-SHA-256-PLUS,SCRAM-SHA-256 -> OK"
expect "TLS: PLUS with another certificate's hash (a relay in the middle): refused, 28000" \
	"$(scram tls SCRAM-SHA-256-PLUS p=$P wrong)" \
	"mechs=* -> E 28000 SCRAM channel binding check failed"
expect "TLS: 'y' (client thinks the server cannot bind) where PLUS was offered: refused" \
	"$(scram tls SCRAM-SHA-256 y none)" "mechs=* -> E 28000 SCRAM channel binding negotiation error*"
expect "TLS: p=$P under SCRAM-SHA-256: refused, 08P01" \
	"$(scram tls SCRAM-SHA-256 p=$P good)" "mechs=* -> E 08P01 malformed SCRAM message*"
expect "plain TCP: only SCRAM-SHA-256 offered; PLUS selected anyway: refused" \
	"$(scram plain SCRAM-SHA-256-PLUS p=$P none)" \
	"mechs=SCRAM-SHA-256 -> E 08P01 client selected an invalid SASL authentication mechanism"
expect "plain TCP: SCRAM-SHA-256 with 'y': served" "$(scram plain SCRAM-SHA-256 y none)" \
	"mechs=SCRAM-SHA-256 -> OK"
expect "the refused binding is logged" "$(grep -c 'SCRAM channel binding check failed' "$work/c.log")" "1"

# ---- gateway D: --pg-auth password (cleartext): over TLS only ----
port=$(gw_free_port) pgport=$(gw_free_port)
start "$work/d.log" --port "$port" --pg-port "$pgport" --admin-port 0 \
	--tls-cert-file "$work/server.crt" --tls-key-file "$work/server.key" \
	--pg-password s3cret --pg-auth password
wait_port "$pgport" "$work/d.log"
PGU="user=app dbname=locks port=$pgport sslrootcert=$work/ca.crt password=s3cret"
expect "--pg-auth password: psql over TLS served" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=verify-full $PGU" -c 'SELECT pg_try_advisory_lock(3)' 2>&1)" "t"
expect "--pg-auth password: psql over plain TCP refused before the password is asked, saying why" \
	"$(psql -X -A -t "host=127.0.0.1 sslmode=disable $PGU" -c 'SELECT 1' 2>&1)" \
	'*FATAL:  user "app" cannot log in here: the server asks for a cleartext password (--pg-auth password), which it takes over TLS only*--pg-allow-cleartext-over-plain yes*'

# ---- a bad key refuses the start ----
# (a Redis port, not 0: a gateway with every listener off is refused first)
expect "a key that does not match the certificate refuses the start" \
	"$("$LG_BIN" --port "$(gw_free_port)" --pg-port 0 --admin-port 0 --tls-cert-file "$work/server.crt" \
		--tls-key-file "$work/other.key" 2>&1; echo "exit $?")" \
	"*bad value for --tls-key-file: $work/other.key is not the key of the certificate in --tls-cert-file $work/server.crt*exit 1"
expect "an unreadable key refuses the start" \
	"$("$LG_BIN" --port "$(gw_free_port)" --pg-port 0 --admin-port 0 --tls-cert-file "$work/server.crt" \
		--tls-key-file "$work/missing.key" 2>&1; echo "exit $?")" \
	"*bad value for --tls-key-file: cannot read $work/missing.key: No such file or directory*exit 1"

exit $fail
