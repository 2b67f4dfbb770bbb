/*
 * test_lt_sweep: the verification sweep of `--heartbeat replica`
 * (core/lt_sweep.c; docs/design/replica-heartbeat.md, "Endings from
 * outside", "No orphans"): lock items deleted or rewritten behind the
 * holder's back found within a period and their leases lost as a refused
 * renewal would lose them, healthy items left alone, reads spread evenly
 * over the period, ceil(N / 100) batch reads a period for N leases, an
 * untracked item naming this replica's session released (one naming
 * another session left alone); and a lost lease's release conditioned on
 * the session and rvn it knew. Fake clock, embedded store, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/lease.h"
#include "core/lt_session.h"
#include "core/lt_sweep.h"
#include "tests/support/lt_fixture.h"

#define LEASE  3000
#define PERIOD 60000 /* lt_options.sweep_ms of these tests */

/* One locktable in replica mode, its sweep every PERIOD from 0. */
static struct fx *sfx_new(void)
{
	struct fx *f = fx_new(0, false);
	struct lt_options o = {.holder_label = "p0",
			       .heartbeat = LT_HEARTBEAT_REPLICA,
			       .replica_id = "r0",
			       .sweep_ms = PERIOD};
	f->lt[0] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[0]);
	fx_run(f); /* the session's CREATE */
	return f;
}

static const char *key_of(struct fx *f)
{
	static struct lt_session_view v;
	lt_session_view(lt_session_of(f->lt[0]), &v);
	return v.key;
}

static struct lock_item item_of(struct fx *f, const char *name)
{
	struct lock_item it;
	assert_true(f->store->ops->read_now(f->store, name, &it));
	return it;
}

static const struct lt_sweep_stats *stats(struct fx *f)
{
	return lt_sweep_stats(lt_sweep_of(f->lt[0]));
}

struct lost {
	int calls;
	enum lt_loss why;
	int64_t at;
};
static struct fx *lost_fx;
static void on_lost(void *arg, struct lease *l, enum lt_loss why)
{
	struct lost *o = arg;
	o->calls++;
	o->why = why;
	o->at = fx_now(lost_fx);
}

static struct lease *take(struct fx *f, const char *name, struct lost *watch)
{
	struct lease *l = fx_take(f, 0, name, LEASE);
	memset(watch, 0, sizeof(*watch));
	lost_fx = f;
	lease_on_lost(l, on_lost, watch);
	return l;
}

static void got(void *arg, const struct store_result *res)
{
	*(struct store_result *)arg = *res;
}

/* A write by another tool, straight to the store. */
static struct store_result outside(struct fx *f, struct store_req r)
{
	struct store_result res = {.status = STORE_FATAL};
	assert_non_null(store_submit(f->store, &r, got, &res));
	fx_run(f);
	return res;
}

/* Another tool's acquire of name under owner x, in session mode under
 * session (NULL: per lease), whatever the item holds. */
static void taken_by_x(struct fx *f, const char *name, const char *session)
{
	struct store_req r = {.op = STORE_ACQUIRE,
			      .name = name,
			      .owner = "x",
			      .rvn = "x-rvn",
			      .lease_ms = LEASE,
			      .unconditional = true,
			      .session = session};
	assert_int_equal(outside(f, r).status, STORE_OK);
}

static void deleted_item_is_found_within_a_period(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	fx_advance(f, 1000);
	assert_int_equal(outside(f, (struct store_req){.op = STORE_DELETE, .name = "job"}).status,
			 STORE_OK);
	fx_advance(f, PERIOD - 1001);
	assert_true(lease_held(l)); /* the heartbeat says nothing of it */
	assert_int_equal(lo.calls, 0);
	fx_advance(f, 1); /* PERIOD: the period's one batch */
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_DELETED);
	assert_true(lo.at - 1000 <= PERIOD);
	assert_int_equal(obs_get(&f->obs.losses, "deleted"), 1);
	assert_int_equal(stats(f)->lost, 1);
	lease_release(l);
	fx_free(f);
}

/* A period walks the leases newest first: of 150, the first batch holds
 * the 100 newest (the newest's deleted item is found at the period's
 * start), the second the 50 oldest (the oldest's found half a period
 * later). */
static void newest_leases_are_read_first(void **state)
{
	struct fx *f = sfx_new();
	struct lost oldest, newest;
	struct lease *l[150];
	char name[16];
	for (int i = 0; i < 150; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		l[i] = i == 0	  ? take(f, name, &oldest)
		       : i == 149 ? take(f, name, &newest)
				  : fx_take(f, 0, name, LEASE);
		fx_advance(f, 1); /* each lease younger than the one before */
	}
	for (int i = 0; i < 150; i += 149) {
		snprintf(name, sizeof(name), "job-%d", i);
		assert_int_equal(
			outside(f, (struct store_req){.op = STORE_DELETE, .name = name}).status,
			STORE_OK);
	}
	fx_advance(f, PERIOD - fx_now(f));
	assert_int_equal(newest.calls, 1);
	assert_int_equal(oldest.calls, 0);
	fx_advance(f, PERIOD / 2);
	assert_int_equal(oldest.calls, 1);
	assert_int_equal(oldest.at, PERIOD + PERIOD / 2);
	for (int i = 0; i < 150; i++)
		lease_release(l[i]);
	fx_run(f);
	fx_free(f);
}

/* Leases that end during a period, the one at the walk's cursor among
 * them, move the walk on: the period still reads every lease left once,
 * and a lease taken during it is read in the next. */
static void leases_ending_mid_period_move_the_walk_on(void **state)
{
	struct fx *f = sfx_new();
	struct lease *l[250];
	char name[16];
	for (int i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		l[i] = fx_take(f, 0, name, LEASE);
	}
	fx_advance(f, PERIOD - fx_now(f)); /* batch 0 of 3: jobs 249..150 */
	assert_int_equal(stats(f)->items, 100);
	/* job-149 (the cursor), the next 19 and job-0 end, the cursor last,
	 * so that "late" may reuse its memory (a cursor left on it would
	 * walk 249..150 again) */
	for (int i = 148; i > 129; i--)
		lease_release(l[i]);
	lease_release(l[0]);
	lease_release(l[149]);
	fx_run(f);
	struct lease *late = fx_take(f, 0, "late", LEASE);
	fx_advance(f, PERIOD / 3); /* batch 1: jobs 129..30 */
	assert_int_equal(stats(f)->items, 200);
	fx_advance(f, PERIOD / 3); /* batch 2: jobs 29..1 */
	assert_int_equal(stats(f)->items, 229);
	fx_advance(f, PERIOD / 3 - 1);
	assert_int_equal(stats(f)->items, 229); /* "late" waits for the next period */
	fx_advance(f, 1);
	assert_int_equal(stats(f)->periods, 2);
	assert_int_equal(stats(f)->items, 329); /* the next: 229 + "late" in its first batch */
	for (int i = 1; i < 130; i++)
		lease_release(l[i]);
	for (int i = 150; i < 250; i++)
		lease_release(l[i]);
	lease_release(late);
	fx_run(f);
	assert_int_equal(stats(f)->lost, 0);
	fx_free(f);
}

static void rewritten_item_is_taken_over(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	fx_advance(f, PERIOD + 500); /* one sweep of it, healthy */
	assert_int_equal(lo.calls, 0);
	taken_by_x(f, "job", NULL);
	fx_advance(f, PERIOD - 500);
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_TAKEN_OVER);
	assert_int_equal(lo.at, 2 * PERIOD);
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.owner, "x"); /* another's per-lease lock: left */
	lease_release(l);
	fx_free(f);
}

/* An item put back per lease under the lease's own owner (a write
 * outside the mode) no longer names the session: it would run out on
 * every other clock while this one counts it held. Lost, taken over. */
static void item_without_its_session_is_taken_over(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	struct store_req r = {.op = STORE_RENEW,
			      .name = "job",
			      .owner = lease_owner(l),
			      .rvn = "per-lease",
			      .lease_ms = LEASE};
	assert_int_equal(outside(f, r).status, STORE_OK);
	assert_string_equal(item_of(f, "job").session, "");
	fx_advance(f, PERIOD);
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_TAKEN_OVER);
	lease_release(l);
	fx_free(f);
}

/* Healthy items end nothing, a renewal by (name, token) from another
 * replica (a new rvn, the same owner and session) neither; one batch read
 * a period. */
static void healthy_items_cause_nothing(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo[5];
	struct lease *l[5];
	char name[16];
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		l[i] = take(f, name, &lo[i]);
	}
	struct store_req r = {.op = STORE_RENEW,
			      .name = "job-2",
			      .owner = lease_owner(l[2]),
			      .rvn = "by-token",
			      .seen_rvn = lease_rvn(l[2]),
			      .lease_ms = LEASE,
			      .session = key_of(f)};
	assert_int_equal(outside(f, r).status, STORE_OK);
	uint64_t reads = fx_req(f, STORE_READ);
	fx_advance(f, 3 * PERIOD);
	for (int i = 0; i < 5; i++) {
		assert_true(lease_held(l[i]));
		assert_int_equal(lo[i].calls, 0);
		lease_release(l[i]);
	}
	assert_int_equal(fx_req(f, STORE_READ) - reads, 3);
	assert_int_equal(stats(f)->batches, 3);
	assert_int_equal(stats(f)->items, 15);
	assert_int_equal(stats(f)->lost, 0);
	assert_int_equal(stats(f)->last_period_ms, PERIOD); /* kept its pace */
	fx_free(f);
}

/* n leases held: the batch reads of each of two periods (each lease read
 * once in each), and in which tenth of the first each was sent (per[10]). */
static void sweep_n(int n, uint64_t *period_reads, unsigned per[10])
{
	struct fx *f = sfx_new();
	struct lease **l = calloc((size_t)n, sizeof(*l));
	assert_non_null(l);
	char name[32];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "lock-%d", i);
		l[i] = fx_take(f, 0, name, LEASE);
	}
	fx_advance(f, PERIOD - fx_now(f) - 1);
	memset(per, 0, 10 * sizeof(*per));
	for (int p = 0; p < 2; p++) {
		uint64_t before = fx_req(f, STORE_READ), items = stats(f)->items;
		for (int tenth = 0; tenth < 10; tenth++) {
			uint64_t r0 = fx_req(f, STORE_READ);
			fx_advance(f, PERIOD / 10);
			if (p == 0)
				per[tenth] = (unsigned)(fx_req(f, STORE_READ) - r0);
		}
		period_reads[p] = fx_req(f, STORE_READ) - before;
		assert_int_equal(stats(f)->items - items, n); /* every lease, once */
	}
	for (int i = 0; i < n; i++) {
		assert_true(lease_held(l[i]));
		lease_release(l[i]);
	}
	free(l);
	fx_free(f);
}

/* A sweep whose batch reads take longer than their share of the period
 * (one batch in flight at a time) finishes the period's batches before it
 * begins the next: every lease is read once a period, the period
 * stretched, never with the newest left unread. */
static void slow_reads_stretch_the_period(void **state)
{
	struct fx *f = sfx_new();
	struct lease *l[1000];
	char name[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "lock-%d", i);
		l[i] = fx_take(f, 0, name, LEASE);
	}
	/* 10 batches a period of 60 s: one every 6 s, each answered in 9 s */
	store_memory_set_op_latency(f->store, STORE_READ, 9000);
	fx_advance(f, PERIOD - fx_now(f));
	uint64_t periods = stats(f)->periods, items = stats(f)->items;
	for (int p = 0; p < 3; p++) {
		while (stats(f)->periods == periods)
			fx_advance(f, 500);
		if (stats(f)->items - items != 1000)
			fail_msg("period %d: %llu of 1000 leases read before the next began", p,
				 (unsigned long long)(stats(f)->items - items));
		periods = stats(f)->periods;
		items = stats(f)->items;
		if (p > 0) /* 10 reads of 9 s each, the first at the period's start */
			assert_in_range(stats(f)->last_period_ms, 90000, 90000 + 500);
	}
	store_memory_set_op_latency(f->store, STORE_READ, 0);
	for (int i = 0; i < 1000; i++) {
		assert_true(lease_held(l[i]));
		lease_release(l[i]);
	}
	fx_run(f);
	fx_free(f);
}

static void reads_are_spread_over_the_period(void **state)
{
	uint64_t reads[2];
	unsigned per[10];
	sweep_n(1000, reads, per); /* 10 batches: one every tenth */
	for (int i = 0; i < 10; i++)
		assert_int_equal(per[i], 1);
	assert_int_equal(reads[0], 10);
	assert_int_equal(reads[1], 10);
}

static void n_leases_cost_ceil_n_over_100_reads_a_period(void **state)
{
	static const struct {
		int n;
		uint64_t reads;
	} cases[] = {{1, 1}, {100, 1}, {101, 2}, {250, 3}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint64_t reads[2];
		unsigned per[10];
		sweep_n(cases[c].n, reads, per);
		assert_int_equal(reads[0], cases[c].reads);
		assert_int_equal(reads[1], cases[c].reads);
	}
}

/* An item rewritten under an owner nothing here holds but naming this
 * replica's session (it would beat for ever): the lease is lost and the
 * item released, on that owner. */
static void untracked_item_of_this_session_is_released(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	taken_by_x(f, "job", key_of(f));
	fx_advance(f, PERIOD);
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_TAKEN_OVER);
	fx_run(f);
	struct lock_item it = item_of(f, "job");
	assert_true(it.exists);
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(stats(f)->orphans, 1);
	lease_release(l);
	fx_free(f);
}

static void untracked_item_of_another_session_is_left(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	const char *other = "SESSION#other#0123456789abcdef0123456789abcdef";
	taken_by_x(f, "job", other);
	fx_advance(f, PERIOD);
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_TAKEN_OVER);
	fx_run(f);
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.owner, "x");
	assert_string_equal(it.session, other);
	assert_int_equal(stats(f)->orphans, 0);
	lease_release(l);
	fx_free(f);
}

/* A batch that fails ends nothing; the next period reads the item. */
static void failed_batch_ends_nothing_until_the_next_period(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	assert_int_equal(outside(f, (struct store_req){.op = STORE_DELETE, .name = "job"}).status,
			 STORE_OK);
	fx_advance(f, PERIOD - 1);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "Throttled");
	fx_advance(f, 1);
	assert_int_equal(lo.calls, 0);
	assert_int_equal(stats(f)->failed, 1);
	fx_advance(f, PERIOD);
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_DELETED);
	lease_release(l);
	fx_free(f);
}

/* The lease's heartbeats stop being answered (they apply): it expires by
 * the holder's clock, before any sweep, and its release is sent. */
static void expire(struct fx *f, struct lost *lo)
{
	store_memory_session_lose(f->store, 1000);
	fx_advance(f, 2 * LEASE);
	fx_run(f);
	assert_int_equal(lo->calls, 1);
	assert_int_equal(lo->why, LT_EXPIRED);
	store_memory_session_lose(f->store, 0);
}

/* A lost lease's release is conditioned on the session it knew: an item
 * put back per lease under its owner meanwhile is left (it runs out by
 * its own leaseMs); a newer owner's item, in this session, is left too. */
static void lost_lease_release_leaves_an_item_in_another_form(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo, lo2;
	struct lease *l = take(f, "job", &lo);
	struct store_req r = {.op = STORE_RENEW,
			      .name = "job",
			      .owner = lease_owner(l),
			      .rvn = "per-lease",
			      .lease_ms = LEASE};
	assert_int_equal(outside(f, r).status, STORE_OK);
	expire(f, &lo);
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.owner, lease_owner(l));
	assert_string_equal(it.rvn, "per-lease");
	lease_release(l);
	/* a newer owner */
	struct lease *m = take(f, "job2", &lo2);
	taken_by_x(f, "job2", key_of(f));
	expire(f, &lo2);
	assert_string_equal(item_of(f, "job2").owner, "x");
	lease_release(m);
	fx_free(f);
}

/* A renewal by (name, token) from another replica keeps the session under
 * a new rvn: the release of the lost lease, refused on the rvn it knew,
 * goes again on the one the item shows. */
static void lost_lease_release_follows_a_renewal_by_token(void **state)
{
	struct fx *f = sfx_new();
	struct lost lo;
	struct lease *l = take(f, "job", &lo);
	struct store_req r = {.op = STORE_RENEW,
			      .name = "job",
			      .owner = lease_owner(l),
			      .rvn = "by-token",
			      .seen_rvn = lease_rvn(l),
			      .lease_ms = LEASE,
			      .session = key_of(f)};
	assert_int_equal(outside(f, r).status, STORE_OK);
	uint64_t releases = fx_req(f, STORE_RELEASE);
	expire(f, &lo);
	struct lock_item it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(fx_req(f, STORE_RELEASE) - releases, 2);
	lease_release(l);
	fx_free(f);
}

static void bad_sweep_periods_are_refused(void **state)
{
	struct fx *f = fx_new(0, false);
	int64_t bad[] = {-1, LT_SWEEP_MIN_MS - 1, LT_SWEEP_MAX_MS + 1};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lt_options o = {
			.heartbeat = LT_HEARTBEAT_REPLICA, .replica_id = "r0", .sweep_ms = bad[i]};
		assert_null(lt_new(f->clock, f->store, &f->obs, &o));
	}
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deleted_item_is_found_within_a_period),
		cmocka_unit_test(newest_leases_are_read_first),
		cmocka_unit_test(leases_ending_mid_period_move_the_walk_on),
		cmocka_unit_test(rewritten_item_is_taken_over),
		cmocka_unit_test(item_without_its_session_is_taken_over),
		cmocka_unit_test(healthy_items_cause_nothing),
		cmocka_unit_test(reads_are_spread_over_the_period),
		cmocka_unit_test(slow_reads_stretch_the_period),
		cmocka_unit_test(n_leases_cost_ceil_n_over_100_reads_a_period),
		cmocka_unit_test(untracked_item_of_this_session_is_released),
		cmocka_unit_test(untracked_item_of_another_session_is_left),
		cmocka_unit_test(failed_batch_ends_nothing_until_the_next_period),
		cmocka_unit_test(lost_lease_release_leaves_an_item_in_another_form),
		cmocka_unit_test(lost_lease_release_follows_a_renewal_by_token),
		cmocka_unit_test(bad_sweep_periods_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
