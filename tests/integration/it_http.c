/*
 * it_http: core/dynamodb/http.c against a real HTTP server (libevent's
 * evhttp, in this process, on 127.0.0.1): keep-alive reuse, the active
 * limit and FIFO queue, timeouts (active and queued), the response body
 * bound, cancel at every stage, the headers sent (nothing curl would add)
 * and captured (Date, x-amz-crc32), callbacks never inside http_send().
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
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

#include "core/dynamodb/http.h"

#define HELD_MAX    64
#define RESULTS_MAX 64

static struct event_base *base;
static struct evhttp *srv;
static int port;
static unsigned server_conns; /* connections the server accepted */
static struct evhttp_request *held[HELD_MAX];
static size_t nheld;
static unsigned concurrent_max; /* most requests held at once */
static char last_headers[4096]; /* "name: value\n"..., lower-case names */
static char last_method[16];
static size_t last_body_len;
static char order[256]; /* query "n" of each /hold arrival */

static struct bufferevent *on_conn(struct event_base *b, void *arg)
{
	server_conns++;
	return bufferevent_socket_new(b, -1, BEV_OPT_CLOSE_ON_FREE);
}

static void reply(struct evhttp_request *req, size_t len, bool chunked)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	evhttp_add_header(out, "x-amz-crc32", "1234567890");
	char *fill = malloc(len + 1);
	memset(fill, 'x', len);
	if (!chunked) {
		struct evbuffer *b = evbuffer_new();
		evbuffer_add(b, fill, len);
		evhttp_send_reply(req, 200, "OK", b);
		evbuffer_free(b);
	} else {
		evhttp_send_reply_start(req, 200, "OK");
		struct evbuffer *b = evbuffer_new();
		for (size_t off = 0; off < len; off += 65536) {
			evbuffer_add(b, fill + off, len - off < 65536 ? len - off : 65536);
			evhttp_send_reply_chunk(req, b);
		}
		evhttp_send_reply_end(req);
		evbuffer_free(b);
	}
	free(fill);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	const char *uri = evhttp_request_get_uri(req);
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
		snprintf(last_method, sizeof last_method, "GET");
		break;
	case EVHTTP_REQ_POST:
		snprintf(last_method, sizeof last_method, "POST");
		break;
	case EVHTTP_REQ_PUT:
		snprintf(last_method, sizeof last_method, "PUT");
		break;
	default:
		snprintf(last_method, sizeof last_method, "OTHER");
		break;
	}
	last_headers[0] = '\0';
	struct evkeyval *kv;
	for (kv = evhttp_request_get_input_headers(req)->tqh_first; kv; kv = kv->next.tqe_next) {
		char line[512];
		snprintf(line, sizeof line, "%s: %s\n", kv->key, kv->value);
		for (char *c = line; *c != ':'; c++)
			*c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
		strncat(last_headers, line, sizeof last_headers - strlen(last_headers) - 1);
	}
	last_body_len = evbuffer_get_length(evhttp_request_get_input_buffer(req));
	if (strncmp(uri, "/hold", 5) == 0) {
		const char *n = strstr(uri, "n=");
		if (n)
			strncat(order, n + 2, 1);
		held[nheld++] = req;
		if (nheld > concurrent_max)
			concurrent_max = (unsigned)nheld;
	} else if (strcmp(uri, "/big") == 0) {
		reply(req, HTTP_BODY_MAX + 1, false);
	} else if (strcmp(uri, "/bigchunked") == 0) {
		reply(req, HTTP_BODY_MAX + 1, true);
	} else if (strcmp(uri, "/exact") == 0) {
		reply(req, HTTP_BODY_MAX, false);
	} else {
		reply(req, 5, false);
	}
}

static void release_held(void)
{
	for (size_t i = 0; i < nheld; i++)
		reply(held[i], 2, false);
	nheld = 0;
}

struct result {
	bool done;
	int code;
	long status;
	size_t body_len;
	char body[16];
	char date[64], crc32[16];
	char error[256];
};

static struct result results[RESULTS_MAX];
static bool in_send;
static bool called_in_send;
static char done_order[RESULTS_MAX + 1];

static void on_done(void *arg, const struct http_response *res)
{
	struct result *r = arg;
	called_in_send |= in_send;
	r->done = true;
	r->code = res->curl_code;
	r->status = res->status;
	r->body_len = res->body_len;
	snprintf(r->body, sizeof r->body, "%s", res->body);
	snprintf(r->date, sizeof r->date, "%s", res->date ? res->date : "");
	snprintf(r->crc32, sizeof r->crc32, "%s", res->crc32 ? res->crc32 : "");
	snprintf(r->error, sizeof r->error, "%s", res->error ? res->error : "");
	size_t n = strlen(done_order);
	if (n < RESULTS_MAX)
		done_order[n] = (char)('0' + (r - results));
}

static struct http_req *send_one(struct http *h, const char *method, const char *path,
				 const struct http_header *hd, size_t nh, const char *body,
				 size_t len, int64_t timeout_ms, int idx)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
	struct http_request req = {.method = method,
				   .url = url,
				   .headers = hd,
				   .nheaders = nh,
				   .body = body,
				   .body_len = len,
				   .timeout_ms = timeout_ms};
	in_send = true;
	struct http_req *r = http_send(h, &req, on_done, &results[idx]);
	in_send = false;
	return r;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	*(bool *)arg = true;
}

/* Runs the loop until pred() or limit_ms passes; returns pred(). */
static bool run_until(bool (*pred)(void), int limit_ms)
{
	bool expired = false;
	struct event *t = evtimer_new(base, on_deadline, &expired);
	struct timeval tv = {limit_ms / 1000, (limit_ms % 1000) * 1000};
	evtimer_add(t, &tv);
	while (!pred() && !expired)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return pred();
}

static int want_done;
static bool n_done(void)
{
	int n = 0;
	for (int i = 0; i < RESULTS_MAX; i++)
		n += results[i].done;
	return n >= want_done;
}
static size_t want_held;
static bool n_held(void)
{
	return nheld >= want_held;
}

static int setup(void **state)
{
	memset(results, 0, sizeof results);
	done_order[0] = order[0] = '\0';
	nheld = 0;
	concurrent_max = 0;
	server_conns = 0;
	called_in_send = false;
	return 0;
}

static void test_keepalive_reuse(void **state)
{
	struct http *h = http_new(base, NULL);
	assert_non_null(h);
	for (int i = 0; i < 5; i++) {
		assert_non_null(send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, i));
		want_done = i + 1;
		assert_true(run_until(n_done, 5000));
		assert_int_equal(results[i].code, CURLE_OK);
		assert_int_equal(results[i].status, 200);
		assert_string_equal(results[i].body, "xxxxx");
	}
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.connections_opened, 1);
	assert_int_equal(server_conns, 1);
	assert_int_equal(st.sent, 5);
	assert_int_equal(st.completed, 5);
	assert_false(called_in_send);
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
		    ntohs(a.sin_port) == port)
			fionread_client++;
		len = sizeof a;
		if (getsockname(fd, (struct sockaddr *)&a, &len) == 0 && a.sin_family == AF_INET &&
		    ntohs(a.sin_port) == port)
			fionread_server++;
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/* A plain connection reads its answers with one recv each, without the
 * FIONREAD the bufferevent would ask first (the server, an evhttp, still
 * does: the count works). */
static void test_plain_reads_without_fionread(void **state)
{
	struct http *h = http_new(base, NULL);
	assert_non_null(h);
	fionread_client = fionread_server = 0;
	for (int i = 0; i < 5; i++) {
		assert_non_null(send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, i));
		want_done = i + 1;
		assert_true(run_until(n_done, 5000));
		assert_int_equal(results[i].code, CURLE_OK);
		assert_int_equal(results[i].status, 200);
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
	struct http *h = http_new(base, NULL);
	/* > 1 MB: curl would add "Expect: 100-continue" if allowed to */
	size_t len = 1100000;
	char *body = malloc(len);
	memset(body, 'b', len);
	struct http_header hd[] = {
		{"Host", "example.test"}, {"X-Amz-Target", "T.Op"}, {"X-Empty", ""}};
	assert_non_null(send_one(h, "POST", "/x", hd, 3, body, len, 0, 0));
	want_done = 1;
	assert_true(run_until(n_done, 5000));
	free(body);
	assert_int_equal(results[0].code, CURLE_OK);
	assert_string_equal(last_method, "POST");
	assert_int_equal(last_body_len, len);
	assert_non_null(strstr(last_headers, "host: example.test\n"));
	assert_non_null(strstr(last_headers, "x-amz-target: T.Op\n"));
	assert_non_null(strstr(last_headers, "x-empty: \n"));
	assert_non_null(strstr(last_headers, "content-length: 1100000\n"));
	static const char *const absent[] = {"expect:",	      "accept:",     "accept-encoding:",
					     "content-type:", "user-agent:", "transfer-encoding:"};
	for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
		if (strstr(last_headers, absent[i]))
			fail_msg("curl sent %s in\n%s", absent[i], last_headers);
	assert_string_equal(results[0].crc32, "1234567890");
	assert_true(strlen(results[0].date) > 20); /* "Sun, 29 Nov 2026 ..." */
	assert_non_null(strstr(results[0].date, "GMT"));

	/* IMDS-style PUT without a body, and a GET */
	struct http_header ttl[] = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}};
	assert_non_null(send_one(h, "PUT", "/x", ttl, 1, NULL, 0, 0, 1));
	want_done = 2;
	assert_true(run_until(n_done, 5000));
	assert_string_equal(last_method, "PUT");
	assert_non_null(strstr(last_headers, "x-aws-ec2-metadata-token-ttl-seconds: 21600\n"));
	assert_non_null(strstr(last_headers, "content-length: 0\n"));
	http_free(h);
}

static void test_queue_beyond_max_active(void **state)
{
	struct http_options o = {.max_active = 2, .max_queued = 3};
	struct http *h = http_new(base, &o);
	char path[32];
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof path, "/hold?n=%d", i);
		assert_non_null(send_one(h, "GET", path, NULL, 0, NULL, 0, 0, i));
	}
	/* the queue holds 3: a sixth is refused, without a callback */
	assert_null(send_one(h, "GET", "/hold?n=9", NULL, 0, NULL, 0, 0, 9));
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.active, 2);
	assert_int_equal(st.queued, 3);
	want_held = 2;
	assert_true(run_until(n_held, 5000));
	/* nothing more reaches the server while two are held */
	want_done = 1;
	assert_false(run_until(n_done, 300));
	assert_int_equal(nheld, 2);
	int done = 0;
	while (done < 5) {
		size_t expect = 5 - done < 2 ? 5 - done : 2;
		assert_int_equal(nheld, expect);
		release_held();
		done += (int)expect;
		want_done = done;
		assert_true(run_until(n_done, 5000));
		want_held = 5 - done < 2 ? 5 - done : 2;
		if (want_held)
			assert_true(run_until(n_held, 5000));
	}
	assert_int_equal(concurrent_max, 2);
	assert_string_equal(order, "01234"); /* FIFO */
	assert_false(results[9].done);
	http_stats(h, &st);
	assert_int_equal(st.active, 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.completed, 5);
	http_free(h);
}

static void test_timeouts(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = http_new(base, &o);
	/* active: the server never answers */
	assert_non_null(send_one(h, "GET", "/hold?n=0", NULL, 0, NULL, 0, 300, 0));
	/* queued behind it for longer than its own timeout */
	assert_non_null(send_one(h, "GET", "/hold?n=1", NULL, 0, NULL, 0, 100, 1));
	want_done = 1;
	assert_true(run_until(n_done, 5000));
	assert_true(results[1].done); /* the queued one gives up first */
	assert_false(results[0].done);
	assert_int_equal(results[1].code, CURLE_OPERATION_TIMEDOUT);
	assert_non_null(strstr(results[1].error, "queue"));
	want_done = 2;
	assert_true(run_until(n_done, 5000));
	assert_int_equal(results[0].code, CURLE_OPERATION_TIMEDOUT);
	assert_int_equal(results[0].status, 0);
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.failed, 2);
	release_held();
	http_free(h);
}

static void test_body_limit(void **state)
{
	struct http *h = http_new(base, NULL);
	assert_non_null(send_one(h, "GET", "/big", NULL, 0, NULL, 0, 0, 0));
	assert_non_null(send_one(h, "GET", "/bigchunked", NULL, 0, NULL, 0, 0, 1));
	assert_non_null(send_one(h, "GET", "/exact", NULL, 0, NULL, 0, 0, 2));
	want_done = 3;
	assert_true(run_until(n_done, 10000));
	assert_int_equal(results[0].code, CURLE_FILESIZE_EXCEEDED);
	assert_int_equal(results[1].code, CURLE_FILESIZE_EXCEEDED);
	assert_int_equal(results[2].code, CURLE_OK);
	assert_int_equal(results[2].body_len, HTTP_BODY_MAX);
	http_free(h);
}

static struct http *cancel_h;
static struct http_req *cancel_victim;
static void on_done_cancel_other(void *arg, const struct http_response *res)
{
	on_done(arg, res);
	http_cancel(cancel_h, cancel_victim);
}

static void test_cancel(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = cancel_h = http_new(base, &o);
	struct http_req *a = send_one(h, "GET", "/hold?n=0", NULL, 0, NULL, 0, 0, 0);
	struct http_req *b = send_one(h, "GET", "/hold?n=1", NULL, 0, NULL, 0, 0, 1);
	struct http_req *c = send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	http_cancel(h, b); /* queued */
	want_held = 1;
	assert_true(run_until(n_held, 5000));
	http_cancel(h, a); /* active: c starts in its place */
	want_done = 1;
	assert_true(run_until(n_done, 5000));
	assert_true(results[2].done);
	assert_false(results[0].done || results[1].done);
	assert_string_equal(order, "0");

	/* cancel from inside another request's callback */
	struct http_options o2 = {.max_active = 4};
	struct http *h2 = cancel_h = http_new(base, &o2);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
	struct http_request rq = {.method = "GET", .url = url};
	assert_non_null(http_send(h2, &rq, on_done_cancel_other, &results[3]));
	cancel_victim = send_one(h2, "GET", "/hold?n=4", NULL, 0, NULL, 0, 0, 4);
	want_done = 2;
	assert_true(run_until(n_done, 5000));
	assert_false(results[4].done);
	assert_false(run_until(n_done, 200) && results[4].done);
	release_held();
	/* http_free with requests in flight: no callbacks */
	assert_non_null(send_one(h, "GET", "/hold?n=5", NULL, 0, NULL, 0, 0, 5));
	assert_non_null(send_one(h, "GET", "/hold?n=6", NULL, 0, NULL, 0, 0, 6));
	http_free(h);
	http_free(h2);
	assert_false(run_until(n_done, 200) && (results[5].done || results[6].done));
	assert_false(results[5].done || results[6].done);
	release_held();
}

static struct http_req *self_req;
static void on_done_cancel_self(void *arg, const struct http_response *res)
{
	on_done(arg, res);
	http_cancel(cancel_h, self_req); /* its own request: a no-op */
}

static void test_cancel_self_and_proxy_env(void **state)
{
	struct http *h = cancel_h = http_new(base, NULL);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
	struct http_request rq = {.method = "GET", .url = url};
	self_req = http_send(h, &rq, on_done_cancel_self, &results[0]);
	assert_non_null(self_req);
	assert_non_null(send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, 1));
	want_done = 2;
	assert_true(run_until(n_done, 5000));
	assert_int_equal(results[0].code, CURLE_OK);
	assert_int_equal(results[1].code, CURLE_OK);

	/* a proxy from the environment (refusing connections) is used, unless
	 * the request says no_proxy */
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	assert_non_null(send_one(h, "GET", "/x", NULL, 0, NULL, 0, 0, 2));
	rq.no_proxy = true;
	assert_non_null(http_send(h, &rq, on_done, &results[3]));
	want_done = 4;
	assert_true(run_until(n_done, 5000));
	unsetenv("http_proxy");
	assert_int_equal(results[2].code, CURLE_COULDNT_CONNECT);
	assert_int_equal(results[3].code, CURLE_OK);
	assert_int_equal(results[3].status, 200);
	http_free(h);
}

/* A connect that never completes: a listener whose backlog is full drops
 * further SYNs, so only the connect timeout ends the request. */
static int64_t elapsed_last;
static void on_done_elapsed(void *arg, const struct http_response *res)
{
	elapsed_last = res->elapsed_us;
	on_done(arg, res);
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
	struct http *h = http_new(base, NULL);
	struct http_request rq = {
		.method = "GET", .url = url, .connect_timeout_ms = 300, .timeout_ms = 5000};
	assert_non_null(http_send(h, &rq, on_done_elapsed, &results[0]));
	want_done = 1;
	assert_true(run_until(n_done, 6000));
	assert_int_equal(results[0].code, CURLE_OPERATION_TIMEDOUT);
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
	struct evhttp *tls = evhttp_new(base);
	evhttp_set_bevcb(tls, on_tls_conn, NULL);
	evhttp_set_gencb(tls, on_request, NULL);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(tls, "127.0.0.1", 0);
	assert_non_null(bs);
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &sl);
	char url[64];
	snprintf(url, sizeof url, "https://127.0.0.1:%d/x", ntohs(sin.sin_port));
	struct http_request rq = {.method = "GET", .url = url};

	struct http *strict = http_new(base, NULL); /* the default: verify */
	struct http_options with_ca = {.ca_file = cert};
	struct http *trusting = http_new(base, &with_ca);
	struct http_options insecure = {.insecure = true};
	struct http *lax = http_new(base, &insecure);
	assert_non_null(http_send(strict, &rq, on_done, &results[0]));
	assert_non_null(http_send(trusting, &rq, on_done, &results[1]));
	assert_non_null(http_send(lax, &rq, on_done, &results[2]));
	want_done = 3;
	assert_true(run_until(n_done, 10000));
	assert_int_equal(results[0].code, CURLE_PEER_FAILED_VERIFICATION);
	assert_int_equal(results[1].code, CURLE_OK);
	assert_string_equal(results[1].body, "xxxxx");
	assert_int_equal(results[2].code, CURLE_OK);
	http_free(strict);
	http_free(trusting);
	http_free(lax);
	evhttp_free(tls);
	SSL_CTX_free(tls_ctx);
	unlink(cert);
}

static void on_done_free(void *arg, const struct http_response *res)
{
	on_done(arg, res);
	http_free(cancel_h); /* from inside its own callback */
}

static void test_free_inside_callback_and_early_errors(void **state)
{
	struct http *h = cancel_h = http_new(base, NULL);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
	struct http_request rq = {.method = "GET", .url = url};
	assert_non_null(http_send(h, &rq, on_done_free, &results[0]));
	assert_non_null(send_one(h, "GET", "/hold?n=1", NULL, 0, NULL, 0, 0, 1));
	want_done = 1;
	assert_true(run_until(n_done, 5000));
	assert_false(run_until(n_done, 200) && results[1].done);
	release_held();

	/* errors curl finds are reported later, from the loop */
	h = http_new(base, NULL);
	struct http_request bad = {.method = "GET", .url = "gopher://127.0.0.1/"};
	in_send = true;
	assert_non_null(http_send(h, &bad, on_done, &results[2]));
	struct http_request refused = {.method = "GET", .url = "http://127.0.0.1:1/"};
	assert_non_null(http_send(h, &refused, on_done, &results[3]));
	in_send = false;
	assert_false(results[2].done || results[3].done);
	want_done = 3;
	assert_true(run_until(n_done, 5000));
	assert_int_equal(results[2].code, CURLE_UNSUPPORTED_PROTOCOL);
	assert_int_equal(results[3].code, CURLE_COULDNT_CONNECT);
	assert_true(strlen(results[3].error) > 0);
	assert_false(called_in_send);
	http_free(h);
}

/* One GET of /hold?n=idx with priority prio, its result in results[idx]. */
static struct http_req *send_prio(struct http *h, enum http_priority prio, int idx)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=%d", port, idx);
	struct http_request req = {.method = "GET", .url = url, .priority = prio};
	return http_send(h, &req, on_done, &results[idx]);
}

/* Serves the held requests one at a time until `total` are done. */
static void serve_one_by_one(int total)
{
	for (int done = 0; done < total;) {
		want_held = 1;
		assert_true(run_until(n_held, 5000));
		assert_int_equal(nheld, 1); /* max_active 1 */
		release_held();
		want_done = ++done;
		assert_true(run_until(n_done, 5000));
	}
}

/* Renewals and releases (urgent) start before acquires and polls queued
 * earlier; within a priority, FIFO. */
static void test_urgent_before_normal(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = http_new(base, &o);
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 0)); /* takes the slot */
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 1));
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 2));
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 3));
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 4));
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.active, 1);
	assert_int_equal(st.queued, 4);
	assert_int_equal(st.queued_urgent, 2);
	serve_one_by_one(5);
	assert_string_equal(order, "03412");
	http_stats(h, &st);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.queued_urgent, 0);
	assert_int_equal(st.started, 5);
	http_free(h);
}

/* Past max_queued_normal waiting requests a normal one is refused at once
 * (back-pressure), an urgent one only at max_queued; the queue wait is
 * counted. */
static void test_normal_refused_early(void **state)
{
	struct http_options o = {.max_active = 1, .max_queued = 3, .max_queued_normal = 1};
	struct http *h = http_new(base, &o);
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 0));
	assert_non_null(send_prio(h, HTTP_PRIO_NORMAL, 1));
	assert_null(send_prio(h, HTTP_PRIO_NORMAL, 2)); /* one normal waits already */
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 3));
	assert_non_null(send_prio(h, HTTP_PRIO_URGENT, 4));
	assert_null(send_prio(h, HTTP_PRIO_URGENT, 5)); /* max_queued */
	assert_null(send_prio(h, HTTP_PRIO_NORMAL, 6));
	struct http_stats st;
	http_stats(h, &st);
	assert_int_equal(st.refused, 3);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.max_active, 1);
	assert_int_equal(st.started, 1);
	/* the queued wait while the first is held */
	want_held = 1;
	assert_true(run_until(n_held, 5000));
	want_done = 1;
	assert_false(run_until(n_done, 100));
	serve_one_by_one(4);
	assert_string_equal(order, "0341");
	assert_false(results[2].done || results[5].done || results[6].done);
	http_stats(h, &st);
	assert_int_equal(st.started, 4);
	assert_true(st.wait_max_us >= 100000); /* n=3 waited for n=0's 100 ms at least */
	assert_true(st.wait_sum_us >= (uint64_t)st.wait_max_us);
	http_free(h);
}

/* With a queue timeout, the wait for a slot is bounded by it, and
 * timeout_ms counts from the start of the transfer: a request queued
 * longer than its timeout_ms still runs. (Expiry reads the queue from its
 * head: the short one is first in line here.) */
static void test_queue_timeout(void **state)
{
	struct http_options o = {.max_active = 1};
	struct http *h = http_new(base, &o);
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=0", port);
	struct http_request first = {.method = "GET", .url = url};
	assert_non_null(http_send(h, &first, on_done, &results[0]));
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=2", port);
	struct http_request gives_up = {
		.method = "GET", .url = url, .timeout_ms = 5000, .queue_timeout_ms = 150};
	assert_non_null(http_send(h, &gives_up, on_done, &results[2]));
	snprintf(url, sizeof url, "http://127.0.0.1:%d/hold?n=1", port);
	struct http_request waits = {
		.method = "GET", .url = url, .timeout_ms = 100, .queue_timeout_ms = 2000};
	assert_non_null(http_send(h, &waits, on_done, &results[1]));
	want_done = 1;
	assert_true(run_until(n_done, 5000)); /* n=2, after its 150 ms */
	assert_true(results[2].done);
	assert_int_equal(results[2].code, CURLE_OPERATION_TIMEDOUT);
	assert_false(run_until(n_done, 300) && results[1].done); /* 450 ms > its 100 */
	serve_one_by_one(2);
	assert_false(results[1].done && results[1].code != CURLE_OK);
	want_done = 3;
	assert_true(run_until(n_done, 5000));
	assert_int_equal(results[1].code, CURLE_OK);
	http_free(h);
}

int main(void)
{
	base = event_base_new();
	srv = evhttp_new(base);
	evhttp_set_bevcb(srv, on_conn, NULL);
	evhttp_set_gencb(srv, on_request, NULL);
	evhttp_set_allowed_methods(srv, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(srv, "127.0.0.1", 0);
	if (!bs) {
		fprintf(stderr, "cannot bind\n");
		return 1;
	}
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &sl);
	port = ntohs(sin.sin_port);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_keepalive_reuse, setup),
		cmocka_unit_test_setup(test_plain_reads_without_fionread, setup),
		cmocka_unit_test_setup(test_headers_sent_and_captured, setup),
		cmocka_unit_test_setup(test_queue_beyond_max_active, setup),
		cmocka_unit_test_setup(test_urgent_before_normal, setup),
		cmocka_unit_test_setup(test_normal_refused_early, setup),
		cmocka_unit_test_setup(test_queue_timeout, setup),
		cmocka_unit_test_setup(test_timeouts, setup),
		cmocka_unit_test_setup(test_body_limit, setup),
		cmocka_unit_test_setup(test_cancel, setup),
		cmocka_unit_test_setup(test_free_inside_callback_and_early_errors, setup),
		cmocka_unit_test_setup(test_cancel_self_and_proxy_env, setup),
		cmocka_unit_test_setup(test_https_verification, setup),
		cmocka_unit_test_setup(test_connect_timeout, setup),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	evhttp_free(srv);
	event_base_free(base);
	return rc;
}
