/*
 * sim_adopt: hand-overs of leases between replicas, as a draining
 * replica's (LOCK.ADOPT, core/lt_adopt.c). A holder whose lease has a
 * secret sometimes leaves it orphaned (lease_orphan: its connection closed
 * on a draining replica) instead of releasing it; its replica goes on
 * renewing the orphan, and an idle client of any replica may adopt it
 * (lt_adopt) while those renewals are in flight and other replicas' waiters
 * count the rvn. Nobody adopting within a lease, the replica releases it
 * (the end of its grace). The old replica learns of an adopt at its next
 * renewal (LT_ADOPTED) and frees the orphan.
 *
 * The checker sees the adopter as a holder like any other (one holder at a
 * time, within its lease), and its token must be the lock's last granted:
 * an adopt never brings back an older lease.
 */
#include "tests/sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HANDOVERS_MAX (SIM_REPLICAS_MAX * SIM_CLIENTS_MAX)

struct handover;
struct adopt_call {
	struct handover *h;
	struct sim_client *c;
};

/* A slot is free again once nothing points at it: no adopt in flight
 * (its callback's argument) and the orphan ended (its lost callback's). */
struct handover {
	bool used;
	bool adopting;		    /* an adopt of it in flight */
	bool adopted;		    /* done: the orphan ends at its next renewal */
	struct replica *from;	    /* its lease lives in from's locktable... */
	int from_inc;		    /* ... of this incarnation */
	struct lease *lease;	    /* NULL once ended (adopted, lost, released) */
	struct timer grace;	    /* on from's clock */
	struct adopt_call *pending; /* the adopt in flight's (freed if never answered) */
	int64_t token;
	char name[SIM_NAME_MAX + 1];
	char hash[STORE_SECRET_HASH_LEN + 1];
};

static struct handover H[HANDOVERS_MAX];

static bool alive(const struct handover *h)
{
	return h->from->incarnation == h->from_inc && !h->from->dead;
}

static void maybe_drop(struct handover *h)
{
	if (h->adopting || h->lease != NULL)
		return;
	if (alive(h))
		timer_cancel(&h->grace);
	h->used = false;
}

/* The orphan ended on its replica: adopted elsewhere, or lost. */
static void orphan_ended(void *arg, struct lease *lease, enum lt_loss reason)
{
	struct handover *h = arg;
	sim_log("adpt %s orphan of %s token %lld ended: %s", h->from->label, h->name,
		(long long)h->token, lt_loss_name(reason));
	h->lease = NULL;
	lease_release(lease); /* ended: frees it */
	maybe_drop(h);
}

/* The grace is over: the replica releases what nobody adopted. */
static void grace_over(void *arg)
{
	struct handover *h = arg;
	timer_cancel(&h->grace); /* when called at the end */
	if (h->lease != NULL) {	 /* adopted meanwhile: refused, as the table says */
		sim_log("adpt %s releases the orphan of %s token %lld", h->from->label, h->name,
			(long long)h->token);
		lease_on_lost(h->lease, NULL, NULL);
		lease_release(h->lease);
		h->lease = NULL;
	}
	maybe_drop(h);
}

static void marked(void *arg, int v, const struct lt_error *err)
{
	(void)arg;
	(void)v;
	(void)err;
}

bool sim_adopt_leave(struct replica *r, struct lease *l, const char *hash)
{
	struct handover *h = NULL;
	for (int i = 0; i < HANDOVERS_MAX && h == NULL; i++)
		if (!H[i].used)
			h = &H[i];
	if (h == NULL || !lease_held(l))
		return false;
	*h = (struct handover){.used = true,
			       .from = r,
			       .from_inc = r->incarnation,
			       .lease = l,
			       .token = lease_token(l)};
	snprintf(h->name, sizeof(h->name), "%s", lease_name(l));
	snprintf(h->hash, sizeof(h->hash), "%s", hash);
	lease_set_data(l, NULL);
	lease_on_lost(l, orphan_ended, h);
	if (!lease_orphan(l, marked, NULL))
		sim_violation("lease_orphan refused");
	timer_init(&h->grace, r->clock, grace_over, h);
	timer_arm(&h->grace, 2 * SIM->cfg.lease_ms);
	sim_log("adpt %s leaves %s token %lld orphaned", r->label, h->name, (long long)h->token);
	return true;
}

static void adopted(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct adopt_call *a = arg;
	struct handover *h = a->h;
	h->adopting = false;
	h->pending = NULL;
	if (lease != NULL) {
		h->adopted = true;
		if (lease_held(lease)) /* answered after a whole lease: ended, held by none */
			sim_check_adopted(h->name, lease_token(lease), h->token);
	}
	sim_adopt_done(a->c, lease, h->token);
	maybe_drop(h);
	free(a);
}

bool sim_adopt_try(struct sim_client *c, struct replica *r, const char *new_hash)
{
	for (int i = 0; i < HANDOVERS_MAX; i++) {
		struct handover *h = &H[i];
		if (!h->used || h->adopting || h->adopted || (h->from == r && alive(h)))
			continue;
		struct adopt_call *a = calloc(1, sizeof(*a));
		if (a == NULL)
			abort();
		*a = (struct adopt_call){.h = h, .c = c};
		struct lt_adopt_args args = {.name = h->name,
					     .token = h->token,
					     .secret_hash = h->hash,
					     .new_secret_hash = new_hash};
		if (!lt_adopt(r->lt, &args, adopted, a)) {
			sim_violation("lt_adopt refused valid arguments");
			free(a);
			return false;
		}
		h->adopting = true;
		h->pending = a;
		sim_log("adpt %s adopts %s token %lld", r->label, h->name, (long long)h->token);
		return true;
	}
	return false;
}

void sim_adopt_crash(struct replica *r)
{
	/* the orphans stay on the items (adoptable still); their leases went
	 * with the process: never touched again */
	for (int i = 0; i < HANDOVERS_MAX; i++)
		if (H[i].used && H[i].from == r && H[i].from_inc == r->incarnation) {
			H[i].lease = NULL;
			H[i].from_inc = -1;
			maybe_drop(&H[i]);
		}
}

void sim_adopt_end(void)
{
	for (int i = 0; i < HANDOVERS_MAX; i++)
		if (H[i].used && alive(&H[i]))
			grace_over(&H[i]);
}

void sim_adopt_reset(void)
{
	for (int i = 0; i < HANDOVERS_MAX; i++)
		free(H[i].pending); /* adopts a dead replica never answered */
	memset(H, 0, sizeof(H));
}
