/*
 * resp_reply: reply encoding into struct resp_out (see resp.h).
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

void resp_out_init(struct resp_out *o, size_t limit)
{
	memset(o, 0, sizeof(*o));
	o->limit = limit;
}

void resp_out_free(struct resp_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

void resp_out_consume(struct resp_out *o, size_t n)
{
	if (n >= o->len) {
		o->len = 0;
		return;
	}
	memmove(o->buf, o->buf + n, o->len - n);
	o->len -= n;
}

/* The slow path of reserve(): grows the buffer or fails it. */
static bool grow(struct resp_out *o, size_t n)
{
	if (o->failed)
		return false;
	if (n > SIZE_MAX / 2 - o->len || (o->limit && o->len + n > o->limit)) {
		o->failed = true;
		return false;
	}
	if (o->cap - o->len >= n)
		return true;
	size_t cap = o->cap ? o->cap : 256;
	while (cap - o->len < n)
		cap *= 2;
	char *b = realloc(o->buf, cap);
	if (!b) {
		o->failed = true;
		return false;
	}
	o->buf = b;
	o->cap = cap;
	return true;
}

/* Makes room for n more bytes; false (and failed) if it cannot. Inline:
 * every reply element asks, and nearly always there is room. */
static inline bool reserve(struct resp_out *o, size_t n)
{
	if (!o->failed && o->cap - o->len >= n && (!o->limit || o->len + n <= o->limit))
		return true;
	return grow(o, n);
}

void resp_out_raw(struct resp_out *o, const void *p, size_t len)
{
	if (!len || !reserve(o, len))
		return;
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

void resp_out_printf(struct resp_out *o, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		resp_out_raw(o, small, (size_t)n);
		return;
	}
	if (!reserve(o, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* Writes "<c><v>\r\n" into h (>= 24 bytes); returns its length. Replies
 * are mostly headers and integers, so this is written out rather than
 * left to snprintf, which dominated profiles of pipelined replies. */
static size_t format_header(char *h, char c, long long v)
{
	char digits[20];
	size_t n = 0, len = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	h[len++] = c;
	if (u < 10) { /* most headers: lengths and counts of small replies */
		h[len++] = (char)('0' + u);
		h[len++] = '\r';
		h[len++] = '\n';
		return len;
	}
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
static void add_header(struct resp_out *o, char c, long long v)
{
	if (reserve(o, HEADER_MAX))
		o->len += format_header(o->buf + o->len, c, v);
}

/* "<c><bytes with CR/LF as spaces>\r\n" */
static void add_line(struct resp_out *o, char c, const char *s, size_t len)
{
	if (!reserve(o, len + 3))
		return;
	char *d = o->buf + o->len;
	*d++ = c;
	for (size_t i = 0; i < len; i++)
		d[i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
	d[len] = '\r';
	d[len + 1] = '\n';
	o->len += len + 3;
}

void resp_add_simple(struct resp_out *o, const char *s, size_t len)
{
	add_line(o, '+', s, len);
}

void resp_add_error(struct resp_out *o, const char *msg, size_t len)
{
	add_line(o, '-', msg, len);
}

void resp_add_errorf(struct resp_out *o, const char *fmt, ...)
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

void resp_add_int(struct resp_out *o, long long v)
{
	add_header(o, ':', v);
}

void resp_add_bulk(struct resp_out *o, const void *p, size_t len)
{
	if (len > SIZE_MAX / 2 || !reserve(o, HEADER_MAX + len + 2))
		return;
	char *d = o->buf + o->len;
	size_t n = format_header(d, '$', (long long)len);
	if (len) /* p may be NULL then */
		memcpy(d + n, p, len);
	d[n + len] = '\r';
	d[n + len + 1] = '\n';
	o->len += n + len + 2;
}

void resp_add_null(struct resp_out *o, enum resp_proto proto)
{
	if (proto == RESP3)
		resp_out_raw(o, "_\r\n", 3);
	else
		resp_out_raw(o, "$-1\r\n", 5);
}

void resp_add_null_array(struct resp_out *o, enum resp_proto proto)
{
	if (proto == RESP3)
		resp_out_raw(o, "_\r\n", 3);
	else
		resp_out_raw(o, "*-1\r\n", 5);
}

void resp_add_array(struct resp_out *o, size_t n)
{
	add_header(o, '*', (long long)n);
}

void resp_add_map(struct resp_out *o, enum resp_proto proto, size_t npairs)
{
	if (proto == RESP3)
		add_header(o, '%', (long long)npairs);
	else
		add_header(o, '*', (long long)(npairs * 2));
}

void resp_add_set(struct resp_out *o, enum resp_proto proto, size_t n)
{
	add_header(o, proto == RESP3 ? '~' : '*', (long long)n);
}

void resp_add_push(struct resp_out *o, enum resp_proto proto, size_t n)
{
	add_header(o, proto == RESP3 ? '>' : '*', (long long)n);
}

void resp_add_verbatim(struct resp_out *o, enum resp_proto proto, const char *fmt, const void *p,
		       size_t len)
{
	if (proto != RESP3) {
		resp_add_bulk(o, p, len);
		return;
	}
	add_header(o, '=', (long long)(len + 4));
	resp_out_raw(o, fmt, 3);
	resp_out_raw(o, ":", 1);
	resp_out_raw(o, p, len);
	resp_out_raw(o, "\r\n", 2);
}

void resp_add_double(struct resp_out *o, enum resp_proto proto, double v)
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

void resp_add_bool(struct resp_out *o, enum resp_proto proto, bool v)
{
	if (proto == RESP3)
		resp_out_raw(o, v ? "#t\r\n" : "#f\r\n", 4);
	else
		resp_out_raw(o, v ? ":1\r\n" : ":0\r\n", 4);
}
