/*
 * Two renewals of one lease in flight, answered out of order: an explicit
 * lease_renew (LOCK.RENEW) racing the heartbeat. The lease runs from the
 * send time of the latest successful renewal (DESIGN.md, timing rules), so
 * the answer of the earlier send, arriving last, must change nothing: not
 * the lease's end, not the next heartbeat. Embedded store (one operation
 * made slow to reorder the answers), fake clock, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000
#define SLOW  400 /* the slow renewal's answer comes this much later */

struct renew_result {
	int calls;
	int renewed;
};
static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct renew_result *rr = arg;
	rr->calls++;
	rr->renewed = err != NULL ? -1 : r;
}

struct order_case {
	const char *what;
	bool heartbeat_slow; /* else the explicit renewal is the slow one */
	int64_t explicit_at; /* ms after the acquire */
};

/* Both renewals go out (the slow one first), the fast one is answered, then
 * the slow one: the lease ends a lease after the fast one's send, and the
 * next heartbeat goes a third of a lease after it. */
static void run_case(const struct order_case *c)
{
	struct fx *f = fx_new(1, true);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(lease_end_ms(l), t0 + LEASE);
	struct renew_result rr = {0};
	int64_t slow_send, fast_send;

	if (c->heartbeat_slow) {
		/* The heartbeat at L/3 is slow; LOCK.RENEW goes after it. */
		store_memory_set_op_latency(f->store, STORE_RENEW, SLOW);
		fx_advance(f, LEASE / 3);
		slow_send = fx_now(f);
		assert_int_equal(fx_req(f, STORE_RENEW), 1);
		store_memory_set_op_latency(f->store, STORE_RENEW, 0);
		fx_advance(f, c->explicit_at - LEASE / 3);
		fast_send = fx_now(f);
		assert_true(lease_renew(l, renewed, &rr));
		fx_run(f);
		assert_int_equal(rr.calls, 1);
	} else {
		/* LOCK.RENEW just before L/3 is slow; the heartbeat goes after it. */
		fx_advance(f, c->explicit_at);
		store_memory_set_op_latency(f->store, STORE_RENEW, SLOW);
		slow_send = fx_now(f);
		assert_true(lease_renew(l, renewed, &rr));
		store_memory_set_op_latency(f->store, STORE_RENEW, 0);
		fx_advance(f, t0 + LEASE / 3 - fx_now(f));
		fast_send = fx_now(f);
		assert_int_equal(rr.calls, 0); /* the slow one is still in flight */
	}
	assert_true(slow_send < fast_send);
	assert_true(fast_send < slow_send + SLOW);
	assert_int_equal(fx_req(f, STORE_RENEW), 2);
	/* The fast answer is in: the lease runs from its send. */
	assert_int_equal(lease_end_ms(l), fast_send + LEASE);

	/* The slow answer arrives last, a success too. */
	fx_advance(f, slow_send + SLOW - fx_now(f));
	if (!c->heartbeat_slow)
		assert_int_equal(rr.calls, 1);
	assert_int_equal(rr.renewed, 1);
	assert_true(lease_held(l));
	if (lease_end_ms(l) != fast_send + LEASE)
		fail_msg("%s: the lease ends at +%lld, from the earlier send (+%lld) answered "
			 "last; want +%lld, from the later send (+%lld)",
			 c->what, (long long)(lease_end_ms(l) - t0), (long long)(slow_send - t0),
			 (long long)(fast_send + LEASE - t0), (long long)(fast_send - t0));

	/* The next heartbeat: a third of a lease after the later send, not
	 * after the earlier one. */
	int64_t next = fast_send + LEASE / 3;
	fx_advance(f, next - 1 - fx_now(f));
	assert_int_equal(fx_req(f, STORE_RENEW), 2);
	fx_advance(f, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), 3);
	assert_int_equal(lease_end_ms(l), next + LEASE);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

static const struct order_case cases[] = {
	{"a slow heartbeat answered after LOCK.RENEW", true, LEASE / 3 + 100},
	{"a slow LOCK.RENEW answered after the heartbeat", false, LEASE / 3 - 100},
};

static void slow_heartbeat_answered_after_explicit_renew(void **state)
{
	run_case(&cases[0]);
}

static void slow_explicit_renew_answered_after_heartbeat(void **state)
{
	run_case(&cases[1]);
}

/* The control: the same two renewals answered in order. Both went out on
 * the rvn the acquire wrote; the one sent first lands first, so the later
 * one is refused by it (a write of this very lease: no loss) and the lease
 * runs from the first one's send: the item shows that renewal's rvn, and a
 * waiter may have read it since a moment before the later send. */
static void in_order_answers_extend_from_the_send_that_landed(void **state)
{
	struct fx *f = fx_new(1, true);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct renew_result rr = {0};
	store_memory_set_op_latency(f->store, STORE_RENEW, SLOW);
	fx_advance(f, LEASE / 3 - 100);
	assert_true(lease_renew(l, renewed, &rr)); /* answered at L/3 + 300 */
	fx_advance(f, 100);			   /* the heartbeat, answered at L/3 + 400 */
	assert_int_equal(fx_req(f, STORE_RENEW), 2);
	fx_advance(f, SLOW - 100);
	assert_int_equal(rr.calls, 1);
	assert_int_equal(lease_end_ms(l), t0 + LEASE / 3 - 100 + LEASE);
	fx_advance(f, 100);
	assert_int_equal(rr.renewed, 1);
	assert_true(lease_held(l));
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);
	assert_int_equal(lease_end_ms(l), t0 + LEASE / 3 - 100 + LEASE);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

/* A store in front of the embedded one that can deliver the first renewal
 * it was given once more, later: what DynamoDB sees when the SDK retries a
 * timed-out attempt with the same body and the first one lands too, or
 * when an abandoned attempt lands late. */
struct replay_store {
	struct store base;
	struct store *mem;
	enum store_op op; /* the operation whose first request it keeps */
	bool recorded;
	struct store_req req;
	char name[64], owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1], seen[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1];
};

/* Keeps a copy of req (its strings in rs). */
static void rs_record(struct replay_store *rs, const struct store_req *req)
{
	rs->recorded = true;
	rs->req = *req;
	rs->req.span = NULL;
	rs->req.holder = req->holder != NULL ? strcpy(rs->holder, req->holder) : NULL;
	rs->req.name = strcpy(rs->name, req->name);
	rs->req.owner = strcpy(rs->owner, req->owner);
	rs->req.rvn = strcpy(rs->rvn, req->rvn);
	rs->req.seen_rvn = req->seen_rvn != NULL ? strcpy(rs->seen, req->seen_rvn) : NULL;
	rs->req.waiter = NULL; /* the tests' requests take no announcement */
}

static struct store_call *rs_submit(struct store *s, const struct store_req *req, store_cb cb,
				    void *arg)
{
	struct replay_store *rs = (struct replay_store *)s;
	if (req->op == rs->op && !rs->recorded)
		rs_record(rs, req);
	return store_submit(rs->mem, req, cb, arg);
}

static void rs_cancel(struct store *s, struct store_call *call)
{
	store_cancel(((struct replay_store *)s)->mem, call);
}

static void rs_free(struct store *s) {}

static const struct store_ops replay_ops = {
	.submit = rs_submit, .cancel = rs_cancel, .free = rs_free};

static void replayed(void *arg, const struct store_result *res)
{
	*(enum store_status *)arg = res->status;
}

static const char *item_rvn(struct fx *f, char *buf)
{
	struct lock_item it;
	assert_true(store_read_now(f->store, "job", &it));
	return strcpy(buf, it.rvn);
}

/* The first renewal lands, then again after the second one (a retried or
 * late attempt, simulator seed 2522): it must not put its rvn back. A
 * waiter elsewhere read that rvn before the second renewal and then sees
 * it again: without a version change it counts a whole lease from its
 * first read and takes the lock over while the holder's lease, renewed by
 * the second renewal, still runs. With renewals conditioned on the rvn
 * last written the late attempt is refused, the waiter sees the second
 * renewal's rvn, and the takeover comes only after the holder's lease. */
static void a_late_attempt_of_an_older_renewal_never_brings_its_rvn_back(void **state)
{
	struct fx *f = fx_new(2, true);
	struct replay_store rs = {
		.base = {.ops = &replay_ops, .table = "locks"}, .mem = f->store, .op = STORE_RENEW};
	struct lt_options o = {.holder_label = "holder"};
	f->lt[2] = lt_new(f->clock, &rs.base, &f->obs, &o);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 2, "job", LEASE);
	char first[STORE_ID_MAX + 1], second[STORE_ID_MAX + 1], now[STORE_ID_MAX + 1];

	fx_advance(f, 500);
	struct fx_acq b = {0};
	fx_acquire(f, 1, "job", LEASE, true, 0, &b); /* reads the acquire's rvn */
	fx_advance(f, t0 + LEASE / 3 - fx_now(f));   /* the first renewal */
	item_rvn(f, first);
	assert_true(rs.recorded);
	assert_string_equal(rs.req.rvn, first);
	fx_advance(f, 500); /* the waiter's poll reads the first renewal's rvn */
	fx_advance(f, 500); /* the second renewal */
	item_rvn(f, second);
	assert_string_not_equal(first, second);
	int64_t end = lease_end_ms(l);
	assert_int_equal(end, fx_now(f) + LEASE);

	/* the first renewal's request lands once more */
	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_REFUSED);
	assert_string_equal(item_rvn(f, now), second);

	/* the holder's later renewals are slow: its lease runs to end */
	store_memory_set_op_latency(f->store, STORE_RENEW, 2 * LEASE);
	fx_advance(f, end - 1 - fx_now(f));
	assert_true(lease_held(l));
	if (b.lease != NULL)
		fail_msg("the waiter took the lock over at +%lld while the holder's lease runs to "
			 "+%lld",
			 (long long)(b.at_ms - t0), (long long)(end - t0));
	fx_advance(f, 1);
	assert_false(lease_held(l));
	fx_advance(f, LEASE); /* the waiter's whole lease since it read the second rvn */
	assert_non_null(b.lease);
	assert_true(lease_takeover(b.lease));
	fx_advance(f, 2 * LEASE); /* the slow renewals land, refused */
	lease_release(l);
	lease_release(b.lease);
	fx_run(f);
	fx_free(f);
}

static int64_t item_fence(struct fx *f)
{
	struct lock_item it;
	assert_true(store_read_now(f->store, "job", &it));
	return it.fence;
}

/* The holder's renewals from now on are slow: its lease runs to end. The
 * waiter b must not have the lock before then, and gets it a lease after
 * it read the rvn of the holder's last renewal (at read_at). */
static void waiter_waits_for_the_lease(struct fx *f, struct lease *l, struct fx_acq *b, int64_t end,
				       int64_t read_at, int64_t t0)
{
	store_memory_set_op_latency(f->store, STORE_RENEW, 2 * LEASE);
	fx_advance(f, end - 1 - fx_now(f));
	assert_true(lease_held(l));
	if (b->lease != NULL)
		fail_msg("the waiter took the lock over by +%lld while the holder's lease runs to "
			 "+%lld",
			 (long long)(fx_now(f) - t0), (long long)(end - t0));
	fx_advance(f, 1);
	assert_false(lease_held(l));
	fx_advance(f, read_at + LEASE + LEASE / 3 - fx_now(f));
	assert_non_null(b->lease);
	assert_true(lease_takeover(b->lease));
	fx_advance(f, 2 * LEASE); /* the slow renewals land, refused */
	lease_release(l);
	lease_release(b->lease);
	fx_run(f);
}

/* The acquire's request lands once more after the lease's first renewal
 * (an SDK retry of an attempt that timed out but applied, an abandoned
 * attempt landing late, a duplicated delivery: simulator seeds 6319,
 * 16107). With a condition that accepted the acquire's own owner it was
 * written again: the acquire's rvn back, which a waiter elsewhere read
 * before the renewal (so it counts a whole lease from that read and takes
 * the lock over while the renewed lease still runs), and the fence up
 * under the lease's token. It is refused now: the rvn and the fence stay. */
static void a_late_attempt_of_the_acquire_never_brings_its_rvn_back(void **state)
{
	struct fx *f = fx_new(2, true);
	struct replay_store rs = {.base = {.ops = &replay_ops, .table = "locks"},
				  .mem = f->store,
				  .op = STORE_ACQUIRE};
	struct lt_options o = {.holder_label = "holder"};
	f->lt[2] = lt_new(f->clock, &rs.base, &f->obs, &o);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 2, "job", LEASE);
	int64_t token = lease_token(l);
	char acq[STORE_ID_MAX + 1], now[STORE_ID_MAX + 1];
	item_rvn(f, acq);
	assert_true(rs.recorded);
	assert_string_equal(rs.req.rvn, acq);

	fx_advance(f, 500);
	struct fx_acq b = {0};
	fx_acquire(f, 1, "job", LEASE, true, 0, &b); /* refused: reads the acquire's rvn */
	fx_advance(f, t0 + LEASE / 3 - fx_now(f));   /* the first renewal */
	int64_t end = lease_end_ms(l);
	assert_int_equal(end, fx_now(f) + LEASE);
	assert_string_not_equal(item_rvn(f, now), acq);

	/* the acquire lands once more, before the waiter's next poll */
	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_REFUSED);
	assert_string_not_equal(item_rvn(f, now), acq);
	assert_int_equal(item_fence(f), token);
	waiter_waits_for_the_lease(f, l, &b, end, t0 + LEASE / 3 + 500, t0);
	fx_free(f);
}

static void released(void *arg, int r, const struct lt_error *err)
{
	*(int *)arg = err != NULL ? -1 : r;
}

/* The acquire's request lands once more after its lease was released and
 * the release answered (an attempt abandoned by its timeout, applied
 * after the retry that took the lease: simulator seeds 8631, 26075).
 * "Acknowledged means done": a client acting on the release must find
 * the lock free. It was written on the free item, holding the lock for a
 * lease with nobody holding it; it is refused now by the item's arvn. */
static void a_late_attempt_of_the_acquire_after_its_release_leaves_the_lock_free(void **state)
{
	struct fx *f = fx_new(2, true);
	struct replay_store rs = {.base = {.ops = &replay_ops, .table = "locks"},
				  .mem = f->store,
				  .op = STORE_ACQUIRE};
	f->lt[2] = lt_new(f->clock, &rs.base, &f->obs, NULL);
	struct lease *l = fx_take(f, 2, "job", LEASE);
	int64_t token = lease_token(l);
	fx_advance(f, LEASE / 2); /* renewed once */
	int rel = -2;
	lease_release_then(l, released, &rel);
	fx_run(f);
	assert_int_equal(rel, 1);
	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_REFUSED);
	assert_false(fx_state(f, "job").held);
	assert_int_equal(item_fence(f), token);
	struct lease *next = fx_take(f, 1, "job", LEASE); /* free at once */
	assert_int_equal(lease_token(next), token + 1);
	lease_release(next);
	fx_run(f);
	fx_free(f);
}

/* A store in front of the embedded one that holds back one acquire (the
 * nth): not applied now but answered refused with the item as it is (an
 * attempt that timed out, its retry refused), and applied when the test
 * says (the abandoned attempt landing late). */
struct hold_store {
	struct replay_store rs; /* the request held: rs.req */
	int nth, seen;
	store_cb cb;
	void *arg;
};

static void held_answer(void *arg, const struct store_result *res)
{
	struct hold_store *hs = arg;
	struct store_result r = *res;
	r.status = STORE_REFUSED;
	hs->cb(hs->arg, &r);
}

static struct store_call *hs_submit(struct store *s, const struct store_req *req, store_cb cb,
				    void *arg)
{
	struct hold_store *hs = (struct hold_store *)s;
	if (req->op != STORE_ACQUIRE || ++hs->seen != hs->nth)
		return store_submit(hs->rs.mem, req, cb, arg);
	rs_record(&hs->rs, req);
	hs->cb = cb;
	hs->arg = arg;
	struct store_req rd = {.op = STORE_READ, .name = req->name};
	return store_submit(hs->rs.mem, &rd, held_answer, hs);
}

static const struct store_ops hold_ops = {
	.submit = hs_submit, .cancel = rs_cancel, .free = rs_free};

/* A wait's write decided on a free item is held back (answered refused);
 * the wait writes again, gets the lock, releases it (answered 1); then
 * the held write lands, on a free item whose arvn is the later write's
 * (simulator seed 70679: 2.6 s late, past two leases). Conditioned on the
 * fence of the item it decided on, which the later write raised, it is
 * refused: the lock stays free. */
static void an_earlier_write_of_a_wait_landing_after_its_lease_leaves_the_lock_free(void **state)
{
	struct fx *f = fx_new(2, true);
	struct hold_store hs = {.rs = {.base = {.ops = &hold_ops, .table = "locks"},
				       .mem = f->store,
				       .op = STORE_ACQUIRE},
				.nth = 2};
	f->lt[2] = lt_new(f->clock, &hs.rs.base, &f->obs, NULL);
	struct lease *l0 = fx_take(f, 0, "job", LEASE);
	struct fx_acq w = {0};
	fx_acquire(f, 2, "job", LEASE, true, 0, &w); /* write 1: refused, held by l0 */
	fx_run(f);
	assert_int_equal(hs.seen, 1);
	lease_release(l0);
	fx_advance(f, LEASE / 3); /* the poll reads it free: write 2 held, write 3 */
	assert_int_equal(hs.seen, 3);
	assert_true(hs.rs.recorded);
	assert_non_null(w.lease);
	int64_t token = lease_token(w.lease);
	int rel = -2;
	lease_release_then(w.lease, released, &rel);
	fx_run(f);
	assert_int_equal(rel, 1);
	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &hs.rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_REFUSED);
	assert_false(fx_state(f, "job").held);
	assert_int_equal(item_fence(f), token);
	struct lease *next = fx_take(f, 1, "job", LEASE); /* free at once */
	lease_release(next);
	fx_run(f);
	fx_free(f);
}

static void checked(void *arg, int r, const struct lt_error *err)
{
	*(int *)arg = err != NULL ? -1 : r;
}

/* The acquire's request lands once more before any renewal (a duplicated
 * delivery, a retry whose first attempt applied): answered OK as the very
 * acquire it is, written on no further. The fence stays at the lease's
 * token, so its fencing check still passes (it failed when the repeat
 * raised the fence). */
static void a_repeated_acquire_keeps_the_fence_of_the_lease(void **state)
{
	struct fx *f = fx_new(1, true);
	struct replay_store rs = {.base = {.ops = &replay_ops, .table = "locks"},
				  .mem = f->store,
				  .op = STORE_ACQUIRE};
	f->lt[1] = lt_new(f->clock, &rs.base, &f->obs, NULL);
	struct lease *l = fx_take(f, 1, "job", LEASE);
	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_OK);
	assert_int_equal(item_fence(f), lease_token(l));
	int held = -2;
	assert_true(lease_check(l, checked, &held));
	fx_run(f);
	assert_int_equal(held, 1);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

static void foreign_done(void *arg, int done, const struct lt_state *st, const struct lt_error *err)
{
	*(int *)arg = err != NULL ? -1 : done;
}

/* A renewal by (name, token) from another replica (lt_foreign) whose
 * request lands once more after the holder took its write up and renewed
 * on it: refused, as the holder's own renewals' late attempts are (it was
 * conditioned on the owner only, and put its rvn back, which a waiter read
 * before the holder's renewal). */
static void a_late_attempt_of_a_renewal_by_token_never_brings_its_rvn_back(void **state)
{
	struct fx *f = fx_new(2, true);
	struct replay_store rs = {
		.base = {.ops = &replay_ops, .table = "locks"}, .mem = f->store, .op = STORE_RENEW};
	f->lt[2] = lt_new(f->clock, &rs.base, &f->obs, NULL);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	fx_advance(f, 50);
	int done = -2;
	struct lt_foreign_req fr = {.name = "job", .op = LT_FOREIGN_RENEW, .token = lease_token(l)};
	assert_true(lt_foreign(f->lt[2], &fr, foreign_done, &done));
	fx_run(f);
	assert_int_equal(done, 1);
	char by_token[STORE_ID_MAX + 1], now[STORE_ID_MAX + 1];
	assert_string_equal(item_rvn(f, by_token), rs.req.rvn);

	fx_advance(f, 50);
	struct fx_acq b = {0};
	fx_acquire(f, 1, "job", LEASE, true, 0, &b); /* reads the renewal by token */
	fx_advance(f, t0 + LEASE / 3 - fx_now(f));   /* the heartbeat takes it up, renews */
	int64_t end = lease_end_ms(l);
	assert_int_equal(end, fx_now(f) + LEASE);
	assert_string_not_equal(item_rvn(f, now), by_token);

	enum store_status st = STORE_FATAL;
	assert_non_null(store_submit(f->store, &rs.req, replayed, &st));
	fx_run(f);
	assert_int_equal(st, STORE_REFUSED);
	assert_string_not_equal(item_rvn(f, now), by_token);
	waiter_waits_for_the_lease(f, l, &b, end, t0 + 100 + LEASE / 3, t0);
	fx_free(f);
}

/* A renewal by token whose write meets a renewal of the holder made since
 * its read (conditioned on the rvn read, it is refused by the holder's own
 * write) is written again on the rvn the item shows: it answers renewed. */
static void a_renewal_by_token_racing_the_holder_is_written_again(void **state)
{
	struct fx *f = fx_new(2, true);
	int64_t t0 = fx_now(f);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	fx_advance(f, t0 + LEASE / 3 - 5 - fx_now(f));
	store_memory_set_op_latency(f->store, STORE_RENEW, 10); /* read before, write after */
	int done = -2;
	struct lt_foreign_req fr = {.name = "job", .op = LT_FOREIGN_RENEW, .token = lease_token(l)};
	uint64_t renewals = fx_req(f, STORE_RENEW);
	assert_true(lt_foreign(f->lt[1], &fr, foreign_done, &done));
	fx_run(f);
	assert_int_equal(fx_req(f, STORE_RENEW), renewals + 1); /* its write, on its way */
	store_memory_set_op_latency(f->store, STORE_RENEW, 0);
	fx_advance(f, 5); /* the heartbeat lands first */
	assert_int_equal(fx_req(f, STORE_RENEW), renewals + 2);
	assert_int_equal(done, -2);
	fx_advance(f, 5);
	assert_int_equal(done, 1);
	assert_int_equal(fx_req(f, STORE_RENEW), renewals + 3); /* refused, then written */
	assert_true(lease_held(l));
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_heartbeat_answered_after_explicit_renew),
		cmocka_unit_test(slow_explicit_renew_answered_after_heartbeat),
		cmocka_unit_test(in_order_answers_extend_from_the_send_that_landed),
		cmocka_unit_test(a_late_attempt_of_an_older_renewal_never_brings_its_rvn_back),
		cmocka_unit_test(a_late_attempt_of_the_acquire_never_brings_its_rvn_back),
		cmocka_unit_test(a_repeated_acquire_keeps_the_fence_of_the_lease),
		cmocka_unit_test(
			a_late_attempt_of_the_acquire_after_its_release_leaves_the_lock_free),
		cmocka_unit_test(
			an_earlier_write_of_a_wait_landing_after_its_lease_leaves_the_lock_free),
		cmocka_unit_test(a_late_attempt_of_a_renewal_by_token_never_brings_its_rvn_back),
		cmocka_unit_test(a_renewal_by_token_racing_the_holder_is_written_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
