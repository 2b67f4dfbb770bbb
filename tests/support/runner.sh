# runner.sh: what tests/run-unit.sh and tests/run-integration.sh share,
# sourced by both (POSIX sh). A test is a cmocka binary or a script; each
# runs under a time limit, and the runner counts its tests:
#   cmocka   its summary ("[  PASSED  ] n", "[  FAILED  ] n ...",
#            "[  SKIPPED ] n ..."); without one (a crash, a timeout) the
#            "[       OK ]" lines passed and at least one test failed;
#   script   its "ok ..." / "not ok ..." / "skip ..." lines; exit status
#            77 alone is one skip; a script that exits 0 having printed no
#            "ok" line failed (it checked nothing); its "# ..." lines (what
#            it measured) are shown when it passes.
# Whatever it counts, a test whose exit status is not 0 (or 77) failed.
# rt_close prints the closing line "N passed, N failed, N skipped" and
# returns non-zero on any failure, and on any skip when LG_REFUSE_SKIPS=1
# (.ci/run). With LG_TOTALS set it also appends the counts to that file
# (make test prints the sum of its two runners).

rt_passed=0
rt_failed=0
rt_skipped=0
rt_deadline=
rt_budget=

# rt_budget SECONDS: the whole run's time; a test gets no more than what is
# left of it, and one that starts with nothing left fails unrun (so that
# even a run where every test hangs ends in bounded time).
rt_budget() {
	rt_budget=$1
	rt_deadline=$(($(date +%s) + $1))
}

# rt_run NAME LIMIT LOG KIND CMD...: runs CMD (KIND cmocka or script) with
# its output in LOG, killed (with every process of its group: the gateways
# and proxies it started) after LIMIT seconds; prints one PASS, FAIL or
# SKIP line naming it, and the log on a failure (then its "not ok" lines
# once more, so that the end of the output names what failed).
rt_run() {
	_name=$1 _limit=$2 _log=$3 _kind=$4
	shift 4
	_t0=$(date +%s)
	if [ -n "$rt_deadline" ]; then
		_left=$((rt_deadline - _t0))
		if [ "$_left" -le 0 ]; then
			rt_fail "$_name" "not run: the run's time budget (${rt_budget}s) is spent"
			return
		fi
		[ "$_left" -lt "$_limit" ] && _limit=$_left
	fi
	# timeout puts CMD in a process group of its own and signals the
	# whole group: SIGTERM at the limit, SIGKILL 10 s later.
	timeout -k 10 "$_limit" "$@" >"$_log" 2>&1 </dev/null
	_rc=$?
	_secs=$(($(date +%s) - _t0))
	if [ "$_kind" = cmocka ]; then
		set -- $(awk '
			/^\[ RUN      \]/ { run++ }
			/^\[       OK \]/ { ok++ }
			/^\[  PASSED  \] [0-9]+ test/ { sp += $4; sum = 1 }
			/^\[  FAILED  \] [0-9]+ test/ { sf += $4; sum = 1 }
			/^\[  SKIPPED \] [0-9]+ test/ { ss += $4; sum = 1 }
			END {
				if (sum) print sp + 0, sf + 0, ss + 0
				else print ok + 0, (run > ok ? run - ok : 1), 0
			}' "$_log")
	else
		set -- $(awk '
			/^ok /     { p++ }
			/^not ok / { f++ }
			/^skip /   { s++ }
			END { print p + 0, f + 0, s + 0 }' "$_log")
		if [ "$_rc" = 77 ] && [ "$1$2$3" = 000 ]; then
			set -- 0 0 1
			_rc=0
		elif [ "$_rc" = 0 ] && [ "$1" = 0 ] && [ "$3" = 0 ]; then
			echo "(the runner: $_name exited 0 without one \"ok\" line: it checked nothing)" >>"$_log"
			_rc=1
		fi
	fi
	_p=$1 _f=$2 _s=$3
	_why=
	case $_rc in
	0) ;;
	124 | 137) _why="timed out after ${_limit}s (killed)" ;;
	*) _why="exit status $_rc" ;;
	esac
	if [ -n "$_why" ] && [ "$_f" = 0 ]; then
		_f=1
	fi
	rt_passed=$((rt_passed + _p))
	rt_failed=$((rt_failed + _f))
	rt_skipped=$((rt_skipped + _s))
	_counts="$_p passed, $_f failed, $_s skipped; ${_secs}s"
	if [ "$_f" != 0 ]; then
		echo "FAIL $_name ($_counts)${_why:+: $_why}"
		cat "$_log"
		# its failed checks once more, last: a view that cuts a long
		# log (CI's) still shows them
		grep -e '^not ok ' -e '^# not ok ' "$_log" | sed 's/^/  again: /'
		echo "FAIL $_name${_why:+: $_why}"
	elif [ "$_s" != 0 ]; then
		echo "SKIP $_name ($_counts)"
		grep -e '^skip ' -e 'SKIPPED' "$_log"
	else
		echo "PASS $_name ($_counts)"
		# a script's notes ("# ..."): what it measured
		[ "$_kind" = script ] && grep '^# ' "$_log"
	fi
	return 0
}

# rt_fail NAME WHY: a test that could not be run counts as one failure.
rt_fail() {
	rt_failed=$((rt_failed + 1))
	echo "FAIL $1: $2"
}

# rt_close WHAT: the closing line; the runner's exit status.
rt_close() {
	echo "$1: $rt_passed passed, $rt_failed failed, $rt_skipped skipped"
	[ -n "${LG_TOTALS:-}" ] && echo "$rt_passed $rt_failed $rt_skipped" >>"$LG_TOTALS"
	[ "$rt_failed" = 0 ] || return 1
	if [ "$rt_skipped" != 0 ] && [ "${LG_REFUSE_SKIPS:-0}" = 1 ]; then
		echo "$1: $rt_skipped skipped test(s) refused (LG_REFUSE_SKIPS=1)"
		return 1
	fi
	return 0
}
