#!/usr/bin/python3
"""Contention and fault-injection safety checks: several gateways on one
DynamoDB table (the serialized moto), clients contending for a few locks,
gateways stopped, killed and cut off from DynamoDB on a schedule.

    /usr/bin/python3 tests/stress/stress.py        (Debian's python3-redis)
    /usr/bin/python3 tests/stress/stress.py --selftest   (the checks on crafted
                                                          histories; no moto)

Environment (tests/run-stress.sh and tests/run-integration.sh set the first
four):
  LG_BIN              the leasegate binary
  LG_MOTO             the moto endpoint, http://127.0.0.1:PORT
  LG_AK, LG_SK        keys of an IAM user allowed everything
  LG_WORK             scratch directory (gateway and proxy logs)
  STRESS_SECONDS      how long the clients run (60); every fault runs at
                      least once even when that takes longer
  STRESS_GATEWAYS     gateways on the table (3)
  STRESS_CLIENTS      clients, spread round-robin over the gateways (9)
  STRESS_LOCKS        lock names the clients pick from at random (3)
  STRESS_LEASE_MS     lease of every acquire (2000)
  STRESS_WAIT_MS      WAIT of every acquire (5000)
  STRESS_HOLD_MS      longest hold, chosen at random from 0 (100)
  STRESS_QUIET        seconds of each quiet phase after a fault (2)
  STRESS_PG_CLIENTS   PostgreSQL clients (3), on STRESS_PG_LOCKS keys (2)
  STRESS_PG_SHARED_CLIENTS  PostgreSQL clients of shared holds (2), on the
                      same keys (pg_shared_loop)
  STRESS_READERS      Redis readers (LOCK.ACQUIRE ... SHARED) on the names of
                      the exclusive clients (3; shared_loop)
  STRESS_SEM_CLIENTS  Redis semaphore clients (LOCK.ACQUIRE ... LIMIT n) (4),
                      on STRESS_SEM_LOCKS names of their own, sem:K (1), with
                      n = STRESS_SEM_LIMIT (2)
  STRESS_SCRIPT_CLIENTS  Redis clients that lock with Lua scripts, as lock
                      libraries do, on the same names as LOCK.ACQUIRE's (3)
  STRESS_SEED         random seed (time-based)
  STRESS_HEARTBEAT    how the gateways prove their holders alive (lease):
                      lease, every gateway with --heartbeat lease (each lease
                      renews its own item); replica, every gateway with
                      --heartbeat replica and --replica-id stress-gwI (the
                      same id again when it is started again: a new
                      incarnation of its session); mixed, the rollout's
                      middle state: the gateways alternate modes (gateway I
                      in replica mode when I + the seed is even), and the
                      rolling restart turns each to the other mode, so both
                      modes hold locks on the table all along and every
                      gateway changes mode once; session, replica on an even
                      seed and mixed on an odd one (stress_short.sh's second
                      run: CI covers both over its runs, STRESS_SEED alone
                      reproduces one)
  STRESS_SWEEP_MS     --heartbeat-sweep of replica-mode gateways (3000): the
                      verification sweep runs during the run
  STRESS_TRACE        1: each proxy records what its gateway asked DynamoDB
                      and what came back (LG_WORK/stress-ddbI.jsonl, and
                      the harness's clock in LG_WORK/stress-t0), for
                      tests/stress/ddb_trace.py (0)

Each gateway reaches DynamoDB through its own tests/integration/ddb_proxy.py
(--endpoint), so that one gateway alone can be cut off. Each client loops:
LOCK.ACQUIRE name lease WAIT wait HOLDER client -> token; a write of the
token to the fenced resource (an in-process store that accepts a token only
if it is >= the highest it accepted, and records the refusals); a hold of
0..STRESS_HOLD_MS; a second fenced write; LOCK.RELEASE name. A connection
error or timeout ends the client's connection (the gateway releases what it
held) and it reconnects. Faults, in turn, separated by quiet phases:
  sigstop    SIGSTOP of the gateway serving the most current holds for
             1.5 leases + 0.5 s, then SIGCONT
  sigkill    SIGKILL of the gateway serving the most current holds, started
             again (same port, same table) 1 s later
  blackhole  that gateway's DynamoDB proxy down (connections reset, new ones
             refused) for 2 leases, then up
  rolling    each gateway in turn SIGTERMed (it drains: --drain-grace
             STRESS_DRAIN_MS, 3000) and started again; a client whose
             connection closes mid-hold adopts its lease (acquired
             ADOPTABLE) on another gateway, LOCK.ADOPT, and releases it
             there
Beside them, PostgreSQL clients (pg_loop), PostgreSQL clients of shared
holds on the same keys (pg_shared_loop: readers and writers contend; the
group token read while held) and Redis clients that lock with Lua scripts
as lock libraries do, on the same names (script_loop: tries, a token read,
fenced writes, extends, releases); their operations go to the history,
which tests/stress/lincheck.py checks whole (every hold with its mode: no
exclusive hold overlapping another hold, readers at one instant one
token, an exclusive's token above the readers' before it).
Checks, printed as "ok ..." / "not ok ..." lines (tests/support/runner.sh
counts them), then a summary; exit status 1 on any "not ok":
  1. per lock, tokens sorted by the time their grant was answered strictly
     rise (no repeat, none lower);
  2. no two holds of one lock whose releases both answered 1 overlap in
     time (a hold is taken from its grant's answer to the sending of its
     release: inside the true hold, so any overlap is a real one); holds
     whose release answered -LOST, "not written" or failed are counted
     apart (allowed); a release answering 0 (a lease gone without a -LOST)
     or anything else fails. "not written" (-ERR "the release of '...' was
     not written (...)": its DynamoDB write failed) tells the client the
     lock may stay held until its lease runs out: allowed, counted;
  3. the fenced resource refused only writes of holds that then learned
     of their loss (-LOST on release, a release not written because the
     lock is no longer held by this lease, or the connection lost);
  4. progress: every client was granted the lock at least once; grants
     per phase are shown; so was every reader and semaphore client;
  5. the heartbeat mode: each gateway's /metrics (read at the end, so
     since its last start) shows session heartbeats answered ok in
     replica mode and none in lease mode; LOCK.STATE of held exclusive
     locks showed heartbeat "replica" (the item names a session) exactly
     when some gateway runs in replica mode. Per gateway, its heartbeats
     by answer, per-lock renewals and store requests (INFO) are printed.
Checks 1-3 are of client_loop's exclusive holds; the holds of every other
client, with their modes, are checked in the history (tests/stress/
lincheck.py: the search, and the interval check: no exclusive hold
overlapping another hold of the name, never more than n holders of a
semaphore of n at one instant, readers at one instant one token). The
summary shows the holds granted per kind (exclusive, shared, semaphore).
"""
import collections
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def env_int(name, default):
    return int(os.environ.get(name, default))


BIN = os.environ.get("LG_BIN", os.path.join(ROOT, "build", "leasegate"))
MOTO = os.environ.get("LG_MOTO", "")
SECONDS = env_int("STRESS_SECONDS", 60)
GATEWAYS = env_int("STRESS_GATEWAYS", 3)
CLIENTS = env_int("STRESS_CLIENTS", 9)
LOCKS = env_int("STRESS_LOCKS", 3)
LEASE_MS = env_int("STRESS_LEASE_MS", 2000)
WAIT_MS = env_int("STRESS_WAIT_MS", 5000)
HOLD_MS = env_int("STRESS_HOLD_MS", 100)
PG_CLIENTS = env_int("STRESS_PG_CLIENTS", 3)
PG_LOCKS = env_int("STRESS_PG_LOCKS", 2)
PG_SHARED_CLIENTS = env_int("STRESS_PG_SHARED_CLIENTS", 2)
READERS = env_int("STRESS_READERS", 3)
SEM_CLIENTS = env_int("STRESS_SEM_CLIENTS", 4)
SEM_LOCKS = env_int("STRESS_SEM_LOCKS", 1)
SEM_LIMIT = env_int("STRESS_SEM_LIMIT", 2)
SCRIPT_CLIENTS = env_int("STRESS_SCRIPT_CLIENTS", 3)
DRAIN_MS = env_int("STRESS_DRAIN_MS", 3000)
TRY_SHARE = float(os.environ.get("STRESS_TRY_SHARE", 0.25))
RENEW_SHARE = float(os.environ.get("STRESS_RENEW_SHARE", 0.2))
QUIET = float(os.environ.get("STRESS_QUIET", 2))
SEED = env_int("STRESS_SEED", int(time.time() * 1000) % 1000000)
HEARTBEATS = ("lease", "replica", "mixed", "session")
HEARTBEAT = os.environ.get("STRESS_HEARTBEAT", "lease")
TRACE = os.environ.get("STRESS_TRACE", "0") == "1"
if HEARTBEAT == "session":
    HEARTBEAT = "mixed" if SEED % 2 else "replica"
SWEEP_MS = env_int("STRESS_SWEEP_MS", 3000)
WORK = os.environ.get("LG_WORK") or "/tmp"
# A reply later than this means the gateway is gone: the longest legitimate
# wait is WAIT plus a stop of the gateway plus DynamoDB retries.
SOCKET_TIMEOUT = (WAIT_MS + 3 * LEASE_MS) / 1000 + 5

# One clock for the log, the checks and the history (tests/stress/history.py).
from history import T0, History, Pg, PgError, now  # noqa: E402


def log(msg):
    print(f"# {now():7.2f} {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def gateway_ready(port):
    """The gateway's Redis port (open from the start) answers a PING with
    something else than -LOADING: its lock store is open."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.settimeout(1)
            s.sendall(b"PING\r\n")
            r = s.recv(64)
            return bool(r) and not r.startswith(b"-LOADING")
    except OSError:
        return False


def can_connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


class Proxy:
    """tests/integration/ddb_proxy.py in front of moto for one gateway."""

    def __init__(self, i):
        self.port = free_port()
        host, mport = MOTO.rsplit("/", 1)[-1].rsplit(":", 1)
        self.log = open(os.path.join(WORK, f"stress-proxy{i}.log"), "w")
        env = dict(os.environ)
        if TRACE:  # a fresh file: the proxy appends
            env["DDB_PROXY_LOG"] = os.path.join(WORK, f"stress-ddb{i}.jsonl")
            if os.path.exists(env["DDB_PROXY_LOG"]):
                os.unlink(env["DDB_PROXY_LOG"])
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests/integration/ddb_proxy.py"),
             str(self.port), host, mport], stdout=self.log, stderr=self.log, env=env)
        for _ in range(200):
            if can_connect(self.port):
                return
            time.sleep(0.025)
        raise SystemExit(f"ddb_proxy.py did not start on port {self.port}")

    def down(self):
        self.proc.send_signal(signal.SIGUSR1)

    def up(self):
        self.proc.send_signal(signal.SIGUSR2)


def heartbeat_of(i, rolls):
    """The --heartbeat of gateway i after rolls rolling restarts:
    STRESS_HEARTBEAT's, or in mixed mode alternating over gateways and
    rolling restarts (the parity of i + rolls + SEED)."""
    if HEARTBEAT != "mixed":
        return HEARTBEAT
    return "replica" if (i + rolls + SEED) % 2 == 0 else "lease"


def heartbeat_args(i, mode):
    """The gateway's heartbeat options: its mode and, in replica mode, its
    replica id (one per gateway, kept across restarts) and sweep period."""
    if mode == "lease":
        return ["--heartbeat", "lease"]
    return ["--heartbeat", "replica", "--replica-id", f"stress-gw{i}",
            "--heartbeat-sweep", str(SWEEP_MS)]


class Gateway:
    def __init__(self, i, table, proxy):
        self.i = i
        self.table = table
        self.proxy = proxy
        self.port = free_port()
        self.pg_port = free_port()
        self.admin_port = free_port()
        self.rolls = 0  # rolling restarts so far (mixed mode: each turns the mode)
        self.mode = None
        self.proc = None
        self.incarnation = 0
        self.logpath = os.path.join(WORK, f"stress-gw{i}.log")
        self.start()

    def start(self):
        env = dict(os.environ, AWS_ACCESS_KEY_ID=os.environ["LG_AK"],
                   AWS_SECRET_ACCESS_KEY=os.environ["LG_SK"], AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL_DYNAMODB=MOTO)
        self.mode = heartbeat_of(self.i, self.rolls)
        with open(self.logpath, "a") as f:
            f.write(f"=== stress: start {self.incarnation + 1} at {now():.2f}, heartbeat "
                    f"{self.mode}\n")
            self.proc = subprocess.Popen(
                [BIN, "--port", str(self.port), "--pg-port", str(self.pg_port),
                 "--pg-auth", "trust", "--admin-port", str(self.admin_port),
                 "--drain-grace", str(DRAIN_MS), "--table", self.table, "--create-table",
                 "--endpoint", f"http://127.0.0.1:{self.proxy.port}"] +
                heartbeat_args(self.i, self.mode),
                env=env, stdout=f, stderr=f)
        self.incarnation += 1
        for _ in range(400):
            if self.proc.poll() is not None:
                raise SystemExit(f"gateway {self.i} exited at start (see {self.logpath})")
            if gateway_ready(self.port):
                return
            time.sleep(0.025)
        raise SystemExit(f"gateway {self.i} did not start (see {self.logpath})")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def drain(self):
        """SIGTERM: the gateway drains (its adoptable leases kept for
        DRAIN_MS for their clients to adopt elsewhere), then exits. The
        history gets a "drain" of this replica: its connections close now,
        and the holds no client can adopt (shared holds, PostgreSQL's) are
        released with them, before their clients learn it."""
        history.add("harness", self.i, "-", "drain", "*", now(), now(), "ok")
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(DRAIN_MS / 1000 + 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stop_for_good(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Fenced:
    """The shared resource: accepts a token >= the highest it accepted."""

    def __init__(self):
        self.lock = threading.Lock()
        self.highest = collections.defaultdict(int)
        self.accepted = 0

    def write(self, name, token):
        with self.lock:
            if token < self.highest[name]:
                return False
            self.highest[name] = token
            self.accepted += 1
            return True


class Phase:
    """The fault phase now, to label grants with."""

    def __init__(self):
        self.label = "steady"
        self.log = [(0.0, "steady")]

    def set(self, label):
        self.label = label
        self.log.append((now(), label))
        log(f"phase {label}")


Hold = collections.namedtuple(
    "Hold", "client gw inc name token sent granted phase rejected rel_sent rel_done rel")

fenced = Fenced()
phase = Phase()
holds = []              # every grant, once its release is answered (or failed)
holds_lock = threading.Lock()
current = {}            # client -> gateway index, while it holds
stop = threading.Event()
gateways = []           # every Gateway, set by main()
history = None          # History (tests/stress/history.py), opened by main()
stats = collections.Counter()  # other answers, by kind (count() adds one)
heartbeats_seen = collections.Counter()  # LOCK.STATE's heartbeat of held exclusive locks


def count(what):
    with holds_lock:
        stats[what] += 1


def unwritten(rel):
    """An -ERR answer of a release whose write failed: the session holds the
    lock no more, the lock may stay held until its lease runs out."""
    return rel.startswith("-") and "was not written" in rel


def rel_result(rel):
    """A release's or renewal's answer as the history names it."""
    if rel == "1":
        return "ok"
    if rel == "0":
        return "notheld"
    if unwritten(rel):
        return "unwritten"
    if rel.startswith("-TRYAGAIN"):  # a renewal that failed: the lease goes on
        return "unknown"
    return "lost" if rel.startswith("-LOST") else "error" if rel.startswith("error") else rel


def client_loop(cid, gw):
    """A Redis client: LOCK.ACQUIRE with WAIT, or (TRY_SHARE of the time)
    without, fenced writes, now and then a LOCK.RENEW, LOCK.RELEASE; every
    call goes to the history."""
    rnd = random.Random(SEED * 1000 + cid)
    names = [f"stress-{k}" for k in range(LOCKS)]
    conn = None
    me = f"c{cid}"

    def rec(op, name, inv, result, token=None, **extra):
        history.add(me, gw.i, "redis", op, name, inv, now(), result, token, **extra)

    while not stop.is_set():
        if conn is None:
            try:
                conn = redis.Redis(host="127.0.0.1", port=gw.port, socket_timeout=SOCKET_TIMEOUT,
                                   socket_connect_timeout=1, single_connection_client=True)
                conn.ping()
            except (redis.ConnectionError, redis.TimeoutError):
                conn = None
                count("reconnect failures")
                time.sleep(0.2)
                continue
        name = rnd.choice(names)
        inc = gw.incarnation
        wait = rnd.random() >= TRY_SHARE
        args = ["LOCK.ACQUIRE", name, LEASE_MS, "ADOPTABLE"] + (["WAIT", WAIT_MS] if wait else [])
        sent = now()
        try:
            r = conn.execute_command(*args, "HOLDER", me)
        except redis.ResponseError as e:
            res = tryagain_result(str(e)) if str(e).startswith("TRYAGAIN") else "failed"
            rec("acquire", name, sent, res, lease_ms=LEASE_MS, wait=wait, message=str(e))
            count(f"acquire -{str(e).split()[0]}")
            time.sleep(0.05)
            continue
        except (redis.ConnectionError, redis.TimeoutError) as e:
            rec("acquire", name, sent, "error", lease_ms=LEASE_MS, wait=wait)
            count(f"acquire {type(e).__name__}")
            conn.close()
            conn = None
            continue
        granted, label = now(), phase.label
        if r is None:
            history.add(me, gw.i, "redis", "acquire", name, sent, granted,
                        "timeout" if wait else "refused", lease_ms=LEASE_MS, wait=wait)
            count("acquire nil (wait timed out)" if wait else "try nil (held)")
            if not wait:
                time.sleep(rnd.uniform(0, HOLD_MS / 1000))
            continue
        token, secret = int(r[0]), r[1].decode()
        history.add(me, gw.i, "redis", "acquire", name, sent, granted, "granted", token,
                    lease_ms=LEASE_MS, wait=wait)
        current[cid] = gw.i
        rejected = 0
        rel = None
        for k in range(2):
            t = now()
            ok = fenced.write(name, token)
            rec("fenced", name, t, "accepted" if ok else "refused", token)
            rejected += not ok
            if k == 0:
                time.sleep(rnd.uniform(0, HOLD_MS / 1000))
                if rnd.random() < RENEW_SHARE:
                    rel = renew(conn, name, rec)
                    if rel == "error":
                        conn.close()
                        conn = None
                    if rel != "1" and rel_result(rel) != "unknown":
                        rel = "-LOST (renew)" if rel != "error" else "error renew"
                        break
                    rel = None  # renewed, or not this time: released next
        rel_sent = now()
        if rel is None:
            try:
                rel = str(conn.execute_command("LOCK.RELEASE", name))
            except redis.ResponseError as e:
                rel = "-" + str(e)
            except (redis.ConnectionError, redis.TimeoutError) as e:
                rel = "error " + type(e).__name__
                conn.close()
                conn = None
                # its gateway may be draining (a rolling restart): adopt
                # the lease on another one and release it there
                t = now()
                adopted, g = adopt_elsewhere(gw, name, token, secret)
                if adopted is not None:
                    gw, conn = g, adopted
                    rec("adopt", name, t, "ok", token)
                    count("holds adopted after their gateway drained")
                    rel_sent = now()
                    rel = release_on(conn, name)
                else:
                    count("holds not adopted after their connection closed")
            rec("release", name, rel_sent, rel_result(rel))
        rel_done = now()
        current.pop(cid, None)
        with holds_lock:
            holds.append(Hold(cid, gw.i, inc, name, token, sent, granted, label,
                              rejected, rel_sent, rel_done, rel))
    if conn is not None:
        conn.close()


def shared_loop(cid, gw, kind):
    """A Redis client of shared holds: kind "shared", a reader
    (LOCK.ACQUIRE name lease SHARED) on the names client_loop's clients
    take exclusively; kind "limit", one of at most SEM_LIMIT holders
    (LOCK.ACQUIRE name lease LIMIT n) of names of their own (sem:K). With
    WAIT, or (TRY_SHARE of the time) without; the answer [token, slot];
    now and then a LOCK.RENEW; LOCK.RELEASE. While it holds, a fenced
    check: a reader's token is not below the highest the fenced resource
    accepted for the name (an exclusive holder granted after it would be
    above it), a semaphore holder writes its token for (name, slot). Every
    call goes to the history with the mode (tests/stress/lincheck.py)."""
    rnd = random.Random(SEED * 1000 + (800 if kind == "shared" else 900) + cid)
    if kind == "shared":
        me, names, mode_args = f"r{cid}", [f"stress-{k}" for k in range(LOCKS)], ["SHARED"]
    else:
        me, names = f"m{cid}", [f"sem:{k}" for k in range(SEM_LOCKS)]
        mode_args = ["LIMIT", SEM_LIMIT]
    extra = dict(mode=kind, limit=SEM_LIMIT) if kind == "limit" else dict(mode=kind)
    conn = None

    def rec(op, name, inv, result, token=None, **more):
        history.add(me, gw.i, "redis", op, name, inv, now(), result, token, **more)

    while not stop.is_set():
        if conn is None:
            try:
                conn = redis.Redis(host="127.0.0.1", port=gw.port, socket_timeout=SOCKET_TIMEOUT,
                                   socket_connect_timeout=1, single_connection_client=True)
                conn.ping()
            except (redis.ConnectionError, redis.TimeoutError):
                conn = None
                count("reconnect failures")
                time.sleep(0.2)
                continue
        name = rnd.choice(names)
        wait = rnd.random() >= TRY_SHARE
        args = ["LOCK.ACQUIRE", name, LEASE_MS] + mode_args + (["WAIT", WAIT_MS] if wait else [])
        sent = now()
        try:
            r = conn.execute_command(*args, "HOLDER", me)
        except redis.ResponseError as e:
            res = tryagain_result(str(e)) if str(e).startswith("TRYAGAIN") else "failed"
            rec("acquire", name, sent, res, lease_ms=LEASE_MS, wait=wait, message=str(e),
                **extra)
            count(f"{kind} acquire -{str(e).split()[0]}")
            time.sleep(0.05)
            continue
        except (redis.ConnectionError, redis.TimeoutError) as e:
            rec("acquire", name, sent, "error", lease_ms=LEASE_MS, wait=wait, **extra)
            count(f"{kind} acquire {type(e).__name__}")
            conn.close()
            conn = None
            continue
        if r is None:
            rec("acquire", name, sent, "timeout" if wait else "refused", lease_ms=LEASE_MS,
                wait=wait, **extra)
            count(f"{kind} {'wait timed out' if wait else 'try nil'}")
            if not wait:
                time.sleep(rnd.uniform(0, HOLD_MS / 1000))
            continue
        token, slot = int(r[0]), int(r[1])
        rec("acquire", name, sent, "granted", token, lease_ms=LEASE_MS, wait=wait, slot=slot,
            **extra)
        count(f"{kind} grants")
        current[(kind, cid)] = gw.i
        rel = None
        for k in range(2):
            t = now()
            if kind == "shared":  # no exclusive holder above this reader's phase
                ok = fenced.highest[name] <= token
            else:
                ok = fenced.write(f"{name}#{slot}", token)
            rec("fenced", name, t, "accepted" if ok else "refused", token)
            if not ok:
                count(f"{kind} fenced refusals")
            if k == 0:
                time.sleep(rnd.uniform(0, HOLD_MS / 1000))
                if rnd.random() < RENEW_SHARE:
                    rel = renew(conn, name, rec)
                    if rel == "error":
                        conn.close()
                        conn = None
                    if rel != "1" and rel_result(rel) != "unknown":
                        break
                    rel = None
        if conn is not None and rel is None:
            t = now()
            rel = release_on(conn, name)
            rec("release", name, t, rel_result(rel))
            if rel.startswith("error"):
                conn.close()
                conn = None
        count(f"{kind} release {release_kind(rel) if rel != '0' else '0'}")
        current.pop((kind, cid), None)
    if conn is not None:
        conn.close()


def adopt_elsewhere(gw, name, token, secret):
    """LOCK.ADOPT of (name, token, secret) through the gateways other than
    gw, for a few seconds (the draining one marks the lease orphaned as it
    closes its connections): (connection, gateway) of the adopt, or
    (None, None)."""
    end = time.monotonic() + 3
    while time.monotonic() < end and not stop.is_set():
        for k in range(1, len(gateways)):
            g = gateways[(gw.i + k) % len(gateways)]
            try:
                c = redis.Redis(host="127.0.0.1", port=g.port, socket_timeout=SOCKET_TIMEOUT,
                                socket_connect_timeout=1, single_connection_client=True)
                r = c.execute_command("LOCK.ADOPT", name, token, secret)
            except redis.RedisError:
                continue
            if isinstance(r, list):
                return c, g
            c.close()
        time.sleep(0.1)
    return None, None


def release_on(conn, name):
    """LOCK.RELEASE on conn: its answer as client_loop records it."""
    try:
        return str(conn.execute_command("LOCK.RELEASE", name))
    except redis.ResponseError as e:
        return "-" + str(e)
    except (redis.ConnectionError, redis.TimeoutError) as e:
        return "error " + type(e).__name__


def renew(conn, name, rec):
    """LOCK.RENEW, recorded: "1", "0", "-LOST ..." or "error"."""
    t = now()
    try:
        r = str(conn.execute_command("LOCK.RENEW", name))
    except redis.ResponseError as e:
        r = "-" + str(e)
    except (redis.ConnectionError, redis.TimeoutError):
        r = "error"
    rec("renew", name, t, rel_result(r) if r != "0" else "lost")
    return r


# A lock library's scripts (redlock's kind), run with EVALSHA (EVAL on
# NOSCRIPT): a take that reads then writes (EXISTS, then a plain SET: the
# commit gives the key a new fencing token all the same), an extend and a
# release that check the value first.
TAKE = ("if redis.call('exists', KEYS[1]) == 1 then return 0 end "
        "redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1")
EXTEND = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
          "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0")
RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
           "return redis.call('del', KEYS[1]) end return 0")


def script_token(conn, name, value):
    """The fencing token of the hold of value: LOCK.STATE between two GETs
    that both show value (the token changes only with the holder, and this
    client takes no other hold meanwhile); None when not both."""
    if conn.get(name) != value.encode():
        return None
    st = conn.execute_command("LOCK.STATE", name)
    st = dict(zip(st[::2], st[1::2])) if st else {}
    if conn.get(name) != value.encode() or not st:
        return None
    return int(st[b"fencing-token"])


def tryagain_result(message):
    """What an acquire answered -TRYAGAIN (58000 on PostgreSQL) may have
    done: "unknown" (a write that timed out may have landed, for no
    session, until its lease runs out), or "failed" when the gateway says
    the acquire wrote nothing (a read failed, or its write was never
    sent)."""
    return "failed" if "this acquire wrote nothing" in message else "unknown"


def script_answer(conn, script, name, args, kind):
    """script's answer as the history names it: its integer, or
    "unknown" (-TRYAGAIN), "failed" (another error), "error" (the
    connection)."""
    try:
        return script(keys=[name], args=args, client=conn)
    except redis.ResponseError as e:
        count(f"script {kind} -{str(e).split()[0]}")
        return "unknown" if str(e).startswith("TRYAGAIN") else "failed"
    except (redis.ConnectionError, redis.TimeoutError):
        count(f"script {kind} connection lost")
        return "error"


def script_loop(cid, gw):
    """A Redis client that locks as lock libraries do, with Lua scripts,
    on the names client_loop's clients take with LOCK.ACQUIRE: a take (a
    try: 1 or 0), the token read (script_token), two fenced writes with it
    when known, now and then an extend, the release. Its holds go to the
    history (the checker sees them with the others), not to holds."""
    rnd = random.Random(SEED * 1000 + 700 + cid)
    names = [f"stress-{k}" for k in range(LOCKS)]
    me, conn = f"s{cid}", None
    client = redis.Redis(host="127.0.0.1", port=gw.port, socket_timeout=SOCKET_TIMEOUT,
                         socket_connect_timeout=1)
    take, extend, release = (client.register_script(x) for x in (TAKE, EXTEND, RELEASE))

    def rec(op, name, inv, result, token=None, **extra):
        history.add(me, gw.i, "redis", op, name, inv, now(), result, token, **extra)

    while not stop.is_set():
        if conn is None:
            try:
                conn = redis.Redis(host="127.0.0.1", port=gw.port, socket_timeout=SOCKET_TIMEOUT,
                                   socket_connect_timeout=1, single_connection_client=True)
                conn.ping()
            except (redis.ConnectionError, redis.TimeoutError):
                conn = None
                time.sleep(0.2)
                continue
        name, value = rnd.choice(names), f"{me}-{rnd.getrandbits(48):x}"
        sent = now()
        r = script_answer(conn, take, name, [value, LEASE_MS], "take")
        if r in ("unknown", "failed", "error") or r == 0:
            rec("acquire", name, sent, {0: "refused"}.get(r, r), lease_ms=LEASE_MS, wait=False)
            if r == "error":
                conn = None
            time.sleep(rnd.uniform(0.1, 0.3))  # redlock's retry delay: 200 ms, jitter 100
            continue
        rec("acquire", name, sent, "granted", lease_ms=LEASE_MS, wait=False)
        count(f"script grants {me}")
        if not script_hold(conn, rnd, name, value, rec, (extend, release)):
            conn.close()
            conn = None
    if conn is not None:
        conn.close()


def script_hold(conn, rnd, name, value, rec, scripts):
    """A hold taken by script_loop, to its release; False when the
    connection was lost."""
    extend, release = scripts
    try:
        t = now()
        token = script_token(conn, name, value)
        if token is not None:
            rec("token", name, t, "ok", token)
    except redis.RedisError:
        token = None
    for k in range(2 if token is not None else 0):
        t = now()
        ok = fenced.write(name, token)
        rec("fenced", name, t, "accepted" if ok else "refused", token)
        time.sleep(rnd.uniform(0, HOLD_MS / 1000))
    if rnd.random() < RENEW_SHARE:
        t = now()
        r = script_answer(conn, extend, name, [value, LEASE_MS], "extend")
        rec("renew", name, t, {1: "ok", 0: "lost"}.get(r, r))
        if r == "error":
            return False
    t = now()
    r = script_answer(conn, release, name, [value], "release")
    # -TRYAGAIN: the release's outcome is unknown, as one not written
    rec("release", name, t, {1: "ok", 0: "notheld", "unknown": "unwritten"}.get(r, r))
    return r != "error"


def pg_loop(cid, gw):
    """A PostgreSQL client (psycopg2): on PG_LOCKS advisory keys of database
    "stress" (lock names pg:stress:K), in turn at random a session lock
    (pg_advisory_lock, then pg_advisory_unlock), a try
    (pg_try_advisory_lock) or a transaction lock (BEGIN,
    pg_advisory_xact_lock, COMMIT or ROLLBACK); lease STRESS_LEASE_MS
    (leasegate.lease_ms), waits bounded by lock_timeout = STRESS_WAIT_MS.
    The token of a grant is read with leasegate.token(K)."""
    rnd = random.Random(SEED * 1000 + 500 + cid)
    me, pg = f"pg{cid}", None
    while not stop.is_set():
        if pg is None:
            try:
                pg = Pg(gw.pg_port, "stress", SOCKET_TIMEOUT)
                pg.query(f"SET leasegate.lease_ms = {LEASE_MS}")
                pg.query(f"SET lock_timeout = {WAIT_MS}")
            except PgError:
                pg = None
                count("pg reconnect failures")
                time.sleep(0.2)
                continue
        key = rnd.randint(1, PG_LOCKS)
        mode = rnd.choice(["session", "try", "xact"])
        try:
            pg_round(pg, me, gw, key, mode, rnd)
        except PgError as e:
            count(f"pg {e.sqlstate or 'connection lost'}")
            if os.environ.get("STRESS_DEBUG"):
                log(f"{me}: {e}")
            if e.sqlstate is None:
                pg.close()
                pg = None
            else:
                time.sleep(0.05)
    if pg is not None:
        pg.close()


def pg_call(pg, me, gw, op, name, sql, **extra):
    """sql, recorded as op (its answer's value passed to result(v)); a
    lost-lease notice read with it goes first. Raises PgError after
    recording an error answer."""
    result = extra.pop("result")
    inv = now()
    err = None
    try:
        v = pg.query(sql)
    except PgError as e:
        err = e
    comp = now()
    unwritten = pg_notices(pg, me, gw, inv, comp)
    if err is None:
        res, tok = result(v)
        if res == "ok" and name in unwritten:  # WARNING 58000: the lock may stay held
            res = "unwritten"
            count("pg release not written (58000 WARNING)")
    else:
        res = {None: "error", "55000": "lost", "55P03": "timeout"}.get(err.sqlstate, "failed")
        if op == "acquire" and err.sqlstate == "58000":  # as -TRYAGAIN
            res = tryagain_result(str(err))
        tok = None
    if op is not None:
        history.add(me, gw.i, "pg", op, name, inv, comp, res, tok, **extra)
    if err is not None:
        raise err
    return res


def pg_notices(pg, me, gw, inv, comp):
    """The notices read with a call sent at inv: each loss reported goes
    to the history (and to pg.lost_seen, the names whose loss this session
    was told of); the names of the releases not written are returned."""
    lost_ones, unwritten = pg.take_notices()
    for lost, tok in lost_ones:
        history.add(me, gw.i, "pg", "lost", lost, inv, comp, "lost", tok)
        pg.lost_seen = getattr(pg, "lost_seen", set()) | {lost}
    return unwritten


def pg_held_query(pg, me, gw, name, sql):
    """query_row(sql) while the session holds name: a connection lost
    there ends the hold (the gateway releases at close), recorded as a
    release that lost its connection; None after an error answer."""
    t = now()
    try:
        row = pg.query_row(sql)
        pg_notices(pg, me, gw, t, now())
        return row
    except PgError as e:
        if e.sqlstate is None:
            history.add(me, gw.i, "pg", "release", name, t, now(), "error")
            raise
        count(f"pg query while held {e.sqlstate}")
        return None


def pg_round(pg, me, gw, key, mode, rnd):
    name = f"pg:stress:{key}"
    acq = dict(lease_ms=LEASE_MS, wait=mode != "try")
    if mode == "xact":
        pg.query("BEGIN")
    fn = {"session": "pg_advisory_lock", "try": "pg_try_advisory_lock",
          "xact": "pg_advisory_xact_lock"}[mode]
    try:
        res = pg_call(pg, me, gw, "acquire", name, f"SELECT {fn}({key})",
                      result=lambda v: ("refused" if v is False else "granted", None), **acq)
    except PgError as e:
        if mode == "xact" and e.sqlstate is not None:
            pg.query("ROLLBACK")
        raise
    if res != "granted":
        time.sleep(rnd.uniform(0, HOLD_MS / 1000))
        return
    # the token, then the hold (an "acquire" line with it replaces none: a
    # "state"-like read of the session's own token is not an operation)
    row = pg_held_query(pg, me, gw, name, f"SELECT leasegate.token({key})")
    if row:
        history.add(me, gw.i, "pg", "token", name, now(), now(), "ok", row[0])
    time.sleep(rnd.uniform(0, HOLD_MS / 1000))
    if mode == "xact":
        end = rnd.choice(["COMMIT", "ROLLBACK"])
        pg_call(pg, me, gw, end.lower(), name, end, result=lambda v: ("ok", None))
    else:
        pg_call(pg, me, gw, "unlock", name, f"SELECT pg_advisory_unlock({key})",
                result=lambda v: ("ok" if v else "notheld", None))


def pg_shared_loop(cid, gw):
    """A PostgreSQL client of shared holds, on the keys of pg_loop's
    exclusive ones (readers and writers contend): in turn at random
    pg_advisory_lock_shared then pg_advisory_unlock_shared, a
    pg_try_advisory_lock_shared, or in a transaction
    pg_advisory_xact_lock_shared or pg_try_advisory_xact_lock_shared then
    COMMIT or ROLLBACK. Its acquires go to the history with mode "shared";
    the group token is read while it holds (leasegate.state: the header's
    fence) and recorded when the release is acknowledged and no loss of the
    name was told meanwhile (a read after a loss could show a later phase's
    token: COMMIT answers ok after a loss too)."""
    rnd = random.Random(SEED * 1000 + 600 + cid)
    me, pg = f"pr{cid}", None
    while not stop.is_set():
        if pg is None:
            try:
                pg = Pg(gw.pg_port, "stress", SOCKET_TIMEOUT)
                pg.query(f"SET leasegate.lease_ms = {LEASE_MS}")
                pg.query(f"SET lock_timeout = {WAIT_MS}")
            except PgError:
                pg = None
                count("pg reconnect failures")
                time.sleep(0.2)
                continue
        key = rnd.randint(1, PG_LOCKS)
        mode = rnd.choice(["session", "try", "xact", "xact-try"])
        try:
            pg_shared_round(pg, me, gw, key, mode, rnd)
        except PgError as e:
            count(f"pg shared {e.sqlstate or 'connection lost'}")
            if os.environ.get("STRESS_DEBUG"):
                log(f"{me}: {e}")
            if e.sqlstate is None:
                pg.close()
                pg = None
            else:
                time.sleep(0.05)
    if pg is not None:
        pg.close()


def pg_shared_round(pg, me, gw, key, mode, rnd):
    name = f"pg:stress:{key}"
    acq = dict(lease_ms=LEASE_MS, wait=mode in ("session", "xact"), mode="shared")
    xact = mode.startswith("xact")
    if xact:
        pg.query("BEGIN")
    fn = {"session": "pg_advisory_lock_shared", "try": "pg_try_advisory_lock_shared",
          "xact": "pg_advisory_xact_lock_shared",
          "xact-try": "pg_try_advisory_xact_lock_shared"}[mode]
    try:
        res = pg_call(pg, me, gw, "acquire", name, f"SELECT {fn}({key})",
                      result=lambda v: ("refused" if v is False else "granted", None), **acq)
    except PgError as e:
        if xact and e.sqlstate is not None:
            pg.query("ROLLBACK")
        raise
    if res != "granted":
        count("pg shared refused" if not acq["wait"] else "pg shared not granted")
        if xact:
            pg.query("ROLLBACK")
        time.sleep(rnd.uniform(0, HOLD_MS / 1000))
        return
    count("pg shared grants")
    pg.lost_seen = set()
    # the state of the name while this session holds it shared: no
    # exclusive holder, the readers' group token as the fence
    t = now()
    row = pg_held_query(pg, me, gw, name, f"SELECT * FROM leasegate.state('{name}')")
    t2 = now()
    held, tok = (bool(row[0]), row[3]) if row else (False, None)
    if row:
        history.add(me, gw.i, "pg", "state", name, t, t2, "held" if held else "free",
                    tok if held else None)
    time.sleep(rnd.uniform(0, HOLD_MS / 1000))
    if xact:
        end = rnd.choice(["COMMIT", "ROLLBACK"])
        res = pg_call(pg, me, gw, end.lower(), name, end, result=lambda v: ("ok", None))
    else:
        res = pg_call(pg, me, gw, "unlock", name, f"SELECT pg_advisory_unlock_shared({key})",
                      result=lambda v: ("ok" if v else "notheld", None))
    # the token read is the hold's when the hold lasted past the read: its
    # release acknowledged (COMMIT answers ok all the same: no loss told)
    if res == "ok" and not held and tok is not None and name not in pg.lost_seen:
        history.add(me, gw.i, "pg", "token", name, t, t2, "ok", tok)


def observer_loop(gws):
    """LOCK.STATE of every lock name, in turn on every gateway, recorded."""
    names = ([f"stress-{k}" for k in range(LOCKS)] +
             [f"pg:stress:{k}" for k in range(1, PG_LOCKS + 1)] +
             [f"sem:{k}" for k in range(SEM_LOCKS if SEM_CLIENTS else 0)])
    conns = {}
    turn = 0
    while not stop.is_set():
        g = gws[turn % len(gws)]
        name = names[turn % len(names)]
        turn += 1
        try:
            if g.i not in conns:
                conns[g.i] = redis.Redis(host="127.0.0.1", port=g.port, socket_timeout=2,
                                         socket_connect_timeout=1,
                                         single_connection_client=True)
            t = now()
            r = conns[g.i].execute_command("LOCK.STATE", name)
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            conns.pop(g.i, None)
            count("state errors")
            time.sleep(0.2)
            continue
        done = now()
        st = dict(zip(r[::2], r[1::2])) if r else {}
        if b"mode" in st:  # held shared: its mode, group token and every holder
            mode = st[b"mode"].decode()
            holders = [dict(zip(h[::2], h[1::2])) for h in st[b"holders"]]
            history.add(f"obs{g.i}", g.i, "redis", "state", name, t, done, mode,
                        int(st[b"fencing-token"]) if mode == "shared" else None,
                        count=len(holders),
                        slots=[[int(h[b"slot"]), int(h[b"fencing-token"])] for h in holders])
            time.sleep(0.03)
            continue
        held = int(st.get(b"held", 0)) == 1
        history.add(f"obs{g.i}", g.i, "redis", "state", name, t, done,
                    "held" if held else "free",
                    int(st[b"fencing-token"]) if held else None,
                    heartbeat=st.get(b"heartbeat", b"").decode())
        if held:  # how the lock's holder proves it alive, as its item says
            with holds_lock:
                heartbeats_seen[st.get(b"heartbeat", b"none").decode()] += 1
        time.sleep(0.03)


def holder_gateway(gws, turn):
    """The gateway serving the most current holds (ties: in turn)."""
    serving = collections.Counter(dict(current).values())
    order = [gws[(turn + k) % len(gws)] for k in range(len(gws))]
    return max(order, key=lambda g: serving[g.i])


def faults(gws, proxies):
    lease = LEASE_MS / 1000
    quiet = QUIET
    kinds = ["sigstop", "sigkill", "blackhole", "rolling"]
    turn = 0
    done = set()
    time.sleep(quiet + 1)
    while now() < SECONDS - 2 * quiet or len(done) < len(kinds):
        kind = kinds[turn % len(kinds)]
        g = holder_gateway(gws, turn)
        turn += 1
        if kind == "sigstop":
            phase.set(f"sigstop gw{g.i}")
            g.signal(signal.SIGSTOP)
            time.sleep(1.5 * lease + 0.5)
            g.signal(signal.SIGCONT)
            phase.set(f"after sigcont gw{g.i}")
        elif kind == "sigkill":
            phase.set(f"sigkill gw{g.i}")
            g.kill()
            time.sleep(1.0)
            g.start()
            phase.set(f"after restart gw{g.i}")
        elif kind == "blackhole":
            phase.set(f"blackhole gw{g.i}")
            proxies[g.i].down()
            # the proxy acts on its signal in its own time: from a moment
            # later on, nothing of this gateway's reaches DynamoDB
            cut = now() + 0.25
            time.sleep(2 * lease)
            # the checker's: what was sent and answered within wrote nothing
            history.add("harness", g.i, "-", "cut", "*", cut, now(), "ok")
            proxies[g.i].up()
            phase.set(f"after blackhole gw{g.i}")
        else:  # a rolling restart: each gateway drained, then started again
            phase.set("rolling restart")
            for each in gws:
                each.drain()
                each.rolls += 1
                each.start()
            phase.set("after rolling restart")
        done.add(kind)
        time.sleep(quiet)
        phase.set("steady")
        time.sleep(quiet)
    while now() < SECONDS:
        time.sleep(0.1)


results = []


def check(ok, what):
    results.append(ok)
    if HEARTBEAT != "lease":  # which run it is, where one script runs both
        what += f" [--heartbeat {HEARTBEAT}, seed {SEED}]"
    print(f"{'ok' if ok else 'not ok'} {what}", flush=True)


def release_kind(rel):
    if rel == "1":
        return "1"
    if rel.startswith("-LOST"):
        return rel
    if rel.startswith("error"):
        return "connection lost"
    if unwritten(rel):  # the write failed; "no longer held": it was refused
        return ("not written: taken over" if "no longer held by this lease" in rel else
                "not written: DynamoDB failed")
    return f"other: {rel}"


def told_of_loss(rel):
    """The release's answer tells the holder its lease had ended."""
    kind = release_kind(rel)
    return kind not in ("1", "not written: DynamoDB failed") and not kind.startswith("other")


def checks(holds):
    by_lock = collections.defaultdict(list)
    for h in holds:
        by_lock[h.name].append(h)

    # 1. tokens strictly rise with the time their grant was answered; but a
    # grant answered a whole lease after its acquire was sent (its gateway
    # stopped meanwhile) is an ended lease: its token is answered and its
    # loss told at the next operation (docs/lease-rules.md), so it may come
    # after a later holder's (CI's stress_short, seed 673134: token 6
    # answered 0.56 s after token 10, released -LOST)
    def ended_at_grant(h):
        return h.granted - h.sent >= LEASE_MS / 1000 and told_of_loss(h.rel)
    bad = []
    for name, hs in sorted(by_lock.items()):
        hs = sorted((h for h in hs if not ended_at_grant(h)), key=lambda h: h.granted)
        for a, b in zip(hs, hs[1:]):
            if b.token <= a.token:
                bad.append((name, a, b))
    for name, a, b in bad[:10]:
        print(f"# token order: {name}: token {b.token} (c{b.client} gw{b.gw} granted "
              f"{b.granted:.3f}, release {b.rel}) after {a.token} (c{a.client} gw{a.gw} "
              f"granted {a.granted:.3f}, release {a.rel})")
    check(not bad, f"tokens strictly rise with grant time per lock ({len(bad)} violations "
          f"in {len(holds)} grants)")

    # 2. no overlap of two holds whose releases both answered 1
    overlaps, lost_overlaps = [], 0
    for name, hs in sorted(by_lock.items()):
        hs = sorted(hs, key=lambda h: h.granted)
        for i, a in enumerate(hs):
            for b in hs[i + 1:]:
                if b.granted >= a.rel_sent:
                    break
                if a.rel == "1" and b.rel == "1":
                    overlaps.append((name, a, b))
                else:
                    lost_overlaps += 1
    for name, a, b in overlaps[:10]:
        print(f"# overlap: {name}: c{a.client} gw{a.gw} token {a.token} "
              f"[{a.granted:.3f}, {a.rel_sent:.3f}] and c{b.client} gw{b.gw} token {b.token} "
              f"[{b.granted:.3f}, {b.rel_sent:.3f}]")
    kinds = collections.Counter(release_kind(h.rel) for h in holds)
    check(not overlaps, f"no overlapping holds released with 1 ({len(overlaps)} overlaps; "
          f"{lost_overlaps} overlaps involve a hold told of its loss)")
    silent = [h for h in holds if h.rel == "0" or release_kind(h.rel).startswith("other")]
    for h in silent[:10]:
        print(f"# release answered {h.rel}: c{h.client} gw{h.gw} {h.name} token {h.token} "
              f"granted {h.granted:.3f} released {h.rel_sent:.3f} phase {h.phase}")
    check(not silent, f"every release answered 1, -LOST, not written or lost its connection "
          f"({len(silent)} answered otherwise)")

    # 3. fenced refusals only for holds that learned of their loss
    refused = [h for h in holds if h.rejected]
    unwarned = [h for h in refused if not told_of_loss(h.rel)]
    for h in unwarned[:10]:
        print(f"# fenced refusal without loss: c{h.client} gw{h.gw} {h.name} token {h.token} "
              f"release {h.rel}")
    check(not unwarned, f"the fenced resource refused only holds told of their loss "
          f"({sum(h.rejected for h in holds)} writes refused in {len(refused)} holds, "
          f"{len(unwarned)} of them released with 1 or 0)")

    # 4. progress
    per_client = collections.Counter(h.client for h in holds)
    idle = [c for c in range(CLIENTS) if per_client[c] == 0]
    check(not idle, f"every client was granted the lock ({len(idle)} never: "
          f"{' '.join(f'c{c}' for c in idle)})")
    return kinds, refused, per_client


def summary(kinds, refused, per_client):
    print("# ---- summary ----")
    print(f"# seed {SEED}, heartbeat {HEARTBEAT}, {GATEWAYS} gateways, {CLIENTS} clients, "
          f"{LOCKS} locks, lease {LEASE_MS} ms, wait {WAIT_MS} ms, hold 0-{HOLD_MS} ms, "
          f"{now():.1f} s")
    print(f"# grants {len(holds)}; fenced writes accepted {fenced.accepted}, refused "
          f"{sum(h.rejected for h in holds)}")
    print("# releases: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    others = ", ".join(f"{k} {v}" for k, v in sorted(stats.items()))
    print(f"# other answers: {others or 'none'}")
    kept, gone = (stats["holds adopted after their gateway drained"],
                  stats["holds not adopted after their connection closed"])
    if kept + gone:
        print(f"# holds whose connection closed mid-hold: {kept + gone}, adopted on another "
              f"gateway {kept} ({100 * kept // (kept + gone)}%; the others: connections "
              f"lost to SIGKILL, SIGSTOP or a lease ended)")
    print("# grants per client: " + " ".join(f"c{c}={per_client[c]}" for c in range(CLIENTS)))
    print(f"# {'phase':<24} {'secs':>6} {'grants':>7} {'g/s':>6} {'lost':>5} "
          f"{'per gateway':>12}")
    spans = collections.OrderedDict()
    for (t0, label), nxt in zip(phase.log, phase.log[1:] + [(now(), None)]):
        spans.setdefault(label, 0.0)
        spans[label] += nxt[0] - t0
    for label, secs in spans.items():
        hs = [h for h in holds if h.phase == label]
        lost = sum(1 for h in hs if h.rel != "1")
        per_gw = "/".join(str(sum(1 for h in hs if h.gw == i)) for i in range(GATEWAYS))
        rate = len(hs) / secs if secs > 0 else 0
        print(f"# {label:<24} {secs:6.1f} {len(hs):7d} {rate:6.1f} {lost:5d} {per_gw:>12}")
    for name in sorted({h.name for h in holds}):
        toks = [h.token for h in holds if h.name == name]
        print(f"# {name}: {len(toks)} grants, tokens {min(toks)}..{max(toks)}")


def scrape(g):
    """Gateway g's /metrics as {sample name with labels: value}, and its INFO
    leases section as {field: value}; ({}, {}) when it does not answer."""
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{g.admin_port}/metrics", timeout=5) as r:
            text = r.read().decode()
        info = redis.Redis(host="127.0.0.1", port=g.port, socket_timeout=5).info("leases")
    except (OSError, redis.RedisError):
        return {}, {}
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            samples[key] = float(value)
    return samples, info


def family_total(samples, family, label=None):
    """The sum of a family's samples (those with label, e.g. 'outcome="ok"')."""
    return sum(v for k, v in samples.items()
               if k.split("{")[0] == family and (label is None or label in k))


def heartbeat_checks(gws, seen, scraped, heartbeat=None):
    """--heartbeat reached the gateways: each in replica mode (since its
    last start) sent session heartbeats and had answers ok, one in lease
    mode shows none; LOCK.STATE showed held locks whose item names a
    session (heartbeat replica) exactly when some gateway was in replica
    mode. Their figures (per-lock renewals, store requests) are printed."""
    bad = []
    for g in gws:
        samples, info = scraped[g.i]
        beats = family_total(samples, "leasegate_replica_heartbeats_total")
        ok = family_total(samples, "leasegate_replica_heartbeat_answers_total", 'outcome="ok"')
        has = any(k.startswith("leasegate_replica_heartbeats_total") for k in samples)
        answers = " ".join(f"{k.split('outcome=')[1].split(chr(34))[1]} {v:.0f}"
                           for k, v in sorted(samples.items())
                           if k.startswith("leasegate_replica_heartbeat_answers_total{"))
        print(f"# gw{g.i} ({g.mode} since its start {g.incarnation}): session heartbeats "
              f"{beats:.0f} (answers: {answers or 'none'}), per-lock renewals ok "
              f"{info.get('renewals_ok', '?')}, store requests " +
              " ".join(f"{k[len('store_requests_'):]}={v}" for k, v in sorted(info.items())
                       if k.startswith("store_requests_") and v))
        if not samples:
            bad.append(f"gw{g.i}: no /metrics")
        elif g.mode == "replica" and not (beats > 0 and ok > 0):
            bad.append(f"gw{g.i}: replica mode, {beats:.0f} heartbeats, {ok:.0f} ok")
        elif g.mode == "lease" and has:
            bad.append(f"gw{g.i}: lease mode shows session heartbeats")
    check(not bad, "each gateway's session heartbeats are as its --heartbeat says (" +
          ("; ".join(bad) or "replica mode: some sent and answered ok; lease mode: none") + ")")
    replica = (heartbeat or HEARTBEAT) != "lease"
    check((seen["replica"] > 0) == replica,
          f"LOCK.STATE showed locks held in session mode {'' if replica else 'never '}"
          f"(heartbeat of held exclusive locks: " +
          (", ".join(f"{k} {v}" for k, v in sorted(seen.items())) or "none seen") + ")")


def shared_progress(path):
    """Every reader and semaphore client (Redis, PostgreSQL) was granted."""
    import lincheck
    granted = collections.Counter(r["client"] for r in lincheck.load(path)
                                  if r["op"] == "acquire" and r["result"] == "granted")
    want = ([f"r{c}" for c in range(READERS)] + [f"m{c}" for c in range(SEM_CLIENTS)] +
            [f"pr{c}" for c in range(PG_SHARED_CLIENTS)])
    idle = [c for c in want if not granted[c]]
    check(not idle, f"every reader and semaphore client was granted ({len(idle)} never: "
          f"{' '.join(idle)}; " + " ".join(f"{c}={granted[c]}" for c in want) + ")")


def linearizable(path):
    """tests/stress/lincheck.py on the history: its findings as "#" lines,
    one ok / not ok."""
    import lincheck
    records = lincheck.load(path)
    t = time.monotonic()
    violations, inconclusive = lincheck.report(
        records, out=lambda line: print(line if line.startswith("#") else "# " + line))
    secs = time.monotonic() - t
    ops = collections.Counter(r["op"] for r in records)
    print(f"# history {path}: {len(records)} ops (" +
          ", ".join(f"{k} {v}" for k, v in sorted(ops.items())) + f"), checked in {secs:.2f} s")
    kinds = collections.Counter((r["proto"], r.get("mode", "exclusive")) for r in records
                                if r["op"] == "acquire" and r["result"] == "granted")
    print("# holds granted by kind: " + ", ".join(f"{p} {m} {v}" for (p, m), v in
                                                 sorted(kinds.items())))
    what = (f"the history is linearizable (tests/stress/lincheck.py: {violations} violations, "
            f"{len(inconclusive)} names inconclusive)")
    if os.environ.get("STRESS_LINCHECK") == "report":  # shown, not enforced
        print(f"# {'ok' if not violations and not inconclusive else 'NOT'}: {what}")
        return
    check(not violations and not inconclusive, what)


def main():
    global history
    random.seed(SEED)
    history = History(os.path.join(WORK, "stress-history.jsonl"))
    if TRACE:  # the clock the proxies' traces are read on (ddb_trace.py)
        with open(os.path.join(WORK, "stress-t0"), "w") as f:
            f.write(f"{T0}\n")
    if HEARTBEAT not in HEARTBEATS:
        raise SystemExit(f"STRESS_HEARTBEAT={HEARTBEAT}: want one of {', '.join(HEARTBEATS)}")
    table = f"lg-stress-{os.getpid()}-{int(time.time())}"
    log(f"table {table}, seed {SEED}, heartbeat {HEARTBEAT}, logs in {WORK}/stress-*.log")
    proxies, gws = [], []
    try:
        proxies = [Proxy(i) for i in range(GATEWAYS)]
        for i in range(GATEWAYS):
            gws.append(Gateway(i, table, proxies[i]))
        gateways.extend(gws)
        threads = [threading.Thread(target=client_loop, args=(c, gws[c % GATEWAYS]), daemon=True)
                   for c in range(CLIENTS)]
        threads += [threading.Thread(target=pg_loop, args=(c, gws[c % GATEWAYS]), daemon=True)
                    for c in range(PG_CLIENTS)]
        threads += [threading.Thread(target=pg_shared_loop, args=(c, gws[(c + 1) % GATEWAYS]),
                                     daemon=True) for c in range(PG_SHARED_CLIENTS)]
        threads += [threading.Thread(target=shared_loop, args=(c, gws[(c + 2) % GATEWAYS],
                                                               "shared"), daemon=True)
                    for c in range(READERS)]
        threads += [threading.Thread(target=shared_loop, args=(c, gws[c % GATEWAYS], "limit"),
                                     daemon=True) for c in range(SEM_CLIENTS)]
        threads += [threading.Thread(target=script_loop, args=(c, gws[c % GATEWAYS]),
                                     daemon=True) for c in range(SCRIPT_CLIENTS)]
        threads.append(threading.Thread(target=observer_loop, args=(gws,), daemon=True))
        for t in threads:
            t.start()
        faults(gws, proxies)
        stop.set()
        log("stopping the clients")
        deadline = time.monotonic() + 2 * SOCKET_TIMEOUT
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stuck = sum(t.is_alive() for t in threads)
        check(stuck == 0, f"every client ended ({stuck} stuck)")
        for g in gws:
            check(g.proc.poll() is None, f"gateway {g.i} is running at the end")
        scraped = {g.i: scrape(g) for g in gws}
    finally:
        for g in gws:
            g.stop_for_good()
        for p in proxies:
            p.proc.terminate()
            p.proc.wait()
    history.close()
    kinds, refused, per_client = checks(holds)
    idle = [c for c in range(SCRIPT_CLIENTS) if stats[f"script grants s{c}"] == 0]
    check(not idle, f"every script client took the lock ({len(idle)} never: "
          f"{' '.join(f's{c}' for c in idle)})")
    shared_progress(history.path)
    heartbeat_checks(gws, heartbeats_seen, scraped)
    linearizable(history.path)
    summary(kinds, refused, per_client)
    if not all(results):
        print(f"# gateway logs: {WORK}/stress-gw*.log")
    return 0 if all(results) else 1


def selftest():
    """The checks fail on crafted histories that break each rule."""
    import contextlib
    import io

    def h(client, token, granted, rel_sent, rel="1", rejected=0, name="x", sent=None):
        return Hold(client, 0, 1, name, token, granted - 0.01 if sent is None else sent,
                    granted, "steady", rejected, rel_sent, rel_sent + 0.001, rel)

    good = [h(c, 10 * (c + 1), c * 1.0, c * 1.0 + 0.5) for c in range(CLIENTS)]
    cases = {
        "a clean history": (good, [True] * 5),
        "an overlap": (good + [h(1, 15, 0.3, 0.4)], [True, False, True, True, True]),
        "a token repeated": (good + [h(0, 50, 4.7, 4.8)], [False, True, True, True, True]),
        "a token lower": (good[:3] + [h(3, 1, 3.0, 3.5)] + good[4:],
                          [False, True, True, True, True]),
        "a token lower, answered a lease after its send, its release -LOST": (
            good[:3] + [h(3, 1, 3.0, 3.5, rel="-LOST expired", sent=3.0 - LEASE_MS / 1000)]
            + good[4:], [True] * 5),
        "a token lower, answered a lease after its send, its release 1": (
            good[:3] + [h(3, 1, 3.0, 3.5, sent=3.0 - LEASE_MS / 1000)] + good[4:],
            [False, True, True, True, True]),
        "a fenced refusal released with 1": (good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5,
                                                            rejected=1)],
                                             [True, True, True, False, True]),
        "a fenced refusal told -LOST": (good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5,
                                                       rel="-LOST expired", rejected=1)],
                                        [True] * 5),
        "a release answering 0": (good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5, rel="0")],
                                  [True, True, False, True, True]),
        "a release not written (DynamoDB failed)": (
            good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5, rel=NOT_WRITTEN)], [True] * 5),
        "a fenced refusal, its release not written (DynamoDB failed)": (
            good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5, rel=NOT_WRITTEN, rejected=1)],
            [True, True, True, False, True]),
        "a fenced refusal, its release not written (taken over)": (
            good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5, rel=NOT_WRITTEN_TAKEN, rejected=1)],
            [True] * 5),
        "a release answering another error": (
            good[:-1] + [h(CLIENTS - 1, 999, 20.0, 20.5, rel="-ERR something else")],
            [True, True, False, True, True]),
        "a client never served": (good[1:], [True, True, True, True, False]),
    }
    failed = 0
    for what, (hist, want) in cases.items():
        del results[:]
        with contextlib.redirect_stdout(io.StringIO()):
            checks(hist)
        if results != want:
            failed += 1
            print(f"not ok selftest: {what}: checks gave {results}, wanted {want}")
    failed += selftest_heartbeat()
    del results[:]
    # the PostgreSQL client reads the WARNING 58000 of a release not written
    from history import UNWRITTEN_NOTICE
    notice = ("WARNING:  the release of 'pg:stress:1' was not written (DynamoDB UpdateItem: "
              "Connection reset by peer): the lock may stay held until its lease runs out\n")
    m = UNWRITTEN_NOTICE.search(notice)
    if not m or m.group(1) != "pg:stress:1" or rel_result(NOT_WRITTEN) != "unwritten":
        failed += 1
        print("not ok selftest: a release not written is not recognised")
    if not failed:
        print(f"ok selftest: the checks pass a clean history and the answers of releases not "
              f"written, and fail on {len(cases) - 5} crafted violations")
    return 1 if failed else 0


def selftest_heartbeat():
    """heartbeat_checks fails on a replica-mode gateway without session
    heartbeats answered ok, on a lease-mode one showing them, and on
    LOCK.STATE's heartbeat not matching the mode; passes the right ones.
    The number of cases that went wrong."""
    import contextlib
    import io
    beats = {'leasegate_replica_heartbeats_total{db_collection_name="t"}': 5.0,
             'leasegate_replica_heartbeat_answers_total{db_collection_name="t",outcome="ok"}': 4.0}
    none = {'leasegate_replica_heartbeats_total{db_collection_name="t"}': 3.0}
    other = {"leasegate_sessions": 1.0}
    gw = collections.namedtuple("Gw", "i mode incarnation")
    seen_r = collections.Counter(replica=3, lease=1)
    seen_l = collections.Counter(lease=4)
    cases = {  # what: (modes, samples per gateway, seen, run's mode, results wanted)
        "replica mode, heartbeats answered ok": (["replica"] * 2, [beats] * 2, seen_r, "replica",
                                                 [True, True]),
        "lease mode, none": (["lease"] * 2, [other] * 2, seen_l, "lease", [True, True]),
        "mixed, each as its mode": (["replica", "lease"], [beats, other], seen_r, "mixed",
                                    [True, True]),
        "replica mode, none answered ok": (["replica"] * 2, [beats, none], seen_r, "replica",
                                           [False, True]),
        "replica mode, no session metrics": (["replica"], [other], seen_r, "replica",
                                             [False, True]),
        "lease mode showing heartbeats": (["lease"], [beats], seen_l, "lease", [False, True]),
        "replica mode, no lock seen held in session mode": (["replica"], [beats], seen_l,
                                                            "replica", [True, False]),
        "lease mode, a lock seen held in session mode": (["lease"], [other], seen_r, "lease",
                                                         [True, False]),
    }
    failed = 0
    for what, (modes, samples, seen, run, want) in cases.items():
        del results[:]
        gws = [gw(i, m, 1) for i, m in enumerate(modes)]
        scraped = {i: (x, {"renewals_ok": 0}) for i, x in enumerate(samples)}
        with contextlib.redirect_stdout(io.StringIO()):
            heartbeat_checks(gws, seen, scraped, run)
        if results != want:
            failed += 1
            print(f"not ok selftest: heartbeat: {what}: checks gave {results}, wanted {want}")
    if not failed:
        print(f"ok selftest: the heartbeat checks pass gateways as their mode says, and fail on "
              f"{sum(1 for c in cases.values() if False in c[4])} crafted mismatches")
    return failed


# Redis answers of a release whose write failed (redis-py drops the "ERR ").
NOT_WRITTEN = ("-the release of 'x' was not written (DynamoDB UpdateItem on table t: Failed to "
               "connect to 127.0.0.1 port 1: Connection reset by peer (lock 'x', table 't')): "
               "the lock may stay held until its lease runs out")
NOT_WRITTEN_TAKEN = ("-the release of 'x' was not written (the lock is no longer held by this "
                     "lease (lock 'x', table 't')): the lock may stay held until its lease runs "
                     "out")


if __name__ == "__main__":
    sys.exit(selftest() if sys.argv[1:] == ["--selftest"] else main())
