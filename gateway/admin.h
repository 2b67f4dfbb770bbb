/*
 * admin: the admin HTTP port (libevent's evhttp): GET /healthz, /readyz
 * and /metrics, for Kubernetes probes and Prometheus.
 *
 *   /healthz  200 "ok" while the process runs its event loop (liveness).
 *   /readyz   200 "ready" once the store is open and until shutdown
 *             starts; 503 with the reason otherwise, so that a replica
 *             whose table is unreachable, or that is draining after
 *             SIGTERM, gets no new clients (readiness).
 *   /metrics  the Prometheus text of metrics.h.
 *
 * Only GET and HEAD (libevent answers 501 otherwise), other paths 404;
 * headers up to 8 KiB, no body, 10 s to send a request. Connections are
 * not counted (libevent 2.1's evhttp has no limit; the timeout closes idle
 * ones): keep the port inside the cluster. It listens from the start,
 * before the store is open, so that probes can tell "alive" from "ready".
 *
 * Not here: what the metrics are (metrics.c), what "ready" means (main.c
 * says, through admin_ops).
 */
#ifndef LG_ADMIN_H
#define LG_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "protocols/buf.h"

struct event_base;

struct admin_ops {
	/* True when ready; else *why says why not (a static string). */
	bool (*ready)(void *arg, const char **why);
	/* Appends the metrics text to out. */
	void (*metrics)(void *arg, struct buf *out);
	void *arg;
};

struct admin;

/* Listens on bind:port (port > 0). NULL with a message in err when it
 * cannot (the address taken, out of memory). ops is copied. */
struct admin *admin_new(struct event_base *base, const char *bind, int port,
			const struct admin_ops *ops, char *err, size_t errlen)
	__attribute__((warn_unused_result));

void admin_free(struct admin *a);

#endif
