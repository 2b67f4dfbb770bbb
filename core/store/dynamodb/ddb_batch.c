/*
 * ddb_batch: store_batch_read (core/store/store_batch.h) on DynamoDB — one
 * strongly consistent BatchGetItem of the lock items asked for, its
 * UnprocessedKeys asked again in the same call (as ddb_session.c's READ),
 * at most BATCH_ROUNDS rounds. On the calls of store_dynamodb.c (retries,
 * deadline, metrics). An answer in the plain form is read from its bytes
 * (ddb_fast_batch), any other by cJSON, to the same result.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_expr.h"
#include "core/store/dynamodb/ddb_json_int.h"
#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_batch.h"

#define BATCH_ROUNDS 8 /* BatchGetItem rounds for UnprocessedKeys */

/* A BatchGetItem of the entries not read yet; NULL on out-of-memory. */
static char *build(const struct ddb_keys *keys, const struct store_batch_result *res)
{
	const char *names[STORE_BATCH_MAX];
	unsigned n = 0;
	for (unsigned i = 0; i < res->count; i++)
		if (!res->entries[i].read)
			names[n++] = res->entries[i].name;
	size_t len;
	char err[DDB_ERR_MAX];
	return ddb_build_batch_get(keys, names, n, &len, err);
}

/* The entry whose key is pk (LOCK#<name>), or NULL. The search starts
 * at *next and wraps, which leaves *next after the entry found: one
 * comparison an item when the answer keeps the request's order (DynamoDB
 * does not promise it). */
static struct store_batch_entry *entry_of(struct store_batch_result *res, const char *pk,
					  unsigned *next)
{
	if (pk == NULL || strncmp(pk, "LOCK#", 5) != 0)
		return NULL;
	for (unsigned k = 0; k < res->count; k++) {
		unsigned i = (*next + k) % res->count;
		if (strcmp(res->entries[i].name, pk + 5) == 0) {
			*next = i + 1;
			return &res->entries[i];
		}
	}
	return NULL;
}

static const char *pk_of(const cJSON *item, const struct ddb_keys *keys)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, keys->pk), "S"));
}

/* The answer's items into res; false with err when one is malformed or
 * was not asked for. */
static bool take_items(struct store_batch_result *res, const cJSON *root,
		       const struct ddb_keys *keys, char *err)
{
	const cJSON *items = ddb_batch_items(root, keys->table);
	if (items == NULL) {
		snprintf(err, DDB_ERR_MAX, "the answer is no BatchGetItem's");
		return false;
	}
	const cJSON *it;
	unsigned next = 0;
	cJSON_ArrayForEach(it, items)
	{
		struct store_batch_entry *e = entry_of(res, pk_of(it, keys), &next);
		if (e == NULL || e->read) {
			snprintf(err, DDB_ERR_MAX, "an item that was not asked for");
			return false;
		}
		if (!ddb_parse_item(it, keys->ttl_attr, &e->item, err))
			return false;
		e->read = true;
	}
	return true;
}

/* Marks read every entry asked for in this round and not left in
 * UnprocessedKeys (one that did not come back does not exist); false when
 * some are left. */
static bool mark_read(struct store_batch_result *res, const cJSON *root,
		      const struct ddb_keys *keys)
{
	bool left[STORE_BATCH_MAX] = {false};
	bool any = false;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "UnprocessedKeys"), keys->table);
	const cJSON *k;
	unsigned next = 0;
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(t, "Keys"))
	{
		struct store_batch_entry *e = entry_of(res, pk_of(k, keys), &next);
		if (e != NULL && !e->read) {
			left[e - res->entries] = true;
			any = true;
		}
	}
	for (unsigned i = 0; i < res->count; i++)
		res->entries[i].read |= !left[i];
	return !any;
}

/* The fast reader's items (ddb_fast_batch) into res, as take_items. */
struct fast_take {
	struct store_batch_result *res;
	const struct ddb_keys *keys;
	unsigned next; /* entry_of's */
};

/* The value of the first attribute named keys->pk when it is a string
 * (pk_of's answer on cJSON's tree), copied into buf; NULL otherwise, or
 * when it is longer than any key asked for. */
static const char *fast_pk(const struct ddb_attr *attrs, unsigned n, const char *pk, char *buf,
			   size_t cap)
{
	size_t plen = strlen(pk);
	for (unsigned i = 0; i < n; i++) {
		const struct ddb_attr *a = &attrs[i];
		if (a->nlen != plen || memcmp(a->name, pk, plen) != 0)
			continue;
		if (a->tlen != 1 || a->type[0] != 'S' || a->vlen >= cap)
			return NULL;
		memcpy(buf, a->val, a->vlen);
		buf[a->vlen] = '\0';
		return buf;
	}
	return NULL;
}

/* ddb_fast_item_fn: one item into the entry of its key, as take_items
 * does with cJSON's tree (the same messages). */
static bool fast_item(void *arg, const struct ddb_attr *attrs, unsigned n, char *err)
{
	struct fast_take *t = arg;
	char pk[5 + STORE_NAME_MAX + 2];
	struct store_batch_entry *e =
		entry_of(t->res, fast_pk(attrs, n, t->keys->pk, pk, sizeof pk), &t->next);
	if (e == NULL || e->read) {
		snprintf(err, DDB_ERR_MAX, "an item that was not asked for");
		return false;
	}
	if (!ddb_item_read(attrs, n, t->keys->ttl_attr, &e->item, err))
		return false;
	e->read = true;
	return true;
}

bool ddb_batch_answer(struct store_batch_result *res, const struct ddb_keys *keys, const char *body,
		      size_t len, bool fast, bool *done, char *err)
{
	struct fast_take t = {res, keys, 0};
	enum ddb_fast f =
		fast ? ddb_fast_batch(body, len, keys->table, fast_item, &t, err) : DDB_FAST_OTHER;
	if (f != DDB_FAST_OTHER) {
		/* UnprocessedKeys was {} or absent: every entry came back or
		 * does not exist */
		for (unsigned i = 0; f == DDB_FAST_OK && i < res->count; i++)
			res->entries[i].read = true;
		*done = f == DDB_FAST_OK;
		return *done;
	}
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	if (root == NULL)
		snprintf(err, DDB_ERR_MAX, "the answer is no JSON");
	bool ok = root != NULL && take_items(res, root, keys, err);
	*done = ok && mark_read(res, root, keys);
	cJSON_Delete(root);
	return ok;
}

static void deliver(struct store_call *c)
{
	c->ds->base.in_flight--;
	c->page_cb(c->arg);
}

static void read_done(struct store_call *c, struct store_result *r, const char *body, size_t len)
{
	struct store_batch_result *res = c->batch;
	struct ddb_store *ds = c->ds;
	if (r->status != STORE_OK) {
		res->status = r->status == STORE_REFUSED ? STORE_FATAL : r->status;
		res->error_type = r->error_type;
		snprintf(res->message, sizeof(res->message), "%s", r->message);
		deliver(c);
		return;
	}
	char err[DDB_ERR_MAX];
	bool done;
	if (!ddb_batch_answer(res, &ds->keys, body, len, true, &done, err)) {
		res->status = STORE_FATAL;
		res->error_type = "BadResponse";
		snprintf(res->message, sizeof(res->message),
			 "DynamoDB BatchGetItem on table %.64s: %.150s", ds->table, err);
	} else if (!done && ++c->limit < BATCH_ROUNDS) {
		/* the same call goes on: the caller's handle stays valid */
		char *text = build(&ds->keys, res);
		ds->base.in_flight--; /* ddbs_go counts it again */
		ddbs_continue(c, DDB_BATCH_GET_ITEM, read_done, text,
			      text != NULL ? strlen(text) : 0);
		return;
	} else if (!done) {
		res->status = STORE_TRANSIENT;
		res->error_type = "UnprocessedKeys";
		snprintf(res->message, sizeof(res->message),
			 "DynamoDB BatchGetItem: keys left unprocessed after retries");
	}
	deliver(c);
}

/* store_batch_read has checked res. */
struct store_call *ddbs_batch_read(struct store *s, struct store_batch_result *res,
				   void (*cb)(void *arg), void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	char *body = build(&ds->keys, res);
	struct store_call *c =
		ddbs_new_call(ds, DDB_BATCH_GET_ITEM, read_done, ds->cfg.op_timeout_ms);
	if (c == NULL) {
		free(body);
		return NULL;
	}
	c->batch = res;
	c->page_cb = cb;
	c->arg = arg;
	c->limit = 0;
	c->raw = true;
	c->urgent = false;
	s->requests[STORE_READ]++;
	ddbs_go(c, body, body != NULL ? strlen(body) : 0);
	return c;
}
