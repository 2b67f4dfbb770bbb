/*
 * server: listeners, the session list and the reaper (see server.h).
 *
 * Sessions live on one of two intrusive lists: `live` (accepted, counted
 * against maxclients) and `grave` (closed, waiting for the reaper). The
 * reaper is an event made active whenever a session is buried; it runs the
 * on_close hook, closes the socket and frees the memory once nobody holds a
 * reference, all from the event loop, outside any session callback.
 */
#include "gateway/server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "gateway/commands.h"
#include "gateway/config.h"
#include "gateway/log.h"
#include "gateway/loop.h"
#include "gateway/session.h"

enum { LIST_NONE, LIST_LIVE, LIST_GRAVE };

struct sess_list {
	struct sess *head, *tail;
	size_t n;
};

struct srv {
	struct event_base *base;
	const struct cfg *cfg;
	struct cmd_table *cmds;
	struct resp_limits limits;
	struct sess_hooks hooks;
	struct evconnlistener *tcp, *unix_l;
	int port;
	uint64_t next_id;  /* ids given: connections accepted so far */
	uint64_t rejected; /* connections refused at maxclients */
	int64_t started_ms;
	struct sess_list live, grave;
	struct event *reaper;
	struct sess *flush_head;   /* sessions waiting for the end of the turn */
	struct event *flush_guard; /* writes them if that end does not come */
	struct loop_poll *poll;	   /* told of input (loop.h), may be NULL */
	bool shutting_down;
	void (*drained)(void *arg);
	void *drained_arg;
};

/* TCP keepalive as Redis sets it: probes after idle_ms of silence, then
 * every third of it, 3 unanswered probes close the connection (accepted
 * sockets inherit SO_KEEPALIVE from libevent's listener, with the system's
 * idle time, 2 hours by default). A client that vanishes (a partition, a
 * host gone) holds leases that the gateway renews until its connection
 * closes: keepalive bounds that. */
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

static void list_push(struct sess_list *l, struct sess *s, int which)
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

static void list_remove(struct sess_list *l, struct sess *s)
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

/* The safe point: every buried session is finished here. */
/* How long replies may wait for the lowest priority (a loop that always
 * has a read or a timer to run never reaches it). */
static const struct timeval flush_guard_tv = {0, 1000};

void srv_flush_queue(struct srv *srv, struct sess *s)
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

void srv_flush_unqueue(struct srv *srv, struct sess *s)
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

static void flush_guard_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv *srv = arg;
	while (srv->flush_head != NULL)
		sess_flush_now(srv->flush_head); /* unqueues it */
}

static void reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct srv *srv = arg;
	struct sess *s;
	while ((s = srv->grave.head)) {
		list_remove(&srv->grave, s);
		if (!s->close_hook_done) {
			s->close_hook_done = true;
			if (srv->hooks.on_close)
				srv->hooks.on_close(s, srv->hooks.arg);
		}
		if (s->bev) {
			bufferevent_free(s->bev); /* closes the fd */
			s->bev = NULL;
		}
		if (s->refs == 0)
			sess_free(s);
		/* else: sess_unref() buries it again at the last reference */
	}
	if (srv->shutting_down && srv->live.n == 0 && srv->drained) {
		void (*done)(void *) = srv->drained;
		srv->drained = NULL;
		done(srv->drained_arg);
	}
}

void srv_bury(struct srv *srv, struct sess *s)
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

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		      void *arg)
{
	static const char full[] = "-ERR max number of clients reached\r\n";
	struct srv *srv = arg;
	loop_note_input(srv->poll);
	if (srv->shutting_down) {
		close(fd);
		return;
	}
	if (srv->live.n >= (size_t)srv->cfg->maxclients) {
		/* as Redis: best effort, the socket is fresh and its buffer empty */
		ssize_t w = send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)w;
		close(fd);
		srv->rejected++;
		log_msg(LOG_LVL_WARN, "refused a client: maxclients (%lld) reached",
			(long long)srv->cfg->maxclients);
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
	struct sess *s = sess_new(srv, fd, addr, laddr);
	if (!s) {
		log_msg(LOG_LVL_ERROR, "out of memory accepting a client");
		return;
	}
	s->id = ++srv->next_id;
	list_push(&srv->live, s, LIST_LIVE);
	if (srv->hooks.on_open)
		srv->hooks.on_open(s, srv->hooks.arg);
	sess_process(s); /* bytes may already be waiting */
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	int e = EVUTIL_SOCKET_ERROR();
	log_msg(LOG_LVL_WARN, "accept: %s", evutil_socket_error_to_string(e));
}

struct srv *srv_new(struct event_base *base, const struct cfg *cfg, struct cmd_table *cmds)
{
	struct srv *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->base = base;
	/* Three priorities: sessions write a turn's replies at the lowest
	 * one, once nothing else is active (libevent 2.1 has no before-poll
	 * hook). Refused (harmless: one priority then) when the base has
	 * active events. */
	(void)event_base_priority_init(base, 3);
	srv->cfg = cfg;
	srv->cmds = cmds;
	srv->limits.max_args = (uint32_t)cfg->max_args;
	srv->limits.max_bulk = (size_t)cfg->max_bulk;
	srv->limits.max_inline = (size_t)cfg->max_inline;
	srv->limits.max_query = (size_t)cfg->max_query_buffer;
	srv->started_ms = srv_now_ms();
	srv->reaper = event_new(base, -1, 0, reap_cb, srv);
	srv->flush_guard = evtimer_new(base, flush_guard_cb, srv);
	struct resp_parser *probe = resp_parser_new(&srv->limits);
	if (!srv->reaper || !srv->flush_guard || !probe) {
		resp_parser_free(probe);
		if (srv->reaper)
			event_free(srv->reaper);
		if (srv->flush_guard)
			event_free(srv->flush_guard);
		free(srv);
		return NULL;
	}
	resp_parser_free(probe);
	return srv;
}

static bool listen_tcp(struct srv *srv, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL;
	char port[16];
	snprintf(port, sizeof(port), "%lld", (long long)srv->cfg->port);
	int rc = getaddrinfo(srv->cfg->bind, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "--bind %s: %s", srv->cfg->bind, gai_strerror(rc));
		return false;
	}
	srv->tcp = evconnlistener_new_bind(srv->base, accept_cb, srv,
					   LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
						   LEV_OPT_CLOSE_ON_EXEC,
					   511, res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (!srv->tcp) {
		snprintf(err, errlen, "cannot listen on %s:%lld: %s", srv->cfg->bind,
			 (long long)srv->cfg->port, strerror(errno));
		return false;
	}
	evconnlistener_set_error_cb(srv->tcp, accept_error_cb);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(srv->tcp), (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET)
			srv->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			srv->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return true;
}

static bool listen_unix(struct srv *srv, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	const char *path = srv->cfg->unixsocket;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path); /* a stale socket of an earlier run, as Redis does */
	srv->unix_l = evconnlistener_new_bind(srv->base, accept_cb, srv,
					      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 511,
					      (struct sockaddr *)&sun, sizeof(sun));
	if (!srv->unix_l) {
		snprintf(err, errlen, "cannot listen on unix socket %s: %s", path, strerror(errno));
		return false;
	}
	evconnlistener_set_error_cb(srv->unix_l, accept_error_cb);
	return true;
}

bool srv_listen(struct srv *srv, char *err, size_t errlen)
{
	if (srv->cfg->port && !listen_tcp(srv, err, errlen))
		return false;
	if (srv->cfg->unixsocket[0] && !listen_unix(srv, err, errlen))
		return false;
	return true;
}

static void stop_listening(struct srv *srv)
{
	if (srv->tcp)
		evconnlistener_free(srv->tcp);
	srv->tcp = NULL;
	if (srv->unix_l) {
		evconnlistener_free(srv->unix_l);
		unlink(srv->cfg->unixsocket);
	}
	srv->unix_l = NULL;
}

void srv_shutdown(struct srv *srv, void (*done)(void *arg), void *arg)
{
	srv->shutting_down = true;
	srv->drained = done;
	srv->drained_arg = arg;
	stop_listening(srv);
	for (struct sess *s = srv->live.head, *next; s; s = next) {
		next = s->next;
		sess_close(s, "server shutting down");
	}
	event_active(srv->reaper, EV_TIMEOUT, 0); /* reports at once if none */
}

void srv_free(struct srv *srv)
{
	if (!srv)
		return;
	stop_listening(srv);
	while (srv->live.head)
		sess_abort(srv->live.head, "server stopped");
	srv->drained = NULL;
	reap_cb(-1, 0, srv);
	event_free(srv->reaper);
	event_free(srv->flush_guard);
	free(srv);
}

void srv_set_hooks(struct srv *srv, const struct sess_hooks *hooks)
{
	srv->hooks = *hooks;
}

int srv_port(const struct srv *srv)
{
	return srv->port;
}
const struct cfg *srv_cfg(const struct srv *srv)
{
	return srv->cfg;
}
struct cmd_table *srv_cmds(const struct srv *srv)
{
	return srv->cmds;
}
struct event_base *srv_base(const struct srv *srv)
{
	return srv->base;
}
const struct resp_limits *srv_limits(const struct srv *srv)
{
	return &srv->limits;
}
size_t srv_sessions(const struct srv *srv)
{
	return srv->live.n;
}
int64_t srv_started_ms(const struct srv *srv)
{
	return srv->started_ms;
}
const struct sess_hooks *srv_hooks(const struct srv *srv)
{
	return &srv->hooks;
}

size_t srv_blocked_sessions(const struct srv *srv)
{
	size_t n = 0;
	for (const struct sess *s = srv->live.head; s; s = s->next)
		n += s->state == SESS_BLOCKED;
	return n;
}

void srv_foreach(struct srv *srv, void (*fn)(struct sess *s, void *arg), void *arg)
{
	for (struct sess *s = srv->live.head; s; s = s->next)
		fn(s, arg);
}
