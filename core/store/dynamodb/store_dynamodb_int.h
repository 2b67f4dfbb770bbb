/*
 * store_dynamodb_int: what store_dynamodb.c (requests, attempts, retries)
 * and store_dynamodb_open.c (DescribeTable, CreateTable, TTL) share.
 * Private to those two files; the gateway uses store_dynamodb.h.
 */
#ifndef LG_STORE_DYNAMODB_INT_H
#define LG_STORE_DYNAMODB_INT_H

#include "core/store/dynamodb/store_dynamodb.h"
#include "core/trace.h"

struct ddb_store;

/* How a call ends: a store request hands its result to the core; an open
 * step feeds the open state machine (body: a 2xx body, else NULL). */
typedef void (*ddbs_done_fn)(struct store_call *c, struct store_result *res, const char *body,
			     size_t len);

struct store_call {
	struct store_call *prev, *next;
	struct ddb_store *ds;
	ddbs_done_fn done;
	store_cb cb;
	store_tx_cb tx_cb;	  /* STORE_TRANSACT (ddb_transact.c) */
	unsigned tx_checks;	  /* its lock checks ahead of the client's items */
	store_kv_cb kv_cb;	  /* a keyspace commit (ddb_kv.c), also STORE_TRANSACT */
	store_blob_cb blob_cb;	  /* a blob (ddb_blob.c) */
	store_chan_cb chan_cb;	  /* a channel (ddb_chan.c) */
	store_sh_cb sh_cb;	  /* a shared name (ddb_shared.c) */
	struct ddb_sh *sh;	  /* its request and answer so far, freed with the call */
	store_session_cb sess_cb; /* a session item (ddb_session.c) */
	struct ddb_sess *sess;	  /* its request and answer so far, freed with the call */
	struct ddb_slock *slock;  /* a session-mode takeover's request (ddb_slock.c), likewise */
	store_revoke_cb rev_cb;	  /* revocations (ddb_revoke.c) */
	struct ddb_rev *rev;	  /* its request and answer so far, freed with the call */
	/* a batch read (ddb_batch.c): the caller's result, filled round by
	 * round (its callback page_cb, its rounds counted in limit) */
	struct store_batch_result *batch;
	bool again; /* its done function sent it on (ddbs_continue) */
	/* the done function reads the answer's body itself, a refusal's too
	 * (no lock item parsed): a session item's call */
	bool raw;
	bool urgent; /* sent ahead, as renewals are: a session's heartbeat */
	void *arg;
	/* a scan: the caller's page (filled from the answer) and callback */
	struct store_scan_result *page;
	void (*page_cb)(void *arg);
	unsigned limit;
	enum store_op op;
	enum ddb_op dop;
	bool unconditional;
	char *body;
	size_t body_len;
	int attempts, spent;
	bool sent; /* an attempt reached the HTTP client: it may have applied */
	/* an attempt was answered with a failure that leaves its outcome
	 * unknown (a transport error, a timeout, a 5xx: DDB_C_TRANSIENT), so
	 * it may have applied; a throttled or refused one did not */
	bool maybe_applied;
	bool skew_retried;
	int64_t deadline_ms, attempt_ms;
	int64_t sent_us; /* when the attempt in flight was sent */
	struct http_req *http;
	struct timer timer;
	enum { JOB_SEND, JOB_FAIL, JOB_FINISH } job; /* what the timer does */
	struct ddb_verdict verdict;		     /* JOB_FAIL */
	struct store_result res;		     /* JOB_FAIL's message, JOB_FINISH's result */
	struct trace_span *span; /* this request, under its lock operation's span */
	char request_id[80];	 /* the last answer's x-amzn-RequestId */
	/* ACQUIRE: its owner and rvn, "" else: a refusal by an item showing
	 * both is this very acquire, applied by an earlier attempt (store.h).
	 * RELEASE: the owner it frees (acq_rvn ""): a refusal by an item of
	 * another owner after an attempt that may have applied is this
	 * release, then the lock's next lease */
	char acq_owner[STORE_ID_MAX + 1], acq_rvn[STORE_ID_MAX + 1];
	long http_status; /* the last answer's status */
	char chan_id[41]; /* a channel's (ddb_chan.c): its id, for a trim */
};

enum open_state { OPEN_NONE, OPEN_RUNNING, OPEN_DONE };

struct ddb_store {
	struct store base;
	struct clock *clock;
	struct http *http;
	bool own_http;
	struct store_dynamodb_config cfg;
	const struct ddb_retry_policy *policy;
	struct ddb_quota quota;
	struct ddb_keys keys;
	char table[DDB_TABLE_NAME_MAX + 1];
	char region[64];
	char pk[DDB_KEY_NAME_MAX + 1], sk[DDB_KEY_NAME_MAX + 1];
	char ttl[DDB_KEY_NAME_MAX + 1];
	char url[512], host[256];
	struct store_call *calls;
	struct store_dynamodb_stats stats;
	struct sigv4_key_cache key_cache; /* one HMAC per signature, not five */
	/* open */
	bool keys_given;
	struct timer open_timer;
	enum open_state open;
	bool created;
	int64_t open_until;
	store_cb open_cb;
	void *open_arg;
};

/* A call of DynamoDB operation dop that ends with done, with budget_ms
 * before its deadline, linked into ds. NULL on out-of-memory. */
struct store_call *ddbs_new_call(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done,
				 int64_t budget_ms);

/* Signs and sends the next attempt of c (c->body is set). */
void ddbs_send(struct store_call *c);

/* Ends c with c->res from the loop (never inside the caller). */
void ddbs_defer(struct store_call *c);

/* A call of dop with body (len bytes, taken: freed with the call; NULL:
 * out of memory) that ends with done: sent, or ended FATAL from the loop
 * when the store is not open or body is NULL. Its callback and argument
 * are the caller's to set before the loop runs. NULL on out-of-memory. */
struct store_call *ddbs_start(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done, char *body,
			      size_t len);

/* The second half of ddbs_start, for a call made with ddbs_new_call and
 * set up (its flags: raw, urgent) before it goes: sent, or ended FATAL
 * from the loop. body (len bytes) is taken. */
void ddbs_go(struct store_call *c, char *body, size_t len);

/* From c's done function: c goes on as a request of dop that ends with
 * done, on the same handle (the caller may still cancel it): body (len
 * bytes, taken; NULL: out of memory) replaces its own, its attempts and
 * deadline (op_timeout_ms) start anew, and it is sent, or ended FATAL
 * from the loop. The store's in_flight counts it again. */
void ddbs_continue(struct store_call *c, enum ddb_op dop, ddbs_done_fn done, char *body,
		   size_t len);

/* Frees c without ending it: no done, no callback. */
void ddbs_drop(struct store_call *c);

bool ddbs_copy(char *dst, size_t cap, const char *src);

/* store_transact() of the DynamoDB store (ddb_transact.c). */
struct store_call *ddbs_transact(struct store *s, const struct store_tx_req *req, store_tx_cb cb,
				 void *arg);

/* store_kv_commit() of the DynamoDB store (ddb_kv.c). */
struct store_call *ddbs_kv_commit(struct store *s, const struct store_kv_req *req, store_kv_cb cb,
				  void *arg);

/* Initialises the open's timer (store_dynamodb_new). */
/* Blobs (core/store_blob.h; ddb_blob.c). */
struct store_call *ddbs_blob_put(struct store *s, const char *kind, const char *id,
				 const void *data, size_t len, store_blob_cb cb, void *arg);
struct store_call *ddbs_blob_get(struct store *s, const char *kind, const char *id,
				 store_blob_cb cb, void *arg);

/* Channels (core/store_chan.h; ddb_chan.c). */
struct store_call *ddbs_chan_publish(struct store *s, const char *id, const char *origin,
				     const void *data, size_t len, int64_t ttl, store_chan_cb cb,
				     void *arg);
struct store_call *ddbs_chan_read(struct store *s, const char *id, store_chan_cb cb, void *arg);

/* Shared names (core/store_shared.h; ddb_shared.c). */
struct store_call *ddbs_sh_submit(struct store *s, const struct store_sh_req *req, store_sh_cb cb,
				  void *arg);
/* ACQUIRE with a session check (store.h; ddb_slock.c): the takeover of a
 * session-mode holder. */
struct store_call *ddbs_slock_takeover(struct store *s, const struct store_req *req, store_cb cb,
				       void *arg);
/* Session items (core/store/store_session.h; ddb_session.c). */
struct store_call *ddbs_session_submit(struct store *s, const struct store_session_req *req,
				       store_session_cb cb, void *arg);
/* store_batch_read() of the DynamoDB store (core/store/store_batch.h;
 * ddb_batch.c). */
struct store_call *ddbs_batch_read(struct store *s, struct store_batch_result *res,
				   void (*cb)(void *arg), void *arg);
/* Revocations (core/store/store_revoke.h; ddb_revoke.c): READ and
 * DELETE, and an ending (a store_req with .revoke_session). */
struct store_call *ddbs_revoke_submit(struct store *s, const struct store_revoke_req *req,
				      store_revoke_cb cb, void *arg);
struct store_call *ddbs_revoke_end(struct store *s, const struct store_req *req, store_cb cb,
				   void *arg);
/* The TransactWriteItems body of a CHECK (store_shared.h: the header's
 * ConditionCheck, then the slot's; no ClientRequestToken), to free with
 * ddb_body_free; *len its length. NULL on a request that is no valid
 * CHECK, or out-of-memory. */
char *ddb_sh_check_body(const struct ddb_keys *keys, const struct store_sh_req *r, size_t *len)
	__attribute__((warn_unused_result));

void ddbs_open_init(struct ddb_store *ds);

#endif
