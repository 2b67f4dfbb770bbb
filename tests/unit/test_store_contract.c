/*
 * test_store_contract: the store contract suite (tests/support/
 * store_contract.c) on the embedded store, with the fake clock: a request
 * completes when the clock runs what is due (clock_fake_advance(c, 0)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/base/clock.h"
#include "core/store/store_memory.h"
#include "tests/support/store_contract.h"

static struct clock *fake;

static struct store *make(void *arg)
{
	return store_memory_new(fake, "contract");
}

static void run(void *arg, const bool *done)
{
	/* completions are zero-delay timers: one pass runs them */
	clock_fake_advance(fake, 0);
}

static void destroy(void *arg, struct store *s)
{
	store_free(s);
}

static bool put_raw(void *arg, struct store *s, const char *name, const struct lock_item *item)
{
	return store_memory_put_raw(s, name, item);
}

int main(void)
{
	fake = clock_fake_new(1700000000000);
	if (!fake)
		return 1;
	const struct store_factory f = {"memory store", make, run, destroy, NULL, put_raw, false};
	int failed = store_contract_run(&f);
	failed += store_contract_shared_run(&f);
	failed += store_contract_session_run(&f);
	failed += store_contract_slock_run(&f);
	failed += store_contract_revoke_run(&f);
	failed += store_contract_batch_run(&f);
	clock_free(fake);
	return failed;
}
