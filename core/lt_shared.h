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
 * Phase-fair: a reader waiting behind an exclusive holder or a writer's
 * announcement registers on the header (RWAIT), once per phase; the
 * exclusive's release admits the registered readers (radmit), who are
 * granted past the next writer's announcement; a wait that ends
 * ungranted takes its entry away (RUNWAIT). An exclusive lease ending on
 * this replica while readers wait is released to the store, not handed
 * to a local writer, and the readers here read at once (lt_sh_kick).
 *
 * Not yet (see the design): local hand-offs of slots. An exclusive holder
 * (lt_acquire) and shared holders never overlap: the store's conditions
 * see to it.
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
	/* the holder's owner id, 1..32 printable ASCII bytes (copied), or
	 * NULL = a new random one: a detached hold's is made from its secret,
	 * and the simulator (tests/sim) names its own so that a seed replays
	 * (the slot a wait reads and tries first follows from it) */
	const char *owner;
	/* the client's trace context: the acquire's span (Lock.Acquire or
	 * Lock.TryAcquire, leasegate.lock.mode shared or limit) is its child;
	 * NULL or not .valid: a new trace */
	const struct trace_ctx *trace_parent;
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
 * and wake the waiters here when they land. Readers admitted by the last
 * exclusive release (the header's radmit) go first; a set that stood
 * still lease_ms (the writer's lease) on this clock is of crashed readers
 * and is dropped (RCLEAR, conditioned on that set). */
struct sh_reaper;
struct sh_reaper *lt_sh_reaper_new(struct locktable *t, const char *name);
void lt_sh_reap(struct sh_reaper *rp, int64_t poll_ms, int64_t lease_ms);
/* clear: take the announcement away (false: the table is going away, the
 * announcement left to run stale), once the XANNOUNCE in flight, if any,
 * has answered: rp then lives on until that answer. NULL is allowed. */
void lt_sh_reaper_free(struct sh_reaper *rp, bool clear);

/* A name's shared holders as one read saw them (lt_sh_state). */
struct lt_sh_holder {
	unsigned slot;
	int64_t token; /* the readers' group token, or the slot's fence (LIMIT) */
	int64_t lease_ms;
	char owner[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1]; /* "" when none */
};
struct lt_sh_state {
	enum store_sh_mode mode;
	unsigned limit;	     /* LIMIT: n; SHARED: STORE_SH_CAP */
	int64_t fence;	     /* the header's: the readers' group token */
	bool writer_waiting; /* an exclusive waiter's announcement stands */
	unsigned count;
	struct lt_sh_holder holders[STORE_SH_CAP]; /* count of them, by slot */
};
/* st valid during the call only; NULL with err when the read failed. */
typedef void (*lt_sh_state_cb)(void *arg, const struct lt_sh_state *st, const struct lt_error *err);

/* Reads name's header and every slot (one strongly consistent read: a
 * BatchGetItem of 100 keys on DynamoDB, so operators' reads, not a lock
 * cycle's) and answers cb from the loop. False on out-of-memory (no
 * callback). */
bool lt_sh_state(struct locktable *t, const char *name, lt_sh_state_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Whether a reader of this replica waits for name (core/locktable.c:
 * an exclusive lease ending then releases to the store, which admits the
 * readers registered, instead of handing on to a local writer). */
bool lt_sh_waiting(struct locktable *t, const char *name);

/* The name a wait is for. */
const char *sh_wait_name(const struct sh_wait *w);

/* The lease's token: the readers' group token (SHARED) or its slot's
 * fence (LIMIT: a downstream keeps the highest per (name, slot)). */
int64_t sh_lease_token(const struct sh_lease *l);
unsigned sh_lease_slot(const struct sh_lease *l);
const char *sh_lease_name(const struct sh_lease *l);
/* Its slot's owner id (a fenced write's check names it) and its mode. */
const char *sh_lease_owner(const struct sh_lease *l);
enum store_sh_mode sh_lease_mode(const struct sh_lease *l);
enum lt_loss sh_lease_loss(const struct sh_lease *l); /* LT_HELD while held */
int64_t sh_lease_end_ms(const struct sh_lease *l);    /* monotonic */
int64_t sh_lease_duration_ms(const struct sh_lease *l);
const char *sh_lease_holder(const struct sh_lease *l); /* its label (the table's if none) */

/* Sends a renewal of the lease's slot now (or waits for the one in
 * flight): cb(arg, 1, NULL) once renewed, cb(arg, 0, NULL) when the lease
 * ends first (lost, released: then from inside that call), cb(arg, -1,
 * err) when the write failed (the heartbeat retries on, as always). False,
 * no callback, when the lease has ended or a renewal of this kind waits
 * already. */
bool sh_lease_renew(struct sh_lease *l, lt_renew_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Whose lease it is (the gateway's session record): the ctx of its obs
 * events (logs 40-43: lost, taken over, renewal retried, release failed,
 * and the metrics of acquisitions, renewals and losses, as an exclusive
 * lease's). */
void sh_lease_set_data(struct sh_lease *l, void *data);

/* lt_transact (locktable.h) under a shared hold: the client's items are
 * written in one transaction with the checks of store_shared.h's CHECK —
 * l's slot still its own (a semaphore holder's: and its token), the
 * header without an exclusive owner (a reader's: and its group token) —
 * so the client has at most STORE_TX_MAX_ITEMS_SHARED items. A refused
 * check answers LT_TX_LOST and, while l is still held, ends it as a
 * refused renewal would (its lost callback runs first). l may be released
 * while the transaction is in flight: the answer still comes. NULL on
 * out-of-memory (no callback); cancelled with lt_transact_cancel. */
struct lt_tx *lt_sh_transact(struct sh_lease *l, const char *items, size_t len,
			     const char *client_token, lt_tx_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* cb runs once when the lease is lost (never after sh_lease_release). */
void sh_lease_on_lost(struct sh_lease *l, lt_sh_lost_cb cb, void *arg);

/* Ends the lease: a conditional release of its slot (on its owner, so a
 * lost lease's frees the slot only if still its own); l is invalid
 * afterwards. The release's failure is not reported. */
void sh_lease_release(struct sh_lease *l);

/* Lets the lease go without releasing it (a detached hold: LOCK.ACQUIRE
 * ... DETACH): no more renewals, no release; its slot stays held by its
 * owner until its lease runs out, unless renewed or released through
 * lt_sh_foreign. l is invalid afterwards. */
void sh_lease_let_go(struct sh_lease *l);

/* --- a holder by its slot, wherever it is held (core/lt_shared_foreign.c) --- */

enum lt_sh_foreign_op {
	LT_SH_RENEW,   /* a new rvn and a whole lease again, as its heartbeat */
	LT_SH_RELEASE, /* the slot freed, as its holder's release */
	LT_SH_FORCE,   /* an operator's: freed whoever holds it, marked forced */
};

struct lt_sh_foreign_req {
	const char *name;
	unsigned slot; /* < STORE_SH_CAP */
	enum lt_sh_foreign_op op;
	const char *owner; /* RENEW, RELEASE: the holder's id; FORCE: NULL */
	int64_t token;	   /* > 0: the holder's token must be this; 0: any */
};

/* Reads the name's header and the slot (strongly consistent), then writes:
 * RENEW conditioned on the owner and the rvn read (the slot's lease and
 * label kept); RELEASE and FORCE conditioned on the owner read (FORCE sets
 * freedBy "force": its holder's next renewal reports LT_FORCED). The
 * holder's token is the header's fence (SHARED) or the slot's (LIMIT).
 * cb(arg, 1, NULL) done; cb(arg, 0, NULL) no such holder (the slot free,
 * another owner or token, or the write refused: it changed meanwhile);
 * cb(arg, -1, err) a store error. False on out-of-memory or bad args (no
 * callback). */
bool lt_sh_foreign(struct locktable *t, const struct lt_sh_foreign_req *req, lt_renew_cb cb,
		   void *arg) __attribute__((warn_unused_result));

/* sh_lease_release, then, from the loop, cb(arg, 1, NULL) once the slot
 * is released; cb(arg, 0, NULL) when the lease had ended (lost) or the
 * slot was no longer its own; cb(arg, -1, err) when the write failed (the
 * slot stays its own until its lease runs out). */
void sh_lease_release_then(struct sh_lease *l, lt_renew_cb cb, void *arg);

#endif
