/*
 * lt_swatch: a waiter's judgement of a lock held in session mode (see
 * lt_swatch.h). A read is fed in three steps: it is checked and classified
 * (the state it shows), the counts it restarts are noted (the whole watch
 * on another owner or session; the lock's rvn; the session's value), and
 * the new state's row of the judge table gives the verdict once the counts
 * it needs covered the largest lease seen.
 *
 * Why every count is held to the largest lease seen, sleaseMs and
 * maxLeaseMs alike: a heartbeat extends this lock by its own sleaseMs,
 * which maxLeaseMs should cover, but this waiter does not lean on that for
 * its own lock; the larger of the two is never unsafe.
 */
#include "core/lt_swatch.h"

#include <stdio.h>
#include <string.h>

#include "core/lt_internal.h"

static const char *const state_names[LT_SW_COUNT] = {
	[LT_SW_IDLE] = "idle",	   [LT_SW_FREE] = "free", [LT_SW_PER_LEASE] = "per-lease",
	[LT_SW_UNREAD] = "unread", [LT_SW_LIVE] = "live", [LT_SW_KILL_OFFERED] = "kill-offered",
	[LT_SW_ABSENT] = "absent", [LT_SW_DEAD] = "dead",
};

const char *lt_swatch_state_name(enum lt_swatch_state s)
{
	return s < LT_SW_COUNT ? state_names[s] : "?";
}

/* Which counts a state's due verdict needs covered. */
enum need { NEED_NONE, NEED_SESS, NEED_LOCK, NEED_BOTH };

/* What each state answers: .verdict while its counts run (always, for a
 * state that needs none), .due once they covered the lease, then moving
 * to .then. */
static const struct judge {
	enum lt_swatch_verdict verdict, due;
	enum need need;
	enum lt_swatch_check check;
	enum lt_swatch_state then;
} judges[LT_SW_COUNT] = {
	[LT_SW_IDLE] = {LT_SWATCH_WAIT},
	[LT_SW_FREE] = {LT_SWATCH_FREE},
	[LT_SW_PER_LEASE] = {LT_SWATCH_PER_LEASE},
	[LT_SW_UNREAD] = {LT_SWATCH_WAIT},
	/* Its rvn stood still for the lease: the first waiter to see it marks
	 * the session dead, which makes every other lock of it a single-item
	 * takeover; the kill is offered once per rvn (KILL_OFFERED). */
	[LT_SW_LIVE] = {LT_SWATCH_WAIT, LT_SWATCH_KILL, NEED_SESS, LT_SWATCH_CHECK_RVN,
			LT_SW_KILL_OFFERED},
	[LT_SW_KILL_OFFERED] = {LT_SWATCH_WAIT, LT_SWATCH_TAKEOVER_TX, NEED_BOTH,
				LT_SWATCH_CHECK_RVN, LT_SW_KILL_OFFERED},
	[LT_SW_ABSENT] = {LT_SWATCH_WAIT, LT_SWATCH_TAKEOVER_TX, NEED_BOTH, LT_SWATCH_CHECK_ABSENT,
			  LT_SW_ABSENT},
	/* Dead: no heartbeat extends the lock any more, but an acquire written
	 * under the session is its own proof until its send + lease: the
	 * lock's rvn must still stand still for a whole lease. */
	[LT_SW_DEAD] = {LT_SWATCH_WAIT, LT_SWATCH_TAKEOVER, NEED_LOCK, LT_SWATCH_CHECK_NONE,
			LT_SW_DEAD},
};

/* allowed[from] has bit `to` set when from -> to is a legal move (IDLE is
 * reached by lt_swatch_init and BAD reads only). KILL_OFFERED is reached
 * only from LIVE, by its KILL verdict, and kept while the rvn stands. */
#define BIT(s) (1u << (s))
#define ANY_OBS                                                                                    \
	(BIT(LT_SW_FREE) | BIT(LT_SW_PER_LEASE) | BIT(LT_SW_UNREAD) | BIT(LT_SW_LIVE) |            \
	 BIT(LT_SW_ABSENT) | BIT(LT_SW_DEAD))
static const unsigned allowed[LT_SW_COUNT] = {
	[LT_SW_IDLE] = ANY_OBS,
	[LT_SW_FREE] = ANY_OBS,
	[LT_SW_PER_LEASE] = ANY_OBS,
	[LT_SW_UNREAD] = ANY_OBS,
	[LT_SW_LIVE] = ANY_OBS | BIT(LT_SW_KILL_OFFERED),
	[LT_SW_KILL_OFFERED] = ANY_OBS | BIT(LT_SW_KILL_OFFERED),
	[LT_SW_ABSENT] = ANY_OBS,
	[LT_SW_DEAD] = ANY_OBS,
};

static void move(struct lt_swatch *w, enum lt_swatch_state to)
{
	LG_ASSERT(allowed[w->state] & BIT(to));
	w->state = to;
}

/* The session's value as a kind: what restarts its count is a move
 * between kinds (sess_moves) or, LIVE to LIVE, another rvn. */
enum sess_kind { SK_UNREAD, SK_LIVE, SK_ABSENT, SK_DEAD, SK_NONE, SK_COUNT };

static enum sess_kind kind_of(enum lt_swatch_state s)
{
	static const enum sess_kind kinds[LT_SW_COUNT] = {
		[LT_SW_IDLE] = SK_NONE,	    [LT_SW_FREE] = SK_NONE, [LT_SW_PER_LEASE] = SK_NONE,
		[LT_SW_UNREAD] = SK_UNREAD, [LT_SW_LIVE] = SK_LIVE, [LT_SW_KILL_OFFERED] = SK_LIVE,
		[LT_SW_ABSENT] = SK_ABSENT, [LT_SW_DEAD] = SK_DEAD,
	};
	return kinds[s];
}

/* sess_moves[from][to]: the restart of the session's count, 0 for none.
 * LIVE to DEAD restarts nothing: a dead session's count is not used. NONE
 * (no session watched) to NONE restarts nothing either. */
static const unsigned sess_moves[SK_COUNT][SK_COUNT] = {
	[SK_UNREAD] = {[SK_LIVE] = LT_SWATCH_RS_SESS_READ,
		       [SK_ABSENT] = LT_SWATCH_RS_SESS_READ,
		       [SK_DEAD] = LT_SWATCH_RS_SESS_READ},
	[SK_LIVE] = {[SK_UNREAD] = LT_SWATCH_RS_SESS_UNREAD, [SK_ABSENT] = LT_SWATCH_RS_SESS_GONE},
	[SK_ABSENT] = {[SK_UNREAD] = LT_SWATCH_RS_SESS_UNREAD,
		       [SK_LIVE] = LT_SWATCH_RS_SESS_APPEARED,
		       [SK_DEAD] = LT_SWATCH_RS_SESS_APPEARED},
	[SK_DEAD] = {[SK_UNREAD] = LT_SWATCH_RS_SESS_UNREAD,
		     [SK_LIVE] = LT_SWATCH_RS_SESS_REVIVED,
		     [SK_ABSENT] = LT_SWATCH_RS_SESS_GONE},
};

static const char *str(const char *s)
{
	return s != NULL ? s : "";
}

/* SESSION#<replica>#<incarnation>, as store_session_key writes it */
static bool key_ok(const char *k)
{
	return store_session_key_split(k, NULL, NULL);
}

static bool lease_ok(int64_t ms)
{
	return ms >= LT_MIN_LEASE_MS && ms <= LT_MAX_LEASE_MS;
}

/* The session item as read, when it is the lock's: its kind (BAD with
 * w->message when out of bounds). */
static enum lt_swatch_state session_state(struct lt_swatch *w, const struct lt_swatch_read *r)
{
	const struct session_item *s = &r->sess;
	if (strcmp(str(r->session_read), r->session) != 0)
		return LT_SW_UNREAD;
	if (!s->exists)
		return LT_SW_ABSENT;
	if (strcmp(s->type, "SESSION") != 0)
		snprintf(w->message, sizeof(w->message), "the item at %.100s is not a SESSION",
			 r->session);
	else if (!store_session_id_ok(s->rvn, STORE_ID_MAX, false))
		snprintf(w->message, sizeof(w->message), "session rvn not 1..%d printable bytes",
			 STORE_ID_MAX);
	else if (!lease_ok(s->max_lease_ms))
		snprintf(w->message, sizeof(w->message),
			 "session maxLeaseMs %lld outside %lld..%lld", (long long)s->max_lease_ms,
			 LT_MIN_LEASE_MS, LT_MAX_LEASE_MS);
	else
		return s->has_dead ? LT_SW_DEAD : LT_SW_LIVE;
	return LT_SW_IDLE;
}

/* The state r shows; LT_SW_IDLE with w->message when r is out of bounds. */
static enum lt_swatch_state classify(struct lt_swatch *w, const struct lt_swatch_read *r)
{
	w->message[0] = '\0';
	if (r->sent_ms < 0 || r->sent_ms > r->returned_ms ||
	    (w->last_ms >= 0 && r->returned_ms < w->last_ms)) {
		snprintf(w->message, sizeof(w->message),
			 "read sent at %lld, returned at %lld (last %lld)", (long long)r->sent_ms,
			 (long long)r->returned_ms, (long long)w->last_ms);
		return LT_SW_IDLE;
	}
	if (!r->lock_exists || str(r->owner)[0] == '\0')
		return LT_SW_FREE;
	if (!store_session_id_ok(r->owner, STORE_ID_MAX, false) ||
	    !store_session_id_ok(str(r->rvn), STORE_ID_MAX, false)) {
		snprintf(w->message, sizeof(w->message),
			 "lock owner or rvn not 1..%d printable bytes", STORE_ID_MAX);
		return LT_SW_IDLE;
	}
	if (str(r->session)[0] == '\0')
		return LT_SW_PER_LEASE;
	if (!key_ok(r->session)) {
		snprintf(w->message, sizeof(w->message),
			 "lock session not SESSION#<replica>#<%d hex>", STORE_SESSION_INC_LEN);
		return LT_SW_IDLE;
	}
	if (!lease_ok(r->slease_ms)) {
		snprintf(w->message, sizeof(w->message), "lock sleaseMs %lld outside %lld..%lld",
			 (long long)r->slease_ms, LT_MIN_LEASE_MS, LT_MAX_LEASE_MS);
		return LT_SW_IDLE;
	}
	return session_state(w, r);
}

void lt_swatch_init(struct lt_swatch *w)
{
	memset(w, 0, sizeof(*w));
	w->state = LT_SW_IDLE;
	w->last_ms = -1;
}

/* The watch starts again from r, which shows state s. */
static unsigned restart_all(struct lt_swatch *w, const struct lt_swatch_read *r,
			    enum lt_swatch_state s)
{
	unsigned why = 0;
	if (w->state == LT_SW_IDLE)
		why = LT_SWATCH_RS_FIRST;
	else if (s == LT_SW_FREE)
		why = LT_SWATCH_RS_FREE;
	else {
		if (strcmp(w->owner, str(r->owner)) != 0)
			why |= LT_SWATCH_RS_OWNER;
		if (strcmp(w->session, str(r->session)) != 0)
			why |= LT_SWATCH_RS_SESSION;
	}
	bool held = s != LT_SW_FREE;
	snprintf(w->owner, sizeof(w->owner), "%s", held ? str(r->owner) : "");
	snprintf(w->session, sizeof(w->session), "%s", held ? str(r->session) : "");
	snprintf(w->rvn, sizeof(w->rvn), "%s", held ? str(r->rvn) : "");
	w->rvn_since = w->sess_since = r->returned_ms;
	w->lease_ms = 0;
	w->sess_rvn[0] = '\0';
	return why;
}

/* The same owner and session: the counts r changes start again. */
static unsigned restart_counts(struct lt_swatch *w, const struct lt_swatch_read *r,
			       enum lt_swatch_state s)
{
	unsigned why = 0;
	if (strcmp(w->rvn, r->rvn) != 0) {
		why |= LT_SWATCH_RS_LOCK_RVN;
		snprintf(w->rvn, sizeof(w->rvn), "%s", r->rvn);
		w->rvn_since = r->returned_ms;
	}
	enum sess_kind from = kind_of(w->state), to = kind_of(s);
	unsigned sw = sess_moves[from][to];
	if (from == SK_LIVE && to == SK_LIVE && strcmp(w->sess_rvn, r->sess.rvn) != 0)
		sw = LT_SWATCH_RS_SESS_RVN;
	if (sw != 0)
		w->sess_since = r->returned_ms;
	return why | sw;
}

/* Whether w's counts that `need` asks for covered the lease at now. */
static bool covered(const struct lt_swatch *w, enum need need, int64_t now)
{
	bool lock = now - w->rvn_since >= w->lease_ms;
	bool sess = now - w->sess_since >= w->lease_ms;
	switch (need) {
	case NEED_SESS:
		return sess;
	case NEED_LOCK:
		return lock;
	case NEED_BOTH:
		return lock && sess;
	case NEED_NONE:
		break;
	}
	return false;
}

static enum lt_swatch_verdict answer(struct lt_swatch *w, enum lt_swatch_verdict v,
				     enum lt_swatch_check check, struct lt_swatch_out *out)
{
	if (out == NULL)
		return v;
	bool cond = v == LT_SWATCH_KILL || v == LT_SWATCH_TAKEOVER_TX || v == LT_SWATCH_TAKEOVER;
	*out = (struct lt_swatch_out){
		.verdict = v,
		.check = cond ? check : LT_SWATCH_CHECK_NONE,
		.owner = cond ? w->owner : NULL,
		.rvn = cond ? w->rvn : NULL,
		.session = cond ? w->session : NULL,
		.session_rvn = cond && check == LT_SWATCH_CHECK_RVN ? w->sess_rvn : NULL,
		.lease_ms = w->lease_ms,
		.message = v == LT_SWATCH_BAD ? w->message : NULL,
	};
	return v;
}

/* Notes what r shows, in state s (not IDLE): counts restarted, the
 * largest lease, the session's rvn. */
static void note(struct lt_swatch *w, const struct lt_swatch_read *r, enum lt_swatch_state s)
{
	bool same = w->state != LT_SW_IDLE && w->state != LT_SW_FREE && s != LT_SW_FREE &&
		    strcmp(w->owner, r->owner) == 0 && strcmp(w->session, str(r->session)) == 0;
	w->restarted = same ? restart_counts(w, r, s) : restart_all(w, r, s);
	if (same && s == LT_SW_LIVE && w->state == LT_SW_KILL_OFFERED &&
	    !(w->restarted & LT_SWATCH_RS_SESS_RVN))
		s = LT_SW_KILL_OFFERED; /* the kill stays offered while its rvn stands */
	if (s != LT_SW_FREE && s != LT_SW_PER_LEASE && r->slease_ms > w->lease_ms)
		w->lease_ms = r->slease_ms;
	if (s == LT_SW_LIVE || s == LT_SW_KILL_OFFERED || s == LT_SW_DEAD) {
		if (r->sess.max_lease_ms > w->lease_ms)
			w->lease_ms = r->sess.max_lease_ms;
		snprintf(w->sess_rvn, sizeof(w->sess_rvn), "%s", r->sess.rvn);
	} else {
		w->sess_rvn[0] = '\0';
	}
	w->last_ms = r->returned_ms;
	move(w, s);
}

enum lt_swatch_verdict lt_swatch_feed(struct lt_swatch *w, const struct lt_swatch_read *r,
				      struct lt_swatch_out *out)
{
	if (!r->counted)
		return answer(w, LT_SWATCH_WAIT, LT_SWATCH_CHECK_NONE, out);
	enum lt_swatch_state s = classify(w, r);
	if (s == LT_SW_IDLE) {
		int64_t last = w->last_ms;
		char msg[sizeof(w->message)];
		memcpy(msg, w->message, sizeof(msg));
		lt_swatch_init(w);
		w->last_ms = last;
		memcpy(w->message, msg, sizeof(msg));
		return answer(w, LT_SWATCH_BAD, LT_SWATCH_CHECK_NONE, out);
	}
	note(w, r, s);
	const struct judge *j = &judges[w->state];
	if (j->need == NEED_NONE || !covered(w, j->need, r->returned_ms))
		return answer(w, j->verdict, LT_SWATCH_CHECK_NONE, out);
	move(w, j->then);
	return answer(w, j->due, j->check, out);
}

int64_t lt_swatch_poll_ms(const struct lt_swatch *w, int64_t now_ms)
{
	const struct judge *j = &judges[w->state];
	if (w->state == LT_SW_IDLE || w->state == LT_SW_UNREAD || w->lease_ms <= 0)
		return 0;
	int64_t d = lt_poll_interval(w->lease_ms);
	if (j->need == NEED_NONE)
		return d;
	int64_t since = j->need == NEED_SESS	       ? w->sess_since
			: j->need == NEED_LOCK	       ? w->rvn_since
			: w->rvn_since > w->sess_since ? w->rvn_since
						       : w->sess_since;
	int64_t left = since + w->lease_ms - now_ms;
	if (left < d)
		d = left;
	return d > 0 ? d : 0;
}
