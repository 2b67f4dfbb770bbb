/*
 * test_tls: the TLS transport and its shared context (gateway/conn:
 * transport_tls.c, tls.c) over a socketpair, with a CA, server and client
 * certificates made by OpenSSL at test time in a scratch directory
 * (tests/support/testpki). A
 * line front-end ("x\n" answers "got:x\n") runs over it; the client is
 * an OpenSSL client on the other end, driven turn by turn with the event
 * loop. Also: session resumption under each front-end's certificate
 * policy, and the tls-server-end-point data of SCRAM-SHA-256-PLUS.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"
#include "gateway/conn/tls.h"
#include "gateway/conn/transport.h"
#include "tests/support/testpki.h"

/* ---- a line front-end ---- */

struct tconn {
	struct conn c;
	struct buf in;
};

static bool t_open(struct conn *c)
{
	buf_init(&((struct tconn *)c)->in, 4096);
	return true;
}

static size_t t_room(const struct conn *c)
{
	const struct tconn *t = (const struct tconn *)c;
	return t->in.limit - t->in.len;
}

static bool t_feed(struct conn *c, const char *p, size_t len)
{
	buf_raw(&((struct tconn *)c)->in, p, len);
	return !buf_failed(&((struct tconn *)c)->in);
}

static size_t t_buffered(const struct conn *c)
{
	return ((const struct tconn *)c)->in.len;
}

static enum conn_step t_step(struct conn *c)
{
	struct tconn *t = (struct tconn *)c;
	char *nl = t->in.len ? memchr(t->in.buf, '\n', t->in.len) : NULL;
	if (nl == NULL)
		return CONN_STEP_IDLE;
	size_t n = (size_t)(nl - t->in.buf);
	buf_printf(&c->out, "got:%.*s\n", (int)n, t->in.buf);
	buf_consume(&t->in, n + 1);
	return CONN_STEP_RAN;
}

static void t_close(struct conn *c) {}

static void t_free(struct conn *c)
{
	buf_free(&((struct tconn *)c)->in);
}

#define LINE_PROTO(cert)                                                                           \
	{                                                                                          \
		.name = "line", .size = sizeof(struct tconn), .open = t_open, .room = t_room,      \
		.feed = t_feed, .buffered = t_buffered, .step = t_step, .close = t_close,          \
		.free = t_free, .refusal = "ERR\n", .tls_client_cert = cert,                       \
	}

static const struct conn_proto line_proto = LINE_PROTO(CONN_CERT_NONE);
static const struct conn_proto mtls_proto = LINE_PROTO(CONN_CERT_REQUIRED);

/* ---- the world: a registry with a TLS context, a client context ---- */

struct world {
	struct testpki pki;
	struct cfg cfg;
	struct event_base *base;
	struct srv *srv;
	struct tls_srv *tls;
	SSL_CTX *client;
	int peers[8];
	int npeers;
};

static void load_cfg(struct world *w, bool with_ca)
{
	char err[512];
	char *argv[] = {"t",	    "--tls-cert-file",	  w->pki.cert, "--tls-key-file",
			w->pki.key, "--tls-ca-cert-file", w->pki.ca,   NULL};
	char *envp[] = {NULL};
	assert_int_equal(cfg_load(&w->cfg, with_ca ? 7 : 5, argv, envp, err, sizeof(err)), CFG_OK);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	char err[512];
	testpki_make(&w->pki);
	load_cfg(w, true);
	w->tls = tls_srv_new(&w->cfg, err, sizeof(err));
	if (w->tls == NULL)
		fail_msg("%s", err);
	w->base = event_base_new();
	w->srv = srv_new(w->base, &w->cfg, 16, "--maxclients");
	assert_non_null(w->srv);
	srv_set_tls(w->srv, w->tls);
	w->client = SSL_CTX_new(TLS_client_method());
	assert_int_equal(SSL_CTX_load_verify_locations(w->client, w->pki.ca, NULL), 1);
	SSL_CTX_set_verify(w->client, SSL_VERIFY_PEER, NULL);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	srv_free(w->srv);
	tls_srv_free(w->tls);
	SSL_CTX_free(w->client);
	event_base_free(w->base);
	for (int i = 0; i < w->npeers; i++)
		close(w->peers[i]);
	testpki_free(&w->pki);
	free(w);
	return 0;
}

static void turns(struct world *w, int n)
{
	for (int i = 0; i < n; i++)
		event_base_loop(w->base, EVLOOP_NONBLOCK);
}

/* A connection of proto on a socketpair; *peer is the client's end. */
static struct conn *adopt(struct world *w, const struct conn_proto *proto, int *peer)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	w->peers[w->npeers++] = sv[1];
	*peer = sv[1];
	struct conn *c = srv_adopt(w->srv, proto, sv[0], "test", "test");
	assert_non_null(c);
	return c;
}

/* The client's handshake, the server's turns in between: true once done. */
static bool handshake(struct world *w, SSL *ssl)
{
	for (int i = 0; i < 500; i++) {
		int r = SSL_connect(ssl);
		if (r == 1)
			return true;
		int e = SSL_get_error(ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			return false;
		turns(w, 1);
	}
	return false;
}

/* A TLS client on peer (with the test client certificate if cert). */
static SSL *client_on(struct world *w, int peer, bool cert)
{
	SSL *ssl = SSL_new(w->client);
	assert_non_null(ssl);
	if (cert) {
		assert_int_equal(
			SSL_use_certificate_file(ssl, w->pki.client_cert, SSL_FILETYPE_PEM), 1);
		assert_int_equal(SSL_use_PrivateKey_file(ssl, w->pki.client_key, SSL_FILETYPE_PEM),
				 1);
	}
	SSL_set_fd(ssl, peer);
	return ssl;
}

/* A connection of proto over TLS, handshaken: its client. */
static SSL *connect_tls(struct world *w, const struct conn_proto *proto, struct conn **cp)
{
	int peer;
	struct conn *c = adopt(w, proto, &peer);
	assert_true(conn_set_transport(c, &transport_tls));
	SSL *ssl = client_on(w, peer, false);
	assert_true(handshake(w, ssl));
	if (cp)
		*cp = c;
	return ssl;
}

static void send_all(struct world *w, SSL *ssl, const char *p, size_t len)
{
	size_t off = 0;
	for (int i = 0; off < len && i < 100000; i++) {
		int n = SSL_write(ssl, p + off, (int)(len - off));
		if (n > 0)
			off += (size_t)n;
		else
			turns(w, 1);
	}
	assert_int_equal(off, len);
}

/* Reads until want bytes came (or the loop gave up): what came. */
static size_t recv_upto(struct world *w, SSL *ssl, char *buf, size_t want)
{
	size_t got = 0;
	for (int i = 0; got < want && i < 20000; i++) {
		int n = SSL_read(ssl, buf + got, (int)(want - got));
		if (n > 0)
			got += (size_t)n;
		else if (SSL_get_error(ssl, n) == SSL_ERROR_WANT_READ)
			turns(w, 1);
		else
			break;
	}
	return got;
}

/* The serial number of the certificate the server showed. */
static long peer_serial(SSL *ssl)
{
	X509 *x = SSL_get1_peer_certificate(ssl);
	assert_non_null(x);
	long s = ASN1_INTEGER_get(X509_get0_serialNumber(x));
	X509_free(x);
	return s;
}

/* ---- tests ---- */

static void test_requests_and_replies_over_tls(void **state)
{
	struct world *w = *state;
	struct conn *c;
	SSL *ssl = connect_tls(w, &line_proto, &c);
	assert_true(conn_encrypted(c));
	assert_int_equal(peer_serial(ssl), 0x1001);
	send_all(w, ssl, "a\nb\n", 4);
	char got[64] = {0};
	assert_int_equal(recv_upto(w, ssl, got, 12), 12);
	assert_string_equal(got, "got:a\ngot:b\n");
	struct tls_stats st;
	tls_srv_stats(w->tls, &st);
	assert_int_equal(st.handshakes, 1);
	assert_int_equal(st.handshake_failures, 0);
	SSL_free(ssl);
}

/* More pipelined requests than the front-end's room (4096 bytes): what
 * the bufferevent decrypted ahead is offered again, none is stranded. */
static void test_pipelined_input_past_the_room(void **state)
{
	struct world *w = *state;
	SSL *ssl = connect_tls(w, &line_proto, NULL);
	enum { N = 5000 };
	char *req = malloc(N * 8), *want = malloc(N * 12), *got = malloc(N * 12);
	size_t rl = 0, wl = 0;
	for (int i = 0; i < N; i++) {
		rl += (size_t)sprintf(req + rl, "%05d\n", i);
		wl += (size_t)sprintf(want + wl, "got:%05d\n", i);
	}
	send_all(w, ssl, req, rl);
	assert_int_equal(recv_upto(w, ssl, got, wl), wl);
	assert_memory_equal(got, want, wl);
	free(req);
	free(want);
	free(got);
	SSL_free(ssl);
}

/* A client that does not speak TLS: the handshake fails, it is counted,
 * and the connection is closed. */
static void test_plaintext_client_fails_the_handshake(void **state)
{
	struct world *w = *state;
	int peer;
	struct conn *c = adopt(w, &line_proto, &peer);
	assert_true(conn_set_transport(c, &transport_tls));
	assert_int_equal(send(peer, "PING\r\n", 6, 0), 6);
	turns(w, 5);
	struct tls_stats st;
	tls_srv_stats(w->tls, &st);
	assert_int_equal(st.handshake_failures, 1);
	assert_int_equal(st.handshakes, 0);
	char b[512];
	ssize_t n;
	while ((n = recv(peer, b, sizeof(b), MSG_DONTWAIT)) > 0) /* the alert */
		;
	/* closed: an end, or a reset (the server left bytes unread) */
	if (n != 0 && errno != ECONNRESET)
		fail_msg("still open: recv %zd, %s", n, strerror(errno));
}

/* What was written before the switch leaves in plaintext, first (the 'S'
 * of PostgreSQL's SSLRequest), then the handshake runs. */
static void test_switch_writes_the_plaintext_answer_first(void **state)
{
	struct world *w = *state;
	int peer;
	struct conn *c = adopt(w, &line_proto, &peer);
	buf_raw(&c->out, "S", 1);
	assert_true(conn_set_transport(c, &transport_tls));
	char b;
	assert_int_equal(recv(peer, &b, 1, MSG_DONTWAIT), 1);
	assert_int_equal(b, 'S');
	SSL *ssl = client_on(w, peer, false);
	assert_true(handshake(w, ssl));
	SSL_free(ssl);
}

static void test_client_certificate_required(void **state)
{
	struct world *w = *state;
	int peer;
	/* without one: refused */
	struct conn *c = adopt(w, &mtls_proto, &peer);
	assert_true(conn_set_transport(c, &transport_tls));
	SSL *ssl = client_on(w, peer, false);
	bool ok = handshake(w, ssl);
	if (ok) { /* TLS 1.3: the refusal comes after the client's Finished */
		send_all(w, ssl, "x\n", 2);
		char got[16];
		assert_int_equal(recv_upto(w, ssl, got, sizeof(got)), 0);
	}
	SSL_free(ssl);
	struct tls_stats st;
	tls_srv_stats(w->tls, &st);
	assert_int_equal(st.handshake_failures, 1);
	/* with one: served */
	c = adopt(w, &mtls_proto, &peer);
	assert_true(conn_set_transport(c, &transport_tls));
	ssl = client_on(w, peer, true);
	assert_true(handshake(w, ssl));
	send_all(w, ssl, "x\n", 2);
	char got[16] = {0};
	assert_int_equal(recv_upto(w, ssl, got, 6), 6);
	assert_string_equal(got, "got:x\n");
	SSL_free(ssl);
}

/* Without a CA nothing can check a client certificate: none is asked. */
static void test_no_ca_asks_no_certificate(void **state)
{
	struct world *w = *state;
	char err[512];
	load_cfg(w, false);
	struct tls_srv *t = tls_srv_new(&w->cfg, err, sizeof(err));
	assert_non_null(t);
	assert_false(tls_srv_has_ca(t));
	srv_set_tls(w->srv, t);
	int peer;
	struct conn *c = adopt(w, &mtls_proto, &peer);
	assert_true(conn_set_transport(c, &transport_tls));
	SSL *ssl = client_on(w, peer, false);
	assert_true(handshake(w, ssl));
	send_all(w, ssl, "y\n", 2);
	char got[16] = {0};
	assert_int_equal(recv_upto(w, ssl, got, 6), 6);
	SSL_free(ssl);
	srv_set_tls(w->srv, w->tls);
	srv_free(w->srv); /* its connections hold t's context */
	w->srv = srv_new(w->base, &w->cfg, 16, "--maxclients");
	tls_srv_free(t);
}

/* A reload serves new sessions the new certificate; a session opened
 * before keeps working; a reload with a key that does not match keeps
 * the previous context. */
static void test_reload(void **state)
{
	struct world *w = *state;
	struct conn *old_c;
	SSL *old = connect_tls(w, &line_proto, &old_c);
	assert_int_equal(peer_serial(old), 0x1001);

	testpki_server(&w->pki, "server two", 0x2002);
	char err[512];
	assert_true(tls_srv_reload(w->tls, err, sizeof(err)));
	char desc[512];
	tls_srv_describe(w->tls, desc, sizeof(desc));
	assert_non_null(strstr(desc, "CN=server two"));
	assert_non_null(strstr(desc, "serial 2002"));

	SSL *fresh = connect_tls(w, &line_proto, NULL);
	assert_int_equal(peer_serial(fresh), 0x2002);
	send_all(w, old, "still\n", 6);
	char got[32] = {0};
	assert_int_equal(recv_upto(w, old, got, 10), 10);
	assert_string_equal(got, "got:still\n");

	/* the wrong key: refused, the context in use stays */
	rename(w->pki.other_key, w->pki.key);
	assert_false(tls_srv_reload(w->tls, err, sizeof(err)));
	assert_non_null(strstr(err, "--tls-key-file"));
	assert_non_null(strstr(err, w->pki.key));
	SSL *third = connect_tls(w, &line_proto, NULL);
	assert_int_equal(peer_serial(third), 0x2002);
	struct tls_stats st;
	tls_srv_stats(w->tls, &st);
	assert_int_equal(st.reloads, 1);
	assert_int_equal(st.reload_failures, 1);
	SSL_free(old);
	SSL_free(fresh);
	SSL_free(third);
}

/* A session is resumed only under the certificate policy it was made
 * under: one of a front-end that asks no certificate, offered to one that
 * requires it, gets a full handshake (refused without a certificate);
 * offered to its own front-end again, it is resumed. TLS 1.2 and 1.3. */
static void test_resumption_keeps_the_policy(void **state)
{
	struct world *w = *state;
	static const int versions[] = {TLS1_2_VERSION, TLS1_3_VERSION};
	for (size_t v = 0; v < sizeof(versions) / sizeof(*versions); v++) {
		SSL_CTX_set_min_proto_version(w->client, versions[v]);
		SSL_CTX_set_max_proto_version(w->client, versions[v]);
		SSL *first = connect_tls(w, &line_proto, NULL);
		send_all(w, first, "a\n", 2); /* TLS 1.3: the ticket comes with the answer */
		char got[16];
		assert_int_equal(recv_upto(w, first, got, 6), 6);
		SSL_SESSION *sess = SSL_get1_session(first);
		assert_non_null(sess);
		(void)SSL_shutdown(first); /* freed without it, the session is not resumable */
		SSL_free(first);
		assert_true(SSL_SESSION_is_resumable(sess));

		int peer;
		struct conn *c = adopt(w, &mtls_proto, &peer);
		assert_true(conn_set_transport(c, &transport_tls));
		SSL *other = client_on(w, peer, false);
		assert_int_equal(SSL_set_session(other, sess), 1);
		if (handshake(w, other)) { /* TLS 1.3: refused after the client's Finished */
			assert_false(SSL_session_reused(other));
			send_all(w, other, "x\n", 2);
			assert_int_equal(recv_upto(w, other, got, sizeof(got)), 0);
		}
		SSL_free(other);

		c = adopt(w, &line_proto, &peer);
		assert_true(conn_set_transport(c, &transport_tls));
		SSL *again = client_on(w, peer, false);
		assert_int_equal(SSL_set_session(again, sess), 1);
		assert_true(handshake(w, again));
		assert_true(SSL_session_reused(again));
		SSL_free(again);
		SSL_SESSION_free(sess);
	}
}

/* A certificate signed by key with md (NULL: the key's own, Ed25519). */
static X509 *signed_cert(EVP_PKEY *key, const EVP_MD *md)
{
	X509 *x = X509_new();
	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)"end point", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, key);
	assert_true(X509_sign(x, key, md) > 0);
	return x;
}

/* RFC 5929's tls-server-end-point: the certificate's hash by its
 * signature's hash, SHA-256 for SHA-1 (and MD5); none for Ed25519. */
static void test_end_point_hash(void **state)
{
	EVP_PKEY *ec = EVP_EC_gen("P-256"), *ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	assert_non_null(ec);
	assert_non_null(ed);
	static const struct {
		const char *sig, *want; /* the signature's hash, the end point's */
	} cases[] = {
		{"SHA1", "SHA256"},
		{"SHA256", "SHA256"},
		{"SHA384", "SHA384"},
		{"SHA512", "SHA512"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		X509 *x = signed_cert(ec, EVP_get_digestbyname(cases[i].sig));
		unsigned char got[64], want[64];
		unsigned int wn = 0;
		assert_int_equal(X509_digest(x, EVP_get_digestbyname(cases[i].want), want, &wn), 1);
		size_t n = tls_cert_end_point(x, got);
		if (n != wn || memcmp(got, want, n) != 0)
			fail_msg("signed with %s: %zu bytes, want %s's %u", cases[i].sig, n,
				 cases[i].want, wn);
		X509_free(x);
	}
	X509 *x = signed_cert(ed, NULL);
	unsigned char got[64];
	assert_int_equal(tls_cert_end_point(x, got), 0);
	X509_free(x);
	EVP_PKEY_free(ec);
	EVP_PKEY_free(ed);
}

/* A TLS connection's end point is that of the certificate its client was
 * shown; a plaintext connection has none. */
static void test_connection_end_point(void **state)
{
	struct world *w = *state;
	struct conn *c;
	SSL *ssl = connect_tls(w, &line_proto, &c);
	unsigned char got[64], want[64];
	send_all(w, ssl, "a\n", 2); /* TLS 1.3: the server's side ends with the client's Finished */
	assert_int_equal(recv_upto(w, ssl, (char *)got, 6), 6);
	X509 *shown = SSL_get1_peer_certificate(ssl);
	size_t wn = tls_cert_end_point(shown, want);
	assert_int_equal(wn, 32); /* the test CA signs with SHA-256 */
	assert_int_equal(transport_tls_end_point(c, got), wn);
	assert_memory_equal(got, want, wn);
	X509_free(shown);
	SSL_free(ssl);
	int peer;
	struct conn *plain = adopt(w, &line_proto, &peer);
	assert_int_equal(transport_tls_end_point(plain, got), 0);
}

/* What refuses a start: each message names the option and the file. */
static void test_bad_files_name_the_option(void **state)
{
	struct world *w = *state;
	static const struct {
		const char *opt;
		int which; /* 0 cert, 1 key, 2 ca */
		const char *value;
		const char *want;
	} cases[] = {
		{"--tls-key-file", 1, "other", "is not the key of the certificate"},
		{"--tls-key-file", 1, "/nonexistent/k.pem", "cannot read /nonexistent/k.pem"},
		{"--tls-cert-file", 0, "/nonexistent/c.pem", "cannot read /nonexistent/c.pem"},
		{"--tls-cert-file", 0, "key", "no certificate"},
		{"--tls-ca-cert-file", 2, "key", "no CA certificate"},
		/* refused without asking a passphrase on the terminal */
		{"--tls-key-file", 1, "encrypted", "no private key (PEM, not encrypted)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c = w->cfg;
		char *field[] = {c.tls_cert_file, c.tls_key_file, c.tls_ca_cert_file};
		const char *v = strcmp(cases[i].value, "other") == 0	   ? w->pki.other_key
				: strcmp(cases[i].value, "key") == 0	   ? w->pki.key
				: strcmp(cases[i].value, "encrypted") == 0 ? w->pki.enc_key
									   : cases[i].value;
		snprintf(field[cases[i].which], 512, "%s", v);
		char err[512] = "";
		struct tls_srv *t = tls_srv_new(&c, err, sizeof(err));
		if (t != NULL)
			fail_msg("case %zu: accepted", i);
		char want_opt[64];
		snprintf(want_opt, sizeof(want_opt), "bad value for %s", cases[i].opt);
		if (strstr(err, want_opt) == NULL || strstr(err, cases[i].want) == NULL ||
		    strstr(err, v) == NULL)
			fail_msg("case %zu: %s", i, err);
	}
}

static void test_protocols_option(void **state)
{
	struct world *w = *state;
	char err[512];
	struct cfg c = w->cfg;
	snprintf(c.tls_protocols, sizeof(c.tls_protocols), "TLSv1.2 SSLv3");
	assert_null(tls_srv_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "--tls-protocols"));
	assert_non_null(strstr(err, "SSLv3"));
	/* TLSv1.3 only: a client limited to 1.2 fails */
	snprintf(c.tls_protocols, sizeof(c.tls_protocols), "TLSv1.3");
	struct tls_srv *t = tls_srv_new(&c, err, sizeof(err));
	assert_non_null(t);
	srv_set_tls(w->srv, t);
	int peer;
	struct conn *conn = adopt(w, &line_proto, &peer);
	assert_true(conn_set_transport(conn, &transport_tls));
	SSL *ssl = client_on(w, peer, false);
	SSL_set_max_proto_version(ssl, TLS1_2_VERSION);
	assert_false(handshake(w, ssl));
	SSL_free(ssl);
	turns(w, 3);
	struct tls_stats st;
	tls_srv_stats(t, &st);
	assert_int_equal(st.handshake_failures, 1);
	srv_set_tls(w->srv, w->tls);
	srv_free(w->srv);
	w->srv = srv_new(w->base, &w->cfg, 16, "--maxclients");
	tls_srv_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_requests_and_replies_over_tls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_input_past_the_room, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plaintext_client_fails_the_handshake, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_switch_writes_the_plaintext_answer_first,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_certificate_required, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_ca_asks_no_certificate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files_name_the_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protocols_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resumption_keeps_the_policy, setup, teardown),
		cmocka_unit_test(test_end_point_hash),
		cmocka_unit_test_setup_teardown(test_connection_end_point, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
