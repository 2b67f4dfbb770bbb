/*
 * lt_revoke: the holder acting on its session's revocations in
 * `--heartbeat replica` (docs/design/replica-heartbeat.md, "Endings from
 * outside"; the entries: core/store/store_revoke.h). Not here: the
 * endings that write them (a release by token, a forced release, an
 * adopt, from any replica), the session's holding of extensions while a
 * revSeq is pending (core/lt_session.c).
 *
 * When a heartbeat's answer shows the session's revSeq risen, a pass
 * reads the session's entries (strongly consistent, a page at a time),
 * and for each one, (name, fence):
 *   - a lease of this table on name with that token (a member of the
 *     session): the lock item is read (strongly consistent) and the lease
 *     ended as a renewal refused by that item would end it (adopted,
 *     released, forced; taken over, deleted) — unless the item still shows
 *     the lease's owner (nothing ended it: kept);
 *   - else (released, lost or ended already): nothing to do;
 * then the entry is deleted, only once acted on. Once every entry is
 * deleted, lt_session_revocations_done(the revSeq the pass began at): the
 * session extends again. A revSeq risen meanwhile starts another pass. An
 * error restarts the pass after LT_RENEW_RETRY_FIRST_MS, doubling up to
 * LT_REVOKE_RETRY_MAX_MS (the session extends nothing meanwhile: leases
 * run out by the holder's clock, never later). A pass is for one session:
 * it stops when that session is no longer the current one.
 *
 * Its life is enum rv_state, changed by rv_set with a table of moves:
 *
 *   IDLE -> READING -> (CHECKING -> DELETING | DELETING)* -> IDLE
 *     any of them -> WAITING (an error) -> READING
 */
#include "core/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_revoke.h"

#define LT_REVOKE_RETRY_MAX_MS 1000LL

enum rv_state {
	RV_IDLE,     /* no pass */
	RV_READING,  /* a page of entries in flight */
	RV_CHECKING, /* the lock item of the current entry in flight */
	RV_DELETING, /* the current entry's delete in flight */
	RV_WAITING,  /* an error: the pass starts again at the timer */
	RV_STATE_COUNT
};

struct rv_entry {
	char *name;
	int64_t fence;
};

struct lt_revoker {
	struct locktable *t;
	enum rv_state state;
	uint32_t gen;			       /* the session the pass is for (lt_replica) */
	int64_t seen, pass_seq;		       /* revSeq seen; the one the pass acts up to */
	struct store_call *call;	       /* READ, item READ or DELETE in flight */
	struct rv_entry *page;		       /* the page being acted on */
	unsigned count, at;		       /* its entries, the current one */
	char cursor[STORE_REVOKE_KEY_LEN + 1]; /* after this page, "" none */
	int64_t retry_ms;
	struct timer retry;
};

#define BIT(s) (1u << (s))
static const unsigned rv_moves[RV_STATE_COUNT] = {
	[RV_IDLE] = BIT(RV_READING),
	[RV_READING] = BIT(RV_CHECKING) | BIT(RV_DELETING) | BIT(RV_READING) | BIT(RV_IDLE) |
		       BIT(RV_WAITING),
	[RV_CHECKING] = BIT(RV_DELETING) | BIT(RV_WAITING) | BIT(RV_IDLE),
	[RV_DELETING] = BIT(RV_CHECKING) | BIT(RV_DELETING) | BIT(RV_READING) | BIT(RV_IDLE) |
			BIT(RV_WAITING),
	[RV_WAITING] = BIT(RV_READING) | BIT(RV_IDLE),
};

static void rv_set(struct lt_revoker *v, enum rv_state to)
{
	char move[48];
	bool ok = (unsigned)v->state < RV_STATE_COUNT && (rv_moves[v->state] & BIT(to));
	if (!ok)
		snprintf(move, sizeof(move), "revocations %d -> %d", v->state, to);
	LG_ASSERT_MSG(ok, move);
	v->state = to;
}

static void page_free(struct lt_revoker *v)
{
	for (unsigned i = 0; i < v->count; i++)
		free(v->page[i].name);
	free(v->page);
	v->page = NULL;
	v->count = v->at = 0;
}

/* The current session's key while it is the one the pass is for. */
static const char *pass_key(const struct lt_revoker *v)
{
	return lt_replica_key_of(v->t, v->gen);
}

static void read_page(struct lt_revoker *v);

/* An error, or out of memory: the pass starts again later. */
static void fail(struct lt_revoker *v)
{
	page_free(v);
	rv_set(v, RV_WAITING);
	v->retry_ms = v->retry_ms == 0 ? LT_RENEW_RETRY_FIRST_MS : 2 * v->retry_ms;
	if (v->retry_ms > LT_REVOKE_RETRY_MAX_MS)
		v->retry_ms = LT_REVOKE_RETRY_MAX_MS;
	timer_arm(&v->retry, v->retry_ms);
}

/* No pass any more: its session ended or was replaced. */
static void stop(struct lt_revoker *v)
{
	store_cancel(v->t->store, v->call);
	v->call = NULL;
	page_free(v);
	timer_cancel(&v->retry);
	if (v->state != RV_IDLE)
		rv_set(v, RV_IDLE);
}

static void start_pass(struct lt_revoker *v)
{
	v->pass_seq = v->seen;
	v->cursor[0] = '\0';
	read_page(v);
}

/* Every entry up to pass_seq acted on and deleted. */
static void pass_done(struct lt_revoker *v)
{
	struct lt_session *s = lt_session_of(v->t);
	v->retry_ms = 0;
	if (pass_key(v) == NULL || !lt_session_revocations_done(s, v->pass_seq)) {
		stop(v);
		return;
	}
	if (v->seen > v->pass_seq) { /* risen meanwhile: the new entries */
		start_pass(v);
		return;
	}
	rv_set(v, RV_IDLE);
}

static void on_delete(void *arg, const struct store_revoke_result *res);
static void on_item(void *arg, const struct store_result *res);

/* Deletes the current entry (acted on). */
static void delete_entry(struct lt_revoker *v)
{
	const struct rv_entry *e = &v->page[v->at];
	struct store_revoke_req req = {.op = STORE_REVOKE_DELETE,
				       .session = pass_key(v),
				       .name = e->name,
				       .fence = e->fence};
	if (req.session == NULL) { /* its session ended meanwhile */
		stop(v);
		return;
	}
	rv_set(v, RV_DELETING);
	if ((v->call = store_revoke_submit(v->t->store, &req, on_delete, v)) == NULL)
		fail(v);
}

/* The lease of this table the entry names: held here, a member of the
 * pass's session, with the entry's fence as its token. */
static struct lease *named_lease(const struct lt_revoker *v, const struct rv_entry *e)
{
	struct lease *l = lt_local_lease(v->t, e->name);
	if (l == NULL || l->token != e->fence || !l->in_session || l->sess_gen != v->gen ||
	    l->state != LEASE_HELD)
		return NULL;
	return l;
}

/* Acts on the entries of the page from the current one. */
static void next_entry(struct lt_revoker *v)
{
	if (pass_key(v) == NULL) {
		stop(v);
		return;
	}
	if (v->at == v->count) {
		page_free(v);
		if (v->cursor[0] != '\0')
			read_page(v);
		else
			pass_done(v);
		return;
	}
	const struct rv_entry *e = &v->page[v->at];
	if (named_lease(v, e) == NULL) {
		delete_entry(v); /* nothing here to end */
		return;
	}
	struct store_req req = {.op = STORE_READ, .name = e->name};
	rv_set(v, RV_CHECKING);
	if ((v->call = store_submit(v->t->store, &req, on_item, v)) == NULL)
		fail(v);
}

static void on_item(void *arg, const struct store_result *res)
{
	struct lt_revoker *v = arg;
	v->call = NULL;
	if (res->status != STORE_OK) {
		fail(v);
		return;
	}
	struct lease *l = named_lease(v, &v->page[v->at]); /* still, after the read */
	const struct lock_item *it = &res->item;
	bool ours =
		it->exists && it->has_owner && strcmp(it->owner, l != NULL ? l->owner : "") == 0;
	if (l != NULL && !ours)
		(void)lt_lease_refused(l, it); /* its lost callback may free l */
	if (v->state == RV_CHECKING)	       /* a callback may not stop the pass: still ours */
		delete_entry(v);
}

static void on_delete(void *arg, const struct store_revoke_result *res)
{
	struct lt_revoker *v = arg;
	v->call = NULL;
	if (res->status != STORE_OK) {
		fail(v);
		return;
	}
	v->at++;
	next_entry(v);
}

/* Keeps the entries of a READ page (they are valid in the call only). */
static bool keep_page(struct lt_revoker *v, const struct store_revoke_result *res)
{
	v->page = calloc(res->count > 0 ? res->count : 1, sizeof(*v->page));
	if (v->page == NULL)
		return false;
	for (unsigned i = 0; i < res->count; i++) {
		v->page[i].fence = res->entries[i].fence;
		if ((v->page[i].name = strdup(res->entries[i].name)) == NULL) {
			v->count = i;
			return false;
		}
	}
	v->count = res->count;
	v->at = 0;
	snprintf(v->cursor, sizeof(v->cursor), "%s", res->cursor);
	return true;
}

static void on_page(void *arg, const struct store_revoke_result *res)
{
	struct lt_revoker *v = arg;
	v->call = NULL;
	if (res->status != STORE_OK || !keep_page(v, res)) {
		fail(v);
		return;
	}
	next_entry(v);
}

static void read_page(struct lt_revoker *v)
{
	struct store_revoke_req req = {
		.op = STORE_REVOKE_READ, .session = pass_key(v), .cursor = v->cursor};
	if (req.session == NULL) {
		stop(v);
		return;
	}
	rv_set(v, RV_READING);
	if ((v->call = store_revoke_submit(v->t->store, &req, on_page, v)) == NULL)
		fail(v);
}

static void retry_due(void *arg)
{
	struct lt_revoker *v = arg;
	if (pass_key(v) == NULL) {
		stop(v);
		return;
	}
	start_pass(v);
}

struct lt_revoker *lt_revoker_new(struct locktable *t)
{
	struct lt_revoker *v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	v->t = t;
	timer_init(&v->retry, t->clock, retry_due, v);
	return v;
}

void lt_revoker_rose(struct lt_revoker *v, uint32_t gen, int64_t rev_seq)
{
	if (gen != v->gen) { /* a new session: its revSeq counts from 0 */
		stop(v);
		v->seen = 0;
	}
	v->gen = gen;
	if (rev_seq > v->seen)
		v->seen = rev_seq;
	if (v->state == RV_IDLE)
		start_pass(v);
}

void lt_revoker_free(struct lt_revoker *v)
{
	if (v == NULL)
		return;
	store_cancel(v->t->store, v->call);
	timer_cancel(&v->retry);
	page_free(v);
	free(v);
}
