/*
 * redis/lockcmds: LOCK.ACQUIRE, LOCK.RENEW, LOCK.RELEASE and LOCK.STATE,
 * as docs/redis.md's command table describes them: RESP arguments into requests of the
 * lease-session layer, its results into replies. A command answered later
 * suspends its session; the layer calls back only while the session lives.
 */
#include <string.h>

#include "core/lt_shared.h"
#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

/* --- LOCK.ACQUIRE name lease-ms [WAIT ms] [HOLDER label] [DETACH] ---
 * DETACH: a lease no connection owns (not renewed, not released at close),
 * ended by its lease or by LOCK.RENEW/LOCK.RELEASE name token from any
 * connection of any replica. */

static void acquire_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_secret);
}

/* A shared hold's answer: [token, slot], nil when not granted. */
static void shape_shared(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	if (res->status != LS_OK || res->slot < 0) {
		rl_shape_token(out, proto, res);
		return;
	}
	bool detached = res->handle[0] != '\0'; /* told its secret, once */
	resp_add_array(out, detached ? 3 : 2);
	resp_add_int(out, res->token);
	resp_add_int(out, res->slot);
	if (detached)
		resp_add_cstr(out, res->handle);
}

static void shared_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_shared);
}

static void cmd_acquire(struct cmd_call *c)
{
	struct ls_acquire_req req;
	struct ls_result now;
	struct lsess *ls;
	bool shared;
	if (!rl_parse_acquire_mode(c, &req, RL_ACQ_DETACH | RL_ACQ_ADOPTABLE | RL_ACQ_SHARED,
				   &shared) ||
	    (ls = rl_lsess(c->arg, c)) == NULL)
		return;
	if (shared)
		rl_answer(c, ls_acquire_shared(ls, &req, &now, shared_done, c->sess), &now,
			  shape_shared);
	else
		rl_answer(c, ls_acquire(ls, &req, &now, acquire_done, c->sess), &now,
			  rl_shape_secret);
}

/* --- LOCK.RENEW / LOCK.RELEASE name [token [secret]] ---
 * A lease acquired ADOPTABLE is renewed or released by token from another
 * connection only with its secret, or with the force-release right. */

static void flag_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

/* Parses the optional token of a RENEW or RELEASE (0: none); writes the
 * error and returns false when bad. */
static bool parse_token(struct cmd_call *c, int64_t *token)
{
	*token = 0;
	if (c->argc > 4) {
		resp_add_errorf(c->out, "ERR syntax error");
		return false;
	}
	if (c->argc >= 3 && (!rl_parse_int(&c->argv[2], token) || *token == 0)) {
		resp_add_errorf(c->out, "ERR token must be a positive integer");
		return false;
	}
	return true;
}

/* The secret argument (argv[3]) or NULL, and its length. */
static const char *secret_arg(const struct cmd_call *c, size_t *len)
{
	*len = c->argc == 4 ? c->argv[3].len : 0;
	return c->argc == 4 ? c->argv[3].p : NULL;
}

static void cmd_renew(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t token;
	size_t slen;
	if (!parse_token(c, &token) || (ls = rl_lsess(c->arg, c)) == NULL)
		return;
	const char *secret = secret_arg(c, &slen);
	bool waived = rl_may_force(c->sess, &c->argv[1]);
	rl_answer(c,
		  ls_renew_secret(ls, c->argv[1].p, token, secret, slen, waived, &now, flag_done,
				  c->sess),
		  &now, rl_shape_flag);
}

static void cmd_release(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t token;
	size_t slen;
	if (!parse_token(c, &token) || (ls = rl_lsess(c->arg, c)) == NULL)
		return;
	const char *secret = secret_arg(c, &slen);
	bool waived = rl_may_force(c->sess, &c->argv[1]);
	rl_answer(c,
		  ls_release_secret(ls, c->argv[1].p, token, secret, slen, waived, &now, flag_done,
				    c->sess),
		  &now, rl_shape_flag);
}

/* --- LOCK.ADOPT name token secret ---
 * The lease of a connection that closed while its replica drained, held
 * from now on by this connection: [token, new secret], or 0 when (name,
 * token) is no orphaned lease with that secret. */

static void cmd_adopt(struct cmd_call *c)
{
	rl_adopt(c, ls_adopt);
}

/* --- LOCK.STATE name --- */

/* A map key as its RESP bulk string, encoded here: LOCK.STATE writes up
 * to seven per reply. */
#define KEY(len, name)	  "$" #len "\r\n" name "\r\n"
#define add_key(out, enc) buf_raw((out), (enc), sizeof(enc) - 1)

/* The holders of a name held shared: a map of its own per holder. */
static void add_holders(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	const struct lt_sh_state *sh = res->sh;
	resp_add_array(out, sh->count);
	for (unsigned i = 0; i < sh->count; i++) {
		const struct lt_sh_holder *h = &sh->holders[i];
		resp_add_map(out, proto, 5);
		add_key(out, KEY(4, "slot"));
		resp_add_int(out, h->slot);
		add_key(out, KEY(13, "fencing-token"));
		resp_add_int(out, h->token);
		add_key(out, KEY(8, "lease-ms"));
		resp_add_int(out, h->lease_ms);
		add_key(out, KEY(6, "holder"));
		if (h->holder[0] != '\0')
			resp_add_cstr(out, h->holder);
		else
			resp_add_null(out, proto);
		add_key(out, KEY(4, "mine"));
		if (ls_shared_detached(h->owner)) /* no connection's */
			resp_add_cstr(out, "detached");
		else
			resp_add_int(out, res->mine && (int)h->slot == res->slot);
	}
}

/* LOCK.STATE of a name held shared: its mode, limit, group token, whether
 * a writer waits, whether this connection holds it, and every holder. */
static void shape_shared_state(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	const struct lt_sh_state *sh = res->sh;
	resp_add_map(out, proto, 7);
	add_key(out, KEY(4, "held"));
	resp_add_int(out, sh->count > 0);
	add_key(out, KEY(4, "mode"));
	resp_add_cstr(out, sh->mode == STORE_SH_LIMIT ? "limit" : "shared");
	add_key(out, KEY(5, "limit"));
	resp_add_int(out, sh->limit);
	add_key(out, KEY(13, "fencing-token"));
	resp_add_int(out, sh->fence);
	add_key(out, KEY(14, "writer-waiting"));
	resp_add_int(out, sh->writer_waiting);
	add_key(out, KEY(4, "mine"));
	resp_add_int(out, res->mine);
	add_key(out, KEY(7, "holders"));
	add_holders(out, proto, res);
}

/* How the holder proves it alive (as LOCK.LIST TABLE's heartbeat): "replica"
 * when the item names its session, else "lease"; and, when this replica
 * holds it so, how long ago this replica last confirmed it
 * (lt_state.confirmed_ago_ms; null before the first). */
static void add_heartbeat(struct buf *out, enum resp_proto proto, const struct lt_state *st)
{
	add_key(out, KEY(9, "heartbeat"));
	resp_add_cstr(out, st->held && st->session ? "replica" : "lease");
	if (!st->session_here)
		return;
	add_key(out, KEY(16, "confirmed-ms-ago"));
	if (st->confirmed_ago_ms >= 0)
		resp_add_int(out, st->confirmed_ago_ms);
	else
		resp_add_null(out, proto);
}

void rl_shape_state(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	const struct lt_state *st = &res->st;
	if (!st->exists) {
		resp_add_null(out, proto);
		return;
	}
	if (res->sh != NULL) {
		shape_shared_state(out, proto, res);
		return;
	}
	resp_add_map(out, proto, st->session_here ? 7 : 6);
	add_key(out, KEY(4, "held"));
	resp_add_int(out, st->held);
	add_key(out, KEY(6, "holder"));
	if (st->held && st->holder[0] != '\0')
		resp_add_cstr(out, st->holder);
	else
		resp_add_null(out, proto);
	add_key(out, KEY(8, "lease-ms"));
	resp_add_int(out, st->lease_ms);
	add_key(out, KEY(13, "fencing-token"));
	resp_add_int(out, st->token);
	add_key(out, KEY(4, "mine"));
	if (res->detached) /* no connection's: neither 1 nor 0 says it */
		resp_add_cstr(out, "detached");
	else
		resp_add_int(out, res->mine);
	add_heartbeat(out, proto, st);
}

static void state_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_state);
}

static void cmd_state(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	rl_answer(c, ls_state(ls, c->argv[1].p, c->argv[1].len, &now, state_done, c->sess), &now,
		  rl_shape_state);
}

static const struct cmd_def lock_cmds[] = {
	{.name = "lock.acquire",
	 .fn = cmd_acquire,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_LOCK | ACL_SLOW | ACL_BLOCKING,
	 .key = 1,
	 .summary = "Takes a lease on a lock: its fencing token, or nil when held elsewhere (or "
		    "after WAIT); SHARED (a reader) or LIMIT n (one of at most n holders): "
		    "[token, slot].",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"lease-ms", CMD_ARG_INTEGER, NULL, 0},
			  {"timeout-ms", CMD_ARG_INTEGER, "WAIT", CMD_ARG_OPTIONAL},
			  {"label", CMD_ARG_STRING, "HOLDER", CMD_ARG_OPTIONAL},
			  {"detach", CMD_ARG_PURE_TOKEN, "DETACH", CMD_ARG_OPTIONAL},
			  {"adoptable", CMD_ARG_PURE_TOKEN, "ADOPTABLE", CMD_ARG_OPTIONAL},
			  {"shared", CMD_ARG_PURE_TOKEN, "SHARED", CMD_ARG_OPTIONAL},
			  {"n", CMD_ARG_INTEGER, "LIMIT", CMD_ARG_OPTIONAL},
			  {"traceparent", CMD_ARG_STRING, "TRACEPARENT", CMD_ARG_OPTIONAL})},
	{.name = "lock.renew",
	 .fn = cmd_renew,
	 .arity = -2,
	 .acl = ACL_WRITE | ACL_LOCK | ACL_FAST,
	 .key = 1,
	 .summary = "Renews a lease of the lock: 1 renewed, 0 no such lease.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0},
			  {"token", CMD_ARG_INTEGER, NULL, CMD_ARG_OPTIONAL},
			  {"secret", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL})},
	{.name = "lock.release",
	 .fn = cmd_release,
	 .arity = -2,
	 .acl = ACL_WRITE | ACL_LOCK | ACL_FAST,
	 .key = 1,
	 .summary = "Releases a lease of the lock: 1 released, 0 no such lease.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0},
			  {"token", CMD_ARG_INTEGER, NULL, CMD_ARG_OPTIONAL},
			  {"secret", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL})},
	{.name = "lock.adopt",
	 .fn = cmd_adopt,
	 .arity = 4,
	 .acl = ACL_WRITE | ACL_LOCK | ACL_FAST,
	 .key = 1,
	 .summary = "Takes over the lease of a connection closed while its replica drained, "
		    "with its token and secret: [token, new secret], or 0.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"token", CMD_ARG_INTEGER, NULL, 0},
			  {"secret", CMD_ARG_STRING, NULL, 0})},
	{.name = "lock.state",
	 .fn = cmd_state,
	 .arity = 2,
	 .acl = ACL_READ | ACL_LOCK | ACL_FAST,
	 .key = 1,
	 .summary = "Returns the lock's item: held, holder, lease-ms, fencing-token, mine, "
		    "heartbeat (lease or replica; confirmed-ms-ago when this replica holds it "
		    "so); held shared: mode, limit, writer-waiting and every holder.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0})},
};

int rl_lockcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, lock_cmds, sizeof(lock_cmds) / sizeof(lock_cmds[0]), app);
}
