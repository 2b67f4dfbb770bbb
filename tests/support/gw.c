/*
 * gw: see gw.h.
 */
#include "tests/support/gw.h"
#include "tests/support/gwproc.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

long long gw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gw_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

bool gw_have_moto(void)
{
	return getenv("LG_MOTO") != NULL;
}

const char *gw_new_table(void)
{
	static char name[64];
	static int n;
	snprintf(name, sizeof(name), "lg-%ld-%d", (long)getpid(), ++n);
	return name;
}

int gw_free_port(void)
{
	int port = gp_free_port();
	assert_true(port > 0);
	return port;
}

/* Gateways started and not reaped yet, for gw_teardown (a failed test's
 * stack, and the struct gw on it, is gone by then). */
static pid_t running[16];

/* Replaces from by to in running: (0, pid) remembers pid, (pid, 0) forgets it. */
static void track(pid_t from, pid_t to)
{
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++)
		if (running[i] == from) {
			running[i] = to;
			return;
		}
	if (from == 0) {
		kill(to, SIGKILL);
		waitpid(to, NULL, 0);
		fail_msg("more than %zu gateways running", sizeof(running) / sizeof(running[0]));
	}
}

long gw_open_files;

/* The last bytes of a log (up to cap - 1), for a failure's message: the
 * run's directory, and the log with it, may be gone when it is read. */
static const char *log_tail(const char *path, char *buf, size_t cap)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return buf;
	if (fseek(f, 0, SEEK_END) == 0) {
		long end = ftell(f);
		long from = end > (long)cap - 1 ? end - ((long)cap - 1) : 0;
		if (fseek(f, from, SEEK_SET) == 0) {
			size_t n = fread(buf, 1, cap - 1, f);
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static void start(struct gw *g, const char *table, bool wait, va_list ap)
{
	const char *bin = getenv("LG_BIN");
	char port[16];
	const char *argv[48];
	int n = 0;
	static int seq;

	assert_non_null(bin);
	memset(g, 0, sizeof(*g));
	g->port = gw_free_port();
	snprintf(port, sizeof(port), "%d", g->port);
	snprintf(g->log, sizeof(g->log), "%s/gw-%ld-%d.log",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp", (long)getpid(), ++seq);
	argv[n++] = bin;
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n++] = "--pg-port";
	argv[n++] = "0";
	argv[n++] = "--admin-port";
	argv[n++] = "0";
	argv[n++] = "--log-level";
	argv[n++] = "debug";
	if (table != NULL) {
		assert_true(gw_have_moto());
		argv[n++] = "--table";
		argv[n++] = table;
		argv[n++] = "--create-table";
	}
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && n < 46)
		argv[n++] = a;
	argv[n] = NULL;
	g->pid = gp_spawn(argv, g->log, table != NULL, gw_open_files);
	assert_true(g->pid > 0);
	track(0, g->pid);
	if (!wait)
		return;
	int ready = gp_wait_ready(g->pid, g->port);
	char tail[600];
	if (ready > 0)
		fail_msg("leasegate exited at start (see %s); its log ends:\n%s", g->log,
			 log_tail(g->log, tail, sizeof(tail)));
	if (ready < 0)
		fail_msg("leasegate did not start on port %d (see %s)", g->port, g->log);
}

void gw_start(struct gw *g, const char *table, ...)
{
	va_list ap;
	va_start(ap, table);
	start(g, table, true, ap);
	va_end(ap);
}

void gw_spawn(struct gw *g, const char *table, ...)
{
	va_list ap;
	va_start(ap, table);
	start(g, table, false, ap);
	va_end(ap);
}

bool gw_can_connect(int port)
{
	return gp_can_connect(port);
}

struct gw_port gw_free_port_arg(void)
{
	struct gw_port p = {.n = gw_free_port()};
	snprintf(p.arg, sizeof(p.arg), "%d", p.n);
	return p;
}

static int reaped(struct gw *g, int status)
{
	track(g->pid, 0);
	g->pid = 0;
	return status;
}

int gw_wait(struct gw *g)
{
	int status;
	if (g->pid <= 0)
		fail_msg("gw_wait: the gateway is not running");
	for (int i = 0; i < 1000; i++) {
		if (waitpid(g->pid, &status, WNOHANG) == g->pid)
			return reaped(g, WIFEXITED(status) ? WEXITSTATUS(status)
							   : 128 + WTERMSIG(status));
		gw_sleep_ms(10);
	}
	kill(g->pid, SIGKILL);
	waitpid(g->pid, &status, 0);
	return reaped(g, -1);
}

int gw_signal(struct gw *g, int sig)
{
	if (g->pid <= 0)
		fail_msg("gw_signal %d: the gateway is not running", sig);
	kill(g->pid, sig);
	if (sig != SIGTERM && sig != SIGINT && sig != SIGKILL)
		return 0;
	return gw_wait(g);
}

int gw_teardown(void **state)
{
	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++) {
		int status;
		/* 0: our child, not reaped, still running (or stopped) */
		if (running[i] > 0 && waitpid(running[i], &status, WNOHANG) == 0) {
			kill(running[i], SIGKILL);
			waitpid(running[i], &status, 0);
		}
		running[i] = 0;
	}
	return 0;
}

redisContext *gw_connect(const struct gw *g)
{
	redisContext *c = redisConnect("127.0.0.1", g->port);
	assert_non_null(c);
	if (c->err)
		fail_msg("connect to %d: %s", g->port, c->errstr);
	return c;
}

static redisReply *vcmd(redisContext *c, const char *fmt, va_list ap)
{
	redisReply *r = redisvCommand(c, fmt, ap);
	if (r == NULL)
		fail_msg("no reply: %s", c->errstr);
	return r;
}

redisReply *gw_cmd(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = vcmd(c, fmt, ap);
	va_end(ap);
	return r;
}

void gw_send(redisContext *c, const char *fmt, ...)
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

redisReply *gw_reply_within(redisContext *c, int ms)
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

long long gw_token_within(redisContext *c, int ms, const char *what)
{
	redisReply *r = gw_reply_within(c, ms);
	if (r == NULL)
		fail_msg("%s: no reply within %d ms", what, ms);
	if (r->type != REDIS_REPLY_INTEGER)
		fail_msg("%s: wanted a token, got type %d (%s)", what, r->type,
			 r->str ? r->str : "");
	long long t = r->integer;
	freeReplyObject(r);
	return t;
}

void gw_expect_no_reply(redisContext *c, int ms, const char *what)
{
	redisReply *r = gw_reply_within(c, ms);
	if (r != NULL)
		fail_msg("%s: unexpected reply type %d (%lld, %s)", what, r->type, r->integer,
			 r->str ? r->str : "");
}

void gw_expect_int(redisContext *c, long long want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = vcmd(c, fmt, ap);
	va_end(ap);
	if (r->type != REDIS_REPLY_INTEGER || r->integer != want)
		fail_msg("'%s': wanted :%lld, got type %d (%lld, %s)", fmt, want, r->type,
			 r->integer, r->str ? r->str : "");
	freeReplyObject(r);
}

void gw_expect_nil(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = vcmd(c, fmt, ap);
	va_end(ap);
	if (r->type != REDIS_REPLY_NIL)
		fail_msg("'%s': wanted nil, got type %d (%lld, %s)", fmt, r->type, r->integer,
			 r->str ? r->str : "");
	freeReplyObject(r);
}

void gw_expect_ok(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = vcmd(c, fmt, ap);
	va_end(ap);
	if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)
		fail_msg("'%s': wanted +OK, got type %d (%lld, %s)", fmt, r->type, r->integer,
			 r->str ? r->str : "");
	freeReplyObject(r);
}

void gw_expect_err(redisContext *c, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = vcmd(c, fmt, ap);
	va_end(ap);
	if (r->type != REDIS_REPLY_ERROR || strncmp(r->str, prefix, strlen(prefix)) != 0)
		fail_msg("'%s': wanted -%s..., got type %d (%s)", fmt, prefix, r->type,
			 r->str ? r->str : "");
	freeReplyObject(r);
}

int gw_log_count(const struct gw *g, const char *needle)
{
	FILE *f = fopen(g->log, "r");
	char line[4096];
	int n = 0;
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}
