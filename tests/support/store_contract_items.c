/*
 * store_contract_items.c: the part of the store contract suite (see
 * store_contract.h) about items a write may meet that are not leasegate's
 * locks (store.h's guard: they are refused and left as they are) and about
 * a waiter's announcement on a lock item (ANNOUNCE, WITHDRAW, the acquire
 * that takes an announcement).
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <string.h>

static struct lock_item raw_item(const char *type, const char *owner, const char *rvn, bool lease,
				 bool fence, bool fence_bad, int64_t fence_v)
{
	struct lock_item it = {.exists = true, .has_lease = lease, .lease_ms = lease ? 30000 : 0};
	snprintf(it.type, sizeof it.type, "%s", type);
	it.has_owner = owner != NULL;
	snprintf(it.owner, sizeof it.owner, "%s", owner ? owner : "");
	it.has_rvn = rvn != NULL;
	snprintf(it.rvn, sizeof it.rvn, "%s", rvn ? rvn : "");
	it.has_fence = fence;
	it.fence_bad = fence_bad;
	it.fence = fence_v;
	return it;
}

/* The attributes a guard looks at, as read back. */
static void assert_same_item(const char *what, const struct lock_item *a, const struct lock_item *b)
{
	if (a->exists != b->exists || a->has_owner != b->has_owner || a->has_rvn != b->has_rvn ||
	    a->has_lease != b->has_lease || a->has_fence != b->has_fence ||
	    a->fence_bad != b->fence_bad || a->fence != b->fence || a->lease_ms != b->lease_ms ||
	    strcmp(a->owner, b->owner) != 0 || strcmp(a->rvn, b->rvn) != 0 ||
	    strcmp(a->type, b->type) != 0)
		fail_msg("%s: the item changed: owner '%s' -> '%s', fence %lld -> %lld", what,
			 a->owner, b->owner, (long long)a->fence, (long long)b->fence);
}

/* Another application's item, an owner without rvn or leaseMs, a fence
 * that is negative, at the top of int64 or past it: the acquire is refused
 * (a free-lock write, a takeover of the item's rvn and a retry of its
 * owner alike), the item comes back as it is and is not written on. */
static void acquire_refused_on_items_not_locks(void **state)
{
	struct fixture *fx = *state;
	const struct {
		const char *what;
		struct lock_item it;
	} cases[] = {
		{"another application's item", raw_item("", NULL, "r0", false, false, false, 0)},
		{"another application's held item", raw_item("", "o0", "r0", true, true, false, 3)},
		{"another _type", raw_item("JOB", NULL, "r0", false, true, false, 3)},
		{"an owner without rvn", raw_item("LOCK", "o0", NULL, true, true, false, 3)},
		{"an owner without leaseMs", raw_item("LOCK", "o0", "r0", false, true, false, 3)},
		{"fence -5", raw_item("LOCK", NULL, "r0", false, true, false, -5)},
		{"fence INT64_MAX", raw_item("LOCK", NULL, "r0", false, true, false, INT64_MAX)},
		{"fence 2^64 + 5", raw_item("LOCK", NULL, "r0", false, true, true, 0)},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *what = cases[i].what;
		assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &cases[i].it));
		struct store_result before = sc_read_item(fx);
		assert_int_equal(before.status, STORE_OK);
		assert_same_item(what, &cases[i].it, &before.item); /* read as written */
		const char *owners[] = {"A", "o0", "A"}, *seen[] = {NULL, NULL, "r0"};
		for (int k = 0; k < 3; k++) {
			struct store_result r = sc_acquire(fx, owners[k], "r1", seen[k], NULL);
			if (r.status != STORE_REFUSED)
				fail_msg("%s (%d): %s", what, k, store_status_name(r.status));
			assert_same_item(what, &before.item, &r.item);
			struct store_result after = sc_read_item(fx);
			assert_same_item(what, &before.item, &after.item);
		}
	}
}

/* What is a lock keeps working: a free lock after a release, a lock item
 * without a fence yet (ADD starts it at 1), and the last token. */
static void acquire_on_lock_items(void **state)
{
	struct fixture *fx = *state;
	const struct {
		const char *what;
		struct lock_item it;
		int64_t token;
	} cases[] = {
		{"released", raw_item("LOCK", NULL, "r0", false, true, false, 3), 4},
		{"no fence yet", raw_item("LOCK", NULL, NULL, false, false, false, 0), 1},
		{"fence 0", raw_item("LOCK", NULL, "r0", false, true, false, 0), 1},
		{"the last token", raw_item("LOCK", NULL, "r0", false, true, false, INT64_MAX - 1),
		 INT64_MAX},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &cases[i].it));
		struct store_result r = sc_acquire(fx, "A", "r1", NULL, NULL);
		if (r.status != STORE_OK)
			fail_msg("%s: %s", cases[i].what, store_status_name(r.status));
		sc_assert_held(&r.item, "A", "r1", cases[i].token, 30000, NULL);
	}
	/* and past the last token, nothing is written */
	struct store_result r = sc_acquire(fx, "B", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", INT64_MAX, 30000, NULL);
}

/* ---- announcements (Fair across replicas) ---- */

/* An announcement goes on a held item only, beside the holder: rvn, owner,
 * fence and leaseMs stay as they are, renewals keep it, one at a time. */
static void announce_on_held_leaves_rvn(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_announce(fx, "W1", 1000);
	assert_int_equal(r.status, STORE_REFUSED); /* no item: none made */
	assert_false(r.item.exists);
	assert_false(sc_read_item(fx).item.exists);
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	r = sc_announce(fx, "W1", 1000);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	sc_assert_waiter(&r.item, "W1", 1000);
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	sc_assert_waiter(&r.item, "W1", 1000);
	/* the holder sees it in its renewal's answer */
	r = sc_renew(fx, "A", "r2", "pod-a");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_waiter(&r.item, "W1", 1000);
	/* one slot: a second waiter is refused and shown the first */
	r = sc_announce(fx, "W2", 500);
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_waiter(&r.item, "W1", 1000);
	sc_assert_held(&r.item, "A", "r2", 1, 20000, "pod-a");
	/* a hand-off (takeover of the holder's own rvn) keeps it */
	r = sc_acquire(fx, "B", "r3", "r2", "pod-a");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_waiter(&r.item, "W1", 1000);
}

/* A released item keeps the announcement: it is reserved for that waiter.
 * Others' acquires are refused; the waiter's takes it and removes it. */
static void announced_free_item_is_reserved(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_announce(fx, "W1", 700).status, STORE_OK);
	struct store_result r = sc_release(fx, "A");
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	sc_assert_waiter(&r.item, "W1", 700);
	r = sc_announce(fx, "W2", 700); /* not on a free item */
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_waiter(&r.item, "W1", 700);
	r = sc_acquire(fx, "B", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.has_owner);
	sc_assert_waiter(&r.item, "W1", 700);
	r = sc_acquire_w(fx, "B", "r2", NULL, "W2"); /* another waiter's id */
	assert_int_equal(r.status, STORE_REFUSED);
	r = sc_acquire_w(fx, "B", "r2", NULL, "W1");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "B", "r2", 2, 30000, NULL);
	sc_assert_waiter(&r.item, NULL, 0);
	r = sc_read_item(fx);
	sc_assert_waiter(&r.item, NULL, 0);
}

/* An acquire that names a waiter never removes another's announcement,
 * even by a takeover or its own retry; one that names none keeps it. */
static void acquire_keeps_other_announcements(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_announce(fx, "W1", 700).status, STORE_OK);
	struct store_result r = sc_acquire_w(fx, "B", "r2", "r1", "W2");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	/* a takeover naming no waiter: done, the announcement stays */
	r = sc_acquire(fx, "B", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_waiter(&r.item, "W1", 700);
	/* the announced waiter's takeover: done, and removed */
	r = sc_acquire_w(fx, "C", "r3", "r2", "W1");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "C", "r3", 3, 30000, NULL);
	sc_assert_waiter(&r.item, NULL, 0);
	/* naming a waiter that is not there is allowed */
	r = sc_acquire_w(fx, "C", "r4", "r3", "W9");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "C", "r4", 4, 30000, NULL);
}

/* A withdrawal removes only its own announcement; the slot is free again. */
static void withdraw_own_only(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_announce(fx, "W1", 700).status, STORE_OK);
	struct store_result r = sc_withdraw(fx, "W2");
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_waiter(&r.item, "W1", 700);
	r = sc_withdraw(fx, "W1");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_waiter(&r.item, NULL, 0);
	sc_assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	r = sc_withdraw(fx, "W1");
	assert_int_equal(r.status, STORE_REFUSED);
	r = sc_announce(fx, "W2", 900);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_waiter(&r.item, "W2", 900);
	/* a free item that was announced: withdrawn, it is free for all */
	assert_int_equal(sc_release(fx, "A").status, STORE_OK);
	assert_int_equal(sc_withdraw(fx, "W2").status, STORE_OK);
	assert_int_equal(sc_acquire(fx, "B", "r2", NULL, NULL).status, STORE_OK);
}

/* Not on another application's item. */
static void announce_refused_on_items_not_locks(void **state)
{
	struct fixture *fx = *state;
	struct lock_item it = raw_item("ORDER", "X", "r0", true, true, false, 1);
	assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &it));
	struct store_result r = sc_announce(fx, "W1", 700);
	assert_int_equal(r.status, STORE_REFUSED);
	sc_assert_waiter(&r.item, NULL, 0);
}
#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

const struct CMUnitTest store_contract_items_tests[STORE_CONTRACT_ITEMS_TESTS] = {
	T(acquire_refused_on_items_not_locks),	T(acquire_on_lock_items),
	T(announce_on_held_leaves_rvn),		T(announced_free_item_is_reserved),
	T(acquire_keeps_other_announcements),	T(withdraw_own_only),
	T(announce_refused_on_items_not_locks),
};
