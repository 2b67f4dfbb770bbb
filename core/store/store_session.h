/*
 * store_session: the session item of a replica in `--heartbeat replica`
 * (docs/design/replica-heartbeat.md) — one item per replica incarnation
 * that its heartbeat renews instead of each lease: the item and its
 * conditional writes (the lease core's side: core/lt_session.c beats it,
 * core/lt_swait.c and lt_swatch.c watch and kill it).
 *
 * The item: key SESSION#<replica>#<incarnation> (sort key LOCK when the
 * table has one), _type SESSION, and
 *   rvn         new at every heartbeat,
 *   beatSeq     the number of the write that set rvn (CREATE's, then each
 *               BEAT's, rising per incarnation: store_session_req.seq),
 *   maxLeaseMs  the longest lease the session holds or held lately,
 *   revSeq      raised by each revocation (lt_revoke.c), 0 at CREATE,
 *   holder      the replica's label, addr its address (for operators),
 *   dead        the waiter that marked it dead; absent until then,
 *   the TTL attribute (when the table has one): .ttl, epoch seconds,
 *               store_session_ttl() of maxLeaseMs.
 *
 * Operations (store_session_req.op) and their conditions:
 *   CREATE  SET _type, rvn, beatSeq, maxLeaseMs, revSeq = 0, holder, addr,
 *           ttl if attribute_not_exists(<partition key>): once per
 *           incarnation. OK: the item. REFUSED: the item there already.
 *   BEAT    SET rvn, beatSeq, maxLeaseMs, ttl if attribute_exists(<partition
 *           key>) AND attribute_not_exists(dead) AND beatSeq < :seq (or
 *           absent) — never on the rvn: a beat tried again after its
 *           answer was lost is a beat, not a lost session (refused by its
 *           own earlier attempt, it shows its seq and rvn). The seq keeps
 *           an attempt delayed past a later beat from writing an older rvn
 *           back: a waiter that saw that rvn before would find it standing
 *           still since then, and kill a live session (the simulator, seed
 *           7530). OK: the item after (revSeq with it). REFUSED: the item
 *           as it was (dead, or a seq not below), or none (gone); never
 *           creates one.
 *   KILL    SET dead = :by if rvn = :seen_rvn AND attribute_not_exists(dead):
 *           a waiter that watched that rvn for the session's maxLeaseMs
 *           marks it, once. OK: the item after. REFUSED: the item as it
 *           was (another rvn, dead already), or none.
 *   READ    the session item and the lock item LOCK#<.name>, strongly
 *           consistent, in one request (DynamoDB: one BatchGetItem, its
 *           UnprocessedKeys asked again; the embedded store: both at
 *           once). OK only when both came back; each says whether it
 *           exists. TRANSIENT when keys stayed unprocessed: .session_read
 *           and .lock_read say which came back.
 *
 * Results: OK, REFUSED (CREATE, BEAT, KILL), TRANSIENT (after the store's
 * retries), NO_TABLE, FATAL with .message, as store.h's. Both stores have
 * sessions (store_memory_session.c, dynamodb/ddb_session.c); a store
 * without them answers NULL to store_session_submit (no callback).
 * Counted in store.requests as BEAT: STORE_RENEW (and sent as urgently),
 * CREATE: STORE_ACQUIRE, KILL: STORE_RELEASE, READ: STORE_READ.
 */
#ifndef LG_STORE_SESSION_H
#define LG_STORE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/store/store.h"

/* STORE_SESSION_REPLICA_MAX, _INC_LEN and _KEY_MAX: store.h */
#define STORE_SESSION_ADDR_MAX	256
#define STORE_SESSION_LEASE_MIN 1000	 /* maxLeaseMs: as a lease, 1 s .. */
#define STORE_SESSION_LEASE_MAX 86400000 /* .. a day (docs/lease-rules.md) */
/* The TTL lies this far beyond maxLeaseMs: a session outlives any lease
 * that may still name it, and the table forgets it after. */
#define STORE_SESSION_TTL_DAYS 2

enum store_session_op {
	STORE_SESSION_CREATE,
	STORE_SESSION_BEAT,
	STORE_SESSION_KILL,
	STORE_SESSION_READ
};

struct store_session_req {
	enum store_session_op op;
	const char *replica;	 /* 1..STORE_SESSION_REPLICA_MAX bytes */
	const char *incarnation; /* STORE_SESSION_INC_LEN lowercase hex */
	const char *rvn;	 /* CREATE/BEAT: the new rvn */
	int64_t seq;		 /* CREATE/BEAT: its beatSeq, >= 0, above the last sent */
	const char *seen_rvn;	 /* KILL: the rvn the waiter watched */
	const char *by;		 /* KILL: the waiter's id, written as dead */
	int64_t max_lease_ms;	 /* CREATE/BEAT: LEASE_MIN..LEASE_MAX */
	const char *holder;	 /* CREATE: label, or NULL */
	const char *addr;	 /* CREATE: address, or NULL */
	int64_t ttl;		 /* CREATE/BEAT: epoch seconds, 0 = none */
	const char *name;	 /* READ: the lock read with the session */
	/* the span it is for (core/trace.h), or NULL: a store that sends
	 * requests records each as a child span */
	struct trace_span *span;
};

/* A session item as read. Strings are "" when absent. */
struct session_item {
	bool exists;
	char type[16];
	char rvn[STORE_ID_MAX + 1];
	int64_t beat_seq; /* -1 when absent */
	int64_t max_lease_ms;
	int64_t rev_seq;
	char holder[STORE_HOLDER_MAX + 1];
	char addr[STORE_SESSION_ADDR_MAX + 1];
	bool has_dead;
	char dead[STORE_ID_MAX + 1];
	int64_t ttl; /* 0 when absent */
};

struct store_session_result {
	enum store_status status;
	/* OK: the item after (CREATE, BEAT, KILL) or as read (READ);
	 * REFUSED: the item as it was (.exists false: none) */
	struct session_item session;
	struct lock_item lock;	      /* READ: the lock item as read */
	bool session_read, lock_read; /* READ: which came back */
	const char *error_type;	      /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
};

/* Submits req (copied: the caller's strings need not outlive the call);
 * cb runs once, later, from the loop, unless cancelled with store_cancel.
 * NULL on out-of-memory, a request out of the bounds above, or a store
 * without sessions (no callback then). */
struct store_call *store_session_submit(struct store *s, const struct store_session_req *req,
					store_session_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* The operation of store.requests op is counted as (above: CREATE as
 * ACQUIRE, BEAT as RENEW, KILL as RELEASE, READ as READ); op valid. */
enum store_op store_session_counted_as(enum store_session_op op);

/* The shape checks every store applies. */
bool store_session_valid(const struct store_session_req *req);

/* The session's key "SESSION#<replica>#<incarnation>" into buf (room for
 * STORE_SESSION_KEY_MAX + 1 bytes); req valid. */
void store_session_key(const struct store_session_req *req, char *buf);

/* key is "SESSION#<replica>#<incarnation>" as store_session_key writes
 * it (replica 1..STORE_SESSION_REPLICA_MAX printable bytes without '#',
 * incarnation STORE_SESSION_INC_LEN lowercase hex digits): true, and its
 * parts into replica (room for STORE_SESSION_REPLICA_MAX + 1) and
 * incarnation (STORE_SESSION_INC_LEN + 1) unless NULL. */
bool store_session_key_split(const char *key, char *replica, char *incarnation);

/* s is 1..max printable ASCII bytes (no space), none of them '#' when
 * no_hash: the shape of ids (owners, rvns) and replica ids. */
bool store_session_id_ok(const char *s, size_t max, bool no_hash);

/* The TTL of a session whose longest lease is max_lease_ms, written at
 * wall-clock now_ms: STORE_SESSION_TTL_DAYS beyond it, epoch seconds. */
int64_t store_session_ttl(int64_t now_ms, int64_t max_lease_ms);

#endif
