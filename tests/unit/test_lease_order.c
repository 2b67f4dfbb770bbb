/*
 * Two renewals of one lease in flight, answered out of order: an explicit
 * lease_renew (LOCK.RENEW) racing the heartbeat. The lease runs from the
 * send time of the latest successful renewal (DESIGN.md, timing rules), so
 * the answer of the earlier send, arriving last, must change nothing: not
 * the lease's end, not the next heartbeat. Embedded store (one operation
 * made slow to reorder the answers), fake clock, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000
#define SLOW  400 /* the slow renewal's answer comes this much later */

struct renew_result {
	int calls;
	int renewed;
};
static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct renew_result *rr = arg;
	rr->calls++;
	rr->renewed = err != NULL ? -1 : r;
}

struct order_case {
	const char *what;
	bool heartbeat_slow; /* else the explicit renewal is the slow one */
	int64_t explicit_at; /* ms after the acquire */
};

/* Both renewals go out (the slow one first), the fast one is answered, then
 * the slow one: the lease ends a lease after the fast one's send, and the
 * next heartbeat goes a third of a lease after it. */
static void run_case(const struct order_case *c)
{
	struct fx *f = fx_new(1, true);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(lease_end_ms(l), t0 + LEASE);
	struct renew_result rr = {0};
	int64_t slow_send, fast_send;

	if (c->heartbeat_slow) {
		/* The heartbeat at L/3 is slow; LOCK.RENEW goes after it. */
		store_memory_set_op_latency(f->store, STORE_RENEW, SLOW);
		fx_advance(f, LEASE / 3);
		slow_send = fx_now(f);
		assert_int_equal(fx_req(f, STORE_RENEW), 1);
		store_memory_set_op_latency(f->store, STORE_RENEW, 0);
		fx_advance(f, c->explicit_at - LEASE / 3);
		fast_send = fx_now(f);
		assert_true(lease_renew(l, renewed, &rr));
		fx_run(f);
		assert_int_equal(rr.calls, 1);
	} else {
		/* LOCK.RENEW just before L/3 is slow; the heartbeat goes after it. */
		fx_advance(f, c->explicit_at);
		store_memory_set_op_latency(f->store, STORE_RENEW, SLOW);
		slow_send = fx_now(f);
		assert_true(lease_renew(l, renewed, &rr));
		store_memory_set_op_latency(f->store, STORE_RENEW, 0);
		fx_advance(f, t0 + LEASE / 3 - fx_now(f));
		fast_send = fx_now(f);
		assert_int_equal(rr.calls, 0); /* the slow one is still in flight */
	}
	assert_true(slow_send < fast_send);
	assert_true(fast_send < slow_send + SLOW);
	assert_int_equal(fx_req(f, STORE_RENEW), 2);
	/* The fast answer is in: the lease runs from its send. */
	assert_int_equal(lease_end_ms(l), fast_send + LEASE);

	/* The slow answer arrives last, a success too. */
	fx_advance(f, slow_send + SLOW - fx_now(f));
	if (!c->heartbeat_slow)
		assert_int_equal(rr.calls, 1);
	assert_int_equal(rr.renewed, 1);
	assert_true(lease_held(l));
	if (lease_end_ms(l) != fast_send + LEASE)
		fail_msg("%s: the lease ends at +%lld, from the earlier send (+%lld) answered "
			 "last; want +%lld, from the later send (+%lld)",
			 c->what, (long long)(lease_end_ms(l) - t0), (long long)(slow_send - t0),
			 (long long)(fast_send + LEASE - t0), (long long)(fast_send - t0));

	/* The next heartbeat: a third of a lease after the later send, not
	 * after the earlier one. */
	int64_t next = fast_send + LEASE / 3;
	fx_advance(f, next - 1 - fx_now(f));
	assert_int_equal(fx_req(f, STORE_RENEW), 2);
	fx_advance(f, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), 3);
	assert_int_equal(lease_end_ms(l), next + LEASE);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

static const struct order_case cases[] = {
	{"a slow heartbeat answered after LOCK.RENEW", true, LEASE / 3 + 100},
	{"a slow LOCK.RENEW answered after the heartbeat", false, LEASE / 3 - 100},
};

static void slow_heartbeat_answered_after_explicit_renew(void **state)
{
	run_case(&cases[0]);
}

static void slow_explicit_renew_answered_after_heartbeat(void **state)
{
	run_case(&cases[1]);
}

/* The control: the same two renewals answered in order extend the lease
 * from the later send too (the guard does not drop an in-order answer). */
static void in_order_answers_extend_from_the_later_send(void **state)
{
	struct fx *f = fx_new(1, true);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct renew_result rr = {0};
	store_memory_set_op_latency(f->store, STORE_RENEW, SLOW);
	fx_advance(f, LEASE / 3 - 100);
	assert_true(lease_renew(l, renewed, &rr)); /* answered at L/3 + 300 */
	fx_advance(f, 100);			   /* the heartbeat, answered at L/3 + 400 */
	assert_int_equal(fx_req(f, STORE_RENEW), 2);
	fx_advance(f, SLOW - 100);
	assert_int_equal(rr.calls, 1);
	assert_int_equal(lease_end_ms(l), t0 + LEASE / 3 - 100 + LEASE);
	fx_advance(f, 100);
	assert_int_equal(lease_end_ms(l), t0 + LEASE / 3 + LEASE);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_heartbeat_answered_after_explicit_renew),
		cmocka_unit_test(slow_explicit_renew_answered_after_heartbeat),
		cmocka_unit_test(in_order_answers_extend_from_the_later_send),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
