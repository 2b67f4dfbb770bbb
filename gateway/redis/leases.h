/*
 * redis/leases: the Redis front-end of the lease-session layer — LOCK.*
 * (lockcmds.c; the operators' LOCK.LIST and LOCK.FORCE-RELEASE in
 * admincmds.c) and LEADER.* (leadercmds.c) parse RESP arguments into
 * requests of gateway/lease/lsess.h and render its results; this module
 * gives each Redis session its struct lsess (released at close, at RESET),
 * renders statuses, pushes losses to RESP3 sessions and writes the INFO
 * sections "leases" and the store's (through the backend: no store is
 * named here).
 *
 * Rendering: LS_INVALID, LS_CONFLICT, LS_FAILED and LS_CANCELLED are
 * "-ERR <message>", LS_TRANSIENT "-TRYAGAIN <message>", LS_LOST
 * "-LOST <reason>"; LS_OK and LS_NONE are each command's own reply.
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

/* Parses a non-negative integer argument. */
bool rl_parse_int(const struct resp_arg *a, int64_t *out);

/* What an acquire's arguments may say besides WAIT and HOLDER. */
enum rl_acq_flags {
	RL_ACQ_DETACH = 1 << 0, /* DETACH (LOCK.ACQUIRE, not LEADER.CAMPAIGN) */
};

/* Parses "name lease-ms [WAIT ms] [HOLDER label]", and [DETACH] with
 * RL_ACQ_DETACH in flags, into *req (wait_ms -1: no WAIT); lease-ms is
 * mandatory here (not 0, which the layer would take as the default).
 * Writes the error and returns false when bad. */
bool rl_parse_acquire(struct cmd_call *c, struct ls_acquire_req *req, unsigned flags);

int rl_lockcmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_leadercmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
int rl_admincmds_register(struct rl_app *app, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

#endif
