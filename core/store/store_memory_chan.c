/*
 * store_memory_chan: channels (core/store_chan.h) on the embedded store —
 * a list of the channels published on, each the ring of its last
 * STORE_CHAN_KEEP messages, completed from a timer as every call of this
 * store. One process holds them: an embedded store serves one replica,
 * which delivers its own messages at once (gateway/redis/pubsub.c).
 */
#include "core/store/store_chan.h"
#include "core/store/store_memory_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mchan_msg {
	char origin[STORE_ID_MAX + 1];
	size_t len;
	char *data;
};

/* A channel: messages seq - n + 1 .. seq in ring[(first + i) % KEEP]. */
struct mchan {
	struct mchan *next;
	char id[STORE_CHAN_ID_LEN + 1];
	int64_t seq;
	unsigned n, first;
	struct mchan_msg ring[STORE_CHAN_KEEP];
};

static struct mchan **find(struct mstore *ms, const char *id)
{
	struct mchan **at = &ms->chans;
	while (*at != NULL && strcmp((*at)->id, id) != 0)
		at = &(*at)->next;
	return at;
}

/* Appends the call's message (its blob: key "id\0origin", data the
 * bytes); false on out-of-memory (nothing changed). */
static bool append(struct mstore *ms, const struct mblob *b)
{
	struct mchan **at = find(ms, b->key), *c = *at;
	char *data = malloc(b->len + 1);
	if (data == NULL)
		return false;
	if (c == NULL) {
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			free(data);
			return false;
		}
		snprintf(c->id, sizeof(c->id), "%s", b->key);
		*at = c;
	}
	struct mchan_msg *m;
	if (c->n == STORE_CHAN_KEEP) { /* the oldest goes */
		m = &c->ring[c->first];
		c->first = (c->first + 1) % STORE_CHAN_KEEP;
		free(m->data);
	} else {
		m = &c->ring[(c->first + c->n++) % STORE_CHAN_KEEP];
	}
	memcpy(data, b->data, b->len);
	m->data = data;
	m->len = b->len;
	snprintf(m->origin, sizeof(m->origin), "%s", b->key + strlen(b->key) + 1);
	c->seq++;
	return true;
}

static void show(const struct mchan *c, struct store_chan_result *res)
{
	if (c == NULL)
		return;
	res->found = true;
	res->seq = c->seq;
	res->n = c->n;
	for (unsigned i = 0; i < c->n; i++) {
		const struct mchan_msg *m = &c->ring[(c->first + i) % STORE_CHAN_KEEP];
		res->e[i] = (struct store_chan_entry){
			.origin = m->origin, .data = m->data, .len = m->len};
	}
}

static void chan_complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_chan_result res = {.status = STORE_OK};
	if (call->blob_put && !append(ms, call->blob)) {
		res.status = STORE_TRANSIENT;
		res.error_type = "OutOfMemory";
		snprintf(res.message, sizeof(res.message), "the embedded store is out of memory");
	} else {
		show(*find(ms, call->blob->key), &res);
	}
	ms->base.in_flight--;
	store_chan_cb cb = call->chan_cb;
	void *cb_arg = call->arg;
	mem_call_free(call);
	cb(cb_arg, &res);
}

/* A call carrying id, origin and data (origin NULL: a read). */
static struct store_call *start(struct store *s, const char *id, const char *origin,
				const void *data, size_t len, store_chan_cb cb, void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	size_t idn = strlen(id) + 1, on = origin != NULL ? strlen(origin) + 1 : 1;
	struct mblob *b = malloc(sizeof(*b) + len + idn + on);
	struct store_call *call = b != NULL ? mem_call_new(ms) : NULL;
	if (call == NULL) {
		free(b);
		return NULL;
	}
	b->next = NULL;
	b->len = len;
	if (len > 0)
		memcpy(b->data, data, len);
	b->key = (char *)b->data + len;
	memcpy(b->key, id, idn);
	memcpy(b->key + idn, origin != NULL ? origin : "", on);
	call->blob = b;
	call->blob_put = origin != NULL;
	call->req.op = origin != NULL ? STORE_ACQUIRE : STORE_READ; /* for the latency alone */
	call->chan_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, chan_complete, call);
	timer_arm(&call->timer, ms->latency_ms + ms->op_latency_ms[call->req.op]);
	s->in_flight++;
	return call;
}

struct store_call *mem_chan_publish(struct store *s, const char *id, const char *origin,
				    const void *data, size_t len, int64_t ttl, store_chan_cb cb,
				    void *arg)
{
	return start(s, id, origin, data, len, cb, arg);
}

struct store_call *mem_chan_read(struct store *s, const char *id, store_chan_cb cb, void *arg)
{
	return start(s, id, NULL, NULL, 0, cb, arg);
}

void mem_chans_free(struct mstore *ms)
{
	while (ms->chans != NULL) {
		struct mchan *c = ms->chans;
		ms->chans = c->next;
		for (unsigned i = 0; i < c->n; i++)
			free(c->ring[(c->first + i) % STORE_CHAN_KEEP].data);
		free(c);
	}
}
