/*
 * resp_reader: see resp_reader.h. The buffered bytes are parsed from the start
 * of the next reply each time resp_reader_next() is called; a reply that is
 * not whole yet is thrown away and parsed again once more bytes came. The
 * replies a client subcommand reads are a few dozen bytes, so the repeated
 * work costs nothing and the parser keeps no state between calls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/resp/resp_reader.h"

struct resp_reader {
	char *buf;
	size_t len; /* bytes buffered */
	size_t pos; /* start of the next reply */
	char err[128];
};

/* One parse: ok = whole reply, more = not all of it buffered yet. */
enum step { STEP_OK, STEP_MORE, STEP_BAD };

struct parse {
	struct resp_reader *r;
	size_t pos;
};

struct resp_reader *resp_reader_new(void)
{
	return calloc(1, sizeof(struct resp_reader));
}

void resp_reader_free(struct resp_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}

const char *resp_reader_error(const struct resp_reader *r)
{
	return r->err[0] ? r->err : NULL;
}

static enum resp_read fail(struct resp_reader *r, const char *msg)
{
	if (r->err[0] == '\0')
		snprintf(r->err, sizeof(r->err), "protocol error: %s", msg);
	return RESP_READ_ERROR;
}

enum resp_read resp_reader_feed(struct resp_reader *r, const char *p, size_t len)
{
	if (r->err[0])
		return RESP_READ_ERROR;
	/* drop what was taken out before growing */
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (len > RESP_READER_MAX_BUFFER - r->len)
		return fail(r, "reply larger than the reader's buffer");
	char *nb = realloc(r->buf, r->len + len + 1);
	if (nb == NULL)
		return fail(r, "out of memory");
	r->buf = nb;
	memcpy(r->buf + r->len, p, len);
	r->len += len;
	return RESP_READ_MORE;
}

/* Frees what rep owns, not rep itself. */
static void reply_clear(struct resp_reply *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		reply_clear(&rep->elem[i]);
	free(rep->elem);
	free(rep->str);
	memset(rep, 0, sizeof(*rep));
}

void resp_reply_free(struct resp_reply *rep)
{
	if (rep == NULL)
		return;
	reply_clear(rep);
	free(rep);
}

/* The line at ps->pos (without its CRLF) into line and n and moves past it;
 * STEP_MORE when its CRLF has not come yet. */
static enum step take_line(struct parse *ps, const char **line, size_t *n)
{
	const char *b = ps->r->buf + ps->pos, *end = ps->r->buf + ps->r->len;
	for (const char *q = b; q + 1 < end; q++) {
		if (q[0] == '\r' && q[1] == '\n') {
			*line = b;
			*n = (size_t)(q - b);
			ps->pos += *n + 2;
			return STEP_OK;
		}
	}
	return STEP_MORE;
}

/* Digits with an optional '-', nothing else, no overflow. */
static bool parse_ll(const char *p, size_t n, long long *v)
{
	char tmp[24];
	char *end;
	if (n == 0 || n >= sizeof(tmp))
		return false;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	if (tmp[0] != '-' && (tmp[0] < '0' || tmp[0] > '9'))
		return false;
	errno = 0;
	*v = strtoll(tmp, &end, 10);
	return errno == 0 && *end == '\0';
}

static enum step bad(struct parse *ps, const char *msg)
{
	(void)fail(ps->r, msg);
	return STEP_BAD;
}

static enum step set_str(struct parse *ps, struct resp_reply *rep, const char *p, size_t n)
{
	rep->str = malloc(n + 1);
	if (rep->str == NULL)
		return bad(ps, "out of memory");
	memcpy(rep->str, p, n);
	rep->str[n] = '\0';
	rep->len = n;
	return STEP_OK;
}

static enum step parse_one(struct parse *ps, struct resp_reply *rep, int depth);

/* The n (2n for maps) elements of an aggregate. */
static enum step parse_elems(struct parse *ps, struct resp_reply *rep, long long n, int depth)
{
	if (n < 0 || n > RESP_READER_MAX_ELEMS)
		return bad(ps, "aggregate length out of range");
	if (depth >= RESP_READER_MAX_DEPTH)
		return bad(ps, "replies nested too deep");
	if (rep->type == RESP_REPLY_MAP)
		n *= 2;
	if (n == 0)
		return STEP_OK;
	rep->elem = calloc((size_t)n, sizeof(*rep->elem));
	if (rep->elem == NULL)
		return bad(ps, "out of memory");
	for (long long i = 0; i < n; i++) {
		rep->n = (size_t)i + 1; /* so that a partial reply frees what it has */
		enum step st = parse_one(ps, &rep->elem[i], depth + 1);
		if (st != STEP_OK)
			return st;
	}
	return STEP_OK;
}

/* $len / =len / !len: the bytes after the header line, and their CRLF. */
static enum step parse_blob(struct parse *ps, struct resp_reply *rep, long long n, char type)
{
	if (n < 0 || (unsigned long long)n > RESP_READER_MAX_BUFFER)
		return bad(ps, "invalid bulk length");
	if (ps->r->len - ps->pos < (size_t)n + 2)
		return STEP_MORE;
	const char *p = ps->r->buf + ps->pos;
	if (p[n] != '\r' || p[n + 1] != '\n')
		return bad(ps, "bulk string not followed by CRLF");
	ps->pos += (size_t)n + 2;
	if (type == '=') {
		/* verbatim: "txt:" (three letters and a colon) before the text */
		if (n < 4 || p[3] != ':')
			return bad(ps, "verbatim string without its format");
		p += 4;
		n -= 4;
	}
	return set_str(ps, rep, p, (size_t)n);
}

static const struct {
	char byte;
	enum resp_reply_type type;
} types[] = {
	{'+', RESP_REPLY_STATUS}, {'-', RESP_REPLY_ERROR},  {':', RESP_REPLY_INT},
	{'$', RESP_REPLY_STRING}, {'=', RESP_REPLY_STRING}, {'!', RESP_REPLY_ERROR},
	{'_', RESP_REPLY_NULL},	  {'#', RESP_REPLY_BOOL},   {',', RESP_REPLY_DOUBLE},
	{'(', RESP_REPLY_DOUBLE}, {'*', RESP_REPLY_ARRAY},  {'~', RESP_REPLY_SET},
	{'>', RESP_REPLY_PUSH},	  {'%', RESP_REPLY_MAP},    {'|', RESP_REPLY_MAP},
};

static enum step parse_one(struct parse *ps, struct resp_reply *rep, int depth)
{
	const char *line;
	size_t n;
	long long v = 0;
	enum step st = take_line(ps, &line, &n);
	if (st != STEP_OK)
		return st;
	if (n == 0)
		return bad(ps, "empty line");
	size_t t = 0;
	while (t < sizeof(types) / sizeof(types[0]) && types[t].byte != line[0])
		t++;
	if (t == sizeof(types) / sizeof(types[0]))
		return bad(ps, "unknown reply type byte");
	rep->type = types[t].type;
	const char *arg = line + 1;
	size_t alen = n - 1;
	switch (line[0]) {
	case '+':
	case '-':
	case ',':
	case '(':
		return set_str(ps, rep, arg, alen);
	case ':':
		if (!parse_ll(arg, alen, &rep->num))
			return bad(ps, "invalid integer");
		return STEP_OK;
	case '_':
		return alen == 0 ? STEP_OK : bad(ps, "invalid null");
	case '#':
		if (alen != 1 || (arg[0] != 't' && arg[0] != 'f'))
			return bad(ps, "invalid boolean");
		rep->num = arg[0] == 't';
		return STEP_OK;
	}
	if (alen == 1 && arg[0] == '?')
		return bad(ps, "streamed aggregates are not supported");
	if (!parse_ll(arg, alen, &v))
		return bad(ps, "invalid length");
	if (v == -1 && (line[0] == '$' || line[0] == '*')) {
		rep->type = RESP_REPLY_NULL; /* RESP2's nulls */
		return STEP_OK;
	}
	if (line[0] == '$' || line[0] == '=' || line[0] == '!')
		return parse_blob(ps, rep, v, line[0]);
	st = parse_elems(ps, rep, v, depth);
	if (st != STEP_OK || line[0] != '|')
		return st;
	/* an attribute: dropped, the reply it describes follows */
	reply_clear(rep);
	return parse_one(ps, rep, depth);
}

enum resp_read resp_reader_next(struct resp_reader *r, struct resp_reply **out)
{
	*out = NULL;
	if (r->err[0])
		return RESP_READ_ERROR;
	if (r->pos == r->len)
		return RESP_READ_MORE;
	struct resp_reply *rep = calloc(1, sizeof(*rep));
	if (rep == NULL)
		return fail(r, "out of memory");
	struct parse ps = {r, r->pos};
	enum step st = parse_one(&ps, rep, 0);
	if (st != STEP_OK) {
		resp_reply_free(rep);
		return st == STEP_MORE ? RESP_READ_MORE : RESP_READ_ERROR;
	}
	r->pos = ps.pos;
	*out = rep;
	return RESP_READ_REPLY;
}

/* --- text, for messages --- */

struct text {
	char *buf;
	size_t cap, len;
};

static void put(struct text *t, const char *s, size_t n)
{
	while (n-- > 0 && t->len + 1 < t->cap)
		t->buf[t->len++] = *s++;
	t->buf[t->len] = '\0';
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void render(struct text *t, const struct resp_reply *rep)
{
	char num[32];
	switch (rep->type) {
	case RESP_REPLY_STATUS:
	case RESP_REPLY_ERROR:
	case RESP_REPLY_STRING:
	case RESP_REPLY_DOUBLE:
		put(t, rep->str, rep->len);
		return;
	case RESP_REPLY_INT:
		snprintf(num, sizeof(num), "%lld", rep->num);
		puts_(t, num);
		return;
	case RESP_REPLY_NULL:
		puts_(t, "nil");
		return;
	case RESP_REPLY_BOOL:
		puts_(t, rep->num ? "true" : "false");
		return;
	default:
		break;
	}
	bool map = rep->type == RESP_REPLY_MAP;
	puts_(t, map				? "{"
		 : rep->type == RESP_REPLY_PUSH ? ">["
		 : rep->type == RESP_REPLY_SET	? "~["
						: "[");
	for (size_t i = 0; i < rep->n; i++) {
		if (i > 0)
			puts_(t, map && i % 2 ? ": " : ", ");
		render(t, &rep->elem[i]);
	}
	puts_(t, map ? "}" : "]");
}

const char *resp_reply_text(const struct resp_reply *rep, char *buf, size_t cap)
{
	struct text t = {buf, cap, 0};
	if (cap > 0)
		buf[0] = '\0';
	if (cap > 0)
		render(&t, rep);
	return buf;
}
