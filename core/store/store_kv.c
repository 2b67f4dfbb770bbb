/*
 * store_kv: the dispatch of keyspace commits and the checks and copy every
 * store shares (see store_kv.h).
 */
#include "core/store/store_kv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool id_ok(const char *s)
{
	size_t n = s != NULL ? strnlen(s, STORE_ID_MAX + 1) : 0;
	if (n == 0 || n > STORE_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

static bool op_valid(const struct store_kv_op *o, char *msg)
{
	size_t n = o->name != NULL ? strnlen(o->name, STORE_NAME_MAX + 1) : 0;
	if (n == 0 || n > STORE_NAME_MAX) {
		snprintf(msg, STORE_MSG_MAX, "a key is 1 to %d bytes", STORE_NAME_MAX);
		return false;
	}
	if ((o->seen == KV_SEEN_VERSION && !id_ok(o->rvn)) ||
	    (o->seen == KV_SEEN_HOLDER && !id_ok(o->owner)) || (unsigned)o->seen > KV_SEEN_HOLDER) {
		snprintf(msg, STORE_MSG_MAX, "a bad condition on key %.64s", o->name);
		return false;
	}
	if ((unsigned)o->write > KV_W_FREE ||
	    (o->write == KV_W_SET &&
	     (!id_ok(o->new_owner) || !id_ok(o->new_rvn) || o->lease_ms <= 0 ||
	      (o->hash != NULL && strnlen(o->hash, STORE_HASH_MAX + 1) > STORE_HASH_MAX)))) {
		snprintf(msg, STORE_MSG_MAX, "a bad write of key %.64s", o->name);
		return false;
	}
	return true;
}

bool store_kv_valid(const struct store_kv_req *req, char *msg)
{
	if (req->n == 0 || req->n > STORE_KV_MAX_OPS || req->ops == NULL) {
		snprintf(msg, STORE_MSG_MAX, "a commit has 1 to %d keys", STORE_KV_MAX_OPS);
		return false;
	}
	for (unsigned i = 0; i < req->n; i++) {
		if (!op_valid(&req->ops[i], msg))
			return false;
		for (unsigned j = 0; j < i; j++)
			if (strcmp(req->ops[i].name, req->ops[j].name) == 0) {
				snprintf(msg, STORE_MSG_MAX, "key %.64s twice in a commit",
					 req->ops[i].name);
				return false;
			}
	}
	return true;
}

static size_t sz(const char *s)
{
	return s != NULL ? strlen(s) + 1 : 0;
}

/* Copies s into *at, returns the copy (NULL stays NULL). */
static const char *put(char **at, const char *s)
{
	if (s == NULL)
		return NULL;
	size_t n = strlen(s) + 1;
	memcpy(*at, s, n);
	const char *r = *at;
	*at += n;
	return r;
}

struct store_kv_req *store_kv_copy(const struct store_kv_req *req)
{
	size_t bytes = sizeof(*req) + req->n * sizeof(struct store_kv_op);
	for (unsigned i = 0; i < req->n; i++) {
		const struct store_kv_op *o = &req->ops[i];
		bytes += sz(o->name) + sz(o->rvn) + sz(o->owner) + sz(o->new_owner) +
			 sz(o->new_rvn) + sz(o->hash);
	}
	struct store_kv_req *c = malloc(bytes);
	if (c == NULL)
		return NULL;
	struct store_kv_op *ops = (struct store_kv_op *)(c + 1);
	char *at = (char *)(ops + req->n);
	*c = *req;
	c->ops = ops;
	for (unsigned i = 0; i < req->n; i++) {
		ops[i] = req->ops[i];
		ops[i].name = put(&at, req->ops[i].name);
		ops[i].rvn = put(&at, req->ops[i].rvn);
		ops[i].owner = put(&at, req->ops[i].owner);
		ops[i].new_owner = put(&at, req->ops[i].new_owner);
		ops[i].new_rvn = put(&at, req->ops[i].new_rvn);
		ops[i].hash = put(&at, req->ops[i].hash);
	}
	return c;
}

struct store_call *store_kv_commit(struct store *s, const struct store_kv_req *req, store_kv_cb cb,
				   void *arg)
{
	char msg[STORE_MSG_MAX];
	if (s->ops->kv_commit == NULL || !store_kv_valid(req, msg))
		return NULL;
	return s->ops->kv_commit(s, req, cb, arg);
}
