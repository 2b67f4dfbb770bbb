/*
 * pg_fn: the PostgreSQL functions leasegate answers, declared once — one
 * row per function and argument list (pg_advisory_lock(bigint) and
 * pg_advisory_lock(int, int) are two rows), as the Redis command table
 * declares commands. Everything about a function derives from its row: the
 * recogniser finds it by name and argument count (pg_sql.c), the runner
 * checks its arity, reads its arguments in its types and types Parse's $n
 * from them, describes its result columns, checks its ACL categories and
 * lock name, and calls its handler (pg_exec.c); the ACL file takes its
 * name in +name/-name rules, and the reference page lists it
 * (pg_fn_doc.c).
 *
 * Not here: statements that are no function call (SET, SHOW, BEGIN...:
 * pg_sql.h), the handlers' shared helpers (pg_int.h).
 */
#ifndef LG_PG_FN_H
#define LG_PG_FN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/pg/pg_sql.h"
#include "protocols/pg/pg.h"

struct pgs;
struct pg_portal;
struct val;
struct ls_result;

/* The lock a call names, for the ACL check (pg_fn.lock_arg): 0 none (only
 * the categories are checked), N > 0 its N-th argument (text: the name
 * of leasegate.*(name, ...)), or the advisory key(s). */
enum { PGF_LOCK_KEYS = -1 /* pg:<database>:<k1>[:<k2>] */ };

enum pg_fn_flag {
	/* a NULL argument gives a NULL result and runs nothing (STRICT) */
	PGF_STRICT = 1u << 0,
	/* a lease of the session lost since its last call is this call's
	 * error (55000), instead of running it */
	PGF_REPORTS_LOSS = 1u << 1,
};

/* Runs the call with its arguments a (read in the row's types): writes
 * its result or error, or starts a lease operation answered through
 * pgx_answer. */
typedef void (*pg_fn_run)(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
			  const struct val *a);
/* The values of a lease operation's answer res (status LS_OK or LS_NONE;
 * timeout: what bounded a wait, 0 the call, 1 lock_timeout, 2
 * statement_timeout). false: it wrote an error instead. */
typedef bool (*pg_fn_fill)(struct pgs *s, int timeout, const struct ls_result *res, struct val *v);
/* Errors of the function's own, looked at before the common ones: true
 * when it wrote one. */
typedef bool (*pg_fn_error)(struct pgs *s, const struct ls_result *res);

#define PG_FN_MAX_COLS 7

struct pg_fn {
	const char *name; /* lower case, schema-qualified for leasegate.* */
	unsigned nargs;	  /* this row's arity */
	uint32_t arg_types[SQL_MAX_ARGS];
	const char *arg_names[SQL_MAX_ARGS]; /* for the reference page */
	/* result columns (a NULL name: the call's alias); 0: none */
	unsigned ncols;
	const struct pg_col *cols;
	uint32_t cats;	/* ACL categories (enum acl_cat); 0: not checked */
	int lock_arg;	/* the lock it names: an argument's index or PGF_LOCK_* */
	unsigned flags; /* enum pg_fn_flag */
	pg_fn_run run;
	pg_fn_fill fill;       /* lease operations only */
	pg_fn_error own_error; /* may be NULL */
	const char *summary;   /* one line for the reference page */
};

/* The rows, sorted by name (then arity), and their count. */
extern const struct pg_fn pg_fns[];
extern const size_t pg_fns_count;
/* SELECT <integer>: a row of its own, found by no name. */
extern const struct pg_fn pg_fn_literal;

/* The row of the function called name (len bytes, any case, an optional
 * pg_catalog. before it) with nargs arguments; when none has that arity,
 * a row of that name (the call is refused by arity when run); NULL when
 * no function has that name. A binary search: O(log rows). */
const struct pg_fn *pg_fn_lookup(const char *name, size_t len, unsigned nargs);

/* The name PostgreSQL gives fn's result column: its name without the
 * schema ("acquire"). */
const char *pg_fn_column(const struct pg_fn *fn);

#endif
