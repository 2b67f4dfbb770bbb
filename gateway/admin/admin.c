/*
 * admin: /healthz, /readyz and /metrics (admin.h), as a front-end of the
 * connection layer: bytes are gathered until the end of the request head,
 * the request line is parsed, one response is written and the connection
 * closes after it. At --admin-maxclients a newcomer takes the place of the
 * oldest connection that has not sent its request, so that connections
 * that hold a slot without asking (a slowloris, a scraper gone wrong)
 * never keep the probes out.
 */
#include "gateway/admin/admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"
#include "gateway/obs/log.h"

#define ADMIN_MAX_HEAD	8192
#define ADMIN_TIMEOUT_S 10
#define METRICS_MAX	(4 << 20) /* bytes of /metrics text */
#define TEXT_PLAIN	"text/plain; charset=utf-8"
#define ADMIN_REFUSAL                                                                              \
	"HTTP/1.1 503 Service Unavailable\r\nContent-Type: " TEXT_PLAIN "\r\n"                     \
	"Content-Length: 49\r\nConnection: close\r\n\r\n"                                          \
	"too many admin connections (--admin-maxclients)\n"
#define ADMIN_EVICTED                                                                              \
	"HTTP/1.1 408 Request Timeout\r\nContent-Type: " TEXT_PLAIN "\r\n"                         \
	"Content-Length: 72\r\nConnection: close\r\n\r\n"                                          \
	"no request yet, and a newer client needed the slot (--admin-maxclients)\n"

struct admin {
	struct conn_proto proto; /* first: a connection's proto is its admin */
	struct srv *srv;	 /* the admin port's own registry */
	struct admin_ops ops;
	int64_t cap; /* --admin-maxclients */
};

/* One admin connection. */
struct aconn {
	struct conn c;
	struct buf head;       /* the request head, read so far */
	struct event *timeout; /* the request must come within ADMIN_TIMEOUT_S */
	bool head_only;	       /* HEAD: the response without its body */
};

static struct admin *admin_of(struct conn *c)
{
	return (struct admin *)c->proto;
}

/* Writes the response and closes the connection once it is sent. */
static void respond(struct aconn *a, int code, const char *reason, const char *type,
		    const char *body, size_t len)
{
	struct buf *out = &a->c.out;
	buf_printf(out,
		   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		   "Connection: close\r\n\r\n",
		   code, reason, type, len);
	if (!a->head_only)
		buf_raw(out, body, len);
	conn_close(&a->c, "answered");
}

static void text(struct aconn *a, int code, const char *reason, const char *body)
{
	respond(a, code, reason, TEXT_PLAIN, body, strlen(body));
}

static void healthz(struct admin *ad, struct aconn *a)
{
	text(a, 200, "OK", "ok\n");
}

static void readyz(struct admin *ad, struct aconn *a)
{
	const char *why = "not ready";
	char body[2048];
	if (ad->ops.ready(ad->ops.arg, &why)) {
		text(a, 200, "OK", "ready\n");
		return;
	}
	snprintf(body, sizeof(body), "not ready: %s\n", why);
	text(a, 503, "Service Unavailable", body);
}

static void metrics(struct admin *ad, struct aconn *a)
{
	struct buf body;
	buf_init(&body, METRICS_MAX);
	ad->ops.metrics(ad->ops.arg, &body);
	if (buf_failed(&body))
		text(a, 500, "Internal Server Error",
		     "metrics past their size limit or out of memory\n");
	else
		respond(a, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body.buf,
			body.len);
	buf_free(&body);
}

static const struct route {
	const char *path;
	void (*fn)(struct admin *ad, struct aconn *a);
} routes[] = {
	{"/healthz", healthz},
	{"/readyz", readyz},
	{"/metrics", metrics},
};

/* Answers the request line "METHOD SP target SP HTTP/x.y" of len bytes. */
static void answer(struct admin *ad, struct aconn *a, const char *line, size_t len)
{
	const char *sp1 = memchr(line, ' ', len);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line)) : NULL;
	if (sp2 == NULL || sp1 == line || sp2 == sp1 + 1 || (size_t)(line + len - (sp2 + 1)) < 5 ||
	    memcmp(sp2 + 1, "HTTP/", 5) != 0) {
		text(a, 400, "Bad Request", "bad request line\n");
		return;
	}
	size_t mlen = (size_t)(sp1 - line);
	a->head_only = mlen == 4 && memcmp(line, "HEAD", 4) == 0;
	if (!a->head_only && !(mlen == 3 && memcmp(line, "GET", 3) == 0)) {
		text(a, 501, "Not Implemented", "only GET and HEAD\n");
		return;
	}
	const char *path = sp1 + 1;
	const char *q = memchr(path, '?', (size_t)(sp2 - path));
	size_t plen = (size_t)((q ? q : sp2) - path);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strlen(routes[i].path) == plen && memcmp(path, routes[i].path, plen) == 0) {
			routes[i].fn(ad, a);
			return;
		}
	}
	text(a, 404, "Not Found", "not found: try /healthz, /readyz or /metrics\n");
}

static enum conn_step a_step(struct conn *c)
{
	struct aconn *a = (struct aconn *)c;
	const char *h = a->head.buf;
	size_t n = a->head.len;
	const char *end = n >= 4 ? memmem(h, n, "\r\n\r\n", 4) : NULL;
	if (end == NULL) {
		if (n < ADMIN_MAX_HEAD)
			return CONN_STEP_IDLE;
		text(a, 431, "Request Header Fields Too Large", "request head over 8 KiB\n");
		return CONN_STEP_STOP;
	}
	const char *eol = memchr(h, '\r', n);
	answer(admin_of(c), a, h, (size_t)(eol - h));
	buf_consume(&a->head, n); /* one request per connection */
	return CONN_STEP_STOP;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct aconn *a = arg;
	conn_close(&a->c, "admin request timed out");
}

/* The oldest connection still waiting for its request (OPEN: an answered
 * one is closing), in accept order. */
static void find_waiting(struct conn *c, void *arg)
{
	struct conn **oldest = arg;
	if (*oldest == NULL && conn_state(c) == CONN_OPEN)
		*oldest = c;
}

/* At the cap, the newcomer (about to be counted) takes the slot of the
 * oldest connection that has sent no whole request: a probe asks at once,
 * so idle connections cannot keep it out. The registry's own limit is one
 * above the cap, to let the newcomer in to do this. */
static void make_room(struct admin *ad)
{
	struct conn *oldest = NULL;
	if ((int64_t)srv_conns(ad->srv) < ad->cap)
		return;
	srv_foreach(ad->srv, &ad->proto, find_waiting, &oldest);
	if (oldest == NULL)
		return; /* all answered, draining: the newcomer is the one over */
	log_msg(LOG_LVL_DEBUG,
		"admin connection %llu %s: no request yet, its slot given to a newer one",
		(unsigned long long)oldest->id, oldest->addr);
	buf_raw(&oldest->out, ADMIN_EVICTED, sizeof(ADMIN_EVICTED) - 1);
	conn_close(oldest, "admin slot given to a newer connection");
}

static bool a_open(struct conn *c)
{
	struct aconn *a = (struct aconn *)c;
	struct timeval tv = {ADMIN_TIMEOUT_S, 0};
	make_room(admin_of(c));
	/* no login here: --auth-timeout is not for the admin port (its own
	 * request timeout is) */
	c->authenticated = true;
	buf_init(&a->head, ADMIN_MAX_HEAD);
	a->timeout = evtimer_new(srv_base(c->srv), on_timeout, a);
	return a->timeout != NULL && event_add(a->timeout, &tv) == 0;
}

static size_t a_room(const struct conn *c)
{
	const struct aconn *a = (const struct aconn *)c;
	return conn_closed(c) ? 0 : a->head.limit - a->head.len;
}

static bool a_feed(struct conn *c, const char *bytes, size_t len)
{
	struct aconn *a = (struct aconn *)c;
	buf_raw(&a->head, bytes, len);
	return !buf_failed(&a->head);
}

static size_t a_buffered(const struct conn *c)
{
	return ((const struct aconn *)c)->head.len;
}

static void a_close(struct conn *c)
{
	event_del(((struct aconn *)c)->timeout);
}

static void a_free(struct conn *c)
{
	struct aconn *a = (struct aconn *)c;
	if (a->timeout)
		event_free(a->timeout);
	buf_free(&a->head);
}

struct admin *admin_new(struct event_base *base, const struct cfg *cfg, const struct admin_ops *ops,
			char *err, size_t errlen)
{
	char why[256];
	struct admin *ad = calloc(1, sizeof(*ad));
	if (ad == NULL || (ad->srv = srv_new(base, cfg, cfg->admin_maxclients + 1,
					     "--admin-maxclients")) == NULL) {
		snprintf(err, errlen, "admin port: out of memory");
		free(ad);
		return NULL;
	}
	ad->ops = *ops;
	ad->cap = cfg->admin_maxclients;
	ad->proto = (struct conn_proto){
		.name = "admin",
		.size = sizeof(struct aconn),
		.open = a_open,
		.room = a_room,
		.feed = a_feed,
		.buffered = a_buffered,
		.step = a_step,
		.close = a_close,
		.free = a_free,
		.refusal = ADMIN_REFUSAL,
	};
	bool ok = srv_listen_tcp(ad->srv, cfg->bind, cfg->admin_port, &ad->proto, why, sizeof(why));
	if (!ok && errno == EADDRINUSE && !cfg_given(cfg, "admin-port")) {
		/* the default port, held by another gateway of this machine, say:
		 * a free port instead, named in the log, rather than no start */
		ok = srv_listen_tcp(ad->srv, cfg->bind, 0, &ad->proto, why, sizeof(why));
		if (ok)
			log_msg(LOG_LVL_WARN,
				"the default admin port %lld is in use (another leasegate on this "
				"machine?): admin HTTP on %s:%d instead; give --admin-port to "
				"choose "
				"one",
				(long long)cfg->admin_port, cfg->bind, admin_port(ad));
	}
	if (!ok) {
		snprintf(err, errlen,
			 "bad value for --admin-port: %s (another process has it? choose another "
			 "--admin-port, or 0 to turn the admin port off)",
			 why);
		admin_free(ad);
		return NULL;
	}
	return ad;
}

int admin_port(const struct admin *ad)
{
	return srv_port(ad->srv, &ad->proto);
}

void admin_free(struct admin *ad)
{
	if (ad == NULL)
		return;
	srv_free(ad->srv);
	free(ad);
}
