/*
 * store_memory_blob: blobs (core/store_blob.h) on the embedded store — a
 * list of the blobs put, each completed from a timer as every call of this
 * store. One process holds them: scripts loaded are shared by this
 * replica's connections only, which is all an embedded store serves.
 */
#include "core/store/store_blob.h"
#include "core/store/store_memory_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A blob of key kind#id with len bytes (data NULL: none yet), or NULL. */
static struct mblob *blob_new(const char *kind, const char *id, const void *data, size_t len)
{
	size_t kn = strlen(kind) + 1 + strlen(id) + 1;
	struct mblob *b = malloc(sizeof(*b) + len + kn);
	if (b == NULL)
		return NULL;
	b->next = NULL;
	b->len = len;
	if (len > 0)
		memcpy(b->data, data, len);
	b->key = (char *)b->data + len;
	snprintf(b->key, kn, "%s#%s", kind, id);
	return b;
}

static struct mblob **find(struct mstore *ms, const char *key)
{
	struct mblob **at = &ms->blobs;
	while (*at != NULL && strcmp((*at)->key, key) != 0)
		at = &(*at)->next;
	return at;
}

static void blob_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_blob_result res = {.status = STORE_OK};
	struct mblob **at = find(ms, call->blob->key);
	if (call->blob_put) { /* the call's blob moves to the list */
		struct mblob *old = *at;
		call->blob->next = old != NULL ? old->next : NULL;
		*at = call->blob;
		call->blob = NULL;
		free(old);
	} else if (*at != NULL) {
		res.found = true;
		res.data = (const char *)(*at)->data;
		res.len = (*at)->len;
	}
	ms->base.in_flight--;
	store_blob_cb cb = call->blob_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	cb(cb_arg, &res);
}

static struct store_call *start(struct store *s, struct mblob *b, bool put, store_blob_cb cb,
				void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct store_call *call = b != NULL ? mem_call_new(ms) : NULL;
	if (call == NULL) {
		free(b);
		return NULL;
	}
	call->blob = b;
	call->blob_put = put;
	call->req.op = put ? STORE_ACQUIRE : STORE_READ; /* for the latency alone */
	call->blob_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, blob_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[call->req.op]);
	s->in_flight++;
	return call;
}

struct store_call *mem_blob_put(struct store *s, const char *kind, const char *id, const void *data,
				size_t len, store_blob_cb cb, void *arg)
{
	return start(s, blob_new(kind, id, data, len), true, cb, arg);
}

struct store_call *mem_blob_get(struct store *s, const char *kind, const char *id, store_blob_cb cb,
				void *arg)
{
	return start(s, blob_new(kind, id, NULL, 0), false, cb, arg);
}

void mem_blobs_free(struct mstore *ms)
{
	while (ms->blobs != NULL) {
		struct mblob *b = ms->blobs;
		ms->blobs = b->next;
		free(b);
	}
}
