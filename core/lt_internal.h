/*
 * lt_internal: the lock table's parts, shared inside core/ (nothing outside
 * core/ includes it). By concept:
 *  - the table (struct locktable) and the ids it writes;
 *  - a lock (struct lock): what this process knows of one name, its queue
 *    of waits, the holder seen (struct seen: lt_lock.c) and its turn among
 *    replicas (enum lock_state);
 *  - a wait (struct lt_wait, enum wait_state): one acquire, from its call
 *    to its answer and, when it ends with its write in flight, to that
 *    write's answer (locktable.c);
 *  - the lock's machine as leases drive it: kick, poll, hand-off, yield
 *    (locktable.c);
 *  - items read at a lock's key: judged (lt_item.c), shown (lt_state.c);
 *  - requests by name that hold no lock: foreign renewals and releases,
 *    scans, transactions.
 * A lease (struct lease) has its own header, core/lease.h.
 */
#ifndef LG_LT_INTERNAL_H
#define LG_LT_INTERNAL_H

#include "lib/base/lg_assert.h"
#include "core/locktable.h"
#include "core/lt_session.h"
#include "core/lt_swatch.h"
#include "lib/base/pool.h"
#include "core/trace.h"

#define LT_SH_BUCKETS 1024 /* t->sh_waits: lists by name hash */
#define LT_XSEEN      64   /* t->xseen: writers' announcements readers saw */
/* The ids this process writes (owners, rvns, announcements: store_new_id). */
#define LT_ID_LEN 32

/* What a waiter saw of a held slot of a shared name (lt_shared.c,
 * lt_shared_reap.c): its rvn, since when (our clock: the return of the
 * read that first showed it), for how long a lease. */
struct sh_watch {
	char rvn[STORE_ID_MAX + 1];
	int64_t since, lease_ms;
};

/* A store_session READ of a lock's session-mode watch as sent: when, and
 * which session the watch watched then (a number, not the key: see
 * lt_swait.c). */
struct lt_sread {
	int64_t sent_ms;
	uint64_t gen;
	struct trace_span *span; /* a try's: its Lock.SessionRead (lt_swait_span_end) */
};

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
	/* The holder is in session mode (the item names a session): the
	 * watch that judges it (lt_swait.c), NULL for every other holder.
	 * lease_ms above is then the item's 10-year leaseMs, never counted:
	 * the watch decides. */
	struct lt_swait *sw;
};

/* A free item announced for another replica's waiter is left to it for
 * this many of its announced poll intervals (see locktable.c). */
#define LT_RESERVE_WINDOWS 2

/* A lock's turn among replicas, on the holding side (see "Fair across
 * replicas" in locktable.c). Changed only by lt_lock_set_state(), which
 * checks its table of legal moves. */
enum lock_state {
	LOCK_OURS,	/* no other replica's announcement seen while held here */
	LOCK_YIELD_DUE, /* one seen: hand on one round, then release to the store */
	LOCK_YIELDING,	/* released to the store for it, the release's answer pending */
	/* Yielding, and a lease won here meanwhile (a try overtaking the
	 * release) saw the announcement gone: its release hands on locally. */
	LOCK_YIELDING_NOT_DUE,
	LOCK_STATE_COUNT
};

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
	/* poll_call's span when it is a session READ or KILL (lt_swait.c),
	 * ended with its answer or its cancel (lt_swait_span_end) */
	struct trace_span *poll_span;
	struct timer poll_timer;
	struct seen *seen; /* the holder seen, NULL when none */
	/* readers seen holding it while an exclusive waits here: their
	 * watch (core/lt_shared.h), NULL when none */
	struct sh_reaper *reaper;
	/* readers registered behind the lease held here, as its last
	 * answer showed (lt_holder_saw): its release is not handed on */
	bool readers_behind;
	/* Fair across replicas (locktable.c). Waiting side: what the store
	 * showed, not a lifecycle of ours — ann_on_item follows the items read
	 * (lt_lock_see) as much as our own writes, and elsewhere is a streak of
	 * answers, both facts independent of the requests in flight. */
	struct store_call *ann_call; /* our announce or withdraw in flight */
	bool ann_on_item;	     /* ann is (or may be) on the item */
	bool elsewhere;		     /* reads find it held by another owner ... */
	int64_t elsewhere_since;     /* ... since this answer (monotonic ms) */
	int64_t ann_ms;		     /* the poll interval we announced */
	/* Holding side: */
	enum lock_state state;	 /* its turn: lt_lock_set_state() */
	unsigned round_left;	 /* local hand-offs still due before yielding */
	int64_t turn_start;	 /* when the lock came to this replica from the store */
	char ann[LT_ID_LEN + 1]; /* our announcement's id, "" when none */
	char name[];
};

/* Moves l to state to (LG_ASSERT on a move not in lt_lock.c's table; the
 * move is made either way). */
void lt_lock_set_state(struct lock *l, enum lock_state to);
/* Another replica's announcement is to be honoured: LOCK_YIELD_DUE or
 * LOCK_YIELDING. */
static inline bool lt_lock_yield_due(const struct lock *l)
{
	return l->state == LOCK_YIELD_DUE || l->state == LOCK_YIELDING;
}
/* A release for another replica's turn is in flight. */
static inline bool lt_lock_yielding(const struct lock *l)
{
	return l->state == LOCK_YIELDING || l->state == LOCK_YIELDING_NOT_DUE;
}

/* A wait's life (locktable.c). Changed only by wait_set_state(), which
 * checks its table of legal moves. A wait that waits (lt_wait.wait) is in
 * its lock's queue while QUEUED or WRITING; a try never is. */
enum wait_state {
	WAIT_NEW,      /* made by lt_acquire, not started */
	WAIT_QUEUED,   /* in the queue, nothing of its own in flight: the
			  lock's poll (or its write) reads for it */
	WAIT_REFUSING, /* a try refused here (a local lease holds the lock):
			  answered from the loop (its timer) */
	WAIT_READING,  /* a try's read in flight (the lock was seen held) */
	WAIT_WRITING,  /* its acquire write in flight, or just answered; a
			  hand-off's when handoff */
	WAIT_ORPHANED, /* answered (or cancelled) with its write in flight:
			  in t->orphan_waits, gives back what the write takes */
	WAIT_HANDBACK, /* its hand-off failed: in t->orphan_waits, carries the
			  release of the lease it took the lock from */
	WAIT_ENDED,    /* freed (wait_free) */
	WAIT_STATE_COUNT
};

struct lt_wait {
	struct locktable *t;
	struct lock *lock;
	struct lt_wait *prev, *next; /* in lock's queue, or t->orphan_waits */
	enum wait_state state;	     /* wait_set_state() */
	/* Facts, not lifecycle: what was asked (wait: queue rather than try),
	 * and what the write in flight is (takeover: on a holder's rvn;
	 * handoff: a local hand-off; took_waiter: it removes an announcement). */
	bool wait, takeover, handoff, took_waiter;
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
	lt_acquire_cb cb;
	void *arg;
	void (*answered)(void *arg);
	int64_t lease_ms;
	char *holder;	    /* t->holder_label (shared) or a copy of its own */
	struct timer timer; /* timeout, or a deferred refusal */
	struct store_call *call;
	int64_t send_ms;
	struct lt_sread sread; /* a try's store_session READ in flight (lt_swait.c) */
	char owner[STORE_ID_MAX + 1];
	char rvn[LT_ID_LEN + 1];
	char secret_hash[STORE_SECRET_HASH_LEN + 1]; /* "" when none */
	struct trace_span *span; /* Lock.Acquire / Lock.TryAcquire / Leader.Campaign */
	uint32_t sess_gen;	 /* the session its last write named (lt_replica.c), 0: none */
};

/* Moves w to state to (LG_ASSERT on a move not in locktable.c's table; the
 * move is made either way). */
void lt_wait_set_state(struct lt_wait *w, enum wait_state to);

struct locktable {
	struct clock *clock;
	struct store *store;
	struct obs *obs;
	char *holder_label;
	int64_t retention_ms;
	unsigned seen_max, seen_count;
	uint64_t seen_trims, seen_trim_steps; /* lt_stats: the work of seen_trim */
	struct lock **buckets;
	size_t nbuckets, nlocks;
	struct seen *lru_head, *lru_tail; /* most recently seen first */
	struct lease *leases;
	struct lt_hook *hooks;
	struct lt_op *orphans;	      /* ops of released leases, answering 0 */
	struct lt_wait *orphan_waits; /* waits ended with a write in flight */
	struct foreign *foreign;      /* lt_foreign requests in flight */
	struct adopt *adopts;	      /* lt_adopt requests in flight */
	struct lt_scan *scans;	      /* lt_scan pages in flight */
	struct lt_tx *txs;	      /* lt_transact calls in flight */
	/* lt_sh_acquire waits (lt_shared.c), by their name's hash, so that an
	 * exclusive release asks about its own name's, not every wait */
	struct sh_wait *sh_waits[LT_SH_BUCKETS];
	/* Writers' announcements this replica's readers saw (lt_shared.c,
	 * behind_writer), by their rvn's hash: the watch of one outlives the
	 * wait or try that began it, so a crashed writer's is cleared though
	 * no one reader waits LT_RESERVE_WINDOWS of its interval (tries, and
	 * waits admitted past it by each release). A collision forgets one:
	 * its watch starts again, as a wait's own would. */
	struct sh_watch xseen[LT_XSEEN];
	uint64_t nleases, nwaits, releases_in_flight;
	struct tracer *tracer;	    /* NULL: no spans (lt_set_tracer) */
	struct lt_replica *replica; /* LT_HEARTBEAT_REPLICA's session, else NULL */
	/* The id this replica writes as `dead` on a session it kills (a
	 * waiter's KILL, lt_swait.c): drawn at the first, "" until then. */
	char killer_id[LT_ID_LEN + 1];
};

/* --- locks: the hash table, the holders seen (lt_lock.c) --- */

/* The bytes a lock whose name is len bytes long is allocated with: its
 * size class's block (lt_lock.c), or just enough past the largest. */
size_t lt_lock_bytes(size_t len);
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
/* The slot s seen now: its watch goes on, or starts again at now when its
 * rvn changed. True when it stood still a whole lease. */
bool lt_sh_stale(struct sh_watch *wt, const struct lock_item *s, int64_t now);

/* Notes a free item whose slots are held shared (item->scount > 0,
 * core/lt_shared.h): held, never due for a takeover (no write of an
 * exclusive waiter can win while a slot is held), polled every third of
 * poll_lease_ms (the waiting lease's). */
void lt_lock_see_readers(struct lock *l, const struct lock_item *item, int64_t poll_lease_ms);
/* --- session mode, the waiting side (lt_swait.c) ---
 * A lock seen held by a holder in `--heartbeat replica` (its item names a
 * session: lt_item_session) is judged by an lt_swatch (core/lt_swatch.h),
 * kept in its struct seen (seen.sw) while it is so held. Its polls read the
 * lock and its session in one request (store_session READ); the lock table
 * acts on the watch's verdicts (locktable.c). */

/* item is held in session mode (an owner and a session). */
static inline bool lt_item_session(const struct lock_item *it)
{
	return it->exists && it->has_owner && it->session[0] != '\0';
}
/* The watch of l, or NULL (l not seen held in session mode). */
static inline struct lt_swait *lt_swait_of(const struct lock *l)
{
	return l->seen != NULL ? l->seen->sw : NULL;
}
/* Keeps sn's watch while item (just seen) is held in session mode, frees
 * it otherwise (lt_lock_see). Out of memory: no watch, and the holder
 * counts by its 10-year leaseMs: never taken over, never unsafe. */
void lt_swait_keep(struct seen *sn, const struct lock_item *item);
/* Frees sn's watch (NULL allowed). */
void lt_swait_drop(struct seen *sn);
/* The watch of l watches a session-mode holder whose session it can read:
 * its polls are store_session READs (else plain READs, which start it). */
bool lt_swait_reads(const struct lock *l);
/* Sends the READ of l's lock and the session the watch watches (a try's:
 * *rd kept for the feed). NULL on out-of-memory or when the watch watches
 * no session (no callback). */
struct store_call *lt_swait_read(struct lock *l, struct lt_sread *rd,
				 const struct trace_span *parent, store_session_cb cb, void *arg);
/* The same for the queue's poll, whose lt_sread the watch keeps
 * (lt_swait_polled: what the answer is fed with). */
struct store_call *lt_swait_poll(struct lock *l, store_session_cb cb, void *arg);
/* Spans (core/trace.h): lt_swait_read starts rd->span (a child of
 * parent), lt_swait_poll and
 * lt_swait_kill l->poll_span — Lock.SessionRead, Lock.SessionKill, children
 * of the acquire they are for (the try's, the queue head's), with the
 * lock's name and the session's key (leasegate.session.key); the store's
 * requests are their children. The caller ends it with the answer (res)
 * or, res NULL, when it cancels the call: what the READ found
 * (leasegate.session.found, leasegate.session.dead) or whether the KILL
 * applied (leasegate.session.killed); failed on an error. NULL: nothing. */
void lt_swait_span_end(struct trace_span **sp, const struct store_session_result *res);
struct lt_sread lt_swait_polled(const struct lock *l);
/* Feeds l's watch (lt_swait_of(l) not NULL) what a read showed: item as
 * returned now, with sres and its lt_sread when it was a store_session
 * READ, NULL for a plain read or a write's answer (its session not read).
 * A READ sent for a session the watch no longer watches counts as a plain
 * read of the lock. A plain item showing the owner, session and rvn the
 * watch already counts is not fed: it says nothing new, and counting from
 * a later read is never unsafe (WAIT). Returns the verdict, also in *out. */
enum lt_swatch_verdict lt_swait_feed(struct lock *l, const struct lock_item *item,
				     const struct store_session_result *sres,
				     const struct lt_sread *rd, struct lt_swatch_out *out);
/* When to read l again, in ms from now (lt_swatch_poll_ms). */
int64_t lt_swait_poll_ms(const struct lock *l);
/* Marks out's session dead (KILL on out->session_rvn, by this replica's
 * killer_id). NULL on out-of-memory or a session key that does not split
 * (no callback). */
struct store_call *lt_swait_kill(struct lock *l, const struct lt_swatch_out *out,
				 store_session_cb cb, void *arg);
/* The store's check for a takeover verdict's (maps lt_swatch_check). */
enum store_sess_check lt_swait_check(const struct lt_swatch_out *out);
/* The session item names when it is another replica's (not t's own, in
 * --heartbeat replica), into buf (STORE_SESSION_KEY_MAX + 1 bytes); ""
 * otherwise: whom an ending from outside must tell by a revocation
 * (lt_foreign, lt_adopt), and whose session a renewal keeps. */
void lt_other_session(const struct locktable *t, const struct lock_item *it, char *buf);
/* The error of a BAD verdict: FATAL "BadSessionLock", naming the lock. */
void lt_swait_error(struct lt_error *e, const struct lock *l, const char *why);
/* What remains, at now, before this replica's watch of l could take item
 * (held in session mode) over: the watch's counts when it watches that
 * very item, else the whole sleaseMs. */
int64_t lt_swait_remaining(const struct lock *l, const struct lock_item *item, int64_t now);

/* The poll interval of a holder's lease: a third of it, at most
 * LT_MAX_POLL_MS. */
int64_t lt_poll_interval(int64_t lease_ms);
/* Runs the wait_for_refusal hooks of l's name (lt_testing.c registers them). */
void lt_fire_refusal(struct lock *l);

/* --- what every request of the table writes and answers (lt_lock.c) --- */

/* Frees a wait's or a lease's holder label unless it is the table's. */
void lt_holder_free(struct locktable *t, char *holder);
/* The ttl attribute a write puts on the item (0: none). */
int64_t lt_ttl(struct locktable *t);
void lt_error_from(struct lt_error *e, const struct locktable *t, const char *name,
		   const struct store_result *res);
/* e ends an acquire that wrote nothing: a read failed (every write of the
 * acquire before had a definite answer, or it would have ended then), or
 * its write was never sent (store_result.not_sent). Its message says so,
 * for the client to conclude that the lock was not taken by it. */
void lt_error_wrote_nothing(struct lt_error *e);

/* --- the lock's machine, as leases drive it (locktable.c) --- */

/* Starts what l's queue needs next, or frees l when idle. */
void lt_lock_kick(struct lock *l);
/* A lock's poll timer is due. */
void lt_poll_due(void *arg);
/* An answer about a lock this locktable holds (a renewal's, a hand-off's):
 * notes another replica's announcement on it. */
void lt_holder_saw(struct lock *l, const struct lock_item *item);
/* Hands l's lock on from lease from, being released: to the head of the
 * queue with one conditional write on from's rvn (true), or not (false:
 * from's release goes to the store, a yield when l is LOCK_YIELDING). */
bool lt_handoff(struct lock *l, struct lease *from);
/* The release of a yielding lease was answered with res. */
void lt_yield_done(struct lock *l, const struct store_result *res);

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

/* What remains of the lease item shows, on this replica's clock (see
 * lt_state.remaining_ms); 0 when it shows none (lt_state.c). */
int64_t lt_remaining_ms(struct locktable *t, const char *name, const struct lock_item *item);
/* The lt_state of item, read at name's key (lt_state.c). */
void lt_state_of(struct locktable *t, const char *name, const struct lock_item *it,
		 struct lt_state *st);

/* The real lease an item shows: sleaseMs when it is held in session mode
 * (its leaseMs is then STORE_SESSION_LOCK_LEASE_MS), else leaseMs. */
static inline int64_t lt_item_lease_ms(const struct lock_item *item)
{
	return item->session[0] != '\0' && item->slease_ms > 0 ? item->slease_ms : item->lease_ms;
}

/* --- LT_HEARTBEAT_REPLICA, the holder's side (lt_replica.c) --- */

struct lt_replica;
/* Makes and starts t's session when o asks for LT_HEARTBEAT_REPLICA
 * (t->replica); true, nothing made, in lease mode. false: bad options or
 * out of memory. */
bool lt_replica_init(struct locktable *t, const struct lt_options *o);
/* Frees the sessions and drops the writes in flight (lt_free, after
 * lease_free_all). */
void lt_replica_free(struct locktable *t);
/* The session key a write that takes a lock names now, and its generation
 * in *gen: the current session, or a new one when it ended. NULL: out of
 * memory (nothing to write with). Lease mode: never called. */
const char *lt_replica_key(struct locktable *t, uint32_t *gen);
/* The key of session gen while it is the current one and not ended, else
 * NULL (a lease of an ended session: lost). */
const char *lt_replica_key_of(const struct locktable *t, uint32_t gen);
/* m joins session gen (lt_member_join); LT_JOIN_ENDED when gen is no
 * longer the current session. */
enum lt_join lt_replica_join(struct locktable *t, uint32_t gen, struct lt_member *m,
			     int64_t lease_ms, int64_t send_ms);
/* key names one of t's sessions (the current one or the one it
 * replaced): an item of this replica. */
bool lt_replica_is_ours(const struct locktable *t, const char *key);
/* The verification sweep of t (lt_sweep.h), NULL in lease mode. */
struct lt_sweep *lt_sweep_of(const struct locktable *t);
/* The release, conditioned on owner, of a lease lost in session mode
 * (expired, its session ended, or won too late): its item may name a
 * session that still beats, which nobody would ever take over. With
 * session (a key, else NULL) also conditioned on it and on rvn (the one
 * last known): refused by an item still under that owner and session with
 * another rvn (a write of the lease it did not know), it is sent again on
 * that rvn; an item under that owner in another form (per lease, another
 * session) is left. Sent at at_ms (monotonic; at once when it has come):
 * a lease lost to its session's end may still run, on its holder's clock,
 * until then, and its lock must not be free sooner. Carried by the table
 * (a write waiting for at_ms counts as in flight: lt_replica_untracked
 * leaves its item); tried LT_REPLICA_SENDS times in all on errors and such
 * refusals. */
#define LT_REPLICA_SENDS 3
void lt_replica_release_lost(struct lock *lock, const char *owner, const char *rvn,
			     const char *session, int64_t at_ms);
/* The key of session gen, ended or not, while t still has it (the current
 * one or the one before); NULL else. */
const char *lt_replica_key_any(const struct locktable *t, uint32_t gen);
/* A detached lease's item back to per-lease form: a RENEW naming no
 * session, conditioned on owner and rvn (the lease's last), with a new
 * rvn, its lease, holder and TTL. Carried by the table, as above. */
void lt_replica_unsession(struct lock *lock, const char *owner, const char *rvn, const char *holder,
			  int64_t lease_ms);

/* A write on lock (an acquire, a hand-off, an adopt) naming this
 * replica's session was answered TRANSIENT: it may have applied, the item
 * then naming a session that beats while nobody here holds it. The lock
 * is read back (a consistent READ, tried again on errors within
 * LT_REPLICA_SENDS) and the item judged by lt_replica_untracked; unless
 * released then (or held here under owner, the write's), it is read once
 * more lease_ms (the write's lease: the DynamoDB store's deadline for an
 * acquire) later, for an attempt still on its way. Carried by the table
 * (dropped by lt_free), holding a reference on lock. */
void lt_replica_readback(struct lock *lock, const char *owner, int64_t lease_ms);
/* it, read or answered for lock, names this replica's session (the
 * current one or the one it replaced) under an owner nothing here holds or
 * is writing — no lease of lock under that owner, no acquire write
 * (lock->writes) or adopt of lock in flight, no release of it
 * (lock->releasing), no carried write of lock in flight or due: its session
 * beats, so nobody would ever take it over. Releases it, conditioned on
 * that owner, session and rvn (lt_replica_release_lost), and answers true;
 * false (nothing sent) otherwise, and always in lease mode. */
bool lt_replica_untracked(struct lock *lock, const struct lock_item *it);
/* Untracked items released (lt_replica_untracked), for tests. */
uint64_t lt_replica_orphans(const struct locktable *t);
/* lt_adopt.c: an adopt of lock is under way (its read or its write). */
bool lt_adopt_on(const struct locktable *t, const struct lock *lock);

/* lt_revoke.c: the holder acting on its session's revocations. */
struct lt_revoker;
struct lt_revoker *lt_revoker_new(struct locktable *t);
/* The revSeq of session gen (lt_replica's generation) rose to rev_seq: a
 * pass acts on its entries (unless one is under way, which goes on to
 * them), then acknowledges it (lt_session_revocations_done). */
void lt_revoker_rose(struct lt_revoker *v, uint32_t gen, int64_t rev_seq);
void lt_revoker_free(struct lt_revoker *v);

/* --- requests by name, holding no lock: in flight, dropped by lt_free --- */

struct foreign;
void lt_foreign_free_all(struct locktable *t); /* lt_foreign.c */
void lt_adopt_free_all(struct locktable *t);   /* lt_adopt.c */
void lt_scan_free_all(struct locktable *t);    /* lt_scan.c */
void lt_tx_free_all(struct locktable *t);      /* lt_transact.c */

/* --- fenced transactions of shared holders --- */

struct sh_lease;
/* lt_shared.c: the locktable of l; and l ended by the item that refused a
 * check of it (as read, or absent; header: the name's header, else l's
 * slot): the loss (lt_sh_refusal_loss), l's own when it had ended before.
 * Its lost callback runs. */
struct locktable *sh_lease_table(const struct sh_lease *l);
enum lt_loss sh_lease_refused(struct sh_lease *l, const struct lock_item *item, bool header);
/* lt_shared.c: the loss an item that refused a shared holder's check
 * shows: its slot as a refused renewal reads it (deleted, forced, or
 * taken over); the header taken over (an exclusive owner, a new phase)
 * while there is one, else deleted. */
enum lt_loss lt_sh_refusal_loss(const struct lock_item *item, bool header);
/* lt_transact.c: l is being freed; its transactions in flight forget it
 * (their answers still come, their refusals end no lease). */
void lt_tx_sh_gone(struct locktable *t, const struct sh_lease *l);

#endif
