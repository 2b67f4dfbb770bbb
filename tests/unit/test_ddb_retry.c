/*
 * test_ddb_retry: the classification table (status, type, message -> class
 * and error.type), transport failures, and the standard retry mode's
 * decisions with injected randomness: backoff ceilings, attempts, quota,
 * deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "core/store/dynamodb/ddb_retry.h"

struct class_case {
	long status;
	const char *type;
	const char *message;
	enum ddb_class cls;
	const char *error_type;
};

static const struct class_case class_cases[] = {
	{200, "", NULL, DDB_C_OK, NULL},
	{400, "ConditionalCheckFailedException", "The conditional request failed", DDB_C_REFUSED,
	 "ConditionalCheckFailedException"},
	{400, "ConditionalCheckFailed", NULL, DDB_C_REFUSED, "ConditionalCheckFailed"},
	{400, "ResourceNotFoundException", "Requested resource not found", DDB_C_NO_TABLE,
	 "ResourceNotFoundException"},
	{400, "AccessDeniedException", "not authorized", DDB_C_FATAL, "AccessDeniedException"},
	{403, "AccessDenied", "", DDB_C_FATAL, "AccessDenied"},
	{400, "UnrecognizedClientException", "invalid token", DDB_C_FATAL,
	 "UnrecognizedClientException"},
	{400, "InvalidSignatureException", "The request signature we calculated does not match",
	 DDB_C_FATAL, "InvalidSignatureException"},
	{403, "SignatureDoesNotMatch", "The request signature we calculated does not match",
	 DDB_C_FATAL, "SignatureDoesNotMatch"},
	{400, "ValidationException", "bad", DDB_C_FATAL, "ValidationException"},
	{400, "MissingAuthenticationTokenException", "", DDB_C_FATAL,
	 "MissingAuthenticationTokenException"},
	{400, "ExpiredTokenException", "expired", DDB_C_TRANSIENT, "ExpiredTokenException"},
	{400, "ProvisionedThroughputExceededException", "", DDB_C_THROTTLED,
	 "ProvisionedThroughputExceededException"},
	{400, "ThrottlingException", "", DDB_C_THROTTLED, "ThrottlingException"},
	{400, "RequestLimitExceeded", "", DDB_C_THROTTLED, "RequestLimitExceeded"},
	{400, "ThrottlingError", "", DDB_C_THROTTLED, "ThrottlingError"},
	{400, "TransactionConflict", "", DDB_C_TRANSIENT, "TransactionConflict"},
	{500, "InternalServerError", "", DDB_C_TRANSIENT, "InternalServerError"},
	{503, "ServiceUnavailable", "", DDB_C_TRANSIENT, "ServiceUnavailable"},
	{400, "InvalidSignatureException", "Signature expired: 20261129T000000Z is now earlier",
	 DDB_C_SKEW, "InvalidSignatureException"},
	{403, "SignatureDoesNotMatch", "Signature not yet current: 2026 is still later", DDB_C_SKEW,
	 "SignatureDoesNotMatch"},
	{403, "RequestTimeTooSkewed", "", DDB_C_SKEW, "RequestTimeTooSkewed"},
	/* no type: the status decides */
	{500, "", "", DDB_C_TRANSIENT, "InternalServerError"},
	{502, "", "", DDB_C_TRANSIENT, "BadGateway"},
	{503, "", "", DDB_C_TRANSIENT, "ServiceUnavailable"},
	{504, "", "", DDB_C_TRANSIENT, "GatewayTimeout"},
	{429, "", "", DDB_C_THROTTLED, "TooManyRequests"},
	{403, "", "", DDB_C_FATAL, "AccessDenied"},
	{599, "", "", DDB_C_TRANSIENT, "ServerError"},
	{400, "SomethingNew", "", DDB_C_FATAL, "UnknownError"},
	{418, NULL, NULL, DDB_C_FATAL, "UnknownError"},
};

static void test_classify_table(void **state)
{
	for (size_t i = 0; i < sizeof class_cases / sizeof class_cases[0]; i++) {
		const struct class_case *t = &class_cases[i];
		struct ddb_verdict v = ddb_classify(t->status, t->type, t->message);
		if (v.cls != t->cls)
			fail_msg("%ld %s: class %s, want %s", t->status, t->type ? t->type : "-",
				 ddb_class_name(v.cls), ddb_class_name(t->cls));
		if (t->error_type)
			assert_string_equal(v.error_type, t->error_type);
		else
			assert_null(v.error_type);
	}
	assert_true(ddb_classify(504, "", "").timeout);
	assert_false(ddb_classify(500, "", "").timeout);
}

static void test_classify_curl(void **state)
{
	static const struct {
		int code;
		enum ddb_class cls;
		const char *type;
		bool timeout;
	} cases[] = {
		{CURLE_OPERATION_TIMEDOUT, DDB_C_TRANSIENT, "Timeout", true},
		{CURLE_COULDNT_CONNECT, DDB_C_TRANSIENT, "ConnectionError", false},
		{CURLE_RECV_ERROR, DDB_C_TRANSIENT, "ConnectionError", false},
		{CURLE_GOT_NOTHING, DDB_C_TRANSIENT, "ConnectionError", false},
		{CURLE_COULDNT_RESOLVE_HOST, DDB_C_TRANSIENT, "ConnectionError", false},
		{CURLE_PEER_FAILED_VERIFICATION, DDB_C_FATAL, "TlsVerification", false},
		{CURLE_URL_MALFORMAT, DDB_C_FATAL, "BadEndpoint", false},
		{9999, DDB_C_TRANSIENT, "ConnectionError", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ddb_verdict v = ddb_classify_curl(cases[i].code);
		assert_int_equal(v.cls, cases[i].cls);
		assert_string_equal(v.error_type, cases[i].type);
		assert_int_equal(v.timeout, cases[i].timeout);
	}
}

static const struct ddb_verdict transient = {DDB_C_TRANSIENT, "InternalServerError", false};
static const struct ddb_verdict throttled = {DDB_C_THROTTLED, "ThrottlingException", false};
static const struct ddb_verdict timeout = {DDB_C_TRANSIENT, "Timeout", true};

/* delay = r * min(cap, base * 2^(attempt-1)), r injected */
static void test_backoff_full_jitter(void **state)
{
	const struct ddb_retry_policy *p = &ddb_retry_standard;
	static const struct {
		struct ddb_verdict v;
		int attempts;
		double r;
		int64_t delay;
	} cases[] = {
		{{DDB_C_TRANSIENT, "x", false}, 1, 0.0, 0},
		{{DDB_C_TRANSIENT, "x", false}, 1, 0.5, 25},
		{{DDB_C_TRANSIENT, "x", false}, 1, 0.999, 49},
		{{DDB_C_TRANSIENT, "x", false}, 2, 0.5, 50},
		{{DDB_C_THROTTLED, "x", false}, 1, 0.5, 250},
		{{DDB_C_THROTTLED, "x", false}, 2, 0.5, 500},
		{{DDB_C_TRANSIENT, "x", false}, 1, 1.5, 0}, /* out of range: no wait */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ddb_quota q;
		ddb_quota_init(&q, p);
		struct ddb_retry d = ddb_retry_decide(p, &q, cases[i].v, cases[i].attempts, 0,
						      INT64_MAX, cases[i].r);
		assert_true(d.retry);
		assert_int_equal(d.delay_ms, cases[i].delay);
	}
}

static void test_backoff_cap(void **state)
{
	struct ddb_retry_policy p = ddb_retry_standard;
	p.max_attempts = 100;
	struct ddb_quota q;
	ddb_quota_init(&q, &p);
	struct ddb_retry d = ddb_retry_decide(&p, &q, throttled, 40, 0, INT64_MAX, 0.5);
	assert_true(d.retry);
	assert_int_equal(d.delay_ms, 10000); /* 0.5 * the 20 s cap */
}

static void test_attempts_and_classes(void **state)
{
	const struct ddb_retry_policy *p = &ddb_retry_standard;
	struct ddb_quota q;
	ddb_quota_init(&q, p);
	assert_true(ddb_retry_decide(p, &q, transient, 2, 0, INT64_MAX, 0).retry);
	struct ddb_retry d = ddb_retry_decide(p, &q, transient, 3, 0, INT64_MAX, 0);
	assert_false(d.retry);
	assert_string_equal(d.why, "attempts");
	static const enum ddb_class never[] = {DDB_C_OK, DDB_C_REFUSED, DDB_C_NO_TABLE,
					       DDB_C_FATAL};
	for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
		d = ddb_retry_decide(p, &q, (struct ddb_verdict){never[i], "x", false}, 1, 0,
				     INT64_MAX, 0);
		assert_false(d.retry);
		assert_string_equal(d.why, "not retryable");
	}
	/* a skew retries at once and costs nothing */
	int before = q.tokens;
	d = ddb_retry_decide(p, &q, (struct ddb_verdict){DDB_C_SKEW, "x", false}, 1, 0, 10, 0.9);
	assert_true(d.retry);
	assert_int_equal(d.delay_ms, 0);
	assert_int_equal(q.tokens, before);
}

static void test_quota(void **state)
{
	const struct ddb_retry_policy *p = &ddb_retry_standard;
	struct ddb_quota q;
	ddb_quota_init(&q, p);
	assert_int_equal(q.tokens, 500);
	struct ddb_retry d = ddb_retry_decide(p, &q, transient, 1, 0, INT64_MAX, 0);
	assert_int_equal(d.cost, 5);
	assert_int_equal(q.tokens, 495);
	d = ddb_retry_decide(p, &q, timeout, 1, 0, INT64_MAX, 0);
	assert_int_equal(d.cost, 10);
	assert_int_equal(q.tokens, 485);
	/* a success gives back what its retries took */
	ddb_quota_success(p, &q, 15);
	assert_int_equal(q.tokens, 500);
	/* and never more than the maximum */
	ddb_quota_success(p, &q, 0);
	assert_int_equal(q.tokens, 500);
	/* drain it: 100 retries of 5 */
	int n = 0;
	while (ddb_retry_decide(p, &q, transient, 1, 0, INT64_MAX, 0).retry)
		n++;
	assert_int_equal(n, 100);
	d = ddb_retry_decide(p, &q, transient, 1, 0, INT64_MAX, 0);
	assert_false(d.retry);
	assert_string_equal(d.why, "quota");
	/* a success without retries gives one token back */
	ddb_quota_success(p, &q, 0);
	assert_int_equal(q.tokens, 1);
	ddb_quota_success(p, &q, 0);
	ddb_quota_success(p, &q, 0);
	ddb_quota_success(p, &q, 0);
	ddb_quota_success(p, &q, 0);
	assert_true(ddb_retry_decide(p, &q, transient, 1, 0, INT64_MAX, 0).retry);
}

static void test_deadline(void **state)
{
	const struct ddb_retry_policy *p = &ddb_retry_standard;
	struct ddb_quota q;
	ddb_quota_init(&q, p);
	/* 25 ms of backoff at t=1000 with the deadline at 1020: no retry */
	struct ddb_retry d = ddb_retry_decide(p, &q, transient, 1, 1000, 1020, 0.5);
	assert_false(d.retry);
	assert_string_equal(d.why, "deadline");
	assert_int_equal(q.tokens, 500); /* nothing taken */
	d = ddb_retry_decide(p, &q, transient, 1, 1000, 1026, 0.5);
	assert_true(d.retry);
	assert_int_equal(d.delay_ms, 25);
	d = ddb_retry_decide(p, &q, (struct ddb_verdict){DDB_C_SKEW, "x", false}, 1, 10, 10, 0);
	assert_false(d.retry);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_classify_curl),
		cmocka_unit_test(test_backoff_full_jitter),
		cmocka_unit_test(test_backoff_cap),
		cmocka_unit_test(test_attempts_and_classes),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
