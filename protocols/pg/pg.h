/*
 * pg: PostgreSQL's frontend/backend protocol 3.0, the wire format only
 * (no I/O, nothing of the gateway): a reader of what a client sends —
 * the untyped startup packets (SSLRequest, GSSENCRequest, CancelRequest,
 * StartupMessage) then typed messages — and builders of the backend
 * messages, appending to a struct buf.
 *
 * The reader is fed bytes and hands out whole messages, as hiredis' reader
 * does; it bounds a message's length, and once it has an error it keeps
 * it (the connection is to be closed). A message handed out points into
 * the reader's buffer and stays valid until the next pg_reader_feed().
 *
 * Not here: what messages mean (gateway/pg), sockets.
 */
#ifndef LG_PG_H
#define LG_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/buf.h"

#define PG_PROTO_30	  196608u   /* 3 << 16 */
#define PG_SSL_REQUEST	  80877103u /* 1234 << 16 | 5679 */
#define PG_GSSENC_REQUEST 80877104u /* 1234 << 16 | 5680 */
#define PG_CANCEL_REQUEST 80877102u /* 1234 << 16 | 5678 */

/* Type OIDs of the values leasegate sends and reads. */
enum pg_oid {
	PG_OID_UNSPEC = 0,
	PG_OID_BOOL = 16,
	PG_OID_CHAR = 18,
	PG_OID_NAME = 19,
	PG_OID_INT8 = 20,
	PG_OID_INT2 = 21,
	PG_OID_INT4 = 23,
	PG_OID_TEXT = 25,
	PG_OID_OID = 26,
	PG_OID_XID = 28,
	PG_OID_VARCHAR = 1043,
	PG_OID_TIMESTAMPTZ = 1184,
	PG_OID_VOID = 2278,
	PG_OID_UNKNOWN = 705,
};

struct pg_limits {
	uint32_t max_msg;    /* bytes of one message, length word included */
	uint32_t max_params; /* startup parameters; Bind/Parse parameters */
};
extern const struct pg_limits pg_default_limits;

enum pg_rstatus { PG_NEED_MORE, PG_MSG, PG_ERROR };

/* One message: type 0 for a startup packet (code: its first word). */
struct pg_msg {
	char type;
	uint32_t code;
	const char *body; /* after the length (and code) word */
	uint32_t len;
};

struct pg_reader {
	struct pg_limits lim;
	char *buf;
	size_t len, off, cap;
	bool startup; /* the next message is untyped */
	const char *err;
};

void pg_reader_init(struct pg_reader *r, const struct pg_limits *lim);
void pg_reader_free(struct pg_reader *r);
/* Bytes it takes now without going over its bound. */
size_t pg_reader_room(const struct pg_reader *r);
/* Bytes read and not yet handed out. */
size_t pg_reader_buffered(const struct pg_reader *r);
/* Appends bytes; false on out-of-memory (the error is set). */
bool pg_reader_feed(struct pg_reader *r, const char *p, size_t n);
/* The next whole message, PG_NEED_MORE, or PG_ERROR (pg_reader_error). */
enum pg_rstatus pg_reader_next(struct pg_reader *r, struct pg_msg *m);
/* Typed messages from now on (after the StartupMessage). */
static inline void pg_reader_typed(struct pg_reader *r)
{
	r->startup = false;
}
static inline const char *pg_reader_error(const struct pg_reader *r)
{
	return r->err;
}

/* --- reading a message's body --- */

struct pg_cur {
	const char *p;
	size_t left;
	bool bad; /* ran past the end or a string without its NUL: stays set */
};
static inline struct pg_cur pg_cur_of(const struct pg_msg *m)
{
	struct pg_cur c = {m->body, m->len, false};
	return c;
}
int16_t pg_get_i16(struct pg_cur *c);
int32_t pg_get_i32(struct pg_cur *c);
/* A NUL-ended string (NULL when bad). */
const char *pg_get_str(struct pg_cur *c);
/* n bytes (NULL when bad). */
const char *pg_get_bytes(struct pg_cur *c, size_t n);

/* A StartupMessage's parameters. */
#define PG_MAX_STARTUP_PARAMS 64
/* The longest startup packet (PostgreSQL's MAX_STARTUP_PACKET_LENGTH): an
 * unauthenticated client gets no more, whatever max_msg allows. */
#define PG_MAX_STARTUP_LEN 10000
struct pg_startup {
	uint32_t version;
	unsigned n;
	const char *key[PG_MAX_STARTUP_PARAMS], *val[PG_MAX_STARTUP_PARAMS];
};
/* Parses m (type 0, code = the version). false with *err when malformed or
 * past max_params. */
bool pg_parse_startup(const struct pg_msg *m, unsigned max_params, struct pg_startup *out,
		      const char **err);
/* A startup parameter's value, NULL if absent. */
const char *pg_startup_get(const struct pg_startup *s, const char *key);

/* --- building backend messages --- */

/* Starts a message of type t; pg_end() writes its length. */
size_t pg_begin(struct buf *o, char t);
void pg_end(struct buf *o, size_t start);
void pg_put_i16(struct buf *o, int16_t v);
void pg_put_i32(struct buf *o, int32_t v);
void pg_put_str(struct buf *o, const char *s); /* with its NUL */

void pg_auth_ok(struct buf *o);
void pg_auth_cleartext(struct buf *o);
void pg_auth_md5(struct buf *o, const unsigned char salt[4]);
/* AuthenticationSASL: the n mechanisms, the server's preferred first. */
void pg_auth_sasl(struct buf *o, const char *const *mechs, size_t n);
void pg_auth_sasl_continue(struct buf *o, const char *data, size_t len);
void pg_auth_sasl_final(struct buf *o, const char *data, size_t len);
void pg_parameter_status(struct buf *o, const char *key, const char *val);
void pg_backend_key(struct buf *o, uint32_t pid, uint32_t secret);
void pg_ready(struct buf *o, char status);
void pg_negotiate_version(struct buf *o, uint32_t newest, unsigned n, const char *const *opts);

struct pg_col {
	const char *name;
	uint32_t oid;
	int16_t typlen;
	int16_t format;
};
void pg_row_description(struct buf *o, unsigned n, const struct pg_col *cols);
void pg_param_description(struct buf *o, unsigned n, const uint32_t *oids);
void pg_no_data(struct buf *o);
/* DataRow of n values (NULL value: SQL NULL; len -1 means strlen). */
void pg_data_row(struct buf *o, unsigned n, const char *const *vals, const int32_t *lens);
void pg_command_complete(struct buf *o, const char *tag);
void pg_empty_query(struct buf *o);
void pg_parse_complete(struct buf *o);
void pg_bind_complete(struct buf *o);
void pg_close_complete(struct buf *o);
void pg_portal_suspended(struct buf *o);

/* ErrorResponse ('E') or NoticeResponse ('N'): severity (ERROR, FATAL,
 * WARNING, NOTICE), SQLSTATE, message, hint (NULL: none). */
void pg_error(struct buf *o, char type, const char *severity, const char *sqlstate,
	      const char *message, const char *hint);

#endif
