/*
 * fuzz_http: libFuzzer target for the direct transport's HTTP/1.1 answer
 * parser (lib/http/http_parse.c), fed through the same sinks as the
 * transport.
 *
 * The first input byte seeds how the rest is cut into feeds, the second
 * says whether the request was HEAD. Checked: the body never passes
 * HTTP_BODY_MAX and is NUL-terminated; a result other than "more" is
 * final (nothing is fed after it, as the transport stops there); the
 * sink's captured headers stay within their buffers.
 * Built and run by `make fuzz` with the library sources.
 */
#include <event2/buffer.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/http/http_int.h"
#include "lib/http/http_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	bool head = data[1] & 1;
	data += 2;
	size -= 2;
	struct http_req *r = calloc(1, sizeof *r);
	struct evbuffer *in = evbuffer_new();
	if (!r || !in)
		abort();
	struct http_parser p;
	http_parser_init(&p, r, head);
	enum http_parse res = HTTP_PARSE_MORE;
	size_t at = 0;
	while (at < size && res == HTTP_PARSE_MORE) {
		size_t k = 1 + (size_t)(rand_r(&seed) % 64);
		if (k > size - at)
			k = size - at;
		evbuffer_add(in, data + at, k);
		at += k;
		res = http_parser_feed(&p, in);
		check(r->rlen <= HTTP_BODY_MAX);
		check(!r->rbuf || r->rbuf[r->rlen] == '\0');
		check(!r->has_date || strlen(r->date) < sizeof r->date);
		check(!r->has_crc32 || strlen(r->crc32) < sizeof r->crc32);
	}
	if (res == HTTP_PARSE_DONE)
		check(p.ps != HP_TO_CLOSE || !http_parser_reusable(&p));
	evbuffer_free(in);
	free(r->rbuf);
	free(r);
	return 0;
}
