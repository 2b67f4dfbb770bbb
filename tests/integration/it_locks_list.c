/*
 * it_locks_list: LOCK.LIST (this replica's leases, terms and waits) and
 * LOCK.LIST TABLE (pages of the table's lock items, as SCAN pages) on one
 * gateway of the embedded store: entries and their fields in RESP2 (flat
 * pairs) and RESP3 (maps), MATCH and COUNT, the session labels of Redis
 * and PostgreSQL sessions, paging to the end, argument errors. Two
 * gateways on one table: it_replicas.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

static const char *const list_keys[] = {"name",	    "kind",   "state",	"token",
					"lease-ms", "holder", "session"};
static const char *const table_keys[] = {"name",  "held",     "holder", "lease-ms",
					 "token", "detached", "shared", "heartbeat"};

/* An entry of a RESP2 listing: flat pairs with keys in their order. */
static void check_keys(const redisReply *e, const char *const *keys, size_t n)
{
	assert_int_equal(e->type, REDIS_REPLY_ARRAY);
	assert_int_equal(e->elements, 2 * n);
	for (size_t k = 0; k < n; k++)
		assert_string_equal(e->element[2 * k]->str, keys[k]);
}

/* The value of key in a flat-pairs entry. */
static const redisReply *field(const redisReply *e, const char *key)
{
	for (size_t k = 0; k + 1 < e->elements; k += 2)
		if (strcmp(e->element[k]->str, key) == 0)
			return e->element[k + 1];
	fail_msg("no field %s", key);
	return NULL;
}

static void expect_str(const redisReply *v, const char *want)
{
	if (want == NULL) {
		assert_int_equal(v->type, REDIS_REPLY_NIL);
		return;
	}
	assert_int_equal(v->type, REDIS_REPLY_STRING);
	assert_string_equal(v->str, want);
}

static void expect_int_or_nil(const redisReply *v, long long want)
{
	if (want == 0) {
		assert_int_equal(v->type, REDIS_REPLY_NIL);
		return;
	}
	assert_int_equal(v->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v->integer, want);
}

/* Finds the LOCK.LIST entry of (name, state) in list and checks it all. */
static void expect_entry(const redisReply *list, const char *name, const char *kind,
			 const char *state, long long token, long long lease_ms, const char *holder,
			 const char *session)
{
	for (size_t i = 0; i < list->elements; i++) {
		const redisReply *e = list->element[i];
		check_keys(e, list_keys, 7);
		if (strcmp(field(e, "name")->str, name) != 0 ||
		    strcmp(field(e, "state")->str, state) != 0)
			continue;
		expect_str(field(e, "kind"), kind);
		expect_int_or_nil(field(e, "token"), token);
		expect_int_or_nil(field(e, "lease-ms"), lease_ms);
		expect_str(field(e, "holder"), holder);
		expect_str(field(e, "session"), session);
		return;
	}
	fail_msg("LOCK.LIST has no entry %s %s", name, state);
}

/* LOCK.LIST with args split on spaces (hiredis would send a %s whole). */
static redisReply *list(redisContext *c, const char *args)
{
	char line[256];
	snprintf(line, sizeof(line), "LOCK.LIST %s", args);
	redisReply *r = gw_cmd(c, line);
	if (r->type != REDIS_REPLY_ARRAY)
		fail_msg("LOCK.LIST %s: type %d %s", args, r->type, r->str ? r->str : "");
	return r;
}

static size_t list_count(redisContext *c, const char *args)
{
	redisReply *r = list(c, args);
	size_t n = r->elements;
	freeReplyObject(r);
	return n;
}

static long long client_id(redisContext *c)
{
	redisReply *r = gw_cmd(c, "CLIENT ID");
	long long id = r->integer;
	freeReplyObject(r);
	return id;
}

/* LOCK.LIST in RESP2: every lease, term and wait of the replica's sessions,
 * each with its session; MATCH as a glob, COUNT as a bound. */
static void test_list_resp2(void **state)
{
	struct gw g;
	char sa[32], sl[32], sw[32];
	gw_start(&g, NULL, "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *l = gw_connect(&g), *o = gw_connect(&g);
	snprintf(sa, sizeof(sa), "redis:%lld", client_id(a));
	snprintf(sl, sizeof(sl), "redis:%lld", client_id(l));
	redisReply *r = list(o, "");
	assert_int_equal(r->elements, 0);
	freeReplyObject(r);

	redisReply *x = gw_cmd(a, "LOCK.ACQUIRE job:a 5000 HOLDER h1");
	long long ta = x->integer;
	freeReplyObject(x);
	long long tb = lh_acquire(a, "job:b", 6000);
	x = gw_cmd(l, "LEADER.CAMPAIGN lead:x 4000");
	long long tl = x->integer;
	freeReplyObject(x);
	struct raw *w = raw_open(g.port);
	snprintf(sw, sizeof(sw), "redis:%lld", raw_int(w, "CLIENT ID"));
	raw_send(w, "LOCK.ACQUIRE job:a 5000 WAIT 0");
	assert_true(raw_quiet(w, 200));

	r = list(o, "");
	assert_int_equal(r->elements, 4);
	expect_entry(r, "job:a", "lock", "held", ta, 5000, "h1", sa);
	expect_entry(r, "job:b", "lock", "held", tb, 6000, "gw-a", sa);
	expect_entry(r, "lead:x", "leader", "held", tl, 4000, "gw-a", sl);
	expect_entry(r, "job:a", "lock", "waiting", 0, 0, NULL, sw);
	freeReplyObject(r);

	assert_int_equal(list_count(o, "MATCH job:*"), 3);
	assert_int_equal(list_count(o, "match lead:?"), 1);
	assert_int_equal(list_count(o, "MATCH job:[b-z]"), 1);
	assert_int_equal(list_count(o, "MATCH nothing*"), 0);
	assert_int_equal(list_count(o, "COUNT 2"), 2);
	assert_int_equal(list_count(o, "MATCH job:* COUNT 1"), 1);
	assert_int_equal(list_count(o, "COUNT 1000 MATCH *"), 4);

	/* a's close releases its two; the waiter is handed job:a */
	redisFree(a);
	long long tw = raw_int_of(raw_reply(w, 3000));
	r = list(o, "MATCH job:*");
	assert_int_equal(r->elements, 1);
	expect_entry(r, "job:a", "lock", "held", tw, 5000, "gw-a", sw);
	freeReplyObject(r);

	const char *bad[] = {"COUNT 0", "COUNT -1", "COUNT x",	"COUNT 100001",
			     "MATCH",	"BOGUS",    "CURSOR 0", "MATCH a COUNT"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "LOCK.LIST %s", bad[i]);
		gw_expect_err(o, "ERR ", line);
	}
	gw_expect_err(o, "ERR syntax error. Usage: LOCK.LIST [MATCH pattern] [COUNT n]",
		      "LOCK.LIST BOGUS");
	raw_close(w);
	redisFree(l);
	redisFree(o);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.LIST in RESP3: an array of maps. */
static void test_list_resp3(void **state)
{
	struct gw g;
	char want[512];
	gw_start(&g, NULL, "--holder-label", "gw-a", NULL);
	struct raw *a = raw_open(g.port);
	raw_send(a, "HELLO 3");
	assert_non_null(strstr(raw_reply(a, 5000), "\"proto\": :3"));
	long long id = raw_int(a, "CLIENT ID");
	long long t = raw_int(a, "LOCK.ACQUIRE r3 3000 HOLDER w-1");
	raw_int(a, "LOCK.ACQUIRE other 3000");
	snprintf(want, sizeof(want),
		 "[{\"name\": \"r3\", \"kind\": \"lock\", \"state\": \"held\", \"token\": :%lld, "
		 "\"lease-ms\": :3000, \"holder\": \"w-1\", \"session\": \"redis:%lld\"}]",
		 t, id);
	raw_expect(a, "LOCK.LIST MATCH r?", want);
	raw_expect(a, "LOCK.LIST MATCH x*", "[]");
	raw_close(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* A PostgreSQL session's locks show as "pg:<backend pid>", the pid libpq
 * was given for its cancel key. */
static void test_list_pg_session(void **state)
{
	struct gw g;
	struct gw_port pg = gw_free_port_arg();
	char ci[160], want[64];
	gw_start(&g, NULL, "--pg-port", pg.arg, NULL);
	snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%d user=u dbname=locks connect_timeout=5",
		 pg.n);
	PGconn *p = PQconnectdb(ci);
	if (PQstatus(p) != CONNECTION_OK)
		fail_msg("cannot connect: %s", PQerrorMessage(p));
	PGresult *res = PQexec(p, "SELECT pg_advisory_lock(42)");
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	PQclear(res);
	redisContext *o = gw_connect(&g);
	redisReply *r = list(o, "MATCH pg:*");
	assert_int_equal(r->elements, 1);
	snprintf(want, sizeof(want), "pg:%d", PQbackendPID(p));
	expect_str(field(r->element[0], "name"), "pg:locks:42");
	expect_str(field(r->element[0], "session"), want);
	freeReplyObject(r);
	PQfinish(p);
	redisFree(o);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Pages of LOCK.LIST TABLE with COUNT n until the cursor is "0": every
 * lock item once (in *items, which the caller frees one by one). */
static size_t scan_all(redisContext *c, const char *opts, redisReply **items, size_t cap,
		       int *pages)
{
	char cursor[4200] = "0", line[4400];
	size_t n = 0;
	*pages = 0;
	do {
		snprintf(line, sizeof(line), "LOCK.LIST TABLE CURSOR %s %s", cursor, opts);
		redisReply *r = gw_cmd(c, line);
		if (r->type != REDIS_REPLY_ARRAY)
			fail_msg("LOCK.LIST TABLE: %s", r->str ? r->str : "?");
		assert_int_equal(r->elements, 2);
		assert_int_equal(r->element[0]->type, REDIS_REPLY_STRING);
		assert_int_equal(r->element[1]->type, REDIS_REPLY_ARRAY);
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		redisReply *page = r->element[1];
		for (size_t i = 0; i < page->elements; i++) {
			check_keys(page->element[i], table_keys,
				   sizeof(table_keys) / sizeof(table_keys[0]));
			assert_true(n < cap);
			items[n++] = page->element[i];
			page->element[i] = NULL;
		}
		page->elements = 0;
		freeReplyObject(r);
		(*pages)++;
		assert_true(*pages < 100);
	} while (strcmp(cursor, "0") != 0);
	return n;
}

static const redisReply *item_of(redisReply **items, size_t n, const char *name)
{
	const redisReply *found = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(field(items[i], "name")->str, name) == 0) {
			assert_null(found); /* once */
			found = items[i];
		}
	if (found == NULL)
		fail_msg("no item %s", name);
	return found;
}

static void expect_item(redisReply **items, size_t n, const char *name, long long held,
			const char *holder, long long lease_ms, long long token, long long detached)
{
	const redisReply *e = item_of(items, n, name);
	assert_int_equal(field(e, "held")->integer, held);
	expect_str(field(e, "holder"), holder);
	assert_int_equal(field(e, "lease-ms")->integer, lease_ms);
	assert_int_equal(field(e, "token")->integer, token);
	assert_int_equal(field(e, "detached")->integer, detached);
}

/* LOCK.LIST TABLE pages through the table's items (held, free, detached)
 * to cursor "0"; MATCH filters them. */
static void test_list_table_pages(void **state)
{
	struct gw g;
	redisReply *items[64];
	int pages;
	gw_start(&g, NULL, "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *o = gw_connect(&g);
	long long t[6];
	const char *names[] = {"tb1", "tb2", "tb3", "tb4", "tb5"};
	for (int i = 0; i < 5; i++)
		t[i] = lh_acquire(a, names[i], 5000);
	gw_expect_int(a, 1, "LOCK.RELEASE tb4");
	gw_expect_int(a, 1, "LOCK.RELEASE tb5");
	redisReply *r = gw_cmd(a, "LOCK.ACQUIRE tb6 4000 DETACH HOLDER d-1");
	t[5] = r->integer;
	freeReplyObject(r);

	size_t n = scan_all(o, "COUNT 2", items, 64, &pages);
	printf("# 6 items in %d pages of 2\n", pages);
	assert_int_equal(n, 6);
	assert_true(pages >= 3);
	expect_item(items, n, "tb1", 1, "gw-a", 5000, t[0], 0);
	expect_item(items, n, "tb3", 1, "gw-a", 5000, t[2], 0);
	expect_item(items, n, "tb4", 0, NULL, 0, t[3], 0);
	expect_item(items, n, "tb6", 1, "d-1", 4000, t[5], 1);
	for (size_t i = 0; i < n; i++)
		freeReplyObject(items[i]);

	n = scan_all(o, "MATCH tb[12] COUNT 1000", items, 64, &pages);
	assert_int_equal(pages, 1);
	assert_int_equal(n, 2);
	expect_item(items, n, "tb2", 1, "gw-a", 5000, t[1], 0);
	for (size_t i = 0; i < n; i++)
		freeReplyObject(items[i]);

	/* without CURSOR: the first page; COUNT defaults to 100 */
	r = gw_cmd(o, "LOCK.LIST TABLE");
	assert_string_equal(r->element[0]->str, "0");
	assert_int_equal(r->element[1]->elements, 6);
	freeReplyObject(r);

	const char *bad[] = {"COUNT 0", "COUNT 1001", "MATCH",
			     "CURSOR",	"BOGUS 1",    "CURSOR not-a-cursor"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "LOCK.LIST TABLE %s", bad[i]);
		gw_expect_err(o, "ERR ", line);
	}
	gw_expect_err(o, "ERR invalid cursor", "LOCK.LIST TABLE CURSOR %s", "a b");
	redisFree(a);
	redisFree(o);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.LIST TABLE in RESP3: [cursor, [maps]]. */
static void test_list_table_resp3(void **state)
{
	struct gw g;
	char want[512];
	gw_start(&g, NULL, "--holder-label", "gw-a", NULL);
	struct raw *a = raw_open(g.port);
	raw_send(a, "HELLO 3");
	assert_non_null(strstr(raw_reply(a, 5000), "\"proto\": :3"));
	long long t = raw_int(a, "LOCK.ACQUIRE m1 2000");
	raw_int(a, "LOCK.ACQUIRE m2 2000");
	snprintf(want, sizeof(want),
		 "[\"0\", [{\"name\": \"m1\", \"held\": :1, \"holder\": \"gw-a\", \"lease-ms\": "
		 ":2000, \"token\": :%lld, \"detached\": :0, \"shared\": :0, \"heartbeat\": "
		 "\"lease\"}]]",
		 t);
	raw_expect(a, "LOCK.LIST TABLE MATCH m1", want);
	raw_expect(a, "LOCK.LIST TABLE MATCH x*", "[\"0\", []]");
	raw_close(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_list_resp2),	  T(test_list_resp3),	    T(test_list_pg_session),
		T(test_list_table_pages), T(test_list_table_resp3),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("LOCK.LIST", tests, NULL, NULL);
}
