/*
 * redis/fencecmds: fenced writes — LOCK.TRANSACT, LEADER.TRANSACT and
 * LOCK.CHECK — over the lease-session layer (gateway/lease/lsess_fence.c,
 * where every rule is). Here: arguments in, replies out.
 *
 *   LOCK.TRANSACT name token items-json [REQUEST id]
 *   LEADER.TRANSACT name items-json [REQUEST id]
 *                                         +OK, -LOST <reason>,
 *                                         -TXCANCELLED <reasons JSON>,
 *                                         -TRYAGAIN <message>, -ERR <message>
 *   LOCK.CHECK name token                 :1 held now, :0 not (a check)
 */
#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

#include <strings.h>

static void shape_ok(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_simple(out, "OK", 2);
}

static void transact_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_ok);
}

static void transact(struct cmd_call *c, struct ls_tx_req *req)
{
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	rl_answer(c, ls_transact(ls, req, &now, transact_done, c->sess), &now, shape_ok);
}

/* The optional tail `REQUEST id` from argv[first] on; false: a syntax error
 * was written. */
static bool parse_request(struct cmd_call *c, int first, struct ls_tx_req *req)
{
	if (c->argc == first)
		return true;
	if (c->argc != first + 2 || strcasecmp(c->argv[first].p, "REQUEST") != 0) {
		resp_add_errorf(c->out, "ERR syntax error");
		return false;
	}
	req->request = c->argv[first + 1].p;
	req->request_len = c->argv[first + 1].len;
	return true;
}

static void cmd_lock_transact(struct cmd_call *c)
{
	struct ls_tx_req req = {
		.name = c->argv[1].p,
		.name_len = c->argv[1].len,
		.items = c->argv[3].p,
		.items_len = c->argv[3].len,
	};
	if (!rl_parse_int(&c->argv[2], &req.token) || req.token == 0) {
		resp_add_errorf(c->out, "ERR token must be a positive integer");
		return;
	}
	if (parse_request(c, 4, &req))
		transact(c, &req);
}

static void cmd_leader_transact(struct cmd_call *c)
{
	struct ls_tx_req req = {
		.name = c->argv[1].p,
		.name_len = c->argv[1].len,
		.leader = true,
		.items = c->argv[2].p,
		.items_len = c->argv[2].len,
	};
	if (parse_request(c, 3, &req))
		transact(c, &req);
}

static void check_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

static void cmd_check(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t token;
	if (!rl_parse_int(&c->argv[2], &token) || token == 0) {
		resp_add_errorf(c->out, "ERR token must be a positive integer");
		return;
	}
	if ((ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c, ls_check(ls, c->argv[1].p, c->argv[1].len, token, &now, check_done, c->sess),
		  &now, rl_shape_flag);
}

static const struct cmd_def fence_cmds[] = {
	{.name = "lock.transact",
	 .fn = cmd_lock_transact,
	 .arity = -4,
	 .acl = ACL_WRITE | ACL_LOCK | ACL_SLOW,
	 .key = 1,
	 .summary = "Writes DynamoDB items in one transaction with a check that the lease still "
		    "holds.",
	 .group = "generic",
	 .complexity = "O(N) items",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"token", CMD_ARG_INTEGER, NULL, 0},
			  {"items-json", CMD_ARG_STRING, NULL, 0},
			  {"request-id", CMD_ARG_STRING, "REQUEST", CMD_ARG_OPTIONAL})},
	{.name = "leader.transact",
	 .fn = cmd_leader_transact,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_LEADER | ACL_SLOW,
	 .key = 1,
	 .summary = "LOCK.TRANSACT under this connection's current term of the lock.",
	 .group = "generic",
	 .complexity = "O(N) items",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"items-json", CMD_ARG_STRING, NULL, 0},
			  {"request-id", CMD_ARG_STRING, "REQUEST", CMD_ARG_OPTIONAL})},
	{.name = "lock.check",
	 .fn = cmd_check,
	 .arity = 3,
	 .acl = ACL_READ | ACL_LOCK | ACL_FAST,
	 .key = 1,
	 .summary = "Returns 1 while the lease (name, token) holds the lock now, else 0.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"token", CMD_ARG_INTEGER, NULL, 0})},
};

int rl_fencecmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, fence_cmds, sizeof(fence_cmds) / sizeof(fence_cmds[0]), app);
}
