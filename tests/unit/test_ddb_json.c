/*
 * test_ddb_json: every request body ddb_json builds, compared with the
 * expected JSON structurally (both parsed), and every response and error
 * shape it parses, good and bad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "core/dynamodb/ddb_json.h"

static const struct ddb_keys k_pk = {"Locks", "pk", NULL, NULL};
static const struct ddb_keys k_sk_ttl = {"Shop", "PK", "SK", "expiresAt"};

#define KEY_PK "\"Key\":{\"pk\":{\"S\":\"LOCK#a\"}}"
/* The acquire's guard: the item, if any, is a lock whose fence can rise. */
#define GUARD                                                                                      \
	"(attribute_not_exists(#k) OR (#t = :t AND (attribute_not_exists(#f) OR "                  \
	"(attribute_type(#f, :n) AND #f >= :f0 AND #f < :ftop)) AND (attribute_not_exists(#o) "    \
	"OR (attribute_exists(#r) AND attribute_exists(#l)))))"
#define GUARD_VALUES                                                                               \
	"\":n\":{\"S\":\"N\"},\":f0\":{\"N\":\"0\"},\":ftop\":{\"N\":\"9223372036854775807\"}"
#define KEY_SK "\"Key\":{\"PK\":{\"S\":\"LOCK#a\"},\"SK\":{\"S\":\"LOCK\"}}"

struct build_case {
	const char *what;
	const struct ddb_keys *keys;
	struct store_req req;
	const char *want; /* NULL: the request is refused */
};

static const struct build_case build_cases[] = {
	{"acquire free or mine, holder",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .holder = "pod-1",
	  .lease_ms = 30000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#t\":\"_type\",\"#f\":\"fence\",\"#w\":\"waiter\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"30000\"},"
	 "\":h\":{\"S\":\"pod-1\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #r = :r, #l = :l, #h = :h ADD #f :one\","
	 "\"ConditionExpression\":\"((attribute_not_exists(#o) AND attribute_not_exists(#w)) OR "
	 "#o = :o) AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire takeover, no holder, ttl, sort key",
	 &k_sk_ttl,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .lease_ms = 1000,
	  .ttl = 1800000000},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#k\":\"PK\",\"#t\":\"_type\",\"#f\":\"fence\","
	 "\"#w\":\"waiter\"},"
	 "\"ExpressionAttributeValues\":{\":x\":{\"N\":\"1800000000\"},\":r\":{\"S\":\"r1\"},"
	 "\":l\":{\"N\":\"1000\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #r = :r, #l = :l, #x = :x REMOVE #h "
	 "ADD #f :one\","
	 "\"ConditionExpression\":\"((attribute_not_exists(#o) AND attribute_not_exists(#w)) OR "
	 "#o = :o OR #r = :s) AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire unconditional",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .lease_ms = 1000,
	  .unconditional = true},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#t\":\"_type\",\"#f\":\"fence\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},\":one\":{\"N\":\"1\"}},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #r = :r, #l = :l REMOVE #h ADD #f :one\","
	 "\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire of an announced waiter, takeover",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .holder = "h",
	  .waiter = "w1",
	  .lease_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#t\":\"_type\",\"#f\":\"fence\",\"#w\":\"waiter\","
	 "\"#wm\":\"waiterMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":h\":{\"S\":\"h\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"},\":w\":{\"S\":\"w1\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #r = :r, #l = :l, #h = :h REMOVE #w, #wm "
	 "ADD #f :one\","
	 "\"ConditionExpression\":\"(attribute_not_exists(#w) OR #w = :w) AND "
	 "(attribute_not_exists(#o) OR #o = :o OR #r = :s) AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"announce a waiter",
	 &k_pk,
	 {.op = STORE_ANNOUNCE, .name = "a", .waiter = "w1", .waiter_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#w\":\"waiter\",\"#wm\":\"waiterMs\",\"#o\":\"owner\","
	 "\"#t\":\"_type\"},"
	 "\"ExpressionAttributeValues\":{\":w\":{\"S\":\"w1\"},\":wm\":{\"N\":\"1000\"},"
	 "\":t\":{\"S\":\"LOCK\"}},"
	 "\"UpdateExpression\":\"SET #w = :w, #wm = :wm\","
	 "\"ConditionExpression\":\"attribute_exists(#o) AND attribute_not_exists(#w) AND #t = "
	 ":t\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"withdraw a waiter",
	 &k_pk,
	 {.op = STORE_WITHDRAW, .name = "a", .waiter = "w1"},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#w\":\"waiter\",\"#wm\":\"waiterMs\"},"
	 "\"ExpressionAttributeValues\":{\":w\":{\"S\":\"w1\"}},"
	 "\"UpdateExpression\":\"REMOVE #w, #wm\","
	 "\"ConditionExpression\":\"#w = :w\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"announce without a waiter id",
	 &k_pk,
	 {.op = STORE_ANNOUNCE, .name = "a", .waiter_ms = 5},
	 NULL},
	{"announce without a poll interval",
	 &k_pk,
	 {.op = STORE_ANNOUNCE, .name = "a", .waiter = "w"},
	 NULL},
	{"renew with holder and ttl",
	 &k_sk_ttl,
	 {.op = STORE_RENEW,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r2",
	  .holder = "h",
	  .lease_ms = 5000,
	  .ttl = 7},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\"},"
	 "\"ExpressionAttributeValues\":{\":x\":{\"N\":\"7\"},\":r\":{\"S\":\"r2\"},"
	 "\":l\":{\"N\":\"5000\"},\":h\":{\"S\":\"h\"},\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"SET #r = :r, #l = :l, #h = :h, #x = :x\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"renew without holder",
	 &k_pk,
	 {.op = STORE_RENEW, .name = "a", .owner = "o1", .rvn = "r2", .lease_ms = 5000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r2\"},\":l\":{\"N\":\"5000\"},"
	 "\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"SET #r = :r, #l = :l REMOVE #h\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release with ttl",
	 &k_sk_ttl,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .ttl = 9},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\"},"
	 "\"ExpressionAttributeValues\":{\":x\":{\"N\":\"9\"},\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h SET #x = :x\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release unconditional never creates",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .unconditional = true},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#l\":\"leaseMs\",\"#h\":\"holder\","
	 "\"#k\":\"pk\"},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h\","
	 "\"ConditionExpression\":\"attribute_exists(#k)\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release from outside: freed marker by token",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .token = 7},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#l\":\"leaseMs\",\"#h\":\"holder\","
	 "\"#fr\":\"freed\",\"#fb\":\"freedBy\"},"
	 "\"ExpressionAttributeValues\":{\":o\":{\"S\":\"o1\"},\":fr\":{\"N\":\"7\"},"
	 "\":fb\":{\"S\":\"token\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h SET #fr = :fr, #fb = :fb\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release forced, unconditional, ttl: freed marker by force",
	 &k_sk_ttl,
	 {.op = STORE_RELEASE,
	  .name = "a",
	  .token = INT64_MAX,
	  .forced = true,
	  .ttl = 9,
	  .unconditional = true},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"PK\",\"#fr\":\"freed\",\"#fb\":\"freedBy\"},"
	 "\"ExpressionAttributeValues\":{\":x\":{\"N\":\"9\"},"
	 "\":fr\":{\"N\":\"9223372036854775807\"},\":fb\":{\"S\":\"force\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h SET #fr = :fr, #fb = :fb, #x = :x\","
	 "\"ConditionExpression\":\"attribute_exists(#k)\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release forced without a token: no marker",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .forced = true},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#l\":\"leaseMs\",\"#h\":\"holder\"},"
	 "\"ExpressionAttributeValues\":{\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h\",\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"ttl ignored without a ttl attribute",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .ttl = 9},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#l\":\"leaseMs\",\"#h\":\"holder\"},"
	 "\"ExpressionAttributeValues\":{\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h\",\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"read",
	 &k_sk_ttl,
	 {.op = STORE_READ, .name = "a"},
	 "{\"TableName\":\"Shop\"," KEY_SK ",\"ConsistentRead\":true}"},
	{"delete",
	 &k_pk,
	 {.op = STORE_DELETE, .name = "a"},
	 "{\"TableName\":\"Locks\"," KEY_PK "}"},
	{"check",
	 &k_sk_ttl,
	 {.op = STORE_CHECK, .name = "a", .owner = "o1", .token = 42},
	 "{\"TransactItems\":[{\"ConditionCheck\":{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ConditionExpression\":\"#o = :o AND #f = :f\","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#f\":\"fence\"},"
	 "\"ExpressionAttributeValues\":{\":o\":{\"S\":\"o1\"},\":f\":{\"N\":\"42\"}},"
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}}]}"},
	{"name with quotes and UTF-8 is escaped",
	 &k_pk,
	 {.op = STORE_DELETE, .name = "q\"\\\xc3\xa9"},
	 "{\"TableName\":\"Locks\",\"Key\":{\"pk\":{\"S\":\"LOCK#q\\\"\\\\\xc3\xa9\"}}}"},
	/* refused requests */
	{"empty name", &k_pk, {.op = STORE_READ, .name = ""}, NULL},
	{"no name", &k_pk, {.op = STORE_READ}, NULL},
	{"invalid UTF-8 name", &k_pk, {.op = STORE_READ, .name = "a\xff"}, NULL},
	{"acquire without owner",
	 &k_pk,
	 {.op = STORE_ACQUIRE, .name = "a", .rvn = "r", .lease_ms = 1},
	 NULL},
	{"acquire without rvn",
	 &k_pk,
	 {.op = STORE_ACQUIRE, .name = "a", .owner = "o", .lease_ms = 1},
	 NULL},
	{"acquire zero lease",
	 &k_pk,
	 {.op = STORE_ACQUIRE, .name = "a", .owner = "o", .rvn = "r"},
	 NULL},
	{"owner too long",
	 &k_pk,
	 {.op = STORE_CHECK,
	  .name = "a",
	  .owner = "0123456789012345678901234567890123456789012345678901234567890123X"},
	 NULL},
	{"negative ttl", &k_pk, {.op = STORE_DELETE, .name = "a", .ttl = -1}, NULL},
	{"unknown op", &k_pk, {.op = STORE_OP_COUNT, .name = "a"}, NULL},
	{"scan is no request", &k_pk, {.op = STORE_SCAN, .name = "a"}, NULL},
};

static void assert_json_eq(const char *got, const char *want)
{
	cJSON *g = cJSON_Parse(got), *w = cJSON_Parse(want);
	assert_non_null(w);
	assert_non_null(g);
	if (!cJSON_Compare(g, w, true))
		fail_msg("got  %s\nwant %s", got, want);
	cJSON_Delete(g);
	cJSON_Delete(w);
}

static void test_build_requests(void **state)
{
	for (size_t i = 0; i < sizeof build_cases / sizeof build_cases[0]; i++) {
		const struct build_case *t = &build_cases[i];
		char err[DDB_ERR_MAX] = "";
		size_t len = 0;
		char *body = ddb_build_request(t->keys, &t->req, &len, err);
		print_message("case: %s\n", t->what);
		if (!t->want) {
			assert_null(body);
			assert_true(err[0] != '\0');
			continue;
		}
		assert_non_null(body);
		assert_int_equal(len, strlen(body));
		assert_json_eq(body, t->want);
		ddb_body_free(body);
	}
}

/* The writer's bytes, not only its JSON: a renewal as DynamoDB gets it
 * (members in order, no whitespace), strings copied whole or escaped,
 * numbers in decimal up to INT64_MAX. */
static void test_build_exact_bytes(void **state)
{
	static const struct ddb_keys k = {"Locks", "pk", NULL, "exp"};
	struct store_req r = {.op = STORE_RENEW,
			      .name = "a\"b\\c",
			      .owner = "o1",
			      .rvn = "r2",
			      .holder = "h\x01\t\n",
			      .lease_ms = INT64_MAX,
			      .ttl = 1234567890};
	char err[DDB_ERR_MAX] = "";
	size_t len = 0;
	char *body = ddb_build_request(&k, &r, &len, err);
	assert_non_null(body);
	assert_string_equal(
		body,
		"{\"TableName\":\"Locks\",\"Key\":{\"pk\":{\"S\":\"LOCK#a\\\"b\\\\c\"}},"
		"\"ExpressionAttributeNames\":{\"#x\":\"exp\",\"#o\":\"owner\",\"#r\":\"rvn\","
		"\"#l\":\"leaseMs\",\"#h\":\"holder\"},\"ExpressionAttributeValues\":{\":x\":{"
		"\"N\":\"1234567890\"},\":r\":{\"S\":\"r2\"},\":l\":{\"N\":"
		"\"9223372036854775807\"},\":h\":{\"S\":\"h\\u0001\\t\\n\"},\":o\":{\"S\":"
		"\"o1\"}},\"UpdateExpression\":\"SET #r = :r, #l = :l, #h = :h, #x = :x\","
		"\"ConditionExpression\":\"#o = :o\",\"ReturnValuesOnConditionCheckFailure\":"
		"\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}");
	assert_int_equal(len, strlen(body));
	ddb_body_free(body);
	/* a lease of 1 ms without a holder nor TTL */
	r.holder = NULL;
	r.lease_ms = 1;
	r.ttl = 0;
	body = ddb_build_request(&k, &r, &len, err);
	assert_non_null(body);
	assert_non_null(strstr(body, "\":l\":{\"N\":\"1\"}"));
	assert_non_null(strstr(body, "\"UpdateExpression\":\"SET #r = :r, #l = :l REMOVE #h\""));
	ddb_body_free(body);
}

static void test_op_mapping(void **state)
{
	assert_int_equal(ddb_op_for(STORE_ACQUIRE), DDB_UPDATE_ITEM);
	assert_int_equal(ddb_op_for(STORE_RENEW), DDB_UPDATE_ITEM);
	assert_int_equal(ddb_op_for(STORE_RELEASE), DDB_UPDATE_ITEM);
	assert_int_equal(ddb_op_for(STORE_READ), DDB_GET_ITEM);
	assert_int_equal(ddb_op_for(STORE_DELETE), DDB_DELETE_ITEM);
	assert_int_equal(ddb_op_for(STORE_CHECK), DDB_TRANSACT_WRITE_ITEMS);
	assert_int_equal(ddb_op_for(STORE_SCAN), DDB_SCAN);
	assert_string_equal(ddb_op_name(DDB_TRANSACT_WRITE_ITEMS), "TransactWriteItems");
	assert_string_equal(ddb_op_name(DDB_SCAN), "Scan");
	assert_string_equal(ddb_op_name(DDB_OP_COUNT), "?");
}

static void test_build_admin(void **state)
{
	char err[DDB_ERR_MAX];
	size_t len;
	char *b = ddb_build_describe_table("Locks", &len, err);
	assert_json_eq(b, "{\"TableName\":\"Locks\"}");
	ddb_body_free(b);
	b = ddb_build_create_table(&k_sk_ttl, &len, err);
	assert_json_eq(
		b, "{\"TableName\":\"Shop\",\"BillingMode\":\"PAY_PER_REQUEST\","
		   "\"AttributeDefinitions\":[{\"AttributeName\":\"PK\",\"AttributeType\":\"S\"},"
		   "{\"AttributeName\":\"SK\",\"AttributeType\":\"S\"}],"
		   "\"KeySchema\":[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"},"
		   "{\"AttributeName\":\"SK\",\"KeyType\":\"RANGE\"}]}");
	ddb_body_free(b);
	b = ddb_build_create_table(&k_pk, &len, err);
	assert_json_eq(
		b, "{\"TableName\":\"Locks\",\"BillingMode\":\"PAY_PER_REQUEST\","
		   "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
		   "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}");
	ddb_body_free(b);
	b = ddb_build_update_ttl("Shop", "expiresAt", &len, err);
	assert_json_eq(b, "{\"TableName\":\"Shop\",\"TimeToLiveSpecification\":"
			  "{\"Enabled\":true,\"AttributeName\":\"expiresAt\"}}");
	ddb_body_free(b);
}

struct keys_case {
	struct ddb_keys k;
	bool ok;
};

static void test_keys_valid(void **state)
{
	static const struct keys_case cases[] = {
		{{"Locks", "pk", NULL, NULL}, true},
		{{"my.table-1_x", "PK", "SK", "expiresAt"}, true},
		{{"ab", "pk", NULL, NULL}, false},	  /* table too short */
		{{"bad table", "pk", NULL, NULL}, false}, /* space */
		{{NULL, "pk", NULL, NULL}, false},
		{{"Locks", "", NULL, NULL}, false},	 /* empty key */
		{{"Locks", "pk", "pk", NULL}, false},	 /* same key twice */
		{{"Locks", "owner", NULL, NULL}, false}, /* key named as a lock attribute */
		{{"Locks", "pk", "sk", "pk"}, false},	 /* ttl on a key */
		{{"Locks", "pk", "sk", "sk"}, false},
		{{"Locks", "pk", NULL, "fence"}, false}, /* ttl on a lock attribute */
		{{"Locks", "pk", NULL, "leaseMs"}, false},
		{{"Locks", "pk", NULL, "freed"}, false},
		{{"Locks", "freedBy", NULL, NULL}, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[DDB_ERR_MAX] = "";
		bool ok = ddb_keys_valid(&cases[i].k, err);
		if (ok != cases[i].ok)
			fail_msg("case %zu: got %d (%s)", i, ok, err);
		if (!ok)
			assert_true(err[0] != '\0');
	}
}

/* ---- responses ---- */

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
		cmocka_unit_test(test_build_requests),
		cmocka_unit_test(test_build_exact_bytes),
		cmocka_unit_test(test_op_mapping),
		cmocka_unit_test(test_build_admin),
		cmocka_unit_test(test_keys_valid),
		cmocka_unit_test(test_parse_update_output),
		cmocka_unit_test(test_parse_get_output),
		cmocka_unit_test(test_parse_bad_outputs),
		cmocka_unit_test(test_parse_foreign_values),
		cmocka_unit_test(test_parse_freed),
		cmocka_unit_test(test_parse_int64),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_many_reasons),
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_crc32_and_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
