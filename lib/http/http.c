/*
 * http: the API of http.h, the queue and the life of a request; the bytes
 * travel through one of two transports (http_int.h): the direct HTTP/1.1
 * client for http:// and https:// without a proxy, libcurl for the rest.
 * At most max_active requests are in the transports; the rest wait in two
 * FIFO queues, urgent before normal, whose members still time out
 * (queue_ev). Why two: when DynamoDB slows down and the slots fill up, a
 * renewal stuck behind a burst of acquires and polls costs a lease, while
 * an acquire or a poll can wait, or be refused and asked again.
 *
 * Callbacks run only from loop callbacks: the transports' events
 * (finished transfers), queue_ev (expired waits) and defer_ev (requests
 * that failed when started from the queue). http_free() during a callback
 * is deferred to the end of that dispatch (http_enter/http_leave).
 */
#include "lib/http/http_int.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/base/lg_assert.h"
#include "lib/base/pool.h"

int64_t http_mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t http_effective(int64_t v, int64_t dflt)
{
	return v > 0 ? v : dflt;
}

static void list_push(struct req_list *l, struct http_req *r)
{
	r->prev = l->tail;
	r->next = NULL;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	l->count++;
}

static void list_unlink(struct req_list *l, struct http_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->prev = r->next = NULL;
	l->count--;
}

/* The list of r in state s, or NULL (NEW, CALLING, FREED: offset 0). */
static struct req_list *list_of(struct http *h, const struct http_req *r, enum req_state s)
{
	static const size_t offsets[REQ_STATE_COUNT] = {
		[REQ_QUEUED] = offsetof(struct http, queue),
		[REQ_ACTIVE] = offsetof(struct http, active),
		[REQ_DONE] = offsetof(struct http, done),
	};
	if (s == REQ_QUEUED && r->urgent)
		return &h->urgent;
	return offsets[s] != 0 ? (struct req_list *)((char *)h + offsets[s]) : NULL;
}

/* allowed[from] has bit `to` set when from -> to is a legal move: a
 * request starts or queues; a queued one starts, fails (DONE: its
 * callback from defer_ev) or is cancelled; an active one finishes (its
 * callback runs at once) or is cancelled; every one is freed at last. */
#define BIT(s) (1u << (s))
static const unsigned allowed[REQ_STATE_COUNT] = {
	[REQ_NEW] = BIT(REQ_QUEUED) | BIT(REQ_ACTIVE) | BIT(REQ_FREED),
	[REQ_QUEUED] = BIT(REQ_ACTIVE) | BIT(REQ_DONE) | BIT(REQ_FREED),
	[REQ_ACTIVE] = BIT(REQ_CALLING) | BIT(REQ_FREED),
	[REQ_DONE] = BIT(REQ_CALLING) | BIT(REQ_FREED),
	[REQ_CALLING] = BIT(REQ_FREED),
	[REQ_FREED] = 0,
};

static const char *move_name(enum req_state from, enum req_state to)
{
	static const char *const names[REQ_STATE_COUNT] = {"new",  "queued",  "active",
							   "done", "calling", "freed"};
	static char buf[64];
	snprintf(buf, sizeof(buf), "http request %s -> %s",
		 (unsigned)from < REQ_STATE_COUNT ? names[from] : "?",
		 (unsigned)to < REQ_STATE_COUNT ? names[to] : "?");
	return buf;
}

void http_req_set_state(struct http *h, struct http_req *r, enum req_state to)
{
	LG_ASSERT_MSG((unsigned)r->state < REQ_STATE_COUNT && (allowed[r->state] & BIT(to)),
		      move_name(r->state, to));
	struct req_list *from = list_of(h, r, r->state), *onto = list_of(h, r, to);
	if (from != NULL)
		list_unlink(from, r);
	r->state = to;
	if (onto != NULL)
		list_push(onto, r);
}

/* Requests and their answers' buffers come from pools: both are larger
 * than glibc's small bins, where each malloc first consolidates the fast
 * bins (and, in a heap of a million leases, searches long bins). Most
 * DynamoDB requests fit REQ_BLOCK with their headers and body, most
 * answers BODY_BLOCK; a BatchGetItem of 100 keys (the sweep's, tens a
 * second) and its answer fit the BIG_ ones; larger ones come from malloc
 * (pool_get). */
#define REQ_BLOCK      2048
#define BODY_BLOCK     4096
#define BIG_REQ_BLOCK  8192
#define BIG_BODY_BLOCK 65536
static struct pool req_pool = POOL_INIT(REQ_BLOCK, 1024);
static struct pool body_pool = POOL_INIT(BODY_BLOCK, 1024);
static struct pool big_req_pool = POOL_INIT(BIG_REQ_BLOCK, 16);
static struct pool big_body_pool = POOL_INIT(BIG_BODY_BLOCK, 16);

/* The pool of a request of n bytes (big_req_pool's mallocs and frees
 * those above its size). */
static struct pool *req_pool_of(size_t n)
{
	return n <= REQ_BLOCK ? &req_pool : &big_req_pool;
}

/* An answer's buffer of cap bytes back to its pool, or freed. */
static void body_free(char *buf, size_t cap)
{
	if (cap == BODY_BLOCK)
		pool_put(&body_pool, buf, BODY_BLOCK);
	else if (cap == BIG_BODY_BLOCK)
		pool_put(&big_body_pool, buf, BIG_BODY_BLOCK);
	else
		free(buf); /* NULL when nothing was read yet */
}

/* Takes r off its list and frees it. */
static void req_free(struct http_req *r)
{
	http_req_set_state(r->h, r, REQ_FREED);
	body_free(r->rbuf, r->rcap);
	pool_put(req_pool_of(r->alloc), r, r->alloc);
}

/* ---- the response sinks: they never call user code ---- */

size_t http_on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct http_req *r = arg;
	size_t n = size * nmemb;
	if (r->rlen + n > HTTP_BODY_MAX) {
		r->too_big = true;
		return 0; /* makes curl fail with CURLE_WRITE_ERROR */
	}
	if (!r->rcap && n + 1 <= BODY_BLOCK) {
		if (!(r->rbuf = pool_get(&body_pool, BODY_BLOCK)))
			return 0;
		r->rcap = BODY_BLOCK;
	}
	if (r->rlen + n + 1 > r->rcap) {
		size_t cap = r->rcap ? r->rcap : BODY_BLOCK;
		while (cap < r->rlen + n + 1)
			cap *= 2;
		if (cap < BIG_BODY_BLOCK)
			cap = BIG_BODY_BLOCK; /* a pooled block, not a malloc a doubling */
		char *p = cap == BIG_BODY_BLOCK ? pool_take(&big_body_pool, cap) : malloc(cap);
		if (!p)
			return 0;
		if (r->rlen > 0)
			memcpy(p, r->rbuf, r->rlen);
		body_free(r->rbuf, r->rcap);
		r->rbuf = p;
		r->rcap = cap;
	}
	memcpy(r->rbuf + r->rlen, data, n);
	r->rlen += n;
	r->rbuf[r->rlen] = '\0';
	return n;
}

/* Copies the value of header line "name: value" into out when it is name. */
static bool header_value(const char *line, size_t n, const char *name, char *out, size_t outsz)
{
	size_t nl = strlen(name);
	if (n <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
		return false;
	const char *v = line + nl + 1;
	const char *end = line + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	size_t len = (size_t)(end - v);
	if (len >= outsz)
		return false;
	memcpy(out, v, len);
	out[len] = '\0';
	return true;
}

size_t http_on_header(char *line, size_t size, size_t nmemb, void *arg)
{
	struct http_req *r = arg;
	size_t n = size * nmemb;
	if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		r->has_date = r->has_crc32 = r->has_request_id =
			false; /* a new response (after 1xx) */
	} else if (header_value(line, n, "date", r->date, sizeof r->date)) {
		r->has_date = true;
	} else if (header_value(line, n, "x-amz-crc32", r->crc32, sizeof r->crc32)) {
		r->has_crc32 = true;
	} else if (header_value(line, n, "x-amzn-requestid", r->request_id, sizeof r->request_id)) {
		r->has_request_id = true;
	}
	return n;
}

/* ---- completion ---- */

static void maybe_free(struct http *h);
static void start_queued(struct http *h);

void http_enter(struct http *h)
{
	h->depth++;
}

void http_leave(struct http *h)
{
	h->depth--;
	maybe_free(h);
}

/* Runs r's callback and frees r; r is already off every list. */
static void deliver(struct http *h, struct http_req *r, int code, const char *msg)
{
	struct http_response res = {.curl_code = code,
				    .elapsed_us = http_mono_us() - r->queued_us,
				    .status = r->status};
	h->stats.connections_opened += r->conns;
	if (code != CURLE_OK)
		res.error = msg ? msg : (r->errbuf[0] ? r->errbuf : curl_easy_strerror(code));
	res.body = r->rbuf ? r->rbuf : "";
	res.body_len = r->rlen;
	res.date = r->has_date ? r->date : NULL;
	res.crc32 = r->has_crc32 ? r->crc32 : NULL;
	res.request_id = r->has_request_id ? r->request_id : NULL;
	if (code == CURLE_OK)
		h->stats.completed++;
	else
		h->stats.failed++;
	http_cb cb = r->cb;
	void *arg = r->arg;
	http_req_set_state(h, r, REQ_CALLING);
	h->depth++;
	cb(arg, &res);
	h->depth--;
	req_free(r);
}

void http_finished(struct http *h, struct http_req *r, int code, const char *msg)
{
	r->tp = NULL; /* active -> calling: deliver() */
	if (r->too_big) {
		code = CURLE_FILESIZE_EXCEEDED;
		msg = "response body larger than HTTP_BODY_MAX";
	}
	deliver(h, r, code, msg);
	start_queued(h);
}

/* Requests failed outside a dispatch wait on h->done for this event. */
static void on_defer_event(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;
	h->depth++;
	struct http_req *r;
	while (!h->dead && (r = h->done.head))
		deliver(h, r, r->fail_code, r->fail_msg);
	h->depth--;
	maybe_free(h);
}

static void fail_later(struct http *h, struct http_req *r, int code, const char *msg)
{
	r->fail_code = code;
	r->fail_msg = msg;
	http_req_set_state(h, r, REQ_DONE);
	event_active(h->defer_ev, EV_TIMEOUT, 0);
}

/* ---- starting transfers ---- */

static bool has_header(const struct http_request *req, const char *name)
{
	for (size_t i = 0; i < req->nheaders; i++)
		if (strcasecmp(req->headers[i].name, name) == 0)
			return true;
	return false;
}

/* Headers curl would add on its own, and the signature must not meet. */
static const char *const suppressed[] = {"Expect", "Accept", "Content-Type", "Transfer-Encoding"};
#define NSUPPRESSED (sizeof suppressed / sizeof suppressed[0])

/* The bytes of the header lines of req, NULs included; 0 when a header
 * has no name or value. */
static size_t header_bytes(const struct http_request *req)
{
	size_t n = 0;
	for (size_t i = 0; i < req->nheaders; i++) {
		if (!req->headers[i].name || !req->headers[i].value)
			return 0;
		n += strlen(req->headers[i].name) + strlen(req->headers[i].value) + 3;
	}
	for (size_t i = 0; i < NSUPPRESSED; i++)
		n += strlen(suppressed[i]) + 2;
	return n;
}

static struct curl_slist *add_line(struct curl_slist **node, char **text, const char *name,
				   const char *sep, const char *value)
{
	size_t nl = strlen(name), sl = strlen(sep), vl = strlen(value);
	char *p = *text;
	memcpy(p, name, nl);
	memcpy(p + nl, sep, sl);
	memcpy(p + nl + sl, value, vl + 1);
	*text += nl + sl + vl + 1;
	struct curl_slist *l = (*node)++;
	l->data = p;
	l->next = *node;
	return l;
}

/* Lays the curl header list of req out in nodes and text (sized with
 * header_bytes), which r owns: curl only reads the list, so it need not
 * come from curl_slist_append, one allocation per line. */
static void build_headers(struct http_req *r, const struct http_request *req,
			  struct curl_slist *nodes, char *text)
{
	struct curl_slist *node = nodes, *last = NULL;
	for (size_t i = 0; i < req->nheaders; i++) {
		const struct http_header *hd = &req->headers[i];
		/* "Name;" sends an empty value, "Name:" would remove the header */
		last = add_line(&node, &text, hd->name, *hd->value ? ": " : ";", hd->value);
		r->has_host |= strcasecmp(hd->name, "Host") == 0;
	}
	r->nuser = req->nheaders;
	for (size_t i = 0; i < NSUPPRESSED; i++)
		if (!has_header(req, suppressed[i]))
			last = add_line(&node, &text, suppressed[i], ":", "");
	last->next = NULL;
	r->hdrs = nodes;
}

/* Hands r to its transport. Returns false (r untouched, still unlinked)
 * on failure, with *code and *msg saying why. */
static bool start(struct http *h, struct http_req *r, int *code, const char **msg)
{
	int64_t timeout_ms = http_effective(r->timeout_ms, h->opts.timeout_ms);
	int64_t waited_ms = (http_mono_us() - r->queued_us) / 1000;
	int64_t limit_ms = r->queue_timeout_ms > 0 ? r->queue_timeout_ms : timeout_ms;
	if (waited_ms >= limit_ms) {
		*code = CURLE_OPERATION_TIMEDOUT;
		*msg = "timed out waiting in the request queue";
		return false;
	}
	/* what is left of the whole; or, with a queue timeout, the transfer's
	 * own timeout within what is left of the queue's */
	if (r->queue_timeout_ms <= 0)
		timeout_ms -= waited_ms;
	else if (timeout_ms > limit_ms - waited_ms)
		timeout_ms = limit_ms - waited_ms;
	const struct http_transport *tp =
		http_direct_takes(r) ? &http_direct_transport : &http_curl_transport;
	if (!tp->start(h, r, timeout_ms, code, msg))
		return false;
	int64_t wait_us = http_mono_us() - r->queued_us;
	h->stats.started++;
	h->stats.wait_sum_us += (uint64_t)(wait_us > 0 ? wait_us : 0);
	if (wait_us > h->stats.wait_max_us)
		h->stats.wait_max_us = wait_us;
	r->tp = tp;
	http_req_set_state(h, r, REQ_ACTIVE);
	return true;
}

/* When a queued request is due to time out, in monotonic us. */
static int64_t queue_due(const struct http *h, const struct http_req *r)
{
	int64_t ms = r->queue_timeout_ms > 0 ? r->queue_timeout_ms
					     : http_effective(r->timeout_ms, h->opts.timeout_ms);
	return r->queued_us + ms * 1000;
}

/* Arms queue_ev for due_us unless it is armed for earlier. A timer left
 * armed for a request that has since started only costs a scan. */
static void queue_timer_at(struct http *h, int64_t due_us)
{
	if (evtimer_pending(h->queue_ev, NULL) && due_us >= h->queue_due_us)
		return;
	h->queue_due_us = due_us;
	int64_t delay = due_us - http_mono_us();
	if (delay < 0)
		delay = 0;
	struct timeval tv = {delay / 1000000, delay % 1000000};
	evtimer_add(h->queue_ev, &tv);
}

static unsigned queued(const struct http *h)
{
	return h->queue.count + h->urgent.count;
}

static void start_queued(struct http *h)
{
	while (!h->dead && queued(h) && h->active.count < h->opts.max_active) {
		struct http_req *r = h->urgent.head ? h->urgent.head : h->queue.head;
		int code;
		const char *msg;
		if (!start(h, r, &code, &msg))
			fail_later(h, r, code, msg);
	}
	if (!queued(h))
		evtimer_del(h->queue_ev);
}

/* Fails queued requests whose whole timeout passed while they waited.
 * Each queue is in the order of http_send, so it is read from its head
 * while requests are due: a scan costs what it expires, not the length of
 * the queue (at 100,000 leases the queue can hold tens of thousands of
 * renewals). A request behind one due later (a shorter timeout of its
 * own) is failed when it reaches the head, or when it would start
 * (start() checks its time), whichever comes first. The next wake-up
 * comes QUEUE_SLACK_US after the next due time, so that a queue expiring
 * bit by bit costs one run per batch, not per request. */
#define QUEUE_SLACK_US 10000
static void on_queue_event(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;
	int64_t now = http_mono_us(), next_due = INT64_MAX;
	struct req_list *lists[] = {&h->urgent, &h->queue};
	for (size_t i = 0; i < 2; i++) {
		struct http_req *r;
		while ((r = lists[i]->head) && queue_due(h, r) <= now) {
			fail_later(h, r, CURLE_OPERATION_TIMEDOUT,
				   "timed out waiting in the request queue");
		}
		if (r && queue_due(h, r) < next_due)
			next_due = queue_due(h, r);
	}
	if (next_due != INT64_MAX)
		queue_timer_at(h, next_due + QUEUE_SLACK_US);
}

/* ---- public ---- */

struct http *http_new(struct event_base *base, const struct http_options *opts)
{
	struct http *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->base = base;
	if (opts)
		h->opts = *opts;
	if (!h->opts.max_active)
		h->opts.max_active = 64;
	if (!h->opts.max_queued)
		h->opts.max_queued = 10000;
	if (!h->opts.max_queued_normal)
		h->opts.max_queued_normal = h->opts.max_queued;
	if (h->opts.max_queued_normal > h->opts.max_queued)
		h->opts.max_queued_normal = h->opts.max_queued;
	if (h->opts.connect_timeout_ms <= 0)
		h->opts.connect_timeout_ms = 2000;
	if (h->opts.timeout_ms <= 0)
		h->opts.timeout_ms = 10000;
	h->queue_ev = evtimer_new(base, on_queue_event, h);
	h->defer_ev = event_new(base, -1, 0, on_defer_event, h);
	if (!h->queue_ev || !h->defer_ev) {
		http_free(h);
		return NULL;
	}
	return h;
}

struct http_req *http_send(struct http *h, const struct http_request *req, http_cb cb, void *arg)
{
	if (h->dead || !req->url || !req->method || !cb || (req->nheaders && !req->headers) ||
	    (req->body_len && !req->body))
		return NULL;
	bool urgent = req->priority == HTTP_PRIO_URGENT;
	if (!http_has_room(h, req->priority)) {
		h->stats.refused++;
		return NULL;
	}
	/* one allocation: the request, its header list, URL, method and body */
	size_t hbytes = header_bytes(req);
	if (!hbytes)
		return NULL;
	size_t nnodes = req->nheaders + NSUPPRESSED;
	size_t ulen = strlen(req->url) + 1, mlen = strlen(req->method) + 1;
	size_t blen = req->body ? req->body_len + 1 : 0;
	size_t alloc = sizeof(struct http_req) + nnodes * sizeof(struct curl_slist) + hbytes +
		       ulen + mlen + blen;
	struct http_req *r = pool_get(req_pool_of(alloc), alloc);
	if (!r)
		return NULL;
	r->alloc = alloc;
	struct curl_slist *nodes = (struct curl_slist *)(r + 1);
	char *text = (char *)(nodes + nnodes);
	r->url = text + hbytes;
	r->method = r->url + ulen;
	memcpy(r->url, req->url, ulen);
	memcpy(r->method, req->method, mlen);
	if (req->body) {
		r->body = r->method + mlen;
		memcpy(r->body, req->body, req->body_len);
		r->body[req->body_len] = '\0';
	}
	r->h = h;
	r->body_len = req->body_len;
	r->connect_timeout_ms = req->connect_timeout_ms;
	r->timeout_ms = req->timeout_ms;
	r->queue_timeout_ms = req->queue_timeout_ms;
	r->no_proxy = req->no_proxy;
	r->urgent = urgent;
	r->queued_us = http_mono_us();
	r->cb = cb;
	r->arg = arg;
	build_headers(r, req, nodes, text);
	if (h->active.count < h->opts.max_active) {
		int code;
		const char *msg;
		if (!start(h, r, &code, &msg)) {
			req_free(r);
			return NULL;
		}
	} else {
		http_req_set_state(h, r, REQ_QUEUED);
		queue_timer_at(h, queue_due(h, r));
	}
	h->stats.sent++;
	return r;
}

bool http_has_room(const struct http *h, enum http_priority p)
{
	return h->active.count < h->opts.max_active ||
	       queued(h) < (p == HTTP_PRIO_URGENT ? h->opts.max_queued : h->opts.max_queued_normal);
}

void http_cancel(struct http *h, struct http_req *r)
{
	if (!r || r->state == REQ_CALLING)
		return;
	bool was_active = r->state == REQ_ACTIVE;
	if (was_active)
		r->tp->stop(h, r);
	req_free(r);
	if (was_active)
		start_queued(h);
	else if (!queued(h))
		evtimer_del(h->queue_ev);
}

static void drop_all(struct http *h)
{
	struct req_list *lists[] = {&h->queue, &h->urgent, &h->active, &h->done};
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		struct http_req *r;
		while ((r = lists[i]->head)) {
			if (r->state == REQ_ACTIVE)
				r->tp->stop(h, r);
			req_free(r);
		}
	}
}

static void maybe_free(struct http *h)
{
	if (!h->dead || h->depth > 0)
		return;
	http_direct_free(h->direct);
	http_curl_free(h->curl);
	if (h->queue_ev)
		event_free(h->queue_ev);
	if (h->defer_ev)
		event_free(h->defer_ev);
	free(h);
}

void http_free(struct http *h)
{
	if (!h || h->dead)
		return;
	h->dead = true;
	drop_all(h);
	maybe_free(h);
}

void http_stats(const struct http *h, struct http_stats *out)
{
	*out = h->stats;
	out->active = h->active.count;
	out->queued = queued(h);
	out->queued_urgent = h->urgent.count;
	out->max_active = h->opts.max_active;
}
