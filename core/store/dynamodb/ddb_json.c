/*
 * ddb_json.c: request bodies (see ddb_json.h). The parsers of responses are
 * in ddb_json_parse.c.
 *
 * Every body is written by struct jw, a JSON writer into one buffer whose
 * out-of-memory flag, once set, stays set, so the builders stay
 * straight-line and check once at the end.
 */
#include "core/store/dynamodb/ddb_json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lock attributes: placeholder and name, in one place. */
#define N_OWNER	   "#o"
#define N_RVN	   "#r"
#define N_FENCE	   "#f"
#define N_LEASE	   "#l"
#define N_TYPE	   "#t"
#define N_HOLDER   "#h"
#define N_TTL	   "#x"
#define N_PK	   "#k"
#define N_WAITER   "#w"
#define N_WAITMS   "#wm"
#define N_FREED	   "#fr"
#define N_FREEDBY  "#fb"
#define N_ARVN	   "#a"
#define N_SECRET   "#sh"
#define N_ORPHAN   "#or"
#define N_ADOPTED  "#af"
#define N_RWAITERS "#rw"
#define N_RADMIT   "#ra"
#define N_SESSION  "#se"
#define N_SLEASE   "#sl"

/* radmit after a release that admitted nobody: a string, not a set
 * (DynamoDB has no empty set), so that a release needs no condition on
 * rwaiters (core/store/store_shared.h) */
#define NO_READERS "-"

/* The acquire's condition that the item, if there is one, is a lock a write
 * may raise (store.h): _type LOCK, a fence absent or from 0 to INT64_MAX - 1,
 * an owner only with rvn and leaseMs, no slot held shared (scount
 * absent or 0: core/store/store_shared.h) and no readers admitted by the
 * last release (radmit not a string set). Without it, the write would land
 * on another application's item, ADD would take a fence past int64, an
 * exclusive holder would join readers, or overtake the readers admitted.
 * attribute_type comes first: comparing another type with a number is an
 * error on moto, not false. */
#define LOCK_GUARD                                                                                 \
	"(attribute_not_exists(#k) OR (#t = :t AND (attribute_not_exists(#f) OR "                  \
	"(attribute_type(#f, :n) AND #f >= :f0 AND #f < :ftop)) AND (attribute_not_exists(#o) "    \
	"OR (attribute_exists(#r) AND attribute_exists(#l))) AND (attribute_not_exists(#sc) OR "   \
	"#sc = :f0) AND NOT attribute_type(#ra, :ss)))"

/* An acquire's condition that the item's arvn (the rvn of the acquire that
 * last wrote it) is not its own: no attempt of it lands after the lease it
 * took (ACQUIRE in store.h). */
#define NOT_MY_ARVN "(attribute_not_exists(#a) OR #a <> :r)"

static const char *const lock_attrs[] = {
	"owner",  "rvn",	"fence",    "leaseMs",	   "_type",   "holder",
	"waiter", "waiterMs",	"freed",    "freedBy",	   "expAt",   "expRvn",
	"arvn",	  "secretHash", "orphan",   "adoptedFrom", "hfields", "scount",
	"smode",  "slimit",	"rwaiters", "radmit",	   "session", "sleaseMs"};

static const char *const op_names[DDB_OP_COUNT] = {
	[DDB_UPDATE_ITEM] = "UpdateItem",
	[DDB_GET_ITEM] = "GetItem",
	[DDB_DELETE_ITEM] = "DeleteItem",
	[DDB_TRANSACT_WRITE_ITEMS] = "TransactWriteItems",
	[DDB_DESCRIBE_TABLE] = "DescribeTable",
	[DDB_CREATE_TABLE] = "CreateTable",
	[DDB_UPDATE_TIME_TO_LIVE] = "UpdateTimeToLive",
	[DDB_SCAN] = "Scan",
	[DDB_BATCH_GET_ITEM] = "BatchGetItem",
	[DDB_QUERY] = "Query",
};

static const enum ddb_op store_ops[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = DDB_UPDATE_ITEM,
	[STORE_RENEW] = DDB_UPDATE_ITEM,
	[STORE_RELEASE] = DDB_UPDATE_ITEM,
	[STORE_READ] = DDB_GET_ITEM,
	[STORE_DELETE] = DDB_DELETE_ITEM,
	[STORE_CHECK] = DDB_TRANSACT_WRITE_ITEMS,
	[STORE_ANNOUNCE] = DDB_UPDATE_ITEM,
	[STORE_WITHDRAW] = DDB_UPDATE_ITEM,
	[STORE_ORPHAN] = DDB_UPDATE_ITEM,
	[STORE_ADOPT] = DDB_UPDATE_ITEM,
	[STORE_SCAN] = DDB_SCAN,
};

const char *ddb_op_name(enum ddb_op op)
{
	return (unsigned)op < DDB_OP_COUNT ? op_names[op] : "?";
}

enum ddb_op ddb_op_for(enum store_op op)
{
	return (unsigned)op < STORE_OP_COUNT ? store_ops[op] : DDB_GET_ITEM;
}

void ddb_errf(char *err, const char *fmt, ...)
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
		ddb_errf(err, "%s must be 1..%d bytes of UTF-8", what, DDB_KEY_NAME_MAX);
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
		ddb_errf(err, "table name '%.64s' must be 3..255 characters of a-z A-Z 0-9 _ . -",
			 k->table ? k->table : "");
		return false;
	}
	if (!name_ok("partition key name", k->pk, err))
		return false;
	if (k->sk && (!name_ok("sort key name", k->sk, err)))
		return false;
	if (k->sk && strcmp(k->sk, k->pk) == 0) {
		ddb_errf(err, "sort key '%.64s' is also the partition key", k->sk);
		return false;
	}
	if (is_lock_attr(k->pk) || (k->sk && is_lock_attr(k->sk))) {
		ddb_errf(err, "key attribute of table %s is named like a lock attribute", k->table);
		return false;
	}
	if (k->ttl_attr) {
		if (!name_ok("TTL attribute name", k->ttl_attr, err))
			return false;
		if (strcmp(k->ttl_attr, k->pk) == 0 || (k->sk && strcmp(k->ttl_attr, k->sk) == 0)) {
			ddb_errf(err, "TTL attribute '%.64s' is a key of table %s", k->ttl_attr,
				 k->table);
			return false;
		}
		if (is_lock_attr(k->ttl_attr)) {
			ddb_errf(err, "TTL attribute '%s' is an attribute of the lock item",
				 k->ttl_attr);
			return false;
		}
	}
	return true;
}

/* ---- a JSON writer with one out-of-memory flag ----
 *
 * Bodies are written straight into one growing buffer: a cJSON tree cost
 * an allocation per node and a print pass, more than the rest of a
 * request's own work. The output is byte for byte what cJSON's unformatted
 * print gives (the same escapes, members in the order written). */

#define JW_DEPTH 8

struct jw {
	char *p;
	size_t len, cap;
	bool oom;
	int depth;
	bool first[JW_DEPTH]; /* no member written yet at that depth */
};

/* Room for n more bytes and the NUL; false (and oom) when there is none. */
static bool jw_room(struct jw *w, size_t n)
{
	if (w->oom)
		return false;
	if (w->len + n + 1 <= w->cap)
		return true;
	size_t cap = w->cap ? w->cap : 512;
	while (cap < w->len + n + 1)
		cap *= 2;
	char *p = realloc(w->p, cap);
	if (!p) {
		w->oom = true;
		return false;
	}
	w->p = p;
	w->cap = cap;
	return true;
}

static void jw_raw(struct jw *w, const char *s, size_t n)
{
	if (!jw_room(w, n))
		return;
	memcpy(w->p + w->len, s, n);
	w->len += n;
	w->p[w->len] = '\0';
}

static void jw_byte(struct jw *w, char c)
{
	if (!jw_room(w, 1))
		return;
	w->p[w->len++] = c;
	w->p[w->len] = '\0';
}

/* The bytes a JSON string escapes: control characters, '"' and '\\'. */
#define ESC8 1, 1, 1, 1, 1, 1, 1, 1
static const unsigned char escaped_bytes[256] = {ESC8, ESC8, ESC8, ESC8, ['"'] = 1, ['\\'] = 1};

static bool needs_escape(unsigned char c)
{
	return escaped_bytes[c];
}

/* The inside of a JSON string: '"', '\\' and control characters escaped,
 * the rest (UTF-8 included) as is. */
static void jw_escaped(struct jw *w, const char *s)
{
	static const char hexd[] = "0123456789abcdef";
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!needs_escape(c))
			continue;
		jw_raw(w, run, (size_t)(s - run));
		run = s + 1;
		char e[6] = {'\\', (char)c, 0, 0, 0, 0};
		size_t n = 2;
		switch (c) {
		case '\b':
			e[1] = 'b';
			break;
		case '\f':
			e[1] = 'f';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\t':
			e[1] = 't';
			break;
		case '"':
		case '\\':
			break;
		default:
			memcpy(e + 1, "u00", 3);
			e[4] = hexd[c >> 4];
			e[5] = hexd[c & 15];
			n = 6;
		}
		jw_raw(w, e, n);
	}
	jw_raw(w, run, (size_t)(s - run));
}

static void jw_string(struct jw *w, const char *s)
{
	jw_byte(w, '"');
	jw_escaped(w, s);
	jw_byte(w, '"');
}

/* The separator and "key": of the next member (key NULL in an array). */
static void jw_member(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		if (!w->first[w->depth - 1])
			jw_byte(w, ',');
		w->first[w->depth - 1] = false;
	}
	if (key) {
		jw_string(w, key);
		jw_byte(w, ':');
	}
}

static void jw_open(struct jw *w, const char *key, char bracket)
{
	jw_member(w, key);
	jw_byte(w, bracket);
	if (w->depth >= JW_DEPTH) {
		w->oom = true; /* a builder bug, not reachable from input */
		return;
	}
	w->first[w->depth++] = true;
}

static void jobj(struct jw *w, const char *key)
{
	jw_open(w, key, '{');
}
static void jarr(struct jw *w, const char *key)
{
	jw_open(w, key, '[');
}

static void jend(struct jw *w, char bracket)
{
	if (w->depth > 0)
		w->depth--;
	jw_byte(w, bracket);
}

static void jstr(struct jw *w, const char *key, const char *val)
{
	jw_member(w, key);
	jw_string(w, val);
}

static void jtrue(struct jw *w, const char *key)
{
	jw_member(w, key);
	jw_raw(w, "true", 4);
}

/* "key": {"S" or "N": val} */
static void jattr(struct jw *w, const char *key, const char *type, const char *val)
{
	jobj(w, key);
	jstr(w, type, val);
	jend(w, '}');
}

/* v in decimal into buf (at least 21 bytes: "-9223372036854775808"). */
static void fmt_int64(char *buf, int64_t v)
{
	char rev[20];
	size_t n = 0, o = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		rev[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[o++] = '-';
	while (n)
		buf[o++] = rev[--n];
	buf[o] = '\0';
}

static void jnum(struct jw *w, const char *key, int64_t v)
{
	char buf[24];
	fmt_int64(buf, v);
	jattr(w, key, "N", buf);
}

/* Ends the top-level object and hands the body out (NULL on out-of-memory). */
static char *jdone(struct jw *w, size_t *len, char *err)
{
	jend(w, '}');
	if (w->oom) {
		free(w->p);
		ddb_errf(err, "out of memory building a request");
		return NULL;
	}
	*len = w->len;
	return w->p;
}

void ddb_body_free(char *body)
{
	free(body);
}

/* "Key": {pk: {"S": "LOCK#name"}, sk: {"S": "LOCK"}} */
static void jkey(struct jw *w, const struct ddb_keys *k, const char *name)
{
	jobj(w, "Key");
	jobj(w, k->pk);
	jw_member(w, "S");
	jw_raw(w, "\"LOCK#", 6);
	jw_escaped(w, name);
	jw_raw(w, "\"", 1);
	jend(w, '}');
	if (k->sk)
		jattr(w, k->sk, "S", "LOCK");
	jend(w, '}');
}

static bool str_ok(const char *what, const char *s, size_t max, char *err)
{
	size_t n = s ? strnlen(s, max + 1) : 0;
	if (n == 0 || n > max || !ddb_utf8_valid(s, n)) {
		ddb_errf(err, "%s must be 1..%zu bytes of UTF-8", what, max);
		return false;
	}
	return true;
}

/* The fields each operation needs, checked before anything is built. */
static bool req_valid(const struct store_req *r, char *err)
{
	if ((unsigned)r->op >= STORE_OP_COUNT) {
		ddb_errf(err, "unknown store operation %d", (int)r->op);
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
	if (writes && r->seen_rvn && !str_ok("seen rvn", r->seen_rvn, STORE_ID_MAX, err))
		return false;
	bool announces = r->op == STORE_ANNOUNCE || r->op == STORE_WITHDRAW;
	if ((announces || (r->op == STORE_ACQUIRE && r->waiter)) &&
	    !str_ok("waiter", r->waiter, STORE_ID_MAX, err))
		return false;
	if (r->op == STORE_ANNOUNCE && r->waiter_ms <= 0) {
		ddb_errf(err, "waiter poll interval must be positive");
		return false;
	}
	if (writes && r->holder && !str_ok("holder", r->holder, STORE_HOLDER_MAX, err))
		return false;
	if ((r->op == STORE_ORPHAN || r->op == STORE_ADOPT) &&
	    !str_ok("owner", r->owner, STORE_ID_MAX, err))
		return false;
	if (r->op == STORE_ADOPT &&
	    (!str_ok("previous owner", r->prev_owner, STORE_ID_MAX, err) ||
	     !str_ok("rvn", r->rvn, STORE_ID_MAX, err) ||
	     !str_ok("secret hash", r->secret_hash, STORE_SECRET_HASH_LEN, err) ||
	     !str_ok("secret hash presented", r->prev_secret_hash, STORE_SECRET_HASH_LEN, err) ||
	     (r->holder && !str_ok("holder", r->holder, STORE_HOLDER_MAX, err))))
		return false;
	if (r->op == STORE_ADOPT && r->lease_ms <= 0) {
		ddb_errf(err, "lease must be positive, not %" PRId64 " ms", r->lease_ms);
		return false;
	}
	if (writes && r->lease_ms <= 0) {
		ddb_errf(err, "lease must be positive, not %" PRId64 " ms", r->lease_ms);
		return false;
	}
	if (r->ttl < 0) {
		ddb_errf(err, "ttl must not be negative");
		return false;
	}
	if (!store_req_session_valid(r)) {
		ddb_errf(err, "session, seen session or session check out of bounds (store.h)");
		return false;
	}
	return true;
}

/* Concatenates n strings into dst (cap bytes with the NUL), cut to fit. */
static void join(char *dst, size_t cap, const char *const *parts, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(parts[i]);
		if (k > cap - 1 - len)
			k = cap - 1 - len;
		memcpy(dst + len, parts[i], k);
		len += k;
	}
	dst[len] = '\0';
}

/* The first term of an acquire's condition: the fence of the item it
 * decided on (ACQUIRE in store.h), or "". */
static const char *seen_fence_cond(const struct store_req *r)
{
	if (!r->has_seen_fence)
		return "";
	return r->seen_fence != 0 ? "#f = :sf AND " : "attribute_not_exists(#f) AND ";
}

/* The takeover branch's condition on the session the item showed
 * (ACQUIRE's .seen_session in store.h): "" when there is none to test. */
static const char *seen_session_cond(const struct store_req *r)
{
	if (r->seen_session == NULL || r->seen_rvn == NULL)
		return "";
	return r->seen_session[0] != '\0' ? " AND #se = :ps" : " AND attribute_not_exists(#se)";
}

/* Joins the n non-empty strings of parts with ", " into dst (cap bytes),
 * after head when any is there; dst is "" else. */
static void list_of(char *dst, size_t cap, const char *head, const char *const *parts, size_t n)
{
	size_t len = 0;
	dst[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (parts[i][0] == '\0')
			continue;
		len += (size_t)snprintf(dst + len, len < cap ? cap - len : 0, "%s%s",
					len == 0 ? head : ", ", parts[i]);
		if (len >= cap)
			len = cap - 1;
	}
}

/* The members of the UpdateItem of ACQUIRE, RENEW and RELEASE, from its
 * TableName to its condition, into w (its ReturnValues are the caller's:
 * a transaction's Update has none). ExpressionAttributeNames and ...Values
 * are written whole, one after the other, each in the order of its own
 * members. */
static void update_members(struct jw *out, const struct ddb_keys *k, const struct store_req *r)
{
	struct jw w = *out; /* the writer's state, given back at the end */
	bool release = r->op == STORE_RELEASE, acquire = r->op == STORE_ACQUIRE;
	/* session mode (store.h ACQUIRE): the real lease in sleaseMs, no TTL */
	bool sess = !release && r->session != NULL;
	bool ttl = k->ttl_attr && r->ttl > 0 && !sess, rm_ttl = k->ttl_attr && sess;
	bool guarded = acquire && !r->unconditional;
	bool freed = release && r->token > 0; /* a release from outside (store.h) */
	bool seen_sess = guarded && r->seen_rvn && r->seen_session && r->seen_session[0];
	/* a lost lease's release, on the rvn and session it knew */
	bool rel_rvn = release && r->seen_rvn, rel_sess = release && r->seen_session;
	jstr(&w, "TableName", k->table);
	jkey(&w, k, r->name);

	jobj(&w, "ExpressionAttributeNames");
	if (ttl || rm_ttl)
		jstr(&w, N_TTL, k->ttl_attr);
	jstr(&w, N_OWNER, "owner");
	if (!release || rel_rvn)
		jstr(&w, N_RVN, "rvn");
	jstr(&w, N_LEASE, "leaseMs");
	jstr(&w, N_HOLDER, "holder");
	if ((release && r->unconditional) || guarded)
		jstr(&w, N_PK, k->pk);
	if (guarded)
		jstr(&w, "#sc", "scount");
	if (guarded || release) {
		jstr(&w, N_RADMIT, "radmit");
		if (release)
			jstr(&w, N_RWAITERS, "rwaiters");
	}
	if (acquire) {
		jstr(&w, N_TYPE, "_type");
		jstr(&w, N_FENCE, "fence");
		jstr(&w, N_ARVN, "arvn");
	}
	bool takes_waiter = acquire && r->waiter;
	if (guarded || takes_waiter)
		jstr(&w, N_WAITER, "waiter");
	if (takes_waiter)
		jstr(&w, N_WAITMS, "waiterMs");
	if (freed) {
		jstr(&w, N_FREED, "freed");
		jstr(&w, N_FREEDBY, "freedBy");
	}
	if (acquire || release)
		jstr(&w, N_SECRET, "secretHash");
	jstr(&w, N_SESSION, "session");
	jstr(&w, N_SLEASE, "sleaseMs");
	jend(&w, '}');

	{
		jobj(&w, "ExpressionAttributeValues");
		if (ttl)
			jnum(&w, ":x", r->ttl);
		if (release) {
			jattr(&w, ":na", "S", NO_READERS);
			if (!r->unconditional)
				jattr(&w, ":o", "S", r->owner);
			if (freed) {
				jnum(&w, ":fr", r->token);
				jattr(&w, ":fb", "S", r->forced ? "force" : "token");
			}
			if (rel_rvn)
				jattr(&w, ":s", "S", r->seen_rvn);
			if (rel_sess)
				jattr(&w, ":ps", "S", r->seen_session);
		} else {
			jattr(&w, ":r", "S", r->rvn);
			jnum(&w, ":l", sess ? STORE_SESSION_LOCK_LEASE_MS : r->lease_ms);
			if (sess) {
				jattr(&w, ":se", "S", r->session);
				jnum(&w, ":sl", r->lease_ms);
			}
			if (seen_sess)
				jattr(&w, ":ps", "S", r->seen_session);
			if (r->holder)
				jattr(&w, ":h", "S", r->holder);
			jattr(&w, ":o", "S", r->owner);
			if (acquire) {
				jattr(&w, ":t", "S", "LOCK");
				jnum(&w, ":one", 1);
				if (r->secret_hash)
					jattr(&w, ":sh", "S", r->secret_hash);
			}
			if ((guarded || !acquire) && r->seen_rvn)
				jattr(&w, ":s", "S", r->seen_rvn);
			if (guarded && r->waiter)
				jattr(&w, ":w", "S", r->waiter);
			if (guarded && r->has_seen_fence && r->seen_fence != 0)
				jnum(&w, ":sf", r->seen_fence);
			if (guarded) {
				jattr(&w, ":ss", "S", "SS");
				jattr(&w, ":n", "S", "N");
				jnum(&w, ":f0", 0);
				jnum(&w, ":ftop", INT64_MAX);
			}
		}
		jend(&w, '}');
	}

	char expr[256], cond[640] = "";
	if (release) {
		/* the readers registered behind the lease are admitted
		 * (store_shared.h), in this write: no request more */
		snprintf(expr, sizeof expr,
			 "REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = if_not_exists(#rw, "
			 ":na)%s%s",
			 freed ? ", #fr = :fr, #fb = :fb" : "", ttl ? ", #x = :x" : "");
		/* unconditional: never create an item, a bare key would be no lock */
		snprintf(cond, sizeof cond, "%s%s%s",
			 r->unconditional ? "attribute_exists(#k)" : "#o = :o",
			 rel_rvn ? " AND #r = :s" : "", rel_sess ? " AND #se = :ps" : "");
	} else {
		/* an acquire sets its lease's secret hash or removes an old one */
		bool set_secret = acquire && r->secret_hash, rm_secret = acquire && !r->secret_hash;
		/* what the write removes: a per-lease write its session too */
		const char *const rms[] = {r->holder ? "" : "#h", takes_waiter ? "#w, #wm" : "",
					   rm_secret ? "#sh" : "", sess ? "" : "#se, #sl",
					   rm_ttl ? "#x" : ""};
		char rm[64];
		list_of(rm, sizeof rm, " REMOVE ", rms, sizeof rms / sizeof rms[0]);
		/* the expression of every renewal: pieces, not a format */
		const char *const parts[] = {"SET ",
					     acquire ? "#o = :o, #t = :t, #a = :r, " : "",
					     "#r = :r, #l = :l",
					     r->holder ? ", #h = :h" : "",
					     ttl ? ", #x = :x" : "",
					     set_secret ? ", #sh = :sh" : "",
					     sess ? ", #se = :se, #sl = :sl" : "",
					     rm,
					     acquire ? " ADD #f :one" : ""};
		join(expr, sizeof expr, parts, sizeof parts / sizeof parts[0]);
		/* the takeover branch, on the session seen too: AND binds
		 * before OR (DynamoDB refuses redundant parentheses) */
		char take_w[128] = "", take[160] = "";
		if (guarded && r->seen_rvn) { /* not on a renewal's path */
			snprintf(take_w, sizeof take_w, "(attribute_not_exists(#o) OR #r = :s%s)",
				 seen_session_cond(r));
			snprintf(take, sizeof take,
				 "((attribute_not_exists(#o) AND attribute_not_exists(#w)) OR "
				 "#r = :s%s)",
				 seen_session_cond(r));
		}
		if (!acquire && r->seen_rvn) /* a renewal: see RENEW in store.h */
			strcpy(cond, "#o = :o AND (#r = :s OR #r = :r)");
		else if (!acquire)
			strcpy(cond, "#o = :o");
		/* No branch for the owner alone, and never on the item's own
		 * arvn: a late attempt would put the acquire's rvn back over
		 * its lease's renewals, or take the lock again after its
		 * release (ACQUIRE in store.h); a retry whose earlier attempt
		 * applied is answered OK by store_dynamodb.c
		 * (store_acquire_applied). DynamoDB refuses redundant
		 * parentheses: each form is written whole. */
		else if (guarded && r->waiter)
			snprintf(cond, sizeof cond,
				 "%s(attribute_not_exists(#w) OR #w = :w) AND %s AND %s AND %s",
				 seen_fence_cond(r),
				 r->seen_rvn ? take_w : "attribute_not_exists(#o)", NOT_MY_ARVN,
				 LOCK_GUARD);
		else if (guarded)
			snprintf(cond, sizeof cond, "%s%s AND %s AND %s", seen_fence_cond(r),
				 r->seen_rvn
					 ? take
					 : "attribute_not_exists(#o) AND attribute_not_exists(#w)",
				 NOT_MY_ARVN, LOCK_GUARD);
	}
	jstr(&w, "UpdateExpression", expr);
	if (cond[0]) {
		jstr(&w, "ConditionExpression", cond);
		jstr(&w, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	}
	*out = w;
}

/* UpdateItem for ACQUIRE, RENEW and RELEASE. */
static char *build_update(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			  char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	update_members(&w, k, r);
	jstr(&w, "ReturnValues", "ALL_NEW");
	return jdone(&w, len, err);
}

/* The takeover of a session-mode holder (ACQUIRE with .sess_check in
 * store.h): one TransactWriteItems of the lock's Update, as
 * build_update's, and a ConditionCheck of the session's item (key
 * .seen_session, sort key LOCK). No ClientRequestToken: a retry whose
 * first attempt applied is refused by the lock's condition with an item
 * that shows its owner and rvn, and answered OK (store_acquire_applied),
 * as a single write's is. */
static char *build_takeover(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			    char *err)
{
	struct jw w = {0};
	bool rvn = r->sess_check == STORE_SESS_CHECK_RVN;
	jobj(&w, NULL);
	jarr(&w, "TransactItems");
	jobj(&w, NULL);
	jobj(&w, "Update");
	update_members(&w, k, r);
	jend(&w, '}');
	jend(&w, '}');
	jobj(&w, NULL);
	jobj(&w, "ConditionCheck");
	jstr(&w, "TableName", k->table);
	jobj(&w, "Key");
	jattr(&w, k->pk, "S", r->seen_session);
	if (k->sk)
		jattr(&w, k->sk, "S", "LOCK");
	jend(&w, '}');
	jstr(&w, "ConditionExpression", rvn ? "#r = :sr" : "attribute_not_exists(#k)");
	jobj(&w, "ExpressionAttributeNames");
	jstr(&w, rvn ? N_RVN : N_PK, rvn ? "rvn" : k->pk);
	jend(&w, '}');
	if (rvn) {
		jobj(&w, "ExpressionAttributeValues");
		jattr(&w, ":sr", "S", r->sess_rvn);
		jend(&w, '}');
	}
	jstr(&w, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	jend(&w, '}');
	jend(&w, '}');
	jend(&w, ']');
	return jdone(&w, len, err);
}

/* ANNOUNCE and WITHDRAW: the waiter attributes only (store.h). */
static char *build_announce(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			    char *err)
{
	struct jw w = {0};
	bool announce = r->op == STORE_ANNOUNCE;
	jobj(&w, NULL);
	jstr(&w, "TableName", k->table);
	jkey(&w, k, r->name);
	jobj(&w, "ExpressionAttributeNames");
	jstr(&w, N_WAITER, "waiter");
	jstr(&w, N_WAITMS, "waiterMs");
	if (announce) {
		jstr(&w, N_OWNER, "owner");
		jstr(&w, N_TYPE, "_type");
	}
	jend(&w, '}');
	jobj(&w, "ExpressionAttributeValues");
	jattr(&w, ":w", "S", r->waiter);
	if (announce) {
		jnum(&w, ":wm", r->waiter_ms);
		jattr(&w, ":t", "S", "LOCK");
	}
	jend(&w, '}');
	if (announce) {
		jstr(&w, "UpdateExpression", "SET #w = :w, #wm = :wm");
		jstr(&w, "ConditionExpression",
		     "attribute_exists(#o) AND attribute_not_exists(#w) AND #t = :t");
	} else {
		jstr(&w, "UpdateExpression", "REMOVE #w, #wm");
		jstr(&w, "ConditionExpression", "#w = :w");
	}
	jstr(&w, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	jstr(&w, "ReturnValues", "ALL_NEW");
	return jdone(&w, len, err);
}

static char *build_check(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			 char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	jarr(&w, "TransactItems");
	jobj(&w, NULL);
	jobj(&w, "ConditionCheck");
	jstr(&w, "TableName", k->table);
	jkey(&w, k, r->name);
	jstr(&w, "ConditionExpression", "#o = :o AND #f = :f");
	jobj(&w, "ExpressionAttributeNames");
	jstr(&w, N_OWNER, "owner");
	jstr(&w, N_FENCE, "fence");
	jend(&w, '}');
	jobj(&w, "ExpressionAttributeValues");
	jattr(&w, ":o", "S", r->owner);
	jnum(&w, ":f", r->token);
	jend(&w, '}');
	jstr(&w, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	jend(&w, '}');
	jend(&w, '}');
	jend(&w, ']');
	return jdone(&w, len, err);
}

static char *build_keyed(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			 char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	jstr(&w, "TableName", k->table);
	jkey(&w, k, r->name);
	if (r->op == STORE_READ)
		jtrue(&w, "ConsistentRead");
	return jdone(&w, len, err);
}

/* ORPHAN: the holder marks its own lease (store.h). */
static char *build_orphan(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			  char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	jstr(&w, "TableName", k->table);
	jkey(&w, k, r->name);
	jobj(&w, "ExpressionAttributeNames");
	jstr(&w, N_OWNER, "owner");
	jstr(&w, N_ORPHAN, "orphan");
	jend(&w, '}');
	jobj(&w, "ExpressionAttributeValues");
	jattr(&w, ":o", "S", r->owner);
	jend(&w, '}');
	jstr(&w, "UpdateExpression", "SET #or = :o");
	jstr(&w, "ConditionExpression", "#o = :o");
	jstr(&w, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	jstr(&w, "ReturnValues", "ALL_NEW");
	return jdone(&w, len, err);
}

/* ADOPT: an orphaned lease to a new owner, its fence kept (store.h). */
static char *build_adopt(const struct ddb_keys *k, const struct store_req *r, size_t *len,
			 char *err)
{
	struct jw w = {0};
	bool sess = r->session != NULL; /* session mode: as ACQUIRE's (store.h) */
	bool ttl = k->ttl_attr && r->ttl > 0 && !sess, rm_ttl = k->ttl_attr && sess;
	jobj(&w, NULL);
	jstr(&w, "TableName", k->table);
	jkey(&w, k, r->name);
	jobj(&w, "ExpressionAttributeNames");
	if (ttl || rm_ttl)
		jstr(&w, N_TTL, k->ttl_attr);
	jstr(&w, N_OWNER, "owner");
	jstr(&w, N_RVN, "rvn");
	jstr(&w, N_LEASE, "leaseMs");
	jstr(&w, N_HOLDER, "holder");
	jstr(&w, N_FENCE, "fence");
	jstr(&w, N_SECRET, "secretHash");
	jstr(&w, N_ORPHAN, "orphan");
	jstr(&w, N_ADOPTED, "adoptedFrom");
	jstr(&w, N_SESSION, "session");
	jstr(&w, N_SLEASE, "sleaseMs");
	jend(&w, '}');
	jobj(&w, "ExpressionAttributeValues");
	if (ttl)
		jnum(&w, ":x", r->ttl);
	jattr(&w, ":o", "S", r->owner);
	jattr(&w, ":r", "S", r->rvn);
	jnum(&w, ":l", sess ? STORE_SESSION_LOCK_LEASE_MS : r->lease_ms);
	if (sess) {
		jattr(&w, ":se", "S", r->session);
		jnum(&w, ":sl", r->lease_ms);
	}
	if (r->holder)
		jattr(&w, ":h", "S", r->holder);
	jattr(&w, ":sh", "S", r->secret_hash);
	jattr(&w, ":po", "S", r->prev_owner);
	jnum(&w, ":tok", r->token);
	jattr(&w, ":psh", "S", r->prev_secret_hash);
	jend(&w, '}');
	char expr[256];
	snprintf(expr, sizeof expr,
		 "SET #o = :o, #r = :r, #l = :l, #sh = :sh, #af = :po%s%s%s REMOVE #or%s%s",
		 r->holder ? ", #h = :h" : "", ttl ? ", #x = :x" : "",
		 sess ? ", #se = :se, #sl = :sl" : "", r->holder ? "" : ", #h",
		 sess ? (rm_ttl ? ", #x" : "") : ", #se, #sl");
	jstr(&w, "UpdateExpression", expr);
	jstr(&w, "ConditionExpression", "#o = :po AND #f = :tok AND #or = :po AND #sh = :psh");
	jstr(&w, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	jstr(&w, "ReturnValues", "ALL_NEW");
	return jdone(&w, len, err);
}

typedef char *(*build_fn)(const struct ddb_keys *, const struct store_req *, size_t *, char *);

static const build_fn builders[STORE_OP_COUNT] = {
	[STORE_ACQUIRE] = build_update,	   [STORE_RENEW] = build_update,
	[STORE_RELEASE] = build_update,	   [STORE_READ] = build_keyed,
	[STORE_DELETE] = build_keyed,	   [STORE_CHECK] = build_check,
	[STORE_ANNOUNCE] = build_announce, [STORE_WITHDRAW] = build_announce,
	[STORE_ORPHAN] = build_orphan,	   [STORE_ADOPT] = build_adopt,
};

char *ddb_build_request(const struct ddb_keys *k, const struct store_req *req, size_t *len,
			char *err)
{
	if (!req_valid(req, err))
		return NULL;
	if (!builders[req->op]) { /* STORE_SCAN: store_scan() only */
		ddb_errf(err, "%s is no store request", store_op_name(req->op));
		return NULL;
	}
	if (req->op == STORE_ACQUIRE && req->sess_check != STORE_SESS_CHECK_NONE)
		return build_takeover(k, req, len, err);
	return builders[req->op](k, req, len, err);
}

char *ddb_build_scan(const struct ddb_keys *k, const char *cursor, unsigned limit, size_t *len,
		     char *err)
{
	char pk[DDB_PK_MAX + 1], sk[DDB_SK_MAX + 1];
	bool from = cursor != NULL && cursor[0] != '\0';
	if (from && !ddb_scan_cursor_key(k, cursor, pk, sk)) {
		ddb_errf(err, "scan cursor '%.32s' is not one of table %s", cursor, k->table);
		return NULL;
	}
	char num[16], proj[128];
	snprintf(num, sizeof num, "%u", limit);
	snprintf(proj, sizeof proj,
		 "#pk, %s#o, #r, #f, #l, #t, #h, #w, #wm, #fr, #fb, #sc, #se, #sl%s",
		 k->sk ? "#sk, " : "", k->ttl_attr ? ", #x" : "");
	struct jw w = {0};
	jobj(&w, NULL);
	jstr(&w, "TableName", k->table);
	jw_member(&w, "Limit");
	jw_raw(&w, num, strlen(num));
	jtrue(&w, "ConsistentRead");
	jstr(&w, "FilterExpression",
	     k->sk ? "begins_with(#pk, :prefix) AND #sk = :lock" : "begins_with(#pk, :prefix)");
	jstr(&w, "ProjectionExpression", proj);
	jobj(&w, "ExpressionAttributeNames");
	jstr(&w, "#pk", k->pk);
	if (k->sk)
		jstr(&w, "#sk", k->sk);
	static const char *const attrs[][2] = {
		{N_OWNER, "owner"},	{N_RVN, "rvn"},		{N_FENCE, "fence"},
		{N_LEASE, "leaseMs"},	{N_TYPE, "_type"},	{N_HOLDER, "holder"},
		{N_WAITER, "waiter"},	{N_WAITMS, "waiterMs"}, {N_FREED, "freed"},
		{N_FREEDBY, "freedBy"}, {"#sc", "scount"},	{N_SESSION, "session"},
		{N_SLEASE, "sleaseMs"},
	};
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
		jstr(&w, attrs[i][0], attrs[i][1]);
	if (k->ttl_attr)
		jstr(&w, N_TTL, k->ttl_attr);
	jend(&w, '}');
	jobj(&w, "ExpressionAttributeValues");
	jattr(&w, ":prefix", "S", "LOCK#");
	if (k->sk)
		jattr(&w, ":lock", "S", "LOCK");
	jend(&w, '}');
	if (from) {
		jobj(&w, "ExclusiveStartKey");
		jattr(&w, k->pk, "S", pk);
		if (k->sk)
			jattr(&w, k->sk, "S", sk);
		jend(&w, '}');
	}
	return jdone(&w, len, err);
}

char *ddb_build_batch_get(const struct ddb_keys *k, const char *const *names, unsigned n,
			  size_t *len, char *err)
{
	static const char open[] = "{\"S\":\"LOCK#";
	struct jw w = {0};
	/* the body's size unless names need escapes: one allocation, where
	 * growing by doubling took five (each a search of a big heap's bins) */
	size_t key = strlen(k->pk) + sizeof open + 8 + (k->sk ? strlen(k->sk) + 16 : 0);
	size_t need = 64 + strlen(k->table);
	for (unsigned i = 0; i < n; i++)
		need += key + strlen(names[i]);
	(void)jw_room(&w, need);
	jobj(&w, NULL);
	jobj(&w, "RequestItems");
	jobj(&w, k->table);
	jarr(&w, "Keys");
	for (unsigned i = 0; i < n; i++) {
		jobj(&w, NULL);
		jw_member(&w, k->pk);
		jw_raw(&w, open, sizeof open - 1);
		jw_escaped(&w, names[i]);
		jw_raw(&w, "\"}", 2);
		if (k->sk)
			jattr(&w, k->sk, "S", "LOCK");
		jend(&w, '}');
	}
	jend(&w, ']');
	jtrue(&w, "ConsistentRead");
	jend(&w, '}');
	jend(&w, '}');
	return jdone(&w, len, err);
}

char *ddb_build_describe_table(const char *table, size_t *len, char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	jstr(&w, "TableName", table);
	return jdone(&w, len, err);
}

char *ddb_build_create_table(const struct ddb_keys *k, size_t *len, char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	jstr(&w, "TableName", k->table);
	jstr(&w, "BillingMode", "PAY_PER_REQUEST");
	jarr(&w, "AttributeDefinitions");
	for (int i = 0; i < (k->sk ? 2 : 1); i++) {
		jobj(&w, NULL);
		jstr(&w, "AttributeName", i ? k->sk : k->pk);
		jstr(&w, "AttributeType", "S");
		jend(&w, '}');
	}
	jend(&w, ']');
	jarr(&w, "KeySchema");
	for (int i = 0; i < (k->sk ? 2 : 1); i++) {
		jobj(&w, NULL);
		jstr(&w, "AttributeName", i ? k->sk : k->pk);
		jstr(&w, "KeyType", i ? "RANGE" : "HASH");
		jend(&w, '}');
	}
	jend(&w, ']');
	return jdone(&w, len, err);
}

char *ddb_build_update_ttl(const char *table, const char *ttl_attr, size_t *len, char *err)
{
	struct jw w = {0};
	jobj(&w, NULL);
	jstr(&w, "TableName", table);
	jobj(&w, "TimeToLiveSpecification");
	jtrue(&w, "Enabled");
	jstr(&w, "AttributeName", ttl_attr);
	jend(&w, '}');
	return jdone(&w, len, err);
}
