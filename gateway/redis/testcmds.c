/*
 * redis/testcmds: the test mode's commands (leasegate --test-mode,
 * docs/testing.md): DEBUG.CLOCK ADVANCE|NOW moves and reads the lease
 * core's fake clock; LOCK.SIMULATE HOLDER|RELEASE|DELETE acts as another
 * process on a lock; LOCK.WAITREFUSAL answers when this replica next
 * refuses a try or a poll on a lock. RESP arguments into the lease-session
 * layer's ls_test_* (gateway/lease/lsess.h), its results into replies.
 *
 * Outside test mode the rows are not in the table: their names answer
 * "unknown command ...; it exists with leasegate --test-mode only".
 *
 * ACL: @admin @dangerous @slow, as Redis's DEBUG (they move time and write
 * lock items without conditions for every client), and @lock as every
 * command and PostgreSQL function on locks, with the lock name as the key
 * of those that name one. No @testing category of their own: a test user
 * has them with +@all, +@admin or by name (+debug.clock +lock.simulate
 * +lock.waitrefusal); `+@lock -@dangerous` (or -@admin) keeps a user of
 * locks away from them.
 */
#include <string.h>
#include <strings.h>

#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

#define TEST_CATS (ACL_ADMIN | ACL_DANGEROUS | ACL_SLOW | ACL_LOCK)

/* --- DEBUG.CLOCK ADVANCE ms / NOW --- */

static void shape_clock_ms(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_int(out, res->clock_ms);
}

static void advance_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_clock_ms);
}

static void cmd_clock_advance(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t ms;
	if (!rl_parse_int(&c->argv[2], &ms)) {
		resp_add_errorf(c->out, "ERR ms must be a non-negative integer");
		return;
	}
	if ((ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c, ls_test_advance(ls, ms, &now, advance_done, c->sess), &now, shape_clock_ms);
}

/* [monotonic ms, wall ms (Unix epoch)] */
static void shape_clock(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_array(out, 2);
	resp_add_int(out, res->clock_ms);
	resp_add_int(out, res->wall_ms);
}

static void cmd_clock_now(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls != NULL)
		rl_answer(c, ls_test_now(ls, &now), &now, shape_clock);
}

/* --- LOCK.SIMULATE HOLDER name lease-ms [label] / RELEASE name / DELETE name --- */

static void simulate_token_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_token);
}

static void simulate_flag_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

static void shape_ok(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_simple(out, "OK", 2);
}

static void simulate_ok_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_ok);
}

/* How each LOCK.SIMULATE subcommand answers. */
static const struct {
	rl_shape_fn shape;
	ls_done_cb done;
} sim_reply[] = {
	[LS_SIM_HOLDER] = {rl_shape_token, simulate_token_done},
	[LS_SIM_RELEASE] = {rl_shape_flag, simulate_flag_done},
	[LS_SIM_DELETE] = {shape_ok, simulate_ok_done},
};

static void simulate(struct cmd_call *c, struct ls_sim_req *req)
{
	struct ls_result now;
	struct lsess *ls;
	req->name = c->argv[2].p;
	req->name_len = c->argv[2].len;
	if ((ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c, ls_test_simulate(ls, req, &now, sim_reply[req->op].done, c->sess), &now,
		  sim_reply[req->op].shape);
}

static void cmd_simulate_holder(struct cmd_call *c)
{
	struct ls_sim_req req = {.op = LS_SIM_HOLDER};
	if (c->argc > 5) {
		resp_add_errorf(c->out, "ERR syntax error");
		return;
	}
	if (!rl_parse_int(&c->argv[3], &req.lease_ms)) {
		resp_add_errorf(c->out, "ERR lease-ms must be a positive integer");
		return;
	}
	if (c->argc == 5) {
		req.holder = c->argv[4].p;
		req.holder_len = c->argv[4].len;
	}
	simulate(c, &req);
}

static void cmd_simulate_release(struct cmd_call *c)
{
	simulate(c, &(struct ls_sim_req){.op = LS_SIM_RELEASE});
}

static void cmd_simulate_delete(struct cmd_call *c)
{
	simulate(c, &(struct ls_sim_req){.op = LS_SIM_DELETE});
}

/* --- LOCK.WAITREFUSAL name [TIMEOUT ms] --- */

static void refusal_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

static void cmd_waitrefusal(struct cmd_call *c)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t timeout = 0;
	if (c->argc != 2 &&
	    (c->argc != 4 || c->argv[2].len != 7 || strncasecmp(c->argv[2].p, "timeout", 7) != 0)) {
		resp_add_errorf(c->out, "ERR syntax error");
		return;
	}
	if (c->argc == 4 && !rl_parse_int(&c->argv[3], &timeout)) {
		resp_add_errorf(c->out, "ERR TIMEOUT must be a non-negative integer (0: none)");
		return;
	}
	if ((ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c,
		  ls_test_wait_refusal(ls, c->argv[1].p, c->argv[1].len, timeout, &now,
				       refusal_done, c->sess),
		  &now, rl_shape_flag);
}

/* --- the rows --- */

static const struct cmd_def clock_subs[] = {
	{.name = "advance",
	 .fn = cmd_clock_advance,
	 .arity = 3,
	 .acl = TEST_CATS | ACL_BLOCKING,
	 .summary = "Test mode: moves the lease clock ms ahead, running every heartbeat, poll, "
		    "wait timeout and expiry that falls due, in order; the monotonic ms now.",
	 .group = "server",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"ms", CMD_ARG_INTEGER, NULL, 0})},
	{.name = "now",
	 .fn = cmd_clock_now,
	 .arity = 2,
	 .acl = ACL_ADMIN | ACL_DANGEROUS | ACL_LOCK | ACL_FAST,
	 .summary = "Test mode: the lease clock's monotonic ms (0 at start) and wall ms (Unix "
		    "epoch).",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = NULL},
};

static const struct cmd_def simulate_subs[] = {
	{.name = "holder",
	 .fn = cmd_simulate_holder,
	 .arity = -4,
	 .acl = TEST_CATS | ACL_WRITE,
	 .key = 2,
	 .summary = "Test mode: another process holds the lock, acquired now and never renewed "
		    "(a crashed holder); its fencing token.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0}, {"lease-ms", CMD_ARG_INTEGER, NULL, 0},
			  {"label", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL})},
	{.name = "release",
	 .fn = cmd_simulate_release,
	 .arity = 3,
	 .acl = TEST_CATS | ACL_WRITE,
	 .key = 2,
	 .summary = "Test mode: the lock's holder, whoever it was, released it: 1, or 0 when the "
		    "lock has no item.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0})},
	{.name = "delete",
	 .fn = cmd_simulate_delete,
	 .arity = 3,
	 .acl = TEST_CATS | ACL_WRITE,
	 .key = 2,
	 .summary = "Test mode: the lock's item is deleted (TTL, an operator); the next token is "
		    "1.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0})},
	{.name = NULL},
};

static const struct cmd_def test_cmds[] = {
	{.name = "debug.clock",
	 .arity = -2,
	 .subs = clock_subs,
	 .acl = TEST_CATS,
	 .summary = "Test mode: a container for the lease clock's commands.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = "lock.simulate",
	 .arity = -3,
	 .subs = simulate_subs,
	 .acl = TEST_CATS,
	 .summary = "Test mode: a container for what other processes do to a lock.",
	 .group = "generic",
	 .since = CMD_SINCE},
	{.name = "lock.waitrefusal",
	 .fn = cmd_waitrefusal,
	 .arity = -2,
	 .acl = TEST_CATS | ACL_READ | ACL_BLOCKING,
	 .key = 1,
	 .summary = "Test mode: 1 when this replica next refuses a try or a poll on the lock (a "
		    "contender waits), 0 after TIMEOUT ms of the lease clock (0: none).",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0},
			  {"ms", CMD_ARG_INTEGER, "TIMEOUT", CMD_ARG_OPTIONAL})},
};

int rl_testcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	size_t n = sizeof(test_cmds) / sizeof(test_cmds[0]);
	/* app NULL: the reference and help list every row */
	if (app == NULL || lsvc_test_mode(app->svc))
		return cmd_table_add(cmds, test_cmds, n, app);
	cmd_table_note_absent(cmds, test_cmds, n,
			      "it exists with leasegate --test-mode only (docs/testing.md)");
	return 0;
}
