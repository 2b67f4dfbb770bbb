/*
 * ddb_blob: blobs (core/store_blob.h) on DynamoDB — an UpdateItem that
 * sets the item's body (binary) and _type at key <kind>#<id> (sort key
 * <kind>), and a consistent GetItem of that body, on the calls of
 * store_dynamodb.c (its retries, deadline and metrics).
 */
#include <cJSON.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_blob.h"

/* {"S": s} */
static void add_s(cJSON *into, const char *name, const char *s)
{
	cJSON *o = cJSON_AddObjectToObject(into, name);
	if (o != NULL)
		cJSON_AddStringToObject(o, "S", s);
}

/* The request's TableName and Key of kind#id. */
static cJSON *keyed(const struct ddb_keys *k, const char *kind, const char *id)
{
	char pk[16 + 1 + STORE_BLOB_ID_MAX + 1];
	snprintf(pk, sizeof(pk), "%s#%s", kind, id);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "TableName", k->table);
	cJSON *key = cJSON_AddObjectToObject(root, "Key");
	if (key != NULL) {
		add_s(key, k->pk, pk);
		if (k->sk != NULL)
			add_s(key, k->sk, kind);
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

static char *build_put(const struct ddb_keys *k, const char *kind, const char *id, const void *data,
		       size_t n, size_t *len)
{
	char *b64 = malloc(4 * ((n + 2) / 3) + 1);
	if (b64 == NULL)
		return NULL;
	EVP_EncodeBlock((unsigned char *)b64, data, (int)n);
	cJSON *root = keyed(k, kind, id);
	cJSON_AddStringToObject(root, "UpdateExpression", "SET #b = :b, #t = :t");
	cJSON *names = cJSON_AddObjectToObject(root, "ExpressionAttributeNames");
	cJSON_AddStringToObject(names, "#b", "body");
	cJSON_AddStringToObject(names, "#t", "_type");
	cJSON *vals = cJSON_AddObjectToObject(root, "ExpressionAttributeValues");
	cJSON *b = cJSON_AddObjectToObject(vals, ":b");
	if (b != NULL)
		cJSON_AddStringToObject(b, "B", b64);
	add_s(vals, ":t", kind);
	free(b64);
	return print(root, len);
}

static char *build_get(const struct ddb_keys *k, const char *kind, const char *id, size_t *len)
{
	cJSON *root = keyed(k, kind, id);
	cJSON_AddBoolToObject(root, "ConsistentRead", 1);
	cJSON_AddStringToObject(root, "ProjectionExpression", "#b");
	cJSON *names = cJSON_AddObjectToObject(root, "ExpressionAttributeNames");
	cJSON_AddStringToObject(names, "#b", "body");
	return print(root, len);
}

/* The body of a GetItem's answer into *out (malloc'd, *n bytes); false
 * with out NULL when there is none; false with *bad when it is no blob. */
static bool parse_get(const char *body, size_t len, unsigned char **out, size_t *n, bool *bad)
{
	*out = NULL;
	*bad = false;
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "Item");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "body"), "B");
	bool found = false;
	if (root == NULL || (item != NULL && !cJSON_IsString(b))) {
		*bad = true;
	} else if (item != NULL) {
		size_t bl = strlen(b->valuestring);
		*out = malloc(bl / 4 * 3 + 3);
		int m = *out != NULL && bl % 4 == 0 && bl / 4 * 3 <= STORE_BLOB_MAX + 3
				? EVP_DecodeBlock(*out, (const unsigned char *)b->valuestring,
						  (int)bl)
				: -1;
		if (m < 0) {
			*bad = true;
			free(*out);
			*out = NULL;
		} else {
			size_t pad = bl > 0 && b->valuestring[bl - 1] == '=' ? 1 : 0;
			pad += bl > 1 && b->valuestring[bl - 2] == '=' ? 1 : 0;
			*n = (size_t)m - pad; /* EVP_DecodeBlock counts the padding */
			found = true;
		}
	}
	cJSON_Delete(root);
	return found;
}

static void blob_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct store_blob_result br = {.status = res->status, .error_type = res->error_type};
	snprintf(br.message, sizeof(br.message), "%s", res->message);
	c->ds->base.in_flight--;
	if (br.status == STORE_NO_TABLE || br.status == STORE_REFUSED)
		br.status = STORE_FATAL;
	unsigned char *data = NULL;
	if (br.status == STORE_OK && c->dop == DDB_GET_ITEM && body != NULL) {
		bool bad;
		br.found = parse_get(body, len, &data, &br.len, &bad);
		br.data = (const char *)data;
		if (bad) {
			br.status = STORE_FATAL;
			br.error_type = "BadResponse";
			snprintf(br.message, sizeof(br.message),
				 "DynamoDB GetItem on table %.64s: the item is no blob (no binary "
				 "body)",
				 c->ds->table);
		}
	}
	if (br.status == STORE_OK)
		br.message[0] = '\0';
	c->blob_cb(c->arg, &br);
	free(data);
}

static struct store_call *start(struct store *s, enum ddb_op dop, char *body, size_t len,
				store_blob_cb cb, void *arg)
{
	struct store_call *c = ddbs_start((struct ddb_store *)s, dop, blob_done, body, len);
	if (c != NULL) {
		c->blob_cb = cb;
		c->arg = arg;
	}
	return c;
}

struct store_call *ddbs_blob_put(struct store *s, const char *kind, const char *id,
				 const void *data, size_t len, store_blob_cb cb, void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	size_t n = 0;
	char *body = build_put(&ds->keys, kind, id, data, len, &n);
	return start(s, DDB_UPDATE_ITEM, body, n, cb, arg);
}

struct store_call *ddbs_blob_get(struct store *s, const char *kind, const char *id,
				 store_blob_cb cb, void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	size_t n = 0;
	char *body = build_get(&ds->keys, kind, id, &n);
	return start(s, DDB_GET_ITEM, body, n, cb, arg);
}
