/*
 * store_dynamodb: the struct store (core/store/store.h) over Amazon
 * DynamoDB's JSON API, on the one event loop: http (libcurl multi) to
 * send, sigv4 to sign, a credentials callback (the creds chain in the
 * gateway), ddb_json for bodies, ddb_retry for what answers mean.
 *
 * Life of the store:
 *   store_dynamodb_new()   checks the configuration, makes nothing wait;
 *   store_dynamodb_open()  asynchronous: DescribeTable to learn the key
 *                          names (unless configured) and refuse non-string
 *                          keys; with create_table, CreateTable (on demand,
 *                          string keys), wait until ACTIVE, then
 *                          UpdateTimeToLive on the TTL attribute; a table
 *                          described and not created gets one Scan of its
 *                          first STORE_DDB_PEEK_ITEMS items, to tell
 *                          (stats.table.foreign) a table that holds other
 *                          things than locks;
 *   store_submit()...      the operations of store.h (before the open
 *                          completes OK they fail FATAL "store not open");
 *   store_scan()           one Scan request a page (ddb_build_scan: lock
 *                          keys only, strongly consistent), retried like
 *                          the others; a page whose answer passes
 *                          HTTP_BODY_MAX (4 MiB, while DynamoDB stops a
 *                          page at 1 MB of items) fails FATAL
 *                          "ResponseTooLarge" at once: ask for fewer;
 *   store_free()           cancels what is in flight, without callbacks.
 *
 * Counting: store->requests[op] counts logical operations (one per
 * store_submit(), one STORE_SCAN per store_scan()), which is what the lease
 * rules count ("a free lock costs one request"); the HTTP requests sent,
 * retries included, are in store_dynamodb_stats().http[ddb_op].
 *
 * Time: an operation has a deadline, so that a request never outlives the
 * lease it serves: the lease for ACQUIRE (the lease starts at the send),
 * two thirds of it for RENEW (what a renewal sent on schedule has left),
 * op_timeout_ms for the others. Each attempt is bounded by
 * attempt_timeout_ms, by a third of the lease, and by what is left before
 * the deadline. Retries: ddb_retry.h (standard mode, 3 attempts).
 *
 * Saturation: RENEW and RELEASE go to the HTTP client as urgent requests,
 * ahead of every other waiting request (http.h). The others are refused
 * at once when the client's normal queue is full: the call ends TRANSIENT
 * "LocalQueueFull" without a retry (counted in stats.shed), so that the
 * client is told to try again instead of waiting behind the renewals.
 */
#ifndef LG_STORE_DYNAMODB_H
#define LG_STORE_DYNAMODB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/clock.h"
#include "core/store/dynamodb/ddb_json.h"
#include "core/store/dynamodb/ddb_retry.h"
#include "lib/http/http.h"
#include "lib/aws/sigv4.h"
#include "core/store/store.h"

struct event_base;
struct http;

#define STORE_DDB_ERR_MAX    256
#define STORE_DDB_URGENT_MAX 1000000 /* renewals and releases waiting, at most */
#define STORE_DDB_PEEK_ITEMS 10	     /* items the open reads of a table it did not create */

/* Returns the current credentials, or NULL when none are available yet
 * (the request then fails TRANSIENT "CredentialsNotAvailable" after its
 * retries). The pointer must stay valid until control returns to the
 * loop. With the creds chain: return creds_get(arg). */
typedef const struct aws_credentials *(*store_ddb_creds_fn)(void *arg);

struct store_dynamodb_config {
	const char *table;	   /* required */
	const char *region;	   /* required (the gateway resolves it) */
	const char *endpoint;	   /* NULL: store_dynamodb_endpoint() */
	const char *partition_key; /* NULL: read with DescribeTable at open
				      ("pk" for a table the store creates) */
	const char *sort_key;	   /* with partition_key: NULL = no sort key */
	const char *ttl_attribute; /* NULL: none */
	bool create_table;	   /* create the table when it is missing */
	/* Read DescribeTable at open even with the keys configured, to know
	 * whether the table is global (the gateway does); without it such an
	 * open sends nothing and the table's kind stays unknown. */
	bool read_kind;
	/* Open a global table all the same (see store_dynamodb_open). */
	bool allow_global_table;

	store_ddb_creds_fn credentials; /* required */
	void *credentials_arg;
	/* Called on ExpiredTokenException (e.g. creds_refresh()); may be NULL. */
	void (*credentials_expired)(void *arg);

	struct http *http;		      /* NULL: the store makes its own */
	unsigned max_in_flight;		      /* its own http's max_active and
					       * max_queued_normal (0: 64 and 10000);
					       * max_queued: STORE_DDB_URGENT_MAX */
	int64_t attempt_timeout_ms;	      /* default 5000 */
	int64_t op_timeout_ms;		      /* default 15000: deadline without a lease */
	const struct ddb_retry_policy *retry; /* NULL: ddb_retry_standard */
	double (*random)(void *arg);	      /* uniform in [0, 1); NULL: drand48() */
	void *random_arg;
};

/* Creates the store (not open yet). base drives the http it makes; clock
 * gives time (monotonic for deadlines and backoff, wall for signatures and
 * the TTL). Returns NULL with a message in err (STORE_DDB_ERR_MAX bytes)
 * on a bad configuration (table, key or TTL names, endpoint) or
 * out-of-memory. */
struct store *store_dynamodb_new(struct event_base *base, struct clock *clock,
				 const struct store_dynamodb_config *cfg, char *err)
	__attribute__((warn_unused_result));

/* Opens the store (see the top of this file). cb runs once, later, from
 * the loop: OK (the store is usable), NO_TABLE (missing and not to be
 * created), FATAL (wrong key types or names, permissions, a global table
 * without allow_global_table: .message says which table and what),
 * TRANSIENT (DynamoDB unreachable: call open again). Returns false on
 * out-of-memory or when an open is running.
 *
 * With the keys configured and read_kind, the open reads DescribeTable
 * too, and a refusal of it (AccessDeniedException) only leaves the
 * table's kind unknown. A global table (DescribeTable lists Replicas) replicates
 * between regions with last-writer-wins: a conditional write is checked
 * in one region only, so two gateways writing to two regions could both
 * be granted one lock. It is refused (FATAL "GlobalTable") unless
 * allow_global_table: locks are then as safe as one region, if every
 * gateway uses the same region's endpoint. */
bool store_dynamodb_open(struct store *s, store_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* The endpoint by the AWS conventions: AWS_ENDPOINT_URL_DYNAMODB, else
 * AWS_ENDPOINT_URL, else https://dynamodb.<region>.amazonaws.com. */
void store_dynamodb_endpoint(const char *region, char *out, size_t outsz);

/* The region an AWS endpoint's host names (dynamodb.<region>.amazonaws.com,
 * dynamodb-fips.<region>..., <account>.ddb.<region>..., a VPC endpoint's
 * ...dynamodb.<region>.vpce.amazonaws.com; .amazonaws.com.cn too) into out;
 * false for any other host (an emulator, a proxy): no region to check.
 * store_dynamodb_new refuses an endpoint whose region is not the signing
 * region. */
bool store_dynamodb_endpoint_region(const char *host, char *out, size_t outsz)
	__attribute__((warn_unused_result));

/* The table's keys as the store uses them (valid once open). */
const struct ddb_keys *store_dynamodb_keys(const struct store *s);

/* The latency of HTTP attempts, from the send to the answer (or the
 * transport's failure): a count per bucket (not cumulative), bucket i
 * holding latencies up to ddb_latency_bounds_us[i], the last unbounded. */
#define DDB_LATENCY_BUCKETS 12
extern const int64_t ddb_latency_bounds_us[DDB_LATENCY_BUCKETS - 1];
struct ddb_latency {
	uint64_t bucket[DDB_LATENCY_BUCKETS];
	uint64_t count;
	uint64_t sum_us;
};

/* What the open learnt of the table (INFO, /metrics). */
struct store_dynamodb_table {
	char region[64]; /* the signing region: where requests go */
	char arn[256];	 /* TableArn, "" when not read */
	int global;	 /* 1 a global table, 0 not, -1 not known (not read) */
	unsigned nreplicas;
	char replicas[128];	 /* their regions, comma-separated */
	char global_version[16]; /* "" when none */
	bool created;		 /* this open made it (CreateTable answered OK) */
	char pk[256], sk[256];	 /* its key names once read ("" sk: none) */
	/* The first items of a table this open described and did not create
	 * (one Scan, Limit STORE_DDB_PEEK_ITEMS, after DescribeTable): peeked
	 * the items read, -1 when none were (not described, created, or the
	 * Scan failed: peek_error names its error type); foreign how many of
	 * them are not lock items (key LOCK#<name>, sort key LOCK if any,
	 * _type LOCK), their attribute names in foreign_attrs (comma-separated,
	 * cut at its size). */
	int peeked;
	unsigned foreign;
	char foreign_attrs[256];
	char peek_error[64];
};

struct store_dynamodb_stats {
	struct store_dynamodb_table table;
	uint64_t http[DDB_OP_COUNT]; /* HTTP requests sent, retries included */
	/* answered attempts by operation and the class of the answer
	 * (ddb_class_name: ok, refused, throttled, ...) */
	struct ddb_latency latency[DDB_OP_COUNT][DDB_C_COUNT];
	uint64_t retries;   /* attempts after the first */
	uint64_t throttled; /* throttling answers */
	uint64_t crc_mismatches;
	uint64_t skew_corrections;
	int64_t clock_offset_ms; /* added to the wall clock when signing */
	int quota_tokens;	 /* retry quota left */
	uint64_t shed;		 /* calls refused at once: the HTTP queue was full */
	struct http_stats pool;	 /* the HTTP client: in flight, queued, queue wait */
};

void store_dynamodb_stats(const struct store *s, struct store_dynamodb_stats *out);

#endif
