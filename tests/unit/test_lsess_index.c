/*
 * test_lsess_index: gateway/lease/lsess_index, a session's records by
 * name: what a scan of the session's list (newest first) would find,
 * through growth, removal, kinds and tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/lease/lsess_int.h"

#define N 5000

static struct ls_rec *newest; /* the session's list, newest first */

static struct ls_rec *add(struct ls_index *x, enum ls_kind kind, const char *name, int64_t token)
{
	size_t len = strlen(name);
	struct ls_rec *r = calloc(1, sizeof *r + len + 1);
	memcpy(r->name, name, len + 1);
	r->len = len;
	r->kind = kind;
	r->token = token;
	r->next = newest;
	if (newest != NULL)
		newest->prev = r;
	newest = r;
	ls_index_add(x, r, newest);
	return r;
}

static void del(struct ls_index *x, struct ls_rec *r)
{
	ls_index_del(x, r);
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		newest = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	free(r);
}

static void test_many_found(void **state)
{
	struct ls_index x = {0};
	static struct ls_rec *recs[N];
	char name[32];
	newest = NULL;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "lock-%d", i);
		recs[i] = add(&x, LS_KIND_LOCK, name, i + 1);
	}
	assert_true(x.cap >= N);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "lock-%d", i);
		assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LOCK, name, 0), recs[i]);
		assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LOCK, name, i + 1), recs[i]);
		assert_null(ls_index_find(&x, newest, LS_KIND_LOCK, name, i + 2));
		assert_null(ls_index_find(&x, newest, LS_KIND_LEADER, name, 0));
	}
	assert_null(ls_index_find(&x, newest, LS_KIND_LOCK, "lock-x", 0));
	for (int i = 0; i < N; i += 2)
		del(&x, recs[i]);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "lock-%d", i);
		struct ls_rec *r = ls_index_find(&x, newest, LS_KIND_LOCK, name, 0);
		if (i % 2 == 0)
			assert_null(r);
		else
			assert_ptr_equal(r, recs[i]);
	}
	while (newest != NULL)
		del(&x, newest);
	assert_int_equal(x.n, 0);
	ls_index_free(&x);
}

/* Two records of one name (a lost lease and the new one): the newest is
 * found, as a scan finds it, also after the table grew; by token, each. */
static void test_newest_first(void **state)
{
	struct ls_index x = {0};
	char name[32];
	newest = NULL;
	struct ls_rec *old = add(&x, LS_KIND_LOCK, "same", 7);
	struct ls_rec *lead = add(&x, LS_KIND_LEADER, "same", 9);
	struct ls_rec *young = add(&x, LS_KIND_LOCK, "same", 8);
	for (int i = 0; i < 100; i++) { /* grows the table several times */
		snprintf(name, sizeof name, "other-%d", i);
		add(&x, LS_KIND_LOCK, name, 1);
	}
	assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LOCK, "same", 0), young);
	assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LOCK, "same", 7), old);
	assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LEADER, "same", 0), lead);
	del(&x, young);
	assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LOCK, "same", 0), old);
	while (newest != NULL)
		del(&x, newest);
	ls_index_free(&x);
}

/* Without a table (as after an out-of-memory), the list is scanned. */
static void test_scan_without_table(void **state)
{
	struct ls_index x = {0};
	newest = NULL;
	struct ls_rec *a = add(&x, LS_KIND_LOCK, "a", 1);
	add(&x, LS_KIND_LOCK, "b", 2);
	ls_index_free(&x); /* no table, as if it could not be made */
	assert_ptr_equal(ls_index_find(&x, newest, LS_KIND_LOCK, "a", 0), a);
	assert_null(ls_index_find(&x, newest, LS_KIND_LOCK, "c", 0));
	while (newest != NULL) {
		struct ls_rec *r = newest;
		newest = r->next;
		free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_found),
		cmocka_unit_test(test_newest_first),
		cmocka_unit_test(test_scan_without_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
