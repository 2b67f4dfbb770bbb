/*
 * it_locks: LOCK.ACQUIRE / RENEW / RELEASE / STATE through the real
 * leasegate binary (tests/support/gw.h), with hiredis for plain RESP2
 * exchanges and a raw socket (with a small RESP3 reader below) for RESP3,
 * pushes, pipelined writes, waits that answer later and broken input.
 *
 * The same list runs twice: on the embedded store and on moto's DynamoDB
 * (a new table per test; without LG_MOTO every moto test fails). Then,
 * on moto only, two gateway processes share one table: refusal across
 * processes, takeover after SIGKILL, handover after SIGTERM, and a holder
 * SIGSTOPped past its lease.
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
#include "tests/support/rawresp.h"

/* ---- mode: embedded store or moto ---- */

static bool on_moto;
static char table_name[64];

/* The table of the next gateway: a new one on moto, none (embedded) else. */
static const char *mode_table(void)
{
	if (!on_moto)
		return NULL;
	snprintf(table_name, sizeof(table_name), "%s", gw_new_table());
	return table_name;
}

/* Gateways a test started (their pids: a failed test's stack is gone),
 * killed by the teardown if the test failed before stopping them. */
static pid_t tracked[8];
static int ntracked;

#define UP(g, table, ...)                                                                          \
	do {                                                                                       \
		gw_start((g), (table), __VA_ARGS__, NULL);                                         \
		if (ntracked < 8)                                                                  \
			tracked[ntracked++] = (g)->pid;                                            \
	} while (0)

static int teardown(void **state)
{
	for (int i = 0; i < ntracked; i++) {
		int st;
		if (tracked[i] > 0 && waitpid(tracked[i], &st, WNOHANG) == 0) {
			kill(tracked[i], SIGKILL);
			waitpid(tracked[i], &st, 0);
		}
	}
	ntracked = 0;
	return 0;
}

static int group_embedded(void **state)
{
	on_moto = false;
	return 0;
}

static int group_moto(void **state)
{
	on_moto = true;
	if (!gw_have_moto())
		fprintf(stderr, "LG_MOTO is not set: every moto test fails\n");
	return 0;
}

/* ---- hiredis helpers ---- */

/* LOCK.ACQUIRE returning the token (> 0), else fails. */
static long long acquire(redisContext *c, const char *name, int lease_ms)
{
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE %s %d", name, lease_ms);
	if (r->type != REDIS_REPLY_INTEGER || r->integer <= 0)
		fail_msg("LOCK.ACQUIRE %s: type %d %s", name, r->type, r->str ? r->str : "");
	long long t = r->integer;
	freeReplyObject(r);
	return t;
}

/* Checks LOCK.STATE's RESP2 reply, flat pairs in their order; holder NULL
 * means nil, token 0 means any positive. Returns the token. */
static long long expect_state(redisContext *c, const char *name, long long held, const char *holder,
			      long long lease_ms, long long token, long long mine)
{
	static const char *const keys[] = {"held", "holder", "lease-ms", "fencing-token", "mine"};
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 10)
		fail_msg("LOCK.STATE %s: type %d, %zu elements", name, r->type, r->elements);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r->element[2 * i]->type, REDIS_REPLY_STRING);
		assert_string_equal(r->element[2 * i]->str, keys[i]);
	}
	redisReply **v = r->element;
	assert_int_equal(v[1]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v[1]->integer, held);
	if (holder == NULL) {
		assert_int_equal(v[3]->type, REDIS_REPLY_NIL);
	} else {
		assert_int_equal(v[3]->type, REDIS_REPLY_STRING);
		assert_string_equal(v[3]->str, holder);
	}
	assert_int_equal(v[5]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v[5]->integer, lease_ms);
	assert_int_equal(v[7]->type, REDIS_REPLY_INTEGER);
	if (token != 0)
		assert_int_equal(v[7]->integer, token);
	else
		assert_true(v[7]->integer > 0);
	assert_int_equal(v[9]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v[9]->integer, mine);
	long long t = v[7]->integer;
	freeReplyObject(r);
	return t;
}

/* A field of INFO leases. */
static long long info_leases(redisContext *c, const char *field)
{
	redisReply *r = gw_cmd(c, "INFO leases");
	char key[64];
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	snprintf(key, sizeof(key), "\n%s:", field);
	const char *p = strstr(r->str, key);
	if (p == NULL)
		fail_msg("INFO leases has no %s", field);
	long long v = strtoll(p + strlen(key), NULL, 10);
	freeReplyObject(r);
	return v;
}

/* Waits (up to 5 s) until INFO leases shows field == want. */
static void await_info(redisContext *c, const char *field, long long want)
{
	for (int i = 0; i < 500; i++) {
		if (info_leases(c, field) == want)
			return;
		gw_sleep_ms(10);
	}
	fail_msg("INFO leases %s stayed %lld, wanted %lld", field, info_leases(c, field), want);
}

/* Waits (up to 5 s) until the gateway holds `leases` leases, with no wait,
 * release or store request in flight (one INFO snapshot). */
static void await_settled(redisContext *c, long long leases)
{
	for (int i = 0; i < 500; i++) {
		redisReply *r = gw_cmd(c, "INFO leases");
		char want[64];
		snprintf(want, sizeof(want), "\nleases_held:%lld\r\n", leases);
		bool done = r->type == REDIS_REPLY_STRING && strstr(r->str, want) != NULL &&
			    strstr(r->str, "\nwaits:0\r\n") != NULL &&
			    strstr(r->str, "\nreleases_in_flight:0\r\n") != NULL &&
			    strstr(r->str, "\nstore_in_flight:0\r\n") != NULL;
		freeReplyObject(r);
		if (done)
			return;
		gw_sleep_ms(10);
	}
	fail_msg("the gateway did not settle with %lld leases held", leases);
}

/* ---- one gateway: the list run on both stores ---- */

static void test_acquire_state_release(void **state)
{
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);

	gw_expect_nil(a, "LOCK.STATE %s", "job");
	long long t = acquire(a, "job", 2000);
	expect_state(a, "job", 1, "gw-a", 2000, t, 1);
	expect_state(b, "job", 1, "gw-a", 2000, t, 0);
	gw_expect_nil(b, "LOCK.ACQUIRE job 2000");
	gw_expect_err(a, "ERR this connection holds 'job' already", "LOCK.ACQUIRE job 2000");
	gw_expect_int(a, 1, "LOCK.RENEW job");
	gw_expect_int(b, 0, "LOCK.RENEW job");
	gw_expect_int(b, 0, "LOCK.RELEASE job");
	gw_expect_int(a, 1, "LOCK.RELEASE job");
	gw_expect_int(a, 0, "LOCK.RELEASE job");
	gw_expect_int(a, 0, "LOCK.RENEW job");
	/* a released lock keeps its item and its token */
	expect_state(b, "job", 0, NULL, 0, t, 0);
	long long t2 = acquire(b, "job", 3000);
	assert_true(t2 > t);
	expect_state(a, "job", 1, "gw-a", 3000, t2, 0);
	/* names and options are case-insensitive */
	gw_expect_int(b, 1, "lock.release job");
	long long t3 = acquire(b, "Job", 1000);
	expect_state(b, "Job", 1, "gw-a", 1000, t3, 1);
	expect_state(b, "job", 0, NULL, 0, t2, 0); /* lock names are not */
	gw_expect_int(b, 1, "Lock.Release Job");
	redisReply *r = gw_cmd(a, "lock.acquire job 2000 holder label-1 wait 100");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	expect_state(b, "job", 1, "label-1", 2000, 0, 0);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_fencing_tokens_rise(void **state)
{
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *c[2] = {gw_connect(&g), gw_connect(&g)};
	long long last = 0;
	for (int i = 0; i < 6; i++) {
		redisContext *x = c[i % 2];
		long long t = acquire(x, "fence", 1000);
		assert_true(t > last);
		if (last != 0)
			assert_int_equal(t, last + 1); /* one ADD per acquire */
		last = t;
		gw_expect_int(x, 1, "LOCK.RELEASE fence");
	}
	/* another lock counts on its own */
	assert_int_equal(acquire(c[0], "fence-2", 1000), 1);
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
		{{"LOCK.RENEW", "e", "1", "2"}, "ERR syntax error"},
		{{"LOCK.RELEASE", "e", "0"}, "ERR token must be a positive integer"},
		{{"LOCK.RELEASE", "e", "1", "2"}, "ERR syntax error"},
	};
	struct gw g;
	UP(&g, mode_table(), "--max-lock-name", "16", "--max-lease", "60s");
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
	long long t = acquire(c, "abcdefghijklmnop", 60000); /* 16 bytes, the longest lease */
	gw_expect_int(c, 1, "LOCK.RELEASE abcdefghijklmnop");
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE e 1000 HOLDER %s", label);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	expect_state(c, "e", 1, label, 1000, 0, 1);
	assert_true(t > 0);
	/* the connection is still fine after all those errors */
	gw_expect_int(c, 1, "LOCK.RELEASE e");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_max_leases_per_session(void **state)
{
	struct gw g;
	UP(&g, mode_table(), "--max-leases-per-session", "2");
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	acquire(a, "m1", 2000);
	acquire(a, "m2", 2000);
	gw_expect_err(a, "ERR max leases per connection reached (2)", "LOCK.ACQUIRE m3 2000");
	gw_expect_err(a, "ERR max leases per connection reached (2)",
		      "LOCK.ACQUIRE m3 2000 WAIT 10");
	gw_expect_nil(a, "LOCK.STATE m3"); /* refused without a write */
	/* the limit is per connection */
	acquire(b, "m3", 2000);
	acquire(b, "m4", 2000);
	gw_expect_int(a, 1, "LOCK.RELEASE m1");
	acquire(a, "m5", 2000);
	gw_expect_err(a, "ERR max leases per connection reached (2)", "LOCK.ACQUIRE m6 2000");
	assert_int_equal(info_leases(a, "leases_held"), 4);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.STATE in RESP3 is a map; nil for a lock without an item. */
static void test_state_resp3(void **state)
{
	struct gw g;
	char want[512];
	UP(&g, mode_table(), "--holder-label", "gw-a");
	struct raw *a = raw_open(g.port), *b = raw_open(g.port);
	raw_send(a, "HELLO 3");
	assert_non_null(strstr(raw_reply(a, 5000), "\"proto\": :3"));
	raw_send(b, "HELLO 3");
	raw_reply(b, 5000);

	raw_expect(a, "LOCK.STATE r3", "nil");
	long long t = raw_int(a, "LOCK.ACQUIRE r3 2000 HOLDER worker-1");
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"worker-1\", \"lease-ms\": :2000, "
		 "\"fencing-token\": :%lld, \"mine\": :1}",
		 t);
	raw_expect(a, "LOCK.STATE r3", want);
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"worker-1\", \"lease-ms\": :2000, "
		 "\"fencing-token\": :%lld, \"mine\": :0}",
		 t);
	raw_expect(b, "LOCK.STATE r3", want);
	raw_expect(b, "LOCK.ACQUIRE r3 2000", "nil");
	raw_expect(a, "LOCK.RELEASE r3", ":1");
	snprintf(want, sizeof(want),
		 "{\"held\": :0, \"holder\": nil, \"lease-ms\": :0, \"fencing-token\": :%lld, "
		 "\"mine\": :0}",
		 t);
	raw_expect(b, "LOCK.STATE r3", want);

	/* the same in RESP2, as flat pairs */
	struct raw *c = raw_open(g.port);
	raw_expect(c, "LOCK.STATE nothing", "nil");
	snprintf(want, sizeof(want),
		 "[\"held\", :0, \"holder\", nil, \"lease-ms\", :0, \"fencing-token\", :%lld, "
		 "\"mine\", :0]",
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
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	long long t = acquire(a, "pool", 2000);
	gw_expect_int(b, 0, "LOCK.RENEW pool");	  /* b holds nothing itself */
	gw_expect_int(b, 0, "LOCK.RELEASE pool"); /* and releases nothing */
	gw_expect_int(b, 0, "LOCK.RENEW pool %lld", t + 1);
	gw_expect_int(b, 0, "LOCK.RELEASE pool %lld", t + 1);
	gw_expect_int(b, 0, "LOCK.RENEW other %lld", t);
	gw_expect_int(b, 1, "LOCK.RENEW pool %lld", t);
	gw_expect_int(a, 1, "LOCK.RENEW pool %lld", t);
	gw_expect_int(a, 0, "LOCK.RENEW pool %lld", t + 1);
	expect_state(b, "pool", 1, "gw-a", 2000, t, 0);
	gw_expect_int(b, 1, "LOCK.RELEASE pool %lld", t);
	expect_state(b, "pool", 0, NULL, 0, t, 0);
	/* the holder's connection no longer has it */
	gw_expect_int(a, 0, "LOCK.RENEW pool");
	gw_expect_int(a, 0, "LOCK.RELEASE pool");
	gw_expect_int(b, 0, "LOCK.RELEASE pool %lld", t);
	/* and may take it again, with a new token */
	long long t2 = acquire(a, "pool", 2000);
	assert_true(t2 > t);
	gw_expect_int(b, 0, "LOCK.RELEASE pool %lld", t); /* the old token names nothing */
	expect_state(b, "pool", 1, "gw-a", 2000, t2, 0);
	assert_int_equal(info_leases(b, "leases_held"), 1);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Local waiters are handed the lock on release, first come first served. */
static void test_wait_handover_fifo(void **state)
{
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g), *info = gw_connect(&g);
	struct raw *w[3];
	long long t = acquire(a, "q", 6000);
	for (int i = 0; i < 3; i++) {
		w[i] = raw_open(g.port);
		raw_send(w[i], "LOCK.ACQUIRE q 6000 WAIT 0");
		await_info(info, "waits", i + 1); /* queued in this order */
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
		assert_non_null(strstr(raw_reply(w[i], 5000), "\"mine\", :1]"));
		t0 = gw_now_ms();
		raw_expect(w[i], "LOCK.RELEASE q", ":1");
	}
	await_info(info, "leases_held", 0);
	for (int i = 0; i < 3; i++)
		raw_close(w[i]);
	redisFree(a);
	redisFree(info);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_wait_timeout_and_forever(void **state)
{
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g);
	struct raw *b = raw_open(g.port);
	long long t = acquire(a, "w", 1000);

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
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	long long t = acquire(a, "c1", 10000);
	acquire(a, "c2", 10000);
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
	acquire(b, "c2", 10000);
	assert_int_equal(info_leases(b, "leases_held"), 2);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A wait whose client goes away never leaves a lease behind, however the
 * close and the release that would hand it the lock interleave. */
static void test_wait_disconnect_leaves_no_lease(void **state)
{
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *c = gw_connect(&g);
	for (int round = 0; round < 6; round++) {
		struct raw *a = raw_open(g.port), *b = raw_open(g.port);
		raw_int(a, "LOCK.ACQUIRE d 10000");
		raw_send(b, "LOCK.ACQUIRE d 10000 WAIT 0");
		await_info(c, "waits", 1);
		switch (round % 3) {
		case 0: /* the waiter leaves, then the holder releases */
			raw_close(b);
			await_info(c, "waits", 0);
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
		await_settled(c, 0);
		expect_state(c, "d", 0, NULL, 0, 0, 0);
		acquire(c, "d", 1000);
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
	UP(&g, mode_table(), "--holder-label", "gw-a");
	struct raw *c = raw_open(g.port);
	redisContext *info = gw_connect(&g);
	for (int round = 0; round < 12 && slow[0] == '\0'; round++) {
		struct raw *b = raw_open(g.port);
		raw_int(b, "LOCK.ACQUIRE ir 9000"); /* polls would be 3000 ms apart */
		raw_close(b);			    /* its release is sent at once */
		/* catch the release in flight (on the embedded store it may
		 * be answered already) */
		for (int i = 0; i < 200 && info_leases(info, "releases_in_flight") == 0 &&
				info_leases(info, "leases_held") > 0;
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
static void test_pipelining(void **state)
{
	static const char *const cmds[] = {
		"LOCK.ACQUIRE p1 2000",
		"LOCK.ACQUIRE p2 2000",
		"LOCK.ACQUIRE held 2000",
		"LOCK.STATE p1",
		"LOCK.RENEW p1",
		"LOCK.RELEASE p2",
		"LOCK.RELEASE p2",
		"LOCK.ACQUIRE held 2000 WAIT 0",
		"PING",
		"LOCK.RELEASE held",
		"LOCK.RELEASE p1",
		"LOCK.STATE p2",
	};
	enum { N = sizeof(cmds) / sizeof(cmds[0]) };
	struct gw g;
	char buf[8192], want[256];
	size_t n = 0;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *o = gw_connect(&g);
	long long th = acquire(o, "held", 2000);
	struct raw *r = raw_open(g.port);
	for (int i = 0; i < N; i++)
		n += raw_encode(buf + n, sizeof(buf) - n, cmds[i]);
	raw_write(r, buf, n); /* one write */
	/* everything up to the WAIT is answered; nothing after it */
	const char *got;
	long long t1 = raw_int_of(raw_reply(r, 5000));
	long long t2 = raw_int_of(raw_reply(r, 5000));
	assert_true(t1 > 0 && t2 > 0);
	assert_string_equal(raw_reply(r, 5000), "nil");
	got = raw_reply(r, 5000);
	snprintf(want, sizeof(want),
		 "[\"held\", :1, \"holder\", \"gw-a\", \"lease-ms\", :2000, \"fencing-token\", "
		 ":%lld, \"mine\", :1]",
		 t1);
	assert_string_equal(got, want);
	assert_string_equal(raw_reply(r, 5000), ":1");
	assert_string_equal(raw_reply(r, 5000), ":1");
	assert_string_equal(raw_reply(r, 5000), ":0");
	assert_true(raw_quiet(r, 300));
	gw_expect_int(o, 1, "LOCK.RELEASE held");
	assert_int_equal(raw_int_of(raw_reply(r, 5000)), th + 1);
	assert_string_equal(raw_reply(r, 5000), "+PONG");
	assert_string_equal(raw_reply(r, 5000), ":1");
	assert_string_equal(raw_reply(r, 5000), ":1");
	snprintf(want, sizeof(want),
		 "[\"held\", :0, \"holder\", nil, \"lease-ms\", :0, \"fencing-token\", :%lld, "
		 "\"mine\", :0]",
		 t2);
	assert_string_equal(raw_reply(r, 5000), want);
	assert_true(raw_quiet(r, 100));
	raw_close(r);
	redisFree(o);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_inline_commands(void **state)
{
	static const char req[] = "LOCK.ACQUIRE inl 2000 HOLDER \"two words\"\r\n"
				  "lock.state inl\r\nLOCK.RENEW inl\n"
				  "LOCK.RELEASE inl\r\nLOCK.RELEASE inl\r\n";
	struct gw g;
	char want[256];
	UP(&g, mode_table(), "--holder-label", "gw-a");
	struct raw *r = raw_open(g.port);
	raw_write(r, req, sizeof(req) - 1);
	long long t = raw_int_of(raw_reply(r, 5000));
	snprintf(want, sizeof(want),
		 "[\"held\", :1, \"holder\", \"two words\", \"lease-ms\", :2000, "
		 "\"fencing-token\", :%lld, \"mine\", :1]",
		 t);
	assert_string_equal(raw_reply(r, 5000), want);
	assert_string_equal(raw_reply(r, 5000), ":1");
	assert_string_equal(raw_reply(r, 5000), ":1");
	assert_string_equal(raw_reply(r, 5000), ":0");
	raw_close(r);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A waiting client that pipelined more than the socket read-ahead (64 KiB)
 * behind its wait and then went away is noticed: its wait ends. */
static void test_blocked_client_leaving_behind_a_pipeline(void **state)
{
	static char pings[200 * 1024];
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g), *c = gw_connect(&g);
	acquire(a, "busy", 2000);
	for (size_t i = 0; i + 6 <= sizeof(pings); i += 6)
		memcpy(pings + i, "PING\r\n", 6);
	struct raw *b = raw_open(g.port);
	raw_send(b, "LOCK.ACQUIRE busy 2000 WAIT 0");
	await_info(c, "waits", 1);
	raw_write(b, pings, sizeof(pings) - sizeof(pings) % 6);
	raw_close(b);
	await_info(c, "waits", 0); /* before the fix: waits stayed 1 */
	redisFree(a);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Broken input closes that connection (releasing its own leases) and
 * nothing else: another connection's lease stays held. */
static void test_malformed_closes_one(void **state)
{
	static const char *const broken[] = {
		"*2\r\n$12\r\nLOCK.RELEASE\r\n:1\r\n",
		"*abc\r\n",
		"*2\r\n$10\r\nLOCK.STATE\r\n$-5\r\n",
		"LOCK.STATE \"unbalanced\r\n",
	};
	struct gw g;
	UP(&g, mode_table(), "--holder-label", "gw-a");
	redisContext *a = gw_connect(&g), *c = gw_connect(&g);
	long long t = acquire(a, "keep", 2000);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		struct raw *b = raw_open(g.port);
		char name[32];
		snprintf(name, sizeof(name), "LOCK.ACQUIRE mine%zu 10000", i);
		raw_int(b, name);
		raw_send(b, "LOCK.ACQUIRE keep 2000 WAIT 0"); /* queued behind a */
		await_info(c, "waits", 1);
		raw_write(b, broken[i], strlen(broken[i]));
		/* the wait is still on: the broken bytes are read after it */
		raw_close(b);
		await_info(c, "waits", 0);
		/* b's own lease went with it, once its release is answered */
		await_settled(c, 1);
		snprintf(name, sizeof(name), "mine%zu", i);
		acquire(c, name, 1000);
		gw_expect_int(c, 1, "LOCK.RELEASE %s", name);

		/* now broken bytes on an idle connection that holds a lease */
		b = raw_open(g.port);
		raw_int(b, "LOCK.ACQUIRE gone 10000");
		raw_write(b, broken[i], strlen(broken[i]));
		const char *got = raw_reply(b, 5000);
		if (strncmp(got, "-ERR Protocol error", 19) != 0)
			fail_msg("broken input %zu: got %s", i, got);
		assert_int_equal(raw_read(b, 3000), -1); /* closed */
		raw_close(b);
		await_settled(c, 1);
		acquire(c, "gone", 1000);
		gw_expect_int(c, 1, "LOCK.RELEASE gone");
	}
	gw_expect_int(a, 1, "LOCK.RENEW keep");
	expect_state(a, "keep", 1, "gw-a", 2000, t, 1);
	gw_expect_nil(c, "LOCK.ACQUIRE keep 2000");
	gw_expect_int(a, 1, "LOCK.RELEASE keep");
	redisFree(a);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* SIGTERM releases every lease and exits 0; on moto another gateway on
 * the same table sees the locks free. */
static void test_sigterm_releases(void **state)
{
	struct gw g, other;
	const char *table = mode_table();
	UP(&g, table, "--holder-label", "gw-a");
	if (on_moto)
		UP(&other, table, "--holder-label", "gw-b");
	struct raw *a = raw_open(g.port), *b = raw_open(g.port), *z = NULL, *oz = NULL;
	long long tx = raw_int(a, "LOCK.ACQUIRE sx 60000");
	long long ty = raw_int(a, "LOCK.ACQUIRE sy 60000");
	raw_send(b, "LOCK.ACQUIRE sx 60000 WAIT 0");
	assert_true(raw_quiet(b, 200));
	if (on_moto) { /* a wait on a lock the other gateway holds */
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
	if (on_moto) {
		/* z's wait on the other gateway's lock: answered the same */
		assert_int_equal(raw_read(z, 2000), 1);
		assert_string_equal(z->last, "-ERR server is shutting down");
		assert_int_equal(raw_read(z, 2000), -1);
		raw_close(z);
		raw_expect(oz, "LOCK.RENEW sz", ":1");
		raw_close(oz);
		redisContext *c = gw_connect(&other);
		/* released by a, never handed to b's closing wait */
		expect_state(c, "sx", 0, NULL, 0, tx, 0);
		expect_state(c, "sy", 0, NULL, 0, ty, 0);
		/* free, not merely shown free: taken at once */
		assert_int_equal(acquire(c, "sx", 2000), tx + 1);
		redisFree(c);
		assert_int_equal(gw_signal(&other, SIGTERM), 0);
	}
	raw_close(a);
	raw_close(b);
}

/* ---- two gateways on one moto table ---- */

struct pair {
	struct gw a, b;
	char table[64];
};

static void pair_up(struct pair *p)
{
	assert_true(gw_have_moto());
	snprintf(p->table, sizeof(p->table), "%s", gw_new_table());
	UP(&p->a, p->table, "--holder-label", "gw-a");
	UP(&p->b, p->table, "--holder-label", "gw-b");
}

static void test_pair_refused_across(void **state)
{
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a), *b = gw_connect(&p.b);
	long long t = acquire(a, "x", 2000);
	gw_expect_nil(b, "LOCK.ACQUIRE x 2000");
	expect_state(b, "x", 1, "gw-a", 2000, t, 0);
	long long t0 = gw_now_ms();
	gw_expect_nil(b, "LOCK.ACQUIRE x 2000 WAIT 1500"); /* a live holder is renewed */
	assert_true(gw_now_ms() - t0 >= 1500);
	gw_expect_int(b, 0, "LOCK.RENEW x %lld", t); /* tokens name leases of one replica */
	gw_expect_int(b, 0, "LOCK.RELEASE x %lld", t);
	expect_state(a, "x", 1, "gw-a", 2000, t, 1);
	gw_expect_int(a, 1, "LOCK.RELEASE x");
	long long t2 = acquire(b, "x", 2000);
	assert_true(t2 > t);
	expect_state(a, "x", 1, "gw-b", 2000, t2, 0);
	gw_expect_nil(a, "LOCK.ACQUIRE x 2000");
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&p.a, SIGTERM), 0);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* The holder's process is killed: the other takes the lock over after a
 * lease. k1's waiter was waiting before the kill (it may have first seen
 * the last renewal up to a third of a lease before it), k2's starts after. */
static void test_pair_sigkill_takeover(void **state)
{
	enum { LEASE = 2000, POLL = LEASE / 3, SLACK = 1500 };
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a);
	long long t1 = acquire(a, "k1", LEASE);
	long long t2 = acquire(a, "k2", LEASE);
	struct raw *w1 = raw_open(p.b.port), *w2 = raw_open(p.b.port);
	raw_send(w1, "LOCK.ACQUIRE k1 2000 WAIT 0");
	assert_true(raw_quiet(w1, 1000)); /* a renewal or two seen */
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGKILL), 128 + SIGKILL);
	raw_send(w2, "LOCK.ACQUIRE k2 2000 WAIT 0");
	long long got1 = raw_int_of(raw_reply(w1, LEASE + 2 * POLL + SLACK + 1000));
	long long ms1 = gw_now_ms() - t0;
	long long got2 = raw_int_of(raw_reply(w2, LEASE + 2 * POLL + SLACK + 1000));
	long long ms2 = gw_now_ms() - t0;
	printf("# SIGKILL takeover (lease %d ms, poll %d ms): waiting before %lld ms, "
	       "waiting after %lld ms\n",
	       LEASE, POLL, ms1, ms2);
	assert_int_equal(got1, t1 + 1);
	assert_int_equal(got2, t2 + 1);
	assert_true(ms1 >= LEASE - POLL && ms1 < LEASE + 2 * POLL + SLACK);
	assert_true(ms2 >= LEASE && ms2 < LEASE + 2 * POLL + SLACK);
	redisContext *b = gw_connect(&p.b);
	expect_state(b, "k1", 1, "gw-b", LEASE, t1 + 1, 0);
	redisFree(b);
	raw_close(w1);
	raw_close(w2);
	redisFree(a);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* SIGTERM releases: the other gateway's waiter gets the lock at its next
 * poll (every 2000 ms here), long before a lease (6000 ms). */
static void test_pair_sigterm_handover(void **state)
{
	enum { LEASE = 6000, POLL = LEASE / 3 };
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a);
	long long t = acquire(a, "h", LEASE);
	struct raw *w = raw_open(p.b.port);
	raw_send(w, "LOCK.ACQUIRE h 6000 WAIT 0");
	assert_true(raw_quiet(w, 300));
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGTERM), 0);
	long long got = raw_int_of(raw_reply(w, LEASE + 2000));
	long long ms = gw_now_ms() - t0;
	printf("# SIGTERM handover (lease %d ms, poll %d ms): %lld ms\n", LEASE, POLL, ms);
	assert_int_equal(got, t + 1);
	assert_true(ms < POLL + 1500);
	raw_close(w);
	redisFree(a);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* The holder's gateway is stopped past its lease; the other takes over
 * with a higher token; once continued, the stopped one's RESP3 client is
 * pushed the loss and its next LOCK.RENEW answers -LOST.
 *
 * The reason is `expired`: the takeover comes a whole lease after the
 * other gateway first read the holder's last rvn, so after the holder's
 * own lease ended on its monotonic clock (which runs while stopped); on
 * SIGCONT its end timer fires with the heartbeat's renewal still in
 * flight. (A renewal that finds another owner before the lease runs out,
 * `taken_over`, is test_moto_item_written_behind.) */
static void test_pair_sigstop_lost(void **state)
{
	enum { LEASE = 2000 };
	struct pair p;
	char want[256];
	pair_up(&p);
	struct raw *a = raw_open(p.a.port);
	raw_send(a, "HELLO 3");
	raw_reply(a, 5000);
	long long t = raw_int(a, "LOCK.ACQUIRE s 2000");
	/* a2 holds s2, which nobody contends, and asks to renew it while the
	 * gateway is stopped: that lease ended too */
	struct raw *a2 = raw_open(p.a.port);
	raw_send(a2, "HELLO 3");
	raw_reply(a2, 5000);
	long long t2 = raw_int(a2, "LOCK.ACQUIRE s2 2000");
	struct raw *w = raw_open(p.b.port);
	raw_send(w, "LOCK.ACQUIRE s 2000 WAIT 0");
	assert_true(raw_quiet(w, 300));
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGSTOP), 0);
	long long got = raw_int_of(raw_reply(w, 3 * LEASE + 2000));
	long long ms = gw_now_ms() - t0;
	printf("# SIGSTOP takeover (lease %d ms): %lld ms\n", LEASE, ms);
	assert_true(got > t);
	assert_true(ms >= LEASE - LEASE / 3);
	raw_send(a2, "LOCK.RENEW s2");
	gw_sleep_ms(100);
	assert_int_equal(gw_signal(&p.a, SIGCONT), 0);
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"s\", :%lld, \"expired\"]", t);
	assert_string_equal(raw_reply(a, 5000), want);
	/* s2's renewal is answered -LOST expired: after the push when the
	 * overdue end timer ran first; alone (no push after it) when the
	 * command was read first. Never 1 for a lease past its end. */
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"s2\", :%lld, \"expired\"]", t2);
	const char *r2 = raw_reply(a2, 5000);
	if (strcmp(r2, want) == 0) {
		assert_string_equal(raw_reply(a2, 5000), "-LOST expired");
	} else {
		assert_string_equal(r2, "-LOST expired");
		printf("# SIGSTOP: LOCK.RENEW read before the overdue end timer ran\n");
	}
	assert_true(raw_quiet(a2, 300));
	raw_close(a2);
	raw_expect(a, "LOCK.RENEW s", "-LOST expired");
	raw_expect(a, "LOCK.RENEW s", ":0"); /* reported once */
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"gw-b\", \"lease-ms\": :2000, \"fencing-token\": "
		 ":%lld, \"mine\": :0}",
		 got);
	raw_expect(a, "LOCK.STATE s", want);
	raw_expect(a, "LOCK.ACQUIRE s 2000", "nil");
	raw_close(a);
	raw_close(w);
	assert_int_equal(gw_signal(&p.a, SIGTERM), 0);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* Writes the item of lock `name` behind the gateway's back with boto3:
 * "steal" sets another owner and rvn, "delete" deletes the item. */
static void moto_item(const char *table, const char *name, const char *op)
{
	static const char script[] =
		"import os, sys, boto3\n"
		"t, n, op = sys.argv[1:4]\n"
		"d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'],\n"
		"    region_name='us-east-1', aws_access_key_id=os.environ['LG_AK'],\n"
		"    aws_secret_access_key=os.environ['LG_SK'])\n"
		"k = {}\n"
		"for e in d.describe_table(TableName=t)['Table']['KeySchema']:\n"
		"    k[e['AttributeName']] = {'S': 'LOCK#' + n if e['KeyType'] == 'HASH' else "
		"'LOCK'}\n"
		"if op == 'delete':\n"
		"    d.delete_item(TableName=t, Key=k)\n"
		"else:\n"
		"    d.update_item(TableName=t, Key=k, UpdateExpression='SET #o = :o, #r = :r',\n"
		"        ConditionExpression='attribute_exists(#o)',\n"
		"        ExpressionAttributeNames={'#o': 'owner', '#r': 'rvn'},\n"
		"        ExpressionAttributeValues={':o': {'S': 'intruder'}, ':r': {'S': 'x'}})\n";
	char path[512], cmd[1024];
	snprintf(path, sizeof(path), "%s/it_locks_item.py",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %s", path, table, name, op);
	assert_int_equal(system(cmd), 0);
}

/* INFO dynamodb: the HTTP requests behind the lock commands. */
static void test_info_dynamodb(void **state)
{
	struct gw g;
	const char *table = mode_table();
	assert_non_null(table);
	UP(&g, table, "--holder-label", "gw-a");
	redisContext *c = gw_connect(&g);
	redisReply *r = gw_cmd(c, "INFO dynamodb");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	const char *p = strstr(r->str, "requests_UpdateItem:");
	assert_non_null(p);
	long long before = atoll(p + strlen("requests_UpdateItem:"));
	freeReplyObject(r);
	acquire(c, "info1", 2000);
	gw_expect_int(c, 1, "LOCK.RELEASE info1");
	r = gw_cmd(c, "INFO dynamodb");
	p = strstr(r->str, "requests_UpdateItem:");
	assert_non_null(p);
	assert_int_equal(atoll(p + strlen("requests_UpdateItem:")) - before,
			 2); /* acquire, release */
	assert_non_null(strstr(r->str, "retry_quota:"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Someone writes or deletes a held lock's item: the next renewal finds
 * it, the RESP3 holder is pushed taken_over / deleted, and LOCK.RENEW
 * answers -LOST with that reason; RESP2 sessions get no push. A loss the
 * heartbeat found is reported to whichever connection addresses the lease
 * first, by (name, token) from another connection too, once. */
static void test_moto_item_written_behind(void **state)
{
	struct gw g;
	char want[256];
	const char *table = mode_table();
	assert_non_null(table);
	UP(&g, table, "--holder-label", "gw-a");
	struct raw *a = raw_open(g.port), *b = raw_open(g.port);
	raw_send(a, "HELLO 3");
	raw_reply(a, 5000);
	long long t1 = raw_int(a, "LOCK.ACQUIRE f1 60000");
	long long t2 = raw_int(a, "LOCK.ACQUIRE f2 60000");
	long long t3 = raw_int(b, "LOCK.ACQUIRE f3 60000");
	moto_item(table, "f1", "steal");
	moto_item(table, "f2", "delete");
	moto_item(table, "f3", "steal");

	raw_send(a, "LOCK.RENEW f1");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"f1\", :%lld, \"taken_over\"]", t1);
	assert_string_equal(raw_reply(a, 5000), want);
	assert_string_equal(raw_reply(a, 5000), "-LOST taken_over");
	raw_expect(a, "LOCK.RENEW f1", ":0");
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"gw-a\", \"lease-ms\": :60000, \"fencing-token\": "
		 ":%lld, \"mine\": :0}",
		 t1);
	raw_expect(a, "LOCK.STATE f1", want);

	raw_send(a, "LOCK.RENEW f2");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"f2\", :%lld, \"deleted\"]", t2);
	assert_string_equal(raw_reply(a, 5000), want);
	assert_string_equal(raw_reply(a, 5000), "-LOST deleted");
	raw_expect(a, "LOCK.STATE f2", "nil");
	/* a deleted item starts its token at 1 again */
	raw_expect(a, "LOCK.ACQUIRE f2 2000", ":1");

	/* RESP2: the same answer, no push */
	raw_expect(b, "LOCK.RENEW f3", "-LOST taken_over");
	raw_expect(b, "PING", "+PONG");
	raw_expect(b, "LOCK.RELEASE f3", ":0");
	assert_true(t3 > 0);

	/* found by b's heartbeat (a third of 3 s), reported to a by token */
	long long t4 = raw_int(b, "LOCK.ACQUIRE f4 3000");
	moto_item(table, "f4", "steal");
	usleep(1600 * 1000);
	snprintf(want, sizeof(want), "LOCK.RENEW f4 %lld", t4);
	raw_expect(a, want, "-LOST taken_over");
	raw_expect(b, "LOCK.RENEW f4", ":0"); /* reported once */
	assert_true(raw_quiet(a, 100));
	raw_close(a);
	raw_close(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

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
		T(test_pipelining),
		T(test_inline_commands),
		T(test_malformed_closes_one),
		T(test_blocked_client_leaving_behind_a_pipeline),
		T(test_sigterm_releases),
	};
	const struct CMUnitTest two[] = {
		T(test_pair_refused_across),	  T(test_pair_sigkill_takeover),
		T(test_pair_sigterm_handover),	  T(test_pair_sigstop_lost),
		T(test_moto_item_written_behind), T(test_info_dynamodb),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	int fails = cmocka_run_group_tests_name("embedded store", one, group_embedded, NULL);
	fails += cmocka_run_group_tests_name("moto", one, group_moto, NULL);
	fails += cmocka_run_group_tests_name("moto: two gateways, items written behind", two,
					     group_moto, NULL);
	return fails != 0;
}
