/*
 * ddb_standin_int: the stand-in's bodies: what a request leasegate sends
 * asks for, as a request of the embedded store (struct store_req,
 * store_session_req or store_revoke_req, or a scan's page), and the JSON
 * of the answers. Lock items: ddb_standin_ops.c; session items,
 * revocations and the transactions of `--heartbeat replica`:
 * ddb_standin_sess.c. Private to ddb_standin*.c.
 */
#ifndef LG_TEST_DDB_STANDIN_INT_H
#define LG_TEST_DDB_STANDIN_INT_H

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <stdbool.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/store.h"
#include "core/store/store_batch.h"
#include "core/store/store_revoke.h"
#include "core/store/store_session.h"

#define SD_PK "pk" /* the stand-in's one partition key */

/* Which embedded-store request a DynamoDB request is. */
enum sd_kind {
	SD_ADMIN,   /* DescribeTable, CreateTable, UpdateTimeToLive: no item */
	SD_LOCK,    /* .req (store_submit) */
	SD_SESSION, /* .sreq (store_session_submit) */
	SD_REVOKE,  /* .rreq (store_revoke_submit) */
	SD_SCAN,    /* a page of store_scan from .cursor, .limit items */
	SD_BATCH,   /* store_batch_read of .names[0..items) */
	SD_KIND_COUNT
};

/* The form of a TransactWriteItems, which its answer's reasons follow. */
enum sd_tx {
	SD_TX_NONE,
	SD_TX_CHECK,	/* LOCK.CHECK: one ConditionCheck of a lock */
	SD_TX_TAKEOVER, /* a lock's Update, the session's ConditionCheck */
	SD_TX_END	/* a lock's Update, its revocation entry, the session's revSeq */
};

struct sd_req {
	enum ddb_op dop;
	enum sd_kind kind;
	enum sd_tx tx;
	unsigned items;	      /* items the request reads or writes */
	struct store_req req; /* strings point into the parsed body */
	struct store_session_req sreq;
	struct store_revoke_req rreq;
	char replica[STORE_SESSION_REPLICA_MAX + 1]; /* .sreq's, from its key */
	char incarnation[STORE_SESSION_INC_LEN + 1];
	char cursor[STORE_CURSOR_MAX + 1];  /* SD_SCAN */
	unsigned limit;			    /* SD_SCAN */
	const char *names[STORE_BATCH_MAX]; /* SD_BATCH: the lock names */
	const char *table;
	const char *ttl_attr; /* the name of #x, when the request has one */
};

/* Decodes body, a request of dop, into *out. Returns the parsed body
 * (out's strings live in it; cJSON_Delete it after the store took the
 * request), or NULL with a message in err (DDB_ERR_MAX bytes). */
cJSON *sd_decode(enum ddb_op dop, const char *body, size_t len, struct sd_req *out, char *err);

/* For sd_decode: the session and revocation requests (ddb_standin_sess.c).
 * key is the request's "pk"; src the request (or a transaction's part).
 * False with err when it is none leasegate sends. */
bool sd_decode_session_write(const cJSON *src, const char *key, struct sd_req *out, char *err);
bool sd_decode_batch_get(const cJSON *root, struct sd_req *out, char *err);
bool sd_decode_revoke(const cJSON *src, const char *key, struct sd_req *out, char *err);
/* A transaction of two or three parts (the takeover, an ending), its
 * lock's Update decoded already into out->req. */
bool sd_decode_tx_parts(const cJSON *items, struct sd_req *out, char *err);
bool sd_split_session_key(const char *key, struct sd_req *out);

/* The S or N text of an attribute value {"S": "..."} in vals, or NULL;
 * and as a number (0 when absent). */
const char *sd_val(const cJSON *vals, const char *key);
int64_t sd_num(const cJSON *vals, const char *key);
const char *sd_str(const cJSON *obj, const char *key);

/* {"<member>": item} (member NULL: the item map alone), the item at
 * LOCK#name as DynamoDB would give it; nothing for an absent item when
 * member is set ("{}"). */
void sd_put_item(struct evbuffer *b, const char *member, const char *name,
		 const struct lock_item *it, const char *ttl_attr);

/* The body of a store result for r: 200 with the item (UpdateItem: ALL_NEW,
 * GetItem: Item; a transaction: none), or 400 with
 * ConditionalCheckFailedException (a transaction:
 * TransactionCanceledException with a reason per part) and the refusing
 * item; 500 for the store's other failures. Returns the HTTP status. */
int sd_put_result(struct evbuffer *b, const struct sd_req *r, const struct store_result *res,
		  const char *ttl_attr);

/* The same for a session item's request (200 with ALL_NEW, 400 with the
 * item as it was; a READ: BatchGetItem's Responses), a revocations'
 * request (GetItem of the set, the DELETE's UpdateItem) and a scan's page. */
int sd_put_session(struct evbuffer *b, const struct sd_req *r,
		   const struct store_session_result *res, const char *ttl_attr);
int sd_put_revoke(struct evbuffer *b, const struct sd_req *r,
		  const struct store_revoke_result *res);
int sd_put_scan(struct evbuffer *b, const struct store_scan_result *res, const char *ttl_attr);
/* A batch read's answer: BatchGetItem's Responses of the items there (no
 * key left unprocessed). */
int sd_put_batch(struct evbuffer *b, const struct sd_req *r, const struct store_batch_result *res,
		 const char *ttl_attr);

/* The text of a JSON string, escaped, without its quotes; with them. */
void sd_put_esc(struct evbuffer *b, const char *s);
void sd_put_str(struct evbuffer *b, const char *s);

/* The body of a table administration request (200); replicas (comma
 * list, NULL none): a global table's DescribeTable. */
void sd_put_admin(struct evbuffer *b, const struct sd_req *r, const char *ttl_attr,
		  const char *replicas);

/* An error body {"__type": "com.amazonaws.dynamodb.v20120810#<type>", ...}. */
void sd_put_error(struct evbuffer *b, const char *type, const char *message);

/* The body of a store failure other than a refusal (500). */
int sd_put_failure(struct evbuffer *b, enum store_status st, const char *message);

#endif
