/*
 * ddb_kv: keyspace commits (core/store/store_kv.h) on DynamoDB: the
 * TransactWriteItems body, which item a cancellation names, and the store
 * operation (ddb_kv.c).
 */
#ifndef LG_DDB_KV_H
#define LG_DDB_KV_H

#include <stddef.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/store_kv.h"

/* The TransactWriteItems body of req with ClientRequestToken token: one
 * Update (SET, FREE) or ConditionCheck (CHECK) per op, in order. A body to
 * free with ddb_body_free(), or NULL with a message in err (a request
 * store_kv_valid refuses, out-of-memory). */
char *ddb_build_kv(const struct ddb_keys *k, const struct store_kv_req *req, const char *token,
		   size_t *len, char *err) __attribute__((warn_unused_result));

/* The first item a TransactionCanceledException body names
 * ConditionalCheckFailed, or n when none does (or the body is not one). */
unsigned ddb_kv_failed_index(const char *body, size_t len, unsigned n);

#endif
