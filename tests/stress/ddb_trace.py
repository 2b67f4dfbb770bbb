#!/usr/bin/python3
"""What the gateways of a stress run asked DynamoDB about one item, and
what came back, on the history's clock: the tool for finding why
tests/stress/lincheck.py flagged a history.

    STRESS_TRACE=1 STRESS_SEED=N ... tests/stress/stress.py     (or
        STRESS_TRACE=1 STRESS_SEED=N IT_KEEP=1 make test IT_ONLY=stress_short.sh)
    /usr/bin/python3 tests/stress/ddb_trace.py WORK KEY [FROM [TO]]
    /usr/bin/python3 tests/stress/ddb_trace.py --selftest

WORK is the run's LG_WORK (the kept /tmp/leasegate-it.* for make test:
its first run's files, its session run's in WORK/session): the proxies'
traces WORK/stress-ddbI.jsonl (tests/integration/ddb_proxy.py's
DDB_PROXY_LOG) and the harness's start WORK/stress-t0. KEY is an item's
key, such as LOCK#stress-2, LOCK#pg:stress:2 or SLOT#3#stress-2: the
requests whose body names it (as a whole string: LOCK#stress-1 is not
LOCK#stress-10); FROM and TO bound the requests' sends, in the history's
seconds. Each request is printed as

    SENT -> ANSWERED gwI Operation  (the request's body, shortened)
        the answer: its error type, or the item's attributes that tell
        who holds it (owner, rvn, fence, scount, xwait, radmit, ...)

A connection's answers are matched to its requests in order (the gateway
sends one request at a time on a connection). Standard library only.
"""
import collections
import glob
import json
import os
import re
import sys

# The attributes of a lock or slot item an answer is summed up by.
SHOWN = ("owner", "rvn", "fence", "leaseMs", "scount", "xwait", "xwaitRvn", "radmit",
         "rwaiters", "session", "holder")


def messages(chunks):
    """The HTTP messages in one direction of one connection's chunks
    [(t, bytes as str)], each (t of its first byte, head, body); a message
    cut off at the end is left out."""
    out, buf, start = [], "", None
    for t, data in chunks:
        if not buf:
            start = t
        buf += data
        while True:
            end = buf.find("\r\n\r\n")
            if end < 0:
                break
            head = buf[:end]
            m = re.search(r"(?im)^content-length:\s*(\d+)", head)
            size = int(m.group(1)) if m else 0
            if len(buf) < end + 4 + size:
                break
            out.append((start, head, buf[end + 4:end + 4 + size]))
            buf = buf[end + 4 + size:]
            start = t
    return out


def exchanges(lines, t0):
    """Requests and their answers from a proxy's trace lines: (sent,
    answered or None, operation, request body, answer body), times less
    t0, in the order sent."""
    chunks = collections.defaultdict(list)
    for e in lines:
        chunks[(e["c"], e["d"])].append((e["t"] - t0, e["b"]))
    out = []
    for (conn, d), cs in chunks.items():
        if d != ">":
            continue
        answers = messages(chunks.get((conn, "<"), []))
        for i, (t, head, body) in enumerate(messages(cs)):
            m = re.search(r"(?im)^x-amz-target:\s*\S+\.(\w+)", head)
            a = answers[i] if i < len(answers) else None
            out.append((t, a[0] if a else None, m.group(1) if m else "?", body,
                        a[2] if a else ""))
    return sorted(out, key=lambda x: x[0])


def items_in(answer):
    """The items an answer shows (Item, Attributes, a BatchGetItem's
    Responses, a refused condition's Item), each as a dict."""
    try:
        doc = json.loads(answer)
    except ValueError:
        return []
    found = [doc[k] for k in ("Item", "Attributes") if isinstance(doc.get(k), dict)]
    for items in (doc.get("Responses") or {}).values():
        if isinstance(items, list):
            found += [x for x in items if isinstance(x, dict)]
    return found


def value(v):
    """A DynamoDB attribute value ({"S": ...}, {"SS": [...]}), short."""
    if not isinstance(v, dict) or len(v) != 1:
        return str(v)[:12]
    kind, x = next(iter(v.items()))
    if kind in ("SS", "NS"):
        return "{" + ",".join(s[:8] for s in x) + "}"
    return str(x)[:12]


def summary(answer, key):
    """What the answer says of the item keyed key: its error type, and the
    attributes of SHOWN it has ("absent" when it came back without it)."""
    err = ""
    try:
        doc = json.loads(answer) if answer else {}
    except ValueError:
        return "(not JSON)"
    if "__type" in doc:
        err = doc["__type"].rsplit("#", 1)[-1] + " "
    for it in items_in(answer):
        pk = it.get("pk") or it.get("PK")
        if isinstance(pk, dict) and key not in pk.values():
            continue  # another item of the answer (a slot, a session)
        return err + " ".join(f"{k}={value(it[k])}" for k in SHOWN if k in it)
    if items_in(answer) or "Responses" in doc:
        return err + "absent"
    return err or ("ok" if answer else "")


def trace(work, key, lo, hi):
    """The requests whose body holds key, sent in [lo, hi]: (sent,
    gateway, operation, body, answer, answered)."""
    with open(os.path.join(work, "stress-t0")) as f:
        t0 = float(f.read())
    named = json.dumps(key)  # the key as a whole JSON string
    for path in sorted(glob.glob(os.path.join(work, "stress-ddb*.jsonl"))):
        gw = re.search(r"stress-ddb(\d+)\.jsonl$", path).group(1)
        with open(path) as f:
            lines = [json.loads(x) for x in f if x.strip()]
        for sent, answered, op, body, answer in exchanges(lines, t0):
            if named in body and lo <= sent <= hi:
                yield sent, gw, op, body, answer, answered


def report(work, key, lo, hi, out=print):
    """Prints trace()'s requests in the order sent; how many."""
    rows = sorted(trace(work, key, lo, hi), key=lambda r: r[0])
    for sent, gw, op, body, answer, answered in rows:
        when = f"{answered:.4f}" if answered is not None else "(no answer)"
        out(f"{sent:.4f} -> {when} gw{gw} {op}  {body[:160]}")
        out(f"    {summary(answer, key)}")
    return len(rows)


def selftest():
    """A crafted trace: a request cut into two chunks, a second request on
    the same connection, a refused condition, a request never answered,
    two requests and their answers each in one chunk; each must come
    out, with its own answer, and a request of another key (LOCK#xy) not."""
    import tempfile
    req = ('POST / HTTP/1.1\r\nX-Amz-Target: DynamoDB_20120810.UpdateItem\r\n'
           'Content-Length: {n}\r\n\r\n{b}')
    ans = 'HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n{b}'
    b1 = '{"Key": {"pk": {"S": "LOCK#x"}}}'
    a1 = '{"Attributes": {"pk": {"S": "LOCK#x"}, "owner": {"S": "o1"}, "fence": {"N": "7"}}}'
    a2 = ('{"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",'
          ' "Item": {"pk": {"S": "LOCK#x"}, "owner": {"S": "o1"}}}')
    r1 = req.format(n=len(b1), b=b1)
    lines = [{"t": 100.0, "c": 1, "d": ">", "b": r1[:20]},
             {"t": 100.001, "c": 1, "d": ">", "b": r1[20:]},
             {"t": 100.010, "c": 1, "d": "<", "b": ans.format(n=len(a1), b=a1)},
             {"t": 100.020, "c": 1, "d": ">", "b": r1},
             {"t": 100.030, "c": 1, "d": "<", "b": ans.format(n=len(a2), b=a2)},
             {"t": 100.040, "c": 2, "d": ">", "b": r1},  # never answered
             {"t": 100.045, "c": 4, "d": ">", "b": r1.replace("LOCK#x", "LOCK#xy")},
             {"t": 100.050, "c": 3, "d": ">", "b": r1 + r1},
             {"t": 100.060, "c": 3, "d": "<",
              "b": ans.format(n=len(a2), b=a2) + ans.format(n=len(a1), b=a1)}]
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "stress-t0"), "w") as f:
            f.write("99.5\n")
        with open(os.path.join(d, "stress-ddb0.jsonl"), "w") as f:
            f.writelines(json.dumps(x) + "\n" for x in lines)
        got = []
        n = report(d, "LOCK#x", 0, 10, out=got.append)
    want = ["0.5000 -> 0.5100 gw0 UpdateItem", "    owner=o1 fence=7",
            "0.5200 -> 0.5300 gw0 UpdateItem",
            "    ConditionalCheckFailedException owner=o1",
            "0.5400 -> (no answer) gw0 UpdateItem", "    ",
            "0.5500 -> 0.5600 gw0 UpdateItem",
            "    ConditionalCheckFailedException owner=o1",
            "0.5500 -> 0.5600 gw0 UpdateItem", "    owner=o1 fence=7"]
    ok = n == 5 and len(got) == len(want) and all(g.startswith(w) for g, w in zip(got, want))
    print(f"{'ok' if ok else 'not ok'} ddb_trace selftest: 5 requests, their answers matched")
    if not ok:
        print("\n".join("# " + g for g in got))
    return 0 if ok else 1


def main(argv):
    if argv == ["--selftest"]:
        return selftest()
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0] + "\n" + __doc__.split("\n\n")[1])
        return 2
    lo = float(argv[2]) if len(argv) > 2 else float("-inf")
    hi = float(argv[3]) if len(argv) > 3 else float("inf")
    if report(argv[0], argv[1], lo, hi) == 0:
        print(f"# no request holds {argv[1]} (STRESS_TRACE=1 records them)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
