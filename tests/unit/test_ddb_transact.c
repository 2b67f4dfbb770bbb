/*
 * ddb_transact: the body of a fenced transaction (the lock's check first,
 * or a shared holder's two, the client's items spliced after it, the
 * ClientRequestToken) and what a
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
	struct store_tx_result tr;
	char *b = cancel_body(7, 5, "ConditionalCheckFailed",
			      "{\"id\":{\"S\":\"5\"},\"n\":{\"N\":\"1\"}}");
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, 1, &tr, &reasons, err));
	assert_int_equal(tr.index, 5);
	assert_false(tr.item.exists);
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
	struct store_tx_result tr;
	const char *lock = "{\"pk\":{\"S\":\"LOCK#job\"},\"sk\":{\"S\":\"LOCK\"},\"_type\":{\"S\":"
			   "\"LOCK\"},\"owner\":{\"S\":\"o2\"},\"rvn\":{\"S\":\"r\"},\"leaseMs\":"
			   "{\"N\":\"3000\"},\"fence\":{\"N\":\"43\"}}";
	char *b = cancel_body(3, 0, "ConditionalCheckFailed", lock);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, 1, &tr, &reasons, err));
	assert_int_equal(tr.index, 0);
	assert_true(tr.item.exists);
	assert_string_equal(tr.item.owner, "o2");
	assert_int_equal(tr.item.fence, 43);
	assert_string_equal(reasons, "[{\"Code\":\"None\"},{\"Code\":\"None\"}]");
	free(reasons);
	/* no item: deleted */
	b = cancel_body(2, 0, "ConditionalCheckFailed", NULL);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, 1, &tr, &reasons, err));
	assert_int_equal(tr.index, 0);
	assert_false(tr.item.exists);
	free(reasons);
	/* the check failing for another reason is no loss */
	b = cancel_body(2, 0, "ValidationError", NULL);
	assert_false(ddb_tx_parse_cancel(b, strlen(b), NULL, 1, &tr, &reasons, err));
	assert_non_null(strstr(err, "the lock check failed: ValidationError"));
	b = "{\"Message\":\"x\"}";
	assert_false(ddb_tx_parse_cancel(b, strlen(b), NULL, 1, &tr, &reasons, err));
}

/* The body of a shared holder's transaction: key, condition and values
 * of its check k (0 the header, 1 the slot). */
static void assert_shared_check(const cJSON *items, int k, const char *pk, const char *cond,
				const char *owner, const char *token)
{
	cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(items, k), "ConditionCheck");
	assert_non_null(c);
	cJSON *key = cJSON_GetObjectItem(c, "Key");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(key, "pk"), "S")->valuestring,
			    pk);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(key, "sk"), "S")->valuestring,
			    "LOCK");
	assert_string_equal(cJSON_GetObjectItem(c, "ConditionExpression")->valuestring, cond);
	cJSON *vals = cJSON_GetObjectItem(c, "ExpressionAttributeValues");
	cJSON *o = cJSON_GetObjectItem(vals, ":o"), *t = cJSON_GetObjectItem(vals, ":t");
	if (owner != NULL)
		assert_string_equal(cJSON_GetObjectItem(o, "S")->valuestring, owner);
	else
		assert_null(o);
	if (token != NULL)
		assert_string_equal(cJSON_GetObjectItem(t, "N")->valuestring, token);
	else
		assert_null(t);
	assert_string_equal(
		cJSON_GetObjectItem(c, "ReturnValuesOnConditionCheckFailure")->valuestring,
		"ALL_OLD");
}

static cJSON *build_shared(enum store_sh_mode mode, unsigned slot)
{
	char err[DDB_ERR_MAX];
	struct store_tx_req req = {.name = "job",
				   .owner = "o1",
				   .token = 42,
				   .shared = true,
				   .mode = mode,
				   .slot = slot,
				   .items = "[" ITEM "]",
				   .items_len = strlen("[" ITEM "]")};
	size_t len = 0;
	char *body = ddb_build_transact(&keys, &req, "tok-2", &len, err);
	assert_non_null(body);
	cJSON *root = cJSON_Parse(body);
	ddb_body_free(body);
	assert_non_null(root);
	return root;
}

/* A reader's transaction checks the header (no exclusive owner, its group
 * token) and its slot (its owner); a semaphore holder's the header (no
 * exclusive owner) and its slot (its owner and token); then the client's
 * items. */
static void shared_holder_checks_header_and_slot(void **state)
{
	cJSON *root = build_shared(STORE_SH_SHARED, 7);
	cJSON *items = cJSON_GetObjectItem(root, "TransactItems");
	assert_int_equal(cJSON_GetArraySize(items), 3);
	assert_shared_check(items, 0, "LOCK#job", "attribute_not_exists(#o) AND #f = :t", NULL,
			    "42");
	assert_shared_check(items, 1, "SLOT#7#job", "#o = :o", "o1", NULL);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 2), "Put"));
	assert_string_equal(cJSON_GetObjectItem(root, "ClientRequestToken")->valuestring, "tok-2");
	cJSON_Delete(root);
	root = build_shared(STORE_SH_LIMIT, 0);
	items = cJSON_GetObjectItem(root, "TransactItems");
	assert_shared_check(items, 0, "LOCK#job", "attribute_not_exists(#o)", NULL, NULL);
	assert_shared_check(items, 1, "SLOT#0#job", "#o = :o AND #f = :t", "o1", "42");
	cJSON_Delete(root);
}

/* Under a shared hold the first two reasons are the checks: a failed one
 * is index 0 with which check and its item; the client's items count from
 * 1, and their reasons alone come back. */
static void shared_cancellations(void **state)
{
	char err[DDB_ERR_MAX], *reasons;
	struct store_tx_result tr;
	const char *slot = "{\"pk\":{\"S\":\"SLOT#0#job\"},\"sk\":{\"S\":\"LOCK\"},\"_type\":{"
			   "\"S\":\"SLOT\"},\"owner\":{\"S\":\"o2\"},\"rvn\":{\"S\":\"r\"},"
			   "\"leaseMs\":{\"N\":\"3000\"},\"fence\":{\"N\":\"2\"}}";
	char *b = cancel_body(3, 1, "ConditionalCheckFailed", slot);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, 2, &tr, &reasons, err));
	assert_int_equal(tr.index, 0);
	assert_int_equal(tr.check, 1);
	assert_string_equal(tr.item.owner, "o2");
	assert_string_equal(reasons, "[{\"Code\":\"None\"}]");
	free(reasons);
	b = cancel_body(3, 0, "ConditionalCheckFailed", NULL);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, 2, &tr, &reasons, err));
	assert_int_equal(tr.index, 0);
	assert_int_equal(tr.check, 0);
	assert_false(tr.item.exists);
	free(reasons);
	b = cancel_body(4, 3, "ConditionalCheckFailed", NULL);
	assert_true(ddb_tx_parse_cancel(b, strlen(b), NULL, 2, &tr, &reasons, err));
	assert_int_equal(tr.index, 2); /* the client's second */
	cJSON *r = cJSON_Parse(reasons);
	assert_int_equal(cJSON_GetArraySize(r), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(r, 1), "Code")->valuestring,
			    "ConditionalCheckFailed");
	cJSON_Delete(r);
	free(reasons);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(body_has_the_check_first),
		cmocka_unit_test(body_refuses_bad_input),
		cmocka_unit_test(classified_by_every_reason),
		cmocka_unit_test(the_client_item_that_failed),
		cmocka_unit_test(the_lock_check_that_failed),
		cmocka_unit_test(shared_holder_checks_header_and_slot),
		cmocka_unit_test(shared_cancellations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
