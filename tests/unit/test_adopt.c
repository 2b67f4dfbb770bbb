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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_item_keeps_the_hash_and_the_lease_knows_it),
		cmocka_unit_test(renew_by_token_needs_the_secret),
		cmocka_unit_test(release_by_token_needs_the_secret_force_does_not),
		cmocka_unit_test(a_lease_without_a_secret_needs_none),
		cmocka_unit_test(a_bad_hash_is_refused_at_the_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
