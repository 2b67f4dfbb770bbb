/*
 * store_blob: the dispatch and checks of blob operations (see
 * store_blob.h).
 */
#include "core/store/store_blob.h"

#include <string.h>

bool store_blob_valid(const char *kind, const char *id, size_t len)
{
	size_t kn = kind != NULL ? strnlen(kind, 17) : 0;
	size_t in = id != NULL ? strnlen(id, STORE_BLOB_ID_MAX + 1) : 0;
	if (kn == 0 || kn > 16 || strcmp(kind, "LOCK") == 0 || in == 0 || in > STORE_BLOB_ID_MAX ||
	    len > STORE_BLOB_MAX)
		return false;
	for (size_t i = 0; i < kn; i++)
		if (kind[i] < 'A' || kind[i] > 'Z')
			return false;
	for (size_t i = 0; i < in; i++)
		if (id[i] < 0x21 || id[i] > 0x7e)
			return false;
	return true;
}

struct store_call *store_blob_put(struct store *s, const char *kind, const char *id,
				  const void *data, size_t len, store_blob_cb cb, void *arg)
{
	if (s->ops->blob_put == NULL || !store_blob_valid(kind, id, len) ||
	    (data == NULL && len > 0))
		return NULL;
	return s->ops->blob_put(s, kind, id, data, len, cb, arg);
}

struct store_call *store_blob_get(struct store *s, const char *kind, const char *id,
				  store_blob_cb cb, void *arg)
{
	if (s->ops->blob_get == NULL || !store_blob_valid(kind, id, 0))
		return NULL;
	return s->ops->blob_get(s, kind, id, cb, arg);
}
