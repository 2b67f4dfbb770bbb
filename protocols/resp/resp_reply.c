/*
 * resp_reply: reply encoding into a struct buf (see resp.h).
 *
 * Each encoder formats its header into a small stack buffer and appends it
 * with the payload in as few copies as possible; the buffer grows by
 * doubling, so a pipelined batch of small replies costs no allocation once
 * warm. Out-of-memory (or the buffer's limit) marks the buffer failed and
 * every later append is ignored: the session sheds the connection.
 */
#include "protocols/resp/resp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes "<c><v>\r\n" into h (>= 24 bytes); returns its length. Replies
 * are mostly headers and integers, so this is written out rather than
 * left to snprintf, which dominated profiles of pipelined replies. */
static size_t format_header(char *h, char c, long long v)
{
	char digits[20];
	size_t n = 0, len = 0;
	h[len++] = c;
	/* Most headers are lengths and counts of small replies: 0..9. Compared
	 * unsigned, a negative v is huge, so -1..-9 take the signed path below
	 * and keep their '-' (one compare, as before). */
	if ((unsigned long long)v < 10) {
		h[len++] = (char)('0' + v);
		h[len++] = '\r';
		h[len++] = '\n';
		return len;
	}
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		h[len++] = '-';
	while (n > 0)
		h[len++] = digits[--n];
	h[len++] = '\r';
	h[len++] = '\n';
	return len;
}

#define HEADER_MAX 24

/* Formats the header straight into the buffer. */
static void add_header(struct buf *o, char c, long long v)
{
	if (buf_reserve(o, HEADER_MAX))
		o->len += format_header(o->buf + o->len, c, v);
}

/* "<c><bytes with CR/LF as spaces>\r\n" */
static void add_line(struct buf *o, char c, const char *s, size_t len)
{
	if (!buf_reserve(o, len + 3))
		return;
	char *d = o->buf + o->len;
	*d++ = c;
	for (size_t i = 0; i < len; i++)
		d[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
	d[len] = '\r';
	d[len + 1] = '\n';
	o->len += len + 3;
}

void resp_add_simple(struct buf *o, const char *s, size_t len)
{
	add_line(o, '+', s, len);
}

void resp_add_error(struct buf *o, const char *msg, size_t len)
{
	add_line(o, '-', msg, len);
}

void resp_add_errorf(struct buf *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->failed = true;
		return;
	}
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1; /* errors are short; a long argument is cut */
	resp_add_error(o, msg, (size_t)n);
}

void resp_add_int(struct buf *o, long long v)
{
	add_header(o, ':', v);
}

void resp_add_bulk(struct buf *o, const void *p, size_t len)
{
	if (len > SIZE_MAX / 2 || !buf_reserve(o, HEADER_MAX + len + 2))
		return;
	char *d = o->buf + o->len;
	size_t n = format_header(d, '$', (long long)len);
	if (len) /* p may be NULL then */
		memcpy(d + n, p, len);
	d[n + len] = '\r';
	d[n + len + 1] = '\n';
	o->len += n + len + 2;
}

void resp_add_null(struct buf *o, enum resp_proto proto)
{
	if (proto == RESP3)
		buf_raw(o, "_\r\n", 3);
	else
		buf_raw(o, "$-1\r\n", 5);
}

void resp_add_null_array(struct buf *o, enum resp_proto proto)
{
	if (proto == RESP3)
		buf_raw(o, "_\r\n", 3);
	else
		buf_raw(o, "*-1\r\n", 5);
}

void resp_add_array(struct buf *o, size_t n)
{
	add_header(o, '*', (long long)n);
}

void resp_add_map(struct buf *o, enum resp_proto proto, size_t npairs)
{
	if (proto == RESP3)
		add_header(o, '%', (long long)npairs);
	else
		add_header(o, '*', (long long)(npairs * 2));
}

void resp_add_set(struct buf *o, enum resp_proto proto, size_t n)
{
	add_header(o, proto == RESP3 ? '~' : '*', (long long)n);
}

void resp_add_push(struct buf *o, enum resp_proto proto, size_t n)
{
	add_header(o, proto == RESP3 ? '>' : '*', (long long)n);
}

void resp_add_verbatim(struct buf *o, enum resp_proto proto, const char *fmt, const void *p,
		       size_t len)
{
	if (proto != RESP3) {
		resp_add_bulk(o, p, len);
		return;
	}
	add_header(o, '=', (long long)(len + 4));
	buf_raw(o, fmt, 3);
	buf_raw(o, ":", 1);
	buf_raw(o, p, len);
	buf_raw(o, "\r\n", 2);
}

void resp_add_double(struct buf *o, enum resp_proto proto, double v)
{
	char d[64];
	int n;
	if (isnan(v))
		n = snprintf(d, sizeof(d), "nan");
	else if (isinf(v))
		n = snprintf(d, sizeof(d), "%s", v > 0 ? "inf" : "-inf");
	else
		n = snprintf(d, sizeof(d), "%.17g", v);
	if (proto == RESP3)
		add_line(o, ',', d, (size_t)n);
	else
		resp_add_bulk(o, d, (size_t)n);
}

void resp_add_bool(struct buf *o, enum resp_proto proto, bool v)
{
	if (proto == RESP3)
		buf_raw(o, v ? "#t\r\n" : "#f\r\n", 4);
	else
		buf_raw(o, v ? ":1\r\n" : ":0\r\n", 4);
}
