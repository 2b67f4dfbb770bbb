/*
 * store_shared: the items of a name held shared — readers of a
 * reader-writer lock, or holders of a counting semaphore
 * (docs/design/shared-locks.md). The first step of that design: the
 * items and their conditional writes; nothing in the lease core uses them
 * yet.
 *
 * A shared name keeps a header, its lock item LOCK#<name> (store.h: an
 * exclusive holder's owner, rvn, fence stay there), with
 *   smode   "SHARED" (readers) or "LIMIT" (a semaphore),
 *   slimit  the semaphore's n (LIMIT only),
 *   scount  the slots held now,
 * and one item per slot k < cap at SLOT#<k>#<name> (sort key LOCK when
 * the table has one), _type SLOT: owner, rvn, fence (the slot's own),
 * leaseMs, holder, ttl. scount counts the slots whose owner a grant set
 * and no release or removal has taken away; smode and slimit mean
 * something only while scount > 0 (a release leaves them).
 *
 * Operations (store_sh_req.op) and their conditions:
 *   GRANT    one transaction of two writes.
 *            Header: attribute_not_exists(owner) (no exclusive holder),
 *            attribute_not_exists(xwait) (no writer waiting: XANNOUNCE),
 *            _type absent or LOCK; then
 *              .first:  scount absent or 0; SET smode, slimit (LIMIT) or
 *                       REMOVE slimit (SHARED), _type LOCK; ADD scount 1;
 *                       SHARED also ADD fence 1 (the readers' group token,
 *                       a new phase);
 *              else:    scount > 0 AND scount < :cap AND smode = :mode AND
 *                       (LIMIT) slimit = :cap; ADD scount 1 — or, with
 *                       .seen_rvn (a takeover that fills the slot it
 *                       frees), the same conditions without scount < :cap
 *                       (every slot may be held) and no write: the count
 *                       stays.
 *            With .announced (a semaphore's waiter whose turn stands),
 *            xwait = :owner instead of attribute_not_exists(xwait).
 *            Header, every variant: fence = :seen_fence (absent for 0).
 *            Slot: attribute_not_exists(owner), or with .seen_rvn rvn =
 *            :seen_rvn; and fence = :seen_slot_fence (absent for 0); SET
 *            owner, rvn, leaseMs, holder (REMOVE without one), _type SLOT,
 *            ttl; ADD fence 1.
 *            OK: both items after, as the write made them from what the
 *            caller saw (TransactWriteItems answers no items): the token
 *            is the header's fence (SHARED) or the slot's (LIMIT).
 *            REFUSED: .index 0 (the header) or 1
 *            (the slot) and, where the store can tell, that item as it
 *            was.
 *            A retry of a GRANT whose answer was lost applies once
 *            (DynamoDB: the same ClientRequestToken), but an attempt that
 *            finds its own owner and rvn on the slot is not answered OK:
 *            the caller reads and sees it.
 *   RENEW    slot only: owner = :owner AND (rvn = :seen_rvn OR rvn =
 *            :rvn); SET rvn, leaseMs, holder, ttl. Never creates an item.
 *   RELEASE  one transaction: slot owner = :owner, REMOVE owner, leaseMs,
 *            holder SET ttl (and freedBy "force", freed = fence with
 *            .forced; a GRANT removes both); header scount > 0, ADD
 *            scount -1.
 *   REMOVE   a waiter ends a crashed holder without taking its slot: as
 *            RELEASE, but the slot's condition is rvn = :seen_rvn (the rvn
 *            the waiter saw unchanged for a whole lease on its own clock)
 *            AND owner = :owner (the holder it watched).
 *   READ     the header and count slots from .slot (0: every one from
 *            .slot to cap - 1), strongly consistent (DynamoDB: one
 *            BatchGetItem, its UnprocessedKeys asked again): a reader
 *            looking for a free slot reads a few, not all.
 *
 *   XANNOUNCE  a writer waiting for readers says so on the header: SET
 *            xwait = :owner, xwaitRvn = :rvn, xwaitMs = :lease_ms if
 *            (scount > 0 OR radmit is a set) AND (attribute_not_exists(xwait) OR xwait =
 *            :owner): set once, refreshed (a new rvn) by each of its
 *            polls. Every GRANT is refused while it stands (its header
 *            condition has attribute_not_exists(xwait)), so new readers
 *            stop coming and the writer is granted when the last goes.
 *   XCLEAR   REMOVE xwait, xwaitRvn, xwaitMs if xwaitRvn = :seen_rvn: the
 *            writer, done waiting, or a reader that saw the announcement
 *            unchanged for LT_RESERVE_WINDOWS of its xwaitMs (its writer
 *            gone) takes it away.
 *   XTAKE    a reader ends a crashed exclusive holder: REMOVE owner,
 *            leaseMs, holder, secretHash (SET ttl) if owner = :owner AND
 *            rvn = :seen_rvn, the rvn the reader saw unchanged for a whole
 *            lease on its own clock. Its own renewal then finds the lock
 *            taken over. It admits the registered readers as a release
 *            does (below).
 *
 * Phase-fair admission (docs/design/shared-locks.md, "No starvation"):
 *   RWAIT    a reader waiting behind an exclusive holder or a writer's
 *            announcement registers: ADD rwaiters {:owner} if
 *            (attribute_exists(owner) OR attribute_exists(xwait)) AND
 *            (rwaiters absent OR size(rwaiters) < STORE_SH_SET_MAX).
 *            REFUSED: nothing to wait behind any more, or the set is full.
 *   RUNWAIT  a registered reader gives up: DELETE rwaiters {:owner}, and
 *            with .admitted (it saw itself in radmit) radmit {:owner}, if
 *            _type exists (never makes an item). radmit may be the string
 *            "-" (below), from which DynamoDB refuses to DELETE a set.
 *   RCLEAR   a waiting writer drops the admissions of crashed readers:
 *            REMOVE radmit if radmit = :seen_set (the set it saw stand
 *            still a whole lease on its own clock).
 *   Every release of an exclusive lease (store.h RELEASE) and XTAKE moves
 *   rwaiters to radmit in its own write (REMOVE rwaiters SET radmit =
 *   if_not_exists(rwaiters, "-"): radmit is the string "-", not a set,
 *   when nobody waited, so the write costs nothing more). An exclusive
 *   ACQUIRE is refused while radmit is a set (store.h), XANNOUNCE is
 *   allowed while it is, and a GRANT with .admitted passes the header's
 *   xwait condition by contains(radmit, :owner) instead; a GRANT with
 *   .registered also does DELETE rwaiters {:owner}, and radmit {:owner}
 *   with .admitted.
 *
 *   CHECK    a fenced write's conditions for a shared holder (store_tx.h:
 *            the ConditionChecks at the head of its transaction; on its
 *            own, a transaction of the two checks alone, writing nothing):
 *            header attribute_not_exists(owner) (no exclusive holder),
 *              SHARED also fence = :token (the readers' group token: the
 *              phase the reader was granted in);
 *            slot owner = :owner (the holder),
 *              LIMIT also fence = :token (the slot's own token).
 *            OK (no items: the checks read nothing back). REFUSED: .index
 *            0 (the header) or 1 (the slot), the first that failed, and
 *            that item as it was (or absent).
 *
 * Results: OK, REFUSED (GRANT, RENEW, RELEASE, REMOVE, XANNOUNCE, XCLEAR,
 * XTAKE, RWAIT, RCLEAR, CHECK), TRANSIENT
 * (throttling, a transaction conflict, after the store's retries),
 * NO_TABLE, FATAL with .message. Both stores have shared items
 * (store_memory_shared.c, dynamodb/ddb_shared.c); a store without them
 * would answer NULL to store_sh_submit (no callback).
 */
#ifndef LG_STORE_SHARED_H
#define LG_STORE_SHARED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/store/store.h"

/* slots of a name at most: with the header, one BatchGetItem of 100 keys */
#define STORE_SH_CAP 99

/* readers registered (rwaiters) or admitted (radmit) at most: a reader
 * past it waits unregistered, as before phase-fair admission */
#define STORE_SH_SET_MAX 32

/* A string set of the header (rwaiters, radmit): n ids, n = 0 absent. */
struct store_sh_set {
	unsigned n;
	char id[STORE_SH_SET_MAX][STORE_ID_MAX + 1];
};

/* Whether id is in s. */
bool store_sh_set_has(const struct store_sh_set *s, const char *id);

enum store_sh_op {
	STORE_SH_GRANT,
	STORE_SH_RENEW,
	STORE_SH_RELEASE,
	STORE_SH_REMOVE,
	STORE_SH_READ,
	STORE_SH_XANNOUNCE,
	STORE_SH_XCLEAR,
	STORE_SH_XTAKE,
	STORE_SH_RWAIT,
	STORE_SH_RUNWAIT,
	STORE_SH_RCLEAR,
	STORE_SH_CHECK
};
enum store_sh_mode { STORE_SH_SHARED, STORE_SH_LIMIT };

struct store_sh_req {
	enum store_sh_op op;
	const char *name; /* 1..STORE_NAME_MAX bytes */
	enum store_sh_mode mode;
	unsigned cap;	      /* 1..STORE_SH_CAP: the semaphore's n, or readers' cap */
	unsigned slot;	      /* < cap; READ: the first slot read */
	unsigned count;	      /* READ: slots read, 0: to the last; slot + count <= cap */
	const char *owner;    /* GRANT: the new holder; RENEW/RELEASE/REMOVE/CHECK: it */
	const char *rvn;      /* GRANT/RENEW: the new rvn */
	const char *seen_rvn; /* GRANT: a takeover's watched rvn, or NULL;
				 RENEW: the rvn last written; REMOVE: watched */
	bool first;	      /* GRANT: the first slot of a phase (scount 0) */
	bool admitted;	      /* GRANT: owner is in radmit (passes xwait) */
	bool registered;      /* GRANT: owner may be in rwaiters or radmit */
	const struct store_sh_set *seen_set; /* RCLEAR: radmit as seen (n > 0) */
	/* GRANT: the fences of the items the caller read (0: none or no
	 * item), conditions of the write: so the tokens after it are known
	 * without a read (a SHARED first grant's header fence + 1, a slot's
	 * fence + 1) and an attempt never lands after another grant */
	int64_t seen_fence;	 /* the header's */
	int64_t seen_slot_fence; /* the slot's */
	const char *holder;	 /* GRANT/RENEW: label, or NULL */
	int64_t lease_ms;	 /* GRANT/RENEW: > 0 */
	int64_t ttl;		 /* epoch seconds, 0 = no TTL attribute */
	/* GRANT: the waiter's own announcement (XANNOUNCE, owner) stands on
	 * the header and takes its place: xwait = :owner instead of absent (a
	 * semaphore's waiter that waited a poll announces itself, so that
	 * holders churning on another replica do not keep its slot; it clears
	 * the announcement with XCLEAR once granted) */
	bool announced;
	/* RELEASE: an operator's (LOCK.FORCE-RELEASE): the slot keeps
	 * freedBy "force" (lock_item.freed_forced), so that its holder's next
	 * renewal, refused, reports the loss as forced; a GRANT removes it */
	bool forced;
	int64_t token; /* CHECK: the holder's token (> 0) */
};

/* A slot as read: its item (store.h's lock_item; type "SLOT"). */
struct store_sh_header {
	struct lock_item lock; /* the header's lock attributes */
	bool has_scount;
	int64_t scount;
	char smode[8]; /* "SHARED", "LIMIT" or "" */
	int64_t slimit;
	/* a waiting writer's announcement (XANNOUNCE), "" when none */
	char xwait[STORE_ID_MAX + 1];
	char xwait_rvn[STORE_ID_MAX + 1];
	int64_t xwait_ms;
	/* readers registered behind an exclusive (RWAIT), and those its
	 * release admitted; radmit.n > 0 only while radmit is a set */
	struct store_sh_set rwaiters, radmit;
};

struct store_sh_result {
	enum store_status status;
	unsigned index; /* REFUSED: 0 the header, 1 the slot, 2 unknown */
	/* OK (and REFUSED where known): the header, and the slot of the
	 * request (GRANT/RENEW/RELEASE/REMOVE: slots[0] only) or the slots
	 * read (READ: slots[i] is slot .slot + i, nslots of them); valid
	 * during the callback only */
	struct store_sh_header header;
	unsigned nslots;
	struct lock_item *slots;
	const char *error_type; /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
};

/* Submits req (copied: the caller's strings need not outlive the call);
 * cb runs once, later, from the loop, unless cancelled with store_cancel.
 * NULL on out-of-memory, a request out of the bounds above, or a store
 * without shared items (no callback then). */
struct store_call *store_sh_submit(struct store *s, const struct store_sh_req *req, store_sh_cb cb,
				   void *arg) __attribute__((warn_unused_result));

/* The shape checks every store applies. */
bool store_sh_valid(const struct store_sh_req *req);

/* The key of slot k of name: "SLOT#<k>#<name>" into buf (room for
 * STORE_SH_KEY_MAX + 1 bytes). */
#define STORE_SH_KEY_MAX (STORE_NAME_MAX + 16)
void store_sh_slot_key(const char *name, unsigned k, char *buf);

#endif
