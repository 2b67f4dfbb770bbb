/*
 * store_memory_shared: shared names (core/store/store_shared.h) on the
 * embedded store. The header is the name's lock item, its count, mode,
 * limit and slots in the item's block of rare fields (store_memory_int.h),
 * so that an exclusive acquire sees the count (lock_writable) and the
 * retention never forgets a header while a slot of it is held. A request
 * is copied at submit time and applied at completion, from a timer, as
 * every call of this store: each condition is checked, header first and
 * then the slot (the order of DynamoDB's two items), before either write.
 */
#include "core/store/store_memory_int.h"
#include "core/store/store_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request's copy, its strings with it. */
struct mem_sh {
	struct store_sh_req req;
	char owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1], seen_rvn[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1];
	struct store_sh_set seen_set; /* RCLEAR's */
	char name[];
};

/* The answer being made: READ fills the slots read, the others slots[0]. */
struct sh_out {
	struct store_sh_result res;
	struct lock_item slots[];
};

/* Slots a request reads or answers. */
static unsigned answered_slots(const struct store_sh_req *r)
{
	if (r->op != STORE_SH_READ)
		return 1;
	return r->count != 0 ? r->count : r->cap - r->slot;
}

static const char *mode_name(enum store_sh_mode m)
{
	return m == STORE_SH_LIMIT ? "LIMIT" : "SHARED";
}

static int64_t scount_of(const struct mitem *h)
{
	return h != NULL && h->rare != NULL ? h->rare->scount : 0;
}

/* Slot k of h, or NULL when it was never written. */
static const struct mslot *slot_of(const struct mitem *h, unsigned k)
{
	if (h == NULL || h->rare == NULL)
		return NULL;
	for (unsigned i = 0; i < h->rare->nslots; i++)
		if (h->rare->slots[i].k == k)
			return &h->rare->slots[i];
	return NULL;
}

/* ---- reading out ---- */

static void header_out(const struct mitem *h, struct store_sh_header *out)
{
	memset(out, 0, sizeof(*out));
	mem_copy_out(h, &out->lock);
	if (h == NULL || h->rare == NULL)
		return;
	out->has_scount = h->rare->scount > 0 || h->rare->smode[0] != '\0';
	out->scount = h->rare->scount;
	out->slimit = h->rare->slimit;
	memcpy(out->smode, h->rare->smode, sizeof(out->smode));
	memcpy(out->xwait, h->rare->xwait, sizeof(out->xwait));
	memcpy(out->xwait_rvn, h->rare->xwait_rvn, sizeof(out->xwait_rvn));
	out->xwait_ms = h->rare->xwait_ms;
	if (h->rare->rwaiters != NULL)
		out->rwaiters = *h->rare->rwaiters;
	if (h->rare->radmit != NULL)
		out->radmit = *h->rare->radmit;
}

static void slot_out(const struct mslot *s, struct lock_item *out)
{
	memset(out, 0, sizeof(*out));
	if (s == NULL)
		return;
	out->exists = true;
	out->has_owner = s->has_owner;
	out->has_lease = s->has_owner;
	out->has_rvn = s->rvn[0] != '\0';
	out->has_fence = true;
	memcpy(out->owner, s->owner, sizeof(out->owner));
	memcpy(out->rvn, s->rvn, sizeof(out->rvn));
	memcpy(out->holder, s->holder, sizeof(out->holder));
	snprintf(out->type, sizeof(out->type), "SLOT");
	out->fence = s->fence;
	out->freed_forced = s->forced;
	out->freed = s->forced ? s->fence : 0;
	out->lease_ms = s->has_owner ? s->lease_ms : 0;
	out->ttl = s->ttl;
}

/* ---- conditions (store_shared.h) ---- */

static bool fence_is(const struct mitem *h, int64_t seen)
{
	if (seen == 0)
		return h == NULL || h->no_fence;
	return h != NULL && !h->no_fence && !h->fence_bad && h->fence == seen;
}

/* The reader sets of h: NULL when absent. */
static const struct store_sh_set *radmit_of(const struct mitem *h)
{
	return h != NULL && h->rare != NULL ? h->rare->radmit : NULL;
}

static bool grant_header_ok(const struct mitem *h, const struct store_sh_req *r)
{
	bool lock = h == NULL || (h->other_type == NULL && !h->fence_bad);
	bool announced = h != NULL && h->rare != NULL && h->rare->xwait[0] != '\0';
	/* admitted: in radmit, whatever the announcement (store_shared.h) */
	bool mine = announced && strcmp(h->rare->xwait, r->owner) == 0;
	bool passes = r->admitted ? radmit_of(h) != NULL && store_sh_set_has(radmit_of(h), r->owner)
		      : r->announced ? mine
				     : !announced;
	if (!lock || (h != NULL && h->owner[0] != '\0') || !passes || !fence_is(h, r->seen_fence))
		return false;
	int64_t n = scount_of(h);
	if (r->first)
		return n == 0;
	if (n == 0) /* h has its rare fields from here on */
		return false;
	bool limit_ok = r->mode != STORE_SH_LIMIT || h->rare->slimit == (int64_t)r->cap;
	return (r->seen_rvn != NULL || n < (int64_t)r->cap) &&
	       strcmp(h->rare->smode, mode_name(r->mode)) == 0 && limit_ok;
}

static bool grant_slot_ok(const struct mslot *s, const struct store_sh_req *r)
{
	bool free_or_seen = r->seen_rvn != NULL
				    ? s != NULL && s->has_owner && strcmp(s->rvn, r->seen_rvn) == 0
				    : s == NULL || !s->has_owner;
	int64_t fence = s != NULL ? s->fence : 0;
	return free_or_seen && fence == r->seen_slot_fence;
}

static bool end_slot_ok(const struct mslot *s, const struct store_sh_req *r)
{
	return s != NULL && s->has_owner && strcmp(s->owner, r->owner) == 0 &&
	       (r->op != STORE_SH_REMOVE || strcmp(s->rvn, r->seen_rvn) == 0);
}

/* ---- writes ---- */

/* Slot k of h, made (empty) when it was never written; NULL on
 * out-of-memory. */
static struct mslot *slot_make(struct mstore *ms, struct mitem *h, unsigned k)
{
	struct mslot *s = (struct mslot *)slot_of(h, k);
	struct mitem_rare *rare = s == NULL ? mem_rare(ms, h) : NULL;
	if (s != NULL || rare == NULL)
		return s;
	s = realloc(rare->slots, (rare->nslots + 1) * sizeof(*s));
	if (s == NULL)
		return NULL;
	rare->slots = s;
	s += rare->nslots++;
	memset(s, 0, sizeof(*s));
	s->k = k;
	ms->bytes += sizeof(*s);
	return s;
}

static void fill_slot(struct mslot *s, const struct store_sh_req *r)
{
	s->exists = s->has_owner = true;
	snprintf(s->owner, sizeof(s->owner), "%s", r->owner);
	snprintf(s->rvn, sizeof(s->rvn), "%s", r->rvn);
	snprintf(s->holder, sizeof(s->holder), "%s", r->holder != NULL ? r->holder : "");
	s->lease_ms = r->lease_ms;
	s->forced = false;
	s->fence++;
	if (r->ttl > 0)
		s->ttl = r->ttl;
}

/* id out of *set (id NULL: every id); freed, NULL, when it empties: a set
 * is never empty */
static void set_delete(struct mstore *ms, struct store_sh_set **set, const char *id)
{
	struct store_sh_set *s = *set;
	if (s != NULL && id == NULL)
		s->n = 0;
	for (unsigned i = 0; s != NULL && i < s->n; i++)
		if (strcmp(s->id[i], id) == 0) {
			memmove(s->id[i], s->id[i + 1], (s->n - i - 1) * sizeof(s->id[0]));
			s->n--;
			break;
		}
	if (s != NULL && s->n == 0) {
		free(s);
		*set = NULL;
		ms->bytes -= sizeof(*s);
	}
}

void mem_admit_readers(struct mstore *ms, struct mitem *it)
{
	struct mitem_rare *rare = it->rare;
	if (rare == NULL)
		return;
	if (rare->radmit != NULL)
		ms->bytes -= sizeof(*rare->radmit);
	free(rare->radmit);
	rare->radmit = rare->rwaiters;
	rare->rwaiters = NULL;
	mem_rare_trim(ms, it);
}

static void grant_header(struct mstore *ms, struct mitem *h, const struct store_sh_req *r)
{
	struct mitem_rare *rare = h->rare;
	if (r->registered) { /* its entry goes with the grant */
		set_delete(ms, &rare->rwaiters, r->owner);
		set_delete(ms, &rare->radmit, r->owner);
	}
	if (r->first) {
		snprintf(rare->smode, sizeof(rare->smode), "%s", mode_name(r->mode));
		rare->slimit = r->mode == STORE_SH_LIMIT ? r->cap : 0;
		if (r->mode == STORE_SH_SHARED) { /* a new phase: its group token */
			h->fence = h->no_fence ? 1 : h->fence + 1;
			h->no_fence = false;
		}
	}
	if (r->seen_rvn == NULL)
		rare->scount++;
	if (r->ttl > 0)
		h->ttl = r->ttl;
}

/* GRANT (store_shared.h) into out. */
static void grant(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	if (!grant_header_ok(h, r) || !grant_slot_ok(slot_of(h, r->slot), r)) {
		out->res.status = STORE_REFUSED;
		out->res.index = grant_header_ok(h, r) ? 1 : 0;
		header_out(h, &out->res.header);
		slot_out(slot_of(h, r->slot), &out->slots[0]);
		return;
	}
	bool fresh = h == NULL;
	if (fresh && (h = mem_item_add(ms, r->name, store_name_hash(r->name))) != NULL)
		h->no_fence = true;
	struct mslot *s = h != NULL ? slot_make(ms, h, r->slot) : NULL;
	if (s == NULL) {
		out->res.status = STORE_TRANSIENT;
		out->res.error_type = "OutOfMemory";
		snprintf(out->res.message, sizeof(out->res.message),
			 "the embedded store is out of memory (or full)");
		return;
	}
	grant_header(ms, h, r);
	fill_slot(s, r);
	header_out(h, &out->res.header);
	slot_out(s, &out->slots[0]);
}

/* RELEASE and REMOVE: the slot freed, the count lowered. */
static void end(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	bool header_ok = scount_of(h) > 0;
	if (!header_ok || !end_slot_ok(slot_of(h, r->slot), r)) {
		out->res.status = STORE_REFUSED;
		out->res.index = header_ok ? 1 : 0;
		header_out(h, &out->res.header);
		slot_out(slot_of(h, r->slot), &out->slots[0]);
		return;
	}
	struct mslot *s = (struct mslot *)slot_of(h, r->slot);
	s->has_owner = false;
	s->forced = r->op == STORE_SH_RELEASE && r->forced;
	s->owner[0] = s->holder[0] = '\0';
	if (r->ttl > 0)
		s->ttl = r->ttl;
	if (--h->rare->scount == 0) /* forgotten after the retention, as a release */
		mem_freed_link(ms, h);
	header_out(h, &out->res.header);
	slot_out(s, &out->slots[0]);
}

static void renew(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	struct mslot *s = (struct mslot *)slot_of(h, r->slot);
	bool ok = s != NULL && s->has_owner && strcmp(s->owner, r->owner) == 0 &&
		  (strcmp(s->rvn, r->seen_rvn) == 0 || strcmp(s->rvn, r->rvn) == 0);
	out->res.index = 1;
	if (!ok) {
		out->res.status = STORE_REFUSED;
		slot_out(s, &out->slots[0]);
		return;
	}
	snprintf(s->rvn, sizeof(s->rvn), "%s", r->rvn);
	snprintf(s->holder, sizeof(s->holder), "%s", r->holder != NULL ? r->holder : "");
	s->lease_ms = r->lease_ms;
	if (r->ttl > 0)
		s->ttl = r->ttl;
	slot_out(s, &out->slots[0]);
}

/* XANNOUNCE and XCLEAR (store_shared.h): the header's xwait fields. */
static void announce(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	struct mitem_rare *x = h != NULL ? h->rare : NULL;
	bool ok = r->op == STORE_SH_XANNOUNCE
			  ? x != NULL && (x->scount > 0 || x->radmit != NULL) &&
				    (x->xwait[0] == '\0' || strcmp(x->xwait, r->owner) == 0)
			  : x != NULL && x->xwait[0] != '\0' &&
				    strcmp(x->xwait_rvn, r->seen_rvn) == 0;
	if (ok && r->op == STORE_SH_XANNOUNCE) {
		snprintf(x->xwait, sizeof(x->xwait), "%s", r->owner);
		snprintf(x->xwait_rvn, sizeof(x->xwait_rvn), "%s", r->rvn);
		x->xwait_ms = r->lease_ms;
	} else if (ok) {
		x->xwait[0] = x->xwait_rvn[0] = '\0';
		x->xwait_ms = 0;
	}
	out->res.status = ok ? STORE_OK : STORE_REFUSED;
	out->res.index = 0;
	header_out(h, &out->res.header);
}

/* XTAKE: the stale exclusive holder's owner removed, as a release. */
static void take(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	bool ok = h != NULL && h->owner[0] != '\0' && strcmp(h->owner, r->owner) == 0 &&
		  strcmp(h->rvn, r->seen_rvn) == 0;
	if (ok) {
		mem_freed_link(ms, h);
		h->owner[0] = '\0';
		h->has_lease = false;
		h->has_holder = false;
		if (h->rare != NULL)
			h->rare->secret_hash[0] = '\0';
		if (r->ttl > 0)
			h->ttl = r->ttl;
		mem_admit_readers(ms, h);
	}
	out->res.status = ok ? STORE_OK : STORE_REFUSED;
	out->res.index = 0;
	header_out(h, &out->res.header);
}

/* Whether two sets hold the same ids (in any order: a set's equality). */
static bool set_equal(const struct store_sh_set *a, const struct store_sh_set *b)
{
	if (a == NULL || b == NULL || a->n != b->n)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (!store_sh_set_has(b, a->id[i]))
			return false;
	return true;
}

/* RWAIT, RUNWAIT, RCLEAR (store_shared.h): the header's reader sets. */
static bool readers_ok(const struct mitem *h, const struct store_sh_req *r)
{
	const struct mitem_rare *x = h != NULL ? h->rare : NULL;
	switch (r->op) {
	case STORE_SH_RWAIT:
		return h != NULL && (h->owner[0] != '\0' || (x != NULL && x->xwait[0] != '\0')) &&
		       (x == NULL || x->rwaiters == NULL || x->rwaiters->n < STORE_SH_SET_MAX);
	case STORE_SH_RUNWAIT:
		return h != NULL && h->other_type == NULL;
	default:
		return set_equal(radmit_of(h), r->seen_set);
	}
}

static void readers(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	bool ok = readers_ok(h, r);
	out->res.index = 0;
	out->res.status = ok ? STORE_OK : STORE_REFUSED;
	if (ok && r->op == STORE_SH_RWAIT) {
		struct mitem_rare *x = mem_rare(ms, h);
		if (x != NULL && x->rwaiters == NULL &&
		    (x->rwaiters = calloc(1, sizeof(*x->rwaiters))) != NULL)
			ms->bytes += sizeof(*x->rwaiters);
		if (x == NULL || x->rwaiters == NULL) {
			out->res.status = STORE_TRANSIENT;
			out->res.error_type = "OutOfMemory";
			snprintf(out->res.message, sizeof(out->res.message),
				 "the embedded store is out of memory");
			return;
		}
		if (!store_sh_set_has(x->rwaiters, r->owner)) /* ADD: a set */
			snprintf(x->rwaiters->id[x->rwaiters->n++], sizeof(x->rwaiters->id[0]),
				 "%s", r->owner);
	} else if (ok && h->rare != NULL && r->op == STORE_SH_RUNWAIT) {
		set_delete(ms, &h->rare->rwaiters, r->owner);
		if (r->admitted)
			set_delete(ms, &h->rare->radmit, r->owner);
		mem_rare_trim(ms, h);
	} else if (ok && r->op == STORE_SH_RCLEAR) {
		set_delete(ms, &h->rare->radmit, NULL);
		mem_rare_trim(ms, h);
	}
	header_out(h, &out->res.header);
}

/* CHECK: a shared holder's fenced-write conditions, header first. */
static void check(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	const struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	const struct mslot *s = slot_of(h, r->slot);
	bool shared = r->mode == STORE_SH_SHARED;
	bool header_ok = h != NULL && h->owner[0] == '\0' && (!shared || fence_is(h, r->token));
	bool slot_ok = s != NULL && s->has_owner && strcmp(s->owner, r->owner) == 0 &&
		       (shared || s->fence == r->token);
	header_out(h, &out->res.header);
	slot_out(s, &out->slots[0]);
	if (!header_ok || !slot_ok) {
		out->res.status = STORE_REFUSED;
		out->res.index = header_ok ? 1 : 0;
	}
}

static void read_all(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	const struct mitem *h = *mem_find_slot(ms, r->name, store_name_hash(r->name));
	header_out(h, &out->res.header);
	for (unsigned i = 0; i < answered_slots(r); i++)
		slot_out(slot_of(h, r->slot + i), &out->slots[i]);
}

static void apply(struct mstore *ms, const struct store_sh_req *r, struct sh_out *out)
{
	out->res.status = STORE_OK;
	out->res.index = 2;
	out->res.nslots = answered_slots(r);
	out->res.slots = out->slots;
	switch (r->op) {
	case STORE_SH_GRANT:
		grant(ms, r, out);
		return;
	case STORE_SH_RENEW:
		renew(ms, r, out);
		return;
	case STORE_SH_RELEASE:
	case STORE_SH_REMOVE:
		end(ms, r, out);
		return;
	case STORE_SH_READ:
		read_all(ms, r, out);
		return;
	case STORE_SH_XANNOUNCE:
	case STORE_SH_XCLEAR:
		announce(ms, r, out);
		return;
	case STORE_SH_XTAKE:
		take(ms, r, out);
		return;
	case STORE_SH_RWAIT:
	case STORE_SH_RUNWAIT:
	case STORE_SH_RCLEAR:
		readers(ms, r, out);
		return;
	case STORE_SH_CHECK:
		check(ms, r, out);
		return;
	}
}

static void sh_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	unsigned n = answered_slots(&call->sh->req);
	struct sh_out *out = malloc(sizeof(*out) + n * sizeof(out->slots[0]));
	if (out != NULL) {
		memset(&out->res, 0, sizeof(out->res));
		out->res.slots = out->slots;
		out->res.index = 2;
		memset(&out->slots[0], 0, sizeof(out->slots[0]));
		if (!mem_injected(ms, &out->res.status, &out->res.error_type, out->res.message))
			apply(ms, &call->sh->req, out);
		if (call->sh->req.op == STORE_SH_GRANT && out->res.status == STORE_OK &&
		    ms->grant_refused > 0) { /* applied; its answer: a retry's refusal */
			ms->grant_refused--;
			out->res.status = STORE_REFUSED;
			out->res.index = 1;
		}
	}
	ms->base.in_flight--;
	store_sh_cb cb = call->sh_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	if (out == NULL) {
		struct store_sh_result oom = {
			.status = STORE_TRANSIENT, .error_type = "OutOfMemory", .index = 2};
		snprintf(oom.message, sizeof(oom.message), "the embedded store is out of memory");
		cb(cb_arg, &oom);
		return;
	}
	cb(cb_arg, &out->res);
	free(out);
}

static struct mem_sh *copy(const struct store_sh_req *req)
{
	size_t n = strlen(req->name) + 1;
	struct mem_sh *c = malloc(sizeof(*c) + n);
	if (c == NULL)
		return NULL;
	c->req = *req;
	memcpy(c->name, req->name, n);
	c->req.name = c->name;
#define COPY(f)                                                                                    \
	do {                                                                                       \
		if (req->f != NULL) {                                                              \
			snprintf(c->f, sizeof(c->f), "%s", req->f);                                \
			c->req.f = c->f;                                                           \
		}                                                                                  \
	} while (0)
	COPY(owner);
	COPY(rvn);
	COPY(seen_rvn);
	COPY(holder);
#undef COPY
	if (req->seen_set != NULL) {
		c->seen_set = *req->seen_set;
		c->req.seen_set = &c->seen_set;
	}
	return c;
}

struct store_call *mem_sh_submit(struct store *s, const struct store_sh_req *req, store_sh_cb cb,
				 void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct mem_sh *c = copy(req);
	struct store_call *call = c != NULL ? mem_call_new(ms) : NULL;
	if (call == NULL) {
		free(c);
		return NULL;
	}
	enum store_op op = req->op == STORE_SH_READ	   ? STORE_READ
			   : req->op == STORE_SH_RENEW	   ? STORE_RENEW
			   : req->op == STORE_SH_XANNOUNCE ? STORE_ANNOUNCE
			   : req->op == STORE_SH_XCLEAR	   ? STORE_WITHDRAW
			   : req->op == STORE_SH_XTAKE	   ? STORE_RELEASE
			   : req->op == STORE_SH_CHECK	   ? STORE_CHECK
			   : req->op >= STORE_SH_RWAIT	   ? STORE_ANNOUNCE
							   : STORE_TRANSACT;
	call->sh = c;
	call->req.op = op; /* for the latency and the counts */
	call->sh_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, sh_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[op]);
	s->requests[op]++;
	s->in_flight++;
	return call;
}

void store_memory_grant_refused(struct store *s, int n)
{
	((struct mstore *)s)->grant_refused = n;
}
