/*
 * lt_fixture: a fake clock, an embedded store and locktables over it, with
 * the events the core emitted recorded, for the unit tests of the core.
 * Several locktables on one store act as several processes.
 */
#ifndef LG_LT_FIXTURE_H
#define LG_LT_FIXTURE_H

#include "core/election.h"
#include "core/locktable.h"
#include "core/lt_testing.h"
#include "core/store/store_memory.h"

#define FX_EVENTS_MAX 256

struct fx_event {
	enum obs_event_id id;
	int64_t at_ms, token, wait_ms, retries;
	char lock[64], holder[64], prev_holder[64], reason[32], error_type[48];
	/* 50, 51 (a replica session's start and end) */
	char hb_session[96], replica[64], detail[128];
	int64_t leases;
};

/* The result of an acquire, filled by fx_acquire_cb. */
struct fx_acq {
	bool done;
	struct lease *lease;
	bool error;
	struct lt_error err;
	int64_t at_ms;
};

struct fx {
	struct clock *clock;
	struct store *store;
	struct obs obs;
	struct locktable *lt[4];
	struct fx_event ev[FX_EVENTS_MAX];
	int nev;
};

/* Builds the fixture with n locktables (holder labels "p0".."p3" when
 * labels is true). */
struct fx *fx_new(int n, bool labels);
void fx_free(struct fx *f);

/* Runs what is due now (store completions, zero-delay timers). */
void fx_run(struct fx *f);
/* Advances the clock by ms, running everything on the way. */
void fx_advance(struct fx *f, int64_t ms);
int64_t fx_now(struct fx *f);

/* Number of events with id recorded so far. */
int fx_events(const struct fx *f, enum obs_event_id id);
/* The last event with id, or NULL. */
const struct fx_event *fx_last(const struct fx *f, enum obs_event_id id);

/* Store requests of op so far. */
uint64_t fx_req(const struct fx *f, enum store_op op);

void fx_acquire_cb(void *arg, struct lease *lease, const struct lt_error *err);
/* Starts an acquire on locktable i; the result lands in *out. */
struct lt_wait *fx_acquire(struct fx *f, int i, const char *name, int64_t lease_ms, bool wait,
			   int64_t timeout_ms, struct fx_acq *out);

/* Acquires name on locktable i at once (a try) and returns the lease;
 * fails the test when it is not granted. */
struct lease *fx_take(struct fx *f, int i, const char *name, int64_t lease_ms);

/* Simulates another process holding name (returns its token). */
int64_t fx_simulate_holder(struct fx *f, const char *name, int64_t lease_ms, const char *holder);
/* Reads the state of name through locktable 0. */
struct lt_state fx_state(struct fx *f, const char *name);

#endif
