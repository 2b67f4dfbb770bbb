/*
 * trace: spans as the reference names them (Lock.Acquire, Lock.TryAcquire,
 * Lock.Renew, Lock.Release, Leader.Campaign; and leasegate's own
 * Lock.SessionRead, Lock.SessionKill of --heartbeat replica, core/lt_swait.c)
 * and the DynamoDB requests under them, recorded on the event loop without I/O. A finished span
 * goes to a bounded queue that an exporter (gateway/obs/otlp.c) drains off the hot path; a span
 * that finds the queue full is dropped and counted.
 *
 * Sampling is decided when a trace starts: a root span is kept with the
 * tracer's ratio (from a hash of its random trace id), a child as its
 * parent was (W3C traceparent's sampled flag for a parent from a client).
 * An unsampled or untraced span is NULL, and every function takes NULL
 * and does nothing: code that traces costs a branch when tracing is off.
 *
 * Not here: exporting (gateway/obs/otlp.c), where spans start (core/lease.c,
 * core/locktable.c, core/election.c, the stores).
 */
#ifndef LG_TRACE_H
#define LG_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_ATTRS_MAX 12
#define TRACE_STR_MAX	128

/* A span's identity, or a parent's (from a client's traceparent). */
struct trace_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	bool sampled;
	bool valid; /* false: no context */
};

enum trace_kind { TRACE_INTERNAL = 1, TRACE_SERVER = 2, TRACE_CLIENT = 3 };

struct trace_attr {
	const char *key; /* static */
	enum { TRACE_STR, TRACE_INT, TRACE_BOOL } type;
	int64_t i;
	char s[TRACE_STR_MAX];
};

struct trace_span {
	struct tracer *tr;
	struct trace_span *next; /* in the tracer's queue once ended */
	const char *name;	 /* static */
	enum trace_kind kind;
	struct trace_ctx ctx;
	uint8_t parent_id[8];
	bool has_parent;
	struct trace_ctx link;	  /* .valid: a link (a renewal's to its acquire) */
	int64_t start_ns, end_ns; /* Unix epoch */
	bool error;
	char status[TRACE_STR_MAX]; /* the error's message */
	struct trace_attr attrs[TRACE_ATTRS_MAX];
	unsigned nattrs;
};

struct tracer_options {
	double ratio;	  /* share of new traces kept, 0..1 */
	size_t queue_max; /* finished spans waiting for export; default 2048 */
	/* wall clock in ns since the epoch (tests: a fake clock) */
	int64_t (*now_ns)(void *arg);
	void *now_arg;
};

struct tracer_stats {
	uint64_t started; /* sampled spans started */
	uint64_t dropped; /* ended while the queue was full */
	uint64_t queued;  /* in the queue now */
};

struct tracer;

/* NULL on out-of-memory. */
struct tracer *tracer_new(const struct tracer_options *o) __attribute__((warn_unused_result));
/* Frees the tracer and the spans in its queue; spans still open must have
 * been ended (their end then frees them). */
void tracer_free(struct tracer *t);

/* Starts a span: under parent when it is valid (kept when parent->sampled),
 * else the root of a new trace (kept with the tracer's ratio). NULL when
 * t is NULL, the span is not sampled, or out of memory. */
struct trace_span *trace_start(struct tracer *t, const char *name, enum trace_kind kind,
			       const struct trace_ctx *parent);

/* A child of parent (NULL when parent is NULL). */
struct trace_span *trace_child(const struct trace_span *parent, const char *name,
			       enum trace_kind kind);

/* The context of s, to link or propagate (.valid false for NULL). */
struct trace_ctx trace_ctx_of(const struct trace_span *s);

/* Attributes (at most TRACE_ATTRS_MAX; later ones are dropped; strings cut
 * at TRACE_STR_MAX - 1 bytes); key must be a static string. */
void trace_str(struct trace_span *s, const char *key, const char *v);
void trace_int(struct trace_span *s, const char *key, int64_t v);
void trace_bool(struct trace_span *s, const char *key, bool v);
void trace_link(struct trace_span *s, const struct trace_ctx *ctx);
/* Marks s failed with msg (its status). */
void trace_fail(struct trace_span *s, const char *msg);

/* Ends s and hands it to the queue (or drops it, counted, when full);
 * s is not to be used afterwards. */
void trace_end(struct trace_span *s);

/* Ends *sp (nothing when it is NULL), failed with why unless why is NULL,
 * and sets *sp to NULL. */
void trace_finish(struct trace_span **sp, const char *why);

/* Takes up to max ended spans, oldest first, into out; the caller frees
 * each with trace_free(). */
size_t tracer_take(struct tracer *t, struct trace_span **out, size_t max);
void trace_free(struct trace_span *s);

void tracer_stats(const struct tracer *t, struct tracer_stats *out);

/* W3C traceparent "00-<32 hex>-<16 hex>-<2 hex>": true and *out filled
 * when s is one (version 00, non-zero ids). */
bool trace_parse_traceparent(const char *s, struct trace_ctx *out);

/* Lower-case hex of n bytes into out (2n + 1 bytes). */
void trace_hex(const uint8_t *b, size_t n, char *out);

#endif
