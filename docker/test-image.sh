#!/bin/sh
# test-image.sh: builds the image (docker/build-image.sh) and runs it with
# podman, as a cluster would (read-only root, every capability dropped, no
# privilege escalation), against moto outside the container:
#   - the image: user 10001, ports 6379/5432/9464, STOPSIGNAL SIGTERM, a
#     HEALTHCHECK; its files only the binary, the libraries it loads and
#     the CA bundle (and passwd/group/nsswitch lines); its size printed;
#   - the container: the process runs as uid 10001, creates and opens the
#     table on moto (/readyz 200), answers PING on 6379 and a query on
#     5432, the HEALTHCHECK (`leasegate --probe`) passes;
#   - `podman stop` (SIGTERM, LEASEGATE_DRAIN_GRACE=5s) with a lease held
#     and an ADOPTABLE one: the container drains, a second container on
#     the same table adopts the adoptable lease (LOCK.ADOPT, the same
#     token), the first exits 0 by itself well within the grace period,
#     and the other lease is released in the table (its item has no
#     owner); the second container's stop releases the adopted one.
# Everything runs in a network namespace of its own (made here, removed
# at the end): the container's default ports cannot collide with anything
# on the machine, and moto is reached on that namespace's loopback.
# Needs root, podman, runc, debootstrap (the base), python3 with moto and
# boto3, redis-cli, psql, curl. Prints `ok <n> <what>`, `# ` lines with
# the size, and a closing "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^#define LG_VERSION "\(.*\)"$/\1/p' "$root/gateway/config.h")
export IMAGE=${IMAGE:-localhost/leasegate:$version}
RUN_FLAGS="--runtime runc"
CTR_FLAGS="--network host --ulimit nofile=1024:1024 --ulimit nproc=1000:1000"
GRACE=30

if [ "${1:-}" != --inside ]; then
	[ "$(id -u)" = 0 ] || { echo "test-image.sh: needs root (podman, ip netns)" >&2; exit 1; }
	"$root/docker/build-image.sh" || { echo "not ok 1 the image builds"; echo "0 passed, 1 failed"; exit 1; }
	ns=leasegate-img-$$
	ip netns add "$ns" || exit 1
	trap 'ip netns del "$ns"' EXIT
	trap 'exit 1' HUP INT TERM
	ip netns exec "$ns" ip link set lo up
	# nsenter, not `ip netns exec`: that one mounts a sysfs of its own,
	# without the cgroup mounts runc needs
	nsenter --net="/run/netns/$ns" "$0" --inside
	exit
fi

work=$(mktemp -d /tmp/leasegate-image.XXXXXX)
ctr=leasegate-test-$$
mnt=
holder= adopter=
. "$root/tests/support/moto.sh"
cleanup() {
	podman $RUN_FLAGS rm -f -t 0 "$ctr" "$ctr-b" >/dev/null 2>&1
	[ -n "$mnt" ] && podman image unmount "$IMAGE" >/dev/null 2>&1
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	[ -n "$adopter" ] && kill "$adopter" 2>/dev/null
	[ -n "${moto_pid:-}" ] && kill "$moto_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
passed=0
n=0
ok() {
	n=$((n + 1))
	passed=$((passed + 1))
	echo "ok $n $1"
}
fail() {
	n=$((n + 1))
	echo "not ok $n $1"
	[ -f "$work/ctr.log" ] || podman logs "$ctr" >"$work/ctr.log" 2>&1
	sed 's/^/# container: /' "$work/ctr.log" | tail -40
	echo "$passed passed, 1 failed"
	exit 1
}
inspect() { podman image inspect --format "$1" "$IMAGE"; }

# --- the image as built
[ "$(inspect '{{.Config.User}}')" = 10001:10001 ] || fail "the image's user is 10001:10001"
ports=$(inspect '{{range $p, $v := .Config.ExposedPorts}}{{$p}} {{end}}')
for p in 6379/tcp 5432/tcp 9464/tcp; do
	case " $ports" in *" $p "*) ;; *) fail "the image exposes $p (has: $ports)" ;; esac
done
[ "$(inspect '{{.Config.StopSignal}}')" = SIGTERM ] || fail "the image's STOPSIGNAL is SIGTERM"
inspect '{{.Config.Healthcheck.Test}}' | grep -q -- '--probe /readyz' ||
	fail "the image's HEALTHCHECK runs leasegate --probe /readyz"
ok "the image: user 10001:10001, ports 6379 5432 9464, STOPSIGNAL SIGTERM, HEALTHCHECK leasegate --probe"

mnt=$(podman image mount "$IMAGE") || fail "podman image mount"
(cd "$mnt" && find . ! -type d | sed 's|^\.||' | sort) >"$work/files"
other=$(grep -v -E '^/usr/local/bin/leasegate$|^(/usr)?/lib(64)?/.*\.so(\.[0-9]+)*$|^/etc/(ssl/certs/ca-certificates\.crt|passwd|group|nsswitch\.conf)$' "$work/files")
[ -z "$other" ] || fail "the image holds only the binary, its libraries and the CA bundle; also: $other"
[ ! -e "$mnt/bin/sh" ] || fail "no shell in the image"
size=$(inspect '{{.Size}}')
nlibs=$(grep -c '\.so' "$work/files")
bin=$(stat -c %s "$mnt/usr/local/bin/leasegate")
podman image unmount "$IMAGE" >/dev/null
mnt=
ok "the image holds the binary, $nlibs libraries, the CA bundle and passwd/group/nsswitch.conf: nothing else"
echo "# image $IMAGE: $size bytes ($((size / 1024 / 1024)) MiB), binary $bin bytes, $nlibs libraries"

# --- the container, against moto on this namespace's loopback
moto_start "$root" "$work" || fail "moto: $moto_error"
# shellcheck disable=SC2086
podman $RUN_FLAGS run -d --name "$ctr" $CTR_FLAGS --read-only --cap-drop ALL \
	--security-opt no-new-privileges --stop-timeout "$GRACE" \
	-e AWS_ACCESS_KEY_ID="$LG_AK" -e AWS_SECRET_ACCESS_KEY="$LG_SK" -e AWS_REGION=us-east-1 \
	-e LEASEGATE_TABLE=image-locks -e LEASEGATE_CREATE_TABLE=yes \
	-e LEASEGATE_ENDPOINT="$LG_MOTO" -e LEASEGATE_HOLDER_LABEL=image-test \
	-e LEASEGATE_DRAIN_GRACE=5s \
	-e LEASEGATE_STOP_TIMEOUT="${GRACE}s" \
	"$IMAGE" >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "podman run"; }
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9464/readyz)" = 200 ]; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "/readyz answers 200 on 9464 (the table created on moto and open)"
	sleep 0.1
done
ok "/readyz answers 200 on the admin port 9464: the table was created on moto and opened"

pid=$(podman inspect --format '{{.State.Pid}}' "$ctr")
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
[ "$uid" = 10001 ] || fail "the gateway runs as uid 10001 (is $uid)"
ok "the gateway process runs as uid 10001, not root"

[ "$(redis-cli -p 6379 PING)" = PONG ] || fail "PING on 6379 answers PONG"
ok "PING on 6379 answers PONG"
r=$(psql -h 127.0.0.1 -p 5432 -U app -d locks -Atc 'SELECT pg_try_advisory_lock(42)' 2>&1)
[ "$r" = t ] || fail "a PostgreSQL query on 5432 (pg_try_advisory_lock: $r)"
ok "PostgreSQL on 5432: SELECT pg_try_advisory_lock(42) answers t"

podman $RUN_FLAGS healthcheck run "$ctr" >"$work/hc.out" 2>&1 ||
	{ cat "$work/hc.out"; fail "podman healthcheck run: healthy"; }
ok "the HEALTHCHECK (leasegate --probe /readyz inside the container) passes"

# A client holds a 60 s lease on its open connection.
python3 - >"$work/holder.out" 2>&1 <<'EOF' &
import socket, sys
s = socket.create_connection(("127.0.0.1", 6379))
s.sendall(b"*3\r\n$12\r\nLOCK.ACQUIRE\r\n$9\r\nimage-job\r\n$5\r\n60000\r\n")
print(s.recv(100).decode().strip(), flush=True)
while s.recv(100):
    pass
print("closed", flush=True)
EOF
holder=$!
i=0
until grep -q '^:' "$work/holder.out"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "a client acquires a lease (got: $(cat "$work/holder.out"))"
	sleep 0.1
done
owners() {
	python3 -c '
import boto3, sys
d = boto3.client("dynamodb", endpoint_url=sys.argv[1], region_name="us-east-1",
                 aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
items = d.scan(TableName="image-locks")["Items"]
print(sum(1 for i in items if "owner" in i))' "$LG_MOTO" "$LG_AK" "$LG_SK"
}
[ "$(owners)" = 1 ] || fail "the lease is in the table (one item with an owner)"
ok "a client holds lease (token $(head -1 "$work/holder.out" | tr -d :)) on 6379: its item in the table has an owner"

# A second container on the same table (ports 6380/5433/9465), and a
# lease acquired ADOPTABLE through the first, its connection kept open.
# shellcheck disable=SC2086
podman $RUN_FLAGS run -d --name "$ctr-b" $CTR_FLAGS --read-only --cap-drop ALL \
	--security-opt no-new-privileges --stop-timeout "$GRACE" \
	-e AWS_ACCESS_KEY_ID="$LG_AK" -e AWS_SECRET_ACCESS_KEY="$LG_SK" -e AWS_REGION=us-east-1 \
	-e LEASEGATE_TABLE=image-locks -e LEASEGATE_ENDPOINT="$LG_MOTO" \
	-e LEASEGATE_PORT=6380 -e LEASEGATE_PG_PORT=5433 -e LEASEGATE_ADMIN_PORT=9465 \
	"$IMAGE" >"$work/run-b.out" 2>&1 || { cat "$work/run-b.out"; fail "podman run (second)"; }
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9465/readyz)" = 200 ]; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "the second container is ready on 9465"
	sleep 0.1
done
python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 6379))
s.sendall(b"*4\r\n$12\r\nLOCK.ACQUIRE\r\n$11\r\nimage-adopt\r\n$5\r\n60000\r\n$9\r\nADOPTABLE\r\n")
print(s.recv(200).decode().replace("\r\n", " ").strip(), flush=True)
while s.recv(100):
    pass
' >"$work/adoptable.out" 2>&1 &
i=0
until grep -q '^\*2' "$work/adoptable.out"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "a client acquires an ADOPTABLE lease (got: $(cat "$work/adoptable.out"))"
	sleep 0.1
done
# shellcheck disable=SC2046
set -- $(cat "$work/adoptable.out") # *2 :token $32 secret
atoken=${2#:} asecret=$4

t0=$(date +%s)
podman $RUN_FLAGS stop -t "$GRACE" "$ctr" >/dev/null 2>&1 &
stopper=$!
# The client reconnects to the second container and adopts, until the
# drain has marked the lease orphaned; then keeps its connection (the
# lease is its session's).
python3 -c '
import socket, sys, time
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
end = time.time() + 10
while time.time() < end:
    s = socket.create_connection(("127.0.0.1", 6380))
    s.sendall(cmd(b"LOCK.ADOPT", b"image-adopt", sys.argv[1].encode(), sys.argv[2].encode()))
    r = s.recv(200).decode()
    if r.startswith("*2"):
        print(r.split("\r\n")[1].lstrip(":"), flush=True)
        while s.recv(100):
            pass
        sys.exit(0)
    s.close()
    time.sleep(0.1)
print("not adopted", flush=True)
' "$atoken" "$asecret" >"$work/adopter.out" 2>&1 &
adopter=$!
i=0
until [ -s "$work/adopter.out" ]; do
	i=$((i + 1))
	[ $i -gt 150 ] && break
	sleep 0.1
done
adopted=$(head -1 "$work/adopter.out")
[ "$adopted" = "$atoken" ] || fail "the ADOPTABLE lease is adopted through the second container (got $adopted)"
ok "podman stop drains: the ADOPTABLE lease is adopted through the second container with its token $atoken"
wait $stopper || fail "podman stop"
t=$(($(date +%s) - t0))
podman logs "$ctr" >"$work/ctr.log" 2>&1
code=$(podman inspect --format '{{.State.ExitCode}}' "$ctr")
[ "$code" = 0 ] || fail "the gateway exits 0 at SIGTERM (exit code $code)"
[ "$t" -lt 10 ] || fail "podman stop returns well within the ${GRACE}s grace period (took ${t}s)"
ok "podman stop (SIGTERM): the gateway exits 0 by itself in ${t}s (grace ${GRACE}s)"
[ "$(owners)" = 1 ] || fail "only the adopted lease is held in the table after the stop ($(owners) items have an owner)"
grep -q 'shutting down' "$work/ctr.log" || fail "the log says it shut down"
grep -q 'drain over: 1 leases kept for adoption' "$work/ctr.log" ||
	fail "the log says the lease was kept for adoption"
grep -q 'releasing the lease .* on image-adopt failed' "$work/ctr.log" &&
	fail "the first container's release of the adopted lease is logged as a failure"
ok "the other lease was released in the table before the exit; the adopted one is held through the second container"
podman $RUN_FLAGS stop -t "$GRACE" "$ctr-b" >/dev/null 2>&1 || fail "podman stop (second)"
[ "$(owners)" = 0 ] || fail "the adopted lease is released when the second container stops"
ok "the second container's stop releases the adopted lease (no item has an owner)"
echo "$passed passed, 0 failed"
