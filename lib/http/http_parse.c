/*
 * http_parse.c: one HTTP/1.1 answer out of an evbuffer (see http_parse.h).
 */
#include "lib/http/http_parse.h"

#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/http/http_int.h"

void http_parser_init(struct http_parser *p, struct http_req *r, bool head)
{
	*p = (struct http_parser){.r = r, .head = head, .ps = HP_STATUS};
}

/* The status line: "HTTP/1.x NNN reason". */
static bool status_line(struct http_parser *p, const char *line)
{
	if (strncmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7]) ||
	    line[8] != ' ' || !isdigit((unsigned char)line[9]) ||
	    !isdigit((unsigned char)line[10]) || !isdigit((unsigned char)line[11]) ||
	    (line[12] && line[12] != ' '))
		return false;
	p->minor = line[7] - '0';
	p->r->status = strtol(line + 9, NULL, 10);
	p->close_after = p->minor == 0; /* unless "Connection: keep-alive" */
	p->chunked = p->has_length = false;
	return true;
}

static bool has_token(const char *v, const char *token)
{
	size_t n = strlen(token);
	for (const char *p = v; (p = strcasestr(p, token)); p += n)
		if ((p == v || p[-1] == ' ' || p[-1] == ',') &&
		    (!p[n] || p[n] == ' ' || p[n] == ',' || p[n] == '\t'))
			return true;
	return false;
}

static bool header_line(struct http_parser *p, const char *line)
{
	const char *colon = strchr(line, ':');
	if (!colon)
		return false;
	size_t nl = (size_t)(colon - line);
	const char *v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (nl == 14 && strncasecmp(line, "content-length", 14) == 0) {
		char *end;
		errno = 0;
		unsigned long long len = strtoull(v, &end, 10);
		while (*end == ' ' || *end == '\t')
			end++;
		if (!isdigit((unsigned char)*v) || *end || errno ||
		    (p->has_length && len != p->left))
			return false;
		p->has_length = true;
		p->left = len;
	} else if (nl == 17 && strncasecmp(line, "transfer-encoding", 17) == 0) {
		p->chunked = has_token(v, "chunked");
	} else if (nl == 10 && strncasecmp(line, "connection", 10) == 0) {
		if (has_token(v, "close"))
			p->close_after = true;
		else if (has_token(v, "keep-alive") && p->minor == 0)
			p->close_after = false;
	}
	return true;
}

/* After the blank line: what kind of body follows. */
static void body_kind(struct http_parser *p)
{
	long st = p->r->status;
	if (p->head || st == 204 || st == 304)
		p->ps = HP_FIXED, p->left = 0;
	else if (p->chunked)
		p->ps = HP_CHUNK_SIZE;
	else if (p->has_length)
		p->ps = HP_FIXED;
	else
		p->ps = HP_TO_CLOSE;
}

/* Moves up to max bytes of in to the body sink; false when it refused. */
static bool take_body(struct http_parser *p, struct evbuffer *in, uint64_t max, size_t *moved)
{
	size_t n = evbuffer_get_length(in);
	if (n > max)
		n = (size_t)max;
	*moved = 0;
	while (*moved < n) {
		size_t chunk = evbuffer_get_contiguous_space(in);
		if (chunk > n - *moved)
			chunk = n - *moved;
		char *data = (char *)evbuffer_pullup(in, (ev_ssize_t)chunk);
		if (!data || http_on_body(data, 1, chunk, p->r) != chunk)
			return false;
		evbuffer_drain(in, chunk);
		*moved += chunk;
	}
	return true;
}

enum step { STEP_MORE, STEP_DONE, STEP_BAD, STEP_SINK };

/* Moves the next line of in, without its end (CRLF or LF, as
 * EVBUFFER_EOL_CRLF takes them), into line (HTTP_LINE_MAX + 1 bytes,
 * NUL-terminated): 1 when there was one, 0 when it has not all arrived,
 * -1 when it is too long. No allocation, unlike evbuffer_readln. */
static int take_line(struct evbuffer *in, char *line, size_t *n)
{
	size_t eol = 0;
	struct evbuffer_ptr at = evbuffer_search_eol(in, NULL, &eol, EVBUFFER_EOL_CRLF);
	if (at.pos < 0)
		return evbuffer_get_length(in) > HTTP_LINE_MAX ? -1 : 0;
	if ((size_t)at.pos > HTTP_LINE_MAX)
		return -1;
	*n = (size_t)at.pos;
	if (evbuffer_remove(in, line, *n) != (int)*n)
		return -1;
	line[*n] = '\0';
	evbuffer_drain(in, eol);
	return 1;
}

/* One step of the answer's parser over in. */
static enum step parse_step(struct http_parser *p, struct evbuffer *in)
{
	size_t n = 0;
	char line[HTTP_LINE_MAX + 1];
	switch (p->ps) {
	case HP_STATUS:
	case HP_HEADERS:
	case HP_CHUNK_SIZE:
	case HP_CHUNK_END:
	case HP_TRAILERS:
		switch (take_line(in, line, &n)) {
		case 0:
			return STEP_MORE;
		case -1:
			return STEP_BAD;
		}
		p->header_bytes += n + 2;
		break;
	default:
		break;
	}
	enum step st = STEP_MORE;
	size_t moved;
	switch (p->ps) {
	case HP_STATUS:
		if (!status_line(p, line))
			st = STEP_BAD;
		else
			http_on_header(line, 1, n, p->r), p->ps = HP_HEADERS;
		break;
	case HP_HEADERS:
		if (p->header_bytes > HTTP_HEADERS_MAX) {
			st = STEP_BAD;
		} else if (n == 0) {
			/* 1xx: an interim answer, the real one follows */
			if (p->r->status >= 100 && p->r->status < 200)
				p->ps = HP_STATUS;
			else
				body_kind(p);
		} else if (!header_line(p, line)) {
			st = STEP_BAD;
		} else {
			http_on_header(line, 1, n, p->r);
		}
		break;
	case HP_FIXED:
		if (!take_body(p, in, p->left, &moved))
			return STEP_SINK;
		p->left -= moved;
		return p->left == 0 ? STEP_DONE : STEP_MORE;
	case HP_CHUNK_SIZE: {
		char *end;
		errno = 0;
		unsigned long long size = strtoull(line, &end, 16);
		if (!isxdigit((unsigned char)*line) || errno ||
		    (*end && *end != ';' && *end != ' '))
			st = STEP_BAD;
		else if (size == 0)
			p->ps = HP_TRAILERS;
		else
			p->left = size, p->ps = HP_CHUNK_DATA;
		break;
	}
	case HP_CHUNK_DATA:
		if (!take_body(p, in, p->left, &moved))
			return STEP_SINK;
		p->left -= moved;
		if (p->left == 0)
			p->ps = HP_CHUNK_END;
		return STEP_MORE;
	case HP_CHUNK_END:
		st = n == 0 ? STEP_MORE : STEP_BAD;
		p->ps = HP_CHUNK_SIZE;
		break;
	case HP_TRAILERS:
		if (p->header_bytes > HTTP_HEADERS_MAX)
			st = STEP_BAD;
		else if (n == 0)
			st = STEP_DONE;
		break;
	case HP_TO_CLOSE:
		if (!take_body(p, in, UINT64_MAX, &moved))
			return STEP_SINK;
		return STEP_MORE; /* ends at EOF */
	}
	return st;
}

enum http_parse http_parser_feed(struct http_parser *p, struct evbuffer *in)
{
	for (;;) {
		size_t before = evbuffer_get_length(in);
		enum http_pstate ps = p->ps;
		switch (parse_step(p, in)) {
		case STEP_DONE:
			return HTTP_PARSE_DONE;
		case STEP_BAD:
			return HTTP_PARSE_BAD;
		case STEP_SINK:
			return HTTP_PARSE_SINK;
		case STEP_MORE:
			if (evbuffer_get_length(in) == before && p->ps == ps)
				return HTTP_PARSE_MORE;
		}
	}
}
