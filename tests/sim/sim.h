/*
 * sim: the deterministic simulator of the lease core (make simulate).
 *
 * Several replicas, each a locktable on a fake clock of its own running at
 * its own rate, share one simulated DynamoDB: the embedded store applying
 * requests atomically, behind a network and an SDK retry loop that the
 * simulator drives (sim_net.c): delays with long tails, answers lost after
 * the write was applied, duplicated deliveries, throttling, 500s, attempts
 * abandoned by a timeout and applied after their retry, a table deleted.
 * Replicas pause for longer than a lease, crash and restart. Clients on
 * each replica (sim_client.c) acquire (try and wait), renew, release,
 * campaign for leadership, write fenced and hand leases over to another
 * replica's clients (sim_adopt.c). Each lock is, for a seed, a
 * reader-writer lock or a semaphore of n (core/lt_shared.h): on it,
 * clients take reader holds (or semaphore holds) as well as exclusive
 * ones, through the same network (--exclusive: none of that, the world of
 * the seeds found before shared holders, draw for draw; nor partitions,
 * which the other seeds have: a replica, running on, cut off from the
 * table for up to two leases). sim_check.c checks the rules after every
 * step.
 *
 * One seed drives everything (one PRNG, no wall clock, no sockets, no
 * threads), so a seed replays exactly. Time: "true" time in microseconds
 * is the simulator's; each replica's monotonic clock is a function of it
 * (rate, offset, pauses). Not part of libleasegate.a.
 */
#ifndef LG_SIM_H
#define LG_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/election.h"
#include "core/locktable.h"
#include "core/lt_shared.h"
#include "core/store/store_memory.h"

#define SIM_REPLICAS_MAX 5
#define SIM_CLIENTS_MAX	 6 /* per replica */
#define SIM_LOCKS_MAX	 3
#define SIM_NAME_MAX	 32
#define SIM_HIST_MAX	 64 /* trace lines kept for a failing seed's report */
#define SIM_LIMIT_MAX	 3  /* a semaphore's n at most */

/* ---- the PRNG (splitmix64): the only source of chance ---- */
uint64_t sim_rand(void);
/* uniform in [lo, hi] */
int64_t sim_range(int64_t lo, int64_t hi);
/* true with probability ppm / 1e6 */
bool sim_chance(uint32_t ppm);

/* ---- what a seed draws: the shape of its world ---- */
struct sim_faults {
	uint32_t throttle_ppm, err500_before_ppm, err500_after_ppm, lost_answer_ppm, dup_ppm,
		tail_ppm;
	int64_t delay_min_us, delay_max_us, tail_max_us;
	int pauses, crashes;
	int partitions; /* a replica cut off from the table for a while (not --exclusive) */
	bool table_delete;
	/* --heartbeat replica|mixed: the faults aimed at the session
	 * heartbeat. beat_ppm: each fault drawn for every request is drawn
	 * again at this rate for a session's (CREATE, BEAT, KILL, READ), and
	 * its delays may run to two leases; session_deletes: a session item
	 * deleted by another tool (store_memory_session_delete);
	 * session_kills: a waiter outside the replicas (a tool, sim.c)
	 * watches a session and marks it dead by the rules once its rvn
	 * stood still for its maxLeaseMs (a replica only slow, paused or cut
	 * off) */
	uint32_t beat_ppm;
	int session_deletes, session_kills;
	int beat_blackouts; /* a replica's session requests throttled, all,
			       for up to two leases (its lock writes pass) */
};

/* How the replicas of a seed hold their exclusive leases (--heartbeat):
 * each renewing its own (today's world, draw for draw), all in session
 * mode (lt_options.heartbeat = LT_HEARTBEAT_REPLICA), or each drawn one
 * or the other (the rollout's mixed state, on one table). */
enum sim_heartbeat { SIM_HB_LEASE, SIM_HB_REPLICA, SIM_HB_MIXED };

/* How a hold holds its lock; a lock's kind, for a seed: SIM_EXCL locks
 * have exclusive holders only, SIM_SHARED ones readers too, SIM_LIMIT ones
 * semaphore holders too. */
enum sim_mode { SIM_EXCL, SIM_SHARED, SIM_LIMIT };

struct sim_config {
	uint64_t seed;
	bool exclusive;			   /* --exclusive: every lock SIM_EXCL */
	enum sim_mode kind[SIM_LOCKS_MAX]; /* of each lock */
	unsigned cap[SIM_LOCKS_MAX];	   /* SIM_LIMIT: n; SIM_SHARED: readers' cap */
	uint32_t shared_ppm;		   /* an acquire on such a lock is not exclusive */
	bool shared_liveness;		   /* --shared-liveness (sim_check.c) */
	int replicas, clients, locks;
	int64_t lease_ms;
	int64_t run_ms;	 /* faulty phase, then a calm phase, then the end */
	int64_t calm_ms; /* calm phase: no faults; liveness is checked */
	int32_t rate_ppm[SIM_REPLICAS_MAX];
	enum sim_heartbeat heartbeat;
	bool session[SIM_REPLICAS_MAX]; /* each replica's mode: in session mode */
	bool liveness;			/* the calm phase's fairness bound checked */
	uint64_t scale;			/* --scale N: sim_scale.c's case, N locks */
	int takers;			/* --takers K: its takers */
	int64_t rate_tol_ppm;		/* the largest rate difference drawn */
	struct sim_faults f;
};

/* ---- a replica: one process with its locktable and clock ---- */
struct sim_client;

struct replica {
	int idx, incarnation;
	bool dead;
	struct clock *clock;
	struct store *store; /* sim_net's store of this incarnation */
	struct obs obs;
	struct locktable *lt;
	int64_t base_true_us, base_local_us; /* local = base + (true - base) x rate */
	int32_t rate_ppm;
	int64_t paused_until_us;    /* 0: running */
	int64_t cut_until_us;	    /* its requests and answers lost until then */
	int64_t beats_cut_until_us; /* its session requests throttled until then */
	struct sim_client *clients[SIM_CLIENTS_MAX];
	int nclients;
	char label[16];
};

/* ---- the world ---- */
struct sim {
	struct sim_config cfg;
	int64_t now_us;
	uint64_t steps;
	bool calm, ending; /* calm: no faults; ending: clients stop */
	bool trace;	   /* print every line (SEED=s replay) */
	struct clock *ddb_clock;
	struct store *mem; /* the table: the embedded store */
	int table_incarnation;
	bool table_gone;
	struct replica rep[SIM_REPLICAS_MAX];
	char names[SIM_LOCKS_MAX + 1][SIM_NAME_MAX]; /* locks, then the election's */
	int nnames;
	uint64_t violations;
	char first_violation[256];
	char hist[SIM_HIST_MAX][200];
	int nhist;
	struct sim_check *check;
};

extern struct sim *SIM;

/* What the faults aimed at sessions did, over every seed run (printed
 * with the summary in the session modes). */
struct sim_tally {
	uint64_t session_requests;  /* CREATE, BEAT, KILL, READ sent by replicas */
	uint64_t session_faults;    /* faults drawn by beat_ppm on them */
	uint64_t kills, deletes;    /* sessions marked dead (by anyone), deleted */
	uint64_t lost_session;	    /* leases lost with LT_SESSION */
	uint64_t lost_expired;	    /* leases lost with LT_EXPIRED */
	uint64_t takeovers;	    /* exclusive grants that took a lock over */
	uint64_t swept, sweep_lost; /* lock items the sweeps read, leases they ended */
};
extern struct sim_tally TALLY;

/* A line of the trace, prefixed with the true time; printed with trace on,
 * else kept in the ring buffer shown with a violation. */
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A broken rule: counted, logged, and the run of the seed ends. */
void sim_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Local monotonic ms of r at true time t (us). */
int64_t sim_local_ms(const struct replica *r, int64_t t_us);

/* ---- events on true time (sim.c's heap) ---- */
typedef void (*sim_ev_fn)(void *arg);
void sim_at(int64_t at_us, sim_ev_fn fn, void *arg);

/* The first true time (us, not before now) at which r's clock shows
 * local_ms. */
int64_t sim_true_us(const struct replica *r, int64_t local_ms);
/* r crashes now (its clients vanish, nothing is sent), and restarts
 * later with the same replica id (a new incarnation). */
void sim_replica_crash(struct replica *r);

/* ---- sim_scale.c: the scale case of --heartbeat replica ---- */
/* r0 takes n locks; takers (1..SIM_REPLICAS_MAX - 1) wait for them all;
 * r0 crashes; they take them over (see sim_scale.c). */
void sim_scale_start(uint64_t n, int takers);
/* Prints the case's line and frees it. */
void sim_scale_report(void);

/* ---- sim_net.c: the simulated DynamoDB as seen by one replica ---- */
struct store *sim_net_store(struct replica *r);
/* Requests of r still in flight on name (its own view: not yet answered). */
int sim_net_inflight(const struct replica *r, const char *name);
/* Requests anywhere still to be delivered or answered. */
uint64_t sim_net_pending(void);
/* Was a RELEASE by owner applied by the table (any attempt)? */
bool sim_net_release_applied(const char *owner);
/* The table's incarnation when it last applied an acquire by owner, or
 * -1: what a granted token belongs to. */
int sim_net_acquired_in(const char *owner);
/* The table is deleted (every request answers ResourceNotFound) / back,
 * empty. */
void sim_net_table_delete(void);
void sim_net_table_restore(void);
/* The end of s's replica (freed next): every shared call the lease core
 * still waits on is answered TRANSIENT, so that what waits on it (a
 * cancelled grant, a release, a removal) is freed. */
void sim_net_abandon(struct store *s);
/* Frees what is left at the end. */
void sim_net_free(void);

/* ---- sim_client.c: the clients of a replica ---- */
struct sim_client *sim_client_new(struct replica *r, int idx, bool leader);
/* Start (or restart) the client's loop. */
void sim_client_start(struct sim_client *c);
/* The end: cancel waits, release leases, stop elections. */
void sim_client_stop(struct sim_client *c);
/* A crash: the client disappears without a word (nothing is sent). */
void sim_client_crash(struct sim_client *c);
void sim_client_free(struct sim_client *c);

/* What the checker reads of a client. */
struct sim_belief {
	bool holds; /* believes it holds name within its lease */
	enum sim_mode mode;
	unsigned slot; /* SIM_SHARED, SIM_LIMIT: its slot */
	const char *name, *owner;
	int64_t token, granted_us, lease_ms;
	int64_t end_ms;	 /* lease_end_ms, on the replica's clock */
	int incarnation; /* of the table when granted */
};
/* What c believes now; notes the end its lease shows, which it counts on
 * once that lease is lost unheard (sim_client.c, unheard_end). */
void sim_client_belief(struct sim_client *c, struct sim_belief *b);
/* Waiting since (true us), or -1; its start in the calm phase or not. */
int64_t sim_client_waiting_since(const struct sim_client *c);
bool sim_client_is_leader(const struct sim_client *c);
/* "r1/c2" and the lock it holds or waits for, for messages. */
const char *sim_client_label(const struct sim_client *c);
const char *sim_client_name(const struct sim_client *c);

/* ---- sim_adopt.c: hand-overs of leases, as a draining replica's ---- */
/* r leaves l (held, with a secret of hash) orphaned for another replica's
 * client to adopt; false when it cannot (nothing done). */
bool sim_adopt_leave(struct replica *r, struct lease *l, const char *hash);
/* c, idle on r, adopts a hand-over of another replica, if there is one:
 * true when an adopt is sent (sim_client_adopted answers). */
bool sim_adopt_try(struct sim_client *c, struct replica *r, const char *new_hash);
/* r crashed: its orphans' leases went with it (the items stay adoptable). */
void sim_adopt_crash(struct replica *r);
/* The end: the orphans not adopted are released. */
void sim_adopt_end(void);
/* Forgets every hand-over (a new seed, or the end: after the replicas'
 * locktables are freed, which drops the adopts in flight). */
void sim_adopt_reset(void);
/* The answer of c's adopt: the lease (its token that of the hand-over),
 * or NULL. */
void sim_adopt_done(struct sim_client *c, struct lease *lease, int64_t token);

/* ---- sim_check.c: the rules ---- */
void sim_check_init(void);
void sim_check_free(void);
/* After every step: exclusion, liveness, lease ends. */
void sim_check_step(void);
/* A client was granted a lease it believes held. */
void sim_check_granted(const struct sim_client *c, const char *name, int64_t token, int inc);
/* A client was granted a shared hold (mode SIM_SHARED or SIM_LIMIT) of
 * slot. */
void sim_check_sh_granted(const char *name, enum sim_mode mode, unsigned slot, int64_t token,
			  int inc);
/* An adopt of name answered the lease of token (the hand-over's: want). */
void sim_check_adopted(const char *name, int64_t token, int64_t want);
/* The table applied an acquire on name with fence token. */
void sim_check_applied_acquire(const char *name, int64_t fence);
/* The table accepted a fenced write of (name, owner, token). */
void sim_check_fenced_write(const char *name, const char *owner, int64_t token);
/* A release was acknowledged (value 1) or answered ended (0); slot: of a
 * shared hold, or -1 (the lock item). */
void sim_check_release_answer(struct replica *r, const char *name, const char *owner, int slot,
			      int value);
/* The kind of the lock name (SIM_EXCL for the election's), and its cap. */
enum sim_mode sim_lock_kind(const char *name, unsigned *cap);
/* The end: nothing leaked. */
void sim_check_end(void);

#endif
