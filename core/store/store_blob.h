/*
 * store_blob: small values other than locks kept in the lock table — the
 * scripts of EVAL and SCRIPT LOAD, so that every replica runs by SHA1 a
 * script one replica loaded (gateway/script).
 *
 * A blob is an item at key <kind>#<id> (sort key <kind> when the table has
 * one), _type <kind>, its bytes in the binary attribute "body". Its key
 * never starts with LOCK#: lock scans and reads never see it. Blobs are
 * content-addressed by their callers (a script's id is the SHA1 of its
 * body), so a put is unconditional: two replicas putting the same id put
 * the same bytes. No TTL: a blob stays until deleted by hand.
 *
 * Results: OK (a get: .found, and the bytes in .data/.len while the
 * callback runs); TRANSIENT (throttling... after the store's retries);
 * FATAL with .message (no table, a bad answer).
 */
#ifndef LG_STORE_BLOB_H
#define LG_STORE_BLOB_H

#include <stdbool.h>
#include <stddef.h>

#include "core/store/store.h"

#define STORE_BLOB_MAX	  (256 * 1024) /* bytes of a blob (an item holds 400 KB) */
#define STORE_BLOB_ID_MAX 64	       /* bytes of an id, printable ASCII */

struct store_blob_result {
	enum store_status status;
	const char *error_type; /* static; TRANSIENT, FATAL */
	char message[STORE_MSG_MAX];
	bool found;	  /* a get: there is a blob at the id */
	const char *data; /* a get that found it: its bytes, during the callback only */
	size_t len;
};

/* Writes len (0..STORE_BLOB_MAX) bytes at kind#id; kind is 1..16 upper-case
 * letters other than LOCK, id 1..STORE_BLOB_ID_MAX printable bytes (both
 * copied). cb runs once, later, from the loop, unless cancelled with
 * store_cancel. NULL on out-of-memory, bad arguments or a store without
 * blobs (no callback then). */
struct store_call *store_blob_put(struct store *s, const char *kind, const char *id,
				  const void *data, size_t len, store_blob_cb cb, void *arg)
	__attribute__((warn_unused_result));

/* Reads kind#id (a consistent read); as store_blob_put. */
struct store_call *store_blob_get(struct store *s, const char *kind, const char *id,
				  store_blob_cb cb, void *arg) __attribute__((warn_unused_result));

/* The shape checks every store applies. */
bool store_blob_valid(const char *kind, const char *id, size_t len);

#endif
