/*
 * lsess_drain: the leases a draining replica keeps for their clients to
 * adopt elsewhere (see lsvc_drain in lsess.h).
 *
 * While the replica drains, a session that closes hands its adoptable
 * locks and leader terms (acquired or campaigned ADOPTABLE, or adopted:
 * they have a secret) here instead of releasing them: each is marked
 * orphaned on its item (lease_orphan) and goes on renewing, so that its
 * client, reconnected to another replica, can LOCK.ADOPT (LEADER.ADOPT)
 * it with its token and secret. An adopted one ends quietly at its next
 * renewal (LT_ADOPTED); the others are released by lsvc_release_orphans
 * at the end of the grace, each release conditioned on still owning it.
 * Leases without a secret and PostgreSQL sessions' locks are released at
 * close, as always.
 */
#include "gateway/lease/lsess_int.h"

#include <stdlib.h>

#include "gateway/obs/log.h"

struct ls_orphan {
	struct ls_orphan *prev, *next;
	struct lsvc *svc;
	struct lease *lease;
};

static void unlink_orphan(struct ls_orphan *o)
{
	if (o->prev != NULL)
		o->prev->next = o->next;
	else
		o->svc->orphans = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
}

/* The orphan ended: adopted elsewhere, or lost. */
static void orphan_ended(void *arg, struct lease *lease, enum lt_loss reason)
{
	struct ls_orphan *o = arg;
	struct lsvc *svc = o->svc;
	if (reason == LT_ADOPTED) {
		svc->drain.adopted++;
	} else {
		svc->drain.lost++;
		log_msg(LOG_LVL_WARN,
			"the orphaned lease of '%s' (token %lld) ended while draining: %s",
			lease_name(lease), (long long)lease_token(lease), ls_loss_text(reason));
	}
	unlink_orphan(o);
	free(o);
	lease_set_data(lease, NULL);
	lease_release(lease); /* ended: only freed */
}

static void orphan_marked(void *arg, int marked, const struct lt_error *err)
{
	struct lsvc *svc = arg;
	if (marked > 0)
		svc->drain.marked++;
	else if (err != NULL)
		log_msg(LOG_LVL_WARN,
			"a lease could not be marked orphaned (it cannot be adopted, "
			"and is released at the end of the drain): %s",
			err->message);
}

bool ls_orphan_take(struct ls_rec *rec)
{
	struct lsvc *svc = rec->owner->svc;
	struct lease *lease = rec->kind == LS_KIND_LEADER && rec->election != NULL
				      ? election_lease(rec->election)
				      : rec->lease;
	if (!svc->draining || lease == NULL || ls_rec_loss(rec) != LT_HELD ||
	    lease_secret_hash(lease) == NULL)
		return false;
	if (rec->kind == LS_KIND_LEADER) { /* the term's lease, its election gone */
		(void)election_give_lease(rec->election);
		rec->election = NULL;
	}
	struct ls_orphan *o = calloc(1, sizeof(*o));
	if (o == NULL)
		return false;
	o->svc = svc;
	o->lease = lease;
	o->next = svc->orphans;
	if (svc->orphans != NULL)
		svc->orphans->prev = o;
	svc->orphans = o;
	rec->lease = NULL;
	lease_set_data(lease, NULL);
	lease_on_lost(lease, orphan_ended, o);
	if (!lease_orphan(lease, orphan_marked, svc))
		log_msg(LOG_LVL_WARN, "out of memory marking the lease of '%s' orphaned",
			lease_name(lease));
	svc->drain.orphaned++;
	return true;
}

void lsvc_drain(struct lsvc *svc)
{
	svc->draining = true;
}

unsigned lsvc_release_orphans(struct lsvc *svc)
{
	unsigned n = 0;
	while (svc->orphans != NULL) {
		struct ls_orphan *o = svc->orphans;
		unlink_orphan(o);
		lease_on_lost(o->lease, NULL, NULL);
		lease_release(o->lease); /* conditioned on still owning it */
		free(o);
		n++;
	}
	svc->drain.released += n;
	return n;
}

void ls_orphans_free(struct lsvc *svc)
{
	while (svc->orphans != NULL) {
		struct ls_orphan *o = svc->orphans;
		unlink_orphan(o);
		lease_on_lost(o->lease, NULL, NULL);
		free(o);
	}
}

void lsvc_drain_stats(const struct lsvc *svc, struct lsvc_drain_stats *out)
{
	*out = svc->drain;
	out->held = 0;
	for (const struct ls_orphan *o = svc->orphans; o != NULL; o = o->next)
		out->held++;
}
