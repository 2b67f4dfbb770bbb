/*
 * it_traces: the real leasegate's traces, received by a local OTLP/HTTP
 * receiver (libevent's evhttp in this process) that checks what a
 * collector would get: the structure of the OTLP JSON, parentage (the
 * client's TRACEPARENT -> Lock.TryAcquire -> DynamoDB UpdateItem; a
 * Lock.Release root linked to its acquire; a shared hold's, with its
 * mode and slot) and attributes (db.system,
 * db.operation.name, db.collection.name, aws.request_id, retries); then
 * the collector gone: spans dropped and counted, the gateway unaffected.
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
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"

#define SPANS_MAX 256

static struct {
	struct event_base *base;
	struct evhttp *http;
	int port;
	cJSON *spans[SPANS_MAX];
	int nspans;
	int posts;
	char content_type[64];
	char auth[64];
} rx;

static void on_post(struct evhttp_request *req, void *arg)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	char *body = malloc(len + 1);
	evbuffer_remove(in, body, len);
	body[len] = '\0';
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
	const char *au = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	snprintf(rx.content_type, sizeof(rx.content_type), "%s", ct ? ct : "");
	snprintf(rx.auth, sizeof(rx.auth), "%s", au ? au : "");
	rx.posts++;
	cJSON *j = cJSON_Parse(body);
	free(body);
	if (strcmp(evhttp_request_get_uri(req), "/v1/traces") != 0 || j == NULL) {
		evhttp_send_reply(req, 400, "Bad Request", NULL);
		cJSON_Delete(j);
		return;
	}
	cJSON *rs, *ss, *sp;
	cJSON_ArrayForEach(rs, cJSON_GetObjectItem(j, "resourceSpans"))
		cJSON_ArrayForEach(ss, cJSON_GetObjectItem(rs, "scopeSpans")) cJSON_ArrayForEach(
			sp, cJSON_GetObjectItem(ss, "spans")) if (rx.nspans < SPANS_MAX)
			rx.spans[rx.nspans++] = cJSON_Duplicate(sp, 1);
	cJSON_Delete(j);
	struct evbuffer *out = evbuffer_new();
	evbuffer_add_printf(out, "{}");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

static void rx_start(void)
{
	rx.base = event_base_new();
	rx.http = evhttp_new(rx.base);
	rx.port = gw_free_port();
	assert_int_equal(evhttp_bind_socket(rx.http, "127.0.0.1", (uint16_t)rx.port), 0);
	evhttp_set_gencb(rx.http, on_post, NULL);
}

static void rx_stop(void)
{
	evhttp_free(rx.http);
	event_base_free(rx.base);
	for (int i = 0; i < rx.nspans; i++)
		cJSON_Delete(rx.spans[i]);
	memset(&rx, 0, sizeof(rx));
}

/* Serves the receiver until a span named name has come (or 5 s). */
static cJSON *rx_wait_span(const char *name)
{
	long long t0 = gw_now_ms();
	while (gw_now_ms() - t0 < 5000) {
		for (int i = 0; i < rx.nspans; i++)
			if (strcmp(cJSON_GetObjectItem(rx.spans[i], "name")->valuestring, name) ==
			    0)
				return rx.spans[i];
		event_base_loop(rx.base, EVLOOP_NONBLOCK);
		gw_sleep_ms(5);
	}
	fail_msg("no span %s received", name);
	return NULL;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The value of attribute key of span s, as text ("" when absent). */
static const char *attr(const cJSON *s, const char *key)
{
	static char text[160];
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(s, "attributes"))
	{
		if (strcmp(str(a, "key"), key) != 0)
			continue;
		const cJSON *v = cJSON_GetObjectItem(a, "value");
		const cJSON *x;
		if ((x = cJSON_GetObjectItem(v, "stringValue")) != NULL ||
		    (x = cJSON_GetObjectItem(v, "intValue")) != NULL)
			snprintf(text, sizeof(text), "%s", x->valuestring);
		else
			snprintf(text, sizeof(text), "%s",
				 cJSON_IsTrue(cJSON_GetObjectItem(v, "boolValue")) ? "true"
										   : "false");
		return text;
	}
	return "";
}

/* The first span whose parent is parent_id and name name. */
static const cJSON *child_of(const char *parent_id, const char *name)
{
	for (int i = 0; i < rx.nspans; i++) {
		const char *p = str(rx.spans[i], "parentSpanId");
		if (p && strcmp(p, parent_id) == 0 && strcmp(str(rx.spans[i], "name"), name) == 0)
			return rx.spans[i];
	}
	return NULL;
}

#define CLIENT_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define CLIENT_SPAN  "00f067aa0ba902b7"
#define CLIENT_SPAN2 "00f067aa0ba902b8"

/* The first span named name with a link to span_id. */
static const cJSON *linked_to(const char *span_id, const char *name)
{
	for (int i = 0; i < rx.nspans; i++) {
		const cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(rx.spans[i], "links"), 0);
		if (l != NULL && strcmp(str(rx.spans[i], "name"), name) == 0 &&
		    strcmp(str(l, "spanId"), span_id) == 0)
			return rx.spans[i];
	}
	return NULL;
}

static void test_spans_on_moto(void **state)
{
	if (!gw_have_moto())
		fail_msg("needs moto (tests/run-integration.sh)");
	rx_start();
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rx.port);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url, 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
	setenv("OTEL_BSP_SCHEDULE_DELAY", "50", 1);
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer t0ken", 1);
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500", 1);
	struct gw g;
	struct gw_port admin = gw_free_port_arg(), pg = gw_free_port_arg();
	const char *table = gw_new_table();
	gw_start(&g, table, "--admin-port", admin.arg, "--pg-port", pg.arg, NULL);
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
	unsetenv("OTEL_BSP_SCHEDULE_DELAY");
	unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
	unsetenv("OTEL_EXPORTER_OTLP_TIMEOUT");
	assert_int_equal(gw_log_count(&g, "traces: OTLP/HTTP JSON to "), 1);

	redisContext *c = gw_connect(&g);
	gw_expect_err(c, "ERR TRACEPARENT must be a W3C traceparent",
		      "LOCK.ACQUIRE t 10000 TRACEPARENT nope");
	gw_expect_int(c, 1,
		      "LOCK.ACQUIRE t 10000 TRACEPARENT 00-" CLIENT_TRACE "-" CLIENT_SPAN "-01");
	gw_expect_int(c, 1, "LOCK.RELEASE t");
	const cJSON *acq = rx_wait_span("Lock.TryAcquire");
	const cJSON *rel = rx_wait_span("Lock.Release");
	assert_string_equal(rx.content_type, "application/json");
	assert_string_equal(rx.auth, "Bearer t0ken");
	/* the client's trace, its span the parent */
	assert_string_equal(str(acq, "traceId"), CLIENT_TRACE);
	assert_string_equal(str(acq, "parentSpanId"), CLIENT_SPAN);
	assert_string_equal(attr(acq, "leasegate.lock.name"), "t");
	assert_string_equal(attr(acq, "db.collection.name"), table);
	assert_string_equal(attr(acq, "leasegate.lock.acquired"), "true");
	assert_string_equal(attr(acq, "leasegate.lock.fencing_token"), "1");
	/* its DynamoDB request, a child */
	long long t0 = gw_now_ms();
	const cJSON *upd = NULL;
	while ((upd = child_of(str(acq, "spanId"), "UpdateItem")) == NULL &&
	       gw_now_ms() - t0 < 3000) {
		event_base_loop(rx.base, EVLOOP_NONBLOCK);
		gw_sleep_ms(5);
	}
	assert_non_null(upd);
	assert_string_equal(str(upd, "traceId"), CLIENT_TRACE);
	assert_int_equal(cJSON_GetObjectItem(upd, "kind")->valueint, 3); /* client */
	assert_string_equal(attr(upd, "db.system"), "dynamodb");
	assert_string_equal(attr(upd, "db.operation.name"), "UpdateItem");
	assert_string_equal(attr(upd, "db.collection.name"), table);
	assert_true(strlen(attr(upd, "aws.request_id")) > 0);
	assert_string_equal(attr(upd, "leasegate.dynamodb.retries"), "0");
	/* the release: a root of its own, linked to the acquire, its request under it */
	assert_null(cJSON_GetObjectItem(rel, "parentSpanId"));
	const cJSON *link = cJSON_GetArrayItem(cJSON_GetObjectItem(rel, "links"), 0);
	assert_non_null(link);
	assert_string_equal(str(link, "traceId"), CLIENT_TRACE);
	assert_string_equal(str(link, "spanId"), str(acq, "spanId"));
	t0 = gw_now_ms();
	while (child_of(str(rel, "spanId"), "UpdateItem") == NULL && gw_now_ms() - t0 < 3000) {
		event_base_loop(rx.base, EVLOOP_NONBLOCK);
		gw_sleep_ms(5);
	}
	assert_non_null(child_of(str(rel, "spanId"), "UpdateItem"));
	/* a shared hold: its acquire in the client's trace, its release
	 * linked to it */
	redisReply *sh = gw_cmd(c, "LOCK.ACQUIRE sh 10000 SHARED TRACEPARENT 00-" CLIENT_TRACE
				   "-" CLIENT_SPAN2 "-01");
	assert_int_equal(sh->type, REDIS_REPLY_ARRAY);
	freeReplyObject(sh);
	gw_expect_int(c, 1, "LOCK.RELEASE sh");
	const cJSON *sacq = NULL, *srel = NULL;
	t0 = gw_now_ms();
	while ((sacq = child_of(CLIENT_SPAN2, "Lock.TryAcquire")) == NULL ||
	       (srel = linked_to(str(sacq, "spanId"), "Lock.Release")) == NULL) {
		if (gw_now_ms() - t0 > 5000)
			fail_msg("no shared acquire and release spans");
		event_base_loop(rx.base, EVLOOP_NONBLOCK);
		gw_sleep_ms(5);
	}
	assert_string_equal(str(sacq, "traceId"), CLIENT_TRACE);
	assert_string_equal(attr(sacq, "leasegate.lock.mode"), "shared");
	assert_string_equal(attr(sacq, "leasegate.lock.acquired"), "true");
	assert_true(strlen(attr(sacq, "leasegate.lock.slot")) > 0);
	assert_string_equal(attr(srel, "leasegate.lock.released"), "true");
	assert_null(cJSON_GetObjectItem(srel, "parentSpanId"));
	/* PostgreSQL: SET leasegate.traceparent, then the locks of the session
	 * join that trace */
	char conninfo[128];
	snprintf(conninfo, sizeof(conninfo), "host=127.0.0.1 port=%d user=app dbname=locks", pg.n);
	PGconn *pc = PQconnectdb(conninfo);
	assert_int_equal(PQstatus(pc), CONNECTION_OK);
	PGresult *r = PQexec(pc, "SET leasegate.traceparent = 'nope'");
	assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22023");
	PQclear(r);
	r = PQexec(pc, "SET leasegate.traceparent = "
		       "'00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'");
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	r = PQexec(pc, "SELECT pg_try_advisory_lock(42)");
	assert_string_equal(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	PQfinish(pc);
	t0 = gw_now_ms();
	const cJSON *pgspan = NULL;
	while (pgspan == NULL && gw_now_ms() - t0 < 5000) {
		for (int i = 0; i < rx.nspans && pgspan == NULL; i++)
			if (!strcmp(str(rx.spans[i], "traceId"),
				    "0af7651916cd43dd8448eb211c80319c") &&
			    !strcmp(str(rx.spans[i], "name"), "Lock.TryAcquire"))
				pgspan = rx.spans[i];
		event_base_loop(rx.base, EVLOOP_NONBLOCK);
		gw_sleep_ms(5);
	}
	assert_non_null(pgspan);
	assert_string_equal(str(pgspan, "parentSpanId"), "b7ad6b7169203331");
	assert_non_null(child_of(str(pgspan, "spanId"), "UpdateItem"));

	/* a client span that was not sampled: nothing of that acquire */
	int before = rx.nspans;
	gw_expect_int(c, 1,
		      "LOCK.ACQUIRE u 10000 TRACEPARENT 00-" CLIENT_TRACE "-" CLIENT_SPAN "-00");
	gw_expect_int(c, 1, "LOCK.RELEASE u");
	rx_wait_span("Lock.Release"); /* the release is a root: sampled */
	for (int i = before; i < rx.nspans; i++)
		assert_string_not_equal(str(rx.spans[i], "name"), "Lock.TryAcquire");

	/* the collector gone: spans dropped and counted, commands answered */
	rx_stop();
	for (int i = 0; i < 5; i++) {
		gw_expect_int(c, 1, "LOCK.ACQUIRE d%d 10000", i);
		gw_expect_int(c, 1, "LOCK.RELEASE d%d", i);
	}
	gw_sleep_ms(400);
	redisFree(c);
	char cmd[128], out[4096] = "";
	snprintf(cmd, sizeof(cmd),
		 "curl -s http://127.0.0.1:%d/metrics | grep '^leasegate_trace_spans'", admin.n);
	FILE *p = popen(cmd, "r");
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	const char *d =
		strstr(out, "leasegate_trace_spans_dropped_total{reason=\"export_failed\"} ");
	assert_non_null(d);
	assert_true(
		atoi(d + strlen("leasegate_trace_spans_dropped_total{reason=\"export_failed\"} ")) >
		0);
	assert_non_null(strstr(out, "leasegate_trace_spans_exported_total "));
	assert_int_equal(gw_log_count(&g, "trace export failed"), 1); /* once per outage */
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A bad OTEL_* value stops the start, naming the variable. */
static void test_bad_otel_settings(void **state)
{
	struct gw g;
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318", 1);
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
	gw_spawn(&g, NULL, NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_int_equal(gw_log_count(&g, "OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported"),
			 1);
	unsetenv("OTEL_EXPORTER_OTLP_PROTOCOL");
	setenv("OTEL_TRACES_SAMPLER", "sometimes", 1);
	gw_spawn(&g, NULL, NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_int_equal(gw_log_count(&g, "OTEL_TRACES_SAMPLER: 'sometimes'"), 1);
	unsetenv("OTEL_TRACES_SAMPLER");
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_spans_on_moto, gw_teardown),
		cmocka_unit_test_teardown(test_bad_otel_settings, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
