/*
 * store_revoke: the dispatch, checks and key forms of revocations (see
 * store_revoke.h).
 */
#include "core/store/store_revoke.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

/* 1..max printable bytes without '#' at s, ending at stop; their count */
static size_t id_len(const char *s, size_t max, char stop)
{
	size_t n = 0;
	while (n <= max && s[n] != stop && s[n] != '\0') {
		if (s[n] < 0x21 || s[n] > 0x7e || s[n] == '#')
			return 0;
		n++;
	}
	return n <= max && s[n] == stop ? n : 0;
}

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool store_session_key_valid(const char *key)
{
	if (key == NULL || strnlen(key, STORE_SESSION_KEY_MAX + 1) > STORE_SESSION_KEY_MAX ||
	    strncmp(key, "SESSION#", 8) != 0)
		return false;
	const char *rep = key + 8;
	size_t n = id_len(rep, STORE_SESSION_REPLICA_MAX, '#');
	if (n == 0)
		return false;
	const char *inc = rep + n + 1;
	return strlen(inc) == STORE_SESSION_INC_LEN && lower_hex(inc, STORE_SESSION_INC_LEN);
}

static bool name_ok(const char *name)
{
	size_t n = name != NULL ? strnlen(name, STORE_NAME_MAX + 1) : 0;
	return n > 0 && n <= STORE_NAME_MAX;
}

bool store_revoke_key_valid(const char *s)
{
	if (s == NULL || strnlen(s, STORE_REVOKE_KEY_LEN + 1) != STORE_REVOKE_KEY_LEN ||
	    s[19] != '#')
		return false;
	for (int i = 0; i < 19; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return lower_hex(s + 20, 64);
}

bool store_revoke_valid(const struct store_revoke_req *r)
{
	if (!store_session_key_valid(r->session))
		return false;
	switch (r->op) {
	case STORE_REVOKE_READ:
		return r->limit <= STORE_REVOKE_PAGE &&
		       (r->cursor == NULL || r->cursor[0] == '\0' ||
			store_revoke_key_valid(r->cursor));
	case STORE_REVOKE_DELETE:
		return name_ok(r->name) && r->fence > 0;
	}
	return false;
}

bool store_revoke_end_valid(const struct store_req *r)
{
	bool op = (r->op == STORE_RELEASE && r->token > 0 && !r->unconditional) ||
		  (r->op == STORE_ADOPT && r->token > 0);
	return op && name_ok(r->name) && store_session_key_valid(r->revoke_session);
}

struct store_call *store_revoke_submit(struct store *s, const struct store_revoke_req *req,
				       store_revoke_cb cb, void *arg)
{
	if (s->ops->revoke_submit == NULL || !store_revoke_valid(req))
		return NULL;
	return s->ops->revoke_submit(s, req, cb, arg);
}

void store_revoke_key(const char *name, int64_t fence, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	/* cannot fail for SHA-256 in a running process; zeros if it did */
	if (!EVP_Digest(name, strlen(name), md, &n, EVP_sha256(), NULL) || n != 32)
		memset(md, 0, 32);
	snprintf(buf, 21, "%019" PRId64 "#", fence);
	for (int i = 0; i < 32; i++) {
		buf[20 + 2 * i] = hex[md[i] >> 4];
		buf[21 + 2 * i] = hex[md[i] & 15];
	}
	buf[STORE_REVOKE_KEY_LEN] = '\0';
}

void store_revoke_pk(const char *session, char *buf)
{
	snprintf(buf, STORE_REVOKE_PK_MAX + 1, "REVOKE#%s", session);
}

int64_t store_revoke_ttl(int64_t now_ms)
{
	return store_session_ttl(now_ms, STORE_SESSION_LEASE_MAX);
}
