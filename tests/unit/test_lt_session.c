/*
 * test_lt_session: the replica's session and the holder's clock
 * (core/lt_session.h) on the fake clock and the embedded store: the
 * heartbeat's schedule, the holder's clock rule, retries, the session's
 * end, revSeq, and the cost of a heartbeat with 100,000 members.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lt_session.h"
#include "core/store/store_memory.h"
#include "lib/base/lg_assert.h"

#define WALL0 1700000000000LL

/* A lease's stand-in: a member and what happened to it. */
struct mem {
	struct lt_member m; /* first: the callback finds the mem from it */
	int lost;
	enum lt_loss why;
	int64_t lost_at;
};

struct sx {
	struct clock *clock;
	struct store *store;
	struct obs obs;
	struct lt_session *s;
	int ended;
	int revseq_calls;
	int64_t revseq;
};

static void on_lost(void *arg, struct lt_member *m, enum lt_loss why)
{
	struct sx *x = arg;
	struct mem *e = (struct mem *)m;
	e->lost++;
	e->why = why;
	e->lost_at = clock_now_ms(x->clock);
}

static void on_revseq(void *arg, int64_t seq)
{
	struct sx *x = arg;
	x->revseq_calls++;
	x->revseq = seq;
}

static void on_end(void *arg)
{
	((struct sx *)arg)->ended++;
}

/* A LIVE session of replica "r1" (its CREATE answered) at time 0. */
static struct sx *sx_new(void)
{
	struct sx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->clock = clock_fake_new(WALL0);
	x->store = store_memory_new(x->clock, "locks");
	struct lt_session_options o = {
		.replica = "r1",
		.holder = "pod-1",
		.addr = "10.0.0.1:6379",
		.ttl = true,
		.on_lost = on_lost,
		.on_revseq = on_revseq,
		.on_end = on_end,
		.arg = x,
	};
	x->s = lt_session_new(x->clock, x->store, &x->obs, &o);
	assert_non_null(x->s);
	assert_true(lt_session_start(x->s));
	clock_fake_advance(x->clock, 0);
	struct lt_session_view v;
	lt_session_view(x->s, &v);
	assert_int_equal(v.state, LT_SESSION_LIVE);
	return x;
}

static void sx_free(struct sx *x)
{
	lt_session_free(x->s);
	store_free(x->store);
	assert_int_equal(clock_armed(x->clock), 0);
	clock_free(x->clock);
	free(x);
}

static int64_t now(struct sx *x)
{
	return clock_now_ms(x->clock);
}

/* Moves the clock to monotonic time at_ms, running what falls due. */
static void to(struct sx *x, int64_t at_ms)
{
	clock_fake_advance(x->clock, at_ms - now(x));
}

/* BEATs sent (counted as renewals by the store) */
static uint64_t beats(struct sx *x)
{
	return x->store->requests[STORE_RENEW];
}

static void join(struct sx *x, struct mem *e, int64_t lease_ms, int64_t send_ms)
{
	assert_int_equal(lt_member_join(x->s, &e->m, lease_ms, send_ms), LT_JOIN_OK);
}

static struct lt_session_view view(struct sx *x)
{
	struct lt_session_view v;
	lt_session_view(x->s, &v);
	return v;
}

/* The session's incarnation, from its key SESSION#r1#<incarnation>. */
static const char *incarnation(struct sx *x)
{
	const char *key = view(x).key;
	assert_memory_equal(key, "SESSION#r1#", 11);
	return key + 11;
}

static void got_item(void *arg, const struct store_session_result *res)
{
	*(struct store_session_result *)arg = *res;
}

/* The session item as the store holds it. */
static struct session_item stored(struct sx *x)
{
	static struct store_session_result res;
	struct store_session_req req = {
		.op = STORE_SESSION_READ,
		.replica = "r1",
		.incarnation = incarnation(x),
		.name = "any",
	};
	memset(&res, 0, sizeof(res));
	assert_non_null(store_session_submit(x->store, &req, got_item, &res));
	clock_fake_advance(x->clock, 0);
	assert_int_equal(res.status, STORE_OK);
	return res.session;
}

static void create_then_beats_every_third_of_the_shortest_lease(void **state)
{
	struct sx *x = sx_new();
	assert_int_equal(x->store->requests[STORE_ACQUIRE], 1); /* the CREATE */
	assert_true(stored(x).exists);
	assert_string_equal(stored(x).holder, "pod-1");
	to(x, 10000); /* idle: no member, no beat */
	assert_int_equal(beats(x), 0);

	struct mem a = {0}, b = {0};
	join(x, &a, 3000, 10000);
	to(x, 10999);
	assert_int_equal(beats(x), 0);
	to(x, 11000);
	assert_int_equal(beats(x), 1);
	to(x, 11500);
	join(x, &b, 9000, 11500); /* longer: no beat at once, the cadence stays */
	clock_fake_advance(x->clock, 0);
	assert_int_equal(beats(x), 1);
	to(x, 13000);
	assert_int_equal(beats(x), 3);
	assert_int_equal(view(x).max_lease_ms, 9000);
	assert_int_equal(stored(x).max_lease_ms, 9000);
	assert_int_equal(x->obs.session_beats, 4); /* the CREATE and 3 beats */
	assert_int_equal(obs_get(&x->obs.session_answers, "ok"), 4);

	lt_member_leave(&a.m); /* the shortest left: a third of 9000 from the last beat */
	to(x, 14000);
	assert_int_equal(beats(x), 4); /* due before the pass saw a leave: one more */
	to(x, 16999);
	assert_int_equal(beats(x), 4);
	to(x, 17000);
	assert_int_equal(beats(x), 5);

	lt_member_leave(&b.m); /* 9000 is still written for a lease after it left */
	struct mem c = {0};
	to(x, 17500);
	join(x, &c, 3000, 17500);
	to(x, 18500);
	assert_int_equal(beats(x), 6);
	assert_int_equal(stored(x).max_lease_ms, 9000);
	to(x, 26500);
	assert_int_equal(stored(x).max_lease_ms, 3000);

	lt_member_leave(&c.m); /* idle again: no beat */
	uint64_t n = beats(x);
	to(x, 60000);
	assert_int_equal(beats(x), n);
	sx_free(x);
}

static void idle_session_beats_once_a_day_to_outlive_its_ttl(void **state)
{
	struct sx *x = sx_new();
	int64_t ttl0 = stored(x).ttl;
	assert_int_equal(ttl0, store_session_ttl(WALL0, 1000));
	to(x, LT_SESSION_IDLE_BEAT_MS - 1);
	assert_int_equal(beats(x), 0);
	to(x, LT_SESSION_IDLE_BEAT_MS);
	assert_int_equal(beats(x), 1);
	assert_int_equal(stored(x).ttl, store_session_ttl(WALL0 + LT_SESSION_IDLE_BEAT_MS, 1000));
	assert_true(stored(x).ttl > ttl0);
	struct mem a = {0}; /* a member between: the idle beat counts from the last beat */
	to(x, LT_SESSION_IDLE_BEAT_MS + 5000);
	join(x, &a, 3000, now(x));
	to(x, LT_SESSION_IDLE_BEAT_MS + 8000);
	assert_int_equal(beats(x), 4);
	lt_member_leave(&a.m);
	to(x, 2 * LT_SESSION_IDLE_BEAT_MS + 7999);
	assert_int_equal(beats(x), 4);
	to(x, 2 * LT_SESSION_IDLE_BEAT_MS + 8000);
	assert_int_equal(beats(x), 5);
	sx_free(x);
}

static void shorter_member_joining_beats_at_once(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0}, b = {0}, c = {0};
	join(x, &a, 9000, 0);
	to(x, 500);
	assert_int_equal(beats(x), 0);
	join(x, &b, 3000, 500);
	clock_fake_advance(x->clock, 0);
	assert_int_equal(beats(x), 1); /* at once, not at 3000 */
	to(x, 1499);
	assert_int_equal(beats(x), 1);
	to(x, 1500); /* then every third of the new shortest */
	assert_int_equal(beats(x), 2);
	to(x, 1600);
	join(x, &c, 6000, 1600); /* not shorter: nothing at once */
	clock_fake_advance(x->clock, 0);
	assert_int_equal(beats(x), 2);
	sx_free(x);
}

static void answer_in_time_extends_to_send_plus_lease(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	assert_int_equal(lt_member_end_ms(&a.m), 3000); /* its acquire's proof */
	store_memory_set_op_latency(x->store, STORE_RENEW, 400);
	to(x, 1000); /* sent */
	assert_int_equal(lt_member_end_ms(&a.m), 3000);
	to(x, 1400);					/* answered */
	assert_int_equal(lt_member_end_ms(&a.m), 4000); /* send + lease, not 4400 */
	struct lt_session_view v = view(x);
	assert_int_equal(v.confirmed_ms, 1000);
	assert_int_equal(v.confirmed_wall_ms, WALL0 + 1000);
	assert_string_equal(v.rvn, stored(x).rvn);
	to(x, 2000); /* the next is due a third after the send, not the answer */
	assert_int_equal(beats(x), 2);
	sx_free(x);
}

static void answer_after_an_end_is_sticky_while_later_ends_are_extended(void **state)
{
	struct sx *x = sx_new();
	struct mem early = {0}, later = {0}, late_acq = {0};
	join(x, &early, 3000, 0); /* ends at 3000 */
	to(x, 100);
	join(x, &later, 3000, 100); /* ends at 3100 */
	store_memory_set_op_latency(x->store, STORE_RENEW, 2000);
	to(x, 1000); /* beat sent, answered at 3000 */
	assert_int_equal(beats(x), 1);
	to(x, 1500);
	store_memory_set_op_latency(x->store, STORE_RENEW, 300); /* the next beats */
	/* an acquire sent at 500, answered now: ends at 3000, its group's
	 * timer armed after the beat's answer is due (the answer runs first) */
	join(x, &late_acq, 2500, 500);
	to(x, 3000);
	assert_int_equal(early.lost, 1);
	assert_int_equal(early.why, LT_EXPIRED);
	assert_int_equal(late_acq.lost, 1); /* the answer came at its end: too late */
	assert_int_equal(late_acq.why, LT_EXPIRED);
	assert_int_equal(late_acq.lost_at, 3000);
	assert_int_equal(later.lost, 0);
	assert_int_equal(lt_member_end_ms(&later.m), 4000); /* 1000 + 3000 */
	assert_int_equal(lt_member_end_ms(&early.m), -1);
	to(x, 10000); /* later answers revive nothing */
	assert_int_equal(early.lost, 1);
	assert_int_equal(late_acq.lost, 1);
	assert_false(lt_member_joined(&early.m));
	assert_true(lt_member_joined(&later.m));
	lt_member_leave(&later.m);
	sx_free(x);
}

static void delayed_beat_extends_from_its_send(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	store_memory_set_op_latency(x->store, STORE_RENEW, 1500);
	to(x, 1000); /* sent, answered at 2500 */
	store_memory_set_op_latency(x->store, STORE_RENEW, 300);
	to(x, 2499);
	assert_int_equal(lt_member_end_ms(&a.m), 3000);
	assert_int_equal(beats(x), 1); /* one beat at a time */
	to(x, 2500);
	/* its send + lease (not 5500); the next was due at 2000: sent at once */
	assert_int_equal(lt_member_end_ms(&a.m), 4000);
	assert_int_equal(view(x).confirmed_ms, 1000);
	assert_int_equal(beats(x), 2);
	to(x, 2800);
	assert_int_equal(lt_member_end_ms(&a.m), 5500);
	assert_int_equal(view(x).confirmed_ms, 2500);
	assert_int_equal(a.lost, 0);
	lt_member_leave(&a.m);
	sx_free(x);
}

static void lost_answer_then_a_retried_beat(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	store_memory_fail(x->store, 4, STORE_TRANSIENT, "RequestTimeout");
	to(x, 1000); /* 1000 fails, 1100 (+100), 1300 (+200), 1700 (+400) */
	to(x, 1700);
	assert_int_equal(beats(x), 4);
	assert_int_equal(lt_member_end_ms(&a.m), 3000); /* failures extend nothing */
	to(x, 2199);
	assert_int_equal(beats(x), 4);
	to(x, 2200); /* +800 capped at a sixth of the lease: +500 */
	assert_int_equal(beats(x), 5);
	assert_int_equal(lt_member_end_ms(&a.m), 5200);
	assert_int_equal(obs_get(&x->obs.session_answers, "RequestTimeout"), 4);
	assert_int_equal(a.lost, 0);
	lt_member_leave(&a.m);
	sx_free(x);
}

static void beat_applied_but_its_answer_lost_then_retried(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	to(x, 999);
	char before[STORE_ID_MAX + 1];
	snprintf(before, sizeof(before), "%s", stored(x).rvn);
	store_memory_session_lose(x->store, 1);
	to(x, 1000); /* written, its answer lost */
	assert_string_not_equal(stored(x).rvn, before);
	assert_string_equal(view(x).rvn, before); /* what the holder knows */
	assert_int_equal(lt_member_end_ms(&a.m), 3000);
	to(x, 1100); /* the retry is a beat, not a lost session: never on the rvn */
	assert_int_equal(beats(x), 2);
	assert_int_equal(lt_member_end_ms(&a.m), 4100);
	assert_string_equal(view(x).rvn, stored(x).rvn);
	assert_int_equal(view(x).state, LT_SESSION_LIVE);
	lt_member_leave(&a.m);
	sx_free(x);
}

/* A beat the store tried again after its first attempt applied (its answer
 * lost) is refused by that attempt (beatSeq, store_session.h): the refusal
 * shows the beat's own rvn and seq, so the beat applied, and the session
 * goes on, extended from the beat's send. */
static void beat_retried_by_the_store_refused_by_itself(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	store_memory_session_retry(x->store, 1);
	to(x, 1000);
	assert_int_equal(beats(x), 1); /* one beat, sent once by the holder */
	assert_int_equal(obs_get(&x->obs.session_answers, "refused"), 1);
	assert_int_equal(view(x).state, LT_SESSION_LIVE);
	assert_string_equal(view(x).rvn, stored(x).rvn);
	assert_int_equal(lt_session_stats(x->s)->beats_refused, 0);
	assert_int_equal(lt_member_end_ms(&a.m), 4000);
	assert_int_equal(a.lost, 0);
	lt_member_leave(&a.m);
	sx_free(x);
}

static void retries_stop_when_no_member_would_see_them(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	store_memory_fail(x->store, -1, STORE_TRANSIENT, "RequestTimeout");
	to(x, 2800);	    /* 1000, 1100, 1300, 1700, 2200, 2700; the next due at 3200 */
	struct mem b = {0}; /* an acquire sent at 200: ends as that retry is due */
	join(x, &b, 3000, 200);
	to(x, 2999);
	assert_int_equal(beats(x), 6);
	to(x, 3000);
	assert_int_equal(a.lost, 1);
	assert_int_equal(a.why, LT_EXPIRED);
	to(x, 20000); /* the retry due at 3200 finds no member left: nothing sent */
	assert_int_equal(b.lost_at, 3200);
	assert_int_equal(beats(x), 6);
	store_memory_fail(x->store, 0, STORE_OK, NULL);
	sx_free(x);
}

/* The session's item marked dead, as a waiter would. */
static void kill_session(struct sx *x)
{
	struct store_session_result res = {0};
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s", view(x).rvn);
	struct store_session_req req = {
		.op = STORE_SESSION_KILL,
		.replica = "r1",
		.incarnation = incarnation(x),
		.seen_rvn = rvn,
		.by = "waiter-9",
	};
	assert_non_null(store_session_submit(x->store, &req, got_item, &res));
	clock_fake_advance(x->clock, 0);
	assert_int_equal(res.status, STORE_OK);
}

/* Every member of e[0..n) lost for why at at_ms. */
static void all_lost(struct mem *e, int n, enum lt_loss why, int64_t at_ms)
{
	for (int i = 0; i < n; i++) {
		assert_int_equal(e[i].lost, 1);
		assert_int_equal(e[i].why, why);
		assert_int_equal(e[i].lost_at, at_ms);
	}
}

static void ended_session(struct sx *x, const char *reason)
{
	struct lt_session_view v = view(x);
	assert_int_equal(v.state, LT_SESSION_ENDED);
	assert_int_equal(v.end_loss, LT_SESSION);
	assert_string_equal(v.end_reason, reason);
	assert_int_equal(v.members, 0);
	assert_int_equal(x->ended, 1);
	assert_int_equal(lt_session_stats(x->s)->beats_refused, 1);
	assert_int_equal(obs_get(&x->obs.session_answers, "refused"), 1);
	struct mem late = {0};
	assert_int_equal(lt_member_join(x->s, &late.m, 3000, now(x)), LT_JOIN_ENDED);
	uint64_t n = beats(x);
	to(x, now(x) + 60000);
	assert_int_equal(beats(x), n);
}

static void session_marked_dead_ends_every_member(void **state)
{
	struct sx *x = sx_new();
	struct mem e[3] = {0};
	join(x, &e[0], 3000, 0);
	join(x, &e[1], 9000, 0);
	join(x, &e[2], 9000, 0);
	to(x, 1000);
	assert_int_equal(beats(x), 1);
	to(x, 1500);
	kill_session(x);
	to(x, 2000); /* the next beat is refused */
	assert_int_equal(beats(x), 2);
	all_lost(e, 3, LT_SESSION, 2000);
	assert_string_equal(lt_loss_name(LT_SESSION), "session");
	ended_session(x, "marked dead by waiter-9");
	sx_free(x);
}

static void session_item_deleted_ends_every_member(void **state)
{
	struct sx *x = sx_new();
	struct mem e[2] = {0};
	join(x, &e[0], 3000, 0);
	join(x, &e[1], 6000, 0);
	to(x, 1500);
	char key[STORE_SESSION_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s", view(x).key);
	assert_true(store_memory_session_delete(x->store, key));
	to(x, 2000);
	all_lost(e, 2, LT_SESSION, 2000);
	ended_session(x, "its item is gone");
	sx_free(x);
}

static void table_gone_ends_every_member(void **state)
{
	struct sx *x = sx_new();
	struct mem e[2] = {0};
	join(x, &e[0], 3000, 0);
	join(x, &e[1], 6000, 0);
	store_memory_fail(x->store, 1, STORE_NO_TABLE, "ResourceNotFoundException");
	to(x, 1000);
	all_lost(e, 2, LT_TABLE_NOT_FOUND, 1000);
	struct lt_session_view v = view(x);
	assert_int_equal(v.state, LT_SESSION_ENDED);
	assert_int_equal(v.end_loss, LT_TABLE_NOT_FOUND);
	assert_string_equal(v.end_reason, "the table is gone");
	assert_int_equal(x->ended, 1);
	sx_free(x);
}

static void revseq_pending_lets_leases_expire_on_time(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	to(x, 1000);
	assert_int_equal(lt_member_end_ms(&a.m), 4000);
	assert_true(store_memory_session_add_rev(x->store, view(x).key, 1));
	to(x, 2000); /* answered with revSeq 1: nothing extended */
	assert_int_equal(x->revseq_calls, 1);
	assert_int_equal(x->revseq, 1);
	assert_int_equal(lt_member_end_ms(&a.m), 4000);
	to(x, 3999); /* beats go on (2000, 3000), extending nothing */
	assert_int_equal(beats(x), 3);
	assert_int_equal(x->revseq_calls, 1); /* once per rise */
	assert_int_equal(a.lost, 0);
	assert_int_equal(view(x).confirmed_ms, 1000);
	to(x, 4000);
	assert_int_equal(a.lost, 1);
	assert_int_equal(a.why, LT_EXPIRED);
	assert_int_equal(a.lost_at, 4000);
	sx_free(x);
}

static void revseq_acknowledged_extends_again(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0};
	join(x, &a, 3000, 0);
	to(x, 1000);
	assert_true(store_memory_session_add_rev(x->store, view(x).key, 2));
	to(x, 2000);
	assert_int_equal(x->revseq, 2);
	assert_false(lt_session_revocations_done(x->s, 3)); /* not read */
	assert_true(lt_session_revocations_done(x->s, 1));  /* not all: still pending */
	clock_fake_advance(x->clock, 0);
	assert_int_equal(beats(x), 2);
	to(x, 2500);
	assert_true(lt_session_revocations_done(x->s, 2));
	clock_fake_advance(x->clock, 0); /* a beat at once, whose answer extends */
	assert_int_equal(beats(x), 3);
	assert_int_equal(lt_member_end_ms(&a.m), 5500);
	assert_int_equal(view(x).rev_seq_done, 2);
	lt_member_leave(&a.m);
	sx_free(x);
}

static void acquire_answered_out_of_order_ends_by_its_own_send(void **state)
{
	struct sx *x = sx_new();
	struct mem a = {0}, b = {0};
	store_memory_fail(x->store, -1, STORE_TRANSIENT, "RequestTimeout");
	to(x, 600);
	join(x, &a, 3000, 500);
	join(x, &b, 3000, 300); /* sent before a, answered after it */
	to(x, 3300);
	assert_int_equal(b.lost, 1);
	assert_int_equal(b.lost_at, 3300);
	assert_int_equal(a.lost, 0);
	to(x, 3500);
	assert_int_equal(a.lost_at, 3500);
	assert_int_equal(lt_session_stats(x->s)->joins_clamped, 0);
	store_memory_fail(x->store, 0, STORE_OK, NULL);
	sx_free(x);
}

static void join_too_far_out_of_order_ends_earlier_never_later(void **state)
{
	struct sx *x = sx_new();
	struct mem e[LT_SESSION_ORDER_STEPS + 3] = {0};
	int n = LT_SESSION_ORDER_STEPS + 2;
	store_memory_fail(x->store, -1, STORE_TRANSIENT, "RequestTimeout");
	to(x, 900);
	for (int i = 0; i < n; i++)
		join(x, &e[i], 3000, 100 + i * 10);
	join(x, &e[n], 3000, 105); /* behind more than LT_SESSION_ORDER_STEPS */
	assert_int_equal(lt_session_stats(x->s)->joins_clamped, 1);
	assert_int_equal(lt_member_end_ms(&e[n].m), 3100); /* the head's: earlier */
	to(x, 3100);
	assert_int_equal(e[n].lost_at, 3100);
	assert_int_equal(e[0].lost_at, 3100);
	assert_int_equal(e[1].lost, 0);
	to(x, 10000);
	store_memory_fail(x->store, 0, STORE_OK, NULL);
	sx_free(x);
}

static void create_retried_after_an_error(void **state)
{
	struct sx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->clock = clock_fake_new(WALL0);
	x->store = store_memory_new(x->clock, "locks");
	struct lt_session_options o = {.replica = "r1", .on_lost = on_lost, .arg = x};
	x->s = lt_session_new(x->clock, x->store, &x->obs, &o);
	assert_non_null(x->s);
	struct mem a = {0};
	assert_int_equal(lt_member_join(x->s, &a.m, 3000, 0), LT_JOIN_ENDED); /* NEW */
	store_memory_fail(x->store, 1, STORE_TRANSIENT, "RequestTimeout");
	assert_true(lt_session_start(x->s));
	assert_false(lt_session_start(x->s));
	clock_fake_advance(x->clock, 0);
	assert_int_equal(view(x).state, LT_SESSION_CREATING);
	join(x, &a, 3000, 0); /* a member may join while it is created */
	to(x, 100);
	assert_int_equal(view(x).state, LT_SESSION_LIVE);
	assert_int_equal(x->store->requests[STORE_ACQUIRE], 2);
	/* the CREATE is a beat, proven from its first send: an attempt
	 * answered TRANSIENT may have written its rvn (sim seed 2107) */
	assert_int_equal(lt_member_end_ms(&a.m), 3000);
	lt_member_leave(&a.m);
	sx_free(x);

	/* a CREATE applied whose answer was lost: its retry, refused by the
	 * item its first attempt wrote, is its success */
	x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->clock = clock_fake_new(WALL0);
	x->store = store_memory_new(x->clock, "locks");
	x->s = lt_session_new(x->clock, x->store, &x->obs, &o);
	assert_non_null(x->s);
	store_memory_session_lose(x->store, 1);
	assert_true(lt_session_start(x->s));
	clock_fake_advance(x->clock, 0);
	assert_int_equal(view(x).state, LT_SESSION_CREATING);
	assert_true(stored(x).exists);
	join(x, &a, 3000, 0);
	to(x, 100);
	assert_int_equal(view(x).state, LT_SESSION_LIVE);
	assert_string_equal(view(x).rvn, stored(x).rvn);
	assert_int_equal(lt_session_stats(x->s)->beats_refused, 0);
	/* its rvn was written at 0 and a waiter may count from then: the
	 * retry refused at 100 proves nothing later (seed 2107 of
	 * make simulate HEARTBEAT=replica EXCLUSIVE=1: the refusal of a retry
	 * sent 5 s after the write extended a lease past a takeover) */
	assert_int_equal(lt_member_end_ms(&a.m), 3000);
	assert_int_equal(view(x).confirmed_ms, 0);
	lt_member_leave(&a.m);
	sx_free(x);

	struct lt_session_options bad = {.replica = "r#1", .on_lost = on_lost};
	struct clock *c = clock_fake_new(WALL0);
	struct store *st = store_memory_new(c, "locks");
	struct obs obs = {0};
	assert_null(lt_session_new(c, st, &obs, &bad));
	bad.replica = "r1";
	bad.on_lost = NULL;
	assert_null(lt_session_new(c, st, &obs, &bad));
	store_free(st);
	clock_free(c);
}

#define MANY	100000
#define LENGTHS 4

static void many_members_beat_in_o_groups(void **state)
{
	static const int64_t lease[LENGTHS] = {3000, 6000, 9000, 12000};
	struct sx *x = sx_new();
	struct mem *e = calloc(MANY, sizeof(*e));
	assert_non_null(e);
	assert_true(sizeof(struct lt_member) <= 64);
	to(x, 1);
	for (int i = 0; i < MANY; i++)
		join(x, &e[i], lease[i % LENGTHS], i % 7 == 0 ? 0 : 1);
	assert_int_equal(view(x).members, MANY);
	assert_int_equal(view(x).groups, LENGTHS);
	struct lt_session_stats before = *lt_session_stats(x->s);
	to(x, 30000);
	const struct lt_session_stats *after = lt_session_stats(x->s);
	uint64_t n = beats(x);
	assert_int_equal(n, 30); /* every 1000 ms: one request for all of them */
	assert_int_equal(after->beats_extended - before.beats_extended, n);
	/* per beat: its pass, its answer's extension; the heads looked at */
	assert_true(after->group_visits - before.group_visits <= 2 * LENGTHS * n);
	assert_true(after->member_visits - before.member_visits <= 2 * LENGTHS * n);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(e[i].lost, 0);
	assert_int_equal(lt_member_end_ms(&e[0].m), 30000 + 3000); /* the last beat's */
	for (int i = 0; i < MANY; i += 2)			   /* leaving: no walk */
		lt_member_leave(&e[i].m);
	assert_int_equal(lt_session_stats(x->s)->member_visits, after->member_visits);
	assert_int_equal(view(x).members, MANY / 2);
	for (int i = 1; i < MANY; i += 2)
		lt_member_leave(&e[i].m);
	to(x, 60000);
	free(e);
	sx_free(x);
}

/* A broken invariant of the module fails the test that broke it. */
static void assert_failed(const char *file, int line, const char *cond, const char *detail)
{
	fail_msg("%s:%d: %s (%s)", file, line, cond, detail != NULL ? detail : "");
}

int main(void)
{
	lg_assert_set_handler(assert_failed);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_then_beats_every_third_of_the_shortest_lease),
		cmocka_unit_test(idle_session_beats_once_a_day_to_outlive_its_ttl),
		cmocka_unit_test(shorter_member_joining_beats_at_once),
		cmocka_unit_test(answer_in_time_extends_to_send_plus_lease),
		cmocka_unit_test(answer_after_an_end_is_sticky_while_later_ends_are_extended),
		cmocka_unit_test(delayed_beat_extends_from_its_send),
		cmocka_unit_test(lost_answer_then_a_retried_beat),
		cmocka_unit_test(beat_applied_but_its_answer_lost_then_retried),
		cmocka_unit_test(beat_retried_by_the_store_refused_by_itself),
		cmocka_unit_test(retries_stop_when_no_member_would_see_them),
		cmocka_unit_test(session_marked_dead_ends_every_member),
		cmocka_unit_test(session_item_deleted_ends_every_member),
		cmocka_unit_test(table_gone_ends_every_member),
		cmocka_unit_test(revseq_pending_lets_leases_expire_on_time),
		cmocka_unit_test(revseq_acknowledged_extends_again),
		cmocka_unit_test(acquire_answered_out_of_order_ends_by_its_own_send),
		cmocka_unit_test(join_too_far_out_of_order_ends_earlier_never_later),
		cmocka_unit_test(create_retried_after_an_error),
		cmocka_unit_test(many_members_beat_in_o_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
