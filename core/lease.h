/*
 * lease: one lease this process holds (lease.c) — its heartbeat, explicit
 * renewals, loss, release and the fencing check — as the rest of the core
 * sees it. The API for callers (lease_release, lease_renew, lease_token...)
 * is in locktable.h; this header is private to core/.
 *
 * A lease's life is enum lease_state, changed only by lease_set_state(),
 * which checks a table of legal moves:
 *
 *   NEW --> HELD --> RELEASING | YIELDING --> ENDED
 *    |       |  \______________________________^
 *    |       v                                 |
 *    +---> LOST -------------------------------+
 *
 * HELD -> ENDED: handed on to a local waiter, detached, or its release
 * could not be sent. NEW -> LOST: won after a whole lease had passed.
 */
#ifndef LG_LEASE_H
#define LG_LEASE_H

#include <stddef.h>

#include "core/lt_internal.h"

enum lease_state {
	LEASE_NEW,	 /* made by lease_start, not yet judged */
	LEASE_HELD,	 /* renewed by its heartbeat */
	LEASE_LOST,	 /* lost (loss says why); waits for lease_release */
	LEASE_RELEASING, /* its release in flight (hb_call) */
	LEASE_YIELDING,	 /* likewise, giving another replica its turn */
	LEASE_ENDED,	 /* freed (lease_destroy) */
	LEASE_STATE_COUNT
};

struct lt_op; /* an explicit renew or a fencing check in flight */

/* What only a lease renewed by its own writes (!in_session) has: its
 * heartbeat and end timers and the renewal in flight. It shares the last
 * part of struct lease with a session member's struct lt_member, and a
 * member's lease is allocated without the rest of it (lease_bytes): a
 * member never reads or writes it. */
struct lease_beat {
	struct timer hb_timer, end_timer;
	int64_t retry_ms, hb_send_ms;
	char hb_rvn[LT_ID_LEN + 1];
};

struct lease {
	struct locktable *t;
	struct lock *lock;
	struct lease *prev, *next; /* in t->leases */
	char *holder;
	int64_t token, lease_ms, last_send_ms;
	enum lease_state state; /* lease_set_state() */
	enum lt_loss loss;	/* LT_HELD until LEASE_LOST: the reason */
	bool takeover;		/* a fact of its acquire, not lifecycle */
	/* LT_HEARTBEAT_REPLICA: a fact of its acquire too — its writes name
	 * session sess_gen (lt_replica.c) and it is a member of it: no timer
	 * of its own, its end is the member's (lt_member_end_ms) */
	bool in_session;
	uint32_t sess_gen;
	struct store_call *hb_call; /* heartbeat renewal or release */
	struct lt_op *ops;
	lt_lost_cb on_lost;
	void *on_lost_arg;
	void *data;
	lt_renew_cb release_cb; /* lease_release_then() */
	void *release_arg;
	/* the hash of its secret (lt_acquire_args.secret_hash), NULL when
	 * none: out of line (malloc'd, freed with the lease), as most leases
	 * have none and a member's block is 64 bytes smaller without it */
	char *secret_hash; /* before the chars: no padding */
	char owner[STORE_ID_MAX + 1];
	char rvn[LT_ID_LEN + 1];
	struct trace_ctx acq_ctx;   /* its acquire's span: renewals link to it */
	struct trace_span *hb_span; /* the Lock.Renew or Lock.Release of hb_call */
	/* last: a member's lease is allocated up to the end of member only
	 * (lease_bytes) */
	union {
		struct lease_beat beat;	 /* !in_session */
		struct lt_member member; /* in_session */
	};
};

/* The bytes of a session member's lease: up to the end of its member. */
#define LEASE_MEMBER_BYTES (offsetof(struct lease, member) + sizeof(struct lt_member))

/* One lease of a held lock costs this at most (and 65 bytes more, a
 * block of 80, when it has a secret): a lease renewed by its own writes
 * 480 bytes (malloc's block of 496), a session member's 312 (a block of
 * 320: malloc's blocks are 8 bytes more than asked, in steps of 16). */
_Static_assert(sizeof(struct lease) <= 480, "struct lease grew");
_Static_assert(LEASE_MEMBER_BYTES <= 312, "a member's lease grew");

/* The bytes l was allocated with: a session member's lease stops at the
 * end of its member (LEASE_MEMBER_BYTES), a lease renewed by its own
 * writes has them all (sizeof(struct lease)). in_session never changes
 * after the lease is made. */
size_t lease_bytes(const struct lease *l);

/* Moves l to state to (LG_ASSERT on a move not in lease.c's table; the
 * move is made either way). */
void lease_set_state(struct lease *l, enum lease_state to);

/* Its release is in flight (LEASE_RELEASING or LEASE_YIELDING). */
static inline bool lease_releasing(const struct lease *l)
{
	return l->state == LEASE_RELEASING || l->state == LEASE_YIELDING;
}

/* The lease the write of w won, on item (the write's answer): HELD, or
 * LOST (expired) when answered after a whole lease. NULL: out of memory. */
struct lease *lease_start(struct lt_wait *w, const struct lock_item *item);
/* The lease an adopt won (lt_adopt.c): item the ADOPT's answer, owner,
 * rvn and secret_hash what it wrote at send_ms, holder (owned, or the
 * table's label) its label, sess_gen the session the ADOPT named (0:
 * none, per lease). HELD, or LOST (expired) when answered after a whole
 * lease (LT_SESSION: its session ended). NULL: out of memory. */
struct lease *lease_adopted(struct lock *lock, const struct lock_item *item, const char *owner,
			    const char *rvn, const char *secret_hash, int64_t lease_ms,
			    int64_t send_ms, char *holder, uint32_t sess_gen);
/* The session lost member m for why (lt_replica.c's on_lost): its lease
 * is lost as a refused renewal would lose it. */
void lease_member_lost(struct lt_member *m, enum lt_loss why);
/* l is lost (or, LT_RELEASED, ended) for reason, as a renewal finds it;
 * nothing unless l is HELD. */
void lt_lease_lose(struct lease *l, enum lt_loss reason);
/* A check of l's lease was refused by item (a fenced transaction's): l is
 * lost as a renewal refused so would lose it (taken_over, deleted,
 * released, forced). Returns the loss, or l's loss if it had one. */
enum lt_loss lt_lease_refused(struct lease *l, const struct lock_item *item);
/* The rvn l last wrote: a write that takes the lock from it is
 * conditioned on it. */
const char *lease_rvn(const struct lease *l);
/* Frees every lease of t, nothing sent (lt_free). */
void lease_free_all(struct locktable *t);

#endif
