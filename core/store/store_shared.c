/*
 * store_shared: the dispatch and checks of the operations on shared names
 * (see store_shared.h).
 */
#include "core/store/store_shared.h"

#include <stdio.h>
#include <string.h>

/* 1..max printable bytes */
static bool id_ok(const char *s, size_t max)
{
	size_t n = s != NULL ? strnlen(s, max + 1) : 0;
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

/* 1..STORE_SH_SET_MAX ids, each as id_ok */
static bool set_ok(const struct store_sh_set *s)
{
	if (s == NULL || s->n == 0 || s->n > STORE_SH_SET_MAX)
		return false;
	for (unsigned i = 0; i < s->n; i++)
		if (!id_ok(s->id[i], STORE_ID_MAX))
			return false;
	return true;
}

bool store_sh_set_has(const struct store_sh_set *s, const char *id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->id[i], id) == 0)
			return true;
	return false;
}

/* The fields each operation needs (store_shared.h). */
static bool fields_ok(const struct store_sh_req *r)
{
	switch (r->op) {
	case STORE_SH_GRANT:
		return id_ok(r->owner, STORE_ID_MAX) && id_ok(r->rvn, STORE_ID_MAX) &&
		       r->lease_ms > 0 && r->seen_fence >= 0 && r->seen_slot_fence >= 0 &&
		       (r->seen_rvn == NULL || id_ok(r->seen_rvn, STORE_ID_MAX)) &&
		       !(r->first && r->seen_rvn != NULL) && (!r->admitted || r->registered);
	case STORE_SH_RENEW:
		return id_ok(r->owner, STORE_ID_MAX) && id_ok(r->rvn, STORE_ID_MAX) &&
		       id_ok(r->seen_rvn, STORE_ID_MAX) && r->lease_ms > 0;
	case STORE_SH_RELEASE:
		return id_ok(r->owner, STORE_ID_MAX);
	case STORE_SH_REMOVE:
		return id_ok(r->owner, STORE_ID_MAX) && id_ok(r->seen_rvn, STORE_ID_MAX);
	case STORE_SH_READ:
		return true;
	case STORE_SH_XANNOUNCE:
		return id_ok(r->owner, STORE_ID_MAX) && id_ok(r->rvn, STORE_ID_MAX) &&
		       r->lease_ms > 0;
	case STORE_SH_XCLEAR:
		return id_ok(r->seen_rvn, STORE_ID_MAX);
	case STORE_SH_XTAKE:
		return id_ok(r->owner, STORE_ID_MAX) && id_ok(r->seen_rvn, STORE_ID_MAX);
	case STORE_SH_RWAIT:
	case STORE_SH_RUNWAIT:
		return id_ok(r->owner, STORE_ID_MAX);
	case STORE_SH_RCLEAR:
		return set_ok(r->seen_set);
	case STORE_SH_CHECK:
		return id_ok(r->owner, STORE_ID_MAX) && r->token > 0;
	}
	return false;
}

bool store_sh_valid(const struct store_sh_req *r)
{
	size_t n = r->name != NULL ? strnlen(r->name, STORE_NAME_MAX + 1) : 0;
	if (n == 0 || n > STORE_NAME_MAX || r->cap < 1 || r->cap > STORE_SH_CAP ||
	    r->slot >= r->cap || (r->op == STORE_SH_READ && r->slot + r->count > r->cap) ||
	    (r->mode != STORE_SH_SHARED && r->mode != STORE_SH_LIMIT) || r->ttl < 0)
		return false;
	if (r->holder != NULL && strnlen(r->holder, STORE_HOLDER_MAX + 1) > STORE_HOLDER_MAX)
		return false;
	return fields_ok(r);
}

struct store_call *store_sh_submit(struct store *s, const struct store_sh_req *req, store_sh_cb cb,
				   void *arg)
{
	if (s->ops->sh_submit == NULL || !store_sh_valid(req))
		return NULL;
	return s->ops->sh_submit(s, req, cb, arg);
}

void store_sh_slot_key(const char *name, unsigned k, char *buf)
{
	snprintf(buf, STORE_SH_KEY_MAX + 1, "SLOT#%u#%s", k, name);
}
