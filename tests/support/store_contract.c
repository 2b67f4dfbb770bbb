/*
 * store_contract.c: the store contract suite (see store_contract.h). Every
 * test states what store.h promises; none knows which store it runs on.
 */
#include "core/store/store_blob.h"
#include "core/store/store_chan.h"
#include "core/store/store_tx.h"
#include "tests/support/store_contract_int.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static unsigned name_seq;

int store_contract_setup(void **state)
{
	const struct store_factory *f = *state;
	struct fixture *fx = calloc(1, sizeof *fx);
	if (!fx)
		return -1;
	fx->f = f;
	fx->s = f->make(f->arg);
	if (!fx->s) {
		free(fx);
		return -1;
	}
	char id[33];
	store_new_id(id);
	snprintf(fx->name, sizeof fx->name, "contract-%u-%.8s", ++name_seq, id);
	*state = fx;
	return 0;
}

int store_contract_teardown(void **state)
{
	struct fixture *fx = *state;
	fx->f->destroy(fx->f->arg, fx->s);
	*state = (void *)fx->f;
	free(fx);
	return 0;
}

struct wait {
	bool done;
	int calls;
	struct store_result res;
};

static void on_result(void *arg, const struct store_result *res)
{
	struct wait *w = arg;
	w->calls++;
	w->done = true;
	w->res = *res;
}

bool store_contract_do(const struct store_factory *f, struct store *s, const struct store_req *req,
		       struct store_result *out)
{
	struct wait w = {0};
	struct store_call *c = store_submit(s, req, on_result, &w);
	assert_non_null(c);
	assert_false(w.done); /* never inside store_submit() */
	f->run(f->arg, &w.done);
	if (!w.done)
		fail_msg("%s: no answer to %s", f->name, store_op_name(req->op));
	assert_int_equal(w.calls, 1);
	*out = w.res;
	return true;
}

/* ---- one line per operation ---- */

struct store_result store_contract_op(struct fixture *fx, struct store_req r)
{
	struct store_result res;
	r.name = r.name ? r.name : fx->name;
	store_contract_do(fx->f, fx->s, &r, &res);
	if (res.status == STORE_TRANSIENT || res.status == STORE_FATAL ||
	    res.status == STORE_NO_TABLE)
		print_message("%s %s: %s %s %s\n", fx->f->name, store_op_name(r.op),
			      store_status_name(res.status), res.error_type ? res.error_type : "",
			      res.message);
	return res;
}

static struct store_result op(struct fixture *fx, struct store_req r)
{
	return store_contract_op(fx, r);
}

struct store_result sc_acquire(struct fixture *fx, const char *owner, const char *rvn,
			       const char *seen, const char *holder)
{
	return op(fx, (struct store_req){.op = STORE_ACQUIRE,
					 .owner = owner,
					 .rvn = rvn,
					 .seen_rvn = seen,
					 .holder = holder,
					 .lease_ms = 30000});
}

struct store_result sc_renew(struct fixture *fx, const char *owner, const char *rvn,
			     const char *holder)
{
	return op(fx, (struct store_req){.op = STORE_RENEW,
					 .owner = owner,
					 .rvn = rvn,
					 .holder = holder,
					 .lease_ms = 20000});
}

struct store_result sc_release(struct fixture *fx, const char *owner)
{
	return op(fx, (struct store_req){.op = STORE_RELEASE, .owner = owner});
}

struct store_result sc_read_item(struct fixture *fx)
{
	return op(fx, (struct store_req){.op = STORE_READ});
}

static struct store_result sc_del(struct fixture *fx)
{
	return op(fx, (struct store_req){.op = STORE_DELETE});
}

static struct store_result sc_check(struct fixture *fx, const char *owner, int64_t token)
{
	return op(fx, (struct store_req){.op = STORE_CHECK, .owner = owner, .token = token});
}

struct store_result sc_announce(struct fixture *fx, const char *waiter, int64_t ms)
{
	return op(fx, (struct store_req){.op = STORE_ANNOUNCE, .waiter = waiter, .waiter_ms = ms});
}

struct store_result sc_withdraw(struct fixture *fx, const char *waiter)
{
	return op(fx, (struct store_req){.op = STORE_WITHDRAW, .waiter = waiter});
}

/* An acquire that may take the announcement of waiter (and removes it). */
struct store_result sc_acquire_w(struct fixture *fx, const char *owner, const char *rvn,
				 const char *seen, const char *waiter)
{
	return op(fx, (struct store_req){.op = STORE_ACQUIRE,
					 .owner = owner,
					 .rvn = rvn,
					 .seen_rvn = seen,
					 .waiter = waiter,
					 .lease_ms = 30000});
}

void sc_assert_waiter(const struct lock_item *it, const char *waiter, int64_t ms)
{
	if (waiter == NULL) {
		assert_false(it->has_waiter);
		assert_string_equal(it->waiter, "");
		return;
	}
	assert_true(it->has_waiter);
	assert_string_equal(it->waiter, waiter);
	assert_int_equal(it->waiter_ms, ms);
}

void sc_assert_held(const struct lock_item *it, const char *owner, const char *rvn, int64_t fence,
		    int64_t lease_ms, const char *holder)
{
	assert_true(it->exists);
	assert_true(it->has_owner);
	assert_true(it->has_rvn);
	assert_true(it->has_lease);
	assert_true(it->has_fence);
	assert_string_equal(it->owner, owner);
	assert_string_equal(it->rvn, rvn);
	assert_int_equal(it->fence, fence);
	assert_int_equal(it->lease_ms, lease_ms);
	assert_string_equal(it->holder, holder ? holder : "");
	assert_string_equal(it->type, "LOCK");
}

/* ---- the contract ---- */

static void acquire_free(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, "pod-a");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	r = sc_read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
}

static void acquire_refused_with_item(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = sc_acquire(fx, "B", "r2", NULL, "pod-b");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	/* a stale seen rvn is no takeover */
	r = sc_acquire(fx, "B", "r2", "r0", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
}

static void acquire_takeover_of_seen_rvn(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = sc_acquire(fx, "B", "r2", "r1", "pod-b");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "B", "r2", 2, 30000, "pod-b");
	/* the old holder's renewal finds it taken over */
	r = sc_renew(fx, "A", "r3", "pod-a");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "B", "r2", 2, 30000, "pod-b");
}

/* The item as read now shows that holder (sc_assert_held). */
static void assert_read_held(struct fixture *fx, const char *owner, const char *rvn, int64_t fence,
			     int64_t lease_ms, const char *holder)
{
	struct store_result r = sc_read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, owner, rvn, fence, lease_ms, holder);
}

/* The same acquire once more (a retry whose earlier attempt applied, or a
 * duplicated delivery) finds its own owner and rvn: OK with the item as the
 * first attempt wrote it, written on no further (the fence rises once). */
static void acquire_applied_attempt_answers_ok(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, "pod-a");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	assert_read_held(fx, "A", "r1", 1, 30000, "pod-a");
	/* a takeover's and an announced waiter's likewise */
	r = sc_acquire(fx, "B", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_OK);
	r = sc_acquire(fx, "B", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "B", "r2", 2, 30000, NULL);
	assert_int_equal(sc_announce(fx, "W1", 700).status, STORE_OK);
	r = sc_acquire_w(fx, "C", "r3", "r2", "W1");
	assert_int_equal(r.status, STORE_OK);
	r = sc_acquire_w(fx, "C", "r3", "r2", "W1");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "C", "r3", 3, 30000, NULL);
	assert_read_held(fx, "C", "r3", 3, 30000, NULL);
}

/* An attempt of an acquire that lands after its lease renewed (a retry, a
 * late or duplicated delivery) is refused: it would put the acquire's rvn
 * back, which a waiter may have seen for a whole lease, and raise the
 * fence under the lease's token. */
static void acquire_late_attempt_refused_after_its_renewal(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_req renew = {
		.op = STORE_RENEW, .owner = "A", .rvn = "r2", .seen_rvn = "r1", .lease_ms = 20000};
	assert_int_equal(store_contract_op(fx, renew).status, STORE_OK);
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, "pod-a");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r2", 1, 20000, NULL);
	assert_read_held(fx, "A", "r2", 1, 20000, NULL);
	/* a takeover's late attempt alike */
	assert_int_equal(sc_acquire(fx, "B", "r3", "r2", NULL).status, STORE_OK);
	renew = (struct store_req){
		.op = STORE_RENEW, .owner = "B", .rvn = "r4", .seen_rvn = "r3", .lease_ms = 20000};
	assert_int_equal(store_contract_op(fx, renew).status, STORE_OK);
	r = sc_acquire(fx, "B", "r3", "r2", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_read_held(fx, "B", "r4", 2, 20000, NULL);
}

/* An attempt of an acquire that lands after its lease's release (an
 * attempt abandoned by its timeout, applied after the retry that took the
 * lease) is refused by the item's arvn, the rvn of the acquire that wrote
 * it: the lock stays free instead of held for a lease by nobody. Another
 * acquire, its own owner's too, takes it. */
static void acquire_late_attempt_refused_after_its_release(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_req renew = {
		.op = STORE_RENEW, .owner = "A", .rvn = "r2", .seen_rvn = "r1", .lease_ms = 20000};
	assert_int_equal(store_contract_op(fx, renew).status, STORE_OK);
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 1);
	r = sc_read_item(fx);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 1);
	/* without a renewal between (the item's rvn is the acquire's) too */
	assert_int_equal(sc_acquire(fx, "A", "r3", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	assert_int_equal(sc_acquire(fx, "A", "r3", NULL, NULL).status, STORE_REFUSED);
	/* a takeover's late attempt and an announced waiter's alike */
	assert_int_equal(sc_acquire(fx, "B", "r4", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_acquire(fx, "C", "r5", "r4", NULL).status, STORE_OK);
	assert_int_equal(sc_release(fx, "C").status, STORE_OK);
	assert_int_equal(sc_acquire(fx, "C", "r5", "r4", NULL).status, STORE_REFUSED);
	assert_int_equal(sc_acquire(fx, "D", "r6", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_announce(fx, "W1", 700).status, STORE_OK);
	assert_int_equal(sc_release(fx, "D").status, STORE_OK);
	assert_int_equal(sc_acquire_w(fx, "E", "r7", NULL, "W1").status, STORE_OK);
	assert_int_equal(sc_release(fx, "E").status, STORE_OK);
	assert_int_equal(sc_acquire_w(fx, "E", "r7", NULL, "W1").status, STORE_REFUSED);
	r = sc_acquire(fx, "E", "r8", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 7);
}

static struct store_result sc_acquire_f(struct fixture *fx, const char *owner, const char *rvn,
					const char *seen, int64_t fence)
{
	return store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
							.owner = owner,
							.rvn = rvn,
							.seen_rvn = seen,
							.seen_fence = fence,
							.has_seen_fence = true,
							.lease_ms = 30000});
}

/* An acquire conditioned on the fence of the item it decided on is
 * refused once another acquire was written since: its attempts never land
 * later, whatever the item became (free again after that lease's release
 * included). 0: no item, or no fence yet. */
static void acquire_on_the_fence_seen(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire_f(fx, "A", "r0", NULL, 3).status, STORE_REFUSED); /* none */
	assert_false(sc_read_item(fx).item.exists);
	struct store_result r = sc_acquire_f(fx, "A", "r1", NULL, 0);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 1);
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	/* a write that saw no item, landing late: the item has fence 1 */
	r = sc_acquire_f(fx, "B", "r2", NULL, 0);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.has_owner);
	r = sc_acquire_f(fx, "B", "r2", NULL, 1);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
	assert_int_equal(sc_release(fx, "B").status, STORE_OK);
	/* C's write decided on the item of fence 1: free now, but B acquired
	 * since, so it is refused */
	r = sc_acquire_f(fx, "C", "r3", NULL, 1);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 2);
	/* a takeover on the fence and rvn it saw */
	assert_int_equal(sc_acquire_f(fx, "D", "r4", NULL, 2).status, STORE_OK);
	assert_int_equal(sc_acquire_f(fx, "E", "r5", "r4", 2).status, STORE_REFUSED);
	r = sc_acquire_f(fx, "E", "r5", "r4", 3);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "E", "r5", 4, 30000, NULL);
	/* an item with no fence yet is 0 */
	struct lock_item raw = {.exists = true, .has_rvn = true};
	strcpy(raw.type, "LOCK");
	strcpy(raw.rvn, "r0");
	assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &raw));
	assert_int_equal(sc_acquire_f(fx, "F", "r6", NULL, 4).status, STORE_REFUSED);
	r = sc_acquire_f(fx, "F", "r6", NULL, 0);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 1);
}

/* A new acquire under the owner id the item shows (another request: a new
 * rvn) is refused like any other; on the rvn it sees, it is written. */
static void acquire_of_own_owner_needs_its_rvn(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_result r = sc_acquire(fx, "A", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	r = sc_acquire(fx, "A", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r2", 2, 30000, NULL);
}

static void fence_increments_from_1(void **state)
{
	struct fixture *fx = *state;
	for (int64_t i = 1; i <= 3; i++) {
		char owner[8];
		snprintf(owner, sizeof owner, "o%d", (int)i);
		struct store_result r = sc_acquire(fx, owner, owner, NULL, NULL);
		assert_int_equal(r.status, STORE_OK);
		assert_int_equal(r.item.fence, i);
		assert_int_equal(sc_release(fx, owner).status, STORE_OK);
	}
	/* deleting the item starts the token at 1 again */
	assert_int_equal(sc_del(fx).status, STORE_OK);
	struct store_result r = sc_acquire(fx, "X", "rx", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 1);
}

static void holder_removed_when_null(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, "pod-a");
	assert_string_equal(r.item.holder, "pod-a");
	r = sc_renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.holder, "");
	r = sc_renew(fx, "A", "r3", "pod-a2");
	assert_string_equal(r.item.holder, "pod-a2");
	/* an acquire without a label removes the label of the holder before */
	r = sc_acquire(fx, "B", "r4", "r3", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.holder, "");
	assert_string_equal(sc_read_item(fx).item.holder, "");
}

/* secretHash (ACQUIRE, RELEASE in store.h): written by an acquire that
 * brings one, left by renewals, removed by an acquire without one and by
 * a release. */
#define SC_HASH_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SC_HASH_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
static void secret_hash_written_kept_and_removed(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = op(fx, (struct store_req){.op = STORE_ACQUIRE,
							  .owner = "A",
							  .rvn = "r1",
							  .lease_ms = 30000,
							  .secret_hash = SC_HASH_A});
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.secret_hash, SC_HASH_A);
	r = sc_renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.secret_hash, SC_HASH_A);
	assert_string_equal(sc_read_item(fx).item.secret_hash, SC_HASH_A);
	/* a takeover without a secret leaves none of the lease before */
	r = sc_acquire(fx, "B", "r3", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.secret_hash, "");
	assert_string_equal(sc_read_item(fx).item.secret_hash, "");
	/* a takeover with one replaces it; a release removes it */
	r = op(fx, (struct store_req){.op = STORE_ACQUIRE,
				      .owner = "C",
				      .rvn = "r4",
				      .seen_rvn = "r3",
				      .holder = "h",
				      .lease_ms = 30000,
				      .secret_hash = SC_HASH_B});
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.secret_hash, SC_HASH_B);
	r = sc_release(fx, "C");
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.secret_hash, "");
	assert_string_equal(sc_read_item(fx).item.secret_hash, "");
}

/* ORPHAN and ADOPT (store.h): the holder marks its lease; an adopt on
 * (previous owner, fence, orphan marker, secret hash) moves it to a new
 * owner with a new rvn and secret hash, its fence kept, and says whom it
 * was adopted from; anything else is refused with the item. */
static struct store_result sc_adopt(struct fixture *fx, const char *owner, const char *rvn,
				    const char *prev, int64_t token, const char *prev_hash)
{
	return op(fx, (struct store_req){.op = STORE_ADOPT,
					 .owner = owner,
					 .rvn = rvn,
					 .prev_owner = prev,
					 .token = token,
					 .secret_hash = SC_HASH_B,
					 .prev_secret_hash = prev_hash,
					 .holder = "pod-b",
					 .lease_ms = 15000});
}

static void orphan_then_adopt(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = op(fx, (struct store_req){.op = STORE_ACQUIRE,
							  .owner = "A",
							  .rvn = "r1",
							  .holder = "pod-a",
							  .lease_ms = 30000,
							  .secret_hash = SC_HASH_A});
	assert_int_equal(r.status, STORE_OK);
	int64_t fence = r.item.fence;
	/* not orphaned: refused, the item answered */
	r = sc_adopt(fx, "B", "r2", "A", fence, SC_HASH_A);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "A");
	assert_string_equal(r.item.orphan, "");
	/* only its owner marks it */
	assert_int_equal(op(fx, (struct store_req){.op = STORE_ORPHAN, .owner = "X"}).status,
			 STORE_REFUSED);
	r = op(fx, (struct store_req){.op = STORE_ORPHAN, .owner = "A"});
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.orphan, "A");
	assert_string_equal(r.item.rvn, "r1"); /* a waiter's count goes on */
	assert_int_equal(r.item.fence, fence);
	/* wrong secret, fence or previous owner: refused */
	assert_int_equal(sc_adopt(fx, "B", "r2", "A", fence, SC_HASH_B).status, STORE_REFUSED);
	assert_int_equal(sc_adopt(fx, "B", "r2", "A", fence + 1, SC_HASH_A).status, STORE_REFUSED);
	assert_int_equal(sc_adopt(fx, "B", "r2", "Z", fence, SC_HASH_A).status, STORE_REFUSED);
	r = sc_adopt(fx, "B", "r2", "A", fence, SC_HASH_A);
	assert_int_equal(r.status, STORE_OK);
	for (int i = 0; i < 2; i++) {
		sc_assert_held(&r.item, "B", "r2", fence, 15000, "pod-b");
		assert_string_equal(r.item.secret_hash, SC_HASH_B);
		assert_string_equal(r.item.orphan, "");
		assert_string_equal(r.item.adopted_from, "A");
		r = sc_read_item(fx);
	}
	/* the old owner's renewal is refused by an item that says why */
	r = sc_renew(fx, "A", "r3", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.adopted_from, "A");
	/* once adopted, not again with the old secret */
	assert_int_equal(sc_adopt(fx, "C", "r4", "B", fence, SC_HASH_A).status, STORE_REFUSED);
	/* the new owner renews and releases it */
	assert_int_equal(sc_renew(fx, "B", "r5", "pod-b").status, STORE_OK);
	assert_int_equal(sc_release(fx, "B").status, STORE_OK);
}

static void a_lease_without_a_secret_is_never_adopted(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(op(fx, (struct store_req){.op = STORE_ORPHAN, .owner = "A"}).status,
			 STORE_OK);
	r = sc_adopt(fx, "B", "r2", "A", r.item.fence, SC_HASH_A);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "A");
	/* nor a free item */
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	assert_int_equal(sc_adopt(fx, "B", "r2", "A", r.item.fence, SC_HASH_A).status,
			 STORE_REFUSED);
}

static void renew_ok(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "h").status, STORE_OK);
	struct store_result r = sc_renew(fx, "A", "r2", "h");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r2", 1, 20000, "h");
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "A", "r2", 1, 20000, "h");
}

static struct store_result sc_renew_on(struct fixture *fx, const char *rvn, const char *seen)
{
	return op(fx, (struct store_req){.op = STORE_RENEW,
					 .owner = "A",
					 .rvn = rvn,
					 .seen_rvn = seen,
					 .lease_ms = 20000});
}

/* A renewal is conditioned on the rvn its lease last wrote: an attempt
 * that lands after a newer renewal (a retry, a late or duplicated
 * delivery) is refused and never puts its older rvn back; a retry of a
 * renewal whose earlier attempt applied finds its own rvn: OK. */
static void renew_on_the_rvn_last_written(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_result r = sc_renew_on(fx, "r2", "r1");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r2", 1, 20000, NULL);
	assert_int_equal(sc_renew_on(fx, "r3", "r2").status, STORE_OK);
	/* the late attempt of r2 (conditioned on r1) finds r3 */
	r = sc_renew_on(fx, "r2", "r1");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r3", 1, 20000, NULL);
	assert_string_equal(sc_read_item(fx).item.rvn, "r3");
	/* a retry of r3 whose first attempt applied: its own rvn, OK */
	r = sc_renew_on(fx, "r3", "r2");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r3", 1, 20000, NULL);
	/* another owner's item is refused whatever its rvn */
	r = op(fx, (struct store_req){.op = STORE_RENEW,
				      .owner = "B",
				      .rvn = "r4",
				      .seen_rvn = "r3",
				      .lease_ms = 20000});
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(sc_read_item(fx).item.rvn, "r3");
}

static void renew_refused_taken_over(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_req u = {.op = STORE_ACQUIRE,
			      .owner = "B",
			      .rvn = "rb",
			      .holder = "other",
			      .lease_ms = 5000,
			      .unconditional = true};
	assert_int_equal(op(fx, u).status, STORE_OK);
	struct store_result r = sc_renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "B", "rb", 2, 5000, "other");
}

static void renew_refused_deleted_never_creates(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_del(fx).status, STORE_OK);
	struct store_result r = sc_renew(fx, "A", "r2", "h");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.exists);
	r = sc_read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
}

static void renew_after_release_refused(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	struct store_result r = sc_renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
}

static void release_keeps_item(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = sc_release(fx, "A");
	assert_int_equal(r.status, STORE_OK);
	for (int i = 0; i < 2; i++) {
		assert_true(r.item.exists);
		assert_false(r.item.has_owner);
		assert_false(r.item.has_lease);
		assert_string_equal(r.item.holder, "");
		assert_true(r.item.has_fence);
		assert_int_equal(r.item.fence, 1);
		assert_true(r.item.has_rvn);
		assert_string_equal(r.item.rvn, "r1");
		assert_string_equal(r.item.type, "LOCK");
		r = sc_read_item(fx);
		assert_int_equal(r.status, STORE_OK);
	}
	/* free again: the next acquire needs no takeover */
	r = sc_acquire(fx, "B", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
}

static void release_refused(void **state)
{
	struct fixture *fx = *state;
	/* no item: refused, and none is made */
	struct store_result r = sc_release(fx, "A");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.exists);
	assert_false(sc_read_item(fx).item.exists);
	/* somebody else's lock is left alone */
	assert_int_equal(sc_acquire(fx, "B", "rb", NULL, "pod-b").status, STORE_OK);
	r = sc_release(fx, "A");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "B", "rb", 1, 30000, "pod-b");
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "B", "rb", 1, 30000, "pod-b");
}

static void read_absent(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
}

static void delete_item(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_del(fx).status, STORE_OK); /* nothing to delete is fine */
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_result r = sc_del(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
	assert_false(sc_read_item(fx).item.exists);
}

static void check_ok_and_refused(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_check(fx, "A", 1);
	assert_int_equal(r.status, STORE_REFUSED); /* no item */
	assert_false(r.item.exists);
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_check(fx, "A", 1).status, STORE_OK);
	r = sc_check(fx, "A", 2); /* wrong token */
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	r = sc_check(fx, "B", 1); /* wrong owner */
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	r = sc_check(fx, "A", 1); /* released */
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
}

static void ttl_written(void **state)
{
	struct fixture *fx = *state;
	struct store_req a = {.op = STORE_ACQUIRE,
			      .owner = "A",
			      .rvn = "r1",
			      .lease_ms = 1000,
			      .ttl = 1900000000};
	struct store_result r = op(fx, a);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.ttl, 1900000000);
	struct store_req n = {
		.op = STORE_RENEW, .owner = "A", .rvn = "r2", .lease_ms = 1000, .ttl = 1900000100};
	r = op(fx, n);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.ttl, 1900000100);
	struct store_req l = {.op = STORE_RELEASE, .owner = "A", .ttl = 1900000200};
	r = op(fx, l);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.ttl, 1900000200);
	assert_int_equal(sc_read_item(fx).item.ttl, 1900000200);
}

static void unconditional_acquire_and_release(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_req u = {.op = STORE_ACQUIRE,
			      .owner = "B",
			      .rvn = "rb",
			      .lease_ms = 2000,
			      .unconditional = true};
	struct store_result r = op(fx, u);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "B", "rb", 2, 2000, NULL);
	struct store_req rel = {.op = STORE_RELEASE, .unconditional = true};
	r = op(fx, rel);
	assert_int_equal(r.status, STORE_OK);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 2);
	/* an unconditional release makes no item where there is none */
	assert_int_equal(sc_del(fx).status, STORE_OK);
	r = op(fx, rel);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.exists);
	assert_false(sc_read_item(fx).item.exists);
}

static void requests_counted(void **state)
{
	struct fixture *fx = *state;
	uint64_t before[STORE_OP_COUNT];
	memcpy(before, fx->s->requests, sizeof before);
	sc_acquire(fx, "A", "r1", NULL, NULL);
	sc_renew(fx, "A", "r2", NULL);
	sc_read_item(fx);
	sc_check(fx, "A", 1);
	sc_announce(fx, "W", 1000);
	sc_withdraw(fx, "W");
	op(fx, (struct store_req){.op = STORE_ORPHAN, .owner = "A"});
	sc_adopt(fx, "B", "r3", "A", 1, SC_HASH_A); /* refused: no secret; counted */
	sc_release(fx, "A");
	sc_del(fx);
	store_contract_scan_page(fx);
	for (int i = 0; i < STORE_OP_COUNT; i++)
		if (i != STORE_TRANSACT) /* transact_counted */
			assert_int_equal(fx->s->requests[i] - before[i], 1);
	assert_int_equal(fx->s->in_flight, 0);
}

struct tx_box {
	bool done;
	enum store_status status;
};

static void tx_done(void *arg, const struct store_tx_result *res)
{
	struct tx_box *b = arg;
	b->done = true;
	b->status = res->status;
}

/* A fenced transaction is one STORE_TRANSACT request, answered later
 * (never inside the call), whatever the store makes of it: the embedded
 * store refuses it, DynamoDB refuses a table that does not exist. */
static void transact_counted(void **state)
{
	struct fixture *fx = *state;
	static const char items[] =
		"[{\"Put\":{\"TableName\":\"lg-no-such-table\",\"Item\":{\"id\":{\"S\":\"1\"}}}}]";
	uint64_t before = fx->s->requests[STORE_TRANSACT];
	sc_acquire(fx, "A", "r1", NULL, NULL);
	struct tx_box b = {0};
	struct store_tx_req req = {.name = fx->name,
				   .owner = "A",
				   .token = 1,
				   .items = items,
				   .items_len = sizeof(items) - 1};
	struct store_call *c = store_transact(fx->s, &req, tx_done, &b);
	assert_non_null(c);
	assert_false(b.done);
	assert_int_equal(fx->s->requests[STORE_TRANSACT] - before, 1);
	fx->f->run(fx->f->arg, &b.done);
	assert_true(b.done);
	/* the embedded store: FATAL (no other tables); DynamoDB: NO_TABLE,
	 * a table of the transaction missing (store_tx.h) */
	assert_true(b.status == STORE_FATAL || b.status == STORE_NO_TABLE);
	assert_int_equal(fx->s->in_flight, 0);
}

static void never_called(void *arg, const struct store_result *res)
{
	fail_msg("the callback of a cancelled request ran");
}

static void cancel_means_no_callback(void **state)
{
	struct fixture *fx = *state;
	struct store_req r = {.op = STORE_READ, .name = fx->name};
	struct store_call *c = store_submit(fx->s, &r, never_called, NULL);
	assert_non_null(c);
	store_cancel(fx->s, c);
	store_cancel(fx->s, NULL);
	assert_int_equal(fx->s->in_flight, 0);
	/* the store still works, and the cancelled call stays silent */
	assert_int_equal(sc_read_item(fx).status, STORE_OK);
}

static void request_strings_copied(void **state)
{
	struct fixture *fx = *state;
	char owner[8] = "A", rvn[8] = "r1", holder[8] = "h";
	struct store_req r = {.op = STORE_ACQUIRE,
			      .name = fx->name,
			      .owner = owner,
			      .rvn = rvn,
			      .holder = holder,
			      .lease_ms = 30000};
	struct wait w = {0};
	struct store_call *c = store_submit(fx->s, &r, on_result, &w);
	assert_non_null(c);
	strcpy(owner, "X");
	strcpy(rvn, "X");
	strcpy(holder, "X");
	fx->f->run(fx->f->arg, &w.done);
	assert_true(w.done);
	assert_int_equal(w.res.status, STORE_OK);
	sc_assert_held(&w.res.item, "A", "r1", 1, 30000, "h");
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

/* Blobs (store_blob.h): absent, put, read back byte for byte (NUL and
 * 0xff included), replaced; never a lock. */
struct blob_box {
	bool done;
	struct store_blob_result res;
	unsigned char data[64];
};

static void blob_done(void *arg, const struct store_blob_result *res)
{
	struct blob_box *b = arg;
	b->done = true;
	b->res = *res;
	b->res.data = NULL;
	if (res->found && res->len <= sizeof(b->data))
		memcpy(b->data, res->data, res->len);
}

static struct blob_box blob_op(struct fixture *fx, const void *data, size_t len, bool put)
{
	struct blob_box b = {0};
	struct store_call *c =
		put ? store_blob_put(fx->s, "SCRIPT", fx->name, data, len, blob_done, &b)
		    : store_blob_get(fx->s, "SCRIPT", fx->name, blob_done, &b);
	assert_non_null(c);
	assert_false(b.done);
	fx->f->run(fx->f->arg, &b.done);
	assert_true(b.done);
	if (b.res.status != STORE_OK)
		fail_msg("blob %s: %s", put ? "put" : "get", b.res.message);
	return b;
}

static void blob_put_get(void **state)
{
	struct fixture *fx = *state;
	struct blob_box b = blob_op(fx, NULL, 0, false);
	assert_false(b.res.found);
	static const unsigned char one[] = {'r', 'e', 't', 0, 0xff, '\n', 'x'};
	blob_op(fx, one, sizeof(one), true);
	b = blob_op(fx, NULL, 0, false);
	assert_true(b.res.found);
	assert_int_equal(b.res.len, sizeof(one));
	assert_memory_equal(b.data, one, sizeof(one));
	blob_op(fx, "two!", 4, true);
	b = blob_op(fx, NULL, 0, false);
	assert_int_equal(b.res.len, 4);
	assert_memory_equal(b.data, "two!", 4);
	/* not a lock: the lock of the same name is absent */
	struct store_result r = op(fx, (struct store_req){.op = STORE_READ, .name = fx->name});
	assert_false(r.item.exists);
	/* bad arguments: refused at once */
	struct blob_box none = {0};
	assert_null(store_blob_get(fx->s, "LOCK", fx->name, blob_done, &none));
	assert_null(store_blob_get(fx->s, "script", fx->name, blob_done, &none));
	assert_int_equal(fx->s->in_flight, 0);
}

/* Channels (store_chan.h): absent, one message, then more than a log
 * keeps: seq counts them all, the log shows the last STORE_CHAN_KEEP,
 * oldest first, byte for byte, with their origins; never a lock. */
struct chan_box {
	bool done;
	struct store_chan_result res;
	char origin[STORE_CHAN_KEEP][STORE_ID_MAX + 1];
	unsigned char data[STORE_CHAN_KEEP][16];
	size_t len[STORE_CHAN_KEEP];
};

static void chan_done(void *arg, const struct store_chan_result *res)
{
	struct chan_box *b = arg;
	b->done = true;
	b->res = *res;
	for (unsigned i = 0; i < res->n; i++) {
		snprintf(b->origin[i], sizeof(b->origin[i]), "%s", res->e[i].origin);
		b->len[i] = res->e[i].len;
		memcpy(b->data[i], res->e[i].data,
		       res->e[i].len < sizeof(b->data[i]) ? res->e[i].len : sizeof(b->data[i]));
		b->res.e[i] = (struct store_chan_entry){0};
	}
}

static struct chan_box chan_op(struct fixture *fx, const char *id, const char *origin,
			       const void *data, size_t len)
{
	struct chan_box b = {0};
	struct store_call *c =
		origin != NULL ? store_chan_publish(fx->s, id, origin, data, len, 0, chan_done, &b)
			       : store_chan_read(fx->s, id, chan_done, &b);
	assert_non_null(c);
	fx->f->run(fx->f->arg, &b.done);
	assert_true(b.done);
	if (b.res.status != STORE_OK)
		fail_msg("channel %s: %s", origin ? "publish" : "read", b.res.message);
	return b;
}

static void chan_publish_read(void **state)
{
	struct fixture *fx = *state;
	char id[STORE_CHAN_ID_LEN + 1];
	uint64_t h = 1469598103934665603ull; /* an id of this test's name */
	for (const char *p = fx->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	snprintf(id, sizeof(id), "%016llx%016llx%08x", (unsigned long long)h,
		 (unsigned long long)~h, 7u);
	assert_false(chan_op(fx, id, NULL, NULL, 0).res.found);
	static const unsigned char first[] = {'w', 0, 0xff};
	struct chan_box b = chan_op(fx, id, "r1", first, sizeof(first));
	assert_true(b.res.found);
	assert_int_equal(b.res.seq, 1);
	assert_int_equal(b.res.n, 1);
	assert_string_equal(b.origin[0], "r1");
	assert_int_equal(b.len[0], sizeof(first));
	assert_memory_equal(b.data[0], first, sizeof(first));
	for (unsigned i = 2; i <= STORE_CHAN_KEEP + 3; i++) {
		char m[16];
		snprintf(m, sizeof(m), "m%u", i);
		b = chan_op(fx, id, i % 2 ? "r1" : "r2", m, strlen(m));
		assert_int_equal(b.res.seq, i);
	}
	b = chan_op(fx, id, NULL, NULL, 0);
	assert_int_equal(b.res.seq, STORE_CHAN_KEEP + 3);
	assert_int_equal(b.res.n, STORE_CHAN_KEEP);
	for (unsigned i = 0; i < STORE_CHAN_KEEP; i++) { /* messages 4 .. KEEP + 3 */
		char m[16];
		unsigned seq = 4 + i;
		snprintf(m, sizeof(m), "m%u", seq);
		assert_int_equal(b.len[i], strlen(m));
		assert_memory_equal(b.data[i], m, strlen(m));
		assert_string_equal(b.origin[i], seq % 2 ? "r1" : "r2");
	}
	/* not a lock: the lock of the same name is absent */
	struct store_result r = op(fx, (struct store_req){.op = STORE_READ, .name = fx->name});
	assert_false(r.item.exists);
	/* bad arguments: refused at once */
	struct chan_box none = {0};
	assert_null(store_chan_read(fx->s, "not-hex", chan_done, &none));
	assert_null(store_chan_publish(fx->s, id, "", "x", 1, 0, chan_done, &none));
	assert_null(store_chan_publish(fx->s, id, "r1", "x", STORE_CHAN_MSG_MAX + 1, 0, chan_done,
				       &none));
}

int store_contract_run(const struct store_factory *f)
{
	struct CMUnitTest tests[64 + STORE_CONTRACT_ITEMS_TESTS + STORE_CONTRACT_SCAN_TESTS] = {
		T(acquire_free),
		T(acquire_refused_with_item),
		T(acquire_takeover_of_seen_rvn),
		T(acquire_applied_attempt_answers_ok),
		T(acquire_late_attempt_refused_after_its_renewal),
		T(acquire_late_attempt_refused_after_its_release),
		T(acquire_on_the_fence_seen),
		T(acquire_of_own_owner_needs_its_rvn),
		T(fence_increments_from_1),
		T(holder_removed_when_null),
		T(secret_hash_written_kept_and_removed),
		T(orphan_then_adopt),
		T(a_lease_without_a_secret_is_never_adopted),
		T(renew_ok),
		T(renew_on_the_rvn_last_written),
		T(renew_refused_taken_over),
		T(renew_refused_deleted_never_creates),
		T(renew_after_release_refused),
		T(release_keeps_item),
		T(release_refused),
		T(read_absent),
		T(delete_item),
		T(check_ok_and_refused),
		T(ttl_written),
		T(unconditional_acquire_and_release),
		T(requests_counted),
		T(transact_counted),
		T(cancel_means_no_callback),
		T(request_strings_copied),
		T(blob_put_get),
		T(chan_publish_read),
	};
	size_t n = 0;
	while (n < sizeof tests / sizeof tests[0] && tests[n].name != NULL)
		n++;
	for (size_t i = 0; i < STORE_CONTRACT_ITEMS_TESTS; i++)
		tests[n++] = store_contract_items_tests[i];
	for (size_t i = 0; i < STORE_CONTRACT_SCAN_TESTS; i++)
		tests[n++] = store_contract_scan_tests[i];
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	return _cmocka_run_group_tests(f->name, tests, n, NULL, NULL);
}
