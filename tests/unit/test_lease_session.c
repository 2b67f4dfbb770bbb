/*
 * test_lease_session: leases of a locktable in `--heartbeat replica`
 * (lt_options.heartbeat = LT_HEARTBEAT_REPLICA; docs/design/
 * replica-heartbeat.md, the holder's side): the lock items they write,
 * one session heartbeat for all of them, their ends by the holder's
 * clock, the session's end and the next one, explicit renewals, releases,
 * hand-offs, detached leases, leader election, and the lease mode left as
 * it was. Fake clock, embedded store, no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/lease.h"
#include "core/lt_session.h"
#include "core/store/store_revoke.h"
#include "core/store/store_session.h"
#include "tests/support/lt_fixture.h"

#define LEASE 3000

/* n locktables in replica mode ("r0".."r3", labels "p0".."p3"), with a
 * TTL set on the table: a lock item written per lease would carry one. */
static struct fx *sfx_new(int n)
{
	static const char *const ids[] = {"r0", "r1", "r2", "r3"};
	static const char *const labels[] = {"p0", "p1", "p2", "p3"};
	struct fx *f = fx_new(0, false);
	for (int i = 0; i < n; i++) {
		struct lt_options o = {.holder_label = labels[i],
				       .ttl_retention_ms = LT_MIN_RETENTION_MS,
				       .heartbeat = LT_HEARTBEAT_REPLICA,
				       .replica_id = ids[i],
				       .addr = "10.0.0.1:6379"};
		f->lt[i] = lt_new(f->clock, f->store, &f->obs, &o);
		assert_non_null(f->lt[i]);
	}
	fx_run(f); /* the sessions' CREATEs */
	return f;
}

static struct lock_item item_of(struct fx *f, const char *name)
{
	struct lock_item it;
	assert_true(f->store->ops->read_now(f->store, name, &it));
	return it;
}

static struct lt_session_view sview(struct fx *f, int i)
{
	struct lt_session_view v;
	assert_non_null(lt_session_of(f->lt[i]));
	lt_session_view(lt_session_of(f->lt[i]), &v);
	return v;
}

/* Session beats sent by the store's count: every RENEW is one (a BEAT is
 * counted as STORE_RENEW); the CREATEs count as ACQUIRE. */
static uint64_t renews(struct fx *f)
{
	return fx_req(f, STORE_RENEW);
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

static struct lease *take(struct fx *f, int i, const char *name, int64_t lease_ms,
			  struct lost *watch)
{
	struct lease *l = fx_take(f, i, name, lease_ms);
	if (watch != NULL) {
		memset(watch, 0, sizeof(*watch));
		lost_fx = f;
		lease_on_lost(l, on_lost, watch);
	}
	return l;
}

/* The lock is held in session mode under session key, lease lease_ms. */
static void assert_session_item(struct fx *f, const char *name, const char *key, int64_t lease_ms)
{
	struct lock_item it = item_of(f, name);
	assert_true(it.has_owner);
	assert_string_equal(it.session, key);
	assert_int_equal(it.slease_ms, lease_ms);
	assert_int_equal(it.lease_ms, STORE_SESSION_LOCK_LEASE_MS);
	assert_int_equal(it.ttl, 0);
}

static void acquire_writes_the_lock_in_session_mode(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	struct lt_session_view v = sview(f, 0);
	assert_int_equal(v.state, LT_SESSION_LIVE);
	assert_int_equal(v.members, 1);
	assert_memory_equal(v.key, "SESSION#r0#", 11);
	assert_session_item(f, "job", v.key, LEASE);
	assert_int_equal(lease_duration_ms(l), LEASE);
	assert_int_equal(lease_end_ms(l), LEASE); /* its acquire's send (0) + lease */
	lease_release(l);
	fx_free(f);
}

static void many_leases_one_beat_per_third_of_the_shortest_no_renewal(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l[15];
	char name[16];
	for (int i = 0; i < 15; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		l[i] = take(f, 0, name, i < 10 ? 3 * LEASE : LEASE, NULL);
	}
	assert_int_equal(sview(f, 0).members, 15);
	assert_int_equal(renews(f), 1); /* the shorter lease's beat, at once */
	fx_advance(f, 30000);
	/* a beat every LEASE / 3 (1 s) from 0 */
	assert_int_equal(renews(f), 31);
	assert_int_equal(f->obs.session_beats, 32); /* and the CREATE */
	for (int i = 0; i < 15; i++)
		assert_true(lease_held(l[i]));
	assert_int_equal(lease_end_ms(l[0]), 30000 + 3 * LEASE);
	assert_int_equal(lease_end_ms(l[14]), 30000 + LEASE);
	for (int i = 0; i < 15; i++)
		lease_release(l[i]);
	fx_free(f);
}

static void the_end_follows_the_holders_clock(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost lo;
	struct lease *l = take(f, 0, "job", LEASE, &lo);
	fx_advance(f, LEASE / 3); /* a beat sent at 1000, answered in time */
	assert_int_equal(lease_end_ms(l), LEASE / 3 + LEASE);
	store_memory_session_lose(f->store, 1000); /* beats apply, answers lost */
	fx_advance(f, LEASE - 1);
	assert_true(lease_held(l));
	assert_int_equal(lo.calls, 0);
	fx_advance(f, 1); /* 4000: the last beat answered in time + lease */
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_EXPIRED);
	assert_int_equal(lo.at, LEASE / 3 + LEASE);
	assert_false(lease_held(l));
	assert_int_equal(obs_get(&f->obs.losses, "expired"), 1);
	/* its item named a session that still beats: released */
	fx_run(f);
	assert_false(item_of(f, "job").has_owner);
	lease_release(l);
	store_memory_session_lose(f->store, 0);
	fx_free(f);
}

/* Three leases, the session ended by end_it at 500: each lost with
 * LT_SESSION at the next beat (1000), its item released, but not before
 * its end by the holder's clock (its own send, 0, + its lease): until then
 * its client may still act on it, and the lock stays held (a try of the
 * same replica refused); at the latest a lease after the loss. The next
 * acquire names a new session. */
static void session_end_loses_every_lease(void (*end_it)(struct fx *f))
{
	struct fx *f = sfx_new(1);
	struct lost lo[3];
	struct lease *l[3];
	l[0] = take(f, 0, "a", LEASE, &lo[0]);
	l[1] = take(f, 0, "b", LEASE, &lo[1]);
	l[2] = take(f, 0, "c", 2 * LEASE, &lo[2]);
	char old[STORE_SESSION_KEY_MAX + 1];
	snprintf(old, sizeof(old), "%s", sview(f, 0).key);
	fx_advance(f, 500);
	end_it(f);
	fx_advance(f, 500);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lo[i].calls, 1);
		assert_int_equal(lo[i].why, LT_SESSION);
		assert_int_equal(lo[i].at, 1000);
		assert_false(lease_held(l[i]));
	}
	assert_int_equal(obs_get(&f->obs.losses, "session"), 3);
	assert_int_equal(sview(f, 0).state, LT_SESSION_ENDED);
	fx_advance(f, LEASE - 1 - 1000); /* 2999: their ends not come */
	assert_true(item_of(f, "a").has_owner);
	assert_true(item_of(f, "c").has_owner);
	struct fx_acq t;
	fx_acquire(f, 0, "a", LEASE, false, 0, &t);
	fx_run(f);
	assert_true(t.done);
	assert_null(t.lease); /* refused: held */
	fx_run(f);
	assert_true(item_of(f, "a").has_owner);	 /* its read did not release it */
	fx_advance(f, 1001);			 /* 4000: a lease after the loss */
	assert_false(item_of(f, "a").has_owner); /* released, on their owners */
	assert_true(item_of(f, "c").has_owner);	 /* its end: 6000 */
	fx_advance(f, 2 * LEASE - 1 - 4000);
	assert_true(item_of(f, "c").has_owner);
	fx_advance(f, 1001); /* 7000 */
	assert_false(item_of(f, "c").has_owner);
	for (int i = 0; i < 3; i++)
		lease_release(l[i]);
	/* the next acquire makes a new session and names it */
	struct lease *m = take(f, 0, "a", LEASE, NULL);
	struct lt_session_view v = sview(f, 0);
	assert_int_equal(v.state, LT_SESSION_LIVE);
	assert_string_not_equal(v.key, old);
	assert_memory_equal(v.key, "SESSION#r0#", 11);
	assert_int_equal(v.members, 1);
	assert_session_item(f, "a", v.key, LEASE);
	fx_advance(f, 3 * LEASE); /* the new session keeps it */
	assert_true(lease_held(m));
	lease_release(m);
	fx_free(f);
}

static void got_session(void *arg, const struct store_session_result *res)
{
	*(struct store_session_result *)arg = *res;
}

/* The session of locktable 0 marked dead, as a waiter would. */
static void mark_dead(struct fx *f)
{
	struct lt_session_view v = sview(f, 0);
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s", v.rvn);
	struct store_session_result res = {0};
	struct store_session_req req = {
		.op = STORE_SESSION_KILL,
		.replica = "r0",
		.incarnation = strrchr(v.key, '#') + 1,
		.seen_rvn = rvn,
		.by = "waiter-9",
	};
	assert_non_null(store_session_submit(f->store, &req, got_session, &res));
	fx_run(f);
	assert_int_equal(res.status, STORE_OK);
}

static void delete_item(struct fx *f)
{
	assert_true(store_memory_session_delete(f->store, sview(f, 0).key));
}

static void session_marked_dead_loses_every_lease_and_a_new_one_follows(void **state)
{
	session_end_loses_every_lease(mark_dead);
}

static void session_item_deleted_loses_every_lease_and_a_new_one_follows(void **state)
{
	session_end_loses_every_lease(delete_item);
}

/* The log hears of a session's start (event 50: its key, the replica)
 * and of its end (51: why, and how many leases it lost with it), once
 * each; the next session's start too. */
static void session_start_and_end_are_logged(void **state)
{
	static const struct {
		void (*end)(struct fx *f);
		const char *code, *detail;
	} cases[] = {
		{mark_dead, "marked_dead", "marked dead by waiter-9"},
		{delete_item, "deleted", "its item is gone"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fx *f = sfx_new(1);
		char key[STORE_SESSION_KEY_MAX + 1];
		snprintf(key, sizeof(key), "%s", sview(f, 0).key);
		assert_int_equal(fx_events(f, OBS_SESSION_STARTED), 1);
		const struct fx_event *ev = fx_last(f, OBS_SESSION_STARTED);
		assert_string_equal(ev->hb_session, key);
		assert_string_equal(ev->replica, "r0");
		assert_string_equal(ev->holder, "p0");
		assert_int_equal(obs_event_level(OBS_SESSION_STARTED), OBS_INFO);
		struct lease *a = take(f, 0, "a", LEASE, NULL);
		struct lease *b = take(f, 0, "b", 2 * LEASE, NULL);
		assert_int_equal(fx_events(f, OBS_SESSION_ENDED), 0);
		cases[c].end(f);
		fx_advance(f, LEASE / 3); /* the next beat is refused */
		assert_int_equal(fx_events(f, OBS_SESSION_ENDED), 1);
		ev = fx_last(f, OBS_SESSION_ENDED);
		assert_string_equal(ev->hb_session, key);
		assert_string_equal(ev->replica, "r0");
		assert_string_equal(ev->reason, cases[c].code);
		assert_string_equal(ev->detail, cases[c].detail);
		assert_int_equal(ev->leases, 2);
		assert_int_equal(obs_event_level(OBS_SESSION_ENDED), OBS_WARN);
		assert_int_equal(fx_events(f, OBS_LEASE_LOST), 2);
		struct lease *n = take(f, 0, "c", LEASE, NULL); /* a new session */
		assert_int_equal(fx_events(f, OBS_SESSION_STARTED), 2);
		assert_string_not_equal(fx_last(f, OBS_SESSION_STARTED)->hb_session, key);
		assert_int_equal(fx_events(f, OBS_SESSION_ENDED), 1);
		lease_release(n);
		lease_release(b);
		lease_release(a);
		fx_free(f);
	}
}

static void acquire_answered_after_its_session_ended_is_lost_and_released(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost lo;
	struct lease *a = take(f, 0, "a", LEASE, &lo); /* the session beats for it */
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 1500);
	struct fx_acq b;
	fx_acquire(f, 0, "b", LEASE, false, 0, &b);
	fx_advance(f, 500);
	mark_dead(f);
	fx_advance(f, 500); /* the beat at 1000 is refused: a lost */
	assert_int_equal(lo.why, LT_SESSION);
	fx_advance(f, 500); /* b's acquire, naming the ended session */
	assert_true(b.done);
	assert_non_null(b.lease);
	assert_int_equal(lease_loss(b.lease), LT_SESSION);
	assert_false(lease_held(b.lease));
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 0);
	/* given back on its owner, but not before its end (its send, 0, +
	 * its lease): until then another client of this replica is refused */
	fx_advance(f, LEASE - 1 - 1500);
	assert_true(item_of(f, "b").has_owner);
	struct fx_acq t;
	fx_acquire(f, 0, "b", LEASE, false, 0, &t);
	fx_run(f);
	assert_true(t.done);
	assert_null(t.lease);
	fx_run(f);
	assert_true(item_of(f, "b").has_owner); /* its read did not release it */
	fx_advance(f, 1);
	assert_false(item_of(f, "b").has_owner);
	lease_release(b.lease);
	lease_release(a);
	fx_free(f);
}

static void acquire_answered_after_a_whole_lease_is_lost_and_released(void **state)
{
	struct fx *f = sfx_new(1);
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, LEASE);
	struct fx_acq b;
	fx_acquire(f, 0, "b", LEASE, false, 0, &b);
	fx_advance(f, LEASE);
	assert_non_null(b.lease);
	assert_int_equal(lease_loss(b.lease), LT_EXPIRED);
	assert_int_equal(sview(f, 0).members, 0);
	store_memory_set_op_latency(f->store, STORE_ACQUIRE, 0);
	fx_run(f);
	assert_false(item_of(f, "b").has_owner);
	lease_release(b.lease);
	fx_free(f);
}

static void read_cb(void *arg, const struct store_result *res)
{
	*(struct store_result *)arg = *res;
}

/* An acquire answered TRANSIENT is read back (test_lt_orphans.c has the
 * read-back's own cases; it once sent a RENEW back to per lease instead);
 * the next acquire under the same owner (an election's campaign reuses it)
 * wins the lock in session mode meanwhile. Nothing of the first may
 * change that lease's item: back to per lease under it, another replica
 * took it over by the per-lease rule while its holder counted it held
 * (make simulate HEARTBEAT=replica SEED=15519, with the RENEW). */
static void return_to_per_lease_spares_a_new_lease_of_the_same_owner(void **state)
{
	struct fx *f = sfx_new(1);
	const char *key = sview(f, 0).key;
	store_memory_set_op_latency(f->store, STORE_RENEW, 50); /* lands after */
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "RequestTimeout");
	struct lt_acquire_args a = {.name = "job", .lease_ms = LEASE, .owner = "o1"};
	struct fx_acq first = {0}, second = {0};
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &first));
	fx_advance(f, 1);
	assert_true(first.error); /* its RENEW back to per lease is on its way */
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &second));
	fx_advance(f, 1);
	assert_non_null(second.lease);
	fx_advance(f, 200); /* the RENEW lands, refused by the new lease's item */
	assert_true(lease_held(second.lease));
	struct store_result res = {0};
	struct store_req read = {.op = STORE_READ, .name = "job"};
	assert_non_null(store_submit(f->store, &read, read_cb, &res));
	fx_advance(f, 0); /* a RENEW (a beat) may be in flight: a READ, not read_now */
	assert_int_equal(res.status, STORE_OK);
	assert_string_equal(res.item.owner, "o1");
	assert_string_equal(res.item.session, key); /* still its session's */
	assert_int_equal(res.item.lease_ms, STORE_SESSION_LOCK_LEASE_MS);
	lease_release(second.lease);
	fx_run(f);
	fx_free(f);
}

static void acquire_failed_unapplied_changes_nothing(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s", item_of(f, "job").rvn);
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ThrottlingException");
	struct fx_acq a;
	fx_acquire(f, 0, "other", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.error);
	assert_false(item_of(f, "other").exists); /* the RENEW never creates one */
	assert_string_equal(item_of(f, "job").rvn, rvn);
	assert_true(lease_held(l));
	lease_release(l);
	fx_free(f);
}

struct renew_box {
	bool done;
	int renewed;
};
static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct renew_box *b = arg;
	b->done = true;
	b->renewed = r;
}

static void explicit_renew_extends_from_its_send(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost lo;
	struct lease *l = take(f, 0, "job", LEASE, &lo);
	char rvn0[STORE_ID_MAX + 1];
	snprintf(rvn0, sizeof(rvn0), "%s", item_of(f, "job").rvn);
	store_memory_session_lose(f->store, 1000); /* no beat extends anything */
	fx_advance(f, 500);
	struct renew_box b = {0};
	assert_true(lease_renew(l, renewed, &b));
	fx_run(f);
	assert_true(b.done);
	assert_int_equal(b.renewed, 1);
	assert_int_equal(lease_end_ms(l), 500 + LEASE);
	assert_string_not_equal(item_of(f, "job").rvn, rvn0);
	assert_session_item(f, "job", sview(f, 0).key, LEASE);
	assert_int_equal(sview(f, 0).members, 1);
	fx_advance(f, LEASE - 1);
	assert_true(lease_held(l));
	fx_advance(f, 1);
	assert_int_equal(lo.calls, 1);
	assert_int_equal(lo.why, LT_EXPIRED);
	assert_int_equal(lo.at, 500 + LEASE);
	lease_release(l);
	store_memory_session_lose(f->store, 0);
	fx_free(f);
}

static void explicit_renew_refused_loses_as_today(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost lo;
	struct lease *l = take(f, 0, "job", LEASE, &lo);
	fx_simulate_holder(f, "job", LEASE, "intruder");
	struct renew_box b = {0};
	assert_true(lease_renew(l, renewed, &b));
	fx_run(f);
	assert_int_equal(b.renewed, 0);
	assert_int_equal(lo.why, LT_TAKEN_OVER);
	assert_int_equal(sview(f, 0).members, 0);
	lease_release(l);
	fx_free(f);
}

static void release_frees_the_item_and_leaves_the_session(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	assert_int_equal(sview(f, 0).members, 1);
	lease_release(l);
	fx_run(f);
	assert_int_equal(sview(f, 0).members, 0);
	struct lock_item it = item_of(f, "job");
	assert_false(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(it.slease_ms, 0);
	uint64_t n = renews(f);
	fx_advance(f, 10 * LEASE); /* idle: nothing to prove alive */
	assert_int_equal(renews(f), n);
	fx_free(f);
}

static void handoff_on_one_replica_keeps_session_mode(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	struct fx_acq w;
	fx_acquire(f, 0, "job", 2 * LEASE, true, 0, &w);
	fx_run(f);
	assert_false(w.done);
	uint64_t acquires = fx_req(f, STORE_ACQUIRE);
	lease_release(l);
	fx_run(f);
	assert_non_null(w.lease);
	assert_int_equal(fx_req(f, STORE_ACQUIRE), acquires + 1); /* the hand-off's write */
	assert_int_equal(fx_req(f, STORE_RELEASE), 0);
	assert_int_equal(lease_token(w.lease), 2);
	assert_session_item(f, "job", sview(f, 0).key, 2 * LEASE);
	assert_int_equal(sview(f, 0).members, 1);
	fx_advance(f, 5 * LEASE);
	assert_true(lease_held(w.lease));
	lease_release(w.lease);
	fx_free(f);
}

static void foreign_done(void *arg, int done, const struct lt_state *st, const struct lt_error *err)
{
	*(int *)arg = done;
}

static void detached_lease_goes_back_to_per_lease(void **state)
{
	struct fx *f = sfx_new(2);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	char rvn0[STORE_ID_MAX + 1];
	snprintf(rvn0, sizeof(rvn0), "%s", item_of(f, "job").rvn);
	int64_t token = lease_detach(l);
	assert_int_equal(sview(f, 0).members, 0);
	fx_run(f);
	struct lock_item it = item_of(f, "job");
	assert_true(it.has_owner);
	assert_int_equal(it.fence, token);
	assert_string_equal(it.session, "");
	assert_int_equal(it.slease_ms, 0);
	assert_int_equal(it.lease_ms, LEASE);
	assert_true(it.ttl > 0);
	assert_string_not_equal(it.rvn, rvn0); /* a new rvn: watches restart */
	/* a renewal by (name, token) keeps it per lease */
	struct lt_foreign_req req = {.name = "job", .op = LT_FOREIGN_RENEW, .token = token};
	int done = -1;
	assert_true(lt_foreign(f->lt[1], &req, foreign_done, &done));
	fx_run(f);
	assert_int_equal(done, 1);
	it = item_of(f, "job");
	assert_string_equal(it.session, "");
	assert_int_equal(it.lease_ms, LEASE);
	/* nobody renews it: another replica takes it over per lease */
	struct fx_acq b;
	fx_acquire(f, 1, "job", LEASE, true, 0, &b);
	fx_advance(f, 2 * LEASE);
	assert_non_null(b.lease);
	assert_true(lease_takeover(b.lease));
	lease_release(b.lease);
	fx_free(f);
}

static void orphaned(void *arg, int v, const struct lt_error *err)
{
	*(int *)arg = err != NULL ? -1 : v;
}

static void adopted_lease_joins_the_adopters_session_with_its_own_lease(void **state)
{
	static const char a_hash[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char b_hash[] =
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	struct fx *f = sfx_new(2);
	struct fx_acq got = {0};
	struct lt_acquire_args args = {.name = "job", .lease_ms = LEASE, .secret_hash = a_hash};
	assert_non_null(lt_acquire(f->lt[0], &args, fx_acquire_cb, &got));
	fx_run(f);
	struct lease *old = got.lease;
	assert_non_null(old);
	int marked = -2;
	assert_true(lease_orphan(old, orphaned, &marked));
	fx_run(f);
	assert_int_equal(marked, 1);
	struct fx_acq a = {0};
	struct lt_adopt_args ad = {.name = "job",
				   .token = lease_token(old),
				   .secret_hash = a_hash,
				   .new_secret_hash = b_hash}; /* lease_ms 0: the lease's own */
	assert_true(lt_adopt(f->lt[1], &ad, fx_acquire_cb, &a));
	fx_run(f);
	assert_non_null(a.lease);
	assert_int_equal(lease_duration_ms(a.lease), LEASE); /* sleaseMs, not 10 years */
	assert_session_item(f, "job", sview(f, 1).key, LEASE);
	assert_int_equal(sview(f, 1).members, 1);
	fx_advance(f, 5 * LEASE); /* the adopter's session keeps it */
	assert_true(lease_held(a.lease));
	lease_release(old); /* refused by the adopter's item: it goes on there */
	fx_run(f);
	assert_true(item_of(f, "job").has_owner);
	lease_release(a.lease);
	fx_free(f);
}

static void renewal_by_token_keeps_another_replicas_session(void **state)
{
	struct fx *f = sfx_new(2);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	char rvn0[STORE_ID_MAX + 1];
	snprintf(rvn0, sizeof(rvn0), "%s", item_of(f, "job").rvn);
	struct lt_foreign_req req = {
		.name = "job", .op = LT_FOREIGN_RENEW, .token = lease_token(l)};
	int done = -1;
	assert_true(lt_foreign(f->lt[1], &req, foreign_done, &done));
	fx_run(f);
	assert_int_equal(done, 1);
	assert_string_not_equal(item_of(f, "job").rvn, rvn0);  /* renewed */
	assert_session_item(f, "job", sview(f, 0).key, LEASE); /* still its holder's */
	lease_release(l);
	fx_free(f);
}

/* A client renews its detached lease by token on another replica before
 * the detaching replica's write lands: that renewal keeps the session (it
 * is not the renewing replica's), the return to per lease is refused,
 * and written again on the rvn the item shows. */
static void detach_after_a_renewal_by_token_still_goes_back_to_per_lease(void **state)
{
	struct fx *f = sfx_new(2);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	int64_t token = lease_token(l);
	store_memory_set_op_latency(f->store, STORE_RENEW, 100);
	struct lt_foreign_req req = {.name = "job", .op = LT_FOREIGN_RENEW, .token = token};
	int done = -1;
	assert_true(lt_foreign(f->lt[1], &req, foreign_done, &done));
	fx_run(f); /* its read: the renewal is on its way */
	assert_int_equal(lease_detach(l), token);
	fx_advance(f, 100);
	assert_int_equal(done, 1);
	store_memory_set_op_latency(f->store, STORE_RENEW, 0);
	fx_advance(f, 100); /* the return to per lease, again */
	struct lock_item it = item_of(f, "job");
	assert_true(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(it.lease_ms, LEASE);
	fx_free(f);
}

/* The other order: the replica's return to per lease lands between a
 * renewal's read (which saw the session) and its write, which is refused
 * and written again as the item now is: per lease. */
static void renewal_by_token_after_a_detach_stays_per_lease(void **state)
{
	struct fx *f = sfx_new(2);
	struct lease *l = take(f, 0, "job", LEASE, NULL);
	int64_t token = lease_token(l);
	store_memory_set_op_latency(f->store, STORE_RENEW, 100);
	assert_int_equal(lease_detach(l), token);
	struct lt_foreign_req req = {.name = "job", .op = LT_FOREIGN_RENEW, .token = token};
	int done = -1;
	assert_true(lt_foreign(f->lt[1], &req, foreign_done, &done));
	fx_run(f); /* its read sees the session still */
	fx_advance(f, 100);
	store_memory_set_op_latency(f->store, STORE_RENEW, 0);
	fx_advance(f, 100);
	assert_int_equal(done, 1);
	struct lock_item it = item_of(f, "job");
	assert_true(it.has_owner);
	assert_string_equal(it.session, "");
	assert_int_equal(it.lease_ms, LEASE);
	fx_free(f);
}

/* --- revocations (core/lt_revoke.c) --- */

static void got_result(void *arg, const struct store_result *res)
{
	*(struct store_result *)arg = *res;
}

/* Submits req as another replica would and runs it; its answer. */
static struct store_result submit(struct fx *f, struct store_req req)
{
	static struct store_result res;
	memset(&res, 0, sizeof(res));
	res.status = STORE_FATAL;
	assert_non_null(store_submit(f->store, &req, got_result, &res));
	fx_run(f);
	return res;
}

static void got_revs(void *arg, const struct store_revoke_result *res)
{
	*(unsigned *)arg = res->status == STORE_OK ? res->count : 1000;
}

/* The entries pending for session key. */
static unsigned entries(struct fx *f, const char *key)
{
	unsigned n = 2000;
	struct store_revoke_req req = {.op = STORE_REVOKE_READ, .session = key};
	assert_non_null(store_revoke_submit(f->store, &req, got_revs, &n));
	fx_run(f);
	return n;
}

/* Leases a and b held by locktable 0; at 500 another replica ends a with
 * end (writing its revocation); the beat at 1000 shows revSeq 1: a is
 * ended (loss why), its entry deleted, and b extended from then on. */
static void ended_from_outside(struct store_req (*end)(struct lease *a, const char *key),
			       enum lt_loss why)
{
	struct fx *f = sfx_new(1);
	struct lost la, lb;
	struct lease *a = take(f, 0, "a", LEASE, &la);
	struct lease *b = take(f, 0, "b", LEASE, &lb);
	char key[STORE_SESSION_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s", sview(f, 0).key);
	fx_advance(f, 500);
	assert_int_equal(submit(f, end(a, key)).status, STORE_OK);
	assert_int_equal(entries(f, key), 1);
	assert_true(lease_held(a)); /* not known yet */
	fx_advance(f, 500);	    /* the beat's answer shows revSeq 1 */
	assert_int_equal(la.calls, 1);
	assert_int_equal(la.why, why);
	assert_int_equal(la.at, 1000);
	assert_false(lease_held(a));
	assert_int_equal(entries(f, key), 0); /* acted on, then deleted */
	struct lt_session_view v = sview(f, 0);
	assert_int_equal(v.rev_seq_seen, 1);
	assert_int_equal(v.rev_seq_done, 1);
	fx_advance(f, 5 * LEASE); /* the others are extended again */
	assert_int_equal(lb.calls, 0);
	assert_true(lease_held(b));
	assert_int_equal(sview(f, 0).members, 1);
	lease_release(a);
	lease_release(b);
	fx_free(f);
}

static struct store_req force_release(struct lease *a, const char *key)
{
	return (struct store_req){.op = STORE_RELEASE,
				  .name = lease_name(a),
				  .owner = lease_owner(a),
				  .token = lease_token(a),
				  .forced = true,
				  .revoke_session = key};
}

static struct store_req release_by_token(struct lease *a, const char *key)
{
	struct store_req r = force_release(a, key);
	r.forced = false;
	return r;
}

static void forced_release_elsewhere_ends_the_lease_forced(void **state)
{
	ended_from_outside(force_release, LT_FORCED);
}

static void release_by_token_elsewhere_ends_the_lease_released(void **state)
{
	ended_from_outside(release_by_token, LT_RELEASED);
}

static void adopted_elsewhere_ends_the_lease_adopted(void **state)
{
	static const char a_hash[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char b_hash[] =
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	struct fx *f = sfx_new(1);
	struct fx_acq got = {0};
	struct lt_acquire_args args = {.name = "a", .lease_ms = LEASE, .secret_hash = a_hash};
	assert_non_null(lt_acquire(f->lt[0], &args, fx_acquire_cb, &got));
	fx_run(f);
	struct lease *a = got.lease;
	struct lost la = {0};
	lost_fx = f;
	lease_on_lost(a, on_lost, &la);
	int marked = -2;
	assert_true(lease_orphan(a, orphaned, &marked));
	fx_run(f);
	assert_int_equal(marked, 1);
	char key[STORE_SESSION_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s", sview(f, 0).key);
	struct store_req adopt = {.op = STORE_ADOPT,
				  .name = "a",
				  .owner = "adopter",
				  .rvn = "adopter-rvn",
				  .prev_owner = lease_owner(a),
				  .prev_secret_hash = a_hash,
				  .secret_hash = b_hash,
				  .lease_ms = LEASE,
				  .token = lease_token(a),
				  .revoke_session = key};
	assert_int_equal(submit(f, adopt).status, STORE_OK);
	fx_advance(f, LEASE / 3);
	assert_int_equal(la.calls, 1);
	assert_int_equal(la.why, LT_ADOPTED);
	assert_int_equal(entries(f, key), 0);
	assert_int_equal(fx_events(f, OBS_LEASE_LOST), 0);     /* not a loss */
	assert_string_equal(item_of(f, "a").owner, "adopter"); /* nothing undone */
	lease_release(a);
	fx_free(f);
}

/* An entry naming a lease released here meanwhile: nothing to end, the
 * entry is deleted all the same. */
static void entry_of_a_lease_gone_is_deleted(void **state)
{
	struct fx *f = sfx_new(1);
	struct lease *a = take(f, 0, "a", LEASE, NULL);
	struct lease *b = take(f, 0, "b", LEASE, NULL);
	char key[STORE_SESSION_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s", sview(f, 0).key);
	assert_int_equal(submit(f, force_release(a, key)).status, STORE_OK);
	lease_release(a); /* refused: no longer its; the lease is gone here */
	fx_advance(f, LEASE / 3);
	assert_int_equal(entries(f, key), 0);
	assert_int_equal(sview(f, 0).rev_seq_done, 1);
	fx_advance(f, 5 * LEASE);
	assert_true(lease_held(b));
	lease_release(b);
	fx_free(f);
}

/* The read of the entries fails: the pass is tried again (the session
 * extends nothing meanwhile), then acts. */
static void revocations_read_again_after_an_error(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost la;
	struct lease *a = take(f, 0, "a", LEASE, &la);
	char key[STORE_SESSION_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s", sview(f, 0).key);
	assert_int_equal(submit(f, force_release(a, key)).status, STORE_OK);
	store_memory_set_op_latency(f->store, STORE_READ, 10);
	fx_advance(f, LEASE / 3 + 5); /* the beat's answer: the read in flight */
	store_memory_fail(f->store, 1, STORE_TRANSIENT, "ProvisionedThroughputExceededException");
	fx_advance(f, 5);
	assert_int_equal(la.calls, 0);
	assert_int_equal(sview(f, 0).rev_seq_done, 0);
	store_memory_set_op_latency(f->store, STORE_READ, 0);
	fx_advance(f, LT_RENEW_RETRY_FIRST_MS);
	assert_int_equal(la.calls, 1);
	assert_int_equal(la.why, LT_FORCED);
	assert_int_equal(sview(f, 0).rev_seq_done, 1);
	assert_int_equal(entries(f, key), 0);
	lease_release(a);
	fx_free(f);
}

/* revSeq risen with no entry for a lease held here (an entry of a lease
 * already gone, deleted before): nothing ends, the session extends again. */
static void revseq_without_entries_extends_again(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost lo;
	struct lease *l = take(f, 0, "a", LEASE, &lo);
	fx_advance(f, 500);
	assert_true(store_memory_session_add_rev(f->store, sview(f, 0).key, 2));
	fx_advance(f, 5 * LEASE);
	assert_int_equal(lo.calls, 0);
	assert_true(lease_held(l));
	assert_int_equal(sview(f, 0).rev_seq_done, 2);
	lease_release(l);
	fx_free(f);
}

struct elect {
	int leads, lost;
	enum lt_loss why;
};
static void el_lead(void *arg, struct lease *lease)
{
	((struct elect *)arg)->leads++;
}
static void el_lost(void *arg, enum lt_loss why)
{
	struct elect *e = arg;
	e->lost++;
	e->why = why;
}

static void leader_election_works_on_the_session(void **state)
{
	struct fx *f = sfx_new(1);
	struct elect w = {0};
	static const struct election_cbs cbs = {.lead = el_lead, .lost = el_lost};
	char msg[128];
	struct election_args a = {.name = "sweeper", .lease_ms = LEASE};
	struct election *e = election_start(f->lt[0], &a, &cbs, &w, msg, sizeof(msg));
	assert_non_null(e);
	fx_run(f);
	assert_int_equal(w.leads, 1);
	assert_int_equal(sview(f, 0).members, 1); /* the campaign's lease is a member */
	assert_session_item(f, "sweeper", sview(f, 0).key, LEASE);
	uint64_t n = renews(f);
	fx_advance(f, 10 * LEASE);
	assert_int_equal(w.lost, 0);
	assert_int_equal(renews(f) - n, 30); /* the session's beats only */
	mark_dead(f);
	fx_advance(f, LEASE / 3);
	assert_int_equal(w.lost, 1);
	assert_int_equal(w.why, LT_SESSION);
	fx_advance(f, 2 * LEASE); /* it contends again, on a new session */
	assert_int_equal(w.leads, 2);
	assert_int_equal(sview(f, 0).state, LT_SESSION_LIVE);
	assert_session_item(f, "sweeper", sview(f, 0).key, LEASE);
	election_stop(e, ELECTION_CANCELLED);
	fx_free(f);
}

static void lease_mode_writes_per_lease_and_no_session(void **state)
{
	struct fx *f = fx_new(0, false);
	struct lt_options o = {.ttl_retention_ms = LT_MIN_RETENTION_MS};
	f->lt[0] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[0]);
	assert_null(lt_session_of(f->lt[0]));
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct lock_item it = item_of(f, "job");
	assert_string_equal(it.session, "");
	assert_int_equal(it.lease_ms, LEASE);
	assert_true(it.ttl > 0);
	fx_advance(f, 3 * LEASE);
	assert_int_equal(f->obs.session_beats, 0);
	assert_int_equal(renews(f), 9); /* its own, every third */
	lease_release(l);
	fx_free(f);
}

/* A member's lease is allocated without the per-lease heartbeat's part
 * (struct lease_beat; docs/design/replica-heartbeat.md, "Results"): it
 * lives its whole life (beats, an explicit renewal, a loss by the
 * session's end, a release) on the shorter block, which AddressSanitizer
 * (make check: no pool) would catch it reading past; a lease-mode lease
 * keeps it all. */
/* A member's lease fits malloc's block of 320 bytes (8 bytes of header,
 * steps of 16): its secret hash is out of line, copied only when the
 * acquire presents one, kept while held (renewals, beats) and freed with
 * the lease (ASan's leak check). */
static void member_lease_keeps_its_secret_out_of_line(void **state)
{
	static const char hash[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_true(LEASE_MEMBER_BYTES + 8 <= 320);
	struct fx *f = sfx_new(1);
	struct fx_acq a = {0};
	struct lt_acquire_args args = {.name = "s", .lease_ms = LEASE, .secret_hash = hash};
	assert_non_null(lt_acquire(f->lt[0], &args, fx_acquire_cb, &a));
	fx_run(f);
	assert_non_null(a.lease);
	assert_int_equal(lease_bytes(a.lease), LEASE_MEMBER_BYTES);
	assert_string_equal(lease_secret_hash(a.lease), hash);
	assert_ptr_not_equal(lease_secret_hash(a.lease), hash); /* a copy */
	struct lease *plain = take(f, 0, "p", LEASE, NULL);
	assert_null(lease_secret_hash(plain));
	fx_advance(f, 2 * LEASE); /* beats */
	assert_true(lease_held(a.lease));
	assert_string_equal(lease_secret_hash(a.lease), hash);
	assert_string_equal(item_of(f, "s").secret_hash, hash);
	lease_release(a.lease);
	lease_release(plain);
	fx_run(f);
	fx_free(f);
}

static void member_lease_is_allocated_without_the_heartbeat_part(void **state)
{
	struct fx *f = sfx_new(1);
	struct lost lo;
	struct lease *a = take(f, 0, "a", LEASE, NULL);
	struct lease *b = take(f, 0, "b", LEASE, &lo);
	assert_int_equal(lease_bytes(a), LEASE_MEMBER_BYTES);
	assert_true(lease_bytes(a) + 150 <= sizeof(struct lease));
	fx_advance(f, 2 * LEASE); /* beats */
	struct renew_box box = {0};
	assert_true(lease_renew(a, renewed, &box));
	fx_run(f);
	assert_int_equal(box.renewed, 1);
	lease_release(a);
	fx_run(f);
	assert_false(item_of(f, "a").has_owner);
	mark_dead(f);
	fx_advance(f, LEASE); /* the next beat is refused: b is lost */
	assert_int_equal(lo.why, LT_SESSION);
	lease_release(b);
	fx_free(f);

	f = fx_new(0, false);
	struct lt_options o = {.ttl_retention_ms = LT_MIN_RETENTION_MS};
	f->lt[0] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[0]);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(lease_bytes(l), sizeof(struct lease));
	fx_advance(f, 2 * LEASE);
	assert_true(lease_held(l));
	lease_release(l);
	fx_free(f);
}

static void bad_replica_options_are_refused(void **state)
{
	struct fx *f = fx_new(0, false);
	struct lt_options o = {.heartbeat = LT_HEARTBEAT_REPLICA};
	assert_null(lt_new(f->clock, f->store, &f->obs, &o)); /* no replica id */
	o.replica_id = "has#hash";
	assert_null(lt_new(f->clock, f->store, &f->obs, &o));
	o.replica_id = "r0";
	o.heartbeat = LT_HEARTBEAT_COUNT;
	assert_null(lt_new(f->clock, f->store, &f->obs, &o));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(acquire_writes_the_lock_in_session_mode),
		cmocka_unit_test(many_leases_one_beat_per_third_of_the_shortest_no_renewal),
		cmocka_unit_test(the_end_follows_the_holders_clock),
		cmocka_unit_test(session_marked_dead_loses_every_lease_and_a_new_one_follows),
		cmocka_unit_test(session_item_deleted_loses_every_lease_and_a_new_one_follows),
		cmocka_unit_test(session_start_and_end_are_logged),
		cmocka_unit_test(acquire_answered_after_its_session_ended_is_lost_and_released),
		cmocka_unit_test(acquire_answered_after_a_whole_lease_is_lost_and_released),
		cmocka_unit_test(return_to_per_lease_spares_a_new_lease_of_the_same_owner),
		cmocka_unit_test(acquire_failed_unapplied_changes_nothing),
		cmocka_unit_test(explicit_renew_extends_from_its_send),
		cmocka_unit_test(explicit_renew_refused_loses_as_today),
		cmocka_unit_test(release_frees_the_item_and_leaves_the_session),
		cmocka_unit_test(handoff_on_one_replica_keeps_session_mode),
		cmocka_unit_test(detached_lease_goes_back_to_per_lease),
		cmocka_unit_test(adopted_lease_joins_the_adopters_session_with_its_own_lease),
		cmocka_unit_test(renewal_by_token_keeps_another_replicas_session),
		cmocka_unit_test(detach_after_a_renewal_by_token_still_goes_back_to_per_lease),
		cmocka_unit_test(renewal_by_token_after_a_detach_stays_per_lease),
		cmocka_unit_test(forced_release_elsewhere_ends_the_lease_forced),
		cmocka_unit_test(release_by_token_elsewhere_ends_the_lease_released),
		cmocka_unit_test(adopted_elsewhere_ends_the_lease_adopted),
		cmocka_unit_test(entry_of_a_lease_gone_is_deleted),
		cmocka_unit_test(revocations_read_again_after_an_error),
		cmocka_unit_test(revseq_without_entries_extends_again),
		cmocka_unit_test(leader_election_works_on_the_session),
		cmocka_unit_test(lease_mode_writes_per_lease_and_no_session),
		cmocka_unit_test(member_lease_is_allocated_without_the_heartbeat_part),
		cmocka_unit_test(member_lease_keeps_its_secret_out_of_line),
		cmocka_unit_test(bad_replica_options_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
