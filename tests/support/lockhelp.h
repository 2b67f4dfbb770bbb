/*
 * lockhelp: what it_locks and it_locks_moto share — the store a test's
 * gateway runs on (embedded or a new moto table, chosen by the cmocka
 * group), and LOCK.ACQUIRE / LOCK.STATE checks over hiredis (RESP2).
 * Gateways themselves are tests/support/gw.h.
 */
#ifndef LG_LOCKHELP_H
#define LG_LOCKHELP_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

/* True while the moto group runs (set by lh_group_moto). */
extern bool lh_on_moto;

/* Group setups: the tests that follow run on the embedded store, or on
 * moto (which prints a warning when LG_MOTO is not set: every test fails). */
int lh_group_embedded(void **state);
int lh_group_moto(void **state);

/* The table of the next gateway: a new one on moto, none (embedded) else.
 * The name stays valid until the next call. */
const char *lh_mode_table(void);

/* LOCK.ACQUIRE returning the token (> 0), else fails. */
long long lh_acquire(redisContext *c, const char *name, int lease_ms);

/* Checks LOCK.STATE's RESP2 reply, flat pairs in their order; holder NULL
 * means nil, token 0 means any positive. Returns the token. */
long long lh_expect_state(redisContext *c, const char *name, long long held, const char *holder,
			  long long lease_ms, long long token, long long mine);

/* A field of INFO leases. */
long long lh_info_leases(redisContext *c, const char *field);
/* Waits (up to 5 s) until INFO leases shows field == want. */
void lh_await_info(redisContext *c, const char *field, long long want);
/* Waits (up to 5 s) until the gateway holds `leases` leases, with no wait,
 * release or store request in flight (one INFO snapshot). */
void lh_await_settled(redisContext *c, long long leases);

#endif
