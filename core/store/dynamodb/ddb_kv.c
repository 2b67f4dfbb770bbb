/*
 * ddb_kv: keyspace commits (core/store/store_kv.h) on DynamoDB — the
 * TransactWriteItems body (one Update or ConditionCheck per key, the
 * conditions and writes of store_kv.h), which item a cancellation names,
 * and the store operation on the calls of store_dynamodb.c.
 *
 * The body is built once per commit with its ClientRequestToken: every
 * retry of the store sends the same bytes, so DynamoDB applies a commit
 * whose answer was lost once (it keeps the token for 10 minutes).
 */
#include "core/store/dynamodb/ddb_kv.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_tx.h"

/* {"S": s} or {"N": "v"} */
static cJSON *attr_s(const char *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "S", s);
	return o;
}

static cJSON *attr_n(int64_t v)
{
	char num[24];
	snprintf(num, sizeof(num), "%lld", (long long)v);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "N", num);
	return o;
}

static void add_key(cJSON *into, const struct ddb_keys *k, const char *name)
{
	size_t n = strlen(name);
	char *pk = malloc(n + 6);
	cJSON *key = cJSON_AddObjectToObject(into, "Key");
	if (pk == NULL || key == NULL) {
		free(pk);
		return;
	}
	memcpy(pk, "LOCK#", 5);
	memcpy(pk + 5, name, n + 1);
	cJSON_AddItemToObject(key, k->pk, attr_s(pk));
	if (k->sk != NULL)
		cJSON_AddItemToObject(key, k->sk, attr_s("LOCK"));
	free(pk);
}

/* The condition of o (store_kv.h) into cond, its names and values. */
static void add_seen(const struct store_kv_op *o, char *cond, size_t cap, cJSON *names, cJSON *vals,
		     const struct ddb_keys *k)
{
	switch (o->seen) {
	case KV_SEEN_NONE:
		snprintf(cond, cap, "attribute_not_exists(#k)");
		cJSON_AddStringToObject(names, "#k", k->pk);
		break;
	case KV_SEEN_FREE:
		cJSON_AddStringToObject(names, "#k", k->pk);
		cJSON_AddStringToObject(names, "#o", "owner");
		cJSON_AddStringToObject(names, "#f", "fence");
		cJSON_AddStringToObject(names, "#sc", "scount");
		cJSON_AddStringToObject(names, "#ra", "radmit");
		cJSON_AddItemToObject(vals, ":zero", attr_n(0));
		cJSON_AddItemToObject(vals, ":str", attr_s("S"));
		/* free means no holder of either mode (a shared grant since the
		 * read raised scount) and no readers admitted (radmit a set:
		 * store_shared.h) */
		snprintf(cond, cap,
			 "attribute_exists(#k) AND attribute_not_exists(#o) AND %s AND "
			 "(attribute_not_exists(#sc) OR #sc = :zero) AND "
			 "(attribute_not_exists(#ra) OR attribute_type(#ra, :str))",
			 o->has_fence ? "#f = :sf" : "attribute_not_exists(#f)");
		if (o->has_fence)
			cJSON_AddItemToObject(vals, ":sf", attr_n(o->fence));
		break;
	case KV_SEEN_VERSION:
		cJSON_AddStringToObject(names, "#r", "rvn");
		cJSON_AddItemToObject(vals, ":sr", attr_s(o->rvn));
		if (o->alive_after > 0) {
			snprintf(cond, cap, "#r = :sr AND #er = :sr AND #e > :now");
			cJSON_AddStringToObject(names, "#er", "expRvn");
			cJSON_AddStringToObject(names, "#e", "expAt");
			cJSON_AddItemToObject(vals, ":now", attr_n(o->alive_after));
		} else {
			snprintf(cond, cap, "#r = :sr");
		}
		break;
	case KV_SEEN_HOLDER:
		snprintf(cond, cap, "#o = :so AND #f = :sf");
		cJSON_AddStringToObject(names, "#o", "owner");
		cJSON_AddStringToObject(names, "#f", "fence");
		cJSON_AddItemToObject(vals, ":so", attr_s(o->owner));
		cJSON_AddItemToObject(vals, ":sf", attr_n(o->fence));
		break;
	}
}

/* Adds name as #alias unless there already. */
static void name_as(cJSON *names, const char *alias, const char *name)
{
	if (!cJSON_HasObjectItem(names, alias))
		cJSON_AddStringToObject(names, alias, name);
}

/* The update expression of a SET or FREE write into expr. */
static void add_write(const struct store_kv_op *o, const struct ddb_keys *k, int64_t ttl,
		      char *expr, size_t cap, cJSON *names, cJSON *vals)
{
	bool has_ttl = k->ttl_attr != NULL && ttl > 0;
	if (has_ttl) {
		name_as(names, "#x", k->ttl_attr);
		cJSON_AddItemToObject(vals, ":x", attr_n(ttl));
	}
	name_as(names, "#o", "owner");
	name_as(names, "#l", "leaseMs");
	name_as(names, "#h", "holder");
	name_as(names, "#e", "expAt");
	name_as(names, "#er", "expRvn");
	name_as(names, "#hf", "hfields");
	if (o->write == KV_W_FREE) {
		snprintf(expr, cap, "REMOVE #o, #l, #h, #e, #er, #hf%s",
			 has_ttl ? " SET #x = :x" : "");
		return;
	}
	if (o->hash != NULL)
		cJSON_AddItemToObject(vals, ":wh", attr_s(o->hash));
	name_as(names, "#r", "rvn");
	name_as(names, "#t", "_type");
	cJSON_AddItemToObject(vals, ":wo", attr_s(o->new_owner));
	cJSON_AddItemToObject(vals, ":wr", attr_s(o->new_rvn));
	cJSON_AddItemToObject(vals, ":wl", attr_n(o->lease_ms));
	cJSON_AddItemToObject(vals, ":we", attr_n(o->expires_at));
	cJSON_AddItemToObject(vals, ":wt", attr_s("LOCK"));
	if (o->raise_fence) {
		name_as(names, "#f", "fence");
		cJSON_AddItemToObject(vals, ":one", attr_n(1));
	}
	snprintf(expr, cap,
		 "SET #o = :wo, #r = :wr, #er = :wr, #l = :wl, #e = :we, #t = :wt%s%s REMOVE "
		 "#h%s%s",
		 has_ttl ? ", #x = :x" : "", o->hash != NULL ? ", #hf = :wh" : "",
		 o->hash != NULL ? "" : ", #hf", o->raise_fence ? " ADD #f :one" : "");
}

static cJSON *item_of(const struct ddb_keys *k, const struct store_kv_op *o, int64_t ttl)
{
	cJSON *wrap = cJSON_CreateObject();
	cJSON *it =
		cJSON_AddObjectToObject(wrap, o->write == KV_W_CHECK ? "ConditionCheck" : "Update");
	if (it == NULL)
		return wrap;
	cJSON_AddStringToObject(it, "TableName", k->table);
	add_key(it, k, o->name);
	cJSON *names = cJSON_CreateObject(), *vals = cJSON_CreateObject();
	char cond[320], expr[240];
	add_seen(o, cond, sizeof(cond), names, vals, k);
	if (o->write != KV_W_CHECK) {
		add_write(o, k, ttl, expr, sizeof(expr), names, vals);
		cJSON_AddStringToObject(it, "UpdateExpression", expr);
	}
	cJSON_AddStringToObject(it, "ConditionExpression", cond);
	cJSON_AddItemToObject(it, "ExpressionAttributeNames", names);
	if (cJSON_GetArraySize(vals) > 0) /* DynamoDB refuses an empty map */
		cJSON_AddItemToObject(it, "ExpressionAttributeValues", vals);
	else
		cJSON_Delete(vals);
	return wrap;
}

char *ddb_build_kv(const struct ddb_keys *k, const struct store_kv_req *req, const char *token,
		   size_t *len, char *err)
{
	char msg[STORE_MSG_MAX];
	if (!store_kv_valid(req, msg)) {
		ddb_errf(err, "%s", msg);
		return NULL;
	}
	cJSON *root = cJSON_CreateObject();
	cJSON *items = cJSON_AddArrayToObject(root, "TransactItems");
	for (unsigned i = 0; items != NULL && i < req->n; i++)
		cJSON_AddItemToArray(items, item_of(k, &req->ops[i], req->ttl));
	cJSON_AddStringToObject(root, "ClientRequestToken", token);
	char *body = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (body == NULL) {
		ddb_errf(err, "out of memory building a request");
		return NULL;
	}
	*len = strlen(body);
	return body;
}

unsigned ddb_kv_failed_index(const char *body, size_t len, unsigned n)
{
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "CancellationReasons"), *r;
	unsigned i = 0, found = n;
	cJSON_ArrayForEach(r, list)
	{
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "Code");
		if (cJSON_IsString(code) &&
		    strcmp(code->valuestring, "ConditionalCheckFailed") == 0) {
			found = i < n ? i : n;
			break;
		}
		i++;
	}
	cJSON_Delete(root);
	return found;
}

/* ---- the store operation ---- */

static void kv_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	struct store_kv_result kr = {.status = res->status, .error_type = res->error_type};
	snprintf(kr.message, sizeof(kr.message), "%s", res->message);
	ds->base.in_flight--;
	if (kr.status == STORE_NO_TABLE)
		kr.status = STORE_FATAL;
	if (kr.status == STORE_REFUSED)
		kr.index = ddb_kv_failed_index(body, len, c->limit);
	if (kr.status == STORE_OK)
		kr.message[0] = '\0';
	c->kv_cb(c->arg, &kr);
}

struct store_call *ddbs_kv_commit(struct store *s, const struct store_kv_req *req, store_kv_cb cb,
				  void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct store_call *c =
		ddbs_new_call(ds, DDB_TRANSACT_WRITE_ITEMS, kv_done, ds->cfg.op_timeout_ms);
	if (c == NULL)
		return NULL;
	c->kv_cb = cb;
	c->arg = arg;
	c->op = STORE_TRANSACT;
	c->limit = req->n; /* for the index of a cancellation */
	s->requests[STORE_TRANSACT]++;
	s->in_flight++;
	char token[STORE_TX_TOKEN_MAX + 1], err[DDB_ERR_MAX];
	store_new_id(token);
	if (ds->open != OPEN_DONE) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "NotOpen";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB store of table %.64s is not open", ds->table);
	} else if ((c->body = ddb_build_kv(&ds->keys, req, token, &c->body_len, err)) == NULL) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "InvalidRequest";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB TransactWriteItems on table %.64s: %.150s", ds->table, err);
	} else {
		ddbs_send(c);
		return c;
	}
	ddbs_defer(c);
	return c;
}
