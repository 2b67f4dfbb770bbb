/*
 * metrics: the Prometheus text exposition of the gateway's counters
 * (metrics.h).
 */
#include "gateway/obs/metrics.h"

#include "core/lt_session.h"

#include "gateway/obs/otlp.h"
#include "gateway/redis/commands.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gateway/obs/metrics_pool.h"

void metrics_label_value(struct buf *out, const char *v)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\\' || *p == '"')
			buf_printf(out, "\\%c", *p);
		else if (*p == '\n')
			buf_printf(out, "\\n");
		else
			buf_printf(out, "%c", *p);
	}
}

static void family(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{db_collection_name="<table>"[,key="value"]} n; without the table
 * label on the embedded store, without braces when no label is left. */
static void sample(struct buf *out, const char *name, const char *table, const char *key,
		   const char *value, uint64_t n)
{
	/* the embedded store has no table: no label rather than an empty one */
	const char *sep = "{";
	buf_printf(out, "%s", name);
	if (table != NULL && table[0] != '\0') {
		buf_printf(out, "{db_collection_name=\"");
		metrics_label_value(out, table);
		buf_printf(out, "\"");
		sep = ",";
	}
	if (key != NULL) {
		buf_printf(out, "%s%s=\"", sep, key);
		metrics_label_value(out, value);
		buf_printf(out, "\"");
		sep = ",";
	}
	buf_printf(out, "%s %llu\n", sep[0] == ',' ? "}" : "", (unsigned long long)n);
}

/* name{db_collection_name="<table>"} ms in seconds, as sample() labels
 * it (no label on the embedded store). */
static void sample_seconds(struct buf *out, const char *name, const char *table, int64_t ms)
{
	buf_printf(out, "%s", name);
	if (table != NULL && table[0] != '\0') {
		buf_printf(out, "{db_collection_name=\"");
		metrics_label_value(out, table);
		buf_printf(out, "\"}");
	}
	buf_printf(out, " %.3f\n", (double)ms / 1000.0);
}

/* A counter split by one label (core/obs); `plain`, when given, is the
 * label whose count is written without the label (renewals that worked
 * have no error_type). */
static void labeled(struct buf *out, const char *name, const char *table, const char *key,
		    const struct obs_labeled *c, const char *plain)
{
	for (unsigned i = 0; i < c->n; i++) {
		bool bare = plain != NULL && strcmp(c->label[i], plain) == 0;
		sample(out, name, table, bare ? NULL : key, c->label[i], c->count[i]);
	}
	if (c->other)
		sample(out, name, table, key, "_OTHER", c->other);
}

static void lock_metrics(const struct metrics_src *m, struct buf *out)
{
	const struct obs *o = m->obs;
	family(out, "leasegate_lock_acquisitions_total", "counter",
	       "Leases acquired, by whether the lock was taken over.");
	sample(out, "leasegate_lock_acquisitions_total", m->table, "takeover", "false",
	       o->acquisitions[0]);
	sample(out, "leasegate_lock_acquisitions_total", m->table, "takeover", "true",
	       o->acquisitions[1]);
	family(out, "leasegate_lock_renewals_total", "counter",
	       "Lease renewals, with error_type on those that failed.");
	labeled(out, "leasegate_lock_renewals_total", m->table, "error_type", &o->renewals, "ok");
	family(out, "leasegate_lock_losses_total", "counter",
	       "Leases lost before they were released, by reason.");
	labeled(out, "leasegate_lock_losses_total", m->table, "loss_reason", &o->losses, NULL);
	family(out, "leasegate_lock_contention_retries_total", "counter",
	       "Leader elections contending again after a transient acquire failure.");
	labeled(out, "leasegate_lock_contention_retries_total", m->table, "error_type",
		&o->contention_retries, NULL);
}

void metrics_session(struct metrics_src *m, const struct lt_session *s)
{
	struct lt_session_view v = {0};
	m->replica_session = s != NULL;
	if (s != NULL)
		lt_session_view(s, &v);
	m->session_members = v.members;
	m->session_groups = v.groups;
}

/* --heartbeat replica: the verification sweep (core/lt_sweep.h). */
static void sweep_metrics(const struct metrics_src *m, struct buf *out)
{
	const struct lt_sweep_stats *sw = &m->lt.sweep;
	if (!m->lt.sweeping)
		return;
	family(out, "leasegate_replica_sweep_reads_total", "counter",
	       "Batch reads (BatchGetItem) of the verification sweep, and those answered with an "
	       "error.");
	sample(out, "leasegate_replica_sweep_reads_total", m->table, "outcome", "ok",
	       sw->batches - sw->failed);
	sample(out, "leasegate_replica_sweep_reads_total", m->table, "outcome", "error",
	       sw->failed);
	family(out, "leasegate_replica_sweep_items_total", "counter",
	       "Lock items the verification sweep asked for.");
	sample(out, "leasegate_replica_sweep_items_total", m->table, NULL, NULL, sw->items);
	family(out, "leasegate_replica_sweep_losses_total", "counter",
	       "Leases the verification sweep found no longer theirs (the item deleted, rewritten "
	       "or taken).");
	sample(out, "leasegate_replica_sweep_losses_total", m->table, NULL, NULL, sw->lost);
	family(out, "leasegate_replica_sweep_orphans_total", "counter",
	       "Items naming this replica's session that nothing here held, released by the "
	       "sweep.");
	sample(out, "leasegate_replica_sweep_orphans_total", m->table, NULL, NULL, sw->orphans);
	family(out, "leasegate_replica_sweep_period_seconds", "gauge",
	       "How long the sweep's last whole period took: --heartbeat-sweep while it keeps "
	       "pace, longer when its reads fall behind (0 before its second period).");
	sample_seconds(out, "leasegate_replica_sweep_period_seconds", m->table, sw->last_period_ms);
}

/* --heartbeat replica: the session's writes (CREATE and BEAT) and their
 * answers by outcome ("ok", "refused" or the error type), its members and
 * groups; nothing in per-lease mode. */
static void session_metrics(const struct metrics_src *m, struct buf *out)
{
	const struct obs *o = m->obs;
	if (!m->replica_session)
		return;
	family(out, "leasegate_replica_heartbeats_total", "counter",
	       "Heartbeats of this replica's session (--heartbeat replica): its CREATE and BEAT "
	       "writes sent.");
	sample(out, "leasegate_replica_heartbeats_total", m->table, NULL, NULL, o->session_beats);
	family(out, "leasegate_replica_heartbeat_answers_total", "counter",
	       "Answers to the session's heartbeats, by outcome: ok, refused (the session was "
	       "marked dead or is gone) or the error type.");
	labeled(out, "leasegate_replica_heartbeat_answers_total", m->table, "outcome",
		&o->session_answers, NULL);
	family(out, "leasegate_replica_session_members", "gauge",
	       "Leases held as members of this replica's session.");
	sample(out, "leasegate_replica_session_members", m->table, NULL, NULL, m->session_members);
	family(out, "leasegate_replica_session_groups", "gauge",
	       "Lease lengths among the session's members (one expiry timer each).");
	sample(out, "leasegate_replica_session_groups", m->table, NULL, NULL, m->session_groups);
	sweep_metrics(m, out);
}

static void command_sample(const char *name, const struct cmd_stat *st, void *arg)
{
	struct buf *out = arg;
	if (st->ok)
		buf_printf(out, "leasegate_commands_total{command=\"%s\",outcome=\"ok\"} %llu\n",
			   name, (unsigned long long)st->ok);
	if (st->error)
		buf_printf(out, "leasegate_commands_total{command=\"%s\",outcome=\"error\"} %llu\n",
			   name, (unsigned long long)st->error);
}

static void connection_metrics(const struct metrics_src *m, struct buf *out)
{
	family(out, "leasegate_connections_received_total", "counter",
	       "Client connections accepted, every protocol port together.");
	buf_printf(out, "leasegate_connections_received_total %llu\n",
		   (unsigned long long)m->connections_received);
	family(out, "leasegate_connections_rejected_total", "counter",
	       "Client connections refused at --maxclients.");
	buf_printf(out, "leasegate_connections_rejected_total %llu\n",
		   (unsigned long long)m->connections_rejected);
	if (m->cmds == NULL)
		return;
	family(out, "leasegate_commands_total", "counter",
	       "Redis commands answered, by command (subcommands under theirs) and outcome (an "
	       "error reply or not).");
	cmd_foreach_stat(m->cmds, command_sample, out);
}

static void trace_metrics(const struct otlp_stats *t, struct buf *out)
{
	family(out, "leasegate_trace_spans_exported_total", "counter",
	       "Spans an OTLP collector accepted.");
	buf_printf(out, "leasegate_trace_spans_exported_total %llu\n",
		   (unsigned long long)t->exported);
	family(out, "leasegate_trace_spans_dropped_total", "counter",
	       "Spans dropped: the export failed (collector down), or the queue was full.");
	buf_printf(out, "leasegate_trace_spans_dropped_total{reason=\"export_failed\"} %llu\n",
		   (unsigned long long)t->export_failed);
	buf_printf(out, "leasegate_trace_spans_dropped_total{reason=\"queue_full\"} %llu\n",
		   (unsigned long long)t->queue_dropped);
}

static void gateway_metrics(const struct metrics_src *m, struct buf *out)
{
	family(out, "leasegate_build_info", "gauge", "The running version (always 1).");
	buf_printf(out, "leasegate_build_info{version=\"");
	metrics_label_value(out, m->version);
	buf_printf(out, "\"} 1\n");
	family(out, "leasegate_sessions", "gauge", "Client connections open.");
	buf_printf(out, "leasegate_sessions %zu\n", m->sessions);
	family(out, "leasegate_auth_failures_total", "counter",
	       "Failed authentications (a wrong password, an unknown or disabled user), by "
	       "protocol.");
	buf_printf(out, "leasegate_auth_failures_total{protocol=\"redis\"} %llu\n",
		   (unsigned long long)m->auth_failures_redis);
	buf_printf(out, "leasegate_auth_failures_total{protocol=\"postgresql\"} %llu\n",
		   (unsigned long long)m->auth_failures_pg);
	if (m->tls != NULL) {
		family(out, "leasegate_tls_handshakes_total", "counter",
		       "TLS handshakes completed (TLS port and PostgreSQL SSLRequest).");
		buf_printf(out, "leasegate_tls_handshakes_total %llu\n",
			   (unsigned long long)m->tls->handshakes);
		family(out, "leasegate_tls_handshakes_failed_total", "counter",
		       "TLS handshakes that failed (bad or missing client certificate, protocol, "
		       "not TLS at all).");
		buf_printf(out, "leasegate_tls_handshakes_failed_total %llu\n",
			   (unsigned long long)m->tls->handshake_failures);
		family(out, "leasegate_tls_reloads_failed_total", "counter",
		       "SIGHUP reloads of the TLS files that failed (the previous ones stay).");
		buf_printf(out, "leasegate_tls_reloads_failed_total %llu\n",
			   (unsigned long long)m->tls->reload_failures);
	}
	family(out, "leasegate_leases_held", "gauge", "Leases held, not yet released.");
	sample(out, "leasegate_leases_held", m->table, NULL, NULL, m->lt.leases);
	family(out, "leasegate_lock_waits", "gauge", "Acquires in progress (waiting or trying).");
	sample(out, "leasegate_lock_waits", m->table, NULL, NULL, m->lt.waits);
}

/* name_part{the labels of one DynamoDB series, then `,le="` when le */
static void ddb_series(struct buf *out, const char *part, const char *table, const char *op,
		       const char *outcome, bool le)
{
	buf_printf(out,
		   "db_client_operation_duration_seconds_%s{db_system_name=\"aws.dynamodb\","
		   "db_collection_name=\"",
		   part);
	metrics_label_value(out, table);
	buf_printf(out, "\",db_operation_name=\"%s\",outcome=\"%s\"%s", op, outcome,
		   le ? ",le=\"" : "} ");
}

/* One histogram series: cumulative buckets, sum and count. */
static void histogram(struct buf *out, const char *table, const char *op, const char *outcome,
		      const struct ddb_latency *l)
{
	uint64_t below = 0;
	for (int i = 0; i < DDB_LATENCY_BUCKETS; i++) {
		below += l->bucket[i];
		ddb_series(out, "bucket", table, op, outcome, true);
		if (i < DDB_LATENCY_BUCKETS - 1)
			buf_printf(out, "%g", (double)ddb_latency_bounds_us[i] / 1e6);
		else
			buf_printf(out, "+Inf");
		buf_printf(out, "\"} %llu\n", (unsigned long long)below);
	}
	ddb_series(out, "sum", table, op, outcome, false);
	buf_printf(out, "%.6f\n", (double)l->sum_us / 1e6);
	ddb_series(out, "count", table, op, outcome, false);
	buf_printf(out, "%llu\n", (unsigned long long)l->count);
}

/* Where the table is and whether it is global (docs/dynamodb.md, Region
 * and endpoint): a replica in another region than the others shows here. */
static void dynamodb_info(const struct metrics_src *m, struct buf *out)
{
	static const char *const kinds[] = {"unknown", "no", "yes"};
	const struct store_dynamodb_table *t = &m->ddb->table;
	family(out, "leasegate_dynamodb_info", "gauge",
	       "The lock table (always 1): its region (the signing region, where requests go) "
	       "and whether it is a global table (yes, no, unknown: DescribeTable denied).");
	buf_printf(out, "leasegate_dynamodb_info{db_collection_name=\"");
	metrics_label_value(out, m->table);
	buf_printf(out, "\",region=\"");
	metrics_label_value(out, t->region);
	buf_printf(out, "\",global_table=\"%s\",replica_regions=\"", kinds[t->global + 1]);
	metrics_label_value(out, t->replicas);
	buf_printf(out, "\"} 1\n");
}

static void dynamodb_metrics(const struct metrics_src *m, struct buf *out)
{
	const struct store_dynamodb_stats *st = m->ddb;
	dynamodb_info(m, out);
	family(out, "db_client_operation_duration_seconds", "histogram",
	       "DynamoDB HTTP requests (retries included), by operation and the class of the "
	       "answer.");
	for (int op = 0; op < DDB_OP_COUNT; op++)
		for (int cls = 0; cls < DDB_C_COUNT; cls++)
			if (st->latency[op][cls].count)
				histogram(out, m->table, ddb_op_name(op), ddb_class_name(cls),
					  &st->latency[op][cls]);
	family(out, "leasegate_dynamodb_retries_total", "counter",
	       "DynamoDB requests sent again after a transient failure.");
	sample(out, "leasegate_dynamodb_retries_total", m->table, NULL, NULL, st->retries);
	family(out, "leasegate_dynamodb_throttled_total", "counter",
	       "DynamoDB answers that were throttling (ProvisionedThroughputExceeded, "
	       "ThrottlingException, RequestLimitExceeded).");
	sample(out, "leasegate_dynamodb_throttled_total", m->table, NULL, NULL, st->throttled);
	family(out, "leasegate_dynamodb_clock_offset_seconds", "gauge",
	       "Offset added to this machine's clock when signing, learnt from DynamoDB's "
	       "answers to a skewed clock (0: none).");
	sample_seconds(out, "leasegate_dynamodb_clock_offset_seconds", m->table,
		       st->clock_offset_ms);
	metrics_ddb_pool(st, m->table, out);
}

void metrics_render(const struct metrics_src *m, struct buf *out)
{
	lock_metrics(m, out);
	session_metrics(m, out);
	gateway_metrics(m, out);
	connection_metrics(m, out);
	if (m->traces != NULL)
		trace_metrics(m->traces, out);
	if (m->process)
		metrics_process(out);
	if (m->ddb != NULL)
		dynamodb_metrics(m, out);
}
