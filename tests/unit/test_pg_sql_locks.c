/*
 * gateway/pg/pg_sql: what the recogniser makes of pg_locks and
 * pg_database's oid (CAT_PG_LOCKS, CAT_PG_DATABASE) — as PostgreSQL's
 * regression test and users write them: columns and aliases, *, count(*),
 * WHERE's predicates, ORDER BY, LIMIT, $n — and the shapes it refuses
 * (joins, OR, functions, expressions, too many of anything), data-driven.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/pg/pg_sql.h"
#include "protocols/pg/pg.h"

/* sql recognised; *st filled. */
static void recognise(const char *sql, struct sql_stmt *st, char **text)
{
	size_t pos = 0;
	*text = strdup(sql);
	assert_non_null(*text);
	assert_true(sql_next(*text, strlen(*text), &pos, st));
}

struct db_row {
	const char *sql;
	bool by_name;
	enum sql_arg_type key; /* by name: ARG_STR or ARG_PARAM */
	const char *colname;
};

static const struct db_row db_rows[] = {
	{"SELECT oid FROM pg_database WHERE datname = current_database()", false, 0, "oid"},
	{"SELECT oid AS datoid FROM pg_database WHERE datname = current_database() ", false, 0,
	 "datoid"},
	{"select d.oid from pg_catalog.pg_database d where d.datname = "
	 "pg_catalog.current_database();",
	 false, 0, "oid"},
	{"SELECT oid FROM pg_database AS d WHERE datname = 'locks'", true, ARG_STR, "oid"},
	{"SELECT oid \"Db\" FROM pg_database WHERE datname = $1", true, ARG_PARAM, "Db"},
};

static void database_oid(void **state)
{
	for (size_t i = 0; i < sizeof(db_rows) / sizeof(db_rows[0]); i++) {
		const struct db_row *r = &db_rows[i];
		struct sql_stmt st;
		char *text;
		recognise(r->sql, &st, &text);
		if (st.kind != SQL_CATALOG || st.catalog != CAT_PG_DATABASE)
			fail_msg("%s: kind %d, not a pg_database lookup", r->sql, st.kind);
		assert_int_equal(st.by_name, r->by_name);
		assert_int_equal(st.nargs, r->by_name ? 1 : 0);
		if (r->by_name)
			assert_int_equal(st.args[0].t, r->key);
		assert_int_equal(st.ncols, 1);
		assert_string_equal(st.colnames, r->colname);
		free(text);
	}
}

static void regression_queries(void **state)
{
	struct sql_stmt st;
	char *text;
	/* psql's :datoid substituted */
	recognise("SELECT locktype, classid, objid, objsubid, mode, granted\n"
		  "\tFROM pg_locks WHERE locktype = 'advisory' AND database = 16384\n"
		  "\tORDER BY classid, objid, objsubid;",
		  &st, &text);
	assert_int_equal(st.kind, SQL_CATALOG);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	static const unsigned char cols[] = {LK_LOCKTYPE, LK_CLASSID, LK_OBJID,
					     LK_OBJSUBID, LK_MODE,    LK_GRANTED};
	assert_int_equal(st.ncols, 6);
	const char *name = st.colnames;
	for (unsigned c = 0; c < 6; c++, name += strlen(name) + 1) {
		assert_int_equal(st.col[c], cols[c]);
		assert_string_equal(name, sql_lock_cols[cols[c]].name);
	}
	assert_int_equal(st.npreds, 2);
	assert_int_equal(st.preds[0].col, LK_LOCKTYPE);
	assert_false(st.preds[0].ne);
	assert_int_equal(st.preds[0].arg.t, ARG_STR);
	assert_memory_equal(st.preds[0].arg.s, "advisory", 8);
	assert_int_equal(st.preds[1].col, LK_DATABASE);
	assert_int_equal(st.preds[1].arg.t, ARG_INT);
	assert_int_equal(st.preds[1].arg.i, 16384);
	assert_int_equal(st.norder, 3);
	assert_int_equal(st.order[0].col, LK_CLASSID);
	assert_int_equal(st.order[2].col, LK_OBJSUBID);
	assert_false(st.order[0].desc);
	assert_int_equal(st.limit, -1);
	free(text);

	recognise("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = 16384",
		  &st, &text);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	assert_int_equal(st.ncols, 1);
	assert_int_equal(st.col[0], LK_COUNT);
	assert_string_equal(st.colnames, "count");
	assert_int_equal(st.npreds, 2);
	free(text);
}

static void shapes(void **state)
{
	struct sql_stmt st;
	char *text;
	recognise("SELECT * FROM pg_catalog.pg_locks", &st, &text);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	assert_int_equal(st.ncols, LK_COUNT);
	const char *name = st.colnames;
	for (unsigned c = 0; c < LK_COUNT; c++, name += strlen(name) + 1)
		assert_string_equal(name, sql_lock_cols[c].name);
	assert_string_equal(sql_lock_cols[LK_WAITSTART].name, "waitstart");
	assert_int_equal(sql_lock_cols[LK_WAITSTART].oid, PG_OID_TIMESTAMPTZ);
	assert_int_equal(sql_lock_cols[LK_OBJSUBID].oid, PG_OID_INT2);
	free(text);

	/* aliases, qualified columns, <> and !=, $n, DESC, a position, LIMIT */
	recognise("select l.pid AS p, l.mode m from pg_locks as l where l.granted <> false and "
		  "pid != $2 and mode = $1 order by 2 desc, l.objid asc limit 3",
		  &st, &text);
	assert_int_equal(st.kind, SQL_CATALOG);
	assert_int_equal(st.ncols, 2);
	assert_int_equal(st.col[0], LK_PID);
	assert_string_equal(st.colnames, "p");
	assert_string_equal(st.colnames + 2, "m");
	assert_int_equal(st.npreds, 3);
	assert_true(st.preds[0].ne);
	assert_int_equal(st.preds[0].arg.t, ARG_BOOL);
	assert_true(st.preds[1].ne);
	assert_int_equal(st.preds[1].arg.t, ARG_PARAM);
	assert_int_equal(st.preds[1].arg.param, 2);
	assert_false(st.preds[2].ne);
	assert_int_equal(st.nparams, 2);
	assert_int_equal(st.norder, 2);
	assert_int_equal(st.order[0].col, LK_MODE);
	assert_true(st.order[0].desc);
	assert_int_equal(st.order[1].col, LK_OBJID);
	assert_false(st.order[1].desc);
	assert_int_equal(st.limit, 3);
	free(text);

	recognise("SELECT pid FROM pg_locks LIMIT ALL; SELECT 1", &st, &text);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	assert_int_equal(st.limit, -1);
	free(text);

	recognise("SELECT count(*) AS n FROM pg_locks l", &st, &text);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	assert_string_equal(st.colnames, "n");
	assert_int_equal(st.npreds, 0);
	free(text);
}

/* What stays 0A000: anything outside the shape, and past the bounds. */
static const char *const refused[] = {
	"SELECT * FROM pg_locks WHERE pid = pg_backend_pid()",
	"SELECT * FROM pg_locks WHERE granted OR pid = 1",
	"SELECT * FROM pg_locks WHERE granted",
	"SELECT * FROM pg_locks WHERE pid > 1",
	"SELECT * FROM pg_locks WHERE waitstart = '2024-01-01'",
	"SELECT * FROM pg_locks WHERE pid IS NULL",
	"SELECT * FROM pg_locks WHERE 1 = pid",
	"SELECT * FROM pg_locks l JOIN pg_database d ON l.database = d.oid",
	"SELECT * FROM pg_locks, pg_database",
	"SELECT pid, count(*) FROM pg_locks",
	"SELECT count(*), pid FROM pg_locks",
	"SELECT count(pid) FROM pg_locks",
	"SELECT count(*) FROM pg_locks ORDER BY pid",
	"SELECT relname FROM pg_locks",
	"SELECT pid + 1 FROM pg_locks",
	"SELECT l.* FROM pg_locks l",
	"SELECT * FROM pg_locks ORDER BY 17",
	"SELECT pid FROM pg_locks ORDER BY 2",
	"SELECT * FROM pg_locks ORDER BY pid NULLS FIRST",
	"SELECT * FROM pg_locks LIMIT -1",
	"SELECT * FROM pg_locks LIMIT 1 OFFSET 2",
	"SELECT * FROM pg_locks GROUP BY pid",
	"SELECT * FROM pg_locks WHERE pid = 1 AND",
	"SELECT * FROM pg_locks WHERE pid == 1",
	"SELECT * FROM pg_locks WHERE pid = (SELECT 1)",
	"SELECT * FROM pg_locks FOR UPDATE",
	"SELECT * FROM pg_stat_activity",
	/* nine predicates, nine ORDER BY keys, seventeen columns */
	"SELECT * FROM pg_locks WHERE pid = 1 AND pid = 1 AND pid = 1 AND pid = 1 AND pid = 1 "
	"AND pid = 1 AND pid = 1 AND pid = 1 AND pid = 1",
	"SELECT * FROM pg_locks ORDER BY pid, pid, pid, pid, pid, pid, pid, pid, pid",
	"SELECT pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, "
	"pid FROM pg_locks",
	"SELECT oid FROM pg_database",
	"SELECT oid FROM pg_database WHERE datname = current_user",
	"SELECT oid FROM pg_database WHERE datname = 1",
	"SELECT oid FROM pg_database WHERE datname <> 'x'",
	"SELECT oid, datname FROM pg_database WHERE datname = 'x'",
	"SELECT datname FROM pg_database WHERE datname = 'x'",
	"SELECT oid FROM pg_database WHERE datname = current_database() AND oid = 1",
};

static void refusals(void **state)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct sql_stmt st;
		char *text;
		recognise(refused[i], &st, &text);
		if (st.kind != SQL_UNSUPPORTED)
			fail_msg("%s: kind %d catalog %d, not refused", refused[i], st.kind,
				 st.catalog);
		free(text);
	}
}

/* The bounds themselves are taken: eight predicates, sixteen columns. */
static void bounds(void **state)
{
	struct sql_stmt st;
	char *text;
	recognise("SELECT * FROM pg_locks WHERE pid = 1 AND pid = 1 AND pid = 1 AND pid = 1 AND "
		  "pid = 1 AND pid = 1 AND pid = 1 AND pid = 1 ORDER BY pid, pid, pid, pid, pid, "
		  "pid, pid, pid",
		  &st, &text);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	assert_int_equal(st.npreds, SQL_MAX_PREDS);
	assert_int_equal(st.norder, SQL_MAX_ORDER);
	free(text);
	recognise("SELECT pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, pid, "
		  "pid, pid FROM pg_locks",
		  &st, &text);
	assert_int_equal(st.catalog, CAT_PG_LOCKS);
	assert_int_equal(st.ncols, SQL_MAX_COLS);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(database_oid), cmocka_unit_test(regression_queries),
		cmocka_unit_test(shapes),	cmocka_unit_test(refusals),
		cmocka_unit_test(bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
