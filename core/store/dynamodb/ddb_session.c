/*
 * ddb_session: session items (core/store/store_session.h) on DynamoDB — a
 * CREATE, BEAT or KILL is one conditional UpdateItem answering the item
 * after (ALL_NEW) or, refused, as it was (ALL_OLD); a READ is one strongly
 * consistent BatchGetItem of the session and a lock item, asked again for
 * its UnprocessedKeys. On the calls of store_dynamodb.c (retries,
 * deadline, metrics); a BEAT is sent as urgently as a renewal.
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_expr.h"
#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_session.h"
#include "core/trace.h"

#define SORT_KEY	"LOCK" /* the sort key of every lock-table item */
#define UNPROCESSED_MAX 8      /* BatchGetItem rounds for UnprocessedKeys */

/* A request in flight and what it has read so far. */
struct ddb_sess {
	struct store_session_req req; /* strings point into the copies */
	char replica[STORE_SESSION_REPLICA_MAX + 1], incarnation[STORE_SESSION_INC_LEN + 1];
	char rvn[STORE_ID_MAX + 1], seen_rvn[STORE_ID_MAX + 1], by[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1], addr[STORE_SESSION_ADDR_MAX + 1];
	char key[STORE_SESSION_KEY_MAX + 1];
	char lock_key[5 + STORE_NAME_MAX + 1]; /* READ: LOCK#<name> */
	unsigned rounds;
	struct store_session_result res; /* READ: what came back so far */
	char name[STORE_NAME_MAX + 1];
};

/* ---- building ---- */

static void add_key(cJSON *obj, const struct ddb_keys *keys, const char *pk)
{
	ddb_add_str(obj, keys->pk, "S", pk);
	if (keys->sk != NULL)
		ddb_add_str(obj, keys->sk, "S", SORT_KEY);
}

/* The condition of each write (store_session.h). */
static const char *const cond_of[] = {
	[STORE_SESSION_CREATE] = "attribute_not_exists(#pk)",
	[STORE_SESSION_BEAT] = "attribute_exists(#pk) AND attribute_not_exists(#d) AND "
			       "(attribute_not_exists(#bs) OR #bs < :bs)",
	[STORE_SESSION_KILL] = "#r = :sr AND attribute_not_exists(#d)",
};

/* The update of a write into buf: holder and addr only when given, the
 * TTL when the table has one and the request one. */
static void update_text(const struct store_session_req *r, bool ttl, char *buf, size_t cap)
{
	const char *x = ttl ? ", #x = :x" : "";
	if (r->op == STORE_SESSION_KILL)
		snprintf(buf, cap, "SET #d = :by");
	else if (r->op == STORE_SESSION_BEAT)
		snprintf(buf, cap, "SET #r = :r, #bs = :bs, #m = :m%s", x);
	else
		snprintf(buf, cap, "SET #ty = :ty, #r = :r, #bs = :bs, #m = :m, #rs = :zero%s%s%s",
			 r->holder != NULL ? ", #h = :h" : "", r->addr != NULL ? ", #a = :a" : "",
			 x);
}

/* The names and values the expressions (text) use, into u. */
static void write_attrs(cJSON *u, const char *text, const struct ddb_keys *keys,
			const struct store_session_req *r)
{
	static const char *const names[][2] = {
		{"#ty", "_type"},  {"#r", "rvn"},    {"#bs", "beatSeq"}, {"#m", "maxLeaseMs"},
		{"#rs", "revSeq"}, {"#h", "holder"}, {"#a", "addr"},	 {"#d", "dead"}};
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ddb_uses(text, names[i][0]))
			cJSON_AddStringToObject(n, names[i][0], names[i][1]);
	if (ddb_uses(text, "#pk"))
		cJSON_AddStringToObject(n, "#pk", keys->pk);
	if (ddb_uses(text, "#x"))
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	if (ddb_uses(text, ":ty"))
		ddb_add_str(v, ":ty", "S", "SESSION");
	if (ddb_uses(text, ":zero"))
		ddb_add_num(v, ":zero", 0);
	if (ddb_uses(text, ":h"))
		ddb_add_str(v, ":h", "S", r->holder);
	if (ddb_uses(text, ":a"))
		ddb_add_str(v, ":a", "S", r->addr);
	if (ddb_uses(text, ":r"))
		ddb_add_str(v, ":r", "S", r->rvn);
	if (ddb_uses(text, ":bs"))
		ddb_add_num(v, ":bs", r->seq);
	if (ddb_uses(text, ":m"))
		ddb_add_num(v, ":m", r->max_lease_ms);
	if (ddb_uses(text, ":sr"))
		ddb_add_str(v, ":sr", "S", r->seen_rvn);
	if (ddb_uses(text, ":by"))
		ddb_add_str(v, ":by", "S", r->by);
	if (ddb_uses(text, ":x"))
		ddb_add_num(v, ":x", r->ttl);
}

/* The UpdateItem of a CREATE, BEAT or KILL. */
static cJSON *build_write(const struct ddb_keys *keys, const struct ddb_sess *ss)
{
	const struct store_session_req *r = &ss->req;
	bool ttl = keys->ttl_attr != NULL && r->ttl > 0;
	char set[160], text[320];
	update_text(r, ttl, set, sizeof(set));
	snprintf(text, sizeof(text), "%s %s", cond_of[r->op], set);
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "TableName", keys->table);
	add_key(cJSON_AddObjectToObject(u, "Key"), keys, ss->key);
	cJSON_AddStringToObject(u, "ConditionExpression", cond_of[r->op]);
	cJSON_AddStringToObject(u, "UpdateExpression", set);
	write_attrs(u, text, keys, r);
	cJSON_AddStringToObject(u, "ReturnValues", "ALL_NEW");
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	return u;
}

/* A BatchGetItem of the READ's items not come back yet. */
static cJSON *build_read(const struct ddb_keys *keys, const struct ddb_sess *ss)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *t =
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "RequestItems"), keys->table);
	cJSON *list = cJSON_AddArrayToObject(t, "Keys");
	const char *pks[2] = {ss->res.session_read ? NULL : ss->key,
			      ss->res.lock_read ? NULL : ss->lock_key};
	for (int i = 0; i < 2; i++) {
		if (pks[i] == NULL)
			continue;
		cJSON *key = cJSON_CreateObject();
		add_key(key, keys, pks[i]);
		cJSON_AddItemToArray(list, key);
	}
	cJSON_AddBoolToObject(t, "ConsistentRead", 1);
	return root;
}

/* ---- reading answers ---- */

static const char *attr(const cJSON *item, const char *name, const char *type)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, name), type));
}

/* attr's string into buf ("" when absent); false when too long */
static bool take_str(const cJSON *item, const char *name, char *buf, size_t cap)
{
	const char *s = attr(item, name, "S");
	if (s == NULL)
		s = "";
	return (size_t)snprintf(buf, cap, "%s", s) < cap;
}

/* attr's number into *v (0 when absent); false when it is no int64 */
static bool take_num(const cJSON *item, const char *name, int64_t *v)
{
	const char *s = name != NULL ? attr(item, name, "N") : NULL;
	*v = 0;
	return s == NULL || ddb_parse_int64(s, v);
}

/* A DynamoDB item (NULL: none) as a session item; false with err when an
 * attribute of it is malformed. */
static bool parse_session(const cJSON *item, const char *ttl_attr, struct session_item *out,
			  char *err)
{
	memset(out, 0, sizeof(*out));
	if (item == NULL)
		return true;
	out->exists = true;
	out->has_dead = attr(item, "dead", "S") != NULL;
	bool ok = take_str(item, "_type", out->type, sizeof(out->type)) &&
		  take_str(item, "rvn", out->rvn, sizeof(out->rvn)) &&
		  take_str(item, "holder", out->holder, sizeof(out->holder)) &&
		  take_str(item, "addr", out->addr, sizeof(out->addr)) &&
		  take_str(item, "dead", out->dead, sizeof(out->dead)) &&
		  take_num(item, "maxLeaseMs", &out->max_lease_ms) &&
		  take_num(item, "revSeq", &out->rev_seq) && take_num(item, ttl_attr, &out->ttl) &&
		  take_num(item, "beatSeq", &out->beat_seq);
	if (ok && attr(item, "beatSeq", "N") == NULL)
		out->beat_seq = -1;
	if (!ok)
		snprintf(err, DDB_ERR_MAX, "a session item with a malformed attribute");
	return ok;
}

/* c's request (of dop) as a child span of the session request's span,
 * named as store_dynamodb.c names a lock request's. */
static void call_span(struct store_call *c, enum ddb_op dop)
{
	c->span = trace_child(c->sess->req.span, ddb_op_name(dop), TRACE_CLIENT);
	trace_str(c->span, "db.system", "dynamodb");
	trace_str(c->span, "db.operation.name", ddb_op_name(dop));
	trace_str(c->span, "db.collection.name", c->ds->table);
}

static void deliver(struct store_call *c, struct store_session_result *r)
{
	c->ds->base.in_flight--;
	c->sess_cb(c->arg, r);
}

/* A CREATE's, BEAT's or KILL's answer: the item after (Attributes), or
 * as it was (a refusal's Item). */
static void write_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct store_session_result r = {.status = res->status, .error_type = res->error_type};
	snprintf(r.message, sizeof(r.message), "%s", res->message);
	if (res->status == STORE_OK || res->status == STORE_REFUSED) {
		cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(
			root, res->status == STORE_OK ? "Attributes" : "Item");
		char err[DDB_ERR_MAX];
		if (root == NULL || (res->status == STORE_OK && item == NULL) ||
		    !parse_session(item, c->ds->keys.ttl_attr, &r.session, err)) {
			r.status = STORE_FATAL;
			r.error_type = "BadResponse";
			snprintf(r.message, sizeof(r.message),
				 "DynamoDB UpdateItem on table %.64s: %.150s", c->ds->table,
				 root == NULL	? "the answer is no JSON"
				 : item == NULL ? "no Attributes in the answer"
						: err);
		}
		cJSON_Delete(root);
	}
	deliver(c, &r);
}

/* An item of a BatchGetItem's Responses into ss; false with err when it
 * is neither of the two asked for, or malformed. */
static bool take_read(struct ddb_sess *ss, const cJSON *it, const struct ddb_keys *keys, char *err)
{
	const char *pk = attr(it, keys->pk, "S");
	if (pk != NULL && strcmp(pk, ss->key) == 0) {
		ss->res.session_read = true;
		return parse_session(it, keys->ttl_attr, &ss->res.session, err);
	}
	if (pk != NULL && strcmp(pk, ss->lock_key) == 0) {
		ss->res.lock_read = true;
		return ddb_parse_item(it, keys->ttl_attr, &ss->res.lock, err);
	}
	snprintf(err, DDB_ERR_MAX, "an item that was not asked for");
	return false;
}

/* Marks read each key asked for and not in UnprocessedKeys (one that did
 * not come back does not exist); false when some are left. */
static bool mark_read(struct ddb_sess *ss, const cJSON *root, const struct ddb_keys *keys)
{
	bool left[2] = {false, false};
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "UnprocessedKeys"), keys->table);
	const cJSON *k;
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(t, "Keys"))
	{
		const char *pk = attr(k, keys->pk, "S");
		left[0] |= pk != NULL && strcmp(pk, ss->key) == 0;
		left[1] |= pk != NULL && strcmp(pk, ss->lock_key) == 0;
	}
	ss->res.session_read |= !left[0];
	ss->res.lock_read |= !left[1];
	return !left[0] && !left[1];
}

/* The answer's items into ss; false with err when malformed. */
static bool take_answer(struct ddb_sess *ss, const cJSON *root, const struct ddb_keys *keys,
			char *err)
{
	const cJSON *items = ddb_batch_items(root, keys->table);
	if (items == NULL) {
		snprintf(err, DDB_ERR_MAX, "the answer is no BatchGetItem's");
		return false;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
	{
		if (!take_read(ss, it, keys, err))
			return false;
	}
	return true;
}

static void read_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_sess *ss = c->sess;
	struct ddb_store *ds = c->ds;
	if (res->status != STORE_OK) {
		ss->res.status = res->status == STORE_REFUSED ? STORE_FATAL : res->status;
		ss->res.error_type = res->error_type;
		snprintf(ss->res.message, sizeof(ss->res.message), "%s", res->message);
		deliver(c, &ss->res);
		return;
	}
	char err[DDB_ERR_MAX];
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	bool ok = root != NULL && take_answer(ss, root, &ds->keys, err);
	bool done = ok && mark_read(ss, root, &ds->keys);
	cJSON_Delete(root);
	if (!ok) {
		ss->res.status = STORE_FATAL;
		ss->res.error_type = "BadResponse";
		snprintf(ss->res.message, sizeof(ss->res.message),
			 "DynamoDB BatchGetItem on table %.64s: %.150s", ds->table,
			 root == NULL ? "the answer is no JSON" : err);
	} else if (!done && ++ss->rounds < UNPROCESSED_MAX) {
		/* the same call goes on: the caller's handle stays valid */
		cJSON *next = build_read(&ds->keys, ss);
		char *text = next != NULL ? cJSON_PrintUnformatted(next) : NULL;
		cJSON_Delete(next);
		ds->base.in_flight--; /* ddbs_go counts it again */
		call_span(c, DDB_BATCH_GET_ITEM);
		ddbs_continue(c, DDB_BATCH_GET_ITEM, read_done, text,
			      text != NULL ? strlen(text) : 0);
		return;
	} else {
		ss->res.status = done ? STORE_OK : STORE_TRANSIENT;
		ss->res.error_type = done ? NULL : "UnprocessedKeys";
		snprintf(ss->res.message, sizeof(ss->res.message), "%s",
			 done ? "" : "DynamoDB BatchGetItem: keys left unprocessed after retries");
	}
	deliver(c, &ss->res);
}

/* ---- the store operation ---- */

static struct ddb_sess *sess_new(const struct store_session_req *req)
{
	struct ddb_sess *ss = calloc(1, sizeof(*ss));
	if (ss == NULL)
		return NULL;
	ss->req = *req;
#define COPY(f)                                                                                    \
	ss->req.f = req->f != NULL ? (snprintf(ss->f, sizeof(ss->f), "%s", req->f), ss->f) : NULL
	COPY(replica);
	COPY(incarnation);
	COPY(rvn);
	COPY(seen_rvn);
	COPY(by);
	COPY(holder);
	COPY(addr);
	COPY(name);
#undef COPY
	store_session_key(&ss->req, ss->key);
	if (req->name != NULL)
		snprintf(ss->lock_key, sizeof(ss->lock_key), "LOCK#%s", req->name);
	return ss;
}

/* Starts a call of dop with root's body, owning ss from then on; urgent
 * (a BEAT) is sent as a renewal is. NULL on out-of-memory. */
static struct store_call *start(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done,
				cJSON *root, struct ddb_sess *ss, store_session_cb cb, void *arg)
{
	char *body = root != NULL ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	struct store_call *c = ddbs_new_call(ds, dop, done, ds->cfg.op_timeout_ms);
	if (c == NULL) {
		free(body);
		free(ss);
		return NULL;
	}
	c->sess = ss;
	c->sess_cb = cb;
	c->arg = arg;
	c->raw = true;
	c->urgent = ss->req.op == STORE_SESSION_BEAT;
	call_span(c, dop);
	ddbs_go(c, body, body != NULL ? strlen(body) : 0);
	return c;
}

struct store_call *ddbs_session_submit(struct store *s, const struct store_session_req *req,
				       store_session_cb cb, void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct ddb_sess *ss = sess_new(req);
	if (ss == NULL)
		return NULL;
	s->requests[store_session_counted_as(req->op)]++;
	if (req->op == STORE_SESSION_READ)
		return start(ds, DDB_BATCH_GET_ITEM, read_done, build_read(&ds->keys, ss), ss, cb,
			     arg);
	return start(ds, DDB_UPDATE_ITEM, write_done, build_write(&ds->keys, ss), ss, cb, arg);
}
