#!/bin/sh
# format.sh: `make format` is idempotent — clang-format (the repository's
# .clang-format) run twice over a copy of the tracked sources changes
# nothing the second time — and `make format-check` (what .ci/run runs)
# names the files that are not formatted. "ok N - what" / "not ok N".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
work=$(mktemp -d /tmp/lg-format.XXXXXX)
trap 'rm -rf "$work"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
command -v clang-format >/dev/null || { bad "clang-format not installed (./deps.sh test)"; exit 1; }
git ls-files '*.c' '*.h' .clang-format | while read -r f; do
	mkdir -p "$work/a/$(dirname "$f")" && cp "$f" "$work/a/$f"
done
(cd "$work/a" && find . -name '*.[ch]' -exec clang-format -i {} +)
cp -r "$work/a" "$work/b"
(cd "$work/b" && find . -name '*.[ch]' -exec clang-format -i {} +)
if diff -r "$work/a" "$work/b" >"$work/diff"; then
	ok "make format is idempotent ($(git ls-files '*.c' '*.h' | wc -l) files)"
else
	bad "a second make format changes files"
	head -40 "$work/diff"
fi
# format-check finds an unformatted file and names it
mkdir -p "$work/repo" && cd "$work/repo" && git init -q && cp "$root/.clang-format" . &&
	printf 'int f(void){return 1;}\n' >bad.c && cp "$root/Makefile" . && git add bad.c .clang-format
if make -s format-check >"$work/out" 2>&1; then
	bad "format-check passed an unformatted file"
else
	grep -q 'not formatted (make format): bad.c' "$work/out" && ok "format-check names bad.c" ||
		{ bad "format-check's message"; cat "$work/out"; }
fi
exit $fail
