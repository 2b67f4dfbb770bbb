#!/bin/sh
# docs_fresh.sh: the reference pages checked in (docs/reference/*.md) are
# what `make docs` writes from the command rows, the option table and the
# PostgreSQL function table now:
# build/gen_docs writes them into a scratch directory and each page must
# be the same; a stale one fails, named, with `make docs` to fix it.
# "ok N - what" / "not ok N".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
gen=$root/${BUILD:-build}/gen_docs
work=$(mktemp -d /tmp/lg-docs.XXXXXX)
trap 'rm -rf "$work"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
[ -x "$gen" ] || { bad "$gen not built (make docs)"; exit 1; }
"$gen" "$work" || { bad "gen_docs failed"; exit 1; }
for page in commands.md configuration.md functions.md; do
	if [ ! -f "$root/docs/reference/$page" ]; then
		bad "docs/reference/$page is missing: run make docs"
	elif cmp -s "$work/$page" "$root/docs/reference/$page"; then
		ok "docs/reference/$page is up to date"
	else
		bad "docs/reference/$page is stale: run make docs"
		diff -u "$root/docs/reference/$page" "$work/$page" | head -20
	fi
done
# the pages hold what the tables hold: a command and an option at least
grep -q '^## `LOCK.RENEW name \[token\] \[secret\]`' "$work/commands.md" &&
	grep -q '^| `--aclfile` ' "$work/configuration.md" &&
	grep -q 'pg_advisory_lock' "$work/functions.md" &&
	ok "the pages list LOCK.RENEW, --aclfile and pg_advisory_lock" ||
	bad "LOCK.RENEW, --aclfile or pg_advisory_lock missing"
exit $fail
