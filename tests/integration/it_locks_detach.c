/*
 * it_locks_detach: detached leases (LOCK.ACQUIRE ... DETACH) and
 * LOCK.FORCE-RELEASE on one gateway of the embedded store, with hiredis
 * (RESP2) and rawresp (RESP3, waits): a detached lease outlives its
 * connection, is released and renewed by (name, token) from another, and
 * left alone it ends after a whole lease; a forced release answers
 * -LOST forced to its holder (and pushes it to a RESP3 holder). Two
 * gateways on one table: it_replicas.
 *
 * Leases are short (1500 ms) so that a lease runs out within a test;
 * lower time bounds are the rules' own less a timer's lateness, upper
 * bounds add SLACK_MS for a shared machine.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

enum { LEASE = 1500, POLL = LEASE / 3, LATE_MS = 50, SLACK_MS = 1500 };

static void start(struct gw *g)
{
	gw_start(g, NULL, "--holder-label", "gw-a", NULL);
}

/* A RESP3 connection (replies rendered as rawresp.h says). */
static struct raw *r3_open(const struct gw *g)
{
	struct raw *r = raw_open(g->port);
	raw_send(r, "HELLO 3");
	assert_non_null(strstr(raw_reply(r, 5000), "\"proto\": :3"));
	return r;
}

/* Checks LOCK.STATE's "mine" of a detached lease: the string "detached",
 * after the same fields as ever. */
static void expect_detached_state(redisContext *c, const char *name, long long token,
				  long long lease_ms)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 12);
	assert_string_equal(r->element[0]->str, "held");
	assert_int_equal(r->element[1]->integer, 1);
	assert_string_equal(r->element[4]->str, "lease-ms");
	assert_int_equal(r->element[5]->integer, lease_ms);
	assert_string_equal(r->element[6]->str, "fencing-token");
	assert_int_equal(r->element[7]->integer, token);
	assert_string_equal(r->element[8]->str, "mine");
	assert_int_equal(r->element[9]->type, REDIS_REPLY_STRING);
	assert_string_equal(r->element[9]->str, "detached");
	freeReplyObject(r);
}

/* A detached lease stays held when its connection closes, belongs to no
 * connection (not even the one that took it), and is released by
 * (name, token) from another connection. */
static void test_detach_survives_close(void **state)
{
	struct gw g;
	start(&g);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE d 5000 DETACH");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t = r->integer;
	freeReplyObject(r);
	gw_expect_int(a, 0, "LOCK.RELEASE d"); /* the connection holds nothing */
	expect_detached_state(a, "d", t, 5000);
	redisFree(a); /* a session lease would be released here */
	gw_expect_nil(b, "LOCK.ACQUIRE d 5000");
	expect_detached_state(b, "d", t, 5000);
	gw_expect_int(b, 0, "LOCK.RELEASE d %lld", t + 1);
	gw_expect_int(b, 1, "LOCK.RELEASE d %lld", t);
	gw_expect_int(b, 0, "LOCK.RELEASE d %lld", t); /* once */
	lh_expect_state(b, "d", 0, NULL, 0, t, 0);
	assert_int_equal(lh_acquire(b, "d", 5000), t + 1);
	lh_expect_state(b, "d", 1, "gw-a", 5000, t + 1, 1); /* a session lease: mine */
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* DETACH goes anywhere among the options, with WAIT and HOLDER; it is no
 * option of LEADER.CAMPAIGN. */
static void test_detach_arguments(void **state)
{
	struct gw g;
	start(&g);
	redisContext *a = gw_connect(&g);
	gw_expect_int(a, 1, "LOCK.ACQUIRE o1 5000 DETACH WAIT 100 HOLDER job-7");
	gw_expect_int(a, 1, "LOCK.ACQUIRE o2 5000 WAIT 100 detach");
	gw_expect_int(a, 1, "LOCK.ACQUIRE o3 5000 HOLDER job-8 DETACH");
	gw_expect_int(a, 0, "LOCK.RELEASE o1"); /* detached, all three */
	gw_expect_int(a, 0, "LOCK.RELEASE o2");
	gw_expect_int(a, 0, "LOCK.RELEASE o3");
	redisReply *r = gw_cmd(a, "LOCK.STATE o1");
	assert_string_equal(r->element[3]->str, "job-7");
	assert_string_equal(r->element[9]->str, "detached");
	freeReplyObject(r);
	gw_expect_err(a, "ERR WAIT must be", "LOCK.ACQUIRE o4 5000 WAIT DETACH");
	gw_expect_err(a, "ERR syntax error", "LOCK.ACQUIRE o4 5000 DETACHED");
	gw_expect_err(a, "ERR syntax error", "LEADER.CAMPAIGN o4 5000 DETACH");
	gw_expect_nil(a, "LOCK.STATE o4");
	redisFree(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Detached leases are no connection's: they do not count against
 * --max-leases-per-session. */
static void test_detach_not_counted(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--max-leases-per-session", "1", NULL);
	redisContext *a = gw_connect(&g);
	lh_acquire(a, "c1", 5000);
	gw_expect_err(a, "ERR max leases per connection reached (1)", "LOCK.ACQUIRE c2 5000");
	gw_expect_int(a, 1, "LOCK.ACQUIRE c2 5000 DETACH");
	gw_expect_int(a, 1, "LOCK.ACQUIRE c3 5000 DETACH");
	redisFree(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Nobody renews a detached lease: a waiting contender gets the lock once
 * a whole lease has passed, not before (and not at the close). */
static void test_detach_ends_after_a_lease(void **state)
{
	struct gw g;
	start(&g);
	redisContext *a = gw_connect(&g);
	long long t0 = gw_now_ms();
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE e %d DETACH", LEASE);
	long long t = r->integer;
	freeReplyObject(r);
	redisFree(a);
	struct raw *w = raw_open(g.port);
	raw_send(w, "LOCK.ACQUIRE e 1500 WAIT 0");
	long long got = raw_int_of(raw_reply(w, LEASE + 2 * POLL + SLACK_MS));
	long long ms = gw_now_ms() - t0;
	printf("# a detached lease of %d ms taken by a waiter after %lld ms\n", LEASE, ms);
	assert_int_equal(got, t + 1);
	assert_true(ms >= LEASE - LATE_MS);
	raw_close(w);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.RENEW name token extends a detached lease, from any connection: a
 * waiter gets nothing while it is renewed, then the lock a lease after the
 * last renewal. */
static void test_detach_renewed_by_token(void **state)
{
	struct gw g;
	start(&g);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE n %d DETACH", LEASE);
	long long t = r->integer;
	freeReplyObject(r);
	redisFree(a);
	struct raw *w = raw_open(g.port);
	raw_send(w, "LOCK.ACQUIRE n 1500 WAIT 0");
	long long last = gw_now_ms();
	for (int i = 0; i < 7; i++) { /* 2.8 s: almost two leases */
		assert_true(raw_quiet(w, 400));
		gw_expect_int(b, 1, "LOCK.RENEW n %lld", t);
		last = gw_now_ms();
	}
	gw_expect_int(b, 0, "LOCK.RENEW n %lld", t + 1);
	expect_detached_state(b, "n", t, LEASE);
	long long got = raw_int_of(raw_reply(w, LEASE + 2 * POLL + SLACK_MS));
	long long ms = gw_now_ms() - last;
	printf("# taken %lld ms after the last renewal by token (lease %d ms)\n", ms, LEASE);
	assert_int_equal(got, t + 1);
	assert_true(ms >= LEASE - LATE_MS);
	gw_expect_int(b, 0, "LOCK.RENEW n %lld", t); /* it has ended */
	raw_close(w);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.FORCE-RELEASE frees whatever holds the lock: 1, or 0 when nothing
 * does; the holder's next command about it answers -LOST forced (once), a
 * RESP3 holder is pushed the loss, and a waiter is served. */
static void test_force_release(void **state)
{
	struct gw g;
	char want[256];
	start(&g);
	redisContext *a = gw_connect(&g), *op = gw_connect(&g);
	struct raw *h3 = r3_open(&g), *w = raw_open(g.port);
	long long t = lh_acquire(a, "f", 5000);
	long long t3 = raw_int(h3, "LOCK.ACQUIRE f3 5000");

	gw_expect_int(op, 1, "LOCK.FORCE-RELEASE f");
	gw_expect_int(op, 0, "LOCK.FORCE-RELEASE f");
	gw_expect_int(op, 0, "LOCK.FORCE-RELEASE nothing");
	lh_expect_state(op, "f", 0, NULL, 0, t, 0);
	gw_expect_err(a, "LOST forced", "LOCK.RENEW f");
	gw_expect_int(a, 0, "LOCK.RENEW f"); /* told once */
	assert_int_equal(lh_acquire(op, "f", 5000), t + 1);

	raw_send(w, "LOCK.ACQUIRE f3 5000 WAIT 0");
	assert_true(raw_quiet(w, 200));
	gw_expect_int(op, 1, "LOCK.FORCE-RELEASE f3");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"f3\", :%lld, \"forced\"]", t3);
	assert_string_equal(raw_reply(h3, 2000), want);
	raw_expect(h3, "LOCK.RELEASE f3", "-LOST forced");
	raw_expect(h3, "LOCK.RELEASE f3", ":0");
	assert_int_equal(raw_int_of(raw_reply(w, 2000)), t3 + 1);

	/* a detached lease too; its token names nothing after */
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE fd 5000 DETACH");
	long long td = r->integer;
	freeReplyObject(r);
	gw_expect_int(op, 1, "LOCK.FORCE-RELEASE fd");
	gw_expect_int(op, 0, "LOCK.RENEW fd %lld", td);
	assert_int_equal(lh_acquire(op, "fd", 5000), td + 1);

	gw_expect_err(op, "ERR wrong number of arguments", "LOCK.FORCE-RELEASE");
	gw_expect_err(op, "ERR wrong number of arguments", "LOCK.FORCE-RELEASE a b");
	raw_close(h3);
	raw_close(w);
	redisFree(a);
	redisFree(op);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.STATE in RESP3: "mine" is the string "detached" for a detached
 * lease, 1 or 0 otherwise. */
static void test_state_detached_resp3(void **state)
{
	struct gw g;
	char want[256];
	start(&g);
	struct raw *a = r3_open(&g);
	long long t = raw_int(a, "LOCK.ACQUIRE s3 2000 DETACH");
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"gw-a\", \"lease-ms\": :2000, "
		 "\"fencing-token\": :%lld, \"mine\": \"detached\", \"heartbeat\": \"lease\"}",
		 t);
	raw_expect(a, "LOCK.STATE s3", want);
	raw_expect(a, "LOCK.RELEASE s3", ":0");
	snprintf(want, sizeof(want), "LOCK.RELEASE s3 %lld", t + 1);
	raw_expect(a, want, ":0");
	snprintf(want, sizeof(want), "LOCK.RELEASE s3 %lld", t);
	raw_expect(a, want, ":1");
	snprintf(want, sizeof(want),
		 "{\"held\": :0, \"holder\": nil, \"lease-ms\": :0, \"fencing-token\": :%lld, "
		 "\"mine\": :0, \"heartbeat\": \"lease\"}",
		 t);
	raw_expect(a, "LOCK.STATE s3", want);
	raw_close(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_detach_survives_close),	 T(test_detach_arguments),
		T(test_detach_not_counted),	 T(test_detach_ends_after_a_lease),
		T(test_detach_renewed_by_token), T(test_force_release),
		T(test_state_detached_resp3),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("detached leases, forced releases", tests, NULL, NULL);
}
