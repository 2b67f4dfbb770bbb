/*
 * buf: a growable byte buffer, shared by the wire protocols' encoders
 * (RESP replies, PostgreSQL messages), the gateway's connections (bytes not
 * yet handed to the transport) and text bodies (INFO, Prometheus /metrics).
 *
 * An append that cannot be made (out of memory, or past the buffer's
 * limit) marks the buffer failed, and it stays failed: later appends are
 * ignored. Callers check buf_failed() once per batch instead of a status
 * per append.
 *
 * Not here: any protocol's framing (protocols/resp, protocols/pg).
 */
#ifndef LG_BUF_H
#define LG_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Zero-initialise or buf_init(); `limit` (0 = none) caps len: an append
 * past it fails the buffer like out-of-memory. */
struct buf {
	char *buf;
	size_t len, cap, limit;
	bool failed;
};

void buf_init(struct buf *o, size_t limit);
/* Frees the bytes; o can be reused after buf_init(). */
void buf_free(struct buf *o);
/* Forgets the first n bytes (they were written out); n <= len. */
void buf_consume(struct buf *o, size_t n);
/* True once an append failed; the bytes since then are incomplete. */
static inline bool buf_failed(const struct buf *o)
{
	return o->failed;
}

void buf_printf(struct buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The slow path of buf_reserve(): grows the buffer or fails it. */
bool buf_grow(struct buf *o, size_t n);

/* Makes room for n more bytes at buf + len; false (and failed) if it
 * cannot. Inline: encoders ask per element, and nearly always there is
 * room. */
static inline bool buf_reserve(struct buf *o, size_t n)
{
	if (!o->failed && o->cap - o->len >= n && (!o->limit || o->len + n <= o->limit))
		return true;
	return buf_grow(o, n);
}

/* Appends len bytes. Inline: every reply's payload comes through here. */
static inline void buf_raw(struct buf *o, const void *p, size_t len)
{
	if (!len || !buf_reserve(o, len))
		return;
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

#endif
