#!/bin/sh
# doc_links.sh: every relative link of the documentation resolves.
# Reads README.md, CHANGELOG.md and every docs/**/*.md; for each Markdown
# link or image ([text](target), [text]: target) outside code blocks and
# code spans whose target has no scheme (http:, mailto: ...), the file or
# directory it names exists, and its #anchor is a heading of that page (or
# of the same page for a bare #anchor), by GitHub's rules: the heading's
# text lower-cased, punctuation dropped (letters, digits, spaces, '-' and
# '_' stay), each space a '-', and a repeated slug given -1, -2...; an
# <a name="..."> or id="..." counts too. A broken link fails, named with
# its file and line: "not ok N - README.md:12: docs/x.md#y: no heading
# 'y' in docs/x.md".
# First, --selftest: a scratch tree with planted broken links (a missing
# file, a missing anchor, a bare anchor, a link into a code span that must
# be ignored) must fail, naming each, and a tree of good links pass.
# "ok N - what" / "not ok N - what"; exits 1 on any failure.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/lg-doclinks.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/check.py" <<'PY'
import os, re, sys

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*(?:name|id)=\"([^\"]+)\"", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def slug(text):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def lines_outside_code(path):
    """(line number, text) of the lines outside fenced code blocks, with
    code spans blanked."""
    fence = None
    for no, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and line.strip().startswith(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield no, re.sub(r"(`+)(.+?)\1", lambda s: " " * len(s.group(0)), line)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, found = {}, set()
        for _, line in lines_outside_code(path):
            for a in HTML_ANCHOR.findall(line):
                found.add(a)
        # headings keep their code spans' text: read them raw
        fence = None
        for line in open(path, encoding="utf-8").read().split("\n"):
            m = FENCE.match(line)
            if fence:
                if m and line.strip().startswith(fence):
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        _anchors[path] = found
    return _anchors[path]


def paragraphs(path):
    """(line number, text) of each run of non-blank lines outside code,
    joined with spaces, so that a link whose text wraps onto the next line
    is matched; the number is the line where each link starts
    (link_line)."""
    run = []
    for no, line in lines_outside_code(path):
        if line.strip() == "" or HEADING.match(line):
            if run:
                yield run
            run = []
            if line.strip():
                yield [(no, line)]
            continue
        run.append((no, line))
    if run:
        yield run


def link_targets(run):
    """(line number, target) of the links and reference definitions of a
    paragraph."""
    text, starts = "", []
    for no, line in run:
        starts.append((len(text), no))
        text += line + " "
    for m in LINK.finditer(text):
        no = [n for at, n in starts if at <= m.start()][-1]
        yield no, m.group(1)
    for no, line in run:
        r = REFDEF.match(line)
        if r:
            yield no, r.group(1)


def check(top, files):
    broken = []
    for f in files:
        path = os.path.join(top, f)
        for no, t in (x for run in paragraphs(path) for x in link_targets(run)):
            if SCHEME.match(t) or t.startswith("//"):
                continue
            file_part, _, anchor = t.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            shown = os.path.relpath(dest, top)
            if not os.path.exists(dest):
                broken.append(f"{f}:{no}: {t}: no file {shown}")
            elif anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor not in anchors(dest):
                    broken.append(f"{f}:{no}: {t}: no heading '{anchor}' in {shown}")
    return broken


def doc_files(top):
    files = [f for f in ("README.md", "CHANGELOG.md") if os.path.isfile(os.path.join(top, f))]
    for d, _, names in os.walk(os.path.join(top, "docs")):
        files += sorted(os.path.relpath(os.path.join(d, n), top) for n in names if n.endswith(".md"))
    return files


if __name__ == "__main__":
    top = sys.argv[1]
    files = doc_files(top)
    broken = check(top, files)
    print(f"# {len(files)} pages")
    for b in broken:
        print(b)
    sys.exit(1 if broken else 0)
PY

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

# --selftest: planted links
st=$work/selftest
mkdir -p "$st/docs/guides"
cat >"$st/README.md" <<'MD'
# Demo

[good file](docs/a.md), [good anchor](docs/a.md#the-lock-command-leasegate-lock),
[second of two](docs/a.md#usage-1), [a dir](docs/guides), [web](https://example.com/x.md#no),
[own](#demo), [html anchor](docs/a.md#kept)
`[in a code span](docs/nope.md)`

```sh
[in a block](docs/nope.md)
```
MD
cat >"$st/docs/a.md" <<'MD'
# The lock command: `leasegate lock`

## Usage
## Usage
<a name="kept"></a>
[back](../README.md#demo)
MD
if python3 "$work/check.py" "$st" >"$work/st-good.out" 2>&1; then
	ok "selftest: good links pass (code spans and blocks ignored, dup headings -1, HTML anchors)"
else
	bad "selftest: good links pass"; sed 's/^/# /' "$work/st-good.out"
fi
cat >>"$st/docs/a.md" <<'MD'
[gone](guides/missing.md) and [bad anchor](../README.md#nope)

a link whose text [wraps onto
the next line](../README.md#wrapped) is read too
MD
printf '[bare](#usage-2)\n' >>"$st/docs/guides/b.md"
python3 "$work/check.py" "$st" >"$work/st-bad.out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "^docs/a.md:7: guides/missing.md: no file docs/guides/missing.md$" "$work/st-bad.out" &&
	grep -q "^docs/a.md:7: ../README.md#nope: no heading 'nope' in README.md$" "$work/st-bad.out" &&
	grep -q "^docs/guides/b.md:1: #usage-2: no heading 'usage-2' in docs/guides/b.md$" "$work/st-bad.out" &&
	grep -q "^docs/a.md:9: ../README.md#wrapped: no heading 'wrapped' in README.md$" "$work/st-bad.out" &&
	[ "$(grep -vc '^#' "$work/st-bad.out")" = 4 ]; then
	ok "selftest: a missing file, a missing anchor, a bare anchor and a link wrapped over two lines fail, each named"
else
	bad "selftest: planted broken links are found (rc $rc)"; sed 's/^/# /' "$work/st-bad.out"
fi

# the tree's documentation
if python3 "$work/check.py" "$root" >"$work/docs.out" 2>&1; then
	ok "every relative link of README.md, CHANGELOG.md and docs/ resolves ($(sed -n 's/^# //p' "$work/docs.out"))"
else
	bad "broken links in the documentation:"
	grep -v '^#' "$work/docs.out" | sed 's/^/  /'
fi
exit $fail
