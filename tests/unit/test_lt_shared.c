/*
 * test_lt_shared: leases on the slots of shared names (core/lt_shared.h)
 * on the fake clock, the embedded store behind several locktables (each
 * a replica): readers share a group token and shut out an exclusive
 * holder until the last one goes; readers wait for an exclusive holder; a
 * semaphore's n + 1st holder waits for a slot, which keeps its own fence;
 * a crashed holder's slot is taken over after a whole lease of its rvn
 * unchanged on the waiter's clock, never before; renewals keep a lease
 * for many leases; a slot taken from under a lease makes it lost; a lease
 * whose renewals fail runs out at its end; a name held in another mode is
 * an error; an exclusive waiter polls, never spins, while readers hold;
 * phase-fair admission: readers waiting behind a writer are granted
 * before the next writer (one replica, and across replicas), a crashed
 * admitted reader costs that writer one lease, a reader that gives up is
 * not admitted; a holder's owner id may be the caller's. No sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/lt_shared.h"
#include "core/store/store_memory.h"
#include "core/store/store_session.h"
#include "tests/support/lt_fixture.h"

#define LEASE 3000

struct got {
	bool done;
	struct sh_lease *lease;
	bool error;
	struct lt_error err;
	bool lost;
	enum lt_loss why;
};

static void on_acquired(void *arg, struct sh_lease *l, const struct lt_error *err)
{
	struct got *g = arg;
	g->done = true;
	g->lease = l;
	g->error = err != NULL;
	if (err != NULL)
		g->err = *err;
}

static void on_lost(void *arg, struct sh_lease *l, enum lt_loss why)
{
	struct got *g = arg;
	g->lost = true;
	g->why = why;
}

/* A request straight to the store (another replica's, or a crashed
 * one's), run to its answer: the status and the first slot. */
struct direct {
	bool done;
	enum store_status status;
	struct lock_item slot;
};

static void on_direct(void *arg, const struct store_sh_result *res)
{
	struct direct *d = arg;
	d->done = true;
	d->status = res->status;
	d->slot = res->slots[0];
}

static struct direct direct(struct fx *f, struct store_sh_req r)
{
	struct direct d = {0};
	assert_non_null(store_sh_submit(f->store, &r, on_direct, &d));
	fx_run(f);
	assert_true(d.done);
	return d;
}

static void on_slot5(void *arg, const struct store_sh_result *res)
{
	*(struct lock_item *)arg = res->slots[0];
}

static void on_header(void *arg, const struct store_sh_result *res)
{
	snprintf(arg, STORE_ID_MAX + 1, "%s", res->header.xwait);
}

/* The header's announcement (xwait) of name as it stands: "" none. */
static const char *xwait_of(struct fx *f, const char *name, char out[STORE_ID_MAX + 1])
{
	struct store_sh_req rd = {.op = STORE_SH_READ, .name = name, .cap = 4, .count = 1};
	strcpy(out, "?");
	assert_non_null(store_sh_submit(f->store, &rd, on_header, out));
	fx_run(f);
	return out;
}

/* Slot 5, read alone (rd: slot 5, count 1). */
static struct lock_item slot5(struct fx *f, struct store_sh_req rd)
{
	struct lock_item it = {.owner = "?"};
	assert_non_null(store_sh_submit(f->store, &rd, on_slot5, &it));
	fx_run(f);
	return it;
}

static struct sh_wait *start(struct fx *f, int i, const char *name, enum store_sh_mode mode,
			     unsigned cap, bool wait, struct got *g)
{
	memset(g, 0, sizeof(*g));
	struct lt_sh_args a = {
		.name = name, .mode = mode, .cap = cap, .lease_ms = LEASE, .wait = wait};
	struct sh_wait *w = lt_sh_acquire(f->lt[i], &a, on_acquired, g);
	assert_non_null(w);
	assert_false(g->done); /* never inside the call */
	return w;
}

/* A try on locktable i, run to its answer: the lease or NULL. */
static struct sh_lease *try_shared(struct fx *f, int i, const char *name, enum store_sh_mode mode,
				   unsigned cap, struct got *g)
{
	start(f, i, name, mode, cap, false, g);
	fx_run(f);
	assert_true(g->done);
	if (g->lease != NULL)
		sh_lease_on_lost(g->lease, on_lost, g);
	return g->lease;
}

/* Readers on two replicas share the phase's token; an exclusive try is
 * refused while either holds, and granted, above them, after both. */
static void test_readers_share_and_shut_out_the_writer(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got a, b;
	struct fx_acq x;
	struct sh_lease *ra = try_shared(f, 0, "rw", STORE_SH_SHARED, 8, &a);
	struct sh_lease *rb = try_shared(f, 1, "rw", STORE_SH_SHARED, 8, &b);
	assert_non_null(ra);
	assert_non_null(rb);
	assert_int_equal(sh_lease_token(ra), 1);
	assert_int_equal(sh_lease_token(rb), 1);
	assert_int_not_equal(sh_lease_slot(ra), sh_lease_slot(rb));
	fx_acquire(f, 2, "rw", LEASE, false, 0, &x);
	fx_run(f);
	assert_true(x.done);
	assert_null(x.lease);
	sh_lease_release(ra);
	fx_run(f);
	fx_acquire(f, 2, "rw", LEASE, false, 0, &x);
	fx_run(f);
	assert_null(x.lease);
	sh_lease_release(rb);
	fx_run(f);
	struct lease *w = fx_take(f, 2, "rw", LEASE);
	assert_int_equal(lease_token(w), 2);
	/* a reader now waits for the writer, and gets the next phase's token */
	struct got c;
	start(f, 0, "rw", STORE_SH_SHARED, 8, true, &c);
	fx_advance(f, LEASE);
	assert_false(c.done);
	lease_release(w);
	fx_advance(f, LEASE);
	assert_true(c.done);
	assert_non_null(c.lease);
	assert_int_equal(sh_lease_token(c.lease), 3);
	sh_lease_release(c.lease);
	fx_run(f);
	fx_free(f);
}

/* An exclusive waiter on a name readers hold waits by polling (one read
 * every third of its lease, no write after its first), never writing in
 * a loop, and is granted once the last reader has gone. */
static void test_writer_polls_while_readers_hold(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a;
	struct fx_acq x;
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
	assert_non_null(r);
	uint64_t writes = fx_req(f, STORE_ACQUIRE), reads = fx_req(f, STORE_READ);
	fx_acquire(f, 1, "rw", LEASE, true, 0, &x);
	fx_advance(f, 3 * LEASE);
	assert_false(x.done);
	assert_int_equal(fx_req(f, STORE_ACQUIRE) - writes, 1);
	/* every second for 9 s a poll of the header and a read of the
	 * slots (the watch of crashed readers) */
	uint64_t polls = fx_req(f, STORE_READ) - reads;
	assert_true(polls >= 16 && polls <= 20);
	sh_lease_release(r);
	fx_advance(f, LEASE / 3);
	assert_true(x.done);
	assert_non_null(x.lease);
	assert_int_equal(lease_token(x.lease), 2);
	lease_release(x.lease);
	fx_run(f);
	fx_free(f);
}

/* A reader whose replica crashed (its slot written, never renewed) does
 * not block a writer for ever: the waiting writer removes it once its rvn
 * stood still a whole lease on the writer's clock, never before, and is
 * granted; a live reader beside it is never removed. */
static void test_writer_removes_crashed_reader(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got live;
	struct fx_acq x;
	struct store_sh_req g = {.op = STORE_SH_GRANT,
				 .name = "rw",
				 .mode = STORE_SH_SHARED,
				 .cap = STORE_SH_CAP,
				 .slot = 5,
				 .owner = "ghost",
				 .rvn = "ghost-r",
				 .first = true,
				 .lease_ms = LEASE};
	assert_int_equal(direct(f, g).status, STORE_OK);
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, STORE_SH_CAP, &live);
	assert_non_null(r);
	fx_acquire(f, 1, "rw", LEASE, true, 0, &x);
	fx_run(f);
	int64_t t0 = fx_now(f);
	struct store_sh_req rd = {
		.op = STORE_SH_READ, .name = "rw", .cap = STORE_SH_CAP, .slot = 5, .count = 1};
	while (fx_now(f) - t0 < LEASE - 100) { /* still there within a lease */
		fx_advance(f, 100);
		assert_string_equal(slot5(f, rd).owner, "ghost");
	}
	fx_advance(f, LEASE); /* removed once a whole lease passed */
	assert_false(slot5(f, rd).has_owner);
	assert_false(x.done); /* the live reader holds on */
	assert_int_equal(sh_lease_loss(r), LT_HELD);
	sh_lease_release(r);
	fx_advance(f, LEASE / 3);
	assert_true(x.done);
	assert_non_null(x.lease);
	lease_release(x.lease);
	fx_run(f);
	fx_free(f);
}

/* A writer waiting for readers stops new ones (its announcement on the
 * header): a reader's try on a third replica is refused while a reader
 * holds and the writer waits; the writer is granted when that reader
 * goes, the waiting reader after the writer. */
static void test_writer_stops_new_readers(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got a, b, c;
	struct fx_acq x;
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
	assert_non_null(r);
	fx_acquire(f, 1, "rw", LEASE, true, 0, &x);
	fx_advance(f, LEASE / 3 + 1); /* a poll: the writer announces itself */
	assert_false(x.done);
	assert_null(try_shared(f, 2, "rw", STORE_SH_SHARED, 4, &b));
	assert_false(b.error);
	start(f, 2, "rw", STORE_SH_SHARED, 4, true, &c);
	fx_advance(f, LEASE);
	assert_false(c.done); /* behind the writer */
	sh_lease_release(r);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(x.done);
	assert_non_null(x.lease);
	assert_false(c.done);
	lease_release(x.lease);
	fx_advance(f, LEASE);
	assert_true(c.done);
	assert_non_null(c.lease);
	assert_int_equal(sh_lease_token(c.lease), 3);
	sh_lease_release(c.lease);
	fx_run(f);
	fx_free(f);
}

/* A writer's announcement goes with its wait: once it was granted (its
 * readers gone) and released, a reader's try on another replica is
 * granted at once, not refused until the announcement stood still long
 * enough to be cleared. Both with the writer on the readers' replica and
 * on another. */
static void test_granted_writer_leaves_no_announcement(void **state)
{
	for (int wr = 0; wr < 2; wr++) {
		struct fx *f = fx_new(3, true);
		struct got a, b;
		struct fx_acq x;
		struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
		assert_non_null(r);
		fx_acquire(f, wr, "rw", LEASE, true, 0, &x);
		fx_advance(f, LEASE / 3 + 1); /* a poll: the writer announces itself */
		assert_false(x.done);
		sh_lease_release(r);
		fx_advance(f, LEASE / 3 + 1);
		assert_true(x.done);
		assert_non_null(x.lease);
		char xw[STORE_ID_MAX + 1];
		fx_run(f);
		if (xwait_of(f, "rw", xw)[0] != '\0')
			fail_msg("writer on replica %d: granted, its announcement %s stands", wr,
				 xw);
		lease_release(x.lease);
		fx_run(f);
		struct sh_lease *r2 = try_shared(f, 2, "rw", STORE_SH_SHARED, 4, &b);
		if (r2 == NULL)
			fail_msg("writer on replica %d: a reader refused after the writer released",
				 wr);
		sh_lease_release(r2);
		fx_run(f);
		fx_free(f);
	}
}

/* A writer whose refresh of its announcement was refused (the last reader
 * had gone, another writer took the lock) still clears the announcement
 * its earlier poll wrote, once granted: the refusal shows it standing
 * (make stress, seed 481853: readers' tries refused 3 s after the writer
 * was granted and had released). */
static void test_writer_refused_refresh_still_clears(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got a, b;
	struct fx_acq w, e;
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
	assert_non_null(r);
	fx_acquire(f, 1, "rw", LEASE, true, 0, &w);
	fx_advance(f, LEASE / 3 + 1); /* a poll: the writer announces itself */
	char xw[STORE_ID_MAX + 1];
	assert_string_not_equal(xwait_of(f, "rw", xw), "");
	/* its next refresh is sent while the reader holds, and lands after
	 * the reader went and another writer took the lock: refused */
	store_memory_set_op_latency(f->store, STORE_ANNOUNCE, 300);
	uint64_t sent = fx_req(f, STORE_ANNOUNCE);
	while (fx_req(f, STORE_ANNOUNCE) == sent)
		fx_advance(f, 10);
	sh_lease_release(r);
	fx_run(f);
	fx_acquire(f, 2, "rw", LEASE, false, 0, &e);
	fx_run(f);
	assert_non_null(e.lease);
	fx_advance(f, 300);
	store_memory_set_op_latency(f->store, STORE_ANNOUNCE, 0);
	assert_false(w.done);
	lease_release(e.lease);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w.done);
	assert_non_null(w.lease);
	fx_run(f);
	if (xwait_of(f, "rw", xw)[0] != '\0')
		fail_msg("granted, the writer's announcement %s stands", xw);
	lease_release(w.lease);
	fx_run(f);
	struct sh_lease *r2 = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &b);
	assert_non_null(r2);
	sh_lease_release(r2);
	fx_run(f);
	fx_free(f);
}

/* A writer that gave up (its wait timed out) takes its announcement with
 * it: a reader's try on another replica is granted at once. */
static void test_writer_timed_out_leaves_no_announcement(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got a, b;
	struct fx_acq x;
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
	assert_non_null(r);
	fx_acquire(f, 1, "rw", LEASE, true, LEASE, &x);
	fx_advance(f, LEASE / 3 + 1); /* a poll: the writer announces itself */
	char xw[STORE_ID_MAX + 1];
	assert_string_not_equal(xwait_of(f, "rw", xw), "");
	fx_advance(f, LEASE);
	assert_true(x.done);
	assert_null(x.lease);
	fx_run(f);
	assert_string_equal(xwait_of(f, "rw", xw), "");
	struct sh_lease *r2 = try_shared(f, 2, "rw", STORE_SH_SHARED, 4, &b);
	assert_non_null(r2);
	sh_lease_release(r2);
	sh_lease_release(r);
	fx_run(f);
	fx_free(f);
}

/* The announcement of a writer that crashed while it waited for "rw"
 * (rvn g1, an interval of 1 s), written directly: nobody refreshes it. */
static void ghost_writer(struct fx *f)
{
	struct store_sh_req ann = {.op = STORE_SH_XANNOUNCE,
				   .name = "rw",
				   .cap = 4,
				   .owner = "ghost-writer",
				   .rvn = "g1",
				   .lease_ms = 1000};
	assert_int_equal(direct(f, ann).status, STORE_OK);
}

/* A writer that announced itself and crashed does not keep readers out
 * for ever: a waiting reader clears its announcement once it stood still
 * for LT_RESERVE_WINDOWS of its interval on the reader's clock, never
 * before, and is granted. */
static void test_crashed_writer_announcement_cleared(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a, c;
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
	assert_non_null(r);
	ghost_writer(f);
	start(f, 1, "rw", STORE_SH_SHARED, 4, true, &c);
	fx_run(f);
	int64_t t0 = fx_now(f);
	fx_advance(f, 2 * 1000 - 1);
	assert_false(c.done);
	fx_advance(f, 1000 + 1);
	assert_true(c.done);
	assert_non_null(c.lease);
	assert_true(fx_now(f) - t0 >= 2000);
	sh_lease_release(c.lease);
	sh_lease_release(r);
	fx_run(f);
	fx_free(f);
}

/* ... nor when no one reader waits that long (tries, or waits each
 * admitted past it by an exclusive release: stress_short seed 750285 saw
 * reader tries refused for 5 leases): a replica counts from its first
 * sight of the announcement, whichever wait or try saw it, and another
 * replica from its own. */
static void test_crashed_writer_announcement_cleared_by_tries(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got a, b, c, d;
	struct sh_lease *r = try_shared(f, 0, "rw", STORE_SH_SHARED, 4, &a);
	assert_non_null(r);
	ghost_writer(f);
	assert_null(try_shared(f, 1, "rw", STORE_SH_SHARED, 4, &b));
	fx_advance(f, 2 * 1000 - 10);
	assert_null(try_shared(f, 1, "rw", STORE_SH_SHARED, 4, &b)); /* not yet */
	fx_advance(f, 20);
	assert_null(try_shared(f, 2, "rw", STORE_SH_SHARED, 4, &c)); /* its first sight */
	struct sh_lease *r1 = try_shared(f, 1, "rw", STORE_SH_SHARED, 4, &d);
	assert_non_null(r1);
	char xw[STORE_ID_MAX + 1];
	assert_string_equal(xwait_of(f, "rw", xw), "");
	sh_lease_release(r1);
	sh_lease_release(r);
	fx_run(f);
	fx_free(f);
}

/* An exclusive holder whose replica crashed (never renewed) does not keep
 * readers out for ever: a waiting reader ends it once its rvn stood still
 * a whole lease on the reader's clock, never before, and is granted, with
 * a token above the writer's. */
static void test_reader_takes_a_crashed_writer(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got c;
	int64_t tok = fx_simulate_holder(f, "rw", LEASE, "crashed");
	start(f, 1, "rw", STORE_SH_SHARED, 4, true, &c);
	fx_run(f);
	int64_t t0 = fx_now(f);
	fx_advance(f, LEASE - 1);
	assert_false(c.done);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(c.done);
	assert_non_null(c.lease);
	assert_true(fx_now(f) - t0 >= LEASE);
	assert_true(sh_lease_token(c.lease) > tok);
	sh_lease_release(c.lease);
	fx_run(f);
	fx_free(f);
}

/* A semaphore of 2: the third holder waits for a slot; the slot it gets
 * keeps its own fence. */
static void test_semaphore_third_waits(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got a, b, c;
	struct sh_lease *s1 = try_shared(f, 0, "sem", STORE_SH_LIMIT, 2, &a);
	struct sh_lease *s2 = try_shared(f, 1, "sem", STORE_SH_LIMIT, 2, &b);
	assert_non_null(s1);
	assert_non_null(s2);
	assert_int_equal(sh_lease_token(s1), 1);
	assert_int_equal(sh_lease_token(s2), 1);
	assert_null(try_shared(f, 2, "sem", STORE_SH_LIMIT, 2, &c));
	start(f, 2, "sem", STORE_SH_LIMIT, 2, true, &c);
	fx_advance(f, 5 * LEASE); /* both renew all along: no slot frees */
	assert_false(c.done);
	assert_int_equal(sh_lease_loss(s1), LT_HELD);
	unsigned slot = sh_lease_slot(s1);
	sh_lease_release(s1);
	fx_advance(f, LEASE);
	assert_true(c.done);
	assert_non_null(c.lease);
	assert_int_equal(sh_lease_slot(c.lease), slot);
	assert_int_equal(sh_lease_token(c.lease), 2); /* that slot's second grant */
	/* another limit on the same name is an error, not a wait */
	struct got d;
	assert_null(try_shared(f, 0, "sem", STORE_SH_LIMIT, 3, &d));
	assert_true(d.error);
	assert_string_equal(d.err.error_type, "ModeMismatch");
	assert_null(try_shared(f, 0, "sem", STORE_SH_SHARED, 2, &d));
	assert_true(d.error);
	sh_lease_release(s2);
	sh_lease_release(c.lease);
	fx_run(f);
	fx_free(f);
}

/* A grant that applied though its answer was a refusal (a retry refused
 * by its own first attempt: moto ignores ClientRequestToken) is found by
 * the read after it: the try holds that slot, and takes no other (it took
 * both places of a semaphore of 2 before: CI's it_locks_shared, a
 * reader's try answered nil under load). */
static void test_grant_applied_though_refused(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a, b;
	store_memory_grant_refused(f->store, 1);
	struct sh_lease *s1 = try_shared(f, 0, "sem", STORE_SH_LIMIT, 2, &a);
	assert_non_null(s1);
	assert_int_equal(sh_lease_token(s1), 1);
	struct sh_lease *s2 = try_shared(f, 1, "sem", STORE_SH_LIMIT, 2, &b);
	assert_non_null(s2); /* one place was left */
	assert_int_not_equal(sh_lease_slot(s2), sh_lease_slot(s1));
	fx_advance(f, 3 * LEASE); /* s1 renews the slot it holds */
	assert_int_equal(sh_lease_loss(s1), LT_HELD);
	sh_lease_release(s1);
	sh_lease_release(s2);
	fx_run(f);
	fx_free(f);
}

/* A holder that stops renewing (its replica gone: the lease is never
 * released, its timers stopped by the fake replica's end) is taken over
 * in its slot after a whole lease of its rvn unchanged on the waiter's
 * clock, counted from the read that first showed it, never before. */
static void test_crashed_holder_taken_over_after_a_lease(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got b;
	/* a semaphore of 1 held by "a crashed replica": a slot written
	 * straight to the store, never renewed */
	struct store_sh_req g = {.op = STORE_SH_GRANT,
				 .name = "one",
				 .mode = STORE_SH_LIMIT,
				 .cap = 1,
				 .owner = "ghost",
				 .rvn = "ghost-r",
				 .first = true,
				 .lease_ms = LEASE};
	assert_int_equal(direct(f, g).status, STORE_OK);
	start(f, 1, "one", STORE_SH_LIMIT, 1, true, &b);
	fx_run(f); /* the first read: the count starts */
	int64_t t0 = fx_now(f);
	fx_advance(f, LEASE - 1);
	assert_false(b.done);
	fx_advance(f, LEASE / 3 + 1); /* the next poll after a whole lease */
	assert_true(b.done);
	assert_non_null(b.lease);
	assert_true(fx_now(f) - t0 >= LEASE);
	assert_int_equal(sh_lease_token(b.lease), 2); /* the slot's fence rose */
	sh_lease_release(b.lease);
	fx_run(f);
	fx_free(f);
}

/* Renewals keep a lease through many leases; a slot taken from under it
 * (here: the store's record rewritten by a takeover) ends it, lost
 * taken_over, at its next renewal. */
static void test_renewed_then_taken_over(void **state)
{
	struct fx *f = fx_new(1, true);
	struct got a;
	struct sh_lease *l = try_shared(f, 0, "sem1", STORE_SH_LIMIT, 1, &a);
	assert_non_null(l);
	uint64_t renews = fx_req(f, STORE_RENEW);
	fx_advance(f, 10 * LEASE);
	assert_false(a.lost);
	assert_true(fx_req(f, STORE_RENEW) - renews >= 29); /* every third of the lease */
	assert_true(sh_lease_end_ms(l) > fx_now(f));
	/* another writes the slot over, on the rvn it shows */
	struct store_sh_req rd = {.op = STORE_SH_READ, .name = "sem1", .cap = 1};
	struct lock_item slot = direct(f, rd).slot;
	struct store_sh_req steal = {.op = STORE_SH_GRANT,
				     .name = "sem1",
				     .mode = STORE_SH_LIMIT,
				     .cap = 1,
				     .owner = "thief",
				     .rvn = "thief-r",
				     .seen_rvn = slot.rvn,
				     .seen_slot_fence = slot.fence,
				     .lease_ms = LEASE};
	assert_int_equal(direct(f, steal).status, STORE_OK);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(a.lost);
	assert_int_equal(a.why, LT_TAKEN_OVER);
	sh_lease_release(l); /* a lost lease: nothing sent */
	fx_run(f);
	fx_free(f);
}

/* Renewals failing (the store down) are retried with a backoff; the lease
 * runs out at its end, lost expired, and no later answer revives it. */
static void test_failing_renewals_expire(void **state)
{
	struct fx *f = fx_new(1, true);
	struct got a;
	struct sh_lease *l = try_shared(f, 0, "down", STORE_SH_SHARED, 4, &a);
	assert_non_null(l);
	int64_t end = sh_lease_end_ms(l);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "ThrottlingException");
	fx_advance(f, end - fx_now(f) - 1);
	assert_false(a.lost);
	fx_advance(f, 1);
	assert_true(a.lost);
	assert_int_equal(a.why, LT_EXPIRED);
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	fx_advance(f, LEASE);
	assert_int_equal(sh_lease_loss(l), LT_EXPIRED);
	sh_lease_release(l);
	fx_run(f);
	fx_free(f);
}

/* A cancelled wait leaves nothing held: a grant in flight that lands is
 * released. */
static void test_cancel_leaves_nothing(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a, b;
	struct sh_wait *w = start(f, 0, "c", STORE_SH_LIMIT, 1, false, &a);
	lt_sh_acquire_cancel(w);
	fx_run(f);
	assert_false(a.done);
	struct sh_lease *l = try_shared(f, 1, "c", STORE_SH_LIMIT, 1, &b);
	assert_non_null(l); /* the slot is free */
	sh_lease_release(l);
	fx_run(f);
	fx_free(f);
}

/* --- a client's renewal (LOCK.RENEW) and the holders' read (LOCK.STATE) --- */

struct renewed {
	int calls, value;
};

static void on_renewed_now(void *arg, int value, const struct lt_error *err)
{
	struct renewed *r = arg;
	r->calls++;
	r->value = err != NULL ? -1 : value;
}

/* sh_lease_renew writes now, not at the next heartbeat, and moves the
 * lease's end; one waits at a time; a lease lost or released first
 * answers 0. */
static void test_renew_now(void **state)
{
	struct fx *f = fx_new(1, true);
	struct got a;
	struct sh_lease *l = try_shared(f, 0, "rn", STORE_SH_SHARED, 4, &a);
	assert_non_null(l);
	fx_advance(f, 100);
	uint64_t renews = fx_req(f, STORE_RENEW);
	struct renewed r = {0};
	assert_true(sh_lease_renew(l, on_renewed_now, &r));
	assert_false(sh_lease_renew(l, on_renewed_now, &r)); /* one at a time */
	assert_int_equal(r.calls, 0);			     /* never inside the call */
	fx_run(f);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.value, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), renews + 1);
	assert_int_equal(sh_lease_end_ms(l), fx_now(f) + LEASE);
	/* released while one waits: 0, once */
	assert_true(sh_lease_renew(l, on_renewed_now, &r));
	sh_lease_release(l);
	assert_int_equal(r.calls, 2);
	assert_int_equal(r.value, 0);
	fx_run(f);
	assert_int_equal(r.calls, 2);
	fx_free(f);
}

/* A renewal refused (the slot taken from under the lease) answers 0 and
 * the lease is lost. */
static void test_renew_now_refused(void **state)
{
	struct fx *f = fx_new(1, true);
	struct got a;
	struct sh_lease *l = try_shared(f, 0, "rf", STORE_SH_LIMIT, 1, &a);
	assert_non_null(l);
	struct store_sh_req rd = {.op = STORE_SH_READ, .name = "rf", .cap = 1};
	struct lock_item slot = direct(f, rd).slot;
	struct store_sh_req steal = {.op = STORE_SH_GRANT,
				     .name = "rf",
				     .mode = STORE_SH_LIMIT,
				     .cap = 1,
				     .owner = "thief",
				     .rvn = "thief-r",
				     .seen_rvn = slot.rvn,
				     .seen_slot_fence = slot.fence,
				     .lease_ms = LEASE};
	assert_int_equal(direct(f, steal).status, STORE_OK);
	struct renewed r = {0};
	assert_true(sh_lease_renew(l, on_renewed_now, &r));
	fx_run(f);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.value, 0);
	assert_true(a.lost);
	assert_int_equal(a.why, LT_TAKEN_OVER);
	assert_false(sh_lease_renew(l, on_renewed_now, &r)); /* ended */
	sh_lease_release(l);
	fx_run(f);
	fx_free(f);
}

struct seen {
	bool done;
	struct lt_sh_state st;
};

static void on_state(void *arg, const struct lt_sh_state *st, const struct lt_error *err)
{
	struct seen *s = arg;
	s->done = true;
	assert_null(err);
	s->st = *st;
}

static struct lt_sh_state state_of(struct fx *f, const char *name)
{
	static struct seen s;
	memset(&s, 0, sizeof(s));
	assert_true(lt_sh_state(f->lt[0], name, on_state, &s));
	fx_run(f);
	assert_true(s.done);
	return s.st;
}

/* lt_sh_state: every holder of a name, from whichever replica, with its
 * slot and token; the mode and limit; a writer's announcement. */
static void test_state_lists_every_holder(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a, b, c, d;
	struct sh_lease *ra = try_shared(f, 0, "st", STORE_SH_SHARED, STORE_SH_CAP, &a);
	struct sh_lease *rb = try_shared(f, 1, "st", STORE_SH_SHARED, STORE_SH_CAP, &b);
	struct lt_sh_state st = state_of(f, "st");
	assert_int_equal(st.mode, STORE_SH_SHARED);
	assert_int_equal(st.limit, STORE_SH_CAP);
	assert_int_equal(st.count, 2);
	assert_false(st.writer_waiting);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(st.holders[i].token, sh_lease_token(ra));
		assert_int_equal(st.holders[i].lease_ms, LEASE);
		assert_true(st.holders[i].slot == sh_lease_slot(ra) ||
			    st.holders[i].slot == sh_lease_slot(rb));
	}
	assert_int_not_equal(st.holders[0].slot, st.holders[1].slot);
	struct store_sh_req ann = {.op = STORE_SH_XANNOUNCE,
				   .name = "st",
				   .cap = STORE_SH_CAP,
				   .owner = "writer",
				   .rvn = "w1",
				   .lease_ms = LEASE};
	assert_int_equal(direct(f, ann).status, STORE_OK);
	assert_true(state_of(f, "st").writer_waiting);
	struct sh_lease *sc = try_shared(f, 0, "sm", STORE_SH_LIMIT, 3, &c);
	struct sh_lease *sd = try_shared(f, 1, "sm", STORE_SH_LIMIT, 3, &d);
	st = state_of(f, "sm");
	assert_int_equal(st.mode, STORE_SH_LIMIT);
	assert_int_equal(st.limit, 3);
	assert_int_equal(st.count, 2);
	for (unsigned i = 0; i < 2; i++) { /* each its slot's own fence */
		const struct sh_lease *l = st.holders[i].slot == sh_lease_slot(sc) ? sc : sd;
		assert_int_equal(st.holders[i].token, sh_lease_token(l));
	}
	sh_lease_release(sc);
	fx_run(f);
	assert_int_equal(state_of(f, "sm").count, 1);
	sh_lease_release(sd);
	sh_lease_release(ra);
	sh_lease_release(rb);
	fx_run(f);
	assert_int_equal(state_of(f, "st").count, 0);
	fx_free(f);
}

/* A shared holder's events and metrics are an exclusive lease's (logs
 * 40-43): an acquisition counted, a takeover told with the holder taken
 * over, renewals counted, a failed one retried and told with its wait,
 * an expiry told as a loss, a failed release told; a release is no loss. */
static void test_events(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a, b;
	struct sh_lease *l = try_shared(f, 0, "ev", STORE_SH_SHARED, 4, &a);
	assert_int_equal(f->obs.acquisitions[0], 1);
	fx_advance(f, LEASE / 3 + 1);
	assert_int_equal(obs_get(&f->obs.renewals, "ok"), 1);
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "ThrottlingException");
	fx_advance(f, LEASE / 3 + 1);
	assert_true(fx_events(f, OBS_RENEW_RETRY) >= 1);
	const struct fx_event *e = fx_last(f, OBS_RENEW_RETRY);
	assert_string_equal(e->error_type, "ThrottlingException");
	assert_string_equal(e->lock, "ev");
	assert_true(e->wait_ms > 0);
	assert_true(obs_get(&f->obs.renewals, "ThrottlingException") >= 1);
	fx_advance(f, LEASE);
	assert_true(a.lost);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 1);
	assert_string_equal(fx_last(f, OBS_LEASE_LOST)->reason, "expired");
	assert_int_equal(obs_get(&f->obs.losses, "expired"), 1);
	sh_lease_release(l); /* lost already: no release write, nothing told */
	fx_run(f);
	assert_int_equal(fx_events(f, OBS_RELEASE_FAILED), 0);
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	/* a crashed holder (never renewed) taken over after a lease */
	struct store_sh_req g = {.op = STORE_SH_GRANT,
				 .name = "ev1",
				 .mode = STORE_SH_LIMIT,
				 .cap = 1,
				 .owner = "ghost",
				 .rvn = "ghost-r",
				 .first = true,
				 .holder = "gone",
				 .lease_ms = LEASE};
	assert_int_equal(direct(f, g).status, STORE_OK);
	start(f, 1, "ev1", STORE_SH_LIMIT, 1, true, &b);
	fx_advance(f, LEASE + LEASE / 3 + 1);
	assert_non_null(b.lease);
	assert_int_equal(f->obs.acquisitions[1], 1);
	e = fx_last(f, OBS_TAKEOVER);
	assert_non_null(e);
	assert_string_equal(e->prev_holder, "gone");
	assert_int_equal(e->token, sh_lease_token(b.lease));
	/* its release fails: told, free once its lease runs out */
	store_memory_fail(f->store, -1, STORE_TRANSIENT, "ThrottlingException");
	sh_lease_release(b.lease);
	fx_run(f);
	assert_int_equal(fx_events(f, OBS_RELEASE_FAILED), 1);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 1); /* a release is no loss */
	store_memory_fail(f->store, 0, STORE_OK, NULL);
	fx_free(f);
}

/* ---- phase-fair admission (docs/design/shared-locks.md) ---- */

/* A waiting reader on locktable i (a wait, no timeout), its lease kept. */
static void wait_shared(struct fx *f, int i, struct got *g)
{
	start(f, i, "rw", STORE_SH_SHARED, 8, true, g);
}

/* One replica: readers queued behind writer W1 while writer W2 queues
 * too are granted when W1 releases, before W2 (no local hand-off to W2);
 * a reader arriving after that release waits behind W2, and is admitted
 * when W2 releases, before a third writer. */
static void test_readers_first_on_one_replica(void **state)
{
	struct fx *f = fx_new(1, true);
	struct got r1, r2, r3;
	struct fx_acq w2, w3;
	struct lease *w1 = fx_take(f, 0, "rw", LEASE);
	wait_shared(f, 0, &r1);
	wait_shared(f, 0, &r2);
	fx_acquire(f, 0, "rw", LEASE, true, 0, &w2);
	fx_advance(f, LEASE / 2); /* W1 renews meanwhile */
	assert_false(r1.done || r2.done || w2.done);
	lease_release(w1);
	fx_advance(f, 1);
	assert_true(r1.done && r2.done);
	assert_non_null(r1.lease);
	assert_non_null(r2.lease);
	assert_false(w2.done);	/* behind the readers */
	wait_shared(f, 0, &r3); /* after the release: behind W2 */
	fx_advance(f, LEASE);
	assert_false(r3.done);
	assert_false(w2.done);
	sh_lease_release(r1.lease);
	sh_lease_release(r2.lease);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w2.done);
	assert_non_null(w2.lease);
	assert_false(r3.done);
	fx_acquire(f, 0, "rw", LEASE, true, 0, &w3);
	fx_advance(f, LEASE / 2);
	lease_release(w2.lease);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(r3.done); /* admitted before W3 */
	assert_non_null(r3.lease);
	assert_false(w3.done);
	sh_lease_release(r3.lease);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w3.done);
	assert_non_null(w3.lease);
	lease_release(w3.lease);
	fx_run(f);
	fx_free(f);
}

/* Two replicas and a third: W1 holds on replica 0, a reader waits on
 * replica 1 (polling at 1000, 2000, 3000 ms), W2 waits on replica 2
 * (polling at 1500, 2500 ms); W1 releases at 2100 ms: W2's poll comes
 * first, but the reader is granted first, W2 once it goes. */
static void test_readers_first_across_replicas(void **state)
{
	struct fx *f = fx_new(3, true);
	struct got r;
	struct fx_acq w2;
	struct lease *w1 = fx_take(f, 0, "rw", LEASE);
	wait_shared(f, 1, &r);
	fx_advance(f, 500);
	fx_acquire(f, 2, "rw", LEASE, true, 0, &w2);
	fx_advance(f, 1600);
	assert_false(r.done || w2.done);
	lease_release(w1);
	fx_run(f);
	fx_advance(f, 500); /* W2's poll at 2500 ms */
	assert_false(r.done || w2.done);
	fx_advance(f, 401); /* the reader's at 3000 ms */
	assert_true(r.done);
	assert_non_null(r.lease);
	assert_false(w2.done);
	fx_advance(f, LEASE);
	assert_false(w2.done); /* the reader holds */
	sh_lease_release(r.lease);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w2.done);
	assert_non_null(w2.lease);
	lease_release(w2.lease);
	fx_run(f);
	fx_free(f);
}

static struct session_item session_now(struct fx *f, const char *key);

/* W1 holds in session mode (replica 2 in --heartbeat replica: its item's
 * leaseMs is years, its real lease sleaseMs, its session beats): a reader
 * waiting on replica 1 never ends it while its session beats (nor kills
 * the session), however long the lock's rvn stands still,
 * and is granted a poll of the real lease after W1's release (not one of
 * the years' lease, clamped to 10 s); W2, waiting on replica 0, a poll
 * after the reader's release (the stress harness in replica mode: readers
 * timed out and writers waited a lease behind a free lock). */
static void test_reader_behind_a_session_mode_holder(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lt_options o = {
		.holder_label = "p2", .heartbeat = LT_HEARTBEAT_REPLICA, .replica_id = "r2"};
	f->lt[2] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[2]);
	fx_run(f);
	struct got r;
	struct fx_acq w2;
	struct lease *w1 = fx_take(f, 2, "rw", LEASE);
	struct lock_item it;
	assert_true(store_read_now(f->store, "rw", &it));
	assert_string_not_equal(it.session, ""); /* held in session mode */
	wait_shared(f, 1, &r);
	fx_acquire(f, 0, "rw", LEASE, true, 0, &w2);
	fx_advance(f, 10 * LEASE);
	assert_false(r.done || w2.done);
	assert_true(lease_held(w1));
	assert_false(session_now(f, it.session).has_dead); /* never killed while it beats */
	int64_t w1_token = lease_token(w1);
	lease_release(w1); /* freed once its release is answered */
	fx_run(f);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(r.done);
	assert_non_null(r.lease);
	assert_true(sh_lease_token(r.lease) > w1_token);
	assert_false(w2.done); /* the reader holds */
	sh_lease_release(r.lease);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w2.done);
	assert_non_null(w2.lease);
	lease_release(w2.lease);
	fx_run(f);
	fx_free(f);
}

/* A fixture whose locktable 2 holds in session mode (--heartbeat replica,
 * replica r2; its session created). */
static struct fx *replica_fx(void)
{
	struct fx *f = fx_new(2, true);
	struct lt_options o = {
		.holder_label = "p2", .heartbeat = LT_HEARTBEAT_REPLICA, .replica_id = "r2"};
	f->lt[2] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[2]);
	fx_run(f);
	return f;
}

static void on_session(void *arg, const struct store_session_result *res)
{
	*(struct store_session_result *)arg = *res;
}

/* The session item at key as the store has it now. */
static struct session_item session_now(struct fx *f, const char *key)
{
	char replica[STORE_SESSION_REPLICA_MAX + 1], inc[STORE_SESSION_INC_LEN + 1];
	assert_true(store_session_key_split(key, replica, inc));
	struct store_session_req req = {
		.op = STORE_SESSION_READ, .replica = replica, .incarnation = inc, .name = "rw"};
	struct store_session_result res = {.status = STORE_FATAL};
	assert_non_null(store_session_submit(f->store, &req, on_session, &res));
	fx_run(f);
	assert_int_equal(res.status, STORE_OK);
	return res.session;
}

/* Locktable 2 beats (its session's BEAT, counted as RENEW): advances until
 * the next one is sent. */
static void until_a_beat(struct fx *f)
{
	uint64_t beats = fx_req(f, STORE_RENEW);
	while (fx_req(f, STORE_RENEW) == beats)
		fx_advance(f, 1);
}

/* Advances by 10 ms until r is done (at most limit): the time it took. */
static int64_t until_granted(struct fx *f, struct got *r, int64_t limit)
{
	int64_t t0 = fx_now(f);
	while (!r->done && fx_now(f) - t0 < limit)
		fx_advance(f, 10);
	return fx_now(f) - t0;
}

/* W1 takes "rw" in session mode on locktable 2, a reader waits on
 * locktable 1 (r), and three leases later locktable 2 crashes right after
 * a heartbeat (freed: nothing more is written). W1's token; its item as
 * it was in *it. */
static int64_t crash_after_a_beat(struct fx *f, struct got *r, struct lock_item *it)
{
	struct lease *w1 = fx_take(f, 2, "rw", LEASE);
	int64_t token = lease_token(w1);
	assert_true(store_read_now(f->store, "rw", it));
	assert_string_not_equal(it->session, "");
	wait_shared(f, 1, r);
	fx_advance(f, 3 * LEASE);
	assert_false(r->done);
	until_a_beat(f);
	lt_free(f->lt[2]); /* crashed */
	f->lt[2] = NULL;
	return token;
}

/* A reader alone behind a session-mode holder that crashed (its
 * locktable freed right after a heartbeat: nothing more is written):
 * it kills the session once the session's rvn stood still its maxLeaseMs
 * (the lease), then ends the lock by XTAKE (its rvn still far longer), and
 * is granted a lease after the last beat, never before. */
static void test_reader_ends_a_crashed_session_mode_holder(void **state)
{
	struct fx *f = replica_fx();
	struct got r;
	struct lock_item it;
	int64_t token = crash_after_a_beat(f, &r, &it);
	int64_t took = until_granted(f, &r, 10 * LEASE);
	print_message("granted %lld ms after the last beat\n", (long long)took);
	assert_true(r.done);
	assert_non_null(r.lease);
	assert_true(took >= LEASE);
	assert_true(took <= LEASE + LEASE / 3 + 20);
	assert_true(sh_lease_token(r.lease) > token);
	struct session_item s = session_now(f, it.session);
	assert_true(s.exists);
	assert_true(s.has_dead); /* killed on the way: its beats refused now */
	sh_lease_release(r.lease);
	fx_run(f);
	fx_free(f);
}

/* As above, but the reader's first KILL fails (a throttled write): the
 * next read finds the session still live at the rvn it watched, both
 * stood still a lease, which an exclusive waiter would take over in a
 * transaction; a reader has none, so it sends the KILL again, then takes
 * the lock (XTAKE) once a read shows the session dead. */
static void test_reader_kills_again_when_its_kill_failed(void **state)
{
	struct fx *f = replica_fx();
	struct got r;
	struct lock_item it;
	int64_t token = crash_after_a_beat(f, &r, &it);
	store_memory_set_latency(f->store, 5);	  /* a gap between a KILL's send and answer */
	uint64_t ends = fx_req(f, STORE_RELEASE); /* KILLs and XTAKEs */
	int64_t t0 = fx_now(f);
	while (fx_req(f, STORE_RELEASE) == ends && fx_now(f) - t0 < 10 * LEASE)
		fx_advance(f, 1);
	assert_int_equal(fx_req(f, STORE_RELEASE) - ends, 1); /* the first KILL, in flight */
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException");
	fx_advance(f, 5); /* its answer */
	store_memory_set_latency(f->store, 0);
	assert_false(session_now(f, it.session).has_dead); /* it failed */
	int64_t took = until_granted(f, &r, 10 * LEASE);
	assert_true(r.done);
	assert_non_null(r.lease);
	assert_true(sh_lease_token(r.lease) > token);
	assert_true(session_now(f, it.session).has_dead);
	/* the failed KILL, the KILL again, the XTAKE */
	assert_int_equal(fx_req(f, STORE_RELEASE) - ends, 3);
	print_message("granted %lld ms after the failed KILL\n", (long long)took);
	sh_lease_release(r.lease);
	fx_run(f);
	fx_free(f);
}

/* A reader behind a session-mode holder whose session item is gone (the
 * holder crashed, the item deleted): a missing session is watched like any
 * value, never killed; granted once it stood absent a lease, not before. */
static void test_reader_behind_a_missing_session(void **state)
{
	struct fx *f = replica_fx();
	struct got r;
	struct lock_item it;
	int64_t token = crash_after_a_beat(f, &r, &it);
	assert_true(store_memory_session_delete(f->store, it.session));
	uint64_t ends = fx_req(f, STORE_RELEASE);
	int64_t took = until_granted(f, &r, 10 * LEASE);
	print_message("granted %lld ms after the session went\n", (long long)took);
	assert_true(r.done);
	assert_non_null(r.lease);
	assert_true(took >= LEASE);
	assert_true(took <= LEASE + LEASE / 3 + 20);
	assert_true(sh_lease_token(r.lease) > token);
	assert_int_equal(fx_req(f, STORE_RELEASE) - ends, 1); /* the XTAKE; no KILL */
	assert_false(session_now(f, it.session).exists);
	sh_lease_release(r.lease);
	fx_run(f);
	fx_free(f);
}

/* A reader that registered behind W1 and crashed keeps W2 out one lease of
 * W2's at most: W2 drops radmit once it stood still that long on its
 * clock, never before, and is granted. */
static void test_crashed_admitted_reader_costs_a_lease(void **state)
{
	struct fx *f = fx_new(2, true);
	struct fx_acq w2;
	struct lease *w1 = fx_take(f, 0, "rw", LEASE);
	struct store_sh_req reg = {
		.op = STORE_SH_RWAIT, .name = "rw", .cap = 8, .owner = "ghost-reader"};
	assert_int_equal(direct(f, reg).status, STORE_OK);
	fx_acquire(f, 1, "rw", LEASE, true, 0, &w2);
	fx_advance(f, LEASE / 2);
	lease_release(w1);
	fx_run(f);
	int64_t t0 = fx_now(f);
	while (fx_now(f) - t0 < LEASE) { /* refused within a lease */
		fx_advance(f, 100);
		assert_false(w2.done);
	}
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w2.done);
	assert_non_null(w2.lease);
	assert_true(fx_now(f) - t0 <= LEASE + 2 * LEASE / 3);
	lease_release(w2.lease);
	fx_run(f);
	fx_free(f);
}

/* A registered reader that gives up (its wait times out) takes its entry
 * away: the next release admits nobody, and a writer waiting behind it is
 * granted at its next poll, not a lease later. */
static void test_reader_giving_up_is_not_admitted(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got r;
	struct fx_acq w2;
	struct lease *w1 = fx_take(f, 0, "rw", LEASE);
	memset(&r, 0, sizeof(r));
	struct lt_sh_args a = {.name = "rw",
			       .mode = STORE_SH_SHARED,
			       .cap = 8,
			       .lease_ms = LEASE,
			       .wait = true,
			       .timeout_ms = LEASE / 2};
	assert_non_null(lt_sh_acquire(f->lt[1], &a, on_acquired, &r));
	fx_acquire(f, 1, "rw", LEASE, true, 0, &w2);
	fx_advance(f, LEASE / 2 + 1);
	assert_true(r.done);
	assert_null(r.lease);
	lease_release(w1);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w2.done);
	assert_non_null(w2.lease);
	lease_release(w2.lease);
	fx_run(f);
	fx_free(f);
}

/* A holder named by its caller (the simulator's, so that a seed replays)
 * writes that owner on its slot; an id a store cannot keep, or longer
 * than the lease core's own, is refused. */
static void test_owner_given(void **state)
{
	struct fx *f = fx_new(1, true);
	struct got g = {0};
	struct lt_sh_args a = {.name = "o",
			       .mode = STORE_SH_LIMIT,
			       .cap = 1,
			       .lease_ms = LEASE,
			       .owner = "r0.1.c2.a3"};
	assert_non_null(lt_sh_acquire(f->lt[0], &a, on_acquired, &g));
	fx_run(f);
	assert_non_null(g.lease);
	struct store_sh_req rd = {.op = STORE_SH_READ, .name = "o", .cap = 1, .count = 1};
	struct lock_item it = {.owner = "?"};
	assert_non_null(store_sh_submit(f->store, &rd, on_slot5, &it));
	fx_run(f);
	assert_string_equal(it.owner, "r0.1.c2.a3");
	sh_lease_release(g.lease);
	a.owner = "has space";
	assert_null(lt_sh_acquire(f->lt[0], &a, on_acquired, &g));
	a.owner = "0123456789abcdef0123456789abcdef0"; /* 33 bytes */
	assert_null(lt_sh_acquire(f->lt[0], &a, on_acquired, &g));
	fx_run(f);
	fx_free(f);
}

/* A semaphore's waiter on another replica gets its turn: replica 0's
 * holder releases and takes again at once, between replica 1's polls;
 * replica 1's waiter, having found it full for a poll, announces itself,
 * replica 0's next take is refused, and the place is replica 1's at its
 * next poll (before, replica 0 kept it for as long as it churned). */
static void test_semaphore_turn_across_replicas(void **state)
{
	struct fx *f = fx_new(2, true);
	struct got a, w;
	struct sh_lease *l = try_shared(f, 0, "turn", STORE_SH_LIMIT, 1, &a);
	assert_non_null(l);
	start(f, 1, "turn", STORE_SH_LIMIT, 1, true, &w);
	fx_run(f);
	int64_t t0 = fx_now(f);
	while (l != NULL && fx_now(f) - t0 < 10 * LEASE) {
		fx_advance(f, 250);
		sh_lease_release(l);
		fx_run(f);
		l = try_shared(f, 0, "turn", STORE_SH_LIMIT, 1, &a);
	}
	assert_null(l); /* refused: replica 1's turn stands */
	assert_false(w.done);
	fx_advance(f, LEASE / 3 + 1);
	assert_true(w.done);
	assert_non_null(w.lease);
	assert_true(fx_now(f) - t0 < 3 * LEASE);
	sh_lease_release(w.lease);
	fx_run(f);
	l = try_shared(f, 0, "turn", STORE_SH_LIMIT, 1, &a); /* the turn cleared */
	assert_non_null(l);
	sh_lease_release(l);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_share_and_shut_out_the_writer),
		cmocka_unit_test(test_writer_polls_while_readers_hold),
		cmocka_unit_test(test_writer_removes_crashed_reader),
		cmocka_unit_test(test_writer_stops_new_readers),
		cmocka_unit_test(test_crashed_writer_announcement_cleared),
		cmocka_unit_test(test_crashed_writer_announcement_cleared_by_tries),
		cmocka_unit_test(test_granted_writer_leaves_no_announcement),
		cmocka_unit_test(test_writer_refused_refresh_still_clears),
		cmocka_unit_test(test_writer_timed_out_leaves_no_announcement),
		cmocka_unit_test(test_reader_takes_a_crashed_writer),
		cmocka_unit_test(test_semaphore_third_waits),
		cmocka_unit_test(test_crashed_holder_taken_over_after_a_lease),
		cmocka_unit_test(test_renewed_then_taken_over),
		cmocka_unit_test(test_failing_renewals_expire),
		cmocka_unit_test(test_cancel_leaves_nothing),
		cmocka_unit_test(test_renew_now),
		cmocka_unit_test(test_renew_now_refused),
		cmocka_unit_test(test_state_lists_every_holder),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_readers_first_on_one_replica),
		cmocka_unit_test(test_readers_first_across_replicas),
		cmocka_unit_test(test_crashed_admitted_reader_costs_a_lease),
		cmocka_unit_test(test_reader_giving_up_is_not_admitted),
		cmocka_unit_test(test_owner_given),
		cmocka_unit_test(test_semaphore_turn_across_replicas),
		cmocka_unit_test(test_reader_behind_a_session_mode_holder),
		cmocka_unit_test(test_reader_ends_a_crashed_session_mode_holder),
		cmocka_unit_test(test_reader_kills_again_when_its_kill_failed),
		cmocka_unit_test(test_reader_behind_a_missing_session),
		cmocka_unit_test(test_grant_applied_though_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
