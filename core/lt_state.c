/*
 * lt_state: reads of a lock's item for LOCK.STATE and LEADER.WATCH (see
 * lt_get_state and lt_state_now in locktable.h): one consistent read,
 * answered from the loop, or at once when the store can (embedded).
 */
#include "core/lease.h"

#include <stdlib.h>
#include <string.h>

struct state_read {
	struct locktable *t;
	lt_state_cb cb;
	void *arg;
	char name[];
};

int64_t lt_remaining_ms(struct locktable *t, const char *name, const struct lock_item *item)
{
	if (!item->has_owner)
		return 0;
	/* session mode: the real lease (sleaseMs), never the 10-year leaseMs */
	bool smode = lt_item_session(item);
	int64_t now = clock_now_ms(t->clock), left = lt_item_lease_ms(item);
	struct lock *l = lt_lock_get(t, name, false);
	if (l != NULL && l->held != NULL && strcmp(l->held->owner, item->owner) == 0)
		left = lease_end_ms(l->held) - now;
	else if (l != NULL && l->seen != NULL && strcmp(l->seen->rvn, item->rvn) == 0)
		left = smode ? lt_swait_remaining(l, item, now)
			     : l->seen->at + l->seen->lease_ms - now;
	return left > 0 ? left : 0;
}

int64_t lt_item_remaining_ms(struct locktable *t, const char *name, const struct lock_item *item)
{
	return lt_remaining_ms(t, name, item);
}

/* When this replica's view of name, held here in session mode with item
 * it, was last confirmed (monotonic ms; -1 before the first): a lease held
 * here counts its end a lease after that — its own write (its acquire, an
 * explicit renewal) or its session's last heartbeat answered in time,
 * whichever is later, so that a lock just taken in a session idle for
 * long is not shown as confirmed long ago; else (an item naming the
 * session that no lease here holds) the session's last heartbeat. */
static int64_t confirmed_at(struct locktable *t, const char *name, const struct lock_item *it,
			    const struct lt_session_view *v)
{
	struct lock *l = lt_lock_get(t, name, false);
	const struct lease *held = l != NULL ? l->held : NULL;
	if (held != NULL && held->in_session && strcmp(held->owner, it->owner) == 0)
		return lease_end_ms(held) - held->lease_ms;
	return v->confirmed_ms;
}

/* st->session_here and st->confirmed_ago_ms (locktable.h) of item it. */
static void own_session(struct locktable *t, const char *name, const struct lock_item *it,
			struct lt_state *st)
{
	struct lt_session *own = lt_session_of(t);
	struct lt_session_view v;
	st->session_here = false;
	st->confirmed_ago_ms = -1;
	if (own == NULL || !lt_item_session(it))
		return;
	lt_session_view(own, &v);
	if (v.state == LT_SESSION_ENDED || strcmp(it->session, v.key) != 0)
		return;
	st->session_here = true;
	int64_t at = confirmed_at(t, name, it, &v);
	if (at >= 0)
		st->confirmed_ago_ms = clock_now_ms(t->clock) - at;
}

void lt_state_of(struct locktable *t, const char *name, const struct lock_item *it,
		 struct lt_state *st)
{
	st->remaining_ms = lt_remaining_ms(t, name, it);
	st->exists = it->exists;
	st->held = it->has_owner;
	st->session = lt_item_session(it);
	own_session(t, name, it, st);
	st->lease_ms = it->has_owner ? lt_item_lease_ms(it) : 0;
	st->token = it->fence;
	st->shared = it->scount > 0 ? it->scount : 0;
	st->ttl = it->ttl;
	/* Only the strings' bytes: LOCK.STATE runs this per command (and
	 * most locks have no label, a free one no owner). */
	st->holder[0] = '\0';
	if (it->holder[0] != '\0')
		memcpy(st->holder, it->holder, strnlen(it->holder, STORE_HOLDER_MAX) + 1);
	st->owner[0] = '\0';
	if (it->owner[0] != '\0')
		memcpy(st->owner, it->owner, strnlen(it->owner, STORE_ID_MAX) + 1);
	st->secret_hash[0] = '\0';
	if (it->has_owner && it->secret_hash[0] != '\0')
		memcpy(st->secret_hash, it->secret_hash, sizeof(st->secret_hash));
}

static void on_state(void *arg, const struct store_result *res)
{
	struct state_read *r = arg;
	struct lt_state st;
	struct lt_error e;

	if (res->status != STORE_OK) {
		lt_error_from(&e, r->t, r->name, res);
		r->cb(r->arg, NULL, &e);
	} else if (!lt_item_check(r->t, r->name, &res->item, LT_ITEM_TO_SHOW, &e)) {
		r->cb(r->arg, NULL, &e); /* never shown as a lock, its fence as a token */
	} else {
		lt_state_of(r->t, r->name, &res->item, &st);
		r->cb(r->arg, &st, NULL);
	}
	free(r);
}

bool lt_state_now(struct locktable *t, const char *name, struct lt_state *st)
{
	struct lock_item item;
	struct lt_error e;
	if (!store_read_now(t->store, name, &item))
		return false;
	if (!lt_item_check(t, name, &item, LT_ITEM_TO_SHOW, &e))
		return false; /* lt_get_state reads it again and answers the error */
	lt_state_of(t, name, &item, st);
	return true;
}

bool lt_get_state(struct locktable *t, const char *name, lt_state_cb cb, void *arg)
{
	size_t len = strlen(name);
	struct state_read *r = malloc(sizeof(*r) + len + 1);
	if (r == NULL)
		return false;
	r->t = t;
	r->cb = cb;
	r->arg = arg;
	memcpy(r->name, name, len + 1);
	struct store_req req = {.op = STORE_READ, .name = name};
	if (store_submit(t->store, &req, on_state, r) == NULL) {
		free(r);
		return false;
	}
	return true;
}
