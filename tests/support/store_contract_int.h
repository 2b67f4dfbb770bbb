/*
 * store_contract_int: what the files of the store contract suite share
 * (store_contract.c: the item operations; store_contract_items.c: items
 * that are not locks, and waiters' announcements; store_contract_scan.c:
 * the freed marker of a release from outside and store_scan()). Private
 * to them; the tests use store_contract.h.
 */
#ifndef LG_TEST_STORE_CONTRACT_INT_H
#define LG_TEST_STORE_CONTRACT_INT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/support/store_contract.h"

/* One test's store and lock name; *state of every contract test. */
struct fixture {
	const struct store_factory *f;
	struct store *s;
	char name[96]; /* this test's lock, unique across tests and runs */
};

/* cmocka setup and teardown: a fresh store from the factory (the initial
 * state), and its end. */
int store_contract_setup(void **state);
int store_contract_teardown(void **state);

/* One request on fx's store, its name fx->name unless r.name is set;
 * prints what went wrong on TRANSIENT, FATAL, NO_TABLE. */
struct store_result store_contract_op(struct fixture *fx, struct store_req r);

/* Requests on fx's lock (store_contract_op): an acquire of 30 s by owner
 * writing rvn, a takeover when seen is the rvn it saw (else NULL), holder
 * the label (NULL: none); the same taking waiter's announcement; a
 * renewal of 20 s; a release by owner; a read; an announcement of waiter
 * for ms; its withdrawal. */
struct store_result sc_acquire(struct fixture *fx, const char *owner, const char *rvn,
			       const char *seen, const char *holder);
struct store_result sc_acquire_w(struct fixture *fx, const char *owner, const char *rvn,
				 const char *seen, const char *waiter);
struct store_result sc_renew(struct fixture *fx, const char *owner, const char *rvn,
			     const char *holder);
struct store_result sc_release(struct fixture *fx, const char *owner);
struct store_result sc_read_item(struct fixture *fx);
struct store_result sc_announce(struct fixture *fx, const char *waiter, int64_t ms);
struct store_result sc_withdraw(struct fixture *fx, const char *waiter);

/* Assertions on an item read back: its waiter (NULL: none) and ms; held by
 * owner with rvn, fence, lease_ms and holder (NULL: none). */
void sc_assert_waiter(const struct lock_item *it, const char *waiter, int64_t ms);
void sc_assert_held(const struct lock_item *it, const char *owner, const char *rvn, int64_t fence,
		    int64_t lease_ms, const char *holder);

/* One page of a scan, which must be OK (for the counts of each operation). */
void store_contract_scan_page(struct fixture *fx);

/* The tests of store_contract_scan.c, to run with the others. */
#define STORE_CONTRACT_SCAN_TESTS 6
extern const struct CMUnitTest store_contract_scan_tests[STORE_CONTRACT_SCAN_TESTS];

/* The tests of store_contract_items.c, likewise. */
#define STORE_CONTRACT_ITEMS_TESTS 7
extern const struct CMUnitTest store_contract_items_tests[STORE_CONTRACT_ITEMS_TESTS];

#endif
