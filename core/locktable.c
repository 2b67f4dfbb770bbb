/*
 * locktable: locks, acquires and the shared poll.
 *
 * Each lock runs a small machine driven by lt_lock_kick(): while a local
 * lease holds it, waits sit in its FIFO queue; otherwise the head of the
 * queue writes when the lock is believed free (never seen held), and the
 * queue shares one poll read, every third of the holder's lease (at most
 * LT_MAX_POLL_MS, sooner when the lease runs out first), until a read finds
 * it free or the same rvn has been seen for a whole lease on our clock.
 *
 * Leases, renewals and releases are in lease.c; the hash table of locks
 * and the holders seen in lt_lock.c.
 *
 * Fair across replicas. Local hand-offs write a new rvn each time, so a
 * waiter on another replica would never see the lock free nor the same rvn
 * for a lease. So a waiting replica announces itself on the item, and the
 * holding replica gives it a turn:
 *
 *  - Announce: when a poll finds the lock held by another owner, and the
 *    first of the answers that have found it held elsewhere since (a
 *    reservation goes on with such a streak but starts none) came at
 *    least one poll interval P = min(lease/3, 10 s) ago, and the item
 *    carries no announcement, the waiting replica writes `waiter` (its id
 *    for this wait) and `waiterMs` (its poll interval, which it then never
 *    exceeds) — ANNOUNCE in store.h, which leaves rvn, owner, fence and
 *    leaseMs alone, so takeover timing is untouched. One slot per lock: an
 *    announcement refused because another is there costs nothing more;
 *    the replica polls on and announces once the slot is free. A replica
 *    that waited through another's turn announces before the one that
 *    just yielded (whose streak starts when it reads the next holder), so
 *    turns go round the replicas. One announcement per turn waited for
 *    (and one withdrawal when its last waiter gives up): writes per wait,
 *    not per poll.
 *  - Yield: the holding replica learns of it from the answer of its next
 *    renewal or local hand-off (ALL_NEW). It hands on locally to the
 *    waiters queued at that moment (one round) and for at least half a
 *    poll interval of its turn (so that turns amortise the requests they
 *    cost), then releases to the store instead of handing on.
 *  - Reservation: a free item with a `waiter` is left to that waiter: the
 *    acquire of anyone else is refused (ACQUIRE's condition), and every
 *    other replica, the yielding one included, treats it as held by the
 *    reservation for LT_RESERVE_WINDOWS of the announced poll interval,
 *    counted on its own clock from its first sight of it, like a holder
 *    seen for a lease; then it may take it, removing the announcement (a
 *    waiter that crashed costs one window, not a lease). The announced
 *    waiter takes it at its next poll, within one poll interval.
 *
 * A waiter thus waits at most: one poll interval before it announces,
 * the holder's round (and the rest of its half poll interval), one poll
 * interval to read the release; with R replicas, one such turn per other
 * replica ahead of it: about (R - 1) x (round + 1.5 P) + 2 P in all
 * (tests/unit/test_fairness.c asserts it). A crashed holder never sees an
 * announcement and is taken over by rvn as before; a crashed announced
 * waiter costs one reservation window.
 */
#include "core/lease.h"
#include "core/lt_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Waits come from a pool: a lock cycle creates and frees one (and a
 * lock, lt_lock.c). */
static struct pool wait_pool = POOL_INIT(sizeof(struct lt_wait), 4096);

static void wait_timer(void *arg);
static void on_write(void *arg, const struct store_result *res);
static void on_try_read(void *arg, const struct store_result *res);
static void on_announce(void *arg, const struct store_result *res);
static void on_withdraw(void *arg, const struct store_result *res);
static void decide_queue(struct lock *l, const struct lock_item *item);
static void on_spoll(void *arg, const struct store_session_result *res);
static void on_kill(void *arg, const struct store_session_result *res);
static void on_try_sread(void *arg, const struct store_session_result *res);

/* --- waits --- */

/* allowed[from] has bit `to` set when from -> to is a legal move. A wait
 * that waits goes round QUEUED -> WRITING -> QUEUED while its writes are
 * refused; every wait is answered once (QUEUED, REFUSING, READING or
 * WRITING -> ENDED or, its write in flight, ORPHANED); an orphan lives to
 * its write's answer, a failed hand-off to its handback's. */
#define BIT(s) (1u << (s))
static const unsigned wait_moves[WAIT_STATE_COUNT] = {
	[WAIT_NEW] = BIT(WAIT_QUEUED) | BIT(WAIT_REFUSING) | BIT(WAIT_READING) | BIT(WAIT_WRITING) |
		     BIT(WAIT_ENDED),
	[WAIT_QUEUED] = BIT(WAIT_WRITING) | BIT(WAIT_ENDED),
	[WAIT_REFUSING] = BIT(WAIT_ENDED),
	[WAIT_READING] = BIT(WAIT_WRITING) | BIT(WAIT_ENDED),
	[WAIT_WRITING] =
		BIT(WAIT_QUEUED) | BIT(WAIT_WRITING) | BIT(WAIT_ORPHANED) | BIT(WAIT_ENDED),
	[WAIT_ORPHANED] = BIT(WAIT_HANDBACK) | BIT(WAIT_ENDED),
	[WAIT_HANDBACK] = BIT(WAIT_ENDED),
	[WAIT_ENDED] = 0,
};

static const char *wait_move_name(enum wait_state from, enum wait_state to)
{
	static const char *const names[WAIT_STATE_COUNT] = {
		"new", "queued", "refusing", "reading", "writing", "orphaned", "handback", "ended"};
	static char buf[64];
	snprintf(buf, sizeof(buf), "wait %s -> %s",
		 (unsigned)from < WAIT_STATE_COUNT ? names[from] : "?",
		 (unsigned)to < WAIT_STATE_COUNT ? names[to] : "?");
	return buf;
}

/* Moves w to state to (LG_ASSERT on a move not in wait_moves; the move is
 * made either way). */
void lt_wait_set_state(struct lt_wait *w, enum wait_state to)
{
	LG_ASSERT_MSG((unsigned)w->state < WAIT_STATE_COUNT && (wait_moves[w->state] & BIT(to)),
		      wait_move_name(w->state, to));
	w->state = to;
}

/* w is in its lock's queue (see enum wait_state). */
static bool in_queue(const struct lt_wait *w)
{
	return w->wait && (w->state == WAIT_QUEUED || w->state == WAIT_WRITING);
}

/* w was answered or cancelled with a request of its own in flight: in
 * t->orphan_waits (its write, or a failed hand-off's handback). */
static bool is_orphan(const struct lt_wait *w)
{
	return w->state == WAIT_ORPHANED || w->state == WAIT_HANDBACK;
}

static void enqueue(struct lt_wait *w)
{
	struct lock *l = w->lock;
	w->prev = l->wq_tail;
	w->next = NULL;
	if (l->wq_tail != NULL)
		l->wq_tail->next = w;
	else
		l->wq_head = w;
	l->wq_tail = w;
	lt_wait_set_state(w, WAIT_QUEUED);
}

static void dequeue(struct lt_wait *w)
{
	struct lock *l = w->lock;
	if (!in_queue(w))
		return;
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		l->wq_head = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	else
		l->wq_tail = w->prev;
	w->prev = w->next = NULL;
}

/* A wait ended with its write in flight lives on until the answer, which
 * gives back what the write took (on_write): kept in a list of the table
 * so that lt_free frees what is still out (prev and next are free: it
 * left the queue). */
static void orphan_link(struct lt_wait *w)
{
	struct locktable *t = w->t;
	w->prev = NULL;
	w->next = t->orphan_waits;
	if (t->orphan_waits != NULL)
		t->orphan_waits->prev = w;
	t->orphan_waits = w;
	lt_wait_set_state(w, WAIT_ORPHANED);
}

static void orphan_unlink(struct lt_wait *w)
{
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		w->t->orphan_waits = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	w->prev = w->next = NULL;
}

static void wait_free(struct lt_wait *w)
{
	struct lock *l = w->lock;
	if (is_orphan(w))
		orphan_unlink(w);
	lt_wait_set_state(w, WAIT_ENDED);
	timer_cancel(&w->timer);
	w->t->nwaits--;
	lt_holder_free(w->t, w->holder);
	pool_put(&wait_pool, w, sizeof(*w));
	lt_lock_unref(l);
}

/* Ends w with a result. A write still in flight keeps w alive as an orphan
 * whose lease, if the write succeeds, is released at once. */
/* Ends w's span with the acquire's outcome. */
static void end_span(struct lt_wait *w, struct lease *lease, const struct lt_error *err)
{
	struct trace_span *s = w->span;
	if (s == NULL)
		return;
	w->span = NULL;
	trace_bool(s, "leasegate.lock.acquired", lease != NULL);
	if (lease != NULL) {
		trace_bool(s, "leasegate.lock.takeover", lease->takeover);
		trace_int(s, "leasegate.lock.fencing_token", lease->token);
		lease->acq_ctx = trace_ctx_of(s);
	}
	if (err != NULL) {
		trace_str(s, "error.type", err->error_type);
		trace_fail(s, err->message);
	} else if (lease == NULL && w->cb == NULL) {
		trace_fail(s, "cancelled");
	}
	trace_end(s);
}

static void finish(struct lt_wait *w, struct lease *lease, const struct lt_error *err)
{
	struct lock *l = w->lock;
	lt_acquire_cb cb = w->cb;
	void *arg = w->arg;

	end_span(w, lease, err);
	dequeue(w);
	timer_cancel(&w->timer);
	l->refs++;	     /* keep l through the callback */
	if (lease != NULL) { /* its wait for readers is over: new ones may come */
		lt_sh_reaper_free(l->reaper, true);
		l->reaper = NULL;
	}
	if (w->call == NULL) {
		wait_free(w);
	} else if (w->state == WAIT_READING) {
		store_cancel(w->t->store, w->call);
		w->call = NULL;
		lt_swait_span_end(&w->sread.span, NULL);
		wait_free(w);
	} else if (!is_orphan(w)) {
		orphan_link(w); /* its write answers later: on_write */
	}
	if (cb != NULL)
		cb(arg, lease, err);
	lt_lock_kick(l);
	lt_lock_unref(l);
}

/* The fence a write is conditioned on (ACQUIRE's seen_fence in store.h):
 * that of the item it decided on, or FENCE_UNKNOWN (a write on a lock
 * not read: the first of a wait, one after the lock was forgotten). */
#define FENCE_UNKNOWN (-1)

static int64_t fence_of(const struct lock_item *item)
{
	return item->exists && item->has_fence && !item->fence_bad ? item->fence : 0;
}

/* Sends w's acquire write: on seen_rvn (a takeover when takeover), or,
 * with so (a session-mode holder's takeover, lt_swatch.h), on so's rvn,
 * owner and session, with its check of the session item. */
static bool send_write_on(struct lt_wait *w, const char *seen_rvn, bool takeover, int64_t fence,
			  const struct lt_swatch_out *so)
{
	struct locktable *t = w->t;
	struct lock *l = w->lock;
	/* Our own release of this lock may still be on its way, and DynamoDB
	 * may apply this write first: take over the releasing item's rvn, so
	 * the write wins in either order instead of meeting our old owner. */
	if (seen_rvn == NULL && l->releasing != NULL) {
		seen_rvn = lease_rvn(l->releasing);
		if (fence == FENCE_UNKNOWN)
			fence = l->releasing->token;
	}
	/* The announcement this write may take (and removes): a reservation
	 * whose window passed, or ours. */
	const char *waiter = NULL;
	if (l->seen != NULL && l->seen->waiter[0] != '\0')
		waiter = l->seen->waiter;
	else if (l->ann_on_item)
		waiter = l->ann;
	/* --heartbeat replica: the lock names the session its lease joins */
	const char *session = NULL;
	if (t->replica != NULL && (session = lt_replica_key(t, &w->sess_gen)) == NULL)
		return false;
	store_new_id(w->rvn);
	struct store_req req = {
		.op = STORE_ACQUIRE,
		.name = l->name,
		.name_hash = l->hash,
		.owner = w->owner,
		.rvn = w->rvn,
		.seen_rvn = seen_rvn,
		/* every acquire raises the fence: no attempt of this one lands
		 * after another acquire (its own retry too), whatever the item
		 * became since (a late attempt after the lease's release) */
		.seen_fence = fence != FENCE_UNKNOWN ? fence : 0,
		.has_seen_fence = fence != FENCE_UNKNOWN,
		.holder = w->holder,
		.waiter = waiter,
		.lease_ms = w->lease_ms,
		.ttl = lt_ttl(t),
		.secret_hash = w->secret_hash[0] != '\0' ? w->secret_hash : NULL,
		.seen_session = so != NULL ? so->session : NULL,
		.sess_check = so != NULL ? lt_swait_check(so) : STORE_SESS_CHECK_NONE,
		.sess_rvn = so != NULL ? so->session_rvn : NULL,
		.span = w->span,
		.session = session,
	};
	w->send_ms = clock_now_ms(t->clock);
	w->takeover = takeover;
	w->handoff = false;
	w->took_waiter = waiter != NULL;
	w->call = store_submit(t->store, &req, on_write, w);
	if (w->call == NULL)
		return false;
	if (w->state != WAIT_ORPHANED) /* an orphan's hand-off sent again stays one */
		lt_wait_set_state(w, WAIT_WRITING);
	l->writes++;
	return true;
}

static bool send_write(struct lt_wait *w, const char *seen_rvn, bool takeover, int64_t fence)
{
	return send_write_on(w, seen_rvn, takeover, fence, NULL);
}

/* Takes a session-mode holder over as the watch's verdict says (so: a
 * TAKEOVER_TX or TAKEOVER), on the fence of item, the lock as read: the
 * write raises the fence, as every acquire does. */
static bool write_takeover(struct lt_wait *w, const struct lt_swatch_out *so,
			   const struct lock_item *item)
{
	return send_write_on(w, so->rvn, true, fence_of(item), so);
}

/* Writes for w on what the lock was last seen as (item, just read or
 * answered): free (nothing seen), a holder due for takeover, or a
 * reservation whose window passed. */
static bool write_seen(struct lt_wait *w, const struct lock_item *item)
{
	struct seen *sn = w->lock->seen;
	bool held = sn != NULL && sn->waiter[0] == '\0';
	return send_write(w, held ? sn->rvn : NULL, held, fence_of(item));
}

static void fail_oom(struct lt_wait *w)
{
	struct lt_error e = {.status = STORE_TRANSIENT, .error_type = "OutOfMemory"};
	snprintf(e.message, sizeof(e.message), "out of memory (lock '%.64s')", w->lock->name);
	finish(w, NULL, &e);
}

/* Fails every queued wait of l with err. */
static void fail_queue(struct lock *l, const struct lt_error *err)
{
	l->refs++;
	while (l->wq_head != NULL)
		finish(l->wq_head, NULL, err);
	lt_lock_unref(l);
}

static void notify_answered(struct lock *l)
{
	for (struct lt_wait *w = l->wq_head; w != NULL; w = w->next)
		if (w->answered != NULL)
			w->answered(w->arg);
}

static int64_t poll_delay(const struct lock *l)
{
	int64_t now = clock_now_ms(l->t->clock);
	int64_t d = l->seen->lease_ms / 3;
	int64_t left = l->seen->at + l->seen->lease_ms - now;
	if (d > LT_MAX_POLL_MS)
		d = LT_MAX_POLL_MS;
	if (left < d)
		d = left;
	if (lt_swait_of(l) != NULL) /* session mode: the watch paces its reads */
		d = lt_swait_poll_ms(l);
	if (l->ann_on_item && l->ann_ms > 0 && d > l->ann_ms)
		d = l->ann_ms; /* the interval we announced */
	return d > 0 ? d : 0;
}

static bool due_for_takeover(const struct lock *l)
{
	return clock_now_ms(l->t->clock) - l->seen->at >= l->seen->lease_ms;
}

/* A request of the lock's own is under way (or it is held here): the
 * queue waits for its answer. */
static bool lock_busy(const struct lock *l)
{
	return l->held != NULL || l->poll_call != NULL || l->writes > 0 || l->ann_call != NULL ||
	       lt_lock_yielding(l);
}

/* Nobody here waits any more: take our announcement back. */
static void withdraw(struct lock *l)
{
	struct store_req req = {.op = STORE_WITHDRAW, .name = l->name, .waiter = l->ann};
	l->ann_call = store_submit(l->t->store, &req, on_withdraw, l);
	if (l->ann_call == NULL) { /* out of memory: its window will pass */
		l->ann_on_item = false;
		l->ann[0] = '\0';
	}
}

void lt_item_freed(struct locktable *t, const char *name)
{
	struct lock *l = lt_lock_get(t, name, false);
	if (l == NULL || l->held != NULL || l->wq_head == NULL)
		return;
	static const struct lock_item freed; /* what a read would show now */
	l->refs++;
	lt_lock_see(l, &freed);
	lt_lock_kick(l);
	lt_lock_unref(l);
}

void lt_lock_kick(struct lock *l)
{
	if (lock_busy(l))
		return;
	if (l->wq_head == NULL) {
		timer_cancel(&l->poll_timer);
		if (l->ann_on_item)
			withdraw(l);
		lt_sh_reaper_free(l->reaper, true); /* nobody waits for the readers */
		l->reaper = NULL;
		lt_lock_maybe_free(l);
		return;
	}
	if (l->seen == NULL) {
		if (!send_write(l->wq_head, NULL, false, FENCE_UNKNOWN))
			fail_oom(l->wq_head);
		return;
	}
	if (!timer_armed(&l->poll_timer))
		timer_arm(&l->poll_timer, poll_delay(l));
}

/* The queue waits on a lock held elsewhere: announce it (see the top of
 * this file) once reads have found it so for a poll interval and the item
 * carries no announcement. */
static void maybe_announce(struct lock *l, const struct lock_item *item)
{
	if (!item->has_owner || item->has_waiter || l->ann_call != NULL || l->ann_on_item ||
	    !l->elsewhere)
		return;
	/* session mode: the real lease, not the 10-year leaseMs */
	int64_t p = lt_poll_interval(lt_item_lease_ms(item));
	if (clock_now_ms(l->t->clock) - l->elsewhere_since < p)
		return;
	store_new_id(l->ann);
	struct store_req req = {
		.op = STORE_ANNOUNCE, .name = l->name, .waiter = l->ann, .waiter_ms = p};
	l->ann_ms = p;
	l->ann_call = store_submit(l->t->store, &req, on_announce, l);
	if (l->ann_call == NULL)
		l->ann[0] = '\0'; /* out of memory: announce at a later poll */
}

/* The queue waits on a holder in session mode (l's watch, lt_swait.c):
 * acts on the watch's verdict on item (with sres and rd when it came
 * with its session, lt_swait_feed). WAIT polls at the watch's pace; KILL
 * marks the session dead (as the lock's request in flight, so nothing
 * else of the lock's is sent meanwhile), then reads when the watch says
 * (at once when the lock's own count is due too); a takeover
 * writes on the watch's conditions, and a refusal (the session's check:
 * a heartbeat landed) brings the queue back here; BAD fails the queue as
 * a malformed item does: an item or session out of the mode's bounds
 * cannot be counted safely, and waiting on its 10-year leaseMs would wait
 * for ever. */
static void decide_session(struct lock *l, const struct lock_item *item,
			   const struct store_session_result *sres, const struct lt_sread *rd)
{
	struct lt_swatch_out out;
	struct lt_error e;
	switch (lt_swait_feed(l, item, sres, rd, &out)) {
	case LT_SWATCH_TAKEOVER_TX:
	case LT_SWATCH_TAKEOVER:
		if (!write_takeover(l->wq_head, &out, item))
			fail_oom(l->wq_head);
		return;
	case LT_SWATCH_KILL:
		l->poll_call = lt_swait_kill(l, &out, on_kill, l);
		if (l->poll_call == NULL)
			fail_oom(l->wq_head);
		return;
	case LT_SWATCH_BAD:
		lt_swait_error(&e, l, out.message);
		fail_queue(l, &e);
		return;
	default: /* WAIT (FREE and PER_LEASE have no watch: lt_swait_keep) */
		lt_fire_refusal(l);
		maybe_announce(l, item);
		lt_lock_kick(l);
	}
}

/* Decides what an answer (a read, or a refused write's old item; with
 * sres and rd, a store_session READ's) means for the head of the queue:
 * write, take over, or wait for the next poll. */
static void decide(struct lock *l, const struct lock_item *item,
		   const struct store_session_result *sres, const struct lt_sread *rd)
{
	struct lt_error e;
	if (!lt_item_check(l->t, l->name, item, LT_ITEM_TO_ACQUIRE, &e)) {
		fail_queue(l, &e);
		return;
	}
	/* this replica's session under an owner nobody here holds: its
	 * release frees the lock (and kicks the queue) when done */
	(void)lt_replica_untracked(l, item);
	if (item->exists && !item->has_owner && (item->scount > 0 || item->radmit) &&
	    l->wq_head != NULL && l->held == NULL) {
		/* readers hold it, or were admitted by the last exclusive
		 * release (core/lt_shared.h): no write can win now; crashed
		 * ones are removed by their watch */
		lt_lock_see_readers(l, item, l->wq_head->lease_ms);
		if (l->reaper == NULL)
			l->reaper = lt_sh_reaper_new(l->t, l->name);
		if (l->reaper != NULL)
			lt_sh_reap(l->reaper, lt_poll_interval(l->wq_head->lease_ms),
				   l->wq_head->lease_ms);
		lt_fire_refusal(l);
		lt_lock_kick(l);
		return;
	}
	lt_sh_reaper_free(l->reaper, true); /* no reader holds it now */
	l->reaper = NULL;
	lt_lock_see(l, item);
	if (l->held != NULL || l->wq_head == NULL) {
		lt_lock_kick(l);
		return;
	}
	if (lt_swait_of(l) != NULL) {
		decide_session(l, item, sres, rd);
		return;
	}
	if (l->seen == NULL || due_for_takeover(l)) {
		if (!write_seen(l->wq_head, item))
			fail_oom(l->wq_head);
		return;
	}
	lt_fire_refusal(l);
	maybe_announce(l, item);
	lt_lock_kick(l);
}

static void decide_queue(struct lock *l, const struct lock_item *item)
{
	decide(l, item, NULL, NULL);
}

static void on_announce(void *arg, const struct store_result *res)
{
	struct lock *l = arg;
	l->ann_call = NULL;
	l->refs++;
	if (res->status == STORE_OK || res->status == STORE_REFUSED) {
		l->ann_on_item = res->status == STORE_OK;
		if (l->ann_on_item && l->held != NULL)
			withdraw(l); /* a try of ours took the lock meanwhile */
		else if (l->wq_head != NULL && l->held == NULL)
			decide_queue(l, &res->item);
		else
			lt_lock_kick(l);
	} else {
		l->ann_on_item = true; /* it may have landed: later writes take it */
		lt_lock_kick(l);
	}
	lt_lock_unref(l);
}

static void on_withdraw(void *arg, const struct store_result *res)
{
	struct lock *l = arg;
	l->ann_call = NULL;
	l->ann_on_item = false; /* gone, or its window will pass */
	l->ann[0] = '\0';
	l->refs++;
	lt_lock_kick(l);
	lt_lock_unref(l);
}

static void on_poll(void *arg, const struct store_result *res)
{
	struct lock *l = arg;
	l->poll_call = NULL;
	l->refs++;
	if (res->status != STORE_OK) {
		struct lt_error e;
		lt_error_from(&e, l->t, l->name, res);
		lt_error_wrote_nothing(&e); /* a read */
		fail_queue(l, &e);
	} else {
		notify_answered(l);
		decide_queue(l, &res->item);
	}
	lt_lock_unref(l);
}

/* The answer of the queue's READ of a session-mode lock and its session. */
static void on_spoll(void *arg, const struct store_session_result *res)
{
	struct lock *l = arg;
	l->poll_call = NULL;
	lt_swait_span_end(&l->poll_span, res);
	l->refs++;
	if (res->status != STORE_OK) { /* after the store's retries, as on_poll */
		struct store_result r = {.status = res->status, .error_type = res->error_type};
		memcpy(r.message, res->message, sizeof(r.message));
		struct lt_error e;
		lt_error_from(&e, l->t, l->name, &r);
		lt_error_wrote_nothing(&e); /* a read */
		fail_queue(l, &e);
	} else {
		struct lt_sread rd = lt_swait_polled(l);
		notify_answered(l);
		decide(l, &res->lock, res, &rd);
	}
	lt_lock_unref(l);
}

/* The KILL's answer, whatever it is: the next read tells (the session
 * dead, or live under another rvn), when the watch says (at once when the
 * lock's own count is due too). */
static void on_kill(void *arg, const struct store_session_result *res)
{
	struct lock *l = arg;
	l->poll_call = NULL;
	lt_swait_span_end(&l->poll_span, res);
	l->refs++;
	lt_lock_kick(l);
	lt_lock_unref(l);
}

void lt_poll_due(void *arg)
{
	struct lock *l = arg;
	struct store_req req = {.op = STORE_READ, .name = l->name};
	if (l->wq_head == NULL || lock_busy(l)) {
		lt_lock_kick(l);
		return;
	}
	if (lt_swait_reads(l)) /* session mode: the lock and its session */
		l->poll_call = lt_swait_poll(l, on_spoll, l);
	else {
		req.span = l->wq_head->span; /* a poll is for the queue: its head's */
		l->poll_call = store_submit(l->t->store, &req, on_poll, l);
	}
	if (l->poll_call == NULL)
		fail_oom(l->wq_head);
}

/* A write landed on an item whose fence gives no token (DynamoDB cannot
 * refuse a fraction in its condition): give back what it took, as an
 * orphan does, and answer the error, never the fence. */
static void undo_write(struct lt_wait *w, struct lease *lease, const struct lt_error *e)
{
	finish(w, NULL, e);
	lease_release(lease);
}

/* A hand-off refused by an item still under the owner it takes the lock
 * from (see lt_wait.handoff_from): writes again on the item's rvn. */
static bool handoff_again(struct lt_wait *w, const struct lock_item *item)
{
	if (!w->handoff || !item->has_owner || strcmp(item->owner, w->handoff_from) != 0 ||
	    w->lock->held != NULL)
		return false;
	char from[STORE_ID_MAX + 1];
	memcpy(from, w->handoff_from, sizeof(from));
	if (!send_write(w, item->rvn, false, fence_of(item)))
		return false;
	w->handoff = true;
	memcpy(w->handoff_from, from, sizeof(from));
	return true;
}

/* A write refused by an item that shows this wait's own owner id under
 * another rvn: an earlier acquire with this owner id holds the lock (one
 * whose answer was lost: an election contending again with the id of its
 * contention, a client retrying with its own id, as a Redis lock library's
 * value). Acquires have no branch for their owner alone (ACQUIRE in
 * store.h: a late attempt would put its rvn back over the lease's
 * renewals); this write goes again at once on the rvn the item shows, so
 * it too never lands after a later write. At most LT_OWN_AGAIN_MAX times
 * per wait (a lease renewing under that owner changes the rvn meanwhile);
 * then the item is a holder as any other. */
#define LT_OWN_AGAIN_MAX 3
static bool own_again(struct lt_wait *w, const struct lock_item *item)
{
	struct lt_error e;
	if (is_orphan(w) || w->handoff || w->own_again >= LT_OWN_AGAIN_MAX ||
	    w->lock->held != NULL || !item->has_owner || strcmp(item->owner, w->owner) != 0 ||
	    !lt_item_check(w->t, w->lock->name, item, LT_ITEM_TO_ACQUIRE, &e))
		return false;
	if (!send_write(w, item->rvn, false, fence_of(item)))
		return false;
	w->own_again++;
	return true;
}

/* What a hand-off's write answered means for the release that handed the
 * lock on (its lt_wait.rel_cb): 1 done (written, or the item no longer
 * has an owner), else -1 and *err: the released lease stays on the item
 * (the write failed) or it lost the lock before (another owner). */
static int handoff_result(const struct lt_wait *w, const struct store_result *res,
			  struct lt_error *err)
{
	if (res->status == STORE_OK || (res->status == STORE_REFUSED && !res->item.has_owner))
		return 1;
	lt_error_from(err, w->t, w->lock->name, res);
	if (res->status == STORE_REFUSED)
		snprintf(err->message, sizeof(err->message),
			 "the lock was not handed on: %s (lock '%.64s', table '%s')",
			 strcmp(res->item.owner, w->handoff_from) == 0
				 ? "the item is still the released lease's"
				 : "the released lease no longer held it",
			 w->lock->name, w->t->store->table);
	return -1;
}

static void on_handback(void *arg, const struct store_result *res);

#define LT_HANDBACK_MAX 3

/* Sends the release of the lease a failed hand-off took the lock from (a
 * release already answered: lease_release handed on instead of
 * releasing), with w, ended, as its carrier. */
static bool send_handback(struct lt_wait *w)
{
	struct lock *l = w->lock;
	struct store_req req = {.op = STORE_RELEASE,
				.name = l->name,
				.name_hash = l->hash,
				.owner = w->handoff_from,
				.ttl = lt_ttl(w->t)};
	w->call = store_submit(w->t->store, &req, on_handback, w);
	if (w->call == NULL)
		return false;
	w->handbacks++;
	l->writes++;
	return true;
}

/* A hand-off's write failed (after the store's retries): the lease it
 * took the lock from was answered released, but its owner is still on the
 * item, which would keep every other waiter out until that lease's end.
 * Releases it in the hand-off's place; the wait is answered the error. */
static bool handback(struct lt_wait *w, const struct store_result *res)
{
	struct lt_error e;
	w->handbacks = 0;
	if (!w->handoff || res->status != STORE_TRANSIENT || !send_handback(w))
		return false;
	w->handoff = false;
	if (!is_orphan(w)) {
		lt_error_from(&e, w->t, w->lock->name, res);
		finish(w, NULL, &e); /* kept, as an orphan, for the release */
	}
	lt_wait_set_state(w, WAIT_HANDBACK);
	return true;
}

static void on_handback(void *arg, const struct store_result *res)
{
	struct lt_wait *w = arg;
	struct lock *l = w->lock;
	w->call = NULL;
	l->writes--;
	/* the release that handed the lock on is answered by the first
	 * handback: done once it is written, else not written (further sends
	 * go on without keeping the client waiting) */
	struct lt_error rel_err;
	lt_renew_cb rel_cb = w->rel_cb;
	void *rel_arg = w->rel_arg;
	int rel = rel_cb != NULL ? handoff_result(w, res, &rel_err) : 0;
	w->rel_cb = NULL;
	l->refs++;
	/* failed again: again, LT_HANDBACK_MAX sends in all (each with the
	 * store's retries); then the lease's end frees it, as a failed release */
	if (res->status != STORE_TRANSIENT || w->handbacks >= LT_HANDBACK_MAX ||
	    !send_handback(w)) {
		wait_free(w);
		if (res->status == STORE_OK || res->status == STORE_REFUSED)
			lt_lock_see(l, &res->item);
		lt_lock_kick(l);
	}
	if (rel_cb != NULL)
		rel_cb(rel_arg, rel, rel < 0 ? &rel_err : NULL);
	lt_lock_unref(l);
}

static void on_write(void *arg, const struct store_result *res)
{
	struct lt_wait *w = arg;
	struct lock *l = w->lock;
	struct lt_error e, rel_err;

	w->call = NULL;
	l->writes--;
	/* --heartbeat replica: a write whose answer was lost may have applied,
	 * its item naming a session that beats while nobody holds it: read
	 * back, and released if so (lt_replica_readback) */
	if (w->sess_gen != 0 && res->status == STORE_TRANSIENT)
		lt_replica_readback(l, w->owner, w->lease_ms);
	/* a cancelled wait too: what it takes, it gives back (orphan) */
	if (res->status == STORE_REFUSED &&
	    (handoff_again(w, &res->item) || own_again(w, &res->item)))
		return; /* sent again on the rvn the item shows */
	if (handback(w, res))
		return; /* the release that handed the lock on: on_handback answers it */
	lt_renew_cb rel_cb = w->handoff ? w->rel_cb : NULL;
	void *rel_arg = w->rel_arg;
	int rel = rel_cb != NULL ? handoff_result(w, res, &rel_err) : 0;
	w->rel_cb = NULL;
	l->refs++;
	if (res->status == STORE_OK && w->took_waiter) {
		l->ann_on_item = false; /* the write removed the announcement */
		l->ann[0] = '\0';
	}
	if (w->state == WAIT_ORPHANED) { /* give back what it took */
		struct lease *lease = res->status == STORE_OK ? lease_start(w, &res->item) : NULL;
		wait_free(w);
		if (lease != NULL)
			lease_release(lease);
		lt_lock_kick(l);
	} else if (res->status == STORE_OK) {
		if (w->answered != NULL)
			w->answered(w->arg);
		struct lease *lease = lease_start(w, &res->item);
		if (lease == NULL)
			fail_oom(w);
		else if (!lt_item_check(l->t, l->name, &res->item, LT_ITEM_ACQUIRED, &e))
			undo_write(w, lease, &e);
		else
			finish(w, lease, NULL);
	} else if (res->status == STORE_REFUSED) {
		if (w->answered != NULL)
			w->answered(w->arg);
		if (!lt_item_check(l->t, l->name, &res->item, LT_ITEM_TO_ACQUIRE, &e)) {
			finish(w, NULL, &e);
		} else if (!w->wait) {
			(void)lt_replica_untracked(l, &res->item);
			lt_lock_see(l, &res->item);
			lt_fire_refusal(l);
			finish(w, NULL, NULL);
		} else {
			lt_wait_set_state(w, WAIT_QUEUED); /* back to the queue's poll */
			decide_queue(l, &res->item);
		}
	} else {
		lt_error_from(&e, l->t, l->name, res);
		if (res->not_sent)
			lt_error_wrote_nothing(&e);
		finish(w, NULL, &e);
	}
	lt_lock_unref(l);
	if (rel_cb != NULL) /* the release that handed the lock on is done */
		rel_cb(rel_arg, rel, rel < 0 ? &rel_err : NULL);
}

/* A try on a lock seen held in session mode: a takeover only on the
 * watch's verdict, and the watch is the lock's, fed by every read of it
 * here (this try's, earlier tries', the queue's polls): as today's try
 * counts from the holder the lock last saw, a try never takes over before
 * this replica's own watch of that lock counted a whole lease (the lock's
 * rvn and its session's value standing still). A try sends no KILL: it
 * refuses, and the watch offers the transaction at its next read once
 * both counts are due. */
static void try_session(struct lt_wait *w, const struct lock_item *item,
			const struct store_session_result *sres, const struct lt_sread *rd)
{
	struct lock *l = w->lock;
	struct lt_swatch_out out;
	struct lt_error e;
	enum lt_swatch_verdict v = lt_swait_feed(l, item, sres, rd, &out);
	if (l->held == NULL && (v == LT_SWATCH_TAKEOVER_TX || v == LT_SWATCH_TAKEOVER)) {
		if (!write_takeover(w, &out, item))
			fail_oom(w);
		return;
	}
	if (v == LT_SWATCH_BAD) {
		lt_swait_error(&e, l, out.message);
		finish(w, NULL, &e);
		return;
	}
	lt_fire_refusal(l);
	finish(w, NULL, NULL);
}

/* What a try's read (item; with sres and rd, a store_session READ's)
 * decides: write if free or due, else refuse. */
static void try_decide(struct lt_wait *w, const struct lock_item *item,
		       const struct store_session_result *sres, const struct lt_sread *rd)
{
	struct lock *l = w->lock;
	struct lt_error e;
	if (w->answered != NULL)
		w->answered(w->arg);
	if (!lt_item_check(l->t, l->name, item, LT_ITEM_TO_ACQUIRE, &e)) {
		finish(w, NULL, &e);
		return;
	}
	(void)lt_replica_untracked(l, item); /* as decide() */
	lt_lock_see(l, item);
	if (lt_swait_of(l) != NULL) {
		try_session(w, item, sres, rd);
		return;
	}
	if (l->held == NULL && (l->seen == NULL || due_for_takeover(l))) {
		if (!write_seen(w, item))
			fail_oom(w);
		return;
	}
	lt_fire_refusal(l);
	finish(w, NULL, NULL);
}

/* A try on a lock seen held: read first, write only if free or due. */
static void on_try_read(void *arg, const struct store_result *res)
{
	struct lt_wait *w = arg;
	struct lt_error e;

	w->call = NULL;
	if (res->status != STORE_OK) {
		lt_error_from(&e, w->t, w->lock->name, res);
		lt_error_wrote_nothing(&e); /* a read */
		finish(w, NULL, &e);
		return;
	}
	try_decide(w, &res->item, NULL, NULL);
}

/* A try on a lock seen held in session mode: the lock and its session. */
static void on_try_sread(void *arg, const struct store_session_result *res)
{
	struct lt_wait *w = arg;
	struct lt_error e;

	w->call = NULL;
	lt_swait_span_end(&w->sread.span, res);
	if (res->status != STORE_OK) {
		struct store_result r = {.status = res->status, .error_type = res->error_type};
		memcpy(r.message, res->message, sizeof(r.message));
		lt_error_from(&e, w->t, w->lock->name, &r);
		lt_error_wrote_nothing(&e); /* a read */
		finish(w, NULL, &e);
		return;
	}
	struct lt_sread rd = w->sread;
	try_decide(w, &res->lock, res, &rd);
}

static void wait_timer(void *arg)
{
	struct lt_wait *w = arg;
	if (w->state == WAIT_REFUSING)
		lt_fire_refusal(w->lock);
	finish(w, NULL, NULL); /* a local refusal, or the wait timed out */
}

bool lt_id_ok(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > STORE_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (id[i] < 0x21 || id[i] > 0x7e)
			return false;
	return true;
}

bool lt_args_valid(const struct lt_acquire_args *a, char *msg, size_t msglen)
{
	size_t n = a->name != NULL ? strlen(a->name) : 0;
	if (n == 0 || n > STORE_NAME_MAX) {
		snprintf(msg, msglen, "lock name must be 1 to %d bytes", STORE_NAME_MAX);
		return false;
	}
	if (a->lease_ms < LT_MIN_LEASE_MS || a->lease_ms > LT_MAX_LEASE_MS) {
		snprintf(msg, msglen, "lease must be %lld ms to %lld ms (1 s to 1 day)",
			 LT_MIN_LEASE_MS, LT_MAX_LEASE_MS);
		return false;
	}
	if (a->secret_hash != NULL && strlen(a->secret_hash) != STORE_SECRET_HASH_LEN) {
		snprintf(msg, msglen, "secret hash must be %d hex digits", STORE_SECRET_HASH_LEN);
		return false;
	}
	if (a->holder != NULL && (a->holder[0] == '\0' || strlen(a->holder) > STORE_HOLDER_MAX)) {
		snprintf(msg, msglen, "holder label must be 1 to %d characters", STORE_HOLDER_MAX);
		return false;
	}
	if (a->owner != NULL && !lt_id_ok(a->owner)) {
		snprintf(msg, msglen, "owner id must be 1 to %d printable ASCII bytes",
			 STORE_ID_MAX);
		return false;
	}
	if (a->timeout_ms < 0) {
		snprintf(msg, msglen, "wait timeout must not be negative");
		return false;
	}
	return true;
}

struct lt_wait *lt_acquire(struct locktable *t, const struct lt_acquire_args *a, lt_acquire_cb cb,
			   void *arg)
{
	char msg[128];
	if (!lt_args_valid(a, msg, sizeof(msg)))
		return NULL;
	struct lock *l = lt_lock_get(t, a->name, true);
	if (l == NULL)
		return NULL;
	struct lt_wait *w = pool_get(&wait_pool, sizeof(*w));
	if (w == NULL || (a->holder != NULL && (w->holder = strdup(a->holder)) == NULL)) {
		pool_put(&wait_pool, w, sizeof(*w));
		lt_lock_maybe_free(l);
		return NULL;
	}
	if (a->holder == NULL)
		w->holder = t->holder_label;
	w->t = t;
	w->lock = l;
	w->wait = a->wait;
	w->cb = cb;
	w->arg = arg;
	w->answered = a->answered;
	w->lease_ms = a->lease_ms;
	if (a->owner != NULL)
		snprintf(w->owner, sizeof(w->owner), "%s", a->owner);
	else
		store_new_id(w->owner);
	snprintf(w->secret_hash, sizeof(w->secret_hash), "%s",
		 a->secret_hash != NULL ? a->secret_hash : "");
	timer_init(&w->timer, t->clock, wait_timer, w);
	l->refs++;
	t->nwaits++;
	if (t->tracer != NULL) { /* tracing off: not even the calls */
		w->span = trace_start(t->tracer,
				      a->span_name != NULL ? a->span_name
				      : a->wait		   ? "Lock.Acquire"
							   : "Lock.TryAcquire",
				      TRACE_INTERNAL, a->trace_parent);
		trace_str(w->span, "leasegate.lock.name", l->name);
		trace_str(w->span, "db.collection.name", t->store->table);
	}

	bool ok = true;
	if (l->held != NULL && !a->wait) {
		lt_wait_set_state(w, WAIT_REFUSING); /* refused here, without a request */
		timer_arm(&w->timer, 0);
	} else if (a->wait) {
		bool joined = l->wq_head != NULL;
		enqueue(w);
		if (a->timeout_ms > 0)
			timer_arm(&w->timer, a->timeout_ms);
		/* The first wait starts the queue's work: a write on a lock not
		 * seen held, a read at once on one seen held before. Later waits
		 * join what is under way. */
		if (!joined && !lock_busy(l)) {
			if (l->seen != NULL)
				timer_arm(&l->poll_timer, 0);
			else
				ok = send_write(w, NULL, false, FENCE_UNKNOWN);
		}
	} else if (l->seen != NULL) {
		struct store_req req = {.op = STORE_READ, .name = l->name, .span = w->span};
		if (lt_swait_reads(l)) /* session mode: the lock and its session */
			w->call = lt_swait_read(l, &w->sread, w->span, on_try_sread, w);
		else
			w->call = store_submit(t->store, &req, on_try_read, w);
		ok = w->call != NULL;
		if (ok)
			lt_wait_set_state(w, WAIT_READING);
	} else {
		ok = send_write(w, NULL, false, FENCE_UNKNOWN);
	}
	if (!ok) {
		dequeue(w);
		trace_end(w->span);
		wait_free(w);
		return NULL;
	}
	return w;
}

void lt_set_tracer(struct locktable *t, struct tracer *tracer)
{
	t->tracer = tracer;
}

/* The holder's turn has lasted long enough to yield: half a poll interval
 * of its lease, so that a turn amortises the requests it costs. */
static bool turn_done(const struct lock *l, const struct lease *from)
{
	return clock_now_ms(l->t->clock) - l->turn_start >= lt_poll_interval(from->lease_ms) / 2;
}

bool lt_handoff(struct lock *l, struct lease *from)
{
	struct lt_wait *w = l->wq_head;
	if (lt_lock_yield_due(l) && (w == NULL || (l->round_left == 0 && turn_done(l, from)))) {
		if (l->state != LOCK_YIELDING) /* released to the store: the announced turn */
			lt_lock_set_state(l, LOCK_YIELDING);
		return false;
	}
	if (w == NULL || l->writes > 0)
		return false;
	/* Phase-fair: readers wait behind this lease (registered on the
	 * item, as its last answer showed, or here): its release to the
	 * store admits them before the next writer (core/lt_shared.h). */
	if (l->readers_behind || lt_sh_waiting(l->t, l->name))
		return false;
	if (!send_write(w, from->rvn, false, from->token))
		return false;
	w->handoff = true;
	memcpy(w->handoff_from, from->owner, sizeof(w->handoff_from));
	w->rel_cb = from->release_cb; /* answered by on_write, when it is done */
	w->rel_arg = from->release_arg;
	from->release_cb = NULL;
	if (lt_lock_yield_due(l) && l->round_left > 0)
		l->round_left--;
	store_cancel(l->t->store, l->poll_call);
	l->poll_call = NULL;
	lt_swait_span_end(&l->poll_span, NULL);
	timer_cancel(&l->poll_timer);
	return true;
}

void lt_holder_saw(struct lock *l, const struct lock_item *item)
{
	l->readers_behind = item->rwaiters;
	bool other = item->has_waiter && strcmp(item->waiter, l->ann) != 0;
	if (item->has_waiter && !other && l->ann_call == NULL) {
		l->ann_on_item = true;
		withdraw(l); /* ours, left from before we held it: free the slot */
	}
	if (!other) { /* none, or withdrawn */
		if (l->state == LOCK_YIELD_DUE)
			lt_lock_set_state(l, LOCK_OURS);
		else if (l->state == LOCK_YIELDING)
			lt_lock_set_state(l, LOCK_YIELDING_NOT_DUE);
		return;
	}
	if (lt_lock_yield_due(l))
		return;
	lt_lock_set_state(l, l->state == LOCK_OURS ? LOCK_YIELD_DUE : LOCK_YIELDING);
	l->round_left = 0;
	for (struct lt_wait *w = l->wq_head; w != NULL; w = w->next)
		l->round_left++;
}

void lt_yield_done(struct lock *l, const struct store_result *res)
{
	lt_lock_set_state(l, LOCK_OURS);
	if (res->status == STORE_OK)
		lt_lock_see(l, &res->item); /* free: reserved for the waiter, if still announced */
}

void lt_acquire_cancel(struct lt_wait *w)
{
	if (w == NULL)
		return;
	w->cb = NULL;
	finish(w, NULL, NULL);
}

const char *lt_wait_name(const struct lt_wait *w)
{
	return w->lock->name;
}

struct lease *lt_local_lease(struct locktable *t, const char *name)
{
	struct lock *l = lt_lock_get(t, name, false);
	return l != NULL ? l->held : NULL;
}

const char *lt_table(const struct locktable *t)
{
	return t->store->table;
}
struct clock *lt_clock(const struct locktable *t)
{
	return t->clock;
}

void lt_stats(const struct locktable *t, struct lt_stats *out)
{
	out->leases = t->nleases;
	out->waits = t->nwaits;
	out->locks = t->nlocks;
	out->releases_in_flight = t->releases_in_flight;
	out->seen_trims = t->seen_trims;
	out->seen_trim_steps = t->seen_trim_steps;
	const struct lt_sweep *sw = lt_sweep_of(t);
	out->sweeping = sw != NULL;
	out->sweep = sw != NULL ? *lt_sweep_stats(sw) : (struct lt_sweep_stats){0};
}

/* --- the table --- */

struct locktable *lt_new(struct clock *clock, struct store *store, struct obs *obs,
			 const struct lt_options *opts)
{
	struct lt_options none = {0};
	if (opts == NULL)
		opts = &none;
	if (opts->ttl_retention_ms != 0 && opts->ttl_retention_ms < LT_MIN_RETENTION_MS)
		return NULL;
	if (opts->holder_label != NULL &&
	    (opts->holder_label[0] == '\0' || strlen(opts->holder_label) > STORE_HOLDER_MAX))
		return NULL;
	if ((unsigned)opts->heartbeat >= LT_HEARTBEAT_COUNT)
		return NULL;
	struct locktable *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->nbuckets = 1024;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (t->buckets == NULL || (opts->holder_label != NULL &&
				   (t->holder_label = strdup(opts->holder_label)) == NULL)) {
		free(t->buckets);
		free(t);
		return NULL;
	}
	t->clock = clock;
	t->store = store;
	t->obs = obs;
	t->retention_ms = opts->ttl_retention_ms;
	t->seen_max = opts->seen_max != 0 ? opts->seen_max : 10000;
	if (!lt_replica_init(t, opts)) {
		free(t->buckets);
		free(t->holder_label);
		free(t);
		return NULL;
	}
	return t;
}

void lt_free(struct locktable *t)
{
	if (t == NULL)
		return;
	lease_free_all(t);
	while (t->orphan_waits != NULL) { /* their writes are dropped */
		struct lt_wait *w = t->orphan_waits;
		t->orphan_waits = w->next;
		store_cancel(t->store, w->call);
		timer_cancel(&w->timer);
		lt_holder_free(t, w->holder);
		pool_put(&wait_pool, w, sizeof(*w));
	}
	lt_foreign_free_all(t);
	lt_adopt_free_all(t);
	lt_scan_free_all(t);
	lt_tx_free_all(t);
	lt_replica_free(t); /* its members were freed with the leases */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct lock *l = t->buckets[i], *next;
		for (; l != NULL; l = next) {
			next = l->hnext;
			while (l->wq_head != NULL) {
				struct lt_wait *w = l->wq_head;
				dequeue(w);
				store_cancel(t->store, w->call);
				timer_cancel(&w->timer);
				lt_holder_free(t, w->holder);
				pool_put(&wait_pool, w, sizeof(*w));
			}
			store_cancel(t->store, l->poll_call);
			lt_swait_span_end(&l->poll_span, NULL);
			store_cancel(t->store, l->ann_call);
			timer_cancel(&l->poll_timer);
			lt_lock_destroy(l);
		}
	}
	while (t->hooks != NULL) {
		struct lt_hook *h = t->hooks;
		t->hooks = h->next;
		free(h);
	}
	free(t->buckets);
	free(t->holder_label);
	free(t);
}

const char *lt_loss_name(enum lt_loss reason)
{
	static const char *const names[LT_LOSS_COUNT] = {
		[LT_HELD] = "held",
		[LT_TAKEN_OVER] = "taken_over",
		[LT_DELETED] = "deleted",
		[LT_EXPIRED] = "expired",
		[LT_TABLE_NOT_FOUND] = "table_not_found",
		[LT_FORCED] = "forced",
		[LT_RELEASED] = "released",
		[LT_ADOPTED] = "adopted",
		[LT_SESSION] = "session",
	};
	return (unsigned)reason < LT_LOSS_COUNT ? names[reason] : "?";
}
