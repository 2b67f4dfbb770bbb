/*
 * session: the per-connection loop (see session.h).
 *
 * Bytes flow bufferevent input -> parser (bounded by its room) -> one
 * command at a time -> sess->out -> bufferevent output, once per batch.
 * The loop stops when the session blocks, closes, or its unsent output is
 * over the limit; it restarts from the read callback, the write callback
 * (output drained) or the resume event (a deferred reply was written).
 */
#include "gateway/session.h"

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
		bufferevent_disable(s->bev, EV_READ);
		/* wake when the output has drained to half the limit */
		bufferevent_setwatermark(s->bev, EV_WRITE, out_limit(s) / 2, 0);
	} else {
		bufferevent_setwatermark(s->bev, EV_WRITE, 0, 0);
		if (s->state == SESS_OPEN)
			bufferevent_enable(s->bev, EV_READ);
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
	    evbuffer_get_length(bufferevent_get_input(s->bev)) != 0 ||
	    resp_parser_buffered(s->parser) != 0)
		return 0;
	ssize_t n = send(bufferevent_getfd(s->bev), s->out.buf, s->out.len,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
	return n > 0 ? (size_t)n : 0;
}

/* Hands the replies to the socket now. */
static void flush_now(struct sess *s)
{
	if (s->state == SESS_CLOSED || !s->bev) {
		s->out.len = 0;
		return;
	}
	if (resp_out_failed(&s->out)) {
		sess_abort(s, "out of memory for replies");
		return;
	}
	if (s->out.len) {
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

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	flush_now(arg);
}

void sess_flush(struct sess *s)
{
	/* Open: once per loop turn, after every command this turn runs (the
	 * event is appended behind the callbacks already active). */
	if ((s->state == SESS_OPEN || s->state == SESS_BLOCKED) && s->flush_ev &&
	    !resp_out_failed(&s->out)) {
		if (s->out.len)
			event_active(s->flush_ev, EV_TIMEOUT, 0);
		return;
	}
	flush_now(s);
}

/* Moves bytes from the socket buffer into the parser, up to its room.
 * Returns the number of bytes moved. */
static size_t feed(struct sess *s)
{
	struct evbuffer *in = bufferevent_get_input(s->bev);
	size_t moved = 0;
	for (;;) {
		size_t room = resp_parser_room(s->parser);
		size_t have = evbuffer_get_length(in);
		if (!room || !have)
			break;
		struct evbuffer_iovec v;
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		size_t n = v.iov_len < room ? v.iov_len : room;
		if (resp_parser_feed(s->parser, v.iov_base, n) != RESP_NEED_MORE)
			break;
		evbuffer_drain(in, n);
		moved += n;
	}
	return moved;
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
			if (resp_out_failed(&s->out))
				break;
			if (s->out.len >= 16 * 1024)
				flush_now(s); /* may pause reading: back-pressure */
			continue;
		}
		if (st == RESP_ERROR) {
			protocol_error(s);
			break;
		}
		if (!feed(s)) {
			if (resp_parser_error(s->parser))
				protocol_error(s);
			break;
		}
	}
	s->in_process = false;
	sess_flush(s);
	if (s->state == SESS_CLOSING && s->bev &&
	    evbuffer_get_length(bufferevent_get_output(s->bev)) == 0)
		sess_abort(s, s->close_reason);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct sess *s = arg;
	/* Blocked, the session keeps reading (up to the query buffer limit)
	 * so that it sees the client go away; past the limit it closes. */
	if (s->state == SESS_BLOCKED &&
	    evbuffer_get_length(bufferevent_get_input(bev)) >= srv_limits(s->srv)->max_query) {
		log_msg(LOG_LVL_DEBUG, "session %llu %s: query buffer limit reached while blocked",
			(unsigned long long)s->id, s->addr);
		sess_abort(s, "query buffer limit reached while blocked");
		return;
	}
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

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct sess *s = arg;
	if (what & BEV_EVENT_EOF)
		sess_abort(s, "client closed the connection");
	else if (what & BEV_EVENT_ERROR)
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
	resp_out_init(&s->out, 0);
	s->parser = resp_parser_new(srv_limits(srv));
	s->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	s->resume_ev = event_new(base, -1, 0, resume_cb, s);
	s->flush_ev = event_new(base, -1, 0, flush_cb, s);
	if (!s->parser || !s->bev || !s->resume_ev || !s->flush_ev) {
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
	bufferevent_setcb(s->bev, read_cb, write_cb, event_cb, s);
	/* The bufferevent reads ahead of the parser up to the query buffer
	 * limit: an open session drains it at once; a blocked one reads on,
	 * so a client that closes is noticed even behind pipelined requests,
	 * and is closed at the limit (read_cb). One watermark for both: a
	 * change per command costs a clock read and an event update. */
	bufferevent_setwatermark(s->bev, EV_READ, 0, srv_limits(srv)->max_query);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	return s;
}

void sess_free(struct sess *s)
{
	if (s->bev)
		bufferevent_free(s->bev);
	if (s->resume_ev)
		event_free(s->resume_ev);
	if (s->flush_ev)
		event_free(s->flush_ev);
	resp_parser_free(s->parser);
	resp_out_free(&s->out);
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
	sess_flush(s);
	if (s->state == SESS_OPEN && s->resume_ev)
		event_active(s->resume_ev, EV_TIMEOUT, 0);
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
	if (s->bev) {
		bufferevent_disable(s->bev, EV_READ);
		bufferevent_setwatermark(s->bev, EV_WRITE, 0, 0);
	}
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
	if (s->resume_ev)
		event_del(s->resume_ev);
	if (s->flush_ev)
		event_del(s->flush_ev);
	log_msg(LOG_LVL_DEBUG, "session %llu %s closed: %s", (unsigned long long)s->id, s->addr,
		s->close_reason ? s->close_reason : "closed");
	srv_bury(s->srv, s);
}
