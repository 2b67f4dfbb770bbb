/*
 * ddbpeek: a reader of a moto table beside the gateways under test, for
 * integration tests that check what the table holds (the items a replica
 * wrote), not only what a gateway answers. One boto3 process per peek
 * (started once: importing boto3 takes a while), signed with LG_AK/LG_SK
 * against LG_MOTO, reading strongly consistent, keyed as the table is
 * (its partition key, and the sort key `LOCK` when it has one, as
 * leasegate keys its items). It can also watch one item in the background
 * and say when the item's current `rvn` was first seen: a value first read
 * at t was written before t.
 *
 * Not a store: its writes are a delete of an item, as another tool would
 * (peek_delete), and a session's dead mark, as a waiter would
 * (peek_kill). Failures (the process, its answers) fail the
 * cmocka test.
 */
#ifndef LG_DDBPEEK_H
#define LG_DDBPEEK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct ddbpeek {
	pid_t pid;
	FILE *to, *from;
};

/* Starts the reader on table, which must exist by its first request (a
 * gateway makes it): started before the gateways, its boto3 loads while
 * they start. */
void peek_open(struct ddbpeek *p, const char *table);

/* Ends the reader. */
void peek_close(struct ddbpeek *p);

/* The item whose partition key is pk ("LOCK#x", "SESSION#r#inc"), its key
 * attributes left out, as DynamoDB JSON ({"rvn": {"S": "..."}, ...}); an
 * empty object when there is none. Freed with cJSON_Delete. */
cJSON *peek_item(struct ddbpeek *p, const char *pk);

/* A string attribute of an item (peek_item), or NULL when it has none. */
const char *peek_str(const cJSON *item, const char *attr);

/* A number attribute of an item as an integer, or -1 when it has none. */
long long peek_num(const cJSON *item, const char *attr);

/* Deletes the item keyed pk (unconditionally), as another tool would. */
void peek_delete(struct ddbpeek *p, const char *pk);

/* The partition keys of the session items of replica id
 * ("SESSION#<id>#..."), sorted, as a JSON array of strings (a Scan of the
 * table). Freed with cJSON_Delete. */
cJSON *peek_sessions(struct ddbpeek *p, const char *replica_id);

/* Marks the session item pk dead by by, as a waiter's KILL does
 * (store_session.h): conditioned on the rvn just read and no dead mark;
 * false when the condition failed (its rvn moved in between, or it is
 * dead already). */
bool peek_kill(struct ddbpeek *p, const char *pk, const char *by);

/* Starts watching pk's `rvn` in the background (a read every 50 ms);
 * a watch already running is replaced. Returns once the first read came
 * back. */
void peek_watch(struct ddbpeek *p, const char *pk);

/* The watched item's rvn now; when (CLOCK_MONOTONIC ms, as gw_now_ms) the
 * read that first showed it returned, and when the read before it, which
 * still showed the value before, was sent: the write of this rvn landed
 * after that (-1: the watch's first read showed it); how many times it
 * changed since the watch began. Fails the test when nothing is
 * watched. */
struct peek_seen {
	char rvn[64];
	long long first_seen_ms, landed_after_ms;
	int changes;
};
void peek_watched(struct ddbpeek *p, struct peek_seen *out);

#endif
