/*
 * metrics_pool: the Prometheus series of the DynamoDB store's HTTP client
 * (lib/http/http.h): requests in flight and the most allowed, those
 * waiting by priority, the time they waited, those refused because the
 * queue was full. Rendered by metrics.c after the DynamoDB histogram,
 * and as lines of INFO dynamodb (backend.c).
 */
#ifndef LG_METRICS_POOL_H
#define LG_METRICS_POOL_H

#include "core/store/dynamodb/store_dynamodb.h"
#include "protocols/buf.h"

/* Appends the pool's series of st, labelled with table, to out. */
void metrics_ddb_pool(const struct store_dynamodb_stats *st, const char *table, struct buf *out);

/* The same figures as INFO lines (key, value): max_in_flight, in_flight,
 * queued, queued_urgent, queue_wait_us_total, queue_wait_us_max,
 * requests_started, refused_queue_full. */
void metrics_ddb_pool_info(const struct store_dynamodb_stats *st,
			   void (*line)(void *arg, const char *key, long long value), void *arg);

#endif
