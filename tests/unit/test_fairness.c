/*
 * Fair across replicas (core/locktable.c, "Fair across replicas"), on the
 * embedded store with the fake clock: several locktables on one store act
 * as replicas. The announcement, the holder's decision to release to the
 * store instead of handing on, the reservation window, the withdrawal, and
 * that takeover timing is untouched. Request counts are asserted exactly
 * where the rule fixes them; waits against the stated bound.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000
#define POLL  (LEASE / 3)

static uint64_t req(struct fx *f, enum store_op op)
{
	return fx_req(f, op);
}

static struct lock_item item_of(struct fx *f, const char *name)
{
	struct lock_item it;
	assert_true(store_read_now(f->store, name, &it));
	return it;
}

/* ---- clients in an acquire/release loop, one lock ---- */

#define CL_MAX 12

struct cl {
	int lt;		 /* the replica it talks to */
	struct fx_acq a; /* its wait */
	struct lt_wait *w;
	struct lease *held;
	int64_t wait_from, release_at;
	int acquisitions;
	int64_t max_wait;
};

struct loop {
	struct fx *f;
	struct cl c[CL_MAX];
	int n;
	int64_t hold_ms;
	int order[4096]; /* which client acquired, in order */
	int norder;
	int64_t max_wait;
	int cross; /* acquisitions on another replica than the one before */
	int last_lt;
};

static void cl_wait(struct loop *lp, struct cl *c)
{
	memset(&c->a, 0, sizeof(c->a));
	c->wait_from = fx_now(lp->f);
	c->w = fx_acquire(lp->f, c->lt, "job", LEASE, true, 0, &c->a);
	assert_non_null(c->w);
}

static void loop_start(struct loop *lp, struct fx *f, int n, const int *lts, int64_t hold_ms)
{
	memset(lp, 0, sizeof(*lp));
	lp->f = f;
	lp->n = n;
	lp->hold_ms = hold_ms;
	lp->last_lt = -1;
	for (int i = 0; i < n; i++) {
		lp->c[i].lt = lts[i];
		cl_wait(lp, &lp->c[i]);
		fx_run(f);
	}
}

/* Runs the loop for ms of fake time, a millisecond at a time: a client
 * that got the lock holds it hold_ms, releases it and waits again. */
static void loop_run(struct loop *lp, int64_t ms)
{
	for (int64_t t = 0; t < ms; t++) {
		fx_advance(lp->f, 1);
		for (int i = 0; i < lp->n; i++) {
			struct cl *c = &lp->c[i];
			if (c->held == NULL && c->a.done) {
				assert_non_null(c->a.lease);
				c->held = c->a.lease;
				c->a.done = false;
				c->release_at = fx_now(lp->f) + lp->hold_ms;
				c->acquisitions++;
				int64_t w = fx_now(lp->f) - c->wait_from;
				if (w > c->max_wait)
					c->max_wait = w;
				if (w > lp->max_wait)
					lp->max_wait = w;
				if (lp->norder < 4096)
					lp->order[lp->norder++] = i;
				if (lp->last_lt >= 0 && lp->last_lt != c->lt)
					lp->cross++;
				lp->last_lt = c->lt;
			}
			if (c->held != NULL && fx_now(lp->f) >= c->release_at) {
				lease_release(c->held);
				c->held = NULL;
				cl_wait(lp, c);
			}
		}
	}
}

static void loop_stop(struct loop *lp)
{
	for (int i = 0; i < lp->n; i++) {
		struct cl *c = &lp->c[i];
		if (c->held != NULL)
			lease_release(c->held);
		else if (c->a.done && c->a.lease != NULL)
			lease_release(c->a.lease);
		else if (!c->a.done)
			lt_acquire_cancel(c->w);
	}
	fx_run(lp->f);
}

static int total_acquisitions(const struct loop *lp)
{
	int n = 0;
	for (int i = 0; i < lp->n; i++)
		n += lp->c[i].acquisitions;
	return n;
}

static uint64_t requests(struct fx *f)
{
	return store_requests_total(f->store);
}

static void loop_print(const char *what, const struct loop *lp, uint64_t reqs)
{
	int mn = 1 << 30, mx = 0;
	for (int i = 0; i < lp->n; i++) {
		mn = lp->c[i].acquisitions < mn ? lp->c[i].acquisitions : mn;
		mx = lp->c[i].acquisitions > mx ? lp->c[i].acquisitions : mx;
	}
	print_message("# %s: %d acquisitions (%d across replicas), per client %d..%d, longest wait "
		      "%lld ms, %.3f requests per handover\n",
		      what, total_acquisitions(lp), lp->cross, mn, mx, (long long)lp->max_wait,
		      (double)reqs / total_acquisitions(lp));
}

/* ---- one replica: what local contention saves is kept ---- */

static void one_replica_fifo_one_write_per_handoff(void **state)
{
	struct fx *f = fx_new(1, true);
	struct loop lp;
	const int lts[4] = {0, 0, 0, 0};
	loop_start(&lp, f, 4, lts, 5);
	loop_run(&lp, 2000);
	uint64_t reqs = requests(f);
	loop_print("1 replica, 4 clients", &lp, reqs);
	/* FIFO: the clients take turns in the order they queued */
	assert_true(lp.norder > 300);
	for (int i = 0; i < lp.norder; i++)
		assert_int_equal(lp.order[i], i % 4);
	/* one conditional write per hand-off, nothing else */
	assert_int_equal(reqs, (uint64_t)total_acquisitions(&lp));
	assert_int_equal(req(f, STORE_ACQUIRE), (uint64_t)total_acquisitions(&lp));
	assert_int_equal(req(f, STORE_ANNOUNCE), 0);
	assert_int_equal(req(f, STORE_READ), 0);
	loop_stop(&lp);
	fx_free(f);
}

/* ---- several replicas ---- */

/* The bound of locktable.c: with R replicas, before a replica's turn come
 * at most R - 1 turns of others (a round and at least half a poll
 * interval each, here 3 clients x 5 ms < P/2) plus, per turn, a poll
 * interval for the next replica to read the release, and one poll
 * interval before announcing. Asserted: (R - 1) x (P/2 + round + P) + 2P. */
static int64_t bound_ms(int replicas, int64_t round_ms)
{
	return (replicas - 1) * (POLL / 2 + round_ms + POLL) + 2 * POLL;
}

static void replicas_loop(int replicas, int per_replica, const char *what)
{
	struct fx *f = fx_new(replicas, true);
	struct loop lp;
	int lts[CL_MAX];
	int n = replicas * per_replica;
	for (int i = 0; i < n; i++)
		lts[i] = i % replicas;
	loop_start(&lp, f, n, lts, 5);
	uint64_t r0 = requests(f);
	loop_run(&lp, 60000);
	uint64_t reqs = requests(f) - r0;
	loop_print(what, &lp, reqs);
	for (int i = 0; i < n; i++)
		if (lp.c[i].acquisitions == 0)
			fail_msg("client %d on replica %d never acquired", i, lp.c[i].lt);
	int64_t bound = bound_ms(replicas, per_replica * 5);
	if (lp.max_wait > bound)
		fail_msg("longest wait %lld ms, bound %lld ms", (long long)lp.max_wait,
			 (long long)bound);
	assert_true(lp.cross >= 60000 / bound - 1); /* turns keep coming */
	assert_true((double)reqs / total_acquisitions(&lp) <= 1.5);
	/* announcements are writes per wait (one per turn), not per poll */
	assert_true(req(f, STORE_ANNOUNCE) <= (uint64_t)lp.cross + replicas);
	loop_stop(&lp);
	fx_free(f);
}

static void two_replicas_every_client_acquires(void **state)
{
	replicas_loop(2, 3, "2 replicas, 3 clients each");
}

static void three_replicas_every_client_acquires(void **state)
{
	replicas_loop(3, 2, "3 replicas, 2 clients each");
}

/* ---- the rules one by one ---- */

/* A crashed holder: the waiter announces itself after a poll interval,
 * which leaves rvn alone, and takes over exactly one lease after it first
 * read the holder, as without the announcement; the takeover removes it. */
static void announcement_leaves_takeover_timing(void **state)
{
	struct fx *f = fx_new(2, true);
	fx_simulate_holder(f, "job", LEASE, "crashed-pod");
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s", item_of(f, "job").rvn);
	struct fx_acq a;
	fx_acquire(f, 1, "job", LEASE, true, 0, &a);
	fx_run(f);
	assert_int_equal(req(f, STORE_ANNOUNCE), 0); /* not at the first answer */
	fx_advance(f, POLL);
	assert_int_equal(req(f, STORE_ANNOUNCE), 1);
	struct lock_item it = item_of(f, "job");
	assert_true(it.has_waiter);
	assert_int_equal(it.waiter_ms, POLL);
	assert_string_equal(it.rvn, rvn); /* the waiter's lease timer is untouched */
	assert_string_equal(it.holder, "crashed-pod");
	fx_advance(f, LEASE - POLL - 1);
	assert_false(a.done); /* not a tick before */
	fx_advance(f, 1);
	assert_non_null(a.lease);
	assert_true(lease_takeover(a.lease));
	assert_int_equal(lease_token(a.lease), 2);
	assert_int_equal(req(f, STORE_ANNOUNCE), 1); /* once per wait, not per poll */
	assert_false(item_of(f, "job").has_waiter);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* The holder sees the announcement in its renewal's answer, hands on to
 * the local waiters queued then (its round), then releases to the store
 * instead of handing on; its later local waiters leave the item to the
 * announced waiter, which takes it at its next poll. */
static void holder_releases_to_the_store_after_its_round(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l0 = fx_take(f, 0, "job", LEASE);
	struct fx_acq a1, a2, a3, b;
	fx_acquire(f, 0, "job", LEASE, true, 0, &a1);
	fx_acquire(f, 0, "job", LEASE, true, 0, &a2);
	fx_acquire(f, 1, "job", LEASE, true, 0, &b);
	fx_run(f);
	fx_advance(f, 2 * POLL + 100); /* b announced at POLL; renewals at POLL, 2 POLL */
	assert_int_equal(req(f, STORE_ANNOUNCE), 1);
	assert_int_equal(req(f, STORE_RENEW), 2);
	uint64_t rel0 = req(f, STORE_RELEASE), w0 = req(f, STORE_ACQUIRE);

	lease_release(l0); /* the round: a1, a2 (queued when it was seen) */
	fx_run(f);
	assert_non_null(a1.lease);
	assert_int_equal(req(f, STORE_ACQUIRE) - w0, 1);
	lease_release(a1.lease);
	fx_run(f);
	assert_non_null(a2.lease);
	assert_int_equal(req(f, STORE_ACQUIRE) - w0, 2);
	assert_int_equal(req(f, STORE_RELEASE), rel0); /* hand-offs so far */
	fx_acquire(f, 0, "job", LEASE, true, 0, &a3);  /* after the round */
	lease_release(a2.lease);
	fx_run(f);
	assert_int_equal(req(f, STORE_RELEASE) - rel0, 1); /* released to the store */
	struct lock_item it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_true(it.has_waiter); /* reserved for b */
	assert_false(a3.done);
	int64_t released = fx_now(f);
	uint64_t w1 = req(f, STORE_ACQUIRE);
	while (!b.done && fx_now(f) - released <= POLL)
		fx_advance(f, 1);
	assert_non_null(b.lease);			 /* at its next poll */
	assert_int_equal(req(f, STORE_ACQUIRE) - w1, 1); /* b's write only */
	assert_false(a3.done);
	assert_false(item_of(f, "job").has_waiter);
	print_message("# announced waiter took the released lock after %lld ms (poll %d ms)\n",
		      (long long)(fx_now(f) - released), POLL);
	lease_release(b.lease);
	fx_run(f);
	fx_advance(f, 3 * POLL);
	assert_non_null(a3.lease);
	lease_release(a3.lease);
	fx_run(f);
	fx_free(f);
}

/* A holder without local waiters gives the lock back as usual; the
 * released item is reserved, so a new local wait does not overtake. */
static void released_lock_is_reserved_for_the_announced_waiter(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l0 = fx_take(f, 0, "job", LEASE);
	struct fx_acq a, b;
	fx_acquire(f, 1, "job", LEASE, true, 0, &b);
	fx_run(f);
	fx_advance(f, POLL + 10);
	assert_int_equal(req(f, STORE_ANNOUNCE), 1);
	lease_release(l0);
	fx_run(f);
	fx_acquire(f, 0, "job", LEASE, false, 0, &a); /* a try: refused */
	fx_run(f);
	assert_true(a.done);
	assert_null(a.lease);
	fx_advance(f, POLL);
	assert_non_null(b.lease);
	lease_release(b.lease);
	fx_run(f);
	fx_free(f);
}

static void ignore_result(void *arg, const struct store_result *res)
{
	assert_int_equal(res->status, STORE_OK);
}

/* A waiter that announced itself and crashed costs one reservation window
 * (two of its poll intervals), then a local waiter takes the lock and
 * removes the announcement. */
static void crashed_announced_waiter_costs_one_window(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l0 = fx_take(f, 0, "job", LEASE);
	struct fx_acq a1, a2;
	fx_acquire(f, 0, "job", LEASE, true, 0, &a1);
	struct store_req ann = {
		.op = STORE_ANNOUNCE, .name = "job", .waiter = "ghost", .waiter_ms = POLL};
	assert_non_null(store_submit(f->store, &ann, ignore_result, NULL));
	fx_run(f);
	assert_true(item_of(f, "job").has_waiter);
	fx_advance(f, POLL + 10); /* the renewal sees it */
	lease_release(l0);	  /* the round: a1 */
	fx_run(f);
	assert_non_null(a1.lease);
	fx_acquire(f, 0, "job", LEASE, true, 0, &a2);
	lease_release(a1.lease); /* yields: reserved for the ghost */
	fx_run(f);
	int64_t released = fx_now(f);
	assert_false(item_of(f, "job").has_owner);
	while (!a2.done && fx_now(f) - released < 4 * POLL)
		fx_advance(f, 1);
	assert_non_null(a2.lease);
	int64_t waited = fx_now(f) - released;
	print_message("# a crashed announced waiter cost %lld ms (window %d ms)\n",
		      (long long)waited, 2 * POLL);
	assert_true(waited >= 2 * POLL);
	assert_true(waited <= 2 * POLL + (2 * POLL) / 3);
	assert_false(item_of(f, "job").has_waiter);
	lease_release(a2.lease);
	fx_run(f);
	fx_free(f);
}

/* The last waiter of a replica gives up: its announcement is withdrawn
 * (one write), and the lock is free for anyone once released. */
static void announcement_withdrawn_when_the_wait_ends(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l0 = fx_take(f, 0, "job", LEASE);
	struct fx_acq b, c;
	fx_acquire(f, 1, "job", LEASE, true, POLL + 500, &b);
	fx_run(f);
	fx_advance(f, POLL + 10);
	assert_true(item_of(f, "job").has_waiter);
	fx_advance(f, 500);
	assert_true(b.done);
	assert_null(b.lease);
	assert_int_equal(req(f, STORE_WITHDRAW), 1);
	assert_false(item_of(f, "job").has_waiter);
	lease_release(l0);
	fx_run(f);
	fx_acquire(f, 1, "job", LEASE, false, 0, &c);
	fx_run(f);
	assert_non_null(c.lease);
	lease_release(c.lease);
	fx_run(f);
	fx_free(f);
}

/* An election on another replica gets a turn while the leaders of one
 * replica resign to each other. */
struct camp {
	struct fx *f;
	struct election *e;
	int terms;
	struct lease *lease;
	int64_t at;
};

static void camp_lead(void *arg, struct lease *lease)
{
	struct camp *c = arg;
	c->terms++;
	c->lease = lease;
	c->at = fx_now(c->f);
}

static struct election *camp_start(struct fx *f, int i, struct camp *c)
{
	static const struct election_cbs cbs = {.lead = camp_lead};
	struct election_args ea = {.name = "leader", .lease_ms = LEASE};
	char msg[128];
	c->f = f;
	c->lease = NULL;
	c->e = election_start(f->lt[i], &ea, &cbs, c, msg, sizeof(msg));
	assert_non_null(c->e);
	return c->e;
}

static void campaign_on_another_replica_gets_a_turn(void **state)
{
	struct fx *f = fx_new(2, true);
	struct camp c[3];
	const int lt_of[3] = {0, 0, 1};
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 3; i++) {
		camp_start(f, lt_of[i], &c[i]);
		fx_run(f);
	}
	int64_t t0 = fx_now(f);
	while (c[2].terms == 0 && fx_now(f) - t0 < 20000) {
		fx_advance(f, 1);
		for (int i = 0; i < 2; i++) /* replica 0's leaders resign after 5 ms */
			if (c[i].lease != NULL && fx_now(f) - c[i].at >= 5) {
				election_stop(c[i].e, ELECTION_WORK_RETURNED);
				camp_start(f, 0, &c[i]);
			}
	}
	int64_t waited = fx_now(f) - t0;
	print_message("# campaign on the other replica led after %lld ms (%d + %d local terms)\n",
		      (long long)waited, c[0].terms, c[1].terms);
	assert_int_equal(c[2].terms, 1);
	assert_true(c[0].terms + c[1].terms > 20); /* local hand-offs went on meanwhile */
	assert_true(waited <= bound_ms(2, 10));
	for (int i = 0; i < 3; i++)
		election_stop(c[i].e, ELECTION_CANCELLED);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_replica_fifo_one_write_per_handoff),
		cmocka_unit_test(two_replicas_every_client_acquires),
		cmocka_unit_test(three_replicas_every_client_acquires),
		cmocka_unit_test(announcement_leaves_takeover_timing),
		cmocka_unit_test(holder_releases_to_the_store_after_its_round),
		cmocka_unit_test(released_lock_is_reserved_for_the_announced_waiter),
		cmocka_unit_test(crashed_announced_waiter_costs_one_window),
		cmocka_unit_test(announcement_withdrawn_when_the_wait_ends),
		cmocka_unit_test(campaign_on_another_replica_gets_a_turn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
