/*
 * store_session: the dispatch and checks of the operations on session
 * items (see store_session.h).
 */
#include "core/store/store_session.h"

#include <stdio.h>
#include <string.h>

bool store_session_id_ok(const char *s, size_t max, bool no_hash)
{
	size_t n = s != NULL ? strnlen(s, max + 1) : 0;
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e || (no_hash && s[i] == '#'))
			return false;
	return true;
}

static bool incarnation_ok(const char *s)
{
	if (s == NULL || strnlen(s, STORE_SESSION_INC_LEN + 1) != STORE_SESSION_INC_LEN)
		return false;
	for (size_t i = 0; i < STORE_SESSION_INC_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* NULL, or at most max bytes */
static bool label_ok(const char *s, size_t max)
{
	return s == NULL || strnlen(s, max + 1) <= max;
}

/* The fields each operation needs (store_session.h). */
static bool fields_ok(const struct store_session_req *r)
{
	bool lease = r->max_lease_ms >= STORE_SESSION_LEASE_MIN &&
		     r->max_lease_ms <= STORE_SESSION_LEASE_MAX;
	switch (r->op) {
	case STORE_SESSION_CREATE:
		return store_session_id_ok(r->rvn, STORE_ID_MAX, false) && lease && r->seq >= 0 &&
		       label_ok(r->holder, STORE_HOLDER_MAX) &&
		       label_ok(r->addr, STORE_SESSION_ADDR_MAX);
	case STORE_SESSION_BEAT:
		return store_session_id_ok(r->rvn, STORE_ID_MAX, false) && lease && r->seq >= 0;
	case STORE_SESSION_KILL:
		return store_session_id_ok(r->seen_rvn, STORE_ID_MAX, false) &&
		       store_session_id_ok(r->by, STORE_ID_MAX, false);
	case STORE_SESSION_READ: {
		size_t n = r->name != NULL ? strnlen(r->name, STORE_NAME_MAX + 1) : 0;
		return n > 0 && n <= STORE_NAME_MAX;
	}
	}
	return false;
}

bool store_session_valid(const struct store_session_req *r)
{
	return store_session_id_ok(r->replica, STORE_SESSION_REPLICA_MAX, true) &&
	       incarnation_ok(r->incarnation) && r->ttl >= 0 && fields_ok(r);
}

struct store_call *store_session_submit(struct store *s, const struct store_session_req *req,
					store_session_cb cb, void *arg)
{
	if (s->ops->session_submit == NULL || !store_session_valid(req))
		return NULL;
	return s->ops->session_submit(s, req, cb, arg);
}

void store_session_key(const struct store_session_req *req, char *buf)
{
	snprintf(buf, STORE_SESSION_KEY_MAX + 1, "SESSION#%s#%s", req->replica, req->incarnation);
}

bool store_session_key_split(const char *key, char *replica, char *incarnation)
{
	size_t n = key != NULL ? strnlen(key, STORE_SESSION_KEY_MAX + 1) : 0;
	if (n > STORE_SESSION_KEY_MAX || strncmp(key, "SESSION#", 8) != 0 ||
	    n < 8 + 2 + STORE_SESSION_INC_LEN || key[n - STORE_SESSION_INC_LEN - 1] != '#')
		return false;
	size_t rlen = n - 8 - 1 - STORE_SESSION_INC_LEN;
	char rep[STORE_SESSION_REPLICA_MAX + 1];
	if (rlen > STORE_SESSION_REPLICA_MAX)
		return false;
	memcpy(rep, key + 8, rlen);
	rep[rlen] = '\0';
	const char *inc = key + n - STORE_SESSION_INC_LEN;
	if (!store_session_id_ok(rep, STORE_SESSION_REPLICA_MAX, true) || !incarnation_ok(inc))
		return false;
	if (replica != NULL)
		memcpy(replica, rep, rlen + 1);
	if (incarnation != NULL)
		memcpy(incarnation, inc, STORE_SESSION_INC_LEN + 1);
	return true;
}

int64_t store_session_ttl(int64_t now_ms, int64_t max_lease_ms)
{
	return (now_ms + max_lease_ms) / 1000 + (int64_t)STORE_SESSION_TTL_DAYS * 86400;
}

enum store_op store_session_counted_as(enum store_session_op op)
{
	static const enum store_op counted_as[] = {
		[STORE_SESSION_CREATE] = STORE_ACQUIRE,
		[STORE_SESSION_BEAT] = STORE_RENEW,
		[STORE_SESSION_KILL] = STORE_RELEASE,
		[STORE_SESSION_READ] = STORE_READ,
	};
	return counted_as[op];
}
