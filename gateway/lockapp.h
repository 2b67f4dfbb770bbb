/*
 * lockapp: the lease commands' side of the gateway — what each session
 * holds, waits for and leads, shared by LOCK.* (lockcmds.c) and LEADER.*
 * (leadercmds.c), and the INFO section about them.
 *
 * A lease belongs to the session that took it: when the session closes its
 * leases are released at once, its wait cancelled and its terms ended.
 * (name, fencing token) names a lease from any connection of this replica.
 * A lease lost before it was released stays here, as lost, until a command
 * about it answers -LOST <reason> (or its session closes); a RESP3 session
 * is also sent a push when it happens.
 *
 * Not here: the lease rules (core/), sessions and sockets (session.c).
 */
#ifndef LG_LOCKAPP_H
#define LG_LOCKAPP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/election.h"
#include "core/locktable.h"
#include "gateway/redis/commands.h"
#include "gateway/config.h"

struct sess;
struct redis;
struct lk_watch_set; /* LEADER.WATCH long polls (leadercmds.c) */

/* One lease a session holds (or held, until its loss is reported). */
struct lk_lease {
	struct lk_lease *prev, *next; /* in its session's list */
	struct lk_sess *owner;
	struct lease *lease;	   /* NULL for a leader term between terms */
	struct election *election; /* LEADER.CAMPAIGN's term, else NULL */
	enum lt_loss lost;	   /* LT_HELD while held */
	int64_t token;
	/* a lost LOCK.ACQUIRE lease, in the app's list until reported, so
	 * that (name, token) from any connection finds it */
	struct lk_lease *lost_prev, *lost_next;
	bool in_lost_list;
	char name[];
};

/* A session's lease state (sess_app). */
struct lk_sess {
	struct lockapp *app;
	struct sess *sess;
	struct lk_lease *leases;
	unsigned nleases;
	struct lt_wait *wait;	     /* a LOCK.ACQUIRE waiting */
	struct lk_lease *campaign;   /* a LEADER.CAMPAIGN not yet leading */
	struct timer campaign_timer; /* its WAIT */
	void *watch;		     /* a LEADER.WATCH in progress */
};

struct lockapp {
	struct locktable *lt;
	struct obs *obs;
	struct store *store;
	const struct cfg *cfg;
	struct clock *clock;
	struct lk_watch_set *watches;
	const char *store_kind; /* "embedded" or "dynamodb" */
	struct lk_lease *lost;	/* lost lock leases not yet reported */
	uint64_t sessions_open;
	uint64_t lost_reported, pushes_sent;
};

/* The lease layer over lt (which it does not own). NULL on out-of-memory. */
struct lockapp *lockapp_new(struct locktable *lt, struct store *store, struct obs *obs,
			    const struct cfg *cfg, const char *store_kind);
void lockapp_free(struct lockapp *app);

/* Adds LOCK.*, LEADER.* and the INFO section "leases" to cmds and sets
 * the session hooks of srv. Returns -1 on failure. */
int lockapp_register(struct lockapp *app, struct cmd_table *cmds, struct redis *r)
	__attribute__((warn_unused_result));

/* Shutdown, before the sessions close (and release their leases): every
 * LOCK.ACQUIRE waiting is cancelled and answered "-ERR server is shutting
 * down", so that a closing holder does not hand its lock to a waiter whose
 * connection is closing too (a write and a token for nothing). */
void lockapp_stop_waits(struct lockapp *app, struct redis *r);

/* --- for lockcmds.c and leadercmds.c --- */

/* The session's lease state, made on first use; NULL on out-of-memory. */
struct lk_sess *lk_sess_of(struct lockapp *app, struct sess *s);

/* Adds a lease to ks; the lease's data points at the record. */
struct lk_lease *lk_add(struct lk_sess *ks, const char *name, struct lease *lease);
/* Forgets rec (does not release its lease). */
void lk_forget(struct lk_lease *rec);
/* A command answered later (RELEASE, RENEW, STATE on DynamoDB, RESIGN):
 * its session is suspended and referenced until lk_pending_done. */
struct lk_pending {
	struct lockapp *app;
	struct sess *sess;
	int64_t token;
	size_t size; /* bytes allocated */
	char name[];
};

/* Suspends s for a deferred answer about name (len bytes). NULL on
 * out-of-memory (s untouched). */
struct lk_pending *lk_pending_new(struct lockapp *app, struct sess *s, const struct resp_arg *name,
				  int64_t token);
/* Ends it: the reply, if any, is in sess_out already. p is freed. */
void lk_pending_done(struct lk_pending *p);

/* The record of name held by ks (token 0: any), or NULL. */
struct lk_lease *lk_find_own(struct lk_sess *ks, const char *name, int64_t token);
/* The record of (name, token) of any session of this replica: held, or
 * lost and not yet reported; NULL when none. */
struct lk_lease *lk_find_any(struct lockapp *app, const char *name, int64_t token);

/* Marks rec lost for reason and, for RESP3 sessions, pushes
 * [kind, name, token, reason] (kind "lock.lost" or "leader.lost"). */
void lk_report_loss(struct lk_lease *rec, enum lt_loss reason, const char *kind);

/* Writes the reply of a core error: -TRYAGAIN for a transient one, -ERR
 * for the others. */
void lk_reply_error(struct buf *out, const struct lt_error *err);

/* Parses a non-negative integer argument. */
bool lk_parse_int(const struct resp_arg *a, int64_t *out);

/* Parses "name lease-ms [WAIT ms] [HOLDER label]" (LOCK.ACQUIRE and
 * LEADER.CAMPAIGN) into *a and *wait_ms (-1: no WAIT); writes the error
 * and returns false when bad. */
bool lk_parse_acquire(struct lockapp *app, struct cmd_call *c, struct lt_acquire_args *a,
		      int64_t *wait_ms);

/* Room for one more lease in ks? Writes the error when not. */
bool lk_room(struct lk_sess *ks, struct cmd_call *c);

/* Checks a lock name against the configured limit; writes the error. */
bool lk_name_ok(struct lockapp *app, struct cmd_call *c, const struct resp_arg *a);

/* LEADER.* (leadercmds.c) */
int leadercmds_register(struct lockapp *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
void leadercmds_session_closed(struct lk_sess *ks);
/* A lease of name changed hands through this replica: wake its watchers. */
void leadercmds_changed(struct lockapp *app, const char *name);
void leadercmds_free(struct lockapp *app);
void leadercmds_campaign_timeout(struct lk_sess *ks);

/* LOCK.* (lockcmds.c) */
int lockcmds_register(struct lockapp *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

#endif
