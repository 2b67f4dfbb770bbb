/*
 * Leases beyond one session (gateway/lease/lsess_foreign.c and the core's
 * lt_foreign, lease_detach): detached leases, (name, token) from another
 * replica, releases that the holder's replica learns as released (not
 * lost), forced releases, a Redis lock library's value, listings. Two
 * replicas: two locktables, each with its lease service, on one embedded
 * store; fake clock, no sockets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/lease/lsess.h"
#include "tests/support/lt_fixture.h"

#define LEASE 3000

struct box {
	int calls;
	struct ls_result last;
};

static void got(void *arg, const struct ls_result *r)
{
	struct box *b = arg;
	b->calls++;
	b->last = *r;
}

struct lost_log {
	int n;
	enum lt_loss reason;
};

static void on_lost(void *arg, enum ls_kind kind, const char *name, int64_t token,
		    enum lt_loss reason)
{
	struct lost_log *l = arg;
	l->n++;
	l->reason = reason;
}

static const struct ls_sess_ops ops = {.lost = on_lost};

static const struct ls_limits limits = {
	.max_name = 64, .max_leases = 4, .max_lease_ms = 60000, .default_lease_ms = 5000};

/* s[0], s[1] on replica 0; s[2], s[3] on replica 1. */
struct env {
	struct fx *f;
	struct lsvc *svc[2];
	struct lsess *s[4];
	struct lost_log lost[4];
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->f = fx_new(2, true);
	for (int r = 0; r < 2; r++)
		assert_non_null(e->svc[r] = lsvc_new(e->f->lt[r], &limits));
	for (int i = 0; i < 4; i++)
		assert_non_null(e->s[i] = lsess_new(e->svc[i / 2], &ops, &e->lost[i]));
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	for (int i = 0; i < 4; i++)
		lsess_free(e->s[i]);
	fx_run(e->f);
	for (int r = 0; r < 2; r++)
		lsvc_free(e->svc[r]);
	fx_free(e->f);
	free(e);
	return 0;
}

/* Runs op's answer: the status at once, or after the loop ran. */
static enum ls_status finish(struct env *e, enum ls_status st, struct ls_result *now, struct box *b)
{
	if (st != LS_PENDING)
		return st;
	assert_int_equal(b->calls, 0);
	fx_run(e->f);
	assert_int_equal(b->calls, 1);
	*now = b->last;
	return b->last.status;
}

static int64_t acquire(struct env *e, int i, const char *name, bool detach, const char *value,
		       enum ls_status want)
{
	struct ls_acquire_req r = {.name = name,
				   .name_len = strlen(name),
				   .lease_ms = LEASE,
				   .wait_ms = -1,
				   .detach = detach,
				   .owner = value,
				   .owner_len = value != NULL ? strlen(value) : 0};
	struct ls_result now;
	struct box b = {0};
	assert_int_equal(finish(e, ls_acquire(e->s[i], &r, &now, got, &b), &now, &b), want);
	return now.token;
}

static enum ls_status renew(struct env *e, int i, const char *name, int64_t token)
{
	struct ls_result now;
	struct box b = {0};
	return finish(e, ls_renew(e->s[i], name, token, &now, got, &b), &now, &b);
}

static enum ls_status release(struct env *e, int i, const char *name, int64_t token)
{
	struct ls_result now;
	struct box b = {0};
	return finish(e, ls_release(e->s[i], name, token, LS_SCOPE_SESSION, &now, got, &b), &now,
		      &b);
}

static enum ls_status fx(struct env *e, int i, const char *name, enum ls_foreign_op op,
			 const char *value, int64_t token, int64_t lease_ms, struct ls_result *out)
{
	struct ls_foreign_req r = {.name = name,
				   .name_len = strlen(name),
				   .op = op,
				   .value = value,
				   .value_len = value != NULL ? strlen(value) : 0,
				   .token = token,
				   .lease_ms = lease_ms};
	struct ls_result now;
	struct box b = {0};
	enum ls_status st = finish(e, ls_foreign(e->s[i], &r, &now, got, &b), &now, &b);
	if (out != NULL)
		*out = now;
	return st;
}

static struct ls_result state_of(struct env *e, int i, const char *name)
{
	struct ls_result now;
	struct box b = {0};
	assert_int_equal(finish(e, ls_state(e->s[i], name, strlen(name), &now, got, &b), &now, &b),
			 LS_OK);
	return now;
}

/* A wait of session i on name, answered into *b. */
static void wait_for(struct env *e, int i, const char *name, struct box *b)
{
	struct ls_acquire_req r = {
		.name = name, .name_len = strlen(name), .lease_ms = LEASE, .wait_ms = 0};
	struct ls_result now;
	assert_int_equal(ls_acquire(e->s[i], &r, &now, got, b), LS_PENDING);
}

/* --- detached leases --- */

static void detached_lease_outlives_its_session(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "cron", true, NULL, LS_OK);
	assert_true(t > 0);
	assert_int_equal(lsess_count(e->s[0]), 0); /* no session owns it */
	lsess_free(e->s[0]);
	e->s[0] = lsess_new(e->svc[0], &ops, &e->lost[0]);
	fx_run(e->f);
	struct ls_result st = state_of(e, 2, "cron");
	assert_true(st.st.held);
	assert_true(st.detached);
	assert_false(st.mine);
	assert_int_equal(st.st.token, t);
	/* held: a try on either replica is refused */
	acquire(e, 1, "cron", false, NULL, LS_NONE);
	acquire(e, 3, "cron", false, NULL, LS_NONE);
	/* not renewed by the gateway: its rvn stays the same for a lease */
	uint64_t renews = fx_req(e->f, STORE_RENEW);
	fx_advance(e->f, 2 * LEASE);
	assert_int_equal(fx_req(e->f, STORE_RENEW), renews);
}

static void detached_lease_is_taken_over_after_a_whole_lease(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "cron", true, NULL, LS_OK);
	int64_t t0 = fx_now(e->f);
	struct box b = {0};
	wait_for(e, 3, "cron", &b); /* replica 1 watches it from now */
	fx_advance(e->f, LEASE - 1);
	assert_int_equal(b.calls, 0);
	fx_advance(e->f, LEASE);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_OK);
	assert_true(b.last.token > t);
	assert_true(fx_now(e->f) - t0 >= LEASE);
}

static void detached_lease_renewed_by_token_from_another_replica(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "cron", true, NULL, LS_OK);
	struct box b = {0};
	wait_for(e, 1, "cron", &b); /* a contender on the acquiring replica */
	fx_advance(e->f, LEASE / 2);
	assert_int_equal(renew(e, 2, "cron", t), LS_OK);
	fx_advance(e->f, LEASE / 2 + 100);		       /* past the first lease's end */
	assert_int_equal(b.calls, 0);			       /* the renewal moved it on */
	assert_int_equal(renew(e, 2, "cron", t + 1), LS_NONE); /* no such token */
	/* released through the replica the waiter is on: it goes at once */
	assert_int_equal(release(e, 0, "cron", t), LS_OK);
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_OK);
	assert_int_equal(release(e, 3, "cron", t), LS_NONE); /* once */
}

static void detached_value_is_the_owner(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "report", true, "tok123", LS_OK);
	struct ls_result st = state_of(e, 2, "report");
	assert_true(st.detached);
	assert_string_equal(ls_owner_value(&st.st), "tok123");
	assert_string_equal(st.st.owner, "d:tok123");
	struct ls_result r;
	assert_int_equal(fx(e, 2, "report", LS_FX_RELEASE, "other", 0, 0, &r), LS_NONE);
	assert_int_equal(fx(e, 2, "report", LS_FX_RENEW, "tok123", 0, 10000, &r), LS_OK);
	assert_int_equal(r.st.token, t);
	assert_int_equal(state_of(e, 0, "report").st.lease_ms, 10000);
	assert_int_equal(fx(e, 3, "report", LS_FX_RELEASE, "tok123", 0, 0, &r), LS_OK);
	assert_false(state_of(e, 0, "report").st.held);
	assert_int_equal(fx(e, 3, "report", LS_FX_RELEASE, "tok123", 0, 0, &r), LS_NONE);
	/* values are bounded and printable */
	assert_int_equal(fx(e, 0, "report", LS_FX_RELEASE, "a b", 0, 0, &r), LS_INVALID);
	acquire(e, 0, "report", true, "", LS_INVALID);
	char big[LS_VALUE_MAX + 2];
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	acquire(e, 0, "report", true, big, LS_INVALID);
	big[LS_VALUE_MAX] = '\0';
	assert_true(acquire(e, 0, "report", true, big, LS_OK) > t);
}

static void renew_adds_to_what_remains(void **state)
{
	struct env *e = *state;
	acquire(e, 0, "ext", true, "v", LS_OK);
	fx_advance(e->f, 1000);
	struct ls_foreign_req r = {.name = "ext",
				   .name_len = 3,
				   .op = LS_FX_RENEW,
				   .value = "v",
				   .value_len = 1,
				   .lease_ms = 5000,
				   .add_remaining = true};
	struct ls_result now;
	struct box b = {0};
	assert_int_equal(finish(e, ls_foreign(e->s[0], &r, &now, got, &b), &now, &b), LS_OK);
	/* on the acquiring replica 2000 ms remained */
	assert_int_equal(state_of(e, 0, "ext").st.lease_ms, 7000);
	assert_int_equal(state_of(e, 0, "ext").st.remaining_ms, 7000);
}

/* --- (name, token) of a session lease held on another replica --- */

static void release_by_token_elsewhere_ends_the_lease_as_released(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "job", false, NULL, LS_OK);
	struct box b = {0};
	wait_for(e, 3, "job", &b);			  /* waits on replica 1 */
	assert_int_equal(release(e, 2, "job", t), LS_OK); /* from replica 1 */
	fx_advance(e->f, LEASE / 3);			  /* replica 1 polls, ... */
	assert_int_equal(b.calls, 1);			  /* ... and is served */
	assert_int_equal(b.last.status, LS_OK);
	fx_advance(e->f, LEASE / 3 + 10);  /* replica 0's heartbeat */
	assert_int_equal(e->lost[0].n, 0); /* not told as lost */
	assert_int_equal(lsess_count(e->s[0]), 0);
	assert_int_equal(release(e, 0, "job", 0), LS_NONE); /* as after a release */
	assert_int_equal(renew(e, 0, "job", 0), LS_NONE);
}

static void renew_by_token_elsewhere_keeps_the_holder(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "job", false, NULL, LS_OK);
	assert_int_equal(renew(e, 2, "job", t), LS_OK);
	fx_advance(e->f, 2 * LEASE);
	assert_int_equal(e->lost[0].n, 0);
	assert_int_equal(lsess_count(e->s[0]), 1);
	assert_int_equal(renew(e, 0, "job", 0), LS_OK);
	assert_int_equal(renew(e, 2, "job", t + 7), LS_NONE);
}

static void forced_release_is_a_loss_for_the_holder(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "job", false, NULL, LS_OK);
	struct ls_result r;
	assert_int_equal(fx(e, 2, "job", LS_FX_FORCE, NULL, 0, 0, &r), LS_OK);
	assert_int_equal(r.st.token, t);
	assert_int_equal(e->lost[0].n, 0);
	fx_advance(e->f, LEASE / 3 + 10); /* the holder's heartbeat */
	assert_int_equal(e->lost[0].n, 1);
	assert_int_equal(e->lost[0].reason, LT_FORCED);
	struct ls_result now;
	struct box b = {0};
	assert_int_equal(ls_renew(e->s[0], "job", 0, &now, got, &b), LS_LOST);
	assert_int_equal(now.loss, LT_FORCED);
	assert_string_equal(now.message, "forced");
	/* nothing held now: forcing again finds nothing */
	assert_int_equal(fx(e, 2, "job", LS_FX_FORCE, NULL, 0, 0, &r), LS_NONE);
}

static void forced_release_on_the_holding_replica_is_told_at_once(void **state)
{
	struct env *e = *state;
	acquire(e, 0, "job", false, NULL, LS_OK);
	struct ls_result r;
	assert_int_equal(fx(e, 1, "job", LS_FX_FORCE, NULL, 0, 0, &r), LS_OK);
	assert_int_equal(e->lost[0].n, 1);
	assert_int_equal(e->lost[0].reason, LT_FORCED);
	assert_false(state_of(e, 1, "job").st.held);
}

static void closed_session_gets_no_answer(void **state)
{
	struct env *e = *state;
	int64_t t = acquire(e, 0, "job", true, NULL, LS_OK);
	struct ls_result now;
	struct box b = {0};
	assert_int_equal(ls_release(e->s[2], "job", t, LS_SCOPE_SESSION, &now, got, &b),
			 LS_PENDING);
	lsess_free(e->s[2]);
	e->s[2] = NULL;
	fx_run(e->f);
	assert_int_equal(b.calls, 0);
	assert_false(state_of(e, 0, "job").st.held); /* the release was done */
}

/* --- listing --- */

struct listing {
	int n;
	char names[8][16];
	char states[8][16];
	uint64_t ids[8];
};

static void each(void *arg, const struct ls_entry *en)
{
	struct listing *l = arg;
	snprintf(l->names[l->n], sizeof(l->names[0]), "%s", en->name);
	snprintf(l->states[l->n], sizeof(l->states[0]), "%s", en->state);
	l->ids[l->n] = en->id;
	l->n++;
}

static void list_shows_held_and_waiting(void **state)
{
	struct env *e = *state;
	lsess_set_label(e->s[0], "redis", 7);
	lsess_set_label(e->s[1], "pg", 8);
	acquire(e, 0, "a:1", false, NULL, LS_OK);
	acquire(e, 0, "b:1", false, NULL, LS_OK);
	struct box b = {0};
	wait_for(e, 1, "a:1", &b);
	struct listing l = {0};
	assert_int_equal(lsvc_list(e->svc[0], NULL, 0, each, &l), 3);
	int waiting = 0;
	for (int i = 0; i < l.n; i++)
		if (strcmp(l.states[i], "waiting") == 0) {
			waiting++;
			assert_string_equal(l.names[i], "a:1");
			assert_int_equal(l.ids[i], 8);
		}
	assert_int_equal(waiting, 1);
	memset(&l, 0, sizeof(l));
	assert_int_equal(lsvc_list(e->svc[0], "a:*", 0, each, &l), 2);
	memset(&l, 0, sizeof(l));
	assert_int_equal(lsvc_list(e->svc[0], NULL, 1, each, &l), 1);
	memset(&l, 0, sizeof(l));
	assert_int_equal(lsvc_list(e->svc[1], NULL, 0, each, &l), 0); /* the other replica's */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(detached_lease_outlives_its_session),
		T(detached_lease_is_taken_over_after_a_whole_lease),
		T(detached_lease_renewed_by_token_from_another_replica),
		T(detached_value_is_the_owner),
		T(renew_adds_to_what_remains),
		T(release_by_token_elsewhere_ends_the_lease_as_released),
		T(renew_by_token_elsewhere_keeps_the_holder),
		T(forced_release_is_a_loss_for_the_holder),
		T(forced_release_on_the_holding_replica_is_told_at_once),
		T(closed_session_gets_no_answer),
		T(list_shows_held_and_waiting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
