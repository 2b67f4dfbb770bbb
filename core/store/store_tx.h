/*
 * store_tx: fenced transactions — a client's writes that commit only while
 * a lease still holds its lock (the reference's IsHeld, "Fencing").
 *
 * One TransactWriteItems whose first item is a ConditionCheck on the lock
 * item, `owner = :owner AND fence = :token` with ALL_OLD on a failure (the
 * CHECK of store.h), followed by the client's items as DynamoDB JSON text.
 * For a shared holder (.shared: a reader, or a semaphore's holder) the
 * first two items are the CHECK of store_shared.h instead: the header's
 * ConditionCheck (no exclusive owner; a reader's group token) and its
 * slot's (its owner; a semaphore holder's token), so the client has one
 * item less (STORE_TX_MAX_ITEMS_SHARED).
 * The text is spliced as it is: the caller (gateway/lease) has validated
 * it (an array of 1..STORE_TX_MAX_ITEMS objects, the tables allowed, no
 * lock item). A ClientRequestToken, new per store_transact() and the same
 * in every retry of it, makes a retried commit apply once (DynamoDB keeps
 * it for 10 minutes).
 *
 * Results:
 *   OK        committed.
 *   REFUSED   cancelled: .index is the first item cancelled (0: the lock
 *             check, so the lease no longer holds the lock; .item is the
 *             lock item then, as read at commit, or absent: deleted; for a
 *             shared holder .check says which check failed, 0 the header,
 *             1 the slot, and .item is that item; the client's items count
 *             from 1 either way), and
 *             .reasons the CancellationReasons of the client's items, a
 *             JSON array in their order ({"Code":"None"} for those that
 *             did not fail).
 *   TRANSIENT throttling, or TransactionConflict, after the retries.
 *   NO_TABLE  a table of the transaction does not exist (DynamoDB's
 *             ResourceNotFoundException does not say which): the lock
 *             table, or one of .tables, the client's other tables
 *             (.ntables of them; none: the lock table it is).
 *   FATAL     anything else (a malformed item, no permission...):
 *             .message has DynamoDB's words. The embedded store answers
 *             FATAL "fenced writes need DynamoDB".
 */
#ifndef LG_STORE_TX_H
#define LG_STORE_TX_H

#include <stddef.h>

#include "core/store/store.h"
#include "core/store/store_shared.h"

#define STORE_TX_MAX_ITEMS	  99		/* the client's; the check makes 100 */
#define STORE_TX_MAX_ITEMS_SHARED 98		/* under a shared hold: its two checks */
#define STORE_TX_MAX_BYTES	  (1024 * 1024) /* of the client's items' text */
#define STORE_TX_TOKEN_MAX	  36		/* a ClientRequestToken, bytes */

struct store_tx_req {
	const char *name;  /* the lock */
	const char *owner; /* the lease's owner id */
	int64_t token;	   /* the lease's fencing token */
	/* A shared holder's (store_shared.h CHECK): its mode and slot; false:
	 * an exclusive lease's check on the lock item. */
	bool shared;
	enum store_sh_mode mode;
	unsigned slot;
	/* The client's TransactItems: a JSON array text of items, validated
	 * by the caller; len bytes. */
	const char *items;
	size_t items_len;
	/* The ClientRequestToken, 1..STORE_TX_TOKEN_MAX bytes; NULL: a new
	 * one. */
	const char *client_token;
};

struct store_tx_result {
	enum store_status status;
	unsigned index;		/* REFUSED: the first item cancelled, 0 = the check */
	unsigned check;		/* REFUSED at 0, shared: 0 the header, 1 the slot */
	struct lock_item item;	/* REFUSED at 0: the item checked, or absent */
	const char *reasons;	/* REFUSED: the client's items' reasons (JSON) */
	const char *error_type; /* static; TRANSIENT, NO_TABLE, FATAL */
	char message[STORE_MSG_MAX];
	/* NO_TABLE: the client's tables other than the lock table, quoted
	 * for a message ("'orders', 'ledger'"; cut at its size) */
	unsigned ntables;
	char tables[STORE_MSG_MAX];
};

/* Submits a fenced transaction; cb runs once, later, from the loop (unless
 * cancelled with store_cancel). Counted as one STORE_TRANSACT request.
 * Returns NULL on out-of-memory (no callback then). */
struct store_call *store_transact(struct store *s, const struct store_tx_req *req, store_tx_cb cb,
				  void *arg) __attribute__((warn_unused_result));

#endif
