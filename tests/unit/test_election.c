/*
 * Leader election: how terms end, how transient errors are retried and
 * logged (44 once per outage, then 49), and which errors end it.
 * Embedded store, fake clock, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000

struct watch {
	int leads, lost, failed;
	int64_t token;
	enum lt_loss reason;
	struct lt_error err;
	struct election *stop_on_lost;
};

static void on_lead(void *arg, struct lease *lease)
{
	struct watch *w = arg;
	w->leads++;
	w->token = lease_token(lease);
}

static void on_lost(void *arg, enum lt_loss reason)
{
	struct watch *w = arg;
	w->lost++;
	w->reason = reason;
}

static void on_failed(void *arg, const struct lt_error *err)
{
	struct watch *w = arg;
	w->failed++;
	w->err = *err;
}

static const struct election_cbs cbs = {.lead = on_lead, .lost = on_lost, .failed = on_failed};

static struct election *start(struct fx *f, int i, struct watch *w, bool one_term)
{
	char msg[128];
	struct election_args a = {.name = "sweeper", .lease_ms = LEASE, .one_term = one_term};
	memset(w, 0, sizeof(*w));
	struct election *e = election_start(f->lt[i], &a, &cbs, w, msg, sizeof(msg));
	assert_non_null(e);
	return e;
}

static void leads_a_free_lock_and_logs_45(void **state)
{
	struct fx *f = fx_new(1, true);
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	assert_int_equal(w.leads, 1);
	assert_int_equal(w.token, 1);
	assert_non_null(election_lease(e));
	const struct fx_event *ev = fx_last(f, OBS_LEADS);
	assert_non_null(ev);
	assert_int_equal(ev->token, 1);
	assert_string_equal(ev->holder, "p0");
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

static void one_leader_among_several(void **state)
{
	struct fx *f = fx_new(3, true);
	struct watch w[3];
	struct election *e[3];
	for (int i = 0; i < 3; i++)
		e[i] = start(f, i, &w[i], false);
	fx_advance(f, 10 * LEASE);
	assert_int_equal(w[0].leads + w[1].leads + w[2].leads, 1);
	for (int i = 0; i < 3; i++)
		election_stop(e[i], ELECTION_CANCELLED);
	fx_free(f);
}

static void lost_term_contends_again(void **state)
{
	struct fx *f = fx_new(1, true);
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	fx_simulate_holder(f, "sweeper", LEASE, "intruder");
	fx_advance(f, LEASE / 3); /* the renewal finds the intruder */
	assert_int_equal(w.lost, 1);
	assert_int_equal(w.reason, LT_TAKEN_OVER);
	assert_null(election_lease(e));
	const struct fx_event *ev = fx_last(f, OBS_NO_LONGER_LEADS);
	assert_non_null(ev);
	assert_string_equal(ev->reason, "lease_lost");
	fx_advance(f, LEASE); /* the intruder never renews: taken over */
	assert_int_equal(w.leads, 2);
	assert_int_equal(w.token, 3);
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

static void one_term_election_stops_after_a_lost_term(void **state)
{
	struct fx *f = fx_new(1, true);
	struct watch w;
	struct election *e = start(f, 0, &w, true);
	fx_run(f);
	fx_simulate_holder(f, "sweeper", LEASE, "intruder");
	fx_advance(f, 10 * LEASE);
	assert_int_equal(w.lost, 1);
	assert_int_equal(w.leads, 1);
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

static void cancel_releases_and_reports_cancelled(void **state)
{
	struct fx *f = fx_new(1, true);
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	uint64_t rel = fx_req(f, STORE_RELEASE);
	election_stop(e, ELECTION_CANCELLED);
	fx_run(f);
	assert_int_equal(fx_req(f, STORE_RELEASE) - rel, 1);
	assert_string_equal(fx_last(f, OBS_NO_LONGER_LEADS)->reason, "cancelled");
	assert_false(fx_state(f, "sweeper").held);
	fx_free(f);
}

static int stopped_calls, stopped_value;

static void on_stopped(void *arg, int released, const struct lt_error *err)
{
	assert_null(err);
	stopped_calls++;
	stopped_value = released;
}

/* election_stop_then: called back once the release is written (the item
 * free by then), or at once with 0 when no term is in progress. */
static void stop_then_answers_once_the_release_is_done(void **state)
{
	struct fx *f = fx_new(1, true);
	struct watch w, x;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	stopped_calls = 0;
	election_stop_then(e, ELECTION_WORK_RETURNED, on_stopped, NULL);
	assert_int_equal(stopped_calls, 0); /* the release is on its way */
	fx_run(f);
	assert_int_equal(stopped_calls, 1);
	assert_int_equal(stopped_value, 1);
	assert_false(fx_state(f, "sweeper").held);

	fx_simulate_holder(f, "sweeper", LEASE, "other"); /* another leads: no term here */
	e = start(f, 0, &x, false);
	fx_run(f);
	assert_int_equal(x.leads, 0);
	election_stop_then(e, ELECTION_CANCELLED, on_stopped, NULL);
	assert_int_equal(stopped_calls, 2);
	assert_int_equal(stopped_value, 0);
	fx_free(f);
}

static void work_done_hands_on_to_a_waiting_campaigner(void **state)
{
	struct fx *f = fx_new(1, true);
	struct watch a, b;
	struct election *ea = start(f, 0, &a, false);
	fx_run(f);
	struct election *eb = start(f, 0, &b, false); /* same process: waits here */
	fx_advance(f, 2 * LEASE);
	assert_int_equal(b.leads, 0);
	uint64_t w0 = fx_req(f, STORE_ACQUIRE);
	election_stop(ea, ELECTION_WORK_RETURNED);
	fx_run(f);
	assert_string_equal(fx_last(f, OBS_NO_LONGER_LEADS)->reason, "work_returned");
	assert_int_equal(b.leads, 1);
	assert_int_equal(b.token, 2);
	assert_int_equal(fx_req(f, STORE_ACQUIRE) - w0, 1); /* one conditional write */
	election_stop(eb, ELECTION_CANCELLED);
	fx_free(f);
}

static void transient_errors_retried_44_once_per_outage_then_49(void **state)
{
	struct fx *f = fx_new(1, true);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "ThrottlingException");
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	assert_int_equal(fx_events(f, OBS_CONTEND_FAILED), 1);
	assert_string_equal(fx_last(f, OBS_CONTEND_FAILED)->error_type, "ThrottlingException");
	/* Retries after a third of the lease each, logging nothing more. */
	uint64_t w0 = fx_req(f, STORE_ACQUIRE);
	fx_advance(f, 4 * (LEASE / 3));
	assert_int_equal(fx_req(f, STORE_ACQUIRE) - w0, 4);
	assert_int_equal(fx_events(f, OBS_CONTEND_FAILED), 1);
	assert_int_equal(obs_get(&f->obs.contention_retries, "ThrottlingException"), 5);
	assert_int_equal(w.leads, 0);
	assert_int_equal(w.failed, 0);
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	fx_advance(f, LEASE / 3);
	assert_int_equal(w.leads, 1);
	const struct fx_event *ev = fx_last(f, OBS_CONTEND_RECOVERED);
	assert_non_null(ev);
	assert_int_equal(ev->retries, 5);
	assert_int_equal(ev->wait_ms, 5 * (LEASE / 3));
	/* A second outage logs 44 again. */
	election_stop(e, ELECTION_WORK_RETURNED);
	fx_run(f);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "InternalServerError");
	e = start(f, 0, &w, false);
	fx_advance(f, LEASE);
	assert_int_equal(fx_events(f, OBS_CONTEND_FAILED), 2);
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

static void recovery_logs_49_when_the_lock_is_found_held(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *held;
	struct fx_acq a = {0};
	fx_acquire(f, 1, "sweeper", LEASE, false, 0, &a);
	fx_run(f);
	held = a.lease;
	assert_non_null(held);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException");
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	assert_int_equal(fx_events(f, OBS_CONTEND_FAILED), 1);
	fx_advance(f, LEASE / 3); /* the retry finds the lock held: DynamoDB answered */
	assert_int_equal(fx_events(f, OBS_CONTEND_RECOVERED), 1);
	assert_int_equal(w.leads, 0);
	election_stop(e, ELECTION_CANCELLED);
	lease_release(held);
	fx_free(f);
}

static void other_errors_end_the_election(void **state)
{
	static const struct {
		enum store_status status;
		const char *type;
	} cases[] = {
		{STORE_NO_TABLE, "ResourceNotFoundException"},
		{STORE_FATAL, "AccessDeniedException"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new(1, true);
		store_memory_fail(f->store, 1, cases[i].status, cases[i].type);
		struct watch w;
		struct election *e = start(f, 0, &w, false);
		fx_advance(f, 10 * LEASE);
		assert_int_equal(w.failed, 1);
		assert_int_equal(w.err.status, cases[i].status);
		assert_int_equal(w.leads, 0);
		assert_int_equal(fx_req(f, STORE_ACQUIRE), 1); /* not retried */
		assert_int_equal(fx_events(f, OBS_CONTEND_FAILED), 0);
		election_stop(e, ELECTION_CANCELLED);
		fx_free(f);
	}
}

static void item_that_is_no_lock_ends_the_election(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lock_item raw = {.exists = true, .has_owner = true};
	strcpy(raw.owner, "entity");
	assert_true(store_memory_put_raw(f->store, "sweeper", &raw));
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_run(f);
	assert_int_equal(w.failed, 1);
	assert_string_equal(w.err.error_type, "NotALock");
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

static void lease_ended_on_arrival_starts_no_term(void **state)
{
	struct fx *f = fx_new(1, true);
	store_memory_set_latency(f->store, LEASE);
	struct watch w;
	struct election *e = start(f, 0, &w, false);
	fx_advance(f, LEASE);
	assert_int_equal(w.leads, 0); /* no term */
	store_memory_set_latency(f->store, 0);
	fx_advance(f, 2 * LEASE); /* contends again and, found its own item, leads */
	assert_true(w.leads >= 1);
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

/* A store in front of the embedded one whose first acquire is applied
 * and then answered as a timeout: the write landed, its answer was lost
 * (after the SDK's retries). */
struct lossy_store {
	struct store base;
	struct store *mem;
	bool lost;
	store_cb cb;
	void *arg;
};

static void answer_lost(void *arg, const struct store_result *res)
{
	struct lossy_store *ls = arg;
	struct store_result r = {.status = STORE_TRANSIENT, .error_type = "Timeout"};
	strcpy(r.message, "the answer was lost (the test)");
	assert_int_equal(res->status, STORE_OK); /* applied */
	ls->cb(ls->arg, &r);
}

static struct store_call *lossy_submit(struct store *s, const struct store_req *req, store_cb cb,
				       void *arg)
{
	struct lossy_store *ls = (struct lossy_store *)s;
	if (req->op != STORE_ACQUIRE || ls->lost)
		return store_submit(ls->mem, req, cb, arg);
	ls->lost = true;
	ls->cb = cb;
	ls->arg = arg;
	return store_submit(ls->mem, req, answer_lost, ls);
}

static void lossy_cancel(struct store *s, struct store_call *call)
{
	store_cancel(((struct lossy_store *)s)->mem, call);
}

static void lossy_free(struct store *s) {}

static const struct store_ops lossy_ops = {
	.submit = lossy_submit, .cancel = lossy_cancel, .free = lossy_free};

/* A contention whose write landed but was answered an error contends again
 * with the same owner id (one per contention) and finds its own owner on
 * the item: it writes on the rvn the item shows and leads at its retry, a
 * third of a lease later, not after a whole lease of waiting on itself
 * (acquires have no branch for their owner alone: ACQUIRE in store.h). */
static void contention_retried_after_a_lost_answer_leads_at_once(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lossy_store ls = {.base = {.ops = &lossy_ops, .table = "locks"}, .mem = f->store};
	f->lt[1] = lt_new(f->clock, &ls.base, &f->obs, NULL);
	struct watch w;
	struct election *e = start(f, 1, &w, false);
	fx_run(f);
	assert_true(ls.lost);
	assert_int_equal(w.leads, 0);
	assert_int_equal(fx_events(f, OBS_CONTEND_FAILED), 1);
	assert_true(fx_state(f, "sweeper").held); /* the write landed */
	fx_advance(f, LEASE / 3);
	assert_int_equal(w.leads, 1);
	assert_int_equal(w.token, 2);
	assert_int_equal(fx_req(f, STORE_ACQUIRE), 3); /* refused by its own owner, again */
	assert_int_equal(fx_state(f, "sweeper").token, 2);
	election_stop(e, ELECTION_CANCELLED);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leads_a_free_lock_and_logs_45),
		cmocka_unit_test(contention_retried_after_a_lost_answer_leads_at_once),
		cmocka_unit_test(one_leader_among_several),
		cmocka_unit_test(lost_term_contends_again),
		cmocka_unit_test(one_term_election_stops_after_a_lost_term),
		cmocka_unit_test(cancel_releases_and_reports_cancelled),
		cmocka_unit_test(stop_then_answers_once_the_release_is_done),
		cmocka_unit_test(work_done_hands_on_to_a_waiting_campaigner),
		cmocka_unit_test(transient_errors_retried_44_once_per_outage_then_49),
		cmocka_unit_test(recovery_logs_49_when_the_lock_is_found_held),
		cmocka_unit_test(other_errors_end_the_election),
		cmocka_unit_test(item_that_is_no_lock_ends_the_election),
		cmocka_unit_test(lease_ended_on_arrival_starts_no_term),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
