/*
 * lockcmds: LOCK.ACQUIRE, LOCK.RENEW, LOCK.RELEASE and LOCK.STATE, as
 * shared/DESIGN.md describes them, translated onto the lease core. Every
 * command that needs the store suspends its session and answers from the
 * completion; a completion for a session that closed meanwhile answers
 * nothing (the session is held with sess_ref until then).
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/lockapp.h"
#include "gateway/redis/session.h"

static void oom(struct cmd_call *c)
{
	resp_add_errorf(c->out, "ERR out of memory");
}

/* --- LOCK.ACQUIRE name lease-ms [WAIT ms] [HOLDER label] --- */

static void on_lost(void *arg, struct lease *lease, enum lt_loss reason)
{
	struct lk_lease *rec = arg;
	lk_report_loss(rec, reason, "lock.lost");
	leadercmds_changed(rec->owner->app, rec->name);
}

static void acquired(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct lk_sess *ks = arg;
	struct buf *out = sess_out(ks->sess);
	ks->wait = NULL;
	if (err != NULL) {
		lk_reply_error(out, err);
	} else if (lease == NULL) {
		resp_add_null(out, sess_proto(ks->sess));
	} else {
		struct lk_lease *rec = lk_add(ks, lease_name(lease), lease);
		if (rec == NULL) {
			lease_release(lease);
			resp_add_errorf(out, "ERR out of memory");
		} else {
			lease_on_lost(lease, on_lost, rec);
			resp_add_int(out, lease_token(lease));
			leadercmds_changed(ks->app, rec->name);
		}
	}
	sess_resume(ks->sess);
}

bool lk_parse_acquire(struct lockapp *app, struct cmd_call *c, struct lt_acquire_args *a,
		      int64_t *wait_ms)
{
	int64_t max =
		app->cfg->max_lease_ms < LT_MAX_LEASE_MS ? app->cfg->max_lease_ms : LT_MAX_LEASE_MS;
	*wait_ms = -1;
	if (!lk_name_ok(app, c, &c->argv[1]))
		return false;
	a->name = c->argv[1].p;
	if (!lk_parse_int(&c->argv[2], &a->lease_ms) || a->lease_ms < LT_MIN_LEASE_MS ||
	    a->lease_ms > max) {
		resp_add_errorf(c->out, "ERR lease-ms must be an integer from %lld to %lld",
				LT_MIN_LEASE_MS, (long long)max);
		return false;
	}
	for (int i = 3; i < c->argc; i += 2) {
		const struct resp_arg *opt = &c->argv[i];
		if (i + 1 >= c->argc) {
			resp_add_errorf(c->out, "ERR syntax error");
			return false;
		}
		if (opt->len == 4 && strncasecmp(opt->p, "WAIT", 4) == 0) {
			if (!lk_parse_int(&c->argv[i + 1], wait_ms)) {
				resp_add_errorf(c->out, "ERR WAIT must be a non-negative integer "
							"of milliseconds (0: forever)");
				return false;
			}
		} else if (opt->len == 6 && strncasecmp(opt->p, "HOLDER", 6) == 0) {
			const struct resp_arg *h = &c->argv[i + 1];
			if (h->len == 0 || h->len > STORE_HOLDER_MAX ||
			    memchr(h->p, '\0', h->len)) {
				resp_add_errorf(c->out, "ERR HOLDER must be 1 to %d characters",
						STORE_HOLDER_MAX);
				return false;
			}
			a->holder = h->p;
		} else {
			resp_add_errorf(c->out, "ERR syntax error");
			return false;
		}
	}
	a->wait = *wait_ms >= 0;
	a->timeout_ms = *wait_ms > 0 ? *wait_ms : 0;
	return true;
}

bool lk_room(struct lk_sess *ks, struct cmd_call *c)
{
	if (ks->nleases < (unsigned)ks->app->cfg->max_leases_per_session)
		return true;
	resp_add_errorf(c->out, "ERR max leases per connection reached (%lld)",
			(long long)ks->app->cfg->max_leases_per_session);
	return false;
}

static void cmd_acquire(struct cmd_call *c)
{
	struct lockapp *app = c->arg;
	struct lt_acquire_args a = {0};
	int64_t wait_ms;
	if (!lk_parse_acquire(app, c, &a, &wait_ms))
		return;
	struct lk_sess *ks = lk_sess_of(app, c->sess);
	if (ks == NULL)
		return oom(c);
	struct lk_lease *mine = lk_find_own(ks, a.name, 0);
	if (mine != NULL && mine->lost == LT_HELD) {
		resp_add_errorf(c->out, "ERR this connection holds '%s' already (token %lld)",
				a.name, (long long)mine->token);
		return;
	}
	if (mine != NULL) { /* a new acquire supersedes an unreported loss */
		lease_release(mine->lease);
		lk_forget(mine);
	}
	if (!lk_room(ks, c))
		return;
	ks->wait = lt_acquire(app->lt, &a, acquired, ks);
	if (ks->wait == NULL)
		return oom(c);
	sess_suspend(c->sess);
}

/* --- LOCK.RENEW / LOCK.RELEASE name [token] --- */

/* The loss of rec, LT_HELD while held. A lease past its end counts as
 * expired before the core's end timer says so: after a stall of the loop
 * (a starved CPU, a stopped process) a command can be read before the
 * overdue timer runs, and must not be told its lease goes on. */
static enum lt_loss rec_loss(const struct lk_lease *rec, struct clock *clock)
{
	if (rec->lost != LT_HELD)
		return rec->lost;
	if (rec->lease != NULL && clock_now_ms(clock) >= lease_end_ms(rec->lease))
		return LT_EXPIRED;
	return LT_HELD;
}

/* Answers -LOST for rec and forgets it (releasing its lease: a lease past
 * its end that the core still holds gives the item back if still ours). */
static void report_lost(struct lockapp *app, struct buf *out, struct lk_lease *rec,
			enum lt_loss lost)
{
	resp_add_errorf(out, "LOST %s", lt_loss_name(lost));
	lease_set_data(rec->lease, NULL);
	lease_release(rec->lease);
	lk_forget(rec);
	app->lost_reported++;
}

/* Finds the lease a RENEW or RELEASE is about; answers and returns NULL
 * when there is nothing to do (no such lease: 0; lost: -LOST). */
static struct lk_lease *lookup(struct cmd_call *c, struct lockapp *app, int64_t *token)
{
	*token = 0;
	if (c->argc > 3) {
		resp_add_errorf(c->out, "ERR syntax error");
		return NULL;
	}
	if (c->argc == 3 && (!lk_parse_int(&c->argv[2], token) || *token == 0)) {
		resp_add_errorf(c->out, "ERR token must be a positive integer");
		return NULL;
	}
	struct lk_sess *ks = sess_app(c->sess);
	struct lk_lease *rec = ks != NULL ? lk_find_own(ks, c->argv[1].p, *token) : NULL;
	if (rec == NULL && *token != 0)
		rec = lk_find_any(app, c->argv[1].p, *token);
	if (rec == NULL) {
		resp_add_int(c->out, 0);
		return NULL;
	}
	enum lt_loss lost = rec_loss(rec, app->clock);
	if (lost != LT_HELD) {
		report_lost(app, c->out, rec, lost);
		return NULL;
	}
	*token = rec->token;
	return rec;
}

static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct lk_pending *p = arg;
	struct buf *out = sess_out(p->sess);
	if (sess_closed(p->sess)) {
		lk_pending_done(p);
		return;
	}
	if (err != NULL) {
		lk_reply_error(out, err);
	} else {
		struct lk_lease *rec = lk_find_any(p->app, p->name, p->token);
		struct lk_sess *ks = sess_app(p->sess);
		if (rec == NULL && ks != NULL)
			rec = lk_find_own(ks, p->name, p->token);
		/* lost meanwhile, even if this renewal's write succeeded (sent
		 * before the end timer ran): the loss has been pushed */
		if (rec != NULL && rec->lost != LT_HELD)
			report_lost(p->app, out, rec, rec->lost);
		else
			resp_add_int(out, r == 1);
	}
	lk_pending_done(p);
}

/* The lease of a RENEW or RELEASE and the session suspended for its
 * answer; NULL when lookup() or out-of-memory already answered. */
static struct lk_pending *begin(struct cmd_call *c, struct lk_lease **rec)
{
	struct lockapp *app = c->arg;
	int64_t token;
	if ((*rec = lookup(c, app, &token)) == NULL)
		return NULL;
	struct lk_pending *p = lk_pending_new(app, c->sess, &c->argv[1], token);
	if (p == NULL)
		oom(c);
	return p;
}

static void cmd_renew(struct cmd_call *c)
{
	struct lk_lease *rec;
	struct lk_pending *p = begin(c, &rec);
	if (p != NULL && !lease_renew(rec->lease, renewed, p)) {
		resp_add_errorf(c->out, "ERR out of memory");
		lk_pending_done(p);
	}
}

static void released(void *arg, int r, const struct lt_error *err)
{
	struct lk_pending *p = arg;
	if (!sess_closed(p->sess))
		resp_add_int(sess_out(p->sess), 1);
	leadercmds_changed(p->app, p->name);
	lk_pending_done(p);
}

static void cmd_release(struct cmd_call *c)
{
	struct lk_lease *rec;
	struct lk_pending *p = begin(c, &rec);
	if (p == NULL)
		return;
	struct lease *lease = rec->lease;
	lease_set_data(lease, NULL);
	lk_forget(rec);
	lease_release_then(lease, released, p);
}

/* --- LOCK.STATE name --- */

/* Writes LOCK.STATE's reply for st (read for session s). */
static void reply_state(struct sess *s, const char *name, const struct lt_state *st)
{
	struct buf *out = sess_out(s);
	if (!st->exists) {
		resp_add_null(out, sess_proto(s));
		return;
	}
	struct lk_sess *ks = sess_app(s);
	struct lk_lease *rec = ks != NULL ? lk_find_own(ks, name, 0) : NULL;
	bool mine = st->held && rec != NULL && rec->lease != NULL && rec->lost == LT_HELD &&
		    strcmp(lease_owner(rec->lease), st->owner) == 0;
	resp_add_map(out, sess_proto(s), 5);
	resp_add_cstr(out, "held");
	resp_add_int(out, st->held);
	resp_add_cstr(out, "holder");
	if (st->held && st->holder[0] != '\0')
		resp_add_cstr(out, st->holder);
	else
		resp_add_null(out, sess_proto(s));
	resp_add_cstr(out, "lease-ms");
	resp_add_int(out, st->lease_ms);
	resp_add_cstr(out, "fencing-token");
	resp_add_int(out, st->token);
	resp_add_cstr(out, "mine");
	resp_add_int(out, mine);
}

static void state_read(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct lk_pending *p = arg;
	if (!sess_closed(p->sess)) {
		if (err != NULL)
			lk_reply_error(sess_out(p->sess), err);
		else
			reply_state(p->sess, p->name, st);
	}
	lk_pending_done(p);
}

static void cmd_state(struct cmd_call *c)
{
	struct lockapp *app = c->arg;
	struct lt_state st;
	if (!lk_name_ok(app, c, &c->argv[1]))
		return;
	if (lt_state_now(app->lt, c->argv[1].p, &st)) { /* the embedded store */
		reply_state(c->sess, c->argv[1].p, &st);
		return;
	}
	struct lk_pending *p = lk_pending_new(app, c->sess, &c->argv[1], 0);
	if (p == NULL)
		return oom(c);
	if (!lt_get_state(app->lt, p->name, state_read, p)) {
		resp_add_errorf(c->out, "ERR out of memory");
		lk_pending_done(p);
	}
}

static const struct cmd_def lock_cmds[] = {
	{"lock.acquire", cmd_acquire, -3, 0, NULL},
	{"lock.renew", cmd_renew, -2, 0, NULL},
	{"lock.release", cmd_release, -2, 0, NULL},
	{"lock.state", cmd_state, 2, 0, NULL},
};

int lockcmds_register(struct lockapp *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, lock_cmds, sizeof(lock_cmds) / sizeof(lock_cmds[0]), app);
}
