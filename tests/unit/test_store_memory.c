/*
 * test_store_memory: what the embedded store adds to the store contract
 * (which test_store_contract runs on it): completions come in submission
 * order, from the loop, a cancelled one never; a call made by a callback
 * completes after those already queued; released items are forgotten
 * after the retention, and new names refused past the most items.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/clock.h"
#include "core/store_memory.h"

struct order {
	struct store *s;
	char seen[16];
	size_t n;
	bool submit_more; /* the first callback submits 'd' */
};

static struct order *order;

static void done(void *arg, const struct store_result *res)
{
	const char *tag = arg;
	assert_int_equal(res->status, STORE_OK);
	order->seen[order->n++] = tag[0];
	if (order->submit_more) {
		order->submit_more = false;
		struct store_req r = {.op = STORE_READ, .name = "d"};
		assert_non_null(store_submit(order->s, &r, done, "d"));
		assert_int_equal(order->n, 1); /* never inside store_submit */
	}
}

static void submit(struct store *s, const char *tag, struct store_call **call)
{
	struct store_req r = {.op = STORE_READ, .name = tag};
	*call = store_submit(s, &r, done, (void *)tag);
	assert_non_null(*call);
}

static void test_completions_in_order_cancel_and_later_calls(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct order o = {.s = s, .submit_more = true};
	struct store_call *a, *b, *x;
	order = &o;
	submit(s, "a", &a);
	submit(s, "b", &b);
	submit(s, "c", &x);
	store_cancel(s, b);
	assert_int_equal(o.n, 0); /* nothing before the loop runs */
	assert_int_equal(s->in_flight, 2);
	clock_fake_advance(c, 0);
	assert_string_equal(o.seen, "acd");
	assert_int_equal(s->in_flight, 0);
	assert_int_equal(s->requests[STORE_READ], 4); /* the cancelled one was sent */

	/* calls still queued when the store is freed are dropped */
	submit(s, "e", &x);
	store_free(s);
	clock_fake_advance(c, 0);
	assert_string_equal(o.seen, "acd");
	assert_int_equal(clock_armed(c), 0);
	clock_free(c);
}

/* With latency, calls complete on their own timers, still in order. */
static void test_latency_keeps_order(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct order o = {.s = s};
	struct store_call *x;
	order = &o;
	store_memory_set_latency(s, 5);
	submit(s, "a", &x);
	submit(s, "b", &x);
	clock_fake_advance(c, 4);
	assert_int_equal(o.n, 0);
	clock_fake_advance(c, 1);
	assert_string_equal(o.seen, "ab");
	store_free(s);
	clock_free(c);
}

/* One request, run to its answer on the fake clock. */
static struct store_result last;
static void keep(void *arg, const struct store_result *res)
{
	last = *res;
}

static enum store_status run(struct clock *c, struct store *s, enum store_op op, const char *name,
			     const char *owner)
{
	struct store_req r = {.op = op, .name = name, .owner = owner, .rvn = "r", .lease_ms = 1000};
	last.status = -1;
	assert_non_null(store_submit(s, &r, keep, NULL));
	clock_fake_advance(c, 0);
	return last.status;
}

#define HOUR 3600000LL

/* Released items are forgotten after the retention (as DynamoDB's TTL
 * deletes them), counted from their release, never before it and at most
 * a quarter of it later (the sweep ticks every eighth), with or without
 * requests: held items never, a name acquired again is kept; the memory
 * goes back to nothing; a forgotten lock starts its token at 1 again. */
static void test_released_items_forgotten_after_retention(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct store_memory_stats st;
	store_memory_limit(s, HOUR, 0);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "held", "o2"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "again", "o3"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "again", "o3"), STORE_OK);
	clock_fake_advance(c, HOUR / 2);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "again", "o4"), STORE_OK); /* kept */
	assert_int_equal(run(c, s, STORE_RELEASE, "again", "o4"), STORE_OK);
	clock_fake_advance(c, HOUR / 2 - 1);
	assert_int_equal(store_memory_items(s), 3); /* a: released an hour less 1 ms ago */
	clock_fake_advance(c, HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 2); /* a forgotten; "again" released 45 minutes ago */
	assert_int_equal(st.forgotten, 1);
	clock_fake_advance(c, 10 * HOUR);
	assert_int_equal(store_memory_items(s), 1); /* the held one stays */
	assert_int_equal(run(c, s, STORE_READ, "held", NULL), STORE_OK);
	assert_true(last.item.exists);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o5"), STORE_OK);
	assert_int_equal(last.item.fence, 1); /* a new item: its token starts again */
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o5"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "held", "o2"), STORE_OK);
	clock_fake_advance(c, HOUR + HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 0);
	assert_int_equal(st.bytes, 0);	     /* every byte counted is given back */
	assert_int_equal(clock_armed(c), 0); /* and the sweep stops with nothing to do */
	store_free(s);
	clock_free(c);
}

/* Without a retention nothing is forgotten (the default, for tests). */
static void test_no_retention_keeps_items(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o1"), STORE_OK);
	clock_fake_advance(c, 1000 * HOUR);
	assert_int_equal(run(c, s, STORE_READ, "x", NULL), STORE_OK);
	assert_int_equal(store_memory_items(s), 1);
	store_free(s);
	clock_free(c);
}

/* At max_items a new name is refused with a clear error; names that have
 * an item go on; once one is forgotten a new name fits again. */
static void test_max_items_refuses_new_names(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	store_memory_limit(s, HOUR, 2);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "x", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "y", "o2"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "z", "o3"), STORE_FATAL);
	assert_string_equal(last.error_type, "LockLimitExceeded");
	assert_non_null(strstr(last.message, "most locks (2)"));
	assert_int_equal(store_memory_items(s), 2);
	assert_int_equal(run(c, s, STORE_RELEASE, "x", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "x", "o4"), STORE_OK); /* has an item */
	assert_int_equal(run(c, s, STORE_RELEASE, "x", "o4"), STORE_OK);
	clock_fake_advance(c, HOUR + HOUR / 4 + 1);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "z", "o3"), STORE_OK); /* x forgotten */
	assert_int_equal(store_memory_items(s), 2);
	store_free(s);
	clock_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completions_in_order_cancel_and_later_calls),
		cmocka_unit_test(test_latency_keeps_order),
		cmocka_unit_test(test_released_items_forgotten_after_retention),
		cmocka_unit_test(test_no_retention_keeps_items),
		cmocka_unit_test(test_max_items_refuses_new_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
