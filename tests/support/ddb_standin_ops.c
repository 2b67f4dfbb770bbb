/*
 * ddb_standin_ops: the stand-in's request and answer bodies (see
 * ddb_standin_int.h). A request is recognised by the shape leasegate gives
 * it (core/store/dynamodb/ddb_json.c: the update expression says which store
 * operation, the values :o, :r, :l... its fields), not by evaluating
 * DynamoDB expressions: the embedded store then applies the operation's
 * conditions as store.h defines them. A key names what is asked for:
 * LOCK#<name> a lock item (here), SESSION#... and REVOKE#... a session's
 * items (ddb_standin_sess.c).
 */
#include "tests/support/ddb_standin_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TYPE_PREFIX "com.amazonaws.dynamodb.v20120810#"

const char *sd_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *sd_val(const cJSON *vals, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(vals, key);
	if (!cJSON_IsObject(v) || !v->child || !cJSON_IsString(v->child))
		return NULL;
	return v->child->valuestring;
}

int64_t sd_num(const cJSON *vals, const char *key)
{
	const char *s = sd_val(vals, key);
	return s ? strtoll(s, NULL, 10) : 0;
}

/* The lock name of Key {"pk": {"S": "LOCK#name"}}. */
static const char *name_of(const cJSON *key)
{
	const char *k = sd_val(key, SD_PK);
	return k && strncmp(k, "LOCK#", 5) == 0 ? k + 5 : NULL;
}

/* ADOPT (store.h): an orphaned lease to a new owner, its fence kept. */
static void decode_adopt(const cJSON *vals, struct store_req *q)
{
	q->op = STORE_ADOPT;
	q->rvn = sd_val(vals, ":r");
	q->holder = sd_val(vals, ":h");
	q->secret_hash = sd_val(vals, ":sh");
	q->prev_owner = sd_val(vals, ":po");
	q->prev_secret_hash = sd_val(vals, ":psh");
	q->token = sd_num(vals, ":tok");
}

/* Session mode (store.h ACQUIRE): :se names the session, :sl the real
 * lease (:l is then the 10 years); a takeover's branch names the session
 * it saw (:ps), or none (attribute_not_exists(#se)). */
static void decode_session_mode(const cJSON *vals, const char *cond, struct store_req *q)
{
	q->lease_ms = sd_num(vals, ":l");
	q->session = sd_val(vals, ":se");
	if (q->session)
		q->lease_ms = sd_num(vals, ":sl");
	q->seen_session = sd_val(vals, ":ps");
	if (!q->seen_session && cond && strstr(cond, "attribute_not_exists(#se)"))
		q->seen_session = "";
}

/* UpdateItem: which store operation, by its update expression. */
static bool decode_update(const cJSON *root, struct sd_req *out, char *err)
{
	struct store_req *q = &out->req;
	const char *expr = sd_str(root, "UpdateExpression");
	const char *cond = sd_str(root, "ConditionExpression");
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(root, "ExpressionAttributeValues");
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(root, "ExpressionAttributeNames");
	out->ttl_attr = sd_str(names, "#x");
	if (!expr) {
		ddb_errf(err, "UpdateItem without an UpdateExpression");
		return false;
	}
	q->owner = sd_val(vals, ":o");
	q->ttl = sd_num(vals, ":x");
	if (strncmp(expr, "REMOVE #o", 9) == 0) {
		q->op = STORE_RELEASE;
		q->unconditional = cond && strcmp(cond, "attribute_exists(#k)") == 0;
		q->token = sd_num(vals, ":fr");
		const char *by = sd_val(vals, ":fb");
		q->forced = by && strcmp(by, "force") == 0;
		q->seen_rvn = sd_val(vals, ":s"); /* a lost lease's, and */
		q->seen_session = sd_val(vals, ":ps");
	} else if (strncmp(expr, "SET #w = :w", 11) == 0) {
		q->op = STORE_ANNOUNCE;
		q->waiter = sd_val(vals, ":w");
		q->waiter_ms = sd_num(vals, ":wm");
	} else if (strncmp(expr, "REMOVE #w", 9) == 0) {
		q->op = STORE_WITHDRAW;
		q->waiter = sd_val(vals, ":w");
	} else if (strncmp(expr, "SET #or = :o", 12) == 0) {
		q->op = STORE_ORPHAN;
	} else if (strstr(expr, "#af = :po")) {
		decode_adopt(vals, q);
		decode_session_mode(vals, NULL, q);
	} else if (strncmp(expr, "SET #o = :o", 11) == 0 || strncmp(expr, "SET #r = :r", 11) == 0) {
		q->op = expr[5] == 'o' ? STORE_ACQUIRE : STORE_RENEW;
		q->rvn = sd_val(vals, ":r");
		decode_session_mode(vals, cond, q);
		q->holder = sd_val(vals, ":h");
		q->seen_rvn = sd_val(vals, ":s"); /* a renewal's too (RENEW in store.h) */
		if (q->op == STORE_ACQUIRE) {
			q->unconditional = cond == NULL;
			q->waiter = sd_val(vals, ":w");
			q->secret_hash = sd_val(vals, ":sh");
			q->seen_fence = sd_num(vals, ":sf"); /* the item's fence it saw */
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

/* The partition key a request (or a transaction's part) names. */
static const char *pk_of(const cJSON *src)
{
	return sd_val(cJSON_GetObjectItemCaseSensitive(src, "Key"), SD_PK);
}

/* A request on a lock item (its key LOCK#<name>). */
static bool decode_lock(enum ddb_op dop, const cJSON *src, struct sd_req *out, char *err)
{
	out->kind = SD_LOCK;
	out->items = 1;
	if (!(out->req.name = name_of(cJSON_GetObjectItemCaseSensitive(src, "Key")))) {
		ddb_errf(err, "no Key {\"%s\": {\"S\": \"LOCK#...\"}}", SD_PK);
		return false;
	}
	if (dop == DDB_UPDATE_ITEM)
		return decode_update(src, out, err);
	out->req.op = dop == DDB_GET_ITEM ? STORE_READ : STORE_DELETE;
	return true;
}

/* GetItem, UpdateItem, DeleteItem: by the item its key names. */
static bool decode_keyed(enum ddb_op dop, const cJSON *src, struct sd_req *out, char *err)
{
	const char *pk = pk_of(src);
	if (pk && strncmp(pk, "SESSION#", 8) == 0 && dop == DDB_UPDATE_ITEM)
		return sd_decode_session_write(src, pk, out, err);
	if (pk && strncmp(pk, "REVOKE#", 7) == 0 && dop != DDB_DELETE_ITEM)
		return sd_decode_revoke(src, pk, out, err);
	return decode_lock(dop, src, out, err);
}

/* TransactWriteItems: LOCK.CHECK's one ConditionCheck, or a lock's Update
 * and the parts of `--heartbeat replica` (sd_decode_tx_parts). */
static bool decode_tx(const cJSON *root, struct sd_req *out, char *err)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "TransactItems");
	const cJSON *first = cJSON_IsArray(items) ? items->child : NULL;
	const cJSON *check = cJSON_GetObjectItemCaseSensitive(first, "ConditionCheck");
	const cJSON *update = cJSON_GetObjectItemCaseSensitive(first, "Update");
	out->table = sd_str(check ? check : update, "TableName");
	if (check && !first->next) {
		const cJSON *vals =
			cJSON_GetObjectItemCaseSensitive(check, "ExpressionAttributeValues");
		out->tx = SD_TX_CHECK;
		if (!decode_lock(DDB_GET_ITEM, check, out, err))
			return false;
		out->req.op = STORE_CHECK;
		out->req.owner = sd_val(vals, ":o");
		out->req.token = sd_num(vals, ":f");
		return true;
	}
	if (!update || !first->next || !decode_lock(DDB_UPDATE_ITEM, update, out, err)) {
		if (!update || !first->next)
			ddb_errf(err, "a transaction leasegate does not send");
		return false;
	}
	return sd_decode_tx_parts(items, out, err);
}

/* Scan: a page of lock items from ExclusiveStartKey, Limit of them. */
static bool decode_scan(const cJSON *root, struct sd_req *out, char *err)
{
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(root, "Limit");
	double n = cJSON_IsNumber(lim) ? lim->valuedouble : STORE_SCAN_MAX;
	out->kind = SD_SCAN;
	out->limit = n >= 1 && n <= STORE_SCAN_MAX ? (unsigned)n : STORE_SCAN_MAX;
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(root, "ExclusiveStartKey");
	const char *name = from ? name_of(from) : NULL;
	if (from && (!name || !name[0] || strlen(name) > STORE_NAME_MAX)) {
		ddb_errf(err, "a Scan from a key that is no lock's");
		return false;
	}
	if (name)
		store_cursor_of(name, out->cursor);
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
	out->table = sd_str(root, "TableName");
	bool ok = true;
	switch (dop) {
	case DDB_TRANSACT_WRITE_ITEMS:
		ok = decode_tx(root, out, err);
		break;
	case DDB_BATCH_GET_ITEM:
		ok = sd_decode_batch_get(root, out, err);
		break;
	case DDB_SCAN:
		ok = decode_scan(root, out, err);
		break;
	case DDB_UPDATE_ITEM:
	case DDB_GET_ITEM:
	case DDB_DELETE_ITEM:
		ok = decode_keyed(dop, root, out, err);
		break;
	case DDB_DESCRIBE_TABLE:
	case DDB_CREATE_TABLE:
	case DDB_UPDATE_TIME_TO_LIVE:
		out->kind = SD_ADMIN;
		out->ttl_attr =
			sd_str(cJSON_GetObjectItemCaseSensitive(root, "TimeToLiveSpecification"),
			       "AttributeName");
		break;
	default: /* Query: a table with a sort key's revocations */
		ddb_errf(err, "%s is not served (the stand-in's table has no sort key)",
			 ddb_op_name(dop));
		ok = false;
	}
	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

void sd_put_esc(struct evbuffer *b, const char *s)
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

void sd_put_str(struct evbuffer *b, const char *s)
{
	evbuffer_add(b, "\"", 1);
	sd_put_esc(b, s);
	evbuffer_add(b, "\"", 1);
}

static void put_s(struct evbuffer *b, const char *attr, const char *v)
{
	evbuffer_add_printf(b, ",\"%s\":{\"S\":", attr);
	sd_put_str(b, v);
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
	sd_put_esc(b, name);
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
	if (it->secret_hash[0])
		put_s(b, "secretHash", it->secret_hash);
	if (it->orphan[0])
		put_s(b, "orphan", it->orphan);
	if (it->adopted_from[0])
		put_s(b, "adoptedFrom", it->adopted_from);
	if (it->session[0]) {
		put_s(b, "session", it->session);
		put_n(b, "sleaseMs", it->slease_ms);
	}
	if (ttl_attr && it->ttl > 0)
		put_n(b, ttl_attr, it->ttl);
	evbuffer_add(b, member ? "}}" : "}", member ? 2 : 1);
}

void sd_put_error(struct evbuffer *b, const char *type, const char *message)
{
	evbuffer_add_printf(b, "{\"__type\":\"" TYPE_PREFIX "%s\",\"message\":", type);
	sd_put_str(b, message);
	evbuffer_add(b, "}", 1);
}

int sd_put_failure(struct evbuffer *b, enum store_status st, const char *message)
{
	sd_put_error(b, "InternalServerError", message[0] ? message : store_status_name(st));
	return 500;
}

/* A cancelled transaction: n parts, part `failed` ConditionalCheckFailed
 * (with item, when it exists and it is the lock's), the others None. */
static void put_cancelled(struct evbuffer *b, unsigned n, unsigned failed, const char *name,
			  const struct lock_item *item, const char *ttl_attr)
{
	evbuffer_add_printf(b, "{\"__type\":\"" TYPE_PREFIX
			       "TransactionCanceledException\",\"message\":"
			       "\"Transaction cancelled, please refer cancellation "
			       "reasons for specific reasons\",\"CancellationReasons\":[");
	for (unsigned i = 0; i < n; i++) {
		if (i != failed) {
			evbuffer_add_printf(b, "%s{\"Code\":\"None\"}", i ? "," : "");
			continue;
		}
		evbuffer_add_printf(b,
				    "%s{\"Code\":\"ConditionalCheckFailed\","
				    "\"Message\":\"The conditional request failed\"",
				    i ? "," : "");
		if (i == 0 && item->exists) {
			evbuffer_add(b, ",\"Item\":", 8);
			sd_put_item(b, NULL, name, item, ttl_attr);
		}
		evbuffer_add(b, "}", 1);
	}
	evbuffer_add(b, "]}", 2);
}

/* The part of a transaction that refused: the lock's (0), unless the
 * takeover's session check did (1) or an ending's session is gone (2). */
static unsigned refusing_part(const struct sd_req *r, const struct store_result *res)
{
	if (r->tx == SD_TX_TAKEOVER && res->session_refused)
		return 1;
	if (r->tx == SD_TX_END && res->session_gone)
		return 2;
	return 0;
}

int sd_put_result(struct evbuffer *b, const struct sd_req *r, const struct store_result *res,
		  const char *ttl_attr)
{
	static const unsigned parts[] = {
		[SD_TX_NONE] = 1, [SD_TX_CHECK] = 1, [SD_TX_TAKEOVER] = 2, [SD_TX_END] = 3};
	const char *name = r->req.name;
	bool tx = r->tx != SD_TX_NONE;
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
		if (tx) {
			put_cancelled(b, parts[r->tx], refusing_part(r, res), name, &res->item,
				      ttl_attr);
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
	case STORE_TRANSIENT:
		/* an ending's entry refused by the bound (store_revoke.h) */
		if (r->tx == SD_TX_END && res->error_type &&
		    strcmp(res->error_type, "RevocationsFull") == 0) {
			put_cancelled(b, 3, 1, name, &res->item, ttl_attr);
			return 400;
		}
		return sd_put_failure(b, res->status, res->message);
	default:
		return sd_put_failure(b, res->status, res->message);
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
		sd_put_str(b, ttl_attr ? ttl_attr : "");
		evbuffer_add(b, "}}", 2);
		return;
	default: /* DescribeTable, CreateTable */
		evbuffer_add_printf(b, "{\"%s\":{\"TableName\":",
				    r->dop == DDB_CREATE_TABLE ? "TableDescription" : "Table");
		sd_put_str(b, table);
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
