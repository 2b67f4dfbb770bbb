/*
 * it_release_ack: acknowledged means done, across replicas. Two gateways
 * on one moto table; a client of replica A ends a lease in every way the
 * front-ends offer (PostgreSQL: COMMIT, END, ROLLBACK, ABORT, a failed
 * transaction's end, an implicit transaction's end in a simple query and
 * at Sync, pg_advisory_unlock, pg_advisory_unlock_all, DISCARD ALL; Redis:
 * LOCK.RELEASE, RESET, LEADER.RESIGN, DEL, LOCK.FORCE-RELEASE and a lock
 * library's release script), and the moment its answer arrives a client
 * of replica B tries the lock: it must be granted, every time of ROUNDS.
 * Before COMMIT, ROLLBACK, the implicit transaction's end,
 * pg_advisory_unlock_all, DISCARD ALL and RESET waited for their writes,
 * B's try was refused in 17 to 30 rounds of 40 on each of them; the
 * others waited already and guard against a return. Without LG_MOTO every
 * test fails.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"

enum { ROUNDS = 40 };

/* A gateway with a PostgreSQL port. */
struct pgw {
	struct gw g;
	struct gw_port pg;
};

static void start_two(struct pgw *a, struct pgw *b)
{
	char table[64];
	assert_true(gw_have_moto());
	snprintf(table, sizeof(table), "%s", gw_new_table());
	a->pg = gw_free_port_arg();
	b->pg = gw_free_port_arg();
	gw_start(&a->g, table, "--pg-port", a->pg.arg, "--holder-label", "gw-a", NULL);
	gw_start(&b->g, table, "--pg-port", b->pg.arg, "--holder-label", "gw-b", NULL);
}

static void stop_two(struct pgw *a, struct pgw *b)
{
	assert_int_equal(gw_signal(&a->g, SIGTERM), 0);
	assert_int_equal(gw_signal(&b->g, SIGTERM), 0);
}

/* --- PostgreSQL --- */

static PGconn *pg_open(const struct pgw *p)
{
	char ci[160];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=app dbname=locks connect_timeout=5",
		 p->pg.n);
	PGconn *c = PQconnectdb(ci);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	return c;
}

/* Runs one statement. "P:" before it: through the extended protocol
 * (PQexecParams, $1 = 1: its Sync ends the implicit transaction); "E:":
 * it must fail. Returns the first value of the result, "" if none. */
static void pg_run(PGconn *c, const char *sql, char *val, size_t cap)
{
	bool params = strncmp(sql, "P:", 2) == 0, fails = strncmp(sql, "E:", 2) == 0;
	const char *one = "1";
	PGresult *r = params ? PQexecParams(c, sql + 2, 1, NULL, &one, NULL, NULL, 0)
			     : PQexec(c, fails ? sql + 2 : sql);
	ExecStatusType st = PQresultStatus(r);
	if (fails) {
		assert_int_equal(st, PGRES_FATAL_ERROR);
	} else if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		print_error("%s: %s\n", sql, PQresultErrorMessage(r));
		fail();
	}
	snprintf(val, cap, "%s",
		 st == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
}

struct pg_case {
	const char *what;
	const char *const take[3]; /* on A, NULL-ended */
	const char *const end[4];  /* on A: the lease ends with the last */
};

static const struct pg_case pg_cases[] = {
	{"COMMIT", {"BEGIN", "SELECT pg_advisory_xact_lock(1)"}, {"COMMIT"}},
	{"END", {"BEGIN", "SELECT pg_advisory_xact_lock(1)"}, {"END"}},
	{"ROLLBACK", {"BEGIN", "SELECT pg_advisory_xact_lock(1)"}, {"ROLLBACK"}},
	{"ABORT", {"BEGIN", "SELECT pg_advisory_xact_lock(1)"}, {"ABORT"}},
	{"a failed transaction's COMMIT",
	 {"BEGIN", "SELECT pg_advisory_xact_lock(1)"},
	 {"E:SELECT no_such_function()", "COMMIT"}},
	{"a simple query's implicit transaction", {NULL}, {"SELECT pg_advisory_xact_lock(1)"}},
	{"a failed simple query's implicit transaction",
	 {NULL},
	 {"E:SELECT pg_advisory_xact_lock(1); SELECT no_such_function()"}},
	{"Sync's implicit transaction", {NULL}, {"P:SELECT pg_advisory_xact_lock($1)"}},
	{"pg_advisory_unlock", {"SELECT pg_advisory_lock(1)"}, {"SELECT pg_advisory_unlock(1)"}},
	{"pg_advisory_unlock_all",
	 {"SELECT pg_advisory_lock(1)", "SELECT pg_advisory_lock(1)"},
	 {"SELECT pg_advisory_unlock_all()"}},
	{"DISCARD ALL", {"SELECT pg_advisory_lock(1)"}, {"DISCARD ALL"}},
};

/* Ends the lease on A as k says, then tries on B at once; how many of
 * ROUNDS tries were refused. */
static int pg_refusals(PGconn *a, PGconn *b, const struct pg_case *k)
{
	char v[32];
	int refused = 0;
	for (int i = 0; i < ROUNDS; i++) {
		for (unsigned j = 0; j < 3 && k->take[j] != NULL; j++)
			pg_run(a, k->take[j], v, sizeof(v));
		for (unsigned j = 0; j < 4 && k->end[j] != NULL; j++)
			pg_run(a, k->end[j], v, sizeof(v));
		pg_run(b, "SELECT pg_try_advisory_lock(1)", v, sizeof(v));
		if (strcmp(v, "t") != 0) {
			refused++;
			continue;
		}
		pg_run(b, "SELECT pg_advisory_unlock(1)", v, sizeof(v));
		assert_string_equal(v, "t");
	}
	return refused;
}

static void test_pg_ends_are_done_when_answered(void **state)
{
	struct pgw ga, gb;
	int failed = 0;
	start_two(&ga, &gb);
	PGconn *a = pg_open(&ga), *b = pg_open(&gb);
	for (size_t i = 0; i < sizeof(pg_cases) / sizeof(pg_cases[0]); i++) {
		int n = pg_refusals(a, b, &pg_cases[i]);
		printf("# %s on A, then a try on B: %d of %d refused\n", pg_cases[i].what, n,
		       ROUNDS);
		failed += n > 0;
	}
	PQfinish(a);
	PQfinish(b);
	stop_two(&ga, &gb);
	assert_int_equal(failed, 0);
}

/* --- Redis --- */

struct redis_case {
	const char *what;
	const char *take, *end;	 /* on A */
	const char *try, *untry; /* on B */
};

#define RELEASE_SCRIPT "EVALSHA c3f8721cbb97f72bc19e972846bd7aaf91901658 1 r v1"

static const struct redis_case redis_cases[] = {
	{"LOCK.RELEASE", "LOCK.ACQUIRE r 3000", "LOCK.RELEASE r", "LOCK.ACQUIRE r 3000",
	 "LOCK.RELEASE r"},
	{"RESET", "LOCK.ACQUIRE r 3000", "RESET", "LOCK.ACQUIRE r 3000", "LOCK.RELEASE r"},
	{"LEADER.RESIGN", "LEADER.CAMPAIGN r 3000", "LEADER.RESIGN r", "LOCK.ACQUIRE r 3000",
	 "LOCK.RELEASE r"},
	{"DEL", "SET r v1 NX PX 3000", "DEL r", "SET r v2 NX PX 3000", "DEL r"},
	{"a lock library's release script", "SET r v1 NX PX 3000", RELEASE_SCRIPT,
	 "SET r v2 NX PX 3000", "DEL r"},
	{"LOCK.FORCE-RELEASE", "LOCK.ACQUIRE r 3000", "LOCK.FORCE-RELEASE r", "LOCK.ACQUIRE r 3000",
	 "LOCK.RELEASE r"},
};

static bool granted(const redisReply *r)
{
	return r->type == REDIS_REPLY_INTEGER ||
	       (r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0);
}

static int redis_refusals(redisContext *a, redisContext *b, const struct redis_case *k)
{
	int refused = 0;
	for (int i = 0; i < ROUNDS; i++) {
		redisReply *r = gw_cmd(a, k->take);
		assert_true(granted(r));
		freeReplyObject(r);
		r = gw_cmd(a, k->end);
		assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
		freeReplyObject(r);
		r = gw_cmd(b, k->try);
		bool ok = granted(r);
		freeReplyObject(r);
		if (!ok) {
			refused++;
			continue;
		}
		gw_expect_int(b, 1, k->untry);
	}
	return refused;
}

static void test_redis_ends_are_done_when_answered(void **state)
{
	struct pgw ga, gb;
	int failed = 0;
	start_two(&ga, &gb);
	redisContext *a = gw_connect(&ga.g), *b = gw_connect(&gb.g);
	for (size_t i = 0; i < sizeof(redis_cases) / sizeof(redis_cases[0]); i++) {
		int n = redis_refusals(a, b, &redis_cases[i]);
		printf("# %s on A, then a try on B: %d of %d refused\n", redis_cases[i].what, n,
		       ROUNDS);
		failed += n > 0;
	}
	redisFree(a);
	redisFree(b);
	stop_two(&ga, &gb);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_pg_ends_are_done_when_answered, gw_teardown),
		cmocka_unit_test_teardown(test_redis_ends_are_done_when_answered, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
