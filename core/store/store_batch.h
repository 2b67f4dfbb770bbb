/*
 * store_batch: many lock items read at once — the verification sweep of
 * `--heartbeat replica` (docs/design/replica-heartbeat.md, "Endings from
 * outside") reads the lock items its replica holds in session mode, up to
 * STORE_BATCH_MAX a request, to see any that another tool deleted or
 * rewrote.
 *
 * store_batch_read reads the lock items LOCK#<name> of res->entries[0..
 * res->count) (sort key LOCK when the table has one), strongly
 * consistent, in one request: DynamoDB, one BatchGetItem, its
 * UnprocessedKeys asked again in the same call (a few rounds); the
 * embedded store, all at once. Each entry says whether it came back
 * (.read) and the item as read (.item.exists false: there is none).
 * Results: OK when every entry came back; TRANSIENT when keys stayed
 * unprocessed (the entries read are marked) or the store's retries ran
 * out; NO_TABLE; FATAL with .message. Counted in store.requests as one
 * STORE_READ per request (its rounds too are one).
 */
#ifndef LG_STORE_BATCH_H
#define LG_STORE_BATCH_H

#include <stdbool.h>

#include "core/store/store.h"

#define STORE_BATCH_MAX 100 /* keys a request: DynamoDB BatchGetItem's bound */

struct store_batch_entry {
	const char *name;      /* set by the caller: 1..STORE_NAME_MAX bytes */
	bool read;	       /* came back */
	struct lock_item item; /* as read, not judged (store.h's lock_item) */
};

/* The caller allocates it, sets entries (names filled) and count, and
 * keeps it and the names alive until the callback. */
struct store_batch_result {
	enum store_status status; /* OK, TRANSIENT, NO_TABLE or FATAL */
	const char *error_type;	  /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
	struct store_batch_entry *entries;
	unsigned count; /* 1..STORE_BATCH_MAX */
};

/* Reads the entries of res (above), then cb(arg) from the loop, never
 * inside this call. Returns a handle for store_cancel, or NULL (no
 * callback) on out-of-memory, a count out of 1..STORE_BATCH_MAX, a name
 * out of bounds or a name twice (DynamoDB refuses a key twice), or a store
 * that cannot. */
struct store_call *store_batch_read(struct store *s, struct store_batch_result *res,
				    void (*cb)(void *arg), void *arg)
	__attribute__((warn_unused_result));

/* The shape checks of store_batch_read (count, names, no name twice). */
bool store_batch_valid(const struct store_batch_result *res);

#endif
