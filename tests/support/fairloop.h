/*
 * fairloop: clients in an acquire/release loop on one lock, spread over
 * gateways (Fair across replicas, tests/integration/it_fair_moto.c). Each
 * client is a forked process with a hiredis connection to its gateway
 * (client i to gateway i % ngw): LOCK.ACQUIRE name lease WAIT max (or
 * LEADER.CAMPAIGN), hold, LOCK.RELEASE (or LEADER.RESIGN), again, until
 * the run's time is up. The store requests of every gateway (INFO leases,
 * store_requests_*) are read before and after. Needs hiredis only (no
 * cmocka): bench/bench_fairness.c runs it too.
 */
#ifndef LG_FAIRLOOP_H
#define LG_FAIRLOOP_H

#include <stdbool.h>

#define FL_CLIENTS_MAX 64

struct fl_config {
	const int *ports; /* gateway Redis ports */
	int ngw;
	int clients;
	int seconds; /* how long clients start new acquires */
	int lease_ms;
	int hold_ms; /* how long a client holds the lock */
	int wait_ms; /* WAIT of each acquire (a nil reply is a timeout) */
	const char *name;
	bool campaign; /* LEADER.CAMPAIGN / LEADER.RESIGN instead of LOCK.* */
};

struct fl_result {
	int clients;
	long long acquisitions[FL_CLIENTS_MAX];
	long long client_max_wait[FL_CLIENTS_MAX];
	int timeouts, errors; /* nil replies; other failures */
	long long total;      /* acquisitions of all clients */
	long long elapsed_ms; /* from the start to the last client's end */
	long long requests;   /* store requests of all gateways in the run */
	long long announces;  /* of which STORE_ANNOUNCE */
	long long min_acq, max_acq;
	long long p50, p99, max_wait; /* waits for the lock, ms */
	double handovers_per_s, requests_per_handover;
};

/* Runs the loop; returns false when a client could not run (then r is
 * partial). */
bool fl_run(const struct fl_config *c, struct fl_result *r);

/* One line of figures, prefixed with what. */
void fl_print(const char *what, const struct fl_config *c, const struct fl_result *r);

/* A field of INFO leases of the gateway on port (-1 when missing). */
long long fl_info(int port, const char *field);

#endif
