/*
 * gateway/pg/pg_fn: the table of PostgreSQL functions — every row's facts
 * agree with each other (arity and argument types and names, the lock
 * name's argument, result columns, a handler, a summary), rows are sorted
 * with no two alike (the binary search depends on it), overloads of a
 * name share what the ACL and Describe read, the look-up finds each row
 * in any case and with pg_catalog., the ACL names, and the reference page.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/conn/acl.h"
#include "gateway/pg/pg_fe.h"
#include "gateway/pg/pg_fn.h"
#include "protocols/buf.h"

static bool int_type(uint32_t oid)
{
	return oid == PG_OID_INT8 || oid == PG_OID_INT4 || oid == PG_OID_INT2;
}

static void check_row(const struct pg_fn *f)
{
	const char *n = f->name;
	assert_non_null(n);
	for (const char *p = n; *p; p++)
		if (isupper((unsigned char)*p) || isspace((unsigned char)*p))
			fail_msg("%s: names are lower case", n);
	if (f->nargs > SQL_MAX_ARGS)
		fail_msg("%s: %u arguments, the recogniser takes %d", n, f->nargs, SQL_MAX_ARGS);
	for (unsigned i = 0; i < SQL_MAX_ARGS; i++) {
		bool used = i < f->nargs;
		if ((f->arg_types[i] != 0) != used || (f->arg_names[i] != NULL) != used)
			fail_msg("%s/%u: argument %u: a type and a name for each of its arguments "
				 "only",
				 n, f->nargs, i);
	}
	if (f->lock_arg > 0) {
		if ((unsigned)f->lock_arg > f->nargs ||
		    f->arg_types[f->lock_arg - 1] != PG_OID_TEXT)
			fail_msg("%s/%u: the lock name's argument %d is no text argument", n,
				 f->nargs, f->lock_arg);
	} else if (f->lock_arg == PGF_LOCK_KEYS) {
		if (f->nargs < 1 || f->nargs > 2)
			fail_msg("%s: an advisory key is one or two integers", n);
		for (unsigned i = 0; i < f->nargs; i++)
			assert_true(int_type(f->arg_types[i]));
	} else {
		assert_int_equal(f->lock_arg, 0);
	}
	if (f->cats == 0 && f->lock_arg != 0)
		fail_msg("%s: a lock name is checked only with categories", n);
	if (f->cats != 0 && (f->cats & ACL_LOCK) == 0)
		fail_msg("%s: a checked function is in @lock", n);
	assert_true(f->ncols <= PG_FN_MAX_COLS);
	assert_true(f->ncols == 0 || f->cols != NULL);
	for (unsigned i = 0; i < f->ncols; i++)
		assert_int_not_equal(f->cols[i].oid, 0);
	if (f->ncols > 1)
		for (unsigned i = 0; i < f->ncols; i++)
			assert_non_null(f->cols[i].name); /* the alias names one column only */
	assert_non_null(f->run);
	if (f->summary == NULL || strlen(f->summary) < 10)
		fail_msg("%s/%u: no summary for the reference page", n, f->nargs);
}

static void rows_consistent(void **state)
{
	assert_true(pg_fns_count > 20);
	for (size_t i = 0; i < pg_fns_count; i++)
		check_row(&pg_fns[i]);
	check_row(&pg_fn_literal);
}

/* Sorted by name then arity, no two rows alike: what the binary search
 * needs, and no call that two rows could answer. */
static void rows_sorted_unique(void **state)
{
	for (size_t i = 1; i < pg_fns_count; i++) {
		const struct pg_fn *a = &pg_fns[i - 1], *b = &pg_fns[i];
		int c = strcmp(a->name, b->name);
		if (c > 0 || (c == 0 && a->nargs >= b->nargs))
			fail_msg("rows %zu and %zu out of order or alike: %s/%u, %s/%u", i - 1, i,
				 a->name, a->nargs, b->name, b->nargs);
	}
}

/* The overloads of a name: one ACL name, so the same categories and kind
 * of lock name; the same result (Describe of a call of another arity). */
static void overloads_agree(void **state)
{
	for (size_t i = 1; i < pg_fns_count; i++) {
		const struct pg_fn *a = &pg_fns[i - 1], *b = &pg_fns[i];
		if (strcmp(a->name, b->name) != 0)
			continue;
		assert_int_equal(a->cats, b->cats);
		assert_int_equal(a->lock_arg, b->lock_arg);
		assert_int_equal(a->ncols, b->ncols);
		for (unsigned k = 0; k < a->ncols; k++)
			assert_int_equal(a->cols[k].oid, b->cols[k].oid);
	}
}

static void lookup(void **state)
{
	char up[128];
	for (size_t i = 0; i < pg_fns_count; i++) {
		const struct pg_fn *f = &pg_fns[i];
		size_t len = strlen(f->name);
		assert_ptr_equal(pg_fn_lookup(f->name, len, f->nargs), f);
		snprintf(up, sizeof(up), "PG_CATALOG.%s", f->name);
		for (char *p = up; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		assert_ptr_equal(pg_fn_lookup(up, strlen(up), f->nargs), f);
		/* another arity: a row of that name (refused when run) */
		const struct pg_fn *other = pg_fn_lookup(f->name, len, 9);
		assert_non_null(other);
		assert_string_equal(other->name, f->name);
		/* a prefix is no name unless a row has it */
		for (size_t k = 1; k < len; k++) {
			const struct pg_fn *p = pg_fn_lookup(f->name, k, 0);
			if (p != NULL &&
			    (strlen(p->name) != k || strncmp(p->name, f->name, k) != 0))
				fail_msg("%.*s found %s", (int)k, f->name, p->name);
		}
	}
	assert_null(pg_fn_lookup("pg_advisory_lockx", 17, 1));
	assert_null(pg_fn_lookup("a", 1, 0));
	assert_null(pg_fn_lookup("zzz", 3, 0));
	assert_null(pg_fn_lookup("", 0, 0));
	assert_null(pg_fn_lookup("pg_catalog.", 11, 0));
	assert_string_equal(pg_fn_column(pg_fn_lookup("leasegate.acquire", 17, 2)), "acquire");
	assert_string_equal(pg_fn_column(&pg_fn_literal), "?column?");
}

static void acl_names(void **state)
{
	assert_true(pg_fn_acl_known("pg_advisory_unlock_all"));
	assert_true(pg_fn_acl_known("pg_advisory_lock"));
	assert_true(pg_fn_acl_known("leasegate.transact"));
	assert_true(pg_fn_acl_known("pg_try_advisory_xact_lock_shared"));
	assert_false(pg_fn_acl_known("version")); /* not checked: no rule would act */
	assert_false(pg_fn_acl_known("set_config"));
	assert_false(pg_fn_acl_known("pg_catalog.pg_advisory_lock")); /* checked by its name */
	assert_false(pg_fn_acl_known("pg_advisory_lock|x"));
	assert_false(pg_fn_acl_known("lock.acquire"));
	assert_false(pg_fn_acl_known("leasegate"));
	for (size_t i = 0; i < pg_fns_count; i++)
		assert_int_equal(pg_fn_acl_known(pg_fns[i].name), pg_fns[i].cats != 0);
}

static void reference_page(void **state)
{
	struct buf out;
	buf_init(&out, 0);
	pg_fn_doc_markdown(&out);
	buf_raw(&out, "", 1);
	assert_false(buf_failed(&out));
	assert_non_null(strstr(out.buf, "# PostgreSQL functions\n"));
	assert_non_null(strstr(out.buf, "| `pg_advisory_lock(key1 int, key2 int)` | `void` | "
					"`@write` `@slow` `@blocking` `@lock` | "
					"`pg:<database>:<key1>:<key2>` |"));
	assert_non_null(strstr(out.buf, "| `leasegate.state(name text)` | one row: `held bool`, "));
	size_t rows = 0;
	for (const char *p = out.buf; (p = strstr(p, "\n| `")) != NULL; p++)
		rows++;
	assert_int_equal(rows, pg_fns_count);
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_consistent), cmocka_unit_test(rows_sorted_unique),
		cmocka_unit_test(overloads_agree), cmocka_unit_test(lookup),
		cmocka_unit_test(acl_names),	   cmocka_unit_test(reference_page),
	};
	return cmocka_run_group_tests_name("postgresql functions", tests, NULL, NULL);
}
