/*
 * store: the item operations the lease core needs, asynchronous.
 *
 * A store keeps one item per lock, at the key LOCK#<name> (sort key LOCK
 * when the table has one), in the format of docs/lease-rules.md. The core
 * submits a struct store_req; the store completes it later, always through
 * the callback and never inside store_submit(), on the one event loop.
 *
 * Implementations: store_memory (embedded, in process) and
 * core/dynamodb (Amazon DynamoDB). Both must give the same results for the
 * same requests; tests/unit/test_store_contract.c holds them to that.
 *
 * Conditions and results, per operation:
 *   ACQUIRE   SET owner, rvn, arvn = :rvn (the acquire's own rvn, which
 *             renewals and releases leave), leaseMs, _type, holder (REMOVE
 *             holder when NULL), ttl; ADD fence 1; with .waiter also REMOVE
 *             waiter, waiterMs.  Condition (unless .unconditional), always
 *             (attribute_not_exists(arvn) OR arvn <> :rvn), and without .waiter:
 *             (attribute_not_exists(owner) AND attribute_not_exists(waiter))
 *             OR rvn = :seen_rvn (when seen_rvn is set); with .waiter:
 *             (attribute_not_exists(waiter) OR waiter = :waiter) AND
 *             (attribute_not_exists(owner) OR rvn = :seen_rvn) — a free
 *             item announced for that waiter is free for this write, and
 *             no other waiter's announcement is removed; and, when there is
 *             an item, that it is a lock whose fence can rise: _type = LOCK,
 *             fence absent or 0 <= fence < INT64_MAX, and an owner only
 *             with rvn and leaseMs (so that nothing is written on another
 *             application's item or on a fence that would overflow;
 *             DynamoDB cannot test that a number is an integer, so there a
 *             fraction in range is written on, and then refused).
 *             No branch for the item's owner alone, and never on an item
 *             this very acquire wrote (its arvn): an attempt of an acquire
 *             that lands after its lease renewed (a retry, a late or
 *             duplicated delivery) would put the acquire's rvn back, which a
 *             waiter may have seen for a whole lease, and raise the fence
 *             under the lease's token; one that lands after its lease's
 *             release would hold the lock again for a lease with nobody
 *             holding it (arvn stops that unless another acquire wrote the
 *             item in between). With .has_seen_fence (the item the acquire
 *             decided on, read or answered), also fence = :seen_fence, or
 *             attribute_not_exists(fence) for 0 (no item, or no fence yet):
 *             every acquire raises the fence, so an attempt of it never
 *             lands once any acquire was written after that item (its own
 *             retry included). Instead, a refusal by an item that
 *             shows this very owner AND rvn (store_acquire_applied: an
 *             earlier attempt of this request applied, nothing since) is
 *             answered OK with that item, written on no further: the fence
 *             rises once per acquire. A new acquire under an owner id the
 *             item already shows (a retried acquire of a new request) is
 *             refused like any other; it may write on the rvn it sees.
 *             With .secret_hash also SET secretHash = :secret_hash (the
 *             SHA-256, lowercase hex, of the lease's secret: LOCK.ACQUIRE
 *             ... ADOPTABLE), else REMOVE secretHash: a hash is never left
 *             from an earlier lease.
 *             Session mode (docs/design/replica-heartbeat.md), with
 *             .session (a session key, STORE_SESSION_KEY_MAX): also SET
 *             session = :session, sleaseMs = :lease_ms (the real lease)
 *             and leaseMs = STORE_SESSION_LOCK_LEASE_MS instead, and
 *             REMOVE the TTL attribute (.ttl unused): a session-mode lock
 *             must not vanish while its session lives. Without .session,
 *             REMOVE session, sleaseMs: a per-lease write never leaves a
 *             session on an item. So do RENEW and ADOPT.
 *             A takeover of a session-mode holder (with .seen_rvn):
 *             .seen_session adds session = :seen_session to the rvn
 *             branch (attribute_not_exists(session) for ""), and
 *             .sess_check checks the session item of .seen_session in
 *             the same atomic write (DynamoDB: one TransactWriteItems of
 *             the lock's Update and a ConditionCheck of the session's
 *             key, sort key LOCK when the table has one):
 *             STORE_SESS_CHECK_RVN, it exists with rvn = :sess_rvn;
 *             STORE_SESS_CHECK_ABSENT, it does not exist (a missing
 *             session is an observed value, not a dead one). A check needs
 *             .seen_rvn, .seen_session (not "") and .has_seen_fence. OK:
 *             the new item (DynamoDB: the transaction answers none, so
 *             the item as the write made it, the attributes it did not
 *             write absent). REFUSED: the lock's own condition failed,
 *             the item that refused it (the applied rule above holds:
 *             OK when it shows this owner and rvn); or the session's
 *             check did, .session_refused and the lock item as it is
 *             (DynamoDB reads it back with a consistent GetItem, counted
 *             as a READ; when that read fails, its failure is answered).
 *             Counted as one ACQUIRE.
 *             OK: the new item.  REFUSED: the item that refused it.
 *   RENEW     SET rvn, leaseMs, holder|REMOVE holder, ttl if owner = :owner
 *             and, with .seen_rvn (the rvn the lease last wrote), rvn =
 *             :seen_rvn OR rvn = :rvn (this very renewal, an earlier attempt
 *             of which applied: its retry answers OK). So an attempt that
 *             lands after a newer renewal of the lease (a retry, a late or
 *             duplicated delivery) is refused instead of putting its older
 *             rvn back, which a waiter may have seen for a whole lease.
 *             Never creates an item. REFUSED: the old item, or none.
 *             With .session in session mode, without it per lease, as
 *             ACQUIRE's.
 *   RELEASE   REMOVE owner, leaseMs, holder, secretHash, session, sleaseMs
 *             SET ttl if owner = :owner
 *             (.unconditional: if the item exists). Never creates an item.
 *             With .token > 0 (a release from outside the holding replica:
 *             by (name, token), or an operator's forced release) also SET
 *             freed = :token, freedBy = "token" (or "force" with .forced),
 *             so that the holder's next renewal tells a release from a
 *             takeover. ACQUIRE leaves freed and freedBy alone.
 *             A retry refused by an item with no owner is this release,
 *             applied by an earlier attempt: OK. So is one refused by an
 *             item of another owner after an attempt whose outcome is
 *             unknown (a timeout, a transport error, a 5xx): that attempt
 *             applied and the lock was granted again after it (or the lease
 *             had ended meanwhile: either way no longer this owner's).
 *             OK then carries the item as it is.
 *             With .token and .revoke_session (`--heartbeat replica`), the
 *             same write, a revocation entry and the session's revSeq in
 *             one transaction (store_revoke.h); ADOPT likewise.
	     A lost lease's release (`--heartbeat replica`) may also be
	     conditioned on the item as the lease last knew it: with
	     .seen_rvn also rvn = :seen_rvn, with .seen_session also
	     session = :seen_session (never with .unconditional, .token or
	     .revoke_session). REFUSED then: the item as it is.
	     Every release also admits the readers registered behind the
	     lease (store_shared.h): REMOVE rwaiters SET radmit =
	     if_not_exists(rwaiters, "-"); ACQUIRE (unless .unconditional)
	     is refused while radmit is a string set: those readers go
	     first, then its waiter (or a writer that saw the set stand
	     still for a lease clears it: RCLEAR).
 *   ORPHAN    SET orphan = :owner if owner = :owner: the holding replica
 *             marks its lease orphaned (its connection closed while the
 *             replica drains), still owning it; rvn, fence, leaseMs stay.
 *             The marker counts only while it equals owner (a later
 *             lease's owner differs, so a stale one marks nothing).
 *             Never creates an item. OK: the new item. REFUSED: the item,
 *             or none.
 *   ADOPT     SET owner = :owner, rvn = :rvn, leaseMs, holder|REMOVE holder,
 *             secretHash = :secret_hash, adoptedFrom = :prev_owner, ttl
 *             REMOVE orphan if owner = :prev_owner AND fence = :token AND
 *             orphan = :prev_owner AND secretHash = :prev_secret_hash: an
 *             orphaned lease changes hands without a gap and keeps its
 *             fence; the new rvn restarts every waiter's count, and
 *             adoptedFrom tells the old owner's replica, at its next
 *             renewal, that its lease was adopted, not lost. With
 *             .session in session mode, without it per lease, as
 *             ACQUIRE's. OK: the new
 *             item. REFUSED: the item, or none (an attempt that applied
 *             already shows owner and rvn: the caller tells).
 *   ANNOUNCE  SET waiter = :waiter, waiterMs if attribute_exists(owner) AND
 *             attribute_not_exists(waiter) AND _type = LOCK: a waiting
 *             replica says so on a held item, leaving rvn (so takeover
 *             timing), owner, fence and leaseMs alone. Never creates an
 *             item. OK: the new item. REFUSED: the item, or none.
 *   WITHDRAW  REMOVE waiter, waiterMs if waiter = :waiter. OK / REFUSED.
 *   READ      consistent read. OK with item.exists false when there is none.
 *   DELETE    unconditional delete. OK.
 *   CHECK     fencing check: owner = :owner AND fence = :token, as one
 *             ConditionCheck of a transaction. OK, or REFUSED with the item.
 *
 * And one operation over many items, store_scan(): a page of the lock
 * items of the table (keys LOCK#..., sort key LOCK when there is one), in
 * the store's order, with a cursor for the next page.
 */
#ifndef LG_STORE_H
#define LG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_ID_MAX	      64   /* owner and rvn ids, bytes without NUL */
#define STORE_HOLDER_MAX      256  /* holder label, bytes without NUL */
#define STORE_NAME_MAX	      2000 /* lock name: LOCK#<name> fits a 2048-byte key */
#define STORE_MSG_MAX	      256
#define STORE_SECRET_HASH_LEN 64 /* secretHash: SHA-256 as lowercase hex */
/* a script's hash on a lock key: "field value" pairs, space-separated */
#define STORE_HASH_MAX 1040
/* A replica's session (core/store/store_session.h): its key
 * "SESSION#<replica>#<incarnation>", and its parts' bounds */
#define STORE_SESSION_REPLICA_MAX 64 /* replica id: printable, no '#' */
#define STORE_SESSION_INC_LEN	  32 /* incarnation: 128 bits, lowercase hex */
#define STORE_SESSION_KEY_MAX	  (8 + STORE_SESSION_REPLICA_MAX + 1 + STORE_SESSION_INC_LEN)
/* The leaseMs of a lock held in session mode (docs/design/
 * replica-heartbeat.md): 10 years, a lease the reference's clients and
 * older leasegate binaries never count to, so they never take such a lock
 * over; the real lease is sleaseMs. */
#define STORE_SESSION_LOCK_LEASE_MS 315360000000LL

enum store_op {
	STORE_ACQUIRE,
	STORE_RENEW,
	STORE_RELEASE,
	STORE_READ,
	STORE_DELETE,
	STORE_CHECK,
	STORE_ANNOUNCE,
	STORE_WITHDRAW,
	STORE_ORPHAN,
	STORE_ADOPT,
	STORE_SCAN,	/* store_scan() only, never in a store_req: for the counts */
	STORE_TRANSACT, /* store_transact() only, never in a store_req: counts */
	STORE_OP_COUNT
};

enum store_status {
	STORE_OK,	 /* done; .item is the item after the operation */
	STORE_REFUSED,	 /* condition failed; .item is the refusing item or absent */
	STORE_TRANSIENT, /* may work later; .error_type names it (throttling...) */
	STORE_NO_TABLE,	 /* the table does not exist */
	STORE_FATAL	 /* retrying will not help; .message says why */
};

/* A lock item as read. Strings are empty when the attribute is absent.
 * An item at a lock's key is not necessarily a lock (another application's,
 * or edited by hand): type is "LOCK" only for a lock, and fence_bad marks a
 * fence that is no int64 (another type, a fraction, past int64: DynamoDB's
 * numbers have 38 digits). The stores report such items as they are; the
 * core judges them (core/lt_item.c). */
struct lock_item {
	bool exists;
	bool has_owner, has_rvn, has_lease, has_fence;
	bool fence_bad; /* has_fence, but not an int64 (fence is 0 then) */
	char owner[STORE_ID_MAX + 1];
	char rvn[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1];
	char type[16];
	int64_t fence;
	int64_t lease_ms;
	int64_t ttl; /* epoch seconds, 0 when absent */
	/* The announcement of a waiting replica (see "Fair across replicas"
	 * in locktable.c): its id, "" when absent, and the poll interval it
	 * keeps while announced. */
	bool has_waiter;
	char waiter[STORE_ID_MAX + 1];
	int64_t waiter_ms;
	/* The last release from outside the holding replica (see RELEASE):
	 * the fence it ended, 0 when none; freed_forced: by force. */
	int64_t freed;
	bool freed_forced;
	/* The absolute expiry a script wrote (core/store/store_kv.h): wall-clock
	 * epoch ms, valid only while rvn equals exp_rvn (the lease core's
	 * writes change rvn and leave these alone, which voids them). 0 and
	 * "" when absent. */
	int64_t expires_at;
	char exp_rvn[STORE_ID_MAX + 1];
	/* The hash of the lease's secret (ACQUIRE .secret_hash), "" when the
	 * lease has none. An item edited by hand to another form reads as
	 * one no secret matches (never as none). */
	char secret_hash[STORE_SECRET_HASH_LEN + 1];
	/* ORPHAN's marker (the owner it marked) and ADOPT's (the owner the
	 * lease was adopted from), "" when absent */
	char orphan[STORE_ID_MAX + 1];
	char adopted_from[STORE_ID_MAX + 1];
	/* The slots of the name held shared now (core/store/store_shared.h:
	 * scount), 0 when absent: an exclusive acquire cannot win while it
	 * is above 0. */
	int64_t scount;
	/* Readers registered behind an exclusive (rwaiters) and admitted by
	 * its release (radmit): each a string set on the item
	 * (core/store/store_shared.h). */
	bool rwaiters, radmit;
	/* The hash a script wrote on the key (core/store_kv.h, attribute
	 * hfields): "field value ..." pairs separated by single spaces,
	 * meaningful only while owner starts with "h:"; "" when absent. */
	char hash[STORE_HASH_MAX + 1];
	/* A lock held in session mode (ACQUIRE's .session): the key of the
	 * holder's session and the real lease (leaseMs is then
	 * STORE_SESSION_LOCK_LEASE_MS); "" and 0 when absent. */
	char session[STORE_SESSION_KEY_MAX + 1];
	int64_t slease_ms;
};

/* The session check of a takeover (ACQUIRE). */
enum store_sess_check {
	STORE_SESS_CHECK_NONE,	 /* none: one conditional write */
	STORE_SESS_CHECK_RVN,	 /* the session exists with rvn = .sess_rvn */
	STORE_SESS_CHECK_ABSENT, /* the session does not exist */
	STORE_SESS_CHECK_COUNT
};

struct store_req {
	enum store_op op;
	const char *name;     /* lock name, 1..STORE_NAME_MAX bytes */
	const char *owner;    /* ACQUIRE: new owner; RENEW/RELEASE/CHECK: mine */
	const char *rvn;      /* ACQUIRE/RENEW: the new rvn */
	const char *seen_rvn; /* ACQUIRE: takeover condition; RENEW: the rvn
				 the lease last wrote; RELEASE: a condition
				 (see RELEASE); or NULL */
	/* ACQUIRE: the fence of the item it decided on (0: none, or no
	 * item), a condition with has_seen_fence (see ACQUIRE) */
	int64_t seen_fence;
	bool has_seen_fence;
	const char *holder; /* ACQUIRE/RENEW: label, or NULL to remove */
	const char *waiter; /* ACQUIRE: the announcement it may take and
			       removes, or NULL; ANNOUNCE/WITHDRAW: mine */
	int64_t waiter_ms;  /* ANNOUNCE: my poll interval while announced */
	int64_t lease_ms;   /* ACQUIRE/RENEW */
	/* ACQUIRE: the hash of the new lease's secret, STORE_SECRET_HASH_LEN
	 * lowercase hex digits, or NULL for a lease without one */
	const char *secret_hash;
	/* ADOPT: the owner the lease is taken from and the hash of the secret
	 * presented (the item's must be this); the new hash is secret_hash */
	const char *prev_owner;
	const char *prev_secret_hash;
	int64_t ttl;	    /* epoch seconds to write, 0 = no TTL attribute */
	int64_t token;	    /* CHECK: fencing token; RELEASE: freed (0: none) */
	bool forced;	    /* RELEASE with .token: freedBy "force" */
	bool unconditional; /* ACQUIRE/RELEASE for the testing helpers */
	/* RELEASE with .token, ADOPT: the key of the session that held the
	 * lease ("SESSION#<replica>#<incarnation>"), or NULL: the ending
	 * also writes its revocation (core/store/store_revoke.h) */
	const char *revoke_session;
	/* store_name_hash(name) when the caller has it (a lock keeps its
	 * own), else 0: a store that hashes names then need not again */
	uint64_t name_hash;
	/* Session mode (see ACQUIRE): ACQUIRE/RENEW/ADOPT, the holder's
	 * session key ("SESSION#<replica>#<incarnation>"), or NULL to write
	 * per lease; ACQUIRE with seen_rvn, the session the item showed (""
	 * for none), or NULL for no condition on it; RELEASE, the session
	 * the item must name (see RELEASE), or NULL; and the check of that
	 * session's item, with the rvn it must have (STORE_SESS_CHECK_RVN,
	 * else NULL). */
	const char *session;
	const char *seen_session;
	enum store_sess_check sess_check;
	const char *sess_rvn;
	/* the span of the lock operation this request is for (core/trace.h):
	 * a store that sends requests records each as a child span; NULL:
	 * untraced. Valid during store_submit() only: a store copies what it
	 * keeps. */
	struct trace_span *span;
};

struct store_result {
	enum store_status status;
	struct lock_item item;
	/* REFUSED, with .revoke_session: the session is gone (nothing was
	 * written; .item is the lock item as it is) */
	bool session_gone;
	const char *error_type; /* static string; set for TRANSIENT (and FATAL) */
	char message[STORE_MSG_MAX];
	/* REFUSED by a takeover's session check (ACQUIRE's .sess_check), not
	 * by the lock's own condition */
	bool session_refused;
	/* TRANSIENT: no attempt of the request was ever sent (refused before:
	 * the requests to DynamoDB saturated, no credentials, no time left),
	 * so it wrote nothing */
	bool not_sent;
};

/* Called exactly once per submitted request unless it was cancelled.
 * res is valid during the call only. */
typedef void (*store_cb)(void *arg, const struct store_result *res);

struct store;
struct store_call; /* one request in flight */
struct store_scan_result;
struct store_tx_req;
struct store_tx_result;
struct store_kv_req;
struct store_kv_result;
struct store_blob_result;
/* A blob's answer (store_blob.h). */
typedef void (*store_blob_cb)(void *arg, const struct store_blob_result *res);
struct store_chan_result;
/* A channel's answer (store_chan.h). */
typedef void (*store_chan_cb)(void *arg, const struct store_chan_result *res);
struct store_sh_req;
struct store_sh_result;
/* An answer about a shared name (store_shared.h). */
typedef void (*store_sh_cb)(void *arg, const struct store_sh_result *res);
struct store_session_req;
struct store_session_result;
/* An answer about a session item (store_session.h). */
typedef void (*store_session_cb)(void *arg, const struct store_session_result *res);
struct store_revoke_req;
struct store_revoke_result;
struct store_batch_result;
/* An answer about revocations (store_revoke.h). */
typedef void (*store_revoke_cb)(void *arg, const struct store_revoke_result *res);
/* A keyspace commit's answer (store_kv.h). */
typedef void (*store_kv_cb)(void *arg, const struct store_kv_result *res);
/* A fenced transaction's answer (store_tx.h). */
typedef void (*store_tx_cb)(void *arg, const struct store_tx_result *res);

struct store_ops {
	struct store_call *(*submit)(struct store *s, const struct store_req *req, store_cb cb,
				     void *arg);
	void (*cancel)(struct store *s, struct store_call *call);
	/* Optional: a consistent read answered at once, for stores in this
	 * process. NULL when the store can only answer later. */
	bool (*read_now)(struct store *s, const char *name, struct lock_item *out);
	void (*free)(struct store *s);
	/* store_scan(); cancelled with cancel. */
	struct store_call *(*scan)(struct store *s, const char *cursor, unsigned limit,
				   struct store_scan_result *res, void (*cb)(void *arg), void *arg);
	/* store_transact() (store_tx.h); cancelled with cancel. */
	struct store_call *(*transact)(struct store *s, const struct store_tx_req *req,
				       store_tx_cb cb, void *arg);
	/* store_kv_commit() (store_kv.h); cancelled with cancel. NULL: the
	 * store has none. */
	struct store_call *(*kv_commit)(struct store *s, const struct store_kv_req *req,
					store_kv_cb cb, void *arg);
	/* store_blob_put() and store_blob_get() (store_blob.h); cancelled
	 * with cancel. NULL: the store has none. */
	struct store_call *(*blob_put)(struct store *s, const char *kind, const char *id,
				       const void *data, size_t len, store_blob_cb cb, void *arg);
	struct store_call *(*blob_get)(struct store *s, const char *kind, const char *id,
				       store_blob_cb cb, void *arg);
	/* store_chan_publish() and store_chan_read() (store_chan.h);
	 * cancelled with cancel. NULL: the store has none. */
	struct store_call *(*chan_publish)(struct store *s, const char *id, const char *origin,
					   const void *data, size_t len, int64_t ttl,
					   store_chan_cb cb, void *arg);
	struct store_call *(*chan_read)(struct store *s, const char *id, store_chan_cb cb,
					void *arg);
	/* store_sh_submit() (store_shared.h); cancelled with cancel. NULL:
	 * the store has no shared items. */
	struct store_call *(*sh_submit)(struct store *s, const struct store_sh_req *req,
					store_sh_cb cb, void *arg);
	/* store_session_submit() (store_session.h); cancelled with cancel.
	 * NULL: the store has no session items. */
	struct store_call *(*session_submit)(struct store *s, const struct store_session_req *req,
					     store_session_cb cb, void *arg);
	/* store_revoke_submit() (store_revoke.h); cancelled with cancel.
	 * NULL: the store has no revocations (nor takes .revoke_session). */
	struct store_call *(*revoke_submit)(struct store *s, const struct store_revoke_req *req,
					    store_revoke_cb cb, void *arg);
	/* store_batch_read() (store_batch.h); cancelled with cancel. NULL:
	 * the store cannot. */
	struct store_call *(*batch_read)(struct store *s, struct store_batch_result *res,
					 void (*cb)(void *arg), void *arg);
};

struct store {
	const struct store_ops *ops;
	const char *table;		   /* for logs and errors */
	uint64_t requests[STORE_OP_COUNT]; /* requests sent, by operation */
	uint64_t in_flight;
};

/* Submits req (copied: the caller's strings need not outlive the call).
 * Returns a handle to cancel it, or NULL on out-of-memory, session fields
 * out of their bounds (store_req_session_valid), or a .revoke_session that
 * store_revoke_end_valid refuses or the store cannot write (no callback
 * then).
 * The callback always comes later, from the event loop. */
struct store_call *store_submit(struct store *s, const struct store_req *req, store_cb cb,
				void *arg) __attribute__((warn_unused_result));

/* Guarantees the callback of call will not run. The request may still reach
 * the store. call is invalid afterwards. NULL is allowed. */
void store_cancel(struct store *s, struct store_call *call);

/* Reads name at once into *out when the store can (the embedded store):
 * true, counted as a READ request. false: use a READ request. */
bool store_read_now(struct store *s, const char *name, struct lock_item *out);

void store_free(struct store *s);

/* --- scan --- */

#define STORE_SCAN_MAX	 1000 /* items per page at most */
#define STORE_CURSOR_MAX 4100 /* bytes of a cursor: see store_scan_result */

struct store_scan_entry {
	char name[STORE_NAME_MAX + 1]; /* the lock name (the key without LOCK#) */
	struct lock_item item;	       /* as read, not judged: see lock_item */
};

/* A page of a scan. The caller allocates entries (room for limit) and
 * keeps res alive until the callback. */
struct store_scan_result {
	enum store_status status; /* OK, TRANSIENT, NO_TABLE or FATAL */
	const char *error_type;
	char message[STORE_MSG_MAX];
	struct store_scan_entry *entries; /* set by the caller */
	unsigned count;			  /* entries filled */
	/* Where the next page starts; "" when the scan is complete. Opaque,
	 * printable ASCII: the lowercase hex of the name of the last lock the
	 * page read (DynamoDB: of its last evaluated key; when that key is
	 * another application's item, "~" and the base64url of its key).
	 * store_scan() refuses a cursor of a form its store does not give.
	 * A page may hold fewer than limit items (DynamoDB applies the limit
	 * before its filter) and still have a cursor. */
	char cursor[STORE_CURSOR_MAX + 1];
};

/* Reads one page of at most limit (1..STORE_SCAN_MAX) lock items from
 * cursor ("" or NULL: the start) into *res, then cb(arg) from the loop; a
 * strongly consistent read where the store has one. Counted as one
 * STORE_SCAN request. Returns a handle for store_cancel, or NULL on
 * out-of-memory or a bad cursor or limit (no callback then). */
struct store_call *store_scan(struct store *s, const char *cursor, unsigned limit,
			      struct store_scan_result *res, void (*cb)(void *arg), void *arg)
	__attribute__((warn_unused_result));

/* For the stores: the cursor of a page that ends at the lock name (its
 * lowercase hex; buf has STORE_CURSOR_MAX + 1 bytes), and back: false when
 * cursor is not the hex of 1..STORE_NAME_MAX bytes without NUL (name has
 * STORE_NAME_MAX + 1 bytes). */
void store_cursor_of(const char *name, char *buf);
bool store_cursor_name(const char *cursor, char *name) __attribute__((warn_unused_result));

uint64_t store_requests_total(const struct store *s);
const char *store_op_name(enum store_op op);
const char *store_status_name(enum store_status st);

/* The session fields of req within their bounds (see ACQUIRE and
 * RELEASE): on a RELEASE, .seen_session a session key and .seen_rvn an id
 * (either NULL), on a release by its owner only; else .session
 * only on ACQUIRE, RENEW, ADOPT and a session key (printable, at most
 * STORE_SESSION_KEY_MAX bytes, "SESSION#" and more); .seen_session only on
 * an ACQUIRE with .seen_rvn, "" or a session key; a .sess_check only on a
 * conditional ACQUIRE with .seen_rvn, .has_seen_fence and a .seen_session
 * key, with .sess_rvn an id (1..STORE_ID_MAX printable bytes) for
 * STORE_SESS_CHECK_RVN and NULL otherwise. */
bool store_req_session_valid(const struct store_req *req) __attribute__((warn_unused_result));

/* An ACQUIRE of owner and rvn refused by item: true when the item shows
 * that owner and that rvn, i.e. an earlier attempt of that very request
 * applied (ACQUIRE above): the stores answer OK with the item then. */
bool store_acquire_applied(const char *owner, const char *rvn, const struct lock_item *item);

/* The hash of a lock name for the in-process tables (FNV-1a, 64 bits). */
uint64_t store_name_hash(const char *name);

/* Fills buf (>= 33 bytes) with a new random 32-hex-digit id. */
void store_new_id(char *buf);

#endif
