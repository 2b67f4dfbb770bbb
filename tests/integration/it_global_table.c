/*
 * it_global_table: what the lock table can promise. A DynamoDB global
 * table (DescribeTable lists Replicas) replicates between regions with
 * last-writer-wins, so the real binary refuses it at start with a message
 * that says why, unless --allow-global-table; INFO dynamodb and /metrics
 * show the region and whether the table is global; an AWS endpoint in
 * another region than the signing one is refused.
 *
 * moto (5.2) accepts UpdateTable's ReplicaUpdates but keeps no replica
 * (its DescribeTable shows neither Replicas nor GlobalTableVersion), so
 * the global table is the tests' DynamoDB stand-in
 * (tests/support/ddb_standin*, its replicas option); the table that is not
 * global is moto's. Without LG_MOTO the moto test fails.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/aclhelp.h"
#include "tests/support/ddb_standin_thread.h"
#include "tests/support/gw.h"

/* The INFO dynamodb section as text (malloc'd). */
static char *info_dynamodb(const struct gw *g)
{
	redisContext *c = gw_connect(g);
	redisReply *r = gw_cmd(c, "INFO dynamodb");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	char *text = strdup(r->str);
	freeReplyObject(r);
	redisFree(c);
	return text;
}

/* A gateway on the stand-in's table "locks" (as a global table with
 * replicas in us-east-1 and eu-west-1), with more options. */
static void spawn_on_standin(struct gw *g, const struct standin_thread *t, struct gw_port *admin,
			     const char *more)
{
	setenv("AWS_ACCESS_KEY_ID", "AKIDGLOBALTEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "global-test-secret", 1);
	*admin = gw_free_port_arg();
	if (more != NULL)
		gw_spawn(g, NULL, "--table", "locks", "--region", "us-east-1", "--endpoint", t->url,
			 "--admin-port", admin->arg, more, NULL);
	else
		gw_spawn(g, NULL, "--table", "locks", "--region", "us-east-1", "--endpoint", t->url,
			 "--admin-port", admin->arg, NULL);
}

static void test_global_table_refused_at_start(void **state)
{
	struct standin_thread t;
	struct standin_options o = {.min_ms = 1, .max_ms = 2, .replicas = "us-east-1,eu-west-1"};
	assert_true(standin_thread_start(&t, 0, &o));
	struct gw g;
	struct gw_port admin;
	spawn_on_standin(&g, &t, &admin, NULL);
	int rc = gw_wait(&g);
	standin_thread_stop(&t);
	assert_true(rc > 0); /* exited by itself (-1: killed after 10 s) */
	/* in the log, and again in the exit's last word */
	assert_true(gw_log_count(&g, "table locks is a DynamoDB global table (replicas in "
				     "us-east-1,eu-west-1)") >= 1);
	assert_true(gw_log_count(&g, "last-writer-wins") >= 1);
	assert_true(gw_log_count(&g, "start with --allow-global-table only if all use region "
				     "us-east-1") >= 1);
}

static void test_global_table_allowed_and_shown(void **state)
{
	struct standin_thread t;
	struct standin_options o = {.min_ms = 1, .max_ms = 2, .replicas = "us-east-1,eu-west-1"};
	assert_true(standin_thread_start(&t, 0, &o));
	struct gw g;
	struct gw_port admin;
	spawn_on_standin(&g, &t, &admin, "--allow-global-table");
	for (int i = 0; i < 400 && !gw_can_connect(g.port); i++)
		gw_sleep_ms(25);
	redisContext *c = gw_connect(&g);
	redisReply *r = NULL;
	for (int i = 0; i < 200; i++) { /* until the store is open */
		r = gw_cmd(c, "PING");
		if (r->type == REDIS_REPLY_STATUS)
			break;
		freeReplyObject(r);
		r = NULL;
		gw_sleep_ms(25);
	}
	assert_non_null(r);
	freeReplyObject(r);
	long long tok = 0;
	r = gw_cmd(c, "LOCK.ACQUIRE g 3000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	tok = r->integer;
	freeReplyObject(r);
	assert_true(tok > 0);
	redisFree(c);
	char *info = info_dynamodb(&g);
	assert_non_null(strstr(info, "\r\nregion:us-east-1\r\n"));
	assert_non_null(strstr(info, "\r\nglobal_table:yes\r\n"));
	assert_non_null(strstr(info, "\r\nreplica_regions:us-east-1,eu-west-1\r\n"));
	free(info);
	const char *m = acl_metrics(admin.n);
	assert_non_null(strstr(m,
			       "leasegate_dynamodb_info{db_collection_name=\"locks\",region=\"us-"
			       "east-1\",global_table=\"yes\",replica_regions=\"us-east-1,eu-west-"
			       "1\"} 1\n"));
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	standin_thread_stop(&t);
	assert_int_equal(gw_log_count(&g, "opened with --allow-global-table"), 1);
}

/* moto's table is not global: INFO and /metrics say so, with the region
 * and the table's ARN; the start log names the region. */
static void test_moto_table_is_not_global(void **state)
{
	struct gw g;
	char table[64], want[256];
	assert_true(gw_have_moto());
	snprintf(table, sizeof(table), "%s", gw_new_table());
	struct gw_port admin = gw_free_port_arg();
	gw_start(&g, table, "--admin-port", admin.arg, NULL);
	char *info = info_dynamodb(&g);
	assert_non_null(strstr(info, "\r\nregion:us-east-1\r\n"));
	assert_non_null(strstr(info, "\r\nglobal_table:no\r\n"));
	snprintf(want, sizeof(want), "\r\ntable_arn:arn:aws:dynamodb:us-east-1:");
	assert_non_null(strstr(info, want));
	free(info);
	const char *m = acl_metrics(admin.n);
	snprintf(want, sizeof(want),
		 "leasegate_dynamodb_info{db_collection_name=\"%s\",region=\"us-east-1\","
		 "global_table=\"no\",replica_regions=\"\"} 1\n",
		 table);
	assert_non_null(strstr(m, want));
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	snprintf(want, sizeof(want),
		 "DynamoDB table %s open in region us-east-1 (not a global table", table);
	assert_int_equal(gw_log_count(&g, want), 1);
	assert_int_equal(gw_log_count(&g, "(region us-east-1; credentials: trying the environment"),
			 1);
}

/* An AWS endpoint in another region than the signing region: refused at
 * start (no request is sent). */
static void test_endpoint_in_another_region_refused(void **state)
{
	struct gw g;
	setenv("AWS_ACCESS_KEY_ID", "AKIDGLOBALTEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "global-test-secret", 1);
	gw_spawn(&g, NULL, "--table", "locks", "--region", "us-east-1", "--endpoint",
		 "https://dynamodb.eu-west-1.amazonaws.com", NULL);
	assert_true(gw_wait(&g) > 0); /* at once, by itself */
	assert_true(gw_log_count(&g, "endpoint dynamodb.eu-west-1.amazonaws.com is in region "
				     "eu-west-1, requests are signed for us-east-1") >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_global_table_refused_at_start, gw_teardown),
		cmocka_unit_test_teardown(test_global_table_allowed_and_shown, gw_teardown),
		cmocka_unit_test_teardown(test_moto_table_is_not_global, gw_teardown),
		cmocka_unit_test_teardown(test_endpoint_in_another_region_refused, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
