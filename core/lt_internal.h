/*
 * lt_internal: the structures shared by locktable.c (locks, waits, polls),
 * lease.c (heartbeat, renew, loss, release) and lt_testing.c. Not a public
 * header: nothing outside core/ includes it.
 */
#ifndef LG_LT_INTERNAL_H
#define LG_LT_INTERNAL_H

#include "core/locktable.h"
#include "core/pool.h"
#include "core/trace.h"

#define LT_ID_LEN 32

/* A wait_for_refusal registration (lt_testing.c). */
struct lt_hook {
	struct lt_hook *next;
	void (*cb)(void *arg, int64_t value);
	void *arg;
	char name[];
};

/* A holder this process has seen on a lock: its rvn and since when (our
 * monotonic clock). Only locks seen held have one; they are kept in the
 * table's LRU list, bounded by seen_max. */
struct seen {
	struct lock *lock;
	struct seen *prev, *next; /* in t->lru, most recent first */
	int64_t at;		  /* monotonic ms the rvn was first read */
	int64_t lease_ms;	  /* the holder's lease, or the reservation's window */
	char *holder;
	char rvn[STORE_ID_MAX + 1];
	/* Not empty: the item was read free but announced for another
	 * replica's waiter (a reservation); this is that waiter's id, and
	 * lease_ms the window it is left to it (LT_RESERVE_WINDOWS of its
	 * announced poll interval). */
	char waiter[STORE_ID_MAX + 1];
};

/* A free item announced for another replica's waiter is left to it for
 * this many of its announced poll intervals (see locktable.c). */
#define LT_RESERVE_WINDOWS 2

/* One lock this process holds, waits for, or has seen held. Lives while
 * refs > 0 (leases and waits on it), a request of its own is in flight, or
 * it remembers a holder (seen). */
struct lock {
	struct lock *hnext;
	uint64_t hash;
	struct locktable *t;
	struct lease *held;		   /* the local lease holding it */
	struct lease *releasing;	   /* its release in flight, if any */
	struct lt_wait *wq_head, *wq_tail; /* queued waits, FIFO */
	unsigned refs;
	unsigned writes;	      /* acquire writes in flight */
	struct store_call *poll_call; /* the shared poll's read */
	struct timer poll_timer;
	struct seen *seen; /* the holder seen, NULL when none */
	/* Fair across replicas (locktable.c). Waiting side: */
	struct store_call *ann_call; /* our announce or withdraw in flight */
	bool ann_on_item;	     /* ann is (or may be) on the item */
	bool elsewhere;		     /* reads find it held by another owner ... */
	int64_t elsewhere_since;     /* ... since this answer (monotonic ms) */
	int64_t ann_ms;		     /* the poll interval we announced */
	/* Holding side: */
	bool yield;		 /* another replica's announcement seen while held */
	bool yielding;		 /* released to the store for it, answer pending */
	unsigned round_left;	 /* local hand-offs still due before yielding */
	int64_t turn_start;	 /* when the lock came to this replica from the store */
	char ann[LT_ID_LEN + 1]; /* our announcement's id, "" when none */
	char name[];
};

struct lt_wait {
	struct locktable *t;
	struct lock *lock;
	struct lt_wait *prev, *next; /* in lock's queue while queued */
	bool queued, wait, cancelled, takeover, finishing;
	bool orphaned; /* ended with its write in flight: in t->orphan_waits */
	bool handoff;  /* its write is a local hand-off */
	/* A hand-off's: the owner of the lease it takes the lock from. That
	 * lease's renewals may land after it was released (a retried attempt,
	 * one still in flight), so the item's rvn may not be the one the
	 * hand-off was conditioned on; a refusal by an item still under this
	 * owner is retried on the rvn it shows, else the released lease's owner
	 * would stay on the item for a whole lease. */
	char handoff_from[STORE_ID_MAX + 1];
	/* A hand-off's: the answer of the release that handed the lock on
	 * (lease_release_then), given once this write answers (or, when it
	 * failed, once the handback release is done: on_handback): the lock
	 * is not handed on until then. */
	lt_renew_cb rel_cb;
	void *rel_arg;
	unsigned handbacks; /* releases of that lease sent (locktable.c) */
	unsigned own_again; /* writes sent again on its own owner's item (own_again) */
	bool took_waiter;   /* its write removes an announcement */
	lt_acquire_cb cb;
	void *arg;
	void (*answered)(void *arg);
	int64_t lease_ms;
	char *holder;	    /* t->holder_label (shared) or a copy of its own */
	struct timer timer; /* timeout, or a deferred refusal */
	struct store_call *call;
	bool call_is_write;
	int64_t send_ms;
	char owner[STORE_ID_MAX + 1];
	char rvn[LT_ID_LEN + 1];
	struct trace_span *span; /* Lock.Acquire / Lock.TryAcquire / Leader.Campaign */
};

struct lt_op; /* an explicit renew or a fencing check in flight */

struct lease {
	struct locktable *t;
	struct lock *lock;
	struct lease *prev, *next; /* in t->leases */
	char *holder;
	int64_t token, lease_ms, last_send_ms, retry_ms, hb_send_ms;
	enum lt_loss loss;
	bool takeover, releasing;
	bool yielding; /* its release gives another replica its turn */
	struct timer hb_timer, end_timer;
	struct store_call *hb_call; /* heartbeat renewal or release */
	struct lt_op *ops;
	lt_lost_cb on_lost;
	void *on_lost_arg;
	void *data;
	lt_renew_cb release_cb; /* lease_release_then() */
	void *release_arg;
	char owner[STORE_ID_MAX + 1];
	char rvn[LT_ID_LEN + 1];
	char hb_rvn[LT_ID_LEN + 1];
	struct trace_ctx acq_ctx;   /* its acquire's span: renewals link to it */
	struct trace_span *hb_span; /* the Lock.Renew or Lock.Release of hb_call */
};

struct locktable {
	struct clock *clock;
	struct store *store;
	struct obs *obs;
	char *holder_label;
	int64_t retention_ms;
	unsigned seen_max, seen_count;
	struct lock **buckets;
	size_t nbuckets, nlocks;
	struct seen *lru_head, *lru_tail; /* most recently seen first */
	struct lease *leases;
	struct lt_hook *hooks;
	struct lt_op *orphans;	      /* ops of released leases, answering 0 */
	struct lt_wait *orphan_waits; /* waits ended with a write in flight */
	struct foreign *foreign;      /* lt_foreign requests in flight */
	struct lt_scan *scans;	      /* lt_scan pages in flight */
	struct lt_tx *txs;	      /* lt_transact calls in flight */
	uint64_t nleases, nwaits, releases_in_flight;
	struct tracer *tracer; /* NULL: no spans (lt_set_tracer) */
};

/* lt_lock.c: the hash table of locks, the holders seen, shared helpers */
/* Frees a wait's or a lease's holder label unless it is the table's. */
void lt_holder_free(struct locktable *t, char *holder);
/* The lock of name, made when create (NULL when not, or out of memory). */
struct lock *lt_lock_get(struct locktable *t, const char *name, bool create);
void lt_lock_unref(struct lock *l);
/* Frees l when nothing needs it any more (idle and not seen held). */
void lt_lock_maybe_free(struct lock *l);
/* Frees l's memory, the locktable going away (lt_free). */
void lt_lock_destroy(struct lock *l);
/* Notes what a read or write found at l's key (the holder seen, since
 * when, on our clock; announcements). */
void lt_lock_see(struct lock *l, const struct lock_item *item);
/* The poll interval of a holder's lease: a third of it, at most
 * LT_MAX_POLL_MS. */
int64_t lt_poll_interval(int64_t lease_ms);

/* locktable.c, for lease.c and lt_testing.c */
void lt_lock_kick(struct lock *l);
/* A lock's poll timer is due. */
void lt_poll_due(void *arg);
/* An answer about a lock this locktable holds (a renewal's, a hand-off's):
 * notes another replica's announcement on it. */
void lt_holder_saw(struct lock *l, const struct lock_item *item);
/* The release of a yielding lease was answered with res. */
void lt_yield_done(struct lock *l, const struct store_result *res);
void lt_fire_refusal(struct lock *l);
int64_t lt_ttl(struct locktable *t);
void lt_error_from(struct lt_error *e, const struct locktable *t, const char *name,
		   const struct store_result *res);

/* lt_item.c: what an item read at a lock's key is used for. */
enum lt_item_use {
	LT_ITEM_TO_ACQUIRE, /* an acquire decides on it, and may write: fence + 1
			       must be a token */
	LT_ITEM_ACQUIRED,   /* an acquire wrote it: its fence is the token */
	LT_ITEM_TO_SHOW	    /* lt_get_state shows it: as it is, if a lock */
};

/* Judges item, read at the key of lock name, for use. true: absent, or a
 * lock usable so. false: it is not a lock (its _type is not LOCK, or it has
 * an owner without rvn or leaseMs: error_type "NotALock") or its fence
 * cannot be or give a fencing token ("BadFence"); *e is then a STORE_FATAL
 * error naming the lock, the table and what is wrong. Both stores' items
 * are judged here, before anything is written or answered on them. */
bool lt_item_judge(const struct locktable *t, const char *name, const struct lock_item *item,
		   enum lt_item_use use, struct lt_error *e) __attribute__((warn_unused_result));

/* lt_item_judge, with the common case inline: every acquire and read
 * checks an item, and nearly every item is a well-formed lock. */
__attribute__((warn_unused_result)) static inline bool
lt_item_check(const struct locktable *t, const char *name, const struct lock_item *item,
	      enum lt_item_use use, struct lt_error *e)
{
	if (!item->exists)
		return true;
	if (item->type[0] == 'L' && item->type[1] == 'O' && item->type[2] == 'C' &&
	    item->type[3] == 'K' && item->type[4] == '\0' &&
	    (!item->has_owner || (item->has_rvn && item->has_lease)) &&
	    (!item->has_fence || (!item->fence_bad && item->fence >= 1 && item->fence < INT64_MAX)))
		return true;
	return lt_item_judge(t, name, item, use, e);
}

struct foreign;
/* lt_foreign.c, lt_scan.c: requests in flight dropped (lt_free). */
void lt_foreign_free_all(struct locktable *t);
void lt_scan_free_all(struct locktable *t);
void lt_tx_free_all(struct locktable *t);

/* lease.c, for locktable.c and lt_foreign.c */
/* l is lost (or, LT_RELEASED, ended) for reason, as a renewal finds it. */
void lt_lease_lose(struct lease *l, enum lt_loss reason);
/* A check of l's lease was refused by item (a fenced transaction's): l is
 * lost as a renewal refused so would lose it (taken_over, deleted,
 * released, forced). Returns the loss, or l's loss if it had one. */
enum lt_loss lt_lease_refused(struct lease *l, const struct lock_item *item);
/* What remains of the lease item shows, on this replica's clock (see
 * lt_state.remaining_ms); 0 when it shows none. */
int64_t lt_remaining_ms(struct locktable *t, const char *name, const struct lock_item *item);
/* The lt_state of item, read at name's key. */
void lt_state_of(struct locktable *t, const char *name, const struct lock_item *it,
		 struct lt_state *st);
const char *lease_rvn(const struct lease *l);
struct lease *lease_start(struct lt_wait *w, const struct lock_item *item);
void lease_free_all(struct locktable *t);
/* Hands l's lock to w with one conditional write on l's rvn. */
bool lt_handoff(struct lock *l, struct lease *from);

#endif
