/*
 * store_dynamodb_open.c: the open of the DynamoDB store (see
 * store_dynamodb.h): DescribeTable to learn and check the keys and to
 * refuse a global table, with create_table a CreateTable, DescribeTable
 * until ACTIVE, then UpdateTimeToLive; a table it did not create, one Scan
 * of its first items (peek) to say whether it holds anything but locks.
 * Each step is a call of store_dynamodb.c, retried like any request.
 */
#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/store_dynamodb_int.h"

#define OPEN_POLL_MS 1000	  /* DescribeTable while the table is CREATING */
#define OPEN_WAIT_MS (300 * 1000) /* the longest wait for ACTIVE */

static void open_end(struct ddb_store *ds, struct store_result *res)
{
	ds->open = res->status == STORE_OK ? OPEN_DONE : OPEN_NONE;
	ds->open_cb(ds->open_arg, res);
}

static bool open_step(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done);

static void open_fail(struct ddb_store *ds, enum store_status st, const char *type, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));
static void open_fail(struct ddb_store *ds, enum store_status st, const char *type, const char *fmt,
		      ...)
{
	struct store_result res;
	memset(&res, 0, sizeof res);
	res.status = st;
	res.error_type = type;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res.message, sizeof res.message, fmt, ap);
	va_end(ap);
	open_end(ds, &res);
}

static void open_next(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done)
{
	if (!open_step(ds, dop, done))
		open_fail(ds, STORE_TRANSIENT, "OutOfMemory", "DynamoDB store of table %s: %s",
			  ds->table, "out of memory while opening");
}

static void ttl_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	open_end(c->ds, res);
}

static void describe_done(struct store_call *c, struct store_result *res, const char *body,
			  size_t len);

/* ---- the peek: is this a table of locks? ---- */

/* Is the string attribute name of item equal to want (or, with prefix,
 * does it start with want)? */
static bool str_attr(const cJSON *item, const char *name, const char *want, bool prefix)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(item, name);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "S");
	if (!cJSON_IsString(v))
		return false;
	return prefix ? strncmp(v->valuestring, want, strlen(want)) == 0
		      : strcmp(v->valuestring, want) == 0;
}

/* The items leasegate writes in its table, by key and _type: none of
 * them is another application's. sk: the sort key's value when the table
 * has one (NULL: any string, as a revocation's entry key). */
static const struct own_kind {
	const char *prefix, *sk, *type;
} own_kinds[] = {
	{"LOCK#", "LOCK", "LOCK"},	     /* a lock, as the reference writes it */
	{"SCRIPT#", "SCRIPT", "SCRIPT"},     /* a script cached (core/store_blob.h) */
	{"SLOT#", "LOCK", "SLOT"},	     /* a slot of a shared name (store_shared.h) */
	{"SESSION#", "LOCK", "SESSION"},     /* a replica's session (store_session.h) */
	{"REVOKE#SESSION#", NULL, "REVOKE"}, /* revocations (store_revoke.h) */
};

static bool own_item(const struct ddb_store *ds, const cJSON *item)
{
	for (size_t i = 0; i < sizeof(own_kinds) / sizeof(own_kinds[0]); i++) {
		const struct own_kind *k = &own_kinds[i];
		if (str_attr(item, ds->pk, k->prefix, true) &&
		    (!ds->sk[0] ||
		     str_attr(item, ds->sk, k->sk != NULL ? k->sk : "", k->sk == NULL)) &&
		    str_attr(item, "_type", k->type, false))
			return true;
	}
	return false;
}

/* Adds the attribute names of item to the comma-separated list, each
 * once, as many as fit. */
static void add_names(char *list, size_t cap, const cJSON *item)
{
	const cJSON *a;
	cJSON_ArrayForEach(a, item)
	{
		size_t n = strlen(list), an = strlen(a->string);
		const char *p = list;
		bool seen = false;
		while (!seen && *p) {
			size_t m = strcspn(p, ",");
			seen = m == an && strncmp(p, a->string, m) == 0;
			p += m + (p[m] == ',');
		}
		if (!seen && n + (n > 0) + an < cap)
			snprintf(list + n, cap - n, "%s%s", n > 0 ? "," : "", a->string);
	}
}

/* What the first items say (stats.table.peeked, foreign, foreign_attrs);
 * an answer that is no Scan's leaves peeked at -1. */
static void read_peek(struct ddb_store *ds, const char *body, size_t len)
{
	struct store_dynamodb_table *t = &ds->stats.table;
	cJSON *root = body ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "Items"), *it;
	if (!cJSON_IsArray(items)) {
		ddbs_copy(t->peek_error, sizeof t->peek_error, "BadResponse");
		cJSON_Delete(root);
		return;
	}
	t->peeked = 0;
	cJSON_ArrayForEach(it, items)
	{
		t->peeked++;
		if (!own_item(ds, it)) {
			t->foreign++;
			add_names(t->foreign_attrs, sizeof t->foreign_attrs, it);
		}
	}
	cJSON_Delete(root);
}

/* The peek never fails the open: a Scan refused (a policy without Scan)
 * or failing leaves the table unlooked at, and says why. */
static void peek_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	struct store_result ok;
	if (res->status == STORE_OK)
		read_peek(ds, body, len);
	else
		ddbs_copy(ds->stats.table.peek_error, sizeof ds->stats.table.peek_error,
			  res->error_type ? res->error_type : store_status_name(res->status));
	memset(&ok, 0, sizeof ok);
	ok.status = STORE_OK;
	open_end(ds, &ok);
}

static void poll_timer(void *arg)
{
	open_next(arg, DDB_DESCRIBE_TABLE, describe_done);
}

void ddbs_open_init(struct ddb_store *ds)
{
	timer_init(&ds->open_timer, ds->clock, poll_timer, ds);
}

static void create_done(struct store_call *c, struct store_result *res, const char *body,
			size_t len)
{
	struct ddb_store *ds = c->ds;
	/* ResourceInUse: another replica is creating it; wait for ACTIVE too */
	if (res->status == STORE_OK ||
	    (res->error_type && strcmp(res->error_type, "ResourceInUseException") == 0)) {
		ds->created = true;
		/* ResourceInUse: made by another replica, not by this one */
		ds->stats.table.created = res->status == STORE_OK;
		open_next(ds, DDB_DESCRIBE_TABLE, describe_done);
		return;
	}
	open_end(ds, res);
}

/* A key type as DescribeTable names it, in words. */
static const char *type_name(char t)
{
	return t == 'S' ? "string S" : t == 'N' ? "number N" : t == 'B' ? "binary B" : "unknown";
}

/* Checks the table's keys against the configuration and the lock format:
 * a lock item's keys are strings (LOCK#<name>, and LOCK for a sort key),
 * so a table with a number or binary key is another application's. */
static bool adopt_keys(struct ddb_store *ds, const struct ddb_table_desc *d)
{
	if (d->pk_type != 'S' || (d->sk[0] && d->sk_type != 'S')) {
		char sk[80] = "no sort key";
		if (d->sk[0])
			snprintf(sk, sizeof sk, "sort key %.32s (%s)", d->sk,
				 type_name(d->sk_type));
		/* within STORE_MSG_MAX */
		open_fail(ds, STORE_FATAL, "NonStringKey",
			  "table %.48s has partition key %.32s (%s), %s; a lock table's keys "
			  "must be strings (partition key LOCK#<name>, sort key LOCK if any): is "
			  "it the lock table?",
			  ds->table, d->pk, type_name(d->pk_type), sk);
		return false;
	}
	if (ds->keys_given && (strcmp(d->pk, ds->pk) != 0 || strcmp(d->sk, ds->sk) != 0)) {
		open_fail(ds, STORE_FATAL, "KeyMismatch",
			  "table %s has keys (%s, %s), not the configured (%s, %s)", ds->table,
			  d->pk, d->sk[0] ? d->sk : "no sort key", ds->pk,
			  ds->sk[0] ? ds->sk : "no sort key");
		return false;
	}
	struct ddb_keys k = {ds->table, d->pk, d->sk[0] ? d->sk : NULL, ds->keys.ttl_attr};
	char err[DDB_ERR_MAX];
	if (!ddb_keys_valid(&k, err)) {
		open_fail(ds, STORE_FATAL, "InvalidKeys", "%s", err);
		return false;
	}
	ddbs_copy(ds->pk, sizeof ds->pk, d->pk);
	ddbs_copy(ds->sk, sizeof ds->sk, d->sk);
	ddbs_copy(ds->stats.table.pk, sizeof ds->stats.table.pk, d->pk);
	ddbs_copy(ds->stats.table.sk, sizeof ds->stats.table.sk, d->sk);
	ds->keys.sk = ds->sk[0] ? ds->sk : NULL;
	return true;
}

/* Records what d says of the table; false (the open failed) for a global
 * table that is not allowed. */
static bool adopt_kind(struct ddb_store *ds, const struct ddb_table_desc *d)
{
	struct store_dynamodb_table *t = &ds->stats.table;
	ddbs_copy(t->arn, sizeof t->arn, d->arn);
	ddbs_copy(t->replicas, sizeof t->replicas, d->replicas);
	ddbs_copy(t->global_version, sizeof t->global_version, d->global_version);
	t->nreplicas = d->nreplicas;
	t->global = d->nreplicas > 0;
	if (!t->global || ds->cfg.allow_global_table)
		return true;
	/* within STORE_MSG_MAX; docs/dynamodb.md, Global tables, says the rest */
	open_fail(ds, STORE_FATAL, "GlobalTable",
		  "table %.40s is a DynamoDB global table (replicas in %.60s): leasegate "
		  "replicas writing to two regions could both be granted one lock "
		  "(last-writer-wins); start with --allow-global-table only if all use region "
		  "%.20s",
		  ds->table, d->replicas, ds->region);
	return false;
}

/* With the keys configured, DescribeTable is needed for the table's kind
 * only: a policy that does not grant it leaves the kind unknown. */
static bool describe_optional(const struct ddb_store *ds, const struct store_result *res)
{
	return ds->keys_given && !ds->cfg.create_table && res->error_type != NULL &&
	       strcmp(res->error_type, "AccessDeniedException") == 0;
}

static void describe_done(struct store_call *c, struct store_result *res, const char *body,
			  size_t len)
{
	struct ddb_store *ds = c->ds;
	if (res->status == STORE_NO_TABLE && ds->cfg.create_table && !ds->created) {
		open_next(ds, DDB_CREATE_TABLE, create_done);
		return;
	}
	if (res->status != STORE_OK && describe_optional(ds, res)) {
		struct store_result ok;
		memset(&ok, 0, sizeof ok);
		ok.status = STORE_OK;
		open_end(ds, &ok);
		return;
	}
	if (res->status != STORE_OK) {
		open_end(ds, res);
		return;
	}
	struct ddb_table_desc d;
	char err[DDB_ERR_MAX];
	if (!ddb_parse_table(body, len, &d, err)) {
		open_fail(ds, STORE_FATAL, "BadResponse", "DescribeTable of %s: %s", ds->table,
			  err);
		return;
	}
	if (!adopt_keys(ds, &d) || !adopt_kind(ds, &d))
		return;
	if (strcmp(d.status, "ACTIVE") != 0) {
		if (clock_now_ms(ds->clock) + OPEN_POLL_MS > ds->open_until) {
			open_fail(ds, STORE_TRANSIENT, "TableNotActive", "table %s is still %s",
				  ds->table, d.status);
			return;
		}
		timer_arm(&ds->open_timer, OPEN_POLL_MS);
		return;
	}
	if (ds->created && ds->keys.ttl_attr) {
		open_next(ds, DDB_UPDATE_TIME_TO_LIVE, ttl_done);
		return;
	}
	if (!ds->created) { /* a new table holds nothing to look at */
		open_next(ds, DDB_SCAN, peek_done);
		return;
	}
	open_end(ds, res);
}

/* The peek's Scan: the first items, whole (the table name is checked:
 * a-z A-Z 0-9 _ . - only, nothing to escape). */
static char *peek_body(const char *table, size_t *len)
{
	size_t cap = strlen(table) + 64;
	char *b = malloc(cap);
	if (b != NULL)
		*len = (size_t)snprintf(b, cap, "{\"TableName\":\"%s\",\"Limit\":%d}", table,
					STORE_DDB_PEEK_ITEMS);
	return b;
}

static bool open_step(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done)
{
	struct store_call *c = ddbs_new_call(ds, dop, done, ds->cfg.op_timeout_ms);
	char err[DDB_ERR_MAX];
	if (!c)
		return false;
	if (dop == DDB_DESCRIBE_TABLE)
		c->body = ddb_build_describe_table(ds->table, &c->body_len, err);
	else if (dop == DDB_CREATE_TABLE)
		c->body = ddb_build_create_table(&ds->keys, &c->body_len, err);
	else if (dop == DDB_UPDATE_TIME_TO_LIVE)
		c->body = ddb_build_update_ttl(ds->table, ds->keys.ttl_attr, &c->body_len, err);
	else if (dop == DDB_SCAN)
		c->body = peek_body(ds->table, &c->body_len);
	if (!c->body) {
		ddbs_drop(c);
		return false;
	}
	ddbs_send(c);
	return true;
}

bool store_dynamodb_open(struct store *s, store_cb cb, void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	if (ds->open == OPEN_RUNNING)
		return false;
	ds->open = OPEN_RUNNING;
	ds->open_cb = cb;
	ds->open_arg = arg;
	ds->created = false;
	ds->stats.table.peeked = -1;
	ds->stats.table.foreign = 0;
	ds->stats.table.foreign_attrs[0] = ds->stats.table.peek_error[0] = '\0';
	ds->open_until = clock_now_ms(ds->clock) + OPEN_WAIT_MS;
	bool ok;
	if (ds->keys_given && !ds->cfg.create_table && !ds->cfg.read_kind) {
		/* nothing to learn: open without a request (and without needing
		 * the DescribeTable permission) */
		struct store_call *c = ddbs_new_call(ds, DDB_DESCRIBE_TABLE, ttl_done, 0);
		ok = c != NULL;
		if (c)
			ddbs_defer(c);
	} else {
		ok = open_step(ds, DDB_DESCRIBE_TABLE, describe_done);
	}
	if (!ok)
		ds->open = OPEN_NONE;
	return ok;
}
