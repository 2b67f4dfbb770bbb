/*
 * it_fenced_store: the DynamoDB store's fenced transactions against
 * answers a real emulator will not give on demand (tests/support/fake_ddb.c
 * on this loop): a retry after a 500 sends the same body with the same
 * ClientRequestToken (so DynamoDB applies a retried commit once; moto
 * ignores the token, so this is where it is held to), another transaction
 * gets another token; TransactionConflict and throttling retried and then
 * TRANSIENT; the failed item found past the reasons ddb_parse_error keeps;
 * a ResourceNotFoundException NO_TABLE with the client's tables listed
 * (the lock table's or theirs: the core reads the lock to tell). Real
 * loop and clock; no sleeps.
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
#include "core/store/store_tx.h"
#include "tests/support/ddb_keys.h"
#include "tests/support/fake_ddb.h"

static struct event_base *base;
static struct clock *clk;

static void on_tick(evutil_socket_t fd, short what, void *arg) {}

static void run_until(const bool *done)
{
	int64_t until = clock_now_ms(clk) + 20000;
	while (!*done && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
}

struct env {
	struct fake_ddb *fake;
	char url[64];
	struct store *s;
};

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

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof *e);
	e->fake = fake_ddb_new(base, e->url, sizeof e->url);
	if (!e->fake)
		return -1;
	struct store_dynamodb_config cfg = ddb_test_config(e->url);
	char err[STORE_DDB_ERR_MAX];
	e->s = store_dynamodb_new(base, clk, &cfg, err);
	assert_non_null(e->s);
	struct opened o = {0};
	assert_true(store_dynamodb_open(e->s, on_open, &o));
	run_until(&o.done);
	assert_int_equal(o.res.status, STORE_OK);
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

#define ITEMS "[{\"Put\":{\"TableName\":\"orders\",\"Item\":{\"id\":{\"S\":\"1\"}}}}]"

struct txr {
	bool done;
	struct store_tx_result res;
	char reasons[1024];
};

static void on_tx(void *arg, const struct store_tx_result *res)
{
	struct txr *t = arg;
	t->done = true;
	t->res = *res;
	snprintf(t->reasons, sizeof(t->reasons), "%s", res->reasons ? res->reasons : "");
	t->res.reasons = NULL;
}

static struct store_call *start(struct env *e, struct txr *t)
{
	struct store_tx_req req = {.name = "job",
				   .owner = "o1",
				   .token = 7,
				   .items = ITEMS,
				   .items_len = strlen(ITEMS)};
	memset(t, 0, sizeof(*t));
	struct store_call *c = store_transact(e->s, &req, on_tx, t);
	assert_non_null(c);
	return c;
}

/* The ClientRequestToken of a body. */
static void token_of(const char *body, char *out, size_t cap)
{
	const char *p = strstr(body, "\"ClientRequestToken\":\"");
	assert_non_null(p);
	p += strlen("\"ClientRequestToken\":\"");
	size_t n = strcspn(p, "\"");
	assert_true(n > 0 && n < cap);
	memcpy(out, p, n);
	out[n] = '\0';
}

static void retry_keeps_the_token(void **state)
{
	struct env *e = *state;
	struct txr t;
	unsigned before = fake_ddb_requests(e->fake);
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 500});
	fake_ddb_push(e->fake, (struct fake_ddb_reply){.status = 200});
	(void)start(e, &t);
	/* the first attempt's body, before the retry replaces it */
	int64_t until = clock_now_ms(clk) + 10000;
	while (fake_ddb_requests(e->fake) < before + 1 && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
	char first[8192], tok1[64], tok2[64];
	snprintf(first, sizeof(first), "%s", fake_ddb_last(e->fake)->body);
	assert_string_equal(fake_ddb_last(e->fake)->target, "DynamoDB_20120810.TransactWriteItems");
	run_until(&t.done);
	assert_int_equal(t.res.status, STORE_OK);
	assert_int_equal(fake_ddb_requests(e->fake), before + 2);
	assert_string_equal(fake_ddb_last(e->fake)->body, first); /* the same bytes */
	token_of(first, tok1, sizeof(tok1));
	assert_int_equal(strlen(tok1), 32);
	/* another transaction: another token */
	(void)start(e, &t);
	run_until(&t.done);
	token_of(fake_ddb_last(e->fake)->body, tok2, sizeof(tok2));
	assert_string_not_equal(tok1, tok2);
	assert_int_equal(e->s->requests[STORE_TRANSACT], 2);
}

#define CANCELLED(reasons)                                                                         \
	"{\"__type\":\"com.amazonaws.dynamodb.v20120810#TransactionCanceledException\","           \
	"\"Message\":\"Transaction cancelled\",\"CancellationReasons\":" reasons "}"

static void conflict_retried_then_transient(void **state)
{
	struct env *e = *state;
	struct txr t;
	unsigned before = fake_ddb_requests(e->fake);
	for (int i = 0; i < 3; i++)
		fake_ddb_push(e->fake, (struct fake_ddb_reply){
					       .status = 400,
					       .body = CANCELLED("[{\"Code\":\"None\"},{\"Code\":"
								 "\"TransactionConflict\"}]")});
	(void)start(e, &t);
	run_until(&t.done);
	assert_int_equal(t.res.status, STORE_TRANSIENT);
	assert_string_equal(t.res.error_type, "TransactionConflict");
	assert_int_equal(fake_ddb_requests(e->fake), before + 3);
	/* throttled, then committed */
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){.status = 400,
					      .body = CANCELLED("[{\"Code\":\"ThrottlingError\"},"
								"{\"Code\":\"None\"}]")});
	(void)start(e, &t);
	run_until(&t.done);
	assert_int_equal(t.res.status, STORE_OK);
}

static void failed_item_past_four(void **state)
{
	struct env *e = *state;
	struct txr t;
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.status = 400,
			.body = CANCELLED(
				"[{\"Code\":\"None\"},{\"Code\":\"None\"},{\"Code\":\"None\"},"
				"{\"Code\":\"None\"},{\"Code\":\"None\"},{\"Code\":"
				"\"ConditionalCheckFailed\",\"Message\":\"no\"}]")});
	(void)start(e, &t);
	run_until(&t.done);
	assert_int_equal(t.res.status, STORE_REFUSED);
	assert_int_equal(t.res.index, 5);
	assert_string_equal(t.reasons,
			    "[{\"Code\":\"None\"},{\"Code\":\"None\"},{\"Code\":\"None\"},"
			    "{\"Code\":\"None\"},{\"Code\":\"ConditionalCheckFailed\","
			    "\"Message\":\"no\"}]");
	/* the check: the lease is gone, and the item says who has it */
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.status = 400,
			.body = CANCELLED(
				"[{\"Code\":\"ConditionalCheckFailed\",\"Item\":{\"pk\":{\"S\":"
				"\"LOCK#job\"},\"_type\":{\"S\":\"LOCK\"},\"owner\":{\"S\":"
				"\"o2\"},\"rvn\":{\"S\":\"r\"},\"leaseMs\":{\"N\":\"1000\"},"
				"\"fence\":{\"N\":\"8\"}}},{\"Code\":\"None\"}]")});
	(void)start(e, &t);
	run_until(&t.done);
	assert_int_equal(t.res.status, STORE_REFUSED);
	assert_int_equal(t.res.index, 0);
	assert_true(t.res.item.exists);
	assert_string_equal(t.res.item.owner, "o2");
	assert_int_equal(t.res.item.fence, 8);
}

static void missing_table_lists_tables(void **state)
{
	struct env *e = *state;
	struct txr t;
	fake_ddb_push(
		e->fake,
		(struct fake_ddb_reply){
			.status = 400,
			.body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
				"ResourceNotFoundException\",\"message\":\"Requested resource "
				"not found\"}"});
	(void)start(e, &t);
	run_until(&t.done);
	/* NO_TABLE, which DynamoDB does not name: the client's tables listed
	 * for the core's read of the lock (lt_transact.c) */
	assert_int_equal(t.res.status, STORE_NO_TABLE);
	assert_non_null(strstr(t.res.message, "ResourceNotFoundException"));
	assert_null(strstr(t.res.message, "on table Locks"));
	assert_int_equal(t.res.ntables, 1);
	assert_string_equal(t.res.tables, "'orders'");
	/* a mismatched token (never sent by leasegate: new per call) */
	fake_ddb_push(e->fake,
		      (struct fake_ddb_reply){
			      .status = 400,
			      .body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
				      "IdempotentParameterMismatchException\",\"message\":\"x\"}"});
	(void)start(e, &t);
	run_until(&t.done);
	assert_int_equal(t.res.status, STORE_FATAL);
}

static void cancel_in_flight(void **state)
{
	struct env *e = *state;
	struct txr t;
	struct store_call *c = start(e, &t);
	store_cancel(e->s, c);
	int64_t until = clock_now_ms(clk) + 200;
	while (clock_now_ms(clk) < until && !t.done)
		event_base_loop(base, EVLOOP_NONBLOCK);
	assert_false(t.done);
	assert_int_equal(e->s->in_flight, 0);
}

int main(void)
{
	base = event_base_new();
	clk = base ? clock_real_new(base) : NULL;
	/* a tick keeps the loop from returning at once while nothing is due */
	struct event *tick = clk ? event_new(base, -1, EV_PERSIST, on_tick, NULL) : NULL;
	if (tick == NULL)
		return 1;
	struct timeval tv = {0, 50000};
	event_add(tick, &tv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(retry_keeps_the_token, setup, teardown),
		cmocka_unit_test_setup_teardown(conflict_retried_then_transient, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_item_past_four, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_table_lists_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(cancel_in_flight, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	event_free(tick);
	clock_free(clk);
	event_base_free(base);
	return rc;
}
