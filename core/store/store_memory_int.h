/*
 * store_memory_int: what store_memory.c (the table, the calls, the
 * operations) and store_memory_scan.c (a scan's page) share. Private to
 * those two files; everything else uses store_memory.h.
 */
#ifndef LG_STORE_MEMORY_INT_H
#define LG_STORE_MEMORY_INT_H

#include "core/store/store_memory.h"
#include "core/store/store_revoke.h"

struct store_sh_set;
struct session_item;

struct mitem {
	struct mitem *next;
	/* Released (no owner): in one of the store's lists of released items
	 * (struct freed_gen), forgotten once released for the retention. An
	 * acquire leaves the item in its list (in_freed stays true), and
	 * freed_ms is then the stamp of the item's last release, which may be
	 * later than its list's: the sweep sorts that out (forget_released). */
	struct mitem *fprev, *fnext;
	int64_t freed_ms;
	bool in_freed;
	bool freed_forced; /* with freed: released by force */
	uint64_t hash;
	char owner[STORE_ID_MAX + 1];
	char rvn[STORE_ID_MAX + 1];
	/* Here, in the bytes the two arrays leave before the next int64, so
	 * that they take none of their own: has_arvn (arvn_hash), has_holder
	 * (holder), has_lease (lease_ms), no_fence and fence_bad (other_type). */
	bool has_arvn, has_holder, has_lease, no_fence, fence_bad;
	/* arvn (ACQUIRE in store.h), kept as store_name_hash of the
	 * acquire's rvn (has_arvn): two ids share one with odds of 2^-64 */
	uint64_t arvn_hash;
	int64_t fence, lease_ms, ttl;
	char *holder; /* the last label written, kept for the next write */
	char *waiter; /* an announced waiter (rare: out of the item), or NULL */
	int64_t waiter_ms;
	/* The last release from outside the holding replica (store.h's
	 * RELEASE with .token): the fence it ended, 0 when none. Not to be
	 * confused with freed_ms, the time of any release. */
	int64_t freed;
	/* Only store_memory_put_raw() makes an item that is no lock: its
	 * _type is not LOCK (other_type, "" when absent; NULL for a lock), it
	 * has no fence (no_fence), or a fence that is no int64 (fence_bad). */
	char *other_type;
	/* the fields few items ever have (rare: out of the item), or NULL
	 * when the item has none of them */
	struct mitem_rare *rare;
	char name[]; /* NUL-terminated */
};

/* What few items ever have: a script's expiry and hash, a lease's secret
 * hash (an adoptable lease), the adopt markers. Kept out of the item (the
 * embedded store holds up to a million locks), made when a write sets one
 * of them and freed when none is left (mem_rare, mem_rare_trim); its bytes
 * and its hash's are counted in the store's. */
struct mitem_rare {
	/* a script's expiry (store.h's lock_item.expires_at) */
	int64_t expires_at;
	char *hfields; /* a script's hash (store.h lock_item.hash), or NULL */
	char exp_rvn[STORE_ID_MAX + 1];
	char secret_hash[STORE_SECRET_HASH_LEN + 1]; /* "" when none */
	char orphan[STORE_ID_MAX + 1];		     /* ORPHAN's marker, "" none */
	char adopted_from[STORE_ID_MAX + 1];	     /* ADOPT's marker, "" none */
	/* A shared name's header (core/store/store_shared.h): its count,
	 * mode and limit, and the slots ever written (nslots of them, any
	 * order, each with its number; NULL: none yet): a few, of up to
	 * STORE_SH_CAP */
	int64_t scount, slimit;
	char smode[8];
	/* a waiting writer's announcement (store_shared.h XANNOUNCE), "" */
	char xwait[STORE_ID_MAX + 1];
	char xwait_rvn[STORE_ID_MAX + 1];
	int64_t xwait_ms;
	/* readers registered behind an exclusive, and admitted by its
	 * release (store_shared.h RWAIT): NULL when absent (never empty) */
	struct store_sh_set *rwaiters, *radmit;
	struct mslot *slots;
	unsigned nslots;
	/* a lock held in session mode (store.h ACQUIRE's .session): its
	 * session's key (NULL: none) and the real lease */
	char *session;
	int64_t slease_ms;
};

/* A slot of a shared name (store_memory_shared.c). */
struct mslot {
	unsigned k; /* its number */
	bool exists, has_owner;
	char owner[STORE_ID_MAX + 1];
	char rvn[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1];
	int64_t fence, lease_ms, ttl;
	bool forced; /* freedBy "force": released by an operator */
};

/* Made by mem_submit from a block not zeroed (pool_take): a new field must
 * be set there. */
struct store_call {
	struct timer timer;		/* a call with latency completes from it */
	struct store_call *prev, *next; /* else in the queue, in order */
	uint64_t seq;
	uint64_t hash; /* of req.name */
	size_t size;
	struct mstore *ms;
	union {
		store_cb cb;
		void (*scan_cb)(void *arg); /* a scan */
		store_tx_cb tx_cb;	    /* a transaction (mem_transact) */
		store_kv_cb kv_cb;	    /* a keyspace commit (mem_kv_commit) */
		store_blob_cb blob_cb;	    /* a blob (store_memory_blob.c) */
		store_chan_cb chan_cb;	    /* a channel (store_memory_chan.c) */
		store_sh_cb sh_cb;	    /* a shared name (store_memory_shared.c) */
		store_session_cb sess_cb;   /* a session item (store_memory_session.c) */
		store_revoke_cb rev_cb;	    /* revocations (store_memory_revoke.c) */
	};
	void *arg;
	/* A scan (req.op STORE_SCAN): its page, at most limit items after
	 * req.name (NULL: from the start). */
	struct store_scan_result *page;
	unsigned limit;
	/* A keyspace commit (store_memory_kv.c): its copy, freed with the
	 * call; NULL for every other call. */
	struct store_kv_req *kv;
	/* A blob's put or get (store_memory_blob.c), a channel's publish
	 * (blob_put) or read (store_memory_chan.c): freed with the call. */
	struct mblob *blob;
	bool blob_put;
	/* A shared name's request (store_memory_shared.c): its copy, freed
	 * with the call. */
	struct mem_sh *sh;
	/* A session item's request (store_memory_session.c): its copy,
	 * freed with the call. */
	struct mem_sess *sess;
	/* A revocation's request (store_memory_revoke.c): its copy, freed
	 * with the call. */
	struct mem_rev *rev;
	/* A batch read (store_memory_batch.c), its completion a scan_cb:
	 * the caller's result; NULL for every other call. */
	struct store_batch_result *batch;
	struct store_req req; /* strings point into text */
	char text[];
};

/* The items released under one stamp_ms (a tick of the sweep), in the
 * order of their release. An acquire does not unlink its item: that would
 * write to its two neighbours, released at other times and, in a big
 * table, out of the CPU's caches (two misses on every acquire). */
struct freed_gen {
	int64_t stamp;
	struct mitem *head, *tail;
};
#define FREED_GENS_MIN 16 /* a retention spans 9 or 10 ticks */

struct mstore {
	struct store base;
	struct clock *clock;
	struct mitem **buckets;
	size_t nbuckets, nitems;
	int64_t latency_ms;
	int64_t op_latency_ms[STORE_OP_COUNT]; /* added to latency_ms, per op */
	/* Calls without latency queue here and complete together from one
	 * zero-delay timer: one timer per batch instead of one per call. */
	struct store_call *q_head, *q_tail;
	uint64_t q_seq;
	struct timer q_timer;
	int64_t retention_ms; /* released items forgotten after this; 0: never */
	/* Released items are stamped, and forgotten, by a sweep timer that
	 * ticks every eighth of the retention while there are any: no clock
	 * read per request. stamp_ms is an upper bound of the time until the
	 * next tick, so an item is never forgotten early, and at most two
	 * ticks late. */
	struct timer sweep;
	int64_t stamp_ms;
	size_t max_items; /* new names refused past this; 0: no cap */
	/* the lists of released items, one per stamp, oldest first: ngens
	 * of gens_cap (at least FREED_GENS_MIN, so the first never fails) */
	struct freed_gen *gens;
	size_t ngens, gens_cap;
	size_t bytes;	    /* memory of the items, names and labels */
	uint64_t forgotten; /* items forgotten, since the start */
	int fail_n;
	enum store_status fail_status;
	const char *fail_type;
	struct mblob *blobs;	   /* store_memory_blob.c */
	struct mchan *chans;	   /* store_memory_chan.c */
	struct msession *sessions; /* store_memory_session.c */
	int sess_lost;		   /* session answers to lose after applying */
	int sess_twice;		   /* session requests to apply twice (a retry) */
	int lock_lost;		   /* lock answers to lose after applying */
	int lock_late;		   /* lock writes to answer TRANSIENT, then apply */
	int64_t lock_late_ms;	   /* ... that much later */
	struct store_call *late;   /* those waiting to apply (prev/next) */
	int grant_refused;	   /* GRANTs to answer REFUSED after applying */
	struct mrevs *revokes;	   /* store_memory_revoke.c */
	char table[];
};

/* A blob (store_blob.h): its key "<kind>#<id>" and bytes, in one malloc. */
struct mblob {
	struct mblob *next;
	size_t len;
	char *key;
	unsigned char data[];
};

struct store_call *mem_blob_put(struct store *s, const char *kind, const char *id, const void *data,
				size_t len, store_blob_cb cb, void *arg);
struct store_call *mem_blob_get(struct store *s, const char *kind, const char *id, store_blob_cb cb,
				void *arg);
void mem_blobs_free(struct mstore *ms);

struct store_call *mem_chan_publish(struct store *s, const char *id, const char *origin,
				    const void *data, size_t len, int64_t ttl, store_chan_cb cb,
				    void *arg);
struct store_call *mem_chan_read(struct store *s, const char *id, store_chan_cb cb, void *arg);
void mem_chans_free(struct mstore *ms);

/* An exclusive release or XTAKE of it: rwaiters becomes radmit (the
 * old radmit goes; none when nobody registered). store_memory_shared.c. */
void mem_admit_readers(struct mstore *ms, struct mitem *it);

/* The item as a read gives it (it NULL: none). */
void mem_copy_out(const struct mitem *it, struct lock_item *out);

/* The slot of the item named name (hash h): *slot is NULL when none. */
struct mitem **mem_find_slot(struct mstore *ms, const char *name, uint64_t h);

/* The item named name (hash h), made when there is none (the table
 * grown as needed); NULL on out-of-memory or when the store is full. */
struct mitem *mem_item_add(struct mstore *ms, const char *name, uint64_t h);

/* store_memory_kv.c: store_kv_commit() of the embedded store. */
struct store_call *mem_kv_commit(struct store *s, const struct store_kv_req *req, store_kv_cb cb,
				 void *arg);

/* store_memory_session.c: store_session_submit() of the embedded store,
 * and the end of its sessions (store_free). */
struct store_call *mem_session_submit(struct store *s, const struct store_session_req *req,
				      store_session_cb cb, void *arg);
void mem_sessions_free(struct mstore *ms);
/* The session item at key ("SESSION#<replica>#<incarnation>"), or NULL
 * when there is none. */
const struct session_item *mem_session_find(const struct mstore *ms, const char *key);

/* The session item whose key is key (store_session_key), NULL when there
 * is none. store_memory_session.c. */
struct session_item *mem_session_by_key(struct mstore *ms, const char *key);

/* store_memory_revoke.c: store_revoke_submit() of the embedded store, and
 * the end of its revocations (store_free). */
struct store_call *mem_revoke_submit(struct store *s, const struct store_revoke_req *req,
				     store_revoke_cb cb, void *arg);
void mem_revokes_free(struct mstore *ms);

/* An ending with .revoke_session (store_revoke.h), in two steps around
 * the lock's write, which its condition has allowed: mem_revoke_prepare
 * checks the session and the room for the entry (false: nothing may be
 * written, res says why: REFUSED session_gone, TRANSIENT RevocationsFull
 * or OutOfMemory; the caller adds the item), then, once the lock is
 * written, mem_revoke_commit writes the entry and raises revSeq (it
 * cannot fail). */
struct mem_rev_end {
	struct session_item *session;
	struct mrevs *set; /* the session's entries, made when it had none */
	bool made, present;
	char *name; /* the entry's copy of the name, unless present */
	int64_t fence;
	char key[STORE_REVOKE_KEY_LEN + 1];
};
bool mem_revoke_prepare(struct mstore *ms, const struct store_req *r, struct mem_rev_end *e,
			struct store_result *res) __attribute__((warn_unused_result));
void mem_revoke_commit(struct mstore *ms, struct mem_rev_end *e);

/* store_memory_batch.c: store_batch_read() of the embedded store. */
struct store_call *mem_batch_read(struct store *s, struct store_batch_result *res,
				  void (*cb)(void *arg), void *arg);

/* store_memory_shared.c: store_sh_submit() of the embedded store. */
struct store_call *mem_sh_submit(struct store *s, const struct store_sh_req *req, store_sh_cb cb,
				 void *arg);

/* A failure the test asked for (store_memory_fail), when one is due:
 * true with its status, type and message (STORE_MSG_MAX bytes). */
bool mem_injected(struct mstore *ms, enum store_status *status, const char **type, char *msg);

/* Gives a call back to the pool (its commit copy freed). */
void mem_call_free(struct store_call *call);
/* A call of sizeof(struct store_call) from the pool, zeroed; NULL on OOM. */
struct store_call *mem_call_new(struct mstore *ms);

/* The item's block of rare fields, made (all of them unset, its bytes
 * counted) when it has none; NULL on out-of-memory (the item unchanged). */
struct mitem_rare *mem_rare(struct mstore *ms, struct mitem *it);
/* Frees the item's block of rare fields when none of them is set any
 * more, its bytes given back. */
void mem_rare_trim(struct mstore *ms, struct mitem *it);
/* Sets the item's script hash (NULL: none) in its block, which it has
 * (mem_rare); the bytes counted. A copy failing leaves none. */
void mem_rare_set_hfields(struct mstore *ms, struct mitem *it, const char *hash);

/* Removes the item at *slot (out of its list of released items too),
 * its bytes given back. */
void mem_item_delete(struct mstore *ms, struct mitem **slot);

/* store_memory_retention.c. The sweep's period: an eighth of the
 * retention, at least 10 ms. */
int64_t mem_sweep_tick(const struct mstore *ms);
/* The item was released: stamped now (give or take a tick) and put in
 * the newest list unless it is in one already. */
void mem_freed_link(struct mstore *ms, struct mitem *it);
/* Takes the item out of its list of released items, if in one. */
void mem_freed_unlink(struct mstore *ms, struct mitem *it);
/* Forgets the items released for the retention or longer by now. */
void mem_forget_released(struct mstore *ms, int64_t now);
/* The sweep timer's callback (arg: the mstore). */
void mem_sweep_due(void *arg);

/* Fills the page of the scan call (call->page, call->limit; call->req.name
 * the name of its cursor, NULL from the start, call->hash its hash).
 * False on out-of-memory. */
bool mem_scan_page(struct mstore *ms, struct store_call *call) __attribute__((warn_unused_result));

#endif
