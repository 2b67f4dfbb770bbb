/*
 * backend: what the gateway's commands stand on — the clocks, the store
 * (embedded, or DynamoDB with the credential chain when a table is
 * configured), the core's events turned into log lines, and the lock table.
 *
 * Opening DynamoDB is asynchronous (DescribeTable, and CreateTable with
 * --create-table); ready() says when the gateway may take clients.
 * Transient failures of the open are retried after 1 s, doubling up to
 * 60 s, each logged with its cause (for missing credentials, the sources
 * of the chain tried and what each lacked), which not_ready keeps for
 * /readyz; a missing table or a permission error ends it with a clear
 * message.
 *
 * Two clocks: clock, the lease core's (lock table, embedded store, the
 * lease sessions' timeouts), and io_clock, real time for what talks to the
 * outside (DynamoDB's HTTP, credentials, the trace exporter). They are one
 * real clock, except with --test-mode: clock is then a manual clock
 * (testclock.h) that moves only when a client says so, driven by tclock.
 */
#ifndef LG_BACKEND_H
#define LG_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/base/clock.h"
#include "core/locktable.h"
#include "core/obs.h"
#include "core/store/store.h"
#include "gateway/config.h"

struct event_base;
struct creds;
struct ls_who;

struct backend {
	struct event_base *base;
	const struct cfg *cfg;
	struct clock *clock;	/* the lease core's */
	struct clock *io_clock; /* real; == clock outside test mode */
	struct tclock *tclock;	/* --test-mode: the driver of clock; else NULL */
	struct store *store;
	struct creds *creds;
	int creds_said; /* 1 found, -1 failed, 0 nothing said since the start */
	struct obs obs;
	struct locktable *lt;
	const char *kind; /* "embedded" or "dynamodb" */
	struct timer retry;
	void (*ready)(void *arg, bool ok, const char *msg);
	void *ready_arg;
	char region[64];
	char endpoint[512];    /* DynamoDB's URL; "" on the embedded store */
	char not_ready[1536];  /* why the store is not open yet; "" once it is */
	int64_t open_retry_ms; /* the open's current backoff */
	/* names the session of an event's ctx for its log line (lsvc_who);
	 * NULL: the lines name no session */
	bool (*who)(const void *ctx, struct ls_who *who);
};

/* Builds the backend of cfg and starts opening its store; ready(arg, ok,
 * msg) runs once from the loop when it is usable (ok) or cannot be (msg
 * says why). Returns false with a message in err on a bad configuration
 * (with --test-mode, also an AWS endpoint: tclock_check_endpoint). */
bool backend_open(struct backend *b, struct event_base *base, const struct cfg *cfg,
		  void (*ready)(void *arg, bool ok, const char *msg), void *arg, char *err,
		  size_t errlen) __attribute__((warn_unused_result));

/* The store's own figures, for INFO: the section's name (the store's kind:
 * "embedded" or "dynamodb") and its lines, each a key and a number given
 * to line(arg, key, value) in a fixed order. */
const char *backend_store_section(const struct backend *b);
void backend_store_lines(const struct backend *b,
			 void (*line)(void *arg, const char *key, long long value), void *arg);
/* The store's text lines for INFO, before its figures: on DynamoDB the
 * region, the table's ARN, global_table (yes, no, unknown) and its
 * replicas' regions; none on the embedded store. */
void backend_store_text(const struct backend *b,
			void (*line)(void *arg, const char *key, const char *value), void *arg);

/* Fills what /metrics shows of the store and the lock table into *m
 * (gateway/obs/metrics.h); *ddb is storage for the DynamoDB figures, pointed
 * to by m->ddb on that store. */
struct metrics_src;
struct store_dynamodb_stats;
void backend_metrics(const struct backend *b, struct metrics_src *m,
		     struct store_dynamodb_stats *ddb);

/* The partition key attribute of the lock table once open (DynamoDB), or
 * NULL (the embedded store). */
const char *backend_lock_pk(const struct backend *b);

/* Frees what backend_open built; every lease must be released first.
 * before_clock (may be NULL) runs after the lock table and the store are
 * gone and before the clocks are: what else runs on them (the trace
 * exporter, which the lock table's last spans reach) is freed there. */
void backend_close(struct backend *b, void (*before_clock)(void *arg), void *arg);

#endif
