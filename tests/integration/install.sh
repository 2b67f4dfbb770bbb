#!/bin/sh
# install.sh: `make install` and `make uninstall` as a packager runs them
# (DESTDIR, PREFIX=/usr), and what they install: the binary, the man page
# leasegate(1) (renders without a warning, names every option of
# --options and the Redis commands), the example configuration (every
# option of --options at its default; the installed binary accepts it as
# it is and with every default line uncommented, and answers PING), the
# systemd unit (paths, hardening; systemd-analyze verify and its security
# score when systemd-analyze is here); uninstall leaves no file, and keeps
# a configuration changed since. Then `leasegate help`: every command a
# running gateway lists in COMMAND LIST, `help LOCK.ACQUIRE` its syntax,
# `help NOSUCH` an error and exit 1.
# Prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
. "$(dirname "$0")/../support/gw.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
# the build directory of LG_BIN, relative to the tree when it is inside
bdir=$(cd "$(dirname "$LG_BIN")" && pwd)
case $bdir in "$root"/*) bdir=${bdir#"$root"/} ;; esac
dir=$(mktemp -d /tmp/lg-install.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "  $l"; done; fail=1; }
check() { # check WHAT COMMAND...: ok when the command succeeds
	what=$1; shift
	if "$@" >"$dir/check.out" 2>&1; then ok "$what"; else bad "$what" "$(head -20 "$dir/check.out")"; fi
}
mk() { make -s --no-print-directory -C "$root" BUILD="$bdir" "$@"; }

dest=$dir/dest
mk install DESTDIR="$dest" PREFIX=/usr >"$dir/install.log" 2>&1 ||
	bad "make install DESTDIR PREFIX=/usr" "$(tail -20 "$dir/install.log")"
bin=$dest/usr/bin/leasegate man1=$dest/usr/share/man/man1/leasegate.1
conf=$dest/etc/leasegate/leasegate.conf unit=$dest/usr/lib/systemd/system/leasegate.service

# 1. the four files, where GNU's directories put them
missing=
[ -x "$bin" ] || missing="$missing bin"
for f in "$man1" "$conf" "$unit"; do [ -f "$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then ok "install: bin, man1, sysconfdir, unit"; else
	bad "install: files missing:$missing" "$(cd "$dest" && find . | sort)"; fi
"$bin" --options >"$dir/options.tsv" || bad "the installed binary runs --options"

# 2. the man page renders without a warning, and says every option and command
w=$(man -l --warnings -E UTF-8 -Tutf8 "$man1" 2>&1 >/dev/null)
g=$(groff -man -ww -z "$man1" 2>&1)
if [ -z "$w$g" ]; then ok "man -l --warnings and groff -ww: no warning"; else
	bad "the man page renders with warnings" "$w" "$g"; fi
MANWIDTH=200 man -l -Tutf8 "$man1" 2>/dev/null | col -b >"$dir/man.txt"
absent=
for o in $(cut -f1 "$dir/options.tsv"); do grep -q -- "--$o " "$dir/man.txt" || absent="$absent $o"; done
for c in LOCK.ACQUIRE LEADER.CAMPAIGN "CLIENT SETNAME"; do
	grep -q "^ *$c" "$dir/man.txt" || absent="$absent $c"; done
if [ -z "$absent" ] && grep -q '^OPTIONS' "$dir/man.txt"; then
	ok "man page: every option of --options and the Redis commands"
else bad "man page lacks:$absent"; fi

# 3. the example configuration: every option, at its default
absent=
while IFS='	' read -r name type env choices def; do
	[ "$name" = config ] && continue
	if [ -n "$def" ]; then grep -qx "#$name $def" "$conf" || absent="$absent $name=$def"
	else grep -q "^#$name " "$conf" || absent="$absent $name"; fi
done <"$dir/options.tsv"
if [ -z "$absent" ]; then ok "example config: every option, commented out at its default"; else
	bad "example config: missing or not at the default:$absent"; fi

# 4. the installed binary accepts it, as it is and with every default set
awk -F'\t' 'NR == FNR { if ($5 != "") d[$1] = 1; next }
	/^#[a-z]/ { split($0, w, " "); if (substr(w[1], 2) in d) { print substr($0, 2); next } }
	{ print }' \
	"$dir/options.tsv" "$conf" >"$dir/set.conf"
set_lines=$(grep -c '^[a-z]' "$dir/set.conf")
for c in "$conf" "$dir/set.conf"; do
	port=$(gw_free_port)
	"$bin" --config "$c" --port "$port" --pg-port 0 --admin-port 0 2>"$dir/gw.log" &
	pid=$!
	if gw_ready "$port"; then ok "leasegate --config $(basename "$c") ($(grep -c '^[a-z]' "$c") lines set): PONG"
	else bad "leasegate refused $(basename "$c")" "$(cat "$dir/gw.log")"; fi
	kill $pid 2>/dev/null; wait $pid 2>/dev/null; pid=
done
want=$(awk -F'\t' '$5 != "" && $1 != "config"' "$dir/options.tsv" | wc -l)
[ "$set_lines" -eq "$want" ] && ok "every default set: $set_lines lines, as many as --options has defaults" ||
	bad "$set_lines default lines set, --options has $want defaults"

# 5. the unit: paths filled in, its own user, the hardening
missing=
for l in "ExecStart=/usr/bin/leasegate --config /etc/leasegate/leasegate.conf" DynamicUser=yes \
	NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes \
	CapabilityBoundingSet= "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" \
	SystemCallFilter=@system-service MemoryDenyWriteExecute=yes LockPersonality=yes \
	ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes RestrictNamespaces=yes; do
	grep -qxF "$l" "$unit" || missing="$missing [$l]"
done
if [ -z "$missing" ] && ! grep -q '@[a-z]*dir@' "$unit"; then
	ok "unit: ExecStart, DynamicUser, hardening"
else bad "unit lacks:$missing (or keeps an @placeholder@)"; fi
# every default port is above 1024: no capability needed
low=$(awk -F'\t' '$1 ~ /port$/ && $5 > 0 && $5 < 1024' "$dir/options.tsv")
[ -z "$low" ] && ok "no default port below 1024 (CapabilityBoundingSet= empty)" || bad "ports < 1024: $low"

# 6. systemd-analyze, on an install at real paths (its ExecStart exists)
if command -v systemd-analyze >/dev/null; then
	mk install PREFIX="$dir/real" >/dev/null 2>&1
	u=$dir/real/lib/systemd/system/leasegate.service
	check "systemd-analyze verify" systemd-analyze verify --man=no "$u"
	score=$(systemd-analyze security --offline=yes "$u" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	if [ -n "$score" ] && awk "BEGIN { exit !($score <= 2.0) }"; then
		ok "systemd-analyze security: exposure $score (<= 2.0)"
	else bad "systemd-analyze security: exposure '$score'"; fi
	mk uninstall PREFIX="$dir/real" >/dev/null 2>&1
else
	echo "# systemd-analyze not here: verify and security skipped"
fi

# 7. uninstall removes every file install put
mk uninstall DESTDIR="$dest" PREFIX=/usr >"$dir/uninstall.log" 2>&1
left=$(cd "$dest" && find . ! -type d; find . -type d -name leasegate)
if [ -z "$left" ]; then ok "make uninstall: no file left"; else bad "make uninstall left:" "$left"; fi

# 8. a configuration changed since install is kept, by install and by uninstall
mk install DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1
echo "port 6390" >>"$conf"
mk install DESTDIR="$dest" PREFIX=/usr >"$dir/install2.log" 2>&1
mk uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1
if [ "$(tail -1 "$conf" 2>/dev/null)" = "port 6390" ] && grep -q kept "$dir/install2.log" &&
	[ "$(cd "$dest" && find . -type f)" = ./etc/leasegate/leasegate.conf ]; then
	ok "a changed leasegate.conf is kept by install and uninstall"
else bad "changed leasegate.conf" "$(cat "$dir/install2.log")" "$(cd "$dest" && find . -type f)"; fi

# 9. leasegate help: every command the gateway serves, with its summary
"$LG_BIN" help >"$dir/help.txt" 2>&1 || bad "leasegate help exits $?"
port=$(gw_free_port)
"$LG_BIN" --port "$port" --pg-port 0 --admin-port 0 2>"$dir/gw.log" &
pid=$!
gw_ready "$port" || bad "leasegate did not start" "$(cat "$dir/gw.log")"
absent=
for c in $(redis-cli -p "$port" COMMAND LIST); do
	u=$(echo "$c" | tr a-z A-Z)
	grep -q "^  $u\( \|$\)" "$dir/help.txt" || absent="$absent $u"
done
kill $pid 2>/dev/null; wait $pid 2>/dev/null; pid=
if [ -z "$absent" ] && grep -q "Takes a lease on a lock" "$dir/help.txt"; then
	ok "leasegate help: every command of COMMAND LIST ($(grep -c '^  [A-Z]' "$dir/help.txt") lines)"
else bad "leasegate help lacks:$absent"; fi
out=$("$LG_BIN" help lock.acquire 2>&1)
if echo "$out" | grep -q "LOCK.ACQUIRE name lease-ms \[WAIT timeout-ms\]" && echo "$out" | grep -q "summary: Takes a lease"; then
	ok "leasegate help lock.acquire: syntax and summary"
else bad "leasegate help lock.acquire" "$out"; fi
out=$("$LG_BIN" help client setname 2>&1)
echo "$out" | grep -q "CLIENT SETNAME connection-name" && ok "leasegate help client setname" ||
	bad "leasegate help client setname" "$out"
out=$("$LG_BIN" help NOSUCH 2>&1 >/dev/null); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "no command 'NOSUCH'"; then
	ok "leasegate help NOSUCH: exit 1, '$out'"
else bad "leasegate help NOSUCH: exit $rc" "$out"; fi

echo "1..$n"
exit $fail
