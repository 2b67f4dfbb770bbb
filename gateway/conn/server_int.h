/*
 * server_int: what server.c shares with server_guard.c (the registry's
 * timeouts and protected mode) and server_listen.c (its listeners), not
 * for other modules: they use server.h.
 */
#ifndef LG_SERVER_INT_H
#define LG_SERVER_INT_H

#include "gateway/conn/server.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/listener.h>

struct srv_guard;

/* The registry's records, for the files of server.c's room. */
struct conn_list {
	struct conn *head, *tail;
	size_t n;
};

struct listener {
	struct srv *srv;
	struct evconnlistener *l;
	const struct conn_proto *proto;
	const struct transport *transport;
	int port;	/* TCP: the bound port; Unix: 0 */
	char path[108]; /* Unix: the socket file, removed at the end */
	dev_t dev;	/* Unix: the file made, so that only it is removed */
	ino_t ino;
};

struct srv {
	struct event_base *base;
	const struct cfg *cfg;
	int64_t maxclients;	/* connections at once, of every listener */
	const char *limit_name; /* the option that sets it, for the log */
	struct listener listeners[SRV_MAX_LISTENERS];
	size_t nlisteners;
	uint64_t next_id;  /* ids given: connections accepted so far */
	uint64_t rejected; /* connections refused at maxclients */
	int64_t started_ms;
	struct conn_list live, grave;
	struct event *reaper;
	struct conn *flush_head;		/* connections waiting for the end of the turn */
	struct event *flush_guard;		/* writes them if that end does not come */
	struct conn *resume_head, *resume_tail; /* conn_resume()d, oldest first */
	struct event *resume_ev;		/* active while any is queued */
	/* Out of descriptors: accepting pauses for a back-off instead of
	 * spinning on a listener that stays readable. */
	int reserve_fd;		    /* closed to answer a newcomer, then reopened */
	struct event *accept_retry; /* ends the pause */
	bool accept_paused;
	int64_t backoff_ms;	 /* the next pause: doubles while it lasts */
	uint64_t nofd_refused;	 /* newcomers refused in this pause */
	uint64_t nofd_events;	 /* accepts that found no descriptor, ever */
	int64_t full_logged_ms;	 /* last "maxclients reached" line */
	uint64_t full_unlogged;	 /* refusals since that line */
	struct loop_poll *poll;	 /* told of input (loop.h), may be NULL */
	struct tls_srv *tls;	 /* the TLS transport's context, may be NULL */
	struct srv_guard *guard; /* timeouts, protected mode (server_guard.c) */
	struct auth *auth;	 /* users and rules (auth.h), may be NULL */
	bool shutting_down;
	void (*drained)(void *arg);
	void *drained_arg;
};

/* server.c: the listeners' callbacks (a connection accepted, accept(2)
 * failed). */
void srv_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
		   void *arg);
void srv_accept_error_cb(struct evconnlistener *l, void *arg);

/* server_listen.c: every listener closed (a Unix socket's file removed if
 * it is still the one made). */
void srv_stop_listening(struct srv *srv);

/* server_guard.c: the sweep of --auth-timeout and --timeout (a timer
 * while either is on) and protected mode's counts. NULL on out of memory.
 * Freed by srv_guard_free (NULL is fine). */
struct srv_guard *srv_guard_new(struct srv *srv);
void srv_guard_free(struct srv_guard *g);

/* server.c: the registry's guard; one more client refused (INFO stats
 * rejected_connections). */
struct srv_guard *srv_guard_of(const struct srv *srv);
void srv_count_rejected(struct srv *srv);

#endif
