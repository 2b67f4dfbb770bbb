/*
 * it_locks_wire: lock commands on the wire through the real leasegate
 * binary — pipelined writes (also while a wait answers later), inline
 * commands, a blocked client leaving behind a pipeline, broken input that
 * closes one connection and no other. Raw sockets (tests/support/rawresp.h)
 * and hiredis. Runs on the embedded store and on moto's DynamoDB, as
 * it_locks.
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
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *o = gw_connect(&g);
	long long th = lh_acquire(o, "held", 2000);
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
		 ":%lld, \"mine\", :1, \"heartbeat\", \"lease\"]",
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
		 "\"mine\", :0, \"heartbeat\", \"lease\"]",
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
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	struct raw *r = raw_open(g.port);
	raw_write(r, req, sizeof(req) - 1);
	long long t = raw_int_of(raw_reply(r, 5000));
	snprintf(want, sizeof(want),
		 "[\"held\", :1, \"holder\", \"two words\", \"lease-ms\", :2000, "
		 "\"fencing-token\", :%lld, \"mine\", :1, \"heartbeat\", \"lease\"]",
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
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *c = gw_connect(&g);
	lh_acquire(a, "busy", 2000);
	for (size_t i = 0; i + 6 <= sizeof(pings); i += 6)
		memcpy(pings + i, "PING\r\n", 6);
	struct raw *b = raw_open(g.port);
	raw_send(b, "LOCK.ACQUIRE busy 2000 WAIT 0");
	lh_await_info(c, "waits", 1);
	raw_write(b, pings, sizeof(pings) - sizeof(pings) % 6);
	raw_close(b);
	lh_await_info(c, "waits", 0); /* before the fix: waits stayed 1 */
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
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *c = gw_connect(&g);
	long long t = lh_acquire(a, "keep", 2000);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		struct raw *b = raw_open(g.port);
		char name[32];
		snprintf(name, sizeof(name), "LOCK.ACQUIRE mine%zu 10000", i);
		raw_int(b, name);
		raw_send(b, "LOCK.ACQUIRE keep 2000 WAIT 0"); /* queued behind a */
		lh_await_info(c, "waits", 1);
		raw_write(b, broken[i], strlen(broken[i]));
		/* the wait is still on: the broken bytes are read after it */
		raw_close(b);
		lh_await_info(c, "waits", 0);
		/* b's own lease went with it, once its release is answered */
		lh_await_settled(c, 1);
		snprintf(name, sizeof(name), "mine%zu", i);
		lh_acquire(c, name, 1000);
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
		lh_await_settled(c, 1);
		lh_acquire(c, "gone", 1000);
		gw_expect_int(c, 1, "LOCK.RELEASE gone");
	}
	gw_expect_int(a, 1, "LOCK.RENEW keep");
	lh_expect_state(a, "keep", 1, "gw-a", 2000, t, 1);
	gw_expect_nil(c, "LOCK.ACQUIRE keep 2000");
	gw_expect_int(a, 1, "LOCK.RELEASE keep");
	redisFree(a);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* SIGTERM releases every lease and exits 0; on moto another gateway on
 * the same table sees the locks free. */
#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pipelining),
		T(test_inline_commands),
		T(test_malformed_closes_one),
		T(test_blocked_client_leaving_behind_a_pipeline),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	int fails = cmocka_run_group_tests_name("embedded store", tests, lh_group_embedded, NULL);
	fails += cmocka_run_group_tests_name("moto", tests, lh_group_moto, NULL);
	return fails != 0;
}
