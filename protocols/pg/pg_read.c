/*
 * pg_read: the reader of what a PostgreSQL client sends (see pg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "protocols/pg/pg.h"

const struct pg_limits pg_default_limits = {.max_msg = 1u << 20, .max_params = 1024};

void pg_reader_init(struct pg_reader *r, const struct pg_limits *lim)
{
	memset(r, 0, sizeof(*r));
	r->lim = *lim;
	r->startup = true;
}

void pg_reader_free(struct pg_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->len = r->off = r->cap = 0;
}

/* The buffer holds at most one message past the limit's worth of pipeline:
 * a whole maximal message plus as much again of what follows it. */
static size_t bound(const struct pg_reader *r)
{
	return (size_t)r->lim.max_msg * 2 + 5;
}

size_t pg_reader_room(const struct pg_reader *r)
{
	size_t held = r->len - r->off;
	if (r->err != NULL)
		return 64 * 1024; /* take and drop: the error is answered */
	return held >= bound(r) ? 0 : bound(r) - held;
}

size_t pg_reader_buffered(const struct pg_reader *r)
{
	return r->len - r->off;
}

bool pg_reader_feed(struct pg_reader *r, const char *p, size_t n)
{
	if (r->err != NULL || n == 0)
		return r->err == NULL;
	if (r->off > 0 && (r->off == r->len || r->cap - r->len < n)) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	if (r->cap - r->len < n) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap - r->len < n)
			cap *= 2;
		char *b = realloc(r->buf, cap);
		if (b == NULL) {
			r->err = "out of memory";
			return false;
		}
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
	return true;
}

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

enum pg_rstatus pg_reader_next(struct pg_reader *r, struct pg_msg *m)
{
	if (r->err != NULL)
		return PG_ERROR;
	size_t have = r->len - r->off;
	size_t head = r->startup ? 4 : 5;
	if (have < head)
		return PG_NEED_MORE; /* before any pointer: buf is NULL until fed */
	const char *p = r->buf + r->off;
	uint32_t len = be32(p + head - 4);
	if (r->startup ? len < 8 : len < 4) {
		r->err = "invalid message length";
		return PG_ERROR;
	}
	if (r->startup && len > PG_MAX_STARTUP_LEN) {
		r->err = "invalid length of startup packet";
		return PG_ERROR;
	}
	if (len > r->lim.max_msg) {
		r->err = "message too long";
		return PG_ERROR;
	}
	if (have < len + head - 4)
		return PG_NEED_MORE;
	memset(m, 0, sizeof(*m));
	if (r->startup) {
		m->type = 0;
		m->code = be32(p + 4);
		m->body = p + 8;
		m->len = len - 8;
	} else {
		m->type = p[0];
		m->body = p + 5;
		m->len = len - 4;
	}
	r->off += len + head - 4;
	return PG_MSG;
}

int16_t pg_get_i16(struct pg_cur *c)
{
	if (c->bad || c->left < 2) {
		c->bad = true;
		return 0;
	}
	const unsigned char *u = (const unsigned char *)c->p;
	int16_t v = (int16_t)((uint16_t)u[0] << 8 | u[1]);
	c->p += 2;
	c->left -= 2;
	return v;
}

int32_t pg_get_i32(struct pg_cur *c)
{
	if (c->bad || c->left < 4) {
		c->bad = true;
		return 0;
	}
	int32_t v = (int32_t)be32(c->p);
	c->p += 4;
	c->left -= 4;
	return v;
}

const char *pg_get_str(struct pg_cur *c)
{
	const char *e = c->bad ? NULL : memchr(c->p, '\0', c->left);
	if (e == NULL) {
		c->bad = true;
		return NULL;
	}
	const char *s = c->p;
	c->left -= (size_t)(e - s) + 1;
	c->p = e + 1;
	return s;
}

const char *pg_get_bytes(struct pg_cur *c, size_t n)
{
	if (c->bad || c->left < n) {
		c->bad = true;
		return NULL;
	}
	const char *s = c->p;
	c->p += n;
	c->left -= n;
	return s;
}

bool pg_parse_startup(const struct pg_msg *m, unsigned max_params, struct pg_startup *out,
		      const char **err)
{
	struct pg_cur c = pg_cur_of(m);
	out->version = m->code;
	out->n = 0;
	if (max_params > PG_MAX_STARTUP_PARAMS)
		max_params = PG_MAX_STARTUP_PARAMS;
	for (;;) {
		const char *k = pg_get_str(&c);
		if (k == NULL) {
			*err = "invalid startup packet layout: expected terminator as last byte";
			return false;
		}
		if (*k == '\0')
			break;
		const char *v = pg_get_str(&c);
		if (v == NULL) {
			*err = "invalid startup packet layout: expected terminator as last byte";
			return false;
		}
		if (out->n >= max_params) {
			*err = "too many startup parameters";
			return false;
		}
		out->key[out->n] = k;
		out->val[out->n++] = v;
	}
	if (c.left != 0) {
		*err = "invalid startup packet layout: expected terminator as last byte";
		return false;
	}
	return true;
}

const char *pg_startup_get(const struct pg_startup *s, const char *key)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->key[i], key) == 0)
			return s->val[i];
	return NULL;
}
