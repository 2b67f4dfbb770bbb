/*
 * store_contract_slock: the contract of lock items held in session mode
 * (store.h's ACQUIRE with .session and the takeover of a session-mode
 * holder, docs/design/replica-heartbeat.md) for every store: tests/unit/
 * test_store_contract.c runs it on the embedded store, tests/integration/
 * it_store_dynamodb.c on moto, on a table with a partition key only and on
 * one with a sort key. What a later reader sees is read back, not taken
 * from the answer.
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_session.h"

#define TTL    2000000000
#define TTL2   2000000500
#define LEASE  30000
#define TENY   STORE_SESSION_LOCK_LEASE_MS
#define HASH_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HASH_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

/* A session of replica "rep": its incarnation, new per session, and key. */
struct sess {
	char inc[STORE_SESSION_INC_LEN + 1];
	char key[STORE_SESSION_KEY_MAX + 1];
};

static void sess_new(struct sess *s)
{
	store_new_id(s->inc);
	snprintf(s->key, sizeof(s->key), "SESSION#rep#%s", s->inc);
}

struct sess_wait {
	bool done;
	struct store_session_result res;
};

static void on_sess(void *arg, const struct store_session_result *r)
{
	struct sess_wait *w = arg;
	w->done = true;
	w->res = *r;
}

/* One request on session s, run to its answer. */
static struct store_session_result *sess_op(struct fixture *fx, const struct sess *s,
					    struct store_session_req r)
{
	static struct sess_wait w;
	memset(&w, 0, sizeof(w));
	r.replica = "rep";
	r.incarnation = s->inc;
	assert_non_null(store_session_submit(fx->s, &r, on_sess, &w));
	fx->f->run(fx->f->arg, &w.done);
	if (!w.done)
		fail_msg("%s: no answer to a session request", fx->f->name);
	return &w.res;
}

static void sess_create(struct fixture *fx, const struct sess *s, const char *rvn)
{
	struct store_session_req r = {
		.op = STORE_SESSION_CREATE, .rvn = rvn, .max_lease_ms = LEASE};
	assert_int_equal(sess_op(fx, s, r)->status, STORE_OK);
}

static void sess_beat(struct fixture *fx, const struct sess *s, const char *rvn)
{
	static int64_t beats; /* each BEAT's seq above the last (store_session.h) */
	struct store_session_req r = {
		.op = STORE_SESSION_BEAT, .rvn = rvn, .seq = ++beats, .max_lease_ms = LEASE};
	assert_int_equal(sess_op(fx, s, r)->status, STORE_OK);
}

/* An acquire of the free lock by owner, in session mode with session
 * (NULL: per lease). */
static struct store_result acquire(struct fixture *fx, const char *owner, const char *rvn,
				   const char *session)
{
	return store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
							.owner = owner,
							.rvn = rvn,
							.holder = "h",
							.lease_ms = LEASE,
							.ttl = TTL,
							.session = session});
}

/* A takeover by owner of the holder seen (its rvn and fence), written in
 * session mode with session (NULL: per lease), on the session the item
 * showed (seen_session, NULL: no condition on it) and with check. */
static struct store_result takeover(struct fixture *fx, const char *owner, const char *rvn,
				    const struct lock_item *seen, const char *session,
				    const char *seen_session, enum store_sess_check check,
				    const char *sess_rvn)
{
	return store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
							.owner = owner,
							.rvn = rvn,
							.seen_rvn = seen->rvn,
							.seen_fence = seen->fence,
							.has_seen_fence = true,
							.holder = "h",
							.lease_ms = LEASE,
							.ttl = TTL,
							.session = session,
							.seen_session = seen_session,
							.sess_check = check,
							.sess_rvn = sess_rvn});
}

/* The item held in session mode: the session, the real lease in
 * sleaseMs, leaseMs the 10 years, no TTL. */
static void assert_session_mode(const struct lock_item *it, const char *key, int64_t slease)
{
	assert_true(it->has_lease);
	assert_int_equal(it->lease_ms, TENY);
	assert_string_equal(it->session, key);
	assert_int_equal(it->slease_ms, slease);
	assert_int_equal(it->ttl, 0);
}

static void assert_per_lease(const struct lock_item *it, int64_t lease, int64_t ttl)
{
	assert_int_equal(it->lease_ms, lease);
	assert_string_equal(it->session, "");
	assert_int_equal(it->slease_ms, 0);
	assert_int_equal(it->ttl, ttl);
}

/* An acquire with .session writes the lock in session mode; a per-lease
 * acquire (a takeover) on that item removes session and sleaseMs and
 * writes its lease and TTL again. */
static void acquire_in_session_mode(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_new(&s);
	struct store_result r = acquire(fx, "o1", "r1", s.key);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o1", "r1", 1, TENY, "h");
	assert_session_mode(&r.item, s.key, LEASE);
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o1", "r1", 1, TENY, "h");
	assert_session_mode(&r.item, s.key, LEASE);
	r = takeover(fx, "o2", "r2", &r.item, NULL, NULL, STORE_SESS_CHECK_NONE, NULL);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o2", "r2", 2, LEASE, "h");
	assert_per_lease(&r.item, LEASE, TTL);
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o2", "r2", 2, LEASE, "h");
	assert_per_lease(&r.item, LEASE, TTL);
}

static struct store_result renew(struct fixture *fx, const char *rvn, const char *session,
				 int64_t ttl)
{
	return store_contract_op(fx, (struct store_req){.op = STORE_RENEW,
							.owner = "o1",
							.rvn = rvn,
							.holder = "h",
							.lease_ms = 20000,
							.ttl = ttl,
							.session = session});
}

/* A renewal with .session puts the lock in session mode (the TTL
 * removed); one without takes it back to per lease. */
static void renew_in_session_mode(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_new(&s);
	assert_int_equal(acquire(fx, "o1", "r1", NULL).status, STORE_OK);
	struct store_result r = renew(fx, "r2", s.key, TTL2);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o1", "r2", 1, TENY, "h");
	assert_session_mode(&r.item, s.key, 20000);
	r = sc_read_item(fx);
	assert_session_mode(&r.item, s.key, 20000);
	r = renew(fx, "r3", NULL, TTL2);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o1", "r3", 1, 20000, "h");
	assert_per_lease(&r.item, 20000, TTL2);
	r = sc_read_item(fx);
	assert_per_lease(&r.item, 20000, TTL2);
}

static struct store_result adopt(struct fixture *fx, const char *owner, const char *rvn,
				 const char *prev, const char *prev_hash, const char *new_hash,
				 const char *session)
{
	return store_contract_op(fx, (struct store_req){.op = STORE_ADOPT,
							.owner = owner,
							.rvn = rvn,
							.prev_owner = prev,
							.token = 1,
							.secret_hash = new_hash,
							.prev_secret_hash = prev_hash,
							.holder = "h",
							.lease_ms = 15000,
							.ttl = TTL2,
							.session = session});
}

/* An adopt with .session writes the lock in session mode; one without
 * takes it back to per lease. */
static void adopt_in_session_mode(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_new(&s);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .owner = "o1",
								  .rvn = "r1",
								  .lease_ms = LEASE,
								  .ttl = TTL,
								  .secret_hash = HASH_A})
				 .status,
			 STORE_OK);
	struct store_req orphan = {.op = STORE_ORPHAN, .owner = "o1"};
	assert_int_equal(store_contract_op(fx, orphan).status, STORE_OK);
	struct store_result r = adopt(fx, "o2", "r2", "o1", HASH_A, HASH_B, s.key);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o2", "r2", 1, TENY, "h");
	assert_session_mode(&r.item, s.key, 15000);
	r = sc_read_item(fx);
	assert_session_mode(&r.item, s.key, 15000);
	orphan.owner = "o2";
	assert_int_equal(store_contract_op(fx, orphan).status, STORE_OK);
	r = adopt(fx, "o3", "r3", "o2", HASH_B, HASH_A, NULL);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o3", "r3", 1, 15000, "h");
	assert_per_lease(&r.item, 15000, TTL2);
	r = sc_read_item(fx);
	assert_per_lease(&r.item, 15000, TTL2);
}

/* A release removes session and sleaseMs with the owner. */
static void release_removes_the_session(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_new(&s);
	assert_int_equal(acquire(fx, "o1", "r1", s.key).status, STORE_OK);
	struct store_result r = store_contract_op(
		fx, (struct store_req){.op = STORE_RELEASE, .owner = "o1", .ttl = TTL2});
	assert_int_equal(r.status, STORE_OK);
	for (int i = 0; i < 2; i++, r = sc_read_item(fx)) {
		assert_true(r.item.exists);
		assert_false(r.item.has_owner);
		assert_false(r.item.has_lease);
		assert_string_equal(r.item.session, "");
		assert_int_equal(r.item.slease_ms, 0);
		assert_int_equal(r.item.ttl, TTL2);
	}
}

/* A takeover checked on the session's rvn: refused when the lock names
 * another session (the lock's condition: not session_refused), refused
 * with session_refused when the session beat since it was read (the lock
 * as it is with it, unwritten), won when the session shows the rvn given
 * (one ACQUIRE counted). */
static void takeover_on_the_session_rvn(void **state)
{
	struct fixture *fx = *state;
	struct sess s, other, mine;
	sess_new(&s);
	sess_new(&other);
	sess_new(&mine);
	sess_create(fx, &s, "s1");
	struct store_result r = acquire(fx, "o1", "r1", s.key);
	assert_int_equal(r.status, STORE_OK);
	struct lock_item seen = r.item;
	r = takeover(fx, "o2", "r2", &seen, NULL, other.key, STORE_SESS_CHECK_RVN, "s1");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.session_refused);
	sc_assert_held(&r.item, "o1", "r1", 1, TENY, "h");
	assert_string_equal(r.item.session, s.key);
	sess_beat(fx, &s, "s2"); /* between the waiter's read and its write */
	r = takeover(fx, "o2", "r2", &seen, NULL, s.key, STORE_SESS_CHECK_RVN, "s1");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.session_refused);
	for (int i = 0; i < 2; i++, r = sc_read_item(fx)) {
		sc_assert_held(&r.item, "o1", "r1", 1, TENY, "h");
		assert_session_mode(&r.item, s.key, LEASE);
	}
	uint64_t acquires = fx->s->requests[STORE_ACQUIRE];
	r = takeover(fx, "o2", "r3", &seen, mine.key, s.key, STORE_SESS_CHECK_RVN, "s2");
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.session_refused);
	assert_int_equal(fx->s->requests[STORE_ACQUIRE], acquires + 1);
	for (int i = 0; i < 2; i++, r = sc_read_item(fx)) {
		sc_assert_held(&r.item, "o2", "r3", 2, TENY, "h");
		assert_session_mode(&r.item, mine.key, LEASE);
	}
	assert_int_equal(fx->s->in_flight, 0);
}

/* A takeover checked on the session's absence: won when the session item
 * is not there (a missing session is an observed value), refused with
 * session_refused when it is. */
static void takeover_on_an_absent_session(void **state)
{
	struct fixture *fx = *state;
	struct sess gone, s;
	sess_new(&gone); /* never created */
	sess_new(&s);
	sess_create(fx, &s, "s1");
	struct store_result r = acquire(fx, "o1", "r1", gone.key);
	assert_int_equal(r.status, STORE_OK);
	r = takeover(fx, "o2", "r2", &r.item, s.key, gone.key, STORE_SESS_CHECK_ABSENT, NULL);
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o2", "r2", 2, TENY, "h");
	assert_session_mode(&r.item, s.key, LEASE);
	struct lock_item seen = sc_read_item(fx).item;
	sc_assert_held(&seen, "o2", "r2", 2, TENY, "h");
	assert_session_mode(&seen, s.key, LEASE);
	r = takeover(fx, "o3", "r3", &seen, NULL, s.key, STORE_SESS_CHECK_ABSENT, NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.session_refused);
	for (int i = 0; i < 2; i++, r = sc_read_item(fx)) {
		sc_assert_held(&r.item, "o2", "r2", 2, TENY, "h");
		assert_session_mode(&r.item, s.key, LEASE);
	}
}

/* A takeover retried after its first attempt applied (its answer lost)
 * answers OK with the item, the fence raised once, even after the session
 * beat: the lock's condition decides first. */
static void retried_takeover_applies_once(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_new(&s);
	sess_create(fx, &s, "s1");
	struct store_result r = acquire(fx, "o1", "r1", s.key);
	assert_int_equal(r.status, STORE_OK);
	struct lock_item seen = r.item;
	r = takeover(fx, "o2", "r2", &seen, NULL, s.key, STORE_SESS_CHECK_RVN, "s1");
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o2", "r2", 2, LEASE, "h");
	for (int i = 0; i < 2; i++) {
		if (i == 1)
			sess_beat(fx, &s, "s2");
		r = takeover(fx, "o2", "r2", &seen, NULL, s.key, STORE_SESS_CHECK_RVN, "s1");
		assert_int_equal(r.status, STORE_OK);
		assert_false(r.session_refused);
		sc_assert_held(&r.item, "o2", "r2", 2, LEASE, "h");
	}
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o2", "r2", 2, LEASE, "h");
	assert_per_lease(&r.item, LEASE, TTL);
}

static void on_page(void *arg)
{
	*(bool *)arg = true;
}

/* What a scan (LOCK.LIST TABLE) and a session's READ read of a lock in
 * session mode: its session and real lease. */
static void scan_and_session_read_show_it(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_new(&s);
	assert_int_equal(acquire(fx, "o1", "r1", s.key).status, STORE_OK);
	struct store_session_req rd = {.op = STORE_SESSION_READ, .name = fx->name};
	struct store_session_result *sr = sess_op(fx, &s, rd);
	assert_int_equal(sr->status, STORE_OK);
	sc_assert_held(&sr->lock, "o1", "r1", 1, TENY, "h");
	assert_session_mode(&sr->lock, s.key, LEASE);
	struct store_scan_result *page = calloc(1, sizeof(*page));
	assert_non_null(page);
	page->entries = calloc(STORE_SCAN_MAX, sizeof(*page->entries));
	assert_non_null(page->entries);
	char cursor[STORE_CURSOR_MAX + 1] = "";
	int found = 0, pages = 0;
	do {
		bool done = false;
		assert_non_null(store_scan(fx->s, cursor, STORE_SCAN_MAX, page, on_page, &done));
		fx->f->run(fx->f->arg, &done);
		assert_true(done);
		assert_int_equal(page->status, STORE_OK);
		for (unsigned i = 0; i < page->count; i++) {
			const struct store_scan_entry *e = &page->entries[i];
			if (strcmp(e->name, fx->name) != 0)
				continue;
			found++;
			sc_assert_held(&e->item, "o1", "r1", 1, TENY, "h");
			assert_session_mode(&e->item, s.key, LEASE);
		}
		snprintf(cursor, sizeof(cursor), "%s", page->cursor);
		assert_true(++pages < 10000);
	} while (cursor[0] != '\0');
	assert_int_equal(found, 1);
	free(page->entries);
	free(page);
}

static void on_called(void *arg, const struct store_result *res)
{
	*(bool *)arg = true;
}

/* Session fields out of their bounds are refused at submit (no
 * callback), and the bounds themselves pass. */
static void bad_session_arguments_refused(void **state)
{
	struct fixture *fx = *state;
	char key_max[STORE_SESSION_KEY_MAX + 2];
	memset(key_max, 'a', sizeof(key_max) - 1);
	memcpy(key_max, "SESSION#", 8);
	key_max[sizeof(key_max) - 1] = '\0'; /* one byte too long */
	const char *k = "SESSION#rep#0123456789abcdef0123456789abcdef";
#define ACQ(...)                                                                                   \
	{                                                                                          \
		.op = STORE_ACQUIRE, .name = fx->name, .owner = "o", .rvn = "r", .lease_ms = 1000, \
		__VA_ARGS__                                                                        \
	}
#define TAKE(...)                                                                                  \
	ACQ(.seen_rvn = "r0", .has_seen_fence = true, .seen_fence = 1, .seen_session = k,          \
	    __VA_ARGS__)
	const struct store_req bad[] = {
		ACQ(.session = ""),
		ACQ(.session = "SESSION#"),
		ACQ(.session = "LOCK#rep#1"),
		ACQ(.session = "SESSION#a b"),
		ACQ(.session = "SESSION#a\x01"),
		ACQ(.session = key_max),
		{.op = STORE_RELEASE, .name = fx->name, .owner = "o", .session = k},
		{.op = STORE_ORPHAN, .name = fx->name, .owner = "o", .session = k},
		ACQ(.seen_session = k), /* without seen_rvn */
		ACQ(.seen_rvn = "r0", .seen_session = "SESSION"),
		{.op = STORE_RENEW,
		 .name = fx->name,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000,
		 .seen_rvn = "r0",
		 .seen_session = k},
		TAKE(.sess_check = STORE_SESS_CHECK_RVN),		      /* no sess_rvn */
		TAKE(.sess_check = STORE_SESS_CHECK_RVN, .sess_rvn = ""),     /* empty */
		TAKE(.sess_check = STORE_SESS_CHECK_ABSENT, .sess_rvn = "s"), /* a rvn */
		TAKE(.sess_rvn = "s"),					      /* no check */
		TAKE(.sess_check = (enum store_sess_check)7),
		TAKE(.sess_check = STORE_SESS_CHECK_ABSENT, .unconditional = true),
		ACQ(.seen_rvn = "r0", .has_seen_fence = true, .seen_session = "",
		    .sess_check = STORE_SESS_CHECK_ABSENT), /* no session to check */
		ACQ(.seen_rvn = "r0", .has_seen_fence = true,
		    .sess_check = STORE_SESS_CHECK_ABSENT),
		ACQ(.has_seen_fence = true, .sess_check = STORE_SESS_CHECK_ABSENT,
		    .seen_session = k),
		ACQ(.seen_rvn = "r0", .seen_session = k, .sess_check = STORE_SESS_CHECK_ABSENT),
	};
	bool called = false;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (store_submit(fx->s, &bad[i], on_called, &called) != NULL)
			fail_msg("bad session request %zu accepted", i);
	assert_int_equal(fx->s->in_flight, 0);
	assert_false(called);
	/* and the bounds pass */
	key_max[STORE_SESSION_KEY_MAX] = '\0';
	const struct store_req ok[] = {
		ACQ(.session = key_max),
		TAKE(.sess_check = STORE_SESS_CHECK_RVN, .sess_rvn = "s1", .session = key_max),
		TAKE(.sess_check = STORE_SESS_CHECK_ABSENT),
		ACQ(.seen_rvn = "r0", .seen_session = ""),
		{.op = STORE_RENEW, .owner = "o", .rvn = "r", .lease_ms = 1000, .session = k},
	};
#undef TAKE
#undef ACQ
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!store_req_session_valid(&ok[i]))
			fail_msg("good session request %zu refused", i);
}

/* A lost lease's release on the rvn and session it knew (RELEASE's
 * .seen_rvn, .seen_session in store.h): refused, changing nothing, by an
 * item under another rvn, another session or none; applied on its own. */
static void release_on_the_rvn_and_session_seen(void **state)
{
	struct fixture *fx = *state;
	struct sess a, b;
	sess_new(&a);
	sess_new(&b);
	assert_int_equal(acquire(fx, "o1", "r1", a.key).status, STORE_OK);
	struct store_req rel = {
		.op = STORE_RELEASE, .owner = "o1", .seen_rvn = "r0", .seen_session = a.key};
	struct store_result r = store_contract_op(fx, rel);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.rvn, "r1");
	rel.seen_rvn = "r1";
	rel.seen_session = b.key;
	r = store_contract_op(fx, rel);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.session, a.key);
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o1", "r1", 1, TENY, "h");
	/* the item back per lease under the same owner: no session to match */
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_RENEW,
								  .owner = "o1",
								  .rvn = "r2",
								  .seen_rvn = "r1",
								  .lease_ms = LEASE,
								  .ttl = TTL})
				 .status,
			 STORE_OK);
	rel = (struct store_req){.op = STORE_RELEASE, .owner = "o1", .seen_session = a.key};
	assert_int_equal(store_contract_op(fx, rel).status, STORE_REFUSED);
	assert_true(sc_read_item(fx).item.has_owner);
	/* on its own rvn alone, then on both */
	rel = (struct store_req){.op = STORE_RELEASE, .owner = "o1", .seen_rvn = "r2"};
	assert_int_equal(store_contract_op(fx, rel).status, STORE_OK);
	assert_false(sc_read_item(fx).item.has_owner);
	assert_int_equal(acquire(fx, "o2", "r3", b.key).status, STORE_OK);
	rel = (struct store_req){
		.op = STORE_RELEASE, .owner = "o2", .seen_rvn = "r3", .seen_session = b.key};
	assert_int_equal(store_contract_op(fx, rel).status, STORE_OK);
	r = sc_read_item(fx);
	assert_false(r.item.has_owner);
	assert_string_equal(r.item.session, "");
	/* never with a token, unconditional, or a bad key */
	struct store_req bad[] = {
		{.op = STORE_RELEASE, .name = fx->name, .owner = "o", .seen_rvn = "r", .token = 3},
		{.op = STORE_RELEASE, .name = fx->name, .seen_rvn = "r", .unconditional = true},
		{.op = STORE_RELEASE, .name = fx->name, .owner = "o", .seen_session = ""},
		{.op = STORE_RELEASE, .name = fx->name, .owner = "o", .seen_session = "LOCK#x"},
		{.op = STORE_RELEASE, .name = fx->name, .owner = "o", .seen_rvn = ""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (store_submit(fx->s, &bad[i], NULL, NULL) != NULL)
			fail_msg("bad release %zu accepted", i);
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

int store_contract_slock_run(const struct store_factory *f)
{
	struct CMUnitTest tests[] = {
		T(acquire_in_session_mode),	  T(renew_in_session_mode),
		T(adopt_in_session_mode),	  T(release_removes_the_session),
		T(takeover_on_the_session_rvn),	  T(takeover_on_an_absent_session),
		T(retried_takeover_applies_once), T(scan_and_session_read_show_it),
		T(bad_session_arguments_refused), T(release_on_the_rvn_and_session_seen),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	char name[128];
	snprintf(name, sizeof(name), "%s, locks in session mode", f->name);
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}
