/*
 * gateway/pg/pg_sql: what the recogniser makes of statements — the
 * advisory functions and their arguments, leasegate's own, transaction
 * control, SET/SHOW/RESET, what pools send, several statements per text,
 * comments and quotes, and what it refuses (data-driven).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/pg/pg_fn.h"
#include "gateway/pg/pg_sql.h"
#include "protocols/pg/pg.h"

struct row {
	const char *sql;
	enum sql_kind kind;
	const char *fn; /* the function's name (pg_fn.h), NULL: none */
	unsigned nargs;
	const char *alias_or_name; /* SELECT: column name; SET/SHOW: name */
};

static const struct row rows[] = {
	{"SELECT pg_advisory_lock(42)", SQL_SELECT, "pg_advisory_lock", 1, "pg_advisory_lock"},
	{"select PG_TRY_ADVISORY_LOCK(-1)", SQL_SELECT, "pg_try_advisory_lock", 1,
	 "pg_try_advisory_lock"},
	{"SELECT pg_catalog.pg_advisory_unlock(1, 2) AS ok", SQL_SELECT, "pg_advisory_unlock", 2,
	 "ok"},
	{"SELECT pg_advisory_xact_lock($1)", SQL_SELECT, "pg_advisory_xact_lock", 1,
	 "pg_advisory_xact_lock"},
	{"SELECT pg_try_advisory_xact_lock($1::int, $2::int4) t", SQL_SELECT,
	 "pg_try_advisory_xact_lock", 2, "t"},
	{"SELECT pg_advisory_unlock_all()", SQL_SELECT, "pg_advisory_unlock_all", 0,
	 "pg_advisory_unlock_all"},
	{"SELECT pg_advisory_lock_shared(1)", SQL_SELECT, "pg_advisory_lock_shared", 1, "?column?"},
	{"SELECT leasegate.acquire('a''b', 30000)", SQL_SELECT, "leasegate.acquire", 2, "acquire"},
	{"SELECT * FROM leasegate.state('x')", SQL_SELECT, "leasegate.state", 1, "state"},
	{"SELECT leasegate.token(1, 2);", SQL_SELECT, "leasegate.token", 2, "token"},
	{"SELECT leasegate.transact('j', 3, '[{\"Put\":{}}]'::json)", SQL_SELECT,
	 "leasegate.transact", 3, "transact"},
	{"SELECT leasegate.check($1, $2::bigint)", SQL_SELECT, "leasegate.check", 2, "check"},
	{"SELECT 1", SQL_SELECT, "?column?", 1, "?column?"},
	{"SELECT version()", SQL_SELECT, "version", 0, "version"},
	{"SELECT pg_backend_pid()", SQL_SELECT, "pg_backend_pid", 0, "pg_backend_pid"},
	{"select current_setting('lock_timeout')", SQL_SELECT, "current_setting", 1,
	 "current_setting"},
	{"SELECT set_config('search_path', '', false)", SQL_SELECT, "set_config", 3, "set_config"},
	{"BEGIN", SQL_BEGIN, NULL, 0, NULL},
	{"begin isolation level serializable", SQL_BEGIN, NULL, 0, NULL},
	{"START TRANSACTION READ WRITE", SQL_BEGIN, NULL, 0, NULL},
	{"COMMIT", SQL_COMMIT, NULL, 0, NULL},
	{"end transaction", SQL_COMMIT, NULL, 0, NULL},
	{"ROLLBACK", SQL_ROLLBACK, NULL, 0, NULL},
	{"abort", SQL_ROLLBACK, NULL, 0, NULL},
	{"ROLLBACK TO SAVEPOINT a", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SET lock_timeout = '5s'", SQL_SET, NULL, 0, "lock_timeout"},
	{"SET SESSION statement_timeout TO 100", SQL_SET, NULL, 0, "statement_timeout"},
	{"SET LOCAL leasegate.lease_ms = 2000", SQL_SET, NULL, 0, "leasegate.lease_ms"},
	{"SET TIME ZONE 'UTC'", SQL_SET, NULL, 0, "timezone"},
	{"SET extra_float_digits = 3", SQL_SET, NULL, 0, "extra_float_digits"},
	{"SHOW TimeZone", SQL_SHOW, NULL, 0, "timezone"},
	{"SHOW TRANSACTION ISOLATION LEVEL", SQL_SHOW, NULL, 0, "transaction_isolation"},
	{"RESET ALL", SQL_RESET_ALL, NULL, 0, NULL},
	{"RESET lock_timeout", SQL_RESET, NULL, 0, "lock_timeout"},
	{"DISCARD ALL", SQL_DISCARD_ALL, NULL, 0, NULL},
	{"CLOSE ALL", SQL_CLOSE_ALL, NULL, 0, NULL},
	{"UNLISTEN *", SQL_UNLISTEN, NULL, 0, NULL},
	{"DEALLOCATE PREPARE s1", SQL_DEALLOCATE, NULL, 0, "s1"},
	{"DEALLOCATE ALL", SQL_DEALLOCATE, NULL, 0, ""},
	{"SELECT * FROM pg_class", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SELECT pg_advisory_lock(42) FROM t", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SELECT pg_advisory_lock(99999999999999999999)", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SELECT pg_advisory_lock(hashtext('x'))", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"INSERT INTO t VALUES (1)", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"  -- a comment only", SQL_EMPTY, NULL, 0, NULL},
	/* what ORMs and pools send on connect (issue 29) */
	{"select current_schema()", SQL_SELECT, "current_schema", 0, "current_schema"},
	{"SELECT pg_catalog.current_database() AS db", SQL_SELECT, "current_database", 0, "db"},
	{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED", SQL_SET, NULL,
	 0, ""},
	{"set session characteristics as transaction read write", SQL_SET, NULL, 0, ""},
	{"SET LOCAL CHARACTERISTICS AS TRANSACTION READ ONLY", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SET SESSION CHARACTERISTICS TRANSACTION READ ONLY", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"show server_version_num", SQL_SHOW, NULL, 0, "server_version_num"},
	{"SHOW standard_conforming_strings", SQL_SHOW, NULL, 0, "standard_conforming_strings"},
	{"set time zone 'UTC'", SQL_SET, NULL, 0, "timezone"},
	{"DISCARD   ALL ;", SQL_DISCARD_ALL, NULL, 0, NULL},
	{"SELECT t.oid FROM pg_type t WHERE t.oid = $1 AND 1 = 1", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SELECT typname FROM pg_class WHERE typname = 'x'", SQL_UNSUPPORTED, NULL, 0, NULL},
	{"SELECT relname FROM pg_type WHERE typname = 'x'", SQL_UNSUPPORTED, NULL, 0, NULL},
};

/* A type loader's lookup in pg_type, as each client writes it: which
 * columns under which names, and the key. */
struct lookup {
	const char *sql;
	bool by_name;
	const char *key; /* by name: the name; by oid: NULL ($1) or the number */
	unsigned ncols;
	unsigned char col[SQL_MAX_COLS];
	const char *names[SQL_MAX_COLS];
};

static const struct lookup lookups[] = {
	/* psycopg2's HstoreAdapter.get_oids (SQLAlchemy's psycopg2 dialect) */
	{"SELECT t.oid, typarray\nFROM pg_type t JOIN pg_namespace ns\n    ON typnamespace = "
	 "ns.oid\nWHERE typname = 'hstore';\n",
	 true,
	 "hstore",
	 2,
	 {TC_OID, TC_TYPARRAY},
	 {"oid", "typarray"}},
	/* Django's django.contrib.postgres, hstore and citext */
	{"SELECT t.oid, typarray FROM pg_type t JOIN pg_namespace ns ON typnamespace = ns.oid "
	 "WHERE typname = 'hstore'",
	 true,
	 "hstore",
	 2,
	 {TC_OID, TC_TYPARRAY},
	 {"oid", "typarray"}},
	{"SELECT typarray FROM pg_type WHERE typname = 'citext'",
	 true,
	 "citext",
	 1,
	 {TC_TYPARRAY},
	 {"typarray"}},
	/* asyncpg's introspection of a codec's type (SQLAlchemy's json) */
	{"SELECT\n    t.oid,\n    t.typelem     AS elemtype,\n    t.typtype     AS kind\nFROM\n"
	 "    pg_catalog.pg_type AS t\nWHERE\n    t.oid = $1\n",
	 false,
	 NULL,
	 3,
	 {TC_OID, TC_TYPELEM, TC_TYPTYPE},
	 {"oid", "elemtype", "kind"}},
	/* case, comments, quoted aliases, a literal key, ORDER BY */
	{"select /* x */ T.OID as \"Oid\", TypName from PG_CATALOG.PG_TYPE where oid = 114 "
	 "order by oid",
	 false,
	 "114",
	 2,
	 {TC_OID, TC_TYPNAME},
	 {"Oid", "typname"}},
	{"SELECT n.nspname, t.typdelim FROM pg_type AS t INNER JOIN pg_namespace AS n ON "
	 "t.typnamespace = n.oid WHERE t.typname = 'json'",
	 true,
	 "json",
	 2,
	 {TC_NSPNAME, TC_TYPDELIM},
	 {"nspname", "typdelim"}},
};

static void type_lookups(void **state)
{
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		const struct lookup *l = &lookups[i];
		char *text = strdup(l->sql);
		size_t pos = 0;
		struct sql_stmt st;
		assert_true(sql_next(text, strlen(text), &pos, &st));
		if (st.kind != SQL_CATALOG || st.catalog != CAT_PG_TYPE)
			fail_msg("%s: kind %d, not a pg_type lookup", l->sql, st.kind);
		assert_int_equal(st.by_name, l->by_name);
		assert_int_equal(st.nargs, 1);
		if (l->by_name) {
			assert_int_equal(st.args[0].t, ARG_STR);
			assert_int_equal(st.args[0].len, strlen(l->key));
			assert_memory_equal(st.args[0].s, l->key, strlen(l->key));
		} else if (l->key == NULL) {
			assert_int_equal(st.args[0].t, ARG_PARAM);
			assert_int_equal(st.nparams, 1);
		} else {
			assert_int_equal(st.args[0].t, ARG_INT);
			assert_int_equal(st.args[0].i, atoi(l->key));
		}
		assert_int_equal(st.ncols, l->ncols);
		const char *name = st.colnames;
		for (unsigned c = 0; c < l->ncols; c++, name += strlen(name) + 1) {
			assert_int_equal(st.col[c], l->col[c]);
			assert_string_equal(name, l->names[c]);
		}
		free(text);
	}
}

static void each_row(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char *text = strdup(r->sql);
		size_t pos = 0;
		struct sql_stmt st;
		bool got = sql_next(text, strlen(text), &pos, &st);
		if (r->kind == SQL_EMPTY) {
			if (got)
				assert_int_equal(st.kind, SQL_EMPTY);
			free(text);
			continue;
		}
		assert_true(got);
		if (st.kind != r->kind)
			fail_msg("%s: kind %d, wanted %d", r->sql, st.kind, r->kind);
		if (r->kind == SQL_SELECT) {
			assert_non_null(st.fn);
			assert_string_equal(st.fn->name, r->fn);
			assert_int_equal(st.nargs, r->nargs);
			if (strcmp(r->fn, "pg_advisory_lock_shared") != 0)
				assert_string_equal(st.alias, r->alias_or_name);
		} else if (r->alias_or_name != NULL) {
			assert_string_equal(st.name, r->alias_or_name);
		}
		free(text);
	}
}

static void arguments(void **state)
{
	char text[] = "SELECT leasegate.acquire('it''s', 30000, $2::bigint)";
	size_t pos = 0;
	struct sql_stmt st;
	assert_true(sql_next(text, strlen(text), &pos, &st));
	assert_int_equal(st.args[0].t, ARG_STR);
	assert_int_equal(st.args[0].len, 4);
	assert_memory_equal(st.args[0].s, "it's", 4);
	assert_int_equal(st.args[1].t, ARG_INT);
	assert_int_equal(st.args[1].i, 30000);
	assert_int_equal(st.args[2].t, ARG_PARAM);
	assert_int_equal(st.args[2].param, 2);
	assert_int_equal(st.args[2].cast, PG_OID_INT8);
	assert_int_equal(st.nparams, 2);
	char two[] = "SELECT pg_advisory_lock(1), pg_try_advisory_lock(2)";
	pos = 0;
	assert_true(sql_next(two, strlen(two), &pos, &st));
	assert_int_equal(st.kind, SQL_UNSUPPORTED);
	assert_true(st.several);
	char neg[] = "SELECT pg_advisory_lock(-9223372036854775808)";
	pos = 0;
	assert_true(sql_next(neg, strlen(neg), &pos, &st));
	assert_int_equal(st.kind, SQL_SELECT);
	assert_true(st.args[0].i == INT64_MIN);
}

/* SELECT <integer>'s argument is whole: its cast none, whatever the
 * statement held before (a simple query's statement is on the stack). */
static void literal_has_no_cast(void **state)
{
	char text[] = "SELECT 1 AS one";
	size_t pos = 0;
	struct sql_stmt st;
	memset(&st, 0xa5, sizeof(st));
	assert_true(sql_next(text, strlen(text), &pos, &st));
	assert_int_equal(st.kind, SQL_SELECT);
	assert_int_equal(st.args[0].t, ARG_INT);
	assert_int_equal(st.args[0].cast, 0);
	assert_int_equal(st.args[0].i, 1);
}

static void several_statements(void **state)
{
	char text[] =
		"SELECT 1; /* ; */ SELECT ';' ;; -- x; y\n SET a.b = 'c;d'; SHOW lock_timeout";
	size_t pos = 0, len = strlen(text);
	struct sql_stmt st;
	enum sql_kind want[] = {SQL_SELECT, SQL_UNSUPPORTED, SQL_EMPTY, SQL_SET, SQL_SHOW};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_true(sql_next(text, len, &pos, &st));
		assert_int_equal(st.kind, want[i]);
		if (st.kind == SQL_SET) {
			assert_int_equal(st.value_len, 3);
			assert_memory_equal(st.value, "c;d", 3);
		}
	}
	assert_false(sql_next(text, len, &pos, &st));
	assert_int_equal(sql_count(text, len, 100), 5);
	assert_int_equal(sql_count(text, len, 2), 3); /* stops past the limit */
	assert_int_equal(sql_count("", 0, 10), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_row),
		cmocka_unit_test(arguments),
		cmocka_unit_test(several_statements),
		cmocka_unit_test(type_lookups),
		cmocka_unit_test(literal_has_no_cast),
	};
	return cmocka_run_group_tests_name("postgresql statements", tests, NULL, NULL);
}
