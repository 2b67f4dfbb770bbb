/*
 * it_http: lib/http/http.c against a real HTTP server (libevent's
 * evhttp, in this process: tests/support/http_fixture.c): keep-alive
 * reuse, timeouts, the response body bound, cancel at every stage, the
 * headers sent (nothing curl would add) and captured (Date, x-amz-crc32),
 * HTTPS verification, callbacks never inside http_send(). The active
 * limit, the queue and its priorities: it_http_queue.c.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/http/http.h"
#include "tests/support/http_fixture.h"

static void test_keepalive_reuse(void **state)
{
	struct http *h = http_new(hf_base, NULL);
	assert_non_null(h);
	for (int i = 0; i < 5; i++) {
		assert_non_null(hf_send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, i));
		hf_want_done = i + 1;
		assert_true(hf_run_until(hf_n_done, 5000));
		assert_int_equal(hf_results[i].code, CURLE_OK);
		assert_int_equal(hf_results[i].status, 200);
		assert_string_equal(hf_results[i].body, "xxxxx");
	}
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.connections_opened, 1);
	assert_int_equal(hf_server_conns, 1);
	assert_int_equal(st.sent, 5);
	assert_int_equal(st.completed, 5);
	assert_false(hf_called_in_send);
	http_free(h);
}

/* The FIONREAD ioctls of this process, on the client's and the server's
 * side of connections to the test server: libevent's bufferevent asks
 * before every read (this definition interposes on its calls). */
static int fionread_client, fionread_server;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (req == FIONREAD) {
		struct sockaddr_in a;
		socklen_t len = sizeof a;
		if (getpeername(fd, (struct sockaddr *)&a, &len) == 0 && a.sin_family == AF_INET &&
		    ntohs(a.sin_port) == hf_port)
			fionread_client++;
		len = sizeof a;
		if (getsockname(fd, (struct sockaddr *)&a, &len) == 0 && a.sin_family == AF_INET &&
		    ntohs(a.sin_port) == hf_port)
			fionread_server++;
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/* A plain connection reads its answers with one recv each, without the
 * FIONREAD the bufferevent would ask first (the server, an evhttp, still
 * does: the count works). */
static void test_plain_reads_without_fionread(void **state)
{
	struct http *h = http_new(hf_base, NULL);
	assert_non_null(h);
	fionread_client = fionread_server = 0;
	for (int i = 0; i < 5; i++) {
		assert_non_null(hf_send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, i));
		hf_want_done = i + 1;
		assert_true(hf_run_until(hf_n_done, 5000));
		assert_int_equal(hf_results[i].code, CURLE_OK);
		assert_int_equal(hf_results[i].status, 200);
	}
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.connections_opened, 1);
	assert_true(fionread_server > 0);
	assert_int_equal(fionread_client, 0);
	http_free(h);
}

static void test_headers_sent_and_captured(void **state)
{
	struct http *h = http_new(hf_base, NULL);
	/* > 1 MB: curl would add "Expect: 100-continue" if allowed to */
	size_t len = 1100000;
	char *body = malloc(len);
	memset(body, 'b', len);
	struct http_header hd[] = {
		{"Host", "example.test"}, {"X-Amz-Target", "T.Op"}, {"X-Empty", ""}};
	assert_non_null(hf_send_one(h, "POST", "/x", hd, 3, body, len, 0, 0));
	hf_want_done = 1;
	assert_true(hf_run_until(hf_n_done, 5000));
	free(body);
	assert_int_equal(hf_results[0].code, CURLE_OK);
	assert_string_equal(hf_last_method, "POST");
	assert_int_equal(hf_last_body_len, len);
	assert_non_null(strstr(hf_last_headers, "host: example.test\n"));
	assert_non_null(strstr(hf_last_headers, "x-amz-target: T.Op\n"));
	assert_non_null(strstr(hf_last_headers, "x-empty: \n"));
	assert_non_null(strstr(hf_last_headers, "content-length: 1100000\n"));
	static const char *const absent[] = {"expect:",	      "accept:",     "accept-encoding:",
					     "content-type:", "user-agent:", "transfer-encoding:"};
	for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
		if (strstr(hf_last_headers, absent[i]))
			fail_msg("curl sent %s in\n%s", absent[i], hf_last_headers);
	assert_string_equal(hf_results[0].crc32, "1234567890");
	assert_true(strlen(hf_results[0].date) > 20); /* "Sun, 29 Nov 2026 ..." */
	assert_non_null(strstr(hf_results[0].date, "GMT"));

	/* IMDS-style PUT without a body, and a GET */
	struct http_header ttl[] = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}};
	assert_non_null(hf_send_one(h, "PUT", "/x", ttl, 1, NULL, 0, 0, 1));
	hf_want_done = 2;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_string_equal(hf_last_method, "PUT");
	assert_non_null(strstr(hf_last_headers, "x-aws-ec2-metadata-token-ttl-seconds: 21600\n"));
	assert_non_null(strstr(hf_last_headers, "content-length: 0\n"));
	http_free(h);
}

static void test_timeouts(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = http_new(hf_base, &o);
	/* active: the server never answers */
	assert_non_null(hf_send_one(h, "GET", "/hold?n=0", NULL, 0, NULL, 0, 300, 0));
	/* queued behind it for longer than its own timeout */
	assert_non_null(hf_send_one(h, "GET", "/hold?n=1", NULL, 0, NULL, 0, 100, 1));
	hf_want_done = 1;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_true(hf_results[1].done); /* the queued one gives up first */
	assert_false(hf_results[0].done);
	assert_int_equal(hf_results[1].code, CURLE_OPERATION_TIMEDOUT);
	assert_non_null(strstr(hf_results[1].error, "queue"));
	hf_want_done = 2;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_int_equal(hf_results[0].code, CURLE_OPERATION_TIMEDOUT);
	assert_int_equal(hf_results[0].status, 0);
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.failed, 2);
	hf_release_held();
	http_free(h);
}

static void test_body_limit(void **state)
{
	struct http *h = http_new(hf_base, NULL);
	assert_non_null(hf_send_one(h, "GET", "/big", NULL, 0, NULL, 0, 0, 0));
	assert_non_null(hf_send_one(h, "GET", "/bigchunked", NULL, 0, NULL, 0, 0, 1));
	assert_non_null(hf_send_one(h, "GET", "/exact", NULL, 0, NULL, 0, 0, 2));
	hf_want_done = 3;
	assert_true(hf_run_until(hf_n_done, 10000));
	assert_int_equal(hf_results[0].code, CURLE_FILESIZE_EXCEEDED);
	assert_int_equal(hf_results[1].code, CURLE_FILESIZE_EXCEEDED);
	assert_int_equal(hf_results[2].code, CURLE_OK);
	assert_int_equal(hf_results[2].body_len, HTTP_BODY_MAX);
	http_free(h);
}

static struct http *cancel_h;
static struct http_req *cancel_victim;
static void on_done_cancel_other(void *arg, const struct http_response *res)
{
	hf_on_done(arg, res);
	http_cancel(cancel_h, cancel_victim);
}

static void test_cancel(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = cancel_h = http_new(hf_base, &o);
	struct http_req *a = hf_send_one(h, "GET", "/hold?n=0", NULL, 0, NULL, 0, 0, 0);
	struct http_req *b = hf_send_one(h, "GET", "/hold?n=1", NULL, 0, NULL, 0, 0, 1);
	struct http_req *c = hf_send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	http_cancel(h, b); /* queued */
	hf_want_held = 1;
	assert_true(hf_run_until(hf_n_held, 5000));
	http_cancel(h, a); /* active: c starts in its place */
	hf_want_done = 1;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_true(hf_results[2].done);
	assert_false(hf_results[0].done || hf_results[1].done);
	assert_string_equal(hf_order, "0");

	/* cancel from inside another request's callback */
	struct http_options o2 = {.max_active = 4};
	struct http *h2 = cancel_h = http_new(hf_base, &o2);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", hf_port);
	struct http_request rq = {.method = "GET", .url = url};
	assert_non_null(http_send(h2, &rq, on_done_cancel_other, &hf_results[3]));
	cancel_victim = hf_send_one(h2, "GET", "/hold?n=4", NULL, 0, NULL, 0, 0, 4);
	hf_want_done = 2;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_false(hf_results[4].done);
	assert_false(hf_run_until(hf_n_done, 200) && hf_results[4].done);
	hf_release_held();
	/* http_free with requests in flight: no callbacks */
	assert_non_null(hf_send_one(h, "GET", "/hold?n=5", NULL, 0, NULL, 0, 0, 5));
	assert_non_null(hf_send_one(h, "GET", "/hold?n=6", NULL, 0, NULL, 0, 0, 6));
	http_free(h);
	http_free(h2);
	assert_false(hf_run_until(hf_n_done, 200) && (hf_results[5].done || hf_results[6].done));
	assert_false(hf_results[5].done || hf_results[6].done);
	hf_release_held();
}

static struct http_req *self_req;
static void on_done_cancel_self(void *arg, const struct http_response *res)
{
	hf_on_done(arg, res);
	http_cancel(cancel_h, self_req); /* its own request: a no-op */
}

static void test_cancel_self_and_proxy_env(void **state)
{
	struct http *h = cancel_h = http_new(hf_base, NULL);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", hf_port);
	struct http_request rq = {.method = "GET", .url = url};
	self_req = http_send(h, &rq, on_done_cancel_self, &hf_results[0]);
	assert_non_null(self_req);
	assert_non_null(hf_send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, 1));
	hf_want_done = 2;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_int_equal(hf_results[0].code, CURLE_OK);
	assert_int_equal(hf_results[1].code, CURLE_OK);

	/* a proxy from the environment (refusing connections) is used, unless
	 * the request says no_proxy */
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	assert_non_null(hf_send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, 2));
	rq.no_proxy = true;
	assert_non_null(http_send(h, &rq, hf_on_done, &hf_results[3]));
	hf_want_done = 4;
	assert_true(hf_run_until(hf_n_done, 5000));
	unsetenv("http_proxy");
	assert_int_equal(hf_results[2].code, CURLE_COULDNT_CONNECT);
	assert_int_equal(hf_results[3].code, CURLE_OK);
	assert_int_equal(hf_results[3].status, 200);
	http_free(h);
}

/* A connect that never completes: a listener whose backlog is full drops
 * further SYNs, so only the connect timeout ends the request. */
static int64_t elapsed_last;
static void on_done_elapsed(void *arg, const struct http_response *res)
{
	elapsed_last = res->elapsed_us;
	hf_on_done(arg, res);
}

static void test_connect_timeout(void **state)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sin;
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(l, 0), 0);
	getsockname(l, (struct sockaddr *)&sin, &sl);
	int fill[4];
	for (int i = 0; i < 4; i++) { /* fill the accept queue, never accepted */
		fill[i] = socket(AF_INET, SOCK_STREAM, 0);
		evutil_make_socket_nonblocking(fill[i]);
		connect(fill[i], (struct sockaddr *)&sin, sizeof sin);
	}
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(sin.sin_port));
	struct http *h = http_new(hf_base, NULL);
	struct http_request rq = {
		.method = "GET", .url = url, .connect_timeout_ms = 300, .timeout_ms = 5000};
	assert_non_null(http_send(h, &rq, on_done_elapsed, &hf_results[0]));
	hf_want_done = 1;
	assert_true(hf_run_until(hf_n_done, 6000));
	assert_int_equal(hf_results[0].code, CURLE_OPERATION_TIMEDOUT);
	assert_in_range(elapsed_last, 250000, 2000000); /* the connect timeout, not 5 s */
	http_free(h);
	for (int i = 0; i < 4; i++)
		close(fill[i]);
	close(l);
}

/* ---- HTTPS: verification is on unless asked otherwise ---- */

static SSL_CTX *tls_ctx;

static struct bufferevent *on_tls_conn(struct event_base *b, void *arg)
{
	return bufferevent_openssl_socket_new(b, -1, SSL_new(tls_ctx), BUFFEREVENT_SSL_ACCEPTING,
					      BEV_OPT_CLOSE_ON_FREE);
}

/* A self-signed certificate for 127.0.0.1, written to cert_path. */
static void make_tls(const char *cert_path)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	assert_non_null(key);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, key);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1,
				   -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_CTX v3;
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1");
	X509_add_ext(x, san, -1);
	X509_EXTENSION_free(san);
	X509_EXTENSION *bc =
		X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
	X509_add_ext(x, bc, -1);
	X509_EXTENSION_free(bc);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	FILE *f = fopen(cert_path, "w");
	assert_non_null(f);
	PEM_write_X509(f, x);
	fclose(f);
	tls_ctx = SSL_CTX_new(TLS_server_method());
	assert_int_equal(SSL_CTX_use_certificate(tls_ctx, x), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey(tls_ctx, key), 1);
	X509_free(x);
	EVP_PKEY_free(key);
}

static void test_https_verification(void **state)
{
	char cert[] = "/tmp/lg-it-http-cert.XXXXXX";
	int fd = mkstemp(cert);
	assert_true(fd >= 0);
	close(fd);
	make_tls(cert);
	struct evhttp *tls = evhttp_new(hf_base);
	evhttp_set_bevcb(tls, on_tls_conn, NULL);
	evhttp_set_gencb(tls, hf_on_request, NULL);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(tls, "127.0.0.1", 0);
	assert_non_null(bs);
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &sl);
	char url[64];
	snprintf(url, sizeof url, "https://127.0.0.1:%d/x", ntohs(sin.sin_port));
	struct http_request rq = {.method = "GET", .url = url};

	struct http *strict = http_new(hf_base, NULL); /* the default: verify */
	struct http_options with_ca = {.ca_file = cert};
	struct http *trusting = http_new(hf_base, &with_ca);
	struct http_options insecure = {.insecure = true};
	struct http *lax = http_new(hf_base, &insecure);
	assert_non_null(http_send(strict, &rq, hf_on_done, &hf_results[0]));
	assert_non_null(http_send(trusting, &rq, hf_on_done, &hf_results[1]));
	assert_non_null(http_send(lax, &rq, hf_on_done, &hf_results[2]));
	hf_want_done = 3;
	assert_true(hf_run_until(hf_n_done, 10000));
	assert_int_equal(hf_results[0].code, CURLE_PEER_FAILED_VERIFICATION);
	assert_int_equal(hf_results[1].code, CURLE_OK);
	assert_string_equal(hf_results[1].body, "xxxxx");
	assert_int_equal(hf_results[2].code, CURLE_OK);
	http_free(strict);
	http_free(trusting);
	http_free(lax);
	evhttp_free(tls);
	SSL_CTX_free(tls_ctx);
	unlink(cert);
}

static void on_done_free(void *arg, const struct http_response *res)
{
	hf_on_done(arg, res);
	http_free(cancel_h); /* from inside its own callback */
}

static void test_free_inside_callback_and_early_errors(void **state)
{
	struct http *h = cancel_h = http_new(hf_base, NULL);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", hf_port);
	struct http_request rq = {.method = "GET", .url = url};
	assert_non_null(http_send(h, &rq, on_done_free, &hf_results[0]));
	assert_non_null(hf_send_one(h, "GET", "/hold?n=1", NULL, 0, NULL, 0, 0, 1));
	hf_want_done = 1;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_false(hf_run_until(hf_n_done, 200) && hf_results[1].done);
	hf_release_held();

	/* errors curl finds are reported later, from the loop */
	h = http_new(hf_base, NULL);
	struct http_request bad = {.method = "GET", .url = "gopher://127.0.0.1/"};
	hf_in_send = true;
	assert_non_null(http_send(h, &bad, hf_on_done, &hf_results[2]));
	struct http_request refused = {.method = "GET", .url = "http://127.0.0.1:1/"};
	assert_non_null(http_send(h, &refused, hf_on_done, &hf_results[3]));
	hf_in_send = false;
	assert_false(hf_results[2].done || hf_results[3].done);
	hf_want_done = 3;
	assert_true(hf_run_until(hf_n_done, 5000));
	assert_int_equal(hf_results[2].code, CURLE_UNSUPPORTED_PROTOCOL);
	assert_int_equal(hf_results[3].code, CURLE_COULDNT_CONNECT);
	assert_true(strlen(hf_results[3].error) > 0);
	assert_false(hf_called_in_send);
	http_free(h);
}

int main(void)
{
	if (!hf_start()) {
		fprintf(stderr, "cannot bind\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_keepalive_reuse, hf_setup),
		cmocka_unit_test_setup(test_plain_reads_without_fionread, hf_setup),
		cmocka_unit_test_setup(test_headers_sent_and_captured, hf_setup),
		cmocka_unit_test_setup(test_timeouts, hf_setup),
		cmocka_unit_test_setup(test_body_limit, hf_setup),
		cmocka_unit_test_setup(test_cancel, hf_setup),
		cmocka_unit_test_setup(test_free_inside_callback_and_early_errors, hf_setup),
		cmocka_unit_test_setup(test_cancel_self_and_proxy_env, hf_setup),
		cmocka_unit_test_setup(test_https_verification, hf_setup),
		cmocka_unit_test_setup(test_connect_timeout, hf_setup),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	hf_stop();
	return rc;
}
