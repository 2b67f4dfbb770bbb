/*
 * Lease rules beyond the timing ones: loss reasons, labels, TTL, foreign
 * items, explicit renew, release, local contention, cancels, the seen cache
 * and the testing helpers. Embedded store, fake clock, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000

static int lost_calls;
static enum lt_loss lost_reason;
static void on_lost(void *arg, struct lease *l, enum lt_loss reason)
{
	lost_calls++;
	lost_reason = reason;
}

static void got(void *arg, int64_t v)
{
	*(int64_t *)arg = v;
}

struct renew_result {
	bool done;
	int renewed;
	bool error;
	char type[48];
};
static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct renew_result *rr = arg;
	rr->done = true;
	rr->renewed = r;
	rr->error = err != NULL;
	if (err != NULL)
		strncpy(rr->type, err->error_type, sizeof(rr->type) - 1);
}

static void delete_loses_the_lease_deleted_and_the_next_token_is_1(void **state)
{
	struct fx *f = fx_new(1, true);
	lease_release(fx_take(f, 0, "job", LEASE));
	fx_run(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(lease_token(l), 2);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	int64_t v = -2;
	assert_true(lt_simulate_delete(f->lt[0], "job", got, &v));
	fx_run(f);
	assert_int_equal(v, 0);
	fx_advance(f, LEASE / 3);
	assert_int_equal(lost_calls, 1);
	assert_int_equal(lost_reason, LT_DELETED);
	assert_false(fx_state(f, "job").exists); /* a renewal never creates the item */
	lease_release(l);
	l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(lease_token(l), 1);
	fx_free(f);
}

static void simulated_release_loses_the_lease_taken_over(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	int64_t v = -2;
	assert_true(lt_simulate_release(f->lt[0], "job", got, &v));
	fx_run(f);
	assert_int_equal(v, 0);
	fx_advance(f, LEASE / 3);
	assert_int_equal(lost_reason, LT_TAKEN_OVER);
	/* The next acquire finds it free and raises the token. */
	struct lease *m = fx_take(f, 1, "job", LEASE);
	assert_int_equal(lease_token(m), 2);
	lease_release(l);
	fx_free(f);
}

static void table_not_found_on_renewal_loses_the_lease(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	store_memory_fail(f->store, 1, STORE_NO_TABLE, "ResourceNotFoundException");
	fx_advance(f, LEASE / 3);
	assert_int_equal(lost_reason, LT_TABLE_NOT_FOUND);
	assert_int_equal(obs_get(&f->obs.losses, "table_not_found"), 1);
	fx_free(f);
}

static void paused_holder_wakes_and_its_next_renewal_reports_taken_over(void **state)
{
	/* The holder's clock stops while the contender's runs: two clocks. */
	struct fx *f = fx_new(1, true);
	struct clock *paused = clock_fake_new(1700000000000LL);
	struct lt_options o = {.holder_label = "paused-pod"};
	struct locktable *holder = lt_new(paused, f->store, &f->obs, &o);
	struct fx_acq a = {0}, b = {0};
	struct lt_acquire_args args = {.name = "job", .lease_ms = LEASE};
	assert_non_null(lt_acquire(holder, &args, fx_acquire_cb, &a));
	fx_run(f);
	assert_non_null(a.lease);
	lost_calls = 0;
	lease_on_lost(a.lease, on_lost, NULL);
	fx_acquire(f, 0, "job", LEASE, true, 0, &b);
	fx_run(f);
	fx_advance(f, LEASE); /* the contender sees the rvn unchanged for a lease */
	assert_non_null(b.lease);
	assert_true(lease_takeover(b.lease));
	assert_true(lease_held(a.lease));      /* the paused holder does not know yet */
	clock_fake_advance(paused, LEASE / 3); /* it wakes; its heartbeat renews */
	fx_run(f);
	assert_int_equal(lost_calls, 1);
	assert_int_equal(lost_reason, LT_TAKEN_OVER);
	assert_true(lease_token(b.lease) > lease_token(a.lease));
	lease_release(a.lease);
	lt_free(holder);
	clock_free(paused);
	fx_free(f);
}

static void holder_label_written_removed_and_replaced(void **state)
{
	struct fx *f = fx_new(2, false);
	struct lt_options o = {.holder_label = "pod-a"};
	f->lt[2] = lt_new(f->clock, f->store, &f->obs, &o);
	struct lease *l = fx_take(f, 2, "job", LEASE);
	assert_string_equal(fx_state(f, "job").holder, "pod-a"); /* written */
	lease_release(l);
	fx_run(f);
	assert_string_equal(fx_state(f, "job").holder, ""); /* a release removes it */
	fx_simulate_holder(f, "job", LEASE, "crashed");
	fx_advance(f, 10);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a); /* an unlabeled table */
	fx_advance(f, 2 * LEASE);
	assert_non_null(a.lease);
	assert_string_equal(fx_state(f, "job").holder, ""); /* the label before is removed */
	lease_release(a.lease);
	fx_run(f);
	struct lt_acquire_args args = {.name = "job", .lease_ms = LEASE, .holder = "pod-b"};
	assert_non_null(lt_acquire(f->lt[2], &args, fx_acquire_cb, &a));
	memset(&a, 0, sizeof(a));
	fx_run(f);
	assert_string_equal(fx_state(f, "job").holder, "pod-b"); /* a lease's own label */
	fx_advance(f, LEASE);
	assert_string_equal(fx_state(f, "job").holder, "pod-b"); /* renewals keep it */
	fx_free(f);
}

static void holder_label_is_1_to_256_characters(void **state)
{
	char msg[128], label[300];
	memset(label, 'x', sizeof(label));
	label[256] = '\0';
	struct lt_acquire_args a = {.name = "job", .lease_ms = LEASE, .holder = label};
	assert_true(lt_args_valid(&a, msg, sizeof(msg)));
	label[256] = 'x';
	label[257] = '\0';
	assert_false(lt_args_valid(&a, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "holder label"));
	a.holder = "";
	assert_false(lt_args_valid(&a, msg, sizeof(msg)));
	struct lt_options o = {.holder_label = ""};
	struct fx *f = fx_new(0, false);
	assert_null(lt_new(f->clock, f->store, &f->obs, &o));
	fx_free(f);
}

static void lease_is_1_second_to_1_day(void **state)
{
	char msg[128];
	static const struct {
		int64_t ms;
		bool ok;
	} cases[] = {{999, false}, {1000, true}, {86400000, true}, {86400001, false}, {-1, false}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lt_acquire_args a = {.name = "job", .lease_ms = cases[i].ms};
		assert_int_equal(lt_args_valid(&a, msg, sizeof(msg)), cases[i].ok);
	}
	struct fx *f = fx_new(1, false);
	struct lt_acquire_args a = {.name = "job", .lease_ms = 999};
	assert_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, NULL));
	assert_int_equal(store_requests_total(f->store), 0);
	fx_free(f);
}

static void ttl_written_on_every_write_with_the_retention(void **state)
{
	struct fx *f = fx_new(0, false);
	struct lt_options bad = {.ttl_retention_ms = LT_MIN_RETENTION_MS - 1};
	assert_null(lt_new(f->clock, f->store, &f->obs, &bad));
	struct lt_options o = {.ttl_retention_ms = 7 * 86400000LL};
	f->lt[0] = lt_new(f->clock, f->store, &f->obs, &o);
	const int64_t week_s = 7 * 86400;
	struct lease *l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(fx_state(f, "job").ttl, clock_wall_ms(f->clock) / 1000 + week_s);
	fx_advance(f, 4500); /* renewals rewrite it: the last at 4 s */
	assert_int_equal(fx_state(f, "job").ttl, (clock_wall_ms(f->clock) - 500) / 1000 + week_s);
	fx_advance(f, 3000);
	lease_release(l);
	fx_run(f);
	assert_int_equal(fx_state(f, "job").ttl, clock_wall_ms(f->clock) / 1000 + week_s);
	fx_free(f);
}

static void item_with_an_owner_but_no_rvn_is_not_a_lock(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lock_item raw = {.exists = true, .has_owner = true, .has_fence = true};
	strcpy(raw.owner, "an-entity");
	assert_true(store_memory_put_raw(f->store, "orders", &raw));
	struct fx_acq a = {0};
	fx_acquire(f, 0, "orders", LEASE, true, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_true(a.error);
	assert_int_equal(a.err.status, STORE_FATAL);
	assert_non_null(strstr(a.err.message, "'orders'"));
	assert_non_null(strstr(a.err.message, "'locks'")); /* the table */
	fx_acquire(f, 0, "orders", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.error);
	fx_free(f);
}

static void explicit_renew_true_while_held_false_once_ended_errors_passed_up(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct renew_result r = {0};
	fx_advance(f, 500);
	assert_true(lease_renew(l, renewed, &r));
	assert_false(r.done);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, 1);
	assert_int_equal(lease_end_ms(l), 500 + LEASE);
	/* The heartbeat now beats a third after that send. */
	uint64_t n = fx_req(f, STORE_RENEW);
	fx_advance(f, 999);
	assert_int_equal(fx_req(f, STORE_RENEW), n);
	fx_advance(f, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), n + 1);
	/* An error is passed up and the lease stays to the heartbeat. */
	memset(&r, 0, sizeof(r));
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException");
	assert_true(lease_renew(l, renewed, &r));
	fx_run(f);
	assert_true(r.error);
	assert_string_equal(r.type, "ThrottlingException");
	assert_true(lease_held(l));
	/* Taken over: the renewal answers 0. */
	fx_simulate_holder(f, "job", LEASE, "other");
	memset(&r, 0, sizeof(r));
	assert_true(lease_renew(l, renewed, &r));
	fx_run(f);
	assert_int_equal(r.renewed, 0);
	assert_false(r.error);
	/* Ended: 0 again, without a request. */
	uint64_t total = store_requests_total(f->store);
	memset(&r, 0, sizeof(r));
	assert_true(lease_renew(l, renewed, &r));
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, 0);
	assert_int_equal(store_requests_total(f->store), total);
	lease_release(l);
	fx_free(f);
}

/* Two renewals of one lease sent together go out on the same rvn (the
 * one the lease last wrote): the second to land is refused by the first's
 * write, a write of this very lease, which is no loss: both answer
 * renewed. */
static void renewals_sent_together_both_answer_renewed(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	struct renew_result a = {0}, b = {0};
	fx_advance(f, 200);
	assert_true(lease_renew(l, renewed, &a));
	assert_true(lease_renew(l, renewed, &b));
	fx_run(f);
	assert_true(a.done && b.done);
	assert_false(a.error || b.error);
	assert_int_equal(a.renewed, 1);
	assert_int_equal(b.renewed, 1);
	assert_int_equal(lost_calls, 0);
	assert_true(lease_held(l));
	assert_int_equal(lease_end_ms(l), fx_now(f) + LEASE);
	lease_release(l);
	fx_free(f);
}

static void foreign_done(void *arg, int done, const struct lt_state *st, const struct lt_error *err)
{
	*(int *)arg = err != NULL ? -1 : done;
}

static void renew_by_token(struct fx *f, int64_t token)
{
	int done = -2;
	struct lt_foreign_req req = {.name = "job", .op = LT_FOREIGN_RENEW, .token = token};
	assert_true(lt_foreign(f->lt[1], &req, foreign_done, &done));
	fx_run(f);
	assert_int_equal(done, 1);
}

/* A renewal by (name, token) from another replica writes a new rvn under
 * the lease's owner. The holder's next renewal, on the rvn it last wrote,
 * is refused by it: not a loss; the lease takes the item's rvn and renews
 * again at once (its end still from its own last send until then). */
static void a_renewal_by_token_elsewhere_is_taken_up_not_lost(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	renew_by_token(f, lease_token(l));
	uint64_t n = fx_req(f, STORE_RENEW);
	fx_advance(f, LEASE / 3); /* the heartbeat: refused, then again */
	assert_int_equal(fx_req(f, STORE_RENEW), n + 2);
	assert_int_equal(lost_calls, 0);
	assert_true(lease_held(l));
	assert_int_equal(lease_end_ms(l), fx_now(f) + LEASE);
	/* an explicit renewal likewise answers renewed */
	renew_by_token(f, lease_token(l));
	struct renew_result r = {0};
	assert_true(lease_renew(l, renewed, &r));
	fx_run(f);
	assert_true(r.done);
	assert_false(r.error);
	assert_int_equal(r.renewed, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), n + 5);
	assert_int_equal(lost_calls, 0);
	/* another owner on the item is a takeover still */
	fx_simulate_holder(f, "job", LEASE, "other");
	memset(&r, 0, sizeof(r));
	assert_true(lease_renew(l, renewed, &r));
	fx_run(f);
	assert_int_equal(r.renewed, 0);
	assert_int_equal(lost_reason, LT_TAKEN_OVER);
	lease_release(l);
	fx_free(f);
}

static void release_answers_pending_renewals_ended(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct renew_result r = {0}, c = {0};
	assert_true(lease_renew(l, renewed, &r));
	assert_true(lease_check(l, renewed, &c));
	lease_release(l);
	assert_false(r.done); /* not inside the release */
	fx_run(f);
	assert_true(r.done && c.done);
	assert_int_equal(r.renewed, 0);
	assert_int_equal(c.renewed, 0);
	assert_false(r.error);
	fx_free(f);
}

static void release_then_answers_once_the_write_is_done(void **state)
{
	struct fx *f = fx_new(1, true);
	store_memory_set_latency(f->store, 100);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_advance(f, 100);
	struct renew_result r = {0};
	lease_release_then(a.lease, renewed, &r);
	fx_advance(f, 99);
	assert_false(r.done);
	fx_advance(f, 1);
	assert_true(r.done);
	assert_int_equal(r.renewed, 1);
	assert_int_equal(fx_req(f, STORE_RELEASE), 1);
	fx_free(f);
}

static void on_store_done(void *arg, const struct store_result *res)
{
	*(bool *)arg = true;
}

/* A release refused by an item that has no owner (released already):
 * answered 1, the release done. */
static void release_then_answers_1_when_already_free(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct store_req req = {.op = STORE_RELEASE, .name = "job", .unconditional = true};
	bool done = false;
	assert_non_null(store_submit(f->store, &req, on_store_done, &done));
	fx_run(f);
	assert_true(done);
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, 1);
	fx_free(f);
}

/* A release whose write fails is answered the failure (-1 and the error),
 * not "done": the lock is not free. Refused by another holder: the same. */
static void release_then_answers_a_failed_write(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "InternalServerError");
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, -1);
	assert_true(r.error);
	assert_string_equal(r.type, "InternalServerError");
	fx_free(f);
}

static void release_then_answers_a_release_refused_by_another_holder(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct store_req rel = {.op = STORE_RELEASE, .name = "job", .unconditional = true};
	bool done = false;
	assert_non_null(store_submit(f->store, &rel, on_store_done, &done));
	fx_run(f);
	struct store_req acq = {.op = STORE_ACQUIRE,
				.name = "job",
				.owner = "other",
				.rvn = "r1",
				.lease_ms = LEASE};
	done = false;
	assert_non_null(store_submit(f->store, &acq, on_store_done, &done));
	fx_run(f);
	assert_true(done);
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, -1);
	assert_true(r.error);
	fx_free(f);
}

/* A release that hands the lock to a waiter of this replica is answered
 * once the hand-off's write is done (1), and answered the failure (-1)
 * when that write fails: the released lease then stays on the item until
 * it runs out, the lock is not free (stress_short found it answered 1 at
 * once while DynamoDB was cut off, LOCK.STATE showing the released token). */
static void release_handing_on_answers_once_the_handoff_is_written(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_run(f);
	store_memory_set_latency(f->store, 100);
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_advance(f, 99);
	assert_false(r.done); /* the hand-off's write is on its way */
	assert_false(a.done);
	fx_advance(f, 1);
	assert_true(r.done);
	assert_int_equal(r.renewed, 1);
	assert_non_null(a.lease);
	assert_int_equal(fx_req(f, STORE_RELEASE), 0); /* handed on: one write */
	fx_free(f);
}

/* A hand-off whose write fails is replaced by a release of the released
 * lease (the handback): the release is answered once that is written, 1;
 * when the handback fails too (every try), -1 with the error, and the item
 * keeps the released lease until it runs out. */
static void release_handing_on_answers_a_failed_handoff(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_run(f);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "InternalServerError");
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, 1); /* the handback was written */
	assert_true(a.done);
	assert_null(a.lease);
	assert_false(fx_state(f, "job").held);
	fx_free(f);
}

static void release_handing_on_answers_a_failed_handback(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	int64_t token = lease_token(l);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_run(f);
	/* the hand-off's write and the three handbacks */
	store_memory_fail(f->store, 4, STORE_TRANSIENT, "InternalServerError");
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, -1);
	assert_true(r.error);
	assert_string_equal(r.type, "InternalServerError");
	assert_true(a.done);
	assert_null(a.lease);
	assert_int_equal(fx_state(f, "job").token, token); /* the released lease's item */
	assert_true(fx_state(f, "job").held);
	fx_free(f);
}

static void acquire_overtaking_our_own_release_wins_with_one_write(void **state)
{
	struct fx *f = fx_new(2, true);
	store_memory_set_op_latency(f->store, STORE_RELEASE, 100);
	lease_release(fx_take(f, 0, "job", 9000));
	uint64_t w0 = fx_req(f, STORE_ACQUIRE);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a); /* the release is still out */
	fx_run(f);
	assert_non_null(a.lease); /* applied before the release, and still won */
	assert_int_equal(lease_token(a.lease), 2);
	assert_int_equal(fx_req(f, STORE_ACQUIRE) - w0, 1);
	fx_advance(f, 100); /* the release lands, refused: not a failure */
	assert_int_equal(fx_events(f, OBS_RELEASE_FAILED), 0);
	assert_true(fx_state(f, "job").held);
	assert_true(lease_held(a.lease));
	fx_free(f);
}

/* A release hands the lock to a local waiter with one write, and answers
 * released. When that write fails (after the store's retries), the
 * released lease's owner would stay on the item until its lease ends,
 * keeping every other waiter out: the hand-off releases it instead, and
 * the waiter is answered the error (simulator seed 2797). */
static void failed_hand_off_releases_the_lease_it_took_the_lock_from(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_run(f);
	assert_false(a.done);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException");
	struct renew_result r = {0};
	lease_release_then(l, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_true(a.done);
	assert_true(a.error);
	assert_string_equal(a.err.error_type, "ThrottlingException");
	assert_int_equal(fx_req(f, STORE_RELEASE), 1);
	assert_false(fx_state(f, "job").held);
	/* the next waiter gets it at once */
	struct lease *m = fx_take(f, 1, "job", LEASE);
	assert_int_equal(lease_token(m), 2);
	lease_release(m);
	fx_run(f);
	fx_free(f);
}

static void embedded_store_reads_state_at_once(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lt_state st;
	assert_true(lt_state_now(f->lt[0], "job", &st));
	assert_false(st.exists);
	struct lease *l = fx_take(f, 0, "job", 5000);
	uint64_t r0 = fx_req(f, STORE_READ);
	assert_true(lt_state_now(f->lt[0], "job", &st));
	assert_true(st.held);
	assert_int_equal(st.token, lease_token(l));
	assert_string_equal(st.holder, "p0");
	assert_int_equal(fx_req(f, STORE_READ) - r0, 1); /* counted as a read */
	store_memory_set_latency(f->store, 10);		 /* a test's latency: the slow path */
	assert_false(lt_state_now(f->lt[0], "job", &st));
	fx_free(f);
}

static void a_loop_stalled_past_the_lease_loses_it_without_a_renewal(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lost_calls = 0;
	lease_on_lost(l, on_lost, NULL);
	clock_fake_jump(f->clock, LEASE + 500); /* a stall: nothing ran */
	assert_false(lease_held(l));		/* the clock says so already */
	fx_run(f);				/* the overdue heartbeat and end timer run now */
	assert_int_equal(fx_req(f, STORE_RENEW), 0);
	assert_int_equal(lost_calls, 1);
	assert_int_equal(lost_reason, LT_EXPIRED);
	lease_release(l);
	fx_free(f);
}

static void failed_release_is_logged_never_thrown(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "InternalServerError");
	lease_release(l);
	fx_run(f);
	assert_int_equal(fx_events(f, OBS_RELEASE_FAILED), 1);
	assert_string_equal(fx_last(f, OBS_RELEASE_FAILED)->error_type, "InternalServerError");
	assert_true(fx_state(f, "job").held); /* free once its lease runs out */
	/* lease_release_then answers the failure: the lock may still be held */
	struct lease *m = fx_take(f, 0, "other", LEASE);
	struct renew_result r = {0};
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "InternalServerError");
	lease_release_then(m, renewed, &r);
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, -1);
	assert_true(r.error);
	assert_string_equal(r.type, "InternalServerError");
	assert_true(fx_state(f, "other").held);
	fx_free(f);
}

static void acquire_answered_after_a_whole_lease_yields_an_ended_lease(void **state)
{
	struct fx *f = fx_new(1, true);
	store_memory_set_latency(f->store, LEASE);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_advance(f, LEASE);
	assert_non_null(a.lease);
	assert_false(lease_held(a.lease));
	assert_int_equal(lease_loss(a.lease), LT_EXPIRED);
	store_memory_set_latency(f->store, 0);
	lease_release(a.lease);
	fx_run(f);
	assert_int_equal(fx_req(f, STORE_RENEW), 0);
	fx_free(f);
}

static void retried_acquire_finds_its_own_owner(void **state)
{
	struct fx *f = fx_new(2, true);
	struct fx_acq a = {0}, b = {0};
	struct lt_acquire_args args = {.name = "job", .lease_ms = LEASE, .owner = "my-owner-id"};
	/* The first attempt lands, but its answer is lost (cancelled here). */
	struct lt_wait *w = lt_acquire(f->lt[0], &args, fx_acquire_cb, &a);
	assert_non_null(w);
	memset(&a, 0, sizeof(a));
	fx_run(f);
	assert_true(fx_state(f, "job").held);
	/* The retry, from another table as a restarted process would. */
	assert_non_null(lt_acquire(f->lt[1], &args, fx_acquire_cb, &b));
	memset(&b, 0, sizeof(b));
	fx_run(f);
	assert_non_null(b.lease);
	assert_string_equal(fx_state(f, "job").owner, "my-owner-id");
	lease_release(a.lease);
	lease_release(b.lease);
	fx_free(f);
}

static void local_lock_refuses_local_tries_without_a_request(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	uint64_t total = store_requests_total(f->store);
	int64_t refused = -2;
	assert_true(lt_wait_for_refusal(f->lt[0], "job", got, &refused));
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_null(a.lease);
	assert_int_equal(refused, 0);
	assert_int_equal(store_requests_total(f->store), total);
	assert_ptr_equal(lt_local_lease(f->lt[0], "job"), l);
	fx_free(f);
}

/* A wait for a refusal taken back never runs; a simulated release of a
 * lock without an item says so (nothing written). */
static void refusal_wait_cancelled_and_release_without_item(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	int64_t refused = -5, kept = -5;
	assert_true(lt_wait_for_refusal(f->lt[0], "job", got, &refused));
	assert_true(lt_wait_for_refusal(f->lt[0], "job", got, &kept));
	lt_wait_for_refusal_cancel(f->lt[0], got, &refused);
	struct fx_acq a = {0};
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_int_equal(refused, -5);
	assert_int_equal(kept, 0);
	int64_t v = 0;
	assert_true(lt_simulate_release(f->lt[0], "nothing-here", got, &v));
	fx_run(f);
	assert_int_equal(v, LT_TEST_NO_ITEM);
	lease_release(l);
	fx_free(f);
}

static void local_waiters_queue_fifo_and_get_the_lock_by_one_write(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a[3];
	for (int i = 0; i < 3; i++)
		fx_acquire(f, 0, "job", LEASE, true, 0, &a[i]);
	uint64_t total = store_requests_total(f->store) - fx_req(f, STORE_RENEW);
	fx_advance(f, 5 * LEASE);
	assert_int_equal(store_requests_total(f->store) - fx_req(f, STORE_RENEW), total);
	for (int i = 0; i < 3; i++) {
		assert_false(a[i].done);
		uint64_t w = fx_req(f, STORE_ACQUIRE), rel = fx_req(f, STORE_RELEASE);
		lease_release(i == 0 ? l : a[i - 1].lease);
		fx_run(f);
		assert_non_null(a[i].lease);			   /* in order */
		assert_int_equal(fx_req(f, STORE_ACQUIRE) - w, 1); /* one conditional write */
		assert_int_equal(fx_req(f, STORE_RELEASE) - rel, 0);
		assert_int_equal(lease_token(a[i].lease), i + 2);
		for (int j = i + 1; j < 3; j++)
			assert_false(a[j].done);
	}
	fx_free(f);
}

static void one_shared_poll_however_many_wait(void **state)
{
	struct fx *f = fx_new(2, true);
	fx_simulate_holder(f, "job", 30000, "other");
	struct fx_acq a[5];
	for (int i = 0; i < 5; i++)
		fx_acquire(f, 1, "job", LEASE, true, 0, &a[i]);
	fx_run(f);
	uint64_t r0 = fx_req(f, STORE_READ), w0 = fx_req(f, STORE_ACQUIRE);
	fx_advance(f, 10000);
	assert_int_equal(fx_req(f, STORE_READ) - r0, 1);
	fx_advance(f, 10000);
	assert_int_equal(fx_req(f, STORE_READ) - r0, 2);
	fx_advance(f, 10000); /* due: one takeover write for the first waiter */
	assert_int_equal(fx_req(f, STORE_ACQUIRE) - w0, 1);
	assert_non_null(a[0].lease);
	for (int i = 1; i < 5; i++)
		assert_false(a[i].done);
	fx_free(f);
}

static void wait_times_out_with_nothing(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a = {0};
	fx_acquire(f, 1, "job", LEASE, true, 2500, &a);
	fx_advance(f, 2499);
	assert_false(a.done);
	fx_advance(f, 1);
	assert_true(a.done);
	assert_null(a.lease);
	assert_false(a.error);
	lease_release(l);
	fx_free(f);
}

static void cancelled_wait_never_leaves_a_lease_behind(void **state)
{
	struct fx *f = fx_new(1, true);
	store_memory_set_latency(f->store, 100);
	struct fx_acq a = {0};
	struct lt_wait *w = fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_advance(f, 50); /* the write is in flight */
	lt_acquire_cancel(w);
	fx_advance(f, 1000);
	assert_false(a.done);
	assert_int_equal(fx_req(f, STORE_RELEASE), 1);
	store_memory_set_latency(f->store, 0);
	assert_false(fx_state(f, "job").held);
	struct lt_stats st;
	lt_stats(f->lt[0], &st);
	assert_int_equal(st.leases, 0);
	assert_int_equal(st.waits, 0);
	fx_free(f);
}

static void holders_seen_cache_is_bounded(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lt_options o = {.seen_max = 3};
	f->lt[1] = lt_new(f->clock, f->store, &f->obs, &o);
	char name[32];
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "lock-%d", i);
		fx_simulate_holder(f, name, LEASE, "other");
		struct fx_acq a;
		fx_acquire(f, 1, name, LEASE, false, 0, &a);
		fx_run(f);
		assert_null(a.lease);
	}
	struct lt_stats st;
	lt_stats(f->lt[1], &st);
	assert_int_equal(st.locks, 3);
	fx_free(f);
}

static void state_and_fencing_check(void **state)
{
	struct fx *f = fx_new(1, true);
	assert_false(fx_state(f, "job").exists);
	struct lease *l = fx_take(f, 0, "job", 5000);
	struct lt_state st = fx_state(f, "job");
	assert_true(st.exists && st.held);
	assert_string_equal(st.holder, "p0");
	assert_int_equal(st.lease_ms, 5000);
	assert_int_equal(st.token, 1);
	struct renew_result r = {0};
	assert_true(lease_check(l, renewed, &r));
	fx_run(f);
	assert_int_equal(r.renewed, 1);
	fx_simulate_holder(f, "job", LEASE, "other");
	memset(&r, 0, sizeof(r));
	assert_true(lease_check(l, renewed, &r));
	fx_run(f);
	assert_true(r.done);
	assert_int_equal(r.renewed, 0);
	lease_release(l);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(delete_loses_the_lease_deleted_and_the_next_token_is_1),
		cmocka_unit_test(simulated_release_loses_the_lease_taken_over),
		cmocka_unit_test(table_not_found_on_renewal_loses_the_lease),
		cmocka_unit_test(paused_holder_wakes_and_its_next_renewal_reports_taken_over),
		cmocka_unit_test(holder_label_written_removed_and_replaced),
		cmocka_unit_test(holder_label_is_1_to_256_characters),
		cmocka_unit_test(lease_is_1_second_to_1_day),
		cmocka_unit_test(ttl_written_on_every_write_with_the_retention),
		cmocka_unit_test(item_with_an_owner_but_no_rvn_is_not_a_lock),
		cmocka_unit_test(explicit_renew_true_while_held_false_once_ended_errors_passed_up),
		cmocka_unit_test(renewals_sent_together_both_answer_renewed),
		cmocka_unit_test(a_renewal_by_token_elsewhere_is_taken_up_not_lost),
		cmocka_unit_test(release_answers_pending_renewals_ended),
		cmocka_unit_test(release_then_answers_once_the_write_is_done),
		cmocka_unit_test(release_then_answers_1_when_already_free),
		cmocka_unit_test(release_then_answers_a_failed_write),
		cmocka_unit_test(release_then_answers_a_release_refused_by_another_holder),
		cmocka_unit_test(release_handing_on_answers_once_the_handoff_is_written),
		cmocka_unit_test(release_handing_on_answers_a_failed_handoff),
		cmocka_unit_test(release_handing_on_answers_a_failed_handback),
		cmocka_unit_test(acquire_overtaking_our_own_release_wins_with_one_write),
		cmocka_unit_test(failed_hand_off_releases_the_lease_it_took_the_lock_from),
		cmocka_unit_test(embedded_store_reads_state_at_once),
		cmocka_unit_test(a_loop_stalled_past_the_lease_loses_it_without_a_renewal),
		cmocka_unit_test(failed_release_is_logged_never_thrown),
		cmocka_unit_test(acquire_answered_after_a_whole_lease_yields_an_ended_lease),
		cmocka_unit_test(retried_acquire_finds_its_own_owner),
		cmocka_unit_test(local_lock_refuses_local_tries_without_a_request),
		cmocka_unit_test(refusal_wait_cancelled_and_release_without_item),
		cmocka_unit_test(local_waiters_queue_fifo_and_get_the_lock_by_one_write),
		cmocka_unit_test(one_shared_poll_however_many_wait),
		cmocka_unit_test(wait_times_out_with_nothing),
		cmocka_unit_test(cancelled_wait_never_leaves_a_lease_behind),
		cmocka_unit_test(holders_seen_cache_is_bounded),
		cmocka_unit_test(state_and_fencing_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
