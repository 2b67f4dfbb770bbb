/*
 * ddb_json: the DynamoDB JSON of leasegate, request bodies in and response
 * bodies out. Pure: no I/O, no clock, no global state.
 *
 * Bodies follow docs/lease-rules.md "A lock is one item": every attribute goes
 * through ExpressionAttributeNames (#o owner, #r rvn, #f fence, #l leaseMs,
 * #t _type, #h holder, #w waiter, #wm waiterMs, #fr freed, #fb freedBy,
 * #se session, #sl sleaseMs, #x the TTL attribute, #k the partition key), writes
 * ask for ALL_NEW and, on a refusal, ALL_OLD. Parsers validate every
 * attribute they use (type, size, number syntax) and ignore the others, so
 * a lock item may live in a single-table design.
 *
 * This module does not decide what an error means (ddb_retry does) and does
 * not sign or send anything (store_dynamodb does).
 */
#ifndef LG_DDB_JSON_H
#define LG_DDB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store/store.h"
#include "core/store/store_chan.h"

#define DDB_KEY_NAME_MAX   255 /* a key attribute name, bytes */
#define DDB_TABLE_NAME_MAX 255 /* a table name, bytes */
#define DDB_TYPE_MAX	   64  /* an error type after the '#', bytes */
#define DDB_REASONS_MAX	   4   /* cancellation reasons kept, in request order */
#define DDB_ERR_MAX	   256 /* size of the err buffers below */

/* Writes a printf-style message into err (DDB_ERR_MAX bytes). */
void ddb_errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The DynamoDB operations leasegate sends. */
enum ddb_op {
	DDB_UPDATE_ITEM,
	DDB_GET_ITEM,
	DDB_DELETE_ITEM,
	DDB_TRANSACT_WRITE_ITEMS,
	DDB_DESCRIBE_TABLE,
	DDB_CREATE_TABLE,
	DDB_UPDATE_TIME_TO_LIVE,
	DDB_SCAN,
	DDB_BATCH_GET_ITEM, /* the slots of a shared name (ddb_shared.c) */
	DDB_QUERY,	    /* a session's revocations (ddb_revoke.c) */
	DDB_OP_COUNT
};

/* "UpdateItem"...: the name after "DynamoDB_20120810." in X-Amz-Target. */
const char *ddb_op_name(enum ddb_op op);

/* The DynamoDB operation that carries a store operation (STORE_SCAN:
 * Scan). */
enum ddb_op ddb_op_for(enum store_op op);

/* Where the locks live. Strings are borrowed; sk and ttl_attr may be NULL. */
struct ddb_keys {
	const char *table;
	const char *pk;	      /* partition key attribute name */
	const char *sk;	      /* sort key attribute name, NULL without one */
	const char *ttl_attr; /* TTL attribute name, NULL when not configured */
};

/* Checks a table name, key names and TTL attribute against DynamoDB's rules
 * and the lock format (the TTL attribute may be neither a key nor a lock
 * attribute). Returns false with a message in err (DDB_ERR_MAX bytes). */
bool ddb_keys_valid(const struct ddb_keys *k, char *err) __attribute__((warn_unused_result));

/* Builds the request body of req for the table k: UpdateItem for ACQUIRE,
 * RENEW and RELEASE, GetItem for READ, DeleteItem for DELETE,
 * TransactWriteItems with one ConditionCheck for CHECK, and for an ACQUIRE
 * with a session check (store.h) of its Update and the session's
 * ConditionCheck (ddb_op_for does not tell that one: ddb_slock.c sends it). req is validated
 * (name 1..STORE_NAME_MAX bytes of UTF-8, ids 1..STORE_ID_MAX, holder
 * 1..STORE_HOLDER_MAX, lease > 0, ttl >= 0). Returns a NUL-terminated body
 * to release with ddb_body_free(), or NULL with a message in err (bad
 * request or out-of-memory). *len gets strlen of the body. */
char *ddb_build_request(const struct ddb_keys *k, const struct store_req *req, size_t *len,
			char *err) __attribute__((warn_unused_result));

/* Table administration bodies, same ownership and errors as above. */
char *ddb_build_describe_table(const char *table, size_t *len, char *err)
	__attribute__((warn_unused_result));
/* On demand, string keys: pk (HASH) and, when sk is not NULL, sk (RANGE). */
char *ddb_build_create_table(const struct ddb_keys *k, size_t *len, char *err)
	__attribute__((warn_unused_result));
char *ddb_build_update_ttl(const char *table, const char *ttl_attr, size_t *len, char *err)
	__attribute__((warn_unused_result));

void ddb_body_free(char *body);

/* The body of a strongly consistent BatchGetItem of the lock items of
 * names[0..n) (each 1..STORE_NAME_MAX bytes, checked by the caller), byte
 * for byte what cJSON's unformatted print of the same tree gives. NULL
 * with a message in err on out-of-memory; ownership as ddb_build_request. */
char *ddb_build_batch_get(const struct ddb_keys *k, const char *const *names, unsigned n,
			  size_t *len, char *err) __attribute__((warn_unused_result));

/* ---- Scan (store_scan) ---- */

#define DDB_PK_MAX 2048 /* bytes of a partition key value */
#define DDB_SK_MAX 1024 /* bytes of a sort key value */

/* The body of one page of a scan of the lock items of k's table: Limit
 * limit, ConsistentRead, FilterExpression begins_with(#pk, :prefix) with
 * :prefix "LOCK#" (AND #sk = :lock, "LOCK", with a sort key), a
 * ProjectionExpression of the keys and the attributes ddb_parse_item
 * reads, so that a page holds nothing else, and ExclusiveStartKey from
 * cursor ("" or NULL: none; see ddb_parse_scan). Returns NULL with a
 * message in err on a cursor that is neither form, for this table, or
 * out-of-memory; ownership as ddb_build_request. */
char *ddb_build_scan(const struct ddb_keys *k, const char *cursor, unsigned limit, size_t *len,
		     char *err) __attribute__((warn_unused_result));

/* The key a scan cursor stands for: pk (DDB_PK_MAX + 1 bytes) and, when k
 * has a sort key, sk (DDB_SK_MAX + 1). False when cursor is neither
 * form (see ddb_parse_scan) or lacks the sort key of k or has one k has
 * not. */
bool ddb_scan_cursor_key(const struct ddb_keys *k, const char *cursor, char *pk, char *sk)
	__attribute__((warn_unused_result));

/* Parses a 2xx body of a Scan into res (res->entries has room for max):
 * the Items whose partition key is LOCK#<name> (name 1..STORE_NAME_MAX
 * bytes) and, with a sort key, whose sort key is LOCK, each read by
 * ddb_parse_item; others are skipped. res->cursor gets the cursor of
 * LastEvaluatedKey, "" without one: the lowercase hex of the lock name for
 * a lock item's key (store_cursor_of), else "~" and the base64url (no
 * padding) of the partition key's value, then, with a sort key, "." and
 * that of the sort key's (a page may end on another application's item).
 * Returns false with a message in err on a malformed body, more than max
 * Items, a lock item ddb_parse_item refuses, or a LastEvaluatedKey without
 * the table's string keys. */
bool ddb_parse_scan(const char *body, size_t len, const struct ddb_keys *k, unsigned max,
		    struct store_scan_result *res, char *err) __attribute__((warn_unused_result));

/* Parses a 2xx body of op into *item: the Attributes of an UpdateItem, the
 * Item of a GetItem, nothing (exists false) for DeleteItem and
 * TransactWriteItems. ttl_attr may be NULL. Returns false with a message
 * in err when the body is not JSON or an attribute has a wrong type, a bad
 * number or an oversized value. */
bool ddb_parse_output(enum ddb_op op, const char *body, size_t len, const char *ttl_attr,
		      struct lock_item *item, char *err) __attribute__((warn_unused_result));

/* Parses one attribute map (DynamoDB JSON, {"owner":{"S":"..."},...})
 * into *item, which it marks existing. Same errors, except for _type and
 * fence, which another application's item may hold in any form: they are
 * read as they are (a _type of another type as empty, a fence that is no
 * int64 as fence_bad) for the core to refuse; nor for freed and freedBy,
 * never an error either: a freed that is no int64 reads as 0, a freedBy
 * other than "force" as not forced, and forced only with a freed. cjson is
 * a cJSON *. */
bool ddb_parse_item(const void *cjson, const char *ttl_attr, struct lock_item *item, char *err)
	__attribute__((warn_unused_result));

/* One entry of CancellationReasons, in the order of the request's items. */
struct ddb_reason {
	char code[DDB_TYPE_MAX]; /* "None", "ConditionalCheckFailed"... */
	bool has_item;
	struct lock_item item;
};

/* An error response. */
struct ddb_error {
	char type[DDB_TYPE_MAX];     /* "ResourceNotFoundException", prefix stripped */
	char message[STORE_MSG_MAX]; /* message or Message, truncated */
	bool has_item;		     /* ConditionalCheckFailedException's Item */
	struct lock_item item;
	unsigned nreasons; /* TransactionCanceledException, at most DDB_REASONS_MAX */
	struct ddb_reason reasons[DDB_REASONS_MAX];
};

/* Parses an error body: DynamoDB JSON ({"__type":"com.amazonaws...#Type",
 * "message":...}) or the XML of an <ErrorResponse> (moto's answer to some
 * signature failures). Always fills *out: when the body is neither, type is
 * empty and message holds a printable prefix of the body. Returns false
 * with a message in err when an Item of the error is malformed. */
bool ddb_parse_error(const char *body, size_t len, const char *ttl_attr, struct ddb_error *out,
		     char *err) __attribute__((warn_unused_result));

/* What DescribeTable says about the keys and the state of a table. */
struct ddb_table_desc {
	char pk[DDB_KEY_NAME_MAX + 1];
	char sk[DDB_KEY_NAME_MAX + 1]; /* empty without a sort key */
	char pk_type, sk_type;	       /* 'S', 'N' or 'B'; 0 when unknown */
	char status[32];	       /* "ACTIVE", "CREATING"... */
	char arn[256];		       /* TableArn: region and account; "" when absent */
	/* A global table (version 2019.11.21) lists its replicas: nreplicas
	 * > 0, their regions in replicas (comma-separated, cut at its size).
	 * A table whose replicas were all removed keeps its version alone. */
	unsigned nreplicas;
	char replicas[128];
	char global_version[16]; /* GlobalTableVersion, "" when absent */
};

/* Parses a DescribeTable (or CreateTable: both carry the description) body.
 * Returns false with a message in err on a malformed description. */
bool ddb_parse_table(const char *body, size_t len, struct ddb_table_desc *out, char *err)
	__attribute__((warn_unused_result));

/* CRC32 (IEEE 802.3, as x-amz-crc32 carries it) of len bytes. */
uint32_t ddb_crc32(const void *data, size_t len);

/* Strict decimal int64 (optional '-', digits only, no overflow). */
bool ddb_parse_int64(const char *s, int64_t *out) __attribute__((warn_unused_result));

/* True when s[0..len) is valid UTF-8 without NUL bytes. */
bool ddb_utf8_valid(const char *s, size_t len);

/* A channel's answer (core/store_chan.h; ddb_chan.c): the Item of a
 * GetItem (get) or the Attributes of the publish's UpdateItem, into r
 * (.found, .seq, the last .n entries), each entry's message and origin
 * copied into a row of rows (STORE_CHAN_KEEP of them); *total: the log's
 * length (a publish's trim goes by it). False, r FATAL "BadResponse",
 * when the body or the item is no channel. */
#define DDB_CHAN_ROW (STORE_CHAN_MSG_MAX + 3 + STORE_ID_MAX + 1) /* a message, then its origin */
bool ddb_parse_chan(const char *body, size_t len, bool get, struct store_chan_result *r,
		    unsigned char (*rows)[DDB_CHAN_ROW], unsigned *total);

#endif
