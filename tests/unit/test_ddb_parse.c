/*
 * test_ddb_parse: every answer and error shape ddb_json parses, good and
 * bad (the answers of UpdateItem, GetItem, Scan, DescribeTable, the
 * errors and cancellation reasons), and the CRC32 and UTF-8 checks an
 * answer passes first. The request bodies: test_ddb_json.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/dynamodb/store_dynamodb.h"

static void test_parse_update_output(void **state)
{
	const char *body =
		"{\"Attributes\":{\"pk\":{\"S\":\"LOCK#a\"},\"_type\":{\"S\":\"LOCK\"},"
		"\"owner\":{\"S\":\"o1\"},\"rvn\":{\"S\":\"r1\"},\"fence\":{\"N\":\"3\"},"
		"\"leaseMs\":{\"N\":\"30000\"},\"holder\":{\"S\":\"pod\"},\"exp\":{\"N\":\"99\"},"
		"\"other\":{\"M\":{}}}}";
	struct lock_item it;
	char err[DDB_ERR_MAX];
	assert_true(ddb_parse_output(DDB_UPDATE_ITEM, body, strlen(body), "exp", &it, err));
	assert_true(it.exists && it.has_owner && it.has_rvn && it.has_lease && it.has_fence);
	assert_string_equal(it.owner, "o1");
	assert_string_equal(it.rvn, "r1");
	assert_string_equal(it.holder, "pod");
	assert_string_equal(it.type, "LOCK");
	assert_int_equal(it.fence, 3);
	assert_int_equal(it.lease_ms, 30000);
	assert_int_equal(it.ttl, 99);
	assert_false(it.has_waiter);
	assert_string_equal(it.waiter, "");
	/* without a TTL attribute configured, exp is somebody else's */
	assert_true(ddb_parse_output(DDB_UPDATE_ITEM, body, strlen(body), NULL, &it, err));
	assert_int_equal(it.ttl, 0);
	/* an announced waiter */
	const char *announced = "{\"Attributes\":{\"owner\":{\"S\":\"o1\"},\"rvn\":{\"S\":\"r1\"},"
				"\"leaseMs\":{\"N\":\"3000\"},\"waiter\":{\"S\":\"w1\"},"
				"\"waiterMs\":{\"N\":\"1000\"}}}";
	assert_true(
		ddb_parse_output(DDB_UPDATE_ITEM, announced, strlen(announced), NULL, &it, err));
	assert_true(it.has_waiter);
	assert_string_equal(it.waiter, "w1");
	assert_int_equal(it.waiter_ms, 1000);
	assert_string_equal(it.rvn, "r1");
}

static void test_parse_get_output(void **state)
{
	struct lock_item it;
	char err[DDB_ERR_MAX];
	assert_true(ddb_parse_output(DDB_GET_ITEM, "{}", 2, NULL, &it, err));
	assert_false(it.exists);
	const char *released = "{\"Item\":{\"pk\":{\"S\":\"LOCK#a\"},\"rvn\":{\"S\":\"r\"},"
			       "\"fence\":{\"N\":\"9223372036854775807\"}}}";
	assert_true(ddb_parse_output(DDB_GET_ITEM, released, strlen(released), NULL, &it, err));
	assert_true(it.exists && !it.has_owner && it.has_rvn && !it.has_lease);
	assert_int_equal(it.fence, INT64_MAX);
	assert_true(ddb_parse_output(DDB_DELETE_ITEM, "{}", 2, NULL, &it, err));
	assert_false(it.exists);
	assert_true(ddb_parse_output(DDB_TRANSACT_WRITE_ITEMS, "{}", 2, NULL, &it, err));
	assert_false(it.exists);
}

static void test_parse_bad_outputs(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[1]",
		"{}", /* UpdateItem without Attributes */
		"{\"Attributes\":[]}",
		"{\"Attributes\":{\"owner\":{\"N\":\"1\"}}}",
		"{\"Attributes\":{\"owner\":{\"S\":1}}}",
		"{\"Attributes\":{\"owner\":\"x\"}}",
		"{\"Attributes\":{\"owner\":{\"S\":\"x\",\"N\":\"1\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"0\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"-5\"}}}",
		"{\"Attributes\":{\"exp\":{\"S\":\"soon\"}}}",
		"{\"Attributes\":{\"waiter\":{\"N\":\"1\"}}}",
		"{\"Attributes\":{\"waiterMs\":{\"S\":\"1000\"}}}",
		"{\"Attributes\":{\"rvn\":{\"S\":\"012345678901234567890123456789012345678901234567"
		"8901234567890123456789\"}}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct lock_item it;
		char err[DDB_ERR_MAX] = "";
		if (ddb_parse_output(DDB_UPDATE_ITEM, bad[i], strlen(bad[i]), "exp", &it, err))
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
	}
}

/* fence and _type are read as they are, for the core to refuse the item
 * by its lock's name (core/lt_item.c): a fence that is no int64, whatever
 * DynamoDB's 38-digit numbers hold, is fence_bad, never wrapped. */
static void test_parse_foreign_values(void **state)
{
	static const struct {
		const char *body;
		bool fence_bad;
		int64_t fence;
		const char *type;
	} cases[] = {
		{"{\"Attributes\":{\"fence\":{\"N\":\"1.5\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"1e3\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"9223372036854775808\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"-9223372036854775809\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"18446744073709551621\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"99999999999999999999999999999999999999\"}}}",
		 true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"S\":\"1\"}}}", true, 0, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"-5\"}}}", false, -5, ""},
		{"{\"Attributes\":{\"fence\":{\"N\":\"9223372036854775807\"}}}", false, INT64_MAX,
		 ""},
		{"{\"Attributes\":{\"_type\":{\"S\":\"A_TYPE_TOO_LONG_XX\"}}}", false, 0,
		 "A_TYPE_TOO_LONG"},
		{"{\"Attributes\":{\"_type\":{\"N\":\"1\"}}}", false, 0, ""},
		{"{\"Attributes\":{\"_type\":\"LOCK\"}}", false, 0, ""},
		{"{\"Attributes\":{\"_type\":{\"S\":\"JOB\"}}}", false, 0, "JOB"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct lock_item it;
		char err[DDB_ERR_MAX] = "";
		const char *b = cases[i].body;
		if (!ddb_parse_output(DDB_UPDATE_ITEM, b, strlen(b), NULL, &it, err))
			fail_msg("refused: %s (%s)", b, err);
		assert_true(it.exists);
		assert_int_equal(it.fence_bad, cases[i].fence_bad);
		assert_int_equal(it.fence, cases[i].fence);
		assert_int_equal(it.has_fence, strstr(b, "fence") != NULL);
		assert_string_equal(it.type, cases[i].type);
	}
}

/* freed and freedBy: written only by a release from outside the holding
 * replica; an odd value reads as no marker or not forced, never an error. */
static void test_parse_freed(void **state)
{
	static const struct {
		const char *body;
		int64_t freed;
		bool forced;
	} cases[] = {
		{"{\"Attributes\":{\"owner\":{\"S\":\"o\"}}}", 0, false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"7\"},\"freedBy\":{\"S\":\"token\"}}}", 7,
		 false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"9223372036854775807\"},"
		 "\"freedBy\":{\"S\":\"force\"}}}",
		 INT64_MAX, true},
		{"{\"Attributes\":{\"freedBy\":{\"S\":\"force\"},\"freed\":{\"N\":\"3\"}}}", 3,
		 true},
		{"{\"Attributes\":{\"freed\":{\"N\":\"3\"}}}", 3, false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"3\"},\"freedBy\":{\"S\":\"FORCE\"}}}", 3,
		 false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"3\"},\"freedBy\":{\"S\":\"forced\"}}}", 3,
		 false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"3\"},\"freedBy\":{\"N\":\"1\"}}}", 3, false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"3\"},\"freedBy\":\"force\"}}", 3, false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"3\"},"
		 "\"freedBy\":{\"S\":\"force\",\"N\":\"1\"}}}",
		 3, false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"1.5\"},\"freedBy\":{\"S\":\"force\"}}}", 0,
		 false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"18446744073709551621\"}}}", 0, false},
		{"{\"Attributes\":{\"freed\":{\"S\":\"7\"},\"freedBy\":{\"S\":\"token\"}}}", 0,
		 false},
		{"{\"Attributes\":{\"freed\":{\"NULL\":true}}}", 0, false},
		{"{\"Attributes\":{\"freed\":7}}", 0, false},
		{"{\"Attributes\":{\"freedBy\":{\"S\":\"force\"}}}", 0, false},
		{"{\"Attributes\":{\"freed\":{\"N\":\"-2\"}}}", -2, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct lock_item it;
		char err[DDB_ERR_MAX] = "";
		const char *b = cases[i].body;
		if (!ddb_parse_output(DDB_UPDATE_ITEM, b, strlen(b), NULL, &it, err))
			fail_msg("refused: %s (%s)", b, err);
		if (it.freed != cases[i].freed || it.freed_forced != cases[i].forced)
			fail_msg("%s: freed %lld forced %d", b, (long long)it.freed,
				 it.freed_forced);
	}
	/* and in a GetItem's Item, as any attribute */
	const char *got = "{\"Item\":{\"pk\":{\"S\":\"LOCK#a\"},\"rvn\":{\"S\":\"r\"},"
			  "\"freed\":{\"N\":\"12\"},\"freedBy\":{\"S\":\"force\"}}}";
	struct lock_item it;
	char err[DDB_ERR_MAX];
	assert_true(ddb_parse_output(DDB_GET_ITEM, got, strlen(got), NULL, &it, err));
	assert_int_equal(it.freed, 12);
	assert_true(it.freed_forced);
}

static void test_parse_int64(void **state)
{
	static const struct {
		const char *s;
		bool ok;
		int64_t v;
	} cases[] = {
		{"0", true, 0},
		{"42", true, 42},
		{"-9223372036854775808", true, INT64_MIN},
		{"9223372036854775807", true, INT64_MAX},
		{"9223372036854775808", false, 0},
		{"-9223372036854775809", false, 0},
		{"", false, 0},
		{"-", false, 0},
		{"+1", false, 0},
		{" 1", false, 0},
		{"1 ", false, 0},
		{"0x10", false, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t v = -1;
		bool ok = ddb_parse_int64(cases[i].s, &v);
		assert_int_equal(ok, cases[i].ok);
		if (ok)
			assert_int_equal(v, cases[i].v);
	}
}

static void test_parse_errors(void **state)
{
	struct ddb_error e;
	char err[DDB_ERR_MAX];
	const char *rnf =
		"{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\","
		"\"message\":\"Requested resource not found\"}";
	assert_true(ddb_parse_error(rnf, strlen(rnf), NULL, &e, err));
	assert_string_equal(e.type, "ResourceNotFoundException");
	assert_string_equal(e.message, "Requested resource not found");
	assert_false(e.has_item);

	const char *upper =
		"{\"__type\":\"com.amazon.coral.service#UnrecognizedClientException\","
		"\"Message\":\"The security token included in the request is invalid.\"}";
	assert_true(ddb_parse_error(upper, strlen(upper), NULL, &e, err));
	assert_string_equal(e.type, "UnrecognizedClientException");
	assert_string_equal(e.message, "The security token included in the request is invalid.");

	const char *ccf =
		"{\"__type\":\"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException\","
		"\"message\":\"The conditional request failed\",\"Item\":{\"owner\":{\"S\":\"x\"},"
		"\"rvn\":{\"S\":\"y\"},\"leaseMs\":{\"N\":\"1000\"},\"fence\":{\"N\":\"2\"}}}";
	assert_true(ddb_parse_error(ccf, strlen(ccf), NULL, &e, err));
	assert_string_equal(e.type, "ConditionalCheckFailedException");
	assert_true(e.has_item && e.item.exists);
	assert_string_equal(e.item.owner, "x");
	assert_int_equal(e.item.fence, 2);

	const char *ccf_none =
		"{\"__type\":\"ConditionalCheckFailedException\",\"message\":\"no\"}";
	assert_true(ddb_parse_error(ccf_none, strlen(ccf_none), NULL, &e, err));
	assert_string_equal(e.type, "ConditionalCheckFailedException");
	assert_false(e.has_item);

	const char *tce =
		"{\"__type\":\"com.amazonaws.dynamodb.v20120810#TransactionCanceledException\","
		"\"Message\":\"Transaction cancelled, please refer cancellation reasons for "
		"specific reasons [None, ConditionalCheckFailed]\",\"CancellationReasons\":["
		"{\"Code\":\"None\"},{\"Code\":\"ConditionalCheckFailed\",\"Message\":\"The "
		"conditional request failed\",\"Item\":{\"owner\":{\"S\":\"z\"},"
		"\"fence\":{\"N\":\"7\"}}}]}";
	assert_true(ddb_parse_error(tce, strlen(tce), NULL, &e, err));
	assert_string_equal(e.type, "TransactionCanceledException");
	assert_int_equal(e.nreasons, 2);
	assert_string_equal(e.reasons[0].code, "None");
	assert_false(e.reasons[0].has_item);
	assert_string_equal(e.reasons[1].code, "ConditionalCheckFailed");
	assert_true(e.reasons[1].has_item);
	assert_string_equal(e.reasons[1].item.owner, "z");
	assert_int_equal(e.reasons[1].item.fence, 7);

	const char *xml =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ErrorResponse><Errors><Error>"
		"<Code>SignatureDoesNotMatch</Code><Message>The request signature we "
		"calculated does not match &amp; &lt;so&gt;</Message></Error></Errors>"
		"<RequestId>x</RequestId></ErrorResponse>";
	assert_true(ddb_parse_error(xml, strlen(xml), NULL, &e, err));
	assert_string_equal(e.type, "SignatureDoesNotMatch");
	assert_string_equal(e.message, "The request signature we calculated does not match & <so>");

	const char *html = "<html>502 Bad Gateway</html>";
	assert_true(ddb_parse_error(html, strlen(html), NULL, &e, err));
	assert_string_equal(e.type, "");
	assert_string_equal(e.message, html);

	assert_true(ddb_parse_error("oops\n\x01", 6, NULL, &e, err));
	assert_string_equal(e.type, "");
	assert_string_equal(e.message, "oops  ");

	assert_true(ddb_parse_error("", 0, NULL, &e, err));
	assert_string_equal(e.type, "");

	/* bounded: a huge message is cut, a huge type too */
	char big[2000];
	int n = snprintf(big, sizeof big, "{\"__type\":\"%0300d\",\"message\":\"%01000d\"}", 1, 2);
	assert_true(ddb_parse_error(big, (size_t)n, NULL, &e, err));
	assert_int_equal(strlen(e.type), DDB_TYPE_MAX - 1);
	assert_int_equal(strlen(e.message), STORE_MSG_MAX - 1);

	/* a malformed Item is an error, not a silently empty item */
	const char *bad = "{\"__type\":\"ConditionalCheckFailedException\",\"Item\":{\"leaseMs\":{"
			  "\"N\":\"x\"}}}";
	assert_false(ddb_parse_error(bad, strlen(bad), NULL, &e, err));
	assert_non_null(strstr(err, "leaseMs"));
}

static void test_parse_many_reasons(void **state)
{
	char body[1024];
	int n = snprintf(body, sizeof body,
			 "{\"__type\":\"TransactionCanceledException\","
			 "\"CancellationReasons\":[");
	for (int i = 0; i < 10; i++)
		n += snprintf(body + n, sizeof body - (size_t)n, "%s{\"Code\":\"None\"}",
			      i ? "," : "");
	n += snprintf(body + n, sizeof body - (size_t)n, "]}");
	struct ddb_error e;
	char err[DDB_ERR_MAX];
	assert_true(ddb_parse_error(body, (size_t)n, NULL, &e, err));
	assert_int_equal(e.nreasons, DDB_REASONS_MAX);
}

static void test_parse_table(void **state)
{
	struct ddb_table_desc d;
	char err[DDB_ERR_MAX];
	const char *t =
		"{\"Table\":{\"TableName\":\"Shop\",\"TableStatus\":\"ACTIVE\","
		"\"KeySchema\":[{\"AttributeName\":\"SK\",\"KeyType\":\"RANGE\"},"
		"{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"}],"
		"\"AttributeDefinitions\":[{\"AttributeName\":\"PK\",\"AttributeType\":\"S\"},"
		"{\"AttributeName\":\"SK\",\"AttributeType\":\"N\"},"
		"{\"AttributeName\":\"G\",\"AttributeType\":\"B\"}]}}";
	assert_true(ddb_parse_table(t, strlen(t), &d, err));
	assert_string_equal(d.pk, "PK");
	assert_string_equal(d.sk, "SK");
	assert_int_equal(d.pk_type, 'S');
	assert_int_equal(d.sk_type, 'N');
	assert_string_equal(d.status, "ACTIVE");

	const char *c =
		"{\"TableDescription\":{\"TableStatus\":\"CREATING\",\"KeySchema\":"
		"[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":"
		"[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}]}}";
	assert_true(ddb_parse_table(c, strlen(c), &d, err));
	assert_string_equal(d.pk, "pk");
	assert_string_equal(d.sk, "");
	assert_string_equal(d.status, "CREATING");

	static const char *const bad[] = {
		"{}",
		"{\"Table\":{}}",
		"{\"Table\":{\"KeySchema\":[]}}",
		"{\"Table\":{\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":\"RANGE\"}]}}",
		"{\"Table\":{\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":\"HASH\"},"
		"{\"AttributeName\":\"b\",\"KeyType\":\"HASH\"}]}}",
		"{\"Table\":{\"KeySchema\":[{\"AttributeName\":\"\",\"KeyType\":\"HASH\"}]}}",
		"{\"Table\":{\"KeySchema\":[{\"AttributeName\":1,\"KeyType\":\"HASH\"}]}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (ddb_parse_table(bad[i], strlen(bad[i]), &d, err))
			fail_msg("accepted: %s", bad[i]);
}

/* DescribeTable of a global table (version 2019.11.21): its replicas'
 * regions, its version, its ARN; of a table that is not global: none. */
static void test_parse_table_global(void **state)
{
	struct ddb_table_desc d;
	char err[DDB_ERR_MAX];
	const char *g =
		"{\"Table\":{\"TableName\":\"locks\",\"TableStatus\":\"ACTIVE\","
		"\"TableArn\":\"arn:aws:dynamodb:us-east-1:123456789012:table/locks\","
		"\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
		"\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
		"\"GlobalTableVersion\":\"2019.11.21\","
		"\"Replicas\":[{\"RegionName\":\"us-east-1\",\"ReplicaStatus\":\"ACTIVE\"},"
		"{\"RegionName\":\"eu-west-1\",\"ReplicaStatus\":\"ACTIVE\"}]}}";
	assert_true(ddb_parse_table(g, strlen(g), &d, err));
	assert_int_equal(d.nreplicas, 2);
	assert_string_equal(d.replicas, "us-east-1,eu-west-1");
	assert_string_equal(d.global_version, "2019.11.21");
	assert_string_equal(d.arn, "arn:aws:dynamodb:us-east-1:123456789012:table/locks");

	const char *one =
		"{\"Table\":{\"TableStatus\":\"ACTIVE\",\"KeySchema\":[{\"AttributeName\":"
		"\"pk\",\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":[],"
		"\"TableArn\":\"arn:aws:dynamodb:eu-west-1:1:table/t\"}}";
	assert_true(ddb_parse_table(one, strlen(one), &d, err));
	assert_int_equal(d.nreplicas, 0);
	assert_string_equal(d.replicas, "");
	assert_string_equal(d.global_version, "");
	assert_string_equal(d.arn, "arn:aws:dynamodb:eu-west-1:1:table/t");

	/* replicas removed: the version stays, no replica (not global) */
	const char *gone = "{\"Table\":{\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
			   "\"HASH\"}],\"GlobalTableVersion\":\"2019.11.21\",\"Replicas\":[]}}";
	assert_true(ddb_parse_table(gone, strlen(gone), &d, err));
	assert_int_equal(d.nreplicas, 0);
	assert_string_equal(d.global_version, "2019.11.21");

	/* many replicas: all counted, the list cut to its room */
	char big[4096];
	int n = snprintf(big, sizeof big,
			 "{\"Table\":{\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
			 "\"HASH\"}],\"Replicas\":[");
	for (int i = 0; i < 30; i++)
		n += snprintf(big + n, sizeof big - (size_t)n,
			      "%s{\"RegionName\":\"xx-region-%d\"}", i ? "," : "", i);
	snprintf(big + n, sizeof big - (size_t)n, "]}}");
	assert_true(ddb_parse_table(big, strlen(big), &d, err));
	assert_int_equal(d.nreplicas, 30);
	assert_true(strlen(d.replicas) < sizeof d.replicas);
	assert_memory_equal(d.replicas, "xx-region-0,xx-region-1,", 24);
}

/* The region an AWS endpoint names; none for other hosts. */
static void test_endpoint_region(void **state)
{
	static const struct {
		const char *host, *region;
	} cases[] = {
		{"dynamodb.us-east-1.amazonaws.com", "us-east-1"},
		{"dynamodb.eu-west-1.amazonaws.com:443", "eu-west-1"},
		{"dynamodb-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"},
		{"dynamodb.cn-north-1.amazonaws.com.cn", "cn-north-1"},
		{"123456789012.ddb.ap-south-1.amazonaws.com", "ap-south-1"},
		{"vpce-0a1b-xyz.dynamodb.eu-central-1.vpce.amazonaws.com", "eu-central-1"},
		{"127.0.0.1:8000", NULL},
		{"localhost", NULL},
		{"dynamodb.local", NULL},
		{"amazonaws.com", NULL},
		{"mydynamodb.us-east-1.amazonaws.com", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char r[64] = "";
		bool got = store_dynamodb_endpoint_region(cases[i].host, r, sizeof r);
		if (cases[i].region == NULL) {
			if (got)
				fail_msg("%s: region %s", cases[i].host, r);
		} else {
			if (!got)
				fail_msg("%s: no region", cases[i].host);
			assert_string_equal(r, cases[i].region);
		}
	}
}

static void test_crc32_and_utf8(void **state)
{
	assert_int_equal(ddb_crc32("123456789", 9), 0xCBF43926u);
	assert_int_equal(ddb_crc32("", 0), 0);
	/* the CRC32 DynamoDB sends for an empty JSON object */
	assert_int_equal(ddb_crc32("{}", 2), 2745614147u);
	/* eight bytes a step: the same as a bit at a time, at every length
	 * and alignment */
	unsigned char data[300];
	uint32_t seed = 12345;
	for (size_t i = 0; i < sizeof data; i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (unsigned char)(seed >> 16);
	}
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; off + len <= sizeof data; len++) {
			uint32_t c = 0xFFFFFFFFu;
			for (size_t i = 0; i < len; i++) {
				c ^= data[off + i];
				for (int b = 0; b < 8; b++)
					c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			}
			assert_int_equal(ddb_crc32(data + off, len), c ^ 0xFFFFFFFFu);
		}
	assert_true(ddb_utf8_valid("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12));
	assert_false(ddb_utf8_valid("\xc0\xaf", 2));	     /* overlong */
	assert_false(ddb_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
	assert_false(ddb_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	assert_false(ddb_utf8_valid("\xe2\x82", 2));	     /* truncated */
	assert_false(ddb_utf8_valid("a\0b", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_update_output),
		cmocka_unit_test(test_parse_get_output),
		cmocka_unit_test(test_parse_bad_outputs),
		cmocka_unit_test(test_parse_foreign_values),
		cmocka_unit_test(test_parse_freed),
		cmocka_unit_test(test_parse_int64),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_many_reasons),
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_table_global),
		cmocka_unit_test(test_endpoint_region),
		cmocka_unit_test(test_crc32_and_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
