#!/bin/sh
# lincheck: the history checker of make stress (tests/stress/lincheck.py),
# without a gateway: --selftest (planted violations — a double grant, a
# refusal after an acknowledged release, a token going down, a grant during
# a live lease, LOCK.STATE free while held, a renew after a takeover — are
# flagged; valid tricky histories — overlapping operations, a loss reported
# then a takeover, a lease expiry, a lost connection, an acquire whose
# answer was lost, PostgreSQL's COMMIT — pass; with shared holders: an
# exclusive grant while a reader holds, readers at once with two tokens, an
# exclusive's token not above the readers', 3 holders of a semaphore of 2,
# one slot held twice, refusals with a place free — flagged by the search
# and by the interval check alone; readers sharing a token, a reader
# refused while a writer waits, a crashed reader taken over — pass), then
# the fixture
# tests/stress/fixtures/xact_commit_bug.jsonl (a history that
# tests/stress/xact_commit.py recorded on a gateway whose COMMIT answered
# before its release was written: 16 tries of 40 refused) is flagged, and
# tests/stress/fixtures/takeover_of_unanswered.jsonl (what CI's
# stress_short recorded, seed 979750: acquires whose answer was lost to a
# SIGKILL or came back -TRYAGAIN after a SIGSTOP had taken the lock, for no
# session, until a takeover a lease later; the checker flagged it) passes,
# and tests/stress/fixtures/script_over_readers.jsonl (stress.py with
# readers, seed 536971: a Lua script's SET, redlock's take, granted on
# stress-2 while reader r0 held it shared, token 47 over the readers' 46:
# the script commit's condition has no scount guard) is flagged, and
# tests/stress/fixtures/sem_try_refused.jsonl (stress.py, seed 491448,
# sem:0 a semaphore of 2: m1's LOCK.ACQUIRE ... LIMIT 2 without WAIT
# answered nil at [5.3729, 5.6770] while one place at most was held at
# every instant, m2 releasing and taking a slot on another gateway
# meanwhile) is flagged, and tests/stress/fixtures/timed_out_wait_held.jsonl
# (stress.py, seed 997381, pg:stress:2: pg1's pg_advisory_lock answered
# 55P03 at 7.7172 after a 5 s lock_timeout, and LOCK.STATE showed the key
# held with token 22 at [7.7216, 7.7549], two readers' tries refused
# meanwhile: its write in flight at the timeout landed, kept as an orphan
# and released at once, core/locktable.c's finish) passes, and
# tests/stress/fixtures/admitted_reader_stopped.jsonl (stress.py, seed
# 750285, stress-2: c8's release admitted reader r1, whose gateway was
# then stopped; exclusive tries were refused, LOCK.STATE said free, until
# the waiting writer c5 dropped the admission a lease later) passes, and
# tests/stress/fixtures/stale_announcement.jsonl (stress.py, seed 750285,
# pg:stress:2: pg1's gateway was killed while pg1 waited, its announcement
# stood, and reader tries were refused 8 s later, 4 leases: each reader
# counted the announcement's stillness from its own wait's first sight,
# and readers admitted by each release never waited long; fixed in
# core/lt_shared.c's behind_writer) is flagged, and so is
# tests/stress/fixtures/lost_session_released_early.jsonl (stress.py,
# mixed, seed 396990, stress-1, 16-19.8 s: gw2's session, marked dead
# while it was stopped, ended at a hand-off's beat; the lease handed to c2
# was lost at once and its item released at once, and c5 on the same
# gateway was granted 130 ms after c2; fixed in core/lease.c's
# release_if_orphan), and tests/stress/fixtures/
# refused_refresh_announcement.jsonl (stress.py, lease, seed 481853,
# pg:stress:1, 44.5-51.1 s: pg0's refresh of its announcement was refused
# once the last reader had gone, it forgot the one standing, and readers'
# tries were refused 3 s after it was granted and had released; fixed in
# core/lt_shared_reap.c's on_announced).
# Needs no moto; run by tests/run-integration.sh. A second or so.
set -u
here=$(dirname "$0")/../stress
rc=0
/usr/bin/python3 "$here/lincheck.py" --selftest || rc=1
/usr/bin/python3 "$here/lincheck.py" --expect-violation "$here/fixtures/xact_commit_bug.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" "$here/fixtures/takeover_of_unanswered.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" --expect-violation "$here/fixtures/script_over_readers.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" --expect-violation --max-violations 1 "$here/fixtures/sem_try_refused.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" "$here/fixtures/timed_out_wait_held.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" "$here/fixtures/admitted_reader_stopped.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" --expect-violation "$here/fixtures/stale_announcement.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" --expect-violation --max-violations 1 \
	"$here/fixtures/lost_session_released_early.jsonl" || rc=1
/usr/bin/python3 "$here/lincheck.py" --expect-violation --max-violations 1 \
	"$here/fixtures/refused_refresh_announcement.jsonl" || rc=1
exit $rc
