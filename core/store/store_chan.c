/*
 * store_chan: the dispatch and checks of channel operations (see
 * store_chan.h).
 */
#include "core/store/store_chan.h"

#include <string.h>

bool store_chan_valid(const char *id, const char *origin, size_t len)
{
	if (id == NULL || strnlen(id, STORE_CHAN_ID_LEN + 1) != STORE_CHAN_ID_LEN)
		return false;
	for (size_t i = 0; i < STORE_CHAN_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	if (origin == NULL)
		return true;
	size_t on = strnlen(origin, STORE_ID_MAX + 1);
	if (on == 0 || on > STORE_ID_MAX || len > STORE_CHAN_MSG_MAX)
		return false;
	for (size_t i = 0; i < on; i++)
		if (origin[i] < 0x21 || origin[i] > 0x7e)
			return false;
	return true;
}

struct store_call *store_chan_publish(struct store *s, const char *id, const char *origin,
				      const void *data, size_t len, int64_t ttl, store_chan_cb cb,
				      void *arg)
{
	if (s->ops->chan_publish == NULL || !store_chan_valid(id, origin, len) ||
	    (data == NULL && len > 0) || ttl < 0)
		return NULL;
	return s->ops->chan_publish(s, id, origin, data, len, ttl, cb, arg);
}

struct store_call *store_chan_read(struct store *s, const char *id, store_chan_cb cb, void *arg)
{
	if (s->ops->chan_read == NULL || !store_chan_valid(id, NULL, 0))
		return NULL;
	return s->ops->chan_read(s, id, cb, arg);
}
