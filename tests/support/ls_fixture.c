/*
 * ls_fixture: the lease-session tests' fixture (test_lsess.c,
 * test_lsess_lead.c): one replica (a locktable on the embedded store, fake
 * clock), its lease service and four sessions, and helpers that run an
 * operation to its answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/ls_fixture.h"

/* The answers an operation lsf_got through its callback. */

void lsf_got(void *arg, const struct ls_result *r)
{
	struct lsf_box *b = arg;
	b->calls++;
	b->last = *r;
}

/* The losses told to a session. */

static void on_lost(void *arg, enum ls_kind kind, const char *name, int64_t token,
		    enum lt_loss reason)
{
	struct lsf_lost_log *l = arg;
	l->n++;
	l->kind = kind;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->token = token;
	l->reason = reason;
}

static const struct ls_sess_ops lsf_ops = {.lost = on_lost};

const struct ls_limits lsf_limits = {
	.max_name = 8, .max_leases = 3, .max_lease_ms = 60000, .default_lease_ms = 5000};

int lsf_setup(void **state)
{
	struct lsf_env *e = calloc(1, sizeof(*e));
	e->f = fx_new(1, true);
	e->svc = lsvc_new(e->f->lt[0], &lsf_limits);
	assert_non_null(e->svc);
	for (int i = 0; i < 4; i++) {
		e->s[i] = lsess_new(e->svc, &lsf_ops, &e->lost[i]);
		assert_non_null(e->s[i]);
	}
	*state = e;
	return 0;
}

int lsf_teardown(void **state)
{
	struct lsf_env *e = *state;
	for (int i = 0; i < 4; i++)
		lsess_free(e->s[i]);
	fx_run(e->f); /* the releases of the close */
	struct lt_stats st;
	lt_stats(e->f->lt[0], &st);
	assert_int_equal(st.releases_in_flight, 0);
	lsvc_free(e->svc);
	fx_free(e->f);
	free(e);
	return 0;
}

struct ls_acquire_req lsf_req_of(const char *name, int64_t lease_ms, int64_t wait_ms)
{
	struct ls_acquire_req r = {
		.name = name, .name_len = strlen(name), .lease_ms = lease_ms, .wait_ms = wait_ms};
	return r;
}

/* Acquires name for session i (a try) and returns its token. */
int64_t lsf_take(struct lsf_env *e, int i, const char *name, enum ls_scope scope, bool reentrant)
{
	struct ls_acquire_req r = lsf_req_of(name, LSF_LEASE, -1);
	struct ls_result now;
	struct lsf_box b = {0};
	r.scope = scope;
	r.reentrant = reentrant;
	enum ls_status st = ls_acquire(e->s[i], &r, &now, lsf_got, &b);
	if (st == LS_OK)
		return now.token;
	assert_int_equal(st, LS_PENDING);
	assert_int_equal(b.calls, 0); /* never inside the call */
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_OK);
	assert_true(b.last.token > 0);
	return b.last.token;
}

bool lsf_held(struct lsf_env *e, const char *name)
{
	return fx_state(e->f, name).held;
}

/* Releases (session i, name, token, scope) and runs the loop: the status. */
enum ls_status lsf_release(struct lsf_env *e, int i, const char *name, int64_t token,
			   enum ls_scope scope)
{
	struct ls_result now;
	struct lsf_box b = {0};
	enum ls_status st = ls_release(e->s[i], name, token, scope, &now, lsf_got, &b);
	if (st != LS_PENDING)
		return st;
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	return b.last.status;
}

enum ls_status lsf_renew(struct lsf_env *e, int i, const char *name, int64_t token,
			 struct ls_result *out)
{
	struct lsf_box b = {0};
	enum ls_status st = ls_renew(e->s[i], name, token, out, lsf_got, &b);
	if (st != LS_PENDING)
		return st;
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	*out = b.last;
	return b.last.status;
}

void lsf_set_value(void *arg, int64_t v)
{
	*(int64_t *)arg = v;
}

/* The item of name is deleted under its holder. */
void lsf_delete_item(struct lsf_env *e, const char *name)
{
	int64_t v = -2;
	assert_true(lt_simulate_delete(e->f->lt[0], name, lsf_set_value, &v));
	fx_run(e->f);
	assert_int_equal(v, 0);
}

void lsf_lose_by_delete(struct lsf_env *e, const char *name)
{
	lsf_delete_item(e, name);
	fx_advance(e->f, LSF_LEASE / 3 + 1); /* the heartbeat finds no item */
}
