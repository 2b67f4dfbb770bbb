/*
 * fuzz_resp_reader: libFuzzer target for the reply reader of the client
 * subcommands (protocols/resp/resp_reader).
 *
 * The first input byte seeds how the rest is cut into feeds. Every reply
 * taken out is checked against the reader's contract (strings
 * NUL-terminated at their length, element counts within the bound, a map's
 * even), rendered and freed; an error, once set, must stay set.
 * `make fuzz` runs it; by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *     tests/fuzz/fuzz_resp_reader.c protocols/resp/resp_reader.c -o build/fuzz_resp_reader
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/resp/resp_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static void check_reply(const struct resp_reply *r, int depth)
{
	check(depth <= RESP_READER_MAX_DEPTH);
	if (r->str != NULL)
		check(r->str[r->len] == '\0');
	check(r->n <= 2 * RESP_READER_MAX_ELEMS);
	check(r->type != RESP_REPLY_MAP || r->n % 2 == 0);
	for (size_t i = 0; i < r->n; i++)
		check_reply(&r->elem[i], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned seed = data[0];
	data++;
	size--;
	struct resp_reader *r = resp_reader_new();
	if (r == NULL)
		return 0;
	size_t at = 0;
	int failed = 0;
	while (at < size && !failed) {
		size_t k = 1 + (size_t)(rand_r(&seed) % 16);
		if (k > size - at)
			k = size - at;
		check(resp_reader_feed(r, (const char *)data + at, k) == RESP_READ_MORE);
		at += k;
		struct resp_reply *rep;
		enum resp_read st;
		while ((st = resp_reader_next(r, &rep)) == RESP_READ_REPLY) {
			char text[256];
			check_reply(rep, 0);
			resp_reply_text(rep, text, sizeof(text));
			check(strlen(text) < sizeof(text));
			resp_reply_free(rep);
		}
		if (st == RESP_READ_ERROR) {
			const char *e = resp_reader_error(r);
			check(e && strncmp(e, "protocol error: ", 16) == 0);
			check(resp_reader_next(r, &rep) == RESP_READ_ERROR && rep == NULL);
			failed = 1;
		}
	}
	resp_reader_free(r);
	return 0;
}
