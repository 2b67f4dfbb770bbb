/*
 * store_batch: the dispatch and checks of store_batch_read (see
 * store_batch.h).
 */
#include "core/store/store_batch.h"

#include <stdint.h>
#include <string.h>

/* Room for STORE_BATCH_MAX names at most half full: no chain is long. */
#define DUP_SLOTS 256

static unsigned name_hash(const char *n)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *n; n++)
		h = (h ^ (unsigned char)*n) * 16777619u;
	return h & (DUP_SLOTS - 1);
}

/* Each name 1..STORE_NAME_MAX bytes, none twice: an open-addressing set
 * of the names seen, so that 100 names cost about 100 compares, not
 * 4,950. */
bool store_batch_valid(const struct store_batch_result *res)
{
	if (res == NULL || res->entries == NULL || res->count < 1 || res->count > STORE_BATCH_MAX)
		return false;
	const char *seen[DUP_SLOTS] = {NULL};
	for (unsigned i = 0; i < res->count; i++) {
		const char *n = res->entries[i].name;
		size_t len = n != NULL ? strnlen(n, STORE_NAME_MAX + 1) : 0;
		if (len == 0 || len > STORE_NAME_MAX)
			return false;
		unsigned k = name_hash(n);
		for (; seen[k] != NULL; k = (k + 1) & (DUP_SLOTS - 1))
			if (strcmp(seen[k], n) == 0)
				return false;
		seen[k] = n;
	}
	return true;
}

struct store_call *store_batch_read(struct store *s, struct store_batch_result *res,
				    void (*cb)(void *arg), void *arg)
{
	if (s->ops->batch_read == NULL || !store_batch_valid(res))
		return NULL;
	res->status = STORE_OK;
	res->error_type = NULL;
	res->message[0] = '\0';
	for (unsigned i = 0; i < res->count; i++) {
		res->entries[i].read = false;
		memset(&res->entries[i].item, 0, sizeof(res->entries[i].item));
	}
	return s->ops->batch_read(s, res, cb, arg);
}
