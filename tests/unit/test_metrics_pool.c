/*
 * test_metrics_pool: gateway/metrics_pool, the DynamoDB HTTP client's
 * figures in /metrics (through metrics_render) and in INFO dynamodb, from
 * stats set by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/obs/metrics.h"
#include "gateway/obs/metrics_pool.h"

static struct store_dynamodb_stats pool_stats(void)
{
	struct store_dynamodb_stats st;
	memset(&st, 0, sizeof(st));
	st.pool.max_active = 256;
	st.pool.active = 200;
	st.pool.queued = 7;
	st.pool.queued_urgent = 5;
	st.pool.started = 1000;
	st.pool.wait_sum_us = 2500000;
	st.pool.wait_max_us = 125000;
	st.shed = 42;
	return st;
}

static void expect_line(const char *text, const char *line)
{
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strstr(text, want) == NULL)
		fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_metrics_series(void **state)
{
	struct obs o = {0};
	struct store_dynamodb_stats st = pool_stats();
	struct metrics_src m = {.obs = &o, .table = "Lo\"cks", .ddb = &st, .version = "v"};
	struct buf out;
	buf_init(&out, 1 << 20);
	metrics_render(&m, &out);
	buf_printf(&out, "%c", '\0');
	const char *t = out.buf;
	const char *c = "{db_collection_name=\"Lo\\\"cks\"";
	char line[256];
	static const struct {
		const char *name, *labels, *value;
	} want[] = {
		{"leasegate_dynamodb_requests_in_flight", "", "200"},
		{"leasegate_dynamodb_requests_in_flight_max", "", "256"},
		{"leasegate_dynamodb_requests_queued", ",priority=\"urgent\"", "5"},
		{"leasegate_dynamodb_requests_queued", ",priority=\"normal\"", "2"},
		{"leasegate_dynamodb_queue_wait_seconds_sum", "", "2.500000"},
		{"leasegate_dynamodb_queue_wait_seconds_count", "", "1000"},
		{"leasegate_dynamodb_queue_wait_max_seconds", "", "0.125000"},
		{"leasegate_dynamodb_requests_refused_total", "", "42"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(line, sizeof(line), "%s%s%s} %s", want[i].name, c, want[i].labels,
			 want[i].value);
		expect_line(t, line);
	}
	expect_line(t, "# TYPE leasegate_dynamodb_queue_wait_seconds summary");
	expect_line(t, "# TYPE leasegate_dynamodb_requests_refused_total counter");
	buf_free(&out);
}

/* Not on the embedded store: no DynamoDB figures at all. */
static void test_no_pool_without_dynamodb(void **state)
{
	struct obs o = {0};
	struct metrics_src m = {.obs = &o, .table = "", .ddb = NULL, .version = "v"};
	struct buf out;
	buf_init(&out, 1 << 20);
	metrics_render(&m, &out);
	buf_printf(&out, "%c", '\0');
	assert_null(strstr(out.buf, "leasegate_dynamodb_requests_in_flight"));
	buf_free(&out);
}

struct lines {
	char text[1024];
};

static void on_line(void *arg, const char *key, long long value)
{
	struct lines *l = arg;
	size_t n = strlen(l->text);
	snprintf(l->text + n, sizeof(l->text) - n, "%s:%lld\n", key, value);
}

static void test_info_lines(void **state)
{
	struct store_dynamodb_stats st = pool_stats();
	struct lines l = {""};
	metrics_ddb_pool_info(&st, on_line, &l);
	assert_string_equal(l.text, "max_in_flight:256\n"
				    "in_flight:200\n"
				    "queued:7\n"
				    "queued_urgent:5\n"
				    "queue_wait_us_total:2500000\n"
				    "queue_wait_us_max:125000\n"
				    "requests_started:1000\n"
				    "refused_queue_full:42\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_series),
		cmocka_unit_test(test_no_pool_without_dynamodb),
		cmocka_unit_test(test_info_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
