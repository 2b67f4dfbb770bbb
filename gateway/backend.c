/*
 * backend: the store, the credentials, the lock table and the core's log
 * lines. See backend.h.
 */
#include "gateway/backend.h"

#include <stdio.h>
#include <string.h>

#include "core/dynamodb/creds.h"
#include "core/dynamodb/store_dynamodb.h"
#include "core/store_memory.h"
#include "gateway/log.h"
#include "gateway/metrics.h"

#define OPEN_RETRY_MS 2000

static const enum log_level obs_to_log[] = {
	[OBS_DEBUG] = LOG_LVL_DEBUG,
	[OBS_INFO] = LOG_LVL_INFO,
	[OBS_WARN] = LOG_LVL_WARN,
	[OBS_ERROR] = LOG_LVL_ERROR,
};

/* What each event says in words; the fields follow as key=value. */
static const char *const event_text[OBS_EVENT_COUNT] = {
	"lease lost",
	"lock taken over from a holder that stopped renewing it",
	"renewal failed; trying again",
	"release failed; the lock is free once its lease runs out",
	"acquire of a leader election failed; contending again",
	"this process leads",
	"this process no longer leads",
	"the work of the leader failed after its lease was lost",
	"the work of the leader failed after a cancel",
	"contending works again",
};

static void add(char *buf, size_t n, size_t *len, const char *key, const char *val)
{
	if (val == NULL || *len >= n)
		return;
	*len += (size_t)snprintf(buf + *len, n - *len, " %s=%s", key, val);
}

/* One log line per core event: id, words, then lock, table, labels... */
static void log_event(void *ctx, const struct obs_event *ev)
{
	enum log_level lvl = obs_to_log[ev->level];
	if (!log_enabled(lvl))
		return;
	char buf[1024], num[32];
	size_t len = 0;
	unsigned i = (unsigned)ev->id - OBS_FIRST_ID;
	len += (size_t)snprintf(buf, sizeof(buf), "event=%d %s:", (int)ev->id,
				i < OBS_EVENT_COUNT ? event_text[i] : "?");
	add(buf, sizeof(buf), &len, "lock", ev->lock);
	add(buf, sizeof(buf), &len, "table", ev->table);
	add(buf, sizeof(buf), &len, "holder", ev->holder);
	add(buf, sizeof(buf), &len, "previous_holder", ev->prev_holder);
	add(buf, sizeof(buf), &len, "reason", ev->reason);
	if (ev->token > 0) {
		snprintf(num, sizeof(num), "%lld", (long long)ev->token);
		add(buf, sizeof(buf), &len, "token", num);
	}
	add(buf, sizeof(buf), &len, "error_type", ev->error_type);
	if (ev->id == OBS_RENEW_RETRY || ev->id == OBS_CONTEND_FAILED) {
		snprintf(num, sizeof(num), "%lldms", (long long)ev->wait_ms);
		add(buf, sizeof(buf), &len, "retry_in", num);
	}
	if (ev->id == OBS_CONTEND_RECOVERED) {
		snprintf(num, sizeof(num), "%lldms", (long long)ev->wait_ms);
		add(buf, sizeof(buf), &len, "outage", num);
		snprintf(num, sizeof(num), "%lld", (long long)ev->retries);
		add(buf, sizeof(buf), &len, "retries", num);
	}
	add(buf, sizeof(buf), &len, "error", ev->message);
	log_msg(lvl, "%s", buf);
}

static const struct aws_credentials *current_creds(void *arg)
{
	return creds_get(arg);
}
static void creds_expired(void *arg)
{
	creds_refresh(arg);
}

static bool make_locktable(struct backend *b, char *err, size_t errlen)
{
	struct lt_options o = {
		.holder_label = b->cfg->holder_label[0] != '\0' ? b->cfg->holder_label : NULL,
		.ttl_retention_ms = b->cfg->ttl_attribute[0] != '\0' ? b->cfg->ttl_retention_ms : 0,
	};
	b->lt = lt_new(b->clock, b->store, &b->obs, &o);
	if (b->lt == NULL)
		snprintf(err, errlen,
			 "cannot create the lock table (holder-label or ttl-retention)");
	return b->lt != NULL;
}

static void open_store(struct backend *b);

static void opened(void *arg, const struct store_result *res)
{
	struct backend *b = arg;
	char msg[STORE_MSG_MAX + 640];
	switch (res->status) {
	case STORE_OK:
		b->ready(b->ready_arg, true, NULL);
		return;
	case STORE_TRANSIENT:
		log_msg(LOG_LVL_WARN, "DynamoDB table %s not reachable yet (%s: %s); retrying",
			b->cfg->table, res->error_type ? res->error_type : "transient",
			res->message);
		timer_arm(&b->retry, OPEN_RETRY_MS);
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
		timer_arm(&b->retry, OPEN_RETRY_MS);
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

static bool open_dynamodb(struct backend *b, char *err, size_t errlen)
{
	const struct cfg *cfg = b->cfg;
	char cerr[256], derr[STORE_DDB_ERR_MAX];
	if (cfg->region[0] != '\0')
		snprintf(b->region, sizeof(b->region), "%s", cfg->region);
	else if (!creds_region(NULL, NULL, b->region, sizeof(b->region))) {
		snprintf(err, errlen,
			 "--table needs a region: set --region, AWS_REGION or AWS_DEFAULT_REGION");
		return false;
	}
	struct creds_options co = {.region = b->region};
	b->creds = creds_new(b->base, b->clock, &co, cerr, sizeof(cerr));
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
		.credentials = current_creds,
		.credentials_arg = b->creds,
		.credentials_expired = creds_expired,
	};
	b->store = store_dynamodb_new(b->base, b->clock, &dc, derr);
	if (b->store == NULL) {
		snprintf(err, errlen, "%s", derr);
		return false;
	}
	b->kind = "dynamodb";
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
	b->clock = clock_real_new(base);
	if (b->clock == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	timer_init(&b->retry, b->clock, retry_open, b);
	if (cfg->table[0] != '\0')
		return open_dynamodb(b, err, errlen);
	b->kind = "embedded";
	b->store = store_memory_new(b->clock, "embedded");
	if (b->store == NULL || !make_locktable(b, err, errlen))
		return false;
	store_memory_limit(b->store, cfg->memory_retention_ms, (size_t)cfg->max_locks);
	/* Ready from the loop, as a DynamoDB open would be. */
	timer_init(&b->retry, b->clock, ready_embedded, b);
	timer_arm(&b->retry, 0);
	return true;
}

void backend_close(struct backend *b)
{
	if (b->clock != NULL)
		timer_cancel(&b->retry);
	lt_free(b->lt);
	store_free(b->store);
	if (b->creds != NULL)
		creds_free(b->creds);
	clock_free(b->clock);
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
}

void backend_metrics(const struct backend *b, struct metrics_src *m,
		     struct store_dynamodb_stats *ddb)
{
	m->obs = &b->obs;
	m->table = b->cfg->table;
	lt_stats(b->lt, &m->lt);
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
