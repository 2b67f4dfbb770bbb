/*
 * sim_scale: the scale case of `--heartbeat replica` (sim --scale N): one
 * replica in session mode takes N locks, all held by its one session;
 * K other replicas (--takers K, default 3) wait for every one of them;
 * a lease after the last grant the holder crashes (it restarts later
 * with the same replica id: a new incarnation, which revives nothing).
 * The takers take the N locks over at once, by the rules of
 * docs/design/replica-heartbeat.md (Takeover).
 *
 * Checked: no lock granted to a taker before the crashed holder's lease
 * of it ended on the holder's clock (less the clocks' rate allowance);
 * each lock granted to one taker, by a takeover, with token 2 (the
 * holder's was 1): its other waiters are cancelled at the grant; every
 * lock taken over within the bound (SCALE_BOUND_LEASES leases after the
 * crash). Printed: the time the last takeover took, and the requests of
 * the takers by operation from the crash to the last takeover. The
 * network: delays of 1-10 ms, no faults. The takers then release what
 * they took, and the run ends as any seed's (sim_check_end: nothing left
 * in any locktable).
 */
#include "tests/sim/sim.h"

#include <stdlib.h>
#include <string.h>

#define SCALE_BOUND_LEASES 3 /* every lock taken over within this many leases */

struct scale_lock {
	char name[SIM_NAME_MAX + 1];
	struct lease *held;			 /* the holder's, until the crash */
	struct lease *taken;			 /* the taker's */
	struct lt_wait *waits[SIM_REPLICAS_MAX]; /* the takers' waits */
	int64_t end_us;				 /* the holder's end, true time */
};

/* One taker's wait for one lock: the callback's argument. */
struct scale_wait {
	struct scale_lock *lock;
	int taker;
};

struct scale {
	uint64_t n, held, answered, taken;
	uint64_t by[SIM_REPLICAS_MAX]; /* locks each taker took */
	int takers;
	struct scale_lock *locks;
	struct scale_wait *wargs; /* n x takers */
	int64_t crash_us, done_us, end_us;
	uint64_t at_crash[SIM_REPLICAS_MAX][STORE_OP_COUNT];
	uint64_t at_done[SIM_REPLICAS_MAX][STORE_OP_COUNT];
};

static struct scale S;

static struct replica *holder(void)
{
	return &SIM->rep[0];
}

static void counts(uint64_t into[SIM_REPLICAS_MAX][STORE_OP_COUNT])
{
	for (int k = 1; k <= S.takers; k++)
		memcpy(into[k], SIM->rep[k].store->requests, sizeof(into[k]));
}

static void on_taken(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct scale_wait *w = arg;
	struct scale_lock *l = w->lock;
	l->waits[w->taker] = NULL;
	if (lease == NULL) {
		sim_violation("%s: r%d's wait ended without the lock (%s)", l->name, w->taker,
			      err != NULL ? err->error_type : "not granted");
		return;
	}
	int64_t allow = SIM->cfg.lease_ms * SIM->cfg.rate_tol_ppm / 1000 + 2000;
	if (S.crash_us == 0 || SIM->now_us + allow < l->end_us)
		sim_violation("%s: taken over by r%d at %lld us, the holder's lease ran to %lld us",
			      l->name, w->taker, (long long)SIM->now_us, (long long)l->end_us);
	if (l->taken != NULL || lease_token(lease) != 2 || !lease_takeover(lease))
		sim_violation("%s: r%d granted token %lld (takeover %d), taken already: %d",
			      l->name, w->taker, (long long)lease_token(lease),
			      (int)lease_takeover(lease), l->taken != NULL);
	l->taken = lease;
	S.by[w->taker]++;
	for (int k = 1; k <= S.takers; k++)
		if (l->waits[k] != NULL) {
			lt_acquire_cancel(l->waits[k]);
			l->waits[k] = NULL;
		}
	if (++S.taken < S.n)
		return;
	S.done_us = SIM->now_us;
	counts(S.at_done);
	sim_log("scale all %llu locks taken over, %lld ms after the crash", (unsigned long long)S.n,
		(long long)(S.done_us - S.crash_us) / 1000);
}

/* SCALE_BOUND_LEASES + 1 leases after the crash: what was not taken over
 * is a violation; the waits left are cancelled, the locks taken released
 * (the run's end then finds nothing left in any locktable). */
static void finish(void *arg)
{
	int64_t bound_us = SCALE_BOUND_LEASES * SIM->cfg.lease_ms * 1000;
	if (S.taken < S.n) {
		counts(S.at_done);
		sim_violation("%llu of %llu locks taken over %d leases after the crash",
			      (unsigned long long)S.taken, (unsigned long long)S.n,
			      SCALE_BOUND_LEASES + 1);
	} else if (S.done_us - S.crash_us > bound_us)
		sim_violation("the last of %llu locks taken over %lld ms after the crash, past "
			      "%d leases (%lld ms)",
			      (unsigned long long)S.n, (long long)(S.done_us - S.crash_us) / 1000,
			      SCALE_BOUND_LEASES, (long long)bound_us / 1000);
	for (uint64_t i = 0; i < S.n; i++) {
		struct scale_lock *l = &S.locks[i];
		for (int k = 1; k <= S.takers; k++) {
			lt_acquire_cancel(l->waits[k]);
			l->waits[k] = NULL;
		}
		if (l->taken != NULL)
			lease_release(l->taken);
		l->taken = NULL;
	}
}

static void crash_holder(void *arg)
{
	struct replica *r = holder();
	S.crash_us = SIM->now_us;
	for (uint64_t i = 0; i < S.n; i++) {
		struct scale_lock *l = &S.locks[i];
		if (l->held != NULL && lease_held(l->held))
			l->end_us = sim_true_us(r, lease_end_ms(l->held));
		l->held = NULL; /* the corpse's now */
	}
	counts(S.at_crash);
	sim_replica_crash(r);
	sim_at(SIM->now_us + (SCALE_BOUND_LEASES + 1) * SIM->cfg.lease_ms * 1000, finish, NULL);
}

static void wait_all(void *arg)
{
	for (uint64_t i = 0; i < S.n; i++)
		for (int k = 1; k <= S.takers; k++) {
			struct scale_wait *w = &S.wargs[i * (uint64_t)S.takers + (uint64_t)k - 1];
			struct lt_acquire_args a = {.name = S.locks[i].name,
						    .lease_ms = SIM->cfg.lease_ms,
						    .wait = true};
			w->lock = &S.locks[i];
			w->taker = k;
			w->lock->waits[k] = lt_acquire(SIM->rep[k].lt, &a, on_taken, w);
			if (w->lock->waits[k] == NULL)
				sim_violation("lt_acquire refused valid arguments");
		}
	sim_log("scale %d takers wait for every lock", S.takers);
}

static void on_held(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct scale_lock *l = arg;
	if (lease == NULL || !lease_held(lease))
		sim_violation("%s: the holder's acquire failed (%s)", l->name,
			      err != NULL ? err->error_type : "not granted");
	l->held = lease;
	S.held += lease != NULL;
	if (++S.answered < S.n)
		return;
	int64_t lease_us = SIM->cfg.lease_ms * 1000;
	sim_log("scale %llu locks held by r0", (unsigned long long)S.held);
	sim_at(SIM->now_us + lease_us / 2, wait_all, NULL);
	sim_at(SIM->now_us + lease_us, crash_holder, NULL);
}

void sim_scale_start(uint64_t n, int takers)
{
	memset(&S, 0, sizeof(S));
	S.n = n;
	S.takers = takers;
	S.locks = calloc(n, sizeof(*S.locks));
	S.wargs = calloc(n * (uint64_t)takers, sizeof(*S.wargs));
	if (S.locks == NULL || S.wargs == NULL)
		abort();
	for (uint64_t i = 0; i < n; i++) {
		struct scale_lock *l = &S.locks[i];
		snprintf(l->name, sizeof(l->name), "scale-%llu", (unsigned long long)i);
		struct lt_acquire_args a = {.name = l->name, .lease_ms = SIM->cfg.lease_ms};
		if (lt_acquire(holder()->lt, &a, on_held, l) == NULL)
			sim_violation("lt_acquire refused valid arguments");
	}
}

/* The report line of the run. */
void sim_scale_report(void)
{
	uint64_t d[STORE_OP_COUNT] = {0};
	for (int k = 1; k <= S.takers; k++)
		for (int op = 0; op < STORE_OP_COUNT; op++)
			d[op] += S.at_done[k][op] - S.at_crash[k][op];
	printf("scale: %llu locks held by r0, taken over by %d replicas (", (unsigned long long)S.n,
	       S.takers);
	for (int k = 1; k <= S.takers; k++)
		printf("%sr%d %llu", k > 1 ? ", " : "", k, (unsigned long long)S.by[k]);
	printf("): the last %lld ms after "
	       "the crash (lease %lld ms, bound %d leases); the takers' requests from the crash "
	       "to the last takeover: %llu acquires, %llu reads, %llu releases (kills count "
	       "here), %llu renewals (beats count here)\n",
	       S.done_us > 0 ? (long long)(S.done_us - S.crash_us) / 1000 : -1LL,
	       (long long)SIM->cfg.lease_ms, SCALE_BOUND_LEASES,
	       (unsigned long long)d[STORE_ACQUIRE], (unsigned long long)d[STORE_READ],
	       (unsigned long long)d[STORE_RELEASE], (unsigned long long)d[STORE_RENEW]);
	free(S.locks);
	free(S.wargs);
	memset(&S, 0, sizeof(S));
}
