/*
 * pg_catalog: the rows of pg_type leasegate can show, and the answer to a
 * type loader's lookup (CAT_PG_TYPE of pg_sql.h: psycopg2's and Django's
 * hstore and citext, asyncpg's json and jsonb codecs). leasegate has the
 * built-in types it sends or reads and json/jsonb (leasegate.transact's
 * items), all in pg_catalog; a lookup of any other type (hstore, citext)
 * finds no row, as on a PostgreSQL without that extension. Not a
 * catalogue: one lookup by name or oid, one row at most.
 */
#include <string.h>

#include "gateway/pg/pg_int.h"

#define PG_CATALOG_NSP 11 /* pg_catalog's oid */

static const struct pg_type_row {
	uint32_t oid, array;
	const char *name;
	char typtype; /* b base, p pseudo */
} type_rows[] = {
	{PG_OID_BOOL, 1000, "bool", 'b'},
	{PG_OID_CHAR, 1002, "char", 'b'},
	{PG_OID_NAME, 1003, "name", 'b'},
	{PG_OID_INT8, 1016, "int8", 'b'},
	{PG_OID_INT2, 1005, "int2", 'b'},
	{PG_OID_INT4, 1007, "int4", 'b'},
	{PG_OID_TEXT, 1009, "text", 'b'},
	{PG_OID_OID, 1028, "oid", 'b'},
	{114, 199, "json", 'b'},
	{PG_OID_UNKNOWN, 0, "unknown", 'p'},
	{PG_OID_VARCHAR, 1015, "varchar", 'b'},
	{PG_OID_VOID, 0, "void", 'p'},
	{3802, 3807, "jsonb", 'b'},
};

/* The row of the key: a type name (by_name) or an oid; NULL: none. */
static const struct pg_type_row *find_type(bool by_name, const struct val *key)
{
	if (key->null)
		return NULL;
	for (size_t i = 0; i < sizeof(type_rows) / sizeof(type_rows[0]); i++) {
		const struct pg_type_row *r = &type_rows[i];
		if (by_name ? strlen(r->name) == key->len && memcmp(r->name, key->s, key->len) == 0
			    : r->oid == (uint64_t)key->i)
			return r;
	}
	return NULL;
}

/* Column c (enum sql_type_col) of row r. */
static struct val type_value(const struct pg_type_row *r, unsigned char c)
{
	static const char delim[] = ",";
	switch (c) {
	case TC_OID:
		return (struct val){.i = r->oid};
	case TC_TYPARRAY:
		return (struct val){.i = r->array};
	case TC_TYPELEM:
		return (struct val){.i = 0};
	case TC_TYPNAMESPACE:
		return (struct val){.i = PG_CATALOG_NSP};
	case TC_TYPTYPE:
		return (struct val){.s = &r->typtype, .len = 1};
	case TC_TYPDELIM:
		return (struct val){.s = delim, .len = 1};
	case TC_NSPNAME:
		return (struct val){.s = "pg_catalog", .len = 10};
	default:
		return (struct val){.s = r->name, .len = strlen(r->name)};
	}
}

void pgc_type_lookup(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po)
{
	struct pg_col cols[SQL_MAX_COLS];
	struct val key, v[SQL_MAX_COLS];
	if (!pgv_arg(s, st, po, 0, st->by_name ? PG_OID_TEXT : PG_OID_INT8, &key))
		return;
	const struct pg_type_row *r = find_type(st->by_name, &key);
	unsigned n = pgx_columns(st, po, cols);
	if (po == NULL)
		pg_row_description(&s->c.out, n, cols);
	if (r != NULL) {
		for (unsigned i = 0; i < n; i++)
			v[i] = type_value(r, st->col[i]);
		pgv_put_row(&s->c.out, n, cols, v);
	}
	pg_command_complete(&s->c.out, r != NULL ? "SELECT 1" : "SELECT 0");
}
