/*
 * test_ddb_json: every request body ddb_json builds, compared with the
 * expected JSON structurally (both parsed), the operations' names and the
 * key schema's checks. The answers it parses: test_ddb_parse.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>
#include <cmocka.h>

#include "core/store/dynamodb/ddb_json.h"
#include "core/store/store_batch.h"

static const struct ddb_keys k_pk = {"Locks", "pk", NULL, NULL};
static const struct ddb_keys k_sk_ttl = {"Shop", "PK", "SK", "expiresAt"};

#define KEY_PK "\"Key\":{\"pk\":{\"S\":\"LOCK#a\"}}"
/* The acquire's guard: the item, if any, is a lock whose fence can rise,
 * held shared by nobody, with no readers admitted first. */
#define GUARD                                                                                      \
	"(attribute_not_exists(#k) OR (#t = :t AND (attribute_not_exists(#f) OR "                  \
	"(attribute_type(#f, :n) AND #f >= :f0 AND #f < :ftop)) AND (attribute_not_exists(#o) "    \
	"OR (attribute_exists(#r) AND attribute_exists(#l))) AND (attribute_not_exists(#sc) OR "   \
	"#sc = :f0) AND NOT attribute_type(#ra, :ss)))"
/* ... and not written by this very acquire (its arvn). */
#define NOT_MY_ARVN "(attribute_not_exists(#a) OR #a <> :r)"
#define GUARD_VALUES                                                                               \
	"\":ss\":{\"S\":\"SS\"},\":n\":{\"S\":\"N\"},\":f0\":{\"N\":\"0\"},\":ftop\":{\"N\":"      \
	"\"9223372036854775807\"}"
#define KEY_SK "\"Key\":{\"PK\":{\"S\":\"LOCK#a\"},\"SK\":{\"S\":\"LOCK\"}}"

struct build_case {
	const char *what;
	const struct ddb_keys *keys;
	struct store_req req;
	const char *want; /* NULL: the request is refused */
};

static const struct build_case build_cases[] = {
	{"acquire free or mine, holder",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .holder = "pod-1",
	  .lease_ms = 30000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\",\"#t\":\"_type\","
	 "\"#f\":\"fence\",\"#"
	 "a\":\"arvn\",\"#w\":"
	 "\"waiter\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"30000\"},"
	 "\":h\":{\"S\":\"pod-1\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l, #h = :h REMOVE "
	 "#sh, #se, #sl ADD #f "
	 ":one\","
	 "\"ConditionExpression\":\"attribute_not_exists(#o) AND attribute_not_exists(#w) "
	 "AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire takeover on the fence seen",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .seen_fence = 7,
	  .has_seen_fence = true,
	  .lease_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\",\"#t\":\"_type\","
	 "\"#f\":\"fence\",\"#"
	 "a\":\"arvn\","
	 "\"#w\":\"waiter\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},\":one\":{\"N\":\"1\"},"
	 "\":s\":{\"S\":\"r0\"},\":sf\":{\"N\":\"7\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l REMOVE #h, #sh, "
	 "#se, #sl "
	 "ADD #f :one\","
	 "\"ConditionExpression\":\"#f = :sf AND ((attribute_not_exists(#o) AND "
	 "attribute_not_exists(#w)) OR #r = :s) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire of an announced waiter on no fence seen",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .waiter = "w1",
	  .has_seen_fence = true,
	  .lease_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\",\"#t\":\"_type\","
	 "\"#f\":\"fence\",\"#"
	 "a\":\"arvn\","
	 "\"#w\":\"waiter\",\"#wm\":\"waiterMs\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#"
	 "sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},\":one\":{\"N\":\"1\"},"
	 "\":w\":{\"S\":\"w1\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l REMOVE #h, #w, "
	 "#wm, #sh, #se, #sl ADD #f :one\","
	 "\"ConditionExpression\":\"attribute_not_exists(#f) AND (attribute_not_exists(#w) OR #w "
	 "= :w) AND attribute_not_exists(#o) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire takeover, no holder, ttl, sort key",
	 &k_sk_ttl,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .lease_ms = 1000,
	  .ttl = 1800000000},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#k\":\"PK\",\"#sc\":\"scount\",\"#ra\":\"radmit\","
	 "\"#t\":\"_type\","
	 "\"#f\":\"fence\",\"#"
	 "a\":\"arvn\","
	 "\"#w\":\"waiter\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":x\":{\"N\":\"1800000000\"},\":r\":{\"S\":\"r1\"},"
	 "\":l\":{\"N\":\"1000\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l, #x = :x REMOVE "
	 "#h, #sh, #se, #sl "
	 "ADD #f :one\","
	 "\"ConditionExpression\":\"((attribute_not_exists(#o) AND attribute_not_exists(#w)) OR "
	 "#r = :s) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"takeover of a session-mode holder: session check, session mode, sort key, ttl",
	 &k_sk_ttl,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .seen_fence = 7,
	  .has_seen_fence = true,
	  .lease_ms = 1000,
	  .ttl = 1800000000,
	  .session = "SESSION#b#1",
	  .seen_session = "SESSION#a#0",
	  .sess_check = STORE_SESS_CHECK_RVN,
	  .sess_rvn = "s0"},
	 "{\"TransactItems\":[{\"Update\":{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#k\":\"PK\",\"#sc\":\"scount\",\"#ra\":\"radmit\","
	 "\"#t\":\"_type\",\"#f\":\"fence\",\"#a\":\"arvn\",\"#w\":\"waiter\","
	 "\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"315360000000\"},"
	 "\":se\":{\"S\":\"SESSION#b#1\"},\":sl\":{\"N\":\"1000\"},"
	 "\":ps\":{\"S\":\"SESSION#a#0\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"},\":sf\":{\"N\":\"7\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l, #se = :se, "
	 "#sl = :sl REMOVE #h, #sh, #x ADD #f :one\","
	 "\"ConditionExpression\":\"#f = :sf AND ((attribute_not_exists(#o) AND "
	 "attribute_not_exists(#w)) OR #r = :s AND #se = :ps) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}},"
	 "{\"ConditionCheck\":{\"TableName\":\"Shop\",\"Key\":{\"PK\":{\"S\":\"SESSION#a#0\"},"
	 "\"SK\":{\"S\":\"LOCK\"}},\"ConditionExpression\":\"#r = :sr\","
	 "\"ExpressionAttributeNames\":{\"#r\":\"rvn\"},"
	 "\"ExpressionAttributeValues\":{\":sr\":{\"S\":\"s0\"}},"
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}}]}"},
	{"takeover on an absent session, no session recorded: attribute_not_exists",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .seen_fence = 7,
	  .has_seen_fence = true,
	  .lease_ms = 1000,
	  .seen_session = "SESSION#a#0",
	  .sess_check = STORE_SESS_CHECK_ABSENT},
	 "{\"TransactItems\":[{\"Update\":{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\","
	 "\"#t\":\"_type\",\"#f\":\"fence\",\"#a\":\"arvn\",\"#w\":\"waiter\","
	 "\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":ps\":{\"S\":\"SESSION#a#0\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"},\":sf\":{\"N\":\"7\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l "
	 "REMOVE #h, #sh, #se, #sl ADD #f :one\","
	 "\"ConditionExpression\":\"#f = :sf AND ((attribute_not_exists(#o) AND "
	 "attribute_not_exists(#w)) OR #r = :s AND #se = :ps) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}},"
	 "{\"ConditionCheck\":{\"TableName\":\"Locks\",\"Key\":{\"pk\":{\"S\":\"SESSION#a#0\"}},"
	 "\"ConditionExpression\":\"attribute_not_exists(#k)\","
	 "\"ExpressionAttributeNames\":{\"#k\":\"pk\"},"
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}}]}"},
	{"takeover of a holder without a session (seen_session \"\")",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .lease_ms = 1000,
	  .seen_session = ""},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\","
	 "\"#t\":\"_type\",\"#f\":\"fence\",\"#a\":\"arvn\",\"#w\":\"waiter\","
	 "\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l "
	 "REMOVE #h, #sh, #se, #sl ADD #f :one\","
	 "\"ConditionExpression\":\"((attribute_not_exists(#o) AND "
	 "attribute_not_exists(#w)) OR #r = :s AND attribute_not_exists(#se)) AND " NOT_MY_ARVN
	 " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"session on a release: refused",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .session = "SESSION#a#0"},
	 NULL},
	{"acquire unconditional",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .lease_ms = 1000,
	  .unconditional = true},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#t\":\"_type\",\"#f\":\"fence\",\"#a\":\"arvn\",\"#sh\":"
	 "\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},\":one\":{\"N\":\"1\"}},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l REMOVE #h, #sh, "
	 "#se, #sl "
	 "ADD #f "
	 ":one\","
	 "\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire of an announced waiter, takeover",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .seen_rvn = "r0",
	  .holder = "h",
	  .waiter = "w1",
	  .lease_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\",\"#t\":\"_type\","
	 "\"#f\":\"fence\",\"#"
	 "a\":\"arvn\",\"#w\":"
	 "\"waiter\","
	 "\"#wm\":\"waiterMs\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":h\":{\"S\":\"h\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":s\":{\"S\":\"r0\"},\":w\":{\"S\":\"w1\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l, #h = :h REMOVE "
	 "#w, #wm, #sh, #se, #sl "
	 "ADD #f :one\","
	 "\"ConditionExpression\":\"(attribute_not_exists(#w) OR #w = :w) AND "
	 "(attribute_not_exists(#o) OR #r = :s) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"acquire of an announced free lock",
	 &k_pk,
	 {.op = STORE_ACQUIRE,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r1",
	  .holder = "h",
	  .waiter = "w1",
	  .lease_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"pk\",\"#sc\":\"scount\",\"#ra\":\"radmit\",\"#t\":\"_type\","
	 "\"#f\":\"fence\",\"#"
	 "a\":\"arvn\",\"#w\":"
	 "\"waiter\","
	 "\"#wm\":\"waiterMs\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r1\"},\":l\":{\"N\":\"1000\"},"
	 "\":h\":{\"S\":\"h\"},\":o\":{\"S\":\"o1\"},\":t\":{\"S\":\"LOCK\"},"
	 "\":one\":{\"N\":\"1\"},\":w\":{\"S\":\"w1\"}," GUARD_VALUES "},"
	 "\"UpdateExpression\":\"SET #o = :o, #t = :t, #a = :r, #r = :r, #l = :l, #h = :h REMOVE "
	 "#w, #wm, #sh, #se, #sl "
	 "ADD #f :one\","
	 "\"ConditionExpression\":\"(attribute_not_exists(#w) OR #w = :w) AND "
	 "attribute_not_exists(#o) AND " NOT_MY_ARVN " AND " GUARD "\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"announce a waiter",
	 &k_pk,
	 {.op = STORE_ANNOUNCE, .name = "a", .waiter = "w1", .waiter_ms = 1000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#w\":\"waiter\",\"#wm\":\"waiterMs\",\"#o\":\"owner\","
	 "\"#t\":\"_type\"},"
	 "\"ExpressionAttributeValues\":{\":w\":{\"S\":\"w1\"},\":wm\":{\"N\":\"1000\"},"
	 "\":t\":{\"S\":\"LOCK\"}},"
	 "\"UpdateExpression\":\"SET #w = :w, #wm = :wm\","
	 "\"ConditionExpression\":\"attribute_exists(#o) AND attribute_not_exists(#w) AND #t = "
	 ":t\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"withdraw a waiter",
	 &k_pk,
	 {.op = STORE_WITHDRAW, .name = "a", .waiter = "w1"},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#w\":\"waiter\",\"#wm\":\"waiterMs\"},"
	 "\"ExpressionAttributeValues\":{\":w\":{\"S\":\"w1\"}},"
	 "\"UpdateExpression\":\"REMOVE #w, #wm\","
	 "\"ConditionExpression\":\"#w = :w\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"announce without a waiter id",
	 &k_pk,
	 {.op = STORE_ANNOUNCE, .name = "a", .waiter_ms = 5},
	 NULL},
	{"announce without a poll interval",
	 &k_pk,
	 {.op = STORE_ANNOUNCE, .name = "a", .waiter = "w"},
	 NULL},
	{"renew with holder and ttl",
	 &k_sk_ttl,
	 {.op = STORE_RENEW,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r2",
	  .holder = "h",
	  .lease_ms = 5000,
	  .ttl = 7},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#x\":\"expiresAt\",\"#o\":\"owner\",\"#r\":\"rvn\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":x\":{\"N\":\"7\"},\":r\":{\"S\":\"r2\"},"
	 "\":l\":{\"N\":\"5000\"},\":h\":{\"S\":\"h\"},\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"SET #r = :r, #l = :l, #h = :h, #x = :x REMOVE #se, #sl\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"renew without holder",
	 &k_pk,
	 {.op = STORE_RENEW, .name = "a", .owner = "o1", .rvn = "r2", .lease_ms = 5000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r2\"},\":l\":{\"N\":\"5000\"},"
	 "\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"SET #r = :r, #l = :l REMOVE #h, #se, #sl\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"renew on the rvn the lease last wrote",
	 &k_pk,
	 {.op = STORE_RENEW,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r3",
	  .seen_rvn = "r2",
	  .holder = "h",
	  .lease_ms = 5000},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#r\":\"rvn\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":r\":{\"S\":\"r3\"},\":l\":{\"N\":\"5000\"},"
	 "\":h\":{\"S\":\"h\"},\":o\":{\"S\":\"o1\"},\":s\":{\"S\":\"r2\"}},"
	 "\"UpdateExpression\":\"SET #r = :r, #l = :l, #h = :h REMOVE #se, #sl\","
	 "\"ConditionExpression\":\"#o = :o AND (#r = :s OR #r = :r)\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"renew with an empty seen rvn",
	 &k_pk,
	 {.op = STORE_RENEW,
	  .name = "a",
	  .owner = "o1",
	  .rvn = "r3",
	  .seen_rvn = "",
	  .lease_ms = 1},
	 NULL},
	{"release with ttl",
	 &k_sk_ttl,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .ttl = 9},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#x\":"
	 "\"expiresAt\",\"#o\":\"owner\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"},\":x\":{\"N\":\"9\"},\":o\":{\"S\":"
	 "\"o1\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, :na), #x "
	 "= :x\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release of a lost lease on its rvn and session",
	 &k_pk,
	 {.op = STORE_RELEASE,
	  .name = "a",
	  .owner = "o1",
	  .seen_rvn = "r1",
	  .seen_session = "SESSION#rep#0123456789abcdef0123456789abcdef"},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#o\":\"owner\","
	 "\"#r\":\"rvn\",\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#sh\":\"secretHash\","
	 "\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"},\":o\":{\"S\":\"o1\"},"
	 "\":s\":{\"S\":\"r1\"},"
	 "\":ps\":{\"S\":\"SESSION#rep#0123456789abcdef0123456789abcdef\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, :na)\","
	 "\"ConditionExpression\":\"#o = :o AND #r = :s AND #se = :ps\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release of a lost lease with a token: refused",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .seen_rvn = "r1", .token = 4},
	 NULL},
	{"release unconditional never creates",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .unconditional = true},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#o\":\"owner\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\","
	 "\"#k\":\"pk\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, :na)\","
	 "\"ConditionExpression\":\"attribute_exists(#k)\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release from outside: freed marker by token",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .token = 7},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#o\":\"owner\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\","
	 "\"#fr\":\"freed\",\"#fb\":\"freedBy\",\"#sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":"
	 "\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"},\":o\":{\"S\":\"o1\"},\":fr\":{"
	 "\"N\":\"7\"},"
	 "\":fb\":{\"S\":\"token\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, :na), "
	 "#fr = :fr, #fb = :fb\","
	 "\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release forced, unconditional, ttl: freed marker by force",
	 &k_sk_ttl,
	 {.op = STORE_RELEASE,
	  .name = "a",
	  .token = INT64_MAX,
	  .forced = true,
	  .ttl = 9,
	  .unconditional = true},
	 "{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#x\":"
	 "\"expiresAt\",\"#o\":\"owner\",\"#l\":\"leaseMs\","
	 "\"#h\":\"holder\",\"#k\":\"PK\",\"#fr\":\"freed\",\"#fb\":\"freedBy\",\"#sh\":"
	 "\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"},\":x\":{\"N\":\"9\"},"
	 "\":fr\":{\"N\":\"9223372036854775807\"},\":fb\":{\"S\":\"force\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, :na), "
	 "#fr = :fr, #fb = :fb, #x = :x\","
	 "\"ConditionExpression\":\"attribute_exists(#k)\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"release forced without a token: no marker",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .forced = true},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#o\":\"owner\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#"
	 "sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"},\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, "
	 ":na)\",\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"ttl ignored without a ttl attribute",
	 &k_pk,
	 {.op = STORE_RELEASE, .name = "a", .owner = "o1", .ttl = 9},
	 "{\"TableName\":\"Locks\"," KEY_PK ","
	 "\"ExpressionAttributeNames\":{\"#ra\":\"radmit\",\"#rw\":\"rwaiters\",\"#o\":\"owner\","
	 "\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#"
	 "sh\":\"secretHash\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
	 "\"ExpressionAttributeValues\":{\":na\":{\"S\":\"-\"},\":o\":{\"S\":\"o1\"}},"
	 "\"UpdateExpression\":\"REMOVE #o, #l, #h, #sh, #rw, #se, #sl SET #ra = "
	 "if_not_exists(#rw, "
	 ":na)\",\"ConditionExpression\":\"#o = :o\","
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}"},
	{"read",
	 &k_sk_ttl,
	 {.op = STORE_READ, .name = "a"},
	 "{\"TableName\":\"Shop\"," KEY_SK ",\"ConsistentRead\":true}"},
	{"delete",
	 &k_pk,
	 {.op = STORE_DELETE, .name = "a"},
	 "{\"TableName\":\"Locks\"," KEY_PK "}"},
	{"check",
	 &k_sk_ttl,
	 {.op = STORE_CHECK, .name = "a", .owner = "o1", .token = 42},
	 "{\"TransactItems\":[{\"ConditionCheck\":{\"TableName\":\"Shop\"," KEY_SK ","
	 "\"ConditionExpression\":\"#o = :o AND #f = :f\","
	 "\"ExpressionAttributeNames\":{\"#o\":\"owner\",\"#f\":\"fence\"},"
	 "\"ExpressionAttributeValues\":{\":o\":{\"S\":\"o1\"},\":f\":{\"N\":\"42\"}},"
	 "\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"}}]}"},
	{"name with quotes and UTF-8 is escaped",
	 &k_pk,
	 {.op = STORE_DELETE, .name = "q\"\\\xc3\xa9"},
	 "{\"TableName\":\"Locks\",\"Key\":{\"pk\":{\"S\":\"LOCK#q\\\"\\\\\xc3\xa9\"}}}"},
	/* refused requests */
	{"empty name", &k_pk, {.op = STORE_READ, .name = ""}, NULL},
	{"no name", &k_pk, {.op = STORE_READ}, NULL},
	{"invalid UTF-8 name", &k_pk, {.op = STORE_READ, .name = "a\xff"}, NULL},
	{"acquire without owner",
	 &k_pk,
	 {.op = STORE_ACQUIRE, .name = "a", .rvn = "r", .lease_ms = 1},
	 NULL},
	{"acquire without rvn",
	 &k_pk,
	 {.op = STORE_ACQUIRE, .name = "a", .owner = "o", .lease_ms = 1},
	 NULL},
	{"acquire zero lease",
	 &k_pk,
	 {.op = STORE_ACQUIRE, .name = "a", .owner = "o", .rvn = "r"},
	 NULL},
	{"owner too long",
	 &k_pk,
	 {.op = STORE_CHECK,
	  .name = "a",
	  .owner = "0123456789012345678901234567890123456789012345678901234567890123X"},
	 NULL},
	{"negative ttl", &k_pk, {.op = STORE_DELETE, .name = "a", .ttl = -1}, NULL},
	{"unknown op", &k_pk, {.op = STORE_OP_COUNT, .name = "a"}, NULL},
	{"scan is no request", &k_pk, {.op = STORE_SCAN, .name = "a"}, NULL},
};

static void assert_json_eq(const char *got, const char *want)
{
	cJSON *g = cJSON_Parse(got), *w = cJSON_Parse(want);
	assert_non_null(w);
	assert_non_null(g);
	if (!cJSON_Compare(g, w, true))
		fail_msg("got  %s\nwant %s", got, want);
	cJSON_Delete(g);
	cJSON_Delete(w);
}

static void test_build_requests(void **state)
{
	for (size_t i = 0; i < sizeof build_cases / sizeof build_cases[0]; i++) {
		const struct build_case *t = &build_cases[i];
		char err[DDB_ERR_MAX] = "";
		size_t len = 0;
		char *body = ddb_build_request(t->keys, &t->req, &len, err);
		print_message("case: %s\n", t->what);
		if (!t->want) {
			assert_null(body);
			assert_true(err[0] != '\0');
			continue;
		}
		assert_non_null(body);
		assert_int_equal(len, strlen(body));
		assert_json_eq(body, t->want);
		ddb_body_free(body);
	}
}

/* The writer's bytes, not only its JSON: a renewal as DynamoDB gets it
 * (members in order, no whitespace), strings copied whole or escaped,
 * numbers in decimal up to INT64_MAX. */
static void test_build_exact_bytes(void **state)
{
	static const struct ddb_keys k = {"Locks", "pk", NULL, "exp"};
	struct store_req r = {.op = STORE_RENEW,
			      .name = "a\"b\\c",
			      .owner = "o1",
			      .rvn = "r2",
			      .holder = "h\x01\t\n",
			      .lease_ms = INT64_MAX,
			      .ttl = 1234567890};
	char err[DDB_ERR_MAX] = "";
	size_t len = 0;
	char *body = ddb_build_request(&k, &r, &len, err);
	assert_non_null(body);
	assert_string_equal(
		body,
		"{\"TableName\":\"Locks\",\"Key\":{\"pk\":{\"S\":\"LOCK#a\\\"b\\\\c\"}},"
		"\"ExpressionAttributeNames\":{\"#x\":\"exp\",\"#o\":\"owner\",\"#r\":\"rvn\","
		"\"#l\":\"leaseMs\",\"#h\":\"holder\",\"#se\":\"session\",\"#sl\":\"sleaseMs\"},"
		"\"ExpressionAttributeValues\":{\":x\":{"
		"\"N\":\"1234567890\"},\":r\":{\"S\":\"r2\"},\":l\":{\"N\":"
		"\"9223372036854775807\"},\":h\":{\"S\":\"h\\u0001\\t\\n\"},\":o\":{\"S\":"
		"\"o1\"}},\"UpdateExpression\":\"SET #r = :r, #l = :l, #h = :h, #x = :x REMOVE "
		"#se, #sl\","
		"\"ConditionExpression\":\"#o = :o\",\"ReturnValuesOnConditionCheckFailure\":"
		"\"ALL_OLD\",\"ReturnValues\":\"ALL_NEW\"}");
	assert_int_equal(len, strlen(body));
	ddb_body_free(body);
	/* a lease of 1 ms without a holder nor TTL */
	r.holder = NULL;
	r.lease_ms = 1;
	r.ttl = 0;
	body = ddb_build_request(&k, &r, &len, err);
	assert_non_null(body);
	assert_non_null(strstr(body, "\":l\":{\"N\":\"1\"}"));
	assert_non_null(
		strstr(body, "\"UpdateExpression\":\"SET #r = :r, #l = :l REMOVE #h, #se, #sl\""));
	ddb_body_free(body);
}

/* cJSON's unformatted print of the BatchGetItem the sweep sends: the
 * bytes the writer must give. */
static char *batch_by_cjson(const struct ddb_keys *k, const char *const *names, unsigned n)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *t = cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "RequestItems"), k->table);
	cJSON *list = cJSON_AddArrayToObject(t, "Keys");
	char pk[5 + STORE_NAME_MAX + 1];
	for (unsigned i = 0; i < n; i++) {
		cJSON *key = cJSON_CreateObject();
		snprintf(pk, sizeof pk, "LOCK#%s", names[i]);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(key, k->pk), "S", pk);
		if (k->sk)
			cJSON_AddStringToObject(cJSON_AddObjectToObject(key, k->sk), "S", "LOCK");
		cJSON_AddItemToArray(list, key);
	}
	cJSON_AddBoolToObject(t, "ConsistentRead", 1);
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

/* The sweep's BatchGetItem: its exact bytes, and the same bytes as
 * cJSON's print for names that need escapes, UTF-8, the longest name,
 * with and without a sort key, one name to STORE_BATCH_MAX. */
static void test_build_batch_get(void **state)
{
	static const char *const two[] = {"a", "jobs/\"42\"\\x"};
	char err[DDB_ERR_MAX] = "";
	size_t len = 0;
	char *body = ddb_build_batch_get(&k_pk, two, 2, &len, err);
	assert_non_null(body);
	assert_string_equal(body, "{\"RequestItems\":{\"Locks\":{\"Keys\":[{\"pk\":{\"S\":"
				  "\"LOCK#a\"}},{\"pk\":{\"S\":\"LOCK#jobs/\\\"42\\\"\\\\x\"}}],"
				  "\"ConsistentRead\":true}}}");
	assert_int_equal(len, strlen(body));
	ddb_body_free(body);

	static char longest[STORE_NAME_MAX + 1];
	memset(longest, 'n', STORE_NAME_MAX);
	const char *names[STORE_BATCH_MAX];
	static const char *const kinds[] = {"x", "\x01\t\n\x1f", "caf\xc3\xa9/\xe2\x82\xac",
					    longest, "a\"b\\c"};
	for (unsigned i = 0; i < STORE_BATCH_MAX; i++)
		names[i] = kinds[i % 5];
	const struct ddb_keys *keys[] = {&k_pk, &k_sk_ttl};
	const unsigned counts[] = {1, 5, STORE_BATCH_MAX};
	for (unsigned ki = 0; ki < 2; ki++)
		for (unsigned ci = 0; ci < 3; ci++) {
			char *want = batch_by_cjson(keys[ki], names, counts[ci]);
			char *got = ddb_build_batch_get(keys[ki], names, counts[ci], &len, err);
			assert_non_null(want);
			assert_non_null(got);
			assert_string_equal(got, want);
			assert_int_equal(len, strlen(want));
			ddb_body_free(got);
			cJSON_free(want);
		}
}

static void test_op_mapping(void **state)
{
	assert_int_equal(ddb_op_for(STORE_ACQUIRE), DDB_UPDATE_ITEM);
	assert_int_equal(ddb_op_for(STORE_RENEW), DDB_UPDATE_ITEM);
	assert_int_equal(ddb_op_for(STORE_RELEASE), DDB_UPDATE_ITEM);
	assert_int_equal(ddb_op_for(STORE_READ), DDB_GET_ITEM);
	assert_int_equal(ddb_op_for(STORE_DELETE), DDB_DELETE_ITEM);
	assert_int_equal(ddb_op_for(STORE_CHECK), DDB_TRANSACT_WRITE_ITEMS);
	assert_int_equal(ddb_op_for(STORE_SCAN), DDB_SCAN);
	assert_string_equal(ddb_op_name(DDB_TRANSACT_WRITE_ITEMS), "TransactWriteItems");
	assert_string_equal(ddb_op_name(DDB_SCAN), "Scan");
	assert_string_equal(ddb_op_name(DDB_OP_COUNT), "?");
}

static void test_build_admin(void **state)
{
	char err[DDB_ERR_MAX];
	size_t len;
	char *b = ddb_build_describe_table("Locks", &len, err);
	assert_json_eq(b, "{\"TableName\":\"Locks\"}");
	ddb_body_free(b);
	b = ddb_build_create_table(&k_sk_ttl, &len, err);
	assert_json_eq(
		b, "{\"TableName\":\"Shop\",\"BillingMode\":\"PAY_PER_REQUEST\","
		   "\"AttributeDefinitions\":[{\"AttributeName\":\"PK\",\"AttributeType\":\"S\"},"
		   "{\"AttributeName\":\"SK\",\"AttributeType\":\"S\"}],"
		   "\"KeySchema\":[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"},"
		   "{\"AttributeName\":\"SK\",\"KeyType\":\"RANGE\"}]}");
	ddb_body_free(b);
	b = ddb_build_create_table(&k_pk, &len, err);
	assert_json_eq(
		b, "{\"TableName\":\"Locks\",\"BillingMode\":\"PAY_PER_REQUEST\","
		   "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
		   "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}");
	ddb_body_free(b);
	b = ddb_build_update_ttl("Shop", "expiresAt", &len, err);
	assert_json_eq(b, "{\"TableName\":\"Shop\",\"TimeToLiveSpecification\":"
			  "{\"Enabled\":true,\"AttributeName\":\"expiresAt\"}}");
	ddb_body_free(b);
}

struct keys_case {
	struct ddb_keys k;
	bool ok;
};

static void test_keys_valid(void **state)
{
	static const struct keys_case cases[] = {
		{{"Locks", "pk", NULL, NULL}, true},
		{{"my.table-1_x", "PK", "SK", "expiresAt"}, true},
		{{"ab", "pk", NULL, NULL}, false},	  /* table too short */
		{{"bad table", "pk", NULL, NULL}, false}, /* space */
		{{NULL, "pk", NULL, NULL}, false},
		{{"Locks", "", NULL, NULL}, false},	 /* empty key */
		{{"Locks", "pk", "pk", NULL}, false},	 /* same key twice */
		{{"Locks", "owner", NULL, NULL}, false}, /* key named as a lock attribute */
		{{"Locks", "pk", "sk", "pk"}, false},	 /* ttl on a key */
		{{"Locks", "pk", "sk", "sk"}, false},
		{{"Locks", "pk", NULL, "fence"}, false}, /* ttl on a lock attribute */
		{{"Locks", "pk", NULL, "leaseMs"}, false},
		{{"Locks", "pk", NULL, "freed"}, false},
		{{"Locks", "freedBy", NULL, NULL}, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[DDB_ERR_MAX] = "";
		bool ok = ddb_keys_valid(&cases[i].k, err);
		if (ok != cases[i].ok)
			fail_msg("case %zu: got %d (%s)", i, ok, err);
		if (!ok)
			assert_true(err[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_requests), cmocka_unit_test(test_build_exact_bytes),
		cmocka_unit_test(test_op_mapping),     cmocka_unit_test(test_build_admin),
		cmocka_unit_test(test_keys_valid),     cmocka_unit_test(test_build_batch_get),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
