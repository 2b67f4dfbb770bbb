/*
 * http_fixture: a real HTTP server (libevent's evhttp, in this process, on
 * 127.0.0.1) for the tests of lib/http/http.c (it_http, it_http_queue),
 * and the bookkeeping of their client side. What it serves, by path:
 *   /hold?n=D   held (not answered) until hf_release_held(); D appended to
 *               hf_order on arrival
 *   /big, /bigchunked   one byte over HTTP_BODY_MAX (plain, chunked)
 *   /exact      HTTP_BODY_MAX bytes
 *   anything else   "xxxxx"
 * Every answer carries x-amz-crc32: 1234567890. The server records the
 * method, headers (names lower-cased) and body length of the last request.
 * One fixture per test process: its state is global, reset by hf_setup().
 */
#ifndef LG_HTTP_FIXTURE_H
#define LG_HTTP_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/http.h>

#include "lib/http/http.h"

#define HF_HELD_MAX    64
#define HF_RESULTS_MAX 64

/* What a request's callback received (hf_on_done). */
struct hf_result {
	bool done;
	int code;
	long status;
	size_t body_len;
	char body[16];
	char date[64], crc32[16];
	char error[256];
};

extern struct event_base *hf_base;
extern struct evhttp *hf_srv;
extern int hf_port;
extern unsigned hf_server_conns; /* connections the server accepted */
extern struct evhttp_request *hf_held[HF_HELD_MAX];
extern size_t hf_nheld;
extern unsigned hf_concurrent_max; /* most requests held at once */
extern char hf_last_headers[4096]; /* "name: value\n"..., lower-case names */
extern char hf_last_method[16];
extern size_t hf_last_body_len;
extern char hf_order[256]; /* query "n" of each /hold arrival */
extern struct hf_result hf_results[HF_RESULTS_MAX];
extern bool hf_in_send;			       /* inside hf_send_one's http_send() */
extern bool hf_called_in_send;		       /* a callback ran inside http_send() */
extern char hf_done_order[HF_RESULTS_MAX + 1]; /* result indexes, as they completed */
extern int hf_want_done;		       /* for hf_n_done */
extern size_t hf_want_held;		       /* for hf_n_held */

/* Starts the server on a free port (hf_port). False if it cannot bind. */
bool hf_start(void);
void hf_stop(void);

/* cmocka setup: forgets the previous test's results and counts. */
int hf_setup(void **state);

/* The server's request handler (also for a second, TLS, evhttp). */
void hf_on_request(struct evhttp_request *req, void *arg);

/* Answers every held request ("xx"). */
void hf_release_held(void);

/* An http_done_cb that fills the struct hf_result arg points to. */
void hf_on_done(void *arg, const struct http_response *res);

/* Sends method path (on this server) with its result in hf_results[idx]. */
struct http_req *hf_send_one(struct http *h, const char *method, const char *path,
			     const struct http_header *hd, size_t nh, const char *body, size_t len,
			     int64_t timeout_ms, int idx);

/* Runs the loop until pred() or limit_ms passes; returns pred(). */
bool hf_run_until(bool (*pred)(void), int limit_ms);

/* hf_want_done results are done; hf_want_held requests are held. */
bool hf_n_done(void);
bool hf_n_held(void);

#endif
