/*
 * it_leader_pair: LEADER.CAMPAIGN / RESIGN / WATCH with two gateways on one
 * moto table (it_leader is one gateway): watchers across replicas, the
 * leader handed over by SIGKILL, SIGTERM, RESIGN or a disconnect on the
 * other replica, a follower campaigning in a WAIT loop, the leader's
 * gateway SIGSTOPped past its lease (RESP3 push, RESP2 -LOST), and what an
 * idle follower costs in requests. Without LG_MOTO every test fails.
 *
 * Lower time bounds are the rules' own (less a timer's lateness); upper
 * bounds add SLACK_MS for a shared machine. The measured handover times
 * are printed as "handover <how> <where>: N ms".
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/leaderhelp.h"
#include "tests/support/rawresp.h"

/* Lateness allowed to a gateway's timer on a loaded machine (a heartbeat
 * sent after its due time), and the longest round trip of one read. */
#define TIMER_LATE_MS 50
#define READ_RTT_MS   200

/* The gateways of the running test (gw_teardown kills those a failed
 * assertion left behind). */
static struct gw gws[2];

/* Two gateways on one new moto table. */
static void start_two(struct gw *a, struct gw *b)
{
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	gw_start(a, table, NULL);
	gw_start(b, table, NULL);
}

/* A field of INFO leases. */
static long long info_field(redisContext *c, const char *field)
{
	redisReply *r = gw_cmd(c, "INFO leases");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	char key[64];
	snprintf(key, sizeof(key), "\r\n%s:", field);
	const char *at = strstr(r->str, key);
	if (at == NULL)
		fail_msg("INFO leases has no %s", field);
	long long v = atoll(at + strlen(key));
	freeReplyObject(r);
	return v;
}

/* A RESP3 connection (hiredis 0.14 has no RESP3) to g, its replies
 * rendered plain (see rawresp.h): "%[holder b fencing-token :7 ...]". */
static struct raw *r3_open(const struct gw *g)
{
	struct raw *c = raw_open(g->port);
	c->plain = true;
	raw_send(c, "HELLO 3");
	assert_non_null(strstr(raw_reply(c, 3000), "proto :3"));
	return c;
}

/* --- watchers --- */

/* Changes made through the other replica reach a watcher within one poll
 * interval. */
static void t_watch_across(void **state)
{
	ldh_setup_param(state);
	start_two(&gws[0], &gws[1]);
	struct watcher w;
	long long tok[3];
	const char *who[3] = {"b1", "a1", "b2"};
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]), *b2 = gw_connect(&gws[1]);
	ldh_watcher_start(&w, &gws[0], "wx");
	long long worst = 0;

	long long t0 = gw_now_ms();
	gw_send(b, "LEADER.CAMPAIGN wx %d HOLDER b1", LEASE_MS);
	tok[0] = gw_token_within(b, 2000, "b1");
	assert_true(ldh_watcher_pump(&w, "wx", 1000 + SLACK_MS, tok[0]));
	long long d = w.at[w.n - 1] - t0;
	printf("watch saw a campaign on the other replica after %lld ms\n", d);
	worst = d > worst ? d : worst;

	gw_send(a, "LEADER.CAMPAIGN wx %d HOLDER a1", LEASE_MS);
	t0 = gw_now_ms();
	gw_expect_int(b, 1, "LEADER.RESIGN wx");
	tok[1] = gw_token_within(a, POLL_MS + SLACK_MS, "a1 after b1 resigned");
	assert_true(ldh_watcher_pump(&w, "wx", 1000, tok[1]));

	gw_send(b2, "LEADER.CAMPAIGN wx %d HOLDER b2", LEASE_MS);
	gw_expect_no_reply(b2, 200, "b2");
	redisFree(a); /* a1 released: b2 takes it at its next poll */
	t0 = gw_now_ms();
	tok[2] = gw_token_within(b2, POLL_MS + SLACK_MS, "b2 after a1 closed");
	long long lead_at = gw_now_ms();
	assert_true(ldh_watcher_pump(&w, "wx", POLL_MS + SLACK_MS, tok[2]));
	d = w.at[w.n - 1] - lead_at;
	printf("watch saw a leader of the other replica after %lld ms (poll interval %d ms)\n", d,
	       POLL_MS);
	worst = d > worst ? d : worst;
	assert_true(worst < 1000 + SLACK_MS); /* idle poll is 1 s, held poll lease/3 */
	gw_expect_int(b2, 1, "LEADER.RESIGN wx");
	ldh_watcher_pump(&w, "wx", 1000 + 500, 0);
	ldh_watcher_check(&w, tok, who, 3);
	assert_false(w.seen[w.n - 1].held);
	redisFree(b);
	redisFree(b2);
	redisFree(w.c);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

/* --- two gateways on one table --- */

enum handover { BY_SIGKILL, BY_SIGTERM, BY_RESIGN, BY_DISCONNECT };
static const char *const handover_name[] = {"SIGKILL", "SIGTERM", "resign", "disconnect"};

static void handover_across(enum handover how)
{
	start_two(&gws[0], &gws[1]);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN hx %d HOLDER a", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	gw_send(b, "LEADER.CAMPAIGN hx %d WAIT 0 HOLDER b", LEASE_MS);
	/* b waits through renewals of a: more than a lease. The handover
	 * comes half-way between two of b's polls (they started with its
	 * campaign), so a released lock is expected after about POLL_MS/2. */
	gw_expect_no_reply(b, LEASE_MS + POLL_MS / 2, "b while a renews");
	long long t0 = gw_now_ms();
	switch (how) {
	case BY_SIGKILL:
		assert_int_equal(gw_signal(&gws[0], SIGKILL), 128 + SIGKILL);
		break;
	case BY_SIGTERM:
		assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
		break;
	case BY_RESIGN:
		gw_expect_int(a, 1, "LEADER.RESIGN hx");
		break;
	case BY_DISCONNECT:
		redisFree(a);
		a = NULL;
		break;
	}
	long long t2 = gw_token_within(b, 3 * LEASE_MS + SLACK_MS, "b");
	long long took = gw_now_ms() - t0;
	printf("handover %s across replicas (moto): %lld ms (lease %d ms, poll %d ms)\n",
	       handover_name[how], took, LEASE_MS, POLL_MS);
	assert_true(t2 > t1);
	if (how == BY_SIGKILL) {
		/* A takeover: the holder's rvn seen unchanged for a whole lease
		 * on b's clock. a renewed every L/3, so its last renewal R was
		 * sent at most L/3 before the kill (t0); b first saw that rvn in
		 * a read answered after R, and writes once it has seen it for
		 * L: no earlier than R + L >= t0 + 2L/3. TIMER_LATE_MS allows
		 * a's heartbeat due just before t0 to have gone out late on a
		 * loaded machine (R is then the one before). At the latest: b
		 * reads the new rvn within one poll (L/3) of R <= t0, writes
		 * L later, plus the noise of a loaded machine. */
		assert_true(took >= 2 * LEASE_MS / 3 - TIMER_LATE_MS);
		assert_true(took < LEASE_MS + LEASE_MS / 3 + SLACK_MS);
		assert_int_equal(gw_log_count(&gws[1], "event_id=41 "), 1);
	} else {
		/* Released: taken at b's next poll, no takeover. */
		assert_true(took < POLL_MS + SLACK_MS);
		assert_int_equal(gw_log_count(&gws[1], "event_id=41 "), 0);
	}
	assert_int_equal(gw_log_count(&gws[1], "event_id=45 "), 1);
	if (a != NULL)
		redisFree(a);
	redisFree(b);
	if (gws[0].pid > 0)
		assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

static void t_sigkill_across(void **state)
{
	ldh_setup_param(state);
	handover_across(BY_SIGKILL);
}

static void t_sigterm_across(void **state)
{
	ldh_setup_param(state);
	handover_across(BY_SIGTERM);
}

static void t_resign_across(void **state)
{
	ldh_setup_param(state);
	handover_across(BY_RESIGN);
}

static void t_disconnect_across(void **state)
{
	ldh_setup_param(state);
	handover_across(BY_DISCONNECT);
}

/* A client that campaigns with a short WAIT in a loop still takes over from
 * a crashed leader after about a lease (the gateway remembers how long it
 * has seen the holder unchanged across campaigns), and its campaigns read:
 * two writes, the first attempt on a lock this replica had not seen and the
 * takeover — three when the takeover's answer comes after its campaign's
 * WAIT ran out (a slow emulator on a loaded machine): that lease is
 * released at once and the next campaign writes again. One write per
 * campaign would be about eight. */
static void t_sigkill_campaign_loop(void **state)
{
	ldh_setup_param(state);
	start_two(&gws[0], &gws[1]);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]), *ib = gw_connect(&gws[1]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN kl %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	long long writes0 = info_field(ib, "store_requests_acquire");
	assert_int_equal(gw_signal(&gws[0], SIGKILL), 128 + SIGKILL);
	long long t0 = gw_now_ms(), t2 = 0;
	int campaigns = 0;
	while (t2 == 0 && gw_now_ms() - t0 < 3 * LEASE_MS + SLACK_MS) {
		r = gw_cmd(b, "LEADER.CAMPAIGN kl %d WAIT 300", LEASE_MS);
		campaigns++;
		if (r->type == REDIS_REPLY_INTEGER)
			t2 = r->integer;
		else
			assert_int_equal(r->type, REDIS_REPLY_NIL);
		freeReplyObject(r);
	}
	long long took = gw_now_ms() - t0;
	long long writes = info_field(ib, "store_requests_acquire") - writes0;
	printf("handover SIGKILL across replicas, follower campaigning with WAIT 300 in a loop: "
	       "%lld ms, %d campaigns, %lld acquire writes\n",
	       took, campaigns, writes);
	assert_true(t2 > t1);
	assert_true(took < 2 * LEASE_MS + SLACK_MS);
	assert_in_range(writes, 2, 3);
	redisFree(a);
	redisFree(b);
	redisFree(ib);
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

/* The leader's gateway stopped past its lease: the other replica leads
 * with a higher token; the stopped one, continued, reports the term lost
 * (push, then -LOST on RESIGN). */
static void t_sigstop_across(void **state)
{
	ldh_setup_param(state);
	start_two(&gws[0], &gws[1]);
	char line[64], push[160], reason[32];
	struct raw *a = r3_open(&gws[0]);
	snprintf(line, sizeof(line), "LEADER.CAMPAIGN sx %d HOLDER a", LEASE_MS);
	raw_send(a, line);
	const char *v = raw_reply(a, 3000);
	assert_int_equal(v[0], ':');
	long long tok1 = atoll(v + 1);
	redisContext *b = gw_connect(&gws[1]);
	gw_send(b, "LEADER.CAMPAIGN sx %d WAIT 0 HOLDER b", LEASE_MS);
	gw_expect_no_reply(b, POLL_MS, "b while a leads");
	long long t0 = gw_now_ms();
	kill(gws[0].pid, SIGSTOP);
	long long t2 = gw_token_within(b, 2 * LEASE_MS + SLACK_MS, "b while a is stopped");
	printf("handover SIGSTOP across replicas (moto): %lld ms\n", gw_now_ms() - t0);
	assert_true(t2 > tok1);
	assert_int_equal(gw_log_count(&gws[1], "event_id=41 "), 1);
	kill(gws[0].pid, SIGCONT);
	/* The term is lost: a push, then -LOST on the next LEADER command. */
	if (raw_read(a, 2 * LEASE_MS) != 1)
		fail_msg("no leader.lost push after SIGCONT");
	v = a->last;
	printf("after SIGCONT: %s\n", v);
	snprintf(push, sizeof(push), ">[leader.lost sx :%lld ", tok1);
	assert_memory_equal(v, push, strlen(push));
	snprintf(reason, sizeof(reason), "%s", v + strlen(push)); /* v is overwritten next */
	assert_true(strcmp(reason, "taken_over]") == 0 || strcmp(reason, "expired]") == 0);
	raw_send(a, "LEADER.RESIGN sx");
	v = raw_reply(a, 3000);
	printf("LEADER.RESIGN after the loss: %s\n", v);
	assert_memory_equal(v, "-LOST ", 6);
	assert_memory_equal(v + 6, reason, strlen(reason) - 1);
	raw_send(a, "LEADER.RESIGN sx");
	v = raw_reply(a, 3000);
	assert_string_equal(v, ":0"); /* reported once */
	/* WATCH in RESP3: a map. */
	char want[128];
	raw_send(a, "LEADER.WATCH sx");
	v = raw_reply(a, 3000);
	snprintf(want, sizeof(want), "%%[holder b fencing-token :%lld lease-ms :%d]", t2, LEASE_MS);
	assert_string_equal(v, want);
	/* b still leads, and a may campaign again (and wait). */
	struct leader l;
	ldh_watch_now(b, "sx", &l);
	assert_string_equal(l.holder, "b");
	assert_int_equal(l.token, t2);
	assert_int_equal(gw_log_count(&gws[0], "event_id=40 "), 1);
	raw_close(a);
	redisFree(b);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

/* A loss on RESP2: no push, -LOST on the next CAMPAIGN about it, then a
 * new campaign starts a new term. Lost by SIGSTOP of the leader's gateway. */
static void t_lost_resp2_campaign_again(void **state)
{
	ldh_setup_param(state);
	start_two(&gws[0], &gws[1]);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN sr %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	gw_send(b, "LEADER.CAMPAIGN sr %d WAIT 0", LEASE_MS);
	kill(gws[0].pid, SIGSTOP);
	long long t2 = gw_token_within(b, 2 * LEASE_MS + SLACK_MS, "b while a is stopped");
	assert_true(t2 > t1);
	kill(gws[0].pid, SIGCONT);
	gw_sleep_ms(500);
	gw_expect_no_reply(a, 0, "a push on RESP2");
	/* The next LEADER command about it reports the loss, once: CAMPAIGN
	 * (a client checking that it still leads) as RESIGN does. */
	gw_send(a, "LEADER.CAMPAIGN sr %d", LEASE_MS);
	r = gw_reply_within(a, 1000);
	if (r == NULL || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "LOST ", 5) != 0)
		fail_msg("CAMPAIGN after a loss: wanted -LOST, got %s", r == NULL ? "no reply"
									: r->str  ? r->str
										  : "a value");
	printf("CAMPAIGN after the loss: -%s\n", r->str);
	freeReplyObject(r);
	gw_expect_int(a, 0, "LEADER.RESIGN sr");
	gw_send(a, "LEADER.CAMPAIGN sr %d WAIT 0", LEASE_MS);
	gw_expect_no_reply(a, 200, "a while b leads");
	gw_expect_int(b, 1, "LEADER.RESIGN sr");
	long long t3 = gw_token_within(a, POLL_MS + SLACK_MS, "a after b resigned");
	assert_true(t3 > t2);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

/* --- what an idle follower costs --- */
static void t_idle_follower_requests(void **state)
{
	ldh_setup_param(state);
	static const char *const ops[] = {"read", "acquire", "renew", "release", "check"};
	enum { NOPS = sizeof(ops) / sizeof(ops[0]) };
	long long before[NOPS], after[NOPS];
	char key[64];
	const int window_ms = 6000;
	start_two(&gws[0], &gws[1]);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]), *ib = gw_connect(&gws[1]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN idle %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	gw_send(b, "LEADER.CAMPAIGN idle %d WAIT 0", LEASE_MS);
	gw_sleep_ms(LEASE_MS); /* past the first attempt */
	for (int i = 0; i < NOPS; i++) {
		snprintf(key, sizeof(key), "store_requests_%s", ops[i]);
		before[i] = info_field(ib, key);
	}
	long long t0 = gw_now_ms();
	gw_sleep_ms(window_ms);
	for (int i = 0; i < NOPS; i++) {
		snprintf(key, sizeof(key), "store_requests_%s", ops[i]);
		after[i] = info_field(ib, key);
	}
	long long took = gw_now_ms() - t0;
	long long reads = after[0] - before[0], writes = 0;
	for (int i = 1; i < NOPS; i++)
		writes += after[i] - before[i];
	double per_min = (double)reads * 60000.0 / (double)took;
	printf("idle follower (lease %d ms, poll %d ms): %lld reads, %lld writes in %lld ms = "
	       "%.1f reads/min (one per poll interval: %.1f/min; with a 30 s lease: %.1f/min)\n",
	       LEASE_MS, POLL_MS, reads, writes, took, per_min, 60000.0 / POLL_MS,
	       per_min * POLL_MS / 10000.0);
	gw_expect_no_reply(b, 0, "the follower");
	assert_int_equal(writes, 0);
	/* One read per poll interval: the next poll is armed a third of a
	 * lease after a read's answer, so consecutive reads are POLL_MS plus
	 * a round trip apart. At most took / POLL_MS + 1 reads fit in the
	 * window; at least took / (POLL_MS + READ_RTT_MS), READ_RTT_MS being
	 * a generous round trip of one read on a loaded machine (a few ms on
	 * an idle one). */
	long long most = took / POLL_MS + 1, least = took / (POLL_MS + READ_RTT_MS);
	if (reads < least || reads > most)
		fail_msg("%lld reads in %lld ms: want %lld..%lld (one per %d ms poll interval)",
			 reads, took, least, most, POLL_MS);
	redisFree(a);
	redisFree(b);
	redisFree(ib);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
	assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
}

#define MOTO(t) cmocka_unit_test_prestate_setup_teardown(t, NULL, gw_teardown, (void *)&ldh_moto)

int main(void)
{
	const struct CMUnitTest tests[] = {
		MOTO(t_watch_across),		MOTO(t_sigkill_across),
		MOTO(t_sigkill_campaign_loop),	MOTO(t_sigterm_across),
		MOTO(t_resign_across),		MOTO(t_disconnect_across),
		MOTO(t_sigstop_across),		MOTO(t_lost_resp2_campaign_again),
		MOTO(t_idle_follower_requests),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("LG_TEST_FILTER") != NULL) /* e.g. t_sigstop_across, or t_watch* */
		cmocka_set_test_filter(getenv("LG_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
