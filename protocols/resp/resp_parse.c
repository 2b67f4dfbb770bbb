/*
 * resp_parse: RESP requests, bytes in -> commands out (see resp.h).
 *
 * The bytes live in hiredis's reader buffer (one copy from the socket
 * buffer). A request that starts with '*' is handed to redisReaderGetReply()
 * with the reply-object functions below: they build no objects (every
 * "object" is the parser itself), copy each bulk string into one arena per
 * command (no allocation per argument once warm) and refuse what a request
 * may not contain. Any other first byte starts an inline request, which is
 * split here, reading the same buffer.
 *
 * Why we touch the reader's fields: hiredis parses replies, not requests,
 * so it cannot know about inline requests. read.h declares redisReader's
 * fields (buf, pos, len, ridx) as its public struct; we read them to see
 * the next request's first byte, advance pos past inline lines, and compact
 * the buffer with sds functions hiredis exports. We do so only between
 * requests (ridx == -1), when the reader holds no state of its own.
 *
 * Why the early header check: hiredis calls createString() only once the
 * whole bulk is buffered; a declared length over the limit is refused as
 * soon as its `$N` line is in, not after buffering N bytes.
 */
#include "protocols/resp/resp.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <hiredis/sds.h>

const struct resp_limits resp_default_limits = {
	.max_args = 1024,
	.max_bulk = 512 * 1024,
	.max_inline = 64 * 1024,
	.max_query = 1024 * 1024,
};

/* Where an argument sits in the arena while the command is being built. */
struct slot {
	size_t off, len;
};

struct resp_parser {
	struct resp_limits lim;
	redisReader *rd;
	char *err; /* NULL, or the sticky error (points into errbuf) */
	char errbuf[128];

	/* the command being built */
	char *arena;
	size_t arena_len, arena_cap;
	struct slot *slots;
	struct resp_arg *argv;
	uint32_t argc, cap;
	bool building; /* a multibulk is under way in the reader */
	bool unauth;   /* the client has not authenticated: Redis 7's small limits */
};

static void set_error(struct resp_parser *p, const char *msg)
{
	if (p->err)
		return;
	snprintf(p->errbuf, sizeof(p->errbuf), "%s", msg);
	p->err = p->errbuf;
}

static bool reserve_args(struct resp_parser *p, uint32_t n)
{
	if (n <= p->cap)
		return true;
	uint32_t cap = p->cap ? p->cap : 8;
	while (cap < n)
		cap *= 2;
	struct slot *s = realloc(p->slots, cap * sizeof(*s));
	if (!s)
		return false;
	p->slots = s;
	struct resp_arg *a = realloc(p->argv, cap * sizeof(*a));
	if (!a)
		return false;
	p->argv = a;
	p->cap = cap;
	return true;
}

/* Appends one argument (and its NUL) to the command being built. */
static bool push_arg(struct resp_parser *p, const char *s, size_t len)
{
	if (p->argc >= p->lim.max_args) {
		set_error(p, "Protocol error: invalid multibulk length");
		return false;
	}
	/* inline requests too, in the words of the multibulk ones */
	if (p->unauth && p->argc >= RESP_UNAUTH_MAX_ARGS) {
		set_error(p, "Protocol error: unauthenticated multibulk length");
		return false;
	}
	if (p->unauth && len > RESP_UNAUTH_MAX_BULK) {
		set_error(p, "Protocol error: unauthenticated bulk length");
		return false;
	}
	if (!reserve_args(p, p->argc + 1))
		goto oom;
	if (p->arena_cap - p->arena_len < len + 1) {
		size_t cap = p->arena_cap ? p->arena_cap : 256;
		while (cap - p->arena_len < len + 1)
			cap *= 2;
		char *a = realloc(p->arena, cap);
		if (!a)
			goto oom;
		p->arena = a;
		p->arena_cap = cap;
	}
	memcpy(p->arena + p->arena_len, s, len);
	p->arena[p->arena_len + len] = '\0';
	p->slots[p->argc].off = p->arena_len;
	p->slots[p->argc].len = len;
	p->arena_len += len + 1;
	p->argc++;
	return true;
oom:
	set_error(p, "Protocol error: out of memory");
	return false;
}

static void reset_cmd(struct resp_parser *p)
{
	p->argc = 0;
	p->arena_len = 0;
}

/* ---- hiredis reply-object functions: the parser is every object ---- */

static void *type_error(struct resp_parser *p, char got)
{
	char msg[64];
	snprintf(msg, sizeof(msg), "Protocol error: expected '$', got '%c'", got);
	set_error(p, msg);
	return NULL;
}

static void *obj_string(const redisReadTask *t, char *s, size_t len)
{
	struct resp_parser *p = t->privdata;
	if (t->type == REDIS_REPLY_STATUS)
		return type_error(p, '+');
	if (t->type == REDIS_REPLY_ERROR)
		return type_error(p, '-');
	if (!t->parent || t->type != REDIS_REPLY_STRING)
		return type_error(p, '?');
	if (len > p->lim.max_bulk) {
		set_error(p, "Protocol error: invalid bulk length");
		return NULL;
	}
	if (p->unauth && len > RESP_UNAUTH_MAX_BULK) {
		set_error(p, "Protocol error: unauthenticated bulk length");
		return NULL;
	}
	return push_arg(p, s, len) ? p : NULL;
}

static void *obj_array(const redisReadTask *t, int n)
{
	struct resp_parser *p = t->privdata;
	if (t->parent)
		return type_error(p, '*');
	if (n < 0 || (uint32_t)n > p->lim.max_args) {
		set_error(p, "Protocol error: invalid multibulk length");
		return NULL;
	}
	if (p->unauth && n > RESP_UNAUTH_MAX_ARGS) {
		set_error(p, "Protocol error: unauthenticated multibulk length");
		return NULL;
	}
	if (!reserve_args(p, (uint32_t)n)) {
		set_error(p, "Protocol error: out of memory");
		return NULL;
	}
	return p;
}

static void *obj_integer(const redisReadTask *t, long long v)
{
	return type_error(t->privdata, ':');
}

static void *obj_nil(const redisReadTask *t)
{
	struct resp_parser *p = t->privdata;
	if (t->parent) { /* `$-1` as an argument */
		set_error(p, "Protocol error: invalid bulk length");
		return NULL;
	}
	return p; /* `*-1`: an empty request, skipped */
}

static void obj_free(void *obj)
{
	/* nothing: objects are the parser itself */
}

static redisReplyObjectFunctions obj_fns = {
	.createString = obj_string,
	.createArray = obj_array,
	.createInteger = obj_integer,
	.createNil = obj_nil,
	.freeObject = obj_free,
};

/* hiredis's own protocol errors, in Redis's words. */
static const struct {
	const char *prefix;
	const char *msg;
} hiredis_errors[] = {
	{"Bad multi-bulk length", "Protocol error: invalid multibulk length"},
	{"Multi-bulk length out of range", "Protocol error: invalid multibulk length"},
	{"Bad bulk string length", "Protocol error: invalid bulk length"},
	{"Bulk string length out of range", "Protocol error: invalid bulk length"},
	{"No support for nested", "Protocol error: expected '$', got '*'"},
	{"Out of memory", "Protocol error: out of memory"},
};

/* Decodes the byte of `Protocol error, got "X" as reply type byte`, where X
 * is quoted as sdscatrepr() does. Returns -1 if the text is not that. */
static int type_byte_of(const char *e)
{
	static const char tag[] = "Protocol error, got \"";
	static const char esc_from[] = "nrtab\\\"";
	static const char esc_to[] = "\n\r\t\a\b\\\"";
	if (strncmp(e, tag, sizeof(tag) - 1) != 0)
		return -1;
	const char *s = e + sizeof(tag) - 1;
	if (s[0] != '\\')
		return (unsigned char)s[0];
	const char *hit = s[1] ? strchr(esc_from, s[1]) : NULL;
	if (hit)
		return (unsigned char)esc_to[hit - esc_from];
	if (s[1] == 'x' && isxdigit((unsigned char)s[2]) && isxdigit((unsigned char)s[3])) {
		char hex[3] = {s[2], s[3], 0};
		return (int)strtol(hex, NULL, 16);
	}
	return -1;
}

static void take_hiredis_error(struct resp_parser *p)
{
	if (p->err)
		return; /* ours, set by an object function: more precise */
	const char *e = p->rd->errstr;
	int c = type_byte_of(e);
	if (c >= 0) {
		type_error(p, (char)c);
		return;
	}
	for (size_t i = 0; i < sizeof(hiredis_errors) / sizeof(hiredis_errors[0]); i++) {
		if (strncmp(e, hiredis_errors[i].prefix, strlen(hiredis_errors[i].prefix)) == 0) {
			set_error(p, hiredis_errors[i].msg);
			return;
		}
	}
	set_error(p, "Protocol error: malformed request");
}

/* ---- public ---- */

struct resp_parser *resp_parser_new(const struct resp_limits *lim)
{
	if (!lim || !lim->max_args || !lim->max_bulk || !lim->max_inline || !lim->max_query ||
	    lim->max_query > INT_MAX / 2 || lim->max_args > INT_MAX / 2)
		return NULL;
	struct resp_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->lim = *lim;
	p->rd = redisReaderCreateWithFunctions(&obj_fns);
	if (!p->rd) {
		free(p);
		return NULL;
	}
	p->rd->privdata = p;
	return p;
}

void resp_parser_free(struct resp_parser *p)
{
	if (!p)
		return;
	redisReaderFree(p->rd);
	free(p->arena);
	free(p->slots);
	free(p->argv);
	free(p);
}

static size_t pending(const struct resp_parser *p)
{
	return p->rd->len - p->rd->pos;
}

size_t resp_parser_buffered(const struct resp_parser *p)
{
	return pending(p) + (p->building ? p->arena_len : 0);
}

size_t resp_parser_room(const struct resp_parser *p)
{
	size_t used = resp_parser_buffered(p);
	if (p->err || used >= p->lim.max_query)
		return 0;
	return p->lim.max_query - used;
}

enum resp_status resp_parser_feed(struct resp_parser *p, const char *buf, size_t len)
{
	if (p->err)
		return RESP_ERROR;
	if (len > resp_parser_room(p)) {
		set_error(p, "Protocol error: query buffer limit reached");
		return RESP_ERROR;
	}
	if (len && redisReaderFeed(p->rd, buf, len) != REDIS_OK) {
		set_error(p, "Protocol error: out of memory");
		return RESP_ERROR;
	}
	return RESP_NEED_MORE;
}

void resp_parser_set_unauthenticated(struct resp_parser *p, bool unauth)
{
	p->unauth = unauth;
}

const char *resp_parser_error(const struct resp_parser *p)
{
	return p->err;
}

/* Between requests: drop consumed bytes so the buffer does not grow. */
static void compact(struct resp_parser *p)
{
	redisReader *r = p->rd;
	if (r->pos == 0)
		return;
	if (r->pos == r->len) {
		sdsclear(r->buf);
	} else {
		if (r->pos < 4096)
			return; /* not worth a memmove yet */
		sdsrange(r->buf, (int)r->pos, -1);
	}
	r->pos = 0;
	r->len = sdslen(r->buf);
}

/* Parses an unsigned decimal header line "[*$]digits\r"; -1 if not that. */
static long long header_value(const char *s, const char *end)
{
	long long v = 0;
	if (s >= end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || v > (LLONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* A multibulk is incomplete: refuse an oversized or endless pending header
 * now rather than after buffering what it announces. hiredis has consumed
 * the type byte of the item it waits for, so pos is at its digits. */
static void check_pending_header(struct resp_parser *p)
{
	redisReader *r = p->rd;
	if (r->ridx < 0 || r->pos >= r->len)
		return;
	const redisReadTask *cur = &r->rstack[r->ridx];
	const char *s = r->buf + r->pos;
	size_t n = r->len - r->pos;
	const char *cr = memchr(s, '\r', n);
	if (cur->type == REDIS_REPLY_STRING) {
		if (!cr) {
			if (n > 32)
				set_error(p, "Protocol error: too big bulk count string");
			return;
		}
		long long v = header_value(s, cr);
		if (v >= 0 && (unsigned long long)v > p->lim.max_bulk)
			set_error(p, "Protocol error: invalid bulk length");
		else if (v > RESP_UNAUTH_MAX_BULK && p->unauth)
			set_error(p, "Protocol error: unauthenticated bulk length");
	} else if (cur->type == REDIS_REPLY_ARRAY && r->ridx == 0 && !cr && n > 32) {
		set_error(p, "Protocol error: too big mbulk count string");
	}
}

static enum resp_status next_multibulk(struct resp_parser *p, struct resp_cmd *out)
{
	void *reply = NULL;
	if (!p->building) {
		reset_cmd(p);
		p->building = true;
	}
	if (redisReaderGetReply(p->rd, &reply) != REDIS_OK || p->err) {
		take_hiredis_error(p);
		return RESP_ERROR;
	}
	if (!reply) {
		check_pending_header(p);
		return p->err ? RESP_ERROR : RESP_NEED_MORE;
	}
	p->building = false;
	for (uint32_t i = 0; i < p->argc; i++) {
		p->argv[i].p = p->arena + p->slots[i].off;
		p->argv[i].len = p->slots[i].len;
	}
	out->argc = (int)p->argc;
	out->argv = p->argv;
	return RESP_CMD;
}

/* Splits one inline line into arguments, as redis-cli quotes them:
 * "..." with \n \r \t \b \a \xHH \<c> escapes, '...' with \' only; a closing
 * quote must be followed by a space or the end of the line. */
static bool split_inline(struct resp_parser *p, const char *s, const char *end)
{
	static const char esc_from[] = "nrtba";
	static const char esc_to[] = "\n\r\t\b\a";
	char stackbuf[256];
	size_t cap = sizeof(stackbuf);
	char *heap = NULL;
	char *tok = stackbuf;
	bool ok = true;

	while (ok) {
		while (s < end && isspace((unsigned char)*s))
			s++;
		if (s >= end)
			break;
		size_t n = 0;
		char q = 0; /* the open quote, or 0 */
		bool done = false;
		while (!done) {
			char c;
			if (s >= end) {
				if (q) {
					set_error(p,
						  "Protocol error: unbalanced quotes in request");
					ok = false;
				}
				break;
			}
			if (q == '"' && s[0] == '\\' && s + 3 < end && s[1] == 'x' &&
			    isxdigit((unsigned char)s[2]) && isxdigit((unsigned char)s[3])) {
				char hex[3] = {s[2], s[3], 0};
				c = (char)strtol(hex, NULL, 16);
				s += 4;
			} else if (q == '"' && s[0] == '\\' && s + 1 < end) {
				const char *hit = strchr(esc_from, s[1]);
				c = (hit && s[1]) ? esc_to[hit - esc_from] : s[1];
				s += 2;
			} else if (q == '\'' && s[0] == '\\' && s + 1 < end && s[1] == '\'') {
				c = '\'';
				s += 2;
			} else if (q && s[0] == q) {
				s++;
				if (s < end && !isspace((unsigned char)*s)) {
					set_error(p,
						  "Protocol error: unbalanced quotes in request");
					ok = false;
				}
				done = true;
				continue;
			} else if (!q && (*s == '"' || *s == '\'')) {
				q = *s++;
				continue;
			} else if (!q && isspace((unsigned char)*s)) {
				done = true;
				continue;
			} else {
				c = *s++;
			}
			if (n == cap) {
				char *h = realloc(heap, cap * 2);
				if (!h) {
					set_error(p, "Protocol error: out of memory");
					ok = false;
					break;
				}
				if (!heap)
					memcpy(h, stackbuf, n);
				heap = h;
				tok = h;
				cap *= 2;
			}
			tok[n++] = c;
		}
		if (ok && !push_arg(p, tok, n))
			ok = false;
	}
	free(heap);
	return ok;
}

static enum resp_status next_inline(struct resp_parser *p, struct resp_cmd *out)
{
	redisReader *r = p->rd;
	const char *s = r->buf + r->pos;
	size_t n = r->len - r->pos;
	const char *nl = memchr(s, '\n', n);
	if (!nl) {
		if (n - (s[n - 1] == '\r') > p->lim.max_inline) {
			set_error(p, "Protocol error: too big inline request");
			return RESP_ERROR;
		}
		return RESP_NEED_MORE;
	}
	const char *end = nl;
	if (end > s && end[-1] == '\r')
		end--;
	if ((size_t)(end - s) > p->lim.max_inline) {
		set_error(p, "Protocol error: too big inline request");
		return RESP_ERROR;
	}
	reset_cmd(p);
	if (!split_inline(p, s, end)) {
		if (!p->err)
			set_error(p, "Protocol error: invalid multibulk length");
		return RESP_ERROR;
	}
	r->pos += (size_t)(nl + 1 - s);
	for (uint32_t i = 0; i < p->argc; i++) {
		p->argv[i].p = p->arena + p->slots[i].off;
		p->argv[i].len = p->slots[i].len;
	}
	out->argc = (int)p->argc;
	out->argv = p->argv;
	return RESP_CMD;
}

enum resp_status resp_parser_next(struct resp_parser *p, struct resp_cmd *out)
{
	out->argc = 0;
	out->argv = NULL;
	for (;;) {
		enum resp_status st;
		if (p->err)
			return RESP_ERROR;
		if (!p->building) {
			compact(p);
			if (p->rd->pos >= p->rd->len)
				return RESP_NEED_MORE;
		}
		if (p->building || p->rd->buf[p->rd->pos] == '*')
			st = next_multibulk(p, out);
		else
			st = next_inline(p, out);
		if (st == RESP_CMD && out->argc == 0)
			continue; /* `*0`, `*-1`, a blank line */
		if (st == RESP_NEED_MORE && resp_parser_room(p) == 0) {
			set_error(p, "Protocol error: query buffer limit reached");
			return RESP_ERROR;
		}
		return st;
	}
}
