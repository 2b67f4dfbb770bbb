/*
 * it_redis: the real leasegate binary ($LG_BIN) spoken to over the Redis
 * protocol, with hiredis and with raw sockets (for exact bytes, RESP3 and
 * broken requests). Each test starts its own server on a free port, on
 * the embedded store (tests/support/gw.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <hiredis/hiredis.h>

#include "tests/support/gw.h"

static int raw_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		assert_true(w > 0);
		c += w;
		n -= (size_t)w;
	}
}

/* Reads until `want` bytes arrived, EOF, or 3 s; returns the count and sets
 * *eof if the peer closed after them (checked for up to 300 ms more). */
static size_t recv_upto(int fd, char *buf, size_t want, bool *eof)
{
	size_t got = 0;
	*eof = false;
	int64_t waited = 0;
	while (waited < 3000) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int timeout = got >= want ? 300 : 50;
		if (poll(&p, 1, timeout) <= 0) {
			if (got >= want)
				return got;
			waited += 50;
			continue;
		}
		char tmp[4096];
		ssize_t r = recv(fd, tmp, sizeof(tmp), 0);
		if (r <= 0) {
			*eof = true;
			return got;
		}
		size_t k = (size_t)r;
		if (got + k > want)
			k = want > got ? want - got : 0;
		memcpy(buf + got, tmp, k);
		got += k;
	}
	return got;
}

/* Sends `req` on a fresh connection and checks the exact reply bytes, and
 * whether the server closed the connection after them. */
static void exchange(int port, const char *req, size_t reqlen, const char *want, bool closes)
{
	int fd = raw_connect(port);
	char buf[8192];
	bool eof;
	assert_true(fd >= 0);
	send_all(fd, req, reqlen);
	size_t n = recv_upto(fd, buf, strlen(want), &eof);
	if (n != strlen(want) || memcmp(buf, want, n) != 0)
		fail_msg("request %.*s: got %.*s, want %s", (int)reqlen, req, (int)n, buf, want);
	assert_int_equal(eof, closes);
	close(fd);
}

#define EXCHANGE(port, req, want, closes) exchange(port, req, sizeof(req) - 1, want, closes)

static void expect_status(redisContext *c, const char *want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = redisvCommand(c, fmt, ap);
	va_end(ap);
	assert_non_null(r);
	if ((r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_STRING &&
	     r->type != REDIS_REPLY_ERROR) ||
	    strcmp(r->str, want) != 0)
		fail_msg("%s: got type %d \"%s\", want \"%s\"", fmt, r->type, r->str ? r->str : "",
			 want);
	freeReplyObject(r);
}

/* ---- tests ---- */

static void test_ping_echo(void **state)
{
	struct gw s;
	gw_start(&s, NULL, NULL);
	redisContext *c = gw_connect(&s);
	expect_status(c, "PONG", "PING");
	expect_status(c, "hi there", "PING %s", "hi there");
	expect_status(c, "hello world", "ECHO %s", "hello world");
	expect_status(c, "OK", "SELECT 0");
	expect_status(c, "OK", "CLIENT SETNAME %s", "app-1");
	expect_status(c, "app-1", "CLIENT GETNAME");
	redisReply *r = redisCommand(c, "CLIENT ID");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_true(r->integer > 0);
	freeReplyObject(r);
	r = redisCommand(c, "INFO");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_non_null(strstr(r->str, "# Server\r\nredis_version:"));
	assert_non_null(strstr(r->str, "loading:0\r\n"));
	assert_non_null(strstr(r->str, "connected_clients:1\r\n"));
	freeReplyObject(r);
	r = redisCommand(c, "COMMAND COUNT");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_true(r->integer >= 11); /* the built-ins, and whatever is added */
	freeReplyObject(r);
	r = redisCommand(c, "CLIENT LIST");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_non_null(strstr(r->str, "name=app-1 "));
	assert_non_null(strstr(r->str, " cmd=client|list "));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_hello3_and_inline(void **state)
{
	struct gw s;
	gw_start(&s, NULL, NULL);
	EXCHANGE(s.port, "HELLO 3\r\n",
		 "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.0.0\r\n"
		 "$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:",
		 false);
	/* RESP2 null before HELLO 3, RESP3 null after */
	{
		int fd = raw_connect(s.port);
		char buf[1024];
		bool eof;
		send_all(fd, "CLIENT GETNAME\r\nHELLO 3\r\nCLIENT GETNAME\r\n", 41);
		size_t n = recv_upto(fd, buf, sizeof(buf) - 1, &eof);
		buf[n] = '\0';
		assert_memory_equal(buf, "$-1\r\n%7\r\n", 9);
		assert_non_null(strstr(buf, "*0\r\n_\r\n")); /* modules [] then null */
		close(fd);
	}
	EXCHANGE(s.port, "PING\r\n", "+PONG\r\n", false);
	EXCHANGE(s.port, "PING\n", "+PONG\r\n", false);
	EXCHANGE(s.port, "ECHO \"a b\"\r\n", "$3\r\na b\r\n", false);
	EXCHANGE(s.port, "ECHO 'it\\'s'\r\nPING\r\n", "$4\r\nit's\r\n+PONG\r\n", false);
	EXCHANGE(s.port, "\r\n*0\r\nPING\r\n", "+PONG\r\n", false);
	EXCHANGE(s.port, "HELLO 4\r\n", "-NOPROTO unsupported protocol version\r\n", false);
	EXCHANGE(s.port, "QUIT\r\nPING\r\n", "+OK\r\n", true);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_errors_as_redis(void **state)
{
	struct gw s;
	gw_start(&s, NULL, NULL);
	EXCHANGE(s.port, "FOO a b\r\n",
		 "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n", false);
	EXCHANGE(s.port, "lock.nothing\r\n",
		 "-ERR unknown command 'lock.nothing', with args beginning with: \r\n", false);
	EXCHANGE(s.port, "ECHO\r\n", "-ERR wrong number of arguments for 'echo' command\r\n",
		 false);
	EXCHANGE(s.port, "client setname\r\n",
		 "-ERR wrong number of arguments for 'client|setname' command\r\n", false);
	EXCHANGE(s.port, "CLIENT nope\r\n", "-ERR unknown subcommand 'nope'. Try CLIENT HELP.\r\n",
		 false);
	EXCHANGE(s.port, "SELECT 3\r\n", "-ERR DB index is out of range\r\n", false);
	EXCHANGE(s.port, "CONFIG GET nothing*\r\n", "*0\r\n", false);
	EXCHANGE(s.port, "CONFIG GET MAXC* save\r\n",
		 "*4\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n$4\r\nsave\r\n$0\r\n\r\n", false);
	EXCHANGE(s.port, "CONFIG GET maxclients\r\n", "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n",
		 false);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_pipelining(void **state)
{
	struct gw s;
	gw_start(&s, NULL, NULL);
	redisContext *c = gw_connect(&s);
	enum { N = 5000 };
	for (int i = 0; i < N; i++)
		assert_int_equal(redisAppendCommand(c, "ECHO %d", i), REDIS_OK);
	for (int i = 0; i < N; i++) {
		redisReply *r;
		char want[16];
		assert_int_equal(redisGetReply(c, (void **)&r), REDIS_OK);
		snprintf(want, sizeof(want), "%d", i);
		assert_int_equal(r->type, REDIS_REPLY_STRING);
		assert_string_equal(r->str, want);
		freeReplyObject(r);
	}
	redisFree(c);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

/* A protocol error answers and closes that connection only. */
static void test_protocol_error_closes_one(void **state)
{
	struct gw s;
	gw_start(&s, NULL, NULL);
	redisContext *other = gw_connect(&s);
	expect_status(other, "PONG", "PING");
	EXCHANGE(s.port, "PING\r\n*1\r\nx\r\nPING\r\n",
		 "+PONG\r\n-ERR Protocol error: expected '$', got 'x'\r\n", true);
	EXCHANGE(s.port, "*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true);
	EXCHANGE(s.port, "*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n", true);
	EXCHANGE(s.port, "PING \"a\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n",
		 true);
	expect_status(other, "PONG", "PING");
	redisFree(other);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_limits(void **state)
{
	struct gw s;
	gw_start(&s, NULL, "--max-args", "4", "--max-bulk", "600", "--max-query-buffer", "1024",
		 "--max-inline", "64", NULL);
	EXCHANGE(s.port, "*4\r\n$4\r\nECHO\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
		 "-ERR wrong number of arguments for 'echo' command\r\n", false);
	EXCHANGE(s.port, "*5\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true);
	EXCHANGE(s.port, "*2\r\n$4\r\nECHO\r\n$601\r\n",
		 "-ERR Protocol error: invalid bulk length\r\n", true);
	{
		/* two arguments of 600 bytes: more than 1024 buffered, no command */
		char req[1400];
		int n = snprintf(req, sizeof(req),
				 "*3\r\n$4\r\nECHO\r\n$600\r\n%0600d\r\n$600\r\n%0500d", 0, 0);
		exchange(s.port, req, (size_t)n,
			 "-ERR Protocol error: query buffer limit reached\r\n", true);
		n = snprintf(req, sizeof(req), "*2\r\n$4\r\nECHO\r\n$600\r\n%0600d\r\n", 0);
		int fd = raw_connect(s.port);
		char buf[700];
		bool eof;
		send_all(fd, req, (size_t)n);
		assert_int_equal(recv_upto(fd, buf, 608, &eof), 608); /* at the limit: fine */
		assert_false(eof);
		close(fd);
	}
	EXCHANGE(s.port,
		 "ECHO 01234567890123456789012345678901234567890123456789012345678901234567890",
		 "-ERR Protocol error: too big inline request\r\n", true);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_maxclients(void **state)
{
	struct gw s;
	gw_start(&s, NULL, "--maxclients", "2", NULL);
	redisContext *a = gw_connect(&s), *b = gw_connect(&s);
	expect_status(a, "PONG", "PING");
	expect_status(b, "PONG", "PING");
	EXCHANGE(s.port, "PING\r\n", "-ERR max number of clients reached\r\n", true);
	redisFree(b);
	gw_sleep_ms(100);
	redisContext *c = gw_connect(&s);
	expect_status(c, "PONG", "PING");
	/* INFO stats counts as Redis does: gw_start's probe, a, b and c were
	 * accepted, one refused; the probe's PING (gw_start waits for a PING
	 * answered without -LOADING), three PINGs and this INFO ran */
	redisReply *r = redisCommand(c, "INFO stats");
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_non_null(strstr(r->str, "total_connections_received:4\r\n"));
	assert_non_null(strstr(r->str, "rejected_connections:1\r\n"));
	assert_non_null(strstr(r->str, "total_commands_processed:5\r\n"));
	freeReplyObject(r);
	redisFree(a);
	redisFree(c);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static long long cpu_ticks(pid_t pid);

/* Started under an open files limit of 96 (as a systemd unit or a
 * container may impose) with --maxclients 100: the gateway says at start
 * that it lowers maxclients to what fits (96 minus its 32 + 16 admin
 * descriptors: 48), refuses the rest with Redis's error instead of
 * running out of descriptors, stays idle (no accept loop spinning), logs
 * a bounded number of lines, and serves a new client once the others are
 * gone. */
static void test_open_files_limit(void **state)
{
	struct gw s;
	gw_open_files = 96;
	gw_start(&s, NULL, "--maxclients", "100", NULL);
	gw_open_files = 0;
	assert_int_equal(gw_log_count(&s, "maxclients lowered to 48"), 1);

	enum { N = 80 };
	int fds[N], refused = 0;
	for (int i = 0; i < N; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)s.port),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof(a)), 0);
	}
	long long t0 = gw_now_ms(), c0 = cpu_ticks(s.pid);
	gw_sleep_ms(1000);
	long long c1 = cpu_ticks(s.pid), t1 = gw_now_ms();
	for (int i = 0; i < N; i++) {
		char buf[64] = {0};
		ssize_t r = recv(fds[i], buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (r > 0) {
			assert_string_equal(buf, "-ERR max number of clients reached\r\n");
			refused++;
		}
	}
	/* 48 taken, of which gw_start's probe has gone: 80 - 47 refused */
	assert_true(refused >= N - 48 && refused <= N - 47);
	/* idle: far from the whole CPU a spinning accept loop burns (ticks
	 * are 1/100 s) */
	assert_true((c1 - c0) * 10 < (t1 - t0) / 2);
	assert_true(gw_log_count(&s, "refused a client") <= 3); /* a line a second */
	for (int i = 0; i < N; i++)
		close(fds[i]);
	gw_sleep_ms(100);
	redisContext *c = gw_connect(&s);
	expect_status(c, "PONG", "PING");
	redisReply *r = redisCommand(c, "INFO clients");
	assert_non_null(r);
	assert_non_null(strstr(r->str, "maxclients:48\r\n"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

/* The timer column ("tr") of the gateway's side of the TCP connection
 * whose client end has local port cport, from /proc/net/tcp: 2 while a
 * keepalive timer is pending, 0 with no timer; *when: its time left, in
 * clock ticks (1/100 s). -1 when not found. */
static int server_side_timer(int gw_port, int cport, unsigned long *when)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[512];
	int tr = -1;
	assert_non_null(f);
	while (tr < 0 && fgets(line, sizeof(line), f) != NULL) {
		unsigned lport, rport, st, t;
		unsigned long w;
		if (sscanf(line, " %*d: %*8x:%4x %*8x:%4x %2x %*8x:%*8x %2x:%8lx", &lport, &rport,
			   &st, &t, &w) == 5 &&
		    (int)lport == gw_port && (int)rport == cport && st == 1 /* established */) {
			tr = (int)t;
			*when = w;
		}
	}
	fclose(f);
	return tr;
}

static int client_port(redisContext *c)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	assert_int_equal(getsockname(c->fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

/* --tcp-keepalive: the gateway's side of a client connection probes a
 * silent client (a keepalive timer pending); 0 turns it off. */
static void test_tcp_keepalive(void **state)
{
	struct gw s, off;
	gw_start(&s, NULL, "--tcp-keepalive", "7s", NULL);
	gw_start(&off, NULL, "--tcp-keepalive", "0", NULL);
	redisContext *a = gw_connect(&s), *b = gw_connect(&off);
	expect_status(a, "PONG", "PING");
	expect_status(b, "PONG", "PING");
	unsigned long when = 0;
	assert_int_equal(server_side_timer(s.port, client_port(a), &when), 2);
	assert_true(when <= 700); /* 7 s, not the system's 2 hours */
	assert_int_equal(server_side_timer(off.port, client_port(b), &when), 0);
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
	assert_int_equal(gw_signal(&off, SIGTERM), 0);
}

/* A number from INFO's text, -1 if the field is missing. */
static long long info_num(const struct gw *g, const char *section, const char *field)
{
	redisContext *c = gw_connect(g);
	redisReply *r = redisCommand(c, "INFO %s", section);
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	char key[64];
	snprintf(key, sizeof(key), "\n%s:", field);
	const char *at = strstr(r->str, key);
	long long v = at ? strtoll(at + strlen(key), NULL, 10) : -1;
	freeReplyObject(r);
	redisFree(c);
	return v;
}

/* n PINGs on one connection, written by a child process as fast as the
 * socket takes them while this one reads the n PONGs. */
static void stream_pings(int port, int n)
{
	int fd = raw_connect(port);
	assert_true(fd >= 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		static const char ping[] = "PING\r\n";
		for (int i = 0; i < n; i++)
			if (send(fd, ping, sizeof(ping) - 1, MSG_NOSIGNAL) != sizeof(ping) - 1)
				_exit(1);
		_exit(0);
	}
	size_t want = (size_t)n * 7, got = 0; /* "+PONG\r\n" */
	char buf[65536];
	while (got < want) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		assert_int_equal(poll(&p, 1, 5000), 1);
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		assert_true(r > 0);
		got += (size_t)r;
	}
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(got, want);
	close(fd);
}

/* The CPU time (user + system, clock ticks) process pid has used. */
static long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* after the command name */
	assert_non_null(p);
	unsigned long long ut, st;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	assert_int_equal(
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st),
		2);
	return (long long)(ut + st);
}

/* --busy-poll-us (gateway/conn/loop.h): on by default (100 us), a stream of
 * requests is found by polling instead of by waking the sleeping loop;
 * 0 never polls; and a gateway with nothing to do sleeps: no CPU time. */
static void test_busy_poll(void **state)
{
	struct gw on, off;
	gw_start(&on, NULL, NULL);
	gw_start(&off, NULL, "--busy-poll-us", "0", NULL);
	assert_int_equal(info_num(&on, "stats", "busy_poll_max_us"), 100);
	assert_int_equal(info_num(&off, "stats", "busy_poll_max_us"), 0);
	stream_pings(on.port, 50000);
	stream_pings(off.port, 50000);
	assert_true(info_num(&on, "stats", "busy_poll_hits") > 0);
	assert_int_equal(info_num(&off, "stats", "busy_poll_hits"), 0);
	long long before = cpu_ticks(on.pid);
	gw_sleep_ms(500);
	assert_in_range(cpu_ticks(on.pid) - before, 0, 2); /* <= 20 ms of 500 */
	assert_int_equal(gw_signal(&on, SIGTERM), 0);
	assert_int_equal(gw_signal(&off, SIGTERM), 0);
}

/* --pg-port listens (the PostgreSQL front-end) and the log says so at
 * start, once, with its authentication; with --pg-port 0 it says nothing. */
static void test_unbuilt_ports_are_logged(void **state)
{
	struct gw s, quiet;
	struct gw_port pg = gw_free_port_arg();
	gw_start(&s, NULL, "--pg-port", pg.arg, NULL);
	gw_start(&quiet, NULL, NULL);
	assert_int_equal(gw_log_count(&s, "PostgreSQL protocol on"), 1);
	assert_int_equal(gw_log_count(&s, "trust: no --pg-password"), 1);
	assert_int_equal(gw_log_count(&quiet, "PostgreSQL"), 0);
	int fd = raw_connect(pg.n);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
	assert_int_equal(gw_signal(&quiet, SIGTERM), 0);
}

static void test_requirepass(void **state)
{
	struct gw s;
	gw_start(&s, NULL, "--requirepass", "s3cret", NULL);
	EXCHANGE(s.port, "PING\r\n", "-NOAUTH Authentication required.\r\n", false);
	EXCHANGE(s.port, "AUTH nope\r\nPING\r\n",
		 "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
		 "-NOAUTH Authentication required.\r\n",
		 false);
	EXCHANGE(s.port, "AUTH s3cret\r\nPING\r\n", "+OK\r\n+PONG\r\n", false);
	EXCHANGE(s.port, "AUTH default s3cret\r\nPING\r\n", "+OK\r\n+PONG\r\n", false);
	EXCHANGE(s.port, "HELLO 3 AUTH default s3cret\r\n", "%7\r\n", false);
	EXCHANGE(s.port, "AUTH s3cret\r\nRESET\r\nPING\r\n",
		 "+OK\r\n+RESET\r\n-NOAUTH Authentication required.\r\n", false);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_unix_socket(void **state)
{
	struct gw s;
	char path[108];
	snprintf(path, sizeof(path), "/tmp/lg-it-%d.sock", (int)getpid());
	gw_start(&s, NULL, "--unixsocket", path, NULL);
	redisContext *c = redisConnectUnix(path);
	assert_non_null(c);
	assert_int_equal(c->err, 0);
	expect_status(c, "PONG", "PING");
	redisFree(c);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
	assert_int_not_equal(access(path, F_OK), 0); /* removed at shutdown */
}

/* A client that writes without reading: the server stops reading it once
 * its replies pile up, so the client's writes block long before all is
 * sent; afterwards every reply arrives, in order. */
static void test_back_pressure(void **state)
{
	struct gw s;
	gw_start(&s, NULL, "--max-output-buffer", "1kb", NULL);
	int fd = raw_connect(s.port);
	assert_true(fd >= 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	char req[200], payload[101];
	memset(payload, 'p', 100);
	payload[100] = '\0';
	int rl = snprintf(req, sizeof(req), "*2\r\n$4\r\nECHO\r\n$100\r\n%s\r\n", payload);
	const size_t total = 64u << 20;
	size_t sent = 0, off = 0;
	int idle = 0;
	while (sent < total && idle < 40) {
		ssize_t w = send(fd, req + off, (size_t)rl - off, MSG_NOSIGNAL);
		if (w < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			gw_sleep_ms(10);
			idle++;
			continue;
		}
		idle = 0;
		sent += (size_t)w;
		off = (off + (size_t)w) % (size_t)rl;
	}
	assert_true(sent < total); /* blocked: the server stopped reading */
	/* now read everything back while finishing the last partial request
	 * (the server reads it only as replies drain: poll both ways) */
	size_t left = off ? (size_t)rl - off : 0;
	sent += left;
	/* each reply: "$100\r\n", 100 x 'p', "\r\n" */
	static const size_t R = 108;
	size_t want = (sent / (size_t)rl) * R, got = 0;
	char buf[65536];
	while (got < want) {
		struct pollfd pf = {.fd = fd, .events = POLLIN | (left ? POLLOUT : 0)};
		assert_true(poll(&pf, 1, 5000) > 0);
		if (left && (pf.revents & POLLOUT)) {
			ssize_t w = send(fd, req + (size_t)rl - left, left, MSG_NOSIGNAL);
			if (w > 0)
				left -= (size_t)w;
		}
		if (!(pf.revents & POLLIN))
			continue;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		assert_true(r > 0);
		for (ssize_t i = 0; i < r; i++, got++) {
			size_t at = got % R;
			char expect = at < 6 ? "$100\r\n"[at] : at < 106 ? 'p' : "\r\n"[at - 106];
			if (buf[i] != expect)
				fail_msg("reply byte %zu is '%c', want '%c'", got, buf[i], expect);
		}
	}
	close(fd);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
}

static void test_sigterm(void **state)
{
	struct gw s;
	gw_start(&s, NULL, NULL);
	redisContext *c = gw_connect(&s);
	expect_status(c, "PONG", "PING");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 6);
	/* the open connection was closed by the server */
	redisReply *r = redisCommand(c, "PING");
	assert_null(r);
	redisFree(c);
}

static bool file_has(const char *path, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* --log-file and --log-format json; SIGHUP reopens the file after it was
 * moved away (logrotate); the start says the embedded store is in use. */
static void test_log_file_and_sighup(void **state)
{
	struct gw s;
	char path[128], moved[140];
	snprintf(path, sizeof(path), "/tmp/lg-it-%d.log", (int)getpid());
	snprintf(moved, sizeof(moved), "%s.1", path);
	unlink(path);
	unlink(moved);
	gw_start(&s, NULL, "--log-file", path, "--log-format", "json", NULL);
	assert_true(file_has(path, "{\"ts\":\""));
	assert_true(file_has(path, "\"level\":\"info\""));
	assert_true(file_has(path, "embedded store"));
	assert_int_equal(rename(path, moved), 0);
	kill(s.pid, SIGHUP);
	for (int i = 0; i < 100 && !file_has(path, "reopened"); i++)
		gw_sleep_ms(20);
	assert_true(file_has(path, "reopened"));
	assert_false(file_has(moved, "reopened"));
	assert_int_equal(gw_signal(&s, SIGTERM), 0);
	unlink(path);
	unlink(moved);
}

static void test_bad_option_stops_start(void **state)
{
	const char *bin = getenv("LG_BIN");
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "%s --port 99999 2>&1", bin);
	FILE *p = popen(cmd, "r");
	char out[512] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	assert_non_null(strstr(out, "--port"));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ping_echo, gw_teardown),
		cmocka_unit_test_teardown(test_hello3_and_inline, gw_teardown),
		cmocka_unit_test_teardown(test_errors_as_redis, gw_teardown),
		cmocka_unit_test_teardown(test_pipelining, gw_teardown),
		cmocka_unit_test_teardown(test_protocol_error_closes_one, gw_teardown),
		cmocka_unit_test_teardown(test_limits, gw_teardown),
		cmocka_unit_test_teardown(test_maxclients, gw_teardown),
		cmocka_unit_test_teardown(test_open_files_limit, gw_teardown),
		cmocka_unit_test_teardown(test_tcp_keepalive, gw_teardown),
		cmocka_unit_test_teardown(test_busy_poll, gw_teardown),
		cmocka_unit_test_teardown(test_unbuilt_ports_are_logged, gw_teardown),
		cmocka_unit_test_teardown(test_requirepass, gw_teardown),
		cmocka_unit_test_teardown(test_unix_socket, gw_teardown),
		cmocka_unit_test_teardown(test_back_pressure, gw_teardown),
		cmocka_unit_test_teardown(test_sigterm, gw_teardown),
		cmocka_unit_test_teardown(test_log_file_and_sighup, gw_teardown),
		cmocka_unit_test_teardown(test_bad_option_stops_start, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
