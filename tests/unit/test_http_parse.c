/*
 * test_http_parse: the HTTP/1.1 answer parser of the direct transport, one
 * table of answers, each fed whole and byte by byte: status, body, the
 * headers the sinks keep (Date, x-amz-crc32), whether the connection may
 * be reused, and the answers it must refuse.
 */
#include <event2/buffer.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/http/http_int.h"
#include "lib/http/http_parse.h"

struct parse_case {
	const char *what;
	const char *in;
	bool head;
	enum http_parse want;
	long status;
	const char *body;
	const char *crc32; /* NULL: none */
	bool reusable;
	bool to_close; /* the body ends at the close */
};

#define OK_HEAD "HTTP/1.1 200 OK\r\n"

static const struct parse_case cases[] = {
	{"length",
	 OK_HEAD "Content-Length: 5\r\nx-amz-crc32: 42\r\nDate: Sun, 29 Nov 2026 GMT\r\n\r\nhello",
	 false, HTTP_PARSE_DONE, 200, "hello", "42", true, false},
	{"length 0", OK_HEAD "Content-Length: 0\r\n\r\n", false, HTTP_PARSE_DONE, 200, "", NULL,
	 true, false},
	{"chunked with trailer",
	 OK_HEAD "Transfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\nT: v\r\n\r\n",
	 false, HTTP_PARSE_DONE, 200, "hello", NULL, true, false},
	{"interim 100 first",
	 "HTTP/1.1 100 Continue\r\nx-amz-crc32: 1\r\n\r\n" OK_HEAD "Content-Length: 2\r\n\r\nok",
	 false, HTTP_PARSE_DONE, 200, "ok", NULL, true, false},
	{"connection close", OK_HEAD "Connection: close\r\nContent-Length: 2\r\n\r\nok", false,
	 HTTP_PARSE_DONE, 200, "ok", NULL, false, false},
	{"HTTP/1.0 without keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false,
	 HTTP_PARSE_DONE, 200, "ok", NULL, false, false},
	{"HTTP/1.0 keep-alive",
	 "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", false,
	 HTTP_PARSE_DONE, 200, "ok", NULL, true, false},
	{"no length: to the close", OK_HEAD "\r\npartial", false, HTTP_PARSE_MORE, 200, "partial",
	 NULL, false, true},
	{"204 has no body", "HTTP/1.1 204 No Content\r\n\r\n", false, HTTP_PARSE_DONE, 204, "",
	 NULL, true, false},
	{"HEAD has no body", OK_HEAD "Content-Length: 99\r\n\r\n", true, HTTP_PARSE_DONE, 200, "",
	 NULL, true, false},
	{"error status", "HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\n{x}", false,
	 HTTP_PARSE_DONE, 400, "{x}", NULL, true, false},
	{"incomplete body", OK_HEAD "Content-Length: 9\r\n\r\nabc", false, HTTP_PARSE_MORE, 200,
	 "abc", NULL, true, false},
	{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", false, HTTP_PARSE_BAD, 0, "", NULL, false, false},
	{"HTTP/2 status line", "HTTP/2 200\r\n\r\n", false, HTTP_PARSE_BAD, 0, "", NULL, false,
	 false},
	{"header without colon", OK_HEAD "Nonsense\r\n\r\n", false, HTTP_PARSE_BAD, 200, "", NULL,
	 false, false},
	{"negative length", OK_HEAD "Content-Length: -1\r\n\r\n", false, HTTP_PARSE_BAD, 200, "",
	 NULL, false, false},
	{"two different lengths", OK_HEAD "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", false,
	 HTTP_PARSE_BAD, 200, "", NULL, false, false},
	{"bad chunk size", OK_HEAD "Transfer-Encoding: chunked\r\n\r\nzz\r\n", false,
	 HTTP_PARSE_BAD, 200, "", NULL, false, false},
	{"chunk without its CRLF", OK_HEAD "Transfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", false,
	 HTTP_PARSE_BAD, 200, "a", NULL, false, false},
};

struct run {
	enum http_parse res;
	struct http_req *r;
	struct http_parser p;
};

/* Feeds t->in in pieces of step bytes (0: whole). */
static void run_case(const struct parse_case *t, size_t step, struct run *out)
{
	out->r = calloc(1, sizeof *out->r);
	assert_non_null(out->r);
	http_parser_init(&out->p, out->r, t->head);
	struct evbuffer *in = evbuffer_new();
	size_t len = strlen(t->in);
	if (step == 0)
		step = len;
	out->res = HTTP_PARSE_MORE;
	for (size_t off = 0; off < len && out->res == HTTP_PARSE_MORE; off += step) {
		evbuffer_add(in, t->in + off, len - off < step ? len - off : step);
		out->res = http_parser_feed(&out->p, in);
	}
	evbuffer_free(in);
}

static void test_answers(void **state)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct parse_case *t = &cases[i];
		for (size_t step = 0; step <= 1; step++) {
			struct run run;
			run_case(t, step, &run);
			struct http_req *r = run.r;
			if (run.res != t->want)
				fail_msg("%s (step %zu): result %d, want %d", t->what, step,
					 run.res, t->want);
			if (t->want != HTTP_PARSE_BAD) {
				assert_int_equal(r->status, t->status);
				assert_int_equal(r->rlen, strlen(t->body));
				assert_memory_equal(r->rbuf ? r->rbuf : "", t->body, r->rlen);
				assert_int_equal(r->has_crc32, t->crc32 != NULL);
				if (t->crc32)
					assert_string_equal(r->crc32, t->crc32);
				assert_int_equal(http_parser_ends_at_close(&run.p), t->to_close);
			}
			if (t->want == HTTP_PARSE_DONE)
				assert_int_equal(http_parser_reusable(&run.p), t->reusable);
			free(r->rbuf);
			free(r);
		}
	}
}

static void test_bounds(void **state)
{
	/* a header line past HTTP_LINE_MAX without its end */
	struct http_req *r = calloc(1, sizeof *r);
	struct http_parser p;
	http_parser_init(&p, r, false);
	struct evbuffer *in = evbuffer_new();
	evbuffer_add(in, OK_HEAD "X: ", sizeof OK_HEAD + 2);
	char *fill = malloc(HTTP_LINE_MAX + 1);
	memset(fill, 'a', HTTP_LINE_MAX + 1);
	evbuffer_add(in, fill, HTTP_LINE_MAX + 1);
	assert_int_equal(http_parser_feed(&p, in), HTTP_PARSE_BAD);
	evbuffer_free(in);

	/* a body past HTTP_BODY_MAX: the sink refuses it */
	memset(r, 0, sizeof *r);
	http_parser_init(&p, r, false);
	in = evbuffer_new();
	char head[80];
	snprintf(head, sizeof head, OK_HEAD "Content-Length: %u\r\n\r\n", HTTP_BODY_MAX + 1);
	evbuffer_add(in, head, strlen(head));
	char *big = calloc(1, HTTP_BODY_MAX + 1);
	evbuffer_add(in, big, HTTP_BODY_MAX + 1);
	assert_int_equal(http_parser_feed(&p, in), HTTP_PARSE_SINK);
	assert_true(r->too_big);
	evbuffer_free(in);
	free(big);
	free(fill);
	free(r->rbuf);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
