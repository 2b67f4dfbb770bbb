/*
 * admin: the admin HTTP port: GET /healthz, /readyz and /metrics, for
 * Kubernetes probes and Prometheus. A small HTTP/1.1 front-end on the
 * connection layer (gateway/conn), with a registry of its own: its
 * connections count against --admin-maxclients, never against the
 * protocol ports' --maxclients, so the admin port cannot starve them (nor
 * they it), and it keeps answering while the protocol ports drain.
 *
 *   /healthz  200 "ok" while the process runs its event loop (liveness).
 *   /readyz   200 "ready" once the store is open and until shutdown
 *             starts; 503 with the reason otherwise, so that a replica
 *             whose table is unreachable, or that is draining after
 *             SIGTERM, gets no new clients (readiness).
 *   /metrics  the Prometheus text of metrics.h.
 *
 * Only GET and HEAD (501 otherwise), other paths 404; a request head of
 * up to 8 KiB (431 past it), no body, 10 s to send it (then the connection
 * is closed); one request per connection (answered with Connection:
 * close). At --admin-maxclients a newcomer takes the slot of the oldest
 * connection that has sent no whole request yet (answered 408 and closed),
 * so that idle connections never keep a probe out; only when every slot
 * holds an answered connection still sending is a newcomer answered 503
 * (one over the cap may be in while it does this).
 * It listens from the start, before the store is open, so that probes can
 * tell "alive" from "ready".
 *
 * Not here: what the metrics are (metrics.c), what "ready" means (main.c
 * says, through admin_ops).
 */
#ifndef LG_ADMIN_H
#define LG_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "protocols/buf.h"

struct cfg;
struct event_base;

struct admin_ops {
	/* True when ready; else *why says why not (a static string). */
	bool (*ready)(void *arg, const char **why);
	/* Appends the metrics text to out. */
	void (*metrics)(void *arg, struct buf *out);
	void *arg;
};

struct admin;

/* Listens on cfg's bind:admin-port (> 0), taking at most
 * cfg->admin_maxclients connections at once (see above for a newcomer). NULL with a message in err
 * when it cannot (the address taken, out of memory). When the port is
 * the default one (--admin-port not given) and another process holds it,
 * a free port is taken instead, with a warning naming it (admin_port()).
 * ops is copied; cfg must outlive the admin port. */
struct admin *admin_new(struct event_base *base, const struct cfg *cfg, const struct admin_ops *ops,
			char *err, size_t errlen) __attribute__((warn_unused_result));

/* The port the admin HTTP server listens on. */
int admin_port(const struct admin *ad);

void admin_free(struct admin *a);

#endif
