/*
 * store_contract_scan.c: the part of the store contract suite (see
 * store_contract.h) that leases beyond one connection need: the freed
 * marker a release from outside the holding replica leaves (store.h,
 * RELEASE with .token), and store_scan().
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct store_result op(struct fixture *fx, struct store_req r)
{
	return store_contract_op(fx, r);
}

static struct store_result acquire(struct fixture *fx, const char *owner, const char *rvn,
				   const char *seen)
{
	return op(fx, (struct store_req){.op = STORE_ACQUIRE,
					 .owner = owner,
					 .rvn = rvn,
					 .seen_rvn = seen,
					 .lease_ms = 30000});
}

/* A release by owner (NULL: unconditional) that marks token (0: none). */
static struct store_result release_marked(struct fixture *fx, const char *owner, int64_t token,
					  bool forced)
{
	return op(fx, (struct store_req){.op = STORE_RELEASE,
					 .owner = owner,
					 .token = token,
					 .forced = forced,
					 .unconditional = owner == NULL});
}

static void assert_freed(const struct lock_item *it, int64_t freed, bool forced)
{
	if (it->freed != freed || it->freed_forced != forced)
		fail_msg("freed %lld forced %d, want %lld forced %d", (long long)it->freed,
			 it->freed_forced, (long long)freed, forced);
}

/* ... and as a read finds it */
static void assert_freed_read(struct fixture *fx, int64_t freed, bool forced)
{
	struct store_result r = op(fx, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, freed, forced);
}

/* ---- the freed marker ---- */

/* A release by (name, token) from outside the holding replica leaves the
 * fence it ended and "token"; acquires, renewals and releases without a
 * token leave the marker as it is; a refused release writes nothing. */
static void freed_marker_by_token(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = acquire(fx, "A", "r1", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 0, false);
	r = release_marked(fx, "A", 1, false);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	assert_freed(&r.item, 1, false);
	assert_freed_read(fx, 1, false);
	/* the next holder's writes keep it */
	r = acquire(fx, "B", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
	assert_freed(&r.item, 1, false);
	r = op(fx,
	       (struct store_req){.op = STORE_RENEW, .owner = "B", .rvn = "r3", .lease_ms = 30000});
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, false);
	/* a release that is refused marks nothing */
	r = release_marked(fx, "X", 2, false);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_freed(&r.item, 1, false);
	assert_freed_read(fx, 1, false);
	/* nor does the holder's own release, without a token */
	r = release_marked(fx, "B", 0, false);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, false);
	r = acquire(fx, "C", "r4", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, false);
}

/* An operator's forced release (unconditional here) says "force"; a later
 * release by token says "token" again. */
static void freed_marker_by_force(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL).status, STORE_OK);
	struct store_result r = release_marked(fx, NULL, 1, true);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	assert_freed(&r.item, 1, true);
	assert_freed_read(fx, 1, true);
	r = acquire(fx, "B", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, true);
	/* a takeover keeps it too */
	r = acquire(fx, "C", "r3", "r2");
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 3);
	assert_freed(&r.item, 1, true);
	r = release_marked(fx, "C", 3, false);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 3, false);
	assert_freed_read(fx, 3, false);
	/* a forced release by owner marks it too */
	assert_int_equal(acquire(fx, "D", "r5", NULL).status, STORE_OK);
	r = release_marked(fx, "D", 4, true);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 4, true);
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

const struct CMUnitTest store_contract_scan_tests[STORE_CONTRACT_SCAN_TESTS] = {
	T(freed_marker_by_token),
	T(freed_marker_by_force),
};
