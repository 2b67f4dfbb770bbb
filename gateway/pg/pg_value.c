/*
 * pg_value: the values of the PostgreSQL front-end — the result columns of
 * each statement with real type OIDs, DataRows in the text or binary
 * format asked, and arguments read from literals or bound parameters (text
 * or binary int2/int4/int8/oid/text/bool, types declared or inferred from
 * where a parameter is used).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/pg/pg_int.h"

/* --- result columns --- */

static int16_t col_format(const struct pg_portal *po, unsigned i)
{
	if (po == NULL || po->nrfmt == 0)
		return 0;
	return po->rfmt[po->nrfmt == 1 ? 0 : (i < po->nrfmt ? i : 0)];
}

/* The columns of the result of fn (alias: a one-column result's name). */
unsigned pgv_fn_columns(const struct pg_fn *fn, const char *alias, const struct pg_portal *po,
			struct pg_col *cols)
{
	for (unsigned i = 0; i < fn->ncols; i++) {
		cols[i] = fn->cols[i];
		if (cols[i].name == NULL)
			cols[i].name = alias;
		cols[i].format = col_format(po, i);
	}
	return fn->ncols;
}

/* The columns a catalogue query asks (st->col, indexes into defs), named
 * as st->colnames says, in po's formats. */
static unsigned named_columns(const struct sql_stmt *st, const struct pg_portal *po,
			      const struct pg_col *defs, struct pg_col *cols)
{
	const char *name = st->colnames;
	for (unsigned i = 0; i < st->ncols; i++, name += strlen(name) + 1) {
		cols[i] = defs[st->col[i]];
		cols[i].name = name;
		cols[i].format = col_format(po, i);
	}
	return st->ncols;
}

/* The columns of st's result (0: none). */
unsigned pgx_columns(const struct sql_stmt *st, const struct pg_portal *po, struct pg_col *cols)
{
	if (st->kind == SQL_SHOW) {
		cols[0] = (struct pg_col){st->name, PG_OID_TEXT, -1, col_format(po, 0)};
		return 1;
	}
	if (st->kind == SQL_CATALOG && st->catalog == CAT_PG_TYPE) {
		static const struct pg_col type_col[TC_COUNT] = {
			[TC_OID] = {NULL, PG_OID_OID, 4, 0},
			[TC_TYPNAME] = {NULL, PG_OID_NAME, 64, 0},
			[TC_TYPARRAY] = {NULL, PG_OID_OID, 4, 0},
			[TC_TYPELEM] = {NULL, PG_OID_OID, 4, 0},
			[TC_TYPTYPE] = {NULL, PG_OID_CHAR, 1, 0},
			[TC_TYPNAMESPACE] = {NULL, PG_OID_OID, 4, 0},
			[TC_TYPDELIM] = {NULL, PG_OID_CHAR, 1, 0},
			[TC_NSPNAME] = {NULL, PG_OID_NAME, 64, 0},
		};
		return named_columns(st, po, type_col, cols);
	}
	if (st->kind == SQL_CATALOG && st->catalog == CAT_PG_DATABASE) {
		static const struct pg_col oid_col[1] = {{NULL, PG_OID_OID, 4, 0}};
		return named_columns(st, po, oid_col, cols);
	}
	if (st->kind == SQL_CATALOG && st->catalog == CAT_PG_LOCKS) {
		struct pg_col lock_col[LK_COUNT + 1];
		for (unsigned c = 0; c <= LK_COUNT; c++)
			lock_col[c] = (struct pg_col){NULL, sql_lock_cols[c].oid,
						      sql_lock_cols[c].typlen, 0};
		return named_columns(st, po, lock_col, cols);
	}
	if (st->kind == SQL_CATALOG) {
		static const struct pg_col cat[CAT_COUNT][4] = {
			[CAT_JDBC_TYPE_BY_OID] = {{"?column?", PG_OID_BOOL, 1, 0},
						  {"nspname", PG_OID_NAME, 64, 0},
						  {"typname", PG_OID_NAME, 64, 0}},
			[CAT_JDBC_SQLTYPE_BY_OID] = {{"is_array", PG_OID_BOOL, 1, 0},
						     {"typtype", PG_OID_CHAR, 1, 0},
						     {"typname", PG_OID_NAME, 64, 0},
						     {"oid", PG_OID_OID, 4, 0}},
		};
		unsigned n = st->catalog == CAT_JDBC_TYPE_BY_OID ? 3 : 4;
		for (unsigned i = 0; i < n; i++) {
			cols[i] = cat[st->catalog][i];
			cols[i].format = col_format(po, i);
		}
		return n;
	}
	if (st->kind != SQL_SELECT)
		return 0;
	return pgv_fn_columns(st->fn, st->alias, po, cols);
}

/* µs from the Unix epoch to PostgreSQL's (2000-01-01 UTC) */
#define PG_EPOCH_US 946684800000000LL

/* A timestamptz of us µs since the Unix epoch, as PostgreSQL writes it
 * with TimeZone UTC ("2024-05-01 12:34:56.5+00"), into out (32 bytes). */
static size_t timestamptz_text(int64_t us, char *out, size_t cap)
{
	time_t secs = (time_t)(us / 1000000);
	long frac = (long)(us % 1000000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
	if (frac > 0) {
		char f[8];
		snprintf(f, sizeof(f), ".%06ld", frac);
		size_t k = strlen(f);
		while (f[k - 1] == '0')
			f[--k] = '\0';
		n += (size_t)snprintf(out + n, cap - n, "%s", f);
	}
	n += (size_t)snprintf(out + n, cap - n, "+00");
	return n < cap ? n : cap - 1;
}

/* The binary width of an integer type's value (int8 8, int2 2, else 4). */
static unsigned int_width(uint32_t oid)
{
	return oid == PG_OID_INT8 ? 8 : oid == PG_OID_INT2 ? 2 : 4;
}

/* One DataRow of n values, each in its column's type and format. */
void pgv_put_row(struct buf *o, unsigned n, const struct pg_col *cols, const struct val *v)
{
	char text[SQL_MAX_COLS][32];
	unsigned char bin[SQL_MAX_COLS][8];
	const char *p[SQL_MAX_COLS];
	int32_t len[SQL_MAX_COLS];
	for (unsigned i = 0; i < n; i++) {
		p[i] = NULL;
		len[i] = -1;
		if (v[i].null)
			continue;
		bool b = cols[i].format == 1;
		switch (cols[i].oid) {
		case PG_OID_VOID:
			p[i] = "";
			len[i] = 0;
			break;
		case PG_OID_BOOL:
			if (b) {
				bin[i][0] = v[i].i != 0;
				p[i] = (const char *)bin[i];
			} else {
				p[i] = v[i].i ? "t" : "f";
			}
			len[i] = 1;
			break;
		case PG_OID_TIMESTAMPTZ: /* v.i: µs since the Unix epoch */
			if (b) {
				uint64_t u = (uint64_t)(v[i].i - PG_EPOCH_US);
				for (unsigned k = 0; k < 8; k++)
					bin[i][k] = (unsigned char)(u >> (8 * (7 - k)));
				p[i] = (const char *)bin[i];
				len[i] = 8;
			} else {
				p[i] = text[i];
				len[i] =
					(int32_t)timestamptz_text(v[i].i, text[i], sizeof(text[i]));
			}
			break;
		case PG_OID_INT8:
		case PG_OID_INT4:
		case PG_OID_INT2:
		case PG_OID_XID:
		case PG_OID_OID: {
			if (b) {
				unsigned w = int_width(cols[i].oid);
				uint64_t u = (uint64_t)v[i].i;
				for (unsigned k = 0; k < w; k++)
					bin[i][k] = (unsigned char)(u >> (8 * (w - 1 - k)));
				p[i] = (const char *)bin[i];
				len[i] = (int32_t)w;
				break;
			}
			/* no printf on the hot path */
			char *e = text[i] + sizeof(text[i]);
			uint64_t u = v[i].i < 0 ? 0 - (uint64_t)v[i].i : (uint64_t)v[i].i;
			do {
				*--e = (char)('0' + u % 10);
				u /= 10;
			} while (u);
			if (v[i].i < 0)
				*--e = '-';
			p[i] = e;
			len[i] = (int32_t)(text[i] + sizeof(text[i]) - e);
			break;
		}
		default:
			p[i] = v[i].s;
			len[i] = (int32_t)v[i].len;
		}
	}
	pg_data_row(o, n, p, len);
}

/* --- arguments --- */

static const struct pg_val *param_of(const struct pg_portal *po, int n)
{
	if (po == NULL || n < 1 || (unsigned)n > po->nparams)
		return NULL;
	return &po->params[n - 1];
}

/* The type of parameter n of prep: declared, else from its use. */
static uint32_t param_type(const struct pg_prep *prep, int n)
{
	if (prep != NULL && (unsigned)n <= prep->ntypes && prep->types[n - 1] != 0)
		return prep->types[n - 1];
	return PG_OID_TEXT;
}

static bool int_text(const char *p, size_t len, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t v = 0;
	while (i < len && p[i] == ' ')
		i++;
	if (i < len && (p[i] == '-' || p[i] == '+'))
		neg = p[i++] == '-';
	if (i == len)
		return false;
	for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
		if (v > (uint64_t)INT64_MAX / 10)
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	while (i < len && p[i] == ' ')
		i++;
	if (i != len || v > (uint64_t)INT64_MAX + neg)
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* A value given as text (len bytes: a literal's content, a parameter in
 * the text format) as type want: an integer parsed, a bool true when it
 * starts with one of truth, text as it is. false: 22P02 written. */
static bool text_value(struct pgs *s, const char *p, size_t len, uint32_t want, const char *truth,
		       struct val *v)
{
	char msg[160];
	v->s = p;
	v->len = len;
	if (want == PG_OID_BOOL) {
		v->i = len > 0 && p[0] != '\0' && strchr(truth, p[0]) != NULL;
		return true;
	}
	if (want == PG_OID_TEXT || int_text(p, len, &v->i))
		return true;
	snprintf(msg, sizeof(msg), "invalid input syntax for type %s: \"%.*s\"",
		 want == PG_OID_INT8 ? "bigint" : "integer", (int)(len > 64 ? 64 : len), p);
	pgx_error(s, "22P02", msg, NULL);
	return false;
}

static bool bad_binary(struct pgs *s, int param)
{
	char msg[96];
	snprintf(msg, sizeof(msg), "incorrect binary data format in bind parameter %d", param);
	pgx_error(s, "22P03", msg, NULL);
	return false;
}

/* The bytes of a binary value of type t; 0: a type not taken. */
static int binary_width(uint32_t t)
{
	switch (t) {
	case PG_OID_INT8:
		return 8;
	case PG_OID_INT4:
	case PG_OID_OID:
	case PG_OID_XID:
		return 4;
	case PG_OID_INT2:
		return 2;
	case PG_OID_BOOL:
		return 1;
	default:
		return 0;
	}
}

/* Parameter $param's value p, in the binary format of its type, as type
 * want. false: the error written. */
static bool arg_binary(struct pgs *s, const struct pg_portal *po, int param, const struct pg_val *p,
		       uint32_t want, struct val *v)
{
	char msg[64];
	uint32_t t = param_type(po->prep, param);
	if (t == PG_OID_TEXT || t == PG_OID_VARCHAR || t == PG_OID_NAME || t == PG_OID_UNKNOWN) {
		v->s = p->p;
		v->len = (size_t)p->len;
		return want == PG_OID_TEXT || int_text(v->s, v->len, &v->i) || bad_binary(s, param);
	}
	int w = binary_width(t);
	if (w == 0 || p->len != w)
		return bad_binary(s, param);
	const unsigned char *u = (const unsigned char *)p->p;
	uint64_t x = 0;
	for (int k = 0; k < w; k++)
		x = x << 8 | u[k];
	if (w == 8 || t == PG_OID_OID || t == PG_OID_XID)
		v->i = (int64_t)x;
	else if (w == 4)
		v->i = (int32_t)(uint32_t)x;
	else if (w == 2)
		v->i = (int16_t)(uint16_t)x;
	else
		v->i = x != 0;
	if (want != PG_OID_TEXT)
		return true;
	snprintf(msg, sizeof(msg), "parameter $%d must be text", param);
	pgx_error(s, "42804", msg, NULL);
	return false;
}

/* Argument a, a $n parameter of po, as type want. false: error written. */
static bool arg_param(struct pgs *s, const struct sql_arg *a, const struct pg_portal *po,
		      uint32_t want, struct val *v)
{
	char msg[64];
	const struct pg_val *p = param_of(po, a->param);
	if (p == NULL) {
		snprintf(msg, sizeof(msg), "there is no parameter $%d", a->param);
		pgx_error(s, "42P02", msg, NULL);
		return false;
	}
	if (p->p == NULL) {
		v->null = true;
		return true;
	}
	if (p->fmt == 1)
		return arg_binary(s, po, a->param, p, want, v);
	return text_value(s, p->p, (size_t)p->len, want, "tT1oy", v);
}

/* Argument i of st as a value wanted of type want (int types, text,
 * bool). false: error written. */
bool pgv_arg(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po, unsigned i,
	     uint32_t want, struct val *v)
{
	return pgv_value(s, &st->args[i], po, want, v);
}

bool pgv_value(struct pgs *s, const struct sql_arg *a, const struct pg_portal *po, uint32_t want,
	       struct val *v)
{
	memset(v, 0, sizeof(*v));
	switch (a->t) {
	case ARG_NULL:
		v->null = true;
		return true;
	case ARG_INT:
	case ARG_BOOL:
		v->i = a->i;
		if (want == PG_OID_TEXT) {
			pgx_error(s, "42883", "function does not exist",
				  "The argument should be text: quote it.");
			return false;
		}
		break;
	case ARG_STR:
		if (!text_value(s, a->s, a->len, want, "tTo", v))
			return false;
		break;
	case ARG_PARAM:
		if (!arg_param(s, a, po, want, v))
			return false;
		break;
	}
	if ((want == PG_OID_INT4 && (v->i < INT32_MIN || v->i > INT32_MAX)) ||
	    (want == PG_OID_INT2 && (v->i < INT16_MIN || v->i > INT16_MAX))) {
		pgx_error(s, "22003",
			  want == PG_OID_INT4 ? "integer out of range" : "smallint out of range",
			  NULL);
		return false;
	}
	return true;
}

/* The type of argument i of st's function (text past its arity). */
static uint32_t fn_arg_type(const struct sql_stmt *st, unsigned i)
{
	const struct pg_fn *fn = st->fn;
	return fn != NULL && i < fn->nargs ? fn->arg_types[i] : PG_OID_TEXT;
}

/* What type parameter $n of st is, from where it is used. */
uint32_t pgx_param_type(const struct sql_stmt *st, int n)
{
	if (st->kind == SQL_CATALOG && st->catalog == CAT_PG_LOCKS) {
		for (unsigned i = 0; i < st->npreds; i++)
			if (st->preds[i].arg.t == ARG_PARAM && st->preds[i].arg.param == n)
				return st->preds[i].arg.cast ? st->preds[i].arg.cast
							     : sql_lock_cols[st->preds[i].col].oid;
		return PG_OID_TEXT;
	}
	if (st->kind == SQL_CATALOG)
		return (st->catalog == CAT_PG_TYPE || st->catalog == CAT_PG_DATABASE) && st->by_name
			       ? PG_OID_NAME
			       : PG_OID_OID;
	for (unsigned i = 0; i < st->nargs; i++) {
		const struct sql_arg *a = &st->args[i];
		if (a->t == ARG_PARAM && a->param == n)
			return a->cast ? a->cast : fn_arg_type(st, i);
	}
	return PG_OID_TEXT;
}

/* The wanted type of argument i. */
uint32_t pgv_arg_type(const struct sql_stmt *st, unsigned i)
{
	const struct sql_arg *a = &st->args[i];
	if (a->t == ARG_PARAM)
		return pgx_param_type(st, a->param);
	return fn_arg_type(st, i);
}

/* --- the call's types, as PostgreSQL resolves them --- */

/* The type PostgreSQL gives argument a before it picks a function: its
 * cast's; a parameter's declared type (types[0..ntypes): Parse's, 0
 * undeclared); an integer literal's int4, or int8 past int4; bool's;
 * else unknown (a string, NULL, an undeclared parameter), which any type
 * takes. */
static uint32_t given_type(const struct sql_arg *a, const uint32_t *types, unsigned ntypes)
{
	if (a->cast != 0)
		return a->cast;
	switch (a->t) {
	case ARG_INT:
		return a->i >= INT32_MIN && a->i <= INT32_MAX ? PG_OID_INT4 : PG_OID_INT8;
	case ARG_BOOL:
		return PG_OID_BOOL;
	case ARG_PARAM:
		if ((unsigned)a->param <= ntypes && types[a->param - 1] != 0)
			return types[a->param - 1];
		return PG_OID_UNKNOWN;
	default:
		return PG_OID_UNKNOWN;
	}
}

/* PostgreSQL's implicit casts among the types leasegate takes (pg_cast,
 * castcontext 'i'): unknown to any type, an integer to a wider one,
 * varchar to text. */
static bool coerces(uint32_t from, uint32_t to)
{
	static const struct {
		uint32_t from, to;
	} implicit[] = {
		{PG_OID_INT2, PG_OID_INT4}, {PG_OID_INT2, PG_OID_INT8},
		{PG_OID_INT4, PG_OID_INT8}, {PG_OID_VARCHAR, PG_OID_TEXT},
		{PG_OID_NAME, PG_OID_TEXT},
	};
	if (from == to || from == PG_OID_UNKNOWN)
		return true;
	for (size_t i = 0; i < sizeof(implicit) / sizeof(implicit[0]); i++)
		if (implicit[i].from == from && implicit[i].to == to)
			return true;
	return false;
}

/* A type's name as PostgreSQL's messages write it. */
static const char *type_name(uint32_t oid)
{
	static const struct {
		uint32_t oid;
		const char *name;
	} names[] = {
		{PG_OID_BOOL, "boolean"},
		{PG_OID_INT8, "bigint"},
		{PG_OID_INT4, "integer"},
		{PG_OID_INT2, "smallint"},
		{PG_OID_TEXT, "text"},
		{PG_OID_OID, "oid"},
		{PG_OID_VARCHAR, "character varying"},
		{PG_OID_NAME, "name"},
		{PG_OID_CHAR, "\"char\""},
		{PG_OID_UNKNOWN, "unknown"},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].oid == oid)
			return names[i].name;
	return "unknown";
}

bool pgv_check_call(struct pgs *s, const struct sql_stmt *st, const uint32_t *types,
		    unsigned ntypes)
{
	uint32_t given[SQL_MAX_ARGS];
	bool match = st->nargs == st->fn->nargs;
	for (unsigned i = 0; i < st->nargs; i++) {
		given[i] = given_type(&st->args[i], types, ntypes);
		match = match && coerces(given[i], st->fn->arg_types[i]);
	}
	if (match)
		return true;
	char msg[SQL_ALIAS_MAX + SQL_MAX_ARGS * 24 + 32];
	int n = snprintf(msg, sizeof(msg), "function %s(", st->fname);
	for (unsigned i = 0; i < st->nargs && n > 0 && (size_t)n < sizeof(msg); i++)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s%s", i ? ", " : "",
			      type_name(given[i]));
	if (n > 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ") does not exist");
	pgx_error(s, "42883", msg,
		  "No function matches the given name and argument types. You might need to add "
		  "explicit type casts.");
	return false;
}
