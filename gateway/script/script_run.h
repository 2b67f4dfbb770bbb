/*
 * script_run: one EVAL as a serializable transaction over the lock
 * keyspace, on any store (core/store/store_kv.h).
 *
 * An attempt reads every key of KEYS (consistent reads), fixes now (the
 * wall clock, frozen for the run as Redis 7 does), runs the script to its
 * end against those reads (script_keys: reads cached, writes buffered,
 * nothing visible), and commits what it read and wrote as one
 * store_kv_commit whose conditions say "every key read is as read". A
 * script that fails commits nothing. A refused commit means another
 * write came between: the attempt is dropped and the script runs again on
 * fresh reads, after a short random pause, at most SR_ATTEMPTS times, then
 * the client is answered -TRYAGAIN.
 *
 * Why this and not a suspended interpreter: Lua 5.1 cannot yield across
 * pcall or a metamethod, so a script cannot wait for DynamoDB inside
 * redis.call. A script may only use the keys it names in KEYS (as Redis
 * Cluster requires), so all it can read is known before it starts:
 * reading them first lets it run with no I/O at all, on the one event loop,
 * without a thread, and the commit's conditions make the result
 * serializable (optimistic concurrency control). The price is a re-run
 * under contention, bounded by SR_ATTEMPTS.
 */
#ifndef LG_SCRIPT_RUN_H
#define LG_SCRIPT_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "gateway/script/script_lua.h"

#define SR_ATTEMPTS 5 /* runs of one EVAL before -TRYAGAIN */

struct store;
struct locktable;
struct clock;

struct sr_config {
	struct sl_limits limits;
	int64_t min_lease_ms, max_lease_ms; /* of a key a script writes */
	int64_t ttl_retention_ms;	    /* TTL attribute: 0 = none */
	/* PUBLISH: the subscribers of a channel on this replica now, and the
	 * delivery of a message, once its script committed (NULL: none) */
	size_t (*subscribers)(void *arg, const char *channel, size_t len);
	void (*publish)(void *arg, const char *channel, size_t channel_len, const char *message,
			size_t message_len);
	void *pub_arg;
};

struct sr_engine;
struct sr_job;

/* An engine over store, the lease core's lock table (for how long the
 * leases it wrote remain) and clock; all outlive it. NULL on OOM. */
struct sr_engine *sr_new(struct store *store, struct locktable *lt, struct clock *clock,
			 const struct sr_config *cfg) __attribute__((warn_unused_result));
void sr_free(struct sr_engine *e);

/* The VM, for SCRIPT LOAD / EXISTS / FLUSH. */
struct sl_vm *sr_vm(struct sr_engine *e);

struct sk_space;
/* A transaction's body instead of a script (MULTI/EXEC, WATCH): runs
 * once per attempt against the keys read, as a script would (commands by
 * sk_call; reads cached, writes buffered, committed after it returns
 * unless *result is an error). It may run again on fresh reads after a
 * conflict: it must only read what arg points at. */
typedef void (*sr_body_fn)(void *arg, struct sk_space *sp, struct sv *result);

struct sr_req {
	const char *sha; /* loaded in the VM; NULL with body */
	sr_body_fn body; /* or NULL: the script sha */
	void *body_arg;	 /* the caller's until done runs */
	int nkeys, nargs;
	const char *const *keys, *const *args; /* copied */
	const size_t *key_lens, *arg_lens;
	bool ro;
};

/* The reply of a job: *result (the callee may take its contents, leaving
 * it NIL). */
typedef void (*sr_done_fn)(void *arg, struct sv *result);

/* Starts req; done runs once, later, from the loop, unless sr_cancel.
 * NULL with an error reply in *err on bad input (a key too long, too
 * many keys, a NUL in a key) or out-of-memory. */
struct sr_job *sr_start(struct sr_engine *e, const struct sr_req *req, sr_done_fn done, void *arg,
			struct sv *err) __attribute__((warn_unused_result));

/* Forgets job: done will not run. A commit already sent may still apply. */
void sr_cancel(struct sr_job *job);

struct sr_stats {
	uint64_t jobs, commits, conflicts, tryagain;
};
void sr_stats(const struct sr_engine *e, struct sr_stats *out);

#endif
