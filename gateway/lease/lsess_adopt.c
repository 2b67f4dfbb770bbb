/*
 * lsess_adopt: LOCK.ADOPT — a session takes over a lease orphaned by a
 * draining replica (core/lt_adopt.c), presented with its secret, and
 * holds it from then on as if it had acquired it (see ls_adopt in
 * lsess.h). The secret rotates: the adopter is told the new one, once.
 */
#include "gateway/lease/lsess_int.h"

#include <stdlib.h>
#include <string.h>

struct adopting {
	struct adopting *prev, *next; /* in svc->adopting, for lsvc_free */
	struct lsvc *svc;
	struct ls_op *op;
	enum ls_kind kind;		/* a lock, or a leader term */
	char secret[LS_SECRET_LEN + 1]; /* the new one, for the answer */
};

static void link_a(struct adopting *a)
{
	a->next = a->svc->adopting;
	if (a->next != NULL)
		a->next->prev = a;
	a->svc->adopting = a;
}

static void unlink_a(struct adopting *a)
{
	if (a->prev != NULL)
		a->prev->next = a->next;
	else
		a->svc->adopting = a->next;
	if (a->next != NULL)
		a->next->prev = a->prev;
}

void ls_adopts_free(struct lsvc *svc)
{
	while (svc->adopting != NULL) { /* the locktable drops their requests */
		struct adopting *a = svc->adopting;
		unlink_a(a);
		free(a);
	}
}

static void adopted(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct adopting *a = arg;
	struct ls_op *op = a->op;
	unlink_a(a);
	struct lsess *s = op->sess;
	struct ls_result res;
	ls_res_init(&res, LS_OK);
	if (s == NULL) { /* the session went meanwhile: nobody to hold it */
		if (lease != NULL)
			lease_release(lease);
		free(a);
		ls_op_finish(op, NULL);
		return;
	}
	if (err != NULL) {
		ls_res_err(&res, err);
	} else if (lease == NULL) {
		res.status = LS_NONE;
	} else if ((a->kind == LS_KIND_LOCK ? ls_bind_lease(s, lease, LS_SCOPE_SESSION)
					    : ls_bind_term(s, lease)) == NULL) {
		lease_release(lease);
		ls_res_msg(&res, LS_FAILED, "out of memory");
	} else {
		res.token = lease_token(lease);
		memcpy(res.secret, a->secret, sizeof(res.secret));
	}
	free(a);
	ls_op_finish(op, &res);
}

static enum ls_status ls_adopt_kind(struct lsess *s, enum ls_kind kind, const char *name,
				    size_t name_len, int64_t token, const char *secret,
				    size_t secret_len, struct ls_result *now, ls_done_cb cb,
				    void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	char presented[STORE_SECRET_HASH_LEN + 1], fresh[STORE_SECRET_HASH_LEN + 1];
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, name, name_len, buf, now))
		return now->status;
	if (token <= 0 || !ls_secret_hash(secret, secret_len, presented))
		return now->status = LS_NONE; /* no lease has that token or secret */
	struct ls_rec *rec = ls_rec_find(s, kind, buf, 0);
	if (rec != NULL && ls_rec_loss(rec) == LT_HELD)
		return ls_res_msg(now, LS_CONFLICT,
				  "this connection holds '%s' already (token %lld)", buf,
				  (long long)rec->token);
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	if (rec != NULL && kind == LS_KIND_LOCK) { /* supersedes an unreported loss */
		if (rec->lease != NULL) {
			lease_set_data(rec->lease, NULL);
			lease_release(rec->lease);
		}
		ls_rec_forget(rec);
	} else if (rec != NULL) { /* a lost term: a new one (as a campaign) */
		ls_term_end(rec, ELECTION_LEASE_LOST);
	}
	if (!ls_room(s, now))
		return now->status;
	struct adopting *a = calloc(1, sizeof(*a));
	if (a == NULL || !ls_secret_new(a->secret, fresh)) {
		free(a);
		return ls_res_msg(now, LS_FAILED, "no memory or random bytes for the adopt");
	}
	a->kind = kind;
	a->svc = s->svc;
	a->op = ls_op_new(s->svc, s, cb, arg, buf, strlen(buf), token);
	struct lt_adopt_args args = {
		.name = buf, .token = token, .secret_hash = presented, .new_secret_hash = fresh};
	if (a->op == NULL || !lt_adopt(s->svc->lt, &args, adopted, a)) {
		if (a->op != NULL)
			ls_op_finish(a->op, NULL);
		free(a);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	link_a(a);
	return now->status = LS_PENDING;
}

enum ls_status ls_adopt(struct lsess *s, const char *name, size_t name_len, int64_t token,
			const char *secret, size_t secret_len, struct ls_result *now, ls_done_cb cb,
			void *arg)
{
	return ls_adopt_kind(s, LS_KIND_LOCK, name, name_len, token, secret, secret_len, now, cb,
			     arg);
}

enum ls_status ls_leader_adopt(struct lsess *s, const char *name, size_t name_len, int64_t token,
			       const char *secret, size_t secret_len, struct ls_result *now,
			       ls_done_cb cb, void *arg)
{
	return ls_adopt_kind(s, LS_KIND_LEADER, name, name_len, token, secret, secret_len, now, cb,
			     arg);
}
