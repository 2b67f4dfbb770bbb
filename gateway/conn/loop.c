/*
 * loop: the event loop with an adaptive poll before sleeping (loop.h).
 */
#include "gateway/conn/loop.h"

#include <time.h>

#include <event2/event.h>

void loop_poll_init(struct loop_poll *lp, int64_t max_us)
{
	*lp = (struct loop_poll){.max_ns = max_us > 0 ? max_us * 1000 : 0};
}

int64_t loop_now_ns(const struct loop_poll *lp)
{
	if (lp->now_ns != NULL)
		return lp->now_ns();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t loop_poll_adapt(int64_t window_ns, int64_t idle_ns, int64_t max_ns)
{
	int64_t start = max_ns / 4; /* the first window: a quarter of the maximum */
	if (max_ns <= 0)
		return 0;
	if (idle_ns <= window_ns)
		return window_ns; /* the poll caught it (or would have) */
	if (idle_ns <= max_ns) {  /* a longer window would have caught it */
		int64_t w = window_ns * 2 < start ? start : window_ns * 2;
		return w < max_ns ? w : max_ns;
	}
	/* too far apart for polling to help: halve, and stop when small */
	return window_ns / 2 < max_ns / 16 ? 0 : window_ns / 2;
}

/* One pass of the loop; false once the loop is to end (*rc set). */
static bool step(struct event_base *base, int flags, int *rc)
{
	int r = event_base_loop(base, flags);
	if (r != 0 || event_base_got_break(base) || event_base_got_exit(base)) {
		*rc = r < 0 ? -1 : 0;
		return false;
	}
	return true;
}

int loop_run(struct event_base *base, struct loop_poll *lp)
{
	if (lp->max_ns <= 0)
		return event_base_dispatch(base) < 0 ? -1 : 0;
	int rc = 0;
	int64_t busy_from = loop_now_ns(lp);
	for (;;) {
		uint64_t seen = lp->inputs;
		int64_t idle_from = loop_now_ns(lp);
		/* the turn's work earns the polling that may follow it */
		lp->credit_ns += idle_from - busy_from;
		if (lp->credit_ns > lp->max_ns)
			lp->credit_ns = lp->max_ns;
		if (lp->window_ns > 0 && lp->credit_ns > 0) {
			int64_t budget =
				lp->window_ns < lp->credit_ns ? lp->window_ns : lp->credit_ns;
			int64_t t = idle_from, step_from;
			do {
				step_from = t;
				lp->polls++;
				if (!step(base, EVLOOP_NONBLOCK, &rc))
					return rc;
				t = loop_now_ns(lp);
			} while (lp->inputs == seen && t < idle_from + budget);
			if (lp->inputs != seen) { /* the last step found input and ran it */
				lp->credit_ns -= step_from - idle_from;
				lp->poll_hits++;
				busy_from = step_from;
				continue;
			}
			lp->credit_ns -= t - idle_from;
		}
		/* Sleep until input; timers and store answers may run first. */
		lp->asleep = true;
		do {
			lp->sleeps++;
			if (!step(base, EVLOOP_ONCE, &rc)) {
				lp->asleep = false;
				return rc;
			}
		} while (lp->inputs == seen);
		lp->window_ns = loop_poll_adapt(lp->window_ns, lp->woke_ns - idle_from, lp->max_ns);
		busy_from = lp->woke_ns;
	}
}
