/*
 * lsess: the lease-session layer — what one client session holds, waits
 * for and leads, for every front-end (Redis, PostgreSQL), with no protocol
 * and no socket in sight.
 *
 * One struct lsvc per replica (over the core's locktable) keeps what is
 * shared between sessions: (name, fencing token) addressing across the
 * replica, lost leases not yet reported, the shared polls of watchers, the
 * limits. One struct lsess per client session keeps its records: a lock
 * lease (with a hold count per scope: reentrant holds, session and
 * transaction scope, one lease underneath), or a leader term.
 *
 * Results are values (struct ls_result: a status, a token, a loss reason,
 * a message) that each front-end renders its own way (a RESP reply, a
 * PostgreSQL row or SQLSTATE). Every operation either answers at once —
 * it returns the status and fills *now — or returns LS_PENDING and
 * answers exactly once later, from the event loop, through its callback.
 * A wait (acquire, campaign, watch) can be cancelled from outside the
 * session's command flow (ls_cancel: PostgreSQL's CancelRequest or
 * lock_timeout; lsvc_cancel_waits: shutdown); it is then answered
 * LS_CANCELLED through its callback.
 *
 * A lease lost before it was released (taken over, deleted, expired, table
 * gone) is told to the front-end once, as it happens (ops->lost: a RESP3
 * push, a PostgreSQL NOTICE), and answered LS_LOST once, to the next
 * operation about it, from this session or by (name, token) from any
 * session of the replica. Closing a session (lsess_free) cancels its waits
 * without a callback, detaches its pending operations (their callbacks
 * never run) and releases everything it holds at once.
 *
 * Rules about time (a lease past its end counts as expired even before
 * the core's end timer ran, after a stall; a renewal answered after the
 * loss is LOST, not "renewed") are here, once, for every front-end.
 *
 * Not here: the lease rules themselves (core/), sockets and connections
 * (gateway/conn), any wire format (gateway/redis, gateway/pg).
 */
#ifndef LG_LSESS_H
#define LG_LSESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/election.h"
#include "core/locktable.h"

struct lsvc;
struct lsess;

struct lt_sh_state;

/* Bounds on what a session may ask for (from the configuration). */
struct ls_limits {
	int64_t max_name;	  /* bytes of a lock name, <= STORE_NAME_MAX */
	int64_t max_leases;	  /* records (locks held, terms) per session */
	int64_t max_lease_ms;	  /* <= LT_MAX_LEASE_MS */
	int64_t default_lease_ms; /* the lease of an acquire that gives none */
};

/* Scopes of a hold. A lock held in both scopes by one session is one lease
 * with two counts; it is released when both reach zero. */
enum ls_scope { LS_SCOPE_SESSION, LS_SCOPE_XACT, LS_SCOPE_COUNT };

/* LS_KIND_SHARED: a shared hold of a lock (a reader: lsess_shared.c). */
enum ls_kind { LS_KIND_LOCK, LS_KIND_LEADER, LS_KIND_SHARED };

enum ls_status {
	LS_PENDING = -1, /* the answer comes later, through the callback */
	LS_OK,		 /* done: .token (acquire, campaign), or renewed/released */
	LS_NONE,	 /* nothing: not acquired (held elsewhere, wait timed out),
			    no such lease, not leading, no item (state) */
	LS_LOST,	 /* the lease or term was lost: .loss; reported once */
	LS_INVALID,	 /* a bad argument or a limit reached: .message */
	LS_CONFLICT,	 /* the session holds the name already (a non-reentrant
			    acquire): .token is the held one, .message says so */
	LS_CANCELLED,	 /* the wait was cancelled: .message says by what */
	LS_TRANSIENT,	 /* a store error retrying may fix: .message */
	LS_FAILED,	 /* a store error retrying cannot fix, out of memory: .message */
	LS_TXCANCELLED,	 /* ls_transact: a client item failed: .reasons */
	LS_DENIED,	 /* the session's ACL rules refuse it (ls_deny): .message */
};

#define LS_MSG_MAX	 (STORE_MSG_MAX + 160)
#define LS_SECRET_LEN	 32		     /* a lease's secret: 128 random bits as hex */
#define LS_SECRET_MAX	 256		     /* bytes of a secret presented, at most */
#define LS_SH_HANDLE_MAX (LS_SECRET_LEN + 3) /* a detached shared hold's secret */
/* the message of a (name, token) refused for want of the lease's secret */
#define LS_SECRET_DENIED                                                                           \
	"the lease of '%s' was acquired ADOPTABLE: by token it needs its secret (or the "          \
	"force-release right)"

struct ls_result {
	enum ls_status status;
	int64_t token;	    /* LS_OK of acquire/campaign; LS_LOST: the lost lease's */
	enum lt_loss loss;  /* LS_LOST */
	struct lt_state st; /* ls_state (LS_OK: st.exists) and ls_watch (st.held) */
	bool mine;	    /* ls_state: the item's owner is this session's lease */
	bool detached;	    /* ls_state, ls_foreign: the item's lease is detached */
	/* LS_OK of a release: the session holds the lock no more, but the
	 * release's write failed (.message says which lock and why): the item
	 * may stay held until its lease runs out, or another holder has it (a
	 * write that reached DynamoDB before the failure may have freed it). */
	bool unwritten;
	/* LS_TXCANCELLED: the CancellationReasons of the client's items, a
	 * JSON array in their order; valid during the callback only. */
	const char *reasons;
	/* the test mode's clock (ls_test_now, ls_test_advance): monotonic
	 * and wall ms */
	int64_t clock_ms, wall_ms;
	/* LS_OK of an adoptable acquire (ls_acquire_req.adoptable): the
	 * lease's secret, given this once; "" otherwise */
	char secret[LS_SECRET_LEN + 1];
	/* LS_OK of ls_acquire_shared: the slot held; -1 otherwise */
	int slot;
	/* LS_OK of a detached ls_acquire_shared: the hold's secret, as
	 * "<slot>:<32 hex>" (LS_SH_HANDLE_MAX bytes at most), which renews and
	 * releases it from any session (ls_renew_secret, ls_release_secret);
	 * "" otherwise */
	char handle[LS_SH_HANDLE_MAX + 1];
	/* LS_OK of ls_state on a name held shared (st.shared > 0): its
	 * holders, valid during the callback only; NULL otherwise */
	const struct lt_sh_state *sh;
	char message[LS_MSG_MAX];
};

typedef void (*ls_done_cb)(void *arg, const struct ls_result *res);

/* What the front-end is told about its session, as it happens. */
/* Who a session is, for the log lines about its leases. */
struct ls_who {
	uint64_t id;	 /* the connection's id (Redis CLIENT ID), else the session's */
	char client[64]; /* the peer's address:port, "" if unknown */
	char name[128];	 /* CLIENT SETNAME, or the PostgreSQL user; "" if none */
};

struct ls_sess_ops {
	/* Fills who (id, client, name) for the log. May be NULL. */
	void (*who)(void *arg, struct ls_who *who);
	/* A lease (LS_KIND_LOCK) or term (LS_KIND_LEADER) of the session was
	 * lost; the next operation about it answers LS_LOST. May be NULL. */
	void (*lost)(void *arg, enum ls_kind kind, const char *name, int64_t token,
		     enum lt_loss reason);
	/* May the session still run the wait it has in progress (acquire,
	 * campaign or watch) on the lock name? Asked by lsvc_recheck_waits
	 * after the rules of who may do what changed (an ACL reload). NULL:
	 * always. */
	bool (*may_wait)(void *arg, const char *name);
};

/* Who holds the lease or term of an obs_event's ctx (core/obs.h): the
 * data of a lease or the arg of an election made by a lease service.
 * False, *who untouched, when ctx is NULL (a lease no session keeps). */
bool lsvc_who(const void *ctx, struct ls_who *who);

/* --- the replica's service --- */

/* The lease service over lt (which it does not own; it must outlive it).
 * NULL on out-of-memory or bad limits. */
struct lsvc *lsvc_new(struct locktable *lt, const struct ls_limits *limits)
	__attribute__((warn_unused_result));
/* Frees svc; every session must have been freed first. Operations still
 * in flight (releases of closed sessions) are forgotten: free the
 * locktable next, without running the loop in between. */
void lsvc_free(struct lsvc *svc);

/* Shutdown: every wait of every session (acquire, campaign, watch) is
 * answered LS_CANCELLED with message ("server is shutting down"), so that
 * a closing holder does not hand its lock to a waiter that is closing too. */
void lsvc_cancel_waits(struct lsvc *svc, const char *message);

/* The rules changed (an ACL reload): every wait of now (acquire,
 * campaign, watch) whose session's ops->may_wait refuses it is answered
 * LS_DENIED, with a message naming the lock, before this returns. Leases
 * and terms already held are left as they are. Returns how many. */
unsigned lsvc_recheck_waits(struct lsvc *svc);

/* The lock name of the session's wait in progress (acquire, campaign or
 * watch); NULL when it waits for nothing. */
const char *ls_wait_name(const struct lsess *s);

struct lsvc_stats {
	uint64_t sessions;	/* live lsess */
	uint64_t lost_reported; /* LS_LOST answers given */
	uint64_t losses_told;	/* ops->lost calls */
};
void lsvc_stats(const struct lsvc *svc, struct lsvc_stats *out);

/* --- a drain (rolling updates: LOCK.ADOPT elsewhere) --- */

/* The replica drains: from now on, a session that closes hands its
 * adoptable locks (those with a secret: LOCK.ACQUIRE ... ADOPTABLE, or
 * adopted) to the service instead of releasing them; each is marked
 * orphaned on its item and renewed on, so that its client can adopt it
 * on another replica (ls_adopt). Other leases, terms and PostgreSQL
 * sessions' locks are released at close as before. */
void lsvc_drain(struct lsvc *svc);

/* The end of the grace: releases every orphan not adopted (each release
 * conditioned on still owning it). Returns how many. */
unsigned lsvc_release_orphans(struct lsvc *svc);

struct lsvc_drain_stats {
	uint64_t orphaned; /* leases kept for adoption */
	uint64_t marked;   /* ... marked orphaned on their items */
	uint64_t adopted;  /* ... adopted elsewhere */
	uint64_t lost;	   /* ... ended otherwise while kept */
	uint64_t released; /* ... released at the end of the grace */
	uint64_t held;	   /* kept now */
};
void lsvc_drain_stats(const struct lsvc *svc, struct lsvc_drain_stats *out);

/* --- one client session --- */

/* A session of svc; ops (copied, may be NULL) with arg tell the front-end
 * of losses. NULL on out-of-memory. */
struct lsess *lsess_new(struct lsvc *svc, const struct ls_sess_ops *ops, void *arg)
	__attribute__((warn_unused_result));

/* Closes the session: its waits are cancelled (no callback), its pending
 * operations detached (no callback), every lease released and every term
 * ended at once. */
void lsess_free(struct lsess *s);

/* Records held (locks, terms, lost ones not yet reported). */
unsigned lsess_count(const struct lsess *s);

/* --- operations --- */

struct ls_acquire_req {
	const char *name; /* name_len bytes; checked: 1..max_name, no NUL */
	size_t name_len;
	int64_t lease_ms;   /* 0: limits.default_lease_ms; checked */
	int64_t wait_ms;    /* -1: try once; 0: wait forever; > 0: at most */
	const char *holder; /* label, NULL: the table's; checked 1..256 bytes */
	enum ls_scope scope;
	/* held already by this session: true counts one more hold in scope
	 * and answers the token at once (PostgreSQL); false answers
	 * LS_CONFLICT (Redis's LOCK.ACQUIRE). A session has one wait at a
	 * time (acquire, campaign, watch): another is LS_INVALID. */
	bool reentrant;
	/* A detached lease: owned by no session (not renewed by the gateway,
	 * not released at close, not counted in max_leases); it ends at its
	 * lease unless renewed or released by (name, token) from any session
	 * of any replica (ls_renew, ls_release, ls_foreign). With detach,
	 * owner (owner_len bytes, 1..LS_VALUE_MAX printable ASCII) is the
	 * value a Redis lock library identifies its lease by (SET key value
	 * NX PX), NULL a new one; the item's owner is then "d:" + value (or
	 * "a:" + a new id), so every replica can tell a detached lease
	 * (ls_detached) and one taken by value (ls_by_value). */
	bool detach;
	const char *owner;
	size_t owner_len;
	/* ADOPTABLE: the lease gets a secret (ls_result.secret; the item
	 * keeps its hash), which a renewal or release by (name, token) from
	 * another session then needs (ls_renew_secret), as LOCK.ADOPT will */
	bool adoptable;
	/* the client's trace context (TRACEPARENT, leasegate.traceparent):
	 * the acquire's or campaign's span is its child; .valid false: a new
	 * trace */
	struct trace_ctx trace;
	/* ls_acquire_shared: 0 a reader (any number hold it, up to
	 * STORE_SH_CAP); n > 0 one of at most n holders (a semaphore: the
	 * first holder fixes n while any holds it) */
	unsigned limit;
};

#define LS_VALUE_MAX (STORE_ID_MAX - 2)

/* A shared hold of a lock (PostgreSQL's pg_advisory_lock_shared, Redis's
 * LOCK.ACQUIRE ... SHARED | LIMIT n): any number of sessions hold a name
 * shared at once (req->limit 0), or at most n (req->limit n: a
 * semaphore), none while one holds it exclusively (ls_acquire), each hold
 * a lease of its own (core/lt_shared.h). req as ls_acquire's: reentrant
 * counts a second hold in its scope, else LS_CONFLICT; adoptable is not
 * supported. With detach, the hold is no session's (not renewed, not
 * released at close, not counted in max_leases, any number per session):
 * LS_OK gives .handle, its secret, which renews and releases it from any
 * session of any replica (ls_renew_secret, ls_release_secret with token
 * and handle); it ends at its lease otherwise. A session holding the name exclusively is
 * LS_INVALID (it cannot add a shared hold, as PostgreSQL's own locks never
 * conflict; and ls_acquire of a name the session holds shared is
 * LS_INVALID likewise). LS_OK with .token (the readers' group token, or
 * the semaphore slot's fence) and .slot; LS_NONE as ls_acquire; LS_FAILED
 * naming the mode when the name is held in another mode or with another
 * limit. */
enum ls_status ls_acquire_shared(struct lsess *s, const struct ls_acquire_req *req,
				 struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Drops one shared hold of name in scope: LS_OK (the last one released
 * in the store before the answer), LS_NONE when the session holds none
 * there, LS_LOST when the lease was lost. ls_release_secret and
 * ls_renew_secret (Redis's LOCK.RELEASE and LOCK.RENEW) of a name the
 * session holds shared, with no token or the hold's, act on its shared
 * hold (a release drops every hold); ls_release does not (PostgreSQL's
 * pg_advisory_unlock leaves a shared hold alone). */
enum ls_status ls_release_shared(struct lsess *s, const char *name, enum ls_scope scope,
				 struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* True when owner, a slot's as LOCK.STATE reads it (lt_sh_holder), is a
 * detached shared hold's (no session's). */
bool ls_shared_detached(const char *owner);

/* An operator's end of the shared holder in slot of name, wherever it is
 * held (LOCK.FORCE-RELEASE name SLOT k): LS_OK ended (its session's next
 * operation about it answers LS_LOST "forced"), LS_NONE when the slot is
 * free. */
enum ls_status ls_shared_force(struct lsess *s, const char *name, size_t name_len, unsigned slot,
			       struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Takes a lease on a lock. LS_OK with .token; LS_NONE when another holder
 * has it (try) or the wait timed out; LS_CONFLICT, LS_INVALID, errors. A
 * lost, unreported lease of the name in this session is superseded. */
enum ls_status ls_acquire(struct lsess *s, const struct ls_acquire_req *req, struct ls_result *now,
			  ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* Sends one renewal of the session's lease of name (token 0), or of
 * (name, token) held by any session of the replica, or else (name, token)
 * held anywhere: by another replica, or detached (through lt_foreign: a
 * read and a conditional write). LS_OK renewed now; LS_NONE no such lease
 * or it has ended; LS_LOST once after a loss. */
enum ls_status ls_renew(struct lsess *s, const char *name, int64_t token, struct ls_result *now,
			ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* ls_renew, with the secret of a lease acquired adoptable (secret_len
 * bytes, NULL: none) or the force-release right (waived): a lease with a
 * secret held by another session, here or on another replica, is renewed
 * only with one of them, else LS_DENIED. Leases without a secret: as
 * ls_renew, whatever the secret. */
enum ls_status ls_renew_secret(struct lsess *s, const char *name, int64_t token, const char *secret,
			       size_t secret_len, bool waived, struct ls_result *now, ls_done_cb cb,
			       void *arg) __attribute__((warn_unused_result));

/* Adopts the lease (name, token) of a connection that closed while its
 * replica drained (LOCK.ADOPT: see lt_adopt), presented with its secret:
 * the lease becomes this session's, as if acquired here (scope session,
 * renewed while the session lasts, released when it ends), with its token,
 * its lease time and a new secret (ls_result.token and .secret). LS_NONE
 * when (name, token) is no orphaned lease with that secret; LS_CONFLICT
 * when this session holds name already. */
enum ls_status ls_adopt(struct lsess *s, const char *name, size_t name_len, int64_t token,
			const char *secret, size_t secret_len, struct ls_result *now, ls_done_cb cb,
			void *arg);

/* ls_adopt for a leader term (LEADER.ADOPT; a term campaigned ADOPTABLE):
 * the session leads from now on, with the term's token; its followers'
 * LEADER.WATCH sees the same term go on. */
enum ls_status ls_leader_adopt(struct lsess *s, const char *name, size_t name_len, int64_t token,
			       const char *secret, size_t secret_len, struct ls_result *now,
			       ls_done_cb cb, void *arg);

/* ls_release (scope session), with a secret or the right as ls_renew_secret. */
enum ls_status ls_release_secret(struct lsess *s, const char *name, int64_t token,
				 const char *secret, size_t secret_len, bool waived,
				 struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Gives back one hold of scope on the session's lease of name (token 0;
 * or (name, token) of any session, which drops every hold; or else of a
 * lease held anywhere, as ls_renew: its holding replica then ends it as
 * released, not lost, at its next renewal). At the last
 * hold the lease is released (handed to a local waiter, or written free)
 * and the answer comes once that is done: LS_OK. LS_NONE when there is no
 * such hold; LS_LOST once after a loss. */
enum ls_status ls_release(struct lsess *s, const char *name, int64_t token, enum ls_scope scope,
			  struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Releases every hold of scope (transaction end: LS_SCOPE_XACT; PostgreSQL's
 * pg_advisory_unlock_all: LS_SCOPE_SESSION); locks also held in the other
 * scope stay held. Answered once every release it started is done (its
 * write answered, or the lock handed to a local waiter), so that a client
 * told "released" finds the lock free from any replica: LS_OK at once when
 * there was nothing to write, else LS_PENDING and cb with LS_OK
 * (.unwritten when a write failed: .message names the first such lock).
 * LS_FAILED at once when out of memory (the releases are sent anyway). */
enum ls_status ls_release_scope(struct lsess *s, enum ls_scope scope, struct ls_result *now,
				ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* Every lease and term of the session released, as at its close, but the
 * session stays usable (Redis's RESET, PostgreSQL's DISCARD ALL); answered
 * as ls_release_scope. A wait in progress is answered LS_CANCELLED ("the
 * session was reset") before this returns. */
enum ls_status ls_release_all(struct lsess *s, struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* True when the session holds a lease on name now (not lost, not past
 * its end), with its fencing token in *token and its holds per scope in
 * holds (each may be NULL). No request: PostgreSQL's leasegate.token(). */
bool ls_held(const struct lsess *s, const char *name, size_t name_len, int64_t *token,
	     unsigned holds[LS_SCOPE_COUNT]) __attribute__((warn_unused_result));
/* The same for the session's shared hold of name: its token (a reader's
 * group token, a semaphore holder's slot token) in *token (may be NULL). */
bool ls_held_shared(const struct lsess *s, const char *name, size_t name_len, int64_t *token);

/* The session's oldest lock lease lost and not yet answered, if any: it is
 * answered now — LS_LOST in *r with .token, .loss and a message naming
 * the lock ("lease of '<name>' lost: <reason>"), and forgotten, as any
 * operation about it would have answered — so that a front-end can fail
 * the session's next lock call whatever its name (PostgreSQL). LS_NONE
 * when nothing is lost. */
enum ls_status ls_take_lost(struct lsess *s, struct ls_result *r)
	__attribute__((warn_unused_result));

/* Reads the item of name: LS_OK with .st (st.exists false: no item) and
 * .mine; errors. At once on the embedded store. */
enum ls_status ls_state(struct lsess *s, const char *name, size_t name_len, struct ls_result *now,
			ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* Campaigns for leadership of name (one term, req->scope and reentrant
 * ignored; a campaign always waits: wait_ms -1 or 0 is forever): LS_OK
 * with the term's .token once the session leads — at once while its term
 * lasts, without a request; LS_NONE when the wait ran out; LS_LOST once
 * when the term was lost (the next campaign starts anew). */
enum ls_status ls_campaign(struct lsess *s, const struct ls_acquire_req *req, struct ls_result *now,
			   ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* Ends the session's term on name, handing the lock on: LS_OK once the
 * release is done; LS_NONE when not leading; LS_LOST once after a loss. */
enum ls_status ls_resign(struct lsess *s, const char *name, struct ls_result *now, ls_done_cb cb,
			 void *arg) __attribute__((warn_unused_result));

/* The current leader of name: LS_OK with .st (st.held false: none) after
 * one fresh read if its token differs from after (-1: any answer), else
 * when it changes or timeout_ms (0: none) passes (then .st is the last
 * state read); so LS_PENDING, or an error at once. Watchers of one name
 * share one read per poll interval (a third of the leader's lease, at
 * most LT_MAX_POLL_MS) and read at once when a change goes through this
 * replica. */
enum ls_status ls_watch(struct lsess *s, const char *name, size_t name_len, int64_t after,
			int64_t timeout_ms, struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* --- leases by what the item shows (Redis lock libraries, operators) --- */

enum ls_foreign_op { LS_FX_RENEW, LS_FX_RELEASE, LS_FX_FORCE };

struct ls_foreign_req {
	const char *name; /* name_len bytes, checked as for acquire */
	size_t name_len;
	enum ls_foreign_op op;
	/* The lease: by the client's value of a detached lease (value,
	 * value_len: the item's owner is "d:" + value), or by token (> 0), or
	 * neither: whatever holds the lock (Redis's PEXPIRE, DEL; operators). */
	const char *value;
	size_t value_len;
	int64_t token;
	int64_t lease_ms;   /* LS_FX_RENEW: the new lease, 0 keeps the item's;
			       checked against the limits */
	bool add_remaining; /* LS_FX_RENEW: lease_ms more than what remains */
	/* Neither value nor token: act only on a lease taken by value (SET
	 * NX PX; ls_by_value) or on this session's own; a lease another
	 * session took (LOCK.ACQUIRE, DETACH too) is left alone and answered
	 * LS_NONE with .st showing it held (Redis's DEL and PEXPIRE without
	 * the force-release right). */
	bool detached_only;
};

/* Renews or releases the lease req names wherever it is held (see
 * lt_foreign); a forced release makes its holding session's next
 * operation about it answer LS_LOST "forced". LS_OK done (.st: the item as
 * read before, .detached), LS_NONE no such lease now, LS_INVALID, errors. */
enum ls_status ls_foreign(struct lsess *s, const struct ls_foreign_req *req, struct ls_result *now,
			  ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* The item owners of detached leases: "d:" + a Redis lock library's
 * value (taken by value: SET NX PX, a script), "a:" + a new id (a DETACH
 * acquire). Session leases' owners are bare ids (hex, no ':'). */
#define LS_VALUE_PREFIX	   "d:"
#define LS_ACQUIRED_PREFIX "a:"

/* st's owner is a detached lease's (a Redis lock library's value or a
 * DETACH acquire). */
bool ls_detached(const struct lt_state *st);

/* A loss reason as the gateway tells clients and logs (-LOST, SQLSTATE
 * 55000, the PostgreSQL WARNING): its name (lt_loss_name) first, then,
 * for a reason whose name does not explain itself (session), words for
 * an operator in parentheses. A static string. */
const char *ls_loss_text(enum lt_loss loss);
/* st's owner is a lease taken by value (a Redis lock library's). */
bool ls_by_value(const struct lt_state *st);
/* The value a client sees as the lock's (GET key): a detached lease's
 * value without its "d:", else the owner id. */
const char *ls_owner_value(const struct lt_state *st);

/* --- listing --- */

/* A session's label for listings: the front-end's protocol and client id
 * (lsess_new: "", 0). */
void lsess_set_label(struct lsess *s, const char *proto, uint64_t id);

struct ls_entry {
	const char *name;
	enum ls_kind kind;
	const char *state;  /* "held", "waiting", "campaigning", "lost" */
	int64_t token;	    /* held, lost: the lease's */
	int64_t lease_ms;   /* held */
	const char *holder; /* held: the label, NULL when none */
	const char *proto;  /* the session's (lsess_set_label) */
	uint64_t id;
};

/* Calls each for every lease, term and wait of every session of the
 * replica whose name matches pattern (fnmatch(3) glob, NULL: all), at most
 * max (0: no bound). Returns how many. */
unsigned lsvc_list(struct lsvc *svc, const char *pattern, unsigned max,
		   void (*each)(void *arg, const struct ls_entry *e), void *arg);

/* lsvc_list for one session: its leases, terms and wait, each once (a
 * lock held in both scopes, or reentrantly, is one entry). Returns how
 * many. PostgreSQL's pg_locks lists its sessions' advisory locks so. */
unsigned lsess_list(const struct lsess *s, void (*each)(void *arg, const struct ls_entry *e),
		    void *arg);

/* A page of the table's lock items (LOCK.LIST TABLE): entries whose name
 * matches pattern (NULL all), next cursor ("" at the end); or res with an
 * error status. Called once, unless the session closes first. */
typedef void (*ls_scan_cb)(void *arg, const struct ls_result *res,
			   const struct lt_scan_entry *entries, unsigned count, const char *next);

/* Reads one page (limit 1..STORE_SCAN_MAX) of the table from cursor (NULL
 * or "": the start): LS_PENDING, or an error at once in *now. */
enum ls_status ls_scan(struct lsess *s, const char *cursor, unsigned limit, const char *pattern,
		       struct ls_result *now, ls_scan_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Ends the session's wait (acquire, campaign or watch) now: its callback
 * runs before this returns, with LS_CANCELLED and message. False when the
 * session waits for nothing. Safe from any callback of another session or
 * a timer. */
bool ls_cancel(struct lsess *s, const char *message);

/* --- fenced writes (the reference's IsHeld) --- */

#define LS_TX_MAX_ITEMS	       99	     /* the client's; the lock check makes 100 */
#define LS_TX_MAX_ITEMS_SHARED 98	     /* under a shared hold: its two checks */
#define LS_TX_MAX_BYTES	       (1024 * 1024) /* of the items' JSON text */

/* Fenced writes may write the tables of the comma list tables (NULL or
 * "": fenced writes are off) and no other, so that the gateway's IAM role
 * does not become every client's. lock_table and lock_pk name the lock
 * table and its partition key, on which no item may touch a lock's key
 * (LOCK#...); lock_pk NULL: no lock table another store could reach (the
 * embedded store). Copied. False with msg on a bad list or OOM. */
bool lsvc_set_fenced(struct lsvc *svc, const char *tables, const char *lock_table,
		     const char *lock_pk, char *msg, size_t msglen)
	__attribute__((warn_unused_result));

/* Checks a client's TransactItems (DynamoDB JSON, as the AWS SDKs
 * serialize them): an array of 1..LS_TX_MAX_ITEMS objects, each with
 * exactly one of Put, Update, Delete, ConditionCheck whose members are
 * those DynamoDB knows, once each, a TableName in the fenced tables, and
 * on the lock table no key of a lock; at most LS_TX_MAX_BYTES. False with
 * r LS_INVALID and a message saying what is wrong. */
bool ls_tx_items_ok(const struct lsvc *svc, const char *items, size_t len, struct ls_result *r)
	__attribute__((warn_unused_result));

struct ls_tx_req {
	const char *name; /* name_len bytes */
	size_t name_len;
	/* false: the session's shared hold of name with that token, else the
	 * lease (name, token) held by any session of this replica
	 * (LOCK.TRANSACT); true: the session's current term of name
	 * (LEADER.TRANSACT; token ignored). */
	bool leader;
	int64_t token;
	const char *items; /* items_len bytes, checked with ls_tx_items_ok */
	size_t items_len;
	/* The client's request id, request_len bytes (1..STORE_TX_TOKEN_MAX
	 * of A-Z a-z 0-9 -), sent as the ClientRequestToken: DynamoDB applies
	 * a resend with the same id and items once, for 10 minutes. NULL: a
	 * new id per call. */
	const char *request;
	size_t request_len;
};

/* Writes the items in one DynamoDB transaction whose first item checks
 * that the lease still holds the lock (this replica's owner id and fence =
 * token), at commit; under a shared hold, whose first two check its slot
 * and the header (lt_sh_transact), the client then having at most
 * LS_TX_MAX_ITEMS_SHARED items. LS_OK committed; LS_LOST the check failed (the lease
 * is lost as any loss: told to its session, and this answer reports it) or
 * the lease had ended; LS_TXCANCELLED a client item failed (.reasons);
 * LS_TRANSIENT throttling or TransactionConflict past the retries;
 * LS_INVALID fenced writes off, bad items, no such lease or term here;
 * LS_FAILED DynamoDB refused the request (or the embedded store: fenced
 * writes need DynamoDB). */
enum ls_status ls_transact(struct lsess *s, const struct ls_tx_req *req, struct ls_result *now,
			   ls_done_cb cb, void *arg) __attribute__((warn_unused_result));

/* A check, not a fence: one strongly consistent read of name; LS_OK while
 * the item shows the lease (name, token) holding the lock now (for a lease
 * of this replica: its owner, before its end; for another's: not seen
 * unchanged for a whole lease), LS_NONE otherwise; errors. */
enum ls_status ls_check(struct lsess *s, const char *name, size_t name_len, int64_t token,
			struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* --- test mode (leasegate --test-mode; gateway/lease/testclock.h) ---
 *
 * What an application's tests do to the lock world through the protocol
 * they already speak: move the lease core's clock, and act as another
 * process on a lock (core/lt_testing.h: writes without a condition). Each
 * answers LS_INVALID "... needs --test-mode" on a service without test
 * mode. ls_test_advance and ls_test_wait_refusal are the session's wait
 * (one at a time, as an acquire's): ls_cancel, shutdown and the session's
 * close end them (an advance whose session went away still moves the
 * clock). */

struct tclock;
/* Test mode on svc, driven by tc (NULL: off). tc must outlive svc. */
void lsvc_set_test(struct lsvc *svc, struct tclock *tc);
bool lsvc_test_mode(const struct lsvc *svc);

/* The clock now: LS_OK with .clock_ms and .wall_ms. */
enum ls_status ls_test_now(struct lsess *s, struct ls_result *now)
	__attribute__((warn_unused_result));

/* Moves the clock ms (0..TCLOCK_MAX_ADVANCE_MS) ahead, running every
 * heartbeat, poll, wait timeout and expiry that falls due, in order
 * (tclock_advance): LS_OK with .clock_ms and .wall_ms, now or later. */
enum ls_status ls_test_advance(struct lsess *s, int64_t ms, struct ls_result *now, ls_done_cb cb,
			       void *arg) __attribute__((warn_unused_result));

enum ls_test_sim {
	LS_SIM_HOLDER,	/* another process holds it, acquired now, never renewed */
	LS_SIM_RELEASE, /* its holder, whoever it was, released it */
	LS_SIM_DELETE,	/* its item is deleted (TTL, an operator) */
};

struct ls_sim_req {
	enum ls_test_sim op;
	const char *name; /* name_len bytes, checked as for acquire */
	size_t name_len;
	int64_t lease_ms;   /* HOLDER: LT_MIN_LEASE_MS..LT_MAX_LEASE_MS */
	const char *holder; /* HOLDER: its label, 1..256 bytes, or NULL: none */
	size_t holder_len;
};

/* Does what req says to its lock, as the reference's Simulate*Async: LS_OK
 * (.token: HOLDER's fencing token); LS_NONE for a RELEASE of a lock
 * without an item (nothing written); LS_INVALID; LS_FAILED (the store's
 * error). A lease of this replica on it is lost at its next renewal
 * (taken_over; deleted after DELETE). */
enum ls_status ls_test_simulate(struct lsess *s, const struct ls_sim_req *req,
				struct ls_result *now, ls_done_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Waits until this replica next refuses a try or a poll on name (an
 * acquire or campaign of any session that finds it held and is turned
 * away): LS_OK; LS_NONE once timeout_ms (0: none) of the test clock has
 * passed without one. Always LS_PENDING or an error at once. */
enum ls_status ls_test_wait_refusal(struct lsess *s, const char *name, size_t name_len,
				    int64_t timeout_ms, struct ls_result *now, ls_done_cb cb,
				    void *arg) __attribute__((warn_unused_result));

#endif
