/*
 * ddb_standin_int: the stand-in's bodies (ddb_standin_ops.c): what a
 * request leasegate sends asks for, as a struct store_req, and the JSON of
 * the answers. Private to ddb_standin*.c.
 */
#ifndef LG_TEST_DDB_STANDIN_INT_H
#define LG_TEST_DDB_STANDIN_INT_H

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <stdbool.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/store.h"

#define SD_PK "pk" /* the stand-in's one partition key */

struct sd_req {
	enum ddb_op dop;
	bool to_store;	      /* a store operation (req is set), else table admin */
	struct store_req req; /* strings point into the parsed body */
	const char *table;
	const char *ttl_attr; /* the name of #x, when the request has one */
};

/* Decodes body, a request of dop, into *out. Returns the parsed body
 * (out's strings live in it; cJSON_Delete it after the store took the
 * request), or NULL with a message in err (DDB_ERR_MAX bytes). */
cJSON *sd_decode(enum ddb_op dop, const char *body, size_t len, struct sd_req *out, char *err);

/* {"<member>": item} (member NULL: the item map alone), the item at
 * LOCK#name as DynamoDB would give it; nothing for an absent item when
 * member is set ("{}"). */
void sd_put_item(struct evbuffer *b, const char *member, const char *name,
		 const struct lock_item *it, const char *ttl_attr);

/* The body of a store result for r: 200 with the item (UpdateItem: ALL_NEW,
 * GetItem: Item), or 400 with ConditionalCheckFailedException (or
 * TransactionCanceledException for CHECK) and the refusing item; 500 for
 * the store's other failures. Returns the HTTP status. */
int sd_put_result(struct evbuffer *b, const struct sd_req *r, const struct store_result *res,
		  const char *ttl_attr);

/* The body of a table administration request (200); replicas (comma
 * list, NULL none): a global table's DescribeTable. */
void sd_put_admin(struct evbuffer *b, const struct sd_req *r, const char *ttl_attr,
		  const char *replicas);

/* An error body {"__type": "com.amazonaws.dynamodb.v20120810#<type>", ...}. */
void sd_put_error(struct evbuffer *b, const char *type, const char *message);

#endif
