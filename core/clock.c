/*
 * clock: a binary heap of embedded timers shared by the real and the fake
 * clock. The real clock keeps one libevent timer set to the earliest due
 * timer; the fake clock runs timers only from clock_fake_advance().
 */
#include "core/clock.h"

#include <event2/event.h>
#include <stdlib.h>
#include <time.h>

struct clock {
	bool fake;
	int64_t fake_now_us;
	int64_t fake_wall_start_ms;
	struct event *wake; /* real: fires at the earliest due time */
	struct timer **heap;
	size_t n, cap;
	uint64_t seq;
	bool running; /* inside a run of due timers: do not re-arm wake */
	int64_t wake_due_ms; /* due time wake is set for, -1 when not set */
};

static int64_t sys_us(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t clock_now_us(struct clock *c)
{
	return c->fake ? c->fake_now_us : sys_us(CLOCK_MONOTONIC);
}

int64_t clock_now_ms(struct clock *c) { return clock_now_us(c) / 1000; }

int64_t clock_wall_ms(struct clock *c)
{
	return c->fake ? c->fake_wall_start_ms + c->fake_now_us / 1000
		       : sys_us(CLOCK_REALTIME) / 1000;
}

size_t clock_armed(const struct clock *c) { return c->n; }

/* Heap order: earlier due first, then earlier arm. */
static bool before(const struct timer *a, const struct timer *b)
{
	return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

static void place(struct clock *c, size_t i, struct timer *t)
{
	c->heap[i] = t;
	t->slot = (int32_t)i;
}

static void sift_up(struct clock *c, size_t i)
{
	struct timer *t = c->heap[i];
	while (i > 0 && before(t, c->heap[(i - 1) / 2])) {
		place(c, i, c->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(c, i, t);
}

static void sift_down(struct clock *c, size_t i)
{
	struct timer *t = c->heap[i];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		const struct timer *best = t;
		if (l < c->n && before(c->heap[l], best)) {
			m = l;
			best = c->heap[l];
		}
		if (l + 1 < c->n && before(c->heap[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		place(c, i, c->heap[m]);
		i = m;
	}
	place(c, i, t);
}

static void heap_remove(struct clock *c, struct timer *t)
{
	size_t i = (size_t)t->slot;
	struct timer *last = c->heap[--c->n];
	t->slot = -1;
	if (i == c->n)
		return;
	place(c, i, last);
	sift_up(c, i);
	sift_down(c, (size_t)last->slot);
}

/* Real clock: point the libevent timer at the earliest due timer. */
static void rearm_wake(struct clock *c)
{
	if (c->fake || c->running)
		return;
	if (c->n == 0) {
		if (c->wake_due_ms >= 0)
			event_del(c->wake);
		c->wake_due_ms = -1;
		return;
	}
	if (c->heap[0]->due_ms == c->wake_due_ms)
		return;
	c->wake_due_ms = c->heap[0]->due_ms;
	int64_t delay = c->heap[0]->due_ms * 1000 - clock_now_us(c);
	if (delay < 0)
		delay = 0;
	struct timeval tv = {.tv_sec = delay / 1000000, .tv_usec = delay % 1000000};
	event_add(c->wake, &tv);
}

/* Runs every timer due at or before now_ms, in order. */
static void run_due(struct clock *c, int64_t now_ms)
{
	while (c->n > 0 && c->heap[0]->due_ms <= now_ms) {
		struct timer *t = c->heap[0];
		heap_remove(c, t);
		t->cb(t->arg);
	}
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct clock *c = arg;
	c->wake_due_ms = -1;
	c->running = true;
	run_due(c, clock_now_ms(c));
	c->running = false;
	rearm_wake(c);
}

static struct clock *clock_alloc(void)
{
	struct clock *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->cap = 64;
	c->wake_due_ms = -1;
	c->heap = malloc(c->cap * sizeof(*c->heap));
	if (c->heap == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

struct clock *clock_real_new(struct event_base *base)
{
	struct clock *c = clock_alloc();
	if (c == NULL)
		return NULL;
	c->wake = evtimer_new(base, on_wake, c);
	if (c->wake == NULL) {
		clock_free(c);
		return NULL;
	}
	return c;
}

struct clock *clock_fake_new(int64_t wall_start_ms)
{
	struct clock *c = clock_alloc();
	if (c == NULL)
		return NULL;
	c->fake = true;
	c->fake_wall_start_ms = wall_start_ms;
	return c;
}

void clock_fake_advance(struct clock *c, int64_t ms)
{
	int64_t end = c->fake_now_us / 1000 + (ms > 0 ? ms : 0);
	/* Step to each due time so callbacks see the clock at their due time. */
	while (c->n > 0 && c->heap[0]->due_ms <= end) {
		if (c->heap[0]->due_ms * 1000 > c->fake_now_us)
			c->fake_now_us = c->heap[0]->due_ms * 1000;
		run_due(c, c->fake_now_us / 1000);
	}
	if (end * 1000 > c->fake_now_us)
		c->fake_now_us = end * 1000;
}

void clock_free(struct clock *c)
{
	if (c == NULL)
		return;
	if (c->wake != NULL)
		event_free(c->wake);
	free(c->heap);
	free(c);
}

void timer_init(struct timer *t, struct clock *c, timer_cb cb, void *arg)
{
	t->clock = c;
	t->cb = cb;
	t->arg = arg;
	t->due_ms = 0;
	t->seq = 0;
	t->slot = -1;
}

bool timer_arm(struct timer *t, int64_t delay_ms)
{
	struct clock *c = t->clock;
	if (t->slot >= 0)
		heap_remove(c, t);
	if (c->n == c->cap) {
		struct timer **h = realloc(c->heap, 2 * c->cap * sizeof(*h));
		if (h == NULL) {
			rearm_wake(c);
			return false;
		}
		c->heap = h;
		c->cap *= 2;
	}
	t->due_ms = clock_now_ms(c) + (delay_ms > 0 ? delay_ms : 0);
	t->seq = ++c->seq;
	c->heap[c->n++] = t;
	sift_up(c, c->n - 1);
	rearm_wake(c);
	return true;
}

void timer_cancel(struct timer *t)
{
	if (t->slot < 0)
		return;
	heap_remove(t->clock, t);
	rearm_wake(t->clock);
}
