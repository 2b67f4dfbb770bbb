/*
 * it_tls: the real binary's TLS ports, from C: an OpenSSL client speaking
 * RESP on --tls-port next to hiredis on --port, and libpq on the
 * PostgreSQL port. What tls_clients.sh (real client programs) does not
 * reach: a wait answered later over TLS, a lease released when a TLS
 * client vanishes without close_notify, thousands of pipelined requests
 * through back-pressure (--max-output-buffer 1kb), SIGTERM with TLS
 * sessions open, libpq's sslmode=verify-full by the Service name and
 * --pg-tls required, the refusals of a bad key or a missing CA at start.
 * Certificates come from tests/support/testpki, made at test time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/support/gw.h"
#include "tests/support/testpki.h"

static struct testpki pki;

static int setup(void **state)
{
	testpki_make(&pki);
	return 0;
}

static int teardown(void **state)
{
	gw_teardown(state);
	testpki_free(&pki);
	return 0;
}

/* ---- a TLS RESP client ---- */

struct tcl {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
};

static int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

/* Connects and handshakes (verifying the server's certificate for
 * "localhost"); with cert, presents the test client certificate. false
 * when the handshake fails. */
static bool tcl_open(struct tcl *t, int port, bool cert)
{
	t->fd = tcp_connect(port);
	t->ctx = SSL_CTX_new(TLS_client_method());
	assert_int_equal(SSL_CTX_load_verify_locations(t->ctx, pki.ca, NULL), 1);
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	if (cert) {
		assert_int_equal(
			SSL_CTX_use_certificate_file(t->ctx, pki.client_cert, SSL_FILETYPE_PEM), 1);
		assert_int_equal(
			SSL_CTX_use_PrivateKey_file(t->ctx, pki.client_key, SSL_FILETYPE_PEM), 1);
	}
	t->ssl = SSL_new(t->ctx);
	SSL_set_tlsext_host_name(t->ssl, "localhost");
	SSL_set1_host(t->ssl, "localhost");
	SSL_set_fd(t->ssl, t->fd);
	return SSL_connect(t->ssl) == 1;
}

/* Closes the socket without close_notify: a client that vanished. */
static void tcl_drop(struct tcl *t)
{
	SSL_free(t->ssl);
	SSL_CTX_free(t->ctx);
	close(t->fd);
	ERR_clear_error();
}

static void tcl_send(struct tcl *t, const char *s)
{
	assert_int_equal(SSL_write(t->ssl, s, (int)strlen(s)), (int)strlen(s));
}

/* One reply line ("+PONG", ":3", "$-1"), without its CRLF; NULL when the
 * connection ended. */
static const char *tcl_line(struct tcl *t)
{
	static char line[512];
	size_t n = 0;
	while (n + 1 < sizeof(line)) {
		char ch;
		if (SSL_read(t->ssl, &ch, 1) != 1)
			return NULL;
		if (ch == '\n' && n > 0 && line[n - 1] == '\r') {
			line[n - 1] = '\0';
			return line;
		}
		line[n++] = ch;
	}
	return NULL;
}

static const char *tcl_cmd(struct tcl *t, const char *inline_cmd)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s\r\n", inline_cmd);
	tcl_send(t, buf);
	return tcl_line(t);
}

/* A gateway with a TLS port (client certificates not asked unless extra
 * options say so); *tport is the port. */
static void start_tls(struct gw *g, struct gw_port *tport, const char *auth)
{
	*tport = gw_free_port_arg();
	gw_start(g, NULL, "--tls-port", tport->arg, "--tls-cert-file", pki.cert, "--tls-key-file",
		 pki.key, "--tls-ca-cert-file", pki.ca, "--tls-auth-clients", auth,
		 "--max-output-buffer", "1kb", NULL);
}

/* ---- tests ---- */

/* A LOCK.ACQUIRE ... WAIT over TLS is answered when the plain port's
 * holder releases: a deferred reply written on the TLS transport. */
static void test_wait_answered_over_tls(void **state)
{
	struct gw g;
	struct gw_port tport;
	struct tcl t;
	start_tls(&g, &tport, "no");
	redisContext *plain = gw_connect(&g);
	gw_expect_int(plain, 1, "LOCK.ACQUIRE w 30000");
	assert_true(tcl_open(&t, tport.n, false));
	tcl_send(&t, "LOCK.ACQUIRE w 30000 WAIT 10000\r\n");
	gw_sleep_ms(200);
	gw_expect_int(plain, 1, "LOCK.RELEASE w");
	assert_string_equal(tcl_line(&t), ":2");
	assert_string_equal(tcl_cmd(&t, "LOCK.RELEASE w"), ":1");
	tcl_drop(&t);
	redisFree(plain);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A TLS client that vanishes (no close_notify) is a closed connection:
 * its lease is released at once, as over the plain port. */
static void test_vanished_tls_client_releases(void **state)
{
	struct gw g;
	struct gw_port tport;
	struct tcl t;
	start_tls(&g, &tport, "no");
	assert_true(tcl_open(&t, tport.n, false));
	assert_string_equal(tcl_cmd(&t, "LOCK.ACQUIRE v 60000"), ":1");
	redisContext *plain = gw_connect(&g);
	gw_expect_nil(plain, "LOCK.ACQUIRE v 60000");
	tcl_drop(&t);
	long long t0 = gw_now_ms();
	redisReply *r = gw_cmd(plain, "LOCK.ACQUIRE v 60000 WAIT 5000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r->integer, 2);
	assert_true(gw_now_ms() - t0 < 2000);
	freeReplyObject(r);
	redisFree(plain);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* 20000 pipelined PINGs over TLS against a 1 KiB output limit: reading
 * pauses and resumes many times; every reply arrives, in order. */
static void test_pipeline_through_backpressure(void **state)
{
	struct gw g;
	struct gw_port tport;
	struct tcl t;
	start_tls(&g, &tport, "no");
	assert_true(tcl_open(&t, tport.n, false));
	enum { N = 20000 };
	static const char ping[] = "PING\r\n", pong[] = "+PONG\r\n";
	size_t to_send = N * (sizeof(ping) - 1), sent = 0;
	size_t want = N * (sizeof(pong) - 1), got = 0;
	char *out = malloc(to_send), in[16384];
	for (size_t i = 0; i < N; i++)
		memcpy(out + i * (sizeof(ping) - 1), ping, sizeof(ping) - 1);
	size_t pos = 0; /* where in "+PONG\r\n" the next byte must be */
	SSL_set_mode(t.ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	assert_int_equal(fcntl(t.fd, F_SETFL, fcntl(t.fd, F_GETFL) | O_NONBLOCK), 0);
	long long deadline = gw_now_ms() + 30000;
	while (got < want && gw_now_ms() < deadline) {
		bool moved = false;
		if (sent < to_send) {
			int n = SSL_write(t.ssl, out + sent, (int)(to_send - sent));
			if (n > 0) {
				sent += (size_t)n;
				moved = true;
			}
		}
		int n = SSL_read(t.ssl, in, sizeof(in));
		if (n > 0) {
			for (int i = 0; i < n; i++) {
				if (in[i] != pong[pos])
					fail_msg("reply byte %zu: '%c', want '%c'", got + (size_t)i,
						 in[i], pong[pos]);
				pos = (pos + 1) % (sizeof(pong) - 1);
			}
			got += (size_t)n;
			moved = true;
		}
		ERR_clear_error();
		if (!moved) {
			struct pollfd p = {t.fd, POLLIN | (sent < to_send ? POLLOUT : 0), 0};
			poll(&p, 1, 50);
		}
	}
	assert_int_equal(sent, to_send);
	assert_int_equal(got, want);
	free(out);
	tcl_drop(&t);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* SIGTERM with TLS sessions open: they are closed after their replies,
 * their leases released, and the process exits 0. */
static void test_sigterm_with_tls_sessions(void **state)
{
	struct gw g;
	struct gw_port tport;
	struct tcl a, b;
	start_tls(&g, &tport, "no");
	assert_true(tcl_open(&a, tport.n, false));
	assert_true(tcl_open(&b, tport.n, false));
	assert_string_equal(tcl_cmd(&a, "LOCK.ACQUIRE s 60000"), ":1");
	tcl_send(&b, "LOCK.ACQUIRE s 60000 WAIT 0\r\n");
	gw_sleep_ms(100);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
	assert_string_equal(tcl_line(&b), "-ERR server is shutting down");
	assert_null(tcl_line(&a)); /* closed */
	tcl_drop(&a);
	tcl_drop(&b);
}

/* --tls-auth-clients yes: no certificate, no session; with the test
 * client's, served. */
static void test_mutual_tls(void **state)
{
	struct gw g;
	struct gw_port tport;
	struct tcl t;
	start_tls(&g, &tport, "yes");
	/* TLS 1.3: the client's handshake ends before the server's verdict,
	 * which comes as an alert on the first read */
	bool served = false;
	if (tcl_open(&t, tport.n, false) && SSL_write(t.ssl, "PING\r\n", 6) == 6) {
		const char *l = tcl_line(&t);
		served = l != NULL && strcmp(l, "+PONG") == 0;
	}
	assert_false(served);
	tcl_drop(&t);
	assert_true(tcl_open(&t, tport.n, true));
	assert_string_equal(tcl_cmd(&t, "PING"), "+PONG");
	tcl_drop(&t);
	assert_int_equal(gw_log_count(&g, "TLS handshake failed: "), 1);
	assert_int_equal(gw_log_count(&g, "peer did not return a certificate"), 1);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* libpq: sslmode=verify-full by the Service's DNS name; --pg-tls required
 * refuses sslmode=disable, naming the rule. */
static void test_libpq_verify_full_and_required(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&g, NULL, "--pg-port", pg.arg, "--tls-cert-file", pki.cert, "--tls-key-file",
		 pki.key, "--pg-tls", "required", NULL);
	char dsn[1024];
	snprintf(dsn, sizeof(dsn),
		 "host=%s hostaddr=127.0.0.1 port=%d user=app dbname=locks sslmode=verify-full "
		 "sslrootcert=%s",
		 TESTPKI_SVC, pg.n, pki.ca);
	PGconn *c = PQconnectdb(dsn);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("%s", PQerrorMessage(c));
	assert_int_equal(PQsslInUse(c), 1);
	assert_string_equal(PQsslAttribute(c, "protocol"), "TLSv1.3");
	PGresult *r = PQexec(c, "SELECT pg_try_advisory_lock(11)");
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	assert_string_equal(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	PQfinish(c);

	snprintf(dsn, sizeof(dsn), "host=127.0.0.1 port=%d user=app dbname=locks sslmode=disable",
		 pg.n);
	c = PQconnectdb(dsn);
	assert_int_equal(PQstatus(c), CONNECTION_BAD);
	const char *e = PQerrorMessage(c);
	if (strstr(e, "no pg_hba.conf entry") == NULL || strstr(e, "no encryption") == NULL ||
	    strstr(e, "--pg-tls required") == NULL)
		fail_msg("%s", e);
	PQfinish(c);
	/* no Redis TLS port here: INFO says so, and that no certificate is asked */
	redisContext *plain = gw_connect(&g);
	redisReply *info = gw_cmd(plain, "INFO server");
	assert_non_null(strstr(info->str, "\r\ntls_port:0\r\ntls_auth_clients:no\r\n"));
	freeReplyObject(info);
	redisFree(plain);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* What refuses a start names the option and the file. */
static void test_bad_start(void **state)
{
	static const struct {
		const char *opt, *file_kind, *want;
	} cases[] = {
		{"--tls-key-file", "other", "is not the key of the certificate in --tls-cert-file"},
		{"--tls-key-file", "encrypted", "no private key (PEM, not encrypted)"},
		{"--tls-auth-clients", NULL, "yes needs --tls-ca-cert-file"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gw g;
		struct gw_port tport = gw_free_port_arg();
		const char *key = cases[i].file_kind == NULL		     ? pki.key
				  : strcmp(cases[i].file_kind, "other") == 0 ? pki.other_key
									     : pki.enc_key;
		gw_spawn(&g, NULL, "--tls-port", tport.arg, "--tls-cert-file", pki.cert,
			 "--tls-key-file", key, "--tls-auth-clients",
			 cases[i].file_kind ? "no" : "yes", NULL);
		assert_int_equal(gw_wait(&g), 1);
		char want[512];
		snprintf(want, sizeof(want), "bad value for %s", cases[i].opt);
		if (gw_log_count(&g, want) == 0 || gw_log_count(&g, cases[i].want) == 0 ||
		    (cases[i].file_kind && gw_log_count(&g, key) == 0))
			fail_msg("case %zu: see %s", i, g.log);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_wait_answered_over_tls, gw_teardown),
		cmocka_unit_test_teardown(test_vanished_tls_client_releases, gw_teardown),
		cmocka_unit_test_teardown(test_pipeline_through_backpressure, gw_teardown),
		cmocka_unit_test_teardown(test_sigterm_with_tls_sessions, gw_teardown),
		cmocka_unit_test_teardown(test_mutual_tls, gw_teardown),
		cmocka_unit_test_teardown(test_libpq_verify_full_and_required, gw_teardown),
		cmocka_unit_test_teardown(test_bad_start, gw_teardown),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
