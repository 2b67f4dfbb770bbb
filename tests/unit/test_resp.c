/*
 * test_resp: protocols/resp, requests and replies, driven by tables.
 *
 * Every request case runs under several ways of splitting the input into
 * feeds (all at once, byte by byte, seeded random cuts) and must give the
 * same commands and the same error each way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "protocols/resp/resp.h"

/* Small limits so that every one of them is easy to cross. */
static const struct resp_limits small = {
	.max_args = 4,
	.max_bulk = 8,
	.max_inline = 16,
	.max_query = 64,
};

/* A query buffer smaller than the largest command the other limits allow. */
static const struct resp_limits tiny_query = {
	.max_args = 4,
	.max_bulk = 8,
	.max_inline = 16,
	.max_query = 32,
};

/* Renders commands as "arg,arg;arg" and the error as "!message". */
struct outcome {
	char text[1024];
	size_t len;
};

static void put(struct outcome *oc, const char *s, size_t n)
{
	assert_true(oc->len + n < sizeof(oc->text));
	memcpy(oc->text + oc->len, s, n);
	oc->len += n;
	oc->text[oc->len] = '\0';
}

/* Drains every command; true if it stopped on an error. */
static int drain(struct resp_parser *p, struct outcome *oc)
{
	struct resp_cmd c;
	enum resp_status st;
	while ((st = resp_parser_next(p, &c)) == RESP_CMD) {
		assert_true(c.argc > 0);
		if (oc->len)
			put(oc, ";", 1);
		for (int i = 0; i < c.argc; i++) {
			assert_int_equal(c.argv[i].p[c.argv[i].len], '\0');
			if (i)
				put(oc, ",", 1);
			put(oc, c.argv[i].p, c.argv[i].len);
		}
	}
	if (st == RESP_ERROR) {
		put(oc, "!", 1);
		put(oc, resp_parser_error(p), strlen(resp_parser_error(p)));
		return 1;
	}
	return 0;
}

/* split: 0 = whole, 1 = byte by byte, >1 = random cuts seeded by split. */
static void run(const struct resp_limits *lim, const char *in, size_t n, unsigned split,
		struct outcome *oc)
{
	struct resp_parser *p = resp_parser_new(lim);
	assert_non_null(p);
	memset(oc, 0, sizeof(*oc));
	unsigned seed = split;
	size_t at = 0;
	while (at < n) {
		size_t k = n - at;
		if (split == 1)
			k = 1;
		else if (split > 1)
			k = 1 + (size_t)(rand_r(&seed) % (unsigned)(k < 7 ? k : 7));
		if (k > resp_parser_room(p)) {
			/* the contract: feeding past room is an error */
			assert_int_equal(resp_parser_feed(p, in + at, k), RESP_ERROR);
			put(oc, "!", 1);
			put(oc, resp_parser_error(p), strlen(resp_parser_error(p)));
			break;
		}
		assert_int_equal(resp_parser_feed(p, in + at, k), RESP_NEED_MORE);
		at += k;
		if (drain(p, oc))
			break;
	}
	if (resp_parser_error(p)) {
		/* sticky: nothing more is accepted or parsed */
		struct resp_cmd c;
		assert_int_equal(resp_parser_feed(p, "PING\r\n", 6), RESP_ERROR);
		assert_int_equal(resp_parser_next(p, &c), RESP_ERROR);
		assert_int_equal(resp_parser_room(p), 0);
	}
	resp_parser_free(p);
}

struct req_case {
	const char *name;
	const char *in;
	const char *want; /* commands, then "!error" if any */
	const struct resp_limits *lim;
};

#define S(x) x, sizeof(x) - 1

static const struct req_case req_cases[] = {
	{"multibulk", "*1\r\n$4\r\nPING\r\n", "PING", NULL},
	{"multibulk 2", "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n", "ECHO,hello", NULL},
	{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "ECHO,", NULL},
	{"pipelined", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n",
	 "PING;PING;ECHO,x", NULL},
	{"inline crlf", "PING\r\n", "PING", NULL},
	{"inline lf", "PING\n", "PING", NULL},
	{"inline args", "LOCK.STATE foo\n", "LOCK.STATE,foo", NULL},
	{"inline spaces", "  a   b \t c  \r\n", "a,b,c", NULL},
	{"inline quotes", "SET \"a b\" 'c d'\r\n", "SET,a b,c d", NULL},
	{"inline escapes", "E \"\\x41\\x62\\t\" 'it\\'s'\r\n", "E,Ab\t,it's", NULL},
	{"inline quote mid token", "E a\"b c\"\r\n", "E,ab c", NULL},
	{"inline empty quotes", "E \"\" ''\r\n", "E,,", NULL},
	{"inline pipelined", "PING\r\nPING\nECHO a\r\n", "PING;PING;ECHO,a", NULL},
	{"blank lines skipped", "\r\n\n  \r\nPING\r\n", "PING", NULL},
	{"empty multibulk skipped", "*0\r\n*-1\r\nPING\r\n", "PING", NULL},
	{"mixed", "PING\r\n*1\r\n$4\r\nPING\r\nECHO a\r\n*1\r\n$1\r\nb\r\n", "PING;PING;ECHO,a;b",
	 NULL},
	{"incomplete waits", "*2\r\n$4\r\nECHO\r\n$5\r\nhel", "", NULL},
	{"incomplete inline waits", "PING", "", NULL},
	/* errors, worded as Redis words them */
	{"bad count", "*abc\r\n", "!Protocol error: invalid multibulk length", NULL},
	{"empty count", "*\r\n", "!Protocol error: invalid multibulk length", NULL},
	{"negative count", "*-5\r\n", "!Protocol error: invalid multibulk length", NULL},
	{"huge count", "*99999999999999999999\r\n", "!Protocol error: invalid multibulk length",
	 NULL},
	{"not bulk x", "*1\r\nx\r\n", "!Protocol error: expected '$', got 'x'", NULL},
	{"not bulk int", "*1\r\n:1\r\n", "!Protocol error: expected '$', got ':'", NULL},
	{"not bulk status", "*1\r\n+OK\r\n", "!Protocol error: expected '$', got '+'", NULL},
	{"not bulk error", "*1\r\n-ERR\r\n", "!Protocol error: expected '$', got '-'", NULL},
	{"not bulk resp3", "*1\r\n%1\r\n", "!Protocol error: expected '$', got '%'", NULL},
	{"nested array", "*1\r\n*1\r\n$1\r\na\r\n", "!Protocol error: expected '$', got '*'", NULL},
	{"bad bulk len", "*1\r\n$abc\r\n", "!Protocol error: invalid bulk length", NULL},
	{"nil bulk", "*1\r\n$-1\r\n", "!Protocol error: invalid bulk length", NULL},
	{"negative bulk", "*1\r\n$-5\r\n", "!Protocol error: invalid bulk length", NULL},
	{"unbalanced dq", "PING \"a\r\n", "!Protocol error: unbalanced quotes in request", NULL},
	{"unbalanced sq", "PING 'a\r\n", "!Protocol error: unbalanced quotes in request", NULL},
	{"quote then text", "PING \"a\"b\r\n", "!Protocol error: unbalanced quotes in request",
	 NULL},
	{"commands before error", "PING\r\n*1\r\nx\r\nPING\r\n",
	 "PING!Protocol error: expected '$', got 'x'", NULL},
	/* limits */
	{"args at limit", "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", "a,b,c,d", &small},
	{"args over limit", "*5\r\n", "!Protocol error: invalid multibulk length", &small},
	{"inline args over limit", "a b c d e\r\n", "!Protocol error: invalid multibulk length",
	 &small},
	{"bulk at limit", "*1\r\n$8\r\n12345678\r\n", "12345678", &small},
	{"bulk over limit, refused at header", "*1\r\n$9\r\n",
	 "!Protocol error: invalid bulk length", &small},
	{"bulk header endless", "*1\r\n$00000000000000000000000000000000000000000",
	 "!Protocol error: too big bulk count string", NULL},
	{"count header endless", "*00000000000000000000000000000000000000000",
	 "!Protocol error: too big mbulk count string", NULL},
	{"inline at limit", "ECHO 12345678901\r\n", "ECHO,12345678901", &small},
	{"inline over limit", "ECHO 123456789012\r\n", "!Protocol error: too big inline request",
	 &small},
	{"inline over limit, no newline", "ECHO 123456789012",
	 "!Protocol error: too big inline request", &small},
	{"query buffer", "*4\r\n$8\r\n12345678\r\n$8\r\n12345678\r\n$8\r\n12345678\r\n$8\r\n1234",
	 "!Protocol error: query buffer limit reached", &tiny_query},
};

static void test_requests(void **state)
{
	static const unsigned splits[] = {0, 1, 2, 3, 5, 8, 13, 21};
	for (size_t i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
		const struct req_case *c = &req_cases[i];
		const struct resp_limits *lim = c->lim ? c->lim : &resp_default_limits;
		for (size_t s = 0; s < sizeof(splits) / sizeof(splits[0]); s++) {
			struct outcome oc;
			run(lim, c->in, strlen(c->in), splits[s], &oc);
			if (strcmp(oc.text, c->want) != 0)
				fail_msg("%s (split %u): got \"%s\", want \"%s\"", c->name,
					 splits[s], oc.text, c->want);
		}
	}
}

static void test_binary_argument(void **state)
{
	static const char in[] = "*2\r\n$4\r\nECHO\r\n$5\r\na\0\r\nb\r\n";
	struct resp_parser *p = resp_parser_new(&resp_default_limits);
	struct resp_cmd c;
	assert_non_null(p);
	assert_int_equal(resp_parser_feed(p, in, sizeof(in) - 1), RESP_NEED_MORE);
	assert_int_equal(resp_parser_next(p, &c), RESP_CMD);
	assert_int_equal(c.argc, 2);
	assert_int_equal(c.argv[1].len, 5);
	assert_memory_equal(c.argv[1].p, "a\0\r\nb", 5);
	assert_int_equal(resp_parser_next(p, &c), RESP_NEED_MORE);
	assert_int_equal(resp_parser_buffered(p), 0);
	resp_parser_free(p);
}

/* Feeding in bursts of room() and draining in between parses a pipeline far
 * larger than the query buffer, and the buffer does not grow with it. */
static void test_long_pipeline(void **state)
{
	struct resp_limits lim = resp_default_limits;
	lim.max_query = 100;
	struct resp_parser *p = resp_parser_new(&lim);
	assert_non_null(p);
	static const char one[] = "*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\nPING\r\n";
	size_t total = 0, at = 0, cmds = 0;
	char stream[64 * 1024];
	while (total + sizeof(one) - 1 <= sizeof(stream)) {
		memcpy(stream + total, one, sizeof(one) - 1);
		total += sizeof(one) - 1;
	}
	while (at < total) {
		size_t k = resp_parser_room(p);
		if (k > total - at)
			k = total - at;
		assert_true(k > 0);
		assert_int_equal(resp_parser_feed(p, stream + at, k), RESP_NEED_MORE);
		at += k;
		struct resp_cmd c;
		enum resp_status st;
		while ((st = resp_parser_next(p, &c)) == RESP_CMD)
			cmds++;
		assert_int_equal(st, RESP_NEED_MORE);
	}
	assert_int_equal(cmds, 2 * (total / (sizeof(one) - 1)));
	resp_parser_free(p);
}

static void test_feed_past_room(void **state)
{
	struct resp_parser *p = resp_parser_new(&small);
	char big[65];
	memset(big, 'a', sizeof(big));
	assert_int_equal(resp_parser_room(p), 64);
	assert_int_equal(resp_parser_feed(p, big, sizeof(big)), RESP_ERROR);
	assert_string_equal(resp_parser_error(p), "Protocol error: query buffer limit reached");
	resp_parser_free(p);
}

/* Before AUTH, Redis 7's small limits: at most 10 arguments and 16384
 * bytes each, multibulk and inline; the limits hold per request, so a
 * pipelined AUTH lifts them for what follows. */
static void test_unauthenticated_limits(void **state)
{
	static const struct {
		const char *in;
		const char *err; /* NULL: parsed */
	} cases[] = {
		{"*10\r\n$1\r\na\r\n", NULL},
		{"*11\r\n", "Protocol error: unauthenticated multibulk length"},
		{"*2\r\n$16384\r\n", NULL},
		{"*2\r\n$16385\r\n", "Protocol error: unauthenticated bulk length"},
		{"a b c d e f g h i j\r\n", NULL},
		{"a b c d e f g h i j k\r\n", "Protocol error: unauthenticated multibulk length"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct resp_parser *p = resp_parser_new(&resp_default_limits);
		assert_non_null(p);
		resp_parser_set_unauthenticated(p, true);
		struct resp_cmd c;
		assert_int_equal(resp_parser_feed(p, cases[i].in, strlen(cases[i].in)),
				 RESP_NEED_MORE);
		enum resp_status st = resp_parser_next(p, &c);
		if (cases[i].err) {
			assert_int_equal(st, RESP_ERROR);
			assert_string_equal(resp_parser_error(p), cases[i].err);
		} else {
			assert_int_not_equal(st, RESP_ERROR);
		}
		resp_parser_free(p);
	}
	/* an inline argument over 16384 bytes */
	struct resp_parser *p = resp_parser_new(&resp_default_limits);
	static char line[16390];
	memset(line, 'x', 16385);
	memcpy(line + 16385, "\r\n", 2);
	resp_parser_set_unauthenticated(p, true);
	assert_int_equal(resp_parser_feed(p, line, 16387), RESP_NEED_MORE);
	struct resp_cmd c;
	assert_int_equal(resp_parser_next(p, &c), RESP_ERROR);
	assert_string_equal(resp_parser_error(p), "Protocol error: unauthenticated bulk length");
	resp_parser_free(p);

	/* AUTH, then a larger request in the same feed, once authenticated */
	p = resp_parser_new(&resp_default_limits);
	char in[256];
	size_t n = (size_t)snprintf(in, sizeof(in),
				    "AUTH pw\r\n*12\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na"
				    "\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n"
				    "$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n");
	resp_parser_set_unauthenticated(p, true);
	assert_int_equal(resp_parser_feed(p, in, n), RESP_NEED_MORE);
	assert_int_equal(resp_parser_next(p, &c), RESP_CMD);
	assert_int_equal(c.argc, 2);
	resp_parser_set_unauthenticated(p, false);
	assert_int_equal(resp_parser_next(p, &c), RESP_CMD);
	assert_int_equal(c.argc, 12);
	resp_parser_free(p);
}

static void test_bad_limits(void **state)
{
	struct resp_limits lim = resp_default_limits;
	lim.max_args = 0;
	assert_null(resp_parser_new(&lim));
	assert_null(resp_parser_new(NULL));
}

/* ---- replies ---- */

typedef void (*encode_fn)(struct buf *o, enum resp_proto proto);

static void e_simple(struct buf *o, enum resp_proto pr)
{
	resp_add_simple(o, S("OK"));
}
static void e_simple_crlf(struct buf *o, enum resp_proto pr)
{
	resp_add_simple(o, S("a\r\nb"));
}
static void e_error(struct buf *o, enum resp_proto pr)
{
	resp_add_error(o, S("ERR bad\nthing"));
}
static void e_errorf(struct buf *o, enum resp_proto pr)
{
	resp_add_errorf(o, "ERR unknown command '%s'", "x");
}
static void e_int(struct buf *o, enum resp_proto pr)
{
	resp_add_int(o, -42);
}
static void e_int_extremes(struct buf *o, enum resp_proto pr)
{
	resp_add_int(o, 0);
	resp_add_int(o, -9223372036854775807LL - 1);
	resp_add_int(o, 9223372036854775807LL);
}
static void e_bulk(struct buf *o, enum resp_proto pr)
{
	resp_add_bulk(o, S("a\r\nb"));
}
static void e_bulk_empty(struct buf *o, enum resp_proto pr)
{
	resp_add_bulk(o, "", 0);
	resp_add_bulk(o, NULL, 0); /* no bytes, no pointer (INFO of an empty section) */
}
static void e_cstr(struct buf *o, enum resp_proto pr)
{
	resp_add_cstr(o, "redis");
}
static void e_null(struct buf *o, enum resp_proto pr)
{
	resp_add_null(o, pr);
}
static void e_null_array(struct buf *o, enum resp_proto pr)
{
	resp_add_null_array(o, pr);
}
static void e_array(struct buf *o, enum resp_proto pr)
{
	resp_add_array(o, 2);
	resp_add_int(o, 1);
	resp_add_cstr(o, "x");
}
static void e_map(struct buf *o, enum resp_proto pr)
{
	resp_add_map(o, pr, 1);
	resp_add_cstr(o, "k");
	resp_add_int(o, 7);
}
static void e_set(struct buf *o, enum resp_proto pr)
{
	resp_add_set(o, pr, 1);
	resp_add_cstr(o, "m");
}
static void e_push(struct buf *o, enum resp_proto pr)
{
	resp_add_push(o, pr, 2);
	resp_add_cstr(o, "lost");
	resp_add_cstr(o, "taken_over");
}
static void e_verbatim(struct buf *o, enum resp_proto pr)
{
	resp_add_verbatim(o, pr, "txt", S("a:1\r\n"));
}
static void e_double(struct buf *o, enum resp_proto pr)
{
	resp_add_double(o, pr, 1.5);
}
static void e_double_inf(struct buf *o, enum resp_proto pr)
{
	resp_add_double(o, pr, -1.0 / 0.0);
}
static void e_bool(struct buf *o, enum resp_proto pr)
{
	resp_add_bool(o, pr, true);
	resp_add_bool(o, pr, false);
}
static void e_printf(struct buf *o, enum resp_proto pr)
{
	buf_printf(o, "%s:%d\r\n", "connected_clients", 3);
}

static const struct {
	const char *name;
	encode_fn fn;
	const char *resp2, *resp3;
} reply_cases[] = {
	{"simple", e_simple, "+OK\r\n", "+OK\r\n"},
	{"simple crlf", e_simple_crlf, "+a  b\r\n", "+a  b\r\n"},
	{"error", e_error, "-ERR bad thing\r\n", "-ERR bad thing\r\n"},
	{"errorf", e_errorf, "-ERR unknown command 'x'\r\n", "-ERR unknown command 'x'\r\n"},
	{"int", e_int, ":-42\r\n", ":-42\r\n"},
	{"int extremes", e_int_extremes, ":0\r\n:-9223372036854775808\r\n:9223372036854775807\r\n",
	 ":0\r\n:-9223372036854775808\r\n:9223372036854775807\r\n"},
	{"bulk", e_bulk, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
	{"bulk empty", e_bulk_empty, "$0\r\n\r\n$0\r\n\r\n", "$0\r\n\r\n$0\r\n\r\n"},
	{"cstr", e_cstr, "$5\r\nredis\r\n", "$5\r\nredis\r\n"},
	{"null", e_null, "$-1\r\n", "_\r\n"},
	{"null array", e_null_array, "*-1\r\n", "_\r\n"},
	{"array", e_array, "*2\r\n:1\r\n$1\r\nx\r\n", "*2\r\n:1\r\n$1\r\nx\r\n"},
	{"map", e_map, "*2\r\n$1\r\nk\r\n:7\r\n", "%1\r\n$1\r\nk\r\n:7\r\n"},
	{"set", e_set, "*1\r\n$1\r\nm\r\n", "~1\r\n$1\r\nm\r\n"},
	{"push", e_push, "*2\r\n$4\r\nlost\r\n$10\r\ntaken_over\r\n",
	 ">2\r\n$4\r\nlost\r\n$10\r\ntaken_over\r\n"},
	{"verbatim", e_verbatim, "$5\r\na:1\r\n\r\n", "=9\r\ntxt:a:1\r\n\r\n"},
	{"double", e_double, "$3\r\n1.5\r\n", ",1.5\r\n"},
	{"double inf", e_double_inf, "$4\r\n-inf\r\n", ",-inf\r\n"},
	{"bool", e_bool, ":1\r\n:0\r\n", "#t\r\n#f\r\n"},
	{"printf", e_printf, "connected_clients:3\r\n", "connected_clients:3\r\n"},
};

static void test_replies(void **state)
{
	for (size_t i = 0; i < sizeof(reply_cases) / sizeof(reply_cases[0]); i++) {
		for (int pr = RESP2; pr <= RESP3; pr++) {
			struct buf o;
			buf_init(&o, 0);
			reply_cases[i].fn(&o, (enum resp_proto)pr);
			const char *want =
				pr == RESP2 ? reply_cases[i].resp2 : reply_cases[i].resp3;
			assert_false(buf_failed(&o));
			if (o.len != strlen(want) || memcmp(o.buf, want, o.len) != 0)
				fail_msg("%s RESP%d: got \"%.*s\"", reply_cases[i].name, pr,
					 (int)o.len, o.buf);
			buf_free(&o);
		}
	}
}

/* ---- integers against a reference: snprintf("%lld") ---- */

/* Fails the test unless resp_add_int(v) wrote exactly ":<%lld of v>\r\n". */
static void check_int(struct buf *o, long long v)
{
	char want[32];
	int n = snprintf(want, sizeof(want), ":%lld\r\n", v);
	o->len = 0;
	resp_add_int(o, v);
	assert_false(buf_failed(o));
	if (o->len != (size_t)n || memcmp(o->buf, want, o->len) != 0)
		fail_msg("resp_add_int(%lld): got \"%.*s\"", v, (int)o->len, o->buf);
}

/* Every one-digit value of either sign (the fast path's range and its
 * edges), the ends of the range, and each power of ten and its neighbours:
 * where a digit count changes. */
static void test_int_boundaries(void **state)
{
	struct buf o;
	buf_init(&o, 0);
	for (long long v = -10; v <= 10; v++)
		check_int(&o, v);
	check_int(&o, INT64_MIN);
	check_int(&o, INT64_MIN + 1);
	check_int(&o, INT64_MAX);
	check_int(&o, INT64_MAX - 1);
	for (long long p = 1;; p *= 10) {
		for (long long d = -1; d <= 1; d++) {
			check_int(&o, p + d);
			check_int(&o, -(p + d));
		}
		if (p > INT64_MAX / 10) /* 10^18: the last power of ten in range */
			break;
	}
	/* the sign spelled out, not only compared with printf */
	o.len = 0;
	resp_add_int(&o, -5);
	assert_int_equal(o.len, 5);
	assert_memory_equal(o.buf, ":-5\r\n", 5);
	buf_free(&o);
}

/* splitmix64: a fixed seed gives the same values on every run. */
static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* 100,000 pseudo-random values; each is shifted right by a random amount so
 * that every magnitude (not only 19-digit ones) is drawn often. */
static void test_int_matches_printf(void **state)
{
	struct buf o;
	buf_init(&o, 0);
	uint64_t seed = 11;
	for (int i = 0; i < 100000; i++) {
		uint64_t r = next_u64(&seed);
		unsigned shift = 1 + (unsigned)(next_u64(&seed) % 63);
		long long v = (long long)(r >> shift); /* < 2^63: negating it is safe */
		check_int(&o, (r & 1) ? -v : v);
		check_int(&o, (long long)r); /* the whole range, as two's complement */
	}
	buf_free(&o);
}

static void test_out_grows_and_consumes(void **state)
{
	struct buf o;
	buf_init(&o, 0);
	char big[5000];
	memset(big, 'z', sizeof(big));
	resp_add_bulk(&o, big, sizeof(big));
	buf_printf(&o, "%.*s", 300, big); /* longer than printf's stack buffer */
	assert_int_equal(o.len, 7 + 5000 + 2 + 300);
	buf_consume(&o, 7);
	assert_int_equal(o.buf[0], 'z');
	buf_consume(&o, o.len);
	assert_int_equal(o.len, 0);
	buf_free(&o);
}

static void test_out_limit_is_sticky(void **state)
{
	struct buf o;
	buf_init(&o, 10);
	resp_add_simple(&o, S("OK"));
	assert_false(buf_failed(&o));
	resp_add_bulk(&o, S("0123456789"));
	assert_true(buf_failed(&o));
	size_t len = o.len;
	resp_add_int(&o, 1); /* ignored once failed */
	assert_int_equal(o.len, len);
	buf_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_unauthenticated_limits),
		cmocka_unit_test(test_binary_argument),
		cmocka_unit_test(test_long_pipeline),
		cmocka_unit_test(test_feed_past_room),
		cmocka_unit_test(test_bad_limits),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_int_boundaries),
		cmocka_unit_test(test_int_matches_printf),
		cmocka_unit_test(test_out_grows_and_consumes),
		cmocka_unit_test(test_out_limit_is_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
