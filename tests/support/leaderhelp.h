/*
 * leaderhelp: what it_leader and it_leader_pair share — the timings of
 * their leases, the store a test runs on (its cmocka prestate), and
 * LEADER.WATCH read once or in a loop that records every leader it is
 * told of. Gateways themselves are tests/support/gw.h.
 */
#ifndef LG_LEADERHELP_H
#define LG_LEADERHELP_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

#include "tests/support/gw.h"

#define LEASE_MS 2000
#define POLL_MS	 (LEASE_MS / 3) /* a follower's poll interval */
#define SLACK_MS 1500		/* noise allowed on top of a rule's time */

/* A test's prestate: which store it runs on. */
struct ldh_param {
	bool moto;
};
extern const struct ldh_param ldh_embedded, ldh_moto;

/* The test's param; fails the test when it needs moto and LG_MOTO is not
 * set. */
const struct ldh_param *ldh_setup_param(void **state);

/* A leader as LEADER.WATCH answers it: RESP2 flat pairs or nil. */
struct leader {
	bool held;
	char holder[64];
	long long token, lease_ms;
};

/* LEADER.WATCH name, answered at once, into out (held false for nil). */
void ldh_watch_now(redisContext *c, const char *name, struct leader *out);

/* A LEADER.WATCH loop on its own connection: each answer is recorded and
 * the next watch sent with AFTER its token. */
struct watcher {
	redisContext *c;
	long long after;
	int n;
	struct leader seen[32];
	long long at[32]; /* when each answer arrived */
};

/* Connects to g, records the current leader of name, and sends the first
 * LEADER.WATCH AFTER. The caller frees w->c. */
void ldh_watcher_start(struct watcher *w, const struct gw *g, const char *name);

/* Records what the watcher is told within ms; true once it has seen a
 * leader with token `until` (0: pump for the whole ms). */
bool ldh_watcher_pump(struct watcher *w, const char *name, int ms, long long until);

/* The leaders the watcher saw, in order, must be exactly want[0..n). */
void ldh_watcher_check(const struct watcher *w, const long long *want, const char **holders, int n);

#endif
