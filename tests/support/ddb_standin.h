/*
 * ddb_standin: a DynamoDB stand-in for benchmarks and tests. It answers
 * the requests leasegate's DynamoDB store sends (UpdateItem for acquire,
 * renew, release, announce and withdraw, GetItem, DeleteItem, the
 * ConditionCheck of LOCK.CHECK, DescribeTable, CreateTable,
 * UpdateTimeToLive, an empty Scan) with the semantics of the embedded
 * store (core/store/store_memory.c applies them), over real HTTP/1.1 keep-alive
 * connections (libevent's evhttp), each answer delayed by a draw from a
 * latency distribution with a long tail, some answered with throttling
 * instead (ProvisionedThroughputExceededException, nothing applied).
 *
 * `--heartbeat replica` (docs/design/replica-heartbeat.md) likewise: the
 * session items' UpdateItem (CREATE, BEAT, KILL) and BatchGetItem (READ),
 * a takeover's TransactWriteItems (a lock's Update and the session's
 * ConditionCheck), an ending's (the lock, its revocation entry, the
 * session's revSeq), the revocations' GetItem and their DELETE's
 * UpdateItem, and a Scan's pages of lock items (ddb_standin_sess.c).
 *
 * It counts requests (by operation, and reads and writes apart with the
 * items each carried), requests in flight and connections, refusals, and
 * the lateness of renewals: a renewal that arrives later than a third of
 * its lease after the write before it on the same lock (acquire or
 * renewal, as it arrived here) is late by the difference; that is what the
 * lease rules promise, measured outside the gateway. A session's BEAT is
 * timed from the CREATE or BEAT applied before it on that session (the
 * interval, not a lateness: the session item says its longest lease, not
 * the shortest a beat is due by; the benchmark knows its leases).
 *
 * It is not DynamoDB: one table, one partition key ("pk", strings), only
 * the transactions leasegate sends (no ClientRequestToken idempotency), no
 * Query (a sort key's revocations), no signature check.
 *
 * Threads: it runs on the event_base it is given, from one thread. The
 * stats, the options and the recording switch may be read and changed from
 * another thread (a mutex, taken once per request).
 */
#ifndef LG_TEST_DDB_STANDIN_H
#define LG_TEST_DDB_STANDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store/dynamodb/ddb_json.h"

struct event_base;
struct standin;

/* The latency of an answer: uniform in [min_ms, max_ms]; with probability
 * tail_p instead max_ms times a Pareto draw (shape 1.5), at most
 * tail_max_ms. throttle_p: the share of requests answered with throttling. */
struct standin_options {
	double min_ms, max_ms;
	double tail_p, tail_max_ms;
	double throttle_p;
	uint64_t seed; /* 0: a fixed one */
	/* DescribeTable lists these regions (comma-separated) as Replicas,
	 * as for a global table; NULL or "": none. Not copied. */
	const char *replicas;
};

/* The options for a typical latency of `ms`: uniform from 0.6 to 1.4
 * times ms, 1% in a tail up to 40 times ms, no throttling. */
struct standin_options standin_latency(double ms);

struct standin_stats {
	uint64_t requests;	      /* every request answered or pending */
	uint64_t by_op[DDB_OP_COUNT]; /* by ddb_op (core/store/dynamodb/ddb_json.h) */
	uint64_t throttled;	      /* answered with throttling */
	uint64_t refused;	      /* conditional checks that failed */
	uint64_t renew_refused;	      /* renewals refused: a lease lost */
	uint64_t errors;	      /* malformed or unsupported requests */
	unsigned in_flight;	      /* received, not answered yet */
	unsigned in_flight_max;	      /* since the last standin_reset() */
	unsigned connections;	      /* open now */
	uint64_t connections_total;
	uint64_t renewals_timed; /* renewals whose lateness was recorded */
	/* Requests that read items (GetItem, BatchGetItem, Scan, Query) and
	 * that write them (UpdateItem, DeleteItem, TransactWriteItems),
	 * throttled ones included; and the items those that were served
	 * carried: a BatchGetItem its keys, a TransactWriteItems its parts
	 * (the ConditionCheck of a session counts as one), a Scan the items
	 * it answered. */
	uint64_t reads, writes;
	uint64_t read_items, write_items;
	uint64_t beats;	       /* session CREATEs and BEATs applied */
	uint64_t beat_refused; /* BEATs refused: a session dead or gone */
	uint64_t beats_timed;  /* BEAT intervals recorded */
};

/* Listens on 127.0.0.1:port (0: a free one); url gets
 * "http://127.0.0.1:PORT". NULL on failure. */
struct standin *standin_new(struct event_base *base, int port, const struct standin_options *o,
			    char *url, size_t urlsz);

void standin_set_options(struct standin *s, const struct standin_options *o);
void standin_stats(struct standin *s, struct standin_stats *out);

/* Zeroes the counters (not the store or the open connections) and the
 * recorded lateness. */
void standin_reset(struct standin *s);

/* While on, the lateness of renewals applied is kept (microseconds, 0 when
 * on time or early), and the intervals of BEATs applied. */
void standin_record(struct standin *s, bool on);

/* Copies the recorded lateness into a malloc'd array (*n values; NULL when
 * none or out of memory); the caller frees it. */
int64_t *standin_lateness(struct standin *s, size_t *n);

/* Copies the recorded intervals between a session's BEAT and the CREATE
 * or BEAT applied before it on that session (microseconds, by arrival),
 * as standin_lateness. */
int64_t *standin_beat_intervals(struct standin *s, size_t *n);

/* Frees s and its store; pending answers are dropped (from s's thread). */
void standin_free(struct standin *s);

#endif
