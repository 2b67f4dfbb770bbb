/*
 * The waiting side of session mode (docs/design/replica-heartbeat.md,
 * "Takeover"; core/lt_swait.c and the lock table's use of it), on the
 * embedded store and the fake clock: no test sleeps. The holder replica is
 * simulated by writing to the store directly: its session (store_session
 * CREATE, BEAT) and its lock (an ACQUIRE with .session), as a replica in
 * `--heartbeat replica` would. The waiter is a real locktable.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/store/store_revoke.h"
#include "core/store/store_session.h"
#include "tests/support/lt_fixture.h"

#define SLEASE	3000 /* the holder's real lease (sleaseMs, maxLeaseMs) */
#define WLEASE	5000 /* the waiter's lease */
#define REPLICA "holder-1"
#define INC	"0123456789abcdef0123456789abcdef"
#define SKEY	"SESSION#" REPLICA "#" INC

struct sbox {
	bool done;
	struct store_session_result res;
};

static void got_sess(void *arg, const struct store_session_result *res)
{
	struct sbox *b = arg;
	b->done = true;
	b->res = *res;
}

struct rbox {
	bool done;
	struct store_result res;
};

static void got_res(void *arg, const struct store_result *res)
{
	struct rbox *b = arg;
	b->done = true;
	b->res = *res;
}

/* Submits a session request of the holder (no latency of the store set:
 * answered at once). */
static struct store_session_result sess_op(struct fx *f, enum store_session_op op, const char *rvn)
{
	struct sbox b = {0};
	struct store_session_req req = {.op = op,
					.replica = REPLICA,
					.incarnation = INC,
					.rvn = rvn,
					.max_lease_ms = SLEASE,
					.name = "job"};
	assert_non_null(store_session_submit(f->store, &req, got_sess, &b));
	fx_run(f);
	assert_true(b.done);
	return b.res;
}

static int nbeat;
/* The holder's heartbeat, landing now (sent without waiting for it). */
static void beat_now(struct fx *f, struct sbox *b)
{
	char rvn[32];
	snprintf(rvn, sizeof(rvn), "beat-%d", ++nbeat);
	struct store_session_req req = {.op = STORE_SESSION_BEAT,
					.replica = REPLICA,
					.incarnation = INC,
					.rvn = rvn,
					.seq = nbeat,
					.max_lease_ms = SLEASE};
	assert_non_null(store_session_submit(f->store, &req, got_sess, b));
}

static void beat(struct fx *f)
{
	struct sbox b = {0};
	beat_now(f, &b);
	fx_run(f);
	assert_true(b.done);
	assert_int_equal(b.res.status, STORE_OK);
}

static void create_session(struct fx *f)
{
	assert_int_equal(sess_op(f, STORE_SESSION_CREATE, "beat-0").status, STORE_OK);
}

/* The holder's lock: an ACQUIRE in session mode; its item. */
static struct lock_item hold(struct fx *f, const char *name)
{
	struct rbox b = {0};
	char rvn[33];
	store_new_id(rvn);
	struct store_req req = {.op = STORE_ACQUIRE,
				.name = name,
				.owner = "holder-owner",
				.rvn = rvn,
				.lease_ms = SLEASE,
				.holder = "the-holder",
				.session = SKEY};
	assert_non_null(store_submit(f->store, &req, got_res, &b));
	fx_run(f);
	assert_true(b.done);
	assert_int_equal(b.res.status, STORE_OK);
	assert_string_equal(b.res.item.session, SKEY);
	assert_int_equal(b.res.item.slease_ms, SLEASE);
	assert_int_equal(b.res.item.lease_ms, STORE_SESSION_LOCK_LEASE_MS);
	return b.res.item;
}

/* The holder writes its lock again under the same owner and session (a
 * new rvn): RENEW in session mode. */
static void rewrite(struct fx *f, const char *name, const struct lock_item *it)
{
	struct rbox b = {0};
	char rvn[33];
	store_new_id(rvn);
	struct store_req req = {.op = STORE_RENEW,
				.name = name,
				.owner = it->owner,
				.rvn = rvn,
				.lease_ms = SLEASE,
				.holder = "the-holder",
				.session = SKEY};
	assert_non_null(store_submit(f->store, &req, got_res, &b));
	fx_run(f);
	assert_int_equal(b.res.status, STORE_OK);
}

static struct lock_item item_of(struct fx *f, const char *name)
{
	struct lock_item it;
	assert_true(store_read_now(f->store, name, &it));
	return it;
}

/* Advances by step until pred or limit ms passed; the time it took. */
static int64_t advance_until(struct fx *f, bool (*pred)(struct fx *, void *), void *arg,
			     int64_t step, int64_t limit)
{
	int64_t t0 = fx_now(f);
	while (!pred(f, arg) && fx_now(f) - t0 < limit)
		fx_advance(f, step);
	return fx_now(f) - t0;
}

static bool acq_done(struct fx *f, void *arg)
{
	return ((struct fx_acq *)arg)->done;
}

/* The store has seen more than *arg requests of the op in arg[1]. */
struct count_box {
	enum store_op op;
	uint64_t above;
};
static bool count_above(struct fx *f, void *arg)
{
	struct count_box *c = arg;
	return fx_req(f, c->op) > c->above;
}

/* Holds the lock "job" in session mode with a live session; a waiter of
 * locktable 0 queued on it and its first reads done. */
static struct lock_item setup(struct fx *f, struct fx_acq *a)
{
	nbeat = 0;
	create_session(f);
	struct lock_item it = hold(f, "job");
	fx_acquire(f, 0, "job", WLEASE, true, 0, a);
	fx_run(f);
	assert_false(a->done);
	return it;
}

/* Granted by a takeover, with the next token; the item is the waiter's,
 * written per lease (step 1: replicas still write per lease). */
static void assert_taken_over(struct fx *f, const struct fx_acq *a, const struct lock_item *held)
{
	assert_true(a->done);
	assert_false(a->error);
	assert_non_null(a->lease);
	assert_true(lease_takeover(a->lease));
	assert_int_equal(lease_token(a->lease), held->fence + 1);
	assert_int_equal(f->obs.acquisitions[1], 1);
	assert_int_equal(fx_events(f, OBS_TAKEOVER), 1);
	assert_string_equal(fx_last(f, OBS_TAKEOVER)->prev_holder, "the-holder");
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.session, "");
	assert_int_equal(it.lease_ms, WLEASE);
}

/* While the session beats (every third of its lease), the lock is never
 * taken over, though its rvn stands still for ten of its leases; once the
 * beats stop, the session is killed and the lock taken over a lease after. */
static void no_takeover_while_the_session_beats(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	struct lock_item held = setup(f, &a);
	for (int i = 0; i < 30; i++) {
		fx_advance(f, SLEASE / 3);
		beat(f);
		assert_false(a.done);
	}
	assert_int_equal(fx_req(f, STORE_RELEASE), 0); /* no KILL */
	assert_true(fx_req(f, STORE_READ) >= 30);      /* polled all along */
	int64_t took = advance_until(f, acq_done, &a, 10, 60000);
	/* a lease of the session's count, from a read that returned after
	 * the last beat, then at most a poll interval */
	assert_true(took >= SLEASE);
	assert_true(took <= SLEASE + SLEASE / 3 + 10);
	assert_taken_over(f, &a, &held);
	struct store_session_result s = sess_op(f, STORE_SESSION_READ, NULL);
	assert_true(s.session.has_dead); /* killed on the way */
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* The KILL did not land (an error): the session is live with the rvn
 * watched, both counts stood still a lease: the transaction with the RVN
 * check takes it over (a lease, sleaseMs, not the 10-year leaseMs). */
static void takeover_with_rvn_check_after_the_lease(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	struct lock_item held = setup(f, &a);
	store_memory_set_op_latency(f->store, STORE_RELEASE, 50); /* the KILL */
	struct count_box kill = {STORE_RELEASE, 0};
	int64_t took = advance_until(f, count_above, &kill, 1, 60000);
	assert_true(took >= SLEASE);
	assert_true(took <= SLEASE + 10);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException"); /* it fails */
	uint64_t w0 = fx_req(f, STORE_ACQUIRE);
	fx_advance(f, 60);
	assert_true(a.done);
	assert_int_equal(fx_req(f, STORE_ACQUIRE), w0 + 1); /* one write: the transaction */
	assert_taken_over(f, &a, &held);
	assert_false(sess_op(f, STORE_SESSION_READ, NULL).session.has_dead);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* A heartbeat landing between the waiter's read and its takeover: the
 * session's check refuses the transaction (session_refused); nothing is
 * taken, the waiter polls on and counts the new rvn from its next read. */
static void beat_between_read_and_takeover_is_refused(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	struct lock_item held = setup(f, &a);
	store_memory_set_op_latency(f->store, STORE_RELEASE, 50);
	struct count_box kill = {STORE_RELEASE, 0};
	advance_until(f, count_above, &kill, 1, 60000);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException");
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 50); /* the takeover */
	struct count_box tx = {STORE_ACQUIRE, fx_req(f, STORE_ACQUIRE)};
	advance_until(f, count_above, &tx, 1, 1000);
	assert_true(count_above(f, &tx)); /* the takeover is on its way */
	uint64_t r0 = fx_req(f, STORE_READ);
	struct sbox b = {0};
	beat_now(f, &b); /* lands first */
	fx_advance(f, 60);
	assert_true(b.done);
	assert_int_equal(b.res.status, STORE_OK);
	assert_false(a.done);
	assert_string_equal(item_of(f, "job").owner, "holder-owner");
	assert_int_equal(item_of(f, "job").fence, held.fence);
	assert_true(fx_req(f, STORE_READ) > r0); /* polling goes on */
	/* beating on: never taken */
	for (int i = 0; i < 6; i++) {
		fx_advance(f, SLEASE / 3);
		beat(f);
		assert_false(a.done);
	}
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 0);
	store_memory_set_op_latency(f->store, STORE_RELEASE, 0);
	advance_until(f, acq_done, &a, 10, 60000);
	assert_taken_over(f, &a, &held);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* The session the lock names is missing (never made, or deleted): an
 * observed value like any other. Taken over by the transaction with the
 * ABSENT check a lease after; a session created between the read and the
 * write refuses it. */
static void missing_session_takeover_with_absent_check(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	struct lock_item held = hold(f, "job");
	fx_acquire(f, 0, "job", WLEASE, true, 0, &a);
	fx_run(f);
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 100);
	struct count_box tx = {STORE_ACQUIRE, fx_req(f, STORE_ACQUIRE)};
	int64_t took = advance_until(f, count_above, &tx, 1, 60000);
	assert_true(took >= SLEASE);
	assert_true(took <= SLEASE + 10);
	assert_int_equal(fx_req(f, STORE_RELEASE), 0); /* no KILL of a missing session */
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 0);
	create_session(f); /* lands before the takeover (CREATE counts as ACQUIRE) */
	fx_advance(f, 110);
	assert_false(a.done);
	assert_string_equal(item_of(f, "job").owner, "holder-owner");
	/* the session, now live, is counted from its first read */
	took = advance_until(f, acq_done, &a, 10, 60000);
	assert_true(took >= SLEASE - 60);
	assert_taken_over(f, &a, &held);
	lease_release(a.lease);
	fx_run(f);

	/* deleted: taken over without a session (the ABSENT check passes) */
	struct fx *g = fx_new(1, true);
	create_session(g);
	held = hold(g, "job");
	assert_true(store_memory_session_delete(g->store, SKEY));
	fx_acquire(g, 0, "job", WLEASE, true, 0, &a);
	took = advance_until(g, acq_done, &a, 10, 60000);
	assert_true(took >= SLEASE);
	assert_true(took <= SLEASE + SLEASE / 3 + 10);
	assert_int_equal(fx_req(g, STORE_RELEASE), 0);
	assert_taken_over(g, &a, &held);
	lease_release(a.lease);
	fx_run(g);
	fx_free(g);
	fx_free(f);
}

/* The session stops beating; the holder writes its lock again (a new rvn,
 * same owner and session) a while later. The session is killed once its
 * own rvn stood still a lease (maxLeaseMs), but the lock is taken over
 * only once its own rvn stood still a lease: an acquire is its own proof
 * of life whatever the heartbeats say. */
static void kill_then_single_item_takeover_after_the_locks_lease(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	struct lock_item held = setup(f, &a);
	int64_t t0 = fx_now(f);
	fx_advance(f, 2000);
	rewrite(f, "job", &held);
	int64_t t_rewrite = fx_now(f);
	struct count_box kill = {STORE_RELEASE, 0};
	advance_until(f, count_above, &kill, 1, 60000);
	assert_true(fx_now(f) - t0 >= SLEASE);
	assert_true(fx_now(f) - t0 <= SLEASE + 10);
	fx_run(f);
	struct store_session_result s = sess_op(f, STORE_SESSION_READ, NULL);
	assert_true(s.session.has_dead);
	assert_false(a.done); /* the lock's own rvn has not stood still a lease */
	advance_until(f, acq_done, &a, 10, 60000);
	assert_true(fx_now(f) - t_rewrite >= SLEASE);
	assert_true(fx_now(f) - t_rewrite <= SLEASE + SLEASE / 3 + 10);
	assert_int_equal(fx_req(f, STORE_RELEASE), 1); /* one KILL */
	assert_taken_over(f, &a, &held);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* A try on a session-mode lock takes over only on its lock's watch, which
 * its reads feed: the first read of the session starts the count (a try
 * long after the lock was first seen is no takeover), a try at the KILL
 * verdict refuses without killing, the next one takes over. */
static void try_takes_over_only_on_its_watch(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	nbeat = 0;
	create_session(f);
	struct lock_item held = hold(f, "job");
	fx_acquire(f, 0, "job", WLEASE, false, 0, &a); /* seen: a write refused */
	fx_run(f);
	assert_true(a.done);
	assert_null(a.lease);
	fx_advance(f, 10 * SLEASE); /* nothing read meanwhile */
	fx_acquire(f, 0, "job", WLEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_null(a.lease); /* a read of the lock: its count starts now */
	fx_acquire(f, 0, "job", WLEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease); /* and its session's, read with it */
	fx_advance(f, SLEASE / 2);
	fx_acquire(f, 0, "job", WLEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease);
	fx_advance(f, SLEASE / 2);
	fx_acquire(f, 0, "job", WLEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease); /* the KILL verdict: a try refuses */
	assert_int_equal(fx_req(f, STORE_RELEASE), 0);
	fx_acquire(f, 0, "job", WLEASE, false, 0, &a);
	fx_run(f);
	assert_taken_over(f, &a, &held);
	assert_int_equal(fx_req(f, STORE_RELEASE), 0);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* LOCK.STATE of a session-mode lock shows sleaseMs, never the 10-year
 * leaseMs, says "session", and counts what remains on the watch. */
static void state_shows_the_session_lease(void **state)
{
	struct fx *f = fx_new(1, true);
	create_session(f);
	hold(f, "job");
	struct lt_state st = fx_state(f, "job");
	assert_true(st.held);
	assert_true(st.session);
	assert_int_equal(st.lease_ms, SLEASE);
	assert_int_equal(st.remaining_ms, SLEASE);
	struct fx_acq a;
	fx_acquire(f, 0, "job", WLEASE, true, 0, &a);
	fx_run(f);
	fx_advance(f, 1000);
	st = fx_state(f, "job");
	assert_true(st.remaining_ms > 0);
	assert_true(st.remaining_ms <= SLEASE - 1000);
	lt_acquire_cancel(NULL);
	fx_free(f);
}

struct fbox {
	bool done;
	int result;
	bool error;
	struct lt_error err;
};

static void foreign_done(void *arg, int done, const struct lt_state *st, const struct lt_error *err)
{
	struct fbox *b = arg;
	b->done = true;
	b->result = done;
	b->error = err != NULL;
	if (err != NULL)
		b->err = *err;
}

struct vbox {
	bool done;
	unsigned count;
	struct store_revoke_entry e[4];
};

static void got_revs(void *arg, const struct store_revoke_result *res)
{
	struct vbox *b = arg;
	b->done = true;
	assert_int_equal(res->status, STORE_OK);
	b->count = res->count;
	for (unsigned i = 0; i < res->count && i < 4; i++)
		b->e[i] = res->entries[i];
}

/* The revocations pending for the holder's session. */
static struct vbox revocations(struct fx *f)
{
	struct vbox b = {0};
	struct store_revoke_req req = {.op = STORE_REVOKE_READ, .session = SKEY};
	assert_non_null(store_revoke_submit(f->store, &req, got_revs, &b));
	fx_run(f);
	assert_true(b.done);
	return b;
}

/* A release by (name, token) or an operator's forced release, from a
 * replica that does not hold the lease, of a lock held in session mode:
 * the holder renews its session, not the lock, so the ending writes its
 * revocation (the entry, and the session's revSeq raised) in the same
 * transaction; once the session is gone, it writes none (nobody to tell). */
static void release_from_outside_writes_a_revocation(void **state)
{
	static const enum lt_foreign_op ops[] = {LT_FOREIGN_RELEASE, LT_FOREIGN_FORCE};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct fx *f = fx_new(1, true);
		create_session(f);
		struct lock_item held = hold(f, "job");
		struct fbox b = {0};
		struct lt_foreign_req req = {.name = "job", .op = ops[i], .token = held.fence};
		assert_true(lt_foreign(f->lt[0], &req, foreign_done, &b));
		fx_run(f);
		assert_true(b.done);
		assert_false(b.error);
		assert_int_equal(b.result, 1);
		struct lock_item it = item_of(f, "job");
		assert_false(it.has_owner);
		assert_int_equal(it.freed, held.fence);
		assert_int_equal(it.freed_forced, ops[i] == LT_FOREIGN_FORCE);
		assert_int_equal(sess_op(f, STORE_SESSION_READ, NULL).session.rev_seq, 1);
		struct vbox v = revocations(f);
		assert_int_equal(v.count, 1);
		assert_string_equal(v.e[0].name, "job");
		assert_int_equal(v.e[0].fence, held.fence);

		/* the session gone: released all the same, without a revocation */
		held = hold(f, "job");
		assert_true(store_memory_session_delete(f->store, SKEY));
		b = (struct fbox){0};
		req.token = held.fence;
		assert_true(lt_foreign(f->lt[0], &req, foreign_done, &b));
		fx_run(f);
		assert_true(b.done);
		assert_false(b.error);
		assert_int_equal(b.result, 1);
		assert_false(item_of(f, "job").has_owner);
		assert_int_equal(revocations(f).count, 1); /* the first one only */
		fx_free(f);
	}
}

/* An orphaned lease held in session mode, adopted on another replica: the
 * adopt writes its revocation too (the lease's holder would not learn of
 * it otherwise). */
static void adopt_writes_a_revocation(void **state)
{
	static const char hash[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char hash2[] =
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	struct fx *f = fx_new(1, true);
	create_session(f);
	struct rbox b = {0};
	struct store_req req = {.op = STORE_ACQUIRE,
				.name = "job",
				.owner = "holder-owner",
				.rvn = "r1",
				.lease_ms = SLEASE,
				.secret_hash = hash,
				.session = SKEY};
	assert_non_null(store_submit(f->store, &req, got_res, &b));
	fx_run(f);
	struct store_req orphan = {.op = STORE_ORPHAN, .name = "job", .owner = "holder-owner"};
	b.done = false;
	assert_non_null(store_submit(f->store, &orphan, got_res, &b));
	fx_run(f);
	assert_int_equal(b.res.status, STORE_OK);
	struct fx_acq a = {0};
	struct lt_adopt_args args = {
		.name = "job", .token = 1, .secret_hash = hash, .new_secret_hash = hash2};
	assert_true(lt_adopt(f->lt[0], &args, fx_acquire_cb, &a));
	fx_run(f);
	assert_true(a.done);
	assert_false(a.error);
	assert_non_null(a.lease);
	assert_int_equal(lease_token(a.lease), 1);
	assert_int_equal(sess_op(f, STORE_SESSION_READ, NULL).session.rev_seq, 1);
	struct vbox v = revocations(f);
	assert_int_equal(v.count, 1);
	assert_string_equal(v.e[0].name, "job");
	assert_int_equal(v.e[0].fence, 1);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* "Fair across replicas" on a session-mode lock: the waiter announces
 * itself on the lock item a poll interval of the real lease (sleaseMs)
 * after it found it held, and its takeover removes the announcement. */
static void announcement_on_a_session_mode_lock(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	struct lock_item held = setup(f, &a);
	assert_false(item_of(f, "job").has_waiter);
	for (int i = 0; i < 3 && !item_of(f, "job").has_waiter; i++) {
		fx_advance(f, SLEASE / 3);
		beat(f);
	}
	struct lock_item it = item_of(f, "job");
	assert_true(it.has_waiter);
	assert_int_equal(it.waiter_ms, SLEASE / 3); /* not 10 s: the real lease's */
	assert_string_equal(it.rvn, held.rvn);	    /* rvn left alone */
	advance_until(f, acq_done, &a, 10, 60000);
	assert_taken_over(f, &a, &held);
	assert_false(item_of(f, "job").has_waiter);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* An item naming a session key that is no session key: the queue fails
 * with an error naming the lock, as a malformed item does. */
static void bad_session_fails_the_queue(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lock_item it = {.exists = true,
			       .has_owner = true,
			       .has_rvn = true,
			       .has_lease = true,
			       .has_fence = true,
			       .fence = 4,
			       .lease_ms = STORE_SESSION_LOCK_LEASE_MS,
			       .slease_ms = SLEASE};
	strcpy(it.owner, "o");
	strcpy(it.rvn, "r");
	strcpy(it.type, "LOCK");
	strcpy(it.session, "SESSION#no-incarnation");
	assert_true(store_memory_put_raw(f->store, "job", &it));
	struct fx_acq a;
	fx_acquire(f, 0, "job", WLEASE, true, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_true(a.error);
	assert_string_equal(a.err.error_type, "BadSessionLock");
	assert_non_null(strstr(a.err.message, "'job'"));
	fx_free(f);
}

#define INC_B  "fedcba9876543210fedcba9876543210"
#define SKEY_B "SESSION#" REPLICA "#" INC_B

/* Session B's request (a second incarnation of the holder's replica). */
static void sess_b(struct fx *f, enum store_session_op op, const char *rvn)
{
	static int64_t seq; /* rising over every beat of the process */
	struct sbox b = {0};
	struct store_session_req req = {.op = op,
					.replica = REPLICA,
					.incarnation = INC_B,
					.rvn = rvn,
					.seq = op == STORE_SESSION_BEAT ? ++seq : 0,
					.max_lease_ms = SLEASE};
	assert_non_null(store_session_submit(f->store, &req, got_sess, &b));
	fx_run(f);
	assert_true(b.done);
	assert_int_equal(b.res.status, STORE_OK);
}

/* The queue's READ of the lock and session A is slow (longer than a
 * lease); meanwhile the lock passes to session B and a try's read shows
 * it, so the watch watches B. The slow READ's answer shows the lock under
 * B with A's item (dead): it is no read of B's session, and counts as a
 * read of the lock only — else B's lock, whose session beats, would be
 * taken over as a dead session's. */
static void read_of_a_session_no_longer_watched_counts_the_lock_only(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a, t;
	setup(f, &a);
	sess_b(f, STORE_SESSION_CREATE, "b-0");
	store_memory_set_op_latency(f->store, STORE_READ, 2 * SLEASE);
	struct count_box rd = {STORE_READ, fx_req(f, STORE_READ)};
	advance_until(f, count_above, &rd, 1, 2000); /* the slow READ is sent */
	assert_true(count_above(f, &rd));
	store_memory_set_op_latency(f->store, STORE_READ, 0);
	/* session A dies; another replica holds the lock under B */
	struct store_session_result s = sess_op(f, STORE_SESSION_READ, NULL);
	struct sbox k = {0};
	struct store_session_req kill = {.op = STORE_SESSION_KILL,
					 .replica = REPLICA,
					 .incarnation = INC,
					 .seen_rvn = s.session.rvn,
					 .by = "test"};
	assert_non_null(store_session_submit(f->store, &kill, got_sess, &k));
	fx_run(f);
	assert_int_equal(k.res.status, STORE_OK);
	struct rbox b = {0};
	struct store_req req = {.op = STORE_ACQUIRE,
				.name = "job",
				.owner = "owner-b",
				.rvn = "rvn-b",
				.lease_ms = SLEASE,
				.session = SKEY_B,
				.unconditional = true};
	assert_non_null(store_submit(f->store, &req, got_res, &b));
	fx_run(f);
	assert_int_equal(b.res.status, STORE_OK);
	fx_acquire(f, 0, "job", WLEASE, false, 0, &t); /* its read shows B */
	fx_run(f);
	assert_true(t.done);
	assert_null(t.lease);
	/* B beats on through the slow READ's answer and after */
	for (int i = 0; i < 12; i++) {
		fx_advance(f, SLEASE / 3);
		sess_b(f, STORE_SESSION_BEAT, i % 2 ? "b-1" : "b-2");
		assert_false(a.done);
	}
	assert_string_equal(item_of(f, "job").owner, "owner-b");
	fx_free(f);
}

/* With the holder's side (lt_options.heartbeat = LT_HEARTBEAT_REPLICA):
 * locktable 1 holds the lock in session mode and beats its session; the
 * waiter on locktable 0 (lease mode, step 1) never takes it while it
 * lives, and takes it about a lease after it crashed (lt_free: nothing
 * more is written), its session killed on the way. */
static void waiter_and_a_real_holder_in_replica_mode(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lt_options o = {.holder_label = "p1",
			       .heartbeat = LT_HEARTBEAT_REPLICA,
			       .replica_id = "r1",
			       .addr = "10.0.0.1:6379"};
	f->lt[1] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[1]);
	fx_run(f);
	struct lease *held = fx_take(f, 1, "job", SLEASE);
	struct lock_item it = item_of(f, "job");
	assert_string_not_equal(it.session, ""); /* held in session mode */
	assert_int_equal(it.slease_ms, SLEASE);
	struct fx_acq a;
	fx_acquire(f, 0, "job", WLEASE, true, 0, &a);
	fx_advance(f, 10 * SLEASE);
	assert_false(a.done);
	assert_true(lease_held(held));
	int64_t token = lease_token(held);
	lt_free(f->lt[1]); /* crashed */
	f->lt[1] = NULL;
	int64_t took = advance_until(f, acq_done, &a, 10, 60000);
	print_message("taken over %lld ms after the holder's crash\n", (long long)took);
	assert_true(took >= SLEASE - SLEASE / 3); /* its last beat, up to a third before */
	assert_true(took <= SLEASE + SLEASE / 3 + 10);
	assert_non_null(a.lease);
	assert_true(lease_takeover(a.lease));
	assert_int_equal(lease_token(a.lease), token + 1);
	assert_int_equal(fx_req(f, STORE_RELEASE), 1); /* its session killed */
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_takeover_while_the_session_beats),
		cmocka_unit_test(takeover_with_rvn_check_after_the_lease),
		cmocka_unit_test(beat_between_read_and_takeover_is_refused),
		cmocka_unit_test(missing_session_takeover_with_absent_check),
		cmocka_unit_test(kill_then_single_item_takeover_after_the_locks_lease),
		cmocka_unit_test(try_takes_over_only_on_its_watch),
		cmocka_unit_test(state_shows_the_session_lease),
		cmocka_unit_test(release_from_outside_writes_a_revocation),
		cmocka_unit_test(adopt_writes_a_revocation),
		cmocka_unit_test(announcement_on_a_session_mode_lock),
		cmocka_unit_test(bad_session_fails_the_queue),
		cmocka_unit_test(read_of_a_session_no_longer_watched_counts_the_lock_only),
		cmocka_unit_test(waiter_and_a_real_holder_in_replica_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
