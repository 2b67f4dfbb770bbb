/*
 * The clock: due order, ties in arm order, re-arming and cancelling from
 * callbacks, the fake clock's advance, and the real clock on libevent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <event2/event.h>
#include <stdlib.h>

#include "lib/base/clock.h"

#define N 2000

struct rec {
	int order[N];
	int64_t at[N];
	int n;
	struct clock *c;
};

struct item {
	struct timer t;
	struct rec *r;
	int id;
};

static void fired(void *arg)
{
	struct item *it = arg;
	it->r->order[it->r->n] = it->id;
	it->r->at[it->r->n++] = clock_now_ms(it->r->c);
}

static void runs_due_timers_in_order_ties_in_arm_order(void **state)
{
	struct rec r = {0};
	struct clock *c = clock_fake_new(0);
	r.c = c;
	static const int64_t delay[] = {30, 10, 20, 10, 0};
	struct item it[5];
	for (int i = 0; i < 5; i++) {
		it[i] = (struct item){.r = &r, .id = i};
		timer_init(&it[i].t, c, fired, &it[i]);
		timer_arm(&it[i].t, delay[i]);
	}
	assert_int_equal(clock_armed(c), 5);
	clock_fake_advance(c, 15);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.order[0], 4);
	assert_int_equal(r.order[1], 1); /* armed before 3, same due time */
	assert_int_equal(r.order[2], 3);
	assert_int_equal(r.at[1], 10); /* the callback sees its own due time */
	assert_int_equal(clock_now_ms(c), 15);
	clock_fake_advance(c, 100);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.order[3], 2);
	assert_int_equal(r.order[4], 0);
	assert_int_equal(clock_armed(c), 0);
	clock_free(c);
}

static void cancel_and_rearm(void **state)
{
	struct rec r = {0};
	struct clock *c = clock_fake_new(0);
	r.c = c;
	struct item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2};
	timer_init(&a.t, c, fired, &a);
	timer_init(&b.t, c, fired, &b);
	timer_arm(&a.t, 10);
	timer_arm(&b.t, 20);
	timer_cancel(&a.t);
	assert_false(timer_armed(&a.t));
	timer_arm(&b.t, 5); /* re-arming moves it */
	clock_fake_advance(c, 30);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.order[0], 2);
	assert_int_equal(r.at[0], 5);
	clock_free(c);
}

/* timer_arm_at: at an absolute time; a time already past is due now. */
static void arm_at_absolute_and_past(void **state)
{
	struct rec r = {0};
	struct clock *c = clock_fake_new(0);
	r.c = c;
	struct item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2};
	timer_init(&a.t, c, fired, &a);
	timer_init(&b.t, c, fired, &b);
	clock_fake_advance(c, 100);
	timer_arm_at(&a.t, 130);
	timer_arm_at(&b.t, 40); /* past */
	assert_true(timer_armed(&b.t));
	clock_fake_advance(c, 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.order[0], 2);
	assert_int_equal(r.at[0], 100);
	timer_arm_at(&a.t, 120); /* re-arming moves it */
	clock_fake_advance(c, 19);
	assert_int_equal(r.n, 1);
	clock_fake_advance(c, 1);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.order[1], 1);
	assert_int_equal(r.at[1], 120);
	clock_free(c);
}

struct chain {
	struct timer t;
	int left;
	int runs;
};

static void rearm_zero(void *arg)
{
	struct chain *ch = arg;
	ch->runs++;
	if (--ch->left > 0)
		timer_arm(&ch->t, 0);
}

static void advance_zero_runs_zero_delay_chains(void **state)
{
	struct clock *c = clock_fake_new(0);
	struct chain ch = {.left = 5};
	timer_init(&ch.t, c, rearm_zero, &ch);
	timer_arm(&ch.t, 0);
	clock_fake_advance(c, 0);
	assert_int_equal(ch.runs, 5);
	assert_int_equal(clock_now_ms(c), 0);
	clock_free(c);
}

static void wall_clock_moves_with_the_fake_clock(void **state)
{
	struct clock *c = clock_fake_new(1700000000000LL);
	clock_fake_advance(c, 1500);
	assert_int_equal(clock_wall_ms(c), 1700000001500LL);
	assert_int_equal(clock_now_us(c), 1500000);
	clock_free(c);
}

/* The heap against a plain model: random arms and cancels. */
static void heap_agrees_with_a_model_under_random_use(void **state)
{
	struct rec r = {0};
	struct clock *c = clock_fake_new(0);
	static struct item it[N];
	static int64_t due[N];
	r.c = c;
	srand(7);
	for (int i = 0; i < N; i++) {
		it[i] = (struct item){.r = &r, .id = i};
		timer_init(&it[i].t, c, fired, &it[i]);
		due[i] = -1;
	}
	for (int step = 0; step < 5 * N; step++) {
		int i = rand() % N;
		if (rand() % 4 == 0) {
			timer_cancel(&it[i].t);
			due[i] = -1;
		} else {
			int64_t d = rand() % 1000;
			timer_arm(&it[i].t, d);
			due[i] = d;
		}
	}
	size_t armed = 0;
	for (int i = 0; i < N; i++)
		armed += due[i] >= 0;
	assert_int_equal(clock_armed(c), armed);
	clock_fake_advance(c, 1000);
	assert_int_equal((size_t)r.n, armed);
	for (int k = 1; k < r.n; k++)
		assert_true(r.at[k - 1] <= r.at[k]);
	for (int k = 0; k < r.n; k++)
		assert_int_equal(r.at[k], due[r.order[k]]);
	clock_free(c);
}

/* clock_next_due: the earliest armed timer's due time, none when idle. */
static void count_call(void *arg)
{
	(*(int *)arg)++;
}

static void next_due_is_the_earliest_armed(void **state)
{
	struct clock *c = clock_fake_new(0);
	struct timer a, b;
	int64_t due = -1;
	int n = 0;
	timer_init(&a, c, count_call, &n);
	timer_init(&b, c, count_call, &n);
	assert_false(clock_next_due(c, &due));
	timer_arm(&a, 300);
	timer_arm(&b, 100);
	assert_true(clock_next_due(c, &due));
	assert_int_equal(due, 100);
	clock_fake_advance(c, 150);
	assert_int_equal(n, 1);
	assert_true(clock_next_due(c, &due));
	assert_int_equal(due, 300);
	timer_cancel(&a);
	assert_false(clock_next_due(c, &due));
	clock_free(c);
}

static void stop_loop(void *arg)
{
	event_base_loopbreak(arg);
}

static void real_clock_fires_on_the_event_loop(void **state)
{
	struct event_base *base = event_base_new();
	struct clock *c = clock_real_new(base);
	struct rec r = {0};
	r.c = c;
	struct item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2};
	struct timer stop;
	timer_init(&a.t, c, fired, &a);
	timer_init(&b.t, c, fired, &b);
	timer_init(&stop, c, stop_loop, base);
	int64_t t0 = clock_now_ms(c);
	timer_arm(&b.t, 20);
	timer_arm(&a.t, 5);
	timer_arm(&stop, 30);
	event_base_dispatch(base);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.order[0], 1);
	assert_int_equal(r.order[1], 2);
	assert_true(r.at[1] - t0 >= 20); /* never early */
	assert_true(clock_wall_ms(c) > 1600000000000LL);
	clock_free(c);
	event_base_free(base);
}

/* The manual clock (--test-mode): a timer due now runs from the loop,
 * one due later never does until the clock is moved; clock_fake_step runs
 * one timer at a time, at its due time, and only up to its limit. */
static void manual_clock_runs_due_now_from_the_loop_only(void **state)
{
	struct event_base *base = event_base_new();
	struct clock *c = clock_manual_new(base, 1700000000000LL);
	struct rec r = {0};
	r.c = c;
	struct item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, d = {.r = &r, .id = 3};
	timer_init(&a.t, c, fired, &a);
	timer_init(&b.t, c, fired, &b);
	timer_init(&d.t, c, fired, &d);
	timer_arm(&a.t, 0);
	timer_arm(&b.t, 50);
	timer_arm(&d.t, 50);
	assert_int_equal(r.n, 0); /* never from inside timer_arm */
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(r.n, 1); /* the one due now */
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(r.n, 1); /* the others wait for the clock to move */
	assert_int_equal(clock_now_ms(c), 0);
	assert_false(clock_fake_step(c, 49)); /* none due by 49: no move */
	assert_int_equal(clock_now_ms(c), 0);
	assert_true(clock_fake_step(c, 60)); /* one timer: b, at its due time */
	assert_int_equal(r.n, 2);
	assert_int_equal(r.order[1], 2);
	assert_int_equal(r.at[1], 50);
	assert_int_equal(clock_wall_ms(c), 1700000000050LL);
	assert_true(clock_fake_step(c, 60));
	assert_int_equal(r.order[2], 3);
	assert_false(clock_fake_step(c, 60));
	assert_int_equal(clock_now_ms(c), 50);
	clock_fake_advance(c, 10);
	assert_int_equal(clock_now_ms(c), 60);
	timer_arm(&a.t, 0); /* after a move, due now again runs from the loop */
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.at[3], 60);
	clock_free(c);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_due_timers_in_order_ties_in_arm_order),
		cmocka_unit_test(cancel_and_rearm),
		cmocka_unit_test(arm_at_absolute_and_past),
		cmocka_unit_test(advance_zero_runs_zero_delay_chains),
		cmocka_unit_test(wall_clock_moves_with_the_fake_clock),
		cmocka_unit_test(heap_agrees_with_a_model_under_random_use),
		cmocka_unit_test(real_clock_fires_on_the_event_loop),
		cmocka_unit_test(next_due_is_the_earliest_armed),
		cmocka_unit_test(manual_clock_runs_due_now_from_the_loop_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
