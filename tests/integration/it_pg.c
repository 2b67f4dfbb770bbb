/*
 * it_pg: the real leasegate binary ($LG_BIN) spoken to over the PostgreSQL
 * protocol with libpq (simple and extended query, PQexecParams with binary
 * int8, PQcancel, pipeline mode) and with raw sockets (malformed and
 * oversized messages); across protocols (the Redis port) and across
 * replicas (two gateways on one moto table). Each test starts its own
 * gateways on free ports (tests/support/gw.h; the extra "--pg-port N"
 * given to gw_start wins over its default "--pg-port 0").
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"

/* A gateway with a PostgreSQL port (and the SCRAM password, if any). */
struct pgw {
	struct gw g;
	struct gw_port pg;
};

static void pg_start(struct pgw *p, const char *table, const char *password, ...)
{
	p->pg = gw_free_port_arg();
	if (password != NULL)
		gw_start(&p->g, table, "--pg-port", p->pg.arg, "--pg-password", password, NULL);
	else
		gw_start(&p->g, table, "--pg-port", p->pg.arg, NULL);
}

static PGconn *pg_try_opts(const struct pgw *p, const char *user, const char *password,
			   const char *more)
{
	char ci[256];
	snprintf(ci, sizeof(ci),
		 "host=127.0.0.1 port=%d user=%s dbname=locks password=%s connect_timeout=5 %s",
		 p->pg.n, user, password ? password : "", more);
	return PQconnectdb(ci);
}

static PGconn *pg_try(const struct pgw *p, const char *user, const char *password)
{
	return pg_try_opts(p, user, password, "");
}

static PGconn *pg_connect(const struct pgw *p)
{
	PGconn *c = pg_try(p, "leasegate", "s3cret");
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("cannot connect: %s", PQerrorMessage(c));
	return c;
}

/* The one value of a one-row query (copied into a static buffer; "NULL"
 * for NULL), failing the test on an error. */
static const char *val(PGconn *c, const char *sql)
{
	static char out[256];
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	assert_int_equal(PQntuples(r), 1);
	snprintf(out, sizeof(out), "%s", PQgetisnull(r, 0, 0) ? "NULL" : PQgetvalue(r, 0, 0));
	PQclear(r);
	return out;
}

/* The SQLSTATE a statement fails with (fails the test if it succeeds). */
static void expect_state(PGconn *c, const char *sql, const char *sqlstate)
{
	PGresult *r = PQexec(c, sql);
	const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (st == NULL || strcmp(st, sqlstate) != 0)
		fail_msg("%s: wanted %s, got %s (%s)", sql, sqlstate, st ? st : "success",
			 PQresultErrorMessage(r));
	PQclear(r);
}

static void ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
}

/* Notices, collected. */
struct notices {
	int n;
	char last[256];
};
static void on_notice(void *arg, const PGresult *r)
{
	struct notices *ns = arg;
	ns->n++;
	snprintf(ns->last, sizeof(ns->last), "%s %s", PQresultErrorField(r, PG_DIAG_SEVERITY),
		 PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
}

static void test_scram_and_wrong_password(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, "s3cret");
	PGconn *c = pg_connect(&p);
	assert_string_equal(val(c, "SELECT 1"), "1");
	assert_string_equal(PQparameterStatus(c, "server_version"), "15.0");
	assert_string_equal(PQparameterStatus(c, "client_encoding"), "UTF8");
	assert_string_equal(PQparameterStatus(c, "integer_datetimes"), "on");
	assert_true(PQbackendPID(c) > 0);
	PQfinish(c);
	for (int i = 0; i < 2; i++) { /* a known and an unknown user: one answer */
		c = pg_try(&p, i ? "nobody" : "leasegate", "wrong");
		assert_int_equal(PQstatus(c), CONNECTION_BAD);
		assert_non_null(strstr(PQerrorMessage(c), "password authentication failed"));
		PQfinish(c);
	}
	c = pg_try(&p, "anyone", "s3cret"); /* --pg-password: every user */
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_trust(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, NULL);
	PGconn *c = pg_try(&p, "whoever", NULL);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	assert_string_equal(val(c, "SELECT version()") + 0, val(c, "SELECT version()"));
	PQfinish(c);
	assert_int_equal(gw_log_count(&p.g, "trust"), 1);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

/* SIGTERM ends an idle session as PostgreSQL's fast shutdown does: FATAL
 * 57P01 "terminating connection due to administrator command" (what
 * drivers and pools take for a server restart), its lock released. */
static void test_shutdown_terminates_idle_sessions(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, "s3cret");
	PGconn *c = pg_connect(&p);
	assert_string_equal(val(c, "SELECT pg_advisory_lock(7)"), "");
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
	PGresult *r = PQexec(c, "SELECT 1");
	assert_int_not_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	if (strstr(PQerrorMessage(c), "terminating connection due to administrator command") ==
	    NULL)
		fail_msg("no 57P01: %s", PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	assert_int_equal(gw_log_count(&p.g, "1 leases released"), 1);
}

static void test_advisory_locks(void **state)
{
	struct pgw p;
	struct notices ns = {0};
	pg_start(&p, NULL, "s3cret");
	PGconn *a = pg_connect(&p), *b = pg_connect(&p);
	PQsetNoticeReceiver(a, on_notice, &ns);
	/* void: one row, one column of type void, empty text */
	PGresult *r = PQexec(a, "SELECT pg_advisory_lock(42)");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_int_equal(PQftype(r, 0), 2278);
	assert_string_equal(PQfname(r, 0), "pg_advisory_lock");
	assert_string_equal(PQgetvalue(r, 0, 0), "");
	PQclear(r);
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(42)"), "f");
	/* reentrant: locked twice, unlocked twice */
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(42)"), "t");
	assert_string_equal(val(a, "SELECT pg_advisory_unlock(42)"), "t");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(42)"), "f");
	assert_string_equal(val(a, "SELECT pg_advisory_unlock(42)"), "t");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(42)"), "t");
	/* unlock not held: false and a WARNING */
	assert_string_equal(val(a, "SELECT pg_advisory_unlock(42)"), "f");
	assert_int_equal(ns.n, 1);
	assert_non_null(strstr(ns.last, "WARNING you don't own a lock"));
	/* the two key spaces never collide: (0, 42) is not 42 */
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(0, 42)"), "t");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(0, 42)"), "f");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(-7)"), "t");
	/* unlock_all */
	ok(b, "SELECT pg_advisory_unlock_all()");
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(42)"), "t");
	/* several statements per query: the last result, one ReadyForQuery */
	r = PQexec(a, "SELECT pg_advisory_unlock(42); SELECT pg_try_advisory_lock(43); "
		      "SELECT leasegate.token(43) IS NULL");
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR); /* IS NULL: not served */
	PQclear(r);
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(43)"), "f");
	r = PQexec(a, "SELECT 1; SELECT pg_try_advisory_lock(44); SELECT 2");
	assert_string_equal(PQgetvalue(r, 0, 0), "2");
	PQclear(r);
	/* the fencing token */
	long long t = atoll(val(a, "SELECT leasegate.token(44)"));
	assert_true(t > 0);
	assert_string_equal(val(b, "SELECT leasegate.token(44)"), "NULL");
	/* shared: refused while held exclusively, by another session or, unlike
	 * PostgreSQL, by the same one (22023); readers together */
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock_shared(44)"), "f");
	expect_state(a, "SELECT pg_try_advisory_lock_shared(44)", "22023");
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock_shared(45)"), "t");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock_shared(45)"), "t");
	expect_state(b, "SELECT pg_try_advisory_lock(45)", "22023");
	expect_state(a, "SELECT * FROM pg_class", "0A000");
	ok(a, "");
	ok(a, "-- a pool's ping");
	/* disconnect releases at once */
	PQfinish(a);
	gw_sleep_ms(50);
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(44)"), "t");
	PQfinish(b);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_transactions(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, "s3cret");
	PGconn *a = pg_connect(&p), *b = pg_connect(&p);
	ok(a, "BEGIN");
	assert_int_equal(PQtransactionStatus(a), PQTRANS_INTRANS);
	ok(a, "SELECT pg_advisory_xact_lock(1, 2)");
	ok(a, "SELECT pg_advisory_lock(5)");
	assert_string_equal(val(b, "SELECT pg_try_advisory_xact_lock(1, 2)"), "f");
	ok(a, "COMMIT");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(1, 2)"), "t"); /* xact ended */
	ok(b, "SELECT pg_advisory_unlock(1, 2)");
	/* an error aborts the transaction: status E until ROLLBACK; session
	 * locks survive the rollback, xact locks do not */
	ok(a, "BEGIN");
	ok(a, "SELECT pg_advisory_xact_lock(9)");
	expect_state(a, "SELECT nothing()", "0A000");
	assert_int_equal(PQtransactionStatus(a), PQTRANS_INERROR);
	expect_state(a, "SELECT 1", "25P02");
	ok(a, "ROLLBACK");
	assert_int_equal(PQtransactionStatus(a), PQTRANS_IDLE);
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(9)"), "t");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(5)"), "f");
	/* outside a block, an xact lock lasts one query */
	ok(a, "SELECT pg_advisory_xact_lock(10)");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(10)"), "t");
	/* an error mid-query skips the rest */
	PGresult *r = PQexec(a, "SELECT pg_try_advisory_lock(11); SELECT bad; "
				"SELECT pg_try_advisory_lock(12)");
	assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
	PQclear(r);
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(11)"), "f");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(12)"), "t");
	/* settings */
	ok(a, "SET application_name = 'it_pg'");
	assert_string_equal(PQparameterStatus(a, "application_name"), "it_pg");
	assert_string_equal(val(a, "SHOW application_name"), "it_pg");
	ok(a, "SET SESSION lock_timeout TO '2s'");
	assert_string_equal(val(a, "SELECT current_setting('lock_timeout')"), "2s");
	ok(a, "BEGIN; SET LOCAL statement_timeout = 100; COMMIT");
	assert_string_equal(val(a, "SHOW statement_timeout"), "0");
	ok(a, "RESET ALL");
	ok(a, "DISCARD ALL");
	ok(a, "UNLISTEN *");
	ok(a, "CLOSE ALL");
	ok(a, "DEALLOCATE ALL");
	expect_state(a, "SET no_such_thing = 1", "42704");
	PQfinish(a);
	PQfinish(b);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_extended(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, "s3cret");
	PGconn *a = pg_connect(&p), *b = pg_connect(&p);
	/* binary int8 parameter, binary result */
	uint64_t key = 0x0102030405060708ull;
	uint64_t be = ((uint64_t)htonl((uint32_t)key) << 32) | htonl((uint32_t)(key >> 32));
	const char *vals[1] = {(const char *)&be};
	int lens[1] = {8}, fmts[1] = {1};
	Oid types[1] = {20};
	PGresult *r =
		PQexecParams(a, "SELECT pg_try_advisory_lock($1)", 1, types, vals, lens, fmts, 1);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_int_equal(PQftype(r, 0), 16);
	assert_int_equal(PQgetlength(r, 0, 0), 1);
	assert_int_equal(PQgetvalue(r, 0, 0)[0], 1);
	PQclear(r);
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(72623859790382856)"), "f");
	/* text parameters, types inferred; a named statement; Describe */
	r = PQprepare(a, "acq", "SELECT leasegate.acquire($1, $2)", 2, NULL);
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	r = PQdescribePrepared(a, "acq");
	assert_int_equal(PQnparams(r), 2);
	assert_int_equal(PQparamtype(r, 0), 25);
	assert_int_equal(PQparamtype(r, 1), 23);
	assert_int_equal(PQnfields(r), 1);
	assert_int_equal(PQftype(r, 0), 20);
	PQclear(r);
	const char *args[2] = {"job", "30000"};
	r = PQexecPrepared(a, "acq", 2, args, NULL, NULL, 0);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_true(atoll(PQgetvalue(r, 0, 0)) > 0);
	PQclear(r);
	r = PQexecPrepared(b, "acq", 2, args, NULL, NULL, 0); /* not prepared on b */
	assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "26000");
	PQclear(r);
	r = PQexecParams(b, "SELECT leasegate.acquire($1, $2)", 2, NULL, args, NULL, NULL, 0);
	assert_true(PQgetisnull(r, 0, 0)); /* held by a */
	PQclear(r);
	/* current_setting's missing_ok is a bool, as a parameter too */
	r = PQprepare(a, "cs", "SELECT current_setting($1, $2)", 2, NULL);
	PQclear(r);
	r = PQdescribePrepared(a, "cs");
	assert_int_equal(PQparamtype(r, 0), 25);
	assert_int_equal(PQparamtype(r, 1), 16);
	PQclear(r);
	const char *missing[2] = {"no_such_setting", "true"};
	r = PQexecPrepared(a, "cs", 2, missing, NULL, NULL, 0);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_true(PQgetisnull(r, 0, 0));
	PQclear(r);
	/* an error in a pipeline of extended messages skips to Sync */
	assert_int_equal(PQenterPipelineMode(b), 1);
	const char *k[1] = {"77"};
	assert_int_equal(
		PQsendQueryParams(b, "SELECT pg_try_advisory_lock($1)", 1, NULL, k, NULL, NULL, 0),
		1);
	assert_int_equal(PQsendQueryParams(b, "SELECT nope($1)", 1, NULL, k, NULL, NULL, 0), 1);
	assert_int_equal(PQsendQueryParams(b, "SELECT pg_try_advisory_lock(78)", 0, NULL, NULL,
					   NULL, NULL, 0),
			 1);
	assert_int_equal(PQpipelineSync(b), 1);
	int seen[3] = {0};
	for (int i = 0; i < 3; i++) {
		r = PQgetResult(b);
		seen[i] = PQresultStatus(r);
		PQclear(r);
		while ((r = PQgetResult(b)) != NULL)
			PQclear(r);
	}
	r = PQgetResult(b);
	assert_int_equal(PQresultStatus(r), PGRES_PIPELINE_SYNC);
	PQclear(r);
	assert_int_equal(PQexitPipelineMode(b), 1);
	assert_int_equal(seen[0], PGRES_TUPLES_OK);
	assert_int_equal(seen[1], PGRES_FATAL_ERROR);
	assert_int_equal(seen[2], PGRES_PIPELINE_ABORTED);
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(77)"), "f");
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(78)"), "t");
	PQfinish(a);
	PQfinish(b);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_cancel_and_timeouts(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, "s3cret");
	PGconn *a = pg_connect(&p), *b = pg_connect(&p);
	ok(a, "SELECT pg_advisory_lock(1)");
	/* PQcancel ends a blocking pg_advisory_lock with 57014 */
	assert_int_equal(PQsendQuery(b, "SELECT pg_advisory_lock(1)"), 1);
	gw_sleep_ms(100);
	PGcancel *cn = PQgetCancel(b);
	char err[256];
	assert_int_equal(PQcancel(cn, err, sizeof(err)), 1);
	PQfreeCancel(cn);
	PGresult *r = PQgetResult(b);
	assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57014");
	PQclear(r);
	while ((r = PQgetResult(b)) != NULL)
		PQclear(r);
	/* lock_timeout 55P03, statement_timeout 57014 */
	ok(b, "SET lock_timeout = '100ms'");
	long long t0 = gw_now_ms();
	expect_state(b, "SELECT pg_advisory_lock(1)", "55P03");
	assert_in_range(gw_now_ms() - t0, 80, 1000);
	ok(b, "SET lock_timeout = 0");
	ok(b, "SET statement_timeout = 100");
	expect_state(b, "SELECT pg_advisory_lock(1)", "57014");
	ok(b, "RESET statement_timeout");
	/* a wait handed the lock when the holder lets go */
	assert_int_equal(PQsendQuery(b, "SELECT pg_advisory_lock(1)"), 1);
	gw_sleep_ms(50);
	ok(a, "SELECT pg_advisory_unlock(1)");
	r = PQgetResult(b);
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	PQclear(r);
	while ((r = PQgetResult(b)) != NULL)
		PQclear(r);
	PQfinish(a);
	PQfinish(b);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static int raw_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	struct timeval tv = {2, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Reads until the peer closes; true if it did within the timeout. */
static bool closed_by_peer(int fd, char *got, size_t cap, size_t *n)
{
	*n = 0;
	for (;;) {
		ssize_t r = recv(fd, got + *n, cap - *n, 0);
		if (r == 0)
			return true;
		if (r < 0)
			return false;
		*n += (size_t)r;
		if (*n == cap)
			*n = 0;
	}
}

static void test_malformed_messages(void **state)
{
	struct pgw p;
	char got[4096];
	size_t n;
	pg_start(&p, NULL, NULL);
	PGconn *c = pg_connect(&p);
	ok(c, "SELECT pg_advisory_lock(3)");
	/* SSLRequest: 'N' */
	int fd = raw_connect(p.pg.n);
	const unsigned char ssl[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
	assert_int_equal(send(fd, ssl, 8, 0), 8);
	assert_int_equal(recv(fd, got, 1, 0), 1);
	assert_int_equal(got[0], 'N');
	/* then a startup packet of a length below the minimum */
	const unsigned char bad[8] = {0, 0, 0, 2, 0, 3, 0, 0};
	assert_int_equal(send(fd, bad, 8, 0), 8);
	assert_true(closed_by_peer(fd, got, sizeof(got), &n));
	assert_true(n > 0 && got[0] == 'E');
	close(fd);
	/* an oversized message: a length past the limit */
	fd = raw_connect(p.pg.n);
	const unsigned char big[8] = {0, 0, 0, 8, 0x7f, 0xff, 0xff, 0xff};
	assert_int_equal(send(fd, big, 8, 0), 8);
	assert_true(closed_by_peer(fd, got, sizeof(got), &n));
	close(fd);
	/* a startup packet without its terminator */
	fd = raw_connect(p.pg.n);
	const char nul[] = "\0\0\0\x0e\0\x03\0\0user\0x";
	assert_int_equal(send(fd, nul, 14, 0), 14);
	assert_true(closed_by_peer(fd, got, sizeof(got), &n));
	close(fd);
	/* protocol 3.1 with a _pq_ option: NegotiateProtocolVersion (3.0, the
	 * option named), then the session goes on in 3.0 */
	fd = raw_connect(p.pg.n);
	const char v31[] = "\0\0\0\x19\0\x03\0\x01user\0u\0_pq_.x\0y\0\0";
	assert_int_equal(send(fd, v31, 25, 0), 25);
	gw_sleep_ms(100);
	ssize_t got_n = recv(fd, got, sizeof(got), 0);
	assert_true(got_n > 20);
	assert_int_equal(got[0], 'v');
	assert_memory_equal(got + 5, "\0\x03\0\0\0\0\0\x01_pq_.x\0", 15);
	assert_int_equal(got[20], 'R'); /* trust: AuthenticationOk */
	close(fd);
	/* the other session is untouched */
	assert_string_equal(val(c, "SELECT pg_try_advisory_lock(3)"), "t");
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_across_protocols(void **state)
{
	struct pgw p;
	pg_start(&p, NULL, "s3cret");
	PGconn *c = pg_connect(&p);
	redisContext *r = gw_connect(&p.g);
	assert_true(atoll(val(c, "SELECT leasegate.acquire('x', 30000)")) > 0);
	gw_expect_nil(r, "LOCK.ACQUIRE x 30000");
	gw_expect_int(r, 1, "LOCK.ACQUIRE y 30000");
	assert_string_equal(val(c, "SELECT leasegate.acquire('y', 30000)"), "NULL");
	assert_string_equal(val(c, "SELECT leasegate.release('x')"), "t");
	assert_string_equal(val(c, "SELECT leasegate.release('x')"), "f");
	redisReply *rep = gw_cmd(r, "LOCK.ACQUIRE x 30000");
	assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
	freeReplyObject(rep);
	/* advisory locks are names too: pg:<database>:<key> */
	ok(c, "SELECT pg_advisory_lock(5)");
	gw_expect_nil(r, "LOCK.ACQUIRE pg:locks:5 30000");
	redisFree(r);
	PQfinish(c);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

/* A lease lost before it was released (the gateway stopped for longer
 * than the lease): a WARNING notice, then 55000 on the session's next
 * lock call whatever its name, then normal calls again. */
static void test_lost_lease(void **state)
{
	struct pgw p;
	struct notices ns = {0};
	pg_start(&p, NULL, "s3cret");
	PGconn *a = pg_connect(&p);
	PQsetNoticeReceiver(a, on_notice, &ns);
	ok(a, "SET leasegate.lease_ms = 1000");
	ok(a, "SELECT pg_advisory_lock(21)");
	assert_int_equal(kill(p.g.pid, SIGSTOP), 0);
	gw_sleep_ms(2500);
	assert_int_equal(kill(p.g.pid, SIGCONT), 0);
	gw_sleep_ms(200);
	expect_state(a, "SELECT pg_try_advisory_lock(22)", "55000");
	assert_true(ns.n >= 1);
	assert_non_null(strstr(ns.last, "WARNING the lease of lock \"pg:locks:21\""));
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(22)"), "t");
	assert_string_equal(val(a, "SELECT pg_advisory_unlock(21)"), "f"); /* gone */
	PQfinish(a);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

static void test_maxclients_refusal(void **state)
{
	struct pgw p;
	p.pg = gw_free_port_arg();
	gw_start(&p.g, NULL, "--pg-port", p.pg.arg, "--maxclients", "1", NULL);
	PGconn *a = pg_try(&p, "u", NULL);
	assert_int_equal(PQstatus(a), CONNECTION_OK);
	/* the refusal is sent at once, before the client's first packet is
	 * read: without SSLRequest, libpq reads it as the ErrorResponse it is
	 * (with sslmode=prefer it says "error response during SSL exchange") */
	PGconn *b = pg_try_opts(&p, "u", NULL, "sslmode=disable");
	assert_int_equal(PQstatus(b), CONNECTION_BAD);
	if (strstr(PQerrorMessage(b), "sorry, too many clients already") == NULL)
		fail_msg("refused with: %s", PQerrorMessage(b));
	PQfinish(b);
	PQfinish(a);
	assert_int_equal(gw_signal(&p.g, SIGTERM), 0);
}

/* Two gateways on one moto table: the second refuses; SIGKILL of the
 * holder's gateway lets the other take over after about one lease. */
static void test_across_replicas(void **state)
{
	struct pgw one, two;
	const char *table = gw_new_table();
	pg_start(&one, table, "s3cret");
	pg_start(&two, table, "s3cret");
	PGconn *a = pg_connect(&one), *b = pg_connect(&two);
	ok(a, "SET leasegate.lease_ms = 2000");
	assert_string_equal(val(a, "SELECT pg_try_advisory_lock(7)"), "t");
	assert_string_equal(val(b, "SELECT pg_try_advisory_lock(7)"), "f");
	assert_string_equal(val(b, "SELECT leasegate.acquire('pg:locks:7', 2000)"), "NULL");
	assert_int_equal(gw_signal(&one.g, SIGKILL), 128 + SIGKILL);
	long long t0 = gw_now_ms();
	ok(b, "SET lock_timeout = '10s'");
	ok(b, "SELECT pg_advisory_lock(7)");
	long long took = gw_now_ms() - t0;
	assert_in_range(took, 500, 6000);
	PQfinish(a);
	PQfinish(b);
	assert_int_equal(gw_signal(&two.g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_scram_and_wrong_password, gw_teardown),
		cmocka_unit_test_teardown(test_trust, gw_teardown),
		cmocka_unit_test_teardown(test_shutdown_terminates_idle_sessions, gw_teardown),
		cmocka_unit_test_teardown(test_advisory_locks, gw_teardown),
		cmocka_unit_test_teardown(test_transactions, gw_teardown),
		cmocka_unit_test_teardown(test_extended, gw_teardown),
		cmocka_unit_test_teardown(test_cancel_and_timeouts, gw_teardown),
		cmocka_unit_test_teardown(test_malformed_messages, gw_teardown),
		cmocka_unit_test_teardown(test_across_protocols, gw_teardown),
		cmocka_unit_test_teardown(test_lost_lease, gw_teardown),
		cmocka_unit_test_teardown(test_maxclients_refusal, gw_teardown),
		cmocka_unit_test_teardown(test_across_replicas, gw_teardown),
	};
	return cmocka_run_group_tests_name("postgresql front-end", tests, NULL, NULL);
}
