/*
 * lt_fixture: see lt_fixture.h.
 */
#include "tests/support/lt_fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s != NULL ? s : "");
}

static void record(void *ctx, const struct obs_event *ev)
{
	struct fx *f = ctx;
	if (f->nev == FX_EVENTS_MAX)
		return;
	struct fx_event *e = &f->ev[f->nev++];
	e->id = ev->id;
	e->at_ms = clock_now_ms(f->clock);
	e->token = ev->token;
	e->wait_ms = ev->wait_ms;
	e->retries = ev->retries;
	copy(e->lock, sizeof(e->lock), ev->lock);
	copy(e->holder, sizeof(e->holder), ev->holder);
	copy(e->prev_holder, sizeof(e->prev_holder), ev->prev_holder);
	copy(e->reason, sizeof(e->reason), ev->reason);
	copy(e->error_type, sizeof(e->error_type), ev->error_type);
	copy(e->hb_session, sizeof(e->hb_session), ev->hb_session);
	copy(e->replica, sizeof(e->replica), ev->replica);
	copy(e->detail, sizeof(e->detail), ev->detail);
	e->leases = ev->leases;
}

struct fx *fx_new(int n, bool labels)
{
	static const char *const names[] = {"p0", "p1", "p2", "p3"};
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->clock = clock_fake_new(1700000000000LL);
	f->store = store_memory_new(f->clock, "locks");
	f->obs.sink = record;
	f->obs.ctx = f;
	for (int i = 0; i < n; i++) {
		struct lt_options o = {.holder_label = labels ? names[i] : NULL};
		f->lt[i] = lt_new(f->clock, f->store, &f->obs, &o);
		assert_non_null(f->lt[i]);
	}
	return f;
}

void fx_free(struct fx *f)
{
	for (int i = 0; i < 4; i++)
		lt_free(f->lt[i]);
	store_free(f->store);
	clock_free(f->clock);
	free(f);
}

void fx_run(struct fx *f)
{
	clock_fake_advance(f->clock, 0);
}
void fx_advance(struct fx *f, int64_t ms)
{
	clock_fake_advance(f->clock, ms);
}
int64_t fx_now(struct fx *f)
{
	return clock_now_ms(f->clock);
}

int fx_events(const struct fx *f, enum obs_event_id id)
{
	int n = 0;
	for (int i = 0; i < f->nev; i++)
		n += f->ev[i].id == id;
	return n;
}

const struct fx_event *fx_last(const struct fx *f, enum obs_event_id id)
{
	for (int i = f->nev - 1; i >= 0; i--)
		if (f->ev[i].id == id)
			return &f->ev[i];
	return NULL;
}

uint64_t fx_req(const struct fx *f, enum store_op op)
{
	return f->store->requests[op];
}

void fx_acquire_cb(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct fx_acq *a = arg;
	assert_false(a->done); /* exactly once */
	a->done = true;
	a->lease = lease;
	a->error = err != NULL;
	if (err != NULL)
		a->err = *err;
}

struct lt_wait *fx_acquire(struct fx *f, int i, const char *name, int64_t lease_ms, bool wait,
			   int64_t timeout_ms, struct fx_acq *out)
{
	memset(out, 0, sizeof(*out));
	struct lt_acquire_args a = {
		.name = name, .lease_ms = lease_ms, .wait = wait, .timeout_ms = timeout_ms};
	struct lt_wait *w = lt_acquire(f->lt[i], &a, fx_acquire_cb, out);
	assert_non_null(w);
	assert_false(out->done); /* never answered inside the call */
	return w;
}

struct lease *fx_take(struct fx *f, int i, const char *name, int64_t lease_ms)
{
	struct fx_acq a;
	fx_acquire(f, i, name, lease_ms, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_non_null(a.lease);
	return a.lease;
}

static void got_value(void *arg, int64_t v)
{
	*(int64_t *)arg = v;
}

int64_t fx_simulate_holder(struct fx *f, const char *name, int64_t lease_ms, const char *holder)
{
	int64_t token = -2;
	assert_true(lt_simulate_holder(f->lt[0], name, lease_ms, holder, got_value, &token));
	fx_run(f);
	assert_true(token > 0);
	return token;
}

struct state_box {
	bool done;
	struct lt_state st;
};

static void got_state(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct state_box *b = arg;
	assert_null(err);
	b->done = true;
	b->st = *st;
}

struct lt_state fx_state(struct fx *f, const char *name)
{
	struct state_box b = {0};
	assert_true(lt_get_state(f->lt[0], name, got_state, &b));
	fx_run(f);
	assert_true(b.done); /* the store must answer now: no latency set */
	return b.st;
}
