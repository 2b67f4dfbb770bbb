/*
 * metrics: the Prometheus text exposition (format 0.0.4) of what the
 * gateway counts, served by the admin port's /metrics.
 *
 * One prefix, leasegate_, for what the gateway counts; the reference's
 * lock metrics keep their meaning under it (dynasharp.lock.acquisitions
 * -> leasegate_lock_acquisitions_total, dynasharp.lock.takeover ->
 * takeover, dynasharp.lock.loss_reason -> loss_reason; error.type ->
 * error_type; docs/observability.md, Metrics, maps them all). Counters
 * end in _total, durations are in seconds. On DynamoDB every lock and DynamoDB series
 * carries db_collection_name, the table; the embedded store has none and
 * so no such label (never an empty value). No series carries a lock name
 * or a holder label. The process_* metrics are the Prometheus clients'
 * standard ones; the DynamoDB request histogram keeps OpenTelemetry's
 * semantic-convention name. DynamoDB requests are the histogram
 * db_client_operation_duration_seconds, by operation and by the class of
 * the answer (outcome: ok, refused, throttled, transient, ...).
 *
 * Not here: the HTTP server (admin.c), the counting (core/obs, the stores).
 */
#ifndef LG_METRICS_H
#define LG_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store/dynamodb/store_dynamodb.h"
#include "core/locktable.h"
#include "core/obs.h"
#include "gateway/conn/tls.h"
#include "protocols/buf.h"

struct cmd_table;
struct otlp_stats;

struct metrics_src {
	const struct obs *obs;
	const char *table; /* the table; "" on the embedded store */
	struct lt_stats lt;
	/* --heartbeat replica (core/lt_session.h): the mode is on, and this
	 * replica's session has these members (leases) and groups (lease
	 * lengths); false in per-lease mode (no session metrics then) */
	bool replica_session;
	size_t session_members, session_groups;
	size_t sessions;
	uint64_t auth_failures_redis, auth_failures_pg; /* failed authentications */
	const struct store_dynamodb_stats *ddb;		/* NULL on the embedded store */
	const char *version;
	const struct tls_stats *tls; /* NULL: no TLS configured */
	uint64_t connections_received, connections_rejected;
	const struct cmd_table *cmds;	 /* the Redis commands' counts; NULL: none */
	bool process;			 /* add the process_* metrics */
	const struct otlp_stats *traces; /* NULL: tracing off */
};

/* m's session fields from s, this replica's session (lt_session_of); NULL
 * in per-lease mode (no session metrics then). */
struct lt_session;
void metrics_session(struct metrics_src *m, const struct lt_session *s);

/* Appends the exposition of m to out (a text buffer: buf_printf). */
void metrics_render(const struct metrics_src *m, struct buf *out);

/* Appends v as the text format wants a label value: \ " and
 * newline escaped (metrics.c, metrics_pool.c). */
void metrics_label_value(struct buf *out, const char *v);

/* Appends the process_* metrics of this process (metrics_process.c). */
void metrics_process(struct buf *out);

#endif
