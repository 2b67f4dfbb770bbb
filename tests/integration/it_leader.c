/*
 * it_leader: LEADER.CAMPAIGN / RESIGN / WATCH on the real binary, on the
 * embedded store and on moto's DynamoDB, with one gateway and with two
 * gateways on one table (SIGKILL, SIGTERM, SIGSTOP of the leader's, watchers
 * across replicas), transient store errors through a proxy that can be
 * switched off, and what an idle follower costs in requests.
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

#define LEASE_MS 2000
#define POLL_MS	 (LEASE_MS / 3) /* a follower's poll interval */
#define SLACK_MS 1500		/* noise allowed on top of a rule's time */

struct param {
	bool moto;
};
static const struct param on_embedded = {false};
static const struct param on_moto = {true};

/* Gateways and helper processes of the running test, killed at teardown
 * when a failed assertion left them behind. */
static struct gw gws[3];
static pid_t proxy_pid;

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(gws) / sizeof(gws[0]); i++) {
		if (gws[i].pid > 0) {
			kill(gws[i].pid, SIGCONT);
			kill(gws[i].pid, SIGKILL);
			waitpid(gws[i].pid, NULL, 0);
		}
		gws[i].pid = 0;
	}
	if (proxy_pid > 0) {
		kill(proxy_pid, SIGKILL);
		waitpid(proxy_pid, NULL, 0);
		proxy_pid = 0;
	}
	return 0;
}

/* Stops g with sig and forgets it; returns the exit status (gw_signal). */
static int stop_gw(struct gw *g, int sig)
{
	int rc = gw_signal(g, sig);
	g->pid = 0;
	return rc;
}

/* Starts gws[0] on the param's store; false (test skipped) without moto. */
static const struct param *setup_param(void **state)
{
	const struct param *p = *state;
	if (p->moto && !gw_have_moto())
		skip();
	return p;
}

static void start_one(struct gw *g, const struct param *p)
{
	gw_start(g, p->moto ? gw_new_table() : NULL, NULL);
}

/* Two gateways on one new moto table. */
static void start_two(struct gw *a, struct gw *b)
{
	char table[64];
	snprintf(table, sizeof(table), "%s", gw_new_table());
	gw_start(a, table, NULL);
	gw_start(b, table, NULL);
}

/* --- hiredis with deadlines --- */

static void send_cmd(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	int done = 0;
	va_start(ap, fmt);
	assert_int_equal(redisvAppendCommand(c, fmt, ap), REDIS_OK);
	va_end(ap);
	while (!done)
		if (redisBufferWrite(c, &done) != REDIS_OK)
			fail_msg("write: %s", c->errstr);
}

/* The next reply on c if it arrives within ms, else NULL (c stays usable). */
static redisReply *reply_within(redisContext *c, int ms)
{
	void *r = NULL;
	long long end = gw_now_ms() + ms;
	if (redisGetReplyFromReader(c, &r) != REDIS_OK)
		fail_msg("reader: %s", c->errstr);
	while (r == NULL) {
		long long left = end - gw_now_ms();
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		if (poll(&p, 1, left > 0 ? (int)left : 0) <= 0)
			return NULL;
		if (redisBufferRead(c) != REDIS_OK)
			fail_msg("read: %s", c->errstr);
		if (redisGetReplyFromReader(c, &r) != REDIS_OK)
			fail_msg("reader: %s", c->errstr);
	}
	return r;
}

/* The next reply, which must be an integer (a fencing token), within ms. */
static long long token_within(redisContext *c, int ms, const char *what)
{
	redisReply *r = reply_within(c, ms);
	if (r == NULL)
		fail_msg("%s: no reply within %d ms", what, ms);
	if (r->type != REDIS_REPLY_INTEGER)
		fail_msg("%s: wanted a token, got type %d (%s)", what, r->type,
			 r->str ? r->str : "");
	long long t = r->integer;
	freeReplyObject(r);
	return t;
}

static void expect_no_reply(redisContext *c, int ms, const char *what)
{
	redisReply *r = reply_within(c, ms);
	if (r != NULL)
		fail_msg("%s: unexpected reply type %d (%lld, %s)", what, r->type, r->integer,
			 r->str ? r->str : "");
}

static long long info_field(redisContext *c, const char *field); /* INFO leases */

/* A leader as LEADER.WATCH answers it: RESP2 flat pairs or nil. */
struct leader {
	bool held;
	char holder[64];
	long long token, lease_ms;
};

static void parse_leader(const redisReply *r, struct leader *out)
{
	memset(out, 0, sizeof(*out));
	if (r->type == REDIS_REPLY_NIL)
		return;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 6)
		fail_msg("LEADER.WATCH: wanted nil or 6 elements, got type %d (%s)", r->type,
			 r->str ? r->str : "");
	out->held = true;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *k = r->element[i]->str;
		const redisReply *v = r->element[i + 1];
		if (strcmp(k, "holder") == 0 && v->type == REDIS_REPLY_STRING)
			snprintf(out->holder, sizeof(out->holder), "%s", v->str);
		else if (strcmp(k, "fencing-token") == 0)
			out->token = v->integer;
		else if (strcmp(k, "lease-ms") == 0)
			out->lease_ms = v->integer;
	}
}

static void watch_now(redisContext *c, const char *name, struct leader *out)
{
	redisReply *r = gw_cmd(c, "LEADER.WATCH %s", name);
	parse_leader(r, out);
	freeReplyObject(r);
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

/* --- one gateway --- */

/* N campaigners: one leads; each RESIGN hands the lock to exactly one
 * waiter, with a higher token, until every campaigner has led once. */
static void t_one_leader_resign_chain(void **state)
{
	const struct param *p = setup_param(state);
	enum { N = 4 };
	redisContext *c[N], *obs;
	bool led[N] = {false};
	long long last = 0;
	start_one(&gws[0], p);
	obs = gw_connect(&gws[0]);
	for (int i = 0; i < N; i++) {
		c[i] = gw_connect(&gws[0]);
		send_cmd(c[i], "LEADER.CAMPAIGN chain %d WAIT 0 HOLDER c%d", LEASE_MS, i);
	}
	int leader = -1;
	for (int round = 0; round < N; round++) {
		/* Exactly one campaigner answers. */
		long long t0 = gw_now_ms();
		int now = -1;
		while (now < 0 && gw_now_ms() - t0 < 3000)
			for (int i = 0; i < N && now < 0; i++) {
				redisReply *r = led[i] ? NULL : reply_within(c[i], 5);
				if (r == NULL)
					continue;
				if (r->type != REDIS_REPLY_INTEGER)
					fail_msg("campaign c%d: type %d (%s)", i, r->type,
						 r->str ? r->str : "");
				assert_true(r->integer > last);
				last = r->integer;
				now = i;
				freeReplyObject(r);
			}
		if (now < 0)
			fail_msg("round %d: nobody leads", round);
		long long took = gw_now_ms() - t0;
		if (round > 0)
			printf("handover resign one replica (%s): %lld ms\n",
			       p->moto ? "moto" : "embedded", took);
		led[now] = true;
		for (int i = 0; i < N; i++)
			if (!led[i])
				expect_no_reply(c[i], round == 0 ? 300 : 50, "a second leader");
		struct leader l;
		watch_now(obs, "chain", &l);
		assert_true(l.held);
		char want[16];
		snprintf(want, sizeof(want), "c%d", now);
		assert_string_equal(l.holder, want);
		assert_int_equal(l.token, last);
		assert_int_equal(l.lease_ms, LEASE_MS);
		/* Campaigning again while leading answers this term's token. */
		gw_expect_int(c[now], last, "LEADER.CAMPAIGN chain %d", LEASE_MS);
		if (leader >= 0)
			gw_expect_int(c[leader], 0, "LEADER.RESIGN chain"); /* resigned already */
		leader = now;
		gw_expect_int(c[now], 1, "LEADER.RESIGN chain");
	}
	struct leader l;
	watch_now(obs, "chain", &l);
	assert_false(l.held);
	for (int i = 0; i < N; i++)
		redisFree(c[i]);
	redisFree(obs);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

/* The leader's connection closing hands on at once; a campaigner that
 * closed while waiting is out of the race. */
static void t_disconnect_hands_on(void **state)
{
	const struct param *p = setup_param(state);
	start_one(&gws[0], p);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]), *c = gw_connect(&gws[0]);
	long long t1 = 0;
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN dc %d HOLDER a", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	t1 = r->integer;
	freeReplyObject(r);
	send_cmd(b, "LEADER.CAMPAIGN dc %d HOLDER b", LEASE_MS);
	expect_no_reply(b, 200, "b while a leads");
	redisFree(b); /* b gives up while waiting */
	send_cmd(c, "LEADER.CAMPAIGN dc %d HOLDER c", LEASE_MS);
	expect_no_reply(c, 200, "c while a leads");
	long long t0 = gw_now_ms();
	redisFree(a);
	long long t2 = token_within(c, LEASE_MS, "c after a closed");
	long long took = gw_now_ms() - t0;
	printf("handover disconnect one replica (%s): %lld ms\n", p->moto ? "moto" : "embedded",
	       took);
	assert_int_equal(t2, t1 + 1);	  /* b's cancelled campaign wrote nothing */
	assert_true(took < LEASE_MS / 2); /* a release, not a takeover */
	redisContext *o = gw_connect(&gws[0]);
	struct leader l;
	watch_now(o, "dc", &l);
	assert_string_equal(l.holder, "c");
	assert_int_equal(l.token, t2);
	redisFree(c);
	redisFree(o);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

/* WAIT runs out: nil, nothing left behind; the session can campaign again. */
static void t_campaign_wait_timeout(void **state)
{
	const struct param *p = setup_param(state);
	start_one(&gws[0], p);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN wt %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	long long t0 = gw_now_ms();
	gw_expect_nil(b, "LEADER.CAMPAIGN wt %d WAIT 400", LEASE_MS);
	long long took = gw_now_ms() - t0;
	printf("campaign WAIT 400 answered nil after %lld ms\n", took);
	assert_true(took >= 350 && took < 400 + SLACK_MS);
	gw_expect_int(b, 0, "LEADER.RESIGN wt"); /* it never led */
	r = gw_cmd(b, "PING");
	assert_string_equal(r->str, "PONG");
	freeReplyObject(r);
	/* The timed-out campaign is not in the queue any more: a new one is
	 * answered when a resigns. */
	send_cmd(b, "LEADER.CAMPAIGN wt %d WAIT 5000", LEASE_MS);
	expect_no_reply(b, 200, "b while a leads");
	gw_expect_int(a, 1, "LEADER.RESIGN wt");
	long long t2 = token_within(b, 2000, "b after a resigned");
	assert_true(t2 > t1);
	/* A WAIT shorter than the store's answer: nil or a token, and no
	 * lease left behind when nil. */
	gw_expect_int(b, 1, "LEADER.RESIGN wt");
	redisReply *q = gw_cmd(a, "LEADER.CAMPAIGN wt %d WAIT 1", LEASE_MS);
	bool led = q->type == REDIS_REPLY_INTEGER;
	assert_true(led || q->type == REDIS_REPLY_NIL);
	if (led)
		assert_true(q->integer > t2);
	freeReplyObject(q);
	gw_sleep_ms(300);
	struct leader l;
	watch_now(b, "wt", &l);
	assert_int_equal(l.held, led);
	gw_expect_int(a, led ? 1 : 0, "LEADER.RESIGN wt");
	redisFree(a);
	redisFree(b);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

static void t_errors(void **state)
{
	(void)state;
	start_one(&gws[0], &on_embedded);
	redisContext *c = gw_connect(&gws[0]);
	gw_expect_err(c, "ERR wrong number of arguments", "LEADER.CAMPAIGN");
	gw_expect_err(c, "ERR wrong number of arguments", "LEADER.CAMPAIGN x");
	gw_expect_err(c, "ERR lease-ms", "LEADER.CAMPAIGN x 999");
	gw_expect_err(c, "ERR lease-ms", "LEADER.CAMPAIGN x abc");
	gw_expect_err(c, "ERR lease-ms", "LEADER.CAMPAIGN x 86400001");
	gw_expect_err(c, "ERR syntax error", "LEADER.CAMPAIGN x 1000 WAIT");
	gw_expect_err(c, "ERR WAIT", "LEADER.CAMPAIGN x 1000 WAIT -1");
	gw_expect_err(c, "ERR WAIT", "LEADER.CAMPAIGN x 1000 WAIT soon");
	gw_expect_err(c, "ERR syntax error", "LEADER.CAMPAIGN x 1000 HOLDER");
	gw_expect_err(c, "ERR syntax error", "LEADER.CAMPAIGN x 1000 FOREVER 1");
	gw_expect_err(c, "ERR lock name", "LEADER.CAMPAIGN %b 1000", "", (size_t)0);
	gw_expect_err(c, "ERR lock name", "LEADER.CAMPAIGN %b 1000", "a\0b", (size_t)3);
	gw_expect_err(c, "ERR HOLDER", "LEADER.CAMPAIGN x 1000 HOLDER %b", "", (size_t)0);
	char label[300];
	memset(label, 'h', sizeof(label) - 1);
	label[sizeof(label) - 1] = '\0';
	gw_expect_err(c, "ERR HOLDER", "LEADER.CAMPAIGN x 1000 HOLDER %s", label);
	gw_expect_err(c, "ERR wrong number of arguments", "LEADER.RESIGN");
	gw_expect_err(c, "ERR wrong number of arguments", "LEADER.RESIGN x y");
	gw_expect_err(c, "ERR wrong number of arguments", "LEADER.WATCH");
	gw_expect_err(c, "ERR syntax error", "LEADER.WATCH x AFTER");
	gw_expect_err(c, "ERR syntax error", "LEADER.WATCH x SINCE 1");
	gw_expect_err(c, "ERR AFTER", "LEADER.WATCH x AFTER -1");
	gw_expect_err(c, "ERR TIMEOUT", "LEADER.WATCH x TIMEOUT 1s");
	gw_expect_err(c, "ERR lock name", "LEADER.WATCH %b", "", (size_t)0);
	/* Nothing of that took a lease or left a wait. */
	gw_expect_int(c, 0, "LEADER.RESIGN x");
	gw_expect_nil(c, "LEADER.WATCH x");
	redisReply *r = gw_cmd(c, "INFO leases");
	assert_non_null(strstr(r->str, "leases_held:0\r\n"));
	assert_non_null(strstr(r->str, "waits:0\r\n"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

/* SIGTERM while a campaign and a watch wait: the gateway ends within its
 * shutdown bound, the leader's lease released, the waiting connections
 * closed. */
static void t_sigterm_while_waiting(void **state)
{
	const struct param *p = setup_param(state);
	start_one(&gws[0], p);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]), *w = gw_connect(&gws[0]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN st %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	send_cmd(b, "LEADER.CAMPAIGN st %d WAIT 0", LEASE_MS);
	send_cmd(w, "LEADER.WATCH st AFTER %lld", t1);
	expect_no_reply(b, 200, "b while a leads");
	expect_no_reply(w, 0, "the watcher");
	long long t0 = gw_now_ms();
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
	long long took = gw_now_ms() - t0;
	printf("SIGTERM with a campaign and a watch waiting (%s): exit 0 after %lld ms\n",
	       p->moto ? "moto" : "embedded", took);
	assert_true(took < 2000); /* not the 5 s bound */
	for (int i = 0; i < 2; i++) {
		redisContext *c = i == 0 ? b : w;
		void *rep = NULL;
		/* Either an answer or the connection closed; never a hang. */
		struct pollfd pf = {.fd = c->fd, .events = POLLIN};
		assert_int_equal(poll(&pf, 1, 1000), 1);
		if (redisBufferRead(c) == REDIS_OK &&
		    redisGetReplyFromReader(c, &rep) == REDIS_OK && rep != NULL) {
			printf("  %s answered type %d (%s)\n", i == 0 ? "campaign" : "watch",
			       ((redisReply *)rep)->type,
			       ((redisReply *)rep)->str ? ((redisReply *)rep)->str : "");
			freeReplyObject(rep);
		}
	}
	redisFree(a);
	redisFree(b);
	redisFree(w);
}

/* A loop stall past the lease end (here: the log is a FIFO nobody reads,
 * so the gateway blocks in a log write): the check read in the same turn
 * as the overdue end timer must not be told the term goes on. */
static void t_check_after_stall(void **state)
{
	(void)state;
	char fifo[300];
	snprintf(fifo, sizeof(fifo), "%s/stall-%ld.fifo",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp", (long)getpid());
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rd >= 0);
	gw_start(&gws[0], NULL, "--log-file", fifo, NULL);
	redisContext *a = gw_connect(&gws[0]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN stall 1000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	/* Fill the pipe with session logs until the gateway blocks. */
	bool stalled = false;
	for (int i = 0; i < 20000 && !stalled; i++) {
		redisContext *c = gw_connect(&gws[0]);
		send_cmd(c, "PING");
		r = reply_within(c, 300);
		stalled = r == NULL;
		if (r != NULL)
			freeReplyObject(r);
		redisFree(c);
	}
	assert_true(stalled);
	gw_sleep_ms(1500); /* past the lease end, the loop blocked */
	send_cmd(a, "LEADER.CAMPAIGN stall 1000");
	gw_sleep_ms(100);
	close(rd); /* the blocked write fails: the loop runs again */
	unlink(fifo);
	r = reply_within(a, 3000);
	assert_non_null(r);
	if (r->type == REDIS_REPLY_ERROR)
		printf("check after a 1600 ms stall of a 1000 ms lease: -%s\n", r->str);
	if (r->type == REDIS_REPLY_INTEGER)
		fail_msg("told it still leads (token %lld of %lld) after its lease ended",
			 r->integer, t1);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_string_equal(r->str, "LOST expired");
	freeReplyObject(r);
	/* The lock is free again: a new campaign leads at once. */
	redisContext *b = gw_connect(&gws[0]);
	r = gw_cmd(b, "LEADER.CAMPAIGN stall 1000 WAIT 500");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_true(r->integer > t1);
	freeReplyObject(r);
	redisFree(a);
	redisFree(b);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

/* --- watchers --- */

/* A LEADER.WATCH loop on its own connection: each answer is recorded and
 * the next watch sent with AFTER its token. */
struct watcher {
	redisContext *c;
	long long after;
	int n;
	struct leader seen[32];
	long long at[32]; /* when each answer arrived */
};

static void watcher_start(struct watcher *w, const struct gw *g, const char *name)
{
	memset(w, 0, sizeof(*w));
	w->c = gw_connect(g);
	redisReply *r = gw_cmd(w->c, "LEADER.WATCH %s", name);
	parse_leader(r, &w->seen[0]);
	freeReplyObject(r);
	w->at[0] = gw_now_ms();
	w->after = w->seen[0].token;
	w->n = 1;
	send_cmd(w->c, "LEADER.WATCH %s AFTER %lld", name, w->after);
}

/* Records what the watcher is told within ms; true once it has seen a
 * leader with token `until` (0: pump for the whole ms). */
static bool watcher_pump(struct watcher *w, const char *name, int ms, long long until)
{
	long long end = gw_now_ms() + ms;
	for (;;) {
		long long left = end - gw_now_ms();
		redisReply *r = reply_within(w->c, left > 0 ? (int)left : 0);
		if (r == NULL)
			return false;
		assert_true(w->n < 32);
		parse_leader(r, &w->seen[w->n]);
		freeReplyObject(r);
		w->at[w->n] = gw_now_ms();
		/* It answers only a change. */
		assert_true(w->seen[w->n].token != w->after);
		w->after = w->seen[w->n].token;
		w->n++;
		send_cmd(w->c, "LEADER.WATCH %s AFTER %lld", name, w->after);
		if (until != 0 && w->after == until)
			return true;
	}
}

/* The leaders the watcher saw, in order, must be exactly want[0..n). */
static void watcher_check(const struct watcher *w, const long long *want, const char **holders,
			  int n)
{
	int k = 0;
	for (int i = 0; i < w->n; i++) {
		printf("  watch %d: %s token %lld holder %s\n", i,
		       w->seen[i].held ? "leader" : "none", w->seen[i].token, w->seen[i].holder);
		if (!w->seen[i].held)
			continue;
		if (k >= n || w->seen[i].token != want[k])
			fail_msg("watch %d: token %lld, wanted %lld", i, w->seen[i].token,
				 k < n ? want[k] : -1);
		assert_string_equal(w->seen[i].holder, holders[k]);
		k++;
	}
	assert_int_equal(k, n);
}

static void t_watch_one_replica(void **state)
{
	const struct param *p = setup_param(state);
	start_one(&gws[0], p);
	struct watcher w;
	long long tok[3];
	const char *who[3] = {"a", "b", "c"};
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]), *c = gw_connect(&gws[0]);
	watcher_start(&w, &gws[0], "wl");
	assert_false(w.seen[0].held);
	/* A short TIMEOUT answers the unchanged state. */
	redisContext *t = gw_connect(&gws[0]);
	long long t0 = gw_now_ms();
	gw_expect_nil(t, "LEADER.WATCH wl AFTER 0 TIMEOUT 300");
	assert_true(gw_now_ms() - t0 >= 250);
	redisFree(t);

	t0 = gw_now_ms();
	send_cmd(a, "LEADER.CAMPAIGN wl %d HOLDER a", LEASE_MS);
	tok[0] = token_within(a, 2000, "a");
	assert_true(watcher_pump(&w, "wl", 1000, tok[0]));
	printf("watch saw a campaign (%s, one replica) after %lld ms\n",
	       p->moto ? "moto" : "embedded", w.at[w.n - 1] - t0);
	send_cmd(b, "LEADER.CAMPAIGN wl %d HOLDER b", LEASE_MS);
	expect_no_reply(b, 100, "b");
	gw_expect_int(a, 1, "LEADER.RESIGN wl");
	tok[1] = token_within(b, 2000, "b after a resigned");
	assert_true(watcher_pump(&w, "wl", 1000, tok[1]));
	send_cmd(c, "LEADER.CAMPAIGN wl %d HOLDER c", LEASE_MS);
	expect_no_reply(c, 100, "c");
	redisFree(b);
	tok[2] = token_within(c, 2000, "c after b closed");
	assert_true(watcher_pump(&w, "wl", 1000, tok[2]));
	assert_true(tok[0] < tok[1] && tok[1] < tok[2]);
	gw_expect_int(c, 1, "LEADER.RESIGN wl");
	watcher_pump(&w, "wl", 500, 0);
	watcher_check(&w, tok, who, 3);
	assert_false(w.seen[w.n - 1].held); /* the last resign is seen too */
	redisFree(a);
	redisFree(c);
	redisFree(w.c);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

/* Changes made through the other replica reach a watcher within one poll
 * interval. */
static void t_watch_across(void **state)
{
	setup_param(state);
	start_two(&gws[0], &gws[1]);
	struct watcher w;
	long long tok[3];
	const char *who[3] = {"b1", "a1", "b2"};
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]), *b2 = gw_connect(&gws[1]);
	watcher_start(&w, &gws[0], "wx");
	long long worst = 0;

	long long t0 = gw_now_ms();
	send_cmd(b, "LEADER.CAMPAIGN wx %d HOLDER b1", LEASE_MS);
	tok[0] = token_within(b, 2000, "b1");
	assert_true(watcher_pump(&w, "wx", 1000 + SLACK_MS, tok[0]));
	long long d = w.at[w.n - 1] - t0;
	printf("watch saw a campaign on the other replica after %lld ms\n", d);
	worst = d > worst ? d : worst;

	send_cmd(a, "LEADER.CAMPAIGN wx %d HOLDER a1", LEASE_MS);
	t0 = gw_now_ms();
	gw_expect_int(b, 1, "LEADER.RESIGN wx");
	tok[1] = token_within(a, POLL_MS + SLACK_MS, "a1 after b1 resigned");
	assert_true(watcher_pump(&w, "wx", 1000, tok[1]));

	send_cmd(b2, "LEADER.CAMPAIGN wx %d HOLDER b2", LEASE_MS);
	expect_no_reply(b2, 200, "b2");
	redisFree(a); /* a1 released: b2 takes it at its next poll */
	t0 = gw_now_ms();
	tok[2] = token_within(b2, POLL_MS + SLACK_MS, "b2 after a1 closed");
	long long lead_at = gw_now_ms();
	assert_true(watcher_pump(&w, "wx", POLL_MS + SLACK_MS, tok[2]));
	d = w.at[w.n - 1] - lead_at;
	printf("watch saw a leader of the other replica after %lld ms (poll interval %d ms)\n", d,
	       POLL_MS);
	worst = d > worst ? d : worst;
	assert_true(worst < 1000 + SLACK_MS); /* idle poll is 1 s, held poll lease/3 */
	gw_expect_int(b2, 1, "LEADER.RESIGN wx");
	watcher_pump(&w, "wx", 1000 + 500, 0);
	watcher_check(&w, tok, who, 3);
	assert_false(w.seen[w.n - 1].held);
	redisFree(b);
	redisFree(b2);
	redisFree(w.c);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
	assert_int_equal(stop_gw(&gws[1], SIGTERM), 0);
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
	send_cmd(b, "LEADER.CAMPAIGN hx %d WAIT 0 HOLDER b", LEASE_MS);
	/* b waits through renewals of a: more than a lease. The handover
	 * comes half-way between two of b's polls (they started with its
	 * campaign), so a released lock is expected after about POLL_MS/2. */
	expect_no_reply(b, LEASE_MS + POLL_MS / 2, "b while a renews");
	long long t0 = gw_now_ms();
	switch (how) {
	case BY_SIGKILL:
		assert_int_equal(stop_gw(&gws[0], SIGKILL), 128 + SIGKILL);
		break;
	case BY_SIGTERM:
		assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
		break;
	case BY_RESIGN:
		gw_expect_int(a, 1, "LEADER.RESIGN hx");
		break;
	case BY_DISCONNECT:
		redisFree(a);
		a = NULL;
		break;
	}
	long long t2 = token_within(b, 3 * LEASE_MS + SLACK_MS, "b");
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
		assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
	assert_int_equal(stop_gw(&gws[1], SIGTERM), 0);
}

static void t_sigkill_across(void **state)
{
	setup_param(state);
	handover_across(BY_SIGKILL);
}

static void t_sigterm_across(void **state)
{
	setup_param(state);
	handover_across(BY_SIGTERM);
}

static void t_resign_across(void **state)
{
	setup_param(state);
	handover_across(BY_RESIGN);
}

static void t_disconnect_across(void **state)
{
	setup_param(state);
	handover_across(BY_DISCONNECT);
}

/* A client that campaigns with a short WAIT in a loop still takes over from
 * a crashed leader after about a lease (the gateway remembers how long it
 * has seen the holder unchanged across campaigns), and its campaigns read:
 * two writes, the first attempt on a lock this replica had not seen and the
 * takeover. */
static void t_sigkill_campaign_loop(void **state)
{
	setup_param(state);
	start_two(&gws[0], &gws[1]);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]), *ib = gw_connect(&gws[1]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN kl %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	long long writes0 = info_field(ib, "store_requests_acquire");
	assert_int_equal(stop_gw(&gws[0], SIGKILL), 128 + SIGKILL);
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
	assert_int_equal(stop_gw(&gws[1], SIGTERM), 0);
}

/* The leader's gateway stopped past its lease: the other replica leads
 * with a higher token; the stopped one, continued, reports the term lost
 * (push, then -LOST on RESIGN). */
static void t_sigstop_across(void **state)
{
	setup_param(state);
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
	send_cmd(b, "LEADER.CAMPAIGN sx %d WAIT 0 HOLDER b", LEASE_MS);
	expect_no_reply(b, POLL_MS, "b while a leads");
	long long t0 = gw_now_ms();
	kill(gws[0].pid, SIGSTOP);
	long long t2 = token_within(b, 2 * LEASE_MS + SLACK_MS, "b while a is stopped");
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
	watch_now(b, "sx", &l);
	assert_string_equal(l.holder, "b");
	assert_int_equal(l.token, t2);
	assert_int_equal(gw_log_count(&gws[0], "event=40 "), 1);
	close(a.fd);
	redisFree(b);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
	assert_int_equal(stop_gw(&gws[1], SIGTERM), 0);
}

/* A loss on RESP2: no push, -LOST on the next CAMPAIGN about it, then a
 * new campaign starts a new term. Lost by SIGSTOP of the leader's gateway. */
static void t_lost_resp2_campaign_again(void **state)
{
	setup_param(state);
	start_two(&gws[0], &gws[1]);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[1]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN sr %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	send_cmd(b, "LEADER.CAMPAIGN sr %d WAIT 0", LEASE_MS);
	kill(gws[0].pid, SIGSTOP);
	long long t2 = token_within(b, 2 * LEASE_MS + SLACK_MS, "b while a is stopped");
	assert_true(t2 > t1);
	kill(gws[0].pid, SIGCONT);
	gw_sleep_ms(500);
	expect_no_reply(a, 0, "a push on RESP2");
	/* The next LEADER command about it reports the loss, once: CAMPAIGN
	 * (a client checking that it still leads) as RESIGN does. */
	send_cmd(a, "LEADER.CAMPAIGN sr %d", LEASE_MS);
	r = reply_within(a, 1000);
	if (r == NULL || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "LOST ", 5) != 0)
		fail_msg("CAMPAIGN after a loss: wanted -LOST, got %s", r == NULL ? "no reply"
									: r->str  ? r->str
										  : "a value");
	printf("CAMPAIGN after the loss: -%s\n", r->str);
	freeReplyObject(r);
	gw_expect_int(a, 0, "LEADER.RESIGN sr");
	send_cmd(a, "LEADER.CAMPAIGN sr %d WAIT 0", LEASE_MS);
	expect_no_reply(a, 200, "a while b leads");
	gw_expect_int(b, 1, "LEADER.RESIGN sr");
	long long t3 = token_within(a, POLL_MS + SLACK_MS, "a after b resigned");
	assert_true(t3 > t2);
	redisFree(a);
	redisFree(b);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
	assert_int_equal(stop_gw(&gws[1], SIGTERM), 0);
}

/* --- store outage while campaigning --- */

static int moto_port(void)
{
	const char *m = getenv("LG_MOTO");
	const char *colon = strrchr(m, ':');
	assert_non_null(colon);
	return atoi(colon + 1);
}

/* tests/integration/ddb_proxy.py: next to the sources, found from the
 * working directory or from $LG_BIN upwards. */
static void proxy_script(char *out, size_t cap)
{
	const char *rel = "tests/integration/ddb_proxy.py";
	char dir[512];
	if (access(rel, R_OK) == 0) {
		snprintf(out, cap, "%s", rel);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", getenv("LG_BIN"));
	char *slash;
	while ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		snprintf(out, cap, "%s/%s", dir, rel);
		if (access(out, R_OK) == 0)
			return;
	}
	fail_msg("cannot find %s", rel);
}

static int start_proxy(void)
{
	char script[600], port[16], target[16];
	int p = gw_free_port();
	proxy_script(script, sizeof(script));
	snprintf(port, sizeof(port), "%d", p);
	snprintf(target, sizeof(target), "%d", moto_port());
	proxy_pid = fork();
	assert_true(proxy_pid >= 0);
	if (proxy_pid == 0) {
		execlp("python3", "python3", script, port, "127.0.0.1", target, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)p),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		int ok = connect(fd, (struct sockaddr *)&a, sizeof(a));
		close(fd);
		if (ok == 0)
			return p;
		gw_sleep_ms(25);
	}
	fail_msg("ddb_proxy.py did not start");
	return -1;
}

/* The store fails while a session campaigns: the campaign goes on (no
 * error to the client), log 44 once, 49 when the store answers again, then
 * it leads. */
static void t_transient_while_campaigning(void **state)
{
	setup_param(state);
	char url[64];
	int port = start_proxy();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	gw_start(&gws[0], gw_new_table(), "--endpoint", url, NULL);
	redisContext *c = gw_connect(&gws[0]);
	kill(proxy_pid, SIGUSR1); /* the store goes away */
	gw_sleep_ms(100);
	long long t0 = gw_now_ms();
	send_cmd(c, "LEADER.CAMPAIGN tr %d HOLDER t", LEASE_MS);
	/* Several failed acquires: a lease each at most, retried after a
	 * third of a lease. */
	expect_no_reply(c, 3 * LEASE_MS, "a campaign while the store is down");
	int e44 = gw_log_count(&gws[0], "event=44 ");
	printf("store down for %lld ms: event=44 logged %d time(s)\n", gw_now_ms() - t0, e44);
	assert_int_equal(e44, 1);
	assert_int_equal(gw_log_count(&gws[0], "event=49 "), 0);
	kill(proxy_pid, SIGUSR2); /* back */
	long long up = gw_now_ms();
	long long t1 = token_within(c, 2 * LEASE_MS + SLACK_MS, "campaign after the outage");
	printf("leads %lld ms after the store came back\n", gw_now_ms() - up);
	assert_true(t1 >= 1);
	assert_int_equal(gw_log_count(&gws[0], "event=44 "), 1);
	assert_int_equal(gw_log_count(&gws[0], "event=49 "), 1);
	assert_int_equal(gw_log_count(&gws[0], "event=45 "), 1);
	/* A second outage logs 44 once more. (RESIGN answers before its
	 * release is written: let that through first.) */
	gw_expect_int(c, 1, "LEADER.RESIGN tr");
	gw_sleep_ms(300);
	assert_int_equal(gw_log_count(&gws[0], "event=43 "), 0);
	kill(proxy_pid, SIGUSR1);
	gw_sleep_ms(100);
	send_cmd(c, "LEADER.CAMPAIGN tr %d HOLDER t", LEASE_MS);
	expect_no_reply(c, 2 * LEASE_MS, "a campaign while the store is down");
	kill(proxy_pid, SIGUSR2);
	long long t2 = token_within(c, 2 * LEASE_MS + SLACK_MS, "campaign after outage 2");
	assert_true(t2 > t1);
	assert_int_equal(gw_log_count(&gws[0], "event=44 "), 2);
	assert_int_equal(gw_log_count(&gws[0], "event=49 "), 2);
	redisFree(c);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
}

/* --- what an idle follower costs --- */

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

static void t_idle_follower_requests(void **state)
{
	setup_param(state);
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
	send_cmd(b, "LEADER.CAMPAIGN idle %d WAIT 0", LEASE_MS);
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
	expect_no_reply(b, 0, "the follower");
	assert_int_equal(writes, 0);
	long long want = took / POLL_MS;
	assert_true(reads >= want / 2 && reads <= want + 2);
	redisFree(a);
	redisFree(b);
	redisFree(ib);
	assert_int_equal(stop_gw(&gws[0], SIGTERM), 0);
	assert_int_equal(stop_gw(&gws[1], SIGTERM), 0);
}

#define BOTH(t)                                                                                    \
	cmocka_unit_test_prestate_setup_teardown(t, NULL, teardown, (void *)&on_embedded),         \
		cmocka_unit_test_prestate_setup_teardown(t, NULL, teardown, (void *)&on_moto)
#define MOTO(t) cmocka_unit_test_prestate_setup_teardown(t, NULL, teardown, (void *)&on_moto)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(t_one_leader_resign_chain),
		BOTH(t_disconnect_hands_on),
		BOTH(t_campaign_wait_timeout),
		cmocka_unit_test_teardown(t_errors, teardown),
		BOTH(t_sigterm_while_waiting),
		cmocka_unit_test_teardown(t_check_after_stall, teardown),
		BOTH(t_watch_one_replica),
		MOTO(t_watch_across),
		MOTO(t_sigkill_across),
		MOTO(t_sigkill_campaign_loop),
		MOTO(t_sigterm_across),
		MOTO(t_resign_across),
		MOTO(t_disconnect_across),
		MOTO(t_sigstop_across),
		MOTO(t_lost_resp2_campaign_again),
		MOTO(t_transient_while_campaigning),
		MOTO(t_idle_follower_requests),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("LG_TEST_FILTER") != NULL) /* e.g. t_sigstop_across, or t_watch* */
		cmocka_set_test_filter(getenv("LG_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
