/*
 * events: the core's events (core/obs, the reference's log ids 40-49) as
 * the gateway's log lines: a message in the gateway's words, naming the
 * client session the lease or term is for ("session 12 (10.0.0.5:4411,
 * name=worker-1) leads nightly-report, token 7"), and the same facts as
 * structured fields (event_id, lock, table, holder, token, reason,
 * session, client, client_name, error_type, error...), which JSON logs
 * carry as keys of their own.
 *
 * Every reason is one of a documented list (docs/observability.md, Logs):
 *   40 lease lost:      taken_over, deleted, expired, table_not_found, forced,
 *                       session
 *   46 no longer leads: lease_lost, resigned, session_ended
 *   51 heartbeat session ended (--heartbeat replica): marked_dead, deleted,
 *                       refused, table_not_found
 * Events 50 and 51 (leasegate's own, a replica's session started and
 * ended) name no lock and no client session: they carry heartbeat_session,
 * replica_id and, for 51, leases_lost.
 * The core's election words (work_returned, cancelled) are mapped here.
 *
 * Not here: writing the line (gateway/log), counting (core/obs).
 */
#ifndef LG_EVENTS_H
#define LG_EVENTS_H

#include <stddef.h>

#include "core/obs.h"
#include "gateway/lease/lsess.h"
#include "gateway/obs/log.h"

#define EVENTS_FIELDS_MAX 16

/* Text storage for the fields of one event. */
struct event_line {
	char msg[768];
	struct log_field f[EVENTS_FIELDS_MAX];
	size_t n;
	char num[4][24]; /* numbers written as text (durations with units) */
};

/* Fills line with ev's message and fields; who (NULL: no session keeps
 * the lease) names the session. */
void events_describe(const struct obs_event *ev, const struct ls_who *who, struct event_line *line);

/* The gateway's word for a reason of the core (46: work_returned ->
 * resigned, cancelled -> session_ended; others unchanged). */
const char *events_reason(enum obs_event_id id, const char *core_reason);

#endif
