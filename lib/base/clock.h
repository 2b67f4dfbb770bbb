/*
 * clock: monotonic and wall time, and one-shot timers, behind one interface.
 *
 * The core never reads the system clock: it asks a struct clock. Two
 * implementations share the timer heap below and differ only in where "now"
 * comes from and how the earliest due timer is woken:
 *   - clock_real_new(): CLOCK_MONOTONIC / CLOCK_REALTIME, one libevent timer
 *     (moved only to an earlier time) and one event for timers due at once;
 *   - clock_fake_new(): time moves only with clock_fake_advance(), which runs
 *     due timers in order of due time (ties: the order they were armed);
 *   - clock_manual_new(): a fake clock on an event loop (leasegate
 *     --test-mode): time moves only when told, as the fake clock's, and
 *     timers due at the current time (a store's completion, a deferred
 *     answer) run in the loop's turn, as the real clock's do.
 *
 * Timers are embedded in their owner (no allocation, so arming cannot fail);
 * an armed timer must be
 * cancelled before its memory is freed. Callbacks may arm and cancel any
 * timer, including their own.
 */
#ifndef LG_CLOCK_H
#define LG_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct clock;

typedef void (*timer_cb)(void *arg);

struct timer {
	struct clock *clock;
	timer_cb cb;
	void *arg;
	int64_t due_ms;			      /* monotonic ms, valid while armed */
	uint64_t seq;			      /* arm order, breaks ties */
	struct timer *child, *sibling, *prev; /* pairing heap links */
	bool armed;
};

/* A real clock driven by base. Returns NULL on out-of-memory. */
struct clock *clock_real_new(struct event_base *base);

/* A fake clock: monotonic time starts at 0, wall time at wall_start_ms. */
struct clock *clock_fake_new(int64_t wall_start_ms);

/* A fake clock driven by base: monotonic time starts at 0, wall time at
 * wall_start_ms, and both move only with clock_fake_advance() or
 * clock_fake_step(); a timer due at or before the current time runs from
 * the loop in this turn (never from inside timer_arm). NULL on
 * out-of-memory. */
struct clock *clock_manual_new(struct event_base *base, int64_t wall_start_ms);

/* Runs the earliest armed timer of a fake (or manual) clock if it is due
 * by until_ms, first moving the clock to its due time when that is later
 * than now: true. false when no timer is due by until_ms (the clock has
 * not moved). One timer a call, so that a driver can wait for what it
 * started (a store's request in flight) before the next one runs. */
bool clock_fake_step(struct clock *c, int64_t until_ms);

/* Moves a fake clock forward by ms (>= 0), running every timer that falls
 * due on the way at its own due time. advance(0) runs what is due now,
 * including zero-delay timers armed by those callbacks. */
void clock_fake_advance(struct clock *c, int64_t ms);

/* Moves a fake clock forward by ms without running anything, as a stalled
 * loop sees time: the next advance(0) runs every overdue timer at once. */
void clock_fake_jump(struct clock *c, int64_t ms);

/* Frees the clock; no timer may be armed on it. */
void clock_free(struct clock *c);

int64_t clock_now_ms(struct clock *c);	/* monotonic, ms */
int64_t clock_wall_ms(struct clock *c); /* Unix epoch, ms */
int64_t clock_now_us(struct clock *c);	/* monotonic, microseconds */

/* Number of armed timers (for tests and INFO). */
size_t clock_armed(const struct clock *c);

/* The due time (monotonic ms) of the earliest armed timer: true with
 * *due_ms set, false when none is armed. For a driver of fake clocks (the
 * deterministic simulator, tests/sim) that moves several of them, at
 * different rates, straight to the next moment one has work, instead of
 * in small steps. */
bool clock_next_due(const struct clock *c, int64_t *due_ms);

/* Makes t a timer of c that calls cb(arg), not armed. Inline: a lock
 * cycle initialises six. */
static inline void timer_init(struct timer *t, struct clock *c, timer_cb cb, void *arg)
{
	*t = (struct timer){.clock = c, .cb = cb, .arg = arg};
}
/* Arms (or re-arms) t to run delay_ms from now; a negative delay is 0.
 * Never fails: timers live in an intrusive heap, nothing is allocated. */
void timer_arm(struct timer *t, int64_t delay_ms);
/* Arms (or re-arms) t to run at monotonic due_ms; a time already past runs
 * it with the timers due now. Saves timer_arm's clock read when the caller
 * knows the due time (a lease's end, its next renewal). */
void timer_arm_at(struct timer *t, int64_t due_ms);
void timer_cancel(struct timer *t);
static inline bool timer_armed(const struct timer *t)
{
	return t->armed;
}

#endif
