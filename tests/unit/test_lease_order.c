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

/* The control: the same two renewals answered in order. Both went out on
 * the rvn the acquire wrote; the one sent first lands first, so the later
 * one is refused by it (a write of this very lease: no loss) and the lease
 * runs from the first one's send: the item shows that renewal's rvn, and a
 * waiter may have read it since a moment before the later send. */
static void in_order_answers_extend_from_the_send_that_landed(void **state)
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
	assert_int_equal(rr.renewed, 1);
	assert_true(lease_held(l));
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);
	assert_int_equal(lease_end_ms(l), t0 + LEASE / 3 - 100 + LEASE);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

/* A store in front of the embedded one that can deliver the first renewal
 * it was given once more, later: what DynamoDB sees when the SDK retries a
 * timed-out attempt with the same body and the first one lands too, or
 * when an abandoned attempt lands late. */
struct replay_store {
	struct store base;
	struct store *mem;
	bool recorded;
	struct store_req req;
	char name[64], owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1], seen[STORE_ID_MAX + 1];
};

static struct store_call *rs_submit(struct store *s, const struct store_req *req, store_cb cb,
				    void *arg)
{
	struct replay_store *rs = (struct replay_store *)s;
	if (req->op == STORE_RENEW && !rs->recorded) {
		rs->recorded = true;
		rs->req = *req;
		rs->req.span = NULL;
		rs->req.holder = NULL;
		rs->req.name = strcpy(rs->name, req->name);
		rs->req.owner = strcpy(rs->owner, req->owner);
		rs->req.rvn = strcpy(rs->rvn, req->rvn);
		rs->req.seen_rvn = req->seen_rvn != NULL ? strcpy(rs->seen, req->seen_rvn) : NULL;
	}
	return store_submit(rs->mem, req, cb, arg);
}

static void rs_cancel(struct store *s, struct store_call *call)
{
	store_cancel(((struct replay_store *)s)->mem, call);
}

static void rs_free(struct store *s) {}

static const struct store_ops replay_ops = {
	.submit = rs_submit, .cancel = rs_cancel, .free = rs_free};

static void replayed(void *arg, const struct store_result *res)
{
	*(enum store_status *)arg = res->status;
}

static const char *item_rvn(struct fx *f, char *buf)
{
	struct lock_item it;
	assert_true(store_read_now(f->store, "job", &it));
	return strcpy(buf, it.rvn);
}

/* The first renewal lands, then again after the second one (a retried or
 * late attempt, simulator seed 2522): it must not put its rvn back. A
 * waiter elsewhere read that rvn before the second renewal and then sees
 * it again: without a version change it counts a whole lease from its
 * first read and takes the lock over while the holder's lease, renewed by
 * the second renewal, still runs. With renewals conditioned on the rvn
 * last written the late attempt is refused, the waiter sees the second
 * renewal's rvn, and the takeover comes only after the holder's lease. */
static void a_late_attempt_of_an_older_renewal_never_brings_its_rvn_back(void **state)
{
	struct fx *f = fx_new(2, true);
	struct replay_store rs = {.base = {.ops = &replay_ops, .table = "locks"}, .mem = f->store};
	struct lt_options o = {.holder_label = "holder"};
	f->lt[2] = lt_new(f->clock, &rs.base, &f->obs, &o);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 2, "job", LEASE);
	char first[STORE_ID_MAX + 1], second[STORE_ID_MAX + 1], now[STORE_ID_MAX + 1];

	fx_advance(f, 500);
	struct fx_acq b = {0};
	fx_acquire(f, 1, "job", LEASE, true, 0, &b); /* reads the acquire's rvn */
	fx_advance(f, t0 + LEASE / 3 - fx_now(f));   /* the first renewal */
	item_rvn(f, first);
	assert_true(rs.recorded);
	assert_string_equal(rs.req.rvn, first);
	fx_advance(f, 500); /* the waiter's poll reads the first renewal's rvn */
	fx_advance(f, 500); /* the second renewal */
	item_rvn(f, second);
	assert_string_not_equal(first, second);
	int64_t end = lease_end_ms(l);
	assert_int_equal(end, fx_now(f) + LEASE);

	/* the first renewal's request lands once more */
	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_REFUSED);
	assert_string_equal(item_rvn(f, now), second);

	/* the holder's later renewals are slow: its lease runs to end */
	store_memory_set_op_latency(f->store, STORE_RENEW, 2 * LEASE);
	fx_advance(f, end - 1 - fx_now(f));
	assert_true(lease_held(l));
	if (b.lease != NULL)
		fail_msg("the waiter took the lock over at +%lld while the holder's lease runs to "
			 "+%lld",
			 (long long)(b.at_ms - t0), (long long)(end - t0));
	fx_advance(f, 1);
	assert_false(lease_held(l));
	fx_advance(f, LEASE); /* the waiter's whole lease since it read the second rvn */
	assert_non_null(b.lease);
	assert_true(lease_takeover(b.lease));
	fx_advance(f, 2 * LEASE); /* the slow renewals land, refused */
	lease_release(l);
	lease_release(b.lease);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_heartbeat_answered_after_explicit_renew),
		cmocka_unit_test(slow_explicit_renew_answered_after_heartbeat),
		cmocka_unit_test(in_order_answers_extend_from_the_send_that_landed),
		cmocka_unit_test(a_late_attempt_of_an_older_renewal_never_brings_its_rvn_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
