/*
 * lt_session: the replica's session in `--heartbeat replica`
 * (docs/design/replica-heartbeat.md, "The session item" and "The holder's
 * clock") — one session item per process incarnation, renewed by one
 * heartbeat for every lease it holds, and the holder's clock that says
 * when each of those leases ends. Not here: the lock items' writes, the
 * revocations' store part, a waiter's watch, the wiring into lease.c and
 * locktable.c (a lease embeds a struct lt_member).
 *
 * The session's life is enum lt_session_state, changed by one function
 * with a table of legal moves (lt_session.c):
 *
 *   NEW --> CREATING --> LIVE --> ENDED
 *              |_________________^
 *
 * lt_session_start sends the CREATE (key SESSION#<replica>#<incarnation>,
 * the incarnation 128 random bits drawn by lt_session_new: a restarted
 * process never revives its predecessor); its answer makes it LIVE, then
 * BEATs (store_session.h: never conditioned on the rvn) keep it. A BEAT
 * REFUSED (the item marked dead by a waiter, or gone) or a table gone
 * ends it: every member is lost at once (LT_SESSION, LT_TABLE_NOT_FOUND)
 * and lt_session_view's .end_reason says why. The log hears of both:
 * event 50 (OBS_SESSION_STARTED) when the CREATE is answered, 51
 * (OBS_SESSION_ENDED) when it ends, with why and how many leases it lost.
 *
 * Members. Each lease held in this mode is a member: its lease length and
 * the send time of the write that won it (an acquire is its own proof of
 * life: its end starts at send + lease).
 *
 * The holder's clock. A member's lease ends, on the monotonic clock, at
 * send(H) + lease, where H is the last heartbeat whose answer arrived
 * before the member's current end (at first its own send + lease). An
 * answer at or after that end extends nothing: the member is lost
 * (LT_EXPIRED) and stays lost. A TRANSIENT (or FATAL) answer extends
 * nothing: the beat is tried again after LT_RENEW_RETRY_FIRST_MS,
 * doubling, capped at a sixth of the shortest lease held (as a lease's
 * own renewal is); a retry that finds every member ended sends nothing.
 * The CREATE's answer counts as a heartbeat's.
 *
 * Schedule. A BEAT is sent a third of the shortest lease held after the
 * send of the last beat answered (or, for an idle session, after the send
 * of the member that woke it), and at once when a member joins whose lease
 * is shorter than every lease held. An idle session (no members) has
 * nothing to prove alive (the next member's acquire proves itself until
 * its first beat), so it sends only one BEAT every LT_SESSION_IDLE_BEAT_MS,
 * for its item to outlive its TTL (days beyond maxLeaseMs): idle for
 * longer, its next member's first beat would find the item gone, and end
 * it. A beat writes maxLeaseMs = the longest lease held now or by a
 * member that left less than its lease ago (a waiter's watch covers a
 * lease that just left).
 *
 * revSeq. Every answer carries the session's revSeq. While it is above the
 * value the owner acknowledged (lt_session_revocations_done), no answer
 * extends anything; on_revseq tells the owner each time it rises. Once
 * acknowledged, a beat is sent at once (unless one is in flight) and its
 * answer extends as usual.
 *
 * Scale: no per-member timer and no per-member work per heartbeat.
 * Members are grouped by lease length (a hash of groups by lease_ms); a
 * group is a FIFO of its members by send time, oldest first, and holds
 * ext_ms, the end granted by the last heartbeat answered in time
 * (send + the group's lease). A member's end is max(send + lease, ext):
 * every heartbeat sent after a member's send grants it a later end than
 * its own, and members present when an answer comes share it (as does a
 * member that joins later: that answer came before its end). So an
 * answer first ends, in each group, the members at the head whose end has
 * come (each at most once in its life), then raises ext: O(groups). One
 * expiry timer per group, at its head's end. Joining appends (an acquire
 * answered out of send order is placed by a walk of at most
 * LT_SESSION_ORDER_STEPS members back, else at the head with the head's
 * send time: an earlier end, never a later one); leaving unlinks: both
 * O(1). A member is struct lt_member, 32 bytes; a group about 160.
 *
 * Every callback comes from the event loop, never from inside the call
 * that made it due; a callback may join or leave members (not free the
 * session).
 */
#ifndef LG_LT_SESSION_H
#define LG_LT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/clock.h"
#include "core/locktable.h"
#include "core/obs.h"
#include "core/store/store_session.h"

#define LT_SESSION_ORDER_STEPS 16 /* members walked back to place a join */
/* An idle session's beat: half its item's TTL (STORE_SESSION_TTL_DAYS). */
#define LT_SESSION_IDLE_BEAT_MS ((int64_t)STORE_SESSION_TTL_DAYS * 86400000 / 2)

struct lt_session;
struct lt_sgroup;

/* One lease held in this mode; embedded in its owner (a lease), which
 * finds itself from it (container_of). Owned by the owner; linked by
 * lt_member_join until it leaves or is lost. */
struct lt_member {
	struct lt_member *prev, *next; /* in its group, by send_ms */
	struct lt_sgroup *group;       /* NULL: not a member */
	int64_t send_ms;	       /* its own proof of life (monotonic) */
};
_Static_assert(sizeof(struct lt_member) <= 64, "a member costs at most 64 bytes");

enum lt_session_state {
	LT_SESSION_NEW,	     /* made, no request sent */
	LT_SESSION_CREATING, /* its CREATE in flight or to be tried again */
	LT_SESSION_LIVE,     /* created: beats while it has members */
	LT_SESSION_ENDED,    /* refused, or its table gone: members lost */
	LT_SESSION_STATE_COUNT
};

/* m was lost for why (LT_EXPIRED, LT_SESSION, LT_TABLE_NOT_FOUND); it is
 * no longer a member when this runs. */
typedef void (*lt_member_lost_cb)(void *arg, struct lt_member *m, enum lt_loss why);

struct lt_session_options {
	const char *replica;	   /* 1..STORE_SESSION_REPLICA_MAX printable, no '#'; copied */
	const char *holder;	   /* label for operators, or NULL; copied */
	const char *addr;	   /* address for operators, or NULL; copied */
	bool ttl;		   /* write the TTL attribute (store_session_ttl) */
	lt_member_lost_cb on_lost; /* required */
	void (*on_revseq)(void *arg, int64_t rev_seq); /* revSeq rose; may be NULL */
	void (*on_end)(void *arg);		       /* the session ended; may be NULL */
	void *arg;				       /* for the three */
};

/* The session as LOCK.STATE and the lock writes need it. Monotonic times;
 * -1 when none yet. */
struct lt_session_view {
	enum lt_session_state state;
	const char *key;	   /* "SESSION#<replica>#<incarnation>": lock items name it */
	const char *rvn;	   /* the rvn last known written ("" before) */
	int64_t confirmed_ms;	   /* send of the last heartbeat answered in time */
	int64_t confirmed_wall_ms; /* the same, wall clock (epoch ms) */
	int64_t rev_seq_seen, rev_seq_done; /* revSeq: read, acknowledged */
	int64_t max_lease_ms;		    /* maxLeaseMs last written */
	size_t members, groups;
	enum lt_loss end_loss;	/* ENDED: what its members were lost for */
	const char *end_reason; /* ENDED: why, for the log ("" before) */
};

/* Work done, for tests and INFO: a heartbeat costs O(groups) visits and
 * no member visit unless a member ends. */
struct lt_session_stats {
	uint64_t beats_sent;	 /* CREATE and BEAT requests */
	uint64_t beats_refused;	 /* answered REFUSED */
	uint64_t beats_extended; /* answered in time and extending */
	uint64_t group_visits;	 /* groups looked at by beats and answers */
	uint64_t member_visits;	 /* members looked at for their end */
	uint64_t joins_clamped;	 /* joins placed at the head, end made earlier */
};

/* A session of the replica on store (which must have session items),
 * counted into obs (session_beats, session_answers); NEW. NULL on
 * out-of-memory, a replica id out of bounds, no on_lost, or a store
 * without sessions. */
struct lt_session *lt_session_new(struct clock *clock, struct store *store, struct obs *obs,
				  const struct lt_session_options *o)
	__attribute__((warn_unused_result));

/* NEW -> CREATING: sends the CREATE (tried again on errors). false: s was
 * not NEW, or out of memory (nothing sent; s stays NEW). */
bool lt_session_start(struct lt_session *s) __attribute__((warn_unused_result));

/* Frees s: its request is cancelled, its members are forgotten (no
 * callback: the owner ends them first, as lease_free_all does). */
void lt_session_free(struct lt_session *s);

enum lt_join {
	LT_JOIN_OK,	 /* m is a member */
	LT_JOIN_EXPIRED, /* its end had passed already: not a member */
	LT_JOIN_ENDED,	 /* the session is NEW or ENDED: not a member */
	LT_JOIN_NOMEM	 /* out of memory (a new group): not a member */
};

/* m (not a member) joins s as a lease of lease_ms (LT_MIN_LEASE_MS..
 * LT_MAX_LEASE_MS) won by a write sent at send_ms (monotonic, not in the
 * future). O(1) (a new lease length: one group). When lease_ms is shorter
 * than every lease held, a beat is sent at once (from the loop). */
enum lt_join lt_member_join(struct lt_session *s, struct lt_member *m, int64_t lease_ms,
			    int64_t send_ms) __attribute__((warn_unused_result));

/* m leaves its session (released, or lost to something else); nothing
 * when m is not a member. O(1). */
void lt_member_leave(struct lt_member *m);

/* m's lease end by the holder's clock (monotonic ms); -1 when m is not a
 * member. */
int64_t lt_member_end_ms(const struct lt_member *m);

static inline bool lt_member_joined(const struct lt_member *m)
{
	return m->group != NULL;
}

/* The owner acted on every revocation up to seq (<= the revSeq read):
 * answers extend again once they show no revSeq above it. false: seq is
 * above the revSeq read (nothing changes). */
bool lt_session_revocations_done(struct lt_session *s, int64_t seq)
	__attribute__((warn_unused_result));

void lt_session_view(const struct lt_session *s, struct lt_session_view *out);
const struct lt_session_stats *lt_session_stats(const struct lt_session *s);
const char *lt_session_state_name(enum lt_session_state st);

#endif
