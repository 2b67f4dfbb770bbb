/*
 * store_memory_revoke: revocations (core/store/store_revoke.h) on the
 * embedded store — per session with entries, a set of at most
 * STORE_REVOKE_MAX of them in the order of their keys. An ending writes
 * its entry in the completion that writes the lock (mem_revoke_prepare,
 * then mem_revoke_commit, from store_memory.c's apply): the three parts
 * of store_revoke.h at once. READ and DELETE are calls like the others,
 * copied at submit time and applied at completion, from a timer.
 */
#include "core/store/store_memory_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mrev {
	char key[STORE_REVOKE_KEY_LEN + 1];
	int64_t fence;
	char *name;
};

/* A session's entries, sorted by key. */
struct mrevs {
	struct mrevs *next;
	char session[STORE_SESSION_KEY_MAX + 1];
	unsigned n;
	struct mrev e[STORE_REVOKE_MAX];
};

/* A READ's or DELETE's copy, its strings with it. */
struct mem_rev {
	struct store_revoke_req req;
	char session[STORE_SESSION_KEY_MAX + 1];
	char cursor[STORE_REVOKE_KEY_LEN + 1];
	char name[STORE_NAME_MAX + 1];
};

static struct mrevs **find_set(struct mstore *ms, const char *session)
{
	struct mrevs **at = &ms->revokes;
	while (*at != NULL && strcmp((*at)->session, session) != 0)
		at = &(*at)->next;
	return at;
}

/* The index of the first entry of set whose key is not below key; *eq
 * when that entry has key. */
static unsigned lower_bound(const struct mrevs *set, const char *key, bool *eq)
{
	unsigned i = 0;
	while (i < set->n && strcmp(set->e[i].key, key) < 0)
		i++;
	*eq = i < set->n && strcmp(set->e[i].key, key) == 0;
	return i;
}

static void fail(struct store_result *res, enum store_status st, const char *type, const char *msg)
{
	res->status = st;
	res->error_type = type;
	snprintf(res->message, sizeof(res->message), "%s", msg);
}

bool mem_revoke_prepare(struct mstore *ms, const struct store_req *r, struct mem_rev_end *e,
			struct store_result *res)
{
	memset(e, 0, sizeof(*e));
	if ((e->session = mem_session_by_key(ms, r->revoke_session)) == NULL) {
		res->status = STORE_REFUSED;
		res->session_gone = true;
		return false;
	}
	e->fence = r->token;
	store_revoke_key(r->name, r->token, e->key);
	e->set = *find_set(ms, r->revoke_session);
	if (e->set != NULL)
		lower_bound(e->set, e->key, &e->present);
	if (e->present)
		return true; /* written already: the same entry */
	if (e->set != NULL && e->set->n >= STORE_REVOKE_MAX) {
		fail(res, STORE_TRANSIENT, "RevocationsFull",
		     "the session has its most revocations pending: try again once its "
		     "holder has acted on them");
		return false;
	}
	if (e->set == NULL && (e->set = calloc(1, sizeof(*e->set))) != NULL) {
		e->made = true;
		snprintf(e->set->session, sizeof(e->set->session), "%s", r->revoke_session);
	}
	if (e->set == NULL || (e->name = strdup(r->name)) == NULL) {
		if (e->made)
			free(e->set);
		fail(res, STORE_TRANSIENT, "OutOfMemory", "the embedded store is out of memory");
		return false;
	}
	return true;
}

void mem_revoke_commit(struct mstore *ms, struct mem_rev_end *e)
{
	e->session->rev_seq++;
	if (e->present)
		return;
	struct mrevs *set = e->set;
	bool eq;
	unsigned i = lower_bound(set, e->key, &eq);
	memmove(&set->e[i + 1], &set->e[i], (set->n - i) * sizeof(set->e[0]));
	memcpy(set->e[i].key, e->key, sizeof(set->e[i].key));
	set->e[i].fence = e->fence;
	set->e[i].name = e->name;
	set->n++;
	if (e->made) {
		set->next = ms->revokes;
		ms->revokes = set;
	}
}

/* READ: a page after the cursor. */
static void read_page(struct mstore *ms, const struct store_revoke_req *r,
		      struct store_revoke_result *out, struct store_revoke_entry **buf)
{
	const struct mrevs *set = *find_set(ms, r->session);
	unsigned limit = r->limit != 0 ? r->limit : STORE_REVOKE_PAGE;
	bool eq = false;
	unsigned from = set == NULL ? 0
			: r->cursor != NULL && r->cursor[0] != '\0'
				? lower_bound(set, r->cursor, &eq)
				: 0;
	from += eq; /* after the cursor's own entry */
	unsigned left = set != NULL && from < set->n ? set->n - from : 0;
	unsigned n = left < limit ? left : limit;
	if (n > 0 && (*buf = calloc(n, sizeof(**buf))) == NULL) {
		out->status = STORE_TRANSIENT;
		out->error_type = "OutOfMemory";
		snprintf(out->message, sizeof(out->message), "the embedded store is out of memory");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		snprintf((*buf)[i].name, sizeof((*buf)[i].name), "%s", set->e[from + i].name);
		(*buf)[i].fence = set->e[from + i].fence;
	}
	out->entries = *buf;
	out->count = n;
	if (n < left)
		memcpy(out->cursor, set->e[from + n - 1].key, sizeof(out->cursor));
}

/* DELETE: the entry, if there. */
static void delete_one(struct mstore *ms, const struct store_revoke_req *r)
{
	struct mrevs **at = find_set(ms, r->session), *set = *at;
	char key[STORE_REVOKE_KEY_LEN + 1];
	bool eq = false;
	store_revoke_key(r->name, r->fence, key);
	unsigned i = set != NULL ? lower_bound(set, key, &eq) : 0;
	if (!eq)
		return;
	free(set->e[i].name);
	memmove(&set->e[i], &set->e[i + 1], (set->n - i - 1) * sizeof(set->e[0]));
	if (--set->n == 0) {
		*at = set->next;
		free(set);
	}
}

static void rev_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_revoke_result out = {.status = STORE_OK};
	struct store_revoke_entry *buf = NULL;
	if (!mem_injected(ms, &out.status, &out.error_type, out.message)) {
		if (call->rev->req.op == STORE_REVOKE_READ)
			read_page(ms, &call->rev->req, &out, &buf);
		else
			delete_one(ms, &call->rev->req);
	}
	ms->base.in_flight--;
	store_revoke_cb cb = call->rev_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	cb(cb_arg, &out);
	free(buf);
}

static struct mem_rev *copy(const struct store_revoke_req *req)
{
	struct mem_rev *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->req = *req;
	snprintf(c->session, sizeof(c->session), "%s", req->session);
	c->req.session = c->session;
	snprintf(c->cursor, sizeof(c->cursor), "%s", req->cursor != NULL ? req->cursor : "");
	c->req.cursor = c->cursor;
	snprintf(c->name, sizeof(c->name), "%s", req->name != NULL ? req->name : "");
	c->req.name = c->name;
	return c;
}

struct store_call *mem_revoke_submit(struct store *s, const struct store_revoke_req *req,
				     store_revoke_cb cb, void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct mem_rev *c = copy(req);
	struct store_call *call = c != NULL ? mem_call_new(ms) : NULL;
	if (call == NULL) {
		free(c);
		return NULL;
	}
	enum store_op op = req->op == STORE_REVOKE_READ ? STORE_READ : STORE_DELETE;
	call->rev = c;
	call->req.op = op; /* for the latency and the counts */
	call->rev_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, rev_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[op]);
	s->requests[op]++;
	s->in_flight++;
	return call;
}

void mem_revokes_free(struct mstore *ms)
{
	while (ms->revokes != NULL) {
		struct mrevs *set = ms->revokes;
		ms->revokes = set->next;
		for (unsigned i = 0; i < set->n; i++)
			free(set->e[i].name);
		free(set);
	}
}
