/*
 * lease: one lease held by this process — its heartbeat, explicit renewals,
 * loss and its reason, release, and the fencing check.
 *
 * The lease runs from the send time of the write that won it; the heartbeat
 * renews a third of the lease after the send time of the last renewal that
 * succeeded; a failed renewal is tried again after 100 ms, doubling up to a
 * sixth of the lease, until one succeeds or end_timer finds the lease out.
 *
 * LT_HEARTBEAT_REPLICA (lease.in_session): no heartbeat and no end timer
 * of its own; the lease is a member of the replica's session
 * (core/lt_session.h), whose beats keep it and which says when it ends
 * and why. Its writes (acquire, explicit renewal) name the session; a
 * lease lost so (expired, its session ended) has its item released,
 * conditioned on its owner (lt_replica.c): nobody would take over an item
 * naming a session that still beats.
 */
#include "core/lease.h"
#include "core/lt_shared.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An explicit renewal or a fencing check in flight. */
struct lt_op {
	struct lt_op *prev, *next; /* in its lease's ops or t->orphans */
	struct locktable *t;
	struct lease *lease; /* NULL once orphaned: then in t->orphans */
	struct store_call *call;
	lt_renew_cb cb;
	void *arg;
	int64_t send_ms;
	int value;		 /* what an orphan answers: 0 ended, 1 released */
	int again;		 /* renewals sent again (renew_again) */
	struct timer timer;	 /* answers value for a lease already gone */
	struct trace_span *span; /* a client's renewal (Lock.Renew), or NULL */
	char rvn[LT_ID_LEN + 1];
};

/* A lock cycle creates and frees a lease: they come from a pool, one for
 * each size (lease_bytes). */
static struct pool lease_pool = POOL_INIT(sizeof(struct lease), 4096);
static struct pool member_pool = POOL_INIT(LEASE_MEMBER_BYTES, 4096);

size_t lease_bytes(const struct lease *l)
{
	return l->in_session ? LEASE_MEMBER_BYTES : sizeof(*l);
}

/* A zeroed lease, with its beat unless it joins session sess_gen. */
static struct lease *lease_alloc(uint32_t sess_gen)
{
	if (sess_gen != 0)
		return pool_get(&member_pool, LEASE_MEMBER_BYTES);
	return pool_get(&lease_pool, sizeof(struct lease));
}

/* Gives l's block back to the pool it came from, and frees its secret. */
static void lease_dealloc(struct lease *l)
{
	free(l->secret_hash);
	pool_put(l->in_session ? &member_pool : &lease_pool, l, lease_bytes(l));
}

/* l's secret hash, copied out of line: "" (or NULL) is none. false: out
 * of memory. */
static bool set_secret(struct lease *l, const char *hash)
{
	if (hash == NULL || hash[0] == '\0')
		return true;
	l->secret_hash = strdup(hash);
	return l->secret_hash != NULL;
}

/* A zeroed lease (as lease_alloc) with its secret hash (set_secret), or
 * NULL when out of memory. */
static struct lease *lease_new(uint32_t sess_gen, const char *secret_hash)
{
	struct lease *l = lease_alloc(sess_gen);
	if (l == NULL)
		return NULL;
	l->in_session = sess_gen != 0; /* lease_bytes: the pool it came from */
	if (!set_secret(l, secret_hash)) {
		lease_dealloc(l);
		return NULL;
	}
	return l;
}

static void heartbeat(void *arg);
static void end_due(void *arg);

/* allowed[from] has bit `to` set when from -> to is a legal move (see the
 * diagram in lease.h). */
#define BIT(s) (1u << (s))
static const unsigned allowed[LEASE_STATE_COUNT] = {
	[LEASE_NEW] = BIT(LEASE_HELD) | BIT(LEASE_LOST),
	[LEASE_HELD] =
		BIT(LEASE_LOST) | BIT(LEASE_RELEASING) | BIT(LEASE_YIELDING) | BIT(LEASE_ENDED),
	[LEASE_LOST] = BIT(LEASE_ENDED),
	[LEASE_RELEASING] = BIT(LEASE_ENDED),
	[LEASE_YIELDING] = BIT(LEASE_ENDED),
	[LEASE_ENDED] = 0,
};

static const char *move_name(enum lease_state from, enum lease_state to)
{
	static const char *const names[LEASE_STATE_COUNT] = {"new",	  "held",     "lost",
							     "releasing", "yielding", "ended"};
	static char buf[64];
	snprintf(buf, sizeof(buf), "lease %s -> %s",
		 (unsigned)from < LEASE_STATE_COUNT ? names[from] : "?",
		 (unsigned)to < LEASE_STATE_COUNT ? names[to] : "?");
	return buf;
}

void lease_set_state(struct lease *l, enum lease_state to)
{
	LG_ASSERT_MSG((unsigned)l->state < LEASE_STATE_COUNT && (allowed[l->state] & BIT(to)),
		      move_name(l->state, to));
	l->state = to;
}

static void emit(struct lease *l, enum obs_event_id id, const char *reason,
		 const struct lt_error *err, int64_t wait_ms)
{
	struct obs_event ev = {
		.id = id,
		.lock = l->lock->name,
		.table = l->t->store->table,
		.holder = l->holder,
		.reason = reason,
		.error_type = err != NULL ? err->error_type : NULL,
		.message = err != NULL ? err->message : NULL,
		.token = l->token,
		.wait_ms = wait_ms,
		.ctx = l->data,
	};
	obs_emit(l->t->obs, &ev);
}

static void link_lease(struct lease *l)
{
	struct locktable *t = l->t;
	l->next = t->leases;
	if (t->leases != NULL)
		t->leases->prev = l;
	t->leases = l;
	t->nleases++;
}

static void unlink_lease(struct lease *l)
{
	struct locktable *t = l->t;
	lt_sweep_unlinked(lt_sweep_of(t), l);
	if (l->prev != NULL)
		l->prev->next = l->next;
	else
		t->leases = l->next;
	if (l->next != NULL)
		l->next->prev = l->prev;
	t->nleases--;
}

/* Pushes op on the list at *head. Both lists are doubly linked: the
 * releases of 100,000 leases (a connection closing, a shutdown) answer
 * through as many orphans, each unlinked in turn. */
static void op_push(struct lt_op **head, struct lt_op *op)
{
	op->prev = NULL;
	op->next = *head;
	if (*head != NULL)
		(*head)->prev = op;
	*head = op;
}

static void drop_ops(struct lease *l)
{
	while (l->ops != NULL) {
		struct lt_op *op = l->ops;
		l->ops = op->next;
		store_cancel(l->t->store, op->call);
		timer_cancel(&op->timer);
		trace_finish(&op->span, "cancelled");
		free(op);
	}
}

/* The lease goes: its pending operations answer 0 (ended) from the loop. */
static void orphan_ops(struct lease *l)
{
	while (l->ops != NULL) {
		struct lt_op *op = l->ops;
		l->ops = op->next;
		store_cancel(l->t->store, op->call);
		trace_finish(&op->span, "the lease ended");
		op->call = NULL;
		op->lease = NULL;
		op_push(&l->t->orphans, op);
		timer_arm(&op->timer, 0);
	}
}

/* A renewal or release span of the lease: the root of a trace of its
 * own, linked to the acquire's (a heartbeat outlives its acquire's trace). */
static struct trace_span *lease_span(struct lease *l, const char *name)
{
	if (l->t->tracer == NULL) /* tracing off: not even the calls */
		return NULL;
	struct trace_span *s = trace_start(l->t->tracer, name, TRACE_INTERNAL, NULL);
	trace_link(s, &l->acq_ctx);
	trace_str(s, "leasegate.lock.name", l->lock->name);
	trace_str(s, "db.collection.name", l->t->store->table);
	trace_int(s, "leasegate.lock.fencing_token", l->token);
	return s;
}

/* Ends the span of hb_call, failed with why unless why is NULL. */
static void end_hb_span(struct lease *l, const char *why)
{
	trace_finish(&l->hb_span, why);
}

/* l's end is no longer watched: its timers cancelled, or it leaves its
 * session. */
static void stop_clock(struct lease *l)
{
	if (l->in_session) {
		lt_member_leave(&l->member);
		return;
	}
	timer_cancel(&l->beat.hb_timer);
	timer_cancel(&l->beat.end_timer);
}

static void lease_destroy(struct lease *l)
{
	struct lock *lock = l->lock;
	end_hb_span(l, l->hb_call != NULL ? "cancelled" : NULL);
	stop_clock(l);
	store_cancel(l->t->store, l->hb_call);
	drop_ops(l);
	if (lock->held == l)
		lock->held = NULL;
	if (lock->releasing == l)
		lock->releasing = NULL;
	lease_set_state(l, LEASE_ENDED);
	unlink_lease(l);
	lt_holder_free(l->t, l->holder);
	lease_dealloc(l);
	lt_lock_unref(lock);
}

static void schedule_heartbeat(struct lease *l)
{
	timer_arm_at(&l->beat.hb_timer, l->last_send_ms + l->lease_ms / 3);
}

static void lose(struct lease *l, enum lt_loss reason, const struct lock_item *item);

/* A write sent at send_ms succeeded: the lease runs to send_ms + lease (a
 * member: rejoins its session with that send, leaving its end no earlier).
 * false: l was lost (a member whose end had come). */
static bool extend(struct lease *l, int64_t send_ms, const char *rvn)
{
	if (send_ms < l->last_send_ms)
		return true;
	l->last_send_ms = send_ms;
	memcpy(l->rvn, rvn, sizeof(l->rvn));
	if (!l->in_session) {
		timer_arm_at(&l->beat.end_timer, send_ms + l->lease_ms);
		return true;
	}
	if (l->state != LEASE_HELD)
		return false;
	lt_member_leave(&l->member);
	enum lt_join j = lt_replica_join(l->t, l->sess_gen, &l->member, l->lease_ms, send_ms);
	if (j == LT_JOIN_OK)
		return true;
	lose(l, j == LT_JOIN_EXPIRED ? LT_EXPIRED : LT_SESSION, NULL);
	return false;
}

/* A lease lost in session mode for reason: its item may still name a
 * session that beats, so it is released (conditioned on its owner, its
 * session and its rvn) unless it is another's, in another form, or gone
 * already. Expired, at once: its end came. Lost to its session's end,
 * at end_ms, the latest its end may be on the holder's clock: its client
 * may act on it until then, not yet told, and waiters elsewhere wait for
 * its item's rvn to stand still a lease, dead session or not (stress
 * seed 396990: released at once, the lock went to another client of this
 * replica 130 ms after it was granted to the lost one). */
static void release_if_orphan(struct lease *l, enum lt_loss reason, int64_t end_ms)
{
	if (l->in_session && (reason == LT_EXPIRED || reason == LT_SESSION))
		lt_replica_release_lost(l->lock, l->owner, l->rvn,
					lt_replica_key_any(l->t, l->sess_gen),
					reason == LT_SESSION ? end_ms : 0);
}

/* The lease is lost for reason; item is the refusing item, if any. */
static void lose(struct lease *l, enum lt_loss reason, const struct lock_item *item)
{
	struct lock *lock = l->lock;
	if (l->state != LEASE_HELD)
		return; /* lost already, or its release is in flight */
	lease_set_state(l, LEASE_LOST);
	l->loss = reason;
	stop_clock(l);
	store_cancel(l->t->store, l->hb_call);
	trace_str(l->hb_span, "leasegate.lock.loss_reason", lt_loss_name(reason));
	end_hb_span(l, "the lease was lost");
	l->hb_call = NULL;
	if (lock->held == l)
		lock->held = NULL;
	if (item != NULL && item->exists)
		lt_lock_see(lock, item);
	if (reason != LT_RELEASED && reason != LT_ADOPTED) { /* ended from outside: no loss */
		emit(l, OBS_LEASE_LOST, lt_loss_name(reason), NULL, 0);
		obs_count(&l->t->obs->losses, lt_loss_name(reason));
	}
	/* a member's end is at most a lease after the send of its session's
	 * last beat answered, sent before now */
	release_if_orphan(l, reason, clock_now_ms(l->t->clock) + l->lease_ms);
	lock->refs++; /* the callback may release l */
	if (l->on_lost != NULL)
		l->on_lost(l->on_lost_arg, l, reason);
	lt_lock_kick(lock);
	lt_lock_unref(lock);
}

static void end_due(void *arg)
{
	lose(arg, LT_EXPIRED, NULL);
}

void lease_member_lost(struct lt_member *m, enum lt_loss why)
{
	struct lease *l = (struct lease *)((char *)m - offsetof(struct lease, member));
	lose(l, why, NULL);
}

/* A lease won, then found ended before it began (answered after a whole
 * lease, or its session ended): LOST for why, nothing held. */
static struct lease *lost_at_start(struct lease *l, enum lt_loss why)
{
	lease_set_state(l, LEASE_LOST);
	l->loss = why;
	emit(l, OBS_LEASE_LOST, lt_loss_name(why), NULL, 0);
	obs_count(&l->t->obs->losses, lt_loss_name(why));
	release_if_orphan(l, why, l->last_send_ms + l->lease_ms); /* its own end */
	return l;
}

/* A lease of lock held from send_ms (lease_start, lease_adopted): l's
 * fields are set; links it, and counts and arms it. */
static struct lease *begin(struct lease *l, const struct lock_item *item, bool handoff)
{
	struct locktable *t = l->t;
	static const struct lock_item none; /* not zeroed per lease: ~0.5 KB */
	lt_lock_see(l->lock, &none);	    /* we hold it: forget the holder seen */
	int64_t now_ms = clock_now_ms(t->clock);
	int64_t left = l->last_send_ms + l->lease_ms - now_ms;
	if (l->in_session) {
		/* its end is the session's: answered after it (EXPIRED), or
		 * naming a session that ended (ENDED), it has ended already */
		enum lt_join j =
			lt_replica_join(t, l->sess_gen, &l->member, l->lease_ms, l->last_send_ms);
		if (j != LT_JOIN_OK)
			return lost_at_start(l, j == LT_JOIN_EXPIRED ? LT_EXPIRED : LT_SESSION);
	} else if (left <= 0) {
		/* Answered after a whole lease: the lease has ended already. */
		return lost_at_start(l, LT_EXPIRED);
	}
	lease_set_state(l, LEASE_HELD);
	l->lock->held = l;
	if (!handoff) /* the lock came from the store: a new turn here */
		l->lock->turn_start = now_ms;
	lt_holder_saw(l->lock, item);
	/* end_timer waits for the first heartbeat, due before it: a lease
	 * released sooner (a lock cycle) arms and cancels one timer, not two */
	if (!l->in_session)
		schedule_heartbeat(l);
	return l;
}

/* A lease's own timers, unless its session keeps it. */
static void init_clock(struct lease *l, uint32_t sess_gen)
{
	l->in_session = sess_gen != 0;
	l->sess_gen = sess_gen;
	if (l->in_session)
		return; /* l->member: zeroed by pool_get, not a member */
	timer_init(&l->beat.hb_timer, l->t->clock, heartbeat, l);
	timer_init(&l->beat.end_timer, l->t->clock, end_due, l);
}

struct lease *lease_adopted(struct lock *lock, const struct lock_item *item, const char *owner,
			    const char *rvn, const char *secret_hash, int64_t lease_ms,
			    int64_t send_ms, char *holder, uint32_t sess_gen)
{
	struct locktable *t = lock->t;
	struct lease *l = lease_new(sess_gen, secret_hash);
	if (l == NULL)
		return NULL;
	l->t = t;
	l->lock = lock;
	l->holder = holder;
	l->token = item->fence;
	l->lease_ms = lease_ms;
	l->last_send_ms = send_ms;
	snprintf(l->owner, sizeof(l->owner), "%s", owner);
	snprintf(l->rvn, sizeof(l->rvn), "%s", rvn);
	init_clock(l, sess_gen);
	lock->refs++;
	link_lease(l);
	return begin(l, item, false);
}

struct lease *lease_start(struct lt_wait *w, const struct lock_item *item)
{
	struct locktable *t = w->t;
	struct lease *l = lease_new(w->sess_gen, w->secret_hash);
	if (l == NULL)
		return NULL;
	l->t = t;
	l->lock = w->lock;
	l->holder = w->holder; /* the wait's label passes to the lease */
	w->holder = NULL;
	l->token = item->fence;
	l->lease_ms = w->lease_ms;
	l->last_send_ms = w->send_ms;
	l->takeover = w->takeover;
	memcpy(l->owner, w->owner, sizeof(l->owner));
	memcpy(l->rvn, w->rvn, sizeof(l->rvn));
	init_clock(l, w->sess_gen);
	w->lock->refs++;
	link_lease(l);
	t->obs->acquisitions[l->takeover ? 1 : 0]++;
	if (l->takeover) {
		struct obs_event ev = {
			.id = OBS_TAKEOVER,
			.lock = l->lock->name,
			.table = t->store->table,
			.holder = l->holder,
			.prev_holder = w->lock->seen != NULL ? w->lock->seen->holder : NULL,
			.token = l->token,
			.ctx = l->data,
		};
		obs_emit(t->obs, &ev);
	}
	return begin(l, item, w->handoff);
}

/* Sends a renewal with a new rvn, conditioned on the rvn the lease last
 * wrote (RENEW in store.h: an older attempt never puts its rvn back);
 * returns the call or NULL. */
static struct store_call *send_renew(struct lease *l, char *rvn, int64_t *send_ms, store_cb cb,
				     void *arg, struct trace_span *span)
{
	store_new_id(rvn);
	struct store_req req = {
		.op = STORE_RENEW,
		.name = l->lock->name,
		.name_hash = l->lock->hash,
		.owner = l->owner,
		.rvn = rvn,
		.seen_rvn = l->rvn,
		.holder = l->holder,
		.lease_ms = l->lease_ms,
		.ttl = lt_ttl(l->t),
		.span = span,
		.session = l->in_session ? lt_replica_key_of(l->t, l->sess_gen) : NULL,
	};
	if (l->in_session && req.session == NULL)
		return NULL; /* its session ended: lost, or about to be */
	*send_ms = clock_now_ms(l->t->clock);
	return store_submit(l->t->store, &req, cb, arg);
}

/* Why a renewal was refused with item: released from outside the lease's
 * session (its freed marker names this lease: by token, or by force), the
 * item gone, or taken over. */
static enum lt_loss refusal_loss(const struct lease *l, const struct lock_item *item)
{
	if (item->exists && strcmp(item->adopted_from, l->owner) == 0)
		return LT_ADOPTED;
	if (item->exists && item->freed == l->token)
		return item->freed_forced ? LT_FORCED : LT_RELEASED;
	return item->exists ? LT_TAKEN_OVER : LT_DELETED;
}

/* The send time of this lease's renewal in flight that wrote rvn: the
 * heartbeat's or an explicit one's. */
static bool renewal_in_flight(const struct lease *l, const char *rvn, int64_t *send_ms)
{
	if (!l->in_session && l->hb_call != NULL && l->state == LEASE_HELD &&
	    strcmp(l->beat.hb_rvn, rvn) == 0) {
		*send_ms = l->beat.hb_send_ms;
		return true;
	}
	for (const struct lt_op *op = l->ops; op != NULL; op = op->next)
		if (op->call != NULL && strcmp(op->rvn, rvn) == 0) {
			*send_ms = op->send_ms;
			return true;
		}
	return false;
}

/* A renewal refused by an item that still shows this lease's owner: a
 * write of this lease that the renewal was not conditioned on is there
 * (renewals are conditioned on the rvn last written, RENEW in store.h).
 * Not a loss. Returns 1 when that write is known (the rvn last written,
 * or a renewal in flight, which the item shows applied: the lease runs
 * from its send), RENEW_AGAIN when it is not (a renewal whose answer was
 * lost, one by token from another replica): the lease takes its rvn,
 * keeps its end, and renews again at once. */
#define RENEW_AGAIN 2
static int own_refusal(struct lease *l, const struct lock_item *item)
{
	int64_t send_ms;
	if (strcmp(item->rvn, l->rvn) == 0)
		return 1;
	if (renewal_in_flight(l, item->rvn, &send_ms))
		return extend(l, send_ms, item->rvn) ? 1 : 0;
	size_t n = strlen(item->rvn);
	if (n == 0 || n > LT_ID_LEN) { /* no rvn a lease of ours writes */
		lose(l, LT_TAKEN_OVER, item);
		return 0;
	}
	memcpy(l->rvn, item->rvn, n + 1);
	return RENEW_AGAIN;
}

/* What a renewal's answer means for the lease. Returns 1 renewed, 0 lost,
 * RENEW_AGAIN (see own_refusal), -1 an error that leaves the lease to the
 * heartbeat (err filled). */
static int renewal_result(struct lease *l, int64_t send_ms, const char *rvn,
			  const struct store_result *res, struct lt_error *err)
{
	switch (res->status) {
	case STORE_OK:
		obs_count(&l->t->obs->renewals, "ok");
		if (!extend(l, send_ms, rvn))
			return 0; /* a member answered after its end: lost */
		if (l->lock->held == l)
			lt_holder_saw(l->lock, &res->item);
		return 1;
	case STORE_REFUSED:
		if (res->item.has_owner && strcmp(res->item.owner, l->owner) == 0)
			return own_refusal(l, &res->item);
		lose(l, refusal_loss(l, &res->item), &res->item);
		return 0;
	case STORE_NO_TABLE:
		lose(l, LT_TABLE_NOT_FOUND, NULL);
		return 0;
	default:
		lt_error_from(err, l->t, l->lock->name, res);
		obs_count(&l->t->obs->renewals, err->error_type);
		return -1;
	}
}

static void on_heartbeat(void *arg, const struct store_result *res)
{
	struct lease *l = arg;
	struct lt_error err;
	l->hb_call = NULL;
	int r = renewal_result(l, l->beat.hb_send_ms, l->beat.hb_rvn, res, &err);
	if (r == 0)
		return; /* lost: lose() ended the span, and its callback may free l */
	trace_bool(l->hb_span, "leasegate.lock.renewed", r == 1);
	end_hb_span(l, r < 0 ? err.message : NULL);
	if (r == RENEW_AGAIN) {
		timer_arm(&l->beat.hb_timer, 0); /* on the rvn the item shows, from the loop */
	} else if (r == 1) {
		l->beat.retry_ms = 0;
		schedule_heartbeat(l);
	} else if (r < 0) {
		l->beat.retry_ms =
			l->beat.retry_ms == 0 ? LT_RENEW_RETRY_FIRST_MS : 2 * l->beat.retry_ms;
		if (l->beat.retry_ms > l->lease_ms / 6)
			l->beat.retry_ms = l->lease_ms / 6;
		if (clock_now_ms(l->t->clock) + l->beat.retry_ms >= lease_end_ms(l))
			return; /* no time for another: end_timer ends the lease */
		emit(l, OBS_RENEW_RETRY, NULL, &err, l->beat.retry_ms);
		timer_arm(&l->beat.hb_timer, l->beat.retry_ms);
	}
}

static void heartbeat(void *arg)
{
	struct lease *l = arg;
	if (!timer_armed(&l->beat.end_timer)) /* the first heartbeat (lease_start) */
		timer_arm_at(&l->beat.end_timer, lease_end_ms(l));
	if (l->hb_call != NULL)
		return;
	if (clock_now_ms(l->t->clock) >= lease_end_ms(l)) {
		/* The loop stalled past the lease's end: it is lost, and a
		 * renewal now could write a new rvn on a lock nobody holds,
		 * making waiters elsewhere wait another whole lease. */
		lose(l, LT_EXPIRED, NULL);
		return;
	}
	l->hb_span = lease_span(l, "Lock.Renew");
	l->hb_call =
		send_renew(l, l->beat.hb_rvn, &l->beat.hb_send_ms, on_heartbeat, l, l->hb_span);
	if (l->hb_call == NULL) { /* out of memory: try again soon */
		end_hb_span(l, "out of memory");
		timer_arm(&l->beat.hb_timer, LT_RENEW_RETRY_FIRST_MS);
	}
}

static void op_unlink(struct lt_op *op)
{
	struct lt_op **head = op->lease != NULL ? &op->lease->ops : &op->t->orphans;
	if (op->prev != NULL)
		op->prev->next = op->next;
	else
		*head = op->next;
	if (op->next != NULL)
		op->next->prev = op->prev;
}

static void on_explicit_renew(void *arg, const struct store_result *res);

/* An explicit renewal refused by an unknown write of its own lease
 * (own_refusal) is sent again, at most LT_RENEW_AGAIN_MAX times; then it
 * answers an error (the heartbeat goes on). false: not sent, *op as it
 * was. */
#define LT_RENEW_AGAIN_MAX 2
static bool renew_again(struct lt_op *op)
{
	struct lease *l = op->lease;
	if (op->again >= LT_RENEW_AGAIN_MAX)
		return false;
	op->call = send_renew(l, op->rvn, &op->send_ms, on_explicit_renew, op, op->span);
	if (op->call == NULL)
		return false;
	op->again++;
	op_push(&l->ops, op);
	return true;
}

static void on_explicit_renew(void *arg, const struct store_result *res)
{
	struct lt_op *op = arg;
	struct lease *l = op->lease;
	struct lt_error err;
	lt_renew_cb cb = op->cb;
	void *cb_arg = op->arg;

	op_unlink(op);
	int r = renewal_result(l, op->send_ms, op->rvn, res, &err);
	if (r == RENEW_AGAIN && renew_again(op))
		return;		/* sent again on the rvn the item shows */
	if (r == RENEW_AGAIN) { /* not sent again */
		err = (struct lt_error){.status = STORE_TRANSIENT, .error_type = "ItemChanged"};
		snprintf(err.message, sizeof(err.message),
			 "the lock item changed under this lease while it renewed (lock '%.64s', "
			 "table '%s'): the heartbeat renews it",
			 l->lock->name, l->t->store->table);
		r = -1;
	}
	/* lost (r == 0): lose()'s callback may have freed l, not op */
	trace_bool(op->span, "leasegate.lock.renewed", r == 1);
	trace_finish(&op->span, r < 0 ? err.message : r == 0 ? "the lease was lost" : NULL);
	free(op);
	if (r == 1 && l->hb_call == NULL && !l->in_session) {
		l->beat.retry_ms = 0;
		schedule_heartbeat(l);
	}
	cb(cb_arg, r < 0 ? -1 : r, r < 0 ? &err : NULL);
}

/* The answer of a fencing check, or of an orphan mark: 1 OK, 0 refused
 * (another owner, or token), else the error. */
static void on_check(void *arg, const struct store_result *res)
{
	struct lt_op *op = arg;
	struct lease *l = op->lease;
	struct lt_error err;
	lt_renew_cb cb = op->cb;
	void *cb_arg = op->arg;

	op_unlink(op);
	free(op);
	if (res->status == STORE_OK || res->status == STORE_REFUSED) {
		cb(cb_arg, res->status == STORE_OK, NULL);
		return;
	}
	lt_error_from(&err, l->t, l->lock->name, res);
	cb(cb_arg, -1, &err);
}

static void op_ended(void *arg)
{
	struct lt_op *op = arg;
	lt_renew_cb cb = op->cb;
	void *cb_arg = op->arg;
	int value = op->value;
	op_unlink(op);
	free(op);
	cb(cb_arg, value, NULL);
}

static struct lt_op *op_new(struct lease *l, lt_renew_cb cb, void *arg)
{
	struct lt_op *op = calloc(1, sizeof(*op));
	if (op == NULL)
		return NULL;
	op->lease = l;
	op->t = l->t;
	op->cb = cb;
	op->arg = arg;
	timer_init(&op->timer, l->t->clock, op_ended, op);
	op_push(&l->ops, op);
	return op;
}

static bool op_fail(struct lt_op *op)
{
	op_unlink(op);
	trace_finish(&op->span, "out of memory");
	free(op);
	return false;
}

bool lease_renew(struct lease *l, lt_renew_cb cb, void *arg)
{
	struct lt_op *op = op_new(l, cb, arg);
	if (op == NULL)
		return false;
	if (l->state != LEASE_HELD ||
	    (l->in_session && lt_replica_key_of(l->t, l->sess_gen) == NULL)) {
		timer_arm(&op->timer, 0); /* ended (a member of an ended session: soon) */
		return true;
	}
	op->span = lease_span(l, "Lock.Renew");
	op->call = send_renew(l, op->rvn, &op->send_ms, on_explicit_renew, op, op->span);
	return op->call != NULL || op_fail(op);
}

bool lease_check(struct lease *l, lt_renew_cb cb, void *arg)
{
	struct lt_op *op = op_new(l, cb, arg);
	if (op == NULL)
		return false;
	struct store_req req = {
		.op = STORE_CHECK, .name = l->lock->name, .owner = l->owner, .token = l->token};
	op->call = store_submit(l->t->store, &req, on_check, op);
	return op->call != NULL || op_fail(op);
}

bool lease_orphan(struct lease *l, lt_renew_cb cb, void *arg)
{
	struct lt_op *op = op_new(l, cb, arg);
	if (op == NULL)
		return false;
	if (l->state != LEASE_HELD) { /* ended: 0, from the loop */
		op->value = 0;
		timer_arm(&op->timer, 0);
		return true;
	}
	struct store_req req = {.op = STORE_ORPHAN, .name = l->lock->name, .owner = l->owner};
	op->call = store_submit(l->t->store, &req, on_check, op); /* 1 marked, 0 another's */
	return op->call != NULL || op_fail(op);
}

/* Answers the callback of lease_release_then() with value, from the loop. */
static void release_answer(struct lease *l, int value)
{
	if (l->release_cb == NULL)
		return;
	struct lt_op *op = calloc(1, sizeof(*op));
	if (op == NULL)
		return; /* out of memory: the caller is not answered */
	op->t = l->t;
	op->cb = l->release_cb;
	op->arg = l->release_arg;
	op->value = value;
	timer_init(&op->timer, l->t->clock, op_ended, op);
	op_push(&l->t->orphans, op);
	timer_arm(&op->timer, 0);
	l->release_cb = NULL;
}

static void on_released(void *arg, const struct store_result *res)
{
	struct lease *l = arg;
	struct lock *lock = l->lock;
	lt_renew_cb cb = l->release_cb;
	void *cb_arg = l->release_arg;
	l->hb_call = NULL;
	l->t->releases_in_flight--;
	end_hb_span(l,
		    res->status == STORE_OK || res->status == STORE_REFUSED ? NULL : res->message);
	if (lock->releasing == l)
		lock->releasing = NULL;
	if (l->state == LEASE_YIELDING)
		lt_yield_done(lock, res);
	/* Refused because a lease of ours took the lock over meanwhile (a new
	 * acquire overtook this release): nothing failed. */
	bool overtaken = res->status == STORE_REFUSED && lock->held != NULL &&
			 strcmp(res->item.owner, lock->held->owner) == 0;
	/* Refused by an item with no owner: released already, the lock free. */
	bool free_already = res->status == STORE_REFUSED && !res->item.has_owner;
	/* Refused by the adopter of this (orphaned) lease: it goes on there,
	 * which is what the release of an orphan at a drain's end wants. */
	bool adopted = res->status == STORE_REFUSED && res->item.exists &&
		       strcmp(res->item.adopted_from, l->owner) == 0;
	struct lt_error err;
	bool failed = res->status != STORE_OK && !overtaken && !free_already && !adopted;
	if (res->status != STORE_OK && !overtaken && !adopted) {
		lt_error_from(&err, l->t, lock->name, res);
		if (res->status == STORE_REFUSED)
			snprintf(err.message, sizeof(err.message),
				 "the lock is no longer held by this lease (lock '%.64s', table "
				 "'%s')",
				 lock->name, l->t->store->table);
		emit(l, OBS_RELEASE_FAILED, NULL, &err, 0);
	}
	lock->refs++;
	lease_destroy(l);
	lt_lock_kick(lock);
	if (res->status == STORE_OK) /* readers here: admitted now, or may be */
		lt_sh_kick(lock->t, lock->name);
	lt_lock_unref(lock);
	if (cb != NULL) /* a failure is answered: the lock is not free */
		cb(cb_arg, failed ? -1 : 1, failed ? &err : NULL);
}

void lease_release_then(struct lease *l, lt_renew_cb cb, void *arg)
{
	l->release_cb = cb;
	l->release_arg = arg;
	lease_release(l);
}

void lease_release(struct lease *l)
{
	struct lock *lock = l->lock;
	orphan_ops(l);
	l->on_lost = NULL;
	if (l->state != LEASE_HELD) {
		if (l->state == LEASE_LOST) {
			release_answer(l, 0);
			lease_destroy(l);
		}
		return; /* its release is in flight already */
	}
	stop_clock(l);
	store_cancel(l->t->store, l->hb_call);
	end_hb_span(l, l->hb_call != NULL ? "cancelled by the release" : NULL);
	l->hb_call = NULL;
	lock->held = NULL;
	if (lt_handoff(lock, l)) {
		release_answer(l, 1);
		lease_destroy(l);
		return;
	}
	/* released for another replica's turn, or for good */
	lease_set_state(l, lt_lock_yielding(lock) ? LEASE_YIELDING : LEASE_RELEASING);
	l->hb_span = lease_span(l, "Lock.Release");
	struct store_req req = {.op = STORE_RELEASE,
				.name = lock->name,
				.name_hash = lock->hash,
				.owner = l->owner,
				.ttl = lt_ttl(l->t),
				.span = l->hb_span};
	lock->releasing = l;
	l->hb_call = store_submit(l->t->store, &req, on_released, l);
	if (l->hb_call == NULL) {
		struct lt_error err = {.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
		snprintf(err.message, sizeof(err.message), "out of memory");
		emit(l, OBS_RELEASE_FAILED, NULL, &err, 0);
		release_answer(l, 1);
		lt_lock_set_state(lock, LOCK_OURS);
		lock->refs++;
		lease_destroy(l);
		lt_lock_kick(lock);
		lt_lock_unref(lock);
		return;
	}
	l->t->releases_in_flight++;
}

void lt_lease_lose(struct lease *l, enum lt_loss reason)
{
	lose(l, reason, NULL);
}

enum lt_loss lt_lease_refused(struct lease *l, const struct lock_item *item)
{
	if (l->state != LEASE_HELD)
		return l->loss;
	enum lt_loss reason = refusal_loss(l, item);
	lose(l, reason, item); /* its lost callback may free l (an election's does) */
	return reason;
}

int64_t lease_detach(struct lease *l)
{
	struct lock *lock = l->lock;
	int64_t token = l->token;
	orphan_ops(l);
	l->on_lost = NULL;
	lock->refs++;
	if (lock->held == l && l->state == LEASE_HELD) {
		/* From now on another's holder, seen since its write was sent:
		 * its lease ends then on this replica's clock too. */
		struct lock_item it = {
			.exists = true,
			.has_owner = true,
			.has_rvn = true,
			.has_lease = true,
			.has_fence = true,
			.fence = token,
			.lease_ms = l->lease_ms,
		};
		memcpy(it.owner, l->owner, sizeof(it.owner));
		memcpy(it.rvn, l->rvn, sizeof(l->rvn));
		memcpy(it.type, "LOCK", 5);
		if (l->holder != NULL)
			snprintf(it.holder, sizeof(it.holder), "%s", l->holder);
		lock->held = NULL;
		lt_lock_see(lock, &it);
		/* a member's end may be later than its last write's: counted
		 * from now, never earlier than the session kept it */
		if (lock->seen != NULL)
			lock->seen->at =
				l->in_session ? clock_now_ms(l->t->clock) : l->last_send_ms;
		if (l->in_session) /* back to per lease: its clients renew it */
			lt_replica_unsession(lock, l->owner, l->rvn, l->holder, l->lease_ms);
	}
	lease_destroy(l);
	lt_lock_kick(lock);
	lt_lock_unref(lock);
	return token;
}

void lease_free_all(struct locktable *t)
{
	while (t->leases != NULL) {
		struct lease *l = t->leases;
		if (lease_releasing(l))
			t->releases_in_flight--;
		stop_clock(l);
		store_cancel(t->store, l->hb_call);
		drop_ops(l);
		unlink_lease(l);
		lt_holder_free(t, l->holder);
		lease_dealloc(l); /* lt_free frees the locks */
	}
	while (t->orphans != NULL) {
		struct lt_op *op = t->orphans;
		t->orphans = op->next;
		timer_cancel(&op->timer);
		free(op);
	}
}

void lease_on_lost(struct lease *l, lt_lost_cb cb, void *arg)
{
	l->on_lost = cb;
	l->on_lost_arg = arg;
}

const char *lease_rvn(const struct lease *l)
{
	return l->rvn;
}
void lease_set_data(struct lease *l, void *data)
{
	l->data = data;
}
void *lease_data(const struct lease *l)
{
	return l->data;
}
const char *lease_name(const struct lease *l)
{
	return l->lock->name;
}
int64_t lease_token(const struct lease *l)
{
	return l->token;
}
int64_t lease_duration_ms(const struct lease *l)
{
	return l->lease_ms;
}
const char *lease_secret_hash(const struct lease *l)
{
	return l->secret_hash;
}

bool lt_secret_match(const char *stored, const char *presented)
{
	if (stored == NULL || presented == NULL || stored[0] == '\0' ||
	    strlen(stored) != STORE_SECRET_HASH_LEN || strlen(presented) != STORE_SECRET_HASH_LEN)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < STORE_SECRET_HASH_LEN; i++)
		diff |= (unsigned char)(stored[i] ^ presented[i]);
	return diff == 0;
}

const char *lease_holder(const struct lease *l)
{
	return l->holder;
}
const char *lease_owner(const struct lease *l)
{
	return l->owner;
}
bool lease_takeover(const struct lease *l)
{
	return l->takeover;
}
bool lease_held(const struct lease *l)
{
	/* The clock too: after a stall the end timer may not have run yet. */
	return l->state == LEASE_HELD && clock_now_ms(l->t->clock) < lease_end_ms(l);
}
enum lt_loss lease_loss(const struct lease *l)
{
	return l->loss;
}
int64_t lease_end_ms(const struct lease *l)
{
	if (l->in_session && lt_member_joined(&l->member))
		return lt_member_end_ms(&l->member); /* the holder's clock */
	return l->last_send_ms + l->lease_ms;
}
