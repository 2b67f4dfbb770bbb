/*
 * redis/leadercmds: LEADER.CAMPAIGN, LEADER.RESIGN and LEADER.WATCH, as
 * docs/redis.md's command table describes them, over the lease-session
 * layer (terms in gateway/lease/lsess_lead.c, shared-poll watches in
 * lsess_watch.c).
 */
#include <string.h>

#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

/* --- LEADER.CAMPAIGN name lease-ms [WAIT ms] [HOLDER label] [ADOPTABLE] --- */

static void campaign_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_secret);
}

static void cmd_campaign(struct cmd_call *c)
{
	struct ls_acquire_req req;
	struct ls_result now;
	struct lsess *ls;
	if (!rl_parse_acquire(c, &req, RL_ACQ_ADOPTABLE) || (ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c, ls_campaign(ls, &req, &now, campaign_done, c->sess), &now, rl_shape_secret);
}

/* --- LEADER.ADOPT name token secret: a term orphaned by a drain --- */

static void cmd_adopt(struct cmd_call *c)
{
	rl_adopt(c, ls_leader_adopt);
}

/* --- LEADER.RESIGN name --- */

static void resign_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

static void cmd_resign(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	rl_answer(c, ls_resign(ls, c->argv[1].p, &now, resign_done, c->sess), &now, rl_shape_flag);
}

/* --- LEADER.WATCH name [AFTER token] [TIMEOUT ms] --- */

static void shape_leader(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	const struct lt_state *st = &res->st;
	if (!st->held) {
		resp_add_null(out, proto);
		return;
	}
	resp_add_map(out, proto, 3);
	resp_add_cstr(out, "holder");
	if (st->holder[0] != '\0')
		resp_add_cstr(out, st->holder);
	else
		resp_add_null(out, proto);
	resp_add_cstr(out, "fencing-token");
	resp_add_int(out, st->token);
	resp_add_cstr(out, "lease-ms");
	resp_add_int(out, st->lease_ms);
}

static void watch_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_leader);
}

/* The options of LEADER.WATCH, as data. */
static const struct watch_opt {
	const char *name;
	size_t len;
	size_t field; /* index in cmd_watch's v */
} watch_opts[] = {
	{"AFTER", 5, 0},
	{"TIMEOUT", 7, 1},
};

static void cmd_watch(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t v[2] = {-1, 0}; /* AFTER, TIMEOUT */
	for (int i = 2; i < c->argc; i += 2) {
		const struct resp_arg *opt = &c->argv[i];
		const struct watch_opt *o = NULL;
		for (size_t k = 0; k < sizeof(watch_opts) / sizeof(watch_opts[0]); k++)
			if (opt->len == watch_opts[k].len &&
			    strncasecmp(opt->p, watch_opts[k].name, opt->len) == 0)
				o = &watch_opts[k];
		if (o == NULL || i + 1 >= c->argc) {
			resp_add_errorf(c->out, "ERR syntax error");
			return;
		}
		if (!rl_parse_int(&c->argv[i + 1], &v[o->field])) {
			resp_add_errorf(c->out, "ERR %s must be a non-negative integer", o->name);
			return;
		}
	}
	if ((ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c,
		  ls_watch(ls, c->argv[1].p, c->argv[1].len, v[0], v[1], &now, watch_done, c->sess),
		  &now, shape_leader);
}

static const struct cmd_def leader_cmds[] = {
	{.name = "leader.campaign",
	 .fn = cmd_campaign,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_LEADER | ACL_SLOW | ACL_BLOCKING,
	 .key = 1,
	 .summary = "Campaigns for leadership: the term's fencing token once leading ([token, "
		    "secret] with ADOPTABLE).",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"lease-ms", CMD_ARG_INTEGER, NULL, 0},
			  {"timeout-ms", CMD_ARG_INTEGER, "WAIT", CMD_ARG_OPTIONAL},
			  {"label", CMD_ARG_STRING, "HOLDER", CMD_ARG_OPTIONAL},
			  {"adoptable", CMD_ARG_PURE_TOKEN, "ADOPTABLE", CMD_ARG_OPTIONAL},
			  {"traceparent", CMD_ARG_STRING, "TRACEPARENT", CMD_ARG_OPTIONAL})},
	{.name = "leader.adopt",
	 .fn = cmd_adopt,
	 .arity = 4,
	 .acl = ACL_WRITE | ACL_LEADER | ACL_FAST,
	 .key = 1,
	 .summary = "Takes over the term of a connection closed while its replica drained, with "
		    "its token and secret: [token, new secret], or 0.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"token", CMD_ARG_INTEGER, NULL, 0},
			  {"secret", CMD_ARG_STRING, NULL, 0})},
	{.name = "leader.resign",
	 .fn = cmd_resign,
	 .arity = 2,
	 .acl = ACL_WRITE | ACL_LEADER | ACL_FAST,
	 .key = 1,
	 .summary = "Ends this connection's term and hands the lock on.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0})},
	{.name = "leader.watch",
	 .fn = cmd_watch,
	 .arity = -2,
	 .acl = ACL_READ | ACL_LEADER | ACL_SLOW | ACL_BLOCKING,
	 .key = 1,
	 .summary = "Returns the current leader, at once or when it changes.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0},
			  {"token", CMD_ARG_INTEGER, "AFTER", CMD_ARG_OPTIONAL},
			  {"timeout-ms", CMD_ARG_INTEGER, "TIMEOUT", CMD_ARG_OPTIONAL})},
};

int rl_leadercmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, leader_cmds, sizeof(leader_cmds) / sizeof(leader_cmds[0]), app);
}
