/*
 * testclock: the clock of `leasegate --test-mode`, and the checks that keep
 * test mode off anything real.
 *
 * In test mode the lease core (lock table, leases, elections, the embedded
 * store, the lease sessions' wait timeouts) runs on a manual clock
 * (clock_manual_new): its monotonic and wall time move only when a client
 * says so, and a timer due at the current time (a store's completion, a
 * deferred answer) still runs in the loop's turn. Everything that talks to
 * the outside stays on real time: the DynamoDB store's HTTP (deadlines,
 * retries, signing), credentials, traces, and the connection layer's
 * timeouts (--timeout, --auth-timeout, closing a peer that does not read).
 *
 * tclock_advance moves the manual clock: it runs every timer that falls
 * due on the way, one at a time, each at its own due time (ties in the
 * order armed), and before the next one runs it lets the store answer
 * every request in flight. On the embedded store those answers are timers
 * due now, run inline, so an advance ends before tclock_advance returns.
 * On DynamoDB (an emulator) a request is answered by the loop in real
 * time: the advance then waits, looking again every millisecond of real
 * time while a request is in flight, and finishes later through its
 * callback. Advances are run one after another in the order asked; an
 * advance whose asker went away (tclock_cancel) still moves the clock.
 *
 * Not here: the commands (gateway/redis/testcmds.c, gateway/pg/pg_fns.c),
 * the test helpers' rules (core/lt_testing.h, gateway/lease/lsess_test.c).
 */
#ifndef LG_TESTCLOCK_H
#define LG_TESTCLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct clock;
struct store;
struct tclock;
struct tclock_adv;

/* The longest single advance: a year of fake time. */
#define TCLOCK_MAX_ADVANCE_MS (366LL * 86400000)

/* The driver of fake (a manual clock) whose waits for store's requests in
 * flight run on io (a real clock). None is owned; all must outlive it.
 * NULL on out-of-memory. */
struct tclock *tclock_new(struct clock *fake, struct clock *io, const struct store *store)
	__attribute__((warn_unused_result));
/* Frees tc; advances not finished are dropped without their callback. */
void tclock_free(struct tclock *tc);

typedef void (*tclock_done)(void *arg, int64_t now_ms);

enum tclock_start {
	TCLOCK_DONE,	/* finished now: *now_ms set, no callback */
	TCLOCK_PENDING, /* done(arg, now_ms) runs once, later, from the loop */
	TCLOCK_NOMEM,
};

/* Moves the fake clock ms (0..TCLOCK_MAX_ADVANCE_MS) ahead of where it is
 * when this advance starts (after those asked before it), as the file's
 * header says. PENDING: *handle takes it back (tclock_cancel) until done
 * runs. */
enum tclock_start tclock_advance(struct tclock *tc, int64_t ms, tclock_done done, void *arg,
				 struct tclock_adv **handle, int64_t *now_ms)
	__attribute__((warn_unused_result));

/* The advance's callback will not run; the clock still moves. */
void tclock_cancel(struct tclock_adv *a);

/* The fake clock's monotonic and wall time, ms. */
int64_t tclock_now_ms(const struct tclock *tc);
int64_t tclock_wall_ms(const struct tclock *tc);

/* Test mode's refusals, before anything listens or connects: false with
 * a message naming the option when bind (--bind) has an address that is
 * not loopback (127.0.0.0/8, ::1) — every port listens there: Redis,
 * TLS, PostgreSQL, admin — or when endpoint (the DynamoDB URL in use:
 * --endpoint, or the AWS conventions' default) is AWS's own
 * (amazonaws.com, amazonaws.com.cn, api.aws). endpoint NULL: the embedded
 * store. */
bool tclock_check_bind(const char *bind, char *err, size_t errlen)
	__attribute__((warn_unused_result));
bool tclock_check_endpoint(const char *endpoint, char *err, size_t errlen)
	__attribute__((warn_unused_result));

#endif
