/*
 * test_events: the core's events as the gateway's log lines
 * (gateway/events), and the line format of gateway/log: fields as JSON
 * keys of their own, key=value after the message in text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "gateway/obs/events.h"
#include "gateway/obs/log.h"

static const struct ls_who worker = {.id = 12, .client = "10.0.0.5:4411", .name = "worker-1"};

static void test_leads_names_the_session(void **state)
{
	struct obs_event ev = {.id = OBS_LEADS,
			       .lock = "nightly-report",
			       .table = "locks",
			       .holder = "gw-a",
			       .token = 7};
	struct event_line l;
	events_describe(&ev, &worker, &l);
	assert_string_equal(l.msg,
			    "session 12 (10.0.0.5:4411, name=worker-1) leads nightly-report, "
			    "token 7");
	assert_null(strstr(l.msg, "this process"));
	events_describe(&ev, NULL, &l);
	assert_string_equal(l.msg, "a client session leads nightly-report, token 7");
}

/* Every reason of 46 is a gateway word, never the core's. */
static void test_reasons_are_gateway_words(void **state)
{
	static const struct {
		const char *core, *gateway, *words;
	} cases[] = {
		{"lease_lost", "lease_lost", "its lease was lost"},
		{"work_returned", "resigned", "it resigned (LEADER.RESIGN)"},
		{"cancelled", "session_ended", "its session closed or stopped campaigning"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct obs_event ev = {
			.id = OBS_NO_LONGER_LEADS, .lock = "j", .reason = cases[i].core};
		struct event_line l;
		events_describe(&ev, &worker, &l);
		assert_non_null(strstr(l.msg, cases[i].words));
		bool found = false;
		for (size_t k = 0; k < l.n; k++)
			if (strcmp(l.f[k].key, "?reason") == 0) {
				assert_string_equal(l.f[k].str, cases[i].gateway);
				found = true;
			}
		assert_true(found);
	}
	struct obs_event lost = {.id = OBS_LEASE_LOST, .lock = "j", .reason = "taken_over"};
	struct event_line l;
	events_describe(&lost, &worker, &l);
	assert_string_equal(l.msg, "session 12 (10.0.0.5:4411, name=worker-1) lost its lease on j: "
				   "another holder took the lock over");
}

/* JSON: the message alone in msg, each field a key; numbers as numbers. */
static void test_json_fields_are_keys(void **state)
{
	struct obs_event ev = {
		.id = OBS_LEADS, .lock = "j", .table = "embedded", .holder = "me", .token = 1};
	struct event_line l;
	events_describe(&ev, &worker, &l);
	char line[4096];
	size_t n = log_format_line(line, sizeof(line), true, LOG_LVL_INFO, "T", l.msg, l.f, l.n);
	assert_int_equal(n, strlen(line));
	assert_int_equal(line[n - 1], '\n');
	cJSON *j = cJSON_Parse(line);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "msg")->valuestring,
			    "session 12 (10.0.0.5:4411, name=worker-1) leads j, token 1");
	assert_int_equal(cJSON_GetObjectItem(j, "event_id")->valueint, 45);
	assert_string_equal(cJSON_GetObjectItem(j, "lock")->valuestring, "j");
	assert_string_equal(cJSON_GetObjectItem(j, "table")->valuestring, "embedded");
	assert_string_equal(cJSON_GetObjectItem(j, "holder")->valuestring, "me");
	assert_int_equal(cJSON_GetObjectItem(j, "token")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(j, "session")->valueint, 12);
	assert_string_equal(cJSON_GetObjectItem(j, "client")->valuestring, "10.0.0.5:4411");
	assert_string_equal(cJSON_GetObjectItem(j, "client_name")->valuestring, "worker-1");
	assert_null(cJSON_GetObjectItem(j, "reason")); /* absent, not empty */
	assert_null(strstr(cJSON_GetObjectItem(j, "msg")->valuestring, "event="));
	cJSON_Delete(j);
}

/* Events 50 and 51 (a replica's heartbeat session started, ended): no
 * lock and no client session; the session's key, the replica id and, for
 * 51, why and how many leases were lost, in the message and as fields, in
 * both formats. */
static void test_session_start_and_end(void **state)
{
	const char *key = "SESSION#gw-a#0123456789abcdef0123456789abcdef";
	struct obs_event start = {.id = OBS_SESSION_STARTED,
				  .table = "locks",
				  .holder = "gw-a",
				  .hb_session = key,
				  .replica = "gw-a"};
	struct event_line l;
	events_describe(&start, NULL, &l);
	assert_string_equal(l.msg, "replica gw-a started its heartbeat session "
				   "SESSION#gw-a#0123456789abcdef0123456789abcdef: leases taken "
				   "from now on are held in it (--heartbeat replica)");
	char line[4096];
	log_format_line(line, sizeof(line), false, LOG_LVL_INFO, "T", l.msg, l.f, l.n);
	assert_non_null(strstr(line, "T info  replica gw-a started"));
	assert_non_null(strstr(line,
			       " event_id=50 table=locks holder=gw-a heartbeat_session="
			       "SESSION#gw-a#0123456789abcdef0123456789abcdef replica_id=gw-a\n"));
	assert_null(strstr(line, " lock="));
	assert_null(strstr(line, "leases_lost"));
	struct obs_event end = {.id = OBS_SESSION_ENDED,
				.table = "locks",
				.holder = "gw-a",
				.reason = "marked_dead",
				.hb_session = key,
				.replica = "gw-a",
				.detail = "marked dead by gw-b",
				.leases = 3};
	events_describe(&end, NULL, &l);
	assert_string_equal(l.msg,
			    "replica gw-a's heartbeat session "
			    "SESSION#gw-a#0123456789abcdef0123456789abcdef ended (marked dead "
			    "by gw-b): its 3 leases held are lost; the next acquire starts a "
			    "new session");
	log_format_line(line, sizeof(line), true, LOG_LVL_WARN, "T", l.msg, l.f, l.n);
	cJSON *j = cJSON_Parse(line);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "level")->valuestring, "warn");
	assert_int_equal(cJSON_GetObjectItem(j, "event_id")->valueint, 51);
	assert_string_equal(cJSON_GetObjectItem(j, "reason")->valuestring, "marked_dead");
	assert_string_equal(cJSON_GetObjectItem(j, "heartbeat_session")->valuestring, key);
	assert_string_equal(cJSON_GetObjectItem(j, "replica_id")->valuestring, "gw-a");
	assert_int_equal(cJSON_GetObjectItem(j, "leases_lost")->valueint, 3);
	assert_null(cJSON_GetObjectItem(j, "lock"));
	assert_null(cJSON_GetObjectItem(j, "session"));
	cJSON_Delete(j);
}

/* Text: key=value after the message, a value with a space quoted; JSON
 * escapes quotes and control bytes in values. */
static void test_text_and_escaping(void **state)
{
	struct log_field f[] = {LOG_STR("lock", "a b"), LOG_NUM("token", 3),
				LOG_STR("?absent", NULL), LOG_STR("error", "say \"hi\"\n")};
	char line[1024];
	log_format_line(line, sizeof(line), false, LOG_LVL_WARN, "T", "msg here", f, 4);
	assert_string_equal(line,
			    "T warn  msg here lock=\"a b\" token=3 error=\"say \\\"hi\\\" \"\n");
	log_format_line(line, sizeof(line), true, LOG_LVL_WARN, "T", "m", f, 4);
	cJSON *j = cJSON_Parse(line);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "error")->valuestring, "say \"hi\"\n");
	assert_null(cJSON_GetObjectItem(j, "absent"));
	cJSON_Delete(j);
	/* a line longer than the buffer is cut, still one line of valid JSON */
	static char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	struct log_field g[] = {LOG_STR("a", big), LOG_STR("b", big)};
	char small[512];
	size_t n = log_format_line(small, sizeof(small), true, LOG_LVL_INFO, "T", big, g, 2);
	assert_true(n < sizeof(small));
	assert_int_equal(small[n - 1], '\n');
	assert_int_equal(small[n - 2], '}');
}

/* --log-file that cannot be opened: the reason, and what to do. */
static void test_log_open_reasons(void **state)
{
	char err[512] = "";
	assert_false(log_open("/nonexistent-dir/x/leasegate.log", LOG_LVL_INFO, false, err,
			      sizeof(err)));
	assert_non_null(strstr(err, "cannot open /nonexistent-dir/x/leasegate.log for appending"));
	assert_non_null(strstr(err, "No such file or directory (create its directory first)"));
	static char longpath[700];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	assert_false(log_open(longpath, LOG_LVL_INFO, false, err, sizeof(err)));
	assert_non_null(strstr(err, "the path is longer than"));
	/* stderr is always there */
	assert_true(log_open(NULL, LOG_LVL_INFO, false, err, sizeof(err)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leads_names_the_session),
		cmocka_unit_test(test_reasons_are_gateway_words),
		cmocka_unit_test(test_json_fields_are_keys),
		cmocka_unit_test(test_session_start_and_end),
		cmocka_unit_test(test_text_and_escaping),
		cmocka_unit_test(test_log_open_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
