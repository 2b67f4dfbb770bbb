/*
 * fake_ddb: a scripted HTTP responder on the test's event loop (evhttp on
 * 127.0.0.1, a free port), for what a real DynamoDB emulator cannot be
 * made to do on demand: 500s, throttling, a wrong CRC32, a skewed Date. It answers requests in
 * order from a queue of replies and keeps what it received, for the test to look at.
 *
 * Not a DynamoDB: it never looks at a request to decide its answer.
 */
#ifndef LG_TEST_FAKE_DDB_H
#define LG_TEST_FAKE_DDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct fake_ddb;

struct fake_ddb_reply {
	int status;	   /* 0 = 200 */
	const char *body;  /* NULL = "{}" */
	const char *crc32; /* NULL = the right one, "" = no header, else as given */
	const char *date;  /* NULL = no Date header */
};

/* What the last request carried (copies, valid until the next request). */
struct fake_ddb_seen {
	char target[64];
	char content_type[64];
	char accept_encoding[32];
	char amz_date[32];
	char authorization[512];
	char body[8192];
};

/* Listens on a free port of 127.0.0.1; url gets "http://127.0.0.1:PORT".
 * Returns NULL on failure. */
struct fake_ddb *fake_ddb_new(struct event_base *base, char *url, size_t urlsz);

/* Queues a reply. When the queue is empty, requests get 200 "{}". */
void fake_ddb_push(struct fake_ddb *f, struct fake_ddb_reply r);

unsigned fake_ddb_requests(const struct fake_ddb *f);
const struct fake_ddb_seen *fake_ddb_last(const struct fake_ddb *f);

void fake_ddb_free(struct fake_ddb *f);

#endif
