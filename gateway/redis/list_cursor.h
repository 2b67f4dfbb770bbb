/*
 * list_cursor: the cursors of LOCK.LIST TABLE, sealed. The store's own
 * cursor names the last item read (the hex of a lock name, or its key), so
 * handed out as it is, it would show a user the names its ACL patterns
 * hide: paging with COUNT 1 reads them one by one. A client gets instead
 * AES-256-GCM(store cursor) under a key made at random when the process
 * starts, with a random nonce, the user's name as associated data,
 * base64-encoded: it tells nothing, cannot be altered, and another user's
 * cursor does not open.
 *
 * The key is the process's own: a cursor is valid on the replica that
 * issued it, until it restarts. Behind a Service a connection stays on
 * one replica, so paging over one connection works; a cursor taken to
 * another replica (or after a restart) is refused with a message saying
 * to start again from 0.
 *
 * Not here: the listing (admincmds.c), the scan (gateway/lease).
 */
#ifndef LG_LIST_CURSOR_H
#define LG_LIST_CURSOR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/store/store.h"

/* Bytes of a sealed cursor: base64 of nonce (12) + the store's cursor +
 * tag (16). */
#define LC_NONCE      12
#define LC_TAG	      16
#define LC_SEALED_MAX (((LC_NONCE + STORE_CURSOR_MAX + LC_TAG + 2) / 3) * 4)

/* Seals the store's cursor (1..STORE_CURSOR_MAX bytes) for user into out
 * (LC_SEALED_MAX + 1 bytes, NUL-terminated). false when OpenSSL fails
 * (no random bytes, no cipher) or cursor is too long. */
bool lc_seal(const char *user, const char *cursor, char out[LC_SEALED_MAX + 1])
	__attribute__((warn_unused_result));

/* Opens sealed (len bytes) for user into cursor (STORE_CURSOR_MAX + 1
 * bytes, NUL-terminated). false when it is not a cursor this process
 * sealed for user: altered, another user's, another replica's or from
 * before a restart. */
bool lc_open(const char *user, const char *sealed, size_t len, char cursor[STORE_CURSOR_MAX + 1])
	__attribute__((warn_unused_result));

#endif
