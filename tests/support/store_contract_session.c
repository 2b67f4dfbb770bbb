/*
 * store_contract_session: the contract of core/store/store_session.h — a
 * replica's session item — for every store: tests/unit/
 * test_store_contract.c runs it on the embedded store,
 * tests/integration/it_store_dynamodb.c on moto, on a table with a
 * partition key only and on one with a sort key. Each condition of
 * store_session.h has a case that fails it, and what a later reader sees
 * is read back, not taken from the answer.
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <string.h>

#include "core/store/store_session.h"

#define TTL  2000000000
#define TTL2 2000000500

/* An answer copied out of its callback. */
struct sess_answer {
	bool done;
	int calls;
	struct store_session_result res;
};

static void on_sess(void *arg, const struct store_session_result *r)
{
	struct sess_answer *a = arg;
	a->done = true;
	a->calls++;
	a->res = *r;
}

/* This test's session: replica "rep" and an incarnation new per test, so
 * that a table shared between tests and runs holds a new item. */
static const char *incarnation(struct fixture *fx)
{
	static char id[STORE_SESSION_INC_LEN + 1];
	static const struct fixture *of;
	if (of != fx) {
		store_new_id(id);
		of = fx;
	}
	return id;
}

/* One request on fx's session (and lock, READ), run to its answer. */
static struct store_session_result *sess(struct fixture *fx, struct store_session_req r)
{
	static struct sess_answer a;
	memset(&a, 0, sizeof(a));
	r.replica = "rep";
	r.incarnation = incarnation(fx);
	struct store_call *c = store_session_submit(fx->s, &r, on_sess, &a);
	assert_non_null(c);
	assert_false(a.done); /* never inside the submit */
	fx->f->run(fx->f->arg, &a.done);
	if (!a.done)
		fail_msg("%s: no answer to a session request", fx->f->name);
	assert_int_equal(a.calls, 1);
	if (a.res.status == STORE_TRANSIENT || a.res.status == STORE_FATAL ||
	    a.res.status == STORE_NO_TABLE)
		print_message("%s: %s %s\n", fx->f->name, store_status_name(a.res.status),
			      a.res.message);
	return &a.res;
}

static struct store_session_result *create(struct fixture *fx, const char *rvn)
{
	return sess(fx, (struct store_session_req){.op = STORE_SESSION_CREATE,
						   .rvn = rvn,
						   .max_lease_ms = 30000,
						   .holder = "host-a",
						   .addr = "10.0.0.1:6379",
						   .ttl = TTL});
}

/* A BEAT numbered seq (the CREATE's is 0). */
static struct store_session_result *beat(struct fixture *fx, int64_t seq, const char *rvn,
					 int64_t lease_ms)
{
	return sess(fx, (struct store_session_req){.op = STORE_SESSION_BEAT,
						   .rvn = rvn,
						   .seq = seq,
						   .max_lease_ms = lease_ms,
						   .ttl = TTL2});
}

static struct store_session_result *kill_seen(struct fixture *fx, const char *seen, const char *by)
{
	return sess(fx, (struct store_session_req){
				.op = STORE_SESSION_KILL, .seen_rvn = seen, .by = by});
}

static struct store_session_result *read_both(struct fixture *fx)
{
	struct store_session_result *r =
		sess(fx, (struct store_session_req){.op = STORE_SESSION_READ, .name = fx->name});
	assert_int_equal(r->status, STORE_OK);
	assert_true(r->session_read);
	assert_true(r->lock_read);
	return r;
}

static void assert_session(const struct session_item *it, const char *rvn, int64_t lease_ms,
			   int64_t ttl)
{
	assert_true(it->exists);
	assert_string_equal(it->type, "SESSION");
	assert_string_equal(it->rvn, rvn);
	assert_int_equal(it->max_lease_ms, lease_ms);
	assert_int_equal(it->rev_seq, 0);
	assert_string_equal(it->holder, "host-a");
	assert_string_equal(it->addr, "10.0.0.1:6379");
	assert_int_equal(it->ttl, ttl);
}

/* A session is created once per incarnation: a second CREATE is refused
 * with the item there, which it leaves as it was. */
static void created_once(void **state)
{
	struct fixture *fx = *state;
	struct store_session_result *r = create(fx, "r1");
	assert_int_equal(r->status, STORE_OK);
	assert_session(&r->session, "r1", 30000, TTL);
	assert_false(r->session.has_dead);
	r = create(fx, "r2");
	assert_int_equal(r->status, STORE_REFUSED);
	assert_session(&r->session, "r1", 30000, TTL);
	r = read_both(fx);
	assert_session(&r->session, "r1", 30000, TTL);
	assert_false(r->session.has_dead);
	assert_string_equal(r->session.dead, "");
}

/* Beats are never conditioned on the rvn: a beat (counted as a renewal),
 * its retry by the store after its answer was lost (refused by its own
 * earlier attempt, showing its rvn and seq: it applied), and one sent on
 * an item showing an rvn its replica did not see (a beat whose answer was
 * lost) all leave the session live; each answers the item, revSeq with
 * it, and moves maxLeaseMs and the TTL. */
static void beats_never_on_the_rvn(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(create(fx, "r1")->status, STORE_OK);
	uint64_t renews = fx->s->requests[STORE_RENEW];
	struct store_session_result *r = beat(fx, 1, "r2", 10000);
	assert_int_equal(r->status, STORE_OK);
	assert_session(&r->session, "r2", 10000, TTL2);
	assert_int_equal(r->session.beat_seq, 1);
	assert_int_equal(fx->s->requests[STORE_RENEW], renews + 1); /* counted as a renewal */
	r = beat(fx, 1, "r2", 10000);				    /* its retry */
	assert_int_equal(r->status, STORE_REFUSED);
	assert_false(r->session.has_dead);
	assert_string_equal(r->session.rvn, "r2");
	assert_int_equal(r->session.beat_seq, 1);
	r = beat(fx, 4, "r4", 60000); /* r3's answer was lost, on an item showing r2 */
	assert_int_equal(r->status, STORE_OK);
	assert_session(&r->session, "r4", 60000, TTL2);
	r = read_both(fx);
	assert_session(&r->session, "r4", 60000, TTL2);
	assert_int_equal(r->session.beat_seq, 4);
	assert_false(r->session.has_dead);
}

/* An attempt of a beat delayed past a later beat writes nothing: the
 * session's rvn never goes back to a value a waiter may have seen before
 * (it would count the session still since then: the simulator's seed
 * 7530 killed a live session so). */
static void beat_delayed_past_a_later_one_refused(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(create(fx, "r1")->status, STORE_OK);
	assert_int_equal(beat(fx, 1, "r2", 30000)->status, STORE_OK);
	assert_int_equal(beat(fx, 2, "r3", 30000)->status, STORE_OK);
	struct store_session_result *r = beat(fx, 1, "r2", 30000);
	assert_int_equal(r->status, STORE_REFUSED);
	assert_string_equal(r->session.rvn, "r3");
	assert_int_equal(r->session.beat_seq, 2);
	r = read_both(fx);
	assert_string_equal(r->session.rvn, "r3");
	assert_int_equal(r->session.beat_seq, 2);
	assert_false(r->session.has_dead);
}

/* A beat never creates a session: one deleted, or never made, refuses it
 * and stays absent. */
static void beat_of_a_gone_session_refused(void **state)
{
	struct fixture *fx = *state;
	struct store_session_result *r = beat(fx, 1, "r1", 30000);
	assert_int_equal(r->status, STORE_REFUSED);
	assert_false(r->session.exists);
	r = read_both(fx);
	assert_false(r->session.exists);
}

/* A session marked dead refuses every beat (the item as it was with it),
 * and keeps its rvn. */
static void dead_session_refuses_beats(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(create(fx, "r1")->status, STORE_OK);
	struct store_session_result *r = kill_seen(fx, "r1", "waiter-1");
	assert_int_equal(r->status, STORE_OK);
	assert_true(r->session.has_dead);
	assert_string_equal(r->session.dead, "waiter-1");
	assert_session(&r->session, "r1", 30000, TTL);
	r = beat(fx, 1, "r2", 30000);
	assert_int_equal(r->status, STORE_REFUSED);
	assert_true(r->session.has_dead);
	assert_string_equal(r->session.dead, "waiter-1");
	assert_string_equal(r->session.rvn, "r1");
	r = beat(fx, 2, "r1", 30000); /* not even on the rvn it had */
	assert_int_equal(r->status, STORE_REFUSED);
	r = read_both(fx);
	assert_session(&r->session, "r1", 30000, TTL);
	assert_string_equal(r->session.dead, "waiter-1");
}

/* KILL only on the rvn the waiter watched, and only once; never on a
 * session that is not there (a missing session is not a dead one). */
static void kill_on_the_watched_rvn_once(void **state)
{
	struct fixture *fx = *state;
	struct store_session_result *r = kill_seen(fx, "r1", "w1");
	assert_int_equal(r->status, STORE_REFUSED);
	assert_false(r->session.exists);
	assert_false(read_both(fx)->session.exists); /* not made by it */
	assert_int_equal(create(fx, "r1")->status, STORE_OK);
	assert_int_equal(beat(fx, 1, "r2", 30000)->status, STORE_OK);
	r = kill_seen(fx, "r1", "w1"); /* the session beat since */
	assert_int_equal(r->status, STORE_REFUSED);
	assert_string_equal(r->session.rvn, "r2");
	assert_false(r->session.has_dead);
	assert_false(read_both(fx)->session.has_dead);
	r = kill_seen(fx, "r2", "w2");
	assert_int_equal(r->status, STORE_OK);
	assert_string_equal(r->session.dead, "w2");
	r = kill_seen(fx, "r2", "w3"); /* another waiter, the same rvn: once */
	assert_int_equal(r->status, STORE_REFUSED);
	assert_string_equal(r->session.dead, "w2");
	r = read_both(fx);
	assert_string_equal(r->session.dead, "w2");
	assert_string_equal(r->session.rvn, "r2");
}

/* A READ gives the session and the lock, each present or absent. */
static void read_a_session_and_a_lock(void **state)
{
	struct fixture *fx = *state;
	struct store_session_result *r = read_both(fx);
	assert_false(r->session.exists);
	assert_false(r->lock.exists);
	assert_int_equal(sc_acquire(fx, "o1", "o1-r", NULL, "h").status, STORE_OK);
	r = read_both(fx);
	assert_false(r->session.exists);
	sc_assert_held(&r->lock, "o1", "o1-r", 1, 30000, "h");
	assert_int_equal(create(fx, "r1")->status, STORE_OK);
	r = read_both(fx);
	assert_session(&r->session, "r1", 30000, TTL);
	sc_assert_held(&r->lock, "o1", "o1-r", 1, 30000, "h");
	/* the session alone: another lock's name */
	char other[128];
	snprintf(other, sizeof(other), "%s-none", fx->name);
	r = sess(fx, (struct store_session_req){.op = STORE_SESSION_READ, .name = other});
	assert_int_equal(r->status, STORE_OK);
	assert_true(r->session_read && r->lock_read);
	assert_session(&r->session, "r1", 30000, TTL);
	assert_false(r->lock.exists);
}

/* A session without a holder or an address has neither. */
static void labels_optional(void **state)
{
	struct fixture *fx = *state;
	struct store_session_result *r = sess(
		fx,
		(struct store_session_req){
			.op = STORE_SESSION_CREATE, .rvn = "r1", .max_lease_ms = 1000, .ttl = 0});
	assert_int_equal(r->status, STORE_OK);
	r = read_both(fx);
	assert_true(r->session.exists);
	assert_string_equal(r->session.holder, "");
	assert_string_equal(r->session.addr, "");
	assert_int_equal(r->session.max_lease_ms, 1000);
	assert_int_equal(r->session.ttl, 0);
}

/* The TTL a session writes lies STORE_SESSION_TTL_DAYS beyond its
 * longest lease, in epoch seconds (the design: days beyond maxLeaseMs). */
static void ttl_days_beyond_the_lease(void **state)
{
	assert_int_equal(store_session_ttl(1700000000000, 30000),
			 1700000030 + STORE_SESSION_TTL_DAYS * 86400);
	assert_int_equal(store_session_ttl(1700000000000, STORE_SESSION_LEASE_MAX),
			 1700000000 + 86400 + STORE_SESSION_TTL_DAYS * 86400);
	assert_true(STORE_SESSION_TTL_DAYS >= 1);
}

/* Bad requests are refused at submit (no callback). */
static void bad_requests_refused(void **state)
{
	struct fixture *fx = *state;
	struct sess_answer a = {0};
	const char *inc = "0123456789abcdef0123456789abcdef";
	char long_id[STORE_SESSION_REPLICA_MAX + 2];
	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
#define BEAT(rep, in, lease)                                                                       \
	{                                                                                          \
		.op = STORE_SESSION_BEAT, .replica = rep, .incarnation = in, .rvn = "r",           \
		.max_lease_ms = lease                                                              \
	}
	const struct store_session_req bad[] = {
		BEAT(NULL, inc, 1000),
		BEAT("", inc, 1000),
		BEAT(long_id, inc, 1000),
		BEAT("a#b", inc, 1000),
		BEAT("a b", inc, 1000),
		BEAT("a", NULL, 1000),
		BEAT("a", "0123456789abcdef", 1000),
		BEAT("a", "0123456789ABCDEF0123456789abcdef", 1000),
		BEAT("a", inc, 999),
		BEAT("a", inc, STORE_SESSION_LEASE_MAX + 1),
		{.op = STORE_SESSION_BEAT,
		 .replica = "a",
		 .incarnation = inc,
		 .max_lease_ms = 1000},
		{.op = STORE_SESSION_CREATE, .replica = "a", .incarnation = inc, .rvn = "r"},
		{.op = STORE_SESSION_KILL, .replica = "a", .incarnation = inc, .seen_rvn = "r"},
		{.op = STORE_SESSION_KILL, .replica = "a", .incarnation = inc, .by = "w"},
		{.op = STORE_SESSION_READ, .replica = "a", .incarnation = inc},
		{.op = STORE_SESSION_READ, .replica = "a", .incarnation = inc, .name = ""},
		{.op = STORE_SESSION_BEAT,
		 .replica = "a",
		 .incarnation = inc,
		 .rvn = "r",
		 .max_lease_ms = 1000,
		 .ttl = -1},
		{.op = STORE_SESSION_BEAT,
		 .replica = "a",
		 .incarnation = inc,
		 .rvn = "r",
		 .seq = -1,
		 .max_lease_ms = 1000},
		{.op = (enum store_session_op)7, .replica = "a", .incarnation = inc},
	};
#undef BEAT
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (store_session_submit(fx->s, &bad[i], on_sess, &a) != NULL)
			fail_msg("bad session request %zu accepted", i);
	assert_false(a.done);
	/* and the bounds themselves pass */
	long_id[STORE_SESSION_REPLICA_MAX] = '\0';
	struct store_session_req ok = {.op = STORE_SESSION_BEAT,
				       .replica = long_id,
				       .incarnation = inc,
				       .rvn = "r",
				       .max_lease_ms = STORE_SESSION_LEASE_MAX};
	assert_true(store_session_valid(&ok));
	ok.max_lease_ms = STORE_SESSION_LEASE_MIN;
	assert_true(store_session_valid(&ok));
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

int store_contract_session_run(const struct store_factory *f)
{
	struct CMUnitTest tests[] = {
		T(created_once),
		T(beat_delayed_past_a_later_one_refused),
		T(beats_never_on_the_rvn),
		T(beat_of_a_gone_session_refused),
		T(dead_session_refuses_beats),
		T(kill_on_the_watched_rvn_once),
		T(read_a_session_and_a_lock),
		T(labels_optional),
		T(ttl_days_beyond_the_lease),
		T(bad_requests_refused),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	char name[128];
	snprintf(name, sizeof(name), "%s, session items", f->name);
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}
