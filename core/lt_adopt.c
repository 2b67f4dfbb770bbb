/*
 * lt_adopt: the adopt of an orphaned lease (see lt_adopt in locktable.h):
 * a consistent read of the item, then, when it shows an orphaned lease of
 * the token and the secret presented, one ADOPT write (store.h) that
 * moves it to a new owner of this locktable, keeping its fence.
 *
 * The replica that held it learns at its next renewal (refused, the item's
 * adoptedFrom naming its owner: LT_ADOPTED, lease.c). A waiter that
 * counted the old rvn starts again: the adopt writes a new one.
 */
#include "core/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct adopt {
	struct adopt *prev, *next; /* in t->adopts */
	struct store_call *call;   /* its read or write in flight */
	struct locktable *t;
	struct lock *lock; /* a reference, while the adopt runs */
	lt_acquire_cb cb;
	void *arg;
	int64_t token, lease_ms, send_ms;
	char *holder; /* a copy, or the table's label */
	char presented[STORE_SECRET_HASH_LEN + 1];
	char new_hash[STORE_SECRET_HASH_LEN + 1];
	char owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1];
	uint32_t sess_gen; /* --heartbeat replica: the session the ADOPT names */
	/* the lease as read: its owner and secret's hash (the ADOPT's
	 * conditions), and the session of the replica that held it in
	 * session mode, told by a revocation ("" none) */
	char prev_owner[STORE_ID_MAX + 1];
	char prev_hash[STORE_SECRET_HASH_LEN + 1];
	char revoke[STORE_SESSION_KEY_MAX + 1];
};

static void unlink_a(struct adopt *a)
{
	if (a->prev != NULL)
		a->prev->next = a->next;
	else
		a->t->adopts = a->next;
	if (a->next != NULL)
		a->next->prev = a->prev;
}

void lt_adopt_free_all(struct locktable *t)
{
	while (t->adopts != NULL) { /* their requests are dropped */
		struct adopt *a = t->adopts;
		store_cancel(t->store, a->call);
		unlink_a(a);
		lt_holder_free(t, a->holder);
		free(a);
	}
}

static void finish(struct adopt *a, struct lease *lease, const struct lt_error *err)
{
	lt_acquire_cb cb = a->cb;
	void *arg = a->arg;
	struct lock *lock = a->lock;
	unlink_a(a);
	if (lease == NULL)
		lt_holder_free(a->t, a->holder);
	free(a);
	cb(arg, lease, err);
	lt_lock_unref(lock);
}

/* item is the orphaned lease of a->token, with the secret presented, and
 * not one this locktable holds. */
static bool adoptable(const struct adopt *a, const struct lock_item *item)
{
	return item->exists && item->has_owner && item->fence == a->token &&
	       strcmp(item->orphan, item->owner) == 0 && item->secret_hash[0] != '\0' &&
	       lt_secret_match(item->secret_hash, a->presented) && a->lock->held == NULL;
}

static bool send_adopt(struct adopt *a);

static void on_write(void *arg, const struct store_result *res)
{
	struct adopt *a = arg;
	struct lt_error e;
	a->call = NULL;
	if (res->status == STORE_REFUSED && res->session_gone && a->revoke[0] != '\0') {
		a->revoke[0] = '\0'; /* the session is gone: nobody is to be told */
		if (!send_adopt(a)) {
			e = (struct lt_error){.status = STORE_TRANSIENT,
					      .error_type = "OutOfMemory"};
			snprintf(e.message, sizeof(e.message), "out of memory adopting '%.64s'",
				 a->lock->name);
			finish(a, NULL, &e);
		}
		return;
	}
	bool applied =
		res->status == STORE_OK || (res->status == STORE_REFUSED &&
					    store_acquire_applied(a->owner, a->rvn, &res->item));
	if (!applied) {
		if (res->status == STORE_REFUSED) { /* changed since the read */
			lt_lock_see(a->lock, &res->item);
			finish(a, NULL, NULL);
			return;
		}
		/* --heartbeat replica: it may have applied, naming this
		 * replica's session with nobody holding it: read back */
		if (a->sess_gen != 0 && res->status == STORE_TRANSIENT)
			lt_replica_readback(a->lock, a->owner, a->lease_ms);
		lt_error_from(&e, a->t, a->lock->name, res);
		finish(a, NULL, &e);
		return;
	}
	struct lease *l = a->lock->held == NULL ? lease_adopted(a->lock, &res->item, a->owner,
								a->rvn, a->new_hash, a->lease_ms,
								a->send_ms, a->holder, a->sess_gen)
						: NULL;
	if (l == NULL) { /* out of memory, or held here meanwhile: the item is ours */
		e = (struct lt_error){.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
		snprintf(e.message, sizeof(e.message),
			 "the adopted lease of '%.64s' could not be kept (table '%s')",
			 a->lock->name, a->t->store->table);
		finish(a, NULL, &e);
		return;
	}
	a->holder = NULL; /* the lease's now */
	finish(a, l, NULL);
}

static void on_read(void *arg, const struct store_result *res)
{
	struct adopt *a = arg;
	struct lt_error e;
	a->call = NULL;
	if (res->status != STORE_OK) {
		lt_error_from(&e, a->t, a->lock->name, res);
		finish(a, NULL, &e);
		return;
	}
	if (!adoptable(a, &res->item)) {
		finish(a, NULL, NULL);
		return;
	}
	store_new_id(a->owner);
	store_new_id(a->rvn);
	a->send_ms = clock_now_ms(a->t->clock);
	int64_t own = lt_item_lease_ms(&res->item); /* sleaseMs in session mode */
	if (a->lease_ms == 0)			    /* the lease's own */
		a->lease_ms =
			own >= LT_MIN_LEASE_MS && own <= LT_MAX_LEASE_MS ? own : LT_MIN_LEASE_MS;
	memcpy(a->prev_owner, res->item.owner, sizeof(a->prev_owner));
	memcpy(a->prev_hash, res->item.secret_hash, sizeof(a->prev_hash));
	/* held in session mode by another replica: a revocation tells it */
	lt_other_session(a->t, &res->item, a->revoke);
	if (!send_adopt(a)) {
		e = (struct lt_error){.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
		snprintf(e.message, sizeof(e.message), "out of memory adopting '%.64s'",
			 a->lock->name);
		finish(a, NULL, &e);
	}
}

/* Sends the ADOPT of the lease read into a; false on out-of-memory. */
static bool send_adopt(struct adopt *a)
{
	const char *session = NULL;
	if (a->t->replica != NULL && (session = lt_replica_key(a->t, &a->sess_gen)) == NULL)
		return false;
	struct store_req req = {
		.op = STORE_ADOPT,
		.name = a->lock->name,
		.owner = a->owner,
		.rvn = a->rvn,
		.prev_owner = a->prev_owner,
		.prev_secret_hash = a->prev_hash,
		.secret_hash = a->new_hash,
		.holder = a->holder,
		.lease_ms = a->lease_ms,
		.token = a->token,
		.ttl = lt_ttl(a->t),
		.session = session,
		.revoke_session = a->revoke[0] != '\0' ? a->revoke : NULL,
	};
	return (a->call = store_submit(a->t->store, &req, on_write, a)) != NULL;
}

bool lt_adopt_on(const struct locktable *t, const struct lock *lock)
{
	for (const struct adopt *a = t->adopts; a != NULL; a = a->next)
		if (a->lock == lock)
			return true;
	return false;
}

static bool hash_ok(const char *h)
{
	return h != NULL && strlen(h) == STORE_SECRET_HASH_LEN;
}

bool lt_adopt(struct locktable *t, const struct lt_adopt_args *args, lt_acquire_cb cb, void *arg)
{
	if (args->name == NULL || args->name[0] == '\0' || strlen(args->name) > STORE_NAME_MAX ||
	    args->token <= 0 || !hash_ok(args->secret_hash) || !hash_ok(args->new_secret_hash) ||
	    (args->lease_ms != 0 &&
	     (args->lease_ms < LT_MIN_LEASE_MS || args->lease_ms > LT_MAX_LEASE_MS)))
		return false;
	struct adopt *a = calloc(1, sizeof(*a));
	struct lock *lock = a != NULL ? lt_lock_get(t, args->name, true) : NULL;
	char *holder = args->holder != NULL ? strdup(args->holder) : t->holder_label;
	if (lock == NULL || (args->holder != NULL && holder == NULL)) {
		if (args->holder != NULL)
			free(holder);
		if (lock != NULL)
			lt_lock_maybe_free(lock);
		free(a);
		return false;
	}
	lock->refs++;
	*a = (struct adopt){.t = t,
			    .lock = lock,
			    .cb = cb,
			    .arg = arg,
			    .token = args->token,
			    .lease_ms = args->lease_ms,
			    .holder = holder};
	memcpy(a->presented, args->secret_hash, sizeof(a->presented));
	memcpy(a->new_hash, args->new_secret_hash, sizeof(a->new_hash));
	struct store_req req = {.op = STORE_READ, .name = lock->name};
	if ((a->call = store_submit(t->store, &req, on_read, a)) == NULL) {
		lt_holder_free(t, a->holder);
		free(a);
		lt_lock_unref(lock);
		return false;
	}
	a->next = t->adopts; /* for lt_free */
	if (t->adopts != NULL)
		t->adopts->prev = a;
	t->adopts = a;
	return true;
}
