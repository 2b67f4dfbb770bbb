#!/bin/sh
# layers.sh: the include rules of the layout (docs/hacking.md "Layout"):
# no file of lib/, core/, protocols/, gateway/ or tools/ includes from a
# layer above its own or from a room it must not see. The rules are the
# table below: a file whose path matches FROM (and not FROM_EXCEPT) may
# not include a path matching TO (and not TO_EXCEPT). Besides the table,
# every quoted #include names a file from the repository's root that
# exists, and never a .c file.
#
# It first checks itself on a tree made here with one planted violation
# per kind (it must name each of them), then checks the sources.
# "ok N - what" / "not ok N - what"; a violation prints
#   FILE:LINE: includes PATH: WHY
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/lg-layers.XXXXXX)
trap 'rm -rf "$work"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

# FROM @ FROM_EXCEPT @ TO @ TO_EXCEPT @ WHY   ("-": none; extended regexps)
rules() {
	cat <<'EOF'
^lib/ @ - @ ^(core|protocols|gateway|tools|tests)/ @ - @ lib/ is the bottom layer: it includes lib/ only
^lib/base/ @ - @ ^lib/(http|aws)/ @ - @ lib/base is below the other libraries
^lib/http/ @ - @ ^lib/aws/ @ - @ the HTTP client knows nothing of AWS
^core/ @ - @ ^(protocols|gateway|tools|tests)/ @ - @ the core includes lib/ and core/ only
^core/[^/]+$ @ - @ ^core/store/dynamodb/ @ - @ the lock table sees the store interface only
^core/store/[^/]+$ @ - @ ^core/store/dynamodb/ @ - @ the store interface and the embedded store know no DynamoDB
^core/store/ @ - @ ^core/[^/]+$ @ ^core/trace\.h$ @ the stores are below the lock table (they only record spans)
^protocols/ @ - @ ^(core|gateway|tools|tests)/ @ - @ protocols/ is wire formats only: it includes protocols/ and lib/
^protocols/resp/ @ - @ ^protocols/pg/ @ - @ one wire format does not include another
^protocols/pg/ @ - @ ^protocols/resp/ @ - @ one wire format does not include another
^gateway/ @ - @ ^(tools|tests)/ @ - @ the server includes no tool or test
^gateway/ @ ^gateway/(redis|cli)/ @ ^protocols/resp/ @ - @ RESP is included by the Redis front-end and the client subcommands only
^gateway/ @ ^gateway/pg/ @ ^protocols/pg/ @ - @ the PostgreSQL wire format is included by its front-end only
^gateway/config\.[ch]$ @ - @ ^gateway/[a-z]+/ @ - @ the option table is below every room
^gateway/(conn|lease)/ @ - @ ^gateway/(redis|pg|admin|cli|script|doc)/ @ - @ the connection and lease-session layers include no front-end
^gateway/redis/ @ - @ ^gateway/(pg|admin|cli|doc)/ @ - @ front-ends never include each other
^gateway/pg/ @ - @ ^gateway/(redis|admin|cli|doc|script)/ @ - @ front-ends never include each other
^gateway/admin/ @ - @ ^gateway/(redis|pg|cli|doc|script)/ @ - @ front-ends never include each other
^gateway/cli/ @ - @ ^gateway/(redis|pg|admin|doc|script|conn|lease|obs)/ @ - @ the client subcommands share only the binary and the option syntax with the server
^gateway/script/ @ - @ ^gateway/(redis|pg|admin|cli|doc|conn)/ @ - @ scripts run on the core and the lease layer, below the Redis front-end
^gateway/obs/ @ - @ ^gateway/(pg|admin|cli|doc|script)/ @ - @ observability reads the layers below it (and the Redis command counts)
^gateway/[a-z]+/ @ ^gateway/doc/ @ ^gateway/doc/ @ - @ the generated documents (help, man page) sit on top: only main.c and tools include them
EOF
}

# check DIR: prints the violations of the sources under DIR, one a line
check() {
	(cd "$1" && find lib core protocols gateway tools -name '*.[ch]' 2>/dev/null | sort |
		while read -r f; do
			grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
				sed "s|^\([0-9]*\):.*\"\([^\"]*\)\".*|$f \1 \2|"
		done |
		while read -r f line inc; do
			# the included file must exist from the root (no relative includes)
			[ -f "$inc" ] || echo "$f:$line: includes $inc: no such file from the repository's root"
			echo "$f $line $inc"
		done) >"$work/includes"
	awk -v rules="$(rules)" '
		BEGIN {
			nr = split(rules, lines, "\n")
			for (i = 1; i <= nr; i++) {
				split(lines[i], c, / @ /)
				from[i] = c[1]; fx[i] = c[2]; to[i] = c[3]; tx[i] = c[4]; why[i] = c[5]
			}
		}
		/: includes / { print; next }
		{
			f = $1; line = $2; inc = $3
			if (inc ~ /\.c$/) { print f ":" line ": includes " inc ": a .c file"; next }
			for (i = 1; i <= nr; i++) {
				if (f !~ from[i] || (fx[i] != "-" && f ~ fx[i]))
					continue
				if (inc !~ to[i] || (tx[i] != "-" && inc ~ tx[i]))
					continue
				print f ":" line ": includes " inc ": " why[i]
			}
		}' "$work/includes" || echo "the check itself failed (awk)"
}

# --- the check checks: one planted violation of each kind is named
t="$work/tree"
mkdir -p "$t/lib/base" "$t/lib/http" "$t/core/store/dynamodb" "$t/protocols/resp" \
	"$t/gateway/conn" "$t/gateway/pg" "$t/gateway/redis" "$t/gateway/cli" "$t/tools"
for h in lib/base/clock.h lib/http/http.h core/locktable.h core/store/store.h \
	core/store/dynamodb/store_dynamodb.h protocols/resp/resp.h gateway/redis/commands.h \
	gateway/config.h gateway/conn/conn.h core/trace.h; do
	: >"$t/$h"
done
printf '#include "lib/base/clock.h"\n#include "core/locktable.h"\n' >"$t/lib/http/up.c"
printf '#include "core/store/dynamodb/store_dynamodb.h"\n' >"$t/core/lt_up.c"
printf '#include "core/trace.h"\n#include "core/locktable.h"\n' >"$t/core/store/store_up.c"
printf '#include "gateway/redis/commands.h"\n#include "gateway/config.h"\n' >"$t/gateway/conn/up.c"
printf '#include "protocols/resp/resp.h"\n' >"$t/gateway/pg/up.c"
printf '#include "gateway/conn/conn.h"\n' >"$t/gateway/cli/up.c"
printf '#include "commands.h"\n#include "gateway/conn/up.c"\n' >"$t/gateway/redis/rel.c"
printf '#include "protocols/resp/resp.h"\n#include "gateway/conn/conn.h"\n' >"$t/gateway/redis/fine.c"
check "$t" >"$work/planted"
want='gateway/cli/up.c:1: includes gateway/conn/conn.h
gateway/conn/up.c:1: includes gateway/redis/commands.h
gateway/pg/up.c:1: includes protocols/resp/resp.h
gateway/redis/rel.c:1: includes commands.h
gateway/redis/rel.c:2: includes gateway/conn/up.c
lib/http/up.c:2: includes core/locktable.h
core/lt_up.c:1: includes core/store/dynamodb/store_dynamodb.h
core/store/store_up.c:2: includes core/locktable.h'
missing=$(echo "$want" | while read -r w; do grep -qF "$w: " "$work/planted" || echo "$w"; done)
extra=$(grep -v -e 'gateway/cli/up.c:1:' -e 'gateway/conn/up.c:1:' -e 'gateway/pg/up.c:1:' \
	-e 'gateway/redis/rel.c:' -e 'lib/http/up.c:2:' -e 'core/lt_up.c:1:' \
	-e 'core/store/store_up.c:2:' "$work/planted")
if [ -z "$missing" ] && [ -z "$extra" ]; then
	ok "the check names each planted violation ($(wc -l <"$work/planted") lines) and nothing else"
else
	bad "the check on planted violations"
	[ -z "$missing" ] || echo "# not named: $missing"
	[ -z "$extra" ] || echo "# named wrongly: $extra"
fi

# --- the sources
check "$root" >"$work/real"
files=$(cd "$root" && find lib core protocols gateway tools -name '*.[ch]' 2>/dev/null | wc -l)
if [ -s "$work/real" ]; then
	bad "the sources break the include rules"
	sed 's/^/# /' "$work/real"
else
	ok "$files files of lib/ core/ protocols/ gateway/ tools/ keep the include rules"
fi
# gateway/'s root holds the program and its option table only
extra_root=$(cd "$root" && ls gateway/*.[ch] | grep -v -x -e gateway/main.c -e gateway/config.c \
	-e gateway/config.h | tr '\n' ' ')
if [ -z "$extra_root" ]; then
	ok "gateway/'s root holds main.c and config.[ch] only"
else
	bad "files at gateway/'s root (a room of their own?): $extra_root"
fi
exit $fail
