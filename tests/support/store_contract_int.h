/*
 * store_contract_int: what the two files of the store contract suite share
 * (store_contract.c: the item operations; store_contract_scan.c: the freed
 * marker of a release from outside and store_scan()). Private to them;
 * the tests use store_contract.h.
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

/* One page of a scan, which must be OK (for the counts of each operation). */
void store_contract_scan_page(struct fixture *fx);

/* The tests of store_contract_scan.c, to run with the others. */
#define STORE_CONTRACT_SCAN_TESTS 6
extern const struct CMUnitTest store_contract_scan_tests[STORE_CONTRACT_SCAN_TESTS];

#endif
