/*
 * it_scale_pool: back-pressure end to end. The real binary with
 * --ddb-max-in-flight 1 against the DynamoDB stand-in
 * (tests/support/ddb_standin.c, in a thread of this process) answering
 * after 300 ms: of three acquires sent at once (three connections), the
 * first is in flight,
 * the second waits for the slot, the third is answered -TRYAGAIN at once;
 * INFO dynamodb counts it, and shows the option in force.
 */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <event2/event.h>

#include "tests/support/ddb_standin_thread.h"
#include "tests/support/gwproc.h"

static pid_t gw = -1; /* stopped by the teardown, whatever the test did */

static int stop_gateway(void **state)
{
	gp_stop(gw);
	gw = -1;
	return 0;
}

static long long info_field(redisContext *c, const char *section, const char *key)
{
	redisReply *r = redisCommand(c, "INFO %s", section);
	long long v = -1;
	char want[96];
	snprintf(want, sizeof want, "\n%s:", key);
	if (r && r->type == REDIS_REPLY_STRING) {
		const char *p = strstr(r->str, want);
		if (p)
			v = strtoll(p + strlen(want), NULL, 10);
	}
	freeReplyObject(r);
	return v;
}

static void test_tryagain_when_saturated(void **state)
{
	struct standin_thread t;
	struct standin_options o = {.min_ms = 300, .max_ms = 300};
	assert_true(standin_thread_start(&t, 0, &o));

	const char *bin = getenv("LG_BIN");
	assert_non_null(bin);
	int port = gp_free_port();
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	setenv("AWS_ACCESS_KEY_ID", "AKIDPOOLTEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "pool-test-secret", 1);
	const char *argv[] = {bin,	   "--port",
			      p,	   "--pg-port",
			      "0",	   "--admin-port",
			      "0",	   "--table",
			      "pooltest",  "--region",
			      "us-east-1", "--endpoint",
			      t.url,	   "--partition-key",
			      "pk",	   "--ddb-max-in-flight",
			      "1",	   NULL};
	gw = gp_spawn(argv, NULL, false, 0);
	assert_true(gw > 0);
	assert_int_equal(gp_wait_ready(gw, port), 0);
	redisContext *c = redisConnect("127.0.0.1", port);
	assert_non_null(c);
	assert_int_equal(c->err, 0);
	/* the store opens from the loop (DescribeTable, 300 ms here) */
	for (int i = 0; i < 100 && info_field(c, "dynamodb", "requests_total") < 1; i++) {
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(info_field(c, "dynamodb", "max_in_flight"), 1);

	/* three connections: a connection runs its commands one at a time */
	redisContext *cc[3];
	for (int i = 0; i < 3; i++) {
		cc[i] = redisConnect("127.0.0.1", port);
		assert_non_null(cc[i]);
		assert_int_equal(cc[i]->err, 0);
	}
	for (int i = 0; i < 3; i++) {
		char name[2] = {(char)('a' + i), '\0'};
		assert_int_equal(redisAppendCommand(cc[i], "LOCK.ACQUIRE %s 30000", name),
				 REDIS_OK);
		int done = 0;
		if (redisBufferWrite(cc[i], &done) != REDIS_OK)
			fail_msg("write: %s", cc[i]->errstr);
		struct timespec ts = {0, 20000000}; /* in this order */
		nanosleep(&ts, NULL);
	}
	redisReply *r[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(redisGetReply(cc[i], (void **)&r[i]), REDIS_OK);
	assert_int_equal(r[0]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r[1]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r[2]->type, REDIS_REPLY_ERROR);
	if (strncmp(r[2]->str, "TRYAGAIN", 8) != 0)
		fail_msg("third acquire: %s", r[2]->str);
	assert_non_null(strstr(r[2]->str, "saturated"));
	/* never sent: the client may conclude it holds nothing */
	assert_non_null(strstr(r[2]->str, "this acquire wrote nothing"));
	for (int i = 0; i < 3; i++) {
		freeReplyObject(r[i]);
		redisFree(cc[i]);
	}
	assert_int_equal(info_field(c, "dynamodb", "refused_queue_full"), 1);
	assert_true(info_field(c, "dynamodb", "queue_wait_us_max") >= 250000);
	assert_int_equal(info_field(c, "leases", "leases_held"), 2);
	struct standin_stats st;
	standin_stats(t.sd, &st);
	assert_int_equal(st.in_flight_max, 1);
	redisFree(c);
	stop_gateway(NULL);
	standin_thread_stop(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_tryagain_when_saturated, stop_gateway),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
