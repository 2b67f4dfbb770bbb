/*
 * lt_foreign: renewals and releases of a lease by what its item shows,
 * wherever it is held — by (name, token) from a replica that does not hold
 * it, a detached lease, a Redis lock library's value, an operator's forced
 * release (see lt_foreign in locktable.h).
 *
 * One consistent read, then a write conditional on the owner the read
 * showed. Owners are new per acquire, so "owner = what I read" names the
 * very acquire whose fence was read: the write applies to that lease or to
 * none, with no window in between. A renewal is conditioned on the rvn
 * read too, as the holder's own (RENEW in store.h): an attempt of it that
 * lands after a later renewal (a retry, a late or duplicated delivery)
 * never puts its rvn back, which a waiter may have read a while ago; when
 * the holder renewed between the read and the write, it is written again
 * on the rvn the item shows. A release also writes the freed marker
 * (the fence it ended, and how), so that the holding replica's next
 * renewal tells it from a takeover (lease.c, refusal_loss).
 */
#include "core/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct foreign {
	struct foreign *prev, *next; /* in t->foreign */
	struct store_call *call;
	struct locktable *t;
	enum lt_foreign_op op;
	int64_t token, lease_ms;
	bool add_remaining, has_owner;
	bool secret_waived;			     /* lt_foreign_req.secret_waived */
	char secret_hash[STORE_SECRET_HASH_LEN + 1]; /* presented, "" none */
	unsigned again;				     /* renewals sent again (renew_again) */
	char prefix[STORE_ID_MAX + 1];		     /* "": any owner */
	lt_foreign_cb cb;
	void *arg;
	struct trace_span *span; /* Lock.Renew or Lock.Release, or NULL */
	struct lt_state st;	 /* the item as read */
	char owner[STORE_ID_MAX + 1];
	char rvn[LT_ID_LEN + 1];     /* a renewal's new rvn */
	char seen[STORE_ID_MAX + 1]; /* the rvn it is conditioned on */
	/* the session the item names when another replica's ("" none): a
	 * renewal keeps it, a release writes its revocation */
	char session[STORE_SESSION_KEY_MAX + 1];
	char name[];
};

/* A renewal of a lock held in session mode by another session keeps it
 * so: that session's replica holds the lease, renews nothing per lease,
 * and its holder's clock, not this write, says when it ends (written per
 * lease, the lock would run out on every other clock while its holder
 * still counts it held). A lock naming this replica's own session that
 * no lease here holds (a detached lease, lease_detach) goes to per lease:
 * its clients renew it. */
static void keep_session(struct foreign *f, const struct lock_item *it)
{
	lt_other_session(f->t, it, f->session);
}

void lt_other_session(const struct locktable *t, const struct lock_item *it, char *buf)
{
	struct lt_session *own = lt_session_of(t);
	struct lt_session_view v = {.key = ""};
	if (own != NULL)
		lt_session_view(own, &v);
	bool other = it->session[0] != '\0' && strcmp(it->session, v.key) != 0;
	snprintf(buf, STORE_SESSION_KEY_MAX + 1, "%s", other ? it->session : "");
}

static void state_from(struct foreign *f, const struct lock_item *it)
{
	struct lt_state *st = &f->st;
	st->exists = it->exists;
	st->held = it->has_owner;
	st->session = lt_item_session(it);
	st->lease_ms = it->has_owner ? lt_item_lease_ms(it) : 0;
	st->token = it->fence;
	st->ttl = it->ttl;
	snprintf(st->holder, sizeof(st->holder), "%s", it->holder);
	snprintf(st->owner, sizeof(st->owner), "%s", it->owner);
	snprintf(st->secret_hash, sizeof(st->secret_hash), "%s",
		 it->has_owner ? it->secret_hash : "");
	st->remaining_ms = lt_remaining_ms(f->t, f->name, it);
	keep_session(f, it);
}

static void unlink_f(struct foreign *f)
{
	if (f->prev != NULL)
		f->prev->next = f->next;
	else
		f->t->foreign = f->next;
	if (f->next != NULL)
		f->next->prev = f->prev;
}

/* The span of f, a root of its own (the acquire it names may have run
 * on another replica): the parent of its read and its write. */
static void start_span(struct foreign *f)
{
	if (f->t->tracer == NULL)
		return;
	f->span =
		trace_start(f->t->tracer, f->op == LT_FOREIGN_RENEW ? "Lock.Renew" : "Lock.Release",
			    TRACE_INTERNAL, NULL);
	trace_str(f->span, "leasegate.lock.name", f->name);
	trace_str(f->span, "db.collection.name", f->t->store->table);
	if (f->token > 0)
		trace_int(f->span, "leasegate.lock.fencing_token", f->token);
	trace_bool(f->span, "leasegate.lock.forced", f->op == LT_FOREIGN_FORCE);
}

static void end_span(struct foreign *f, int done, const char *why)
{
	trace_bool(f->span,
		   f->op == LT_FOREIGN_RENEW ? "leasegate.lock.renewed" : "leasegate.lock.released",
		   done == 1);
	trace_finish(&f->span, why);
}

static void answer(struct foreign *f, int done, const struct lt_error *err)
{
	unlink_f(f);
	end_span(f, done, err != NULL ? err->message : NULL);
	f->cb(f->arg, done, err != NULL ? NULL : &f->st, err);
	free(f);
}

void lt_foreign_free_all(struct locktable *t)
{
	while (t->foreign != NULL) {
		struct foreign *f = t->foreign;
		store_cancel(t->store, f->call);
		unlink_f(f);
		end_span(f, 0, "cancelled");
		free(f);
	}
}

static void fail(struct foreign *f, const struct store_result *res)
{
	struct lt_error e;
	lt_error_from(&e, f->t, f->name, res);
	answer(f, -1, &e);
}

/* A write of f succeeded with item: what this replica knows changes. */
static void written(struct foreign *f, const struct lock_item *item)
{
	struct lock *l = lt_lock_get(f->t, f->name, false);
	if (l == NULL)
		return;
	l->refs++;
	if (f->op != LT_FOREIGN_RENEW && l->held != NULL &&
	    strcmp(l->held->owner, f->st.owner) == 0) /* a lease of ours: ended now */
		lt_lease_lose(l->held, f->op == LT_FOREIGN_FORCE ? LT_FORCED : LT_RELEASED);
	if (l->held == NULL)
		lt_lock_see(l, item);
	lt_lock_kick(l); /* local waiters try at once */
	lt_lock_unref(l);
}

static void on_write(void *arg, const struct store_result *res);

static void answer_oom(struct foreign *f)
{
	answer(f, -1,
	       &(struct lt_error){.status = STORE_TRANSIENT,
				  .error_type = "OutOfMemory",
				  .message = "out of memory"});
}

/* The new lease of a renewal. */
static int64_t new_lease(const struct foreign *f)
{
	int64_t ms = f->lease_ms > 0 ? f->lease_ms : f->st.lease_ms;
	if (f->add_remaining)
		ms = f->lease_ms + f->st.remaining_ms;
	if (ms < LT_MIN_LEASE_MS)
		ms = LT_MIN_LEASE_MS;
	return ms < LT_MAX_LEASE_MS ? ms : LT_MAX_LEASE_MS;
}

/* Sends f's write on the lease read into f->st, a renewal on the rvn in
 * f->seen; false on out-of-memory. */
static bool send_write(struct foreign *f)
{
	struct store_req req = {
		.name = f->name, .owner = f->st.owner, .ttl = lt_ttl(f->t), .span = f->span};
	if (f->op == LT_FOREIGN_RENEW) {
		store_new_id(f->rvn);
		req.op = STORE_RENEW;
		req.rvn = f->rvn;
		req.seen_rvn = f->seen;
		req.holder = f->st.holder[0] != '\0' ? f->st.holder : NULL;
		req.lease_ms = new_lease(f);
		req.session = f->session[0] != '\0' ? f->session : NULL;
	} else {
		req.op = STORE_RELEASE;
		req.token = f->st.token;
		req.forced = f->op == LT_FOREIGN_FORCE;
		/* held in session mode by another replica: it learns of the
		 * ending from its revocation (store_revoke.h), in the same
		 * transaction */
		req.revoke_session = f->session[0] != '\0' ? f->session : NULL;
	}
	f->call = store_submit(f->t->store, &req, on_write, f);
	return f->call != NULL;
}

/* A renewal refused by an item still showing the lease it read (owner and
 * fence) under another rvn: the holder renewed between the read and this
 * write. Written again on the rvn the item shows, at most
 * LT_FOREIGN_AGAIN_MAX times (a holder renews a third of a lease apart). */
#define LT_FOREIGN_AGAIN_MAX 3
static bool renew_again(struct foreign *f, const struct lock_item *it)
{
	if (f->op != LT_FOREIGN_RENEW || f->again >= LT_FOREIGN_AGAIN_MAX || !it->has_owner ||
	    !it->has_rvn || strcmp(it->owner, f->st.owner) != 0 || it->fence != f->st.token)
		return false;
	memcpy(f->seen, it->rvn, sizeof(f->seen));
	keep_session(f, it); /* as the item is now (a detached lease's own) */
	f->again++;
	if (!send_write(f))
		answer_oom(f);
	return true;
}

static void on_write(void *arg, const struct store_result *res)
{
	struct foreign *f = arg;
	f->call = NULL;
	if (res->status == STORE_REFUSED && renew_again(f, &res->item))
		return;
	if (res->status == STORE_REFUSED && res->session_gone && f->op != LT_FOREIGN_RENEW &&
	    f->session[0] != '\0') {
		/* the session is gone: it extends nothing, nobody is to be told */
		f->session[0] = '\0';
		if (!send_write(f))
			answer_oom(f);
		return;
	}
	if (res->status == STORE_OK)
		written(f, &res->item);
	if (res->status == STORE_OK || res->status == STORE_REFUSED)
		answer(f, res->status == STORE_OK, NULL);
	else
		fail(f, res);
}

static void on_renewed_here(void *arg, int renewed, const struct lt_error *err)
{
	struct foreign *f = arg;
	answer(f, renewed > 0, err);
}

/* A lease with a secret is renewed or released from outside only with
 * its secret's hash, or by whoever may force a release. */
static bool secret_ok(const struct foreign *f, const struct lock_item *it)
{
	return it->secret_hash[0] == '\0' || f->op == LT_FOREIGN_FORCE || f->secret_waived ||
	       lt_secret_match(it->secret_hash, f->secret_hash);
}

static bool matches(const struct foreign *f, const struct lock_item *it)
{
	return it->has_owner && (f->token <= 0 || it->fence == f->token) &&
	       (!f->has_owner || strcmp(it->owner, f->owner) == 0) &&
	       strncmp(it->owner, f->prefix, strlen(f->prefix)) == 0 && secret_ok(f, it);
}

static void on_read(void *arg, const struct store_result *res)
{
	struct foreign *f = arg;
	struct lt_error e;
	f->call = NULL;
	if (res->status != STORE_OK) {
		fail(f, res);
		return;
	}
	const struct lock_item *it = &res->item;
	if (!lt_item_check(f->t, f->name, it, LT_ITEM_TO_SHOW, &e)) {
		answer(f, -1, &e); /* never written on as a lock */
		return;
	}
	state_from(f, it);
	if (!matches(f, it)) {
		answer(f, 0, NULL);
		return;
	}
	struct lock *l = lt_lock_get(f->t, f->name, false);
	if (l != NULL && l->held == NULL && it->has_owner)
		lt_lock_see(l, it); /* what waiters here count from */
	if (f->op == LT_FOREIGN_RENEW) {
		struct lease *mine = l != NULL ? l->held : NULL;
		if (mine != NULL && strcmp(mine->owner, it->owner) == 0) {
			/* held by this locktable: its own renewal keeps its clock */
			if (!lease_renew(mine, on_renewed_here, f))
				answer_oom(f);
			return;
		}
	}
	/* f->st holds the item's owner and holder (state_from); the write
	 * is conditioned on its rvn too (seen: lock_item's size) */
	memcpy(f->seen, it->rvn, sizeof(f->seen));
	if (!send_write(f))
		answer_oom(f);
}

bool lt_foreign(struct locktable *t, const struct lt_foreign_req *req, lt_foreign_cb cb, void *arg)
{
	size_t n = req->name != NULL ? strlen(req->name) : 0;
	if (n == 0 || n > STORE_NAME_MAX || (req->owner != NULL && !lt_id_ok(req->owner)) ||
	    req->lease_ms < 0 || req->lease_ms > LT_MAX_LEASE_MS ||
	    (unsigned)req->op > LT_FOREIGN_FORCE ||
	    (req->owner_prefix != NULL && strlen(req->owner_prefix) > STORE_ID_MAX) ||
	    (req->secret_hash != NULL && strlen(req->secret_hash) != STORE_SECRET_HASH_LEN))
		return false;
	struct foreign *f = calloc(1, sizeof(*f) + n + 1);
	if (f == NULL)
		return false;
	f->t = t;
	f->op = req->op;
	f->token = req->token;
	f->lease_ms = req->lease_ms;
	f->add_remaining = req->add_remaining;
	f->secret_waived = req->secret_waived;
	if (req->secret_hash != NULL)
		memcpy(f->secret_hash, req->secret_hash, STORE_SECRET_HASH_LEN + 1);
	f->cb = cb;
	f->arg = arg;
	if ((f->has_owner = req->owner != NULL))
		memcpy(f->owner, req->owner, strlen(req->owner) + 1);
	if (req->owner_prefix != NULL)
		memcpy(f->prefix, req->owner_prefix, strlen(req->owner_prefix) + 1);
	memcpy(f->name, req->name, n + 1);
	start_span(f);
	struct store_req rd = {.op = STORE_READ, .name = f->name, .span = f->span};
	if ((f->call = store_submit(t->store, &rd, on_read, f)) == NULL) {
		end_span(f, 0, "out of memory");
		free(f);
		return false;
	}
	f->next = t->foreign;
	if (t->foreign != NULL)
		t->foreign->prev = f;
	t->foreign = f;
	return true;
}
