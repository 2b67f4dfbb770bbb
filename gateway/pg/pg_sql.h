/*
 * pg_sql: the small, honest SQL recogniser of the PostgreSQL front-end. It
 * is not a parser of SQL: it recognises the statements leasegate answers
 * (the advisory lock functions, leasegate's own, transaction control,
 * SET/RESET/SHOW, what drivers and pools send on their own, pg_locks
 * and pg_database's oid: CAT_PG_LOCKS, CAT_PG_DATABASE) and says
 * "unsupported" for anything else, with the statement's text for the
 * error. A function call is recognised by the function table (pg_fn.h):
 * its name and argument count find its row.
 *
 * It works in place on a text the caller owns (string literals are
 * unescaped there), one statement at a time.
 */
#ifndef LG_PG_SQL_H
#define LG_PG_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sql_kind {
	SQL_EMPTY,
	SQL_SELECT, /* a function call or constant: .fn, .args */
	SQL_BEGIN,
	SQL_COMMIT,
	SQL_ROLLBACK,
	SQL_SET, /* .name = .value; .local */
	SQL_RESET,
	SQL_RESET_ALL,
	SQL_SHOW, /* .name ("all") */
	SQL_DISCARD_ALL,
	SQL_CLOSE_ALL,
	SQL_UNLISTEN,
	SQL_DEALLOCATE, /* .name, "" = ALL */
	SQL_CATALOG,	/* a catalogue query a driver sends on its own: .catalog */
	SQL_UNSUPPORTED,
};

/* The catalogue queries answered, each found by running its driver against
 * PostgreSQL 15 with log_statement=all. */
enum sql_catalog {
	/* pgjdbc's TypeInfoCache.getPGType(oid), e.g. for
	 * ResultSetMetaData.getColumnTypeName of a void column: one row
	 * (on the search path, schema, type name) for $1 */
	CAT_JDBC_TYPE_BY_OID,
	/* pgjdbc's TypeInfoCache.getSQLType(oid), for ResultSet.getObject:
	 * (is_array, typtype, typname, oid) for $1 */
	CAT_JDBC_SQLTYPE_BY_OID,
	/* a type loader's lookup, recognised as a statement (any spacing,
	 * case, qualifiers, aliases): SELECT <pg_type columns> FROM
	 * [pg_catalog.]pg_type [[AS] t] [JOIN pg_namespace ... ON ...] WHERE
	 * typname = 'name' (.by_name) | oid = <n or $n> [ORDER BY ...]; the
	 * columns in .col, their names in .colnames. psycopg2's hstore, Django's
	 * hstore and citext, asyncpg's codecs (json, jsonb) send these. */
	CAT_PG_TYPE,
	/* SELECT oid [[AS] alias] FROM [pg_catalog.]pg_database [[AS] d]
	 * WHERE datname = current_database() | 'name' | $n (.by_name: args[0]
	 * is the name), PostgreSQL's regression tests' way to the oid that
	 * pg_locks.database shows */
	CAT_PG_DATABASE,
	/* SELECT * | count(*) | <columns> FROM [pg_catalog.]pg_locks [[AS] l]
	 * [WHERE col = | <> | != literal-or-$n [AND ...]] [ORDER BY col-or-n
	 * [ASC | DESC], ...] [LIMIT n]: .col/.colnames (LK_COUNT: count(*)),
	 * .preds, .order, .limit */
	CAT_PG_LOCKS,
	CAT_COUNT
};

/* The columns of PostgreSQL 15's pg_locks, in its order. */
enum sql_lock_col {
	LK_LOCKTYPE,
	LK_DATABASE,
	LK_RELATION,
	LK_PAGE,
	LK_TUPLE,
	LK_VIRTUALXID,
	LK_TRANSACTIONID,
	LK_CLASSID,
	LK_OBJID,
	LK_OBJSUBID,
	LK_VIRTUALTRANSACTION,
	LK_PID,
	LK_MODE,
	LK_GRANTED,
	LK_FASTPATH,
	LK_WAITSTART,
	LK_COUNT /* as a result column: count(*) */
};

/* A column of a catalogue view: its name and PostgreSQL type. */
struct sql_col_def {
	const char *name;
	uint32_t oid;
	int16_t typlen;
};
/* pg_locks's columns (enum sql_lock_col), and count(*)'s at LK_COUNT. */
extern const struct sql_col_def sql_lock_cols[LK_COUNT + 1];

/* The columns of pg_type (and pg_namespace's nspname) a lookup may ask. */
enum sql_type_col {
	TC_OID,
	TC_TYPNAME,
	TC_TYPARRAY,
	TC_TYPELEM,
	TC_TYPTYPE,
	TC_TYPNAMESPACE,
	TC_TYPDELIM,
	TC_NSPNAME,
	TC_COUNT
};

enum sql_arg_type { ARG_NULL, ARG_INT, ARG_STR, ARG_PARAM, ARG_BOOL };

struct sql_arg {
	enum sql_arg_type t;
	int64_t i;     /* ARG_INT, ARG_BOOL */
	const char *s; /* ARG_STR: len bytes, unescaped */
	size_t len;
	int param;     /* ARG_PARAM: 1-based */
	uint32_t cast; /* type OID of a ::cast, 0 none */
};

#define SQL_MAX_ARGS	 4
#define SQL_ALIAS_MAX	 64
#define SQL_MAX_COLS	 16 /* pg_locks has 16 */
#define SQL_COLNAMES_MAX 256
#define SQL_MAX_PREDS	 8 /* a catalogue query's WHERE: predicates ANDed */
#define SQL_MAX_ORDER	 8 /* ... its ORDER BY keys */

/* col = arg, or col <> arg (ne) */
struct sql_pred {
	unsigned char col;
	bool ne;
	struct sql_arg arg;
};

struct sql_order {
	unsigned char col;
	bool desc;
};

struct pg_fn;

struct sql_stmt {
	enum sql_kind kind;
	const struct pg_fn *fn; /* SQL_SELECT: its row (pg_fn.h) */
	unsigned nargs;
	struct sql_arg args[SQL_MAX_ARGS];
	int nparams;		   /* highest $n used */
	char alias[SQL_ALIAS_MAX]; /* the result column's name */
	char fname[SQL_ALIAS_MAX]; /* as written, for errors */
	/* SET/SHOW/RESET/DEALLOCATE: name (lower case unless quoted) and
	 * value (a literal's content, or the words as written) */
	char name[SQL_ALIAS_MAX];
	const char *value;
	size_t value_len;
	bool local;
	int catalog; /* SQL_CATALOG: which (enum sql_catalog) */
	/* CAT_PG_TYPE: the columns asked (enum sql_type_col), their names
	 * (alias or column) one after the other, each NUL-terminated; the key
	 * (args[0]) a type name or an oid */
	unsigned ncols;
	unsigned char col[SQL_MAX_COLS];
	char colnames[SQL_COLNAMES_MAX];
	bool by_name;
	/* CAT_PG_LOCKS: the WHERE's predicates (ANDed), the ORDER BY's keys
	 * (columns of pg_locks), the LIMIT (-1: none) */
	unsigned npreds, norder;
	struct sql_pred preds[SQL_MAX_PREDS];
	struct sql_order order[SQL_MAX_ORDER];
	int64_t limit;
	bool several;	  /* SQL_UNSUPPORTED: a SELECT of several calls */
	const char *text; /* the statement as written, for errors */
	size_t text_len;
};

/* Recognises the statement at *pos in text[0..len) (string literals with
 * '' are unescaped in place),
 * and moves *pos past it and its ';'. Returns false at the end of the
 * text (nothing but blanks and comments left). */
bool sql_next(char *text, size_t len, size_t *pos, struct sql_stmt *out);

/* Statements in text (empty ones too), counting up to limit + 1 at most. */
unsigned sql_count(const char *text, size_t len, unsigned limit);

#endif
