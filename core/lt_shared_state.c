/*
 * lt_shared_state: what LOCK.STATE shows of a name held shared — its mode
 * and every holder (lt_shared.h, lt_sh_state): one strongly consistent
 * read of the header and every slot.
 */
#include "core/lt_shared.h"
#include "core/lt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct state_read {
	lt_sh_state_cb cb;
	void *arg;
	char name[STORE_NAME_MAX + 1];
};

/* The holders of r (READ of every slot) into st. */
static void holders_of(struct lt_sh_state *st, const struct store_sh_result *r)
{
	const struct store_sh_header *h = &r->header;
	st->mode = strcmp(h->smode, "LIMIT") == 0 ? STORE_SH_LIMIT : STORE_SH_SHARED;
	st->limit =
		st->mode == STORE_SH_LIMIT && h->slimit > 0 ? (unsigned)h->slimit : STORE_SH_CAP;
	st->fence = h->lock.fence;
	st->writer_waiting = h->xwait[0] != '\0';
	st->count = 0;
	for (unsigned i = 0; i < r->nslots; i++) {
		const struct lock_item *s = &r->slots[i];
		if (!s->has_owner)
			continue;
		struct lt_sh_holder *o = &st->holders[st->count++];
		o->slot = i;
		o->token = st->mode == STORE_SH_SHARED ? h->lock.fence : s->fence;
		o->lease_ms = s->lease_ms;
		memcpy(o->owner, s->owner, sizeof(o->owner));
		memcpy(o->holder, s->holder, sizeof(o->holder));
	}
}

static void fail(struct state_read *sr, enum store_status status, const char *type, const char *msg)
{
	struct lt_error e = {.status = status, .error_type = type};
	snprintf(e.message, sizeof(e.message), "shared lock '%.64s': %s", sr->name, msg);
	sr->cb(sr->arg, NULL, &e);
}

static void on_read(void *arg, const struct store_sh_result *r)
{
	struct state_read *sr = arg;
	struct lt_sh_state *st = NULL;
	if (r->status != STORE_OK)
		fail(sr, r->status,
		     r->error_type != NULL ? r->error_type : store_status_name(r->status),
		     r->message);
	else if ((st = malloc(sizeof(*st))) == NULL)
		fail(sr, STORE_FATAL, "OutOfMemory", "out of memory");
	else {
		holders_of(st, r);
		sr->cb(sr->arg, st, NULL);
	}
	free(st);
	free(sr);
}

bool lt_sh_state(struct locktable *t, const char *name, lt_sh_state_cb cb, void *arg)
{
	struct state_read *sr = malloc(sizeof(*sr));
	if (sr == NULL)
		return false;
	sr->cb = cb;
	sr->arg = arg;
	snprintf(sr->name, sizeof(sr->name), "%s", name);
	struct store_sh_req req = {
		.op = STORE_SH_READ, .name = name, .mode = STORE_SH_SHARED, .cap = STORE_SH_CAP};
	if (store_sh_submit(t->store, &req, on_read, sr) == NULL) {
		free(sr);
		return false;
	}
	return true;
}
