/*
 * conn: the per-connection loop (see conn.h).
 *
 * Bytes flow transport -> front-end (bounded by its room) -> one request
 * at a time -> c->out -> transport: at the end of a batch of requests
 * read, or, for replies of completions, at the end of the loop turn (what
 * the socket does not take waits in the transport's queue). The loop stops
 * when the connection blocks, closes, or its unsent output is over the
 * limit; it restarts from the read event, the transport's drain report or
 * the resume event (a deferred reply was written).
 */
#include "gateway/conn/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "gateway/config.h"
#include "gateway/conn/server.h"
#include "gateway/conn/transport.h"
#include "gateway/obs/log.h"
#include "gateway/conn/loop.h"

/* allowed[from] has bit `to` set when from -> to is a legal move. */
#define BIT(s) (1u << (s))
static const unsigned allowed[] = {
	[CONN_OPEN] = BIT(CONN_BLOCKED) | BIT(CONN_CLOSING) | BIT(CONN_CLOSED),
	[CONN_BLOCKED] = BIT(CONN_OPEN) | BIT(CONN_CLOSING) | BIT(CONN_CLOSED),
	[CONN_CLOSING] = BIT(CONN_CLOSED),
	[CONN_CLOSED] = 0,
};

bool conn_set_state(struct conn *c, enum conn_state to)
{
	if (!(allowed[c->state] & BIT(to)))
		return false;
	c->state = to;
	return true;
}

static size_t out_limit(const struct conn *c)
{
	return (size_t)srv_cfg(c->srv)->max_output_buffer;
}

static void set_paused(struct conn *c, bool paused)
{
	if (c->reading_paused == paused)
		return;
	c->reading_paused = paused;
	/* paused: wake when the output has drained to half the limit */
	c->transport->set_drain_mark(c, paused ? out_limit(c) / 2 : 0);
	if (!paused && c->state == CONN_OPEN)
		c->transport->set_reading(c, true);
	else if (paused)
		c->transport->set_reading(c, false);
}

/* Hands the replies to the transport now. */
static void flush_now(struct conn *c)
{
	srv_flush_unqueue(c->srv, c);
	if (c->state == CONN_CLOSED || c->tp == NULL) {
		c->out.len = 0;
		return;
	}
	if (buf_failed(&c->out)) {
		conn_abort(c, "out of memory for replies");
		return;
	}
	if (c->out.len) {
		c->flushes++;
		/* A client with more requests buffered is pipelining: its replies
		 * are gathered into one write by the transport's queue. */
		bool direct = c->proto->buffered(c) == 0;
		if (!c->transport->write(c, c->out.buf, c->out.len, direct)) {
			conn_abort(c, "out of memory for replies");
			return;
		}
		c->out.len = 0;
	}
	if (c->transport->unsent(c) > out_limit(c))
		set_paused(c, true);
}

/* Runs at the lowest priority: once nothing else is active in this turn,
 * so a pipelining client whose requests complete one by one still gets
 * their replies in one write. A loop kept busy would never get there: the
 * registry's flush guard writes what waited longer than a millisecond. */
static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	flush_now(arg);
}

void conn_flush_now(struct conn *c)
{
	if (c->flush_ev)
		event_del(c->flush_ev);
	flush_now(c);
}

void conn_flush(struct conn *c)
{
	/* Open or blocked: at the end of the turn (flush_cb). */
	if ((c->state == CONN_OPEN || c->state == CONN_BLOCKED) && c->flush_ev &&
	    !buf_failed(&c->out)) {
		/* queued (in_fq): its flush event is active already */
		if (c->out.len && !c->in_fq) {
			event_active(c->flush_ev, EV_TIMEOUT, 0);
			srv_flush_queue(c->srv, c);
		}
		return;
	}
	flush_now(c);
}

/* Closing, and everything written: the connection is done. */
static void finish_if_sent(struct conn *c)
{
	if (c->state == CONN_CLOSING && c->tp != NULL && c->transport->unsent(c) == 0)
		conn_abort(c, c->close_reason);
}

void conn_process(struct conn *c)
{
	if (c->in_process || c->tp == NULL)
		return; /* a request resumed synchronously: the outer loop carries on */
	c->in_process = true;
	c->last_cmd_ms = srv_turn_ms(c->srv); /* CLIENT LIST's idle */
	while (c->state == CONN_OPEN && !c->reading_paused) {
		if (c->proto->step(c) != CONN_STEP_RAN)
			break; /* IDLE: the read event brings more; STOP: closing */
		if (buf_failed(&c->out))
			break;
		if (c->out.len >= 16 * 1024)
			flush_now(c); /* may pause reading: back-pressure */
	}
	c->in_process = false;
	/* Open, every request read has run: the replies leave now. Blocked,
	 * they wait for the end of the turn, with what completions add. */
	if (c->state == CONN_OPEN)
		flush_now(c);
	else
		conn_flush(c);
	finish_if_sent(c);
}

/* Bytes may be read: moves what the transport has, up to the front-end's
 * room, into the front-end. Blocked, the connection reads on (up to the
 * query buffer limit) so that it sees the client go away behind pipelined
 * requests; past the limit it closes. */
void conn_readable(struct conn *c)
{
	char buf[16 * 1024];
	size_t room = c->proto->room(c);
	if (c->state >= CONN_CLOSING)
		return;
	if (room == 0 && c->state == CONN_BLOCKED) {
		log_msg(LOG_LVL_DEBUG,
			"connection %llu %s: query buffer limit reached while blocked",
			(unsigned long long)c->id, c->addr);
		conn_abort(c, "query buffer limit reached while blocked");
		return;
	}
	ssize_t n = 0;
	if (room > 0) {
		n = c->transport->read(c, buf, room < sizeof(buf) ? room : sizeof(buf));
		loop_note_input(srv_poll(c->srv));
		if (n == 0) {
			conn_abort(c, "client closed the connection");
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				conn_abort(c, "socket error");
			return;
		}
	}
	/* an error (out of memory, over the limit) stays set in the
	 * front-end's parser: conn_process answers it, now or when resumed */
	if (!c->proto->feed(c, buf, (size_t)n) && c->state == CONN_BLOCKED)
		conn_abort(c, "out of memory for the query buffer");
	else if (c->state == CONN_OPEN)
		conn_process(c);
}

void conn_drained(struct conn *c, size_t left)
{
	if (c->state == CONN_CLOSING) {
		if (left == 0)
			conn_abort(c, c->close_reason);
		return;
	}
	if (c->reading_paused && left <= out_limit(c) / 2) {
		set_paused(c, false);
		conn_process(c);
	}
}

void conn_transport_error(struct conn *c)
{
	conn_abort(c, "socket error");
}

bool conn_peer_local(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
		return false;
	if (ss.ss_family == AF_UNIX)
		return true;
	if (ss.ss_family == AF_INET) /* 127.0.0.0/8 */
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

struct conn *conn_new(struct srv *srv, const struct conn_proto *proto, const struct transport *t,
		      int fd, uint64_t id, const char *addr, const char *laddr)
{
	struct event_base *base = srv_base(srv);
	struct conn *c = calloc(1, proto->size);
	if (!c) {
		close(fd);
		return NULL;
	}
	c->srv = srv;
	c->proto = proto;
	c->transport = t ? t : &transport_plain;
	c->fd = fd;
	c->id = id;
	c->state = CONN_OPEN;
	c->created_ms = c->last_cmd_ms = c->auth_since_ms = srv_turn_ms(srv);
	c->local = conn_peer_local(fd);
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	snprintf(c->laddr, sizeof(c->laddr), "%s", laddr);
	buf_init(&c->out, 0);
	/* Only ever activated; persistent, so that running them costs no
	 * event_del (a deleted one leaves the active queue all the same). */
	c->flush_ev = event_new(base, -1, EV_PERSIST, flush_cb, c);
	if (c->flush_ev)
		event_priority_set(c->flush_ev, event_base_get_npriorities(base) - 1);
	if (!c->flush_ev || !c->transport->open(c) || !proto->open(c)) {
		if (c->tp)
			c->transport->close(c);
		if (c->flush_ev)
			event_free(c->flush_ev);
		close(fd);
		free(c);
		return NULL;
	}
	return c;
}

bool conn_set_transport(struct conn *c, const struct transport *t)
{
	const struct transport *old = c->transport;
	/* the replies so far leave on the old transport, all of them */
	flush_now(c);
	if (c->state == CONN_CLOSED || c->tp == NULL || old->unsent(c) != 0)
		return false;
	old->close(c);
	c->transport = t;
	if (t->open(c))
		return true;
	c->transport = old;
	if (!old->open(c))
		conn_abort(c, "out of memory for the transport");
	return false;
}

bool conn_encrypted(const struct conn *c)
{
	return c->transport->encrypted;
}

void conn_drop_io(struct conn *c)
{
	if (c->tp)
		c->transport->close(c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void conn_free(struct conn *c)
{
	srv_resume_unqueue(c->srv, c);
	conn_drop_io(c);
	if (c->flush_ev)
		event_free(c->flush_ev);
	c->proto->free(c);
	buf_free(&c->out);
	free(c);
}

void conn_suspend(struct conn *c)
{
	/* refused unless OPEN: a closing connection stays closing */
	if (!conn_set_state(c, CONN_BLOCKED))
		return;
}

void conn_resume(struct conn *c)
{
	if (!conn_set_state(c, CONN_OPEN))
		return; /* only a BLOCKED connection resumes */
	/* The resumed request loop flushes when it ends (conn_process). */
	srv_resume_queue(c->srv, c);
}

void conn_ref(struct conn *c)
{
	c->refs++;
}

void conn_unref(struct conn *c)
{
	if (--c->refs == 0 && c->state == CONN_CLOSED)
		srv_bury(c->srv, c); /* the reaper frees it */
}

void conn_close(struct conn *c, const char *reason)
{
	if (!conn_set_state(c, CONN_CLOSING))
		return; /* closing or closed already */
	c->close_reason = reason;
	c->closing_since_ms = srv_turn_ms(c->srv);
	if (c->tp) {
		c->transport->set_reading(c, false);
		c->transport->set_drain_mark(c, 0);
	}
	if (!c->in_process) {
		conn_flush(c);
		finish_if_sent(c);
	}
}

void conn_abort(struct conn *c, const char *reason)
{
	if (!conn_set_state(c, CONN_CLOSED))
		return;
	if (!c->close_reason)
		c->close_reason = reason;
	c->out.len = 0;
	/* stop every callback now; the fd is closed by the reaper, after
	 * whatever callback we are in has returned */
	if (c->tp)
		c->transport->stop(c);
	event_del(c->flush_ev);
	srv_resume_unqueue(c->srv, c);
	srv_flush_unqueue(c->srv, c);
	log_msg(LOG_LVL_DEBUG, "connection %llu %s closed: %s", (unsigned long long)c->id, c->addr,
		c->close_reason ? c->close_reason : "closed");
	srv_bury(c->srv, c);
}
