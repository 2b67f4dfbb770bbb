/*
 * transport_tls: TLS, server side (see transport.h), on libevent's
 * bufferevent_openssl: it runs the handshake, reads records into its
 * input buffer and writes what it is handed as records, as the socket
 * allows. The plain transport is untouched by it.
 *
 * A bufferevent reports input once, when it arrives; the connection reads
 * at most its front-end's room at a time. So whatever stays in the input
 * buffer after a read callback is offered again from an event of our own
 * (`more`) while reading is on, as a level-triggered socket would be.
 *
 * Not here: the context and its reload (tls.c).
 */
#include "gateway/conn/transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"
#include "gateway/conn/tls.h"
#include "gateway/obs/log.h"

/* What the bufferevent decrypts ahead of the connection, at most. */
#define READ_AHEAD (64 * 1024)

struct tls {
	struct bufferevent *bev;
	SSL *ssl;
	struct event *more; /* input is left: offer it again */
	struct tls_srv *srv;
	bool reading;
	bool eof;	 /* the peer closed: reads answer 0 once the input is drained */
	bool handshaken; /* the handshake completed */
	bool counted;	 /* the handshake's outcome was counted */
};

static size_t input_left(const struct tls *t)
{
	return evbuffer_get_length(bufferevent_get_input(t->bev));
}

/* After a read callback: what is left is offered again next turn. */
static void offer_rest(struct conn *c)
{
	struct tls *t = c->tp;
	if (t != NULL && !conn_closed(c) && t->reading && (input_left(t) > 0 || t->eof))
		event_active(t->more, EV_TIMEOUT, 0);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	conn_readable(arg);
	offer_rest(arg);
}

static void more_cb(evutil_socket_t fd, short what, void *arg)
{
	read_cb(NULL, arg);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	conn_drained(arg, evbuffer_get_length(bufferevent_get_output(bev)));
}

/* A handshake that completed without the certificate its policy requires:
 * only a resumed session can (OpenSSL checks the policy on full handshakes
 * only), and the session contexts above keep those apart; this holds the
 * line should a session ever come back under another policy. */
static bool lacks_required_cert(const struct tls *t)
{
	if ((SSL_get_verify_mode(t->ssl) & SSL_VERIFY_FAIL_IF_NO_PEER_CERT) == 0)
		return false;
	return SSL_get0_peer_certificate(t->ssl) == NULL ||
	       SSL_get_verify_result(t->ssl) != X509_V_OK;
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct tls *t = c->tp;
	if (what & BEV_EVENT_CONNECTED) {
		if (lacks_required_cert(t)) {
			t->counted = true;
			tls_srv_count(t->srv, false);
			log_msg(LOG_LVL_WARN,
				"connection %llu %s: TLS session %s without the client certificate "
				"this port requires: refused",
				(unsigned long long)c->id, c->addr,
				SSL_session_reused(t->ssl) ? "resumed" : "established");
			conn_abort(c, "TLS client certificate missing");
			return;
		}
		t->handshaken = t->counted = true;
		tls_srv_count(t->srv, true);
		log_msg(LOG_LVL_DEBUG, "connection %llu %s: TLS %s %s%s", (unsigned long long)c->id,
			c->addr, SSL_get_version(t->ssl), SSL_get_cipher_name(t->ssl),
			SSL_get0_peer_certificate(t->ssl) ? ", client certificate verified" : "");
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		unsigned long e = bufferevent_get_openssl_error(bev);
		char why[256] = "socket error";
		if (e != 0)
			ERR_error_string_n(e, why, sizeof(why));
		ERR_clear_error();
		if (!t->handshaken && !t->counted) {
			t->counted = true;
			tls_srv_count(t->srv, false);
			log_msg(LOG_LVL_INFO, "connection %llu %s: TLS handshake failed: %s",
				(unsigned long long)c->id, c->addr, why);
			conn_abort(c, "TLS handshake failed");
			return;
		}
		log_msg(LOG_LVL_DEBUG, "connection %llu %s: TLS error: %s",
			(unsigned long long)c->id, c->addr, why);
		conn_transport_error(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		t->eof = true;
		conn_readable(c); /* reads what is left, then the end */
		offer_rest(c);
	}
}

static void tls_close(struct conn *c)
{
	struct tls *t = c->tp;
	if (t == NULL)
		return;
	if (t->more)
		event_free(t->more);
	/* close_notify, best effort: the socket is non-blocking */
	if (t->ssl && t->handshaken && !t->eof)
		(void)SSL_shutdown(t->ssl);
	if (t->bev)
		bufferevent_free(t->bev); /* no CLOSE_ON_FREE: fd and SSL are ours */
	if (t->ssl)
		SSL_free(t->ssl);
	ERR_clear_error();
	free(t);
	c->tp = NULL;
}

static int verify_mode(const struct conn *c, const struct tls_srv *ts)
{
	if (!tls_srv_has_ca(ts))
		return SSL_VERIFY_NONE;
	switch (c->proto->tls_client_cert) {
	case CONN_CERT_REQUIRED:
		return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	case CONN_CERT_OPTIONAL:
		return SSL_VERIFY_PEER;
	default:
		return SSL_VERIFY_NONE;
	}
}

/* The session id context of c's sessions: its front-end and what is
 * asked of the client's certificate. OpenSSL resumes a session (from its
 * cache or a ticket, TLS 1.2 and 1.3) only under the context it was made
 * in, so a session made where no certificate was asked (the PostgreSQL
 * port) gets a full handshake, with the certificate request, on the Redis
 * TLS port that requires one. */
static bool set_session_context(SSL *ssl, const struct conn *c, int mode)
{
	char sid[SSL_MAX_SID_CTX_LENGTH + 1];
	int n = snprintf(sid, sizeof(sid), "leasegate/%s/%d", c->proto->name, mode);
	if (n < 0 || n > SSL_MAX_SID_CTX_LENGTH)
		return false;
	return SSL_set_session_id_context(ssl, (const unsigned char *)sid, (unsigned)n) == 1;
}

static bool tls_open(struct conn *c)
{
	struct tls_srv *ts = srv_tls(c->srv);
	struct event_base *base = srv_base(c->srv);
	if (ts == NULL)
		return false;
	struct tls *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return false;
	c->tp = t;
	t->srv = ts;
	t->ssl = SSL_new(tls_srv_ctx(ts)); /* holds a reference to the context */
	if (t->ssl == NULL) {
		tls_close(c);
		return false;
	}
	int mode = verify_mode(c, ts);
	SSL_set_verify(t->ssl, mode, NULL);
	if (!set_session_context(t->ssl, c, mode)) {
		tls_close(c);
		return false;
	}
	t->bev = bufferevent_openssl_socket_new(base, c->fd, t->ssl, BUFFEREVENT_SSL_ACCEPTING, 0);
	t->more = event_new(base, -1, 0, more_cb, c);
	if (t->bev == NULL || t->more == NULL) {
		tls_close(c);
		return false;
	}
	/* a client that closes without close_notify has closed, not failed */
	bufferevent_openssl_set_allow_dirty_shutdown(t->bev, 1);
	bufferevent_setwatermark(t->bev, EV_READ, 0, READ_AHEAD);
	bufferevent_setcb(t->bev, read_cb, write_cb, event_cb, c);
	bufferevent_enable(t->bev, EV_READ | EV_WRITE);
	t->reading = true;
	return true;
}

static void tls_stop(struct conn *c)
{
	struct tls *t = c->tp;
	if (t == NULL)
		return;
	t->reading = false;
	bufferevent_disable(t->bev, EV_READ | EV_WRITE);
	bufferevent_setcb(t->bev, NULL, NULL, NULL, NULL);
	event_del(t->more);
}

static ssize_t tls_read(struct conn *c, void *buf, size_t len)
{
	struct tls *t = c->tp;
	size_t n = bufferevent_read(t->bev, buf, len);
	if (n > 0)
		return (ssize_t)n;
	if (t->eof)
		return 0;
	errno = EAGAIN;
	return -1;
}

static size_t tls_unsent(const struct conn *c)
{
	const struct tls *t = c->tp;
	return evbuffer_get_length(bufferevent_get_output(t->bev));
}

/* Records leave from the bufferevent's write event: `direct` cannot save
 * a loop turn here. */
static bool tls_write(struct conn *c, const void *buf, size_t len, bool direct)
{
	struct tls *t = c->tp;
	return bufferevent_write(t->bev, buf, len) == 0;
}

static void tls_set_reading(struct conn *c, bool on)
{
	struct tls *t = c->tp;
	t->reading = on;
	if (on) {
		bufferevent_enable(t->bev, EV_READ);
		offer_rest(c); /* what arrived while paused */
	} else {
		bufferevent_disable(t->bev, EV_READ);
		event_del(t->more);
	}
}

static void tls_set_drain_mark(struct conn *c, size_t mark)
{
	struct tls *t = c->tp;
	bufferevent_setwatermark(t->bev, EV_WRITE, mark, 0);
}

const struct transport transport_tls = {
	.name = "tls",
	.encrypted = true,
	.open = tls_open,
	.close = tls_close,
	.stop = tls_stop,
	.read = tls_read,
	.write = tls_write,
	.unsent = tls_unsent,
	.set_reading = tls_set_reading,
	.set_drain_mark = tls_set_drain_mark,
};

size_t transport_tls_end_point(const struct conn *c, unsigned char out[64])
{
	const struct tls *t = c->transport == &transport_tls ? c->tp : NULL;
	if (t == NULL || t->ssl == NULL || !SSL_is_init_finished(t->ssl))
		return 0;
	return tls_cert_end_point(SSL_get_certificate(t->ssl), out);
}
