/*
 * store_dynamodb.c: the DynamoDB store (see store_dynamodb.h).
 *
 * One struct store_call per operation, store requests and the open steps
 * alike: it keeps the body (built once), and each attempt signs it anew
 * (the signature carries the time) and sends it. An answer is classified
 * by ddb_retry; a retry waits on the call's timer. Every call ends in
 * finish(), the one place where it leaves the list and is freed.
 */
#include "core/store/dynamodb/store_dynamodb_int.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/dynamodb/ddb_transact.h"
#include "lib/http/http.h"
#include "lib/base/pool.h"

/* A renewal is a call made and freed: from a pool, as store calls are
 * larger than glibc's small bins and each malloc of one would first
 * consolidate its fast bins (a tenth of the CPU of a renewal at 100,000
 * leases). */
static struct pool call_pool = POOL_INIT(sizeof(struct store_call), 4096);

#define TARGET_PREFIX "DynamoDB_20120810."
#define DEFAULT_PK    "pk" /* key of a table leasegate creates */

static const char *const targets[DDB_OP_COUNT] = {
	[DDB_UPDATE_ITEM] = TARGET_PREFIX "UpdateItem",
	[DDB_GET_ITEM] = TARGET_PREFIX "GetItem",
	[DDB_DELETE_ITEM] = TARGET_PREFIX "DeleteItem",
	[DDB_TRANSACT_WRITE_ITEMS] = TARGET_PREFIX "TransactWriteItems",
	[DDB_DESCRIBE_TABLE] = TARGET_PREFIX "DescribeTable",
	[DDB_CREATE_TABLE] = TARGET_PREFIX "CreateTable",
	[DDB_UPDATE_TIME_TO_LIVE] = TARGET_PREFIX "UpdateTimeToLive",
	[DDB_SCAN] = TARGET_PREFIX "Scan",
	[DDB_BATCH_GET_ITEM] = TARGET_PREFIX "BatchGetItem",
	[DDB_QUERY] = TARGET_PREFIX "Query",
};

static void msgf(struct store_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void msgf(struct store_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->message, sizeof res->message, fmt, ap);
	va_end(ap);
}

bool ddbs_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

void store_dynamodb_endpoint(const char *region, char *out, size_t outsz)
{
	const char *e = getenv("AWS_ENDPOINT_URL_DYNAMODB");
	if (!e || !*e)
		e = getenv("AWS_ENDPOINT_URL");
	if (e && *e)
		snprintf(out, outsz, "%s", e);
	else
		snprintf(out, outsz, "https://dynamodb.%s.amazonaws.com", region);
}

/* Splits "http[s]://host[:port][/...]" into the URL to POST to ("/" path)
 * and the Host header. */
static bool set_endpoint(struct ddb_store *ds, const char *url, char *err)
{
	const char *p = strstr(url, "://");
	size_t scheme = p ? (size_t)(p - url) : 0;
	if (!p || !((scheme == 4 && strncmp(url, "http", 4) == 0) ||
		    (scheme == 5 && strncmp(url, "https", 5) == 0))) {
		snprintf(err, STORE_DDB_ERR_MAX, "endpoint '%.100s' is not an http(s) URL", url);
		return false;
	}
	const char *host = p + 3;
	size_t n = strcspn(host, "/?#");
	if (n == 0 || n >= sizeof ds->host || strcspn(host, "@ \t\r\n") < n) {
		snprintf(err, STORE_DDB_ERR_MAX, "endpoint '%.100s' has no valid host", url);
		return false;
	}
	memcpy(ds->host, host, n);
	ds->host[n] = '\0';
	snprintf(ds->url, sizeof ds->url, "%.*s://%s/", (int)scheme, url, ds->host);
	return true;
}

bool store_dynamodb_endpoint_region(const char *host, char *out, size_t outsz)
{
	static const char *const suffixes[] = {".amazonaws.com", ".amazonaws.com.cn"};
	static const char *const services[] = {"dynamodb.", "dynamodb-fips.", ".ddb."};
	size_t hl = strcspn(host, ":"), end = 0;
	for (size_t i = 0; i < 2 && end == 0; i++) {
		size_t sl = strlen(suffixes[i]);
		if (hl > sl && strncmp(host + hl - sl, suffixes[i], sl) == 0)
			end = hl - sl;
	}
	if (end == 0)
		return false;
	for (size_t i = 0; i < 3; i++) {
		const char *p = strstr(host, services[i]);
		if (p == NULL || (size_t)(p - host) >= end)
			continue;
		/* the service label at the start or after a dot */
		if (services[i][0] != '.' && p != host && p[-1] != '.')
			continue;
		const char *r = p + strlen(services[i]);
		size_t n = strcspn(r, ".:");
		if (n == 0 || n >= outsz || (size_t)(r - host) + n > end)
			continue;
		memcpy(out, r, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

/* An AWS endpoint in another region than the signing one: every request
 * would fail its signature, and a replica pointed at another region than
 * the others shares no lock with them. */
static bool endpoint_region_ok(struct ddb_store *ds, char *err)
{
	char region[64];
	if (!store_dynamodb_endpoint_region(ds->host, region, sizeof region) ||
	    strcmp(region, ds->region) == 0)
		return true;
	snprintf(err, STORE_DDB_ERR_MAX,
		 "endpoint %.80s is in region %.30s, requests are signed for %.30s "
		 "(--region, AWS_REGION): give both one region",
		 ds->host, region, ds->region);
	return false;
}

/* ---- the life of one call ---- */

static void link_call(struct ddb_store *ds, struct store_call *c)
{
	c->next = ds->calls;
	if (ds->calls)
		ds->calls->prev = c;
	ds->calls = c;
}

static void unlink_call(struct store_call *c)
{
	struct ddb_store *ds = c->ds;
	if (c->prev)
		c->prev->next = c->next;
	else
		ds->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	timer_cancel(&c->timer);
}

/* Ends the request's span: the table, the last answer's request id, the
 * retries it took; failed unless it ended well (a refused condition is an
 * answer, not a failure). */
static void end_span(struct store_call *c, const struct store_result *res)
{
	struct trace_span *s = c->span;
	if (s == NULL)
		return;
	c->span = NULL;
	trace_str(s, "aws.request_id", c->request_id[0] ? c->request_id : NULL);
	trace_int(s, "leasegate.dynamodb.retries", c->attempts > 0 ? c->attempts - 1 : 0);
	if (c->http_status)
		trace_int(s, "http.response.status_code", c->http_status);
	if (res == NULL)
		trace_fail(s, "cancelled");
	else if (res->status == STORE_TRANSIENT || res->status == STORE_FATAL) {
		trace_str(s, "error.type", res->error_type);
		trace_fail(s, res->message);
	}
	trace_end(s);
}

struct store_call *ddbs_start(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done, char *body,
			      size_t len)
{
	struct store_call *c = ddbs_new_call(ds, dop, done, ds->cfg.op_timeout_ms);
	if (c == NULL) {
		free(body);
		return NULL;
	}
	ddbs_go(c, body, len);
	return c;
}

void ddbs_go(struct store_call *c, char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	ds->base.in_flight++;
	if (ds->open != OPEN_DONE || body == NULL) {
		free(body);
		c->res.status = STORE_FATAL;
		c->res.error_type = ds->open != OPEN_DONE ? "NotOpen" : "OutOfMemory";
		snprintf(c->res.message, sizeof(c->res.message),
			 "DynamoDB store of table %.64s: %s", ds->table,
			 ds->open != OPEN_DONE ? "not open" : "out of memory");
		ddbs_defer(c);
		return;
	}
	c->body = body;
	c->body_len = len;
	ddbs_send(c);
}

void ddbs_drop(struct store_call *c)
{
	end_span(c, NULL);
	unlink_call(c);
	if (c->http)
		http_cancel(c->ds->http, c->http);
	ddb_body_free(c->body);
	free(c->sh);
	free(c->sess);
	free(c->slock);
	free(c->rev);
	pool_put(&call_pool, c, sizeof *c);
}

/* The one end of a call. It leaves the store before its callback runs, so
 * the callback may submit, cancel others, or free the store. */
static void finish(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	c->http = NULL;
	if (res->status != STORE_TRANSIENT && res->status != STORE_FATAL)
		ddb_quota_success(ds->policy, &ds->quota, c->spent);
	unlink_call(c);
	end_span(c, res);
	c->done(c, res, body, len);
	if (c->again) { /* sent on (ddbs_continue): it ends later */
		c->again = false;
		return;
	}
	ddb_body_free(c->body);
	free(c->sh);	/* a shared name's, unless done passed it on */
	free(c->sess);	/* a session's, likewise */
	free(c->slock); /* a takeover's */
	free(c->rev);	/* a revocation's */
	pool_put(&call_pool, c, sizeof *c);
}

void ddbs_continue(struct store_call *c, enum ddb_op dop, ddbs_done_fn done, char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	ddb_body_free(c->body);
	c->body = NULL;
	c->dop = dop;
	c->done = done;
	c->attempts = c->spent = 0;
	c->sent = c->maybe_applied = false;
	c->skew_retried = false;
	c->deadline_ms = clock_now_ms(ds->clock) + ds->cfg.op_timeout_ms;
	c->attempt_ms = ds->cfg.attempt_timeout_ms;
	c->again = true;
	link_call(ds, c);
	ddbs_go(c, body, len);
}

static void failed(struct store_call *c, struct ddb_verdict v, struct store_result *res,
		   const char *date);

/* The call's one timer: the wait before a retry, or a result decided
 * without an answer, which is delivered from the loop and never inside
 * store_submit(). */
static void on_timer(void *arg)
{
	struct store_call *c = arg;
	switch (c->job) {
	case JOB_SEND:
		ddbs_send(c);
		return;
	case JOB_FAIL:
		c->job = JOB_SEND;
		failed(c, c->verdict, &c->res, NULL);
		return;
	case JOB_FINISH:
		finish(c, &c->res, NULL, 0);
		return;
	}
}

/* Ends c with c->res, from the loop. */
void ddbs_defer(struct store_call *c)
{
	c->job = JOB_FINISH;
	timer_arm(&c->timer, 0);
}

/* An attempt failed before it was sent: decide on a retry from the loop. */
static void defer_failure(struct store_call *c, struct ddb_verdict v)
{
	c->job = JOB_FAIL;
	c->verdict = v;
	timer_arm(&c->timer, 0);
}

struct store_call *ddbs_new_call(struct ddb_store *ds, enum ddb_op dop, ddbs_done_fn done,
				 int64_t budget_ms)
{
	struct store_call *c = pool_get(&call_pool, sizeof *c);
	if (!c)
		return NULL;
	c->ds = ds;
	c->dop = dop;
	c->done = done;
	c->op = STORE_OP_COUNT;
	c->sh = NULL;
	c->sess = NULL;
	c->slock = NULL;
	c->rev = NULL;
	c->again = false;
	int64_t now = clock_now_ms(ds->clock);
	c->deadline_ms = now + budget_ms;
	c->attempt_ms = ds->cfg.attempt_timeout_ms;
	timer_init(&c->timer, ds->clock, on_timer, c);
	link_call(ds, c);
	return c;
}

static int64_t wall_ms(struct ddb_store *ds)
{
	return clock_wall_ms(ds->clock) + ds->stats.clock_offset_ms;
}

/* Learns the clock offset from the Date of an answer; false when there is
 * nothing to learn (no Date, or the offset is already right). */
static bool correct_skew(struct ddb_store *ds, const char *date)
{
	time_t t = date ? curl_getdate(date, NULL) : -1;
	if (t < 0)
		return false;
	int64_t offset = (int64_t)t * 1000 - clock_wall_ms(ds->clock);
	if (llabs(offset - ds->stats.clock_offset_ms) < 1000)
		return false;
	ds->stats.clock_offset_ms = offset;
	ds->stats.skew_corrections++;
	return true;
}

const int64_t ddb_latency_bounds_us[DDB_LATENCY_BUCKETS - 1] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000,
};

/* The attempt in flight was answered with class cls. */
static void observe(struct store_call *c, enum ddb_class cls)
{
	struct ddb_store *ds = c->ds;
	if (cls == DDB_C_TRANSIENT)
		c->maybe_applied = true;
	int64_t us = clock_now_us(ds->clock) - c->sent_us;
	struct ddb_latency *l = &ds->stats.latency[c->dop][cls];
	unsigned i = 0;
	if (us < 0)
		us = 0;
	while (i < DDB_LATENCY_BUCKETS - 1 && us > ddb_latency_bounds_us[i])
		i++;
	l->bucket[i]++;
	l->count++;
	l->sum_us += (uint64_t)us;
}

static enum store_status status_of(enum ddb_class cls)
{
	static const enum store_status map[DDB_C_COUNT] = {
		[DDB_C_OK] = STORE_OK,
		[DDB_C_REFUSED] = STORE_REFUSED,
		[DDB_C_NO_TABLE] = STORE_NO_TABLE,
		[DDB_C_FATAL] = STORE_FATAL,
		[DDB_C_THROTTLED] = STORE_TRANSIENT,
		[DDB_C_TRANSIENT] = STORE_TRANSIENT,
		[DDB_C_SKEW] = STORE_TRANSIENT,
	};
	return map[cls];
}

/* A failed attempt: retry it, or end the call with v. */
static void failed(struct store_call *c, struct ddb_verdict v, struct store_result *res,
		   const char *date)
{
	struct ddb_store *ds = c->ds;
	c->http = NULL;
	if (v.cls == DDB_C_THROTTLED)
		ds->stats.throttled++;
	if (v.cls == DDB_C_SKEW && (c->skew_retried || !correct_skew(ds, date)))
		v.cls = DDB_C_TRANSIENT; /* the offset is right already: no quick retry */
	else if (v.cls == DDB_C_SKEW)
		c->skew_retried = true;
	double r = ds->cfg.random ? ds->cfg.random(ds->cfg.random_arg) : drand48();
	struct ddb_retry d = ddb_retry_decide(ds->policy, &ds->quota, v, c->attempts,
					      clock_now_ms(ds->clock), c->deadline_ms, r);
	if (d.retry) {
		c->spent += d.cost;
		ds->stats.retries++;
		c->job = JOB_SEND;
		timer_arm(&c->timer, d.delay_ms);
		return;
	}
	res->status = status_of(v.cls);
	res->error_type = v.error_type;
	finish(c, res, NULL, 0);
}

/* The answer to the store's refusal: the item that refused it. */
static void refused_item(const struct ddb_error *e, struct store_result *res)
{
	if (e->has_item) {
		res->item = e->item;
		return;
	}
	for (unsigned i = 0; i < e->nreasons; i++) {
		if (e->reasons[i].has_item) {
			res->item = e->reasons[i].item;
			return;
		}
	}
}

/* A refusal by item of c's retry is c itself, applied by an earlier
 * attempt (store.h): an acquire whose owner and rvn the item shows; a
 * release that finds the lock free, or, when an attempt's outcome was
 * unknown, another owner's (granted after it). */
static bool refused_by_itself(const struct store_call *c, const struct lock_item *item)
{
	if (c->op == STORE_ACQUIRE)
		return store_acquire_applied(c->acq_owner, c->acq_rvn, item);
	if (c->op != STORE_RELEASE || c->attempts < 2 || !item->exists)
		return false;
	if (!item->has_owner)
		return true;
	return c->maybe_applied && c->acq_owner[0] != '\0' &&
	       strcmp(item->owner, c->acq_owner) != 0;
}

/* DynamoDB answered c's attempt with an error (not 2xx): a refusal ends
 * the call, anything else is retried or ends it (failed). */
static void answered_error(struct store_call *c, const struct http_response *hr,
			   struct store_result *res)
{
	struct ddb_store *ds = c->ds;
	const char *op = ddb_op_name(c->dop);
	char err[DDB_ERR_MAX] = "";
	struct ddb_error *e = malloc(sizeof *e);
	if (!e) {
		msgf(res, "out of memory reading an error of DynamoDB");
		observe(c, DDB_C_TRANSIENT);
		failed(c, (struct ddb_verdict){DDB_C_TRANSIENT, "OutOfMemory", false}, res, NULL);
		return;
	}
	bool item_ok = ddb_parse_error(hr->body, hr->body_len, ds->keys.ttl_attr, e, err);
	struct ddb_verdict v = ddb_classify(hr->status, e->type, e->message);
	if (strcmp(e->type, "TransactionCanceledException") == 0) {
		/* the reasons say why, item by item; one item here */
		for (unsigned i = 0; i < e->nreasons; i++)
			if (strcmp(e->reasons[i].code, "None") != 0 && e->reasons[i].code[0]) {
				v = ddb_classify(hr->status, e->reasons[i].code, e->message);
				break;
			}
	}
	/* a fenced transaction reads all its reasons, and is told which item
	 * failed (ddb_transact.c) */
	if (c->op == STORE_TRANSACT && strcmp(e->type, "TransactionCanceledException") == 0)
		v = ddb_tx_classify(hr->body, hr->body_len, v);
	if (v.cls == DDB_C_TRANSIENT && strstr(e->type, "ExpiredToken") &&
	    ds->cfg.credentials_expired)
		ds->cfg.credentials_expired(ds->cfg.credentials_arg);
	if (!item_ok) {
		v = (struct ddb_verdict){DDB_C_FATAL, "BadResponse", false};
		msgf(res, "DynamoDB %s on table %s: %s", op, ds->table, err);
	} else {
		msgf(res, "DynamoDB %s on table %s: %s (HTTP %ld): %s", op, ds->table,
		     e->type[0] ? e->type : "error", hr->status, e->message);
	}
	observe(c, v.cls);
	if (v.cls != DDB_C_REFUSED) {
		free(e);
		failed(c, v, res, hr->date);
		return;
	}
	refused_item(e, res);
	free(e);
	res->status = STORE_REFUSED;
	if (refused_by_itself(c, &res->item)) {
		res->status = STORE_OK;
		res->message[0] = '\0';
	}
	if (c->op == STORE_TRANSACT || c->raw)
		finish(c, res, hr->body, hr->body_len);
	else
		finish(c, res, NULL, 0);
}

static void on_http(void *arg, const struct http_response *hr)
{
	struct store_call *c = arg;
	struct ddb_store *ds = c->ds;
	const char *op = ddb_op_name(c->dop);
	struct store_result res;
	memset(&res, 0, sizeof res);
	c->http = NULL;
	if (hr->request_id != NULL)
		snprintf(c->request_id, sizeof c->request_id, "%s", hr->request_id);
	c->http_status = hr->status;
	if (hr->curl_code != CURLE_OK) {
		struct ddb_verdict v = ddb_classify_curl(hr->curl_code);
		observe(c, v.cls);
		msgf(&res, "DynamoDB %s on table %s: %s", op, ds->table,
		     hr->error ? hr->error : "transport error");
		if (c->page && hr->curl_code == CURLE_FILESIZE_EXCEEDED) {
			/* the same page would be as large again: not retried */
			v.cls = DDB_C_FATAL;
			msgf(&res,
			     "DynamoDB Scan on table %s: a page of %u items is larger than %u "
			     "bytes: ask for fewer",
			     ds->table, c->limit, HTTP_BODY_MAX);
		}
		failed(c, v, &res, NULL);
		return;
	}
	if (hr->crc32) {
		int64_t want;
		if (!ddb_parse_int64(hr->crc32, &want) ||
		    (uint32_t)want != ddb_crc32(hr->body, hr->body_len) || want < 0 ||
		    want > UINT32_MAX) {
			ds->stats.crc_mismatches++;
			observe(c, DDB_C_TRANSIENT);
			msgf(&res,
			     "DynamoDB %s on table %s: the CRC32 of the answer does not match", op,
			     ds->table);
			failed(c, (struct ddb_verdict){DDB_C_TRANSIENT, "Crc32Mismatch", false},
			       &res, NULL);
			return;
		}
	}
	if (hr->status >= 200 && hr->status < 300) {
		char err[DDB_ERR_MAX] = "";
		bool ok = c->page ? ddb_parse_scan(hr->body, hr->body_len, &ds->keys, c->limit,
						   c->page, err)
			  : c->op != STORE_OP_COUNT
				  ? ddb_parse_output(c->dop, hr->body, hr->body_len,
						     ds->keys.ttl_attr, &res.item, err)
				  : true;
		if (!ok) {
			res.status = STORE_FATAL;
			res.error_type = "BadResponse";
			msgf(&res, "DynamoDB %s on table %s: %s", op, ds->table, err);
		}
		observe(c, res.status == STORE_OK ? DDB_C_OK : DDB_C_FATAL);
		finish(c, &res, hr->body, hr->body_len);
		return;
	}
	answered_error(c, hr, &res);
}

/* Back-pressure: c, no renewal or release, ends TRANSIENT at once (from the
 * loop) because the HTTP queue is full; the client hears it now and asks
 * again, rather than wait in a queue that renewals go ahead of. */
static void shed(struct store_call *c)
{
	struct ddb_store *ds = c->ds;
	struct http_stats hs;
	http_stats(ds->http, &hs);
	ds->stats.shed++;
	c->res.status = STORE_TRANSIENT;
	c->res.error_type = "LocalQueueFull";
	c->res.not_sent = !c->sent;
	msgf(&c->res,
	     "DynamoDB %s on table %s: the requests to DynamoDB are saturated (%u in flight, %u "
	     "queued): try again",
	     ddb_op_name(c->dop), ds->table, hs.active, hs.queued);
	ddbs_defer(c);
}

/* Signs and sends the next attempt. It may run inside store_submit(), so
 * it never ends the call itself: failures before the send go through the
 * timer. */
void ddbs_send(struct store_call *c)
{
	struct ddb_store *ds = c->ds;
	struct store_result *res = &c->res;
	memset(res, 0, sizeof *res);
	int64_t left = c->deadline_ms - clock_now_ms(ds->clock);
	if (left <= 0) {
		res->status = STORE_TRANSIENT;
		res->error_type = "Timeout";
		res->not_sent = !c->sent;
		msgf(res, "DynamoDB %s on table %s: no time left before the deadline",
		     ddb_op_name(c->dop), ds->table);
		ddbs_defer(c);
		return;
	}
	/* a renewal or a release waiting behind acquires costs a lease */
	bool urgent = c->urgent || c->op == STORE_RENEW || c->op == STORE_RELEASE;
	if (!urgent && !http_has_room(ds->http, HTTP_PRIO_NORMAL)) {
		shed(c);
		return;
	}
	c->attempts++;
	const struct aws_credentials *cr = ds->cfg.credentials(ds->cfg.credentials_arg);
	if (!cr) {
		/* not retried here: the credential chain fetches on its own
		 * schedule, and the quota is for DynamoDB's failures */
		res->status = STORE_TRANSIENT;
		res->error_type = "CredentialsNotAvailable";
		res->not_sent = !c->sent;
		msgf(res, "DynamoDB %s on table %s: no AWS credentials available yet",
		     ddb_op_name(c->dop), ds->table);
		ddbs_defer(c);
		return;
	}
	struct http_header h[4 + 3] = {
		{"Host", ds->host},
		{"Content-Type", "application/x-amz-json-1.0"},
		{"X-Amz-Target", targets[c->dop]},
	};
	struct sigv4_request sr = {
		.method = "POST",
		.path = "/",
		.headers = h,
		.nheaders = 3,
		.body = c->body,
		.body_len = c->body_len,
		.region = ds->region,
		.service = "dynamodb",
		.key_cache = &ds->key_cache,
	};
	struct sigv4_signed sig;
	if (!sigv4_sign(&sr, cr, wall_ms(ds), &sig, NULL)) {
		msgf(res,
		     "DynamoDB %s on table %s: the request could not be signed "
		     "(credentials malformed or out of memory)",
		     ddb_op_name(c->dop), ds->table);
		defer_failure(c, (struct ddb_verdict){DDB_C_FATAL, "SigningFailed", false});
		return;
	}
	size_t n = 3;
	h[n++] = (struct http_header){"Accept-Encoding", "identity"}; /* not signed */
	for (size_t i = 0; i < sig.nextra; i++)
		h[n++] = sig.extra[i];
	int64_t t = c->attempt_ms < left ? c->attempt_ms : left;
	struct http_request req = {
		.priority = urgent ? HTTP_PRIO_URGENT : HTTP_PRIO_NORMAL,
		.method = "POST",
		.url = ds->url,
		.headers = h,
		.nheaders = n,
		.body = c->body,
		.body_len = c->body_len,
		.timeout_ms = t,
		.connect_timeout_ms = t,
		/* Waiting for a slot counts against the call's deadline, not the
		 * attempt's timeout: a renewal that timed out in the queue would
		 * be signed and queued again behind the others, and a backlog
		 * would feed itself. */
		.queue_timeout_ms = left,
	};
	c->sent_us = clock_now_us(ds->clock);
	c->http = http_send(ds->http, &req, on_http, c);
	if (c->http) {
		ds->stats.http[c->dop]++;
		c->sent = true;
	}
	if (!c->http && !urgent) {
		shed(c);
	} else if (!c->http) {
		msgf(res, "DynamoDB %s on table %s: too many requests queued", ddb_op_name(c->dop),
		     ds->table);
		defer_failure(c, (struct ddb_verdict){DDB_C_THROTTLED, "LocalQueueFull", false});
	}
}

/* ---- store operations ---- */

static void deliver(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct ddb_store *ds = c->ds;
	ds->base.in_flight--;
	c->cb(c->arg, res);
}

static struct store_call *ddb_submit(struct store *s, const struct store_req *req, store_cb cb,
				     void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	if (req->op == STORE_ACQUIRE && req->sess_check != STORE_SESS_CHECK_NONE)
		return ddbs_slock_takeover(s, req, cb, arg); /* a transaction */
	if (req->revoke_session != NULL)		     /* an ending with its revocation */
		return ddbs_revoke_end(s, req, cb, arg);
	/* An acquire's lease starts when it is sent: its whole lease is the
	 * budget. A renewal sent on schedule has two thirds of its lease left. */
	bool leased = (req->op == STORE_ACQUIRE || req->op == STORE_RENEW) && req->lease_ms > 0;
	int64_t budget = !leased		  ? ds->cfg.op_timeout_ms
			 : req->op == STORE_RENEW ? req->lease_ms * 2 / 3
						  : req->lease_ms;
	struct store_call *c = ddbs_new_call(ds, ddb_op_for(req->op), deliver, budget);
	if (!c)
		return NULL;
	c->cb = cb;
	c->arg = arg;
	c->op = req->op;
	c->unconditional = req->unconditional;
	c->acq_owner[0] = c->acq_rvn[0] = '\0';
	if (req->op == STORE_ACQUIRE && req->owner != NULL && req->rvn != NULL) {
		snprintf(c->acq_owner, sizeof c->acq_owner, "%s", req->owner);
		snprintf(c->acq_rvn, sizeof c->acq_rvn, "%s", req->rvn);
	}
	if (req->op == STORE_RELEASE && req->owner != NULL && !req->unconditional)
		snprintf(c->acq_owner, sizeof c->acq_owner, "%s", req->owner);
	/* DynamoDB's request as OpenTelemetry's database conventions name it */
	c->span = trace_child(req->span, ddb_op_name(c->dop), TRACE_CLIENT);
	trace_str(c->span, "db.system", "dynamodb");
	trace_str(c->span, "db.operation.name", ddb_op_name(c->dop));
	trace_str(c->span, "db.collection.name", ds->table);
	if (leased && req->lease_ms / 3 < c->attempt_ms)
		c->attempt_ms = req->lease_ms / 3 > 0 ? req->lease_ms / 3 : 1;
	if ((unsigned)req->op < STORE_OP_COUNT)
		s->requests[req->op]++;
	s->in_flight++;
	char err[DDB_ERR_MAX];
	bool urgent = req->op == STORE_RENEW || req->op == STORE_RELEASE;
	if (ds->open != OPEN_DONE) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "NotOpen";
		msgf(&c->res, "DynamoDB store of table %s is not open", ds->table);
	} else if (!urgent && !http_has_room(ds->http, HTTP_PRIO_NORMAL)) {
		shed(c); /* before its body is built: a herd of acquires costs little */
		return c;
	} else if (!(c->body = ddb_build_request(&ds->keys, req, &c->body_len, err))) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "InvalidRequest";
		msgf(&c->res, "DynamoDB %s on table %s: %s", store_op_name(req->op), ds->table,
		     err);
	} else {
		ddbs_send(c);
		return c;
	}
	ddbs_defer(c);
	return c;
}

/* The end of a scan: the page has its entries and cursor when OK. */
static void scan_done(struct store_call *c, struct store_result *res, const char *body, size_t len)
{
	struct store_scan_result *page = c->page;
	page->status = res->status == STORE_REFUSED ? STORE_FATAL : res->status;
	page->error_type = res->error_type;
	memcpy(page->message, res->message, sizeof page->message);
	if (page->status != STORE_OK) {
		page->count = 0;
		page->cursor[0] = '\0';
	}
	c->ds->base.in_flight--;
	c->page_cb(c->arg);
}

/* One Scan request, with the deadline and retries of the other requests
 * without a lease. store_scan() has checked limit and that the cursor is
 * printable; one that is no cursor of this table is refused here (NULL).
 * The page is written only when the answer comes, never after a cancel. */
static struct store_call *ddb_scan(struct store *s, const char *cursor, unsigned limit,
				   struct store_scan_result *page, void (*cb)(void *arg), void *arg)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	char err[DDB_ERR_MAX];
	char *body = NULL;
	size_t len = 0;
	if (ds->open == OPEN_DONE && !(body = ddb_build_scan(&ds->keys, cursor, limit, &len, err)))
		return NULL;
	struct store_call *c = ddbs_new_call(ds, DDB_SCAN, scan_done, ds->cfg.op_timeout_ms);
	if (!c) {
		ddb_body_free(body);
		return NULL;
	}
	c->op = STORE_SCAN;
	c->page = page;
	c->page_cb = cb;
	c->arg = arg;
	c->limit = limit;
	c->body = body;
	c->body_len = len;
	s->in_flight++;
	if (!body) {
		c->res.status = STORE_FATAL;
		c->res.error_type = "NotOpen";
		msgf(&c->res, "DynamoDB store of table %s is not open", ds->table);
		ddbs_defer(c);
	} else {
		ddbs_send(c);
	}
	return c;
}

static void ddb_cancel(struct store *s, struct store_call *c)
{
	s->in_flight--;
	ddbs_drop(c);
}

static void ddb_free(struct store *s)
{
	struct ddb_store *ds = (struct ddb_store *)s;
	timer_cancel(&ds->open_timer);
	while (ds->calls)
		ddbs_drop(ds->calls);
	if (ds->own_http)
		http_free(ds->http);
	sigv4_key_cache_clear(&ds->key_cache);
	free(ds);
}

static const struct store_ops ddb_ops = {
	.transact = ddbs_transact,
	.kv_commit = ddbs_kv_commit,
	.blob_put = ddbs_blob_put,
	.blob_get = ddbs_blob_get,
	.chan_publish = ddbs_chan_publish,
	.chan_read = ddbs_chan_read,
	.sh_submit = ddbs_sh_submit,
	.session_submit = ddbs_session_submit,
	.revoke_submit = ddbs_revoke_submit,
	.batch_read = ddbs_batch_read,
	.submit = ddb_submit,
	.cancel = ddb_cancel,
	.free = ddb_free,
	.scan = ddb_scan,
};

struct store *store_dynamodb_new(struct event_base *base, struct clock *clock,
				 const struct store_dynamodb_config *cfg, char *err)
{
	struct ddb_store *ds = calloc(1, sizeof *ds);
	if (!ds) {
		snprintf(err, STORE_DDB_ERR_MAX, "out of memory");
		return NULL;
	}
	ds->cfg = *cfg;
	ds->clock = clock;
	ds->base.ops = &ddb_ops;
	ds->base.table = ds->table;
	ds->policy = cfg->retry ? cfg->retry : &ddb_retry_standard;
	ddb_quota_init(&ds->quota, ds->policy);
	if (ds->cfg.attempt_timeout_ms <= 0)
		ds->cfg.attempt_timeout_ms = 5000;
	if (ds->cfg.op_timeout_ms <= 0)
		ds->cfg.op_timeout_ms = 15000;
	char endpoint[512], kerr[DDB_ERR_MAX];
	struct ddb_keys k = {cfg->table, cfg->partition_key ? cfg->partition_key : DEFAULT_PK,
			     cfg->partition_key ? cfg->sort_key : NULL, cfg->ttl_attribute};
	if (!cfg->credentials || !cfg->region || !*cfg->region ||
	    !ddbs_copy(ds->region, sizeof ds->region, cfg->region)) {
		snprintf(err, STORE_DDB_ERR_MAX, "DynamoDB store: %s",
			 cfg->credentials ? "a region (1..63 bytes) is required"
					  : "a credentials source is required");
		goto fail;
	}
	if (cfg->sort_key && !cfg->partition_key) {
		snprintf(err, STORE_DDB_ERR_MAX,
			 "table %.64s: a sort key name needs the partition key name too",
			 cfg->table ? cfg->table : "");
		goto fail;
	}
	if (!ddb_keys_valid(&k, kerr)) {
		snprintf(err, STORE_DDB_ERR_MAX, "%s", kerr);
		goto fail;
	}
	ddbs_copy(ds->table, sizeof ds->table, cfg->table);
	ddbs_copy(ds->pk, sizeof ds->pk, k.pk);
	if (k.sk)
		ddbs_copy(ds->sk, sizeof ds->sk, k.sk);
	if (k.ttl_attr)
		ddbs_copy(ds->ttl, sizeof ds->ttl, k.ttl_attr);
	ds->keys = (struct ddb_keys){ds->table, ds->pk, k.sk ? ds->sk : NULL,
				     k.ttl_attr ? ds->ttl : NULL};
	if (cfg->endpoint)
		snprintf(endpoint, sizeof endpoint, "%s", cfg->endpoint);
	else
		store_dynamodb_endpoint(ds->region, endpoint, sizeof endpoint);
	if (!set_endpoint(ds, endpoint, err) || !endpoint_region_ok(ds, err))
		goto fail;
	ddbs_copy(ds->stats.table.region, sizeof ds->stats.table.region, ds->region);
	ds->stats.table.global = -1;
	ds->http = cfg->http;
	if (!ds->http) {
		/* As many acquires and reads again may wait: past that they
		 * would wait longer than a request takes, and are refused.
		 * Renewals and releases are not refused for a full queue
		 * below STORE_DDB_URGENT_MAX: a lease has at most one in
		 * flight, so the leases bound them, and one refused costs a
		 * lease or a retry that only adds work. */
		struct http_options ho = {.max_active = cfg->max_in_flight,
					  .max_queued = STORE_DDB_URGENT_MAX,
					  .max_queued_normal = cfg->max_in_flight};
		ds->http = http_new(base, &ho);
		ds->own_http = true;
		if (!ds->http) {
			snprintf(err, STORE_DDB_ERR_MAX, "DynamoDB store: HTTP client init failed");
			goto fail;
		}
	}
	ds->keys_given = cfg->partition_key != NULL;
	ddbs_open_init(ds);
	/* the configuration's strings are not kept */
	ds->cfg.table = ds->table;
	ds->cfg.region = ds->region;
	ds->cfg.endpoint = ds->cfg.partition_key = ds->cfg.sort_key = ds->cfg.ttl_attribute = NULL;
	return &ds->base;
fail:
	free(ds);
	return NULL;
}

const struct ddb_keys *store_dynamodb_keys(const struct store *s)
{
	return &((const struct ddb_store *)s)->keys;
}

void store_dynamodb_stats(const struct store *s, struct store_dynamodb_stats *out)
{
	const struct ddb_store *ds = (const struct ddb_store *)s;
	*out = ds->stats;
	out->quota_tokens = ds->quota.tokens;
	http_stats(ds->http, &out->pool);
}
