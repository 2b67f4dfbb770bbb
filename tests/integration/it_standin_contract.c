/*
 * it_standin_contract: the DynamoDB store of leasegate against the
 * benchmarks' stand-in (tests/support/ddb_standin*.c) on this loop, held
 * to the contracts of `--heartbeat replica` that it_store_dynamodb runs on
 * moto: session items (store_contract_session.c), locks in session mode
 * and the takeover's transaction (store_contract_slock.c) and revocations
 * (store_contract_revoke.c), on the stand-in's one table (a partition key
 * only: its revocations are bounded). Then what only the stand-in has: its
 * counts of those requests (reads and writes apart, with the items each
 * carried) and the intervals of a session's heartbeats.
 * Real loop and clock, no latency drawn (the contracts need no timing).
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
#include "tests/support/ddb_keys.h"
#include "tests/support/ddb_standin.h"
#include "tests/support/store_contract.h"

static struct event_base *base;
static struct clock *clk;
static struct standin *sd;
static char url[64];

static void run_until(const bool *flag)
{
	int64_t until = clock_now_ms(clk) + 10000;
	while (!*flag && clock_now_ms(clk) < until)
		event_base_loop(base, EVLOOP_ONCE);
}

static void on_flag(void *arg)
{
	*(bool *)arg = true;
}

static void run_for(int64_t ms)
{
	bool flag = false;
	struct timer t;
	timer_init(&t, clk, on_flag, &flag);
	timer_arm(&t, ms);
	run_until(&flag);
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

/* A DynamoDB store on the stand-in, opened (it creates the table and
 * sets its TTL attribute, which the stand-in learns). */
static struct store *make(void *arg)
{
	struct store_dynamodb_config cfg = ddb_test_config(url);
	cfg.ttl_attribute = "expiresAt";
	cfg.create_table = true;
	char err[STORE_DDB_ERR_MAX];
	struct store *s = store_dynamodb_new(base, clk, &cfg, err);
	struct opened o = {0};
	if (!s || !store_dynamodb_open(s, on_open, &o)) {
		print_error("store on the stand-in: %s\n", s ? "open refused" : err);
		store_free(s);
		return NULL;
	}
	run_until(&o.done);
	if (!o.done || o.res.status != STORE_OK) {
		print_error("open: %s %s\n", store_status_name(o.res.status), o.res.message);
		store_free(s);
		return NULL;
	}
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

/* ---- the stand-in's counts ---- */

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

static struct store_session_result sess_do(struct store *s, struct store_session_req r)
{
	struct sess_done d = {0};
	r.replica = "rep";
	r.incarnation = "0123456789abcdef0123456789abcdef";
	assert_non_null(store_session_submit(s, &r, on_sess, &d));
	run_until(&d.done);
	assert_true(d.done);
	return d.res;
}

struct done {
	bool done;
	struct store_result res;
};

static void on_done(void *arg, const struct store_result *res)
{
	struct done *d = arg;
	d->done = true;
	d->res = *res;
}

static struct store_result do_req(struct store *s, struct store_req r)
{
	struct done d = {0};
	assert_non_null(store_submit(s, &r, on_done, &d));
	run_until(&d.done);
	assert_true(d.done);
	return d.res;
}

#define SESS "SESSION#rep#0123456789abcdef0123456789abcdef"

/* A CREATE and two BEATs 200 and 400 ms apart, a READ, a lock taken in
 * session mode and taken over with the session's check, then forced out
 * with its revocation: each counted by operation, as a read or a write,
 * with its items (BatchGetItem 2, the takeover 2, the ending 3); the
 * beats' intervals kept while recording, the per-lease lateness not
 * touched by them. */
static void counts_and_beat_intervals(void **state)
{
	struct store *s = make(NULL);
	assert_non_null(s);
	standin_reset(sd);
	standin_record(sd, true);
	struct store_session_req beat = {
		.op = STORE_SESSION_BEAT, .rvn = "b1", .seq = 1, .max_lease_ms = 30000};
	struct store_session_req create = beat;
	create.op = STORE_SESSION_CREATE;
	create.rvn = "c1";
	create.seq = 0;
	assert_int_equal(sess_do(s, create).status, STORE_OK);
	run_for(200);
	assert_int_equal(sess_do(s, beat).status, STORE_OK);
	run_for(400);
	beat.rvn = "b2";
	beat.seq = 2;
	assert_int_equal(sess_do(s, beat).status, STORE_OK);
	struct store_session_result rd =
		sess_do(s, (struct store_session_req){.op = STORE_SESSION_READ, .name = "cnt"});
	assert_int_equal(rd.status, STORE_OK);
	assert_string_equal(rd.session.rvn, "b2");
	struct store_result r = do_req(s, (struct store_req){.op = STORE_ACQUIRE,
							     .name = "cnt",
							     .owner = "o1",
							     .rvn = "r1",
							     .lease_ms = 30000,
							     .session = SESS});
	assert_int_equal(r.status, STORE_OK);
	r = do_req(s, (struct store_req){.op = STORE_ACQUIRE,
					 .name = "cnt",
					 .owner = "o2",
					 .rvn = "r2",
					 .lease_ms = 30000,
					 .seen_rvn = "r1",
					 .seen_fence = 1,
					 .has_seen_fence = true,
					 .seen_session = SESS,
					 .sess_check = STORE_SESS_CHECK_RVN,
					 .sess_rvn = "b2"});
	assert_int_equal(r.status, STORE_OK);
	r = do_req(s, (struct store_req){.op = STORE_RELEASE,
					 .name = "cnt",
					 .owner = "o2",
					 .token = 2,
					 .forced = true,
					 .revoke_session = SESS});
	assert_int_equal(r.status, STORE_OK);
	struct standin_stats st;
	standin_stats(sd, &st);
	assert_int_equal(st.by_op[DDB_UPDATE_ITEM], 4); /* CREATE, 2 BEATs, the acquire */
	assert_int_equal(st.by_op[DDB_BATCH_GET_ITEM], 1);
	assert_int_equal(st.by_op[DDB_TRANSACT_WRITE_ITEMS], 2);
	assert_int_equal(st.writes, 6);
	assert_int_equal(st.reads, 1);
	assert_int_equal(st.write_items, 4 + 2 + 3);
	assert_int_equal(st.read_items, 2);
	assert_int_equal(st.beats, 3);
	assert_int_equal(st.beats_timed, 2);
	assert_int_equal(st.renewals_timed, 0);
	assert_int_equal(st.errors, 0);
	size_t n = 0;
	int64_t *iv = standin_beat_intervals(sd, &n);
	assert_int_equal(n, 2);
	assert_true(iv[0] >= 200000 && iv[0] < 390000);
	assert_true(iv[1] >= 400000 && iv[1] < 590000);
	free(iv);
	/* refused beats: counted, not timed */
	assert_int_equal(sess_do(s, (struct store_session_req){.op = STORE_SESSION_KILL,
							       .seen_rvn = "b2",
							       .by = "w"})
				 .status,
			 STORE_OK);
	assert_int_equal(sess_do(s, beat).status, STORE_REFUSED);
	standin_stats(sd, &st);
	assert_int_equal(st.beat_refused, 1);
	assert_int_equal(st.beats_timed, 2);
	standin_reset(sd);
	assert_null(standin_beat_intervals(sd, &n));
	assert_int_equal(n, 0);
	standin_record(sd, false);
	store_free(s);
}

static void on_page(void *arg)
{
	*(bool *)arg = true;
}

/* A Scan's pages (LOCK.LIST TABLE): every lock item once, pages of 2
 * following LastEvaluatedKey. */
static void scan_pages(void **state)
{
	struct store *s = make(NULL);
	assert_non_null(s);
	const char *names[] = {"scan-a", "scan-b", "scan-c", "scan-d", "scan-e"};
	int seen[5] = {0};
	for (int i = 0; i < 5; i++)
		assert_int_equal(do_req(s, (struct store_req){.op = STORE_ACQUIRE,
							      .name = names[i],
							      .owner = "o",
							      .rvn = "r",
							      .lease_ms = 30000})
					 .status,
				 STORE_OK);
	struct store_scan_entry e[2];
	struct store_scan_result page = {.entries = e};
	char cursor[STORE_CURSOR_MAX + 1] = "";
	int pages = 0;
	do {
		bool done = false;
		assert_non_null(store_scan(s, cursor, 2, &page, on_page, &done));
		run_until(&done);
		assert_true(done);
		assert_int_equal(page.status, STORE_OK);
		assert_true(page.count <= 2);
		for (unsigned i = 0; i < page.count; i++)
			for (int k = 0; k < 5; k++)
				seen[k] += strcmp(e[i].name, names[k]) == 0;
		snprintf(cursor, sizeof cursor, "%s", page.cursor);
		assert_true(++pages < 10000);
	} while (cursor[0] != '\0');
	for (int k = 0; k < 5; k++)
		assert_int_equal(seen[k], 1);
	assert_true(pages >= 3);
	store_free(s);
}

int main(void)
{
	base = event_base_new();
	clk = base ? clock_real_new(base) : NULL;
	struct standin_options o = {.min_ms = 0, .max_ms = 0};
	sd = clk ? standin_new(base, 0, &o, url, sizeof url) : NULL;
	if (!sd)
		return 1;
	const struct store_factory f = {"stand-in", make, run, destroy, NULL, NULL, false};
	int failed = store_contract_session_run(&f);
	failed += store_contract_slock_run(&f);
	failed += store_contract_revoke_run(&f);
	failed += store_contract_batch_run(&f);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_and_beat_intervals),
		cmocka_unit_test(scan_pages),
	};
	failed += cmocka_run_group_tests_name("stand-in only", tests, NULL, NULL);
	struct standin_stats st;
	standin_stats(sd, &st);
	if (st.errors)
		print_error("the stand-in refused %llu requests as malformed\n",
			    (unsigned long long)st.errors);
	standin_free(sd);
	clock_free(clk);
	event_base_free(base);
	return failed;
}
