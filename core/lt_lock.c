/*
 * lt_lock: the locks a locktable knows — its hash table of struct lock,
 * and the cache of holders seen (an LRU of struct seen, bounded by
 * seen_max) that a takeover depends on: the rvn last read for a lock and
 * when, on our clock. Also the small helpers locktable.c and lease.c share.
 *
 * What a lock does (waits, polls, announcements, hand-offs) is in
 * locktable.c; leases in lease.c.
 */
#include "core/lt_internal.h"
#include "core/lt_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Locks with names up to 64 bytes come from pools by their name's length
 * (POOL_NAME_CLASSES): a lock cycle of a new name creates and frees one,
 * and a lock is kept as long as its lease (a block sized for the longest
 * name would cost every lock up to 48 bytes more). */
#define LOCK_SIZE(len) (sizeof(struct lock) + (len) + 1)
static struct pool lock_pools[POOL_NAME_CLASSES_N] = POOL_NAME_CLASSES(LOCK_SIZE, 4096);

/* The pool of a lock whose name is len bytes. */
static struct pool *lock_pool(size_t len)
{
	return pool_class(lock_pools, POOL_NAME_CLASSES_N, LOCK_SIZE(len));
}

size_t lt_lock_bytes(size_t len)
{
	return pool_class_bytes(lock_pools, POOL_NAME_CLASSES_N, LOCK_SIZE(len));
}

/* --- the hash table --- */

static void rehash(struct locktable *t)
{
	size_t n = t->nbuckets * 2;
	struct lock **b = calloc(n, sizeof(*b));
	if (b == NULL)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct lock *l = t->buckets[i], *next;
		for (; l != NULL; l = next) {
			next = l->hnext;
			l->hnext = b[l->hash & (n - 1)];
			b[l->hash & (n - 1)] = l;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
}

struct lock *lt_lock_get(struct locktable *t, const char *name, bool create)
{
	uint64_t h = store_name_hash(name);
	struct lock **p = &t->buckets[h & (t->nbuckets - 1)];
	for (; *p != NULL; p = &(*p)->hnext)
		if ((*p)->hash == h && strcmp((*p)->name, name) == 0)
			return *p;
	if (!create)
		return NULL;
	size_t len = strlen(name);
	struct lock *l = pool_get(lock_pool(len), LOCK_SIZE(len));
	if (l == NULL)
		return NULL;
	memcpy(l->name, name, len + 1);
	l->hash = h;
	l->t = t;
	timer_init(&l->poll_timer, t->clock, lt_poll_due, l);
	*p = l;
	if (++t->nlocks > t->nbuckets)
		rehash(t);
	return l;
}

static void lru_unlink(struct locktable *t, struct seen *sn)
{
	if (sn->prev != NULL)
		sn->prev->next = sn->next;
	else
		t->lru_head = sn->next;
	if (sn->next != NULL)
		sn->next->prev = sn->prev;
	else
		t->lru_tail = sn->prev;
	sn->prev = sn->next = NULL;
}

static void lru_push(struct locktable *t, struct seen *sn)
{
	sn->next = t->lru_head;
	if (t->lru_head != NULL)
		t->lru_head->prev = sn;
	t->lru_head = sn;
	if (t->lru_tail == NULL)
		t->lru_tail = sn;
}

static void forget_seen(struct lock *l)
{
	struct seen *sn = l->seen;
	if (sn == NULL)
		return;
	lru_unlink(l->t, sn);
	l->t->seen_count--;
	l->seen = NULL;
	lt_swait_drop(sn);
	free(sn->holder);
	free(sn);
}

static bool lock_idle(const struct lock *l)
{
	return l->refs == 0 && l->writes == 0 && l->poll_call == NULL &&
	       !timer_armed(&l->poll_timer) && l->ann_call == NULL && !l->ann_on_item &&
	       !lt_lock_yielding(l);
}

static void lock_free(struct lock *l)
{
	struct locktable *t = l->t;
	struct lock **p = &t->buckets[l->hash & (t->nbuckets - 1)];
	while (*p != l)
		p = &(*p)->hnext;
	*p = l->hnext;
	forget_seen(l);
	lt_sh_reaper_free(l->reaper, true); /* idle: nobody here waits any more */
	t->nlocks--;
	size_t len = strlen(l->name);
	pool_put(lock_pool(len), l, LOCK_SIZE(len));
}

void lt_lock_maybe_free(struct lock *l)
{
	if (lock_idle(l) && l->seen == NULL)
		lock_free(l);
}

void lt_lock_unref(struct lock *l)
{
	l->refs--;
	lt_lock_maybe_free(l);
}

/* Holders seen that one trim looks at, from the least recent: a lock that
 * is not idle (waited on) cannot go, and is seen again at its next poll
 * (moved to the front), so the idle ones reach the tail; a walk of the
 * whole list when none is idle made a table waiting on more than
 * seen_max locks quadratic (the simulator's scale case: 30,000 locks of
 * a crashed replica took over 10 minutes, 20 s with the list shorter). */
#define SEEN_TRIM_STEPS 16

/* Evicts the least recently seen idle locks past seen_max, looking at
 * SEEN_TRIM_STEPS of them at most: seen_max bounds the memory of the
 * idle ones; the waited-on ones are bounded by the waits. */
static void seen_trim(struct locktable *t)
{
	struct seen *sn = t->lru_tail;
	t->seen_trims++;
	for (int steps = 0; t->seen_count > t->seen_max && sn != NULL && steps < SEEN_TRIM_STEPS;
	     steps++) {
		struct seen *prev = sn->prev;
		t->seen_trim_steps++;
		if (lock_idle(sn->lock))
			lock_free(sn->lock);
		sn = prev;
	}
}

int64_t lt_poll_interval(int64_t lease_ms)
{
	int64_t d = lease_ms / 3;
	return d > LT_MAX_POLL_MS ? LT_MAX_POLL_MS : d;
}

/* Our announcement as the item shows it, unless ours is in flight. */
static void track_ann(struct lock *l, const struct lock_item *item)
{
	if (!item->exists || l->ann_call != NULL)
		return;
	l->ann_on_item = l->ann[0] != '\0' && item->has_waiter && strcmp(item->waiter, l->ann) == 0;
}

void lt_lock_see(struct lock *l, const struct lock_item *item)
{
	struct locktable *t = l->t;
	struct seen *sn = l->seen;
	track_ann(l, item);
	/* A free item is forgotten, unless announced for another's waiter:
	 * then it is held by that reservation. */
	bool reserved = item->exists && !item->has_owner && item->has_waiter &&
			strcmp(item->waiter, l->ann) != 0;
	/* Reads find it held by another owner: our turn is elsewhere. A
	 * reservation goes on with a streak but starts none, so a replica that
	 * just yielded announces a poll interval after it reads the next
	 * holder, and one that waited through that turn announces first. */
	if (!item->exists || (!item->has_owner && !reserved)) {
		l->elsewhere = false;
	} else if (item->has_owner && !l->elsewhere) {
		l->elsewhere = true;
		l->elsewhere_since = clock_now_ms(t->clock);
	}
	if (!item->exists || (!item->has_owner && !reserved)) {
		forget_seen(l);
		return;
	}
	const char *waiter = reserved ? item->waiter : "";
	if (sn != NULL) {
		lru_unlink(t, sn);
	} else {
		if ((sn = calloc(1, sizeof(*sn))) == NULL)
			return; /* out of memory: the lock counts as not seen */
		sn->lock = l;
		l->seen = sn;
		t->seen_count++;
	}
	if (sn->rvn[0] == '\0' || strcmp(sn->rvn, item->rvn) != 0 ||
	    strcmp(sn->waiter, waiter) != 0) {
		snprintf(sn->rvn, sizeof(sn->rvn), "%s", item->rvn);
		snprintf(sn->waiter, sizeof(sn->waiter), "%s", waiter);
		sn->at = clock_now_ms(t->clock);
		/* a waiter polls at most every LT_MAX_POLL_MS: a larger waiterMs
		 * (written by hand) gets no longer window */
		int64_t wm = item->waiter_ms < LT_MAX_POLL_MS ? item->waiter_ms : LT_MAX_POLL_MS;
		sn->lease_ms = reserved ? LT_RESERVE_WINDOWS * wm : item->lease_ms;
		if (sn->lease_ms <= 0)
			sn->lease_ms = 1;
		free(sn->holder);
		sn->holder = item->holder[0] != '\0' ? strdup(item->holder) : NULL;
	}
	lt_swait_keep(sn, item);
	lru_push(t, sn);
	seen_trim(t);
}

void lt_lock_see_readers(struct lock *l, const struct lock_item *item, int64_t poll_lease_ms)
{
	struct locktable *t = l->t;
	struct seen *sn = l->seen;
	track_ann(l, item);
	if (!l->elsewhere) {
		l->elsewhere = true;
		l->elsewhere_since = clock_now_ms(t->clock);
	}
	/* Another replica's reservation watched since before these readers:
	 * the watch goes on through their phase (restarted at each, a
	 * reservation its waiter left behind would never stand still a whole
	 * window, and this waiter, behind readers that keep coming, starve) */
	if (sn != NULL && sn->waiter[0] != '\0' && item->has_waiter &&
	    strcmp(item->waiter, sn->waiter) == 0) {
		lru_unlink(t, sn);
		lru_push(t, sn);
		return;
	}
	if (sn != NULL) {
		lru_unlink(t, sn);
	} else {
		if ((sn = calloc(1, sizeof(*sn))) == NULL)
			return; /* out of memory: the lock counts as not seen */
		sn->lock = l;
		l->seen = sn;
		t->seen_count++;
	}
	/* seen afresh at every read: a whole lease never passes */
	snprintf(sn->rvn, sizeof(sn->rvn), "%s", item->rvn[0] != '\0' ? item->rvn : "readers");
	sn->waiter[0] = '\0';
	sn->at = clock_now_ms(t->clock);
	sn->lease_ms = poll_lease_ms > 0 ? poll_lease_ms : 1;
	free(sn->holder);
	sn->holder = NULL;
	lt_swait_drop(sn);
	lru_push(t, sn);
	seen_trim(t);
}

void lt_lock_destroy(struct lock *l)
{
	lt_sh_reaper_free(l->reaper, false);
	if (l->seen != NULL) {
		lt_swait_drop(l->seen);
		free(l->seen->holder);
		free(l->seen);
	}
	size_t len = strlen(l->name);
	pool_put(lock_pool(len), l, LOCK_SIZE(len));
}

/* --- its turn among replicas --- */

/* allowed[from] has bit `to` set when from -> to is a legal move: an
 * announcement seen makes a yield due (lt_holder_saw), the hand-off that
 * finds the round done yields (lt_handoff), the release's answer ends the
 * yield (lt_yield_done); a lease won while yielding may see the
 * announcement gone, or back. */
#define BIT(s) (1u << (s))
static const unsigned allowed[LOCK_STATE_COUNT] = {
	[LOCK_OURS] = BIT(LOCK_OURS) | BIT(LOCK_YIELD_DUE),
	[LOCK_YIELD_DUE] = BIT(LOCK_OURS) | BIT(LOCK_YIELDING),
	[LOCK_YIELDING] = BIT(LOCK_OURS) | BIT(LOCK_YIELDING_NOT_DUE),
	[LOCK_YIELDING_NOT_DUE] = BIT(LOCK_OURS) | BIT(LOCK_YIELDING),
};

static const char *move_name(enum lock_state from, enum lock_state to)
{
	static const char *const names[LOCK_STATE_COUNT] = {"ours", "yield_due", "yielding",
							    "yielding_not_due"};
	static char buf[64];
	snprintf(buf, sizeof(buf), "lock %s -> %s",
		 (unsigned)from < LOCK_STATE_COUNT ? names[from] : "?",
		 (unsigned)to < LOCK_STATE_COUNT ? names[to] : "?");
	return buf;
}

void lt_lock_set_state(struct lock *l, enum lock_state to)
{
	LG_ASSERT_MSG((unsigned)l->state < LOCK_STATE_COUNT && (allowed[l->state] & BIT(to)),
		      move_name(l->state, to));
	l->state = to;
}

/* --- helpers shared with lease.c --- */

void lt_holder_free(struct locktable *t, char *holder)
{
	if (holder != t->holder_label)
		free(holder);
}

int64_t lt_ttl(struct locktable *t)
{
	if (t->retention_ms == 0)
		return 0;
	return (clock_wall_ms(t->clock) + t->retention_ms) / 1000;
}

void lt_error_from(struct lt_error *e, const struct locktable *t, const char *name,
		   const struct store_result *res)
{
	e->status = res->status;
	e->error_type = res->error_type != NULL ? res->error_type : store_status_name(res->status);
	snprintf(e->message, sizeof(e->message), "%s (lock '%.64s', table '%s')",
		 res->message[0] != '\0' ? res->message : e->error_type, name, t->store->table);
}

void lt_error_wrote_nothing(struct lt_error *e)
{
	if (e->status != STORE_TRANSIENT)
		return; /* -ERR: the acquire failed for good, nothing to retry */
	size_t n = strlen(e->message);
	snprintf(e->message + n, sizeof(e->message) - n, "; this acquire wrote nothing");
}

void lt_fire_refusal(struct lock *l)
{
	struct lt_hook **p = &l->t->hooks;
	while (*p != NULL) {
		struct lt_hook *h = *p;
		if (strcmp(h->name, l->name) != 0) {
			p = &h->next;
			continue;
		}
		*p = h->next;
		h->cb(h->arg, 0);
		free(h);
		p = &l->t->hooks; /* the callback may have changed the list */
	}
}
