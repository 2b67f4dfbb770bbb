/*
 * sim_net: the simulated DynamoDB as one replica sees it — a struct store
 * whose requests travel a network the simulator schedules, to the embedded
 * store (core/store_memory), which applies each delivery atomically.
 *
 * Every request is an operation of the SDK: up to SIM_ATTEMPTS attempts,
 * each with a timeout, retried after a full-jitter backoff on throttling,
 * a 500 or a timeout (as core/store/dynamodb/ddb_retry does). What the network
 * and DynamoDB do to an attempt, drawn from the seed: a delay with a long
 * tail, throttling (not applied), a 500 before or after it was applied, an
 * answer lost after the write was applied, a duplicated delivery (applied
 * twice, one answer). An attempt abandoned by its timeout may still land,
 * after its retry. A deleted table answers ResourceNotFound. A fenced
 * transaction keeps its ClientRequestToken across attempts: it commits
 * once. A replica cut off (a partition: sim.c) loses every attempt it
 * sends and every answer due to it until it is joined again: its calls
 * time out, their retries too, while its clock and timers run on.
 *
 * The operations on shared names (core/store/store_shared.h) travel the
 * same way. GRANT, RELEASE and REMOVE are transactions with one
 * ClientRequestToken per request, as core/store/dynamodb/ddb_shared.c
 * sends them: once one attempt committed, every later attempt (a retry, a
 * duplicate, a late delivery) changes nothing and answers what the commit
 * answered, as DynamoDB does within its idempotency window. RENEW,
 * XANNOUNCE, XCLEAR, XTAKE (UpdateItem) and READ (BatchGetItem) apply again
 * at every attempt that lands.
 */
#include "tests/sim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "core/store/store_batch.h"
#include "core/store/store_revoke.h"
#include "core/store/store_session.h"
#include "core/store/store_shared.h"
#include "core/store/store_tx.h"

#include <stddef.h>

#define SIM_ATTEMPTS 3
#define SIM_TIMEOUT_US                                                                             \
	1000000		       /* an attempt's timeout; a third of the lease for                   \
				  acquires and renewals, as store_dynamodb */
#define SIM_BACKOFF_BASE 50000 /* us; 500 ms after throttling */

/* What a call carries: a lock item request, a fenced transaction, an
 * operation on a shared name, on a session item (store_session.h) or on a
 * session's revocations (store_revoke.h). */
enum call_kind { K_REQ, K_TX, K_SH, K_SESS, K_REV, K_BATCH, K_COUNT };

/* The answer of a shared transaction's commit, given again to its later
 * attempts (the ClientRequestToken's outcome). */
struct sh_commit {
	struct store_sh_header header;
	struct lock_item slot;
};

struct store_call {
	struct store_call *next;   /* in the list of all calls */
	struct store_call **pprev; /* what points at it there: unlinked in O(1) */
	struct replica *rep;
	struct store *store; /* of the replica's incarnation that sent it */
	int incarnation;
	enum call_kind kind;
	bool finished, committed;
	bool owned;	   /* the core holds the handle: until its callback or cancel */
	int attempts, cur; /* attempts sent; the one awaited (0: none) */
	int refs;	   /* events that still point at it */
	store_cb cb;
	store_tx_cb tx_cb;
	store_sh_cb sh_cb;
	store_session_cb sess_cb;
	store_revoke_cb rev_cb;
	void (*batch_cb)(void *arg);
	void *arg;
	struct store_req req;
	struct store_sh_req sh;	       /* K_SH: its strings in the buffers below */
	struct store_session_req sess; /* K_SESS: likewise */
	struct store_revoke_req rev;   /* K_REV: likewise */
	/* K_BATCH: the caller's result (written at its answer), and the
	 * names asked for, copied (an attempt may land after a cancel) */
	struct store_batch_result *batch;
	char (*bnames)[SIM_NAME_MAX + 1];
	unsigned bcount;
	struct sh_commit *commit; /* K_SH transactions, once committed */
	int64_t token;		  /* a transaction's */
	char owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1], seen[STORE_ID_MAX + 1],
		waiter[STORE_ID_MAX + 1], holder[STORE_HOLDER_MAX + 1], name[SIM_NAME_MAX + 1];
	struct store_sh_set seen_set; /* RCLEAR's (store_shared.h), copied */
	/* ACQUIRE's and ADOPT's secret hashes, ADOPT's previous owner */
	char secret[STORE_SECRET_HASH_LEN + 1], prev_secret[STORE_SECRET_HASH_LEN + 1],
		prev_owner[STORE_ID_MAX + 1];
	/* session mode: a lock write's session, a takeover's seen session and
	 * the rvn its check wants, an ending's revoked session; a session
	 * request's replica, incarnation, killer, address; a revocation
	 * READ's cursor */
	char session[STORE_SESSION_KEY_MAX + 1], seen_session[STORE_SESSION_KEY_MAX + 1],
		sess_rvn[STORE_ID_MAX + 1], revoke_session[STORE_SESSION_KEY_MAX + 1],
		replica[STORE_SESSION_REPLICA_MAX + 1], inc[STORE_SESSION_INC_LEN + 1],
		by[STORE_ID_MAX + 1], addr[STORE_SESSION_ADDR_MAX + 1],
		cursor[STORE_REVOKE_KEY_LEN + 1];
	char lname[SIM_NAME_MAX + 1]; /* a session READ's lock, a revocation's */
};

/* One attempt on its way (deliver), or its answer coming back, or its
 * timeout. Allocated with room for its call's kind of answer only (a
 * result of another kind is not there): events of many calls in flight
 * at once (sim_scale.c) stay small. */
struct sev {
	struct store_call *c;
	int attempt;
	bool dup;
	union {
		struct store_result res;
		struct store_tx_result tx;
		struct store_sh_result sh; /* its slots this event's own (sev_free) */
		struct store_session_result ss;
		struct store_revoke_result rv; /* its entries this event's own (sev_free) */
		struct store_batch_result bt;  /* likewise */
	};
};

/* The size of an event of c's kind. */
static size_t sev_size(const struct store_call *c)
{
	static const size_t answer_size[K_COUNT] = {
		[K_REQ] = sizeof(struct store_result),
		[K_TX] = sizeof(struct store_tx_result),
		[K_SH] = sizeof(struct store_sh_result),
		[K_SESS] = sizeof(struct store_session_result),
		[K_REV] = sizeof(struct store_revoke_result),
		[K_BATCH] = sizeof(struct store_batch_result),
	};
	return offsetof(struct sev, res) + answer_size[c->kind];
}

static struct store_call *calls;

static int64_t attempt_timeout_us(const struct store_call *c)
{
	bool leased = c->kind == K_REQ && (c->req.op == STORE_ACQUIRE || c->req.op == STORE_RENEW);
	bool sh_leased =
		c->kind == K_SH && (c->sh.op == STORE_SH_GRANT || c->sh.op == STORE_SH_RENEW);
	int64_t t = leased	? c->req.lease_ms / 3 * 1000
		    : sh_leased ? c->sh.lease_ms / 3 * 1000
				: SIM_TIMEOUT_US;
	return t < SIM_TIMEOUT_US ? t : SIM_TIMEOUT_US;
}
static uint64_t pending;

/* Owners the table applied a write of, with the table's incarnation then
 * (the latest first when looked up). */
struct owners {
	struct owner_rec {
		char owner[STORE_ID_MAX + 1];
		int inc;
	} * v;
	size_t n, cap;
};
static struct owners released, acquired;

static void remember(struct owners *o, const char *owner, int inc)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->v = realloc(o->v, o->cap * sizeof(*o->v));
		if (o->v == NULL)
			abort();
	}
	snprintf(o->v[o->n].owner, STORE_ID_MAX + 1, "%s", owner);
	o->v[o->n++].inc = inc;
}

static int recalled(const struct owners *o, const char *owner)
{
	for (size_t i = o->n; i-- > 0;)
		if (strcmp(o->v[i].owner, owner) == 0)
			return o->v[i].inc;
	return -1;
}

static void send_attempt(void *arg);

static struct sev *sev_new(struct store_call *c, int attempt)
{
	struct sev *e = calloc(1, sev_size(c));
	if (e == NULL)
		abort(); /* the simulator's own memory: nothing to shed */
	e->c = c;
	e->attempt = attempt;
	c->refs++;
	pending++;
	return e;
}

static void sev_free(struct sev *e)
{
	e->c->refs--;
	pending--;
	if (e->c->kind == K_SH)
		free(e->sh.slots);
	if (e->c->kind == K_REV)
		free((void *)e->rv.entries);
	if (e->c->kind == K_BATCH)
		free(e->bt.entries);
	free(e);
}

static bool fault(uint32_t ppm)
{
	return !SIM->calm && sim_chance(ppm);
}

/* A session's request (CREATE, BEAT, KILL, READ): the faults aimed at the
 * heartbeat (sim_faults.beat_ppm) hit it on top of every request's. */
static bool session_call(const struct store_call *c)
{
	return c != NULL && c->kind == K_SESS;
}

/* A fault of ppm on c: every request's chance, then the heartbeat's for a
 * session request (no draw for others: the per-lease world draws as it
 * did). */
static bool fault_on(const struct store_call *c, uint32_t ppm)
{
	if (fault(ppm))
		return true;
	bool hit = session_call(c) && fault(SIM->cfg.f.beat_ppm);
	TALLY.session_faults += hit;
	return hit;
}

/* A delay on the way to or from the table: a long tail now and then; a
 * session request's may be late by up to two leases (past its lease). */
static int64_t delay_us(const struct store_call *c)
{
	const struct sim_faults *f = &SIM->cfg.f;
	if (session_call(c) && fault(f->beat_ppm)) {
		TALLY.session_faults++;
		return sim_range(f->delay_max_us, 2 * SIM->cfg.lease_ms * 1000);
	}
	if (!SIM->calm && sim_chance(f->tail_ppm))
		return sim_range(f->delay_max_us, f->tail_max_us);
	return sim_range(f->delay_min_us, f->delay_max_us);
}

static void capture(void *arg, const struct store_result *res)
{
	*(struct store_result *)arg = *res;
}

/* One request applied by the table, atomically. */
static void apply_req(struct store_call *c, struct store_result *res)
{
	struct store_req r = c->req;
	struct lock_item before;
	r.span = NULL;
	if (!store_read_now(SIM->mem, r.name, &before))
		abort();
	clock_fake_advance(SIM->ddb_clock, SIM->now_us / 1000 - clock_now_ms(SIM->ddb_clock));
	if (store_submit(SIM->mem, &r, capture, res) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
	/* as store_dynamodb does: a retried release whose first attempt may
	 * have been applied finds the lock free: that is the release */
	if (res->status == STORE_REFUSED && r.op == STORE_RELEASE && c->attempts > 1 &&
	    res->item.exists && !res->item.has_owner) {
		res->status = STORE_OK;
		return;
	}
	if (res->status != STORE_OK)
		return;
	/* an acquire answered OK without a write (an earlier attempt of it
	 * applied: ACQUIRE in store.h) leaves the fence as it was */
	bool wrote = !before.exists || !before.has_fence || before.fence != res->item.fence;
	if (r.op == STORE_ACQUIRE && wrote) {
		sim_check_applied_acquire(r.name, res->item.fence);
		remember(&acquired, r.owner, SIM->table_incarnation);
	}
	if (r.op == STORE_ADOPT) /* the adopter's lease lives in this table */
		remember(&acquired, r.owner, SIM->table_incarnation);
	if (r.op == STORE_RELEASE)
		remember(&released, r.owner, SIM->table_incarnation);
}

/* A fenced transaction applied: the check on the lock item, then the
 * client's write (the checker's record), once per ClientRequestToken. */
static void apply_tx(struct store_call *c, struct store_tx_result *res)
{
	struct store_result chk;
	struct store_req r = {
		.op = STORE_CHECK, .name = c->name, .owner = c->owner, .token = c->token};
	memset(res, 0, sizeof(*res));
	if (c->committed) {
		res->status = STORE_OK; /* the token's first outcome */
		return;
	}
	if (store_submit(SIM->mem, &r, capture, &chk) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
	res->status = chk.status;
	if (chk.status == STORE_OK) {
		c->committed = true;
		sim_check_fenced_write(c->name, c->owner, c->token);
	} else {
		res->index = 0;
		res->item = chk.item;
		res->reasons = "[]";
	}
}

/* ---- shared names ---- */

static const char *const sh_op_names[] = {
	[STORE_SH_GRANT] = "sh-grant",	   [STORE_SH_RENEW] = "sh-renew",
	[STORE_SH_RELEASE] = "sh-release", [STORE_SH_REMOVE] = "sh-remove",
	[STORE_SH_READ] = "sh-read",	   [STORE_SH_XANNOUNCE] = "sh-xannounce",
	[STORE_SH_XCLEAR] = "sh-xclear",   [STORE_SH_XTAKE] = "sh-xtake",
	[STORE_SH_RWAIT] = "sh-rwait",	   [STORE_SH_RUNWAIT] = "sh-runwait",
	[STORE_SH_RCLEAR] = "sh-rclear",   [STORE_SH_CHECK] = "sh-check",
};

static const char *const sess_op_names[] = {
	[STORE_SESSION_CREATE] = "sess-create",
	[STORE_SESSION_BEAT] = "sess-beat",
	[STORE_SESSION_KILL] = "sess-kill",
	[STORE_SESSION_READ] = "sess-read",
};
static const char *const rev_op_names[] = {
	[STORE_REVOKE_READ] = "rev-read",
	[STORE_REVOKE_DELETE] = "rev-delete",
};

static const char *op_name(const struct store_call *c)
{
	return c->kind == K_TX	    ? "transact"
	       : c->kind == K_SH    ? sh_op_names[c->sh.op]
	       : c->kind == K_SESS  ? sess_op_names[c->sess.op]
	       : c->kind == K_REV   ? rev_op_names[c->rev.op]
	       : c->kind == K_BATCH ? "BATCH-READ"
				    : store_op_name(c->req.op);
}

/* A ClientRequestToken's operation (ddb_shared.c): GRANT, RELEASE, REMOVE. */
static bool sh_is_tx(const struct store_sh_req *r)
{
	return r->op == STORE_SH_GRANT || r->op == STORE_SH_RELEASE || r->op == STORE_SH_REMOVE;
}

/* res, its slots copied: the event's own from now on. */
static void sh_keep(struct store_sh_result *into, const struct store_sh_result *res)
{
	*into = *res;
	into->slots = calloc(res->nslots > 0 ? res->nslots : 1, sizeof(*into->slots));
	if (into->slots == NULL)
		abort();
	if (res->nslots > 0)
		memcpy(into->slots, res->slots, res->nslots * sizeof(*into->slots));
}

static void sh_capture(void *arg, const struct store_sh_result *res)
{
	sh_keep(arg, res);
}

/* A GRANT's answer from DynamoDB's store is made from what the caller saw
 * (ddb_shared.c: TransactWriteItems answers no items): its fences, the
 * tokens, are the ones seen + 1 (the header's only for a readers' first
 * grant). The table's must be those, or the tokens the lease core hands
 * out differ by store. */
static void sh_check_grant(const struct store_sh_req *r, const struct store_sh_result *res)
{
	int64_t header = r->seen_fence + (r->first && r->mode == STORE_SH_SHARED ? 1 : 0);
	int64_t slot = r->seen_slot_fence + 1;
	if (res->header.lock.fence != header || res->slots[0].fence != slot)
		sim_violation("%s: a grant of slot %u that saw fences %lld (header) and %lld "
			      "(slot) left %lld and %lld, not %lld and %lld",
			      r->name, r->slot, (long long)r->seen_fence,
			      (long long)r->seen_slot_fence, (long long)res->header.lock.fence,
			      (long long)res->slots[0].fence, (long long)header, (long long)slot);
}

/* What the checker learns of a shared write applied: a readers' phase
 * raised the header's fence (a token of the same sequence as the
 * exclusive holders'); a grant or release of owner. */
static void sh_applied(const struct store_sh_req *r, const struct store_sh_result *res)
{
	if (r->op == STORE_SH_GRANT) {
		sh_check_grant(r, res);
		if (r->first && r->mode == STORE_SH_SHARED)
			sim_check_applied_acquire(r->name, res->header.lock.fence);
		remember(&acquired, r->owner, SIM->table_incarnation);
	}
	if (r->op == STORE_SH_RELEASE)
		remember(&released, r->owner, SIM->table_incarnation);
}

/* One shared operation applied by the table, atomically; a transaction
 * whose token committed already answers as it did then. */
static void apply_sh(struct store_call *c, struct store_sh_result *res)
{
	if (c->committed) {
		struct store_sh_result again = {.status = STORE_OK, .index = 2, .nslots = 1};
		again.header = c->commit->header;
		again.slots = &c->commit->slot;
		sh_keep(res, &again);
		return;
	}
	clock_fake_advance(SIM->ddb_clock, SIM->now_us / 1000 - clock_now_ms(SIM->ddb_clock));
	if (store_sh_submit(SIM->mem, &c->sh, sh_capture, res) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
	if (res->status != STORE_OK)
		return;
	sh_applied(&c->sh, res);
	if (sh_is_tx(&c->sh)) {
		c->committed = true;
		c->commit = calloc(1, sizeof(*c->commit));
		if (c->commit == NULL)
			abort();
		c->commit->header = res->header;
		c->commit->slot = res->slots[0];
	}
}

/* ---- sessions and revocations ---- */

static void sess_capture(void *arg, const struct store_session_result *res)
{
	*(struct store_session_result *)arg = *res;
}

/* A session request applied by the table, atomically. Every attempt that
 * lands applies again, as an UpdateItem does (a BEAT twice is two beats; a
 * CREATE or a KILL again is refused, their callers know why). */
static void apply_sess(struct store_call *c, struct store_session_result *res)
{
	clock_fake_advance(SIM->ddb_clock, SIM->now_us / 1000 - clock_now_ms(SIM->ddb_clock));
	if (store_session_submit(SIM->mem, &c->sess, sess_capture, res) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
	if (c->sess.op == STORE_SESSION_KILL && res->status == STORE_OK) {
		TALLY.kills++;
		sim_log("ddb  %s marked dead by %s", c->replica, c->by);
	}
}

/* res, its entries copied: the event's own from now on. */
static void rev_capture(void *arg, const struct store_revoke_result *res)
{
	struct store_revoke_result *into = arg;
	struct store_revoke_entry *v = calloc(res->count > 0 ? res->count : 1, sizeof(*v));
	if (v == NULL)
		abort();
	if (res->count > 0)
		memcpy(v, res->entries, res->count * sizeof(*v));
	*into = *res;
	into->entries = v;
}

static void apply_rev(struct store_call *c, struct store_revoke_result *res)
{
	clock_fake_advance(SIM->ddb_clock, SIM->now_us / 1000 - clock_now_ms(SIM->ddb_clock));
	if (store_revoke_submit(SIM->mem, &c->rev, rev_capture, res) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
}

/* ---- the sweep's batch reads ---- */

static void batch_capture(void *arg)
{
	(void)arg; /* the table wrote the event's result in place */
}

/* A batch read by the table, in the event's own entries (the call's
 * names): a strongly consistent read of each item at this moment. */
static void apply_batch(struct store_call *c, struct store_batch_result *res)
{
	unsigned n = c->bcount;
	struct store_batch_entry *v = calloc(n > 0 ? n : 1, sizeof(*v));
	if (v == NULL)
		abort();
	for (unsigned i = 0; i < n; i++)
		v[i].name = c->bnames[i];
	*res = (struct store_batch_result){.entries = v, .count = n};
	clock_fake_advance(SIM->ddb_clock, SIM->now_us / 1000 - clock_now_ms(SIM->ddb_clock));
	if (store_batch_read(SIM->mem, res, batch_capture, NULL) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
}

/* The answer into the caller's result: the entries the table read, none
 * when the network made the answer (an error, a timeout). */
static void finish_batch(struct store_call *c, const struct store_batch_result *res)
{
	struct store_batch_result *to = c->batch;
	to->status = res->status;
	to->error_type = res->error_type;
	snprintf(to->message, sizeof(to->message), "%s", res->message);
	for (unsigned i = 0; i < to->count; i++) {
		bool got = res->entries != NULL && i < res->count && res->entries[i].read;
		to->entries[i].read = got;
		if (got)
			to->entries[i].item = res->entries[i].item;
	}
	c->batch_cb(c->arg);
}

/* ---- attempts and answers ---- */

/* Where each kind of call keeps its answer's status, error type and
 * message in a struct sev. */
static const struct answer_at {
	size_t status, type, message, size;
} answer_at[K_COUNT] = {
#define AT(k, f)                                                                                   \
	[k] = {offsetof(struct sev, f.status), offsetof(struct sev, f.error_type),                 \
	       offsetof(struct sev, f.message), sizeof(((struct sev *)0)->f.message)}
	AT(K_REQ, res), AT(K_TX, tx), AT(K_SH, sh), AT(K_SESS, ss), AT(K_REV, rv), AT(K_BATCH, bt),
#undef AT
};

static void set_error(struct sev *e, enum store_status st, const char *type)
{
	const struct answer_at *a = &answer_at[e->c->kind];
	char *base = (char *)e;
	*(enum store_status *)(base + a->status) = st;
	*(const char **)(base + a->type) = type;
	snprintf(base + a->message, a->size, "%s (simulated)", type);
}

static enum store_status status_of(const struct sev *e)
{
	return *(const enum store_status *)((const char *)e + answer_at[e->c->kind].status);
}

static const char *error_type_of(const struct sev *e)
{
	return *(const char *const *)((const char *)e + answer_at[e->c->kind].type);
}

static void answer(void *arg);

static bool cut_off(const struct replica *r)
{
	return r->cut_until_us > SIM->now_us;
}

/* The attempt of e applied by the table, its answer into e. */
static void apply(struct sev *e)
{
	struct store_call *c = e->c;
	if (c->kind == K_TX)
		apply_tx(c, &e->tx);
	else if (c->kind == K_SH)
		apply_sh(c, &e->sh);
	else if (c->kind == K_SESS)
		apply_sess(c, &e->ss);
	else if (c->kind == K_REV)
		apply_rev(c, &e->rv);
	else if (c->kind == K_BATCH)
		apply_batch(c, &e->bt);
	else
		apply_req(c, &e->res);
}

/* An attempt reaches the table. */
static void deliver(void *arg)
{
	struct sev *e = arg;
	struct store_call *c = e->c;
	const struct sim_faults *f = &SIM->cfg.f;
	const char *what = "applied";
	if (cut_off(c->rep)) {
		sim_log("net  %s #%d %s %s lost: cut off", c->rep->label, e->attempt, op_name(c),
			c->name);
		sev_free(e); /* its timeout comes */
		return;
	}
	if (SIM->table_gone) {
		set_error(e, c->kind == K_TX ? STORE_FATAL : STORE_NO_TABLE,
			  "ResourceNotFoundException");
		what = "no table";
	} else if (session_call(c) && c->rep->beats_cut_until_us > SIM->now_us) {
		set_error(e, STORE_TRANSIENT, "ThrottlingException");
		what = "throttled (a blackout of sessions)";
	} else if (fault_on(c, f->throttle_ppm)) {
		set_error(e, STORE_TRANSIENT, "ThrottlingException");
		what = "throttled";
	} else if (fault_on(c, f->err500_before_ppm)) {
		set_error(e, STORE_TRANSIENT, "InternalServerError");
		what = "500";
	} else {
		apply(e);
		if (fault_on(c, f->err500_after_ppm)) {
			set_error(e, STORE_TRANSIENT, "InternalServerError");
			what = "applied, then 500";
		}
	}
	sim_log("ddb  %s #%d %s %s%s: %s -> %s", c->rep->label, e->attempt, op_name(c), c->name,
		e->dup ? " (dup)" : "", what, store_status_name(status_of(e)));
	if (!e->dup && fault_on(c, f->dup_ppm)) {
		struct sev *d = sev_new(c, e->attempt);
		d->dup = true;
		sim_at(SIM->now_us + delay_us(c), deliver, d);
	}
	if (e->dup || fault_on(c, f->lost_answer_ppm)) {
		if (!e->dup)
			sim_log("net  %s answer of #%d on %s lost", c->rep->label, e->attempt,
				c->name);
		sev_free(e);
		return;
	}
	sim_at(SIM->now_us + delay_us(c), answer, e);
}

static void call_maybe_free(struct store_call *c)
{
	if (!c->finished || c->owned || c->refs > 0)
		return;
	*c->pprev = c->next;
	if (c->next != NULL)
		c->next->pprev = c->pprev;
	free(c->commit);
	free(c->bnames);
	free(c);
}

/* A shared answer to the core: one without items (an error the network
 * made, a timeout) still shows an empty slot, as the stores' do. */
static void finish_sh(struct store_call *c, struct store_sh_result *res)
{
	static struct lock_item none;
	if (res->slots == NULL) {
		memset(&none, 0, sizeof(none));
		res->slots = &none;
		res->nslots = 0;
	}
	c->sh_cb(c->arg, res);
	if (res->slots == &none)
		res->slots = NULL;
}

/* A revocations' answer to the core: one without entries (an error the
 * network made, a timeout) still points at none. */
static void finish_rev(struct store_call *c, struct store_revoke_result *res)
{
	static const struct store_revoke_entry none;
	if (res->entries == NULL)
		res->entries = &none;
	c->rev_cb(c->arg, res);
	if (res->entries == &none)
		res->entries = NULL;
}

static void finish(struct store_call *c, struct sev *e)
{
	c->finished = true;
	c->cur = 0;
	if (c->rep->dead || c->incarnation != c->rep->incarnation)
		return;
	c->store->in_flight--;
	c->owned = false;
	if (c->kind == K_TX)
		c->tx_cb(c->arg, &e->tx);
	else if (c->kind == K_SH)
		finish_sh(c, &e->sh);
	else if (c->kind == K_SESS)
		c->sess_cb(c->arg, &e->ss);
	else if (c->kind == K_REV)
		finish_rev(c, &e->rv);
	else if (c->kind == K_BATCH)
		finish_batch(c, &e->bt);
	else
		c->cb(c->arg, &e->res);
}

/* The SDK's decision on an attempt's outcome: retry, or answer. */
static void outcome(struct sev *e, bool timed_out)
{
	struct store_call *c = e->c;
	enum store_status st = status_of(e);
	if (timed_out)
		set_error(e, STORE_TRANSIENT, "RequestTimeout");
	if ((timed_out || st == STORE_TRANSIENT) && c->attempts < SIM_ATTEMPTS) {
		const char *type = error_type_of(e);
		int64_t base = strcmp(type, "ThrottlingException") == 0 ? 10 * SIM_BACKOFF_BASE
									: SIM_BACKOFF_BASE;
		c->cur = 0;
		struct sev *r = sev_new(c, c->attempts + 1);
		sim_at(SIM->now_us + sim_range(0, base << (c->attempts - 1)), send_attempt, r);
		return;
	}
	finish(c, e);
}

/* Whether the replica of c can take an answer now: not when it is dead
 * (dropped) or paused (later). */
static bool replica_ready(struct sev *e, sim_ev_fn again)
{
	struct replica *r = e->c->rep;
	if (r->dead || e->c->incarnation != r->incarnation) {
		e->c->finished = true;
		return false;
	}
	if (r->paused_until_us > SIM->now_us) {
		struct sev *later = sev_new(e->c, e->attempt);
		memcpy(later, e, sev_size(e->c));
		memset(&e->res, 0, sev_size(e->c) - offsetof(struct sev, res)); /* later's now */
		sim_at(r->paused_until_us, again, later);
		return false;
	}
	return true;
}

static void answer(void *arg)
{
	struct sev *e = arg;
	struct store_call *c = e->c;
	if (cut_off(c->rep))
		sim_log("net  %s answer of #%d on %s lost: cut off", c->rep->label, e->attempt,
			c->name);
	else if (!c->finished && e->attempt == c->cur && replica_ready(e, answer))
		outcome(e, false);
	sev_free(e);
	call_maybe_free(c);
}

static void timeout(void *arg)
{
	struct sev *e = arg;
	struct store_call *c = e->c;
	if (!c->finished && e->attempt == c->cur && replica_ready(e, timeout)) {
		sim_log("net  %s #%d on %s timed out", c->rep->label, e->attempt, c->name);
		outcome(e, true);
	}
	sev_free(e);
	call_maybe_free(c);
}

static void send_attempt(void *arg)
{
	struct sev *e = arg;
	struct store_call *c = e->c;
	if (!c->finished) {
		c->attempts = e->attempt;
		c->cur = e->attempt;
		sim_at(SIM->now_us + delay_us(c), deliver, sev_new(c, e->attempt));
		sim_at(SIM->now_us + attempt_timeout_us(c), timeout, sev_new(c, e->attempt));
	}
	sev_free(e);
	call_maybe_free(c);
}

static struct store_call *call_new(const char *name)
{
	struct store_call *c = calloc(1, sizeof(*c));
	if (c == NULL)
		abort();
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->owned = true;
	c->next = calls;
	c->pprev = &calls;
	if (calls != NULL)
		calls->pprev = &c->next;
	calls = c;
	return c;
}

struct sstore {
	struct store base;
	struct replica *rep;
	int incarnation;
};

static void start(struct store_call *c)
{
	c->store->in_flight++;
	if (c->rep->dead || c->incarnation != c->rep->incarnation) {
		/* a dead replica's last words go nowhere */
		c->finished = true;
		return;
	}
	c->cur = 1;
	c->attempts = 1;
	sim_at(SIM->now_us + delay_us(c), deliver, sev_new(c, 1));
	sim_at(SIM->now_us + attempt_timeout_us(c), timeout, sev_new(c, 1));
}

static const char *copy(char *dst, size_t n, const char *src)
{
	if (src == NULL)
		return NULL;
	snprintf(dst, n, "%s", src);
	return dst;
}

static struct store_call *ss_submit(struct store *s, const struct store_req *req, store_cb cb,
				    void *arg)
{
	struct sstore *ss = (struct sstore *)s;
	struct store_call *c = call_new(req->name);
	c->rep = ss->rep;
	c->store = s;
	c->incarnation = ss->incarnation;
	c->cb = cb;
	c->arg = arg;
	c->req = *req;
	c->req.name = c->name;
	c->req.owner = copy(c->owner, sizeof(c->owner), req->owner);
	c->req.rvn = copy(c->rvn, sizeof(c->rvn), req->rvn);
	c->req.seen_rvn = copy(c->seen, sizeof(c->seen), req->seen_rvn);
	c->req.holder = copy(c->holder, sizeof(c->holder), req->holder);
	c->req.waiter = copy(c->waiter, sizeof(c->waiter), req->waiter);
	c->req.secret_hash = copy(c->secret, sizeof(c->secret), req->secret_hash);
	c->req.prev_secret_hash =
		copy(c->prev_secret, sizeof(c->prev_secret), req->prev_secret_hash);
	c->req.prev_owner = copy(c->prev_owner, sizeof(c->prev_owner), req->prev_owner);
	c->req.session = copy(c->session, sizeof(c->session), req->session);
	c->req.seen_session = copy(c->seen_session, sizeof(c->seen_session), req->seen_session);
	c->req.sess_rvn = copy(c->sess_rvn, sizeof(c->sess_rvn), req->sess_rvn);
	c->req.revoke_session =
		copy(c->revoke_session, sizeof(c->revoke_session), req->revoke_session);
	c->req.span = NULL;
	sim_log("send %s %s %s%s%s%s", ss->rep->label, store_op_name(req->op), c->name,
		req->seen_rvn != NULL && req->op == STORE_ACQUIRE ? " (takeover)"
		: req->waiter != NULL				  ? " (announced)"
								  : "",
		req->session != NULL ? " (session)" : "",
		req->sess_check != STORE_SESS_CHECK_NONE ? " (session check)" : "");
	if ((unsigned)req->op < STORE_OP_COUNT)
		s->requests[req->op]++;
	start(c);
	return c;
}

static struct store_call *ss_transact(struct store *s, const struct store_tx_req *req,
				      store_tx_cb cb, void *arg)
{
	struct sstore *ss = (struct sstore *)s;
	struct store_call *c = call_new(req->name);
	c->rep = ss->rep;
	c->store = s;
	c->incarnation = ss->incarnation;
	c->kind = K_TX;
	c->tx_cb = cb;
	c->arg = arg;
	c->token = req->token;
	snprintf(c->owner, sizeof(c->owner), "%s", req->owner);
	s->requests[STORE_TRANSACT]++;
	start(c);
	return c;
}

static struct store_call *ss_sh_submit(struct store *s, const struct store_sh_req *req,
				       store_sh_cb cb, void *arg)
{
	struct sstore *ss = (struct sstore *)s;
	struct store_call *c = call_new(req->name);
	c->rep = ss->rep;
	c->store = s;
	c->incarnation = ss->incarnation;
	c->kind = K_SH;
	c->sh_cb = cb;
	c->arg = arg;
	c->sh = *req;
	c->sh.name = c->name;
	c->sh.owner = copy(c->owner, sizeof(c->owner), req->owner);
	c->sh.rvn = copy(c->rvn, sizeof(c->rvn), req->rvn);
	c->sh.seen_rvn = copy(c->seen, sizeof(c->seen), req->seen_rvn);
	c->sh.holder = copy(c->holder, sizeof(c->holder), req->holder);
	if (req->seen_set != NULL) {
		c->seen_set = *req->seen_set;
		c->sh.seen_set = &c->seen_set;
	}
	sim_log("send %s %s %s slot %u%s%s", ss->rep->label, op_name(c), c->name, req->slot,
		req->op == STORE_SH_GRANT && req->seen_rvn != NULL ? " (takeover)" : "",
		req->op == STORE_SH_GRANT && req->first ? " (first)" : "");
	start(c);
	return c;
}

static struct store_call *ss_session_submit(struct store *s, const struct store_session_req *req,
					    store_session_cb cb, void *arg)
{
	struct sstore *ss = (struct sstore *)s;
	if (!store_session_valid(req))
		return NULL;
	struct store_call *c = call_new("(session)");
	c->rep = ss->rep;
	c->store = s;
	c->incarnation = ss->incarnation;
	c->kind = K_SESS;
	c->sess_cb = cb;
	c->arg = arg;
	c->sess = *req;
	c->sess.replica = copy(c->replica, sizeof(c->replica), req->replica);
	c->sess.incarnation = copy(c->inc, sizeof(c->inc), req->incarnation);
	c->sess.rvn = copy(c->rvn, sizeof(c->rvn), req->rvn);
	c->sess.seen_rvn = copy(c->seen, sizeof(c->seen), req->seen_rvn);
	c->sess.by = copy(c->by, sizeof(c->by), req->by);
	c->sess.holder = copy(c->holder, sizeof(c->holder), req->holder);
	c->sess.addr = copy(c->addr, sizeof(c->addr), req->addr);
	c->sess.name = copy(c->lname, sizeof(c->lname), req->name);
	sim_log("send %s %s %s%s%s", ss->rep->label, op_name(c), req->replica,
		req->name != NULL ? " with " : "", req->name != NULL ? req->name : "");
	s->requests[store_session_counted_as(req->op)]++;
	TALLY.session_requests++;
	start(c);
	return c;
}

static struct store_call *ss_revoke_submit(struct store *s, const struct store_revoke_req *req,
					   store_revoke_cb cb, void *arg)
{
	struct sstore *ss = (struct sstore *)s;
	if (!store_revoke_valid(req))
		return NULL;
	struct store_call *c = call_new("(revocations)");
	c->rep = ss->rep;
	c->store = s;
	c->incarnation = ss->incarnation;
	c->kind = K_REV;
	c->rev_cb = cb;
	c->arg = arg;
	c->rev = *req;
	c->rev.session = copy(c->session, sizeof(c->session), req->session);
	c->rev.cursor = copy(c->cursor, sizeof(c->cursor), req->cursor);
	c->rev.name = copy(c->lname, sizeof(c->lname), req->name);
	sim_log("send %s %s %s", ss->rep->label, op_name(c), req->name != NULL ? req->name : "");
	s->requests[req->op == STORE_REVOKE_READ ? STORE_READ : STORE_DELETE]++;
	start(c);
	return c;
}

static struct store_call *ss_batch_read(struct store *s, struct store_batch_result *res,
					void (*cb)(void *arg), void *arg)
{
	struct sstore *ss = (struct sstore *)s;
	struct store_call *c = call_new("(batch)");
	c->bnames = calloc(res->count, sizeof(*c->bnames));
	if (c->bnames == NULL)
		abort();
	for (unsigned i = 0; i < res->count; i++)
		if (snprintf(c->bnames[i], sizeof(c->bnames[i]), "%s", res->entries[i].name) >=
		    (int)sizeof(c->bnames[i]))
			abort(); /* the simulator's names are shorter */
	c->rep = ss->rep;
	c->store = s;
	c->incarnation = ss->incarnation;
	c->kind = K_BATCH;
	c->batch = res;
	c->bcount = res->count;
	c->batch_cb = cb;
	c->arg = arg;
	sim_log("send %s BATCH-READ of %u locks, %s first", ss->rep->label, res->count,
		res->entries[0].name);
	s->requests[STORE_READ]++;
	start(c);
	return c;
}

static void ss_cancel(struct store *s, struct store_call *c)
{
	if (!c->finished)
		s->in_flight--;
	c->finished = true;
	c->owned = false;
	call_maybe_free(c);
}

static void ss_free(struct store *s)
{
	for (struct store_call *c = calls; c != NULL; c = c->next)
		if (c->store == s) {
			c->finished = true;
			c->store = NULL;
		}
	free(s);
}

static const struct store_ops sim_ops = {
	.submit = ss_submit,
	.cancel = ss_cancel,
	.free = ss_free,
	.transact = ss_transact,
	.sh_submit = ss_sh_submit,
	.session_submit = ss_session_submit,
	.revoke_submit = ss_revoke_submit,
	.batch_read = ss_batch_read,
};

struct store *sim_net_store(struct replica *r)
{
	struct sstore *ss = calloc(1, sizeof(*ss));
	if (ss == NULL)
		abort();
	ss->base.ops = &sim_ops;
	ss->base.table = "sim";
	ss->rep = r;
	ss->incarnation = r->incarnation;
	return &ss->base;
}

int sim_net_inflight(const struct replica *r, const char *name)
{
	int n = 0;
	for (const struct store_call *c = calls; c != NULL; c = c->next)
		if (c->rep == r && c->incarnation == r->incarnation && !c->finished &&
		    strcmp(c->name, name) == 0)
			n++;
	return n;
}

uint64_t sim_net_pending(void)
{
	return pending;
}

bool sim_net_release_applied(const char *owner)
{
	return recalled(&released, owner) >= 0;
}

int sim_net_acquired_in(const char *owner)
{
	return recalled(&acquired, owner);
}

void sim_net_abandon(struct store *s)
{
	bool again = true;
	while (again) { /* an answer may send again: look once more */
		again = false;
		for (struct store_call *c = calls; c != NULL; c = c->next) {
			if (c->store != s || c->kind != K_SH || !c->owned)
				continue;
			struct store_sh_result res = {.status = STORE_TRANSIENT, .index = 2};
			res.error_type = "ProcessGone";
			snprintf(res.message, sizeof(res.message),
				 "the process is gone (simulated)");
			if (!c->finished)
				s->in_flight--;
			c->finished = true;
			c->owned = false;
			finish_sh(c, &res);
			call_maybe_free(c);
			again = true;
			break;
		}
	}
}

void sim_net_table_delete(void)
{
	for (int i = 0; i < SIM->nnames; i++) {
		struct store_result res;
		struct store_req r = {.op = STORE_DELETE, .name = SIM->names[i]};
		if (store_submit(SIM->mem, &r, capture, &res) == NULL)
			abort();
		clock_fake_advance(SIM->ddb_clock, 0);
	}
	SIM->table_gone = true;
	SIM->table_incarnation++;
	sim_log("ddb  table deleted");
}

void sim_net_table_restore(void)
{
	SIM->table_gone = false;
	sim_log("ddb  table created again, empty");
}

void sim_net_free(void)
{
	while (calls != NULL) {
		struct store_call *c = calls;
		calls = c->next;
		free(c->commit);
		free(c);
	}
	free(released.v);
	free(acquired.v);
	released = acquired = (struct owners){0};
	pending = 0;
}
