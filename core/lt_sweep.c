/*
 * lt_sweep: the verification sweep of `--heartbeat replica`
 * (docs/design/replica-heartbeat.md, "Endings from outside", "No
 * orphans"). A lease of this mode is not renewed by its own write, so an
 * item that another tool deleted or rewrote (leasegate's own endings write
 * revocations: lt_revoke.c) would go unnoticed; the sweep reads every lock
 * this table holds in session mode once a period (lt_options.sweep_ms),
 * STORE_BATCH_MAX items a strongly consistent batch read
 * (core/store/store_batch.h), and:
 *   - a lease whose item no longer shows its owner and its session is
 *     lost as a renewal refused by that item would lose it (deleted,
 *     taken over, released, forced, adopted: lt_lease_refused);
 *   - an item found naming this replica's session under an owner no lease
 *     here holds, and no write of this table on that lock in flight, is
 *     released, conditioned on that owner, session and rvn
 *     (lt_replica_release_lost): its session beats, so nobody would ever
 *     take it over.
 * An item that shows the lease's owner and session under another rvn is
 * a write of that lease (its explicit renewal, one by (name, token) from
 * another replica): nothing ends.
 *
 * Spread, not bursts. A period walks t->leases (newest first, new leases
 * go in at its head) from a cursor: the n leases there when it began go
 * 100 at a time into its B = ceil(n/100) batches (those held in session
 * mode are read), batch i sent at start + i * period / B; a lease taken
 * during a period is read in the next, and one that ends moves the cursor
 * past itself (lt_sweep_unlinked). No list is made: at a million leases,
 * making one touched every lease and lock at the period's start (1.2 s of
 * CPU there, each a memory miss); the walk touches each once, and the
 * misses of a batch's locks overlap (touch). One batch in flight at a time: one that falls due
 * while another is in flight goes when that one is answered, and a period
 * ends only once its walk is done, so that a sweep whose round trips are
 * longer than its share of the period stretches the period rather than
 * leave the oldest leases unread in every one. A batch that fails
 * (TRANSIENT, NO_TABLE, FATAL) judges the entries that came back and
 * leaves the others to the next period (the session's heartbeat, not the
 * sweep, proves the holder alive).
 */
#include "core/lease.h"
#include "core/lt_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_batch.h"

struct lt_sweep {
	struct locktable *t;
	int64_t period_ms, start_ms;
	struct timer timer;
	struct lease *cursor; /* the walk's next lease; NULL: this period's done */
	unsigned batches, sent;
	struct store_call *call; /* the batch in flight */
	struct store_batch_result res;
	struct store_batch_entry entries[STORE_BATCH_MAX];
	struct lock *sent_locks[STORE_BATCH_MAX];	/* the batch's, referenced */
	char owners[STORE_BATCH_MAX][STORE_ID_MAX + 1]; /* the lease's owner at send */
	struct lt_sweep_stats stats;
};

/* l is a lease the sweep checks: held in session mode. */
static bool swept(const struct lease *l)
{
	return l != NULL && l->in_session && l->state == LEASE_HELD;
}

static void new_period(struct lt_sweep *sw, int64_t now)
{
	struct locktable *t = sw->t;
	if (sw->stats.periods > 0)
		sw->stats.last_period_ms = now - sw->start_ms;
	sw->cursor = t->leases;
	sw->start_ms = now;
	sw->batches = (unsigned)((t->nleases + STORE_BATCH_MAX - 1) / STORE_BATCH_MAX);
	sw->sent = 0;
	sw->stats.periods++;
}

static void on_batch(void *arg);

/* Loads, in one tight loop, what the batch looks at of each lease: its
 * state, its lock's holder, the first bytes of the lock's name and of the
 * lease's owner, into ok[i] (held in session mode, holding its lock).
 * Each is a memory miss at a million leases (a TLB miss too: software
 * prefetches of such lines did not help on the VM measured);
 * independent loads in a short loop overlap, where one lease after
 * another, each between two calls, would wait for each in turn. */
static void touch(struct lease *const *cand, unsigned n, bool *ok)
{
	unsigned char sink = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct lease *l = cand[i];
		ok[i] = swept(l) && l->lock->held == l;
		sink ^= (unsigned char)(l->lock->name[0] ^ l->owner[0]);
	}
	__asm__ volatile("" : : "r"(sink)); /* the loads are kept */
}

/* The walk's next STORE_BATCH_MAX leases; those held in session mode,
 * each while it holds its lock, into the batch; the cursor moves past
 * them. The list is followed first, touching only each lease's link (a
 * miss a lease, one after another), the rest looked at after (touch). */
static unsigned walk(struct lt_sweep *sw)
{
	struct lease *cand[STORE_BATCH_MAX];
	bool ok[STORE_BATCH_MAX];
	unsigned n = 0, k = 0;
	struct lease *l = sw->cursor;
	for (; l != NULL && n < STORE_BATCH_MAX; l = l->next)
		cand[n++] = l;
	sw->cursor = l;
	touch(cand, n, ok);
	for (unsigned i = 0; i < n; i++) {
		struct lease *c = cand[i];
		if (!ok[i])
			continue;
		sw->entries[k].name = c->lock->name;
		snprintf(sw->owners[k], sizeof(sw->owners[k]), "%s", c->owner);
		c->lock->refs++; /* the batch's, so that the lock outlives it */
		sw->sent_locks[k++] = c->lock;
	}
	return k;
}

/* The next batch of this period's leases. */
static void send_batch(struct lt_sweep *sw)
{
	unsigned k = walk(sw);
	sw->sent++;
	if (k == 0)
		return;
	sw->res = (struct store_batch_result){.entries = sw->entries, .count = k};
	sw->call = store_batch_read(sw->t->store, &sw->res, on_batch, sw);
	if (sw->call == NULL) { /* out of memory: these wait for the next period */
		for (unsigned i = 0; i < k; i++)
			lt_lock_unref(sw->sent_locks[i]);
		return;
	}
	sw->stats.batches++;
	sw->stats.items += k;
}

/* When batch i of the period is due. */
static int64_t due_ms(const struct lt_sweep *sw, unsigned i)
{
	return sw->start_ms + (int64_t)i * sw->period_ms / (int64_t)sw->batches;
}

/* Sends what is due, then arms the timer for the next (none while a
 * batch is in flight: its answer goes on). */
static void step(struct lt_sweep *sw)
{
	int64_t now = clock_now_ms(sw->t->clock);
	if (sw->call != NULL)
		return;
	if (now >= sw->start_ms + sw->period_ms && sw->cursor == NULL)
		new_period(sw, now); /* behind: this period's last batches first */
	if (sw->cursor != NULL && now >= due_ms(sw, sw->sent))
		send_batch(sw);
	if (sw->call != NULL)
		return;
	timer_arm_at(&sw->timer,
		     sw->cursor != NULL ? due_ms(sw, sw->sent) : sw->start_ms + sw->period_ms);
}

static void tick(void *arg)
{
	step(arg);
}

/* An item naming this replica's session under an owner that nothing here
 * holds or is writing: released, conditioned on the item as read
 * (lt_replica_untracked). Called while the lease the read was for still
 * holds the lock (under another owner). */
static void release_untracked(struct lt_sweep *sw, struct lock *lock, const struct lock_item *it)
{
	if (lt_replica_untracked(lock, it))
		sw->stats.orphans++;
}

/* Entry i of the batch, read: its lease judged (still the one it was
 * sent for), an untracked item of this session released. */
static void judge(struct lt_sweep *sw, unsigned i)
{
	struct lock *lock = sw->sent_locks[i];
	const struct lock_item *it = &sw->entries[i].item;
	struct lease *l = lock->held;
	if (!swept(l) || strcmp(l->owner, sw->owners[i]) != 0)
		return; /* changed since the read was sent: nothing to say */
	const char *key = lt_replica_key_of(sw->t, l->sess_gen);
	if (key == NULL)
		return; /* its session ended: lost already, or about to be */
	if (it->exists && it->has_owner && strcmp(it->owner, l->owner) == 0 &&
	    strcmp(it->session, key) == 0)
		return; /* as it should be */
	sw->stats.lost++;
	release_untracked(sw, lock, it); /* first: the loss may kick a waiter's write */
	(void)lt_lease_refused(l, it);	 /* its lost callback may free l */
}

static void on_batch(void *arg)
{
	struct lt_sweep *sw = arg;
	unsigned k = sw->res.count;
	sw->call = NULL;
	if (sw->res.status != STORE_OK)
		sw->stats.failed++;
	for (unsigned i = 0; i < k; i++)
		if (sw->entries[i].read)
			judge(sw, i);
	for (unsigned i = 0; i < k; i++)
		lt_lock_unref(sw->sent_locks[i]);
	step(sw);
}

struct lt_sweep *lt_sweep_new(struct locktable *t, int64_t period_ms)
{
	if (period_ms == 0)
		period_ms = LT_SWEEP_DEFAULT_MS;
	if (period_ms < LT_SWEEP_MIN_MS || period_ms > LT_SWEEP_MAX_MS)
		return NULL;
	struct lt_sweep *sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return NULL;
	sw->t = t;
	sw->period_ms = period_ms;
	sw->start_ms = clock_now_ms(t->clock);
	timer_init(&sw->timer, t->clock, tick, sw);
	timer_arm_at(&sw->timer, sw->start_ms + period_ms);
	return sw;
}

void lt_sweep_free(struct lt_sweep *sw)
{
	if (sw == NULL)
		return;
	store_cancel(sw->t->store, sw->call); /* lt_free frees the locks */
	timer_cancel(&sw->timer);
	free(sw);
}

void lt_sweep_unlinked(struct lt_sweep *sw, const struct lease *l)
{
	if (sw != NULL && sw->cursor == l)
		sw->cursor = l->next;
}

const struct lt_sweep_stats *lt_sweep_stats(const struct lt_sweep *sw)
{
	return &sw->stats;
}
