/*
 * fuzz_resp: libFuzzer target for the RESP request parser.
 *
 * The first input byte seeds how the rest is cut into feeds, the second
 * picks default or tiny limits; every command returned is checked against
 * the parser's contract (argc within max_args, each argument within
 * max_bulk and NUL-terminated), and an error, once set, must stay set.
 * Bit 1 of the second byte parses as before AUTH: no command past Redis
 * 7's limits (RESP_UNAUTH_MAX_ARGS, RESP_UNAUTH_MAX_BULK) comes out.
 * Build (not part of the Makefile):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *     tests/fuzz/fuzz_resp.c protocols/resp/resp_parse.c protocols/resp/resp_reply.c \
 *     -lhiredis -o build/fuzz_resp
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/resp/resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct resp_limits tiny = {
	.max_args = 3,
	.max_bulk = 5,
	.max_inline = 12,
	.max_query = 24,
};

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned seed = data[0];
	const struct resp_limits *lim = (data[1] & 1) ? &tiny : &resp_default_limits;
	int unauth = data[1] & 2;
	data += 2;
	size -= 2;
	struct resp_parser *p = resp_parser_new(lim);
	if (!p)
		return 0;
	resp_parser_set_unauthenticated(p, unauth);
	struct buf o;
	buf_init(&o, 1 << 20);
	size_t at = 0;
	int failed = 0;
	while (at < size && !failed) {
		size_t k = 1 + (size_t)(rand_r(&seed) % 16);
		if (k > size - at)
			k = size - at;
		if (k > resp_parser_room(p))
			k = resp_parser_room(p);
		if (k == 0)
			break;
		check(resp_parser_feed(p, (const char *)data + at, k) == RESP_NEED_MORE);
		at += k;
		struct resp_cmd c;
		enum resp_status st;
		while ((st = resp_parser_next(p, &c)) == RESP_CMD) {
			check(c.argc > 0 && (uint32_t)c.argc <= lim->max_args);
			check(!unauth || c.argc <= RESP_UNAUTH_MAX_ARGS);
			resp_add_array(&o, (size_t)c.argc);
			for (int i = 0; i < c.argc; i++) {
				check(c.argv[i].p[c.argv[i].len] == '\0');
				check(!unauth || c.argv[i].len <= RESP_UNAUTH_MAX_BULK);
				check(c.argv[i].len <= lim->max_bulk ||
				      c.argv[i].len <= lim->max_inline);
				resp_add_bulk(&o, c.argv[i].p, c.argv[i].len);
			}
			buf_consume(&o, o.len);
		}
		if (st == RESP_ERROR) {
			const char *e = resp_parser_error(p);
			check(e && strncmp(e, "Protocol error: ", 16) == 0);
			check(resp_parser_next(p, &c) == RESP_ERROR);
			failed = 1;
		}
	}
	buf_free(&o);
	resp_parser_free(p);
	return 0;
}
