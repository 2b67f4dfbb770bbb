/*
 * lsess_shared: a session's shared holds of locks (PostgreSQL's
 * pg_advisory_lock_shared and its variants; see lsess.h), each a lease on
 * a slot of the name (core/lt_shared.h), counted per scope as the
 * session's exclusive holds are. A record of kind LS_KIND_SHARED holds
 * the lease; its loss is reported as a lock's.
 */
#include "gateway/lease/lsess_int.h"

#include <stdio.h>
#include <string.h>

static void on_lost(void *arg, struct sh_lease *l, enum lt_loss why)
{
	ls_rec_lost(arg, why);
}

/* A record for the granted lease l, held once in scope; NULL on
 * out-of-memory. */
static struct ls_rec *bind(struct lsess *s, struct sh_lease *l, enum ls_scope scope)
{
	const char *name = sh_lease_name(l);
	struct ls_rec *rec = ls_rec_new(s, LS_KIND_SHARED, name, strlen(name));
	if (rec == NULL)
		return NULL;
	rec->sh = l;
	rec->token = sh_lease_token(l);
	rec->holds[scope] = 1;
	sh_lease_on_lost(l, on_lost, rec);
	ls_rec_set(rec, LS_REC_HELD, LT_HELD);
	return rec;
}

static void granted(void *arg, struct sh_lease *l, const struct lt_error *err)
{
	struct lsess *s = arg;
	struct ls_result res;
	ls_done_cb cb;
	void *cb_arg;
	s->sh_acq = NULL;
	ls_wait_end(s, &cb, &cb_arg);
	ls_res_init(&res, LS_OK);
	if (err != NULL) {
		ls_res_err(&res, err);
	} else if (l == NULL) {
		res.status = LS_NONE;
	} else if (bind(s, l, s->acq_scope) == NULL) {
		sh_lease_release(l);
		ls_res_msg(&res, LS_FAILED, "out of memory");
	} else {
		res.token = sh_lease_token(l);
	}
	cb(cb_arg, &res); /* last: it may free s */
}

void ls_shared_drop(struct lsess *s)
{
	lt_sh_acquire_cancel(s->sh_acq); /* a grant that lands is released */
	s->sh_acq = NULL;
}

void ls_shared_release(struct ls_rec *rec, lt_renew_cb cb, void *arg)
{
	struct sh_lease *l = rec->sh;
	rec->sh = NULL;
	sh_lease_release_then(l, cb, arg);
}

enum ls_status ls_acquire_shared(struct lsess *s, const struct ls_acquire_req *req,
				 struct ls_result *now, ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1];
	int64_t lease_ms;
	ls_res_init(now, LS_OK);
	if (!ls_req_ok(s->svc, req, name, &lease_ms, now))
		return now->status;
	if (req->detach || req->adoptable)
		return ls_res_msg(now, LS_INVALID,
				  "a shared hold is neither detached nor adoptable");
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_SHARED, name, 0);
	if (rec != NULL && ls_rec_loss(rec) == LT_HELD) {
		rec->holds[req->scope]++;
		now->token = rec->token;
		return LS_OK;
	}
	const struct ls_rec *x = ls_rec_find(s, LS_KIND_LOCK, name, 0);
	if (x != NULL && ls_rec_loss(x) == LT_HELD)
		return ls_res_msg(now, LS_INVALID,
				  "this session holds '%s' exclusively: leasegate cannot add a "
				  "shared hold of the same session to it",
				  name);
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	if (rec != NULL) { /* a new acquire supersedes an unreported loss */
		if (rec->sh != NULL)
			sh_lease_release(rec->sh);
		ls_rec_forget(rec);
	}
	if (!ls_room(s, now))
		return now->status;
	struct lt_sh_args a = {
		.name = name,
		.mode = STORE_SH_SHARED,
		.cap = STORE_SH_CAP,
		.lease_ms = lease_ms,
		.wait = req->wait_ms >= 0,
		.timeout_ms = req->wait_ms > 0 ? req->wait_ms : 0,
		.holder = req->holder,
	};
	s->sh_acq = lt_sh_acquire(s->svc->lt, &a, granted, s);
	if (s->sh_acq == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	s->acq_scope = req->scope;
	ls_wait_begin(s, LS_WAIT_SHARED, cb, arg);
	return now->status = LS_PENDING;
}

static void released(void *arg, int r, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	ls_changed(op->svc, op->name);
	ls_res_init(&res, LS_OK);
	res.token = op->token;
	if (r < 0) /* the answer says so: the slot is not free */
		ls_unwritten(&res, op->name, err);
	ls_op_finish(op, &res);
}

enum ls_status ls_release_shared(struct lsess *s, const char *name, enum ls_scope scope,
				 struct ls_result *now, ls_done_cb cb, void *arg)
{
	ls_res_init(now, LS_NONE);
	if ((unsigned)scope >= LS_SCOPE_COUNT)
		return ls_res_msg(now, LS_INVALID, "bad scope");
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_SHARED, name, 0);
	if (rec == NULL)
		return LS_NONE;
	enum lt_loss loss = ls_rec_loss(rec);
	if (loss != LT_HELD)
		return ls_rec_report(rec, loss, now);
	if (rec->holds[scope] == 0)
		return LS_NONE;
	if (ls_rec_holds(rec) > 1) { /* held still, by another hold */
		rec->holds[scope]--;
		now->token = rec->token;
		return now->status = LS_OK;
	}
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, rec->name, rec->len, rec->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	ls_shared_release(rec, released, op);
	ls_rec_forget(rec);
	return now->status = LS_PENDING;
}
