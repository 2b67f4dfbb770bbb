/*
 * http_direct: leasegate's own HTTP/1.1 keep-alive client on libevent
 * bufferevents (socket, or OpenSSL for https://), the transport of every
 * request without a proxy (see http_int.h).
 *
 * Why not libcurl for these: per request, curl cost 15-20 us of CPU in the
 * process (URL parsing, connection cache, two poll() calls, epoll changes)
 * where this client costs a few; DynamoDB requests are small, one at a time
 * per connection, and need none of curl's protocols.
 *
 * A connection (struct hd_conn) carries one request at a time; finished
 * with a complete, reusable answer it waits on the idle list of the pool,
 * its read event armed so that a close by the server frees it. A request
 * whose reused connection dies before any byte of an answer is retried
 * once on a fresh one (the server may close an idle connection while the
 * request is on its way, as curl also assumes). Each connection has one
 * timer: the connect timeout, then the request's, then the idle age.
 *
 * It is not: a general HTTP client (no redirects, proxies, pipelining,
 * compression, HTTP/2); http_direct_takes() sends anything else to curl.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "lib/http/http_int.h"
#include "lib/http/http_parse.h"

#define HD_HOST_MAX    255
#define HD_IDLE_MAX_MS 118000 /* an idle connection's age, curl's default */

enum conn_state {
	C_NEW,	      /* waits for its first timer run (never inside http_send) */
	C_RESOLVING,  /* evdns */
	C_CONNECTING, /* TCP, then TLS */
	C_BUSY,	      /* request written, answer being read */
	C_IDLE,	      /* on the pool's idle list */
};

struct hd_conn {
	struct hd_pool *pool;
	struct hd_conn *prev, *next; /* pool->idle or pool->busy */
	enum conn_state state;
	bool tls;
	char host[HD_HOST_MAX + 1];
	unsigned port;
	struct bufferevent *bev;
	struct event *rd; /* a connected plain socket's reads (plain_reads) */
	struct event *timer;
	struct evdns_getaddrinfo_request *dns;
	struct http_req *req;
	bool reused;	     /* served a request before this one */
	int64_t deadline_us; /* of the request */
	size_t got;	     /* bytes of the answer read */
	struct http_parser parser;
};

struct conn_list {
	struct hd_conn *head;
	unsigned count;
};

struct hd_pool {
	struct http *h;
	SSL_CTX *ssl; /* on the first https:// request */
	bool ssl_failed;
	struct evdns_base *dns; /* on the first host name */
	struct conn_list idle, busy;
};

/* ---- lists ---- */

static void conn_link(struct conn_list *l, struct hd_conn *c)
{
	c->prev = NULL;
	c->next = l->head;
	if (l->head)
		l->head->prev = c;
	l->head = c;
	l->count++;
}

static void conn_unlink(struct conn_list *l, struct hd_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	l->count--;
}

static struct conn_list *list_of_conn(struct hd_conn *c)
{
	return c->state == C_IDLE ? &c->pool->idle : &c->pool->busy;
}

/* ---- URLs ---- */

struct target {
	bool tls;
	char host[HD_HOST_MAX + 1]; /* without brackets */
	unsigned port;
	const char *path; /* into the URL, "" means "/" */
	bool ipv6;
};

/* "http[s]://host[:port][/path]" with a plain host; false for anything
 * else (userinfo, fragments, odd ports), which curl then handles. */
static bool parse_target(const char *url, struct target *t)
{
	const char *p;
	if (strncasecmp(url, "http://", 7) == 0) {
		t->tls = false;
		p = url + 7;
	} else if (strncasecmp(url, "https://", 8) == 0) {
		t->tls = true;
		p = url + 8;
	} else {
		return false;
	}
	size_t hl;
	const char *after;
	t->ipv6 = *p == '[';
	if (t->ipv6) {
		const char *close = strchr(p, ']');
		if (!close)
			return false;
		hl = (size_t)(close - p - 1);
		p++;
		after = close + 1;
	} else {
		hl = strcspn(p, ":/?#@ \t\r\n\\");
		after = p + hl;
	}
	if (hl == 0 || hl > HD_HOST_MAX)
		return false;
	for (size_t i = 0; i < hl; i++)
		if (!isalnum((unsigned char)p[i]) && !strchr(t->ipv6 ? ":." : "-._", p[i]))
			return false;
	memcpy(t->host, p, hl);
	t->host[hl] = '\0';
	t->port = t->tls ? 443 : 80;
	if (*after == ':') {
		char *end;
		unsigned long v = strtoul(after + 1, &end, 10);
		if (end == after + 1 || v == 0 || v > 65535)
			return false;
		t->port = (unsigned)v;
		after = end;
	}
	if (*after && *after != '/' && *after != '?')
		return false;
	if (strpbrk(after, "# \t\r\n"))
		return false;
	t->path = after;
	return true;
}

static bool env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

bool http_direct_takes(const struct http_req *r)
{
	struct target t;
	if (!parse_target(r->url, &t))
		return false;
	if (r->no_proxy)
		return true;
	/* the variables curl reads (it ignores HTTP_PROXY in upper case);
	 * with any of them set, curl decides, no_proxy lists included */
	return !env_set(t.tls ? "https_proxy" : "http_proxy") &&
	       !(t.tls && env_set("HTTPS_PROXY")) && !env_set("all_proxy") && !env_set("ALL_PROXY");
}

/* ---- connections ---- */

static bool write_request(struct hd_conn *c, struct http_req *r, const struct target *t, bool now);
static void on_read(struct bufferevent *bev, void *arg);
static void on_write(struct bufferevent *bev, void *arg);
static void on_event(struct bufferevent *bev, short what, void *arg);
static void on_timer(evutil_socket_t fd, short what, void *arg);

static void conn_free(struct hd_conn *c)
{
	conn_unlink(list_of_conn(c), c);
	if (c->dns)
		evdns_getaddrinfo_cancel(c->dns); /* its callback sees c->dns set: returns */
	if (c->rd)
		event_free(c->rd);
	if (c->bev)
		bufferevent_free(c->bev);
	if (c->timer)
		event_free(c->timer);
	free(c);
}

static void arm(struct hd_conn *c, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	evtimer_add(c->timer, &tv);
}

/* Fails c's request with a message into its errbuf, and frees c. */
static void fail(struct hd_conn *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct hd_conn *c, int code, const char *fmt, ...)
{
	struct http_req *r = c->req;
	struct http *h = c->pool->h;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->errbuf, sizeof r->errbuf, fmt, ap);
	va_end(ap);
	c->req = NULL;
	r->conn = NULL;
	conn_free(c);
	http_finished(h, r, code, NULL);
}

static bool ssl_ready(struct hd_pool *p, int *code, const char **msg)
{
	if (p->ssl)
		return true;
	*code = CURLE_SSL_CONNECT_ERROR;
	*msg = "TLS initialisation failed";
	if (p->ssl_failed)
		return false;
	p->ssl = SSL_CTX_new(TLS_client_method());
	if (!p->ssl) {
		p->ssl_failed = true;
		return false;
	}
	const struct http_options *o = &p->h->opts;
	SSL_CTX_set_verify(p->ssl, o->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
	bool ok = o->ca_file ? SSL_CTX_load_verify_locations(p->ssl, o->ca_file, NULL) == 1
			     : SSL_CTX_set_default_verify_paths(p->ssl) == 1;
	if (!ok) {
		SSL_CTX_free(p->ssl);
		p->ssl = NULL;
		*code = CURLE_SSL_CACERT_BADFILE;
		*msg = "the CA certificates could not be loaded";
		return false;
	}
	return true;
}

/* A bufferevent for c, TLS set up for its host (SNI, name or address
 * checked against the certificate unless insecure). */
static bool make_bev(struct hd_conn *c, bool literal)
{
	struct event_base *base = c->pool->h->base;
	int opts = BEV_OPT_CLOSE_ON_FREE;
	if (!c->tls) {
		c->bev = bufferevent_socket_new(base, -1, opts);
		return c->bev != NULL;
	}
	SSL *ssl = SSL_new(c->pool->ssl);
	if (!ssl)
		return false;
	bool ok = true;
	if (!c->pool->h->opts.insecure) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
		ok = literal ? X509_VERIFY_PARAM_set1_ip_asc(vp, c->host) == 1
			     : SSL_set1_host(ssl, c->host) == 1;
	}
	if (ok && !literal)
		ok = SSL_set_tlsext_host_name(ssl, c->host) == 1;
	if (ok)
		c->bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
							opts);
	if (!c->bev) {
		SSL_free(ssl); /* on success the bufferevent owns it */
		return false;
	}
	/* a close without close_notify ends a body read to the close */
	bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
	return true;
}

static void connect_to(struct hd_conn *c, const struct sockaddr *sa, int len)
{
	bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	c->state = C_CONNECTING;
	if (bufferevent_socket_connect(c->bev, sa, len) != 0) {
		fail(c, CURLE_COULDNT_CONNECT, "Failed to connect to %s port %u: %s", c->host,
		     c->port, evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		return;
	}
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
}

static void on_resolved(int err, struct evutil_addrinfo *ai, void *arg)
{
	struct hd_conn *c = arg;
	if (err == EVUTIL_EAI_CANCEL)
		return; /* c is being freed */
	http_enter(c->pool->h);
	struct http *h = c->pool->h;
	c->dns = NULL;
	if (err || !ai)
		fail(c, CURLE_COULDNT_RESOLVE_HOST, "Could not resolve host: %s", c->host);
	else
		connect_to(c, ai->ai_addr, (int)ai->ai_addrlen);
	if (ai)
		evutil_freeaddrinfo(ai);
	http_leave(h);
}

/* The first run of a new connection's timer: resolve or connect. */
static void conn_begin(struct hd_conn *c)
{
	struct http_req *r = c->req;
	int64_t left_ms = (c->deadline_us - http_mono_us()) / 1000;
	int64_t cto = http_effective(r->connect_timeout_ms, c->pool->h->opts.connect_timeout_ms);
	arm(c, cto < left_ms ? cto : left_ms);
	struct sockaddr_storage ss;
	int len = sizeof ss;
	char lit[HD_HOST_MAX + 16];
	snprintf(lit, sizeof lit, strchr(c->host, ':') ? "[%s]:%u" : "%s:%u", c->host, c->port);
	bool literal = evutil_parse_sockaddr_port(lit, (struct sockaddr *)&ss, &len) == 0;
	struct target t;
	if (!make_bev(c, literal) || !parse_target(r->url, &t) || !write_request(c, r, &t, false)) {
		fail(c, CURLE_OUT_OF_MEMORY, "out of memory");
		return;
	}
	if (literal) {
		connect_to(c, (struct sockaddr *)&ss, len);
		return;
	}
	struct hd_pool *p = c->pool;
	if (!p->dns)
		p->dns = evdns_base_new(p->h->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
							    EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (!p->dns) {
		fail(c, CURLE_COULDNT_RESOLVE_HOST, "Could not resolve host: %s (no resolver)",
		     c->host);
		return;
	}
	struct evutil_addrinfo hints = {.ai_family = AF_UNSPEC,
					.ai_socktype = SOCK_STREAM,
					.ai_protocol = IPPROTO_TCP,
					.ai_flags = EVUTIL_AI_ADDRCONFIG};
	char port[8];
	snprintf(port, sizeof port, "%u", c->port);
	c->state = C_RESOLVING;
	/* NULL: answered at once, inside this call, and c may be gone */
	struct evdns_getaddrinfo_request *q =
		evdns_getaddrinfo(p->dns, c->host, port, &hints, on_resolved, c);
	if (q)
		c->dns = q;
}

/* ---- writing a request ---- */

/* The request is staged in a buffer on the stack and added to the output
 * in one piece (a large body goes on its own): each evbuffer_add costs
 * more than copying a header line. */
struct wbuf {
	struct evbuffer *out;
	bool ok;
	size_t len;
	char buf[4096];
};

static void flush(struct wbuf *w)
{
	if (w->len)
		w->ok &= evbuffer_add(w->out, w->buf, w->len) == 0;
	w->len = 0;
}

static void put(struct wbuf *w, const char *s, size_t n)
{
	if (n > sizeof w->buf - w->len) {
		flush(w);
		if (n > sizeof w->buf) {
			w->ok &= evbuffer_add(w->out, s, n) == 0;
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void puts_(struct wbuf *w, const char *s)
{
	put(w, s, strlen(s));
}

/* A plain connection's request, when it fits the staging buffer and
 * nothing waits before it, goes to the socket at once: through the
 * bufferevent's output it would cost a loop turn and two epoll_ctl calls
 * (the write event added, then removed). Whatever the socket does not take
 * (or an error, which the bufferevent's own write then meets and reports
 * as before) goes to the output as usual. */
static void send_now(struct wbuf *w, evutil_socket_t fd)
{
	if (!w->ok || w->len == 0 || fd < 0 || evbuffer_get_length(w->out) != 0)
		return;
	ssize_t n = send(fd, w->buf, w->len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n <= 0)
		return;
	memmove(w->buf, w->buf + n, w->len - (size_t)n);
	w->len -= (size_t)n;
}

/* Writes r as curl would have: the request line, Host unless given, the
 * caller's lines, Content-Length for anything but GET, the body. now: c
 * is a connected plain socket, which send_now may write to at once. */
static bool write_request(struct hd_conn *c, struct http_req *r, const struct target *t, bool now)
{
	struct wbuf w = {.out = bufferevent_get_output(c->bev), .ok = true};
	puts_(&w, r->method);
	put(&w, " ", 1);
	if (*t->path != '/')
		put(&w, "/", 1);
	puts_(&w, t->path);
	put(&w, " HTTP/1.1\r\n", 11);
	if (!r->has_host) {
		/* the port only when it is not the scheme's, as curl writes it */
		char host[HD_HOST_MAX + 32];
		int n = snprintf(host, sizeof host, t->ipv6 ? "Host: [%s]" : "Host: %s", t->host);
		if (t->port != (t->tls ? 443u : 80u))
			n += snprintf(host + n, sizeof host - (size_t)n, ":%u", t->port);
		put(&w, host, (size_t)n);
		put(&w, "\r\n", 2);
	}
	struct curl_slist *l = r->hdrs;
	for (size_t i = 0; i < r->nuser && l; i++, l = l->next) {
		size_t n = strlen(l->data);
		if (!strchr(l->data, ':') && n && l->data[n - 1] == ';') {
			put(&w, l->data, n - 1); /* "Name;": the empty value */
			put(&w, ":", 1);
		} else {
			put(&w, l->data, n);
		}
		put(&w, "\r\n", 2);
	}
	if (strcmp(r->method, "GET") != 0) {
		char cl[40];
		int n = snprintf(cl, sizeof cl, "Content-Length: %zu\r\n\r\n", r->body_len);
		put(&w, cl, (size_t)n);
		if (r->body_len)
			put(&w, r->body, r->body_len);
	} else {
		put(&w, "\r\n", 2);
	}
	if (now)
		send_now(&w, bufferevent_getfd(c->bev));
	flush(&w);
	return w.ok;
}

/* ---- reading the answer ---- */

/* The request ended well: c goes idle (or is freed), then the callback. */
static void complete(struct hd_conn *c)
{
	struct hd_pool *p = c->pool;
	struct http_req *r = c->req;
	bool keep = http_parser_reusable(&c->parser) && !p->h->dead &&
		    evbuffer_get_length(bufferevent_get_input(c->bev)) == 0 &&
		    p->idle.count < p->h->opts.max_active;
	c->req = NULL;
	r->conn = NULL;
	if (keep) {
		conn_unlink(&p->busy, c);
		c->state = C_IDLE;
		conn_link(&p->idle, c);
		arm(c, HD_IDLE_MAX_MS);
	} else {
		conn_free(c);
	}
	http_finished(p->h, r, CURLE_OK, NULL);
}

/* Parses what arrived, as far as it goes. Returns true when that ended
 * the request (c may be gone then). */
static bool drive(struct hd_conn *c)
{
	switch (http_parser_feed(&c->parser, bufferevent_get_input(c->bev))) {
	case HTTP_PARSE_MORE:
		return false;
	case HTTP_PARSE_DONE:
		complete(c);
		return true;
	case HTTP_PARSE_BAD:
		fail(c, CURLE_WEIRD_SERVER_REPLY, "malformed answer from %s port %u", c->host,
		     c->port);
		return true;
	case HTTP_PARSE_SINK:
		fail(c, c->req->too_big ? CURLE_FILESIZE_EXCEEDED : CURLE_OUT_OF_MEMORY, "%s",
		     c->req->too_big ? "response body larger than HTTP_BODY_MAX" : "out of memory");
		return true;
	}
	return false;
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct hd_conn *c = arg;
	struct http *h = c->pool->h;
	if (c->state != C_BUSY || !c->req) {
		conn_free(c); /* an idle connection the server writes to, or closes */
		return;
	}
	http_enter(h);
	c->got += evbuffer_get_length(bufferevent_get_input(bev));
	(void)drive(c);
	http_leave(h);
}

static void on_write(struct bufferevent *bev, void *arg) {}

/* A connected plain socket's answers are read here, not by the
 * bufferevent, whose every read first asks the kernel how much there is
 * (an ioctl FIONREAD per answer): one recv into a buffer on the stack,
 * added to the bufferevent's input, which the parser reads as before.
 * The end and errors go to on_event as the bufferevent would report them
 * (a level-triggered event: more than the buffer holds is read on the next
 * turn). */
static void on_plain_read(evutil_socket_t fd, short what, void *arg)
{
	struct hd_conn *c = arg;
	char buf[16384];
	ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n > 0 && evbuffer_add(bufferevent_get_input(c->bev), buf, (size_t)n) == 0) {
		on_read(c->bev, c);
		return;
	}
	if (n > 0)
		errno = ENOMEM;
	on_event(c->bev, BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), c);
}

/* Once a plain connection is up, its reads leave the bufferevent (which
 * keeps the writes). Without an event for them, the bufferevent reads on. */
static void plain_reads(struct hd_conn *c)
{
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	c->rd = event_new(c->pool->h->base, fd, EV_READ | EV_PERSIST, on_plain_read, c);
	if (!c->rd)
		return;
	if (bufferevent_disable(c->bev, EV_READ) != 0 || event_add(c->rd, NULL) != 0) {
		event_free(c->rd);
		c->rd = NULL;
		bufferevent_enable(c->bev, EV_READ);
	}
}

/* A fresh connection for r, whose reused one died before any answer. */
static void retry_fresh(struct hd_conn *c)
{
	struct http_req *r = c->req;
	struct http *h = c->pool->h;
	int64_t left_ms = (c->deadline_us - http_mono_us()) / 1000;
	c->req = NULL;
	r->conn = NULL;
	conn_free(c);
	r->retried = true;
	int code;
	const char *msg;
	if (left_ms <= 0 || !http_direct_transport.start(h, r, left_ms, &code, &msg))
		http_finished(h, r, left_ms <= 0 ? CURLE_OPERATION_TIMEDOUT : CURLE_SEND_ERROR,
			      left_ms <= 0 ? "timed out" : "could not open a new connection");
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct hd_conn *c = arg;
	struct http *h = c->pool->h;
	if (!c->req) {
		conn_free(c); /* an idle connection closed */
		return;
	}
	http_enter(h);
	if (what & BEV_EVENT_CONNECTED) {
		c->state = C_BUSY;
		c->req->conns++;
		if (!c->tls)
			plain_reads(c);
		arm(c, (c->deadline_us - http_mono_us() + 999) / 1000);
	} else if (c->state == C_CONNECTING) {
		SSL *ssl = c->tls ? bufferevent_openssl_get_ssl(bev) : NULL;
		long vr = ssl && !h->opts.insecure ? SSL_get_verify_result(ssl) : X509_V_OK;
		unsigned long tls_err = c->tls ? bufferevent_get_openssl_error(bev) : 0;
		int serr = EVUTIL_SOCKET_ERROR();
		if (vr != X509_V_OK)
			fail(c, CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: %s",
			     X509_verify_cert_error_string(vr));
		else if (tls_err)
			fail(c, CURLE_SSL_CONNECT_ERROR, "TLS connect error: %s",
			     ERR_reason_error_string(tls_err) ? ERR_reason_error_string(tls_err)
							      : "unknown");
		else
			fail(c, CURLE_COULDNT_CONNECT, "Failed to connect to %s port %u: %s",
			     c->host, c->port,
			     serr ? evutil_socket_error_to_string(serr) : "connection closed");
	} else if ((what & BEV_EVENT_EOF) && http_parser_ends_at_close(&c->parser)) {
		if (!drive(c)) /* anything left, then the end */
			complete(c);
	} else if (c->reused && c->got == 0 && !c->req->retried) {
		retry_fresh(c);
	} else if (c->got == 0 && (what & BEV_EVENT_EOF)) {
		fail(c, CURLE_GOT_NOTHING, "Empty reply from server");
	} else if (what & BEV_EVENT_EOF) {
		fail(c, CURLE_PARTIAL_FILE, "connection closed with the answer incomplete");
	} else {
		int serr = EVUTIL_SOCKET_ERROR();
		fail(c, c->got ? CURLE_RECV_ERROR : CURLE_SEND_ERROR, "connection error: %s",
		     serr ? evutil_socket_error_to_string(serr) : "unknown");
	}
	http_leave(h);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct hd_conn *c = arg;
	struct http *h = c->pool->h;
	if (c->state == C_IDLE) {
		conn_free(c); /* too old to trust */
		return;
	}
	http_enter(h);
	if (c->state == C_NEW) {
		conn_begin(c);
	} else {
		int64_t waited = (http_mono_us() - c->req->queued_us) / 1000;
		if (c->state == C_BUSY)
			fail(c, CURLE_OPERATION_TIMEDOUT,
			     "Operation timed out after %lld milliseconds with %zu bytes received",
			     (long long)waited, c->got);
		else
			fail(c, CURLE_OPERATION_TIMEDOUT,
			     "Connection timed out after %lld milliseconds", (long long)waited);
	}
	http_leave(h);
}

/* ---- the transport ---- */

static struct hd_pool *pool_of(struct http *h)
{
	if (!h->direct) {
		h->direct = calloc(1, sizeof *h->direct);
		if (h->direct)
			h->direct->h = h;
	}
	return h->direct;
}

static bool hd_start(struct http *h, struct http_req *r, int64_t timeout_ms, int *code,
		     const char **msg)
{
	struct target t;
	struct hd_pool *p = pool_of(h);
	*code = CURLE_OUT_OF_MEMORY;
	*msg = "out of memory";
	if (!p)
		return false;
	if (!parse_target(r->url, &t)) {
		*code = CURLE_URL_MALFORMAT;
		*msg = "URL not taken by the direct transport";
		return false;
	}
	if (t.tls && !ssl_ready(p, code, msg))
		return false;
	struct hd_conn *c;
	for (c = p->idle.head; c; c = c->next)
		if (c->tls == t.tls && c->port == t.port && strcmp(c->host, t.host) == 0)
			break;
	if (c) {
		conn_unlink(&p->idle, c);
		c->state = C_BUSY;
		c->reused = true;
		conn_link(&p->busy, c);
		evtimer_del(c->timer);
	} else {
		c = calloc(1, sizeof *c);
		if (!c)
			return false;
		c->pool = p;
		c->tls = t.tls;
		c->port = t.port;
		memcpy(c->host, t.host, sizeof c->host);
		c->state = C_NEW;
		conn_link(&p->busy, c);
		c->timer = evtimer_new(h->base, on_timer, c);
		if (!c->timer) {
			conn_free(c);
			return false;
		}
	}
	c->req = r;
	r->conn = c;
	c->deadline_us = http_mono_us() + timeout_ms * 1000;
	c->got = 0;
	http_parser_init(&c->parser, r, strcmp(r->method, "HEAD") == 0);
	if (c->state == C_NEW) {
		event_active(c->timer, EV_TIMEOUT, 0); /* conn_begin, from the loop */
		return true;
	}
	if (!write_request(c, r, &t, !c->tls)) {
		c->req = NULL;
		r->conn = NULL;
		conn_free(c);
		return false;
	}
	arm(c, timeout_ms);
	return true;
}

static void hd_stop(struct http *h, struct http_req *r)
{
	struct hd_conn *c = r->conn;
	if (!c)
		return;
	/* the answer is unread: the connection cannot serve another */
	c->req = NULL;
	r->conn = NULL;
	conn_free(c);
}

const struct http_transport http_direct_transport = {.start = hd_start, .stop = hd_stop};

void http_direct_free(struct hd_pool *p)
{
	if (!p)
		return;
	while (p->busy.head)
		conn_free(p->busy.head);
	while (p->idle.head)
		conn_free(p->idle.head);
	if (p->dns)
		evdns_base_free(p->dns, 0);
	if (p->ssl)
		SSL_CTX_free(p->ssl);
	free(p);
}
