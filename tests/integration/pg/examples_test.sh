#!/bin/sh
# The PostgreSQL singleton examples, examples/pg_singleton.py (psycopg 3)
# and examples/pg_singleton.js (node-postgres), against the server given by
# PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE: the guide
# docs/guides/singleton-job.md links both (examples/ is the one source);
# for each, of two copies one leads, the other takes over when the leader
# is SIGKILLed, with a greater token, and a SIGTERM while leading releases
# and exits 0. NODE_PATH must reach `pg`. Prints one
# `ok`/`not ok` line per check.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d "${LG_WORK:-/tmp}/pg_examples.XXXXXX")
a= b=
trap 'kill $a $b 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

/usr/bin/python3 - "$root/docs/guides/singleton-job.md" examples/pg_singleton.py \
	examples/pg_singleton.js <<'EOF_PY'
import os, re, sys
doc = sys.argv[1]
if not os.path.isfile(doc):
    print("not ok examples: no docs/guides/singleton-job.md")
    sys.exit()
text = open(doc).read()
text = text[text.find("## From PostgreSQL"):]
links = re.findall(r"\]\(([^)#\s]+)\)", text)
for want in sys.argv[2:]:
    hits = [l for l in links
            if os.path.normpath(os.path.join(os.path.dirname(doc), l)).endswith("/" + want)
            and os.path.isfile(os.path.join(os.path.dirname(doc), l))]
    print(f"{'ok' if hits else 'not ok'} examples: the singleton guide's PostgreSQL section links {want}")
EOF_PY

# await FILE PATTERN: FILE has a line matching PATTERN within 6 s
await() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 600 ] && return 1
		sleep 0.01
	done
}
token() { sed -n 's/^leading token=//p' "$1" | head -1; }
check() { if [ "$2" = "$3" ]; then echo "ok examples: $1"; else echo "not ok examples: $1: got '$3', want '$2'"; fi; }

for ex in py js; do
	if [ $ex = py ]; then
		set -- /usr/bin/python3 "$root/examples/pg_singleton.py" --key 7000 --retry 0.5
	else
		set -- node "$root/examples/pg_singleton.js" "" 7001
	fi
	"$@" >"$work/$ex.a" 2>&1 &
	a=$!
	await "$work/$ex.a" '^working' || true
	"$@" >"$work/$ex.b" 2>&1 &
	b=$!
	sleep 1
	check "pg_singleton.$ex: one copy leads, the other waits" "leading-" \
		"$(grep -q '^leading' "$work/$ex.a" && echo leading)-$(grep '^leading' "$work/$ex.b")"
	kill -KILL $a
	wait $a 2>/dev/null
	a=
	await "$work/$ex.b" '^working' || true
	t1=$(token "$work/$ex.a") t2=$(token "$work/$ex.b")
	check "pg_singleton.$ex: SIGKILL of the leader: the other takes over with a greater token" yes \
		"$([ -n "$t1" ] && [ -n "$t2" ] && [ "$t2" -gt "$t1" ] && echo yes || echo "tokens '$t1' '$t2'")"
	kill -TERM $b
	wait $b
	rc=$?
	b=
	check "pg_singleton.$ex: SIGTERM while leading: released, exit 0" "released token=$t2 0" \
		"$(grep '^released' "$work/$ex.b") $rc"
	grep -q -e '^working' -e '^released' "$work/$ex.b" || sed 's/^/# /' "$work/$ex.a" "$work/$ex.b"
done
