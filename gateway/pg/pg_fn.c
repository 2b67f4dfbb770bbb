/*
 * pg_fn: what is read off the function table of pg_fns.c — a function's
 * row by name (a binary search: the table is sorted), its result column's
 * name, the names ACL rules may give, and the reference page
 * (docs/reference/functions.md). See pg_fn.h.
 */
#include "gateway/pg/pg_fn.h"

#include <string.h>

#include "gateway/conn/acl.h"
#include "gateway/pg/pg_fe.h"
#include "protocols/buf.h"

/* The first row called name (len bytes, lower case), or NULL. */
static const struct pg_fn *find_name(const char *name, size_t len)
{
	size_t lo = 0, hi = pg_fns_count;
	while (lo < hi) { /* the first row not below name, as strcmp orders */
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(pg_fns[mid].name, name, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == pg_fns_count || strncmp(pg_fns[lo].name, name, len) != 0 ||
	    pg_fns[lo].name[len] != '\0')
		return NULL;
	return &pg_fns[lo];
}

const struct pg_fn *pg_fn_lookup(const char *name, size_t len, unsigned nargs)
{
	char low[SQL_ALIAS_MAX];
	if (len >= sizeof(low))
		return NULL;		 /* longer than any name */
	for (size_t i = 0; i < len; i++) /* ASCII: as strncasecmp in the C locale */
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + ('a' - 'A') : name[i]);
	const char *p = low;
	if (len > 11 && memcmp(p, "pg_catalog.", 11) == 0) {
		p += 11;
		len -= 11;
	}
	const struct pg_fn *first = find_name(p, len);
	if (first == NULL)
		return NULL;
	const struct pg_fn *end = pg_fns + pg_fns_count;
	for (const struct pg_fn *f = first; f < end && strcmp(f->name, first->name) == 0; f++)
		if (f->nargs == nargs)
			return f;
	return first;
}

const char *pg_fn_column(const struct pg_fn *fn)
{
	const char *dot = strrchr(fn->name, '.');
	return dot != NULL ? dot + 1 : fn->name;
}

bool pg_fn_acl_known(const char *name)
{
	const struct pg_fn *f = find_name(name, strlen(name));
	return f != NULL && f->cats != 0;
}

/* --- the reference page --- */

static const char *type_name(uint32_t oid)
{
	switch (oid) {
	case PG_OID_BOOL:
		return "bool";
	case PG_OID_INT8:
		return "bigint";
	case PG_OID_INT4:
		return "int";
	case PG_OID_VOID:
		return "void";
	case PG_OID_NAME:
		return "name";
	default:
		return "text";
	}
}

static void doc_call(struct buf *out, const struct pg_fn *f)
{
	buf_printf(out, "`%s(", f->name);
	for (unsigned i = 0; i < f->nargs; i++)
		buf_printf(out, "%s%s %s", i ? ", " : "", f->arg_names[i],
			   type_name(f->arg_types[i]));
	buf_printf(out, ")`");
}

static void doc_result(struct buf *out, const struct pg_fn *f)
{
	if (f->ncols == 0) {
		buf_printf(out, "none");
		return;
	}
	if (f->ncols == 1 && f->cols[0].name == NULL) {
		buf_printf(out, "`%s`", type_name(f->cols[0].oid));
		return;
	}
	buf_printf(out, "one row:");
	for (unsigned i = 0; i < f->ncols; i++)
		buf_printf(out, "%s `%s %s`", i ? "," : "", f->cols[i].name,
			   type_name(f->cols[i].oid));
}

static void doc_acl(struct buf *out, const struct pg_fn *f)
{
	if (f->cats == 0) {
		buf_printf(out, "none (not checked) | none");
		return;
	}
	for (const struct acl_cat_def *c = acl_cats; c->name != NULL; c++)
		if (f->cats & c->bit)
			buf_printf(out, "`@%s` ", c->name);
	if (f->lock_arg == PGF_LOCK_KEYS)
		buf_printf(out, "| `pg:<database>:<%s>`", f->nargs == 1 ? "key" : "key1>:<key2");
	else if (f->lock_arg > 0)
		buf_printf(out, "| its `%s`", f->arg_names[f->lock_arg - 1]);
	else
		buf_printf(out, "| none");
}

void pg_fn_doc_markdown(struct buf *out)
{
	buf_printf(out,
		   "# PostgreSQL functions\n\n"
		   "<!-- generated from the function table (gateway/pg/pg_fns.c) by `make "
		   "docs`: edit the table, not this page -->\n\n"
		   "The functions leasegate's PostgreSQL port answers, one row per argument "
		   "list, called one per `SELECT` (`SELECT f(...)`, `SELECT * FROM f(...)`, "
		   "with `AS alias`; `pg_catalog.` may name the `pg_*` ones). Arguments are "
		   "literals, `$n` parameters (typed as below unless cast) or `NULL`.\n\n"
		   "The ACL file (`--aclfile`) names a function in `+name` and `-name` "
		   "rules (`-pg_advisory_unlock_all`, `+leasegate.state`), and its "
		   "categories in `+@category` rules; the lock name checked against the "
		   "user's `~pattern`s is the one shown. A refusal is SQLSTATE `42501`.\n\n"
		   "| function | result | ACL categories | lock name checked | what it does |\n"
		   "|---|---|---|---|---|\n");
	for (size_t i = 0; i < pg_fns_count; i++) {
		const struct pg_fn *f = &pg_fns[i];
		buf_printf(out, "| ");
		doc_call(out, f);
		buf_printf(out, " | ");
		doc_result(out, f);
		buf_printf(out, " | ");
		doc_acl(out, f);
		buf_printf(out, " | %s |\n", f->summary);
	}
}
