/*
 * pg_exec: one recognised statement run — as an operation of the
 * lease-session layer (advisory locks, leasegate's functions), or on the
 * session (transaction blocks I/T/E, settings) — and its result rendered
 * as PostgreSQL would: row descriptions with real type OIDs, values in
 * the format asked, SQLSTATEs. The flows that call it are pg_query.c.
 * A function call goes by its row of the function table (pg_fn.h): its
 * arity, argument types, ACL categories and lock name, then its handler
 * (pg_fns.c), whose lease answers come back here to be rendered.
 *
 * SQLSTATEs of leasegate's own: a lease lost before it was released is
 * 55000 (object_not_in_prerequisite_state) at its next use; a store error
 * is 58000 (system_error), an answer retrying may change, or XX000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/obs/log.h"
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

/* The first words of st's text (blanks collapsed), up to about 60
 * characters, "..." when cut: an error names the statement, one line. */
static void first_words(const struct sql_stmt *st, char *out, size_t cap)
{
	size_t n = 0, word_end = 0;
	bool blank = false, cut = false;
	for (size_t i = 0; i < st->text_len && !cut; i++) {
		char c = st->text[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			blank = n > 0;
			continue;
		}
		if (n + 2 >= cap || n >= 60) {
			cut = true;
			break;
		}
		if (blank) {
			word_end = n;
			out[n++] = ' ';
		}
		blank = false;
		out[n++] = c;
	}
	if (cut) {
		n = word_end > 0 ? word_end : n;
		snprintf(out + n, cap - n, " ...");
		return;
	}
	out[n] = '\0';
}

void pgx_unsupported(struct pgs *s, const struct sql_stmt *st)
{
	char msg[160], words[72];
	first_words(st, words, sizeof(words));
	snprintf(msg, sizeof(msg), "leasegate serves locks only%s: %s",
		 st->several ? ", one function call per SELECT" : "", words);
	pgx_error(s, "0A000", msg,
		  st->several ? "Send one SELECT per call: SELECT f(...); SELECT g(...) (one query "
				"string may hold several)."
			      : "leasegate answers the advisory lock functions, "
				"leasegate.acquire/release/state/token/transact/check, transaction "
				"control and "
				"SET/SHOW; see docs/postgresql.md.");
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
	s->xacts++;
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

/* --- the ACL --- */

bool pgx_may_wait(const struct pgs *s, const char *name)
{
	if (conn_closed(&s->c) || s->c.acl == NULL)
		return false;
	const struct pg_fn *fn = s->pend_fn;
	size_t len = strlen(name);
	if (fn == NULL || fn->cats == 0)
		return true;
	struct acl_req r = {
		.cmd = fn->name, .cats = fn->cats, .nkeys = 1, .keys = &name, .key_lens = &len};
	return acl_check(s->c.acl, &r, NULL) == ACL_OK;
}

/* The ACL check point (acl_check, the one the Redis front-end calls) for
 * st with arguments a: its function's name and categories and the lock it
 * names (an advisory lock's pg:<database>:..., a leasegate.* call's name
 * argument). false: 42501 written. */
static bool acl_allows(struct pgs *s, const struct sql_stmt *st, const struct val *a)
{
	const struct pg_fn *fn = st->fn;
	char name[STORE_NAME_MAX + 64], msg[STORE_NAME_MAX + 200];
	const char *key = name;
	size_t klen = 0;
	if (fn->cats == 0)
		return true;
	struct acl_req r = {.cmd = fn->name, .cats = fn->cats, .keys = &key, .key_lens = &klen};
	r.nkeys = pgf_lock_key(s, st, a, name, &key, &klen);
	switch (acl_check(s->c.acl, &r, NULL)) {
	case ACL_OK:
		return true;
	case ACL_DENIED_CMD:
		snprintf(msg, sizeof(msg), "permission denied for function %s", fn->name);
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

/* The errors every lease operation's answer may be; false when res is
 * none (LS_OK, LS_NONE). */
static bool lease_error(struct pgs *s, const struct ls_result *res)
{
	char msg[LS_MSG_MAX + 64];
	switch (res->status) {
	case LS_OK:
	case LS_NONE:
		return false;
	case LS_LOST:
		snprintf(msg, sizeof(msg), "%s (fencing token %lld), before it was released",
			 res->message[0] ? res->message : ls_loss_text(res->loss),
			 (long long)res->token);
		pgx_error(s, "55000", msg, "Take the lock again: another holder may have it.");
		return true;
	case LS_CANCELLED:
		if (strstr(res->message, "shutting down") != NULL) /* admin_shutdown */
			pgx_error(s, "57P01", "terminating statement: leasegate is shutting down",
				  NULL);
		else
			pgx_error(s, "57014", "canceling statement due to user request", NULL);
		return true;
	case LS_INVALID:
	case LS_CONFLICT:
		pgx_error(s, "22023", res->message, NULL);
		return true;
	case LS_DENIED: /* the ACL rules changed while it waited */
		pgx_error(s, "42501", res->message, NULL);
		return true;
	case LS_TRANSIENT:
		pgx_error(s, "58000", res->message, "The lock store failed; retrying may work.");
		return true;
	default:
		pgx_error(s, "XX000", res->message, NULL);
		return true;
	}
}

void pgx_render(struct pgs *s, const struct pg_fn *fn, int timeout, const struct pg_portal *po,
		const char *alias, const struct ls_result *res)
{
	struct pg_col cols[PG_FN_MAX_COLS];
	struct val v[PG_FN_MAX_COLS];
	memset(v, 0, sizeof(v));
	if (fn->own_error != NULL && fn->own_error(s, res))
		return;
	tell_unwritten(s, res);
	if (lease_error(s, res) || (fn->fill != NULL && !fn->fill(s, timeout, res, v)))
		return;
	unsigned n = pgv_fn_columns(fn, alias, po, cols);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	pgv_put_row(&s->c.out, n, cols, v);
	complete_select(s);
}

void pgx_lease_done(void *arg, const struct ls_result *res)
{
	struct pgs *s = arg;
	if (!conn_closed(&s->c))
		pgx_render(s, s->pend_fn, s->pend_timeout, s->pend_portal, s->pend_alias, res);
	conn_resume(&s->c);
}

void pgx_answer(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po, int timeout,
		enum ls_status rc, const struct ls_result *now)
{
	if (rc == LS_PENDING) {
		s->wait_since_us = pgl_wall_us(); /* pg_locks.waitstart of a wait */
		s->pend_fn = st->fn;
		s->pend_timeout = timeout;
		s->pend_portal = po;
		memcpy(s->pend_alias, st->alias, sizeof(s->pend_alias));
		conn_suspend(&s->c);
		return;
	}
	pgx_render(s, st->fn, timeout, po, st->alias, now);
}

void pgx_value_row(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		   const struct val *v)
{
	struct pg_col cols[PG_FN_MAX_COLS];
	unsigned n = pgx_columns(st, po, cols);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	pgv_put_row(&s->c.out, n, cols, v);
	complete_select(s);
}

/* --- function calls --- */

/* A call of st's function, all by its row (pg_fn.h): arity, arguments in
 * its types, STRICT, the ACL check, a lost lease reported, its handler. */
static void run_select(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	const struct pg_fn *fn = st->fn;
	struct val a[SQL_MAX_ARGS];
	struct ls_result now;
	/* a prepared call was resolved at Parse */
	if (po == NULL && !pgv_check_call(s, st, NULL, 0))
		return;
	bool null_in = false;
	for (unsigned i = 0; i < st->nargs; i++) {
		if (!pgv_arg(s, st, po, i, pgv_arg_type(st, i), &a[i]))
			return;
		null_in |= a[i].null;
	}
	if (null_in && (fn->flags & PGF_STRICT)) { /* NULL in, NULL out */
		struct val null = {.null = true};
		pgx_value_row(s, st, po, &null);
		return;
	}
	if (!acl_allows(s, st, a))
		return;
	/* a lease lost since the last call: this call is the error */
	if ((fn->flags & PGF_REPORTS_LOSS) && s->ls != NULL &&
	    ls_take_lost(s->ls, &now) == LS_LOST) {
		pgx_render(s, fn, 0, po, st->alias, &now);
		return;
	}
	fn->run(s, st, po, a);
}

/* --- the other statements --- */

/* A pooler in transaction mode (pgbouncer's pool_mode = transaction)
 * hands this connection from client to client between transactions,
 * and session-level advisory locks then belong to whichever client comes
 * next. leasegate sees it only when the clients differ in
 * application_name: the pooler sets the next one's on the connection
 * while the last one's session locks are held (in session mode it runs
 * DISCARD ALL first, which releases them). Told, as a WARNING and in the
 * log; the lock stays (the first client may well come back). */
static void tell_shared_connection(struct pgs *s, const struct sql_stmt *st)
{
	const char *old = s->guc[GUC_APPLICATION_NAME];
	if (s->in_block || s->ls == NULL || lsess_count(s->ls) == 0 || old[0] == '\0' ||
	    (strlen(old) == st->value_len && memcmp(old, st->value, st->value_len) == 0))
		return;
	char msg[PG_GUC_VAL * 2 + 200];
	snprintf(
		msg, sizeof(msg),
		"session-level advisory locks taken as application_name \"%s\" are held by this "
		"connection, now application_name \"%.*s\": a pooler in transaction mode shares it",
		old, (int)(st->value_len < PG_GUC_VAL ? st->value_len : PG_GUC_VAL - 1), st->value);
	pgs_notice(s, "WARNING", "01000", msg,
		   "Session-level advisory locks are unsafe behind a transaction pooler: use "
		   "pg_advisory_xact_lock, or session pooling.");
	log_msg(LOG_LVL_WARN, "pg session %llu %s: %s", (unsigned long long)s->c.id, s->c.addr,
		msg);
}

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
	if (g == GUC_APPLICATION_NAME)
		tell_shared_connection(s, st);
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

static void run_reset(struct pgs *s, const struct sql_stmt *st)
{
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
	pg_command_complete(&s->c.out, "RESET");
}

/* As PostgreSQL: settings reset, advisory locks released, statements and
 * portals closed. */
static void run_discard_all(struct pgs *s, const struct pg_portal *po)
{
	struct ls_result now = {.status = LS_OK};
	enum ls_status rc = LS_OK;
	if (s->in_block) {
		pgx_error(s, "25001", "DISCARD ALL cannot run inside a transaction block", NULL);
		return;
	}
	for (int g = 0; g < GUC_COUNT; g++)
		pgs_guc_reset(s, g);
	if (po == NULL)
		pgq_free_all(s);
	if (s->ls != NULL)
		rc = ls_release_all(s->ls, &now, releases_done, s);
	answer_released(s, rc, &now, "DISCARD ALL");
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
		run_reset(s, st);
		return;
	case SQL_SHOW:
		run_show(s, st, po);
		return;
	case SQL_DISCARD_ALL:
		run_discard_all(s, po);
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
		if (st->catalog == CAT_PG_TYPE)
			pgc_type_lookup(s, st, po);
		else if (st->catalog == CAT_PG_DATABASE)
			pgl_database(s, st, po);
		else if (st->catalog == CAT_PG_LOCKS)
			pgl_query(s, st, po);
		else
			run_catalog(s, st, po);
		return;
	case SQL_UNSUPPORTED:
		pgx_unsupported(s, st);
		return;
	}
}
