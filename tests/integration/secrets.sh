#!/bin/sh
# secrets.sh: the passwords kept off the command line, on the real binary
# with redis-cli and psql: --requirepass-file and --pg-password-file work,
# a file group may read is refused at start with a clear error (not the
# secret), LEASEGATE_REQUIREPASS works without a warning, and a secret
# given as an argument is logged as a warning and no longer shows in
# /proc/PID/cmdline (yet still is the password).
# Prints "ok N - what" / "not ok N - what", exits 1 on any failure.
set -u
: "${LG_BIN:?LG_BIN must name the leasegate binary}"
. "$(dirname "$0")/../support/gw.sh"
dir=$(mktemp -d /tmp/lg-secrets.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "  $l"; done; fail=1; }

# start NAME ARGS...: a gateway on a fresh port ($port, $pgport), its log
# in $dir/NAME.log; waits until PING answers (NOAUTH counts: it is up)
start() {
	name=$1; shift
	port=$(gw_free_port); pgport=$(gw_free_port)
	"$LG_BIN" --port "$port" --pg-port "$pgport" --admin-port 0 "$@" 2>"$dir/$name.log" &
	pid=$!
	i=0
	until redis-cli -p "$port" PING 2>/dev/null | grep -q 'PONG\|NOAUTH'; do
		i=$((i + 1))
		[ $i -gt 200 ] && { bad "$name: leasegate did not start" "$(cat "$dir/$name.log")"; return 1; }
		sleep 0.05
	done
}
stop() { kill $pid 2>/dev/null; wait $pid 2>/dev/null; pid=; }
rping() { redis-cli --no-auth-warning -p "$port" -a "$1" PING 2>&1; }
psql1() { PGPASSWORD=$1 psql -X -A -t -h 127.0.0.1 -p "$pgport" -U app -d locks -c 'SELECT 1' 2>&1; }

# 1. the files, owner-only
printf 'file-redis-pw\n' >"$dir/redis.pw"
printf 'file-pg-pw\n' >"$dir/pg.pw"
chmod 600 "$dir/redis.pw" "$dir/pg.pw"
if start files --requirepass-file "$dir/redis.pw" --pg-password-file "$dir/pg.pw"; then
	[ "$(rping file-redis-pw)" = PONG ] && ok "--requirepass-file: its password is AUTH's" ||
		bad "--requirepass-file: its password is AUTH's" "got: $(rping file-redis-pw)"
	case $(rping wrong) in *WRONGPASS*) ok "--requirepass-file: another password refused" ;;
	*) bad "--requirepass-file: another password refused" "got: $(rping wrong)" ;; esac
	[ "$(psql1 file-pg-pw)" = 1 ] && ok "--pg-password-file: psql logs in with it" ||
		bad "--pg-password-file: psql logs in with it" "got: $(psql1 file-pg-pw)"
	if grep -q 'given on the command line' "$dir/files.log"; then
		bad "files: no warning" "$(cat "$dir/files.log")"
	else ok "files: no warning"; fi
	stop
fi

# 2. a file group may read: refused at start, saying why, not the secret
chmod 640 "$dir/redis.pw"
"$LG_BIN" --port 0 --pg-port 0 --admin-port 0 --unixsocket "$dir/s" \
	--requirepass-file "$dir/redis.pw" 2>"$dir/refused.log"
rc=$?
want="leasegate: bad value for --requirepass-file: $dir/redis.pw holds a secret and is accessible by group or others (mode 0640): refused, as ssh refuses such a key; chmod 600 $dir/redis.pw"
if [ $rc = 1 ] && [ "$(cat "$dir/refused.log")" = "$want" ]; then
	ok "a group-readable password file is refused at start"
else
	bad "a group-readable password file is refused at start" "rc $rc" "got:  $(cat "$dir/refused.log")" "want: $want"
fi
grep -q file-redis-pw "$dir/refused.log" && bad "the refusal does not show the secret" ||
	ok "the refusal does not show the secret"

# 3. the environment
port=$(gw_free_port); pgport=$(gw_free_port)
if LEASEGATE_REQUIREPASS=env-redis-pw start env; then
	[ "$(rping env-redis-pw)" = PONG ] && ok "LEASEGATE_REQUIREPASS: its password is AUTH's" ||
		bad "LEASEGATE_REQUIREPASS: its password is AUTH's" "got: $(rping env-redis-pw)"
	grep -q 'given on the command line' "$dir/env.log" && bad "environment: no warning" ||
		ok "environment: no warning"
	stop
fi

# 4. on the command line: warned, blanked in /proc/PID/cmdline, still the password
if start argv --requirepass argv-redis-pw --pg-password=argv-pg-pw; then
	want="--requirepass given on the command line, which every local user can read in /proc/PID/cmdline (blanked there now, not before): pass it in a file (--requirepass-file PATH, mode 0600) or in the environment (LEASEGATE_REQUIREPASS)"
	grep -qF -- "$want" "$dir/argv.log" && ok "argv: the warning names --requirepass and its alternatives" ||
		bad "argv: the warning names --requirepass and its alternatives" "log: $(cat "$dir/argv.log")"
	grep -qF -- "--pg-password given on the command line" "$dir/argv.log" &&
		grep -qF -- "(--pg-password-file PATH, mode 0600) or in the environment (LEASEGATE_PG_PASSWORD)" "$dir/argv.log" &&
		ok "argv: the warning names --pg-password and its alternatives" ||
		bad "argv: the warning names --pg-password and its alternatives" "log: $(cat "$dir/argv.log")"
	cmd=$(tr '\0' ' ' </proc/$pid/cmdline)
	case $cmd in
	*argv-redis-pw* | *argv-pg-pw*) bad "argv: /proc/PID/cmdline no longer shows the secrets" "cmdline: $cmd" ;;
	*--requirepass*--pg-password=*) ok "argv: /proc/PID/cmdline no longer shows the secrets" ;;
	*) bad "argv: /proc/PID/cmdline no longer shows the secrets" "cmdline: $cmd" ;;
	esac
	[ "$(rping argv-redis-pw)" = PONG ] && ok "argv: the blanked password is still AUTH's" ||
		bad "argv: the blanked password is still AUTH's" "got: $(rping argv-redis-pw)"
	[ "$(psql1 argv-pg-pw)" = 1 ] && ok "argv: the blanked --pg-password still logs psql in" ||
		bad "argv: the blanked --pg-password still logs psql in" "got: $(psql1 argv-pg-pw)"
	stop
fi
echo "1..$n"
exit $fail
