/*
 * pg_locks: the view of PostgreSQL's pg_locks leasegate can show — the
 * advisory locks held (granted) and awaited (not granted) by this
 * replica's PostgreSQL sessions, one row per session and key however
 * often and in whichever scopes it holds it, as PostgreSQL shows them —
 * and the answer to a query of it (CAT_PG_LOCKS of pg_sql.h: WHERE
 * predicates ANDed, ORDER BY, LIMIT); and pg_database's oid of a name
 * (CAT_PG_DATABASE), the database pg_locks.database names.
 *
 * A database name is a namespace of advisory keys (pg:<database>:<key>,
 * pg_fns.c), so each name has its own oid: a hash of the name, the same
 * on every replica, from 16384 (PostgreSQL's first oid of user objects)
 * up. Redis clients' locks are no advisory keys and are not shown; the
 * table's whole view is LOCK.LIST TABLE on the Redis port. As LOCK.LIST,
 * it shows the locks whose names the asker's ACL rules let it read.
 *
 * A row's mode is ExclusiveLock, or ShareLock for a shared hold or wait
 * (pg_advisory_lock_shared and its variants).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "gateway/conn/server.h"
#include "gateway/pg/pg_int.h"

#define PG_FIRST_USER_OID 16384u

uint32_t pgl_database_oid(const char *name, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return PG_FIRST_USER_OID + h % (UINT32_MAX - PG_FIRST_USER_OID + 1);
}

int64_t pgl_wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void pgl_database(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct pg_col cols[1];
	struct val key = {.s = s->database, .len = strlen(s->database)};
	if (st->by_name && !pgv_arg(s, st, po, 0, PG_OID_TEXT, &key))
		return;
	unsigned n = pgx_columns(st, po, cols);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	if (!key.null) {
		struct val oid = {.i = pgl_database_oid(key.s, key.len)};
		pgv_put_row(&s->c.out, n, cols, &oid);
	}
	pg_command_complete(&s->c.out, key.null ? "SELECT 0" : "SELECT 1");
}

/* --- the rows --- */

struct lock_row {
	uint32_t database, classid, objid, pid;
	int16_t objsubid; /* 1: a bigint key, 2: a pair of int4 */
	bool granted;
	const char *mode;     /* "ExclusiveLock" ("ShareLock" once built) */
	int64_t waitstart_us; /* a waiting row's, 0: unknown (NULL) */
	size_t seq;	      /* the order found, for a stable sort */
	char vxact[24];	      /* virtualtransaction: "<pid>/<transaction>" */
};

struct rows {
	struct lock_row *v;
	size_t n, cap;
	bool oom;
	const struct pgs *sess;	    /* the session being listed */
	const struct acl_user *who; /* the asker: the names its ACL lets it read */
};

/* The int64 written at p..end, exactly as pg_fns.c writes keys (no
 * leading zero, no "-0"): a text name that only looks like one is no key. */
static bool key_int(const char *p, const char *end, int64_t lo, int64_t hi, int64_t *out)
{
	char buf[24];
	size_t n = (size_t)(end - p);
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, p, n);
	buf[n] = '\0';
	char *e;
	long long v = strtoll(buf, &e, 10);
	char back[24];
	snprintf(back, sizeof(back), "%lld", v);
	if (*e != '\0' || strcmp(back, buf) != 0 || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* The row of lock name of session s ("pg:<database>:<k>" or
 * "...:<k1>:<k2>"); false when name is no advisory key of its database. */
static bool advisory_row(const struct pgs *s, const char *name, struct lock_row *r)
{
	size_t dl = strlen(s->database), nl = strlen(name);
	if (nl < dl + 4 || memcmp(name, "pg:", 3) != 0 || memcmp(name + 3, s->database, dl) != 0 ||
	    name[3 + dl] != ':')
		return false;
	const char *k = name + 4 + dl, *end = name + nl, *colon = strchr(k, ':');
	int64_t a, b;
	if (colon == NULL) {
		if (!key_int(k, end, INT64_MIN, INT64_MAX, &a))
			return false;
		r->classid = (uint32_t)((uint64_t)a >> 32);
		r->objid = (uint32_t)(uint64_t)a;
		r->objsubid = 1;
	} else {
		if (!key_int(k, colon, INT32_MIN, INT32_MAX, &a) ||
		    !key_int(colon + 1, end, INT32_MIN, INT32_MAX, &b))
			return false;
		r->classid = (uint32_t)(int32_t)a;
		r->objid = (uint32_t)(int32_t)b;
		r->objsubid = 2;
	}
	r->database = pgl_database_oid(s->database, dl);
	r->pid = s->pid;
	r->mode = "ExclusiveLock";
	snprintf(r->vxact, sizeof(r->vxact), "%u/%u", s->pid, s->xacts + 1);
	return true;
}

static void each_entry(void *arg, const struct ls_entry *e)
{
	struct rows *rs = arg;
	struct lock_row r = {0};
	bool granted = strcmp(e->state, "held") == 0;
	bool shared = e->kind == LS_KIND_SHARED;
	if (rs->oom || (e->kind != LS_KIND_LOCK && !shared) ||
	    (!granted && strcmp(e->state, "waiting") != 0) ||
	    !advisory_row(rs->sess, e->name, &r) ||
	    !acl_may_read(rs->who, e->name, strlen(e->name)))
		return; /* a lost lease is held no more; as LOCK.LIST, the readable only */
	r.granted = granted;
	r.mode = shared ? "ShareLock" : "ExclusiveLock";
	r.waitstart_us = granted ? 0 : rs->sess->wait_since_us;
	r.seq = rs->n;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct lock_row *v = realloc(rs->v, cap * sizeof(*v));
		if (v == NULL) {
			rs->oom = true;
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = r;
}

static void each_session(struct conn *c, void *arg)
{
	struct rows *rs = arg;
	const struct pgs *s = pgs_of(c);
	if (s->st != PGS_READY || s->ls == NULL)
		return;
	rs->sess = s;
	(void)lsess_list(s->ls, each_entry, rs);
}

/* Column c of row r. */
static struct val row_value(const struct lock_row *r, unsigned c)
{
	switch (c) {
	case LK_LOCKTYPE:
		return (struct val){.s = "advisory", .len = 8};
	case LK_DATABASE:
		return (struct val){.i = r->database};
	case LK_CLASSID:
		return (struct val){.i = r->classid};
	case LK_OBJID:
		return (struct val){.i = r->objid};
	case LK_OBJSUBID:
		return (struct val){.i = r->objsubid};
	case LK_VIRTUALTRANSACTION:
		return (struct val){.s = r->vxact, .len = strlen(r->vxact)};
	case LK_PID:
		return (struct val){.i = r->pid};
	case LK_MODE:
		return (struct val){.s = r->mode, .len = strlen(r->mode)};
	case LK_GRANTED:
		return (struct val){.i = r->granted};
	case LK_FASTPATH:
		return (struct val){.i = 0};
	case LK_WAITSTART:
		return (struct val){.null = r->waitstart_us == 0, .i = r->waitstart_us};
	default: /* relation, page, tuple, virtualxid, transactionid */
		return (struct val){.null = true};
	}
}

/* --- comparisons --- */

enum kind { K_TEXT, K_INT, K_BOOL };

static enum kind kind_of(uint32_t oid)
{
	switch (oid) {
	case PG_OID_TEXT:
	case PG_OID_VARCHAR:
	case PG_OID_NAME:
		return K_TEXT;
	case PG_OID_BOOL:
		return K_BOOL;
	default:
		return K_INT;
	}
}

/* a and b (not NULL) of column c, in its type: < 0, 0, > 0. */
static int compare(unsigned c, const struct val *a, const struct val *b)
{
	if (kind_of(sql_lock_cols[c].oid) == K_TEXT) {
		size_t n = a->len < b->len ? a->len : b->len;
		int d = memcmp(a->s, b->s, n);
		return d != 0 ? d : (a->len > b->len) - (a->len < b->len);
	}
	return (a->i > b->i) - (a->i < b->i);
}

/* The type PostgreSQL gives the argument a before comparing it; 0:
 * unknown (a string, NULL, a parameter of no type), which any takes. */
static uint32_t given_type(const struct sql_arg *a, const struct pg_portal *po)
{
	if (a->cast != 0)
		return a->cast;
	if (a->t == ARG_INT)
		return a->i >= INT32_MIN && a->i <= INT32_MAX ? PG_OID_INT4 : PG_OID_INT8;
	if (a->t == ARG_BOOL)
		return PG_OID_BOOL;
	if (a->t == ARG_PARAM && po != NULL && (unsigned)a->param <= po->prep->ntypes)
		return po->prep->types[a->param - 1];
	return 0;
}

static const char *type_name(uint32_t oid)
{
	switch (oid) {
	case PG_OID_INT8:
		return "bigint";
	case PG_OID_INT4:
		return "integer";
	case PG_OID_INT2:
		return "smallint";
	case PG_OID_OID:
		return "oid";
	case PG_OID_XID:
		return "xid";
	case PG_OID_BOOL:
		return "boolean";
	default:
		return "text";
	}
}

/* PostgreSQL's spellings of a boolean. */
static bool bool_text(const char *p, size_t len, int64_t *out)
{
	static const char *const t[] = {"t", "true", "y", "yes", "on", "1"};
	static const char *const f[] = {"f", "false", "n", "no", "off", "0"};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strlen(t[i]) == len && strncasecmp(p, t[i], len) == 0)
			return *out = 1, true;
		if (strlen(f[i]) == len && strncasecmp(p, f[i], len) == 0)
			return *out = 0, true;
	}
	return false;
}

/* Predicate p's value in its column's type. false: the error written
 * (42883 for a type the column does not compare with, 22P02 a bad
 * literal). */
static bool pred_value(struct pgs *s, const struct sql_pred *p, const struct pg_portal *po,
		       struct val *v)
{
	char msg[160];
	uint32_t col = sql_lock_cols[p->col].oid, given = given_type(&p->arg, po);
	enum kind k = kind_of(col);
	if (given != 0 && kind_of(given) != k) {
		snprintf(msg, sizeof(msg), "operator does not exist: %s %s %s", type_name(col),
			 p->ne ? "<>" : "=", type_name(given));
		pgx_error(s, "42883", msg,
			  "No operator matches the given name and argument types. You might need "
			  "to add explicit type casts.");
		return false;
	}
	if (k == K_BOOL && p->arg.t == ARG_STR) {
		memset(v, 0, sizeof(*v));
		if (bool_text(p->arg.s, p->arg.len, &v->i))
			return true;
		snprintf(msg, sizeof(msg), "invalid input syntax for type boolean: \"%.*s\"",
			 (int)(p->arg.len > 64 ? 64 : p->arg.len), p->arg.s);
		pgx_error(s, "22P02", msg, NULL);
		return false;
	}
	return pgv_value(s, &p->arg, po,
			 k == K_TEXT   ? PG_OID_TEXT
			 : k == K_BOOL ? PG_OID_BOOL
				       : PG_OID_INT8,
			 v);
}

/* Row r meets every predicate (values pv): col = v is never true of a
 * NULL, nor col <> v. */
static bool matches(const struct sql_stmt *st, const struct val *pv, const struct lock_row *r)
{
	for (unsigned i = 0; i < st->npreds; i++) {
		struct val rv = row_value(r, st->preds[i].col);
		if (rv.null || pv[i].null ||
		    (compare(st->preds[i].col, &rv, &pv[i]) == 0) == st->preds[i].ne)
			return false;
	}
	return true;
}

/* ORDER BY: NULLs last ascending, first descending, as PostgreSQL; then
 * the order found. */
static int by_order(const void *x, const void *y, void *arg)
{
	const struct sql_stmt *st = arg;
	const struct lock_row *a = x, *b = y;
	for (unsigned i = 0; i < st->norder; i++) {
		unsigned c = st->order[i].col;
		struct val va = row_value(a, c), vb = row_value(b, c);
		int d = va.null || vb.null ? va.null - vb.null : compare(c, &va, &vb);
		if (d != 0)
			return st->order[i].desc ? -d : d;
	}
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* --- the answer --- */

/* The rows of rs meeting st's predicates, first in rs->v; how many. */
static size_t keep_matching(const struct sql_stmt *st, const struct val *pv, struct rows *rs)
{
	size_t kept = 0;
	for (size_t i = 0; i < rs->n; i++)
		if (matches(st, pv, &rs->v[i]))
			rs->v[kept++] = rs->v[i];
	return kept;
}

static void put_rows(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		     const struct rows *rs, size_t n)
{
	struct pg_col cols[SQL_MAX_COLS];
	struct val v[SQL_MAX_COLS];
	char tag[40];
	unsigned nc = pgx_columns(st, po, cols);
	bool count = st->ncols == 1 && st->col[0] == LK_COUNT;
	if (po == NULL)
		pg_row_description(&s->c.out, nc, cols);
	if (count) {
		v[0] = (struct val){.i = (int64_t)n};
		pgv_put_row(&s->c.out, 1, cols, v);
		n = 1;
	} else {
		if (st->limit >= 0 && (uint64_t)st->limit < n)
			n = (size_t)st->limit;
		for (size_t r = 0; r < n; r++) {
			for (unsigned i = 0; i < nc; i++)
				v[i] = row_value(&rs->v[r], st->col[i]);
			pgv_put_row(&s->c.out, nc, cols, v);
		}
	}
	snprintf(tag, sizeof(tag), "SELECT %zu", n);
	pg_command_complete(&s->c.out, tag);
}

void pgl_query(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct val pv[SQL_MAX_PREDS];
	struct rows rs = {.who = s->c.acl};
	for (unsigned i = 0; i < st->npreds; i++)
		if (!pred_value(s, &st->preds[i], po, &pv[i]))
			return;
	srv_foreach(s->fe->srv, &s->fe->proto, each_session, &rs);
	if (rs.oom) {
		free(rs.v);
		pgx_error(s, "53200", "out of memory", NULL);
		return;
	}
	size_t n = keep_matching(st, pv, &rs);
	if (st->norder > 0 && n > 1)
		qsort_r(rs.v, n, sizeof(*rs.v), by_order, (void *)st);
	put_rows(s, st, po, &rs, n);
	free(rs.v);
}
