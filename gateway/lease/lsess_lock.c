/*
 * lsess_lock: the lock operations of a session — acquire (reentrant holds
 * per scope over one lease), renew, release, release of a scope, state —
 * and (name, token) addressing across the sessions of the replica.
 * See lsess.h.
 */
#include "gateway/lease/lsess_int.h"

#include <stdio.h>
#include <string.h>

/* --- acquire --- */

static void on_lost(void *arg, struct lease *lease, enum lt_loss reason)
{
	struct ls_rec *rec = arg;
	if (reason != LT_RELEASED && reason != LT_ADOPTED) {
		ls_rec_lost(rec, reason);
		return;
	}
	/* released by (name, token) from elsewhere: ended as by a release of
	 * the session's own, so its next operation finds nothing */
	struct lsvc *svc = rec->owner->svc;
	char name[STORE_NAME_MAX + 1];
	memcpy(name, rec->name, rec->len + 1);
	lease_set_data(lease, NULL);
	ls_rec_forget(rec);
	lease_release(lease); /* ended: only freed */
	ls_changed(svc, name);
}

struct ls_rec *ls_bind_lease(struct lsess *s, struct lease *lease, enum ls_scope scope)
{
	const char *name = lease_name(lease);
	struct ls_rec *rec = ls_rec_new(s, LS_KIND_LOCK, name, strlen(name));
	if (rec == NULL)
		return NULL;
	rec->lease = lease;
	rec->token = lease_token(lease);
	rec->holds[scope] = 1;
	lease_set_data(lease, rec);
	lease_on_lost(lease, on_lost, rec);
	/* a reply after a whole lease yields an ended lease: the token is
	 * answered, the next operation says LOST */
	ls_rec_set(rec, lease_loss(lease) == LT_HELD ? LS_REC_HELD : LS_REC_LOST,
		   lease_loss(lease));
	ls_changed(s->svc, rec->name);
	return rec;
}

static void acquired(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct lsess *s = arg;
	struct ls_result res;
	ls_done_cb cb;
	void *cb_arg;
	s->acq = NULL;
	ls_wait_end(s, &cb, &cb_arg);
	ls_res_init(&res, LS_OK);
	if (err != NULL) {
		ls_res_err(&res, err);
	} else if (lease == NULL) {
		res.status = LS_NONE;
	} else if (s->acq_detach) {
		if (lease_loss(lease) != LT_HELD) { /* answered after a whole lease */
			res.loss = lease_loss(lease);
			lease_release(lease);
			ls_res_msg(&res, LS_LOST, "%s", ls_loss_text(res.loss));
		} else {
			res.token = lease_detach(lease);
		}
	} else if (ls_bind_lease(s, lease, s->acq_scope) == NULL) {
		lease_release(lease);
		ls_res_msg(&res, LS_FAILED, "out of memory");
	} else {
		res.token = lease_token(lease);
	}
	if (res.status == LS_OK) /* the secret is told once, to the acquirer */
		memcpy(res.secret, s->acq_secret, sizeof(res.secret));
	s->acq_secret[0] = '\0';
	cb(cb_arg, &res); /* last: it may free s */
}

/* The owner id of a detached lease: "d:" + the client's value (taken by
 * value: Redis's rules, any connection's DEL ends it), or "a:" + a new id
 * (LOCK.ACQUIRE DETACH: ended by its token, or by the force-release
 * right). False with now set when the value is bad. */
static bool detached_owner(const struct ls_acquire_req *req, char *owner, struct ls_result *now)
{
	if (req->owner == NULL) {
		memcpy(owner, LS_ACQUIRED_PREFIX, 2);
		store_new_id(owner + 2);
		return true;
	}
	memcpy(owner, LS_VALUE_PREFIX, 2);
	if (!ls_value_ok(req->owner, req->owner_len)) {
		ls_res_msg(now, LS_INVALID, "a lock value must be 1 to %d printable ASCII bytes",
			   LS_VALUE_MAX);
		return false;
	}
	memcpy(owner + 2, req->owner, req->owner_len);
	owner[2 + req->owner_len] = '\0';
	return true;
}

enum ls_status ls_acquire(struct lsess *s, const struct ls_acquire_req *req, struct ls_result *now,
			  ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1];
	int64_t lease_ms;
	ls_res_init(now, LS_OK);
	if (!ls_req_ok(s->svc, req, name, &lease_ms, now))
		return now->status;
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_LOCK, name, 0);
	const struct ls_rec *shared = ls_rec_find(s, LS_KIND_SHARED, name, 0);
	if (shared != NULL && ls_rec_loss(shared) == LT_HELD)
		return ls_res_msg(now, LS_INVALID,
				  "this session holds '%s' shared: release it first (an exclusive "
				  "hold would wait for itself)",
				  name);
	if (rec != NULL && ls_rec_loss(rec) == LT_HELD) {
		now->token = rec->token;
		if (!req->reentrant)
			return ls_res_msg(now, LS_CONFLICT,
					  "this connection holds '%s' already (token %lld)", name,
					  (long long)rec->token);
		rec->holds[req->scope]++;
		return LS_OK;
	}
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	if (rec != NULL) { /* a new acquire supersedes an unreported loss */
		if (rec->lease != NULL) {
			lease_set_data(rec->lease, NULL);
			lease_release(rec->lease);
		}
		ls_rec_forget(rec);
	}
	char owner[STORE_ID_MAX + 1];
	if (req->detach) {
		if (!detached_owner(req, owner, now))
			return now->status;
	} else if (!ls_room(s, now)) {
		return now->status;
	}
	char hash[STORE_SECRET_HASH_LEN + 1];
	s->acq_secret[0] = '\0';
	if (req->adoptable && !ls_secret_new(s->acq_secret, hash))
		return ls_res_msg(now, LS_FAILED, "no random bytes for the lease's secret");
	struct lt_acquire_args a = {
		.secret_hash = req->adoptable ? hash : NULL,
		.name = name,
		.lease_ms = lease_ms,
		.wait = req->wait_ms >= 0,
		.timeout_ms = req->wait_ms > 0 ? req->wait_ms : 0,
		.holder = req->holder,
		.owner = req->detach ? owner : NULL,
		.trace_parent = &req->trace,
	};
	s->acq = lt_acquire(s->svc->lt, &a, acquired, s);
	if (s->acq == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	s->acq_scope = req->scope;
	s->acq_detach = req->detach;
	ls_wait_begin(s, LS_WAIT_ACQUIRE, cb, arg);
	return now->status = LS_PENDING;
}

/* --- (name, token) --- */

struct ls_rec *ls_find_any(struct lsvc *svc, const char *name, int64_t token)
{
	struct lease *l = lt_local_lease(svc->lt, name);
	struct ls_rec *rec = l != NULL ? lease_data(l) : NULL;
	if (rec != NULL && rec->kind == LS_KIND_LOCK && rec->token == token)
		return rec;
	/* lost and not yet reported (few: they count toward the records of
	 * their session) */
	for (rec = svc->lost; rec != NULL; rec = rec->lost_next)
		if (rec->token == token && strcmp(rec->name, name) == 0)
			return rec;
	return NULL;
}

/* The lock a renew or release is about: the session's own (token 0: by
 * name), else (name, token) of any session. */
static struct ls_rec *find_lock(struct lsess *s, const char *name, int64_t token)
{
	struct ls_rec *rec = ls_rec_find(s, LS_KIND_LOCK, name, token);
	if (rec == NULL && token != 0)
		rec = ls_find_any(s->svc, name, token);
	return rec;
}

/* (name, token) held elsewhere (another replica, or detached): through
 * lt_foreign. */
static enum ls_status foreign(struct lsess *s, const char *name, struct lt_foreign_req *fr,
			      struct ls_result *now, ls_done_cb cb, void *arg)
{
	size_t len = strlen(name);
	if (len == 0 || len > (size_t)s->svc->lim.max_name)
		return LS_NONE;
	return ls_foreign_start(s, name, len, fr, now, cb, arg);
}

/* The secret presented with a (name, token): its hash (or NULL when none
 * was given) and whether the force-release right waives it. */
struct presented {
	const char *hash;
	bool waived;
	char buf[STORE_SECRET_HASH_LEN + 1];
};

static bool present(struct presented *p, const char *secret, size_t len, bool waived)
{
	p->waived = waived;
	p->hash = NULL;
	if (secret == NULL)
		return true;
	if (!ls_secret_hash(secret, len, p->buf))
		return false;
	p->hash = p->buf;
	return true;
}

/* rec, found by (name, token), is another session's lease with a secret
 * that p does not give: refused, saying why. */
static bool refused_secret(struct lsess *s, const struct ls_rec *rec, const struct presented *p,
			   struct ls_result *now)
{
	const char *stored = rec->lease != NULL ? lease_secret_hash(rec->lease) : NULL;
	if (rec->owner == s || stored == NULL || p->waived || lt_secret_match(stored, p->hash))
		return false;
	ls_res_msg(now, LS_DENIED, LS_SECRET_DENIED, rec->name);
	return true;
}

/* --- renew --- */

static void renewed(void *arg, int r, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (op->sess == NULL) {
		ls_op_finish(op, NULL);
		return;
	}
	ls_res_init(&res, LS_OK);
	if (err != NULL) {
		ls_res_err(&res, err);
	} else {
		/* lost meanwhile, even if this renewal's write succeeded (sent
		 * before the end timer ran): the loss has been told */
		struct ls_rec *rec = ls_find_any(op->svc, op->name, op->token);
		if (rec != NULL && rec->state == LS_REC_LOST)
			ls_rec_report(rec, rec->loss, &res);
		else
			res.status = r == 1 ? LS_OK : LS_NONE;
	}
	ls_op_finish(op, &res);
}

/* A detached shared hold named by (name, token, its secret): true, the
 * operation started (or refused) in now; false when secret is none. */
static bool by_handle(struct lsess *s, const char *name, int64_t token, const char *secret,
		      size_t len, enum lt_sh_foreign_op op, struct ls_result *now, ls_done_cb cb,
		      void *arg)
{
	struct lt_sh_foreign_req fr = {.op = op, .token = token};
	char owner[STORE_ID_MAX + 1];
	if (secret == NULL || !ls_shared_handle(secret, len, &fr.slot, owner))
		return false;
	fr.owner = owner;
	(void)ls_shared_foreign(s, name, &fr, now, cb, arg);
	return true;
}

enum ls_status ls_renew(struct lsess *s, const char *name, int64_t token, struct ls_result *now,
			ls_done_cb cb, void *arg)
{
	return ls_renew_secret(s, name, token, NULL, 0, false, now, cb, arg);
}

enum ls_status ls_renew_secret(struct lsess *s, const char *name, int64_t token, const char *secret,
			       size_t secret_len, bool waived, struct ls_result *now, ls_done_cb cb,
			       void *arg)
{
	struct presented p;
	ls_res_init(now, LS_NONE);
	if (token > 0 && by_handle(s, name, token, secret, secret_len, LT_SH_RENEW, now, cb, arg))
		return now->status;
	if (!present(&p, secret, secret_len, waived))
		return ls_res_msg(now, LS_INVALID, "a secret must be 1 to %d bytes", LS_SECRET_MAX);
	struct ls_rec *rec = find_lock(s, name, token);
	struct ls_rec *sh = rec == NULL ? ls_shared_find(s, name, token) : NULL;
	if (sh != NULL)
		return ls_shared_renew(s, sh, now, cb, arg);
	if (rec == NULL && token > 0) {
		struct lt_foreign_req fr = {.op = LT_FOREIGN_RENEW,
					    .token = token,
					    .secret_hash = p.hash,
					    .secret_waived = waived};
		return foreign(s, name, &fr, now, cb, arg);
	}
	if (rec == NULL)
		return LS_NONE;
	if (refused_secret(s, rec, &p, now))
		return now->status;
	enum lt_loss loss = ls_rec_loss(rec);
	if (loss != LT_HELD)
		return ls_rec_report(rec, loss, now);
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, rec->name, rec->len, rec->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	if (!lease_renew(rec->lease, renewed, op)) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return now->status = LS_PENDING;
}

/* --- release --- */

static void released(void *arg, int r, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	ls_changed(op->svc, op->name);
	ls_res_init(&res, LS_OK);
	res.token = op->token;
	if (r < 0) /* the answer says so: the lock is not free */
		ls_unwritten(&res, op->name, err);
	ls_op_finish(op, &res);
}

static enum ls_status release_by(struct lsess *s, const char *name, int64_t token,
				 enum ls_scope scope, const struct presented *p,
				 struct ls_result *now, ls_done_cb cb, void *arg);

enum ls_status ls_release(struct lsess *s, const char *name, int64_t token, enum ls_scope scope,
			  struct ls_result *now, ls_done_cb cb, void *arg)
{
	return release_by(s, name, token, scope, &(struct presented){0}, now, cb, arg);
}

enum ls_status ls_release_secret(struct lsess *s, const char *name, int64_t token,
				 const char *secret, size_t secret_len, bool waived,
				 struct ls_result *now, ls_done_cb cb, void *arg)
{
	struct presented p;
	ls_res_init(now, LS_NONE);
	if (token > 0 && by_handle(s, name, token, secret, secret_len, LT_SH_RELEASE, now, cb, arg))
		return now->status;
	if (!present(&p, secret, secret_len, waived))
		return ls_res_msg(now, LS_INVALID, "a secret must be 1 to %d bytes", LS_SECRET_MAX);
	struct ls_rec *sh =
		find_lock(s, name, token) == NULL ? ls_shared_find(s, name, token) : NULL;
	if (sh != NULL) /* the session's own shared hold (Redis: one hold) */
		return ls_shared_drop_all(s, sh, now, cb, arg);
	return release_by(s, name, token, LS_SCOPE_SESSION, &p, now, cb, arg);
}

static enum ls_status release_by(struct lsess *s, const char *name, int64_t token,
				 enum ls_scope scope, const struct presented *p,
				 struct ls_result *now, ls_done_cb cb, void *arg)
{
	ls_res_init(now, LS_NONE);
	if ((unsigned)scope >= LS_SCOPE_COUNT)
		return ls_res_msg(now, LS_INVALID, "bad scope");
	struct ls_rec *rec = find_lock(s, name, token);
	if (rec == NULL && token > 0) {
		struct lt_foreign_req fr = {.op = LT_FOREIGN_RELEASE,
					    .token = token,
					    .secret_hash = p->hash,
					    .secret_waived = p->waived};
		return foreign(s, name, &fr, now, cb, arg);
	}
	if (rec == NULL)
		return LS_NONE;
	if (refused_secret(s, rec, p, now))
		return now->status;
	enum lt_loss loss = ls_rec_loss(rec);
	if (loss != LT_HELD)
		return ls_rec_report(rec, loss, now);
	if (token == 0) {
		if (rec->holds[scope] == 0)
			return LS_NONE;
		if (ls_rec_holds(rec) > 1) { /* held still, by another hold */
			rec->holds[scope]--;
			now->token = rec->token;
			return now->status = LS_OK;
		}
	}
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, rec->name, rec->len, rec->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	struct lease *lease = rec->lease;
	lease_set_data(lease, NULL);
	ls_rec_forget(rec);
	lease_release_then(lease, released, op);
	return now->status = LS_PENDING;
}

enum ls_status ls_release_scope(struct lsess *s, enum ls_scope scope, struct ls_result *now,
				ls_done_cb cb, void *arg)
{
	struct ls_rec *rec, *next;
	ls_res_init(now, LS_OK);
	if ((unsigned)scope >= LS_SCOPE_COUNT)
		return ls_res_msg(now, LS_INVALID, "bad scope");
	struct ls_op *b = ls_batch_new(s, cb, arg);
	for (rec = s->recs; rec != NULL; rec = next) {
		next = rec->next;
		if ((rec->kind != LS_KIND_LOCK && rec->kind != LS_KIND_SHARED) ||
		    rec->holds[scope] == 0)
			continue;
		rec->holds[scope] = 0;
		if (ls_rec_holds(rec) == 0)
			ls_rec_drop(rec, b);
	}
	if (b == NULL)
		return ls_res_msg(now, LS_FAILED,
				  "out of memory: the releases were not waited for");
	return ls_batch_close(b, now);
}

/* --- what the session holds, what it lost --- */

bool ls_held(const struct lsess *s, const char *name, size_t name_len, int64_t *token,
	     unsigned holds_out[LS_SCOPE_COUNT])
{
	char buf[STORE_NAME_MAX + 1];
	if (name_len == 0 || name_len > STORE_NAME_MAX || memchr(name, '\0', name_len) != NULL)
		return false;
	memcpy(buf, name, name_len);
	buf[name_len] = '\0';
	const struct ls_rec *rec = ls_rec_find(s, LS_KIND_LOCK, buf, 0);
	if (rec == NULL || ls_rec_loss(rec) != LT_HELD)
		return false;
	if (token != NULL)
		*token = rec->token;
	if (holds_out != NULL)
		memcpy(holds_out, rec->holds, sizeof(rec->holds));
	return true;
}

enum ls_status ls_take_lost(struct lsess *s, struct ls_result *r)
{
	ls_res_init(r, LS_NONE);
	struct ls_rec *lost = NULL;
	enum lt_loss loss = LT_HELD;
	/* the list is newest first: the last lost one found is the oldest */
	for (struct ls_rec *rec = s->recs; rec != NULL; rec = rec->next) {
		enum lt_loss l;
		if ((rec->kind == LS_KIND_LOCK || rec->kind == LS_KIND_SHARED) &&
		    (l = ls_rec_loss(rec)) != LT_HELD) {
			lost = rec;
			loss = l;
		}
	}
	if (lost == NULL)
		return LS_NONE;
	char name[STORE_NAME_MAX + 1];
	snprintf(name, sizeof(name), "%s", lost->name);
	ls_rec_report(lost, loss, r);
	snprintf(r->message, sizeof(r->message), "lease of '%.256s' lost: %s", name,
		 ls_loss_text(loss));
	return LS_LOST;
}

/* --- state --- */

/* Is the item's owner in st the session's lease of name? */
static bool is_mine(const struct lsess *s, const char *name, struct ls_result *r)
{
	const struct lt_state *st = &r->st;
	r->detached = st->held && ls_detached(st); /* a free lock is no one's */
	if (!st->held || s->recs == NULL)	   /* nothing to look up */
		return false;
	const struct ls_rec *rec = ls_rec_find(s, LS_KIND_LOCK, name, 0);
	return rec != NULL && rec->state == LS_REC_HELD && rec->lease != NULL &&
	       strcmp(lease_owner(rec->lease), st->owner) == 0;
}

static void state_read(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (op->sess == NULL) {
		ls_op_finish(op, NULL);
		return;
	}
	ls_res_init(&res, LS_OK);
	if (err != NULL) {
		ls_res_err(&res, err);
	} else {
		res.st = *st;
		res.mine = is_mine(op->sess, op->name, &res);
		if (st->shared > 0 && ls_state_holders(op, st)) /* it answers */
			return;
	}
	ls_op_finish(op, &res);
}

enum ls_status ls_state(struct lsess *s, const char *name, size_t name_len, struct ls_result *now,
			ls_done_cb cb, void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, name, name_len, buf, now))
		return now->status;
	bool at_once = lt_state_now(s->svc->lt, buf, &now->st); /* the embedded store */
	if (at_once && now->st.shared == 0) {
		now->mine = is_mine(s, buf, now);
		return LS_OK;
	}
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, buf, name_len, 0);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	if (at_once) { /* held shared: its holders are a read away */
		if (!ls_state_holders(op, &now->st)) {
			ls_op_finish(op, NULL);
			return ls_res_msg(now, LS_FAILED, "out of memory");
		}
		return now->status = LS_PENDING;
	}
	if (!lt_get_state(s->svc->lt, op->name, state_read, op)) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return now->status = LS_PENDING;
}
