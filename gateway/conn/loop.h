/*
 * loop: runs the process's event loop, optionally polling for a short
 * while before it sleeps ("busy poll").
 *
 * Why: a client's request that finds the server asleep must wake it, and
 * the waking is paid on the client's side: on a virtual machine an idle
 * vCPU is halted and the waker's kernel takes an exit to the hypervisor
 * (measured here, Firecracker with guest haltpoll off: ~15 us of the
 * client's CPU per wake-up, ~6,000 wake-ups per million pipelined PINGs).
 * Polling a few tens of microseconds first catches the next request
 * awake. The window adapts so that polling costs CPU only while it pays:
 * after a sleep that a longer window would have spared (input came within
 * the maximum) it doubles; after a sleep longer than the maximum (polling
 * could not have helped) it halves, down to none. An idle replica, or one
 * whose requests come further apart than the maximum, does not poll. And
 * polling is earned: the loop polls no longer than it has just worked
 * (credit, at most the maximum window), so it at most doubles the CPU of a
 * light load instead of turning it into a busy core.
 *
 * "Input" is what the front-ends report with loop_note_input(): bytes
 * from a client, an accepted connection. Timers and store answers run in
 * the loop as usual but neither end a poll nor count as input.
 *
 * Not here: what runs on the loop (server.c, session.c), the options
 * (config.c: --busy-poll-us).
 */
#ifndef LG_LOOP_H
#define LG_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

struct loop_poll {
	int64_t max_ns;		 /* longest window; 0 = never poll */
	int64_t window_ns;	 /* the current window, 0..max_ns */
	int64_t credit_ns;	 /* polling time earned by work, <= max_ns */
	int64_t (*now_ns)(void); /* monotonic clock; NULL = CLOCK_MONOTONIC */
	uint64_t inputs;	 /* loop_note_input() calls */
	uint64_t polls;		 /* non-blocking loop steps taken while polling */
	uint64_t poll_hits;	 /* polls ended by input: a sleep spared */
	uint64_t sleeps;	 /* times the loop blocked */
	bool asleep;		 /* blocked since the last input */
	int64_t woke_ns;	 /* when input ended the last sleep */
};

/* A poll state with the given maximum window in microseconds (0: off). */
void loop_poll_init(struct loop_poll *lp, int64_t max_us);

/* The clock lp reads (its now_ns, or CLOCK_MONOTONIC). */
int64_t loop_now_ns(const struct loop_poll *lp);

/* A front-end saw input (client bytes, a new connection). lp may be NULL. */
static inline void loop_note_input(struct loop_poll *lp)
{
	if (lp == NULL)
		return;
	lp->inputs++;
	if (lp->asleep) {
		lp->asleep = false;
		lp->woke_ns = loop_now_ns(lp);
	}
}

/* The next window after input came idle_ns after the loop went idle,
 * when the window was window_ns and may be at most max_ns. Pure. */
int64_t loop_poll_adapt(int64_t window_ns, int64_t idle_ns, int64_t max_ns);

/* Runs base until event_base_loopbreak/loopexit or until no event is
 * left, polling as lp says (lp->max_ns 0: event_base_dispatch).
 * Returns 0, or -1 if libevent reported an error. */
int loop_run(struct event_base *base, struct loop_poll *lp) __attribute__((warn_unused_result));

#endif
