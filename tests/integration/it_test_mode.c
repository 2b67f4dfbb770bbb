/*
 * it_test_mode: the real leasegate binary ($LG_BIN) with --test-mode,
 * from hiredis and libpq: the lease clock moves only with DEBUG.CLOCK
 * ADVANCE (leasegate.clock_advance), which runs every heartbeat, poll,
 * wait timeout and expiry that falls due before it answers; the helpers
 * (LOCK.SIMULATE HOLDER|RELEASE|DELETE, LOCK.WAITREFUSAL and their
 * PostgreSQL functions) against the lease rules (docs/lease-rules.md):
 * a lease of this replica is lost at its next renewal (taken_over,
 * deleted), a contender takes over once it has seen the simulated holder
 * for a whole lease of the test clock, the next token after a delete is
 * 1; on moto's DynamoDB too (an advance waits for the requests its timers
 * sent). And where test mode is refused, and absent without it.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"

#define LEASE 3000 /* ms: renewal at 1000, a waiter's poll every 1000 */

static void start(struct gw *g, const char *table)
{
	gw_start(g, table, "--test-mode", NULL);
}

static void expect_clock(redisContext *c, long long mono)
{
	redisReply *r = gw_cmd(c, "DEBUG.CLOCK NOW");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 2);
	assert_int_equal(r->element[0]->integer, mono);
	assert_true(r->element[1]->integer > 1600000000000LL);
	freeReplyObject(r);
}

/* The state LOCK.LIST shows for this replica's lease of name ("held",
 * "lost", "waiting"), or "" when none, in buf. */
static const char *list_state(redisContext *c, const char *name, char *buf, size_t len)
{
	redisReply *r = gw_cmd(c, "LOCK.LIST MATCH %s", name);
	buf[0] = '\0';
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	for (size_t i = 0; i < r->elements; i++) {
		redisReply *e = r->element[i];
		for (size_t k = 0; k + 1 < e->elements; k += 2)
			if (strcmp(e->element[k]->str, "state") == 0)
				snprintf(buf, len, "%s", e->element[k + 1]->str);
	}
	freeReplyObject(r);
	return buf;
}

/* The fencing token LOCK.STATE shows for name. */
static long long item_token(redisContext *c, const char *name)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	long long token = -1;
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	for (size_t k = 0; k + 1 < r->elements; k += 2)
		if (strcmp(r->element[k]->str, "fencing-token") == 0)
			token = r->element[k + 1]->integer;
	freeReplyObject(r);
	return token;
}

/* The clock stands still on its own, and moves by exactly what ADVANCE
 * says; its wall clock with it. */
static void clock_moves_only_when_told(void **state)
{
	struct gw g;
	start(&g, NULL);
	redisContext *c = gw_connect(&g);
	redisReply *r = gw_cmd(c, "DEBUG.CLOCK NOW");
	long long wall = r->element[1]->integer;
	freeReplyObject(r);
	expect_clock(c, 0);
	gw_sleep_ms(30);
	expect_clock(c, 0);
	gw_expect_int(c, 1500, "DEBUG.CLOCK ADVANCE 1500");
	gw_expect_int(c, 1500, "DEBUG.CLOCK ADVANCE 0");
	r = gw_cmd(c, "DEBUG.CLOCK NOW");
	assert_int_equal(r->element[0]->integer, 1500);
	assert_int_equal(r->element[1]->integer, wall + 1500);
	freeReplyObject(r);
	gw_expect_err(c, "ERR ms must be", "DEBUG.CLOCK ADVANCE -1");
	gw_expect_err(c, "ERR ms must be 0 to", "DEBUG.CLOCK ADVANCE 99999999999999");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Heartbeats run on ADVANCE: a lease held across many of its lengths
 * stays held, with the same token. */
static void heartbeats_keep_a_lease_across_advances(void **state)
{
	struct gw g;
	start(&g, NULL);
	redisContext *a = gw_connect(&g), *t = gw_connect(&g);
	char st[32];
	gw_expect_int(a, 1, "LOCK.ACQUIRE job %d", LEASE);
	gw_expect_int(t, 60000, "DEBUG.CLOCK ADVANCE 60000");
	assert_string_equal(list_state(t, "job", st, sizeof(st)), "held");
	gw_expect_int(a, 1, "LOCK.RENEW job");
	assert_int_equal(item_token(t, "job"), 1);
	redisFree(a);
	redisFree(t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* SIMULATE HOLDER: the lease is lost at its next renewal (a third of the
 * lease after the acquire), not before, as taken_over; the item shows
 * the other holder with the next token. */
static void simulated_holder_takes_over_at_the_next_renewal(void **state)
{
	struct gw g;
	start(&g, NULL);
	redisContext *a = gw_connect(&g), *t = gw_connect(&g);
	char st[32];
	gw_expect_int(a, 1, "LOCK.ACQUIRE job %d", LEASE);
	gw_expect_int(t, 2, "LOCK.SIMULATE HOLDER job %d other-pod", LEASE);
	gw_expect_int(t, LEASE / 3 - 1, "DEBUG.CLOCK ADVANCE %d", LEASE / 3 - 1);
	assert_string_equal(list_state(t, "job", st, sizeof(st)), "held");
	gw_expect_int(t, LEASE / 3, "DEBUG.CLOCK ADVANCE 1");
	assert_string_equal(list_state(t, "job", st, sizeof(st)), "lost");
	gw_expect_err(a, "LOST taken_over", "LOCK.RENEW job");
	redisReply *r = gw_cmd(t, "LOCK.STATE job");
	assert_string_equal(r->element[3]->str, "other-pod");
	freeReplyObject(r);
	assert_int_equal(item_token(t, "job"), 2);
	gw_expect_err(t, "ERR", "LOCK.SIMULATE HOLDER job 999");	     /* < 1 s */
	gw_expect_err(t, "ERR syntax", "LOCK.SIMULATE HOLDER job 1000 a b"); /* extra */
	redisFree(a);
	redisFree(t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A contender refused by the simulated holder (LOCK.WAITREFUSAL says
 * when) takes the lock over once it has seen that holder for a whole
 * lease of the test clock: not one millisecond before. */
static void contender_takes_over_after_a_whole_lease(void **state)
{
	struct gw g;
	start(&g, NULL);
	redisContext *b = gw_connect(&g), *w = gw_connect(&g), *t = gw_connect(&g);
	gw_expect_int(t, 1, "LOCK.SIMULATE HOLDER job %d", LEASE);
	gw_send(w, "LOCK.WAITREFUSAL job");
	gw_expect_no_reply(w, 100, "WAITREFUSAL before any try");
	gw_send(b, "LOCK.ACQUIRE job %d WAIT 0", LEASE);
	redisReply *r = gw_reply_within(w, 5000);
	assert_non_null(r);
	assert_int_equal(r->integer, 1);
	freeReplyObject(r);
	gw_expect_int(t, LEASE - 1, "DEBUG.CLOCK ADVANCE %d", LEASE - 1);
	gw_expect_no_reply(b, 50, "a takeover before a whole lease");
	gw_expect_int(t, LEASE, "DEBUG.CLOCK ADVANCE 1");
	assert_int_equal(gw_token_within(b, 1000, "the takeover"), 2);
	redisFree(b);
	redisFree(w);
	redisFree(t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* RELEASE: the lease is lost (taken_over) at its next renewal and the
 * next acquire raises the token; DELETE: lost as deleted, the next
 * token is 1; a release of a lock without an item answers 0. */
static void simulated_release_and_delete(void **state)
{
	struct gw g;
	start(&g, NULL);
	redisContext *a = gw_connect(&g), *t = gw_connect(&g);
	gw_expect_int(a, 1, "LOCK.ACQUIRE job %d", LEASE);
	gw_expect_int(t, 1, "LOCK.SIMULATE RELEASE job");
	gw_expect_int(t, 1000, "DEBUG.CLOCK ADVANCE 1000");
	gw_expect_err(a, "LOST taken_over", "LOCK.RENEW job");
	gw_expect_int(t, 2, "LOCK.ACQUIRE job %d", LEASE);
	redisReply *r = gw_cmd(t, "LOCK.SIMULATE DELETE job");
	assert_string_equal(r->str, "OK");
	freeReplyObject(r);
	gw_expect_int(t, 2000, "DEBUG.CLOCK ADVANCE 1000");
	gw_expect_err(t, "LOST deleted", "LOCK.RENEW job");
	gw_expect_int(a, 1, "LOCK.ACQUIRE job %d", LEASE);
	gw_expect_int(t, 0, "LOCK.SIMULATE RELEASE no-such-lock");
	redisFree(a);
	redisFree(t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Wait timeouts fall due on ADVANCE, at their own time: an acquire's
 * WAIT, and WAITREFUSAL's TIMEOUT. */
static void wait_timeouts_fall_due_on_advance(void **state)
{
	struct gw g;
	start(&g, NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g), *w = gw_connect(&g),
		     *t = gw_connect(&g);
	gw_expect_int(a, 1, "LOCK.ACQUIRE job %d", LEASE);
	gw_send(b, "LOCK.ACQUIRE job %d WAIT 5000", LEASE);
	gw_send(w, "LOCK.WAITREFUSAL other TIMEOUT 200");
	gw_expect_no_reply(b, 100, "a wait before its time");
	gw_expect_int(t, 199, "DEBUG.CLOCK ADVANCE 199");
	gw_expect_no_reply(w, 50, "WAITREFUSAL before its TIMEOUT");
	gw_expect_int(t, 200, "DEBUG.CLOCK ADVANCE 1");
	redisReply *r = gw_reply_within(w, 1000);
	assert_non_null(r);
	assert_int_equal(r->integer, 0);
	freeReplyObject(r);
	gw_expect_int(t, 4999, "DEBUG.CLOCK ADVANCE 4799");
	gw_expect_no_reply(b, 50, "a wait before its time");
	gw_expect_int(t, 5000, "DEBUG.CLOCK ADVANCE 1");
	r = gw_reply_within(b, 1000);
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_NIL);
	freeReplyObject(r);
	gw_expect_err(w, "ERR syntax", "LOCK.WAITREFUSAL job TIMEOUT");
	redisFree(a);
	redisFree(b);
	redisFree(w);
	redisFree(t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* On DynamoDB (moto): ADVANCE answers only once the renewal its timer
 * sent is answered, so the loss is there when it returns. */
static void advance_waits_for_dynamodb(void **state)
{
	if (!gw_have_moto())
		skip();
	struct gw g;
	start(&g, gw_new_table());
	redisContext *a = gw_connect(&g), *t = gw_connect(&g);
	char st[32];
	gw_expect_int(a, 1, "LOCK.ACQUIRE job %d", LEASE);
	gw_expect_int(t, 2, "LOCK.SIMULATE HOLDER job %d", LEASE);
	gw_expect_int(t, 1000, "DEBUG.CLOCK ADVANCE 1000");
	assert_string_equal(list_state(t, "job", st, sizeof(st)), "lost");
	gw_expect_err(a, "LOST taken_over", "LOCK.RENEW job");
	gw_expect_int(a, 1, "LOCK.ACQUIRE job2 %d", LEASE); /* a new item */
	redisFree(a);
	redisFree(t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* --- PostgreSQL --- */

static PGconn *pg_open(int port)
{
	char ci[160];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=locks connect_timeout=5",
		 port);
	PGconn *c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("cannot connect: %s", PQerrorMessage(c));
	return c;
}

/* The first value of sql's one row ("" for NULL), in buf. */
static const char *pg_val(PGconn *c, const char *sql, char *buf, size_t len)
{
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	snprintf(buf, len, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return buf;
}

static void pg_expect_state(PGconn *c, const char *sql, const char *sqlstate)
{
	PGresult *r = PQexec(c, sql);
	const char *got = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (got == NULL || strcmp(got, sqlstate) != 0)
		fail_msg("%s: want %s, got %s (%s)", sql, sqlstate, got ? got : "none",
			 PQresultErrorMessage(r));
	PQclear(r);
}

static void pg_functions_drive_the_lock_world(void **state)
{
	struct gw g;
	struct gw_port pp = gw_free_port_arg();
	gw_start(&g, NULL, "--test-mode", "--pg-port", pp.arg, NULL);
	PGconn *a = pg_open(pp.n), *t = pg_open(pp.n);
	char v[64];
	PGresult *r = PQexec(t, "SELECT leasegate.clock_now()");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_int_equal(PQnfields(r), 2);
	assert_string_equal(PQfname(r, 0), "monotonic_ms");
	assert_string_equal(PQgetvalue(r, 0, 0), "0");
	PQclear(r);
	assert_string_equal(pg_val(a, "SELECT leasegate.acquire('job', 3000)", v, sizeof(v)), "1");
	assert_string_equal(
		pg_val(t, "SELECT leasegate.simulate_holder('job', 3000, 'pod')", v, sizeof(v)),
		"2");
	assert_string_equal(pg_val(t, "SELECT leasegate.clock_advance(1000)", v, sizeof(v)),
			    "1000");
	pg_expect_state(a, "SELECT leasegate.state('job')", "55000"); /* lost, reported */
	/* a contender waits, refused, and takes over after a whole lease */
	assert_int_equal(PQsendQuery(t, "SELECT leasegate.wait_refusal('job')"), 1);
	gw_sleep_ms(100); /* read and registered before the contender's try */
	assert_int_equal(PQsendQuery(a, "SELECT leasegate.acquire('job', 3000, 0)"), 1);
	PGresult *wr = PQgetResult(t);
	assert_int_equal(PQresultStatus(wr), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(wr, 0, 0), "t");
	PQclear(wr);
	while ((wr = PQgetResult(t)) != NULL)
		PQclear(wr);
	PGconn *u = pg_open(pp.n);
	assert_string_equal(pg_val(u, "SELECT leasegate.clock_advance(3000)", v, sizeof(v)),
			    "4000");
	PGresult *ar = PQgetResult(a);
	assert_int_equal(PQresultStatus(ar), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(ar, 0, 0), "3");
	PQclear(ar);
	while ((ar = PQgetResult(a)) != NULL)
		PQclear(ar);
	/* delete: lost as deleted, the next token is 1 */
	pg_val(u, "SELECT leasegate.simulate_delete('job')", v, sizeof(v));
	assert_string_equal(pg_val(u, "SELECT leasegate.clock_advance(1000)", v, sizeof(v)),
			    "5000");
	pg_expect_state(a, "SELECT leasegate.state('job')", "55000");
	assert_string_equal(pg_val(u, "SELECT leasegate.acquire('job', 3000)", v, sizeof(v)), "1");
	assert_string_equal(pg_val(u, "SELECT leasegate.simulate_release('none')", v, sizeof(v)),
			    "f");
	/* a wait for a refusal that none comes to ends at its timeout */
	assert_int_equal(PQsendQuery(t, "SELECT leasegate.wait_refusal('idle', 500)"), 1);
	gw_sleep_ms(100);
	assert_string_equal(pg_val(u, "SELECT leasegate.clock_advance(500)", v, sizeof(v)), "5500");
	wr = PQgetResult(t);
	assert_int_equal(PQresultStatus(wr), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(wr, 0, 0), "f");
	PQclear(wr);
	while ((wr = PQgetResult(t)) != NULL)
		PQclear(wr);
	PQfinish(a);
	PQfinish(t);
	PQfinish(u);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* --- where test mode is refused, and absent --- */

static void refused_where_it_must_be(void **state)
{
	struct gw g;
	struct gw_port p = gw_free_port_arg();
	gw_spawn(&g, NULL, "--test-mode", "--bind", "0.0.0.0", NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "--test-mode is refused with --bind 0.0.0.0") > 0);
	assert_false(gw_can_connect(g.port));
	gw_spawn(&g, NULL, "--test-mode", "--bind", "::", NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "must listen on loopback only") > 0);
	gw_spawn(&g, NULL, "--test-mode", "--table", "t", "--region", "us-east-1", "--endpoint",
		 "https://dynamodb.us-east-1.amazonaws.com", NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "that is AWS's") > 0);
	gw_spawn(&g, NULL, "--test-mode", "--table", "t", "--region", "eu-west-1", "--pg-port",
		 p.arg, NULL);
	assert_int_equal(gw_wait(&g), 1); /* no --endpoint: AWS's own */
	assert_true(gw_log_count(&g, "dynamodb.eu-west-1.amazonaws.com: that is AWS's") > 0);
	assert_false(gw_can_connect(p.n));
}

static void absent_without_test_mode(void **state)
{
	struct gw g;
	struct gw_port pp = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pp.arg, NULL);
	redisContext *c = gw_connect(&g);
	gw_expect_err(c, "ERR unknown command 'DEBUG.CLOCK'", "DEBUG.CLOCK NOW");
	redisReply *r = gw_cmd(c, "LOCK.SIMULATE HOLDER job 3000");
	assert_non_null(strstr(r->str, "it exists with leasegate --test-mode only"));
	freeReplyObject(r);
	gw_expect_err(c, "ERR unknown command 'lock.waitrefusal'", "lock.waitrefusal job");
	r = gw_cmd(c, "COMMAND INFO lock.simulate");
	assert_int_equal(r->elements, 1);
	assert_int_equal(r->element[0]->type, REDIS_REPLY_NIL);
	freeReplyObject(r);
	PGconn *p = pg_open(pp.n);
	pg_expect_state(p, "SELECT leasegate.clock_advance(1000)", "42883");
	pg_expect_state(p, "SELECT leasegate.simulate_holder('job', 3000)", "42883");
	PQfinish(p);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(clock_moves_only_when_told, gw_teardown),
		cmocka_unit_test_teardown(heartbeats_keep_a_lease_across_advances, gw_teardown),
		cmocka_unit_test_teardown(simulated_holder_takes_over_at_the_next_renewal,
					  gw_teardown),
		cmocka_unit_test_teardown(contender_takes_over_after_a_whole_lease, gw_teardown),
		cmocka_unit_test_teardown(simulated_release_and_delete, gw_teardown),
		cmocka_unit_test_teardown(wait_timeouts_fall_due_on_advance, gw_teardown),
		cmocka_unit_test_teardown(advance_waits_for_dynamodb, gw_teardown),
		cmocka_unit_test_teardown(pg_functions_drive_the_lock_world, gw_teardown),
		cmocka_unit_test_teardown(refused_where_it_must_be, gw_teardown),
		cmocka_unit_test_teardown(absent_without_test_mode, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
