/*
 * resp_reader: a reader of Redis replies, RESP2 and RESP3, for leasegate's
 * client subcommands (gateway/cli/). It does no I/O: feed it bytes as they
 * arrive, take whole replies out as small trees.
 *
 * Why not hiredis's reader: the hiredis of Debian 12 (0.14) reads RESP2
 * only, and `leasegate lock` speaks RESP3 (HELLO 3) to be told of a lost
 * lease by a push. hiredis still connects and formats the commands.
 *
 * Attributes (|n) are read and dropped: no reply here needs them.
 * Streamed aggregates (?) are refused.
 *
 * Bounds: RESP_READER_MAX_BUFFER bytes buffered, RESP_READER_MAX_ELEMS elements per
 * aggregate, RESP_READER_MAX_DEPTH levels of nesting. A malformed reply or
 * one past a bound sets an error that stays set.
 *
 * Not here: sockets (cli_conn), what the replies mean (lock_cli).
 */
#ifndef LG_RESP_READER_H
#define LG_RESP_READER_H

#include <stdbool.h>
#include <stddef.h>

#define RESP_READER_WUR __attribute__((warn_unused_result))

#define RESP_READER_MAX_BUFFER (1024 * 1024)
#define RESP_READER_MAX_ELEMS  4096
#define RESP_READER_MAX_DEPTH  8

enum resp_reply_type {
	RESP_REPLY_STATUS, /* +OK: str */
	RESP_REPLY_ERROR,  /* -ERR ... (and RESP3 !len blob errors): str */
	RESP_REPLY_INT,	   /* :42: num */
	RESP_REPLY_STRING, /* $len bulk, =len verbatim (without its "txt:"): str */
	RESP_REPLY_NULL,   /* $-1, *-1, _ */
	RESP_REPLY_BOOL,   /* #t / #f: num 1 / 0 */
	RESP_REPLY_DOUBLE, /* ,1.5 and (bignum: str, as sent */
	RESP_REPLY_ARRAY,  /* *n */
	RESP_REPLY_SET,	   /* ~n */
	RESP_REPLY_PUSH,   /* >n */
	RESP_REPLY_MAP,	   /* %n: 2n elements, key then value */
};

struct resp_reply {
	enum resp_reply_type type;
	long long num;
	char *str; /* NUL-terminated, len bytes */
	size_t len;
	size_t n; /* elements (a map's keys and values both counted) */
	struct resp_reply *elem;
};

enum resp_read {
	RESP_READ_MORE = 0,   /* no whole reply buffered yet */
	RESP_READ_REPLY = 1,  /* *out is one, the caller's to free */
	RESP_READ_ERROR = -1, /* sticky; resp_reader_error() says what */
};

struct resp_reader;

/* Returns NULL on out-of-memory. */
struct resp_reader *resp_reader_new(void) RESP_READER_WUR;
void resp_reader_free(struct resp_reader *r);

/* Copies len bytes in. RESP_READ_ERROR when they would take the buffer past
 * its bound, or on out-of-memory; else RESP_READ_MORE. */
enum resp_read resp_reader_feed(struct resp_reader *r, const char *p, size_t len) RESP_READER_WUR;

/* Takes the next whole reply out into *out (freed by resp_reply_free). */
enum resp_read resp_reader_next(struct resp_reader *r, struct resp_reply **out) RESP_READER_WUR;

/* The error message, or NULL. */
const char *resp_reader_error(const struct resp_reader *r);

/* Frees a reply and its elements (NULL is fine). */
void resp_reply_free(struct resp_reply *rep);

/* Writes a reply as one line of text to buf (cap bytes, NUL-terminated,
 * cut when longer), for messages: "OK", "ERR ...", "42", "nil",
 * "[a, b]", "{k: v}", ">[lock.lost, ...]". Returns buf. */
const char *resp_reply_text(const struct resp_reply *rep, char *buf, size_t cap);

#endif
