/*
 * it_acl_pg: the users of --aclfile on the PostgreSQL port, with libpq
 * against the real binary: a >password user logs in by SCRAM-SHA-256 (and
 * by MD5 with --pg-auth md5), a #digest-only user is refused saying why
 * (cleartext needs TLS), nopass lets in, off and wrong passwords are
 * 28P01; every lock function allowed and refused by a pattern on
 * pg:<database>:* and by a category (42501); leasegate.* by its name
 * argument; +name/-name rules on a function's name; a --pg-users user the
 * file does not name has default's rules;
 * failures counted under protocol="postgresql"; ACL LOAD from Redis
 * reaches PostgreSQL sessions.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include "tests/support/aclhelp.h"
#include "tests/support/gw.h"
#include "tests/support/testpki.h"

/* sha256("1") */
#define DIGEST_1 "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"

static const char users[] = "user default off\n"
			    "user app on >apppw ~pg:shop:* ~orders:* +@lock +@connection\n"
			    "user reader on >readpw ~* +@read\n"
			    "user digest on #" DIGEST_1 " ~* +@all\n"
			    "user open on nopass ~pg:open:* +@lock\n"
			    "user sleepy off >sleepypw ~* +@all\n"
			    "user boss on >bosspw allkeys +@all\n";

struct pgw {
	struct gw g;
	struct gw_port pg, admin;
	char path[256];
};

/* delay: --auth-max-delay ("0": no slowdown, as most tests here want). */
static void start_delay(struct pgw *p, const char *text, const char *delay, const char *o1,
			const char *o2)
{
	acl_path(p->path, sizeof(p->path), "it-acl-pg");
	acl_write(p->path, text, 0600);
	p->pg = gw_free_port_arg();
	p->admin = gw_free_port_arg();
	gw_start(&p->g, NULL, "--aclfile", p->path, "--pg-port", p->pg.arg, "--admin-port",
		 p->admin.arg, "--auth-max-delay", delay, o1, o2, NULL);
}

static void start(struct pgw *p, const char *text, const char *o1, const char *o2)
{
	start_delay(p, text, "0", o1, o2);
}

static PGconn *try_login(const struct pgw *p, const char *user, const char *password,
			 const char *db)
{
	char ci[300];
	snprintf(ci, sizeof(ci),
		 "host=127.0.0.1 port=%d user=%s dbname=%s password=%s connect_timeout=5 "
		 "sslmode=disable",
		 p->pg.n, user, db, password);
	return PQconnectdb(ci);
}

static PGconn *login(const struct pgw *p, const char *user, const char *password, const char *db)
{
	PGconn *c = try_login(p, user, password, db);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("%s refused: %s", user, PQerrorMessage(c));
	return c;
}

static void refused(const struct pgw *p, const char *user, const char *password,
		    const char *message)
{
	PGconn *c = try_login(p, user, password, "shop");
	assert_int_equal(PQstatus(c), CONNECTION_BAD);
	if (strstr(PQerrorMessage(c), message) == NULL)
		fail_msg("%s: '%s', want '%s'", user, PQerrorMessage(c), message);
	PQfinish(c);
}

/* sql answers one row whose first value is want. */
static void expect_row(PGconn *c, const char *sql, const char *want)
{
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	if (want != NULL && strcmp(PQgetvalue(r, 0, 0), want) != 0)
		fail_msg("%s: '%s', want '%s'", sql, PQgetvalue(r, 0, 0), want);
	PQclear(r);
}

/* sql fails with 42501 and a message containing message. */
static void expect_denied(PGconn *c, const char *sql, const char *message)
{
	PGresult *r = PQexec(c, sql);
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
	const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (state == NULL || strcmp(state, "42501") != 0 ||
	    strstr(PQresultErrorMessage(r), message) == NULL)
		fail_msg("%s: %s %s", sql, state ? state : "-", PQresultErrorMessage(r));
	PQclear(r);
}

static void test_logins(void **state)
{
	struct pgw p;
	start(&p, users, NULL, NULL);
	PQfinish(login(&p, "app", "apppw", "shop")); /* SCRAM from >apppw */
	PQfinish(login(&p, "open", "anything", "open"));
	refused(&p, "app", "wrong", "password authentication failed for user \"app\"");
	refused(&p, "sleepy", "sleepypw", "password authentication failed for user \"sleepy\"");
	refused(&p, "nobody", "x", "password authentication failed for user \"nobody\"");
	refused(&p, "default", "", "password authentication failed for user \"default\"");
	/* a #digest cannot give SCRAM's verifier: cleartext over TLS only */
	refused(&p, "digest", "1", "a cleartext password is taken over TLS only");
	const char *m = acl_metrics(p.admin.n);
	assert_int_equal(acl_metric(m, "leasegate_auth_failures_total{protocol=\"postgresql\"}"),
			 4);
	assert_int_equal(acl_metric(m, "leasegate_auth_failures_total{protocol=\"redis\"}"), 0);
	assert_int_equal(gw_log_count(&p.g, "authentication failed: user \"app\" from 127.0.0.1"),
			 1);
	assert_int_equal(gw_log_count(&p.g, "wrong"), 0);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);

	/* --pg-auth md5: the MD5 secret derived from >apppw */
	start(&p, users, "--pg-auth", "md5");
	PQfinish(login(&p, "app", "apppw", "shop"));
	refused(&p, "app", "wrong", "password authentication failed for user \"app\"");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

static void test_advisory_locks_by_pattern(void **state)
{
	struct pgw p;
	start(&p, users, NULL, NULL);
	PGconn *c = login(&p, "app", "apppw", "shop"); /* pg:shop:* */
	expect_row(c, "SELECT pg_advisory_lock(1)", "");
	expect_row(c, "SELECT pg_try_advisory_lock(2)", "t");
	expect_row(c, "SELECT pg_advisory_lock(3, 4)", "");
	expect_row(c, "SELECT leasegate.token(1)", NULL);
	expect_row(c, "SELECT pg_advisory_unlock(1)", "t");
	expect_row(c, "SELECT pg_advisory_unlock(3, 4)", "t");
	PQclear(PQexec(c, "BEGIN"));
	expect_row(c, "SELECT pg_advisory_xact_lock(5)", "");
	expect_row(c, "SELECT pg_try_advisory_xact_lock(6)", "t");
	PQclear(PQexec(c, "COMMIT"));
	expect_row(c, "SELECT pg_advisory_unlock_all()", "");
	/* leasegate.*: by the name given */
	expect_row(c, "SELECT leasegate.acquire('orders:9', 5000)", NULL);
	expect_row(c, "SELECT * FROM leasegate.state('orders:9')", "t");
	expect_row(c, "SELECT leasegate.release('orders:9')", "t");
	expect_denied(c, "SELECT leasegate.acquire('invoices:9', 5000)",
		      "permission denied for lock \"invoices:9\"");
	expect_denied(c, "SELECT * FROM leasegate.state('invoices:9')",
		      "permission denied for lock \"invoices:9\"");
	expect_denied(c, "SELECT leasegate.release('invoices:9')",
		      "permission denied for lock \"invoices:9\"");
	expect_row(c, "SELECT leasegate.check('orders:9', 1)", "f");
	expect_denied(c, "SELECT leasegate.check('invoices:9', 1)",
		      "permission denied for lock \"invoices:9\"");
	expect_denied(c, "SELECT leasegate.transact('invoices:9', 1, '[]')",
		      "permission denied for lock \"invoices:9\"");
	PQfinish(c);

	/* another database: pg:other:*, refused */
	c = login(&p, "app", "apppw", "other");
	static const char *const sql[] = {
		"SELECT pg_advisory_lock(1)",	   "SELECT pg_try_advisory_lock(1)",
		"SELECT pg_advisory_unlock(1)",	   "SELECT pg_advisory_lock(1, 2)",
		"SELECT pg_advisory_xact_lock(1)", "SELECT pg_try_advisory_xact_lock(1)",
		"SELECT leasegate.token(1)",
	};
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		expect_denied(c, sql[i], "permission denied for lock \"pg:other:1");
		PQclear(PQexec(c, "ROLLBACK"));
	}
	/* the extended protocol takes the same check */
	const char *v[1] = {"7"};
	PGresult *r = PQexecParams(c, "SELECT pg_advisory_lock($1)", 1, NULL, v, NULL, NULL, 0);
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
	assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42501");
	PQclear(r);
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

static void test_functions_by_category(void **state)
{
	struct pgw p;
	start(&p, users, NULL, NULL);
	PGconn *c = login(&p, "reader", "readpw", "shop"); /* +@read only */
	expect_row(c, "SELECT * FROM leasegate.state('x')", "f");
	expect_row(c, "SELECT leasegate.token(1)", NULL);
	expect_row(c, "SELECT leasegate.check('x', 1)", "f");
	static const char *const sql[][2] = {
		{"SELECT pg_advisory_lock(1)", "pg_advisory_lock"},
		{"SELECT pg_try_advisory_lock(1)", "pg_try_advisory_lock"},
		{"SELECT pg_advisory_unlock(1)", "pg_advisory_unlock"},
		{"SELECT pg_advisory_unlock_all()", "pg_advisory_unlock_all"},
		{"SELECT leasegate.acquire('x', 5000)", "leasegate.acquire"},
		{"SELECT leasegate.release('x')", "leasegate.release"},
		{"SELECT leasegate.transact('x', 1, '[]')", "leasegate.transact"},
	};
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		char want[128];
		snprintf(want, sizeof(want), "permission denied for function %s", sql[i][1]);
		expect_denied(c, sql[i][0], want);
	}
	/* what is no lock runs for anyone */
	expect_row(c, "SELECT 1", "1");
	expect_row(c, "SHOW server_version", "15.0");
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

/* +name and -name rules on PostgreSQL functions: the file loads, and the
 * rule decides for the function, however the call spells it. A function
 * no rule can act on (not checked) is no name. */
static void test_rules_by_function_name(void **state)
{
	struct pgw p;
	start(&p,
	      "user default off\n"
	      "user app on >apppw ~pg:shop:* ~orders:* +@lock -pg_advisory_unlock_all "
	      "-leasegate.transact\n"
	      "user peek on >peekpw ~* -@all +leasegate.state +PG_TRY_ADVISORY_LOCK\n"
	      "user boss on >bosspw allkeys +@all\n",
	      NULL, NULL);
	PGconn *c = login(&p, "app", "apppw", "shop");
	expect_row(c, "SELECT pg_advisory_lock(1)", "");
	expect_denied(c, "SELECT pg_advisory_unlock_all()",
		      "permission denied for function pg_advisory_unlock_all");
	expect_denied(c, "SELECT pg_catalog.PG_ADVISORY_UNLOCK_ALL()",
		      "permission denied for function pg_advisory_unlock_all");
	expect_denied(c, "SELECT leasegate.transact('orders:1', 1, '[]')",
		      "permission denied for function leasegate.transact");
	expect_row(c, "SELECT pg_advisory_unlock(1)", "t");
	PQfinish(c);
	c = login(&p, "peek", "peekpw", "shop");
	expect_row(c, "SELECT * FROM leasegate.state('x')", "f");
	expect_row(c, "SELECT pg_try_advisory_lock(1)", "t");
	expect_denied(c, "SELECT pg_advisory_lock(2)",
		      "permission denied for function pg_advisory_lock");
	expect_denied(c, "SELECT leasegate.check('x', 1)",
		      "permission denied for function leasegate.check");
	PQfinish(c);
	/* a name that is neither a command nor a checked function stops a load */
	redisContext *boss = gw_connect(&p.g);
	redisReply *rep = gw_cmd(boss, "AUTH boss bosspw");
	freeReplyObject(rep);
	static const char *const bad[] = {"+version", "+pg_catalog.pg_advisory_lock",
					  "-pg_advisory_lock|x", "+leasegate.nope"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[200];
		snprintf(text, sizeof(text), "user boss on >bosspw allkeys +@all %s\n", bad[i]);
		acl_write(p.path, text, 0600);
		rep = gw_cmd(boss, "ACL LOAD");
		assert_int_equal(rep->type, REDIS_REPLY_ERROR);
		if (strstr(rep->str, "unknown command") == NULL)
			fail_msg("%s: %s", bad[i], rep->str);
		freeReplyObject(rep);
	}
	redisFree(boss);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

/* ACL LOAD (from the Redis port) reaches PostgreSQL sessions at once. */
static void test_reload_reaches_pg(void **state)
{
	struct pgw p;
	start(&p, users, NULL, NULL);
	PGconn *c = login(&p, "app", "apppw", "shop");
	PGconn *r = login(&p, "reader", "readpw", "shop");
	expect_row(c, "SELECT pg_try_advisory_lock(1)", "t");
	acl_write(p.path,
		  "user app on >apppw ~pg:other:* +@lock\n"
		  "user boss on >bosspw allkeys +@all\n",
		  0600);
	redisContext *boss = gw_connect(&p.g);
	redisReply *rep = gw_cmd(boss, "AUTH boss bosspw");
	freeReplyObject(rep);
	rep = gw_cmd(boss, "ACL LOAD");
	assert_string_equal(rep->str, "OK");
	freeReplyObject(rep);
	expect_denied(c, "SELECT pg_try_advisory_lock(2)",
		      "permission denied for lock \"pg:shop:2\"");
	/* reader is gone: its session was closed */
	PGresult *res = PQexec(r, "SELECT 1");
	assert_int_not_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	PQclear(res);
	PQfinish(r);
	refused(&p, "reader", "readpw", "password authentication failed");
	/* a new password for app works at once (a new SCRAM verifier) */
	acl_write(p.path, "user app on >newpw ~* +@lock\nuser boss on >bosspw allkeys +@all\n",
		  0600);
	rep = gw_cmd(boss, "ACL LOAD");
	assert_string_equal(rep->str, "OK");
	freeReplyObject(rep);
	refused(&p, "app", "apppw", "password authentication failed");
	PQfinish(login(&p, "app", "newpw", "shop"));
	redisFree(boss);
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

/* A pg_advisory_lock waiting when a reload takes the name from the user
 * ends with 42501 (it is not granted afterwards); one still allowed goes
 * on. */
static void test_reload_ends_waiting_lock(void **state)
{
	struct pgw p;
	start(&p, users, NULL, NULL);
	PGconn *hold = login(&p, "boss", "bosspw", "shop");
	PGconn *waits = login(&p, "app", "apppw", "shop");
	PGconn *allowed = login(&p, "app", "apppw", "orders");
	expect_row(hold, "SELECT pg_advisory_lock(7)", NULL);
	expect_row(hold, "SELECT leasegate.acquire('orders:7', 30000)", NULL);
	assert_int_equal(PQsendQuery(waits, "SELECT pg_advisory_lock(7)"), 1);
	assert_int_equal(PQsendQuery(allowed, "SELECT leasegate.acquire('orders:7', 10000, 0)"), 1);
	redisContext *boss = gw_connect(&p.g);
	redisReply *rep = gw_cmd(boss, "AUTH boss bosspw");
	freeReplyObject(rep);
	for (int i = 0;; i++) { /* both waits queued */
		rep = gw_cmd(boss, "LOCK.LIST");
		size_t n = 0;
		for (size_t e = 0; e < rep->elements; e++)
			n += strcmp(rep->element[e]->element[5]->str, "waiting") == 0;
		freeReplyObject(rep);
		if (n == 2)
			break;
		assert_true(i < 500);
		usleep(10000);
	}
	acl_write(p.path,
		  "user app on >apppw ~orders:* +@lock\n"
		  "user boss on >bosspw allkeys +@all\n",
		  0600);
	assert_int_equal(gw_signal(&p.g, SIGHUP), 0);
	/* the reload is read in the gateway's loop: once ACL LIST shows it,
	 * the waits it forbids were ended (the unlock must not come first) */
	for (int i = 0;; i++) {
		rep = gw_cmd(boss, "ACL LIST");
		bool reloaded = rep->type == REDIS_REPLY_ARRAY;
		for (size_t e = 0; reloaded && e < rep->elements; e++)
			if (strstr(rep->element[e]->str, "user app ") != NULL)
				reloaded = strstr(rep->element[e]->str, "pg:shop") == NULL;
		freeReplyObject(rep);
		if (reloaded)
			break;
		assert_true(i < 500);
		usleep(10000);
	}
	expect_row(hold, "SELECT pg_advisory_unlock(7)", "t");
	PGresult *r = PQgetResult(waits);
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
	const char *sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (sqlstate == NULL || strcmp(sqlstate, "42501") != 0 ||
	    strstr(PQresultErrorMessage(r), "no longer allow it on 'pg:shop:7'") == NULL)
		fail_msg("%s %s", sqlstate ? sqlstate : "-", PQresultErrorMessage(r));
	PQclear(r);
	while ((r = PQgetResult(waits)) != NULL)
		PQclear(r);
	expect_row(hold, "SELECT pg_try_advisory_lock(7)", "t"); /* free: not granted */
	expect_row(hold, "SELECT leasegate.release('orders:7')", "t");
	r = PQgetResult(allowed);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	PQclear(r);
	while ((r = PQgetResult(allowed)) != NULL)
		PQclear(r);
	redisFree(boss);
	PQfinish(allowed);
	PQfinish(waits);
	PQfinish(hold);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

/* Repeated failures from one address slow its logins, the right one too
 * (by SCRAM: the server-final message waits with the rest). */
static void test_failures_slowed(void **state)
{
	struct pgw p;
	start_delay(&p, users, "5s", NULL, NULL);
	long long took[4];
	for (int i = 0; i < 4; i++) {
		long long t0 = gw_now_ms();
		refused(&p, "app", "wrong", "password authentication failed for user \"app\"");
		took[i] = gw_now_ms() - t0;
	}
	print_message("failed logins answered in %lld %lld %lld %lld ms\n", took[0], took[1],
		      took[2], took[3]);
	assert_true(took[0] < 300);		       /* 0 */
	assert_true(took[3] >= 300 && took[3] < 3000); /* 400 */
	long long t0 = gw_now_ms();
	PGconn *c = login(&p, "app", "apppw", "shop"); /* 800 */
	assert_true(gw_now_ms() - t0 >= 600);
	expect_row(c, "SELECT pg_try_advisory_lock(1)", "t");
	PQfinish(c);
	t0 = gw_now_ms(); /* reset by the success */
	refused(&p, "app", "wrong", "password authentication failed");
	assert_true(gw_now_ms() - t0 < 300);
	/* a client that leaves while its answer waits is no trouble */
	refused(&p, "app", "wrong", "password authentication failed");
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) { /* its answer is held 200 ms: killed before */
		PQfinish(try_login(&p, "app", "wrong", "shop"));
		_exit(0);
	}
	gw_sleep_ms(100);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	gw_sleep_ms(300);
	PQfinish(login(&p, "app", "apppw", "shop"));
	assert_int_equal(acl_metric(acl_metrics(p.admin.n),
				    "leasegate_auth_failures_total{protocol=\"postgresql\"}"),
			 7);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
}

/* A #digest user over TLS: its cleartext password, checked against the
 * digest; without TLS on that port, refused saying so. */
static void test_digest_user_over_tls(void **state)
{
	struct testpki pki;
	struct pgw p;
	testpki_make(&pki);
	acl_path(p.path, sizeof(p.path), "it-acl-pg");
	acl_write(p.path, users, 0600);
	p.pg = gw_free_port_arg();
	gw_start(&p.g, NULL, "--aclfile", p.path, "--pg-port", p.pg.arg, "--auth-max-delay", "0",
		 "--tls-cert-file", pki.cert, "--tls-key-file", pki.key, NULL);
	char ci[300];
	snprintf(ci, sizeof(ci),
		 "host=127.0.0.1 port=%d user=digest dbname=shop password=1 sslmode=require "
		 "connect_timeout=5",
		 p.pg.n);
	PGconn *c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("over TLS: %s", PQerrorMessage(c));
	assert_non_null(PQsslAttribute(c, "protocol"));
	expect_row(c, "SELECT pg_try_advisory_lock(1)", "t");
	PQfinish(c);
	snprintf(ci, sizeof(ci),
		 "host=127.0.0.1 port=%d user=digest dbname=shop password=2 sslmode=require "
		 "connect_timeout=5",
		 p.pg.n);
	c = PQconnectdb(ci);
	assert_int_equal(PQstatus(c), CONNECTION_BAD);
	assert_non_null(strstr(PQerrorMessage(c), "password authentication failed"));
	PQfinish(c);
	/* libpq's sslmode=disable: in the clear, refused saying why */
	refused(&p, "digest", "1", "a cleartext password is taken over TLS only");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
	testpki_free(&pki);
}

/* A user of --pg-users the ACL file does not name: default's rules. */
static void test_pg_users_beside_acl(void **state)
{
	struct pgw p;
	struct gw t;
	struct gw_port tp = gw_free_port_arg();
	gw_start(&t, NULL, "--pg-port", tp.arg, NULL); /* trust: for libpq's verifier */
	char ci[200];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=x dbname=x connect_timeout=5", tp.n);
	PGconn *tc = PQconnectdb(ci);
	assert_int_equal(PQstatus(tc), CONNECTION_OK);
	char *v = PQencryptPasswordConn(tc, "wonderland", "alice", "scram-sha-256");
	assert_non_null(v);
	char upath[256], line[400];
	acl_path(upath, sizeof(upath), "it-acl-pg-users");
	snprintf(line, sizeof(line), "alice:%s\n", v);
	acl_write(upath, line, 0600);
	PQfreemem(v);
	PQfinish(tc);
	assert_int_equal(gw_signal(&t, SIGTERM), 0);

	start(&p, "user default on nopass ~pg:shop:1 +@lock\nuser boss on >b ~* +@all\n",
	      "--pg-users", upath);
	PGconn *c = login(&p, "alice", "wonderland", "shop");
	expect_row(c, "SELECT pg_try_advisory_lock(1)", "t");
	expect_denied(c, "SELECT pg_try_advisory_lock(2)", "permission denied for lock");
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(p.path);
	unlink(upath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_logins, gw_teardown),
		cmocka_unit_test_teardown(test_advisory_locks_by_pattern, gw_teardown),
		cmocka_unit_test_teardown(test_functions_by_category, gw_teardown),
		cmocka_unit_test_teardown(test_rules_by_function_name, gw_teardown),
		cmocka_unit_test_teardown(test_reload_reaches_pg, gw_teardown),
		cmocka_unit_test_teardown(test_reload_ends_waiting_lock, gw_teardown),
		cmocka_unit_test_teardown(test_failures_slowed, gw_teardown),
		cmocka_unit_test_teardown(test_digest_user_over_tls, gw_teardown),
		cmocka_unit_test_teardown(test_pg_users_beside_acl, gw_teardown),
	};
	return cmocka_run_group_tests_name("acl pg", tests, NULL, NULL);
}
