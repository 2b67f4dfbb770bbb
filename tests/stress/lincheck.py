#!/usr/bin/python3
"""A history checker for leasegate's locks: is a recorded history of client
operations linearizable against the sequential specification of a lock,
with the lease's real-time rules made explicit?

    lincheck.py HISTORY.jsonl [--expect-violation] [--clock-tol-ms N]
                              [--bound N] [--max-violations N]
    lincheck.py --selftest     (planted violations are flagged, valid tricky
                                histories pass; no gateway, no moto)

The history: one JSON object per line, one per client operation, every time
in seconds on one monotonic clock (the harness runs on one machine):
  client    the session that sent it ("c3", "pg1"...); a client is sequential
  replica   the gateway it was sent to
  op        acquire | release | unlock | commit | rollback | renew | state |
            fenced | lost (a loss notice, as PostgreSQL's WARNING) | adopt
            (LOCK.ADOPT of the client's hold on another connection, after
            its gateway drained: the hold goes on there)
  name      the lock
  invoke    when it was sent;  complete  when its answer was read
  result    acquire: granted | refused | timeout | failed | error
            | unknown (answered -TRYAGAIN or 58000: its write's outcome
            is unknown, it may have taken the lock for no session)
            release, unlock, commit, rollback: ok | lost | notheld | error
            | unwritten (its write failed: Redis -ERR "... was not
            written ...", PostgreSQL's WARNING 58000)
            adopt: ok (the hold goes on, its lease written again);
            renew: ok | lost | error | unknown (answered -TRYAGAIN: the
            lease goes on, its write may have landed, or not: it may
            extend the lease, or never, so it moves no end);
            state: held | free | error
            fenced: accepted | refused;  lost: lost
  token     the fencing token when one is known (acquire granted, state
            held, fenced), else null
  lease_ms  (acquire) the lease asked for;  wait  (acquire) false for a try
  mode      (acquire) exclusive (when absent) | shared (a reader:
            LOCK.ACQUIRE ... SHARED, pg_advisory_lock_shared and its
            variants) | limit (one of at most n holders: LOCK.ACQUIRE ...
            LIMIT n);  limit  n;  slot  the slot a limit grant names
"error" is an answer that never came (connection lost, timeout): the
operation may or may not have taken effect; so may an "unknown" acquire.
The harness's own records (client "harness"): op drain (a replica's
drain began: its connections close), and op cut (replica cut off from
DynamoDB from invoke to complete: nothing of it reached DynamoDB then, so
an exclusive acquire of it sent after invoke and answered "unknown"
before complete took nothing, and counts as failed).

The model, per lock name: a register (holder, last token). The rules:
  - a grant needs no holder; its token is higher than every token granted
    before it (tokens rise per name);
  - a refusal (a try answering nil/false) needs a holder other than the
    client at some point between its invoke and its complete: a refusal
    after a release was acknowledged and before any other grant could be
    linearized is a violation; any hold may refuse it, the client's own
    too (one it no longer knows of: an "error" or "unknown" acquire, a
    loss reported, a release not written, a lost connection; a try on a
    connection that holds the lock answers an error, not a refusal);
  - an acknowledged release (1 / true / COMMIT) needs the client's hold to
    be the holder, and frees the lock; a renew answering 1 needs it too;
  - a release answered "not written" (unwritten) ends the hold for the
    client, not for the lock: its write may still have reached DynamoDB
    (a request cut off after it was sent), so it may free the lock at any
    point after its invoke, or never; then the hold ends at an invisible
    "end" as a lost one (below);
  - LOCK.STATE held with token t needs the hold of token t (or one of an
    unknown token) to be the holder, and a later grant's token is higher
    than t; not held needs no holder;
  - a holder stays the holder from its grant until its release is
    acknowledged, or, if its loss was reported (release answering -LOST,
    55000 or 0, a renew answering 0, a loss notice, a lost connection), its
    release was not written, or it was never released in the history,
    until an invisible "end" that is not earlier than its last write's
    invoke (the acquire's, or that of the last renew answering 1) + the
    lease - the clock tolerance (a takeover waits until it has seen the
    item's last record version for a whole lease on its own monotonic
    clock, and that record was written after the invoke) or, for a lost
    connection, the invoke of the failed call (the gateway releases at
    close). A grant to another client before that is a violation: this is
    the "grant during a live lease without loss" rule.
With shared holders (docs/design/shared-locks.md) the register holds an
exclusive holder and a set of shared holders:
  - an exclusive grant needs no holder of either mode; a reader's needs no
    exclusive holder; a semaphore's fewer than n holders and its slot free;
  - readers holding at one instant have one token, the group token: the
    first reader of a phase (none holding, and no reader's acquire of
    unknown outcome that may hold a place and so keep the phase going)
    has a token above every token before it, the others that one; an exclusive grant's token is above
    the readers' before it; a semaphore's tokens rise per (name, slot);
  - a reader's try refused needs an exclusive holder, or an exclusive
    waiter's announcement that may stand (its wait in flight, or ended at
    most ANNOUNCE_AFTER leases ago, ANNOUNCE_LOST if it was never
    answered); an exclusive try refused, a holder of either mode, or a
    reader the last exclusive release admitted that may not have come yet
    (its wait in flight at that release and not ended ANNOUNCE_AFTER
    leases before); a semaphore's try refused, n holders;
  - LOCK.STATE free means no exclusive holder (readers may hold), held
    an exclusive holder; of a name held shared (result shared or limit,
    with count): no exclusive holder, count shared holders, the group
    token; a loss ends a shared hold as an exclusive one;
  - a wait answered "timeout" may still have taken the lock, for no
    session, for a moment: its write in flight at the timeout is kept as
    an orphan whose lease is released at once if it lands (core/
    locktable.c, finish); so it is an operation that may or may not have
    happened, its hold ended at the earliest at its answer;
  - a shared acquire whose outcome is unknown ("error", "unknown", or a
    wait answered "timeout") is no
    operation of the model but a phantom: from its invoke on it may hold a
    place for no session, explaining refusals and holders shown (the
    search stays small: k of them are not 2^k states).
An operation whose outcome is unknown takes effect at most LATE_LEASES
leases after its answer, or never.
PostgreSQL readers' tokens are read after the grant when they can be
(leasegate.state's fencing token while the session holds the key shared:
the header's fence, the group token), else unknown.
And without the search, the interval check: a hold runs from its grant's
answer to the sending of its release, counted when that release was
acknowledged; no exclusive hold overlaps another hold of the name, no
more than n holders of a semaphore of n at one instant, no two readers
holding at one instant with different known tokens (holds told of their
loss, not written or cut off are counted apart, allowed).
Every operation linearizes at one point between its invoke and its complete
("error" ones: at any point after the invoke, or never). The search is the
Wing & Gong / Porcupine one, per name, depth first over the operations that
may go next (those invoked before the earliest pending complete), with each
point taken as early as its rules allow, memoised on (operations done,
holder, last token) with the earliest time reached; it gives up after
--bound states per name (default 2,000,000) and says so (exit status 2).

On a violation it prints the smallest violating window: the shortest prefix
of the history (by time) that fails, then the latest start from which that
window still fails with any state at the start (operations in flight at the
start may have taken effect before it), and the operations in it with
times; then it removes the operation whose answer closed the window and
looks for the next one (up to --max-violations, default 50, per name).
Also checked without the search: a fenced write refused only for holds
whose loss was reported. Prints "ok ..." / "not ok ..." lines and "# ..."
figures; exit status 0 valid, 1 a violation, 2 the bound was hit.
--expect-violation inverts it (for the fixture of a known bug): 0 only if a
violation is found.
"""
import bisect
import collections
import json
import sys
import time

INF = float("inf")
# How far apart the gateways' clocks and the harness's may be, s: the
# harness (stress.py) and the command line alike.
CLOCK_TOL = 0.02
# How long after its answer an exclusive wait's announcement may still stop
# new readers, in leases: answered (its clear is written after the answer),
# and unanswered (its gateway stopped or killed: readers clear it once it
# stood still for two of its poll intervals, a stopped gateway's own wait
# may announce again on SIGCONT).
TURN_AFTER = 0.5    # s: a semaphore waiter's turn comes a poll (a third of its lease, 0.67 s here) in, not sooner
TURN_CLEARED = 0.5  # s: ... and goes this long after its answer at most (its XCLEAR)
ANNOUNCE_AFTER = 0.5
ANNOUNCE_LOST = 3
# How long after its answer (or its failure) an operation whose outcome is
# unknown may still take effect, in leases (search).
LATE_LEASES = 3
RELEASES = ("release", "unlock", "commit", "rollback")


class Hold:
    """One grant (or a grant that may have happened) and what became of it."""

    def __init__(self, hid, client, name, token, inv, lease_s, mode="exclusive", limit=None,
                 slot=None):
        self.hid, self.client, self.name, self.token = hid, client, name, token
        self.inv, self.lease_s = inv, lease_s
        self.mode, self.limit, self.slot = mode, limit, slot
        self.written = inv      # the invoke of its last write (acquire, renew 1)
        self.fate = "open"      # open | released | lost | unwritten | error
        self.end_earliest = INF  # when a loss may end it (INF: it cannot)
        self.granted = INF      # the complete of its grant (INF: never answered)
        self.rel_sent = INF     # the invoke of the release that ended it for the client

    def set_fate(self, fate, at, tol):
        if self.fate != "open":
            return
        self.fate = fate
        self.rel_sent = at
        if fate == "released":
            self.end_earliest = INF
            return
        expiry = self.written + self.lease_s - tol
        self.end_earliest = min(expiry, at) if fate == "error" else expiry

    def label(self):
        tok = self.token if self.token is not None else "?"
        fate = {"open": "never released", "released": "its release acknowledged later",
                "lost": "its loss reported later", "error": "its connection lost",
                "unwritten": "its release not written"}[self.fate]
        end = (f", not ended before {self.end_earliest:.4f}"
               if -INF < self.end_earliest < INF else "")
        mode = "" if self.mode == "exclusive" else f"{self.mode} "
        slot = f" slot {self.slot}" if self.slot is not None else ""
        return f"{self.client}'s {mode}hold of token {tok}{slot} ({fate}{end})"


class MOp:
    """An operation of the model: kind grant, refuse, release, renew, held,
    free; optional ones may be left out (their answer never came)."""

    def __init__(self, kind, rec, hold=None, token=None, optional=False):
        self.kind, self.rec, self.hold, self.token = kind, rec, hold, token
        self.inv = rec["invoke"]
        self.resp = INF if optional else rec["complete"]
        self.optional = optional


def fmt_op(rec):
    op = rec["op"]
    if op == "acquire" and rec.get("wait") is False:
        op = "try"
    tok = rec.get("token")
    tok = f" token {tok}" if tok is not None else ""
    return (f"{rec['client']:>5} gw{rec.get('replica', '?')} {op:<8} {rec['name']} "
            f"[{rec['invoke']:.4f}, {rec['complete']:.4f}] {rec['result']}{tok}")


def build(records, tol):
    """The holds and the model's operations per name, and the findings of
    the checks that need no search."""
    per_name = collections.defaultdict(list)
    holds = {}
    lint = []
    open_hold = {}  # (client, name) -> Hold
    drains = collections.defaultdict(list)  # replica -> when its drains began
    for rec in records:
        if rec["op"] == "drain":
            drains[rec["replica"]].append(rec["invoke"])

    def lost_at(h, rec, at):
        """When a hold whose connection turned out lost at `at` may have
        ended: at its replica's drain in between (the drain closes the
        connection and releases what no client can adopt), else at."""
        began = [d for d in drains.get(rec.get("replica"), ()) if h.granted <= d <= at]
        return min(began) if began else at
    # A loss notice read with an answer counts before that answer, except
    # one read with the very grant of that name (a grant answered after a
    # whole lease: PostgreSQL sends the WARNING with its answer): it ends
    # the hold that grant began, so it goes after it.
    granted_with = {(r["client"], r["name"], r["invoke"]) for r in records
                    if r["op"] == "acquire" and r["result"] == "granted"}

    def order(r):
        if r["op"] != "lost":
            return 1
        return 2 if (r["client"], r["name"], r["invoke"]) in granted_with else 0
    for rec in sorted(records, key=lambda r: (r["invoke"], order(r), r["complete"])):
        key = (rec["client"], rec["name"])
        op, res, name = rec["op"], rec["result"], rec["name"]
        h = open_hold.get(key)
        if op == "acquire":
            if h is not None:  # a new acquire ends what the client knew of the last
                h.set_fate("error", rec["invoke"], tol)
                open_hold.pop(key)
            # a wait answered "timed out" whose write was in flight: the
            # gateway keeps it as an orphan and releases its lease at once
            # if it lands (core/locktable.c, finish): held for no session
            mode = rec.get("mode", "exclusive")
            timed_out = res == "timeout" and rec.get("wait") is not False
            if phantom(rec):
                # a shared hold that may have been granted, for no session:
                # not an operation of the model (2^k orders of them once a
                # search fails); it may explain refusals and holders shown
                # from its invoke on (phantoms)
                continue
            if res in ("granted", "error", "unknown") or timed_out:
                h = Hold(len(holds), rec["client"], name, rec.get("token"), rec["invoke"],
                         rec.get("lease_ms", 0) / 1000, rec.get("mode", "exclusive"),
                         rec.get("limit"), rec.get("slot"))
                holds[h.hid] = h
                if res == "granted":
                    h.granted = rec["complete"]
                    open_hold[key] = h
                elif timed_out:  # released once its write answered
                    h.set_fate("error", rec["complete"], tol)
                else:  # no session holds it: released at close or by its lease
                    h.set_fate("error", rec["invoke"], tol)
                h.grant = MOp("grant", rec, h, h.token, optional=res != "granted")
                per_name[name].append(h.grant)
            elif res == "refused" and rec.get("wait") is False:
                per_name[name].append(MOp("refuse", rec))
        elif op in RELEASES:
            if h is None:
                if res == "ok" and op in ("release", "unlock"):
                    lint.append(("a release acknowledged with nothing held", [rec]))
                continue
            open_hold.pop(key)
            if res == "ok" and h.fate == "lost":
                pass  # COMMIT or ROLLBACK after the loss was told: it releases nothing
            elif res == "ok":
                h.set_fate("released", rec["invoke"], tol)
                per_name[name].append(MOp("release", rec, h))
            else:
                at = lost_at(h, rec, rec["invoke"]) if res == "error" else rec["invoke"]
                h.set_fate(res if res in ("error", "unwritten") else "lost", at, tol)
                if res in ("error", "unwritten"):  # it may have released
                    per_name[name].append(MOp("release", rec, h, optional=True))
        elif op == "renew" and h is not None:
            # unknown: the lease goes on; its write may have landed or not,
            # and a history where it did not is as valid (a takeover a
            # lease after the last write that did land), so it moves no end
            if res == "ok":
                h.written = max(h.written, rec["invoke"])
                per_name[name].append(MOp("renew", rec, h))
            elif res == "error":
                h.set_fate("error", lost_at(h, rec, rec["invoke"]), tol)
            elif res != "unknown":
                h.set_fate("lost", rec["invoke"], tol)
        elif op == "adopt" and h is not None and res == "ok":
            h.written = max(h.written, rec["invoke"])  # the adopt writes the item
        elif op == "token" and h is not None and h.token is None:
            h.token = h.grant.token = rec.get("token")  # read after the grant (PostgreSQL)
        elif op == "lost" and h is not None:
            h.set_fate("lost", rec["invoke"], tol)
        elif op == "state" and res in ("held", "free", "shared", "limit"):
            per_name[name].append(MOp(res, rec, token=rec.get("token")))
        elif op == "fenced" and res == "refused":
            lint.append(("fenced refusal", [rec, key]))
    for h in open_hold.values():  # never released here: ended by its lease at the earliest
        h.set_fate("lost", INF, tol)
    fenced = []
    for what, (rec, key) in [(w, x) for w, x in lint if w == "fenced refusal"]:
        owner = [h for h in holds.values() if (h.client, h.name) == key and
                 h.token == rec.get("token")]
        if owner and owner[0].fate == "released":
            fenced.append(("a fenced write refused for a hold released with 1 (never told "
                           "of its loss)", [rec]))
    lint = [x for x in lint if x[0] != "fenced refusal"] + fenced
    for ops in per_name.values():
        ops.sort(key=lambda m: (m.inv, m.resp))
    return per_name, holds, lint


def overlaps(holds, counts=None, flagged=None):
    """The checks of holds by their intervals, without the search: a hold
    runs from its grant's answer to the sending of its release (inside the
    true hold), counted only when that release was acknowledged (holds
    told of their loss, or whose release was not written or lost its
    connection, are counted apart in counts["apart"]). Per name: no
    exclusive hold overlapping any other hold; never more than n holders
    of a semaphore of n at one instant; readers holding at one instant
    have one token (when known). Findings as build's lint."""
    counts = counts if counts is not None else collections.Counter()
    found = []
    by_name = collections.defaultdict(list)
    for h in holds.values():
        if h.granted < INF:
            counts[h.mode] += 1
            by_name[h.name].append(h)
    for name, hs in sorted(by_name.items()):
        hs.sort(key=lambda h: h.granted)
        for i, a in enumerate(hs):
            for b in hs[i + 1:]:
                if b.granted >= a.rel_sent:
                    continue
                if a.mode == b.mode == "shared" and (a.token is None or b.token is None or
                                                     a.token == b.token):
                    continue
                if a.mode == b.mode == "limit":
                    continue
                if a.fate != "released" or b.fate != "released":
                    counts["apart"] += 1
                    continue
                what = ("two readers holding at once with different tokens"
                        if a.mode == b.mode == "shared" else
                        f"an exclusive hold overlapping another ({a.mode}, {b.mode})")
                found.append((f"{name}: {what}: {hold_span(a)} and {hold_span(b)}", []))
                if flagged is not None:
                    flagged.add(name)
        # a semaphore: the most holders at one instant, of those released with 1
        sem = [h for h in hs if h.mode == "limit" and h.fate == "released"]
        edges = sorted([(h.granted, 1, h) for h in sem] + [(h.rel_sent, -1, h) for h in sem],
                       key=lambda e: (e[0], e[1]))
        now = set()
        for t, d, h in edges:
            if d < 0:
                now.discard(h)
                continue
            now.add(h)
            n = min(x.limit for x in now if x.limit is not None) if any(
                x.limit is not None for x in now) else None
            if n is not None and len(now) > n:
                found.append((f"{name}: {len(now)} holders of a semaphore of {n} at "
                              f"{t:.4f}: " + ", ".join(hold_span(x) for x in
                                                       sorted(now, key=lambda x: x.granted)),
                              []))
                now.discard(h)  # one finding per excess grant
                if flagged is not None:
                    flagged.add(name)
    return found


def hold_span(h):
    tok = h.token if h.token is not None else "?"
    slot = f" slot {h.slot}" if h.slot is not None else ""
    return (f"{h.client} {h.mode} token {tok}{slot} [{h.granted:.4f}, {h.rel_sent:.4f}]")


def at_release(w, resv):
    """Wait w was in flight at some point of the release resv (its [r0, r1])."""
    return w[1] < resv[2] and resv[1] < w[2]


def reserved(resv, p, replica, holds, waits, tol):
    """The lock released in resv's [r0, r1] (its point in the search, and
    its answer: the write landed somewhere between) may be reserved at p
    for a waiter of another replica than replica (None: any): one whose
    wait was in flight at the release, for two poll intervals (a third of
    the lease, at most 10 s) after it."""
    if resv is None:
        return False
    h, r1 = holds[resv[0]], resv[2]
    if p > r1 + 2 * min(h.lease_s / 3, 10.0) + tol:
        return False
    return any(at_release(w, resv) and w[0] != replica for w in waits if w[3] != "phantom")


def admitted(resv, p, holds, waits):
    """Readers the exclusive release in resv's [r0, r1] admitted may still be
    awaited at p (docs/design/shared-locks.md, phase-fair: the release
    turns the readers registered behind it into radmit, and exclusive
    acquires are refused until each of them is granted or its wait ends,
    or a waiting writer saw the set stand still for a lease): a reader
    whose wait was in flight at the release, until its announcement's end
    (its wait's answer and the RUNWAIT after it; never, for a wait whose
    gateway was killed or stopped before it answered)."""
    if resv is None:
        return False
    return any(w[3] == "shared" and at_release(w, resv) and p <= w[4] for w in waits)


def phantom(rec):
    """A shared or semaphore acquire that may have been granted, for no
    session: its answer lost or unknown, or a wait ended (timed out, or
    refused as its server shut down) while its write may have been in
    flight (the gateway releases such a grant once it lands)."""
    if rec["op"] != "acquire" or rec.get("mode", "exclusive") == "exclusive":
        return False
    res = rec["result"]
    return res in ("error", "unknown") or (res in ("timeout", "failed") and
                                           rec.get("wait") is not False)


def phantoms(p, waits):
    """How many shared acquires whose outcome is unknown (answered
    -TRYAGAIN or 58000, or their connection lost) were sent before p: each
    may hold a place from then on, for no session, as long as it suits."""
    at = getattr(waits, "phantom_at", None)
    if at is None:
        return sum(1 for w in waits if w[3] == "phantom" and w[1] < p)
    return bisect.bisect_left(at, p)


class Waits(list):
    """A name's waits (replica, invoke, complete or INF, mode, end of an
    exclusive's announcement) and phantoms (mode "phantom"), with the
    phantoms' invokes sorted."""

    def seal(self):
        self.phantom_at = sorted(w[1] for w in self if w[3] == "phantom")
        return self


def announced(p, waits, modes=("exclusive",)):
    """A waiter of modes may have its announcement on the header at p
    (docs/design/shared-locks.md: new shared grants are refused while it
    stands; an exclusive waiter's, and a semaphore's waiter's turn, made a
    poll after its wait began): its wait in flight, or just ended (w[4])."""
    return any(w[3] in modes and w[1] + (TURN_AFTER if w[3] == "limit" else 0) <= p <= w[4]
               for w in waits)


def slot_token(slots, slot):
    """The last token known of a semaphore's slot (-1: none known yet)."""
    for k, t, _ in slots:
        if k == slot:
            return t
    return -1


def slot_holder(slots, slot):
    for k, _, hid in slots:
        if k == slot:
            return hid
    return None


def slot_set(slots, slot, token, hid):
    return tuple(sorted([x for x in slots if x[0] != slot] + [(slot, token, hid)],
                        key=lambda x: x[0]))


def slot_free(slots, hid):
    """slots once hold hid has left its slot."""
    return tuple((k, t, None) if h == hid else (k, t, h) for k, t, h in slots)


def apply(m, st, p, holds, waits, tol, slot_choice=None):
    """The state after m at p, or the reason it cannot go then. The state:
    (exclusive holder, shared holders, last token, reservation, the
    readers' group token or None, ((slot, last token of the slot), ...))."""
    holder, shared, last, resv, grp, slots = st
    cur = holds[holder] if holder is not None else None
    if m.kind == "grant":
        h = m.hold
        if cur is not None:
            return None, f"a grant while {cur.label()} holds the lock"
        if h.mode == "exclusive":
            if shared:
                return None, (f"an exclusive grant while {len(shared)} shared holds stand "
                              f"({holds[min(shared)].label()}...)")
            if m.token is not None and m.token <= last:
                return None, f"token {m.token} after token {last}: tokens must rise"
            return (h.hid, shared, last if m.token is None else m.token, None, None,
                    slots), None
        if h.mode == "limit":
            if h.limit is not None and len(shared) >= h.limit:
                return None, (f"a grant of a semaphore of {h.limit} while {len(shared)} hold "
                              f"it ({holds[min(shared)].label()}...)")
            k = h.slot if h.slot is not None else slot_choice
            if k is None:  # a grant that may have happened, its slot unknown, n unknown
                return (None, shared | {h.hid}, last, resv, grp, slots), None
            if h.limit is not None and not 0 <= k < h.limit:
                return None, f"slot {k} of a semaphore of {h.limit}"
            other = slot_holder(slots, k)
            if other is not None:
                return None, f"a grant of slot {k} while {holds[other].label()} holds it"
            # every grant of a slot adds one to its fence: once a token of
            # the slot is known, the next grant's is the next one
            before = slot_token(slots, k)
            exact = not phantoms(p, waits)  # else a phantom may have taken tokens
            if m.token is not None and before >= 0 and (m.token != before + 1 if exact else
                                                         m.token <= before):
                return None, (f"token {m.token} of slot {k} after token {before}: each grant "
                              f"of a slot adds one" + (" (tokens must rise per slot)"
                                                       if m.token <= before else ""))
            tok = m.token if m.token is not None else (before + 1 if before >= 0 else -1)
            return (None, shared | {h.hid}, last, resv, grp, slot_set(slots, k, tok, h.hid)), None
        # a reader: the first of a phase raises the token, the others share it
        same = [x for x in shared if h.slot is not None and holds[x].slot == h.slot]
        if same:
            return None, f"a grant of slot {h.slot} while {holds[same[0]].label()} holds it"
        if m.token is not None:
            if shared and grp is not None and m.token != grp:
                return None, (f"a reader granted token {m.token} while readers of group token "
                              f"{grp} hold ({holds[min(shared)].label()}...)")
            # the phase goes on while a reader holds, or while a reader's
            # acquire of unknown outcome may hold a place (a phantom: the
            # header's count stays above 0, and its group token with it)
            if m.token <= last and not (grp == m.token and (shared or phantoms(p, waits))):
                return None, f"reader token {m.token} after token {last}: tokens must rise"
            return (None, shared | {h.hid}, m.token, resv, m.token, slots), None
        return (None, shared | {h.hid}, last, resv, grp if shared else None, slots), None
    if m.kind == "refuse":
        mode = m.rec.get("mode", "exclusive")
        if cur is not None:
            return st, None
        if mode == "limit":
            n = m.rec.get("limit")
            if n is not None and len(shared) + phantoms(p, waits) < n and \
                    not announced(p, waits, ("exclusive", "limit")):
                return None, (f"a refusal of a semaphore of {n} while {len(shared)} hold it "
                              f"(and no waiter's turn may stand)")
            return st, None
        if mode == "exclusive" and (shared or phantoms(p, waits) or
                                    admitted(resv, p, holds, waits)):
            return st, None
        if reserved(resv, p, m.rec.get("replica"), holds, waits, tol):
            return st, None
        if mode == "shared":
            if announced(p, waits):
                return st, None
            return None, ("a refusal of a reader while no exclusive holds or waits (and no "
                          "waiter of another replica may have it reserved)")
        return None, ("a refusal while nobody holds the lock (and no waiter of another "
                      "replica may have it reserved, no reader admitted may be awaited)")
    if m.kind in ("release", "renew"):
        h = m.hold
        if h.mode != "exclusive":
            if h.hid not in shared:
                who = cur.label() if cur else f"{len(shared)} other shared holds"
                return None, (f"an acknowledged {m.rec['op']} of {h.label()} while {who} "
                              f"hold the lock")
            if m.kind == "renew":
                return st, None
            rest = shared - {h.hid}
            return (holder, rest, last, resv, grp, slot_free(slots, h.hid)), None
        if cur is None or cur.hid != h.hid:
            who = cur.label() if cur else "nobody"
            return None, f"an acknowledged {m.rec['op']} while {who} holds the lock"
        if m.kind == "renew":
            return st, None
        return (None, shared, last, (holder, p, max(p, m.rec["complete"])), grp, slots), None
    if m.kind == "held":
        if cur is None:
            tok = holds[resv[0]].token if resv else None
            if not shared and reserved(resv, p, None, holds, waits, tol) and \
                    tok in (None, m.token):
                return st, None  # a reservation keeps the released token on the item
            return None, "LOCK.STATE held while nobody holds the lock exclusively"
        if cur.token is not None and m.token is not None and cur.token != m.token:
            return None, f"LOCK.STATE token {m.token} while {cur.label()} holds the lock"
        if m.token is not None and m.token > last:  # a grant of an unknown token
            return (holder, shared, m.token, resv, grp, slots), None
        return st, None
    if m.kind in ("shared", "limit"):  # LOCK.STATE of a name held shared: its holders
        if cur is not None:
            return None, f"LOCK.STATE shows {m.kind} holders while {cur.label()} holds the lock"
        n = m.rec.get("count")
        if n is not None and not len(shared) <= n <= len(shared) + phantoms(p, waits):
            return None, (f"LOCK.STATE shows {n} {m.kind} holders while {len(shared)} hold "
                          f"the lock")
        if m.kind == "shared" and m.token is not None and shared:
            if grp is not None and m.token != grp:
                return None, (f"LOCK.STATE shows group token {m.token} while readers of token "
                              f"{grp} hold the lock")
            if grp is None:
                if m.token <= last:
                    return None, (f"LOCK.STATE shows group token {m.token} after token {last}:"
                                  f" tokens must rise")
                return (holder, shared, m.token, resv, m.token, slots), None
        return st, None
    if cur is not None:  # free (of an exclusive holder: readers may hold)
        return None, f"LOCK.STATE free while {cur.label()} holds the lock"
    return st, None


def end_of(st, hid):
    """The state once hold hid has ended unseen (its lease ran out)."""
    holder, shared, last, resv, grp, slots = st
    if holder == hid:
        return (None, shared, last, None, grp, slots)
    rest = shared - {hid}
    return (holder, rest, last, resv, grp, slot_free(slots, hid))


def start_state(holder=None, shared=frozenset()):
    return (holder, frozenset(shared), -1, None, None, ())


class Bound(Exception):
    pass


def search(mops, holds, init_states, bound, waits=(), tol=CLOCK_TOL):
    """True when mops linearize from one of init_states; Bound when the
    search gave up. Returns (ok, states, deepest dead end's reasons)."""
    n = len(mops)
    need = 0
    for i, m in enumerate(mops):
        if not m.optional:
            need |= 1 << i
    # an operation that may or may not have happened (its answer lost, or
    # in flight) has happened by LATE_LEASES leases after its answer, or
    # never will: past that, it is counted done either way, so that the
    # states of both branches meet (else every order of the pending ones
    # is a state of its own: 2^k of them once a search fails)
    late = sorted((m.rec["complete"] + LATE_LEASES * (m.hold.lease_s if m.hold is not None and
                                                       m.hold.lease_s else 2.0), i)
                  for i, m in enumerate(mops) if m.optional)
    late_at = [d for d, _ in late]
    late_mask = [0]
    for _, i in late:
        late_mask.append(late_mask[-1] | 1 << i)
    memo = {}
    states = 0
    deepest = (-1, [])
    stack = [(0, st, -INF) for st in init_states]
    while stack:
        mask, st, t = stack.pop()
        mask |= late_mask[bisect.bisect_left(late_at, t)]
        holder = st[0]
        if mask & need == need:
            return True, states, deepest
        key = (mask, st)
        seen = memo.get(key)
        if seen is not None and seen <= t:
            continue
        memo[key] = t
        states += 1
        if states > bound:
            raise Bound()
        lo = (~mask & (mask + 1)).bit_length() - 1
        minresp, cands = INF, []
        for i in range(lo, n):
            if mask >> i & 1:
                continue
            m = mops[i]
            if m.inv > minresp:
                break
            cands.append(i)
            if m.resp < minresp:
                minresp = m.resp
        nxt, why = [], []
        for i in cands:
            m = mops[i]
            p = max(t, m.inv)
            if p > minresp:
                continue
            h = m.hold
            if (m.kind == "grant" and h.mode == "limit" and h.slot is None and
                    h.limit is not None):  # its slot unknown: any of the n
                tries = [apply(m, st, p, holds, waits, tol, k) for k in range(h.limit)]
            else:
                tries = [apply(m, st, p, holds, waits, tol)]
            for st2, reason in tries:
                if st2 is None:
                    why.append((m, reason))
                    continue
                nxt.append((m.resp, (mask | 1 << i, st2, p)))
        for hid in ([holder] if holder is not None else []) + sorted(st[1]):
            if holds[hid].end_earliest == INF:
                continue
            p = max(t, holds[hid].end_earliest)
            if p <= minresp:
                nxt.append((INF, (mask, end_of(st, hid), p)))
            else:
                why.append((None, f"{holds[hid].label()} cannot have ended before "
                            f"{minresp:.4f} (its lease runs to {p:.4f} at the earliest)"))
        if not nxt:
            depth = bin(mask).count("1")
            if depth > deepest[0]:
                deepest = (depth, why)
        # earliest deadline first: pushed last, popped first
        for _, s in sorted(nxt, key=lambda x: -x[0]):
            stack.append(s)
    return False, states, deepest


def window(mops, holds, t0, t1):
    """The model's operations of the window [t0, t1] and its start states:
    operations answered after t1 are in flight (optional), and so are those
    in flight at t0 (they may have taken effect before it); before t0
    anything may have happened, so the start holder is free."""
    out = []
    for m in mops:
        if m.inv > t1 or m.resp <= t0:
            continue
        if m.resp > t1 or m.inv < t0:
            if m.kind in ("refuse", "renew", "held", "free", "shared", "limit"):
                continue  # reads in flight change nothing
            m2 = MOp(m.kind, m.rec, m.hold, m.token, optional=True)
            out.append(m2)
        else:
            out.append(m)
    if t0 == -INF:
        return out, [start_state()]
    inside = {m.hold.hid for m in out if m.kind == "grant" and m.inv >= t0}
    before = [h for h in holds.values() if h.hid not in inside and h.inv < t0 and
              h.name == (mops[0].rec["name"] if mops else None)]
    starts = [start_state()] + [start_state(h.hid) for h in before if h.mode == "exclusive"]
    # shared holds at the start: all those not released before it (a
    # start with fewer of them may be missed: the window shown is then
    # smaller than the smallest, never a violation that is not one)
    sh = [h.hid for h in before if h.mode != "exclusive" and h.rel_sent >= t0]
    if sh:
        starts.append(start_state(None, sh))
    return out, starts


def check_window(mops, ctx, t0, t1, bound):
    """ctx: (holds, the name's waits as (replica, invoke, complete), tol)."""
    holds, waits, tol = ctx
    ops, starts = window(mops, holds, t0, t1)
    ok, states, deepest = search(ops, holds, starts, bound, waits, tol)
    return ok, states, deepest, ops


# Once a name has a violation, the searches that find its window and the
# next violations are bounded tighter (a failing search explores every
# order of the operations that may or may not have happened: with readers
# that grows fast), and the hunt for more stops after HUNT_SECS.
WINDOW_BOUND = 20_000
HUNT_SECS = 20


def window_fails(mops, ctx, t0, t1, bound):
    """check_window fails, or gives up (counted as failing: the window
    shown may then be smaller than the smallest, the violation stands)."""
    try:
        return not check_window(mops, ctx, t0, t1, bound)[0]
    except Bound:
        return True


def smallest_window(mops, ctx, bound):
    """(t0, t1): the end of the shortest failing prefix, then the latest
    start from which that prefix still fails."""
    ends = sorted({m.resp for m in mops if m.resp < INF})
    lo, hi = 0, len(ends) - 1  # ends[hi] fails (the whole history does)
    while lo < hi:
        mid = (lo + hi) // 2
        if not window_fails(mops, ctx, -INF, ends[mid], bound):
            lo = mid + 1
        else:
            hi = mid
    t1 = ends[hi]
    starts = [-INF] + [t for t in ends if t <= t1]
    lo, hi = 0, len(starts) - 1  # starts[lo] fails; find the last that fails
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if not window_fails(mops, ctx, starts[mid], t1, bound):
            hi = mid - 1
        else:
            lo = mid
    return starts[lo], t1


def check_name(name, mops, ctx, bound, max_violations, out):
    """The violations of one name: a list of (t0, t1, culprit, reason, ops).
    Bound when the first search gave up."""
    found = []
    states_total = 0
    mops = list(mops)
    small = min(bound, WINDOW_BOUND)
    deadline = None
    while len(found) < max_violations:
        try:
            ok, states, _, _ = check_window(mops, ctx, -INF, INF, bound if not found else small)
        except Bound:
            if not found:
                raise
            out(f"# {name}: stopped looking for more violations after {len(found)} (the "
                f"search gave up after {small} states)")
            break
        states_total += states
        if ok:
            break
        if deadline is not None and time.monotonic() > deadline:
            out(f"# {name}: stopped looking for more violations after {len(found)} "
                f"({HUNT_SECS} s)")
            break
        deadline = deadline or time.monotonic() + HUNT_SECS
        t0, t1 = smallest_window(mops, ctx, small)
        try:
            _, _, deepest, ops = check_window(mops, ctx, t0, t1, small)
        except Bound:
            deepest, ops = (0, []), window(mops, ctx[0], t0, t1)[0]
        culprit = next(m for m in mops if m.resp == t1)
        reasons = [r for m, r in deepest[1] if m is culprit] or [r for _, r in deepest[1]]
        found.append((t0, t1, culprit, reasons[0] if reasons else "? (the window's search "
                      "gave up)", ops))
        # and look for the next one, without it (and the rest of its hold)
        mops = [m for m in mops if m is not culprit and
                (culprit.hold is None or m.hold is not culprit.hold)]
    return found, states_total


def apply_cuts(records):
    """The history without its "cut" records (the harness cut replica r
    off from DynamoDB from invoke to complete: its proxy reset every
    connection and forwarded nothing), where an exclusive acquire of r
    answered "unknown" that was sent after its cut began and answered
    before it ended is "failed": none of its requests reached DynamoDB, so
    it took nothing (a search of k acquires that may or may not have
    happened is 2^k orders). Returns (records, how many were made failed)."""
    cuts = [(r["replica"], r["invoke"], r["complete"]) for r in records if r["op"] == "cut"]
    out, made = [], 0
    for r in records:
        if r["op"] == "cut":
            continue
        if (r["op"] == "acquire" and r["result"] == "unknown" and
                r.get("mode", "exclusive") == "exclusive" and
                any(g == r.get("replica") and a < r["invoke"] and r["complete"] < b
                    for g, a, b in cuts)):
            r = dict(r, result="failed", cut=True)
            made += 1
        out.append(r)
    return out, made


def report(records, tol=CLOCK_TOL, bound=2_000_000, max_violations=50, out=print, intervals=True):
    """Checks a history; returns (violations, inconclusive names).
    intervals=False leaves out the interval check (the self-test tests the
    search alone)."""
    records, made = apply_cuts(records)
    if made:
        out(f"# {made} exclusive acquires answered -TRYAGAIN while their gateway was cut off "
            f"from DynamoDB, sent after the cut began: they wrote nothing")
    per_name, holds, lint = build(records, tol)
    counts = collections.Counter()
    flagged = set()
    found = overlaps(holds, counts, flagged)
    if intervals:
        lint += found
    else:
        flagged = set()
    out(f"# holds granted: exclusive {counts['exclusive']}, shared {counts['shared']}, "
        f"semaphore {counts['limit']}; overlapping pairs with a hold told of its loss, not "
        f"written or cut off (allowed): {counts['apart']}")
    waits = collections.defaultdict(Waits)
    for r in records:
        if r["op"] == "acquire" and r.get("wait") is not False:
            lease = r.get("lease_ms", 0) / 1000
            unanswered = r["result"] in ("error", "unknown")
            # a waiting exclusive's announcement is cleared after its
            # answer (ANNOUNCE_AFTER leases), or by readers once it stood
            # still (its gateway stopped or killed: ANNOUNCE_LOST leases)
            xend = r["complete"] + (ANNOUNCE_LOST if unanswered else ANNOUNCE_AFTER) * lease
            mode = r.get("mode", "exclusive")
            if mode == "limit" and not unanswered:
                # a semaphore's waiter announces its turn once it found
                # every place held for a poll (a third of its lease), and
                # clears it as its wait ends
                xend = r["complete"] + TURN_CLEARED
            waits[r["name"]].append((r.get("replica"), r["invoke"],
                                     INF if unanswered else r["complete"], mode, xend))
        if phantom(r):
            waits[r["name"]].append((r.get("replica"), r["invoke"], INF, "phantom", INF))
    for w in waits.values():
        w.seal()
    violations, inconclusive = 0, []
    for what, recs in lint:
        violations += 1
        out(f"not ok lincheck: {what}")
        for r in recs:
            out(f"#   {fmt_op(r)}")
    for name in sorted(per_name):
        # a name the interval check flagged has its violations: a failing
        # search of it is bounded tighter, and giving up is no more news
        nb = min(bound, WINDOW_BOUND) if name in flagged else bound
        try:
            ctx = (holds, waits.get(name, []), tol)
            found, states = check_name(name, per_name[name], ctx, nb, max_violations, out)
        except Bound:
            if name in flagged:
                out(f"# {name}: the search gave up after {nb} states (the interval check "
                    f"flagged it)")
                continue
            inconclusive.append(name)
            out(f"not ok lincheck: {name}: the search gave up after {bound} states "
                f"(inconclusive)")
            continue
        for k, (t0, t1, culprit, reason, ops) in enumerate(found):
            violations += 1
            start = f"{t0:.4f}" if t0 > -INF else "the start"
            out(f"not ok lincheck: {name}: not linearizable: {reason} (violation {k + 1}; "
                f"window {start} .. {t1:.4f}, {len(ops)} ops)")
            for m in sorted(ops, key=lambda m: m.inv):
                mark = "   <- cannot linearize" if m is culprit else ""
                opt = (" (in flight)" if m.optional and m.rec["result"] not in ("error", "unknown")
                       else "")
                out(f"#   {fmt_op(m.rec)}{opt}{mark}")
        if len(found) >= max_violations:
            out(f"# {name}: stopped after {max_violations} violations")
    return violations, inconclusive


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("history", nargs="?")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--expect-violation", action="store_true")
    ap.add_argument("--clock-tol-ms", type=float, default=CLOCK_TOL * 1000)
    ap.add_argument("--bound", type=int, default=2_000_000)
    ap.add_argument("--max-violations", type=int, default=50)
    a = ap.parse_args(argv)
    if a.selftest:
        return selftest()
    if not a.history:
        ap.error("a history file, or --selftest")
    records = load(a.history)
    t = time.monotonic()
    lines = []
    violations, inconclusive = report(records, a.clock_tol_ms / 1000, a.bound,
                                      a.max_violations, lines.append)
    secs = time.monotonic() - t
    names = len({r["name"] for r in records})
    clients = len({r["client"] for r in records})
    stats = (f"{len(records)} ops, {names} names, {clients} clients, checked in {secs:.2f} s "
             f"(clock tolerance {a.clock_tol_ms:g} ms)")
    if a.expect_violation:
        for line in lines:
            print(line if line.startswith("#") else "# " + line)
        ok = violations > 0 and not inconclusive
        print(f"{'ok' if ok else 'not ok'} lincheck: {a.history}: {violations} violations "
              f"flagged ({'as' if ok else 'NOT as'} expected; {stats})")
        return 0 if ok else 1
    for line in lines:
        print(line)
    if not violations and not inconclusive:
        print(f"ok lincheck: {a.history}: linearizable ({stats})")
    else:
        print(f"# lincheck: {violations} violations, {len(inconclusive)} names inconclusive "
              f"({stats})")
    return 2 if inconclusive and not violations else (1 if violations else 0)


# --- the self-test: crafted histories ---

def op(client, op_, inv, comp, result, token=None, name="x", wait=True, lease_ms=2000,
       replica=0, mode=None, limit=None, slot=None):
    rec = {"client": client, "replica": replica, "op": op_, "name": name, "invoke": inv,
           "complete": comp, "result": result, "token": token, "lease_ms": lease_ms,
           "wait": wait}
    if mode is not None:  # as the harness writes them: exclusive acquires have none
        rec["mode"] = mode
    if limit is not None:
        rec.update(limit=limit, slot=slot)
    return rec


def rd(client, inv, comp, result, token=None, **kw):
    """A reader's acquire (LOCK.ACQUIRE ... SHARED, pg_advisory_lock_shared)."""
    return op(client, "acquire", inv, comp, result, token, mode="shared", **kw)


def sem(client, inv, comp, result, token=None, slot=None, n=2, **kw):
    """A semaphore's acquire (LOCK.ACQUIRE ... LIMIT n): [token, slot]."""
    return op(client, "acquire", inv, comp, result, token, name="sem", mode="limit", limit=n,
              slot=slot, **kw)


def rel(client, inv, comp, result="ok", name="x", **kw):
    return op(client, "release", inv, comp, result, name=name, **kw)


def shared_cases():
    """Crafted histories with shared holders: (bad, good, bad for the
    interval check alone, good for it)."""
    bad = {
        "an exclusive grant while a reader holds": [
            rd("r", 0.00, 0.10, "granted", 5), op("w", "acquire", 0.20, 0.30, "granted", 6),
            rel("r", 0.50, 0.60), rel("w", 0.70, 0.80)],
        "a reader granted while an exclusive holds": [
            op("w", "acquire", 0.00, 0.10, "granted", 5), rd("r", 0.20, 0.30, "granted", 6),
            rel("w", 0.50, 0.60), rel("r", 0.70, 0.80)],
        "a reader granted while an exclusive holds (PostgreSQL: no tokens)": [
            op("w", "acquire", 0.00, 0.10, "granted", None, name="pg:d:1"),
            rd("r", 0.20, 0.30, "granted", None, name="pg:d:1"),
            op("w", "unlock", 0.50, 0.60, "ok", name="pg:d:1"),
            op("r", "unlock", 0.70, 0.80, "ok", name="pg:d:1")],
        "readers holding at once with two tokens": [
            rd("r", 0.00, 0.10, "granted", 5), rd("q", 0.20, 0.30, "granted", 6),
            rel("r", 0.50, 0.60), rel("q", 0.70, 0.80)],
        "an exclusive token not above the readers' before it": [
            rd("r", 0.00, 0.10, "granted", 5), rel("r", 0.20, 0.30),
            op("w", "acquire", 0.40, 0.50, "granted", 5), rel("w", 0.60, 0.70)],
        "a reader granted the last phase's token after it ended, no acquire unknown": [
            rd("r", 0.00, 0.10, "granted", 5), rel("r", 0.20, 0.30),
            rd("q", 0.40, 0.50, "granted", 5), rel("q", 0.60, 0.70)],
        "a reader token not above the exclusive's before it": [
            op("w", "acquire", 0.00, 0.10, "granted", 5), rel("w", 0.20, 0.30),
            rd("r", 0.40, 0.50, "granted", 5), rel("r", 0.60, 0.70)],
        "a reader's token read after its grant below the exclusive's before it": [
            op("w", "acquire", 0.00, 0.10, "granted", 5), rel("w", 0.20, 0.30),
            rd("r", 0.40, 0.50, "granted"), op("r", "token", 0.55, 0.56, "ok", 4),
            rel("r", 0.60, 0.70)],
        "an exclusive granted during a reader's live lease (its loss reported later)": [
            rd("r", 0.00, 0.10, "granted", 5), op("w", "acquire", 0.20, 1.50, "granted", 6),
            rel("r", 2.50, 2.60, "lost"), rel("w", 2.70, 2.80)],
        "a reader's renew acknowledged after an exclusive took its place": [
            rd("r", 0.00, 0.10, "granted", 5), op("w", "acquire", 0.20, 2.50, "granted", 6),
            op("r", "renew", 2.60, 2.70, "ok"), rel("r", 2.80, 2.90, "lost")],
        "a semaphore holder's slot given on while its connection lived (no drain)": [
            sem("a", 0.00, 0.10, "granted", 1, 0),
            sem("c", 0.35, 0.40, "granted", 2, 0, replica=1),
            rel("a", 0.50, 0.51, "error", name="sem"), rel("c", 0.60, 0.70, name="sem")],
        "three holders of a semaphore of 2": [
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.00, 0.10, "granted", 1, 1),
            sem("c", 0.20, 0.30, "granted", 2, 0),
            rel("a", 0.50, 0.60, name="sem"), rel("b", 0.50, 0.60, name="sem"),
            rel("c", 0.50, 0.60, name="sem")],
        "three holders of a semaphore of 2 (slots unknown)": [
            sem("a", 0.00, 0.10, "granted", 1), sem("b", 0.00, 0.10, "granted", 1),
            sem("c", 0.20, 0.30, "granted", 2),
            rel("a", 0.50, 0.60, name="sem"), rel("b", 0.50, 0.60, name="sem"),
            rel("c", 0.50, 0.60, name="sem")],
        "two holders of one slot of a semaphore of 3": [
            sem("a", 0.00, 0.10, "granted", 1, 2, n=3),
            sem("b", 0.20, 0.30, "granted", 2, 2, n=3),
            rel("a", 0.50, 0.60, name="sem"), rel("b", 0.70, 0.80, name="sem")],
        "a slot's token going down": [
            sem("a", 0.00, 0.10, "granted", 7, 1), rel("a", 0.20, 0.30, name="sem"),
            sem("b", 0.40, 0.50, "granted", 7, 1), rel("b", 0.60, 0.70, name="sem")],
        "a slot's token skipping one, no acquire of unknown outcome to take it": [
            sem("a", 0.00, 0.10, "granted", 7, 1), rel("a", 0.20, 0.30, name="sem"),
            sem("b", 0.40, 0.50, "granted", 9, 1), rel("b", 0.60, 0.70, name="sem")],
        "a slot out of the semaphore's range": [
            sem("a", 0.00, 0.10, "granted", 1, 2), rel("a", 0.20, 0.30, name="sem")],
        "a semaphore try refused with a place free": [
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.20, 0.30, "refused", wait=False),
            rel("a", 0.50, 0.60, name="sem")],
        "a reader's try refused while no exclusive holds or waits": [
            rd("r", 0.00, 0.10, "granted", 5), rd("q", 0.20, 0.30, "refused", wait=False),
            rel("r", 0.50, 0.60)],
        # the window of the release below, counted from its answer (0.50),
        # ends at 0.50 + 2 x 2/3 s (+ 20 ms): past it, no reservation
        "a reader's try refused past the reservation counted from the release's answer": [
            op("w", "acquire", 0.00, 0.10, "granted", 5),
            rd("r", 0.20, 1.20, "granted", 6, replica=1), rel("w", 0.40, 0.50),
            rel("r", 1.30, 1.35, replica=1), rd("q", 1.90, 1.95, "refused", wait=False)],
        "an exclusive try refused a lease after the reader the last release admitted came": [
            op("w", "acquire", 0.00, 0.10, "granted", 5),
            rd("r", 0.05, 0.50, "granted", 6, replica=1), rel("w", 0.20, 0.30),
            rel("r", 0.60, 0.70, replica=1), op("t", "acquire", 2.00, 2.05, "refused", wait=False)],
        "an exclusive try refused after the last reader's release": [
            rd("r", 0.00, 0.10, "granted", 5), rel("r", 0.20, 0.30),
            op("w", "acquire", 0.40, 0.50, "refused", wait=False)],
        "LOCK.STATE held while only readers hold": [
            rd("r", 0.00, 0.10, "granted", 5), op("s", "state", 0.20, 0.30, "held", 5),
            rel("r", 0.50, 0.60)],
        "LOCK.STATE shows readers while an exclusive holds": [
            op("w", "acquire", 0.00, 0.10, "granted", 5),
            dict(op("s", "state", 0.20, 0.30, "shared", 5), count=1), rel("w", 0.50, 0.60)],
        "LOCK.STATE shows 2 readers while 1 holds": [
            rd("r", 0.00, 0.10, "granted", 5),
            dict(op("s", "state", 0.20, 0.30, "shared", 5), count=2), rel("r", 0.50, 0.60)],
        "LOCK.STATE shows a group token other than the readers'": [
            rd("r", 0.00, 0.10, "granted", 5),
            dict(op("s", "state", 0.20, 0.30, "shared", 6), count=1), rel("r", 0.50, 0.60)],
        "LOCK.STATE shows 3 holders of a semaphore: 1 holds, 1 acquire's answer lost": [
            sem("a", 0.00, 0.10, "granted", 1, 0, n=3), sem("b", 0.00, 0.10, "unknown", n=3),
            dict(op("s", "state", 0.20, 0.30, "limit", name="sem"), count=3),
            rel("a", 0.50, 0.60, name="sem")],
        "LOCK.STATE shows 3 holders of a semaphore while 2 hold": [
            sem("a", 0.00, 0.10, "granted", 1, 0, n=3), sem("b", 0.00, 0.10, "granted", 1, 1, n=3),
            dict(op("s", "state", 0.20, 0.30, "limit", name="sem"), count=3),
            rel("a", 0.50, 0.60, name="sem"), rel("b", 0.50, 0.60, name="sem")],
    }
    good = {
        "readers sharing a token, a writer above it, then readers above it": [
            rd("r", 0.00, 0.10, "granted", 5), rd("q", 0.05, 0.20, "granted", 5),
            op("w", "acquire", 0.15, 0.90, "granted", 6),   # waits for both readers
            op("s", "state", 0.30, 0.35, "free"),           # readers only: no exclusive
            rel("r", 0.40, 0.50), rel("q", 0.60, 0.70),
            rd("p", 0.65, 1.30, "granted", 7),               # waits for the writer
            rel("w", 1.00, 1.10), rel("p", 1.40, 1.50)],
        "a reader's acquire of unknown outcome keeps the phase: the next gets its token": [
            rd("r", 0.00, 0.10, "granted", 5), rd("p", 0.05, 0.15, "unknown"),
            rel("r", 0.20, 0.30),
            rd("q", 0.40, 0.50, "granted", 5), rel("q", 0.60, 0.70)],
        "reader phases one after the other, each its own token": [
            rd("r", 0.00, 0.10, "granted", 5), rel("r", 0.20, 0.30),
            rd("q", 0.40, 0.50, "granted", 6), rd("p", 0.45, 0.55, "granted", 6),
            rel("q", 0.60, 0.70), rel("p", 0.60, 0.70)],
        "PostgreSQL readers, tokens unknown then read, a writer after them": [
            rd("r", 0.00, 0.10, "granted", name="pg:d:1"),
            rd("q", 0.05, 0.15, "granted", name="pg:d:1"),
            op("q", "token", 0.20, 0.21, "ok", 9, name="pg:d:1"),
            op("w", "acquire", 0.25, 0.80, "granted", 10, name="pg:d:1"),
            op("r", "unlock", 0.40, 0.50, "ok", name="pg:d:1"),
            op("q", "commit", 0.60, 0.70, "ok", name="pg:d:1"),
            op("w", "unlock", 0.90, 1.00, "ok", name="pg:d:1")],
        # stress seed 931009: the lock stays reserved two poll intervals
        # from the release's write, which may land as late as its answer
        # (0.50): a try at 1.80 is refused, though 1.80 is past 0.40 + 2 x
        # 2/3 s
        "a reader's try refused within the reservation counted from the release's answer": [
            op("w", "acquire", 0.00, 0.10, "granted", 5),
            rd("r", 0.20, 1.20, "granted", 6, replica=1), rel("w", 0.40, 0.50),
            rel("r", 1.30, 1.35, replica=1), rd("q", 1.80, 1.85, "refused", wait=False)],
        "a reader's try refused while an exclusive waits": [
            rd("r", 0.00, 0.10, "granted", 5),
            op("w", "acquire", 0.15, 0.90, "granted", 6, replica=1),
            rd("q", 0.30, 0.35, "refused", wait=False),
            rel("r", 0.60, 0.70), rel("w", 1.00, 1.10, replica=1)],
        "a reader's try refused just after a waiting exclusive timed out": [
            rd("r", 0.00, 0.10, "granted", 5),
            op("w", "acquire", 0.15, 0.60, "timeout", replica=1),
            rd("q", 0.70, 0.75, "refused", wait=False), rel("r", 0.80, 0.90)],
        # stress_short (seed 750285): the release admitted a reader whose
        # gateway was then stopped; exclusive tries were refused until the
        # waiting writer dropped the admission a lease later
        "an exclusive try refused while a reader the last release admitted has not come": [
            op("w", "acquire", 0.00, 0.10, "granted", 5),
            rd("r", 0.05, 2.90, "granted", 6, replica=1), rel("w", 0.20, 0.30),
            op("t", "acquire", 2.00, 2.05, "refused", wait=False), rel("r", 3.10, 3.20)],
        "an exclusive try refused while readers hold": [
            rd("r", 0.00, 0.10, "granted", 5), rd("q", 0.05, 0.15, "granted", 5),
            op("w", "acquire", 0.20, 0.25, "refused", wait=False),
            rel("r", 0.30, 0.40), rel("q", 0.50, 0.60)],
        "a crashed reader taken over after its lease": [
            rd("r", 0.00, 0.10, "granted", 5),
            op("w", "acquire", 0.20, 2.30, "granted", 6, replica=1),
            rel("r", 2.50, 2.60, "error"), rel("w", 2.70, 2.80, replica=1)],
        "a semaphore of 2: two holders, a try refused, a third after a release": [
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.05, 0.15, "granted", 1, 1),
            sem("c", 0.20, 0.25, "refused", wait=False),
            sem("d", 0.22, 0.70, "granted", 2, 0),           # waits for a place
            rel("a", 0.40, 0.50, name="sem"), rel("b", 0.80, 0.90, name="sem"),
            sem("c", 0.85, 0.95, "granted", 2, 1),
            rel("d", 1.00, 1.10, name="sem"), rel("c", 1.00, 1.10, name="sem")],
        "LOCK.STATE of readers and of a semaphore: their count, the group token": [
            rd("r", 0.00, 0.10, "granted", 5), rd("q", 0.05, 0.15, "granted", 5),
            dict(op("s", "state", 0.12, 0.30, "shared", 5), count=2),  # q's grant in flight
            rel("r", 0.40, 0.50), dict(op("s", "state", 0.45, 0.60, "shared", 5), count=1),
            rel("q", 0.70, 0.80),
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.00, 0.10, "granted", 1, 1),
            dict(op("s", "state", 0.20, 0.30, "limit", name="sem"), count=2),
            rel("a", 0.50, 0.60, name="sem"), rel("b", 0.50, 0.60, name="sem")],
        "a semaphore of 2: a try refused, one holds, another acquire's answer lost": [
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.00, 0.10, "error"),
            sem("c", 0.20, 0.25, "refused", wait=False),
            dict(op("s", "state", 0.30, 0.40, "limit", name="sem"), count=2),
            rel("a", 0.50, 0.60, name="sem")],
        "a wait answered timed out whose write landed: held a moment for no session": [
            op("a", "acquire", 0.00, 0.10, "granted", 1), rel("a", 0.20, 0.30),
            op("w", "acquire", 0.05, 0.40, "timeout", replica=1),
            op("s", "state", 0.38, 0.42, "held", 2),
            op("b", "acquire", 0.39, 0.41, "refused", wait=False),
            op("b", "acquire", 0.60, 0.70, "granted", 3), rel("b", 0.80, 0.90)],
        "a slot's token skipping one after a semaphore acquire whose answer was lost": [
            sem("a", 0.00, 0.10, "granted", 7, 1), rel("a", 0.20, 0.30, name="sem"),
            sem("c", 0.25, 0.35, "unknown"),
            sem("b", 0.40, 0.50, "granted", 9, 1), rel("b", 0.60, 0.70, name="sem")],
        "a semaphore's try refused while another client's wait has its turn": [
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.00, 0.10, "granted", 1, 1),
            sem("w", 0.20, 2.00, "granted", 2, 1, replica=1),   # waits, its turn stands
            rel("b", 1.50, 1.60, name="sem"),
            sem("c", 1.65, 1.70, "refused", wait=False),         # one holds: the turn is w's
            rel("a", 2.10, 2.20, name="sem"), rel("w", 2.30, 2.40, name="sem")],
        "a semaphore holder's gateway drained: its slot given on at the drain": [
            sem("a", 0.00, 0.10, "granted", 1, 0),
            op("harness", "drain", 0.30, 0.30, "ok", name="*"),
            sem("c", 0.35, 0.40, "granted", 2, 0, replica=1),
            rel("a", 0.50, 0.51, "error", name="sem"), rel("c", 0.60, 0.70, name="sem")],
        "a semaphore holder crashed: its slot taken over after its lease": [
            sem("a", 0.00, 0.10, "granted", 1, 0), sem("b", 0.05, 0.15, "granted", 1, 1),
            sem("c", 0.20, 2.30, "granted", 2, 0),
            rel("a", 2.40, 2.50, "lost", name="sem"), rel("b", 2.40, 2.50, name="sem"),
            rel("c", 2.60, 2.70, name="sem")],
    }
    # the interval check alone (overlaps): conservative spans, no search
    ibad = {k: bad[k] for k in ("an exclusive grant while a reader holds",
                                "a reader granted while an exclusive holds",
                                "a reader granted while an exclusive holds (PostgreSQL: no "
                                "tokens)",
                                "readers holding at once with two tokens",
                                "three holders of a semaphore of 2",
                                "three holders of a semaphore of 2 (slots unknown)")}
    # CI's stress_short (seed 952953): a reader's try sent before its
    # gateway was cut off from DynamoDB was answered 5 s later, after a
    # whole lease, with the loss's WARNING; an exclusive holder had taken
    # the slot over meanwhile, and the reader's ROLLBACK answered ok
    good["PostgreSQL: a reader's grant answered after a whole lease, its loss told with it"] = [
        rd("p", 0.00, 3.00, "granted", wait=False, name="pg:d:1"),
        op("p", "lost", 0.00, 3.00, "lost", 5, name="pg:d:1"),
        op("q", "acquire", 0.50, 2.90, "granted", 6, name="pg:d:1"),
        op("p", "rollback", 3.05, 3.06, "ok", name="pg:d:1"),
        op("q", "unlock", 3.10, 3.20, "ok", name="pg:d:1")]
    igood = dict(good)
    igood["an overlap with a hold told of its loss"] = bad[
        "an exclusive granted during a reader's live lease (its loss reported later)"]
    return bad, good, ibad, igood


def selftest_cases():
    a1 = op("a", "acquire", 0.00, 0.10, "granted", 1)
    r1 = op("a", "release", 0.50, 0.60, "ok")
    bad = {
        "a double grant": [a1, op("b", "acquire", 0.20, 0.30, "granted", 2), r1,
                           op("b", "release", 0.70, 0.80, "ok")],
        "a refusal explained only by an acquire its gateway's cut kept from DynamoDB": [
            op("harness", "cut", 0.10, 1.00, "ok", name="*", replica=1),
            op("b", "acquire", 0.20, 0.30, "unknown", wait=False, replica=1),
            op("c", "acquire", 0.40, 0.45, "refused", wait=False)],
        "a refusal after an acknowledged release (the COMMIT bug)": [
            a1, op("a", "commit", 0.50, 0.51, "ok"),
            op("b", "acquire", 0.52, 0.55, "refused", wait=False)],
        "a token going down": [a1, r1, op("b", "acquire", 0.70, 0.80, "granted", 1),
                               op("b", "release", 0.90, 1.00, "ok")],
        "a grant during a live lease, loss reported": [
            a1, op("b", "acquire", 0.20, 1.50, "granted", 2),
            op("a", "release", 2.50, 2.60, "lost"), op("b", "release", 2.70, 2.80, "ok")],
        "a grant during a live lease, never released": [
            a1, op("b", "acquire", 0.20, 1.00, "granted", 2)],
        "an acquire answered -TRYAGAIN: its token seen, then a lower one granted": [
            op("a", "acquire", 0.00, 0.10, "unknown"),
            op("s", "state", 0.20, 0.30, "held", 5),
            op("b", "acquire", 0.40, 2.50, "granted", 4),
            op("b", "release", 2.60, 2.70, "ok")],
        "LOCK.STATE free while held": [
            a1, op("s", "state", 0.20, 0.30, "free"), r1],
        "a renew acknowledged after a takeover": [
            a1, op("b", "acquire", 0.20, 2.50, "granted", 2),
            op("a", "renew", 2.60, 2.70, "ok"), op("a", "release", 2.80, 2.90, "lost")],
        # a renewal answered 1 writes the item again: a takeover waits a
        # lease from it, not from the acquire (2.0 .. 3.5 here)
        "a grant after the acquire's lease but during the renewed one": [
            a1, op("a", "renew", 1.50, 1.60, "ok"),
            op("b", "acquire", 0.20, 2.50, "granted", 2),
            op("a", "release", 3.00, 3.10, "lost"), op("b", "release", 3.20, 3.30, "ok")],
        # a renewal answered -TRYAGAIN (its outcome unknown), then a
        # renewal answered 1: the lease runs from the second
        "a grant during a lease renewed with 1 after a renewal answered -TRYAGAIN": [
            a1, op("a", "renew", 1.00, 1.10, "unknown"), op("a", "renew", 1.50, 1.60, "ok"),
            op("b", "acquire", 0.20, 2.50, "granted", 2),
            op("a", "release", 3.00, 3.10, "lost"), op("b", "release", 3.20, 3.30, "ok")],
        # a release not written may have freed the lock, but not twice
        "a release not written: seen free, then its token held again": [
            a1, op("a", "release", 0.50, 0.60, "unwritten"),
            op("s", "state", 0.70, 0.80, "free"),
            op("s", "state", 0.90, 1.00, "held", 1)],
        "a release not written: a grant before it was sent": [
            a1, op("b", "acquire", 0.20, 0.30, "granted", 2),
            op("a", "release", 0.50, 0.60, "unwritten"), op("b", "release", 0.70, 0.80, "ok")],
    }
    good = {
        "a refusal explained by an acquire sent before its gateway's cut, answered in it": [
            op("b", "acquire", 0.05, 0.30, "unknown", wait=False, replica=1),
            op("harness", "cut", 0.10, 1.00, "ok", name="*", replica=1),
            op("c", "acquire", 0.40, 0.45, "refused", wait=False)],
        "overlapping ops": [
            op("a", "acquire", 0.00, 0.30, "granted", 1),
            op("b", "acquire", 0.10, 0.60, "granted", 2),    # waits for a's release
            op("c", "acquire", 0.20, 0.25, "refused", wait=False),
            op("a", "release", 0.40, 0.55, "ok"),            # b granted inside it
            op("d", "acquire", 0.50, 0.56, "refused", wait=False),  # before a's release or after b's grant
            op("s", "state", 0.45, 0.70, "held", 2),
            op("b", "release", 0.80, 0.90, "ok"),
            op("c", "acquire", 0.85, 0.95, "granted", 3),    # b released inside it
            op("c", "release", 1.00, 1.10, "ok")],
        "loss reported then a takeover": [
            op("a", "acquire", 0.00, 0.10, "granted", 1),
            op("b", "acquire", 0.20, 2.30, "granted", 2),    # after a's lease (2 s)
            op("a", "release", 2.50, 2.60, "lost"),
            op("b", "release", 2.70, 2.80, "ok")],
        "lease expiry of a holder never released": [
            op("a", "acquire", 0.00, 0.10, "granted", 1),
            op("b", "acquire", 0.50, 0.60, "refused", wait=False),
            op("b", "acquire", 1.00, 2.10, "granted", 2),
            op("b", "release", 2.20, 2.30, "ok")],
        # a renewal answered -TRYAGAIN may have written, or not: a takeover
        # a lease after the acquire is valid when it did not (stress,
        # --heartbeat replica, seed 1: a Lua script's extend answered
        # -TRYAGAIN as the holder's gateway was cut off from DynamoDB, the
        # name taken elsewhere a lease after the take, on the take's rvn)
        "a grant a lease after the acquire, a renewal answered -TRYAGAIN between": [
            a1, op("a", "renew", 1.50, 1.60, "unknown"),
            op("b", "acquire", 0.20, 2.50, "granted", 2),
            op("a", "release", 3.00, 3.10, "lost"), op("b", "release", 3.20, 3.30, "ok")],
        "a lost connection: released at close": [
            op("a", "acquire", 0.00, 0.10, "granted", 1),
            op("a", "release", 0.20, 0.40, "error"),
            op("b", "acquire", 0.30, 0.50, "granted", 2),
            op("b", "release", 0.60, 0.70, "ok")],
        "an acquire whose answer was lost": [
            op("a", "acquire", 0.00, 0.10, "error"),
            op("b", "acquire", 0.05, 0.08, "refused", wait=False),
            op("b", "acquire", 0.20, 0.30, "granted", 3),
            op("b", "release", 0.40, 0.50, "ok")],
        # stress_short's 2nd run: pg2's unlock during the DynamoDB cut-off
        # answered t with WARNING 58000, then LOCK.STATE showed its token on
        # two other replicas, then the next grant after its lease
        "a release not written: its token still shown after it": [
            op("p2", "acquire", 0.00, 0.10, "granted", 58, name="pg:s:1"),
            op("p1", "acquire", 0.05, 2.40, "granted", 59, name="pg:s:1"),
            op("p2", "unlock", 0.40, 0.45, "unwritten", name="pg:s:1"),
            op("o1", "state", 1.00, 1.01, "held", 58, name="pg:s:1"),
            op("o0", "state", 1.70, 1.71, "held", 58, name="pg:s:1"),
            op("p1", "unlock", 2.50, 2.60, "ok", name="pg:s:1")],
        # the write of a release that failed may have landed (sent, then the
        # connection cut): another replica may be granted at once
        "a release not written whose write landed: a grant at once": [
            op("a", "acquire", 0.00, 0.10, "granted", 1),
            op("a", "release", 0.50, 0.60, "unwritten"),
            op("b", "acquire", 0.55, 0.65, "granted", 2, wait=False, replica=1),
            op("b", "release", 0.70, 0.80, "ok", replica=1)],
        # CI's stress_short (seed 979750): c7's acquire sent just before its
        # gateway was killed wrote token 54 and was never answered; the item
        # kept it until a takeover a lease later, refusing c7's own try from
        # a new connection meanwhile
        "an acquire whose answer was lost refuses the client's next session": [
            op("c", "acquire", 0.00, 0.10, "granted", 53),
            op("c", "release", 0.10, 0.20, "ok"),
            op("a", "acquire", 0.30, 0.31, "error"),
            op("s", "state", 0.80, 0.81, "held", 54),
            op("a", "acquire", 1.40, 1.41, "refused", wait=False),
            op("s", "state", 2.20, 2.21, "held", 54),
            op("b", "acquire", 1.20, 2.50, "granted", 55),
            op("b", "release", 2.60, 2.70, "ok")],
        # a gateway stopped while its acquire's write was in flight answered
        # -TRYAGAIN on waking (the write timed out): the write had landed
        "an acquire answered -TRYAGAIN whose write landed": [
            op("c", "acquire", 0.00, 0.10, "granted", 53),
            op("c", "release", 0.10, 0.20, "ok"),
            op("a", "acquire", 0.25, 3.50, "unknown"),
            op("s", "state", 0.80, 0.81, "held", 54),
            op("s", "state", 2.20, 2.21, "held", 54),
            op("b", "acquire", 1.20, 2.50, "granted", 55),
            op("b", "release", 2.60, 2.70, "ok")],
        "PostgreSQL: a loss told, another holder, then COMMIT answered (it releases nothing)": [
            rd("p", 0.00, 0.10, "granted", name="pg:d:1"),
            op("p", "lost", 0.20, 3.50, "lost", 5, name="pg:d:1"),
            op("q", "acquire", 1.00, 2.50, "granted", 6, name="pg:d:1"),
            op("q", "unlock", 2.60, 2.70, "ok", name="pg:d:1"),
            op("p", "commit", 3.50, 3.60, "ok", name="pg:d:1")],
        "PostgreSQL: unknown tokens, COMMIT, a refusal before it": [
            op("p", "acquire", 0.00, 0.10, "granted", None, name="pg:d:1"),
            op("q", "acquire", 0.20, 0.30, "refused", wait=False, name="pg:d:1"),
            op("p", "commit", 0.25, 0.40, "ok", name="pg:d:1"),
            op("q", "acquire", 0.45, 0.50, "granted", None, wait=False, name="pg:d:1"),
            op("q", "unlock", 0.60, 0.70, "ok", name="pg:d:1")],
    }
    return bad, good


def selftest():
    bad, good = selftest_cases()
    sbad, sgood, ibad, igood = shared_cases()
    bad.update(sbad)
    good.update(sgood)
    failed = 0
    for what, hist in ibad.items():
        found = overlaps(build(hist, CLOCK_TOL)[1])
        if not found:
            failed += 1
            print(f"not ok lincheck selftest: the interval check: {what}: not flagged")
        else:
            print(f"ok lincheck selftest: the interval check: {what} flagged ({found[0][0]})")
    for what, hist in igood.items():
        found = overlaps(build(hist, CLOCK_TOL)[1])
        if found:
            failed += 1
            print(f"not ok lincheck selftest: the interval check: {what}: flagged "
                  f"({found[0][0]})")
    if not any(overlaps(build(h, CLOCK_TOL)[1]) for h in igood.values()):
        print(f"ok lincheck selftest: the interval check passes {len(igood)} valid histories")
    for what, hist in bad.items():
        lines = []
        v, inc = report(hist, out=lines.append, intervals=False)  # the search alone
        if v == 0 or inc:
            failed += 1
            print(f"not ok lincheck selftest: {what}: not flagged")
            for line in lines:
                print("# " + line)
        else:
            first = next(x for x in lines if x.startswith("not ok"))
            print(f"ok lincheck selftest: {what} flagged ({first.split(': ', 2)[-1]})")
    for what, hist in good.items():
        lines = []
        v, inc = report(hist, out=lines.append)
        if v or inc:
            failed += 1
            print(f"not ok lincheck selftest: {what}: flagged")
            for line in lines:
                print("# " + line)
        else:
            print(f"ok lincheck selftest: {what} passes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
