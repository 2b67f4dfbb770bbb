/*
 * server: the connection registry, accepting and the reaper (see
 * server.h; the listeners are made in server_listen.c).
 *
 * Connections live on one of two intrusive lists: `live` (accepted,
 * counted against maxclients) and `grave` (closed, waiting for the
 * reaper). The reaper is an event made active whenever a connection is
 * buried; it runs the front-end's close op, closes the transport and the
 * socket, and frees the memory once nobody holds a reference, all from the
 * event loop, outside any connection callback.
 */
#include "gateway/conn/server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server_int.h"
#include "gateway/conn/transport.h"
#include "gateway/obs/log.h"
#include "gateway/conn/loop.h"

enum { LIST_NONE, LIST_LIVE, LIST_GRAVE };

/* Out of descriptors: the first pause of accepting, and the longest. */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS	 1000

/* TCP keepalive as Redis sets it: probes after idle_ms of silence, then
 * every third of it, 3 unanswered probes close the connection (accepted
 * sockets inherit SO_KEEPALIVE from libevent's listener, with the system's
 * idle time, 2 hours by default). A client that vanishes (a partition, a
 * host gone) holds leases that the gateway renews until its connection
 * closes: keepalive bounds that. */
static size_t srv_refusal_len(const struct conn_proto *proto)
{
	return proto->refusal_len ? proto->refusal_len : strlen(proto->refusal);
}

static void set_keepalive(int fd, int64_t idle_ms)
{
	int one = 1, zero = 0;
	if (idle_ms <= 0) { /* off: libevent's listener turns it on */
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &zero, sizeof(zero));
		return;
	}
	int idle = (int)((idle_ms + 999) / 1000), intvl = idle / 3, cnt = 3;
	if (intvl < 1)
		intvl = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) != 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) != 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) != 0)
		log_msg(LOG_LVL_DEBUG, "TCP keepalive not set: %s", strerror(errno));
}

int64_t srv_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t srv_connections_received(const struct srv *srv)
{
	return srv->next_id;
}

uint64_t srv_connections_rejected(const struct srv *srv)
{
	return srv->rejected;
}

void srv_set_poll(struct srv *srv, struct loop_poll *lp)
{
	srv->poll = lp;
}

struct loop_poll *srv_poll(const struct srv *srv)
{
	return srv->poll;
}

int64_t srv_turn_ms(struct srv *srv)
{
	struct timeval tv;
	event_base_gettimeofday_cached(srv->base, &tv);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void list_push(struct conn_list *l, struct conn *s, int which)
{
	s->prev = l->tail;
	s->next = NULL;
	if (l->tail)
		l->tail->next = s;
	else
		l->head = s;
	l->tail = s;
	l->n++;
	s->list = which;
}

static void list_remove(struct conn_list *l, struct conn *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		l->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		l->tail = s->prev;
	s->prev = s->next = NULL;
	l->n--;
	s->list = LIST_NONE;
}

/* How long replies may wait for the lowest priority (a loop that always
 * has a read or a timer to run never reaches it). */
static const struct timeval flush_guard_tv = {0, 1000};

void srv_flush_queue(struct srv *srv, struct conn *s)
{
	if (s->in_fq)
		return;
	s->fq_prev = NULL;
	s->fq_next = srv->flush_head;
	if (srv->flush_head != NULL)
		srv->flush_head->fq_prev = s;
	else
		event_add(srv->flush_guard, &flush_guard_tv);
	srv->flush_head = s;
	s->in_fq = true;
}

void srv_flush_unqueue(struct srv *srv, struct conn *s)
{
	if (srv == NULL || !s->in_fq)
		return;
	if (s->fq_prev != NULL)
		s->fq_prev->fq_next = s->fq_next;
	else
		srv->flush_head = s->fq_next;
	if (s->fq_next != NULL)
		s->fq_next->fq_prev = s->fq_prev;
	s->in_fq = false;
	if (srv->flush_head == NULL)
		event_del(srv->flush_guard);
}

void srv_resume_queue(struct srv *srv, struct conn *c)
{
	if (c->in_rq)
		return;
	c->rq_next = NULL;
	c->rq_prev = srv->resume_tail;
	if (srv->resume_tail != NULL)
		srv->resume_tail->rq_next = c;
	else
		srv->resume_head = c;
	srv->resume_tail = c;
	c->in_rq = true;
	if (c->rq_prev == NULL) /* queued in the empty queue: active now */
		event_active(srv->resume_ev, EV_TIMEOUT, 0);
}

void srv_resume_unqueue(struct srv *srv, struct conn *c)
{
	if (srv == NULL || !c->in_rq)
		return;
	if (c->rq_prev != NULL)
		c->rq_prev->rq_next = c->rq_next;
	else
		srv->resume_head = c->rq_next;
	if (c->rq_next != NULL)
		c->rq_next->rq_prev = c->rq_prev;
	else
		srv->resume_tail = c->rq_prev;
	c->in_rq = false;
}

/* Runs the request loop of every connection queued, those queued meanwhile
 * too (as libevent runs events activated by the callbacks of a pass). */
static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv *srv = arg;
	struct conn *c;
	while ((c = srv->resume_head) != NULL) {
		srv_resume_unqueue(srv, c);
		conn_process(c);
	}
}

static void flush_guard_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv *srv = arg;
	while (srv->flush_head != NULL)
		conn_flush_now(srv->flush_head); /* unqueues it */
}

/* The safe point: every buried connection is finished here. */
static void reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv *srv = arg;
	struct conn *s;
	while ((s = srv->grave.head)) {
		list_remove(&srv->grave, s);
		if (!s->close_done) {
			s->close_done = true;
			s->proto->close(s);
		}
		conn_drop_io(s);
		if (s->refs == 0)
			conn_free(s);
		/* else: conn_unref() buries it again at the last reference */
	}
	if (srv->shutting_down && srv->live.n == 0 && srv->drained) {
		void (*done)(void *) = srv->drained;
		srv->drained = NULL;
		done(srv->drained_arg);
	}
}

void srv_bury(struct srv *srv, struct conn *s)
{
	if (s->list == LIST_LIVE)
		list_remove(&srv->live, s);
	if (s->list != LIST_GRAVE)
		list_push(&srv->grave, s, LIST_GRAVE);
	event_active(srv->reaper, EV_TIMEOUT, 0);
}

static void describe(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%d", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%d", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "/unixsocket:0");
	}
}

static struct conn *adopt(struct srv *srv, const struct conn_proto *proto,
			  const struct transport *t, int fd, const char *addr, const char *laddr)
{
	if (srv->live.n >= (size_t)srv->maxclients) {
		/* as Redis: best effort, the socket is fresh and its buffer empty */
		ssize_t w = send(fd, proto->refusal, srv_refusal_len(proto),
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)w;
		/* what the client sent already (a PostgreSQL startup packet) is
		 * read first: closing on unread bytes resets the connection, and
		 * the client may lose the refusal */
		char scratch[1024];
		for (int i = 0; i < 8 && recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT) > 0; i++)
			;
		shutdown(fd, SHUT_WR);
		close(fd);
		srv->rejected++;
		/* a line a second at most: a flood of clients must not flood the log */
		int64_t now = srv_now_ms();
		if (now - srv->full_logged_ms >= 1000 || srv->full_logged_ms == 0) {
			log_msg(LOG_LVL_WARN,
				"refused a client: %s (%lld) reached (%llu more refused since "
				"the last line)",
				srv->limit_name, (long long)srv->maxclients,
				(unsigned long long)srv->full_unlogged);
			srv->full_logged_ms = now;
			srv->full_unlogged = 0;
		} else {
			srv->full_unlogged++;
		}
		return NULL;
	}
	struct conn *c = conn_new(srv, proto, t, fd, srv->next_id + 1, addr, laddr);
	if (!c) {
		log_msg(LOG_LVL_ERROR, "out of memory accepting a client");
		return NULL;
	}
	srv->next_id++;
	list_push(&srv->live, c, LIST_LIVE);
	if (!srv->accept_paused)
		srv->backoff_ms = BACKOFF_FIRST_MS; /* descriptors are back */
	return c;
}

struct conn *srv_adopt(struct srv *srv, const struct conn_proto *proto, int fd, const char *addr,
		       const char *laddr)
{
	return adopt(srv, proto, &transport_plain, fd, addr, laddr);
}

void srv_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		   void *arg)
{
	struct listener *li = arg;
	struct srv *srv = li->srv;
	loop_note_input(srv->poll);
	if (srv->shutting_down) {
		close(fd);
		return;
	}
	if (sa->sa_family != AF_UNIX) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		set_keepalive(fd, srv->cfg->tcp_keepalive_ms);
	}
	char addr[64], laddr[64];
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	describe(sa, addr, sizeof(addr));
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0)
		describe((struct sockaddr *)&local, laddr, sizeof(laddr));
	else
		snprintf(laddr, sizeof(laddr), "?");
	struct conn *c = adopt(srv, li->proto, li->transport, fd, addr, laddr);
	if (c != NULL)
		conn_process(c); /* bytes may already be waiting */
}

static void set_accepting(struct srv *srv, bool on)
{
	for (size_t i = 0; i < srv->nlisteners; i++)
		if (on)
			evconnlistener_enable(srv->listeners[i].l);
		else
			evconnlistener_disable(srv->listeners[i].l);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv *srv = arg;
	srv->accept_paused = false;
	if (!srv->shutting_down)
		set_accepting(srv, true);
}

/* The process is out of descriptors (EMFILE/ENFILE): the pending
 * connection cannot be accepted, and a listener that stays readable would
 * make the loop spin. Answer one newcomer with the front-end's refusal
 * through the reserve descriptor (closed, used, reopened), stop accepting
 * for a back-off (doubling while it lasts, up to a second) and log once
 * per pause. */
static void out_of_descriptors(struct listener *li, int err)
{
	struct srv *srv = li->srv;
	if (srv->reserve_fd >= 0) {
		close(srv->reserve_fd);
		int fd = accept(evconnlistener_get_fd(li->l), NULL, NULL);
		if (fd >= 0) {
			ssize_t w = send(fd, li->proto->refusal, srv_refusal_len(li->proto),
					 MSG_NOSIGNAL | MSG_DONTWAIT);
			(void)w;
			close(fd);
			srv->rejected++;
			srv->nofd_refused++;
		}
		srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	srv->nofd_events++;
	if (srv->accept_paused)
		return;
	srv->accept_paused = true;
	set_accepting(srv, false);
	log_msg(LOG_LVL_WARN,
		"accept: %s: not accepting for %lld ms (%llu clients refused since the previous "
		"message; raise the open files limit or lower %s)",
		evutil_socket_error_to_string(err), (long long)srv->backoff_ms,
		(unsigned long long)srv->nofd_refused, srv->limit_name);
	srv->nofd_refused = 0;
	struct timeval tv = {srv->backoff_ms / 1000, (srv->backoff_ms % 1000) * 1000};
	event_add(srv->accept_retry, &tv);
	srv->backoff_ms =
		srv->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : srv->backoff_ms * 2;
}

void srv_accept_error_cb(struct evconnlistener *l, void *arg)
{
	int e = EVUTIL_SOCKET_ERROR();
	if (e == EMFILE || e == ENFILE) {
		out_of_descriptors(arg, e);
		return;
	}
	log_msg(LOG_LVL_WARN, "accept: %s", evutil_socket_error_to_string(e));
}

uint64_t srv_out_of_fds(const struct srv *srv)
{
	return srv->nofd_events;
}

bool srv_fit_nofile(int64_t *maxclients, int64_t reserved, char *msg, size_t msglen)
{
	struct rlimit rl;
	msg[0] = '\0';
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return true; /* nothing known: leave it */
	rlim_t need = (rlim_t)(*maxclients + reserved);
	if (rl.rlim_cur >= need)
		return true;
	rlim_t want = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
	struct rlimit up = {want, rl.rlim_max};
	if (setrlimit(RLIMIT_NOFILE, &up) == 0)
		rl.rlim_cur = want;
	if (rl.rlim_cur >= need)
		return true;
	int64_t fit = (int64_t)rl.rlim_cur - reserved;
	if (fit < 1) {
		snprintf(msg, msglen,
			 "the open files limit (%llu) leaves no room for a client: leasegate needs "
			 "%lld descriptors for itself; raise it (ulimit -n, LimitNOFILE=)",
			 (unsigned long long)rl.rlim_cur, (long long)reserved);
		return false;
	}
	snprintf(msg, msglen,
		 "--maxclients %lld needs %llu open files, the limit is %llu (hard %llu): "
		 "maxclients lowered to %lld; raise the limit (ulimit -n, LimitNOFILE=) to "
		 "serve more",
		 (long long)*maxclients, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
		 (unsigned long long)rl.rlim_max, (long long)fit);
	*maxclients = fit;
	return true;
}

void srv_count_rejected(struct srv *srv)
{
	srv->rejected++;
}

struct srv_guard *srv_guard_of(const struct srv *srv)
{
	return srv->guard;
}

struct srv *srv_new(struct event_base *base, const struct cfg *cfg, int64_t maxclients,
		    const char *limit_name)
{
	struct srv *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->base = base;
	/* Three priorities: connections write a turn's replies at the lowest
	 * one, once nothing else is active (libevent 2.1 has no before-poll
	 * hook). Refused (harmless: one priority then) when the base has
	 * active events. */
	(void)event_base_priority_init(base, 3);
	srv->cfg = cfg;
	srv->maxclients = maxclients;
	srv->limit_name = limit_name;
	srv->started_ms = srv_now_ms();
	srv->reaper = event_new(base, -1, 0, reap_cb, srv);
	srv->flush_guard = evtimer_new(base, flush_guard_cb, srv);
	srv->resume_ev = event_new(base, -1, EV_PERSIST, resume_cb, srv);
	srv->accept_retry = evtimer_new(base, accept_retry_cb, srv);
	srv->backoff_ms = BACKOFF_FIRST_MS;
	srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!srv->reaper || !srv->flush_guard || !srv->resume_ev || !srv->accept_retry) {
		srv_free(srv);
		return NULL;
	}
	if ((srv->guard = srv_guard_new(srv)) == NULL) {
		srv_free(srv);
		return NULL;
	}
	return srv;
}

void srv_shutdown(struct srv *srv, void (*done)(void *arg), void *arg)
{
	srv->shutting_down = true;
	srv->drained = done;
	srv->drained_arg = arg;
	srv_stop_listening(srv);
	for (struct conn *s = srv->live.head, *next; s; s = next) {
		next = s->next;
		conn_close(s, "server shutting down");
	}
	event_active(srv->reaper, EV_TIMEOUT, 0); /* reports at once if none */
}

void srv_free(struct srv *srv)
{
	if (!srv)
		return;
	srv_stop_listening(srv);
	while (srv->live.head)
		conn_abort(srv->live.head, "server stopped");
	srv->drained = NULL;
	if (srv->reaper)
		reap_cb(-1, 0, srv);
	if (srv->reaper)
		event_free(srv->reaper);
	if (srv->flush_guard)
		event_free(srv->flush_guard);
	if (srv->resume_ev)
		event_free(srv->resume_ev);
	if (srv->accept_retry)
		event_free(srv->accept_retry);
	srv_guard_free(srv->guard);
	if (srv->reserve_fd >= 0)
		close(srv->reserve_fd);
	free(srv);
}

void srv_set_auth(struct srv *srv, struct auth *auth)
{
	srv->auth = auth;
}

struct auth *srv_auth(const struct srv *srv)
{
	return srv->auth;
}

void srv_set_tls(struct srv *srv, struct tls_srv *tls)
{
	srv->tls = tls;
}

struct tls_srv *srv_tls(const struct srv *srv)
{
	return srv->tls;
}
const struct cfg *srv_cfg(const struct srv *srv)
{
	return srv->cfg;
}
struct event_base *srv_base(const struct srv *srv)
{
	return srv->base;
}
int64_t srv_maxclients(const struct srv *srv)
{
	return srv->maxclients;
}
size_t srv_conns(const struct srv *srv)
{
	return srv->live.n;
}
int64_t srv_started_ms(const struct srv *srv)
{
	return srv->started_ms;
}

size_t srv_blocked_conns(const struct srv *srv)
{
	size_t n = 0;
	for (const struct conn *s = srv->live.head; s; s = s->next)
		n += s->state == CONN_BLOCKED;
	return n;
}

size_t srv_closing_conns(const struct srv *srv)
{
	size_t n = 0;
	for (const struct conn *s = srv->live.head; s; s = s->next)
		n += s->state == CONN_CLOSING;
	return n;
}

void srv_foreach(struct srv *srv, const struct conn_proto *proto,
		 void (*fn)(struct conn *c, void *arg), void *arg)
{
	for (struct conn *s = srv->live.head, *next; s; s = next) {
		next = s->next;
		if (proto == NULL || s->proto == proto)
			fn(s, arg);
	}
}
