/*
 * store_memory_kv: keyspace commits (core/store/store_kv.h) on the embedded
 * store. The request is copied at submit time and applied at completion,
 * from a timer as every call of this store, so that other calls may run
 * between a script's reads and its commit, as on DynamoDB: every condition
 * is checked, then every write applied, in one step of the one loop.
 */
#include "core/store/store_kv.h"
#include "core/store/store_memory_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct mitem *item_of(struct mstore *ms, const char *name)
{
	return *mem_find_slot(ms, name, store_name_hash(name));
}

/* The condition of o holds on the item as it is now. */
static bool seen_holds(const struct mitem *it, const struct store_kv_op *o)
{
	switch (o->seen) {
	case KV_SEEN_NONE:
		return it == NULL;
	case KV_SEEN_FREE: /* no holder of either mode (store_kv.h) */
		return it != NULL && it->owner[0] == '\0' &&
		       (it->rare == NULL || (it->rare->scount == 0 && it->rare->radmit == NULL)) &&
		       (o->has_fence ? !it->no_fence && it->fence == o->fence : it->no_fence);
	case KV_SEEN_VERSION:
		if (it == NULL || strcmp(it->rvn, o->rvn) != 0)
			return false;
		return o->alive_after <= 0 ||
		       (it->rare != NULL && strcmp(it->rare->exp_rvn, o->rvn) == 0 &&
			it->rare->expires_at > o->alive_after);
	case KV_SEEN_HOLDER:
		return it != NULL && it->owner[0] != '\0' && strcmp(it->owner, o->owner) == 0 &&
		       !it->no_fence && it->fence == o->fence;
	}
	return false;
}

/* False on out-of-memory (the item unchanged). */
static bool write_set(struct mstore *ms, struct mitem *it, const struct store_kv_op *o, int64_t ttl)
{
	struct mitem_rare *rare = mem_rare(ms, it); /* the expiry's and hash's */
	if (rare == NULL)
		return false;
	/* left in its list of released items, as an acquire (the sweep
	 * skips held items) */
	snprintf(it->owner, sizeof(it->owner), "%s", o->new_owner);
	snprintf(it->rvn, sizeof(it->rvn), "%s", o->new_rvn);
	snprintf(rare->exp_rvn, sizeof(rare->exp_rvn), "%s", o->new_rvn);
	rare->expires_at = o->expires_at;
	it->lease_ms = o->lease_ms;
	it->has_lease = true;
	it->has_holder = false;
	if (it->no_fence)
		it->fence = 0;
	it->no_fence = false;
	if (o->raise_fence)
		it->fence++;
	if (ttl > 0)
		it->ttl = ttl;
	/* a copy failing leaves none: the next read fails the script */
	mem_rare_set_hfields(ms, it, o->hash);
	mem_rare_trim(ms, it);
	return true;
}

static void write_free(struct mstore *ms, struct mitem *it, int64_t ttl)
{
	if (it->owner[0] != '\0' || !it->in_freed)
		mem_freed_link(ms, it);
	it->owner[0] = '\0';
	it->has_lease = false;
	it->has_holder = false;
	if (it->rare != NULL) {
		it->rare->expires_at = 0;
		it->rare->exp_rvn[0] = '\0';
		mem_rare_set_hfields(ms, it, NULL);
		mem_rare_trim(ms, it);
	}
	if (ttl > 0)
		it->ttl = ttl;
}

/* Applies req: every condition first, then every write. */
static void apply_kv(struct mstore *ms, const struct store_kv_req *req, struct store_kv_result *res)
{
	for (unsigned i = 0; i < req->n; i++) {
		const struct mitem *it = item_of(ms, req->ops[i].name);
		bool lock = it == NULL || (it->other_type == NULL && !it->fence_bad);
		if (!lock || !seen_holds(it, &req->ops[i])) {
			res->status = STORE_REFUSED;
			res->index = i;
			snprintf(res->message, sizeof(res->message), "key %.64s changed",
				 req->ops[i].name);
			return;
		}
	}
	for (unsigned i = 0; i < req->n; i++) {
		const struct store_kv_op *o = &req->ops[i];
		if (o->write == KV_W_CHECK)
			continue;
		struct mitem *it = mem_item_add(ms, o->name, store_name_hash(o->name));
		if (it == NULL) { /* only a new item can fail: checked above */
			res->status = STORE_FATAL;
			res->error_type = "LockLimitExceeded";
			snprintf(res->message, sizeof(res->message),
				 "the embedded store cannot add key %.64s", o->name);
			return;
		}
		if (o->write == KV_W_FREE) {
			write_free(ms, it, req->ttl);
		} else if (!write_set(ms, it, o, req->ttl)) {
			res->status = STORE_TRANSIENT;
			res->error_type = "OutOfMemory";
			strcpy(res->message, "the embedded store is out of memory");
			return;
		}
	}
	res->status = STORE_OK;
}

static void kv_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_kv_result res = {.status = STORE_OK};
	if (!mem_injected(ms, &res.status, &res.error_type, res.message))
		apply_kv(ms, call->kv, &res);
	ms->base.in_flight--;
	store_kv_cb cb = call->kv_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	cb(cb_arg, &res);
}

struct store_call *mem_kv_commit(struct store *s, const struct store_kv_req *req, store_kv_cb cb,
				 void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct store_call *call = mem_call_new(ms);
	if (call == NULL)
		return NULL;
	if ((call->kv = store_kv_copy(req)) == NULL) {
		mem_call_free(call);
		return NULL;
	}
	call->req.op = STORE_TRANSACT;
	call->kv_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, kv_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[STORE_TRANSACT]);
	s->requests[STORE_TRANSACT]++;
	s->in_flight++;
	return call;
}
