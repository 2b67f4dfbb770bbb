/*
 * lockapp: per-session lease records, the session hooks that release them,
 * and the INFO section "leases". See lockapp.h.
 */
#include "gateway/lockapp.h"

#include <stdlib.h>
#include <string.h>

#include "core/dynamodb/store_dynamodb.h"
#include "core/pool.h"
#include "core/store.h"
#include "gateway/conn/server.h"
#include "gateway/redis/session.h"

struct lockapp *lockapp_new(struct locktable *lt, struct store *store, struct obs *obs,
			    const struct cfg *cfg, const char *store_kind)
{
	struct lockapp *app = calloc(1, sizeof(*app));
	if (app == NULL)
		return NULL;
	app->lt = lt;
	app->store = store;
	app->obs = obs;
	app->cfg = cfg;
	app->clock = lt_clock(lt);
	app->store_kind = store_kind;
	return app;
}

void lockapp_free(struct lockapp *app)
{
	if (app == NULL)
		return;
	leadercmds_free(app);
	free(app);
}

static void campaign_timeout(void *arg);

struct lk_sess *lk_sess_of(struct lockapp *app, struct sess *s)
{
	struct lk_sess *ks = sess_app(s);
	if (ks != NULL)
		return ks;
	ks = calloc(1, sizeof(*ks));
	if (ks == NULL)
		return NULL;
	ks->app = app;
	ks->sess = s;
	timer_init(&ks->campaign_timer, app->clock, campaign_timeout, ks);
	sess_set_app(s, ks);
	return ks;
}

/* leadercmds.c owns what the timer does; it is here to live with ks. */
static void campaign_timeout(void *arg)
{
	leadercmds_campaign_timeout(arg);
}

/* A lock cycle adds and forgets a record: those with names up to 64 bytes
 * come from a pool. */
#define REC_SIZE(len) (sizeof(struct lk_lease) + (len) + 1)
static struct pool rec_pool = POOL_INIT(REC_SIZE(64), 4096);

struct lk_lease *lk_add(struct lk_sess *ks, const char *name, struct lease *lease)
{
	size_t len = strlen(name);
	struct lk_lease *rec = pool_get(&rec_pool, REC_SIZE(len));
	if (rec == NULL)
		return NULL;
	memcpy(rec->name, name, len + 1);
	rec->owner = ks;
	rec->lease = lease;
	rec->token = lease != NULL ? lease_token(lease) : 0;
	if (lease != NULL) {
		lease_set_data(lease, rec);
		rec->lost = lease_loss(lease);
	}
	rec->next = ks->leases;
	if (ks->leases != NULL)
		ks->leases->prev = rec;
	ks->leases = rec;
	ks->nleases++;
	return rec;
}

/* Every RELEASE has one: those with names up to 64 bytes come from a pool. */
#define PENDING_SIZE(len) (sizeof(struct lk_pending) + (len) + 1)
static struct pool pending_pool = POOL_INIT(PENDING_SIZE(64), 1024);

struct lk_pending *lk_pending_new(struct lockapp *app, struct sess *s, const struct resp_arg *name,
				  int64_t token)
{
	struct lk_pending *p = pool_get(&pending_pool, PENDING_SIZE(name->len));
	if (p == NULL)
		return NULL;
	p->size = PENDING_SIZE(name->len);
	p->app = app;
	p->sess = s;
	p->token = token;
	memcpy(p->name, name->p, name->len + 1);
	sess_ref(s);
	sess_suspend(s);
	return p;
}

void lk_pending_done(struct lk_pending *p)
{
	sess_resume(p->sess);
	sess_unref(p->sess);
	pool_put(&pending_pool, p, p->size);
}

static void lost_unlink(struct lk_lease *rec)
{
	struct lockapp *app = rec->owner->app;
	if (!rec->in_lost_list)
		return;
	if (rec->lost_prev != NULL)
		rec->lost_prev->lost_next = rec->lost_next;
	else
		app->lost = rec->lost_next;
	if (rec->lost_next != NULL)
		rec->lost_next->lost_prev = rec->lost_prev;
	rec->in_lost_list = false;
}

void lk_forget(struct lk_lease *rec)
{
	struct lk_sess *ks = rec->owner;
	lost_unlink(rec);
	if (rec->prev != NULL)
		rec->prev->next = rec->next;
	else
		ks->leases = rec->next;
	if (rec->next != NULL)
		rec->next->prev = rec->prev;
	ks->nleases--;
	pool_put(&rec_pool, rec, REC_SIZE(strlen(rec->name)));
}

struct lk_lease *lk_find_own(struct lk_sess *ks, const char *name, int64_t token)
{
	for (struct lk_lease *r = ks->leases; r != NULL; r = r->next)
		if (strcmp(r->name, name) == 0 && (token == 0 || r->token == token) &&
		    r->election == NULL)
			return r;
	return NULL;
}

struct lk_lease *lk_find_any(struct lockapp *app, const char *name, int64_t token)
{
	struct lease *l = lt_local_lease(app->lt, name);
	struct lk_lease *rec = l != NULL ? lease_data(l) : NULL;
	if (rec != NULL && rec->token == token && rec->election == NULL)
		return rec;
	/* lost and not yet reported (few: they count toward the leases of
	 * their session) */
	for (rec = app->lost; rec != NULL; rec = rec->lost_next)
		if (rec->token == token && strcmp(rec->name, name) == 0)
			return rec;
	return NULL;
}

void lk_report_loss(struct lk_lease *rec, enum lt_loss reason, const char *kind)
{
	struct sess *s = rec->owner->sess;
	struct lockapp *app = rec->owner->app;
	rec->lost = reason;
	if (rec->election == NULL && !rec->in_lost_list) {
		rec->lost_prev = NULL;
		rec->lost_next = app->lost;
		if (app->lost != NULL)
			app->lost->lost_prev = rec;
		app->lost = rec;
		rec->in_lost_list = true;
	}
	if (sess_proto(s) != RESP3 || sess_closed(s))
		return;
	struct buf *out = sess_out(s);
	resp_add_push(out, RESP3, 4);
	resp_add_cstr(out, kind);
	resp_add_cstr(out, rec->name);
	resp_add_int(out, rec->token);
	resp_add_cstr(out, lt_loss_name(reason));
	sess_flush(s);
	rec->owner->app->pushes_sent++;
}

void lk_reply_error(struct buf *out, const struct lt_error *err)
{
	resp_add_errorf(out, "%s %s", err->status == STORE_TRANSIENT ? "TRYAGAIN" : "ERR",
			err->message);
}

bool lk_parse_int(const struct resp_arg *a, int64_t *out)
{
	int64_t v = 0;
	if (a->len == 0 || a->len > 18)
		return false;
	for (size_t i = 0; i < a->len; i++) {
		if (a->p[i] < '0' || a->p[i] > '9')
			return false;
		v = v * 10 + (a->p[i] - '0');
	}
	*out = v;
	return true;
}

bool lk_name_ok(struct lockapp *app, struct cmd_call *c, const struct resp_arg *a)
{
	if (a->len == 0 || a->len > (size_t)app->cfg->max_lock_name) {
		resp_add_errorf(c->out, "ERR lock name must be 1 to %lld bytes",
				(long long)app->cfg->max_lock_name);
		return false;
	}
	if (memchr(a->p, '\0', a->len) != NULL) {
		resp_add_errorf(c->out, "ERR lock name must not contain NUL bytes");
		return false;
	}
	return true;
}

/* A session is gone: release what it holds, cancel what it waits for. */
static void on_close(struct sess *s, void *arg)
{
	struct lockapp *app = arg;
	struct lk_sess *ks = sess_app(s);
	app->sessions_open--;
	if (ks == NULL)
		return;
	lt_acquire_cancel(ks->wait);
	ks->wait = NULL;
	leadercmds_session_closed(ks);
	while (ks->leases != NULL) {
		struct lk_lease *rec = ks->leases;
		if (rec->election != NULL)
			election_stop(rec->election, ELECTION_CANCELLED);
		else if (rec->lease != NULL) {
			lease_set_data(rec->lease, NULL);
			lease_release(rec->lease);
			leadercmds_changed(app, rec->name);
		}
		lk_forget(rec);
	}
	timer_cancel(&ks->campaign_timer);
	sess_set_app(s, NULL);
	free(ks);
}

static void on_open(struct sess *s, void *arg)
{
	struct lockapp *app = arg;
	app->sessions_open++;
}

/* RESET: as a new connection, so the session's leases go as at a close. */
static void on_reset(struct sess *s, void *arg)
{
	on_close(s, arg);
	on_open(s, arg);
}

static void stop_wait(struct sess *s, void *arg)
{
	struct lk_sess *ks = sess_app(s);
	if (ks == NULL || ks->wait == NULL)
		return;
	lt_acquire_cancel(ks->wait);
	ks->wait = NULL;
	resp_add_errorf(sess_out(s), "ERR server is shutting down");
	sess_resume(s);
}

void lockapp_stop_waits(struct lockapp *app, struct redis *r)
{
	redis_foreach(r, stop_wait, app);
}

static void info_leases(struct buf *text, void *arg)
{
	struct lockapp *app = arg;
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
}

/* INFO dynamodb: the HTTP side of the DynamoDB store. */
static void info_dynamodb(struct buf *text, void *arg)
{
	struct lockapp *app = arg;
	struct store_dynamodb_stats st;
	store_dynamodb_stats(app->store, &st);
	uint64_t total = 0;
	for (int op = 0; op < DDB_OP_COUNT; op++) {
		total += st.http[op];
		buf_printf(text, "requests_%s:%llu\r\n", ddb_op_name(op),
			   (unsigned long long)st.http[op]);
	}
	buf_printf(text, "requests_total:%llu\r\n", (unsigned long long)total);
	buf_printf(text, "retries:%llu\r\n", (unsigned long long)st.retries);
	buf_printf(text, "throttled:%llu\r\n", (unsigned long long)st.throttled);
	buf_printf(text, "crc_mismatches:%llu\r\n", (unsigned long long)st.crc_mismatches);
	buf_printf(text, "skew_corrections:%llu\r\n", (unsigned long long)st.skew_corrections);
	buf_printf(text, "clock_offset_ms:%lld\r\n", (long long)st.clock_offset_ms);
	buf_printf(text, "retry_quota:%d\r\n", st.quota_tokens);
}

int lockapp_register(struct lockapp *app, struct cmd_table *cmds, struct redis *r)
{
	struct sess_hooks hooks = {
		.on_open = on_open, .on_close = on_close, .on_reset = on_reset, .arg = app};
	if (lockcmds_register(app, cmds) < 0 || leadercmds_register(app, cmds) < 0 ||
	    cmd_table_add_info(cmds, "leases", info_leases, app) < 0)
		return -1;
	if (strcmp(app->store_kind, "dynamodb") == 0 &&
	    cmd_table_add_info(cmds, "dynamodb", info_dynamodb, app) < 0)
		return -1;
	redis_set_hooks(r, &hooks);
	return 0;
}
