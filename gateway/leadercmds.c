/*
 * leadercmds: LEADER.CAMPAIGN, LEADER.RESIGN and LEADER.WATCH.
 *
 * A campaign is a one-term election of the core: the session contends
 * (transient store errors retried inside, logged 44/49) until it leads, and
 * the term lasts until LEADER.RESIGN (the lock is handed on), the session
 * closes (released) or the lease is lost (reported: a RESP3 push, and
 * -LOST <reason> on the next CAMPAIGN or RESIGN of that name; the client
 * campaigns again). CAMPAIGN while leading answers the term's token without
 * a request, so it doubles as "do I still lead?".
 *
 * Watchers of one name share one group: one read per poll interval (a
 * third of the leader's lease, at most 10 s), and at once when a change
 * goes through this replica (leadercmds_changed).
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/lockapp.h"
#include "gateway/redis/session.h"

#define WATCH_IDLE_POLL_MS 1000LL /* no leader: how often to look again */

/* --- LEADER.CAMPAIGN name lease-ms [WAIT ms] [HOLDER label] --- */

static void answer_campaign(struct lk_sess *ks)
{
	ks->campaign = NULL;
	timer_cancel(&ks->campaign_timer);
	sess_resume(ks->sess);
}

static void on_lead(void *arg, struct lease *lease)
{
	struct lk_lease *rec = arg;
	struct lk_sess *ks = rec->owner;
	rec->lease = lease;
	rec->token = lease_token(lease);
	rec->lost = LT_HELD;
	lease_set_data(lease, rec);
	if (ks->campaign == rec) {
		resp_add_int(sess_out(ks->sess), rec->token);
		answer_campaign(ks);
	}
	leadercmds_changed(ks->app, rec->name);
}

static void on_term_lost(void *arg, enum lt_loss reason)
{
	struct lk_lease *rec = arg;
	rec->lease = NULL;
	lk_report_loss(rec, reason, "leader.lost");
	leadercmds_changed(rec->owner->app, rec->name);
}

static void on_failed(void *arg, const struct lt_error *err)
{
	struct lk_lease *rec = arg;
	struct lk_sess *ks = rec->owner;
	if (ks->campaign == rec) {
		lk_reply_error(sess_out(ks->sess), err);
		answer_campaign(ks);
	}
	election_stop(rec->election, ELECTION_CANCELLED);
	lk_forget(rec);
}

static const struct election_cbs campaign_cbs = {
	.lead = on_lead, .lost = on_term_lost, .failed = on_failed};

/* The record of the session's campaign or term on name, or NULL. */
static struct lk_lease *find_term(struct lk_sess *ks, const char *name)
{
	for (struct lk_lease *r = ks != NULL ? ks->leases : NULL; r != NULL; r = r->next)
		if (r->election != NULL && strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

/* The loss of rec's term, LT_HELD while it leads. A lease past its end
 * counts as expired before the core's end timer says so: after a stall of
 * the loop (a starved CPU, a paused process) a command can be read before
 * the overdue timer runs, and must not be told its term goes on. */
static enum lt_loss term_loss(const struct lk_lease *rec, struct clock *clock)
{
	if (rec->lost != LT_HELD)
		return rec->lost;
	if (rec->lease != NULL && clock_now_ms(clock) >= lease_end_ms(rec->lease))
		return LT_EXPIRED;
	return LT_HELD;
}

static void end_term(struct lk_lease *rec, enum election_end how)
{
	election_stop(rec->election, how);
	lk_forget(rec);
}

static void cmd_campaign(struct cmd_call *c)
{
	struct lockapp *app = c->arg;
	struct lt_acquire_args a = {0};
	int64_t wait_ms;
	char msg[160];
	if (!lk_parse_acquire(app, c, &a, &wait_ms))
		return;
	struct lk_sess *ks = lk_sess_of(app, c->sess);
	if (ks == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	struct lk_lease *rec = find_term(ks, a.name);
	enum lt_loss lost = rec != NULL ? term_loss(rec, app->clock) : LT_HELD;
	if (rec != NULL && lost == LT_HELD && rec->lease != NULL) {
		resp_add_int(c->out, rec->token); /* leads already: this term */
		return;
	}
	if (rec != NULL && lost != LT_HELD) {
		/* A lost term is reported once, here as on RESIGN, so a client
		 * that checks its term with CAMPAIGN learns it lost it rather
		 * than waiting for (or getting) a new term unawares. The next
		 * CAMPAIGN starts a new term. */
		resp_add_errorf(c->out, "LOST %s", lt_loss_name(lost));
		end_term(rec, ELECTION_LEASE_LOST);
		return;
	}
	if (rec != NULL) /* not leading and not campaigning: cannot be; start anew */
		end_term(rec, ELECTION_LEASE_LOST);
	if (!lk_room(ks, c))
		return;
	if ((rec = lk_add(ks, a.name, NULL)) == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	struct election_args ea = {
		.name = a.name, .lease_ms = a.lease_ms, .holder = a.holder, .one_term = true};
	rec->election = election_start(app->lt, &ea, &campaign_cbs, rec, msg, sizeof(msg));
	if (rec->election == NULL) {
		lk_forget(rec);
		resp_add_errorf(c->out, "ERR %s", msg);
		return;
	}
	ks->campaign = rec;
	if (wait_ms > 0)
		timer_arm(&ks->campaign_timer, wait_ms);
	sess_suspend(c->sess);
}

void leadercmds_campaign_timeout(struct lk_sess *ks)
{
	struct lk_lease *rec = ks->campaign;
	if (rec == NULL)
		return;
	resp_add_null(sess_out(ks->sess), sess_proto(ks->sess));
	answer_campaign(ks);
	end_term(rec, ELECTION_CANCELLED);
}

/* --- LEADER.RESIGN name --- */

static void resigned(void *arg, int released, const struct lt_error *err)
{
	struct lk_pending *p = arg;
	if (!sess_closed(p->sess))
		resp_add_int(sess_out(p->sess), 1);
	leadercmds_changed(p->app, p->name); /* watchers read what the release wrote */
	lk_pending_done(p);
}

static void cmd_resign(struct cmd_call *c)
{
	struct lk_lease *rec = find_term(sess_app(c->sess), c->argv[1].p);
	if (rec == NULL) {
		resp_add_int(c->out, 0);
		return;
	}
	enum lt_loss lost = term_loss(rec, ((struct lockapp *)c->arg)->clock);
	if (lost != LT_HELD) {
		resp_add_errorf(c->out, "LOST %s", lt_loss_name(lost));
		end_term(rec, ELECTION_LEASE_LOST);
		return;
	}
	/* answered once the release is done, so that what the client does
	 * next (a LEADER.WATCH, here or on another replica) sees it */
	struct lk_pending *p = lk_pending_new(c->arg, c->sess, &c->argv[1], 0);
	if (p == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	election_stop_then(rec->election, ELECTION_WORK_RETURNED, resigned, p); /* handed on */
	lk_forget(rec);
}

/* --- LEADER.WATCH name [AFTER token] [TIMEOUT ms] --- */

struct watcher {
	struct watcher *next;
	struct watch_group *group;
	struct lk_sess *ks;
	int64_t after; /* -1: answer at the first read */
	struct timer timeout;
};

struct watch_group {
	struct watch_group *next;
	struct lockapp *app;
	struct watcher *watchers;
	struct timer poll;
	bool reading, reread, known;
	struct lt_state last;
	char name[];
};

struct lk_watch_set {
	struct watch_group *groups;
};

static void group_read(struct watch_group *g);

static void reply_leader(struct sess *s, const struct lt_state *st)
{
	struct buf *out = sess_out(s);
	if (!st->held) {
		resp_add_null(out, sess_proto(s));
		return;
	}
	resp_add_map(out, sess_proto(s), 3);
	resp_add_cstr(out, "holder");
	if (st->holder[0] != '\0')
		resp_add_cstr(out, st->holder);
	else
		resp_add_null(out, sess_proto(s));
	resp_add_cstr(out, "fencing-token");
	resp_add_int(out, st->token);
	resp_add_cstr(out, "lease-ms");
	resp_add_int(out, st->lease_ms);
}

static void group_maybe_free(struct watch_group *g)
{
	if (g->watchers != NULL || g->reading)
		return;
	struct watch_group **p = &g->app->watches->groups;
	while (*p != g)
		p = &(*p)->next;
	*p = g->next;
	timer_cancel(&g->poll);
	free(g);
}

static void watcher_remove(struct watcher *w)
{
	struct watch_group *g = w->group;
	struct watcher **p = &g->watchers;
	while (*p != w)
		p = &(*p)->next;
	*p = w->next;
	timer_cancel(&w->timeout);
	w->ks->watch = NULL;
	free(w);
}

/* Answers w with the group's last state and ends it. The session is
 * resumed last: a failed flush aborts it, and its close must not find w. */
static void watcher_answer(struct watcher *w)
{
	struct sess *s = w->ks->sess;
	reply_leader(s, &w->group->last);
	watcher_remove(w);
	sess_resume(s);
}

static void watcher_timeout(void *arg)
{
	struct watcher *w = arg;
	struct watch_group *g = w->group;
	watcher_answer(w);
	group_maybe_free(g);
}

static int64_t group_interval(const struct watch_group *g)
{
	if (!g->known || !g->last.held)
		return WATCH_IDLE_POLL_MS;
	int64_t d = g->last.lease_ms / 3;
	return d < LT_MAX_POLL_MS ? d : LT_MAX_POLL_MS;
}

static void group_state(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct watch_group *g = arg;
	g->reading = false;
	if (st != NULL) {
		g->last = *st;
		g->known = true;
		int64_t token = st->held ? st->token : 0;
		struct watcher *w = g->watchers, *next;
		for (; w != NULL; w = next) {
			next = w->next;
			if (w->after != token)
				watcher_answer(w);
		}
	} else {
		/* A failed read: answer the watchers with the error. */
		struct watcher *w;
		while ((w = g->watchers) != NULL) {
			struct sess *s = w->ks->sess;
			lk_reply_error(sess_out(s), err);
			watcher_remove(w);
			sess_resume(s);
		}
	}
	if (g->watchers == NULL) {
		group_maybe_free(g);
		return;
	}
	if (g->reread) {
		g->reread = false;
		group_read(g);
		return;
	}
	timer_arm(&g->poll, group_interval(g));
}

static void group_read(struct watch_group *g)
{
	if (g->reading) {
		g->reread = true; /* a change since that read was sent */
		return;
	}
	timer_cancel(&g->poll);
	g->reading = lt_get_state(g->app->lt, g->name, group_state, g);
	if (!g->reading)
		timer_arm(&g->poll, WATCH_IDLE_POLL_MS); /* out of memory: later */
}

static void poll_due(void *arg)
{
	group_read(arg);
}

static struct watch_group *group_get(struct lockapp *app, const char *name, bool create)
{
	for (struct watch_group *g = app->watches->groups; g != NULL; g = g->next)
		if (strcmp(g->name, name) == 0)
			return g;
	if (!create)
		return NULL;
	size_t len = strlen(name);
	struct watch_group *g = calloc(1, sizeof(*g) + len + 1);
	if (g == NULL)
		return NULL;
	memcpy(g->name, name, len + 1);
	g->app = app;
	timer_init(&g->poll, app->clock, poll_due, g);
	g->next = app->watches->groups;
	app->watches->groups = g;
	return g;
}

void leadercmds_changed(struct lockapp *app, const char *name)
{
	struct watch_group *g = app->watches != NULL ? group_get(app, name, false) : NULL;
	if (g != NULL)
		group_read(g);
}

static void cmd_watch(struct cmd_call *c)
{
	struct lockapp *app = c->arg;
	int64_t after = -1, timeout = 0;
	if (!lk_name_ok(app, c, &c->argv[1]))
		return;
	for (int i = 2; i < c->argc; i += 2) {
		const struct resp_arg *opt = &c->argv[i];
		int64_t *dst = NULL;
		if (opt->len == 5 && strncasecmp(opt->p, "AFTER", 5) == 0)
			dst = &after;
		else if (opt->len == 7 && strncasecmp(opt->p, "TIMEOUT", 7) == 0)
			dst = &timeout;
		if (dst == NULL || i + 1 >= c->argc) {
			resp_add_errorf(c->out, "ERR syntax error");
			return;
		}
		if (!lk_parse_int(&c->argv[i + 1], dst)) {
			resp_add_errorf(c->out, "ERR %s must be a non-negative integer",
					dst == &after ? "AFTER" : "TIMEOUT");
			return;
		}
	}
	struct lk_sess *ks = lk_sess_of(app, c->sess);
	struct watch_group *g = ks != NULL ? group_get(app, c->argv[1].p, true) : NULL;
	struct watcher *w = g != NULL ? calloc(1, sizeof(*w)) : NULL;
	if (w == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		if (g != NULL)
			group_maybe_free(g);
		return;
	}
	w->group = g;
	w->ks = ks;
	w->after = after;
	timer_init(&w->timeout, app->clock, watcher_timeout, w);
	if (timeout > 0)
		timer_arm(&w->timeout, timeout);
	w->next = g->watchers;
	g->watchers = w;
	ks->watch = w;
	sess_suspend(c->sess);
	group_read(g); /* a fresh answer for a new watcher */
}

static const struct cmd_def leader_cmds[] = {
	{"leader.campaign", cmd_campaign, -3, 0, NULL},
	{"leader.resign", cmd_resign, 2, 0, NULL},
	{"leader.watch", cmd_watch, -2, 0, NULL},
};

int leadercmds_register(struct lockapp *app, struct cmd_table *cmds)
{
	app->watches = calloc(1, sizeof(*app->watches));
	if (app->watches == NULL)
		return -1;
	return cmd_table_add(cmds, leader_cmds, sizeof(leader_cmds) / sizeof(leader_cmds[0]), app);
}

void leadercmds_session_closed(struct lk_sess *ks)
{
	if (ks->watch != NULL) {
		struct watcher *w = ks->watch;
		struct watch_group *g = w->group;
		watcher_remove(w);
		group_maybe_free(g);
	}
	ks->campaign = NULL;
	timer_cancel(&ks->campaign_timer);
}

void leadercmds_free(struct lockapp *app)
{
	if (app->watches == NULL)
		return;
	while (app->watches->groups != NULL) {
		struct watch_group *g = app->watches->groups;
		app->watches->groups = g->next;
		while (g->watchers != NULL) {
			struct watcher *w = g->watchers;
			g->watchers = w->next;
			timer_cancel(&w->timeout);
			free(w);
		}
		timer_cancel(&g->poll);
		free(g); /* a read in flight is dropped with the store */
	}
	free(app->watches);
	app->watches = NULL;
}
