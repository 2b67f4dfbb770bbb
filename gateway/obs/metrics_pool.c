/*
 * metrics_pool: the DynamoDB HTTP client's series (metrics_pool.h). Table
 * names are escaped by metrics_label_value (metrics.h); the queue wait is a summary without
 * quantiles (its _sum and _count), and its largest value since the start.
 */
#include "gateway/obs/metrics_pool.h"

#include "gateway/obs/metrics.h"

#include <stdint.h>

static void series(struct buf *out, const char *name, const char *table, const char *extra)
{
	buf_printf(out, "%s{db_collection_name=\"", name);
	metrics_label_value(out, table);
	buf_printf(out, "\"%s} ", extra);
}

static void one(struct buf *out, const char *name, const char *type, const char *help,
		const char *table, uint64_t n)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	series(out, name, table, "");
	buf_printf(out, "%llu\n", (unsigned long long)n);
}

void metrics_ddb_pool(const struct store_dynamodb_stats *st, const char *table, struct buf *out)
{
	const struct http_stats *p = &st->pool;
	one(out, "leasegate_dynamodb_requests_in_flight", "gauge",
	    "DynamoDB requests sent and not answered yet.", table, p->active);
	one(out, "leasegate_dynamodb_requests_in_flight_max", "gauge",
	    "The most DynamoDB requests in flight at once (--ddb-max-in-flight).", table,
	    p->max_active);
	const char *q = "leasegate_dynamodb_requests_queued";
	buf_printf(out,
		   "# HELP %s DynamoDB requests waiting for a slot, by priority (urgent: "
		   "renewals and releases, which go first).\n# TYPE %s gauge\n",
		   q, q);
	series(out, q, table, ",priority=\"urgent\"");
	buf_printf(out, "%u\n", p->queued_urgent);
	series(out, q, table, ",priority=\"normal\"");
	buf_printf(out, "%u\n", p->queued - p->queued_urgent);
	const char *w = "leasegate_dynamodb_queue_wait_seconds";
	buf_printf(out,
		   "# HELP %s Time DynamoDB requests waited for a slot before being sent (0 for "
		   "those sent at once).\n# TYPE %s summary\n",
		   w, w);
	series(out, "leasegate_dynamodb_queue_wait_seconds_sum", table, "");
	buf_printf(out, "%.6f\n", (double)p->wait_sum_us / 1e6);
	series(out, "leasegate_dynamodb_queue_wait_seconds_count", table, "");
	buf_printf(out, "%llu\n", (unsigned long long)p->started);
	buf_printf(out, "# HELP leasegate_dynamodb_queue_wait_max_seconds The longest a DynamoDB "
			"request waited for a slot since the start.\n"
			"# TYPE leasegate_dynamodb_queue_wait_max_seconds gauge\n");
	series(out, "leasegate_dynamodb_queue_wait_max_seconds", table, "");
	buf_printf(out, "%.6f\n", (double)p->wait_max_us / 1e6);
	one(out, "leasegate_dynamodb_requests_refused_total", "counter",
	    "Acquires and reads answered TRYAGAIN at once because the DynamoDB request queue "
	    "was full (back-pressure).",
	    table, st->shed);
}

void metrics_ddb_pool_info(const struct store_dynamodb_stats *st,
			   void (*line)(void *arg, const char *key, long long value), void *arg)
{
	const struct http_stats *p = &st->pool;
	line(arg, "max_in_flight", (long long)p->max_active);
	line(arg, "in_flight", (long long)p->active);
	line(arg, "queued", (long long)p->queued);
	line(arg, "queued_urgent", (long long)p->queued_urgent);
	line(arg, "queue_wait_us_total", (long long)p->wait_sum_us);
	line(arg, "queue_wait_us_max", (long long)p->wait_max_us);
	line(arg, "requests_started", (long long)p->started);
	line(arg, "refused_queue_full", (long long)st->shed);
}
