/*
 * lt_item: judges an item read at a lock's key, whichever store read it
 * (see lt_item_check and lt_item_judge in lt_internal.h). The stores report items as they
 * are and refuse to write on the ones judged here (store.h's guard of
 * ACQUIRE); what such an item means for a client is decided here, once.
 *
 * Not here: the lease rules (locktable.c, lease.c).
 */
#include "core/lt_internal.h"

#include <stdio.h>
#include <string.h>

/* Why item's shape is not a lock's, or NULL. */
static const char *not_a_lock(const struct lock_item *item)
{
	if (strcmp(item->type, "LOCK") != 0)
		return "its _type is not LOCK (another application's item?)";
	if (item->has_owner && (!item->has_rvn || !item->has_lease))
		return "it has an owner but no rvn or leaseMs";
	return NULL;
}

/* Writes into why (len bytes) what is wrong with item's fence for use, or
 * returns false when nothing is. Before a write, fence + 1 must be a token
 * (0 <= fence < INT64_MAX: at INT64_MAX, ADD would leave int64 and every
 * later answer be refused); an acquire's answer must be one (>= 1). */
static bool bad_fence(const struct lock_item *item, enum lt_item_use use, char *why, size_t len)
{
	int64_t f = item->fence;
	if (!item->has_fence)
		return false; /* a lock not yet acquired: ADD starts it at 1 */
	if (item->fence_bad)
		snprintf(why, len, "is not an integer of 64 bits");
	else if (f < 0 || (use == LT_ITEM_ACQUIRED && f < 1))
		snprintf(why, len, "is %lld, not a fencing token", (long long)f);
	else if (use == LT_ITEM_TO_ACQUIRE && f == INT64_MAX)
		snprintf(why, len, "is %lld, the top of the range: the next token would overflow",
			 (long long)f);
	else
		return false;
	return true;
}

bool lt_item_judge(const struct locktable *t, const char *name, const struct lock_item *item,
		   enum lt_item_use use, struct lt_error *e)
{
	char why[96];
	const char *shape;
	if (!item->exists)
		return true; /* never created, or deleted: a free lock */
	if ((shape = not_a_lock(item)) != NULL) {
		e->status = STORE_FATAL;
		e->error_type = "NotALock";
		snprintf(e->message, sizeof(e->message),
			 "the item at the key of lock '%.64s' in table '%s' is not a lock: %s; "
			 "give the lock another name",
			 name, t->store->table, shape);
		return false;
	}
	if (bad_fence(item, use, why, sizeof(why))) {
		e->status = STORE_FATAL;
		e->error_type = "BadFence";
		snprintf(e->message, sizeof(e->message),
			 "the attribute fence of lock '%.64s' in table '%s' %s; "
			 "repair or delete the item",
			 name, t->store->table, why);
		return false;
	}
	return true;
}
