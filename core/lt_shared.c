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

#define RETRIES_AT_ONCE 3 /* refused grants read again at once this often */
#define WINDOW		4 /* slots a first read looks at (then, if none is free, all) */

enum wait_step { W_IDLE, W_READ, W_GRANT, W_CLEAR };

struct sh_wait {
	struct sh_wait *prev, *next; /* in t->sh_waits */
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
	int64_t sent_ms;  /* its send: its lease runs from there */
	char owner[LT_ID_LEN + 1], rvn[LT_ID_LEN + 1];
	char *holder;
	struct sh_watch watch[STORE_SH_CAP];
	struct sh_watch xwatch; /* a waiting writer's announcement seen */
	struct sh_watch hwatch; /* an exclusive holder seen on the header */
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
	char *holder;
	char name[];
};

/* A release in flight, the lease gone: whom to tell. */
struct sh_release {
	struct locktable *t;
	lt_renew_cb cb; /* NULL: nobody */
	void *arg;
	bool held; /* the lease held when it was released */
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

/* ---- the lease ---- */

static void lose(struct sh_lease *l, enum lt_loss why)
{
	if (l->loss != LT_HELD)
		return;
	l->loss = why;
	timer_cancel(&l->heartbeat);
	timer_cancel(&l->end);
	if (l->call != NULL) {
		store_cancel(l->t->store, l->call);
		l->call = NULL;
	}
	if (l->lost_cb != NULL)
		l->lost_cb(l->lost_arg, l, why);
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

/* Why a refused renewal ends the lease: the slot as it is. */
static enum lt_loss refusal_loss(const struct lock_item *slot)
{
	return slot->exists ? LT_TAKEN_OVER : LT_DELETED;
}

static void on_renewed(void *arg, const struct store_sh_result *r)
{
	struct sh_lease *l = arg;
	l->call = NULL;
	if (r->status == STORE_OK) {
		memcpy(l->rvn, l->next_rvn, sizeof(l->rvn));
		l->backoff_ms = 0;
		/* an answer after the lease's end extends nothing: the end
		 * timer has run, and the lease is lost already */
		l->end_ms = l->sent_ms + l->lease_ms;
		timer_arm_at(&l->end, l->end_ms);
		timer_arm_at(&l->heartbeat, l->sent_ms + l->lease_ms / 3);
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
	int64_t cap = l->lease_ms / 6;
	l->backoff_ms = l->backoff_ms == 0 ? LT_RENEW_RETRY_FIRST_MS : l->backoff_ms * 2;
	if (l->backoff_ms > cap)
		l->backoff_ms = cap;
	timer_arm(&l->heartbeat, l->backoff_ms);
}

static void send_renewal(struct sh_lease *l)
{
	if (l->loss != LT_HELD || l->call != NULL)
		return;
	store_new_id(l->next_rvn);
	l->sent_ms = now_ms(l->t);
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
	if (l->call == NULL) /* out of memory: try again later */
		timer_arm(&l->heartbeat, LT_RENEW_RETRY_FIRST_MS);
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
	return l;
}

static void on_released(void *arg, const struct store_sh_result *r)
{
	struct sh_release *rel = arg;
	rel->t->releases_in_flight--;
	if (r->status == STORE_OK) /* exclusive waiters here try now: it may be free */
		lt_item_freed(rel->t, rel->name);
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
 * as sh_lease_release_then says. False on out-of-memory (no callback). */
static bool release_slot(struct locktable *t, const char *name, enum store_sh_mode mode,
			 unsigned cap, unsigned slot, const char *owner, bool held, lt_renew_cb cb,
			 void *arg)
{
	struct sh_release *rel = malloc(sizeof(*rel));
	if (rel == NULL)
		return false;
	rel->t = t;
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
		return false;
	}
	t->releases_in_flight++; /* a stop waits for it (lt_stats) */
	return true;
}

void sh_lease_release_then(struct sh_lease *l, lt_renew_cb cb, void *arg)
{
	bool held = l->loss == LT_HELD;
	l->lost_cb = NULL;
	lose(l, LT_RELEASED); /* timers and the renewal in flight go */
	/* a lost lease's slot is released too, on its owner: it may still
	 * be ours (expired, not taken), and then frees at once */
	if (!release_slot(l->t, l->name, l->mode, l->cap, l->slot, l->owner, held, cb, arg) &&
	    cb != NULL) {
		struct lt_error e = {.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
		snprintf(e.message, sizeof(e.message), "out of memory releasing '%.64s'", l->name);
		cb(arg, -1, &e); /* out of memory: told now, its lease runs out */
	}
	lt_holder_free(l->t, l->holder);
	free(l);
}

void sh_lease_release(struct sh_lease *l)
{
	if (l != NULL)
		sh_lease_release_then(l, NULL, NULL);
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

enum lt_loss sh_lease_loss(const struct sh_lease *l)
{
	return l->loss;
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

static void wait_free(struct sh_wait *w)
{
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		w->t->sh_waits = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	timer_cancel(&w->poll);
	timer_cancel(&w->deadline);
	lt_holder_free(w->t, w->holder);
	free(w);
}

/* Answers the wait (lease, or none, or err) and frees it. */
static void answer(struct sh_wait *w, struct sh_lease *l, const struct lt_error *err)
{
	lt_sh_acquire_cb cb = w->cb;
	void *arg = w->arg;
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

static void on_granted(void *arg, const struct store_sh_result *r)
{
	struct sh_wait *w = arg;
	w->call = NULL;
	w->step = W_IDLE;
	if (w->cancelled) {
		if (r->status == STORE_OK)
			(void)release_slot(w->t, w->name, w->a.mode, w->a.cap, w->slot, w->owner,
					   true, NULL, NULL);
		wait_free(w);
		return;
	}
	if (r->status == STORE_OK) {
		struct sh_lease *l = lease_new(w, r, w->sent_ms);
		struct lt_error oom = {.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
		if (l == NULL) {
			(void)release_slot(w->t, w->name, w->a.mode, w->a.cap, w->slot, w->owner,
					   true, NULL, NULL);
			snprintf(oom.message, sizeof(oom.message), "out of memory");
		}
		answer(w, l, l != NULL ? NULL : &oom);
		return;
	}
	if (r->status != STORE_REFUSED) {
		struct lt_error e;
		error_of(&e, r, w->name);
		answer(w, NULL, &e);
		return;
	}
	/* another grant won the slot, or the phase moved: read again */
	if (++w->refused <= RETRIES_AT_ONCE)
		read_again(w);
	else
		not_now(w, lt_poll_interval(w->a.lease_ms));
}

/* A GRANT of slot (r->slots[i] as read), a takeover of seen_rvn or none. */
static void grant(struct sh_wait *w, const struct store_sh_result *r, unsigned i,
		  const char *seen_rvn)
{
	const struct lock_item *s = &r->slots[i];
	store_new_id(w->rvn);
	w->slot = w->from + i;
	w->step = W_GRANT;
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

/* An exclusive holder holds the name: wait a poll of its lease, unless its
 * rvn stood still a whole lease on this clock (it crashed): then end it
 * (XTAKE, conditioned on that rvn) and read again. */
static void behind_holder(struct sh_wait *w, const struct lock_item *h, int64_t now)
{
	if (!lt_sh_stale(&w->hwatch, h, now)) {
		not_now(w, lt_poll_interval(h->lease_ms));
		return;
	}
	struct store_sh_req r = {.op = STORE_SH_XTAKE,
				 .name = w->name,
				 .cap = w->a.cap,
				 .owner = h->owner,
				 .seen_rvn = w->hwatch.rvn,
				 .ttl = lt_ttl(w->t)};
	w->step = W_CLEAR;
	w->call = store_sh_submit(w->t->store, &r, on_xcleared, w);
	if (w->call == NULL)
		not_now(w, lt_poll_interval(h->lease_ms));
}

/* A writer waits for the readers (its announcement on the header): wait
 * behind it, unless the announcement stood still LT_RESERVE_WINDOWS of its
 * interval on this clock (its writer gone): then clear it. */
static void behind_writer(struct sh_wait *w, const struct store_sh_header *h, int64_t now)
{
	int64_t ms = h->xwait_ms < 1		    ? 1
		     : h->xwait_ms > LT_MAX_POLL_MS ? LT_MAX_POLL_MS
						    : h->xwait_ms;
	if (strcmp(w->xwatch.rvn, h->xwait_rvn) != 0) {
		snprintf(w->xwatch.rvn, sizeof(w->xwatch.rvn), "%s", h->xwait_rvn);
		w->xwatch.since = now;
	}
	if (now - w->xwatch.since < LT_RESERVE_WINDOWS * ms) {
		not_now(w, ms);
		return;
	}
	struct store_sh_req r = {
		.op = STORE_SH_XCLEAR, .name = w->name, .cap = w->a.cap, .seen_rvn = w->xwatch.rvn};
	w->step = W_CLEAR;
	w->call = store_sh_submit(w->t->store, &r, on_xcleared, w);
	if (w->call == NULL)
		not_now(w, ms);
}

/* Decides on what a READ showed: a grant, a wait, or an answer. */
static void decide(struct sh_wait *w, const struct store_sh_result *r)
{
	char why[96];
	int64_t now = now_ms(w->t);
	if (r->header.lock.has_owner) { /* an exclusive holder */
		behind_holder(w, &r->header.lock, now);
		return;
	}
	if (mismatch(w, &r->header, why, sizeof(why)) != NULL) {
		struct lt_error e = {.status = STORE_FATAL, .error_type = "ModeMismatch"};
		snprintf(e.message, sizeof(e.message), "lock '%.64s' %s", w->name, why);
		answer(w, NULL, &e);
		return;
	}
	if (r->header.xwait[0] != '\0') {
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
		not_now(w, poll);
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
	timer_init(&w->poll, t->clock, poll_due, w);
	timer_init(&w->deadline, t->clock, deadline_due, w);
	if (a->wait && a->timeout_ms > 0)
		timer_arm(&w->deadline, a->timeout_ms);
	w->next = t->sh_waits;
	if (t->sh_waits != NULL)
		t->sh_waits->prev = w;
	t->sh_waits = w;
	if (!send_read(w)) { /* out of memory at once: no callback */
		wait_free(w);
		return NULL;
	}
	return w;
}

void lt_sh_kick(struct locktable *t, const char *name)
{
	for (struct sh_wait *w = t->sh_waits; w != NULL; w = w->next)
		if (w->step == W_IDLE && !w->cancelled && timer_armed(&w->poll) &&
		    strcmp(w->name, name) == 0) {
			timer_cancel(&w->poll);
			timer_arm(&w->poll, 0); /* from the loop */
		}
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
	wait_free(w);
}
