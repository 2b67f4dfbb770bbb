/*
 * it_fair_moto: Fair across replicas with real gateways on one moto table
 * (core/locktable.c, "Fair across replicas"). Clients split over 1, 2 and 3
 * gateways run an acquire/release loop on one lock (tests/support/
 * fairloop.h: forked hiredis clients); every client must acquire, the
 * longest wait stay under the bound, and the store requests of all
 * gateways (INFO leases) stay at or below 1.5 per handover; on one gateway
 * the loop is FIFO at one request per hand-off. LEADER.CAMPAIGN in a
 * resign loop likewise. A crashed (SIGKILL) or stopped (SIGSTOP) holder's
 * gateway is taken over within the usual 2L/3..4L/3 although the waiter
 * announced itself.
 *
 * These runs race conditional writes: they run on the moto of
 * tests/run-integration.sh, which applies one request at a time
 * (tests/moto_serial.py); without it (LG_MOTO unset) every test is
 * skipped. Figures are printed ("# ..."); timing bounds carry slack for
 * shared machines.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/fairloop.h"
#include "tests/support/gw.h"
#include "tests/support/rawresp.h"

#define LEASE 3000
#define POLL  (LEASE / 3)
#define HOLD  5
#define SLACK 1500 /* a shared machine with two CPUs runs moto and all */

static struct gw gws[3];

static void need_moto(void)
{
	if (!gw_have_moto())
		skip();
}

static void start_gateways(int n, int *ports)
{
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	for (int i = 0; i < n; i++) {
		char label[16];
		snprintf(label, sizeof(label), "gw-%c", 'a' + i);
		gw_start(&gws[i], table, "--holder-label", label, "--log-level", "info", NULL);
		ports[i] = gws[i].port;
	}
}

static void stop_gateways(int n)
{
	for (int i = 0; i < n; i++)
		if (gws[i].pid != 0)
			assert_int_equal(gw_signal(&gws[i], SIGTERM), 0);
}

/* The bound of core/locktable.c: (R - 1) turns of others, each a local
 * round and at least half a poll interval plus a poll interval for the
 * next to read the release, and two poll intervals; rounds here are
 * clients-per-gateway hand-offs of HOLD plus a moto round trip or two. */
static long long bound_ms(int replicas, int per_gw)
{
	long long round = per_gw * (HOLD + 40);
	return (replicas - 1) * (POLL / 2 + round + POLL) + 2 * POLL;
}

static void loop_across(int ngw, int clients, bool campaign, const char *what)
{
	need_moto();
	int ports[3];
	start_gateways(ngw, ports);
	struct fl_config c = {
		.ports = ports,
		.ngw = ngw,
		.clients = clients,
		.seconds = 15,
		.lease_ms = LEASE,
		.hold_ms = HOLD,
		.wait_ms = 30000,
		.name = campaign ? "fair-leader" : "fair",
		.campaign = campaign,
	};
	struct fl_result r;
	assert_true(fl_run(&c, &r));
	fl_print(what, &c, &r);
	long long bound = bound_ms(ngw, clients / ngw) + SLACK;
	printf("# %s: bound %lld ms (poll %d ms)\n", what, bound, POLL);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.timeouts, 0);
	for (int i = 0; i < clients; i++)
		if (r.acquisitions[i] == 0)
			fail_msg("client %d (gateway %d) never acquired", i, i % ngw);
	if (r.max_wait > bound)
		fail_msg("longest wait %lld ms, bound %lld ms", r.max_wait, bound);
	assert_true(r.requests_per_handover <= 1.5);
	if (ngw == 1) {
		/* FIFO: every client its turn in each round; one request per
		 * hand-off (the loop's last release aside), no announcement */
		assert_true(r.max_acq - r.min_acq <= 1);
		assert_true(r.requests <= r.total + 2);
		assert_int_equal(r.announces, 0);
	}
	stop_gateways(ngw);
}

static void test_one_gateway_fifo(void **state)
{
	loop_across(1, 4, false, "LOCK loop");
}

static void test_two_gateways(void **state)
{
	loop_across(2, 6, false, "LOCK loop");
}

static void test_three_gateways(void **state)
{
	loop_across(3, 6, false, "LOCK loop");
}

static void test_campaign_two_gateways(void **state)
{
	loop_across(2, 4, true, "LEADER loop");
}

/* A holder's gateway killed (SIGKILL) or stopped (SIGSTOP) while a waiter
 * on the other has announced itself: the takeover comes a lease after the
 * waiter first read the holder's last rvn, as without the announcement:
 * between 2L/3 and 4L/3 (plus slack) after the holder's gateway stopped. */
static void takeover_after(int sig)
{
	need_moto();
	int ports[2];
	start_gateways(2, ports);
	redisContext *a = gw_connect(&gws[0]);
	redisReply *rep = gw_cmd(a, "LOCK.ACQUIRE k %d", LEASE);
	assert_int_equal(rep->type, REDIS_REPLY_INTEGER);
	long long t = rep->integer;
	freeReplyObject(rep);
	struct raw *w = raw_open(gws[1].port);
	raw_send(w, "LOCK.ACQUIRE k 3000 WAIT 0");
	assert_true(raw_quiet(w, 2 * POLL + 300)); /* announced after a poll interval */
	assert_int_equal(fl_info(gws[1].port, "store_requests_announce"), 1);
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&gws[0], sig), sig == SIGKILL ? 128 + SIGKILL : 0);
	long long got = raw_int_of(raw_reply(w, 2 * LEASE + SLACK));
	long long ms = gw_now_ms() - t0;
	printf("# takeover after %s with an announced waiter (lease %d ms): %lld ms\n",
	       sig == SIGKILL ? "SIGKILL" : "SIGSTOP", LEASE, ms);
	assert_int_equal(got, t + 1);
	assert_true(ms >= 2 * LEASE / 3 - 100);
	assert_true(ms <= 4 * LEASE / 3 + SLACK);
	/* the takeover removed the announcement: nothing is left to yield to */
	assert_int_equal(fl_info(gws[1].port, "store_requests_announce"), 1);
	raw_close(w);
	redisFree(a);
	if (sig == SIGSTOP) {
		assert_int_equal(gw_signal(&gws[0], SIGCONT), 0);
		assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
	}
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

static void test_sigkill_takeover_unchanged(void **state)
{
	takeover_after(SIGKILL);
}

static void test_sigstop_takeover_unchanged(void **state)
{
	takeover_after(SIGSTOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_one_gateway_fifo, gw_teardown),
		cmocka_unit_test_teardown(test_two_gateways, gw_teardown),
		cmocka_unit_test_teardown(test_three_gateways, gw_teardown),
		cmocka_unit_test_teardown(test_campaign_two_gateways, gw_teardown),
		cmocka_unit_test_teardown(test_sigkill_takeover_unchanged, gw_teardown),
		cmocka_unit_test_teardown(test_sigstop_takeover_unchanged, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
