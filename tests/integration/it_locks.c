/*
 * it_locks: LOCK.ACQUIRE / RENEW / RELEASE / STATE through the real
 * leasegate binary (tests/support/gw.h), one gateway per test, with
 * hiredis for plain RESP2 exchanges and a raw socket
 * (tests/support/rawresp.h) for RESP3, pushes, pipelined writes, waits
 * that answer later and broken input.
 *
 * The same list runs twice: on the embedded store and on moto's DynamoDB
 * (a new table per test; without LG_MOTO every moto test fails). The
 * moto-only tests (two gateway processes on one table, items written
 * behind a gateway's back) are it_locks_moto.c; pipelines, inline commands
 * and broken input it_locks_wire.c.
 *
 * Timings are asserted loosely (shared, noisy machines) and printed.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

/* ---- one gateway: the list run on both stores ---- */

static void test_acquire_state_release(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);

	gw_expect_nil(a, "LOCK.STATE %s", "job");
	long long t = lh_acquire(a, "job", 2000);
	lh_expect_state(a, "job", 1, "gw-a", 2000, t, 1);
	lh_expect_state(b, "job", 1, "gw-a", 2000, t, 0);
	gw_expect_nil(b, "LOCK.ACQUIRE job 2000");
	gw_expect_err(a, "ERR this connection holds 'job' already", "LOCK.ACQUIRE job 2000");
	gw_expect_int(a, 1, "LOCK.RENEW job");
	gw_expect_int(b, 0, "LOCK.RENEW job");
	gw_expect_int(b, 0, "LOCK.RELEASE job");
	gw_expect_int(a, 1, "LOCK.RELEASE job");
	gw_expect_int(a, 0, "LOCK.RELEASE job");
	gw_expect_int(a, 0, "LOCK.RENEW job");
	/* a released lock keeps its item and its token */
	lh_expect_state(b, "job", 0, NULL, 0, t, 0);
	long long t2 = lh_acquire(b, "job", 3000);
	assert_true(t2 > t);
	lh_expect_state(a, "job", 1, "gw-a", 3000, t2, 0);
	/* names and options are case-insensitive */
	gw_expect_int(b, 1, "lock.release job");
	long long t3 = lh_acquire(b, "Job", 1000);
	lh_expect_state(b, "Job", 1, "gw-a", 1000, t3, 1);
	lh_expect_state(b, "job", 0, NULL, 0, t2, 0); /* lock names are not */
	gw_expect_int(b, 1, "Lock.Release Job");
	redisReply *r = gw_cmd(a, "lock.acquire job 2000 holder label-1 wait 100");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	lh_expect_state(b, "job", 1, "label-1", 2000, 0, 0);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_fencing_tokens_rise(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *c[2] = {gw_connect(&g), gw_connect(&g)};
	long long last = 0;
	for (int i = 0; i < 6; i++) {
		redisContext *x = c[i % 2];
		long long t = lh_acquire(x, "fence", 1000);
		assert_true(t > last);
		if (last != 0)
			assert_int_equal(t, last + 1); /* one ADD per acquire */
		last = t;
		gw_expect_int(x, 1, "LOCK.RELEASE fence");
	}
	/* another lock counts on its own */
	assert_int_equal(lh_acquire(c[0], "fence-2", 1000), 1);
	redisFree(c[0]);
	redisFree(c[1]);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

struct bad_cmd {
	const char *argv[8];
	const char *error; /* the reply, exactly */
};

static void test_argument_errors(void **state)
{
	static const struct bad_cmd bad[] = {
		{{"LOCK.ACQUIRE", "e"}, "ERR wrong number of arguments for 'lock.acquire' command"},
		{{"LOCK.ACQUIRE"}, "ERR wrong number of arguments for 'lock.acquire' command"},
		{{"LOCK.RENEW"}, "ERR wrong number of arguments for 'lock.renew' command"},
		{{"LOCK.RELEASE"}, "ERR wrong number of arguments for 'lock.release' command"},
		{{"LOCK.STATE"}, "ERR wrong number of arguments for 'lock.state' command"},
		{{"LOCK.STATE", "e", "f"},
		 "ERR wrong number of arguments for 'lock.state' command"},
		{{"LOCK.ACQUIRE", "e", "999"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "0"}, "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "60001"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "-2000"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "2s"}, "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", ""}, "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "99999999999999999999"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		/* integers as Redis reads them: no leading 0, sign or space */
		{{"LOCK.ACQUIRE", "e", "00002000"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "+2000"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", " 2000"},
		 "ERR lease-ms must be an integer from 1000 to 60000"},
		{{"LOCK.ACQUIRE", "e", "2000", "WAIT", "010"},
		 "ERR WAIT must be a non-negative integer of milliseconds (0: forever)"},
		{{"LOCK.RENEW", "e", "01"}, "ERR token must be a positive integer"},
		{{"LOCK.ACQUIRE", "e", "2000", "WAIT"}, "ERR syntax error"},
		{{"LOCK.ACQUIRE", "e", "2000", "WAIT", "x"},
		 "ERR WAIT must be a non-negative integer of milliseconds (0: forever)"},
		{{"LOCK.ACQUIRE", "e", "2000", "WAIT", "-1"},
		 "ERR WAIT must be a non-negative integer of milliseconds (0: forever)"},
		{{"LOCK.ACQUIRE", "e", "2000", "HOLDER"}, "ERR syntax error"},
		{{"LOCK.ACQUIRE", "e", "2000", "HOLDER", ""},
		 "ERR HOLDER must be 1 to 256 characters"},
		{{"LOCK.ACQUIRE", "e", "2000", "FOREVER", "1"}, "ERR syntax error"},
		{{"LOCK.ACQUIRE", "e", "2000", "NX"}, "ERR syntax error"},
		{{"LOCK.ACQUIRE", "e", "2000", "WAIT", "10", "HOLDER"}, "ERR syntax error"},
		{{"LOCK.ACQUIRE", "", "2000"}, "ERR lock name must be 1 to 16 bytes"},
		{{"LOCK.ACQUIRE", "abcdefghijklmnopq", "2000"},
		 "ERR lock name must be 1 to 16 bytes"},
		{{"LOCK.STATE", "abcdefghijklmnopq"}, "ERR lock name must be 1 to 16 bytes"},
		{{"LOCK.STATE", ""}, "ERR lock name must be 1 to 16 bytes"},
		{{"LOCK.RENEW", "e", "0"}, "ERR token must be a positive integer"},
		{{"LOCK.RENEW", "e", "x"}, "ERR token must be a positive integer"},
		{{"LOCK.RENEW", "e", "-3"}, "ERR token must be a positive integer"},
		{{"LOCK.RENEW", "e", "1", "secret", "2"}, "ERR syntax error"},
		{{"LOCK.RELEASE", "e", "0"}, "ERR token must be a positive integer"},
		{{"LOCK.RELEASE", "e", "1", "secret", "2"}, "ERR syntax error"},
	};
	struct gw g;
	gw_start(&g, lh_mode_table(), "--max-lock-name", "16", "--max-lease", "60s", NULL);
	redisContext *c = gw_connect(&g);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int argc = 0;
		size_t lens[8];
		const char *argv[8];
		while (argc < 8 && bad[i].argv[argc] != NULL) {
			argv[argc] = bad[i].argv[argc];
			lens[argc] = strlen(argv[argc]);
			argc++;
		}
		redisReply *r = redisCommandArgv(c, argc, argv, lens);
		assert_non_null(r);
		if (r->type != REDIS_REPLY_ERROR || strcmp(r->str, bad[i].error) != 0)
			fail_msg("case %zu (%s %s): got type %d '%s', want '%s'", i, bad[i].argv[0],
				 bad[i].argv[1] ? bad[i].argv[1] : "", r->type,
				 r->str ? r->str : "", bad[i].error);
		freeReplyObject(r);
	}
	/* a HOLDER of 257 characters is refused, of 256 taken */
	char label[258];
	memset(label, 'h', 257);
	label[257] = '\0';
	gw_expect_err(c, "ERR HOLDER must be 1 to 256 characters", "LOCK.ACQUIRE e 2000 HOLDER %s",
		      label);
	/* none of them took a lease or wrote an item */
	gw_expect_nil(c, "LOCK.STATE e");
	label[256] = '\0';
	long long t = lh_acquire(c, "abcdefghijklmnop", 60000); /* 16 bytes, the longest lease */
	gw_expect_int(c, 1, "LOCK.RELEASE abcdefghijklmnop");
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE e 1000 HOLDER %s", label);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	lh_expect_state(c, "e", 1, label, 1000, 0, 1);
	assert_true(t > 0);
	/* the connection is still fine after all those errors */
	gw_expect_int(c, 1, "LOCK.RELEASE e");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_max_leases_per_session(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--max-leases-per-session", "2", NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	lh_acquire(a, "m1", 2000);
	lh_acquire(a, "m2", 2000);
	gw_expect_err(a, "ERR max leases per connection reached (2)", "LOCK.ACQUIRE m3 2000");
	gw_expect_err(a, "ERR max leases per connection reached (2)",
		      "LOCK.ACQUIRE m3 2000 WAIT 10");
	gw_expect_nil(a, "LOCK.STATE m3"); /* refused without a write */
	/* the limit is per connection */
	lh_acquire(b, "m3", 2000);
	lh_acquire(b, "m4", 2000);
	gw_expect_int(a, 1, "LOCK.RELEASE m1");
	lh_acquire(a, "m5", 2000);
	gw_expect_err(a, "ERR max leases per connection reached (2)", "LOCK.ACQUIRE m6 2000");
	assert_int_equal(lh_info_leases(a, "leases_held"), 4);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.STATE in RESP3 is a map; nil for a lock without an item. */
static void test_state_resp3(void **state)
{
	struct gw g;
	char want[512];
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	struct raw *a = raw_open(g.port), *b = raw_open(g.port);
	raw_send(a, "HELLO 3");
	assert_non_null(strstr(raw_reply(a, 5000), "\"proto\": :3"));
	raw_send(b, "HELLO 3");
	raw_reply(b, 5000);

	raw_expect(a, "LOCK.STATE r3", "nil");
	long long t = raw_int(a, "LOCK.ACQUIRE r3 2000 HOLDER worker-1");
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"worker-1\", \"lease-ms\": :2000, "
		 "\"fencing-token\": :%lld, \"mine\": :1, \"heartbeat\": \"lease\"}",
		 t);
	raw_expect(a, "LOCK.STATE r3", want);
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"worker-1\", \"lease-ms\": :2000, "
		 "\"fencing-token\": :%lld, \"mine\": :0, \"heartbeat\": \"lease\"}",
		 t);
	raw_expect(b, "LOCK.STATE r3", want);
	raw_expect(b, "LOCK.ACQUIRE r3 2000", "nil");
	raw_expect(a, "LOCK.RELEASE r3", ":1");
	snprintf(want, sizeof(want),
		 "{\"held\": :0, \"holder\": nil, \"lease-ms\": :0, \"fencing-token\": :%lld, "
		 "\"mine\": :0, \"heartbeat\": \"lease\"}",
		 t);
	raw_expect(b, "LOCK.STATE r3", want);

	/* the same in RESP2, as flat pairs */
	struct raw *c = raw_open(g.port);
	raw_expect(c, "LOCK.STATE nothing", "nil");
	snprintf(want, sizeof(want),
		 "[\"held\", :0, \"holder\", nil, \"lease-ms\", :0, \"fencing-token\", :%lld, "
		 "\"mine\", :0, \"heartbeat\", \"lease\"]",
		 t);
	raw_expect(c, "LOCK.STATE r3", want);
	raw_close(a);
	raw_close(b);
	raw_close(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* (name, token) names a lease from any connection of the replica. */
static void test_token_addressing(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	long long t = lh_acquire(a, "pool", 2000);
	gw_expect_int(b, 0, "LOCK.RENEW pool");	  /* b holds nothing itself */
	gw_expect_int(b, 0, "LOCK.RELEASE pool"); /* and releases nothing */
	gw_expect_int(b, 0, "LOCK.RENEW pool %lld", t + 1);
	gw_expect_int(b, 0, "LOCK.RELEASE pool %lld", t + 1);
	gw_expect_int(b, 0, "LOCK.RENEW other %lld", t);
	gw_expect_int(b, 1, "LOCK.RENEW pool %lld", t);
	gw_expect_int(a, 1, "LOCK.RENEW pool %lld", t);
	gw_expect_int(a, 0, "LOCK.RENEW pool %lld", t + 1);
	lh_expect_state(b, "pool", 1, "gw-a", 2000, t, 0);
	gw_expect_int(b, 1, "LOCK.RELEASE pool %lld", t);
	lh_expect_state(b, "pool", 0, NULL, 0, t, 0);
	/* the holder's connection no longer has it */
	gw_expect_int(a, 0, "LOCK.RENEW pool");
	gw_expect_int(a, 0, "LOCK.RELEASE pool");
	gw_expect_int(b, 0, "LOCK.RELEASE pool %lld", t);
	/* and may take it again, with a new token */
	long long t2 = lh_acquire(a, "pool", 2000);
	assert_true(t2 > t);
	gw_expect_int(b, 0, "LOCK.RELEASE pool %lld", t); /* the old token names nothing */
	lh_expect_state(b, "pool", 1, "gw-a", 2000, t2, 0);
	assert_int_equal(lh_info_leases(b, "leases_held"), 1);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Local waiters are handed the lock on release, first come first served. */
static void test_wait_handover_fifo(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *info = gw_connect(&g);
	struct raw *w[3];
	long long t = lh_acquire(a, "q", 6000);
	for (int i = 0; i < 3; i++) {
		w[i] = raw_open(g.port);
		raw_send(w[i], "LOCK.ACQUIRE q 6000 WAIT 0");
		lh_await_info(info, "waits", i + 1); /* queued in this order */
	}
	for (int i = 0; i < 3; i++)
		assert_true(raw_quiet(w[i], 100));
	long long t0 = gw_now_ms();
	gw_expect_int(a, 1, "LOCK.RELEASE q");
	for (int i = 0; i < 3; i++) {
		long long got = raw_int_of(raw_reply(w[i], 5000));
		long long ms = gw_now_ms() - t0;
		printf("# waiter %d handed the lock after %lld ms (token %lld)\n", i, ms, got);
		/* handed over, not found at a poll (every 2000 ms) */
		assert_true(ms < 1500);
		assert_int_equal(got, t + 1 + i);
		for (int j = i + 1; j < 3; j++)
			assert_true(raw_quiet(w[j], i == 0 ? 300 : 50));
		raw_send(w[i], "LOCK.STATE q");
		assert_non_null(
			strstr(raw_reply(w[i], 5000), "\"mine\", :1, \"heartbeat\", \"lease\"]"));
		t0 = gw_now_ms();
		raw_expect(w[i], "LOCK.RELEASE q", ":1");
	}
	lh_await_info(info, "leases_held", 0);
	for (int i = 0; i < 3; i++)
		raw_close(w[i]);
	redisFree(a);
	redisFree(info);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_wait_timeout_and_forever(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g);
	struct raw *b = raw_open(g.port);
	long long t = lh_acquire(a, "w", 1000);

	long long t0 = gw_now_ms();
	raw_expect(b, "LOCK.ACQUIRE w 1000 WAIT 400", "nil");
	long long ms = gw_now_ms() - t0;
	printf("# WAIT 400 timed out after %lld ms\n", ms);
	assert_true(ms >= 400 && ms < 2500);
	raw_expect(b, "PING", "+PONG"); /* the session carries on */

	/* WAIT 0 outlasts several leases of the (renewed) holder */
	raw_send(b, "LOCK.ACQUIRE w 1000 WAIT 0");
	assert_true(raw_quiet(b, 2500));
	gw_expect_int(a, 1, "LOCK.RENEW w");
	gw_expect_int(a, 1, "LOCK.RELEASE w");
	assert_int_equal(raw_int_of(raw_reply(b, 3000)), t + 1);
	raw_expect(b, "LOCK.RELEASE w", ":1");
	raw_close(b);
	redisFree(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A connection that closes gives its leases back at once. */
static void test_close_releases_at_once(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	long long t = lh_acquire(a, "c1", 10000);
	lh_acquire(a, "c2", 10000);
	gw_expect_nil(b, "LOCK.ACQUIRE c1 10000");
	long long t0 = gw_now_ms();
	redisFree(a);
	long long got = 0;
	while (got == 0 && gw_now_ms() - t0 < 3000) {
		redisReply *r = gw_cmd(b, "LOCK.ACQUIRE c1 10000");
		if (r->type == REDIS_REPLY_INTEGER)
			got = r->integer;
		else if (r->type != REDIS_REPLY_NIL)
			fail_msg("LOCK.ACQUIRE: type %d %s", r->type, r->str ? r->str : "");
		freeReplyObject(r);
	}
	long long ms = gw_now_ms() - t0;
	printf("# acquired %lld ms after the holder's connection closed\n", ms);
	assert_int_equal(got, t + 1);
	assert_true(ms < 2000); /* not after the lease of 10 s */
	lh_acquire(b, "c2", 10000);
	assert_int_equal(lh_info_leases(b, "leases_held"), 2);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A wait whose client goes away never leaves a lease behind, however the
 * close and the release that would hand it the lock interleave. */
static void test_wait_disconnect_leaves_no_lease(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *c = gw_connect(&g);
	for (int round = 0; round < 6; round++) {
		struct raw *a = raw_open(g.port), *b = raw_open(g.port);
		raw_int(a, "LOCK.ACQUIRE d 10000");
		raw_send(b, "LOCK.ACQUIRE d 10000 WAIT 0");
		lh_await_info(c, "waits", 1);
		switch (round % 3) {
		case 0: /* the waiter leaves, then the holder releases */
			raw_close(b);
			lh_await_info(c, "waits", 0);
			raw_expect(a, "LOCK.RELEASE d", ":1");
			break;
		case 1: /* both at once, release first */
			raw_send(a, "LOCK.RELEASE d");
			raw_close(b);
			raw_reply(a, 5000);
			break;
		default: /* both at once, close first */
			raw_close(b);
			raw_send(a, "LOCK.RELEASE d");
			raw_reply(a, 5000);
			break;
		}
		/* no lease is left (one handed to the closing waiter is
		 * released with its session): d is free, not merely shown free */
		lh_await_settled(c, 0);
		lh_expect_state(c, "d", 0, NULL, 0, 0, 0);
		lh_acquire(c, "d", 1000);
		gw_expect_int(c, 1, "LOCK.RELEASE d");
		raw_close(a);
	}
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A wait that starts while a local release of the lock is in flight gets
 * the lock once that release is answered, not a poll later. (On DynamoDB
 * its first write races the release; see the report of issue 4.) */
static void test_wait_behind_inflight_release(void **state)
{
	struct gw g;
	char slow[128] = "";
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	struct raw *c = raw_open(g.port);
	redisContext *info = gw_connect(&g);
	for (int round = 0; round < 12 && slow[0] == '\0'; round++) {
		struct raw *b = raw_open(g.port);
		raw_int(b, "LOCK.ACQUIRE ir 9000"); /* polls would be 3000 ms apart */
		raw_close(b);			    /* its release is sent at once */
		/* catch the release in flight (on the embedded store it may
		 * be answered already) */
		for (int i = 0; i < 200 && lh_info_leases(info, "releases_in_flight") == 0 &&
				lh_info_leases(info, "leases_held") > 0;
		     i++)
			;
		long long t0 = gw_now_ms();
		raw_send(c, "LOCK.ACQUIRE ir 1000 WAIT 2500");
		const char *got = raw_reply(c, 5000);
		long long ms = gw_now_ms() - t0;
		if (got[0] == ':')
			raw_expect(c, "LOCK.RELEASE ir", ":1");
		else if (strcmp(got, "nil") != 0)
			fail_msg("round %d: %s", round, got);
		if (got[0] != ':' || ms > 1000)
			snprintf(slow, sizeof(slow), "round %d: %.60s after %lld ms", round, got,
				 ms);
	}
	raw_close(c);
	redisFree(info);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	if (slow[0] != '\0')
		fail_msg("wait behind an in-flight release: %s", slow);
}

/* Several commands in one write are answered in order, a WAIT holding
 * back the ones behind it. */
static void test_sigterm_releases(void **state)
{
	struct gw g, other;
	const char *table = lh_mode_table();
	gw_start(&g, table, "--holder-label", "gw-a", NULL);
	if (lh_on_moto)
		gw_start(&other, table, "--holder-label", "gw-b", NULL);
	struct raw *a = raw_open(g.port), *b = raw_open(g.port), *z = NULL, *oz = NULL;
	long long tx = raw_int(a, "LOCK.ACQUIRE sx 60000");
	long long ty = raw_int(a, "LOCK.ACQUIRE sy 60000");
	raw_send(b, "LOCK.ACQUIRE sx 60000 WAIT 0");
	assert_true(raw_quiet(b, 200));
	if (lh_on_moto) { /* a wait on a lock the other gateway holds */
		oz = raw_open(other.port);
		z = raw_open(g.port);
		raw_int(oz, "LOCK.ACQUIRE sz 60000");
		raw_send(z, "LOCK.ACQUIRE sz 60000 WAIT 0");
		assert_true(raw_quiet(z, 300));
	}
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	long long ms = gw_now_ms() - t0;
	printf("# SIGTERM: exited 0 after %lld ms\n", ms);
	assert_true(ms < 4500); /* within the shutdown bound (5 s), not cut by it */
	assert_int_equal(raw_read(a, 2000), -1);
	/* b's wait is answered before its connection closes, and is not
	 * handed a's lock on the way out */
	assert_int_equal(raw_read(b, 2000), 1);
	assert_string_equal(b->last, "-ERR server is shutting down");
	assert_int_equal(raw_read(b, 2000), -1);
	assert_int_equal(gw_log_count(&g, "second signal"), 0);
	if (lh_on_moto) {
		/* z's wait on the other gateway's lock: answered the same */
		assert_int_equal(raw_read(z, 2000), 1);
		assert_string_equal(z->last, "-ERR server is shutting down");
		assert_int_equal(raw_read(z, 2000), -1);
		raw_close(z);
		raw_expect(oz, "LOCK.RENEW sz", ":1");
		raw_close(oz);
		redisContext *c = gw_connect(&other);
		/* released by a, never handed to b's closing wait */
		lh_expect_state(c, "sx", 0, NULL, 0, tx, 0);
		lh_expect_state(c, "sy", 0, NULL, 0, ty, 0);
		/* free, not merely shown free: taken at once */
		assert_int_equal(lh_acquire(c, "sx", 2000), tx + 1);
		redisFree(c);
		assert_int_equal(gw_signal(&other, SIGTERM), 0);
	}
	raw_close(a);
	raw_close(b);
}

#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

/* The embedded store's bounds: a new name past --max-locks is refused
 * with -ERR (a name that has an item goes on), INFO embedded counts the
 * items, and released items are forgotten after --memory-retention. */
static void test_embedded_store_bounds(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--max-locks", "3", "--memory-retention", "1s", NULL);
	redisContext *c = gw_connect(&g);
	const char *names[] = {"b1", "b2", "b3"};
	for (int i = 0; i < 3; i++) {
		gw_expect_int(c, 1, "LOCK.ACQUIRE %s 5000", names[i]);
		gw_expect_int(c, 1, "LOCK.RELEASE %s", names[i]);
	}
	gw_expect_err(c, "ERR ", "LOCK.ACQUIRE b4 5000");
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE b4 5000");
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_non_null(strstr(r->str, "most locks (3)"));
	freeReplyObject(r);
	gw_expect_int(c, 2, "LOCK.ACQUIRE b1 5000"); /* has an item: its next token */
	gw_expect_int(c, 1, "LOCK.RELEASE b1");
	r = gw_cmd(c, "INFO embedded");
	assert_non_null(strstr(r->str, "# Embedded\r\nitems:3\r\n"));
	assert_non_null(strstr(r->str, "max_items:3\r\n"));
	freeReplyObject(r);
	gw_sleep_ms(1500);			     /* the retention, and up to a quarter of it */
	gw_expect_int(c, 1, "LOCK.ACQUIRE b4 5000"); /* the released ones are forgotten */
	gw_expect_int(c, 1, "LOCK.ACQUIRE b1 5000"); /* and start their token at 1 again */
	r = gw_cmd(c, "INFO embedded");
	assert_non_null(strstr(r->str, "items:2\r\n"));
	assert_non_null(strstr(r->str, "forgotten:3\r\n"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest one[] = {
		T(test_acquire_state_release),
		T(test_fencing_tokens_rise),
		T(test_argument_errors),
		T(test_max_leases_per_session),
		T(test_state_resp3),
		T(test_token_addressing),
		T(test_wait_handover_fifo),
		T(test_wait_timeout_and_forever),
		T(test_close_releases_at_once),
		T(test_wait_disconnect_leaves_no_lease),
		T(test_wait_behind_inflight_release),
		T(test_sigterm_releases),
	};
	const struct CMUnitTest embedded_only[] = {
		T(test_embedded_store_bounds),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	int fails = cmocka_run_group_tests_name("embedded store", one, lh_group_embedded, NULL);
	fails += cmocka_run_group_tests_name("moto", one, lh_group_moto, NULL);
	fails += cmocka_run_group_tests_name("embedded store only", embedded_only, NULL, NULL);
	return fails != 0;
}
