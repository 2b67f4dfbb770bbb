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

#include "core/clock.h"
#include "core/store.h"

/* table names the store in logs. Returns NULL on out-of-memory. */
struct store *store_memory_new(struct clock *clock, const char *table);

/* The next n requests (any operation) fail with status (TRANSIENT with
 * error_type, NO_TABLE, or FATAL). n < 0 fails every request until reset
 * with n = 0. */
void store_memory_fail(struct store *s, int n, enum store_status status, const char *error_type);

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

#endif
