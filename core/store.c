/*
 * store: the dispatch of the store interface and what every store shares.
 */
#include "core/store.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

static const char *const op_names[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = "acquire",   [STORE_RENEW] = "renew",	      [STORE_RELEASE] = "release",
	[STORE_READ] = "read",	       [STORE_DELETE] = "delete",     [STORE_CHECK] = "check",
	[STORE_ANNOUNCE] = "announce", [STORE_WITHDRAW] = "withdraw", [STORE_SCAN] = "scan",
};

static const char *const status_names[] = {
	[STORE_OK] = "ok",
	[STORE_REFUSED] = "refused",
	[STORE_TRANSIENT] = "transient",
	[STORE_NO_TABLE] = "table_not_found",
	[STORE_FATAL] = "fatal",
};

struct store_call *store_submit(struct store *s, const struct store_req *req, store_cb cb,
				void *arg)
{
	return s->ops->submit(s, req, cb, arg);
}

void store_cancel(struct store *s, struct store_call *call)
{
	if (call != NULL)
		s->ops->cancel(s, call);
}

bool store_read_now(struct store *s, const char *name, struct lock_item *out)
{
	if (s->ops->read_now == NULL || !s->ops->read_now(s, name, out))
		return false;
	s->requests[STORE_READ]++;
	return true;
}

void store_free(struct store *s)
{
	if (s != NULL)
		s->ops->free(s);
}

uint64_t store_requests_total(const struct store *s)
{
	uint64_t n = 0;
	for (int i = 0; i < STORE_OP_COUNT; i++)
		n += s->requests[i];
	return n;
}

const char *store_op_name(enum store_op op)
{
	return (unsigned)op < STORE_OP_COUNT ? op_names[op] : "?";
}

const char *store_status_name(enum store_status st)
{
	return (unsigned)st <= STORE_FATAL ? status_names[st] : "?";
}

uint64_t store_name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Ids come from a pool of random bytes refilled 4 KiB at a time: one
 * RAND_bytes call per 256 ids instead of one per id. */
static unsigned char pool[4096];
static size_t pool_left;

void store_new_id(char *buf)
{
	/* two hex digits per byte, from a table built once */
	static char pairs[256][2];
	if (pairs[255][0] == '\0') {
		static const char hex[] = "0123456789abcdef";
		for (int i = 0; i < 256; i++) {
			pairs[i][0] = hex[i >> 4];
			pairs[i][1] = hex[i & 15];
		}
	}
	if (pool_left < 16) {
		if (RAND_bytes(pool, sizeof(pool)) != 1) {
			/* OpenSSL's generator cannot fail once seeded; should it,
			 * mix a counter into what the pool holds so ids stay
			 * unique in this process. */
			static uint64_t n;
			for (size_t i = 0; i < sizeof(pool); i += 8) {
				uint64_t v = ++n * 0x9e3779b97f4a7c15ull;
				memcpy(pool + i, &v, 8);
			}
		}
		pool_left = sizeof(pool);
	}
	const unsigned char *raw = pool + sizeof(pool) - pool_left;
	pool_left -= 16;
	for (size_t i = 0; i < 16; i++)
		memcpy(buf + 2 * i, pairs[raw[i]], 2);
	buf[32] = '\0';
}

struct store_call *store_scan(struct store *s, const char *cursor, unsigned limit,
			      struct store_scan_result *res, void (*cb)(void *arg), void *arg)
{
	if (s->ops->scan == NULL || limit == 0 || limit > STORE_SCAN_MAX)
		return NULL;
	return s->ops->scan(s, cursor != NULL ? cursor : "", limit, res, cb, arg);
}
