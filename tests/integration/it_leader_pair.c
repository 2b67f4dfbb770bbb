/*
 * it_leader_pair: LEADER.CAMPAIGN / RESIGN / WATCH with two gateways on one
 * moto table (it_leader is one gateway): watchers across replicas, the
 * leader handed over by SIGKILL, SIGTERM, RESIGN or a disconnect on the
 * other replica, a follower campaigning in a WAIT loop, the leader's
 * gateway SIGSTOPped past its lease (RESP3 push, RESP2 -LOST), and what an
 * idle follower costs in requests. Without LG_MOTO every test is skipped.
 *
 * Timing assertions are loose (shared machines); the measured handover
 * times are printed as "handover <how> <where>: N ms".
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/leaderhelp.h"

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

/* --- a raw RESP3 connection (hiredis 0.14 has no RESP3) --- */

struct r3 {
	int fd;
	size_t len;
	char buf[16384];
};

static void r3_put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
	if (*o + n + 1 > cap)
		n = cap > *o + 1 ? cap - *o - 1 : 0;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
}

/* Parses one RESP3 value of p[0..n) as text into out: simple strings and
 * bulks as they are, ":N" integers, "-ERR ..." errors, "_" nil, aggregates
 * as "<type>[a b c]" (">" push, "%" map, "*" array). Returns the bytes
 * used, 0 when incomplete. */
static size_t r3_parse(const char *p, size_t n, char *out, size_t cap, size_t *o)
{
	const char *nl = memmem(p, n, "\r\n", 2);
	if (nl == NULL)
		return 0;
	size_t hdr = (size_t)(nl - p) + 2;
	long long k = strtoll(p + 1, NULL, 10);
	switch (p[0]) {
	case '+':
	case '-':
	case ':':
	case ',':
	case '#':
		r3_put(out, cap, o, p[0] == '+' ? p + 1 : p, (size_t)(nl - p) - (p[0] == '+'));
		return hdr;
	case '_':
		r3_put(out, cap, o, "_", 1);
		return hdr;
	case '$':
		if (k < 0) {
			r3_put(out, cap, o, "_", 1);
			return hdr;
		}
		if (n < hdr + (size_t)k + 2)
			return 0;
		r3_put(out, cap, o, p + hdr, (size_t)k);
		return hdr + (size_t)k + 2;
	case '*':
	case '%':
	case '>':
	case '~': {
		size_t used = hdr;
		if (p[0] == '%')
			k *= 2;
		r3_put(out, cap, o, p, 1);
		r3_put(out, cap, o, "[", 1);
		for (long long i = 0; i < k; i++) {
			if (i > 0)
				r3_put(out, cap, o, " ", 1);
			size_t u = r3_parse(p + used, n - used, out, cap, o);
			if (u == 0)
				return 0;
			used += u;
		}
		r3_put(out, cap, o, "]", 1);
		return used;
	}
	default:
		fail_msg("RESP3: unexpected type byte '%c'", p[0]);
	}
	return 0;
}

/* The next value within ms as text (see r3_parse), or false. */
static bool r3_read(struct r3 *c, int ms, char *out, size_t cap)
{
	long long end = gw_now_ms() + ms;
	for (;;) {
		size_t o = 0;
		size_t used = c->len > 0 ? r3_parse(c->buf, c->len, out, cap, &o) : 0;
		if (used > 0) {
			memmove(c->buf, c->buf + used, c->len - used);
			c->len -= used;
			return true;
		}
		long long left = end - gw_now_ms();
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
		ssize_t got = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (got <= 0)
			fail_msg("RESP3 connection closed");
		c->len += (size_t)got;
	}
}

/* Sends one command of NULL-terminated arguments. */
static void r3_send(struct r3 *c, ...)
{
	char req[1024];
	const char *argv[16];
	int argc = 0, n;
	va_list ap;
	va_start(ap, c);
	while (argc < 16 && (argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	va_end(ap);
	n = snprintf(req, sizeof(req), "*%d\r\n", argc);
	for (int i = 0; i < argc; i++)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "$%zu\r\n%s\r\n", strlen(argv[i]),
			      argv[i]);
	assert_int_equal(send(c->fd, req, (size_t)n, MSG_NOSIGNAL), n);
}

static void r3_open(struct r3 *c, const struct gw *g)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)g->port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char hello[1024];
	c->len = 0;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c->fd >= 0);
	assert_int_equal(connect(c->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	r3_send(c, "HELLO", "3", NULL);
	assert_true(r3_read(c, 3000, hello, sizeof(hello)));
	assert_non_null(strstr(hello, "proto :3"));
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
		/* A takeover: the holder's rvn seen unchanged for a whole lease. */
		assert_true(took >= LEASE_MS / 2);
		assert_true(took < 2 * LEASE_MS + SLACK_MS);
		assert_int_equal(gw_log_count(&gws[1], "event=41 "), 1);
	} else {
		/* Released: taken at b's next poll, no takeover. */
		assert_true(took < POLL_MS + SLACK_MS);
		assert_int_equal(gw_log_count(&gws[1], "event=41 "), 0);
	}
	assert_int_equal(gw_log_count(&gws[1], "event=45 "), 1);
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
 * takeover. */
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
	assert_int_equal(writes, 2);
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
	struct r3 a;
	char v[512], lease[16], push[160];
	snprintf(lease, sizeof(lease), "%d", LEASE_MS);
	r3_open(&a, &gws[0]);
	r3_send(&a, "LEADER.CAMPAIGN", "sx", lease, "HOLDER", "a", NULL);
	assert_true(r3_read(&a, 3000, v, sizeof(v)));
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
	assert_int_equal(gw_log_count(&gws[1], "event=41 "), 1);
	kill(gws[0].pid, SIGCONT);
	/* The term is lost: a push, then -LOST on the next LEADER command. */
	if (!r3_read(&a, 2 * LEASE_MS, v, sizeof(v)))
		fail_msg("no leader.lost push after SIGCONT");
	printf("after SIGCONT: %s\n", v);
	snprintf(push, sizeof(push), ">[leader.lost sx :%lld ", tok1);
	assert_memory_equal(v, push, strlen(push));
	const char *reason = v + strlen(push);
	assert_true(strcmp(reason, "taken_over]") == 0 || strcmp(reason, "expired]") == 0);
	r3_send(&a, "LEADER.RESIGN", "sx", NULL);
	assert_true(r3_read(&a, 3000, v, sizeof(v)));
	printf("LEADER.RESIGN after the loss: %s\n", v);
	assert_memory_equal(v, "-LOST ", 6);
	assert_memory_equal(v + 6, reason, strlen(reason) - 1);
	r3_send(&a, "LEADER.RESIGN", "sx", NULL);
	assert_true(r3_read(&a, 3000, v, sizeof(v)));
	assert_string_equal(v, ":0"); /* reported once */
	/* WATCH in RESP3: a map. */
	char want[128];
	r3_send(&a, "LEADER.WATCH", "sx", NULL);
	assert_true(r3_read(&a, 3000, v, sizeof(v)));
	snprintf(want, sizeof(want), "%%[holder b fencing-token :%lld lease-ms :%d]", t2, LEASE_MS);
	assert_string_equal(v, want);
	/* b still leads, and a may campaign again (and wait). */
	struct leader l;
	ldh_watch_now(b, "sx", &l);
	assert_string_equal(l.holder, "b");
	assert_int_equal(l.token, t2);
	assert_int_equal(gw_log_count(&gws[0], "event=40 "), 1);
	close(a.fd);
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
	long long want = took / POLL_MS;
	assert_true(reads >= want / 2 && reads <= want + 2);
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
