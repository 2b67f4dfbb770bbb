#include "tests/support/ddb_keys.h"

static const struct aws_credentials keys = {DDB_TEST_ACCESS_KEY, DDB_TEST_SECRET_KEY, "", 0};

const struct aws_credentials *ddb_test_creds(void *arg)
{
	(void)arg;
	return &keys;
}

struct store_dynamodb_config ddb_test_config(const char *endpoint)
{
	return (struct store_dynamodb_config){
		.table = "Locks",
		.region = "us-east-1",
		.endpoint = endpoint,
		.partition_key = "pk",
		.credentials = ddb_test_creds,
	};
}
