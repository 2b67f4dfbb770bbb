/*
 * sim_check: the rules the simulator holds the lease core to, checked
 * after every step and at the events that decide them.
 *
 *  - exclusion: two clients never both believe they hold a lock within
 *    their lease (lease_held, on their own clocks) for longer than the
 *    clocks' rate difference allows: a lease x the largest rate difference
 *    drawn, +2 ms of millisecond rounding (a takeover waits a whole lease
 *    on the waiter's clock after the holder's send). A client whose lease
 *    was lost to its session's end believes it holds until its next
 *    command (a gateway's client is told then), to the lease's end
 *    (sim_client_belief). A paused replica
 *    believes nothing (it cannot act); an item deleted with its table ends
 *    the old holder's lease only at its next renewal (the reference says
 *    so), so holders of two table incarnations are not compared. Shared
 *    holds (docs/design/shared-locks.md), from their grant's answer to
 *    their end on their own clock or their release's call: readers of
 *    one phase (the same token) hold together, and so do semaphore
 *    holders of different slots; any other two holders of a lock — an
 *    exclusive one and any other, readers of two phases, two holders of
 *    one slot — are two holders, as two exclusive ones;
 *  - a lock's shared holders (its readers, or its semaphore's), those
 *    granted more than that allowance ago, are never more than its cap
 *    (the semaphore's n);
 *  - fencing tokens: the table's fence rises by one on every acquire
 *    applied and every readers' phase begun; tokens granted to clients
 *    rise strictly per lock, readers' tokens (the phase's) never fall and
 *    lie above every exclusive token granted before them, and below every
 *    one granted after; a semaphore holder's token rises strictly per
 *    (lock, slot);
 *  - fencing: no fenced write is accepted from a lease whose token a
 *    later acquire superseded;
 *  - a lease's end never moves back (an older renewal answered last);
 *  - releases: one acknowledged (1) no longer shows its owner on the item
 *    once this replica has nothing in flight on the lock; one answered 0
 *    (ended) was not applied; one answered -1 (its write failed) may be
 *    either;
 *  - liveness: in the calm phase every exclusive waiter is served within
 *    the fairness bound of docs/lease-rules.md, Fair across replicas (plus
 *    the holds of the waiters ahead of it on its own replica); a shared
 *    one too with --shared-liveness (check_liveness says why not always);
 *  - the end: no lease, wait or release left in any locktable.
 */
#include "tests/sim/sim.h"

#include <stdlib.h>
#include <string.h>

struct lock_rec {
	int inc;		     /* table incarnation of the fields below */
	int64_t applied, granted;    /* highest fence applied, token granted */
	int64_t accepted;	     /* highest token of a fenced write accepted */
	int64_t readers;	     /* highest readers' token granted */
	int64_t slot[SIM_LIMIT_MAX]; /* highest semaphore token granted, per slot */
};

struct pending_release {
	struct replica *rep;
	int inc;
	int slot; /* a shared hold's, or -1 */
	char name[SIM_NAME_MAX + 1], owner[STORE_ID_MAX + 1];
};

#define PENDING_MAX 64

struct sim_check {
	struct lock_rec locks[SIM_LOCKS_MAX + 1];
	int64_t end_token[SIM_REPLICAS_MAX][SIM_CLIENTS_MAX]; /* granted_us */
	int64_t end_ms[SIM_REPLICAS_MAX][SIM_CLIENTS_MAX];
	struct pending_release pend[PENDING_MAX];
	int npend;
	int64_t calm_since_us;
};

static struct sim_check *K;

void sim_check_init(void)
{
	K = calloc(1, sizeof(*K));
	if (K == NULL)
		abort();
	K->calm_since_us = -1;
}

void sim_check_free(void)
{
	free(K);
	K = NULL;
}

static struct lock_rec *rec(const char *name)
{
	for (int i = 0; i < SIM->nnames; i++)
		if (strcmp(SIM->names[i], name) == 0) {
			struct lock_rec *r = &K->locks[i];
			if (r->inc != SIM->table_incarnation)
				*r = (struct lock_rec){.inc = SIM->table_incarnation};
			return r;
		}
	sim_violation("a request on a lock the simulator does not know: %s", name);
	return &K->locks[SIM_LOCKS_MAX];
}

void sim_check_applied_acquire(const char *name, int64_t fence)
{
	if (SIM->cfg.scale > 0)
		return; /* sim_scale.c checks its locks' tokens itself */
	struct lock_rec *r = rec(name);
	if (fence != r->applied + 1)
		sim_violation("%s: the table's fence went from %lld to %lld", name,
			      (long long)r->applied, (long long)fence);
	r->applied = fence;
}

void sim_check_granted(const struct sim_client *c, const char *name, int64_t token, int inc)
{
	struct lock_rec *r = rec(name);
	if (inc != SIM->table_incarnation)
		return; /* written before the table was deleted: its tokens are gone */
	if (token <= r->granted || token <= r->readers)
		sim_violation("%s: token %lld granted after token %lld", name, (long long)token,
			      (long long)(r->granted > r->readers ? r->granted : r->readers));
	r->granted = token;
}

void sim_check_sh_granted(const char *name, enum sim_mode mode, unsigned slot, int64_t token,
			  int inc)
{
	struct lock_rec *r = rec(name);
	unsigned cap;
	if (sim_lock_kind(name, &cap) != mode || slot >= cap)
		sim_violation("%s: a %s hold of slot %u granted on a lock of kind %d, cap %u", name,
			      mode == SIM_SHARED ? "reader's" : "semaphore", slot,
			      (int)sim_lock_kind(name, &cap), cap);
	if (inc != SIM->table_incarnation)
		return; /* written before the table was deleted: its tokens are gone */
	if (mode == SIM_SHARED) {
		if (token < r->readers || token <= r->granted)
			sim_violation("%s: readers' token %lld granted after token %lld", name,
				      (long long)token,
				      (long long)(token < r->readers ? r->readers : r->granted));
		r->readers = token;
		return;
	}
	if (slot < SIM_LIMIT_MAX && token <= r->slot[slot])
		sim_violation("%s: slot %u token %lld granted after token %lld", name, slot,
			      (long long)token, (long long)r->slot[slot]);
	if (slot < SIM_LIMIT_MAX)
		r->slot[slot] = token;
}

void sim_check_adopted(const char *name, int64_t token, int64_t want)
{
	struct lock_rec *r = rec(name);
	if (token != want)
		sim_violation("%s: an adopt of token %lld answered token %lld", name,
			      (long long)want, (long long)token);
	if (token < r->granted)
		sim_violation("%s: token %lld adopted after token %lld was granted", name,
			      (long long)token, (long long)r->granted);
}

void sim_check_fenced_write(const char *name, const char *owner, int64_t token)
{
	struct lock_rec *r = rec(name);
	if (token < r->applied || token < r->accepted)
		sim_violation("%s: fenced write of %s with token %lld accepted after token %lld "
			      "was granted",
			      name, owner, (long long)token,
			      (long long)(r->applied > r->accepted ? r->applied : r->accepted));
	r->accepted = token;
}

static void on_slot_read(void *arg, const struct store_sh_result *res)
{
	if (res->status != STORE_OK)
		abort();
	*(struct lock_item *)arg = res->slots[0];
}

/* Does the lock item (slot -1) or slot of name show owner? */
static bool item_owned_by(const char *name, int slot, const char *owner)
{
	struct lock_item it;
	if (slot < 0 && !store_read_now(SIM->mem, name, &it))
		abort(); /* the table answers at once: nothing is queued on it */
	if (slot >= 0) {
		struct store_sh_req r = {.op = STORE_SH_READ,
					 .name = name,
					 .cap = (unsigned)slot + 1,
					 .slot = (unsigned)slot,
					 .count = 1};
		if (store_sh_submit(SIM->mem, &r, on_slot_read, &it) == NULL)
			abort();
		clock_fake_advance(SIM->ddb_clock, 0); /* answered now */
	}
	return it.has_owner && strcmp(it.owner, owner) == 0;
}

void sim_check_release_answer(struct replica *r, const char *name, const char *owner, int slot,
			      int value)
{
	if (value < 0)
		return; /* the write failed: it may or may not have landed */
	if (value == 0) {
		if (sim_net_release_applied(owner))
			sim_violation("%s: the release of %s answered 0 (ended) though the table "
				      "applied it",
				      name, owner);
		return;
	}
	if (!item_owned_by(name, slot, owner) || K->npend == PENDING_MAX)
		return;
	struct pending_release *p = &K->pend[K->npend++];
	p->rep = r;
	p->inc = r->incarnation;
	p->slot = slot;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->owner, sizeof(p->owner), "%s", owner);
}

/* Acknowledged releases whose item still shows them: fine while the
 * replica has a request on the lock in flight (the release, a hand-off). */
static void check_pending(void)
{
	for (int i = 0; i < K->npend;) {
		struct pending_release *p = &K->pend[i];
		bool gone = p->rep->dead || p->rep->incarnation != p->inc;
		if (gone || !item_owned_by(p->name, p->slot, p->owner)) {
			*p = K->pend[--K->npend];
			continue;
		}
		if (sim_net_inflight(p->rep, p->name) == 0) {
			sim_violation("%s: release of %s acknowledged, but the item still shows it "
				      "and nothing is in flight",
				      p->name, p->owner);
			*p = K->pend[--K->npend];
			continue;
		}
		i++;
	}
}

static int64_t overlap_allowance_us(void)
{
	return SIM->cfg.lease_ms * SIM->cfg.rate_tol_ppm / 1000 + 2000;
}

static const char *mode_name(enum sim_mode m)
{
	return m == SIM_SHARED ? "reader" : m == SIM_LIMIT ? "semaphore" : "exclusive";
}

static void check_pair(const struct sim_belief *a, const struct sim_belief *b)
{
	if (strcmp(a->name, b->name) != 0 || a->incarnation != b->incarnation)
		return;
	if (a->mode == SIM_SHARED && b->mode == SIM_SHARED && a->token == b->token)
		return; /* readers of one phase */
	if (a->mode == SIM_LIMIT && b->mode == SIM_LIMIT && a->slot != b->slot)
		return; /* a semaphore's holders: counted by check_caps */
	/* exclusive and readers' tokens are the header's fence, a slot's
	 * holders' that slot's: one sequence, which a later holder raised */
	bool ordered = (a->mode == SIM_LIMIT) == (b->mode == SIM_LIMIT);
	const struct sim_belief *newer = a->granted_us >= b->granted_us ? a : b;
	const struct sim_belief *older = newer == a ? b : a;
	int64_t overlap = SIM->now_us - newer->granted_us;
	if ((ordered && newer->token <= older->token) || overlap > overlap_allowance_us())
		sim_violation("%s: %s (%s, token %lld) and %s (%s, token %lld) both hold it, for "
			      "%lld us (allowed %lld)",
			      a->name, older->owner, mode_name(older->mode),
			      (long long)older->token, newer->owner, mode_name(newer->mode),
			      (long long)newer->token, (long long)overlap,
			      (long long)overlap_allowance_us());
}

/* The shared holders of each lock, but those granted within the
 * allowance (which check_pair bounds), are at most its cap. */
static void check_caps(const struct sim_belief *all, int n)
{
	for (int i = 0; i < SIM->cfg.locks; i++) {
		const char *name = SIM->names[i];
		unsigned cap, held = 0;
		if (sim_lock_kind(name, &cap) == SIM_EXCL)
			continue;
		for (int j = 0; j < n; j++)
			if (all[j].mode != SIM_EXCL && strcmp(all[j].name, name) == 0 &&
			    all[j].incarnation == SIM->table_incarnation &&
			    SIM->now_us - all[j].granted_us > overlap_allowance_us())
				held++;
		if (held > cap)
			sim_violation("%s: %u shared holders, more than its cap %u", name, held,
				      cap);
	}
}

/* docs/lease-rules.md's bound, P the poll interval, R replicas, a round: every
 * waiter of a replica holding once (up to 2 leases each, plus a request
 * round trip). Latency is added per turn (the page leaves it out). The
 * page's bound is for a replica's turn: a waiter behind others of its
 * own replica (FIFO there) also waits for their holds once the turn comes,
 * up to a round less its own hold (seed 2484: r0/c0 queued behind r0/c1,
 * which held 5.5 s of its turn). */
static int64_t fairness_bound_us(void)
{
	const struct sim_config *g = &SIM->cfg;
	int64_t p = g->lease_ms / 3 * 1000, rtt = 2 * g->f.delay_max_us;
	int64_t hold = 2 * g->lease_ms * 1000 + 2 * rtt;
	int64_t round = g->clients * hold;
	return (g->replicas - 1) * (round + 3 * p / 2 + 4 * rtt) + 2 * p + 4 * rtt +
	       (g->clients - 1) * hold;
}

static void check_liveness(const struct sim_client *c, const struct sim_belief *b)
{
	int64_t since = sim_client_waiting_since(c);
	if (since < 0 || !SIM->calm || SIM->ending || !SIM->cfg.liveness)
		return;
	/* a reader or semaphore waiter has no turn among replicas yet (no
	 * announcement, no phase-fair admission: docs/design/shared-locks.md),
	 * so no bound: seed 13594 finds one waiting 15 s while another
	 * replica's client takes the semaphore back within its poll, four
	 * times over. --shared-liveness holds it to the bound all the same. */
	if (b->mode != SIM_EXCL && !SIM->cfg.shared_liveness)
		return;
	/* what the faults left settles first: a stale holder's lease, an
	 * announced waiter's reservation */
	int64_t settle = K->calm_since_us + 2 * SIM->cfg.lease_ms * 1000;
	if (since < settle)
		since = settle;
	if (SIM->now_us - since > fairness_bound_us())
		sim_violation("%s waits for %s for %lld ms, past the fairness bound (%lld ms)",
			      sim_client_label(c), sim_client_name(c),
			      (long long)(SIM->now_us - since) / 1000,
			      (long long)fairness_bound_us() / 1000);
}

static void check_end_moves(int ri, int ci, const struct sim_belief *b)
{
	if (!b->holds)
		return;
	if (K->end_token[ri][ci] == b->granted_us && b->end_ms < K->end_ms[ri][ci])
		sim_violation("%s: the lease end of %s (token %lld) moved back from %lld to %lld",
			      b->name, b->owner, (long long)b->token, (long long)K->end_ms[ri][ci],
			      (long long)b->end_ms);
	K->end_token[ri][ci] = b->granted_us; /* the grant's identity */
	K->end_ms[ri][ci] = b->end_ms;
}

void sim_check_step(void)
{
	struct sim_belief all[SIM_REPLICAS_MAX * SIM_CLIENTS_MAX];
	int n = 0;
	if (SIM->calm && K->calm_since_us < 0)
		K->calm_since_us = SIM->now_us;
	for (int ri = 0; ri < SIM->cfg.replicas; ri++) {
		struct replica *r = &SIM->rep[ri];
		if (r->dead || r->paused_until_us > SIM->now_us)
			continue;
		for (int ci = 0; ci < r->nclients; ci++) {
			struct sim_belief b;
			sim_client_belief(r->clients[ci], &b);
			check_end_moves(ri, ci, &b);
			check_liveness(r->clients[ci], &b);
			if (b.holds)
				all[n++] = b;
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			check_pair(&all[i], &all[j]);
	check_caps(all, n);
	check_pending();
}

void sim_check_end(void)
{
	for (int ri = 0; ri < SIM->cfg.replicas; ri++) {
		struct replica *r = &SIM->rep[ri];
		struct lt_stats st;
		if (r->dead)
			continue;
		lt_stats(r->lt, &st);
		if (st.leases != 0 || st.waits != 0 || st.releases_in_flight != 0)
			sim_violation("%s at the end: %llu leases, %llu waits, %llu releases in "
				      "flight",
				      r->label, (unsigned long long)st.leases,
				      (unsigned long long)st.waits,
				      (unsigned long long)st.releases_in_flight);
		if (r->store->in_flight != 0)
			sim_violation("%s at the end: %llu requests in flight", r->label,
				      (unsigned long long)r->store->in_flight);
	}
	check_pending();
}
