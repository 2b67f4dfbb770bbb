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
            lease goes on, its write may have landed);
            state: held | free | error
            fenced: accepted | refused;  lost: lost
  token     the fencing token when one is known (acquire granted, state
            held, fenced), else null
  lease_ms  (acquire) the lease asked for;  wait  (acquire) false for a try
"error" is an answer that never came (connection lost, timeout): the
operation may or may not have taken effect; so may an "unknown" acquire.

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
import collections
import json
import sys
import time

INF = float("inf")
RELEASES = ("release", "unlock", "commit", "rollback")


class Hold:
    """One grant (or a grant that may have happened) and what became of it."""

    def __init__(self, hid, client, name, token, inv, lease_s):
        self.hid, self.client, self.name, self.token = hid, client, name, token
        self.inv, self.lease_s = inv, lease_s
        self.written = inv      # the invoke of its last write (acquire, renew 1)
        self.fate = "open"      # open | released | lost | unwritten | error
        self.end_earliest = INF  # when a loss may end it (INF: it cannot)

    def set_fate(self, fate, at, tol):
        if self.fate != "open":
            return
        self.fate = fate
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
        return f"{self.client}'s hold of token {tok} ({fate}{end})"


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
    # a loss notice read with an answer counts before that answer
    for rec in sorted(records, key=lambda r: (r["invoke"], r["op"] != "lost", r["complete"])):
        key = (rec["client"], rec["name"])
        op, res, name = rec["op"], rec["result"], rec["name"]
        h = open_hold.get(key)
        if op == "acquire":
            if h is not None:  # a new acquire ends what the client knew of the last
                h.set_fate("error", rec["invoke"], tol)
                open_hold.pop(key)
            if res in ("granted", "error", "unknown"):
                h = Hold(len(holds), rec["client"], name, rec.get("token"), rec["invoke"],
                         rec.get("lease_ms", 0) / 1000)
                holds[h.hid] = h
                if res == "granted":
                    open_hold[key] = h
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
            if res == "ok":
                h.set_fate("released", rec["invoke"], tol)
                per_name[name].append(MOp("release", rec, h))
            else:
                h.set_fate(res if res in ("error", "unwritten") else "lost", rec["invoke"], tol)
                if res in ("error", "unwritten"):  # it may have released
                    per_name[name].append(MOp("release", rec, h, optional=True))
        elif op == "renew" and h is not None:
            if res in ("ok", "unknown"):  # unknown: it may have written; the lease goes on
                h.written = max(h.written, rec["invoke"])
                if res == "ok":
                    per_name[name].append(MOp("renew", rec, h))
            else:
                h.set_fate("error" if res == "error" else "lost", rec["invoke"], tol)
        elif op == "adopt" and h is not None and res == "ok":
            h.written = max(h.written, rec["invoke"])  # the adopt writes the item
        elif op == "token" and h is not None and h.token is None:
            h.token = h.grant.token = rec.get("token")  # read after the grant (PostgreSQL)
        elif op == "lost" and h is not None:
            h.set_fate("lost", rec["invoke"], tol)
        elif op == "state" and res in ("held", "free"):
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


def reserved(resv, p, replica, holds, waits, tol):
    """The lock released at resv[1] may be reserved at p for a waiter of
    another replica than replica (None: any): one whose wait was in flight
    at the release, for two poll intervals (a third of the lease, at most
    10 s) after it."""
    if resv is None:
        return False
    h, r = holds[resv[0]], resv[1]
    if p > r + 2 * min(h.lease_s / 3, 10.0) + tol:
        return False
    return any(w[1] < r < w[2] and w[0] != replica for w in waits)


def apply(m, st, p, holds, waits, tol):
    """The state after m at p, or the reason it cannot go then."""
    holder, last, resv = st
    cur = holds[holder] if holder is not None else None
    if m.kind == "grant":
        if cur is not None:
            return None, f"a grant while {cur.label()} holds the lock"
        if m.token is not None and m.token <= last:
            return None, f"token {m.token} after token {last}: tokens must rise"
        return (m.hold.hid, last if m.token is None else m.token, None), None
    if m.kind == "refuse":
        if cur is None:
            if reserved(resv, p, m.rec.get("replica"), holds, waits, tol):
                return st, None
            return None, ("a refusal while nobody holds the lock (and no waiter of another "
                          "replica may have it reserved)")
        return st, None
    if m.kind in ("release", "renew"):
        if cur is None or cur.hid != m.hold.hid:
            who = cur.label() if cur else "nobody"
            return None, f"an acknowledged {m.rec['op']} while {who} holds the lock"
        return (None, last, (holder, p)) if m.kind == "release" else st, None
    if m.kind == "held":
        if cur is None:
            tok = holds[resv[0]].token if resv else None
            if reserved(resv, p, None, holds, waits, tol) and tok in (None, m.token):
                return st, None  # a reservation keeps the released token on the item
            return None, "LOCK.STATE held while nobody holds the lock"
        if cur.token is not None and m.token is not None and cur.token != m.token:
            return None, f"LOCK.STATE token {m.token} while {cur.label()} holds the lock"
        if m.token is not None and m.token > last:  # a grant of an unknown token
            return (holder, m.token, resv), None
        return st, None
    if cur is not None:  # free
        return None, f"LOCK.STATE free while {cur.label()} holds the lock"
    return st, None


class Bound(Exception):
    pass


def search(mops, holds, init_holders, bound, waits=(), tol=0.02):
    """True when mops linearize from one of init_holders; Bound when the
    search gave up. Returns (ok, states, deepest dead end's reasons)."""
    n = len(mops)
    need = 0
    for i, m in enumerate(mops):
        if not m.optional:
            need |= 1 << i
    memo = {}
    states = 0
    deepest = (-1, [])
    stack = [(0, (h, -1, None), -INF) for h in init_holders]
    while stack:
        mask, st, t = stack.pop()
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
            st2, reason = apply(m, st, p, holds, waits, tol)
            if st2 is None:
                why.append((m, reason))
                continue
            nxt.append((m.resp, (mask | 1 << i, st2, p)))
        if holder is not None and holds[holder].end_earliest < INF:
            p = max(t, holds[holder].end_earliest)
            if p <= minresp:
                nxt.append((INF, (mask, (None, st[1], None), p)))
            else:
                why.append((None, f"{holds[holder].label()} cannot have ended before "
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
            if m.kind in ("refuse", "renew", "held", "free"):
                continue  # reads in flight change nothing
            m2 = MOp(m.kind, m.rec, m.hold, m.token, optional=True)
            out.append(m2)
        else:
            out.append(m)
    if t0 == -INF:
        return out, [None]
    inside = {m.hold.hid for m in out if m.kind == "grant" and m.inv >= t0}
    starts = [None] + [h.hid for h in holds.values() if h.hid not in inside and h.inv < t0]
    return out, starts


def check_window(mops, ctx, t0, t1, bound):
    """ctx: (holds, the name's waits as (replica, invoke, complete), tol)."""
    holds, waits, tol = ctx
    ops, starts = window(mops, holds, t0, t1)
    ok, states, deepest = search(ops, holds, starts, bound, waits, tol)
    return ok, states, deepest, ops


def smallest_window(mops, ctx, bound):
    """(t0, t1): the end of the shortest failing prefix, then the latest
    start from which that prefix still fails."""
    ends = sorted({m.resp for m in mops if m.resp < INF})
    lo, hi = 0, len(ends) - 1  # ends[hi] fails (the whole history does)
    while lo < hi:
        mid = (lo + hi) // 2
        if check_window(mops, ctx, -INF, ends[mid], bound)[0]:
            lo = mid + 1
        else:
            hi = mid
    t1 = ends[hi]
    starts = [-INF] + [t for t in ends if t <= t1]
    lo, hi = 0, len(starts) - 1  # starts[lo] fails; find the last that fails
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if check_window(mops, ctx, starts[mid], t1, bound)[0]:
            hi = mid - 1
        else:
            lo = mid
    return starts[lo], t1


def check_name(name, mops, ctx, bound, max_violations, out):
    """The violations of one name: a list of (t0, t1, culprit, reason, ops)."""
    found = []
    states_total = 0
    mops = list(mops)
    while len(found) < max_violations:
        ok, states, _, _ = check_window(mops, ctx, -INF, INF, bound)
        states_total += states
        if ok:
            break
        t0, t1 = smallest_window(mops, ctx, bound)
        _, _, deepest, ops = check_window(mops, ctx, t0, t1, bound)
        culprit = next(m for m in mops if m.resp == t1)
        reasons = [r for m, r in deepest[1] if m is culprit] or [r for _, r in deepest[1]]
        found.append((t0, t1, culprit, reasons[0] if reasons else "?", ops))
        # and look for the next one, without it (and the rest of its hold)
        mops = [m for m in mops if m is not culprit and
                (culprit.hold is None or m.hold is not culprit.hold)]
    return found, states_total


def report(records, tol=0.02, bound=2_000_000, max_violations=50, out=print):
    """Checks a history; returns (violations, inconclusive names)."""
    per_name, holds, lint = build(records, tol)
    waits = collections.defaultdict(list)
    for r in records:
        if r["op"] == "acquire" and r.get("wait") is not False:
            waits[r["name"]].append((r.get("replica"), r["invoke"],
                                     INF if r["result"] in ("error", "unknown")
                                     else r["complete"]))
    violations, inconclusive = 0, []
    for what, recs in lint:
        violations += 1
        out(f"not ok lincheck: {what}")
        for r in recs:
            out(f"#   {fmt_op(r)}")
    for name in sorted(per_name):
        try:
            ctx = (holds, waits.get(name, []), tol)
            found, states = check_name(name, per_name[name], ctx, bound, max_violations, out)
        except Bound:
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
    ap.add_argument("--clock-tol-ms", type=float, default=50)
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
       replica=0):
    return {"client": client, "replica": replica, "op": op_, "name": name, "invoke": inv,
            "complete": comp, "result": result, "token": token, "lease_ms": lease_ms,
            "wait": wait}


def selftest_cases():
    a1 = op("a", "acquire", 0.00, 0.10, "granted", 1)
    r1 = op("a", "release", 0.50, 0.60, "ok")
    bad = {
        "a double grant": [a1, op("b", "acquire", 0.20, 0.30, "granted", 2), r1,
                           op("b", "release", 0.70, 0.80, "ok")],
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
        # a renewal answered -TRYAGAIN may have written: the lease goes on
        # from it (and the client still holds it, so releases it later)
        "a grant during a lease a renewal answered -TRYAGAIN may have renewed": [
            a1, op("a", "renew", 1.50, 1.60, "unknown"),
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
    failed = 0
    for what, hist in bad.items():
        lines = []
        v, inc = report(hist, out=lines.append)
        if v == 0 or inc:
            failed += 1
            print(f"not ok lincheck selftest: {what}: not flagged")
            for line in lines:
                print("# " + line)
        else:
            print(f"ok lincheck selftest: {what} flagged ({lines[0].split(': ', 2)[-1]})")
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
