/*
 * redis/leases: the Redis front-end of the lease-session layer — LOCK.*
 * (lockcmds.c; the operators' LOCK.LIST and LOCK.FORCE-RELEASE in
 * admincmds.c), LEADER.* (leadercmds.c) and the commands of Redis lock
 * libraries (compatcmds.c: SET NX PX, GET, DEL, PEXPIRE, PTTL...;
 * scriptcmds.c: EVALSHA, EVAL, SCRIPT for their known scripts) parse RESP
 * arguments into requests of gateway/lease/lsess.h and render its
 * results; this module gives each Redis session its struct lsess
 * (released at close, at RESET), renders statuses, pushes losses to RESP3
 * sessions and writes the INFO sections "leases" and the store's (through
 * the backend: no store is named here).
 *
 * Rendering: LS_INVALID, LS_CONFLICT, LS_FAILED and LS_CANCELLED are
 * "-ERR <message>", LS_TRANSIENT "-TRYAGAIN <message>", LS_LOST
 * "-LOST <reason>", LS_TXCANCELLED "-TXCANCELLED <reasons JSON>", LS_DENIED
 * "-NOPERM <message>"; LS_OK and LS_NONE are each
 * command's own reply.
 *
 * Not here: the lease rules (gateway/lease, core/), sessions and sockets.
 */
#ifndef LG_REDIS_LEASES_H
#define LG_REDIS_LEASES_H

#include <stdbool.h>
#include <stdint.h>

#include "gateway/lease/lsess.h"
#include "gateway/redis/commands.h"

struct backend;
struct redis;
struct sess;
struct store;
struct obs;

struct rl_app {
	struct lsvc *svc;
	const struct backend *backend; /* the store's figures, for INFO */
	struct locktable *lt;
	struct store *store;
	const struct obs *obs;
	const char *store_kind; /* "embedded" or "dynamodb" */
	uint64_t pushes_sent;
	/* EVAL's engine (gateway/script), made at the first script; owned */
	struct sr_engine *scripts;
	/* the channels of SUBSCRIBE (pubsub.c), made at the first; owned */
	struct rl_pubsub *pubsub;
	/* PUBLISH across replicas (pubsub.c): the channel reads' interval (0:
	 * this replica only) and the TTL of a channel item (0: none) */
	int64_t pubsub_poll_ms, pubsub_ttl_ms;
};

/* The Redis side over svc and the backend's lock table and store (neither
 * owned; both freed after this). NULL on OOM. */
struct rl_app *rl_new(struct lsvc *svc, const struct backend *backend)
	__attribute__((warn_unused_result));
/* Frees app; call it after srv_free (whose on_close hooks free the
 * sessions' lsess) and before lsvc_free. */
void rl_free(struct rl_app *app);

/* Adds LOCK.*, LEADER.*, the INFO sections "leases" and the store's own
 * (named after its kind: "embedded", "dynamodb") to cmds, and sets the
 * session hooks of the Redis front-end. -1 on failure. */
int rl_register(struct rl_app *app, struct cmd_table *cmds, struct redis *redis)
	__attribute__((warn_unused_result));

/* Adds the command rows of LOCK.*, LEADER.* and the lock libraries'
 * commands to cmds, their handlers given app (rl_register does, with the
 * rest; the reference generator, tools/gen_docs.c, with app NULL: it runs
 * none). -1 on failure. */
int rl_register_commands(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

/* --- for lockcmds.c and leadercmds.c --- */

/* The lease session of s, made on first use; NULL on out-of-memory (the
 * error reply is written then). */
struct lsess *rl_lsess(struct rl_app *app, struct cmd_call *c);

/* How a command shapes LS_OK and LS_NONE. */
typedef void (*rl_shape_fn)(struct buf *out, enum resp_proto proto, const struct ls_result *res);
void rl_shape_token(struct buf *out, enum resp_proto proto, const struct ls_result *res);
void rl_shape_flag(struct buf *out, enum resp_proto proto, const struct ls_result *res);

/* Writes res: an error status as the table says, else shape. */
void rl_render(struct buf *out, enum resp_proto proto, const struct ls_result *res,
	       rl_shape_fn shape);
/* The answer of an operation: st LS_PENDING suspends the session (the
 * callback answers), anything else is rendered now. */
void rl_answer(struct cmd_call *c, enum ls_status st, const struct ls_result *now,
	       rl_shape_fn shape);
/* The callback side (arg: the struct sess): renders unless the session is
 * closing, and resumes it. */
void rl_done(void *sess, const struct ls_result *res, rl_shape_fn shape);

/* LOCK.STATE's reply for res (an LS_OK of ls_state; lockcmds.c): null
 * when the lock has no item, else a map (a flat array in RESP2) — held,
 * holder, lease-ms, fencing-token, mine, heartbeat ("lease" or "replica":
 * how its holder proves it alive), and when this replica holds it in
 * session mode confirmed-ms-ago (lt_state.confirmed_ago_ms: since its
 * lease's own write or its session's last heartbeat answered in time,
 * whichever is later; null before the first) — or the shared form. */
void rl_shape_state(struct buf *out, enum resp_proto proto, const struct ls_result *res);

/* Parses a non-negative integer argument. */
bool rl_parse_int(const struct resp_arg *a, int64_t *out);

/* The token argument of LOCK.ADOPT / LEADER.ADOPT (argv[2]): a positive
 * integer, else the error written and false. */
bool rl_parse_token(struct cmd_call *c, int64_t *token);
/* An acquire's or campaign's answer: [token, secret] when the lease has a
 * secret (ADOPTABLE: told this once), else the token (nil when none). */
void rl_shape_secret(struct buf *out, enum resp_proto proto, const struct ls_result *res);
/* An adopt's answer: [token, new secret], or 0 when not adoptable. */
void rl_shape_adopted(struct buf *out, enum resp_proto proto, const struct ls_result *res);
/* LOCK.ADOPT / LEADER.ADOPT name token secret through fn (ls_adopt,
 * ls_leader_adopt), answered with rl_shape_adopted. */
typedef enum ls_status (*rl_adopt_fn)(struct lsess *s, const char *name, size_t name_len,
				      int64_t token, const char *secret, size_t secret_len,
				      struct ls_result *now, ls_done_cb cb, void *arg);
void rl_adopt(struct cmd_call *c, rl_adopt_fn fn);

/* What an acquire's arguments may say besides WAIT and HOLDER. */
enum rl_acq_flags {
	RL_ACQ_DETACH = 1 << 0,	   /* DETACH (LOCK.ACQUIRE, not LEADER.CAMPAIGN) */
	RL_ACQ_ADOPTABLE = 1 << 1, /* ADOPTABLE (both) */
	RL_ACQ_SHARED = 1 << 2,	   /* SHARED and LIMIT n (LOCK.ACQUIRE) */
};

/* Parses "name lease-ms [WAIT ms] [HOLDER label]", and [DETACH] with
 * RL_ACQ_DETACH in flags, into *req (wait_ms -1: no WAIT); lease-ms is
 * mandatory here (not 0, which the layer would take as the default).
 * Writes the error and returns false when bad. */
bool rl_parse_acquire(struct cmd_call *c, struct ls_acquire_req *req, unsigned flags);
/* rl_parse_acquire, and with RL_ACQ_SHARED in flags SHARED (a reader) and
 * LIMIT n (req->limit: one of at most n holders), either setting *shared. */
bool rl_parse_acquire_mode(struct cmd_call *c, struct ls_acquire_req *req, unsigned flags,
			   bool *shared);

/* The right of LOCK.FORCE-RELEASE on key (its command or @admin, and a
 * pattern giving the name): what ending or stretching a lease another
 * session took with LOCK.ACQUIRE asks, and what waives a lease's secret. */
struct sess;
bool rl_may_force(const struct sess *s, const struct resp_arg *key);

int rl_lockcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_leadercmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_fencecmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_admincmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
/* The test mode's commands (testcmds.c): added when app's service is in
 * test mode (or app is NULL: every row, for the reference), else noted
 * absent (cmd_table_note_absent). */
int rl_testcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

/* --- for compatcmds.c and scriptcmds.c (Redis lock libraries) --- */

/* A command answered later that needs more than its session to finish
 * (DEL of several keys) keeps its context on the session: ctx (from
 * malloc) is freed at the session's close unless rl_drop_ctx took it back
 * first. One at a time: a session runs one command at a time. The session
 * must have its lsess (rl_lsess). */
void rl_keep_ctx(struct sess *s, void *ctx);
/* Takes the kept context back (the caller frees it). */
void *rl_drop_ctx(struct sess *s);

/* The longest lease a client may ask for: --max-lease, at most
 * LT_MAX_LEASE_MS. */
int64_t rl_max_lease_ms(const struct cmd_call *c);

/* True when ms (an expiry a lock library gives: SET's PX, PEXPIRE, a
 * script's) is a lease leasegate grants; else writes "-ERR <what> must
 * be ..." naming the bounds in the unit the client used (scale 1000: it
 * gave seconds) and returns false. */
bool rl_check_expiry(struct cmd_call *c, int64_t ms, int64_t scale, const char *what);

/* Runs ls_foreign(req) for c and answers 1 (done) or 0 (no such lease),
 * now or later. */
void rl_foreign_flag(struct cmd_call *c, const struct ls_foreign_req *req);

/* SET key value NX PX ms, and the acquire scripts: a detached lease on
 * key whose owner is value, tried once; answered with shape (LS_OK: taken;
 * LS_NONE: held, also by this session) now, or later through done (which
 * calls rl_done with shape). */
void rl_acquire_detached(struct cmd_call *c, const struct resp_arg *key,
			 const struct resp_arg *value, int64_t ms, rl_shape_fn shape,
			 ls_done_cb done);

/* True when v is a value a detached lease can carry (SET key value NX
 * PX): 1..LS_VALUE_MAX printable ASCII bytes, no space (as the lease layer). */
bool rl_value_ok(const struct resp_arg *v);

/* The script engine of the gateway (gateway/script), made at the first
 * use; NULL with the error written to c->out. */
struct sr_engine;
struct sr_engine *rl_script_engine(struct cmd_call *c);

/* Runs c, a command of the lock keyspace (script_keys.h: SET with any
 * option, MSET, EXISTS, HSET...), alone on the engine of scripts: its keys
 * read, the command run on them, its writes committed in one commit. */
void rl_keyspace(struct cmd_call *c);

/* A script's or a transaction's reply (struct sv) as Redis gives it to a
 * RESP2 or RESP3 client. */
struct sv;
void rl_render_sv(struct buf *out, enum resp_proto proto, const struct sv *v);

/* The MULTI/WATCH state of c's session (txcmds.c), kept with its lease
 * session and freed at its close or RESET by rl_tx_free: a slot holding
 * NULL until txcmds.c makes one. NULL on out-of-memory (the error
 * written). */
struct rl_tx;
struct rl_tx **rl_tx_slot(struct cmd_call *c);
void rl_tx_free(struct rl_tx *tx);

int rl_txcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

/* Pub/Sub on this replica (pubsub.c): a channel's subscribers here, a
 * message delivered to them (app: the struct rl_app), a session's
 * subscriptions dropped (its close, RESET). */
struct rl_pubsub;
size_t rl_pubsub_count(void *app, const char *channel, size_t len);
void rl_pubsub_publish(void *app, const char *channel, size_t len, const char *msg, size_t msg_len);
void rl_pubsub_drop(struct rl_app *app, struct sess *s);
void rl_pubsub_free(struct rl_pubsub *ps);
/* The replica drains (--drain-grace): every RESP3 connection of r is
 * pushed ["leasegate.draining", seconds] before it is closed, so that its
 * client reconnects elsewhere and adopts its locks (LOCK.ADOPT). Returns
 * how many were told. */
struct redis;
size_t rl_push_draining(struct redis *r, int64_t grace_ms);

/* INFO pubsub of app (a struct rl_app). */
void rl_pubsub_info(struct buf *text, void *app);
int rl_pubsubcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_compatcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_scriptcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

#endif
