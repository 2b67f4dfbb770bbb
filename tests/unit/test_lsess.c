/*
 * The lease-session layer (gateway/lease): acquire, waits, cancel,
 * reentrant holds and scopes, losses told once and answered LS_LOST once,
 * the stall rule, (name, token) from another session, limits, the default
 * lease, close (leaders: test_lsess_lead.c; beyond one session:
 * test_lsess_foreign.c). Fake clock, embedded store, no sockets, no
 * protocol.
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

/* --- acquire, try, wait, timeout, cancel --- */

static void try_then_held_elsewhere(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	assert_true(lsf_held(e, "job"));
	assert_int_equal(lsess_count(e->s[0]), 1);
	struct ls_acquire_req r = lsf_req_of("job", LEASE, -1);
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_NONE);
	assert_int_equal(lsess_count(e->s[1]), 0);
	/* the same session again, not reentrant: a conflict naming the token */
	assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_CONFLICT);
	assert_int_equal(now.token, t);
	char want[128];
	snprintf(want, sizeof(want), "this connection holds 'job' already (token %lld)",
		 (long long)t);
	assert_string_equal(now.message, want);
}

static void wait_is_handed_the_lock_on_release(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	struct ls_acquire_req r = lsf_req_of("job", LEASE, 0); /* forever */
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	fx_advance(e->f, 2 * LEASE); /* a holder renewing: still waiting */
	assert_int_equal(b.calls, 0);
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_OK);
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_OK);
	assert_true(b.last.token > t);
	assert_int_equal(lsess_count(e->s[1]), 1);
}

static void wait_times_out(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	struct ls_acquire_req r = lsf_req_of("job", LEASE, 2000);
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	fx_advance(e->f, 1900);
	assert_int_equal(b.calls, 0);
	fx_advance(e->f, 200);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_NONE);
}

static void cancel_ends_a_wait_at_once(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	struct ls_acquire_req r = lsf_req_of("job", LEASE, 0);
	struct ls_result now;
	struct lsf_box b = {0};
	assert_false(ls_cancel(e->s[1], "nothing to cancel"));
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	/* one wait at a time */
	struct lsf_box b2 = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b2), LS_INVALID);
	assert_true(ls_cancel(e->s[1], "canceling statement due to user request"));
	assert_int_equal(b.calls, 1); /* before ls_cancel returned */
	assert_int_equal(b.last.status, LS_CANCELLED);
	assert_string_equal(b.last.message, "canceling statement due to user request");
	assert_false(ls_cancel(e->s[1], "again"));
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_OK);
	fx_advance(e->f, LEASE);
	assert_int_equal(b.calls, 1); /* never handed the lock */
	assert_false(lsf_held(e, "job"));
	assert_int_equal(b2.calls, 0);
}

/* PostgreSQL's pg_advisory_xact_lock under lock_timeout, as its front-end
 * asks: a reentrant transaction-scope wait bounded by the timeout. Handed
 * the lock within the bound, it holds it in the transaction scope only,
 * until ls_release_scope ends the transaction; past the bound it is
 * answered LS_NONE (the front-end's 55P03), not a millisecond early. */
static void xact_wait_bounded_like_lock_timeout(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "k", LS_SCOPE_SESSION, true);
	struct ls_acquire_req r = lsf_req_of("k", LEASE, 300);
	r.scope = LS_SCOPE_XACT;
	r.reentrant = true;
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	fx_advance(e->f, 299);
	assert_int_equal(b.calls, 0);
	fx_advance(e->f, 2);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_NONE);
	assert_false(ls_held(e->s[1], "k", 1, NULL, NULL));

	/* again, and the holder lets go within the bound */
	struct lsf_box b2 = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b2), LS_PENDING);
	fx_advance(e->f, 100);
	assert_int_equal(lsf_release(e, 0, "k", 0, LS_SCOPE_SESSION), LS_OK);
	fx_run(e->f);
	assert_int_equal(b2.calls, 1);
	assert_int_equal(b2.last.status, LS_OK);
	unsigned h[LS_SCOPE_COUNT];
	assert_true(ls_held(e->s[1], "k", 1, NULL, h));
	assert_int_equal(h[LS_SCOPE_XACT], 1);
	assert_int_equal(h[LS_SCOPE_SESSION], 0);
	/* the bound no longer matters once lsf_held */
	fx_advance(e->f, 1000);
	assert_true(ls_held(e->s[1], "k", 1, NULL, NULL));
	/* COMMIT: the transaction's holds end, and with them the lease */
	struct lsf_box done = {0};
	assert_int_equal(ls_release_scope(e->s[1], LS_SCOPE_XACT, &now, lsf_got, &done),
			 LS_PENDING);
	fx_run(e->f);
	assert_int_equal(done.calls, 1);
	assert_false(lsf_held(e, "k"));
	assert_int_equal(lsf_release(e, 1, "k", 0, LS_SCOPE_SESSION), LS_NONE);
}

/* --- reentrant holds and scopes --- */

static void reentrant_holds_count_over_one_lease(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, true);
	uint64_t writes = fx_req(e->f, STORE_ACQUIRE);
	assert_int_equal(lsf_take(e, 0, "job", LS_SCOPE_SESSION, true), t); /* at once */
	assert_int_equal(fx_req(e->f, STORE_ACQUIRE), writes);		    /* no request */
	struct lt_stats st;
	lt_stats(e->f->lt[0], &st);
	assert_int_equal(st.leases, 1);
	assert_int_equal(lsess_count(e->s[0]), 1);
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_OK);
	assert_true(lsf_held(e, "job")); /* one hold left */
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_OK);
	assert_false(lsf_held(e, "job"));
	assert_int_equal(lsess_count(e->s[0]), 0);
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_NONE);
}

static void scopes_release_separately(void **state)
{
	struct lsf_env *e = *state;
	int64_t ta = lsf_take(e, 0, "a", LS_SCOPE_XACT, true);
	assert_int_equal(lsf_take(e, 0, "a", LS_SCOPE_SESSION, true), ta); /* both scopes */
	lsf_take(e, 0, "b", LS_SCOPE_XACT, true);
	lsf_take(e, 0, "c", LS_SCOPE_SESSION, true);
	/* no session hold of b */
	assert_int_equal(lsf_release(e, 0, "b", 0, LS_SCOPE_SESSION), LS_NONE);
	struct ls_result now;
	struct lsf_box done = {0};
	/* b only */
	assert_int_equal(ls_release_scope(e->s[0], LS_SCOPE_XACT, &now, lsf_got, &done),
			 LS_PENDING);
	fx_run(e->f);
	assert_int_equal(done.calls, 1);
	assert_false(lsf_held(e, "b"));
	assert_true(lsf_held(e, "a"));
	assert_true(lsf_held(e, "c"));
	assert_int_equal(lsess_count(e->s[0]), 2);
	/* nothing to write: answered at once */
	assert_int_equal(ls_release_scope(e->s[0], LS_SCOPE_XACT, &now, lsf_got, &done), LS_OK);
	assert_false(now.unwritten);
	assert_int_equal(ls_release_scope(e->s[0], LS_SCOPE_SESSION, &now, lsf_got, &done),
			 LS_PENDING);
	fx_run(e->f);
	assert_int_equal(done.calls, 2);
	assert_false(lsf_held(e, "a"));
	assert_false(lsf_held(e, "c"));
	assert_int_equal(lsess_count(e->s[0]), 0);
}

static void release_all_keeps_the_session(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "a", LS_SCOPE_SESSION, false);
	lsf_take(e, 0, "b", LS_SCOPE_XACT, true);
	struct ls_result now;
	struct lsf_box done = {0};
	assert_int_equal(ls_release_all(e->s[0], &now, lsf_got, &done), LS_PENDING);
	assert_int_equal(lsess_count(e->s[0]), 0);
	fx_run(e->f);
	assert_int_equal(done.calls, 1);
	assert_int_equal(done.last.status, LS_OK);
	assert_false(lsf_held(e, "a"));
	assert_false(lsf_held(e, "b"));
	lsf_take(e, 0, "a", LS_SCOPE_SESSION, false); /* usable still */
	assert_true(lsf_held(e, "a"));
	/* a wait in progress is answered, cancelled */
	struct ls_acquire_req r = lsf_req_of("a", LEASE, 0);
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	assert_int_equal(ls_release_all(e->s[1], &now, lsf_got, &done), LS_OK); /* none held */
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_CANCELLED);
	assert_string_equal(b.last.message, "the session was reset");
}

/* Acknowledged means done: a scope's release (COMMIT, unlock_all) and
 * RESET are answered once every write is answered, not before; a write
 * that failed is answered LS_OK .unwritten, naming the lock. */
static void release_scope_answers_once_the_writes_are_done(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "a", LS_SCOPE_XACT, true);
	lsf_take(e, 0, "b", LS_SCOPE_XACT, true);
	store_memory_set_op_latency(e->f->store, STORE_RELEASE, 100);
	struct ls_result now;
	struct lsf_box done = {0};
	assert_int_equal(ls_release_scope(e->s[0], LS_SCOPE_XACT, &now, lsf_got, &done),
			 LS_PENDING);
	fx_advance(e->f, 99);
	assert_int_equal(done.calls, 0); /* the writes are not answered yet */
	fx_advance(e->f, 1);
	fx_run(e->f);
	assert_int_equal(done.calls, 1);
	assert_int_equal(done.last.status, LS_OK);
	assert_false(done.last.unwritten);
	assert_false(lsf_held(e, "a"));
	assert_false(lsf_held(e, "b"));
	/* the same for RESET */
	lsf_take(e, 0, "c", LS_SCOPE_SESSION, false);
	assert_int_equal(ls_release_all(e->s[0], &now, lsf_got, &done), LS_PENDING);
	fx_advance(e->f, 99);
	assert_int_equal(done.calls, 1);
	fx_advance(e->f, 1);
	fx_run(e->f);
	assert_int_equal(done.calls, 2);
	assert_false(lsf_held(e, "c"));
}

/* The session closes while its COMMIT's releases are in flight: they
 * complete, call nobody, and free everything (ASan in make check). */
static void release_scope_outlived_by_nobody(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "a", LS_SCOPE_XACT, true);
	store_memory_set_op_latency(e->f->store, STORE_RELEASE, 100);
	struct ls_result now;
	struct lsf_box done = {0};
	assert_int_equal(ls_release_scope(e->s[0], LS_SCOPE_XACT, &now, lsf_got, &done),
			 LS_PENDING);
	lsess_free(e->s[0]);
	e->s[0] = lsess_new(e->svc, NULL, NULL); /* for the teardown */
	fx_advance(e->f, 100);
	fx_run(e->f);
	assert_int_equal(done.calls, 0);
	assert_false(lsf_held(e, "a"));
}

static void release_not_written_is_answered_so(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "a", LS_SCOPE_XACT, true);
	lsf_take(e, 0, "b", LS_SCOPE_SESSION, true);
	store_memory_fail(e->f->store, 1, STORE_TRANSIENT, "InternalServerError");
	struct ls_result now;
	struct lsf_box done = {0};
	assert_int_equal(ls_release_scope(e->s[0], LS_SCOPE_XACT, &now, lsf_got, &done),
			 LS_PENDING);
	fx_run(e->f);
	assert_int_equal(done.calls, 1);
	assert_int_equal(done.last.status, LS_OK);
	assert_true(done.last.unwritten);
	assert_non_null(strstr(done.last.message, "the release of 'a' was not written"));
	/* one lock, by name */
	store_memory_fail(e->f->store, 1, STORE_TRANSIENT, "InternalServerError");
	assert_int_equal(ls_release(e->s[0], "b", 0, LS_SCOPE_SESSION, &now, lsf_got, &done),
			 LS_PENDING);
	fx_run(e->f);
	assert_int_equal(done.calls, 2);
	assert_int_equal(done.last.status, LS_OK);
	assert_true(done.last.unwritten);
	assert_non_null(strstr(done.last.message, "'b'"));
}

/* --- losses --- */

static void loss_told_once_answered_lost_once(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	lsf_lose_by_delete(e, "job");
	assert_int_equal(e->lost[0].n, 1);
	assert_int_equal(e->lost[0].kind, LS_KIND_LOCK);
	assert_string_equal(e->lost[0].name, "job");
	assert_int_equal(e->lost[0].token, t);
	assert_int_equal(e->lost[0].reason, LT_DELETED);
	assert_int_equal(lsess_count(e->s[0]), 1); /* kept until answered */
	struct ls_result r;
	assert_int_equal(lsf_renew(e, 0, "job", 0, &r), LS_LOST);
	assert_int_equal(r.loss, LT_DELETED);
	assert_int_equal(r.token, t);
	assert_int_equal(lsf_renew(e, 0, "job", 0, &r), LS_NONE);
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_NONE);
	assert_int_equal(e->lost[0].n, 1);
	struct lsvc_stats st;
	lsvc_stats(e->svc, &st);
	assert_int_equal(st.lost_reported, 1);
	assert_int_equal(st.losses_told, 1);
}

static void lost_then_acquired_again_supersedes(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	lsf_lose_by_delete(e, "job");
	int64_t t2 = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	assert_true(t2 > 0 && t > 0); /* (a deleted item's fence starts anew) */
	assert_true(lsf_held(e, "job"));
	assert_int_equal(lsess_count(e->s[0]), 1);
	struct ls_result r;
	assert_int_equal(lsf_renew(e, 0, "job", 0, &r), LS_OK);
}

static void a_stalled_lease_is_lost_before_the_timer_runs(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	uint64_t renewals = fx_req(e->f, STORE_RENEW);
	clock_fake_jump(e->f->clock, LEASE + 500); /* a stall: no timer ran */
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_renew(e->s[0], "job", 0, &now, lsf_got, &b), LS_LOST);
	assert_int_equal(now.loss, LT_EXPIRED);
	assert_int_equal(now.token, t);
	assert_int_equal(fx_req(e->f, STORE_RENEW), renewals); /* nothing sent */
	fx_run(e->f);
	assert_int_equal(b.calls, 0);
	assert_int_equal(e->lost[0].n, 0); /* answered, never told: no timer ran */
	assert_int_equal(lsess_count(e->s[0]), 0);
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_NONE);
}

static void a_renewal_answered_after_the_loss_is_lost(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	lsf_delete_item(e, "job");
	struct ls_result r;
	/* the renewal itself finds the item gone: the lease is lost under it */
	assert_int_equal(lsf_renew(e, 0, "job", 0, &r), LS_LOST);
	assert_int_equal(r.loss, LT_DELETED);
	assert_int_equal(r.token, t);
	assert_int_equal(e->lost[0].n, 1); /* told too, as it happened */
	assert_int_equal(lsf_renew(e, 0, "job", 0, &r), LS_NONE);
}

/* --- (name, token) --- */

static void name_and_token_from_another_session(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	struct ls_result r;
	assert_int_equal(lsf_renew(e, 1, "job", t + 1, &r), LS_NONE);
	assert_int_equal(lsf_renew(e, 1, "job", 0, &r), LS_NONE); /* not its own */
	uint64_t renewals = fx_req(e->f, STORE_RENEW);
	assert_int_equal(lsf_renew(e, 1, "job", t, &r), LS_OK);
	assert_int_equal(fx_req(e->f, STORE_RENEW), renewals + 1);
	assert_int_equal(lsf_release(e, 1, "job", t, LS_SCOPE_SESSION), LS_OK);
	assert_false(lsf_held(e, "job"));
	assert_int_equal(lsess_count(e->s[0]), 0);
}

/* ls_held: the token and holds of a lease lsf_held now, without a request;
 * nothing once it is lost or released. */
static void held_answers_token_and_holds(void **state)
{
	struct lsf_env *e = *state;
	int64_t token = -1;
	unsigned h[LS_SCOPE_COUNT] = {9, 9};
	assert_false(ls_held(e->s[0], "job", 3, &token, h));
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, true);
	assert_int_equal(lsf_take(e, 0, "job", LS_SCOPE_SESSION, true), t);
	assert_int_equal(lsf_take(e, 0, "job", LS_SCOPE_XACT, true), t);
	uint64_t reads = fx_req(e->f, STORE_READ);
	assert_true(ls_held(e->s[0], "job", 3, &token, h));
	assert_int_equal(fx_req(e->f, STORE_READ), reads);
	assert_int_equal(token, t);
	assert_int_equal(h[LS_SCOPE_SESSION], 2);
	assert_int_equal(h[LS_SCOPE_XACT], 1);
	assert_true(ls_held(e->s[0], "job", 3, NULL, NULL));
	assert_false(ls_held(e->s[1], "job", 3, &token, h)); /* another session's */
	assert_false(ls_held(e->s[0], "jo", 2, &token, h));
	assert_false(ls_held(e->s[0], "", 0, &token, h));
	/* past its end (a stall): not lsf_held */
	clock_fake_jump(e->f->clock, LEASE + 500);
	assert_false(ls_held(e->s[0], "job", 3, &token, h));
}

/* ls_take_lost: the next lock call of the session, whatever its name,
 * is answered the oldest loss, once. */
static void take_lost_answers_the_oldest_loss_once(void **state)
{
	struct lsf_env *e = *state;
	struct ls_result r;
	int64_t ta = lsf_take(e, 0, "a", LS_SCOPE_SESSION, true);
	int64_t tb = lsf_take(e, 0, "b", LS_SCOPE_SESSION, true);
	lsf_take(e, 0, "c", LS_SCOPE_SESSION, true);
	assert_int_equal(ls_take_lost(e->s[0], &r), LS_NONE);
	lsf_delete_item(e, "a");
	lsf_delete_item(e, "b");
	fx_advance(e->f, LEASE / 3 + 1);
	assert_int_equal(e->lost[0].n, 2);
	assert_int_equal(ls_take_lost(e->s[0], &r), LS_LOST);
	assert_int_equal(r.token, ta);
	assert_int_equal(r.loss, LT_DELETED);
	assert_string_equal(r.message, "lease of 'a' lost: deleted");
	assert_int_equal(ls_take_lost(e->s[0], &r), LS_LOST);
	assert_int_equal(r.token, tb);
	assert_string_equal(r.message, "lease of 'b' lost: deleted");
	assert_int_equal(ls_take_lost(e->s[0], &r), LS_NONE);
	/* answered: the operations about them find nothing; c is lsf_held still */
	assert_int_equal(lsf_release(e, 0, "a", 0, LS_SCOPE_SESSION), LS_NONE);
	assert_int_equal(lsess_count(e->s[0]), 1);
	assert_true(ls_held(e->s[0], "c", 1, NULL, NULL));
	assert_int_equal(ls_take_lost(e->s[1], &r), LS_NONE);
	struct lsvc_stats st;
	lsvc_stats(e->svc, &st);
	assert_int_equal(st.lost_reported, 2);
}

static void a_lost_lease_is_reported_to_name_and_token(void **state)
{
	struct lsf_env *e = *state;
	int64_t t = lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	lsf_lose_by_delete(e, "job");
	struct ls_result r;
	assert_int_equal(lsf_renew(e, 1, "job", t, &r), LS_LOST);
	assert_int_equal(r.loss, LT_DELETED);
	assert_int_equal(lsess_count(e->s[0]), 0); /* answered: forgotten */
	assert_int_equal(lsf_renew(e, 0, "job", 0, &r), LS_NONE);
}

/* --- limits and the default lease --- */

static void limits_are_checked(void **state)
{
	struct lsf_env *e = *state;
	static const struct {
		const char *name;
		size_t len;
		int64_t lease_ms;
		const char *holder;
		const char *message;
	} bad[] = {
		{"", 0, LEASE, NULL, "lock name must be 1 to 8 bytes"},
		{"abcdefghi", 9, LEASE, NULL, "lock name must be 1 to 8 bytes"},
		{"a\0b", 3, LEASE, NULL, "lock name must not contain NUL bytes"},
		{"a", 1, 999, NULL, "lease-ms must be an integer from 1000 to 60000"},
		{"a", 1, 60001, NULL, "lease-ms must be an integer from 1000 to 60000"},
		{"a", 1, -5, NULL, "lease-ms must be an integer from 1000 to 60000"},
		{"a", 1, LEASE, "", "HOLDER must be 1 to 256 characters"},
	};
	struct ls_result now;
	struct lsf_box b = {0};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ls_acquire_req r = {.name = bad[i].name,
					   .name_len = bad[i].len,
					   .lease_ms = bad[i].lease_ms,
					   .wait_ms = -1,
					   .holder = bad[i].holder};
		assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_INVALID);
		assert_string_equal(now.message, bad[i].message);
		assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &b), LS_INVALID);
		assert_string_equal(now.message, bad[i].message);
	}
	char label[258];
	memset(label, 'h', 257);
	label[257] = '\0';
	struct ls_acquire_req r = lsf_req_of("a", LEASE, -1);
	r.holder = label;
	assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_INVALID);
	assert_string_equal(now.message, "HOLDER must be 1 to 256 characters");
	label[256] = '\0'; /* 256: fine */
	assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(b.last.status, LS_OK);
	assert_string_equal(fx_state(e->f, "a").holder, label);
	assert_int_equal(ls_state(e->s[0], "", 0, &now, lsf_got, &b), LS_INVALID);
	assert_int_equal(ls_watch(e->s[0], "abcdefghi", 9, -1, 0, &now, lsf_got, &b), LS_INVALID);
	assert_int_equal(b.calls, 1);
}

static void max_leases_per_session(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "a", LS_SCOPE_SESSION, false);
	lsf_take(e, 0, "b", LS_SCOPE_SESSION, false);
	lsf_take(e, 0, "c", LS_SCOPE_SESSION, false);
	struct ls_acquire_req r = lsf_req_of("d", LEASE, -1);
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_INVALID);
	assert_string_equal(now.message, "max leases per connection reached (3)");
	r.reentrant = true;
	r.name = "a"; /* a hold of a lock lsf_held already is no new record */
	r.name_len = 1;
	assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_OK);
	assert_int_equal(b.calls, 0);
}

static void lease_ms_zero_means_the_default(void **state)
{
	struct lsf_env *e = *state;
	struct ls_acquire_req r = lsf_req_of("job", 0, -1);
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[0], &r, &now, lsf_got, &b), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(b.last.status, LS_OK);
	struct lease *l = lt_local_lease(e->f->lt[0], "job");
	assert_non_null(l);
	assert_int_equal(lease_duration_ms(l), lsf_limits.default_lease_ms);
	assert_int_equal(fx_state(e->f, "job").lease_ms, lsf_limits.default_lease_ms);
	/* ls_state too: read at once on the embedded store, mine */
	assert_int_equal(ls_state(e->s[0], "job", 3, &now, lsf_got, &b), LS_OK);
	assert_true(now.st.held);
	assert_true(now.mine);
	assert_int_equal(now.st.token, b.last.token);
	assert_int_equal(ls_state(e->s[1], "job", 3, &now, lsf_got, &b), LS_OK);
	assert_false(now.mine);
}

/* --- close --- */

static void free_releases_everything_without_callbacks(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "a", LS_SCOPE_SESSION, false);
	int64_t tb = lsf_take(e, 0, "b", LS_SCOPE_XACT, true);
	struct ls_acquire_req r = lsf_req_of("lead", LEASE, 0);
	struct ls_result now;
	struct lsf_box camp = {0}, rel = {0}, w = {0}, renewing = {0};
	assert_int_equal(ls_campaign(e->s[0], &r, &now, lsf_got, &camp), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(camp.last.status, LS_OK);
	/* a watcher of b, and a lsf_release and a renewal in flight at the close */
	assert_int_equal(ls_watch(e->s[1], "b", 1, tb, 0, &now, lsf_got, &w), LS_PENDING);
	fx_run(e->f);
	assert_int_equal(w.calls, 0);
	assert_int_equal(ls_renew(e->s[0], "a", 0, &now, lsf_got, &renewing), LS_PENDING);
	assert_int_equal(ls_release(e->s[0], "b", 0, LS_SCOPE_XACT, &now, lsf_got, &rel),
			 LS_PENDING);
	lsess_free(e->s[0]);
	e->s[0] = NULL;
	fx_run(e->f);
	assert_int_equal(rel.calls, 0);
	assert_int_equal(renewing.calls, 0);
	assert_int_equal(camp.calls, 1);
	assert_int_equal(e->lost[0].n, 0);
	assert_int_equal(w.calls, 1); /* the lsf_release went through and woke it */
	assert_false(w.last.st.held);
	assert_false(lsf_held(e, "a"));
	assert_false(lsf_held(e, "b"));
	assert_false(lsf_held(e, "lead"));
	lsf_take(e, 1, "a", LS_SCOPE_SESSION, false);
	struct lsvc_stats st;
	lsvc_stats(e->svc, &st);
	assert_int_equal(st.sessions, 3);
}

static void free_while_waiting_never_calls_back(void **state)
{
	struct lsf_env *e = *state;
	lsf_take(e, 0, "job", LS_SCOPE_SESSION, false);
	struct ls_acquire_req r = lsf_req_of("job", LEASE, 0);
	struct ls_result now;
	struct lsf_box b = {0};
	assert_int_equal(ls_acquire(e->s[1], &r, &now, lsf_got, &b), LS_PENDING);
	lsess_free(e->s[1]);
	e->s[1] = NULL;
	assert_int_equal(lsf_release(e, 0, "job", 0, LS_SCOPE_SESSION), LS_OK);
	fx_advance(e->f, LEASE);
	assert_int_equal(b.calls, 0);
	assert_false(lsf_held(e, "job"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, lsf_setup, lsf_teardown)
		T(try_then_held_elsewhere),
		T(wait_is_handed_the_lock_on_release),
		T(wait_times_out),
		T(cancel_ends_a_wait_at_once),
		T(xact_wait_bounded_like_lock_timeout),
		T(reentrant_holds_count_over_one_lease),
		T(scopes_release_separately),
		T(release_all_keeps_the_session),
		T(release_scope_answers_once_the_writes_are_done),
		T(release_not_written_is_answered_so),
		T(release_scope_outlived_by_nobody),
		T(loss_told_once_answered_lost_once),
		T(lost_then_acquired_again_supersedes),
		T(a_stalled_lease_is_lost_before_the_timer_runs),
		T(a_renewal_answered_after_the_loss_is_lost),
		T(name_and_token_from_another_session),
		T(a_lost_lease_is_reported_to_name_and_token),
		T(held_answers_token_and_holds),
		T(take_lost_answers_the_oldest_loss_once),
		T(limits_are_checked),
		T(max_leases_per_session),
		T(lease_ms_zero_means_the_default),
		T(free_releases_everything_without_callbacks),
		T(free_while_waiting_never_calls_back),
#undef T
	};
	return cmocka_run_group_tests_name("lease sessions", tests, NULL, NULL);
}
