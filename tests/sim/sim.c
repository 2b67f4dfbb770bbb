/*
 * sim: the world of the deterministic simulator and its command line
 * (see sim.h for what it simulates, sim_check.c for what it checks).
 *
 *   sim [--seeds N] [--first S]   runs seeds S..S+N-1 and prints
 *                                 "N seeds, M steps, K violations"; for
 *                                 each violation its seed, the message and
 *                                 the last lines of its trace
 *   sim --seed S                  replays seed S, printing its whole trace
 *   --exclusive                   (with either) locks without shared
 *                                 holders: the world of the seeds before
 *                                 them, draw for draw
 *   --shared-liveness             (with either) readers and semaphore
 *                                 waiters held to the fairness bound too
 *
 * A seed's run: a faulty phase (faults drawn from the seed), a calm phase
 * (no faults; the fairness bound is checked), then the clients stop and
 * the end is checked. The loop moves true time to the earliest of the
 * next network or fault event and the next due timer of any replica
 * (clock_next_due, converted through the replica's rate), brings every
 * running replica's clock to that moment (running its due timers), runs
 * the events due, and checks the rules: one step.
 */
#include "tests/sim/sim.h"

#include "lib/base/lg_assert.h"
#include "core/lt_session.h"
#include "core/store/store_session.h"

#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIM_STEPS_MAX 5000000 /* a seed that runs longer livelocks */

struct sim *SIM;
struct sim_tally TALLY;
static bool exclusive_world;		   /* --exclusive */
static bool shared_liveness;		   /* --shared-liveness */
static enum sim_heartbeat heartbeat_world; /* --heartbeat */
static bool no_liveness;		   /* --no-liveness */
static uint64_t scale_n;		   /* --scale N */
static int scale_takers = 3;		   /* --takers K */
static unsigned seen_max;		   /* --seen-max M: lt_options.seen_max */

/* ---- chance ---- */

static uint64_t rng;

uint64_t sim_rand(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int64_t sim_range(int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (int64_t)(sim_rand() % (uint64_t)(hi - lo + 1));
}

bool sim_chance(uint32_t ppm)
{
	return sim_rand() % 1000000 < ppm;
}

/* ---- the trace ---- */

static bool stop;

void sim_log(const char *fmt, ...)
{
	char line[200];
	va_list ap;
	int n = snprintf(line, sizeof(line), "%10.3f ", (double)SIM->now_us / 1000);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (SIM->trace)
		printf("%s\n", line);
	memcpy(SIM->hist[SIM->nhist++ % SIM_HIST_MAX], line, sizeof(line));
}

void sim_violation(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (SIM->violations++ == 0)
		memcpy(SIM->first_violation, msg, sizeof(msg));
	sim_log("VIOLATION %s", msg);
	stop = true;
}

/* A failed LG_ASSERT of the core (an illegal move of a lock, lease, wait
 * or HTTP request) is a violation of its seed, every time, whatever the
 * build: the simulator checks every transition it drives. */
static void on_assert(const char *file, int line, const char *cond, const char *detail)
{
	sim_violation("assertion failed at %s:%d: %s%s%s", file, line, cond,
		      detail != NULL ? ": " : "", detail != NULL ? detail : "");
}

/* ---- events on true time: a binary heap by (time, order) ---- */

struct ev {
	int64_t at;
	uint64_t seq;
	sim_ev_fn fn;
	void *arg;
};

static struct ev *heap;
static size_t nheap, heap_cap;
static uint64_t ev_seq;

static bool ev_before(const struct ev *a, const struct ev *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

void sim_at(int64_t at_us, sim_ev_fn fn, void *arg)
{
	if (nheap == heap_cap) {
		heap_cap = heap_cap ? 2 * heap_cap : 256;
		heap = realloc(heap, heap_cap * sizeof(*heap));
		if (heap == NULL)
			abort();
	}
	size_t i = nheap++;
	heap[i] = (struct ev){.at = at_us, .seq = ev_seq++, .fn = fn, .arg = arg};
	while (i > 0 && ev_before(&heap[i], &heap[(i - 1) / 2])) {
		struct ev x = heap[i];
		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static struct ev pop(void)
{
	struct ev top = heap[0];
	heap[0] = heap[--nheap];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < nheap && ev_before(&heap[l], &heap[m]))
			m = l;
		if (r < nheap && ev_before(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			break;
		struct ev x = heap[i];
		heap[i] = heap[m];
		heap[m] = x;
		i = m;
	}
	return top;
}

/* ---- replicas and their clocks ---- */

int64_t sim_local_ms(const struct replica *r, int64_t t_us)
{
	return (r->base_local_us + (t_us - r->base_true_us) * r->rate_ppm / 1000000) / 1000;
}

/* The first true time at which r's clock shows due_ms. */
static int64_t true_of(const struct replica *r, int64_t due_ms)
{
	int64_t need = due_ms * 1000 - r->base_local_us;
	int64_t t = r->base_true_us + (need * 1000000 + r->rate_ppm - 1) / r->rate_ppm;
	if (t < SIM->now_us)
		t = SIM->now_us;
	while (sim_local_ms(r, t) < due_ms)
		t++;
	return t;
}

int64_t sim_true_us(const struct replica *r, int64_t local_ms)
{
	return true_of(r, local_ms);
}

static bool running(const struct replica *r)
{
	return !r->dead && r->paused_until_us <= SIM->now_us;
}

static void sync_clock(struct replica *r)
{
	int64_t d = sim_local_ms(r, SIM->now_us) - clock_now_ms(r->clock);
	clock_fake_advance(r->clock, d > 0 ? d : 0);
}

struct corpse {
	struct corpse *next;
	struct clock *clock;
	struct store *store;
	struct locktable *lt;
	struct sim_client *clients[SIM_CLIENTS_MAX];
	int nclients;
};
static struct corpse *corpses;

static void boot(struct replica *r)
{
	r->clock = clock_fake_new(1767225600000LL);
	r->base_true_us = SIM->now_us;
	r->base_local_us = sim_range(0, 1000000) * 1000; /* boot time: any */
	clock_fake_advance(r->clock, r->base_local_us / 1000);
	r->store = sim_net_store(r);
	memset(&r->obs, 0, sizeof(r->obs));
	struct lt_options o = {.holder_label = r->label, .seen_max = seen_max};
	if (SIM->cfg.session[r->idx]) { /* the same id at every restart */
		o.heartbeat = LT_HEARTBEAT_REPLICA;
		o.replica_id = r->label;
		/* the verification sweep within a run's time, among its faults */
		o.sweep_ms = sim_range(LT_SWEEP_MIN_MS, 20000);
	}
	r->lt = lt_new(r->clock, r->store, &r->obs, &o);
	if (r->clock == NULL || r->lt == NULL)
		abort();
	r->nclients = SIM->cfg.clients;
	for (int i = 0; i < r->nclients; i++) {
		/* the last client of the first two replicas campaigns */
		bool leader = i == r->nclients - 1 && r->idx < 2;
		r->clients[i] = sim_client_new(r, i, leader);
		sim_client_start(r->clients[i]);
	}
	sim_log("rep  %s up (incarnation %d, rate %+d ppm%s)", r->label, r->incarnation,
		r->rate_ppm - 1000000, SIM->cfg.session[r->idx] ? ", session mode" : "");
}

/* ---- faults over time ---- */

static void resume(void *arg)
{
	struct replica *r = arg;
	if (stop || r->dead)
		return;
	int64_t d = sim_local_ms(r, SIM->now_us) - clock_now_ms(r->clock);
	clock_fake_jump(r->clock, d); /* its clock ran on; its loop did not */
	r->paused_until_us = 0;
	sim_log("rep  %s resumes", r->label);
	clock_fake_advance(r->clock, 0);
}

static void pause_replica(void *arg)
{
	struct replica *r = arg;
	if (r->dead || SIM->calm || r->paused_until_us > SIM->now_us)
		return;
	int64_t ms = sim_range(SIM->cfg.lease_ms, 3 * SIM->cfg.lease_ms);
	r->paused_until_us = SIM->now_us + ms * 1000;
	sim_log("rep  %s paused for %lld ms", r->label, (long long)ms);
	sim_at(r->paused_until_us, resume, r);
}

static void restart(void *arg)
{
	struct replica *r = arg;
	if (stop)
		return;
	r->dead = false;
	r->paused_until_us = 0;
	r->incarnation++;
	boot(r);
}

static void crash(void *arg)
{
	struct replica *r = arg;
	if (r->dead || SIM->calm)
		return;
	struct corpse *k = calloc(1, sizeof(*k));
	if (k == NULL)
		abort();
	k->clock = r->clock;
	k->store = r->store;
	k->lt = r->lt;
	k->nclients = r->nclients;
	for (int i = 0; i < r->nclients; i++) {
		sim_client_crash(r->clients[i]);
		k->clients[i] = r->clients[i];
	}
	sim_adopt_crash(r);
	k->next = corpses;
	corpses = k;
	r->dead = true;
	r->nclients = 0;
	r->clock = NULL; /* the corpse's now, freed at the end */
	r->store = NULL;
	r->lt = NULL;
	sim_log("rep  %s crashed", r->label);
	sim_at(SIM->now_us + sim_range(100, 2 * SIM->cfg.lease_ms) * 1000, restart, r);
}

void sim_replica_crash(struct replica *r)
{
	crash(r);
}

/* r runs on, but nothing it sends reaches the table and no answer
 * reaches it (sim_net.c) for up to two leases. */
static void partition(void *arg)
{
	struct replica *r = arg;
	if (r->dead || SIM->calm)
		return;
	int64_t ms = sim_range(SIM->cfg.lease_ms / 3, 2 * SIM->cfg.lease_ms);
	r->cut_until_us = SIM->now_us + ms * 1000;
	sim_log("net  %s cut off from the table for %lld ms", r->label, (long long)ms);
}

static void table_restore(void *arg)
{
	sim_net_table_restore();
}

static void table_delete(void *arg)
{
	if (SIM->calm)
		return;
	sim_net_table_delete();
	sim_at(SIM->now_us + sim_range(200, 2 * SIM->cfg.lease_ms) * 1000, table_restore, NULL);
}

/* ---- faults aimed at the session heartbeat ---- */

/* The session r's locktable has now, when it is live: its key into key. */
static bool live_session(const struct replica *r, char *key)
{
	if (r->dead || r->lt == NULL || !SIM->cfg.session[r->idx])
		return false;
	const struct lt_session *ses = lt_session_of(r->lt);
	struct lt_session_view v;
	if (ses == NULL)
		return false;
	lt_session_view(ses, &v);
	if (v.state != LT_SESSION_LIVE && v.state != LT_SESSION_CREATING)
		return false;
	snprintf(key, STORE_SESSION_KEY_MAX + 1, "%s", v.key);
	return true;
}

/* Another tool (an operator, the TTL) deletes r's session item. */
static void session_delete(void *arg)
{
	struct replica *r = arg;
	char key[STORE_SESSION_KEY_MAX + 1];
	if (stop || SIM->calm || !live_session(r, key))
		return;
	bool was = store_memory_session_delete(SIM->mem, key);
	TALLY.deletes += was;
	sim_log("tool %s's session item deleted%s", r->label, was ? "" : " (none yet)");
}

/* A waiter outside the replicas watching one session item by the rules
 * (docs/design/replica-heartbeat.md, Takeover): it reads the item (at
 * once: send and return are one moment of true time) every third of a
 * lease, counts from the first read that showed its rvn, and marks it dead
 * (KILL, on that rvn) once the rvn stood still for the largest maxLeaseMs
 * it saw, on a clock as slow as the slowest replica's. A session only
 * slow (its beats lost, late, throttled; its replica paused or cut off)
 * is killed this way; its replica must lose every lease it holds. */
struct watcher {
	struct replica *r;
	int incarnation;
	char key[STORE_SESSION_KEY_MAX + 1];
	char rvn[STORE_ID_MAX + 1];
	int64_t since_us, max_lease_ms;
};

static void on_session_read(void *arg, const struct store_session_result *res)
{
	*(struct store_session_result *)arg = *res;
}

/* A session request of the watcher, answered at once by the table. */
static void watcher_request(struct store_session_req *q, struct store_session_result *res)
{
	clock_fake_advance(SIM->ddb_clock, SIM->now_us / 1000 - clock_now_ms(SIM->ddb_clock));
	if (store_session_submit(SIM->mem, q, on_session_read, res) == NULL)
		abort();
	clock_fake_advance(SIM->ddb_clock, 0);
}

static void watch(void *arg)
{
	struct watcher *w = arg;
	struct store_session_result res = {0};
	char replica[STORE_SESSION_REPLICA_MAX + 1];
	const char *inc = strrchr(w->key, '#');
	snprintf(replica, sizeof(replica), "%.*s", (int)(inc - w->key - 8), w->key + 8);
	struct store_session_req q = {.op = STORE_SESSION_READ,
				      .replica = replica,
				      .incarnation = inc + 1,
				      .name = SIM->names[0]};
	if (stop || SIM->calm || w->r->incarnation != w->incarnation) {
		free(w);
		return;
	}
	watcher_request(&q, &res);
	if (res.status != STORE_OK || !res.session.exists || res.session.has_dead) {
		free(w); /* gone or dead: nothing to mark */
		return;
	}
	if (res.session.max_lease_ms > w->max_lease_ms)
		w->max_lease_ms = res.session.max_lease_ms;
	if (strcmp(res.session.rvn, w->rvn) != 0) {
		snprintf(w->rvn, sizeof(w->rvn), "%s", res.session.rvn);
		w->since_us = SIM->now_us;
	}
	const struct sim_config *g = &SIM->cfg;
	int64_t need_us = w->max_lease_ms * 1000 + w->max_lease_ms * g->rate_tol_ppm / 500 + 2000;
	if (SIM->now_us - w->since_us >= need_us) {
		q.op = STORE_SESSION_KILL;
		q.seen_rvn = w->rvn;
		q.by = "sim-tool";
		q.name = NULL;
		watcher_request(&q, &res);
		TALLY.kills += res.status == STORE_OK;
		sim_log("tool %s's session marked dead: %s", w->r->label,
			store_status_name(res.status));
		free(w);
		return;
	}
	sim_at(SIM->now_us + g->lease_ms * 1000 / 3, watch, w);
}

static void session_watch(void *arg)
{
	struct replica *r = arg;
	struct watcher *w = calloc(1, sizeof(*w));
	if (w == NULL)
		abort();
	if (stop || SIM->calm || !live_session(r, w->key)) {
		free(w);
		return;
	}
	w->r = r;
	w->incarnation = r->incarnation;
	w->max_lease_ms = SIM->cfg.lease_ms;
	sim_log("tool %s's session watched", r->label);
	watch(w);
}

/* r's session requests are all throttled for up to two leases (a hot
 * partition of the session item, say) while its lock writes pass: its
 * beats stop landing while it runs on. */
static void beat_blackout(void *arg)
{
	struct replica *r = arg;
	if (stop || SIM->calm || r->dead)
		return;
	int64_t ms = sim_range(SIM->cfg.lease_ms / 3, 2 * SIM->cfg.lease_ms);
	r->beats_cut_until_us = SIM->now_us + ms * 1000;
	sim_log("net  %s's session requests throttled for %lld ms", r->label, (long long)ms);
}

static void go_calm(void *arg)
{
	SIM->calm = true;
	sim_log("sim  calm: no more faults");
}

static void go_end(void *arg)
{
	SIM->ending = true;
	sim_log("sim  the clients stop");
	sim_adopt_end();
	for (int i = 0; i < SIM->cfg.replicas; i++) {
		struct replica *r = &SIM->rep[i];
		if (r->dead)
			continue;
		for (int c = 0; c < r->nclients; c++)
			sim_client_stop(r->clients[c]);
	}
}

static void schedule_faults(void)
{
	const struct sim_config *g = &SIM->cfg;
	int64_t run_us = g->run_ms * 1000;
	for (int i = 0; i < g->f.pauses; i++)
		sim_at(sim_range(0, run_us), pause_replica,
		       &SIM->rep[sim_range(0, g->replicas - 1)]);
	for (int i = 0; i < g->f.crashes; i++)
		sim_at(sim_range(0, run_us), crash, &SIM->rep[sim_range(0, g->replicas - 1)]);
	if (g->f.table_delete)
		sim_at(sim_range(0, run_us), table_delete, NULL);
	for (int i = 0; i < g->f.partitions; i++)
		sim_at(sim_range(0, run_us), partition, &SIM->rep[sim_range(0, g->replicas - 1)]);
	for (int i = 0; i < g->f.session_deletes; i++)
		sim_at(sim_range(0, run_us), session_delete,
		       &SIM->rep[sim_range(0, g->replicas - 1)]);
	for (int i = 0; i < g->f.session_kills; i++)
		sim_at(sim_range(0, run_us), session_watch,
		       &SIM->rep[sim_range(0, g->replicas - 1)]);
	for (int i = 0; i < g->f.beat_blackouts; i++)
		sim_at(sim_range(0, run_us), beat_blackout,
		       &SIM->rep[sim_range(0, g->replicas - 1)]);
	sim_at(run_us, go_calm, NULL);
	sim_at(run_us + g->calm_ms * 1000, go_end, NULL);
}

/* ---- a seed ---- */

/* Each lock a reader-writer lock (its readers' cap the gateway's, or a
 * few, so that readers fill it) or a semaphore of 1..SIM_LIMIT_MAX; drawn
 * last, so that --exclusive draws what it drew before. */
static void draw_shared(struct sim_config *g)
{
	g->shared_ppm = (uint32_t)sim_range(300000, 800000);
	for (int i = 0; i < g->locks; i++) {
		g->kind[i] = sim_chance(500000) ? SIM_SHARED : SIM_LIMIT;
		if (g->kind[i] == SIM_LIMIT)
			g->cap[i] = (unsigned)sim_range(1, SIM_LIMIT_MAX);
		else
			g->cap[i] = sim_chance(500000) ? STORE_SH_CAP : (unsigned)sim_range(2, 4);
	}
}

/* --heartbeat replica or mixed: each replica's mode and the faults aimed
 * at the heartbeat; drawn last, so that the rest of the world is the one
 * the seed draws in lease mode. A faulty seed mostly raises the faults
 * on session requests (up to 30% each), and often pauses a replica more
 * (its session stops beating) and crashes one (it restarts with the same
 * replica id, a new incarnation). */
static void draw_sessions(struct sim_config *g, bool faulty)
{
	struct sim_faults *f = &g->f;
	for (int i = 0; i < g->replicas; i++)
		g->session[i] = g->heartbeat == SIM_HB_REPLICA || sim_chance(500000);
	if (!faulty)
		return;
	f->beat_ppm = sim_chance(800000) ? (uint32_t)sim_range(0, 300000) : 0;
	f->pauses += (int)sim_range(0, 2);
	f->crashes += (int)sim_range(0, 1);
	f->session_deletes = sim_chance(300000) ? (int)sim_range(1, 2) : 0;
	f->session_kills = sim_chance(400000) ? (int)sim_range(1, 3) : 0;
	f->beat_blackouts = sim_chance(500000) ? (int)sim_range(1, 3) : 0;
}

enum sim_mode sim_lock_kind(const char *name, unsigned *cap)
{
	for (int i = 0; i < SIM->cfg.locks; i++)
		if (strcmp(SIM->names[i], name) == 0) {
			*cap = SIM->cfg.cap[i];
			return SIM->cfg.kind[i];
		}
	*cap = 1;
	return SIM_EXCL;
}

static void draw(struct sim_config *g, uint64_t seed)
{
	rng = seed * 0x2545f4914f6cdd1dull + 1;
	g->seed = seed;
	g->replicas = (int)sim_range(2, 4);
	g->clients = (int)sim_range(1, 3);
	g->locks = (int)sim_range(1, SIM_LOCKS_MAX);
	g->lease_ms = sim_range(1, 3) * 1000;
	g->run_ms = sim_range(5, 15) * g->lease_ms;
	g->calm_ms = sim_range(8, 12) * g->lease_ms;
	g->rate_tol_ppm = sim_chance(300000) ? sim_range(0, 20000) : sim_range(0, 200);
	int32_t lo = 1000000, hi = 1000000;
	for (int i = 0; i < g->replicas; i++) {
		g->rate_ppm[i] =
			1000000 + (int32_t)sim_range(-g->rate_tol_ppm / 2, g->rate_tol_ppm / 2);
		lo = g->rate_ppm[i] < lo ? g->rate_ppm[i] : lo;
		hi = g->rate_ppm[i] > hi ? g->rate_ppm[i] : hi;
	}
	/* the allowance of the check: the largest ratio of two rates */
	g->rate_tol_ppm = (int64_t)(hi - lo) * 1000000 / lo + 1;
	struct sim_faults *f = &g->f;
	bool faulty = sim_chance(850000);
	f->delay_min_us = sim_range(100, 2000);
	f->delay_max_us = f->delay_min_us + sim_range(0, 20000);
	f->tail_max_us = sim_range(100000, 3000000);
	if (faulty) {
		f->tail_ppm = (uint32_t)sim_range(0, 50000);
		f->throttle_ppm = (uint32_t)sim_range(0, 50000);
		f->err500_before_ppm = (uint32_t)sim_range(0, 30000);
		f->err500_after_ppm = (uint32_t)sim_range(0, 30000);
		f->lost_answer_ppm = (uint32_t)sim_range(0, 50000);
		f->dup_ppm = (uint32_t)sim_range(0, 30000);
		f->pauses = (int)sim_range(0, 3);
		f->crashes = (int)sim_range(0, 2);
		f->table_delete = sim_chance(100000);
	}
	if (!g->exclusive) {
		draw_shared(g);
		f->partitions = faulty ? (int)sim_range(0, 2) : 0;
	}
	if (g->heartbeat != SIM_HB_LEASE)
		draw_sessions(g, faulty);
}

/* The world of sim_scale.c's case: r0 and the takers, all in session
 * mode, leases of 3 s, the network's delays 1-10 ms and no fault; the
 * run long enough for the case (its crash a lease or so in, its end
 * SCALE_BOUND_LEASES + 1 leases after), no calm phase. */
static void draw_scale(struct sim_config *g, uint64_t seed)
{
	rng = seed * 0x2545f4914f6cdd1dull + 1;
	g->seed = seed;
	g->scale = scale_n;
	g->takers = scale_takers;
	g->replicas = scale_takers + 1;
	g->lease_ms = 3000;
	g->run_ms = 12 * g->lease_ms;
	int32_t lo = 1000000, hi = 1000000;
	for (int i = 0; i < g->replicas; i++) {
		g->rate_ppm[i] = 1000000 + (int32_t)sim_range(-100, 100);
		lo = g->rate_ppm[i] < lo ? g->rate_ppm[i] : lo;
		hi = g->rate_ppm[i] > hi ? g->rate_ppm[i] : hi;
		g->session[i] = true;
	}
	g->rate_tol_ppm = (int64_t)(hi - lo) * 1000000 / lo + 1;
	g->f.delay_min_us = 1000;
	g->f.delay_max_us = 10000;
	g->f.tail_max_us = 10000;
}

static void setup(uint64_t seed, bool trace)
{
	SIM = calloc(1, sizeof(*SIM));
	if (SIM == NULL)
		abort();
	SIM->trace = trace;
	SIM->cfg.exclusive = exclusive_world;
	SIM->cfg.shared_liveness = shared_liveness;
	SIM->cfg.heartbeat = heartbeat_world;
	SIM->cfg.liveness = !no_liveness;
	if (scale_n > 0)
		draw_scale(&SIM->cfg, seed);
	else
		draw(&SIM->cfg, seed);
	SIM->ddb_clock = clock_fake_new(1767225600000LL);
	SIM->mem = store_memory_new(SIM->ddb_clock, "sim");
	for (int i = 0; i < SIM->cfg.locks; i++)
		snprintf(SIM->names[SIM->nnames++], SIM_NAME_MAX, "lock-%d", i);
	snprintf(SIM->names[SIM->nnames++], SIM_NAME_MAX, "leader");
	sim_check_init();
	sim_adopt_reset();
	const struct sim_config *g = &SIM->cfg;
	const struct sim_faults *f = &g->f;
	sim_log("sim  seed %llu: %d replicas x %d clients, %d locks, lease %lld ms, run %lld + "
		"%lld ms, rate spread %lld ppm",
		(unsigned long long)seed, g->replicas, g->clients, g->locks, (long long)g->lease_ms,
		(long long)g->run_ms, (long long)g->calm_ms, (long long)g->rate_tol_ppm);
	sim_log("sim  faults (ppm): throttle %u, 500 %u/%u, lost %u, dup %u, tail %u up to %lld "
		"ms; %d pauses, %d crashes%s",
		f->throttle_ppm, f->err500_before_ppm, f->err500_after_ppm, f->lost_answer_ppm,
		f->dup_ppm, f->tail_ppm, (long long)f->tail_max_us / 1000, f->pauses, f->crashes,
		f->table_delete ? ", a table deleted" : "");
	if (!g->exclusive)
		sim_log("sim  %d partitions", f->partitions);
	if (g->heartbeat != SIM_HB_LEASE)
		sim_log("sim  session faults: beats %u ppm more, %d session items deleted, %d "
			"watched to be marked dead, %d blackouts of sessions",
			f->beat_ppm, f->session_deletes, f->session_kills, f->beat_blackouts);
	for (int i = 0; i < g->locks && !g->exclusive; i++)
		sim_log("sim  %s: %s of %u, %u ppm of acquires not exclusive", SIM->names[i],
			g->kind[i] == SIM_SHARED ? "readers and writers, readers' cap"
						 : "a semaphore",
			g->cap[i], g->shared_ppm);
	for (int i = 0; i < g->replicas; i++) {
		struct replica *r = &SIM->rep[i];
		r->idx = i;
		r->rate_ppm = g->rate_ppm[i];
		snprintf(r->label, sizeof(r->label), "r%d", i);
		boot(r);
	}
	if (g->scale > 0)
		sim_scale_start(g->scale, g->takers);
	else
		schedule_faults();
}

/* The earliest moment anything has work: an event, or a replica's timer. */
static int64_t next_moment(void)
{
	int64_t t = nheap > 0 ? heap[0].at : INT64_MAX;
	for (int i = 0; i < SIM->cfg.replicas; i++) {
		struct replica *r = &SIM->rep[i];
		int64_t due;
		if (running(r) && clock_next_due(r->clock, &due)) {
			int64_t at = true_of(r, due);
			t = at < t ? at : t;
		}
	}
	return t;
}

static void run(void)
{
	const struct sim_config *g = &SIM->cfg;
	int64_t end_us = (g->run_ms + g->calm_ms + 4 * g->lease_ms) * 1000;
	while (!stop) {
		int64_t t = next_moment();
		if (t > end_us)
			break;
		if (t > SIM->now_us)
			SIM->now_us = t;
		for (int i = 0; i < g->replicas; i++)
			if (running(&SIM->rep[i]))
				sync_clock(&SIM->rep[i]);
		while (!stop && nheap > 0 && heap[0].at <= SIM->now_us) {
			struct ev e = pop();
			e.fn(e.arg);
		}
		SIM->steps++;
		if (!stop)
			sim_check_step();
		if (SIM->steps > SIM_STEPS_MAX + 1000 * g->scale)
			sim_violation("more than %d steps: a livelock", SIM_STEPS_MAX);
	}
	if (!stop)
		sim_check_end();
}

static void free_replica(struct clock *c, struct store *s, struct locktable *lt,
			 struct sim_client **clients, int n, const char *label, bool check)
{
	sim_net_abandon(s); /* the clients hear of their calls while they live */
	for (int i = 0; i < n; i++)
		sim_client_free(clients[i]);
	sim_net_abandon(s); /* the releases their frees sent */
	struct lt_stats st;
	lt_stats(lt, &st);
	TALLY.swept += st.sweep.items;
	TALLY.sweep_lost += st.sweep.lost;
	lt_free(lt);
	if (check && !stop && clock_armed(c) != 0)
		sim_violation("%s at the end: %zu timers still armed", label, clock_armed(c));
	store_free(s);
	clock_free(c);
}

static void teardown(void)
{
	for (int i = 0; i < SIM->cfg.replicas; i++)
		SIM->rep[i].dead = true; /* answers from now on go nowhere */
	bool was_stopped = stop;
	stop = true; /* fault events do nothing any more */
	while (nheap > 0) {
		struct ev e = pop();
		e.fn(e.arg);
	}
	stop = was_stopped;
	for (int i = 0; i < SIM->cfg.replicas; i++) {
		struct replica *r = &SIM->rep[i];
		if (r->clock == NULL)
			continue; /* crashed, not restarted: a corpse */
		free_replica(r->clock, r->store, r->lt, r->clients, r->nclients, r->label, true);
	}
	while (corpses != NULL) {
		struct corpse *k = corpses;
		corpses = k->next;
		free_replica(k->clock, k->store, k->lt, k->clients, k->nclients, "", false);
		free(k);
	}
	sim_adopt_reset();
	sim_net_free();
	sim_check_free();
	store_free(SIM->mem);
	clock_free(SIM->ddb_clock);
}

struct outcome {
	uint64_t steps, violations;
	char message[256];
};

static struct outcome run_seed(uint64_t seed, bool trace)
{
	stop = false;
	setup(seed, trace);
	run();
	teardown();
	struct outcome o = {.steps = SIM->steps, .violations = SIM->violations};
	if (SIM->cfg.scale > 0)
		sim_scale_report();
	memcpy(o.message, SIM->first_violation, sizeof(o.message));
	if (o.violations > 0 && !trace) {
		printf("seed %llu: VIOLATION %s\n", (unsigned long long)seed, o.message);
		int n = SIM->nhist < SIM_HIST_MAX ? SIM->nhist : SIM_HIST_MAX;
		for (int i = SIM->nhist - n; i < SIM->nhist; i++)
			printf("  %s\n", SIM->hist[i % SIM_HIST_MAX]);
		printf("  (replay: make simulate SEED=%llu)\n", (unsigned long long)seed);
	}
	free(SIM);
	SIM = NULL;
	free(heap);
	heap = NULL;
	nheap = heap_cap = 0;
	return o;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool parse_heartbeat(const char *v)
{
	static const char *const names[] = {
		[SIM_HB_LEASE] = "lease", [SIM_HB_REPLICA] = "replica", [SIM_HB_MIXED] = "mixed"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i]) == 0) {
			heartbeat_world = (enum sim_heartbeat)i;
			return true;
		}
	return false;
}

static void usage(void)
{
	fprintf(stderr, "usage: sim [--exclusive] [--shared-liveness] [--heartbeat "
			"lease|replica|mixed] [--no-liveness] [--seeds N] [--first S] | sim [same "
			"options] --seed S | sim --scale N [--takers K] [--seen-max M] [--seeds N] "
			"[--first "
			"S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seeds = 100, first = 1;
	long long one = -1;
	lg_assert_set_handler(on_assert);
	/* a READ of every slot answers some 190 KB (99 items), copied twice
	 * (the table's answer, the network's): kept on the heap, not mapped
	 * and unmapped by glibc each time (half the run time otherwise) */
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--exclusive") == 0) {
			exclusive_world = true;
			continue;
		}
		if (strcmp(argv[i], "--shared-liveness") == 0) {
			shared_liveness = true;
			continue;
		}
		if (strcmp(argv[i], "--no-liveness") == 0) {
			no_liveness = true;
			continue;
		}
		if (strcmp(argv[i], "--heartbeat") == 0 && i + 1 < argc) {
			if (!parse_heartbeat(argv[++i]))
				usage();
			continue;
		}
		if (i + 1 >= argc)
			usage();
		char *end;
		unsigned long long v = strtoull(argv[i + 1], &end, 10);
		if (*end != '\0')
			usage();
		if (strcmp(argv[i], "--seeds") == 0)
			seeds = v;
		else if (strcmp(argv[i], "--first") == 0)
			first = v;
		else if (strcmp(argv[i], "--seed") == 0)
			one = (long long)v;
		else if (strcmp(argv[i], "--scale") == 0 && v > 0)
			scale_n = v;
		else if (strcmp(argv[i], "--takers") == 0 && v >= 1 && v < SIM_REPLICAS_MAX)
			scale_takers = (int)v;
		else if (strcmp(argv[i], "--seen-max") == 0 && v > 0 && v <= UINT32_MAX)
			seen_max = (unsigned)v;
		else
			usage();
		i++;
	}
	if (one >= 0) {
		struct outcome o = run_seed((uint64_t)one, true);
		printf("seed %lld: %llu steps, %llu violations%s%s\n", one,
		       (unsigned long long)o.steps, (unsigned long long)o.violations,
		       o.violations ? ": " : "", o.violations ? o.message : "");
		return o.violations ? 1 : 0;
	}
	double t0 = seconds(), first_at = -1;
	uint64_t steps = 0, bad = 0, first_bad = 0;
	for (uint64_t s = first; s < first + seeds; s++) {
		struct outcome o = run_seed(s, false);
		steps += o.steps;
		if (o.violations > 0 && bad++ == 0) {
			first_at = seconds() - t0;
			first_bad = s;
		}
	}
	double dt = seconds() - t0;
	printf("%llu seeds, %llu steps, %llu violations\n", (unsigned long long)seeds,
	       (unsigned long long)steps, (unsigned long long)bad);
	if (heartbeat_world != SIM_HB_LEASE)
		printf("sessions: %llu requests, %llu hit by faults aimed at them, %llu marked "
		       "dead, %llu deleted; leases lost: %llu session, %llu expired; %llu "
		       "takeovers; the sweeps read %llu items, ended %llu leases\n",
		       (unsigned long long)TALLY.session_requests,
		       (unsigned long long)TALLY.session_faults, (unsigned long long)TALLY.kills,
		       (unsigned long long)TALLY.deletes, (unsigned long long)TALLY.lost_session,
		       (unsigned long long)TALLY.lost_expired, (unsigned long long)TALLY.takeovers,
		       (unsigned long long)TALLY.swept, (unsigned long long)TALLY.sweep_lost);
	printf("%.1f s, %.0f steps/s", dt, dt > 0 ? (double)steps / dt : 0.0);
	if (bad > 0)
		printf("; first violation: seed %llu, after %.2f s (%llu seeds)",
		       (unsigned long long)first_bad, first_at,
		       (unsigned long long)(first_bad - first + 1));
	printf("\n");
	return bad ? 1 : 0;
}
