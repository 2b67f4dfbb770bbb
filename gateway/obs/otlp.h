/*
 * otlp: the exporter of the spans of core/trace as OTLP/HTTP JSON (the
 * OpenTelemetry protocol's JSON encoding, POST <endpoint>/v1/traces),
 * configured by the standard OTEL_* environment variables:
 *
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   the URL as is, else
 *   OTEL_EXPORTER_OTLP_ENDPOINT          + "/v1/traces"; neither: tracing off
 *   OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL http/json (the one supported)
 *   OTEL_EXPORTER_OTLP_[TRACES_]HEADERS  k=v,k=v sent with each export
 *   OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT  ms per export (10000)
 *   OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES  the resource
 *   OTEL_TRACES_SAMPLER[_ARG]            always_on, always_off, traceidratio,
 *                                        parentbased_* (the default:
 *                                        parentbased_always_on)
 *   OTEL_BSP_SCHEDULE_DELAY (5000 ms), OTEL_BSP_MAX_QUEUE_SIZE (2048),
 *   OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512)  the batching
 *   OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none  off
 *
 * Spans are batched off the hot path: a timer takes a batch from the
 * tracer's queue and POSTs it on the event loop's HTTP client, one export
 * at a time, never blocking the loop. When the collector does not answer
 * (or answers an error) the batch is dropped and counted; a full queue
 * drops new spans (counted by the tracer). A parent's sampling decision
 * is followed: a child of a sampled client span is kept, of an unsampled
 * one dropped.
 *
 * Not here: the spans themselves (core/trace, the core's lock code).
 */
#ifndef LG_OTLP_H
#define LG_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/trace.h"

struct event_base;
struct clock;
struct buf;
struct otlp;

struct otlp_stats {
	uint64_t exported;	/* spans a collector accepted */
	uint64_t export_failed; /* spans dropped: the export failed */
	uint64_t queue_dropped; /* spans dropped: the queue was full */
	uint64_t exports;	/* POSTs sent */
};

/* Reads the OTEL_* variables of envp (a NULL-terminated "NAME=value"
 * array). NULL with err "" when tracing is off; NULL with a message in
 * err on a bad value (naming the variable). */
struct otlp *otlp_new(struct event_base *base, struct clock *clock, char *const *envp,
		      const char *version, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* The tracer to give the lock table (lt_set_tracer). */
struct tracer *otlp_tracer(struct otlp *o);

/* "OTLP/HTTP JSON to URL, sampler S" for the start log. */
const char *otlp_describe(const struct otlp *o);

void otlp_stats(const struct otlp *o, struct otlp_stats *out);

/* Exports what is queued now (at shutdown), without waiting. */
void otlp_flush(struct otlp *o);

/* Appends the OTLP JSON of n spans to out (for tests too). */
void otlp_encode(struct buf *out, const char *service, const char *version,
		 const char *resource_attrs, struct trace_span *const *spans, size_t n);

void otlp_free(struct otlp *o);

#endif
