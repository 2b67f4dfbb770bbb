/*
 * test_trace: core/trace and the spans of the lock table — Lock.TryAcquire,
 * Lock.Acquire, Lock.Renew (by the heartbeat or a client; each the root of
 * its trace, linked to its acquire), Lock.Release, a client's traceparent as the parent, sampling,
 * the bounded queue — on the embedded store with the fake clock; and the
 * OTLP JSON of gateway/otlp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "core/store/store_session.h"
#include "core/trace.h"
#include "gateway/obs/otlp.h"
#include "protocols/buf.h"
#include "tests/support/lt_fixture.h"

static int64_t fake_ns(void *arg)
{
	return fx_now(arg) * 1000000;
}

static struct tracer *tracer_for(struct fx *f, double ratio, size_t queue)
{
	struct tracer_options o = {
		.ratio = ratio, .queue_max = queue, .now_ns = fake_ns, .now_arg = f};
	struct tracer *t = tracer_new(&o);
	assert_non_null(t);
	lt_set_tracer(f->lt[0], t);
	return t;
}

/* The spans ended so far, oldest first (freed by free_spans). */
static size_t take(struct tracer *t, struct trace_span **out, size_t max)
{
	return tracer_take(t, out, max);
}

static void free_spans(struct trace_span **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		trace_free(s[i]);
}

static const struct trace_attr *attr(const struct trace_span *s, const char *key)
{
	for (unsigned i = 0; i < s->nattrs; i++)
		if (strcmp(s->attrs[i].key, key) == 0)
			return &s->attrs[i];
	return NULL;
}

static void test_traceparent(void **state)
{
	struct trace_ctx c;
	assert_true(trace_parse_traceparent(
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &c));
	assert_true(c.valid && c.sampled);
	assert_int_equal(c.trace_id[0], 0x4b);
	assert_int_equal(c.span_id[7], 0xb7);
	assert_true(trace_parse_traceparent(
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", &c));
	assert_false(c.sampled);
	static const char *const bad[] = {
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",	 /* version */
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",	 /* zero trace */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",	 /* zero span */
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",	 /* upper case */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", /* length */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (trace_parse_traceparent(bad[i], &c))
			fail_msg("accepted \"%s\"", bad[i]);
}

/* A try, a renewal by the heartbeat and a release: three spans, the last
 * two roots of their own traces linked to the first. */
static void test_lease_spans(void **state)
{
	struct fx *f = fx_new(1, true);
	struct tracer *t = tracer_for(f, 1, 0);
	struct lease *l = fx_take(f, 0, "nightly", 3000);
	fx_advance(f, 1000); /* the heartbeat renews at a third */
	lease_release(l);
	fx_run(f);
	struct trace_span *s[8];
	size_t n = take(t, s, 8);
	assert_int_equal(n, 3);
	assert_string_equal(s[0]->name, "Lock.TryAcquire");
	assert_string_equal(s[1]->name, "Lock.Renew");
	assert_string_equal(s[2]->name, "Lock.Release");
	assert_false(s[0]->has_parent);
	assert_string_equal(attr(s[0], "leasegate.lock.name")->s, "nightly");
	assert_string_equal(attr(s[0], "db.collection.name")->s, "locks"); /* the fixture's store */
	assert_true(attr(s[0], "leasegate.lock.acquired")->i);
	assert_false(attr(s[0], "leasegate.lock.takeover")->i);
	assert_int_equal(attr(s[0], "leasegate.lock.fencing_token")->i, 1);
	for (int i = 1; i <= 2; i++) {
		assert_false(s[i]->has_parent); /* roots */
		assert_memory_not_equal(s[i]->ctx.trace_id, s[0]->ctx.trace_id, 16);
		assert_true(s[i]->link.valid);
		assert_memory_equal(s[i]->link.trace_id, s[0]->ctx.trace_id, 16);
		assert_memory_equal(s[i]->link.span_id, s[0]->ctx.span_id, 8);
		assert_false(s[i]->error);
	}
	assert_true(attr(s[1], "leasegate.lock.renewed")->i);
	assert_int_equal(s[1]->start_ns, 1000 * 1000000LL); /* the fake clock */
	free_spans(s, n);
	fx_free(f);
	tracer_free(t);
}

struct renew_answer {
	bool done;
	int renewed;
};

static void renew_answered(void *arg, int renewed, const struct lt_error *err)
{
	struct renew_answer *a = arg;
	a->done = true;
	a->renewed = err != NULL ? -1 : renewed;
}

/* A client's renewal (LOCK.RENEW, RenewAsync) is a Lock.Renew span too, a
 * root linked to the acquire; one the lease's end cuts short, or that
 * finds the lock taken over, is ended as failed, never left open. */
static void test_client_renewal_spans(void **state)
{
	struct fx *f = fx_new(1, true);
	struct tracer *t = tracer_for(f, 1, 0);
	struct lease *l = fx_take(f, 0, "nightly", 3000);
	struct trace_span *s[8];
	size_t n = take(t, s, 8);
	assert_int_equal(n, 1); /* the acquire */
	struct trace_ctx acquire = s[0]->ctx;
	free_spans(s, n);

	fx_advance(f, 500);
	struct renew_answer a = {0};
	assert_true(lease_renew(l, renew_answered, &a));
	fx_run(f);
	assert_int_equal(a.renewed, 1);
	n = take(t, s, 8);
	assert_int_equal(n, 1);
	assert_string_equal(s[0]->name, "Lock.Renew");
	assert_false(s[0]->has_parent);
	assert_true(s[0]->link.valid);
	assert_memory_equal(s[0]->link.span_id, acquire.span_id, 8);
	assert_int_equal(s[0]->start_ns, 500 * 1000000LL);
	assert_true(attr(s[0], "leasegate.lock.renewed")->i);
	assert_int_equal(attr(s[0], "leasegate.lock.fencing_token")->i, 1);
	assert_false(s[0]->error);
	free_spans(s, n);

	/* taken over behind the lease's back: renewed false, failed */
	fx_simulate_holder(f, "nightly", 3000, "other");
	memset(&a, 0, sizeof(a));
	assert_true(lease_renew(l, renew_answered, &a));
	fx_run(f);
	assert_int_equal(a.renewed, 0);
	n = take(t, s, 8);
	assert_int_equal(n, 1);
	assert_string_equal(s[0]->name, "Lock.Renew");
	assert_false(attr(s[0], "leasegate.lock.renewed")->i);
	assert_true(s[0]->error);
	free_spans(s, n);
	lease_release(l);
	fx_run(f);

	/* released while a renewal is on its way: its span ends with it */
	l = fx_take(f, 0, "weekly", 3000);
	free_spans(s, take(t, s, 8));
	memset(&a, 0, sizeof(a));
	assert_true(lease_renew(l, renew_answered, &a));
	lease_release(l);
	fx_run(f);
	assert_int_equal(a.renewed, 0);
	n = take(t, s, 8);
	assert_int_equal(n, 2);
	assert_string_equal(s[0]->name, "Lock.Renew");
	assert_true(s[0]->error);
	assert_string_equal(s[0]->status, "the lease ended");
	assert_string_equal(s[1]->name, "Lock.Release");
	free_spans(s, n);
	fx_free(f);
	tracer_free(t);
}

struct foreign_answer {
	bool done;
	int value;
};

static void foreign_answered(void *arg, int done, const struct lt_state *st,
			     const struct lt_error *err)
{
	struct foreign_answer *a = arg;
	a->done = true;
	a->value = err != NULL ? -1 : done;
}

/* (name, token) from a replica that does not hold the lease: Lock.Renew
 * and Lock.Release roots with the read and the write as children. */
static void test_foreign_spans(void **state)
{
	struct fx *f = fx_new(2, true);
	struct tracer *t = tracer_for(f, 1, 0);
	lt_set_tracer(f->lt[1], t);
	struct lease *l = fx_take(f, 0, "nightly", 3000);
	struct trace_span *s[8];
	free_spans(s, take(t, s, 8));

	struct foreign_answer a = {0};
	struct lt_foreign_req req = {.name = "nightly", .op = LT_FOREIGN_RENEW, .token = 1};
	assert_true(lt_foreign(f->lt[1], &req, foreign_answered, &a));
	fx_run(f);
	assert_int_equal(a.value, 1);
	size_t n = take(t, s, 8);
	assert_int_equal(n, 1);
	assert_string_equal(s[0]->name, "Lock.Renew");
	assert_false(s[0]->has_parent);
	assert_int_equal(attr(s[0], "leasegate.lock.fencing_token")->i, 1);
	assert_true(attr(s[0], "leasegate.lock.renewed")->i);
	assert_false(s[0]->error);
	free_spans(s, n);

	memset(&a, 0, sizeof(a));
	req.op = LT_FOREIGN_RELEASE;
	req.token = 2; /* not this acquire's: refused */
	assert_true(lt_foreign(f->lt[1], &req, foreign_answered, &a));
	fx_run(f);
	assert_int_equal(a.value, 0);
	req.token = 1;
	assert_true(lt_foreign(f->lt[1], &req, foreign_answered, &a));
	fx_run(f);
	assert_int_equal(a.value, 1);
	n = take(t, s, 8);
	assert_true(n >= 2);
	assert_string_equal(s[0]->name, "Lock.Release");
	assert_false(attr(s[0], "leasegate.lock.released")->i);
	assert_string_equal(s[1]->name, "Lock.Release");
	assert_true(attr(s[1], "leasegate.lock.released")->i);
	assert_false(attr(s[1], "leasegate.lock.forced")->i);
	free_spans(s, n);
	(void)l; /* ended as released by the other replica's write */
	fx_run(f);
	free_spans(s, take(t, s, 8));
	fx_free(f);
	tracer_free(t);
}

/* --- a waiter's session READs and KILL (--heartbeat replica) --- */

#define SKEY "SESSION#holder-1#0123456789abcdef0123456789abcdef"

static void got_sess(void *arg, const struct store_session_result *res)
{
	*(struct store_session_result *)arg = *res;
}

static void got_res(void *arg, const struct store_result *res)
{
	*(struct store_result *)arg = *res;
}

/* A holder of "job" in session mode whose replica then stopped: its
 * session created, never beating again. */
static void stopped_session_holder(struct fx *f)
{
	struct store_session_result sr = {.status = STORE_FATAL};
	struct store_session_req sq = {.op = STORE_SESSION_CREATE,
				       .replica = "holder-1",
				       .incarnation = "0123456789abcdef0123456789abcdef",
				       .rvn = "beat-0",
				       .max_lease_ms = 3000};
	assert_non_null(store_session_submit(f->store, &sq, got_sess, &sr));
	fx_run(f);
	assert_int_equal(sr.status, STORE_OK);
	struct store_result r = {.status = STORE_FATAL};
	struct store_req q = {.op = STORE_ACQUIRE,
			      .name = "job",
			      .owner = "holder-owner",
			      .rvn = "holder-rvn",
			      .lease_ms = 3000,
			      .session = SKEY};
	assert_non_null(store_submit(f->store, &q, got_res, &r));
	fx_run(f);
	assert_int_equal(r.status, STORE_OK);
}

/* s is a child of parent, in its trace, for the session SKEY. */
static void assert_session_child(const struct trace_span *s, const struct trace_span *parent)
{
	assert_true(s->has_parent);
	assert_memory_equal(s->parent_id, parent->ctx.span_id, 8);
	assert_memory_equal(s->ctx.trace_id, parent->ctx.trace_id, 16);
	assert_string_equal(attr(s, "leasegate.session.key")->s, SKEY);
	assert_string_equal(attr(s, "leasegate.lock.name")->s, "job");
	assert_false(s->error);
}

/* A try's READ of a session-mode lock and its session is a
 * Lock.SessionRead child of its Lock.TryAcquire; a waiter's polls are
 * children of its Lock.Acquire, and the KILL that marks the stopped
 * session dead a Lock.SessionKill child of it, with the session's key. */
static void test_session_read_and_kill_spans(void **state)
{
	struct fx *f = fx_new(1, true);
	struct tracer *t = tracer_for(f, 1, 1024);
	stopped_session_holder(f);
	struct fx_acq a;
	fx_acquire(f, 0, "job", 5000, false, 0, &a); /* writes: refused, the lock seen */
	fx_run(f);
	fx_acquire(f, 0, "job", 5000, false, 0, &a); /* reads the lock: its watch starts */
	fx_run(f);
	fx_acquire(f, 0, "job", 5000, false, 0, &a); /* reads the lock and its session */
	fx_run(f);
	assert_null(a.lease);
	struct trace_span *s[256];
	size_t n = take(t, s, 256);
	assert_int_equal(n, 4);
	assert_string_equal(s[0]->name, "Lock.TryAcquire");
	assert_string_equal(s[1]->name, "Lock.TryAcquire");
	assert_string_equal(s[2]->name, "Lock.SessionRead");
	assert_string_equal(s[3]->name, "Lock.TryAcquire");
	assert_session_child(s[2], s[3]);
	assert_true(attr(s[2], "leasegate.session.found")->i);
	assert_false(attr(s[2], "leasegate.session.dead")->i);
	free_spans(s, n);
	fx_acquire(f, 0, "job", 5000, true, 0, &a);
	for (int i = 0; i < 200 && !a.done; i++)
		fx_advance(f, 100);
	assert_non_null(a.lease);
	assert_true(lease_takeover(a.lease));
	n = take(t, s, 256);
	const struct trace_span *acq = s[n - 1];
	assert_string_equal(acq->name, "Lock.Acquire");
	int reads = 0, kills = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (strcmp(s[i]->name, "Lock.SessionKill") == 0) {
			kills++;
			assert_session_child(s[i], acq);
			assert_true(attr(s[i], "leasegate.session.killed")->i);
		} else {
			assert_string_equal(s[i]->name, "Lock.SessionRead");
			reads++;
			assert_session_child(s[i], acq);
		}
	}
	assert_int_equal(kills, 1);
	assert_true(reads >= 2);
	free_spans(s, n);
	lease_release(a.lease);
	fx_run(f);
	n = take(t, s, 256);
	free_spans(s, n);
	fx_free(f);
	tracer_free(t);
}

/* A client's traceparent: the acquire's span is its child, in its trace;
 * a parent that was not sampled gives no span. A wait is Lock.Acquire;
 * one refused (held elsewhere) says acquired false. */
static void test_client_parent_and_sampling(void **state)
{
	struct fx *f = fx_new(2, true);
	struct tracer *t = tracer_for(f, 1, 0);
	struct trace_ctx client;
	assert_true(trace_parse_traceparent(
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &client));
	struct fx_acq got = {0};
	struct lt_acquire_args a = {.name = "j", .lease_ms = 3000, .trace_parent = &client};
	assert_non_null(lt_acquire(f->lt[0], &a, fx_acquire_cb, &got));
	fx_run(f);
	assert_non_null(got.lease);
	struct trace_span *s[8];
	size_t n = take(t, s, 8);
	assert_int_equal(n, 1);
	assert_true(s[0]->has_parent);
	assert_memory_equal(s[0]->ctx.trace_id, client.trace_id, 16);
	assert_memory_equal(s[0]->parent_id, client.span_id, 8);
	free_spans(s, n);
	/* another process holds "k": a try of locktable 0 is refused */
	fx_simulate_holder(f, "k", 3000, "other");
	struct fx_acq refused = {0};
	client.sampled = false;
	struct lt_acquire_args b = {.name = "k", .lease_ms = 3000, .trace_parent = &client};
	assert_non_null(lt_acquire(f->lt[0], &b, fx_acquire_cb, &refused));
	fx_run(f);
	assert_int_equal(take(t, s, 8), 0); /* not sampled by the client */
	struct fx_acq waited = {0};
	struct lt_acquire_args w = {.name = "k", .lease_ms = 3000, .wait = true, .timeout_ms = 500};
	assert_non_null(lt_acquire(f->lt[0], &w, fx_acquire_cb, &waited));
	fx_advance(f, 600);
	assert_true(waited.done);
	n = take(t, s, 8);
	assert_int_equal(n, 1);
	assert_string_equal(s[0]->name, "Lock.Acquire");
	assert_false(attr(s[0], "leasegate.lock.acquired")->i);
	free_spans(s, n);
	lease_release(got.lease);
	fx_run(f);
	fx_free(f);
	tracer_free(t);
}

/* Ratio 0 keeps no new trace; a full queue drops and counts. */
static void test_ratio_and_queue(void **state)
{
	struct fx *f = fx_new(1, true);
	struct tracer *t = tracer_for(f, 0, 0);
	struct lease *l = fx_take(f, 0, "a", 3000);
	lease_release(l);
	fx_run(f);
	struct trace_span *s[8];
	assert_int_equal(take(t, s, 8), 0);
	tracer_free(t);
	t = tracer_for(f, 1, 2);
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "q%d", i);
		lease_release(fx_take(f, 0, name, 3000));
		fx_run(f);
	}
	struct tracer_stats st;
	tracer_stats(t, &st);
	assert_int_equal(st.queued, 2);
	assert_int_equal(st.dropped, 4); /* 6 spans: 3 tries, 3 releases */
	size_t n = take(t, s, 8);
	free_spans(s, n);
	fx_free(f);
	tracer_free(t);
}

/* The OTLP JSON of a span: ids as hex, parent, kind, times as strings,
 * typed attributes, the link, an error's status. */
static void test_otlp_json(void **state)
{
	struct fx *f = fx_new(1, true);
	struct tracer *t = tracer_for(f, 1, 0);
	struct trace_ctx client;
	assert_true(trace_parse_traceparent(
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &client));
	struct trace_span *s = trace_start(t, "Lock.Acquire", TRACE_INTERNAL, &client);
	struct trace_span *c = trace_child(s, "GetItem", TRACE_CLIENT);
	trace_str(c, "db.system", "dynamodb");
	trace_int(c, "leasegate.dynamodb.retries", 2);
	trace_bool(c, "ok", false);
	trace_link(c, &client);
	trace_fail(c, "Throttled \"hard\"");
	trace_end(c);
	trace_end(s);
	struct trace_span *sp[2];
	assert_int_equal(tracer_take(t, sp, 2), 2);
	struct buf out;
	buf_init(&out, 0);
	otlp_encode(&out, "svc", "1.0", "deployment.environment=test", sp, 2);
	buf_printf(&out, "%c", '\0');
	cJSON *j = cJSON_Parse(out.buf);
	assert_non_null(j);
	cJSON *rs = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "resourceSpans"), 0);
	cJSON *rattrs = cJSON_GetObjectItem(cJSON_GetObjectItem(rs, "resource"), "attributes");
	assert_int_equal(cJSON_GetArraySize(rattrs), 3);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(rattrs, 0), "key")->valuestring,
			    "service.name");
	cJSON *spans = cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(rs, "scopeSpans"), 0), "spans");
	cJSON *get = cJSON_GetArrayItem(spans, 0), *acq = cJSON_GetArrayItem(spans, 1);
	assert_string_equal(cJSON_GetObjectItem(get, "name")->valuestring, "GetItem");
	assert_string_equal(cJSON_GetObjectItem(acq, "traceId")->valuestring,
			    "4bf92f3577b34da6a3ce929d0e0e4736");
	assert_string_equal(cJSON_GetObjectItem(acq, "parentSpanId")->valuestring,
			    "00f067aa0ba902b7");
	assert_string_equal(cJSON_GetObjectItem(get, "parentSpanId")->valuestring,
			    cJSON_GetObjectItem(acq, "spanId")->valuestring);
	assert_int_equal(cJSON_GetObjectItem(get, "kind")->valueint, 3);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(get, "startTimeUnixNano")));
	cJSON *ga = cJSON_GetObjectItem(get, "attributes");
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(ga, 0), "value"),
				    "stringValue")
			->valuestring,
		"dynamodb");
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(ga, 1), "value"),
				    "intValue")
			->valuestring,
		"2");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(ga, 2), "value"), "boolValue")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(get, "links")), 1);
	cJSON *status = cJSON_GetObjectItem(get, "status");
	assert_int_equal(cJSON_GetObjectItem(status, "code")->valueint, 2);
	assert_string_equal(cJSON_GetObjectItem(status, "message")->valuestring,
			    "Throttled \"hard\"");
	assert_null(cJSON_GetObjectItem(acq, "status"));
	cJSON_Delete(j);
	buf_free(&out);
	free_spans(sp, 2);
	fx_free(f);
	tracer_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_read_and_kill_spans),
		cmocka_unit_test(test_traceparent),
		cmocka_unit_test(test_lease_spans),
		cmocka_unit_test(test_client_renewal_spans),
		cmocka_unit_test(test_foreign_spans),
		cmocka_unit_test(test_client_parent_and_sampling),
		cmocka_unit_test(test_ratio_and_queue),
		cmocka_unit_test(test_otlp_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
