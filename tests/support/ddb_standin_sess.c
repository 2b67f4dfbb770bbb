/*
 * ddb_standin_sess: the stand-in's bodies for `--heartbeat replica`
 * (docs/design/replica-heartbeat.md) — the requests of
 * core/store/dynamodb/ddb_session.c, ddb_slock.c and ddb_revoke.c, each
 * mapped onto one request of the embedded store, which applies its
 * conditions (core/store/store_memory_session.c, store_memory_revoke.c,
 * store_memory.c), and their answers as DynamoDB gives them:
 *   - UpdateItem on SESSION#<replica>#<incarnation>: CREATE, BEAT or KILL
 *     by its condition; ALL_NEW, or the item as it was when refused;
 *   - BatchGetItem of a SESSION# key and a LOCK# key: the session's READ
 *     (never a key left unprocessed); of LOCK# keys alone (1..100): the
 *     verification sweep's store_batch_read (likewise);
 *   - GetItem of REVOKE#<session>: a revocations' READ of every entry
 *     (the DynamoDB store cuts its pages from the set itself);
 *     UpdateItem "DELETE #rv :e" on it: their DELETE of the element;
 *   - TransactWriteItems of a lock's Update and a ConditionCheck of a
 *     SESSION# key: the takeover (ACQUIRE with .sess_check); of a lock's
 *     Update, the REVOKE# item's ADD and the session's ADD revSeq: an
 *     ending with its revocation (.revoke_session);
 *   - a Scan's page of lock items.
 * Not served: the forms of a table with a sort key (Query, a Put of an
 * entry item, DeleteItem of one), a ClientRequestToken's idempotency (a
 * retried ending whose first attempt applied is refused by the lock's
 * condition, where DynamoDB would answer as it did the first time).
 */
#include "tests/support/ddb_standin_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TYPE_PREFIX "com.amazonaws.dynamodb.v20120810#"

/* ---- requests ---- */

bool sd_split_session_key(const char *key, struct sd_req *out)
{
	const char *rep = key + 8, *hash = strrchr(rep, '#');
	if (strncmp(key, "SESSION#", 8) != 0 || !hash || hash == rep ||
	    (size_t)(hash - rep) > STORE_SESSION_REPLICA_MAX ||
	    strlen(hash + 1) != STORE_SESSION_INC_LEN)
		return false;
	snprintf(out->replica, sizeof out->replica, "%.*s", (int)(hash - rep), rep);
	snprintf(out->incarnation, sizeof out->incarnation, "%s", hash + 1);
	out->sreq.replica = out->replica;
	out->sreq.incarnation = out->incarnation;
	return true;
}

/* The session writes by their condition (ddb_session.c's cond_of). */
static const struct {
	const char *cond;
	enum store_session_op op;
} session_writes[] = {
	{"attribute_not_exists(#pk)", STORE_SESSION_CREATE},
	{"attribute_exists(#pk) AND attribute_not_exists(#d) AND "
	 "(attribute_not_exists(#bs) OR #bs < :bs)",
	 STORE_SESSION_BEAT},
	{"#r = :sr AND attribute_not_exists(#d)", STORE_SESSION_KILL},
};

bool sd_decode_session_write(const cJSON *src, const char *key, struct sd_req *out, char *err)
{
	const char *cond = sd_str(src, "ConditionExpression");
	const cJSON *vals = cJSON_GetObjectItemCaseSensitive(src, "ExpressionAttributeValues");
	size_t i = 0, n = sizeof session_writes / sizeof session_writes[0];
	while (i < n && (!cond || strcmp(cond, session_writes[i].cond) != 0))
		i++;
	if (i == n || !sd_split_session_key(key, out)) {
		ddb_errf(err, "a session write leasegate does not send: '%.60s'", cond ? cond : "");
		return false;
	}
	struct store_session_req *q = &out->sreq;
	out->kind = SD_SESSION;
	out->items = 1;
	out->ttl_attr =
		sd_str(cJSON_GetObjectItemCaseSensitive(src, "ExpressionAttributeNames"), "#x");
	q->op = session_writes[i].op;
	q->rvn = sd_val(vals, ":r");
	q->seq = sd_num(vals, ":bs");
	q->max_lease_ms = sd_num(vals, ":m");
	q->holder = sd_val(vals, ":h");
	q->addr = sd_val(vals, ":a");
	q->ttl = sd_num(vals, ":x");
	q->seen_rvn = sd_val(vals, ":sr");
	q->by = sd_val(vals, ":by");
	return true;
}

/* A BatchGetItem of lock keys alone (store_batch_read): false when it is
 * not one (a key of another form, none, more than STORE_BATCH_MAX). */
static bool decode_lock_batch(const char *table, const cJSON *keys, struct sd_req *out)
{
	const cJSON *k;
	unsigned n = 0;
	cJSON_ArrayForEach(k, keys)
	{
		const char *pk = sd_val(k, SD_PK);
		if (!pk || strncmp(pk, "LOCK#", 5) != 0 || !pk[5] || n == STORE_BATCH_MAX)
			return false;
		out->names[n++] = pk + 5;
	}
	if (n == 0)
		return false;
	out->kind = SD_BATCH;
	out->table = table;
	out->items = n;
	return true;
}

bool sd_decode_batch_get(const cJSON *root, struct sd_req *out, char *err)
{
	const cJSON *tables = cJSON_GetObjectItemCaseSensitive(root, "RequestItems");
	const cJSON *t = cJSON_IsObject(tables) ? tables->child : NULL;
	const cJSON *keys = cJSON_GetObjectItemCaseSensitive(t, "Keys"), *k;
	const char *session = NULL, *lock = NULL;
	unsigned n = 0;
	if (t && !t->next && decode_lock_batch(t->string, keys, out))
		return true;
	cJSON_ArrayForEach(k, keys)
	{
		const char *pk = sd_val(k, SD_PK);
		n++;
		if (pk && strncmp(pk, "SESSION#", 8) == 0 && !session)
			session = pk;
		else if (pk && strncmp(pk, "LOCK#", 5) == 0 && pk[5] && !lock)
			lock = pk + 5;
	}
	if (!t || t->next || n != 2 || !session || !lock || !sd_split_session_key(session, out)) {
		ddb_errf(err, "only a BatchGetItem of a session and a lock is served");
		return false;
	}
	out->kind = SD_SESSION;
	out->table = t->string;
	out->items = 2;
	out->sreq.op = STORE_SESSION_READ;
	out->sreq.name = lock;
	return true;
}

/* The revocations' item REVOKE#<session>: GetItem (READ) or its DELETE. */
bool sd_decode_revoke(const cJSON *src, const char *key, struct sd_req *out, char *err)
{
	struct store_revoke_req *q = &out->rreq;
	out->kind = SD_REVOKE;
	out->items = 1;
	q->session = key + 7;
	if (!store_session_key_valid(q->session)) {
		ddb_errf(err, "a revocations' key of no session: '%.60s'", key);
		return false;
	}
	if (out->dop == DDB_GET_ITEM) {
		q->op = STORE_REVOKE_READ;
		q->limit = STORE_REVOKE_PAGE; /* every entry: STORE_REVOKE_MAX at most */
		return true;
	}
	const char *expr = sd_str(src, "UpdateExpression");
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(src, "ExpressionAttributeValues"), ":e"),
		"SS");
	const char *el = cJSON_IsArray(set) && set->child ? cJSON_GetStringValue(set->child) : NULL;
	if (!expr || strcmp(expr, "DELETE #rv :e") != 0 || !el ||
	    strlen(el) < STORE_REVOKE_KEY_LEN + 2 || el[STORE_REVOKE_KEY_LEN] != '#') {
		ddb_errf(err, "a revocations' update leasegate does not send");
		return false;
	}
	q->op = STORE_REVOKE_DELETE;
	q->name = el + STORE_REVOKE_KEY_LEN + 1;
	q->fence = strtoll(el, NULL, 10); /* the key's 19 digits */
	return true;
}

/* The takeover's ConditionCheck of the session the lock showed. */
static bool decode_session_check(const cJSON *cc, struct sd_req *out, char *err)
{
	struct store_req *q = &out->req;
	const char *key = sd_val(cJSON_GetObjectItemCaseSensitive(cc, "Key"), SD_PK);
	const char *cond = sd_str(cc, "ConditionExpression");
	if (!key || !q->seen_session || strcmp(key, q->seen_session) != 0 || !cond) {
		ddb_errf(err, "a session check of another session than the lock's condition");
		return false;
	}
	if (strcmp(cond, "#r = :sr") == 0) {
		q->sess_check = STORE_SESS_CHECK_RVN;
		q->sess_rvn = sd_val(
			cJSON_GetObjectItemCaseSensitive(cc, "ExpressionAttributeValues"), ":sr");
	} else if (strcmp(cond, "attribute_not_exists(#k)") == 0) {
		q->sess_check = STORE_SESS_CHECK_ABSENT;
	} else {
		ddb_errf(err, "a session check leasegate does not send: '%.60s'", cond);
		return false;
	}
	out->tx = SD_TX_TAKEOVER;
	return true;
}

/* An ending's entry (the REVOKE# item's ADD) and the session's revSeq. */
static bool decode_ending(const cJSON *entry, const cJSON *raise, struct sd_req *out, char *err)
{
	const char *rk = sd_val(cJSON_GetObjectItemCaseSensitive(entry, "Key"), SD_PK);
	const char *sk = sd_val(cJSON_GetObjectItemCaseSensitive(raise, "Key"), SD_PK);
	const char *expr = sd_str(raise, "UpdateExpression");
	if (!rk || !sk || strncmp(rk, "REVOKE#", 7) != 0 || strcmp(rk + 7, sk) != 0 || !expr ||
	    strcmp(expr, "ADD #rs :one") != 0) {
		ddb_errf(err, "an ending's parts leasegate does not send");
		return false;
	}
	out->req.revoke_session = sk;
	out->tx = SD_TX_END;
	return true;
}

bool sd_decode_tx_parts(const cJSON *items, struct sd_req *out, char *err)
{
	const cJSON *second = items->child->next, *third = second->next;
	out->items = (unsigned)cJSON_GetArraySize(items);
	if (out->items == 2)
		return decode_session_check(
			cJSON_GetObjectItemCaseSensitive(second, "ConditionCheck"), out, err);
	if (out->items == 3 && !third->next)
		return decode_ending(cJSON_GetObjectItemCaseSensitive(second, "Update"),
				     cJSON_GetObjectItemCaseSensitive(third, "Update"), out, err);
	ddb_errf(err, "a transaction of %u parts leasegate does not send", out->items);
	return false;
}

/* ---- answers ---- */

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

/* A session item's attribute map, at key. */
static void put_session_item(struct evbuffer *b, const char *key, const struct session_item *it,
			     const char *ttl_attr)
{
	evbuffer_add_printf(b, "{\"%s\":{\"S\":", SD_PK);
	sd_put_str(b, key);
	evbuffer_add(b, "}", 1);
	if (it->type[0])
		put_s(b, "_type", it->type);
	put_s(b, "rvn", it->rvn);
	if (it->beat_seq >= 0)
		put_n(b, "beatSeq", it->beat_seq);
	put_n(b, "maxLeaseMs", it->max_lease_ms);
	put_n(b, "revSeq", it->rev_seq);
	if (it->holder[0])
		put_s(b, "holder", it->holder);
	if (it->addr[0])
		put_s(b, "addr", it->addr);
	if (it->has_dead)
		put_s(b, "dead", it->dead);
	if (ttl_attr && it->ttl > 0)
		put_n(b, ttl_attr, it->ttl);
	evbuffer_add(b, "}", 1);
}

static void put_read(struct evbuffer *b, const struct sd_req *r, const char *key,
		     const struct store_session_result *res, const char *ttl_attr)
{
	evbuffer_add(b, "{\"Responses\":{", 14);
	sd_put_str(b, r->table ? r->table : "");
	evbuffer_add(b, ":[", 2);
	if (res->session.exists)
		put_session_item(b, key, &res->session, ttl_attr);
	if (res->lock.exists) {
		if (res->session.exists)
			evbuffer_add(b, ",", 1);
		sd_put_item(b, NULL, r->sreq.name, &res->lock, ttl_attr);
	}
	evbuffer_add_printf(b, "]},\"UnprocessedKeys\":{}}");
}

int sd_put_session(struct evbuffer *b, const struct sd_req *r,
		   const struct store_session_result *res, const char *ttl_attr)
{
	char key[STORE_SESSION_KEY_MAX + 1];
	store_session_key(&r->sreq, key);
	if (res->status == STORE_OK && r->sreq.op == STORE_SESSION_READ) {
		put_read(b, r, key, res, ttl_attr);
		return 200;
	}
	if (res->status == STORE_OK) {
		evbuffer_add(b, "{\"Attributes\":", 14);
		put_session_item(b, key, &res->session, ttl_attr);
		evbuffer_add(b, "}", 1);
		return 200;
	}
	if (res->status != STORE_REFUSED)
		return sd_put_failure(b, res->status, res->message);
	evbuffer_add_printf(b, "{\"__type\":\"" TYPE_PREFIX "ConditionalCheckFailedException\","
			       "\"message\":\"The conditional request failed\"");
	if (res->session.exists) {
		evbuffer_add(b, ",\"Item\":", 8);
		put_session_item(b, key, &res->session, ttl_attr);
	}
	evbuffer_add(b, "}", 1);
	return 400;
}

int sd_put_revoke(struct evbuffer *b, const struct sd_req *r, const struct store_revoke_result *res)
{
	if (res->status != STORE_OK)
		return sd_put_failure(b, res->status, res->message);
	if (r->rreq.op == STORE_REVOKE_DELETE || res->count == 0) {
		evbuffer_add(b, "{}", 2);
		return 200;
	}
	char key[STORE_REVOKE_KEY_LEN + 1];
	evbuffer_add_printf(b, "{\"Item\":{\"%s\":{\"S\":\"REVOKE#", SD_PK);
	sd_put_esc(b, r->rreq.session);
	evbuffer_add_printf(b, "\"},\"_type\":{\"S\":\"REVOKE\"},\"revs\":{\"SS\":[");
	for (unsigned i = 0; i < res->count; i++) {
		store_revoke_key(res->entries[i].name, res->entries[i].fence, key);
		evbuffer_add_printf(b, "%s\"%s#", i ? "," : "", key);
		sd_put_esc(b, res->entries[i].name);
		evbuffer_add(b, "\"", 1);
	}
	evbuffer_add(b, "]}}}", 4);
	return 200;
}

int sd_put_batch(struct evbuffer *b, const struct sd_req *r, const struct store_batch_result *res,
		 const char *ttl_attr)
{
	if (res->status != STORE_OK)
		return sd_put_failure(b, res->status, res->message);
	evbuffer_add(b, "{\"Responses\":{", 14);
	sd_put_str(b, r->table ? r->table : "");
	evbuffer_add(b, ":[", 2);
	bool first = true;
	for (unsigned i = 0; i < res->count; i++) {
		if (!res->entries[i].item.exists)
			continue;
		if (!first)
			evbuffer_add(b, ",", 1);
		first = false;
		sd_put_item(b, NULL, res->entries[i].name, &res->entries[i].item, ttl_attr);
	}
	evbuffer_add_printf(b, "]},\"UnprocessedKeys\":{}}");
	return 200;
}

int sd_put_scan(struct evbuffer *b, const struct store_scan_result *res, const char *ttl_attr)
{
	if (res->status != STORE_OK)
		return sd_put_failure(b, res->status, res->message);
	evbuffer_add(b, "{\"Items\":[", 10);
	for (unsigned i = 0; i < res->count; i++) {
		if (i)
			evbuffer_add(b, ",", 1);
		sd_put_item(b, NULL, res->entries[i].name, &res->entries[i].item, ttl_attr);
	}
	evbuffer_add_printf(b, "],\"Count\":%u,\"ScannedCount\":%u", res->count, res->count);
	char name[STORE_NAME_MAX + 1];
	if (res->cursor[0] && store_cursor_name(res->cursor, name)) {
		evbuffer_add_printf(b, ",\"LastEvaluatedKey\":{\"%s\":{\"S\":\"LOCK#", SD_PK);
		sd_put_esc(b, name);
		evbuffer_add(b, "\"}}", 3);
	}
	evbuffer_add(b, "}", 1);
	return 200;
}
