/*
 * it_pg_cancel: the real leasegate binary ($LG_BIN) on its PostgreSQL
 * port: every session has a backend pid of its own (BackendKeyData,
 * pg_backend_pid(), LOCK.LIST's pg:<pid>), a CancelRequest cancels only
 * the session of its (pid, secret key) pair, and an address that sends
 * keys that match no session gets its CancelRequests dropped for a while.
 * libpq for the sessions and PQcancel; raw sockets where the test needs
 * the secret key (libpq does not show it) or sends wrong ones.
 */
#include <arpa/inet.h>
#include <errno.h>
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

static long long int_val(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	long long v = atoll(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

/* ---- a raw session: the startup, the key, one query ---- */

static int tcp(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put(int fd, const void *p, size_t n)
{
	assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void get(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = recv(fd, (char *)p + got, n - got, 0);
		if (r <= 0)
			fail_msg("the gateway closed or said nothing (%s)", strerror(errno));
		got += (size_t)r;
	}
}

/* Reads one message: its type; its body in body (up to cap bytes kept). */
static char next_msg(int fd, unsigned char *body, size_t cap, size_t *len)
{
	unsigned char h[5];
	get(fd, h, 5);
	size_t n = get32(h + 1) - 4;
	assert_true(n <= cap);
	get(fd, body, n);
	*len = n;
	return (char)h[0];
}

struct raw {
	int fd;
	uint32_t pid, secret;
};

/* Logs in (trust) and keeps the BackendKeyData. */
static void raw_login(struct raw *r, int port)
{
	static const char params[] = "user\0u\0database\0locks\0";
	unsigned char pkt[8 + sizeof(params)];
	put32(pkt, sizeof(pkt));
	put32(pkt + 4, 196608); /* 3.0 */
	memcpy(pkt + 8, params, sizeof(params));
	r->fd = tcp(port);
	put(r->fd, pkt, sizeof(pkt));
	unsigned char body[1024];
	size_t n;
	char t;
	r->pid = 0;
	while ((t = next_msg(r->fd, body, sizeof(body), &n)) != 'Z') {
		assert_int_not_equal(t, 'E');
		if (t == 'K') {
			r->pid = get32(body);
			r->secret = get32(body + 4);
		}
	}
	assert_int_not_equal(r->pid, 0);
}

static void raw_query(const struct raw *r, const char *sql)
{
	unsigned char h[5] = {'Q'};
	put32(h + 1, (uint32_t)(4 + strlen(sql) + 1));
	put(r->fd, h, 5);
	put(r->fd, sql, strlen(sql) + 1);
}

/* Whether an ErrorResponse with sqlstate arrives within ms (no other
 * message before it but RowDescription). */
static bool raw_error_within(const struct raw *r, const char *sqlstate, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	unsigned char h[5];
	ssize_t got = recv(r->fd, h, 1, MSG_PEEK);
	struct timeval five = {5, 0};
	setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &five, sizeof(five));
	if (got <= 0)
		return false;
	unsigned char body[1024];
	size_t n;
	char t;
	while ((t = next_msg(r->fd, body, sizeof(body), &n)) == 'T')
		;
	assert_int_equal(t, 'E');
	char want[8];
	snprintf(want, sizeof(want), "C%s", sqlstate);
	assert_non_null(memmem(body, n, want, strlen(want) + 1));
	while (next_msg(r->fd, body, sizeof(body), &n) != 'Z')
		;
	return true;
}

/* Sends a CancelRequest for (pid, secret) on a connection of its own and
 * waits until the gateway has closed it (it has handled it). */
static void cancel_request(int port, uint32_t pid, uint32_t secret)
{
	unsigned char pkt[16];
	put32(pkt, 16);
	put32(pkt + 4, 80877102);
	put32(pkt + 8, pid);
	put32(pkt + 12, secret);
	int fd = tcp(port);
	put(fd, pkt, sizeof(pkt));
	char b;
	assert_int_equal(recv(fd, &b, 1, 0), 0);
	close(fd);
}

/* True when some string of r (at any depth) is s. */
static bool reply_has(const redisReply *r, const char *s)
{
	if ((r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
	    strcmp(r->str, s) == 0)
		return true;
	for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
		if (reply_has(r->element[i], s))
			return true;
	return false;
}

/* Two libpq sessions: different pids, each what pg_backend_pid() says,
 * and the one LOCK.LIST shows for the session's lock. */
static void test_each_session_has_its_pid(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, NULL);
	PGconn *a = pg_open(pg.n), *b = pg_open(pg.n);
	long long pa = int_val(a, "SELECT pg_backend_pid()");
	long long pb = int_val(b, "select pg_catalog.pg_backend_pid() as me");
	assert_int_equal(pa, PQbackendPID(a));
	assert_int_equal(pb, PQbackendPID(b));
	assert_int_not_equal(pa, pb);
	assert_true(pa > 0 && pb > 0);
	assert_int_equal(int_val(a, "SELECT pg_backend_pid()"), pa); /* stable */
	PQclear(PQexec(a, "SELECT pg_advisory_lock(5)"));
	PQclear(PQexec(b, "SELECT pg_advisory_lock(6)"));
	redisContext *o = gw_connect(&g);
	redisReply *r = gw_cmd(o, "LOCK.LIST MATCH pg:*");
	char want[32];
	snprintf(want, sizeof(want), "pg:%lld", pa);
	assert_true(reply_has(r, want));
	snprintf(want, sizeof(want), "pg:%lld", pb);
	assert_true(reply_has(r, want));
	freeReplyObject(r);
	redisFree(o);
	PQfinish(a);
	PQfinish(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* The secret key of a session with another session's pid (or a pid no
 * session has) cancels nothing; with its own pid it cancels its wait; and
 * PQcancel does too. */
static void test_cancel_needs_pid_and_key(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, NULL);
	PGconn *holder = pg_open(pg.n), *waiter = pg_open(pg.n);
	PQclear(PQexec(holder, "SELECT pg_advisory_lock(1)"));
	struct raw r;
	raw_login(&r, pg.n);
	raw_query(&r, "SELECT pg_advisory_lock(1)");
	assert_int_equal(PQsendQuery(waiter, "SELECT pg_advisory_lock(1)"), 1);
	gw_sleep_ms(100);
	cancel_request(pg.n, (uint32_t)PQbackendPID(waiter), r.secret);
	cancel_request(pg.n, r.pid + 1000, r.secret);
	assert_false(raw_error_within(&r, "57014", 300));
	cancel_request(pg.n, r.pid, r.secret);
	assert_true(raw_error_within(&r, "57014", 2000));
	/* the waiter is still waiting; PQcancel ends it */
	assert_int_equal(PQisBusy(waiter), 1);
	PGcancel *cn = PQgetCancel(waiter);
	char err[256];
	assert_int_equal(PQcancel(cn, err, sizeof(err)), 1);
	PQfreeCancel(cn);
	PGresult *res = PQgetResult(waiter);
	assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "57014");
	PQclear(res);
	while ((res = PQgetResult(waiter)) != NULL)
		PQclear(res);
	close(r.fd);
	PQfinish(holder);
	PQfinish(waiter);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Ten keys that match no session from one address: its next
 * CancelRequests are dropped untried (the right one too), with a warning;
 * a second later one more is tried again. */
static void test_wrong_keys_throttled(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, NULL);
	PGconn *holder = pg_open(pg.n);
	PQclear(PQexec(holder, "SELECT pg_advisory_lock(1)"));
	struct raw r;
	raw_login(&r, pg.n);
	raw_query(&r, "SELECT pg_advisory_lock(1)");
	gw_sleep_ms(100);
	for (uint32_t i = 0; i < 10; i++)
		cancel_request(pg.n, r.pid, r.secret ^ (0x9e3779b9u + i));
	cancel_request(pg.n, r.pid, r.secret);
	assert_false(raw_error_within(&r, "57014", 300));
	assert_int_equal(gw_log_count(&g, "pg: cancel requests from 127.0.0.1 dropped"), 1);
	gw_sleep_ms(1100);
	cancel_request(pg.n, r.pid, r.secret);
	assert_true(raw_error_within(&r, "57014", 2000));
	assert_int_equal(gw_log_count(&g, "pg: cancel requests from 127.0.0.1 tried again"), 1);
	close(r.fd);
	PQfinish(holder);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_each_session_has_its_pid, gw_teardown),
		cmocka_unit_test_teardown(test_cancel_needs_pid_and_key, gw_teardown),
		cmocka_unit_test_teardown(test_wrong_keys_throttled, gw_teardown),
	};
	return cmocka_run_group_tests_name("postgresql backend pids and cancel", tests, NULL, NULL);
}
