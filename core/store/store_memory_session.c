/*
 * store_memory_session: session items (core/store/store_session.h) on the
 * embedded store — a list of the sessions created, each its item. A list:
 * an embedded store serves one process, which has one session per
 * incarnation (a test a few). A request is copied at submit time and
 * applied at completion, from a timer, as every call of this store; a
 * READ reads the session and the lock item in that one completion.
 */
#include "core/store/store_memory_int.h"
#include "core/store/store_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msession {
	struct msession *next;
	char key[STORE_SESSION_KEY_MAX + 1];
	struct session_item item;
};

/* A request's copy, its strings with it. */
struct mem_sess {
	struct store_session_req req;
	char replica[STORE_SESSION_REPLICA_MAX + 1], incarnation[STORE_SESSION_INC_LEN + 1];
	char rvn[STORE_ID_MAX + 1], seen_rvn[STORE_ID_MAX + 1], by[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1], addr[STORE_SESSION_ADDR_MAX + 1];
	char name[STORE_NAME_MAX + 1];
};

static struct msession **find_key(struct mstore *ms, const char *key)
{
	struct msession **at = &ms->sessions;
	while (*at != NULL && strcmp((*at)->key, key) != 0)
		at = &(*at)->next;
	return at;
}

static struct msession **find(struct mstore *ms, const struct store_session_req *r)
{
	char key[STORE_SESSION_KEY_MAX + 1];
	store_session_key(r, key);
	return find_key(ms, key);
}

const struct session_item *mem_session_find(const struct mstore *ms, const char *key)
{
	return mem_session_by_key((struct mstore *)ms, key);
}

static void out_of_memory(struct store_session_result *out)
{
	out->status = STORE_TRANSIENT;
	out->error_type = "OutOfMemory";
	snprintf(out->message, sizeof(out->message), "the embedded store is out of memory");
}

/* CREATE: a new item, if none is there. */
static void create(struct mstore *ms, const struct store_session_req *r,
		   struct store_session_result *out)
{
	struct msession **at = find(ms, r), *s = *at;
	if (s != NULL) {
		out->status = STORE_REFUSED;
		out->session = s->item;
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		out_of_memory(out);
		return;
	}
	store_session_key(r, s->key);
	struct session_item *it = &s->item;
	it->exists = true;
	snprintf(it->type, sizeof(it->type), "SESSION");
	snprintf(it->rvn, sizeof(it->rvn), "%s", r->rvn);
	it->beat_seq = r->seq;
	snprintf(it->holder, sizeof(it->holder), "%s", r->holder != NULL ? r->holder : "");
	snprintf(it->addr, sizeof(it->addr), "%s", r->addr != NULL ? r->addr : "");
	it->max_lease_ms = r->max_lease_ms;
	it->ttl = r->ttl;
	*at = s;
	out->session = *it;
}

/* BEAT: the item there, not dead, its beatSeq below this one's (or
 * absent); never on its rvn. */
static void beat(struct mstore *ms, const struct store_session_req *r,
		 struct store_session_result *out)
{
	struct msession *s = *find(ms, r);
	if (s == NULL || s->item.has_dead || s->item.beat_seq >= r->seq) {
		out->status = STORE_REFUSED;
		if (s != NULL)
			out->session = s->item;
		return;
	}
	snprintf(s->item.rvn, sizeof(s->item.rvn), "%s", r->rvn);
	s->item.beat_seq = r->seq;
	s->item.max_lease_ms = r->max_lease_ms;
	if (r->ttl > 0)
		s->item.ttl = r->ttl;
	out->session = s->item;
}

/* KILL: on the watched rvn, once. */
static void mark_dead(struct mstore *ms, const struct store_session_req *r,
		      struct store_session_result *out)
{
	struct msession *s = *find(ms, r);
	if (s == NULL || strcmp(s->item.rvn, r->seen_rvn) != 0 || s->item.has_dead) {
		out->status = STORE_REFUSED;
		if (s != NULL)
			out->session = s->item;
		return;
	}
	s->item.has_dead = true;
	snprintf(s->item.dead, sizeof(s->item.dead), "%s", r->by);
	out->session = s->item;
}

/* READ: both items at once. */
static void read_both(struct mstore *ms, const struct store_session_req *r,
		      struct store_session_result *out)
{
	struct msession *s = *find(ms, r);
	if (s != NULL)
		out->session = s->item;
	mem_copy_out(*mem_find_slot(ms, r->name, store_name_hash(r->name)), &out->lock);
	out->session_read = out->lock_read = true;
}

static void apply(struct mstore *ms, const struct store_session_req *r,
		  struct store_session_result *out)
{
	static void (*const ops[])(struct mstore *, const struct store_session_req *,
				   struct store_session_result *) = {
		[STORE_SESSION_CREATE] = create,
		[STORE_SESSION_BEAT] = beat,
		[STORE_SESSION_KILL] = mark_dead,
		[STORE_SESSION_READ] = read_both,
	};
	out->status = STORE_OK;
	ops[r->op](ms, r, out);
}

/* Applies r (twice when the test asked: store_memory_session_retry); its
 * answer lost when the test asked (store_memory_session_lose). */
static void apply_or_lose(struct mstore *ms, const struct store_session_req *r,
			  struct store_session_result *out)
{
	if (ms->sess_twice > 0) {
		ms->sess_twice--;
		apply(ms, r, out); /* the first attempt, its answer never seen */
	}
	apply(ms, r, out);
	if (ms->sess_lost <= 0)
		return;
	ms->sess_lost--;
	*out = (struct store_session_result){.status = STORE_TRANSIENT,
					     .error_type = "RequestTimeout"};
	snprintf(out->message, sizeof(out->message), "the answer was lost (by the test)");
}

static void sess_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_session_result *out = calloc(1, sizeof(*out));
	struct store_session_result oom = {0};
	if (out == NULL)
		out_of_memory(out = &oom);
	else if (!mem_injected(ms, &out->status, &out->error_type, out->message))
		apply_or_lose(ms, &call->sess->req, out);
	ms->base.in_flight--;
	store_session_cb cb = call->sess_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	cb(cb_arg, out);
	if (out != &oom)
		free(out);
}

/* dst's copy of src (NULL stays NULL), into buf */
static const char *copy_str(char *buf, size_t cap, const char *src)
{
	if (src == NULL)
		return NULL;
	snprintf(buf, cap, "%s", src);
	return buf;
}

static struct mem_sess *copy(const struct store_session_req *req)
{
	struct mem_sess *c = malloc(sizeof(*c));
	if (c == NULL)
		return NULL;
	c->req = *req;
#define COPY(f) c->req.f = copy_str(c->f, sizeof(c->f), req->f)
	COPY(replica);
	COPY(incarnation);
	COPY(rvn);
	COPY(seen_rvn);
	COPY(by);
	COPY(holder);
	COPY(addr);
	COPY(name);
#undef COPY
	return c;
}

struct store_call *mem_session_submit(struct store *s, const struct store_session_req *req,
				      store_session_cb cb, void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct mem_sess *c = copy(req);
	struct store_call *call = c != NULL ? mem_call_new(ms) : NULL;
	if (call == NULL) {
		free(c);
		return NULL;
	}
	enum store_op op = store_session_counted_as(req->op);
	call->sess = c;
	call->req.op = op; /* for the latency and the counts */
	call->sess_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, sess_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[op]);
	s->requests[op]++;
	s->in_flight++;
	return call;
}

void mem_sessions_free(struct mstore *ms)
{
	while (ms->sessions != NULL) {
		struct msession *s = ms->sessions;
		ms->sessions = s->next;
		free(s);
	}
}

bool store_memory_session_delete(struct store *s, const char *key)
{
	struct msession **at = find_key((struct mstore *)s, key), *m = *at;
	if (m == NULL)
		return false;
	*at = m->next;
	free(m);
	return true;
}

bool store_memory_session_add_rev(struct store *s, const char *key, int64_t n)
{
	struct msession **at = find_key((struct mstore *)s, key), *m = *at;
	if (m == NULL)
		return false;
	m->item.rev_seq += n;
	return true;
}

void store_memory_session_lose(struct store *s, int n)
{
	((struct mstore *)s)->sess_lost = n;
}

void store_memory_session_retry(struct store *s, int n)
{
	((struct mstore *)s)->sess_twice = n;
}

struct session_item *mem_session_by_key(struct mstore *ms, const char *key)
{
	struct msession *m = *find_key(ms, key);
	return m != NULL ? &m->item : NULL;
}
