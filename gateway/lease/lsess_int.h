/*
 * lsess_int: what the files of the lease-session layer (lsess.c,
 * lsess_lead.c, lsess_watch.c) share. Not for front-ends: they include
 * gateway/lease/lsess.h only.
 *
 * A record (struct ls_rec) is one lock lease or one leader term of a
 * session. Its state changes in ls_rec_set() only:
 *
 *   CAMPAIGNING  a leader term not started yet (the election contends)
 *   HELD         a lease or term in force: .lease, .token
 *   LOST         lost before it was released: .loss; kept (a lock's lease
 *                too, ended) until an operation is answered LS_LOST or the
 *                session closes. A lost lock is also in the service's lost
 *                list, so that (name, token) from any session finds it.
 *
 * A pending operation (struct ls_op) is one answer owed through a callback
 * (renew, release, state, resign). It belongs to its session until that
 * closes; then it is detached (.sess NULL, in the service's list): its
 * completion still does the work (wake watchers) but calls nobody.
 */
#ifndef LG_LSESS_INT_H
#define LG_LSESS_INT_H

#include "core/lt_shared.h"
#include "gateway/lease/lsess.h"
#include "gateway/lease/lsess_index.h"

enum ls_rec_state { LS_REC_CAMPAIGNING, LS_REC_HELD, LS_REC_LOST };

/* Made by ls_rec_new from a block not zeroed (pool_take): a new field
 * must be set there. */
struct ls_rec {
	struct ls_rec *prev, *next;	      /* in its session's list */
	struct ls_rec *hnext;		      /* in its session's index (lsess_index.h) */
	uint32_t hash;			      /* of name, for the index */
	struct ls_rec *lost_prev, *lost_next; /* in the service's lost list */
	struct lsess *owner;
	struct lease *lease;	   /* HELD; a lost lock's ended lease; else NULL */
	struct sh_lease *sh;	   /* LS_KIND_SHARED: its lease (held or lost) */
	struct election *election; /* LS_KIND_LEADER: the one-term election */
	int64_t token;
	enum ls_kind kind;
	enum ls_rec_state state;
	enum lt_loss loss; /* LOST: why */
	unsigned holds[LS_SCOPE_COUNT];
	size_t len;
	char name[];
};

enum ls_wait_kind {
	LS_WAIT_NONE,
	LS_WAIT_ACQUIRE,
	LS_WAIT_CAMPAIGN,
	LS_WAIT_WATCH,
	LS_WAIT_TEST,  /* ls_test_advance, ls_test_wait_refusal (lsess_test.c) */
	LS_WAIT_SHARED /* ls_acquire_shared (lsess_shared.c) */
};

struct ls_watcher;
struct ls_watch_group;
struct ls_op;
struct ls_test_wait;

struct lsess {
	struct lsvc *svc;
	struct lsess *all_prev, *all_next; /* in the service's list of sessions */
	const char *proto;		   /* lsess_set_label */
	uint64_t id;
	struct ls_sess_ops ops;
	void *arg;
	struct ls_rec *recs;
	struct ls_index idx; /* recs by name */
	unsigned nrecs;
	struct ls_op *pending; /* operations owing this session an answer */
	/* The one wait of the session (acquire, campaign or watch). */
	enum ls_wait_kind wait_kind;
	ls_done_cb wait_cb;
	void *wait_arg;
	uint64_t wait_seq;
	struct lsess *wait_prev, *wait_next; /* in the service's waiting list */
	struct lt_wait *acq;		     /* LS_WAIT_ACQUIRE */
	enum ls_scope acq_scope;
	bool acq_detach;		    /* the acquire is DETACH: no record, the lease let go */
	char acq_secret[LS_SECRET_LEN + 1]; /* ADOPTABLE: the secret to answer, else "" */
	struct ls_rec *campaign;	    /* LS_WAIT_CAMPAIGN */
	struct timer campaign_timer;
	struct ls_watcher *watcher; /* LS_WAIT_WATCH */
	struct ls_test_wait *test;  /* LS_WAIT_TEST */
	struct sh_wait *sh_acq;	    /* LS_WAIT_SHARED (scope: acq_scope) */
};

struct lsvc {
	struct locktable *lt;
	struct clock *clock;
	struct ls_limits lim;
	struct ls_rec *lost;			   /* lost locks not yet reported */
	struct lsess *waiting_head, *waiting_tail; /* sessions with a wait, oldest first */
	uint64_t wait_seq;
	struct ls_op *detached; /* pending operations of closed sessions */
	struct ls_watch_group *groups;
	struct lsess *all; /* every session, newest first (listings) */
	/* fenced writes (lsess_fence.c): the tables allowed, the lock table */
	char **fenced;
	unsigned nfenced;
	char *lock_table, *lock_pk;
	struct tclock *tclock; /* --test-mode (lsess_test.c); NULL: off */
	uint64_t sessions, lost_reported, losses_told;
	/* a drain (lsess_drain.c): the orphans kept for adoption */
	bool draining;
	struct ls_orphan *orphans;
	struct adopting *adopting; /* LOCK.ADOPT / LEADER.ADOPT in flight (lsess_adopt.c) */
	struct lsvc_drain_stats drain;
};

/* Made by ls_op_new from a block not zeroed (pool_take): a new field must
 * be set there. */
struct ls_op {
	struct ls_op *prev, *next; /* in its session's pending list, or svc->detached */
	struct lsvc *svc;
	struct lsess *sess; /* NULL once detached */
	ls_done_cb cb;
	void *arg;
	int64_t token;
	/* A batch of releases (ls_release_scope, ls_release_all) is one op
	 * that answers once left reaches 0 (ls_batch_*); each of its releases
	 * is an op of its own whose batch points to it. */
	struct ls_op *batch;
	unsigned left;
	char *unwritten; /* a batch: the first release that failed, its message */
	size_t size;	 /* bytes allocated */
	char name[];
};

/* --- results --- */

/* *r = status, with nothing else. */
void ls_res_init(struct ls_result *r, enum ls_status status);
/* Sets status and a message; returns status. */
enum ls_status ls_res_msg(struct ls_result *r, enum ls_status status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A core error: LS_TRANSIENT or LS_FAILED with its message; returns it. */
enum ls_status ls_res_err(struct ls_result *r, const struct lt_error *err);

/* Checks name (len bytes) against the limits and copies it, NUL ended,
 * into buf (STORE_NAME_MAX + 1 bytes). False with r set when bad. */
bool ls_name_ok(const struct lsvc *svc, const char *name, size_t len, char *buf,
		struct ls_result *r);
/* Checks an acquire or campaign request (name into buf, the lease with
 * the default applied into *lease_ms, the holder). False with r set. */
bool ls_req_ok(const struct lsvc *svc, const struct ls_acquire_req *req, char *buf,
	       int64_t *lease_ms, struct ls_result *r);
/* Room for one more record in s? False with r set. */
bool ls_room(const struct lsess *s, struct ls_result *r);

/* --- records --- */

/* The bytes a record whose name is len bytes long is allocated with: its
 * size class's block (lsess.c), or just enough past the largest. */
size_t ls_rec_bytes(size_t len);
/* A new record of s (state CAMPAIGNING, nothing held). NULL on OOM. */
struct ls_rec *ls_rec_new(struct lsess *s, enum ls_kind kind, const char *name, size_t len);
/* The one place a record's state changes (and its lost-list membership). */
void ls_rec_set(struct ls_rec *rec, enum ls_rec_state state, enum lt_loss loss);
/* Unlinks and frees rec; releases nothing. */
void ls_rec_forget(struct ls_rec *rec);
/* The record of kind and name in s (token 0: any), or NULL. */
struct ls_rec *ls_rec_find(const struct lsess *s, enum ls_kind kind, const char *name,
			   int64_t token);
/* How many holds rec counts, in every scope. */
unsigned ls_rec_holds(const struct ls_rec *rec);

/* The loss of rec, LT_HELD while it holds. A lease past its end counts as
 * expired before the core's end timer says so: after a stall of the loop
 * (a starved CPU, a stopped process) a request can be read before the
 * overdue timer runs, and must not be told its lease goes on. */
enum lt_loss ls_rec_loss(const struct ls_rec *rec);
/* Answers r LS_LOST for rec (loss), and ends and forgets rec. */
enum ls_status ls_rec_report(struct ls_rec *rec, enum lt_loss loss, struct ls_result *r);
/* Ends rec as at the session's close: the lease released, the term ended
 * (handed on), watchers told once that is done, and then batch (NULL:
 * none) counts the release as done. rec is freed. */
void ls_rec_drop(struct ls_rec *rec, struct ls_op *batch);
/* rec was lost (reason) under the session: mark it, wake watchers, tell
 * the front-end (last: its callback may free the session). */
void ls_rec_lost(struct ls_rec *rec, enum lt_loss reason);
/* A new record of s holding lease (acquired, or adopted) in scope: held,
 * or lost when the lease ended already. NULL on out-of-memory (lease
 * untouched). */
struct ls_rec *ls_bind_lease(struct lsess *s, struct lease *lease, enum ls_scope scope);
/* The same for a leader term (an adopted one): a one-term election
 * leading with lease (lsess_lead.c). */
struct ls_rec *ls_bind_term(struct lsess *s, struct lease *lease);
/* While draining, takes rec's adoptable lease from its closing session as
 * an orphan (lsess_drain.c): true when taken (rec->lease is NULL then). */
bool ls_orphan_take(struct ls_rec *rec);
/* Frees the orphans' records, their leases left to lt_free (lsvc_free). */
void ls_orphans_free(struct lsvc *svc);
/* Frees the adopts in flight, their requests left to lt_free (lsvc_free). */
void ls_adopts_free(struct lsvc *svc);

/* --- pending operations --- */

/* An operation of s (s NULL: detached from the start) about name. NULL on
 * out-of-memory. */
struct ls_op *ls_op_new(struct lsvc *svc, struct lsess *s, ls_done_cb cb, void *arg,
			const char *name, size_t len, int64_t token);
/* Ends op: frees it, then calls its callback with res unless detached or
 * res is NULL. */
void ls_op_finish(struct ls_op *op, const struct ls_result *res);

/* A batch of releases of s answering cb(arg) once they are all done;
 * NULL on out-of-memory. Give it to ls_rec_drop for each, then close it. */
struct ls_op *ls_batch_new(struct lsess *s, ls_done_cb cb, void *arg);
/* Every release of b has been started: LS_OK in now when all are done
 * already, else LS_PENDING (b answers through its callback). */
enum ls_status ls_batch_close(struct ls_op *b, struct ls_result *now);
/* The message of a release of name that was not written (err). */
void ls_unwritten(struct ls_result *r, const char *name, const struct lt_error *err);

/* --- the session's wait --- */

void ls_wait_begin(struct lsess *s, enum ls_wait_kind kind, ls_done_cb cb, void *arg);
/* The wait is over: s waits for nothing; *cb and *arg get its callback. */
void ls_wait_end(struct lsess *s, ls_done_cb *cb, void **arg);

/* The lock record of (name, token) of any session of this replica: held,
 * or lost and not yet reported; NULL when none (lsess_lock.c). */
struct ls_rec *ls_find_any(struct lsvc *svc, const char *name, int64_t token);

/* --- lsess_shared.c: the session's own shared hold of name --- */

/* The session's shared hold of name (with token, when not 0); NULL when none. */
struct ls_rec *ls_shared_find(struct lsess *s, const char *name, int64_t token);
/* Releases rec whatever its holds count (a release by token). */
enum ls_status ls_shared_drop_all(struct lsess *s, struct ls_rec *rec, struct ls_result *now,
				  ls_done_cb cb, void *arg);
/* One renewal of rec's slot now: LS_PENDING then LS_OK (renewed) or
 * LS_NONE (ended first), or an error; LS_LOST at once after a loss. */
enum ls_status ls_shared_renew(struct lsess *s, struct ls_rec *rec, struct ls_result *now,
			       ls_done_cb cb, void *arg);

/* A detached shared hold's secret ("<slot>:<32 hex>", len bytes): its
 * slot and its owner on it. False when secret is no such secret. */
bool ls_shared_handle(const char *secret, size_t len, unsigned *slot, char owner[STORE_ID_MAX + 1]);
/* The shared holder fr names (lt_sh_foreign), from any session: LS_PENDING
 * then LS_OK done or LS_NONE no such holder; errors at once. */
enum ls_status ls_shared_foreign(struct lsess *s, const char *name,
				 const struct lt_sh_foreign_req *fr, struct ls_result *now,
				 ls_done_cb cb, void *arg);

/* ls_state of a name held shared (st->shared > 0): reads its holders and
 * answers op with st and them. False on out-of-memory (op untouched). */
bool ls_state_holders(struct ls_op *op, const struct lt_state *st);

/* --- lsess_fence.c --- */

/* Frees the fenced-writes configuration (lsvc_free). */
void ls_fence_free(struct lsvc *svc);

/* --- lsess_lead.c --- */

/* The campaign's WAIT ran out (timer of s). */
void ls_campaign_due(void *arg);
/* Ends s's campaign wait without an answer; its record is forgotten. */
void ls_campaign_drop(struct lsess *s);
/* Ends rec's election (how) and forgets rec. */
void ls_term_end(struct ls_rec *rec, enum election_end how);

/* --- lsess_foreign.c --- */

/* A Redis lock library's value: 1..LS_VALUE_MAX printable ASCII bytes. */
bool ls_value_ok(const char *value, size_t len);

/* Renews or releases, through lt_foreign, the lease (name, token) or
 * value or whatever holds name (NUL-ended, len bytes) shows, wherever it
 * is held: LS_PENDING, or an error at once in now. */
enum ls_status ls_foreign_start(struct lsess *s, const char *name, size_t len,
				const struct lt_foreign_req *fr, struct ls_result *now,
				ls_done_cb cb, void *arg);

/* --- lsess_shared.c --- */

/* Ends s's shared acquire without an answer (a grant that lands is
 * released). */
void ls_shared_drop(struct lsess *s);
/* Releases rec's shared lease (rec kind LS_KIND_SHARED), then cb as
 * sh_lease_release_then says; rec is left to the caller. */
void ls_shared_release(struct ls_rec *rec, lt_renew_cb cb, void *arg);

/* --- lsess_test.c --- */

/* Ends s's test wait without an answer. */
void ls_test_drop(struct lsess *s);
/* The lock name of s's test wait (a refusal's), or NULL (an advance). */
const char *ls_test_wait_name(const struct lsess *s);

/* --- lsess_watch.c --- */

/* A lease of name changed hands through this replica: its watchers read. */
void ls_changed(struct lsvc *svc, const char *name);
/* The lock name a watcher watches. */
const char *ls_watch_name(const struct ls_watcher *w);
/* Ends s's watch without an answer. */
void ls_watch_drop(struct lsess *s);
/* Frees every group and watcher (lsvc_free). */
void ls_watch_free_all(struct lsvc *svc);

/* lsess_secret.c: a new secret (LS_SECRET_LEN hex digits into secret,
 * LS_SECRET_LEN + 1 bytes) and its hash (STORE_SECRET_HASH_LEN + 1 bytes);
 * false when the random source failed. */
bool ls_secret_new(char *secret, char *hash) __attribute__((warn_unused_result));
/* The hash of a secret of 1..LS_SECRET_MAX bytes; false for another length. */
bool ls_secret_hash(const char *secret, size_t len, char *hash) __attribute__((warn_unused_result));

#endif
