/*
 * LG_ASSERT and the state tables of the core: a failed assertion reaches
 * the handler with its place and condition; without one, a production
 * build reports once per call site and carries on, a make check build
 * aborts; an illegal move of a lock's turn, a lease, a wait or an HTTP
 * request is caught (the move is made either way), legal lifecycles are
 * not. Embedded store, fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "lib/http/http_int.h"
#include "core/lease.h"
#include "lib/base/lg_assert.h"
#include "tests/support/lt_fixture.h"

#define LEASE 3000

static int failures;
static int last_line;
static char last_cond[64], last_detail[64];

static void count(const char *file, int line, const char *cond, const char *detail)
{
	failures++;
	last_line = line;
	snprintf(last_cond, sizeof(last_cond), "%s", cond);
	snprintf(last_detail, sizeof(last_detail), "%s", detail != NULL ? detail : "");
}

static int setup(void **state)
{
	failures = 0;
	last_cond[0] = last_detail[0] = '\0';
	lg_assert_set_handler(count);
	return 0;
}

static int teardown(void **state)
{
	lg_assert_set_handler(NULL);
	return 0;
}

static void the_handler_gets_the_place_and_the_condition(void **state)
{
	int two = 2;
	LG_ASSERT(two == 2);
	assert_int_equal(failures, 0);
	int line = __LINE__ + 1;
	LG_ASSERT_MSG(two == 3, "two is not three");
	assert_int_equal(failures, 1);
	assert_int_equal(last_line, line);
	assert_string_equal(last_cond, "two == 3");
	assert_string_equal(last_detail, "two is not three");
	LG_ASSERT(two == 3); /* every failure reaches the handler */
	assert_int_equal(failures, 2);
}

static int reports;
static void report(const char *file, int line, const char *cond, const char *detail)
{
	reports++;
}

static void fail_here(void)
{
	LG_ASSERT(reports < 0); /* one call site */
}

/* In a child: the default of this build, no handler. Production: each site
 * reports once (two sites, each failing more than once: 2) and carries on;
 * LG_ASSERT_ABORT: the first failure aborts. */
static void without_a_handler_it_reports_once_per_site_or_aborts(void **state)
{
	lg_assert_set_handler(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		lg_assert_set_reporter(report);
		for (int i = 0; i < 3; i++)
			fail_here();
		for (int i = 0; i < 2; i++)
			LG_ASSERT(reports > 100); /* a second site */
		_exit(reports);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (lg_assert_aborts()) {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGABRT);
	} else {
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 2);
	}
}

static void a_lock_cycle_moves_only_along_the_tables(void **state)
{
	struct fx *f = fx_new(2, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a = {0}, b = {0};
	struct fx_acq c = {0};
	fx_acquire(f, 0, "job", LEASE, true, 0, &a); /* waits, then a hand-off */
	fx_acquire(f, 1, "job", LEASE, true, 0, &c); /* its write refused, then polls */
	fx_run(f);
	fx_acquire(f, 1, "job", LEASE, false, 0, &b); /* a try, refused after a read */
	fx_run(f);
	assert_true(b.done && b.lease == NULL);
	fx_advance(f, LEASE / 3); /* a renewal */
	lease_release(l);
	fx_run(f);
	assert_true(a.done && a.lease != NULL);
	lease_release(a.lease);
	fx_advance(f, LEASE);
	assert_true(c.done && c.lease != NULL);
	lease_release(c.lease);
	fx_run(f);
	assert_int_equal(failures, 0);
	fx_free(f);
}

static void an_illegal_lease_move_is_caught(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	assert_int_equal(l->state, LEASE_HELD);
	lease_set_state(l, LEASE_NEW);
	assert_int_equal(failures, 1);
	assert_string_equal(last_detail, "lease held -> new");
	assert_int_equal(l->state, LEASE_NEW); /* made either way */
	l->state = LEASE_HELD;
	lease_release(l);
	fx_run(f);
	assert_int_equal(failures, 1);
	fx_free(f);
}

static void an_illegal_wait_move_is_caught(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct fx_acq a = {0};
	struct lt_wait *w = fx_acquire(f, 0, "job", LEASE, true, 0, &a);
	fx_run(f);
	assert_int_equal(w->state, WAIT_QUEUED);
	lt_wait_set_state(w, WAIT_HANDBACK);
	assert_int_equal(failures, 1);
	assert_string_equal(last_detail, "wait queued -> handback");
	w->state = WAIT_QUEUED;
	lt_acquire_cancel(w);
	lease_release(l);
	fx_run(f);
	assert_int_equal(failures, 1);
	fx_free(f);
}

static void an_illegal_lock_move_is_caught(void **state)
{
	struct fx *f = fx_new(1, true);
	struct lease *l = fx_take(f, 0, "job", LEASE);
	struct lock *lk = l->lock;
	assert_int_equal(lk->state, LOCK_OURS);
	lt_lock_set_state(lk, LOCK_YIELDING); /* yields only when one is due */
	assert_int_equal(failures, 1);
	assert_string_equal(last_detail, "lock ours -> yielding");
	lk->state = LOCK_OURS;
	lease_release(l);
	fx_run(f);
	assert_int_equal(failures, 1);
	fx_free(f);
}

static void an_http_request_moves_with_its_list(void **state)
{
	struct http h = {0};
	struct http_req r = {.h = &h};
	http_req_set_state(&h, &r, REQ_QUEUED);
	assert_int_equal(h.queue.count, 1);
	http_req_set_state(&h, &r, REQ_ACTIVE);
	assert_int_equal(h.queue.count, 0);
	assert_int_equal(h.active.count, 1);
	assert_int_equal(failures, 0);
	http_req_set_state(&h, &r, REQ_QUEUED); /* a started request never queues again */
	assert_int_equal(failures, 1);
	assert_string_equal(last_detail, "http request active -> queued");
	assert_int_equal(h.active.count, 0); /* made either way */
	assert_int_equal(h.queue.count, 1);
	http_req_set_state(&h, &r, REQ_FREED);
	assert_int_equal(h.queue.count, 0);
	assert_int_equal(failures, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_handler_gets_the_place_and_the_condition, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			without_a_handler_it_reports_once_per_site_or_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(a_lock_cycle_moves_only_along_the_tables, setup,
						teardown),
		cmocka_unit_test_setup_teardown(an_illegal_lease_move_is_caught, setup, teardown),
		cmocka_unit_test_setup_teardown(an_illegal_wait_move_is_caught, setup, teardown),
		cmocka_unit_test_setup_teardown(an_illegal_lock_move_is_caught, setup, teardown),
		cmocka_unit_test_setup_teardown(an_http_request_moves_with_its_list, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
