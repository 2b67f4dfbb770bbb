/*
 * it_ddb_pool: the DynamoDB store against the benchmarks' stand-in
 * (tests/support/ddb_standin.c) on this loop, over real HTTP keep-alive:
 *   - the stand-in gives the embedded store's answers to what the store
 *     sends (acquire, a stranger's renewal refused with the item, renew,
 *     release, read, the fencing check), its throttling is retried and
 *     counted, its latency is a floor on every answer, it counts requests,
 *     connections and concurrency, and it times renewals against their
 *     schedule;
 *   - with the pool saturated (max_in_flight 1), a renewal goes ahead of an
 *     acquire queued before it, and an acquire past the queue's bound is
 *     refused at once, TRANSIENT LocalQueueFull, without a request
 *     (back-pressure), counted in the store's stats; a session's
 *     heartbeat is queued as urgently as a renewal.
 * Real loop and clock; the loop waits on sockets and timers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "lib/base/clock.h"
#include "core/store/dynamodb/store_dynamodb.h"
#include "core/store/store_session.h"
#include "tests/support/ddb_keys.h"
#include "tests/support/ddb_standin.h"

static struct event_base *base;
static struct clock *clk;

struct done {
	bool done;
	int order; /* 1, 2, ...: when it completed among the others */
	int64_t at_ms;
	struct store_result res;
};
static int completed;

static void on_done(void *arg, const struct store_result *res)
{
	struct done *d = arg;
	d->done = true;
	d->order = ++completed;
	d->at_ms = clock_now_ms(clk);
	d->res = *res;
}

static void run_until(const bool *flag)
{
	int64_t until = clock_now_ms(clk) + 10000;
	while (!*flag && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
}

static void on_flag(void *arg)
{
	*(bool *)arg = true;
}

/* Runs the loop for ms. */
static void run_for(int64_t ms)
{
	bool flag = false;
	struct timer t;
	timer_init(&t, clk, on_flag, &flag);
	timer_arm(&t, ms);
	run_until(&flag);
}

struct env {
	struct standin *sd;
	struct store *s;
};

static struct store *open_store(const char *url, unsigned max_in_flight)
{
	struct store_dynamodb_config cfg = ddb_test_config(url);
	cfg.ttl_attribute = "expiresAt";
	cfg.max_in_flight = max_in_flight;
	char err[STORE_DDB_ERR_MAX];
	struct store *s = store_dynamodb_new(base, clk, &cfg, err);
	assert_non_null(s);
	struct done d = {0};
	assert_true(store_dynamodb_open(s, on_done, &d));
	run_until(&d.done);
	assert_int_equal(d.res.status, STORE_OK);
	return s;
}

static struct env *env_new(struct standin_options o, unsigned max_in_flight)
{
	struct env *e = calloc(1, sizeof *e);
	char url[64];
	e->sd = standin_new(base, 0, &o, url, sizeof url);
	assert_non_null(e->sd);
	e->s = open_store(url, max_in_flight);
	standin_reset(e->sd);
	completed = 0;
	return e;
}

static void env_free(struct env *e)
{
	store_free(e->s);
	standin_free(e->sd);
	free(e);
}

static struct store_result do_req(struct store *s, struct store_req r)
{
	struct done d = {0};
	struct store_call *c = store_submit(s, &r, on_done, &d);
	assert_non_null(c);
	run_until(&d.done);
	assert_true(d.done);
	return d.res;
}

/* An acquire by owner: its rvn is "a-<owner>", one per owner as each
 * acquire writes a new one (an item refuses an acquire whose rvn is the
 * one of the acquire that last wrote it: ACQUIRE in store.h). */
static struct store_req acquire(const char *name, const char *owner)
{
	static char rvn[8][40];
	static unsigned next;
	char *r = rvn[next++ % 8];
	snprintf(r, sizeof(rvn[0]), "a-%s", owner);
	return (struct store_req){
		.op = STORE_ACQUIRE, .name = name, .owner = owner, .rvn = r, .lease_ms = 30000};
}

static struct store_req renew(const char *name, const char *owner, const char *rvn,
			      int64_t lease_ms)
{
	return (struct store_req){
		.op = STORE_RENEW, .name = name, .owner = owner, .rvn = rvn, .lease_ms = lease_ms};
}

/* The embedded store's semantics, through DynamoDB's JSON and HTTP. */
static void test_semantics(void **state)
{
	struct env *e = env_new(standin_latency(0), 0);
	struct store_result r = do_req(e->s, acquire("a", "o1"));
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.owner, "o1");
	assert_int_equal(r.item.fence, 1);
	assert_int_equal(r.item.lease_ms, 30000);
	r = do_req(e->s, acquire("a", "o2"));
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "o1");
	r = do_req(e->s, renew("a", "o2", "r2", 30000));
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "o1");
	r = do_req(e->s, renew("a", "o1", "r2", 30000));
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.rvn, "r2");
	r = do_req(e->s,
		   (struct store_req){.op = STORE_CHECK, .name = "a", .owner = "o1", .token = 1});
	assert_int_equal(r.status, STORE_OK);
	r = do_req(e->s,
		   (struct store_req){.op = STORE_CHECK, .name = "a", .owner = "o1", .token = 2});
	assert_int_equal(r.status, STORE_REFUSED);
	r = do_req(e->s, (struct store_req){.op = STORE_RELEASE, .name = "a", .owner = "o1"});
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	r = do_req(e->s, (struct store_req){.op = STORE_READ, .name = "a"});
	assert_int_equal(r.status, STORE_OK);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 1);
	r = do_req(e->s, acquire("a", "o2")); /* free again: the fence rises */
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
	r = do_req(e->s, (struct store_req){.op = STORE_READ, .name = "nothing"});
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
	struct standin_stats st;
	standin_stats(e->sd, &st);
	assert_int_equal(st.requests, 10);
	assert_int_equal(st.by_op[DDB_UPDATE_ITEM], 6);
	assert_int_equal(st.by_op[DDB_GET_ITEM], 2);
	assert_int_equal(st.by_op[DDB_TRANSACT_WRITE_ITEMS], 2);
	assert_int_equal(st.refused, 3);
	assert_int_equal(st.renew_refused, 1);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.connections, 1); /* one request at a time: one keep-alive */
	env_free(e);
}

/* Throttling answers are retried by the store and counted on both sides;
 * nothing is applied by a throttled request. */
static void test_throttling(void **state)
{
	struct standin_options o = standin_latency(0);
	o.throttle_p = 1;
	struct env *e = env_new(o, 0);
	struct store_result r = do_req(e->s, acquire("t", "o1"));
	assert_int_equal(r.status, STORE_TRANSIENT);
	struct standin_stats st;
	standin_stats(e->sd, &st);
	assert_int_equal(st.throttled, 3); /* the standard mode's 3 attempts */
	struct store_dynamodb_stats ds;
	store_dynamodb_stats(e->s, &ds);
	assert_int_equal(ds.throttled, 3);
	o.throttle_p = 0;
	standin_set_options(e->sd, &o);
	r = do_req(e->s, acquire("t", "o1"));
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 1); /* the throttled ones wrote nothing */
	env_free(e);
}

/* Every answer waits at least the latency's floor; requests in flight at
 * once are counted, each on its own connection. */
static void test_latency_and_concurrency(void **state)
{
	struct standin_options o = {.min_ms = 50, .max_ms = 60};
	struct env *e = env_new(o, 0);
	struct done d[4] = {0};
	char name[4][16];
	int64_t t0 = clock_now_ms(clk);
	for (int i = 0; i < 4; i++) {
		snprintf(name[i], sizeof name[i], "c%d", i);
		struct store_req q = acquire(name[i], "o1");
		assert_non_null(store_submit(e->s, &q, on_done, &d[i]));
	}
	run_until(&d[3].done);
	for (int i = 0; i < 4; i++) {
		run_until(&d[i].done);
		assert_int_equal(d[i].res.status, STORE_OK);
		assert_true(d[i].at_ms - t0 >= 50);
	}
	struct standin_stats st;
	standin_stats(e->sd, &st);
	assert_int_equal(st.in_flight_max, 4);
	assert_true(st.connections >= 4);
	env_free(e);
}

/* A renewal is late by how much it arrives after a third of its lease
 * past the write before it; on schedule it counts 0. */
static void test_lateness(void **state)
{
	struct env *e = env_new(standin_latency(0), 0);
	standin_record(e->sd, true);
	assert_int_equal(do_req(e->s, acquire("l", "o1")).status, STORE_OK);
	/* a 300 ms lease renewed at once: early, 0 */
	assert_int_equal(do_req(e->s, renew("l", "o1", "r2", 300)).status, STORE_OK);
	/* then 250 ms later: 150 ms past its third (100 ms) */
	run_for(250);
	assert_int_equal(do_req(e->s, renew("l", "o1", "r3", 300)).status, STORE_OK);
	size_t n;
	int64_t *late = standin_lateness(e->sd, &n);
	assert_int_equal(n, 2);
	assert_int_equal(late[0], 0);
	assert_true(late[1] >= 150000);
	free(late);
	env_free(e);
}

/* Saturated (one request in flight, one normal waiting at most): a
 * renewal submitted after a queued acquire is answered before it; a third
 * acquire is refused at once without reaching DynamoDB. */
static void test_saturated_pool(void **state)
{
	struct standin_options o = {.min_ms = 30, .max_ms = 30};
	struct env *e = env_new(o, 1);
	assert_int_equal(do_req(e->s, acquire("held", "o1")).status, STORE_OK);
	completed = 0;
	standin_reset(e->sd);
	struct done a1 = {0}, a2 = {0}, a3 = {0}, rn = {0};
	struct store_req q1 = acquire("p1", "o1"), q2 = acquire("p2", "o1"),
			 q3 = acquire("p3", "o1"), qr = renew("held", "o1", "r2", 30000);
	assert_non_null(store_submit(e->s, &q1, on_done, &a1)); /* in flight */
	assert_non_null(store_submit(e->s, &q2, on_done, &a2)); /* waits */
	assert_non_null(store_submit(e->s, &qr, on_done, &rn)); /* waits, urgent */
	assert_non_null(store_submit(e->s, &q3, on_done, &a3)); /* refused */
	struct store_dynamodb_stats ds;
	store_dynamodb_stats(e->s, &ds);
	assert_int_equal(ds.pool.active, 1);
	assert_int_equal(ds.pool.queued, 2);
	assert_int_equal(ds.pool.queued_urgent, 1);
	assert_int_equal(ds.shed, 1);
	run_until(&a2.done);
	assert_true(a1.done && rn.done && a3.done);
	assert_int_equal(a3.order, 1); /* refused at once, from the loop */
	assert_int_equal(a3.res.status, STORE_TRANSIENT);
	assert_string_equal(a3.res.error_type, "LocalQueueFull");
	assert_non_null(strstr(a3.res.message, "try again"));
	assert_int_equal(a1.order, 2);
	assert_int_equal(rn.order, 3); /* ahead of a2, submitted before it */
	assert_int_equal(a2.order, 4);
	assert_int_equal(rn.res.status, STORE_OK);
	assert_int_equal(a2.res.status, STORE_OK);
	struct standin_stats st;
	standin_stats(e->sd, &st);
	assert_int_equal(st.requests, 3); /* the refused acquire never left */
	assert_int_equal(st.in_flight_max, 1);
	store_dynamodb_stats(e->s, &ds);
	assert_int_equal(ds.pool.max_active, 1);
	assert_true(ds.pool.wait_max_us >= 30000); /* a2 and the renewal waited */
	env_free(e);
}

/* A session's heartbeat (store_session.h BEAT) is sent as a renewal is:
 * with the pool saturated it waits in the urgent queue, where an acquire
 * would be refused at once (test_saturated_pool). */
static void on_beat(void *arg, const struct store_session_result *res)
{
	struct done *d = arg;
	d->done = true;
	d->order = ++completed;
	d->res.status = res->status;
	d->res.error_type = res->error_type;
}

static void test_saturated_pool_beat(void **state)
{
	struct standin_options o = {.min_ms = 30, .max_ms = 30};
	struct env *e = env_new(o, 1);
	struct done a1 = {0}, a2 = {0}, b = {0};
	struct store_req q1 = acquire("p1", "o1"), q2 = acquire("p2", "o1");
	struct store_session_req beat = {.op = STORE_SESSION_BEAT,
					 .replica = "rep",
					 .incarnation = "0123456789abcdef0123456789abcdef",
					 .rvn = "b1",
					 .max_lease_ms = 30000};
	assert_non_null(store_submit(e->s, &q1, on_done, &a1)); /* in flight */
	assert_non_null(store_submit(e->s, &q2, on_done, &a2)); /* the normal queue full */
	assert_non_null(store_session_submit(e->s, &beat, on_beat, &b));
	struct store_dynamodb_stats ds;
	store_dynamodb_stats(e->s, &ds);
	assert_int_equal(ds.shed, 0);
	assert_int_equal(ds.pool.queued, 2);
	assert_int_equal(ds.pool.queued_urgent, 1);
	run_until(&a2.done);
	run_until(&b.done);
	assert_true(b.done);
	assert_int_equal(b.order, 2); /* ahead of a2, submitted before it */
	assert_true(b.res.error_type == NULL || strcmp(b.res.error_type, "LocalQueueFull") != 0);
	env_free(e);
}

int main(void)
{
	base = event_base_new();
	clk = clock_real_new(base);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_semantics),
		cmocka_unit_test(test_throttling),
		cmocka_unit_test(test_latency_and_concurrency),
		cmocka_unit_test(test_lateness),
		cmocka_unit_test(test_saturated_pool),
		cmocka_unit_test(test_saturated_pool_beat),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	clock_free(clk);
	event_base_free(base);
	return rc;
}
