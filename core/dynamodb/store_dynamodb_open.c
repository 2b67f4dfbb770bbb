/*
 * store_dynamodb_open.c: the open of the DynamoDB store (see
 * store_dynamodb.h): DescribeTable to learn and check the keys and to
 * refuse a global table, with create_table a CreateTable, DescribeTable
 * until ACTIVE, then UpdateTimeToLive. Each step is a call of
 * store_dynamodb.c, retried like any request.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/dynamodb/store_dynamodb_int.h"

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

/* Checks the table's keys against the configuration and the lock format. */
static bool adopt_keys(struct ddb_store *ds, const struct ddb_table_desc *d)
{
	if (d->pk_type != 'S' || (d->sk[0] && d->sk_type != 'S')) {
		open_fail(ds, STORE_FATAL, "NonStringKey",
			  "table %s: its keys must be strings, but %s is of type %c", ds->table,
			  d->pk_type != 'S' ? d->pk : d->sk,
			  d->pk_type != 'S' ? (d->pk_type ? d->pk_type : '?')
					    : (d->sk_type ? d->sk_type : '?'));
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
	/* within STORE_MSG_MAX; README "Configure DynamoDB" says the rest */
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
	open_end(ds, res);
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
