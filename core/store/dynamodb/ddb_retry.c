/*
 * ddb_retry.c: the classification tables and the standard retry mode (see
 * ddb_retry.h). Sources for the tables: the DynamoDB developer guide's
 * error list ("Error handling with DynamoDB"), botocore's
 * retry definitions (botocore_retry.json) and the service model's errors.
 */
#include "core/store/dynamodb/ddb_retry.h"

#include <curl/curl.h>
#include <string.h>

const struct ddb_retry_policy ddb_retry_standard = {
	.max_attempts = 3,
	.base_ms = 50,
	.throttle_base_ms = 500,
	.cap_ms = 20000,
	.quota_max = 500,
	.retry_cost = 5,
	.timeout_cost = 10,
};

struct type_class {
	const char *type;
	enum ddb_class cls;
};

/* Error types DynamoDB (and moto, and the AWS front door) answer with. The
 * type string itself is the error.type of metrics. */
static const struct type_class type_table[] = {
	{"ConditionalCheckFailedException", DDB_C_REFUSED},
	{"ResourceNotFoundException", DDB_C_NO_TABLE},
	/* permissions, keys, signatures: a person must act */
	{"AccessDeniedException", DDB_C_FATAL},
	{"AccessDenied", DDB_C_FATAL},
	{"UnrecognizedClientException", DDB_C_FATAL},
	{"InvalidClientTokenId", DDB_C_FATAL},
	{"InvalidSignatureException", DDB_C_FATAL},
	{"SignatureDoesNotMatch", DDB_C_FATAL},
	{"IncompleteSignatureException", DDB_C_FATAL},
	{"IncompleteSignature", DDB_C_FATAL},
	{"MissingAuthenticationTokenException", DDB_C_FATAL},
	{"MissingAuthenticationToken", DDB_C_FATAL},
	{"ValidationException", DDB_C_FATAL},
	{"SerializationException", DDB_C_FATAL},
	{"ResourceInUseException", DDB_C_FATAL},
	{"ItemCollectionSizeLimitExceededException", DDB_C_FATAL},
	{"IdempotentParameterMismatchException", DDB_C_FATAL},
	{"UnknownOperationException", DDB_C_FATAL},
	/* temporary credentials ran out: the credential chain refreshes them */
	{"ExpiredTokenException", DDB_C_TRANSIENT},
	{"ExpiredToken", DDB_C_TRANSIENT},
	/* throttling */
	{"ProvisionedThroughputExceededException", DDB_C_THROTTLED},
	{"ProvisionedThroughputExceeded", DDB_C_THROTTLED},
	{"ThrottlingException", DDB_C_THROTTLED},
	{"Throttling", DDB_C_THROTTLED},
	{"ThrottledException", DDB_C_THROTTLED},
	{"RequestThrottledException", DDB_C_THROTTLED},
	{"RequestThrottled", DDB_C_THROTTLED},
	{"RequestLimitExceeded", DDB_C_THROTTLED},
	{"LimitExceededException", DDB_C_THROTTLED},
	{"TooManyRequestsException", DDB_C_THROTTLED},
	{"SlowDown", DDB_C_THROTTLED},
	{"BandwidthLimitExceeded", DDB_C_THROTTLED},
	{"EC2ThrottledException", DDB_C_THROTTLED},
	/* the service, not the request */
	{"InternalServerError", DDB_C_TRANSIENT},
	{"InternalFailure", DDB_C_TRANSIENT},
	{"ServiceUnavailable", DDB_C_TRANSIENT},
	{"ServiceUnavailableException", DDB_C_TRANSIENT},
	{"TransactionInProgressException", DDB_C_TRANSIENT},
	/* the store classifies by its CancellationReasons when it has them */
	{"TransactionCanceledException", DDB_C_TRANSIENT},
	{"TransactionConflictException", DDB_C_TRANSIENT},
	{"ReplicatedWriteConflictException", DDB_C_TRANSIENT},
	{"RequestTimeout", DDB_C_TRANSIENT},
	{"RequestTimeoutException", DDB_C_TRANSIENT},
	/* the clock of this host is off */
	{"RequestTimeTooSkewed", DDB_C_SKEW},
	{"RequestExpired", DDB_C_SKEW},
	{"RequestInTheFuture", DDB_C_SKEW},
};

/* A signature error is a skew when its message says the time is wrong. */
static const char *const skew_messages[] = {
	"Signature expired",
	"Signature not yet current",
	"too skewed",
	"RequestTimeTooSkewed",
};

/* Cancellation reason codes of a TransactionCanceledException are
 * classified by ddb_classify() too: the codes, not the exception. */
static const struct type_class reason_table[] = {
	{"ConditionalCheckFailed", DDB_C_REFUSED},
	{"TransactionConflict", DDB_C_TRANSIENT},
	{"ProvisionedThroughputExceeded", DDB_C_THROTTLED},
	{"ThrottlingError", DDB_C_THROTTLED},
	{"ValidationError", DDB_C_FATAL},
	{"ItemCollectionSizeLimitExceeded", DDB_C_FATAL},
};

struct status_class {
	long status;
	enum ddb_class cls;
	const char *error_type;
};

/* For answers without an error type (a proxy, a load balancer). */
static const struct status_class status_table[] = {
	{429, DDB_C_THROTTLED, "TooManyRequests"}, {500, DDB_C_TRANSIENT, "InternalServerError"},
	{502, DDB_C_TRANSIENT, "BadGateway"},	   {503, DDB_C_TRANSIENT, "ServiceUnavailable"},
	{504, DDB_C_TRANSIENT, "GatewayTimeout"},  {509, DDB_C_THROTTLED, "BandwidthLimitExceeded"},
	{403, DDB_C_FATAL, "AccessDenied"},	   {404, DDB_C_FATAL, "NotFound"},
};

static const struct type_class *find(const struct type_class *t, size_t n, const char *type)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].type, type) == 0)
			return &t[i];
	return NULL;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct ddb_verdict ddb_classify(long status, const char *type, const char *message)
{
	struct ddb_verdict v = {DDB_C_OK, NULL, false};
	if (status >= 200 && status < 300)
		return v;
	type = type ? type : "";
	const struct type_class *tc = find(type_table, COUNT(type_table), type);
	if (!tc)
		tc = find(reason_table, COUNT(reason_table), type);
	if (tc) {
		v.cls = tc->cls;
		v.error_type = tc->type;
		if (tc->cls == DDB_C_FATAL && message &&
		    (strcmp(type, "InvalidSignatureException") == 0 ||
		     strcmp(type, "SignatureDoesNotMatch") == 0))
			for (size_t i = 0; i < COUNT(skew_messages); i++)
				if (strstr(message, skew_messages[i]))
					v.cls = DDB_C_SKEW;
		v.timeout = strstr(type, "Timeout") != NULL;
		return v;
	}
	for (size_t i = 0; i < COUNT(status_table); i++) {
		if (status_table[i].status == status) {
			v.cls = status_table[i].cls;
			v.error_type = status_table[i].error_type;
			v.timeout = status == 504;
			return v;
		}
	}
	/* an unknown error: the service's fault is worth a retry, ours is not */
	v.cls = status >= 500 ? DDB_C_TRANSIENT : DDB_C_FATAL;
	v.error_type = status >= 500 ? "ServerError" : "UnknownError";
	return v;
}

struct curl_class {
	int code;
	enum ddb_class cls;
	const char *error_type;
	bool timeout;
};

static const struct curl_class curl_table[] = {
	{CURLE_OPERATION_TIMEDOUT, DDB_C_TRANSIENT, "Timeout", true},
	{CURLE_COULDNT_RESOLVE_HOST, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_COULDNT_RESOLVE_PROXY, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_COULDNT_CONNECT, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_SEND_ERROR, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_RECV_ERROR, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_GOT_NOTHING, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_PARTIAL_FILE, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_WEIRD_SERVER_REPLY, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_HTTP2, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_HTTP2_STREAM, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_SSL_CONNECT_ERROR, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_AGAIN, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_NO_CONNECTION_AVAILABLE, DDB_C_TRANSIENT, "ConnectionError", false},
	{CURLE_OUT_OF_MEMORY, DDB_C_TRANSIENT, "OutOfMemory", false},
	{CURLE_WRITE_ERROR, DDB_C_TRANSIENT, "ResponseTooLarge", false},
	{CURLE_FILESIZE_EXCEEDED, DDB_C_TRANSIENT, "ResponseTooLarge", false},
	/* configuration: the endpoint's URL or certificate */
	{CURLE_URL_MALFORMAT, DDB_C_FATAL, "BadEndpoint", false},
	{CURLE_UNSUPPORTED_PROTOCOL, DDB_C_FATAL, "BadEndpoint", false},
	{CURLE_PEER_FAILED_VERIFICATION, DDB_C_FATAL, "TlsVerification", false},
	{CURLE_SSL_CACERT_BADFILE, DDB_C_FATAL, "TlsVerification", false},
};

struct ddb_verdict ddb_classify_curl(int curl_code)
{
	for (size_t i = 0; i < COUNT(curl_table); i++)
		if (curl_table[i].code == curl_code)
			return (struct ddb_verdict){curl_table[i].cls, curl_table[i].error_type,
						    curl_table[i].timeout};
	return (struct ddb_verdict){DDB_C_TRANSIENT, "ConnectionError", false};
}

static const char *const class_names[DDB_C_COUNT] = {
	[DDB_C_OK] = "ok",
	[DDB_C_REFUSED] = "refused",
	[DDB_C_NO_TABLE] = "no_table",
	[DDB_C_FATAL] = "fatal",
	[DDB_C_THROTTLED] = "throttled",
	[DDB_C_TRANSIENT] = "transient",
	[DDB_C_SKEW] = "clock_skew",
};

const char *ddb_class_name(enum ddb_class cls)
{
	return (unsigned)cls < DDB_C_COUNT ? class_names[cls] : "?";
}

void ddb_quota_init(struct ddb_quota *q, const struct ddb_retry_policy *p)
{
	q->tokens = p->quota_max;
}

struct ddb_retry ddb_retry_decide(const struct ddb_retry_policy *p, struct ddb_quota *q,
				  struct ddb_verdict v, int attempts, int64_t now_ms,
				  int64_t deadline_ms, double r)
{
	struct ddb_retry d = {false, 0, 0, NULL};
	if (v.cls != DDB_C_THROTTLED && v.cls != DDB_C_TRANSIENT && v.cls != DDB_C_SKEW) {
		d.why = "not retryable";
		return d;
	}
	if (attempts >= p->max_attempts) {
		d.why = "attempts";
		return d;
	}
	if (v.cls == DDB_C_SKEW) {
		d.retry = now_ms < deadline_ms;
		d.why = d.retry ? NULL : "deadline";
		return d;
	}
	int cost = v.timeout ? p->timeout_cost : p->retry_cost;
	if (q->tokens < cost) {
		d.why = "quota";
		return d;
	}
	int64_t ceiling = v.cls == DDB_C_THROTTLED ? p->throttle_base_ms : p->base_ms;
	for (int i = 1; i < attempts && ceiling < p->cap_ms; i++)
		ceiling *= 2;
	if (ceiling > p->cap_ms)
		ceiling = p->cap_ms;
	if (r < 0 || r >= 1)
		r = 0;
	d.delay_ms = (int64_t)(r * (double)ceiling);
	if (now_ms + d.delay_ms >= deadline_ms) {
		d.delay_ms = 0;
		d.why = "deadline";
		return d;
	}
	q->tokens -= cost;
	d.retry = true;
	d.cost = cost;
	return d;
}

void ddb_quota_success(const struct ddb_retry_policy *p, struct ddb_quota *q, int spent)
{
	q->tokens += spent > 0 ? spent : 1;
	if (q->tokens > p->quota_max)
		q->tokens = p->quota_max;
}
