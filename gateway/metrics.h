/*
 * metrics: the Prometheus text exposition (format 0.0.4) of what the
 * gateway counts, served by the admin port's /metrics.
 *
 * Names follow the reference's metrics as OpenTelemetry's Prometheus
 * exporter writes them: dots become underscores, counters end in _total,
 * durations are in seconds (dynasharp.lock.acquisitions ->
 * dynasharp_lock_acquisitions_total; error.type -> error_type). Every lock
 * and DynamoDB series carries db_collection_name, the table; none carries
 * a lock name or a holder label. DynamoDB requests are the histogram
 * db_client_operation_duration_seconds, by operation and by the class of
 * the answer (outcome: ok, refused, throttled, transient, ...).
 *
 * Not here: the HTTP server (admin.c), the counting (core/obs, the stores).
 */
#ifndef LG_METRICS_H
#define LG_METRICS_H

#include <stddef.h>

#include "core/dynamodb/store_dynamodb.h"
#include "core/locktable.h"
#include "core/obs.h"
#include "gateway/conn/tls.h"
#include "protocols/buf.h"

struct metrics_src {
	const struct obs *obs;
	const char *table; /* the table; "" on the embedded store */
	struct lt_stats lt;
	size_t sessions;
	uint64_t auth_failures_redis, auth_failures_pg; /* failed authentications */
	const struct store_dynamodb_stats *ddb;		/* NULL on the embedded store */
	const char *version;
	const struct tls_stats *tls; /* NULL: no TLS configured */
};

/* Appends the exposition of m to out (a text buffer: buf_printf). */
void metrics_render(const struct metrics_src *m, struct buf *out);

#endif
