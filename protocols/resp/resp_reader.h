/*
 * cli_reply: a reader of Redis replies, RESP2 and RESP3, for leasegate's
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
 * Bounds: CLI_REPLY_MAX_BUFFER bytes buffered, CLI_REPLY_MAX_ELEMS elements per
 * aggregate, CLI_REPLY_MAX_DEPTH levels of nesting. A malformed reply or
 * one past a bound sets an error that stays set.
 *
 * Not here: sockets (cli_conn), what the replies mean (lock_cli).
 */
#ifndef LG_CLI_REPLY_H
#define LG_CLI_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_WUR __attribute__((warn_unused_result))

#define CLI_REPLY_MAX_BUFFER (1024 * 1024)
#define CLI_REPLY_MAX_ELEMS  4096
#define CLI_REPLY_MAX_DEPTH  8

enum cli_reply_type {
	CLI_REPLY_STATUS, /* +OK: str */
	CLI_REPLY_ERROR,  /* -ERR ... (and RESP3 !len blob errors): str */
	CLI_REPLY_INT,	  /* :42: num */
	CLI_REPLY_STRING, /* $len bulk, =len verbatim (without its "txt:"): str */
	CLI_REPLY_NULL,	  /* $-1, *-1, _ */
	CLI_REPLY_BOOL,	  /* #t / #f: num 1 / 0 */
	CLI_REPLY_DOUBLE, /* ,1.5 and (bignum: str, as sent */
	CLI_REPLY_ARRAY,  /* *n */
	CLI_REPLY_SET,	  /* ~n */
	CLI_REPLY_PUSH,	  /* >n */
	CLI_REPLY_MAP,	  /* %n: 2n elements, key then value */
};

struct cli_reply {
	enum cli_reply_type type;
	long long num;
	char *str; /* NUL-terminated, len bytes */
	size_t len;
	size_t n; /* elements (a map's keys and values both counted) */
	struct cli_reply *elem;
};

enum cli_read {
	CLI_READ_MORE = 0,   /* no whole reply buffered yet */
	CLI_READ_REPLY = 1,  /* *out is one, the caller's to free */
	CLI_READ_ERROR = -1, /* sticky; cli_reader_error() says what */
};

struct cli_reader;

/* Returns NULL on out-of-memory. */
struct cli_reader *cli_reader_new(void) CLI_WUR;
void cli_reader_free(struct cli_reader *r);

/* Copies len bytes in. CLI_READ_ERROR when they would take the buffer past
 * its bound, or on out-of-memory; else CLI_READ_MORE. */
enum cli_read cli_reader_feed(struct cli_reader *r, const char *p, size_t len) CLI_WUR;

/* Takes the next whole reply out into *out (freed by cli_reply_free). */
enum cli_read cli_reader_next(struct cli_reader *r, struct cli_reply **out) CLI_WUR;

/* The error message, or NULL. */
const char *cli_reader_error(const struct cli_reader *r);

/* Frees a reply and its elements (NULL is fine). */
void cli_reply_free(struct cli_reply *rep);

/* Writes a reply as one line of text to buf (cap bytes, NUL-terminated,
 * cut when longer), for messages: "OK", "ERR ...", "42", "nil",
 * "[a, b]", "{k: v}", ">[lock.lost, ...]". Returns buf. */
const char *cli_reply_text(const struct cli_reply *rep, char *buf, size_t cap);

#endif
