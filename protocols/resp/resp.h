/*
 * resp: the Redis protocol as bytes, and nothing else.
 *
 * Requests: a parser that does no I/O. Feed it bytes as they arrive, take
 * complete commands out; a command is argc + argv (pointer and length, each
 * argument also NUL-terminated), owned by the parser until its next call.
 * Multibulk requests (`*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n`) go through
 * hiredis's reader with our own reply-object functions, which build no
 * objects and refuse element counts, bulk lengths and nesting past the
 * limits; inline requests (`PING\r\n`, quoted arguments as redis-cli sends
 * them) are parsed here. Errors use Redis's wording ("Protocol error: ...");
 * once set, an error stays set and the connection is to be closed.
 *
 * Replies: encoders that append RESP2 or RESP3 to a growable byte buffer
 * (struct buf). An out-of-memory append marks the buffer failed
 * (sticky) instead of returning a status from every call: check
 * buf_failed() once per batch.
 *
 * Not here: sockets, sessions, commands (gateway/), leases (core/).
 */
#ifndef LG_RESP_H
#define LG_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/buf.h"

#define RESP_WUR __attribute__((warn_unused_result))

/* Bounds on what a client may send. Every field must be > 0. */
struct resp_limits {
	uint32_t max_args; /* arguments of one command */
	size_t max_bulk;   /* bytes of one argument */
	size_t max_inline; /* bytes of one inline request line */
	size_t max_query;  /* bytes buffered and not yet parsed into a command */
};

/* The defaults: 1024 args, 512 KiB per argument, 64 KiB inline, 1 MiB buffered. */
extern const struct resp_limits resp_default_limits;

/* One argument: bytes p[0..len), and p[len] == '\0'. */
struct resp_arg {
	const char *p;
	size_t len;
};

/* One command; argv stays valid until the next call on the parser. */
struct resp_cmd {
	int argc;
	const struct resp_arg *argv;
};

enum resp_status {
	RESP_NEED_MORE = 0, /* no complete command buffered */
	RESP_CMD = 1,	    /* *out holds a command */
	RESP_ERROR = -1,    /* protocol error (sticky), see resp_parser_error() */
};

struct resp_parser;

/* A parser bound by *lim (copied). Returns NULL on out-of-memory or when a
 * limit is 0. */
struct resp_parser *resp_parser_new(const struct resp_limits *lim) RESP_WUR;

/* Frees p and everything it owns (NULL is fine). */
void resp_parser_free(struct resp_parser *p);

/* Bytes that resp_parser_feed() accepts now: max_query minus what is
 * buffered and unparsed (0 once an error is set). */
size_t resp_parser_room(const struct resp_parser *p);

/* Copies len bytes into the parser. Returns RESP_ERROR, with an error set,
 * when len exceeds resp_parser_room() ("query buffer limit reached") or on
 * out-of-memory; RESP_NEED_MORE otherwise. Commands are taken out with
 * resp_parser_next(). */
enum resp_status resp_parser_feed(struct resp_parser *p, const char *buf, size_t len) RESP_WUR;

/* Takes the next complete command out of the buffered bytes. RESP_CMD fills
 * *out (valid until the next call on p); RESP_NEED_MORE: feed more bytes;
 * RESP_ERROR: the error stays set, nothing more will be parsed. Empty
 * requests (a blank inline line, `*0`, `*-1`) are skipped, as Redis does. */
enum resp_status resp_parser_next(struct resp_parser *p, struct resp_cmd *out) RESP_WUR;

/* Before authentication, as Redis 7: a multibulk of more than
 * RESP_UNAUTH_MAX_ARGS arguments ("Protocol error: unauthenticated
 * multibulk length") or an argument of more than RESP_UNAUTH_MAX_BULK
 * bytes ("Protocol error: unauthenticated bulk length") is an error. Holds
 * for the requests parsed from now on (set it before each
 * resp_parser_next: AUTH changes it between two pipelined requests). */
#define RESP_UNAUTH_MAX_ARGS 10
#define RESP_UNAUTH_MAX_BULK 16384
void resp_parser_set_unauthenticated(struct resp_parser *p, bool unauth);

/* The error message ("Protocol error: invalid bulk length"), or NULL. */
const char *resp_parser_error(const struct resp_parser *p);

/* Bytes buffered and not yet returned as commands. */
size_t resp_parser_buffered(const struct resp_parser *p);

/* ---- replies ---- */

enum resp_proto { RESP2 = 2, RESP3 = 3 };

/* `+s`: s must not contain CR or LF (they are replaced by spaces). */
void resp_add_simple(struct buf *o, const char *s, size_t len);
/* `-msg`: msg starts with its code ("ERR ...", "NOAUTH ..."); CR and LF
 * are replaced by spaces, as Redis does. */
void resp_add_error(struct buf *o, const char *msg, size_t len);
void resp_add_errorf(struct buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void resp_add_int(struct buf *o, long long v);
void resp_add_bulk(struct buf *o, const void *p, size_t len);
static inline void resp_add_cstr(struct buf *o, const char *s);
/* Null: RESP2 `$-1`, RESP3 `_`. */
void resp_add_null(struct buf *o, enum resp_proto proto);
/* Null array: RESP2 `*-1`, RESP3 `_`. */
void resp_add_null_array(struct buf *o, enum resp_proto proto);
/* Aggregate headers; the caller then adds n elements (2n for a map). */
void resp_add_array(struct buf *o, size_t n);
/* Map: RESP3 `%n`, RESP2 a flat array of 2n. */
void resp_add_map(struct buf *o, enum resp_proto proto, size_t npairs);
/* Set: RESP3 `~n`, RESP2 `*n`. */
void resp_add_set(struct buf *o, enum resp_proto proto, size_t n);
/* Push: RESP3 `>n`, RESP2 `*n` (as Redis sends pub/sub messages). */
void resp_add_push(struct buf *o, enum resp_proto proto, size_t n);
/* Verbatim text (INFO): RESP3 `=len+4\r\nfmt:...`, RESP2 bulk. fmt is 3 chars. */
void resp_add_verbatim(struct buf *o, enum resp_proto proto, const char *fmt, const void *p,
		       size_t len);
/* Double: RESP3 `,v`, RESP2 bulk of the same text (%.17g, inf, -inf, nan). */
void resp_add_double(struct buf *o, enum resp_proto proto, double v);
/* Boolean: RESP3 `#t`/`#f`, RESP2 `:1`/`:0`. */
void resp_add_bool(struct buf *o, enum resp_proto proto, bool v);

static inline void resp_add_cstr(struct buf *o, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	resp_add_bulk(o, s, n);
}

#endif
