/*
 * it_store_dynamodb: the DynamoDB store against a real moto_server (started
 * by tests/run-integration.sh with signature checking on), with a real
 * libevent loop and the real clock.
 *
 *   - the store contract suite (tests/support/store_contract.c) and that of
 *     shared names (store_contract_shared.c) and session items
 *     (store_contract_session.c) and locks in session mode
 *     (store_contract_slock.c), on a table with a partition
 *     key only and on one with custom partition and sort key names learned
 *     with DescribeTable;
 *   - what only DynamoDB has: a missing table, a denied user, a wrong
 *     secret (FATAL, not retried: HTTP requests counted), an endpoint that
 *     does not answer (TRANSIENT after 3 attempts), keys that are not
 *     strings, and the items (a lock's, a session's) as boto3 reads them;
 *   - a fenced transaction under a reader's shared hold (store_tx.h with
 *     .shared), its client item read back with boto3, on both tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "lib/base/clock.h"
#include "core/store/dynamodb/store_dynamodb.h"
#include "core/store/store_revoke.h"
#include "core/store/store_session.h"
#include "core/store/store_shared.h"
#include "core/store/store_tx.h"
#include "tests/support/store_contract.h"

static struct event_base *base;
static struct clock *clk;
static struct event *tick;
static const char *endpoint;
static struct aws_credentials good, denied, wrong;

static const struct aws_credentials *creds_of(void *arg)
{
	return arg;
}

static void keys_from_env(struct aws_credentials *c, const char *ak, const char *sk)
{
	memset(c, 0, sizeof *c);
	snprintf(c->access_key_id, sizeof c->access_key_id, "%s", getenv(ak) ? getenv(ak) : "");
	snprintf(c->secret_access_key, sizeof c->secret_access_key, "%s",
		 getenv(sk) ? getenv(sk) : "");
}

/* Runs the loop until *done, at most 20 s. */
static void run_until(const bool *done)
{
	int64_t until = clock_now_ms(clk) + 20000;
	while (!*done && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {}

struct opened {
	bool done;
	struct store_result res;
};

static void on_open(void *arg, const struct store_result *res)
{
	struct opened *o = arg;
	o->done = true;
	o->res = *res;
}

/* A store on table, opened; the open's result in *res. NULL when the
 * store could not even be made. */
static struct store *open_store(struct store_dynamodb_config cfg, struct store_result *res)
{
	char err[STORE_DDB_ERR_MAX];
	cfg.region = "us-east-1";
	if (!cfg.endpoint)
		cfg.endpoint = endpoint;
	if (!cfg.credentials) {
		cfg.credentials = creds_of;
		cfg.credentials_arg = &good;
	}
	struct store *s = store_dynamodb_new(base, clk, &cfg, err);
	if (!s) {
		print_error("store_dynamodb_new: %s\n", err);
		return NULL;
	}
	struct opened o = {0};
	if (!store_dynamodb_open(s, on_open, &o)) {
		store_free(s);
		return NULL;
	}
	run_until(&o.done);
	if (!o.done) {
		store_free(s);
		return NULL;
	}
	*res = o.res;
	return s;
}

/* ---- the contract suite on two tables ---- */

struct variant {
	const char *table;
	const char *pk, *sk; /* keys given when the table is created */
	bool created;
};

static struct store *make(void *arg)
{
	struct variant *v = arg;
	struct store_dynamodb_config cfg = {.table = v->table, .ttl_attribute = "expiresAt"};
	if (!v->created) {
		cfg.create_table = true;
		cfg.partition_key = v->pk;
		cfg.sort_key = v->sk;
	}
	struct store_result res;
	struct store *s = open_store(cfg, &res);
	if (s && res.status != STORE_OK) {
		print_error("open %s: %s %s\n", v->table, store_status_name(res.status),
			    res.message);
		store_free(s);
		return NULL;
	}
	v->created = true;
	return s;
}

static void run(void *arg, const bool *done)
{
	run_until(done);
}

static void destroy(void *arg, struct store *s)
{
	store_free(s);
}

/* ---- DynamoDB only ---- */

static struct store_result do_req(struct store *s, struct store_req r)
{
	static const struct store_factory f = {"dynamodb", NULL, run, NULL, NULL, NULL, false};
	struct store_result res;
	store_contract_do(&f, s, &r, &res);
	return res;
}

static uint64_t http_total(struct store *s)
{
	struct store_dynamodb_stats st;
	store_dynamodb_stats(s, &st);
	uint64_t n = 0;
	for (int i = 0; i < DDB_OP_COUNT; i++)
		n += st.http[i];
	return n;
}

static void missing_table(void **state)
{
	struct store_result res;
	struct store *s =
		open_store((struct store_dynamodb_config){.table = "no_such_table"}, &res);
	assert_non_null(s);
	assert_int_equal(res.status, STORE_NO_TABLE);
	assert_non_null(strstr(res.message, "no_such_table"));
	store_free(s);
	/* keys given: the open sends nothing; the first request finds no table */
	s = open_store(
		(struct store_dynamodb_config){.table = "no_such_table", .partition_key = "pk"},
		&res);
	assert_int_equal(res.status, STORE_OK);
	assert_int_equal(http_total(s), 0);
	res = do_req(s, (struct store_req){.op = STORE_READ, .name = "x"});
	assert_int_equal(res.status, STORE_NO_TABLE);
	assert_int_equal(http_total(s), 1);
	store_free(s);
}

static void denied_user_is_fatal(void **state)
{
	struct store_result res;
	struct store_dynamodb_config cfg = {.table = "lg_contract_pk",
					    .partition_key = "pk",
					    .credentials = creds_of,
					    .credentials_arg = &denied};
	struct store *s = open_store(cfg, &res);
	assert_int_equal(res.status, STORE_OK);
	res = do_req(s, (struct store_req){.op = STORE_ACQUIRE,
					   .name = "denied",
					   .owner = "o",
					   .rvn = "r",
					   .lease_ms = 10000});
	print_message("denied: %s (%s)\n", res.message, res.error_type);
	assert_int_equal(res.status, STORE_FATAL);
	assert_non_null(strstr(res.message, "lg_contract_pk"));
	assert_non_null(strstr(res.message, "UpdateItem"));
	assert_non_null(res.error_type);
	assert_int_equal(http_total(s), 1); /* not retried */
	store_free(s);
	/* the open's DescribeTable is refused the same way */
	cfg.partition_key = NULL;
	s = open_store(cfg, &res);
	assert_int_equal(res.status, STORE_FATAL);
	assert_non_null(strstr(res.message, "DescribeTable"));
	store_free(s);
}

static void wrong_secret_is_fatal_once(void **state)
{
	struct store_result res;
	struct store_dynamodb_config cfg = {.table = "lg_contract_pk",
					    .partition_key = "pk",
					    .credentials = creds_of,
					    .credentials_arg = &wrong};
	struct store *s = open_store(cfg, &res);
	assert_int_equal(res.status, STORE_OK);
	res = do_req(s, (struct store_req){.op = STORE_READ, .name = "x"});
	print_message("wrong secret: %s (%s)\n", res.message, res.error_type);
	assert_int_equal(res.status, STORE_FATAL);
	assert_non_null(strstr(res.message, "lg_contract_pk"));
	assert_non_null(strstr(res.message, "GetItem"));
	assert_int_equal(http_total(s), 1);
	store_free(s);
}

static const struct aws_credentials *no_creds(void *arg)
{
	return NULL;
}

static void missing_credentials_transient(void **state)
{
	struct store_result res;
	struct store_dynamodb_config cfg = {
		.table = "lg_contract_pk", .partition_key = "pk", .credentials = no_creds};
	struct store *s = open_store(cfg, &res);
	res = do_req(s, (struct store_req){.op = STORE_READ, .name = "x"});
	assert_int_equal(res.status, STORE_TRANSIENT);
	assert_string_equal(res.error_type, "CredentialsNotAvailable");
	assert_int_equal(http_total(s), 0);
	store_free(s);
}

static void unreachable_endpoint_transient(void **state)
{
	struct store_result res;
	/* port 9 (discard) on loopback: connection refused at once */
	struct store_dynamodb_config cfg = {
		.table = "lg_contract_pk", .partition_key = "pk", .endpoint = "http://127.0.0.1:9"};
	struct store *s = open_store(cfg, &res);
	res = do_req(s, (struct store_req){.op = STORE_READ, .name = "x"});
	assert_int_equal(res.status, STORE_TRANSIENT);
	assert_string_equal(res.error_type, "ConnectionError");
	assert_int_equal(http_total(s), 3); /* the standard mode's 3 attempts */
	struct store_dynamodb_stats st;
	store_dynamodb_stats(s, &st);
	assert_int_equal(st.retries, 2);
	store_free(s);
}

static int sh(const char *cmd, char *out, size_t outsz)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	return pclose(p);
}

#define BOTO                                                                                       \
	"python3 -c 'import boto3,json,os,sys;"                                                    \
	"c=boto3.client(\"dynamodb\",endpoint_url=os.environ[\"LG_MOTO\"],"                        \
	"region_name=\"us-east-1\",aws_access_key_id=os.environ[\"LG_AK\"],"                       \
	"aws_secret_access_key=os.environ[\"LG_SK\"]);"

/* The contract's raw items (store_contract.h), written with boto3's
 * PutItem: no condition, any attribute a foreign writer may set. */
static bool put_raw(void *arg, struct store *s, const char *name, const struct lock_item *it)
{
	const struct ddb_keys *k = store_dynamodb_keys(s);
	char item[1024], cmd[2048], out[512];
	size_t n = 0;
	n += (size_t)snprintf(item + n, sizeof item - n, "{\"%s\":{\"S\":\"LOCK#%s\"}", k->pk,
			      name);
	if (k->sk)
		n += (size_t)snprintf(item + n, sizeof item - n, ",\"%s\":{\"S\":\"LOCK\"}", k->sk);
	if (it->type[0])
		n += (size_t)snprintf(item + n, sizeof item - n, ",\"_type\":{\"S\":\"%s\"}",
				      it->type);
	if (it->has_owner)
		n += (size_t)snprintf(item + n, sizeof item - n, ",\"owner\":{\"S\":\"%s\"}",
				      it->owner);
	if (it->has_rvn)
		n += (size_t)snprintf(item + n, sizeof item - n, ",\"rvn\":{\"S\":\"%s\"}",
				      it->rvn);
	if (it->has_lease)
		n += (size_t)snprintf(item + n, sizeof item - n, ",\"leaseMs\":{\"N\":\"%lld\"}",
				      (long long)it->lease_ms);
	if (it->has_fence && it->fence_bad)
		n += (size_t)snprintf(item + n, sizeof item - n,
				      ",\"fence\":{\"N\":\"18446744073709551621\"}");
	else if (it->has_fence)
		n += (size_t)snprintf(item + n, sizeof item - n, ",\"fence\":{\"N\":\"%lld\"}",
				      (long long)it->fence);
	snprintf(item + n, sizeof item - n, "}");
	snprintf(cmd, sizeof cmd,
		 BOTO
		 "c.put_item(TableName=sys.argv[1],Item=json.loads(sys.argv[2]))' %s '%s' 2>&1",
		 k->table, item);
	int rc = sh(cmd, out, sizeof out);
	if (rc != 0)
		print_error("put_item: %s\n", out);
	return rc == 0;
}

static void non_string_keys_refused(void **state)
{
	char out[512];
	int rc =
		sh(BOTO "c.create_table(TableName=\"lg_numeric\",BillingMode=\"PAY_PER_REQUEST\","
			"AttributeDefinitions=[{\"AttributeName\":\"id\",\"AttributeType\":\"N\"}],"
			"KeySchema=[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}])' 2>&1",
		   out, sizeof out);
	assert_int_equal(rc, 0);
	struct store_result res;
	struct store *s = open_store((struct store_dynamodb_config){.table = "lg_numeric"}, &res);
	assert_int_equal(res.status, STORE_FATAL);
	print_message("numeric key: %s\n", res.message);
	assert_non_null(strstr(res.message, "lg_numeric"));
	assert_non_null(strstr(res.message, "string"));
	/* the keys found, their types, and what a lock table needs */
	assert_non_null(strstr(res.message, "partition key id (number N), no sort key; a lock "
					    "table's keys must be strings (partition key "
					    "LOCK#<name>, sort key LOCK if any)"));
	store_free(s);
	/* configured names that are not the table's */
	s = open_store((struct store_dynamodb_config){.table = "lg_contract_pk",
						      .partition_key = "PK",
						      .create_table = true},
		       &res);
	assert_int_equal(res.status, STORE_FATAL);
	store_free(s);
}

static void item_as_boto3_reads_it(void **state)
{
	struct store_result res;
	struct store *s = open_store((struct store_dynamodb_config){.table = "lg_contract_sk",
								    .ttl_attribute = "expiresAt"},
				     &res);
	assert_int_equal(res.status, STORE_OK);
	res = do_req(s, (struct store_req){.op = STORE_ACQUIRE,
					   .name = "boto3",
					   .owner = "own-1",
					   .rvn = "rvn-1",
					   .holder = "pod-7",
					   .lease_ms = 15000,
					   .ttl = 1900000000});
	assert_int_equal(res.status, STORE_OK);
	char out[1024];
	int rc = sh(BOTO
		    "i=c.get_item(TableName=\"lg_contract_sk\",Key={\"Id\":{\"S\":\"LOCK#boto3\"},"
		    "\"Kind\":{\"S\":\"LOCK\"}},ConsistentRead=True)[\"Item\"];"
		    "print(json.dumps(i,sort_keys=True))'",
		    out, sizeof out);
	assert_int_equal(rc, 0);
	const char *want = "{\"Id\": {\"S\": \"LOCK#boto3\"}, \"Kind\": {\"S\": \"LOCK\"}, "
			   "\"_type\": {\"S\": \"LOCK\"}, \"arvn\": {\"S\": \"rvn-1\"}, "
			   "\"expiresAt\": {\"N\": \"1900000000\"}, "
			   "\"fence\": {\"N\": \"1\"}, \"holder\": {\"S\": \"pod-7\"}, "
			   "\"leaseMs\": {\"N\": \"15000\"}, \"owner\": {\"S\": \"own-1\"}, "
			   "\"rvn\": {\"S\": \"rvn-1\"}}\n";
	assert_string_equal(out, want);
	/* released: owner, leaseMs and holder are gone, the rest stays (arvn:
	 * no attempt of that acquire takes the lock again); radmit "-": no
	 * reader was waiting to be admitted (core/store/store_shared.h) */
	res = do_req(s, (struct store_req){.op = STORE_RELEASE,
					   .name = "boto3",
					   .owner = "own-1",
					   .ttl = 1900000001});
	assert_int_equal(res.status, STORE_OK);
	rc = sh(BOTO "i=c.get_item(TableName=\"lg_contract_sk\",Key={\"Id\":{\"S\":\"LOCK#boto3\"},"
		     "\"Kind\":{\"S\":\"LOCK\"}},ConsistentRead=True)[\"Item\"];"
		     "print(json.dumps(i,sort_keys=True))'",
		out, sizeof out);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "{\"Id\": {\"S\": \"LOCK#boto3\"}, \"Kind\": {\"S\": \"LOCK\"}, "
				 "\"_type\": {\"S\": \"LOCK\"}, \"arvn\": {\"S\": \"rvn-1\"}, "
				 "\"expiresAt\": {\"N\": \"1900000001\"}, "
				 "\"fence\": {\"N\": \"1\"}, \"radmit\": {\"S\": \"-\"}, "
				 "\"rvn\": {\"S\": \"rvn-1\"}}\n");
	/* TTL is on for a table the store created */
	rc = sh(BOTO "print(c.describe_time_to_live(TableName=\"lg_contract_sk\")"
		     "[\"TimeToLiveDescription\"])'",
		out, sizeof out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "expiresAt"));
	assert_non_null(strstr(out, "ENABLED"));
	store_free(s);
}

/* A session item (core/store/store_session.h) as boto3 reads it: its key
 * and sort key, the attribute names and types of the design
 * (docs/design/replica-heartbeat.md), dead once marked. */
struct sess_done {
	bool done;
	struct store_session_result res;
};

static void on_sess(void *arg, const struct store_session_result *r)
{
	struct sess_done *d = arg;
	d->done = true;
	d->res = *r;
}

static enum store_status sess_do(struct store *s, struct store_session_req r)
{
	struct sess_done d = {0};
	assert_non_null(store_session_submit(s, &r, on_sess, &d));
	run_until(&d.done);
	assert_true(d.done);
	return d.res.status;
}

static void session_as_boto3_reads_it(void **state)
{
	struct store_result res;
	struct store *s = open_store((struct store_dynamodb_config){.table = "lg_contract_sk",
								    .ttl_attribute = "expiresAt"},
				     &res);
	assert_int_equal(res.status, STORE_OK);
	char inc[33], cmd[1024], out[1024], want[1024];
	store_new_id(inc);
	struct store_session_req r = {.op = STORE_SESSION_CREATE,
				      .replica = "rep-1",
				      .incarnation = inc,
				      .rvn = "rvn-1",
				      .max_lease_ms = 15000,
				      .holder = "pod-7",
				      .addr = "10.1.2.3:6379",
				      .ttl = 1900000000};
	assert_int_equal(sess_do(s, r), STORE_OK);
	r = (struct store_session_req){.op = STORE_SESSION_KILL,
				       .replica = "rep-1",
				       .incarnation = inc,
				       .seen_rvn = "rvn-1",
				       .by = "waiter-9"};
	assert_int_equal(sess_do(s, r), STORE_OK);
	snprintf(cmd, sizeof(cmd),
		 BOTO "i=c.get_item(TableName=\"lg_contract_sk\",Key={\"Id\":{\"S\":\"SESSION#rep-"
		      "1#%s\"},"
		      "\"Kind\":{\"S\":\"LOCK\"}},ConsistentRead=True)[\"Item\"];"
		      "print(json.dumps(i,sort_keys=True))'",
		 inc);
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	snprintf(want, sizeof(want),
		 "{\"Id\": {\"S\": \"SESSION#rep-1#%s\"}, \"Kind\": {\"S\": \"LOCK\"}, "
		 "\"_type\": {\"S\": \"SESSION\"}, \"addr\": {\"S\": \"10.1.2.3:6379\"}, "
		 "\"beatSeq\": {\"N\": \"0\"}, "
		 "\"dead\": {\"S\": \"waiter-9\"}, \"expiresAt\": {\"N\": \"1900000000\"}, "
		 "\"holder\": {\"S\": \"pod-7\"}, \"maxLeaseMs\": {\"N\": \"15000\"}, "
		 "\"revSeq\": {\"N\": \"0\"}, \"rvn\": {\"S\": \"rvn-1\"}}\n",
		 inc);
	assert_string_equal(out, want);
	store_free(s);
}

/* A lock held in session mode (store.h ACQUIRE's .session) as boto3 reads
 * it: session (S) names its session, sleaseMs (N) the real lease, leaseMs
 * (N) the 10 years no reference client counts to, and no TTL attribute
 * though the table has one and the request gave one. */
static void session_lock_as_boto3_reads_it(void **state)
{
	struct store_result res;
	struct store *s = open_store((struct store_dynamodb_config){.table = "lg_contract_sk",
								    .ttl_attribute = "expiresAt"},
				     &res);
	assert_int_equal(res.status, STORE_OK);
	char id[33], name[64], key[STORE_SESSION_KEY_MAX + 1], cmd[1024], out[1024], want[1024];
	store_new_id(id);
	snprintf(name, sizeof(name), "slock-%.8s", id);
	snprintf(key, sizeof(key), "SESSION#rep-1#%s", id);
	res = do_req(s, (struct store_req){.op = STORE_ACQUIRE,
					   .name = name,
					   .owner = "own-1",
					   .rvn = "rvn-1",
					   .holder = "pod-7",
					   .lease_ms = 15000,
					   .ttl = 1900000000,
					   .session = key});
	assert_int_equal(res.status, STORE_OK);
	snprintf(cmd, sizeof(cmd),
		 BOTO "i=c.get_item(TableName=\"lg_contract_sk\",Key={\"Id\":{\"S\":\"LOCK#%s\"},"
		      "\"Kind\":{\"S\":\"LOCK\"}},ConsistentRead=True)[\"Item\"];"
		      "print(json.dumps(i,sort_keys=True))'",
		 name);
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	snprintf(want, sizeof(want),
		 "{\"Id\": {\"S\": \"LOCK#%s\"}, \"Kind\": {\"S\": \"LOCK\"}, "
		 "\"_type\": {\"S\": \"LOCK\"}, \"arvn\": {\"S\": \"rvn-1\"}, "
		 "\"fence\": {\"N\": \"1\"}, \"holder\": {\"S\": \"pod-7\"}, "
		 "\"leaseMs\": {\"N\": \"315360000000\"}, \"owner\": {\"S\": \"own-1\"}, "
		 "\"rvn\": {\"S\": \"rvn-1\"}, \"session\": {\"S\": \"%s\"}, "
		 "\"sleaseMs\": {\"N\": \"15000\"}}\n",
		 name, key);
	assert_string_equal(out, want);
	store_free(s);
}

/* Revocations (core/store/store_revoke.h) as boto3 reads them, after two
 * endings (a forced release, an adopt) for one session: with a sort key,
 * one item per entry (REVOKE#<session> / <fence, 19 digits>#<SHA-256 of
 * the name>, _type REVOKE, name, fence, the TTL); with a partition key
 * only, one item REVOKE#<session> holding the string set revs of
 * "<entry key>#<name>"; the session's revSeq 2 either way. The TTL is
 * STORE_SESSION_TTL_DAYS days and a day from now. */
static void revocations_as_boto3_reads_them(const char *table, const char *pk, const char *sk)
{
	struct store_result res;
	struct store *s = open_store(
		(struct store_dynamodb_config){.table = table, .ttl_attribute = "expiresAt"}, &res);
	assert_int_equal(res.status, STORE_OK);
	char inc[33], id[33], name[64], skey[STORE_SESSION_KEY_MAX + 1];
	char k1[STORE_REVOKE_KEY_LEN + 1], k2[STORE_REVOKE_KEY_LEN + 1];
	store_new_id(inc);
	store_new_id(id);
	snprintf(name, sizeof name, "rev-%.8s", id);
	struct store_session_req cr = {.op = STORE_SESSION_CREATE,
				       .replica = "rep-2",
				       .incarnation = inc,
				       .rvn = "rvn-1",
				       .max_lease_ms = 15000};
	assert_int_equal(sess_do(s, cr), STORE_OK);
	store_session_key(&cr, skey);
	const char *hash = "1111111111111111111111111111111111111111111111111111111111111111";
	assert_int_equal(do_req(s, (struct store_req){.op = STORE_ACQUIRE,
						      .name = name,
						      .owner = "own-1",
						      .rvn = "rvn-1",
						      .lease_ms = 15000})
				 .status,
			 STORE_OK);
	res = do_req(s, (struct store_req){.op = STORE_RELEASE,
					   .name = name,
					   .owner = "own-1",
					   .token = 1,
					   .forced = true,
					   .revoke_session = skey});
	assert_int_equal(res.status, STORE_OK);
	assert_int_equal(do_req(s, (struct store_req){.op = STORE_ACQUIRE,
						      .name = name,
						      .owner = "own-2",
						      .rvn = "rvn-2",
						      .lease_ms = 15000,
						      .secret_hash = hash})
				 .status,
			 STORE_OK);
	assert_int_equal(
		do_req(s, (struct store_req){.op = STORE_ORPHAN, .name = name, .owner = "own-2"})
			.status,
		STORE_OK);
	res = do_req(s, (struct store_req){.op = STORE_ADOPT,
					   .name = name,
					   .owner = "own-3",
					   .rvn = "rvn-3",
					   .prev_owner = "own-2",
					   .prev_secret_hash = hash,
					   .secret_hash = hash,
					   .lease_ms = 15000,
					   .token = 2,
					   .revoke_session = skey});
	assert_int_equal(res.status, STORE_OK);
	store_revoke_key(name, 1, k1);
	store_revoke_key(name, 2, k2);
	char cmd[2048], out[4096], want[2048];
	/* the TTL as "ok" when within a minute of now's */
	long long ttl = (long long)store_revoke_ttl(clock_wall_ms(clk));
	if (sk != NULL) {
		snprintf(cmd, sizeof cmd,
			 BOTO "r=c.query(TableName=\"%s\",KeyConditionExpression=\"#p = :p\","
			      "ExpressionAttributeNames={\"#p\":\"%s\"},ExpressionAttributeValues="
			      "{\":p\":{\"S\":\"REVOKE#%s\"}},ConsistentRead=True)[\"Items\"];"
			      "[i.update(expiresAt={\"N\":\"ok\" if "
			      "abs(int(i[\"expiresAt\"][\"N\"])-%lld)"
			      "<60 else i[\"expiresAt\"][\"N\"]}) for i in r];"
			      "print(json.dumps(r,sort_keys=True))'",
			 table, pk, skey, ttl);
		/* pk ("Id") sorts before sk ("Kind") */
		snprintf(want, sizeof want,
			 "[{\"%s\": {\"S\": \"REVOKE#%s\"}, \"%s\": {\"S\": \"%s\"}, "
			 "\"_type\": {\"S\": \"REVOKE\"}, \"expiresAt\": {\"N\": \"ok\"}, "
			 "\"fence\": {\"N\": \"1\"}, \"name\": {\"S\": \"%s\"}}, "
			 "{\"%s\": {\"S\": \"REVOKE#%s\"}, \"%s\": {\"S\": \"%s\"}, "
			 "\"_type\": {\"S\": \"REVOKE\"}, \"expiresAt\": {\"N\": \"ok\"}, "
			 "\"fence\": {\"N\": \"2\"}, \"name\": {\"S\": \"%s\"}}]\n",
			 pk, skey, sk, k1, name, pk, skey, sk, k2, name);
	} else {
		snprintf(cmd, sizeof cmd,
			 BOTO "i=c.get_item(TableName=\"%s\",Key={\"%s\":{\"S\":\"REVOKE#%s\"}},"
			      "ConsistentRead=True)[\"Item\"];i[\"revs\"][\"SS\"].sort();"
			      "t=i[\"expiresAt\"][\"N\"];i[\"expiresAt\"][\"N\"]=\"ok\" if "
			      "abs(int(t)-%lld)<60 else t;"
			      "print(json.dumps(i,sort_keys=True))'",
			 table, pk, skey, ttl);
		snprintf(want, sizeof want,
			 "{\"_type\": {\"S\": \"REVOKE\"}, \"expiresAt\": {\"N\": \"ok\"}, "
			 "\"%s\": {\"S\": \"REVOKE#%s\"}, \"revs\": {\"SS\": "
			 "[\"%s#%s\", \"%s#%s\"]}}\n",
			 pk, skey, k1, name, k2, name);
	}
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	assert_string_equal(out, want);
	snprintf(cmd, sizeof cmd,
		 BOTO "i=c.get_item(TableName=\"%s\",Key={\"%s\":{\"S\":\"%s\"}%s%s%s},"
		      "ConsistentRead=True)[\"Item\"];print(json.dumps(i[\"revSeq\"]))'",
		 table, pk, skey, sk != NULL ? ",\"" : "", sk != NULL ? sk : "",
		 sk != NULL ? "\":{\"S\":\"LOCK\"}" : "");
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	assert_string_equal(out, "{\"N\": \"2\"}\n");
	store_free(s);
}

static void revocations_as_boto3_reads_them_pk(void **state)
{
	revocations_as_boto3_reads_them("lg_contract_pk", "pk", NULL);
}

static void revocations_as_boto3_reads_them_sk(void **state)
{
	revocations_as_boto3_reads_them("lg_contract_sk", "Id", "Kind");
}

/* A release from outside the holding replica, as boto3 reads the item:
 * freed (a number) and freedBy; an acquire leaves them. */
static void freed_as_boto3_reads_it(void **state)
{
	struct store_result res;
	struct store *s =
		open_store((struct store_dynamodb_config){.table = "lg_contract_pk"}, &res);
	assert_int_equal(res.status, STORE_OK);
	char name[64], id[33], cmd[1024], out[1024];
	store_new_id(id);
	snprintf(name, sizeof name, "freed-%.8s", id);
	struct store_req acq = {.op = STORE_ACQUIRE,
				.name = name,
				.owner = "own-1",
				.rvn = "rvn-1",
				.lease_ms = 15000};
	assert_int_equal(do_req(s, acq).status, STORE_OK);
	res = do_req(s, (struct store_req){.op = STORE_RELEASE,
					   .name = name,
					   .owner = "own-1",
					   .token = 1,
					   .forced = true});
	assert_int_equal(res.status, STORE_OK);
	assert_int_equal(res.item.freed, 1);
	assert_true(res.item.freed_forced);
	acq.owner = "own-2";
	acq.rvn = "rvn-2"; /* another acquire: rvn-1's is refused by its arvn */
	assert_int_equal(do_req(s, acq).status, STORE_OK);
	snprintf(cmd, sizeof cmd,
		 BOTO "i=c.get_item(TableName=\"lg_contract_pk\",Key={\"pk\":{\"S\":\"LOCK#%s\"}},"
		      "ConsistentRead=True)[\"Item\"];"
		      "print(json.dumps([i[\"freed\"],i[\"freedBy\"],i[\"owner\"]]))'",
		 name);
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	assert_string_equal(out, "[{\"N\": \"1\"}, {\"S\": \"force\"}, {\"S\": \"own-2\"}]\n");
	/* by token, from the second holder's fence */
	res = do_req(s, (struct store_req){
				.op = STORE_RELEASE, .name = name, .owner = "own-2", .token = 2});
	assert_int_equal(res.status, STORE_OK);
	snprintf(cmd, sizeof cmd,
		 BOTO "i=c.get_item(TableName=\"lg_contract_pk\",Key={\"pk\":{\"S\":\"LOCK#%s\"}},"
		      "ConsistentRead=True)[\"Item\"];"
		      "print(json.dumps([i[\"freed\"],i[\"freedBy\"],\"owner\" in i]))'",
		 name);
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	assert_string_equal(out, "[{\"N\": \"2\"}, {\"S\": \"token\"}, false]\n");
	store_free(s);
}

/* ---- fenced transactions under a shared hold ---- */

struct sh_box {
	bool done;
	enum store_status status;
};

static void sh_done(void *arg, const struct store_sh_result *r)
{
	struct sh_box *b = arg;
	b->done = true;
	b->status = r->status;
}

/* A GRANT of slot 0 of name to owner (rvn "<owner>-r"), a takeover of
 * seen_rvn when set; must be OK. */
static void grant0(struct store *s, const char *name, const char *owner, bool first,
		   const char *seen_rvn, int64_t seen_fence, int64_t seen_slot_fence)
{
	char rvn[64];
	snprintf(rvn, sizeof rvn, "%s-r", owner);
	struct store_sh_req r = {.op = STORE_SH_GRANT,
				 .name = name,
				 .mode = STORE_SH_SHARED,
				 .cap = 4,
				 .owner = owner,
				 .rvn = rvn,
				 .seen_rvn = seen_rvn,
				 .first = first,
				 .seen_fence = seen_fence,
				 .seen_slot_fence = seen_slot_fence,
				 .lease_ms = 30000};
	struct sh_box b = {0};
	assert_non_null(store_sh_submit(s, &r, sh_done, &b));
	run_until(&b.done);
	assert_true(b.done);
	assert_int_equal(b.status, STORE_OK);
}

struct tx_box {
	bool done;
	struct store_tx_result res;
	char reasons[512];
};

static void tx_done(void *arg, const struct store_tx_result *r)
{
	struct tx_box *b = arg;
	b->done = true;
	b->res = *r;
	snprintf(b->reasons, sizeof b->reasons, "%s", r->reasons != NULL ? r->reasons : "");
	b->res.reasons = NULL;
}

/* The key of the client's item id of lock name on the lock table (no
 * lock's: DATA#...), as DynamoDB JSON. */
static void data_key(struct store *s, const char *name, const char *id, char *out, size_t cap)
{
	const struct ddb_keys *k = store_dynamodb_keys(s);
	int n = snprintf(out, cap, "{\"%s\":{\"S\":\"DATA#%s-%s\"}", k->pk, name, id);
	if (k->sk != NULL)
		n += snprintf(out + n, cap - (size_t)n, ",\"%s\":{\"S\":\"DATA\"}", k->sk);
	snprintf(out + n, cap - (size_t)n, "}");
}

/* A fenced transaction of reader owner (slot 0, token) putting the item
 * id (cond: its ConditionExpression, or NULL), run to its answer. */
static struct tx_box *put_under_reader(struct store *s, const char *name, const char *owner,
				       int64_t token, const char *id, const char *cond)
{
	static struct tx_box b;
	char key[256], items[1024];
	data_key(s, name, id, key, sizeof key);
	snprintf(items, sizeof items, "[{\"Put\":{\"TableName\":\"%s\",\"Item\":%s%s%s%s}}]",
		 store_dynamodb_keys(s)->table, key, cond ? ",\"ConditionExpression\":\"" : "",
		 cond ? cond : "", cond ? "\"" : "");
	struct store_tx_req req = {.name = name,
				   .owner = owner,
				   .token = token,
				   .shared = true,
				   .mode = STORE_SH_SHARED,
				   .slot = 0,
				   .items = items,
				   .items_len = strlen(items)};
	memset(&b, 0, sizeof b);
	assert_non_null(store_transact(s, &req, tx_done, &b));
	run_until(&b.done);
	assert_true(b.done);
	return &b;
}

/* Whether the client's item id of lock name is there (boto3). */
static bool data_written(struct store *s, const char *name, const char *id)
{
	char key[256], cmd[1024], out[256];
	data_key(s, name, id, key, sizeof key);
	snprintf(cmd, sizeof cmd,
		 BOTO "print(\"Item\" in c.get_item(TableName=sys.argv[1],"
		      "Key=json.loads(sys.argv[2]),ConsistentRead=True))' %s '%s'",
		 store_dynamodb_keys(s)->table, key);
	assert_int_equal(sh(cmd, out, sizeof out), 0);
	return strcmp(out, "True\n") == 0;
}

/* A reader writes while it holds its slot in its phase; the client's own
 * condition failing is its item 1; after its slot was taken over, after
 * its release, and while an exclusive owner is on the header, the lock
 * check refuses (index 0, which check, the item) and nothing is written. */
static void fenced_write_under_a_reader(const char *table)
{
	struct store_result res;
	struct store *s = open_store((struct store_dynamodb_config){.table = table}, &res);
	assert_int_equal(res.status, STORE_OK);
	char name[64], id[33];
	store_new_id(id);
	snprintf(name, sizeof name, "shtx-%.8s", id);
	grant0(s, name, "r1", true, NULL, 0, 0); /* group token 1 */
	struct tx_box *b = put_under_reader(s, name, "r1", 1, "a", NULL);
	assert_int_equal(b->res.status, STORE_OK);
	assert_true(data_written(s, name, "a"));
	char cond[96];
	snprintf(cond, sizeof cond, "attribute_not_exists(%s)", store_dynamodb_keys(s)->pk);
	b = put_under_reader(s, name, "r1", 1, "a", cond); /* the client's condition fails */
	assert_int_equal(b->res.status, STORE_REFUSED);
	assert_int_equal(b->res.index, 1);
	assert_non_null(strstr(b->reasons, "ConditionalCheckFailed"));
	b = put_under_reader(s, name, "r1", 2, "b", NULL);
	assert_int_equal(b->res.status, STORE_REFUSED); /* another phase's token */
	assert_int_equal(b->res.index, 0);
	assert_int_equal(b->res.check, 0);
	assert_false(data_written(s, name, "b"));

	grant0(s, name, "r2", false, "r1-r", 1, 1); /* r1's slot taken over */
	b = put_under_reader(s, name, "r1", 1, "c", NULL);
	assert_int_equal(b->res.status, STORE_REFUSED);
	assert_int_equal(b->res.index, 0);
	assert_int_equal(b->res.check, 1);
	assert_string_equal(b->res.item.owner, "r2");
	assert_string_equal(b->reasons, "[{\"Code\":\"None\"}]"); /* the client's alone */
	assert_false(data_written(s, name, "c"));
	assert_int_equal(put_under_reader(s, name, "r2", 1, "d", NULL)->res.status, STORE_OK);

	struct store_sh_req rel = {
		.op = STORE_SH_RELEASE, .name = name, .cap = 4, .slot = 0, .owner = "r2"};
	struct sh_box sb = {0};
	assert_non_null(store_sh_submit(s, &rel, sh_done, &sb));
	run_until(&sb.done);
	assert_int_equal(sb.status, STORE_OK);
	b = put_under_reader(s, name, "r2", 1, "e", NULL);
	assert_int_equal(b->res.status, STORE_REFUSED);
	assert_int_equal(b->res.check, 1);
	assert_false(b->res.item.has_owner);
	assert_false(data_written(s, name, "e"));

	grant0(s, name, "r3", true, NULL, 1, 2); /* a new phase: token 2 */
	assert_int_equal(put_under_reader(s, name, "r3", 2, "f", NULL)->res.status, STORE_OK);
	struct lock_item x = {.has_owner = true,
			      .has_rvn = true,
			      .has_lease = true,
			      .has_fence = true,
			      .fence = 2,
			      .lease_ms = 30000};
	snprintf(x.type, sizeof x.type, "LOCK");
	snprintf(x.owner, sizeof x.owner, "x");
	snprintf(x.rvn, sizeof x.rvn, "x-r");
	assert_true(put_raw(NULL, s, name, &x)); /* an exclusive owner, by hand */
	b = put_under_reader(s, name, "r3", 2, "g", NULL);
	assert_int_equal(b->res.status, STORE_REFUSED);
	assert_int_equal(b->res.index, 0);
	assert_int_equal(b->res.check, 0);
	assert_string_equal(b->res.item.owner, "x");
	assert_false(data_written(s, name, "g"));
	store_free(s);
}

static void fenced_write_under_a_reader_pk(void **state)
{
	fenced_write_under_a_reader("lg_contract_pk");
}

static void fenced_write_under_a_reader_sk(void **state)
{
	fenced_write_under_a_reader("lg_contract_sk");
}

struct scan_wait {
	bool done;
};

static void scanned(void *arg)
{
	((struct scan_wait *)arg)->done = true;
}

/* Locks written by the store beside another application's items written
 * by boto3 (other partition keys, a key that only looks like a lock's,
 * and, with a sort key, other items of a lock's partition): pages of 3
 * give every lock once and nothing else, including after pages that end
 * on another item's key (the "~" cursor). */
static void scan_over_other_items(const char *table, const char *pk, const char *sk)
{
	struct store_result res;
	struct store_dynamodb_config cfg = {
		.table = table, .partition_key = pk, .sort_key = sk, .create_table = true};
	struct store *s = open_store(cfg, &res);
	assert_non_null(s);
	assert_int_equal(res.status, STORE_OK);
	enum { LOCKS = 12 }; /* and range(12) below */
	char name[32], cmd[2048], out[512];
	for (int i = 0; i < LOCKS; i++) {
		snprintf(name, sizeof name, "s-%02d", i);
		struct store_req a = {.op = STORE_ACQUIRE,
				      .name = name,
				      .owner = "o",
				      .rvn = "r",
				      .holder = "pod",
				      .lease_ms = 30000};
		assert_int_equal(do_req(s, a).status, STORE_OK);
		if (i % 4 == 0) {
			struct store_req r = {.op = STORE_RELEASE,
					      .name = name,
					      .owner = "o",
					      .token = 1,
					      .forced = true};
			assert_int_equal(do_req(s, r).status, STORE_OK);
		}
	}
	snprintf(cmd, sizeof cmd,
		 BOTO
		 "t,pk,sk=sys.argv[1],sys.argv[2],sys.argv[3];"
		 "k=lambda p,s2:dict([(pk,{\"S\":p})]+([(sk,{\"S\":s2})] if sk!=\"-\" else []));"
		 "[c.put_item(TableName=t,Item=dict(k(\"ORDER#%%d\"%%i,\"X\"),owner={\"N\":\"1\"}))"
		 " for i in range(15)];"
		 "c.put_item(TableName=t,Item=k(\"LOCKS#x\",\"LOCK\"));"
		 "[c.put_item(TableName=t,Item=dict(k(\"LOCK#s-%%02d\"%%i,\"META\"),owner={\"N\":"
		 "\"2\"}))"
		 " for i in range(12) if sk!=\"-\"]' %s %s %s 2>&1",
		 table, pk, sk ? sk : "-");
	int rc = sh(cmd, out, sizeof out);
	if (rc != 0)
		fail_msg("boto3: %s", out);

	struct store_scan_result *page = calloc(1, sizeof *page);
	assert_non_null(page);
	page->entries = calloc(3, sizeof *page->entries);
	assert_non_null(page->entries);
	int seen[LOCKS] = {0};
	unsigned pages = 0, other_cursors = 0;
	char cursor[STORE_CURSOR_MAX + 1] = "";
	do {
		struct scan_wait w = {0};
		assert_non_null(store_scan(s, cursor, 3, page, scanned, &w));
		run_until(&w.done);
		assert_true(w.done);
		if (page->status != STORE_OK)
			fail_msg("scan: %s %s", store_status_name(page->status), page->message);
		assert_true(page->count <= 3);
		for (unsigned i = 0; i < page->count; i++) {
			int k;
			const struct store_scan_entry *e = &page->entries[i];
			if (sscanf(e->name, "s-%d", &k) != 1 || k < 0 || k >= LOCKS)
				fail_msg("scan gave %s", e->name);
			seen[k]++;
			assert_string_equal(e->item.owner, k % 4 ? "o" : "");
			assert_string_equal(e->item.holder, k % 4 ? "pod" : "");
			assert_int_equal(e->item.fence, 1);
			assert_int_equal(e->item.freed, k % 4 ? 0 : 1);
			assert_int_equal(e->item.freed_forced, k % 4 == 0);
		}
		other_cursors += page->cursor[0] == '~';
		strcpy(cursor, page->cursor);
		assert_true(++pages < 100);
	} while (cursor[0] != '\0');
	for (int i = 0; i < LOCKS; i++)
		if (seen[i] != 1)
			fail_msg("%s: s-%02d seen %d times", table, i, seen[i]);
	print_message("%s: %u pages, %u ended on another item\n", table, pages, other_cursors);
	assert_true(other_cursors > 0);
	assert_int_equal(s->requests[STORE_SCAN], pages);
	struct store_dynamodb_stats st;
	store_dynamodb_stats(s, &st);
	assert_int_equal(st.http[DDB_SCAN], pages);
	free(page->entries);
	free(page);
	store_free(s);
}

static void scan_pages_partition_key(void **state)
{
	scan_over_other_items("lg_scan_pk", "pk", NULL);
}

static void scan_pages_sort_key(void **state)
{
	scan_over_other_items("lg_scan_sk", "Id", "Kind");
}

int main(void)
{
	endpoint = getenv("LG_MOTO");
	if (!endpoint || !getenv("LG_AK")) {
		fprintf(stderr,
			"LG_MOTO and LG_AK are not set: run through tests/run-integration.sh\n");
		return 1;
	}
	keys_from_env(&good, "LG_AK", "LG_SK");
	keys_from_env(&denied, "LG_DENIED_AK", "LG_DENIED_SK");
	keys_from_env(&wrong, "LG_AK", "LG_DENIED_SK");
	base = event_base_new();
	clk = base ? clock_real_new(base) : NULL;
	tick = clk ? event_new(base, -1, EV_PERSIST, on_tick, NULL) : NULL;
	if (!tick)
		return 1;
	struct timeval tv = {0, 50000};
	event_add(tick, &tv);

	struct variant pk_only = {"lg_contract_pk", NULL, NULL, false};
	struct variant custom = {"lg_contract_sk", "Id", "Kind", false};
	const struct store_factory f1 = {
		"dynamodb, partition key only", make, run, destroy, &pk_only, put_raw, false};
	const struct store_factory f2 = {"dynamodb, custom partition and sort keys",
					 make,
					 run,
					 destroy,
					 &custom,
					 put_raw,
					 true};
	int failed = store_contract_run(&f1);
	failed += store_contract_run(&f2);
	failed += store_contract_shared_run(&f1);
	failed += store_contract_shared_run(&f2);
	failed += store_contract_session_run(&f1);
	failed += store_contract_session_run(&f2);
	failed += store_contract_slock_run(&f1);
	failed += store_contract_slock_run(&f2);
	failed += store_contract_revoke_run(&f1);
	failed += store_contract_revoke_run(&f2);
	failed += store_contract_batch_run(&f1);
	failed += store_contract_batch_run(&f2);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_table),
		cmocka_unit_test(denied_user_is_fatal),
		cmocka_unit_test(wrong_secret_is_fatal_once),
		cmocka_unit_test(missing_credentials_transient),
		cmocka_unit_test(unreachable_endpoint_transient),
		cmocka_unit_test(non_string_keys_refused),
		cmocka_unit_test(item_as_boto3_reads_it),
		cmocka_unit_test(freed_as_boto3_reads_it),
		cmocka_unit_test(session_as_boto3_reads_it),
		cmocka_unit_test(session_lock_as_boto3_reads_it),
		cmocka_unit_test(revocations_as_boto3_reads_them_pk),
		cmocka_unit_test(revocations_as_boto3_reads_them_sk),
		cmocka_unit_test(scan_pages_partition_key),
		cmocka_unit_test(scan_pages_sort_key),
		cmocka_unit_test(fenced_write_under_a_reader_pk),
		cmocka_unit_test(fenced_write_under_a_reader_sk),
	};
	failed += cmocka_run_group_tests_name("dynamodb only", tests, NULL, NULL);
	event_free(tick);
	clock_free(clk);
	event_base_free(base);
	return failed;
}
