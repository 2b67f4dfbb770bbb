/*
 * lt_sweep: the verification sweep of `--heartbeat replica` (lt_sweep.c;
 * docs/design/replica-heartbeat.md, "Endings from outside"): every lock a
 * locktable holds in session mode read once a period, spread evenly over
 * it, STORE_BATCH_MAX to a batch read; a lease whose item no longer shows
 * its owner and session is lost, an untracked item naming this replica's
 * session released. Made by lt_replica_init in that mode only.
 */
#ifndef LG_LT_SWEEP_H
#define LG_LT_SWEEP_H

#include <stdint.h>

#define LT_SWEEP_DEFAULT_MS 300000LL   /* lt_options.sweep_ms 0: 5 minutes */
#define LT_SWEEP_MIN_MS	    1000LL     /* bounds of lt_options.sweep_ms */
#define LT_SWEEP_MAX_MS	    86400000LL /* a day */

struct lease;
struct locktable;
struct lt_sweep;

/* Counts, for tests and INFO. */
struct lt_sweep_stats {
	uint64_t periods; /* periods begun */
	uint64_t batches; /* batch reads sent */
	uint64_t items;	  /* lock items asked for */
	uint64_t failed;  /* batches answered other than OK */
	uint64_t lost;	  /* leases ended by what the sweep read */
	uint64_t orphans; /* untracked items of this session released */
	/* ms from the start of the last period to the next: period_ms when
	 * the sweep keeps its pace, longer when its reads fell behind (0
	 * before the second period) */
	int64_t last_period_ms;
};

/* The sweep of t, every period_ms (0: LT_SWEEP_DEFAULT_MS; else
 * LT_SWEEP_MIN_MS..LT_SWEEP_MAX_MS), its first period starting now. NULL:
 * out of memory or a period out of bounds. */
struct lt_sweep *lt_sweep_new(struct locktable *t, int64_t period_ms)
	__attribute__((warn_unused_result));
/* Cancels its read; the locks it references are lt_free's to free. */
void lt_sweep_free(struct lt_sweep *sw);
/* l leaves its table's lease list (lease.c, before it is unlinked): the
 * walk's cursor, if there, moves past it. sw NULL: nothing. */
void lt_sweep_unlinked(struct lt_sweep *sw, const struct lease *l);
const struct lt_sweep_stats *lt_sweep_stats(const struct lt_sweep *sw);

#endif
