/*
 * ddb_chan: channels (core/store_chan.h) on DynamoDB — a publish is an
 * UpdateItem that appends an entry to the item's "log" and adds 1 to its
 * "seq" at key CHAN#<id> (sort key CHAN), answering the item's new log; a
 * log then longer than STORE_CHAN_KEEP is trimmed from the front by a
 * second UpdateItem, conditioned on that seq (a publish in between leaves
 * the trim to the next one). A read is a consistent GetItem of both. On
 * the calls of store_dynamodb.c (its retries, deadline and metrics): a
 * publish retried after a timeout may append its entry twice.
 */
#include <cJSON.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_chan.h"

#define KIND "CHAN"

/* {"type": s} into into[name] */
static cJSON *add_typed(cJSON *into, const char *name, const char *type, const char *s)
{
	cJSON *o = cJSON_AddObjectToObject(into, name);
	if (o != NULL)
		cJSON_AddStringToObject(o, type, s);
	return o;
}

/* The request's TableName and Key of CHAN#id. */
static cJSON *keyed(const struct ddb_keys *k, const char *id)
{
	char pk[sizeof(KIND) + STORE_CHAN_ID_LEN + 1];
	snprintf(pk, sizeof(pk), KIND "#%s", id);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "TableName", k->table);
	cJSON *key = cJSON_AddObjectToObject(root, "Key");
	if (key != NULL) {
		add_typed(key, k->pk, "S", pk);
		if (k->sk != NULL)
			add_typed(key, k->sk, "S", KIND);
	}
	return root;
}

static char *print(cJSON *root, size_t *len)
{
	char *body = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (body != NULL)
		*len = strlen(body);
	return body;
}

static char *build_publish(const struct ddb_keys *k, const char *id, const char *origin,
			   const void *data, size_t n, int64_t ttl, size_t *len)
{
	char *b64 = malloc(4 * ((n + 2) / 3) + 1);
	if (b64 == NULL)
		return NULL;
	EVP_EncodeBlock((unsigned char *)b64, data, (int)n);
	bool with_ttl = k->ttl_attr != NULL && ttl > 0;
	cJSON *root = keyed(k, id);
	cJSON_AddStringToObject(root, "UpdateExpression",
				with_ttl ? "SET #l = list_append(if_not_exists(#l, :none), :e), "
					   "#t = :t, #x = :x ADD #s :one"
					 : "SET #l = list_append(if_not_exists(#l, :none), :e), "
					   "#t = :t ADD #s :one");
	cJSON_AddStringToObject(root, "ReturnValues", "UPDATED_NEW");
	cJSON *names = cJSON_AddObjectToObject(root, "ExpressionAttributeNames");
	cJSON_AddStringToObject(names, "#l", "log");
	cJSON_AddStringToObject(names, "#t", "_type");
	cJSON_AddStringToObject(names, "#s", "seq");
	if (with_ttl)
		cJSON_AddStringToObject(names, "#x", k->ttl_attr);
	cJSON *vals = cJSON_AddObjectToObject(root, "ExpressionAttributeValues");
	cJSON_AddArrayToObject(cJSON_AddObjectToObject(vals, ":none"), "L");
	cJSON *list = cJSON_AddArrayToObject(cJSON_AddObjectToObject(vals, ":e"), "L");
	cJSON *entry = cJSON_CreateObject();
	cJSON *m = cJSON_AddObjectToObject(entry, "M");
	add_typed(m, "o", "S", origin);
	add_typed(m, "m", "B", b64);
	cJSON_AddItemToArray(list, entry);
	add_typed(vals, ":t", "S", KIND);
	add_typed(vals, ":one", "N", "1");
	if (with_ttl) {
		char x[24];
		snprintf(x, sizeof(x), "%" PRId64, ttl);
		add_typed(vals, ":x", "N", x);
	}
	free(b64);
	return print(root, len);
}

/* REMOVE the log's first drop entries while seq is still seq. */
static char *build_trim(const struct ddb_keys *k, const char *id, unsigned drop, int64_t seq,
			size_t *len)
{
	char expr[16 * (STORE_CHAN_KEEP + 64)] = "REMOVE ", s[24];
	size_t at = strlen(expr);
	for (unsigned i = 0; i < drop && at + 16 < sizeof(expr); i++)
		at += (size_t)snprintf(expr + at, sizeof(expr) - at, "%s#l[%u]", i ? ", " : "", i);
	cJSON *root = keyed(k, id);
	cJSON_AddStringToObject(root, "UpdateExpression", expr);
	cJSON_AddStringToObject(root, "ConditionExpression", "#s = :s");
	cJSON *names = cJSON_AddObjectToObject(root, "ExpressionAttributeNames");
	cJSON_AddStringToObject(names, "#l", "log");
	cJSON_AddStringToObject(names, "#s", "seq");
	snprintf(s, sizeof(s), "%" PRId64, seq);
	add_typed(cJSON_AddObjectToObject(root, "ExpressionAttributeValues"), ":s", "N", s);
	return print(root, len);
}

static char *build_read(const struct ddb_keys *k, const char *id, size_t *len)
{
	cJSON *root = keyed(k, id);
	cJSON_AddBoolToObject(root, "ConsistentRead", 1);
	cJSON_AddStringToObject(root, "ProjectionExpression", "#s, #l");
	cJSON *names = cJSON_AddObjectToObject(root, "ExpressionAttributeNames");
	cJSON_AddStringToObject(names, "#s", "seq");
	cJSON_AddStringToObject(names, "#l", "log");
	return print(root, len);
}

/* A log entry {"M": {"o": {"S"}, "m": {"B"}}} into e, its bytes decoded
 * into buf (its first STORE_CHAN_MSG_MAX + 3 bytes); false when it is
 * none. */
static bool parse_entry(const cJSON *v, struct store_chan_entry *e, unsigned char *buf)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "M");
	const cJSON *o =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "o"), "S");
	const cJSON *b =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "m"), "B");
	if (!cJSON_IsString(o) || !cJSON_IsString(b))
		return false;
	size_t bl = strlen(b->valuestring);
	if (bl % 4 != 0 || bl / 4 * 3 > STORE_CHAN_MSG_MAX + 3)
		return false;
	int n = EVP_DecodeBlock(buf, (const unsigned char *)b->valuestring, (int)bl);
	if (n < 0)
		return false;
	size_t pad = bl > 0 && b->valuestring[bl - 1] == '=' ? 1 : 0;
	pad += bl > 1 && b->valuestring[bl - 2] == '=' ? 1 : 0;
	e->origin = o->valuestring;
	e->data = (const char *)buf;
	e->len = (size_t)n - pad;
	return true;
}

/* seq and the last entries of the item in attrs (GetItem's Item, or
 * UpdateItem's Attributes) into r, decoded into bufs; *len: the log's
 * length. False when it is no channel. */
static bool parse_chan(const cJSON *attrs, struct store_chan_result *r,
		       unsigned char (*bufs)[DDB_CHAN_ROW], unsigned *len)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(attrs, "seq"), "N");
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(attrs, "log"), "L");
	if (!cJSON_IsString(s) || !cJSON_IsArray(l))
		return false;
	char *end;
	long long seq = strtoll(s->valuestring, &end, 10);
	int total = cJSON_GetArraySize(l);
	if (*end != '\0' || seq < 0 || total < 0 || total > seq)
		return false;
	*len = (unsigned)total;
	r->found = true;
	r->seq = seq;
	r->n = *len < STORE_CHAN_KEEP ? *len : STORE_CHAN_KEEP;
	for (unsigned i = 0; i < r->n; i++)
		if (!parse_entry(cJSON_GetArrayItem(l, total - (int)r->n + (int)i), &r->e[i],
				 bufs[i]))
			return false;
	return true;
}

static void trim_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	c->ds->base.in_flight--; /* refused: a publish came in between */
}

/* A publish left a log of len entries at seq: trims it to KEEP. */
static void trim(struct store_call *c, unsigned len, int64_t seq, const char *id)
{
	struct ddb_store *ds = c->ds;
	size_t n = 0;
	char *body = build_trim(&ds->keys, id, len - STORE_CHAN_KEEP, seq, &n);
	struct store_call *t =
		body != NULL ? ddbs_new_call(ds, DDB_UPDATE_ITEM, trim_done, ds->cfg.op_timeout_ms)
			     : NULL;
	if (t == NULL) {
		free(body);
		return;
	}
	ds->base.in_flight++;
	t->body = body;
	t->body_len = n;
	ddbs_send(t);
}

bool ddb_parse_chan(const char *body, size_t len, bool get, struct store_chan_result *r,
		    unsigned char (*bufs)[DDB_CHAN_ROW], unsigned *total)
{
	*total = 0;
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, get ? "Item" : "Attributes");
	bool ok = root != NULL && (attrs == NULL || parse_chan(attrs, r, bufs, total));
	if (!ok) {
		*r = (struct store_chan_result){.status = STORE_FATAL, .error_type = "BadResponse"};
		*total = 0;
	}
	/* the entries point into root: copied out before it goes */
	for (unsigned i = 0; ok && i < r->n; i++) {
		size_t on = strnlen(r->e[i].origin, STORE_ID_MAX + 1);
		char *o = (char *)bufs[i] + STORE_CHAN_MSG_MAX + 3; /* after the message */
		if (on > STORE_ID_MAX || r->e[i].len > STORE_CHAN_MSG_MAX) {
			*r = (struct store_chan_result){.status = STORE_FATAL,
							.error_type = "BadResponse"};
			*total = 0;
			ok = false;
			break;
		}
		memcpy(o, r->e[i].origin, on + 1);
		r->e[i].origin = o;
	}
	cJSON_Delete(root);
	return ok;
}

static void chan_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct store_chan_result cr = {.status = res->status, .error_type = res->error_type};
	snprintf(cr.message, sizeof(cr.message), "%s", res->message);
	c->ds->base.in_flight--;
	if (cr.status == STORE_NO_TABLE || cr.status == STORE_REFUSED)
		cr.status = STORE_FATAL;
	unsigned char(*bufs)[DDB_CHAN_ROW] = NULL;
	unsigned total = 0;
	if (cr.status == STORE_OK && body != NULL) {
		bufs = malloc(sizeof(*bufs) * STORE_CHAN_KEEP);
		if (bufs == NULL) {
			cr.status = STORE_TRANSIENT;
			cr.error_type = "OutOfMemory";
			snprintf(cr.message, sizeof(cr.message), "out of memory");
		} else if (!ddb_parse_chan(body, len, c->dop == DDB_GET_ITEM, &cr, bufs, &total)) {
			snprintf(cr.message, sizeof(cr.message),
				 "DynamoDB on table %.64s: the channel item is no channel (seq and "
				 "log)",
				 c->ds->table);
		}
	}
	if (cr.status == STORE_OK)
		cr.message[0] = '\0';
	if (cr.status == STORE_OK && c->dop == DDB_UPDATE_ITEM && total > STORE_CHAN_KEEP)
		trim(c, total, cr.seq, c->chan_id);
	c->chan_cb(c->arg, &cr);
	free(bufs);
}

static struct store_call *start(struct store *s, enum ddb_op dop, const char *id, char *body,
				size_t len, store_chan_cb cb, void *arg)
{
	struct store_call *c = ddbs_start((struct ddb_store *)s, dop, chan_done, body, len);
	if (c != NULL) {
		c->chan_cb = cb;
		c->arg = arg;
		(void)ddbs_copy(c->chan_id, sizeof(c->chan_id), id);
	}
	return c;
}

struct store_call *ddbs_chan_publish(struct store *s, const char *id, const char *origin,
				     const void *data, size_t len, int64_t ttl, store_chan_cb cb,
				     void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	size_t n = 0;
	char *body = build_publish(&ds->keys, id, origin, data, len, ttl, &n);
	return start(s, DDB_UPDATE_ITEM, id, body, n, cb, arg);
}

struct store_call *ddbs_chan_read(struct store *s, const char *id, store_chan_cb cb, void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	size_t n = 0;
	char *body = build_read(&ds->keys, id, &n);
	return start(s, DDB_GET_ITEM, id, body, n, cb, arg);
}
