/*
 * buf: the growable byte buffer (see buf.h). It grows by doubling, so a
 * batch of small appends costs no allocation once warm.
 */
#include "protocols/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *o, size_t limit)
{
	memset(o, 0, sizeof(*o));
	o->limit = limit;
}

void buf_free(struct buf *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

void buf_consume(struct buf *o, size_t n)
{
	if (n >= o->len) {
		o->len = 0;
		return;
	}
	memmove(o->buf, o->buf + n, o->len - n);
	o->len -= n;
}

bool buf_grow(struct buf *o, size_t n)
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

void buf_printf(struct buf *o, const char *fmt, ...)
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
		buf_raw(o, small, (size_t)n);
		return;
	}
	if (!buf_reserve(o, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}
