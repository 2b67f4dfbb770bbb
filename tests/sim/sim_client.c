/*
 * sim_client: the simulated clients of one replica, through the lock
 * table's public API only. A locker loops: acquire (a try, or a wait with
 * or without a timeout) one of the locks, hold it for a while (sometimes
 * longer than its lease, so the heartbeat renews it), renew it by hand and
 * write fenced now and then, release it and wait for the answer. On a
 * lock that is, for the seed, a reader-writer lock or a semaphore, an
 * acquire is often a reader's or a semaphore holder's instead
 * (lt_sh_acquire: a slot, renewed by the lease core's heartbeats alone,
 * released with sh_lease_release_then). A leader
 * campaigns (core/election), leads for a term with fenced writes, then
 * returns its work, and campaigns again. Every action is a timer of the
 * replica's own clock, drawn from the seed.
 */
#include "tests/sim/sim.h"

#include <stdlib.h>
#include <string.h>

enum cstate {
	C_IDLE,
	C_WAITING,
	C_ADOPTING, /* an adopt of another replica's orphan in flight (sim_adopt.c) */
	C_HOLDING,
	C_RELEASING,
	C_CAMPAIGN,
	C_LEADING,
	C_STOPPED
};

struct sim_client {
	struct replica *rep;
	int idx;
	bool leader;
	enum cstate st;
	struct timer t;
	struct lt_wait *w;
	struct lease *lease;
	enum sim_mode mode; /* of the wait or hold */
	struct sh_wait *sw; /* a shared wait's (mode not SIM_EXCL) */
	struct sh_lease *sl;
	unsigned slot;
	struct election *e;
	bool waiting_forever;
	int64_t wait_since_us, granted_us, hold_until_ms;
	/* a lease lost to its session's end: the gateway's client hears of it
	 * at its next command (tick), so until then it believes it holds, to
	 * the lease's end on the replica's clock (unheard_end) */
	int64_t unheard_until_ms;
	int64_t seen_end_ms; /* the lease's end when last looked at */
	int64_t token;
	int grant_inc;
	int nacq;
	int ops; /* renewals and fenced writes in flight */
	char name[SIM_NAME_MAX + 1];
	char owner[STORE_ID_MAX + 1];
	bool adoptable;			      /* this lease has a secret: */
	char hash[STORE_SECRET_HASH_LEN + 1]; /* its hash */
};

/* A secret's hash of 64 hex digits, drawn from the seed. */
static void draw_hash(char *hash)
{
	for (int i = 0; i < 4; i++)
		snprintf(hash + 16 * i, 17, "%016llx", (unsigned long long)sim_rand());
}

static void tick(void *arg);

static void later(struct sim_client *c, int64_t lo, int64_t hi)
{
	timer_arm(&c->t, sim_range(lo, hi));
}

static const char *cl(const struct sim_client *c)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "%s/c%d", c->rep->label, c->idx);
	return buf;
}

static void granted(struct sim_client *c, struct lease *lease)
{
	c->lease = lease;
	c->token = lease_token(lease);
	c->granted_us = SIM->now_us;
	c->unheard_until_ms = c->seen_end_ms = 0;
	snprintf(c->owner, sizeof(c->owner), "%s", lease_owner(lease));
	c->grant_inc = sim_net_acquired_in(c->owner);
	sim_log("cli  %s granted %s token %lld%s", cl(c), c->name, (long long)c->token,
		lease_takeover(lease) ? " (takeover)" : "");
	sim_check_granted(c, c->name, c->token, c->grant_inc);
	TALLY.takeovers += lease_takeover(lease);
}

/* ---- lockers ---- */

/* The end a client not yet told of lease's loss counts on: the latest it
 * was shown (a beat may have extended it), or the lease's own. */
static int64_t unheard_end(const struct sim_client *c, const struct lease *lease)
{
	int64_t own = lease_end_ms(lease);
	return c->seen_end_ms > own ? c->seen_end_ms : own;
}

static void on_lost(void *arg, struct lease *lease, enum lt_loss reason)
{
	struct sim_client *c = arg;
	sim_log("cli  %s lost %s token %lld: %s", cl(c), c->name, (long long)c->token,
		lt_loss_name(reason));
	TALLY.lost_session += reason == LT_SESSION;
	TALLY.lost_expired += reason == LT_EXPIRED;
	if (reason == LT_SESSION)
		c->unheard_until_ms = unheard_end(c, lease);
	c->lease = NULL;
	c->st = C_IDLE;
	lease_release(lease); /* lost: frees it, sends nothing */
	later(c, 0, 200);
}

static void on_acquired(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct sim_client *c = arg;
	int64_t lease_ms = SIM->cfg.lease_ms;
	c->w = NULL;
	c->st = C_IDLE;
	if (lease != NULL && !lease_held(lease)) {
		sim_log("cli  %s got %s ended already", cl(c), c->name);
		if (lease_loss(lease) == LT_SESSION) { /* answered granted by a gateway */
			granted(c, lease);
			c->lease = NULL;
			c->unheard_until_ms = unheard_end(c, lease);
		}
		lease_release(lease);
		lease = NULL;
	}
	if (lease == NULL) {
		sim_log("cli  %s acquire %s: %s", cl(c), c->name,
			err != NULL ? err->error_type : "not granted");
		later(c, 0, lease_ms / 2);
		return;
	}
	c->st = C_HOLDING;
	granted(c, lease);
	lease_on_lost(lease, on_lost, c);
	c->hold_until_ms = clock_now_ms(c->rep->clock) + sim_range(0, 2 * lease_ms);
	later(c, 0, lease_ms / 3);
}

static void acquire_shared(struct sim_client *c, enum sim_mode mode, unsigned cap);

static void acquire(struct sim_client *c)
{
	int64_t lease_ms = SIM->cfg.lease_ms;
	int lock = (int)sim_range(0, SIM->cfg.locks - 1);
	snprintf(c->name, sizeof(c->name), "%s", SIM->names[lock]);
	snprintf(c->owner, sizeof(c->owner), "%s.%d.c%d.a%d", c->rep->label, c->rep->incarnation,
		 c->idx, ++c->nacq);
	c->mode = SIM_EXCL;
	if (SIM->cfg.kind[lock] != SIM_EXCL && sim_chance(SIM->cfg.shared_ppm)) {
		acquire_shared(c, SIM->cfg.kind[lock], SIM->cfg.cap[lock]);
		return;
	}
	bool wait = sim_range(0, 9) < 7;
	int64_t timeout = 0;
	if (wait && !SIM->calm && sim_chance(500000))
		timeout = sim_range(lease_ms / 2, 4 * lease_ms);
	c->adoptable = sim_chance(300000);
	if (c->adoptable)
		draw_hash(c->hash);
	struct lt_acquire_args a = {
		.name = c->name,
		.lease_ms = lease_ms,
		.wait = wait,
		.timeout_ms = timeout,
		.owner = c->owner,
		.secret_hash = c->adoptable ? c->hash : NULL,
	};
	c->w = lt_acquire(c->rep->lt, &a, on_acquired, c);
	if (c->w == NULL) {
		sim_violation("lt_acquire refused valid arguments");
		return;
	}
	c->st = C_WAITING;
	c->waiting_forever = wait && timeout == 0;
	c->wait_since_us = SIM->now_us;
	sim_log("cli  %s %s %s as %s%s", cl(c), wait ? "waits for" : "tries", c->name, c->owner,
		timeout ? " (with a timeout)" : "");
}

/* ---- shared holders ---- */

static bool sh_held(const struct sim_client *c)
{
	return c->sl != NULL && sh_lease_loss(c->sl) == LT_HELD &&
	       clock_now_ms(c->rep->clock) < sh_lease_end_ms(c->sl);
}

static const char *mode_name(enum sim_mode m)
{
	return m == SIM_SHARED ? "shared" : m == SIM_LIMIT ? "limit" : "exclusive";
}

static void on_sh_lost(void *arg, struct sh_lease *l, enum lt_loss reason)
{
	struct sim_client *c = arg;
	sim_log("cli  %s lost %s %s slot %u token %lld: %s", cl(c), mode_name(c->mode), c->name,
		c->slot, (long long)c->token, lt_loss_name(reason));
	c->sl = NULL;
	c->st = C_IDLE;
	sh_lease_release(l); /* its slot, if still its own; frees it */
	later(c, 0, 200);
}

static void on_sh_acquired(void *arg, struct sh_lease *l, const struct lt_error *err)
{
	struct sim_client *c = arg;
	int64_t lease_ms = SIM->cfg.lease_ms;
	c->sw = NULL;
	c->st = C_IDLE;
	c->sl = l;
	if (l != NULL && !sh_held(c)) {
		sim_log("cli  %s got %s %s ended already", cl(c), mode_name(c->mode), c->name);
		sh_lease_release(l);
		c->sl = l = NULL;
	}
	if (l == NULL) {
		sim_log("cli  %s acquire %s %s: %s", cl(c), mode_name(c->mode), c->name,
			err != NULL ? err->error_type : "not granted");
		later(c, 0, lease_ms / 2);
		return;
	}
	c->st = C_HOLDING;
	c->token = sh_lease_token(l);
	c->slot = sh_lease_slot(l);
	c->granted_us = SIM->now_us;
	c->grant_inc = sim_net_acquired_in(c->owner);
	sim_log("cli  %s granted %s %s slot %u token %lld", cl(c), mode_name(c->mode), c->name,
		c->slot, (long long)c->token);
	sim_check_sh_granted(c->name, c->mode, c->slot, c->token, c->grant_inc);
	sh_lease_on_lost(l, on_sh_lost, c);
	c->hold_until_ms = clock_now_ms(c->rep->clock) + sim_range(0, 2 * lease_ms);
	later(c, 0, lease_ms / 3);
}

/* A reader's or a semaphore holder's acquire (mode), a try or a wait. */
static void acquire_shared(struct sim_client *c, enum sim_mode mode, unsigned cap)
{
	int64_t lease_ms = SIM->cfg.lease_ms;
	bool wait = sim_range(0, 9) < 7;
	int64_t timeout = 0;
	if (wait && !SIM->calm && sim_chance(500000))
		timeout = sim_range(lease_ms / 2, 4 * lease_ms);
	struct lt_sh_args a = {
		.name = c->name,
		.mode = mode == SIM_SHARED ? STORE_SH_SHARED : STORE_SH_LIMIT,
		.cap = cap,
		.lease_ms = lease_ms,
		.wait = wait,
		.timeout_ms = timeout,
		.owner = c->owner,
	};
	c->mode = mode;
	c->sw = lt_sh_acquire(c->rep->lt, &a, on_sh_acquired, c);
	if (c->sw == NULL) {
		sim_violation("lt_sh_acquire refused valid arguments");
		return;
	}
	c->st = C_WAITING;
	c->waiting_forever = wait && timeout == 0;
	c->wait_since_us = SIM->now_us;
	sim_log("cli  %s %s %s %s of %u as %s%s", cl(c), wait ? "waits for" : "tries",
		mode_name(mode), c->name, cap, c->owner, timeout ? " (with a timeout)" : "");
}

static void on_released(void *arg, int value, const struct lt_error *err)
{
	struct sim_client *c = arg;
	sim_log("cli  %s release of %s token %lld answered %d", cl(c), c->name, (long long)c->token,
		value);
	sim_check_release_answer(c->rep, c->name, c->owner, c->mode == SIM_EXCL ? -1 : (int)c->slot,
				 value);
	if (c->st == C_RELEASING) {
		c->st = C_IDLE;
		later(c, 0, SIM->cfg.lease_ms / 2);
	}
}

static void on_renewed(void *arg, int renewed, const struct lt_error *err)
{
	struct sim_client *c = arg;
	c->ops--;
	sim_log("cli  %s renew of %s: %s", cl(c), c->name,
		err != NULL ? err->error_type
		: renewed   ? "renewed"
			    : "ended");
}

static void on_tx(void *arg, const struct lt_tx_result *res)
{
	struct sim_client *c = arg;
	static const char *const names[] = {"ok", "lost", "cancelled", "error"};
	c->ops--;
	sim_log("cli  %s fenced write on %s: %s", cl(c), c->name, names[res->status]);
}

static void release(struct sim_client *c)
{
	c->st = C_RELEASING;
	if (c->sl != NULL) {
		struct sh_lease *l = c->sl;
		c->sl = NULL; /* believed no longer held from the call on */
		sim_log("cli  %s releases %s %s slot %u token %lld", cl(c), mode_name(c->mode),
			c->name, c->slot, (long long)c->token);
		sh_lease_release_then(l, on_released, c);
		return;
	}
	struct lease *l = c->lease;
	c->lease = NULL; /* believed no longer held from the call on */
	sim_log("cli  %s releases %s token %lld", cl(c), c->name, (long long)c->token);
	lease_release_then(l, on_released, c);
}

/* Something a holder does with its lease now and then. */
static void use_lease(struct sim_client *c, struct lease *l)
{
	if (c->ops > 2)
		return;
	if (sim_chance(300000)) {
		c->ops++;
		if (!lease_renew(l, on_renewed, c))
			sim_violation("lease_renew failed");
	} else if (sim_chance(500000)) {
		c->ops++;
		if (lt_transact(l, "[]", 2, NULL, on_tx, c) == NULL)
			sim_violation("lt_transact failed");
	}
}

static void holding(struct sim_client *c)
{
	if (clock_now_ms(c->rep->clock) >= c->hold_until_ms || SIM->ending) {
		release(c);
		return;
	}
	if (c->sl != NULL) { /* its heartbeats renew it; nothing else to do */
		later(c, 1, SIM->cfg.lease_ms / 3);
		return;
	}
	/* its connection closes on a draining replica: the lease is left for
	 * a client of another replica to adopt */
	if (c->adoptable && !SIM->calm && sim_chance(150000) &&
	    sim_adopt_leave(c->rep, c->lease, c->hash)) {
		sim_log("cli  %s leaves %s token %lld for an adopt", cl(c), c->name,
			(long long)c->token);
		c->lease = NULL;
		c->st = C_IDLE;
		later(c, 0, SIM->cfg.lease_ms / 2);
		return;
	}
	use_lease(c, c->lease);
	later(c, 1, SIM->cfg.lease_ms / 3);
}

/* ---- leaders ---- */

static void on_lead(void *arg, struct lease *lease)
{
	struct sim_client *c = arg;
	c->st = C_LEADING;
	granted(c, lease);
	c->hold_until_ms = clock_now_ms(c->rep->clock) + sim_range(0, 3 * SIM->cfg.lease_ms);
	later(c, 0, SIM->cfg.lease_ms / 3);
}

static void on_term_lost(void *arg, enum lt_loss reason)
{
	struct sim_client *c = arg;
	sim_log("cli  %s term on %s token %lld lost: %s", cl(c), c->name, (long long)c->token,
		lt_loss_name(reason));
	c->lease = NULL;
	c->st = C_CAMPAIGN;
	c->wait_since_us = SIM->now_us;
}

static void on_failed(void *arg, const struct lt_error *err)
{
	struct sim_client *c = arg;
	sim_log("cli  %s election failed: %s", cl(c), err->error_type);
	c->st = C_IDLE;
	c->lease = NULL;
	timer_arm(&c->t, 0); /* stopped from tick, outside the election's call */
}

static void stop_election(struct sim_client *c, enum election_end how)
{
	if (c->e != NULL)
		election_stop(c->e, how);
	c->e = NULL;
	c->lease = NULL;
}

static void campaign(struct sim_client *c)
{
	char msg[128];
	struct election_args a = {.name = c->name, .lease_ms = SIM->cfg.lease_ms};
	struct election_cbs cbs = {.lead = on_lead, .lost = on_term_lost, .failed = on_failed};
	c->e = election_start(c->rep->lt, &a, &cbs, c, msg, sizeof(msg));
	if (c->e == NULL) {
		sim_violation("election_start: %s", msg);
		return;
	}
	c->st = C_CAMPAIGN;
	c->wait_since_us = SIM->now_us;
	sim_log("cli  %s campaigns on %s", cl(c), c->name);
}

static void leader_tick(struct sim_client *c)
{
	if (c->st == C_IDLE) {
		stop_election(c, ELECTION_CANCELLED); /* a failed one */
		if (!SIM->ending)
			campaign(c);
		return;
	}
	if (c->st != C_LEADING)
		return;
	if (clock_now_ms(c->rep->clock) >= c->hold_until_ms || SIM->ending) {
		sim_log("cli  %s steps down from %s token %lld", cl(c), c->name,
			(long long)c->token);
		stop_election(c, ELECTION_WORK_RETURNED);
		c->st = C_IDLE;
		later(c, 0, SIM->cfg.lease_ms);
		return;
	}
	use_lease(c, c->lease);
	later(c, 1, SIM->cfg.lease_ms / 3);
}

static void tick(void *arg)
{
	struct sim_client *c = arg;
	if (c->leader) {
		leader_tick(c);
		return;
	}
	if (c->st == C_IDLE && !SIM->ending) {
		char hash[STORE_SECRET_HASH_LEN + 1];
		c->unheard_until_ms = 0; /* its next command tells it */
		draw_hash(hash);
		if (!SIM->calm && sim_chance(900000) && sim_adopt_try(c, c->rep, hash)) {
			c->st = C_ADOPTING;
			memcpy(c->hash, hash, sizeof(c->hash));
			return;
		}
		acquire(c);
	} else if (c->st == C_HOLDING) {
		holding(c);
	}
}

void sim_adopt_done(struct sim_client *c, struct lease *lease, int64_t token)
{
	bool stopped = c->st == C_STOPPED;
	if (!stopped)
		c->st = C_IDLE;
	if (lease != NULL && (!lease_held(lease) || stopped)) {
		sim_log("cli  %s adopted token %lld %s", cl(c), (long long)token,
			stopped ? "after its stop: released" : "ended already");
		lease_release(lease);
		lease = NULL;
	}
	if (lease == NULL) {
		if (!stopped)
			later(c, 0, SIM->cfg.lease_ms / 2);
		return;
	}
	snprintf(c->name, sizeof(c->name), "%s", lease_name(lease));
	c->mode = SIM_EXCL;
	c->lease = lease;
	c->token = lease_token(lease);
	c->granted_us = SIM->now_us;
	c->adoptable = true;
	snprintf(c->owner, sizeof(c->owner), "%s", lease_owner(lease));
	/* of the table that applied the adopt: one deleted since its answer
	 * left did not (seed 20712) */
	c->grant_inc = sim_net_acquired_in(c->owner);
	sim_log("cli  %s adopted %s token %lld", cl(c), c->name, (long long)c->token);
	c->st = C_HOLDING;
	lease_on_lost(lease, on_lost, c);
	c->hold_until_ms = clock_now_ms(c->rep->clock) + sim_range(0, 2 * SIM->cfg.lease_ms);
	later(c, 0, SIM->cfg.lease_ms / 3);
}

/* ---- life ---- */

struct sim_client *sim_client_new(struct replica *r, int idx, bool leader)
{
	struct sim_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		abort();
	c->rep = r;
	c->idx = idx;
	c->leader = leader;
	timer_init(&c->t, r->clock, tick, c);
	if (leader)
		snprintf(c->name, sizeof(c->name), "%s", SIM->names[SIM->cfg.locks]);
	return c;
}

void sim_client_start(struct sim_client *c)
{
	later(c, 0, SIM->cfg.lease_ms);
}

void sim_client_stop(struct sim_client *c)
{
	timer_cancel(&c->t);
	if (c->leader) {
		stop_election(c, ELECTION_CANCELLED);
	} else if (c->st == C_WAITING && c->sw != NULL) {
		lt_sh_acquire_cancel(c->sw); /* a grant that lands is released */
		c->sw = NULL;
	} else if (c->st == C_WAITING) {
		lt_acquire_cancel(c->w);
		c->w = NULL;
	} else if (c->st == C_HOLDING) {
		release(c);
		return;
	}
	if (c->st != C_RELEASING)
		c->st = C_STOPPED; /* an adopt in flight: released when answered */
}

void sim_client_crash(struct sim_client *c)
{
	c->lease = NULL;   /* gone with its process */
	c->st = C_STOPPED; /* its shared wait or lease too, freed at the end */
}

void sim_client_free(struct sim_client *c)
{
	timer_cancel(&c->t);
	if (c->w != NULL)
		lt_acquire_cancel(c->w); /* a crashed replica's (lt_free's contract) */
	lt_sh_acquire_cancel(c->sw);
	if (c->sl != NULL) /* a crashed replica's: its release goes nowhere */
		sh_lease_release(c->sl);
	if (c->e != NULL)
		election_stop(c->e, ELECTION_CANCELLED); /* sends into a dead store */
	free(c);
}

void sim_client_belief(struct sim_client *c, struct sim_belief *b)
{
	b->mode = c->mode;
	b->slot = c->slot;
	if (c->sl != NULL) {
		b->holds = !c->rep->dead && sh_held(c);
		b->end_ms = sh_lease_end_ms(c->sl);
	} else {
		b->holds = c->lease != NULL && !c->rep->dead && lease_held(c->lease);
		b->end_ms = c->lease != NULL ? lease_end_ms(c->lease) : 0;
		if (b->holds)
			c->seen_end_ms = b->end_ms;
		if (!b->holds && !c->rep->dead &&
		    clock_now_ms(c->rep->clock) < c->unheard_until_ms) {
			b->holds = true;
			b->end_ms = c->unheard_until_ms;
		}
	}
	b->name = c->name;
	b->owner = c->owner;
	b->token = c->token;
	b->granted_us = c->granted_us;
	b->lease_ms = SIM->cfg.lease_ms;
	b->incarnation = c->grant_inc;
}

int64_t sim_client_waiting_since(const struct sim_client *c)
{
	if (c->rep->dead || c->st != C_WAITING || !c->waiting_forever)
		return -1;
	return c->wait_since_us;
}

bool sim_client_is_leader(const struct sim_client *c)
{
	return c->leader;
}

const char *sim_client_label(const struct sim_client *c)
{
	return cl(c);
}

const char *sim_client_name(const struct sim_client *c)
{
	return c->name;
}
