/*
 * http_parse: the parser of one HTTP/1.1 answer, for http_direct.c. It
 * does no I/O: it takes bytes from an evbuffer as they arrive and hands
 * the status line, header lines and body bytes to the sinks of http_int.h
 * (http_on_header, http_on_body) for its request. Its error, once
 * returned, is final for that answer.
 *
 * Bounds: a line (status, header, chunk size) of HTTP_LINE_MAX bytes, all
 * header lines HTTP_HEADERS_MAX bytes; the body's bound is the sink's.
 * Interim answers (1xx) are read and their headers passed on (the sink
 * forgets them at the next status line). Bodies: Content-Length, chunked
 * (trailers read and dropped), none (HEAD, 204, 304) or until the close.
 *
 * It is not: a request writer, or a judge of whether a connection may be
 * reused beyond what the answer says (http_parser_reusable).
 */
#ifndef LG_HTTP_PARSE_H
#define LG_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evbuffer;
struct http_req;

#define HTTP_LINE_MAX	 (16u << 10)
#define HTTP_HEADERS_MAX (64u << 10)

enum http_pstate {
	HP_STATUS,
	HP_HEADERS,
	HP_FIXED,
	HP_CHUNK_SIZE,
	HP_CHUNK_DATA,
	HP_CHUNK_END,
	HP_TRAILERS,
	HP_TO_CLOSE
};

struct http_parser {
	struct http_req *r; /* the sinks' argument; r->status is set here */
	bool head;	    /* the request was HEAD: no body */
	enum http_pstate ps;
	uint64_t left; /* of a fixed body or of a chunk */
	size_t header_bytes;
	int minor;	  /* HTTP/1.minor */
	bool close_after; /* Connection: close, or HTTP/1.0 without keep-alive */
	bool chunked, has_length;
};

enum http_parse {
	HTTP_PARSE_MORE, /* everything taken: more bytes, or the close, will tell */
	HTTP_PARSE_DONE, /* the answer is complete */
	HTTP_PARSE_BAD,	 /* not HTTP/1.x, or past a bound */
	HTTP_PARSE_SINK, /* a sink refused its bytes (r->too_big, or out of memory) */
};

void http_parser_init(struct http_parser *p, struct http_req *r, bool head);

/* Takes what it can of in. */
enum http_parse http_parser_feed(struct http_parser *p, struct evbuffer *in)
	__attribute__((warn_unused_result));

/* The close of the connection ends the answer (a body without length);
 * feed what is left first. */
static inline bool http_parser_ends_at_close(const struct http_parser *p)
{
	return p->ps == HP_TO_CLOSE;
}

/* After HTTP_PARSE_DONE: whether the connection may carry another request. */
static inline bool http_parser_reusable(const struct http_parser *p)
{
	return !p->close_after && p->ps != HP_TO_CLOSE;
}

#endif
