/*
 * ddb_standin: the DynamoDB stand-in (ddb_standin.h): the HTTP server, the
 * latency and throttling draws, the counting, the lateness of renewals
 * and the intervals of session heartbeats. Bodies: ddb_standin_ops.c (lock
 * items) and ddb_standin_sess.c (sessions, revocations, transactions).
 *
 * A request is applied to the embedded store when it arrives; its answer
 * leaves when its drawn latency has passed since the arrival (a pending
 * entry with its own timer). A connection that closes first drops its
 * pending answers.
 */
#include "tests/support/ddb_standin.h"

#include <arpa/inet.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/base/clock.h"
#include "core/store/store_memory.h"
#include "tests/support/ddb_standin_int.h"

/* When a lock was last written (acquire or renewal, as it arrived), for
 * the lateness of its next renewal; or a session (CREATE or BEAT), for
 * the interval to its next BEAT. Open addressing, never shrinks. */
struct last_write {
	char *name; /* NULL: empty slot */
	int64_t at_us;
	int64_t lease_ms;
};

struct lw_tab {
	struct last_write *e;
	size_t cap, used;
};

/* A kept series of microseconds (lateness, beat intervals). */
struct series {
	int64_t *v;
	size_t n, cap;
};

struct pending {
	struct standin *s;
	struct pending *prev, *next;
	struct evhttp_request *req;
	struct evhttp_connection *conn;
	struct event *ev;
	struct evbuffer *body;
	int status;
	struct sd_req r; /* strings not kept: see name */
	char *name;	 /* the lock name or session key, for the last writes */
	int64_t arrived_us, late_us;
	struct store_call *call;
	struct store_scan_result *page;	  /* SD_SCAN */
	struct store_batch_result *batch; /* SD_BATCH, its entries with it */
	cJSON *root;			  /* the request's body, parsed */
	bool linked;			  /* on s->pending */
};

struct standin {
	struct event_base *base;
	struct evhttp *http;
	struct clock *clock;
	struct store *store;
	pthread_mutex_t mu;
	struct standin_options opt;
	uint64_t rng;
	struct standin_stats st;
	struct pending *pending;
	char ttl_attr[256];
	struct lw_tab lw, sw; /* locks, sessions */
	bool recording;
	struct series late, beats;
};

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct standin_options standin_latency(double ms)
{
	return (struct standin_options){
		.min_ms = 0.6 * ms, .max_ms = 1.4 * ms, .tail_p = 0.01, .tail_max_ms = 40 * ms};
}

/* xorshift64*: uniform in [0, 1) */
static double uniform(struct standin *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return (double)((s->rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static int64_t draw_latency_us(struct standin *s)
{
	const struct standin_options *o = &s->opt;
	double ms;
	if (o->tail_p > 0 && uniform(s) < o->tail_p) {
		ms = o->max_ms * pow(1.0 - uniform(s), -1.0 / 1.5);
		if (ms > o->tail_max_ms)
			ms = o->tail_max_ms;
	} else {
		ms = o->min_ms + (o->max_ms - o->min_ms) * uniform(s);
	}
	return (int64_t)(ms * 1000);
}

/* ---- last writes ---- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct last_write *lw_slot(struct last_write *tab, size_t cap, const char *name)
{
	size_t i = hash(name) & (cap - 1);
	while (tab[i].name && strcmp(tab[i].name, name) != 0)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/* The entry of name, made when missing; NULL on out-of-memory. */
static struct last_write *lw_get(struct lw_tab *t, const char *name, bool make)
{
	if (!t->cap)
		return NULL;
	struct last_write *w = lw_slot(t->e, t->cap, name);
	if (w->name || !make)
		return w->name ? w : NULL;
	if ((t->used + 1) * 2 > t->cap) {
		size_t cap = t->cap * 2;
		struct last_write *tab = calloc(cap, sizeof *tab);
		if (!tab)
			return NULL;
		for (size_t i = 0; i < t->cap; i++)
			if (t->e[i].name)
				*lw_slot(tab, cap, t->e[i].name) = t->e[i];
		free(t->e);
		t->e = tab;
		t->cap = cap;
		w = lw_slot(tab, cap, name);
	}
	if (!(w->name = strdup(name)))
		return NULL;
	t->used++;
	return w;
}

static bool lw_init(struct lw_tab *t)
{
	t->cap = 1024;
	return (t->e = calloc(t->cap, sizeof *t->e)) != NULL;
}

static void lw_free(struct lw_tab *t)
{
	for (size_t i = 0; t->e && i < t->cap; i++)
		free(t->e[i].name);
	free(t->e);
}

/* Keeps us in series when recording; false when not kept. */
static bool record(struct standin *s, struct series *sr, int64_t us)
{
	if (!s->recording)
		return false;
	if (sr->n == sr->cap) {
		size_t cap = sr->cap ? sr->cap * 2 : 4096;
		int64_t *p = realloc(sr->v, cap * sizeof *p);
		if (!p)
			return false;
		sr->v = p;
		sr->cap = cap;
	}
	sr->v[sr->n++] = us;
	return true;
}

static void record_late(struct standin *s, int64_t us)
{
	if (record(s, &s->late, us))
		s->st.renewals_timed++;
}

/* A series copied out (NULL when empty or out of memory). */
static int64_t *series_copy(struct standin *s, const struct series *sr, size_t *n)
{
	pthread_mutex_lock(&s->mu);
	int64_t *out = sr->n ? malloc(sr->n * sizeof *out) : NULL;
	*n = out ? sr->n : 0;
	if (out)
		memcpy(out, sr->v, sr->n * sizeof *out);
	pthread_mutex_unlock(&s->mu);
	return out;
}

/* ---- pending answers ---- */

static void pending_unlink(struct pending *p)
{
	struct standin *s = p->s;
	if (p->prev)
		p->prev->next = p->next;
	else
		s->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
	p->linked = false;
}

static void pending_free(struct pending *p)
{
	struct standin *s = p->s;
	if (p->linked)
		pending_unlink(p);
	if (p->call)
		store_cancel(s->store, p->call);
	if (p->ev)
		event_free(p->ev);
	if (p->body)
		evbuffer_free(p->body);
	if (p->page)
		free(p->page->entries);
	free(p->page);
	free(p->batch);
	cJSON_Delete(p->root);
	free(p->name);
	s->st.in_flight--;
	free(p);
}

static void on_due(evutil_socket_t fd, short what, void *arg)
{
	struct pending *p = arg;
	struct standin *s = p->s;
	pthread_mutex_lock(&s->mu);
	/* off the list first: a close inside the send must not free it */
	pending_unlink(p);
	struct evkeyvalq *h = evhttp_request_get_output_headers(p->req);
	char crc[16];
	size_t len = evbuffer_get_length(p->body);
	snprintf(crc, sizeof crc, "%u", (unsigned)ddb_crc32(evbuffer_pullup(p->body, -1), len));
	evhttp_add_header(h, "Content-Type", "application/x-amz-json-1.0");
	evhttp_add_header(h, "x-amz-crc32", crc);
	evhttp_send_reply(p->req, p->status, p->status == 200 ? "OK" : "Error", p->body);
	pending_free(p);
	pthread_mutex_unlock(&s->mu);
}

/* The answer is ready: it leaves at arrival + latency. */
static void schedule(struct pending *p, int64_t latency_us)
{
	int64_t wait = p->arrived_us + latency_us - mono_us();
	if (wait < 0)
		wait = 0;
	struct timeval tv = {wait / 1000000, wait % 1000000};
	p->ev = evtimer_new(p->s->base, on_due, p);
	/* libevent counts a timeout from its cached time, taken when the loop
	 * woke: a busy turn makes it stale, and the answer would leave early
	 * (make check saw one 50 ms floor missed) */
	event_base_update_cache_time(p->s->base);
	if (p->ev)
		evtimer_add(p->ev, &tv);
}

static const char *ttl_of(struct standin *s)
{
	return s->ttl_attr[0] ? s->ttl_attr : NULL;
}

/* A lock item's answer: the last writes, the counts, then the body. */
static void on_store(void *arg, const struct store_result *res)
{
	struct pending *p = arg;
	struct standin *s = p->s;
	pthread_mutex_lock(&s->mu);
	p->call = NULL;
	enum store_op op = p->r.req.op;
	bool write = op == STORE_ACQUIRE || op == STORE_RENEW;
	if (res->status == STORE_OK && (write || op == STORE_RELEASE)) {
		struct last_write *w = lw_get(&s->lw, p->name, write);
		if (w) {
			w->at_us = write ? p->arrived_us : 0;
			w->lease_ms = p->r.req.lease_ms;
		}
		if (op == STORE_RENEW && p->late_us >= 0)
			record_late(s, p->late_us);
	}
	if (res->status == STORE_REFUSED) {
		s->st.refused++;
		if (op == STORE_RENEW)
			s->st.renew_refused++;
	}
	p->r.req.name = p->name;
	p->status = sd_put_result(p->body, &p->r, res, ttl_of(s));
	schedule(p, draw_latency_us(s));
	pthread_mutex_unlock(&s->mu);
}

/* A session item's answer: a CREATE or BEAT applied is the session's
 * last beat (the interval to the one before it kept), then the body. */
static void on_session(void *arg, const struct store_session_result *res)
{
	struct pending *p = arg;
	struct standin *s = p->s;
	pthread_mutex_lock(&s->mu);
	p->call = NULL;
	enum store_session_op op = p->r.sreq.op;
	bool beat = op == STORE_SESSION_CREATE || op == STORE_SESSION_BEAT;
	if (res->status == STORE_OK && beat) {
		s->st.beats++;
		struct last_write *w = lw_get(&s->sw, p->name, true);
		if (w && op == STORE_SESSION_BEAT && w->at_us > 0 &&
		    record(s, &s->beats, p->arrived_us - w->at_us))
			s->st.beats_timed++;
		if (w) {
			w->at_us = p->arrived_us;
			w->lease_ms = p->r.sreq.max_lease_ms;
		}
	}
	if (res->status == STORE_REFUSED) {
		s->st.refused++;
		if (op == STORE_SESSION_BEAT)
			s->st.beat_refused++;
	}
	p->status = sd_put_session(p->body, &p->r, res, ttl_of(s));
	schedule(p, draw_latency_us(s));
	pthread_mutex_unlock(&s->mu);
}

static void on_revoke(void *arg, const struct store_revoke_result *res)
{
	struct pending *p = arg;
	struct standin *s = p->s;
	pthread_mutex_lock(&s->mu);
	p->call = NULL;
	p->status = sd_put_revoke(p->body, &p->r, res);
	schedule(p, draw_latency_us(s));
	pthread_mutex_unlock(&s->mu);
}

static void on_scan(void *arg)
{
	struct pending *p = arg;
	struct standin *s = p->s;
	pthread_mutex_lock(&s->mu);
	p->call = NULL;
	s->st.read_items += p->page->count;
	p->status = sd_put_scan(p->body, p->page, ttl_of(s));
	schedule(p, draw_latency_us(s));
	pthread_mutex_unlock(&s->mu);
}

static void on_batch(void *arg)
{
	struct pending *p = arg;
	struct standin *s = p->s;
	pthread_mutex_lock(&s->mu);
	p->call = NULL;
	p->status = sd_put_batch(p->body, &p->r, p->batch, ttl_of(s));
	schedule(p, draw_latency_us(s));
	pthread_mutex_unlock(&s->mu);
}

/* Submits p's request to the embedded store, by its kind; NULL on
 * out-of-memory. The request's strings need not outlive the submit. */
static struct store_call *submit_lock(struct standin *s, struct pending *p)
{
	return store_submit(s->store, &p->r.req, on_store, p);
}

static struct store_call *submit_session(struct standin *s, struct pending *p)
{
	return store_session_submit(s->store, &p->r.sreq, on_session, p);
}

static struct store_call *submit_revoke(struct standin *s, struct pending *p)
{
	return store_revoke_submit(s->store, &p->r.rreq, on_revoke, p);
}

static struct store_call *submit_scan(struct standin *s, struct pending *p)
{
	p->page = calloc(1, sizeof *p->page);
	if (p->page)
		p->page->entries = calloc(p->r.limit, sizeof *p->page->entries);
	if (!p->page || !p->page->entries)
		return NULL;
	return store_scan(s->store, p->r.cursor, p->r.limit, p->page, on_scan, p);
}

/* The names point into the request's body, kept until the answer. */
static struct store_call *submit_batch(struct standin *s, struct pending *p)
{
	unsigned n = p->r.items;
	p->batch = calloc(1, sizeof *p->batch + n * sizeof(struct store_batch_entry));
	if (!p->batch)
		return NULL;
	p->batch->entries = (struct store_batch_entry *)(p->batch + 1);
	p->batch->count = n;
	for (unsigned i = 0; i < n; i++)
		p->batch->entries[i].name = p->r.names[i];
	return store_batch_read(s->store, p->batch, on_batch, p);
}

static struct store_call *(*const submit_of[SD_KIND_COUNT])(struct standin *, struct pending *) = {
	[SD_LOCK] = submit_lock, [SD_SESSION] = submit_session, [SD_REVOKE] = submit_revoke,
	[SD_SCAN] = submit_scan, [SD_BATCH] = submit_batch,
};

/* Requests that read items and requests that write them (DescribeTable,
 * CreateTable, UpdateTimeToLive: neither). */
static const bool reads_items[DDB_OP_COUNT] = {
	[DDB_GET_ITEM] = true, [DDB_BATCH_GET_ITEM] = true, [DDB_SCAN] = true, [DDB_QUERY] = true};
static const bool writes_items[DDB_OP_COUNT] = {
	[DDB_UPDATE_ITEM] = true, [DDB_DELETE_ITEM] = true, [DDB_TRANSACT_WRITE_ITEMS] = true};

/* The lock name or session key p's last writes are kept under, and the
 * lateness of a renewal (as it arrives: against the write before it). */
static bool note_arrival(struct standin *s, struct pending *p)
{
	const char *key = NULL;
	char skey[STORE_SESSION_KEY_MAX + 1];
	if (p->r.kind == SD_LOCK) {
		key = p->r.req.name;
	} else if (p->r.kind == SD_SESSION) {
		store_session_key(&p->r.sreq, skey);
		key = skey;
	}
	if (key && !(p->name = strdup(key)))
		return false;
	p->late_us = -1;
	if (p->r.kind == SD_LOCK && p->r.req.op == STORE_RENEW) {
		struct last_write *w = lw_get(&s->lw, p->name, false);
		if (w && w->at_us > 0) {
			int64_t late = p->arrived_us - (w->at_us + w->lease_ms / 3 * 1000);
			p->late_us = late > 0 ? late : 0;
		}
	}
	return true;
}

static enum ddb_op op_of_target(const char *target)
{
	const char *dot = target ? strrchr(target, '.') : NULL;
	for (int op = 0; dot && op < DDB_OP_COUNT; op++)
		if (strcmp(dot + 1, ddb_op_name(op)) == 0)
			return op;
	return DDB_OP_COUNT;
}

static void on_close(struct evhttp_connection *conn, void *arg)
{
	struct standin *s = arg;
	pthread_mutex_lock(&s->mu);
	s->st.connections--;
	for (struct pending *p = s->pending, *next; p; p = next) {
		next = p->next;
		if (p->conn == conn)
			pending_free(p);
	}
	pthread_mutex_unlock(&s->mu);
}

static void answer_now(struct pending *p, int status, const char *type, const char *msg)
{
	p->status = status;
	sd_put_error(p->body, type, msg);
	schedule(p, draw_latency_us(p->s));
}

/* Answers go out at once (TCP_NODELAY), as DynamoDB's do: else the last
 * segment of a large answer (a BatchGetItem of 100 items) waits for the
 * client's delayed acknowledgement of the one before, about 40 ms. */
static void no_delay(struct evhttp_request *req)
{
	struct evhttp_connection *c = evhttp_request_get_connection(req);
	struct bufferevent *bev = c != NULL ? evhttp_connection_get_bufferevent(c) : NULL;
	int one = 1;
	if (bev != NULL && bufferevent_getfd(bev) >= 0)
		(void)setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one,
				 sizeof(one));
}

static void handle(struct standin *s, struct pending *p)
{
	struct evhttp_request *req = p->req;
	no_delay(req);
	enum ddb_op dop = op_of_target(
		evhttp_find_header(evhttp_request_get_input_headers(req), "X-Amz-Target"));
	if (dop == DDB_OP_COUNT) {
		s->st.errors++;
		answer_now(p, 400, "UnknownOperationException", "unknown X-Amz-Target");
		return;
	}
	s->st.by_op[dop]++;
	s->st.reads += reads_items[dop];
	s->st.writes += writes_items[dop];
	if (s->opt.throttle_p > 0 && uniform(s) < s->opt.throttle_p) {
		s->st.throttled++;
		answer_now(p, 400, "ProvisionedThroughputExceededException",
			   "The level of configured provisioned throughput for the table was "
			   "exceeded.");
		return;
	}
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	const char *body = (const char *)evbuffer_pullup(in, -1);
	char err[DDB_ERR_MAX];
	cJSON *root = sd_decode(dop, body ? body : "", len, &p->r, err);
	if (!root) {
		s->st.errors++;
		answer_now(p, 400, "ValidationException", err);
		return;
	}
	if (p->r.ttl_attr)
		snprintf(s->ttl_attr, sizeof s->ttl_attr, "%s", p->r.ttl_attr);
	if (p->r.kind == SD_ADMIN) {
		sd_put_admin(p->body, &p->r, ttl_of(s), s->opt.replicas);
		p->status = 200;
		cJSON_Delete(root);
		schedule(p, draw_latency_us(s));
		return;
	}
	if (reads_items[dop])
		s->st.read_items += p->r.items;
	else
		s->st.write_items += p->r.items;
	/* the body stays until the answer: p->r's strings point into it */
	p->root = root;
	p->call = note_arrival(s, p) ? submit_of[p->r.kind](s, p) : NULL;
	if (!p->call)
		answer_now(p, 500, "InternalServerError", "out of memory");
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct standin *s = arg;
	pthread_mutex_lock(&s->mu);
	struct pending *p = calloc(1, sizeof *p);
	struct evbuffer *b = p ? evbuffer_new() : NULL;
	if (!b) {
		free(p);
		evhttp_send_error(req, 500, "out of memory");
		pthread_mutex_unlock(&s->mu);
		return;
	}
	p->s = s;
	p->req = req;
	p->body = b;
	p->conn = evhttp_request_get_connection(req);
	p->arrived_us = mono_us();
	p->next = s->pending;
	if (s->pending)
		s->pending->prev = p;
	s->pending = p;
	p->linked = true;
	s->st.requests++;
	if (++s->st.in_flight > s->st.in_flight_max)
		s->st.in_flight_max = s->st.in_flight;
	evhttp_connection_set_closecb(p->conn, on_close, s);
	handle(s, p);
	pthread_mutex_unlock(&s->mu);
}

static struct bufferevent *on_conn(struct event_base *b, void *arg)
{
	struct standin *s = arg;
	pthread_mutex_lock(&s->mu);
	s->st.connections++;
	s->st.connections_total++;
	pthread_mutex_unlock(&s->mu);
	return bufferevent_socket_new(b, -1, BEV_OPT_CLOSE_ON_FREE);
}

/* ---- public ---- */

struct standin *standin_new(struct event_base *base, int port, const struct standin_options *o,
			    char *url, size_t urlsz)
{
	struct standin *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->base = base;
	s->opt = *o;
	s->rng = o->seed ? o->seed : 0x9E3779B97F4A7C15ULL;
	/* recursive: evhttp may call on_close from inside a send */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	bool tabs = lw_init(&s->lw) && lw_init(&s->sw);
	s->clock = clock_real_new(base);
	s->store = s->clock ? store_memory_new(s->clock, "standin") : NULL;
	s->http = evhttp_new(base);
	if (!tabs || !s->store || !s->http)
		goto fail;
	evhttp_set_gencb(s->http, on_request, s);
	evhttp_set_bevcb(s->http, on_conn, s);
	evhttp_set_allowed_methods(s->http, EVHTTP_REQ_POST);
	evhttp_set_timeout(s->http, 3600);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", port);
	if (!bs)
		goto fail;
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &sl);
	snprintf(url, urlsz, "http://127.0.0.1:%d", ntohs(sin.sin_port));
	return s;
fail:
	standin_free(s);
	return NULL;
}

void standin_set_options(struct standin *s, const struct standin_options *o)
{
	pthread_mutex_lock(&s->mu);
	s->opt = *o;
	pthread_mutex_unlock(&s->mu);
}

void standin_stats(struct standin *s, struct standin_stats *out)
{
	pthread_mutex_lock(&s->mu);
	*out = s->st;
	pthread_mutex_unlock(&s->mu);
}

void standin_reset(struct standin *s)
{
	pthread_mutex_lock(&s->mu);
	struct standin_stats keep = s->st;
	memset(&s->st, 0, sizeof s->st);
	s->st.in_flight = s->st.in_flight_max = keep.in_flight;
	s->st.connections = keep.connections;
	s->late.n = s->beats.n = 0;
	pthread_mutex_unlock(&s->mu);
}

void standin_record(struct standin *s, bool on)
{
	pthread_mutex_lock(&s->mu);
	s->recording = on;
	pthread_mutex_unlock(&s->mu);
}

int64_t *standin_lateness(struct standin *s, size_t *n)
{
	return series_copy(s, &s->late, n);
}

int64_t *standin_beat_intervals(struct standin *s, size_t *n)
{
	return series_copy(s, &s->beats, n);
}

void standin_free(struct standin *s)
{
	if (!s)
		return;
	/* closing the connections drops their pending answers (on_close) */
	if (s->http)
		evhttp_free(s->http);
	while (s->pending)
		pending_free(s->pending);
	if (s->store)
		store_free(s->store);
	clock_free(s->clock);
	lw_free(&s->lw);
	lw_free(&s->sw);
	free(s->late.v);
	free(s->beats.v);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
