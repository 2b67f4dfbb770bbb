/*
 * test_store_memory: what the embedded store adds to the store contract
 * (which test_store_contract runs on it): completions come in submission
 * order, from the loop, a cancelled one never; a call made by a callback
 * completes after those already queued.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completions_in_order_cancel_and_later_calls),
		cmocka_unit_test(test_latency_keeps_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
