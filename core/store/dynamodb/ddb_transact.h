/*
 * ddb_transact: fenced transactions on DynamoDB (core/store/store_tx.h) — the
 * body of the TransactWriteItems, what its cancellation means, and the
 * store operation (ddb_transact.c).
 *
 * The body is the CHECK of ddb_json.c (the lock's ConditionCheck), or a
 * shared holder's two (ddb_shared.c), with the client's items spliced after
 * it and a ClientRequestToken, built once per
 * operation: every retry sends the same bytes, so DynamoDB applies a
 * retried commit once.
 */
#ifndef LG_DDB_TRANSACT_H
#define LG_DDB_TRANSACT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/dynamodb/ddb_retry.h"
#include "core/store/store_tx.h"

/* The TransactWriteItems body of req with ClientRequestToken client_token
 * (1..STORE_TX_TOKEN_MAX bytes of [A-Za-z0-9-]). req->items must be a JSON
 * array text of at least one item; it is spliced as it is. Returns a body
 * to free with ddb_body_free(), or NULL with a message in err. */
char *ddb_build_transact(const struct ddb_keys *k, const struct store_tx_req *req,
			 const char *client_token, size_t *len, char *err)
	__attribute__((warn_unused_result));

/* What a TransactionCanceledException of a fenced transaction means, from
 * all its CancellationReasons (ddb_parse_error keeps only a few): REFUSED
 * when an item failed for good (a condition, a validation error...: the
 * caller is told which), else THROTTLED or TRANSIENT (TransactionConflict)
 * when one is retryable, else v unchanged. */
struct ddb_verdict ddb_tx_classify(const char *body, size_t len, struct ddb_verdict v);

/* The cancellation of a fenced transaction whose first nchecks items are
 * the lock's checks (1, or 2 for a shared holder), from the error body,
 * into tr: the first item cancelled (.index, 0 = a lock check, the
 * client's items from 1), which check (.check) and the item it returned
 * (.item; exists false when none), and the client's reasons as a JSON
 * array (*reasons, malloc'd: free it). False with err on a body without
 * CancellationReasons, a malformed lock item, or out-of-memory. */
bool ddb_tx_parse_cancel(const char *body, size_t len, const char *ttl_attr, unsigned nchecks,
			 struct store_tx_result *tr, char **reasons, char *err)
	__attribute__((warn_unused_result));

#endif
