/*
 * server: the Redis-protocol listeners (TCP on bind:port, a Unix socket)
 * and the set of sessions on one event_base.
 *
 * It accepts (refusing past maxclients with Redis's error), keeps the live
 * sessions in a list, and frees closed ones at one safe point: a reaper
 * event that runs from the event loop after the callback that closed them
 * has returned. Shutdown stops accepting, closes every session after its
 * pending replies, and reports once the last one is gone.
 *
 * Not here: the commands (commands.c), configuration parsing (config.c).
 */
#ifndef LG_SERVER_H
#define LG_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/resp/resp.h"

struct event_base;
struct cfg;
struct cmd_table;
struct sess;
struct loop_poll;

/* What the lead's command layer learns about sessions. Each may be NULL.
 * on_open: a session was accepted (before its first command).
 * on_close: exactly once, when the connection is gone or closing is final;
 *   after it the session runs no command and its replies are dropped.
 *   Cancel or detach every pending operation on it here.
 * on_reset: the client sent RESET (drop per-session state, stay open). */
struct sess_hooks {
	void (*on_open)(struct sess *s, void *arg);
	void (*on_close)(struct sess *s, void *arg);
	void (*on_reset)(struct sess *s, void *arg);
	void *arg;
};

struct srv;

/* A server on base, configured by *cfg (kept by pointer: it must outlive
 * the server) and dispatching to cmds. Listens on nothing yet. Returns NULL
 * on out-of-memory or invalid limits. */
struct srv *srv_new(struct event_base *base, const struct cfg *cfg, struct cmd_table *cmds)
	__attribute__((warn_unused_result));

/* Opens the listeners of the configuration (port 0 = no TCP listener).
 * Returns false with a message in err when one cannot be opened. */
bool srv_listen(struct srv *srv, char *err, size_t errlen) __attribute__((warn_unused_result));

/* The bound TCP port (useful with tests), 0 if none. */
int srv_port(const struct srv *srv);

void srv_set_hooks(struct srv *srv, const struct sess_hooks *hooks);

/* Stops accepting, closes every session after its pending replies; calls
 * done(arg) from the event loop once no session is left (at once if none). */
void srv_shutdown(struct srv *srv, void (*done)(void *arg), void *arg);

/* Frees the server; every session still open is aborted first and its
 * on_close hook runs here, so free the hooks' state after this. */
void srv_free(struct srv *srv);

/* Accessors for commands.c and session.c. */
const struct cfg *srv_cfg(const struct srv *srv);
struct cmd_table *srv_cmds(const struct srv *srv);

/* Connections accepted (each got a session) and refused at maxclients,
 * since the server was made: INFO stats. */
uint64_t srv_connections_received(const struct srv *srv);
uint64_t srv_connections_rejected(const struct srv *srv);

/* The event loop's poll state (loop.h), told of client input and new
 * connections; NULL (the default) tells nobody. */
void srv_set_poll(struct srv *srv, struct loop_poll *lp);
struct loop_poll *srv_poll(const struct srv *srv);
struct event_base *srv_base(const struct srv *srv);
const struct resp_limits *srv_limits(const struct srv *srv);
size_t srv_sessions(const struct srv *srv);
size_t srv_blocked_sessions(const struct srv *srv);
int64_t srv_started_ms(const struct srv *srv);
/* Calls fn for every live session, in accept order. */
void srv_foreach(struct srv *srv, void (*fn)(struct sess *s, void *arg), void *arg);

/* For session.c: the hooks, and the graveyard of closed sessions. */
const struct sess_hooks *srv_hooks(const struct srv *srv);
void srv_bury(struct srv *srv, struct sess *s);
/* For session.c: s has replies waiting for the end of the loop turn
 * (queue), or no longer (unqueue; idempotent). Whatever waits longer than
 * a millisecond, the server's flush guard writes (sess_flush_now). */
void srv_flush_queue(struct srv *srv, struct sess *s);
void srv_flush_unqueue(struct srv *srv, struct sess *s);

/* Monotonic milliseconds (for ages and idle times). */
int64_t srv_now_ms(void);

/* Wall-clock ms as of the start of this loop turn (libevent's cached time,
 * no system call): for figures shown in seconds, such as CLIENT LIST's
 * idle. */
int64_t srv_turn_ms(struct srv *srv);

#endif
