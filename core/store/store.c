/*
 * store: the dispatch of the store interface and what every store shares.
 */
#include "core/store/store.h"
#include "core/store/store_revoke.h"
#include "core/store/store_tx.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

static const char *const op_names[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = "acquire",   [STORE_RENEW] = "renew",	      [STORE_RELEASE] = "release",
	[STORE_READ] = "read",	       [STORE_DELETE] = "delete",     [STORE_CHECK] = "check",
	[STORE_ANNOUNCE] = "announce", [STORE_WITHDRAW] = "withdraw", [STORE_ORPHAN] = "orphan",
	[STORE_ADOPT] = "adopt",       [STORE_SCAN] = "scan",	      [STORE_TRANSACT] = "transact",
};

static const char *const status_names[] = {
	[STORE_OK] = "ok",
	[STORE_REFUSED] = "refused",
	[STORE_TRANSIENT] = "transient",
	[STORE_NO_TABLE] = "table_not_found",
	[STORE_FATAL] = "fatal",
};

/* 1..max printable bytes (no space) */
static bool printable_ok(const char *v, size_t max)
{
	size_t n = strnlen(v, max + 1);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return false;
	return true;
}

/* A session key: "SESSION#" and more, printable, STORE_SESSION_KEY_MAX */
static bool session_key_ok(const char *k)
{
	return k != NULL && printable_ok(k, STORE_SESSION_KEY_MAX) &&
	       strncmp(k, "SESSION#", 8) == 0 && k[8] != '\0';
}

bool store_req_session_valid(const struct store_req *r)
{
	bool acquire = r->op == STORE_ACQUIRE;
	if (r->session != NULL && ((!acquire && r->op != STORE_RENEW && r->op != STORE_ADOPT) ||
				   !session_key_ok(r->session)))
		return false;
	if (r->op == STORE_RELEASE && (r->seen_rvn != NULL || r->seen_session != NULL))
		/* a lost lease's (store.h RELEASE) */
		return (r->seen_session == NULL || session_key_ok(r->seen_session)) &&
		       (r->seen_rvn == NULL || printable_ok(r->seen_rvn, STORE_ID_MAX)) &&
		       !r->unconditional && r->token == 0 && r->revoke_session == NULL &&
		       r->session == NULL && r->sess_check == STORE_SESS_CHECK_NONE &&
		       r->sess_rvn == NULL;
	if (r->seen_session != NULL &&
	    (!acquire || r->seen_rvn == NULL ||
	     (r->seen_session[0] != '\0' && !session_key_ok(r->seen_session))))
		return false;
	switch (r->sess_check) {
	case STORE_SESS_CHECK_NONE:
		return r->sess_rvn == NULL;
	case STORE_SESS_CHECK_RVN:
	case STORE_SESS_CHECK_ABSENT:
		if (!acquire || r->unconditional || r->seen_rvn == NULL || !r->has_seen_fence ||
		    !session_key_ok(r->seen_session))
			return false;
		return r->sess_check == STORE_SESS_CHECK_RVN
			       ? r->sess_rvn != NULL && printable_ok(r->sess_rvn, STORE_ID_MAX)
			       : r->sess_rvn == NULL;
	default:
		return false;
	}
}

struct store_call *store_submit(struct store *s, const struct store_req *req, store_cb cb,
				void *arg)
{
	/* the common request has no session field: three tests */
	if ((req->session != NULL || req->seen_session != NULL ||
	     req->sess_check != STORE_SESS_CHECK_NONE || req->sess_rvn != NULL ||
	     (req->op == STORE_RELEASE && req->seen_rvn != NULL)) &&
	    !store_req_session_valid(req))
		return NULL;
	if (req->revoke_session != NULL &&
	    (s->ops->revoke_submit == NULL || !store_revoke_end_valid(req)))
		return NULL;
	return s->ops->submit(s, req, cb, arg);
}

void store_cancel(struct store *s, struct store_call *call)
{
	if (call != NULL)
		s->ops->cancel(s, call);
}

struct store_call *store_transact(struct store *s, const struct store_tx_req *req, store_tx_cb cb,
				  void *arg)
{
	return s->ops->transact(s, req, cb, arg);
}

bool store_read_now(struct store *s, const char *name, struct lock_item *out)
{
	if (s->ops->read_now == NULL || !s->ops->read_now(s, name, out))
		return false;
	s->requests[STORE_READ]++;
	return true;
}

/* The checks every store shares; what a cursor means is the store's own
 * (it may refuse one it did not give). */
struct store_call *store_scan(struct store *s, const char *cursor, unsigned limit,
			      struct store_scan_result *res, void (*cb)(void *arg), void *arg)
{
	if (cursor == NULL)
		cursor = "";
	size_t n = strnlen(cursor, STORE_CURSOR_MAX + 1);
	if (s->ops->scan == NULL || limit < 1 || limit > STORE_SCAN_MAX || n > STORE_CURSOR_MAX ||
	    res == NULL || res->entries == NULL || cb == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (cursor[i] < 0x20 || cursor[i] > 0x7e)
			return NULL;
	res->status = STORE_OK;
	res->error_type = NULL;
	res->message[0] = '\0';
	res->count = 0;
	res->cursor[0] = '\0';
	struct store_call *c = s->ops->scan(s, cursor, limit, res, cb, arg);
	if (c != NULL)
		s->requests[STORE_SCAN]++;
	return c;
}

void store_cursor_of(const char *name, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strnlen(name, STORE_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = hex[(unsigned char)name[i] >> 4];
		buf[2 * i + 1] = hex[(unsigned char)name[i] & 15];
	}
	buf[2 * n] = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool store_cursor_name(const char *cursor, char *name)
{
	size_t n = strnlen(cursor, 2 * STORE_NAME_MAX + 1);
	if (n == 0 || n % 2 != 0 || n > 2 * STORE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hex_digit(cursor[2 * i]), lo = hex_digit(cursor[2 * i + 1]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return false;
		name[i] = (char)(hi << 4 | lo);
	}
	name[n / 2] = '\0';
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

bool store_acquire_applied(const char *owner, const char *rvn, const struct lock_item *item)
{
	return item->exists && item->has_owner && item->has_rvn && owner != NULL && rvn != NULL &&
	       strcmp(item->owner, owner) == 0 && strcmp(item->rvn, rvn) == 0;
}

uint64_t store_name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Ids come from a pool of random bytes refilled 16 KiB at a time: one
 * RAND_bytes call per 1024 ids instead of one per id (each call costs
 * some 6000 instructions besides its bytes: with 4 KiB that was a third
 * of the bytes' cost). */
static unsigned char pool[16384];
static size_t pool_left;

void store_new_id(char *buf)
{
	/* two hex digits per byte, from a table built once; four bytes'
	 * digits written as one word */
	static uint16_t pairs[256];
	if (pairs[255] == 0) {
		static const char hex[] = "0123456789abcdef";
		for (int i = 0; i < 256; i++) {
			char d[2] = {hex[i >> 4], hex[i & 15]};
			memcpy(&pairs[i], d, 2);
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
	for (size_t i = 0; i < 16; i += 4) {
		/* the digits of each byte stay in order (pairs[] was built in
		 * memory order); on a big-endian machine the four bytes' pairs
		 * come reversed, as random as ever */
		uint64_t w = (uint64_t)pairs[raw[i]] | (uint64_t)pairs[raw[i + 1]] << 16 |
			     (uint64_t)pairs[raw[i + 2]] << 32 | (uint64_t)pairs[raw[i + 3]] << 48;
		memcpy(buf + 2 * i, &w, 8);
	}
	buf[32] = '\0';
}
