/*
 * The lease-session layer's leader terms and watches (gateway/lease/
 * lsess_lead.c, lsess_watch.c): campaigns, a lost term told and answered
 * once, watches, shutdown cancelling every wait. Fake clock, embedded
 * store, no sockets, no protocol.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/ls_fixture.h"

#define LEASE LSF_LEASE

/* --- leaders --- */

static void campaign_leads_and_answers_its_term_again(void **state)
{
	struct lsf_env *e = *state;
	struct ls_acquire_req r = lsf_req_of("lead", LEASE, -1); /* -1: waits too */
	struct ls_result now;
	struct lsf_box a = {0}, b = {0};
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &a), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(a.last.status, LS_OK);
	uint64_t writes = fx_req(e->f, STORE_ACQUIRE);
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &a), LS_OK);
	assert_int_equal(now.token, a.last.token);
	assert_int_equal(fx_req(e->f, STORE_ACQUIRE), writes);
	/* another session waits 2 s, then gives up */
	r.wait_ms = 2000;
	assert_int_equal(ls_campaign(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	fx_advance(e->f, 2100);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_NONE);
	assert_int_equal(lsess_count(e->s[1]), 0);
	/* resign: answered once the lsf_release is done */
	assert_int_equal(ls_resign(e->s[1], "lead", &now, lsf_got, &b), LS_NONE);
	struct lsf_box res = {0};
	assert_int_equal(ls_resign(e->s[0], "lead", &now, lsf_got, &res), LS_PENDING);
	assert_int_equal(res.calls, 0);
	fx_run(e->f);
	assert_int_equal(res.calls, 1);
	assert_int_equal(res.last.status, LS_OK);
	assert_false(lsf_held(e, "lead"));
	assert_int_equal(ls_resign(e->s[0], "lead", &now, lsf_got, &res), LS_NONE);
}

static void a_lost_term_is_told_and_answered_once(void **state)
{
	struct lsf_env *e = *state;
	struct ls_acquire_req r = lsf_req_of("lead", LEASE, 0);
	struct ls_result now;
	struct lsf_box a = {0};
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &a), LS_PENDING);
	fx_run(e->f);
	int64_t t = a.last.token;
	lsf_lose_by_delete(e, "lead");
	assert_int_equal(e->lost[0].n, 1);
	assert_int_equal(e->lost[0].kind, LS_KIND_LEADER);
	assert_int_equal(e->lost[0].token, t);
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &a), LS_LOST);
	assert_int_equal(now.loss, LT_DELETED);
	assert_int_equal(lsess_count(e->s[0]), 0);
	/* the next campaign is a new term */
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &a), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(a.calls, 2);
	assert_int_equal(a.last.status, LS_OK);
	assert_true(lsf_held(e, "lead"));
	assert_int_equal(fx_state(e->f, "lead").token, a.last.token);
}

static void watch_answers_changes(void **state)
{
	struct lsf_env *e = *state;
	struct ls_result now;
	struct lsf_box w = {0}, w2 = {0};
	/* no leader: answered after one read */
	assert_int_equal(ls_watch(e->s[2], "lead", 4, -1, 0, &now, lsf_got, &w), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(w.calls, 1);
	assert_false(w.last.st.held);
	/* waits for a leader other than none (token 0) */
	assert_int_equal(ls_watch(e->s[2], "lead", 4, 0, 0, &now, lsf_got, &w), LS_PENDING);
	assert_int_equal(ls_watch(e->s[3], "lead", 4, 0, 5000, &now, lsf_got, &w2), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(w.calls, 1);
	struct ls_acquire_req r = lsf_req_of("lead", LEASE, 0);
	struct lsf_box a = {0};
	uint64_t reads = fx_req(e->f, STORE_READ);
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &a), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(a.last.status, LS_OK);
	assert_int_equal(w.calls, 2); /* woken by the change, not a poll */
	assert_int_equal(w2.calls, 1);
	assert_true(w.last.st.held);
	assert_int_equal(w.last.st.token, a.last.token);
	assert_int_equal(fx_req(e->f, STORE_READ) - reads, 1); /* one read for both */
	/* a timeout answers the last state read */
	assert_int_equal(ls_watch(e->s[3], "lead", 4, a.last.token, 1500, &now, lsf_got, &w2),
			 LS_PENDING);
	fx_advance(e->f, 1600);
	assert_int_equal(w2.calls, 2);
	assert_int_equal(w2.last.status, LS_OK);
	assert_int_equal(w2.last.st.token, a.last.token);
}

static void cancel_waits_answers_every_wait(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	struct ls_acquire_req r = lsf_req_of("job", LEASE, 0);
	struct ls_result now;
	struct lsf_box acq = {0}, camp = {0}, w = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &acq), LS_PENDING);
	/* a campaign for the lock s0 holds waits too */
	assert_int_equal(ls_campaign(e->s[2], &r, &now, lsf_got, &camp), LS_PENDING);
	/* -2: no token matches, so the first read would answer: cancel before */
	assert_int_equal(ls_watch(e->s[3], "job", 3, -2, 0, &now, lsf_got, &w), LS_PENDING);
	lsvc_cancel_waits(e->svc, "server is shutting down");
	struct lsf_box *all[] = {&acq, &camp, &w};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(all[i]->calls, 1);
		assert_int_equal(all[i]->last.status, LS_CANCELLED);
		assert_string_equal(all[i]->last.message, "server is shutting down");
	}
	fx_advance(e->f, LEASE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(all[i]->calls, 1);
	assert_int_equal(lsess_count(e->s[2]), 0);
	assert_true(lsf_held(e, "job")); /* holds are not waits */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, lsf_setup, lsf_teardown)
		T(campaign_leads_and_answers_its_term_again),
		T(a_lost_term_is_told_and_answered_once),
		T(watch_answers_changes),
		T(cancel_waits_answers_every_wait),
#undef T
	};
	return cmocka_run_group_tests_name("lease sessions: leaders", tests, NULL, NULL);
}
