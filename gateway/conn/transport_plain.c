/*
 * transport_plain: a socket as it is (see transport.h).
 *
 * Reading is a plain read event and recv() straight into the caller's
 * buffer: a bufferevent's read costs an extra ioctl(FIONREAD) per request.
 * Writing tries send() first when nothing is queued (that saves the
 * bufferevent's write-interest round trip, two epoll_ctl and a loop turn,
 * per reply); what the socket does not take goes to a write-only
 * bufferevent, which reports when it has drained.
 */
#include "gateway/conn/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"

struct plain {
	struct bufferevent *bev; /* writes what the socket did not take */
	struct event *read_ev;	 /* the socket is readable */
};

static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	conn_readable(arg);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	conn_drained(arg, evbuffer_get_length(bufferevent_get_output(bev)));
}

/* The bufferevent only writes: what it reports is a write error. */
static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_transport_error(arg);
}

static void plain_close(struct conn *c)
{
	struct plain *p = c->tp;
	if (p == NULL)
		return;
	if (p->read_ev)
		event_free(p->read_ev);
	if (p->bev)
		bufferevent_free(p->bev); /* no CLOSE_ON_FREE: the fd is the connection's */
	free(p);
	c->tp = NULL;
}

static bool plain_open(struct conn *c)
{
	struct event_base *base = srv_base(c->srv);
	struct plain *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return false;
	c->tp = p;
	p->bev = bufferevent_socket_new(base, c->fd, 0);
	p->read_ev = event_new(base, c->fd, EV_READ | EV_PERSIST, read_cb, c);
	if (!p->bev || !p->read_ev) {
		plain_close(c);
		return false;
	}
	bufferevent_setcb(p->bev, NULL, write_cb, event_cb, c);
	bufferevent_enable(p->bev, EV_WRITE);
	event_add(p->read_ev, NULL);
	return true;
}

static void plain_stop(struct conn *c)
{
	struct plain *p = c->tp;
	if (p == NULL)
		return;
	bufferevent_disable(p->bev, EV_READ | EV_WRITE);
	bufferevent_setcb(p->bev, NULL, NULL, NULL, NULL);
	event_del(p->read_ev);
}

static ssize_t plain_read(struct conn *c, void *buf, size_t len)
{
	return recv(c->fd, buf, len, 0);
}

static size_t plain_unsent(const struct conn *c)
{
	const struct plain *p = c->tp;
	return evbuffer_get_length(bufferevent_get_output(p->bev));
}

static bool plain_write(struct conn *c, const void *buf, size_t len, bool direct)
{
	struct plain *p = c->tp;
	size_t sent = 0;
	if (direct && plain_unsent(c) == 0) {
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		sent = n > 0 ? (size_t)n : 0; /* errors: the bufferevent reports them */
	}
	return sent == len || bufferevent_write(p->bev, (const char *)buf + sent, len - sent) == 0;
}

static void plain_set_reading(struct conn *c, bool on)
{
	struct plain *p = c->tp;
	if (on)
		event_add(p->read_ev, NULL);
	else
		event_del(p->read_ev);
}

static void plain_set_drain_mark(struct conn *c, size_t mark)
{
	struct plain *p = c->tp;
	bufferevent_setwatermark(p->bev, EV_WRITE, mark, 0);
}

const struct transport transport_plain = {
	.name = "plain",
	.encrypted = false,
	.open = plain_open,
	.close = plain_close,
	.stop = plain_stop,
	.read = plain_read,
	.write = plain_write,
	.unsent = plain_unsent,
	.set_reading = plain_set_reading,
	.set_drain_mark = plain_set_drain_mark,
};
