/*
 * The lease rules of docs/lease-rules.md, one test per rule,
 * on the embedded store with the fake clock: no test sleeps. Request counts
 * are asserted exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000

static uint64_t writes(struct fx *f)
{
	return fx_req(f, STORE_ACQUIRE);
}
static uint64_t reads(struct fx *f)
{
	return fx_req(f, STORE_READ);
}

/* Acquires name on locktable i at once and returns the lease. */
static void free_acquire_is_one_write(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_non_null(a.lease);
	assert_int_equal(lease_token(a.lease), 1);
	assert_int_equal(store_requests_total(f->store), 1);
	assert_int_equal(writes(f), 1);
	assert_int_equal(f->obs.acquisitions[0], 1);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

static void release_is_one_write(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	uint64_t before = store_requests_total(f->store);
	lease_release(l);
	fx_run(f);
	assert_int_equal(store_requests_total(f->store) - before, 1);
	assert_int_equal(fx_req(f, STORE_RELEASE), 1);
	struct lt_state st = fx_state(f, "job");
	assert_true(st.exists); /* the item stays: the token never goes back */
	assert_false(st.held);
	assert_int_equal(st.token, 1);
	assert_int_equal(fx_take(f, 0, "job", LEASE) != NULL, 1);
	fx_free(f);
}

static void try_on_held_lock_returns_nothing(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_null(a.lease);
	assert_false(a.error);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

static void first_attempt_writes_later_polls_read(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", 30000);
	uint64_t w0 = writes(f), r0 = reads(f);
	struct fx_acq a;
	fx_acquire(f, 1, "job", 30000, true, 0, &a);
	fx_run(f);
	assert_int_equal(writes(f) - w0, 1); /* one refused write */
	assert_int_equal(reads(f) - r0, 0);
	/* The holder renews; the waiter polls every 10 s (a third of 30 s). */
	for (int i = 1; i <= 6; i++) {
		fx_advance(f, 10000);
		assert_int_equal(reads(f) - r0, i);
	}
	assert_int_equal(writes(f) - w0, 1); /* no further writes */
	assert_false(a.done);
	lease_release(l); /* the holder is another process: the waiter polls */
	fx_run(f);
	fx_advance(f, 10000);
	assert_non_null(a.lease); /* a released lock is acquired at the next poll */
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

static void ten_local_waiters_cost_what_one_costs(void **state)
{
	uint64_t cost[2], announces[2];
	for (int run = 0; run < 2; run++) {
		int n = run == 0 ? 1 : 10;
		struct fx *f = fx_new(2, true);
		struct lease *l = fx_take(f, 0, "job", 30000);
		uint64_t before = store_requests_total(f->store) - fx_req(f, STORE_RENEW);
		struct fx_acq a[10];
		for (int i = 0; i < n; i++)
			fx_acquire(f, 1, "job", 30000, true, 0, &a[i]);
		fx_advance(f, 60000);
		cost[run] = store_requests_total(f->store) - fx_req(f, STORE_RENEW) - before;
		announces[run] = fx_req(f, STORE_ANNOUNCE);
		for (int i = 0; i < n; i++)
			assert_false(a[i].done);
		lease_release(l);
		fx_run(f);
		lt_free(f->lt[1]);
		f->lt[1] = NULL;
		fx_free(f);
	}
	/* one refused write, six polls, one announcement (after a poll
	 * interval of waiting: writes per wait, not per poll) */
	assert_int_equal(cost[0], 8);
	assert_int_equal(announces[0], 1);
	assert_int_equal(announces[1], 1);
	assert_int_equal(cost[1], cost[0]);
}

static void polls_every_third_of_the_holders_lease(void **state)
{
	struct fx *f = fx_new(2, true);
	fx_simulate_holder(f, "job", 6000, "crashed");
	uint64_t r0 = reads(f);
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, true, 0, &a);
	fx_run(f);
	fx_advance(f, 1999);
	assert_int_equal(reads(f) - r0, 0);
	fx_advance(f, 1);
	assert_int_equal(reads(f) - r0, 1);
	fx_advance(f, 2000);
	assert_int_equal(reads(f) - r0, 2);
	fx_free(f);
}

static void polls_at_most_every_ten_seconds(void **state)
{
	struct fx *f = fx_new(2, true);
	fx_simulate_holder(f, "job", 3600000, "crashed"); /* an hour: a third is 20 min */
	uint64_t r0 = reads(f);
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, true, 0, &a);
	fx_run(f);
	fx_advance(f, 9999);
	assert_int_equal(reads(f) - r0, 0);
	fx_advance(f, 1);
	assert_int_equal(reads(f) - r0, 1);
	fx_advance(f, 50000);
	assert_int_equal(reads(f) - r0, 6);
	fx_free(f);
}

static void polls_sooner_when_the_lease_runs_out_first(void **state)
{
	struct fx *f = fx_new(2, true);
	fx_simulate_holder(f, "job", 45000, "crashed");
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, true, 0, &a);
	fx_run(f);
	fx_advance(f, 44999); /* polls at 10, 20, 30, 40 s; the lease ends at 45 s */
	assert_false(a.done);
	fx_advance(f, 1);
	assert_non_null(a.lease); /* at 45 s, not at the 50 s poll */
	fx_free(f);
}

static void crashed_holder_taken_over_after_exactly_one_lease(void **state)
{
	struct fx *f = fx_new(2, true);
	int64_t t1 = fx_simulate_holder(f, "job", LEASE, "crashed-pod");
	assert_int_equal(t1, 1);
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, true, 0, &a);
	fx_run(f);
	fx_advance(f, LEASE - 1);
	assert_false(a.done); /* not a tick before */
	fx_advance(f, 1);
	assert_non_null(a.lease);
	assert_true(lease_takeover(a.lease));
	assert_int_equal(lease_token(a.lease), 2);
	assert_int_equal(f->obs.acquisitions[1], 1);
	const struct fx_event *ev = fx_last(f, OBS_TAKEOVER);
	assert_non_null(ev);
	assert_string_equal(ev->prev_holder, "crashed-pod");
	assert_string_equal(ev->holder, "p1");
	assert_string_equal(ev->lock, "job");
	struct lt_state st = fx_state(f, "job");
	assert_string_equal(st.holder, "p1");
	fx_free(f);
}

static void takeover_needs_the_same_rvn_for_a_whole_lease(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE); /* a live holder renews */
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, true, 0, &a);
	fx_advance(f, 10 * LEASE);
	assert_false(a.done);
	assert_true(lease_held(l));
	lease_release(l);
	fx_run(f);
	fx_advance(f, LEASE / 3);
	assert_non_null(a.lease);
	assert_false(lease_takeover(a.lease)); /* found free, not taken over */
	fx_free(f);
}

static void try_takes_over_only_after_seeing_the_holder_a_whole_lease(void **state)
{
	struct fx *f = fx_new(2, true);
	fx_simulate_holder(f, "job", LEASE, "crashed");
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, false, 0, &a); /* first try: a write, seen now */
	fx_run(f);
	assert_null(a.lease);
	uint64_t w0 = writes(f), r0 = reads(f);
	fx_advance(f, LEASE - 1);
	fx_acquire(f, 1, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease);
	assert_int_equal(writes(f) - w0, 0); /* a try on a seen holder reads */
	assert_int_equal(reads(f) - r0, 1);
	fx_advance(f, 1);
	fx_acquire(f, 1, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_non_null(a.lease);
	assert_true(lease_takeover(a.lease));
	fx_free(f);
}

static void lease_counts_from_the_send_time(void **state)
{
	struct fx *f = fx_new(1, true);
	store_memory_set_latency(f->store, 500);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_advance(f, 500);
	assert_non_null(a.lease);
	assert_int_equal(lease_end_ms(a.lease), 0 + LEASE); /* sent at 0 */
	/* The first renewal goes a third after the send, at 1000, not 1500. */
	fx_advance(f, 499);
	assert_int_equal(fx_req(f, STORE_RENEW), 0);
	fx_advance(f, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), 1);
	fx_advance(f, 500); /* answered at 1500: the lease now ends at 1000 + lease */
	assert_int_equal(lease_end_ms(a.lease), 1000 + LEASE);
	fx_free(f);
}

static void renews_every_third_after_the_last_successful_send(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	fx_advance(f, 10 * LEASE);
	assert_int_equal(fx_req(f, STORE_RENEW), 30);
	assert_int_equal(obs_get(&f->obs.renewals, "ok"), 30);
	assert_true(lease_held(l));
	assert_int_equal(lease_end_ms(l), 10 * LEASE + LEASE);
	fx_free(f);
}

static void failed_renewals_retry_from_100ms_doubling_to_a_sixth(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", 6000); /* renews at 2000; a sixth is 1000 */
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "ThrottlingException");
	static const int64_t at[] = {2000, 2100, 2300, 2700, 3500, 4500, 5500};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		fx_advance(f, at[i] - 1 - fx_now(f));
		assert_int_equal(fx_req(f, STORE_RENEW), i);
		fx_advance(f, 1);
		assert_int_equal(fx_req(f, STORE_RENEW), i + 1);
	}
	assert_int_equal(fx_events(f, OBS_RENEW_RETRY), 6);
	assert_int_equal(fx_last(f, OBS_RENEW_RETRY)->wait_ms, 1000);
	assert_int_equal(obs_get(&f->obs.renewals, "ThrottlingException"), 7);
	assert_true(lease_held(l));
	fx_free(f);
}

static void renewals_failing_for_most_of_a_lease_keep_it(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", 6000);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "InternalServerError");
	fx_advance(f, 5000);
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	fx_advance(f, 500); /* the retry at 5500 succeeds */
	assert_true(lease_held(l));
	assert_int_equal(lease_end_ms(l), 5500 + 6000);
	fx_advance(f, 2000); /* back on the normal beat: 5500 + 2000 */
	assert_int_equal(obs_get(&f->obs.renewals, "ok"), 2);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);
	fx_free(f);
}

/* An acquire ended by a failed read wrote nothing, and its error says so
 * (a client may then conclude the lock is not its); one whose write's
 * answer was lost may have written, and its error does not say so. */
static void acquire_errors_say_when_nothing_was_written(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *held = fx_take(f, 0, "job", LEASE);
	struct fx_acq w;
	fx_acquire(f, 1, "job", LEASE, true, 0, &w); /* polls the held lock */
	fx_run(f);
	assert_false(w.done);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "InternalServerError");
	fx_advance(f, LEASE);
	assert_true(w.done);
	assert_true(w.error);
	assert_int_equal(w.err.status, STORE_TRANSIENT);
	assert_non_null(strstr(w.err.message, "this acquire wrote nothing"));
	store_memory_fail(f->store, 0, STORE_OK, NULL);

	struct fx_acq lost;
	store_memory_lose(f->store, 1); /* its write applies, its answer is lost */
	fx_acquire(f, 1, "other", LEASE, false, 0, &lost);
	fx_run(f);
	assert_true(lost.done);
	assert_true(lost.error);
	if (strstr(lost.err.message, "wrote nothing") != NULL)
		fail_msg("a write's lost answer: %s (writes %llu)", lost.err.message,
			 (unsigned long long)fx_req(f, STORE_ACQUIRE));
	lease_release(held);
	fx_run(f);
	fx_free(f);
}

static int lost_calls;
static enum lt_loss lost_reason;
static void on_lost(void *arg, struct lease *l, enum lt_loss reason)
{
	lost_calls++;
	lost_reason = reason;
}

static void renewals_failing_past_the_lease_lose_it_expired(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", 6000);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "InternalServerError");
	fx_advance(f, 5999);
	assert_true(lease_held(l));
	fx_advance(f, 1);
	assert_false(lease_held(l));
	assert_int_equal(lease_loss(l), LT_EXPIRED);
	assert_int_equal(lost_calls, 1);
	assert_int_equal(lost_reason, LT_EXPIRED);
	assert_string_equal(fx_last(f, OBS_LEASE_LOST)->reason, "expired");
	assert_int_equal(obs_get(&f->obs.losses, "expired"), 1);
	fx_advance(f, 60000);
	assert_int_equal(lost_calls, 1); /* final */
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	lease_release(l);
	fx_run(f);
	assert_int_equal(fx_req(f, STORE_RELEASE), 0); /* nothing to give back */
	fx_free(f);
}

static void renewal_finding_another_owner_loses_taken_over(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	assert_int_equal(fx_simulate_holder(f, "job", LEASE, "another-pod"), 2);
	fx_advance(f, LEASE / 3);
	assert_int_equal(lost_reason, LT_TAKEN_OVER);
	assert_int_equal(lost_calls, 1);
	assert_string_equal(fx_last(f, OBS_LEASE_LOST)->reason, "taken_over");
	struct lt_state st = fx_state(f, "job");
	assert_string_equal(st.holder, "another-pod");
	assert_int_equal(st.token, 2);
	lease_release(l);
	fx_free(f);
}

/* lt_free drops the write of a wait cancelled while it was in flight, and
 * frees the wait (its answer, which would have, never comes): nothing is
 * left in flight, nothing leaks (the sanitizer build checks that). */
static void lt_free_drops_the_write_of_a_cancelled_wait(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *held = fx_take(f, 1, "held", LEASE);
	struct fx_acq a = {0}, b = {0};
	struct lt_wait *w = fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	struct lt_wait *v = fx_acquire(f, 0, "held", LEASE, false, 0, &b);
	assert_int_equal(f->store->in_flight, 2);
	lt_acquire_cancel(w); /* its write is on its way */
	lt_acquire_cancel(v);
	assert_int_equal(f->store->in_flight, 2);
	lt_free(f->lt[0]);
	f->lt[0] = NULL;
	assert_int_equal(f->store->in_flight, 0);
	fx_run(f);
	assert_false(a.done || b.done);
	lease_release(held);
	fx_run(f);
	fx_free(f);
}

/* A table waiting on more locks than seen_max, none of them idle: each
 * read's trim of the holders seen looks at a bounded number of them, not
 * at them all (it walked them all: quadratic, found by the simulator's
 * scale case), and the waits are still served by their polls. */
static void test_seen_trim_bounded(void **state)
{
	struct fx *f = fx_new(2, false);
	struct lt_options o = {.seen_max = 8};
	f->lt[2] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[2]);
	static struct fx_acq a[200];
	char name[32];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		(void)fx_take(f, 1, name, LEASE);
		fx_acquire(f, 2, name, LEASE, true, 0, &a[i]);
	}
	fx_advance(f, 2 * LEASE); /* every wait polls its holder */
	struct lt_stats st;
	lt_stats(f->lt[2], &st);
	assert_true(st.locks >= 200); /* all waited on: none can go */
	assert_true(st.seen_trims >= 200);
	assert_true(st.seen_trim_steps <= 16 * st.seen_trims);
	for (int i = 0; i < 200; i++)
		assert_false(a[i].done);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(acquire_errors_say_when_nothing_was_written),
		cmocka_unit_test(test_seen_trim_bounded),
		cmocka_unit_test(lt_free_drops_the_write_of_a_cancelled_wait),
		cmocka_unit_test(free_acquire_is_one_write),
		cmocka_unit_test(release_is_one_write),
		cmocka_unit_test(try_on_held_lock_returns_nothing),
		cmocka_unit_test(first_attempt_writes_later_polls_read),
		cmocka_unit_test(ten_local_waiters_cost_what_one_costs),
		cmocka_unit_test(polls_every_third_of_the_holders_lease),
		cmocka_unit_test(polls_at_most_every_ten_seconds),
		cmocka_unit_test(polls_sooner_when_the_lease_runs_out_first),
		cmocka_unit_test(crashed_holder_taken_over_after_exactly_one_lease),
		cmocka_unit_test(takeover_needs_the_same_rvn_for_a_whole_lease),
		cmocka_unit_test(try_takes_over_only_after_seeing_the_holder_a_whole_lease),
		cmocka_unit_test(lease_counts_from_the_send_time),
		cmocka_unit_test(renews_every_third_after_the_last_successful_send),
		cmocka_unit_test(failed_renewals_retry_from_100ms_doubling_to_a_sixth),
		cmocka_unit_test(renewals_failing_for_most_of_a_lease_keep_it),
		cmocka_unit_test(renewals_failing_past_the_lease_lose_it_expired),
		cmocka_unit_test(renewal_finding_another_owner_loses_taken_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
