/*
 * ddb_keys: the test credentials and the store configuration that the C
 * tests of the DynamoDB store share (the keys of AWS's SigV4 examples; a
 * stand-in or fake DynamoDB checks signatures made with them).
 */
#ifndef LG_TESTS_DDB_KEYS_H
#define LG_TESTS_DDB_KEYS_H

#include "core/store/dynamodb/store_dynamodb.h"

#define DDB_TEST_ACCESS_KEY "AKIDEXAMPLE"
#define DDB_TEST_SECRET_KEY "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

/* The test keys, as a store_dynamodb_config.credentials callback. */
const struct aws_credentials *ddb_test_creds(void *arg);

/* Table "Locks" in us-east-1 at endpoint, partition key "pk", the test
 * keys: the caller adds what its test varies. */
struct store_dynamodb_config ddb_test_config(const char *endpoint);

#endif
