/*
 * test_resp_reader: protocols/resp/resp_reader, the RESP2/RESP3 reply reader of
 * the client subcommands, driven by a table. Every case is fed whole,
 * byte by byte and in two halves, and must read the same each way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "protocols/resp/resp_reader.h"

/* Reads every reply of in[0..len) fed in pieces of at most `step` bytes
 * (0: all at once); renders them as "text|text|" or "...!error". */
static void read_all(const char *in, size_t len, size_t step, char *out, size_t cap)
{
	struct resp_reader *r = resp_reader_new();
	assert_non_null(r);
	out[0] = '\0';
	size_t off = 0;
	bool failed = false;
	while (!failed) {
		struct resp_reply *rep;
		enum resp_read st = resp_reader_next(r, &rep);
		if (st == RESP_READ_REPLY) {
			char text[512];
			resp_reply_text(rep, text, sizeof(text));
			snprintf(out + strlen(out), cap - strlen(out), "%s|", text);
			resp_reply_free(rep);
			continue;
		}
		if (st == RESP_READ_ERROR) {
			snprintf(out + strlen(out), cap - strlen(out), "!%s", resp_reader_error(r));
			failed = true;
			break;
		}
		if (off == len)
			break;
		size_t n = step == 0 || step > len - off ? len - off : step;
		if (resp_reader_feed(r, in + off, n) == RESP_READ_ERROR) {
			snprintf(out + strlen(out), cap - strlen(out), "!%s", resp_reader_error(r));
			failed = true;
		}
		off += n;
	}
	resp_reader_free(r);
}

static const struct {
	const char *in;
	const char *want;
} cases[] = {
	{"+OK\r\n", "OK|"},
	{"-ERR lease-ms must be an integer\r\n", "ERR lease-ms must be an integer|"},
	{":42\r\n:-7\r\n", "42|-7|"},
	{"$5\r\nhello\r\n$0\r\n\r\n", "hello||"},
	{"$-1\r\n*-1\r\n_\r\n", "nil|nil|nil|"},
	{"#t\r\n#f\r\n,1.5\r\n(123456789012345678901234567890\r\n",
	 "true|false|1.5|123456789012345678901234567890|"},
	{"=8\r\ntxt:some\r\n", "some|"},
	{"!10\r\nSYNTAX bad\r\n", "SYNTAX bad|"},
	{"*2\r\n$1\r\na\r\n:1\r\n~1\r\n+x\r\n", "[a, 1]|~[x]|"},
	{"%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n",
	 "{server: redis, proto: 3}|"},
	{">4\r\n$9\r\nlock.lost\r\n$3\r\njob\r\n:7\r\n$7\r\ndeleted\r\n",
	 ">[lock.lost, job, 7, deleted]|"},
	/* a push between two replies, as the gateway may send one */
	{"+PONG\r\n>2\r\n$1\r\np\r\n:1\r\n+PONG\r\n", "PONG|>[p, 1]|PONG|"},
	/* an attribute is dropped, the reply it describes read */
	{"|1\r\n+ttl\r\n:3\r\n:5\r\n", "5|"},
	{"*0\r\n%0\r\n", "[]|{}|"},
	{"*1\r\n*1\r\n*1\r\n:1\r\n", "[[[1]]]|"},
	/* errors */
	{"?x\r\n", "!protocol error: unknown reply type byte"},
	{":12a\r\n", "!protocol error: invalid integer"},
	{"$3\r\nabcd\r\n", "!protocol error: bulk string not followed by CRLF"},
	{"$-2\r\n", "!protocol error: invalid bulk length"},
	{"*-2\r\n", "!protocol error: aggregate length out of range"},
	{"*5000\r\n", "!protocol error: aggregate length out of range"},
	{"*?\r\n", "!protocol error: streamed aggregates are not supported"},
	{"#x\r\n", "!protocol error: invalid boolean"},
	{"=2\r\nab\r\n", "!protocol error: verbatim string without its format"},
	{"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
	 "!protocol error: replies nested too deep"},
	/* the error stays set: nothing after it is read */
	{"+a\r\n:x\r\n+b\r\n", "a|!protocol error: invalid integer"},
	/* not whole: nothing yet, no error */
	{"$5\r\nhel", ""},
	{"*2\r\n:1\r\n", ""},
};

static void test_replies(void **state)
{
	static const size_t steps[] = {0, 1, 3, 7};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			char got[1024];
			read_all(cases[i].in, strlen(cases[i].in), steps[s], got, sizeof(got));
			if (strcmp(got, cases[i].want) != 0)
				fail_msg("case %zu fed by %zu: got '%s', want '%s'", i, steps[s],
					 got, cases[i].want);
		}
	}
}

/* Past RESP_READER_MAX_BUFFER buffered: an error, and it stays. */
static void test_buffer_bound(void **state)
{
	struct resp_reader *r = resp_reader_new();
	size_t n = RESP_READER_MAX_BUFFER / 2 + 1;
	char *big = calloc(1, n);
	assert_non_null(big);
	memcpy(big, "$99999999\r\n", 11);
	assert_int_equal(resp_reader_feed(r, big, n), RESP_READ_MORE);
	assert_int_equal(resp_reader_feed(r, big, n), RESP_READ_ERROR);
	assert_string_equal(resp_reader_error(r),
			    "protocol error: reply larger than the reader's buffer");
	assert_int_equal(resp_reader_feed(r, "+OK\r\n", 5), RESP_READ_ERROR);
	struct resp_reply *rep;
	assert_int_equal(resp_reader_next(r, &rep), RESP_READ_ERROR);
	assert_null(rep);
	free(big);
	resp_reader_free(r);
}

/* Replies taken out make room: a long run of small ones never fills the
 * buffer. */
static void test_consumed_bytes_are_dropped(void **state)
{
	struct resp_reader *r = resp_reader_new();
	for (int i = 0; i < 300000; i++) {
		struct resp_reply *rep;
		assert_int_equal(resp_reader_feed(r, "+PONG\r\n", 7), RESP_READ_MORE);
		assert_int_equal(resp_reader_next(r, &rep), RESP_READ_REPLY);
		assert_int_equal(rep->type, RESP_REPLY_STATUS);
		resp_reply_free(rep);
	}
	resp_reader_free(r);
}

/* The tree: types, integers, lengths (binary-safe strings). */
static void test_tree(void **state)
{
	static const char in[] = ">3\r\n$3\r\na\0b\r\n:-9\r\n%1\r\n+k\r\n_\r\n";
	struct resp_reader *r = resp_reader_new();
	struct resp_reply *rep;
	assert_int_equal(resp_reader_feed(r, in, sizeof(in) - 1), RESP_READ_MORE);
	assert_int_equal(resp_reader_next(r, &rep), RESP_READ_REPLY);
	assert_int_equal(rep->type, RESP_REPLY_PUSH);
	assert_int_equal(rep->n, 3);
	assert_int_equal(rep->elem[0].type, RESP_REPLY_STRING);
	assert_int_equal(rep->elem[0].len, 3);
	assert_memory_equal(rep->elem[0].str, "a\0b", 3);
	assert_int_equal(rep->elem[1].type, RESP_REPLY_INT);
	assert_int_equal(rep->elem[1].num, -9);
	assert_int_equal(rep->elem[2].type, RESP_REPLY_MAP);
	assert_int_equal(rep->elem[2].n, 2);
	assert_int_equal(rep->elem[2].elem[1].type, RESP_REPLY_NULL);
	resp_reply_free(rep);
	assert_int_equal(resp_reader_next(r, &rep), RESP_READ_MORE);
	resp_reader_free(r);
}

/* resp_reply_text cuts at its capacity and stays NUL-terminated. */
static void test_text_is_cut(void **state)
{
	struct resp_reply rep = {.type = RESP_REPLY_STATUS, .str = "abcdefgh", .len = 8};
	char buf[5];
	assert_string_equal(resp_reply_text(&rep, buf, sizeof(buf)), "abcd");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_buffer_bound),
		cmocka_unit_test(test_consumed_bytes_are_dropped),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_text_is_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
