/*
 * redis/leases: per-session lease state of Redis sessions, the session
 * hooks, status rendering, loss pushes and the INFO sections. See
 * leases.h.
 */
#include "gateway/redis/leases.h"
#include "gateway/script/script_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obs.h"
#include "core/store/store.h"
#include "core/store/store_shared.h"
#include "gateway/lease/backend.h"
#include "gateway/redis/session.h"

/* A Redis session's lease state (sess_app). */
struct rl_sess {
	struct rl_app *app;
	struct sess *sess;
	struct lsess *ls;
	void *ctx;	  /* rl_keep_ctx: freed at close */
	struct rl_tx *tx; /* MULTI/WATCH (txcmds.c), NULL when none */
};

struct rl_app *rl_new(struct lsvc *svc, const struct backend *backend)
{
	struct rl_app *app = calloc(1, sizeof(*app));
	if (app == NULL)
		return NULL;
	app->svc = svc;
	app->backend = backend;
	app->lt = backend->lt;
	app->store = backend->store;
	app->obs = &backend->obs;
	app->store_kind = backend->kind;
	return app;
}

void rl_free(struct rl_app *app)
{
	if (app != NULL) {
		sr_free(app->scripts);
		rl_pubsub_free(app->pubsub);
	}
	free(app);
}

/* --- losses, pushed to RESP3 sessions as they happen --- */

static const char *const lost_kind[] = {
	[LS_KIND_LOCK] = "lock.lost",
	[LS_KIND_LEADER] = "leader.lost",
	[LS_KIND_SHARED] = "lock.lost",
};

static void on_lost(void *arg, enum ls_kind kind, const char *name, int64_t token,
		    enum lt_loss reason)
{
	struct rl_sess *rs = arg;
	struct sess *s = rs->sess;
	if (sess_proto(s) != RESP3 || sess_closed(s))
		return;
	struct buf *out = sess_out(s);
	resp_add_push(out, RESP3, 4);
	resp_add_cstr(out, lost_kind[kind]);
	resp_add_cstr(out, name);
	resp_add_int(out, token);
	resp_add_cstr(out, lt_loss_name(reason));
	rs->app->pushes_sent++;
	sess_flush(s);
}

static void who(void *arg, struct ls_who *w)
{
	const struct rl_sess *rs = arg;
	const struct sess *s = rs->sess;
	w->id = s->c.id;
	snprintf(w->client, sizeof(w->client), "%s", s->c.addr);
	snprintf(w->name, sizeof(w->name), "%s", s->name != NULL ? s->name : "");
}

/* After an ACL reload: the wait in progress is still the user's to run. */
static bool may_wait(void *arg, const char *name)
{
	const struct rl_sess *rs = arg;
	return cmd_acl_still(rs->sess, name, strlen(name));
}

static const struct ls_sess_ops sess_ops = {.lost = on_lost, .who = who, .may_wait = may_wait};

struct lsess *rl_lsess(struct rl_app *app, struct cmd_call *c)
{
	struct rl_sess *rs = sess_app(c->sess);
	if (rs != NULL)
		return rs->ls;
	rs = calloc(1, sizeof(*rs));
	if (rs != NULL && (rs->ls = lsess_new(app->svc, &sess_ops, rs)) == NULL) {
		free(rs);
		rs = NULL;
	}
	if (rs == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return NULL;
	}
	rs->app = app;
	rs->sess = c->sess;
	lsess_set_label(rs->ls, "redis", c->sess->c.id);
	sess_set_app(c->sess, rs);
	return rs->ls;
}

/* A session is gone: release what it holds, cancel what it waits for. */
static void on_close(struct sess *s, void *arg)
{
	rl_pubsub_drop(arg, s);
	struct rl_sess *rs = sess_app(s);
	if (rs == NULL)
		return;
	sess_set_app(s, NULL);
	lsess_free(rs->ls); /* its callbacks never run now: the context is ours */
	free(rs->ctx);
	rl_tx_free(rs->tx);
	free(rs);
}

/* --timeout spares a session that holds a lease (or a lost one to tell) */
static bool holds(const struct sess *s, void *arg)
{
	const struct rl_sess *rs = sess_app(s);
	return rs != NULL && rs->ls != NULL && lsess_count(rs->ls) > 0;
}

struct rl_tx **rl_tx_slot(struct cmd_call *c)
{
	if (rl_lsess(c->arg, c) == NULL)
		return NULL;
	struct rl_sess *rs = sess_app(c->sess);
	return &rs->tx;
}

void rl_keep_ctx(struct sess *s, void *ctx)
{
	struct rl_sess *rs = sess_app(s);
	rs->ctx = ctx;
}

void *rl_drop_ctx(struct sess *s)
{
	struct rl_sess *rs = sess_app(s);
	void *ctx = rs != NULL ? rs->ctx : NULL;
	if (rs != NULL)
		rs->ctx = NULL;
	return ctx;
}

static void shape_reset(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_simple(out, "RESET", 5);
}

static void reset_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_reset);
}

/* RESET: as a new connection, so the session's leases go as at a close;
 * but answered once their releases are written (acknowledged means done:
 * the client's next step finds the locks free on every replica), or an
 * error naming a release that was not. */
static bool on_reset(struct sess *s, void *arg)
{
	rl_pubsub_drop(arg, s); /* RESET unsubscribes */
	struct rl_sess *rs = sess_app(s);
	struct ls_result now;
	if (rs == NULL)
		return false;
	rl_tx_free(rs->tx); /* RESET discards MULTI and unwatches */
	rs->tx = NULL;
	enum ls_status st = ls_release_all(rs->ls, &now, reset_done, s);
	if (st == LS_PENDING) {
		sess_suspend(s);
		return true;
	}
	if (st == LS_OK && !now.unwritten)
		return false;
	rl_render(sess_out(s), sess_proto(s), &now, shape_reset);
	return true;
}

/* --- rendering --- */

/* The error code of each status that is an error reply. */
static const char *const error_code[] = {
	[LS_LOST] = "LOST",	[LS_INVALID] = "ERR",	     [LS_CONFLICT] = "ERR",
	[LS_CANCELLED] = "ERR", [LS_TRANSIENT] = "TRYAGAIN", [LS_FAILED] = "ERR",
	[LS_DENIED] = "NOPERM",
};

/* "-TXCANCELLED <reasons>": the reasons are JSON (one line) of any length,
 * not cut as a formatted error would be. */
static void add_txcancelled(struct buf *out, const struct ls_result *res)
{
	static const char code[] = "TXCANCELLED ";
	const char *reasons = res->reasons != NULL ? res->reasons : "[]";
	size_t n = strlen(reasons);
	char *msg = malloc(sizeof(code) + n);
	if (msg == NULL) {
		resp_add_errorf(out, "TXCANCELLED %s", reasons);
		return;
	}
	memcpy(msg, code, sizeof(code) - 1);
	memcpy(msg + sizeof(code) - 1, reasons, n);
	resp_add_error(out, msg, sizeof(code) - 1 + n);
	free(msg);
}

void rl_render(struct buf *out, enum resp_proto proto, const struct ls_result *res,
	       rl_shape_fn shape)
{
	if (res->status == LS_OK && !res->unwritten) /* most answers: first */
		shape(out, proto, res);
	else if (res->status == LS_OK) /* released here, but the lock is not free */
		resp_add_errorf(out, "ERR %s", res->message);
	else if (res->status == LS_LOST)
		resp_add_errorf(out, "LOST %s", ls_loss_text(res->loss));
	else if (res->status == LS_TXCANCELLED)
		add_txcancelled(out, res);
	else if (res->status > LS_NONE &&
		 (size_t)res->status < sizeof(error_code) / sizeof(*error_code))
		resp_add_errorf(out, "%s %s", error_code[res->status], res->message);
	else
		shape(out, proto, res);
}

void rl_answer(struct cmd_call *c, enum ls_status st, const struct ls_result *now,
	       rl_shape_fn shape)
{
	if (st == LS_PENDING)
		sess_suspend(c->sess);
	else
		rl_render(c->out, c->proto, now, shape);
}

void rl_done(void *sess, const struct ls_result *res, rl_shape_fn shape)
{
	struct sess *s = sess;
	if (!sess_closed(s))
		rl_render(sess_out(s), sess_proto(s), res, shape);
	sess_resume(s);
}

void rl_shape_token(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	if (res->status == LS_OK)
		resp_add_int(out, res->token);
	else
		resp_add_null(out, proto);
}

void rl_shape_flag(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_int(out, res->status == LS_OK);
}

void rl_shape_secret(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	if (res->status != LS_OK || res->secret[0] == '\0') {
		rl_shape_token(out, proto, res);
		return;
	}
	resp_add_array(out, 2);
	resp_add_int(out, res->token);
	resp_add_cstr(out, res->secret);
}

void rl_shape_adopted(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	if (res->status != LS_OK)
		resp_add_int(out, 0);
	else
		rl_shape_secret(out, proto, res);
}

static void adopt_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_adopted);
}

void rl_adopt(struct cmd_call *c, rl_adopt_fn fn)
{
	struct ls_result now;
	struct lsess *ls;
	int64_t token;
	if (!rl_parse_token(c, &token) || (ls = rl_lsess(c->arg, c)) == NULL)
		return;
	rl_answer(c,
		  fn(ls, c->argv[1].p, c->argv[1].len, token, c->argv[3].p, c->argv[3].len, &now,
		     adopt_done, c->sess),
		  &now, rl_shape_adopted);
}

bool rl_parse_token(struct cmd_call *c, int64_t *token)
{
	if (rl_parse_int(&c->argv[2], token) && *token != 0)
		return true;
	resp_add_errorf(c->out, "ERR token must be a positive integer");
	return false;
}

/* --- parsing --- */

bool rl_parse_int(const struct resp_arg *a, int64_t *out)
{
	int64_t v = 0;
	/* as Redis's string2ll: digits only, no sign, spaces or leading 0 */
	if (a->len == 0 || a->len > 18 || (a->len > 1 && a->p[0] == '0'))
		return false;
	for (size_t i = 0; i < a->len; i++) {
		if (a->p[i] < '0' || a->p[i] > '9')
			return false;
		v = v * 10 + (a->p[i] - '0');
	}
	*out = v;
	return true;
}

/* The options of an acquire or a campaign, as data. */
enum acq_field {
	OPT_WAIT,
	OPT_HOLDER,
	OPT_DETACH,
	OPT_TRACEPARENT,
	OPT_ADOPTABLE,
	OPT_SHARED,
	OPT_LIMIT
};
static const struct acq_opt {
	const char *name;
	size_t len;
	enum acq_field field;
	unsigned only; /* enum rl_acq_flags that allow it, 0: always */
} acq_opts[] = {
	{"WAIT", 4, OPT_WAIT, 0},
	{"HOLDER", 6, OPT_HOLDER, 0},
	{"DETACH", 6, OPT_DETACH, RL_ACQ_DETACH},
	{"TRACEPARENT", 11, OPT_TRACEPARENT, 0},
	{"ADOPTABLE", 9, OPT_ADOPTABLE, RL_ACQ_ADOPTABLE},
	{"SHARED", 6, OPT_SHARED, RL_ACQ_SHARED},
	{"LIMIT", 5, OPT_LIMIT, RL_ACQ_SHARED},
};

static const struct acq_opt *find_acq_opt(const struct resp_arg *a, unsigned flags)
{
	for (size_t k = 0; k < sizeof(acq_opts) / sizeof(acq_opts[0]); k++)
		if (a->len == acq_opts[k].len && strncasecmp(a->p, acq_opts[k].name, a->len) == 0 &&
		    (acq_opts[k].only == 0 || (acq_opts[k].only & flags)))
			return &acq_opts[k];
	return NULL;
}

bool rl_parse_acquire(struct cmd_call *c, struct ls_acquire_req *req, unsigned flags)
{
	bool shared = false;
	return rl_parse_acquire_mode(c, req, flags, &shared);
}

bool rl_parse_acquire_mode(struct cmd_call *c, struct ls_acquire_req *req, unsigned flags,
			   bool *shared)
{
	memset(req, 0, sizeof(*req));
	*shared = false;
	req->name = c->argv[1].p;
	req->name_len = c->argv[1].len;
	req->scope = LS_SCOPE_SESSION;
	req->wait_ms = -1;
	/* mandatory here: 0 (and a non-number) is out of range, not "the
	 * default", and the layer says so in its words */
	if (!rl_parse_int(&c->argv[2], &req->lease_ms) || req->lease_ms == 0)
		req->lease_ms = -1;
	bool said_shared = false;
	for (int i = 3; i < c->argc; i++) {
		const struct acq_opt *o = find_acq_opt(&c->argv[i], flags);
		bool flag = o != NULL && (o->field == OPT_DETACH || o->field == OPT_ADOPTABLE ||
					  o->field == OPT_SHARED);
		if (o == NULL || (!flag && i + 1 >= c->argc)) {
			resp_add_errorf(c->out, "ERR syntax error");
			return false;
		}
		if (flag) {
			req->detach |= o->field == OPT_DETACH;
			req->adoptable |= o->field == OPT_ADOPTABLE;
			said_shared |= o->field == OPT_SHARED;
			*shared |= o->field == OPT_SHARED;
			continue;
		}
		const struct resp_arg *v = &c->argv[++i];
		if (o->field == OPT_LIMIT) {
			int64_t n;
			if (!rl_parse_int(v, &n) || n < 1 || n > STORE_SH_CAP) {
				resp_add_errorf(c->out, "ERR LIMIT must be an integer from 1 to %d",
						STORE_SH_CAP);
				return false;
			}
			req->limit = (unsigned)n;
			*shared = true;
		}
		if (o->field == OPT_WAIT && !rl_parse_int(v, &req->wait_ms)) {
			resp_add_errorf(c->out, "ERR WAIT must be a non-negative integer "
						"of milliseconds (0: forever)");
			return false;
		}
		if (o->field == OPT_TRACEPARENT) {
			/* the client's W3C trace context: the acquire's span joins
			 * its trace (00-<trace id>-<parent id>-<flags>) */
			char tp[64];
			if (v->len >= sizeof(tp) || (memcpy(tp, v->p, v->len), tp[v->len] = '\0',
						     !trace_parse_traceparent(tp, &req->trace))) {
				resp_add_errorf(c->out,
						"ERR TRACEPARENT must be a W3C traceparent: "
						"00-<32 hex>-<16 hex>-<2 hex>");
				return false;
			}
		}
		if (o->field == OPT_HOLDER) {
			if (memchr(v->p, '\0', v->len) != NULL) { /* the rest: the layer */
				resp_add_errorf(c->out, "ERR HOLDER must be 1 to %d characters",
						STORE_HOLDER_MAX);
				return false;
			}
			req->holder = v->p;
		}
	}
	if (said_shared && req->limit > 0) {
		resp_add_errorf(c->out, "ERR SHARED and LIMIT exclude each other: readers, or a "
					"semaphore of n holders");
		return false;
	}
	return true;
}

/* --- a drain --- */

struct draining {
	int64_t seconds;
	size_t told;
};

static void push_draining(struct sess *s, void *arg)
{
	struct draining *d = arg;
	if (sess_proto(s) != RESP3 || sess_closed(s))
		return;
	struct buf *out = sess_out(s);
	resp_add_push(out, RESP3, 2);
	resp_add_cstr(out, "leasegate.draining");
	resp_add_int(out, d->seconds);
	sess_flush(s);
	d->told++;
}

size_t rl_push_draining(struct redis *r, int64_t grace_ms)
{
	struct draining d = {.seconds = (grace_ms + 999) / 1000};
	redis_foreach(r, push_draining, &d);
	return d.told;
}

/* --- INFO --- */

/* --heartbeat replica: the verification sweep's counts (lt_sweep.h). */
static void info_sweep(struct buf *text, const struct lt_sweep_stats *sw)
{
	buf_printf(text, "sweep_periods:%llu\r\n", (unsigned long long)sw->periods);
	buf_printf(text, "sweep_reads:%llu\r\n", (unsigned long long)sw->batches);
	buf_printf(text, "sweep_reads_failed:%llu\r\n", (unsigned long long)sw->failed);
	buf_printf(text, "sweep_items:%llu\r\n", (unsigned long long)sw->items);
	buf_printf(text, "sweep_losses:%llu\r\n", (unsigned long long)sw->lost);
	buf_printf(text, "sweep_orphans:%llu\r\n", (unsigned long long)sw->orphans);
	buf_printf(text, "sweep_last_period_ms:%lld\r\n", (long long)sw->last_period_ms);
}

static void info_leases(struct buf *text, void *arg)
{
	struct rl_app *app = arg;
	struct lt_stats st;
	lt_stats(app->lt, &st);
	buf_printf(text, "store:%s\r\n", app->store_kind);
	buf_printf(text, "table:%s\r\n", lt_table(app->lt));
	buf_printf(text, "leases_held:%llu\r\n", (unsigned long long)st.leases);
	buf_printf(text, "waits:%llu\r\n", (unsigned long long)st.waits);
	buf_printf(text, "locks_known:%llu\r\n", (unsigned long long)st.locks);
	buf_printf(text, "releases_in_flight:%llu\r\n", (unsigned long long)st.releases_in_flight);
	buf_printf(text, "acquisitions:%llu\r\n",
		   (unsigned long long)(app->obs->acquisitions[0] + app->obs->acquisitions[1]));
	buf_printf(text, "takeovers:%llu\r\n", (unsigned long long)app->obs->acquisitions[1]);
	buf_printf(text, "renewals_ok:%llu\r\n",
		   (unsigned long long)obs_get(&app->obs->renewals, "ok"));
	uint64_t lost = 0;
	for (unsigned i = 0; i < app->obs->losses.n; i++)
		lost += app->obs->losses.count[i];
	buf_printf(text, "losses:%llu\r\n", (unsigned long long)lost);
	buf_printf(text, "loss_pushes:%llu\r\n", (unsigned long long)app->pushes_sent);
	for (int op = 0; op < STORE_OP_COUNT; op++)
		buf_printf(text, "store_requests_%s:%llu\r\n", store_op_name(op),
			   (unsigned long long)app->store->requests[op]);
	buf_printf(text, "store_in_flight:%llu\r\n", (unsigned long long)app->store->in_flight);
	if (st.sweeping)
		info_sweep(text, &st.sweep);
}

static void info_line(void *text, const char *key, long long value)
{
	buf_printf(text, "%s:%lld\r\n", key, value);
}

/* INFO <store kind> (embedded, dynamodb): the store's own figures, as the
 * backend gives them. */
static void info_text(void *text, const char *key, const char *value)
{
	buf_printf(text, "%s:%s\r\n", key, value);
}

static void info_store(struct buf *text, void *arg)
{
	const struct rl_app *app = arg;
	backend_store_text(app->backend, info_text, text);
	backend_store_lines(app->backend, info_line, text);
}

int rl_register_commands(struct rl_app *app, struct cmd_table *cmds)
{
	if (rl_lockcmds_register(app, cmds) < 0 || rl_leadercmds_register(app, cmds) < 0 ||
	    rl_compatcmds_register(app, cmds) < 0 || rl_scriptcmds_register(app, cmds) < 0 ||
	    rl_txcmds_register(app, cmds) < 0 || rl_pubsubcmds_register(app, cmds) < 0 ||
	    rl_fencecmds_register(app, cmds) < 0 || rl_admincmds_register(app, cmds) < 0 ||
	    rl_testcmds_register(app, cmds) < 0)
		return -1;
	return 0;
}

int rl_register(struct rl_app *app, struct cmd_table *cmds, struct redis *redis)
{
	struct sess_hooks hooks = {
		.on_close = on_close, .on_reset = on_reset, .holds = holds, .arg = app};
	if (rl_register_commands(app, cmds) < 0 ||
	    cmd_table_add_info(cmds, "leases", info_leases, app) < 0 ||
	    cmd_table_add_info(cmds, "pubsub", rl_pubsub_info, app) < 0 ||
	    cmd_table_add_info(cmds, backend_store_section(app->backend), info_store, app) < 0)
		return -1;
	redis_set_hooks(redis, &hooks);
	return 0;
}
