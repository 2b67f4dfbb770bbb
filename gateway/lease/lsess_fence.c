/*
 * lsess_fence: fenced writes of a session — ls_transact (a client's
 * DynamoDB items committed only while a lease holds its lock), ls_check,
 * the tables they may write and the checks of the items. See lsess.h.
 *
 * The items are checked here, once, for every front-end: what reaches the
 * store is an array of well-formed write items on allowed tables, none on
 * a lock's key; DynamoDB checks the rest (expressions, types) and says so.
 */
#include "gateway/lease/lsess_int.h"

#include "core/store/store_tx.h"

#include <ctype.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_MAX 1024 /* a table name or ARN in --fenced-tables, bytes */

/* --- configuration --- */

void ls_fence_free(struct lsvc *svc)
{
	for (unsigned i = 0; i < svc->nfenced; i++)
		free(svc->fenced[i]);
	free(svc->fenced);
	free(svc->lock_table);
	free(svc->lock_pk);
	svc->fenced = NULL;
	svc->nfenced = 0;
	svc->lock_table = svc->lock_pk = NULL;
}

static bool add_table(struct lsvc *svc, const char *p, size_t n, char *msg, size_t msglen)
{
	if (n == 0)
		return true; /* "a,,b" or a trailing comma */
	if (n > TABLE_MAX) {
		snprintf(msg, msglen, "--fenced-tables: a table name is 1 to %d bytes", TABLE_MAX);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f) {
			snprintf(msg, msglen, "--fenced-tables: '%.*s' is not a table name",
				 (int)(n < 64 ? n : 64), p);
			return false;
		}
	char **v = realloc(svc->fenced, (svc->nfenced + 1) * sizeof(*v));
	if (v == NULL || (v[svc->nfenced] = strndup(p, n)) == NULL) {
		if (v != NULL)
			svc->fenced = v;
		snprintf(msg, msglen, "out of memory");
		return false;
	}
	svc->fenced = v;
	svc->nfenced++;
	return true;
}

bool lsvc_set_fenced(struct lsvc *svc, const char *tables, const char *lock_table,
		     const char *lock_pk, char *msg, size_t msglen)
{
	ls_fence_free(svc);
	for (const char *p = tables; p != NULL && *p != '\0';) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, ",");
		size_t t = n;
		while (t > 0 && (p[t - 1] == ' ' || p[t - 1] == '\t'))
			t--;
		if (!add_table(svc, p, t, msg, msglen)) {
			ls_fence_free(svc);
			return false;
		}
		p += n + (p[n] == ',');
	}
	if ((lock_table != NULL && (svc->lock_table = strdup(lock_table)) == NULL) ||
	    (lock_pk != NULL && (svc->lock_pk = strdup(lock_pk)) == NULL)) {
		ls_fence_free(svc);
		snprintf(msg, msglen, "out of memory");
		return false;
	}
	return true;
}

/* --- the items --- */

static bool fenced(const struct lsvc *svc, const char *table)
{
	for (unsigned i = 0; i < svc->nfenced; i++)
		if (strcmp(svc->fenced[i], table) == 0)
			return true;
	return false;
}

/* The lock table, by its name or an ARN ending in table/<name>. */
static bool is_lock_table(const struct lsvc *svc, const char *table)
{
	if (svc->lock_table == NULL)
		return false;
	size_t n = strlen(table), m = strlen(svc->lock_table);
	return strcmp(table, svc->lock_table) == 0 ||
	       (strncmp(table, "arn:", 4) == 0 && n > m + 6 &&
		strcmp(table + n - m, svc->lock_table) == 0 &&
		strncmp(table + n - m - 6, "table/", 6) == 0);
}

/* The members an item of each kind may have (the TransactWriteItem shapes
 * of DynamoDB's service model). */
static const char *const members[] = {
	"TableName",
	"Key",
	"Item",
	"ConditionExpression",
	"UpdateExpression",
	"ExpressionAttributeNames",
	"ExpressionAttributeValues",
	"ReturnValuesOnConditionCheckFailure",
};
#define NMEMBERS (sizeof(members) / sizeof(members[0]))

static const char *const kinds[] = {"Put", "Update", "Delete", "ConditionCheck"};

static bool bad(struct ls_result *r, unsigned i, const char *what)
{
	ls_res_msg(r, LS_INVALID, "fenced write: item %u: %s", i, what);
	return false;
}

/* Does any value of the attribute pk in map (Key or Item) name a lock?
 * Every member is looked at: a name given twice must not hide one. */
static bool names_lock(const cJSON *map, const char *pk)
{
	const cJSON *a, *v;
	cJSON_ArrayForEach(a, map)
	{
		if (a->string == NULL || strcmp(a->string, pk) != 0)
			continue;
		cJSON_ArrayForEach(v, a)
		{
			if (cJSON_IsString(v) && strncmp(v->valuestring, "LOCK#", 5) == 0)
				return true;
		}
	}
	return false;
}

static bool item_ok(const struct lsvc *svc, const cJSON *it, unsigned i, struct ls_result *r)
{
	const cJSON *op = cJSON_IsObject(it) ? it->child : NULL;
	if (op == NULL || op->next != NULL || op->string == NULL)
		return bad(r, i,
			   "must be an object with exactly one of Put, Update, Delete, "
			   "ConditionCheck");
	size_t k = 0;
	while (k < 4 && strcmp(op->string, kinds[k]) != 0)
		k++;
	if (k == 4 || !cJSON_IsObject(op))
		return bad(r, i,
			   "must be an object with exactly one of Put, Update, Delete, "
			   "ConditionCheck");
	bool seen[NMEMBERS] = {false};
	const cJSON *m, *table = NULL, *key = NULL;
	cJSON_ArrayForEach(m, op)
	{
		size_t j = 0;
		while (j < NMEMBERS && strcmp(m->string, members[j]) != 0)
			j++;
		if (j == NMEMBERS || seen[j]) {
			ls_res_msg(r, LS_INVALID, "fenced write: item %u: %s: %s '%.64s'", i,
				   kinds[k], j == NMEMBERS ? "unknown member" : "repeated member",
				   m->string);
			return false;
		}
		seen[j] = true;
		if (j == 0)
			table = m;
		else if (j == 1 || j == 2)
			key = m;
	}
	bool put = k == 0;
	if (!cJSON_IsString(table) || table->valuestring[0] == '\0')
		return bad(r, i, "has no TableName");
	if (key == NULL || !cJSON_IsObject(key) || strcmp(key->string, put ? "Item" : "Key") != 0)
		return bad(r, i,
			   put ? "a Put needs an Item (and no Key)" : "needs a Key (and no Item)");
	if (!fenced(svc, table->valuestring)) {
		ls_res_msg(r, LS_INVALID,
			   "fenced write: item %u: table '%.128s' is not in --fenced-tables", i,
			   table->valuestring);
		return false;
	}
	if (is_lock_table(svc, table->valuestring) &&
	    (svc->lock_pk == NULL || names_lock(key, svc->lock_pk))) {
		ls_res_msg(r, LS_INVALID,
			   "fenced write: item %u: the key of a lock item (LOCK#...) belongs to "
			   "the lock",
			   i);
		return false;
	}
	return true;
}

/* Whether the n bytes at p are JSON whitespace. The items are a counted
 * view (a PostgreSQL parameter is not NUL-terminated: the bytes after it
 * are whatever the portal's buffer held before), so never strspn. */
static bool only_space(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return false;
	return true;
}

/* The number of the client's items when they are fine (ls_tx_items_ok),
 * else 0 with r set. */
static int items_checked(const struct lsvc *svc, const char *items, size_t len, struct ls_result *r)
{
	if (svc->nfenced == 0) {
		ls_res_msg(r, LS_INVALID,
			   "fenced writes are off: start leasegate with "
			   "--fenced-tables");
		return 0;
	}
	if (len == 0 || len > LS_TX_MAX_BYTES || memchr(items, '\0', len) != NULL) {
		ls_res_msg(r, LS_INVALID, "fenced write: the items are 1 to %d bytes of JSON",
			   LS_TX_MAX_BYTES);
		return 0;
	}
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(items, len, &end, false);
	if (root == NULL || end == NULL || !only_space(end, (size_t)(items + len - end))) {
		cJSON_Delete(root);
		ls_res_msg(r, LS_INVALID, "fenced write: the items are not valid JSON");
		return 0;
	}
	int n = cJSON_IsArray(root) ? cJSON_GetArraySize(root) : 0;
	bool ok = n >= 1 && n <= LS_TX_MAX_ITEMS;
	if (!ok)
		ls_res_msg(r, LS_INVALID,
			   "fenced write: the items must be an array of 1 to %d items (the lock "
			   "check makes %d)",
			   LS_TX_MAX_ITEMS, LS_TX_MAX_ITEMS + 1);
	unsigned i = 1;
	for (const cJSON *it = ok ? root->child : NULL; it != NULL; it = it->next)
		if (!(ok = item_ok(svc, it, i++, r)))
			break;
	cJSON_Delete(root);
	return ok ? n : 0;
}

bool ls_tx_items_ok(const struct lsvc *svc, const char *items, size_t len, struct ls_result *r)
{
	return items_checked(svc, items, len, r) > 0;
}

/* --- transact --- */

/* The hold (name, token) a fenced write is under: s's shared hold (a
 * reader's group token may be another session's too: only s's own is
 * addressed), else a lock of any session of the replica; NULL if none. */
static struct ls_rec *hold_of(struct lsvc *svc, const struct lsess *s, const char *name,
			      int64_t token)
{
	struct ls_rec *rec = s != NULL ? ls_rec_find(s, LS_KIND_SHARED, name, token) : NULL;
	return rec != NULL ? rec : ls_find_any(svc, name, token);
}

/* The record a transaction was about, if still there: the session's
 * shared hold, a lock of any session, or the session's term. */
static struct ls_rec *tx_rec(struct ls_op *op)
{
	struct ls_rec *rec = hold_of(op->svc, op->sess, op->name, op->token);
	if (rec == NULL && op->sess != NULL)
		rec = ls_rec_find(op->sess, LS_KIND_LEADER, op->name, op->token);
	return rec;
}

static void transacted(void *arg, const struct lt_tx_result *tr)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (op->sess == NULL) {
		ls_op_finish(op, NULL);
		return;
	}
	ls_res_init(&res, LS_OK);
	res.token = op->token;
	switch (tr->status) {
	case LT_TX_OK:
		break;
	case LT_TX_LOST: {
		struct ls_rec *rec = tx_rec(op);
		if (rec != NULL && rec->state == LS_REC_LOST) {
			ls_rec_report(rec, rec->loss, &res); /* the loss, told once */
		} else {
			res.loss = tr->loss;
			ls_res_msg(&res, LS_LOST, "%s", ls_loss_text(tr->loss));
		}
		break;
	}
	case LT_TX_CANCELLED:
		res.reasons = tr->reasons;
		ls_res_msg(&res, LS_TXCANCELLED, "item %u of the transaction failed", tr->index);
		break;
	case LT_TX_ERROR:
		ls_res_err(&res, tr->err);
		break;
	}
	ls_op_finish(op, &res);
}

/* A client's request id as a ClientRequestToken: 1..STORE_TX_TOKEN_MAX
 * bytes of A-Z a-z 0-9 -, copied into out (NUL-terminated). */
static bool request_ok(const struct ls_tx_req *req, char out[STORE_TX_TOKEN_MAX + 1],
		       struct ls_result *r)
{
	bool ok = req->request_len >= 1 && req->request_len <= STORE_TX_TOKEN_MAX;
	for (size_t i = 0; ok && i < req->request_len; i++) {
		unsigned char ch = (unsigned char)req->request[i];
		ok = isalnum(ch) || ch == '-';
	}
	if (!ok) {
		ls_res_msg(r, LS_INVALID,
			   "a request id is 1 to %d characters of A-Z a-z 0-9 - (a UUID fits)",
			   STORE_TX_TOKEN_MAX);
		return false;
	}
	memcpy(out, req->request, req->request_len);
	out[req->request_len] = '\0';
	return true;
}

enum ls_status ls_transact(struct lsess *s, const struct ls_tx_req *req, struct ls_result *now,
			   ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1], request[STORE_TX_TOKEN_MAX + 1];
	int n = 0;
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, req->name, req->name_len, name, now) ||
	    (n = items_checked(s->svc, req->items, req->items_len, now)) == 0 ||
	    (req->request != NULL && !request_ok(req, request, now)))
		return now->status;
	struct ls_rec *rec;
	if (req->leader) {
		rec = ls_rec_find(s, LS_KIND_LEADER, name, 0);
		if (rec == NULL || rec->state == LS_REC_CAMPAIGNING)
			return ls_res_msg(now, LS_INVALID, "this connection does not lead '%.256s'",
					  name);
	} else {
		if (req->token <= 0)
			return ls_res_msg(now, LS_INVALID, "token must be a positive integer");
		rec = hold_of(s->svc, s, name, req->token);
		if (rec == NULL)
			return ls_res_msg(now, LS_INVALID,
					  "no lease of '%.256s' with token %lld on this replica",
					  name, (long long)req->token);
	}
	enum lt_loss loss = ls_rec_loss(rec);
	if (loss != LT_HELD)
		return ls_rec_report(rec, loss, now);
	bool shared = rec->kind == LS_KIND_SHARED;
	if (shared && n > LS_TX_MAX_ITEMS_SHARED)
		return ls_res_msg(
			now, LS_INVALID,
			"fenced write: under a shared hold the items are an array of 1 to "
			"%d items (its two lock checks make %d)",
			LS_TX_MAX_ITEMS_SHARED, LS_TX_MAX_ITEMS_SHARED + 2);
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, rec->name, rec->len, rec->token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	const char *id = req->request ? request : NULL;
	if ((shared ? lt_sh_transact(rec->sh, req->items, req->items_len, id, transacted, op)
		    : lt_transact(rec->lease, req->items, req->items_len, id, transacted, op)) ==
	    NULL) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return now->status = LS_PENDING;
}

/* --- check --- */

/* Does st show the lease (name, token) holding the lock now? */
static bool holds_now(struct lsvc *svc, const char *name, int64_t token, const struct lt_state *st)
{
	if (!st->held || st->token != token)
		return false;
	struct ls_rec *rec = ls_find_any(svc, name, token);
	if (rec == NULL || rec->lease == NULL) /* another replica's, or detached */
		return st->remaining_ms > 0;
	return ls_rec_loss(rec) == LT_HELD && strcmp(lease_owner(rec->lease), st->owner) == 0;
}

/* Does sh show a shared holder with token now: the session's own hold,
 * by its owner on its slot; else a reader of that token's phase (readers
 * share it), or a semaphore holder whose slot's token it is. */
static bool shared_holds_now(struct ls_op *op, const struct lt_sh_state *sh)
{
	struct ls_rec *rec =
		op->sess != NULL ? ls_shared_find(op->sess, op->name, op->token) : NULL;
	for (unsigned i = 0; i < sh->count; i++) {
		const struct lt_sh_holder *h = &sh->holders[i];
		if (h->token != op->token)
			continue;
		if (rec == NULL)
			return true;
		if (ls_rec_loss(rec) == LT_HELD && h->slot == sh_lease_slot(rec->sh) &&
		    strcmp(h->owner, sh_lease_owner(rec->sh)) == 0)
			return true;
	}
	return false;
}

static void checked_shared(void *arg, const struct lt_sh_state *sh, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (op->sess == NULL) {
		ls_op_finish(op, NULL);
		return;
	}
	ls_res_init(&res, LS_NONE);
	if (err != NULL)
		ls_res_err(&res, err);
	else if (shared_holds_now(op, sh))
		res.status = LS_OK;
	ls_op_finish(op, &res);
}

/* A name held shared: its holders read, then checked_shared answers. */
static bool check_shared(struct ls_op *op)
{
	return lt_sh_state(op->svc->lt, op->name, checked_shared, op);
}

static void checked(void *arg, const struct lt_state *st, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (op->sess == NULL) {
		ls_op_finish(op, NULL);
		return;
	}
	ls_res_init(&res, LS_NONE);
	if (err != NULL)
		ls_res_err(&res, err);
	else if (st->shared > 0 && check_shared(op))
		return; /* it answers */
	else if (holds_now(op->svc, op->name, op->token, st))
		res.status = LS_OK;
	ls_op_finish(op, &res);
}

enum ls_status ls_check(struct lsess *s, const char *name, size_t name_len, int64_t token,
			struct ls_result *now, ls_done_cb cb, void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	struct lt_state st;
	ls_res_init(now, LS_NONE);
	if (!ls_name_ok(s->svc, name, name_len, buf, now))
		return now->status;
	if (token <= 0)
		return ls_res_msg(now, LS_INVALID, "token must be a positive integer");
	bool at_once = lt_state_now(s->svc->lt, buf, &st); /* the embedded store */
	if (at_once && st.shared == 0)
		return now->status = holds_now(s->svc, buf, token, &st) ? LS_OK : LS_NONE;
	struct ls_op *op = ls_op_new(s->svc, s, cb, arg, buf, name_len, token);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	if (!(at_once ? check_shared(op) : lt_get_state(s->svc->lt, op->name, checked, op))) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return now->status = LS_PENDING;
}
