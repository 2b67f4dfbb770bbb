/*
 * lt_shared: leases on the slots of shared names (see lt_shared.h).
 *
 * A wait reads the header and a window of WINDOW slots of its own (so
 * that racing readers spread, and a grant reads 5 items, not 100), and
 * writes one GRANT on a free one; when the window has none, it reads
 * every slot from then on, and grants a free slot or one whose rvn it
 * watched unchanged for a whole lease (a takeover that fills the slot it
 * frees). A waiting writer's announcement on the header makes it wait
 * behind the writer (or clear the announcement, once it stood still). A
 * refused grant reads again at once, a few times, then waits a poll. A
 * lease renews its slot alone; its end timer, at the send of the last
 * renewal answered in time plus the lease, makes it lost (expired). The
 * exclusive side (an exclusive waiter's announcement and removal of
 * crashed readers) is lt_shared_reap.c.
 */
#include "core/lt_shared.h"
#include "core/lt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lt_swatch.h"
#include "core/store/store_session.h"

#define RETRIES_AT_ONCE 3  /* refused grants read again at once this often */
#define TRY_RACES	16 /* ... a try's: it answers none on a full read only */
#define WINDOW		4  /* slots a first read looks at (then, if none is free, all) */

enum wait_step { W_IDLE, W_READ, W_GRANT, W_CLEAR, W_REGISTER, W_ANNOUNCE, W_SREAD, W_KILL };

struct sh_wait {
	struct sh_wait *prev, *next; /* in its bucket of t->sh_waits */
	struct locktable *t;
	struct lt_sh_args a;
	lt_sh_acquire_cb cb;
	void *arg;
	enum wait_step step;
	bool cancelled; /* a grant in flight: released when it lands */
	struct store_call *call;
	struct timer poll, deadline;
	bool timed_out;
	unsigned refused; /* grants refused in a row */
	unsigned slot;	  /* of the grant in flight */
	unsigned from;	  /* the first slot of the read in flight */
	bool read_all;	  /* a window found no free slot: read every slot */
	bool takeover;	  /* the grant in flight takes a stale holder's slot */
	char prev_holder[STORE_HOLDER_MAX + 1]; /* ... whose label this was */
	/* Phase-fair admission (RWAIT in store_shared.h): its id may be in
	 * the header's rwaiters or radmit (a registration was sent); and the
	 * wait after the registration in flight. */
	bool registered;
	bool admitted; /* its last read showed it in radmit */
	/* A semaphore's turn among replicas (its XANNOUNCE): the rvn of its
	 * announcement ("" none), whether the last read showed it standing,
	 * and since when reads found every place held (0: not full). */
	char ann_rvn[LT_ID_LEN + 1];
	bool own_turn;
	int64_t full_since;
	int64_t then_ms;
	int64_t sent_ms; /* its send: its lease runs from there */
	char owner[LT_ID_LEN + 1], rvn[LT_ID_LEN + 1];
	char *holder;
	struct sh_watch watch[STORE_SH_CAP];
	struct sh_watch xwatch; /* a waiting writer's announcement seen */
	struct sh_watch hwatch; /* an exclusive holder seen on the header */
	/* An exclusive holder in session mode (--heartbeat replica): the
	 * watch of it and its session (core/lt_swatch.h), the session READ
	 * in flight (its key, its send), and whether a wait behind it may
	 * register (RWAIT: the last header read said so). */
	struct lt_swatch swatch;
	char sread_key[STORE_SESSION_KEY_MAX + 1];
	int64_t sread_sent;
	int64_t hold_poll; /* a poll of the holder's real lease (sleaseMs) */
	bool may_register;
	struct trace_span *span; /* Lock.Acquire / Lock.TryAcquire, NULL: none */
	char name[];
};

struct sh_lease {
	struct locktable *t;
	enum store_sh_mode mode;
	unsigned cap, slot;
	int64_t lease_ms, token, end_ms;
	enum lt_loss loss;
	char owner[LT_ID_LEN + 1], rvn[LT_ID_LEN + 1];
	char next_rvn[LT_ID_LEN + 1]; /* the renewal in flight's */
	int64_t sent_ms;	      /* its send */
	int64_t backoff_ms;	      /* the next retry's wait; 0: none failed */
	struct store_call *call;
	struct timer heartbeat, end;
	lt_sh_lost_cb lost_cb;
	void *lost_arg;
	lt_renew_cb renew_cb; /* a client's renewal (sh_lease_renew) waiting */
	void *renew_arg;
	void *data;		    /* sh_lease_set_data: whose lease, for obs events */
	struct trace_ctx acq_ctx;   /* its acquire's span: renewals link to it */
	struct trace_span *hb_span; /* the renewal in flight's (Lock.Renew) */
	char *holder;
	char name[];
};

/* A release in flight, the lease gone: whom to tell. */
struct sh_release {
	struct locktable *t;
	lt_renew_cb cb; /* NULL: nobody */
	void *arg;
	bool held; /* the lease held when it was released */
	int64_t token;
	struct trace_span *span; /* Lock.Release */
	char name[STORE_NAME_MAX + 1];
};

static int64_t now_ms(struct locktable *t)
{
	return clock_now_ms(t->clock);
}

static void error_of(struct lt_error *e, const struct store_sh_result *r, const char *name)
{
	e->status = r->status == STORE_REFUSED ? STORE_FATAL : r->status;
	e->error_type = r->error_type != NULL ? r->error_type : store_status_name(r->status);
	snprintf(e->message, sizeof(e->message), "shared lock '%.64s': %s", name, r->message);
}

/* An event of l's (core/obs.h: logs 40-43, as an exclusive lease's). */
static void emit(const struct sh_lease *l, enum obs_event_id id, const char *reason,
		 const struct lt_error *err, int64_t wait_ms)
{
	struct obs_event ev = {
		.id = id,
		.lock = l->name,
		.table = l->t->store->table,
		.holder = l->holder,
		.reason = reason,
		.error_type = err != NULL ? err->error_type : NULL,
		.message = err != NULL ? err->message : NULL,
		.token = l->token,
		.wait_ms = wait_ms,
		.ctx = l->data,
	};
	obs_emit(l->t->obs, &ev);
}

/* A renewal or release span of l: the root of a trace of its own, linked
 * to the acquire's, as an exclusive lease's (core/lease.c). */
static struct trace_span *lease_span(const struct sh_lease *l, const char *name)
{
	if (l->t->tracer == NULL) /* tracing off: not even the calls */
		return NULL;
	struct trace_span *s = trace_start(l->t->tracer, name, TRACE_INTERNAL, NULL);
	trace_link(s, &l->acq_ctx);
	trace_str(s, "leasegate.lock.name", l->name);
	trace_str(s, "leasegate.lock.mode", l->mode == STORE_SH_LIMIT ? "limit" : "shared");
	trace_str(s, "db.collection.name", l->t->store->table);
	trace_int(s, "leasegate.lock.fencing_token", l->token);
	return s;
}

/* ---- the lease ---- */

/* Answers the client's renewal waiting (sh_lease_renew), if any. */
static void renew_told(struct sh_lease *l, int renewed, const struct lt_error *err)
{
	lt_renew_cb cb = l->renew_cb;
	l->renew_cb = NULL;
	if (cb != NULL)
		cb(l->renew_arg, renewed, err);
}

static void lose(struct sh_lease *l, enum lt_loss why)
{
	if (l->loss != LT_HELD)
		return;
	l->loss = why;
	timer_cancel(&l->heartbeat);
	timer_cancel(&l->end);
	if (why != LT_RELEASED) { /* ended by its holder: no loss */
		emit(l, OBS_LEASE_LOST, lt_loss_name(why), NULL, 0);
		obs_count(&l->t->obs->losses, lt_loss_name(why));
	}
	if (l->call != NULL) {
		store_cancel(l->t->store, l->call);
		l->call = NULL;
	}
	trace_str(l->hb_span, "leasegate.lock.loss_reason", lt_loss_name(why));
	trace_finish(&l->hb_span, why == LT_RELEASED ? NULL : "the lease was lost");
	lt_renew_cb rcb = l->renew_cb; /* told after the loss: l may be gone then */
	void *rarg = l->renew_arg;
	l->renew_cb = NULL;
	if (l->lost_cb != NULL)
		l->lost_cb(l->lost_arg, l, why);
	if (rcb != NULL)
		rcb(rarg, 0, NULL);
}

static void end_due(void *arg)
{
	lose(arg, LT_EXPIRED);
}

static void send_renewal(struct sh_lease *l);

static void heartbeat_due(void *arg)
{
	send_renewal(arg);
}

/* Why a refused renewal ends the lease: the slot as it is (free with
 * freedBy "force": an operator's release). */
static enum lt_loss refusal_loss(const struct lock_item *slot)
{
	if (!slot->exists)
		return LT_DELETED;
	return !slot->has_owner && slot->freed_forced ? LT_FORCED : LT_TAKEN_OVER;
}

enum lt_loss lt_sh_refusal_loss(const struct lock_item *item, bool header)
{
	if (header) /* its freed marks an exclusive lease's end, not this hold's */
		return item->exists ? LT_TAKEN_OVER : LT_DELETED;
	return refusal_loss(item);
}

static void on_renewed(void *arg, const struct store_sh_result *r)
{
	struct sh_lease *l = arg;
	l->call = NULL;
	trace_bool(l->hb_span, "leasegate.lock.renewed", r->status == STORE_OK);
	if (r->status != STORE_REFUSED && r->status != STORE_NO_TABLE) /* else lose() ends it */
		trace_finish(&l->hb_span, r->status == STORE_OK ? NULL : r->message);
	if (r->status == STORE_OK) {
		obs_count(&l->t->obs->renewals, "ok");
		memcpy(l->rvn, l->next_rvn, sizeof(l->rvn));
		l->backoff_ms = 0;
		/* an answer after the lease's end extends nothing: the end
		 * timer has run, and the lease is lost already */
		l->end_ms = l->sent_ms + l->lease_ms;
		timer_arm_at(&l->end, l->end_ms);
		timer_arm_at(&l->heartbeat, l->sent_ms + l->lease_ms / 3);
		renew_told(l, 1, NULL);
		return;
	}
	if (r->status == STORE_REFUSED) {
		lose(l, refusal_loss(&r->slots[0]));
		return;
	}
	if (r->status == STORE_NO_TABLE) {
		lose(l, LT_TABLE_NOT_FOUND);
		return;
	}
	/* transient or fatal: again after a backoff, until the lease ends */
	struct lt_error e;
	error_of(&e, r, l->name);
	renew_told(l, -1, &e);
	int64_t cap = l->lease_ms / 6;
	l->backoff_ms = l->backoff_ms == 0 ? LT_RENEW_RETRY_FIRST_MS : l->backoff_ms * 2;
	if (l->backoff_ms > cap)
		l->backoff_ms = cap;
	obs_count(&l->t->obs->renewals, e.error_type);
	emit(l, OBS_RENEW_RETRY, NULL, &e, l->backoff_ms);
	timer_arm(&l->heartbeat, l->backoff_ms);
}

static void send_renewal(struct sh_lease *l)
{
	if (l->loss != LT_HELD || l->call != NULL)
		return;
	store_new_id(l->next_rvn);
	l->sent_ms = now_ms(l->t);
	l->hb_span = lease_span(l, "Lock.Renew");
	struct store_sh_req r = {.op = STORE_SH_RENEW,
				 .name = l->name,
				 .mode = l->mode,
				 .cap = l->cap,
				 .slot = l->slot,
				 .owner = l->owner,
				 .rvn = l->next_rvn,
				 .seen_rvn = l->rvn,
				 .holder = l->holder,
				 .lease_ms = l->lease_ms,
				 .ttl = lt_ttl(l->t)};
	l->call = store_sh_submit(l->t->store, &r, on_renewed, l);
	if (l->call == NULL) { /* out of memory: try again later */
		trace_finish(&l->hb_span, "out of memory");
		timer_arm(&l->heartbeat, LT_RENEW_RETRY_FIRST_MS);
	}
}

/* The lease a grant sent at sent_ms made, its token from the answer. */
static struct sh_lease *lease_new(struct sh_wait *w, const struct store_sh_result *r,
				  int64_t sent_ms)
{
	size_t n = strlen(w->name) + 1;
	struct sh_lease *l = calloc(1, sizeof(*l) + n);
	if (l == NULL)
		return NULL;
	memcpy(l->name, w->name, n);
	l->t = w->t;
	l->mode = w->a.mode;
	l->cap = w->a.cap;
	l->slot = w->slot;
	l->lease_ms = w->a.lease_ms;
	l->token = w->a.mode == STORE_SH_SHARED ? r->header.lock.fence : r->slots[0].fence;
	memcpy(l->owner, w->owner, sizeof(l->owner));
	memcpy(l->rvn, w->rvn, sizeof(l->rvn));
	l->holder = w->holder;
	w->holder = NULL;
	l->end_ms = sent_ms + l->lease_ms;
	timer_init(&l->heartbeat, w->t->clock, heartbeat_due, l);
	timer_init(&l->end, w->t->clock, end_due, l);
	timer_arm_at(&l->end, l->end_ms);
	timer_arm_at(&l->heartbeat, sent_ms + l->lease_ms / 3);
	w->t->obs->acquisitions[w->takeover ? 1 : 0]++;
	if (w->takeover) {
		struct obs_event ev = {.id = OBS_TAKEOVER,
				       .lock = l->name,
				       .table = l->t->store->table,
				       .holder = l->holder,
				       .prev_holder =
					       w->prev_holder[0] != '\0' ? w->prev_holder : NULL,
				       .token = l->token};
		obs_emit(l->t->obs, &ev);
	}
	return l;
}

static void on_released(void *arg, const struct store_sh_result *r)
{
	struct sh_release *rel = arg;
	rel->t->releases_in_flight--;
	trace_bool(rel->span, "leasegate.lock.released", r->status == STORE_OK);
	trace_finish(&rel->span,
		     r->status == STORE_OK || r->status == STORE_REFUSED ? NULL : r->message);
	if (r->status == STORE_OK) /* exclusive waiters here try now: it may be free */
		lt_item_freed(rel->t, rel->name);
	if (r->status != STORE_OK && r->status != STORE_REFUSED && rel->held) {
		struct lt_error fe;
		error_of(&fe, r, rel->name);
		struct obs_event ev = {.id = OBS_RELEASE_FAILED,
				       .lock = rel->name,
				       .table = rel->t->store->table,
				       .error_type = fe.error_type,
				       .message = fe.message,
				       .token = rel->token};
		obs_emit(rel->t->obs, &ev); /* free once its lease runs out */
	}
	if (rel->cb != NULL) {
		struct lt_error e;
		if (!rel->held || r->status == STORE_REFUSED) /* ended before, or taken */
			rel->cb(rel->arg, 0, NULL);
		else if (r->status == STORE_OK)
			rel->cb(rel->arg, 1, NULL);
		else {
			error_of(&e, r, rel->name);
			rel->cb(rel->arg, -1, &e);
		}
	}
	free(rel);
}

/* A conditional release of slot by owner; cb (NULL: none) told its end
 * as sh_lease_release_then says. The release in flight, or NULL on
 * out-of-memory (no callback). */
static struct sh_release *release_slot(struct locktable *t, const char *name,
				       enum store_sh_mode mode, unsigned cap, unsigned slot,
				       const char *owner, bool held, int64_t token, lt_renew_cb cb,
				       void *arg)
{
	struct sh_release *rel = malloc(sizeof(*rel));
	if (rel == NULL)
		return NULL;
	rel->t = t;
	rel->token = token;
	rel->span = NULL;
	rel->cb = cb;
	rel->arg = arg;
	rel->held = held;
	snprintf(rel->name, sizeof(rel->name), "%s", name);
	struct store_sh_req r = {.op = STORE_SH_RELEASE,
				 .name = name,
				 .mode = mode,
				 .cap = cap,
				 .slot = slot,
				 .owner = owner,
				 .ttl = lt_ttl(t)};
	if (store_sh_submit(t->store, &r, on_released, rel) == NULL) {
		free(rel);
		return NULL;
	}
	t->releases_in_flight++; /* a stop waits for it (lt_stats) */
	return rel;
}

void sh_lease_release_then(struct sh_lease *l, lt_renew_cb cb, void *arg)
{
	bool held = l->loss == LT_HELD;
	l->lost_cb = NULL;
	lose(l, LT_RELEASED); /* timers and the renewal in flight go */
	lt_tx_sh_gone(l->t, l);
	/* a lost lease's slot is released too, on its owner: it may still
	 * be ours (expired, not taken), and then frees at once */
	struct sh_release *rel = release_slot(l->t, l->name, l->mode, l->cap, l->slot, l->owner,
					      held, l->token, cb, arg);
	if (rel != NULL && held)
		rel->span = lease_span(l, "Lock.Release"); /* its answer comes from the loop */
	if (rel == NULL && cb != NULL) {
		struct lt_error e = {.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
		snprintf(e.message, sizeof(e.message), "out of memory releasing '%.64s'", l->name);
		cb(arg, -1, &e); /* out of memory: told now, its lease runs out */
	}
	lt_holder_free(l->t, l->holder);
	free(l);
}

void sh_lease_let_go(struct sh_lease *l)
{
	l->lost_cb = NULL;
	lose(l, LT_RELEASED); /* timers and the renewal in flight go */
	lt_holder_free(l->t, l->holder);
	free(l);
}

void sh_lease_release(struct sh_lease *l)
{
	if (l != NULL)
		sh_lease_release_then(l, NULL, NULL);
}

bool sh_lease_renew(struct sh_lease *l, lt_renew_cb cb, void *arg)
{
	if (l->loss != LT_HELD || l->renew_cb != NULL)
		return false;
	l->renew_cb = cb;
	l->renew_arg = arg;
	if (l->call == NULL) { /* else the renewal in flight answers it */
		timer_cancel(&l->heartbeat);
		send_renewal(l);
	}
	return true;
}

void sh_lease_set_data(struct sh_lease *l, void *data)
{
	l->data = data;
}

void sh_lease_on_lost(struct sh_lease *l, lt_sh_lost_cb cb, void *arg)
{
	l->lost_cb = cb;
	l->lost_arg = arg;
}

int64_t sh_lease_token(const struct sh_lease *l)
{
	return l->token;
}

unsigned sh_lease_slot(const struct sh_lease *l)
{
	return l->slot;
}

const char *sh_lease_name(const struct sh_lease *l)
{
	return l->name;
}

const char *sh_lease_owner(const struct sh_lease *l)
{
	return l->owner;
}

enum store_sh_mode sh_lease_mode(const struct sh_lease *l)
{
	return l->mode;
}

struct locktable *sh_lease_table(const struct sh_lease *l)
{
	return l->t;
}

enum lt_loss sh_lease_refused(struct sh_lease *l, const struct lock_item *item, bool header)
{
	if (l->loss != LT_HELD)
		return l->loss;
	enum lt_loss why = lt_sh_refusal_loss(item, header);
	lose(l, why); /* its lost callback may release l */
	return why;
}

enum lt_loss sh_lease_loss(const struct sh_lease *l)
{
	return l->loss;
}

int64_t sh_lease_duration_ms(const struct sh_lease *l)
{
	return l->lease_ms;
}

const char *sh_lease_holder(const struct sh_lease *l)
{
	return l->holder;
}

int64_t sh_lease_end_ms(const struct sh_lease *l)
{
	return l->end_ms;
}

bool lt_sh_stale(struct sh_watch *wt, const struct lock_item *s, int64_t now)
{
	if (strcmp(wt->rvn, s->rvn) != 0) {
		snprintf(wt->rvn, sizeof(wt->rvn), "%s", s->rvn);
		wt->since = now;
		wt->lease_ms = 0;
	}
	if (s->lease_ms > wt->lease_ms)
		wt->lease_ms = s->lease_ms;
	return now - wt->since >= wt->lease_ms;
}

/* ---- the wait ---- */

/* The bucket of t->sh_waits a wait for name is in. */
static struct sh_wait **bucket(struct locktable *t, const char *name)
{
	return &t->sh_waits[store_name_hash(name) % LT_SH_BUCKETS];
}

static void on_dropped(void *arg, const struct store_sh_result *r) {}

/* The wait is over (granted or not): its announcement, if it made one,
 * goes (XCLEAR on its rvn; refused when another replaced it). Not
 * reported: one left behind stands still and is cleared by the next
 * waiter after LT_RESERVE_WINDOWS of its interval. */
static void drop_turn(struct sh_wait *w)
{
	if (w->ann_rvn[0] == '\0')
		return;
	struct store_sh_req r = {.op = STORE_SH_XCLEAR,
				 .name = w->name,
				 .mode = w->a.mode,
				 .cap = w->a.cap,
				 .seen_rvn = w->ann_rvn};
	struct store_call *c = store_sh_submit(w->t->store, &r, on_dropped, NULL);
	(void)c; /* NULL, out of memory: it stands still, and is cleared so */
	w->ann_rvn[0] = '\0';
}

static void wait_free(struct sh_wait *w)
{
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		*bucket(w->t, w->name) = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	timer_cancel(&w->poll);
	timer_cancel(&w->deadline);
	drop_turn(w);
	trace_finish(&w->span, "cancelled"); /* answered: ended already */
	lt_holder_free(w->t, w->holder);
	free(w);
}

static void on_unwaited(void *arg, const struct store_sh_result *r) {}

/* A registered wait ends ungranted: its id leaves the header's sets
 * (RUNWAIT), else a release would admit it and a writer wait a lease for
 * it. Not reported: a failure costs that lease at most. */
static void unwait(struct sh_wait *w)
{
	if (!w->registered)
		return;
	w->registered = false;
	struct store_sh_req r = {.op = STORE_SH_RUNWAIT,
				 .name = w->name,
				 .mode = w->a.mode,
				 .cap = w->a.cap,
				 .owner = w->owner,
				 .admitted = w->admitted};
	if (store_sh_submit(w->t->store, &r, on_unwaited, NULL) == NULL)
		return; /* out of memory: a writer waits a lease for it at most */
}

/* Ends w's span with the acquire's outcome. */
static void end_span(struct sh_wait *w, struct sh_lease *l, const struct lt_error *err)
{
	struct trace_span *s = w->span;
	if (s == NULL)
		return;
	w->span = NULL;
	trace_bool(s, "leasegate.lock.acquired", l != NULL);
	if (l != NULL) {
		trace_bool(s, "leasegate.lock.takeover", w->takeover);
		trace_int(s, "leasegate.lock.fencing_token", l->token);
		trace_int(s, "leasegate.lock.slot", l->slot);
		l->acq_ctx = trace_ctx_of(s);
	}
	if (err != NULL) {
		trace_str(s, "error.type", err->error_type);
		trace_fail(s, err->message);
	}
	trace_end(s);
}

/* Answers the wait (lease, or none, or err) and frees it. */
static void answer(struct sh_wait *w, struct sh_lease *l, const struct lt_error *err)
{
	lt_sh_acquire_cb cb = w->cb;
	void *arg = w->arg;
	end_span(w, l, err);
	if (l == NULL)
		unwait(w);
	wait_free(w);
	cb(arg, l, err);
}

static void read_again(struct sh_wait *w);

static void poll_due(void *arg)
{
	read_again(arg);
}

static void deadline_due(void *arg)
{
	struct sh_wait *w = arg;
	w->timed_out = true;
	if (w->step == W_IDLE) /* else the answer in flight decides */
		answer(w, NULL, NULL);
}

/* Not granted now: a try answers none, a wait reads again after delay. */
static void not_now(struct sh_wait *w, int64_t delay)
{
	w->step = W_IDLE;
	w->refused = 0; /* the next poll may retry at once again */
	if (!w->a.wait || w->timed_out) {
		answer(w, NULL, NULL);
		return;
	}
	timer_arm(&w->poll, delay);
}

/* A grant won by w, on r (the slot granted r->slots[0], the header
 * r->header): the lease, answered. */
static void won(struct sh_wait *w, const struct store_sh_result *r)
{
	struct sh_lease *l = lease_new(w, r, w->sent_ms);
	struct lt_error oom = {.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
	if (l == NULL) {
		(void)release_slot(w->t, w->name, w->a.mode, w->a.cap, w->slot, w->owner, true, 0,
				   NULL, NULL);
		snprintf(oom.message, sizeof(oom.message), "out of memory");
	}
	answer(w, l, l != NULL ? NULL : &oom);
}

static void on_granted(void *arg, const struct store_sh_result *r)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	if (w->cancelled) {
		if (r->status == STORE_OK)
			(void)release_slot(w->t, w->name, w->a.mode, w->a.cap, w->slot, w->owner,
					   true, 0, NULL, NULL);
		else
			unwait(w);
		wait_free(w);
		return;
	}
	if (r->status == STORE_OK) {
		won(w, r);
		return;
	}
	if (r->status != STORE_REFUSED) {
		struct lt_error e;
		error_of(&e, r, w->name);
		answer(w, NULL, &e);
		return;
	}
	/* another grant won the slot, or the phase moved: read again. A
	 * try answers "not granted" when a read shows every slot held, not
	 * because it lost a race for a free one (a semaphore of 2 with one
	 * holder churning on another replica refused tries: the stress
	 * harness's sem_try_refused) */
	unsigned again = w->a.wait ? RETRIES_AT_ONCE : TRY_RACES;
	if (++w->refused <= again)
		read_again(w);
	else
		not_now(w, lt_poll_interval(w->a.lease_ms));
}

/* A GRANT of slot (r->slots[i] as read), a takeover of seen_rvn or none;
 * admitted past a writer's announcement when the header's radmit has it. */
static void grant(struct sh_wait *w, const struct store_sh_result *r, unsigned i,
		  const char *seen_rvn)
{
	bool admitted = store_sh_set_has(&r->header.radmit, w->owner);
	const struct lock_item *s = &r->slots[i];
	store_new_id(w->rvn);
	w->slot = w->from + i;
	w->step = W_GRANT;
	w->takeover = seen_rvn != NULL;
	snprintf(w->prev_holder, sizeof(w->prev_holder), "%s", seen_rvn != NULL ? s->holder : "");
	w->sent_ms = now_ms(w->t);
	struct store_sh_req g = {.op = STORE_SH_GRANT,
				 .name = w->name,
				 .mode = w->a.mode,
				 .cap = w->a.cap,
				 .slot = w->slot,
				 .owner = w->owner,
				 .rvn = w->rvn,
				 .seen_rvn = seen_rvn,
				 .first = r->header.scount == 0,
				 .admitted = admitted,
				 .announced = w->own_turn,
				 .registered = w->registered,
				 .seen_fence = r->header.lock.has_fence ? r->header.lock.fence : 0,
				 .seen_slot_fence = s->has_fence ? s->fence : 0,
				 .holder = w->holder,
				 .lease_ms = w->a.lease_ms,
				 .ttl = lt_ttl(w->t)};
	w->call = store_sh_submit(w->t->store, &g, on_granted, w);
	if (w->call == NULL)
		not_now(w, LT_RENEW_RETRY_FIRST_MS);
}

/* The name held in another mode, or with another limit: why, or NULL. */
static const char *mismatch(const struct sh_wait *w, const struct store_sh_header *h, char *buf,
			    size_t len)
{
	if (h->scount == 0)
		return NULL;
	bool limit = w->a.mode == STORE_SH_LIMIT;
	if (strcmp(h->smode, limit ? "LIMIT" : "SHARED") != 0)
		snprintf(buf, len, "is held %s", limit ? "shared (readers)" : "as a semaphore");
	else if (limit && h->slimit != (int64_t)w->a.cap)
		snprintf(buf, len, "is a semaphore of %lld, not %u", (long long)h->slimit,
			 w->a.cap);
	else
		return NULL;
	return buf;
}

static void on_xcleared(void *arg, const struct store_sh_result *r)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	read_again(w); /* cleared, or replaced: the header says which */
}

static void on_registered(void *arg, const struct store_sh_result *r)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	if (r->status == STORE_REFUSED) { /* nothing to wait behind now, or full */
		read_again(w);
		return;
	}
	not_now(w, w->then_ms);
}

/* A reader waits behind an exclusive holder or a writer's announcement
 * for delay: registered on the header first (RWAIT), once per phase, so
 * that the exclusive's release admits it before the next writer. A try
 * does not register; nor does a semaphore's holder, nor a reader the
 * header shows registered or admitted already, nor one past the set's
 * bound (it waits as before). */
static bool may_register(const struct sh_wait *w, const struct store_sh_header *h)
{
	bool listed =
		store_sh_set_has(&h->rwaiters, w->owner) || store_sh_set_has(&h->radmit, w->owner);
	return w->a.wait && w->a.mode == STORE_SH_SHARED && !listed &&
	       h->rwaiters.n < STORE_SH_SET_MAX;
}

/* Waits delay, registered first (RWAIT) when reg. */
static void register_and_wait(struct sh_wait *w, bool reg, int64_t delay)
{
	if (!reg) {
		not_now(w, delay);
		return;
	}
	struct store_sh_req r = {.op = STORE_SH_RWAIT,
				 .name = w->name,
				 .mode = w->a.mode,
				 .cap = w->a.cap,
				 .owner = w->owner};
	w->then_ms = delay;
	w->step = W_REGISTER;
	w->call = store_sh_submit(w->t->store, &r, on_registered, w);
	if (w->call == NULL)
		not_now(w, delay);
	else
		w->registered = true; /* it may land, whatever the answer says */
}

static void wait_behind(struct sh_wait *w, const struct store_sh_header *h, int64_t delay)
{
	register_and_wait(w, may_register(w, h), delay);
}

/* Ends the exclusive holder owner whose lock rvn seen_rvn stood still a
 * whole lease on this clock (XTAKE), then reads again; poll: the wait when
 * it cannot be sent. */
static void xtake(struct sh_wait *w, const char *owner, const char *seen_rvn, int64_t poll)
{
	struct store_sh_req r = {.op = STORE_SH_XTAKE,
				 .name = w->name,
				 .cap = w->a.cap,
				 .owner = owner,
				 .seen_rvn = seen_rvn,
				 .ttl = lt_ttl(w->t)};
	w->step = W_CLEAR;
	w->call = store_sh_submit(w->t->store, &r, on_xcleared, w);
	if (w->call == NULL)
		not_now(w, poll);
}

static void on_killed(void *arg, const struct store_session_result *res)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	bool answered = res->status == STORE_OK || res->status == STORE_REFUSED;
	if (answered) /* dead now (by it or another), or another rvn: read */
		read_again(w);
	else
		not_now(w, LT_RENEW_RETRY_FIRST_MS);
}

/* Marks the session out->session dead, conditioned on out->session_rvn
 * (store_session KILL). */
static void kill_session(struct sh_wait *w, const struct lt_swatch_out *out, int64_t poll)
{
	char replica[STORE_SESSION_REPLICA_MAX + 1], inc[STORE_SESSION_INC_LEN + 1];
	if (!store_session_key_split(out->session, replica, inc)) {
		not_now(w, poll);
		return;
	}
	struct store_session_req req = {.op = STORE_SESSION_KILL,
					.replica = replica,
					.incarnation = inc,
					.seen_rvn = out->session_rvn,
					.by = w->owner};
	w->step = W_KILL;
	w->call = store_session_submit(w->t->store, &req, on_killed, w);
	if (w->call == NULL)
		not_now(w, poll);
}

/* What a reader does on each verdict of its session watch. */
enum sh_act { ACT_WAIT, ACT_READ, ACT_KILL, ACT_XTAKE };

/* The verdict out as an act. A reader has no transaction: the takeover
 * a transaction would make of a session still live at the watched rvn
 * (TAKEOVER_TX, CHECK_RVN) is a KILL again (conditioned on that rvn), and
 * the lock's single write comes once a read shows the session dead
 * (TAKEOVER). A session absent for the lease, the lock's rvn still as
 * long (TAKEOVER_TX, CHECK_ABSENT): no heartbeat landed in that time (a
 * BEAT never makes a session), so XTAKE on the lock's rvn, as on a dead
 * session. */
static enum sh_act act_of(const struct lt_swatch_out *out)
{
	static const enum sh_act acts[] = {
		[LT_SWATCH_WAIT] = ACT_WAIT,	  [LT_SWATCH_FREE] = ACT_READ,
		[LT_SWATCH_PER_LEASE] = ACT_READ, [LT_SWATCH_KILL] = ACT_KILL,
		[LT_SWATCH_TAKEOVER] = ACT_XTAKE, [LT_SWATCH_BAD] = ACT_WAIT,
	};
	if (out->verdict == LT_SWATCH_TAKEOVER_TX)
		return out->check == LT_SWATCH_CHECK_ABSENT ? ACT_XTAKE : ACT_KILL;
	return (unsigned)out->verdict < sizeof(acts) / sizeof(acts[0]) ? acts[out->verdict]
								       : ACT_WAIT;
}

/* A session READ answered: its verdict acted on. */
static void on_sread(void *arg, const struct store_session_result *res)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	if (w->timed_out) {
		answer(w, NULL, NULL);
		return;
	}
	int64_t now = now_ms(w->t);
	const struct lock_item *it = &res->lock;
	struct lt_swatch_read r = {
		.counted = res->status == STORE_OK && res->session_read && res->lock_read,
		.sent_ms = w->sread_sent <= now ? w->sread_sent : now,
		.returned_ms = now,
		.lock_exists = it->exists,
		.owner = it->has_owner ? it->owner : "",
		.rvn = it->rvn,
		.session = it->session,
		.slease_ms = it->slease_ms,
		.session_read = w->sread_key,
		.sess = res->session,
	};
	struct lt_swatch_out out;
	lt_swatch_feed(&w->swatch, &r, &out);
	int64_t poll = lt_swatch_poll_ms(&w->swatch, now);
	if (!r.counted || out.verdict == LT_SWATCH_BAD) /* failed, or out of bounds */
		poll = w->hold_poll;			/* as before: wait a poll */
	else if (poll <= 0 && w->swatch.state != LT_SW_UNREAD)
		poll = LT_RENEW_RETRY_FIRST_MS;
	switch (act_of(&out)) {
	case ACT_READ:
		read_again(w);
		break;
	case ACT_KILL:
		kill_session(w, &out, poll);
		break;
	case ACT_XTAKE:
		xtake(w, out.owner, out.rvn, poll);
		break;
	case ACT_WAIT:
		register_and_wait(w, w->may_register, poll);
		break;
	}
}

/* Reads the lock and its session h->session in one request (store_session
 * READ), for the watch. */
static void read_session(struct sh_wait *w, const struct store_sh_header *hd)
{
	const struct lock_item *h = &hd->lock;
	char replica[STORE_SESSION_REPLICA_MAX + 1], inc[STORE_SESSION_INC_LEN + 1];
	w->may_register = may_register(w, hd);
	w->hold_poll = lt_poll_interval(lt_item_lease_ms(h));
	if (!store_session_key_split(h->session, replica, inc)) {
		wait_behind(w, hd, lt_poll_interval(lt_item_lease_ms(h)));
		return;
	}
	snprintf(w->sread_key, sizeof(w->sread_key), "%s", h->session);
	struct store_session_req req = {
		.op = STORE_SESSION_READ, .replica = replica, .incarnation = inc, .name = w->name};
	w->sread_sent = now_ms(w->t);
	w->step = W_SREAD;
	w->call = store_session_submit(w->t->store, &req, on_sread, w);
	if (w->call == NULL)
		wait_behind(w, hd, lt_poll_interval(lt_item_lease_ms(h)));
}

/* An exclusive holder holds the name: wait a poll of its lease, unless its
 * rvn stood still a whole lease on this clock (it crashed): then end it
 * (XTAKE, conditioned on that rvn) and read again. A holder in session mode
 * (--heartbeat replica: lt_item_session) renews its session, not its item,
 * so its rvn standing still says nothing alone: a waiting reader reads the
 * lock and its session together and judges them as an exclusive waiter
 * does (lt_swatch; core/lt_swait.c): KILL of a session whose rvn stood
 * still its maxLeaseMs, then XTAKE once the session is dead (or stood
 * absent a lease) and the lock's rvn stood still a lease (on_sread). A
 * try waits a poll of the real lease (sleaseMs) and never ends it. */
static void behind_holder(struct sh_wait *w, const struct store_sh_header *hd, int64_t now)
{
	const struct lock_item *h = &hd->lock;
	if (lt_item_session(h) && w->a.wait) {
		read_session(w, hd);
		return;
	}
	if (lt_item_session(h) || !lt_sh_stale(&w->hwatch, h, now)) {
		wait_behind(w, hd, lt_poll_interval(lt_item_lease_ms(h)));
		return;
	}
	xtake(w, h->owner, w->hwatch.rvn, lt_poll_interval(h->lease_ms));
}

/* Since when this replica has seen the announcement of rvn stand (t->
 * xseen), since at the latest: the earlier of the two. */
static int64_t announcement_seen(struct locktable *t, const char *rvn, int64_t since)
{
	struct sh_watch *s = &t->xseen[store_name_hash(rvn) % LT_XSEEN];
	if (strcmp(s->rvn, rvn) != 0) {
		snprintf(s->rvn, sizeof(s->rvn), "%s", rvn);
		s->since = since;
	}
	if (since < s->since)
		s->since = since;
	return s->since;
}

/* A writer waits for the readers (its announcement on the header): wait
 * behind it, unless the announcement stood still LT_RESERVE_WINDOWS of its
 * interval on this clock (its writer gone), as this wait or any other wait
 * or try of this replica saw it: then clear it. */
static void behind_writer(struct sh_wait *w, const struct store_sh_header *h, int64_t now)
{
	int64_t ms = h->xwait_ms < 1		    ? 1
		     : h->xwait_ms > LT_MAX_POLL_MS ? LT_MAX_POLL_MS
						    : h->xwait_ms;
	if (strcmp(w->xwatch.rvn, h->xwait_rvn) != 0) {
		snprintf(w->xwatch.rvn, sizeof(w->xwatch.rvn), "%s", h->xwait_rvn);
		w->xwatch.since = now;
	}
	w->xwatch.since = announcement_seen(w->t, h->xwait_rvn, w->xwatch.since);
	if (now - w->xwatch.since < LT_RESERVE_WINDOWS * ms) {
		wait_behind(w, h, ms);
		return;
	}
	struct store_sh_req r = {
		.op = STORE_SH_XCLEAR, .name = w->name, .cap = w->a.cap, .seen_rvn = w->xwatch.rvn};
	w->step = W_CLEAR;
	w->call = store_sh_submit(w->t->store, &r, on_xcleared, w);
	if (w->call == NULL)
		not_now(w, ms);
}

static void on_turn_announced(void *arg, const struct store_sh_result *r)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	if (r->status != STORE_OK) /* another's stands, or a place came free */
		w->ann_rvn[0] = '\0';
	not_now(w, w->then_ms);
}

/* Every place held, none to take over: a semaphore's waiter that found it
 * so for a poll interval announces itself (XANNOUNCE, a new rvn at each
 * poll, its interval poll): grants of others are refused while it stands,
 * so holders releasing and taking again on another replica cannot keep
 * the places from it; the first that comes free is its (docs/lease-rules.md,
 * "Fair across replicas"). Then it polls. */
static void full(struct sh_wait *w, int64_t poll, int64_t now)
{
	if (!w->a.wait || w->a.mode != STORE_SH_LIMIT) {
		not_now(w, poll);
		return;
	}
	if (w->full_since == 0)
		w->full_since = now;
	if (now - w->full_since < poll) {
		not_now(w, poll);
		return;
	}
	store_new_id(w->ann_rvn);
	struct store_sh_req r = {.op = STORE_SH_XANNOUNCE,
				 .name = w->name,
				 .mode = w->a.mode,
				 .cap = w->a.cap,
				 .owner = w->owner,
				 .rvn = w->ann_rvn,
				 .lease_ms = poll};
	w->then_ms = poll;
	w->step = W_ANNOUNCE;
	w->call = store_sh_submit(w->t->store, &r, on_turn_announced, w);
	if (w->call == NULL) {
		w->ann_rvn[0] = '\0';
		not_now(w, poll);
	}
}

/* Decides on what a READ showed: a grant, a wait, or an answer. */
/* The slot of r that shows w's last grant (its owner and rvn), or -1:
 * that grant applied though its answer said otherwise (a retry of it
 * refused by its own first attempt: store_shared.h, GRANT). */
static int own_slot(const struct sh_wait *w, const struct store_sh_result *r)
{
	if (w->rvn[0] == '\0')
		return -1; /* no grant sent yet */
	for (unsigned i = 0; i < r->nslots; i++)
		if (r->slots[i].has_owner && strcmp(r->slots[i].owner, w->owner) == 0 &&
		    strcmp(r->slots[i].rvn, w->rvn) == 0)
			return (int)i;
	return -1;
}

static void decide(struct sh_wait *w, const struct store_sh_result *r)
{
	char why[96];
	int64_t now = now_ms(w->t);
	int own = own_slot(w, r);
	if (own >= 0) { /* its grant holds: the lease runs from its send */
		struct store_sh_result g = *r;
		g.slots = &r->slots[own];
		g.nslots = 1;
		w->slot = w->from + (unsigned)own;
		won(w, &g);
		return;
	}
	bool admitted = store_sh_set_has(&r->header.radmit, w->owner);
	w->admitted = admitted;
	w->own_turn = r->header.xwait[0] != '\0' && strcmp(r->header.xwait, w->owner) == 0;
	if (!w->own_turn)
		w->ann_rvn[0] = '\0'; /* not (or no longer) on the header */
	if (admitted || store_sh_set_has(&r->header.rwaiters, w->owner))
		w->registered = true;	/* a registration whose answer was lost */
	if (r->header.lock.has_owner) { /* an exclusive holder */
		behind_holder(w, &r->header, now);
		return;
	}
	if (mismatch(w, &r->header, why, sizeof(why)) != NULL) {
		struct lt_error e = {.status = STORE_FATAL, .error_type = "ModeMismatch"};
		snprintf(e.message, sizeof(e.message), "lock '%.64s' %s", w->name, why);
		answer(w, NULL, &e);
		return;
	}
	if (r->header.xwait[0] != '\0' && !admitted && !w->own_turn) { /* admitted: past it */
		behind_writer(w, &r->header, now);
		return;
	}
	unsigned n = r->nslots, start = (unsigned)(store_name_hash(w->owner) % n);
	for (unsigned j = 0; j < n; j++) { /* a free slot, from one of its own */
		unsigned i = (start + j) % n;
		if (!r->slots[i].has_owner) {
			grant(w, r, i, NULL);
			return;
		}
	}
	if (!w->read_all) { /* the window is full: look at every slot now */
		w->read_all = true;
		read_again(w);
		return;
	}
	int64_t poll = LT_MAX_POLL_MS;
	int takeover = -1;
	for (unsigned i = 0; i < n; i++) {
		struct sh_watch *wt = &w->watch[w->from + i];
		if (lt_sh_stale(wt, &r->slots[i], now) && takeover < 0)
			takeover = (int)i;
		int64_t p = lt_poll_interval(wt->lease_ms);
		poll = p < poll ? p : poll;
	}
	if (takeover >= 0)
		grant(w, r, (unsigned)takeover, w->watch[w->from + takeover].rvn);
	else
		full(w, poll, now);
}

static void on_read(void *arg, const struct store_sh_result *r)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	if (r->status != STORE_OK) {
		struct lt_error e;
		error_of(&e, r, w->name);
		answer(w, NULL, &e);
		return;
	}
	if (w->timed_out) {
		answer(w, NULL, NULL);
		return;
	}
	decide(w, r);
}

/* Sends the wait's READ; false on out-of-memory (nothing sent). */
static bool send_read(struct sh_wait *w)
{
	struct store_sh_req r = {
		.op = STORE_SH_READ, .name = w->name, .mode = w->a.mode, .cap = w->a.cap};
	if (!w->read_all && w->a.cap > WINDOW) { /* a window of its own */
		unsigned windows = (w->a.cap + WINDOW - 1) / WINDOW;
		r.slot = (unsigned)(store_name_hash(w->owner) % windows) * WINDOW;
		r.count = w->a.cap - r.slot < WINDOW ? w->a.cap - r.slot : WINDOW;
	}
	w->from = r.slot;
	w->step = W_READ;
	w->call = store_sh_submit(w->t->store, &r, on_read, w);
	if (w->call == NULL)
		w->step = W_IDLE;
	return w->call != NULL;
}

static void read_again(struct sh_wait *w)
{
	if (!send_read(w))
		not_now(w, LT_RENEW_RETRY_FIRST_MS);
}

struct sh_wait *lt_sh_acquire(struct locktable *t, const struct lt_sh_args *a, lt_sh_acquire_cb cb,
			      void *arg)
{
	size_t n = a->name != NULL ? strnlen(a->name, STORE_NAME_MAX + 1) : 0;
	if (n == 0 || n > STORE_NAME_MAX || a->cap < 1 || a->cap > STORE_SH_CAP ||
	    a->lease_ms < LT_MIN_LEASE_MS || a->lease_ms > LT_MAX_LEASE_MS || a->timeout_ms < 0 ||
	    (a->mode != STORE_SH_SHARED && a->mode != STORE_SH_LIMIT) ||
	    (a->owner != NULL && (!lt_id_ok(a->owner) || strlen(a->owner) > LT_ID_LEN)))
		return NULL;
	struct sh_wait *w = calloc(1, sizeof(*w) + n + 1);
	if (w == NULL)
		return NULL;
	memcpy(w->name, a->name, n);
	w->t = t;
	w->a = *a;
	w->a.name = w->name;
	w->cb = cb;
	w->arg = arg;
	w->holder = a->holder != NULL ? strdup(a->holder) : t->holder_label;
	if (a->owner != NULL)
		memcpy(w->owner, a->owner, strlen(a->owner) + 1);
	else
		store_new_id(w->owner);
	w->a.owner = NULL; /* the caller's string: copied */
	lt_swatch_init(&w->swatch);
	timer_init(&w->poll, t->clock, poll_due, w);
	timer_init(&w->deadline, t->clock, deadline_due, w);
	if (a->wait && a->timeout_ms > 0)
		timer_arm(&w->deadline, a->timeout_ms);
	w->a.trace_parent = NULL; /* the caller's: read now only */
	if (t->tracer != NULL) {  /* tracing off: not even the calls */
		w->span = trace_start(t->tracer, a->wait ? "Lock.Acquire" : "Lock.TryAcquire",
				      TRACE_INTERNAL, a->trace_parent);
		trace_str(w->span, "leasegate.lock.name", w->name);
		trace_str(w->span, "leasegate.lock.mode",
			  a->mode == STORE_SH_LIMIT ? "limit" : "shared");
		trace_str(w->span, "db.collection.name", t->store->table);
	}
	struct sh_wait **head = bucket(t, w->name);
	w->next = *head;
	if (*head != NULL)
		(*head)->prev = w;
	*head = w;
	if (!send_read(w)) { /* out of memory at once: no callback */
		wait_free(w);
		return NULL;
	}
	return w;
}

void lt_sh_kick(struct locktable *t, const char *name)
{
	for (struct sh_wait *w = *bucket(t, name); w != NULL; w = w->next)
		if (w->step == W_IDLE && !w->cancelled && timer_armed(&w->poll) &&
		    strcmp(w->name, name) == 0) {
			timer_cancel(&w->poll);
			timer_arm(&w->poll, 0); /* from the loop */
		}
}

bool lt_sh_waiting(struct locktable *t, const char *name)
{
	for (struct sh_wait *w = *bucket(t, name); w != NULL; w = w->next)
		if (w->a.wait && w->a.mode == STORE_SH_SHARED && !w->cancelled &&
		    strcmp(w->name, name) == 0)
			return true;
	return false;
}

const char *sh_wait_name(const struct sh_wait *w)
{
	return w->name;
}

void lt_sh_acquire_cancel(struct sh_wait *w)
{
	if (w == NULL)
		return;
	if (w->step == W_GRANT) { /* its answer releases what it took */
		w->cancelled = true;
		timer_cancel(&w->poll);
		timer_cancel(&w->deadline);
		return;
	}
	if (w->call != NULL)
		store_cancel(w->t->store, w->call);
	unwait(w);
	wait_free(w);
}
