/*
 * it_hostile: the real leasegate binary ($LG_BIN) against clients that do
 * not play by the rules: connections that never authenticate
 * (--auth-timeout, Redis and PostgreSQL), and of those the ones that
 * never read what they are sent (the close linger frees their slot),
 * oversized requests before AUTH,
 * idle clients (--timeout, a lease holder spared), too many PostgreSQL
 * prepared statements and portals; secrets that must appear in no reply,
 * metric or log line; a config file with a secret that others may read,
 * and a --unixsocket path that is not a socket, refused at start.
 * Protected mode from another network: tests/integration/protected_mode.sh.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"
#include "tests/support/testpki.h"

static int tcp(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void put(int fd, const void *p, size_t n)
{
	assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Reads into buf until the peer closes or ms pass; the bytes read, and
 * whether it closed. */
static size_t read_until_eof(int fd, char *buf, size_t cap, int ms, bool *eof)
{
	size_t got = 0;
	long long end = gw_now_ms() + ms;
	*eof = false;
	while (gw_now_ms() < end && got + 1 < cap) {
		struct timeval tv = {0, 20000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		ssize_t r = recv(fd, buf + got, cap - 1 - got, 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET)) {
			*eof = true;
			break;
		}
		if (r > 0)
			got += (size_t)r;
	}
	buf[got] = '\0';
	return got;
}

/* Sends a line and reads what comes within 300 ms. */
static const char *ask(int fd, const char *req)
{
	static char buf[4096];
	bool eof;
	put(fd, req, strlen(req));
	read_until_eof(fd, buf, sizeof(buf), 300, &eof);
	return buf;
}

static long long info_field(redisContext *c, const char *section, const char *field)
{
	redisReply *r = gw_cmd(c, "INFO %s", section);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	const char *p = strstr(r->str, field);
	assert_non_null(p);
	long long v = atoll(p + strlen(field) + 1);
	freeReplyObject(r);
	return v;
}

/* A Redis client that never authenticates is closed after --auth-timeout,
 * not before; one that has is left alone. */
static void test_auth_timeout_redis(void **state)
{
	struct gw g;
	struct gw_port admin = gw_free_port_arg();
	gw_start(&g, NULL, "--requirepass", "pw", "--auth-timeout", "400ms", "--admin-port",
		 admin.arg, NULL);
	long long t0 = gw_now_ms();
	int scrape = tcp(admin.n); /* the admin port has no login: not timed out */
	put(scrape, "GET /healthz HTTP/1.0\r\n", 23);
	int silent = tcp(g.port);
	int authed = tcp(g.port);
	assert_string_equal(ask(authed, "AUTH pw\r\n"), "+OK\r\n");
	char buf[256];
	bool eof;
	read_until_eof(silent, buf, sizeof(buf), 5000, &eof);
	long long took = gw_now_ms() - t0;
	assert_true(eof);
	assert_true(took >= 350);
	assert_string_equal(buf, ""); /* closed without a word, as Redis closes */
	assert_string_equal(ask(authed, "PING\r\n"), "+PONG\r\n");
	assert_non_null(strstr(ask(authed, "INFO stats\r\n"), "auth_timeout_closed:1\r\n"));
	put(scrape, "\r\n", 2);
	read_until_eof(scrape, buf, sizeof(buf), 2000, &eof);
	assert_memory_equal(buf, "HTTP/1.1 200", 12);
	close(scrape);
	/* RESET makes it unauthenticated again: the timeout counts from then */
	assert_string_equal(ask(authed, "RESET\r\n"), "+RESET\r\n");
	read_until_eof(authed, buf, sizeof(buf), 5000, &eof);
	assert_true(eof);
	close(silent);
	close(authed);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A connection with a receive buffer as small as the kernel allows. */
static int tcp_tiny_rcvbuf(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int small = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Pipelines `req` on fd, never reading, until the socket takes no more for
 * 300 ms (the gateway has stopped reading: its output is over
 * --max-output-buffer and the client's window is full). */
static void pipeline_until_stuck(int fd, const char *req)
{
	char chunk[8192];
	size_t rl = strlen(req), n = 0;
	while (n + rl <= sizeof(chunk)) {
		memcpy(chunk + n, req, rl);
		n += rl;
	}
	long long end = gw_now_ms() + 20000, stuck_since = 0;
	while (gw_now_ms() < end) {
		ssize_t w = send(fd, chunk, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			stuck_since = 0;
			continue;
		}
		assert_true(w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
		if (stuck_since == 0)
			stuck_since = gw_now_ms();
		else if (gw_now_ms() - stuck_since >= 300)
			return;
		gw_sleep_ms(10);
	}
	fail_msg("the gateway kept reading for 20 s");
}

/* Within ms, a Redis client logs in on a gateway at --maxclients 1 (the
 * slot of the previous connection is free again); its time, or -1. */
static long long redis_gets_in_within(int port, int ms)
{
	long long t0 = gw_now_ms();
	while (gw_now_ms() - t0 < ms) {
		int fd = tcp(port);
		const char *a = ask(fd, "AUTH pw\r\n");
		close(fd);
		if (strcmp(a, "+OK\r\n") == 0)
			return gw_now_ms() - t0;
		assert_non_null(strstr(a, "max number of clients reached"));
		gw_sleep_ms(100);
	}
	return -1;
}

/* A Redis client that pipelines unauthenticated commands, never reading,
 * and does not authenticate: at --auth-timeout the gateway closes it, and
 * what it could not send is dropped after the close linger (2 s), so the
 * --maxclients slot is free again; until then INFO counts the connection
 * as connected and closing. */
static void test_auth_timeout_frees_slot_of_reader_that_stalls(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--requirepass", "pw", "--auth-timeout", "300ms", "--maxclients", "2",
		 "--max-output-buffer", "16kb", NULL);
	int holder = tcp(g.port); /* one slot of two, and INFO */
	assert_string_equal(ask(holder, "AUTH pw\r\n"), "+OK\r\n");
	int stalled = tcp_tiny_rcvbuf(g.port);
	long long t0 = gw_now_ms();
	pipeline_until_stuck(stalled, "PING\r\n");
	long long stuck = gw_now_ms();
	gw_sleep_ms((int)(t0 + 300 + 300 - stuck > 0 ? t0 + 300 + 300 - stuck : 0));
	/* the auth timeout has closed it: connected and closing, the slot held */
	const char *info = ask(holder, "INFO clients\r\n");
	assert_non_null(strstr(info, "connected_clients:2\r\n"));
	assert_non_null(strstr(info, "closing_clients:1\r\n"));
	/* within the linger and a sweep, the slot is free (never, without it) */
	assert_true(redis_gets_in_within(g.port, 5000) >= 0);
	assert_true(gw_now_ms() - t0 <= 300 + 2000 + 1500);
	info = ask(holder, "INFO\r\n");
	assert_non_null(strstr(info, "connected_clients:1\r\n"));
	assert_non_null(strstr(info, "closing_clients:0\r\n"));
	assert_non_null(strstr(info, "close_linger_dropped:1\r\n"));
	assert_non_null(strstr(info, "auth_timeout_closed:1\r\n"));
	close(holder);
	close(stalled);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A PostgreSQL client that asks for TLS (SSLRequest), reads the 'S' and
 * goes silent, the handshake never started: at --auth-timeout its FATAL
 * cannot be sent (no TLS session to send it in); after the close linger
 * the connection is gone and the --maxclients slot free for the next. */
static void test_auth_timeout_frees_slot_of_stalled_tls_handshake(void **state)
{
	struct gw g;
	struct testpki pki;
	struct gw_port pg = gw_free_port_arg();
	testpki_make(&pki);
	gw_start(&g, NULL, "--pg-port", pg.arg, "--tls-cert-file", pki.cert, "--tls-key-file",
		 pki.key, "--auth-timeout", "300ms", "--maxclients", "1", NULL);
	int fd = tcp(pg.n);
	static const unsigned char ssl_request[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
	put(fd, ssl_request, sizeof(ssl_request));
	char s = 0;
	assert_int_equal(recv(fd, &s, 1, 0), 1);
	assert_int_equal(s, 'S');
	long long t0 = gw_now_ms();
	char ci[160];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=d sslmode=disable", pg.n);
	PGconn *c = NULL;
	while (gw_now_ms() - t0 < 5000) {
		c = PQconnectdb(ci);
		if (PQstatus(c) == CONNECTION_OK)
			break;
		assert_non_null(strstr(PQerrorMessage(c), "too many clients"));
		PQfinish(c);
		c = NULL;
		gw_sleep_ms(100);
	}
	long long took = gw_now_ms() - t0;
	assert_non_null(c);			/* in: the stalled handshake let go of the slot */
	assert_true(took >= 300);		/* not before the auth timeout */
	assert_true(took <= 300 + 2000 + 1500); /* within the linger and a sweep */
	PGresult *r = PQexec(c, "select 1");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	PQclear(r);
	PQfinish(c);
	close(fd);
	testpki_free(&pki);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* PostgreSQL: the whole startup must end within --auth-timeout: a client
 * that sends no startup packet gets PostgreSQL's FATAL 57014. */
static void test_auth_timeout_pg(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, "--auth-timeout", "300ms", NULL);
	int fd = tcp(pg.n);
	char buf[512];
	bool eof;
	size_t n = read_until_eof(fd, buf, sizeof(buf), 5000, &eof);
	assert_true(eof);
	assert_true(n > 5);
	assert_int_equal(buf[0], 'E');
	assert_non_null(memmem(buf, n, "C57014", 7));
	assert_non_null(memmem(buf, n, "canceling authentication due to timeout", 39));
	close(fd);
	/* a client that logs in in time is served */
	char ci[128];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=d", pg.n);
	PGconn *c = PQconnectdb(ci);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	gw_sleep_ms(500);
	PGresult *r = PQexec(c, "select 1");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	PQclear(r);
	PQfinish(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Before AUTH, Redis 7's limits: more than 10 arguments, or an argument
 * over 16 KiB, is a protocol error that closes the connection; after AUTH
 * the configured limits apply. */
static void test_unauthenticated_limits(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--requirepass", "pw", NULL);
	char req[20000];
	int fd = tcp(g.port);
	char buf[512];
	bool eof;
	put(fd, "*11\r\n", 5);
	read_until_eof(fd, buf, sizeof(buf), 2000, &eof);
	assert_string_equal(buf, "-ERR Protocol error: unauthenticated multibulk length\r\n");
	assert_true(eof);
	close(fd);

	fd = tcp(g.port);
	int n = snprintf(req, sizeof(req), "*2\r\n$4\r\nAUTH\r\n$16385\r\n");
	put(fd, req, (size_t)n);
	read_until_eof(fd, buf, sizeof(buf), 2000, &eof);
	assert_string_equal(buf, "-ERR Protocol error: unauthenticated bulk length\r\n");
	assert_true(eof);
	close(fd);

	/* authenticated: 12 arguments and 20000 bytes are ordinary requests */
	fd = tcp(g.port);
	assert_string_equal(ask(fd, "AUTH pw\r\n"), "+OK\r\n");
	n = snprintf(req, sizeof(req), "*12\r\n$4\r\nECHO\r\n");
	for (int i = 0; i < 11; i++)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "$1\r\nx\r\n");
	put(fd, req, (size_t)n);
	assert_string_equal(ask(fd, ""), "-ERR wrong number of arguments for 'echo' command\r\n");
	n = snprintf(req, sizeof(req), "*2\r\n$4\r\nECHO\r\n$17000\r\n");
	memset(req + n, 'y', 17000);
	memcpy(req + n + 17000, "\r\n", 2);
	put(fd, req, (size_t)n + 17002);
	const char *got = ask(fd, "");
	assert_memory_equal(got, "$17000\r\nyyy", 11);
	close(fd);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* --timeout: an idle client is closed; one holding a lease is not. */
static void test_idle_timeout(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--timeout", "300ms", NULL);
	redisContext *holder = gw_connect(&g);
	redisReply *r = gw_cmd(holder, "LOCK.ACQUIRE idle-test 30000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long token = r->integer;
	freeReplyObject(r);
	int idle = tcp(g.port);
	assert_string_equal(ask(idle, "PING\r\n"), "+PONG\r\n");
	char buf[64];
	bool eof;
	read_until_eof(idle, buf, sizeof(buf), 5000, &eof);
	assert_true(eof);
	close(idle);
	gw_sleep_ms(400); /* the holder, silent past the timeout, stays */
	assert_int_equal(info_field(holder, "stats", "idle_timeout_closed"), 1);
	r = gw_cmd(holder, "LOCK.RELEASE idle-test %lld", token);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	/* holding nothing now: closed in turn */
	gw_sleep_ms(1200);
	assert_true(redisCommand(holder, "PING") == NULL);
	redisFree(holder);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* PostgreSQL wire messages, for what libpq does not send (named portals). */
static size_t pg_msg(char *out, char type, const char *body, size_t len)
{
	out[0] = type;
	uint32_t n = htonl((uint32_t)(len + 4));
	memcpy(out + 1, &n, 4);
	memcpy(out + 5, body, len);
	return len + 5;
}

/* --max-prepared-statements and --max-portals: past them, 54000; closing
 * one makes room again. */
static void test_pg_caps(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, "--max-prepared-statements", "2", "--max-portals",
		 "2", NULL);
	char ci[128];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=d", pg.n);
	PGconn *c = PQconnectdb(ci);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	const char *names[] = {"s1", "s2", "s3"};
	for (int i = 0; i < 3; i++) {
		PGresult *r = PQprepare(c, names[i], "select 1", 0, NULL);
		if (i < 2) {
			assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
		} else {
			assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
			assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "54000");
		}
		PQclear(r);
	}
	PQclear(PQexec(c, "DEALLOCATE s1"));
	PGresult *r = PQprepare(c, "s3", "select 1", 0, NULL);
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	PQfinish(c);

	/* named portals, on a raw connection */
	int fd = tcp(pg.n);
	char m[1024], body[256];
	size_t bl = 0;
	uint32_t v = htonl(196608);
	memcpy(body, &v, 4);
	bl = 4;
	memcpy(body + bl, "user\0u\0database\0d\0\0", 19);
	bl += 19;
	uint32_t len = htonl((uint32_t)(bl + 4));
	memcpy(m, &len, 4);
	memcpy(m + 4, body, bl);
	put(fd, m, bl + 4);
	size_t n = pg_msg(m, 'P', "\0select 1\0\0\0", 12);
	static const char *const portals[] = {"p1", "p2", "p3"};
	for (int i = 0; i < 3; i++) {
		char b[32];
		size_t k = 0;
		memcpy(b, portals[i], 3);
		k = 3;
		memcpy(b + k, "\0\0\0\0\0\0\0", 7); /* statement "", 0 formats, 0 params, 0 */
		k += 7;
		n += pg_msg(m + n, 'B', b, k);
	}
	n += pg_msg(m + n, 'S', "", 0);
	put(fd, m, n);
	char buf[4096];
	bool eof;
	size_t got = read_until_eof(fd, buf, sizeof(buf), 1000, &eof);
	assert_non_null(memmem(buf, got, "C54000", 7));
	assert_non_null(memmem(buf, got, "too many portals", 16));
	close(fd);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static bool has(const char *hay, size_t n, const char *needle)
{
	return memmem(hay, n, needle, strlen(needle)) != NULL;
}

/* The passwords appear in no reply (INFO, CONFIG GET, CLIENT LIST, HELLO),
 * no metric and no log line, whatever the client sends. */
static void test_secrets_stay_secret(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg(), admin = gw_free_port_arg();
	gw_start(&g, NULL, "--requirepass", "Rs3cretXYZ", "--pg-password", "Ps3cretXYZ",
		 "--pg-port", pg.arg, "--admin-port", admin.arg, NULL);
	int fd = tcp(g.port);
	char all[65536];
	size_t n = 0;
	static const char *const reqs[] = {
		"AUTH wrong-Rs3cretXYZ\r\n",
		"AUTH Rs3cretXYZ\r\n",
		"HELLO 3 AUTH default Rs3cretXYZ\r\n",
		"CONFIG GET *\r\n",
		"INFO everything\r\n",
		"CLIENT LIST\r\n",
		"CLIENT INFO\r\n",
	};
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		const char *r = ask(fd, reqs[i]);
		assert_true(r[0] != '\0');
		n += (size_t)snprintf(all + n, sizeof(all) - n, "%s", r);
	}
	close(fd);
	char ci[160];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=d password=bad-Ps3cretXYZ",
		 pg.n);
	PGconn *c = PQconnectdb(ci);
	assert_int_not_equal(PQstatus(c), CONNECTION_OK);
	PQfinish(c);
	int h = tcp(admin.n);
	const char *get = "GET /metrics HTTP/1.0\r\n\r\n";
	put(h, get, strlen(get));
	bool eof;
	size_t m = read_until_eof(h, all + n, sizeof(all) - n, 2000, &eof);
	assert_true(has(all + n, m, "leasegate_"));
	n += m;
	close(h);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	assert_false(has(all, n, "s3cretXYZ"));
	assert_int_equal(gw_log_count(&g, "s3cretXYZ"), 0);
	assert_true(gw_log_count(&g, "") > 3); /* the log was written */
}

/* Refused at start, with a message saying why and what to do. */
static void expect_start_refused(struct gw *g, const char *needle)
{
	assert_int_equal(gw_wait(g), 1);
	if (gw_log_count(g, needle) == 0)
		fail_msg("no '%s' in %s", needle, g->log);
}

static void test_config_file_with_secret_readable(void **state)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/secret-%d.conf",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp", (int)getpid());
	FILE *f = fopen(path, "w");
	fprintf(f, "requirepass Fs3cretXYZ\n");
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	struct gw g;
	gw_spawn(&g, NULL, "--config", path, NULL);
	expect_start_refused(&g, "chmod 600");
	assert_int_equal(gw_log_count(&g, "Fs3cretXYZ"), 0);
	assert_int_equal(chmod(path, 0600), 0);
	gw_start(&g, NULL, "--config", path, NULL);
	redisContext *rc = gw_connect(&g);
	gw_expect_err(rc, "NOAUTH", "PING");
	redisFree(rc);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	unlink(path);
}

static void test_unixsocket_not_a_socket(void **state)
{
	char path[256];
	snprintf(path, sizeof(path), "/tmp/lg-it-hostile-%d.sock", (int)getpid());
	FILE *f = fopen(path, "w");
	fprintf(f, "keep me\n");
	fclose(f);
	struct gw g;
	gw_spawn(&g, NULL, "--unixsocket", path, NULL);
	expect_start_refused(&g, "not a socket");
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 8);
	unlink(path);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_auth_timeout_redis, gw_teardown),
		cmocka_unit_test_teardown(test_auth_timeout_pg, gw_teardown),
		cmocka_unit_test_teardown(test_auth_timeout_frees_slot_of_reader_that_stalls,
					  gw_teardown),
		cmocka_unit_test_teardown(test_auth_timeout_frees_slot_of_stalled_tls_handshake,
					  gw_teardown),
		cmocka_unit_test_teardown(test_unauthenticated_limits, gw_teardown),
		cmocka_unit_test_teardown(test_idle_timeout, gw_teardown),
		cmocka_unit_test_teardown(test_pg_caps, gw_teardown),
		cmocka_unit_test_teardown(test_secrets_stay_secret, gw_teardown),
		cmocka_unit_test_teardown(test_config_file_with_secret_readable, gw_teardown),
		cmocka_unit_test_teardown(test_unixsocket_not_a_socket, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
