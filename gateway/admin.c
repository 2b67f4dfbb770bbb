/*
 * admin: /healthz, /readyz and /metrics over libevent's evhttp (admin.h).
 */
#include "gateway/admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#define ADMIN_MAX_HEADERS 8192
#define ADMIN_TIMEOUT_S	  10
#define METRICS_MAX	  (4 << 20) /* bytes of /metrics text */

struct admin {
	struct evhttp *http;
	struct admin_ops ops;
};

static void reply(struct evhttp_request *req, int code, const char *reason, const char *type,
		  const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	if (b == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", type);
	if (evbuffer_add(b, body, len) != 0) {
		evbuffer_free(b);
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static void text(struct evhttp_request *req, int code, const char *reason, const char *body)
{
	reply(req, code, reason, "text/plain; charset=utf-8", body, strlen(body));
}

static void healthz(struct admin *a, struct evhttp_request *req)
{
	text(req, 200, "OK", "ok\n");
}

static void readyz(struct admin *a, struct evhttp_request *req)
{
	const char *why = "not ready";
	char body[256];
	if (a->ops.ready(a->ops.arg, &why)) {
		text(req, 200, "OK", "ready\n");
		return;
	}
	snprintf(body, sizeof(body), "not ready: %s\n", why);
	text(req, 503, "Service Unavailable", body);
}

static void metrics(struct admin *a, struct evhttp_request *req)
{
	struct buf out;
	buf_init(&out, METRICS_MAX);
	a->ops.metrics(a->ops.arg, &out);
	if (buf_failed(&out))
		evhttp_send_error(req, 500, "metrics past their size limit or out of memory");
	else
		reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", out.buf, out.len);
	buf_free(&out);
}

static const struct route {
	const char *path;
	void (*fn)(struct admin *a, struct evhttp_request *req);
} routes[] = {
	{"/healthz", healthz},
	{"/readyz", readyz},
	{"/metrics", metrics},
};

static void on_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	for (size_t i = 0; path && i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(path, routes[i].path) == 0) {
			routes[i].fn(arg, req);
			return;
		}
	}
	text(req, 404, "Not Found", "not found: try /healthz, /readyz or /metrics\n");
}

struct admin *admin_new(struct event_base *base, const char *bind, int port,
			const struct admin_ops *ops, char *err, size_t errlen)
{
	struct admin *a = calloc(1, sizeof(*a));
	if (a == NULL || (a->http = evhttp_new(base)) == NULL) {
		snprintf(err, errlen, "admin port: out of memory");
		free(a);
		return NULL;
	}
	a->ops = *ops;
	evhttp_set_allowed_methods(a->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(a->http, ADMIN_MAX_HEADERS);
	evhttp_set_max_body_size(a->http, 0);
	evhttp_set_timeout(a->http, ADMIN_TIMEOUT_S);
	evhttp_set_gencb(a->http, on_request, a);
	if (evhttp_bind_socket_with_handle(a->http, bind, (ev_uint16_t)port) == NULL) {
		snprintf(err, errlen,
			 "bad value for --admin-port: cannot listen on %s:%d (%s; 0 turns the "
			 "admin port off)",
			 bind, port, strerror(errno));
		admin_free(a);
		return NULL;
	}
	return a;
}

void admin_free(struct admin *a)
{
	if (a == NULL)
		return;
	if (a->http)
		evhttp_free(a->http);
	free(a);
}
