/*
 * store_memory_batch: store_batch_read (core/store/store_batch.h) on the
 * embedded store — every entry read in one completion, from a timer, as
 * every call of this store (its latency that of a READ).
 */
#include "core/store/store_batch.h"
#include "core/store/store_memory_int.h"

#include <stdio.h>

static void batch_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_batch_result *res = call->batch;
	if (!mem_injected(ms, &res->status, &res->error_type, res->message)) {
		for (unsigned i = 0; i < res->count; i++) {
			struct store_batch_entry *e = &res->entries[i];
			mem_copy_out(*mem_find_slot(ms, e->name, store_name_hash(e->name)),
				     &e->item);
			e->read = true;
		}
	}
	ms->base.in_flight--;
	void (*cb)(void *) = call->scan_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	cb(cb_arg);
}

/* store_batch_read has checked res. */
struct store_call *mem_batch_read(struct store *s, struct store_batch_result *res,
				  void (*cb)(void *arg), void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct store_call *call = mem_call_new(ms);
	if (call == NULL)
		return NULL;
	call->batch = res;
	call->scan_cb = cb;
	call->arg = arg;
	call->req.op = STORE_READ; /* for the latency and the counts */
	timer_init(&call->timer, ms->clock, batch_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[STORE_READ]);
	s->requests[STORE_READ]++;
	s->in_flight++;
	return call;
}
