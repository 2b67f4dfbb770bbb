/*
 * lt_shared: leases on a slot of a shared name — a reader of a
 * reader-writer lock (LT_SH_SHARED) or one of at most n holders of a
 * counting semaphore (LT_SH_LIMIT) — on the items of
 * core/store/store_shared.h (docs/design/shared-locks.md). Each holder is a
 * lease of its own, with the rules of docs/lease-rules.md: it runs from
 * the send of its write, is renewed every third of it (a failed renewal
 * retried after 100 ms, doubling up to a sixth of the lease, until it runs
 * out), and a waiter takes a slot over only after it saw that slot's rvn
 * unchanged for a whole lease on its own clock, with one write that frees
 * the slot and fills it.
 *
 * Not yet (see the design): the waiting exclusive's announcement and
 * phase-fair admission, the removal of crashed readers by an exclusive
 * waiter, a reader's takeover of a crashed exclusive holder, local
 * hand-offs. An exclusive holder (lt_acquire) and shared holders never
 * overlap: the store's conditions see to it.
 *
 * Every callback comes from the event loop. Release every lease and cancel
 * every wait of this file before lt_free.
 */
#ifndef LG_LT_SHARED_H
#define LG_LT_SHARED_H

#include "core/locktable.h"
#include "core/store/store_shared.h"

struct sh_lease;
struct sh_wait;

struct lt_sh_args {
	const char *name;	 /* 1..STORE_NAME_MAX bytes, copied */
	enum store_sh_mode mode; /* STORE_SH_SHARED or STORE_SH_LIMIT */
	unsigned cap;		 /* LIMIT: n; SHARED: the readers' cap (1..STORE_SH_CAP) */
	int64_t lease_ms;	 /* LT_MIN_LEASE_MS..LT_MAX_LEASE_MS */
	bool wait;		 /* false: try once; true: poll until granted */
	int64_t timeout_ms;	 /* wait only: give up after this, 0 = never */
	const char *holder;	 /* label; NULL = the table's */
	/* the holder's owner id, 1..32 printable ASCII bytes, or NULL = a
	 * new random one: the slot a wait reads and tries first follows from
	 * it, so the simulator (tests/sim) names its own and a seed replays */
	const char *owner;
};

/* lease != NULL: granted (the callee's from now on); lease == NULL and
 * err == NULL: not granted (a try found no slot, or a wait timed out);
 * err != NULL: the store failed, or the name is held in another mode or
 * with another limit (error_type "ModeMismatch"). */
typedef void (*lt_sh_acquire_cb)(void *arg, struct sh_lease *lease, const struct lt_error *err);
typedef void (*lt_sh_lost_cb)(void *arg, struct sh_lease *lease, enum lt_loss reason);

/* Starts an acquire; NULL on bad args or out-of-memory (no callback). */
struct sh_wait *lt_sh_acquire(struct locktable *t, const struct lt_sh_args *args,
			      lt_sh_acquire_cb cb, void *arg) __attribute__((warn_unused_result));

/* cb will not run; a grant already sent that succeeds is released. */
void lt_sh_acquire_cancel(struct sh_wait *w);

/* name changed hands through this replica (an exclusive lease released,
 * say): its shared waits read again now instead of at their next poll. */
void lt_sh_kick(struct locktable *t, const char *name);

/* For an exclusive waiter on a name readers hold (core/locktable.c): its
 * announcement on the header (XANNOUNCE in store_shared.h: new readers
 * are refused while it stands), written again with a new rvn at each
 * lt_sh_reap, poll_ms the waiter's poll interval, and cleared when the
 * reaper is freed (the wait is over: granted, or given up); and a watch of
 * the slots that removes, one conditional write each (REMOVE), every
 * holder whose rvn stood still a whole lease on this replica's clock,
 * counted from the read that first showed it. Each lt_sh_reap reads the
 * slots once (none while a read is in flight); removals are not reported,
 * and wake the waiters here when they land. */
struct sh_reaper;
struct sh_reaper *lt_sh_reaper_new(struct locktable *t, const char *name);
void lt_sh_reap(struct sh_reaper *rp, int64_t poll_ms);
/* clear: take the announcement away (false: the table is going away, the
 * announcement left to run stale). NULL is allowed. */
void lt_sh_reaper_free(struct sh_reaper *rp, bool clear);

/* The name a wait is for. */
const char *sh_wait_name(const struct sh_wait *w);

/* The lease's token: the readers' group token (SHARED) or its slot's
 * fence (LIMIT: a downstream keeps the highest per (name, slot)). */
int64_t sh_lease_token(const struct sh_lease *l);
unsigned sh_lease_slot(const struct sh_lease *l);
const char *sh_lease_name(const struct sh_lease *l);
enum lt_loss sh_lease_loss(const struct sh_lease *l); /* LT_HELD while held */
int64_t sh_lease_end_ms(const struct sh_lease *l);    /* monotonic */

/* cb runs once when the lease is lost (never after sh_lease_release). */
void sh_lease_on_lost(struct sh_lease *l, lt_sh_lost_cb cb, void *arg);

/* Ends the lease: a conditional release of its slot (on its owner, so a
 * lost lease's frees the slot only if still its own); l is invalid
 * afterwards. The release's failure is not reported. */
void sh_lease_release(struct sh_lease *l);

/* sh_lease_release, then, from the loop, cb(arg, 1, NULL) once the slot
 * is released; cb(arg, 0, NULL) when the lease had ended (lost) or the
 * slot was no longer its own; cb(arg, -1, err) when the write failed (the
 * slot stays its own until its lease runs out). */
void sh_lease_release_then(struct sh_lease *l, lt_renew_cb cb, void *arg);

#endif
