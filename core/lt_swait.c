/*
 * lt_swait: the waiting side of session mode (docs/design/
 * replica-heartbeat.md, "Takeover") — step 1 of the rollout: every replica
 * understands a lock held in session mode and takes it over only by the
 * rules, while it still writes per lease itself.
 *
 * A lock seen held with a `session` attribute keeps an lt_swatch in its
 * struct seen (allocated for such holders only). This file feeds it what
 * the lock table reads (plain reads and refused writes show the lock;
 * store_session READs show the lock and its session in one strongly
 * consistent request), sends those READs and the KILL, and maps the
 * watch's verdicts to the store's conditions. What each verdict does is
 * the lock table's (locktable.c: decide_session, try_session).
 */
#include "core/lt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_session.h"
#include "core/trace.h"

struct lt_swait {
	struct lt_swatch w;
	/* Which session the watch watches, as a number new at every change
	 * (and at every watch made): a session READ is fed as one only when
	 * the watch still watches the session it asked for. */
	uint64_t gen;
	/* the queue's READ in flight: when sent, and gen then */
	int64_t poll_sent;
	uint64_t poll_gen;
};

/* Gens are unique in the process: a watch freed and made again while a
 * read of the old one is out never matches it. One event loop: no lock. */
static uint64_t gens;

void lt_swait_drop(struct seen *sn)
{
	if (sn == NULL || sn->sw == NULL)
		return;
	free(sn->sw);
	sn->sw = NULL;
}

void lt_swait_keep(struct seen *sn, const struct lock_item *item)
{
	if (!lt_item_session(item) || sn->waiter[0] != '\0') {
		lt_swait_drop(sn);
		return;
	}
	if (sn->sw != NULL)
		return;
	sn->sw = calloc(1, sizeof(*sn->sw));
	if (sn->sw == NULL)
		return;
	lt_swatch_init(&sn->sw->w);
	sn->sw->gen = ++gens;
}

/* The watch watches a session-mode holder (its owner and session known). */
static bool watching(const struct lt_swatch *w)
{
	return w->state == LT_SW_UNREAD || w->state == LT_SW_LIVE ||
	       w->state == LT_SW_KILL_OFFERED || w->state == LT_SW_ABSENT || w->state == LT_SW_DEAD;
}

bool lt_swait_reads(const struct lock *l)
{
	const struct lt_swait *sw = lt_swait_of(l);
	return sw != NULL && watching(&sw->w);
}

/* The names of the spans, by operation (only READ and KILL are a
 * waiter's). */
static const char *const span_names[] = {
	[STORE_SESSION_READ] = "Lock.SessionRead",
	[STORE_SESSION_KILL] = "Lock.SessionKill",
};

/* Sends req for the session at key, its span (a child of parent) in *sp;
 * NULL (and no span) when the key does not split or out of memory. */
static struct store_call *send_session(struct lock *l, struct store_session_req *req,
				       const char *key, const struct trace_span *parent,
				       struct trace_span **sp, store_session_cb cb, void *arg)
{
	char replica[STORE_SESSION_REPLICA_MAX + 1], inc[STORE_SESSION_INC_LEN + 1];
	*sp = NULL;
	if (!store_session_key_split(key, replica, inc))
		return NULL;
	req->replica = replica;
	req->incarnation = inc;
	struct trace_span *s = trace_child(parent, span_names[req->op], TRACE_INTERNAL);
	trace_str(s, "leasegate.lock.name", l->name);
	trace_str(s, "db.collection.name", l->t->store->table);
	trace_str(s, "leasegate.session.key", key);
	req->span = s;
	struct store_call *c = store_session_submit(l->t->store, req, cb, arg);
	if (c == NULL)
		trace_finish(&s, "out of memory");
	*sp = s;
	return c;
}

void lt_swait_span_end(struct trace_span **sp, const struct store_session_result *res)
{
	struct trace_span *s = *sp;
	if (s == NULL)
		return;
	if (res == NULL) {
		trace_finish(sp, "cancelled");
		return;
	}
	bool kill = strcmp(s->name, span_names[STORE_SESSION_KILL]) == 0;
	if (kill)
		trace_bool(s, "leasegate.session.killed", res->status == STORE_OK);
	else if (res->status == STORE_OK) {
		trace_bool(s, "leasegate.session.found", res->session.exists);
		trace_bool(s, "leasegate.session.dead", res->session.has_dead);
	}
	bool failed = res->status == STORE_TRANSIENT || res->status == STORE_FATAL ||
		      res->status == STORE_NO_TABLE;
	if (failed)
		trace_str(s, "error.type", res->error_type);
	trace_finish(sp, failed ? res->message : NULL);
}

struct store_call *lt_swait_read(struct lock *l, struct lt_sread *rd,
				 const struct trace_span *parent, store_session_cb cb, void *arg)
{
	struct lt_swait *sw = lt_swait_of(l);
	if (sw == NULL || !watching(&sw->w))
		return NULL;
	struct store_session_req req = {.op = STORE_SESSION_READ, .name = l->name};
	rd->sent_ms = clock_now_ms(l->t->clock);
	rd->gen = sw->gen;
	return send_session(l, &req, sw->w.session, parent, &rd->span, cb, arg);
}

struct store_call *lt_swait_poll(struct lock *l, store_session_cb cb, void *arg)
{
	struct lt_sread rd;
	struct store_call *c =
		lt_swait_read(l, &rd, l->wq_head != NULL ? l->wq_head->span : NULL, cb, arg);
	l->poll_span = rd.span;
	if (c != NULL) {
		lt_swait_of(l)->poll_sent = rd.sent_ms;
		lt_swait_of(l)->poll_gen = rd.gen;
	}
	return c;
}

struct lt_sread lt_swait_polled(const struct lock *l)
{
	const struct lt_swait *sw = lt_swait_of(l);
	return sw != NULL ? (struct lt_sread){.sent_ms = sw->poll_sent, .gen = sw->poll_gen}
			  : (struct lt_sread){0};
}

struct store_call *lt_swait_kill(struct lock *l, const struct lt_swatch_out *out,
				 store_session_cb cb, void *arg)
{
	struct locktable *t = l->t;
	if (t->killer_id[0] == '\0')
		store_new_id(t->killer_id);
	struct store_session_req req = {
		.op = STORE_SESSION_KILL, .seen_rvn = out->session_rvn, .by = t->killer_id};
	return send_session(l, &req, out->session, l->wq_head != NULL ? l->wq_head->span : NULL,
			    &l->poll_span, cb, arg);
}

/* The plain item shows what the watch counts already. */
static bool nothing_new(const struct lt_swatch *w, const struct lock_item *item)
{
	return watching(w) && strcmp(w->owner, item->owner) == 0 &&
	       strcmp(w->session, item->session) == 0 && strcmp(w->rvn, item->rvn) == 0;
}

enum lt_swatch_verdict lt_swait_feed(struct lock *l, const struct lock_item *item,
				     const struct store_session_result *sres,
				     const struct lt_sread *rd, struct lt_swatch_out *out)
{
	struct lt_swait *sw = lt_swait_of(l);
	struct lt_swatch *w = &sw->w;
	int64_t now = clock_now_ms(l->t->clock);
	if (sres != NULL && (rd == NULL || rd->gen != sw->gen))
		sres = NULL; /* read for a session no longer watched: the lock only */
	int64_t sent_ms = sres != NULL ? rd->sent_ms : now;
	if (sres == NULL && nothing_new(w, item)) {
		*out = (struct lt_swatch_out){.verdict = LT_SWATCH_WAIT, .lease_ms = w->lease_ms};
		return LT_SWATCH_WAIT;
	}
	struct lt_swatch_read r = {
		.counted = true,
		.sent_ms = sent_ms <= now ? sent_ms : now,
		.returned_ms = now,
		.lock_exists = item->exists,
		.owner = item->has_owner ? item->owner : "",
		.rvn = item->rvn,
		.session = item->session,
		.slease_ms = item->slease_ms,
		/* the session read with the lock: the one the watch watched
		 * when the read was sent, and still does (gen); none for a
		 * plain read */
		.session_read = "",
	};
	char before[STORE_SESSION_KEY_MAX + 1];
	memcpy(before, w->session, sizeof(before));
	if (sres != NULL) {
		r.session_read = before;
		r.sess = sres->session;
	}
	enum lt_swatch_verdict v = lt_swatch_feed(w, &r, out);
	if (strcmp(w->session, before) != 0 || w->state == LT_SW_IDLE)
		sw->gen = ++gens; /* another session watched, or none */
	return v;
}

int64_t lt_swait_poll_ms(const struct lock *l)
{
	return lt_swatch_poll_ms(&lt_swait_of(l)->w, clock_now_ms(l->t->clock));
}

enum store_sess_check lt_swait_check(const struct lt_swatch_out *out)
{
	static const enum store_sess_check checks[] = {
		[LT_SWATCH_CHECK_NONE] = STORE_SESS_CHECK_NONE,
		[LT_SWATCH_CHECK_RVN] = STORE_SESS_CHECK_RVN,
		[LT_SWATCH_CHECK_ABSENT] = STORE_SESS_CHECK_ABSENT,
	};
	return (unsigned)out->check < sizeof(checks) / sizeof(checks[0]) ? checks[out->check]
									 : STORE_SESS_CHECK_NONE;
}

void lt_swait_error(struct lt_error *e, const struct lock *l, const char *why)
{
	e->status = STORE_FATAL;
	e->error_type = "BadSessionLock";
	snprintf(e->message, sizeof(e->message),
		 "the lock is held in session mode, but %s (lock '%.64s', table '%s')",
		 why != NULL && why[0] != '\0' ? why : "its item or session is out of bounds",
		 l->name, l->t->store->table);
}

int64_t lt_swait_remaining(const struct lock *l, const struct lock_item *item, int64_t now)
{
	const struct lt_swait *sw = lt_swait_of(l);
	const struct lt_swatch *w = sw != NULL ? &sw->w : NULL;
	if (w == NULL || !nothing_new(w, item) || w->state == LT_SW_UNREAD || w->lease_ms <= 0)
		return item->slease_ms;
	int64_t since = w->rvn_since;
	if (w->state != LT_SW_DEAD && w->sess_since > since)
		since = w->sess_since;
	return since + w->lease_ms - now;
}
