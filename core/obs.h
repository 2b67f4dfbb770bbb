/*
 * obs: what the lease core tells the outside world — the log events 40-49 of
 * the reference (and leasegate's own from 50: a replica session's start
 * and end) and its four lock metrics — through one small interface.
 * The gateway turns events into log lines and counters into Prometheus text;
 * tests read both directly. The lock name is on events, never a label of a
 * counter; holder labels are on events only.
 */
#ifndef LG_OBS_H
#define LG_OBS_H

#include <stdbool.h>
#include <stdint.h>

enum obs_level { OBS_DEBUG, OBS_INFO, OBS_WARN, OBS_ERROR };

enum obs_event_id {
	OBS_LEASE_LOST = 40,	    /* warning: a lease was lost, with the reason */
	OBS_TAKEOVER = 41,	    /* info: taken over from a holder that stopped */
	OBS_RENEW_RETRY = 42,	    /* warning: a renewal failed, tried again */
	OBS_RELEASE_FAILED = 43,    /* warning: free once its lease runs out */
	OBS_CONTEND_FAILED = 44,    /* warning: election acquire, transient, once/outage */
	OBS_LEADS = 45,		    /* info: this process leads */
	OBS_NO_LONGER_LEADS = 46,   /* info: lease_lost, cancelled, work_returned... */
	OBS_WORK_AFTER_LOSS = 47,   /* debug: the work failed after its lease was lost */
	OBS_WORK_AFTER_CANCEL = 48, /* debug: the work failed after a cancel */
	OBS_CONTEND_RECOVERED = 49, /* info: DynamoDB answered again after 44 */
	/* leasegate's own, past the reference's 40-49: --heartbeat replica
	 * (core/lt_session.h) */
	OBS_SESSION_STARTED = 50, /* info: the replica's session was created */
	OBS_SESSION_ENDED = 51	  /* warning: it ended; its leases were lost */
};
#define OBS_FIRST_ID	40
#define OBS_EVENT_COUNT 12

struct obs_event {
	enum obs_event_id id;
	enum obs_level level; /* filled by obs_emit from the id */
	const char *lock;     /* lock name */
	const char *table;
	const char *holder;	 /* this process's holder label, or NULL */
	const char *prev_holder; /* 41: the label of the holder taken over */
	const char *reason;	 /* 40: loss reason; 46: why the term ended */
	const char *error_type;	 /* 42, 43, 44: the error's type */
	const char *message;	 /* 42, 43, 44: the error's message */
	int64_t token;		 /* fencing token, 0 when none */
	int64_t wait_ms;	 /* 42: delay before the next try; 49: outage length */
	int64_t retries;	 /* 49: retries during the outage */
	/* 50, 51: the session's key ("SESSION#<replica>#<incarnation>") and
	 * replica id; 51: why in words (reason is its code: marked_dead,
	 * deleted, refused, table_not_found) and the leases lost with it */
	const char *hb_session;
	const char *replica;
	const char *detail;
	int64_t leases;
	/* the lease's data (lease_set_data) or the election's arg: whose lease
	 * or term it is, for the gateway to name the session; may be NULL */
	const void *ctx;
};

/* A counter split by a short static label (an error type, a reason). */
#define OBS_LABELS_MAX 16
struct obs_labeled {
	const char *label[OBS_LABELS_MAX];
	uint64_t count[OBS_LABELS_MAX];
	unsigned n;
	uint64_t other; /* labels past OBS_LABELS_MAX */
};

struct obs {
	/* Receives every event; may be NULL. ev is valid during the call. */
	void (*sink)(void *ctx, const struct obs_event *ev);
	void *ctx;
	uint64_t events[OBS_EVENT_COUNT];      /* by id - 40 */
	uint64_t acquisitions[2];	       /* [takeover ? 1 : 0] */
	struct obs_labeled renewals;	       /* label "ok" or the error type */
	struct obs_labeled losses;	       /* label: the loss reason */
	struct obs_labeled contention_retries; /* label: the error type */
	/* --heartbeat replica (core/lt_session.h): session writes sent
	 * (CREATE and BEAT), and their answers: "ok", "refused" or the
	 * error type */
	uint64_t session_beats;
	struct obs_labeled session_answers;
};

/* Counts ev and hands it to the sink. */
void obs_emit(struct obs *o, struct obs_event *ev);

/* Adds one to label's count (label must be a static string). */
void obs_count(struct obs_labeled *c, const char *label);

/* The count of label, 0 when never counted. */
uint64_t obs_get(const struct obs_labeled *c, const char *label);

enum obs_level obs_event_level(enum obs_event_id id);
const char *obs_level_name(enum obs_level level);

#endif
