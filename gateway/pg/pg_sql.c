/*
 * pg_sql: the statement recogniser (see pg_sql.h): a lexer over the text
 * in place and one small grammar per statement kind. Anything it does not
 * recognise whole is SQL_UNSUPPORTED.
 */
#include "gateway/pg/pg_sql.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gateway/pg/pg_fn.h"
#include "protocols/pg/pg.h"

enum tok_type { T_END, T_IDENT, T_NUM, T_STR, T_PARAM, T_PUNCT, T_CAST };

struct tok {
	enum tok_type t;
	char *p;
	size_t len;
	bool quoted;
};

struct lex {
	char *s;
	size_t pos, end;
};

/* Skips blanks and comments. */
static void skip_blank(struct lex *x)
{
	while (x->pos < x->end) {
		char c = x->s[x->pos];
		if (isspace((unsigned char)c)) {
			x->pos++;
		} else if (c == '-' && x->pos + 1 < x->end && x->s[x->pos + 1] == '-') {
			while (x->pos < x->end && x->s[x->pos] != '\n')
				x->pos++;
		} else if (c == '/' && x->pos + 1 < x->end && x->s[x->pos + 1] == '*') {
			x->pos += 2;
			while (x->pos + 1 < x->end &&
			       !(x->s[x->pos] == '*' && x->s[x->pos + 1] == '/'))
				x->pos++;
			x->pos = x->pos + 2 <= x->end ? x->pos + 2 : x->end;
		} else {
			break;
		}
	}
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* The next token; ';' ends a statement (returned as T_PUNCT). */
static struct tok next(struct lex *x)
{
	struct tok t = {T_END, NULL, 0, false};
	skip_blank(x);
	if (x->pos >= x->end)
		return t;
	char *p = x->s + x->pos;
	char c = *p;
	t.p = p;
	if (isalpha((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80) {
		size_t n = 0;
		while (x->pos + n < x->end && (ident_char(p[n]) || (unsigned char)p[n] >= 0x80 ||
					       (p[n] == '.' && x->pos + n + 1 < x->end &&
						isalpha((unsigned char)p[n + 1]))))
			n++;
		t.t = T_IDENT;
		t.len = n;
		x->pos += n;
	} else if (c == '"') {
		size_t n = 1;
		while (x->pos + n < x->end && p[n] != '"')
			n++;
		t.t = T_IDENT;
		t.quoted = true;
		t.p = p + 1;
		t.len = n - 1;
		x->pos += n < x->end - x->pos ? n + 1 : n;
	} else if (isdigit((unsigned char)c)) {
		size_t n = 0;
		while (x->pos + n < x->end && (isalnum((unsigned char)p[n]) || p[n] == '.'))
			n++;
		t.t = T_NUM;
		t.len = n;
		x->pos += n;
	} else if (c == '\'') {
		/* the content, '' still doubled: unescape() once it is kept (a
		 * token may be lexed twice, after a look-ahead) */
		size_t i = x->pos + 1;
		bool closed = false;
		while (i < x->end) {
			if (x->s[i] == '\'') {
				if (i + 1 < x->end && x->s[i + 1] == '\'') {
					i += 2;
					continue;
				}
				closed = true;
				break;
			}
			i++;
		}
		t.t = closed ? T_STR : T_PUNCT; /* unterminated: unsupported */
		t.p = p + 1;
		t.len = i - (x->pos + 1);
		x->pos = closed ? i + 1 : i;
	} else if (c == '$' && x->pos + 1 < x->end && isdigit((unsigned char)p[1])) {
		size_t n = 1;
		while (x->pos + n < x->end && isdigit((unsigned char)p[n]))
			n++;
		t.t = T_PARAM;
		t.len = n;
		x->pos += n;
	} else if (c == ':' && x->pos + 1 < x->end && p[1] == ':') {
		t.t = T_CAST;
		t.len = 2;
		x->pos += 2;
	} else {
		t.t = T_PUNCT;
		t.len = 1;
		x->pos++;
	}
	return t;
}

/* A string token's '' made ', in place; its new length. */
static size_t unescape(struct tok *t)
{
	size_t w = 0;
	for (size_t i = 0; i < t->len; i++, w++) {
		t->p[w] = t->p[i];
		if (t->p[i] == '\'' && i + 1 < t->len && t->p[i + 1] == '\'')
			i++;
	}
	return t->len = w;
}

static bool is_word(const struct tok *t, const char *w)
{
	return t->t == T_IDENT && !t->quoted && strlen(w) == t->len &&
	       strncasecmp(t->p, w, t->len) == 0;
}

static bool is_punct(const struct tok *t, char c)
{
	return t->t == T_PUNCT && t->p[0] == c;
}

/* End of statement: the end of the text or ';'. */
static bool at_end(const struct tok *t)
{
	return t->t == T_END || is_punct(t, ';');
}

static bool next_word(struct lex *x, const char *w)
{
	struct tok t = next(x);
	return is_word(&t, w);
}

static bool next_end(struct lex *x)
{
	struct tok t = next(x);
	return at_end(&t);
}

static bool next_punct(struct lex *x, char c)
{
	struct tok t = next(x);
	return is_punct(&t, c);
}

static void copy_lower(char *dst, size_t cap, const struct tok *t)
{
	size_t n = t->len < cap - 1 ? t->len : cap - 1;
	for (size_t i = 0; i < n; i++)
		dst[i] = t->quoted ? t->p[i] : (char)tolower((unsigned char)t->p[i]);
	dst[n] = '\0';
}

static bool parse_i64(const char *p, size_t len, bool neg, int64_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 19)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)p[i]))
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static const struct {
	const char *name;
	uint32_t oid;
} types[] = {
	{"bigint", PG_OID_INT8},
	{"int8", PG_OID_INT8},
	{"int", PG_OID_INT4},
	{"integer", PG_OID_INT4},
	{"int4", PG_OID_INT4},
	{"smallint", PG_OID_INT2},
	{"int2", PG_OID_INT2},
	{"text", PG_OID_TEXT},
	{"varchar", PG_OID_TEXT},
	{"json", PG_OID_TEXT}, /* leasegate.transact's items: text to leasegate */
	{"jsonb", PG_OID_TEXT},
	{"bool", PG_OID_BOOL},
	{"boolean", PG_OID_BOOL},
	{"pg_catalog.int8", PG_OID_INT8},
	{"pg_catalog.int4", PG_OID_INT4},
	{"pg_catalog.text", PG_OID_TEXT},
};

static uint32_t type_oid(const struct tok *t)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (is_word(t, types[i].name))
			return types[i].oid;
	return 0;
}

/* One argument: [-]number, 'string', NULL, true/false or $n, with an
 * optional ::type. */
static bool parse_arg(struct lex *x, struct sql_stmt *st, struct sql_arg *a)
{
	struct tok t = next(x);
	bool neg = false;
	memset(a, 0, sizeof(*a));
	if (is_punct(&t, '-')) {
		neg = true;
		t = next(x);
	}
	if (t.t == T_NUM) {
		a->t = ARG_INT;
		if (!parse_i64(t.p, t.len, neg, &a->i))
			return false;
	} else if (neg) {
		return false;
	} else if (t.t == T_STR) {
		a->t = ARG_STR;
		a->s = t.p;
		a->len = unescape(&t);
	} else if (t.t == T_PARAM) {
		int64_t n;
		if (!parse_i64(t.p + 1, t.len - 1, false, &n) || n < 1 || n > 65535)
			return false;
		a->t = ARG_PARAM;
		a->param = (int)n;
		if (a->param > st->nparams)
			st->nparams = a->param;
	} else if (is_word(&t, "null")) {
		a->t = ARG_NULL;
	} else if (is_word(&t, "true") || is_word(&t, "false")) {
		a->t = ARG_BOOL;
		a->i = is_word(&t, "true");
	} else {
		return false;
	}
	size_t save = x->pos;
	t = next(x);
	if (t.t == T_CAST) {
		t = next(x);
		if ((a->cast = type_oid(&t)) == 0)
			return false;
	} else {
		x->pos = save;
	}
	return true;
}

/* fn(args...) after the name. */
static bool parse_call(struct lex *x, struct sql_stmt *st)
{
	struct tok t = next(x);
	if (!is_punct(&t, '('))
		return false;
	skip_blank(x);
	if (x->pos < x->end && x->s[x->pos] == ')') {
		x->pos++;
		return true;
	}
	for (;;) {
		if (st->nargs == SQL_MAX_ARGS || !parse_arg(x, st, &st->args[st->nargs]))
			return false;
		st->nargs++;
		t = next(x);
		if (is_punct(&t, ')'))
			return true;
		if (!is_punct(&t, ','))
			return false;
	}
}

static bool parse_select(struct lex *x, struct sql_stmt *st)
{
	struct tok t = next(x);
	bool from = false;
	if (is_punct(&t, '*')) {
		t = next(x);
		if (!is_word(&t, "from"))
			return false;
		from = true;
		t = next(x);
	}
	if (t.t == T_NUM && !from) {
		st->fn = &pg_fn_literal;
		st->args[0] = (struct sql_arg){.t = ARG_INT};
		if (!parse_i64(t.p, t.len, false, &st->args[0].i) || st->args[0].i > INT32_MAX)
			return false;
		st->nargs = 1;
	} else if (t.t == T_IDENT && !t.quoted) {
		copy_lower(st->fname, sizeof(st->fname), &t);
		if (!parse_call(x, st) || (st->fn = pg_fn_lookup(t.p, t.len, st->nargs)) == NULL)
			return false;
	} else {
		return false;
	}
	snprintf(st->alias, sizeof(st->alias), "%s", pg_fn_column(st->fn));
	t = next(x);
	if (is_punct(&t, ',')) {
		st->several = true;
		return false;
	}
	if (is_word(&t, "as"))
		t = next(x);
	if (t.t == T_IDENT && !is_word(&t, "from")) {
		copy_lower(st->alias, sizeof(st->alias), &t);
		t = next(x);
	}
	return at_end(&t);
}

/* --- a type loader's lookup in pg_type (CAT_PG_TYPE) --- */

static const char *const type_cols[TC_COUNT] = {
	[TC_OID] = "oid",	    [TC_TYPNAME] = "typname", [TC_TYPARRAY] = "typarray",
	[TC_TYPELEM] = "typelem",   [TC_TYPTYPE] = "typtype", [TC_TYPNAMESPACE] = "typnamespace",
	[TC_TYPDELIM] = "typdelim", [TC_NSPNAME] = "nspname",
};

/* The word of t after its last qualifier ("t.oid": "oid"); false when t
 * is no plain identifier. */
static bool unqualified(const struct tok *t, const char **p, size_t *n)
{
	if (t->t != T_IDENT || t->quoted)
		return false;
	*p = t->p;
	*n = t->len;
	for (size_t i = t->len; i > 0; i--)
		if (t->p[i - 1] == '.') {
			*p = t->p + i;
			*n = t->len - i;
			break;
		}
	return true;
}

/* Which pg_type column t names, -1 none. */
static int type_col(const struct tok *t)
{
	const char *p;
	size_t n;
	if (!unqualified(t, &p, &n))
		return -1;
	for (int c = 0; c < TC_COUNT; c++)
		if (strlen(type_cols[c]) == n && strncasecmp(p, type_cols[c], n) == 0)
			return c;
	return -1;
}

/* t names the catalogue table table (pg_catalog. optional). */
static bool is_table(const struct tok *t, const char *table)
{
	size_t n = strlen(table);
	if (t->t != T_IDENT || t->quoted)
		return false;
	if (t->len == n + 11 && strncasecmp(t->p, "pg_catalog.", 11) == 0)
		return strncasecmp(t->p + 11, table, n) == 0;
	return t->len == n && strncasecmp(t->p, table, n) == 0;
}

/* A word that may follow a table as its alias. */
static bool is_alias(const struct tok *t)
{
	static const char *const kw[] = {"where", "join", "inner", "left", "on", "order", "limit"};
	if (t->t != T_IDENT)
		return false;
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (is_word(t, kw[i]))
			return false;
	return true;
}

/* A select-list column c named def, after its expression: [AS] alias,
 * appended to st's columns (at most SQL_MAX_COLS names in
 * SQL_COLNAMES_MAX bytes); *t is left on the token after. */
static bool add_col(struct lex *x, struct sql_stmt *st, size_t *used, int c, const char *def,
		    struct tok *t)
{
	struct tok name = {T_IDENT, (char *)def, strlen(def), true};
	*t = next(x);
	if (is_word(t, "as"))
		*t = next(x);
	if (t->t == T_IDENT && !is_word(t, "from")) {
		name = *t;
		*t = next(x);
	}
	if (st->ncols == SQL_MAX_COLS || *used + name.len + 1 > sizeof(st->colnames))
		return false;
	copy_lower(st->colnames + *used, name.len + 1, &name);
	*used += name.len + 1;
	st->col[st->ncols++] = (unsigned char)c;
	return true;
}

/* The select list up to FROM: pg_type columns, each [AS] alias. */
static bool parse_type_cols(struct lex *x, struct sql_stmt *st)
{
	size_t used = 0;
	for (;;) {
		struct tok t = next(x);
		int c = type_col(&t);
		if (c < 0 || !add_col(x, st, &used, c, type_cols[c], &t))
			return false;
		if (is_word(&t, "from"))
			return true;
		if (!is_punct(&t, ','))
			return false;
	}
}

/* FROM pg_type [[AS] t] [[INNER] JOIN pg_namespace [[AS] n] ON ...] and
 * the WHERE after it: *t is left on WHERE. */
static bool parse_type_from(struct lex *x, struct tok *t)
{
	*t = next(x);
	if (!is_table(t, "pg_type"))
		return false;
	*t = next(x);
	if (is_word(t, "as"))
		*t = next(x);
	if (is_alias(t))
		*t = next(x);
	if (is_word(t, "inner"))
		*t = next(x);
	if (is_word(t, "join")) {
		*t = next(x);
		if (!is_table(t, "pg_namespace"))
			return false;
		*t = next(x);
		if (is_word(t, "as"))
			*t = next(x);
		if (is_alias(t))
			*t = next(x);
		if (!is_word(t, "on"))
			return false;
		while (!at_end(t) && !is_word(t, "where"))
			*t = next(x);
	}
	return is_word(t, "where");
}

/* SELECT <columns> FROM pg_type ... WHERE typname = 'name' | oid = <key>
 * [ORDER BY ...], after SELECT. */
static bool parse_type_lookup(struct lex *x, struct sql_stmt *st)
{
	struct tok t;
	if (!parse_type_cols(x, st) || !parse_type_from(x, &t))
		return false;
	t = next(x);
	int key = type_col(&t);
	if ((key != TC_OID && key != TC_TYPNAME) || !next_punct(x, '='))
		return false;
	if (!parse_arg(x, st, &st->args[0]) ||
	    (key == TC_TYPNAME ? st->args[0].t != ARG_STR
			       : st->args[0].t != ARG_INT && st->args[0].t != ARG_PARAM))
		return false;
	st->nargs = 1;
	st->by_name = key == TC_TYPNAME;
	t = next(x);
	if (is_word(&t, "order")) /* one row at most: its order is moot */
		while (!at_end(&t))
			t = next(x);
	return at_end(&t);
}

/* --- pg_database's oid and pg_locks (CAT_PG_DATABASE, CAT_PG_LOCKS) --- */

const struct sql_col_def sql_lock_cols[LK_COUNT + 1] = {
	[LK_LOCKTYPE] = {"locktype", PG_OID_TEXT, -1},
	[LK_DATABASE] = {"database", PG_OID_OID, 4},
	[LK_RELATION] = {"relation", PG_OID_OID, 4},
	[LK_PAGE] = {"page", PG_OID_INT4, 4},
	[LK_TUPLE] = {"tuple", PG_OID_INT2, 2},
	[LK_VIRTUALXID] = {"virtualxid", PG_OID_TEXT, -1},
	[LK_TRANSACTIONID] = {"transactionid", PG_OID_XID, 4},
	[LK_CLASSID] = {"classid", PG_OID_OID, 4},
	[LK_OBJID] = {"objid", PG_OID_OID, 4},
	[LK_OBJSUBID] = {"objsubid", PG_OID_INT2, 2},
	[LK_VIRTUALTRANSACTION] = {"virtualtransaction", PG_OID_TEXT, -1},
	[LK_PID] = {"pid", PG_OID_INT4, 4},
	[LK_MODE] = {"mode", PG_OID_TEXT, -1},
	[LK_GRANTED] = {"granted", PG_OID_BOOL, 1},
	[LK_FASTPATH] = {"fastpath", PG_OID_BOOL, 1},
	[LK_WAITSTART] = {"waitstart", PG_OID_TIMESTAMPTZ, 8},
	[LK_COUNT] = {"count", PG_OID_INT8, 8},
};

/* t is the word w, qualified or not ("d.datname"). */
static bool is_column(const struct tok *t, const char *w)
{
	const char *p;
	size_t n;
	return unqualified(t, &p, &n) && n == strlen(w) && strncasecmp(p, w, n) == 0;
}

/* Which pg_locks column t names ("l.pid" too), -1 none. */
static int lock_col(const struct tok *t)
{
	for (int c = 0; c < LK_COUNT; c++)
		if (is_column(t, sql_lock_cols[c].name))
			return c;
	return -1;
}

/* FROM's table (pg_catalog. optional) and its optional [AS] alias, after
 * FROM: *t is left on the token after. */
static bool parse_from(struct lex *x, const char *table, struct tok *t)
{
	*t = next(x);
	if (!is_table(t, table))
		return false;
	*t = next(x);
	if (is_word(t, "as"))
		*t = next(x);
	if (is_alias(t))
		*t = next(x);
	return true;
}

/* SELECT oid [[AS] alias] FROM pg_database [[AS] d] WHERE datname =
 * current_database() | 'name' | $n, after SELECT. */
static bool parse_database_lookup(struct lex *x, struct sql_stmt *st)
{
	struct tok t = next(x);
	size_t used = 0;
	if (!is_column(&t, "oid") || !add_col(x, st, &used, 0, "oid", &t) || !is_word(&t, "from") ||
	    !parse_from(x, "pg_database", &t) || !is_word(&t, "where"))
		return false;
	t = next(x);
	if (!is_column(&t, "datname") || !next_punct(x, '='))
		return false;
	size_t save = x->pos;
	t = next(x);
	if (is_word(&t, "current_database") || is_word(&t, "pg_catalog.current_database")) {
		if (!next_punct(x, '(') || !next_punct(x, ')'))
			return false;
	} else {
		x->pos = save;
		if (!parse_arg(x, st, &st->args[0]) ||
		    (st->args[0].t != ARG_STR && st->args[0].t != ARG_PARAM))
			return false;
		st->nargs = 1;
		st->by_name = true;
	}
	return next_end(x);
}

/* pg_locks's select list up to FROM: *, count(*) or columns, each [AS]
 * alias. */
static bool parse_lock_cols(struct lex *x, struct sql_stmt *st)
{
	size_t used = 0;
	struct tok t = next(x);
	if (is_punct(&t, '*')) {
		for (int c = 0; c < LK_COUNT; c++) {
			size_t n = strlen(sql_lock_cols[c].name) + 1;
			memcpy(st->colnames + used, sql_lock_cols[c].name, n);
			used += n;
			st->col[st->ncols++] = (unsigned char)c;
		}
		return next_word(x, "from");
	}
	if (is_word(&t, "count")) { /* count(*), alone */
		return next_punct(x, '(') && next_punct(x, '*') && next_punct(x, ')') &&
		       add_col(x, st, &used, LK_COUNT, "count", &t) && is_word(&t, "from");
	}
	for (;;) {
		int c = lock_col(&t);
		if (c < 0 || !add_col(x, st, &used, c, sql_lock_cols[c].name, &t))
			return false;
		if (is_word(&t, "from"))
			return true;
		if (!is_punct(&t, ','))
			return false;
		t = next(x);
	}
}

/* WHERE's predicates, ANDed: col = | <> | != literal or $n (not on
 * waitstart); *t is left on the token after. */
static bool parse_lock_where(struct lex *x, struct sql_stmt *st, struct tok *t)
{
	do {
		*t = next(x);
		int c = lock_col(t);
		if (c < 0 || c == LK_WAITSTART || st->npreds == SQL_MAX_PREDS)
			return false;
		struct sql_pred *p = &st->preds[st->npreds++];
		p->col = (unsigned char)c;
		*t = next(x);
		p->ne = is_punct(t, '<') || is_punct(t, '!');
		if (p->ne ? !next_punct(x, is_punct(t, '<') ? '>' : '=') : !is_punct(t, '='))
			return false;
		if (!parse_arg(x, st, &p->arg))
			return false;
		*t = next(x);
	} while (is_word(t, "and"));
	return true;
}

/* ORDER BY's keys: a pg_locks column or a select-list position, ASC or
 * DESC; *t is left on the token after. */
static bool parse_lock_order(struct lex *x, struct sql_stmt *st, struct tok *t)
{
	if (!next_word(x, "by") || (st->ncols == 1 && st->col[0] == LK_COUNT))
		return false;
	do {
		*t = next(x);
		int64_t n;
		int c = lock_col(t);
		if (c < 0 && t->t == T_NUM && parse_i64(t->p, t->len, false, &n) && n >= 1 &&
		    n <= st->ncols)
			c = st->col[n - 1];
		if (c < 0 || st->norder == SQL_MAX_ORDER)
			return false;
		struct sql_order *o = &st->order[st->norder++];
		o->col = (unsigned char)c;
		*t = next(x);
		o->desc = is_word(t, "desc");
		if (o->desc || is_word(t, "asc"))
			*t = next(x);
	} while (is_punct(t, ','));
	return true;
}

/* SELECT ... FROM pg_locks [WHERE ...] [ORDER BY ...] [LIMIT n | ALL],
 * after SELECT. */
static bool parse_locks_query(struct lex *x, struct sql_stmt *st)
{
	struct tok t;
	if (!parse_lock_cols(x, st) || !parse_from(x, "pg_locks", &t))
		return false;
	if (is_word(&t, "where") && !parse_lock_where(x, st, &t))
		return false;
	if (is_word(&t, "order") && !parse_lock_order(x, st, &t))
		return false;
	if (is_word(&t, "limit")) {
		t = next(x);
		if (!is_word(&t, "all") &&
		    (t.t != T_NUM || !parse_i64(t.p, t.len, false, &st->limit)))
			return false;
		t = next(x);
	}
	return at_end(&t);
}

/* A catalogue query recognised as a statement (after SELECT, at save):
 * its kind in st->catalog, or false. */
static bool parse_catalog(struct lex *x, struct sql_stmt *st, size_t save)
{
	static const struct {
		int catalog;
		bool (*parse)(struct lex *x, struct sql_stmt *st);
	} grammars[] = {
		{CAT_PG_TYPE, parse_type_lookup},
		{CAT_PG_DATABASE, parse_database_lookup},
		{CAT_PG_LOCKS, parse_locks_query},
	};
	for (size_t i = 0; i < sizeof(grammars) / sizeof(grammars[0]); i++) {
		x->pos = save;
		st->nargs = st->ncols = st->npreds = st->norder = 0;
		st->nparams = 0;
		st->fn = NULL;
		st->by_name = false;
		st->limit = -1;
		if (grammars[i].parse(x, st)) {
			st->catalog = grammars[i].catalog;
			return true;
		}
	}
	return false;
}

/* The rest of the statement as written (trimmed); a single literal gives
 * its content. */
static void rest_value(struct lex *x, struct sql_stmt *st)
{
	skip_blank(x);
	size_t start = x->pos;
	struct tok t = next(x);
	if (t.t == T_STR) {
		size_t save = x->pos;
		struct tok e = next(x);
		if (at_end(&e)) {
			st->value = t.p;
			st->value_len = unescape(&t);
			return;
		}
		x->pos = save;
	}
	size_t end = x->pos;
	while (!at_end(&t)) {
		end = x->pos;
		t = next(x);
	}
	st->value = x->s + start;
	st->value_len = end > start ? end - start : 0;
}

static bool parse_set(struct lex *x, struct sql_stmt *st)
{
	struct tok t = next(x);
	bool session = is_word(&t, "session");
	if (session || is_word(&t, "local")) {
		st->local = is_word(&t, "local");
		size_t save = x->pos;
		t = next(x);
		if (is_word(&t, "authorization"))
			return false;
		(void)save;
	}
	/* SET TRANSACTION ... and SET SESSION CHARACTERISTICS AS TRANSACTION
	 * ...: no-ops, leasegate has one isolation and no writes to protect */
	if (session && is_word(&t, "characteristics")) {
		if (!next_word(x, "as"))
			return false;
		t = next(x);
		if (!is_word(&t, "transaction"))
			return false;
	}
	if (is_word(&t, "transaction")) {
		while (!at_end(&t))
			t = next(x);
		st->name[0] = '\0';
		return true;
	}
	if (is_word(&t, "time")) {
		t = next(x);
		if (!is_word(&t, "zone"))
			return false;
		snprintf(st->name, sizeof(st->name), "timezone");
	} else if (t.t == T_IDENT) {
		copy_lower(st->name, sizeof(st->name), &t);
		t = next(x);
		if (!is_word(&t, "to") && !is_punct(&t, '='))
			return false;
	} else {
		return false;
	}
	rest_value(x, st);
	return true;
}

/* SHOW / RESET name: a name (or a few words, as TRANSACTION ISOLATION LEVEL). */
static bool parse_name(struct lex *x, struct sql_stmt *st)
{
	struct tok t = next(x);
	if (t.t == T_PUNCT && is_punct(&t, '*'))
		return false;
	if (is_word(&t, "transaction")) {
		t = next(x);
		if (!is_word(&t, "isolation") || !next_word(x, "level"))
			return false;
		snprintf(st->name, sizeof(st->name), "transaction_isolation");
	} else if (is_word(&t, "time")) {
		if (!next_word(x, "zone"))
			return false;
		snprintf(st->name, sizeof(st->name), "timezone");
	} else if (t.t == T_IDENT) {
		copy_lower(st->name, sizeof(st->name), &t);
	} else {
		return false;
	}
	return next_end(x);
}

/* The rest of a statement whose words do not matter (BEGIN ISOLATION
 * LEVEL ..., COMMIT WORK). */
static bool skip_rest(struct lex *x)
{
	struct tok t = next(x);
	while (!at_end(&t)) {
		if (t.t == T_END)
			break;
		t = next(x);
	}
	return true;
}

static enum sql_kind recognise(struct lex *x, struct sql_stmt *st)
{
	struct tok t = next(x);
	struct tok u;
	if (at_end(&t))
		return SQL_EMPTY;
	if (is_word(&t, "select")) {
		size_t save = x->pos;
		if (parse_select(x, st))
			return SQL_SELECT;
		if (st->several)
			return SQL_UNSUPPORTED;
		return parse_catalog(x, st, save) ? SQL_CATALOG : SQL_UNSUPPORTED;
	}
	if (is_word(&t, "begin"))
		return skip_rest(x), SQL_BEGIN;
	if (is_word(&t, "start"))
		return next_word(x, "transaction") && skip_rest(x) ? SQL_BEGIN : SQL_UNSUPPORTED;
	if (is_word(&t, "commit") || is_word(&t, "end")) {
		u = next(x);
		if (is_word(&u, "prepared"))
			return SQL_UNSUPPORTED;
		while (!at_end(&u)) {
			if (is_word(&u, "chain") || u.t == T_END)
				return SQL_UNSUPPORTED;
			u = next(x);
		}
		return SQL_COMMIT;
	}
	if (is_word(&t, "rollback") || is_word(&t, "abort")) {
		u = next(x);
		while (!at_end(&u)) {
			if (is_word(&u, "to") || is_word(&u, "prepared") || is_word(&u, "chain"))
				return SQL_UNSUPPORTED;
			u = next(x);
		}
		return SQL_ROLLBACK;
	}
	if (is_word(&t, "set"))
		return parse_set(x, st) ? SQL_SET : SQL_UNSUPPORTED;
	if (is_word(&t, "reset")) {
		size_t save = x->pos;
		if (next_word(x, "all") && next_end(x))
			return SQL_RESET_ALL;
		x->pos = save;
		return parse_name(x, st) ? SQL_RESET : SQL_UNSUPPORTED;
	}
	if (is_word(&t, "show"))
		return parse_name(x, st) ? SQL_SHOW : SQL_UNSUPPORTED;
	if (is_word(&t, "discard"))
		return next_word(x, "all") && next_end(x) ? SQL_DISCARD_ALL : SQL_UNSUPPORTED;
	if (is_word(&t, "close"))
		return next_word(x, "all") && next_end(x) ? SQL_CLOSE_ALL : SQL_UNSUPPORTED;
	if (is_word(&t, "unlisten"))
		return next_punct(x, '*') && next_end(x) ? SQL_UNLISTEN : SQL_UNSUPPORTED;
	if (is_word(&t, "deallocate")) {
		u = next(x);
		if (is_word(&u, "prepare"))
			u = next(x);
		if (is_word(&u, "all"))
			st->name[0] = '\0';
		else if (u.t == T_IDENT)
			copy_lower(st->name, sizeof(st->name), &u);
		else
			return SQL_UNSUPPORTED;
		return next_end(x) ? SQL_DEALLOCATE : SQL_UNSUPPORTED;
	}
	return SQL_UNSUPPORTED;
}

/* Each catalogue query as its driver sends it, blanks collapsed: its
 * start and its end (what lies between is the driver's fixed text). */
static const struct {
	const char *start, *end;
} catalog_text[CAT_COUNT] = {
	[CAT_JDBC_TYPE_BY_OID] =
		{"SELECT n.nspname = ANY(current_schemas(true)), n.nspname, "
		 "t.typname FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace "
		 "n ON t.typnamespace = n.oid WHERE t.oid = $1",
		 ""},
	[CAT_JDBC_SQLTYPE_BY_OID] =
		{"SELECT typinput='pg_catalog.array_in'::regproc as is_array, "
		 "typtype, typname, pg_type.oid FROM pg_catalog.pg_type LEFT "
		 "JOIN (select ns.oid as nspoid, ns.nspname, r.r from "
		 "pg_namespace as ns join ( select s.r, "
		 "(current_schemas(false))[s.r] as nspname from "
		 "generate_series(1, array_upper(current_schemas(false), 1)) as "
		 "s(r) ) as r",
		 "WHERE pg_type.oid = $1 ORDER BY sp.r, pg_type.oid DESC"},
};

static bool find_catalog(struct sql_stmt *st)
{
	char norm[2048];
	size_t n = 0;
	bool blank = false;
	if (st->text_len >= sizeof(norm))
		return false;
	for (size_t i = 0; i < st->text_len; i++) {
		if (isspace((unsigned char)st->text[i])) {
			blank = n > 0;
			continue;
		}
		if (blank)
			norm[n++] = ' ';
		blank = false;
		norm[n++] = st->text[i];
	}
	norm[n] = '\0';
	for (int c = 0; c < CAT_COUNT; c++) {
		if (catalog_text[c].start == NULL) /* recognised as a statement */
			continue;
		size_t a = strlen(catalog_text[c].start), b = strlen(catalog_text[c].end);
		if (n < a + b || strncmp(norm, catalog_text[c].start, a) != 0 ||
		    strcmp(norm + n - b, catalog_text[c].end) != 0 || (b == 0 && n != a))
			continue;
		st->kind = SQL_CATALOG;
		st->catalog = c;
		st->nargs = 1;
		st->args[0] = (struct sql_arg){.t = ARG_PARAM, .param = 1};
		st->nparams = 1;
		return true;
	}
	return false;
}

/* The end of the statement at pos: its ';' at the top level, or the end. */
static size_t stmt_end(const char *s, size_t pos, size_t len)
{
	while (pos < len) {
		char c = s[pos];
		if (c == ';')
			return pos;
		if (c == '\'' || c == '"') {
			pos++;
			while (pos < len && s[pos] != c)
				pos++;
			pos++;
		} else if (c == '-' && pos + 1 < len && s[pos + 1] == '-') {
			while (pos < len && s[pos] != '\n')
				pos++;
		} else if (c == '/' && pos + 1 < len && s[pos + 1] == '*') {
			pos += 2;
			while (pos + 1 < len && !(s[pos] == '*' && s[pos + 1] == '/'))
				pos++;
			pos += 2;
		} else {
			pos++;
		}
	}
	return len;
}

unsigned sql_count(const char *text, size_t len, unsigned limit)
{
	unsigned n = 0;
	for (size_t pos = 0; pos < len && n <= limit; n++)
		pos = stmt_end(text, pos, len) + 1;
	return n;
}

bool sql_next(char *text, size_t len, size_t *pos, struct sql_stmt *out)
{
	struct lex x = {text, *pos, len};
	skip_blank(&x);
	if (x.pos >= len) {
		*pos = len;
		return false;
	}
	size_t end = stmt_end(text, x.pos, len);
	if (end > len)
		end = len;
	memset(out, 0, offsetof(struct sql_stmt, args));
	out->nparams = 0;
	out->alias[0] = out->fname[0] = out->name[0] = '\0';
	out->value = NULL;
	out->value_len = 0;
	out->local = false;
	out->several = false;
	out->ncols = 0;
	out->by_name = false;
	out->npreds = out->norder = 0;
	out->limit = -1;
	out->text = text + x.pos;
	out->text_len = end - x.pos;
	while (out->text_len > 0 && isspace((unsigned char)out->text[out->text_len - 1]))
		out->text_len--;
	x.end = end;
	out->kind = recognise(&x, out);
	if (out->kind == SQL_UNSUPPORTED)
		find_catalog(out);
	*pos = end < len ? end + 1 : len;
	return true;
}
