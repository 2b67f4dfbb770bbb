/*
 * it_fenced: fenced writes through the gateway on moto's DynamoDB —
 * LOCK.TRANSACT, LEADER.TRANSACT and LOCK.CHECK with real gateway
 * processes, items read back with boto3:
 *   - a holder whose gateway is SIGSTOPped past its lease, while a holder
 *     on a second gateway takes over and writes, is refused -LOST when it
 *     goes on, and its item is not written;
 *   - a lock taken behind the gateway's back (or its item deleted): the
 *     ConditionCheck at commit refuses the write, -LOST taken_over /
 *     deleted, and the lease is lost (reported once);
 *   - the client's own condition failures come back item by item
 *     (-TXCANCELLED), nothing written;
 *   - every -ERR: invalid JSON, 100 items, a table not in --fenced-tables,
 *     a lock's key on the lock table, a lease of another replica, not
 *     leading, fenced writes off, the embedded store;
 *   - a write to a table that does not exist names that table (or the
 *     client's tables, when several), not the lock table; the lock table
 *     gone is named as such;
 *   - under a shared hold (LOCK.ACQUIRE ... SHARED, LIMIT n): the
 *     connection's own hold writes by its token (a reader's group token, a
 *     semaphore slot's), another connection's does not; a slot taken
 *     behind the gateway's back is -LOST taken_over, one an operator
 *     ended -LOST forced, nothing written; a released hold's token names
 *     nothing; 98 items at most.
 * The ClientRequestToken of retries is held to in it_fenced_store (moto
 * ignores the token). Without LG_MOTO every test fails.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"

#define LEASE 1500

/* ---- boto3, behind the gateways ---- */

static const char script[] =
	"import os, sys, json, boto3\n"
	"d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'],\n"
	"    region_name='us-east-1', aws_access_key_id=os.environ['LG_AK'],\n"
	"    aws_secret_access_key=os.environ['LG_SK'])\n"
	"op, t = sys.argv[1:3]\n"
	"if op == 'create':\n"
	"    d.create_table(TableName=t, BillingMode='PAY_PER_REQUEST',\n"
	"        AttributeDefinitions=[{'AttributeName': 'id', 'AttributeType': 'S'}],\n"
	"        KeySchema=[{'AttributeName': 'id', 'KeyType': 'HASH'}])\n"
	"elif op == 'drop':\n"
	"    d.delete_table(TableName=t)\n"
	"elif op == 'get':\n"
	"    i = d.get_item(TableName=t, Key={'id': {'S': sys.argv[3]}},\n"
	"        ConsistentRead=True).get('Item')\n"
	"    print(json.dumps(i, sort_keys=True) if i else 'none')\n"
	"else:\n"
	"    k = {}\n"
	"    for e in d.describe_table(TableName=t)['Table']['KeySchema']:\n"
	"        pk = sys.argv[3] if sys.argv[3].startswith('SLOT#') else 'LOCK#' + sys.argv[3]\n"
	"        k[e['AttributeName']] = {'S': pk if e['KeyType'] == 'HASH' else 'LOCK'}\n"
	"    if op == 'delete':\n"
	"        d.delete_item(TableName=t, Key=k)\n"
	"    else:\n"
	"        d.update_item(TableName=t, Key=k, UpdateExpression='SET #o = :o, #r = :r "
	"ADD #f :one',\n"
	"            ExpressionAttributeNames={'#o': 'owner', '#r': 'rvn', '#f': 'fence'},\n"
	"            ExpressionAttributeValues={':o': {'S': 'intruder'}, ':r': {'S': 'x'},\n"
	"                ':one': {'N': '1'}})\n";

/* Runs the script with op and args; its output (one line) into out. */
static void boto(char *out, size_t cap, const char *op, const char *table, const char *arg)
{
	char path[512], cmd[1024];
	snprintf(path, sizeof(path), "%s/it_fenced.py",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %s", path, op, table, arg ? arg : "");
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[4096] = "";
	if (fgets(line, sizeof(line), p) == NULL)
		line[0] = '\0';
	assert_int_equal(pclose(p), 0);
	line[strcspn(line, "\n")] = '\0';
	if (out != NULL)
		snprintf(out, cap, "%s", line);
}

/* A new data table (key "id"). */
static const char *data_table(void)
{
	static char name[64];
	snprintf(name, sizeof(name), "%s", gw_new_table());
	boto(NULL, 0, "create", name, NULL);
	return name;
}

/* The item id of table as boto3 reads it, or "none". */
static const char *item(const char *table, const char *id)
{
	static char out[4096];
	boto(out, sizeof(out), "get", table, id);
	return out;
}

/* [Put {id, by}] on table. */
static const char *put(const char *table, const char *id, long long by)
{
	static char s[512];
	snprintf(s, sizeof(s),
		 "[{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"%s\"},"
		 "\"by\":{\"N\":\"%lld\"}}}}]",
		 table, id, by);
	return s;
}

static void expect_ok(redisContext *c, const char *name, long long token, const char *items)
{
	redisReply *r = redisCommand(c, "LOCK.TRANSACT %s %lld %s", name, token, items);
	assert_non_null(r);
	if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)
		fail_msg("LOCK.TRANSACT %s %lld: %s", name, token, r->str ? r->str : "?");
	freeReplyObject(r);
}

/* The error reply of LOCK.TRANSACT (freed by the caller). */
static redisReply *tx_err(redisContext *c, const char *name, long long token, const char *items)
{
	redisReply *r = redisCommand(c, "LOCK.TRANSACT %s %lld %s", name, token, items);
	assert_non_null(r);
	if (r->type != REDIS_REPLY_ERROR)
		fail_msg("LOCK.TRANSACT %s %lld: not an error (type %d)", name, token, r->type);
	return r;
}

static void expect_err(redisContext *c, const char *name, long long token, const char *items,
		       const char *prefix)
{
	redisReply *r = tx_err(c, name, token, items);
	if (strncmp(r->str, prefix, strlen(prefix)) != 0)
		fail_msg("LOCK.TRANSACT %s %lld: '%s', want '%s...'", name, token, r->str, prefix);
	freeReplyObject(r);
}

/* ---- the paused holder ---- */

static void test_paused_holder_refused(void **state)
{
	assert_true(gw_have_moto());
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	struct gw a, b;
	gw_start(&a, table, "--holder-label", "gw-a", "--fenced-tables", data, NULL);
	gw_start(&b, table, "--holder-label", "gw-b", "--fenced-tables", data, NULL);
	redisContext *ca = gw_connect(&a), *cb = gw_connect(&b);
	long long t1 = lh_acquire(ca, "job", LEASE);
	expect_ok(ca, "job", t1, put(data, "a1", t1));
	gw_expect_int(ca, 1, "LOCK.CHECK job %lld", t1);

	assert_int_equal(gw_signal(&a, SIGSTOP), 0);
	long long t0 = gw_now_ms();
	long long t2;
	redisReply *r = redisCommand(cb, "LOCK.ACQUIRE job %d WAIT 20000", LEASE);
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	t2 = r->integer;
	freeReplyObject(r);
	printf("# takeover from the stopped gateway after %lld ms\n", gw_now_ms() - t0);
	assert_true(t2 > t1);
	expect_ok(cb, "job", t2, put(data, "b1", t2));
	gw_expect_int(cb, 0, "LOCK.CHECK job %lld", t1);

	/* the paused holder goes on: its write waits in its gateway */
	gw_send(ca, "LOCK.TRANSACT job %lld %s", t1, put(data, "a2", t1));
	assert_int_equal(gw_signal(&a, SIGCONT), 0);
	r = gw_reply_within(ca, 10000);
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	printf("# the paused holder, continued: %s\n", r->str);
	assert_true(strcmp(r->str, "LOST expired") == 0 || strcmp(r->str, "LOST taken_over") == 0);
	freeReplyObject(r);
	assert_string_equal(item(data, "a2"), "none");
	char want[64];
	snprintf(want, sizeof(want), "\"by\": {\"N\": \"%lld\"}", t1);
	assert_non_null(strstr(item(data, "a1"), want));
	snprintf(want, sizeof(want), "\"by\": {\"N\": \"%lld\"}", t2);
	assert_non_null(strstr(item(data, "b1"), want));
	/* the new holder still writes */
	expect_ok(cb, "job", t2, put(data, "b2", t2));
	redisFree(ca);
	redisFree(cb);
	assert_int_equal(gw_signal(&a, SIGTERM), 0);
	assert_int_equal(gw_signal(&b, SIGTERM), 0);
}

/* ---- the check at commit ---- */

static void test_check_at_commit(void **state)
{
	assert_true(gw_have_moto());
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	struct gw g;
	gw_start(&g, table, "--fenced-tables", data, NULL);
	redisContext *c = gw_connect(&g);
	long long t = lh_acquire(c, "job", 60000); /* held, as this gateway sees it */
	boto(NULL, 0, "steal", table, "job");
	expect_err(c, "job", t, put(data, "x1", t), "LOST taken_over");
	assert_string_equal(item(data, "x1"), "none");
	gw_expect_int(c, 0, "LOCK.RENEW job"); /* reported once: gone */
	assert_true(gw_log_count(&g, "taken_over") >= 1);

	t = lh_acquire(c, "del", 60000);
	boto(NULL, 0, "delete", table, "del");
	expect_err(c, "del", t, put(data, "x2", t), "LOST deleted");
	assert_string_equal(item(data, "x2"), "none");
	gw_expect_int(c, 0, "LOCK.CHECK del %lld", t);

	/* released: the lease is gone here, the token names nothing */
	t = lh_acquire(c, "rel", 60000);
	gw_expect_int(c, 1, "LOCK.RELEASE rel");
	expect_err(c, "rel", t, put(data, "x3", t), "ERR no lease of 'rel'");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* ---- a client's request id ---- */

/* [Update id: ADD n :by] on table: applied twice, n counts twice. */
static const char *add(const char *table, const char *id, int by)
{
	static char s[512];
	snprintf(s, sizeof(s),
		 "[{\"Update\":{\"TableName\":\"%s\",\"Key\":{\"id\":{\"S\":\"%s\"}},"
		 "\"UpdateExpression\":\"ADD n :by\",\"ExpressionAttributeValues\":"
		 "{\":by\":{\"N\":\"%d\"}}}}]",
		 table, id, by);
	return s;
}

/* LOCK.TRANSACT with REQUEST id: a resend (its answer lost, say) is applied
 * once, as DynamoDB applies a TransactWriteItems with a ClientRequestToken
 * it has seen (tests/moto_serial.py keeps that, moto does not); without an
 * id a resend is a new write; an id reused with other items is refused. */
static void test_request_id_applied_once(void **state)
{
	assert_true(gw_have_moto());
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	struct gw g;
	gw_start(&g, table, "--fenced-tables", data, NULL);
	redisContext *c = gw_connect(&g);
	long long t = lh_acquire(c, "job", 60000);
	char items[512];
	snprintf(items, sizeof(items), "%s", add(data, "cnt", 1));
	for (int i = 0; i < 2; i++)
		gw_expect_ok(c, "LOCK.TRANSACT job %lld %s REQUEST 7f3c-req-1", t, items);
	assert_non_null(strstr(item(data, "cnt"), "\"n\": {\"N\": \"1\"}"));
	gw_expect_ok(c, "LOCK.TRANSACT job %lld %s request 7f3c-req-2", t, items);
	gw_expect_ok(c, "LOCK.TRANSACT job %lld %s", t, items);
	assert_non_null(strstr(item(data, "cnt"), "\"n\": {\"N\": \"3\"}"));

	redisReply *r = redisCommand(c, "LOCK.TRANSACT job %lld %s REQUEST 7f3c-req-1", t,
				     add(data, "cnt", 5));
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	printf("# the id reused with other items: %s\n", r->str);
	assert_non_null(strstr(r->str, "IdempotentParameterMismatch"));
	freeReplyObject(r);
	assert_non_null(strstr(item(data, "cnt"), "\"n\": {\"N\": \"3\"}"));

	gw_expect_err(c, "ERR a request id is 1 to 36", "LOCK.TRANSACT job %lld %s REQUEST a_b", t,
		      items);
	gw_expect_err(c, "ERR a request id is 1 to 36", "LOCK.TRANSACT job %lld %s REQUEST %s", t,
		      items, "0123456789012345678901234567890123456");
	gw_expect_err(c, "ERR syntax error", "LOCK.TRANSACT job %lld %s REQUEST", t, items);
	gw_expect_err(c, "ERR syntax error", "LOCK.TRANSACT job %lld %s ID x", t, items);
	r = redisCommand(c, "LEADER.CAMPAIGN lead 60000");
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	for (int i = 0; i < 2; i++)
		gw_expect_ok(c, "LEADER.TRANSACT lead %s REQUEST lead-1", add(data, "lead", 1));
	assert_non_null(strstr(item(data, "lead"), "\"n\": {\"N\": \"1\"}"));
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* ---- the client's own conditions ---- */

static void test_client_reasons_per_item(void **state)
{
	assert_true(gw_have_moto());
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	struct gw g;
	gw_start(&g, table, "--fenced-tables", data, NULL);
	redisContext *c = gw_connect(&g);
	long long t = lh_acquire(c, "job", 30000);
	expect_ok(c, "job", t, put(data, "exists", t));
	char items[2048];
	snprintf(items, sizeof(items),
		 "[{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"n1\"}}}},"
		 "{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"exists\"}},"
		 "\"ConditionExpression\":\"attribute_not_exists(id)\","
		 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}},"
		 "{\"Update\":{\"TableName\":\"%s\",\"Key\":{\"id\":{\"S\":\"n2\"}},"
		 "\"UpdateExpression\":\"SET #v = :v\",\"ExpressionAttributeNames\":{\"#v\":\"v\"},"
		 "\"ExpressionAttributeValues\":{\":v\":{\"N\":\"1\"}}}}]",
		 data, data, data);
	redisReply *r = tx_err(c, "job", t, items);
	printf("# %s\n", r->str);
	/* the client's three, in order: the second failed, with its item */
	assert_true(strncmp(r->str,
			    "TXCANCELLED [{\"Code\":\"None\"},{\"Code\":"
			    "\"ConditionalCheckFailed\"",
			    strlen("TXCANCELLED [{\"Code\":\"None\"},{\"Code\":"
				   "\"ConditionalCheckFailed\"")) == 0);
	assert_non_null(strstr(r->str, "\"id\":{\"S\":\"exists\"}"));
	assert_non_null(strstr(r->str, "\"by\":{\"N\":\"1\"}"));
	assert_non_null(strstr(r->str, "}},{\"Code\":\"None\"}]"));
	freeReplyObject(r);
	assert_string_equal(item(data, "n1"), "none");
	assert_string_equal(item(data, "n2"), "none");
	/* the lease holds: the same write without the failing item commits */
	snprintf(items, sizeof(items),
		 "[{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"n1\"}}}}]", data);
	expect_ok(c, "job", t, items);
	assert_string_equal(item(data, "n1"), "{\"id\": {\"S\": \"n1\"}}");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* ---- every -ERR ---- */

static void test_error_paths(void **state)
{
	assert_true(gw_have_moto());
	char table[64], fenced[256];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	snprintf(fenced, sizeof(fenced), "%s,%s", data, table);
	struct gw a, b;
	gw_start(&a, table, "--fenced-tables", fenced, NULL);
	gw_start(&b, table, "--fenced-tables", fenced, NULL);
	redisContext *c = gw_connect(&a), *cb = gw_connect(&b);
	long long t = lh_acquire(c, "job", 30000);

	expect_err(c, "job", t, "[{\"Put\":", "ERR fenced write: the items are not valid JSON");
	expect_err(c, "job", t, put("audit", "1", t),
		   "ERR fenced write: item 1: table 'audit' is "
		   "not in --fenced-tables");
	/* the lock table is allowed (single-table design), its locks are not */
	char items[8192];
	snprintf(items, sizeof(items),
		 "[{\"Update\":{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"LOCK#job\"}},"
		 "\"UpdateExpression\":\"SET #o = :o\",\"ExpressionAttributeNames\":{\"#o\":"
		 "\"owner\"},\"ExpressionAttributeValues\":{\":o\":{\"S\":\"me\"}}}}]",
		 table);
	expect_err(c, "job", t, items, "ERR fenced write: item 1: the key of a lock item");
	snprintf(items, sizeof(items),
		 "[{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"order#1\"}}}}]", table);
	expect_ok(c, "job", t, items);
	/* 99 items commit (100 with the check), 100 are refused here */
	for (int n = 99; n <= 100; n++) {
		size_t at = (size_t)snprintf(items, sizeof(items), "[");
		for (int i = 0; i < n; i++)
			at += (size_t)snprintf(items + at, sizeof(items) - at,
					       "%s{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{"
					       "\"S\":\"m%d\"}}}}",
					       i ? "," : "", data, i);
		snprintf(items + at, sizeof(items) - at, "]");
		if (n == 99)
			expect_ok(c, "job", t, items);
		else
			expect_err(c, "job", t, items,
				   "ERR fenced write: the items must be an "
				   "array of 1 to 99");
	}
	assert_string_equal(item(data, "m98"), "{\"id\": {\"S\": \"m98\"}}");
	/* a lease of another replica, a token of no lease */
	expect_err(cb, "job", t, put(data, "y", t), "ERR no lease of 'job' with token");
	expect_err(c, "job", t + 5, put(data, "y", t), "ERR no lease of 'job' with token");
	gw_expect_err(c, "ERR token must be", "LOCK.TRANSACT job 0 []");
	gw_expect_err(c, "ERR wrong number", "LOCK.TRANSACT job 1");
	/* DynamoDB's own refusal of a malformed item */
	snprintf(items, sizeof(items),
		 "[{\"Update\":{\"TableName\":\"%s\",\"Key\":{\"id\":{\"S\":\"z\"}},"
		 "\"UpdateExpression\":\"SET #v = :v\"}}]",
		 data);
	redisReply *r = tx_err(c, "job", t, items);
	printf("# a malformed item: %s\n", r->str);
	assert_true(strncmp(r->str, "ERR ", 4) == 0 || strncmp(r->str, "TXCANCELLED", 11) == 0);
	freeReplyObject(r);
	gw_expect_int(c, 1, "LOCK.CHECK job %lld", t); /* the lease holds */

	/* LEADER.TRANSACT: only the leading connection */
	r = redisCommand(c, "LEADER.TRANSACT lead %s", put(data, "l1", 0));
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_string_equal(r->str, "ERR this connection does not lead 'lead'");
	freeReplyObject(r);
	r = redisCommand(c, "LEADER.CAMPAIGN lead 30000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long term = r->integer;
	freeReplyObject(r);
	r = redisCommand(c, "LEADER.TRANSACT lead %s", put(data, "l1", term));
	assert_int_equal(r->type, REDIS_REPLY_STATUS);
	freeReplyObject(r);
	r = redisCommand(cb, "LEADER.TRANSACT lead %s", put(data, "l2", term));
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	freeReplyObject(r);
	assert_string_equal(item(data, "l2"), "none");
	assert_non_null(strstr(item(data, "l1"), "\"id\": {\"S\": \"l1\"}"));
	redisFree(c);
	redisFree(cb);
	assert_int_equal(gw_signal(&a, SIGTERM), 0);
	assert_int_equal(gw_signal(&b, SIGTERM), 0);
}

static void test_off_and_embedded(void **state)
{
	assert_true(gw_have_moto());
	const char *data = data_table();
	struct gw g;
	gw_start(&g, gw_new_table(), NULL); /* no --fenced-tables */
	redisContext *c = gw_connect(&g);
	long long t = lh_acquire(c, "job", 30000);
	expect_err(c, "job", t, put(data, "o", t), "ERR fenced writes are off");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);

	struct gw e;
	gw_start(&e, NULL, "--fenced-tables", data, NULL); /* the embedded store */
	c = gw_connect(&e);
	t = lh_acquire(c, "job", 30000);
	expect_err(c, "job", t, put(data, "e", t), "ERR fenced writes need DynamoDB");
	gw_expect_int(c, 1, "LOCK.CHECK job %lld", t);
	gw_expect_int(c, 0, "LOCK.CHECK job %lld", t + 1);
	redisFree(c);
	assert_int_equal(gw_signal(&e, SIGTERM), 0);
	assert_string_equal(item(data, "e"), "none");
}

/* ---- a table that does not exist ---- */

static void expect_err_has(redisContext *c, const char *name, long long token, const char *items,
			   const char *want)
{
	redisReply *r = tx_err(c, name, token, items);
	printf("# %s\n", r->str);
	if (strstr(r->str, want) == NULL)
		fail_msg("LOCK.TRANSACT %s %lld: '%s', want '...%s...'", name, token, r->str, want);
	freeReplyObject(r);
}

static void test_missing_table_named(void **state)
{
	assert_true(gw_have_moto());
	char table[64], missing[80], fenced[256], want[512], items[1024];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	snprintf(missing, sizeof(missing), "%s-nosuch", table);
	snprintf(fenced, sizeof(fenced), "%s,%s", data, missing);
	struct gw g;
	gw_start(&g, table, "--fenced-tables", fenced, NULL);
	redisContext *c = gw_connect(&g);
	long long t = lh_acquire(c, "job", 60000);
	/* the one table of the items: named, the lock table said to be there */
	snprintf(want, sizeof(want),
		 "ERR fenced write: table '%s' not found (DynamoDB TransactWriteItems: "
		 "ResourceNotFoundException",
		 missing);
	expect_err(c, "job", t, put(missing, "m1", t), want);
	snprintf(want, sizeof(want), "the lock table '%s' is there", table);
	expect_err_has(c, "job", t, put(missing, "m1", t), want);
	/* two tables of the client: DynamoDB does not say which, nor can a
	 * role without DescribeTable on them */
	snprintf(items, sizeof(items),
		 "[{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"m2\"}}}},"
		 "{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"m3\"}}}}]",
		 data, missing);
	snprintf(want, sizeof(want), "ERR fenced write: one of the tables '%s', '%s' not found",
		 data, missing);
	expect_err(c, "job", t, items, want);
	assert_string_equal(item(data, "m2"), "none");
	gw_expect_int(c, 1, "LOCK.CHECK job %lld", t); /* the lease holds */
	/* the lock table gone: named */
	boto(NULL, 0, "drop", table, NULL);
	snprintf(want, sizeof(want), "ERR fenced write: the lock table '%s' not found", table);
	expect_err(c, "job", t, put(missing, "m4", t), want);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* ---- under a shared hold ---- */

/* LOCK.ACQUIRE ... SHARED | LIMIT n: [token, slot]. */
static void sh_acquire(redisContext *c, const char *cmd, long long *token, long long *slot)
{
	redisReply *r = redisCommand(c, cmd);
	assert_non_null(r);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
		fail_msg("%s: type %d %s", cmd, r->type, r->str != NULL ? r->str : "");
	*token = r->element[0]->integer;
	*slot = r->element[1]->integer;
	freeReplyObject(r);
}

/* n client items on table: Puts of many-<i>. */
static char *puts_of(const char *table, int n)
{
	size_t cap = (size_t)n * 160 + 8, at = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	at += (size_t)snprintf(s, cap, "[");
	for (int i = 0; i < n; i++)
		at += (size_t)snprintf(s + at, cap - at,
				       "%s{\"Put\":{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":"
				       "\"many-%d\"}}}}",
				       i ? "," : "", table, i);
	snprintf(s + at, cap - at, "]");
	return s;
}

static void test_shared_holds(void **state)
{
	assert_true(gw_have_moto());
	char table[64], slot_key[96];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	const char *data = data_table();
	struct gw g;
	gw_start(&g, table, "--fenced-tables", data, NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g), *c = gw_connect(&g);
	long long ta, sa, tb, sb, tc, sc;
	sh_acquire(a, "LOCK.ACQUIRE rw 60000 SHARED", &ta, &sa);
	expect_ok(a, "rw", ta, put(data, "r1", ta));
	assert_non_null(strstr(item(data, "r1"), "\"id\": {\"S\": \"r1\"}"));
	/* the group token is the connection's hold, not every reader's */
	expect_err(b, "rw", ta, put(data, "r2", ta), "ERR no lease of 'rw'");
	sh_acquire(b, "LOCK.ACQUIRE rw 60000 SHARED", &tb, &sb);
	assert_int_equal(tb, ta);
	expect_ok(b, "rw", tb, put(data, "r2", tb));
	expect_err(a, "rw", ta + 1, put(data, "r3", ta), "ERR no lease of 'rw'");
	char *many = puts_of(data, 99);
	expect_err(a, "rw", ta, many,
		   "ERR fenced write: under a shared hold the items are an "
		   "array of 1 to 98");
	free(many);
	many = puts_of(data, 98);
	expect_ok(a, "rw", ta, many);
	free(many);

	/* a semaphore holder: its slot's token; ended by an operator, -LOST
	 * forced at commit */
	sh_acquire(c, "LOCK.ACQUIRE sem 60000 LIMIT 2", &tc, &sc);
	expect_ok(c, "sem", tc, put(data, "s1", tc));
	gw_expect_int(b, 1, "LOCK.FORCE-RELEASE sem SLOT %lld", sc);
	expect_err(c, "sem", tc, put(data, "s2", tc), "LOST forced");
	assert_string_equal(item(data, "s2"), "none");

	/* a's slot taken behind the gateway: refused at commit, lost once */
	snprintf(slot_key, sizeof(slot_key), "SLOT#%lld#rw", sa);
	boto(NULL, 0, "steal", table, slot_key);
	expect_err(a, "rw", ta, put(data, "r4", ta), "LOST taken_over");
	assert_string_equal(item(data, "r4"), "none");
	gw_expect_int(a, 0, "LOCK.RELEASE rw");	     /* reported: gone */
	expect_ok(b, "rw", tb, put(data, "r5", tb)); /* b's slot is its own still */

	/* released: its token names nothing here */
	gw_expect_int(b, 1, "LOCK.RELEASE rw");
	expect_err(b, "rw", tb, put(data, "r6", tb), "ERR no lease of 'rw'");
	assert_string_equal(item(data, "r6"), "none");
	redisFree(a);
	redisFree(b);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_paused_holder_refused, gw_teardown),
		cmocka_unit_test_teardown(test_check_at_commit, gw_teardown),
		cmocka_unit_test_teardown(test_request_id_applied_once, gw_teardown),
		cmocka_unit_test_teardown(test_client_reasons_per_item, gw_teardown),
		cmocka_unit_test_teardown(test_error_paths, gw_teardown),
		cmocka_unit_test_teardown(test_off_and_embedded, gw_teardown),
		cmocka_unit_test_teardown(test_missing_table_named, gw_teardown),
		cmocka_unit_test_teardown(test_shared_holds, gw_teardown),
	};
	return cmocka_run_group_tests_name("fenced writes", tests, NULL, NULL);
}
