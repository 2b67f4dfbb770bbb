/*
 * test_metrics: gateway/metrics, the Prometheus text of /metrics, from
 * counters set by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gateway/obs/metrics.h"
#include "gateway/redis/commands.h"

static char *render(const struct metrics_src *m, struct buf *out)
{
	buf_init(out, 1 << 20);
	metrics_render(m, out);
	assert_false(buf_failed(out));
	buf_printf(out, "%c", '\0');
	return out->buf;
}

static void expect_line(const char *text, const char *line)
{
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strstr(text, want) == NULL)
		fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_lock_metrics_as_the_reference_names_them(void **state)
{
	struct obs o = {0};
	o.acquisitions[0] = 2;
	o.acquisitions[1] = 1;
	obs_count(&o.renewals, "ok");
	obs_count(&o.renewals, "ok");
	obs_count(&o.renewals, "ThrottlingException");
	obs_count(&o.losses, "taken_over");
	obs_count(&o.contention_retries, "RequestTimeout");
	struct metrics_src m = {.obs = &o, .table = "locks", .sessions = 3, .version = "1.2.3"};
	m.lt.leases = 4;
	m.lt.waits = 5;
	struct buf out;
	const char *t = render(&m, &out);
	expect_line(t, "# TYPE leasegate_lock_acquisitions_total counter");
	expect_line(t, "leasegate_lock_acquisitions_total{db_collection_name=\"locks\","
		       "takeover=\"false\"} 2");
	expect_line(t, "leasegate_lock_acquisitions_total{db_collection_name=\"locks\","
		       "takeover=\"true\"} 1");
	/* a renewal that worked has no error_type */
	expect_line(t, "leasegate_lock_renewals_total{db_collection_name=\"locks\"} 2");
	expect_line(t, "leasegate_lock_renewals_total{db_collection_name=\"locks\","
		       "error_type=\"ThrottlingException\"} 1");
	expect_line(t, "leasegate_lock_losses_total{db_collection_name=\"locks\","
		       "loss_reason=\"taken_over\"} 1");
	expect_line(t, "leasegate_lock_contention_retries_total{db_collection_name=\"locks\","
		       "error_type=\"RequestTimeout\"} 1");
	expect_line(t, "leasegate_sessions 3");
	expect_line(t, "leasegate_leases_held{db_collection_name=\"locks\"} 4");
	expect_line(t, "leasegate_lock_waits{db_collection_name=\"locks\"} 5");
	expect_line(t, "leasegate_build_info{version=\"1.2.3\"} 1");
	assert_null(strstr(t, "db_client_operation_duration")); /* embedded: no DynamoDB */
	buf_free(&out);
}

/* The embedded store has no table: its series have no db_collection_name
 * rather than an empty one. */
/* --heartbeat replica: the session's heartbeats, their answers by outcome,
 * its members and groups; none of it in per-lease mode. */
static void test_replica_session_metrics(void **state)
{
	struct obs o = {0};
	o.session_beats = 7;
	for (int i = 0; i < 5; i++)
		obs_count(&o.session_answers, "ok");
	obs_count(&o.session_answers, "refused");
	obs_count(&o.session_answers, "ThrottlingException");
	struct metrics_src m = {.obs = &o, .table = "locks", .version = "1"};
	struct buf out;
	const char *t = render(&m, &out);
	assert_null(strstr(t, "leasegate_replica_"));
	buf_free(&out);
	m.replica_session = true;
	m.session_members = 1000;
	m.session_groups = 2;
	t = render(&m, &out);
	expect_line(t, "# TYPE leasegate_replica_heartbeats_total counter");
	expect_line(t, "leasegate_replica_heartbeats_total{db_collection_name=\"locks\"} 7");
	expect_line(t, "# TYPE leasegate_replica_heartbeat_answers_total counter");
	expect_line(t, "leasegate_replica_heartbeat_answers_total{db_collection_name=\"locks\","
		       "outcome=\"ok\"} 5");
	expect_line(t, "leasegate_replica_heartbeat_answers_total{db_collection_name=\"locks\","
		       "outcome=\"refused\"} 1");
	expect_line(t, "leasegate_replica_heartbeat_answers_total{db_collection_name=\"locks\","
		       "outcome=\"ThrottlingException\"} 1");
	expect_line(t, "# TYPE leasegate_replica_session_members gauge");
	expect_line(t, "leasegate_replica_session_members{db_collection_name=\"locks\"} 1000");
	expect_line(t, "# TYPE leasegate_replica_session_groups gauge");
	expect_line(t, "leasegate_replica_session_groups{db_collection_name=\"locks\"} 2");
	assert_null(strstr(t, "leasegate_replica_sweep_")); /* no sweep given */
	buf_free(&out);
	m.lt.sweeping = true;
	m.lt.sweep = (struct lt_sweep_stats){.periods = 3,
					     .batches = 40,
					     .items = 3999,
					     .failed = 2,
					     .lost = 5,
					     .orphans = 1,
					     .last_period_ms = 301250};
	t = render(&m, &out);
	expect_line(t, "# TYPE leasegate_replica_sweep_reads_total counter");
	expect_line(t, "leasegate_replica_sweep_reads_total{db_collection_name=\"locks\","
		       "outcome=\"ok\"} 38");
	expect_line(t, "leasegate_replica_sweep_reads_total{db_collection_name=\"locks\","
		       "outcome=\"error\"} 2");
	expect_line(t, "leasegate_replica_sweep_items_total{db_collection_name=\"locks\"} 3999");
	expect_line(t, "leasegate_replica_sweep_losses_total{db_collection_name=\"locks\"} 5");
	expect_line(t, "leasegate_replica_sweep_orphans_total{db_collection_name=\"locks\"} 1");
	expect_line(t, "# TYPE leasegate_replica_sweep_period_seconds gauge");
	expect_line(t,
		    "leasegate_replica_sweep_period_seconds{db_collection_name=\"locks\"} 301.250");
	buf_free(&out);
}

static void test_embedded_store_no_empty_label(void **state)
{
	struct obs o = {0};
	obs_count(&o.losses, "expired");
	struct metrics_src m = {.obs = &o, .table = "", .version = "v"};
	m.lt.leases = 2;
	struct buf out;
	const char *t = render(&m, &out);
	expect_line(t, "leasegate_leases_held 2");
	expect_line(t, "leasegate_lock_losses_total{loss_reason=\"expired\"} 1");
	expect_line(t, "leasegate_lock_acquisitions_total{takeover=\"false\"} 0");
	assert_null(strstr(t, "=\"\""));
	assert_null(strstr(t, "db_collection_name"));
	buf_free(&out);
}

/* Connections and commands by name and outcome; the process_* metrics. */
static void test_connections_commands_process(void **state)
{
	struct cmd_table *cmds = cmd_table_new();
	assert_non_null(cmds);
	assert_int_equal(cmd_add_builtins(cmds), 0);
	struct obs o = {0};
	struct metrics_src m = {.obs = &o,
				.table = "locks",
				.version = "v",
				.connections_received = 7,
				.connections_rejected = 2,
				.cmds = cmds,
				.process = true};
	struct buf out;
	const char *t = render(&m, &out);
	expect_line(t, "leasegate_connections_received_total 7");
	expect_line(t, "leasegate_connections_rejected_total 2");
	expect_line(t, "# TYPE leasegate_commands_total counter");
	expect_line(t, "# TYPE process_cpu_seconds_total counter");
	assert_non_null(strstr(t, "\nprocess_resident_memory_bytes "));
	assert_non_null(strstr(t, "\nprocess_open_fds "));
	const char *st = strstr(t, "\nprocess_start_time_seconds ");
	assert_non_null(st);
	double start = strtod(st + strlen("\nprocess_start_time_seconds "), NULL);
	assert_true(start > 1.6e9 && start <= (double)time(NULL) + 1); /* seconds since 1970 */
	buf_free(&out);
	cmd_table_free(cmds);
}

/* The DynamoDB store's clock offset and throttling are gauges/counters. */
static void test_dynamodb_clock_offset(void **state)
{
	struct obs o = {0};
	struct store_dynamodb_stats st = {0};
	st.clock_offset_ms = -1500;
	st.throttled = 3;
	struct metrics_src m = {.obs = &o, .table = "locks", .version = "v", .ddb = &st};
	struct buf out;
	const char *t = render(&m, &out);
	expect_line(t,
		    "leasegate_dynamodb_clock_offset_seconds{db_collection_name=\"locks\"} -1.500");
	expect_line(t, "leasegate_dynamodb_throttled_total{db_collection_name=\"locks\"} 3");
	buf_free(&out);
}

static void test_label_values_escaped(void **state)
{
	struct obs o = {0};
	struct metrics_src m = {.obs = &o, .table = "a\"b\\c\nd", .version = "v"};
	struct buf out;
	const char *t = render(&m, &out);
	expect_line(t, "leasegate_leases_held{db_collection_name=\"a\\\"b\\\\c\\nd\"} 0");
	buf_free(&out);
}

/* Each family has its HELP and TYPE before its samples, and every sample
 * line is `name{labels} value` or `name value`. */
static void test_every_line_well_formed(void **state)
{
	struct obs o = {0};
	obs_count(&o.losses, "expired");
	struct store_dynamodb_stats st;
	memset(&st, 0, sizeof(st));
	st.latency[DDB_GET_ITEM][DDB_C_OK].count = 1;
	st.latency[DDB_GET_ITEM][DDB_C_OK].bucket[2] = 1;
	struct metrics_src m = {.obs = &o, .table = "t", .ddb = &st, .version = "v"};
	struct buf out;
	char *t = render(&m, &out);
	char family[128] = "";
	for (char *line = strtok(t, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char name[128];
		if (sscanf(line, "# HELP %127s", name) == 1) {
			snprintf(family, sizeof(family), "%s", name);
			continue;
		}
		if (sscanf(line, "# TYPE %127s", name) == 1) {
			assert_string_equal(name, family);
			continue;
		}
		size_t n = strcspn(line, "{ ");
		assert_true(n > 0 && strncmp(line, family, strlen(family)) == 0);
		const char *value = strrchr(line, ' ');
		assert_non_null(value);
		if (line[n] == '{')
			assert_true(value[-1] == '}');
		double v;
		assert_int_equal(sscanf(value, " %lf", &v), 1);
	}
	buf_free(&out);
}

static void test_dynamodb_histogram_cumulative(void **state)
{
	struct obs o = {0};
	struct store_dynamodb_stats st;
	memset(&st, 0, sizeof(st));
	struct ddb_latency *l = &st.latency[DDB_UPDATE_ITEM][DDB_C_OK];
	l->bucket[0] = 1;			/* <= 1 ms */
	l->bucket[3] = 2;			/* <= 10 ms */
	l->bucket[DDB_LATENCY_BUCKETS - 1] = 1; /* past 2.5 s */
	l->count = 4;
	l->sum_us = 3020500;
	st.latency[DDB_UPDATE_ITEM][DDB_C_REFUSED].count = 1;
	st.latency[DDB_UPDATE_ITEM][DDB_C_REFUSED].bucket[1] = 1;
	st.retries = 7;
	struct metrics_src m = {.obs = &o, .table = "t", .ddb = &st, .version = "v"};
	struct buf out;
	const char *t = render(&m, &out);
#define S(le)                                                                                      \
	"db_client_operation_duration_seconds_bucket{db_system_name=\"aws.dynamodb\","             \
	"db_collection_name=\"t\",db_operation_name=\"UpdateItem\",outcome=\"ok\",le=\"" le "\"}"
	expect_line(t, "# TYPE db_client_operation_duration_seconds histogram");
	expect_line(t, S("0.001") " 1");
	expect_line(t, S("0.0025") " 1");
	expect_line(t, S("0.005") " 1");
	expect_line(t, S("0.01") " 3");
	expect_line(t, S("2.5") " 3");
	expect_line(t, S("+Inf") " 4");
#undef S
	expect_line(t, "db_client_operation_duration_seconds_sum{db_system_name=\"aws.dynamodb\","
		       "db_collection_name=\"t\",db_operation_name=\"UpdateItem\",outcome=\"ok\"} "
		       "3.020500");
	expect_line(t,
		    "db_client_operation_duration_seconds_count{db_system_name=\"aws.dynamodb\","
		    "db_collection_name=\"t\",db_operation_name=\"UpdateItem\",outcome=\"ok\"} 4");
	expect_line(t, "db_client_operation_duration_seconds_count{db_system_name=\"aws.dynamodb\","
		       "db_collection_name=\"t\",db_operation_name=\"UpdateItem\","
		       "outcome=\"refused\"} 1");
	/* series that never happened are not written */
	assert_null(strstr(t, "db_operation_name=\"GetItem\""));
	expect_line(t, "leasegate_dynamodb_retries_total{db_collection_name=\"t\"} 7");
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_metrics_as_the_reference_names_them),
		cmocka_unit_test(test_label_values_escaped),
		cmocka_unit_test(test_replica_session_metrics),
		cmocka_unit_test(test_embedded_store_no_empty_label),
		cmocka_unit_test(test_connections_commands_process),
		cmocka_unit_test(test_dynamodb_clock_offset),
		cmocka_unit_test(test_every_line_well_formed),
		cmocka_unit_test(test_dynamodb_histogram_cumulative),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
