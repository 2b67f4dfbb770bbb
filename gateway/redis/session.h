/*
 * gateway/redis, the Redis front-end (the only folder that includes
 * protocols/resp):
 *   session.h     struct sess over struct conn, the front-end's listeners
 *   commands.h    the command table and dispatch; cmd_builtin.c the
 *                 connection commands (PING, HELLO, AUTH, CLIENT, INFO...)
 *   lockcmds.c, leadercmds.c  LOCK.* and LEADER.*: arguments parsed into
 *                 lease-session requests (gateway/lease), results rendered
 *                 as RESP replies, errors and pushes
 *   compatcmds.c, scriptcmds.c  what Redis lock libraries send (SET NX PX,
 *                 GET, DEL, PEXPIRE, PTTL; EVALSHA/EVAL/SCRIPT of their
 *                 scripts, known by SHA1), on locks only
 *   admincmds.c   the operators' LOCK.LIST and LOCK.FORCE-RELEASE
 *
 * session: the Redis front-end's connections. A struct sess is a struct
 * conn (gateway/conn, which moves the bytes, keeps the states and the
 * back-pressure) with what the Redis protocol adds: the request parser,
 * the protocol version (RESP2/RESP3), the client's name and library, the
 * last command run.
 *
 * struct redis is the front-end: the listeners it asked the registry for
 * (--port, --unixsocket), its command table, its request limits and the
 * hooks the lease commands set. Its conn_proto ops (session.c) turn bytes
 * into commands (protocols/resp) and run them (commands.c).
 *
 * The sess_* functions are the connection's, for command handlers: a
 * handler that answers later calls sess_suspend(), writes its reply to
 * sess_out() from its completion and calls sess_resume().
 *
 * Not here: moving bytes and connection states (gateway/conn), what
 * commands do (commands.c, cmd_builtin.c, lockcmds.c, leadercmds.c,
 * admincmds.c).
 */
#ifndef LG_SESSION_H
#define LG_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "gateway/conn/conn.h"
#include "gateway/redis/commands.h"
#include "protocols/resp/resp.h"

struct cfg;
struct cmd_def;
struct cmd_table;
struct srv;
struct sess;

/* What the lease commands learn about sessions. Each may be NULL.
 * on_open: a session was accepted (before its first command).
 * on_close: exactly once, when the connection is gone or closing is final;
 *   after it the session runs no command and its replies are dropped.
 *   Cancel or detach every pending operation on it here.
 * on_reset: the client sent RESET (drop per-session state, stay open);
 *   true when it answers RESET itself (now, or later: it suspended s). */
struct sess_hooks {
	void (*on_open)(struct sess *s, void *arg);
	void (*on_close)(struct sess *s, void *arg);
	bool (*on_reset)(struct sess *s, void *arg);
	/* --timeout: true when the session holds something (a lease) that
	 * an idle client keeps it open for */
	bool (*holds)(const struct sess *s, void *arg);
	void *arg;
};

struct redis {
	struct conn_proto proto; /* first: a session's c.proto is its front-end */
	struct srv *srv;
	const struct cfg *cfg;
	struct cmd_table *cmds;
	struct resp_limits limits;
	struct sess_hooks hooks;
};

/* Fields are read-only outside the Redis front-end. */
struct sess {
	struct conn c; /* first: the connection layer allocates a struct sess */
	struct resp_parser *parser;
	enum resp_proto proto;
	char *name; /* CLIENT SETNAME, NULL if none */
	char lib_name[64], lib_ver[64];
	/* the last command run (CLIENT LIST's cmd=), and its subcommand */
	const struct cmd_def *last_cmd, *last_sub;
	void *app;	    /* the lease commands' per-session state (sess_set_app) */
	bool denied;	    /* protected mode: refused at its first step */
	bool parser_unauth; /* what the parser was last told of c.authenticated */
	/* inside MULTI (commands.h, cmd_table_set_queue), and a command was
	 * refused there: EXEC aborts */
	bool multi, multi_dirty;
	unsigned subscriptions; /* channels subscribed to (pubsub.c) */
	/* a deferred reply's command and where its reply will start in c.out
	 * (as of c.flushes), to count its outcome at sess_resume */
	struct cmd_stat *reply_stat;
	size_t reply_at;
	uint64_t reply_flushes;
};

/* The Redis front-end on srv, configured by *cfg (kept by pointer),
 * dispatching to cmds. Listens on nothing yet. NULL on out-of-memory or
 * invalid limits. */
struct redis *redis_new(struct srv *srv, const struct cfg *cfg, struct cmd_table *cmds)
	__attribute__((warn_unused_result));
/* Opens the listeners of the configuration (--port, 0 = none;
 * --tls-port, over the registry's TLS context; --unixsocket). False with
 * a message in err when one cannot be opened. */
bool redis_listen(struct redis *r, char *err, size_t errlen) __attribute__((warn_unused_result));
/* The bound TCP port, 0 if none; the TLS port (--tls-port). */
int redis_port(const struct redis *r);
int redis_tls_port(const struct redis *r);
void redis_set_hooks(struct redis *r, const struct sess_hooks *hooks);
/* Frees r: after srv_free (sessions still open run their hooks there). */
void redis_free(struct redis *r);

static inline struct redis *sess_fe(const struct sess *s)
{
	return (struct redis *)s->c.proto;
}
/* Where a command handler writes its reply, and pushes go (RESP3). */
static inline struct buf *sess_out(struct sess *s)
{
	return &s->c.out;
}
static inline enum resp_proto sess_proto(const struct sess *s)
{
	return s->proto;
}
static inline enum conn_state sess_state(const struct sess *s)
{
	return s->c.state;
}
/* True once the session is closing or closed: replies are no longer read. */
static inline bool sess_closed(const struct sess *s)
{
	return conn_closed(&s->c);
}
/* Per-session state of the lease commands; the front-end only stores the
 * pointer. Release it in the on_close hook. */
static inline void *sess_app(const struct sess *s)
{
	return s->app;
}
static inline void sess_set_app(struct sess *s, void *app)
{
	s->app = app;
}
/* The connection's operations (conn.h), for command handlers. */
static inline void sess_suspend(struct sess *s)
{
	conn_suspend(&s->c);
}
/* Counts the reply written to c.out from at (if nothing was handed to
 * the transport since flushes) as st's ok or error. */
static inline void sess_count_reply(struct sess *s, struct cmd_stat *st, size_t at,
				    uint64_t flushes)
{
	if (s->c.flushes != flushes)
		at = 0; /* the replies before it went out meanwhile */
	if (at < s->c.out.len && (s->c.out.buf[at] == '-' || s->c.out.buf[at] == '!'))
		st->error++;
	else
		st->ok++;
}
static inline void sess_expect_reply(struct sess *s, struct cmd_stat *st, size_t at,
				     uint64_t flushes)
{
	s->reply_stat = st;
	s->reply_at = at;
	s->reply_flushes = flushes;
}
static inline void sess_resume(struct sess *s)
{
	if (s->reply_stat != NULL) {
		sess_count_reply(s, s->reply_stat, s->reply_at, s->reply_flushes);
		s->reply_stat = NULL;
	}
	conn_resume(&s->c);
}
static inline void sess_flush(struct sess *s)
{
	conn_flush(&s->c);
}
static inline void sess_ref(struct sess *s)
{
	conn_ref(&s->c);
}
static inline void sess_unref(struct sess *s)
{
	conn_unref(&s->c);
}
static inline void sess_close(struct sess *s, const char *reason)
{
	conn_close(&s->c, reason);
}

/* Calls fn for every live Redis session, in accept order. */
void redis_foreach(struct redis *r, void (*fn)(struct sess *s, void *arg), void *arg);

#endif
