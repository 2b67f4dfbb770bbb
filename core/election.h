/*
 * election: leader terms on top of a locktable (the reference's
 * RunAsLeaderAsync). An election contends for a lock until it leads; a term
 * lasts until the lease is lost (the election contends again, unless it was
 * started for one term), the caller cancels (the lease is released: the
 * term ends "cancelled") or the work is done (released and handed on:
 * "work_returned").
 *
 * Transient acquire errors are retried after a third of the lease: the first
 * of an outage logs 44, the next answer of the store logs 49 with the
 * outage's length and retries, and every one is counted in
 * contention_retries. Any other error ends the election (failed callback).
 */
#ifndef LG_ELECTION_H
#define LG_ELECTION_H

#include "core/locktable.h"
#include "core/trace.h"

struct election;

enum election_end { ELECTION_LEASE_LOST, ELECTION_CANCELLED, ELECTION_WORK_RETURNED };

struct election_cbs {
	/* A term starts; lease is the election's (do not release it). */
	void (*lead)(void *arg, struct lease *lease);
	/* The term ended by a lost lease (reason); the lease is gone. */
	void (*lost)(void *arg, enum lt_loss reason);
	/* The election ended with an error retrying cannot fix. */
	void (*failed)(void *arg, const struct lt_error *err);
};

struct election_args {
	const char *name;
	int64_t lease_ms;
	const char *holder; /* NULL = the table's label */
	bool one_term;	    /* stop after the first lost term */
	/* the client's trace context of the campaign (NULL: a new trace);
	 * each acquire of the campaign is a Leader.Campaign span under it */
	const struct trace_ctx *trace_parent;
	/* the hash of the terms' secret (lt_acquire_args.secret_hash: an
	 * adoptable term), or NULL */
	const char *secret_hash;
};

/* Starts contending. Returns NULL on bad args (msg says why) or
 * out-of-memory. The callbacks come from the loop. */
struct election *election_start(struct locktable *t, const struct election_args *args,
				const struct election_cbs *cbs, void *arg, char *msg, size_t msglen)
	__attribute__((warn_unused_result));

/* An election that leads from now on with lease, a term adopted from
 * another replica (lt_adopt): as election_start once it leads, without a
 * lead callback; one_term as args say. NULL on bad args or out of memory
 * (lease untouched). */
struct election *election_adopted(struct locktable *t, const struct election_args *args,
				  struct lease *lease, const struct election_cbs *cbs, void *arg)
	__attribute__((warn_unused_result));

/* Ends the election and frees it, its term's lease given to the caller
 * (NULL when not leading), neither released nor ended: a draining
 * replica keeps it for an adopt. No callback runs afterwards. */
struct lease *election_give_lease(struct election *e);

/* The lease of the current term, or NULL while not leading. */
struct lease *election_lease(const struct election *e);

/* Ends the election and frees it: a term in progress ends with how
 * (CANCELLED or WORK_RETURNED: log 46) and its lease is released, handed on
 * to a local waiter if there is one. No callback runs afterwards. */
void election_stop(struct election *e, enum election_end how);

/* election_stop(), then cb as lease_release_then() calls it: (arg, 1,
 * NULL) once the term's release is done (its write answered, or the lock
 * handed on), (arg, -1, err) when its write failed, (arg, 0, NULL) when
 * there was no term in progress (at once) or its lease had ended. */
void election_stop_then(struct election *e, enum election_end how, lt_renew_cb cb, void *arg);

const char *election_end_name(enum election_end how);

#endif
