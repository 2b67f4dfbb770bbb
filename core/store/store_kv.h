/*
 * store_kv: the commit of a script or a MULTI/EXEC over the lock keyspace
 * (gateway/script) — several lock items validated and written as one
 * atomic step, on any struct store.
 *
 * A script reads its keys first (store READs), runs, and commits what it
 * read and wrote as one store_kv_commit(): every key it read carries a
 * condition that the item is still the one it read (struct store_kv_op
 * .seen), every key it changed carries its write. Either all conditions
 * hold and every write applies, or nothing applies (REFUSED): the caller
 * runs the script again on fresh reads. That is optimistic concurrency
 * control; it makes each commit serializable with every other write of the
 * table (the lease core's included: they change what the conditions look
 * at).
 *
 * Conditions (what the script saw):
 *   NONE     no item at the key: attribute_not_exists(pk).
 *   FREE     an item without owner (released, or deleted by a script: the
 *            item stays as a tombstone keeping its fence): attribute_exists
 *            (pk) AND attribute_not_exists(owner) AND fence = :fence
 *            (attribute_not_exists(fence) without .has_fence), no slot
 *            held shared (scount absent or 0: store_shared.h) and no
 *            readers admitted (radmit absent or the string "-"). The
 *            fence rises on every acquire, so a key taken and freed again
 *            in between fails it.
 *   VERSION  the exact version read: rvn = :rvn (every write of an owner,
 *            the lease core's renewals too, makes a new rvn). With
 *            .alive_after > 0 also expRvn = :rvn AND expAt >
 *            :alive_after: a key the script saw alive by its expiry is
 *            still alive at the commit's clock (an extend cannot revive a
 *            lease that ran out while the script ran).
 *   HOLDER   owner = :owner AND fence = :fence: a lease of the lease core
 *            seen held (not rvn: its heartbeats change rvn and must not
 *            fail scripts that only read it).
 * Writes:
 *   CHECK    none (DynamoDB: a ConditionCheck).
 *   SET      SET owner, rvn, leaseMs, _type LOCK, expAt, expRvn = rvn,
 *            ttl, hfields = .hash (REMOVE hfields without one); REMOVE
 *            holder; ADD fence 1 when .raise_fence (the key becomes held
 *            by a new holder: from absent or expired, or another owner).
 *   FREE     REMOVE owner, leaseMs, holder, expAt, expRvn, hfields; SET
 *            ttl.
 *            The item stays (a tombstone: fence and rvn kept), so a NONE
 *            or FREE condition of an older read cannot pass.
 *
 * Results: OK; REFUSED (a condition failed; .index the first op known to
 * have failed, or n when the store cannot tell); TRANSIENT (throttling,
 * a transaction conflict, after the store's retries: the caller may run
 * again); FATAL with .message.
 *
 * DynamoDB: one TransactWriteItems (at most STORE_KV_MAX_OPS items; one
 * key too, for now, where an UpdateItem would cost half) with a
 * ClientRequestToken made once per commit, so that the store's retries of
 * an answer lost on the way apply the commit once. The embedded store
 * applies it at completion, atomically.
 */
#ifndef LG_STORE_KV_H
#define LG_STORE_KV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/store/store.h"

#define STORE_KV_MAX_OPS 25 /* keys of one commit (DynamoDB allows 100 items) */

enum store_kv_seen { KV_SEEN_NONE, KV_SEEN_FREE, KV_SEEN_VERSION, KV_SEEN_HOLDER };
enum store_kv_write { KV_W_CHECK, KV_W_SET, KV_W_FREE };

struct store_kv_op {
	const char *name; /* the lock name, 1..STORE_NAME_MAX bytes */
	enum store_kv_seen seen;
	const char *rvn;     /* VERSION */
	const char *owner;   /* HOLDER */
	int64_t fence;	     /* FREE (with has_fence), HOLDER */
	bool has_fence;	     /* FREE: the tombstone has a fence */
	int64_t alive_after; /* VERSION: > 0, expAt must be past it (epoch ms) */
	enum store_kv_write write;
	/* SET */
	const char *new_owner; /* 1..STORE_ID_MAX printable bytes */
	const char *new_rvn;   /* 1..STORE_ID_MAX */
	int64_t lease_ms;      /* > 0 */
	int64_t expires_at;    /* epoch ms */
	bool raise_fence;
	const char *hash; /* SET: the key's hash (store.h lock_item.hash), or NULL */
};

struct store_kv_req {
	unsigned n; /* 1..STORE_KV_MAX_OPS, names distinct */
	const struct store_kv_op *ops;
	int64_t ttl; /* epoch seconds for the TTL attribute, 0 = none */
};

struct store_kv_result {
	enum store_status status;
	unsigned index;		/* REFUSED: the op that failed, or n: unknown */
	const char *error_type; /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
};

/* Submits a commit (copied: the caller's strings need not outlive the
 * call); cb runs once, later, from the loop, unless cancelled with
 * store_cancel. Counted as one STORE_TRANSACT request. NULL on
 * out-of-memory or a request out of the bounds above (no callback). */
struct store_call *store_kv_commit(struct store *s, const struct store_kv_req *req, store_kv_cb cb,
				   void *arg) __attribute__((warn_unused_result));

/* The shape checks every store applies; false with a message (msg of
 * STORE_MSG_MAX bytes). */
bool store_kv_valid(const struct store_kv_req *req, char *msg);

/* For the stores: a deep copy of req in one malloc'd block (free() it),
 * NULL on out-of-memory. */
struct store_kv_req *store_kv_copy(const struct store_kv_req *req);

#endif
