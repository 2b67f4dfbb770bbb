/*
 * lsess_lead: leader terms of a session — campaign and resign.
 *
 * A campaign is a one-term election of the core: the session contends
 * (transient store errors retried inside, logged 44/49) until it leads, and
 * the term lasts until resign (the lock is handed on), the session closes
 * (released) or the lease is lost (told through ops->lost, and answered
 * LS_LOST to the next campaign or resign of that name; the client then
 * campaigns again). A campaign while leading answers the term's token
 * without a request, so it doubles as "do I still lead?". See lsess.h.
 */
#include "gateway/lease/lsess_int.h"

#include <stdio.h>
#include <string.h>

void ls_term_end(struct ls_rec *rec, enum election_end how)
{
	election_stop(rec->election, how);
	ls_rec_forget(rec);
}

/* The campaign of s is answered: it waits no more. Returns the callback. */
static void campaign_over(struct lsess *s, ls_done_cb *cb, void **arg)
{
	s->campaign = NULL;
	timer_cancel(&s->campaign_timer);
	ls_wait_end(s, cb, arg);
}

static bool is_campaign(const struct ls_rec *rec)
{
	const struct lsess *s = rec->owner;
	return s->wait_kind == LS_WAIT_CAMPAIGN && s->campaign == rec;
}

static void on_lead(void *arg, struct lease *lease)
{
	struct ls_rec *rec = arg;
	struct lsess *s = rec->owner;
	rec->lease = lease;
	rec->token = lease_token(lease);
	lease_set_data(lease, rec);
	ls_rec_set(rec, LS_REC_HELD, LT_HELD);
	ls_changed(s->svc, rec->name);
	if (is_campaign(rec)) {
		struct ls_result res;
		ls_done_cb cb;
		void *cb_arg;
		campaign_over(s, &cb, &cb_arg);
		ls_res_init(&res, LS_OK);
		res.token = rec->token;
		memcpy(res.secret, s->acq_secret, sizeof(res.secret)); /* ADOPTABLE: told once */
		s->acq_secret[0] = '\0';
		cb(cb_arg, &res); /* last: it may free s */
	}
}

static void on_term_lost(void *arg, enum lt_loss reason)
{
	struct ls_rec *rec = arg;
	rec->lease = NULL; /* the election released it */
	ls_rec_lost(rec, reason);
}

static void on_failed(void *arg, const struct lt_error *err)
{
	struct ls_rec *rec = arg;
	struct lsess *s = rec->owner;
	struct ls_result res;
	ls_done_cb cb = NULL;
	void *cb_arg = NULL;
	if (is_campaign(rec))
		campaign_over(s, &cb, &cb_arg);
	ls_res_init(&res, LS_OK);
	ls_res_err(&res, err);
	ls_term_end(rec, ELECTION_CANCELLED);
	if (cb != NULL)
		cb(cb_arg, &res);
}

static const struct election_cbs campaign_cbs = {
	.lead = on_lead, .lost = on_term_lost, .failed = on_failed};

void ls_campaign_due(void *arg)
{
	struct lsess *s = arg;
	struct ls_rec *rec = s->campaign;
	struct ls_result res;
	ls_done_cb cb;
	void *cb_arg;
	if (rec == NULL || s->wait_kind != LS_WAIT_CAMPAIGN)
		return;
	campaign_over(s, &cb, &cb_arg);
	ls_term_end(rec, ELECTION_CANCELLED);
	ls_res_init(&res, LS_NONE);
	cb(cb_arg, &res);
}

void ls_campaign_drop(struct lsess *s)
{
	struct ls_rec *rec = s->campaign;
	s->campaign = NULL;
	timer_cancel(&s->campaign_timer);
	if (rec != NULL)
		ls_term_end(rec, ELECTION_CANCELLED);
}

enum ls_status ls_campaign(struct lsess *s, const struct ls_acquire_req *req, struct ls_result *now,
			   ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1], msg[160];
	int64_t lease_ms;
	ls_res_init(now, LS_OK);
	if (!ls_req_ok(s->svc, req, name, &lease_ms, now))
		return now->status;
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_LEADER, name, 0);
	enum lt_loss lost = rec != NULL ? ls_rec_loss(rec) : LT_HELD;
	if (rec != NULL && lost == LT_HELD && rec->state == LS_REC_HELD) {
		now->token = rec->token; /* leads already: this term */
		return LS_OK;
	}
	if (rec != NULL && lost != LT_HELD) {
		/* A lost term is answered once, here as on resign, so a client
		 * that checks its term with a campaign learns it lost it rather
		 * than waiting for (or getting) a new term unawares. The next
		 * campaign starts a new term. */
		return ls_rec_report(rec, lost, now);
	}
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	if (rec != NULL) /* campaigning without a wait: cannot be; start anew */
		ls_term_end(rec, ELECTION_LEASE_LOST);
	if (!ls_room(s, now))
		return now->status;
	char hash[STORE_SECRET_HASH_LEN + 1];
	s->acq_secret[0] = '\0';
	if (req->adoptable && !ls_secret_new(s->acq_secret, hash))
		return ls_res_msg(now, LS_FAILED, "no random bytes for the term's secret");
	if ((rec = ls_rec_new(s, LS_KIND_LEADER, name, req->name_len)) == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	struct election_args ea = {.name = name,
				   .lease_ms = lease_ms,
				   .holder = req->holder,
				   .one_term = true,
				   .trace_parent = &req->trace,
				   .secret_hash = req->adoptable ? hash : NULL};
	rec->election = election_start(s->svc->lt, &ea, &campaign_cbs, rec, msg, sizeof(msg));
	if (rec->election == NULL) {
		ls_rec_forget(rec);
		return ls_res_msg(now, LS_FAILED, "%s", msg);
	}
	s->campaign = rec;
	if (req->wait_ms > 0)
		timer_arm(&s->campaign_timer, req->wait_ms);
	ls_wait_begin(s, LS_WAIT_CAMPAIGN, cb, arg);
	return now->status = LS_PENDING;
}

struct ls_rec *ls_bind_term(struct lsess *s, struct lease *lease)
{
	const char *name = lease_name(lease);
	struct ls_rec *rec = ls_rec_new(s, LS_KIND_LEADER, name, strlen(name));
	if (rec == NULL)
		return NULL;
	struct election_args ea = {.name = name,
				   .lease_ms = lease_duration_ms(lease),
				   .holder = lease_holder(lease),
				   .one_term = true,
				   .secret_hash = lease_secret_hash(lease)};
	rec->election = election_adopted(s->svc->lt, &ea, lease, &campaign_cbs, rec);
	if (rec->election == NULL) {
		ls_rec_forget(rec);
		return NULL;
	}
	rec->lease = lease;
	rec->token = lease_token(lease);
	lease_set_data(lease, rec);
	ls_rec_set(rec, lease_loss(lease) == LT_HELD ? LS_REC_HELD : LS_REC_LOST,
		   lease_loss(lease));
	ls_changed(s->svc, rec->name);
	return rec;
}

static void resigned(void *arg, int released, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	ls_changed(op->svc, op->name); /* watchers read what the release wrote */
	ls_res_init(&res, LS_OK);
	res.token = op->token;
	if (released < 0) /* the answer says so: the lock is not free */
		ls_unwritten(&res, op->name, err);
	ls_op_finish(op, &res);
}

enum ls_status ls_resign(struct lsess *s, const char *name, struct ls_result *now, ls_done_cb cb,
			 void *arg)
{
	ls_res_init(now, LS_NONE);
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_LEADER, name, 0);
	if (rec == NULL || rec->state == LS_REC_CAMPAIGNING)
		return LS_NONE;
	enum lt_loss lost = ls_rec_loss(rec);
	if (lost != LT_HELD)
		return ls_rec_report(rec, lost, now);
	/* answered once the release is done, so that what the client does
	 * next (a watch, here or on another replica) sees it */
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, rec->name, rec->len, rec->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	/* stopped first: its event names the session through rec */
	election_stop_then(rec->election, ELECTION_WORK_RETURNED, resigned, op); /* handed on */
	ls_rec_forget(rec);
	return now->status = LS_PENDING;
}
