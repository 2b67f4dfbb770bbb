/*
 * lt_replica: `--heartbeat replica` on the holder's side of a locktable
 * (docs/design/replica-heartbeat.md, "Lock items in this mode", "The
 * holder's clock", "No orphans"): which session a write that takes a lock
 * names, a new session (a new incarnation) once the current one ended,
 * and the writes of leases that left their session with no lease left to
 * carry them — the conditional release of a lost one, a detached one's
 * return to per-lease form — and "No orphans": the read-back of a write
 * whose outcome is unknown (lt_replica_readback), and the release of an
 * untracked item naming this replica's session, whatever read found it
 * (lt_replica_untracked: the sweep, a waiter's poll, a try's read, a
 * refused acquire's item, a read-back). Not here: the session itself
 * (core/lt_session.c), the members' ends and losses (core/lease.c), its
 * revocations (core/lt_revoke.c, started from its on_revseq), a waiter's
 * watch of a session-mode lock.
 *
 * Sessions. t->replica->cur is the session new writes name; gen counts
 * them (0: none), so that a write remembers which it named (lt_wait and
 * lease .sess_gen): a lease won by a write naming a session that ended
 * since is lost (LT_SESSION), never moved to the next one — its item
 * names the ended session. A session ends from its own callbacks (its
 * members' on_lost, then on_end), inside which a release may hand a lock
 * on and so ask for a key: the ended session is then kept in ->old and
 * freed when the next one ends (by then its callbacks have long returned:
 * a session ends only from the loop) or with the table.
 */
#include "core/lease.h"
#include "core/lt_shared.h"
#include "core/lt_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum rwrite_kind {
	RW_RELEASE_LOST, /* RELEASE if owner = :owner (and rvn, session) */
	RW_UNSESSION,	 /* RENEW naming no session, on the lease's rvn */
	RW_READBACK	 /* READ of a lock a write of unknown outcome was on */
};

/* A write of a lease that is gone (or lost), carried by the table. */
struct rwrite {
	struct rwrite *prev, *next; /* in r->writes */
	struct locktable *t;
	struct lock *lock; /* a reference while it is in flight */
	struct store_call *call;
	enum rwrite_kind kind;
	unsigned sends;
	int64_t lease_ms;
	struct timer late; /* RW_READBACK: its second read, a lease later;
			    * RW_RELEASE_LOST: its send, at its lease's end */
	bool late_read;	   /* RW_READBACK: that second read is sent (or due) */
	char *holder;	   /* a copy, or NULL */
	char owner[STORE_ID_MAX + 1];
	char seen_rvn[STORE_ID_MAX + 1];
	char rvn[LT_ID_LEN + 1];
	char session[STORE_SESSION_KEY_MAX + 1]; /* RW_RELEASE_LOST's, "" none */
};

struct lt_replica {
	struct lt_session *cur, *old;
	struct lt_revoker *rev; /* acts on cur's revocations (lt_revoke.c) */
	struct lt_sweep *sweep; /* reads the locks held (lt_sweep.c) */
	uint32_t gen;		/* cur's; 0 when none could be made */
	struct lt_session_options o;
	char replica_id[STORE_SESSION_REPLICA_MAX + 1];
	char *addr;
	struct rwrite *writes;
	uint64_t orphans; /* untracked items released (lt_replica_untracked) */
};

static void member_lost(void *arg, struct lt_member *m, enum lt_loss why)
{
	(void)arg;
	lease_member_lost(m, why);
}

/* Only the current session beats, so only its revSeq can rise. */
static void revseq_rose(void *arg, int64_t rev_seq)
{
	struct locktable *t = arg;
	lt_revoker_rose(t->replica->rev, t->replica->gen, rev_seq);
}

/* A new current session, its CREATE sent; the ended one, if any, kept in
 * old. false: out of memory (cur unchanged). */
static bool next_session(struct locktable *t)
{
	struct lt_replica *r = t->replica;
	struct lt_session *s = lt_session_new(t->clock, t->store, t->obs, &r->o);
	if (s == NULL)
		return false;
	if (!lt_session_start(s)) {
		lt_session_free(s);
		return false;
	}
	if (r->cur != NULL) {
		lt_session_free(r->old);
		r->old = r->cur;
	}
	r->cur = s;
	r->gen++;
	if (r->gen == 0) /* 0 means none */
		r->gen = 1;
	return true;
}

bool lt_replica_init(struct locktable *t, const struct lt_options *o)
{
	if (o->heartbeat == LT_HEARTBEAT_LEASE)
		return true;
	if (o->heartbeat != LT_HEARTBEAT_REPLICA || o->replica_id == NULL ||
	    strlen(o->replica_id) > STORE_SESSION_REPLICA_MAX ||
	    (o->addr != NULL && strlen(o->addr) > STORE_SESSION_ADDR_MAX))
		return false;
	struct lt_replica *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return false;
	snprintf(r->replica_id, sizeof(r->replica_id), "%s", o->replica_id);
	if (o->addr != NULL && (r->addr = strdup(o->addr)) == NULL) {
		free(r);
		return false;
	}
	r->o = (struct lt_session_options){
		.replica = r->replica_id,
		.holder = t->holder_label,
		.addr = r->addr,
		.ttl = o->ttl_retention_ms != 0,
		.on_lost = member_lost,
		.on_revseq = revseq_rose,
		.arg = t,
	};
	t->replica = r;
	if ((r->rev = lt_revoker_new(t)) == NULL ||
	    (r->sweep = lt_sweep_new(t, o->sweep_ms)) == NULL || !next_session(t)) {
		lt_replica_free(t);
		return false;
	}
	return true;
}

static void rwrite_unlink(struct rwrite *w)
{
	struct lt_replica *r = w->t->replica;
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		r->writes = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
}

static void rwrite_free(struct rwrite *w)
{
	free(w->holder);
	free(w);
}

void lt_replica_free(struct locktable *t)
{
	struct lt_replica *r = t->replica;
	if (r == NULL)
		return;
	while (r->writes != NULL) { /* dropped; lt_free frees the locks */
		struct rwrite *w = r->writes;
		r->writes = w->next;
		store_cancel(t->store, w->call);
		timer_cancel(&w->late);
		rwrite_free(w);
	}
	lt_revoker_free(r->rev);
	lt_sweep_free(r->sweep);
	lt_session_free(r->cur);
	lt_session_free(r->old);
	free(r->addr);
	free(r);
	t->replica = NULL;
}

const char *lt_replica_key(struct locktable *t, uint32_t *gen)
{
	struct lt_replica *r = t->replica;
	struct lt_session_view v;
	lt_session_view(r->cur, &v);
	if (v.state == LT_SESSION_ENDED && !next_session(t))
		return NULL;
	lt_session_view(r->cur, &v);
	*gen = r->gen;
	return v.key;
}

const char *lt_replica_key_of(const struct locktable *t, uint32_t gen)
{
	const struct lt_replica *r = t->replica;
	if (r == NULL || gen != r->gen)
		return NULL;
	struct lt_session_view v;
	lt_session_view(r->cur, &v);
	return v.state == LT_SESSION_ENDED ? NULL : v.key;
}

enum lt_join lt_replica_join(struct locktable *t, uint32_t gen, struct lt_member *m,
			     int64_t lease_ms, int64_t send_ms)
{
	if (lt_replica_key_of(t, gen) == NULL)
		return LT_JOIN_ENDED;
	return lt_member_join(t->replica->cur, m, lease_ms, send_ms);
}

bool lt_replica_is_ours(const struct locktable *t, const char *key)
{
	const struct lt_replica *r = t->replica;
	if (r == NULL || key == NULL || key[0] == '\0')
		return false;
	struct lt_session *both[2] = {r->cur, r->old};
	for (int i = 0; i < 2; i++) {
		struct lt_session_view v;
		if (both[i] == NULL)
			continue;
		lt_session_view(both[i], &v);
		if (strcmp(v.key, key) == 0)
			return true;
	}
	return false;
}

struct lt_sweep *lt_sweep_of(const struct locktable *t)
{
	return t->replica != NULL ? t->replica->sweep : NULL;
}

struct lt_session *lt_session_of(const struct locktable *t)
{
	return t->replica != NULL ? t->replica->cur : NULL;
}

/* --- writes of leases gone --- */

static void on_rwrite(void *arg, const struct store_result *res);

static bool rwrite_send(struct rwrite *w)
{
	struct store_req req = {
		.name = w->lock->name,
		.name_hash = w->lock->hash,
		.owner = w->owner,
		.ttl = lt_ttl(w->t),
	};
	if (w->kind == RW_READBACK) {
		req = (struct store_req){
			.op = STORE_READ, .name = w->lock->name, .name_hash = w->lock->hash};
	} else if (w->kind == RW_RELEASE_LOST) {
		req.op = STORE_RELEASE;
		req.seen_rvn = w->seen_rvn[0] != '\0' ? w->seen_rvn : NULL;
		req.seen_session = w->session[0] != '\0' ? w->session : NULL;
	} else {
		req.op = STORE_RENEW;
		req.rvn = w->rvn;
		req.seen_rvn = w->seen_rvn;
		req.holder = w->holder;
		req.lease_ms = w->lease_ms;
	}
	w->call = store_submit(w->t->store, &req, on_rwrite, w);
	if (w->call == NULL)
		return false;
	w->sends++;
	return true;
}

/* What the item now shows, for the lock's waiters here: a write of ours
 * answered it (nothing of ours holds the lock: the write was on a lease's
 * owner that no longer has it here). */
static void rwrite_done(struct rwrite *w, const struct store_result *res)
{
	struct lock *lock = w->lock;
	bool seen = res->status == STORE_OK || (res->status == STORE_REFUSED && res->item.exists);
	if (seen && lock->held == NULL)
		lt_lock_see(lock, &res->item);
	lt_lock_kick(lock);
	if (res->status == STORE_OK && w->kind == RW_RELEASE_LOST) /* readers may go first */
		lt_sh_kick(w->t, lock->name);
}

/* A return to per lease refused by an item still under its owner in
 * session mode: a renewal by (name, token) landed first, keeping the
 * session (lt_foreign does for a session not its own): again on the rvn
 * it shows. Not when a lease of this table holds the lock now: the item
 * is that lease's (an acquire under the same owner, as an election's next
 * campaign sends, won it after the write this return followed), and
 * back to per lease it would be taken over while its holder counts it
 * held (sim seed 15519). */
static bool unsession_again(struct rwrite *w, const struct store_result *res)
{
	const struct lock_item *it = &res->item;
	if (w->kind != RW_UNSESSION || res->status != STORE_REFUSED || !it->has_owner ||
	    strcmp(it->owner, w->owner) != 0 || it->session[0] == '\0' || w->lock->held != NULL)
		return false;
	snprintf(w->seen_rvn, sizeof(w->seen_rvn), "%s", it->rvn);
	return true;
}

/* A release of a lost lease refused by its item still under its owner and
 * session with another rvn: a write of that lease it did not know landed
 * (a renewal whose answer was lost, one by (name, token) from another
 * replica, which keeps the session): again on the rvn it shows. Not when
 * a lease of this table holds the lock under that owner now: an acquire
 * under the same owner (an election's next campaign) won it, on the item
 * this release was for (own_again), as unsession_again says. */
static bool release_again(struct rwrite *w, const struct store_result *res)
{
	const struct lock_item *it = &res->item;
	const struct lease *held = w->lock->held;
	if (w->kind != RW_RELEASE_LOST || res->status != STORE_REFUSED || w->session[0] == '\0' ||
	    !it->has_owner || strcmp(it->owner, w->owner) != 0 ||
	    strcmp(it->session, w->session) != 0 || strcmp(it->rvn, w->seen_rvn) == 0 ||
	    (held != NULL && strcmp(held->owner, w->owner) == 0))
		return false;
	snprintf(w->seen_rvn, sizeof(w->seen_rvn), "%s", it->rvn);
	return true;
}

/* w is done: unlinked, freed, its lock's reference dropped. */
static void rwrite_end(struct rwrite *w)
{
	struct lock *lock = w->lock;
	rwrite_unlink(w);
	rwrite_free(w);
	lt_lock_unref(lock);
}

/* w's late send is due (a read-back's second read, a deferred release). */
static void late_send(void *arg)
{
	struct rwrite *w = arg;
	w->sends = 0;
	if (!rwrite_send(w))
		rwrite_end(w); /* out of memory: the sweep and the reads are left */
}

/* A read-back's answer (lt_replica_readback): tried again on errors;
 * read, the item is judged as every read of it is (lt_replica_untracked:
 * released when it names this replica's session under an owner nothing
 * here holds or writes). Unless that release started or a lease here
 * holds the item under the write's owner, the lock is read once more a
 * lease later: the write may still have been on its way (an attempt
 * that lands after its timeout was answered). */
static void readback_answered(struct rwrite *w, const struct store_result *res)
{
	if (res->status != STORE_OK) {
		if (w->sends < LT_REPLICA_SENDS && rwrite_send(w))
			return;
	} else {
		const struct lock *lock = w->lock;
		if (lt_replica_untracked(w->lock, &res->item) ||
		    (lock->held != NULL && strcmp(lock->held->owner, w->owner) == 0)) {
			rwrite_end(w);
			return;
		}
	}
	if (w->late_read) {
		rwrite_end(w);
		return;
	}
	w->late_read = true;
	timer_arm(&w->late, w->lease_ms);
}

static void on_rwrite(void *arg, const struct store_result *res)
{
	struct rwrite *w = arg;
	struct lock *lock = w->lock;
	w->call = NULL;
	if (w->kind == RW_READBACK) {
		readback_answered(w, res);
		return;
	}
	/* a failure may have applied or not: the same write again (a RENEW
	 * with its own rvn answers OK once applied; a RELEASE is idempotent) */
	bool again = (res->status == STORE_TRANSIENT || unsession_again(w, res) ||
		      release_again(w, res)) &&
		     w->sends < LT_REPLICA_SENDS;
	if (again && rwrite_send(w))
		return;
	rwrite_unlink(w);
	rwrite_done(w, res);
	rwrite_free(w);
	lt_lock_unref(lock);
}

static void rwrite_link(struct rwrite *w)
{
	struct lt_replica *r = w->t->replica;
	w->lock->refs++;
	w->next = r->writes;
	if (r->writes != NULL)
		r->writes->prev = w;
	r->writes = w;
}

/* Starts w (filled but for its links); out of memory: nothing is sent,
 * the item waits for a takeover or its session's end. */
static void rwrite_start(struct rwrite *w)
{
	if (!rwrite_send(w)) {
		rwrite_free(w);
		return;
	}
	rwrite_link(w);
}

/* w (filled but for its links) is sent at at_ms (late_send), carried
 * meanwhile. */
static void rwrite_defer(struct rwrite *w, int64_t at_ms)
{
	rwrite_link(w);
	timer_arm_at(&w->late, at_ms);
}

static struct rwrite *rwrite_new(struct lock *lock, enum rwrite_kind kind, const char *owner)
{
	struct rwrite *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->t = lock->t;
	w->lock = lock;
	w->kind = kind;
	timer_init(&w->late, lock->t->clock, late_send, w);
	snprintf(w->owner, sizeof(w->owner), "%s", owner);
	return w;
}

void lt_replica_release_lost(struct lock *lock, const char *owner, const char *rvn,
			     const char *session, int64_t at_ms)
{
	struct rwrite *w = rwrite_new(lock, RW_RELEASE_LOST, owner);
	if (w == NULL)
		return;
	if (session != NULL && session[0] != '\0') { /* the rvn only with it */
		snprintf(w->session, sizeof(w->session), "%s", session);
		snprintf(w->seen_rvn, sizeof(w->seen_rvn), "%s", rvn != NULL ? rvn : "");
	}
	if (at_ms > clock_now_ms(lock->t->clock))
		rwrite_defer(w, at_ms);
	else
		rwrite_start(w);
}

const char *lt_replica_key_any(const struct locktable *t, uint32_t gen)
{
	const struct lt_replica *r = t->replica;
	if (r == NULL || gen == 0)
		return NULL;
	uint32_t before = r->gen == 1 ? UINT32_MAX : r->gen - 1; /* 0 is skipped */
	const struct lt_session *s = gen == r->gen ? r->cur : gen == before ? r->old : NULL;
	if (s == NULL)
		return NULL;
	struct lt_session_view v;
	lt_session_view(s, &v);
	return v.key;
}

void lt_replica_unsession(struct lock *lock, const char *owner, const char *rvn, const char *holder,
			  int64_t lease_ms)
{
	struct rwrite *w = rwrite_new(lock, RW_UNSESSION, owner);
	if (w == NULL)
		return;
	if (holder != NULL && (w->holder = strdup(holder)) == NULL) {
		rwrite_free(w);
		return;
	}
	snprintf(w->seen_rvn, sizeof(w->seen_rvn), "%s", rvn);
	store_new_id(w->rvn);
	w->lease_ms = lease_ms;
	rwrite_start(w);
}

void lt_replica_readback(struct lock *lock, const char *owner, int64_t lease_ms)
{
	struct rwrite *w = rwrite_new(lock, RW_READBACK, owner);
	if (w == NULL)
		return;
	w->lease_ms = lease_ms;
	rwrite_start(w);
}

/* A carried write of t on lock (not a read-back) is in flight or due: the
 * item may be about to change under it (a detached lease's return to per
 * lease, a release already on its way or waiting for its lease's end). */
static bool rwrite_on(const struct locktable *t, const struct lock *lock)
{
	for (const struct rwrite *w = t->replica->writes; w != NULL; w = w->next)
		if (w->lock == lock && w->kind != RW_READBACK &&
		    (w->call != NULL || timer_armed(&w->late)))
			return true;
	return false;
}

bool lt_replica_untracked(struct lock *lock, const struct lock_item *it)
{
	struct locktable *t = lock->t;
	if (t->replica == NULL || !it->exists || !it->has_owner || it->owner[0] == '\0' ||
	    it->session[0] == '\0' || !lt_replica_is_ours(t, it->session))
		return false;
	if (lock->writes != 0 || lock->releasing != NULL ||
	    (lock->held != NULL && strcmp(lock->held->owner, it->owner) == 0) ||
	    rwrite_on(t, lock) || lt_adopt_on(t, lock))
		return false;
	t->replica->orphans++;
	lt_replica_release_lost(lock, it->owner, it->rvn, it->session, 0);
	return true;
}

uint64_t lt_replica_orphans(const struct locktable *t)
{
	return t->replica != NULL ? t->replica->orphans : 0;
}
