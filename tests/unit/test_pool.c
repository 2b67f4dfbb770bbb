/*
 * test_pool: core/pool, the free list behind the per-operation objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/base/pool.h"

static void test_blocks_are_zeroed_and_reused(void **state)
{
	struct pool p = POOL_INIT(64, 2);
	unsigned char *a = pool_get(&p, 40);
	assert_non_null(a);
	for (int i = 0; i < 40; i++)
		assert_int_equal(a[i], 0);
	memset(a, 0xab, 40);
	pool_put(&p, a, 40);
#if !defined(__SANITIZE_ADDRESS__)
	assert_int_equal(p.n, 1);
	unsigned char *b = pool_get(&p, 64);
	assert_ptr_equal(b, a); /* the block kept comes back */
	assert_int_equal(p.n, 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(b[i], 0);
	pool_put(&p, b, 64);
#endif
	pool_drain(&p);
	assert_int_equal(p.n, 0);
	assert_null(p.free);
}

static void test_keeps_at_most_max_and_never_large_blocks(void **state)
{
	struct pool p = POOL_INIT(32, 2);
	void *x[3];
	for (int i = 0; i < 3; i++)
		assert_non_null(x[i] = pool_get(&p, 32));
	void *big = pool_get(&p, 4096); /* over the block size: malloc's */
	assert_non_null(big);
	memset(big, 1, 4096);
	pool_put(&p, big, 4096);
	for (int i = 0; i < 3; i++)
		pool_put(&p, x[i], 32);
#if !defined(__SANITIZE_ADDRESS__)
	assert_int_equal(p.n, 2); /* the third went back to malloc */
#else
	assert_int_equal(p.n, 0); /* nothing kept under ASan */
#endif
	pool_put(&p, NULL, 32);
	pool_drain(&p);
	assert_int_equal(p.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks_are_zeroed_and_reused),
		cmocka_unit_test(test_keeps_at_most_max_and_never_large_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
