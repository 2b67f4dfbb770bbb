/*
 * rawresp: a Redis-protocol client on a plain socket for integration tests
 * that need what hiredis 0.14 cannot give: RESP3 replies (maps, pushes,
 * nulls), exact pipelined writes, replies that come later (a WAIT), broken
 * input. A reply is read whole and rendered as text, so a test compares
 * strings:
 *
 *   "text" (bulk, verbatim)  +simple  -error  :42  nil (any null)
 *   [a, b] (array)  ~[a, b] (set)  >[a, b] (push)  {k: v, k2: v2} (map)
 *
 * e.g. {"held": :1, "holder": "gw-a", ...} for a RESP3 LOCK.STATE. With
 * plain set, the terser text of it_leader_pair: strings and simple strings
 * bare, nulls "_", and every aggregate as its type byte and its items
 * separated by spaces:
 *
 *   text  -error  :42  _  *[a b]  ~[a b]  >[a b]  %[k v k2 v2]
 *
 * Failures (a send that fails, a reply that does not come) fail the cmocka
 * test.
 */
#ifndef LG_RAWRESP_H
#define LG_RAWRESP_H

#include <stdbool.h>
#include <stddef.h>

struct raw {
	int fd;
	size_t len;
	char buf[65536]; /* bytes read, not yet rendered */
	char last[8192]; /* the last reply read, rendered */
	bool plain;	 /* render plain (see above); raw_open leaves it false */
};

/* Connects to 127.0.0.1:port (fails the test when it cannot). */
struct raw *raw_open(int port);
void raw_close(struct raw *r);

/* Writes bytes as they are, in one call to send() when the socket takes them. */
void raw_write(struct raw *r, const char *p, size_t n);

/* Appends "a b c" (split on spaces) as a RESP multibulk to buf; returns
 * its length. */
size_t raw_encode(char *buf, size_t cap, const char *line);

/* Sends one command (arguments separated by spaces) without reading. */
void raw_send(struct raw *r, const char *line);

/* Reads one reply into r->last. Returns 1, 0 on timeout, -1 on EOF. */
int raw_read(struct raw *r, int timeout_ms);

/* The next reply within ms (rendered); fails the test on timeout or EOF. */
const char *raw_reply(struct raw *r, int ms);

/* Sends a command and checks its rendered reply. */
void raw_expect(struct raw *r, const char *line, const char *want);

/* The integer of a rendered ":N" reply, else fails the test. */
long long raw_int_of(const char *s);

/* Sends a command whose reply must be an integer; returns it. */
long long raw_int(struct raw *r, const char *line);

/* True when nothing arrives on r within ms. */
bool raw_quiet(struct raw *r, int ms);

#endif
