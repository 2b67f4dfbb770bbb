/*
 * ddb_standin_ops: the stand-in's request and answer bodies (see
 * ddb_standin_int.h). A request is recognised by the shape leasegate gives
 * it (core/store/dynamodb/ddb_json.c: the update expression says which store
 * operation, the values :o, :r, :l... its fields), not by evaluating
 * DynamoDB expressions: the embedded store then applies the operation's
 * conditions as store.h defines them.
 */
#include "tests/support/ddb_standin_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TYPE_PREFIX "com.amazonaws.dynamodb.v20120810#"

static const char *str_of(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The S or N text of an attribute value {"S": "..."} in vals, or NULL. */
static const char *val_of(const cJSON *vals, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(vals, key);
	if (!cJSON_IsObject(v) || !v->child || !cJSON_IsString(v->child))
		return NULL;
	return v->child->valuestring;
}

static int64_t num_of(const cJSON *vals, const char *key)
{
	const char *s = val_of(vals, key);
	return s ? strtoll(s, NULL, 10) : 0;
}

/* The lock name of Key {"pk": {"S": "LOCK#name"}}. */
static const char *name_of(const cJSON *key)
{
	const char *k = val_of(key, SD_PK);
	return k && strncmp(k, "LOCK#", 5) == 0 ? k + 5 : NULL;
}

/* UpdateItem: which store operation, by its update expression. */
static bool decode_update(const cJSON *root, struct sd_req *out, char *err)
{
	struct store_req *q = &out->req;
	const char *expr = str_of(root, "UpdateExpression");
	const char *cond = str_of(root, "ConditionExpression");
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(root, "ExpressionAttributeValues");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(root, "ExpressionAttributeNames");
	out->ttl_attr = str_of(names, "#x");
	if (!expr) {
		ddb_errf(err, "UpdateItem without an UpdateExpression");
		return false;
	}
	q->owner = val_of(vals, ":o");
	q->ttl = num_of(vals, ":x");
	if (strncmp(expr, "REMOVE #o", 9) == 0) {
		q->op = STORE_RELEASE;
		q->unconditional = cond && strcmp(cond, "attribute_exists(#k)") == 0;
		q->token = num_of(vals, ":fr");
		const char *by = val_of(vals, ":fb");
		q->forced = by && strcmp(by, "force") == 0;
	} else if (strncmp(expr, "SET #w = :w", 11) == 0) {
		q->op = STORE_ANNOUNCE;
		q->waiter = val_of(vals, ":w");
		q->waiter_ms = num_of(vals, ":wm");
	} else if (strncmp(expr, "REMOVE #w", 9) == 0) {
		q->op = STORE_WITHDRAW;
		q->waiter = val_of(vals, ":w");
	} else if (strncmp(expr, "SET #o = :o", 11) == 0 || strncmp(expr, "SET #r = :r", 11) == 0) {
		q->op = expr[5] == 'o' ? STORE_ACQUIRE : STORE_RENEW;
		q->rvn = val_of(vals, ":r");
		q->lease_ms = num_of(vals, ":l");
		q->holder = val_of(vals, ":h");
		q->seen_rvn = val_of(vals, ":s"); /* a renewal's too (RENEW in store.h) */
		if (q->op == STORE_ACQUIRE) {
			q->unconditional = cond == NULL;
			q->waiter = val_of(vals, ":w");
			q->seen_fence = num_of(vals, ":sf"); /* the item's fence it saw */
			q->has_seen_fence =
				q->seen_fence != 0 ||
				(cond && strncmp(cond, "attribute_not_exists(#f) AND ", 29) == 0);
		}
	} else {
		ddb_errf(err, "UpdateItem expression not of leasegate: '%.60s'", expr);
		return false;
	}
	return true;
}

cJSON *sd_decode(enum ddb_op dop, const char *body, size_t len, struct sd_req *out, char *err)
{
	memset(out, 0, sizeof *out);
	out->dop = dop;
	cJSON *root = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsObject(root)) {
		ddb_errf(err, "the body is no JSON object");
		cJSON_Delete(root);
		return NULL;
	}
	const cJSON *src = root;
	bool ok = true;
	if (dop == DDB_TRANSACT_WRITE_ITEMS) {
		/* LOCK.CHECK: one ConditionCheck; fenced writes are not served */
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "TransactItems");
		const cJSON *first = cJSON_IsArray(items) ? items->child : NULL;
		src = first && !first->next
			      ? cJSON_GetObjectItemCaseSensitive(first, "ConditionCheck")
			      : NULL;
		if (!src) {
			ddb_errf(err, "only a transaction of one ConditionCheck is served");
			ok = false;
		}
	}
	out->table = ok ? str_of(src, "TableName") : NULL;
	const cJSON *vals =
		ok ? cJSON_GetObjectItemCaseSensitive(src, "ExpressionAttributeValues") : NULL;
	switch (ok ? dop : DDB_OP_COUNT) {
	case DDB_UPDATE_ITEM:
		ok = decode_update(src, out, err);
		break;
	case DDB_GET_ITEM:
		out->req.op = STORE_READ;
		break;
	case DDB_DELETE_ITEM:
		out->req.op = STORE_DELETE;
		break;
	case DDB_TRANSACT_WRITE_ITEMS:
		out->req.op = STORE_CHECK;
		out->req.owner = val_of(vals, ":o");
		out->req.token = num_of(vals, ":f");
		break;
	case DDB_DESCRIBE_TABLE:
	case DDB_CREATE_TABLE:
	case DDB_UPDATE_TIME_TO_LIVE:
	case DDB_SCAN:
		out->ttl_attr =
			str_of(cJSON_GetObjectItemCaseSensitive(src, "TimeToLiveSpecification"),
			       "AttributeName");
		return root;
	default:
		break;
	}
	out->to_store = ok;
	if (ok && !(out->req.name = name_of(cJSON_GetObjectItemCaseSensitive(src, "Key")))) {
		ddb_errf(err, "no Key {\"%s\": {\"S\": \"LOCK#...\"}}", SD_PK);
		ok = false;
	}
	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* The text of a JSON string, escaped, without its quotes. */
static void put_esc(struct evbuffer *b, const char *s)
{
	const char *run = s;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		evbuffer_add(b, run, (size_t)(p - run));
		if (c == '"' || c == '\\')
			evbuffer_add_printf(b, "\\%c", c);
		else
			evbuffer_add_printf(b, "\\u%04x", c);
		run = p + 1;
	}
	evbuffer_add(b, run, strlen(run));
}

static void put_str(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, "\"", 1);
	put_esc(b, s);
	evbuffer_add(b, "\"", 1);
}

static void put_s(struct evbuffer *b, const char *attr, const char *v)
{
	evbuffer_add_printf(b, ",\"%s\":{\"S\":", attr);
	put_str(b, v);
	evbuffer_add(b, "}", 1);
}

static void put_n(struct evbuffer *b, const char *attr, int64_t v)
{
	evbuffer_add_printf(b, ",\"%s\":{\"N\":\"%" PRId64 "\"}", attr, v);
}

void sd_put_item(struct evbuffer *b, const char *member, const char *name,
		 const struct lock_item *it, const char *ttl_attr)
{
	if (member && !it->exists) {
		evbuffer_add(b, "{}", 2);
		return;
	}
	if (member)
		evbuffer_add_printf(b, "{\"%s\":", member);
	evbuffer_add_printf(b, "{\"%s\":{\"S\":\"LOCK#", SD_PK);
	put_esc(b, name);
	evbuffer_add(b, "\"}", 2);
	if (it->type[0])
		put_s(b, "_type", it->type);
	if (it->has_owner)
		put_s(b, "owner", it->owner);
	if (it->has_rvn)
		put_s(b, "rvn", it->rvn);
	if (it->has_fence)
		put_n(b, "fence", it->fence);
	if (it->has_lease)
		put_n(b, "leaseMs", it->lease_ms);
	if (it->holder[0])
		put_s(b, "holder", it->holder);
	if (it->has_waiter) {
		put_s(b, "waiter", it->waiter);
		put_n(b, "waiterMs", it->waiter_ms);
	}
	if (it->freed > 0) {
		put_n(b, "freed", it->freed);
		put_s(b, "freedBy", it->freed_forced ? "force" : "token");
	}
	if (ttl_attr && it->ttl > 0)
		put_n(b, ttl_attr, it->ttl);
	evbuffer_add(b, member ? "}}" : "}", member ? 2 : 1);
}

void sd_put_error(struct evbuffer *b, const char *type, const char *message)
{
	evbuffer_add_printf(b, "{\"__type\":\"" TYPE_PREFIX "%s\",\"message\":", type);
	put_str(b, message);
	evbuffer_add(b, "}", 1);
}

int sd_put_result(struct evbuffer *b, const struct sd_req *r, const struct store_result *res,
		  const char *ttl_attr)
{
	const char *name = r->req.name;
	switch (res->status) {
	case STORE_OK:
		if (r->dop == DDB_UPDATE_ITEM)
			sd_put_item(b, "Attributes", name, &res->item, ttl_attr);
		else if (r->dop == DDB_GET_ITEM)
			sd_put_item(b, "Item", name, &res->item, ttl_attr);
		else
			evbuffer_add(b, "{}", 2);
		return 200;
	case STORE_REFUSED:
		if (r->dop == DDB_TRANSACT_WRITE_ITEMS) {
			evbuffer_add_printf(
				b, "{\"__type\":\"" TYPE_PREFIX
				   "TransactionCanceledException\",\"message\":"
				   "\"Transaction cancelled, please refer cancellation "
				   "reasons for specific reasons [ConditionalCheckFailed]\","
				   "\"CancellationReasons\":[{\"Code\":\"ConditionalCheckFailed\","
				   "\"Message\":\"The conditional request failed\"");
			if (res->item.exists) {
				evbuffer_add(b, ",\"Item\":", 8);
				sd_put_item(b, NULL, name, &res->item, ttl_attr);
			}
			evbuffer_add(b, "}]}", 3);
			return 400;
		}
		evbuffer_add_printf(b, "{\"__type\":\"" TYPE_PREFIX
				       "ConditionalCheckFailedException\","
				       "\"message\":\"The conditional request failed\"");
		if (res->item.exists) {
			evbuffer_add(b, ",\"Item\":", 8);
			sd_put_item(b, NULL, name, &res->item, ttl_attr);
		}
		evbuffer_add(b, "}", 1);
		return 400;
	default:
		sd_put_error(b, "InternalServerError",
			     res->message[0] ? res->message : store_status_name(res->status));
		return 500;
	}
}

/* A global table's version and replicas (regions: a comma list). */
static void put_replicas(struct evbuffer *b, const char *regions)
{
	evbuffer_add_printf(b, ",\"GlobalTableVersion\":\"2019.11.21\",\"Replicas\":[");
	for (const char *p = regions; *p != '\0';) {
		size_t n = strcspn(p, ",");
		evbuffer_add_printf(b, "%s{\"RegionName\":\"%.*s\",\"ReplicaStatus\":\"ACTIVE\"}",
				    p == regions ? "" : ",", (int)n, p);
		p += n + (p[n] == ',');
	}
	evbuffer_add(b, "]", 1);
}

void sd_put_admin(struct evbuffer *b, const struct sd_req *r, const char *ttl_attr,
		  const char *replicas)
{
	const char *table = r->table ? r->table : "";
	switch (r->dop) {
	case DDB_UPDATE_TIME_TO_LIVE:
		evbuffer_add_printf(b, "{\"TimeToLiveSpecification\":{\"Enabled\":true,"
				       "\"AttributeName\":");
		put_str(b, ttl_attr ? ttl_attr : "");
		evbuffer_add(b, "}}", 2);
		return;
	case DDB_SCAN:
		evbuffer_add_printf(b, "{\"Items\":[],\"Count\":0,\"ScannedCount\":0}");
		return;
	default: /* DescribeTable, CreateTable */
		evbuffer_add_printf(b, "{\"%s\":{\"TableName\":",
				    r->dop == DDB_CREATE_TABLE ? "TableDescription" : "Table");
		put_str(b, table);
		evbuffer_add_printf(b,
				    ",\"TableStatus\":\"ACTIVE\",\"KeySchema\":[{\"AttributeName\":"
				    "\"%s\",\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":[{"
				    "\"AttributeName\":\"%s\",\"AttributeType\":\"S\"}]",
				    SD_PK, SD_PK);
		if (replicas != NULL && replicas[0] != '\0')
			put_replicas(b, replicas);
		evbuffer_add(b, "}}", 2);
	}
}
