/*
 * ddb_retry: what a DynamoDB answer means, and whether to try again.
 * Pure: no clock, no randomness of its own (the caller passes both).
 *
 * Classification is a table (ddb_retry.c): error type -> class and the
 * error.type string used for metrics and TRANSIENT results.
 *
 * Retries follow the AWS SDKs' "standard" mode:
 *   - at most 3 attempts per operation;
 *   - full-jitter exponential backoff: delay = r * min(cap, base * 2^(n-1))
 *     before retry n (r uniform in [0, 1)). botocore's standard mode uses
 *     base 1 s and cap 20 s; leasegate keeps the cap but uses base 50 ms,
 *     the DynamoDB base of botocore's legacy mode (0.05 s x 2^(n-1), see
 *     botocore's data/_retry.json), because a renewal
 *     of a 1 s lease cannot wait a second. Throttling uses base 500 ms
 *     (throttles last longer than a lost packet);
 *   - a retry quota shared by the store: 500 tokens, a retry costs 5 (10
 *     after a timeout), a success gives back what its retries cost, or 1
 *     when it needed none, up to 500. An empty quota means no retry: in an
 *     outage leasegate stops multiplying its load;
 *   - never past the deadline of the operation: a retry whose delay would
 *     end after it is not made (a request never outlives its lease).
 */
#ifndef LG_DDB_RETRY_H
#define LG_DDB_RETRY_H

#include <stdbool.h>
#include <stdint.h>

enum ddb_class {
	DDB_C_OK,
	DDB_C_REFUSED,	 /* ConditionalCheckFailed (also inside a transaction) */
	DDB_C_NO_TABLE,	 /* ResourceNotFoundException */
	DDB_C_FATAL,	 /* retrying cannot help: permissions, keys, bad request */
	DDB_C_THROTTLED, /* retry, with the throttling backoff */
	DDB_C_TRANSIENT, /* retry: 5xx, network, timeouts, bad CRC32 */
	DDB_C_SKEW,	 /* clock skew: correct the clock, re-sign, retry */
	DDB_C_COUNT
};

struct ddb_verdict {
	enum ddb_class cls;
	const char *error_type; /* static: the error type for metrics, NULL for OK */
	bool timeout;		/* the request timed out (costs more quota) */
};

/* Classifies an HTTP answer: status and the parsed error type ("" when the
 * body had none) and message. 2xx is OK. */
struct ddb_verdict ddb_classify(long status, const char *type, const char *message);

/* Classifies a transport failure: curl_code is a CURLcode other than
 * CURLE_OK. */
struct ddb_verdict ddb_classify_curl(int curl_code);

const char *ddb_class_name(enum ddb_class cls);

struct ddb_retry_policy {
	int max_attempts;	  /* 3 */
	int64_t base_ms;	  /* 50 */
	int64_t throttle_base_ms; /* 500 */
	int64_t cap_ms;		  /* 20000 */
	int quota_max;		  /* 500 */
	int retry_cost;		  /* 5 */
	int timeout_cost;	  /* 10 */
};

extern const struct ddb_retry_policy ddb_retry_standard;

/* The retry quota of one store. */
struct ddb_quota {
	int tokens;
};

void ddb_quota_init(struct ddb_quota *q, const struct ddb_retry_policy *p);

/* The decision after a failed attempt. */
struct ddb_retry {
	bool retry;
	int64_t delay_ms; /* wait before the next attempt */
	int cost;	  /* tokens taken from the quota (add to the operation's) */
	const char *why;  /* when not retrying: "not retryable", "attempts",
			     "quota", "deadline" */
};

/* Decides whether to retry after attempt number `attempts` (1 = the first
 * one) failed with verdict v. now_ms and deadline_ms are on one monotonic
 * clock; r is a uniform random number in [0, 1). Takes the cost from q
 * when it retries. SKEW retries once, at once, without cost (the caller
 * has corrected its clock). */
struct ddb_retry ddb_retry_decide(const struct ddb_retry_policy *p, struct ddb_quota *q,
				  struct ddb_verdict v, int attempts, int64_t now_ms,
				  int64_t deadline_ms, double r);

/* An operation succeeded after taking `spent` tokens from q in retries. */
void ddb_quota_success(const struct ddb_retry_policy *p, struct ddb_quota *q, int spent);

#endif
