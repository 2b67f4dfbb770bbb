/*
 * store_contract: one suite of cmocka tests that every struct store must
 * pass, whatever is behind it (store.h's conditions and results, operation
 * by operation). tests/unit/test_store_contract.c runs it on the embedded
 * store with the fake clock; tests/integration/it_store_dynamodb.c on the
 * DynamoDB store against moto_server, with a real loop.
 *
 * A factory makes one fresh store per test and runs its loop until a
 * request completes. Lock names are unique per test (a prefix and a
 * counter), so a factory may share one table between tests.
 */
#ifndef LG_TEST_STORE_CONTRACT_H
#define LG_TEST_STORE_CONTRACT_H

#include <stdbool.h>

#include "core/store/store.h"

struct store_factory {
	const char *name;
	/* Makes a store (its table must have the TTL attribute configured, so
	 * that TTL values are written and read back). Returns NULL on failure. */
	struct store *(*make)(void *arg);
	/* Runs the loop until *done or a few seconds pass. */
	void (*run)(void *arg, const bool *done);
	void (*destroy)(void *arg, struct store *s);
	void *arg;
	/* Writes item at name as it is, without a condition: an item no lock
	 * would be (another application's, a fence edited by hand). type,
	 * owner, rvn and fence only when set (has_..., type non-empty);
	 * leaseMs when has_lease; a fence_bad fence as 2^64 + 5, a number
	 * DynamoDB holds and int64 does not. Returns false on failure. */
	bool (*put_raw)(void *arg, struct store *s, const char *name, const struct lock_item *item);
	/* The store keeps more than STORE_REVOKE_MAX revocations a session
	 * (core/store/store_revoke.h: a DynamoDB table with a sort key). */
	bool revoke_unbounded;
};

/* Runs the suite, each test named "<factory name>: <test>". Returns the
 * number of failed tests (cmocka_run_group_tests). */
int store_contract_run(const struct store_factory *f);

/* The suite of shared names (core/store/store_shared.h); as
 * store_contract_run. */
int store_contract_shared_run(const struct store_factory *f);

/* The suite of session items (core/store/store_session.h); as
 * store_contract_run. */
int store_contract_session_run(const struct store_factory *f);

/* The suite of locks held in session mode (store.h's ACQUIRE .session
 * and a takeover's session check); as store_contract_run. */
int store_contract_slock_run(const struct store_factory *f);

/* The suite of revocations (core/store/store_revoke.h); as
 * store_contract_run. */
int store_contract_revoke_run(const struct store_factory *f);

/* The suite of batch reads (core/store/store_batch.h); as
 * store_contract_run. */
int store_contract_batch_run(const struct store_factory *f);

/* One request, run to completion: returns false (and fails the test) when
 * the callback did not come. */
bool store_contract_do(const struct store_factory *f, struct store *s, const struct store_req *req,
		       struct store_result *out);

#endif
