/*
 * it_http_queue: lib/http/http.c's limit of requests at once and its
 * queue, against a real HTTP server (tests/support/http_fixture.c): FIFO
 * beyond max_active, urgent requests (renewals, releases) ahead of normal
 * ones, normal ones refused early when the queue is full, the time a
 * request may wait for a slot.
 */
#include <curl/curl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/http/http.h"
#include "tests/support/http_fixture.h"

static void test_queue_beyond_max_active(void **state)
{
	struct http_options o = {.max_active = 2, .max_queued = 3};
	struct http *h = http_new(hf_base, &o);
	char path[32];
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof path, "/hold?n=%d", i);
		assert_non_null(hf_send_one(h, "GET", path, NULL, 0, NULL, 0, 0, i));
	}
	/* the queue holds 3: a sixth is refused, without a callback */
	assert_null(hf_send_one(h, "GET", "/hold?n=9", NULL, 0, NULL, 0, 0, 9));
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.active, 2);
	assert_int_equal(st.queued, 3);
	hf_want_held = 2;
	assert_true(hf_run_until(hf_n_held, 5000));
	/* nothing more reaches the server while two are held */
	hf_want_done = 1;
	assert_false(hf_run_until(hf_n_done, 300));
	assert_int_equal(hf_nheld, 2);
	int done = 0;
	while (done < 5) {
		size_t expect = 5 - done < 2 ? 5 - done : 2;
		assert_int_equal(hf_nheld, expect);
		hf_release_held();
		done += (int)expect;
		hf_want_done = done;
		assert_true(hf_run_until(hf_n_done, 5000));
		hf_want_held = 5 - done < 2 ? 5 - done : 2;
		if (hf_want_held)
			assert_true(hf_run_until(hf_n_held, 5000));
	}
	assert_int_equal(hf_concurrent_max, 2);
	assert_string_equal(hf_order, "01234"); /* FIFO */
	assert_false(hf_results[9].done);
	http_stats(h, &st);
	assert_int_equal(st.active, 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.completed, 5);
	http_free(h);
}

/* One GET of /hold?n=idx with priority prio, its result in hf_results[idx]. */
static struct http_req *send_prio(struct http *h, enum http_priority prio, int idx)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=%d", hf_port, idx);
	struct http_request req = {.method = "GET", .url = url, .priority = prio};
	return http_send(h, &req, hf_on_done, &hf_results[idx]);
}

/* Serves the held requests one at a time until `total` are done. */
static void serve_one_by_one(int total)
{
	for (int done = 0; done < total;) {
		hf_want_held = 1;
		assert_true(hf_run_until(hf_n_held, 5000));
		assert_int_equal(hf_nheld, 1); /* max_active 1 */
		hf_release_held();
		hf_want_done = ++done;
		assert_true(hf_run_until(hf_n_done, 5000));
	}
}

/* Renewals and releases (urgent) start before acquires and polls queued
 * earlier; within a priority, FIFO. */
static void test_urgent_before_normal(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = http_new(hf_base, &o);
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 0)); /* takes the slot */
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 1));
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 2));
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 3));
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 4));
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.active, 1);
	assert_int_equal(st.queued, 4);
	assert_int_equal(st.queued_urgent, 2);
	serve_one_by_one(5);
	assert_string_equal(hf_order, "03412");
	http_stats(h, &st);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.queued_urgent, 0);
	assert_int_equal(st.started, 5);
	http_free(h);
}

/* Past max_queued_normal waiting requests a normal one is refused at once
 * (back-pressure), an urgent one only at max_queued; the queue wait is
 * counted. */
static void test_normal_refused_early(void **state)
{
	struct http_options o = {.max_active = 1, .max_queued = 3, .max_queued_normal = 1};
	struct http *h = http_new(hf_base, &o);
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 0));
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 1));
	assert_null(send_prio(h, HTTP_PRIO_NORMAL, 2)); /* one normal waits already */
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 3));
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 4));
	assert_null(send_prio(h, HTTP_PRIO_URGENT, 5)); /* max_queued */
	assert_null(send_prio(h, HTTP_PRIO_NORMAL, 6));
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.refused, 3);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.max_active, 1);
	assert_int_equal(st.started, 1);
	/* the queued wait while the first is held */
	hf_want_held = 1;
	assert_true(hf_run_until(hf_n_held, 5000));
	hf_want_done = 1;
	assert_false(hf_run_until(hf_n_done, 100));
	serve_one_by_one(4);
	assert_string_equal(hf_order, "0341");
	assert_false(hf_results[2].done || hf_results[5].done || hf_results[6].done);
	http_stats(h, &st);
	assert_int_equal(st.started, 4);
	assert_true(st.wait_max_us >= 100000); /* n=3 waited for n=0's 100 ms at least */
	assert_true(st.wait_sum_us >= (uint64_t)st.wait_max_us);
	http_free(h);
}

/* With a queue timeout, the wait for a slot is bounded by it, and
 * timeout_ms counts from the start of the transfer: a request queued
 * longer than its timeout_ms still runs. (Expiry reads the queue from its
 * head: the short one is first in line here.) */
static void test_queue_timeout(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = http_new(hf_base, &o);
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=0", hf_port);
	struct http_request first = {.method = "GET", .url = url};
	assert_non_null(http_send(h, &first, hf_on_done, &hf_results[0]));
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=2", hf_port);
	struct http_request gives_up = {
		.method = "GET", .url = url, .timeout_ms = 5000, .queue_timeout_ms = 150};
	assert_non_null(http_send(h, &gives_up, hf_on_done, &hf_results[2]));
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=1", hf_port);
	struct http_request waits = {
		.method = "GET", .url = url, .timeout_ms = 100, .queue_timeout_ms = 2000};
	assert_non_null(http_send(h, &waits, hf_on_done, &hf_results[1]));
	hf_want_done = 1;
	assert_true(hf_run_until(hf_n_done, 5000)); /* n=2, after its 150 ms */
	assert_true(hf_results[2].done);
	assert_int_equal(hf_results[2].code, CURLE_OPERATION_TIMEDOUT);
	assert_false(hf_run_until(hf_n_done, 300) && hf_results[1].done); /* 450 ms > its 100 */
	serve_one_by_one(2);
	assert_false(hf_results[1].done && hf_results[1].code != CURLE_OK);
	hf_want_done = 3;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_int_equal(hf_results[1].code, CURLE_OK);
	http_free(h);
}

int main(void)
{
	if (!hf_start()) {
		fprintf(stderr, "cannot bind\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_queue_beyond_max_active, hf_setup),
		cmocka_unit_test_setup(test_urgent_before_normal, hf_setup),
		cmocka_unit_test_setup(test_normal_refused_early, hf_setup),
		cmocka_unit_test_setup(test_queue_timeout, hf_setup),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	hf_stop();
	return rc;
}
