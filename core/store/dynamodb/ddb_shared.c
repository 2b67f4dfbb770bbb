/*
 * ddb_shared: shared names (core/store/store_shared.h) on DynamoDB — a
 * GRANT, RELEASE or REMOVE is one TransactWriteItems of two Updates (the
 * header, then the slot) with a ClientRequestToken made once per request,
 * so that the store's retries apply it once; a RENEW is one UpdateItem of
 * the slot; XANNOUNCE, XCLEAR, XTAKE and the reader sets' RWAIT, RUNWAIT
 * and RCLEAR one UpdateItem of the header; a READ is one strongly
 * consistent BatchGetItem of the header and every slot, asked again for
 * its UnprocessedKeys. On the calls of store_dynamodb.c (retries,
 * deadline, metrics).
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_expr.h"
#include "core/store/dynamodb/store_dynamodb_int.h"
#include "core/store/store_shared.h"
#include "core/store/store_tx.h"

#define HEADER_KIND	"LOCK#"
#define SORT_KEY	"LOCK" /* the sort key of every lock-table item */
#define UNPROCESSED_MAX 8      /* BatchGetItem rounds for UnprocessedKeys */

/* A request in flight and what it has read so far (READ: the header, and
 * items[1 + i] slot req.slot + i for i < req.count, got[0] and got[1 + i]
 * once answered; others: items[1] the slot). */
struct ddb_sh {
	struct store_sh_req req; /* strings point into text */
	bool got[1 + STORE_SH_CAP];
	struct store_sh_header header;
	unsigned rounds;
	char owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1], seen_rvn[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1];
	char name[STORE_NAME_MAX + 1];
	struct store_sh_set seen_set; /* RCLEAR's */
	struct lock_item items[];     /* 1 + cap (READ) or 2 */
};

/* ---- building ---- */

/* name: {"SS": [ids...]} */
static void add_set(cJSON *into, const char *name, const char *const *ids, unsigned n)
{
	cJSON *o = cJSON_AddObjectToObject(into, name);
	cJSON *list = o != NULL ? cJSON_AddArrayToObject(o, "SS") : NULL;
	for (unsigned i = 0; list != NULL && i < n; i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(ids[i]));
}

/* {pk: key, sk: LOCK} of item k (0 the header, 1 + j slot j) into obj */
static void add_key(cJSON *obj, const struct ddb_keys *keys, const char *name, unsigned k)
{
	char pk[STORE_SH_KEY_MAX + 1];
	if (k == 0)
		snprintf(pk, sizeof(pk), HEADER_KIND "%s", name);
	else
		store_sh_slot_key(name, k - 1, pk);
	ddb_add_str(obj, keys->pk, "S", pk);
	if (keys->sk != NULL)
		ddb_add_str(obj, keys->sk, "S", SORT_KEY);
}

/* An Update of item k: its key, table, and room for the expressions. */
static cJSON *update(const struct ddb_keys *keys, const char *name, unsigned k)
{
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "TableName", keys->table);
	add_key(cJSON_AddObjectToObject(u, "Key"), keys, name, k);
	return u;
}

/* "attribute_not_exists(#f)" for a fence 0, else "#f = <value>" */
static void fence_cond(char *buf, size_t cap, const char *value, int64_t fence)
{
	if (fence == 0)
		snprintf(buf, cap, "attribute_not_exists(#f)");
	else
		snprintf(buf, cap, "#f = %s", value);
}

static const char *mode_name(enum store_sh_mode m)
{
	return m == STORE_SH_LIMIT ? "LIMIT" : "SHARED";
}

/* set without its ", #x = :x" (or "SET #x = :x "), into buf: no TTL. */
static const char *without_ttl(const char *set, char *buf, size_t cap)
{
	const char *at = strstr(set, ", #x = :x");
	size_t cut = 9;
	if (at == NULL) {
		at = strstr(set, "SET #x = :x ");
		cut = 12;
	}
	if (at == NULL)
		return set;
	snprintf(buf, cap, "%.*s%s", (int)(at - set), set, at + cut);
	return buf;
}

/* The names and values a grant's header expressions (text) use, into u. */
static void grant_header_attrs(cJSON *u, const char *text, const struct ddb_keys *keys,
			       const struct store_sh_req *r)
{
	static const char *const names[][2] = {
		{"#o", "owner"},  {"#ty", "_type"},  {"#sc", "scount"},
		{"#sm", "smode"}, {"#f", "fence"},   {"#sl", "slimit"},
		{"#xw", "xwait"}, {"#ra", "radmit"}, {"#rw", "rwaiters"}};
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ddb_uses(text, names[i][0]))
			cJSON_AddStringToObject(n, names[i][0], names[i][1]);
	if (ddb_uses(text, "#x"))
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	if (ddb_uses(text, ":lock"))
		ddb_add_str(v, ":lock", "S", "LOCK");
	if (ddb_uses(text, ":zero"))
		ddb_add_num(v, ":zero", 0);
	if (ddb_uses(text, ":sm"))
		ddb_add_str(v, ":sm", "S", mode_name(r->mode));
	if (ddb_uses(text, ":one"))
		ddb_add_num(v, ":one", 1);
	if (ddb_uses(text, ":cap"))
		ddb_add_num(v, ":cap", r->cap);
	if (ddb_uses(text, ":sf"))
		ddb_add_num(v, ":sf", r->seen_fence);
	if (ddb_uses(text, ":x"))
		ddb_add_num(v, ":x", r->ttl);
	if (ddb_uses(text, ":me"))
		ddb_add_str(v, ":me", "S", r->owner);
	if (ddb_uses(text, ":mes"))
		add_set(v, ":mes", &r->owner, 1);
}

/* The header's Update of a GRANT (store_shared.h), or its ConditionCheck
 * for a takeover that fills the slot it frees. */
static cJSON *grant_header(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	char cond[512], fc[48], text[512 + 200 + 2];
	const char *set;
	fence_cond(fc, sizeof(fc), ":sf", r->seen_fence);
	bool limit = r->mode == STORE_SH_LIMIT;
	/* no writer announced, or this reader admitted past it */
	const char *xw = r->admitted	? "contains(#ra, :me)"
			 : r->announced ? "#xw = :me" /* its own turn (a semaphore's waiter) */
					: "attribute_not_exists(#xw)";
	if (r->first) {
		snprintf(cond, sizeof(cond),
			 "attribute_not_exists(#o) AND %s AND "
			 "(attribute_not_exists(#ty) OR #ty = :lock) "
			 "AND (attribute_not_exists(#sc) OR #sc = :zero) AND %s",
			 xw, fc);
		set = limit ? "SET #sm = :sm, #sl = :cap, #ty = :lock, #x = :x ADD #sc :one"
			    : "SET #sm = :sm, #ty = :lock, #x = :x REMOVE #sl ADD #sc :one, #f "
			      ":one";
	} else {
		/* a takeover that fills its slot leaves the count: it may be
		 * at the cap */
		snprintf(cond, sizeof(cond),
			 "attribute_not_exists(#o) AND %s AND #ty = :lock "
			 "AND "
			 "#sc > :zero%s AND #sm = :sm AND %s%s",
			 xw, r->seen_rvn != NULL ? "" : " AND #sc < :cap", fc,
			 limit ? " AND #sl = :cap" : "");
		set = r->seen_rvn != NULL ? NULL : "SET #x = :x ADD #sc :one";
	}
	char buf[160], full[200];
	if (set != NULL && !(keys->ttl_attr != NULL && r->ttl > 0))
		set = without_ttl(set, buf, sizeof(buf));
	if (r->registered) { /* its entry goes with the grant */
		/* from radmit only when admitted: radmit is then a set holding
		 * it; else it may be "-" (a string: DELETE of a set from it is
		 * a ValidationException) */
		snprintf(full, sizeof(full), "%s%sDELETE #rw :mes%s", set != NULL ? set : "",
			 set != NULL ? " " : "", r->admitted ? ", #ra :mes" : "");
		set = full;
	}
	snprintf(text, sizeof(text), "%s %s", cond, set != NULL ? set : "");
	cJSON *u = update(keys, r->name, 0);
	cJSON_AddStringToObject(u, "ConditionExpression", cond);
	if (set != NULL)
		cJSON_AddStringToObject(u, "UpdateExpression", set);
	grant_header_attrs(u, text, keys, r);
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	cJSON *w = cJSON_CreateObject();
	cJSON_AddItemToObject(w, set == NULL ? "ConditionCheck" : "Update", u);
	return w;
}

/* The slot's Update of a GRANT. */
static cJSON *grant_slot(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	char cond[160], set[160], fc[48];
	fence_cond(fc, sizeof(fc), ":sf", r->seen_slot_fence);
	snprintf(cond, sizeof(cond), "%s AND %s",
		 r->seen_rvn != NULL ? "#r = :sr" : "attribute_not_exists(#o)", fc);
	bool ttl = keys->ttl_attr != NULL && r->ttl > 0;
	snprintf(set, sizeof(set), "SET #o = :o, #r = :r, #l = :l, #ty = :slot%s%s ADD #f :one%s",
		 r->holder != NULL ? ", #h = :h" : "", ttl ? ", #x = :x" : "",
		 r->holder != NULL ? " REMOVE #fb, #fd" : " REMOVE #h, #fb, #fd");
	cJSON *u = update(keys, r->name, 1 + r->slot);
	cJSON_AddStringToObject(u, "ConditionExpression", cond);
	cJSON_AddStringToObject(u, "UpdateExpression", set);
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#o", "owner");
	cJSON_AddStringToObject(n, "#r", "rvn");
	cJSON_AddStringToObject(n, "#l", "leaseMs");
	cJSON_AddStringToObject(n, "#ty", "_type");
	cJSON_AddStringToObject(n, "#f", "fence");
	cJSON_AddStringToObject(n, "#h", "holder");
	cJSON_AddStringToObject(n, "#fb", "freedBy");
	cJSON_AddStringToObject(n, "#fd", "freed");
	if (ttl)
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	ddb_add_str(v, ":o", "S", r->owner);
	ddb_add_str(v, ":r", "S", r->rvn);
	ddb_add_num(v, ":l", r->lease_ms);
	ddb_add_str(v, ":slot", "S", "SLOT");
	ddb_add_num(v, ":one", 1);
	if (r->holder != NULL)
		ddb_add_str(v, ":h", "S", r->holder);
	if (ttl)
		ddb_add_num(v, ":x", r->ttl);
	if (r->seen_rvn != NULL)
		ddb_add_str(v, ":sr", "S", r->seen_rvn);
	if (r->seen_slot_fence != 0)
		ddb_add_num(v, ":sf", r->seen_slot_fence);
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	cJSON *w = cJSON_CreateObject();
	cJSON_AddItemToObject(w, "Update", u);
	return w;
}

/* The two Updates of a RELEASE or REMOVE. */
static void end_items(cJSON *list, const struct ddb_keys *keys, const struct store_sh_req *r)
{
	bool ttl = keys->ttl_attr != NULL && r->ttl > 0;
	cJSON *s = update(keys, r->name, 1 + r->slot);
	cJSON_AddStringToObject(s, "ConditionExpression",
				r->op == STORE_SH_REMOVE ? "#o = :o AND #r = :sr" : "#o = :o");
	static const char *const ends[2][2] = {
		{"REMOVE #o, #l, #h", "REMOVE #o, #l, #h SET #x = :x"},
		{"REMOVE #o, #l, #h SET #fb = :fb, #fd = #f",
		 "REMOVE #o, #l, #h SET #fb = :fb, #fd = #f, #x = :x"}};
	cJSON_AddStringToObject(s, "UpdateExpression", ends[r->forced][ttl]);
	cJSON *n = cJSON_AddObjectToObject(s, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#o", "owner");
	cJSON_AddStringToObject(n, "#l", "leaseMs");
	cJSON_AddStringToObject(n, "#h", "holder");
	if (r->forced) { /* freed: the fence it ended, as a lock item's */
		cJSON_AddStringToObject(n, "#fb", "freedBy");
		cJSON_AddStringToObject(n, "#fd", "freed");
		cJSON_AddStringToObject(n, "#f", "fence");
	}
	if (r->op == STORE_SH_REMOVE)
		cJSON_AddStringToObject(n, "#r", "rvn");
	if (ttl)
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(s, "ExpressionAttributeValues");
	ddb_add_str(v, ":o", "S", r->owner);
	if (r->op == STORE_SH_REMOVE)
		ddb_add_str(v, ":sr", "S", r->seen_rvn);
	if (r->forced)
		ddb_add_str(v, ":fb", "S", "force");
	if (ttl)
		ddb_add_num(v, ":x", r->ttl);
	cJSON_AddStringToObject(s, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");

	cJSON *h = update(keys, r->name, 0);
	cJSON_AddStringToObject(h, "ConditionExpression", "#sc > :zero");
	cJSON_AddStringToObject(h, "UpdateExpression", "ADD #sc :minus");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(h, "ExpressionAttributeNames"), "#sc",
				"scount");
	v = cJSON_AddObjectToObject(h, "ExpressionAttributeValues");
	ddb_add_num(v, ":zero", 0);
	ddb_add_num(v, ":minus", -1);
	cJSON_AddStringToObject(h, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");

	cJSON *w = cJSON_CreateObject();
	cJSON_AddItemToObject(w, "Update", h);
	cJSON_AddItemToArray(list, w);
	w = cJSON_CreateObject();
	cJSON_AddItemToObject(w, "Update", s);
	cJSON_AddItemToArray(list, w);
}

/* A ConditionCheck of item k (0 the header, 1 + j slot j) of a CHECK:
 * cond, with #o owner, #f fence, :o the holder, :t its token. */
static cJSON *check_item(const struct ddb_keys *keys, const struct store_sh_req *r, unsigned k,
			 const char *cond)
{
	cJSON *c = update(keys, r->name, k);
	cJSON_AddStringToObject(c, "ConditionExpression", cond);
	cJSON *n = cJSON_AddObjectToObject(c, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#o", "owner");
	if (ddb_uses(cond, "#f"))
		cJSON_AddStringToObject(n, "#f", "fence");
	if (ddb_uses(cond, ":o") || ddb_uses(cond, ":t")) {
		cJSON *v = cJSON_AddObjectToObject(c, "ExpressionAttributeValues");
		if (ddb_uses(cond, ":o"))
			ddb_add_str(v, ":o", "S", r->owner);
		if (ddb_uses(cond, ":t"))
			ddb_add_num(v, ":t", r->token);
	}
	cJSON_AddStringToObject(c, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	cJSON *w = cJSON_CreateObject();
	cJSON_AddItemToObject(w, "ConditionCheck", c);
	return w;
}

/* The two ConditionChecks of a CHECK (store_shared.h), the header first,
 * in a TransactItems list of a new root. */
static cJSON *build_check(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	bool shared = r->mode == STORE_SH_SHARED;
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "TransactItems");
	cJSON_AddItemToArray(list, check_item(keys, r, 0,
					      shared ? "attribute_not_exists(#o) AND #f = :t"
						     : "attribute_not_exists(#o)"));
	cJSON_AddItemToArray(
		list, check_item(keys, r, 1 + r->slot, shared ? "#o = :o" : "#o = :o AND #f = :t"));
	return root;
}

/* A TransactWriteItems of GRANT, RELEASE or REMOVE: the header first. */
static cJSON *build_tx(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	char token[STORE_TX_TOKEN_MAX + 1];
	store_new_id(token);
	cJSON *root = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(root, "TransactItems");
	if (r->op == STORE_SH_GRANT) {
		cJSON_AddItemToArray(list, grant_header(keys, r));
		cJSON_AddItemToArray(list, grant_slot(keys, r));
	} else {
		end_items(list, keys, r);
	}
	cJSON_AddStringToObject(root, "ClientRequestToken", token);
	return root;
}

static cJSON *build_renew(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	bool ttl = keys->ttl_attr != NULL && r->ttl > 0;
	char set[96];
	snprintf(set, sizeof(set), "SET #r = :r, #l = :l%s%s%s", r->holder ? ", #h = :h" : "",
		 ttl ? ", #x = :x" : "", r->holder ? "" : " REMOVE #h");
	cJSON *u = update(keys, r->name, 1 + r->slot);
	cJSON_AddStringToObject(u, "ConditionExpression", "#o = :o AND (#r = :sr OR #r = :r)");
	cJSON_AddStringToObject(u, "UpdateExpression", set);
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#o", "owner");
	cJSON_AddStringToObject(n, "#r", "rvn");
	cJSON_AddStringToObject(n, "#l", "leaseMs");
	cJSON_AddStringToObject(n, "#h", "holder");
	if (ttl)
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	ddb_add_str(v, ":o", "S", r->owner);
	ddb_add_str(v, ":r", "S", r->rvn);
	ddb_add_str(v, ":sr", "S", r->seen_rvn);
	ddb_add_num(v, ":l", r->lease_ms);
	if (r->holder != NULL)
		ddb_add_str(v, ":h", "S", r->holder);
	if (ttl)
		ddb_add_num(v, ":x", r->ttl);
	cJSON_AddStringToObject(u, "ReturnValues", "ALL_NEW");
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	return u;
}

/* XANNOUNCE and XCLEAR: the header's xwait fields (store_shared.h). */
static cJSON *build_announce(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	bool set = r->op == STORE_SH_XANNOUNCE;
	cJSON *u = update(keys, r->name, 0);
	cJSON_AddStringToObject(u, "ConditionExpression",
				set ? "(#sc > :zero OR attribute_type(#ra, :ss)) AND "
				      "(attribute_not_exists(#xw) OR #xw = :w)"
				    : "#xr = :sr");
	cJSON_AddStringToObject(u, "UpdateExpression",
				set ? "SET #xw = :w, #xr = :r, #xm = :m" : "REMOVE #xw, #xr, #xm");
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#xw", "xwait");
	cJSON_AddStringToObject(n, "#xr", "xwaitRvn");
	cJSON_AddStringToObject(n, "#xm", "xwaitMs");
	if (set) {
		cJSON_AddStringToObject(n, "#sc", "scount");
		cJSON_AddStringToObject(n, "#ra", "radmit");
	}
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	if (set) {
		ddb_add_num(v, ":zero", 0);
		ddb_add_str(v, ":ss", "S", "SS");
		ddb_add_str(v, ":w", "S", r->owner);
		ddb_add_str(v, ":r", "S", r->rvn);
		ddb_add_num(v, ":m", r->lease_ms);
	} else {
		ddb_add_str(v, ":sr", "S", r->seen_rvn);
	}
	cJSON_AddStringToObject(u, "ReturnValues", "ALL_NEW");
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	return u;
}

/* XTAKE: the stale exclusive holder's owner removed (store_shared.h). */
static cJSON *build_take(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	bool ttl = keys->ttl_attr != NULL && r->ttl > 0;
	cJSON *u = update(keys, r->name, 0);
	cJSON_AddStringToObject(u, "ConditionExpression", "#o = :o AND #r = :sr");
	/* the registered readers admitted, as by a release (store.h) */
	cJSON_AddStringToObject(
		u, "UpdateExpression",
		ttl ? "REMOVE #o, #l, #h, #sh, #rw SET #ra = if_not_exists(#rw, :na), "
		      "#x = :x"
		    : "REMOVE #o, #l, #h, #sh, #rw SET #ra = if_not_exists(#rw, :na)");
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	cJSON_AddStringToObject(n, "#o", "owner");
	cJSON_AddStringToObject(n, "#r", "rvn");
	cJSON_AddStringToObject(n, "#l", "leaseMs");
	cJSON_AddStringToObject(n, "#h", "holder");
	cJSON_AddStringToObject(n, "#sh", "secretHash");
	cJSON_AddStringToObject(n, "#rw", "rwaiters");
	cJSON_AddStringToObject(n, "#ra", "radmit");
	if (ttl)
		cJSON_AddStringToObject(n, "#x", keys->ttl_attr);
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	ddb_add_str(v, ":o", "S", r->owner);
	ddb_add_str(v, ":sr", "S", r->seen_rvn);
	ddb_add_str(v, ":na", "S", "-");
	if (ttl)
		ddb_add_num(v, ":x", r->ttl);
	cJSON_AddStringToObject(u, "ReturnValues", "ALL_NEW");
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	return u;
}

/* RWAIT, RUNWAIT and RCLEAR: the header's reader sets (store_shared.h). */
static cJSON *build_readers(const struct ddb_keys *keys, const struct store_sh_req *r)
{
	static const char *const text[][2] = {
		[STORE_SH_RWAIT] = {"(attribute_exists(#o) OR attribute_exists(#xw)) AND "
				    "(attribute_not_exists(#rw) OR size(#rw) < :max)",
				    "ADD #rw :mes"},
		[STORE_SH_RUNWAIT] = {"attribute_exists(#ty)", "DELETE #rw :mes, #ra :mes"},
		[STORE_SH_RCLEAR] = {"#ra = :seen", "REMOVE #ra"},
	};
	const char *cond = text[r->op][0], *expr = text[r->op][1];
	if (r->op == STORE_SH_RUNWAIT && !r->admitted) /* radmit may be "-": a string */
		expr = "DELETE #rw :mes";
	char both[256];
	snprintf(both, sizeof(both), "%s %s", cond, expr);
	cJSON *u = update(keys, r->name, 0);
	cJSON_AddStringToObject(u, "ConditionExpression", cond);
	cJSON_AddStringToObject(u, "UpdateExpression", expr);
	static const char *const names[][2] = {{"#o", "owner"},
					       {"#xw", "xwait"},
					       {"#rw", "rwaiters"},
					       {"#ra", "radmit"},
					       {"#ty", "_type"}};
	cJSON *n = cJSON_AddObjectToObject(u, "ExpressionAttributeNames");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ddb_uses(both, names[i][0]))
			cJSON_AddStringToObject(n, names[i][0], names[i][1]);
	cJSON *v = cJSON_AddObjectToObject(u, "ExpressionAttributeValues");
	if (ddb_uses(both, ":mes"))
		add_set(v, ":mes", &r->owner, 1);
	if (ddb_uses(both, ":max"))
		ddb_add_num(v, ":max", STORE_SH_SET_MAX);
	if (ddb_uses(both, ":seen")) {
		const char *ids[STORE_SH_SET_MAX];
		for (unsigned i = 0; i < r->seen_set->n; i++)
			ids[i] = r->seen_set->id[i];
		add_set(v, ":seen", ids, r->seen_set->n);
	}
	cJSON_AddStringToObject(u, "ReturnValues", "ALL_NEW");
	cJSON_AddStringToObject(u, "ReturnValuesOnConditionCheckFailure", "ALL_OLD");
	return u;
}

/* A BatchGetItem of the items of sh not read yet. */
static cJSON *build_read(const struct ddb_keys *keys, const struct ddb_sh *sh)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *t =
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "RequestItems"), keys->table);
	cJSON *list = cJSON_AddArrayToObject(t, "Keys");
	for (unsigned i = 0; i <= sh->req.count; i++) {
		if (sh->got[i])
			continue;
		cJSON *key = cJSON_CreateObject();
		add_key(key, keys, sh->req.name, i == 0 ? 0 : sh->req.slot + i);
		cJSON_AddItemToArray(list, key);
	}
	cJSON_AddBoolToObject(t, "ConsistentRead", 1);
	return root;
}

/* ---- reading answers ---- */

/* The index of the item whose partition key is pk (0 the header, 1 + i
 * slot req.slot + i), or -1 when it is none of the read's. */
static int item_index(const char *pk, const struct ddb_sh *sh)
{
	size_t nl = strlen(sh->req.name);
	if (strncmp(pk, HEADER_KIND, 5) == 0 && strcmp(pk + 5, sh->req.name) == 0)
		return 0;
	if (strncmp(pk, "SLOT#", 5) != 0)
		return -1;
	char *end;
	unsigned long k = strtoul(pk + 5, &end, 10);
	if (end == pk + 5 || *end != '#' || k < sh->req.slot || k >= sh->req.slot + sh->req.count ||
	    strlen(end + 1) != nl || strcmp(end + 1, sh->req.name) != 0)
		return -1;
	return 1 + (int)(k - sh->req.slot);
}

static const char *pk_of(const cJSON *item, const struct ddb_keys *keys)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, keys->pk), "S");
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* scount, smode and slimit of a header item into h (absent: 0, ""). */
static void parse_shared(const cJSON *item, struct store_sh_header *h)
{
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "scount"), "N");
	const cJSON *sm = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "smode"), "S");
	const cJSON *sl = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "slimit"), "N");
	const cJSON *xw = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "xwait"), "S");
	const cJSON *xr = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "xwaitRvn"), "S");
	const cJSON *xm = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, "xwaitMs"), "N");
	snprintf(h->xwait, sizeof(h->xwait), "%s", cJSON_IsString(xw) ? xw->valuestring : "");
	snprintf(h->xwait_rvn, sizeof(h->xwait_rvn), "%s",
		 cJSON_IsString(xr) ? xr->valuestring : "");
	if (!cJSON_IsString(xm) || !ddb_parse_int64(xm->valuestring, &h->xwait_ms))
		h->xwait_ms = 0;
	h->has_scount = cJSON_IsString(sc) && ddb_parse_int64(sc->valuestring, &h->scount);
	if (!h->has_scount)
		h->scount = 0;
	snprintf(h->smode, sizeof(h->smode), "%s", cJSON_IsString(sm) ? sm->valuestring : "");
	if (!cJSON_IsString(sl) || !ddb_parse_int64(sl->valuestring, &h->slimit))
		h->slimit = 0;
}

/* A string set attribute of item into s (n = 0 when absent or no set;
 * ids past STORE_SH_SET_MAX, or too long, are not kept: leasegate writes
 * none) */
static void parse_set(const cJSON *item, const char *name, struct store_sh_set *s)
{
	const cJSON *ss = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(item, name), "SS");
	const cJSON *id, *list = cJSON_IsArray(ss) ? ss : NULL;
	s->n = 0;
	cJSON_ArrayForEach(id, list)
	{
		if (s->n < STORE_SH_SET_MAX && cJSON_IsString(id) &&
		    strlen(id->valuestring) <= STORE_ID_MAX)
			snprintf(s->id[s->n++], sizeof(s->id[0]), "%s", id->valuestring);
	}
}

/* item (a DynamoDB item) as item k of sh; false with err when malformed */
static bool take_item(struct ddb_sh *sh, unsigned k, const cJSON *item, const char *ttl, char *err)
{
	struct lock_item *to = k == 0 ? &sh->header.lock : &sh->items[k];
	if (!ddb_parse_item(item, ttl, to, err))
		return false;
	if (k == 0) {
		parse_shared(item, &sh->header);
		parse_set(item, "rwaiters", &sh->header.rwaiters);
		parse_set(item, "radmit", &sh->header.radmit);
	}
	return true;
}

/* Delivers sh's answer with status and message. */
static void deliver(struct store_call *c, struct ddb_sh *sh, enum store_status status,
		    const char *error_type, const char *message, unsigned index)
{
	struct store_sh_result r = {.status = status, .error_type = error_type, .index = index};
	snprintf(r.message, sizeof(r.message), "%s", status == STORE_OK ? "" : message);
	r.header = sh->header;
	bool read = sh->req.op == STORE_SH_READ;
	r.nslots = read ? sh->req.count : 1;
	r.slots = &sh->items[1];
	c->sh_cb(c->arg, &r);
}

/* What a GRANT made of the items, from what the caller saw. */
static void granted(struct ddb_sh *sh)
{
	const struct store_sh_req *r = &sh->req;
	struct lock_item *slot = &sh->items[1];
	*slot = (struct lock_item){.exists = true,
				   .has_owner = true,
				   .has_rvn = true,
				   .has_lease = true,
				   .has_fence = true};
	snprintf(slot->owner, sizeof(slot->owner), "%s", r->owner);
	snprintf(slot->rvn, sizeof(slot->rvn), "%s", r->rvn);
	snprintf(slot->holder, sizeof(slot->holder), "%s", r->holder ? r->holder : "");
	snprintf(slot->type, sizeof(slot->type), "SLOT");
	slot->fence = r->seen_slot_fence + 1;
	slot->lease_ms = r->lease_ms;
	struct store_sh_header *h = &sh->header;
	*h = (struct store_sh_header){.lock = {.exists = true, .has_fence = true}};
	snprintf(h->lock.type, sizeof(h->lock.type), "LOCK");
	h->lock.fence = r->seen_fence + (r->first && r->mode == STORE_SH_SHARED ? 1 : 0);
	h->lock.has_fence = h->lock.fence > 0;
	h->has_scount = r->first; /* else another grant may have moved it */
	h->scount = r->first ? 1 : 0;
	snprintf(h->smode, sizeof(h->smode), "%s", mode_name(r->mode));
	h->slimit = r->mode == STORE_SH_LIMIT ? r->cap : 0;
}

/* The refused item of a cancelled transaction into sh: its index (0 the
 * header, 1 the slot; 2 when the answer does not say). */
static unsigned cancelled(struct ddb_sh *sh, const char *body, size_t len, const char *ttl)
{
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "CancellationReasons"), *r;
	unsigned i = 0, found = 2;
	char err[DDB_ERR_MAX];
	cJSON_ArrayForEach(r, list)
	{
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "Code");
		if (i < 2 && cJSON_IsString(code) &&
		    strcmp(code->valuestring, "ConditionalCheckFailed") == 0) {
			const cJSON *it = cJSON_GetObjectItemCaseSensitive(r, "Item");
			if (it == NULL || take_item(sh, i, it, ttl, err))
				found = i;
			break;
		}
		i++;
	}
	cJSON_Delete(root);
	return found;
}

static void tx_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_sh *sh = c->sh;
	c->ds->base.in_flight--;
	unsigned index = 2;
	if (res->status == STORE_OK && sh->req.op == STORE_SH_GRANT)
		granted(sh);
	if (res->status == STORE_OK && sh->req.op != STORE_SH_GRANT) {
		sh->items[1] = (struct lock_item){.exists = true};
		snprintf(sh->items[1].type, sizeof(sh->items[1].type), "SLOT");
	}
	if (res->status == STORE_REFUSED)
		index = cancelled(sh, body, len, c->ds->keys.ttl_attr);
	deliver(c, sh, res->status, res->error_type, res->message, index);
}

/* An XANNOUNCE's, XCLEAR's or XTAKE's answer: the header's lock attributes. */
static void announce_done(struct store_call *c, struct store_result *res, const char *body,
			  size_t len)
{
	c->ds->base.in_flight--;
	c->sh->header.lock = res->item;
	deliver(c, c->sh, res->status, res->error_type, res->message, 0);
}

static void renew_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	c->ds->base.in_flight--;
	c->sh->items[1] = res->item;
	deliver(c, c->sh, res->status, res->error_type, res->message, 1);
}

/* Marks got every key asked but those UnprocessedKeys names; false when
 * some are left. */
static bool mark_read(struct ddb_sh *sh, const cJSON *root, const struct ddb_keys *keys)
{
	bool left[1 + STORE_SH_CAP] = {false}, any = false;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "UnprocessedKeys"), keys->table);
	const cJSON *k;
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(t, "Keys"))
	{
		const char *pk = pk_of(k, keys);
		int i = pk != NULL ? item_index(pk, sh) : -1;
		if (i >= 0)
			left[i] = any = true;
	}
	for (unsigned i = 0; i <= sh->req.count; i++)
		if (!left[i])
			sh->got[i] = true;
	return !any;
}

static size_t read_body(const struct ddb_keys *keys, const struct ddb_sh *sh, char **body);

static void read_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_sh *sh = c->sh;
	struct ddb_store *ds = c->ds;
	char err[DDB_ERR_MAX] = "the answer is no BatchGetItem's";
	ds->base.in_flight--;
	if (res->status != STORE_OK) {
		deliver(c, sh, res->status == STORE_REFUSED ? STORE_FATAL : res->status,
			res->error_type, res->message, 2);
		return;
	}
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *items = ddb_batch_items(root, ds->keys.table);
	bool ok = items != NULL;
	const cJSON *it;
	const cJSON *list = ok ? items : NULL;
	cJSON_ArrayForEach(it, list)
	{
		const char *pk = pk_of(it, &ds->keys);
		int i = pk != NULL ? item_index(pk, sh) : -1;
		if (i < 0 || !take_item(sh, (unsigned)i, it, ds->keys.ttl_attr, err)) {
			ok = false;
			break;
		}
	}
	bool done = ok && mark_read(sh, root, &ds->keys);
	cJSON_Delete(root);
	if (!ok) {
		char msg[STORE_MSG_MAX];
		snprintf(msg, sizeof(msg), "DynamoDB BatchGetItem on table %.64s: %.150s",
			 ds->table, err);
		deliver(c, sh, STORE_FATAL, "BadResponse", msg, 2);
	} else if (done) {
		deliver(c, sh, STORE_OK, NULL, "", 2);
	} else if (++sh->rounds >= UNPROCESSED_MAX) {
		deliver(c, sh, STORE_TRANSIENT, "UnprocessedKeys",
			"DynamoDB BatchGetItem: keys left unprocessed after retries", 2);
	} else { /* the same call goes on: the caller's handle stays valid */
		char *next = NULL;
		size_t n = read_body(&ds->keys, sh, &next);
		ddbs_continue(c, DDB_BATCH_GET_ITEM, read_done, next, n);
	}
}

/* ---- the store operation ---- */

static size_t copy_in(char *dst, size_t cap, const char *src)
{
	return src != NULL ? (size_t)snprintf(dst, cap, "%s", src) : 0;
}

/* A copy of req in a new ddb_sh with room for its items. */
static struct ddb_sh *sh_new(const struct store_sh_req *req)
{
	unsigned count = req->count != 0 ? req->count : req->cap - req->slot;
	unsigned n = req->op == STORE_SH_READ ? 1 + count : 2;
	struct ddb_sh *sh = calloc(1, sizeof(*sh) + n * sizeof(struct lock_item));
	if (sh == NULL)
		return NULL;
	sh->req = *req;
	sh->req.count = req->op == STORE_SH_READ ? count : 0;
	copy_in(sh->name, sizeof(sh->name), req->name);
	sh->req.name = sh->name;
	copy_in(sh->owner, sizeof(sh->owner), req->owner);
	sh->req.owner = req->owner ? sh->owner : NULL;
	copy_in(sh->rvn, sizeof(sh->rvn), req->rvn);
	sh->req.rvn = req->rvn ? sh->rvn : NULL;
	copy_in(sh->seen_rvn, sizeof(sh->seen_rvn), req->seen_rvn);
	sh->req.seen_rvn = req->seen_rvn ? sh->seen_rvn : NULL;
	copy_in(sh->holder, sizeof(sh->holder), req->holder);
	sh->req.holder = req->holder ? sh->holder : NULL;
	if (req->seen_set != NULL) {
		sh->seen_set = *req->seen_set;
		sh->req.seen_set = &sh->seen_set;
	}
	return sh;
}

static char *print(cJSON *root, size_t *len)
{
	char *body = root != NULL ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	if (body != NULL)
		*len = strlen(body);
	return body;
}

char *ddb_sh_check_body(const struct ddb_keys *keys, const struct store_sh_req *r, size_t *len)
{
	if (r->op != STORE_SH_CHECK || !store_sh_valid(r))
		return NULL;
	return print(build_check(keys, r), len);
}

/* Starts a call of dop with body, owning sh from then on. */
static struct store_call *start(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done,
				cJSON *root, struct ddb_sh *sh, store_sh_cb cb, void *arg)
{
	size_t len = 0;
	char *body = print(root, &len);
	struct store_call *c = ddbs_start(ds, dop, done, body, len); /* it ends from the loop */
	if (c == NULL) {
		free(sh);
		return NULL;
	}
	c->sh = sh;
	c->sh_cb = cb;
	c->arg = arg;
	return c;
}

/* The body of the next round of a READ (the keys still unprocessed) into
 * *body, its length returned; *body NULL on out-of-memory (the call then
 * answers OutOfMemory). */
static size_t read_body(const struct ddb_keys *keys, const struct ddb_sh *sh, char **body)
{
	size_t len = 0;
	*body = print(build_read(keys, sh), &len);
	return len;
}

struct store_call *ddbs_sh_submit(struct store *s, const struct store_sh_req *req, store_sh_cb cb,
				  void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct ddb_sh *sh = sh_new(req);
	if (sh == NULL)
		return NULL;
	struct store_call *c;
	switch (req->op) {
	case STORE_SH_RENEW:
		c = start(ds, DDB_UPDATE_ITEM, renew_done, build_renew(&ds->keys, &sh->req), sh, cb,
			  arg);
		if (c != NULL)
			c->op = STORE_RENEW;
		s->requests[STORE_RENEW]++;
		return c;
	case STORE_SH_XANNOUNCE:
	case STORE_SH_XCLEAR:
		c = start(ds, DDB_UPDATE_ITEM, announce_done, build_announce(&ds->keys, &sh->req),
			  sh, cb, arg);
		if (c != NULL)
			c->op = req->op == STORE_SH_XANNOUNCE ? STORE_ANNOUNCE : STORE_WITHDRAW;
		s->requests[req->op == STORE_SH_XANNOUNCE ? STORE_ANNOUNCE : STORE_WITHDRAW]++;
		return c;
	case STORE_SH_XTAKE:
		c = start(ds, DDB_UPDATE_ITEM, announce_done, build_take(&ds->keys, &sh->req), sh,
			  cb, arg);
		s->requests[STORE_RELEASE]++;
		return c;
	case STORE_SH_RWAIT:
	case STORE_SH_RUNWAIT:
	case STORE_SH_RCLEAR:
		c = start(ds, DDB_UPDATE_ITEM, announce_done, build_readers(&ds->keys, &sh->req),
			  sh, cb, arg);
		if (c != NULL)
			c->op = STORE_ANNOUNCE;
		s->requests[STORE_ANNOUNCE]++;
		return c;
	case STORE_SH_READ:
		c = start(ds, DDB_BATCH_GET_ITEM, read_done, build_read(&ds->keys, sh), sh, cb,
			  arg);
		s->requests[STORE_READ]++;
		return c;
	case STORE_SH_CHECK: /* the checks alone: nothing to apply twice, no token */
		c = start(ds, DDB_TRANSACT_WRITE_ITEMS, tx_done, build_check(&ds->keys, &sh->req),
			  sh, cb, arg);
		if (c != NULL)
			c->op = STORE_TRANSACT; /* its answer's reasons read, item by item */
		s->requests[STORE_CHECK]++;
		return c;
	default:
		c = start(ds, DDB_TRANSACT_WRITE_ITEMS, tx_done, build_tx(&ds->keys, &sh->req), sh,
			  cb, arg);
		if (c != NULL)
			c->op = STORE_TRANSACT;
		s->requests[STORE_TRANSACT]++;
		return c;
	}
}
