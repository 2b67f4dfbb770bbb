/*
 * ddb_slock: the takeover of a session-mode holder on DynamoDB (store.h's
 * ACQUIRE with .sess_check) — one TransactWriteItems of the lock's Update
 * and a ConditionCheck of the session's item (ddb_json.c builds it), and
 * its answer:
 *   - done: OK with the item as the write made it (a transaction answers
 *     no item);
 *   - cancelled by the lock's condition: REFUSED with the item that
 *     refused it, or OK when that item shows this very acquire (an
 *     earlier attempt applied: store_acquire_applied);
 *   - cancelled by the session's check alone: REFUSED, session_refused,
 *     with the lock item as it is, read back on the same call by a
 *     consistent GetItem (counted as a READ).
 * On the calls of store_dynamodb.c (retries, deadline, metrics).
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/store_dynamodb_int.h"

/* What the answer needs of the request. */
struct ddb_slock {
	char name[STORE_NAME_MAX + 1];
	char owner[STORE_ID_MAX + 1], rvn[STORE_ID_MAX + 1];
	char holder[STORE_HOLDER_MAX + 1];
	char secret_hash[STORE_SECRET_HASH_LEN + 1];
	char session[STORE_SESSION_KEY_MAX + 1]; /* "": written per lease */
	int64_t lease_ms, fence, ttl;		 /* fence: the one it writes */
};

static struct ddb_slock *slock_new(const struct store_req *r, const struct ddb_keys *keys)
{
	struct ddb_slock *sl = calloc(1, sizeof(*sl));
	if (sl == NULL)
		return NULL;
#define COPY(dst, src) snprintf(sl->dst, sizeof(sl->dst), "%s", (src) != NULL ? (src) : "")
	COPY(name, r->name);
	COPY(owner, r->owner);
	COPY(rvn, r->rvn);
	COPY(holder, r->holder);
	COPY(secret_hash, r->secret_hash);
	COPY(session, r->session);
#undef COPY
	sl->lease_ms = r->lease_ms;
	sl->fence = r->seen_fence + 1; /* the write is conditioned on seen_fence */
	sl->ttl = r->session == NULL && keys->ttl_attr != NULL ? r->ttl : 0;
	return sl;
}

/* The lock item as the write made it (store.h ACQUIRE); what it did not
 * write reads as absent. */
static void written(const struct ddb_slock *sl, struct lock_item *it)
{
	memset(it, 0, sizeof(*it));
	it->exists = it->has_owner = it->has_rvn = it->has_lease = it->has_fence = true;
	snprintf(it->type, sizeof(it->type), "LOCK");
	snprintf(it->owner, sizeof(it->owner), "%s", sl->owner);
	snprintf(it->rvn, sizeof(it->rvn), "%s", sl->rvn);
	snprintf(it->holder, sizeof(it->holder), "%s", sl->holder);
	snprintf(it->secret_hash, sizeof(it->secret_hash), "%s", sl->secret_hash);
	snprintf(it->session, sizeof(it->session), "%s", sl->session);
	bool sess = sl->session[0] != '\0';
	it->lease_ms = sess ? STORE_SESSION_LOCK_LEASE_MS : sl->lease_ms;
	it->slease_ms = sess ? sl->lease_ms : 0;
	it->fence = sl->fence;
	it->ttl = sl->ttl;
}

/* Which part of the transaction failed its condition. */
enum cancel_part { PART_LOCK, PART_SESSION, PART_OTHER };

/* The CancellationReasons of body: which part failed (the lock's Update
 * first: its refusal decides) and, the lock's, the item it returned into
 * *item; PART_OTHER with err when neither failed on a condition or the
 * item is malformed. */
static enum cancel_part cancelled(const char *body, size_t len, const char *ttl_attr,
				  struct lock_item *item, char *err)
{
	cJSON *root = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "CancellationReasons");
	const char *code[2] = {"", ""};
	for (int i = 0; i < 2; i++) {
		const char *c = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, i), "Code"));
		code[i] = c != NULL ? c : "";
	}
	enum cancel_part part = PART_OTHER;
	memset(item, 0, sizeof(*item));
	if (strcmp(code[0], "ConditionalCheckFailed") == 0) {
		const cJSON *it =
			cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, 0), "Item");
		part = it == NULL || ddb_parse_item(it, ttl_attr, item, err) ? PART_LOCK
									     : PART_OTHER;
	} else if (strcmp(code[1], "ConditionalCheckFailed") == 0) {
		part = PART_SESSION;
	} else {
		snprintf(err, DDB_ERR_MAX,
			 "a cancelled takeover without a failed condition: %.40s, "
			 "%.40s",
			 code[0], code[1]);
	}
	cJSON_Delete(root);
	return part;
}

static void deliver(struct store_call *c, struct store_result *res)
{
	c->ds->base.in_flight--;
	c->cb(c->arg, res);
}

/* The read back of the lock after its session's check failed. */
static void read_back_done(struct store_call *c, struct store_result *res, const char *body,
			   size_t len)
{
	if (res->status == STORE_OK) {
		res->status = STORE_REFUSED;
		res->session_refused = true;
		snprintf(res->message, sizeof(res->message),
			 "the session of lock '%.64s' is not as seen: takeover refused",
			 c->slock->name);
	} else if (res->status == STORE_REFUSED) { /* a GetItem has no condition */
		res->status = STORE_FATAL;
	}
	deliver(c, res);
}

static void takeover_done(struct store_call *c, struct store_result *res, const char *body,
			  size_t len)
{
	struct ddb_store *ds = c->ds;
	struct ddb_slock *sl = c->slock;
	char err[DDB_ERR_MAX] = "";
	if (res->status == STORE_OK) {
		written(sl, &res->item);
		res->message[0] = '\0';
	} else if (res->status == STORE_REFUSED) {
		enum cancel_part part = cancelled(body, len, ds->keys.ttl_attr, &res->item, err);
		if (part == PART_LOCK && store_acquire_applied(sl->owner, sl->rvn, &res->item)) {
			res->status = STORE_OK; /* an earlier attempt applied (store.h) */
			res->message[0] = '\0';
		} else if (part == PART_SESSION) {
			struct store_req rd = {.op = STORE_READ, .name = sl->name};
			size_t n = 0;
			char *read = ddb_build_request(&ds->keys, &rd, &n, err);
			ds->base.in_flight--;
			ds->base.requests[STORE_READ]++;
			c->op = STORE_READ; /* its answer's Item read as a lock item */
			ddbs_continue(c, DDB_GET_ITEM, read_back_done, read, n);
			return;
		} else if (part == PART_OTHER) {
			res->status = STORE_FATAL;
			res->error_type = "BadResponse";
			snprintf(res->message, sizeof(res->message),
				 "DynamoDB TransactWriteItems on table %.64s: %.150s", ds->table,
				 err);
		}
	}
	deliver(c, res);
}

struct store_call *ddbs_slock_takeover(struct store *s, const struct store_req *req, store_cb cb,
				       void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	struct ddb_slock *sl = slock_new(req, &ds->keys);
	if (sl == NULL)
		return NULL;
	/* an acquire's whole lease is its budget, as ddb_submit's */
	int64_t budget = req->lease_ms > 0 ? req->lease_ms : ds->cfg.op_timeout_ms;
	struct store_call *c = ddbs_new_call(ds, DDB_TRANSACT_WRITE_ITEMS, takeover_done, budget);
	if (c == NULL) {
		free(sl);
		return NULL;
	}
	c->slock = sl;
	c->cb = cb;
	c->arg = arg;
	/* every reason of a cancellation read (ddb_tx_classify), and the
	 * body of a refusal handed to takeover_done */
	c->op = STORE_TRANSACT;
	c->acq_owner[0] = c->acq_rvn[0] = '\0';
	c->span = trace_child(req->span, "TransactWriteItems", TRACE_CLIENT);
	trace_str(c->span, "db.system", "dynamodb");
	trace_str(c->span, "db.operation.name", "TransactWriteItems");
	trace_str(c->span, "db.collection.name", ds->table);
	if (req->lease_ms / 3 > 0 && req->lease_ms / 3 < c->attempt_ms)
		c->attempt_ms = req->lease_ms / 3;
	s->requests[STORE_ACQUIRE]++;
	char err[DDB_ERR_MAX];
	size_t len = 0;
	char *body = ddb_build_request(&ds->keys, req, &len, err);
	if (body == NULL) {
		s->in_flight++;
		c->res.status = STORE_FATAL;
		c->res.error_type = "InvalidRequest";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB TransactWriteItems on table %.64s: %.150s", ds->table, err);
		ddbs_defer(c);
		return c;
	}
	ddbs_go(c, body, len);
	return c;
}
