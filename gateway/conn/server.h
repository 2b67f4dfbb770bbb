/*
 * server: the connection registry of the process and its listeners, for
 * every front-end: TCP and Unix listeners (several, each bound to the
 * front-end it speaks), one list of live connections and one
 * --maxclients for all of them, TCP keepalive, the flush queue and its
 * guard, and the safe point where closed connections are freed.
 *
 * It accepts (refusing past maxclients with the front-end's refusal), and
 * frees closed connections at one safe point: a reaper event that runs
 * from the event loop after the callback that closed them has returned.
 * Shutdown stops accepting, closes every connection after its pending
 * replies, and reports once the last one is gone.
 *
 * Not here: one connection's loop (conn.c), what requests mean (the
 * front-ends), configuration parsing (config.c).
 */
#ifndef LG_SERVER_H
#define LG_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/conn/conn.h"

struct event_base;
struct cfg;
struct conn;
struct conn_proto;
struct loop_poll;
struct srv;

/* A registry on base, configured by *cfg (kept by pointer: it must
 * outlive the registry), taking at most maxclients connections at once
 * over all its listeners (limit_name, "--maxclients", names the option in
 * the log). Listens on nothing yet. NULL on out-of-memory. */
struct srv *srv_new(struct event_base *base, const struct cfg *cfg, int64_t maxclients,
		    const char *limit_name) __attribute__((warn_unused_result));

/* Fits *maxclients (and `reserved` descriptors the process needs besides
 * its clients: listeners, DynamoDB connections, the admin port, logs) into
 * the open files limit: raises the soft limit toward the hard one as far
 * as needed, and when that is not enough lowers *maxclients and says so in
 * msg (msg is "" when nothing changed). false, with msg, when not even one
 * client fits. Call it before srv_new. */
bool srv_fit_nofile(int64_t *maxclients, int64_t reserved, char *msg, size_t msglen)
	__attribute__((warn_unused_result));

/* Times an accept found the process out of descriptors. Each time the
 * registry stops accepting for a back-off (100 ms, doubling to 1 s while
 * it lasts) instead of spinning on a readable listener, and refuses one
 * newcomer through a reserve descriptor so it is answered, not left
 * hanging. */
uint64_t srv_out_of_fds(const struct srv *srv);

/* Listens on bind:port (port 0: any free port) for proto. Returns false
 * with a message in err when it cannot. At most SRV_MAX_LISTENERS. */
#define SRV_MAX_LISTENERS 8
bool srv_listen_tcp(struct srv *srv, const char *bind, int64_t port, const struct conn_proto *proto,
		    char *err, size_t errlen) __attribute__((warn_unused_result));
/* The same on transport t (&transport_tls: a TLS port; srv_set_tls first). */
struct transport;
bool srv_listen_tcp_on(struct srv *srv, const char *bind, int64_t port,
		       const struct conn_proto *proto, const struct transport *t, char *err,
		       size_t errlen) __attribute__((warn_unused_result));
/* Listens on a Unix socket at path for proto, the file made with mode
 * cfg->unixsocketperm. What is at path first: a socket nobody answers on
 * (stale) is removed; anything else (a live socket, a file, a directory)
 * is left and the call fails, saying so in err. The file is removed when
 * the listener stops, if it is still the one made here. */
bool srv_listen_unix(struct srv *srv, const char *path, const struct conn_proto *proto, char *err,
		     size_t errlen) __attribute__((warn_unused_result));

/* The bound TCP port of proto's first plain TCP listener, 0 if none. */
int srv_port(const struct srv *srv, const struct conn_proto *proto);
/* The same for its listeners on transport t. */
int srv_port_on(const struct srv *srv, const struct conn_proto *proto, const struct transport *t);

/* The TLS context of the TLS transport (kept by pointer; NULL: none, the
 * default), and the registry's. */
struct tls_srv;
void srv_set_tls(struct srv *srv, struct tls_srv *tls);
struct tls_srv *srv_tls(const struct srv *srv);

/* Registers a connection for proto on fd, as an accepted one is (counted
 * against maxclients, given an id, proto->open run), without reading yet:
 * call conn_process() to start. NULL when refused (maxclients: the
 * refusal is sent) or out of memory; the fd is closed then. */
struct conn *srv_adopt(struct srv *srv, const struct conn_proto *proto, int fd, const char *addr,
		       const char *laddr);

/* Stops accepting, closes every connection after its pending replies;
 * calls done(arg) from the event loop once none is left (at once if none). */
void srv_shutdown(struct srv *srv, void (*done)(void *arg), void *arg);

/* Frees the registry; every connection still open is aborted first and
 * its front-end's close op runs here, so free the front-ends after this. */
void srv_free(struct srv *srv);

const struct cfg *srv_cfg(const struct srv *srv);

/* The users and their rules (auth.h), kept by pointer; NULL until set. */
struct auth;
void srv_set_auth(struct srv *srv, struct auth *auth);
struct auth *srv_auth(const struct srv *srv);
struct event_base *srv_base(const struct srv *srv);

/* Connections accepted (each got an id) and refused at maxclients, since
 * the registry was made: INFO stats. */
uint64_t srv_connections_received(const struct srv *srv);
uint64_t srv_connections_rejected(const struct srv *srv);

/* Ends the connections past --auth-timeout (not authenticated since
 * auth_since_ms) or --timeout (open, not blocked, no request since
 * last_cmd_ms, and idle by their front-end's word) as of now_ms (the
 * clock of srv_turn_ms): through proto->expire, else closed. Closes at
 * once, dropping what is unsent, those CLOSING for CONN_CLOSE_LINGER_MS
 * (closing_since_ms). A timer runs it (every tenth of the shortest of
 * those, 10 ms..1 s); tests call it with a clock of their own. */
void srv_expire(struct srv *srv, int64_t now_ms);
/* Connections srv_expire ended, by why, since the start (INFO stats). */
uint64_t srv_expired(const struct srv *srv, enum conn_expiry why);
/* Closing connections srv_expire cut off at the linger (INFO stats). */
uint64_t srv_lingered(const struct srv *srv);
/* Protected mode's explanation (Redis's words, leasegate's options) for
 * a front-end that lets `who` in without a password, `how` saying how to
 * set one. */
void srv_protected_text(char *buf, size_t len, const char *who, const char *how);
/* The largest input (read, not yet run) and output (not yet sent) of a
 * live connection now: INFO's client_recent_max_*_buffer. */
void srv_largest_buffers(struct srv *srv, size_t *in, size_t *out);
/* A front-end refused c by protected mode: counted as rejected, and
 * logged (a line a minute at most, with the count since the last). */
void srv_note_protected(struct srv *srv, const struct conn *c);

/* The event loop's poll state (loop.h), told of client input and new
 * connections; NULL (the default) tells nobody. */
void srv_set_poll(struct srv *srv, struct loop_poll *lp);
struct loop_poll *srv_poll(const struct srv *srv);

/* The most connections at once. */
int64_t srv_maxclients(const struct srv *srv);
/* Live connections, all front-ends (CLOSING ones included: they hold
 * their descriptor and slot until CLOSED); those BLOCKED; those CLOSING. */
size_t srv_conns(const struct srv *srv);
size_t srv_blocked_conns(const struct srv *srv);
size_t srv_closing_conns(const struct srv *srv);
int64_t srv_started_ms(const struct srv *srv);
/* Calls fn for every live connection of proto (NULL: every front-end), in
 * accept order. fn may close the connection it is given. */
void srv_foreach(struct srv *srv, const struct conn_proto *proto,
		 void (*fn)(struct conn *c, void *arg), void *arg);

/* For conn.c: the graveyard of closed connections. */
void srv_bury(struct srv *srv, struct conn *c);
/* For conn.c: c has replies waiting for the end of the loop turn (queue),
 * or no longer (unqueue; idempotent). Whatever waits longer than a
 * millisecond, the registry's flush guard writes (conn_flush_now). */
void srv_flush_queue(struct srv *srv, struct conn *c);
void srv_flush_unqueue(struct srv *srv, struct conn *c);
/* For conn.c: c resumed, its request loop (conn_process) is to run from the
 * event loop (queue), or no longer (unqueue; idempotent). One event runs
 * every connection queued, in order: a batch of store completions resumes
 * many at once. */
void srv_resume_queue(struct srv *srv, struct conn *c);
void srv_resume_unqueue(struct srv *srv, struct conn *c);

/* Monotonic milliseconds (for ages and idle times). */
int64_t srv_now_ms(void);

/* Wall-clock ms as of the start of this loop turn (libevent's cached time,
 * no system call): for figures shown in seconds, such as CLIENT LIST's
 * idle. */
int64_t srv_turn_ms(struct srv *srv);

#endif
