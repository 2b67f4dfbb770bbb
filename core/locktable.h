/*
 * locktable: leases on named locks of one table, with the semantics of
 * docs/lease-rules.md, on any struct store.
 *
 * One locktable per table per process: it remembers the holders it has seen
 * (a takeover depends on that) and keeps local contention local — while a
 * lease of this locktable holds a lock, other tries are refused without a
 * request and waits queue here (FIFO), handed the lock by one conditional
 * write when it is released. However many wait for a lock, one shared poll
 * reads it.
 *
 * Every callback comes from the event loop (never from inside the call that
 * registered it). Nothing here blocks or sleeps.
 */
#ifndef LG_LOCKTABLE_H
#define LG_LOCKTABLE_H

#include "lib/base/clock.h"
#include "core/lt_sweep.h"
#include "core/obs.h"
#include "core/store/store.h"

#define LT_MIN_LEASE_MS		1000LL
#define LT_MAX_LEASE_MS		86400000LL
#define LT_MIN_RETENTION_MS	86400000LL
#define LT_DEFAULT_RETENTION_MS (30 * 86400000LL)
#define LT_MAX_POLL_MS		10000LL
#define LT_RENEW_RETRY_FIRST_MS 100LL

struct locktable;
struct lease;
struct lt_wait;
struct lt_scan;

enum lt_loss {
	LT_HELD = 0,	    /* not lost */
	LT_TAKEN_OVER,	    /* a renewal found another owner */
	LT_DELETED,	    /* a renewal found no item */
	LT_EXPIRED,	    /* the lease ran out without a successful renewal */
	LT_TABLE_NOT_FOUND, /* a renewal was answered ResourceNotFound */
	LT_FORCED,	    /* an operator's forced release (LOCK.FORCE-RELEASE) */
	/* Not a loss: released by (name, token) from outside the session (any
	 * replica). The lease has ended as by lease_release; the lost callback
	 * runs so that its owner forgets it, and nothing counts it as lost. */
	LT_RELEASED,
	/* Not a loss either: adopted on another connection (lt_adopt: the
	 * lease was orphaned, its item now names the adopter's owner and
	 * adoptedFrom this lease's). The lease goes on there, with its token;
	 * here it has ended, quietly: the lost callback runs so that its owner
	 * forgets it, nothing counts it as lost, nothing is handed on. */
	LT_ADOPTED,
	/* --heartbeat replica (core/lt_session.h): the replica's session
	 * ended — a heartbeat was refused because a waiter marked the session
	 * dead (it saw no heartbeat for the session's maxLeaseMs) or its item
	 * is gone. Every lease of the session is lost at once. */
	LT_SESSION,
	LT_LOSS_COUNT
};

/* How the leases of a locktable prove their holder alive
 * (docs/design/replica-heartbeat.md). */
enum lt_heartbeat {
	LT_HEARTBEAT_LEASE = 0, /* each lease renews its own item (the default) */
	/* one session item per process for every exclusive lease
	 * (core/lt_session.h): its lock items name the session, no per-lease
	 * heartbeat; shared holds stay per lease. The gateway's --heartbeat
	 * replica. */
	LT_HEARTBEAT_REPLICA,
	LT_HEARTBEAT_COUNT
};

struct lt_options {
	const char *holder_label; /* default label of leases, NULL = none */
	int64_t ttl_retention_ms; /* 0 = write no TTL; else >= LT_MIN_RETENTION_MS */
	unsigned seen_max;	  /* holders remembered, default 10000 */
	enum lt_heartbeat heartbeat;
	/* LT_HEARTBEAT_REPLICA: the replica's id (1..STORE_SESSION_REPLICA_MAX
	 * printable, no '#') and its address for operators (or NULL), copied;
	 * the session item's holder is holder_label, and it has a TTL when
	 * ttl_retention_ms is set */
	const char *replica_id;
	const char *addr;
	/* LT_HEARTBEAT_REPLICA: the verification sweep's period, ms: every
	 * lock held in session mode read once in it (core/lt_sweep.h); 0:
	 * LT_SWEEP_DEFAULT_MS (5 minutes), else LT_SWEEP_MIN_MS..
	 * LT_SWEEP_MAX_MS */
	int64_t sweep_ms;
};

/* An error of the store, passed up to the caller. */
struct lt_error {
	enum store_status status; /* TRANSIENT, NO_TABLE or FATAL */
	const char *error_type;	  /* static, for metrics */
	char message[STORE_MSG_MAX + 128];
};

struct lt_acquire_args {
	const char *name;   /* 1..STORE_NAME_MAX bytes, copied */
	int64_t lease_ms;   /* LT_MIN_LEASE_MS..LT_MAX_LEASE_MS */
	bool wait;	    /* false: try once; true: poll until acquired */
	int64_t timeout_ms; /* wait only: give up after this, 0 = never */
	const char *holder; /* label of this lease; NULL = the table's */
	const char *owner;  /* owner id to write (a retried acquire reuses
			       it, a detached lease may bring its own),
			       1..STORE_ID_MAX printable ASCII bytes; NULL =
			       a new one */
	/* Called each time the store answers this acquire without an error
	 * (the lock found free or held); may be NULL. */
	void (*answered)(void *arg);
	/* Tracing (core/trace.h): the client's context the acquire's span is
	 * a child of (NULL or invalid: a new trace), and the span's name
	 * (NULL: Lock.Acquire when wait, else Lock.TryAcquire). */
	const struct trace_ctx *trace_parent;
	const char *span_name;
	/* The hash of the lease's secret (STORE_SECRET_HASH_LEN lowercase
	 * hex digits, copied; the secret itself never reaches the core), or
	 * NULL: a lease without one. Written on the item as secretHash: a
	 * renewal or release by (name, token) through lt_foreign must then
	 * present the secret's hash (or be an operator's forced release). */
	const char *secret_hash;
};

/* The result of an acquire: lease != NULL (now owned by the callee: release
 * it with lease_release), or lease == NULL and err == NULL (a try found the
 * lock held, or a wait timed out), or err != NULL (the store failed; err is
 * valid during the call only). */
typedef void (*lt_acquire_cb)(void *arg, struct lease *lease, const struct lt_error *err);
typedef void (*lt_lost_cb)(void *arg, struct lease *lease, enum lt_loss reason);
/* renewed: 1 renewed now, 0 the lease has ended; or err != NULL. */
typedef void (*lt_renew_cb)(void *arg, int renewed, const struct lt_error *err);

/* Returns NULL on out-of-memory or bad options (LT_HEARTBEAT_REPLICA: a
 * replica id out of bounds, or a store without session items). clock,
 * store and obs must outlive the locktable. LT_HEARTBEAT_REPLICA: the
 * session is made and its CREATE sent now; when it ends (marked dead, its
 * item gone), its leases are lost (LT_SESSION) and the next write that
 * takes a lock makes a new session (a new incarnation). */
struct locktable *lt_new(struct clock *clock, struct store *store, struct obs *obs,
			 const struct lt_options *opts);

/* LT_HEARTBEAT_REPLICA: the session new leases join now (ended, until a
 * write makes the next one); NULL in LT_HEARTBEAT_LEASE. */
struct lt_session;
struct lt_session *lt_session_of(const struct locktable *t);

/* Records spans of acquires (Lock.Acquire, Lock.TryAcquire), renewals
 * (Lock.Renew, by the heartbeat or lease_renew: each the root of its
 * trace, linked to its acquire) and releases (Lock.Release, linked too),
 * with their store requests as children, to tracer (NULL: none; it must
 * outlive t). lt_foreign's renewals and releases are Lock.Renew and
 * Lock.Release roots without a link (the acquire may be another
 * replica's). Attributes: leasegate.lock.name, db.collection.name; an
 * acquire's leasegate.lock.acquired, leasegate.lock.takeover and
 * leasegate.lock.fencing_token; a renewal's leasegate.lock.renewed; a
 * foreign release's leasegate.lock.released and leasegate.lock.forced. */
struct tracer;
void lt_set_tracer(struct locktable *t, struct tracer *tracer);

/* Frees t. Every lease must have been released and every wait cancelled;
 * releases still in flight are dropped, and so are the writes of waits
 * cancelled while their write was in flight (what such a write took is
 * left to its lease's end). */
void lt_free(struct locktable *t);

/* An owner id as a store keeps it: 1..STORE_ID_MAX bytes, printable
 * ASCII without space. */
bool lt_id_ok(const char *id);

/* Validates args (lease range, name length, holder 1..256); on failure
 * returns false and writes a message for the client into msg. */
bool lt_args_valid(const struct lt_acquire_args *args, char *msg, size_t msglen);

/* Starts an acquire. Returns a handle to cancel it, or NULL on bad args or
 * out-of-memory (no callback then). cb runs exactly once unless cancelled. */
struct lt_wait *lt_acquire(struct locktable *t, const struct lt_acquire_args *args,
			   lt_acquire_cb cb, void *arg) __attribute__((warn_unused_result));

/* Cancels an acquire: cb will not run. A write already sent that succeeds
 * is released at once, so a cancelled wait never leaves a lease behind. */
void lt_acquire_cancel(struct lt_wait *w);

/* The lease of this locktable holding name, or NULL. */
struct lease *lt_local_lease(struct locktable *t, const char *name);

/* name's item was freed by a write of this replica outside the lease
 * core (a script's or a transaction's commit that deleted the key): the
 * waiters queued here for it try at once, as after a local release,
 * instead of at their next poll. */
void lt_item_freed(struct locktable *t, const char *name);

struct lt_state {
	bool exists; /* false: no item */
	bool held;
	char holder[STORE_HOLDER_MAX + 1];
	int64_t lease_ms;
	int64_t token;
	int64_t ttl; /* epoch seconds, 0 when the item has none */
	char owner[STORE_ID_MAX + 1];
	/* the hash of the lease's secret as the item shows it, "" when the
	 * lease has none (lock_item.secret_hash) */
	char secret_hash[STORE_SECRET_HASH_LEN + 1];
	/* held: how long before a contender of this replica could take the
	 * lease over, on this replica's clock — what remains of this
	 * replica's own lease, or the lease less how long this replica has
	 * seen the same rvn (the whole lease when it reads it first). */
	int64_t remaining_ms;
	/* shared holders (core/lt_shared.h) the item counts now, 0 when none:
	 * lt_sh_state reads them */
	int64_t shared;
	/* held in session mode (`--heartbeat replica`, docs/design/
	 * replica-heartbeat.md): the item names its holder's session, and
	 * lease_ms is its sleaseMs (the real lease), never its 10-year
	 * leaseMs */
	bool session;
	/* session: the item names this locktable's own session, not ended —
	 * this replica holds the lock in session mode. Then confirmed_ago_ms
	 * is how long ago (this replica's monotonic clock) its view of the
	 * lock was last confirmed: for a lease held here, the send of its own
	 * write (acquire, explicit renewal) or of the session's last heartbeat
	 * answered in time (lt_session_view's confirmed_ms), whichever is
	 * later — its end is a lease after that; for an item naming the
	 * session that no lease here holds, the heartbeat's. -1 before the
	 * first, and whenever !session_here. */
	bool session_here;
	int64_t confirmed_ago_ms;
};

typedef void (*lt_state_cb)(void *arg, const struct lt_state *state, const struct lt_error *err);

/* Reads the item of name (one consistent read). Returns false on
 * out-of-memory (no callback). */
bool lt_get_state(struct locktable *t, const char *name, lt_state_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Reads the item of name at once when the store can (the embedded store):
 * true with *st filled; false when only lt_get_state can. */
bool lt_state_now(struct locktable *t, const char *name, struct lt_state *st);

/* What remains of the lease an item read at name's key shows, on this
 * replica's clock (as lt_state.remaining_ms): for the lock keyspace of
 * scripts (gateway/script), which reads items itself. 0: none. */
int64_t lt_item_remaining_ms(struct locktable *t, const char *name, const struct lock_item *item);

const char *lt_table(const struct locktable *t);
struct clock *lt_clock(const struct locktable *t);

struct lt_stats {
	uint64_t leases; /* held, not yet released */
	uint64_t waits;	 /* acquires in progress */
	uint64_t locks;	 /* locks remembered (held, waited on or seen) */
	uint64_t releases_in_flight;
	/* the trims of the holders seen past seen_max (one a read) and the
	 * holders they looked at: work done, for tests */
	uint64_t seen_trims, seen_trim_steps;
	/* --heartbeat replica: its verification sweep's counts (lt_sweep.h);
	 * all 0 in per-lease mode */
	bool sweeping;
	struct lt_sweep_stats sweep;
};
void lt_stats(const struct locktable *t, struct lt_stats *out);

/* --- leases --- */

const char *lease_name(const struct lease *l);
int64_t lease_token(const struct lease *l);
int64_t lease_duration_ms(const struct lease *l);
const char *lease_holder(const struct lease *l); /* NULL when unlabeled */
const char *lease_owner(const struct lease *l);
bool lease_takeover(const struct lease *l);	/* acquired by a takeover */
bool lease_held(const struct lease *l);		/* not ended */
enum lt_loss lease_loss(const struct lease *l); /* LT_HELD while held */
/* Monotonic ms at which the lease runs out unless renewed. */
int64_t lease_end_ms(const struct lease *l);

/* Registers the callback run once when the lease is lost (never after
 * lease_release). */
void lease_on_lost(struct lease *l, lt_lost_cb cb, void *arg);

/* Sends one renewal now. cb: 1 renewed, 0 ended (also when it ends now,
 * taken over or deleted), or the store's error (the heartbeat goes on).
 * LT_HEARTBEAT_REPLICA: the renewal names the lease's session and, done,
 * proves the lease alive from its send (the session's beats go on).
 * Returns false on out-of-memory (no callback). */
bool lease_renew(struct lease *l, lt_renew_cb cb, void *arg) __attribute__((warn_unused_result));

/* Lets the lease go without releasing it: no more renewals, no end timer,
 * no lost callback; the item stays held under its owner until its lease
 * runs out (contenders take it over as from a crashed holder), a renewal
 * or release by (name, token) (lt_foreign), or a takeover. This replica
 * treats it from now on as another's holder, seen now. Returns the
 * lease's token; l is invalid afterwards. LT_HEARTBEAT_REPLICA: the lease
 * leaves the session and one write (a renewal conditioned on its rvn,
 * naming no session, carried by the table) puts the item back in
 * per-lease form, as lt_foreign's renewals keep it. */
int64_t lease_detach(struct lease *l);

/* Marks l orphaned on its item (ORPHAN in store.h): its connection closed
 * while the replica drains, and another connection may adopt it
 * (lt_adopt) while l goes on renewing it. cb: 1 marked, 0 the lease has
 * ended, or the store's error. Returns false on out-of-memory (no
 * callback). */
bool lease_orphan(struct lease *l, lt_renew_cb cb, void *arg) __attribute__((warn_unused_result));

struct lt_adopt_args {
	const char *name;
	int64_t token;		     /* the lease's fencing token */
	const char *secret_hash;     /* the hash of the secret presented */
	const char *new_secret_hash; /* the adopted lease's: its secret rotates */
	int64_t lease_ms;	     /* LT_MIN_LEASE_MS..LT_MAX_LEASE_MS, 0: the lease's own */
	const char *holder;	     /* label; NULL = the table's */
};

/* Adopts the orphaned lease (name, token) (marked by lease_orphan on the
 * replica that held it), presented with its secret's hash: one write
 * conditioned on the item's owner, the orphan mark, the fence and the
 * hash (ADOPT in store.h) makes it a lease of t, held, with the same
 * token, a new owner, rvn and secret hash, without a moment where the lock
 * is free. cb: the lease; NULL without err when (name, token) is no
 * orphaned lease with that secret (nothing written); NULL with err on a
 * store error. A lock t holds itself is refused as not adoptable. Returns
 * false on out-of-memory or bad arguments (no callback). */
bool lt_adopt(struct locktable *t, const struct lt_adopt_args *a, lt_acquire_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* The hash of the lease's secret (lt_acquire_args.secret_hash), or NULL. */
const char *lease_secret_hash(const struct lease *l);

/* Compares a secret's hash with the one a lease or item keeps, in time
 * independent of where they differ: true when both are set and equal.
 * stored "" (no secret) never matches. */
bool lt_secret_match(const char *stored, const char *presented);

/* The caller's pointer on a lease (NULL until set). */
void lease_set_data(struct lease *l, void *data);
void *lease_data(const struct lease *l);

/* Gives the lease back: hands the lock to the first local waiter with one
 * conditional write, else sends a conditional release (a failure is logged
 * (43), never reported). Renewals and checks still pending are answered 0
 * (ended), later, from the loop. l is invalid afterwards. */
void lease_release(struct lease *l);

/* lease_release(), then cb(arg, 1, NULL) once the release is done: its
 * write answered or the lock handed on; cb(arg, -1, err) once its write
 * failed (logged too, as with lease_release; the item keeps this lease's
 * owner until its lease runs out or, when refused, another holder has
 * it); cb(arg, 0, NULL) when the lease had ended already. */
void lease_release_then(struct lease *l, lt_renew_cb cb, void *arg);

/* Fencing check: cb(arg, 1) while the store still shows this owner and
 * token, cb(arg, 0) when not, or an error. */
bool lease_check(struct lease *l, lt_renew_cb cb, void *arg) __attribute__((warn_unused_result));

const char *lt_loss_name(enum lt_loss reason);

/* --- leases by what the item shows, wherever they are held --- */

enum lt_foreign_op {
	LT_FOREIGN_RENEW,   /* a renewal: a new rvn, as the holder's heartbeat;
			       on a lease of this locktable, lease_renew */
	LT_FOREIGN_RELEASE, /* a release by (name, token): freed, "token" */
	LT_FOREIGN_FORCE,   /* an operator's release: freed, "force" */
};

struct lt_foreign_req {
	const char *name;
	enum lt_foreign_op op;
	int64_t token;	   /* > 0: the item's fence must be this */
	const char *owner; /* non-NULL: the item's owner must be this */
	/* non-NULL: the item's owner must begin with this (a kind of lease:
	 * the gateway's detached ones), at most STORE_ID_MAX bytes */
	const char *owner_prefix;
	/* RENEW: the new lease; 0 keeps the item's; with add_remaining, ms
	 * added to what remains of the lease (as lt_state.remaining_ms). */
	int64_t lease_ms;
	bool add_remaining;
	/* RENEW, RELEASE: the hash of the secret presented (as
	 * lt_acquire_args.secret_hash), or NULL; when the item shows a lease
	 * with a secret, the write is made only if this is its hash or
	 * secret_waived (the caller holds the force-release right). FORCE
	 * needs neither. */
	const char *secret_hash;
	bool secret_waived;
};

/* Result: done 1 (renewed, released), 0 the item shows no such lease
 * (none held, another owner or fence, or a lease with a secret whose
 * hash was not presented: st->secret_hash tells); st is the item as read
 * first (NULL on error); err on a store error. */
typedef void (*lt_foreign_cb)(void *arg, int done, const struct lt_state *st,
			      const struct lt_error *err);

/* Acts on the lease the item of req->name shows (matching token, owner and
 * owner prefix; none: whatever holds it), whichever replica holds it: one
 * consistent read, then a RENEW or RELEASE conditional on the owner it
 * showed (that owner wrote that fence: owners are new per acquire), so the
 * write applies to that lease or to none. The holding replica learns of a
 * release at its next renewal (loss LT_RELEASED or LT_FORCED); when the
 * lease is held by this locktable, at once. Local waiters are woken after
 * a release. Holder labels are kept. Returns false on out-of-memory or a
 * bad request (no callback). */
bool lt_foreign(struct locktable *t, const struct lt_foreign_req *req, lt_foreign_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* --- the lock items of the table --- */

struct lt_scan_entry {
	const char *name;
	struct lt_state st;
};

/* A page of the table's lock items: count entries (items that are no lock
 * are left out), next ("" at the end); or err. Valid during the call. */
typedef void (*lt_scan_cb)(void *arg, const struct lt_scan_entry *entries, unsigned count,
			   const char *next, const struct lt_error *err);

/* Reads a page of at most limit (1..STORE_SCAN_MAX) lock items from cursor
 * (NULL or "": the start). Returns NULL on out-of-memory or a bad cursor
 * (no callback), else a handle for lt_scan_cancel. */
struct lt_scan *lt_scan(struct locktable *t, const char *cursor, unsigned limit, lt_scan_cb cb,
			void *arg) __attribute__((warn_unused_result));
void lt_scan_cancel(struct lt_scan *sc);

/* The lock name of a wait (lt_acquire's handle). */
const char *lt_wait_name(const struct lt_wait *w);

/* --- fenced transactions (the reference's IsHeld, "Fencing") --- */

struct lt_tx;

enum lt_tx_status {
	LT_TX_OK,	 /* committed */
	LT_TX_LOST,	 /* the lock check failed: the lease no longer holds the
			    lock (.loss); the lease is lost through the normal
			    path (its lost callback) if this locktable held it */
	LT_TX_CANCELLED, /* a client item failed: .index, .reasons */
	LT_TX_ERROR	 /* .err (TRANSIENT or FATAL) */
};

struct lt_tx_result {
	enum lt_tx_status status;
	enum lt_loss loss;	    /* LOST */
	unsigned index;		    /* CANCELLED: the client's item, from 1 */
	const char *reasons;	    /* CANCELLED: the client's items' reasons (JSON) */
	const struct lt_error *err; /* ERROR */
};

/* res and what it points to are valid during the call only. */
typedef void (*lt_tx_cb)(void *arg, const struct lt_tx_result *res);

/* Writes the client's items (a validated JSON array text of len bytes,
 * see core/store/store_tx.h) in one transaction with a check that l's owner and
 * token still hold its lock, at commit. The lease may be released or lost
 * while it is in flight: the answer still comes (the check decides).
 * client_token: the transaction's ClientRequestToken (1..STORE_TX_TOKEN_MAX
 * bytes of A-Z a-z 0-9 -, read during the call only), so that DynamoDB
 * applies a client's resend once; NULL: a new one.
 * Returns a handle for lt_transact_cancel, or NULL on out-of-memory (no
 * callback). */
struct lt_tx *lt_transact(struct lease *l, const char *items, size_t len, const char *client_token,
			  lt_tx_cb cb, void *arg) __attribute__((warn_unused_result));

/* cb will not run; the transaction may still commit. */
void lt_transact_cancel(struct lt_tx *tx);

#endif
