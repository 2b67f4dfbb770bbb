/*
 * http_curl: the libcurl transport of http (see http_int.h): the requests
 * the direct client does not take (a proxy from the environment, schemes
 * other than http and https, unusual URLs). libcurl's multi-socket API on
 * libevent, the hiperfifo pattern:
 *
 * One libevent timer for curl's timeout, one persistent event per socket
 * (its context hangs on the socket with curl_multi_assign and dies at
 * CURL_POLL_REMOVE), the request behind each easy handle through
 * CURLOPT_PRIVATE, curl_multi_info_read drained after every socket_action.
 * Easy handles are kept for reuse (up to max_active): creating one costs
 * more than a transfer on a kept connection.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "lib/http/http_int.h"

struct sock_ctx {
	struct hc_state *c;
	struct sock_ctx *prev, *next; /* c->socks */
	curl_socket_t fd;
	struct event *ev;
};

struct hc_state {
	struct http *h;
	CURLM *multi;
	struct event *timer_ev;
	struct sock_ctx *socks; /* every socket curl watches */
	CURL **idle;		/* easy handles kept for reuse, max_active at most */
	unsigned nidle;
};

static void on_socket_event(evutil_socket_t fd, short what, void *arg);

static void sock_free(struct hc_state *c, struct sock_ctx *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->socks = s->next;
	if (s->next)
		s->next->prev = s->prev;
	if (s->ev)
		event_free(s->ev);
	free(s);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *sockp)
{
	struct hc_state *c = userp;
	struct sock_ctx *s = sockp;
	if (what == CURL_POLL_REMOVE) {
		if (s) {
			curl_multi_assign(c->multi, fd, NULL);
			sock_free(c, s);
		}
		return 0;
	}
	short kind = EV_PERSIST | ((what & CURL_POLL_IN) ? EV_READ : 0) |
		     ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
	if (!s) {
		s = calloc(1, sizeof *s);
		if (!s)
			return -1;
		s->c = c;
		s->fd = fd;
		s->ev = event_new(c->h->base, fd, kind, on_socket_event, c);
		s->next = c->socks;
		if (c->socks)
			c->socks->prev = s;
		c->socks = s;
		if (!s->ev) {
			sock_free(c, s);
			return -1;
		}
		curl_multi_assign(c->multi, fd, s);
	} else {
		event_del(s->ev);
		event_assign(s->ev, c->h->base, fd, kind, on_socket_event, c);
	}
	return event_add(s->ev, NULL) == 0 ? 0 : -1;
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct hc_state *c = userp;
	if (timeout_ms < 0) {
		evtimer_del(c->timer_ev);
		return 0;
	}
	/* 0 too goes through the loop: socket_action may not be called from here */
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	return evtimer_add(c->timer_ev, &tv) == 0 ? 0 : -1;
}

/* Keeps e (out of the multi) for the next request, or frees it. */
static void easy_release(struct hc_state *c, CURL *e)
{
	if (c->h->dead || c->nidle >= c->h->opts.max_active) {
		curl_easy_cleanup(e);
		return;
	}
	c->idle[c->nidle++] = e;
}

/* Takes r's handle out of curl. */
static void detach(struct hc_state *c, struct http_req *r)
{
	curl_multi_remove_handle(c->multi, r->easy);
	easy_release(c, r->easy);
	r->easy = NULL;
}

static void check_multi_info(struct hc_state *c)
{
	struct http *h = c->h;
	CURLMsg *msg;
	int left;
	http_enter(h);
	while (!h->dead && (msg = curl_multi_info_read(c->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct http_req *r = NULL;
		CURLcode code = msg->data.result;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
		long conns = 0;
		curl_easy_getinfo(r->easy, CURLINFO_NUM_CONNECTS, &conns);
		r->conns = (unsigned)conns;
		detach(c, r);
		http_finished(h, r, code, NULL);
	}
	http_leave(h);
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg)
{
	struct hc_state *c = arg;
	int flags = ((what & EV_READ) ? CURL_CSELECT_IN : 0) |
		    ((what & EV_WRITE) ? CURL_CSELECT_OUT : 0);
	int running;
	curl_multi_socket_action(c->multi, fd, flags, &running);
	check_multi_info(c);
}

static void on_timer_event(evutil_socket_t fd, short what, void *arg)
{
	struct hc_state *c = arg;
	int running;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi_info(c);
}

/* The options every request of h shares, set once per easy handle. */
static CURL *easy_new(struct http *h)
{
	CURL *e = curl_easy_init();
	if (!e)
		return NULL;
	bool ok = true;
#define SET(opt, val) ok &= curl_easy_setopt(e, opt, val) == CURLE_OK
	SET(CURLOPT_NOSIGNAL, 1L);
	/* one request per connection at a time: max_active is the connections */
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_TCP_NODELAY, 1L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_WRITEFUNCTION, http_on_body);
	SET(CURLOPT_HEADERFUNCTION, http_on_header);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)HTTP_BODY_MAX);
	SET(CURLOPT_SSL_VERIFYPEER, h->opts.insecure ? 0L : 1L);
	SET(CURLOPT_SSL_VERIFYHOST, h->opts.insecure ? 0L : 2L);
	if (h->opts.ca_file)
		SET(CURLOPT_CAINFO, h->opts.ca_file);
#undef SET
	if (!ok) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

/* The options of this request. Every one that differs between requests
 * is set (or cleared) each time, since the handle may have served others. */
static bool setup_easy(struct http *h, struct http_req *r, int64_t timeout_ms)
{
	CURL *e = r->easy;
	bool ok = true;
#define SET(opt, val) ok &= curl_easy_setopt(e, opt, val) == CURLE_OK
	SET(CURLOPT_URL, r->url);
	SET(CURLOPT_PRIVATE, r);
	r->errbuf[0] = '\0';
	SET(CURLOPT_ERRORBUFFER, r->errbuf);
	SET(CURLOPT_NOPROXY, r->no_proxy ? "*" : (const char *)NULL);
	SET(CURLOPT_HTTPHEADER, r->hdrs);
	SET(CURLOPT_WRITEDATA, r);
	SET(CURLOPT_HEADERDATA, r);
	SET(CURLOPT_CONNECTTIMEOUT_MS,
	    (long)http_effective(r->connect_timeout_ms, h->opts.connect_timeout_ms));
	SET(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	if (strcmp(r->method, "GET") == 0) {
		SET(CURLOPT_CUSTOMREQUEST, (const char *)NULL);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
		SET(CURLOPT_POSTFIELDS, (const char *)NULL);
		SET(CURLOPT_HTTPGET, 1L); /* after POSTFIELDS, which means POST */
	} else {
		/* POST semantics (a body of exactly body_len bytes, Content-Length),
		 * with the method word replaced when it is not POST. */
		SET(CURLOPT_POSTFIELDS, r->body ? r->body : "");
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
		SET(CURLOPT_CUSTOMREQUEST,
		    strcmp(r->method, "POST") != 0 ? r->method : (const char *)NULL);
	}
#undef SET
	return ok;
}

static struct hc_state *state_of(struct http *h)
{
	static bool global_done;
	if (h->curl)
		return h->curl;
	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return NULL;
		global_done = true;
	}
	struct hc_state *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->h = h;
	c->multi = curl_multi_init();
	c->idle = calloc(h->opts.max_active, sizeof *c->idle);
	c->timer_ev = evtimer_new(h->base, on_timer_event, c);
	if (!c->multi || !c->idle || !c->timer_ev) {
		http_curl_free(c);
		return NULL;
	}
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	/* keep as many idle connections as can be busy at once */
	curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)h->opts.max_active);
	h->curl = c;
	return c;
}

static bool hc_start(struct http *h, struct http_req *r, int64_t timeout_ms, int *code,
		     const char **msg)
{
	*code = CURLE_FAILED_INIT;
	*msg = "could not start the transfer";
	struct hc_state *c = state_of(h);
	if (!c)
		return false;
	r->easy = c->nidle ? c->idle[--c->nidle] : easy_new(h);
	if (!r->easy)
		return false;
	if (!setup_easy(h, r, timeout_ms) || curl_multi_add_handle(c->multi, r->easy) != CURLM_OK) {
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
		return false;
	}
	return true;
}

static void hc_stop(struct http *h, struct http_req *r)
{
	if (r->easy)
		detach(h->curl, r);
}

const struct http_transport http_curl_transport = {.start = hc_start, .stop = hc_stop};

void http_curl_free(struct hc_state *c)
{
	if (!c)
		return;
	/* curl_multi_cleanup may report CURL_POLL_REMOVE for sockets it still
	 * holds (keep-alive connections); those events die there. */
	if (c->multi)
		curl_multi_cleanup(c->multi);
	while (c->socks)
		sock_free(c, c->socks);
	while (c->nidle)
		curl_easy_cleanup(c->idle[--c->nidle]);
	free(c->idle);
	if (c->timer_ev)
		event_free(c->timer_ev);
	free(c);
}
