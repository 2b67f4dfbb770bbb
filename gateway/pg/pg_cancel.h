/*
 * pg_cancel: the gate CancelRequests pass before they are tried. A
 * CancelRequest carries no login, only a (backend pid, secret key) pair;
 * the pid is no secret (LOCK.LIST shows it), so the 32-bit key is all
 * that stands between anyone who reaches the port and other sessions'
 * statements. The gate counts the requests of each source address that
 * matched no session (a leaky bucket: PGC_BURST wrong keys at once, one
 * more every PGC_DRAIN_MS) and drops, without trying them, those of an
 * address over it, logging a line per address when it starts. The table
 * of addresses is bounded (PGC_HOSTS): past it, the address that has
 * drained most is forgotten.
 *
 * No I/O, no clock of its own: the caller passes now_ms (tests, a fake
 * one). Not here: matching a key to a session (pg_sess.c).
 */
#ifndef LG_PG_CANCEL_H
#define LG_PG_CANCEL_H

#include <stdbool.h>
#include <stdint.h>

#define PGC_HOSTS    256  /* addresses remembered */
#define PGC_BURST    10	  /* wrong keys an address may send at once */
#define PGC_DRAIN_MS 1000 /* then one more per this many ms */

struct pg_cancel_gate;

/* An empty gate; NULL on out of memory. Freed by pgc_free (NULL: fine). */
struct pg_cancel_gate *pgc_new(void) __attribute__((warn_unused_result));
void pgc_free(struct pg_cancel_gate *g);

/* True when a CancelRequest from host (an address, no port) may be tried
 * now; false: drop it (counted, and logged once as the address starts
 * being dropped). */
bool pgc_allow(struct pg_cancel_gate *g, const char *host, int64_t now_ms)
	__attribute__((warn_unused_result));

/* A CancelRequest from host that was tried matched no session. */
void pgc_failed(struct pg_cancel_gate *g, const char *host, int64_t now_ms);

/* CancelRequests dropped since the start. */
uint64_t pgc_dropped(const struct pg_cancel_gate *g);

#endif
