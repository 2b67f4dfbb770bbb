/*
 * it_pg_auth: the PostgreSQL port's authentication, with libpq against the
 * real binary: a users file of verifiers made by libpq itself
 * (PQencryptPasswordConn: SCRAM-SHA-256 as PostgreSQL stores it, and md5),
 * --pg-password with --pg-auth scram, md5 and password (cleartext; over
 * plain TCP refused unless --pg-allow-cleartext-over-plain yes), a user
 * of the file beside --pg-password, an unknown user refused exactly as a
 * wrong password (28P01, same message form), trust said in the log, a bad
 * users file stopping the start.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"

struct pgw {
	struct gw g;
	struct gw_port pg;
};

/* Starts a gateway with a PostgreSQL port and the NULL-terminated options
 * (at most 6). */
static void start(struct pgw *p, const char *o1, const char *o2, const char *o3, const char *o4,
		  const char *o5, const char *o6)
{
	p->pg = gw_free_port_arg();
	gw_start(&p->g, NULL, "--pg-port", p->pg.arg, o1, o2, o3, o4, o5, o6, NULL);
}

static PGconn *try_login(const struct pgw *p, const char *user, const char *password)
{
	char ci[256];
	snprintf(ci, sizeof(ci),
		 "host=127.0.0.1 port=%d user=%s dbname=locks password=%s connect_timeout=5",
		 p->pg.n, user, password);
	return PQconnectdb(ci);
}

/* user/password gets in, and the session works. */
static void expect_in(const struct pgw *p, const char *user, const char *password)
{
	PGconn *c = try_login(p, user, password);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("%s/%s refused: %s", user, password, PQerrorMessage(c));
	PGresult *r = PQexec(c, "SELECT pg_try_advisory_lock(7)");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	PQfinish(c);
}

/* user/password is refused with 28P01 and PostgreSQL's message. */
static void expect_out(const struct pgw *p, const char *user, const char *password)
{
	PGconn *c = try_login(p, user, password);
	assert_int_equal(PQstatus(c), CONNECTION_BAD);
	char want[128];
	snprintf(want, sizeof(want), "password authentication failed for user \"%s\"", user);
	if (strstr(PQerrorMessage(c), want) == NULL)
		fail_msg("%s/%s: %s", user, password, PQerrorMessage(c));
	PQfinish(c);
}

/* Verifiers made by libpq, on a connection to a trusting gateway (the
 * algorithm named, libpq asks the server nothing). */
static void make_users_file(char *path, size_t n)
{
	struct pgw t;
	start(&t, NULL, NULL, NULL, NULL, NULL, NULL);
	PGconn *c = try_login(&t, "x", "");
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	char *alice = PQencryptPasswordConn(c, "wonderland", "alice", "scram-sha-256");
	char *bob = PQencryptPasswordConn(c, "builder", "bob", "md5");
	assert_non_null(alice);
	assert_non_null(bob);
	assert_true(strncmp(alice, "SCRAM-SHA-256$4096:", 19) == 0);
	assert_true(strncmp(bob, "md5", 3) == 0);
	snprintf(path, n, "%s/pg-users-%ld", getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp",
		 (long)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# made by libpq\nalice:%s\n\nbob:%s\n", alice, bob);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0); /* group/other-readable is refused */
	PQfreemem(alice);
	PQfreemem(bob);
	PQfinish(c);
	assert_int_equal(gw_signal(&t.g, SIGTERM), 0);
}

static void test_users_file(void **state)
{
	char path[256];
	make_users_file(path, sizeof(path));
	struct pgw p;
	start(&p, "--pg-users", path, NULL, NULL, NULL, NULL);
	expect_in(&p, "alice", "wonderland"); /* SCRAM-SHA-256 */
	expect_out(&p, "alice", "Wonderland");
	expect_in(&p, "bob", "builder"); /* md5 secret: asked by MD5 */
	expect_out(&p, "bob", "wonderland");
	expect_out(&p, "mallory", "wonderland"); /* unknown: as a wrong password */
	expect_out(&p, "mallory", "");
	assert_int_equal(gw_log_count(&p.g, "password authentication"), 1);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);

	/* with --pg-auth md5, alice (SCRAM only) is still asked by SCRAM */
	start(&p, "--pg-users", path, "--pg-auth", "md5", NULL, NULL);
	expect_in(&p, "alice", "wonderland");
	expect_in(&p, "bob", "builder");
	expect_out(&p, "bob", "nope");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);

	/* beside --pg-password: users of the file keep theirs, others take it */
	start(&p, "--pg-users", path, "--pg-password", "s3cret", NULL, NULL);
	expect_in(&p, "alice", "wonderland");
	expect_out(&p, "alice", "s3cret");
	expect_in(&p, "leasegate", "s3cret");
	expect_out(&p, "leasegate", "wonderland");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);

	/* readable by the group: refused at start, saying how to fix it */
	assert_int_equal(chmod(path, 0640), 0);
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_spawn(&g, NULL, "--pg-port", pg.arg, "--pg-users", path, NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "chmod 600") >= 1);
	unlink(path);
}

static void test_password_methods(void **state)
{
	static const char *const methods[] = {"scram", "md5", "password"};
	for (size_t i = 0; i < sizeof(methods) / sizeof(*methods); i++) {
		struct pgw p;
		/* cleartext over plain TCP: only when allowed (test_cleartext_over_plain) */
		start(&p, "--pg-password", "s3cret", "--pg-auth", methods[i],
		      "--pg-allow-cleartext-over-plain", "yes");
		expect_in(&p, "leasegate", "s3cret");
		expect_in(&p, "any_user", "s3cret");
		expect_out(&p, "leasegate", "s3cret2");
		expect_out(&p, "leasegate", "");
		assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	}
}

/* --pg-auth password over plain TCP (loopback too): refused before the
 * password is asked, 28000 saying why, and a log line; served with
 * --pg-allow-cleartext-over-plain yes (test_password_methods; over TLS:
 * tls_clients.sh). */
static void test_cleartext_over_plain(void **state)
{
	struct pgw p;
	start(&p, "--pg-password", "s3cret", "--pg-auth", "password", NULL, NULL);
	PGconn *c = try_login(&p, "leasegate", "s3cret");
	assert_int_equal(PQstatus(c), CONNECTION_BAD);
	const char *e = PQerrorMessage(c);
	if (strstr(e, "FATAL:  user \"leasegate\" cannot log in here: the server asks for a "
		      "cleartext password (--pg-auth password), which it takes over TLS only") ==
		    NULL ||
	    strstr(e, "--pg-allow-cleartext-over-plain yes") == NULL)
		fail_msg("%s", e);
	PQfinish(c);
	assert_int_equal(gw_log_count(&p.g, "refused: the server asks for a cleartext password"),
			 1);
	assert_int_equal(gw_log_count(&p.g, "authentication failed"), 0); /* none was sent */
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

/* SCRAM is what libpq does by default against --pg-password: a client that
 * insists on SCRAM with channel binding "prefer" (the default) gets in,
 * one that requires channel binding is refused by libpq itself (no TLS). */
static void test_scram_channel_binding(void **state)
{
	struct pgw p;
	start(&p, "--pg-password", "s3cret", NULL, NULL, NULL, NULL);
	char ci[256];
	snprintf(ci, sizeof(ci),
		 "host=127.0.0.1 port=%d user=u dbname=locks password=s3cret "
		 "channel_binding=require connect_timeout=5",
		 p.pg.n);
	PGconn *c = PQconnectdb(ci);
	assert_int_equal(PQstatus(c), CONNECTION_BAD);
	PQfinish(c);
	expect_in(&p, "u", "s3cret");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* The median time of 9 refused logins of user (ms). */
static long long refusal_ms(const struct pgw *p, const char *user)
{
	long long t[9];
	for (int i = 0; i < 9; i++) {
		long long t0 = gw_now_ms();
		expect_out(p, user, "wrong");
		t[i] = gw_now_ms() - t0;
	}
	qsort(t, 9, sizeof(*t), cmp_ll);
	return t[4];
}

/* An unknown user is refused after the same exchange as a known one with
 * a wrong password, in about the same time (that its made-up salt stays
 * the same from one try to the next is test_auth_pg's). */
static void test_unknown_user_looks_known(void **state)
{
	char path[256];
	make_users_file(path, sizeof(path));
	struct pgw p;
	/* without the slowdown of repeated failures (it_acl's) */
	start(&p, "--pg-users", path, "--auth-max-delay", "0", NULL, NULL);
	long long known = refusal_ms(&p, "alice"), unknown = refusal_ms(&p, "mallory");
	print_message("refused in %lld ms (known user), %lld ms (unknown user)\n", known, unknown);
	assert_true(unknown <= 3 * known + 5 && known <= 3 * unknown + 5);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	unlink(path);
}

static void test_trust_is_logged(void **state)
{
	struct pgw p;
	start(&p, NULL, NULL, NULL, NULL, NULL, NULL);
	assert_int_equal(gw_log_count(&p.g, "trust"), 1);
	expect_in(&p, "whoever", "whatever");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_bad_users_file(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_spawn(&g, NULL, "--pg-port", pg.arg, "--pg-users", "/nonexistent/users", NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "bad value for --pg-users") >= 1);

	char path[256];
	snprintf(path, sizeof(path), "%s/pg-bad-users-%ld",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp", (long)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "alice:plaintext-password\n");
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	gw_spawn(&g, NULL, "--pg-port", pg.arg, "--pg-users", path, NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "line 1") >= 1);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_users_file, gw_teardown),
		cmocka_unit_test_teardown(test_password_methods, gw_teardown),
		cmocka_unit_test_teardown(test_cleartext_over_plain, gw_teardown),
		cmocka_unit_test_teardown(test_scram_channel_binding, gw_teardown),
		cmocka_unit_test_teardown(test_unknown_user_looks_known, gw_teardown),
		cmocka_unit_test_teardown(test_trust_is_logged, gw_teardown),
		cmocka_unit_test_teardown(test_bad_users_file, gw_teardown),
	};
	return cmocka_run_group_tests_name("pg auth", tests, NULL, NULL);
}
