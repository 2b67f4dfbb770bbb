/*
 * session: the per-connection loop (see session.h).
 *
 * Bytes flow socket -> parser (bounded by its room) -> one command at a
 * time -> sess->out -> socket: at the end of a batch of commands read, or,
 * for replies of completions, at the end of the loop turn (what the socket
 * does not take waits in the bufferevent's output). Reading is a plain
 * event with recv() straight into the parser: a bufferevent's read costs
 * an extra ioctl(FIONREAD) per request. The loop stops when the session
 * blocks, closes, or its unsent output is over the limit; it restarts from
 * the read event, the write callback (output drained) or the resume event
 * (a deferred reply was written).
 */
#include "gateway/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "gateway/commands.h"
#include "gateway/config.h"
#include "gateway/log.h"
#include "gateway/loop.h"
#include "gateway/server.h"

static size_t out_limit(const struct sess *s)
{
	return (size_t)srv_cfg(s->srv)->max_output_buffer;
}

static void set_paused(struct sess *s, bool paused)
{
	if (s->reading_paused == paused)
		return;
	s->reading_paused = paused;
	if (paused) {
		event_del(s->read_ev);
		/* wake when the output has drained to half the limit */
		bufferevent_setwatermark(s->bev, EV_WRITE, out_limit(s) / 2, 0);
	} else {
		bufferevent_setwatermark(s->bev, EV_WRITE, 0, 0);
		if (s->state == SESS_OPEN)
			event_add(s->read_ev, NULL);
	}
}

/* Writes the replies straight to the socket when nothing is queued before
 * them and the client waits for them: that saves the bufferevent's write-interest round trip (two
 * epoll_ctl and a loop turn) per reply. Returns the bytes sent; what is
 * left (EAGAIN, errors) goes through the bufferevent, which reports
 * errors as usual. */
static size_t direct_send(struct sess *s)
{
	/* A client with more requests buffered is pipelining: leave its
	 * replies to the bufferevent, which gathers them into one write. */
	if (evbuffer_get_length(bufferevent_get_output(s->bev)) != 0 ||
	    resp_parser_buffered(s->parser) != 0)
		return 0;
	ssize_t n = send(bufferevent_getfd(s->bev), s->out.buf, s->out.len,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
	return n > 0 ? (size_t)n : 0;
}

/* Hands the replies to the socket now. */
static void flush_now(struct sess *s)
{
	srv_flush_unqueue(s->srv, s);
	if (s->state == SESS_CLOSED || !s->bev) {
		s->out.len = 0;
		return;
	}
	if (buf_failed(&s->out)) {
		sess_abort(s, "out of memory for replies");
		return;
	}
	if (s->out.len) {
		s->flushes++;
		size_t sent = direct_send(s);
		if (sent < s->out.len &&
		    bufferevent_write(s->bev, s->out.buf + sent, s->out.len - sent) != 0) {
			sess_abort(s, "out of memory for replies");
			return;
		}
		s->out.len = 0;
	}
	if (evbuffer_get_length(bufferevent_get_output(s->bev)) > out_limit(s))
		set_paused(s, true);
}

/* Runs at the lowest priority: once nothing else is active in this turn,
 * so a pipelining client whose commands complete one by one still gets
 * their replies in one write. A loop kept busy would never get there: the
 * server's flush guard writes what waited longer than a millisecond. */
static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	flush_now(arg);
}

void sess_flush_now(struct sess *s)
{
	if (s->flush_ev)
		event_del(s->flush_ev);
	flush_now(s);
}

void sess_flush(struct sess *s)
{
	/* Open or blocked: at the end of the turn (flush_cb). */
	if ((s->state == SESS_OPEN || s->state == SESS_BLOCKED) && s->flush_ev &&
	    !buf_failed(&s->out)) {
		if (s->out.len) {
			event_active(s->flush_ev, EV_TIMEOUT, 0);
			srv_flush_queue(s->srv, s);
		}
		return;
	}
	flush_now(s);
}

static void protocol_error(struct sess *s)
{
	const char *e = resp_parser_error(s->parser);
	resp_add_errorf(&s->out, "ERR %s", e ? e : "Protocol error");
	log_msg(LOG_LVL_DEBUG, "session %llu %s: %s", (unsigned long long)s->id, s->addr,
		e ? e : "protocol error");
	sess_close(s, "protocol error");
}

void sess_process(struct sess *s)
{
	if (s->in_process || !s->bev)
		return; /* a handler resumed synchronously: the outer loop carries on */
	s->in_process = true;
	s->last_cmd_ms = srv_turn_ms(s->srv); /* CLIENT LIST's idle */
	while (s->state == SESS_OPEN && !s->reading_paused) {
		struct resp_cmd c;
		enum resp_status st = resp_parser_next(s->parser, &c);
		if (st == RESP_CMD) {
			cmd_dispatch(srv_cmds(s->srv), s, c.argc, c.argv);
			if (buf_failed(&s->out))
				break;
			if (s->out.len >= 16 * 1024)
				flush_now(s); /* may pause reading: back-pressure */
			continue;
		}
		if (st == RESP_ERROR)
			protocol_error(s);
		break; /* RESP_NEED_MORE: the read event brings more */
	}
	s->in_process = false;
	/* Open, every command read has run: the replies leave now. Blocked,
	 * they wait for the end of the turn, with what completions add. */
	if (s->state == SESS_OPEN)
		flush_now(s);
	else
		sess_flush(s);
	if (s->state == SESS_CLOSING && s->bev &&
	    evbuffer_get_length(bufferevent_get_output(s->bev)) == 0)
		sess_abort(s, s->close_reason);
}

/* The socket is readable: moves what it has, up to the parser's room,
 * into the parser. Blocked, the session reads on (up to the query buffer
 * limit) so that it sees the client go away behind pipelined requests;
 * past the limit it closes. */
static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sess *s = arg;
	char buf[16 * 1024];
	size_t room = resp_parser_room(s->parser);
	if (s->state >= SESS_CLOSING)
		return;
	if (room == 0 && s->state == SESS_BLOCKED) {
		log_msg(LOG_LVL_DEBUG, "session %llu %s: query buffer limit reached while blocked",
			(unsigned long long)s->id, s->addr);
		sess_abort(s, "query buffer limit reached while blocked");
		return;
	}
	ssize_t n = 0;
	if (room > 0) {
		n = recv(fd, buf, room < sizeof(buf) ? room : sizeof(buf), 0);
		loop_note_input(srv_poll(s->srv));
		if (n == 0) {
			sess_abort(s, "client closed the connection");
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				sess_abort(s, "socket error");
			return;
		}
	}
	/* an error (out of memory) stays set in the parser: sess_process
	 * answers it, now or when the session is resumed */
	if (resp_parser_feed(s->parser, buf, (size_t)n) != RESP_NEED_MORE &&
	    s->state == SESS_BLOCKED)
		sess_abort(s, "out of memory for the query buffer");
	else if (s->state == SESS_OPEN)
		sess_process(s);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	struct sess *s = arg;
	size_t left = evbuffer_get_length(bufferevent_get_output(bev));
	if (s->state == SESS_CLOSING) {
		if (left == 0)
			sess_abort(s, s->close_reason);
		return;
	}
	if (s->reading_paused && left <= out_limit(s) / 2) {
		set_paused(s, false);
		sess_process(s);
	}
}

/* The bufferevent only writes: what it reports is a write error. */
static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct sess *s = arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		sess_abort(s, "socket error");
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	sess_process(arg);
}

struct sess *sess_new(struct srv *srv, int fd, const char *addr, const char *laddr)
{
	struct event_base *base = srv_base(srv);
	struct sess *s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return NULL;
	}
	s->srv = srv;
	s->fd = fd;
	s->proto = RESP2;
	s->state = SESS_OPEN;
	s->authenticated = srv_cfg(srv)->requirepass[0] == '\0';
	s->created_ms = s->last_cmd_ms = srv_turn_ms(srv);
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	snprintf(s->laddr, sizeof(s->laddr), "%s", laddr);
	buf_init(&s->out, 0);
	s->parser = resp_parser_new(srv_limits(srv));
	s->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	s->read_ev = event_new(base, fd, EV_READ | EV_PERSIST, read_cb, s);
	s->resume_ev = event_new(base, -1, 0, resume_cb, s);
	s->flush_ev = event_new(base, -1, 0, flush_cb, s);
	if (s->flush_ev)
		event_priority_set(s->flush_ev, event_base_get_npriorities(base) - 1);
	if (!s->parser || !s->bev || !s->read_ev || !s->resume_ev || !s->flush_ev) {
		if (s->read_ev)
			event_free(s->read_ev);
		if (s->bev)
			bufferevent_free(s->bev);
		else
			close(fd);
		if (s->resume_ev)
			event_free(s->resume_ev);
		if (s->flush_ev)
			event_free(s->flush_ev);
		resp_parser_free(s->parser);
		free(s);
		return NULL;
	}
	bufferevent_setcb(s->bev, NULL, write_cb, event_cb, s);
	bufferevent_enable(s->bev, EV_WRITE);
	event_add(s->read_ev, NULL);
	return s;
}

void sess_free(struct sess *s)
{
	if (s->read_ev)
		event_free(s->read_ev); /* before the bufferevent closes the fd */
	if (s->bev)
		bufferevent_free(s->bev);
	if (s->resume_ev)
		event_free(s->resume_ev);
	if (s->flush_ev)
		event_free(s->flush_ev);
	resp_parser_free(s->parser);
	buf_free(&s->out);
	free(s->name);
	free(s);
}

void sess_suspend(struct sess *s)
{
	if (s->state != SESS_OPEN)
		return;
	s->state = SESS_BLOCKED;
}

void sess_resume(struct sess *s)
{
	if (s->state != SESS_BLOCKED)
		return;
	s->state = SESS_OPEN;
	/* The resumed command loop flushes when it ends (sess_process). */
	if (s->resume_ev)
		event_active(s->resume_ev, EV_TIMEOUT, 0);
	else
		sess_flush(s);
}

void sess_ref(struct sess *s)
{
	s->refs++;
}

void sess_unref(struct sess *s)
{
	if (--s->refs == 0 && s->state == SESS_CLOSED)
		srv_bury(s->srv, s); /* the reaper frees it */
}

void sess_close(struct sess *s, const char *reason)
{
	if (s->state >= SESS_CLOSING)
		return;
	s->state = SESS_CLOSING;
	s->close_reason = reason;
	if (s->read_ev)
		event_del(s->read_ev);
	if (s->bev)
		bufferevent_setwatermark(s->bev, EV_WRITE, 0, 0);
	if (!s->in_process) {
		sess_flush(s);
		if (s->state == SESS_CLOSING && s->bev &&
		    evbuffer_get_length(bufferevent_get_output(s->bev)) == 0)
			sess_abort(s, reason);
	}
}

void sess_abort(struct sess *s, const char *reason)
{
	if (s->state == SESS_CLOSED)
		return;
	s->state = SESS_CLOSED;
	if (!s->close_reason)
		s->close_reason = reason;
	s->out.len = 0;
	if (s->bev) {
		/* stop every callback now; the fd is closed with the bufferevent by
		 * the reaper, after whatever callback we are in has returned */
		bufferevent_disable(s->bev, EV_READ | EV_WRITE);
		bufferevent_setcb(s->bev, NULL, NULL, NULL, NULL);
	}
	if (s->read_ev)
		event_del(s->read_ev);
	if (s->resume_ev)
		event_del(s->resume_ev);
	if (s->flush_ev)
		event_del(s->flush_ev);
	srv_flush_unqueue(s->srv, s);
	log_msg(LOG_LVL_DEBUG, "session %llu %s closed: %s", (unsigned long long)s->id, s->addr,
		s->close_reason ? s->close_reason : "closed");
	srv_bury(s->srv, s);
}
