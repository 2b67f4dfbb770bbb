/*
 * fake_ddb.c: the scripted responder (see fake_ddb.h).
 */
#include "tests/support/fake_ddb.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_json.h"

#define FAKE_QUEUE_MAX 64

struct fake_ddb {
	struct event_base *base;
	struct evhttp *http;
	struct fake_ddb_reply queue[FAKE_QUEUE_MAX];
	unsigned head, count;
	unsigned requests;
	struct fake_ddb_seen seen;
};

static void header(struct evhttp_request *req, const char *name, char *dst, size_t cap)
{
	const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), name);
	snprintf(dst, cap, "%s", v ? v : "");
}

static void answer(struct evhttp_request *req, const struct fake_ddb_reply *r)
{
	const char *body = r->body ? r->body : "{}";
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	char crc[16];
	evhttp_add_header(h, "Content-Type", "application/x-amz-json-1.0");
	if (!r->crc32) {
		snprintf(crc, sizeof crc, "%u", (unsigned)ddb_crc32(body, strlen(body)));
		evhttp_add_header(h, "x-amz-crc32", crc);
	} else if (r->crc32[0]) {
		evhttp_add_header(h, "x-amz-crc32", r->crc32);
	}
	if (r->date)
		evhttp_add_header(h, "Date", r->date);
	struct evbuffer *out = evbuffer_new();
	if (out)
		evbuffer_add(out, body, strlen(body));
	evhttp_send_reply(req, r->status ? r->status : 200, "X", out);
	if (out)
		evbuffer_free(out);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct fake_ddb *f = arg;
	f->requests++;
	header(req, "X-Amz-Target", f->seen.target, sizeof f->seen.target);
	header(req, "Content-Type", f->seen.content_type, sizeof f->seen.content_type);
	header(req, "Accept-Encoding", f->seen.accept_encoding, sizeof f->seen.accept_encoding);
	header(req, "X-Amz-Date", f->seen.amz_date, sizeof f->seen.amz_date);
	header(req, "Authorization", f->seen.authorization, sizeof f->seen.authorization);
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	if (n >= sizeof f->seen.body)
		n = sizeof f->seen.body - 1;
	evbuffer_copyout(in, f->seen.body, n);
	f->seen.body[n] = '\0';

	struct fake_ddb_reply r = {0};
	if (f->count) {
		r = f->queue[f->head];
		f->head = (f->head + 1) % FAKE_QUEUE_MAX;
		f->count--;
	}
	answer(req, &r);
}

struct fake_ddb *fake_ddb_new(struct event_base *base, char *url, size_t urlsz)
{
	struct fake_ddb *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->base = base;
	f->http = evhttp_new(base);
	struct evhttp_bound_socket *s =
		f->http ? evhttp_bind_socket_with_handle(f->http, "127.0.0.1", 0) : NULL;
	if (!s) {
		fake_ddb_free(f);
		return NULL;
	}
	evhttp_set_gencb(f->http, on_request, f);
	struct sockaddr_storage ss;
	ev_socklen_t len = sizeof ss;
	getsockname(evhttp_bound_socket_get_fd(s), (struct sockaddr *)&ss, &len);
	unsigned port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	snprintf(url, urlsz, "http://127.0.0.1:%u", port);
	return f;
}

void fake_ddb_push(struct fake_ddb *f, struct fake_ddb_reply r)
{
	if (f->count == FAKE_QUEUE_MAX)
		return;
	f->queue[(f->head + f->count) % FAKE_QUEUE_MAX] = r;
	f->count++;
}

unsigned fake_ddb_requests(const struct fake_ddb *f)
{
	return f->requests;
}

const struct fake_ddb_seen *fake_ddb_last(const struct fake_ddb *f)
{
	return &f->seen;
}

void fake_ddb_free(struct fake_ddb *f)
{
	if (!f)
		return;
	if (f->http)
		evhttp_free(f->http);
	free(f);
}
