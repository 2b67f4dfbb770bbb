/*
 * it_swait_moto: a real gateway waits on a lock held in session mode
 * (docs/design/replica-heartbeat.md, step 1 of the rollout: every replica
 * understands such a lock; no gateway writes one yet: the flag is not
 * built). The holder replica is a
 * boto3 script on moto (signature checking on, as every moto test here):
 * it writes its session item and the lock naming it (leaseMs 10 years,
 * sleaseMs the real lease), then beats its session for a while and stops,
 * as a crashed replica does. The gateway's LOCK.ACQUIRE ... WAIT is not
 * granted while the session beats, and is granted about a lease after the
 * beats stop, with a token above the holder's. A release of its other
 * lock by (name, token) from the gateway writes the holder's revocation
 * (its session's revSeq rises). LOCK.STATE and leasegate.state say the
 * lock's holder proves it alive by its replica's heartbeat, and a lock the
 * gateway holds by its own lease. Without LG_MOTO it fails.
 *
 * Timings are asserted loosely (shared, noisy machines) and printed.
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
#include <libpq-fe.h>

#include "tests/support/gw.h"

#define SLEASE	 2000 /* the holder's real lease */
#define BEAT_MS	 500  /* its heartbeats: under a third of it */
#define BEATS	 16   /* 8 s of beats: four of its leases */
#define FENCE	 7    /* the holder's token */
#define LOCKNAME "swait"

/* The holder: argv table name ...; writes its session and two locks
 * naming it (name, and name with a 2), prints "ready", beats BEATS times,
 * then prints "stopped", whether its session was marked dead, and its
 * revSeq (revocations written for it), and exits. */
static const char holder_py[] =
	"import os, sys, time, uuid, boto3\n"
	"t, n, slease, beat_ms, beats, fence = sys.argv[1:7]\n"
	"d = boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'],\n"
	"    region_name='us-east-1', aws_access_key_id=os.environ['LG_AK'],\n"
	"    aws_secret_access_key=os.environ['LG_SK'])\n"
	"ks = d.describe_table(TableName=t)['Table']['KeySchema']\n"
	"def key(pk):\n"
	"    return {e['AttributeName']: {'S': pk if e['KeyType'] == 'HASH' else 'LOCK'}\n"
	"            for e in ks}\n"
	"skey = 'SESSION#py-holder#' + uuid.uuid4().hex\n"
	"d.put_item(TableName=t, Item=dict(key(skey), _type={'S': 'SESSION'},\n"
	"    rvn={'S': uuid.uuid4().hex}, maxLeaseMs={'N': slease}, revSeq={'N': '0'},\n"
	"    holder={'S': 'py-holder'}))\n"
	"for name in (n, n + '2'):\n"
	"    d.put_item(TableName=t, Item=dict(key('LOCK#' + name), _type={'S': 'LOCK'},\n"
	"        owner={'S': 'py-owner'}, rvn={'S': 'lock-rvn-1'}, arvn={'S': 'lock-rvn-1'},\n"
	"        fence={'N': fence}, leaseMs={'N': '315360000000'}, holder={'S': 'py-holder'},\n"
	"        session={'S': skey}, sleaseMs={'N': slease}))\n"
	"print('ready', flush=True)\n"
	"for i in range(int(beats)):\n"
	"    time.sleep(int(beat_ms) / 1000)\n"
	"    d.update_item(TableName=t, Key=key(skey), UpdateExpression='SET rvn = :r',\n"
	"        ConditionExpression='attribute_exists(rvn) AND attribute_not_exists(dead)',\n"
	"        ExpressionAttributeValues={':r': {'S': uuid.uuid4().hex}})\n"
	"s = d.get_item(TableName=t, Key=key(skey), ConsistentRead=True)['Item']\n"
	"print('stopped', 'dead' in s, s['revSeq']['N'], flush=True)\n";

static FILE *start_holder(const char *table)
{
	char path[512], cmd[1024], line[64];
	snprintf(path, sizeof(path), "%s/it_swait_holder.py",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(holder_py, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %d %d %d %d", path, table, LOCKNAME, SLEASE,
		 BEAT_MS, BEATS, FENCE);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_string_equal(line, "ready\n");
	return p;
}

/* LOCK.STATE name says how its holder proves it alive (heartbeat), and
 * never confirmed-ms-ago: this replica does not hold it in session mode. */
static void expect_state_heartbeat(redisContext *c, const char *name, const char *heartbeat)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 12);
	assert_string_equal(r->element[10]->str, "heartbeat");
	assert_string_equal(r->element[11]->str, heartbeat);
	freeReplyObject(r);
}

/* leasegate.state(name) on the PostgreSQL port: heartbeat, and a NULL
 * confirmed_ms_ago, its last two columns. */
static void expect_pg_heartbeat(int port, const char *name, const char *heartbeat)
{
	char ci[160], sql[128];
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=locks connect_timeout=5",
		 port);
	PGconn *c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("cannot connect: %s", PQerrorMessage(c));
	snprintf(sql, sizeof(sql), "SELECT * FROM leasegate.state('%s')", name);
	PGresult *r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQresultErrorMessage(r));
	assert_int_equal(PQnfields(r), 7);
	assert_string_equal(PQfname(r, 5), "heartbeat");
	assert_string_equal(PQgetvalue(r, 0, 5), heartbeat);
	assert_string_equal(PQfname(r, 6), "confirmed_ms_ago");
	assert_true(PQgetisnull(r, 0, 6));
	PQclear(r);
	PQfinish(c);
}

static void test_waiter_takes_over_a_session_holder(void **state)
{
	struct gw g;
	assert_true(gw_have_moto());
	const char *table = gw_new_table();
	struct gw_port pp = gw_free_port_arg();
	gw_start(&g, table, "--holder-label", "waiter", "--pg-port", pp.arg, NULL);
	FILE *holder = start_holder(table);
	long long t0 = gw_now_ms();
	redisContext *c = gw_connect(&g), *o = gw_connect(&g);
	/* LOCK.STATE: the real lease, never the 10-year leaseMs */
	redisReply *r = gw_cmd(o, "LOCK.STATE %s", LOCKNAME);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	bool shown = false;
	for (size_t i = 0; i + 1 < r->elements; i += 2)
		if (strcmp(r->element[i]->str, "lease-ms") == 0) {
			assert_int_equal(r->element[i + 1]->integer, SLEASE);
			shown = true;
		}
	assert_true(shown);
	freeReplyObject(r);
	expect_state_heartbeat(o, LOCKNAME, "replica");
	expect_pg_heartbeat(pp.n, LOCKNAME, "replica");
	gw_expect_int(o, 1, "LOCK.ACQUIRE plain 5000"); /* held per lease, by the gateway */
	expect_state_heartbeat(o, "plain", "lease");
	expect_pg_heartbeat(pp.n, "plain", "lease");
	gw_expect_int(o, 1, "LOCK.RELEASE plain");
	/* LOCK.LIST TABLE: the same, and how its holder proves it alive */
	r = gw_cmd(o, "LOCK.LIST TABLE MATCH %s", LOCKNAME);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 2);
	assert_int_equal(r->element[1]->elements, 1);
	const redisReply *e = r->element[1]->element[0];
	int found = 0;
	for (size_t i = 0; i + 1 < e->elements; i += 2) {
		if (strcmp(e->element[i]->str, "lease-ms") == 0 &&
		    e->element[i + 1]->integer == SLEASE)
			found++;
		if (strcmp(e->element[i]->str, "heartbeat") == 0 &&
		    strcmp(e->element[i + 1]->str, "replica") == 0)
			found++;
	}
	assert_int_equal(found, 2);
	freeReplyObject(r);
	/* released from outside (by name and token): the holder learns of it
	 * by the revocation written with the release (revSeq below) */
	gw_expect_int(o, 1, "LOCK.RELEASE %s2 %d", LOCKNAME, FENCE);

	gw_send(c, "LOCK.ACQUIRE %s 5000 WAIT 0", LOCKNAME);
	/* the session beats for BEATS x BEAT_MS (8 s): no grant meanwhile */
	gw_expect_no_reply(c, BEATS * BEAT_MS - 1000, "while the holder's session beats");
	char line[64];
	assert_non_null(fgets(line, sizeof(line), holder));
	long long stopped = gw_now_ms();
	print_message("holder: %s", line);
	assert_int_equal(pclose(holder), 0);
	/* it beat to the end, and one revocation was written for it */
	assert_string_equal(line, "stopped False 1\n");
	long long token = gw_token_within(c, 15000, "the takeover");
	long long after = gw_now_ms() - stopped;
	print_message("granted %lld ms after the beats stopped (%lld ms after the start), "
		      "token %lld\n",
		      after, gw_now_ms() - t0, token);
	assert_true(token > FENCE);
	assert_true(after >= SLEASE - 300); /* a lease (the last beat may land late) */
	assert_true(after <= SLEASE + 6000);
	gw_expect_int(c, 1, "LOCK.RELEASE %s", LOCKNAME);
	redisFree(c);
	redisFree(o);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_waiter_takes_over_a_session_holder, gw_teardown),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("moto: a waiter on a session-mode lock", tests, NULL,
					   NULL) != 0;
}
