/*
 * session: one Redis-protocol client connection.
 *
 * A session owns its socket (a bufferevent), its request parser and its
 * reply buffer, and runs the commands it reads one at a time, in order.
 * States (only session.c changes them):
 *
 *   OPEN     reading, parsing, running commands; replies are written in
 *            request order (pipelining).
 *   BLOCKED  a command deferred its reply (sess_suspend); later requests
 *            wait, parsed or not, until sess_resume(). Replies stay in order.
 *   CLOSING  no more commands (QUIT, protocol error, shutdown): what is in
 *            the reply buffer is sent, then the socket is closed.
 *   CLOSED   the socket is gone and on_close has run; the memory is freed
 *            by the server at its next safe point once no reference is held
 *            (sess_ref). Never freed under a callback that may touch it.
 *
 * Back-pressure: while the socket's unsent output is over the output limit,
 * the session stops reading and running commands; it resumes when the
 * output has drained to half the limit.
 *
 * Not here: the listeners and the session list (server.c), what commands
 * do (commands.c), leases (core/).
 */
#ifndef LG_SESSION_H
#define LG_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "protocols/resp/resp.h"

struct cmd_def;

struct srv;
struct bufferevent;
struct event;

enum sess_state { SESS_OPEN, SESS_BLOCKED, SESS_CLOSING, SESS_CLOSED };

/* Fields are read-only outside session.c and server.c; use the functions. */
struct sess {
	struct srv *srv;
	struct sess *prev, *next; /* the server's live list, then its graveyard */
	int list;		  /* server.c: which list prev/next are in */
	uint64_t id;
	int fd;
	enum sess_state state;
	bool reading_paused;  /* back-pressure: output over the limit */
	bool authenticated;   /* true from the start when no requirepass */
	bool close_hook_done; /* on_close has run */
	bool in_process;      /* sess_process() is on the stack */
	enum resp_proto proto;
	int refs;
	struct bufferevent *bev; /* writes what the socket did not take at once */
	struct event *read_ev;	 /* the socket is readable */
	struct event *resume_ev; /* runs the command loop from the event loop */
	struct event *flush_ev;	 /* writes the replies at the end of the turn */
	struct resp_parser *parser;
	struct buf out; /* replies not yet handed to the socket */
	char *name;	     /* CLIENT SETNAME, NULL if none */
	char lib_name[64], lib_ver[64];
	char addr[64], laddr[64];
	int64_t created_ms, last_cmd_ms;
	uint64_t flushes; /* times replies were handed to the socket */
	struct sess *fq_prev, *fq_next; /* in the server's flush queue */
	bool in_fq;
	/* the last command run (CLIENT LIST's cmd=), and its subcommand */
	const struct cmd_def *last_cmd, *last_sub;
	const char *close_reason; /* static string, for the log */
	void *app;		  /* the command layer's per-session state (sess_set_app) */
};

/* Creates a session on an accepted, non-blocking fd (the session owns it)
 * and starts reading. Returns NULL on out-of-memory (the fd is closed). */
struct sess *sess_new(struct srv *srv, int fd, const char *addr, const char *laddr)
	__attribute__((warn_unused_result));

/* Frees a CLOSED, unreferenced session: only the server's reaper calls it. */
void sess_free(struct sess *s);

/* Where a command handler writes its reply, and pushes go (RESP3). */
static inline struct buf *sess_out(struct sess *s)
{
	return &s->out;
}
static inline enum resp_proto sess_proto(const struct sess *s)
{
	return s->proto;
}
static inline uint64_t sess_id(const struct sess *s)
{
	return s->id;
}
static inline enum sess_state sess_state(const struct sess *s)
{
	return s->state;
}
/* True once the session is CLOSING or CLOSED: replies are no longer read. */
static inline bool sess_closed(const struct sess *s)
{
	return s->state >= SESS_CLOSING;
}

/* Per-session state of the command layer (leases, waits); gateway only
 * stores the pointer. Release it in the on_close hook (srv_set_hooks). */
static inline void *sess_app(const struct sess *s)
{
	return s->app;
}
static inline void sess_set_app(struct sess *s, void *app)
{
	s->app = app;
}

/* Called by a command handler that will answer later (an asynchronous
 * core call): the session runs no further command until sess_resume(). */
void sess_suspend(struct sess *s);

/* The deferred reply has been written to sess_out(s): sends it and, from
 * the event loop (never from the caller's stack), carries on with the next
 * requests. A no-op once the session is closing. */
void sess_resume(struct sess *s);

/* Hands sess_out(s) to the socket: at the end of this turn of the event
 * loop while the session is open (so the replies of every command run in
 * this turn leave in one write), at once when it is closing. Handlers need
 * not call it: replies are flushed per batch. */
void sess_flush(struct sess *s);

/* Writes the replies now (the server's flush guard). */
void sess_flush_now(struct sess *s);

/* Keeps the memory of s valid across an asynchronous call even if the
 * connection closes meanwhile (check sess_closed() on completion). Every
 * sess_ref needs one sess_unref. */
void sess_ref(struct sess *s);
void sess_unref(struct sess *s);

/* Stops running commands; sends what is buffered, then closes. reason is a
 * static string for the log. Safe from any callback; idempotent. */
void sess_close(struct sess *s, const char *reason);

/* Closes at once, dropping unsent output (peer gone, socket error). */
void sess_abort(struct sess *s, const char *reason);

/* Runs the command loop (server and resume events call it). */
void sess_process(struct sess *s);

#endif
