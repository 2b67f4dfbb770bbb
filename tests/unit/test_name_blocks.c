/*
 * test_name_blocks: the objects a held lease keeps that end in its lock's
 * name — the lock (core/lt_lock.c) and the gateway's record of the lease
 * (gateway/lease/lsess.c) — are allocated by the name's length, in size
 * classes of 16 name bytes up to 64, each a whole malloc block, not all
 * at the size of a 64-byte name: 1,000,000 leases of 25-byte names save
 * 96 MB so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/lt_internal.h"
#include "gateway/lease/lsess_int.h"

/* bytes, the block of an object of need bytes (of the smallest class,
 * least), is at least need and at most a class (16) past it, and is the
 * whole of a malloc block (8 bytes of header, steps of 16). */
static void assert_fits(size_t bytes, size_t need, size_t least)
{
	assert_true(bytes >= need);
	assert_true(bytes < (need > least ? need : least) + 16);
	assert_int_equal((bytes + 8) % 16, 0);
}

static void a_lock_is_allocated_by_its_names_length(void **state)
{
	for (size_t len = 1; len <= 64; len++)
		assert_fits(lt_lock_bytes(len), sizeof(struct lock) + len + 1,
			    sizeof(struct lock) + 17);
	assert_true(lt_lock_bytes(25) + 48 <= lt_lock_bytes(64));
	/* past the largest class (a 64-byte name, and up to 79 in its block):
	 * just enough, from malloc */
	assert_int_equal(lt_lock_bytes(100), sizeof(struct lock) + 101);
	assert_int_equal(lt_lock_bytes(2000), sizeof(struct lock) + 2001);
}

static void a_record_is_allocated_by_its_names_length(void **state)
{
	for (size_t len = 1; len <= 64; len++)
		assert_fits(ls_rec_bytes(len), sizeof(struct ls_rec) + len + 1,
			    sizeof(struct ls_rec) + 17);
	assert_true(ls_rec_bytes(25) + 48 <= ls_rec_bytes(64));
	assert_int_equal(ls_rec_bytes(100), sizeof(struct ls_rec) + 101);
	assert_int_equal(ls_rec_bytes(2000), sizeof(struct ls_rec) + 2001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_lock_is_allocated_by_its_names_length),
		cmocka_unit_test(a_record_is_allocated_by_its_names_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
