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
 * scenario's leases of 30 s and keep their connections open; then the leases are held for at least
 * two lease periods (SCALE_HOLD_S, default 65 s), optionally with a lock-cycle load on top (50
 * connections looping LOCK.ACQUIRE / LOCK.RELEASE over 5,000 names), and the run prints: lost
 * leases lost while held (INFO leases, losses), and leases still held at the end out of those taken
 *   late       renewal lateness p50/p99/max: how long after a third of its
 *              lease past the write before it each renewal reached the
 *              stand-in (0 = on schedule)
 *   req/s      requests the stand-in answered per second while held
 *   wr/s, rd/s of them, writes (UpdateItem, DeleteItem, TransactWriteItems)
 *              and reads (GetItem, BatchGetItem, Scan, Query) per second,
 *              as the stand-in counts them (standin_stats)
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
 *   build/bench/bench_scale [scenario...]     (default: all up to 100k, ~10 min)
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
#include <time.h>
#include <unistd.h>

#include "tests/support/ddb_standin_thread.h"
#include "tests/support/gwproc.h"

#define LEASE_MS      30000
#define CYCLERS	      50
#define CYCLE_NAMES   100 /* per cycler */
#define RETRY_MS      100
#define ACQUIRE_MAX_S 90

struct scenario {
	const char *id;
	int leases, conns;
	double lat_ms;
	bool cycle;
	bool named; /* run only when named (past what a 2-core machine carries) */
};

/* "A few connections": 1,000 leases each, the default
 * --max-leases-per-session (a session finds its leases by a scan). */
static const struct scenario scenarios[] = {
	{"1k", 1000, 1, 5, false, false},
	{"10k", 10000, 10, 5, false, false},
	{"50k", 50000, 50, 5, false, false},
	{"75k", 75000, 75, 5, false, false},
	{"100k", 100000, 100, 5, false, false},
	{"100k-c10k", 100000, 10000, 5, false, false},
	{"100k-cycle", 100000, 100, 5, true, false},
	{"100k-10ms", 100000, 100, 10, false, false},
	{"100k-10ms-cycle", 100000, 100, 10, true, false},
	{"200k", 200000, 200, 5, false, true},
	{"300k", 300000, 300, 5, false, true},
	{"400k", 400000, 400, 5, false, true},
	{"1m", 1000000, 1000, 5, false, true},
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

static pid_t start_gateway(const char *bin, const char *url, int port, const char *log)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	const char *argv[] = {bin,     "--port",	  p,	       "--pg-port",
			      "0",     "--admin-port",	  "0",	       "--table",
			      "scale", "--region",	  "us-east-1", "--endpoint",
			      url,     "--partition-key", "pk",	       "--maxclients",
			      "10100", "--log-level",	  "error",     NULL};
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
	char name[64];
};

struct run {
	const struct scenario *sc;
	struct event_base *base;
	int port;
	char prefix[32];
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
	char n[64];
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

static bool run_scenario(const char *bin, const struct scenario *sc, double hold_s, const char *log)
{
	struct standin_thread sd;
	if (!sd_start(&sd, 0, sc->lat_ms)) {
		printf("%-16s the stand-in did not start\n", sc->id);
		return false;
	}
	struct run r = {.sc = sc, .base = event_base_new(), .port = gp_free_port()};
	snprintf(r.prefix, sizeof r.prefix, "s%ld-%s", (long)getpid(), sc->id);
	unlink(log); /* one scenario's log at a time */
	pid_t gw = start_gateway(bin, sd.url, r.port, log);
	redisContext *info = gw > 0 ? redisConnect("127.0.0.1", r.port) : NULL;
	if (gw <= 0 || !info || info->err) {
		printf("%-16s the gateway did not start (log: %s)\n", sc->id, log);
		gp_stop(gw);
		standin_thread_stop(&sd);
		return false;
	}
	/* the store opens from the loop: wait until DynamoDB answered */
	for (int i = 0; i < 100 && info_field(info, "dynamodb", "requests_total") < 1; i++)
		usleep(50000);

	long rss_idle_kb = proc_status_kb(gw, "VmRSS");

	/* acquire */
	r.nh = sc->conns;
	r.window = sc->leases / sc->conns < 10 ? sc->leases / sc->conns : 10;
	r.h = calloc((size_t)r.nh, sizeof *r.h);
	int per = sc->leases / sc->conns;
	for (int i = 0; i < r.nh; i++) {
		r.h[i].first = i * per;
		r.h[i].count = per;
		r.h[i].retry = calloc((size_t)per, sizeof(int));
	}
	r.start_ev = event_new(r.base, -1, EV_PERSIST, on_start_tick, &r);
	r.retry_ev = event_new(r.base, -1, EV_PERSIST, on_retry_tick, &r);
	struct timeval t10 = {0, 10000}, tretry = {0, 50000};
	event_add(r.start_ev, &t10);
	event_add(r.retry_ev, &tretry);
	double t0 = mono_s();
	while (r.acquired < sc->leases && mono_s() - t0 < ACQUIRE_MAX_S)
		run_loop_for(r.base, 0.2);
	double acquire_s = mono_s() - t0;

	/* hold */
	long long losses0 = info_field(info, "leases", "losses");
	long long ticks0 = 0, ticks1 = 0, steal0, steal1, all0, all1;
	proc_cpu_ticks(gw, &ticks0);
	machine_ticks(&steal0, &all0);
	double self0 = self_cpu_s();
	standin_reset(sd.sd);
	standin_record(sd.sd, true);
	if (sc->cycle) {
		r.cycling = true;
		for (int i = 0; i < CYCLERS; i++) {
			r.cyc[i].idx = i;
			r.cyc[i].ac = connect_one(&r);
			r.cyc[i].timer = evtimer_new(r.base, on_cycle_timer, &r.cyc[i]);
			if (r.cyc[i].ac)
				cycle_next(&r, &r.cyc[i]);
		}
	}
	struct sample smp = {0};
	double h0 = mono_s();
	while (mono_s() - h0 < hold_s) {
		run_loop_for(r.base, 1.0);
		long long v = info_field(info, "dynamodb", "in_flight");
		if (v > smp.inflight_max)
			smp.inflight_max = v;
		if ((v = info_field(info, "dynamodb", "queued")) > smp.queued_max)
			smp.queued_max = v;
		long kb = proc_status_kb(gw, "VmRSS");
		if (kb > smp.rss_max_kb)
			smp.rss_max_kb = kb;
	}
	double held_s = mono_s() - h0;
	proc_cpu_ticks(gw, &ticks1);
	machine_ticks(&steal1, &all1);
	double self_s = self_cpu_s() - self0;
	r.cycling = false;
	standin_record(sd.sd, false);
	struct standin_stats st;
	standin_stats(sd.sd, &st);
	smp.qwait_max_us = info_field(info, "dynamodb", "queue_wait_us_max");
	long long lost = info_field(info, "leases", "losses") - losses0;
	long long held = info_field(info, "leases", "leases_held");
	long long cycles = r.cycles;
	size_t n = 0;
	int64_t *late = standin_lateness(sd.sd, &n);
	if (late)
		qsort(late, n, sizeof *late, cmp_i64);
	double p50 = n ? late[n / 2] / 1000.0 : 0, p99 = n ? late[n * 99 / 100] / 1000.0 : 0;
	double lmax = n ? late[n - 1] / 1000.0 : 0;
	free(late);
	double gw_s = (double)(ticks1 - ticks0) / (double)sysconf(_SC_CLK_TCK);
	double cpu = gw_s / held_s * 100;
	double us_req = st.requests ? gw_s * 1e6 / (double)st.requests : 0;
	double steal = all1 > all0 ? 100.0 * (double)(steal1 - steal0) / (double)(all1 - all0) : 0;
	uint64_t writes = st.writes, reads = st.reads;
	double b_lease = r.acquired && rss_idle_kb >= 0
				 ? (smp.rss_max_kb - rss_idle_kb) * 1024.0 / (double)r.acquired
				 : 0;

	printf("%-16s %7d %6d %4.0f %8.1f %9lld %5lld %7lld %8.1f %8.1f %8.1f %8.0f %8.0f %6.1f "
	       "%6.1f %7.1f %6lld/%-5lld %8.1f %8llu %6.1f %6.1f %8.0f %6.0f %7.0f\n",
	       sc->id, sc->leases, sc->conns, sc->lat_ms, acquire_s, r.tryagain, lost, held, p50,
	       p99, lmax, st.requests / held_s, cycles / held_s, cpu, us_req,
	       smp.rss_max_kb / 1024.0, smp.inflight_max, smp.queued_max, smp.qwait_max_us / 1000.0,
	       (unsigned long long)st.renewals_timed, self_s / held_s * 100, steal, writes / held_s,
	       reads / held_s, b_lease);
	if (r.errors || r.acquired < sc->leases)
		printf("%-16s   (%lld of %d leases taken, %lld other errors)\n", "", r.acquired,
		       sc->leases, r.errors);
	fflush(stdout);

	/* teardown: clients, gateway, stand-in */
	for (int i = 0; i < CYCLERS; i++) {
		if (r.cyc[i].timer)
			event_free(r.cyc[i].timer);
		if (r.cyc[i].ac)
			redisAsyncFree(r.cyc[i].ac);
	}
	for (int i = 0; i < r.nh; i++) {
		if (r.h[i].ac)
			redisAsyncFree(r.h[i].ac);
		r.h[i].ac = NULL;
		free(r.h[i].retry);
	}
	event_free(r.start_ev);
	event_free(r.retry_ev);
	free(r.h);
	redisFree(info);
	gp_stop(gw);
	event_base_free(r.base);
	standin_thread_stop(&sd);
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

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < NSCEN; i++)
			printf("%-16s %7d leases %6d connections %4.0f ms%s%s\n", scenarios[i].id,
			       scenarios[i].leases, scenarios[i].conns, scenarios[i].lat_ms,
			       scenarios[i].cycle ? " + lock cycles" : "",
			       scenarios[i].named ? " (only when named)" : "");
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
	printf("bench_scale: leases of %d ms held %.0f s against the DynamoDB stand-in (latency "
	       "uniform 0.6-1.4x, 1%% tail to 40x);\nopen files: %llu; gateway log %s\n",
	       LEASE_MS, hold_s, (unsigned long long)rl.rlim_cur, log);
	printf("%-16s %7s %6s %4s %8s %9s %5s %7s %8s %8s %8s %8s %8s %6s %6s %7s %12s %8s %8s "
	       "%6s %6s %8s %6s %7s\n",
	       "scenario", "leases", "conns", "ms", "acq_s", "tryagain", "lost", "held", "late_p50",
	       "late_p99", "late_max", "req/s", "cycles/s", "cpu%", "us/req", "rss_MB",
	       "inflight/q", "qwait_ms", "renewals", "bench%", "steal%", "wr/s", "rd/s", "B/lease");
	int rc = 0;
	for (size_t i = 0; i < NSCEN; i++) {
		bool want = argc < 2 && !scenarios[i].named;
		for (int a = 1; a < argc; a++)
			want |= strcmp(argv[a], scenarios[i].id) == 0;
		if (want && !run_scenario(bin, &scenarios[i], hold_s, log))
			rc = 1;
	}
	printf("late_*: ms after schedule; cpu%%: of one core, the gateway over the hold;\n"
	       "us/req: the gateway's CPU per DynamoDB request; rss: its largest;\n"
	       "inflight/q: most DynamoDB requests in flight / queued (sampled each s);\n"
	       "qwait: longest queue wait; bench%%: this process (stand-in and clients), of one "
	       "core;\nsteal%%: the machine's CPU time the hypervisor gave to others over the "
	       "hold;\nwr/s, rd/s: the stand-in's writes and reads a second over the hold; "
	       "B/lease: the gateway's\nlargest RSS less its RSS before acquiring, per lease "
	       "taken\n");
	return rc;
}
