/*
 * Leases with a secret (LOCK.ACQUIRE ... ADOPTABLE): the item keeps the
 * secret's hash; a renewal or release by (name, token) from outside the
 * holding replica (lt_foreign) is made only with that hash, the
 * force-release right (secret_waived) or an operator's forced release;
 * a lease without a secret behaves as before. Embedded store, fake
 * clock, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000

/* two hashes of 64 hex digits, as lsess_secret.c makes them */
static const char HASH_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char HASH_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static struct lease *take_with(struct fx *f, int i, const char *name, const char *hash)
{
	struct fx_acq a = {0};
	struct lt_acquire_args args = {.name = name, .lease_ms = LEASE, .secret_hash = hash};
	assert_non_null(lt_acquire(f->lt[i], &args, fx_acquire_cb, &a));
	fx_run(f);
	assert_true(a.done);
	assert_non_null(a.lease);
	return a.lease;
}

struct answer {
	int done;
	struct lt_state st;
};

static void foreign_done(void *arg, int done, const struct lt_state *st, const struct lt_error *err)
{
	struct answer *a = arg;
	a->done = err != NULL ? -1 : done;
	if (st != NULL)
		a->st = *st;
}

/* lt_foreign from locktable 1 on (job, token); its answer. */
static struct answer by_token(struct fx *f, enum lt_foreign_op op, int64_t token, const char *hash,
			      bool waived)
{
	struct answer a = {.done = -2};
	struct lt_foreign_req req = {.name = "job",
				     .op = op,
				     .token = token,
				     .secret_hash = hash,
				     .secret_waived = waived};
	assert_true(lt_foreign(f->lt[1], &req, foreign_done, &a));
	fx_run(f);
	return a;
}

static void the_item_keeps_the_hash_and_the_lease_knows_it(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = take_with(f, 0, "job", HASH_A);
	assert_string_equal(lease_secret_hash(l), HASH_A);
	struct lt_state st = fx_state(f, "job");
	assert_string_equal(st.secret_hash, HASH_A);
	/* renewals leave it alone */
	fx_advance(f, LEASE / 3 + 1);
	assert_string_equal(fx_state(f, "job").secret_hash, HASH_A);
	lease_release(l);
	fx_run(f);
	assert_string_equal(fx_state(f, "job").secret_hash, "");
	/* the next lease, without a secret, finds none left over */
	l = fx_take(f, 0, "job", LEASE);
	assert_null(lease_secret_hash(l));
	assert_string_equal(fx_state(f, "job").secret_hash, "");
	lease_release(l);
	fx_free(f);
}

static void renew_by_token_needs_the_secret(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = take_with(f, 0, "job", HASH_A);
	int64_t token = lease_token(l);
	uint64_t writes = fx_req(f, STORE_RENEW);
	struct answer a = by_token(f, LT_FOREIGN_RENEW, token, NULL, false);
	assert_int_equal(a.done, 0);
	assert_string_equal(a.st.secret_hash, HASH_A); /* the caller can say why */
	assert_int_equal(by_token(f, LT_FOREIGN_RENEW, token, HASH_B, false).done, 0);
	assert_int_equal(fx_req(f, STORE_RENEW), writes); /* nothing written */
	assert_int_equal(by_token(f, LT_FOREIGN_RENEW, token, HASH_A, false).done, 1);
	assert_int_equal(by_token(f, LT_FOREIGN_RENEW, token, NULL, true).done, 1);
	assert_true(lease_held(l));
	lease_release(l);
	fx_free(f);
}

static void release_by_token_needs_the_secret_force_does_not(void **state)
{
	struct fx *f = fx_new(2, true);
	int64_t token = lease_detach(take_with(f, 0, "job", HASH_A));
	assert_int_equal(by_token(f, LT_FOREIGN_RELEASE, token, NULL, false).done, 0);
	assert_int_equal(by_token(f, LT_FOREIGN_RELEASE, token, HASH_B, false).done, 0);
	assert_true(fx_state(f, "job").held);
	assert_int_equal(by_token(f, LT_FOREIGN_RELEASE, token, HASH_A, false).done, 1);
	assert_false(fx_state(f, "job").held);
	/* an operator's forced release needs no secret */
	token = lease_detach(take_with(f, 0, "job", HASH_A));
	assert_int_equal(by_token(f, LT_FOREIGN_FORCE, token, NULL, false).done, 1);
	assert_false(fx_state(f, "job").held);
	/* nor does the force-release right */
	token = lease_detach(take_with(f, 0, "job", HASH_A));
	assert_int_equal(by_token(f, LT_FOREIGN_RELEASE, token, NULL, true).done, 1);
	assert_false(fx_state(f, "job").held);
	fx_free(f);
}

/* Today's (name, token) users: a lease without a secret is renewed and
 * released by its token alone, whatever hash is presented. */
static void a_lease_without_a_secret_needs_none(void **state)
{
	struct fx *f = fx_new(2, true);
	int64_t token = lease_detach(fx_take(f, 0, "job", LEASE));
	assert_int_equal(by_token(f, LT_FOREIGN_RENEW, token, NULL, false).done, 1);
	assert_int_equal(by_token(f, LT_FOREIGN_RENEW, token, HASH_B, false).done, 1);
	assert_int_equal(by_token(f, LT_FOREIGN_RELEASE, token, NULL, false).done, 1);
	fx_free(f);
}

static void a_bad_hash_is_refused_at_the_call(void **state)
{
	struct fx *f = fx_new(2, true);
	struct fx_acq a = {0};
	struct lt_acquire_args args = {.name = "job", .lease_ms = LEASE, .secret_hash = "abc"};
	assert_null(lt_acquire(f->lt[0], &args, fx_acquire_cb, &a));
	struct lt_foreign_req req = {
		.name = "job", .op = LT_FOREIGN_RENEW, .token = 1, .secret_hash = "abc"};
	assert_false(lt_foreign(f->lt[1], &req, foreign_done, &a));
	assert_false(lt_secret_match("", ""));
	assert_false(lt_secret_match(HASH_A, NULL));
	assert_false(lt_secret_match(HASH_A, HASH_B));
	assert_true(lt_secret_match(HASH_A, HASH_A));
	fx_free(f);
}

/* --- orphan and adopt --- */

static int orphan_value;
static void orphaned(void *arg, int v, const struct lt_error *err)
{
	orphan_value = err != NULL ? -1 : v;
}

static int lost_calls;
static enum lt_loss lost_reason;
static void on_lost(void *arg, struct lease *l, enum lt_loss reason)
{
	lost_calls++;
	lost_reason = reason;
}

static struct lease *orphan(struct fx *f, struct lease *l)
{
	orphan_value = -2;
	assert_true(lease_orphan(l, orphaned, NULL));
	fx_run(f);
	assert_int_equal(orphan_value, 1);
	return l;
}

static struct fx_acq adopt(struct fx *f, int i, const char *name, int64_t token, const char *hash,
			   const char *new_hash)
{
	struct fx_acq a = {0};
	struct lt_adopt_args args = {.name = name,
				     .token = token,
				     .secret_hash = hash,
				     .new_secret_hash = new_hash,
				     .lease_ms = LEASE};
	assert_true(lt_adopt(f->lt[i], &args, fx_acquire_cb, &a));
	fx_run(f);
	assert_true(a.done);
	return a;
}

/* An orphaned lease moves to another replica with its token, a new rvn
 * and a new secret; the old holder learns at its next renewal and ends
 * quietly (LT_ADOPTED: not a loss); the new one renews it on. */
static void an_orphaned_lease_is_adopted_with_its_token(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *old = orphan(f, take_with(f, 0, "job", HASH_A));
	lost_calls = 0;
	lease_on_lost(old, on_lost, NULL);
	int64_t token = lease_token(old);
	struct lock_item before;
	assert_true(store_read_now(f->store, "job", &before));
	assert_string_equal(before.orphan, lease_owner(old));
	struct fx_acq a = adopt(f, 1, "job", token, HASH_A, HASH_B);
	assert_non_null(a.lease);
	assert_false(a.error);
	assert_int_equal(lease_token(a.lease), token);
	assert_string_equal(lease_secret_hash(a.lease), HASH_B);
	struct lock_item it;
	assert_true(store_read_now(f->store, "job", &it));
	assert_string_equal(it.owner, lease_owner(a.lease));
	assert_string_equal(it.adopted_from, lease_owner(old));
	assert_string_equal(it.orphan, "");
	assert_string_equal(it.secret_hash, HASH_B);
	assert_string_not_equal(it.rvn, before.rvn); /* waiters count again */
	assert_int_equal(it.fence, token);
	fx_advance(f, LEASE / 3 + 1); /* the old holder's heartbeat is refused */
	assert_int_equal(lost_calls, 1);
	assert_int_equal(lost_reason, LT_ADOPTED);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);
	fx_advance(f, 4 * LEASE); /* the adopter renews it */
	assert_true(lease_held(a.lease));
	assert_int_equal(fx_state(f, "job").token, token);
	lease_release(old); /* ended: nothing sent */
	lease_release(a.lease);
	fx_run(f);
	assert_false(fx_state(f, "job").held);
	fx_free(f);
}

/* The end of a drain releases an orphan adopted since its last renewal:
 * the adopter's item refuses it, and that is no failed release (the
 * lease goes on with its adopter). */
static void releasing_an_adopted_orphan_is_no_failure(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *old = orphan(f, take_with(f, 0, "job", HASH_A));
	struct fx_acq a = adopt(f, 1, "job", lease_token(old), HASH_A, HASH_B);
	assert_non_null(a.lease);
	lease_release(old); /* before its next renewal: it does not know yet */
	fx_run(f);
	assert_int_equal(fx_events(f, OBS_RELEASE_FAILED), 0);
	assert_true(lease_held(a.lease));
	assert_true(fx_state(f, "job").held);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* Not adoptable, nothing written: a lease not orphaned (its connection is
 * alive), the wrong secret, the wrong token, no secret at all; an orphan
 * mark of a lease taken over since counts for nothing. */
static void only_an_orphan_with_its_secret_is_adopted(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = take_with(f, 0, "job", HASH_A);
	int64_t token = lease_token(l);
	uint64_t writes = fx_req(f, STORE_ADOPT);
	struct fx_acq a = adopt(f, 1, "job", token, HASH_A, HASH_B);
	assert_null(a.lease);
	assert_false(a.error); /* not orphaned */
	orphan(f, l);
	assert_null(adopt(f, 1, "job", token, HASH_B, HASH_B).lease);	  /* wrong secret */
	assert_null(adopt(f, 1, "job", token + 1, HASH_A, HASH_B).lease); /* wrong token */
	assert_int_equal(fx_req(f, STORE_ADOPT), writes);
	assert_true(lease_held(l));
	lease_release(l);
	fx_run(f);
	struct lease *plain = fx_take(f, 0, "job", LEASE); /* no secret */
	orphan(f, plain);
	assert_null(adopt(f, 1, "job", lease_token(plain), HASH_A, HASH_B).lease);
	assert_int_equal(fx_req(f, STORE_ADOPT), writes);
	lease_release(plain);
	struct lt_adopt_args bad = {.name = "job",
				    .token = 1,
				    .secret_hash = "abc",
				    .new_secret_hash = HASH_B,
				    .lease_ms = LEASE};
	assert_false(lt_adopt(f->lt[1], &bad, fx_acquire_cb, &a)); /* refused at the call */
	fx_free(f);
}

/* A waiter of a third replica is never granted the lock while it moves:
 * the adopt is a write, its count starts again. */
static void a_waiter_is_not_granted_while_the_lease_moves(void **state)
{
	struct fx *f = fx_new(3, true);
	struct lease *old = orphan(f, take_with(f, 0, "job", HASH_A));
	struct fx_acq w = {0};
	assert_non_null(fx_acquire(f, 2, "job", LEASE, true, 0, &w));
	fx_advance(f, LEASE / 2);
	int64_t was = lease_detach(old); /* the old replica stops renewing (it drained) */
	struct fx_acq a = adopt(f, 1, "job", was, HASH_A, HASH_B);
	assert_non_null(a.lease);
	fx_advance(f, 3 * LEASE);
	assert_false(w.done); /* the adopter renews: no takeover */
	int64_t token = lease_token(a.lease);
	lease_release(a.lease);
	fx_advance(f, LEASE);
	assert_true(w.done);
	assert_non_null(w.lease);
	assert_int_equal(lease_token(w.lease), token + 1);
	lease_release(w.lease);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_item_keeps_the_hash_and_the_lease_knows_it),
		cmocka_unit_test(renew_by_token_needs_the_secret),
		cmocka_unit_test(release_by_token_needs_the_secret_force_does_not),
		cmocka_unit_test(a_lease_without_a_secret_needs_none),
		cmocka_unit_test(a_bad_hash_is_refused_at_the_call),
		cmocka_unit_test(an_orphaned_lease_is_adopted_with_its_token),
		cmocka_unit_test(only_an_orphan_with_its_secret_is_adopted),
		cmocka_unit_test(releasing_an_adopted_orphan_is_no_failure),
		cmocka_unit_test(a_waiter_is_not_granted_while_the_lease_moves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
