/*
 * rawresp: see rawresp.h.
 */
#include "tests/support/rawresp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct sb {
	char p[8192];
	size_t len;
};

static void sb_add(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	if (b->len >= sizeof(b->p) - 1)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, sizeof(b->p) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n < sizeof(b->p) - b->len ? (size_t)n : sizeof(b->p) - 1 - b->len;
}

static const char *crlf(const char *p, const char *end)
{
	for (; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n')
			return p;
	return NULL;
}

/* Renders one reply from p: strings "s", +simple, -error, :int, nil,
 * [array], ~[set], >[push], {key: value, ...} for maps; plain: s, simple,
 * -error, :int, _, *[a b], ~[a b], >[a b], %[k v]. Returns the end of the
 * reply, or NULL when it is incomplete. */
static const char *render(const char *p, const char *end, bool plain, struct sb *o)
{
	const char *nil = plain ? "_" : "nil", *quote = plain ? "" : "\"";
	if (p >= end)
		return NULL;
	const char *e = crlf(p + 1, end);
	if (e == NULL)
		return NULL;
	const char *next = e + 2;
	int linelen = (int)(e - p - 1);
	long long n = strtoll(p + 1, NULL, 10);
	switch (*p) {
	case '+':
	case '-':
	case ':':
	case '#':
	case ',':
		if (plain && *p == '+')
			sb_add(o, "%.*s", linelen, p + 1);
		else
			sb_add(o, "%c%.*s", *p, linelen, p + 1);
		return next;
	case '_':
		sb_add(o, "%s", nil);
		return next;
	case '$':
	case '=':
		if (n < 0) {
			sb_add(o, "%s", nil);
			return next;
		}
		if (end - next < n + 2)
			return NULL;
		sb_add(o, "%s%.*s%s", quote, (int)n, next, quote);
		return next + n + 2;
	case '*':
	case '~':
	case '>':
	case '%': {
		if (n < 0) {
			sb_add(o, "%s", nil);
			return next;
		}
		long long items = *p == '%' ? 2 * n : n;
		if (plain)
			sb_add(o, "%c[", *p);
		else
			sb_add(o, "%s",
			       *p == '%'   ? "{"
			       : *p == '>' ? ">["
			       : *p == '~' ? "~["
					   : "[");
		for (long long i = 0; i < items; i++) {
			if (i > 0)
				sb_add(o, "%s", plain ? " " : *p == '%' && i % 2 ? ": " : ", ");
			next = render(next, end, plain, o);
			if (next == NULL)
				return NULL;
		}
		sb_add(o, "%s", plain || *p != '%' ? "]" : "}");
		return next;
	}
	default:
		fail_msg("bad RESP type byte 0x%02x", (unsigned char)*p);
	}
	return NULL;
}

struct raw *raw_open(int port)
{
	struct raw *r = calloc(1, sizeof(*r));
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_non_null(r);
	r->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(r->fd >= 0);
	assert_int_equal(connect(r->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return r;
}

void raw_close(struct raw *r)
{
	close(r->fd);
	free(r);
}

void raw_write(struct raw *r, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(r->fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			fail_msg("send: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
}

size_t raw_encode(char *buf, size_t cap, const char *line)
{
	char copy[4096], *save = NULL;
	const char *argv[64];
	int argc = 0;
	size_t n = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *t = strtok_r(copy, " ", &save); t != NULL && argc < 64;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	n += (size_t)snprintf(buf + n, cap - n, "*%d\r\n", argc);
	for (int i = 0; i < argc; i++)
		n += (size_t)snprintf(buf + n, cap - n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
	assert_true(n < cap);
	return n;
}

void raw_send(struct raw *r, const char *line)
{
	char buf[8192];
	raw_write(r, buf, raw_encode(buf, sizeof(buf), line));
}

int raw_read(struct raw *r, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	for (;;) {
		struct sb o = {.len = 0};
		const char *end = render(r->buf, r->buf + r->len, r->plain, &o);
		if (end != NULL) {
			snprintf(r->last, sizeof(r->last), "%.*s", (int)o.len, o.p);
			r->len -= (size_t)(end - r->buf);
			memmove(r->buf, end, r->len);
			return 1;
		}
		long long left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = r->fd, .events = POLLIN};
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		assert_true(r->len < sizeof(r->buf));
		ssize_t got = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, 0);
		if (got <= 0)
			return -1;
		r->len += (size_t)got;
	}
}

const char *raw_reply(struct raw *r, int ms)
{
	int rc = raw_read(r, ms);
	if (rc != 1)
		fail_msg("no reply within %d ms (%s)", ms,
			 rc == 0 ? "timeout" : "connection closed");
	return r->last;
}

void raw_expect(struct raw *r, const char *line, const char *want)
{
	raw_send(r, line);
	const char *got = raw_reply(r, 5000);
	if (strcmp(got, want) != 0)
		fail_msg("%s: got %s, want %s", line, got, want);
}

long long raw_int_of(const char *s)
{
	if (s[0] != ':')
		fail_msg("wanted an integer, got %s", s);
	return strtoll(s + 1, NULL, 10);
}

long long raw_int(struct raw *r, const char *line)
{
	raw_send(r, line);
	return raw_int_of(raw_reply(r, 5000));
}

bool raw_quiet(struct raw *r, int ms)
{
	return raw_read(r, ms) == 0;
}
