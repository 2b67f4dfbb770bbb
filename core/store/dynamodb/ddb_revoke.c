/*
 * ddb_revoke: revocations (core/store/store_revoke.h) on DynamoDB.
 *
 * An ending with .revoke_session is one TransactWriteItems with a
 * ClientRequestToken made once per request (a retry applies it once):
 * the lock's Update, built by ddb_json.c exactly as without a revocation
 * (ReturnValues taken off: a transaction has none), the entry (a Put of
 * its item with a sort key; an ADD to the REVOKE item's set without), and
 * the session's ADD revSeq 1 on attribute_exists(<partition key>). Its
 * CancellationReasons say which part refused. A transaction answers no
 * item: OK gives the item the write made, as far as the write and its
 * condition fix it (made); a refusal for the session's absence reads the
 * lock item back (GetItem, strongly consistent) in the same call
 * (ddbs_continue: the caller's handle stays valid).
 *
 * READ is one strongly consistent Query (sort key) or GetItem (partition
 * key only); DELETE one DeleteItem or UpdateItem. On the calls of
 * store_dynamodb.c (retries, deadline, metrics).
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_expr.h"
#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_revoke.h"

#define SORT_KEY  "LOCK" /* the sort key of a session item */
#define SET_ATTR  "revs" /* the partition-key-only item's set */
#define ENTRY_MAX (STORE_REVOKE_KEY_LEN + 1 + STORE_NAME_MAX) /* an element of it */

/* A request in flight: an ending's, a READ's or a DELETE's. */
struct ddb_rev {
	struct store_revoke_req req; /* READ, DELETE: strings point into the copies */
	char session[STORE_SESSION_KEY_MAX + 1];
	char cursor[STORE_REVOKE_KEY_LEN + 1];
	char name[STORE_NAME_MAX + 1];
	struct store_result res; /* an ending's answer, kept over its read-back */
};

/* ---- building ---- */

static void add_pk(cJSON *obj, const struct ddb_keys *keys, const char *pk, const char *sk)
{
	ddb_add_str(obj, keys->pk, "S", pk);
	if (keys->sk != NULL)
		ddb_add_str(obj, keys->sk, "S", sk);
}

/* The partition-key-only item's element of the entry (name, fence). */
static void element(const char *name, int64_t fence, char *buf)
{
	store_revoke_key(name, fence, buf);
	snprintf(buf + STORE_REVOKE_KEY_LEN, ENTRY_MAX + 1 - STORE_REVOKE_KEY_LEN, "#%s", name);
}

/* The lock's Update of the ending: ddb_json.c's UpdateItem without its
 * ReturnValues. NULL with err on a request it refuses, or out-of-memory. */
static cJSON *lock_update(const struct ddb_keys *keys, const struct store_req *req, char *err)
{
	struct store_req plain = *req;
	plain.revoke_session = NULL;
	size_t len;
	char *body = ddb_build_request(keys, &plain, &len, err);
	cJSON *u = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	ddb_body_free(body);
	if (u == NULL) {
		if (body != NULL)
			ddb_errf(err, "out of memory building a request");
		return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(u, "ReturnValues");
	cJSON *w = cJSON_CreateObject();
	cJSON_AddItemToObject(w, "Update", u);
	return w;
}

/* The entry of the ending: a Put of its item (sort key), or an ADD of its
 * element to the session's set, bounded (partition key only). */
static cJSON *entry_write(const struct ddb_keys *keys, const struct store_req *req, int64_t ttl)
{
	char pk[STORE_REVOKE_PK_MAX + 1], key[STORE_REVOKE_KEY_LEN + 1];
	store_revoke_pk(req->revoke_session, pk);
	cJSON *w = cJSON_CreateObject(), *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "TableName", keys->table);
	if (keys->sk != NULL) {
		store_revoke_key(req->name, req->token, key);
		cJSON *it = cJSON_AddObjectToObject(x, "Item");
		add_pk(it, keys, pk, key);
		ddb_add_str(it, "_type", "S", "REVOKE");
		ddb_add_str(it, "name", "S", req->name);
		ddb_add_num(it, "fence", req->token);
		if (keys->ttl_attr != NULL)
			ddb_add_num(it, keys->ttl_attr, ttl);
		cJSON_AddItemToObject(w, "Put", x);
		return w;
	}
	char el[ENTRY_MAX + 1];
	element(req->name, req->token, el);
	add_pk(cJSON_AddObjectToObject(x, "Key"), keys, pk, NULL);
	bool t = keys->ttl_attr != NULL;
	cJSON_AddStringToObject(x, "UpdateExpression",
				t ? "SET #ty = :rt, #x = :x ADD #rv :e"
				  : "SET #ty = :rt ADD #rv :e");
	cJSON_AddStringToObject(
		x, "ConditionExpression",
		"attribute_not_exists(#rv) OR size(#rv) < :max OR contains(#rv, :el)");
	cJSON *n = cJSON_AddObjectToObject(x, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#ty", "_type");
	cJSON_AddStringToObject(n, "#rv", SET_ATTR);
	if (t)
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(x, "ExpressionAttributeValues");
	ddb_add_str(v, ":rt", "S", "REVOKE");
	cJSON *set = cJSON_AddArrayToObject(cJSON_AddObjectToObject(v, ":e"), "SS");
	cJSON_AddItemToArray(set, cJSON_CreateString(el));
	ddb_add_str(v, ":el", "S", el);
	ddb_add_num(v, ":max", STORE_REVOKE_MAX);
	if (t)
		ddb_add_num(v, ":x", ttl);
	cJSON_AddItemToObject(w, "Update", x);
	return w;
}

/* The session's ADD revSeq 1, never creating it. */
static cJSON *session_raise(const struct ddb_keys *keys, const char *session)
{
	cJSON *w = cJSON_CreateObject(), *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "TableName", keys->table);
	add_pk(cJSON_AddObjectToObject(u, "Key"), keys, session, SORT_KEY);
	cJSON_AddStringToObject(u, "UpdateExpression", "ADD #rs :one");
	cJSON_AddStringToObject(u, "ConditionExpression", "attribute_exists(#pk)");
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#rs", "revSeq");
	cJSON_AddStringToObject(n, "#pk", keys->pk);
	ddb_add_num(cJSON_AddObjectToObject(u, "ExpressionAttributeValues"), ":one", 1);
	cJSON_AddItemToObject(w, "Update", u);
	return w;
}

static char *print(cJSON *root, size_t *len)
{
	char *body = root != NULL ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	*len = body != NULL ? strlen(body) : 0;
	return body;
}

/* The TransactWriteItems of an ending: the lock (item 0), the entry (1),
 * the session (2). NULL with err. */
static char *end_body(const struct ddb_keys *keys, const struct store_req *req, int64_t ttl,
		      size_t *len, char *err)
{
	cJSON *lock = lock_update(keys, req, err);
	if (lock == NULL)
		return NULL;
	char token[33];
	store_new_id(token);
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "TransactItems");
	cJSON_AddItemToArray(list, lock);
	cJSON_AddItemToArray(list, entry_write(keys, req, ttl));
	cJSON_AddItemToArray(list, session_raise(keys, req->revoke_session));
	cJSON_AddStringToObject(root, "ClientRequestToken", token);
	char *body = print(root, len);
	if (body == NULL)
		ddb_errf(err, "out of memory building a request");
	return body;
}

/* A READ: a Query of the entries' items after the cursor (sort key), or
 * a GetItem of the set (partition key only). */
static char *read_body(const struct ddb_keys *keys, const struct store_revoke_req *r, size_t *len)
{
	char pk[STORE_REVOKE_PK_MAX + 1];
	store_revoke_pk(r->session, pk);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "TableName", keys->table);
	cJSON *n = cJSON_CreateObject();
	if (keys->sk == NULL) {
		add_pk(cJSON_AddObjectToObject(root, "Key"), keys, pk, NULL);
		cJSON_AddStringToObject(root, "ProjectionExpression", "#rv");
		cJSON_AddStringToObject(n, "#rv", SET_ATTR);
	} else {
		cJSON_AddStringToObject(root, "KeyConditionExpression", "#pk = :p");
		cJSON_AddStringToObject(root, "ProjectionExpression", "#sk, #nm, #fe");
		cJSON_AddStringToObject(n, "#pk", keys->pk);
		cJSON_AddStringToObject(n, "#sk", keys->sk);
		cJSON_AddStringToObject(n, "#nm", "name");
		cJSON_AddStringToObject(n, "#fe", "fence");
		ddb_add_str(cJSON_AddObjectToObject(root, "ExpressionAttributeValues"), ":p", "S",
			    pk);
		cJSON_AddNumberToObject(root, "Limit", r->limit);
		if (r->cursor[0] != '\0')
			add_pk(cJSON_AddObjectToObject(root, "ExclusiveStartKey"), keys, pk,
			       r->cursor);
	}
	cJSON_AddItemToObject(root, "ExpressionAttributeNames", n);
	cJSON_AddBoolToObject(root, "ConsistentRead", 1);
	return print(root, len);
}

/* A DELETE: the entry's item (sort key), or its element of the set, on
 * an item that exists (partition key only). */
static char *delete_body(const struct ddb_keys *keys, const struct store_revoke_req *r, size_t *len)
{
	char pk[STORE_REVOKE_PK_MAX + 1], key[STORE_REVOKE_KEY_LEN + 1];
	char el[ENTRY_MAX + 1];
	store_revoke_pk(r->session, pk);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "TableName", keys->table);
	if (keys->sk != NULL) {
		store_revoke_key(r->name, r->fence, key);
		add_pk(cJSON_AddObjectToObject(root, "Key"), keys, pk, key);
		return print(root, len);
	}
	element(r->name, r->fence, el);
	add_pk(cJSON_AddObjectToObject(root, "Key"), keys, pk, NULL);
	cJSON_AddStringToObject(root, "UpdateExpression", "DELETE #rv :e");
	cJSON_AddStringToObject(root, "ConditionExpression", "attribute_exists(#pk)");
	cJSON *n = cJSON_AddObjectToObject(root, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#rv", SET_ATTR);
	cJSON_AddStringToObject(n, "#pk", keys->pk);
	cJSON *set = cJSON_AddArrayToObject(
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "ExpressionAttributeValues"),
					":e"),
		"SS");
	cJSON_AddItemToArray(set, cJSON_CreateString(el));
	return print(root, len);
}

/* ---- an ending's answer ---- */

/* The item an ending's OK made, from its request (store_revoke.h). */
static void made(const struct store_req *r, struct lock_item *it)
{
	memset(it, 0, sizeof(*it));
	it->exists = it->has_fence = true;
	it->fence = r->token;
	snprintf(it->type, sizeof(it->type), "LOCK");
	if (r->op == STORE_RELEASE) {
		it->freed = r->token;
		it->freed_forced = r->forced;
		return;
	}
	it->has_owner = it->has_rvn = it->has_lease = true;
	snprintf(it->owner, sizeof(it->owner), "%s", r->owner);
	snprintf(it->rvn, sizeof(it->rvn), "%s", r->rvn);
	snprintf(it->holder, sizeof(it->holder), "%s", r->holder != NULL ? r->holder : "");
	snprintf(it->secret_hash, sizeof(it->secret_hash), "%s", r->secret_hash);
	snprintf(it->adopted_from, sizeof(it->adopted_from), "%s", r->prev_owner);
	it->lease_ms = r->lease_ms;
}

static void end_deliver(struct store_call *c, struct store_result *res)
{
	c->ds->base.in_flight--;
	c->cb(c->arg, res);
}

static void readback_done(struct store_call *c, struct store_result *res, const char *body,
			  size_t len)
{
	struct store_result *out = &c->rev->res;
	if (res->status != STORE_OK) { /* nothing was written: the caller retries */
		end_deliver(c, res);
		return;
	}
	out->item = res->item;
	end_deliver(c, out);
}

/* The part of the ending that failed for good: 0 the lock, 1 the entry,
 * 2 the session, bit by bit into *failed; false with err when one failed
 * otherwise than on its condition, or the answer has no reasons. The
 * lock's refusing item into *item. */
static bool reasons(const char *body, size_t len, const char *ttl, unsigned *failed,
		    struct lock_item *item, char *err)
{
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "CancellationReasons"), *r;
	unsigned i = 0;
	bool ok = cJSON_IsArray(list);
	*failed = 0;
	if (!ok)
		ddb_errf(err, "a cancelled transaction without CancellationReasons");
	const cJSON *each = ok ? list : (const cJSON *)NULL;
	cJSON_ArrayForEach(r, each)
	{
		const char *code =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "Code"));
		const char *msg =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "Message"));
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(r, "Item");
		if (code == NULL || strcmp(code, "None") == 0 || i > 2) {
			i++;
			continue;
		}
		if (strcmp(code, "ConditionalCheckFailed") != 0) {
			ddb_errf(err, "item %u of the transaction: %.64s: %.128s", i, code,
				 msg != NULL ? msg : "");
			ok = false;
			break;
		}
		*failed |= 1u << i;
		if (i == 0 && it != NULL && !ddb_parse_item(it, ttl, item, err)) {
			ok = false;
			break;
		}
		i++;
	}
	cJSON_Delete(root);
	return ok;
}

/* A refused ending: by the lock (its item), by the bound of the entries,
 * or by the session's absence (the lock item read back). */
static void end_refused(struct store_call *c, struct store_result *out, const char *body,
			size_t len)
{
	unsigned failed;
	char err[DDB_ERR_MAX];
	memset(&out->item, 0, sizeof(out->item));
	bool ok = reasons(body, len, c->ds->keys.ttl_attr, &failed, &out->item, err);
	if (ok && failed == 0)
		ddb_errf(err, "no part refused");
	if (!ok || failed == 0) {
		out->status = STORE_FATAL;
		out->error_type = "TransactionCanceled";
		snprintf(out->message, sizeof(out->message),
			 "DynamoDB TransactWriteItems on table %.64s: %.150s", c->ds->table, err);
	} else if (failed & 1u) {
		out->session_gone = (failed & 4u) != 0;
	} else if (failed & 2u) {
		out->status = STORE_TRANSIENT;
		out->error_type = "RevocationsFull";
		snprintf(out->message, sizeof(out->message),
			 "the session has its most revocations pending (%d): try again once its "
			 "holder has acted on them",
			 STORE_REVOKE_MAX);
	} else {
		out->session_gone = true;
		struct store_req read = {.op = STORE_READ, .name = c->rev->name};
		size_t n = 0;
		char *b = ddb_build_request(&c->ds->keys, &read, &n, err);
		c->raw = false;
		c->op = STORE_READ;	 /* its answer's Item read as a lock item */
		c->ds->base.in_flight--; /* ddbs_go counts it again */
		c->ds->base.requests[STORE_READ]++;
		ddbs_continue(c, DDB_GET_ITEM, readback_done, b, n);
		return;
	}
	end_deliver(c, out);
}

static void end_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct store_result *out = &c->rev->res;
	out->status = res->status;
	out->error_type = res->error_type;
	snprintf(out->message, sizeof(out->message), "%s", res->message);
	if (res->status == STORE_REFUSED) {
		out->message[0] = '\0';
		end_refused(c, out, body, len);
		return;
	}
	if (res->status != STORE_OK)
		out->item = res->item;
	end_deliver(c, out);
}

/* The ending's OK item is made at submit time (made): it is kept in the
 * call's copy. */
struct store_call *ddbs_revoke_end(struct store *s, const struct store_req *req, store_cb cb,
				   void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct ddb_rev *rv = calloc(1, sizeof(*rv));
	struct store_call *c = rv != NULL ? ddbs_new_call(ds, DDB_TRANSACT_WRITE_ITEMS, end_done,
							  ds->cfg.op_timeout_ms)
					  : NULL;
	if (c == NULL) {
		free(rv);
		return NULL;
	}
	snprintf(rv->name, sizeof(rv->name), "%s", req->name);
	made(req, &rv->res.item);
	c->rev = rv;
	c->cb = cb;
	c->arg = arg;
	c->op = STORE_TRANSACT; /* its cancellation's reasons read, item by item */
	c->raw = true;
	c->urgent = req->op == STORE_RELEASE; /* as a release is */
	c->span = trace_child(req->span, "TransactWriteItems", TRACE_CLIENT);
	trace_str(c->span, "db.system", "dynamodb");
	trace_str(c->span, "db.operation.name", "TransactWriteItems");
	trace_str(c->span, "db.collection.name", ds->table);
	s->requests[req->op]++;
	char err[DDB_ERR_MAX];
	size_t len = 0;
	int64_t now = clock_wall_ms(ds->clock) + ds->stats.clock_offset_ms;
	char *body = end_body(&ds->keys, req, store_revoke_ttl(now), &len, err);
	if (body == NULL) {
		ds->base.in_flight++;
		c->res.status = STORE_FATAL;
		c->res.error_type = "InvalidRequest";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB %s on table %.64s: %.150s", store_op_name(req->op), ds->table,
			 err);
		ddbs_defer(c);
		return c;
	}
	ddbs_go(c, body, len);
	return c;
}

/* ---- READ and DELETE ---- */

static void rev_deliver(struct store_call *c, struct store_revoke_result *r)
{
	c->ds->base.in_flight--;
	c->rev_cb(c->arg, r);
}

static void rev_fail(struct store_revoke_result *r, const char *table, const char *op,
		     const char *why)
{
	r->status = STORE_FATAL;
	r->error_type = "BadResponse";
	r->count = 0;
	r->cursor[0] = '\0';
	snprintf(r->message, sizeof(r->message), "DynamoDB %s on table %.64s: %.150s", op, table,
		 why);
}

/* An entry's item of a Query into e; false when it is no entry. */
static bool take_item(const cJSON *it, const struct ddb_keys *keys, struct store_revoke_entry *e)
{
	const char *sk = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(it, keys->sk), "S"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(it, "name"), "S"));
	const char *fence = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(it, "fence"), "N"));
	if (!store_revoke_key_valid(sk) || name == NULL || name[0] == '\0' ||
	    strlen(name) > STORE_NAME_MAX || fence == NULL || !ddb_parse_int64(fence, &e->fence) ||
	    e->fence <= 0)
		return false;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return true;
}

/* A Query's page into r (entries in buf, room for limit). */
static bool take_query(const cJSON *root, const struct ddb_keys *keys, unsigned limit,
		       struct store_revoke_entry *buf, struct store_revoke_result *r)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "Items"), *it;
	if (!cJSON_IsArray(items) || (unsigned)cJSON_GetArraySize(items) > limit)
		return false;
	cJSON_ArrayForEach(it, items)
	{
		if (!take_item(it, keys, &buf[r->count++]))
			return false;
	}
	const cJSON *last = cJSON_GetObjectItemCaseSensitive(root, "LastEvaluatedKey");
	const char *sk = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(last, keys->sk), "S"));
	if (last != NULL && !store_revoke_key_valid(sk))
		return false;
	snprintf(r->cursor, sizeof(r->cursor), "%s", last != NULL ? sk : "");
	return true;
}

static int by_key(const void *a, const void *b)
{
	return strncmp(*(const char *const *)a, *(const char *const *)b, STORE_REVOKE_KEY_LEN);
}

/* An element of the set into e; false when it is none. */
static bool take_element(const char *s, struct store_revoke_entry *e)
{
	char key[STORE_REVOKE_KEY_LEN + 1];
	size_t n = strlen(s);
	if (n < STORE_REVOKE_KEY_LEN + 2 || n > ENTRY_MAX || s[STORE_REVOKE_KEY_LEN] != '#')
		return false;
	memcpy(key, s, STORE_REVOKE_KEY_LEN);
	key[STORE_REVOKE_KEY_LEN] = '\0';
	char digits[20];
	memcpy(digits, s, 19);
	digits[19] = '\0';
	const char *d = digits;
	while (*d == '0' && d[1] != '\0')
		d++;
	if (!store_revoke_key_valid(key) || !ddb_parse_int64(d, &e->fence) || e->fence <= 0)
		return false;
	snprintf(e->name, sizeof(e->name), "%s", s + STORE_REVOKE_KEY_LEN + 1);
	return true;
}

/* The page of a GetItem's set after cursor, at most limit, in key order. */
static bool take_set(const cJSON *root, const char *cursor, unsigned limit,
		     struct store_revoke_entry *buf, struct store_revoke_result *r)
{
	const cJSON *ss = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "Item"),
						 SET_ATTR),
		"SS");
	int n = cJSON_IsArray(ss) ? cJSON_GetArraySize(ss) : 0;
	const char **els = n > 0 ? calloc((size_t)n, sizeof(*els)) : NULL;
	if (n > 0 && els == NULL)
		return false;
	const cJSON *e;
	int k = 0;
	const cJSON *each = n > 0 ? ss : (const cJSON *)NULL;
	cJSON_ArrayForEach(e, each)
	{
		els[k] = cJSON_GetStringValue(e);
		if (els[k++] == NULL) {
			free(els);
			return false;
		}
	}
	qsort(els, (size_t)n, sizeof(*els), by_key);
	int from = 0;
	while (from < n && cursor[0] != '\0' && by_key(&els[from], &cursor) <= 0)
		from++;
	bool ok = true;
	for (int i = from; ok && i < n && r->count < limit; i++)
		ok = take_element(els[i], &buf[r->count++]);
	if (ok && from + (int)r->count < n)
		snprintf(r->cursor, sizeof(r->cursor), "%.*s", STORE_REVOKE_KEY_LEN,
			 els[from + r->count - 1]);
	free(els);
	return ok;
}

static void read_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_rev *rv = c->rev;
	const struct ddb_keys *keys = &c->ds->keys;
	const char *op = keys->sk != NULL ? "Query" : "GetItem";
	struct store_revoke_result r = {.status = res->status, .error_type = res->error_type};
	snprintf(r.message, sizeof(r.message), "%s", res->message);
	if (res->status == STORE_REFUSED)
		r.status = STORE_FATAL;
	if (res->status != STORE_OK) {
		rev_deliver(c, &r);
		return;
	}
	struct store_revoke_entry *buf = calloc(rv->req.limit, sizeof(*buf));
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	bool ok = buf != NULL && root != NULL &&
		  (keys->sk != NULL ? take_query(root, keys, rv->req.limit, buf, &r)
				    : take_set(root, rv->req.cursor, rv->req.limit, buf, &r));
	cJSON_Delete(root);
	if (!ok)
		rev_fail(&r, c->ds->table, op,
			 buf == NULL ? "out of memory" : "the answer holds no revocations");
	r.entries = buf;
	rev_deliver(c, &r);
	free(buf);
}

static void delete_done(struct store_call *c, struct store_result *res, const char *body,
			size_t len)
{
	/* refused: the partition-key-only item is not there, nor the entry */
	struct store_revoke_result r = {.status = res->status == STORE_REFUSED ? STORE_OK
									       : res->status,
					.error_type = res->error_type};
	if (r.status != STORE_OK)
		snprintf(r.message, sizeof(r.message), "%s", res->message);
	rev_deliver(c, &r);
}

struct store_call *ddbs_revoke_submit(struct store *s, const struct store_revoke_req *req,
				      store_revoke_cb cb, void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct ddb_rev *rv = calloc(1, sizeof(*rv));
	if (rv == NULL)
		return NULL;
	rv->req = *req;
	rv->req.limit = req->limit != 0 ? req->limit : STORE_REVOKE_PAGE;
	snprintf(rv->session, sizeof(rv->session), "%s", req->session);
	rv->req.session = rv->session;
	snprintf(rv->cursor, sizeof(rv->cursor), "%s", req->cursor != NULL ? req->cursor : "");
	rv->req.cursor = rv->cursor;
	snprintf(rv->name, sizeof(rv->name), "%s", req->name != NULL ? req->name : "");
	rv->req.name = rv->name;
	bool read = req->op == STORE_REVOKE_READ;
	enum ddb_op dop = read ? (ds->keys.sk != NULL ? DDB_QUERY : DDB_GET_ITEM)
			       : (ds->keys.sk != NULL ? DDB_DELETE_ITEM : DDB_UPDATE_ITEM);
	struct store_call *c =
		ddbs_new_call(ds, dop, read ? read_done : delete_done, ds->cfg.op_timeout_ms);
	if (c == NULL) {
		free(rv);
		return NULL;
	}
	c->rev = rv;
	c->rev_cb = cb;
	c->arg = arg;
	c->raw = true;
	s->requests[read ? STORE_READ : STORE_DELETE]++;
	size_t len = 0;
	char *body = read ? read_body(&ds->keys, &rv->req, &len)
			  : delete_body(&ds->keys, &rv->req, &len);
	ddbs_go(c, body, len);
	return c;
}
