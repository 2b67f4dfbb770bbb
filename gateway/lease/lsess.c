/*
 * lsess: the replica's lease service and its sessions — records and their
 * states, pending operations, the one wait of a session, cancel, close.
 * The lock operations are in lsess_lock.c, leader terms in lsess_lead.c,
 * LEADER.WATCH-style watches in lsess_watch.c. See lsess.h, lsess_int.h.
 */
#include "gateway/lease/lsess_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/pool.h"

/* --- results and checks --- */

void ls_res_init(struct ls_result *r, enum ls_status status)
{
	/* not memset: a result is ~1 KB and the lock cycle builds two */
	r->status = status;
	r->token = 0;
	r->loss = LT_HELD;
	r->st.exists = false;
	r->st.held = false;
	r->mine = false;
	r->detached = false;
	r->unwritten = false;
	r->reasons = NULL;
	r->clock_ms = r->wall_ms = 0;
	r->secret[0] = '\0';
	r->slot = -1;
	r->handle[0] = '\0';
	r->sh = NULL;
	r->message[0] = '\0';
}

enum ls_status ls_res_msg(struct ls_result *r, enum ls_status status, const char *fmt, ...)
{
	va_list ap;
	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	return status;
}

enum ls_status ls_res_err(struct ls_result *r, const struct lt_error *err)
{
	return ls_res_msg(r, err->status == STORE_TRANSIENT ? LS_TRANSIENT : LS_FAILED, "%s",
			  err->message);
}

bool ls_name_ok(const struct lsvc *svc, const char *name, size_t len, char *buf,
		struct ls_result *r)
{
	if (len == 0 || len > (size_t)svc->lim.max_name) {
		ls_res_msg(r, LS_INVALID, "lock name must be 1 to %lld bytes",
			   (long long)svc->lim.max_name);
		return false;
	}
	if (memchr(name, '\0', len) != NULL) {
		ls_res_msg(r, LS_INVALID, "lock name must not contain NUL bytes");
		return false;
	}
	memcpy(buf, name, len);
	buf[len] = '\0';
	return true;
}

bool ls_req_ok(const struct lsvc *svc, const struct ls_acquire_req *req, char *buf,
	       int64_t *lease_ms, struct ls_result *r)
{
	if (!ls_name_ok(svc, req->name, req->name_len, buf, r))
		return false;
	*lease_ms = req->lease_ms == 0 ? svc->lim.default_lease_ms : req->lease_ms;
	if (*lease_ms < LT_MIN_LEASE_MS || *lease_ms > svc->lim.max_lease_ms) {
		ls_res_msg(r, LS_INVALID, "lease-ms must be an integer from %lld to %lld",
			   LT_MIN_LEASE_MS, (long long)svc->lim.max_lease_ms);
		return false;
	}
	size_t hl = req->holder != NULL ? strlen(req->holder) : 1;
	if (hl == 0 || hl > STORE_HOLDER_MAX) {
		ls_res_msg(r, LS_INVALID, "HOLDER must be 1 to %d characters", STORE_HOLDER_MAX);
		return false;
	}
	if ((unsigned)req->scope >= LS_SCOPE_COUNT) {
		ls_res_msg(r, LS_INVALID, "bad scope");
		return false;
	}
	return true;
}

bool ls_room(const struct lsess *s, struct ls_result *r)
{
	if (s->nrecs < (uint64_t)s->svc->lim.max_leases)
		return true;
	ls_res_msg(r, LS_INVALID, "max leases per connection reached (%lld)",
		   (long long)s->svc->lim.max_leases);
	return false;
}

/* --- records --- */

/* A lock cycle adds and forgets a record: those with names up to 64 bytes
 * come from pools by their name's length (POOL_NAME_CLASSES): a record
 * lives as long as its lease. */
#define REC_SIZE(len) (sizeof(struct ls_rec) + (len) + 1)
static struct pool rec_pools[POOL_NAME_CLASSES_N] = POOL_NAME_CLASSES(REC_SIZE, 4096);

/* The pool of a record whose name is len bytes. */
static struct pool *rec_pool(size_t len)
{
	return pool_class(rec_pools, POOL_NAME_CLASSES_N, REC_SIZE(len));
}

size_t ls_rec_bytes(size_t len)
{
	return pool_class_bytes(rec_pools, POOL_NAME_CLASSES_N, REC_SIZE(len));
}

struct ls_rec *ls_rec_new(struct lsess *s, enum ls_kind kind, const char *name, size_t len)
{
	/* every field set here: no zeroing first */
	struct ls_rec *rec = pool_take(rec_pool(len), REC_SIZE(len));
	if (rec == NULL)
		return NULL;
	memcpy(rec->name, name, len);
	rec->name[len] = '\0';
	rec->len = len;
	rec->hnext = NULL;
	rec->hash = 0;
	rec->lost_prev = rec->lost_next = NULL;
	rec->owner = s;
	rec->lease = NULL;
	rec->sh = NULL;
	rec->election = NULL;
	rec->token = 0;
	rec->kind = kind;
	rec->state = LS_REC_CAMPAIGNING;
	rec->loss = LT_HELD;
	memset(rec->holds, 0, sizeof(rec->holds));
	rec->prev = NULL;
	rec->next = s->recs;
	if (s->recs != NULL)
		s->recs->prev = rec;
	s->recs = rec;
	s->nrecs++;
	ls_index_add(&s->idx, rec, s->recs);
	return rec;
}

/* Only lost locks are listed: (name, token) addresses locks, not terms. */
static bool listed(enum ls_kind kind, enum ls_rec_state state)
{
	return kind == LS_KIND_LOCK && state == LS_REC_LOST;
}

static void lost_link(struct ls_rec *rec, bool in)
{
	struct lsvc *svc = rec->owner->svc;
	if (in) {
		rec->lost_prev = NULL;
		rec->lost_next = svc->lost;
		if (svc->lost != NULL)
			svc->lost->lost_prev = rec;
		svc->lost = rec;
		return;
	}
	if (rec->lost_prev != NULL)
		rec->lost_prev->lost_next = rec->lost_next;
	else
		svc->lost = rec->lost_next;
	if (rec->lost_next != NULL)
		rec->lost_next->lost_prev = rec->lost_prev;
}

void ls_rec_set(struct ls_rec *rec, enum ls_rec_state state, enum lt_loss loss)
{
	bool was = listed(rec->kind, rec->state), now = listed(rec->kind, state);
	if (was != now)
		lost_link(rec, now);
	rec->state = state;
	rec->loss = state == LS_REC_LOST ? loss : LT_HELD;
}

void ls_rec_forget(struct ls_rec *rec)
{
	struct lsess *s = rec->owner;
	if (listed(rec->kind, rec->state))
		lost_link(rec, false);
	ls_index_del(&s->idx, rec);
	if (rec->prev != NULL)
		rec->prev->next = rec->next;
	else
		s->recs = rec->next;
	if (rec->next != NULL)
		rec->next->prev = rec->prev;
	s->nrecs--;
	pool_put(rec_pool(rec->len), rec, REC_SIZE(rec->len));
}

struct ls_rec *ls_rec_find(const struct lsess *s, enum ls_kind kind, const char *name,
			   int64_t token)
{
	return ls_index_find(&s->idx, s->recs, kind, name, token);
}

unsigned ls_rec_holds(const struct ls_rec *rec)
{
	unsigned n = 0;
	for (int i = 0; i < LS_SCOPE_COUNT; i++)
		n += rec->holds[i];
	return n;
}

enum lt_loss ls_rec_loss(const struct ls_rec *rec)
{
	if (rec->state == LS_REC_LOST)
		return rec->loss;
	if (rec->state == LS_REC_HELD && rec->lease != NULL &&
	    clock_now_ms(rec->owner->svc->clock) >= lease_end_ms(rec->lease))
		return LT_EXPIRED;
	if (rec->state == LS_REC_HELD && rec->sh != NULL &&
	    clock_now_ms(rec->owner->svc->clock) >= sh_lease_end_ms(rec->sh))
		return LT_EXPIRED;
	return LT_HELD;
}

const char *ls_loss_text(enum lt_loss loss)
{
	static const char *const words[LT_LOSS_COUNT] = {
		[LT_SESSION] = "session (this replica's heartbeat session was marked dead or "
			       "deleted: every lease held in it is lost)",
	};
	if ((unsigned)loss < LT_LOSS_COUNT && words[loss] != NULL)
		return words[loss];
	return lt_loss_name(loss);
}

enum ls_status ls_rec_report(struct ls_rec *rec, enum lt_loss loss, struct ls_result *r)
{
	r->status = LS_LOST;
	r->loss = loss;
	r->token = rec->token;
	snprintf(r->message, sizeof(r->message), "%s", ls_loss_text(loss));
	rec->owner->svc->lost_reported++;
	if (rec->kind == LS_KIND_LEADER) {
		ls_term_end(rec, ELECTION_LEASE_LOST);
		return LS_LOST;
	}
	/* a lease past its end that the core still holds gives the item back
	 * if it is still ours */
	if (rec->lease != NULL) {
		lease_set_data(rec->lease, NULL);
		lease_release(rec->lease);
	}
	if (rec->sh != NULL)
		sh_lease_release(rec->sh);
	ls_rec_forget(rec);
	return LS_LOST;
}

void ls_unwritten(struct ls_result *r, const char *name, const struct lt_error *err)
{
	r->unwritten = true;
	ls_res_msg(r, r->status,
		   "the release of '%.256s' was not written (%s): the lock may stay held until its "
		   "lease runs out",
		   name, err->message);
}

/* One release of batch b is done (err: its write failed). */
static void batch_one(struct ls_op *b, const char *name, const struct lt_error *err)
{
	if (err != NULL && b->unwritten == NULL) {
		struct ls_result r;
		ls_res_init(&r, LS_OK);
		ls_unwritten(&r, name, err);
		b->unwritten = strdup(r.message); /* NULL: told as written, logged (43) */
	}
	if (--b->left > 0)
		return;
	struct ls_result res;
	ls_res_init(&res, LS_OK);
	if (b->unwritten != NULL) {
		res.unwritten = true;
		ls_res_msg(&res, LS_OK, "%s", b->unwritten);
	}
	ls_op_finish(b, &res);
}

struct ls_op *ls_batch_new(struct lsess *s, ls_done_cb cb, void *arg)
{
	struct ls_op *b = ls_op_new(s->svc, s, cb, arg, "", 0, 0);
	if (b != NULL)
		b->left = 1; /* until ls_batch_close: none answers before */
	return b;
}

enum ls_status ls_batch_close(struct ls_op *b, struct ls_result *now)
{
	ls_res_init(now, LS_OK);
	if (b->left > 1) {
		b->left--;
		return now->status = LS_PENDING;
	}
	if (b->unwritten != NULL) {
		now->unwritten = true;
		ls_res_msg(now, LS_OK, "%s", b->unwritten);
	}
	ls_op_finish(b, NULL);
	return LS_OK;
}

/* A release done (or a term handed on): watchers read what it wrote; its
 * batch counts it. */
static void dropped(void *arg, int released, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_op *batch = op->batch;
	ls_changed(op->svc, op->name);
	if (batch != NULL)
		batch_one(batch, op->name, released < 0 ? err : NULL);
	ls_op_finish(op, NULL);
}

void ls_rec_drop(struct ls_rec *rec, struct ls_op *batch)
{
	struct lsvc *svc = rec->owner->svc;
	struct ls_op *op = ls_op_new(svc, NULL, NULL, NULL, rec->name, rec->len, rec->token);
	if (op != NULL && batch != NULL) {
		op->batch = batch;
		batch->left++;
	}
	if (rec->kind == LS_KIND_LEADER && rec->election != NULL) {
		if (op != NULL)
			election_stop_then(rec->election, ELECTION_CANCELLED, dropped, op);
		else
			election_stop(rec->election, ELECTION_CANCELLED);
	} else if (rec->lease != NULL) {
		lease_set_data(rec->lease, NULL);
		if (op != NULL)
			lease_release_then(rec->lease, dropped, op);
		else
			lease_release(rec->lease);
	} else if (rec->sh != NULL) {
		ls_shared_release(rec, op != NULL ? dropped : NULL, op);
	} else {
		if (op != NULL && op->batch != NULL)
			op->batch->left--;
		ls_op_finish(op, NULL);
		op = NULL;
	}
	if (op == NULL) /* out of memory: wake them now */
		ls_changed(svc, rec->name);
	ls_rec_forget(rec);
}

void ls_rec_lost(struct ls_rec *rec, enum lt_loss reason)
{
	struct lsess *s = rec->owner;
	ls_rec_set(rec, LS_REC_LOST, reason);
	ls_changed(s->svc, rec->name);
	if (s->ops.lost == NULL)
		return;
	s->svc->losses_told++;
	s->ops.lost(s->arg, rec->kind, rec->name, rec->token, reason);
}

/* --- pending operations --- */

/* Every RELEASE has one: those with names up to 64 bytes come from a pool. */
#define OP_SIZE(len) (sizeof(struct ls_op) + (len) + 1)
static struct pool op_pool = POOL_INIT(OP_SIZE(64), 1024);

static struct ls_op **op_list(struct ls_op *op)
{
	return op->sess != NULL ? &op->sess->pending : &op->svc->detached;
}

static void op_link(struct ls_op *op)
{
	struct ls_op **head = op_list(op);
	op->prev = NULL;
	op->next = *head;
	if (*head != NULL)
		(*head)->prev = op;
	*head = op;
}

static void op_unlink(struct ls_op *op)
{
	if (op->prev != NULL)
		op->prev->next = op->next;
	else
		*op_list(op) = op->next;
	if (op->next != NULL)
		op->next->prev = op->prev;
}

struct ls_op *ls_op_new(struct lsvc *svc, struct lsess *s, ls_done_cb cb, void *arg,
			const char *name, size_t len, int64_t token)
{
	struct ls_op *op = pool_take(&op_pool, OP_SIZE(len)); /* every field set */
	if (op == NULL)
		return NULL;
	op->size = OP_SIZE(len);
	op->svc = svc;
	op->sess = s;
	op->cb = cb;
	op->arg = arg;
	op->token = token;
	op->batch = NULL;
	op->left = 0;
	op->unwritten = NULL;
	memcpy(op->name, name, len);
	op->name[len] = '\0';
	op_link(op);
	return op;
}

void ls_op_finish(struct ls_op *op, const struct ls_result *res)
{
	if (op == NULL)
		return;
	ls_done_cb cb = op->sess != NULL ? op->cb : NULL;
	void *arg = op->arg;
	op_unlink(op);
	free(op->unwritten);
	pool_put(&op_pool, op, op->size);
	if (cb != NULL && res != NULL)
		cb(arg, res); /* last: it may free the session */
}

/* --- the wait --- */

void ls_wait_begin(struct lsess *s, enum ls_wait_kind kind, ls_done_cb cb, void *arg)
{
	struct lsvc *svc = s->svc;
	s->wait_kind = kind;
	s->wait_cb = cb;
	s->wait_arg = arg;
	s->wait_seq = ++svc->wait_seq;
	s->wait_next = NULL;
	s->wait_prev = svc->waiting_tail;
	if (svc->waiting_tail != NULL)
		svc->waiting_tail->wait_next = s;
	else
		svc->waiting_head = s;
	svc->waiting_tail = s;
}

void ls_wait_end(struct lsess *s, ls_done_cb *cb, void **arg)
{
	struct lsvc *svc = s->svc;
	*cb = s->wait_cb;
	*arg = s->wait_arg;
	if (s->wait_kind == LS_WAIT_NONE)
		return;
	if (s->wait_prev != NULL)
		s->wait_prev->wait_next = s->wait_next;
	else
		svc->waiting_head = s->wait_next;
	if (s->wait_next != NULL)
		s->wait_next->wait_prev = s->wait_prev;
	else
		svc->waiting_tail = s->wait_prev;
	s->wait_kind = LS_WAIT_NONE;
	s->wait_cb = NULL;
	s->wait_arg = NULL;
}

static void acquire_drop(struct lsess *s)
{
	lt_acquire_cancel(s->acq); /* a write that succeeds is released */
	s->acq = NULL;
}

/* How each kind of wait is ended without an answer. */
static void (*const wait_drop[])(struct lsess *s) = {
	[LS_WAIT_ACQUIRE] = acquire_drop,  [LS_WAIT_CAMPAIGN] = ls_campaign_drop,
	[LS_WAIT_WATCH] = ls_watch_drop,   [LS_WAIT_TEST] = ls_test_drop,
	[LS_WAIT_SHARED] = ls_shared_drop,
};

/* Ends the wait of s without an answer; returns its callback. */
static void wait_drop_all(struct lsess *s, ls_done_cb *cb, void **arg)
{
	if (s->wait_kind != LS_WAIT_NONE)
		wait_drop[s->wait_kind](s);
	ls_wait_end(s, cb, arg);
}

/* Ends the wait of s now, answering it status with message. */
static bool wait_end_with(struct lsess *s, enum ls_status status, const char *message)
{
	ls_done_cb cb;
	void *arg;
	if (s->wait_kind == LS_WAIT_NONE)
		return false;
	wait_drop_all(s, &cb, &arg);
	struct ls_result res;
	ls_res_init(&res, status);
	ls_res_msg(&res, status, "%s", message);
	cb(arg, &res);
	return true;
}

bool ls_cancel(struct lsess *s, const char *message)
{
	return wait_end_with(s, LS_CANCELLED, message);
}

const char *ls_wait_name(const struct lsess *s)
{
	switch (s->wait_kind) {
	case LS_WAIT_ACQUIRE:
		return s->acq != NULL ? lt_wait_name(s->acq) : NULL;
	case LS_WAIT_CAMPAIGN:
		return s->campaign != NULL ? s->campaign->name : NULL;
	case LS_WAIT_WATCH:
		return s->watcher != NULL ? ls_watch_name(s->watcher) : NULL;
	case LS_WAIT_TEST:
		return ls_test_wait_name(s);
	case LS_WAIT_SHARED:
		return s->sh_acq != NULL ? sh_wait_name(s->sh_acq) : NULL;
	default:
		return NULL;
	}
}

unsigned lsvc_recheck_waits(struct lsvc *svc)
{
	unsigned denied = 0;
	/* only the waits of now (a callback may start another); a session
	 * denied leaves the list, so the walk starts over after each */
	uint64_t last = svc->wait_seq;
	bool again = true;
	while (again) {
		again = false;
		for (struct lsess *s = svc->waiting_head; s != NULL && s->wait_seq <= last;
		     s = s->wait_next) {
			const char *name = ls_wait_name(s);
			if (name == NULL || s->ops.may_wait == NULL ||
			    s->ops.may_wait(s->arg, name))
				continue;
			char msg[STORE_NAME_MAX + 128];
			snprintf(msg, sizeof(msg),
				 "the ACL rules reloaded while this waited no longer allow it on "
				 "'%s'",
				 name);
			denied += wait_end_with(s, LS_DENIED, msg);
			again = true;
			break;
		}
	}
	return denied;
}

/* --- the service --- */

struct lsvc *lsvc_new(struct locktable *lt, const struct ls_limits *limits)
{
	const struct ls_limits *l = limits;
	if (lt == NULL || l->max_name < 1 || l->max_name > STORE_NAME_MAX || l->max_leases < 1 ||
	    l->max_lease_ms < LT_MIN_LEASE_MS || l->max_lease_ms > LT_MAX_LEASE_MS ||
	    l->default_lease_ms < LT_MIN_LEASE_MS || l->default_lease_ms > l->max_lease_ms)
		return NULL;
	struct lsvc *svc = calloc(1, sizeof(*svc));
	if (svc == NULL)
		return NULL;
	svc->lt = lt;
	svc->clock = lt_clock(lt);
	svc->lim = *limits;
	return svc;
}

void lsvc_free(struct lsvc *svc)
{
	if (svc == NULL)
		return;
	ls_watch_free_all(svc);
	ls_fence_free(svc);
	/* completions of detached operations can no longer come: the
	 * locktable is freed next, and drops them */
	while (svc->detached != NULL)
		ls_op_finish(svc->detached, NULL);
	ls_orphans_free(svc); /* their leases go with the locktable */
	ls_adopts_free(svc);
	free(svc);
}

void lsvc_cancel_waits(struct lsvc *svc, const char *message)
{
	/* only the waits of now: a callback may start another */
	uint64_t last = svc->wait_seq;
	while (svc->waiting_head != NULL && svc->waiting_head->wait_seq <= last)
		ls_cancel(svc->waiting_head, message);
}

void lsvc_stats(const struct lsvc *svc, struct lsvc_stats *out)
{
	out->sessions = svc->sessions;
	out->lost_reported = svc->lost_reported;
	out->losses_told = svc->losses_told;
}

/* --- sessions --- */

bool lsvc_who(const void *ctx, struct ls_who *who)
{
	const struct ls_rec *rec = ctx;
	if (rec == NULL || rec->owner == NULL)
		return false;
	const struct lsess *s = rec->owner;
	*who = (struct ls_who){.id = s->id};
	if (s->ops.who != NULL)
		s->ops.who(s->arg, who);
	return true;
}

struct lsess *lsess_new(struct lsvc *svc, const struct ls_sess_ops *ops, void *arg)
{
	struct lsess *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->svc = svc;
	if (ops != NULL)
		s->ops = *ops;
	s->arg = arg;
	s->proto = "";
	timer_init(&s->campaign_timer, svc->clock, ls_campaign_due, s);
	s->all_next = svc->all;
	if (svc->all != NULL)
		svc->all->all_prev = s;
	svc->all = s;
	svc->sessions++;
	return s;
}

/* Drops every record of s but keep (the campaign a wait still needs),
 * counted by batch (NULL: none). */
static void drop_records(struct lsess *s, const struct ls_rec *keep, struct ls_op *batch)
{
	struct ls_rec *rec = s->recs, *next;
	for (; rec != NULL; rec = next) {
		next = rec->next;
		if (rec != keep)
			ls_rec_drop(rec, batch);
	}
}

void lsess_free(struct lsess *s)
{
	ls_done_cb cb;
	void *arg;
	if (s == NULL)
		return;
	wait_drop_all(s, &cb, &arg);
	while (s->pending != NULL) {
		struct ls_op *op = s->pending;
		op_unlink(op);
		op->sess = NULL;
		op_link(op); /* into the service's detached list */
	}
	for (struct ls_rec *rec = s->recs; s->svc->draining && rec != NULL; rec = rec->next)
		(void)ls_orphan_take(rec); /* kept for an adopt elsewhere */
	drop_records(s, NULL, NULL);
	ls_index_free(&s->idx);
	timer_cancel(&s->campaign_timer);
	if (s->all_prev != NULL)
		s->all_prev->all_next = s->all_next;
	else
		s->svc->all = s->all_next;
	if (s->all_next != NULL)
		s->all_next->all_prev = s->all_prev;
	s->svc->sessions--;
	free(s);
}

enum ls_status ls_release_all(struct lsess *s, struct ls_result *now, ls_done_cb cb, void *arg)
{
	struct ls_op *b = ls_batch_new(s, cb, arg);
	drop_records(s, s->wait_kind == LS_WAIT_CAMPAIGN ? s->campaign : NULL, b);
	/* its callback may free s: b is then detached, answers nobody */
	ls_cancel(s, "the session was reset");
	if (b == NULL)
		return ls_res_msg(now, LS_FAILED,
				  "out of memory: the releases were not waited for");
	return ls_batch_close(b, now);
}

unsigned lsess_count(const struct lsess *s)
{
	return s->nrecs;
}
