/*
 * it_locks_moto: the LOCK.* tests that run on moto's DynamoDB only (it_locks
 * runs its list on both stores): two gateway processes share one table —
 * refusal across processes, takeover after SIGKILL, handover after
 * SIGTERM, a holder SIGSTOPped past its lease — and one gateway whose
 * items are written or deleted behind its back, and INFO dynamodb.
 * Without LG_MOTO every test fails.
 *
 * Timings are asserted loosely (shared, noisy machines) and printed.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

/* ---- two gateways on one moto table ---- */

struct pair {
	struct gw a, b;
	char table[64];
};

static void pair_up(struct pair *p)
{
	assert_true(gw_have_moto());
	snprintf(p->table, sizeof(p->table), "%s", gw_new_table());
	gw_start(&p->a, p->table, "--holder-label", "gw-a", NULL);
	gw_start(&p->b, p->table, "--holder-label", "gw-b", NULL);
}

/* A lock held on one gateway is refused on the other, and (name, token) reaches it
 * from there. */
static void test_pair_refused_across(void **state)
{
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a), *b = gw_connect(&p.b);
	long long t = lh_acquire(a, "x", 2000);
	gw_expect_nil(b, "LOCK.ACQUIRE x 2000");
	lh_expect_state(b, "x", 1, "gw-a", 2000, t, 0);
	long long t0 = gw_now_ms();
	gw_expect_nil(b, "LOCK.ACQUIRE x 2000 WAIT 1500"); /* a live holder is renewed */
	assert_true(gw_now_ms() - t0 >= 1500);
	/* (name, token) names the lease on every replica */
	gw_expect_int(b, 1, "LOCK.RENEW x %lld", t);
	lh_expect_state(a, "x", 1, "gw-a", 2000, t, 1);
	gw_expect_int(b, 1, "LOCK.RELEASE x %lld", t);
	gw_expect_int(b, 0, "LOCK.RELEASE x %lld", t); /* once */
	long long t2 = lh_acquire(b, "x", 2000);
	assert_true(t2 > t);
	lh_expect_state(a, "x", 1, "gw-b", 2000, t2, 0);
	redisContext *a2 = gw_connect(&p.a);
	gw_expect_nil(a2, "LOCK.ACQUIRE x 2000");
	redisFree(a2);
	/* a's session learns it at its next renewal (a third of the lease):
	 * released, not lost */
	gw_sleep_ms(1000);
	gw_expect_int(a, 0, "LOCK.RELEASE x");
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&p.a, SIGTERM), 0);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* The holder's process is killed: the other takes the lock over after a
 * lease. k1's waiter was waiting before the kill (it may have first seen
 * the last renewal up to a third of a lease before it), k2's starts after. */
static void test_pair_sigkill_takeover(void **state)
{
	enum { LEASE = 2000, POLL = LEASE / 3, SLACK = 1500 };
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a);
	long long t1 = lh_acquire(a, "k1", LEASE);
	long long t2 = lh_acquire(a, "k2", LEASE);
	struct raw *w1 = raw_open(p.b.port), *w2 = raw_open(p.b.port);
	raw_send(w1, "LOCK.ACQUIRE k1 2000 WAIT 0");
	assert_true(raw_quiet(w1, 1000)); /* a renewal or two seen */
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGKILL), 128 + SIGKILL);
	raw_send(w2, "LOCK.ACQUIRE k2 2000 WAIT 0");
	long long got1 = raw_int_of(raw_reply(w1, LEASE + 2 * POLL + SLACK + 1000));
	long long ms1 = gw_now_ms() - t0;
	long long got2 = raw_int_of(raw_reply(w2, LEASE + 2 * POLL + SLACK + 1000));
	long long ms2 = gw_now_ms() - t0;
	printf("# SIGKILL takeover (lease %d ms, poll %d ms): waiting before %lld ms, "
	       "waiting after %lld ms\n",
	       LEASE, POLL, ms1, ms2);
	assert_int_equal(got1, t1 + 1);
	assert_int_equal(got2, t2 + 1);
	assert_true(ms1 >= LEASE - POLL && ms1 < LEASE + 2 * POLL + SLACK);
	assert_true(ms2 >= LEASE && ms2 < LEASE + 2 * POLL + SLACK);
	redisContext *b = gw_connect(&p.b);
	lh_expect_state(b, "k1", 1, "gw-b", LEASE, t1 + 1, 0);
	redisFree(b);
	raw_close(w1);
	raw_close(w2);
	redisFree(a);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* SIGTERM releases: the other gateway's waiter gets the lock at its next
 * poll (every 2000 ms here), long before a lease (6000 ms). */
static void test_pair_sigterm_handover(void **state)
{
	enum { LEASE = 6000, POLL = LEASE / 3 };
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a);
	long long t = lh_acquire(a, "h", LEASE);
	struct raw *w = raw_open(p.b.port);
	raw_send(w, "LOCK.ACQUIRE h 6000 WAIT 0");
	assert_true(raw_quiet(w, 300));
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGTERM), 0);
	long long got = raw_int_of(raw_reply(w, LEASE + 2000));
	long long ms = gw_now_ms() - t0;
	printf("# SIGTERM handover (lease %d ms, poll %d ms): %lld ms\n", LEASE, POLL, ms);
	assert_int_equal(got, t + 1);
	assert_true(ms < POLL + 1500);
	raw_close(w);
	redisFree(a);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* The holder's gateway is stopped past its lease; the other takes over
 * with a higher token; once continued, the stopped one's RESP3 client is
 * pushed the loss and its next LOCK.RENEW answers -LOST.
 *
 * The reason is `expired`: the takeover comes a whole lease after the
 * other gateway first read the holder's last rvn, so after the holder's
 * own lease ended on its monotonic clock (which runs while stopped); on
 * SIGCONT its end timer fires with the heartbeat's renewal still in
 * flight. (A renewal that finds another owner before the lease runs out,
 * `taken_over`, is test_moto_item_written_behind.) */
static void test_pair_sigstop_lost(void **state)
{
	enum { LEASE = 2000 };
	struct pair p;
	char want[256];
	pair_up(&p);
	struct raw *a = raw_open(p.a.port);
	raw_send(a, "HELLO 3");
	raw_reply(a, 5000);
	long long t = raw_int(a, "LOCK.ACQUIRE s 2000");
	/* a2 holds s2, which nobody contends, and asks to renew it while the
	 * gateway is stopped: that lease ended too */
	struct raw *a2 = raw_open(p.a.port);
	raw_send(a2, "HELLO 3");
	raw_reply(a2, 5000);
	long long t2 = raw_int(a2, "LOCK.ACQUIRE s2 2000");
	struct raw *w = raw_open(p.b.port);
	raw_send(w, "LOCK.ACQUIRE s 2000 WAIT 0");
	assert_true(raw_quiet(w, 300));
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGSTOP), 0);
	long long got = raw_int_of(raw_reply(w, 3 * LEASE + 2000));
	long long ms = gw_now_ms() - t0;
	printf("# SIGSTOP takeover (lease %d ms): %lld ms\n", LEASE, ms);
	assert_true(got > t);
	assert_true(ms >= LEASE - LEASE / 3);
	raw_send(a2, "LOCK.RENEW s2");
	gw_sleep_ms(100);
	assert_int_equal(gw_signal(&p.a, SIGCONT), 0);
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"s\", :%lld, \"expired\"]", t);
	assert_string_equal(raw_reply(a, 5000), want);
	/* s2's renewal is answered -LOST expired: after the push when the
	 * overdue end timer ran first; alone (no push after it) when the
	 * command was read first. Never 1 for a lease past its end. */
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"s2\", :%lld, \"expired\"]", t2);
	const char *r2 = raw_reply(a2, 5000);
	if (strcmp(r2, want) == 0) {
		assert_string_equal(raw_reply(a2, 5000), "-LOST expired");
	} else {
		assert_string_equal(r2, "-LOST expired");
		printf("# SIGSTOP: LOCK.RENEW read before the overdue end timer ran\n");
	}
	assert_true(raw_quiet(a2, 300));
	raw_close(a2);
	raw_expect(a, "LOCK.RENEW s", "-LOST expired");
	raw_expect(a, "LOCK.RENEW s", ":0"); /* reported once */
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"gw-b\", \"lease-ms\": :2000, \"fencing-token\": "
		 ":%lld, \"mine\": :0, \"heartbeat\": \"lease\"}",
		 got);
	raw_expect(a, "LOCK.STATE s", want);
	raw_expect(a, "LOCK.ACQUIRE s 2000", "nil");
	raw_close(a);
	raw_close(w);
	assert_int_equal(gw_signal(&p.a, SIGTERM), 0);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* Writes the item of lock `name` behind the gateway's back with boto3:
 * "steal" sets another owner and rvn, "delete" deletes the item. */
static void moto_item(const char *table, const char *name, const char *op)
{
	static const char script[] =
		"import os, sys, boto3\n"
		"t, n, op = sys.argv[1:4]\n"
		"d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'],\n"
		"    region_name='us-east-1', aws_access_key_id=os.environ['LG_AK'],\n"
		"    aws_secret_access_key=os.environ['LG_SK'])\n"
		"k = {}\n"
		"for e in d.describe_table(TableName=t)['Table']['KeySchema']:\n"
		"    k[e['AttributeName']] = {'S': 'LOCK#' + n if e['KeyType'] == 'HASH' else "
		"'LOCK'}\n"
		"if op == 'delete':\n"
		"    d.delete_item(TableName=t, Key=k)\n"
		"else:\n"
		"    d.update_item(TableName=t, Key=k, UpdateExpression='SET #o = :o, #r = :r',\n"
		"        ConditionExpression='attribute_exists(#o)',\n"
		"        ExpressionAttributeNames={'#o': 'owner', '#r': 'rvn'},\n"
		"        ExpressionAttributeValues={':o': {'S': 'intruder'}, ':r': {'S': 'x'}})\n";
	char path[512], cmd[1024];
	snprintf(path, sizeof(path), "%s/it_locks_item.py",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %s", path, table, name, op);
	assert_int_equal(system(cmd), 0);
}

/* INFO dynamodb: the HTTP requests behind the lock commands. */
static void test_info_dynamodb(void **state)
{
	struct gw g;
	const char *table = lh_mode_table();
	assert_non_null(table);
	gw_start(&g, table, "--holder-label", "gw-a", NULL);
	redisContext *c = gw_connect(&g);
	redisReply *r = gw_cmd(c, "INFO dynamodb");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	const char *p = strstr(r->str, "requests_UpdateItem:");
	assert_non_null(p);
	long long before = atoll(p + strlen("requests_UpdateItem:"));
	freeReplyObject(r);
	lh_acquire(c, "info1", 2000);
	gw_expect_int(c, 1, "LOCK.RELEASE info1");
	r = gw_cmd(c, "INFO dynamodb");
	p = strstr(r->str, "requests_UpdateItem:");
	assert_non_null(p);
	assert_int_equal(atoll(p + strlen("requests_UpdateItem:")) - before,
			 2); /* acquire, release */
	assert_non_null(strstr(r->str, "retry_quota:"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Someone writes or deletes a held lock's item: the next renewal finds
 * it, the RESP3 holder is pushed taken_over / deleted, and LOCK.RENEW
 * answers -LOST with that reason; RESP2 sessions get no push. A loss the
 * heartbeat found is reported to whichever connection addresses the lease
 * first, by (name, token) from another connection too, once. */
static void test_moto_item_written_behind(void **state)
{
	struct gw g;
	char want[256];
	const char *table = lh_mode_table();
	assert_non_null(table);
	gw_start(&g, table, "--holder-label", "gw-a", NULL);
	struct raw *a = raw_open(g.port), *b = raw_open(g.port);
	raw_send(a, "HELLO 3");
	raw_reply(a, 5000);
	long long t1 = raw_int(a, "LOCK.ACQUIRE f1 60000");
	long long t2 = raw_int(a, "LOCK.ACQUIRE f2 60000");
	long long t3 = raw_int(b, "LOCK.ACQUIRE f3 60000");
	moto_item(table, "f1", "steal");
	moto_item(table, "f2", "delete");
	moto_item(table, "f3", "steal");

	raw_send(a, "LOCK.RENEW f1");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"f1\", :%lld, \"taken_over\"]", t1);
	assert_string_equal(raw_reply(a, 5000), want);
	assert_string_equal(raw_reply(a, 5000), "-LOST taken_over");
	raw_expect(a, "LOCK.RENEW f1", ":0");
	snprintf(want, sizeof(want),
		 "{\"held\": :1, \"holder\": \"gw-a\", \"lease-ms\": :60000, \"fencing-token\": "
		 ":%lld, \"mine\": :0, \"heartbeat\": \"lease\"}",
		 t1);
	raw_expect(a, "LOCK.STATE f1", want);

	raw_send(a, "LOCK.RENEW f2");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"f2\", :%lld, \"deleted\"]", t2);
	assert_string_equal(raw_reply(a, 5000), want);
	assert_string_equal(raw_reply(a, 5000), "-LOST deleted");
	raw_expect(a, "LOCK.STATE f2", "nil");
	/* a deleted item starts its token at 1 again */
	raw_expect(a, "LOCK.ACQUIRE f2 2000", ":1");

	/* RESP2: the same answer, no push */
	raw_expect(b, "LOCK.RENEW f3", "-LOST taken_over");
	raw_expect(b, "PING", "+PONG");
	raw_expect(b, "LOCK.RELEASE f3", ":0");
	assert_true(t3 > 0);

	/* found by b's heartbeat (a third of 3 s), reported to a by token */
	long long t4 = raw_int(b, "LOCK.ACQUIRE f4 3000");
	moto_item(table, "f4", "steal");
	usleep(1600 * 1000);
	snprintf(want, sizeof(want), "LOCK.RENEW f4 %lld", t4);
	raw_expect(a, want, "-LOST taken_over");
	raw_expect(b, "LOCK.RENEW f4", ":0"); /* reported once */
	assert_true(raw_quiet(a, 100));
	raw_close(a);
	raw_close(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Writes (op "put": attrs, a JSON map of DynamoDB attributes besides the
 * key) or reads (op "get": the attributes besides the key, as sorted JSON,
 * into out) the item of lock `name` with boto3, behind the gateway. */
static void moto_raw(const char *table, const char *name, const char *op, const char *attrs,
		     char *out, size_t outsz)
{
	static const char script[] =
		"import os, sys, json, boto3\n"
		"t, n, op, attrs = sys.argv[1:5]\n"
		"d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'],\n"
		"    region_name='us-east-1', aws_access_key_id=os.environ['LG_AK'],\n"
		"    aws_secret_access_key=os.environ['LG_SK'])\n"
		"k = {}\n"
		"for e in d.describe_table(TableName=t)['Table']['KeySchema']:\n"
		"    k[e['AttributeName']] = {'S': 'LOCK#' + n if e['KeyType'] == 'HASH' else "
		"'LOCK'}\n"
		"if op == 'put':\n"
		"    d.put_item(TableName=t, Item=dict(k, **json.loads(attrs)))\n"
		"else:\n"
		"    i = d.get_item(TableName=t, Key=k, ConsistentRead=True).get('Item', {})\n"
		"    print(json.dumps({a: v for a, v in i.items() if a not in k}, "
		"sort_keys=True))\n";
	char path[512], cmd[2048];
	snprintf(path, sizeof(path), "%s/it_locks_raw.py",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %s '%s'", path, table, name, op, attrs);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = out != NULL ? fread(out, 1, outsz - 1, p) : 0;
	if (out != NULL)
		out[n] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* The reply to cmd (a format with one %s: the lock's name) is an -ERR that
 * contains each of the needles. */
static void expect_err_with(redisContext *c, const char *cmd, const char *name,
			    const char *const *needles)
{
	char line[256];
	snprintf(line, sizeof(line), cmd, name);
	redisReply *r = gw_cmd(c, cmd, name);
	if (r->type != REDIS_REPLY_ERROR)
		fail_msg("%s: no error (type %d, %lld)", line, r->type, r->integer);
	print_message("%s: -%s\n", line, r->str);
	if (strncmp(r->str, "ERR ", 4) != 0)
		fail_msg("%s: not -ERR: %s", line, r->str);
	for (; *needles != NULL; needles++)
		if (strstr(r->str, *needles) == NULL)
			fail_msg("%s: \"%s\" not in \"%s\"", line, *needles, r->str);
	freeReplyObject(r);
}

/* Items at a lock's key that are no lock, or whose fence gives no rising
 * token, written by another tool (issue 11): LOCK.ACQUIRE (a try and a
 * wait) and LOCK.STATE answer -ERR naming the lock, the table and what is
 * wrong, and the item is left as it was: nothing is written on it. */
static void test_moto_items_not_locks(void **state)
{
	static const struct {
		const char *name, *attrs, *needle;
	} cases[] = {
		{"foreign", "{\"kind\": {\"S\": \"invoice\"}, \"fence\": {\"N\": \"3\"}}",
		 "not a lock"},
		{"othertype", "{\"_type\": {\"S\": \"JOB\"}, \"rvn\": {\"S\": \"r\"}}",
		 "not a lock"},
		{"ownerless", "{\"_type\": {\"S\": \"LOCK\"}, \"owner\": {\"S\": \"o\"}}",
		 "not a lock"},
		{"negative", "{\"_type\": {\"S\": \"LOCK\"}, \"fence\": {\"N\": \"-5\"}}", "fence"},
		{"top",
		 "{\"_type\": {\"S\": \"LOCK\"}, \"fence\": {\"N\": \"9223372036854775807\"}}",
		 "fence"},
		{"huge",
		 "{\"_type\": {\"S\": \"LOCK\"}, \"fence\": {\"N\": \"18446744073709551621\"}}",
		 "fence"},
		{"text", "{\"_type\": {\"S\": \"LOCK\"}, \"fence\": {\"S\": \"7\"}}", "fence"},
	};
	struct gw g;
	const char *table = lh_mode_table();
	assert_non_null(table);
	gw_start(&g, table, "--holder-label", "gw-a", NULL);
	redisContext *c = gw_connect(&g);
	char before[1024], after[1024];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = cases[i].name;
		const char *needles[] = {cases[i].needle, name, table, NULL};
		moto_raw(table, name, "put", cases[i].attrs, NULL, 0);
		moto_raw(table, name, "get", "", before, sizeof(before));
		expect_err_with(c, "LOCK.ACQUIRE %s 2000", name, needles);
		expect_err_with(c, "LOCK.ACQUIRE %s 2000", name, needles); /* not :4 then :3 */
		expect_err_with(c, "LOCK.ACQUIRE %s 2000 WAIT 3000", name, needles);
		if (strcmp(name, "top") != 0) /* a fence of 2^63-1 is shown: a token */
			expect_err_with(c, "LOCK.STATE %s", name, needles);
		moto_raw(table, name, "get", "", after, sizeof(after));
		assert_string_equal(before, after);
	}
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* DynamoDB's condition cannot tell 1.5 from an integer: the write lands on
 * a fence of 1.5, the answer (2.5) is refused as no token, and the write is
 * given back at once: no owner stays on the item. */
static void test_moto_fraction_fence_undone(void **state)
{
	struct gw g;
	const char *table = lh_mode_table();
	assert_non_null(table);
	gw_start(&g, table, "--holder-label", "gw-a", NULL);
	redisContext *c = gw_connect(&g);
	const char *needles[] = {"fence", "half", table, NULL};
	char item[1024];
	moto_raw(table, "half", "put",
		 "{\"_type\": {\"S\": \"LOCK\"}, \"rvn\": {\"S\": \"r\"}, \"fence\": {\"N\": "
		 "\"1.5\"}}",
		 NULL, 0);
	expect_err_with(c, "LOCK.ACQUIRE %s 2000", "half", needles);
	for (int i = 0; i < 50; i++) { /* the release is on its way */
		moto_raw(table, "half", "get", "", item, sizeof(item));
		if (strstr(item, "owner") == NULL)
			break;
		gw_sleep_ms(100);
	}
	print_message("after: %s", item);
	assert_null(strstr(item, "owner"));
	assert_non_null(strstr(item, "2.5"));
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

int main(void)
{
	const struct CMUnitTest two[] = {
		T(test_pair_refused_across),	  T(test_pair_sigkill_takeover),
		T(test_pair_sigterm_handover),	  T(test_pair_sigstop_lost),
		T(test_moto_item_written_behind), T(test_info_dynamodb),
		T(test_moto_items_not_locks),	  T(test_moto_fraction_fence_undone),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("moto: two gateways, items written behind", two,
					   lh_group_moto, NULL) != 0;
}
