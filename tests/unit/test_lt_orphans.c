/*
 * test_lt_orphans: "No orphans" of `--heartbeat replica` (docs/design/
 * replica-heartbeat.md) beyond the sweep's part (test_lt_sweep.c): a write
 * whose outcome is unknown is read back (core/lt_replica.c,
 * lt_replica_readback) and, when it applied, released; read again a lease
 * later for an attempt that lands after its timeout was answered; a new
 * lease of the same owner spared. An untracked item naming this replica's
 * session, seen by a waiter's poll or a refused acquire
 * (lt_replica_untracked), is released; one of another session, or one a
 * carried write of this table is changing, is left. Fake clock, embedded
 * store, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/lease.h"
#include "core/lt_internal.h"
#include "core/lt_session.h"
#include "core/store/store_session.h"
#include "tests/support/lt_fixture.h"

#define LEASE 3000

/* n locktables in replica mode ("r0", "r1"). */
static struct fx *sfx_new(int n)
{
	static const char *const ids[] = {"r0", "r1"};
	static const char *const labels[] = {"p0", "p1"};
	struct fx *f = fx_new(0, false);
	for (int i = 0; i < n; i++) {
		struct lt_options o = {.holder_label = labels[i],
				       .heartbeat = LT_HEARTBEAT_REPLICA,
				       .replica_id = ids[i]};
		f->lt[i] = lt_new(f->clock, f->store, &f->obs, &o);
		assert_non_null(f->lt[i]);
	}
	fx_run(f); /* the sessions' CREATEs */
	return f;
}

static const char *key_of(struct fx *f, int i)
{
	static struct lt_session_view v;
	lt_session_view(lt_session_of(f->lt[i]), &v);
	return v.key;
}

static void got(void *arg, const struct store_result *res)
{
	*(struct store_result *)arg = *res;
}

/* The item as a READ sees it (read_now refuses while a request is in
 * flight: a beat may be). */
static struct lock_item item_of(struct fx *f, const char *name)
{
	struct store_result res = {.status = STORE_FATAL};
	struct store_req r = {.op = STORE_READ, .name = name};
	assert_non_null(store_submit(f->store, &r, got, &res));
	fx_advance(f, 0);
	assert_int_equal(res.status, STORE_OK);
	return res.item;
}

/* Another tool's write of name under owner x in session mode under
 * session, whatever the item holds. */
static void taken_by_x(struct fx *f, const char *name, const char *session)
{
	struct store_req r = {.op = STORE_ACQUIRE,
			      .name = name,
			      .owner = "x",
			      .rvn = "x-rvn",
			      .lease_ms = LEASE,
			      .unconditional = true,
			      .session = session};
	struct store_result res = {.status = STORE_FATAL};
	assert_non_null(store_submit(f->store, &r, got, &res));
	fx_advance(f, 0);
	assert_int_equal(res.status, STORE_OK);
}

/* --- the read-back of a write whose outcome is unknown --- */

/* The acquire applied and its answer was lost: the read-back finds the
 * item naming this session under the acquire's owner, and releases it at
 * once: another replica's waiter gets the lock well within a lease. */
static void applied_acquire_is_read_back_and_released(void **state)
{
	struct fx *f = sfx_new(2);
	store_memory_lose(f->store, 1);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	uint64_t reads = fx_req(f, STORE_READ);
	fx_run(f);
	assert_true(a.error);
	assert_int_equal(fx_req(f, STORE_READ), reads + 1); /* the read-back */
	struct lock_item it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	struct fx_acq b;
	fx_acquire(f, 1, "job", LEASE, false, 0, &b);
	fx_run(f);
	assert_non_null(b.lease);
	assert_false(lease_takeover(b.lease));
	lease_release(b.lease);
	fx_run(f);
	fx_free(f);
}

/* The read-back answered TRANSIENT is sent again. */
static void read_back_is_tried_again_on_errors(void **state)
{
	struct fx *f = sfx_new(1);
	store_memory_set_op_latency(f->store, STORE_READ, 10);
	store_memory_lose(f->store, 1);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_advance(f, 0); /* the acquire answered: the read-back sent */
	assert_true(a.error);
	store_memory_fail(f->store, 2, STORE_TRANSIENT, "ThrottlingException");
	uint64_t reads = fx_req(f, STORE_READ);
	fx_advance(f, 100);
	assert_int_equal(fx_req(f, STORE_READ), reads + 2); /* 2 failed, the third read */
	store_memory_set_op_latency(f->store, STORE_READ, 0);
	assert_false(item_of(f, "job").has_owner);
	fx_free(f);
}

/* The acquire is answered TRANSIENT before it applies, and lands 500 ms
 * later: the first read-back finds the lock free; the second, a lease
 * after it, finds the item the write made and releases it. */
static void late_landing_is_read_again_a_lease_later(void **state)
{
	struct fx *f = sfx_new(1);
	store_memory_land_late(f->store, 1, 500);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.error);
	assert_false(item_of(f, "job").exists); /* not landed */
	fx_advance(f, 600);
	struct lock_item it = item_of(f, "job");
	assert_true(it.has_owner); /* landed: held by nobody, its session beats */
	assert_string_equal(it.session, key_of(f, 0));
	fx_advance(f, LEASE - 600 - 1);
	assert_true(item_of(f, "job").has_owner);
	fx_advance(f, 2);
	it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(lt_replica_orphans(f->lt[0]), 1);
	fx_free(f);
}

/* An acquire answered TRANSIENT whose read-back (READ delayed) lands
 * after the next acquire with the same owner (an election's next
 * campaign) won the lock: that lease's item is left, by the read-back and
 * by its second read. */
static void read_back_spares_a_new_lease_of_the_same_owner(void **state)
{
	struct fx *f = sfx_new(1);
	store_memory_set_op_latency(f->store, STORE_READ, 50);
	store_memory_lose(f->store, 1);
	struct lt_acquire_args a = {.name = "job", .lease_ms = LEASE, .owner = "o1"};
	struct fx_acq first = {0}, second = {0};
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &first));
	fx_advance(f, 1);
	assert_true(first.error);
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &second));
	fx_advance(f, 1);
	assert_non_null(second.lease); /* own_again: written on the first's rvn */
	fx_advance(f, 2 * LEASE);
	assert_true(lease_held(second.lease));
	store_memory_set_op_latency(f->store, STORE_READ, 0);
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.owner, "o1");
	assert_string_equal(it.session, key_of(f, 0));
	assert_int_equal(lt_replica_orphans(f->lt[0]), 0);
	lease_release(second.lease);
	fx_run(f);
	fx_free(f);
}

/* The read-back's release (RELEASE delayed) is refused by a new lease of
 * the same owner that won the lock meanwhile (own_again, on the item the
 * release was for): it is not sent again on that lease's rvn. */
static void read_back_release_spares_a_new_lease_of_the_same_owner(void **state)
{
	struct fx *f = sfx_new(1);
	store_memory_set_op_latency(f->store, STORE_RELEASE, 50);
	store_memory_lose(f->store, 1);
	struct lt_acquire_args a = {.name = "job", .lease_ms = LEASE, .owner = "o1"};
	struct fx_acq first = {0}, second = {0};
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &first));
	fx_advance(f, 0);
	assert_true(first.error);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 1); /* its release on its way */
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &second));
	fx_advance(f, 1);
	assert_non_null(second.lease);
	fx_advance(f, 200); /* the release lands, refused */
	assert_true(lease_held(second.lease));
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.owner, "o1");
	assert_string_equal(it.session, key_of(f, 0));
	lease_release(second.lease);
	fx_run(f);
	fx_free(f);
}

/* A local hand-off (a release to a waiter here) applied and its answer
 * lost: the waiter is answered the error, the released lease's release
 * (the handback) is refused by the waiter's item, and the read-back
 * releases that item — at its second read when the first came while the
 * handback was in flight. */
static void applied_hand_off_is_read_back_and_released(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq w;
	fx_acquire(f, 0, "job", LEASE, true, 0, &w);
	fx_run(f);
	assert_false(w.done);
	store_memory_lose(f->store, 1);
	lease_release(l);
	fx_run(f);
	assert_true(w.done);
	assert_true(w.error);
	fx_advance(f, LEASE + 10);
	struct lock_item it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(lt_replica_orphans(f->lt[0]), 1);
	fx_free(f);
}

static int orphan_value;
static void orphaned(void *arg, int v, const struct lt_error *err)
{
	orphan_value = err != NULL ? -1 : v;
}

/* An adopt (session mode on both sides) applied and its answer lost: read
 * back, the item (naming the adopter's session under the adopt's owner)
 * is released. */
static void applied_adopt_is_read_back_and_released(void **state)
{
	static const char hash_a[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char hash_b[] =
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	struct fx *f = sfx_new(2);
	struct fx_acq got_a = {0};
	struct lt_acquire_args args = {.name = "job", .lease_ms = LEASE, .secret_hash = hash_a};
	assert_non_null(lt_acquire(f->lt[0], &args, fx_acquire_cb, &got_a));
	fx_run(f);
	assert_non_null(got_a.lease);
	orphan_value = -2;
	assert_true(lease_orphan(got_a.lease, orphaned, NULL));
	fx_run(f);
	assert_int_equal(orphan_value, 1);
	store_memory_set_op_latency(f->store, STORE_ADOPT, 10);
	struct fx_acq ad = {0};
	struct lt_adopt_args aa = {.name = "job",
				   .token = lease_token(got_a.lease),
				   .secret_hash = hash_a,
				   .new_secret_hash = hash_b,
				   .lease_ms = LEASE};
	assert_true(lt_adopt(f->lt[1], &aa, fx_acquire_cb, &ad));
	fx_advance(f, 0); /* its READ answered, its ADOPT in flight */
	store_memory_lose(f->store, 1);
	fx_advance(f, 20);
	assert_true(ad.error);
	assert_int_equal(lt_replica_orphans(f->lt[1]), 1);
	store_memory_set_op_latency(f->store, STORE_ADOPT, 0);
	struct lock_item it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	fx_free(f);
}

/* An acquire that did not apply: the read-back finds nothing, and its
 * second read nothing either; nothing is written. */
static void unapplied_acquire_writes_nothing(void **state)
{
	struct fx *f = sfx_new(1);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "RequestTimeout");
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	uint64_t reads = fx_req(f, STORE_READ), rels = fx_req(f, STORE_RELEASE);
	fx_advance(f, 2 * LEASE);
	assert_true(a.error);
	assert_int_equal(fx_req(f, STORE_READ), reads + 2);
	assert_int_equal(fx_req(f, STORE_RELEASE), rels);
	assert_false(item_of(f, "job").exists);
	fx_free(f);
}

/* --- untracked items seen by other reads --- */

/* A try refused by an item naming this replica's session under an owner
 * nobody here holds releases it (conditioned on that owner, session and
 * rvn); the next try gets the lock. */
static void refused_try_releases_an_untracked_item(void **state)
{
	struct fx *f = sfx_new(1);
	taken_by_x(f, "job", key_of(f, 0));
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	assert_null(a.lease);
	assert_false(a.error);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 1);
	assert_false(item_of(f, "job").has_owner);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

/* A waiter here polls a lock held per lease by another process; the item
 * is then rewritten naming this replica's session under an owner nobody
 * here holds: the next poll releases it and the waiter gets the lock,
 * within a poll or two, not never (that session beats). */
static void waiters_poll_releases_an_untracked_item(void **state)
{
	struct fx *f = sfx_new(1);
	struct store_req y = {.op = STORE_ACQUIRE,
			      .name = "job",
			      .owner = "y",
			      .rvn = "y-rvn",
			      .lease_ms = 60000,
			      .unconditional = true};
	struct store_result res;
	assert_non_null(store_submit(f->store, &y, got, &res));
	fx_run(f);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_advance(f, 100);
	assert_false(a.done); /* queued, polling */
	assert_int_equal(lt_replica_orphans(f->lt[0]), 0);
	taken_by_x(f, "job", key_of(f, 0));
	fx_advance(f, 2 * LT_MAX_POLL_MS); /* y's lease (60 s) is far off */
	assert_true(a.done);
	assert_non_null(a.lease);
	assert_false(lease_takeover(a.lease));
	assert_int_equal(lt_replica_orphans(f->lt[0]), 1);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

/* A try on a lock seen held reads it first: that read finds the item
 * rewritten naming this session under an owner nobody here holds, and
 * releases it. */
static void tries_read_releases_an_untracked_item(void **state)
{
	struct fx *f = sfx_new(1);
	struct store_req y = {.op = STORE_ACQUIRE,
			      .name = "job",
			      .owner = "y",
			      .rvn = "y-rvn",
			      .lease_ms = 60000,
			      .unconditional = true};
	struct store_result res;
	assert_non_null(store_submit(f->store, &y, got, &res));
	fx_run(f);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease); /* refused: the lock is seen held */
	taken_by_x(f, "job", key_of(f, 0));
	uint64_t reads = fx_req(f, STORE_READ), writes = fx_req(f, STORE_ACQUIRE);
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease);
	assert_int_equal(fx_req(f, STORE_READ), reads + 1); /* the try's */
	assert_int_equal(fx_req(f, STORE_ACQUIRE), writes);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 1);
	assert_false(item_of(f, "job").has_owner);
	fx_free(f);
}

/* One naming another replica's session is that replica's to end. */
static void untracked_item_of_another_session_is_left(void **state)
{
	struct fx *f = sfx_new(2);
	taken_by_x(f, "job", key_of(f, 1));
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 0);
	assert_string_equal(item_of(f, "job").owner, "x");
	fx_free(f);
}

/* A detached lease's item names this session until its return to per
 * lease lands: a try that reads it meanwhile leaves it (a carried write
 * of the lock is in flight), and the detached lease keeps the lock. */
static void item_with_a_carried_write_in_flight_is_left(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	char owner[STORE_ID_MAX + 1];
	snprintf(owner, sizeof(owner), "%s", item_of(f, "job").owner);
	store_memory_set_op_latency(f->store, STORE_RENEW, 50);
	int64_t token = lease_detach(l);
	assert_true(token > 0);
	struct fx_acq a;
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_advance(f, 100);
	assert_null(a.lease);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 0);
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.owner, owner);
	assert_int_equal(it.fence, token);
	assert_string_equal(it.session, ""); /* back per lease: its clients renew it */
	fx_free(f);
}

/* An acquire write of this table on the lock in flight (its item may be
 * the one it made, answer not yet back: releasing it would take the lock
 * from a lease about to be granted) or an adopt of it: the item is left.
 * Asked of lt_replica_untracked directly: the embedded store applies a
 * write when it answers it, so no read sees it in between. */
static void item_with_an_acquire_or_adopt_in_flight_is_left(void **state)
{
	struct fx *f = sfx_new(1);
	taken_by_x(f, "job", key_of(f, 0));
	struct lock_item it = item_of(f, "job");
	struct lock *lock = lt_lock_get(f->lt[0], "job", true);
	assert_non_null(lock);
	lock->refs++;
	lock->writes = 1;
	assert_false(lt_replica_untracked(lock, &it));
	lock->writes = 0;
	store_memory_set_op_latency(f->store, STORE_READ, 10);
	struct fx_acq ad = {0};
	struct lt_adopt_args aa = {
		.name = "job",
		.token = it.fence,
		.secret_hash = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		.new_secret_hash =
			"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		.lease_ms = LEASE};
	assert_true(lt_adopt(f->lt[0], &aa, fx_acquire_cb, &ad)); /* its READ in flight */
	assert_false(lt_replica_untracked(lock, &it));
	fx_advance(f, 20); /* refused: not an orphaned lease */
	assert_true(ad.done);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 0);
	assert_true(lt_replica_untracked(lock, &it)); /* nothing in flight now */
	lt_lock_unref(lock);
	store_memory_set_op_latency(f->store, STORE_READ, 0);
	fx_run(f);
	assert_false(item_of(f, "job").has_owner);
	fx_free(f);
}

/* Lease mode: no session, nothing of this runs. */
static void lease_mode_releases_nothing(void **state)
{
	struct fx *f = fx_new(1, false);
	struct fx_acq a;
	taken_by_x(f, "job", "SESSION#r0#0123456789abcdef0123456789abcdef");
	fx_acquire(f, 0, "job", LEASE, false, 0, &a);
	fx_run(f);
	assert_null(a.lease);
	assert_int_equal(lt_replica_orphans(f->lt[0]), 0);
	assert_string_equal(item_of(f, "job").owner, "x");
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(applied_acquire_is_read_back_and_released),
		cmocka_unit_test(read_back_is_tried_again_on_errors),
		cmocka_unit_test(late_landing_is_read_again_a_lease_later),
		cmocka_unit_test(read_back_spares_a_new_lease_of_the_same_owner),
		cmocka_unit_test(read_back_release_spares_a_new_lease_of_the_same_owner),
		cmocka_unit_test(applied_hand_off_is_read_back_and_released),
		cmocka_unit_test(applied_adopt_is_read_back_and_released),
		cmocka_unit_test(unapplied_acquire_writes_nothing),
		cmocka_unit_test(refused_try_releases_an_untracked_item),
		cmocka_unit_test(waiters_poll_releases_an_untracked_item),
		cmocka_unit_test(tries_read_releases_an_untracked_item),
		cmocka_unit_test(untracked_item_of_another_session_is_left),
		cmocka_unit_test(item_with_a_carried_write_in_flight_is_left),
		cmocka_unit_test(item_with_an_acquire_or_adopt_in_flight_is_left),
		cmocka_unit_test(lease_mode_releases_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
