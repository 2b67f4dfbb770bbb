/*
 * ddb_json.c: request bodies (see ddb_json.h). The parsers of responses are
 * in ddb_json_parse.c.
 *
 * Every body is built as a cJSON tree and printed unformatted. cJSON
 * returns NULL on out-of-memory from every constructor; struct jb carries
 * one flag so the builders stay straight-line and check once at the end.
 */
#include "core/dynamodb/ddb_json.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The lock attributes: placeholder and name, in one place. */
#define N_OWNER	 "#o"
#define N_RVN	 "#r"
#define N_FENCE	 "#f"
#define N_LEASE	 "#l"
#define N_TYPE	 "#t"
#define N_HOLDER "#h"
#define N_TTL	 "#x"
#define N_PK	 "#k"

static const char *const lock_attrs[] = {"owner", "rvn", "fence", "leaseMs", "_type", "holder"};

static const char *const op_names[DDB_OP_COUNT] = {
	[DDB_UPDATE_ITEM] = "UpdateItem",
	[DDB_GET_ITEM] = "GetItem",
	[DDB_DELETE_ITEM] = "DeleteItem",
	[DDB_TRANSACT_WRITE_ITEMS] = "TransactWriteItems",
	[DDB_DESCRIBE_TABLE] = "DescribeTable",
	[DDB_CREATE_TABLE] = "CreateTable",
	[DDB_UPDATE_TIME_TO_LIVE] = "UpdateTimeToLive",
};

static const enum ddb_op store_ops[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = DDB_UPDATE_ITEM, [STORE_RENEW] = DDB_UPDATE_ITEM,
	[STORE_RELEASE] = DDB_UPDATE_ITEM, [STORE_READ] = DDB_GET_ITEM,
	[STORE_DELETE] = DDB_DELETE_ITEM,  [STORE_CHECK] = DDB_TRANSACT_WRITE_ITEMS,
};

const char *ddb_op_name(enum ddb_op op)
{
	return (unsigned)op < DDB_OP_COUNT ? op_names[op] : "?";
}

enum ddb_op ddb_op_for(enum store_op op)
{
	return (unsigned)op < STORE_OP_COUNT ? store_ops[op] : DDB_GET_ITEM;
}

static void errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errf(char *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, DDB_ERR_MAX, fmt, ap);
	va_end(ap);
}

bool ddb_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		unsigned c = p[i];
		size_t n;
		uint32_t cp;
		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			n = 1, cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			n = 2, cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			n = 3, cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= n)
			return false;
		for (size_t j = 1; j <= n; j++) {
			if ((p[i + j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + j] & 0x3F);
		}
		/* overlong forms, surrogates, past U+10FFFF */
		static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
		if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += n + 1;
	}
	return true;
}

static bool is_lock_attr(const char *name)
{
	for (size_t i = 0; i < sizeof lock_attrs / sizeof lock_attrs[0]; i++)
		if (strcmp(name, lock_attrs[i]) == 0)
			return true;
	return false;
}

static bool name_ok(const char *what, const char *name, char *err)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > DDB_KEY_NAME_MAX || !ddb_utf8_valid(name, n)) {
		errf(err, "%s must be 1..%d bytes of UTF-8", what, DDB_KEY_NAME_MAX);
		return false;
	}
	return true;
}

bool ddb_keys_valid(const struct ddb_keys *k, char *err)
{
	size_t n = k->table ? strlen(k->table) : 0;
	if (n < 3 || n > DDB_TABLE_NAME_MAX ||
	    strspn(k->table, "abcdefghijklmnopqrstuvwxyz"
			     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			     "0123456789_.-") != n) {
		errf(err, "table name '%.64s' must be 3..255 characters of a-z A-Z 0-9 _ . -",
		     k->table ? k->table : "");
		return false;
	}
	if (!name_ok("partition key name", k->pk, err))
		return false;
	if (k->sk && (!name_ok("sort key name", k->sk, err)))
		return false;
	if (k->sk && strcmp(k->sk, k->pk) == 0) {
		errf(err, "sort key '%.64s' is also the partition key", k->sk);
		return false;
	}
	if (is_lock_attr(k->pk) || (k->sk && is_lock_attr(k->sk))) {
		errf(err, "key attribute of table %s is named like a lock attribute", k->table);
		return false;
	}
	if (k->ttl_attr) {
		if (!name_ok("TTL attribute name", k->ttl_attr, err))
			return false;
		if (strcmp(k->ttl_attr, k->pk) == 0 || (k->sk && strcmp(k->ttl_attr, k->sk) == 0)) {
			errf(err, "TTL attribute '%.64s' is a key of table %s", k->ttl_attr,
			     k->table);
			return false;
		}
		if (is_lock_attr(k->ttl_attr)) {
			errf(err, "TTL attribute '%s' is an attribute of the lock item",
			     k->ttl_attr);
			return false;
		}
	}
	return true;
}

/* ---- cJSON construction with one out-of-memory flag ---- */

struct jb {
	bool oom;
};

static cJSON *jadd(struct jb *b, cJSON *parent, const char *key, cJSON *item)
{
	if (!item || !parent) {
		cJSON_Delete(item);
		b->oom = true;
		return NULL;
	}
	if (key ? !cJSON_AddItemToObject(parent, key, item) : !cJSON_AddItemToArray(parent, item)) {
		cJSON_Delete(item);
		b->oom = true;
		return NULL;
	}
	return item;
}

static cJSON *jobj(struct jb *b, cJSON *parent, const char *key)
{
	return jadd(b, parent, key, cJSON_CreateObject());
}

static void jstr(struct jb *b, cJSON *parent, const char *key, const char *val)
{
	jadd(b, parent, key, cJSON_CreateString(val));
}

/* "key": {"S" or "N": val} */
static void jattr(struct jb *b, cJSON *parent, const char *key, const char *type, const char *val)
{
	jstr(b, jobj(b, parent, key), type, val);
}

static void jnum(struct jb *b, cJSON *parent, const char *key, int64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRId64, v);
	jattr(b, parent, key, "N", buf);
}

static char *jprint(struct jb *b, cJSON *root, size_t *len, char *err)
{
	char *out = b->oom ? NULL : cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out) {
		errf(err, "out of memory building a request");
		return NULL;
	}
	*len = strlen(out);
	return out;
}

void ddb_body_free(char *body)
{
	cJSON_free(body);
}

/* "Key": {pk: {"S": "LOCK#name"}, sk: {"S": "LOCK"}} */
static void jkey(struct jb *b, cJSON *parent, const struct ddb_keys *k, const char *name)
{
	cJSON *key = jobj(b, parent, "Key");
	char *pk = NULL;
	size_t n = strlen(name);
	if (key && (pk = cJSON_malloc(n + 6))) {
		memcpy(pk, "LOCK#", 5);
		memcpy(pk + 5, name, n + 1);
		jattr(b, key, k->pk, "S", pk);
		cJSON_free(pk);
	} else {
		b->oom = true;
	}
	if (k->sk)
		jattr(b, key, k->sk, "S", "LOCK");
}

static bool str_ok(const char *what, const char *s, size_t max, char *err)
{
	size_t n = s ? strnlen(s, max + 1) : 0;
	if (n == 0 || n > max || !ddb_utf8_valid(s, n)) {
		errf(err, "%s must be 1..%zu bytes of UTF-8", what, max);
		return false;
	}
	return true;
}

/* The fields each operation needs, checked before anything is built. */
static bool req_valid(const struct store_req *r, char *err)
{
	if ((unsigned)r->op >= STORE_OP_COUNT) {
		errf(err, "unknown store operation %d", (int)r->op);
		return false;
	}
	if (!str_ok("lock name", r->name, STORE_NAME_MAX, err))
		return false;
	bool writes = r->op == STORE_ACQUIRE || r->op == STORE_RENEW;
	bool mine = writes || r->op == STORE_CHECK || (r->op == STORE_RELEASE && !r->unconditional);
	if (mine && !str_ok("owner", r->owner, STORE_ID_MAX, err))
		return false;
	if (writes && !str_ok("rvn", r->rvn, STORE_ID_MAX, err))
		return false;
	if (r->op == STORE_ACQUIRE && r->seen_rvn &&
	    !str_ok("seen rvn", r->seen_rvn, STORE_ID_MAX, err))
		return false;
	if (writes && r->holder && !str_ok("holder", r->holder, STORE_HOLDER_MAX, err))
		return false;
	if (writes && r->lease_ms <= 0) {
		errf(err, "lease must be positive, not %" PRId64 " ms", r->lease_ms);
		return false;
	}
	if (r->ttl < 0) {
		errf(err, "ttl must not be negative");
		return false;
	}
	return true;
}

/* The common frame of the three UpdateItems. */
struct update {
	struct jb *b;
	cJSON *names, *values;
	char expr[160];
	char cond[96];
};

static void add_name(struct update *u, const char *placeholder, const char *attr)
{
	jstr(u->b, u->names, placeholder, attr);
}

static char *build_update(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			  char *err)
{
	struct jb b = {0};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		b.oom = true;
	jstr(&b, root, "TableName", k->table);
	jkey(&b, root, k, r->name);
	struct update u = {.b = &b};
	u.names = jobj(&b, root, "ExpressionAttributeNames");
	u.values = jobj(&b, root, "ExpressionAttributeValues");
	bool ttl = k->ttl_attr && r->ttl > 0;
	if (ttl) {
		add_name(&u, N_TTL, k->ttl_attr);
		jnum(&b, u.values, ":x", r->ttl);
	}
	if (r->op == STORE_RELEASE) {
		add_name(&u, N_OWNER, "owner");
		add_name(&u, N_LEASE, "leaseMs");
		add_name(&u, N_HOLDER, "holder");
		snprintf(u.expr, sizeof u.expr, "REMOVE #o, #l, #h%s", ttl ? " SET #x = :x" : "");
		if (r->unconditional) {
			/* never create an item: a bare key would be no lock */
			add_name(&u, N_PK, k->pk);
			snprintf(u.cond, sizeof u.cond, "attribute_exists(#k)");
		} else {
			jattr(&b, u.values, ":o", "S", r->owner);
			snprintf(u.cond, sizeof u.cond, "#o = :o");
		}
	} else {
		bool acquire = r->op == STORE_ACQUIRE;
		add_name(&u, N_OWNER, "owner");
		add_name(&u, N_RVN, "rvn");
		add_name(&u, N_LEASE, "leaseMs");
		add_name(&u, N_HOLDER, "holder");
		jattr(&b, u.values, ":r", "S", r->rvn);
		jnum(&b, u.values, ":l", r->lease_ms);
		if (r->holder)
			jattr(&b, u.values, ":h", "S", r->holder);
		if (acquire) {
			add_name(&u, N_TYPE, "_type");
			add_name(&u, N_FENCE, "fence");
			jattr(&b, u.values, ":o", "S", r->owner);
			jattr(&b, u.values, ":t", "S", "LOCK");
			jnum(&b, u.values, ":one", 1);
		} else {
			jattr(&b, u.values, ":o", "S", r->owner);
		}
		snprintf(u.expr, sizeof u.expr, "SET %s#r = :r, #l = :l%s%s%s%s",
			 acquire ? "#o = :o, #t = :t, " : "", r->holder ? ", #h = :h" : "",
			 ttl ? ", #x = :x" : "", r->holder ? "" : " REMOVE #h",
			 acquire ? " ADD #f :one" : "");
		if (!acquire)
			snprintf(u.cond, sizeof u.cond, "#o = :o");
		else if (!r->unconditional)
			snprintf(u.cond, sizeof u.cond, "attribute_not_exists(#o) OR #o = :o%s",
				 r->seen_rvn ? " OR #r = :s" : "");
		if (acquire && !r->unconditional && r->seen_rvn)
			jattr(&b, u.values, ":s", "S", r->seen_rvn);
	}
	jstr(&b, root, "UpdateExpression", u.expr);
	if (u.cond[0]) {
		jstr(&b, root, "ConditionExpression", u.cond);
		jstr(&b, root, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	}
	jstr(&b, root, "ReturnValues", "ALL_NEW");
	if (u.values && !u.values->child) /* DynamoDB refuses an empty map */
		cJSON_DeleteItemFromObjectCaseSensitive(root, "ExpressionAttributeValues");
	return jprint(&b, root, len, err);
}

static char *build_check(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			 char *err)
{
	struct jb b = {0};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		b.oom = true;
	cJSON *items = jadd(&b, root, "TransactItems", cJSON_CreateArray());
	cJSON *cc = jobj(&b, jobj(&b, items, NULL), "ConditionCheck");
	jstr(&b, cc, "TableName", k->table);
	jkey(&b, cc, k, r->name);
	jstr(&b, cc, "ConditionExpression", "#o = :o AND #f = :f");
	cJSON *names = jobj(&b, cc, "ExpressionAttributeNames");
	jstr(&b, names, N_OWNER, "owner");
	jstr(&b, names, N_FENCE, "fence");
	cJSON *values = jobj(&b, cc, "ExpressionAttributeValues");
	jattr(&b, values, ":o", "S", r->owner);
	jnum(&b, values, ":f", r->token);
	jstr(&b, cc, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	return jprint(&b, root, len, err);
}

static char *build_keyed(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			 char *err)
{
	struct jb b = {0};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		b.oom = true;
	jstr(&b, root, "TableName", k->table);
	jkey(&b, root, k, r->name);
	if (r->op == STORE_READ)
		jadd(&b, root, "ConsistentRead", cJSON_CreateTrue());
	return jprint(&b, root, len, err);
}

typedef char *(*build_fn)(const struct ddb_keys *, const struct store_req *, size_t *, char *);

static const build_fn builders[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = build_update, [STORE_RENEW] = build_update,
	[STORE_RELEASE] = build_update, [STORE_READ] = build_keyed,
	[STORE_DELETE] = build_keyed,	[STORE_CHECK] = build_check,
};

char *ddb_build_request(const struct ddb_keys *k, const struct store_req *req, size_t *len,
			char *err)
{
	if (!req_valid(req, err))
		return NULL;
	return builders[req->op](k, req, len, err);
}

char *ddb_build_describe_table(const char *table, size_t *len, char *err)
{
	struct jb b = {0};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		b.oom = true;
	jstr(&b, root, "TableName", table);
	return jprint(&b, root, len, err);
}

static void key_schema(struct jb *b, cJSON *defs, cJSON *schema, const char *attr, const char *kind)
{
	cJSON *d = jobj(b, defs, NULL);
	jstr(b, d, "AttributeName", attr);
	jstr(b, d, "AttributeType", "S");
	cJSON *s = jobj(b, schema, NULL);
	jstr(b, s, "AttributeName", attr);
	jstr(b, s, "KeyType", kind);
}

char *ddb_build_create_table(const struct ddb_keys *k, size_t *len, char *err)
{
	struct jb b = {0};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		b.oom = true;
	jstr(&b, root, "TableName", k->table);
	jstr(&b, root, "BillingMode", "PAY_PER_REQUEST");
	cJSON *defs = jadd(&b, root, "AttributeDefinitions", cJSON_CreateArray());
	cJSON *schema = jadd(&b, root, "KeySchema", cJSON_CreateArray());
	key_schema(&b, defs, schema, k->pk, "HASH");
	if (k->sk)
		key_schema(&b, defs, schema, k->sk, "RANGE");
	return jprint(&b, root, len, err);
}

char *ddb_build_update_ttl(const char *table, const char *ttl_attr, size_t *len, char *err)
{
	struct jb b = {0};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		b.oom = true;
	jstr(&b, root, "TableName", table);
	cJSON *spec = jobj(&b, root, "TimeToLiveSpecification");
	jadd(&b, spec, "Enabled", cJSON_CreateTrue());
	jstr(&b, spec, "AttributeName", ttl_attr);
	return jprint(&b, root, len, err);
}

/* Reflected CRC-32, polynomial 0xEDB88320, table built on first use. */
uint32_t ddb_crc32(const void *data, size_t len)
{
	static uint32_t table[256];
	static bool ready;
	if (!ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int j = 0; j < 8; j++)
				c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		ready = true;
	}
	const unsigned char *p = data;
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < len; i++)
		c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}
