/*
 * pg_exec: one recognised statement run — as an operation of the
 * lease-session layer (advisory locks, leasegate's functions), or on the
 * session (transaction blocks I/T/E, settings) — and its result rendered
 * as PostgreSQL would: row descriptions with real type OIDs, values in
 * the format asked, SQLSTATEs. The flows that call it are pg_query.c.
 *
 * SQLSTATEs of leasegate's own: a lease lost before it was released is
 * 55000 (object_not_in_prerequisite_state) at its next use; a store error
 * is 58000 (system_error), an answer retrying may change, or XX000.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/pg/pg_int.h"

/* --- errors --- */

char pgq_status(const struct pgs *s)
{
	return !s->in_block ? 'I' : s->failed ? 'E' : 'T';
}

/* An error of the statement running: written; the rest of a simple query
 * is skipped, an extended one skips to Sync; an open transaction fails. */
void pgx_failed(struct pgs *s)
{
	if (s->in_block)
		s->failed = true;
	if (s->in_query)
		s->qpos = s->qlen;
	else
		s->skip_sync = true;
}

void pgx_error(struct pgs *s, const char *sqlstate, const char *msg, const char *hint)
{
	pgs_error(s, sqlstate, msg, hint);
	pgx_failed(s);
}

static void unsupported(struct pgs *s, const struct sql_stmt *st)
{
	char msg[300];
	int n = st->text_len > 200 ? 200 : (int)st->text_len;
	snprintf(msg, sizeof(msg), "leasegate serves locks only%s: %.*s%s",
		 st->several ? ", one function call per SELECT" : "", n, st->text,
		 st->text_len > 200 ? "..." : "");
	pgx_error(s, "0A000", msg,
		  st->several ? "Send one SELECT per call: SELECT f(...); SELECT g(...) (one query "
				"string may hold several)."
			      : "leasegate answers the advisory lock functions, "
				"leasegate.acquire/release/state/token/transact/check, transaction "
				"control and "
				"SET/SHOW; see its README.");
}

/* --- answers that wait for releases --- */

/* A release that was not written is told, as a WARNING: the statement
 * itself did its part (the session holds the lock no more). */
static void tell_unwritten(struct pgs *s, const struct ls_result *res)
{
	if (res->status == LS_OK && res->unwritten)
		pgs_notice(s, "WARNING", "58000", res->message,
			   "Another session can take the lock once its lease runs out.");
}

/* What follows the releases: the command tag, or ReadyForQuery. */
static void after_releases(struct pgs *s, const char *tag)
{
	if (tag != NULL)
		pg_command_complete(&s->c.out, tag);
	else
		pg_ready(&s->c.out, pgq_status(s));
}

static void releases_done(void *arg, const struct ls_result *res)
{
	struct pgs *s = arg;
	if (!conn_closed(&s->c)) {
		tell_unwritten(s, res);
		after_releases(s, s->pend_tag);
	}
	conn_resume(&s->c);
}

/* Writes tag (NULL: ReadyForQuery) once the releases rc started are
 * written: at once, or later, the session waiting meanwhile. Acknowledged
 * means done: on PostgreSQL a lock released by COMMIT is free for every
 * session when COMMIT returns, and programs coordinate on that. */
static void answer_released(struct pgs *s, enum ls_status rc, const struct ls_result *now,
			    const char *tag)
{
	if (rc == LS_PENDING) {
		s->pend_tag = tag;
		conn_suspend(&s->c);
		return;
	}
	if (now->status == LS_FAILED) /* out of memory: sent, not waited for */
		pgs_notice(s, "WARNING", "53200", now->message, NULL);
	tell_unwritten(s, now);
	after_releases(s, tag);
}

/* The transaction ends: xact locks go (tag is written once they are), SET
 * LOCAL values end. */
static void xact_end(struct pgs *s, const char *tag)
{
	struct ls_result now = {.status = LS_OK};
	enum ls_status rc = LS_OK;
	pgs_guc_xact_end(s);
	s->in_block = false;
	s->failed = false;
	if (s->ls != NULL)
		rc = ls_release_scope(s->ls, LS_SCOPE_XACT, &now, releases_done, s);
	answer_released(s, rc, &now, tag);
}

void pgx_ready(struct pgs *s)
{
	if (s->in_block) {
		pg_ready(&s->c.out, pgq_status(s));
		return;
	}
	xact_end(s, NULL);
}

/* --- lock names --- */

static char *put_int(char *p, int64_t v)
{
	char tmp[24];
	char *e = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		*--e = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--e = '-';
	size_t n = (size_t)(tmp + sizeof(tmp) - e);
	memcpy(p, e, n);
	return p + n;
}

/* pg:<database>:<key> or pg:<database>:<k1>:<k2>: the two key spaces
 * differ in their number of colons, so they never collide. */
static size_t advisory_name(const struct pgs *s, const struct val *k, unsigned nk, char *out)
{
	char *p = out;
	size_t dl = strlen(s->database);
	memcpy(p, "pg:", 3);
	p += 3;
	memcpy(p, s->database, dl);
	p += dl;
	for (unsigned i = 0; i < nk; i++) {
		*p++ = ':';
		p = put_int(p, k[i].i);
	}
	*p = '\0';
	return (size_t)(p - out);
}

/* --- the ACL --- */

/* Each function's ACL categories (0: not checked: constants, settings). */
static const uint32_t fn_cats[FN_COUNT] = {
	[FN_LOCK] = ACL_WRITE | ACL_LOCK | ACL_SLOW | ACL_BLOCKING,
	[FN_XACT_LOCK] = ACL_WRITE | ACL_LOCK | ACL_SLOW | ACL_BLOCKING,
	[FN_TRY_LOCK] = ACL_WRITE | ACL_LOCK | ACL_FAST,
	[FN_TRY_XACT_LOCK] = ACL_WRITE | ACL_LOCK | ACL_FAST,
	[FN_UNLOCK] = ACL_WRITE | ACL_LOCK | ACL_FAST,
	[FN_UNLOCK_ALL] = ACL_WRITE | ACL_LOCK | ACL_FAST,
	[FN_SHARED] = ACL_WRITE | ACL_LOCK | ACL_FAST,
	[FN_LG_ACQUIRE] = ACL_WRITE | ACL_LOCK | ACL_SLOW | ACL_BLOCKING,
	[FN_LG_RELEASE] = ACL_WRITE | ACL_LOCK | ACL_FAST,
	[FN_LG_STATE] = ACL_READ | ACL_LOCK | ACL_FAST,
	[FN_LG_TOKEN] = ACL_READ | ACL_LOCK | ACL_FAST,
	[FN_LG_TRANSACT] = ACL_WRITE | ACL_LOCK | ACL_SLOW,
	[FN_LG_CHECK] = ACL_READ | ACL_LOCK | ACL_FAST,
};

static size_t advisory_name(const struct pgs *s, const struct val *k, unsigned nk, char *out);

/* st's function name in lower case, as the ACL rules name it. */
static void lower_fname(const struct sql_stmt *st, char *out, size_t len)
{
	size_t i;
	for (i = 0; st->fname[i] && i < len - 1; i++)
		out[i] = (char)tolower((unsigned char)st->fname[i]);
	out[i] = '\0';
}

bool pgx_may_wait(const struct pgs *s, const char *name)
{
	if (conn_closed(&s->c) || s->c.acl == NULL)
		return false;
	size_t len = strlen(name);
	struct acl_req r = {.cmd = s->pend_fname,
			    .cats = fn_cats[s->pend_fn],
			    .nkeys = 1,
			    .keys = &name,
			    .key_lens = &len};
	return fn_cats[s->pend_fn] == 0 || acl_check(s->c.acl, &r, NULL) == ACL_OK;
}

/* The ACL check point (acl_check, the one the Redis front-end calls) for
 * st with arguments a: its categories and the lock it names (an advisory
 * lock's pg:<database>:..., a leasegate.* call's text). false: 42501
 * written. */
static bool acl_allows(struct pgs *s, const struct sql_stmt *st, const struct val *a)
{
	char fname[64], name[STORE_NAME_MAX + 64], msg[STORE_NAME_MAX + 200];
	const char *key = name;
	size_t klen = 0;
	if (fn_cats[st->fn] == 0)
		return true;
	lower_fname(st, fname, sizeof(fname));
	struct acl_req r = {.cmd = fname, .cats = fn_cats[st->fn], .keys = &key, .key_lens = &klen};
	bool by_name = st->fn == FN_LG_ACQUIRE || st->fn == FN_LG_RELEASE ||
		       st->fn == FN_LG_STATE || st->fn == FN_LG_TRANSACT || st->fn == FN_LG_CHECK;
	if (by_name) { /* leasegate.*(name, ...) */
		r.nkeys = !a[0].null;
		key = a[0].s;
		klen = a[0].len;
	} else if (st->fn != FN_UNLOCK_ALL && st->fn != FN_SHARED) {
		r.nkeys = 1;
		klen = advisory_name(s, a, st->nargs, name);
	}
	switch (acl_check(s->c.acl, &r, NULL)) {
	case ACL_OK:
		return true;
	case ACL_DENIED_CMD:
		snprintf(msg, sizeof(msg), "permission denied for function %s", fname);
		pgx_error(s, "42501", msg, "The ACL file's rules for this user do not allow it.");
		return false;
	default:
		snprintf(msg, sizeof(msg), "permission denied for lock \"%.*s\"",
			 (int)(klen > STORE_NAME_MAX ? STORE_NAME_MAX : klen), key);
		pgx_error(s, "42501", msg,
			  "None of this user's lock name patterns (~...) in the ACL file matches.");
		return false;
	}
}

/* --- results of lease operations --- */

static void complete_select(struct pgs *s)
{
	pg_command_complete(&s->c.out, "SELECT 1");
}

/* leasegate.transact's own SQLSTATEs (README "Fenced writes"): the
 * client's items cancelled 23000 with the reasons, a conflict or
 * throttling past the retries 40001 (retry), fenced writes unavailable
 * here 0A000; the rest as every lease function. True when written. */
static bool fenced_error(struct pgs *s, const struct ls_result *res)
{
	static const char cancelled[] = "leasegate.transact: the transaction was cancelled: ";
	switch (res->status) {
	case LS_TXCANCELLED: {
		const char *r = res->reasons != NULL ? res->reasons : "[]";
		size_t n = strlen(r);
		char *msg = malloc(sizeof(cancelled) + n);
		if (msg == NULL) {
			pgx_error(s, "23000", "leasegate.transact: the transaction was cancelled",
				  NULL);
			return true;
		}
		memcpy(msg, cancelled, sizeof(cancelled) - 1);
		memcpy(msg + sizeof(cancelled) - 1, r, n + 1);
		pgx_error(s, "23000", msg,
			  "The reasons are DynamoDB's CancellationReasons of your items, in "
			  "order.");
		free(msg);
		return true;
	}
	case LS_TRANSIENT:
		pgx_error(s, "40001", res->message, "Retry the transaction.");
		return true;
	case LS_FAILED:
		if (strstr(res->message, "fenced writes need DynamoDB") == NULL)
			return false;
		pgx_error(s, "0A000", res->message, NULL);
		return true;
	default:
		return false;
	}
}

/* Renders res of the statement (fn) that waited or ran. */
static void render(struct pgs *s, enum sql_fn fn, int timeout, const struct pg_portal *po,
		   const char *alias, const struct ls_result *res)
{
	struct pg_col cols[5];
	struct val v[5];
	char msg[LS_MSG_MAX + 64];
	memset(v, 0, sizeof(v));
	if (fn == FN_LG_TRANSACT && fenced_error(s, res))
		return;
	tell_unwritten(s, res);
	switch (res->status) {
	case LS_OK:
	case LS_NONE:
		break;
	case LS_LOST:
		snprintf(msg, sizeof(msg), "%s (fencing token %lld), before it was released",
			 res->message[0] ? res->message : lt_loss_name(res->loss),
			 (long long)res->token);
		pgx_error(s, "55000", msg, "Take the lock again: another holder may have it.");
		return;
	case LS_CANCELLED:
		if (strstr(res->message, "shutting down") != NULL) /* admin_shutdown */
			pgx_error(s, "57P01", "terminating statement: leasegate is shutting down",
				  NULL);
		else
			pgx_error(s, "57014", "canceling statement due to user request", NULL);
		return;
	case LS_INVALID:
	case LS_CONFLICT:
		pgx_error(s, "22023", res->message, NULL);
		return;
	case LS_DENIED: /* the ACL rules changed while it waited */
		pgx_error(s, "42501", res->message, NULL);
		return;
	case LS_TRANSIENT:
		pgx_error(s, "58000", res->message, "The lock store failed; retrying may work.");
		return;
	default:
		pgx_error(s, "XX000", res->message, NULL);
		return;
	}
	bool ok = res->status == LS_OK;
	switch (fn) {
	case FN_LOCK:
	case FN_XACT_LOCK:
		if (!ok) {
			if (timeout == 1)
				pgx_error(s, "55P03", "canceling statement due to lock timeout",
					  NULL);
			else
				pgx_error(s, "57014",
					  "canceling statement due to statement timeout", NULL);
			return;
		}
		break;
	case FN_TRY_LOCK:
	case FN_TRY_XACT_LOCK:
	case FN_LG_RELEASE:
	case FN_LG_TRANSACT:
	case FN_LG_CHECK:
		v[0].i = ok;
		break;
	case FN_UNLOCK:
		v[0].i = ok;
		if (!ok)
			pgs_notice(s, "WARNING", "01000",
				   "you don't own a lock of type ExclusiveLock", NULL);
		break;
	case FN_LG_ACQUIRE:
		if (!ok && timeout != 0) {
			if (timeout == 1)
				pgx_error(s, "55P03", "canceling statement due to lock timeout",
					  NULL);
			else
				pgx_error(s, "57014",
					  "canceling statement due to statement timeout", NULL);
			return;
		}
		v[0].null = !ok;
		v[0].i = res->token;
		break;
	case FN_LG_TOKEN:
		v[0].null = !ok;
		v[0].i = res->token;
		break;
	case FN_LG_STATE: {
		const struct lt_state *ls = &res->st;
		if (!ok || !ls->exists) {
			v[0].i = 0;
			v[1].null = true;
			v[2].null = v[3].null = true;
			v[4].i = 0;
		} else {
			v[0].i = ls->held;
			v[1].null = !(ls->held && ls->holder[0]);
			v[1].s = ls->holder;
			v[1].len = strlen(ls->holder);
			v[2].i = ls->lease_ms;
			v[3].i = ls->token;
			v[4].i = res->mine;
		}
		break;
	}
	default:
		break;
	}
	unsigned n = pgv_fn_columns(fn, alias, po, cols);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	pgv_put_row(&s->c.out, n, cols, v);
	complete_select(s);
}

static void lease_done(void *arg, const struct ls_result *res)
{
	struct pgs *s = arg;
	if (!conn_closed(&s->c))
		render(s, s->pend_fn, s->pend_timeout, s->pend_portal, s->pend_alias, res);
	conn_resume(&s->c);
}

/* Answers st's lease operation: at once, or later (the session waits). */
static void answer(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		   int timeout, enum ls_status rc, const struct ls_result *now)
{
	if (rc == LS_PENDING) {
		s->pend_fn = st->fn;
		s->pend_timeout = timeout;
		s->pend_portal = po;
		memcpy(s->pend_alias, st->alias, sizeof(s->pend_alias));
		lower_fname(st, s->pend_fname, sizeof(s->pend_fname));
		conn_suspend(&s->c);
		return;
	}
	render(s, st->fn, timeout, po, st->alias, now);
}

/* The wait of a blocking lock: lock_timeout and statement_timeout bound
 * it (0: none); *why says which did (1, 2), 0 for the call's own. */
static int64_t wait_bound(const struct pgs *s, int64_t own, int *why)
{
	int64_t w = own;
	*why = 0;
	if (s->lock_timeout_ms > 0 && (w == 0 || s->lock_timeout_ms < w)) {
		w = s->lock_timeout_ms;
		*why = 1;
	}
	if (s->statement_timeout_ms > 0 && (w == 0 || s->statement_timeout_ms < w)) {
		w = s->statement_timeout_ms;
		*why = 2;
	}
	return w;
}

static void run_select(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct val a[SQL_MAX_ARGS];
	struct ls_result now;
	struct lsess *ls;
	char name[STORE_NAME_MAX + 64];
	char msg[256];
	static const unsigned want_args[FN_COUNT][2] = {
		[FN_LOCK] = {1, 2},	   [FN_TRY_LOCK] = {1, 2},	  [FN_UNLOCK] = {1, 2},
		[FN_XACT_LOCK] = {1, 2},   [FN_TRY_XACT_LOCK] = {1, 2},	  [FN_UNLOCK_ALL] = {0, 0},
		[FN_SHARED] = {0, 9},	   [FN_LG_ACQUIRE] = {2, 3},	  [FN_LG_RELEASE] = {1, 1},
		[FN_LG_STATE] = {1, 1},	   [FN_LG_TOKEN] = {1, 2},	  [FN_CONST] = {1, 1},
		[FN_VERSION] = {0, 0},	   [FN_CURRENT_SETTING] = {1, 2}, [FN_SET_CONFIG] = {3, 3},
		[FN_LG_TRANSACT] = {3, 3}, [FN_LG_CHECK] = {2, 2},	  [FN_BACKEND_PID] = {0, 0},
	};
	if (st->nargs < want_args[st->fn][0] || st->nargs > want_args[st->fn][1]) {
		snprintf(msg, sizeof(msg), "function %s with %u arguments does not exist",
			 st->fname, st->nargs);
		pgx_error(s, "42883", msg,
			  "No function matches the given name and argument types.");
		return;
	}
	for (unsigned i = 0; i < st->nargs && st->fn != FN_CONST; i++)
		if (!pgv_arg(s, st, po, i, pgv_arg_type(st, i), &a[i]))
			return;
	bool key_fn = st->fn <= FN_TRY_XACT_LOCK || st->fn == FN_LG_TOKEN;
	if (key_fn) {
		for (unsigned i = 0; i < st->nargs; i++)
			if (a[i].null) { /* strict functions: NULL in, NULL out */
				struct pg_col cols[1];
				struct val v = {.null = true};
				unsigned n = pgx_columns(st, po, cols);
				if (po == NULL)
					pg_row_description(&s->c.out, n, cols);
				pgv_put_row(&s->c.out, n, cols, &v);
				complete_select(s);
				return;
			}
	}
	if (!acl_allows(s, st, a))
		return;
	struct ls_acquire_req req = {.reentrant = true, .wait_ms = -1};
	int why = 0;
	enum ls_status rc;
	if (st->fn <= FN_UNLOCK_ALL || (st->fn >= FN_LG_ACQUIRE && st->fn <= FN_LG_TOKEN)) {
		/* a lease lost since the last call: this call is the error */
		if (s->ls != NULL && ls_take_lost(s->ls, &now) == LS_LOST) {
			render(s, st->fn, 0, po, st->alias, &now);
			return;
		}
	}
	switch (st->fn) {
	case FN_SHARED:
		snprintf(msg, sizeof(msg),
			 "%s is not supported: leasegate has exclusive locks only", st->fname);
		pgx_error(s, "0A000", msg,
			  "Use pg_advisory_lock and the other exclusive advisory lock functions.");
		return;
	case FN_LOCK:
	case FN_XACT_LOCK:
	case FN_TRY_LOCK:
	case FN_TRY_XACT_LOCK:
		if ((ls = pgs_lsess(s)) == NULL)
			return;
		req.name = name;
		req.name_len = advisory_name(s, a, st->nargs, name);
		req.lease_ms = s->lease_ms;
		req.scope = st->fn == FN_XACT_LOCK || st->fn == FN_TRY_XACT_LOCK ? LS_SCOPE_XACT
										 : LS_SCOPE_SESSION;
		if (st->fn == FN_LOCK || st->fn == FN_XACT_LOCK)
			req.wait_ms = wait_bound(s, 0, &why);
		req.trace = s->trace;
		rc = ls_acquire(ls, &req, &now, lease_done, s);
		answer(s, st, po, why, rc, &now);
		return;
	case FN_UNLOCK:
		if ((ls = pgs_lsess(s)) == NULL)
			return;
		advisory_name(s, a, st->nargs, name);
		rc = ls_release(ls, name, 0, LS_SCOPE_SESSION, &now, lease_done, s);
		answer(s, st, po, 0, rc, &now);
		return;
	case FN_UNLOCK_ALL:
		now = (struct ls_result){.status = LS_OK};
		rc = LS_OK;
		if (s->ls != NULL)
			rc = ls_release_scope(s->ls, LS_SCOPE_SESSION, &now, lease_done, s);
		answer(s, st, po, 0, rc, &now);
		return;
	case FN_LG_ACQUIRE:
		if ((ls = pgs_lsess(s)) == NULL)
			return;
		if (a[0].null || a[1].null || (st->nargs == 3 && a[2].null)) {
			pgx_error(s, "22004", "leasegate.acquire: arguments must not be NULL",
				  NULL);
			return;
		}
		req.name = a[0].s;
		req.name_len = a[0].len;
		req.lease_ms = a[1].i;
		if (req.lease_ms < 0) {
			pgx_error(s, "22023", "leasegate.acquire: lease_ms must not be negative",
				  NULL);
			return;
		}
		if (st->nargs == 3) {
			if (a[2].i < 0) {
				pgx_error(s, "22023",
					  "leasegate.acquire: wait_ms must not be negative (0: "
					  "forever)",
					  NULL);
				return;
			}
			req.wait_ms = wait_bound(s, a[2].i, &why);
		}
		req.trace = s->trace;
		rc = ls_acquire(ls, &req, &now, lease_done, s);
		answer(s, st, po, why, rc, &now);
		return;
	case FN_LG_RELEASE:
		if ((ls = pgs_lsess(s)) == NULL)
			return;
		if (a[0].null || a[0].len > STORE_NAME_MAX || memchr(a[0].s, 0, a[0].len)) {
			pgx_error(s, "22023",
				  "leasegate.release: a lock name is 1 to the name limit "
				  "of characters",
				  NULL);
			return;
		}
		memcpy(name, a[0].s, a[0].len);
		name[a[0].len] = '\0';
		rc = ls_release(ls, name, 0, LS_SCOPE_SESSION, &now, lease_done, s);
		answer(s, st, po, 0, rc, &now);
		return;
	case FN_LG_STATE:
		if ((ls = pgs_lsess(s)) == NULL)
			return;
		if (a[0].null) {
			pgx_error(s, "22004", "leasegate.state: the name must not be NULL", NULL);
			return;
		}
		rc = ls_state(ls, a[0].s, a[0].len, &now, lease_done, s);
		answer(s, st, po, 0, rc, &now);
		return;
	case FN_LG_TRANSACT:
	case FN_LG_CHECK:
		if ((ls = pgs_lsess(s)) == NULL)
			return;
		if (a[0].null || a[1].null || (st->fn == FN_LG_TRANSACT && a[2].null)) {
			snprintf(msg, sizeof(msg), "%s: arguments must not be NULL", st->fname);
			pgx_error(s, "22004", msg, NULL);
			return;
		}
		if (st->fn == FN_LG_CHECK) {
			rc = ls_check(ls, a[0].s, a[0].len, a[1].i, &now, lease_done, s);
		} else {
			struct ls_tx_req tx = {.name = a[0].s,
					       .name_len = a[0].len,
					       .token = a[1].i,
					       .items = a[2].s,
					       .items_len = a[2].len};
			rc = ls_transact(ls, &tx, &now, lease_done, s);
		}
		answer(s, st, po, 0, rc, &now);
		return;
	case FN_LG_TOKEN:
		if (s->ls == NULL) {
			struct ls_result none = {.status = LS_NONE};
			render(s, st->fn, 0, po, st->alias, &none);
			return;
		}
		{
			struct ls_result r = {.status = LS_NONE};
			size_t nl = advisory_name(s, a, st->nargs, name);
			if (ls_held(s->ls, name, nl, &r.token, NULL))
				r.status = LS_OK;
			render(s, st->fn, 0, po, st->alias, &r);
		}
		return;
	default:
		break;
	}
	/* the constant functions */
	struct pg_col cols[1];
	struct val v = {0};
	char ver[128];
	switch (st->fn) {
	case FN_CONST:
		v.i = st->args[0].i;
		break;
	case FN_BACKEND_PID:
		v.i = s->pid;
		break;
	case FN_VERSION:
		snprintf(ver, sizeof(ver),
			 "PostgreSQL 15.0 (leasegate %s: advisory locks on leases), 64-bit",
			 LG_VERSION);
		v.s = ver;
		v.len = strlen(ver);
		break;
	case FN_CURRENT_SETTING:
	case FN_SET_CONFIG: {
		char gname[SQL_ALIAS_MAX];
		size_t n = a[0].len < sizeof(gname) - 1 ? a[0].len : sizeof(gname) - 1;
		if (a[0].null) {
			v.null = true;
			break;
		}
		memcpy(gname, a[0].s, n);
		gname[n] = '\0';
		int g = pgs_guc_find(gname);
		if (g < 0) {
			if (st->fn == FN_CURRENT_SETTING && st->nargs == 2 && a[1].i) {
				v.null = true;
				break;
			}
			snprintf(msg, sizeof(msg), "unrecognized configuration parameter \"%s\"",
				 gname);
			pgx_error(s, "42704", msg, NULL);
			return;
		}
		if (st->fn == FN_SET_CONFIG &&
		    !pgs_guc_set(s, g, a[1].null ? "" : a[1].s, a[1].null ? 0 : a[1].len,
				 a[2].i && s->in_block)) {
			pgx_failed(s);
			return;
		}
		v.s = s->guc[g];
		v.len = strlen(v.s);
		break;
	}
	default:
		return;
	}
	unsigned n = pgx_columns(st, po, cols);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	pgv_put_row(&s->c.out, n, cols, &v);
	complete_select(s);
}

/* --- the other statements --- */

static void run_set(struct pgs *s, const struct sql_stmt *st)
{
	char msg[200];
	if (st->name[0] == '\0') { /* SET TRANSACTION ...: nothing to do */
		pg_command_complete(&s->c.out, "SET");
		return;
	}
	int g = pgs_guc_find(st->name);
	if (g < 0) {
		if (strchr(st->name, '.') == NULL) {
			snprintf(msg, sizeof(msg), "unrecognized configuration parameter \"%s\"",
				 st->name);
			pgx_error(s, "42704", msg, NULL);
			return;
		}
		pg_command_complete(&s->c.out, "SET"); /* a custom option: kept nowhere */
		return;
	}
	if (st->local && !s->in_block) {
		pgs_notice(s, "WARNING", "25P01",
			   "SET LOCAL can only be used in transaction blocks", NULL);
		pg_command_complete(&s->c.out, "SET");
		return;
	}
	if (st->value_len == 7 && strncasecmp(st->value, "default", 7) == 0)
		pgs_guc_reset(s, g);
	else if (!pgs_guc_set(s, g, st->value, st->value_len, st->local)) {
		pgx_failed(s);
		return;
	}
	pg_command_complete(&s->c.out, "SET");
}

/* The types leasegate sends, as pg_type has them. */
static const struct {
	uint32_t oid;
	const char *name;
} pg_types[] = {
	{PG_OID_BOOL, "bool"}, {PG_OID_NAME, "name"}, {PG_OID_INT8, "int8"}, {PG_OID_INT2, "int2"},
	{PG_OID_INT4, "int4"}, {PG_OID_TEXT, "text"}, {PG_OID_OID, "oid"},   {PG_OID_VOID, "void"},
};

static void run_catalog(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct pg_col cols[4];
	struct val key, v[3] = {{0}};
	unsigned rows = 0;
	if (!pgv_arg(s, st, po, 0, PG_OID_INT8, &key))
		return;
	unsigned n = pgx_columns(st, po, cols);
	struct val v4[4] = {{0}};
	for (size_t i = 0; i < sizeof(pg_types) / sizeof(pg_types[0]) && !key.null; i++)
		if (pg_types[i].oid == (uint64_t)key.i) {
			const char *tn = pg_types[i].name;
			rows = 1;
			if (st->catalog == CAT_JDBC_TYPE_BY_OID) {
				v[0].i = 1; /* on the search path */
				v[1] = (struct val){.s = "pg_catalog", .len = 10};
				v[2] = (struct val){.s = tn, .len = strlen(tn)};
			} else {
				v4[0].i = 0; /* not an array */
				v4[1] = (struct val){.s = key.i == PG_OID_VOID ? "p" : "b",
						     .len = 1};
				v4[2] = (struct val){.s = tn, .len = strlen(tn)};
				v4[3].i = key.i;
			}
		}
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	if (rows)
		pgv_put_row(&s->c.out, n, cols, st->catalog == CAT_JDBC_TYPE_BY_OID ? v : v4);
	pg_command_complete(&s->c.out, rows ? "SELECT 1" : "SELECT 0");
}

static void run_show(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct pg_col cols[1];
	char msg[200];
	int g = pgs_guc_find(st->name);
	if (g < 0) {
		snprintf(msg, sizeof(msg), "unrecognized configuration parameter \"%s\"", st->name);
		pgx_error(s, "42704", msg, NULL);
		return;
	}
	struct val v = {.s = s->guc[g], .len = strlen(s->guc[g])};
	unsigned n = pgx_columns(st, po, cols);
	cols[0].name = pgs_guc_name(g);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	pgv_put_row(&s->c.out, n, cols, &v);
	pg_command_complete(&s->c.out, "SHOW");
}

/* Runs one recognised statement (po: its portal, NULL in a simple query).
 * Writes its result and CommandComplete, or its error; or suspends. */
void pgx_run(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct buf *o = &s->c.out;
	if (s->failed && st->kind != SQL_COMMIT && st->kind != SQL_ROLLBACK) {
		pgx_error(s, "25P02",
			  "current transaction is aborted, commands ignored until end of "
			  "transaction block",
			  NULL);
		return;
	}
	switch (st->kind) {
	case SQL_EMPTY:
		pg_empty_query(o);
		return;
	case SQL_SELECT:
		run_select(s, st, po);
		return;
	case SQL_BEGIN:
		if (s->in_block)
			pgs_notice(s, "WARNING", "25001",
				   "there is already a transaction in progress", NULL);
		s->in_block = true;
		pg_command_complete(o, "BEGIN");
		return;
	case SQL_COMMIT:
	case SQL_ROLLBACK: {
		bool failed = s->failed;
		if (!s->in_block)
			pgs_notice(s, "WARNING", "25P01", "there is no transaction in progress",
				   NULL);
		xact_end(s, st->kind == SQL_COMMIT && !failed ? "COMMIT" : "ROLLBACK");
		return;
	}
	case SQL_SET:
		run_set(s, st);
		return;
	case SQL_RESET:
	case SQL_RESET_ALL:
		if (st->kind == SQL_RESET) {
			int g = pgs_guc_find(st->name);
			if (g < 0) {
				pgx_error(s, "42704", "unrecognized configuration parameter", NULL);
				return;
			}
			pgs_guc_reset(s, g);
		} else {
			for (int g = 0; g < GUC_COUNT; g++)
				pgs_guc_reset(s, g);
		}
		pg_command_complete(o, "RESET");
		return;
	case SQL_SHOW:
		run_show(s, st, po);
		return;
	case SQL_DISCARD_ALL:
		if (s->in_block) {
			pgx_error(s, "25001", "DISCARD ALL cannot run inside a transaction block",
				  NULL);
			return;
		}
		/* as PostgreSQL: settings reset, advisory locks released,
		 * statements and portals closed */
		for (int g = 0; g < GUC_COUNT; g++)
			pgs_guc_reset(s, g);
		if (po == NULL)
			pgq_free_all(s);
		{
			struct ls_result now = {.status = LS_OK};
			enum ls_status rc = LS_OK;
			if (s->ls != NULL)
				rc = ls_release_all(s->ls, &now, releases_done, s);
			answer_released(s, rc, &now, "DISCARD ALL");
		}
		return;
	case SQL_CLOSE_ALL:
		pg_command_complete(o, "CLOSE CURSOR ALL");
		return;
	case SQL_UNLISTEN:
		pg_command_complete(o, "UNLISTEN");
		return;
	case SQL_DEALLOCATE:
		pgq_close_prep(s, st->name[0] ? st->name : NULL);
		pg_command_complete(o, st->name[0] ? "DEALLOCATE" : "DEALLOCATE ALL");
		return;
	case SQL_CATALOG:
		run_catalog(s, st, po);
		return;
	case SQL_UNSUPPORTED:
		unsupported(s, st);
		return;
	}
}
