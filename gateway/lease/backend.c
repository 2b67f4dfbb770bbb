/*
 * backend: the store, the credentials, the lock table and the core's log
 * lines. See backend.h.
 */
#include "gateway/lease/backend.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/aws/creds.h"
#include "core/store/dynamodb/store_dynamodb.h"
#include "lib/base/lg_assert.h"
#include "core/store/store_memory.h"
#include "core/store/store_session.h"
#include "gateway/obs/events.h"
#include "gateway/obs/log.h"
#include "gateway/obs/metrics.h"
#include "gateway/obs/metrics_pool.h"
#include "gateway/lease/testclock.h"

/* A store that cannot be opened yet (no credentials, DynamoDB down) is
 * tried again after OPEN_RETRY_MIN_MS, doubling up to OPEN_RETRY_MAX_MS. */
#define OPEN_RETRY_MIN_MS 1000
#define OPEN_RETRY_MAX_MS 60000

static const enum log_level obs_to_log[] = {
	[OBS_DEBUG] = LOG_LVL_DEBUG,
	[OBS_INFO] = LOG_LVL_INFO,
	[OBS_WARN] = LOG_LVL_WARN,
	[OBS_ERROR] = LOG_LVL_ERROR,
};

/* One log line per core event (gateway/events), naming the session. */
static void log_event(void *ctx, const struct obs_event *ev)
{
	struct backend *b = ctx;
	enum log_level lvl = obs_to_log[ev->level];
	if (!log_enabled(lvl))
		return;
	struct ls_who who;
	bool known = b->who != NULL && b->who(ev->ctx, &who);
	struct event_line line;
	events_describe(ev, known ? &who : NULL, &line);
	log_fields(lvl, line.f, line.n, "%s", line.msg);
}

/* A failed LG_ASSERT of the core, once per call site (lib/base/lg_assert.h). */
static void report_assert(const char *file, int line, const char *cond, const char *detail)
{
	log_msg(LOG_LVL_ERROR, "internal error, carrying on: %s:%d: assertion failed: %s%s%s", file,
		line, cond, detail != NULL ? ": " : "", detail != NULL ? detail : "");
}

static const struct aws_credentials *current_creds(void *arg)
{
	return creds_get(arg);
}
static void creds_expired(void *arg)
{
	creds_refresh(arg);
}

/* The credentials' news in the log: once found (and again after a
 * failure), once failed (the open's retries say the rest). */
static void on_creds(void *arg, const struct aws_credentials *k, const char *error)
{
	struct backend *b = arg;
	char src[CREDS_ERR_MAX], exp[64] = "";
	int said = k != NULL ? 1 : -1;
	if (said == b->creds_said)
		return;
	b->creds_said = said;
	creds_describe_source(b->creds, src, sizeof(src));
	if (k == NULL) {
		log_msg(LOG_LVL_WARN,
			"credentials: none from %s: %s; asked again in the background", src, error);
		return;
	}
	time_t t = (time_t)(k->expiration_ms / 1000);
	struct tm tm;
	if (k->expiration_ms > 0 && gmtime_r(&t, &tm) != NULL)
		strftime(exp, sizeof(exp), ", temporary: expire at %Y-%m-%dT%H:%M:%SZ", &tm);
	log_msg(LOG_LVL_INFO, "credentials from %s%s", src, exp);
}

/* The address a session item shows operators (--heartbeat replica): where
 * this replica's clients reach it, the host name for a wildcard --bind. */
static void replica_addr(const struct cfg *c, char *out, size_t outlen)
{
	bool wildcard = strcmp(c->bind, "0.0.0.0") == 0 || strcmp(c->bind, "::") == 0;
	long long port = c->port != 0 ? c->port : c->tls_port != 0 ? c->tls_port : c->pg_port;
	int n = snprintf(out, outlen, "%s:%lld", wildcard ? c->holder_label : c->bind, port);
	if (n > STORE_SESSION_ADDR_MAX && outlen > STORE_SESSION_ADDR_MAX)
		out[STORE_SESSION_ADDR_MAX] = '\0'; /* the item's bound; a long label is cut */
}

static bool make_locktable(struct backend *b, char *err, size_t errlen)
{
	char addr[sizeof(b->cfg->holder_label) + 32];
	replica_addr(b->cfg, addr, sizeof(addr));
	struct lt_options o = {
		.holder_label = b->cfg->holder_label[0] != '\0' ? b->cfg->holder_label : NULL,
		.ttl_retention_ms = b->cfg->ttl_attribute[0] != '\0' ? b->cfg->ttl_retention_ms : 0,
		.heartbeat = b->cfg->heartbeat == CFG_HEARTBEAT_REPLICA ? LT_HEARTBEAT_REPLICA
									: LT_HEARTBEAT_LEASE,
		.replica_id = b->cfg->replica_id,
		.addr = addr,
		.sweep_ms = b->cfg->heartbeat_sweep_ms,
	};
	b->lt = lt_new(b->clock, b->store, &b->obs, &o);
	if (b->lt == NULL)
		snprintf(err, errlen,
			 "cannot create the lock table (holder-label, ttl-retention or "
			 "replica-id)");
	return b->lt != NULL;
}

static void open_store(struct backend *b);

/* Why the store is not open yet, for the log and /readyz: with missing
 * credentials, the sources of the chain tried and what to do. */
static void not_ready(struct backend *b, const struct store_result *res)
{
	const char *type = res->error_type ? res->error_type : "transient";
	if (strcmp(type, "CredentialsNotAvailable") == 0 && b->creds != NULL &&
	    creds_source(b->creds) != CREDS_SRC_IMDS) {
		/* a source was found configured (a container endpoint, web
		 * identity...): it has not answered yet, or failed */
		char src[CREDS_ERR_MAX];
		creds_describe_source(b->creds, src, sizeof(src));
		snprintf(b->not_ready, sizeof(b->not_ready),
			 "DynamoDB table %s not reachable yet: no AWS credentials yet from %s (%s)",
			 b->cfg->table, src,
			 creds_last_error(b->creds)[0] ? creds_last_error(b->creds)
						       : "no answer yet");
		return;
	}
	if (strcmp(type, "CredentialsNotAvailable") == 0 && b->creds != NULL) {
		char chain[CREDS_ERR_MAX + 512];
		creds_describe_chain(b->creds, chain, sizeof(chain));
		snprintf(b->not_ready, sizeof(b->not_ready),
			 "DynamoDB table %s not reachable yet: no AWS credentials. Tried in order: "
			 "%s. Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE to a "
			 "profile with keys",
			 b->cfg->table, chain);
		return;
	}
	snprintf(b->not_ready, sizeof(b->not_ready), "DynamoDB table %s not reachable yet (%s: %s)",
		 b->cfg->table, type, res->message);
}

/* What the open's look at the first items found (docs/dynamodb.md, Point
 * it at DynamoDB): items of another application say that --table may name
 * the wrong table; leasegate goes on (a table shared on purpose is
 * allowed). */
static void log_peek(const struct backend *b, const struct store_dynamodb_table *t)
{
	if (t->foreign > 0)
		log_msg(LOG_LVL_WARN,
			"DynamoDB table %s holds items that are not leasegate's locks: %u of the "
			"first %d read, with attributes %s (a lock item has %s = LOCK#<name> and "
			"_type = LOCK). Is --table the lock table? A table shared with other items "
			"on purpose can ignore this",
			b->cfg->table, t->foreign, t->peeked, t->foreign_attrs, t->pk);
	else if (t->peeked < 0 && t->peek_error[0])
		log_msg(LOG_LVL_INFO,
			"DynamoDB table %s: its first items not read (Scan: %s), so whether it "
			"holds anything but locks is not known",
			b->cfg->table, t->peek_error);
}

/* What the table is, once open: where, and whether global
 * (docs/dynamodb.md, Region and endpoint, Global tables). */
static void log_opened(const struct backend *b)
{
	struct store_dynamodb_stats st;
	store_dynamodb_stats(b->store, &st);
	const struct store_dynamodb_table *t = &st.table;
	/* --create-table made it: say what was made (ddb_build_create_table's
	 * billing mode), once, by the replica that made it */
	if (t->created)
		log_msg(LOG_LVL_INFO,
			"created DynamoDB table %s in region %s (--create-table): partition key "
			"%s, "
			"%s%s, billing mode PAY_PER_REQUEST, TTL attribute %s",
			b->cfg->table, t->region, t->pk, t->sk[0] ? "sort key " : "no sort key",
			t->sk,
			b->cfg->ttl_attribute[0] ? b->cfg->ttl_attribute
						 : "none (--ttl-attribute)");
	log_peek(b, t);
	if (t->global == 1)
		log_msg(LOG_LVL_WARN,
			"DynamoDB table %s is a global table (replicas in %s), opened with "
			"--allow-global-table: locks hold only while every leasegate replica "
			"uses region %s",
			b->cfg->table, t->replicas, t->region);
	else
		log_msg(LOG_LVL_INFO, "DynamoDB table %s open in region %s (%s; ARN %s)",
			b->cfg->table, t->region,
			t->global == 0 ? "not a global table"
				       : "global table or not: unknown, DescribeTable denied",
			t->arn[0] ? t->arn : "unknown");
}

static void opened(void *arg, const struct store_result *res)
{
	struct backend *b = arg;
	char msg[STORE_MSG_MAX + 640];
	switch (res->status) {
	case STORE_OK:
		b->not_ready[0] = '\0';
		log_opened(b);
		b->ready(b->ready_arg, true, NULL);
		return;
	case STORE_TRANSIENT:
		b->open_retry_ms = b->open_retry_ms == 0 ? OPEN_RETRY_MIN_MS
				   : b->open_retry_ms * 2 > OPEN_RETRY_MAX_MS
					   ? OPEN_RETRY_MAX_MS
					   : b->open_retry_ms * 2;
		not_ready(b, res);
		log_msg(LOG_LVL_WARN, "%s; trying again in %lld s (backoff up to %d s)",
			b->not_ready, (long long)(b->open_retry_ms / 1000),
			OPEN_RETRY_MAX_MS / 1000);
		timer_arm(&b->retry, b->open_retry_ms);
		return;
	case STORE_NO_TABLE:
		snprintf(msg, sizeof(msg),
			 "DynamoDB table %s does not exist in %s (create it, or start with "
			 "--create-table)",
			 b->cfg->table, b->region);
		break;
	default:
		snprintf(msg, sizeof(msg), "DynamoDB table %s: %s", b->cfg->table, res->message);
	}
	b->ready(b->ready_arg, false, msg);
}

static void open_store(struct backend *b)
{
	if (!store_dynamodb_open(b->store, opened, b))
		timer_arm(&b->retry, OPEN_RETRY_MIN_MS);
}

static void retry_open(void *arg)
{
	open_store(arg);
}

static void ready_embedded(void *arg)
{
	struct backend *b = arg;
	b->ready(b->ready_arg, true, NULL);
}

static bool open_embedded(struct backend *b, char *err, size_t errlen);

static bool open_dynamodb(struct backend *b, char *err, size_t errlen)
{
	const struct cfg *cfg = b->cfg;
	char cerr[CREDS_ERR_MAX], derr[STORE_DDB_ERR_MAX];
	if (cfg->region[0] != '\0')
		snprintf(b->region, sizeof(b->region), "%s", cfg->region);
	else if (!creds_region(NULL, NULL, b->region, sizeof(b->region))) {
		/* a broken credential setup (AWS_PROFILE=nosuch) is the cause to
		 * report, before the region it would have given */
		struct creds_options probe = {0};
		struct creds *c = creds_new(b->base, b->io_clock, &probe, cerr, sizeof(cerr));
		if (c != NULL)
			creds_free(c);
		snprintf(err, errlen, "%s%s", c == NULL ? "credentials: " : "",
			 c == NULL ? cerr
				   : "--table needs a region: set --region, AWS_REGION or "
				     "AWS_DEFAULT_REGION");
		return false;
	}
	if (cfg->test_mode) {
		/* before any request: test mode never reaches AWS itself */
		if (cfg->endpoint[0] != '\0')
			snprintf(b->endpoint, sizeof(b->endpoint), "%s", cfg->endpoint);
		else
			store_dynamodb_endpoint(b->region, b->endpoint, sizeof(b->endpoint));
		if (!tclock_check_endpoint(b->endpoint, err, errlen))
			return false;
	}
	struct creds_options co = {.region = b->region};
	b->creds = creds_new(b->base, b->io_clock, &co, cerr, sizeof(cerr));
	if (b->creds != NULL)
		creds_set_listener(b->creds, on_creds, b);
	if (b->creds == NULL || !creds_start(b->creds)) {
		snprintf(err, errlen, "credentials: %s", b->creds == NULL ? cerr : "cannot start");
		return false;
	}
	struct store_dynamodb_config dc = {
		.table = cfg->table,
		.region = b->region,
		.endpoint = cfg->endpoint[0] != '\0' ? cfg->endpoint : NULL,
		.partition_key = cfg->partition_key[0] != '\0' ? cfg->partition_key : NULL,
		.sort_key = cfg->sort_key[0] != '\0' ? cfg->sort_key : NULL,
		.ttl_attribute = cfg->ttl_attribute[0] != '\0' ? cfg->ttl_attribute : NULL,
		.create_table = cfg->create_table,
		.read_kind = true,
		.allow_global_table = cfg->allow_global_table,
		.credentials = current_creds,
		.credentials_arg = b->creds,
		.credentials_expired = creds_expired,
		.max_in_flight = (unsigned)cfg->ddb_max_in_flight,
	};
	b->store = store_dynamodb_new(b->base, b->io_clock, &dc, derr);
	if (b->store == NULL) {
		snprintf(err, errlen, "%s", derr);
		return false;
	}
	b->kind = "dynamodb";
	if (dc.endpoint != NULL)
		snprintf(b->endpoint, sizeof(b->endpoint), "%s", dc.endpoint);
	else
		store_dynamodb_endpoint(b->region, b->endpoint, sizeof(b->endpoint));
	/* nothing is found yet: say what is tried, on_creds what came of it */
	char trying[CREDS_ERR_MAX];
	creds_describe_trying(b->creds, trying, sizeof(trying));
	snprintf(b->not_ready, sizeof(b->not_ready),
		 "opening DynamoDB table %s at %s (region %s; credentials: %s)", cfg->table,
		 b->endpoint, b->region, trying);
	log_msg(LOG_LVL_INFO, "%s", b->not_ready);
	if (!make_locktable(b, err, errlen))
		return false;
	open_store(b);
	return true;
}

bool backend_open(struct backend *b, struct event_base *base, const struct cfg *cfg,
		  void (*ready)(void *arg, bool ok, const char *msg), void *arg, char *err,
		  size_t errlen)
{
	memset(b, 0, sizeof(*b));
	b->base = base;
	b->cfg = cfg;
	b->ready = ready;
	b->ready_arg = arg;
	b->obs.sink = log_event;
	b->obs.ctx = b;
	lg_assert_set_reporter(report_assert);
	b->io_clock = clock_real_new(base);
	/* test mode: the core's clock starts at this moment's wall time */
	b->clock = !cfg->test_mode	 ? b->io_clock
		   : b->io_clock != NULL ? clock_manual_new(base, clock_wall_ms(b->io_clock))
					 : NULL;
	if (b->clock == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	timer_init(&b->retry, b->io_clock, retry_open, b);
	if (cfg->table[0] != '\0' ? !open_dynamodb(b, err, errlen) : !open_embedded(b, err, errlen))
		return false;
	if (cfg->test_mode && (b->tclock = tclock_new(b->clock, b->io_clock, b->store)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	return true;
}

static bool open_embedded(struct backend *b, char *err, size_t errlen)
{
	const struct cfg *cfg = b->cfg;
	b->kind = "embedded";
	b->store = store_memory_new(b->clock, "embedded");
	if (b->store == NULL || !make_locktable(b, err, errlen))
		return false;
	store_memory_limit(b->store, cfg->memory_retention_ms, (size_t)cfg->max_locks);
	/* Ready from the loop, as a DynamoDB open would be. */
	timer_init(&b->retry, b->io_clock, ready_embedded, b);
	timer_arm(&b->retry, 0);
	return true;
}

void backend_close(struct backend *b, void (*before_clock)(void *arg), void *arg)
{
	if (b->io_clock != NULL)
		timer_cancel(&b->retry);
	tclock_free(b->tclock);
	lt_free(b->lt);
	store_free(b->store);
	if (b->creds != NULL)
		creds_free(b->creds);
	if (before_clock != NULL)
		before_clock(arg);
	if (b->clock != b->io_clock)
		clock_free(b->clock);
	clock_free(b->io_clock);
	memset(b, 0, sizeof(*b));
}

static bool on_dynamodb(const struct backend *b)
{
	return strcmp(b->kind, "dynamodb") == 0;
}

const char *backend_store_section(const struct backend *b)
{
	return b->kind;
}

/* INFO embedded: the items of the embedded store, and its bounds. */
static void memory_lines(const struct backend *b,
			 void (*line)(void *arg, const char *key, long long value), void *arg)
{
	struct store_memory_stats st;
	store_memory_stats(b->store, &st);
	line(arg, "items", (long long)st.items);
	line(arg, "bytes", (long long)st.bytes);
	line(arg, "forgotten", (long long)st.forgotten);
	line(arg, "retention_ms", (long long)st.retention_ms);
	line(arg, "max_items", (long long)st.max_items);
}

/* INFO dynamodb: the HTTP side of the DynamoDB store. */
void backend_store_lines(const struct backend *b,
			 void (*line)(void *arg, const char *key, long long value), void *arg)
{
	if (!on_dynamodb(b)) {
		memory_lines(b, line, arg);
		return;
	}
	struct store_dynamodb_stats st;
	char key[64];
	store_dynamodb_stats(b->store, &st);
	uint64_t total = 0;
	for (int op = 0; op < DDB_OP_COUNT; op++) {
		total += st.http[op];
		snprintf(key, sizeof(key), "requests_%s", ddb_op_name(op));
		line(arg, key, (long long)st.http[op]);
	}
	line(arg, "requests_total", (long long)total);
	line(arg, "retries", (long long)st.retries);
	line(arg, "throttled", (long long)st.throttled);
	line(arg, "crc_mismatches", (long long)st.crc_mismatches);
	line(arg, "skew_corrections", (long long)st.skew_corrections);
	line(arg, "clock_offset_ms", (long long)st.clock_offset_ms);
	line(arg, "retry_quota", (long long)st.quota_tokens);
	metrics_ddb_pool_info(&st, line, arg);
}

void backend_store_text(const struct backend *b,
			void (*line)(void *arg, const char *key, const char *value), void *arg)
{
	static const char *const kinds[] = {"unknown", "no", "yes"};
	if (!on_dynamodb(b))
		return;
	struct store_dynamodb_stats st;
	store_dynamodb_stats(b->store, &st);
	line(arg, "region", st.table.region);
	line(arg, "table", b->cfg->table);
	line(arg, "table_arn", st.table.arn);
	line(arg, "global_table", kinds[st.table.global + 1]);
	line(arg, "replica_regions", st.table.replicas);
}

void backend_metrics(const struct backend *b, struct metrics_src *m,
		     struct store_dynamodb_stats *ddb)
{
	m->obs = &b->obs;
	m->table = b->cfg->table;
	lt_stats(b->lt, &m->lt);
	metrics_session(m, lt_session_of(b->lt));
	m->ddb = NULL;
	if (on_dynamodb(b)) {
		store_dynamodb_stats(b->store, ddb);
		m->ddb = ddb;
	}
}

const char *backend_lock_pk(const struct backend *b)
{
	if (b->store == NULL || strcmp(b->kind, "dynamodb") != 0)
		return NULL;
	return store_dynamodb_keys(b->store)->pk;
}
