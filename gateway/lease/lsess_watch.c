/*
 * lsess_watch: watches of a name's leader (LEADER.WATCH's long poll).
 *
 * Watchers of one name share one group: one read per poll interval (a
 * third of the leader's lease, at most LT_MAX_POLL_MS), and one at once
 * when a change goes through this replica (ls_changed). A new watcher
 * asks for a fresh read; it is answered after a read whose token differs
 * from its `after`, or at its timeout with the last state read.
 */
#include "gateway/lease/lsess_int.h"

#include <stdlib.h>
#include <string.h>

#define WATCH_IDLE_POLL_MS 1000LL /* no leader: how often to look again */

struct ls_watcher {
	struct ls_watcher *prev, *next; /* in its group */
	struct ls_watch_group *group;
	struct lsess *sess;
	int64_t after; /* -1: answer at the first read */
	struct timer timeout;
};

struct ls_watch_group {
	struct ls_watch_group *next;
	struct lsvc *svc;
	struct ls_watcher *watchers;
	struct ls_watcher *cursor; /* the next to look at while answering */
	struct timer poll;
	bool reading, reread, known, answering;
	struct lt_state last;
	char name[];
};

static void group_read(struct ls_watch_group *g);

static void group_maybe_free(struct ls_watch_group *g)
{
	if (g->watchers != NULL || g->reading || g->answering)
		return;
	struct ls_watch_group **p = &g->svc->groups;
	while (*p != g)
		p = &(*p)->next;
	*p = g->next;
	timer_cancel(&g->poll);
	free(g);
}

static void watcher_remove(struct ls_watcher *w)
{
	struct ls_watch_group *g = w->group;
	if (g->cursor == w)
		g->cursor = w->next;
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		g->watchers = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	timer_cancel(&w->timeout);
	w->sess->watcher = NULL;
	free(w);
}

/* Answers w (its wait ends) with res; w is freed. */
static void watcher_answer(struct ls_watcher *w, const struct ls_result *res)
{
	struct lsess *s = w->sess;
	ls_done_cb cb;
	void *arg;
	watcher_remove(w);
	ls_wait_end(s, &cb, &arg);
	cb(arg, res); /* last: it may free s */
}

static void watcher_timeout(void *arg)
{
	struct ls_watcher *w = arg;
	struct ls_watch_group *g = w->group;
	struct ls_result res;
	ls_res_init(&res, LS_OK);
	res.st = g->last;
	g->answering = true;
	watcher_answer(w, &res);
	g->answering = false;
	group_maybe_free(g);
}

static int64_t group_interval(const struct ls_watch_group *g)
{
	if (!g->known || !g->last.held)
		return WATCH_IDLE_POLL_MS;
	int64_t d = g->last.lease_ms / 3;
	return d < LT_MAX_POLL_MS ? d : LT_MAX_POLL_MS;
}

static void group_state(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct ls_watch_group *g = arg;
	struct ls_result res;
	int64_t token = 0;
	g->reading = false;
	ls_res_init(&res, LS_OK);
	if (st != NULL) {
		g->last = *st;
		g->known = true;
		res.st = *st;
		token = st->held ? st->token : 0;
	} else {
		ls_res_err(&res, err); /* a failed read: every watcher is told */
	}
	/* a callback may end other watchers (ls_cancel): the cursor follows */
	g->answering = true;
	for (struct ls_watcher *w = g->watchers; w != NULL; w = g->cursor) {
		g->cursor = w->next;
		if (st == NULL || w->after != token)
			watcher_answer(w, &res);
	}
	g->cursor = NULL;
	g->answering = false;
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

static void group_read(struct ls_watch_group *g)
{
	if (g->reading) {
		g->reread = true; /* a change since that read was sent */
		return;
	}
	timer_cancel(&g->poll);
	g->reading = lt_get_state(g->svc->lt, g->name, group_state, g);
	if (!g->reading)
		timer_arm(&g->poll, WATCH_IDLE_POLL_MS); /* out of memory: later */
}

static void poll_due(void *arg)
{
	group_read(arg);
}

static struct ls_watch_group *group_get(struct lsvc *svc, const char *name, bool create)
{
	for (struct ls_watch_group *g = svc->groups; g != NULL; g = g->next)
		if (strcmp(g->name, name) == 0)
			return g;
	if (!create)
		return NULL;
	size_t len = strlen(name);
	struct ls_watch_group *g = calloc(1, sizeof(*g) + len + 1);
	if (g == NULL)
		return NULL;
	memcpy(g->name, name, len + 1);
	g->svc = svc;
	timer_init(&g->poll, svc->clock, poll_due, g);
	g->next = svc->groups;
	svc->groups = g;
	return g;
}

void ls_changed(struct lsvc *svc, const char *name)
{
	struct ls_watch_group *g = svc->groups != NULL ? group_get(svc, name, false) : NULL;
	if (g != NULL)
		group_read(g);
	lt_sh_kick(svc->lt, name); /* shared waits read now */
}

enum ls_status ls_watch(struct lsess *s, const char *name, size_t name_len, int64_t after,
			int64_t timeout_ms, struct ls_result *now, ls_done_cb cb, void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, name, name_len, buf, now))
		return now->status;
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	struct ls_watch_group *g = group_get(s->svc, buf, true);
	struct ls_watcher *w = g != NULL ? calloc(1, sizeof(*w)) : NULL;
	if (w == NULL) {
		if (g != NULL)
			group_maybe_free(g);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	w->group = g;
	w->sess = s;
	w->after = after;
	timer_init(&w->timeout, s->svc->clock, watcher_timeout, w);
	if (timeout_ms > 0)
		timer_arm(&w->timeout, timeout_ms);
	w->next = g->watchers;
	if (g->watchers != NULL)
		g->watchers->prev = w;
	g->watchers = w;
	s->watcher = w;
	ls_wait_begin(s, LS_WAIT_WATCH, cb, arg);
	group_read(g); /* a fresh answer for a new watcher */
	return now->status = LS_PENDING;
}

void ls_watch_drop(struct lsess *s)
{
	struct ls_watcher *w = s->watcher;
	if (w == NULL)
		return;
	struct ls_watch_group *g = w->group;
	watcher_remove(w);
	group_maybe_free(g);
}

void ls_watch_free_all(struct lsvc *svc)
{
	while (svc->groups != NULL) {
		struct ls_watch_group *g = svc->groups;
		svc->groups = g->next;
		while (g->watchers != NULL) {
			struct ls_watcher *w = g->watchers;
			g->watchers = w->next;
			timer_cancel(&w->timeout);
			w->sess->watcher = NULL;
			free(w);
		}
		timer_cancel(&g->poll);
		free(g); /* a read in flight is dropped with the store */
	}
}

const char *ls_watch_name(const struct ls_watcher *w)
{
	return w->group->name;
}
