/*
 * store_revoke: the revocations of `--heartbeat replica`
 * (docs/design/replica-heartbeat.md, "Endings from outside"). A holder in
 * that mode renews its session, not each lock, so it would not learn that
 * another replica ended one of its locks; each such ending writes, in the
 * same transaction, a revocation entry (session, name, fence) and raises
 * the session item's revSeq. The holder sees revSeq rise in a heartbeat's
 * answer, reads the entries here, acts, and deletes each entry once it
 * acted on it.
 *
 * A header of its own, not store_session.h: the entries are items (or an
 * item) of their own with their own bounds, answers (a page of entries
 * with a cursor) and key forms; the session item's operations do not
 * change.
 *
 * The writes (store.h): a RELEASE with .token (a release from outside the
 * holding replica: by (name, token), or forced) or an ADOPT, with
 * .revoke_session the key of the session that held the lease, is one
 * atomic write of three parts:
 *   - the lock's write, as without it (the same condition);
 *   - the entry (session, .name, .token as its fence);
 *   - ADD revSeq 1 on the session item, if it exists (never creating it).
 * OK: all three applied; .item the lock item after. DynamoDB's
 * transactions answer no item: there it is the item as the write and its
 * condition fix it (exists, _type LOCK, fence = .token; a RELEASE: no
 * owner, freed = .token, freed_forced = .forced; an ADOPT: owner, rvn,
 * leaseMs, holder, secretHash, adoptedFrom of the request), without the
 * attributes the write leaves (a waiter's announcement, a RELEASE's rvn).
 * REFUSED by the lock's condition: nothing written, .item the item that
 * refused it (or none). REFUSED with .session_gone: there is no such
 * session; nothing written, .item the lock item as it is (DynamoDB: read
 * back with one strongly consistent GetItem in the same call, a second
 * request): a session that is gone extends nothing, so the caller may
 * end the lock without a revocation. TRANSIENT "RevocationsFull": the
 * session has STORE_REVOKE_MAX entries pending on a store that bounds
 * them (below); nothing written: retry once the holder acted on some.
 *
 * Where the entries live:
 *   - DynamoDB, a table with a sort key: one item per entry, partition
 *     key REVOKE#<session key>, sort key the entry's key (below), and
 *     _type REVOKE, name, fence, the TTL attribute (when the table has
 *     one). Not bounded.
 *   - DynamoDB, a partition key only: one item REVOKE#<session key>
 *     holding a string set `revs` of "<entry key>#<name>", _type REVOKE
 *     and the TTL. A set, not a map: ADD creates it when the item has
 *     none, in the same Update (SET of a map's key needs the map there
 *     first). At most STORE_REVOKE_MAX entries (condition size(revs)).
 *   - the embedded store: a list per session, STORE_REVOKE_MAX at most.
 * The TTL of what an ending writes: store_session_ttl(the store's wall
 * clock, STORE_SESSION_LEASE_MAX), no sooner than the session's own at
 * that time (its longest lease is at most a day).
 *
 * The entry's key: "<fence, 19 digits>#<SHA-256 of the name, lowercase
 * hex>" (STORE_REVOKE_KEY_LEN bytes): the name itself does not fit a sort
 * key (1024 bytes) with names of STORE_NAME_MAX. Entries are read in the
 * order of their keys (by fence, then by the hash).
 *
 * Operations (store_revoke_req.op):
 *   READ    the entries of .session after .cursor ("" or NULL: from the
 *           first), at most .limit (0: STORE_REVOKE_PAGE), strongly
 *           consistent: one Query (sort key) or one GetItem (partition key
 *           only; the page cut from the whole set). OK with .count
 *           entries and .cursor, "" when no entry is left after them, else
 *           the key of the last one (a page may then be followed by an
 *           empty one).
 *   DELETE  the entry (.session, .name, .fence): DeleteItem of its item
 *           (sort key), or UpdateItem DELETE of its element (partition key
 *           only; conditioned on the item existing, so none is made). OK
 *           whether or not it was there: a retried delete is done.
 * Results: OK, TRANSIENT (after the store's retries), NO_TABLE, FATAL
 * with .message, as store.h's. Counted in store.requests: READ as
 * STORE_READ, DELETE as STORE_DELETE (one request each); an ending with a
 * revocation as its RELEASE or ADOPT (one TransactWriteItems) and, on
 * DynamoDB when the session is gone, a STORE_READ for its read-back.
 */
#ifndef LG_STORE_REVOKE_H
#define LG_STORE_REVOKE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/store/store.h"
#include "core/store/store_session.h"

/* Entries pending per session on the stores that bound them: an entry of
 * the partition-key-only item is at most 85 + STORE_NAME_MAX bytes, so
 * 128 of them are at most 267 KB of the 400 KB an item may hold. */
#define STORE_REVOKE_MAX     128
#define STORE_REVOKE_PAGE    128 /* entries per READ answer at most */
#define STORE_REVOKE_KEY_LEN (19 + 1 + 64)
/* "REVOKE#" + a session key */
#define STORE_REVOKE_PK_MAX (7 + STORE_SESSION_KEY_MAX)

enum store_revoke_op { STORE_REVOKE_READ, STORE_REVOKE_DELETE };

struct store_revoke_req {
	enum store_revoke_op op;
	const char *session; /* "SESSION#<replica>#<incarnation>" (store_session_key) */
	const char *cursor;  /* READ: "" or NULL, or an answer's cursor */
	unsigned limit;	     /* READ: 1..STORE_REVOKE_PAGE, 0 for that */
	const char *name;    /* DELETE: 1..STORE_NAME_MAX bytes */
	int64_t fence;	     /* DELETE: > 0 */
};

struct store_revoke_entry {
	char name[STORE_NAME_MAX + 1];
	int64_t fence;
};

struct store_revoke_result {
	enum store_status status;
	const struct store_revoke_entry *entries; /* READ: count of them, valid in the call */
	unsigned count;
	char cursor[STORE_REVOKE_KEY_LEN + 1]; /* READ: "" when none left */
	const char *error_type;		       /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
};

/* Submits req (copied); cb runs once, later, from the loop, unless
 * cancelled with store_cancel. NULL on out-of-memory, a request out of
 * the bounds above, or a store without revocations (no callback then). */
struct store_call *store_revoke_submit(struct store *s, const struct store_revoke_req *req,
				       store_revoke_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* The shape checks every store applies. */
bool store_revoke_valid(const struct store_revoke_req *req);

/* key is a session key "SESSION#<replica>#<incarnation>" as
 * store_session_key writes it (its bounds and characters). */
bool store_session_key_valid(const char *key);

/* A RELEASE or ADOPT with .revoke_session may carry it: a valid session
 * key, on a RELEASE with .token > 0 or an ADOPT, a name and a token. */
bool store_revoke_end_valid(const struct store_req *req);

/* The key of the entry (name, fence) into buf (STORE_REVOKE_KEY_LEN + 1
 * bytes); fence > 0. */
void store_revoke_key(const char *name, int64_t fence, char *buf);

/* True when s is an entry key (the form above). */
bool store_revoke_key_valid(const char *s);

/* The partition key REVOKE#<session> into buf (STORE_REVOKE_PK_MAX + 1). */
void store_revoke_pk(const char *session, char *buf);

/* The TTL an ending writes on its revocation at wall-clock now_ms. */
int64_t store_revoke_ttl(int64_t now_ms);

#endif
