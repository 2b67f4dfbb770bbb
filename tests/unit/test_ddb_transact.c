/*
 * ddb_transact: the body of a fenced transaction (the lock's check first,
 * the client's items spliced after it, the ClientRequestToken) and what a
 * TransactionCanceledException's reasons mean (which item, retry or not),
 * with more reasons than ddb_parse_error keeps. Pure functions, no I/O.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_transact.h"

static const struct ddb_keys keys = {"locks", "pk", "sk", NULL};

#define ITEM "{\"Put\":{\"TableName\":\"orders\",\"Item\":{\"id\":{\"S\":\"1\"}}}}"

static char *build(const char *items, const char *token, char *err)
{
	struct store_tx_req req = {.name = "job",
				   .owner = "o1",
				   .token = 42,
				   .items = items,
				   .items_len = strlen(items)};
	size_t len = 0;
	char *body = ddb_build_transact(&keys, &req, token, &len, err);
	if (body != NULL)
		assert_int_equal(len, strlen(body));
	return body;
}

static void body_has_the_check_first(void **state)
{
	char err[DDB_ERR_MAX];
	char *body = build(" [" ITEM "," ITEM "]\n", "tok-1", err);
	assert_non_null(body);
	cJSON *root = cJSON_Parse(body);
	assert_non_null(root);
	cJSON *items = cJSON_GetObjectItem(root, "TransactItems");
	assert_int_equal(cJSON_GetArraySize(items), 3);
	cJSON *check = cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "ConditionCheck");
	assert_non_null(check);
	assert_string_equal(cJSON_GetObjectItem(check, "ConditionExpression")->valuestring,
			    "#o = :o AND #f = :f");
	cJSON *vals = cJSON_GetObjectItem(check, "ExpressionAttributeValues");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(vals, ":o"), "S")->valuestring,
			    "o1");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(vals, ":f"), "N")->valuestring,
			    "42");
	cJSON *key = cJSON_GetObjectItem(check, "Key");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(key, "pk"), "S")->valuestring,
			    "LOCK#job");
	assert_string_equal(
		cJSON_GetObjectItem(check, "ReturnValuesOnConditionCheckFailure")->valuestring,
		"ALL_OLD");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 1), "Put"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 2), "Put"));
	assert_string_equal(cJSON_GetObjectItem(root, "ClientRequestToken")->valuestring, "tok-1");
	/* the client's text as it was given */
	assert_non_null(strstr(body, "," ITEM "," ITEM "],\"ClientRequestToken\""));
	cJSON_Delete(root);
	ddb_body_free(body);
}

static void body_refuses_bad_input(void **state)
{
	char err[DDB_ERR_MAX];
	assert_null(build("[]", "t", err));
	assert_null(build("{" ITEM "}", "t", err));
	assert_null(build("[" ITEM "]", "", err));
	assert_null(build("[" ITEM "]", "a\"b", err));
	assert_null(build("[" ITEM "]", "0123456789012345678901234567890123456", err)); /* 37 */
	char *ok = build("[" ITEM "]", "012345678901234567890123456789012345", err);	/* 36 */
	assert_non_null(ok);
	ddb_body_free(ok);
}

/* CancellationReasons of n items with code at index at (others None). */
static char *cancel_body(int n, int at, const char *code, const char *item)
{
	static char b[8192];
	size_t k = (size_t)snprintf(b, sizeof(b),
				    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
				    "TransactionCanceledException\",\"Message\":\"cancelled\","
				    "\"CancellationReasons\":[");
	for (int i = 0; i < n; i++)
		k += (size_t)snprintf(
			b + k, sizeof(b) - k, "%s{\"Code\":\"%s\"%s%s%s}", i ? "," : "",
			i == at ? code : "None", i == at ? ",\"Message\":\"m\"" : "",
			i == at && item ? ",\"Item\":" : "", i == at && item ? item : "");
	snprintf(b + k, sizeof(b) - k, "]}");
	return b;
}

static const struct ddb_verdict canceled = {DDB_C_TRANSIENT, "TransactionCanceledException", false};

static void classified_by_every_reason(void **state)
{
	char *b = cancel_body(8, 6, "ConditionalCheckFailed", NULL);
	assert_int_equal(ddb_tx_classify(b, strlen(b), canceled).cls, DDB_C_REFUSED);
	b = cancel_body(8, 7, "ValidationError", NULL);
	assert_int_equal(ddb_tx_classify(b, strlen(b), canceled).cls, DDB_C_REFUSED);
	b = cancel_body(3, 2, "TransactionConflict", NULL);
	struct ddb_verdict v = ddb_tx_classify(b, strlen(b), canceled);
	assert_int_equal(v.cls, DDB_C_TRANSIENT);
	assert_string_equal(v.error_type, "TransactionConflict");
	b = cancel_body(3, 1, "ThrottlingError", NULL);
	assert_int_equal(ddb_tx_classify(b, strlen(b), canceled).cls, DDB_C_THROTTLED);
	b = "{\"__type\":\"x#TransactionCanceledException\"}";
	assert_int_equal(ddb_tx_classify(b, strlen(b), canceled).cls, DDB_C_TRANSIENT);
}

static void the_client_item_that_failed(void **state)
{
	char err[DDB_ERR_MAX], *reasons;
	unsigned index;
	struct lock_item item;
	char *b = cancel_body(7, 5, "ConditionalCheckFailed",
			      "{\"id\":{\"S\":\"5\"},\"n\":{\"N\":\"1\"}}");
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, &index, &item, &reasons, err));
	assert_int_equal(index, 5);
	assert_false(item.exists);
	cJSON *r = cJSON_Parse(reasons);
	assert_int_equal(cJSON_GetArraySize(r), 6); /* the client's six */
	cJSON *fifth = cJSON_GetArrayItem(r, 4);
	assert_string_equal(cJSON_GetObjectItem(fifth, "Code")->valuestring,
			    "ConditionalCheckFailed");
	assert_non_null(cJSON_GetObjectItem(fifth, "Item"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 0), "Code")->valuestring,
			    "None");
	cJSON_Delete(r);
	free(reasons);
}

static void the_lock_check_that_failed(void **state)
{
	char err[DDB_ERR_MAX], *reasons;
	unsigned index;
	struct lock_item item;
	const char *lock = "{\"pk\":{\"S\":\"LOCK#job\"},\"sk\":{\"S\":\"LOCK\"},\"_type\":{\"S\":"
			   "\"LOCK\"},\"owner\":{\"S\":\"o2\"},\"rvn\":{\"S\":\"r\"},\"leaseMs\":"
			   "{\"N\":\"3000\"},\"fence\":{\"N\":\"43\"}}";
	char *b = cancel_body(3, 0, "ConditionalCheckFailed", lock);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, &index, &item, &reasons, err));
	assert_int_equal(index, 0);
	assert_true(item.exists);
	assert_string_equal(item.owner, "o2");
	assert_int_equal(item.fence, 43);
	assert_string_equal(reasons, "[{\"Code\":\"None\"},{\"Code\":\"None\"}]");
	free(reasons);
	/* no item: deleted */
	b = cancel_body(2, 0, "ConditionalCheckFailed", NULL);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, &index, &item, &reasons, err));
	assert_int_equal(index, 0);
	assert_false(item.exists);
	free(reasons);
	/* the check failing for another reason is no loss */
	b = cancel_body(2, 0, "ValidationError", NULL);
	assert_false(ddb_tx_parse_cancel(b, strlen(b), NULL, &index, &item, &reasons, err));
	assert_non_null(strstr(err, "the lock check failed: ValidationError"));
	b = "{\"Message\":\"x\"}";
	assert_false(ddb_tx_parse_cancel(b, strlen(b), NULL, &index, &item, &reasons, err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(body_has_the_check_first),
		cmocka_unit_test(body_refuses_bad_input),
		cmocka_unit_test(classified_by_every_reason),
		cmocka_unit_test(the_client_item_that_failed),
		cmocka_unit_test(the_lock_check_that_failed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
