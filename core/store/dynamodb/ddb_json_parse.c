/*
 * ddb_json_parse.c: DynamoDB responses into leasegate's structs (see
 * ddb_json.h), and the cursors of a Scan. Every attribute used is checked
 * for its type and bounded; a DynamoDB answer is input like any other.
 */
#include "core/store/dynamodb/ddb_json.h"
#include "core/store/dynamodb/ddb_json_int.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool ddb_parse_int64(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	const char *p = s + neg;
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (*p == '\0')
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* An attribute's name as printed in a message (which is shorter). */
static int name_len(const struct ddb_attr *a)
{
	return a->nlen < DDB_ERR_MAX ? (int)a->nlen : DDB_ERR_MAX;
}

/* Whether a is exactly of type want ({"S": "..."}): false with err set
 * when not. */
static bool typed(const struct ddb_attr *a, const char *want, char *err)
{
	size_t n = strlen(want);
	if (!a->type || a->tlen != n || memcmp(a->type, want, n) != 0) {
		ddb_errf(err, "attribute %.*s is not of type %s", name_len(a), a->name, want);
		return false;
	}
	return true;
}

static bool get_str(const struct ddb_attr *a, char *dst, size_t cap, bool *has, char *err)
{
	if (!typed(a, "S", err))
		return false;
	if (a->vlen + 1 > cap) {
		ddb_errf(err, "attribute %.*s is longer than %zu bytes", name_len(a), a->name,
			 cap - 1);
		return false;
	}
	memcpy(dst, a->val, a->vlen);
	dst[a->vlen] = '\0';
	if (has)
		*has = true;
	return true;
}

static bool get_num(const struct ddb_attr *a, int64_t *dst, bool *has, char *err)
{
	if (!typed(a, "N", err))
		return false;
	char s[21];
	bool fits = a->vlen < sizeof s;
	if (fits) {
		memcpy(s, a->val, a->vlen);
		s[a->vlen] = '\0';
	}
	if (!fits || !ddb_parse_int64(s, dst)) {
		ddb_errf(err, "attribute %.*s is not an integer: '%.*s'", name_len(a), a->name,
			 a->vlen < 24 ? (int)a->vlen : 24, a->val);
		return false;
	}
	if (has)
		*has = true;
	return true;
}

static bool is_string(const struct ddb_attr *a)
{
	return a->type && a->tlen == 1 && a->type[0] == 'S';
}

/* The fence as read: a value that is no int64 is no error here but
 * fence_bad, so that the core refuses the item by its lock's name and says
 * what is wrong with it (core/lt_item.c), instead of a bad answer. */
static bool get_fence(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	item->has_fence = true;
	if (!get_num(a, &item->fence, NULL, ignored)) {
		item->fence = 0;
		item->fence_bad = true;
	}
	return true;
}

/* _type as read: another application's item may have any value here. A
 * string is kept (cut to fit: a cut string is longer than "LOCK"), any
 * other type reads as empty; neither is "LOCK", so the core refuses it. */
static bool get_type(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	size_t n = 0;
	if (is_string(a)) {
		n = a->vlen < sizeof item->type - 1 ? a->vlen : sizeof item->type - 1;
		memcpy(item->type, a->val, n);
	}
	item->type[n] = '\0';
	return true;
}

/* freed and freedBy as read (store.h's RELEASE): only leasegate writes
 * them, but an item edited by hand is no reason to refuse the answer; a
 * freed that is no int64 reads as none, a freedBy other than the string
 * "force" as not forced. */
static bool get_freed(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_num(a, &item->freed, NULL, ignored))
		item->freed = 0;
	return true;
}

/* scount (store_shared.h): a count that is no number reads as none */
static bool get_scount(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_num(a, &item->scount, NULL, ignored) || item->scount < 0)
		item->scount = 0;
	return true;
}

static bool get_freed_by(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	item->freed_forced = is_string(a) && a->vlen == 5 && memcmp(a->val, "force", 5) == 0;
	return true;
}

static bool get_owner(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_str(a, item->owner, sizeof item->owner, &item->has_owner, err);
}
static bool get_rvn(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_str(a, item->rvn, sizeof item->rvn, &item->has_rvn, err);
}
static bool get_holder(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_str(a, item->holder, sizeof item->holder, NULL, err);
}
static bool get_lease(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_num(a, &item->lease_ms, &item->has_lease, err);
}
static bool get_waiter(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_str(a, item->waiter, sizeof item->waiter, &item->has_waiter, err);
}
static bool get_waiter_ms(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_num(a, &item->waiter_ms, NULL, err);
}

/* A script's expiry (core/store/store_kv.h): as freed, an item edited by hand
 * reads as none rather than failing the answer. */
static bool get_expires(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_num(a, &item->expires_at, NULL, ignored))
		item->expires_at = 0;
	return true;
}
static bool get_exp_rvn(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_str(a, item->exp_rvn, sizeof item->exp_rvn, NULL, ignored))
		item->exp_rvn[0] = '\0';
	return true;
}

/* secretHash as read: anything but 64 lowercase hex digits reads as "?",
 * a hash no secret has (an item edited by hand keeps its lease guarded). */
static bool get_secret_hash(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	bool ok = is_string(a) && a->vlen == STORE_SECRET_HASH_LEN;
	for (size_t i = 0; ok && i < a->vlen; i++)
		ok = (a->val[i] >= '0' && a->val[i] <= '9') ||
		     (a->val[i] >= 'a' && a->val[i] <= 'f');
	if (ok) {
		memcpy(item->secret_hash, a->val, a->vlen);
		item->secret_hash[a->vlen] = '\0';
	} else {
		memcpy(item->secret_hash, "?", 2);
	}
	return true;
}

/* orphan and adoptedFrom (store.h's ORPHAN, ADOPT): owner ids; another
 * form, from an item edited by hand, reads as none. */
static bool get_orphan(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_str(a, item->orphan, sizeof item->orphan, NULL, ignored))
		item->orphan[0] = '\0';
	return true;
}
static bool get_adopted_from(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_str(a, item->adopted_from, sizeof item->adopted_from, NULL, ignored))
		item->adopted_from[0] = '\0';
	return true;
}

/* A script's hash (core/store_kv.h): as expRvn, none when unreadable. */
static bool get_hash(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	char ignored[DDB_ERR_MAX];
	if (!get_str(a, item->hash, sizeof item->hash, NULL, ignored))
		item->hash[0] = '\0';
	return true;
}

/* rwaiters and radmit (store_shared.h): present when a string set */
static bool get_rwaiters(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	item->rwaiters = a->type != NULL && a->tlen == 2 && memcmp(a->type, "SS", 2) == 0;
	return true;
}

static bool get_radmit(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	item->radmit = a->type != NULL && a->tlen == 2 && memcmp(a->type, "SS", 2) == 0;
	return true;
}

/* session and sleaseMs (store.h's session mode): read as strictly as owner
 * and leaseMs, which they stand beside */
static bool get_session(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	return get_str(a, item->session, sizeof item->session, NULL, err);
}
static bool get_slease(struct lock_item *item, const struct ddb_attr *a, char *err)
{
	if (!get_num(a, &item->slease_ms, NULL, err))
		return false;
	if (item->slease_ms <= 0) {
		ddb_errf(err, "attribute sleaseMs is not positive");
		return false;
	}
	return true;
}

/* The attributes of a lock item (docs/lease-rules.md); any other is
 * ignored, but for the TTL attribute when one is configured. */
static const struct {
	const char *name;
	size_t len;
	bool (*read)(struct lock_item *item, const struct ddb_attr *a, char *err);
} item_attrs[] = {
	{"owner", 5, get_owner},
	{"rvn", 3, get_rvn},
	{"holder", 6, get_holder},
	{"_type", 5, get_type},
	{"fence", 5, get_fence},
	{"leaseMs", 7, get_lease},
	{"waiter", 6, get_waiter},
	{"waiterMs", 8, get_waiter_ms},
	{"freed", 5, get_freed},
	{"freedBy", 7, get_freed_by},
	{"expAt", 5, get_expires},
	{"expRvn", 6, get_exp_rvn},
	{"secretHash", 10, get_secret_hash},
	{"orphan", 6, get_orphan},
	{"adoptedFrom", 11, get_adopted_from},
	{"hfields", 7, get_hash},
	{"scount", 6, get_scount},
	{"rwaiters", 8, get_rwaiters},
	{"radmit", 6, get_radmit},
	{"session", 7, get_session},
	{"sleaseMs", 8, get_slease},
};

bool ddb_item_attr(struct lock_item *item, const struct ddb_attr *a, const char *ttl_attr,
		   char *err)
{
	for (size_t i = 0; i < sizeof item_attrs / sizeof item_attrs[0]; i++)
		if (a->nlen == item_attrs[i].len &&
		    memcmp(a->name, item_attrs[i].name, a->nlen) == 0)
			return item_attrs[i].read(item, a, err);
	if (ttl_attr && a->nlen == strlen(ttl_attr) && memcmp(a->name, ttl_attr, a->nlen) == 0)
		return get_num(a, &item->ttl, NULL, err);
	return true;
}

bool ddb_item_end(struct lock_item *item, char *err)
{
	if (item->freed == 0)
		item->freed_forced = false; /* how, only with what */
	if (item->has_lease && item->lease_ms <= 0) {
		ddb_errf(err, "attribute leaseMs is not positive");
		return false;
	}

	return true;
}

bool ddb_parse_item(const void *cjson, const char *ttl_attr, struct lock_item *item, char *err)
{
	const cJSON *map = cjson;
	memset(item, 0, sizeof *item);
	if (!cJSON_IsObject(map)) {
		ddb_errf(err, "item is not a JSON object");
		return false;
	}
	item->exists = true;
	for (const cJSON *a = map->child; a; a = a->next) {
		if (!a->string)
			continue;
		const cJSON *v = cJSON_IsObject(a) ? a->child : NULL;
		bool one = v && !v->next && v->string && cJSON_IsString(v) && v->valuestring;
		struct ddb_attr at = {.name = a->string, .nlen = strlen(a->string)};
		if (one) {
			at.type = v->string, at.tlen = strlen(v->string);
			at.val = v->valuestring, at.vlen = strlen(v->valuestring);
		} else if (v && !v->next && v->string && cJSON_IsArray(v)) {
			/* a set or list: its type alone (get_set); never "S" or
			 * "N" with a value, so no other reader takes it */
			at.type = v->string, at.tlen = strlen(v->string);
			at.val = "", at.vlen = 0;
		}
		if (!ddb_item_attr(item, &at, ttl_attr, err))
			return false;
	}
	return ddb_item_end(item, err);
}

static cJSON *parse_body(const char *body, size_t len, char *err)
{
	cJSON *root = body ? cJSON_ParseWithLength(body, len) : NULL;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		/* body is counted, not NUL-terminated: at most 40 of its bytes */
		int shown = body == NULL ? 0 : len < 40 ? (int)len : 40;
		ddb_errf(err, "response is not a JSON object: '%.*s'", shown, body ? body : "");
		return NULL;
	}
	return root;
}

bool ddb_parse_output(enum ddb_op op, const char *body, size_t len, const char *ttl_attr,
		      struct lock_item *item, char *err)
{
	enum ddb_fast f = ddb_fast_output(op, body, len, ttl_attr, item, err);
	if (f != DDB_FAST_OTHER)
		return f == DDB_FAST_OK;
	return ddb_parse_output_cjson(op, body, len, ttl_attr, item, err);
}

bool ddb_parse_output_cjson(enum ddb_op op, const char *body, size_t len, const char *ttl_attr,
			    struct lock_item *item, char *err)
{
	memset(item, 0, sizeof *item);
	const char *member = op == DDB_UPDATE_ITEM ? "Attributes"
			     : op == DDB_GET_ITEM  ? "Item"
						   : NULL;
	cJSON *root = parse_body(body, len, err);
	if (!root)
		return false;
	bool ok = true;
	const cJSON *map = member ? cJSON_GetObjectItemCaseSensitive(root, member) : NULL;
	if (map)
		ok = ddb_parse_item(map, ttl_attr, item, err);
	else if (op == DDB_UPDATE_ITEM)
		ok = false, ddb_errf(err, "UpdateItem response without Attributes");
	cJSON_Delete(root);
	return ok;
}

void ddb_copy_text(char *dst, size_t cap, const char *src, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < cap; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[j++] = (c < 0x20 || c == 0x7F) ? ' ' : (char)c;
	}
	dst[j] = '\0';
}

/* "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" ->
 * "ResourceNotFoundException". Some services append ":http://..." too.
 * t[0..n) holds no NUL. */
void ddb_error_set_type(struct ddb_error *e, const char *t, size_t n)
{
	const char *hash = memrchr(t, '#', n);
	if (hash) {
		n -= (size_t)(hash + 1 - t);
		t = hash + 1;
	}
	const char *colon = memchr(t, ':', n);
	ddb_copy_text(e->type, sizeof e->type, t, colon ? (size_t)(colon - t) : n);
}

static void set_type(struct ddb_error *e, const char *t)
{
	ddb_error_set_type(e, t, strlen(t));
}

/* The text of the first <tag>...</tag> in xml, entities decoded. */
static bool xml_text(const char *xml, size_t len, const char *tag, char *dst, size_t cap)
{
	char open[32], close[32];
	snprintf(open, sizeof open, "<%s>", tag);
	snprintf(close, sizeof close, "</%s>", tag);
	const char *s = memmem(xml, len, open, strlen(open));
	if (!s)
		return false;
	s += strlen(open);
	const char *e = memmem(s, len - (size_t)(s - xml), close, strlen(close));
	if (!e)
		return false;
	static const struct {
		const char *ent;
		char c;
	} ents[] = {
		{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	size_t j = 0;
	while (s < e && j + 1 < cap) {
		char c = *s++;
		if (c == '&') {
			for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++) {
				size_t n = strlen(ents[i].ent) - 1;
				if ((size_t)(e - s) >= n && memcmp(s, ents[i].ent + 1, n) == 0) {
					c = ents[i].c;
					s += n;
					break;
				}
			}
		}
		dst[j++] = ((unsigned char)c < 0x20) ? ' ' : c;
	}
	dst[j] = '\0';
	return true;
}

static bool parse_reasons(const cJSON *list, const char *ttl_attr, struct ddb_error *out, char *err)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, list)
	{
		if (out->nreasons == DDB_REASONS_MAX)
			break;
		struct ddb_reason *dst = &out->reasons[out->nreasons++];
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "Code");
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(r, "Item");
		if (cJSON_IsString(code))
			ddb_copy_text(dst->code, sizeof dst->code, code->valuestring,
				      strlen(code->valuestring));
		if (item) {
			if (!ddb_parse_item(item, ttl_attr, &dst->item, err))
				return false;
			dst->has_item = true;
		}
	}
	return true;
}

bool ddb_parse_error(const char *body, size_t len, const char *ttl_attr, struct ddb_error *out,
		     char *err)
{
	enum ddb_fast f = body ? ddb_fast_error(body, len, ttl_attr, out, err) : DDB_FAST_OTHER;
	if (f != DDB_FAST_OTHER)
		return f == DDB_FAST_OK;
	return ddb_parse_error_cjson(body, len, ttl_attr, out, err);
}

bool ddb_parse_error_cjson(const char *body, size_t len, const char *ttl_attr,
			   struct ddb_error *out, char *err)
{
	memset(out, 0, sizeof *out);
	if (!body)
		return true;
	size_t skip = strspn(body, " \t\r\n");
	if (skip < len && body[skip] == '<') {
		char code[DDB_TYPE_MAX];
		if (xml_text(body, len, "Code", code, sizeof code))
			set_type(out, code);
		if (!xml_text(body, len, "Message", out->message, sizeof out->message))
			ddb_copy_text(out->message, sizeof out->message, body, len);
		return true;
	}
	char ignored[DDB_ERR_MAX];
	cJSON *root = parse_body(body, len, ignored);
	if (!root) {
		ddb_copy_text(out->message, sizeof out->message, body, len);
		return true;
	}
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "__type");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
	if (!cJSON_IsString(m))
		m = cJSON_GetObjectItemCaseSensitive(root, "Message");
	if (cJSON_IsString(t))
		set_type(out, t->valuestring);
	if (cJSON_IsString(m))
		ddb_copy_text(out->message, sizeof out->message, m->valuestring,
			      strlen(m->valuestring));
	bool ok = true;
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "Item");
	if (item) {
		ok = ddb_parse_item(item, ttl_attr, &out->item, err);
		out->has_item = ok;
	}
	const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(root, "CancellationReasons");
	if (ok && cJSON_IsArray(reasons))
		ok = parse_reasons(reasons, ttl_attr, out, err);
	cJSON_Delete(root);
	return ok;
}

static bool copy_name(char *dst, size_t cap, const cJSON *v)
{
	if (!cJSON_IsString(v))
		return false;
	size_t n = strlen(v->valuestring);
	if (n == 0 || n >= cap)
		return false;
	memcpy(dst, v->valuestring, n + 1);
	return true;
}

/* Appends name to the comma list in out (cap bytes), as much as fits. */
static void add_region(char *out, size_t cap, const char *name)
{
	size_t n = strlen(out);
	if (n + 2 >= cap)
		return;
	if (n > 0)
		out[n++] = ',';
	ddb_copy_text(out + n, cap - n, name, strlen(name));
}

/* The table's ARN and what says it is a global table: Replicas (their
 * regions) and GlobalTableVersion. */
static void parse_global(const cJSON *t, struct ddb_table_desc *out)
{
	const cJSON *arn = cJSON_GetObjectItemCaseSensitive(t, "TableArn");
	if (cJSON_IsString(arn))
		ddb_copy_text(out->arn, sizeof out->arn, arn->valuestring,
			      strlen(arn->valuestring));
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "GlobalTableVersion");
	if (cJSON_IsString(v))
		ddb_copy_text(out->global_version, sizeof out->global_version, v->valuestring,
			      strlen(v->valuestring));
	const cJSON *r, *reps = cJSON_GetObjectItemCaseSensitive(t, "Replicas");
	if (!cJSON_IsArray(reps))
		return;
	cJSON_ArrayForEach(r, reps)
	{
		const cJSON *rn = cJSON_GetObjectItemCaseSensitive(r, "RegionName");
		out->nreplicas++;
		add_region(out->replicas, sizeof out->replicas,
			   cJSON_IsString(rn) ? rn->valuestring : "?");
	}
}

bool ddb_parse_table(const char *body, size_t len, struct ddb_table_desc *out, char *err)
{
	memset(out, 0, sizeof *out);
	cJSON *root = parse_body(body, len, err);
	if (!root)
		return false;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "Table");
	if (!t)
		t = cJSON_GetObjectItemCaseSensitive(root, "TableDescription");
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(t, "KeySchema");
	const cJSON *defs = cJSON_GetObjectItemCaseSensitive(t, "AttributeDefinitions");
	bool ok = cJSON_IsArray(schema) && cJSON_GetArraySize(schema) >= 1 &&
		  cJSON_GetArraySize(schema) <= 2;
	const cJSON *k, *none = NULL;
	cJSON_ArrayForEach(k, (ok ? schema : none))
	{
		const cJSON *kt = cJSON_GetObjectItemCaseSensitive(k, "KeyType");
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(k, "AttributeName");
		bool hash = cJSON_IsString(kt) && strcmp(kt->valuestring, "HASH") == 0;
		bool range = cJSON_IsString(kt) && strcmp(kt->valuestring, "RANGE") == 0;
		char *dst = hash ? out->pk : range ? out->sk : NULL;
		if (!dst || dst[0] || !copy_name(dst, DDB_KEY_NAME_MAX + 1, an))
			ok = false;
	}
	ok = ok && out->pk[0];
	const cJSON *d;
	cJSON_ArrayForEach(d, (ok ? defs : none))
	{
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(d, "AttributeName");
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(d, "AttributeType");
		if (!cJSON_IsString(an) || !cJSON_IsString(at) || strlen(at->valuestring) != 1)
			continue;
		if (strcmp(an->valuestring, out->pk) == 0)
			out->pk_type = at->valuestring[0];
		else if (out->sk[0] && strcmp(an->valuestring, out->sk) == 0)
			out->sk_type = at->valuestring[0];
	}
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(t, "TableStatus");
	if (cJSON_IsString(st))
		ddb_copy_text(out->status, sizeof out->status, st->valuestring,
			      strlen(st->valuestring));
	parse_global(t, out);
	if (!ok)
		ddb_errf(err, "table description without a valid KeySchema");
	cJSON_Delete(root);
	return ok;
}

/* ---- Scan ---- */

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Appends the base64url (no padding) of s to out at *pos, within cap
 * (with its NUL); false when it does not fit. */
static bool b64_put(const char *s, char *out, size_t *pos, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), need = (n * 4 + 2) / 3;
	if (*pos + need + 1 > cap)
		return false;
	char *o = out + *pos;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = b64url[v >> 18 & 63];
		*o++ = b64url[v >> 12 & 63];
		if (i + 1 < n)
			*o++ = b64url[v >> 6 & 63];
		if (i + 2 < n)
			*o++ = b64url[v & 63];
	}
	*o = '\0';
	*pos += need;
	return true;
}

/* Decodes n characters of base64url (no padding) into out (at most max
 * bytes and a NUL): false on a bad character or length, more than max
 * bytes, NUL bytes, bits past the end, or no valid UTF-8. */
static bool b64_get(const char *s, size_t n, char *out, size_t max)
{
	size_t len = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
	if (n == 0 || n % 4 == 1 || len > max)
		return false;
	uint32_t v = 0;
	size_t bits = 0, o = 0;
	for (size_t i = 0; i < n; i++) {
		const char *d = memchr(b64url, s[i], 64);
		if (!d || !s[i])
			return false;
		v = v << 6 | (uint32_t)(d - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(v >> bits & 0xFF);
		}
	}
	if (v & ((1u << bits) - 1)) /* not the canonical form */
		return false;
	out[o] = '\0';
	return memchr(out, 0, o) == NULL && ddb_utf8_valid(out, o);
}

bool ddb_scan_cursor_key(const struct ddb_keys *k, const char *cursor, char *pk, char *sk)
{
	if (cursor[0] != '~') {
		char name[STORE_NAME_MAX + 1];
		if (!store_cursor_name(cursor, name) || !ddb_utf8_valid(name, strlen(name)))
			return false;
		snprintf(pk, DDB_PK_MAX + 1, "LOCK#%s", name);
		if (k->sk)
			strcpy(sk, "LOCK");
		return true;
	}
	const char *p = cursor + 1, *dot = strchr(p, '.');
	if ((dot != NULL) != (k->sk != NULL))
		return false;
	size_t n = dot ? (size_t)(dot - p) : strlen(p);
	return b64_get(p, n, pk, DDB_PK_MAX) &&
	       (!dot || b64_get(dot + 1, strlen(dot + 1), sk, DDB_SK_MAX));
}

/* The string value of key attribute name in map, or NULL. */
static const char *key_value(const cJSON *map, const char *name)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(map, name);
	const cJSON *v = cJSON_IsObject(a) ? a->child : NULL;
	if (!v || v->next || !v->string || strcmp(v->string, "S") != 0 || !cJSON_IsString(v))
		return NULL;
	return v->valuestring;
}

/* The lock name of a key: pk LOCK#<name>, name 1..STORE_NAME_MAX bytes
 * of UTF-8 (as every lock name is), and sk LOCK when the table has a sort
 * key. NULL for another key. */
static const char *lock_name(const struct ddb_keys *k, const char *pk, const char *sk)
{
	if (!pk || strncmp(pk, "LOCK#", 5) != 0 || pk[5] == '\0' ||
	    strlen(pk + 5) > STORE_NAME_MAX || !ddb_utf8_valid(pk + 5, strlen(pk + 5)))
		return NULL;
	if (k->sk && (!sk || strcmp(sk, "LOCK") != 0))
		return NULL;
	return pk + 5;
}

static bool scan_cursor(const struct ddb_keys *k, const cJSON *last, char *cursor, char *err)
{
	const char *pk = key_value(last, k->pk), *sk = k->sk ? key_value(last, k->sk) : NULL;
	/* a DynamoDB key is a non-empty string of UTF-8: anything else is no
	 * key to start from */
	if (!cJSON_IsObject(last) || !pk || !pk[0] || (k->sk && (!sk || !sk[0])) ||
	    !ddb_utf8_valid(pk, strlen(pk)) || (sk && !ddb_utf8_valid(sk, strlen(sk)))) {
		ddb_errf(err, "LastEvaluatedKey without the string keys of table %s", k->table);
		return false;
	}
	const char *name = lock_name(k, pk, sk);
	if (name) {
		store_cursor_of(name, cursor);
		return true;
	}
	/* DynamoDB's largest keys (2048 and 1024 bytes) fit: 1 + 2731 + 1 + 1366 */
	size_t pos = 1;
	cursor[0] = '~';
	bool fits = b64_put(pk, cursor, &pos, STORE_CURSOR_MAX + 1);
	if (fits && sk) {
		cursor[pos++] = '.';
		fits = b64_put(sk, cursor, &pos, STORE_CURSOR_MAX + 1);
	}
	if (!fits)
		ddb_errf(err, "LastEvaluatedKey of table %s is longer than a cursor", k->table);
	return fits;
}

bool ddb_parse_scan(const char *body, size_t len, const struct ddb_keys *k, unsigned max,
		    struct store_scan_result *res, char *err)
{
	res->count = 0;
	res->cursor[0] = '\0';
	cJSON *root = parse_body(body, len, err);
	if (!root)
		return false;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "Items");
	const cJSON *last = cJSON_GetObjectItemCaseSensitive(root, "LastEvaluatedKey");
	bool ok = cJSON_IsArray(items);
	if (!ok)
		ddb_errf(err, "Scan response without Items");
	else if ((unsigned)cJSON_GetArraySize(items) > max)
		ok = false, ddb_errf(err, "Scan response with more than %u Items", max);
	const cJSON *it, *none = NULL;
	cJSON_ArrayForEach(it, (ok ? items : none))
	{
		const char *name =
			lock_name(k, key_value(it, k->pk), k->sk ? key_value(it, k->sk) : NULL);
		if (!name)
			continue; /* not a lock's key: the filter lets none through */
		struct store_scan_entry *e = &res->entries[res->count];
		char ierr[DDB_ERR_MAX];
		if (!ddb_parse_item(it, k->ttl_attr, &e->item, ierr)) {
			ddb_errf(err, "lock %.64s: %s", name, ierr);
			ok = false;
			break;
		}
		strcpy(e->name, name);
		res->count++;
	}
	if (ok && last)
		ok = scan_cursor(k, last, res->cursor, err);
	if (!ok) {
		res->count = 0;
		res->cursor[0] = '\0';
	}
	cJSON_Delete(root);
	return ok;
}
