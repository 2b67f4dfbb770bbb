/*
 * transport: how a connection's bytes move, as a table of operations. The
 * plain transport (a socket: recv() and send(), a bufferevent for what the
 * socket does not take at once) and TLS (OpenSSL through libevent's
 * bufferevent_openssl, with the registry's shared context, tls.h); a
 * connection can switch from one to the other mid-stream
 * (conn_set_transport: PostgreSQL's SSLRequest). Nothing else in the
 * gateway reads or writes a client's socket.
 *
 * A transport tells its connection what happens through conn_readable(),
 * conn_drained() and conn_transport_error() (conn.h), from the event loop.
 *
 * Not here: what the bytes mean (front-ends), connection states (conn.c).
 */
#ifndef LG_TRANSPORT_H
#define LG_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct conn;

struct transport {
	const char *name; /* "plain", "tls" */
	bool encrypted;
	/* Takes over c->fd (non-blocking) and starts reading: c->tp is the
	 * transport's state. false: out of memory (c->tp left NULL). */
	bool (*open)(struct conn *c);
	/* Lets go of c->fd without closing it and frees c->tp. */
	void (*close)(struct conn *c);
	/* No more callbacks to the connection from now on (it is closed;
	 * close() follows at the registry's safe point). */
	void (*stop)(struct conn *c);
	/* Reads up to len bytes: > 0 read, 0 the peer closed, -1 with errno
	 * (EAGAIN: nothing now). */
	ssize_t (*read)(struct conn *c, void *buf, size_t len);
	/* Hands len bytes over, in order after what is queued: when direct is
	 * true and nothing is queued, what the socket takes now is sent at
	 * once; the rest is queued and written as the socket allows.
	 * false: out of memory. */
	bool (*write)(struct conn *c, const void *buf, size_t len, bool direct);
	/* Bytes queued and not yet written. */
	size_t (*unsent)(const struct conn *c);
	/* Read events on or off (back-pressure, closing). */
	void (*set_reading)(struct conn *c, bool on);
	/* conn_drained() runs when the queue falls to mark bytes (0: empty). */
	void (*set_drain_mark)(struct conn *c, size_t mark);
};

/* A socket as it is: the default of every connection. */
extern const struct transport transport_plain;

/* TLS, server side, with the context of srv_tls(c->srv) as it is when the
 * connection opens (a reload changes later connections only); asks the
 * client's certificate as c->proto->tls_client_cert says. open() fails
 * when the registry has no TLS context. */
extern const struct transport transport_tls;

/* The tls-server-end-point channel binding data (tls.h:
 * tls_cert_end_point) of the certificate c's TLS session presented to
 * the client (the one it started with, across a reload): its length, 0
 * when c is not on TLS or there is none. */
size_t transport_tls_end_point(const struct conn *c, unsigned char out[64]);

#endif
