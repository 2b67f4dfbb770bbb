/*
 * http_int: what http.c (the API, the queue, the life of a request) shares
 * with its two transports: http_direct.c (its own HTTP/1.1 keep-alive
 * client on bufferevents, for http:// and https:// without a proxy) and
 * http_curl.c (libcurl's multi-socket API, for everything else: proxies,
 * other schemes, URLs the direct client does not take). Private to those
 * files; callers use http.h.
 *
 * A transport starts an active request and, from a loop callback, ends it
 * with http_finished() between http_enter() and http_leave(), the one
 * place where http_free() called by a user callback takes effect.
 */
#ifndef LG_HTTP_INT_H
#define LG_HTTP_INT_H

#include <curl/curl.h>

#include "lib/http/http.h"

struct hd_pool;
struct hd_conn;

/* A request's life. Changed only by http_req_set_state() (http.c), which
 * checks a table of legal moves and moves the request between h's lists
 * in the same step: each state has its list, or none. */
enum req_state {
	REQ_NEW,     /* made by http_send, on no list */
	REQ_QUEUED,  /* on h->queue, or h->urgent when r->urgent */
	REQ_ACTIVE,  /* on h->active, in a transport */
	REQ_DONE,    /* on h->done, failed, its callback due from defer_ev */
	REQ_CALLING, /* on no list: its callback is running */
	REQ_FREED,   /* on no list: cancelled or dropped, being freed */
	REQ_STATE_COUNT
};

struct http_transport {
	/* Starts r with timeout_ms left. Never ends r from here; false (r
	 * untouched) with *code and *msg when it cannot start. */
	bool (*start)(struct http *h, struct http_req *r, int64_t timeout_ms, int *code,
		      const char **msg);
	/* Stops active r without ending it (cancel, http_free). */
	void (*stop)(struct http *h, struct http_req *r);
};

extern const struct http_transport http_direct_transport;
extern const struct http_transport http_curl_transport;

struct http_req {
	struct http *h;
	struct http_req *prev, *next; /* in queue, active or done list */
	enum req_state state;
	const struct http_transport *tp; /* while active */
	CURL *easy;			 /* curl: the handle, while active */
	struct hd_conn *conn;		 /* direct: the connection, while active */
	bool retried;			 /* direct: once on a fresh connection */
	struct curl_slist *hdrs;	 /* nodes and lines in this allocation: first
					  * nuser lines are the caller's, in curl syntax */
	size_t nuser;
	bool has_host;		   /* the caller gave Host */
	char *url, *method, *body; /* in this allocation */
	size_t body_len;
	int64_t connect_timeout_ms, timeout_ms, queue_timeout_ms;
	bool no_proxy;
	bool urgent;	   /* HTTP_PRIO_URGENT */
	int64_t queued_us; /* monotonic time of http_send */
	http_cb cb;
	void *arg;
	size_t alloc; /* bytes of this allocation (req_pool) */
	char *rbuf;   /* response body */
	size_t rlen, rcap;
	bool too_big;
	char date[64], crc32[16], request_id[80];
	bool has_date, has_crc32, has_request_id;
	long status;	/* set by the transport before http_finished */
	unsigned conns; /* connections opened for it, likewise */
	int fail_code;	/* for REQ_DONE without a transfer */
	const char *fail_msg;
	char errbuf[CURL_ERROR_SIZE];
};

struct req_list {
	struct http_req *head, *tail;
	unsigned count;
};

struct http {
	struct event_base *base;
	struct event *queue_ev, *defer_ev;
	struct http_options opts;
	struct req_list queue, urgent, active, done; /* urgent starts first */
	struct http_stats stats;
	int64_t queue_due_us;	/* when queue_ev fires, while pending */
	int depth;		/* nested dispatches running user callbacks */
	bool dead;		/* http_free() called during a dispatch */
	struct hc_state *curl;	/* NULL until a request needs it */
	struct hd_pool *direct; /* likewise */
};

/* Moves r to state to: off the list of its state, onto the list of to
 * (LG_ASSERT on a move not in http.c's table; the move is made either
 * way). */
void http_req_set_state(struct http *h, struct http_req *r, enum req_state to);

int64_t http_mono_us(void);
int64_t http_effective(int64_t v, int64_t dflt);

/* The response sinks (curl write/header callback signatures): body bytes
 * (0 returned: too big or out of memory, r->too_big says which) and one
 * header line, the status line included, with or without its CRLF. */
size_t http_on_body(char *data, size_t size, size_t nmemb, void *arg);
size_t http_on_header(char *line, size_t size, size_t nmemb, void *arg);

/* Ends active r with code (CURLE_OK when a response arrived; the body
 * limit turns it into CURLE_FILESIZE_EXCEEDED) and msg (NULL: r->errbuf
 * or curl's text for code): runs its callback, frees it, starts queued
 * requests. Only between http_enter() and http_leave(). */
void http_finished(struct http *h, struct http_req *r, int code, const char *msg);

void http_enter(struct http *h);
/* After this, h may be gone: touch nothing of it. */
void http_leave(struct http *h);

/* Transports' own teardown, from http.c when h is freed. */
void http_direct_free(struct hd_pool *p);
void http_curl_free(struct hc_state *c);

/* Whether r goes to the direct transport (its URL is http:// or https://
 * with a plain host, and no proxy from the environment applies). */
bool http_direct_takes(const struct http_req *r);

#endif
