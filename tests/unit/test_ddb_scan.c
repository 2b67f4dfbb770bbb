/*
 * test_ddb_scan: the Scan of store_scan() in ddb_json: the request bodies
 * (with and without a cursor and a sort key), the cursors of both forms
 * and their bounds, and the parsing of Scan responses, good and bad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "core/store/dynamodb/ddb_json.h"

static const struct ddb_keys k_pk = {"Locks", "pk", NULL, NULL};
static const struct ddb_keys k_sk_ttl = {"Shop", "PK", "SK", "expiresAt"};

#define NAMES                                                                                      \
	"\"#o\":\"owner\",\"#r\":\"rvn\",\"#f\":\"fence\",\"#l\":\"leaseMs\",\"#t\":\"_type\","    \
	"\"#h\":\"holder\",\"#w\":\"waiter\",\"#wm\":\"waiterMs\",\"#fr\":\"freed\","              \
	"\"#fb\":\"freedBy\",\"#sc\":\"scount\",\"#se\":\"session\",\"#sl\":\"sleaseMs\""

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

static const struct {
	const char *what;
	const struct ddb_keys *keys;
	const char *cursor;
	unsigned limit;
	const char *want; /* NULL: refused */
} build_cases[] = {
	{"from the start, partition key only", &k_pk, NULL, 10,
	 "{\"TableName\":\"Locks\",\"Limit\":10,\"ConsistentRead\":true,"
	 "\"FilterExpression\":\"begins_with(#pk, :prefix)\","
	 "\"ProjectionExpression\":\"#pk, #o, #r, #f, #l, #t, #h, #w, #wm, #fr, #fb, #sc, #se, "
	 "#sl\","
	 "\"ExpressionAttributeNames\":{\"#pk\":\"pk\"," NAMES "},"
	 "\"ExpressionAttributeValues\":{\":prefix\":{\"S\":\"LOCK#\"}}}"},
	{"after a lock, sort key and TTL", &k_sk_ttl, "612f62", 1000,
	 "{\"TableName\":\"Shop\",\"Limit\":1000,\"ConsistentRead\":true,"
	 "\"FilterExpression\":\"begins_with(#pk, :prefix) AND #sk = :lock\","
	 "\"ProjectionExpression\":\"#pk, #sk, #o, #r, #f, #l, #t, #h, #w, #wm, #fr, #fb, #sc, "
	 "#se, #sl, "
	 "#x\","
	 "\"ExpressionAttributeNames\":{\"#pk\":\"PK\",\"#sk\":\"SK\"," NAMES
	 ",\"#x\":\"expiresAt\"},"
	 "\"ExpressionAttributeValues\":{\":prefix\":{\"S\":\"LOCK#\"},\":lock\":{\"S\":\"LOCK\"}},"
	 "\"ExclusiveStartKey\":{\"PK\":{\"S\":\"LOCK#a/b\"},\"SK\":{\"S\":\"LOCK\"}}}"},
	{"after another application's item", &k_pk, "~T1JERVIjNw", /* ORDER#7 */
	 1,
	 "{\"TableName\":\"Locks\",\"Limit\":1,\"ConsistentRead\":true,"
	 "\"FilterExpression\":\"begins_with(#pk, :prefix)\","
	 "\"ProjectionExpression\":\"#pk, #o, #r, #f, #l, #t, #h, #w, #wm, #fr, #fb, #sc, #se, "
	 "#sl\","
	 "\"ExpressionAttributeNames\":{\"#pk\":\"pk\"," NAMES "},"
	 "\"ExpressionAttributeValues\":{\":prefix\":{\"S\":\"LOCK#\"}},"
	 "\"ExclusiveStartKey\":{\"pk\":{\"S\":\"ORDER#7\"}}}"},
	{"after a lock's other item, sort key", &k_sk_ttl, "~TE9DSyNh.TUVUQQ", /* LOCK#a, META */
	 5,
	 "{\"TableName\":\"Shop\",\"Limit\":5,\"ConsistentRead\":true,"
	 "\"FilterExpression\":\"begins_with(#pk, :prefix) AND #sk = :lock\","
	 "\"ProjectionExpression\":\"#pk, #sk, #o, #r, #f, #l, #t, #h, #w, #wm, #fr, #fb, #sc, "
	 "#se, #sl, "
	 "#x\","
	 "\"ExpressionAttributeNames\":{\"#pk\":\"PK\",\"#sk\":\"SK\"," NAMES
	 ",\"#x\":\"expiresAt\"},"
	 "\"ExpressionAttributeValues\":{\":prefix\":{\"S\":\"LOCK#\"},\":lock\":{\"S\":\"LOCK\"}},"
	 "\"ExclusiveStartKey\":{\"PK\":{\"S\":\"LOCK#a\"},\"SK\":{\"S\":\"META\"}}}"},
	{"not hex", &k_pk, "zz", 10, NULL},
	{"odd hex", &k_pk, "616", 10, NULL},
	{"upper-case hex", &k_pk, "6A", 10, NULL},
	{"a NUL byte", &k_pk, "6100", 10, NULL},
	{"no UTF-8", &k_pk, "ff", 10, NULL},
	{"an empty key", &k_pk, "~", 10, NULL},
	{"a base64 length no key has", &k_pk, "~Q", 10, NULL},
	{"base64 with bits past its end", &k_pk, "~QR", 10, NULL},
	{"base64 with padding", &k_pk, "~QQ==", 10, NULL},
	{"base64 of another alphabet", &k_pk, "~Q+", 10, NULL},
	{"a sort key the table has not", &k_pk, "~QQ.QQ", 10, NULL},
	{"no sort key of the table", &k_sk_ttl, "~QQ", 10, NULL},
	{"an empty sort key", &k_sk_ttl, "~QQ.", 10, NULL},
};

static void test_build_scan(void **state)
{
	for (size_t i = 0; i < sizeof build_cases / sizeof build_cases[0]; i++) {
		char err[DDB_ERR_MAX] = "";
		size_t len = 0;
		print_message("case: %s\n", build_cases[i].what);
		char *body = ddb_build_scan(build_cases[i].keys, build_cases[i].cursor,
					    build_cases[i].limit, &len, err);
		if (!build_cases[i].want) {
			assert_null(body);
			assert_non_null(strstr(err, "cursor"));
			continue;
		}
		assert_non_null(body);
		assert_int_equal(len, strlen(body));
		assert_json_eq(body, build_cases[i].want);
		ddb_body_free(body);
	}
}

/* The longest name is a cursor; one byte more is none. */
static void test_lock_cursor_bounds(void **state)
{
	char *name = malloc(STORE_NAME_MAX + 2), cursor[STORE_CURSOR_MAX + 8];
	char pk[DDB_PK_MAX + 1], sk[DDB_SK_MAX + 1];
	assert_non_null(name);
	memset(name, 'n', STORE_NAME_MAX);
	name[STORE_NAME_MAX] = '\0';
	store_cursor_of(name, cursor);
	assert_int_equal(strlen(cursor), 2 * STORE_NAME_MAX);
	assert_true(ddb_scan_cursor_key(&k_sk_ttl, cursor, pk, sk));
	assert_int_equal(strlen(pk), 5 + STORE_NAME_MAX);
	assert_memory_equal(pk, "LOCK#nnn", 8);
	assert_string_equal(sk, "LOCK");
	strcat(cursor, "6e");
	assert_false(ddb_scan_cursor_key(&k_sk_ttl, cursor, pk, sk));
	free(name);
}

/* ---- responses ---- */

struct page {
	struct store_scan_result res;
	struct store_scan_entry entries[8];
};

static bool parse(const struct ddb_keys *k, const char *body, unsigned max, struct page *p,
		  char *err)
{
	memset(p, 0x5a, sizeof *p); /* no field is left as it was */
	p->res.entries = p->entries;
	return ddb_parse_scan(body, strlen(body), k, max, &p->res, err);
}

static void test_parse_scan_page(void **state)
{
	const char *body =
		"{\"Items\":["
		"{\"pk\":{\"S\":\"LOCK#a\"},\"_type\":{\"S\":\"LOCK\"},\"owner\":{\"S\":\"o1\"},"
		"\"rvn\":{\"S\":\"r1\"},\"fence\":{\"N\":\"3\"},\"leaseMs\":{\"N\":\"3000\"},"
		"\"holder\":{\"S\":\"pod\"}},"
		"{\"pk\":{\"S\":\"ORDER#1\"},\"owner\":{\"S\":\"x\"}},"
		"{\"pk\":{\"N\":\"5\"}},"
		"{\"pk\":{\"S\":\"LOCK#\"}},"
		"{\"pk\":{\"S\":\"LOCK#\xc3\"}},"
		"7,"
		"{\"pk\":{\"S\":\"LOCK#b c\"},\"_type\":{\"S\":\"LOCK\"},\"rvn\":{\"S\":\"r2\"},"
		"\"fence\":{\"N\":\"9\"},\"freed\":{\"N\":\"9\"},\"freedBy\":{\"S\":\"force\"},"
		"\"waiter\":{\"S\":\"w\"},\"waiterMs\":{\"N\":\"500\"}}],"
		"\"Count\":7,\"ScannedCount\":10,"
		"\"LastEvaluatedKey\":{\"pk\":{\"S\":\"LOCK#b c\"}}}";
	struct page p;
	char err[DDB_ERR_MAX] = "";
	assert_false(parse(&k_pk, body, 6, &p, err)); /* DynamoDB never gives more than Limit */
	if (!parse(&k_pk, body, 7, &p, err))
		fail_msg("%s", err);
	assert_int_equal(p.res.count, 2);
	assert_string_equal(p.entries[0].name, "a");
	const struct lock_item *a = &p.entries[0].item;
	assert_true(a->exists && a->has_owner && a->has_lease && a->has_fence);
	assert_string_equal(a->owner, "o1");
	assert_string_equal(a->holder, "pod");
	assert_string_equal(a->type, "LOCK");
	assert_int_equal(a->fence, 3);
	assert_int_equal(a->freed, 0);
	assert_string_equal(p.entries[1].name, "b c");
	const struct lock_item *b = &p.entries[1].item;
	assert_false(b->has_owner);
	assert_int_equal(b->freed, 9);
	assert_true(b->freed_forced);
	assert_true(b->has_waiter);
	assert_int_equal(b->waiter_ms, 500);
	assert_string_equal(p.res.cursor, "622063");

	/* the last page: no LastEvaluatedKey, no cursor; none at all is fine */
	assert_true(parse(&k_pk, "{\"Items\":[],\"Count\":0}", 4, &p, err));
	assert_int_equal(p.res.count, 0);
	assert_string_equal(p.res.cursor, "");
}

/* With a sort key, only the LOCK item of a LOCK# partition is a lock; the
 * TTL attribute is read. A page may end on another item: its cursor is the
 * "~" form, which gives that key back. */
static void test_parse_scan_sort_key(void **state)
{
	const char *body =
		"{\"Items\":["
		"{\"PK\":{\"S\":\"LOCK#a\"},\"SK\":{\"S\":\"META\"},\"owner\":{\"N\":\"1\"}},"
		"{\"PK\":{\"S\":\"LOCK#a\"},\"SK\":{\"S\":\"LOCK\"},\"rvn\":{\"S\":\"r\"},"
		"\"expiresAt\":{\"N\":\"1900000000\"}},"
		"{\"PK\":{\"S\":\"LOCK#b\"}}],"
		"\"LastEvaluatedKey\":{\"PK\":{\"S\":\"LOCK#z\"},\"SK\":{\"S\":\"META\"}}}";
	struct page p;
	char err[DDB_ERR_MAX] = "", pk[DDB_PK_MAX + 1], sk[DDB_SK_MAX + 1];
	if (!parse(&k_sk_ttl, body, 4, &p, err))
		fail_msg("%s", err);
	assert_int_equal(p.res.count, 1);
	assert_string_equal(p.entries[0].name, "a");
	assert_int_equal(p.entries[0].item.ttl, 1900000000);
	assert_string_equal(p.res.cursor, "~TE9DSyN6.TUVUQQ");
	assert_true(ddb_scan_cursor_key(&k_sk_ttl, p.res.cursor, pk, sk));
	assert_string_equal(pk, "LOCK#z");
	assert_string_equal(sk, "META");
	/* a lock's key: the hex of its name */
	body = "{\"Items\":[],\"LastEvaluatedKey\":{\"PK\":{\"S\":\"LOCK#\\u00e9\"},"
	       "\"SK\":{\"S\":\"LOCK\"}}}";
	assert_true(parse(&k_sk_ttl, body, 4, &p, err));
	assert_string_equal(p.res.cursor, "c3a9");
}

/* DynamoDB's largest keys (2048 and 1024 bytes of any UTF-8) fit a cursor
 * and come back from it as they were. */
static void test_parse_scan_largest_foreign_key(void **state)
{
	static char body[16384];
	char want_pk[DDB_PK_MAX + 1], want_sk[DDB_SK_MAX + 1];
	for (int i = 0; i < DDB_PK_MAX; i++)
		want_pk[i] = (char)('!' + i % 90);
	want_pk[DDB_PK_MAX] = '\0';
	want_pk[0] = '#'; /* no escapes needed in the JSON below */
	for (int i = 0; i < DDB_SK_MAX; i++)
		want_sk[i] = (char)('A' + i % 26);
	want_sk[DDB_SK_MAX] = '\0';
	for (char *c = want_pk; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = 'x';
	snprintf(
		body, sizeof body,
		"{\"Items\":[],\"LastEvaluatedKey\":{\"PK\":{\"S\":\"%s\"},\"SK\":{\"S\":\"%s\"}}}",
		want_pk, want_sk);
	struct page p;
	char err[DDB_ERR_MAX] = "", pk[DDB_PK_MAX + 1], sk[DDB_SK_MAX + 1];
	if (!parse(&k_sk_ttl, body, 4, &p, err))
		fail_msg("%s", err);
	assert_true(strlen(p.res.cursor) <= STORE_CURSOR_MAX);
	assert_int_equal(p.res.cursor[0], '~');
	assert_true(ddb_scan_cursor_key(&k_sk_ttl, p.res.cursor, pk, sk));
	assert_string_equal(pk, want_pk);
	assert_string_equal(sk, want_sk);
	/* a 3-byte key as well (no base64 remainder) */
	assert_true(parse(&k_pk, "{\"Items\":[],\"LastEvaluatedKey\":{\"pk\":{\"S\":\"abc\"}}}", 4,
			  &p, err));
	assert_string_equal(p.res.cursor, "~YWJj");
	assert_true(ddb_scan_cursor_key(&k_pk, p.res.cursor, pk, sk));
	assert_string_equal(pk, "abc");
}

static void test_parse_scan_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{}", /* no Items */
		"{\"Items\":{}}",
		/* more than max (2) */
		"{\"Items\":[{\"pk\":{\"S\":\"x\"}},{\"pk\":{\"S\":\"y\"}},{\"pk\":{\"S\":\"z\"}}]"
		"}",
		/* a lock item that ddb_parse_item refuses: the page, naming it */
		"{\"Items\":[{\"pk\":{\"S\":\"LOCK#bad\"},\"owner\":{\"N\":\"1\"}}]}",
		"{\"Items\":[{\"pk\":{\"S\":\"LOCK#bad\"},\"leaseMs\":{\"N\":\"0\"}}]}",
		"{\"Items\":[],\"LastEvaluatedKey\":{}}",
		"{\"Items\":[],\"LastEvaluatedKey\":{\"pk\":{\"N\":\"1\"}}}",
		"{\"Items\":[],\"LastEvaluatedKey\":[]}",
		/* no UTF-8: no key DynamoDB has, nor a cursor the next page takes */
		"{\"Items\":[],\"LastEvaluatedKey\":{\"pk\":{\"S\":\"ORDER#\xed\"}}}",
		"{\"Items\":[],\"LastEvaluatedKey\":{\"pk\":{\"S\":\"LOCK#\xff\"}}}",
		"{\"Items\":[],\"LastEvaluatedKey\":{\"pk\":{\"S\":\"\"}}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct page p;
		char err[DDB_ERR_MAX] = "";
		if (parse(&k_pk, bad[i], 2, &p, err))
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
		assert_int_equal(p.res.count, 0);
		assert_string_equal(p.res.cursor, "");
		if (strstr(bad[i], "LOCK#bad"))
			assert_non_null(strstr(err, "bad"));
	}
	/* with a sort key, a LastEvaluatedKey must carry it */
	struct page p;
	char err[DDB_ERR_MAX] = "";
	assert_false(parse(
		&k_sk_ttl,
		"{\"Items\":[],\"LastEvaluatedKey\":{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"\"}}}", 2,
		&p, err));
	assert_false(parse(&k_sk_ttl, "{\"Items\":[],\"LastEvaluatedKey\":{\"PK\":{\"S\":\"a\"}}}",
			   2, &p, err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_scan),
		cmocka_unit_test(test_lock_cursor_bounds),
		cmocka_unit_test(test_parse_scan_page),
		cmocka_unit_test(test_parse_scan_sort_key),
		cmocka_unit_test(test_parse_scan_largest_foreign_key),
		cmocka_unit_test(test_parse_scan_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
