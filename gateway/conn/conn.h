/*
 * gateway/conn, the connection layer (no wire protocol, no lease):
 *   conn.h       one client connection: states, back-pressure, flushing
 *   server.h     the registry of every front-end's connections, listeners,
 *                --maxclients, keepalive, the safe point; server_guard.c
 *                its timeouts and protected mode
 *   transport.h  how bytes move: plain, TLS (tls.h: the shared context)
 *   auth.h       principals and the one password check, users, failed logins
 *   acl.h        users' rules (Redis's ACL syntax) and the one ACL check point
 * Front-ends (gateway/redis, gateway/pg) build on it; it includes none.
 *
 * conn: one client connection, for any front-end (Redis, PostgreSQL):
 * bytes in through the connection's transport, one request at a time
 * through the front-end's ops, replies out through the transport, in order.
 *
 * States (changed only by conn_set_state(), which refuses an illegal move):
 *
 *   OPEN     reading, running requests; replies leave in request order.
 *   BLOCKED  a request deferred its reply (conn_suspend); later requests
 *            wait, read or not, until conn_resume(). Replies stay in order.
 *   CLOSING  no more requests (QUIT, protocol error, a timeout, shutdown):
 *            what is in the reply buffer is sent, then the connection is
 *            closed. For CONN_CLOSE_LINGER_MS at most: a peer that does not
 *            read (its receive window full, a TLS handshake it never
 *            finishes) has what is unsent dropped and the connection closed
 *            by the registry's sweep (srv_expire). A closing connection
 *            still holds its descriptor and its --maxclients slot: it is
 *            counted as connected until it is CLOSED.
 *   CLOSED   the transport is gone and the front-end's close op has run;
 *            the memory is freed by the registry at its next safe point
 *            once no reference is held (conn_ref). Never freed under a
 *            callback that may touch it.
 *
 *   OPEN <-> BLOCKED, OPEN|BLOCKED -> CLOSING, any -> CLOSED.
 *
 * Bytes move only through the transport table (transport.h): plain or
 * TLS; conn_set_transport() switches a live
 * connection (PostgreSQL's SSLRequest). Back-pressure: while the
 * transport's unsent output is over the output limit the connection stops
 * reading and running requests; it resumes when the output has drained to
 * half the limit.
 *
 * A front-end embeds struct conn at the start of its own connection struct
 * (conn_proto.size bytes are allocated) and gets the connection's events
 * through its conn_proto ops.
 *
 * Not here: listeners and the registry (server.h), what requests mean (the
 * front-ends), leases (gateway/lease).
 */
#ifndef LG_CONN_H
#define LG_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "protocols/buf.h"

struct srv;
struct conn;
struct event;
struct transport;
struct acl_user;

enum conn_state { CONN_OPEN, CONN_BLOCKED, CONN_CLOSING, CONN_CLOSED };

/* How long a CLOSING connection may take to send its last bytes. Short:
 * the last words are an error line or a small reply, which any peer that
 * reads takes at once; a peer that does not read must not keep the
 * connection (and its slot) past it. */
#define CONN_CLOSE_LINGER_MS 2000

/* What a front-end asks of a TLS client's certificate (the TLS transport
 * asks for none when no CA is configured to check one with). */
enum conn_client_cert {
	CONN_CERT_NONE,	    /* not asked for */
	CONN_CERT_OPTIONAL, /* asked for, checked if presented */
	CONN_CERT_REQUIRED, /* the handshake fails without a valid one */
};

/* Why the registry ends a connection on a timer (srv_expire). */
enum conn_expiry {
	CONN_EXPIRE_AUTH, /* --auth-timeout: not authenticated in time */
	CONN_EXPIRE_IDLE, /* --timeout: idle, holding and waiting for nothing */
};

/* What one step of a front-end did. */
enum conn_step {
	CONN_STEP_RAN,	/* ran one request (its reply may be deferred) */
	CONN_STEP_IDLE, /* no complete request buffered: read more */
	CONN_STEP_STOP, /* the front-end wrote its error and closed */
};

/* A front-end, as the connection layer sees it. */
struct conn_proto {
	const char *name; /* "redis", "pg": logs, CLIENT LIST */
	size_t size;	  /* bytes of the front-end's struct, >= sizeof(struct conn) */
	/* Accepted: set up the front-end's state. false: out of memory (the
	 * connection is dropped, close is not called). */
	bool (*open)(struct conn *c);
	/* Bytes the front-end takes now (its parser's room). */
	size_t (*room)(const struct conn *c);
	/* len bytes read (len <= room). false: out of memory. */
	bool (*feed)(struct conn *c, const char *bytes, size_t len);
	/* Bytes read and not yet run (a client that pipelines). */
	size_t (*buffered)(const struct conn *c);
	/* Runs the next buffered request. */
	enum conn_step (*step)(struct conn *c);
	/* Once, when the connection is gone or closing is final: release
	 * what it holds, cancel or detach what it waits for. */
	void (*close)(struct conn *c);
	/* At the safe point, before the memory goes: free the front-end's
	 * own allocations (not c). */
	void (*free)(struct conn *c);
	/* What a client refused at --maxclients is sent before the close:
	 * refusal_len bytes (0: a C string, strlen). */
	const char *refusal;
	size_t refusal_len;
	/* Over TLS: what is asked of the client's certificate. */
	enum conn_client_cert tls_client_cert;
	/* --timeout: true when the session holds nothing that an idle client
	 * keeps (a lease, a transaction); NULL: always idle. Blocked
	 * connections (waiting for an answer) are never idle. */
	bool (*idle)(const struct conn *c);
	/* A timer ends the connection: write the front-end's last words and
	 * close it (conn_close). NULL: closed without a word. */
	void (*expire)(struct conn *c, enum conn_expiry why);
};

/* Read-only outside the connection layer, but for `out` (replies) and
 * `user` (the principal, set by authentication). */
struct conn {
	struct srv *srv;
	const struct conn_proto *proto;
	const struct transport *transport;
	void *tp;		  /* the transport's state */
	struct conn *prev, *next; /* the registry's live list, then its graveyard */
	int list;		  /* server.c: which list prev/next are in */
	uint64_t id;
	int fd;
	enum conn_state state;
	bool reading_paused; /* back-pressure: output over the limit */
	bool close_done;     /* proto->close has run */
	bool in_process;     /* conn_process() is on the stack */
	bool in_fq;	     /* in the registry's flush queue */
	bool in_rq;	     /* in the registry's resume queue */
	int refs;
	struct buf out;		/* replies not yet handed to the transport */
	struct event *flush_ev; /* writes the replies at the end of the turn */
	struct conn *fq_prev, *fq_next;
	struct conn *rq_prev, *rq_next; /* resumed: the request loop runs next */
	char addr[64], laddr[64];
	int64_t created_ms, last_cmd_ms;
	int64_t closing_since_ms; /* CLOSING since (CONN_CLOSE_LINGER_MS) */
	uint64_t flushes;	  /* times replies were handed to the transport */
	const char *close_reason; /* static string, for the log */
	char user[64];		  /* the principal; "" until authenticated */
	bool authenticated;
	int64_t auth_since_ms; /* unauthenticated since (--auth-timeout): auth_start */
	bool local;	       /* the peer is on loopback or the Unix socket */
	/* the principal's rules (auth.h): NULL until authenticated; of
	 * "default" when acl_fallback (a PostgreSQL user of --pg-users that
	 * the ACL file does not name) */
	const struct acl_user *acl;
	bool acl_fallback;
};

static inline enum conn_state conn_state(const struct conn *c)
{
	return c->state;
}
/* True once CLOSING or CLOSED: replies are no longer read. */
static inline bool conn_closed(const struct conn *c)
{
	return c->state >= CONN_CLOSING;
}

/* The only way the state changes. Returns false, changing nothing, for a
 * move the diagram above does not allow. */
bool conn_set_state(struct conn *c, enum conn_state to) __attribute__((warn_unused_result));

/* A connection on an accepted, non-blocking fd (the connection owns it)
 * for proto, over transport t (NULL: plain), with its id set before
 * proto->open runs (a front-end derives from it: PostgreSQL's backend
 * pid); reading starts at once. NULL on out-of-memory (the fd is closed).
 * For the registry (server.c). */
struct conn *conn_new(struct srv *srv, const struct conn_proto *proto, const struct transport *t,
		      int fd, uint64_t id, const char *addr, const char *laddr)
	__attribute__((warn_unused_result));

/* True when the peer of the connected socket fd is local: a Unix socket,
 * 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104 (protected mode's "loopback",
 * as Redis reads it). */
bool conn_peer_local(int fd);

/* True when the connection's bytes are encrypted (TLS). */
bool conn_encrypted(const struct conn *c);

/* Closes the transport and the fd of a CLOSED connection (the reaper, at
 * once, even while references keep the memory). */
void conn_drop_io(struct conn *c);

/* Frees a CLOSED, unreferenced connection: only the registry's reaper. */
void conn_free(struct conn *c);

/* Moves c to transport t (plain -> TLS after PostgreSQL's SSLRequest):
 * the replies in c->out are written on the old transport first, then it
 * lets go of the fd and t takes it. Returns false when the old transport
 * cannot write them all at once (c keeps it) or t cannot start (c gets
 * the old one back, or is aborted when even that fails). */
bool conn_set_transport(struct conn *c, const struct transport *t)
	__attribute__((warn_unused_result));

/* A request will answer later: no further request runs until
 * conn_resume(). */
void conn_suspend(struct conn *c);

/* The deferred reply is in c->out: sends it and, from the event loop
 * (never from the caller's stack), carries on with the next requests. A
 * no-op once the connection is closing. */
void conn_resume(struct conn *c);

/* Hands c->out to the transport: at the end of this turn of the event
 * loop while the connection is open (so the replies of every request run
 * in this turn leave in one write), at once when it is closing. */
void conn_flush(struct conn *c);

/* Writes the replies now (the registry's flush guard). */
void conn_flush_now(struct conn *c);

/* Keeps the memory of c valid across an asynchronous call even if the
 * connection closes meanwhile (check conn_closed() on completion). Every
 * conn_ref needs one conn_unref. */
void conn_ref(struct conn *c);
void conn_unref(struct conn *c);

/* Stops running requests; sends what is buffered, then closes. reason is
 * a static string for the log. Safe from any callback; idempotent. */
void conn_close(struct conn *c, const char *reason);

/* Closes at once, dropping unsent output (peer gone, transport error). */
void conn_abort(struct conn *c, const char *reason);

/* Runs the request loop (the registry and the resume event call it). */
void conn_process(struct conn *c);

/* --- for transports: what they tell the connection --- */

/* Bytes may be read (the transport's read event). */
void conn_readable(struct conn *c);
/* Queued output was written; left bytes are still queued. */
void conn_drained(struct conn *c, size_t left);
/* The transport failed (a write error, the peer reset). */
void conn_transport_error(struct conn *c);

#endif
