/*
 * test_pg_cancel: the gate of PostgreSQL CancelRequests (pg_cancel.h) on
 * a clock of the test's own: an address may send PGC_BURST keys that
 * match no session, then its requests are dropped until its bucket
 * drains (one more every PGC_DRAIN_MS); other addresses are not held up;
 * the table stays bounded and forgets a draining address before one that
 * is being dropped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "gateway/pg/pg_cancel.h"

static void fail_n(struct pg_cancel_gate *g, const char *host, int n, int64_t now)
{
	for (int i = 0; i < n; i++) {
		assert_true(pgc_allow(g, host, now));
		pgc_failed(g, host, now);
	}
}

static void test_burst_then_dropped_then_drained(void **state)
{
	struct pg_cancel_gate *g = pgc_new();
	assert_non_null(g);
	fail_n(g, "10.0.0.1", PGC_BURST, 1000);
	assert_false(pgc_allow(g, "10.0.0.1", 1000));
	assert_false(pgc_allow(g, "10.0.0.1", 1000 + PGC_DRAIN_MS - 1));
	assert_true(pgc_allow(g, "10.0.0.2", 1000)); /* another address */
	assert_int_equal(pgc_dropped(g), 2);
	/* one step drained: one more is tried; wrong again, dropped again */
	assert_true(pgc_allow(g, "10.0.0.1", 1000 + PGC_DRAIN_MS));
	pgc_failed(g, "10.0.0.1", 1000 + PGC_DRAIN_MS);
	assert_false(pgc_allow(g, "10.0.0.1", 1000 + PGC_DRAIN_MS));
	/* drained fully: a whole burst again */
	int64_t later = 1000 + PGC_DRAIN_MS + (int64_t)PGC_BURST * PGC_DRAIN_MS;
	fail_n(g, "10.0.0.1", PGC_BURST, later);
	assert_false(pgc_allow(g, "10.0.0.1", later));
	pgc_free(g);
}

/* Right keys are not counted: an address that cancels its own statements
 * all day is never dropped. */
static void test_only_wrong_keys_count(void **state)
{
	struct pg_cancel_gate *g = pgc_new();
	for (int i = 0; i < 100 * PGC_BURST; i++)
		assert_true(pgc_allow(g, "10.0.0.1", 5));
	assert_int_equal(pgc_dropped(g), 0);
	pgc_free(g);
}

/* More addresses than the table holds: it stays bounded, and the address
 * being dropped is remembered while fresh ones come and go. */
static void test_table_bounded_keeps_the_dropped(void **state)
{
	struct pg_cancel_gate *g = pgc_new();
	char host[32];
	fail_n(g, "192.0.2.1", PGC_BURST, 0);
	for (int i = 0; i < 4 * PGC_HOSTS; i++) {
		snprintf(host, sizeof(host), "10.1.%d.%d", i / 256, i % 256);
		assert_true(pgc_allow(g, host, 10));
		pgc_failed(g, host, 10);
	}
	assert_false(pgc_allow(g, "192.0.2.1", 10));
	pgc_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_dropped_then_drained),
		cmocka_unit_test(test_only_wrong_keys_count),
		cmocka_unit_test(test_table_bounded_keeps_the_dropped),
	};
	return cmocka_run_group_tests_name("pg cancel gate", tests, NULL, NULL);
}
