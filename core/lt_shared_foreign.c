/*
 * lt_shared_foreign: a shared holder by its slot, wherever it is held
 * (lt_shared.h, lt_sh_foreign): a detached hold renewed or released by
 * its client from any replica, or any hold ended by an operator. One read
 * of the header and the slot, then one conditional write.
 */
#include "core/lt_shared.h"
#include "core/lt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sh_foreign {
	struct locktable *t;
	struct lt_sh_foreign_req req;
	lt_renew_cb cb;
	void *arg;
	char owner[STORE_ID_MAX + 1]; /* the holder read */
	char rvn[LT_ID_LEN + 1];      /* RENEW: the new one */
	char name[STORE_NAME_MAX + 1];
};

static void finish(struct sh_foreign *f, int r, const struct store_sh_result *res)
{
	struct lt_error e;
	if (r < 0) {
		e.status = res->status;
		e.error_type =
			res->error_type != NULL ? res->error_type : store_status_name(res->status);
		snprintf(e.message, sizeof(e.message), "shared lock '%.64s': %s", f->name,
			 res->message);
	}
	f->cb(f->arg, r, r < 0 ? &e : NULL);
	free(f);
}

static void on_written(void *arg, const struct store_sh_result *res)
{
	struct sh_foreign *f = arg;
	if (res->status == STORE_OK && f->req.op != LT_SH_RENEW)
		lt_item_freed(f->t, f->name); /* waiters here try now */
	finish(f, res->status == STORE_OK ? 1 : res->status == STORE_REFUSED ? 0 : -1, res);
}

/* The holder of the slot read is the one asked for. */
static bool is_asked(const struct sh_foreign *f, const struct store_sh_header *h,
		     const struct lock_item *slot)
{
	if (!slot->has_owner || (f->req.owner != NULL && strcmp(slot->owner, f->req.owner) != 0))
		return false;
	int64_t token = strcmp(h->smode, "LIMIT") == 0 ? slot->fence : h->lock.fence;
	return f->req.token == 0 || token == f->req.token;
}

static void on_read(void *arg, const struct store_sh_result *res)
{
	struct sh_foreign *f = arg;
	if (res->status != STORE_OK) {
		finish(f, -1, res);
		return;
	}
	const struct lock_item *slot = &res->slots[0];
	if (!is_asked(f, &res->header, slot)) {
		finish(f, 0, res);
		return;
	}
	snprintf(f->owner, sizeof(f->owner), "%s", slot->owner);
	struct store_sh_req w = {.name = f->name,
				 .mode = strcmp(res->header.smode, "LIMIT") == 0 ? STORE_SH_LIMIT
										 : STORE_SH_SHARED,
				 .cap = STORE_SH_CAP,
				 .slot = f->req.slot,
				 .owner = f->owner,
				 .ttl = lt_ttl(f->t)};
	if (f->req.op == LT_SH_RENEW) {
		store_new_id(f->rvn);
		w.op = STORE_SH_RENEW;
		w.rvn = f->rvn;
		w.seen_rvn = slot->rvn;
		w.lease_ms = slot->lease_ms;
		w.holder = slot->holder[0] != '\0' ? slot->holder : NULL;
	} else {
		w.op = STORE_SH_RELEASE;
		w.forced = f->req.op == LT_SH_FORCE;
	}
	if (store_sh_submit(f->t->store, &w, on_written, f) == NULL) {
		struct store_sh_result oom = {.status = STORE_FATAL, .error_type = "OutOfMemory"};
		snprintf(oom.message, sizeof(oom.message), "out of memory");
		finish(f, -1, &oom);
	}
}

bool lt_sh_foreign(struct locktable *t, const struct lt_sh_foreign_req *req, lt_renew_cb cb,
		   void *arg)
{
	size_t n = req->name != NULL ? strnlen(req->name, STORE_NAME_MAX + 1) : 0;
	if (n == 0 || n > STORE_NAME_MAX || req->slot >= STORE_SH_CAP ||
	    (req->op != LT_SH_FORCE &&
	     (req->owner == NULL || strlen(req->owner) > STORE_ID_MAX || req->owner[0] == '\0')))
		return false;
	struct sh_foreign *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return false;
	f->t = t;
	f->req = *req;
	f->req.owner = NULL;
	f->cb = cb;
	f->arg = arg;
	memcpy(f->name, req->name, n);
	if (req->owner != NULL) { /* kept in owner until the read overwrites it */
		snprintf(f->owner, sizeof(f->owner), "%s", req->owner);
		f->req.owner = f->owner;
	}
	struct store_sh_req rd = {.op = STORE_SH_READ,
				  .name = f->name,
				  .mode = STORE_SH_SHARED,
				  .cap = STORE_SH_CAP,
				  .slot = req->slot,
				  .count = 1};
	if (store_sh_submit(t->store, &rd, on_read, f) == NULL) {
		free(f);
		return false;
	}
	return true;
}
