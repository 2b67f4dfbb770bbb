/*
 * lt_swatch: a waiter's judgement of a lock held in session mode, one rule
 * at a time, on plain numbers (the read's return time is a number: no
 * clock). Each case is a sequence of reads and the verdict each must get;
 * every due verdict's conditions are checked against what the read showed.
 * Then bounds, the poll interval, and a property: a simulated holder
 * (heartbeats every third of its lease, answers delayed or lost) is never
 * taken over while its own clock counts the lease as held.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/lt_swatch.h"
#include "lib/base/lg_assert.h"

/* The cases override HELD's defaults field by field. */
#pragma GCC diagnostic ignored "-Woverride-init"

#define L  30000 /* the lease of most cases */
#define K1 "SESSION#r1#0123456789abcdef0123456789abcdef"
#define K2 "SESSION#r2#fedcba9876543210fedcba9876543210"

enum sk { S_ABSENT, S_LIVE, S_DEAD };

struct step {
	int64_t at;	   /* the read returned */
	int64_t lag;	   /* it was sent this much before */
	bool partial;	   /* not counted */
	const char *owner; /* NULL: free */
	const char *rvn;   /* the lock's */
	const char *sess;  /* the lock's session, NULL: none */
	int64_t slease;	   /* 0: L */
	const char *sread; /* the session read, NULL: the lock's */
	enum sk sk;	   /* the session item as read */
	const char *srvn;  /* its rvn */
	int64_t smax;	   /* its maxLeaseMs, 0: L */
	enum lt_swatch_verdict want;
	unsigned rs; /* the restarts expected, when check_rs */
	bool check_rs;
};

struct scase {
	const char *what;
	struct step steps[8];
};

/* A lock held by o1 with rvn r1 under K1, its session live with rvn s1. */
#define HELD(t, ...)                                                                               \
	{                                                                                          \
		.at = (t), .owner = "o1", .rvn = "r1", .sess = K1, .sk = S_LIVE, .srvn = "s1",     \
		__VA_ARGS__                                                                        \
	}
#define RS(bits) .rs = (bits), .check_rs = true

static void build(const struct step *st, struct lt_swatch_read *r)
{
	memset(r, 0, sizeof(*r));
	r->counted = !st->partial;
	r->returned_ms = st->at;
	r->sent_ms = st->at - st->lag;
	r->lock_exists = st->owner != NULL;
	r->owner = st->owner;
	r->rvn = st->rvn;
	r->session = st->sess;
	r->slease_ms = st->slease ? st->slease : L;
	r->session_read = st->sread ? st->sread : st->sess;
	r->sess.exists = st->sk != S_ABSENT;
	if (r->sess.exists) {
		snprintf(r->sess.type, sizeof(r->sess.type), "SESSION");
		snprintf(r->sess.rvn, sizeof(r->sess.rvn), "%s", st->srvn ? st->srvn : "");
		r->sess.max_lease_ms = st->smax ? st->smax : L;
		r->sess.has_dead = st->sk == S_DEAD;
		if (r->sess.has_dead)
			snprintf(r->sess.dead, sizeof(r->sess.dead), "killer");
	}
}

/* A due verdict carries what the read it came from showed. */
static void check_conditions(const struct step *st, const struct lt_swatch_out *o)
{
	assert_string_equal(o->owner, st->owner);
	assert_string_equal(o->rvn, st->rvn);
	assert_string_equal(o->session, st->sess);
	enum lt_swatch_check want = st->sk == S_DEAD	 ? LT_SWATCH_CHECK_NONE
				    : st->sk == S_ABSENT ? LT_SWATCH_CHECK_ABSENT
							 : LT_SWATCH_CHECK_RVN;
	assert_int_equal(o->check, want);
	if (want == LT_SWATCH_CHECK_RVN)
		assert_string_equal(o->session_rvn, st->srvn);
	else
		assert_null(o->session_rvn);
}

/* The zeroed steps after a case's last. */
static bool is_end(const struct step *st)
{
	return st->at == 0 && st->owner == NULL && !st->partial && st->want == LT_SWATCH_WAIT;
}

static int asserts_failed;
static void count_assert(const char *file, int line, const char *cond, const char *detail)
{
	asserts_failed++;
}

static void run_case(const struct scase *c)
{
	struct lt_swatch w;
	lt_swatch_init(&w);
	lg_assert_handler prev = lg_assert_set_handler(count_assert);
	asserts_failed = 0;
	for (int i = 0; i < 8 && !is_end(&c->steps[i]); i++) {
		const struct step *st = &c->steps[i];
		struct lt_swatch_read r;
		struct lt_swatch_out o;
		build(st, &r);
		enum lt_swatch_verdict v = lt_swatch_feed(&w, &r, &o);
		if (v != st->want || (st->check_rs && w.restarted != st->rs))
			print_message(
				"case \"%s\", read %d at %lld: verdict %d (want %d), restarted "
				"%#x (want %#x), state %s\n",
				c->what, i, (long long)st->at, v, st->want, w.restarted, st->rs,
				lt_swatch_state_name(w.state));
		assert_int_equal(v, st->want);
		assert_int_equal(o.verdict, v);
		if (st->check_rs)
			assert_int_equal(w.restarted, st->rs);
		if (v == LT_SWATCH_KILL || v == LT_SWATCH_TAKEOVER_TX || v == LT_SWATCH_TAKEOVER)
			check_conditions(st, &o);
	}
	lg_assert_set_handler(prev);
	assert_int_equal(asserts_failed, 0);
}

static void run_cases(const struct scase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		run_case(&cases[i]);
}

/* The whole watch restarts on another owner, another session, a free
 * lock; each count restarts on a change of its own value only. */
static const struct scase restarts[] = {
	{"another owner restarts the session's count too",
	 {HELD(0, RS(LT_SWATCH_RS_FIRST)),
	  HELD(L / 2, .owner = "o2", .rvn = "r2", RS(LT_SWATCH_RS_OWNER)),
	  HELD(L, .owner = "o2", .rvn = "r2", RS(0)),
	  HELD(L / 2 + L - 1, .owner = "o2", .rvn = "r2"),
	  HELD(L / 2 + L, .owner = "o2", .rvn = "r2", .want = LT_SWATCH_KILL)}},
	/* rvns are compared within one session only: K2's item showing the
	 * same rvn string as K1's is a new value all the same */
	{"another session restarts the watch",
	 {HELD(0), HELD(L / 2, .sess = K2, RS(LT_SWATCH_RS_SESSION)), HELD(L, .sess = K2),
	  HELD(L / 2 + L, .sess = K2, .want = LT_SWATCH_KILL)}},
	{"a free lock restarts the watch",
	 {HELD(0),
	  {.at = L / 2, .want = LT_SWATCH_FREE, RS(LT_SWATCH_RS_FREE)},
	  HELD(L / 2 + 1, RS(LT_SWATCH_RS_OWNER | LT_SWATCH_RS_SESSION)),
	  HELD(L),
	  HELD(L / 2 + 1 + L, .want = LT_SWATCH_KILL)}},
	{"the lock's rvn changed: its count restarts (absent session)",
	 {HELD(0, .sk = S_ABSENT),
	  HELD(L / 2, .rvn = "r2", .sk = S_ABSENT, RS(LT_SWATCH_RS_LOCK_RVN)),
	  HELD(L, .rvn = "r2", .sk = S_ABSENT, RS(0)),
	  HELD(L / 2 + L - 1, .rvn = "r2", .sk = S_ABSENT),
	  HELD(L / 2 + L, .rvn = "r2", .sk = S_ABSENT, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"the lock's rvn changed: the session's count goes on",
	 {HELD(0), HELD(L / 2, .rvn = "r2", RS(LT_SWATCH_RS_LOCK_RVN)),
	  HELD(L, .rvn = "r2", .want = LT_SWATCH_KILL)}},
	{"the session's rvn changed: its count restarts",
	 {HELD(0), HELD(L / 2, .srvn = "s2", RS(LT_SWATCH_RS_SESS_RVN)), HELD(L, .srvn = "s2"),
	  HELD(L / 2 + L - 1, .srvn = "s2"),
	  HELD(L / 2 + L, .srvn = "s2", .want = LT_SWATCH_KILL)}},
	{"the session's rvn changed: no takeover on the old count",
	 {HELD(0), HELD(L, .want = LT_SWATCH_KILL), HELD(L + 1, .srvn = "s2"),
	  HELD(L + 2, .srvn = "s2"), HELD(2 * L + 1, .srvn = "s2", .want = LT_SWATCH_KILL)}},
	{"the session appeared: its count restarts",
	 {HELD(0, .sk = S_ABSENT), HELD(L / 2, RS(LT_SWATCH_RS_SESS_APPEARED)), HELD(L),
	  HELD(L / 2 + L, .want = LT_SWATCH_KILL)}},
	{"the session disappeared: its absence counts from then",
	 {HELD(0), HELD(L / 2, .sk = S_ABSENT, RS(LT_SWATCH_RS_SESS_GONE)), HELD(L, .sk = S_ABSENT),
	  HELD(L / 2 + L - 1, .sk = S_ABSENT),
	  HELD(L / 2 + L, .sk = S_ABSENT, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"a dead mark that vanished: the session's count restarts",
	 {HELD(0, .sk = S_DEAD), HELD(L / 2, RS(LT_SWATCH_RS_SESS_REVIVED)), HELD(L),
	  HELD(L / 2 + L, .want = LT_SWATCH_KILL)}},
};

static void test_restarts(void **state)
{
	run_cases(restarts, sizeof(restarts) / sizeof(restarts[0]));
}

/* Counting starts when the first read returned, at the exact lease. */
static const struct scase counting[] = {
	{"counting starts when the first read returned, not when it was sent",
	 {HELD(500, .lag = 500), HELD(L + 499, .lag = 100), HELD(L + 500, .want = LT_SWATCH_KILL)}},
	{"no takeover one ms before the lease, takeover at it (absent session)",
	 {HELD(1000, .sk = S_ABSENT), HELD(1000 + L - 1, .sk = S_ABSENT),
	  HELD(1000 + L, .sk = S_ABSENT, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"no kill one ms before the lease, kill at it",
	 {HELD(1000), HELD(1000 + L - 1), HELD(1000 + L, .want = LT_SWATCH_KILL)}},
	{"the largest lease seen: the lock's sleaseMs over a shorter maxLeaseMs",
	 {HELD(0, .smax = 10000), HELD(10000, .smax = 10000), HELD(L - 1, .smax = 10000),
	  HELD(L, .smax = 10000, .want = LT_SWATCH_KILL)}},
	{"the largest lease seen: the session's maxLeaseMs over a shorter sleaseMs",
	 {HELD(0, .slease = 10000, .sk = S_DEAD, .smax = L),
	  HELD(10000, .slease = 10000, .sk = S_DEAD, .smax = L),
	  HELD(L, .slease = 10000, .sk = S_DEAD, .smax = L, .want = LT_SWATCH_TAKEOVER)}},
	{"the largest lease seen, not the latest: maxLeaseMs shrank",
	 {HELD(0, .slease = 10000), HELD(1000, .slease = 10000, .srvn = "s2", .smax = 10000),
	  HELD(11000, .slease = 10000, .srvn = "s2", .smax = 10000),
	  HELD(1000 + L - 1, .slease = 10000, .srvn = "s2", .smax = 10000),
	  HELD(1000 + L, .slease = 10000, .srvn = "s2", .smax = 10000, .want = LT_SWATCH_KILL)}},
	{"a new owner forgets the old owner's lease",
	 {HELD(0, .slease = 60000, .smax = 60000), HELD(1000, .owner = "o2", .rvn = "r2"),
	  HELD(1000 + L, .owner = "o2", .rvn = "r2", .want = LT_SWATCH_KILL)}},
};

static void test_counting(void **state)
{
	run_cases(counting, sizeof(counting) / sizeof(counting[0]));
}

/* KILL once the session's rvn stood still; the transaction if the kill did
 * not land; single-item takeovers of a dead session's locks. */
static const struct scase verdicts[] = {
	{"kill offered once, then the transaction on the same rvn",
	 {HELD(0), HELD(L, .want = LT_SWATCH_KILL), HELD(L + 10, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"kill offered, the lock's rvn younger: the transaction waits for it",
	 {HELD(0), HELD(L / 2, .rvn = "r2"), HELD(L, .rvn = "r2", .want = LT_SWATCH_KILL),
	  HELD(L + 10, .rvn = "r2"), HELD(L / 2 + L - 1, .rvn = "r2"),
	  HELD(L / 2 + L, .rvn = "r2", .want = LT_SWATCH_TAKEOVER_TX)}},
	/* (a larger sleaseMs under the same rvn: no holder writes that, but
	 * the transaction needs both counts over the largest lease all the same) */
	{"kill offered, then a larger lease: the transaction waits for the session's count too",
	 {HELD(0, .sk = S_ABSENT), HELD(1000), HELD(1000 + L, .want = LT_SWATCH_KILL),
	  HELD(1010 + L, .slease = L + 500), HELD(1499 + L, .slease = L + 500),
	  HELD(1500 + L, .slease = L + 500, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"kill offered, then a heartbeat: no transaction, the count restarts",
	 {HELD(0), HELD(L, .want = LT_SWATCH_KILL), HELD(L + 10, .srvn = "s2"),
	  HELD(2 * L + 9, .srvn = "s2"), HELD(2 * L + 10, .srvn = "s2", .want = LT_SWATCH_KILL)}},
	{"kill offered, then another owner: no transaction",
	 {HELD(0), HELD(L, .want = LT_SWATCH_KILL), HELD(L + 10, .owner = "o2", .rvn = "r2"),
	  HELD(L + 20, .owner = "o2", .rvn = "r2")}},
	{"killed: the next read sees it dead, single-item takeover",
	 {HELD(0), HELD(L, .want = LT_SWATCH_KILL),
	  HELD(L + 10, .sk = S_DEAD, .want = LT_SWATCH_TAKEOVER)}},
	{"dead at the first read: no takeover before the lock's rvn stood a lease",
	 {HELD(0, .sk = S_DEAD), HELD(L - 1, .sk = S_DEAD),
	  HELD(L, .sk = S_DEAD, .want = LT_SWATCH_TAKEOVER)}},
	{"dead: a lock rvn written after the watch began is its own proof",
	 {HELD(0), HELD(L / 2, .sk = S_DEAD), HELD(L / 2 + 1, .rvn = "r2", .sk = S_DEAD),
	  HELD(L, .rvn = "r2", .sk = S_DEAD), HELD(L / 2 + L, .rvn = "r2", .sk = S_DEAD),
	  HELD(L / 2 + 1 + L, .rvn = "r2", .sk = S_DEAD, .want = LT_SWATCH_TAKEOVER)}},
	{"dead later: the lock's count runs from the first read",
	 {HELD(0), HELD(L / 2, .sk = S_DEAD, RS(0)), HELD(L - 1, .sk = S_DEAD),
	  HELD(L, .sk = S_DEAD, .want = LT_SWATCH_TAKEOVER)}},
	{"absent session: the transaction checks its absence",
	 {HELD(0, .sk = S_ABSENT), HELD(L, .sk = S_ABSENT, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"a lock without a session is not this watch's",
	 {HELD(0, .sess = NULL, .want = LT_SWATCH_PER_LEASE),
	  HELD(L, .sess = NULL, .want = LT_SWATCH_PER_LEASE), HELD(L + 1, RS(LT_SWATCH_RS_SESSION)),
	  HELD(2 * L + 1, .want = LT_SWATCH_KILL)}},
	{"an absent lock item is free",
	 {{.at = 5, .want = LT_SWATCH_FREE, RS(LT_SWATCH_RS_FIRST)},
	  {.at = 6, .owner = "", .rvn = "r1", .want = LT_SWATCH_FREE}}},
};

static void test_verdicts(void **state)
{
	run_cases(verdicts, sizeof(verdicts) / sizeof(verdicts[0]));
}

/* Reads that do not count, and reads of another session's item. */
static const struct scase partial[] = {
	{"a partial first read does not start the count",
	 {HELD(0, .partial = true), HELD(1000), HELD(L), HELD(1000 + L, .want = LT_SWATCH_KILL)}},
	{"a partial read does not restart the count",
	 {HELD(0), HELD(L / 2, .partial = true, .owner = "o2", .rvn = "r2", .sk = S_ABSENT),
	  HELD(L, .want = LT_SWATCH_KILL)}},
	{"a partial read gives no verdict, even when due",
	 {HELD(0, .sk = S_ABSENT), HELD(L, .partial = true, .sk = S_ABSENT),
	  HELD(L + 1, .sk = S_ABSENT, .want = LT_SWATCH_TAKEOVER_TX)}},
	{"the read asked for another session: the session's count waits for its read",
	 {HELD(0, .sread = K2), HELD(1000, RS(LT_SWATCH_RS_SESS_READ)), HELD(L),
	  HELD(1000 + L, .want = LT_SWATCH_KILL)}},
	{"the lock names another session than the one read",
	 {HELD(0), HELD(1000, .sess = K2, .sread = K1), HELD(2000, .sess = K2),
	  HELD(1000 + L, .sess = K2), HELD(2000 + L, .sess = K2, .want = LT_SWATCH_KILL)}},
};

static void test_partial(void **state)
{
	run_cases(partial, sizeof(partial) / sizeof(partial[0]));
}

/* Reads out of bounds: BAD with a message, and the watch starts again. */
static void test_bounds(void **state)
{
	char long_id[STORE_ID_MAX + 2];
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	static const char *bad_keys[] = {
		"SESSION#r1#0123456789abcdef0123456789abcde",	/* 31 hex */
		"SESSION#r1#0123456789ABCDEF0123456789abcdef",	/* upper case */
		"SESSION##0123456789abcdef0123456789abcdef",	/* no replica */
		"SESSION#r#1#0123456789abcdef0123456789abcdef", /* '#' in it */
		"LOCK#r1#0123456789abcdef0123456789abcdef",
		"SESSION#r1 0123456789abcdef0123456789abcdef0",
		"SESSION#r 1#0123456789abcdef0123456789abcdef", /* a space */
	};
	struct step good = HELD(100);
	struct step bads[16];
	int n = 0;
	for (size_t i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++)
		bads[n++] = (struct step)HELD(100, .sess = bad_keys[i]);
	bads[n++] = (struct step)HELD(100, .owner = long_id);
	bads[n++] = (struct step)HELD(100, .rvn = long_id);
	bads[n++] = (struct step)HELD(100, .rvn = "");
	bads[n++] = (struct step)HELD(100, .srvn = "");
	bads[n++] = (struct step)HELD(100, .slease = 999);
	bads[n++] = (struct step)HELD(100, .slease = 86400001);
	bads[n++] = (struct step)HELD(100, .smax = 999);
	bads[n++] = (struct step)HELD(100, .lag = 101); /* sent before 0 */
	bads[n++] = (struct step)HELD(50);		/* returned before the last */
	for (int i = 0; i < n; i++) {
		struct lt_swatch w;
		struct lt_swatch_read r;
		struct lt_swatch_out o;
		lt_swatch_init(&w);
		build(&good, &r);
		assert_int_equal(lt_swatch_feed(&w, &r, &o), LT_SWATCH_WAIT);
		build(&bads[i], &r);
		assert_int_equal(lt_swatch_feed(&w, &r, &o), LT_SWATCH_BAD);
		assert_non_null(o.message);
		assert_true(o.message[0] != '\0');
		assert_int_equal(w.state, LT_SW_IDLE);
		/* the next good read starts the watch again */
		struct step next = HELD(200);
		build(&next, &r);
		assert_int_equal(lt_swatch_feed(&w, &r, &o), LT_SWATCH_WAIT);
		assert_int_equal(w.restarted, LT_SWATCH_RS_FIRST);
		next.at = 200 + L - 1;
		build(&next, &r);
		assert_int_equal(lt_swatch_feed(&w, &r, NULL), LT_SWATCH_WAIT);
	}
	/* an item at the session's key that is not a session */
	struct lt_swatch w;
	struct lt_swatch_read r;
	lt_swatch_init(&w);
	build(&good, &r);
	snprintf(r.sess.type, sizeof(r.sess.type), "LOCK");
	assert_int_equal(lt_swatch_feed(&w, &r, NULL), LT_SWATCH_BAD);
	assert_non_null(strstr(w.message, "not a SESSION"));
	/* the longest replica id is a key */
	char key[STORE_SESSION_KEY_MAX + 2];
	snprintf(key, sizeof(key), "SESSION#%0*d#0123456789abcdef0123456789abcdef",
		 STORE_SESSION_REPLICA_MAX, 7);
	struct step longest = HELD(300, .sess = key);
	build(&longest, &r);
	assert_int_equal(lt_swatch_feed(&w, &r, NULL), LT_SWATCH_WAIT);
	snprintf(key, sizeof(key), "SESSION#%0*d#0123456789abcdef0123456789abcdef",
		 STORE_SESSION_REPLICA_MAX + 1, 7);
	build(&longest, &r);
	assert_int_equal(lt_swatch_feed(&w, &r, NULL), LT_SWATCH_BAD);
}

/* A third of the lease seen (at most 10 s), sooner when a count falls
 * due, at once while the lock's session is unread. */
static void test_poll_ms(void **state)
{
	struct lt_swatch w;
	struct lt_swatch_read r;
	lt_swatch_init(&w);
	assert_int_equal(lt_swatch_poll_ms(&w, 0), 0);
	struct step st = HELD(0, .slease = 6000, .smax = 6000);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	assert_int_equal(lt_swatch_poll_ms(&w, 0), 2000);
	assert_int_equal(lt_swatch_poll_ms(&w, 5000), 1000); /* due at 6000 */
	assert_int_equal(lt_swatch_poll_ms(&w, 7000), 0);
	st = (struct step)HELD(100, .slease = 6000, .smax = 60000);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	assert_int_equal(lt_swatch_poll_ms(&w, 100), 10000); /* capped */
	/* dead: the lock's count paces it */
	lt_swatch_init(&w);
	st = (struct step)HELD(0, .sk = S_DEAD);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	st = (struct step)HELD(L - 3000, .rvn = "r2", .sk = S_DEAD);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	assert_int_equal(lt_swatch_poll_ms(&w, L - 3000), 10000);
	assert_int_equal(lt_swatch_poll_ms(&w, 2 * L - 4000), 1000);
	/* both counts: the later one */
	lt_swatch_init(&w);
	st = (struct step)HELD(0, .sk = S_ABSENT);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	st = (struct step)HELD(25000, .rvn = "r2", .sk = S_ABSENT);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	assert_int_equal(lt_swatch_poll_ms(&w, 29000), 10000);
	/* unread: at once */
	st = (struct step)HELD(26000, .rvn = "r2", .sess = K2, .sread = K1);
	build(&st, &r);
	lt_swatch_feed(&w, &r, NULL);
	assert_int_equal(w.state, LT_SW_UNREAD);
	assert_int_equal(lt_swatch_poll_ms(&w, 26000), 0);
}

/* --- the property: a simulated holder is never taken over while its own
 * clock counts the lease as held ---
 *
 * One holder acquires a lock at 0 (its lease counted from that send) and
 * heartbeats its session every third of its lease until it crashes (or the
 * run ends), with pauses; each beat may be lost on the way, land late,
 * have its answer delayed or lost. Its end follows "The holder's clock":
 * an answer arriving before the current end extends it to the beat's send
 * + lease; one arriving after it ends the lease for good, as a refusal
 * does. Sometimes the holder acquires the lock again under the same
 * session (a new owner and rvn, its lease counted from that send: the
 * case a dead mark alone must not end), and sometimes the session item is
 * deleted. One waiter polls with
 * lt_swatch (reads applied late, answers late, partial or lost), and acts
 * on its verdicts: KILL and takeover writes land late or never, each
 * conditioned as the verdict says. Every run checks that a takeover that
 * landed at T finds the holder's last end <= T. One clock for both
 * machines: no clock-rate drift is modelled (the rule assumes none). */
#define P_EVENTS 512

enum ev_kind {
	EV_BEAT_SEND,
	EV_BEAT_LAND,
	EV_BEAT_ANSWER,
	EV_SESS_DELETE,
	EV_REACQ_LAND,
	EV_READ_SEND,
	EV_READ_APPLY,
	EV_READ_RETURN,
	EV_WRITE_LAND
};

struct ev {
	int64_t at;
	int seq; /* ties in the order pushed */
	enum ev_kind kind;
	int beat;
};

struct world {
	uint64_t rng;
	int64_t lease, max_lease, horizon, crash, pause_at, pause_len;
	struct ev q[P_EVENTS];
	int nq, seq;
	/* the store */
	char lock_owner[8], lock_rvn[16];
	bool sess_exists, sess_dead;
	char sess_rvn[16];
	int rvn_seq;
	/* the holder: its first lease (owner o1), then o2 once acquired again */
	int64_t end[2]; /* each lease's end on its clock */
	bool lost[2];
	int cur;	  /* the lease its beats extend */
	int64_t reacq_at; /* when it sends the second acquire; -1: never */
	int64_t beat_sent[P_EVENTS];
	bool beat_ok[P_EVENTS];
	int nbeats;
	/* the waiter */
	struct lt_swatch w;
	struct lt_swatch_read rd;
	char rd_owner[8], rd_rvn[16];
	bool done;
	enum lt_swatch_verdict act;
	char c_owner[8], c_rvn[16], c_srvn[16];
	enum lt_swatch_check c_check;
	int64_t taken_at; /* -1: not taken */
	int kills;
};

static uint64_t rnd(struct world *wd)
{
	uint64_t z = (wd->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool chance(struct world *wd, int percent)
{
	return (int)(rnd(wd) % 100) < percent;
}

/* A network delay: mostly 1..50 ms, sometimes up to a lease and a half. */
static int64_t delay(struct world *wd)
{
	if (chance(wd, 12))
		return 1 + (int64_t)(rnd(wd) % (uint64_t)(wd->lease * 3 / 2));
	return 1 + (int64_t)(rnd(wd) % 50);
}

static void push(struct world *wd, int64_t at, enum ev_kind k, int beat)
{
	assert_true(wd->nq < P_EVENTS);
	wd->q[wd->nq++] = (struct ev){.at = at, .seq = wd->seq++, .kind = k, .beat = beat};
}

static struct ev pop(struct world *wd)
{
	int best = 0;
	for (int i = 1; i < wd->nq; i++)
		if (wd->q[i].at < wd->q[best].at ||
		    (wd->q[i].at == wd->q[best].at && wd->q[i].seq < wd->q[best].seq))
			best = i;
	struct ev e = wd->q[best];
	wd->q[best] = wd->q[--wd->nq];
	return e;
}

static void beat_send(struct world *wd, int64_t now)
{
	if (now >= wd->crash || now >= wd->horizon || wd->nbeats >= P_EVENTS)
		return;
	push(wd, now + wd->lease / 3, EV_BEAT_SEND, 0);
	if (now >= wd->pause_at && now < wd->pause_at + wd->pause_len)
		return; /* paused: no beat goes */
	int b = wd->nbeats++;
	wd->beat_sent[b] = now;
	if (!chance(wd, 10))
		push(wd, now + delay(wd), EV_BEAT_LAND, b);
}

static void beat_land(struct world *wd, int64_t now, int b)
{
	wd->beat_ok[b] = wd->sess_exists && !wd->sess_dead;
	if (wd->beat_ok[b])
		snprintf(wd->sess_rvn, sizeof(wd->sess_rvn), "s%d", ++wd->rvn_seq);
	if (!chance(wd, 10))
		push(wd, now + delay(wd), EV_BEAT_ANSWER, b);
}

/* "The holder's clock": only an answer before the current end extends. */
static void beat_answer(struct world *wd, int64_t now, int b)
{
	int c = wd->cur;
	if (wd->lost[c])
		return;
	if (!wd->beat_ok[b] || now >= wd->end[c]) {
		wd->lost[c] = true;
		return;
	}
	if (wd->beat_sent[b] + wd->lease > wd->end[c])
		wd->end[c] = wd->beat_sent[b] + wd->lease;
}

/* The holder's second acquire (sent at reacq_at) lands: a hand-off to
 * itself, conditioned on its own owner; the new lease counts from the
 * send, whatever the session's state (an acquire does not read it). */
static void reacq_land(struct world *wd, int64_t now)
{
	if (strcmp(wd->lock_owner, "o1") != 0)
		return;
	snprintf(wd->lock_owner, sizeof(wd->lock_owner), "o2");
	snprintf(wd->lock_rvn, sizeof(wd->lock_rvn), "r%d", ++wd->rvn_seq);
	if (wd->end[0] > now)
		wd->end[0] = now; /* o1 ends as the write lands */
	wd->cur = 1;
	wd->end[1] = wd->reacq_at + wd->lease;
}

static void read_send(struct world *wd, int64_t now)
{
	if (wd->done || now >= wd->horizon)
		return;
	memset(&wd->rd, 0, sizeof(wd->rd));
	wd->rd.sent_ms = now;
	if (chance(wd, 5))
		push(wd, now + 2 * wd->lease, EV_READ_SEND, 0); /* lost: timed out */
	else
		push(wd, now + delay(wd), EV_READ_APPLY, 0);
}

/* The store as the read sees it at now. */
static void read_apply(struct world *wd, int64_t now)
{
	struct lt_swatch_read *r = &wd->rd;
	snprintf(wd->rd_owner, sizeof(wd->rd_owner), "%s", wd->lock_owner);
	snprintf(wd->rd_rvn, sizeof(wd->rd_rvn), "%s", wd->lock_rvn);
	r->lock_exists = true;
	r->owner = wd->rd_owner;
	r->rvn = wd->rd_rvn;
	r->session = K1;
	r->session_read = K1;
	r->slease_ms = wd->lease;
	r->sess.exists = wd->sess_exists;
	if (wd->sess_exists) {
		snprintf(r->sess.type, sizeof(r->sess.type), "SESSION");
		snprintf(r->sess.rvn, sizeof(r->sess.rvn), "%s", wd->sess_rvn);
		r->sess.max_lease_ms = wd->max_lease;
		r->sess.has_dead = wd->sess_dead;
	}
	r->counted = !chance(wd, 10);
	push(wd, now + delay(wd), EV_READ_RETURN, 0);
}

static void read_return(struct world *wd, int64_t now)
{
	struct lt_swatch_out o;
	wd->rd.returned_ms = now;
	enum lt_swatch_verdict v = lt_swatch_feed(&wd->w, &wd->rd, &o);
	assert_int_not_equal(v, LT_SWATCH_BAD);
	assert_int_not_equal(v, LT_SWATCH_PER_LEASE);
	if (v == LT_SWATCH_KILL || v == LT_SWATCH_TAKEOVER_TX || v == LT_SWATCH_TAKEOVER) {
		wd->act = v;
		wd->c_check = o.check;
		snprintf(wd->c_owner, sizeof(wd->c_owner), "%s", o.owner);
		snprintf(wd->c_rvn, sizeof(wd->c_rvn), "%s", o.rvn);
		snprintf(wd->c_srvn, sizeof(wd->c_srvn), "%s", o.session_rvn ? o.session_rvn : "");
		int64_t land = now + delay(wd);
		if (!chance(wd, 5))
			push(wd, land, EV_WRITE_LAND, 0);
		push(wd, chance(wd, 5) ? now + 2 * wd->lease : land + delay(wd), EV_READ_SEND, 0);
		return;
	}
	int64_t p = lt_swatch_poll_ms(&wd->w, now);
	push(wd, now + (v == LT_SWATCH_FREE ? 100 : p), EV_READ_SEND, 0);
}

/* The waiter's write lands: as conditioned. */
static void write_land(struct world *wd, int64_t now)
{
	if (wd->act == LT_SWATCH_KILL) {
		if (wd->sess_exists && !wd->sess_dead && strcmp(wd->sess_rvn, wd->c_srvn) == 0) {
			wd->sess_dead = true;
			wd->kills++;
		}
		return;
	}
	bool lock =
		strcmp(wd->lock_owner, wd->c_owner) == 0 && strcmp(wd->lock_rvn, wd->c_rvn) == 0;
	bool sess = wd->c_check == LT_SWATCH_CHECK_NONE ||
		    (wd->c_check == LT_SWATCH_CHECK_ABSENT && !wd->sess_exists) ||
		    (wd->c_check == LT_SWATCH_CHECK_RVN && wd->sess_exists &&
		     strcmp(wd->sess_rvn, wd->c_srvn) == 0);
	if (!lock || !sess || wd->done)
		return;
	wd->done = true;
	wd->taken_at = now;
	snprintf(wd->lock_owner, sizeof(wd->lock_owner), "w");
	snprintf(wd->lock_rvn, sizeof(wd->lock_rvn), "w%d", ++wd->rvn_seq);
}

static void world_init(struct world *wd, uint64_t seed)
{
	memset(wd, 0, sizeof(*wd));
	wd->rng = seed;
	wd->lease = 1000 + (int64_t)(rnd(wd) % 29001);
	wd->max_lease = chance(wd, 50) ? wd->lease : wd->lease + (int64_t)(rnd(wd) % 10000);
	wd->horizon = 12 * wd->lease;
	wd->crash = chance(wd, 30) ? wd->horizon : (int64_t)(rnd(wd) % (uint64_t)(6 * wd->lease));
	wd->pause_at = (int64_t)(rnd(wd) % (uint64_t)(6 * wd->lease));
	wd->pause_len = chance(wd, 50) ? 0 : (int64_t)(rnd(wd) % (uint64_t)(2 * wd->lease));
	snprintf(wd->lock_owner, sizeof(wd->lock_owner), "o1");
	snprintf(wd->lock_rvn, sizeof(wd->lock_rvn), "r1");
	wd->sess_exists = true;
	snprintf(wd->sess_rvn, sizeof(wd->sess_rvn), "s0");
	wd->end[0] = wd->lease; /* the acquire, sent at 0 */
	wd->taken_at = -1;
	wd->reacq_at = -1;
	if (chance(wd, 30)) {
		wd->reacq_at = (int64_t)(rnd(wd) % (uint64_t)(4 * wd->lease));
		if (wd->reacq_at < wd->crash)
			push(wd, wd->reacq_at + delay(wd), EV_REACQ_LAND, 0);
	}
	lt_swatch_init(&wd->w);
	push(wd, wd->lease / 3, EV_BEAT_SEND, 0);
	push(wd, (int64_t)(rnd(wd) % (uint64_t)wd->lease), EV_READ_SEND, 0);
	if (chance(wd, 15))
		push(wd, (int64_t)(rnd(wd) % (uint64_t)(8 * wd->lease)), EV_SESS_DELETE, 0);
}

static void world_run(struct world *wd)
{
	while (wd->nq > 0) {
		struct ev e = pop(wd);
		switch (e.kind) {
		case EV_BEAT_SEND:
			beat_send(wd, e.at);
			break;
		case EV_BEAT_LAND:
			beat_land(wd, e.at, e.beat);
			break;
		case EV_BEAT_ANSWER:
			beat_answer(wd, e.at, e.beat);
			break;
		case EV_REACQ_LAND:
			reacq_land(wd, e.at);
			break;
		case EV_SESS_DELETE:
			wd->sess_exists = false;
			wd->sess_dead = false;
			break;
		case EV_READ_SEND:
			read_send(wd, e.at);
			break;
		case EV_READ_APPLY:
			read_apply(wd, e.at);
			break;
		case EV_READ_RETURN:
			read_return(wd, e.at);
			break;
		case EV_WRITE_LAND:
			write_land(wd, e.at);
			break;
		}
	}
}

#define P_SEEDS 20000

static void test_property_holder_never_overlapped(void **state)
{
	int taken = 0, killed = 0, by_kind[3] = {0}, alive_kept = 0, second = 0;
	static struct world wd;
	for (uint64_t seed = 1; seed <= P_SEEDS; seed++) {
		world_init(&wd, seed);
		world_run(&wd);
		int64_t end = wd.end[strcmp(wd.c_owner, "o2") == 0];
		if (wd.taken_at >= 0 && end > wd.taken_at)
			fail_msg("seed %llu: %s taken over at %lld, its lease ends at %lld on the "
				 "holder's clock (lease %lld)",
				 (unsigned long long)seed, wd.c_owner, (long long)wd.taken_at,
				 (long long)end, (long long)wd.lease);
		if (wd.taken_at >= 0) {
			taken++;
			by_kind[wd.c_check]++;
			second += strcmp(wd.c_owner, "o2") == 0;
		} else if (wd.crash >= wd.horizon && wd.pause_len == 0) {
			alive_kept++;
		}
		killed += wd.kills > 0;
	}
	print_message("%d runs: %d taken over (single-item %d, transaction on the rvn %d, on "
		      "absence %d; %d of a second acquire), %d sessions killed, %d never taken "
		      "from a live holder\n",
		      P_SEEDS, taken, by_kind[LT_SWATCH_CHECK_NONE], by_kind[LT_SWATCH_CHECK_RVN],
		      by_kind[LT_SWATCH_CHECK_ABSENT], second, killed, alive_kept);
	/* not vacuous: every path was taken many times */
	assert_true(by_kind[LT_SWATCH_CHECK_NONE] > P_SEEDS / 20);
	assert_true(by_kind[LT_SWATCH_CHECK_RVN] > 10);
	assert_true(by_kind[LT_SWATCH_CHECK_ABSENT] > P_SEEDS / 100);
	assert_true(killed > P_SEEDS / 20);
	assert_true(second > P_SEEDS / 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restarts),
		cmocka_unit_test(test_counting),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_poll_ms),
		cmocka_unit_test(test_property_holder_never_overlapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
