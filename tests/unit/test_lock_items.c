/*
 * Items at a lock's key that are not locks, or whose fence cannot give a
 * rising token (issue 11), on the embedded store with the fake clock: each
 * is refused with a STORE_FATAL error naming the lock, the table and the
 * attribute, by a try, a wait and LOCK.STATE alike, and nothing is written
 * on it. Items that are locks (free after a release, never acquired, the
 * last token but one) keep working.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/lt_fixture.h"

#define LEASE 3000

/* What to put at the key: the attributes a case sets (the rest absent). */
struct raw {
	const char *type; /* NULL: no _type */
	const char *owner, *rvn;
	bool lease;
	bool fence, fence_bad;
	int64_t fence_v;
};

static void put(struct fx *f, const char *name, const struct raw *r)
{
	struct lock_item it = {.exists = true};
	if (r->type != NULL)
		snprintf(it.type, sizeof(it.type), "%s", r->type);
	if (r->owner != NULL) {
		it.has_owner = true;
		snprintf(it.owner, sizeof(it.owner), "%s", r->owner);
	}
	if (r->rvn != NULL) {
		it.has_rvn = true;
		snprintf(it.rvn, sizeof(it.rvn), "%s", r->rvn);
	}
	it.has_lease = r->lease;
	it.lease_ms = r->lease ? 60000 : 0;
	it.has_fence = r->fence;
	it.fence_bad = r->fence_bad;
	it.fence = r->fence_v;
	assert_true(store_memory_put_raw(f->store, name, &it));
}

static const struct refused_case {
	const char *what;
	struct raw raw;
	const char *error_type, *attribute; /* the attribute the message names */
} refused[] = {
	{"another application's item", {.rvn = "x"}, "NotALock", "_type"},
	{"another _type", {"JOB", NULL, "r", false, true, false, 3}, "NotALock", "_type"},
	{"another application's item, held",
	 {NULL, "svc-7", "r", true, true, false, 3},
	 "NotALock",
	 "_type"},
	{"an owner without rvn", {"LOCK", "o", NULL, true, true, false, 3}, "NotALock", "rvn"},
	{"an owner without leaseMs",
	 {"LOCK", "o", "r", false, true, false, 3},
	 "NotALock",
	 "leaseMs"},
	{"fence -5", {"LOCK", NULL, "r", false, true, false, -5}, "BadFence", "fence"},
	{"fence -1", {"LOCK", NULL, "r", false, true, false, -1}, "BadFence", "fence"},
	{"fence INT64_MIN",
	 {"LOCK", NULL, "r", false, true, false, INT64_MIN},
	 "BadFence",
	 "fence"},
	{"fence INT64_MAX",
	 {"LOCK", NULL, "r", false, true, false, INT64_MAX},
	 "BadFence",
	 "fence"},
	{"fence INT64_MAX, held",
	 {"LOCK", "o", "r", true, true, false, INT64_MAX},
	 "BadFence",
	 "fence"},
	{"fence no integer", {"LOCK", NULL, "r", false, true, true, 0}, "BadFence", "fence"},
};

static void assert_refusal(const struct refused_case *c, const struct lt_error *e)
{
	if (e->status != STORE_FATAL || strcmp(e->error_type, c->error_type) != 0)
		fail_msg("%s: got %s %s: %s", c->what, store_status_name(e->status), e->error_type,
			 e->message);
	/* the lock, the table, the attribute */
	if (strstr(e->message, "'it'") == NULL || strstr(e->message, "'locks'") == NULL ||
	    strstr(e->message, c->attribute) == NULL)
		fail_msg("%s: message \"%s\"", c->what, e->message);
}

/* The item as the store holds it, to compare before and after. */
static struct lock_item peek(struct fx *f, const char *name)
{
	struct lock_item it;
	memset(&it, 0, sizeof(it));
	assert_true(store_read_now(f->store, name, &it));
	return it;
}

static void assert_unchanged(const struct refused_case *c, const struct lock_item *before,
			     const struct lock_item *after)
{
	if (memcmp(before, after, sizeof(*before)) != 0)
		fail_msg("%s: the item was written on", c->what);
}

/* A try, a wait (with and without a timeout) and a second try: each
 * refused with the error, nothing written, no lease. */
static void refused_before_any_write(void **state)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const struct refused_case *c = &refused[i];
		struct fx *f = fx_new(1, true);
		put(f, "it", &c->raw);
		struct lock_item before = peek(f, "it");
		for (int mode = 0; mode < 4; mode++) {
			struct fx_acq a;
			fx_acquire(f, 0, "it", LEASE, mode == 1 || mode == 2, mode == 2 ? 5000 : 0,
				   &a);
			fx_run(f);
			if (!a.done || !a.error || a.lease != NULL)
				fail_msg("%s, mode %d: not refused", c->what, mode);
			assert_refusal(c, &a.err);
			struct lock_item after = peek(f, "it");
			assert_unchanged(c, &before, &after);
		}
		assert_int_equal(f->obs.acquisitions[0] + f->obs.acquisitions[1], 0);
		fx_free(f);
	}
}

/* A wait that joined a queue behind a local holder meets the item at its
 * poll: the whole queue is refused, nothing written. */
static void refused_at_a_poll(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "it", LEASE);
	struct fx_acq a;
	fx_acquire(f, 1, "it", LEASE, true, 0, &a);
	fx_run(f);
	assert_false(a.done);
	put(f, "it", &refused[0].raw); /* replaced behind both */
	struct lock_item before = peek(f, "it");
	fx_advance(f, LEASE / 3);
	assert_true(a.done && a.error);
	assert_refusal(&refused[0], &a.err);
	struct lock_item after = peek(f, "it");
	assert_unchanged(&refused[0], &before, &after);
	lease_release(l);
	fx_run(f);
	fx_free(f);
}

struct state_box {
	bool done;
	bool error;
	struct lt_error err;
};

static void got_state(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct state_box *b = arg;
	b->done = true;
	b->error = err != NULL;
	if (err != NULL)
		b->err = *err;
}

/* LOCK.STATE of such an item is the error too, never a held lock with a
 * token; a held fence of INT64_MAX is a token and is shown. */
static void state_refused_too(void **state)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const struct refused_case *c = &refused[i];
		struct fx *f = fx_new(1, true);
		put(f, "it", &c->raw);
		struct lt_state st;
		bool top = c->raw.fence_v == INT64_MAX;
		assert_int_equal(lt_state_now(f->lt[0], "it", &st), top);
		struct state_box b = {0};
		assert_true(lt_get_state(f->lt[0], "it", got_state, &b));
		fx_run(f);
		assert_true(b.done);
		if (top) {
			assert_false(b.error);
			assert_int_equal(st.token, INT64_MAX);
		} else {
			assert_true(b.error);
			assert_refusal(c, &b.err);
		}
		fx_free(f);
	}
}

/* Locks that look unusual but are locks: a fence one below the top gives
 * the last token (and then none), a free lock written by a release, a lock
 * item without a fence yet, fence 0. */
static void locks_still_work(void **state)
{
	static const struct {
		const char *what;
		struct raw raw;
		int64_t token;
	} ok[] = {
		{"released (no owner, no leaseMs)", {"LOCK", NULL, "r", false, true, false, 3}, 4},
		{"no fence yet", {"LOCK", NULL, NULL, false, false, false, 0}, 1},
		{"fence 0", {"LOCK", NULL, "r", false, true, false, 0}, 1},
		{"the last token",
		 {"LOCK", NULL, "r", false, true, false, INT64_MAX - 1},
		 INT64_MAX},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct fx *f = fx_new(1, true);
		put(f, "it", &ok[i].raw);
		struct fx_acq a;
		fx_acquire(f, 0, "it", LEASE, false, 0, &a);
		fx_run(f);
		if (a.lease == NULL)
			fail_msg("%s: refused: %s", ok[i].what, a.error ? a.err.message : "held");
		assert_int_equal(lease_token(a.lease), ok[i].token);
		lease_release(a.lease);
		fx_run(f);
		fx_free(f);
	}
	/* after the last token: refused, not wrapped */
	struct fx *f = fx_new(1, true);
	put(f, "it", &ok[3].raw);
	lease_release(fx_take(f, 0, "it", LEASE));
	fx_run(f);
	struct fx_acq a;
	fx_acquire(f, 0, "it", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.error);
	assert_string_equal(a.err.error_type, "BadFence");
	assert_non_null(strstr(a.err.message, "9223372036854775807"));
	fx_free(f);
}

/* A lock held in session mode (store.h ACQUIRE's .session): its leaseMs of
 * STORE_SESSION_LOCK_LEASE_MS (10 years) is no bad lease. LOCK.STATE shows
 * it held, with its token; a try is refused because it is held, not
 * because it is no lock; nothing is written on it. */
static void session_mode_item_is_a_lock(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lock_item it = {.exists = true,
			       .has_owner = true,
			       .has_rvn = true,
			       .has_lease = true,
			       .has_fence = true,
			       .fence = 3,
			       .lease_ms = STORE_SESSION_LOCK_LEASE_MS,
			       .slease_ms = 30000};
	snprintf(it.type, sizeof(it.type), "LOCK");
	snprintf(it.owner, sizeof(it.owner), "o-elsewhere");
	snprintf(it.rvn, sizeof(it.rvn), "r1");
	snprintf(it.session, sizeof(it.session), "SESSION#rep#0123456789abcdef0123456789abcdef");
	assert_true(store_memory_put_raw(f->store, "it", &it));
	struct lock_item before = peek(f, "it");
	assert_int_equal(before.lease_ms, STORE_SESSION_LOCK_LEASE_MS);
	assert_string_equal(before.session, it.session);
	assert_int_equal(before.slease_ms, 30000);
	struct state_box b = {0};
	assert_true(lt_get_state(f->lt[0], "it", got_state, &b));
	fx_run(f);
	assert_true(b.done);
	if (b.error)
		fail_msg("LOCK.STATE refused it: %s", b.err.message);
	struct lt_state st;
	assert_true(lt_state_now(f->lt[0], "it", &st));
	assert_true(st.held);
	assert_int_equal(st.token, 3);
	struct fx_acq a;
	fx_acquire(f, 0, "it", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.done);
	if (a.error)
		fail_msg("a try refused it as no lock: %s", a.err.message);
	assert_null(a.lease);
	struct lock_item after = peek(f, "it");
	assert_memory_equal(&before, &after, sizeof(before));
	fx_free(f);
}

static void got_value(void *arg, int64_t value)
{
	*(int64_t *)arg = value;
}

/* Another process's unconditional write (lt_testing) past the top leaves
 * 2^63 on DynamoDB, which reads as no int64; the embedded store does the
 * same (and does not overflow): the next acquire is refused. */
static void unconditional_write_past_the_top(void **state)
{
	struct fx *f = fx_new(1, true);
	put(f, "it", &refused[8].raw); /* fence INT64_MAX */
	int64_t token = -2;
	assert_true(lt_simulate_holder(f->lt[0], "it", LEASE, "other", got_value, &token));
	fx_run(f);
	assert_int_equal(token, 0); /* written, but no token */
	struct lock_item it = peek(f, "it");
	assert_true(it.fence_bad);
	struct fx_acq a;
	fx_acquire(f, 0, "it", LEASE, false, 0, &a);
	fx_run(f);
	assert_true(a.error);
	assert_string_equal(a.err.error_type, "BadFence");
	fx_free(f);
}

/* A name never written is a free lock; its first acquire writes at once. */
static void absent_item_is_a_free_lock(void **state)
{
	struct fx *f = fx_new(1, true);
	struct fx_acq a;
	fx_acquire(f, 0, "new", LEASE, false, 0, &a);
	fx_run(f);
	assert_non_null(a.lease);
	assert_int_equal(lease_token(a.lease), 1);
	assert_int_equal(fx_req(f, STORE_ACQUIRE), 1);
	lease_release(a.lease);
	fx_run(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused_before_any_write),
		cmocka_unit_test(refused_at_a_poll),
		cmocka_unit_test(state_refused_too),
		cmocka_unit_test(locks_still_work),
		cmocka_unit_test(session_mode_item_is_a_lock),
		cmocka_unit_test(absent_item_is_a_free_lock),
		cmocka_unit_test(unconditional_write_past_the_top),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
