/*
 * lt_swatch: a waiter's judgement of a lock held in session mode
 * (`--heartbeat replica`, docs/design/replica-heartbeat.md, "Takeover").
 * A pure module: no I/O, no clock, no allocation. The caller reads the
 * lock and its session in one strongly consistent read, feeds what came
 * back with the read's return time (monotonic ms on its own clock), and
 * acts on the verdict. The lock table's waiters use it (core/lt_swait.c).
 *
 * What it watches, from the first read that returned (never from a send):
 *   - the lock's owner and session: any change of either, or the lock
 *     free or absent, restarts the whole watch;
 *   - the lock's rvn, and the session's value: its rvn, or its absence
 *     (an observed value like any other: a missing session is not a dead
 *     one). A change of either restarts the count of that value only;
 *   - the largest lease seen since the watch (re)started: the lock's
 *     sleaseMs and the session's maxLeaseMs. Every count is held to it.
 *
 * Verdicts (enum lt_swatch_verdict), one per read fed:
 *   FREE         the lock is free or absent: acquire normally.
 *   PER_LEASE    held without a session: today's per-lease rule applies.
 *   WAIT         poll again after lt_swatch_poll_ms().
 *   KILL         the session's rvn stood still for the lease: mark it
 *                dead (store_session KILL on .session_rvn). Offered once
 *                per watched rvn; if the next read still shows it live
 *                with that rvn (the kill did not land, or was not sent),
 *                the transaction below is the way.
 *   TAKEOVER_TX  the lock's rvn and the session's value both stood still
 *                for the lease: one transaction, the lock's write
 *                conditioned on .rvn, .owner and .session, and the
 *                session checked by .check: LT_SWATCH_CHECK_RVN
 *                (.session_rvn) or LT_SWATCH_CHECK_ABSENT.
 *   TAKEOVER     the session is dead and the lock's rvn stood still for
 *                the lease: a single-item write conditioned on .rvn,
 *                .owner and .session (.check LT_SWATCH_CHECK_NONE).
 *   BAD          the read is out of bounds (.message says what); the
 *                watch restarts at the next read.
 * lt_swatch_check maps one to one onto the store's STORE_SESS_CHECK_NONE,
 * _RVN and _ABSENT.
 *
 * Safety rests on the holder's clock ("The holder's clock"): a lease ends
 * at send + lease of the write that last proved it (its acquire, or a
 * heartbeat answered in time), and no clock-rate drift between the two
 * machines. The session's maxLeaseMs must cover every lease its
 * heartbeats extend (the holder's duty): a KILL counts only maxLeaseMs.
 */
#ifndef LG_LT_SWATCH_H
#define LG_LT_SWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/store/store.h"
#include "core/store/store_session.h"

/* One read as the waiter saw it. Strings are "" when absent (NULL reads
 * as ""); they need only live during lt_swatch_feed. */
struct lt_swatch_read {
	/* Both items came back. false: a partial read, nothing below is
	 * looked at and nothing counts or restarts. */
	bool counted;
	/* The waiter's monotonic ms: when the read was sent (only checked:
	 * 0 <= sent_ms <= returned_ms; counts never start at a send) and when
	 * its answer returned (counts start here). */
	int64_t sent_ms, returned_ms;
	bool lock_exists;
	const char *owner;	  /* "" while free */
	const char *rvn;	  /* the lock's rvn */
	const char *session;	  /* the session the lock names, "" when none */
	int64_t slease_ms;	  /* the lock's sleaseMs (session mode) */
	const char *session_read; /* the key of the session item the read asked for */
	struct session_item sess; /* that item as read (.exists false: none) */
};

enum lt_swatch_verdict {
	LT_SWATCH_WAIT,
	LT_SWATCH_FREE,
	LT_SWATCH_PER_LEASE,
	LT_SWATCH_KILL,
	LT_SWATCH_TAKEOVER_TX,
	LT_SWATCH_TAKEOVER,
	LT_SWATCH_BAD
};

enum lt_swatch_check { LT_SWATCH_CHECK_NONE, LT_SWATCH_CHECK_RVN, LT_SWATCH_CHECK_ABSENT };

/* The watch's explicit states (the table in lt_swatch.c says what each
 * answers and which moves are legal). */
enum lt_swatch_state {
	LT_SW_IDLE,	    /* nothing watched: new, or after a BAD read */
	LT_SW_FREE,	    /* the lock free or absent */
	LT_SW_PER_LEASE,    /* held without a session */
	LT_SW_UNREAD,	    /* held in session mode; its session not read yet */
	LT_SW_LIVE,	    /* the session exists, not dead: its rvn counts */
	LT_SW_KILL_OFFERED, /* LIVE, and KILL was answered for this rvn */
	LT_SW_ABSENT,	    /* the session is missing: its absence counts */
	LT_SW_DEAD,	    /* the session is marked dead: the lock's rvn counts */
	LT_SW_COUNT
};

/* Why the last read restarted counts (bits of lt_swatch.restarted). */
enum {
	LT_SWATCH_RS_FIRST = 1u << 0,	      /* the watch's first read */
	LT_SWATCH_RS_FREE = 1u << 1,	      /* the lock free or absent */
	LT_SWATCH_RS_OWNER = 1u << 2,	      /* another owner */
	LT_SWATCH_RS_SESSION = 1u << 3,	      /* another session (or none) */
	LT_SWATCH_RS_LOCK_RVN = 1u << 4,      /* the lock's rvn changed */
	LT_SWATCH_RS_SESS_RVN = 1u << 5,      /* the session's rvn changed */
	LT_SWATCH_RS_SESS_APPEARED = 1u << 6, /* the session exists again */
	LT_SWATCH_RS_SESS_GONE = 1u << 7,     /* the session disappeared */
	LT_SWATCH_RS_SESS_REVIVED = 1u << 8,  /* a dead mark vanished */
	LT_SWATCH_RS_SESS_READ = 1u << 9,     /* the lock's session read at last */
	LT_SWATCH_RS_SESS_UNREAD = 1u << 10,  /* the read showed another session item */
};

struct lt_swatch {
	enum lt_swatch_state state;
	unsigned restarted; /* LT_SWATCH_RS_* of the last read fed */
	int64_t last_ms;    /* return time of the last counted read; -1 none */
	int64_t lease_ms;   /* the largest lease seen in this watch */
	char owner[STORE_ID_MAX + 1];
	char session[STORE_SESSION_KEY_MAX + 1];
	char rvn[STORE_ID_MAX + 1];
	int64_t rvn_since;		 /* the lock's rvn first seen (a read's return) */
	char sess_rvn[STORE_ID_MAX + 1]; /* LIVE, KILL_OFFERED, DEAD */
	int64_t sess_since;		 /* the session's value first seen */
	char message[160];		 /* why the last read was BAD */
};

/* What to do after a read, and what a write must be conditioned on. The
 * strings point into the watch: valid until the next feed or init. */
struct lt_swatch_out {
	enum lt_swatch_verdict verdict;
	enum lt_swatch_check check;	   /* KILL (RVN), TAKEOVER_TX, TAKEOVER */
	const char *owner, *rvn, *session; /* KILL, TAKEOVER_TX, TAKEOVER */
	const char *session_rvn;	   /* KILL; TAKEOVER_TX with CHECK_RVN */
	int64_t lease_ms;		   /* the lease counted */
	const char *message;		   /* BAD */
};

/* A watch with nothing seen yet (state IDLE). */
void lt_swatch_init(struct lt_swatch *w);

/* Feeds one read; returns the verdict, also in *out (may be NULL). A read
 * not counted answers WAIT and changes nothing. A read out of bounds (an
 * owner or rvn not 1..STORE_ID_MAX printable bytes, a session key not
 * SESSION#<replica>#<32 hex>, a sleaseMs or maxLeaseMs outside 1 s..1 day,
 * a session item that is not a SESSION, a send after the return or a
 * return before the last counted one)
 * answers BAD and the watch starts again at the next read. */
enum lt_swatch_verdict lt_swatch_feed(struct lt_swatch *w, const struct lt_swatch_read *r,
				      struct lt_swatch_out *out);

/* How long after now_ms to read again: a third of the lease seen (at most
 * LT_MAX_POLL_MS, as lt_poll_interval), sooner when a count falls due
 * first; 0 when the lock's session is still to be read (UNREAD), and in
 * IDLE, FREE and PER_LEASE (no lease of this mode to pace it: the caller's
 * own rules apply). */
int64_t lt_swatch_poll_ms(const struct lt_swatch *w, int64_t now_ms);

/* The state's name, for logs and test messages. */
const char *lt_swatch_state_name(enum lt_swatch_state s);

#endif
