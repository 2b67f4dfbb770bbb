/*
 * test_list_cursor: LOCK.LIST TABLE's sealed cursors (list_cursor.c) —
 * they open for the user they were sealed for and no other, tell nothing
 * of the store's cursor, refuse any altered byte, and fit their bound at
 * the longest store cursor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/redis/list_cursor.h"

static void test_round_trip_and_users(void **state)
{
	char sealed[LC_SEALED_MAX + 1], again[LC_SEALED_MAX + 1], out[STORE_CURSOR_MAX + 1];
	const char *store = "7365637265743a616c706861"; /* secret:alpha */
	assert_true(lc_seal("spy", store, sealed));
	assert_null(strstr(sealed, store));
	assert_true(lc_open("spy", sealed, strlen(sealed), out));
	assert_string_equal(out, store);
	/* a random nonce: the same cursor seals differently each time */
	assert_true(lc_seal("spy", store, again));
	assert_string_not_equal(sealed, again);
	assert_false(lc_open("spy2", sealed, strlen(sealed), out));
	assert_false(lc_open("sp", sealed, strlen(sealed), out));
	/* every byte altered, one at a time: refused */
	for (size_t i = 0; i < strlen(sealed); i++) {
		char bad[LC_SEALED_MAX + 1];
		memcpy(bad, sealed, sizeof(bad));
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		assert_false(lc_open("spy", bad, strlen(bad), out));
	}
	assert_false(lc_open("spy", store, strlen(store), out)); /* a bare store cursor */
	assert_false(lc_open("spy", "", 0, out));
	assert_false(lc_open("spy", "AAAA", 4, out)); /* too short for a tag */
}

static void test_longest(void **state)
{
	static char store[STORE_CURSOR_MAX + 2], sealed[LC_SEALED_MAX + 1],
		out[STORE_CURSOR_MAX + 1];
	memset(store, 'f', STORE_CURSOR_MAX);
	assert_true(lc_seal("u", store, sealed));
	assert_true(strlen(sealed) <= LC_SEALED_MAX);
	assert_true(lc_open("u", sealed, strlen(sealed), out));
	assert_string_equal(out, store);
	store[STORE_CURSOR_MAX] = 'f'; /* one byte over */
	assert_false(lc_seal("u", store, sealed));
	assert_false(lc_seal("u", "", sealed));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_users),
		cmocka_unit_test(test_longest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
