/*
 * store_batch: the dispatch and checks of store_batch_read (see
 * store_batch.h).
 */
#include "core/store/store_batch.h"

#include <string.h>

bool store_batch_valid(const struct store_batch_result *res)
{
	if (res == NULL || res->entries == NULL || res->count < 1 || res->count > STORE_BATCH_MAX)
		return false;
	for (unsigned i = 0; i < res->count; i++) {
		const char *n = res->entries[i].name;
		size_t len = n != NULL ? strnlen(n, STORE_NAME_MAX + 1) : 0;
		if (len == 0 || len > STORE_NAME_MAX)
			return false;
		for (unsigned j = 0; j < i; j++) /* at most 4,950 compares */
			if (strcmp(res->entries[j].name, n) == 0)
				return false;
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
