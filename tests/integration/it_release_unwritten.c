/*
 * it_release_unwritten: a release whose DynamoDB write fails, end to end.
 * Two gateways on one moto table; A reaches DynamoDB through
 * tests/integration/ddb_proxy.py, B directly. A client of A takes a lock,
 * the proxy cuts A off, the client releases: the answer says the release
 * was not written (Redis -ERR "... was not written (...): the lock may stay
 * held until its lease runs out", PostgreSQL the normal result with a
 * WARNING 58000), never "done"; B then finds the lock held with A's token
 * (a try refused, LOCK.STATE), and is granted it only once the lease has
 * run out; A's session holds it no more (a second release answers 0/f).
 * The same when the release hands the lock to a waiter of A whose write
 * fails (before, it answered 1 at once and the lock stayed held for a
 * lease), except that A then sends the release itself (the handback, up
 * to 3 times: locktable.c) after the answer: once the proxy is back one of
 * them may land and free the lock before the lease's end, which the README
 * allows ("may conclude neither"): B's grant comes at most two leases
 * after. Nothing can reach DynamoDB once the proxy is down, so here the
 * write certainly did not land. Without LG_MOTO every test fails.
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
#include <libpq-fe.h>

#include "tests/support/ddb_proxy.h"
#include "tests/support/gw.h"

enum { LEASE_MS = 3000, CUT_MS = 150, SLACK_MS = 1500 };

static struct ddb_proxy proxy;

/* A gateway with a PostgreSQL port. */
struct pgw {
	struct gw g;
	struct gw_port pg;
};

/* A through the proxy, B straight to moto, one table. */
static void start_two(struct pgw *a, struct pgw *b)
{
	assert_true(gw_have_moto());
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	ddbp_start(&proxy);
	a->pg = gw_free_port_arg();
	b->pg = gw_free_port_arg();
	gw_start(&a->g, table, "--pg-port", a->pg.arg, "--endpoint", proxy.url, "--holder-label",
		 "gw-a", NULL);
	gw_start(&b->g, table, "--pg-port", b->pg.arg, "--holder-label", "gw-b", NULL);
}

static void stop_two(struct pgw *a, struct pgw *b)
{
	assert_int_equal(gw_signal(&a->g, SIGTERM), 0);
	assert_int_equal(gw_signal(&b->g, SIGTERM), 0);
	ddbp_stop(&proxy);
}

static int teardown(void **state)
{
	ddbp_stop(&proxy);
	return gw_teardown(state);
}

static void cut_off(void)
{
	ddbp_down(&proxy);
	gw_sleep_ms(CUT_MS); /* the proxy's handler has run: every connection reset */
}

/* The reply is the error of a release not written, naming the lock. */
static void expect_unwritten(redisReply *r, const char *name)
{
	char want[96];
	snprintf(want, sizeof(want), "ERR the release of '%s' was not written (", name);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	printf("# release answered: %s\n", r->str);
	assert_memory_equal(r->str, want, strlen(want));
	assert_non_null(strstr(r->str, "the lock may stay held until its lease runs out"));
	freeReplyObject(r);
}

/* LOCK.STATE name on c: held (1), its fencing token, mine. */
static void expect_state(redisContext *c, const char *name, long long token, long long mine)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	long long held = -1, tok = -1, me = -1;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *k = r->element[i]->str;
		long long v = r->element[i + 1]->integer;
		if (strcmp(k, "held") == 0)
			held = v;
		else if (strcmp(k, "fencing-token") == 0)
			tok = v;
		else if (strcmp(k, "mine") == 0)
			me = v;
	}
	freeReplyObject(r);
	assert_int_equal(held, 1);
	assert_int_equal(tok, token);
	assert_int_equal(me, mine);
}

/* From `since` (the release's answer), B's wait is granted a higher
 * token, not before min_ms (the lease, when nothing frees the item: it ran
 * out on B's clock, which first read A's item after `since`; B's try is
 * then refused first, and LOCK.STATE shows A's token), and within a lease
 * and polls. min_ms 0: a handback may have freed it already (the try and
 * the state would race it: a full run saw the item freed there). */
static void b_waits(redisContext *b, const char *name, long long token, long long since,
		    long long min_ms)
{
	if (min_ms > 0) { /* nothing may free it before its lease: A's item stands */
		gw_expect_nil(b, "LOCK.ACQUIRE %s %d", name, LEASE_MS);
		expect_state(b, name, token, 0);
	}
	redisReply *r = gw_cmd(b, "LOCK.ACQUIRE %s %d WAIT %d", name, LEASE_MS, 4 * LEASE_MS);
	long long waited = gw_now_ms() - since;
	printf("# B granted %s %lld ms after the release was answered (lease %d ms)\n", name,
	       waited, LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_true(r->integer > token);
	freeReplyObject(r);
	assert_true(waited >= min_ms);
	assert_true(waited <= 2 * LEASE_MS + SLACK_MS);
	gw_expect_int(b, 1, "LOCK.RELEASE %s", name);
}

static void b_waits_a_lease(redisContext *b, const char *name, long long token, long long since)
{
	b_waits(b, name, token, since, LEASE_MS);
}

static void test_redis_release_not_written(void **state)
{
	struct pgw ga, gb;
	start_two(&ga, &gb);
	redisContext *a = gw_connect(&ga.g), *b = gw_connect(&gb.g);
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE r %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long token = r->integer;
	freeReplyObject(r);
	cut_off();
	expect_unwritten(gw_cmd(a, "LOCK.RELEASE r"), "r");
	long long since = gw_now_ms();
	ddbp_up(&proxy);
	gw_expect_int(a, 0, "LOCK.RELEASE r"); /* the session holds it no more */
	expect_state(a, "r", token, 0);	       /* the item still A's lease's: not mine */
	b_waits_a_lease(b, "r", token, since);
	redisFree(a);
	redisFree(b);
	stop_two(&ga, &gb);
}

/* The release hands the lock to a waiter of A; the hand-off's write
 * fails, and so does the first release of A's lease in its place (the
 * handback): the release is answered not written, and the waiter fails. */
static void test_redis_handoff_not_written(void **state)
{
	struct pgw ga, gb;
	start_two(&ga, &gb);
	redisContext *a = gw_connect(&ga.g), *w = gw_connect(&ga.g), *b = gw_connect(&gb.g);
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE h %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long token = r->integer;
	freeReplyObject(r);
	gw_send(w, "LOCK.ACQUIRE h %d WAIT %d", LEASE_MS, 4 * LEASE_MS);
	gw_expect_no_reply(w, 200, "a waiter while A holds"); /* queued on A */
	cut_off();
	expect_unwritten(gw_cmd(a, "LOCK.RELEASE h"), "h");
	long long since = gw_now_ms();
	r = gw_reply_within(w, 2 * LEASE_MS);
	assert_non_null(r);
	printf("# the waiter was answered: %s\n", r->type == REDIS_REPLY_ERROR ? r->str : "?");
	assert_int_equal(r->type, REDIS_REPLY_ERROR); /* its write failed: not granted */
	freeReplyObject(r);
	ddbp_up(&proxy);
	b_waits(b, "h", token, since, 0); /* a handback may land: see the top */
	redisFree(a);
	redisFree(w);
	redisFree(b);
	stop_two(&ga, &gb);
}

/* --- PostgreSQL --- */

struct notices {
	int n;
	char sqlstate[8];
	char msg[512];
};

static void on_notice(void *arg, const PGresult *r)
{
	struct notices *ns = arg;
	const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
	ns->n++;
	snprintf(ns->sqlstate, sizeof(ns->sqlstate), "%s", st != NULL ? st : "");
	snprintf(ns->msg, sizeof(ns->msg), "%s %s", PQresultErrorField(r, PG_DIAG_SEVERITY),
		 m != NULL ? m : "");
}

static PGconn *pg_open(const struct pgw *p)
{
	char ci[160];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=app dbname=locks connect_timeout=5",
		 p->pg.n);
	PGconn *c = PQconnectdb(ci);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	return c;
}

/* The one value of sql's answer on c, which must succeed. */
static void pg_val(PGconn *c, const char *sql, char *out, size_t cap)
{
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	snprintf(out, cap, "%s", PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
}

static void test_pg_unlock_not_written(void **state)
{
	struct pgw ga, gb;
	struct notices ns = {0};
	char v[64];
	start_two(&ga, &gb);
	PGconn *a = pg_open(&ga);
	redisContext *b = gw_connect(&gb.g);
	PQsetNoticeReceiver(a, on_notice, &ns);
	pg_val(a, "SET leasegate.lease_ms = 3000", v, sizeof(v));
	pg_val(a, "SELECT pg_advisory_lock(1)", v, sizeof(v));
	pg_val(a, "SELECT leasegate.token(1)", v, sizeof(v));
	long long token = atoll(v);
	assert_true(token >= 1);
	cut_off();
	pg_val(a, "SELECT pg_advisory_unlock(1)", v, sizeof(v));
	long long since = gw_now_ms();
	printf("# pg_advisory_unlock answered %s, notice %s: %s\n", v, ns.sqlstate, ns.msg);
	assert_string_equal(v, "t"); /* its normal result: it held the lock */
	assert_int_equal(ns.n, 1);
	assert_string_equal(ns.sqlstate, "58000");
	assert_memory_equal(ns.msg, "WARNING the release of 'pg:locks:1' was not written (",
			    strlen("WARNING the release of 'pg:locks:1' was not written ("));
	ddbp_up(&proxy);
	pg_val(a, "SELECT pg_advisory_unlock(1)", v, sizeof(v));
	assert_string_equal(v, "f"); /* the session holds it no more (and a WARNING) */
	b_waits_a_lease(b, "pg:locks:1", token, since);
	PQfinish(a);
	redisFree(b);
	stop_two(&ga, &gb);
}

/* COMMIT of a transaction lock: the same WARNING, COMMIT's own tag. */
static void test_pg_commit_not_written(void **state)
{
	struct pgw ga, gb;
	struct notices ns = {0};
	char v[64];
	start_two(&ga, &gb);
	PGconn *a = pg_open(&ga);
	redisContext *b = gw_connect(&gb.g);
	PQsetNoticeReceiver(a, on_notice, &ns);
	pg_val(a, "SET leasegate.lease_ms = 3000", v, sizeof(v));
	pg_val(a, "BEGIN", v, sizeof(v));
	pg_val(a, "SELECT pg_advisory_xact_lock(2)", v, sizeof(v));
	pg_val(a, "SELECT leasegate.token(2)", v, sizeof(v));
	long long token = atoll(v);
	cut_off();
	PGresult *r = PQexec(a, "COMMIT");
	long long since = gw_now_ms();
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	assert_string_equal(PQcmdStatus(r), "COMMIT");
	PQclear(r);
	printf("# COMMIT answered, notice %s: %s\n", ns.sqlstate, ns.msg);
	assert_string_equal(ns.sqlstate, "58000");
	assert_non_null(strstr(ns.msg, "the release of 'pg:locks:2' was not written"));
	ddbp_up(&proxy);
	b_waits_a_lease(b, "pg:locks:2", token, since);
	PQfinish(a);
	redisFree(b);
	stop_two(&ga, &gb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_redis_release_not_written, teardown),
		cmocka_unit_test_teardown(test_redis_handoff_not_written, teardown),
		cmocka_unit_test_teardown(test_pg_unlock_not_written, teardown),
		cmocka_unit_test_teardown(test_pg_commit_not_written, teardown),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
