/*
 * lt_shared_reap: an exclusive waiter's side of a name readers hold (see
 * lt_sh_reaper_new in lt_shared.h): its announcement on the header, so
 * that new readers stop coming, and its watch of the slots, which removes
 * crashed readers after a whole lease of their rvn unchanged; and its
 * watch of the readers admitted by the last exclusive release (radmit),
 * which it drops once that set stood still a whole lease of its own.
 */
#include "core/lt_internal.h"
#include "core/lt_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sh_reaper {
	struct locktable *t;
	struct store_call *call;      /* its READ in flight */
	struct store_call *ann_call;  /* its XANNOUNCE in flight */
	char id[LT_ID_LEN + 1];	      /* the writer's announcement's */
	char xrvn[STORE_ID_MAX + 1];  /* its announcement standing, "" none */
	char xsent[STORE_ID_MAX + 1]; /* an XANNOUNCE in flight or of unknown
				       * outcome: it may stand instead */
	bool freed;		      /* lt_sh_reaper_free'd while ann_call flew */
	int64_t lease_ms;	      /* the writer's: radmit's watch */
	struct store_sh_set admitted; /* radmit as last read (n 0: none) */
	int64_t admitted_since;	      /* on our clock, from that read */
	struct sh_watch watch[STORE_SH_CAP];
	char name[];
};

/* A removal in flight, on its own: the reaper may go meanwhile. */
struct sh_removal {
	struct locktable *t;
	char name[STORE_NAME_MAX + 1];
};

static void on_removed(void *arg, const struct store_sh_result *r)
{
	struct sh_removal *rm = arg;
	if (r->status == STORE_OK) /* the count fell: the waiters here try */
		lt_item_freed(rm->t, rm->name);
	free(rm);
}

/* REMOVE of slot k, held by owner, on the rvn watched. */
static void remove_slot(struct sh_reaper *rp, unsigned k, const char *owner)
{
	struct sh_removal *rm = malloc(sizeof(*rm));
	if (rm == NULL)
		return;
	rm->t = rp->t;
	snprintf(rm->name, sizeof(rm->name), "%s", rp->name);
	struct store_sh_req r = {.op = STORE_SH_REMOVE,
				 .name = rp->name,
				 .cap = STORE_SH_CAP,
				 .slot = k,
				 .owner = owner,
				 .seen_rvn = rp->watch[k].rvn,
				 .ttl = lt_ttl(rp->t)};
	if (store_sh_submit(rp->t->store, &r, on_removed, rm) == NULL)
		free(rm);
}

/* Whether a and b hold the same ids. */
static bool same_set(const struct store_sh_set *a, const struct store_sh_set *b)
{
	if (a->n != b->n)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (!store_sh_set_has(b, a->id[i]))
			return false;
	return true;
}

/* RCLEAR of the admitted set rp watched (refused when it moved since). */
static void clear_admitted(struct sh_reaper *rp)
{
	struct sh_removal *rm = malloc(sizeof(*rm));
	if (rm == NULL)
		return;
	rm->t = rp->t;
	snprintf(rm->name, sizeof(rm->name), "%s", rp->name);
	struct store_sh_req r = {.op = STORE_SH_RCLEAR,
				 .name = rp->name,
				 .cap = STORE_SH_CAP,
				 .seen_set = &rp->admitted};
	if (store_sh_submit(rp->t->store, &r, on_removed, rm) == NULL)
		free(rm);
}

/* The readers admitted (h->radmit) go first; a set that stood still a
 * whole lease of the writer's on this clock is of readers that crashed:
 * dropped, conditioned on that very set. */
static void watch_admitted(struct sh_reaper *rp, const struct store_sh_header *h, int64_t now)
{
	if (h->radmit.n == 0 || !same_set(&rp->admitted, &h->radmit)) {
		rp->admitted = h->radmit;
		rp->admitted_since = now;
		return;
	}
	if (now - rp->admitted_since >= rp->lease_ms)
		clear_admitted(rp);
}

static void on_reap_read(void *arg, const struct store_sh_result *r)
{
	struct sh_reaper *rp = arg;
	rp->call = NULL;
	if (r->status != STORE_OK)
		return; /* the next poll reads again */
	int64_t now = clock_now_ms(rp->t->clock);
	watch_admitted(rp, &r->header, now);
	for (unsigned k = 0; k < r->nslots && k < STORE_SH_CAP; k++) {
		const struct lock_item *s = &r->slots[k];
		if (!s->has_owner)
			rp->watch[k].rvn[0] = '\0';
		else if (lt_sh_stale(&rp->watch[k], s, now))
			remove_slot(rp, k, s->owner);
	}
}

struct sh_reaper *lt_sh_reaper_new(struct locktable *t, const char *name)
{
	size_t n = strlen(name) + 1;
	struct sh_reaper *rp = calloc(1, sizeof(*rp) + n);
	if (rp != NULL) {
		rp->t = t;
		store_new_id(rp->id);
		memcpy(rp->name, name, n);
	}
	return rp;
}

static void clear_announcement(struct locktable *t, const char *name, const char *rvn);

/* Clears what of its announcement may stand (at the wait's end). */
static void clear_own(struct sh_reaper *rp)
{
	if (rp->xrvn[0] != '\0')
		clear_announcement(rp->t, rp->name, rp->xrvn);
	if (rp->xsent[0] != '\0' && strcmp(rp->xsent, rp->xrvn) != 0)
		clear_announcement(rp->t, rp->name, rp->xsent);
}

/* A refresh refused (no reader left, or another writer's stands): the
 * announcement an earlier poll wrote may stand all the same, and the
 * header says (make stress, seed 481853: forgotten, it stood after the
 * writer was granted, and readers were refused until they found it
 * stale). */
static void on_announced(void *arg, const struct store_sh_result *r)
{
	struct sh_reaper *rp = arg;
	rp->ann_call = NULL;
	if (r->status == STORE_OK) {
		memcpy(rp->xrvn, rp->xsent, sizeof(rp->xrvn));
		rp->xsent[0] = '\0';
	} else if (r->status == STORE_REFUSED) {
		rp->xsent[0] = '\0';
		if (strcmp(r->header.xwait, rp->id) == 0)
			snprintf(rp->xrvn, sizeof(rp->xrvn), "%s", r->header.xwait_rvn);
		else
			rp->xrvn[0] = '\0';
	}		 /* else its outcome unknown: either may stand, both are cleared */
	if (rp->freed) { /* the wait ended meanwhile: its clear comes now */
		clear_own(rp);
		free(rp);
	}
}

/* The announcement (re)written, a new rvn each poll, poll_ms its interval. */
static void announce(struct sh_reaper *rp, int64_t poll_ms)
{
	if (rp->ann_call != NULL)
		return;
	char rvn[LT_ID_LEN + 1];
	store_new_id(rvn);
	struct store_sh_req r = {.op = STORE_SH_XANNOUNCE,
				 .name = rp->name,
				 .cap = STORE_SH_CAP,
				 .owner = rp->id,
				 .rvn = rvn,
				 .lease_ms = poll_ms > 0 ? poll_ms : 1};
	rp->ann_call = store_sh_submit(rp->t->store, &r, on_announced, rp);
	if (rp->ann_call != NULL)
		snprintf(rp->xsent, sizeof(rp->xsent), "%s", rvn);
}

void lt_sh_reap(struct sh_reaper *rp, int64_t poll_ms, int64_t lease_ms)
{
	rp->lease_ms = lease_ms;
	announce(rp, poll_ms);
	if (rp->call != NULL)
		return;
	struct store_sh_req r = {.op = STORE_SH_READ, .name = rp->name, .cap = STORE_SH_CAP};
	rp->call = store_sh_submit(rp->t->store, &r, on_reap_read, rp);
}

static void on_cleared(void *arg, const struct store_sh_result *r)
{
	free(arg);
}

/* XCLEAR of the announcement of rvn (refused when another replaced it). */
static void clear_announcement(struct locktable *t, const char *name, const char *rvn)
{
	struct sh_removal *c = malloc(sizeof(*c)); /* for its lifetime alone */
	if (c == NULL)
		return;
	struct store_sh_req r = {
		.op = STORE_SH_XCLEAR, .name = name, .cap = STORE_SH_CAP, .seen_rvn = rvn};
	if (store_sh_submit(t->store, &r, on_cleared, c) == NULL)
		free(c);
}

void lt_sh_reaper_free(struct sh_reaper *rp, bool clear)
{
	if (rp == NULL)
		return;
	if (rp->call != NULL)
		store_cancel(rp->t->store, rp->call);
	rp->call = NULL;
	if (clear && rp->ann_call != NULL) {
		/* a clear sent now could land before that announcement (an
		 * answer cancelled does not stop its write), which would then
		 * stand until readers find it stale: clear once it answered */
		rp->freed = true;
		return;
	}
	if (rp->ann_call != NULL)
		store_cancel(rp->t->store, rp->ann_call);
	if (clear) /* done waiting: readers may come again */
		clear_own(rp);
	free(rp);
}
