/*
 * pg_build: the backend messages leasegate sends (see pg.h). Each appends
 * to a struct buf; a failed buffer stays failed (buf.h).
 */
#include <string.h>

#include "protocols/pg/pg.h"

size_t pg_begin(struct buf *o, char t)
{
	size_t start = o->len;
	if (buf_reserve(o, 5)) {
		o->buf[o->len] = t;
		memset(o->buf + o->len + 1, 0, 4);
		o->len += 5;
	}
	return start;
}

void pg_end(struct buf *o, size_t start)
{
	if (o->failed)
		return;
	uint32_t len = (uint32_t)(o->len - start - 1);
	unsigned char *p = (unsigned char *)o->buf + start + 1;
	p[0] = (unsigned char)(len >> 24);
	p[1] = (unsigned char)(len >> 16);
	p[2] = (unsigned char)(len >> 8);
	p[3] = (unsigned char)len;
}

void pg_put_i16(struct buf *o, int16_t v)
{
	if (buf_reserve(o, 2)) {
		o->buf[o->len++] = (char)((uint16_t)v >> 8);
		o->buf[o->len++] = (char)v;
	}
}

void pg_put_i32(struct buf *o, int32_t v)
{
	if (buf_reserve(o, 4)) {
		uint32_t u = (uint32_t)v;
		o->buf[o->len++] = (char)(u >> 24);
		o->buf[o->len++] = (char)(u >> 16);
		o->buf[o->len++] = (char)(u >> 8);
		o->buf[o->len++] = (char)u;
	}
}

void pg_put_str(struct buf *o, const char *s)
{
	buf_raw(o, s, strlen(s) + 1);
}

static void auth(struct buf *o, int32_t code, const void *data, size_t len)
{
	size_t m = pg_begin(o, 'R');
	pg_put_i32(o, code);
	buf_raw(o, data, len);
	pg_end(o, m);
}

void pg_auth_ok(struct buf *o)
{
	auth(o, 0, NULL, 0);
}

void pg_auth_cleartext(struct buf *o)
{
	auth(o, 3, NULL, 0);
}

void pg_auth_md5(struct buf *o, const unsigned char salt[4])
{
	auth(o, 5, salt, 4);
}

void pg_auth_sasl(struct buf *o, const char *const *mechs, size_t n)
{
	size_t m = pg_begin(o, 'R');
	pg_put_i32(o, 10);
	for (size_t i = 0; i < n; i++)
		pg_put_str(o, mechs[i]);
	buf_raw(o, "", 1);
	pg_end(o, m);
}

void pg_auth_sasl_continue(struct buf *o, const char *data, size_t len)
{
	auth(o, 11, data, len);
}

void pg_auth_sasl_final(struct buf *o, const char *data, size_t len)
{
	auth(o, 12, data, len);
}

void pg_parameter_status(struct buf *o, const char *key, const char *val)
{
	size_t m = pg_begin(o, 'S');
	pg_put_str(o, key);
	pg_put_str(o, val);
	pg_end(o, m);
}

void pg_backend_key(struct buf *o, uint32_t pid, uint32_t secret)
{
	size_t m = pg_begin(o, 'K');
	pg_put_i32(o, (int32_t)pid);
	pg_put_i32(o, (int32_t)secret);
	pg_end(o, m);
}

void pg_ready(struct buf *o, char status)
{
	size_t m = pg_begin(o, 'Z');
	buf_raw(o, &status, 1);
	pg_end(o, m);
}

void pg_negotiate_version(struct buf *o, uint32_t newest, unsigned n, const char *const *opts)
{
	size_t m = pg_begin(o, 'v');
	pg_put_i32(o, (int32_t)newest);
	pg_put_i32(o, (int32_t)n);
	for (unsigned i = 0; i < n; i++)
		pg_put_str(o, opts[i]);
	pg_end(o, m);
}

void pg_row_description(struct buf *o, unsigned n, const struct pg_col *cols)
{
	size_t m = pg_begin(o, 'T');
	pg_put_i16(o, (int16_t)n);
	for (unsigned i = 0; i < n; i++) {
		pg_put_str(o, cols[i].name);
		pg_put_i32(o, 0); /* table */
		pg_put_i16(o, 0); /* column */
		pg_put_i32(o, (int32_t)cols[i].oid);
		pg_put_i16(o, cols[i].typlen);
		pg_put_i32(o, -1); /* typmod */
		pg_put_i16(o, cols[i].format);
	}
	pg_end(o, m);
}

void pg_param_description(struct buf *o, unsigned n, const uint32_t *oids)
{
	size_t m = pg_begin(o, 't');
	pg_put_i16(o, (int16_t)n);
	for (unsigned i = 0; i < n; i++)
		pg_put_i32(o, (int32_t)oids[i]);
	pg_end(o, m);
}

static void empty(struct buf *o, char t)
{
	pg_end(o, pg_begin(o, t));
}

void pg_no_data(struct buf *o)
{
	empty(o, 'n');
}

void pg_data_row(struct buf *o, unsigned n, const char *const *vals, const int32_t *lens)
{
	size_t m = pg_begin(o, 'D');
	pg_put_i16(o, (int16_t)n);
	for (unsigned i = 0; i < n; i++) {
		if (vals[i] == NULL) {
			pg_put_i32(o, -1);
			continue;
		}
		int32_t len = lens && lens[i] >= 0 ? lens[i] : (int32_t)strlen(vals[i]);
		pg_put_i32(o, len);
		buf_raw(o, vals[i], (size_t)len);
	}
	pg_end(o, m);
}

void pg_command_complete(struct buf *o, const char *tag)
{
	size_t m = pg_begin(o, 'C');
	pg_put_str(o, tag);
	pg_end(o, m);
}

void pg_empty_query(struct buf *o)
{
	empty(o, 'I');
}

void pg_parse_complete(struct buf *o)
{
	empty(o, '1');
}

void pg_bind_complete(struct buf *o)
{
	empty(o, '2');
}

void pg_close_complete(struct buf *o)
{
	empty(o, '3');
}

void pg_portal_suspended(struct buf *o)
{
	empty(o, 's');
}

static void field(struct buf *o, char code, const char *s)
{
	buf_raw(o, &code, 1);
	pg_put_str(o, s);
}

void pg_error(struct buf *o, char type, const char *severity, const char *sqlstate,
	      const char *message, const char *hint)
{
	size_t m = pg_begin(o, type);
	field(o, 'S', severity);
	field(o, 'V', severity);
	field(o, 'C', sqlstate);
	field(o, 'M', message);
	if (hint != NULL)
		field(o, 'H', hint);
	buf_raw(o, "", 1);
	pg_end(o, m);
}
