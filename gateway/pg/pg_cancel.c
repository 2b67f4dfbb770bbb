/*
 * pg_cancel: the gate of CancelRequests (see pg_cancel.h): a fixed table
 * of source addresses, each with a leaky bucket of the wrong keys it sent.
 */
#include "gateway/pg/pg_cancel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/obs/log.h"

struct pgc_host {
	char host[64];	  /* "" : a free entry */
	int64_t level;	  /* wrong keys not yet drained, as of at_ms */
	int64_t at_ms;	  /* when level was last brought up to date */
	uint64_t dropped; /* requests dropped since the address went over */
};

struct pg_cancel_gate {
	struct pgc_host h[PGC_HOSTS];
	uint64_t dropped;
};

struct pg_cancel_gate *pgc_new(void)
{
	return calloc(1, sizeof(struct pg_cancel_gate));
}

void pgc_free(struct pg_cancel_gate *g)
{
	free(g);
}

uint64_t pgc_dropped(const struct pg_cancel_gate *g)
{
	return g->dropped;
}

/* Drains e's bucket up to now_ms (whole PGC_DRAIN_MS steps: the rest of
 * a step carries over). */
static void drain(struct pgc_host *e, int64_t now_ms)
{
	if (now_ms <= e->at_ms)
		return;
	int64_t steps = (now_ms - e->at_ms) / PGC_DRAIN_MS;
	if (steps >= e->level) {
		e->level = 0;
		e->at_ms = now_ms;
		return;
	}
	e->level -= steps;
	e->at_ms += steps * PGC_DRAIN_MS;
}

static struct pgc_host *find(struct pg_cancel_gate *g, const char *host, int64_t now_ms)
{
	for (size_t i = 0; i < PGC_HOSTS; i++)
		if (g->h[i].host[0] != '\0' && strcmp(g->h[i].host, host) == 0) {
			drain(&g->h[i], now_ms);
			return &g->h[i];
		}
	return NULL;
}

/* An entry for host: a free one, else the one with the fewest wrong keys
 * left (an address being dropped is the last to be forgotten). */
static struct pgc_host *take(struct pg_cancel_gate *g, const char *host, int64_t now_ms)
{
	struct pgc_host *best = NULL;
	for (size_t i = 0; i < PGC_HOSTS; i++) {
		struct pgc_host *e = &g->h[i];
		if (e->host[0] == '\0') {
			best = e;
			break;
		}
		drain(e, now_ms);
		if (best == NULL || e->level < best->level)
			best = e;
	}
	memset(best, 0, sizeof(*best));
	snprintf(best->host, sizeof(best->host), "%s", host);
	best->at_ms = now_ms;
	return best;
}

bool pgc_allow(struct pg_cancel_gate *g, const char *host, int64_t now_ms)
{
	struct pgc_host *e = find(g, host, now_ms);
	if (e == NULL || e->level < PGC_BURST) {
		if (e != NULL && e->dropped > 0) {
			log_msg(LOG_LVL_WARN,
				"pg: cancel requests from %s tried again (%llu dropped while it "
				"sent wrong keys)",
				host, (unsigned long long)e->dropped);
			e->dropped = 0;
		}
		return true;
	}
	if (e->dropped++ == 0)
		log_msg(LOG_LVL_WARN,
			"pg: cancel requests from %s dropped: %d with keys that match no "
			"session; one more is tried every %d ms",
			host, PGC_BURST, PGC_DRAIN_MS);
	g->dropped++;
	return false;
}

void pgc_failed(struct pg_cancel_gate *g, const char *host, int64_t now_ms)
{
	struct pgc_host *e = find(g, host, now_ms);
	if (e == NULL)
		e = take(g, host, now_ms);
	if (e->level == 0)
		e->at_ms = now_ms; /* drains from the first wrong key on */
	e->level++;
}
