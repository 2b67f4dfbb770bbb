/*
 * pg_fns: the PostgreSQL functions leasegate answers — their table
 * (pg_fn.h: one row per function and argument list) and the handler of
 * each, a lease operation of the session or a value of its own. What every
 * call shares (arity, arguments, the ACL check, a lost lease, the common
 * errors of an answer, the row written) is pg_exec.c's, driven by the row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/pg/pg_fn.h"
#include "gateway/pg/pg_int.h"

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

unsigned pgf_lock_key(const struct pgs *s, const struct sql_stmt *st, const struct val *a,
		      char *buf, const char **key, size_t *len)
{
	int i = st->fn->lock_arg;
	if (i == PGF_LOCK_KEYS) {
		*key = buf;
		*len = advisory_name(s, a, st->nargs, buf);
		return 1;
	}
	if (i <= 0 || a[i - 1].null)
		return 0;
	*key = a[i - 1].s;
	*len = a[i - 1].len;
	return 1;
}

/* --- answers of lease operations --- */

/* A wait that ended without the lock: by lock_timeout (1) or else. */
static bool timed_out(struct pgs *s, int timeout)
{
	if (timeout == 1)
		pgx_error(s, "55P03", "canceling statement due to lock timeout", NULL);
	else
		pgx_error(s, "57014", "canceling statement due to statement timeout", NULL);
	return false;
}

static bool fill_void(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	return true;
}

static bool fill_waited(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	return res->status == LS_OK || timed_out(s, timeout);
}

static bool fill_ok(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	v[0].i = res->status == LS_OK;
	return true;
}

static bool fill_unlock(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	v[0].i = res->status == LS_OK;
	if (!v[0].i)
		pgs_notice(s, "WARNING", "01000", "you don't own a lock of type ExclusiveLock",
			   NULL);
	return true;
}

static bool fill_unlock_shared(struct pgs *s, int timeout, const struct ls_result *res,
			       struct val *v)
{
	v[0].i = res->status == LS_OK;
	if (!v[0].i)
		pgs_notice(s, "WARNING", "01000", "you don't own a lock of type ShareLock", NULL);
	return true;
}

static bool fill_token(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	v[0].null = res->status != LS_OK;
	v[0].i = res->token;
	return true;
}

/* leasegate.acquire: one try (timeout 0) that failed is NULL, a wait
 * that did an error. */
static bool fill_acquire(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	if (res->status != LS_OK && timeout != 0)
		return timed_out(s, timeout);
	return fill_token(s, timeout, res, v);
}

static bool fill_state(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	const struct lt_state *ls = &res->st;
	if (res->status != LS_OK || !ls->exists) {
		v[1].null = v[2].null = v[3].null = v[5].null = v[6].null = true;
		return true;
	}
	v[0].i = ls->held;
	v[1].null = !(ls->held && ls->holder[0]);
	v[1].s = ls->holder;
	v[1].len = strlen(ls->holder);
	v[2].i = ls->lease_ms;
	v[3].i = ls->token;
	v[4].i = res->mine;
	/* as LOCK.STATE's heartbeat and confirmed-ms-ago (redis/lockcmds.c) */
	v[5].s = ls->held && ls->session ? "replica" : "lease";
	v[5].len = strlen(v[5].s);
	v[6].null = !ls->session_here || ls->confirmed_ago_ms < 0;
	v[6].i = ls->confirmed_ago_ms;
	return true;
}

/* leasegate.transact's own SQLSTATEs (docs/postgresql.md, its row): the
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

/* --- the advisory lock functions --- */

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

static void advisory_acquire(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			     const struct val *a, enum ls_scope scope, bool waits, bool shared)
{
	char name[STORE_NAME_MAX + 64];
	struct ls_result now;
	struct lsess *ls = pgs_lsess(s);
	int why = 0;
	if (ls == NULL)
		return;
	struct ls_acquire_req req = {.reentrant = true, .wait_ms = -1};
	req.name = name;
	req.name_len = advisory_name(s, a, st->nargs, name);
	req.lease_ms = s->lease_ms;
	req.scope = scope;
	if (waits)
		req.wait_ms = wait_bound(s, 0, &why);
	req.trace = s->trace;
	enum ls_status rc = shared ? ls_acquire_shared(ls, &req, &now, pgx_lease_done, s)
				   : ls_acquire(ls, &req, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, why, rc, &now);
}

static void run_lock(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		     const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_SESSION, true, false);
}

static void run_xact_lock(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			  const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_XACT, true, false);
}

static void run_try_lock(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			 const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_SESSION, false, false);
}

static void run_try_xact_lock(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			      const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_XACT, false, false);
}

/* One release of a session-level hold, exclusive or shared. */
static void advisory_release(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			     const struct val *a, bool shared)
{
	char name[STORE_NAME_MAX + 64];
	struct ls_result now;
	struct lsess *ls = pgs_lsess(s);
	if (ls == NULL)
		return;
	advisory_name(s, a, st->nargs, name);
	enum ls_status rc =
		shared ? ls_release_shared(ls, name, LS_SCOPE_SESSION, &now, pgx_lease_done, s)
		       : ls_release(ls, name, 0, LS_SCOPE_SESSION, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, 0, rc, &now);
}

static void run_unlock(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		       const struct val *a)
{
	advisory_release(s, st, po, a, false);
}

static void run_unlock_all(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			   const struct val *a)
{
	struct ls_result now = {.status = LS_OK};
	enum ls_status rc = LS_OK;
	if (s->ls != NULL)
		rc = ls_release_scope(s->ls, LS_SCOPE_SESSION, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, 0, rc, &now);
}

/* The _shared variants: any number of sessions hold a key shared, none
 * while one holds it exclusively (ls_acquire_shared). */
static void run_lock_shared(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			    const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_SESSION, true, true);
}

static void run_xact_lock_shared(struct pgs *s, const struct sql_stmt *st,
				 const struct pg_portal *po, const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_XACT, true, true);
}

static void run_try_lock_shared(struct pgs *s, const struct sql_stmt *st,
				const struct pg_portal *po, const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_SESSION, false, true);
}

static void run_try_xact_lock_shared(struct pgs *s, const struct sql_stmt *st,
				     const struct pg_portal *po, const struct val *a)
{
	advisory_acquire(s, st, po, a, LS_SCOPE_XACT, false, true);
}

static void run_unlock_shared(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			      const struct val *a)
{
	advisory_release(s, st, po, a, true);
}

/* --- leasegate's functions --- */

static void run_acquire(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			const struct val *a)
{
	struct ls_result now;
	struct lsess *ls = pgs_lsess(s);
	int why = 0;
	if (ls == NULL)
		return;
	if (a[0].null || a[1].null || (st->nargs == 3 && a[2].null)) {
		pgx_error(s, "22004", "leasegate.acquire: arguments must not be NULL", NULL);
		return;
	}
	struct ls_acquire_req req = {.reentrant = true, .wait_ms = -1};
	req.name = a[0].s;
	req.name_len = a[0].len;
	req.lease_ms = a[1].i;
	if (req.lease_ms < 0) {
		pgx_error(s, "22023", "leasegate.acquire: lease_ms must not be negative", NULL);
		return;
	}
	if (st->nargs == 3) {
		if (a[2].i < 0) {
			pgx_error(s, "22023",
				  "leasegate.acquire: wait_ms must not be negative (0: forever)",
				  NULL);
			return;
		}
		req.wait_ms = wait_bound(s, a[2].i, &why);
	}
	req.trace = s->trace;
	enum ls_status rc = ls_acquire(ls, &req, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, why, rc, &now);
}

static void run_release(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			const struct val *a)
{
	char name[STORE_NAME_MAX + 64];
	struct ls_result now;
	struct lsess *ls = pgs_lsess(s);
	if (ls == NULL)
		return;
	if (a[0].null || a[0].len > STORE_NAME_MAX || memchr(a[0].s, 0, a[0].len)) {
		pgx_error(s, "22023",
			  "leasegate.release: a lock name is 1 to the name limit of characters",
			  NULL);
		return;
	}
	memcpy(name, a[0].s, a[0].len);
	name[a[0].len] = '\0';
	enum ls_status rc = ls_release(ls, name, 0, LS_SCOPE_SESSION, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, 0, rc, &now);
}

static void run_state(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		      const struct val *a)
{
	struct ls_result now;
	struct lsess *ls = pgs_lsess(s);
	if (ls == NULL)
		return;
	if (a[0].null) {
		pgx_error(s, "22004", "leasegate.state: the name must not be NULL", NULL);
		return;
	}
	enum ls_status rc = ls_state(ls, a[0].s, a[0].len, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, 0, rc, &now);
}

/* The session's lease session, and none of the st->nargs arguments NULL;
 * NULL: the error is written. */
static struct lsess *fenced_args(struct pgs *s, const struct sql_stmt *st, const struct val *a)
{
	char msg[SQL_ALIAS_MAX + 64];
	struct lsess *ls = pgs_lsess(s);
	if (ls == NULL)
		return NULL;
	for (unsigned i = 0; i < st->nargs; i++)
		if (a[i].null) {
			snprintf(msg, sizeof(msg), "%s: arguments must not be NULL", st->fname);
			pgx_error(s, "22004", msg, NULL);
			return NULL;
		}
	return ls;
}

static void run_transact(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			 const struct val *a)
{
	struct ls_result now;
	struct lsess *ls = fenced_args(s, st, a);
	if (ls == NULL)
		return;
	struct ls_tx_req tx = {.name = a[0].s,
			       .name_len = a[0].len,
			       .token = a[1].i,
			       .items = a[2].s,
			       .items_len = a[2].len};
	if (st->nargs == 4) { /* leasegate.transact(name, token, items, request) */
		tx.request = a[3].s;
		tx.request_len = a[3].len;
	}
	enum ls_status rc = ls_transact(ls, &tx, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, 0, rc, &now);
}

static void run_check(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		      const struct val *a)
{
	struct ls_result now;
	struct lsess *ls = fenced_args(s, st, a);
	if (ls == NULL)
		return;
	enum ls_status rc = ls_check(ls, a[0].s, a[0].len, a[1].i, &now, pgx_lease_done, s);
	pgx_answer(s, st, po, 0, rc, &now);
}

static void run_token(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		      const struct val *a)
{
	char name[STORE_NAME_MAX + 64];
	struct ls_result r = {.status = LS_NONE};
	if (s->ls != NULL) {
		size_t nl = advisory_name(s, a, st->nargs, name);
		if (ls_held(s->ls, name, nl, &r.token, NULL) ||
		    ls_held_shared(s->ls, name, nl, &r.token))
			r.status = LS_OK;
	}
	pgx_render(s, st->fn, 0, po, st->alias, &r);
}

/* --- values of the session and of the server --- */

static void run_literal(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			const struct val *a)
{
	pgx_value_row(s, st, po, a);
}

static void run_backend_pid(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			    const struct val *a)
{
	struct val v = {.i = s->pid};
	pgx_value_row(s, st, po, &v);
}

static void run_version(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			const struct val *a)
{
	char ver[128];
	snprintf(ver, sizeof(ver),
		 "PostgreSQL 15.0 (leasegate %s: advisory locks on leases), 64-bit", LG_VERSION);
	struct val v = {.s = ver, .len = strlen(ver)};
	pgx_value_row(s, st, po, &v);
}

/* current_database(): the database the session named at startup (its
 * locks' names hold it). */
static void run_current_database(struct pgs *s, const struct sql_stmt *st,
				 const struct pg_portal *po, const struct val *a)
{
	struct val v = {.s = s->database, .len = strlen(s->database)};
	pgx_value_row(s, st, po, &v);
}

/* current_schema(): leasegate has no schemas to search but PostgreSQL's
 * default one; ORMs ask it at connect. */
static void run_current_schema(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			       const struct val *a)
{
	struct val v = {.s = "public", .len = 6};
	pgx_value_row(s, st, po, &v);
}

/* The setting a[0] names: its index, -1 when a[0] is NULL, -2 (error
 * written unless missing_ok) when there is none. */
static int setting_of(struct pgs *s, const struct val *a, bool missing_ok)
{
	char gname[SQL_ALIAS_MAX], msg[SQL_ALIAS_MAX + 64];
	if (a[0].null)
		return -1;
	size_t n = a[0].len < sizeof(gname) - 1 ? a[0].len : sizeof(gname) - 1;
	memcpy(gname, a[0].s, n);
	gname[n] = '\0';
	int g = pgs_guc_find(gname);
	if (g < 0 && !missing_ok) {
		snprintf(msg, sizeof(msg), "unrecognized configuration parameter \"%s\"", gname);
		pgx_error(s, "42704", msg, NULL);
	}
	return g < 0 ? -2 : g;
}

static void run_current_setting(struct pgs *s, const struct sql_stmt *st,
				const struct pg_portal *po, const struct val *a)
{
	bool missing_ok = st->nargs == 2 && a[1].i;
	struct val v = {.null = true};
	int g = setting_of(s, a, missing_ok);
	if (g == -2 && !missing_ok)
		return;
	if (g >= 0)
		v = (struct val){.s = s->guc[g], .len = strlen(s->guc[g])};
	pgx_value_row(s, st, po, &v);
}

static void run_set_config(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			   const struct val *a)
{
	struct val v = {.null = true};
	int g = setting_of(s, a, false);
	if (g == -2)
		return;
	if (g >= 0) {
		if (!pgs_guc_set(s, g, a[1].null ? "" : a[1].s, a[1].null ? 0 : a[1].len,
				 a[2].i && s->in_block)) {
			pgx_failed(s);
			return;
		}
		v = (struct val){.s = s->guc[g], .len = strlen(s->guc[g])};
	}
	pgx_value_row(s, st, po, &v);
}

/* --- the test mode's functions (leasegate --test-mode, docs/testing.md) --- */

/* The test mode's functions exist with --test-mode only: elsewhere they
 * are refused as a function that does not exist (42883), saying why.
 * false: refused, the error written. */
static bool in_test_mode(struct pgs *s, const struct sql_stmt *st)
{
	char msg[SQL_ALIAS_MAX + 64];
	if (lsvc_test_mode(s->fe->svc))
		return true;
	snprintf(msg, sizeof(msg), "function %s does not exist", st->fname);
	pgx_error(s, "42883", msg, "It exists with leasegate --test-mode only (docs/testing.md).");
	return false;
}

static bool fill_clock_ms(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	v[0].i = res->clock_ms;
	return true;
}

static bool fill_clock(struct pgs *s, int timeout, const struct ls_result *res, struct val *v)
{
	v[0].i = res->clock_ms;
	v[1].i = res->wall_ms;
	return true;
}

static void run_clock_advance(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			      const struct val *a)
{
	struct ls_result now;
	struct lsess *ls;
	if (!in_test_mode(s, st) || (ls = pgs_lsess(s)) == NULL)
		return;
	pgx_answer(s, st, po, 0, ls_test_advance(ls, a[0].i, &now, pgx_lease_done, s), &now);
}

static void run_clock_now(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			  const struct val *a)
{
	struct ls_result now;
	struct lsess *ls;
	if (!in_test_mode(s, st) || (ls = pgs_lsess(s)) == NULL)
		return;
	pgx_answer(s, st, po, 0, ls_test_now(ls, &now), &now);
}

/* leasegate.simulate_*: the operation by the function's name. */
static void run_simulate(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			 const struct val *a)
{
	static const struct {
		const char *name;
		enum ls_test_sim op;
	} ops[] = {{"leasegate.simulate_holder", LS_SIM_HOLDER},
		   {"leasegate.simulate_release", LS_SIM_RELEASE},
		   {"leasegate.simulate_delete", LS_SIM_DELETE}};
	struct ls_result now;
	struct lsess *ls;
	if (!in_test_mode(s, st) || (ls = pgs_lsess(s)) == NULL)
		return;
	struct ls_sim_req req = {.name = a[0].s, .name_len = a[0].len};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(st->fn->name, ops[i].name) == 0)
			req.op = ops[i].op;
	if (req.op == LS_SIM_HOLDER) {
		req.lease_ms = a[1].i;
		if (st->nargs == 3) {
			req.holder = a[2].s;
			req.holder_len = a[2].len;
		}
	}
	pgx_answer(s, st, po, 0, ls_test_simulate(ls, &req, &now, pgx_lease_done, s), &now);
}

static void run_wait_refusal(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			     const struct val *a)
{
	struct ls_result now;
	struct lsess *ls;
	if (!in_test_mode(s, st) || (ls = pgs_lsess(s)) == NULL)
		return;
	int64_t timeout = st->nargs == 2 ? a[1].i : 0;
	pgx_answer(s, st, po, 0,
		   ls_test_wait_refusal(ls, a[0].s, a[0].len, timeout, &now, pgx_lease_done, s),
		   &now);
}

/* --- the table --- */

static const struct pg_col col_void[] = {{NULL, PG_OID_VOID, 4, 0}};
static const struct pg_col col_bool[] = {{NULL, PG_OID_BOOL, 1, 0}};
static const struct pg_col col_int8[] = {{NULL, PG_OID_INT8, 8, 0}};
static const struct pg_col col_int4[] = {{NULL, PG_OID_INT4, 4, 0}};
static const struct pg_col col_text[] = {{NULL, PG_OID_TEXT, -1, 0}};
static const struct pg_col col_name[] = {{NULL, PG_OID_NAME, 64, 0}};
static const struct pg_col col_state[] = {
	{"held", PG_OID_BOOL, 1, 0},
	{"holder", PG_OID_TEXT, -1, 0},
	{"lease_ms", PG_OID_INT8, 8, 0},
	{"fencing_token", PG_OID_INT8, 8, 0},
	{"mine", PG_OID_BOOL, 1, 0},
	{"heartbeat", PG_OID_TEXT, -1, 0},
	{"confirmed_ms_ago", PG_OID_INT8, 8, 0},
};
static const struct pg_col col_clock[] = {
	{"monotonic_ms", PG_OID_INT8, 8, 0},
	{"wall_ms", PG_OID_INT8, 8, 0},
};

#define COLS(c)	 .ncols = sizeof(c) / sizeof(c[0]), .cols = c
#define W_BLOCK	 (ACL_WRITE | ACL_LOCK | ACL_SLOW | ACL_BLOCKING)
#define W_FAST	 (ACL_WRITE | ACL_LOCK | ACL_FAST)
#define R_FAST	 (ACL_READ | ACL_LOCK | ACL_FAST)
#define KEY1	 .nargs = 1, .arg_types = {PG_OID_INT8}, .arg_names = {"key"}
#define KEY2	 .nargs = 2, .arg_types = {PG_OID_INT4, PG_OID_INT4}, .arg_names = {"key1", "key2"}
#define ADVISORY .lock_arg = PGF_LOCK_KEYS, .flags = PGF_STRICT | PGF_REPORTS_LOSS
/* the test mode's functions: as Redis's DEBUG (redis/testcmds.c) */
#define TEST_CATS (ACL_ADMIN | ACL_DANGEROUS | ACL_SLOW | ACL_LOCK)
#define TEST_LOCK (TEST_CATS | ACL_WRITE)
/* the functions that take an advisory key: (bigint) and (int, int) */
/* clang-format off */
#define BY_KEY(...) {KEY1, __VA_ARGS__}, {KEY2, __VA_ARGS__}
/* clang-format on */

const struct pg_fn pg_fns[] = {
	{.name = "current_database",
	 COLS(col_name),
	 .run = run_current_database,
	 .summary = "the session's database (the middle part of its advisory locks' names)"},
	{.name = "current_schema",
	 COLS(col_name),
	 .run = run_current_schema,
	 .summary = "`public` (what ORMs ask at connect; leasegate has no schemas)"},
	{.name = "current_setting",
	 .nargs = 1,
	 .arg_types = {PG_OID_TEXT},
	 .arg_names = {"setting_name"},
	 COLS(col_text),
	 .run = run_current_setting,
	 .summary = "the setting's value in this session (as SHOW)"},
	{.name = "current_setting",
	 .nargs = 2,
	 .arg_types = {PG_OID_TEXT, PG_OID_BOOL},
	 .arg_names = {"setting_name", "missing_ok"},
	 COLS(col_text),
	 .run = run_current_setting,
	 .summary = "the setting's value; NULL for an unknown one when missing_ok"},
	{.name = "leasegate.acquire",
	 .nargs = 2,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT4},
	 .arg_names = {"name", "lease_ms"},
	 COLS(col_int8),
	 .cats = W_BLOCK,
	 .lock_arg = 1,
	 .flags = PGF_REPORTS_LOSS,
	 .run = run_acquire,
	 .fill = fill_acquire,
	 .summary = "takes the lock named for lease_ms (one try): its fencing token, or NULL "
		    "when held elsewhere"},
	{.name = "leasegate.acquire",
	 .nargs = 3,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT4, PG_OID_INT4},
	 .arg_names = {"name", "lease_ms", "wait_ms"},
	 COLS(col_int8),
	 .cats = W_BLOCK,
	 .lock_arg = 1,
	 .flags = PGF_REPORTS_LOSS,
	 .run = run_acquire,
	 .fill = fill_acquire,
	 .summary = "takes the lock named for lease_ms, waiting up to wait_ms (0: forever): its "
		    "fencing token"},
	{.name = "leasegate.check",
	 .nargs = 2,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT8},
	 .arg_names = {"name", "token"},
	 COLS(col_bool),
	 .cats = R_FAST,
	 .lock_arg = 1,
	 .run = run_check,
	 .fill = fill_ok,
	 .summary = "the lease of that token holds the lock now (a check, not a fence)"},
	{.name = "leasegate.clock_advance",
	 .nargs = 1,
	 .arg_types = {PG_OID_INT8},
	 .arg_names = {"ms"},
	 COLS(col_int8),
	 .cats = TEST_CATS | ACL_BLOCKING,
	 .flags = PGF_STRICT,
	 .run = run_clock_advance,
	 .fill = fill_clock_ms,
	 .summary = "test mode: moves the lease clock ms ahead, running every heartbeat, poll, "
		    "wait timeout and expiry that falls due, in order: the monotonic ms now"},
	{.name = "leasegate.clock_now",
	 COLS(col_clock),
	 .cats = ACL_ADMIN | ACL_DANGEROUS | ACL_LOCK | ACL_FAST,
	 .run = run_clock_now,
	 .fill = fill_clock,
	 .summary = "test mode: one row, the lease clock's monotonic ms (0 at start) and wall ms "
		    "(Unix epoch)"},
	{.name = "leasegate.release",
	 .nargs = 1,
	 .arg_types = {PG_OID_TEXT},
	 .arg_names = {"name"},
	 COLS(col_bool),
	 .cats = W_FAST,
	 .lock_arg = 1,
	 .flags = PGF_REPORTS_LOSS,
	 .run = run_release,
	 .fill = fill_ok,
	 .summary = "releases the lock this session took with leasegate.acquire"},
	{.name = "leasegate.simulate_delete",
	 .nargs = 1,
	 .arg_types = {PG_OID_TEXT},
	 .arg_names = {"name"},
	 COLS(col_void),
	 .cats = TEST_LOCK,
	 .lock_arg = 1,
	 .flags = PGF_STRICT,
	 .run = run_simulate,
	 .fill = fill_void,
	 .summary = "test mode: the lock's item is deleted (TTL, an operator); the next token is "
		    "1"},
	{.name = "leasegate.simulate_holder",
	 .nargs = 2,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT4},
	 .arg_names = {"name", "lease_ms"},
	 COLS(col_int8),
	 .cats = TEST_LOCK,
	 .lock_arg = 1,
	 .flags = PGF_STRICT,
	 .run = run_simulate,
	 .fill = fill_token,
	 .summary = "test mode: another process holds the lock, acquired now and never renewed "
		    "(a crashed holder): its fencing token"},
	{.name = "leasegate.simulate_holder",
	 .nargs = 3,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT4, PG_OID_TEXT},
	 .arg_names = {"name", "lease_ms", "label"},
	 COLS(col_int8),
	 .cats = TEST_LOCK,
	 .lock_arg = 1,
	 .flags = PGF_STRICT,
	 .run = run_simulate,
	 .fill = fill_token,
	 .summary = "test mode: as simulate_holder(name, lease_ms), the holder labelled label"},
	{.name = "leasegate.simulate_release",
	 .nargs = 1,
	 .arg_types = {PG_OID_TEXT},
	 .arg_names = {"name"},
	 COLS(col_bool),
	 .cats = TEST_LOCK,
	 .lock_arg = 1,
	 .flags = PGF_STRICT,
	 .run = run_simulate,
	 .fill = fill_ok,
	 .summary = "test mode: the lock's holder, whoever it was, released it: false when the "
		    "lock has no item"},
	{.name = "leasegate.state",
	 .nargs = 1,
	 .arg_types = {PG_OID_TEXT},
	 .arg_names = {"name"},
	 COLS(col_state),
	 .cats = R_FAST,
	 .lock_arg = 1,
	 .flags = PGF_REPORTS_LOSS,
	 .run = run_state,
	 .fill = fill_state,
	 .summary = "one row: whether the lock is held, by whom, its lease, its fencing token, "
		    "whether by this session, how its holder proves it alive (lease or replica), "
		    "how long ago this replica last confirmed it (its write or its heartbeat)"},
	BY_KEY(.name = "leasegate.token", COLS(col_int8), .cats = R_FAST, ADVISORY,
	       .run = run_token, .fill = fill_token,
	       .summary = "the fencing token of an advisory lock this session holds (held "
			  "shared: the readers' group token), NULL if none"),
	{.name = "leasegate.transact",
	 .nargs = 3,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT8, PG_OID_TEXT},
	 .arg_names = {"name", "token", "items"},
	 COLS(col_bool),
	 .cats = ACL_WRITE | ACL_LOCK | ACL_SLOW,
	 .lock_arg = 1,
	 .run = run_transact,
	 .fill = fill_ok,
	 .own_error = fenced_error,
	 .summary = "writes the items (a JSON array of DynamoDB writes) if and only if the "
		    "lease of that token still holds the lock"},
	{.name = "leasegate.transact",
	 .nargs = 4,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT8, PG_OID_TEXT, PG_OID_TEXT},
	 .arg_names = {"name", "token", "items", "request"},
	 COLS(col_bool),
	 .cats = ACL_WRITE | ACL_LOCK | ACL_SLOW,
	 .lock_arg = 1,
	 .run = run_transact,
	 .fill = fill_ok,
	 .own_error = fenced_error,
	 .summary = "leasegate.transact with a request id of the client's (1-36 characters of "
		    "A-Z a-z 0-9 -): a resend with the same id and items is applied once, for 10 "
		    "minutes"},
	{.name = "leasegate.wait_refusal",
	 .nargs = 1,
	 .arg_types = {PG_OID_TEXT},
	 .arg_names = {"name"},
	 COLS(col_bool),
	 .cats = TEST_CATS | ACL_READ | ACL_BLOCKING,
	 .lock_arg = 1,
	 .flags = PGF_STRICT,
	 .run = run_wait_refusal,
	 .fill = fill_ok,
	 .summary = "test mode: true when this replica next refuses a try or a poll on the lock "
		    "(a contender waits)"},
	{.name = "leasegate.wait_refusal",
	 .nargs = 2,
	 .arg_types = {PG_OID_TEXT, PG_OID_INT4},
	 .arg_names = {"name", "timeout_ms"},
	 COLS(col_bool),
	 .cats = TEST_CATS | ACL_READ | ACL_BLOCKING,
	 .lock_arg = 1,
	 .flags = PGF_STRICT,
	 .run = run_wait_refusal,
	 .fill = fill_ok,
	 .summary = "test mode: as wait_refusal(name); false once timeout_ms of the lease clock "
		    "passed without a refusal (0: none)"},
	BY_KEY(.name = "pg_advisory_lock", COLS(col_void), .cats = W_BLOCK, ADVISORY,
	       .run = run_lock, .fill = fill_waited,
	       .summary = "takes the advisory lock for the session, waiting for it (reentrant)"),
	BY_KEY(.name = "pg_advisory_lock_shared", COLS(col_void), .cats = W_BLOCK, ADVISORY,
	       .run = run_lock_shared, .fill = fill_waited,
	       .summary = "takes the advisory lock shared for the session, waiting for it "
			  "(reentrant; any number of sessions hold it shared, none exclusively "
			  "meanwhile)"),
	BY_KEY(.name = "pg_advisory_unlock", COLS(col_bool), .cats = W_FAST, ADVISORY,
	       .run = run_unlock, .fill = fill_unlock,
	       .summary = "releases one hold of a session-level advisory lock; false and a "
			  "WARNING when not held"),
	{.name = "pg_advisory_unlock_all",
	 COLS(col_void),
	 .cats = W_FAST,
	 .flags = PGF_REPORTS_LOSS,
	 .run = run_unlock_all,
	 .fill = fill_void,
	 .summary = "releases every session-level advisory lock of the session"},
	BY_KEY(.name = "pg_advisory_unlock_shared", COLS(col_bool), .cats = W_FAST, ADVISORY,
	       .run = run_unlock_shared, .fill = fill_unlock_shared,
	       .summary = "releases one shared hold of a session-level advisory lock; false "
			  "and a WARNING when not held shared"),
	BY_KEY(.name = "pg_advisory_xact_lock", COLS(col_void), .cats = W_BLOCK, ADVISORY,
	       .run = run_xact_lock, .fill = fill_waited,
	       .summary = "takes the advisory lock until the transaction ends, waiting for it"),
	BY_KEY(.name = "pg_advisory_xact_lock_shared", COLS(col_void), .cats = W_BLOCK, ADVISORY,
	       .run = run_xact_lock_shared, .fill = fill_waited,
	       .summary = "takes the advisory lock shared until the transaction ends, waiting "
			  "for it"),
	{.name = "pg_backend_pid",
	 COLS(col_int4),
	 .run = run_backend_pid,
	 .summary = "the session's process id, as its cancel key (BackendKeyData) has it"},
	BY_KEY(.name = "pg_try_advisory_lock", COLS(col_bool), .cats = W_FAST, ADVISORY,
	       .run = run_try_lock, .fill = fill_ok,
	       .summary = "takes the advisory lock for the session if it is free: whether it did"),
	BY_KEY(.name = "pg_try_advisory_lock_shared", COLS(col_bool), .cats = W_FAST, ADVISORY,
	       .run = run_try_lock_shared, .fill = fill_ok,
	       .summary = "takes the advisory lock shared for the session if nobody holds it "
			  "exclusively: whether it did"),
	BY_KEY(.name = "pg_try_advisory_xact_lock", COLS(col_bool), .cats = W_FAST, ADVISORY,
	       .run = run_try_xact_lock, .fill = fill_ok,
	       .summary = "takes the advisory lock until the transaction ends if it is free: "
			  "whether it did"),
	BY_KEY(.name = "pg_try_advisory_xact_lock_shared", COLS(col_bool), .cats = W_FAST, ADVISORY,
	       .run = run_try_xact_lock_shared, .fill = fill_ok,
	       .summary = "takes the advisory lock shared until the transaction ends if nobody "
			  "holds it exclusively: whether it did"),
	{.name = "set_config",
	 .nargs = 3,
	 .arg_types = {PG_OID_TEXT, PG_OID_TEXT, PG_OID_BOOL},
	 .arg_names = {"setting_name", "new_value", "is_local"},
	 COLS(col_text),
	 .run = run_set_config,
	 .summary = "sets the setting (as SET, or SET LOCAL when is_local): its new value"},
	{.name = "version",
	 COLS(col_text),
	 .run = run_version,
	 .summary = "PostgreSQL 15.0 and leasegate's version"},
};
const size_t pg_fns_count = sizeof(pg_fns) / sizeof(pg_fns[0]);

const struct pg_fn pg_fn_literal = {
	.name = "?column?",
	.nargs = 1,
	.arg_types = {PG_OID_INT4},
	.arg_names = {"integer"},
	COLS(col_int4),
	.run = run_literal,
	.summary = "SELECT <integer>: that integer (what pools send to test a connection)",
};
