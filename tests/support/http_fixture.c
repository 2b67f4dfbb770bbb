/*
 * http_fixture: see http_fixture.h.
 */
#include "tests/support/http_fixture.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct event_base *hf_base;
struct evhttp *hf_srv;
int hf_port;
unsigned hf_server_conns; /* connections the server accepted */
struct evhttp_request *hf_held[HF_HELD_MAX];
size_t hf_nheld;
unsigned hf_concurrent_max; /* most requests held at once */
char hf_last_headers[4096]; /* "name: value\n"..., lower-case names */
char hf_last_method[16];
size_t hf_last_body_len;
char hf_order[256]; /* query "n" of each /hold arrival */

static struct bufferevent *on_conn(struct event_base *b, void *arg)
{
	hf_server_conns++;
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

void hf_on_request(struct evhttp_request *req, void *arg)
{
	const char *uri = evhttp_request_get_uri(req);
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
		snprintf(hf_last_method, sizeof hf_last_method, "GET");
		break;
	case EVHTTP_REQ_POST:
		snprintf(hf_last_method, sizeof hf_last_method, "POST");
		break;
	case EVHTTP_REQ_PUT:
		snprintf(hf_last_method, sizeof hf_last_method, "PUT");
		break;
	default:
		snprintf(hf_last_method, sizeof hf_last_method, "OTHER");
		break;
	}
	hf_last_headers[0] = '\0';
	struct evkeyval *kv;
	for (kv = evhttp_request_get_input_headers(req)->tqh_first; kv; kv = kv->next.tqe_next) {
		char line[512];
		snprintf(line, sizeof line, "%s: %s\n", kv->key, kv->value);
		for (char *c = line; *c != ':'; c++)
			*c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
		strncat(hf_last_headers, line,
			sizeof hf_last_headers - strlen(hf_last_headers) - 1);
	}
	hf_last_body_len = evbuffer_get_length(evhttp_request_get_input_buffer(req));
	if (strncmp(uri, "/hold", 5) == 0) {
		const char *n = strstr(uri, "n=");
		if (n)
			strncat(hf_order, n + 2, 1);
		hf_held[hf_nheld++] = req;
		if (hf_nheld > hf_concurrent_max)
			hf_concurrent_max = (unsigned)hf_nheld;
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

void hf_release_held(void)
{
	for (size_t i = 0; i < hf_nheld; i++)
		reply(hf_held[i], 2, false);
	hf_nheld = 0;
}

struct hf_result hf_results[HF_RESULTS_MAX];
bool hf_in_send;
bool hf_called_in_send;
char hf_done_order[HF_RESULTS_MAX + 1];

void hf_on_done(void *arg, const struct http_response *res)
{
	struct hf_result *r = arg;
	hf_called_in_send |= hf_in_send;
	r->done = true;
	r->code = res->curl_code;
	r->status = res->status;
	r->body_len = res->body_len;
	snprintf(r->body, sizeof r->body, "%s", res->body);
	snprintf(r->date, sizeof r->date, "%s", res->date ? res->date : "");
	snprintf(r->crc32, sizeof r->crc32, "%s", res->crc32 ? res->crc32 : "");
	snprintf(r->error, sizeof r->error, "%s", res->error ? res->error : "");
	size_t n = strlen(hf_done_order);
	if (n < HF_RESULTS_MAX)
		hf_done_order[n] = (char)('0' + (r - hf_results));
}

struct http_req *hf_send_one(struct http *h, const char *method, const char *path,
			     const struct http_header *hd, size_t nh, const char *body, size_t len,
			     int64_t timeout_ms, int idx)
{
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%d%s", hf_port, path);
	struct http_request req = {.method = method,
				   .url = url,
				   .headers = hd,
				   .nheaders = nh,
				   .body = body,
				   .body_len = len,
				   .timeout_ms = timeout_ms};
	hf_in_send = true;
	struct http_req *r = http_send(h, &req, hf_on_done, &hf_results[idx]);
	hf_in_send = false;
	return r;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	*(bool *)arg = true;
}

/* Runs the loop until pred() or limit_ms passes; returns pred(). */
bool hf_run_until(bool (*pred)(void), int limit_ms)
{
	bool expired = false;
	struct event *t = evtimer_new(hf_base, on_deadline, &expired);
	struct timeval tv = {limit_ms / 1000, (limit_ms % 1000) * 1000};
	evtimer_add(t, &tv);
	while (!pred() && !expired)
		event_base_loop(hf_base, EVLOOP_ONCE);
	event_free(t);
	return pred();
}

int hf_want_done;
bool hf_n_done(void)
{
	int n = 0;
	for (int i = 0; i < HF_RESULTS_MAX; i++)
		n += hf_results[i].done;
	return n >= hf_want_done;
}
size_t hf_want_held;
bool hf_n_held(void)
{
	return hf_nheld >= hf_want_held;
}

int hf_setup(void **state)
{
	memset(hf_results, 0, sizeof hf_results);
	hf_done_order[0] = hf_order[0] = '\0';
	hf_nheld = 0;
	hf_concurrent_max = 0;
	hf_server_conns = 0;
	hf_called_in_send = false;
	return 0;
}

bool hf_start(void)
{
	hf_base = event_base_new();
	hf_srv = evhttp_new(hf_base);
	evhttp_set_bevcb(hf_srv, on_conn, NULL);
	evhttp_set_gencb(hf_srv, hf_on_request, NULL);
	evhttp_set_allowed_methods(hf_srv, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(hf_srv, "127.0.0.1", 0);
	if (!bs)
		return false;
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &sl);
	hf_port = ntohs(sin.sin_port);
	return true;
}

void hf_stop(void)
{
	evhttp_free(hf_srv);
	event_base_free(hf_base);
}
