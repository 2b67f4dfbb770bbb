/*
 * http: asynchronous HTTP(S) requests on the event loop. http:// and
 * https:// requests without a proxy go through leasegate's own HTTP/1.1
 * keep-alive client on bufferevents (http_direct.c); the others (a proxy
 * from the environment, other schemes) through libcurl's multi-socket API
 * (http_curl.c). Both report in libcurl's terms (curl_code, CURLE_*).
 * Keep-alive connections are reused; at most max_active requests run at
 * once, the rest wait in two FIFO queues: urgent requests (a lease's
 * renewal or release, which cost a lease when they wait too long) start
 * before any normal one (an acquire or a read, which can wait or be asked
 * again). Normal requests are refused at once (back-pressure) when
 * max_queued_normal requests already wait, urgent ones only at max_queued.
 *
 * This module knows nothing of DynamoDB or SigV4: the caller passes the
 * complete header list. It never adds Accept-Encoding (identity is asked
 * for by the caller), Expect or other headers that would change a signature.
 */
#ifndef LG_HTTP_H
#define LG_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http;
struct http_req;

#define HTTP_BODY_MAX (4u << 20) /* a response larger than this fails */

struct http_header {
	const char *name;
	const char *value;
};

enum http_priority {
	HTTP_PRIO_NORMAL, /* waits behind every urgent request */
	HTTP_PRIO_URGENT,
};

struct http_request {
	const char *method; /* "GET", "POST", "PUT" */
	const char *url;
	const struct http_header *headers; /* sent as given, in order */
	size_t nheaders;
	const char *body; /* may be NULL */
	size_t body_len;
	int64_t connect_timeout_ms;  /* 0 = the http default */
	int64_t timeout_ms;	     /* whole request, 0 = the http default */
	int64_t queue_timeout_ms;    /* > 0: the most it may wait for a slot, and
				      * timeout_ms counts from the start of its
				      * transfer (within queue_timeout_ms of the
				      * send all the same) */
	bool no_proxy;		     /* ignore proxies named by the environment
				      * (for link-local endpoints: IMDS, container agents) */
	enum http_priority priority; /* when it has to wait for a slot */
};

struct http_response {
	int curl_code;	   /* CURLE_OK when a response arrived */
	const char *error; /* curl's message when curl_code != CURLE_OK */
	long status;	   /* HTTP status, 0 without a response */
	const char *body;  /* NUL-terminated; valid during the callback */
	size_t body_len;
	const char *date;	/* the Date header, or NULL */
	const char *crc32;	/* the x-amz-crc32 header, or NULL */
	const char *request_id; /* the x-amzn-RequestId header, or NULL */
	int64_t elapsed_us;
};

typedef void (*http_cb)(void *arg, const struct http_response *res);

struct http_options {
	unsigned max_active;	    /* concurrent requests, default 64 */
	unsigned max_queued;	    /* waiting requests, default 10000 */
	unsigned max_queued_normal; /* waiting requests past which a normal one
				     * is refused, default (and at most) max_queued */
	int64_t connect_timeout_ms; /* default 2000 */
	int64_t timeout_ms;	    /* default 10000 */
	bool insecure;		    /* skip TLS verification (never by default) */
	const char *ca_file;	    /* NULL: the system store */
};

/* Returns NULL on failure (curl init or out-of-memory). opts may be NULL. */
struct http *http_new(struct event_base *base, const struct http_options *opts);

/* Starts req (copied). cb runs exactly once, later, from the loop, unless
 * http_cancel() is called first. Returns NULL when the queue is full for
 * req's priority (counted in http_stats.refused) or on out-of-memory: no
 * callback then. */
struct http_req *http_send(struct http *h, const struct http_request *req, http_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Whether http_send() would take a request of priority p now: a free slot,
 * or room in the queue for p. Lets a caller skip the cost of building a
 * request that would be refused. */
bool http_has_room(const struct http *h, enum http_priority p);

/* The callback of r will not run; r is invalid afterwards. Safe from any
 * callback; from r's own callback it does nothing (r ends with it). */
void http_cancel(struct http *h, struct http_req *r);

/* Cancels everything (no callbacks) and frees h. From inside a callback,
 * the memory is released when that callback returns. */
void http_free(struct http *h);

/* Figures for INFO and benchmarks. */
struct http_stats {
	uint64_t sent, completed, failed, connections_opened;
	uint64_t refused; /* http_send() refused: the queue was full */
	unsigned active;  /* in the transports (at most max_active) */
	unsigned queued;  /* waiting, both priorities */
	unsigned queued_urgent;
	/* Time from http_send to the start of the transfer, over every
	 * request started (those started at once count 0). */
	uint64_t started, wait_sum_us;
	int64_t wait_max_us;
	unsigned max_active; /* the options in force */
};
void http_stats(const struct http *h, struct http_stats *out);

#endif
