/*
 * bench_scale: how many leases one replica carries against DynamoDB's real
 * latency. For each scenario, in one run: a fresh DynamoDB stand-in
 * (tests/support/ddb_standin.c, in a thread of this process, answering
 * after a drawn latency: uniform from 0.6 to 1.4 times the typical one, 1%
 * in a long tail up to 40 times), a fresh gateway (build/leasegate, its own
 * process, default options but those a scale test needs: the stand-in's
 * endpoint, --maxclients 10100); clients (hiredis on
 * this process's loop, 10 commands outstanding per connection, a TRYAGAIN
 * tried again after 100 ms doubling to 4 s, with jitter) take the
 * scenario's leases of 30 s (in at most SCALE_ACQUIRE_S seconds, default
 * the scenario's: 90 s, or more for 1,000,000) and keep their connections
 * open; then the leases are held for at least
 * two lease periods (SCALE_HOLD_S, default 65 s), optionally with a lock-cycle load on top (50
 * connections looping LOCK.ACQUIRE / LOCK.RELEASE over 5,000 names), and the run prints: lost
 * leases lost while held (INFO leases, losses), and leases still held at the end out of those taken
 *   late       renewal lateness p50/p99/max: how long after a third of its
 *              lease past the write before it each renewal reached the
 *              stand-in (0 = on schedule)
 *   renewals   renewal writes over the hold: per-lease renewals (lease
 *              mode) or session CREATEs and BEATs (replica mode)
 *   req/s      requests the stand-in answered per second while held
 *   wr/s, rd/s of them, writes (UpdateItem, DeleteItem, TransactWriteItems)
 *              and reads (GetItem, BatchGetItem, Scan, Query) per second,
 *              as the stand-in counts them (standin_stats); rd_it/s the
 *              items those reads carried (the sweep's: 100 a BatchGetItem)
 *   cpu, rss   the gateway's CPU over the hold (% of one core; and per
 *              DynamoDB request) and its largest resident memory over the
 *              hold; B/lease: that less its RSS before the first acquire,
 *              per lease taken
 *   bench, steal  this process's CPU (the stand-in and the clients) and
 *              the machine's steal time over the hold: what else ran
 *   and the pool: most requests in flight, most queued, longest queue
 *   wait (INFO dynamodb, sampled every second), TRYAGAIN answers while
 *   acquiring, lock cycles per second.
 *
 * Both heartbeat modes side by side (docs/design/replica-heartbeat.md):
 * NAME runs a scenario with --heartbeat lease, NAME-replica the same with
 * --heartbeat replica (--replica-id bench-a; its verification sweep every
 * SCALE_SWEEP if set, e.g. 60s, else the gateway's default of 5 min; the
 * hold begins once the sweep began its first period, a period after the
 * gateway started, so that it is measured at its pace: "sweep it/s" the
 * lock items it asked for a second over the hold, "period s" how long its
 * last whole period took, longer than SCALE_SWEEP when it fell behind,
 * 0 unless the hold saw a period end). In
 * replica mode the renewal writes are the session's CREATE and BEATs, and
 * "late" is each BEAT's interval from the one before it at the stand-in
 * less a third of the lease (all leases here are 30 s; a beat is due a
 * third of the shortest lease after the send of the last one answered, so
 * about one round trip late by design). At the end, a summary: one line
 * a scenario run, the figures issue 31 asks for.
 *
 * takeover-N (N: a scenario's size, 100k...): gateway A (replica mode)
 * holds N leases; gateway B (replica mode, bench-b) gets
 * SCALE_TAKEOVER_CONNS (default 10,000) connections each waiting
 * (LOCK.ACQUIRE ... WAIT) for its share of the names one after another (a
 * connection waits for one lock at a time); after TAKEOVER_WATCH_S, right
 * after one of A's beats reached the stand-in, A is killed (SIGKILL); it
 * prints when the takeovers came after the kill (first, 10%, 50%, 90%,
 * all) and the requests they cost.
 *
 *   build/bench/bench_scale [scenario...]     (default: 100k 100k-replica
 *                                             1m 1m-replica takeover-100k,
 *                                             ~25 min; "all": every scenario
 *                                             not only-when-named, both modes)
 *   build/bench/bench_scale list
 *   build/bench/bench_scale standin PORT MS   (the stand-in alone, until killed)
 *
 * This is a benchmark: it asserts nothing; on a shared 2-core machine its
 * figures move from run to run.
 */
#include <errno.h>
#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/ddb_standin_thread.h"
#include "tests/support/gwproc.h"

#define LEASE_MS	 30000
#define CYCLERS		 50
#define CYCLE_NAMES	 100 /* per cycler */
#define RETRY_MS	 100
#define ACQUIRE_MAX_S	 90
#define SWEEP_WAIT_MAX_S 420 /* for the sweep's first period: the default 5 min and more */

struct scenario {
	const char *id;
	int leases, conns;
	double lat_ms;
	bool cycle;
	bool named;	       /* run only when named (past what a 2-core machine carries) */
	int acquire_s;	       /* how long the clients may take to acquire; 0: ACQUIRE_MAX_S */
	int acquire_replica_s; /* the same in replica mode, 0: acquire_s */
};

/* "A few connections": 1,000 leases each, the default
 * --max-leases-per-session (a session finds its leases by a scan). */
static const struct scenario scenarios[] = {
	{"1k", 1000, 1, 5, false, false, 0, 0},
	{"10k", 10000, 10, 5, false, false, 0, 0},
	{"50k", 50000, 50, 5, false, false, 0, 0},
	{"75k", 75000, 75, 5, false, false, 0, 0},
	{"100k", 100000, 100, 5, false, false, 0, 0},
	{"100k-c10k", 100000, 10000, 5, false, false, 0, 0},
	{"100k-cycle", 100000, 100, 5, true, false, 0, 0},
	{"100k-10ms", 100000, 100, 10, false, false, 0, 0},
	{"100k-10ms-cycle", 100000, 100, 10, true, false, 0, 0},
	{"200k", 200000, 200, 5, false, true, 0, 0},
	{"300k", 300000, 300, 5, false, true, 0, 0},
	{"400k", 400000, 400, 5, false, true, 0, 0},
	{"1m", 1000000, 1000, 5, false, true, 180, 480},
};
#define NSCEN (sizeof scenarios / sizeof scenarios[0])

/* ---- the stand-in's thread ---- */

static bool sd_start(struct standin_thread *t, int port, double lat_ms)
{
	struct standin_options o = standin_latency(lat_ms);
	return standin_thread_start(t, port, &o);
}

/* ---- the gateway's process, and the machine ---- */

/* The machine's steal and total time, in ticks of all CPUs (/proc/stat's
 * first line): time the hypervisor gave to others. */
static void machine_ticks(long long *steal, long long *total)
{
	unsigned long long v[8] = {0};
	*steal = *total = 0;
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (int i = 0; i < 8; i++)
			*total += (long long)v[i];
		*steal = (long long)v[7];
	}
	fclose(f);
}

/* This process's CPU (the stand-in's thread and the clients'), seconds. */
static double self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static bool proc_cpu_ticks(pid_t pid, long long *ticks)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return false;
	*ticks = (long long)(ut + st);
	return true;
}

/* VmRSS (or another field) of pid, in kB; -1 when unknown. */
static long proc_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long kb = -1;
	size_t fl = strlen(field);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':')
			kb = strtol(line + fl + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* The gateway's mode: --heartbeat lease (each lease renews its own item)
 * or replica (one session item for all; docs/design/replica-heartbeat.md). */
enum hb_mode { HB_LEASE, HB_REPLICA };
static const char *const hb_names[] = {"lease", "replica"};

/* Starts build/leasegate against the stand-in at url on port, in mode hb
 * (replica: as replica_id, its sweep every SCALE_SWEEP if set, else the
 * gateway's default); its output appended to log. The pid, or -1. */
static pid_t start_gateway(const char *bin, const char *url, int port, const char *log,
			   enum hb_mode hb, const char *replica_id)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	const char *argv[32] = {bin,	     "--port",		p,	     "--pg-port",
				"0",	     "--admin-port",	"0",	     "--table",
				"scale",     "--region",	"us-east-1", "--endpoint",
				url,	     "--partition-key", "pk",	     "--maxclients",
				"10100",     "--log-level",	"error",     "--heartbeat",
				hb_names[hb]};
	int n = 21;
	const char *sweep = getenv("SCALE_SWEEP");
	if (hb == HB_REPLICA) {
		argv[n++] = "--replica-id";
		argv[n++] = replica_id;
		if (sweep && *sweep) {
			argv[n++] = "--heartbeat-sweep";
			argv[n++] = sweep;
		}
	}
	argv[n] = NULL;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	pid_t pid = gp_spawn(argv, log, false, (long)rl.rlim_cur);
	if (pid > 0 && gp_wait_ready(pid, port) != 0) {
		gp_stop(pid);
		return -1;
	}
	return pid;
}

/* One field "key:value" of an INFO section, -1 when absent. */
static long long info_field(redisContext *c, const char *section, const char *key)
{
	redisReply *r = redisCommand(c, "INFO %s", section);
	long long v = -1;
	if (r && r->type == REDIS_REPLY_STRING) {
		char want[96];
		snprintf(want, sizeof want, "\n%s:", key);
		const char *p = strstr(r->str, want);
		if (!p && strncmp(r->str, want + 1, strlen(want + 1)) == 0)
			p = r->str - 1;
		if (p)
			v = strtoll(p + strlen(want), NULL, 10);
	}
	if (r)
		freeReplyObject(r);
	return v;
}

/* ---- the clients ---- */

struct holder {
	redisAsyncContext *ac;
	int first, count; /* its names: first .. first + count - 1 */
	int next;	  /* the next never sent */
	int inflight, acquired;
	int *retry; /* names refused TRYAGAIN, to send again */
	int nretry;
	int backoff_ms;	   /* after a TRYAGAIN: RETRY_MS doubling to 4 s */
	double retry_at_s; /* retries wait until then */
};

struct cycler {
	redisAsyncContext *ac;
	struct event *timer;
	int idx;
	unsigned n;
	char name[96];
};

struct run {
	const struct scenario *sc;
	struct event_base *base;
	int port;
	char prefix[48];
	struct holder *h;
	int nh, window;
	long long acquired, tryagain, errors, sent;
	struct cycler cyc[CYCLERS];
	bool cycling;
	long long cycles, cycle_tryagain;
	struct event *retry_ev, *start_ev;
	int opened;
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pump(struct run *r, struct holder *h);

static void *tag(int holder, int name)
{
	return (void *)(uintptr_t)((uint64_t)(uint32_t)holder << 32 | (uint32_t)name);
}

static void on_acquire(redisAsyncContext *ac, void *reply, void *priv)
{
	struct run *r = ac->data;
	redisReply *rep = reply;
	uint64_t t = (uintptr_t)priv;
	struct holder *h = &r->h[t >> 32];
	int name = (int)(uint32_t)t;
	h->inflight--;
	if (!rep)
		return; /* freed */
	if (rep->type == REDIS_REPLY_INTEGER) {
		h->acquired++;
		r->acquired++;
	} else {
		if (rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "TRYAGAIN", 8) == 0)
			r->tryagain++;
		else
			r->errors++;
		h->retry[h->nretry++] = name;
		/* as a client should: back off, with jitter, doubling */
		h->backoff_ms = h->backoff_ms ? h->backoff_ms * 2 : RETRY_MS;
		if (h->backoff_ms > 4000)
			h->backoff_ms = 4000;
		h->retry_at_s = mono_s() + h->backoff_ms * (0.5 + drand48()) / 1000;
		return;
	}
	h->backoff_ms = 0;
	pump(r, h);
}

static void send_acquire(struct run *r, struct holder *h, int name)
{
	char n[96];
	snprintf(n, sizeof n, "%s-%d", r->prefix, h->first + name);
	h->inflight++;
	r->sent++;
	redisAsyncCommand(h->ac, on_acquire, tag((int)(h - r->h), name), "LOCK.ACQUIRE %s %d", n,
			  LEASE_MS);
}

/* New names up to the window; retries wait for the retry tick. */
static void pump(struct run *r, struct holder *h)
{
	while (h->ac && h->inflight < r->window && h->next < h->count)
		send_acquire(r, h, h->next++);
}

static void on_retry_tick(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	double now = mono_s();
	for (int i = 0; i < r->nh; i++) {
		struct holder *h = &r->h[i];
		if (h->retry_at_s > now)
			continue;
		while (h->ac && h->nretry > 0 && h->inflight < r->window)
			send_acquire(r, h, h->retry[--h->nretry]);
		pump(r, h);
	}
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	if (status != REDIS_OK)
		fprintf(stderr, "bench_scale: connect: %s\n", ac->errstr);
}

static redisAsyncContext *connect_one(struct run *r)
{
	redisAsyncContext *ac = redisAsyncConnect("127.0.0.1", r->port);
	if (!ac || ac->err) {
		if (ac)
			redisAsyncFree(ac);
		return NULL;
	}
	ac->data = r;
	redisLibeventAttach(ac, r->base);
	redisAsyncSetConnectCallback(ac, on_connect);
	return ac;
}

/* Opens connections 200 at a time (a listen backlog is finite). */
static void on_start_tick(evutil_socket_t fd, short what, void *arg)
{
	struct run *r = arg;
	for (int k = 0; k < 200 && r->opened < r->nh; k++) {
		struct holder *h = &r->h[r->opened++];
		h->ac = connect_one(r);
		if (h->ac)
			pump(r, h);
		else
			r->errors++;
	}
	if (r->opened >= r->nh)
		event_del(r->start_ev);
}

static void cycle_next(struct run *r, struct cycler *c);

static void on_cycle_release(redisAsyncContext *ac, void *reply, void *priv)
{
	struct run *r = ac->data;
	struct cycler *c = priv;
	if (!reply)
		return;
	r->cycles++;
	c->n++;
	cycle_next(r, c);
}

static void on_cycle_acquire(redisAsyncContext *ac, void *reply, void *priv)
{
	struct run *r = ac->data;
	struct cycler *c = priv;
	redisReply *rep = reply;
	if (!rep)
		return;
	if (rep->type == REDIS_REPLY_INTEGER) {
		redisAsyncCommand(ac, on_cycle_release, c, "LOCK.RELEASE %s", c->name);
		return;
	}
	r->cycle_tryagain++;
	struct timeval tv = {0, 10000}; /* refused or held: again in 10 ms */
	evtimer_add(c->timer, &tv);
}

static void cycle_next(struct run *r, struct cycler *c)
{
	if (!r->cycling || !c->ac)
		return;
	snprintf(c->name, sizeof c->name, "%s-cyc-%d-%u", r->prefix, c->idx, c->n % CYCLE_NAMES);
	redisAsyncCommand(c->ac, on_cycle_acquire, c, "LOCK.ACQUIRE %s %d", c->name, LEASE_MS);
}

static void on_cycle_timer(evutil_socket_t fd, short what, void *arg)
{
	struct cycler *c = arg;
	cycle_next(c->ac->data, c);
}

/* ---- one scenario ---- */

struct sample {
	long long inflight_max, queued_max, qwait_max_us;
	unsigned sd_inflight_max;
	long rss_max_kb;
};

static void run_loop_for(struct event_base *base, double seconds)
{
	struct timeval tv = {(time_t)seconds, (suseconds_t)((seconds - (time_t)seconds) * 1e6)};
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* What one scenario measured, for the side-by-side summary. */
struct result {
	char id[32];
	enum hb_mode hb;
	int leases;
	long long acquired, lost, held;
	uint64_t renews; /* renewal writes over the hold */
	double acquire_s, requests_s, cycles_s;
	double renew_wr_s, wr_s, rd_s, rd_items_s, cpu, us_req, rss_mb, b_lease;
	double late_p50, late_p99, late_max, bench, steal;
	double sweep_wait_s, sweep_it_s, sweep_period_s; /* replica mode */
};

/* The renewals' lateness in ms (p50, p99, max) over the hold: in lease
 * mode each renewal's, as the stand-in times it; in replica mode each
 * session BEAT's interval from the CREATE or BEAT before it, less a third
 * of the lease (every lease here is LEASE_MS long: a beat is due a third
 * of the shortest lease held after the send of the last one answered). */
static void lateness(struct standin *sd, enum hb_mode hb, double out[3])
{
	size_t n = 0;
	int64_t *late = hb == HB_LEASE ? standin_lateness(sd, &n) : standin_beat_intervals(sd, &n);
	for (size_t i = 0; late && hb == HB_REPLICA && i < n; i++)
		late[i] -= (int64_t)LEASE_MS / 3 * 1000;
	if (late)
		qsort(late, n, sizeof *late, cmp_i64);
	out[0] = n ? late[n / 2] / 1000.0 : 0;
	out[1] = n ? late[n * 99 / 100] / 1000.0 : 0;
	out[2] = n ? late[n - 1] / 1000.0 : 0;
	free(late);
}

/* Replica mode: runs the clients' loop until the gateway's verification
 * sweep began its first period (INFO leases sweep_periods), so that the
 * hold measures it at its pace; the seconds waited (at most
 * SWEEP_WAIT_MAX_S). */
static double wait_for_sweep(struct event_base *base, redisContext *info)
{
	double t0 = mono_s();
	while (info_field(info, "leases", "sweep_periods") < 1 && mono_s() - t0 < SWEEP_WAIT_MAX_S)
		run_loop_for(base, 1.0);
	return mono_s() - t0;
}

/* The clients take the scenario's leases (10 commands outstanding per
 * connection, TRYAGAIN tried again later), for at most its acquire time;
 * the seconds they took. */
static double acquire_phase(struct run *r, enum hb_mode hb)
{
	const struct scenario *sc = r->sc;
	r->nh = sc->conns;
	r->window = sc->leases / sc->conns < 10 ? sc->leases / sc->conns : 10;
	r->h = calloc((size_t)r->nh, sizeof *r->h);
	int per = sc->leases / sc->conns;
	for (int i = 0; i < r->nh; i++) {
		r->h[i].first = i * per;
		r->h[i].count = per;
		r->h[i].retry = calloc((size_t)per, sizeof(int));
	}
	r->start_ev = event_new(r->base, -1, EV_PERSIST, on_start_tick, r);
	r->retry_ev = event_new(r->base, -1, EV_PERSIST, on_retry_tick, r);
	struct timeval t10 = {0, 10000}, tretry = {0, 50000};
	event_add(r->start_ev, &t10);
	event_add(r->retry_ev, &tretry);
	double t0 = mono_s();
	int acquire_max_s = sc->acquire_s ? sc->acquire_s : ACQUIRE_MAX_S;
	if (hb == HB_REPLICA && sc->acquire_replica_s)
		acquire_max_s = sc->acquire_replica_s;
	if (getenv("SCALE_ACQUIRE_S"))
		acquire_max_s = atoi(getenv("SCALE_ACQUIRE_S"));
	while (r->acquired < sc->leases && mono_s() - t0 < acquire_max_s)
		run_loop_for(r->base, 0.2);
	return mono_s() - t0;
}

/* What the hold measured: the counters at its start and end, and the
 * samples taken each second within it. */
struct hold {
	double held_s, self_s;
	long long ticks0, ticks1, steal0, steal1, all0, all1;
	long long losses0, sweep0;
	struct sample smp;
	struct standin_stats st;
};

static void start_cyclers(struct run *r)
{
	r->cycling = true;
	for (int i = 0; i < CYCLERS; i++) {
		r->cyc[i].idx = i;
		r->cyc[i].ac = connect_one(r);
		r->cyc[i].timer = evtimer_new(r->base, on_cycle_timer, &r->cyc[i]);
		if (r->cyc[i].ac)
			cycle_next(r, &r->cyc[i]);
	}
}

/* The leases held hold_s (with the cycle load on top when the scenario
 * asks), the gateway's counters read at either end and sampled each
 * second. */
static void hold_phase(struct run *r, redisContext *info, pid_t gw, struct standin *sd,
		       double hold_s, struct hold *h)
{
	h->losses0 = info_field(info, "leases", "losses");
	h->sweep0 = info_field(info, "leases", "sweep_items");
	proc_cpu_ticks(gw, &h->ticks0);
	machine_ticks(&h->steal0, &h->all0);
	double self0 = self_cpu_s();
	standin_reset(sd);
	standin_record(sd, true);
	if (r->sc->cycle)
		start_cyclers(r);
	double h0 = mono_s();
	while (mono_s() - h0 < hold_s) {
		run_loop_for(r->base, 1.0);
		long long v = info_field(info, "dynamodb", "in_flight");
		if (v > h->smp.inflight_max)
			h->smp.inflight_max = v;
		if ((v = info_field(info, "dynamodb", "queued")) > h->smp.queued_max)
			h->smp.queued_max = v;
		long kb = proc_status_kb(gw, "VmRSS");
		if (kb > h->smp.rss_max_kb)
			h->smp.rss_max_kb = kb;
	}
	h->held_s = mono_s() - h0;
	proc_cpu_ticks(gw, &h->ticks1);
	machine_ticks(&h->steal1, &h->all1);
	h->self_s = self_cpu_s() - self0;
	r->cycling = false;
	standin_record(sd, false);
	standin_stats(sd, &h->st);
	h->smp.qwait_max_us = info_field(info, "dynamodb", "queue_wait_us_max");
}

/* The hold's figures as a result (the gateway's INFO read once more). */
static void make_result(const struct run *r, enum hb_mode hb, redisContext *info,
			struct standin *sd, const struct hold *h, long rss_idle_kb,
			struct result *res)
{
	double held_s = h->held_s;
	long long sweep1 = info_field(info, "leases", "sweep_items");
	long long sweep_period_ms = info_field(info, "leases", "sweep_last_period_ms");
	double late[3];
	lateness(sd, hb, late);
	double gw_s = (double)(h->ticks1 - h->ticks0) / (double)sysconf(_SC_CLK_TCK);
	/* renewal writes: per-lease renewals, or the session's beats */
	uint64_t renew = hb == HB_LEASE ? h->st.renewals_timed : h->st.beats;
	*res = (struct result){
		.hb = hb,
		.leases = r->sc->leases,
		.acquired = r->acquired,
		.lost = info_field(info, "leases", "losses") - h->losses0,
		.held = info_field(info, "leases", "leases_held"),
		.renews = renew,
		.requests_s = h->st.requests / held_s,
		.cycles_s = r->cycles / held_s,
		.renew_wr_s = (double)renew / held_s,
		.wr_s = (double)h->st.writes / held_s,
		.rd_s = (double)h->st.reads / held_s,
		.rd_items_s = (double)h->st.read_items / held_s,
		.cpu = gw_s / held_s * 100,
		.us_req = h->st.requests ? gw_s * 1e6 / (double)h->st.requests : 0,
		.rss_mb = h->smp.rss_max_kb / 1024.0,
		.b_lease = r->acquired && rss_idle_kb >= 0 ? (h->smp.rss_max_kb - rss_idle_kb) *
								     1024.0 / (double)r->acquired
							   : 0,
		.late_p50 = late[0],
		.late_p99 = late[1],
		.late_max = late[2],
		.bench = h->self_s / held_s * 100,
		.steal = h->all1 > h->all0 ? 100.0 * (double)(h->steal1 - h->steal0) /
						     (double)(h->all1 - h->all0)
					   : 0,
		.sweep_it_s = sweep1 >= 0 ? (double)(sweep1 - h->sweep0) / held_s : 0,
		.sweep_period_s = sweep_period_ms > 0 ? sweep_period_ms / 1000.0 : 0};
}

/* The scenario's row of the first table. */
static void print_row(const struct run *r, const struct result *res, const struct hold *h)
{
	const struct scenario *sc = r->sc;
	printf("%-16s %7d %6d %4.0f %8.1f %9lld %5lld %7lld %8.1f %8.1f %8.1f %8.0f %8.0f %6.1f "
	       "%6.1f %7.1f %6lld/%-5lld %8.1f %8llu %6.1f %6.1f %8.1f %8.1f %8.1f %8.0f %7.0f\n",
	       res->id, sc->leases, sc->conns, sc->lat_ms, res->acquire_s, r->tryagain, res->lost,
	       res->held, res->late_p50, res->late_p99, res->late_max, res->requests_s,
	       res->cycles_s, res->cpu, res->us_req, res->rss_mb, h->smp.inflight_max,
	       h->smp.queued_max, h->smp.qwait_max_us / 1000.0, (unsigned long long)res->renews,
	       res->bench, res->steal, res->renew_wr_s, res->wr_s, res->rd_s, res->rd_items_s,
	       res->b_lease);
	if (res->sweep_wait_s > 0)
		printf("%-16s   (the hold began %.1f s after the leases were taken, when the sweep "
		       "began its first period)\n",
		       "", res->sweep_wait_s);
	if (r->errors || r->acquired < sc->leases)
		printf("%-16s   (%lld of %d leases taken, %lld other errors)\n", "", r->acquired,
		       sc->leases, r->errors);
	fflush(stdout);
}

/* Clients, gateway and stand-in gone. */
static void teardown(struct run *r, redisContext *info, pid_t gw, struct standin_thread *sd)
{
	for (int i = 0; i < CYCLERS; i++) {
		if (r->cyc[i].timer)
			event_free(r->cyc[i].timer);
		if (r->cyc[i].ac)
			redisAsyncFree(r->cyc[i].ac);
	}
	for (int i = 0; i < r->nh; i++) {
		if (r->h[i].ac)
			redisAsyncFree(r->h[i].ac);
		r->h[i].ac = NULL;
		free(r->h[i].retry);
	}
	if (r->start_ev)
		event_free(r->start_ev);
	if (r->retry_ev)
		event_free(r->retry_ev);
	free(r->h);
	if (info)
		redisFree(info);
	gp_stop(gw);
	event_base_free(r->base);
	standin_thread_stop(sd);
}

/* One scenario in one mode: a fresh stand-in and gateway, the leases
 * taken (acquire_phase), the sweep's first period waited for in replica
 * mode, the hold (hold_phase), its row printed; res the figures. */
static bool run_scenario(const char *bin, const struct scenario *sc, enum hb_mode hb, double hold_s,
			 const char *log, struct result *res)
{
	struct standin_thread sd;
	if (!sd_start(&sd, 0, sc->lat_ms)) {
		printf("%-16s the stand-in did not start\n", sc->id);
		return false;
	}
	struct run r = {.sc = sc, .base = event_base_new(), .port = gp_free_port()};
	char id[32];
	snprintf(id, sizeof id, "%s%s", sc->id, hb == HB_REPLICA ? "-replica" : "");
	snprintf(r.prefix, sizeof r.prefix, "s%ld-%s", (long)getpid(), id);
	unlink(log); /* one scenario's log at a time */
	pid_t gw = start_gateway(bin, sd.url, r.port, log, hb, "bench-a");
	redisContext *info = gw > 0 ? redisConnect("127.0.0.1", r.port) : NULL;
	if (gw <= 0 || !info || info->err) {
		printf("%-16s the gateway did not start (log: %s)\n", id, log);
		teardown(&r, info, gw, &sd);
		return false;
	}
	/* the store opens from the loop: wait until DynamoDB answered */
	for (int i = 0; i < 100 && info_field(info, "dynamodb", "requests_total") < 1; i++)
		usleep(50000);
	long rss_idle_kb = proc_status_kb(gw, "VmRSS");
	double acquire_s = acquire_phase(&r, hb);
	double sweep_wait_s = hb == HB_REPLICA ? wait_for_sweep(r.base, info) : 0;
	struct hold h = {0};
	hold_phase(&r, info, gw, sd.sd, hold_s, &h);
	make_result(&r, hb, info, sd.sd, &h, rss_idle_kb, res);
	res->acquire_s = acquire_s;
	res->sweep_wait_s = sweep_wait_s;
	snprintf(res->id, sizeof res->id, "%s", id);
	print_row(&r, res, &h);
	teardown(&r, info, gw, &sd);
	return true;
}

static int standin_alone(int port, double ms)
{
	struct standin_thread sd;
	if (!sd_start(&sd, port, ms)) {
		fprintf(stderr, "bench_scale: the stand-in did not start on port %d\n", port);
		return 1;
	}
	printf("DynamoDB stand-in on %s, latency %.1f ms typical; stats every 10 s\n", sd.url, ms);
	fflush(stdout);
	for (;;) {
		sleep(10);
		struct standin_stats st;
		standin_stats(sd.sd, &st);
		printf("requests %llu throttled %llu refused %llu in_flight %u (max %u) "
		       "connections %u\n",
		       (unsigned long long)st.requests, (unsigned long long)st.throttled,
		       (unsigned long long)st.refused, st.in_flight, st.in_flight_max,
		       st.connections);
		fflush(stdout);
	}
}

/* "NAME" runs scenario NAME with --heartbeat lease, "NAME-replica" with
 * --heartbeat replica. NULL when there is no such scenario. */
static const struct scenario *find_scenario(const char *arg, enum hb_mode *hb)
{
	size_t n = strlen(arg), suf = strlen("-replica");
	*hb = n > suf && strcmp(arg + n - suf, "-replica") == 0 ? HB_REPLICA : HB_LEASE;
	if (*hb == HB_REPLICA)
		n -= suf;
	for (size_t i = 0; i < NSCEN; i++)
		if (strlen(scenarios[i].id) == n && strncmp(arg, scenarios[i].id, n) == 0)
			return &scenarios[i];
	return NULL;
}

/* ---- a crashed replica's leases taken over ---- */

#define TAKEOVER_CONNS	 10000 /* waiting connections of the second gateway */
#define TAKEOVER_WATCH_S 15    /* they wait that long before the kill */
#define TAKEOVER_MAX_S	 900   /* the most the takeover may take */

/* One waiting connection of gateway B: it waits (LOCK.ACQUIRE ... WAIT)
 * for its names one after another, as a connection waits for one lock at a
 * time. */
struct waiter {
	redisAsyncContext *ac;
	int first, count, next; /* its names; the one it waits for */
	double retry_at_s;	/* answered an error: again then (0: not) */
	int backoff_ms;		/* after an error: RETRY_MS doubling to 4 s */
};

struct takeover {
	struct run *r; /* A's holders: the names, the prefix, the loop */
	struct waiter *w;
	int nw, opened;
	double kill_s;	  /* monotonic time of the kill, 0 before */
	double *taken_at; /* seconds after the kill, one per takeover */
	long long taken, before_kill, timeouts, errors, errors_after;
	char first_error[128]; /* the first error answered */
	struct event *tick;
};

static void waiter_send(struct takeover *t, struct waiter *w);

static void on_waited(redisAsyncContext *ac, void *reply, void *priv)
{
	struct takeover *t = priv;
	struct waiter *w = ac->data;
	redisReply *rep = reply;
	if (!rep)
		return; /* freed */
	if (rep->type == REDIS_REPLY_INTEGER) {
		if (t->kill_s == 0)
			t->before_kill++; /* must not happen: A holds them all */
		else
			t->taken_at[t->taken++] = mono_s() - t->kill_s;
		w->backoff_ms = 0;
		w->next++;
		waiter_send(t, w);
	} else if (rep->type == REDIS_REPLY_NIL) {
		t->timeouts++;
		waiter_send(t, w);
	} else {
		if (t->errors++ == 0 && rep->type == REDIS_REPLY_ERROR)
			snprintf(t->first_error, sizeof t->first_error, "%s", rep->str);
		if (t->kill_s != 0)
			t->errors_after++;
		/* as a client should: back off, with jitter, doubling */
		w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : RETRY_MS;
		if (w->backoff_ms > 4000)
			w->backoff_ms = 4000;
		w->retry_at_s = mono_s() + w->backoff_ms * (0.5 + drand48()) / 1000;
	}
}

static void waiter_send(struct takeover *t, struct waiter *w)
{
	if (!w->ac || w->next >= w->count)
		return;
	char n[96];
	snprintf(n, sizeof n, "%s-%d", t->r->prefix, w->first + w->next);
	redisAsyncCommand(w->ac, on_waited, t, "LOCK.ACQUIRE %s %d WAIT %d", n, LEASE_MS,
			  TAKEOVER_MAX_S * 1000);
}

/* Opens B's waiting connections 200 at a time; sends errors' retries. */
static void on_takeover_tick(evutil_socket_t fd, short what, void *arg)
{
	struct takeover *t = arg;
	for (int k = 0; k < 200 && t->opened < t->nw; k++) {
		struct waiter *w = &t->w[t->opened++];
		if ((w->ac = connect_one(t->r)) == NULL) {
			t->errors++;
			continue;
		}
		w->ac->data = w;
		waiter_send(t, w);
	}
	double now = mono_s();
	for (int i = 0; i < t->opened; i++)
		if (t->w[i].retry_at_s != 0 && t->w[i].retry_at_s <= now) {
			t->w[i].retry_at_s = 0;
			waiter_send(t, &t->w[i]);
		}
}

/* A's connections die with it: hiredis frees their contexts. */
static void on_holder_gone(const redisAsyncContext *ac, int status)
{
	struct run *r = ac->data;
	for (int i = 0; i < r->nh; i++)
		if (r->h[i].ac == ac)
			r->h[i].ac = NULL;
}

/* Seconds after the kill by which a share q of the n takeovers was done. */
static double taken_by(const double *at, long long n, double q)
{
	long long i = (long long)(q * (double)n + 0.5) - 1;
	return n ? at[i < 0 ? 0 : i >= n ? n - 1 : i] : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Waits until gateway A's session beat reaches the stand-in (A's only
 * writes while it holds and nothing else runs), then kills A at once:
 * its leases end on its clock a lease after that beat's send. The
 * monotonic time of that beat's arrival; 0 when none came in 15 s. */
static double kill_after_beat(struct run *r, struct standin *sd, pid_t *a)
{
	struct standin_stats st;
	standin_stats(sd, &st);
	uint64_t beats0 = st.beats;
	double until = mono_s() + 15, beat_s = 0;
	while (mono_s() < until && beat_s == 0) {
		run_loop_for(r->base, 0.005);
		standin_stats(sd, &st);
		if (st.beats > beats0)
			beat_s = mono_s();
	}
	kill(*a, SIGKILL);
	waitpid(*a, NULL, 0);
	*a = -1; /* reaped: never signalled again */
	return beat_s;
}

/* Prints the takeover's figures: when, and what it cost. */
static void takeover_report(const char *id, struct takeover *t, long long n,
			    const struct standin_stats *st, double took_s, double beat_to_kill_s,
			    long long held_b)
{
	qsort(t->taken_at, (size_t)t->taken, sizeof *t->taken_at, cmp_double);
	printf("%-16s %lld leases of a killed replica: %lld taken over by the second in %.1f s "
	       "(%lld timed out, %lld errors, %lld of them after the kill, %lld granted before the "
	       "kill; B holds %lld)\n",
	       id, n, t->taken, took_s, t->timeouts, t->errors, t->errors_after, t->before_kill,
	       held_b);
	if (t->errors)
		printf("%-16s   the first error: %s\n", "", t->first_error);
	printf("%-16s   A's last beat reached the stand-in %.3f s before the kill; takeovers "
	       "after the kill: first %.1f s, 10%% %.1f s, 50%% %.1f s, 90%% %.1f s, all %.1f s\n",
	       "", beat_to_kill_s, taken_by(t->taken_at, t->taken, 0),
	       taken_by(t->taken_at, t->taken, 0.1), taken_by(t->taken_at, t->taken, 0.5),
	       taken_by(t->taken_at, t->taken, 0.9), taken_by(t->taken_at, t->taken, 1.0));
	printf("%-16s   requests from the kill to the last takeover: %llu (%llu writes: %llu "
	       "UpdateItem, %llu TransactWriteItems; %llu reads: %llu BatchGetItem, %llu "
	       "GetItem; %llu items read), %.2f writes and %.2f reads a lease taken over\n",
	       "", (unsigned long long)st->requests, (unsigned long long)st->writes,
	       (unsigned long long)st->by_op[DDB_UPDATE_ITEM],
	       (unsigned long long)st->by_op[DDB_TRANSACT_WRITE_ITEMS],
	       (unsigned long long)st->reads, (unsigned long long)st->by_op[DDB_BATCH_GET_ITEM],
	       (unsigned long long)st->by_op[DDB_GET_ITEM], (unsigned long long)st->read_items,
	       t->taken ? (double)st->writes / (double)t->taken : 0,
	       t->taken ? (double)st->reads / (double)t->taken : 0);
	fflush(stdout);
}

/* A's holders take n leases (as a scenario's clients do), B's clients
 * wait for them, A is killed. */
static bool takeover_phase(struct takeover *t, const char *id, pid_t *a, redisContext *info_b,
			   struct standin *sd, long long n)
{
	struct run *r = t->r;
	int per = (int)(n / t->nw);
	for (int i = 0; i < t->nw; i++)
		t->w[i] = (struct waiter){.first = i * per, .count = per};
	t->tick = event_new(r->base, -1, EV_PERSIST, on_takeover_tick, t);
	struct timeval t10 = {0, 10000};
	event_add(t->tick, &t10);
	run_loop_for(r->base, TAKEOVER_WATCH_S);
	for (int i = 0; i < r->nh; i++)
		if (r->h[i].ac)
			redisAsyncSetDisconnectCallback(r->h[i].ac, on_holder_gone);
	standin_reset(sd);
	double beat_s = kill_after_beat(r, sd, a);
	t->kill_s = mono_s();
	double beat_to_kill = beat_s ? t->kill_s - beat_s : -1;
	while (t->taken < n && mono_s() - t->kill_s < TAKEOVER_MAX_S)
		run_loop_for(r->base, 0.2);
	double took = mono_s() - t->kill_s;
	struct standin_stats st;
	standin_stats(sd, &st);
	takeover_report(id, t, n, &st, took, beat_to_kill,
			info_field(info_b, "leases", "leases_held"));
	event_free(t->tick);
	return t->taken == n;
}

/* The takeover's waiting connections: SCALE_TAKEOVER_CONNS of them (at
 * most the scenario's leases), and a slot per lease for when it came. */
static void takeover_alloc(struct takeover *t, const struct scenario *sc)
{
	const char *wc = getenv("SCALE_TAKEOVER_CONNS");
	t->nw = wc ? atoi(wc) : TAKEOVER_CONNS;
	if (t->nw < 1 || t->nw > sc->leases)
		t->nw = sc->leases < TAKEOVER_CONNS ? sc->leases : TAKEOVER_CONNS;
	t->w = calloc((size_t)t->nw, sizeof *t->w);
	t->taken_at = calloc((size_t)sc->leases, sizeof *t->taken_at);
}

static void takeover_free(struct takeover *t)
{
	for (int i = 0; i < t->nw; i++)
		if (t->w[i].ac)
			redisAsyncFree(t->w[i].ac);
	free(t->w);
	free(t->taken_at);
}

/* takeover-SIZE: gateway A (replica mode) takes the scenario's leases as
 * its clients would (acquire_phase); B's connections wait for them; A is
 * killed (takeover_phase). */
static bool run_takeover(const char *bin, const char *size, const char *log)
{
	char id[32];
	snprintf(id, sizeof id, "takeover-%s", size);
	enum hb_mode hb;
	const struct scenario *sc = find_scenario(size, &hb);
	if (!sc || hb != HB_LEASE) {
		printf("bench_scale: no scenario %s to take over (bench_scale list)\n", size);
		return false;
	}
	struct standin_thread sd;
	if (!sd_start(&sd, 0, sc->lat_ms))
		return false;
	struct run r = {.sc = sc, .base = event_base_new(), .port = gp_free_port()};
	snprintf(r.prefix, sizeof r.prefix, "s%ld-%s", (long)getpid(), id);
	char log_b[PATH_MAX + 40];
	snprintf(log_b, sizeof log_b, "%s.b", log);
	unlink(log);
	unlink(log_b);
	pid_t a = start_gateway(bin, sd.url, r.port, log, HB_REPLICA, "bench-a");
	int port_b = gp_free_port();
	pid_t b = a > 0 ? start_gateway(bin, sd.url, port_b, log_b, HB_REPLICA, "bench-b") : -1;
	redisContext *info_a = a > 0 ? redisConnect("127.0.0.1", r.port) : NULL;
	redisContext *info_b = b > 0 ? redisConnect("127.0.0.1", port_b) : NULL;
	bool ok = info_a && !info_a->err && info_b && !info_b->err;
	for (int i = 0; ok && i < 100 && info_field(info_a, "dynamodb", "requests_total") < 1; i++)
		usleep(50000);
	if (ok) {
		double acquire_s = acquire_phase(&r, HB_REPLICA);
		printf("%-16s gateway A (--heartbeat replica) took %lld of %d leases in %.1f s\n",
		       id, r.acquired, sc->leases, acquire_s);
	} else {
		printf("%-16s the gateways did not start (logs: %s, %s)\n", id, log, log_b);
	}
	fflush(stdout);
	struct takeover t = {.r = &r};
	takeover_alloc(&t, sc);
	r.port = port_b; /* B's clients connect to B: connect_one uses r.port */
	ok = ok && r.acquired == sc->leases &&
	     takeover_phase(&t, id, &a, info_b, sd.sd, (long long)(sc->leases / t.nw) * t.nw);
	takeover_free(&t);
	if (info_b)
		redisFree(info_b);
	gp_stop(b);
	teardown(&r, info_a, a, &sd); /* a: -1 once killed, nothing to stop */
	return ok;
}

/* ---- which scenarios, and the summary ---- */

/* The list (issue 31), run when none is named: each in both modes,
 * side by side, and a crashed replica's leases taken over. */
static const char *const default_list[] = {"100k", "100k-replica", "1m", "1m-replica",
					   "takeover-100k"};
#define NDEFAULT (sizeof default_list / sizeof default_list[0])

/* The figures the issue asks for, one line a scenario run. */
static void print_summary(const struct result *res, size_t n)
{
	printf("\nside by side (over the hold; renew wr/s: renewals in lease mode, session "
	       "beats in replica mode;\nlate: a renewal past a third of its lease after the "
	       "write before it, or a beat's interval less a third of the lease):\n");
	printf("%-16s %-7s %8s %8s %5s %10s %9s %9s %11s %6s %8s %8s %22s %6s %6s %10s %8s\n",
	       "scenario", "mode", "leases", "taken", "lost", "renew wr/s", "all wr/s", "rd/s",
	       "rd items/s", "cpu%", "rss_MB", "B/lease", "late p50/p99/max ms", "bench%", "steal%",
	       "sweep it/s", "period s");
	for (size_t i = 0; i < n; i++) {
		const struct result *x = &res[i];
		char late[40];
		snprintf(late, sizeof late, "%.1f/%.1f/%.1f", x->late_p50, x->late_p99,
			 x->late_max);
		printf("%-16s %-7s %8d %8lld %5lld %10.1f %9.1f %9.1f %11.1f %6.2f %8.1f %8.0f "
		       "%22s "
		       "%6.1f %6.1f %10.1f %8.1f\n",
		       x->id, hb_names[x->hb], x->leases, x->acquired, x->lost, x->renew_wr_s,
		       x->wr_s, x->rd_s, x->rd_items_s, x->cpu, x->rss_mb, x->b_lease, late,
		       x->bench, x->steal, x->sweep_it_s, x->sweep_period_s);
	}
}

static void print_header(double hold_s, const char *log, unsigned long long files)
{
	printf("bench_scale: leases of %d ms held %.0f s against the DynamoDB stand-in (latency "
	       "uniform 0.6-1.4x, 1%% tail to 40x);\nopen files: %llu; gateway log %s; replica "
	       "mode's sweep: %s\n",
	       LEASE_MS, hold_s, files, log,
	       getenv("SCALE_SWEEP") && *getenv("SCALE_SWEEP") ? getenv("SCALE_SWEEP")
							       : "the gateway's default");
	printf("%-16s %7s %6s %4s %8s %9s %5s %7s %8s %8s %8s %8s %8s %6s %6s %7s %12s %8s %8s "
	       "%6s %6s %8s %8s %8s %8s %7s\n",
	       "scenario", "leases", "conns", "ms", "acq_s", "tryagain", "lost", "held", "late_p50",
	       "late_p99", "late_max", "req/s", "cycles/s", "cpu%", "us/req", "rss_MB",
	       "inflight/q", "qwait_ms", "renewals", "bench%", "steal%", "renew/s", "wr/s", "rd/s",
	       "rd_it/s", "B/lease");
}

static void print_legend(void)
{
	printf("late_*: ms after schedule (replica mode: a session beat's interval less a "
	       "third of the lease);\ncpu%%: of one core, the gateway over the hold; "
	       "us/req: the gateway's CPU per DynamoDB request; rss: its largest;\n"
	       "inflight/q: most DynamoDB requests in flight / queued (sampled each s);\n"
	       "qwait: longest queue wait; renewals: per-lease renewals (lease mode) or session "
	       "CREATEs and BEATs (replica mode) applied over the hold, renew/s the same a "
	       "second;\nbench%%: this process (stand-in and clients), of one "
	       "core;\nsteal%%: the machine's CPU time the hypervisor gave to others over the "
	       "hold;\nwr/s, rd/s: the stand-in's writes and reads a second over the hold, "
	       "rd_it/s the items they read; B/lease: the gateway's\nlargest RSS less its RSS "
	       "before acquiring, per lease taken\n");
}

/* Runs one named scenario (NAME, NAME-replica or takeover-N), adding its
 * figures to res. False when it is unknown or could not run. */
static bool run_named(const char *bin, const char *name, double hold_s, const char *log,
		      struct result *res, size_t *nres)
{
	enum hb_mode hb;
	const struct scenario *sc = find_scenario(name, &hb);
	if (strncmp(name, "takeover-", 9) == 0)
		return run_takeover(bin, name + 9, log);
	if (!sc) {
		printf("bench_scale: no scenario %s (bench_scale list)\n", name);
		return false;
	}
	return run_scenario(bin, sc, hb, hold_s, log, &res[(*nres)++]);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < NSCEN; i++)
			printf("%-16s %7d leases %6d connections %4.0f ms%s%s\n", scenarios[i].id,
			       scenarios[i].leases, scenarios[i].conns, scenarios[i].lat_ms,
			       scenarios[i].cycle ? " + lock cycles" : "",
			       scenarios[i].named ? " (only when named)" : "");
		printf("each NAME-replica: the same with --heartbeat replica\n"
		       "takeover-N (N: 10k, 100k...): a replica-mode gateway holds N leases, is "
		       "killed (SIGKILL),\n  a second one's waiting clients take them over\n"
		       "all: every scenario not marked 'only when named', in both modes\n"
		       "default: %s %s %s %s %s\n",
		       default_list[0], default_list[1], default_list[2], default_list[3],
		       default_list[4]);
		return 0;
	}
	if (argc > 3 && strcmp(argv[1], "standin") == 0)
		return standin_alone(atoi(argv[2]), atof(argv[3]));
	/* every connection is a file: as many as allowed */
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	char self[PATH_MAX], bin[PATH_MAX + 16], log[PATH_MAX + 32];
	snprintf(self, sizeof self, "%s", argv[0]);
	const char *dir = dirname(self);
	snprintf(bin, sizeof bin, "%s/../leasegate", dir);
	snprintf(log, sizeof log, "%s/scale-gateway.log", dir);
	if (access(bin, X_OK) != 0) {
		printf("bench_scale: no leasegate binary at %s (make all)\n", bin);
		return 0;
	}
	const char *hs = getenv("SCALE_HOLD_S");
	double hold_s = hs ? atof(hs) : 65;
	setenv("AWS_ACCESS_KEY_ID", "AKIDSCALEBENCH", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "scale-bench-secret", 1);
	unsetenv("AWS_PROFILE");
	print_header(hold_s, log, (unsigned long long)rl.rlim_cur);
	/* the names to run, in order */
	const char *names[2 * NSCEN + 64];
	size_t nn = 0;
	if (argc < 2)
		for (size_t i = 0; i < NDEFAULT; i++)
			names[nn++] = default_list[i];
	for (int a = 1; a < argc && nn + 2 * NSCEN < sizeof names / sizeof names[0]; a++) {
		if (strcmp(argv[a], "all") != 0) {
			names[nn++] = argv[a];
			continue;
		}
		static char pairs[NSCEN][40];
		for (size_t i = 0; i < NSCEN; i++)
			if (!scenarios[i].named) {
				snprintf(pairs[i], sizeof pairs[i], "%s-replica", scenarios[i].id);
				names[nn++] = scenarios[i].id;
				names[nn++] = pairs[i];
			}
	}
	struct result res[sizeof names / sizeof names[0]];
	size_t nres = 0;
	int rc = 0;
	for (size_t i = 0; i < nn; i++)
		if (!run_named(bin, names[i], hold_s, log, res, &nres))
			rc = 1;
	print_legend();
	print_summary(res, nres);
	return rc;
}
