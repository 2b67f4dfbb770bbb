/*
 * election: contend, lead a term, contend again — on top of lt_acquire.
 *
 * One owner id serves every attempt of one contention, so an acquire retried
 * after a transient error finds its own owner if the first write landed; a
 * new term gets a new id.
 */
#include "core/election.h"

#include "core/lt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct election {
	struct locktable *t;
	struct election_cbs cbs;
	void *arg;
	struct lt_wait *wait;
	struct lease *lease;
	struct timer retry;
	int64_t lease_ms;
	bool one_term, idle, outage;
	int64_t outage_start, retries;
	struct trace_ctx trace_parent;
	char *holder;
	char owner[LT_ID_LEN + 1];
	char secret_hash[STORE_SECRET_HASH_LEN + 1]; /* "" none: not adoptable */
	char name[];
};

static void contend(struct election *e);

static void emit(struct election *e, enum obs_event_id id, const char *reason,
		 const struct lt_error *err, int64_t token, int64_t wait_ms)
{
	struct obs_event ev = {
		.id = id,
		.lock = e->name,
		.table = lt_table(e->t),
		.holder = e->holder != NULL ? e->holder : e->t->holder_label,
		.reason = reason,
		.error_type = err != NULL ? err->error_type : NULL,
		.message = err != NULL ? err->message : NULL,
		.token = token,
		.wait_ms = wait_ms,
		.retries = e->retries,
		.ctx = e->arg,
	};
	obs_emit(e->t->obs, &ev);
}

/* The store answered (the lock found free or held): an outage is over. */
static void on_answered(void *arg)
{
	struct election *e = arg;
	if (!e->outage)
		return;
	emit(e, OBS_CONTEND_RECOVERED, NULL, NULL, 0, clock_now_ms(e->t->clock) - e->outage_start);
	e->outage = false;
	e->retries = 0;
}

static void on_lost(void *arg, struct lease *lease, enum lt_loss reason)
{
	struct election *e = arg;
	emit(e, OBS_NO_LONGER_LEADS, "lease_lost", NULL, lease_token(lease), 0);
	e->lease = NULL;
	lease_release(lease); /* lost: frees it, sends nothing */
	if (e->one_term)
		e->idle = true;
	else
		contend(e);
	if (e->cbs.lost != NULL)
		e->cbs.lost(e->arg, reason); /* last: it may stop e */
}

static void on_acquired(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct election *e = arg;
	e->wait = NULL;
	if (err != NULL) {
		if (err->status != STORE_TRANSIENT) {
			e->idle = true;
			if (e->cbs.failed != NULL)
				e->cbs.failed(e->arg, err);
			return;
		}
		obs_count(&e->t->obs->contention_retries, err->error_type);
		e->retries++;
		if (!e->outage) {
			e->outage = true;
			e->outage_start = clock_now_ms(e->t->clock);
			emit(e, OBS_CONTEND_FAILED, NULL, err, 0, e->lease_ms / 3);
		}
		timer_arm(&e->retry, e->lease_ms / 3);
		return;
	}
	if (lease == NULL) { /* cannot happen without a timeout; contend again */
		contend(e);
		return;
	}
	store_new_id(e->owner); /* the next term is a new acquire */
	if (!lease_held(lease)) {
		/* Answered after a whole lease: no term; contend again. */
		lease_release(lease);
		contend(e);
		return;
	}
	e->lease = lease;
	lease_on_lost(lease, on_lost, e);
	emit(e, OBS_LEADS, NULL, NULL, lease_token(lease), 0);
	if (e->cbs.lead != NULL)
		e->cbs.lead(e->arg, lease);
}

static void contend(struct election *e)
{
	struct lt_acquire_args a = {
		.name = e->name,
		.lease_ms = e->lease_ms,
		.wait = true,
		.holder = e->holder,
		.owner = e->owner,
		.answered = on_answered,
		.trace_parent = &e->trace_parent,
		.span_name = "Leader.Campaign",
		.secret_hash = e->secret_hash[0] != '\0' ? e->secret_hash : NULL,
	};
	e->wait = lt_acquire(e->t, &a, on_acquired, e);
	if (e->wait == NULL) /* out of memory: try again later */
		timer_arm(&e->retry, e->lease_ms / 3);
}

static void retry_due(void *arg)
{
	contend(arg);
}

/* A new election of args, not contending yet; NULL with msg said. */
static struct election *election_new(struct locktable *t, const struct election_args *args,
				     const struct election_cbs *cbs, void *arg, char *msg,
				     size_t msglen)
{
	struct lt_acquire_args a = {.name = args->name,
				    .lease_ms = args->lease_ms,
				    .holder = args->holder,
				    .secret_hash = args->secret_hash};
	if (!lt_args_valid(&a, msg, msglen))
		return NULL;
	size_t len = strlen(args->name);
	struct election *e = calloc(1, sizeof(*e) + len + 1);
	if (e == NULL || (args->holder != NULL && (e->holder = strdup(args->holder)) == NULL)) {
		free(e);
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	memcpy(e->name, args->name, len + 1);
	e->t = t;
	e->cbs = *cbs;
	e->arg = arg;
	e->lease_ms = args->lease_ms;
	e->one_term = args->one_term;
	if (args->trace_parent != NULL)
		e->trace_parent = *args->trace_parent;
	if (args->secret_hash != NULL)
		snprintf(e->secret_hash, sizeof(e->secret_hash), "%s", args->secret_hash);
	store_new_id(e->owner);
	timer_init(&e->retry, t->clock, retry_due, e);
	return e;
}

struct election *election_start(struct locktable *t, const struct election_args *args,
				const struct election_cbs *cbs, void *arg, char *msg, size_t msglen)
{
	struct election *e = election_new(t, args, cbs, arg, msg, msglen);
	if (e != NULL)
		contend(e);
	return e;
}

struct election *election_adopted(struct locktable *t, const struct election_args *args,
				  struct lease *lease, const struct election_cbs *cbs, void *arg)
{
	char msg[128];
	struct election *e = election_new(t, args, cbs, arg, msg, sizeof(msg));
	if (e == NULL)
		return NULL;
	e->lease = lease;
	lease_on_lost(lease, on_lost, e);
	emit(e, OBS_LEADS, NULL, NULL, lease_token(lease), 0);
	return e;
}

struct lease *election_give_lease(struct election *e)
{
	struct lease *l = e->lease;
	timer_cancel(&e->retry);
	lt_acquire_cancel(e->wait);
	if (l != NULL)
		lease_on_lost(l, NULL, NULL);
	free(e->holder);
	free(e);
	return l;
}

struct lease *election_lease(const struct election *e)
{
	return e->lease;
}

void election_stop_then(struct election *e, enum election_end how, lt_renew_cb cb, void *arg)
{
	timer_cancel(&e->retry);
	lt_acquire_cancel(e->wait);
	if (e->lease != NULL) {
		emit(e, OBS_NO_LONGER_LEADS, election_end_name(how), NULL, lease_token(e->lease),
		     0);
		if (cb != NULL)
			lease_release_then(e->lease, cb, arg);
		else
			lease_release(e->lease);
	} else if (cb != NULL) {
		cb(arg, 0, NULL);
	}
	free(e->holder);
	free(e);
}

void election_stop(struct election *e, enum election_end how)
{
	if (e != NULL)
		election_stop_then(e, how, NULL, NULL);
}

const char *election_end_name(enum election_end how)
{
	static const char *const names[] = {
		[ELECTION_LEASE_LOST] = "lease_lost",
		[ELECTION_CANCELLED] = "cancelled",
		[ELECTION_WORK_RETURNED] = "work_returned",
	};
	return (unsigned)how <= ELECTION_WORK_RETURNED ? names[how] : "?";
}
