/*
 * store_memory: the embedded store. One hash table of lock items in this
 * process, with the conditions and results of the DynamoDB store (see
 * store.h). Requests complete on the clock's loop, after a zero delay,
 * in the order they were submitted.
 *
 * For tests it can fail the next requests on purpose, as DynamoDB would.
 */
#ifndef LG_STORE_MEMORY_H
#define LG_STORE_MEMORY_H

#include "lib/base/clock.h"
#include "core/store/store.h"

/* table names the store in logs. Returns NULL on out-of-memory. */
struct store *store_memory_new(struct clock *clock, const char *table);

/* The next n requests (any operation) fail with status (TRANSIENT with
 * error_type, NO_TABLE, or FATAL). n < 0 fails every request until reset
 * with n = 0. */
void store_memory_fail(struct store *s, int n, enum store_status status, const char *error_type);

/* The next n lock requests (store_submit) apply, then answer TRANSIENT
 * ("RequestTimeout"): their answers were lost (a timeout after DynamoDB
 * applied the write). */
void store_memory_lose(struct store *s, int n);

/* The next n lock writes (store_submit, every operation but READ) answer
 * TRANSIENT ("RequestTimeout") unapplied, and apply late_ms later with
 * nobody told: a DynamoDB request still on its way when its timeout was
 * answered. */
void store_memory_land_late(struct store *s, int n, int64_t late_ms);

/* The next n shared GRANTs (store_shared.h) apply, then answer REFUSED
 * (the slot as it is now): as a store whose retry of a GRANT that applied
 * is refused by that first attempt (moto ignores ClientRequestToken). */
void store_memory_grant_refused(struct store *s, int n);

/* Delay before each completion, ms (default 0). */
void store_memory_set_latency(struct store *s, int64_t ms);

/* Writes item at name as it is, without a condition: for tests that need an
 * item no lock would write (an owner without rvn, a _type other than
 * "LOCK", no fence or a fence_bad one, say). */
bool store_memory_put_raw(struct store *s, const char *name, const struct lock_item *item)
	__attribute__((warn_unused_result));

/* Extra delay for one operation only, ms: requests then complete out of
 * submission order, as concurrent DynamoDB requests may. */
void store_memory_set_op_latency(struct store *s, enum store_op op, int64_t ms);

/* Number of items held. */
size_t store_memory_items(const struct store *s);

/* Bounds its growth (default: none). A released item (no owner) is
 * forgotten once retention_ms (> 0) have passed since its release, at most
 * a quarter of the retention later (a sweep timer ticks every eighth of
 * it), as DynamoDB's TTL deletes a lock item: the lock then starts its
 * fencing token at 1 again. With max_items > 0, an acquire of a name that has no
 * item is refused (STORE_FATAL, "LockLimitExceeded") while max_items items
 * exist; names that have one are unaffected. */
void store_memory_limit(struct store *s, int64_t retention_ms, size_t max_items);

/* For tests of session items (store_session.h), without a condition: the
 * item at key ("SESSION#<replica>#<incarnation>") is deleted (as its TTL
 * or an operator would), or its revSeq raised by n (as revocations would).
 * false: no such item. */
bool store_memory_session_delete(struct store *s, const char *key);
bool store_memory_session_add_rev(struct store *s, const char *key, int64_t n);
/* The next n session requests apply, then answer TRANSIENT
 * ("RequestTimeout"): their answers were lost (a timeout after DynamoDB
 * applied the write). */
void store_memory_session_lose(struct store *s, int n);
/* The next n session requests apply twice, as a DynamoDB client tries a
 * request again whose first attempt applied but answered nothing: the
 * answer is the second attempt's. */
void store_memory_session_retry(struct store *s, int n);

struct store_memory_stats {
	size_t items, bytes; /* bytes: items, names and labels */
	uint64_t forgotten;  /* released items forgotten, since the start */
	int64_t retention_ms;
	size_t max_items;
};
void store_memory_stats(const struct store *s, struct store_memory_stats *out);

#endif
