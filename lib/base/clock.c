/*
 * clock: a binary heap of embedded timers shared by the real and the fake
 * clock. The real clock keeps one libevent timer set to the earliest due
 * timer; the fake clock runs timers only from clock_fake_advance() (and
 * clock_fake_step()); the manual clock is a fake clock that also runs the
 * timers due now from its loop, through the real clock's `now` event.
 */
#include "lib/base/clock.h"

#include <event2/event.h>
#include <stdlib.h>
#include <time.h>

struct clock {
	bool fake;
	bool manual; /* fake, with now on a loop (clock_manual_new) */
	int64_t fake_now_us;
	int64_t fake_wall_start_ms;
	/* Real: wake fires no later than the earliest due time, and now
	 * runs timers due at once in this turn of the loop. wake is moved
	 * only when a timer due earlier than it is armed: a cancel or a
	 * later timer leaves it set, and it may fire with nothing due (then
	 * it is set again) — once per lease, against twice per request. */
	struct event *wake, *now;
	struct timer *root; /* the earliest armed timer */
	size_t n;
	uint64_t seq;
	bool running;	     /* inside a run of due timers: do not re-arm wake */
	bool now_active;     /* now is activated */
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

int64_t clock_now_ms(struct clock *c)
{
	if (c->fake)
		return c->fake_now_us / 1000;
	/* one division: the same as the microseconds / 1000 */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_wall_ms(struct clock *c)
{
	return c->fake ? c->fake_wall_start_ms + c->fake_now_us / 1000
		       : sys_us(CLOCK_REALTIME) / 1000;
}

size_t clock_armed(const struct clock *c)
{
	return c->n;
}

bool clock_next_due(const struct clock *c, int64_t *due_ms)
{
	if (c->n == 0)
		return false;
	*due_ms = c->root->due_ms;
	return true;
}

/* Heap order: earlier due first, then earlier arm. */
static bool before(const struct timer *a, const struct timer *b)
{
	return a->due_ms < b->due_ms || (a->due_ms == b->due_ms && a->seq < b->seq);
}

/* Pairing heap: a tree whose root is the earliest timer; a node's children
 * hang from child, linked by sibling; prev is the parent for a first child,
 * else the previous sibling. */
static struct timer *meld(struct timer *a, struct timer *b)
{
	if (before(b, a)) {
		struct timer *x = a;
		a = b;
		b = x;
	}
	b->prev = a;
	b->sibling = a->child;
	if (a->child != NULL)
		a->child->prev = b;
	a->child = b;
	return a;
}

/* Melds a list of siblings into one tree: pairs left to right, then the
 * pairs right to left. */
static struct timer *meld_pairs(struct timer *first)
{
	struct timer *pairs = NULL;
	while (first != NULL) {
		struct timer *a = first, *b = first->sibling;
		first = b != NULL ? b->sibling : NULL;
		a->prev = a->sibling = NULL;
		if (b != NULL) {
			b->prev = b->sibling = NULL;
			a = meld(a, b);
		}
		a->sibling = pairs;
		pairs = a;
	}
	struct timer *root = pairs;
	if (root == NULL)
		return NULL;
	pairs = root->sibling;
	root->sibling = NULL;
	while (pairs != NULL) {
		struct timer *next = pairs->sibling;
		pairs->sibling = NULL;
		root = meld(root, pairs);
		pairs = next;
	}
	root->prev = NULL;
	return root;
}

static void heap_remove(struct clock *c, struct timer *t)
{
	struct timer *sub = meld_pairs(t->child);
	if (t == c->root) {
		c->root = sub;
	} else {
		if (t->prev->child == t)
			t->prev->child = t->sibling;
		else
			t->prev->sibling = t->sibling;
		if (t->sibling != NULL)
			t->sibling->prev = t->prev;
		if (sub != NULL)
			c->root = meld(c->root, sub);
	}
	t->child = t->sibling = t->prev = NULL;
	t->armed = false;
	c->n--;
}

/* Real clock: have the libevent timer fire by the earliest due timer.
 * now_us: the time if the caller has just read it, else -1. */
static void rearm_wake(struct clock *c, int64_t now_us)
{
	/* now active: its run, in this turn of the loop, sets wake after it
	 * (a store completion is due at once while most timers change) */
	if (c->running || c->now_active)
		return;
	if (c->fake) {
		/* manual: what is due at the fake now runs in this turn */
		if (c->manual && c->n > 0 && c->root->due_ms * 1000 <= c->fake_now_us) {
			c->now_active = true;
			event_active(c->now, EV_TIMEOUT, 0);
		}
		return;
	}
	if (c->n == 0) {
		if (c->wake_due_ms >= 0)
			event_del(c->wake);
		c->wake_due_ms = -1;
		return;
	}
	int64_t due_ms = c->root->due_ms;
	if (c->wake_due_ms >= 0 && c->wake_due_ms <= due_ms)
		return; /* wakes in time (maybe early) */
	int64_t delay = due_ms * 1000 - (now_us >= 0 ? now_us : clock_now_us(c));
	if (delay <= 0) {
		/* Due now (a store completion, a deferred answer): run it in
		 * this turn of the loop, not after the next poll for I/O. */
		if (!c->now_active) {
			c->now_active = true;
			event_active(c->now, EV_TIMEOUT, 0);
		}
		return;
	}
	c->wake_due_ms = due_ms;
	struct timeval tv = {.tv_sec = delay / 1000000, .tv_usec = delay % 1000000};
	event_add(c->wake, &tv);
}

/* Runs every timer due at or before now_ms, in order. */
static void run_due(struct clock *c, int64_t now_ms)
{
	while (c->n > 0 && c->root->due_ms <= now_ms) {
		struct timer *t = c->root;
		heap_remove(c, t);
		t->cb(t->arg);
	}
}

static void run_now(struct clock *c)
{
	c->running = true;
	run_due(c, clock_now_ms(c));
	c->running = false;
	rearm_wake(c, -1);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct clock *c = arg;
	c->wake_due_ms = -1; /* fired: no longer pending */
	run_now(c);
}

static void on_now(evutil_socket_t fd, short what, void *arg)
{
	struct clock *c = arg;
	c->now_active = false;
	run_now(c);
}

static struct clock *clock_alloc(void)
{
	struct clock *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->wake_due_ms = -1;
	return c;
}

struct clock *clock_real_new(struct event_base *base)
{
	struct clock *c = clock_alloc();
	if (c == NULL)
		return NULL;
	c->wake = evtimer_new(base, on_wake, c);
	/* only ever activated; persistent, so that running it costs no
	 * event_del */
	c->now = event_new(base, -1, EV_PERSIST, on_now, c);
	if (c->wake == NULL || c->now == NULL) {
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

struct clock *clock_manual_new(struct event_base *base, int64_t wall_start_ms)
{
	struct clock *c = clock_fake_new(wall_start_ms);
	if (c == NULL)
		return NULL;
	c->manual = true;
	c->now = event_new(base, -1, EV_PERSIST, on_now, c);
	if (c->now == NULL) {
		clock_free(c);
		return NULL;
	}
	return c;
}

void clock_fake_advance(struct clock *c, int64_t ms)
{
	int64_t end = c->fake_now_us / 1000 + (ms > 0 ? ms : 0);
	bool was = c->running;
	c->running = true; /* a manual clock's now event is not needed here */
	/* Step to each due time so callbacks see the clock at their due time. */
	while (c->n > 0 && c->root->due_ms <= end) {
		if (c->root->due_ms * 1000 > c->fake_now_us)
			c->fake_now_us = c->root->due_ms * 1000;
		run_due(c, c->fake_now_us / 1000);
	}
	if (end * 1000 > c->fake_now_us)
		c->fake_now_us = end * 1000;
	c->running = was;
	rearm_wake(c, -1);
}

bool clock_fake_step(struct clock *c, int64_t until_ms)
{
	if (c->n == 0 || c->root->due_ms > until_ms)
		return false;
	struct timer *t = c->root;
	if (t->due_ms * 1000 > c->fake_now_us)
		c->fake_now_us = t->due_ms * 1000;
	bool was = c->running;
	c->running = true;
	heap_remove(c, t);
	t->cb(t->arg);
	c->running = was;
	rearm_wake(c, -1);
	return true;
}

void clock_fake_jump(struct clock *c, int64_t ms)
{
	if (ms > 0)
		c->fake_now_us += ms * 1000;
}

void clock_free(struct clock *c)
{
	if (c == NULL)
		return;
	if (c->wake != NULL)
		event_free(c->wake);
	if (c->now != NULL)
		event_free(c->now);
	free(c);
}

static void arm_at(struct timer *t, int64_t due_ms, int64_t now_us)
{
	struct clock *c = t->clock;
	if (t->armed)
		heap_remove(c, t);
	t->due_ms = due_ms;
	t->seq = ++c->seq;
	t->armed = true;
	c->root = c->root != NULL ? meld(c->root, t) : t;
	c->n++;
	rearm_wake(c, now_us);
}

void timer_arm(struct timer *t, int64_t delay_ms)
{
	/* one read of the clock: most timers armed so are due at once (a
	 * store completion) and rearm_wake compares with the same now */
	int64_t now_us = clock_now_us(t->clock);
	arm_at(t, now_us / 1000 + (delay_ms > 0 ? delay_ms : 0), now_us);
}

void timer_arm_at(struct timer *t, int64_t due_ms)
{
	arm_at(t, due_ms, -1);
}

void timer_cancel(struct timer *t)
{
	if (!t->armed)
		return;
	heap_remove(t->clock, t);
	rearm_wake(t->clock, -1);
}
