/*
 * test_ddb_fast: the fast reader of DynamoDB answers (ddb_json_fast.c)
 * reads the plain form without cJSON, leaves every other body to cJSON,
 * and every body reads exactly as cJSON's reader alone reads it: the same
 * verdict, the same message, the same item, byte for byte. Malformed
 * bodies: truncated at every byte, wrong types, duplicate keys, escapes,
 * control characters, numbers out of range, trailing bytes, too many
 * attributes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/store/dynamodb/ddb_json_int.h"

#define RENEWED                                                                                    \
	"{\"Attributes\":{\"pk\":{\"S\":\"LOCK#a\"},\"_type\":{\"S\":\"LOCK\"},"                   \
	"\"owner\":{\"S\":\"o1\"},\"rvn\":{\"S\":\"r1\"},\"fence\":{\"N\":\"3\"},"                 \
	"\"leaseMs\":{\"N\":\"30000\"},\"holder\":{\"S\":\"pod\"},\"exp\":{\"N\":\"99\"}}}"

/* Reads body with op both ways (the fast reader first, then cJSON alone)
 * and checks they agree; returns what the fast reader made of it. */
static enum ddb_fast same_output(enum ddb_op op, const char *body, size_t len, bool *ok)
{
	struct lock_item a, b;
	char ea[DDB_ERR_MAX] = "", eb[DDB_ERR_MAX] = "";
	memset(&a, 0x5a, sizeof a);
	memset(&b, 0x5a, sizeof b);
	enum ddb_fast f = ddb_fast_output(op, body, len, "exp", &a, ea);
	bool okb = ddb_parse_output_cjson(op, body, len, "exp", &b, eb);
	if (f == DDB_FAST_OTHER) {
		/* and the public reader then is cJSON's */
		memset(&a, 0x5a, sizeof a);
		bool oka = ddb_parse_output(op, body, len, "exp", &a, ea);
		assert_int_equal(oka, okb);
	} else {
		if ((f == DDB_FAST_OK) != okb)
			fail_msg("fast %d, cJSON %d (%s) on %.*s", f, okb, eb, (int)len, body);
	}
	assert_string_equal(ea, eb);
	if (okb)
		assert_memory_equal(&a, &b, sizeof a);
	if (ok)
		*ok = okb;
	return f;
}

static void test_plain_answers_are_fast(void **state)
{
	static const char *const bodies[] = {
		RENEWED,
		" {\r\n\t\"Attributes\" : { \"owner\" : { \"S\" : \"o\" } } } \n",
		"{\"Attributes\":{}}",
		"{\"Attributes\":{\"other\":{\"X\":\"\"}}}",
	};
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		bool ok;
		if (same_output(DDB_UPDATE_ITEM, bodies[i], strlen(bodies[i]), &ok) != DDB_FAST_OK)
			fail_msg("not fast: %s", bodies[i]);
		assert_true(ok);
	}
	struct lock_item it;
	char err[DDB_ERR_MAX];
	assert_int_equal(
		ddb_fast_output(DDB_UPDATE_ITEM, RENEWED, strlen(RENEWED), "exp", &it, err),
		DDB_FAST_OK);
	assert_true(it.exists && it.has_owner && it.has_rvn && it.has_lease && it.has_fence);
	assert_string_equal(it.owner, "o1");
	assert_string_equal(it.holder, "pod");
	assert_string_equal(it.type, "LOCK");
	assert_int_equal(it.lease_ms, 30000);
	assert_int_equal(it.ttl, 99);
	/* GetItem: {} is no item, an Item is one */
	assert_int_equal(same_output(DDB_GET_ITEM, "{}", 2, NULL), DDB_FAST_OK);
	assert_int_equal(ddb_fast_output(DDB_GET_ITEM, " { } ", 5, NULL, &it, err), DDB_FAST_OK);
	assert_false(it.exists);
	const char *got = "{\"Item\":{\"rvn\":{\"S\":\"r\"},\"fence\":{\"N\":\"-7\"}}}";
	assert_int_equal(same_output(DDB_GET_ITEM, got, strlen(got), NULL), DDB_FAST_OK);
	/* other operations are cJSON's */
	assert_int_equal(ddb_fast_output(DDB_DELETE_ITEM, "{}", 2, NULL, &it, err), DDB_FAST_OTHER);
}

/* Cut anywhere, a body is refused, by cJSON's reader. */
static void test_truncated(void **state)
{
	size_t n = strlen(RENEWED);
	for (size_t len = 0; len < n; len++) {
		char *cut = malloc(len + 1); /* no NUL past the cut to lean on */
		assert_non_null(cut);
		memcpy(cut, RENEWED, len);
		bool ok = true;
		if (same_output(DDB_UPDATE_ITEM, cut, len, &ok) != DDB_FAST_OTHER)
			fail_msg("fast at %zu bytes", len);
		assert_false(ok);
		free(cut);
	}
}

/* Wrong types and numbers out of range are read, and refused, with
 * cJSON's message. */
static void test_refused_like_cjson(void **state)
{
	static const char *const bodies[] = {
		"{\"Attributes\":{\"owner\":{\"N\":\"1\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"S\":\"1000\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"0\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"-5\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"9223372036854775808\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"123456789012345678901234567890\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"1e3\"}}}",
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"\"}}}",
		"{\"Attributes\":{\"exp\":{\"S\":\"soon\"}}}",
		"{\"Attributes\":{\"waiterMs\":{\"N\":\"+1\"}}}",
		"{\"Attributes\":{\"rvn\":{\"S\":\"012345678901234567890123456789012345678901234567"
		"8901234567890123456789\"}}}",
	};
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		bool ok = true;
		if (same_output(DDB_UPDATE_ITEM, bodies[i], strlen(bodies[i]), &ok) !=
		    DDB_FAST_REFUSED)
			fail_msg("not refused fast: %s", bodies[i]);
		assert_false(ok);
	}
}

/* Not the plain form: left to cJSON, which reads or refuses it as before. */
static void test_other_forms_go_to_cjson(void **state)
{
	static const struct {
		const char *body;
		bool ok;
	} cases[] = {
		/* escapes in a name or a value: read by cJSON, decoded */
		{"{\"Attributes\":{\"owner\":{\"S\":\"o\\\"1\"}}}", true},
		{"{\"Attributes\":{\"owner\":{\"S\":\"\\u0041\"}}}", true},
		{"{\"Attributes\":{\"own\\u0065r\":{\"S\":\"x\"}}}", true},
		{"{\"Attributes\":{\"owner\":{\"S\":\"a\\u0000b\"}}}", true},
		/* a control character in a string */
		{"{\"Attributes\":{\"owner\":{\"S\":\"a\tb\"}}}", true},
		/* a value of another shape */
		{"{\"Attributes\":{\"owner\":{\"S\":1}}}", false},
		{"{\"Attributes\":{\"owner\":\"x\"}}", false},
		{"{\"Attributes\":{\"owner\":{\"S\":\"x\",\"N\":\"1\"}}}", false},
		{"{\"Attributes\":{\"owner\":{}}}", false},
		{"{\"Attributes\":{\"other\":{\"M\":{}}}}", true},
		{"{\"Attributes\":{\"other\":{\"BOOL\":true}}}", true},
		{"{\"Attributes\":[]}", false},
		{"{\"Attributes\":\"x\"}", false},
		/* other members, or twice the same */
		{"{}", false},
		{"{\"Item\":{}}", false},
		{"{\"Attributes\":{},\"ConsumedCapacity\":{\"TableName\":\"t\"}}", true},
		{"{\"Attributes\":{\"owner\":{\"S\":\"a\"}},\"Attributes\":{}}", true},
		/* bytes after the object: cJSON ignores them */
		{"{\"Attributes\":{}}x", true},
		{"{\"Attributes\":{}}\f", true},
		/* whitespace JSON does not have, which cJSON skips */
		{"{\"Attributes\":{\v}}", true},
		/* not JSON */
		{"", false},
		{"not json", false},
		{"[1]", false},
		{"{\"Attributes\":{}", false},
		{"{\"Attributes\":{\"a\":{\"S\":\"x\"},}}", false},
		{"\xEF\xBB\xBF{\"Attributes\":{}}", true},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool ok = !cases[i].ok;
		const char *b = cases[i].body;
		if (same_output(DDB_UPDATE_ITEM, b, strlen(b), &ok) != DDB_FAST_OTHER)
			fail_msg("fast: %s", b);
		if (ok != cases[i].ok)
			fail_msg("%s: read %d", b, ok);
	}
	/* a NUL byte inside the length */
	static const char nul[] = "{\"Attributes\":{\"owner\":{\"S\":\"a\0b\"}}}";
	assert_int_equal(same_output(DDB_UPDATE_ITEM, nul, sizeof nul - 1, NULL), DDB_FAST_OTHER);
	static const char nul_ws[] = "{\"Attributes\":{}}\0";
	assert_int_equal(same_output(DDB_UPDATE_ITEM, nul_ws, sizeof nul_ws - 1, NULL),
			 DDB_FAST_OTHER);
}

/* A name given twice in an item reads as cJSON reads it: each in turn,
 * the last value kept. */
static void test_duplicate_attributes(void **state)
{
	const char *b = "{\"Attributes\":{\"owner\":{\"S\":\"a\"},\"owner\":{\"S\":\"b\"}}}";
	struct lock_item it;
	char err[DDB_ERR_MAX];
	assert_int_equal(same_output(DDB_UPDATE_ITEM, b, strlen(b), NULL), DDB_FAST_OK);
	assert_int_equal(ddb_fast_output(DDB_UPDATE_ITEM, b, strlen(b), NULL, &it, err),
			 DDB_FAST_OK);
	assert_string_equal(it.owner, "b");
	const char *bad = "{\"Attributes\":{\"owner\":{\"S\":\"a\"},\"owner\":{\"N\":\"1\"}}}";
	assert_int_equal(same_output(DDB_UPDATE_ITEM, bad, strlen(bad), NULL), DDB_FAST_REFUSED);
}

/* More attributes than the fast reader holds: cJSON's. */
static void test_many_attributes(void **state)
{
	char body[8192];
	size_t n = (size_t)snprintf(body, sizeof body, "{\"Attributes\":{\"owner\":{\"S\":\"o\"}");
	for (int i = 0; i < DDB_FAST_ATTRS; i++)
		n += (size_t)snprintf(body + n, sizeof body - n, ",\"a%d\":{\"S\":\"v\"}", i);
	n += (size_t)snprintf(body + n, sizeof body - n, "}}");
	bool ok;
	assert_int_equal(same_output(DDB_UPDATE_ITEM, body, n, &ok), DDB_FAST_OTHER);
	assert_true(ok);
}

/* Reads an error body both ways and checks they agree. */
static enum ddb_fast same_error(const char *body, size_t len)
{
	struct ddb_error a, b;
	char ea[DDB_ERR_MAX] = "", eb[DDB_ERR_MAX] = "";
	memset(&a, 0x5a, sizeof a);
	memset(&b, 0x5a, sizeof b);
	enum ddb_fast f = ddb_fast_error(body, len, "exp", &a, ea);
	bool okb = ddb_parse_error_cjson(body, len, "exp", &b, eb);
	bool oka =
		f == DDB_FAST_OTHER ? ddb_parse_error(body, len, "exp", &a, ea) : f == DDB_FAST_OK;
	if (oka != okb)
		fail_msg("fast %d, cJSON %d on %s", f, okb, body);
	assert_string_equal(ea, eb);
	assert_string_equal(a.type, b.type);
	assert_string_equal(a.message, b.message);
	assert_int_equal(a.has_item, b.has_item);
	if (okb && a.has_item)
		assert_memory_equal(&a.item, &b.item, sizeof a.item);
	return f;
}

static void test_errors(void **state)
{
	static const struct {
		const char *body;
		enum ddb_fast f;
	} cases[] = {
		{"{\"__type\":\"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException\","
		 "\"message\":\"The conditional request failed\",\"Item\":{\"owner\":{\"S\":\"x\"},"
		 "\"rvn\":{\"S\":\"y\"},\"leaseMs\":{\"N\":\"1000\"},\"fence\":{\"N\":\"2\"}}}",
		 DDB_FAST_OK},
		{"{\"__type\":\"com.amazon.coral.service#UnrecognizedClientException\","
		 "\"Message\":\"The security token is invalid.\"}",
		 DDB_FAST_OK},
		{"{\"__type\":\"a#b#Throttling:http://x\",\"message\":\"m\",\"Message\":\"M\"}",
		 DDB_FAST_OK},
		{"{\"__type\":\"ConditionalCheckFailedException\",\"Item\":{\"leaseMs\":{\"N\":"
		 "\"x\"}}}",
		 DDB_FAST_REFUSED},
		{"{}", DDB_FAST_OK},
		/* other forms */
		{"{\"__type\":\"T\",\"__type\":\"U\"}", DDB_FAST_OTHER},
		{"{\"__type\":\"T\",\"message\":{\"x\":{\"S\":\"y\"}}}", DDB_FAST_OTHER},
		{"{\"__type\":\"T\",\"Item\":\"x\"}", DDB_FAST_OTHER},
		{"{\"__type\":\"T\",\"CancellationReasons\":[{\"Code\":\"None\"}]}",
		 DDB_FAST_OTHER},
		{"{\"__type\":\"T\",\"other\":\"x\"}", DDB_FAST_OTHER},
		{"{\"__type\":\"a\\u0023b\"}", DDB_FAST_OTHER},
		{"{\"__type\":\"T\"", DDB_FAST_OTHER},
		{"<ErrorResponse><Code>X</Code></ErrorResponse>", DDB_FAST_OTHER},
		{"oops", DDB_FAST_OTHER},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (same_error(cases[i].body, strlen(cases[i].body)) != cases[i].f)
			fail_msg("case %zu: not %d: %s", i, cases[i].f, cases[i].body);
	/* cut anywhere */
	const char *full = cases[0].body;
	for (size_t len = 0; len < strlen(full); len++)
		assert_int_equal(same_error(full, len), DDB_FAST_OTHER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_answers_are_fast),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_refused_like_cjson),
		cmocka_unit_test(test_other_forms_go_to_cjson),
		cmocka_unit_test(test_duplicate_attributes),
		cmocka_unit_test(test_many_attributes),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
