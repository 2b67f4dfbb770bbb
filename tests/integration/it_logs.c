/*
 * it_logs: the real leasegate's log lines as an operator reads them:
 * JSON lines whose fields are keys of their own (event_id, lock, session,
 * client, client_name, token, reason), messages about client sessions in
 * the gateway's words, and the shutdown's summary of what it released.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tests/support/gw.h"

/* The first JSON line of g's log whose msg contains needle (NULL if none);
 * fails the test on a line that is not JSON. */
static cJSON *find_line(const struct gw *g, const char *needle)
{
	FILE *f = fopen(g->log, "r");
	assert_non_null(f);
	char line[8192];
	cJSON *found = NULL;
	while (found == NULL && fgets(line, sizeof(line), f)) {
		if (line[0] != '{')
			continue; /* the test harness's own lines */
		cJSON *j = cJSON_Parse(line);
		if (j == NULL)
			fail_msg("not JSON: %s", line);
		cJSON *msg = cJSON_GetObjectItem(j, "msg");
		if (cJSON_IsString(msg) && strstr(msg->valuestring, needle))
			found = j;
		else
			cJSON_Delete(j);
	}
	fclose(f);
	return found;
}

static void test_leader_lines_are_structured(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--log-format", "json", NULL);
	redisContext *c = gw_connect(&g);
	freeReplyObject(gw_cmd(c, "CLIENT SETNAME worker-1"));
	gw_expect_int(c, 1, "LEADER.CAMPAIGN %s %d", "nightly-report", 30000);
	redisReply *id = gw_cmd(c, "CLIENT ID");
	long long sid = id->integer;
	freeReplyObject(id);
	redisReply *r = gw_cmd(c, "LEADER.RESIGN %s", "nightly-report");
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);

	char want[128];
	snprintf(want, sizeof(want), "session %lld (127.0.0.1:", sid);
	cJSON *j = find_line(&g, " leads nightly-report, token 1");
	assert_non_null(j);
	const char *msg = cJSON_GetObjectItem(j, "msg")->valuestring;
	assert_non_null(strstr(msg, want));
	assert_non_null(strstr(msg, "name=worker-1)"));
	assert_null(strstr(msg, "event="));
	assert_int_equal(cJSON_GetObjectItem(j, "event_id")->valueint, 45);
	assert_string_equal(cJSON_GetObjectItem(j, "lock")->valuestring, "nightly-report");
	assert_int_equal(cJSON_GetObjectItem(j, "token")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(j, "session")->valueint, sid);
	assert_string_equal(cJSON_GetObjectItem(j, "client_name")->valuestring, "worker-1");
	assert_non_null(strstr(cJSON_GetObjectItem(j, "client")->valuestring, "127.0.0.1:"));
	assert_string_equal(cJSON_GetObjectItem(j, "level")->valuestring, "info");
	cJSON_Delete(j);

	j = find_line(&g, " no longer leads nightly-report");
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "event_id")->valueint, 46);
	assert_string_equal(cJSON_GetObjectItem(j, "reason")->valuestring, "resigned");
	cJSON_Delete(j);
	assert_int_equal(gw_log_count(&g, "work_returned"), 0);
	assert_int_equal(gw_log_count(&g, "this process leads"), 0);
}

/* SIGTERM with leases held: the last lines say how many were released. */
static void test_shutdown_summary(void **state)
{
	struct gw g;
	gw_start(&g, NULL, NULL);
	redisContext *c = gw_connect(&g);
	gw_expect_int(c, 1, "LOCK.ACQUIRE %s %d", "a", 30000);
	gw_expect_int(c, 1, "LOCK.ACQUIRE %s %d", "b", 30000);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	redisFree(c);
	assert_int_equal(gw_log_count(&g, "shutting down: closing 1 client sessions, releasing 2 "
					  "leases"),
			 1);
	assert_int_equal(gw_log_count(&g, "stopped: 1 client sessions closed, 2 leases released "
					  "sessions=1 leases_released=2 leases_not_released=0"),
			 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_leader_lines_are_structured, gw_teardown),
		cmocka_unit_test_teardown(test_shutdown_summary, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
