/*
 * it_leader: LEADER.CAMPAIGN / RESIGN / WATCH on the real binary with one
 * gateway, on the embedded store and on moto's DynamoDB: resign chains,
 * disconnects, WAIT timeouts, argument errors, SIGTERM while campaigns and
 * watches wait, a stalled loop past a lease, a watcher, and transient store
 * errors through a proxy that can be switched off (moto). Two gateways on
 * one table are it_leader_pair.c.
 *
 * Timing assertions are loose (shared machines); the measured handover
 * times are printed as "handover <how> <where>: N ms".
 */
#include <fcntl.h>
#include <limits.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/gw.h"
#include "tests/support/leaderhelp.h"

/* The gateways of the running test (gw_teardown kills those a failed
 * assertion left behind) and the store proxy of
 * t_transient_while_campaigning. */
static struct gw gws[2];
static pid_t proxy_pid;

static int teardown(void **state)
{
	if (proxy_pid > 0) {
		kill(proxy_pid, SIGKILL);
		waitpid(proxy_pid, NULL, 0);
		proxy_pid = 0;
	}
	return gw_teardown(state);
}

static void start_one(struct gw *g, const struct ldh_param *p)
{
	gw_start(g, p->moto ? gw_new_table() : NULL, NULL);
}

/* --- one gateway --- */

/* N campaigners: one leads; each RESIGN hands the lock to exactly one
 * waiter, with a higher token, until every campaigner has led once. */
static void t_one_leader_resign_chain(void **state)
{
	const struct ldh_param *p = ldh_setup_param(state);
	enum { N = 4 };
	redisContext *c[N], *obs;
	bool led[N] = {false};
	long long last = 0;
	start_one(&gws[0], p);
	obs = gw_connect(&gws[0]);
	for (int i = 0; i < N; i++) {
		c[i] = gw_connect(&gws[0]);
		gw_send(c[i], "LEADER.CAMPAIGN chain %d WAIT 0 HOLDER c%d", LEASE_MS, i);
	}
	int leader = -1;
	for (int round = 0; round < N; round++) {
		/* Exactly one campaigner answers. */
		long long t0 = gw_now_ms();
		int now = -1;
		while (now < 0 && gw_now_ms() - t0 < 3000)
			for (int i = 0; i < N && now < 0; i++) {
				redisReply *r = led[i] ? NULL : gw_reply_within(c[i], 5);
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
				gw_expect_no_reply(c[i], round == 0 ? 300 : 50, "a second leader");
		struct leader l;
		ldh_watch_now(obs, "chain", &l);
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
	ldh_watch_now(obs, "chain", &l);
	assert_false(l.held);
	for (int i = 0; i < N; i++)
		redisFree(c[i]);
	redisFree(obs);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
}

/* The leader's connection closing hands on at once; a campaigner that
 * closed while waiting is out of the race. */
static void t_disconnect_hands_on(void **state)
{
	const struct ldh_param *p = ldh_setup_param(state);
	start_one(&gws[0], p);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]), *c = gw_connect(&gws[0]);
	long long t1 = 0;
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN dc %d HOLDER a", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	t1 = r->integer;
	freeReplyObject(r);
	gw_send(b, "LEADER.CAMPAIGN dc %d HOLDER b", LEASE_MS);
	gw_expect_no_reply(b, 200, "b while a leads");
	redisFree(b); /* b gives up while waiting */
	gw_send(c, "LEADER.CAMPAIGN dc %d HOLDER c", LEASE_MS);
	gw_expect_no_reply(c, 200, "c while a leads");
	long long t0 = gw_now_ms();
	redisFree(a);
	long long t2 = gw_token_within(c, LEASE_MS, "c after a closed");
	long long took = gw_now_ms() - t0;
	printf("handover disconnect one replica (%s): %lld ms\n", p->moto ? "moto" : "embedded",
	       took);
	assert_int_equal(t2, t1 + 1);	  /* b's cancelled campaign wrote nothing */
	assert_true(took < LEASE_MS / 2); /* a release, not a takeover */
	redisContext *o = gw_connect(&gws[0]);
	struct leader l;
	ldh_watch_now(o, "dc", &l);
	assert_string_equal(l.holder, "c");
	assert_int_equal(l.token, t2);
	redisFree(c);
	redisFree(o);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
}

/* WAIT runs out: nil, nothing left behind; the session can campaign again. */
static void t_campaign_wait_timeout(void **state)
{
	const struct ldh_param *p = ldh_setup_param(state);
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
	gw_send(b, "LEADER.CAMPAIGN wt %d WAIT 5000", LEASE_MS);
	gw_expect_no_reply(b, 200, "b while a leads");
	gw_expect_int(a, 1, "LEADER.RESIGN wt");
	long long t2 = gw_token_within(b, 2000, "b after a resigned");
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
	ldh_watch_now(b, "wt", &l);
	assert_int_equal(l.held, led);
	gw_expect_int(a, led ? 1 : 0, "LEADER.RESIGN wt");
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
}

static void t_errors(void **state)
{
	(void)state;
	start_one(&gws[0], &ldh_embedded);
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
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
}

/* LOCK.STATE name on c: held (0/1) and the fencing token of the item. */
static void lock_state(redisContext *c, const char *name, long long *held, long long *token)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
		fail_msg("LOCK.STATE %s: type %d (%s)", name, r->type, r->str ? r->str : "");
	*held = *token = -1;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		if (strcmp(r->element[i]->str, "held") == 0)
			*held = r->element[i + 1]->integer;
		else if (strcmp(r->element[i]->str, "fencing-token") == 0)
			*token = r->element[i + 1]->integer;
	}
	freeReplyObject(r);
}

/* SIGTERM while a campaign and a watch wait: the gateway ends within its
 * shutdown bound, the leader's lease released, the waiting connections
 * closed. The release: on moto, another gateway on the table reads the
 * item free right after the exit (a lease not released would still be
 * held for its 2 s) and campaigns at once, without a takeover; on the
 * embedded store, which ends with the process, the log says the term
 * ended (cancelled, its token) and no release failed. */
static void t_sigterm_while_waiting(void **state)
{
	const struct ldh_param *p = ldh_setup_param(state);
	char table[64] = "";
	if (p->moto)
		snprintf(table, sizeof(table), "%s", gw_new_table());
	gw_start(&gws[0], p->moto ? table : NULL, NULL);
	if (p->moto)
		gw_start(&gws[1], table, NULL);
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]), *w = gw_connect(&gws[0]);
	redisReply *r = gw_cmd(a, "LEADER.CAMPAIGN st %d", LEASE_MS);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t1 = r->integer;
	freeReplyObject(r);
	gw_send(b, "LEADER.CAMPAIGN st %d WAIT 0", LEASE_MS);
	gw_send(w, "LEADER.WATCH st AFTER %lld", t1);
	gw_expect_no_reply(b, 200, "b while a leads");
	gw_expect_no_reply(w, 0, "the watcher");
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
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
	char ended[96];
	assert_int_equal(gw_log_count(&gws[0], "no longer leads st: its session closed or stopped "
					       "campaigning event_id=46 lock=st "),
			 1);
	snprintf(ended, sizeof(ended), "token=%lld reason=session_ended", t1);
	assert_int_equal(gw_log_count(&gws[0], ended), 1);
	assert_int_equal(gw_log_count(&gws[0], "event_id=43 "), 0); /* no release failed */
	if (p->moto) {
		redisContext *o = gw_connect(&gws[1]);
		long long held, token;
		lock_state(o, "st", &held, &token);
		printf("  after the exit, the other gateway reads: held %lld, token %lld\n", held,
		       token);
		assert_int_equal(held, 0);
		/* t1, or t1 + 1: b's campaign, queued on the same gateway, can be
		 * handed the term by a's release on the way out (one more
		 * acquire), its write then given back as its connection closes;
		 * either way nothing holds the item now. */
		assert_true(token == t1 || token == t1 + 1);
		/* Its first attempt writes at once (it never saw st held). */
		gw_send(o, "LEADER.CAMPAIGN st %d WAIT 0", LEASE_MS);
		assert_int_equal(gw_token_within(o, SLACK_MS, "a campaign on the other gateway"),
				 token + 1);
		assert_int_equal(gw_log_count(&gws[1], "event_id=41 "), 0); /* not a takeover */
		redisFree(o);
		assert_int_equal(gw_signal(&gws[1], SIGTERM), 0);
	}
}

/* True when process pid is in a write(2) to the file at path (a FIFO). */
static bool blocked_writing(pid_t pid, const char *path)
{
	char f[64], link[PATH_MAX], want[PATH_MAX];
	long nr = -1;
	unsigned fd = 0;
	if (realpath(path, want) == NULL)
		return false;
	snprintf(f, sizeof(f), "/proc/%ld/syscall", (long)pid);
	FILE *in = fopen(f, "r");
	assert_non_null(in);
	int got = fscanf(in, "%ld %x", &nr, &fd);
	fclose(in);
	if (got != 2 || nr != SYS_write)
		return false;
	snprintf(f, sizeof(f), "/proc/%ld/fd/%u", (long)pid, fd);
	ssize_t n = readlink(f, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, want) == 0;
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
	/* Fill the pipe with session logs until the gateway blocks. A PING
	 * not answered at once only hints at it (a loaded machine is slow
	 * too): blocked is the gateway's process waiting in a write to the
	 * FIFO, as /proc says. */
	bool stalled = false;
	for (int i = 0; i < 20000 && !stalled; i++) {
		redisContext *c = gw_connect(&gws[0]);
		gw_send(c, "PING");
		r = gw_reply_within(c, 50);
		if (r != NULL)
			freeReplyObject(r);
		else
			stalled = blocked_writing(gws[0].pid, fifo);
		redisFree(c);
	}
	assert_true(stalled);
	gw_sleep_ms(1500); /* past the lease end, the loop blocked */
	gw_send(a, "LEADER.CAMPAIGN stall 1000");
	gw_sleep_ms(100);
	close(rd); /* the blocked write fails: the loop runs again */
	unlink(fifo);
	r = gw_reply_within(a, 3000);
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
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
}

static void t_watch_one_replica(void **state)
{
	const struct ldh_param *p = ldh_setup_param(state);
	start_one(&gws[0], p);
	struct watcher w;
	long long tok[3];
	const char *who[3] = {"a", "b", "c"};
	redisContext *a = gw_connect(&gws[0]), *b = gw_connect(&gws[0]), *c = gw_connect(&gws[0]);
	ldh_watcher_start(&w, &gws[0], "wl");
	assert_false(w.seen[0].held);
	/* A short TIMEOUT answers the unchanged state. */
	redisContext *t = gw_connect(&gws[0]);
	long long t0 = gw_now_ms();
	gw_expect_nil(t, "LEADER.WATCH wl AFTER 0 TIMEOUT 300");
	assert_true(gw_now_ms() - t0 >= 250);
	redisFree(t);

	t0 = gw_now_ms();
	gw_send(a, "LEADER.CAMPAIGN wl %d HOLDER a", LEASE_MS);
	tok[0] = gw_token_within(a, 2000, "a");
	assert_true(ldh_watcher_pump(&w, "wl", 1000, tok[0]));
	printf("watch saw a campaign (%s, one replica) after %lld ms\n",
	       p->moto ? "moto" : "embedded", w.at[w.n - 1] - t0);
	gw_send(b, "LEADER.CAMPAIGN wl %d HOLDER b", LEASE_MS);
	gw_expect_no_reply(b, 100, "b");
	gw_expect_int(a, 1, "LEADER.RESIGN wl");
	tok[1] = gw_token_within(b, 2000, "b after a resigned");
	assert_true(ldh_watcher_pump(&w, "wl", 1000, tok[1]));
	gw_send(c, "LEADER.CAMPAIGN wl %d HOLDER c", LEASE_MS);
	gw_expect_no_reply(c, 100, "c");
	redisFree(b);
	tok[2] = gw_token_within(c, 2000, "c after b closed");
	assert_true(ldh_watcher_pump(&w, "wl", 1000, tok[2]));
	assert_true(tok[0] < tok[1] && tok[1] < tok[2]);
	gw_expect_int(c, 1, "LEADER.RESIGN wl");
	ldh_watcher_pump(&w, "wl", 500, 0);
	ldh_watcher_check(&w, tok, who, 3);
	assert_false(w.seen[w.n - 1].held); /* the last resign is seen too */
	redisFree(a);
	redisFree(c);
	redisFree(w.c);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
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
	ldh_setup_param(state);
	char url[64];
	int port = start_proxy();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	gw_start(&gws[0], gw_new_table(), "--endpoint", url, NULL);
	redisContext *c = gw_connect(&gws[0]);
	kill(proxy_pid, SIGUSR1); /* the store goes away */
	gw_sleep_ms(100);
	long long t0 = gw_now_ms();
	gw_send(c, "LEADER.CAMPAIGN tr %d HOLDER t", LEASE_MS);
	/* Several failed acquires: a lease each at most, retried after a
	 * third of a lease. */
	gw_expect_no_reply(c, 3 * LEASE_MS, "a campaign while the store is down");
	int e44 = gw_log_count(&gws[0], "event_id=44 ");
	printf("store down for %lld ms: event_id=44 logged %d time(s)\n", gw_now_ms() - t0, e44);
	assert_int_equal(e44, 1);
	assert_int_equal(gw_log_count(&gws[0], "event_id=49 "), 0);
	kill(proxy_pid, SIGUSR2); /* back */
	long long up = gw_now_ms();
	long long t1 = gw_token_within(c, 2 * LEASE_MS + SLACK_MS, "campaign after the outage");
	printf("leads %lld ms after the store came back\n", gw_now_ms() - up);
	assert_true(t1 >= 1);
	assert_int_equal(gw_log_count(&gws[0], "event_id=44 "), 1);
	assert_int_equal(gw_log_count(&gws[0], "event_id=49 "), 1);
	assert_int_equal(gw_log_count(&gws[0], "event_id=45 "), 1);
	/* A second outage logs 44 once more. (RESIGN answers before its
	 * release is written: let that through first.) */
	gw_expect_int(c, 1, "LEADER.RESIGN tr");
	gw_sleep_ms(300);
	assert_int_equal(gw_log_count(&gws[0], "event_id=43 "), 0);
	kill(proxy_pid, SIGUSR1);
	gw_sleep_ms(100);
	gw_send(c, "LEADER.CAMPAIGN tr %d HOLDER t", LEASE_MS);
	gw_expect_no_reply(c, 2 * LEASE_MS, "a campaign while the store is down");
	kill(proxy_pid, SIGUSR2);
	long long t2 = gw_token_within(c, 2 * LEASE_MS + SLACK_MS, "campaign after outage 2");
	assert_true(t2 > t1);
	assert_int_equal(gw_log_count(&gws[0], "event_id=44 "), 2);
	assert_int_equal(gw_log_count(&gws[0], "event_id=49 "), 2);
	redisFree(c);
	assert_int_equal(gw_signal(&gws[0], SIGTERM), 0);
}

#define BOTH(t)                                                                                    \
	cmocka_unit_test_prestate_setup_teardown(t, NULL, teardown, (void *)&ldh_embedded),        \
		cmocka_unit_test_prestate_setup_teardown(t, NULL, teardown, (void *)&ldh_moto)
#define MOTO(t) cmocka_unit_test_prestate_setup_teardown(t, NULL, teardown, (void *)&ldh_moto)

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
		MOTO(t_transient_while_campaigning),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("LG_TEST_FILTER") != NULL) /* e.g. t_sigstop_across, or t_watch* */
		cmocka_set_test_filter(getenv("LG_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
