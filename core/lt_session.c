/*
 * lt_session: the replica's session and the holder's clock (lt_session.h):
 * its states, its groups of members by lease length, the heartbeat's
 * schedule, its answers and their retries.
 */
#include "core/lt_session.h"
#include "lib/base/lg_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Members of one lease length, oldest send first; see lt_session.h. */
struct lt_sgroup {
	struct lt_session *s;
	struct lt_sgroup *prev, *next; /* in s->groups */
	struct lt_sgroup *hnext;       /* in its bucket */
	struct lt_member *head, *tail;
	int64_t lease_ms;
	int64_t ext_ms;	    /* send + lease of the last beat answered in time; 0 none */
	int64_t emptied_ms; /* when it last lost its last member */
	size_t count;
	struct timer expiry; /* at its head's end */
};

struct lt_session {
	struct clock *clock;
	struct store *store;
	struct obs *obs;
	struct lt_session_options o;
	enum lt_session_state state;
	char replica[STORE_SESSION_REPLICA_MAX + 1];
	char incarnation[STORE_SESSION_INC_LEN + 1];
	char key[STORE_SESSION_KEY_MAX + 1];
	char *holder, *addr;
	/* groups: a list (the beat's pass) and a hash by lease_ms (joins) */
	struct lt_sgroup *groups, **buckets;
	size_t nbuckets, ngroups, members;
	int64_t min_lease_ms; /* shortest lease held; between passes a lower bound */
	int64_t max_lease_ms; /* maxLeaseMs last written */
	/* the heartbeat: one request at a time */
	struct timer beat_timer;
	struct store_call *call;
	enum store_session_op call_op;
	int64_t call_send_ms, call_send_wall_ms;
	/* the first send of call_rvn: a CREATE tried again sends the same
	 * rvn, which any of its attempts may have written, so its answer
	 * proves the session alive from that first send only (a waiter
	 * counts from the first read that showed the rvn) */
	int64_t rvn_send_ms, rvn_send_wall_ms;
	char call_rvn[STORE_ID_MAX + 1];
	int64_t call_seq;	    /* its beatSeq: one more at each new rvn, CREATE's 0 */
	char rvn[STORE_ID_MAX + 1]; /* last known written */
	int64_t basis_ms;	    /* the next beat is due basis + min_lease / 3 */
	int64_t retry_ms;	    /* the last retry's delay; 0 after a success */
	int64_t confirmed_ms, confirmed_wall_ms;
	int64_t rev_seen, rev_done;
	enum lt_loss end_loss;
	char end_reason[STORE_ID_MAX + 64];
	struct lt_session_stats stats;
};

/* allowed[from] has bit `to` set when from -> to is legal (lt_session.h). */
#define BIT(st) (1u << (st))
static const unsigned allowed[LT_SESSION_STATE_COUNT] = {
	[LT_SESSION_NEW] = BIT(LT_SESSION_CREATING),
	[LT_SESSION_CREATING] = BIT(LT_SESSION_LIVE) | BIT(LT_SESSION_ENDED),
	[LT_SESSION_LIVE] = BIT(LT_SESSION_ENDED),
	[LT_SESSION_ENDED] = 0,
};

const char *lt_session_state_name(enum lt_session_state st)
{
	static const char *const names[LT_SESSION_STATE_COUNT] = {"new", "creating", "live",
								  "ended"};
	return (unsigned)st < LT_SESSION_STATE_COUNT ? names[st] : "?";
}

static void set_state(struct lt_session *s, enum lt_session_state to)
{
	char move[48];
	bool ok = (unsigned)s->state < LT_SESSION_STATE_COUNT && (allowed[s->state] & BIT(to));
	if (!ok)
		snprintf(move, sizeof(move), "session %s -> %s", lt_session_state_name(s->state),
			 lt_session_state_name(to));
	LG_ASSERT_MSG(ok, move);
	s->state = to;
}

/* --- groups --- */

static size_t bucket_of(const struct lt_session *s, int64_t lease_ms)
{
	return (size_t)(((uint64_t)lease_ms * 0x9e3779b97f4a7c15ULL) >> 32) & (s->nbuckets - 1);
}

static struct lt_sgroup *group_find(const struct lt_session *s, int64_t lease_ms)
{
	struct lt_sgroup *g = s->buckets[bucket_of(s, lease_ms)];
	while (g != NULL && g->lease_ms != lease_ms)
		g = g->hnext;
	return g;
}

/* Doubles the buckets once there are more groups than buckets; on
 * out-of-memory the chains grow instead. */
static void buckets_grow(struct lt_session *s)
{
	if (s->ngroups <= s->nbuckets)
		return;
	struct lt_sgroup **old = s->buckets;
	size_t n = s->nbuckets;
	struct lt_sgroup **b = calloc(2 * n, sizeof(*b));
	if (b == NULL)
		return;
	s->buckets = b;
	s->nbuckets = 2 * n;
	for (size_t i = 0; i < n; i++)
		while (old[i] != NULL) {
			struct lt_sgroup *g = old[i];
			old[i] = g->hnext;
			size_t at = bucket_of(s, g->lease_ms);
			g->hnext = b[at];
			b[at] = g;
		}
	free(old);
}

static void expiry_due(void *arg);

static struct lt_sgroup *group_new(struct lt_session *s, int64_t lease_ms)
{
	struct lt_sgroup *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->s = s;
	g->lease_ms = lease_ms;
	timer_init(&g->expiry, s->clock, expiry_due, g);
	g->next = s->groups;
	if (s->groups != NULL)
		s->groups->prev = g;
	s->groups = g;
	size_t at = bucket_of(s, lease_ms);
	g->hnext = s->buckets[at];
	s->buckets[at] = g;
	s->ngroups++;
	buckets_grow(s);
	return g;
}

static void group_free(struct lt_sgroup *g)
{
	struct lt_session *s = g->s;
	struct lt_sgroup **at = &s->buckets[bucket_of(s, g->lease_ms)];
	while (*at != g)
		at = &(*at)->hnext;
	*at = g->hnext;
	if (g->prev != NULL)
		g->prev->next = g->next;
	else
		s->groups = g->next;
	if (g->next != NULL)
		g->next->prev = g->prev;
	s->ngroups--;
	timer_cancel(&g->expiry);
	free(g);
}

/* m's end by the holder's clock: its own proof, or the group's last beat
 * answered in time, whichever is later. */
static int64_t end_of(const struct lt_sgroup *g, const struct lt_member *m)
{
	int64_t own = m->send_ms + g->lease_ms;
	return own > g->ext_ms ? own : g->ext_ms;
}

static void arm_expiry(struct lt_sgroup *g)
{
	if (g->head != NULL)
		timer_arm_at(&g->expiry, end_of(g, g->head));
	else
		timer_cancel(&g->expiry);
}

static void unlink_member(struct lt_member *m)
{
	struct lt_sgroup *g = m->group;
	if (m->prev != NULL)
		m->prev->next = m->next;
	else
		g->head = m->next;
	if (m->next != NULL)
		m->next->prev = m->prev;
	else
		g->tail = m->prev;
	m->prev = m->next = NULL;
	m->group = NULL;
	g->count--;
	g->s->members--;
	if (g->count == 0)
		g->emptied_ms = clock_now_ms(g->s->clock);
}

/* Ends the members at g's head whose end is at or before now (LT_EXPIRED):
 * an answer that arrives then extends nothing. The callback may leave
 * other members: the head is read again after each. */
static void expire_due(struct lt_sgroup *g, int64_t now)
{
	struct lt_session *s = g->s;
	while (g->head != NULL) {
		struct lt_member *m = g->head;
		s->stats.member_visits++;
		if (end_of(g, m) > now)
			break;
		unlink_member(m);
		s->o.on_lost(s->o.arg, m, LT_EXPIRED);
	}
}

static void expiry_due(void *arg)
{
	struct lt_sgroup *g = arg;
	expire_due(g, clock_now_ms(g->s->clock));
	arm_expiry(g);
}

/* Links m into g in send order. An acquire answered out of order walks
 * back at most LT_SESSION_ORDER_STEPS; past that, or when a beat's end
 * already covers it, it goes to the head with a send time no later than
 * the head's (covered: its end stays the group's; else earlier). */
static void group_insert(struct lt_sgroup *g, struct lt_member *m)
{
	struct lt_member *p = g->tail;
	for (int i = 0; p != NULL && p->send_ms > m->send_ms && i < LT_SESSION_ORDER_STEPS; i++)
		p = p->prev;
	if (p != NULL && p->send_ms > m->send_ms) { /* walked too far: the head */
		if (g->head->send_ms < m->send_ms) {
			if (m->send_ms + g->lease_ms > g->ext_ms)
				g->s->stats.joins_clamped++; /* not covered: an earlier end */
			m->send_ms = g->head->send_ms;
		}
		p = NULL;
	}
	m->prev = p; /* after p; NULL: the head */
	m->next = p != NULL ? p->next : g->head;
	if (m->next != NULL)
		m->next->prev = m;
	else
		g->tail = m;
	if (p != NULL)
		p->next = m;
	else
		g->head = m;
	m->group = g;
	g->count++;
	g->s->members++;
}

/* --- the heartbeat --- */

static void beat_due(void *arg);

/* The next beat: a third of the shortest lease after basis, or, idle,
 * LT_SESSION_IDLE_BEAT_MS after it. */
static int64_t beat_due_ms(const struct lt_session *s)
{
	return s->basis_ms + (s->members > 0 ? s->min_lease_ms / 3 : LT_SESSION_IDLE_BEAT_MS);
}

static void schedule_beat(struct lt_session *s)
{
	if (s->state == LT_SESSION_LIVE && s->call == NULL)
		timer_arm_at(&s->beat_timer, beat_due_ms(s));
}

/* The pass of a beat, O(groups) and the members that end: members whose
 * end has come are lost first (a beat is for the others); the shortest
 * lease held, maxLeaseMs (the longest held now or by a member that left
 * less than its lease ago); groups empty for longer than their lease
 * freed. */
static void pass(struct lt_session *s, int64_t now)
{
	int64_t min = INT64_MAX, max = STORE_SESSION_LEASE_MIN;
	struct lt_sgroup *g = s->groups;
	while (g != NULL) {
		s->stats.group_visits++;
		expire_due(g, now);
		arm_expiry(g);
		struct lt_sgroup *next = g->next;
		if (g->count == 0 && now >= g->emptied_ms + g->lease_ms) {
			group_free(g);
		} else {
			if (g->count > 0 && g->lease_ms < min)
				min = g->lease_ms;
			if (g->lease_ms > max)
				max = g->lease_ms;
		}
		g = next;
	}
	s->min_lease_ms = min;
	s->max_lease_ms = max;
}

static void on_answer(void *arg, const struct store_session_result *res);

/* Sends op (CREATE or BEAT) with a new rvn (a CREATE tried again: its
 * first one's, so that its answer can tell that one applied): true when
 * sent. */
static bool send(struct lt_session *s, enum store_session_op op)
{
	if (op != STORE_SESSION_CREATE || s->call_rvn[0] == '\0') {
		if (s->call_rvn[0] != '\0')
			s->call_seq++;
		store_new_id(s->call_rvn);
		s->rvn_send_ms = clock_now_ms(s->clock);
		s->rvn_send_wall_ms = clock_wall_ms(s->clock);
	}
	struct store_session_req req = {
		.op = op,
		.replica = s->replica,
		.incarnation = s->incarnation,
		.rvn = s->call_rvn,
		.seq = s->call_seq,
		.max_lease_ms = s->max_lease_ms,
		.holder = s->holder,
		.addr = s->addr,
		.ttl = s->o.ttl ? store_session_ttl(clock_wall_ms(s->clock), s->max_lease_ms) : 0,
	};
	s->call_op = op;
	s->call_send_ms = clock_now_ms(s->clock);
	s->call_send_wall_ms = clock_wall_ms(s->clock);
	s->call = store_session_submit(s->store, &req, on_answer, s);
	if (s->call == NULL)
		return false;
	s->stats.beats_sent++;
	s->obs->session_beats++;
	return true;
}

/* A failed (or unsent) request: tried again after LT_RENEW_RETRY_FIRST_MS,
 * doubling up to a sixth of the shortest lease held (without members: up
 * to LT_MAX_POLL_MS). A retry that finds no member left sends nothing
 * (beat_due): never past what is useful. */
static void retry(struct lt_session *s)
{
	int64_t cap = s->members > 0 ? s->min_lease_ms / 6 : LT_MAX_POLL_MS;
	s->retry_ms = s->retry_ms == 0 ? LT_RENEW_RETRY_FIRST_MS : 2 * s->retry_ms;
	if (s->retry_ms > cap)
		s->retry_ms = cap;
	timer_arm(&s->beat_timer, s->retry_ms);
}

static void beat_due(void *arg)
{
	struct lt_session *s = arg;
	if (s->call != NULL || s->state == LT_SESSION_ENDED)
		return;
	int64_t now = clock_now_ms(s->clock);
	pass(s, now);
	if (s->state == LT_SESSION_LIVE && s->members == 0 && now < beat_due_ms(s)) {
		timer_arm_at(&s->beat_timer, beat_due_ms(s)); /* idle: nothing to prove alive */
		return;
	}
	enum store_session_op op =
		s->state == LT_SESSION_CREATING ? STORE_SESSION_CREATE : STORE_SESSION_BEAT;
	if (!send(s, op))
		retry(s); /* out of memory */
}

/* Event 50 (started) or 51 (ended, with why: code and words, and the
 * leases lost) for the log. */
static void session_event(struct lt_session *s, enum obs_event_id id, const char *code,
			  int64_t leases)
{
	struct obs_event ev = {
		.id = id,
		.table = s->store->table,
		.holder = s->holder,
		.reason = code,
		.hb_session = s->key,
		.replica = s->replica,
		.detail = id == OBS_SESSION_ENDED ? s->end_reason : NULL,
		.leases = leases,
	};
	obs_emit(s->obs, &ev);
}

/* Every member is lost for why, at once; event 51 says so (code: why in a
 * word, reason: in words); then on_end. */
static void end(struct lt_session *s, enum lt_loss why, const char *code, const char *reason)
{
	int64_t lost = 0;
	set_state(s, LT_SESSION_ENDED);
	s->end_loss = why;
	snprintf(s->end_reason, sizeof(s->end_reason), "%s", reason);
	timer_cancel(&s->beat_timer);
	store_cancel(s->store, s->call);
	s->call = NULL;
	for (struct lt_sgroup *g = s->groups; g != NULL; g = g->next) {
		timer_cancel(&g->expiry);
		while (g->head != NULL) {
			struct lt_member *m = g->head;
			unlink_member(m);
			lost++;
			s->o.on_lost(s->o.arg, m, why);
		}
	}
	session_event(s, OBS_SESSION_ENDED, code, lost);
	if (s->o.on_end != NULL)
		s->o.on_end(s->o.arg);
}

/* A beat sent at send_ms answered in time at now: in each group, first the
 * members whose end has come are lost (expiry is sticky), then the others
 * run to send_ms + lease. O(groups) and the members that end. */
static void extend(struct lt_session *s, int64_t send_ms, int64_t now)
{
	for (struct lt_sgroup *g = s->groups; g != NULL; g = g->next) {
		s->stats.group_visits++;
		expire_due(g, now);
		if (send_ms + g->lease_ms > g->ext_ms)
			g->ext_ms = send_ms + g->lease_ms;
		arm_expiry(g);
	}
	s->confirmed_ms = send_ms;
	s->confirmed_wall_ms = s->rvn_send_wall_ms;
	s->stats.beats_extended++;
}

/* An OK answer (or a CREATE's own, refused by its earlier attempt). */
static void answered(struct lt_session *s, const struct session_item *item)
{
	int64_t now = clock_now_ms(s->clock);
	snprintf(s->rvn, sizeof(s->rvn), "%s", item->rvn);
	if (s->state == LT_SESSION_CREATING) {
		set_state(s, LT_SESSION_LIVE);
		session_event(s, OBS_SESSION_STARTED, NULL, 0);
	}
	bool rose = item->rev_seq > s->rev_seen;
	if (rose)
		s->rev_seen = item->rev_seq;
	if (item->rev_seq <= s->rev_done)
		extend(s, s->rvn_send_ms, now);
	s->retry_ms = 0;
	s->basis_ms = s->call_send_ms;
	schedule_beat(s);
	if (rose && s->o.on_revseq != NULL)
		s->o.on_revseq(s->o.arg, item->rev_seq);
}

/* Why a refusal ends the session: the dead mark, or no item; unless the
 * item shows this request's own rvn and seq: a CREATE or BEAT tried again
 * by the store, refused by its own earlier attempt, which applied. */
static void refused(struct lt_session *s, const struct session_item *item)
{
	char why[sizeof(s->end_reason)];
	const char *code = "deleted";
	if (item->exists && !item->has_dead && item->beat_seq == s->call_seq &&
	    strcmp(item->rvn, s->call_rvn) == 0) {
		answered(s, item);
		return;
	}
	s->stats.beats_refused++;
	if (item->exists && item->has_dead) {
		code = "marked_dead";
		snprintf(why, sizeof(why), "marked dead by %s", item->dead);
	} else if (item->exists) {
		code = "refused";
		snprintf(why, sizeof(why), "its key is another session's item");
	} else {
		snprintf(why, sizeof(why), "its item is gone");
	}
	end(s, LT_SESSION, code, why);
}

static void on_answer(void *arg, const struct store_session_result *res)
{
	struct lt_session *s = arg;
	s->call = NULL;
	switch (res->status) {
	case STORE_OK:
		obs_count(&s->obs->session_answers, "ok");
		answered(s, &res->session);
		return;
	case STORE_REFUSED:
		obs_count(&s->obs->session_answers, "refused");
		refused(s, &res->session);
		return;
	case STORE_NO_TABLE:
		obs_count(&s->obs->session_answers, "table_not_found");
		end(s, LT_TABLE_NOT_FOUND, "table_not_found", "the table is gone");
		return;
	default: /* TRANSIENT, FATAL: as a lease's renewal, tried again */
		obs_count(&s->obs->session_answers,
			  res->error_type != NULL ? res->error_type : "error");
		retry(s);
	}
}

/* --- the API --- */

static char *dup_or_null(const char *str, size_t max, bool *ok)
{
	if (str == NULL)
		return NULL;
	char *d = strndup(str, max);
	*ok = *ok && d != NULL;
	return d;
}

struct lt_session *lt_session_new(struct clock *clock, struct store *store, struct obs *obs,
				  const struct lt_session_options *o)
{
	char inc[STORE_SESSION_INC_LEN + 1]; /* 128 random bits, lowercase hex */
	store_new_id(inc);
	struct store_session_req check = {
		.op = STORE_SESSION_CREATE,
		.replica = o->replica,
		.incarnation = inc,
		.rvn = inc,
		.max_lease_ms = STORE_SESSION_LEASE_MIN,
		.holder = o->holder,
		.addr = o->addr,
	};
	if (o->on_lost == NULL || store->ops->session_submit == NULL ||
	    !store_session_valid(&check))
		return NULL;
	struct lt_session *s = calloc(1, sizeof(*s));
	bool ok = s != NULL;
	if (ok) {
		s->nbuckets = 8;
		s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
		ok = s->buckets != NULL;
		s->holder = dup_or_null(o->holder, STORE_HOLDER_MAX, &ok);
		s->addr = dup_or_null(o->addr, STORE_SESSION_ADDR_MAX, &ok);
	}
	if (!ok) {
		lt_session_free(s);
		return NULL;
	}
	s->clock = clock;
	s->store = store;
	s->obs = obs;
	s->o = *o;
	s->o.replica = s->replica;
	s->o.holder = s->holder;
	s->o.addr = s->addr;
	snprintf(s->replica, sizeof(s->replica), "%s", o->replica);
	snprintf(s->incarnation, sizeof(s->incarnation), "%s", inc);
	check.replica = s->replica;
	store_session_key(&check, s->key);
	s->min_lease_ms = INT64_MAX;
	s->max_lease_ms = STORE_SESSION_LEASE_MIN;
	s->confirmed_ms = s->confirmed_wall_ms = -1;
	timer_init(&s->beat_timer, clock, beat_due, s);
	return s;
}

bool lt_session_start(struct lt_session *s)
{
	if (s->state != LT_SESSION_NEW)
		return false;
	pass(s, clock_now_ms(s->clock));
	if (!send(s, STORE_SESSION_CREATE))
		return false;
	set_state(s, LT_SESSION_CREATING);
	return true;
}

void lt_session_free(struct lt_session *s)
{
	if (s == NULL)
		return;
	if (s->clock != NULL)
		timer_cancel(&s->beat_timer);
	if (s->call != NULL)
		store_cancel(s->store, s->call);
	while (s->groups != NULL) {
		struct lt_sgroup *g = s->groups;
		for (struct lt_member *m = g->head; m != NULL; m = m->next)
			m->group = NULL; /* forgotten: the owner ends them first */
		g->head = NULL;
		group_free(g);
	}
	free(s->buckets);
	free(s->holder);
	free(s->addr);
	free(s);
}

enum lt_join lt_member_join(struct lt_session *s, struct lt_member *m, int64_t lease_ms,
			    int64_t send_ms)
{
	int64_t now = clock_now_ms(s->clock);
	LG_ASSERT(m->group == NULL && lease_ms >= LT_MIN_LEASE_MS && lease_ms <= LT_MAX_LEASE_MS &&
		  send_ms <= now);
	if (s->state != LT_SESSION_CREATING && s->state != LT_SESSION_LIVE)
		return LT_JOIN_ENDED;
	struct lt_sgroup *g = group_find(s, lease_ms);
	bool made = g == NULL;
	if (made && (g = group_new(s, lease_ms)) == NULL)
		return LT_JOIN_NOMEM;
	m->send_ms = send_ms;
	if (end_of(g, m) <= now) {
		if (made)
			group_free(g);
		return LT_JOIN_EXPIRED;
	}
	bool idle = s->members == 0, shorter = lease_ms < s->min_lease_ms;
	group_insert(g, m);
	if (g->head == m || !timer_armed(&g->expiry))
		arm_expiry(g);
	if (shorter)
		s->min_lease_ms = lease_ms;
	if (idle) { /* its acquire is its proof of life until a third of it */
		s->basis_ms = send_ms;
		schedule_beat(s);
	} else if (shorter && s->call == NULL && s->state == LT_SESSION_LIVE) {
		timer_arm(&s->beat_timer, 0);
	}
	return LT_JOIN_OK;
}

void lt_member_leave(struct lt_member *m)
{
	if (m->group != NULL)
		unlink_member(m); /* its group's timer may run early: it finds nothing */
}

int64_t lt_member_end_ms(const struct lt_member *m)
{
	return m->group != NULL ? end_of(m->group, m) : -1;
}

bool lt_session_revocations_done(struct lt_session *s, int64_t seq)
{
	if (seq > s->rev_seen)
		return false;
	if (seq <= s->rev_done)
		return true;
	s->rev_done = seq;
	if (s->rev_done == s->rev_seen && s->call == NULL && s->state == LT_SESSION_LIVE &&
	    s->members > 0)
		timer_arm(&s->beat_timer, 0); /* its answer extends again */
	return true;
}

void lt_session_view(const struct lt_session *s, struct lt_session_view *out)
{
	*out = (struct lt_session_view){
		.state = s->state,
		.key = s->key,
		.rvn = s->rvn,
		.confirmed_ms = s->confirmed_ms,
		.confirmed_wall_ms = s->confirmed_wall_ms,
		.rev_seq_seen = s->rev_seen,
		.rev_seq_done = s->rev_done,
		.max_lease_ms = s->max_lease_ms,
		.members = s->members,
		.groups = s->ngroups,
		.end_loss = s->state == LT_SESSION_ENDED ? s->end_loss : LT_HELD,
		.end_reason = s->end_reason,
	};
}

const struct lt_session_stats *lt_session_stats(const struct lt_session *s)
{
	return &s->stats;
}
