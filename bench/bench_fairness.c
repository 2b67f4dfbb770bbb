/*
 * bench_fairness: cross-replica contention on one lock, on moto, for 1 and
 * 2 (or more) gateways in one run (Fair across replicas).
 *
 *   build/bench/bench_fairness [clients] [seconds] [lease-ms] [hold-ms] [max-gateways]
 *     defaults: 8 clients, 10 s, 3000 ms, 5 ms, 2 gateways
 *
 * Starts a moto_server of its own that applies one request at a time (its
 * stock server is threaded and its conditional writes are not atomic),
 * with signature checking on and an IAM user, as tests/run-integration.sh
 * does (tests/moto_serial.py, tests/moto_setup.py), then for 1..max
 * gateways on one new table runs the load of tests/support/fairloop.c:
 * forked hiredis clients, split over the gateways (client i on gateway
 * i % n), loop LOCK.ACQUIRE name lease WAIT 60000 / hold / LOCK.RELEASE
 * for the given seconds. Prints one row per gateway count: handovers/s,
 * store requests per handover (INFO leases of every gateway,
 * store_requests_*), min/max acquisitions per client, p50/p99/max wait.
 *
 * Needs python3 with moto and boto3; the leasegate binary is found beside
 * build/bench, tests/ in a directory above it.
 */
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/fairloop.h"
#include "tests/support/gwproc.h"

#define GW_MAX 4

/* The tests/ directory in dir or a directory above it (build/bench ->
 * build -> the source tree; build/san/bench one more). */
static bool find_tests(const char *dir, char *out, size_t size)
{
	char at[PATH_MAX], probe[PATH_MAX + 32];
	if (realpath(dir, at) == NULL)
		return false;
	for (int up = 0; up < 5; up++) {
		snprintf(probe, sizeof(probe), "%s/tests/moto_serial.py", at);
		if (access(probe, R_OK) == 0) {
			snprintf(out, size, "%s/tests", at);
			return true;
		}
		if (strcmp(at, "/") == 0)
			break;
		const char *parent = dirname(at);
		memmove(at, parent, strlen(parent) + 1);
	}
	return false;
}

static pid_t start_gateway(const char *bin, const char *table, int port)
{
	char p[16];
	snprintf(p, sizeof(p), "%d", port);
	const char *argv[] = {
		bin, "--port",	p,     "--pg-port",	 "0",		"--admin-port",
		"0", "--table", table, "--create-table", "--log-level", "warn",
		NULL};
	pid_t pid = gp_spawn(argv, NULL, true, 0);
	if (pid > 0 && gp_wait_ready(pid, port) != 0) {
		gp_stop(pid);
		return -1;
	}
	return pid;
}

static bool row(const struct fl_config *c)
{
	struct fl_result r;
	bool ok = fl_run(c, &r);
	if (r.total == 0) {
		printf("%8d %8d   no acquisition\n", c->ngw, c->clients);
		return false;
	}
	printf("%8d %8d %12.1f %13.3f %9lld..%-6lld %8lld %8lld %8lld %8d %6d%s\n", c->ngw,
	       c->clients, r.handovers_per_s, r.requests_per_handover, r.min_acq, r.max_acq, r.p50,
	       r.p99, r.max_wait, r.timeouts, r.errors, ok ? "" : "  (a client failed)");
	fflush(stdout);
	return ok;
}

int main(int argc, char **argv)
{
	int ports[GW_MAX];
	struct fl_config c = {
		.ports = ports,
		.clients = argc > 1 ? atoi(argv[1]) : 8,
		.seconds = argc > 2 ? atoi(argv[2]) : 10,
		.lease_ms = argc > 3 ? atoi(argv[3]) : 3000,
		.hold_ms = argc > 4 ? atoi(argv[4]) : 5,
		.wait_ms = 60000,
		.name = "bench",
	};
	int max_gw = argc > 5 ? atoi(argv[5]) : 2;
	if (c.clients < 1 || c.clients > FL_CLIENTS_MAX || max_gw < 1 || max_gw > GW_MAX) {
		fprintf(stderr,
			"usage: %s [clients 1..%d] [seconds] [lease-ms] [hold-ms] "
			"[max-gateways 1..%d]\n",
			argv[0], FL_CLIENTS_MAX, GW_MAX);
		return 2;
	}
	char self[PATH_MAX], bin[PATH_MAX + 16], tests[PATH_MAX + 16];
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(bin, sizeof(bin), "%s/../leasegate", dirname(self));
	if (access(bin, X_OK) != 0) {
		printf("bench_fairness: no leasegate binary at %s (make all)\n", bin);
		return 0;
	}
	if (!find_tests(self, tests, sizeof(tests))) {
		printf("bench_fairness: no tests/moto_serial.py above %s\n", self);
		return 0;
	}
	pid_t moto = gp_serial_moto(tests, NULL);
	if (moto == 0) {
		printf("bench_fairness: skipped, python3 with moto and boto3 is needed\n");
		return 0;
	}
	printf("cross-replica contention on one lock, moto (one request at a time), lease %d ms, "
	       "hold %d ms, %d s per row;\nrequests: store requests of every gateway; wait: "
	       "LOCK.ACQUIRE ... WAIT to its token, ms\n",
	       c.lease_ms, c.hold_ms, c.seconds);
	printf("%8s %8s %12s %13s %17s %8s %8s %8s %8s %6s\n", "gateways", "clients", "handovers/s",
	       "req/handover", "acq/client", "p50", "p99", "max", "timeouts", "errors");
	int rc = 0;
	for (int ngw = 1; ngw <= max_gw; ngw++) {
		char table[64];
		pid_t gw[GW_MAX] = {0};
		snprintf(table, sizeof(table), "bench-fair-%ld-%d", (long)getpid(), ngw);
		c.ngw = ngw;
		bool up = true;
		for (int g = 0; g < ngw && up; g++) {
			ports[g] = gp_free_port();
			gw[g] = start_gateway(bin, table, ports[g]);
			up = gw[g] > 0;
		}
		if (!up)
			printf("%8d gateway(s) did not start\n", ngw);
		if (!up || !row(&c))
			rc = 1;
		for (int g = 0; g < ngw; g++)
			gp_stop(gw[g]);
	}
	gp_stop(moto);
	return rc;
}
