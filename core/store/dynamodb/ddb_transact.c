/*
 * ddb_transact.c: fenced transactions on DynamoDB (see ddb_transact.h and
 * core/store/store_tx.h): the body, the reading of CancellationReasons, and the
 * store operation on the calls of store_dynamodb.c.
 */
#include "core/store/dynamodb/ddb_transact.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/store_dynamodb_int.h"

/* ---- the body ---- */

static bool token_ok(const char *t)
{
	size_t n = t != NULL ? strlen(t) : 0;
	return n >= 1 && n <= STORE_TX_TOKEN_MAX &&
	       strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

/* The transaction's head: {"TransactItems":[the lock's checks]}, the
 * lock item's (store.h CHECK) or a shared holder's (store_shared.h). */
static char *check_body(const struct ddb_keys *k, const struct store_tx_req *req, size_t *len,
			char *err)
{
	if (!req->shared) {
		struct store_req check = {.op = STORE_CHECK,
					  .name = req->name,
					  .owner = req->owner,
					  .token = req->token};
		return ddb_build_request(k, &check, len, err);
	}
	struct store_sh_req check = {.op = STORE_SH_CHECK,
				     .name = req->name,
				     .mode = req->mode,
				     .cap = STORE_SH_CAP,
				     .slot = req->slot,
				     .owner = req->owner,
				     .token = req->token};
	char *body = ddb_sh_check_body(k, &check, len);
	if (body == NULL)
		ddb_errf(err,
			 "a shared holder's check needs a name, an owner, a token > 0 and a "
			 "slot < %d",
			 STORE_SH_CAP);
	return body;
}

char *ddb_build_transact(const struct ddb_keys *k, const struct store_tx_req *req,
			 const char *client_token, size_t *len, char *err)
{
	/* the client's items without their brackets */
	const char *p = req->items, *e = req->items != NULL ? req->items + req->items_len : NULL;
	while (p < e && strchr(" \t\r\n", *p) != NULL && *p)
		p++;
	while (e > p && strchr(" \t\r\n", e[-1]) != NULL && e[-1])
		e--;
	if (p == NULL || e - p < 2 || *p != '[' || e[-1] != ']' ||
	    memchr(p, '\0', (size_t)(e - p)) != NULL) {
		ddb_errf(err, "the items must be a JSON array");
		return NULL;
	}
	p++, e--;
	while (p < e && strchr(" \t\r\n", *p) != NULL)
		p++;
	if (p == e) {
		ddb_errf(err, "the items must not be empty");
		return NULL;
	}
	if (!token_ok(client_token)) {
		ddb_errf(err, "a ClientRequestToken is 1..%d characters of A-Z a-z 0-9 -",
			 STORE_TX_TOKEN_MAX);
		return NULL;
	}
	size_t clen;
	char *head = check_body(k, req, &clen, err);
	if (head == NULL)
		return NULL;
	/* {"TransactItems":[{"ConditionCheck":{...}}]} : the items go before
	 * the last "]}" */
	if (clen < 2 || strcmp(head + clen - 2, "]}") != 0) {
		ddb_body_free(head);
		ddb_errf(err, "unexpected check body");
		return NULL;
	}
	static const char tail[] = "],\"ClientRequestToken\":\"";
	size_t ilen = (size_t)(e - p), tlen = strlen(client_token);
	size_t n = clen - 2 + 1 + ilen + sizeof(tail) - 1 + tlen + 2;
	char *body = malloc(n + 1);
	if (body == NULL) {
		ddb_body_free(head);
		ddb_errf(err, "out of memory building a request");
		return NULL;
	}
	size_t at = clen - 2;
	memcpy(body, head, at);
	body[at++] = ',';
	memcpy(body + at, p, ilen);
	at += ilen;
	memcpy(body + at, tail, sizeof(tail) - 1);
	at += sizeof(tail) - 1;
	memcpy(body + at, client_token, tlen);
	at += tlen;
	memcpy(body + at, "\"}", 3);
	ddb_body_free(head);
	*len = n;
	return body;
}

/* ---- cancellations ---- */

enum reason_kind { R_NONE, R_FAILED, R_CONFLICT, R_THROTTLED };

static enum reason_kind reason_kind(const cJSON *r)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "Code");
	const char *c = cJSON_IsString(code) ? code->valuestring : "";
	if (c[0] == '\0' || strcmp(c, "None") == 0)
		return R_NONE;
	if (strcmp(c, "TransactionConflict") == 0)
		return R_CONFLICT;
	if (strcmp(c, "ProvisionedThroughputExceeded") == 0 || strcmp(c, "ThrottlingError") == 0)
		return R_THROTTLED;
	return R_FAILED; /* a condition, a validation error, a size limit... */
}

static cJSON *reasons_of(const char *body, size_t len, cJSON **root)
{
	*root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	cJSON *r = cJSON_GetObjectItemCaseSensitive(*root, "CancellationReasons");
	return cJSON_IsArray(r) && cJSON_GetArraySize(r) > 0 ? r : NULL;
}

struct ddb_verdict ddb_tx_classify(const char *body, size_t len, struct ddb_verdict v)
{
	cJSON *root;
	const cJSON *list = reasons_of(body, len, &root), *r;
	bool conflict = false, throttled = false, failed = false;
	cJSON_ArrayForEach(r, list)
	{
		enum reason_kind k = reason_kind(r);
		failed |= k == R_FAILED;
		conflict |= k == R_CONFLICT;
		throttled |= k == R_THROTTLED;
	}
	cJSON_Delete(root);
	if (failed)
		return (struct ddb_verdict){DDB_C_REFUSED, "TransactionCanceled", false};
	if (throttled)
		return (struct ddb_verdict){DDB_C_THROTTLED, "ThrottlingError", false};
	if (conflict)
		return (struct ddb_verdict){DDB_C_TRANSIENT, "TransactionConflict", false};
	return v;
}

/* The first item of list that failed for good, its index in *at; NULL
 * when none did. */
static const cJSON *first_failed(const cJSON *list, unsigned *at)
{
	const cJSON *r;
	unsigned i = 0;
	cJSON_ArrayForEach(r, list)
	{
		if (reason_kind(r) == R_FAILED) {
			*at = i;
			return r;
		}
		i++;
	}
	return NULL;
}

/* A lock check's failure r (check k of them) into tr: its item, or an
 * error when it failed otherwise than on its condition. */
static bool check_failed(const cJSON *r, unsigned k, const char *ttl_attr,
			 struct store_tx_result *tr, char *err)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "Code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(r, "Message");
	if (!cJSON_IsString(code) || strcmp(code->valuestring, "ConditionalCheckFailed")) {
		ddb_errf(err, "the lock check failed: %.64s: %.128s",
			 cJSON_IsString(code) ? code->valuestring : "?",
			 cJSON_IsString(msg) ? msg->valuestring : "");
		return false;
	}
	tr->check = k;
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(r, "Item");
	return it == NULL || ddb_parse_item(it, ttl_attr, &tr->item, err);
}

bool ddb_tx_parse_cancel(const char *body, size_t len, const char *ttl_attr, unsigned nchecks,
			 struct store_tx_result *tr, char **reasons, char *err)
{
	cJSON *root;
	cJSON *list = reasons_of(body, len, &root);
	bool ok = false;
	memset(&tr->item, 0, sizeof(tr->item));
	*reasons = NULL;
	tr->index = tr->check = 0;
	unsigned i = 0;
	const cJSON *first = list != NULL ? first_failed(list, &i) : NULL;
	if (list == NULL)
		ddb_errf(err, "a cancelled transaction without CancellationReasons");
	else if (first == NULL)
		ddb_errf(err, "a cancelled transaction without a failed item");
	if (first == NULL || (i < nchecks && !check_failed(first, i, ttl_attr, tr, err)))
		goto out;
	tr->index = i < nchecks ? 0 : i - nchecks + 1;
	for (unsigned k = 0; k < nchecks; k++) /* the checks': the client's remain */
		cJSON_DeleteItemFromArray(list, 0);
	*reasons = cJSON_PrintUnformatted(list);
	if (*reasons == NULL) {
		ddb_errf(err, "out of memory reading a cancelled transaction");
		goto out;
	}
	ok = true;
out:
	cJSON_Delete(root);
	return ok;
}

/* ---- a missing table ---- */

/* Is table (a name or an ARN ending in table/<name>) the lock table? */
static bool is_lock_table(const char *table, const char *lock)
{
	size_t n = strlen(table), m = strlen(lock);
	return strcmp(table, lock) == 0 ||
	       (strncmp(table, "arn:", 4) == 0 && n > m + 6 && strcmp(table + n - m, lock) == 0 &&
		strncmp(table + n - m - 6, "table/", 6) == 0);
}

/* Adds 'table' to the quoted list of tr unless there already. */
static void add_table(struct store_tx_result *tr, const char *table)
{
	char q[DDB_TABLE_NAME_MAX + 8];
	snprintf(q, sizeof(q), "'%.*s'", DDB_TABLE_NAME_MAX, table);
	for (const char *p = tr->tables; (p = strstr(p, q)) != NULL; p++)
		if ((p == tr->tables || p[-1] == ' ') && (p[strlen(q)] == ',' || !p[strlen(q)]))
			return;
	size_t n = strlen(tr->tables), m = strlen(q);
	if (n + m + 2 < sizeof(tr->tables)) { /* copied, not printed: gcc -O1 saw a cut */
		if (n > 0) {
			memcpy(tr->tables + n, ", ", 2);
			n += 2;
		}
		memcpy(tr->tables + n, q, m + 1);
	}
	tr->ntables++;
}

/* A TransactWriteItems answered ResourceNotFoundException, which names no
 * table: the tables of body's items after the lock's check, but the lock
 * table, into tr; DynamoDB's words without the "on table <lock table>"
 * of the store's message. */
static void missing_table(const struct ddb_store *ds, const char *body, size_t len,
			  struct store_tx_result *tr)
{
	char prefix[DDB_TABLE_NAME_MAX + 64];
	snprintf(prefix, sizeof(prefix), "DynamoDB TransactWriteItems on table %s: ", ds->table);
	size_t pn = strlen(prefix);
	if (strncmp(tr->message, prefix, pn) == 0)
		memmove(tr->message, tr->message + pn, strlen(tr->message + pn) + 1);
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "TransactItems"), *it;
	cJSON_ArrayForEach(it, items)
	{
		const cJSON *t = it->child != NULL
					 ? cJSON_GetObjectItemCaseSensitive(it->child, "TableName")
					 : NULL;
		if (it != items->child && cJSON_IsString(t) &&
		    !is_lock_table(t->valuestring, ds->table))
			add_table(tr, t->valuestring);
	}
	cJSON_Delete(root);
}

/* ---- the store operation ---- */

static void tx_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	struct store_tx_result tr = {.status = res->status, .error_type = res->error_type};
	char *reasons = NULL, err[DDB_ERR_MAX];
	snprintf(tr.message, sizeof(tr.message), "%s", res->message);
	ds->base.in_flight--;
	if (tr.status == STORE_NO_TABLE) /* the lock table's, or the client's */
		missing_table(ds, c->body, c->body_len, &tr);
	if (tr.status == STORE_REFUSED) {
		if (ddb_tx_parse_cancel(body, len, ds->keys.ttl_attr, c->tx_checks, &tr, &reasons,
					err)) {
			tr.reasons = reasons;
		} else {
			tr.status = STORE_FATAL;
			tr.error_type = "BadResponse";
			snprintf(tr.message, sizeof(tr.message),
				 "DynamoDB TransactWriteItems on table %.64s: %.150s", ds->table,
				 err);
		}
	}
	if (tr.status == STORE_OK)
		tr.message[0] = '\0';
	c->tx_cb(c->arg, &tr);
	free(reasons);
}

struct store_call *ddbs_transact(struct store *s, const struct store_tx_req *req, store_tx_cb cb,
				 void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct store_call *c =
		ddbs_new_call(ds, DDB_TRANSACT_WRITE_ITEMS, tx_done, ds->cfg.op_timeout_ms);
	if (c == NULL)
		return NULL;
	c->tx_cb = cb;
	c->tx_checks = req->shared ? 2 : 1;
	c->arg = arg;
	c->op = STORE_TRANSACT;
	s->requests[STORE_TRANSACT]++;
	s->in_flight++;
	char token[STORE_TX_TOKEN_MAX + 1], err[DDB_ERR_MAX];
	if (req->client_token != NULL)
		snprintf(token, sizeof(token), "%s", req->client_token);
	else
		store_new_id(token);
	if (ds->open != OPEN_DONE) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "NotOpen";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB store of table %.64s is not open", ds->table);
	} else if ((c->body = ddb_build_transact(&ds->keys, req, token, &c->body_len, err)) ==
		   NULL) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "InvalidRequest";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB TransactWriteItems on table %.64s: %.150s", ds->table, err);
	} else {
		ddbs_send(c);
		return c;
	}
	ddbs_defer(c);
	return c;
}
