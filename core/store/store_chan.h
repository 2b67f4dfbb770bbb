/*
 * store_chan: the channels of Redis's PUBLISH across replicas, kept in the
 * lock table — each a short log of the last messages published on it,
 * which the replicas with subscribers read now and then (gateway/redis/
 * pubsub.c).
 *
 * A channel is an item at key CHAN#<id> (sort key CHAN when the table has
 * one; the caller names it by the SHA1 of the channel, in hex), _type
 * CHAN: a counter "seq" of the messages ever published on it and a list
 * "log" of the last ones, oldest first, each the replica that published it
 * ("o") and its bytes ("m"). A publish appends one entry and adds 1 to seq
 * in one write, so the last entry of a log read with seq S is message S,
 * the one before it S - 1, and so on; older entries are trimmed from the
 * front (a later write, and only while seq is still the one it saw), so a
 * log holds STORE_CHAN_KEEP entries or a few more for a moment. Its key
 * never starts with LOCK#: lock scans and reads never see it. With a TTL
 * attribute, ttl (epoch s) is written too.
 *
 * Results: OK (.found, .seq and the last .n entries, oldest first, while
 * the callback runs); TRANSIENT (throttling... after the store's retries);
 * FATAL with .message (no table, a bad answer).
 */
#ifndef LG_STORE_CHAN_H
#define LG_STORE_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store/store.h"

#define STORE_CHAN_ID_LEN  40	       /* the id: SHA1 hex */
#define STORE_CHAN_KEEP	   8	       /* entries a log keeps */
#define STORE_CHAN_MSG_MAX (16 * 1024) /* bytes of a message (8 fit an item) */

struct store_chan_entry {
	const char *origin; /* the replica that published it */
	const char *data;
	size_t len;
};

struct store_chan_result {
	enum store_status status;
	const char *error_type; /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
	bool found;  /* the channel has an item */
	int64_t seq; /* messages ever published on it (0: none) */
	/* the last n (<= STORE_CHAN_KEEP) of them, oldest first: e[n - 1] is
	 * message seq; pointers valid during the callback only */
	unsigned n;
	struct store_chan_entry e[STORE_CHAN_KEEP];
};

/* Appends (origin, len bytes of data) to the log of channel id (one
 * write: the entry and seq + 1); the result shows the log after it.
 * origin: 1..STORE_ID_MAX printable bytes; len <= STORE_CHAN_MSG_MAX; ttl
 * epoch seconds or 0. cb runs once, later, from the loop, unless cancelled
 * with store_cancel. NULL on out-of-memory, bad arguments or a store
 * without channels (no callback then). */
struct store_call *store_chan_publish(struct store *s, const char *id, const char *origin,
				      const void *data, size_t len, int64_t ttl, store_chan_cb cb,
				      void *arg) __attribute__((warn_unused_result));

/* Reads channel id (a consistent read); as store_chan_publish. */
struct store_call *store_chan_read(struct store *s, const char *id, store_chan_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* The checks every store applies (origin NULL: a read). */
bool store_chan_valid(const char *id, const char *origin, size_t len);

#endif
