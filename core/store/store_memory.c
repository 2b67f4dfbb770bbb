/*
 * store_memory: the embedded store. Items live in a chained hash table keyed
 * by lock name; each request is copied into a call that completes from a
 * timer (zero delay by default), so callers see the same asynchrony as with
 * DynamoDB. The conditions are those of store.h, item for item. A scan is
 * a call like the others; the page it reads is store_memory_scan.c's.
 * Forgetting released items after the retention is store_memory_retention.c's.
 */
#include "core/store/store_memory_int.h"
#include "core/store/store_session.h"
#include "core/store/store_shared.h"
#include "core/store/store_tx.h"

#include "lib/base/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls whose strings fit 192 bytes come from a pool. */
static struct pool call_pool = POOL_INIT(sizeof(struct store_call) + 192, 4096);

static struct mitem **find_slot(struct mstore *ms, const char *name, uint64_t h)
{
	struct mitem **p = &ms->buckets[h & (ms->nbuckets - 1)];
	while (*p != NULL && ((*p)->hash != h || strcmp((*p)->name, name) != 0))
		p = &(*p)->next;
	return p;
}

struct mitem **mem_find_slot(struct mstore *ms, const char *name, uint64_t h)
{
	return find_slot(ms, name, h);
}

static void grow(struct mstore *ms)
{
	size_t n = ms->nbuckets * 2;
	struct mitem **b = calloc(n, sizeof(*b));
	if (b == NULL)
		return; /* keep the longer chains */
	for (size_t i = 0; i < ms->nbuckets; i++) {
		struct mitem *it = ms->buckets[i], *next;
		for (; it != NULL; it = next) {
			next = it->next;
			it->next = b[it->hash & (n - 1)];
			b[it->hash & (n - 1)] = it;
		}
	}
	free(ms->buckets);
	ms->buckets = b;
	ms->nbuckets = n;
}

/* The rare fields (struct mitem_rare) into out: "" and 0 for an item
 * without them (r NULL). */
static void copy_rare(const struct mitem_rare *r, struct lock_item *out)
{
	if (r == NULL) { /* the common case */
		out->expires_at = 0;
		out->exp_rvn[0] = '\0';
		out->secret_hash[0] = '\0';
		out->orphan[0] = out->adopted_from[0] = '\0';
		out->hash[0] = '\0';
		out->scount = 0;
		out->rwaiters = out->radmit = false;
		out->session[0] = '\0';
		out->slease_ms = 0;
		return;
	}
	if (r->session != NULL)
		snprintf(out->session, sizeof(out->session), "%s", r->session);
	else
		out->session[0] = '\0';
	out->slease_ms = r->slease_ms;
	out->scount = r->scount;
	out->rwaiters = r->rwaiters != NULL;
	out->radmit = r->radmit != NULL;
	out->expires_at = r->expires_at;
	memcpy(out->exp_rvn, r->exp_rvn, sizeof(out->exp_rvn));
	memcpy(out->secret_hash, r->secret_hash, sizeof(out->secret_hash));
	memcpy(out->orphan, r->orphan, sizeof(out->orphan));
	memcpy(out->adopted_from, r->adopted_from, sizeof(out->adopted_from));
	if (r->hfields != NULL) /* a script's hash */
		snprintf(out->hash, sizeof(out->hash), "%s", r->hfields);
	else
		out->hash[0] = '\0';
}

/* Each field written once: a read answered at once (LOCK.STATE) runs this
 * per request. */
void mem_copy_out(const struct mitem *it, struct lock_item *out)
{
	if (it == NULL) {
		out->owner[0] = out->rvn[0] = out->holder[0] = out->type[0] = '\0';
		out->fence = out->lease_ms = out->ttl = 0;
		out->exists = out->has_owner = out->has_rvn = out->has_lease = out->has_fence =
			false;
		out->fence_bad = false;
		out->has_waiter = false;
		out->waiter[0] = '\0';
		out->waiter_ms = 0;
		out->freed = 0;
		out->freed_forced = false;
		copy_rare(NULL, out);
		return;
	}
	out->exists = true;
	out->has_owner = it->owner[0] != '\0';
	out->has_rvn = it->rvn[0] != '\0';
	out->has_lease = it->has_lease;
	out->has_fence = !it->no_fence;
	out->fence_bad = it->fence_bad;
	/* whole arrays of one size: a few moves where strcpy scans */
	_Static_assert(sizeof(out->owner) == sizeof(it->owner), "owner sizes");
	_Static_assert(sizeof(out->rvn) == sizeof(it->rvn), "rvn sizes");
	memcpy(out->owner, it->owner, sizeof(out->owner));
	memcpy(out->rvn, it->rvn, sizeof(out->rvn));
	if (it->has_holder)
		strcpy(out->holder, it->holder);
	else
		out->holder[0] = '\0';
	if (it->other_type == NULL) /* a lock: the common case, without snprintf */
		memcpy(out->type, "LOCK", sizeof("LOCK"));
	else
		snprintf(out->type, sizeof(out->type), "%s", it->other_type);
	out->fence = it->fence;
	out->lease_ms = it->has_lease ? it->lease_ms : 0;
	out->ttl = it->ttl;
	out->has_waiter = it->waiter != NULL;
	if (out->has_waiter) { /* rare */
		strcpy(out->waiter, it->waiter);
		out->waiter_ms = it->waiter_ms;
	} else {
		out->waiter[0] = '\0';
		out->waiter_ms = 0;
	}
	out->freed = it->freed;
	out->freed_forced = it->freed_forced;
	copy_rare(it->rare, out);
}

static size_t slen(const char *s)
{
	return s != NULL ? strlen(s) + 1 : 0;
}

/* Writes the label (NULL: removes it). The string is kept when removed:
 * most writes bring back the label the lock had. */
static bool set_holder(struct mstore *ms, struct mitem *it, const char *holder)
{
	it->has_holder = holder != NULL;
	if (holder == NULL || (it->holder != NULL && strcmp(holder, it->holder) == 0))
		return true;
	char *h = strdup(holder);
	if (h == NULL) {
		it->has_holder = false;
		return false;
	}
	ms->bytes += slen(h);
	ms->bytes -= slen(it->holder);
	free(it->holder);
	it->holder = h;
	return true;
}

/* Sets the item's announced waiter (NULL: none), its bytes counted; false
 * on out-of-memory (the item unchanged). */
static bool set_waiter(struct mstore *ms, struct mitem *it, const char *waiter, int64_t waiter_ms)
{
	char *w = NULL;
	if (waiter != NULL && (w = strdup(waiter)) == NULL)
		return false;
	ms->bytes += slen(w);
	ms->bytes -= slen(it->waiter);
	free(it->waiter);
	it->waiter = w;
	it->waiter_ms = w != NULL ? waiter_ms : 0;
	return true;
}

/* The bytes of a block of rare fields (r NULL: none), its hash's too. */
static size_t rare_bytes(const struct mitem_rare *r)
{
	return r != NULL ? sizeof(*r) + slen(r->hfields) + slen(r->session) +
				   r->nslots * sizeof(struct mslot) +
				   ((r->rwaiters != NULL) + (r->radmit != NULL)) *
					   sizeof(struct store_sh_set)
			 : 0;
}

static void rare_free(struct mitem_rare *r)
{
	if (r != NULL) {
		free(r->hfields);
		free(r->session);
		free(r->slots);
		free(r->rwaiters);
		free(r->radmit);
	}
	free(r);
}

struct mitem_rare *mem_rare(struct mstore *ms, struct mitem *it)
{
	if (it->rare == NULL && (it->rare = calloc(1, sizeof(*it->rare))) != NULL)
		ms->bytes += rare_bytes(it->rare);
	return it->rare;
}

void mem_rare_trim(struct mstore *ms, struct mitem *it)
{
	const struct mitem_rare *r = it->rare;
	if (r == NULL || r->expires_at != 0 || r->hfields != NULL || r->exp_rvn[0] != '\0' ||
	    r->secret_hash[0] != '\0' || r->orphan[0] != '\0' || r->adopted_from[0] != '\0' ||
	    r->slots != NULL || r->rwaiters != NULL || r->radmit != NULL || r->session != NULL)
		return;
	ms->bytes -= rare_bytes(it->rare);
	rare_free(it->rare);
	it->rare = NULL;
}

void mem_rare_set_hfields(struct mstore *ms, struct mitem *it, const char *hash)
{
	struct mitem_rare *r = it->rare;
	ms->bytes -= slen(r->hfields);
	free(r->hfields);
	r->hfields = hash != NULL ? strdup(hash) : NULL;
	ms->bytes += slen(r->hfields);
}

/* Sets the lease's secret hash (NULL or "": none); false on out-of-memory
 * (the item unchanged). */
static bool set_secret_hash(struct mstore *ms, struct mitem *it, const char *hash)
{
	if (hash == NULL || hash[0] == '\0') {
		if (it->rare != NULL) {
			it->rare->secret_hash[0] = '\0';
			mem_rare_trim(ms, it);
		}
		return true;
	}
	if (mem_rare(ms, it) == NULL)
		return false;
	snprintf(it->rare->secret_hash, sizeof(it->rare->secret_hash), "%s", hash);
	return true;
}

/* Sets the lock's session (store.h ACQUIRE's .session) and real lease, or
 * removes both (session NULL); false on out-of-memory (the item
 * unchanged). The key is kept when the same is written again: a session's
 * locks are written again and again with it. */
static bool set_session(struct mstore *ms, struct mitem *it, const char *session, int64_t slease_ms)
{
	if (session == NULL) {
		if (it->rare != NULL && it->rare->session != NULL) {
			ms->bytes -= slen(it->rare->session);
			free(it->rare->session);
			it->rare->session = NULL;
			it->rare->slease_ms = 0;
			mem_rare_trim(ms, it);
		}
		return true;
	}
	if (mem_rare(ms, it) == NULL)
		return false;
	struct mitem_rare *r = it->rare;
	if (r->session == NULL || strcmp(r->session, session) != 0) {
		char *k = strdup(session);
		if (k == NULL) {
			mem_rare_trim(ms, it);
			return false;
		}
		ms->bytes += slen(k);
		ms->bytes -= slen(r->session);
		free(r->session);
		r->session = k;
	}
	r->slease_ms = slease_ms;
	return true;
}

/* A write's lease (store.h ACQUIRE, RENEW, ADOPT): the session mode's
 * session and real lease, its leaseMs and no TTL; or per lease, no
 * session, the lease and the TTL asked for (0: the TTL left). false on
 * out-of-memory (the session not written). */
static bool write_lease(struct mstore *ms, struct mitem *it, const struct store_req *r)
{
	if (!set_session(ms, it, r->session, r->lease_ms))
		return false;
	it->lease_ms = r->session != NULL ? STORE_SESSION_LOCK_LEASE_MS : r->lease_ms;
	it->has_lease = true;
	if (r->session != NULL)
		it->ttl = 0; /* REMOVE: a session-mode lock lives as its session */
	else if (r->ttl > 0)
		it->ttl = r->ttl;
	return true;
}

/* The embedded store holds up to a million locks: a field few items have
 * goes in struct mitem_rare, not here (560 bytes before it did). */
_Static_assert(sizeof(struct mitem) <= 264, "struct mitem grew: rare fields go in mitem_rare");

/* A new item at *slot; NULL on out-of-memory. */
static struct mitem *item_new(struct mstore *ms, struct mitem **slot, const char *name, uint64_t h)
{
	size_t len = strlen(name);
	struct mitem *it = calloc(1, sizeof(*it) + len + 1);
	if (it == NULL)
		return NULL;
	memcpy(it->name, name, len + 1);
	it->hash = h;
	*slot = it;
	ms->nitems++;
	ms->bytes += sizeof(*it) + len + 1;
	return it;
}

struct mitem *mem_item_add(struct mstore *ms, const char *name, uint64_t h)
{
	struct mitem **slot = find_slot(ms, name, h);
	if (*slot != NULL)
		return *slot;
	if (ms->max_items > 0 && ms->nitems >= ms->max_items)
		return NULL;
	struct mitem *it = item_new(ms, slot, name, h);
	if (it != NULL && ms->nitems > ms->nbuckets)
		grow(ms);
	return it;
}

/* Removes the item at *slot. */
void mem_item_delete(struct mstore *ms, struct mitem **slot)
{
	struct mitem *it = *slot;
	mem_freed_unlink(ms, it);
	*slot = it->next;
	ms->bytes -= sizeof(*it) + strlen(it->name) + 1 + slen(it->holder) + slen(it->other_type) +
		     slen(it->waiter) + rare_bytes(it->rare);
	free(it->holder);
	free(it->waiter);
	free(it->other_type);
	rare_free(it->rare);
	free(it);
	ms->nitems--;
}

/* The guard of an acquire (store.h): the item is a lock whose fence can
 * rise. Item for item DynamoDB's LOCK_GUARD (core/store/dynamodb/ddb_json.c),
 * except that a fence that is no int64 is refused here too. */
static bool lock_writable(const struct mitem *it)
{
	bool fence_ok = it->no_fence || (!it->fence_bad && it->fence >= 0 && it->fence < INT64_MAX);
	bool shape_ok = it->owner[0] == '\0' || (it->rvn[0] != '\0' && it->has_lease);
	bool unshared = it->rare == NULL || it->rare->scount == 0;	 /* no slot held */
	bool no_admitted = it->rare == NULL || it->rare->radmit == NULL; /* readers first */
	return it->other_type == NULL && fence_ok && shape_ok && unshared && no_admitted;
}

/* A takeover's condition on the session the item shows (store.h
 * ACQUIRE's .seen_session): that one, or none for "". */
static bool seen_session_ok(const struct mitem *it, const struct store_req *r)
{
	if (r->seen_session == NULL)
		return true;
	const char *has = it->rare != NULL ? it->rare->session : NULL;
	return r->seen_session[0] == '\0' ? has == NULL
					  : has != NULL && strcmp(has, r->seen_session) == 0;
}

/* A takeover's check of the session item (store.h ACQUIRE's .sess_check):
 * there with that rvn, or not there. */
static bool session_check_ok(const struct mstore *ms, const struct store_req *r)
{
	if (r->sess_check == STORE_SESS_CHECK_NONE)
		return true;
	const struct session_item *s = mem_session_find(ms, r->seen_session);
	if (r->sess_check == STORE_SESS_CHECK_ABSENT)
		return s == NULL;
	return s != NULL && strcmp(s->rvn, r->sess_rvn) == 0;
}

static bool acquire_allowed(const struct mitem *it, const struct store_req *r)
{
	if (r->unconditional)
		return true;
	if (it == NULL) /* no item: no fence either */
		return !r->has_seen_fence || r->seen_fence == 0;
	bool no_waiter = it->waiter == NULL;
	bool free = it->owner[0] == '\0';
	if (r->waiter != NULL) { /* may take that waiter's announcement, no other */
		if (!no_waiter && strcmp(it->waiter, r->waiter) != 0)
			return false;
		no_waiter = true;
	}
	bool mine = it->has_arvn && r->rvn != NULL && it->arvn_hash == store_name_hash(r->rvn);
	if (r->has_seen_fence &&
	    (r->seen_fence == 0 ? !it->no_fence
				: it->no_fence || it->fence_bad || it->fence != r->seen_fence))
		return false;		     /* an acquire was written since the item it saw */
	return lock_writable(it) && !mine && /* never on its own arvn (store.h) */
	       ((free && no_waiter) || (r->seen_rvn != NULL && strcmp(it->rvn, r->seen_rvn) == 0 &&
					seen_session_ok(it, r)));
}

static bool owner_is(const struct mitem *it, const char *owner)
{
	return it != NULL && it->owner[0] != '\0' && strcmp(it->owner, owner) == 0;
}

/* ADOPT's condition (store.h): the orphaned lease of prev_owner with
 * that fence and secret hash. */
static bool adoptable(const struct mitem *it, const struct store_req *r)
{
	return r->prev_owner != NULL && r->prev_secret_hash != NULL && r->secret_hash != NULL &&
	       owner_is(it, r->prev_owner) && it->fence == r->token && !it->fence_bad &&
	       it->rare != NULL && strcmp(it->rare->orphan, r->prev_owner) == 0 &&
	       it->rare->secret_hash[0] != '\0' &&
	       strcmp(it->rare->secret_hash, r->prev_secret_hash) == 0;
}

/* A renewal's rvn condition (store.h): the rvn its lease last wrote, or
 * its own (an earlier attempt of it applied). */
/* A lost lease's release, on the rvn and session it knew (RELEASE in
 * store.h): each only when given. */
static bool release_seen_ok(const struct mitem *it, const struct store_req *r)
{
	const char *session =
		it->rare != NULL && it->rare->session != NULL ? it->rare->session : "";
	return (r->seen_rvn == NULL || strcmp(it->rvn, r->seen_rvn) == 0) &&
	       (r->seen_session == NULL || strcmp(session, r->seen_session) == 0);
}

static bool renew_rvn_ok(const struct mitem *it, const struct store_req *r)
{
	return r->seen_rvn == NULL || strcmp(it->rvn, r->seen_rvn) == 0 ||
	       strcmp(it->rvn, r->rvn) == 0;
}

/* Applies one request to the table and fills res. */
static void apply(struct mstore *ms, const struct store_req *r, uint64_t h,
		  struct store_result *res)
{
	struct mitem **slot = find_slot(ms, r->name, h), *it = *slot;
	struct mem_rev_end rev; /* with .revoke_session (store_revoke.h) */

	res->status = STORE_OK;
	res->session_refused = false;
	switch (r->op) {
	case STORE_ACQUIRE:
		if (!acquire_allowed(it, r)) {
			/* an earlier attempt of this very request applied: OK,
			 * not written again (store.h) */
			mem_copy_out(it, &res->item);
			if (!store_acquire_applied(r->owner, r->rvn, &res->item))
				res->status = STORE_REFUSED;
			return;
		}
		if (!session_check_ok(ms, r)) { /* in the same write (store.h) */
			mem_copy_out(it, &res->item);
			res->status = STORE_REFUSED;
			res->session_refused = true;
			return;
		}
		if (it == NULL && ms->max_items > 0 && ms->nitems >= ms->max_items &&
		    ms->retention_ms > 0) { /* full: what is due goes first */
			mem_forget_released(ms, clock_now_ms(ms->clock));
			slot = find_slot(ms, r->name, h);
		}
		if (it == NULL && ms->max_items > 0 && ms->nitems >= ms->max_items) {
			mem_copy_out(NULL, &res->item);
			res->status = STORE_FATAL;
			res->error_type = "LockLimitExceeded";
			snprintf(res->message, sizeof(res->message),
				 "the embedded store holds its most locks (%zu): a new name is "
				 "refused until released ones are forgotten",
				 ms->max_items);
			return;
		}
		if (it == NULL) {
			if ((it = item_new(ms, slot, r->name, h)) == NULL)
				goto oom;
			if (ms->nitems > ms->nbuckets)
				grow(ms);
		}
		if (!set_secret_hash(ms, it, r->secret_hash) || !set_holder(ms, it, r->holder) ||
		    !write_lease(ms, it, r))
			goto oom;
		strcpy(it->owner, r->owner); /* left in its list of released items */
		strcpy(it->rvn, r->rvn);
		it->arvn_hash = store_name_hash(r->rvn);
		it->has_arvn = true;
		free(it->other_type); /* SET _type (only an unconditional write gets here) */
		it->other_type = NULL;
		if (it->no_fence || it->fence_bad)
			it->fence = 0; /* ADD on an absent fence starts from 0 */
		it->no_fence = false;
		/* Only an unconditional write reaches INT64_MAX here: DynamoDB's
		 * ADD makes it 2^63, which reads as no int64; so does this. */
		it->fence_bad = it->fence == INT64_MAX;
		it->fence = it->fence_bad ? 0 : it->fence + 1;
		if (r->waiter != NULL)
			set_waiter(ms, it, NULL, 0); /* a removal: cannot fail */
		mem_copy_out(it, &res->item);
		return;
	case STORE_RENEW:
		if (!owner_is(it, r->owner) || !renew_rvn_ok(it, r))
			break;
		if (!set_holder(ms, it, r->holder) || !write_lease(ms, it, r))
			goto oom;
		strcpy(it->rvn, r->rvn);
		mem_copy_out(it, &res->item);
		return;
	case STORE_RELEASE:
		if (it == NULL || (!r->unconditional && !owner_is(it, r->owner)) ||
		    !release_seen_ok(it, r))
			break;
		if (r->revoke_session != NULL && !mem_revoke_prepare(ms, r, &rev, res))
			goto revoke_refused;
		if (it->owner[0] != '\0' || !it->in_freed) /* not released already */
			mem_freed_link(ms, it);
		it->owner[0] = '\0';
		it->has_lease = false;
		set_holder(ms, it, NULL);
		set_secret_hash(ms, it, NULL); /* removals: cannot fail */
		set_session(ms, it, NULL, 0);
		mem_admit_readers(ms, it);
		if (r->ttl > 0)
			it->ttl = r->ttl;
		if (r->token > 0) { /* a release from outside the holding replica */
			it->freed = r->token;
			it->freed_forced = r->forced;
		}
		if (r->revoke_session != NULL)
			mem_revoke_commit(ms, &rev);
		mem_copy_out(it, &res->item);
		return;
	case STORE_ORPHAN:
		if (!owner_is(it, r->owner))
			break;
		if (mem_rare(ms, it) == NULL)
			goto oom;
		strcpy(it->rare->orphan, r->owner);
		mem_copy_out(it, &res->item);
		return;
	case STORE_ADOPT:
		if (!adoptable(it, r))
			break;
		if (r->revoke_session != NULL && !mem_revoke_prepare(ms, r, &rev, res))
			goto revoke_refused;
		if (!set_holder(ms, it, r->holder) || !write_lease(ms, it, r)) {
			if (r->revoke_session != NULL && !rev.present) {
				free(rev.name);
				if (rev.made)
					free(rev.set);
			}
			goto oom;
		}
		/* adoptable: it has its block (its orphan marker), which keeps
		 * adopted_from (prev_owner, not "": owner_is) */
		strcpy(it->rare->adopted_from, r->prev_owner);
		strcpy(it->owner, r->owner);
		strcpy(it->rvn, r->rvn);
		it->rare->orphan[0] = '\0';
		snprintf(it->rare->secret_hash, sizeof(it->rare->secret_hash), "%s",
			 r->secret_hash);
		if (r->revoke_session != NULL)
			mem_revoke_commit(ms, &rev);
		mem_copy_out(it, &res->item);
		return;
	case STORE_ANNOUNCE:
		if (r->waiter == NULL || it == NULL || it->owner[0] == '\0' || it->waiter != NULL ||
		    it->other_type != NULL)
			break;
		if (!set_waiter(ms, it, r->waiter, r->waiter_ms))
			goto oom;
		mem_copy_out(it, &res->item);
		return;
	case STORE_WITHDRAW:
		if (r->waiter == NULL || it == NULL || it->waiter == NULL ||
		    strcmp(it->waiter, r->waiter) != 0)
			break;
		set_waiter(ms, it, NULL, 0);
		mem_copy_out(it, &res->item);
		return;
	case STORE_READ:
		mem_copy_out(it, &res->item);
		return;
	case STORE_DELETE:
		if (it != NULL)
			mem_item_delete(ms, slot);
		mem_copy_out(NULL, &res->item);
		return;
	case STORE_CHECK:
		if (owner_is(it, r->owner) && it->fence == r->token) {
			mem_copy_out(it, &res->item);
			return;
		}
		break;
	default:
		mem_copy_out(NULL, &res->item);
		res->status = STORE_FATAL;
		res->error_type = "InvalidOperation";
		strcpy(res->message, "unknown store operation");
		return;
	}
	res->status = STORE_REFUSED;
	mem_copy_out(it, &res->item);
	return;
revoke_refused: /* nothing written; the session's absence, or no room */
	mem_copy_out(it, &res->item);
	return;
oom:
	mem_copy_out(NULL, &res->item);
	res->status = STORE_TRANSIENT;
	res->error_type = "OutOfMemory";
	strcpy(res->message, "the embedded store is out of memory");
}

static void call_free(struct store_call *call)
{
	free(call->kv);
	free(call->blob);
	free(call->sh);
	free(call->sess);
	free(call->rev);
	pool_put(&call_pool, call, call->size);
}

void mem_call_free(struct store_call *call)
{
	call_free(call);
}

struct store_call *mem_call_new(struct mstore *ms)
{
	struct store_call *call = pool_get(&call_pool, sizeof(*call));
	if (call == NULL)
		return NULL;
	memset(call, 0, sizeof(*call));
	call->size = sizeof(*call);
	call->ms = ms;
	return call;
}

static void unqueue(struct mstore *ms, struct store_call *call)
{
	if (call->prev != NULL)
		call->prev->next = call->next;
	else
		ms->q_head = call->next;
	if (call->next != NULL)
		call->next->prev = call->prev;
	else
		ms->q_tail = call->prev;
}

bool mem_injected(struct mstore *ms, enum store_status *status, const char **type, char *msg)
{
	if (ms->fail_n == 0)
		return false;
	if (ms->fail_n > 0)
		ms->fail_n--;
	*status = ms->fail_status;
	*type = ms->fail_type;
	snprintf(msg, STORE_MSG_MAX, "%s (injected by the test)",
		 ms->fail_type != NULL ? ms->fail_type : store_status_name(ms->fail_status));
	return true;
}

static void complete_scan(struct store_call *call);

/* A late write (store_memory_land_late) applies now; nobody is told. */
static void land(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_result res = {0};
	apply(ms, &call->req, call->hash, &res);
	if (call->prev != NULL)
		call->prev->next = call->next;
	else
		ms->late = call->next;
	if (call->next != NULL)
		call->next->prev = call->prev;
	call_free(call);
}

/* The next late write is answered TRANSIENT now, unapplied, and kept to
 * apply lock_late_ms later. true: call was taken so. */
static bool answer_late(struct mstore *ms, struct store_call *call)
{
	if (ms->lock_late <= 0 || call->req.op == STORE_READ)
		return false;
	ms->lock_late--;
	struct store_result res = {.status = STORE_TRANSIENT, .error_type = "RequestTimeout"};
	snprintf(res.message, sizeof(res.message), "RequestTimeout (injected by the test)");
	mem_copy_out(NULL, &res.item);
	ms->base.in_flight--;
	store_cb cb = call->cb;
	void *cb_arg = call->arg;
	call->prev = NULL;
	call->next = ms->late;
	if (ms->late != NULL)
		ms->late->prev = call;
	ms->late = call;
	timer_init(&call->timer, ms->clock, land, call);
	timer_arm(&call->timer, ms->lock_late_ms);
	cb(cb_arg, &res);
	return true;
}

static void complete(void *arg)
{
	struct store_call *call = arg;
	struct mstore *ms = call->ms;
	struct store_result res;

	if (call->page != NULL) {
		complete_scan(call);
		return;
	}
	if (answer_late(ms, call))
		return;
	res.error_type = NULL;
	res.message[0] = '\0';
	res.session_refused = false;
	res.session_gone = false;
	res.not_sent = false;
	if (mem_injected(ms, &res.status, &res.error_type, res.message))
		mem_copy_out(NULL, &res.item);
	else
		apply(ms, &call->req, call->hash, &res);
	if (ms->lock_lost > 0 && res.status != STORE_TRANSIENT) { /* applied, answer lost */
		ms->lock_lost--;
		res.status = STORE_TRANSIENT;
		res.error_type = "RequestTimeout";
		snprintf(res.message, sizeof(res.message), "RequestTimeout (injected by the test)");
		mem_copy_out(NULL, &res.item);
	}
	ms->base.in_flight--;
	store_cb cb = call->cb;
	void *cb_arg = call->arg;
	call_free(call);
	cb(cb_arg, &res);
}

/* With many items the table is mostly out of the CPU's caches: while one
 * call completes, the item of the next one is fetched (its bucket was
 * fetched at submit time): every line of it up to the start of its name,
 * all of which an acquire reads (find_slot, acquire_allowed, mem_copy_out). */
static void prefetch_item(struct mstore *ms, const struct store_call *next)
{
	if (next == NULL)
		return;
	const struct mitem *it = ms->buckets[next->hash & (ms->nbuckets - 1)];
	if (it == NULL)
		return;
	const char *p = (const char *)it, *name = it->name;
	for (; p < name; p += 64)
		__builtin_prefetch(p);
	__builtin_prefetch(name + 15);
}

/* Completes the queued calls, in order, up to those queued by their
 * callbacks: these wait for the next run of the timer. */
static void complete_queue(void *arg)
{
	struct mstore *ms = arg;
	uint64_t end = ms->q_seq;
	while (ms->q_head != NULL && ms->q_head->seq < end) {
		struct store_call *call = ms->q_head;
		unqueue(ms, call);
		prefetch_item(ms, ms->q_head);
		complete(call);
	}
}

/* Copies s (n bytes with its NUL, 0 for NULL) into text at *pos and
 * points *dst at it; NULL stays NULL. */
static void put_str(char *text, size_t *pos, const char **dst, const char *s, size_t n)
{
	if (s == NULL) {
		*dst = NULL;
		return;
	}
	memcpy(text + *pos, s, n);
	*dst = text + *pos;
	*pos += n;
}

/* Completes call after the store's latency (and its operation's), from its
 * timer, else from the queue in submission order. */
static void enqueue(struct mstore *ms, struct store_call *call)
{
	enum store_op op = call->req.op;
	timer_init(&call->timer, ms->clock, complete, call);
	int64_t delay =
		ms->latency_ms + ((unsigned)op < STORE_OP_COUNT ? ms->op_latency_ms[op] : 0);
	if (delay > 0) {
		timer_arm(&call->timer, delay);
	} else {
		call->seq = ms->q_seq++;
		call->prev = ms->q_tail;
		if (ms->q_tail != NULL)
			ms->q_tail->next = call;
		else
			ms->q_head = call;
		ms->q_tail = call;
		if (!timer_armed(&ms->q_timer))
			timer_arm(&ms->q_timer, 0);
	}
}

static struct store_call *mem_submit(struct store *s, const struct store_req *req, store_cb cb,
				     void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	const char *owner = req->owner != NULL ? req->owner : "";
	const char *rvn = req->rvn != NULL ? req->rvn : "";
	size_t n_name = slen(req->name), n_owner = slen(owner), n_rvn = slen(rvn),
	       n_seen = slen(req->seen_rvn), n_holder = slen(req->holder),
	       n_waiter = slen(req->waiter), n_secret = slen(req->secret_hash),
	       n_prev = slen(req->prev_owner), n_psecret = slen(req->prev_secret_hash),
	       n_sess = slen(req->session), n_ssess = slen(req->seen_session),
	       n_srvn = slen(req->sess_rvn), n_revoke = slen(req->revoke_session);
	size_t need = n_name + n_owner + n_rvn + n_seen + n_holder + n_waiter + n_secret + n_prev +
		      n_psecret + n_sess + n_ssess + n_srvn + n_revoke;
	/* every field set here or by enqueue: no zeroing first */
	struct store_call *call = pool_take(&call_pool, sizeof(*call) + need);
	if (call == NULL)
		return NULL;
	size_t pos = 0;
	call->prev = call->next = NULL;
	call->seq = 0;
	call->page = NULL;
	call->limit = 0;
	call->kv = NULL;
	call->blob = NULL;
	call->sh = NULL;
	call->sess = NULL;
	call->rev = NULL;
	call->batch = NULL;
	call->size = sizeof(*call) + need;
	call->hash = req->name_hash != 0 ? req->name_hash : store_name_hash(req->name);
	__builtin_prefetch(&ms->buckets[call->hash & (ms->nbuckets - 1)]);
	call->ms = ms;
	call->cb = cb;
	call->arg = arg;
	call->req = *req;
	put_str(call->text, &pos, &call->req.name, req->name, n_name);
	put_str(call->text, &pos, &call->req.owner, owner, n_owner);
	put_str(call->text, &pos, &call->req.rvn, rvn, n_rvn);
	put_str(call->text, &pos, &call->req.seen_rvn, req->seen_rvn, n_seen);
	put_str(call->text, &pos, &call->req.holder, req->holder, n_holder);
	put_str(call->text, &pos, &call->req.waiter, req->waiter, n_waiter);
	put_str(call->text, &pos, &call->req.secret_hash, req->secret_hash, n_secret);
	put_str(call->text, &pos, &call->req.prev_owner, req->prev_owner, n_prev);
	put_str(call->text, &pos, &call->req.prev_secret_hash, req->prev_secret_hash, n_psecret);
	put_str(call->text, &pos, &call->req.session, req->session, n_sess);
	put_str(call->text, &pos, &call->req.seen_session, req->seen_session, n_ssess);
	put_str(call->text, &pos, &call->req.sess_rvn, req->sess_rvn, n_srvn);
	put_str(call->text, &pos, &call->req.revoke_session, req->revoke_session, n_revoke);
	enqueue(ms, call);
	if ((unsigned)req->op < STORE_OP_COUNT)
		s->requests[req->op]++;
	s->in_flight++;
	return call;
}

static void mem_cancel(struct store *s, struct store_call *call)
{
	struct mstore *ms = (struct mstore *)s;
	if (timer_armed(&call->timer))
		timer_cancel(&call->timer);
	else
		unqueue(ms, call);
	s->in_flight--;
	call_free(call);
}

/* ---- scan (the page itself: store_memory_scan.c) ---- */

static void complete_scan(struct store_call *call)
{
	struct mstore *ms = call->ms;
	struct store_scan_result *res = call->page;
	if (!mem_injected(ms, &res->status, &res->error_type, res->message) &&
	    !mem_scan_page(ms, call)) {
		res->status = STORE_TRANSIENT;
		res->error_type = "OutOfMemory";
		strcpy(res->message, "the embedded store is out of memory");
	}
	if (res->status != STORE_OK) {
		res->count = 0;
		res->cursor[0] = '\0';
	}
	ms->base.in_flight--;
	void (*cb)(void *) = call->scan_cb;
	void *cb_arg = call->arg;
	call_free(call);
	cb(cb_arg);
}

/* store_scan() has checked limit and that the cursor is printable; the
 * page is read when the call completes, after the requests before it. */
static struct store_call *mem_scan(struct store *s, const char *cursor, unsigned limit,
				   struct store_scan_result *res, void (*cb)(void *arg), void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	char after[STORE_NAME_MAX + 1];
	bool from_start = cursor[0] == '\0';
	if (!from_start && !store_cursor_name(cursor, after))
		return NULL;
	size_t need = from_start ? 0 : strlen(after) + 1;
	struct store_call *call = pool_get(&call_pool, sizeof(*call) + need);
	if (call == NULL)
		return NULL;
	call->size = sizeof(*call) + need;
	call->ms = ms;
	call->scan_cb = cb;
	call->arg = arg;
	call->page = res;
	call->limit = limit;
	call->kv = NULL;
	call->blob = NULL;
	call->sh = NULL;
	call->sess = NULL;
	call->rev = NULL;
	call->batch = NULL;
	call->req.op = STORE_SCAN;
	if (!from_start) {
		memcpy(call->text, after, need);
		call->req.name = call->text;
		call->hash = store_name_hash(after);
	}
	enqueue(ms, call);
	s->in_flight++;
	return call;
}

static void mem_free(struct store *s)
{
	struct mstore *ms = (struct mstore *)s;
	for (size_t i = 0; i < ms->nbuckets; i++) {
		struct mitem *it = ms->buckets[i], *next;
		for (; it != NULL; it = next) {
			next = it->next;
			free(it->holder);
			free(it->other_type);
			free(it->waiter);
			rare_free(it->rare);
			free(it);
		}
	}
	while (ms->q_head != NULL) {
		struct store_call *call = ms->q_head;
		unqueue(ms, call);
		call_free(call);
	}
	while (ms->late != NULL) {
		struct store_call *call = ms->late;
		ms->late = call->next;
		timer_cancel(&call->timer);
		call_free(call);
	}
	timer_cancel(&ms->q_timer);
	timer_cancel(&ms->sweep);
	mem_blobs_free(ms);
	mem_chans_free(ms);
	mem_sessions_free(ms);
	mem_revokes_free(ms);
	free(ms->gens);
	free(ms->buckets);
	free(ms);
}

/* A read answered at once, unless the test asked for delays or failures
 * (then reads take the asynchronous path like everything else). */
static bool mem_read_now(struct store *s, const char *name, struct lock_item *out)
{
	struct mstore *ms = (struct mstore *)s;
	if (ms->fail_n != 0 || ms->latency_ms != 0 || ms->op_latency_ms[STORE_READ] != 0 ||
	    s->in_flight != 0)
		return false;
	mem_copy_out(*find_slot(ms, name, store_name_hash(name)), out);
	return true;
}

/* Fenced writes name tables of their own, which the embedded store does
 * not have: refused, from the loop. */
static void tx_refuse(void *arg)
{
	struct store_call *call = arg;
	struct store_tx_result res = {.status = STORE_FATAL, .error_type = "NotSupported"};
	snprintf(res.message, sizeof(res.message),
		 "fenced writes need DynamoDB (--table): the embedded store holds no other tables");
	call->ms->base.in_flight--;
	store_tx_cb cb = call->tx_cb;
	void *cb_arg = call->arg;
	call_free(call);
	cb(cb_arg, &res);
}

static struct store_call *mem_transact(struct store *s, const struct store_tx_req *req,
				       store_tx_cb cb, void *arg)
{
	struct mstore *ms = (struct mstore *)s;
	struct store_call *call = pool_get(&call_pool, sizeof(*call));
	if (call == NULL)
		return NULL;
	memset(call, 0, sizeof(*call));
	call->size = sizeof(*call);
	call->ms = ms;
	call->req.op = STORE_TRANSACT;
	call->tx_cb = cb;
	call->arg = arg;
	timer_init(&call->timer, ms->clock, tx_refuse, call);
	timer_arm(&call->timer, 0);
	s->requests[STORE_TRANSACT]++;
	s->in_flight++;
	return call;
}

static const struct store_ops memory_ops = {
	.transact = mem_transact,
	.kv_commit = mem_kv_commit,
	.blob_put = mem_blob_put,
	.blob_get = mem_blob_get,
	.chan_publish = mem_chan_publish,
	.chan_read = mem_chan_read,
	.sh_submit = mem_sh_submit,
	.session_submit = mem_session_submit,
	.revoke_submit = mem_revoke_submit,
	.batch_read = mem_batch_read,
	.submit = mem_submit,
	.cancel = mem_cancel,
	.read_now = mem_read_now,
	.free = mem_free,
	.scan = mem_scan,
};

struct store *store_memory_new(struct clock *clock, const char *table)
{
	size_t len = strlen(table);
	struct mstore *ms = calloc(1, sizeof(*ms) + len + 1);
	if (ms == NULL)
		return NULL;
	ms->nbuckets = 1024;
	ms->buckets = calloc(ms->nbuckets, sizeof(*ms->buckets));
	ms->gens_cap = FREED_GENS_MIN;
	ms->gens = calloc(ms->gens_cap, sizeof(*ms->gens));
	if (ms->buckets == NULL || ms->gens == NULL) {
		free(ms->buckets);
		free(ms->gens);
		free(ms);
		return NULL;
	}
	memcpy(ms->table, table, len + 1);
	ms->base.ops = &memory_ops;
	ms->base.table = ms->table;
	ms->clock = clock;
	timer_init(&ms->q_timer, clock, complete_queue, ms);
	timer_init(&ms->sweep, clock, mem_sweep_due, ms);
	return &ms->base;
}

void store_memory_fail(struct store *s, int n, enum store_status status, const char *error_type)
{
	struct mstore *ms = (struct mstore *)s;
	ms->fail_n = n;
	ms->fail_status = status;
	ms->fail_type = error_type;
}

void store_memory_lose(struct store *s, int n)
{
	((struct mstore *)s)->lock_lost = n;
}

void store_memory_land_late(struct store *s, int n, int64_t late_ms)
{
	struct mstore *ms = (struct mstore *)s;
	ms->lock_late = n;
	ms->lock_late_ms = late_ms;
}

void store_memory_set_latency(struct store *s, int64_t ms_delay)
{
	((struct mstore *)s)->latency_ms = ms_delay;
}

void store_memory_set_op_latency(struct store *s, enum store_op op, int64_t ms_delay)
{
	((struct mstore *)s)->op_latency_ms[op] = ms_delay;
}

size_t store_memory_items(const struct store *s)
{
	return ((const struct mstore *)s)->nitems;
}

void store_memory_limit(struct store *s, int64_t retention_ms, size_t max_items)
{
	struct mstore *ms = (struct mstore *)s;
	ms->retention_ms = retention_ms;
	ms->max_items = max_items;
	timer_cancel(&ms->sweep);
	if (retention_ms > 0 && ms->ngens > 0)
		timer_arm(&ms->sweep, mem_sweep_tick(ms));
}

void store_memory_stats(const struct store *s, struct store_memory_stats *out)
{
	const struct mstore *ms = (const struct mstore *)s;
	out->items = ms->nitems;
	out->bytes = ms->bytes;
	out->forgotten = ms->forgotten;
	out->retention_ms = ms->retention_ms;
	out->max_items = ms->max_items;
}

/* store_memory_put_raw's rare fields (a script's expiry and hash kept):
 * false on out-of-memory. */
static bool put_rare(struct mstore *ms, struct mitem *it, const struct lock_item *item)
{
	bool any = item->secret_hash[0] != '\0' || item->orphan[0] != '\0' ||
		   item->adopted_from[0] != '\0';
	if (any && mem_rare(ms, it) == NULL)
		return false;
	if (!set_session(ms, it, item->session[0] != '\0' ? item->session : NULL, item->slease_ms))
		return false;
	if (it->rare == NULL)
		return true;
	memcpy(it->rare->secret_hash, item->secret_hash, sizeof(it->rare->secret_hash));
	memcpy(it->rare->orphan, item->orphan, sizeof(it->rare->orphan));
	memcpy(it->rare->adopted_from, item->adopted_from, sizeof(it->rare->adopted_from));
	mem_rare_trim(ms, it);
	return true;
}

bool store_memory_put_raw(struct store *s, const char *name, const struct lock_item *item)
{
	struct mstore *ms = (struct mstore *)s;
	uint64_t h = store_name_hash(name);
	struct mitem **slot = find_slot(ms, name, h), *it = *slot;
	if (it == NULL && (it = item_new(ms, slot, name, h)) == NULL)
		return false;
	if (it->owner[0] != '\0')
		mem_freed_unlink(ms, it); /* as if its acquire had taken it out */
	if (!set_holder(ms, it, item->holder[0] != '\0' ? item->holder : NULL))
		return false;
	strcpy(it->owner, item->has_owner ? item->owner : "");
	strcpy(it->rvn, item->has_rvn ? item->rvn : "");
	it->has_arvn = false; /* a whole item, as DynamoDB's PutItem writes it */
	it->has_lease = item->has_lease;
	it->lease_ms = item->lease_ms;
	it->fence = item->fence;
	it->ttl = item->ttl;
	ms->bytes -= slen(it->other_type);
	free(it->other_type);
	it->other_type = NULL;
	if (strcmp(item->type, "LOCK") != 0 && (it->other_type = strdup(item->type)) == NULL)
		return false;
	ms->bytes += slen(it->other_type);
	it->no_fence = !item->has_fence;
	it->fence_bad = item->has_fence && item->fence_bad;
	if (!set_waiter(ms, it, item->has_waiter && item->waiter[0] != '\0' ? item->waiter : NULL,
			item->waiter_ms))
		return false;
	it->freed = item->freed;
	it->freed_forced = item->freed != 0 && item->freed_forced;
	return put_rare(ms, it, item);
}
