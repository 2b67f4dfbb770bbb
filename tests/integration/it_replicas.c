/*
 * it_replicas: two gateways on one moto table, as replicas behind a load
 * balancer where a pooled client's commands land on either: a lease is
 * renewed and released by (name, token) on the replica that does not hold
 * it, which serves its own waiter; the holder's session then finds it
 * ended as released (LOCK.RELEASE answers 0, no loss is pushed);
 * LOCK.STATE reads the same on both; LOCK.FORCE-RELEASE on one ends a
 * lease held on the other (-LOST forced there); a detached lease taken on
 * one is renewed from the other; LOCK.LIST shows one replica's sessions,
 * LOCK.LIST TABLE the whole table. Without LG_MOTO every test fails.
 *
 * Lower time bounds are the rules' own less a timer's lateness, upper
 * bounds add SLACK_MS for a shared machine; measured times are printed.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

enum { LEASE = 3000, POLL = LEASE / 3, LATE_MS = 50, SLACK_MS = 1500 };

/* Two gateways on one new moto table, labelled gw-a and gw-b. */
static void start_two(struct gw *a, struct gw *b)
{
	char table[64];
	assert_true(gw_have_moto());
	snprintf(table, sizeof(table), "%s", gw_new_table());
	gw_start(a, table, "--holder-label", "gw-a", NULL);
	gw_start(b, table, "--holder-label", "gw-b", NULL);
}

static void stop_two(struct gw *a, struct gw *b)
{
	assert_int_equal(gw_signal(a, SIGTERM), 0);
	assert_int_equal(gw_signal(b, SIGTERM), 0);
}

static struct raw *r3_open(const struct gw *g)
{
	struct raw *r = raw_open(g->port);
	raw_send(r, "HELLO 3");
	assert_non_null(strstr(raw_reply(r, 5000), "\"proto\": :3"));
	return r;
}

/* LOCK.STATE as text, without its "mine" pair (which is per session). */
static void state_text(redisContext *c, const char *name, char *out, size_t cap)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 12);
	size_t n = 0;
	for (size_t i = 0; i < 8; i++) {
		const redisReply *e = r->element[i];
		int w = e->type == REDIS_REPLY_INTEGER
				? snprintf(out + n, cap - n, "%lld ", e->integer)
			: e->type == REDIS_REPLY_NIL ? snprintf(out + n, cap - n, "nil ")
						     : snprintf(out + n, cap - n, "%s ", e->str);
		assert_true(w > 0 && (size_t)w < cap - n);
		n += (size_t)w;
	}
	freeReplyObject(r);
}

static void expect_same_state(redisContext *a, redisContext *b, const char *name, const char *want)
{
	char sa[512], sb[512];
	state_text(a, name, sa, sizeof(sa));
	state_text(b, name, sb, sizeof(sb));
	assert_string_equal(sa, want);
	assert_string_equal(sb, want);
}

/* A lease held on A is renewed and released by (name, token) on B; B's
 * waiter is served at once; A's session then has no such lease: 0, not
 * -LOST, and no push. */
static void test_token_on_the_other_replica(void **state)
{
	struct gw ga, gb;
	char want[256], cmd[64];
	start_two(&ga, &gb);
	struct raw *ha = r3_open(&ga);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb);
	long long t = raw_int(ha, "LOCK.ACQUIRE x 3000");
	snprintf(want, sizeof(want), "held 1 holder gw-a lease-ms 3000 fencing-token %lld ", t);
	expect_same_state(ca, cb, "x", want);
	lh_expect_state(cb, "x", 1, "gw-a", LEASE, t, 0);

	gw_expect_int(cb, 1, "LOCK.RENEW x %lld", t);
	gw_expect_int(cb, 0, "LOCK.RENEW x %lld", t + 1);
	gw_expect_int(cb, 0, "LOCK.RELEASE x %lld", t + 1);
	expect_same_state(ca, cb, "x", want);
	struct raw *w = raw_open(gb.port);
	raw_send(w, "LOCK.ACQUIRE x 3000 WAIT 0");
	assert_true(raw_quiet(w, 300));

	long long t0 = gw_now_ms();
	gw_expect_int(cb, 1, "LOCK.RELEASE x %lld", t);
	assert_int_equal(raw_int_of(raw_reply(w, POLL + SLACK_MS)), t + 1);
	printf("# B's waiter served %lld ms after B released A's lease\n", gw_now_ms() - t0);
	gw_expect_int(cb, 0, "LOCK.RELEASE x %lld", t); /* once */
	snprintf(want, sizeof(want), "held 1 holder gw-b lease-ms 3000 fencing-token %lld ", t + 1);
	expect_same_state(ca, cb, "x", want);

	/* A learns of it at its next renewal, within a third of the lease */
	assert_true(raw_quiet(ha, POLL + 500));
	raw_expect(ha, "LOCK.RELEASE x", ":0");
	raw_expect(ha, "LOCK.RENEW x", ":0");
	snprintf(cmd, sizeof(cmd), "LOCK.RELEASE x %lld", t);
	raw_expect(ha, cmd, ":0");
	assert_true(raw_quiet(ha, 200));
	raw_close(ha);
	raw_close(w);
	redisFree(ca);
	redisFree(cb);
	stop_two(&ga, &gb);
}

/* The holder's session asks at once, before its replica's next renewal:
 * still no such lease, not a loss. */
static void test_release_seen_before_renewal(void **state)
{
	struct gw ga, gb;
	start_two(&ga, &gb);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb);
	long long t = lh_acquire(ca, "y", LEASE);
	gw_expect_int(cb, 1, "LOCK.RELEASE y %lld", t);
	gw_expect_int(ca, 0, "LOCK.RENEW y");
	gw_expect_int(ca, 0, "LOCK.RELEASE y");
	assert_int_equal(lh_acquire(ca, "y", LEASE), t + 1);
	redisFree(ca);
	redisFree(cb);
	stop_two(&ga, &gb);
}

/* LOCK.FORCE-RELEASE on B of leases held on A: a RESP3 holder is pushed
 * the loss within a third of the lease, and every holder's next command
 * about it answers -LOST forced. */
static void test_force_release_across(void **state)
{
	struct gw ga, gb;
	char want[128];
	start_two(&ga, &gb);
	struct raw *ha = r3_open(&ga);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb);
	long long t = raw_int(ha, "LOCK.ACQUIRE f 3000");
	lh_acquire(ca, "f2", LEASE);

	long long t0 = gw_now_ms();
	gw_expect_int(cb, 1, "LOCK.FORCE-RELEASE f");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"f\", :%lld, \"forced\"]", t);
	assert_string_equal(raw_reply(ha, POLL + SLACK_MS), want);
	printf("# the holder on A told of B's forced release after %lld ms\n", gw_now_ms() - t0);
	raw_expect(ha, "LOCK.RENEW f", "-LOST forced");
	raw_expect(ha, "LOCK.RENEW f", ":0");
	assert_int_equal(lh_acquire(cb, "f", LEASE), t + 1);

	gw_expect_int(cb, 1, "LOCK.FORCE-RELEASE f2");
	gw_expect_int(cb, 0, "LOCK.FORCE-RELEASE f2");
	gw_expect_err(ca, "LOST forced", "LOCK.RENEW f2"); /* asked at once */
	gw_expect_int(ca, 0, "LOCK.RELEASE f2");
	raw_close(ha);
	redisFree(ca);
	redisFree(cb);
	stop_two(&ga, &gb);
}

/* A detached lease taken on A (whose connection then closes) is renewed
 * from B by token; B's waiter gets it a lease after the last renewal. */
static void test_detached_renewed_across(void **state)
{
	enum { DLEASE = 2000, DPOLL = DLEASE / 3 };
	struct gw ga, gb;
	start_two(&ga, &gb);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb);
	redisReply *r = gw_cmd(ca, "LOCK.ACQUIRE d %d DETACH", DLEASE);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t = r->integer;
	freeReplyObject(r);
	redisFree(ca);
	r = gw_cmd(cb, "LOCK.STATE d");
	assert_string_equal(r->element[9]->str, "detached");
	freeReplyObject(r);

	struct raw *w = raw_open(gb.port);
	raw_send(w, "LOCK.ACQUIRE d 2000 WAIT 0");
	long long last = gw_now_ms();
	for (int i = 0; i < 7; i++) { /* 4.2 s: two leases */
		assert_true(raw_quiet(w, 600));
		gw_expect_int(cb, 1, "LOCK.RENEW d %lld", t);
		last = gw_now_ms();
	}
	long long got = raw_int_of(raw_reply(w, DLEASE + 2 * DPOLL + SLACK_MS));
	long long ms = gw_now_ms() - last;
	printf("# B's waiter took the detached lease %lld ms after its last renewal (lease %d)\n",
	       ms, DLEASE);
	assert_int_equal(got, t + 1);
	assert_true(ms >= DLEASE - LATE_MS);
	raw_close(w);
	redisFree(cb);
	stop_two(&ga, &gb);
}

static size_t count_of(redisContext *c, const char *line)
{
	redisReply *r = gw_cmd(c, line);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	size_t n = r->elements;
	freeReplyObject(r);
	return n;
}

/* LOCK.LIST is one replica's; LOCK.LIST TABLE pages the table (a Scan page
 * of COUNT items each) and shows the other replica's leases, detached too. */
static void test_list_and_table_across(void **state)
{
	struct gw ga, gb;
	char line[4400], cursor[4200] = "0";
	start_two(&ga, &gb);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb);
	lh_acquire(ca, "la", LEASE);
	lh_acquire(cb, "lb", LEASE);
	redisReply *r = gw_cmd(ca, "LOCK.ACQUIRE ld 3000 DETACH");
	freeReplyObject(r);
	assert_int_equal(count_of(ca, "LOCK.LIST"), 1);
	assert_int_equal(count_of(cb, "LOCK.LIST"), 1);

	int seen = 0, pages = 0;
	do {
		snprintf(line, sizeof(line), "LOCK.LIST TABLE CURSOR %s COUNT 1", cursor);
		r = gw_cmd(cb, line);
		assert_int_equal(r->type, REDIS_REPLY_ARRAY);
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		const redisReply *page = r->element[1];
		assert_true(page->elements <= 1);
		for (size_t i = 0; i < page->elements; i++) {
			const redisReply *e = page->element[i];
			const char *name = e->element[1]->str;
			long long held = e->element[3]->integer, detached = e->element[11]->integer;
			assert_int_equal(held, 1);
			if (strcmp(name, "la") == 0) {
				assert_string_equal(e->element[5]->str, "gw-a");
				assert_int_equal(detached, 0);
				seen |= 1;
			} else if (strcmp(name, "lb") == 0) {
				assert_string_equal(e->element[5]->str, "gw-b");
				seen |= 2;
			} else {
				assert_string_equal(name, "ld");
				assert_int_equal(detached, 1);
				seen |= 4;
			}
		}
		freeReplyObject(r);
		assert_true(++pages < 20);
	} while (strcmp(cursor, "0") != 0);
	printf("# LOCK.LIST TABLE COUNT 1 on moto: %d pages\n", pages);
	assert_int_equal(seen, 7);
	assert_true(pages >= 3);
	redisFree(ca);
	redisFree(cb);
	stop_two(&ga, &gb);
}

#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_token_on_the_other_replica), T(test_release_seen_before_renewal),
		T(test_force_release_across),	    T(test_detached_renewed_across),
		T(test_list_and_table_across),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("replicas on one table", tests, NULL, NULL);
}
