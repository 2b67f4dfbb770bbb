/*
 * store: the dispatch of the store interface and what every store shares.
 */
#include "core/store.h"

#include <openssl/rand.h>
#include <stdio.h>

static const char *const op_names[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = "acquire", [STORE_RENEW] = "renew", [STORE_RELEASE] = "release",
	[STORE_READ] = "read",       [STORE_DELETE] = "delete", [STORE_CHECK] = "check",
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

void store_new_id(char *buf)
{
	unsigned char raw[16];
	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		/* OpenSSL's generator cannot fail once seeded; fall back to a
		 * counter mixed with the address so ids stay unique here. */
		static uint64_t n;
		uint64_t v = ++n ^ (uint64_t)(uintptr_t)buf;
		for (size_t i = 0; i < sizeof(raw); i++)
			raw[i] = (unsigned char)(v >> (8 * (i % 8))) ^ (unsigned char)i;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
}
