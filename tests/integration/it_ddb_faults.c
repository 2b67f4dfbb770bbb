/*
 * it_ddb_faults: the DynamoDB store against answers a real emulator will
 * not give on demand (tests/support/fake_ddb.c, on this loop): 500s and
 * throttling retried within the standard mode's 3 attempts, the retry
 * quota, a wrong CRC32, a skewed clock corrected from Date, a server that
 * never answers (the deadline of the lease), malformed answers, expired
 * tokens, the request headers, cancel and free with requests in flight;
 * a scan's retries, its answer past HTTP_BODY_MAX, a cancel in flight;
 * a session READ's UnprocessedKeys asked again, then given up, and a
 * READ cancelled in its second round; the answers of a session-mode
 * takeover's transaction; an ending with its revocation retried on a
 * TransactionConflict with its token, FATAL for a part cancelled otherwise
 * than by its condition, its read-back cancelled in flight.
 * Real loop and clock; no sleeps: the loop waits on sockets and timers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/base/clock.h"
#include "lib/http/http.h"
#include "core/store/dynamodb/store_dynamodb.h"
#include "core/store/store_batch.h"
#include "core/store/store_session.h"
#include "core/store/store_shared.h"
#include "core/trace.h"
#include "tests/support/fake_ddb.h"
#include "tests/support/ddb_keys.h"
#include "tests/support/store_contract.h"

static struct event_base *base;
static struct clock *clk;
static struct event *tick;
static int expired_calls;

static void on_expired(void *arg)
{
	expired_calls++;
}

static void run_until(const bool *done)
{
	int64_t until = clock_now_ms(clk) + 20000;
	while (!*done && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
}

static void run(void *arg, const bool *done)
{
	run_until(done);
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {}

struct env {
	struct fake_ddb *fake;
	char url[64];
	struct store *s;
};

static struct store *make_store(const char *url, const struct ddb_retry_policy *policy)
{
	struct store_dynamodb_config cfg = ddb_test_config(url);
	cfg.ttl_attribute = "expiresAt";
	cfg.credentials_expired = on_expired;
	cfg.retry = policy;
	char err[STORE_DDB_ERR_MAX];
	struct store *s = store_dynamodb_new(base, clk, &cfg, err);
	assert_non_null(s);
	return s;
}

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

static void open_ok(struct store *s)
{
	struct opened o = {0};
	assert_true(store_dynamodb_open(s, on_open, &o));
	run_until(&o.done);
	assert_true(o.done);
	assert_int_equal(o.res.status, STORE_OK);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	e->fake = fake_ddb_new(base, e->url, sizeof e->url);
	if (!e->fake)
		return -1;
	e->s = make_store(e->url, NULL);
	open_ok(e->s);
	expired_calls = 0;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	store_free(e->s);
	fake_ddb_free(e->fake);
	free(e);
	return 0;
}

static const struct store_factory runner = {"fake", NULL, run, NULL, NULL, NULL, false};

static struct store_result do_req(struct store *s, struct store_req r)
{
	struct store_result res;
	if (!r.name)
		r.name = "a";
	store_contract_do(&runner, s, &r, &res);
	return res;
}

struct box {
	bool *done;
	struct store_result *res;
};

static void on_box(void *arg, const struct store_result *res)
{
	struct box *b = arg;
	*b->done = true;
	*b->res = *res;
}

static const struct store_req acquire_req = {
	.op = STORE_ACQUIRE, .name = "a", .owner = "o1", .rvn = "r1", .lease_ms = 30000};

#define ITEM                                                                                       \
	"{\"Attributes\":{\"pk\":{\"S\":\"LOCK#a\"},\"owner\":{\"S\":\"o1\"},\"rvn\":{\"S\":"      \
	"\"r1\"},"                                                                                 \
	"\"fence\":{\"N\":\"1\"},\"leaseMs\":{\"N\":\"30000\"},\"_type\":{\"S\":\"LOCK\"}}}"
#define THROTTLED                                                                                  \
	"{\"__type\":\"com.amazonaws.dynamodb.v20120810#ThrottlingException\","                    \
	"\"message\":\"Rate of requests exceeds the allowed throughput.\"}"

static struct store_dynamodb_stats stats(struct store *s)
{
	struct store_dynamodb_stats st;
	store_dynamodb_stats(s, &st);
	return st;
}

/* Answered attempts of op with class cls; checks the buckets add up. */
static uint64_t answered(struct store *s, enum ddb_op op, enum ddb_class cls)
{
	struct store_dynamodb_stats st = stats(s);
	const struct ddb_latency *l = &st.latency[op][cls];
	uint64_t n = 0;
	for (int i = 0; i < DDB_LATENCY_BUCKETS; i++)
		n += l->bucket[i];
	assert_int_equal(n, l->count);
	return l->count;
}

static void headers_and_signature(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM});
	struct store_result r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_OK);
	const struct fake_ddb_seen *seen = fake_ddb_last(e->fake);
	assert_string_equal(seen->target, "DynamoDB_20120810.UpdateItem");
	assert_string_equal(seen->content_type, "application/x-amz-json-1.0");
	assert_string_equal(seen->accept_encoding, "identity");
	assert_int_equal(strlen(seen->amz_date), 16);
	assert_true(strncmp(seen->authorization,
			    "AWS4-HMAC-SHA256 Credential=" DDB_TEST_ACCESS_KEY "/", 40) == 0);
	assert_non_null(strstr(seen->authorization, "/us-east-1/dynamodb/aws4_request"));
	assert_non_null(strstr(seen->authorization,
			       "SignedHeaders=content-type;host;x-amz-date;x-amz-target"));
	assert_non_null(strstr(seen->body, "\"ReturnValues\":\"ALL_NEW\""));
}

static void server_error_retried(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 500,
					      .body = "{\"__type\":\"InternalServerError\"}"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM});
	/* a 500 on the conditional acquire is retried: the retry finds its own owner */
	struct store_result r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.owner, "o1");
	assert_int_equal(fake_ddb_requests(e->fake), 2);
	assert_int_equal(stats(e->s).retries, 1);
	assert_int_equal(stats(e->s).http[DDB_UPDATE_ITEM], 2);
	assert_int_equal(e->s->requests[STORE_ACQUIRE], 1); /* one logical operation */
	assert_int_equal(stats(e->s).quota_tokens, 500);    /* refunded on success */
	/* each attempt is timed under the class of its answer */
	assert_int_equal(answered(e->s, DDB_UPDATE_ITEM, DDB_C_TRANSIENT), 1);
	assert_int_equal(answered(e->s, DDB_UPDATE_ITEM, DDB_C_OK), 1);
	assert_int_equal(answered(e->s, DDB_GET_ITEM, DDB_C_OK), 0);
}

#define REFUSAL(item)	"{\"__type\":\"ConditionalCheckFailedException\",\"Item\":" item "}"
#define UNKNOWN_OUTCOME ((struct fake_ddb_reply){.status = 500, .body = ""})
#define NOT_APPLIED	((struct fake_ddb_reply){.status = 400, .body = THROTTLED})

/* o1's release of "a", answered first (when first.status is set) then
 * refused by the item refusal. */
static struct store_result release_refused(struct env *e, struct fake_ddb_reply first,
					   const char *refusal)
{
	if (first.status != 0)
		fake_ddb_push(e->fake, first);
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 400, .body = refusal});
	return do_req(e->s, (struct store_req){.op = STORE_RELEASE, .owner = "o1"});
}

/* A release retried after an attempt that may have applied is the release
 * when the retry is refused by a free lock, or by another owner's item
 * (the lock granted again after it: make stress, lease mode, seed 931009,
 * answered "not written", "the lock may stay held", while B held it). */
static void release_retried_after_500(void **state)
{
	struct env *e = *state;
	/* the first attempt was applied, its answer lost in a 500 */
	struct store_result r = release_refused(
		e, UNKNOWN_OUTCOME, REFUSAL("{\"rvn\":{\"S\":\"r1\"},\"fence\":{\"N\":\"1\"}}"));
	assert_int_equal(r.status, STORE_OK);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
	/* without a retry, a free lock refuses the release */
	r = release_refused(e, (struct fake_ddb_reply){0}, REFUSAL("{\"rvn\":{\"S\":\"r1\"}}"));
	assert_int_equal(r.status, STORE_REFUSED);
	/* another owner by then, after an attempt whose outcome is unknown */
	r = release_refused(e, UNKNOWN_OUTCOME, REFUSAL("{\"owner\":{\"S\":\"B\"}}"));
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.owner, "B");
	/* but after a throttled attempt, which applied nothing, another owner
	 * is a refusal: the lease had ended before its release */
	r = release_refused(e, NOT_APPLIED, REFUSAL("{\"owner\":{\"S\":\"B\"}}"));
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "B");
	/* and its own owner still there is a refusal whatever came before */
	r = release_refused(e, UNKNOWN_OUTCOME, REFUSAL("{\"owner\":{\"S\":\"o1\"}}"));
	assert_int_equal(r.status, STORE_REFUSED);
}

#define REFUSED_BY(owner, rvn)                                                                     \
	"{\"__type\":\"ConditionalCheckFailedException\",\"Item\":{\"pk\":{\"S\":\"LOCK#a\"},"     \
	"\"owner\":{\"S\":\"" owner "\"},\"rvn\":{\"S\":\"" rvn "\"},\"fence\":{\"N\":\"1\"},"     \
	"\"leaseMs\":{\"N\":\"30000\"},\"_type\":{\"S\":\"LOCK\"}}}"

/* An acquire whose first attempt was applied (its answer lost in a 500)
 * is refused at its retry by its own write, the condition having no branch
 * for the owner alone: that is the acquire (store.h), answered OK with the
 * item as written, the fence raised once. Its own owner under another rvn
 * (another request, or a renewal since) is a refusal. */
static void acquire_retry_refused_by_its_own_write_is_the_acquire(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500, .body = ""});
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 400, .body = REFUSED_BY("o1", "r1")});
	struct store_result r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.owner, "o1");
	assert_string_equal(r.item.rvn, "r1");
	assert_int_equal(r.item.fence, 1);
	assert_int_equal(fake_ddb_requests(e->fake), 2);
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500, .body = ""});
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 400, .body = REFUSED_BY("o1", "r2")});
	r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.rvn, "r2");
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 400, .body = REFUSED_BY("o2", "r1")});
	r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "o2");
}

static void throttling_gives_up_after_3(void **state)
{
	struct env *e = *state;
	for (int i = 0; i < 4; i++)
		fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 400, .body = THROTTLED});
	struct store_result r = do_req(e->s, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "ThrottlingException");
	assert_non_null(strstr(r.message, "GetItem"));
	assert_int_equal(fake_ddb_requests(e->fake), 3);
	assert_int_equal(stats(e->s).throttled, 3);
	assert_int_equal(stats(e->s).quota_tokens, 490);
	assert_int_equal(answered(e->s, DDB_GET_ITEM, DDB_C_THROTTLED), 3);
	assert_int_equal(answered(e->s, DDB_GET_ITEM, DDB_C_OK), 0);
}

static void quota_stops_retries(void **state)
{
	struct env *e = *state;
	struct ddb_retry_policy p = ddb_retry_standard;
	p.quota_max = 5;
	struct store *s = make_store(e->url, &p);
	open_ok(s);
	for (int i = 0; i < 4; i++)
		fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 503, .body = ""});
	assert_int_equal(do_req(s, (struct store_req){.op = STORE_READ}).status, STORE_TRANSIENT);
	assert_int_equal(fake_ddb_requests(e->fake), 2); /* one retry took the 5 tokens */
	struct store_result r = do_req(s, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "ServiceUnavailable");
	assert_int_equal(fake_ddb_requests(e->fake), 3); /* no retry at all */
	store_free(s);
}

static void crc32_mismatch_retried(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM, .crc32 = "12345"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM});
	struct store_result r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(fake_ddb_requests(e->fake), 2);
	assert_int_equal(stats(e->s).crc_mismatches, 1);
	/* no header at all is accepted (not every front door sends it) */
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM, .crc32 = ""});
	assert_int_equal(do_req(e->s, acquire_req).status, STORE_OK);
	/* garbage in the header is a mismatch, and three of them give up */
	for (int i = 0; i < 3; i++)
		fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM, .crc32 = "x1"});
	r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "Crc32Mismatch");
	assert_int_equal(answered(e->s, DDB_UPDATE_ITEM, DDB_C_TRANSIENT), 4);
	assert_int_equal(answered(e->s, DDB_UPDATE_ITEM, DDB_C_OK), 2);
}

static void clock_skew_corrected(void **state)
{
	struct env *e = *state;
	char date[64];
	time_t ahead = time(NULL) + 3600;
	struct tm tm;
	gmtime_r(&ahead, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.status = 400,
			.date = date,
			.body = "{\"__type\":\"com.amazon.coral.service#"
				"InvalidSignatureException\","
				"\"message\":\"Signature expired: 20261129T000000Z is now earlier "
				"than 20261129T010000Z\"}"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = ITEM});
	struct store_result r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(fake_ddb_requests(e->fake), 2);
	struct store_dynamodb_stats st = stats(e->s);
	assert_int_equal(st.skew_corrections, 1);
	assert_true(st.clock_offset_ms > 3600000 - 3000 && st.clock_offset_ms < 3600000 + 3000);
	/* the second request was signed an hour ahead */
	char want[32];
	strftime(want, sizeof want, "%Y%m%dT%H", &tm);
	assert_true(strncmp(fake_ddb_last(e->fake)->amz_date, want, strlen(want)) == 0);
	/* a signature error that is no skew is fatal and not retried */
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 400,
					      .date = date,
					      .body = "{\"__type\":\"InvalidSignatureException\","
						      "\"message\":\"The request signature we "
						      "calculated does not match\"}"});
	r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_FATAL);
	assert_int_equal(fake_ddb_requests(e->fake), 3);
}

static void note_now(void *arg)
{
	*(int64_t *)arg = clock_now_ms(clk);
}

static void deadline_of_the_lease(void **state)
{
	/* a server that accepts connections and never answers */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 16), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u", ntohs(a.sin_port));
	struct store *s = make_store(url, NULL);
	open_ok(s);
	struct store_req r = acquire_req;
	r.lease_ms = 600;
	/* A timer of this loop due at the lease's end: how late it runs is
	 * how late this loop was around the deadline (a loaded machine can
	 * stall it for hundreds of ms), which the store cannot help. */
	struct timer at_end;
	int64_t end_ran = 0;
	timer_init(&at_end, clk, note_now, &end_ran);
	int64_t t0 = clock_now_ms(clk);
	timer_arm(&at_end, 600);
	struct store_result res = do_req(s, r);
	int64_t took = clock_now_ms(clk) - t0;
	while (end_ran == 0)
		event_base_loop(base, EVLOOP_ONCE);
	int64_t late = end_ran - (t0 + 600);
	print_message("never answered: %s after %lld ms, %llu attempts (a timer due at 600 ms ran "
		      "at %lld ms)\n",
		      res.error_type, (long long)took,
		      (unsigned long long)stats(s).http[DDB_UPDATE_ITEM], (long long)(late + 600));
	assert_int_equal(res.status, STORE_TRANSIENT);
	assert_string_equal(res.error_type, "Timeout");
	assert_true(took >= 190); /* at least one attempt of lease/3 */
	/* Never past the lease: answered by the lease's end, give or take
	 * 60 ms, plus however late this loop ran a timer due then. */
	assert_true(took <= 600 + 60 + (late > 0 ? late : 0));
	assert_true(stats(s).http[DDB_UPDATE_ITEM] <= 3);
	store_free(s);
	close(fd);
}

static void malformed_answers_fatal(void **state)
{
	struct env *e = *state;
	static const char *const bodies[] = {
		"not json",
		"{\"Attributes\":{\"owner\":{\"N\":\"1\"}}}",
		/* (a fence that is no integer is no bad answer but fence_bad, which
		 * the core refuses: tests/unit/test_ddb_parse.c) */
		"{\"Attributes\":{\"leaseMs\":{\"N\":\"one\"}}}",
		"{}",
	};
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		unsigned before = fake_ddb_requests(e->fake);
		fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = bodies[i]});
		struct store_result r = do_req(e->s, acquire_req);
		assert_int_equal(r.status, STORE_FATAL);
		assert_string_equal(r.error_type, "BadResponse");
		assert_non_null(strstr(r.message, "Locks"));
		assert_int_equal(fake_ddb_requests(e->fake) - before, 1);
	}
	/* an error with a malformed Item too */
	fake_ddb_push(e->fake, (struct fake_ddb_reply){
				       .status = 400,
				       .body = "{\"__type\":\"ConditionalCheckFailedException\","
					       "\"Item\":{\"owner\":{\"S\":7}}}"});
	assert_int_equal(do_req(e->s, acquire_req).status, STORE_FATAL);
}

static void refusal_brings_item(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .status = 400,
			      .body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
				      "ConditionalCheckFailedException\",\"message\":\"The "
				      "conditional request failed\",\"Item\":{\"owner\":{\"S\":"
				      "\"B\"},\"rvn\":{\"S\":\"rb\"},\"leaseMs\":{\"N\":\"5\"},"
				      "\"fence\":{\"N\":\"4\"}}}"});
	struct store_result r = do_req(e->s, acquire_req);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "B");
	assert_int_equal(r.item.fence, 4);
	/* a transaction refused for its condition, by the reason's code */
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.status = 400,
			.body = "{\"__type\":\"TransactionCanceledException\","
				"\"CancellationReasons\":[{\"Code\":\"ConditionalCheckFailed\","
				"\"Item\":{\"owner\":{\"S\":\"C\"}}}]}"});
	r = do_req(e->s, (struct store_req){.op = STORE_CHECK, .owner = "o1", .token = 1});
	assert_int_equal(r.status, STORE_REFUSED);
	assert_string_equal(r.item.owner, "C");
	assert_string_equal(fake_ddb_last(e->fake)->target, "DynamoDB_20120810.TransactWriteItems");
	/* ... or cancelled by a conflict: transient */
	for (int i = 0; i < 3; i++)
		fake_ddb_push(e->fake,
			      (struct fake_ddb_reply){
				      .status = 400,
				      .body = "{\"__type\":\"TransactionCanceledException\","
					      "\"CancellationReasons\":[{\"Code\":"
					      "\"TransactionConflict\"}]}"});
	r = do_req(e->s, (struct store_req){.op = STORE_CHECK, .owner = "o1", .token = 1});
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "TransactionConflict");
}

static void expired_token_refreshes(void **state)
{
	struct env *e = *state;
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.status = 400,
			.body = "{\"__type\":\"com.amazon.coral.service#ExpiredTokenException\","
				"\"message\":\"The security token included in the request is "
				"expired\"}"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = "{}"});
	struct store_result r = do_req(e->s, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(expired_calls, 1);
}

static void xml_auth_failure(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .status = 403,
			      .body = "<ErrorResponse><Errors><Error><Code>SignatureDoesNotMatch"
				      "</Code><Message>bad signature</Message></Error></Errors>"
				      "</ErrorResponse>"});
	struct store_result r = do_req(e->s, (struct store_req){.op = STORE_DELETE});
	assert_int_equal(r.status, STORE_FATAL);
	assert_string_equal(r.error_type, "SignatureDoesNotMatch");
	assert_non_null(strstr(r.message, "DeleteItem on table Locks"));
	assert_non_null(strstr(r.message, "bad signature"));
}

static void never_called(void *arg, const struct store_result *res)
{
	fail_msg("a cancelled request answered");
}

/* The takeover of a session-mode holder (store.h ACQUIRE with a session
 * check): one TransactWriteItems; done, the item as written; cancelled by
 * the session's check alone, the lock read back (GetItem, counted as a
 * READ) on the same handle, REFUSED with session_refused; a failing read
 * back answers its failure; cancelled while it reads back, nothing
 * answers; cancelled by the lock's condition, its item; by something else
 * than a condition, FATAL. */
static const struct store_req takeover_req = {.op = STORE_ACQUIRE,
					      .name = "a",
					      .owner = "o2",
					      .rvn = "r2",
					      .seen_rvn = "r1",
					      .seen_fence = 4,
					      .has_seen_fence = true,
					      .lease_ms = 30000,
					      .session = "SESSION#b#1",
					      .seen_session = "SESSION#a#1",
					      .sess_check = STORE_SESS_CHECK_RVN,
					      .sess_rvn = "s1"};
#define TX_CANCELLED(reasons)                                                                      \
	"{\"__type\":\"com.amazonaws.dynamodb.v20120810#TransactionCanceledException\","           \
	"\"message\":\"Transaction cancelled\",\"CancellationReasons\":" reasons "}"
#define SESSION_FAILED                                                                             \
	TX_CANCELLED("[{\"Code\":\"None\"},{\"Code\":\"ConditionalCheckFailed\",\"Item\":{"        \
		     "\"pk\":{\"S\":\"SESSION#a#1\"},\"rvn\":{\"S\":\"s2\"}}}]")
#define HELD_BY_O1                                                                                 \
	"{\"Item\":{\"pk\":{\"S\":\"LOCK#a\"},\"owner\":{\"S\":\"o1\"},\"rvn\":{\"S\":\"r1\"},"    \
	"\"fence\":{\"N\":\"4\"},\"leaseMs\":{\"N\":\"315360000000\"},\"_type\":{\"S\":"           \
	"\"LOCK\"},\"session\":{\"S\":\"SESSION#a#1\"},\"sleaseMs\":{\"N\":\"30000\"}}}"

static void takeover_answers(void **state)
{
	struct env *e = *state;
	uint64_t acquires = e->s->requests[STORE_ACQUIRE], reads = e->s->requests[STORE_READ];
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = "{}"});
	struct store_result r = do_req(e->s, takeover_req);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(fake_ddb_last(e->fake)->target, "DynamoDB_20120810.TransactWriteItems");
	assert_string_equal(r.item.owner, "o2");
	assert_string_equal(r.item.rvn, "r2");
	assert_int_equal(r.item.fence, 5);
	assert_int_equal(r.item.lease_ms, STORE_SESSION_LOCK_LEASE_MS);
	assert_string_equal(r.item.session, "SESSION#b#1");
	assert_int_equal(r.item.slease_ms, 30000);
	assert_int_equal(e->s->requests[STORE_ACQUIRE], acquires + 1);
	/* the session's check failed: the lock read back */
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 400, .body = SESSION_FAILED});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = HELD_BY_O1});
	r = do_req(e->s, takeover_req);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.session_refused);
	assert_string_equal(r.item.owner, "o1");
	assert_string_equal(r.item.session, "SESSION#a#1");
	assert_int_equal(r.item.slease_ms, 30000);
	assert_int_equal(fake_ddb_requests(e->fake) - before, 2);
	assert_string_equal(fake_ddb_last(e->fake)->target, "DynamoDB_20120810.GetItem");
	assert_non_null(strstr(fake_ddb_last(e->fake)->body, "\"ConsistentRead\":true"));
	assert_int_equal(e->s->requests[STORE_READ], reads + 1);
	/* ... and the read back failing: its failure */
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 400, .body = SESSION_FAILED});
	for (int i = 0; i < 3; i++)
		fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500, .body = ""});
	r = do_req(e->s, takeover_req);
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_false(r.session_refused);
	assert_int_equal(e->s->in_flight, 0);
	/* ... or cancelled while it waits to read again: no answer */
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 400, .body = SESSION_FAILED});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500, .body = ""});
	uint64_t retries = stats(e->s).retries;
	struct store_call *c = store_submit(e->s, &takeover_req, never_called, NULL);
	assert_non_null(c);
	int64_t until = clock_now_ms(clk) + 2000;
	while (stats(e->s).retries == retries && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(stats(e->s).retries, retries + 1);
	store_cancel(e->s, c);
	assert_int_equal(e->s->in_flight, 0);
	/* the lock's condition failed: its item, no read back */
	before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .status = 400,
			      .body = TX_CANCELLED(
				      "[{\"Code\":\"ConditionalCheckFailed\",\"Item\":{\"owner\":{"
				      "\"S\":\"o3\"},\"rvn\":{\"S\":\"r3\"},\"leaseMs\":{\"N\":"
				      "\"5\"},\"fence\":{\"N\":\"5\"}}},{\"Code\":"
				      "\"ConditionalCheckFailed\"}]")});
	r = do_req(e->s, takeover_req);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.session_refused);
	assert_string_equal(r.item.owner, "o3");
	assert_int_equal(fake_ddb_requests(e->fake) - before, 1);
	/* neither failed on a condition */
	fake_ddb_push(e->fake, (struct fake_ddb_reply){
				       .status = 400,
				       .body = TX_CANCELLED("[{\"Code\":\"ValidationError\"},"
							    "{\"Code\":\"None\"}]")});
	r = do_req(e->s, takeover_req);
	assert_int_equal(r.status, STORE_FATAL);
	assert_non_null(strstr(r.message, "ValidationError"));
}

static void cancel_and_free_in_flight(void **state)
{
	struct env *e = *state;
	struct store_req r = {.op = STORE_READ, .name = "a"};
	/* cancelled while its HTTP request is out */
	struct store_call *c = store_submit(e->s, &r, never_called, NULL);
	assert_non_null(c);
	store_cancel(e->s, c);
	/* cancelled while it waits to retry */
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500, .body = ""});
	c = store_submit(e->s, &r, never_called, NULL);
	bool seen = false;
	int64_t until = clock_now_ms(clk) + 2000;
	while (!seen && clock_now_ms(clk) < until) {
		event_base_loop(base, EVLOOP_ONCE);
		seen = stats(e->s).retries == 1;
	}
	assert_true(seen);
	store_cancel(e->s, c);
	assert_int_equal(e->s->in_flight, 0);
	/* freed with one in flight: no callback either */
	c = store_submit(e->s, &r, never_called, NULL);
	assert_non_null(c);
	store_free(e->s);
	e->s = make_store(e->url, NULL);
	/* let the answer to the freed store's request arrive: nothing runs */
	struct timeval tv = {0, 100000};
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static void not_open_refused(void **state)
{
	struct env *e = *state;
	struct store *s = make_store(e->url, NULL);
	struct store_result r = do_req(s, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_FATAL);
	assert_string_equal(r.error_type, "NotOpen");
	assert_int_equal(stats(s).http[DDB_GET_ITEM], 0);
	/* a bad request is refused without a request, from the loop */
	open_ok(s);
	r = do_req(s, (struct store_req){.op = STORE_ACQUIRE, .owner = "o", .rvn = "r"});
	assert_int_equal(r.status, STORE_FATAL);
	assert_string_equal(r.error_type, "InvalidRequest");
	assert_int_equal(stats(s).http[DDB_UPDATE_ITEM], 0);
	/* a renewal with no time left is not sent (and not answered inside submit) */
	r = do_req(s,
		   (struct store_req){.op = STORE_RENEW, .owner = "o", .rvn = "r", .lease_ms = 1});
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "Timeout");
	assert_int_equal(stats(s).http[DDB_UPDATE_ITEM], 0);
	store_free(s);
}

struct scanned {
	bool done;
	int calls;
};

static void on_scanned(void *arg)
{
	struct scanned *w = arg;
	w->done = true;
	w->calls++;
}

/* One page of a scan from cursor, run to its callback. */
static void scan_page(struct store *s, const char *cursor, struct store_scan_result *page)
{
	struct scanned w = {0};
	assert_non_null(store_scan(s, cursor, 10, page, on_scanned, &w));
	assert_false(w.done);
	run_until(&w.done);
	assert_int_equal(w.calls, 1);
}

/* A Scan is signed, sent as Scan and retried like the others; an answer
 * past HTTP_BODY_MAX or a malformed one ends it at once; before the open,
 * it is refused from the loop without a request. */
static void scan_retried_and_bounded(void **state)
{
	struct env *e = *state;
	struct store_scan_entry entries[10];
	struct store_scan_result page = {.entries = entries};
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 500,
					      .body = "{\"__type\":\"InternalServerError\"}"});
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.body = "{\"Items\":[{\"pk\":{\"S\":\"LOCK#b\"},\"rvn\":{\"S\":\"r\"}}],"
				"\"LastEvaluatedKey\":{\"pk\":{\"S\":\"LOCK#b\"}}}"});
	scan_page(e->s, "61", &page);
	assert_int_equal(page.status, STORE_OK);
	assert_int_equal(page.count, 1);
	assert_string_equal(entries[0].name, "b");
	assert_string_equal(page.cursor, "62");
	const struct fake_ddb_seen *seen = fake_ddb_last(e->fake);
	assert_string_equal(seen->target, "DynamoDB_20120810.Scan");
	assert_true(strncmp(seen->authorization,
			    "AWS4-HMAC-SHA256 Credential=" DDB_TEST_ACCESS_KEY "/", 40) == 0);
	assert_non_null(strstr(seen->body, "\"ExclusiveStartKey\":{\"pk\":{\"S\":\"LOCK#a\"}}"));
	assert_non_null(strstr(seen->body, "\"Limit\":10"));
	assert_int_equal(stats(e->s).http[DDB_SCAN], 2);
	assert_int_equal(answered(e->s, DDB_SCAN, DDB_C_TRANSIENT), 1);
	assert_int_equal(answered(e->s, DDB_SCAN, DDB_C_OK), 1);
	assert_int_equal(e->s->requests[STORE_SCAN], 1);

	/* larger than HTTP_BODY_MAX: the same page would be again, so no retry */
	size_t big = HTTP_BODY_MAX + 100;
	char *body = malloc(big + 1);
	assert_non_null(body);
	memset(body, ' ', big);
	memcpy(body, "{\"Items\":[]", 11);
	body[big - 1] = '}';
	body[big] = '\0';
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = body});
	unsigned before = fake_ddb_requests(e->fake);
	scan_page(e->s, NULL, &page);
	free(body);
	assert_int_equal(page.status, STORE_FATAL);
	assert_string_equal(page.error_type, "ResponseTooLarge");
	assert_non_null(strstr(page.message, "ask for fewer"));
	assert_int_equal(page.count, 0);
	assert_int_equal(fake_ddb_requests(e->fake) - before, 1);

	/* malformed: not retried either */
	static const char *const bad[] = {
		"{}",
		"{\"Items\":[{\"pk\":{\"S\":\"LOCK#c\"},\"owner\":{\"N\":\"1\"}}]}",
		"{\"Items\":[],\"LastEvaluatedKey\":{\"id\":{\"S\":\"x\"}}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		before = fake_ddb_requests(e->fake);
		fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = bad[i]});
		scan_page(e->s, NULL, &page);
		assert_int_equal(page.status, STORE_FATAL);
		assert_string_equal(page.error_type, "BadResponse");
		assert_string_equal(page.cursor, "");
		assert_int_equal(fake_ddb_requests(e->fake) - before, 1);
	}

	struct store *s = make_store(e->url, NULL);
	scan_page(s, NULL, &page);
	assert_int_equal(page.status, STORE_FATAL);
	assert_string_equal(page.error_type, "NotOpen");
	assert_int_equal(stats(s).http[DDB_SCAN], 0);
	store_free(s);
}

/* A scan cancelled while its request is in flight: no callback, and its
 * page (freed at once) is never written. */
static void scan_cancelled_in_flight(void **state)
{
	struct env *e = *state;
	struct store_scan_result *page = calloc(1, sizeof *page);
	assert_non_null(page);
	page->entries = calloc(10, sizeof *page->entries);
	assert_non_null(page->entries);
	struct scanned w = {0};
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Items\":[{\"pk\":{\"S\":\"LOCK#b\"}}]}"});
	struct store_call *c = store_scan(e->s, NULL, 10, page, on_scanned, &w);
	assert_non_null(c);
	/* until the request has reached the server */
	while (fake_ddb_requests(e->fake) == 0)
		event_base_loop(base, EVLOOP_ONCE);
	store_cancel(e->s, c);
	free(page->entries);
	free(page);
	assert_int_equal(e->s->in_flight, 0);
	struct store_result r = do_req(e->s, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_OK);
	assert_false(w.done);
}

static void bad_config(void **state)
{
	static const struct store_dynamodb_config cfgs[] = {
		{.table = "x", .region = "us-east-1", .credentials = ddb_test_creds},
		{.table = "Locks", .credentials = ddb_test_creds},
		{.table = "Locks", .region = "us-east-1"},
		{.table = "Locks",
		 .region = "us-east-1",
		 .credentials = ddb_test_creds,
		 .endpoint = "ftp://x"},
		{.table = "Locks",
		 .region = "us-east-1",
		 .credentials = ddb_test_creds,
		 .endpoint = "http://"},
		{.table = "Locks",
		 .region = "us-east-1",
		 .credentials = ddb_test_creds,
		 .partition_key = "pk",
		 .ttl_attribute = "pk"},
		{.table = "Locks",
		 .region = "us-east-1",
		 .credentials = ddb_test_creds,
		 .ttl_attribute = "owner"},
		{.table = "Locks",
		 .region = "us-east-1",
		 .credentials = ddb_test_creds,
		 .sort_key = "sk"},
	};
	for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
		char err[STORE_DDB_ERR_MAX] = "";
		struct store *s = store_dynamodb_new(base, clk, &cfgs[i], err);
		if (s)
			fail_msg("config %zu accepted", i);
		assert_true(err[0] != '\0');
	}
	char ep[128];
	setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://localhost:8000", 1);
	store_dynamodb_endpoint("eu-west-1", ep, sizeof ep);
	assert_string_equal(ep, "http://localhost:8000");
	unsetenv("AWS_ENDPOINT_URL_DYNAMODB");
	setenv("AWS_ENDPOINT_URL", "http://localhost:8001", 1);
	store_dynamodb_endpoint("eu-west-1", ep, sizeof ep);
	assert_string_equal(ep, "http://localhost:8001");
	unsetenv("AWS_ENDPOINT_URL");
	store_dynamodb_endpoint("eu-west-1", ep, sizeof ep);
	assert_string_equal(ep, "https://dynamodb.eu-west-1.amazonaws.com");
}

/* ---- session items (core/store/store_session.h) ---- */

struct sess_box {
	bool done;
	struct store_session_result res;
};

static void on_sess(void *arg, const struct store_session_result *r)
{
	struct sess_box *b = arg;
	b->done = true;
	b->res = *r;
}

#define SESS_INC "0123456789abcdef0123456789abcdef"
#define SESS_PK	 "SESSION#rep#" SESS_INC
#define SESS_ITEM                                                                                  \
	"{\"pk\":{\"S\":\"" SESS_PK "\"},\"_type\":{\"S\":\"SESSION\"},\"rvn\":{\"S\":\"r1\"},"    \
	"\"maxLeaseMs\":{\"N\":\"30000\"},\"revSeq\":{\"N\":\"3\"}}"
#define LOCK_LEFT "\"UnprocessedKeys\":{\"Locks\":{\"Keys\":[{\"pk\":{\"S\":\"LOCK#a\"}}]}}"

static struct store_session_result sess_read(struct env *e)
{
	static struct sess_box b;
	memset(&b, 0, sizeof(b));
	struct store_session_req r = {
		.op = STORE_SESSION_READ, .replica = "rep", .incarnation = SESS_INC, .name = "a"};
	assert_non_null(store_session_submit(e->s, &r, on_sess, &b));
	run_until(&b.done);
	assert_true(b.done);
	return b.res;
}

/* A READ asks again for its UnprocessedKeys, and for them alone, strongly
 * consistent: the session of the first answer and the lock of the second
 * make one answer. */
static void session_read_asks_unprocessed_again(void **state)
{
	struct env *e = *state;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[" SESS_ITEM
						      "]}," LOCK_LEFT "}"});
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .body = "{\"Responses\":{\"Locks\":[{\"pk\":{\"S\":\"LOCK#a\"},"
				      "\"_type\":{\"S\":\"LOCK\"},\"owner\":{\"S\":\"o1\"},"
				      "\"rvn\":{\"S\":\"x\"},\"leaseMs\":{\"N\":\"30000\"},"
				      "\"fence\":{\"N\":\"4\"}}]}}"});
	struct store_session_result r = sess_read(e);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
	const char *body = fake_ddb_last(e->fake)->body;
	assert_non_null(strstr(body, "LOCK#a"));
	assert_null(strstr(body, "SESSION#")); /* the session came back: not asked again */
	assert_non_null(strstr(body, "\"ConsistentRead\":true"));
	assert_true(r.session_read && r.lock_read);
	assert_string_equal(r.session.rvn, "r1");
	assert_int_equal(r.session.rev_seq, 3);
	assert_true(r.lock.exists);
	assert_string_equal(r.lock.owner, "o1");
	assert_int_equal(r.lock.fence, 4);
}

static int64_t zero_ns(void *arg)
{
	(void)arg;
	return 0;
}

/* A session READ's requests are child spans of the READ's span (a
 * waiter's Lock.SessionRead), one per round: BatchGetItem twice when the
 * first left a key unprocessed. */
static void session_read_requests_are_child_spans(void **state)
{
	struct env *e = *state;
	struct tracer_options o = {.ratio = 1, .now_ns = zero_ns};
	struct tracer *t = tracer_new(&o);
	assert_non_null(t);
	struct trace_span *parent = trace_start(t, "Lock.SessionRead", TRACE_INTERNAL, NULL);
	assert_non_null(parent);
	struct trace_ctx pc = trace_ctx_of(parent);
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[" SESS_ITEM
						      "]}," LOCK_LEFT "}"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[]}}"});
	struct sess_box b = {0};
	struct store_session_req r = {.op = STORE_SESSION_READ,
				      .replica = "rep",
				      .incarnation = SESS_INC,
				      .name = "a",
				      .span = parent};
	assert_non_null(store_session_submit(e->s, &r, on_sess, &b));
	run_until(&b.done);
	assert_int_equal(b.res.status, STORE_OK);
	trace_end(parent);
	struct trace_span *sp[4];
	size_t n = tracer_take(t, sp, 4);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(sp[i]->name, "BatchGetItem");
		assert_int_equal(sp[i]->kind, TRACE_CLIENT);
		assert_true(sp[i]->has_parent);
		assert_memory_equal(sp[i]->parent_id, pc.span_id, 8);
		assert_memory_equal(sp[i]->ctx.trace_id, pc.trace_id, 16);
	}
	assert_string_equal(sp[2]->name, "Lock.SessionRead");
	for (size_t i = 0; i < n; i++)
		trace_free(sp[i]);
	tracer_free(t);
}

/* Keys left unprocessed round after round end TRANSIENT, saying which
 * item came back. */
static void session_read_unprocessed_gives_up(void **state)
{
	struct env *e = *state;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[" SESS_ITEM
						      "]}," LOCK_LEFT "}"});
	for (int i = 0; i < 7; i++)
		fake_ddb_push(e->fake,
			      (struct fake_ddb_reply){
				      .body = "{\"Responses\":{\"Locks\":[]}," LOCK_LEFT "}"});
	struct store_session_result r = sess_read(e);
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "UnprocessedKeys");
	assert_int_equal(fake_ddb_requests(e->fake), before + 8);
	assert_true(r.session_read);
	assert_true(r.session.exists);
	assert_false(r.lock_read);
	assert_false(r.lock.exists);
}

/* A READ cancelled while it asks again for its UnprocessedKeys answers
 * nothing: its next round goes on in the same call, so the caller's
 * handle still names it (it was a new call once: the cancel reached a
 * freed one, and the callback still came). */
static void session_read_cancelled_in_its_second_round(void **state)
{
	struct env *e = *state;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[" SESS_ITEM
						      "]}," LOCK_LEFT "}"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[]}}"});
	struct sess_box b = {0};
	struct store_session_req r = {
		.op = STORE_SESSION_READ, .replica = "rep", .incarnation = SESS_INC, .name = "a"};
	struct store_call *c = store_session_submit(e->s, &r, on_sess, &b);
	assert_non_null(c);
	int64_t until = clock_now_ms(clk) + 20000;
	while (fake_ddb_requests(e->fake) < before + 2 && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
	store_cancel(e->s, c);
	until = clock_now_ms(clk) + 300;
	while (clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
	assert_false(b.done);
	assert_int_equal(e->s->in_flight, 0);
}

/* ---- batch reads (core/store/store_batch.h) ---- */

static void on_batch(void *arg)
{
	*(bool *)arg = true;
}

#define LOCK_B_ITEM                                                                                \
	"{\"pk\":{\"S\":\"LOCK#b\"},\"_type\":{\"S\":\"LOCK\"},\"owner\":{\"S\":\"o2\"},"          \
	"\"rvn\":{\"S\":\"y\"},\"leaseMs\":{\"N\":\"30000\"},\"fence\":{\"N\":\"2\"}}"

/* a, b and c read in one batch: its result, and the requests it took */
static unsigned batch_abc(struct env *e, struct store_batch_result *res,
			  struct store_batch_entry ent[3])
{
	static const char *const names[] = {"a", "b", "c"};
	unsigned before = fake_ddb_requests(e->fake);
	memset(ent, 0, 3 * sizeof(*ent));
	for (int i = 0; i < 3; i++)
		ent[i].name = names[i];
	*res = (struct store_batch_result){.entries = ent, .count = 3};
	bool done = false;
	assert_non_null(store_batch_read(e->s, res, on_batch, &done));
	run_until(&done);
	assert_true(done);
	return fake_ddb_requests(e->fake) - before;
}

/* A batch read asks again, in the same call, for its UnprocessedKeys
 * alone; a key neither answered nor left is an item that is not there. */
static void batch_read_asks_unprocessed_again(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[" LOCK_B_ITEM
						      "]}," LOCK_LEFT "}"});
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .body = "{\"Responses\":{\"Locks\":[{\"pk\":{\"S\":\"LOCK#a\"},"
				      "\"_type\":{\"S\":\"LOCK\"},\"owner\":{\"S\":\"o1\"},"
				      "\"rvn\":{\"S\":\"x\"},\"leaseMs\":{\"N\":\"30000\"},"
				      "\"fence\":{\"N\":\"4\"}}]}}"});
	struct store_batch_result res;
	struct store_batch_entry ent[3];
	assert_int_equal(batch_abc(e, &res, ent), 2);
	assert_int_equal(res.status, STORE_OK);
	const char *body = fake_ddb_last(e->fake)->body;
	assert_non_null(strstr(body, "LOCK#a"));
	assert_null(strstr(body, "LOCK#b")); /* came back: not asked again */
	assert_null(strstr(body, "LOCK#c"));
	assert_non_null(strstr(body, "\"ConsistentRead\":true"));
	assert_true(ent[0].read && ent[1].read && ent[2].read);
	assert_string_equal(ent[0].item.owner, "o1");
	assert_int_equal(ent[0].item.fence, 4);
	assert_string_equal(ent[1].item.owner, "o2");
	assert_false(ent[2].item.exists);
}

/* Keys left round after round end TRANSIENT, the entries read marked. */
static void batch_read_unprocessed_gives_up(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[" LOCK_B_ITEM
						      "]}," LOCK_LEFT "}"});
	for (int i = 0; i < 7; i++)
		fake_ddb_push(e->fake,
			      (struct fake_ddb_reply){
				      .body = "{\"Responses\":{\"Locks\":[]}," LOCK_LEFT "}"});
	struct store_batch_result res;
	struct store_batch_entry ent[3];
	assert_int_equal(batch_abc(e, &res, ent), 8);
	assert_int_equal(res.status, STORE_TRANSIENT);
	assert_string_equal(res.error_type, "UnprocessedKeys");
	assert_false(ent[0].read);
	assert_true(ent[1].read && ent[2].read);
	assert_string_equal(ent[1].item.owner, "o2");
	assert_int_equal(e->s->in_flight, 0);
}

static void on_sh(void *arg, const struct store_sh_result *r)
{
	*(bool *)arg = true;
}

/* Likewise the READ of a shared name's header and slots. */
static void shared_read_cancelled_in_its_second_round(void **state)
{
	struct env *e = *state;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[]},"
						      "\"UnprocessedKeys\":{\"Locks\":{"
						      "\"Keys\":[{\"pk\":{\"S\":\"LOCK#a\"}},"
						      "{\"pk\":{\"S\":\"SLOT#0#a\"}}]}}}"});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.body = "{\"Responses\":{\"Locks\":[]}}"});
	bool done = false;
	struct store_sh_req r = {
		.op = STORE_SH_READ, .name = "a", .mode = STORE_SH_SHARED, .cap = 1, .count = 1};
	struct store_call *c = store_sh_submit(e->s, &r, on_sh, &done);
	assert_non_null(c);
	int64_t until = clock_now_ms(clk) + 20000;
	while (fake_ddb_requests(e->fake) < before + 2 && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
	store_cancel(e->s, c);
	until = clock_now_ms(clk) + 300;
	while (clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
	assert_false(done);
	assert_int_equal(e->s->in_flight, 0);
}

/* ---- an ending with its revocation (core/store/store_revoke.h) ---- */

static const struct store_req revoke_req = {.op = STORE_RELEASE,
					    .name = "a",
					    .owner = "o1",
					    .token = 1,
					    .forced = true,
					    .revoke_session = SESS_PK};

#define CANCELLED(r0, r1, r2)                                                                      \
	"{\"__type\":\"com.amazonaws.dynamodb.v20120810#TransactionCanceledException\","           \
	"\"message\":\"Transaction cancelled\",\"CancellationReasons\":[" r0 "," r1 "," r2 "]}"
#define NONE	     "{\"Code\":\"None\"}"
#define CONFLICT     "{\"Code\":\"TransactionConflict\",\"Message\":\"conflict\"}"
#define CHECK_FAILED "{\"Code\":\"ConditionalCheckFailed\",\"Message\":\"failed\"}"

/* A TransactionConflict (the session's heartbeat meeting the ending) is
 * retried with the same body, so with the same ClientRequestToken: a
 * retry of a transaction that applied is applied once. */
static void revocation_conflict_retried_with_its_token(void **state)
{
	struct env *e = *state;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 400,
						       .body = CANCELLED(NONE, NONE, CONFLICT)});
	struct store_result res = {0};
	bool done = false;
	struct box b = {&done, &res};
	struct store_call *c = store_submit(e->s, &revoke_req, on_box, &b);
	assert_non_null(c);
	char first[8192] = "";
	int64_t until = clock_now_ms(clk) + 5000;
	while (!done && clock_now_ms(clk) < until) {
		event_base_loop(base, EVLOOP_ONCE);
		if (first[0] == '\0' && fake_ddb_requests(e->fake) == before + 1)
			snprintf(first, sizeof(first), "%s", fake_ddb_last(e->fake)->body);
	}
	assert_true(done);
	assert_int_equal(res.status, STORE_OK);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
	assert_string_equal(fake_ddb_last(e->fake)->target, "DynamoDB_20120810.TransactWriteItems");
	assert_non_null(strstr(first, "\"ClientRequestToken\""));
	assert_string_equal(fake_ddb_last(e->fake)->body, first);
}

/* A part cancelled for another cause than its condition (a validation
 * error) ends FATAL, naming it. */
static void revocation_other_cause_fatal(void **state)
{
	struct env *e = *state;
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .status = 400,
			      .body = CANCELLED(NONE,
						"{\"Code\":\"ValidationError\",\"Message\":\"Item "
						"size has exceeded the maximum allowed size\"}",
						NONE)});
	struct store_result r = do_req(e->s, revoke_req);
	assert_int_equal(r.status, STORE_FATAL);
	assert_string_equal(r.error_type, "TransactionCanceled");
	assert_non_null(strstr(r.message, "ValidationError"));
	assert_false(r.session_gone);
}

/* The read-back of a session gone goes on in the call the caller holds:
 * cancelled while it waits to retry, nothing answers. */
static void revocation_readback_cancelled(void **state)
{
	struct env *e = *state;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake, (struct fake_ddb_reply){
				       .status = 400, .body = CANCELLED(NONE, NONE, CHECK_FAILED)});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500, .body = ""});
	struct store_call *c = store_submit(e->s, &revoke_req, never_called, NULL);
	assert_non_null(c);
	bool seen = false;
	int64_t until = clock_now_ms(clk) + 2000;
	while (!seen && clock_now_ms(clk) < until) {
		event_base_loop(base, EVLOOP_ONCE);
		seen = stats(e->s).retries == 1;
	}
	assert_true(seen);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
	assert_string_equal(fake_ddb_last(e->fake)->target, "DynamoDB_20120810.GetItem");
	assert_non_null(strstr(fake_ddb_last(e->fake)->body, "\"ConsistentRead\":true"));
	store_cancel(e->s, c);
	assert_int_equal(e->s->in_flight, 0);
	struct timeval tv = {0, 200000}; /* past the retry's wait: nothing runs */
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	base = event_base_new();
	clk = base ? clock_real_new(base) : NULL;
	tick = clk ? event_new(base, -1, EV_PERSIST, on_tick, NULL) : NULL;
	if (!tick)
		return 1;
	struct timeval tv = {0, 50000};
	event_add(tick, &tv);
	const struct CMUnitTest tests[] = {
		T(headers_and_signature),
		T(server_error_retried),
		T(release_retried_after_500),
		T(acquire_retry_refused_by_its_own_write_is_the_acquire),
		T(throttling_gives_up_after_3),
		T(quota_stops_retries),
		T(crc32_mismatch_retried),
		T(clock_skew_corrected),
		T(deadline_of_the_lease),
		T(malformed_answers_fatal),
		T(refusal_brings_item),
		T(takeover_answers),
		T(session_read_cancelled_in_its_second_round),
		T(shared_read_cancelled_in_its_second_round),
		T(revocation_conflict_retried_with_its_token),
		T(revocation_other_cause_fatal),
		T(revocation_readback_cancelled),
		T(expired_token_refreshes),
		T(xml_auth_failure),
		T(cancel_and_free_in_flight),
		T(not_open_refused),
		T(scan_retried_and_bounded),
		T(scan_cancelled_in_flight),
		T(bad_config),
		T(session_read_asks_unprocessed_again),
		T(session_read_requests_are_child_spans),
		T(session_read_unprocessed_gives_up),
		T(batch_read_asks_unprocessed_again),
		T(batch_read_unprocessed_gives_up),
	};
	int failed =
		cmocka_run_group_tests_name("dynamodb store, scripted faults", tests, NULL, NULL);
	event_free(tick);
	clock_free(clk);
	event_base_free(base);
	return failed;
}
