/*
 * lsess_shared: a session's shared holds of locks (PostgreSQL's
 * pg_advisory_lock_shared and its variants; see lsess.h), each a lease on
 * a slot of the name (core/lt_shared.h), counted per scope as the
 * session's exclusive holds are. A record of kind LS_KIND_SHARED holds
 * the lease; its loss is reported as a lock's.
 */
#include "gateway/lease/lsess_int.h"

#include <stdio.h>
#include <stdlib.h>
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
	sh_lease_set_data(l, rec); /* its events name the session */
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
	} else if (s->acq_detach) { /* no session's: let go, told its secret */
		res.token = sh_lease_token(l);
		res.slot = (int)sh_lease_slot(l);
		snprintf(res.handle, sizeof(res.handle), "%d:%s", res.slot, s->acq_secret);
		sh_lease_let_go(l);
	} else if (bind(s, l, s->acq_scope) == NULL) {
		sh_lease_release(l);
		ls_res_msg(&res, LS_FAILED, "out of memory");
	} else {
		res.token = sh_lease_token(l);
		res.slot = (int)sh_lease_slot(l);
	}
	s->acq_detach = false;
	s->acq_secret[0] = '\0';
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

/* The slot owner of a detached hold: made from its secret, so that the
 * secret names the hold (a table's reader learns nothing from it). */
static bool owner_of(const char *secret, size_t len, char owner[STORE_ID_MAX + 1])
{
	char hash[STORE_SECRET_HASH_LEN + 1];
	if (!ls_secret_hash(secret, len, hash))
		return false;
	snprintf(owner, STORE_ID_MAX + 1, "s:%.30s", hash); /* never an id's: ids are hex */
	return true;
}

bool ls_shared_detached(const char *owner)
{
	return strncmp(owner, "s:", 2) == 0;
}

/* The wait of an acquire, owner its holder's id (NULL: a new one). */
static enum ls_status start(struct lsess *s, const struct ls_acquire_req *req, const char *name,
			    int64_t lease_ms, const char *owner, struct ls_result *now,
			    ls_done_cb cb, void *arg)
{
	struct lt_sh_args a = {
		.name = name,
		.mode = req->limit > 0 ? STORE_SH_LIMIT : STORE_SH_SHARED,
		.cap = req->limit > 0 ? req->limit : STORE_SH_CAP,
		.lease_ms = lease_ms,
		.wait = req->wait_ms >= 0,
		.timeout_ms = req->wait_ms > 0 ? req->wait_ms : 0,
		.holder = req->holder,
		.owner = owner,
		.trace_parent = &req->trace,
	};
	s->sh_acq = lt_sh_acquire(s->svc->lt, &a, granted, s);
	if (s->sh_acq == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	s->acq_scope = req->scope;
	s->acq_detach = owner != NULL;
	ls_wait_begin(s, LS_WAIT_SHARED, cb, arg);
	return now->status = LS_PENDING;
}

/* A detached hold: no record, any number per session; its secret made
 * now, its owner from it. */
static enum ls_status acquire_detached(struct lsess *s, const struct ls_acquire_req *req,
				       const char *name, int64_t lease_ms, struct ls_result *now,
				       ls_done_cb cb, void *arg)
{
	char hash[STORE_SECRET_HASH_LEN + 1], owner[STORE_ID_MAX + 1];
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	if (!ls_secret_new(s->acq_secret, hash) || !owner_of(s->acq_secret, LS_SECRET_LEN, owner)) {
		s->acq_secret[0] = '\0';
		return ls_res_msg(now, LS_FAILED, "no random bytes for the hold's secret");
	}
	enum ls_status st = start(s, req, name, lease_ms, owner, now, cb, arg);
	if (st != LS_PENDING)
		s->acq_secret[0] = '\0';
	return st;
}

enum ls_status ls_acquire_shared(struct lsess *s, const struct ls_acquire_req *req,
				 struct ls_result *now, ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1];
	int64_t lease_ms;
	ls_res_init(now, LS_OK);
	if (!ls_req_ok(s->svc, req, name, &lease_ms, now))
		return now->status;
	if (req->adoptable)
		return ls_res_msg(now, LS_INVALID, "a shared hold is not adoptable");
	if (req->limit > STORE_SH_CAP)
		return ls_res_msg(now, LS_INVALID, "LIMIT must be 1 to %d", STORE_SH_CAP);
	if (req->detach)
		return acquire_detached(s, req, name, lease_ms, now, cb, arg);
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_SHARED, name, 0);
	if (rec != NULL && ls_rec_loss(rec) == LT_HELD) {
		now->token = rec->token;
		now->slot = (int)sh_lease_slot(rec->sh);
		if (!req->reentrant)
			return ls_res_msg(now, LS_CONFLICT,
					  "this connection holds '%s' shared already (token %lld)",
					  name, (long long)rec->token);
		rec->holds[req->scope]++;
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
	return start(s, req, name, lease_ms, NULL, now, cb, arg);
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

/* --- by the session's own shared hold (ls_release, ls_renew) --- */

struct ls_rec *ls_shared_find(struct lsess *s, const char *name, int64_t token)
{
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_SHARED, name, 0);
	return rec != NULL && (token == 0 || rec->token == token) ? rec : NULL;
}

enum ls_status ls_shared_drop_all(struct lsess *s, struct ls_rec *rec, struct ls_result *now,
				  ls_done_cb cb, void *arg)
{
	if (ls_rec_loss(rec) == LT_HELD) { /* one hold left: released now */
		rec->holds[LS_SCOPE_XACT] = 0;
		rec->holds[LS_SCOPE_SESSION] = 1;
	}
	return ls_release_shared(s, rec->name, LS_SCOPE_SESSION, now, cb, arg);
}

static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (op->sess == NULL) {
		ls_op_finish(op, NULL);
		return;
	}
	ls_res_init(&res, r == 1 ? LS_OK : LS_NONE);
	res.token = op->token;
	struct ls_rec *rec = ls_shared_find(op->sess, op->name, op->token);
	if (err != NULL)
		ls_res_err(&res, err);
	else if (r == 0 && rec != NULL && ls_rec_loss(rec) != LT_HELD)
		ls_rec_report(rec, ls_rec_loss(rec), &res); /* lost meanwhile: told once */
	ls_op_finish(op, &res);
}

enum ls_status ls_shared_renew(struct lsess *s, struct ls_rec *rec, struct ls_result *now,
			       ls_done_cb cb, void *arg)
{
	enum lt_loss loss = ls_rec_loss(rec);
	if (loss != LT_HELD)
		return ls_rec_report(rec, loss, now);
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, rec->name, rec->len, rec->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	if (!sh_lease_renew(rec->sh, renewed, op)) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_INVALID, "a renewal of '%s' is in flight", rec->name);
	}
	return now->status = LS_PENDING;
}

/* --- ls_state of a name held shared --- */

struct state_op {
	struct ls_op *op;
	struct lt_state st;
};

static void holders_read(void *arg, const struct lt_sh_state *sh, const struct lt_error *err)
{
	struct state_op *so = arg;
	struct ls_op *op = so->op;
	struct ls_result res;
	ls_res_init(&res, LS_OK);
	if (err != NULL) {
		ls_res_err(&res, err);
	} else {
		res.st = so->st;
		res.sh = sh;
		struct ls_rec *rec =
			op->sess != NULL ? ls_shared_find(op->sess, op->name, 0) : NULL;
		res.mine = rec != NULL && ls_rec_loss(rec) == LT_HELD;
		res.slot = res.mine ? (int)sh_lease_slot(rec->sh) : -1;
	}
	free(so);
	ls_op_finish(op, op->sess != NULL ? &res : NULL);
}

bool ls_state_holders(struct ls_op *op, const struct lt_state *st)
{
	struct state_op *so = malloc(sizeof(*so));
	if (so == NULL)
		return false;
	so->op = op;
	so->st = *st;
	if (!lt_sh_state(op->svc->lt, op->name, holders_read, so)) {
		free(so);
		return false;
	}
	return true;
}

/* --- a holder by its slot: a detached hold's secret, an operator --- */

bool ls_shared_handle(const char *secret, size_t len, unsigned *slot, char owner[STORE_ID_MAX + 1])
{
	size_t i = 0;
	unsigned k = 0;
	while (i < len && i < 2 && secret[i] >= '0' && secret[i] <= '9')
		k = k * 10 + (unsigned)(secret[i++] - '0');
	if (i == 0 || i >= len || secret[i] != ':' || k >= STORE_SH_CAP ||
	    len - i - 1 != LS_SECRET_LEN)
		return false;
	*slot = k;
	return owner_of(secret + i + 1, LS_SECRET_LEN, owner);
}

static void foreign_done(void *arg, int r, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	ls_res_init(&res, r == 1 ? LS_OK : LS_NONE);
	res.token = op->token;
	if (err != NULL)
		ls_res_err(&res, err);
	if (r == 1)
		ls_changed(op->svc, op->name); /* a renewal changes nothing here: harmless */
	ls_op_finish(op, op->sess != NULL ? &res : NULL);
}

enum ls_status ls_shared_foreign(struct lsess *s, const char *name,
				 const struct lt_sh_foreign_req *fr, struct ls_result *now,
				 ls_done_cb cb, void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, name, strlen(name), buf, now))
		return now->status;
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, buf, strlen(buf), fr->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	struct lt_sh_foreign_req req = *fr;
	req.name = op->name;
	if (!lt_sh_foreign(s->svc->lt, &req, foreign_done, op)) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return now->status = LS_PENDING;
}

enum ls_status ls_shared_force(struct lsess *s, const char *name, size_t name_len, unsigned slot,
			       struct ls_result *now, ls_done_cb cb, void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, name, name_len, buf, now))
		return now->status;
	if (slot >= STORE_SH_CAP)
		return ls_res_msg(now, LS_INVALID, "SLOT must be 0 to %d", STORE_SH_CAP - 1);
	struct lt_sh_foreign_req fr = {.name = buf, .slot = slot, .op = LT_SH_FORCE};
	return ls_shared_foreign(s, buf, &fr, now, cb, arg);
}

bool ls_held_shared(const struct lsess *s, const char *name, size_t name_len, int64_t *token)
{
	char buf[STORE_NAME_MAX + 1];
	if (name_len == 0 || name_len > STORE_NAME_MAX || memchr(name, '\0', name_len) != NULL)
		return false;
	memcpy(buf, name, name_len);
	buf[name_len] = '\0';
	const struct ls_rec *rec = ls_rec_find(s, LS_KIND_SHARED, buf, 0);
	if (rec == NULL || ls_rec_loss(rec) != LT_HELD)
		return false;
	if (token != NULL)
		*token = rec->token;
	return true;
}
