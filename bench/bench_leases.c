/*
 * bench_leases: hold N leases (default 100,000) on the embedded store under
 * the real clock and libevent loop, and report the memory each lease costs
 * and the CPU time each renewal costs.
 *
 *   build/bench/bench_leases [leases] [lease-ms] [seconds]
 *
 * Memory is malloc's in-use bytes (mallinfo2) after the leases are held,
 * minus before, divided by N: it counts the lease, its lock, the store's
 * item and the timers, i.e. everything leasegate keeps per lease.
 */
#include <event2/event.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "core/locktable.h"
#include "core/store/store_memory.h"

static int acquired;

static void on_acquired(void *arg, struct lease *lease, const struct lt_error *err)
{
	struct lease **slot = arg;
	if (lease == NULL) {
		fprintf(stderr, "acquire failed: %s\n", err != NULL ? err->message : "held");
		exit(1);
	}
	*slot = lease;
	acquired++;
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void stop(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

static void run_for(struct event_base *base, double seconds)
{
	struct timeval tv = {.tv_sec = (time_t)seconds,
			     .tv_usec = (suseconds_t)((seconds - (time_t)seconds) * 1e6)};
	struct event *ev = evtimer_new(base, stop, base);
	evtimer_add(ev, &tv);
	event_base_dispatch(base);
	event_free(ev);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int64_t lease_ms = argc > 2 ? atoll(argv[2]) : 3000;
	double seconds = argc > 3 ? atof(argv[3]) : 6;
	struct event_base *base = event_base_new();
	struct clock *clock = clock_real_new(base);
	struct store *store = store_memory_new(clock, "bench");
	struct obs obs = {0};
	struct lt_options opts = {.holder_label = "bench-host"};
	struct locktable *t = lt_new(clock, store, &obs, &opts);
	struct lease **leases = calloc((size_t)n, sizeof(*leases));
	char name[64];

	size_t before = mallinfo2().uordblks;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "bench-lock-%d", i);
		struct lt_acquire_args a = {.name = name, .lease_ms = lease_ms};
		if (lt_acquire(t, &a, on_acquired, &leases[i]) == NULL)
			return 1;
	}
	while (acquired < n)
		event_base_loop(base, EVLOOP_ONCE);
	size_t after = mallinfo2().uordblks;

	uint64_t renew0 = store->requests[STORE_RENEW];
	double cpu0 = cpu_seconds();
	run_for(base, seconds);
	double cpu = cpu_seconds() - cpu0;
	uint64_t renewals = store->requests[STORE_RENEW] - renew0;
	uint64_t ok = obs_get(&obs.renewals, "ok");
	uint64_t lost = 0;
	for (unsigned i = 0; i < obs.losses.n; i++)
		lost += obs.losses.count[i];

	printf("leases held:          %d (lease %lld ms, %s)\n", n, (long long)lease_ms,
	       "embedded store, real clock");
	printf("memory per lease:     %.0f bytes (malloc in use, %zu bytes for %d)\n",
	       (double)(after - before) / n, after - before, n);
	printf("renewals:             %llu in %.1f s (%llu ok, %llu leases lost)\n",
	       (unsigned long long)renewals, seconds, (unsigned long long)ok,
	       (unsigned long long)lost);
	printf("CPU per renewal:      %.2f us (process CPU %.2f s)\n",
	       renewals ? cpu * 1e6 / (double)renewals : 0.0, cpu);

	for (int i = 0; i < n; i++)
		lease_release(leases[i]);
	while (store->in_flight > 0)
		event_base_loop(base, EVLOOP_ONCE);
	free(leases);
	lt_free(t);
	store_free(store);
	clock_free(clock);
	event_base_free(base);
	return lost == 0 ? 0 : 1;
}
