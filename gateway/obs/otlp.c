/*
 * otlp: OTLP/HTTP JSON export of the tracer's spans (otlp.h).
 */
#include "gateway/obs/otlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/base/clock.h"
#include "lib/http/http.h"
#include "gateway/obs/log.h"
#include "protocols/buf.h"

#define HEADERS_MAX 8

struct otlp {
	struct tracer *tracer;
	struct http *http;
	struct timer tick;
	char url[512];
	char service[128];
	char version[32];
	char resource[512]; /* OTEL_RESOURCE_ATTRIBUTES, k=v,k=v */
	char headers_text[1024];
	struct http_header headers[HEADERS_MAX + 1];
	size_t nheaders;
	char describe[768];
	int64_t delay_ms, timeout_ms;
	size_t batch_max;
	struct http_req *inflight;
	size_t inflight_n;
	struct buf body;
	bool failing; /* the last export failed: logged once until one works */
	bool ticking; /* tick is initialised */
	struct otlp_stats st;
};

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return (*envp)[n + 1] ? *envp + n + 1 : NULL;
	return NULL;
}

/* The TRACES_ variable, else the general one. */
static const char *env2(char *const *envp, const char *traces, const char *general)
{
	const char *v = env_get(envp, traces);
	return v != NULL ? v : env_get(envp, general);
}

static bool env_ms(char *const *envp, const char *name, int64_t def, int64_t *out, char *err,
		   size_t errlen)
{
	const char *v = env_get(envp, name);
	char *end;
	*out = def;
	if (v == NULL)
		return true;
	long long x = strtoll(v, &end, 10);
	if (*end != '\0' || x <= 0) {
		snprintf(err, errlen, "%s: '%s' is not a positive number of milliseconds", name, v);
		return false;
	}
	*out = x;
	return true;
}

static int64_t now_ns(void *arg)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* OTEL_TRACES_SAMPLER[_ARG] -> the share of new traces kept; false with
 * err on an unknown sampler. Children follow their parent's decision. */
static bool sampler(char *const *envp, double *ratio, char *err, size_t errlen)
{
	const char *s = env_get(envp, "OTEL_TRACES_SAMPLER");
	const char *arg = env_get(envp, "OTEL_TRACES_SAMPLER_ARG");
	*ratio = 1;
	if (s == NULL || !strcmp(s, "always_on") || !strcmp(s, "parentbased_always_on"))
		return true;
	if (!strcmp(s, "always_off") || !strcmp(s, "parentbased_always_off")) {
		*ratio = 0;
		return true;
	}
	if (!strcmp(s, "traceidratio") || !strcmp(s, "parentbased_traceidratio")) {
		char *end = NULL;
		double r = arg != NULL ? strtod(arg, &end) : 1;
		if (arg != NULL && (*end != '\0' || r < 0 || r > 1)) {
			snprintf(err, errlen, "OTEL_TRACES_SAMPLER_ARG: '%s' is not a ratio 0..1",
				 arg);
			return false;
		}
		*ratio = r;
		return true;
	}
	snprintf(err, errlen,
		 "OTEL_TRACES_SAMPLER: '%s' is not one of always_on, always_off, traceidratio, "
		 "parentbased_always_on, parentbased_always_off, parentbased_traceidratio",
		 s);
	return false;
}

/* "k=v,k2=v2" into headers (values kept in o->headers_text). */
static bool parse_headers(struct otlp *o, const char *text, char *err, size_t errlen)
{
	snprintf(o->headers_text, sizeof(o->headers_text), "%s", text);
	o->headers[o->nheaders++] = (struct http_header){"Content-Type", "application/json"};
	for (char *save = NULL, *kv = strtok_r(o->headers_text, ",", &save); kv != NULL;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (eq == NULL || eq == kv || o->nheaders == HEADERS_MAX) {
			snprintf(err, errlen,
				 "OTEL_EXPORTER_OTLP_HEADERS: want key=value pairs separated by "
				 "commas (at most %d)",
				 HEADERS_MAX - 1);
			return false;
		}
		*eq = '\0';
		while (*kv == ' ')
			kv++;
		o->headers[o->nheaders++] = (struct http_header){kv, eq + 1};
	}
	return true;
}

static void tick(void *arg);

struct otlp *otlp_new(struct event_base *base, struct clock *clock, char *const *envp,
		      const char *version, char *err, size_t errlen)
{
	err[0] = '\0';
	const char *disabled = env_get(envp, "OTEL_SDK_DISABLED");
	const char *exporter = env_get(envp, "OTEL_TRACES_EXPORTER");
	const char *full = env_get(envp, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
	const char *base_url = env_get(envp, "OTEL_EXPORTER_OTLP_ENDPOINT");
	if ((disabled != NULL && strcasecmp(disabled, "true") == 0) ||
	    (exporter != NULL && strcmp(exporter, "none") == 0) ||
	    (full == NULL && base_url == NULL))
		return NULL;
	if (exporter != NULL && strcmp(exporter, "otlp") != 0) {
		snprintf(err, errlen, "OTEL_TRACES_EXPORTER: '%s' is not supported (otlp or none)",
			 exporter);
		return NULL;
	}
	const char *proto =
		env2(envp, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
	if (proto != NULL && strcmp(proto, "http/json") != 0) {
		snprintf(err, errlen,
			 "OTEL_EXPORTER_OTLP_PROTOCOL: '%s' is not supported: leasegate exports "
			 "http/json (set it to http/json; collectors take it on port 4318)",
			 proto);
		return NULL;
	}
	double ratio;
	if (!sampler(envp, &ratio, err, errlen))
		return NULL;
	struct otlp *o = calloc(1, sizeof(*o));
	if (o == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (full != NULL)
		snprintf(o->url, sizeof(o->url), "%s", full);
	else
		snprintf(o->url, sizeof(o->url), "%s%sv1/traces", base_url,
			 base_url[strlen(base_url) - 1] == '/' ? "" : "/");
	if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0) {
		snprintf(err, errlen, "OTEL_EXPORTER_OTLP_ENDPOINT: '%s' is not an http(s) URL",
			 o->url);
		free(o);
		return NULL;
	}
	const char *svc = env_get(envp, "OTEL_SERVICE_NAME");
	snprintf(o->service, sizeof(o->service), "%s", svc ? svc : "leasegate");
	snprintf(o->version, sizeof(o->version), "%s", version);
	const char *res = env_get(envp, "OTEL_RESOURCE_ATTRIBUTES");
	snprintf(o->resource, sizeof(o->resource), "%s", res ? res : "");
	int64_t queue, batch;
	const char *hdrs =
		env2(envp, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS");
	if (!parse_headers(o, hdrs ? hdrs : "", err, errlen) ||
	    !env_ms(envp, "OTEL_BSP_SCHEDULE_DELAY", 5000, &o->delay_ms, err, errlen) ||
	    !env_ms(envp,
		    env_get(envp, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
			    ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
			    : "OTEL_EXPORTER_OTLP_TIMEOUT",
		    10000, &o->timeout_ms, err, errlen) ||
	    !env_ms(envp, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, &queue, err, errlen) ||
	    !env_ms(envp, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, &batch, err, errlen)) {
		free(o);
		return NULL;
	}
	o->batch_max = (size_t)(batch < queue ? batch : queue);
	struct tracer_options to = {.ratio = ratio, .queue_max = (size_t)queue, .now_ns = now_ns};
	struct http_options ho = {.max_active = 1, .max_queued = 1, .timeout_ms = o->timeout_ms};
	o->tracer = tracer_new(&to);
	o->http = http_new(base, &ho);
	if (o->tracer == NULL || o->http == NULL) {
		snprintf(err, errlen, "out of memory");
		otlp_free(o);
		return NULL;
	}
	buf_init(&o->body, 0);
	timer_init(&o->tick, clock, tick, o);
	o->ticking = true;
	timer_arm(&o->tick, o->delay_ms);
	snprintf(o->describe, sizeof(o->describe),
		 "traces: OTLP/HTTP JSON to %s, %g%% of new traces sampled, every %lld ms", o->url,
		 ratio * 100, (long long)o->delay_ms);
	return o;
}

struct tracer *otlp_tracer(struct otlp *o)
{
	return o != NULL ? o->tracer : NULL;
}

const char *otlp_describe(const struct otlp *o)
{
	return o->describe;
}

void otlp_stats(const struct otlp *o, struct otlp_stats *out)
{
	*out = (struct otlp_stats){0};
	if (o == NULL)
		return;
	*out = o->st;
	struct tracer_stats ts;
	tracer_stats(o->tracer, &ts);
	out->queue_dropped = ts.dropped;
}

/* ---- OTLP JSON ---- */

/* A JSON string: runs of plain bytes copied at once, the rest escaped. */
static void json_str(struct buf *out, const char *s)
{
	buf_raw(out, "\"", 1);
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		const unsigned char *run = p;
		while (*p && *p != '"' && *p != '\\' && *p >= 0x20)
			p++;
		buf_raw(out, run, (size_t)(p - run));
		if (*p == '"' || *p == '\\') {
			char esc[2] = {'\\', (char)*p++};
			buf_raw(out, esc, 2);
		} else if (*p) {
			buf_printf(out, "\\u%04x", *p++);
		}
	}
	buf_raw(out, "\"", 1);
}

static void kv_str(struct buf *out, const char *key, const char *v, bool comma)
{
	buf_printf(out, "%s{\"key\":", comma ? "," : "");
	json_str(out, key);
	buf_printf(out, ",\"value\":{\"stringValue\":");
	json_str(out, v);
	buf_printf(out, "}}");
}

static void resource(struct buf *out, const char *service, const char *version, const char *attrs)
{
	buf_printf(out, "\"resource\":{\"attributes\":[");
	kv_str(out, "service.name", service, false);
	kv_str(out, "service.version", version, true);
	char copy[512];
	snprintf(copy, sizeof(copy), "%s", attrs ? attrs : "");
	for (char *save = NULL, *kv = strtok_r(copy, ",", &save); kv != NULL;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (eq != NULL && eq != kv) {
			*eq = '\0';
			kv_str(out, kv, eq + 1, true);
		}
	}
	buf_printf(out, "]}");
}

/* Plain text, a constant: no printf on the export's path. */
#define PUT(out, lit) buf_raw((out), (lit), sizeof(lit) - 1)

static void put_i64(struct buf *out, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		tmp[sizeof(tmp) - ++n] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		tmp[sizeof(tmp) - ++n] = '-';
	buf_raw(out, tmp + sizeof(tmp) - n, n);
}

static void put_hex(struct buf *out, const uint8_t *b, size_t n)
{
	char hex[33];
	trace_hex(b, n, hex);
	buf_raw(out, "\"", 1);
	buf_raw(out, hex, 2 * n);
	buf_raw(out, "\"", 1);
}

static void span_json(struct buf *out, const struct trace_span *s)
{
	PUT(out, "{\"traceId\":");
	put_hex(out, s->ctx.trace_id, 16);
	PUT(out, ",\"spanId\":");
	put_hex(out, s->ctx.span_id, 8);
	if (s->has_parent) {
		PUT(out, ",\"parentSpanId\":");
		put_hex(out, s->parent_id, 8);
	}
	PUT(out, ",\"name\":");
	json_str(out, s->name);
	PUT(out, ",\"kind\":");
	put_i64(out, s->kind);
	PUT(out, ",\"startTimeUnixNano\":\"");
	put_i64(out, s->start_ns);
	PUT(out, "\",\"endTimeUnixNano\":\"");
	put_i64(out, s->end_ns);
	PUT(out, "\",\"attributes\":[");
	for (unsigned i = 0; i < s->nattrs; i++) {
		const struct trace_attr *a = &s->attrs[i];
		if (i)
			PUT(out, ",");
		PUT(out, "{\"key\":");
		json_str(out, a->key);
		if (a->type == TRACE_STR) {
			PUT(out, ",\"value\":{\"stringValue\":");
			json_str(out, a->s);
			PUT(out, "}}");
		} else if (a->type == TRACE_INT) {
			PUT(out, ",\"value\":{\"intValue\":\"");
			put_i64(out, a->i);
			PUT(out, "\"}}");
		} else if (a->i) {
			PUT(out, ",\"value\":{\"boolValue\":true}}");
		} else {
			PUT(out, ",\"value\":{\"boolValue\":false}}");
		}
	}
	PUT(out, "]");
	if (s->link.valid) {
		PUT(out, ",\"links\":[{\"traceId\":");
		put_hex(out, s->link.trace_id, 16);
		PUT(out, ",\"spanId\":");
		put_hex(out, s->link.span_id, 8);
		PUT(out, "}]");
	}
	if (s->error) {
		PUT(out, ",\"status\":{\"code\":2,\"message\":");
		json_str(out, s->status);
		PUT(out, "}");
	}
	PUT(out, "}");
}

void otlp_encode(struct buf *out, const char *service, const char *version,
		 const char *resource_attrs, struct trace_span *const *spans, size_t n)
{
	buf_printf(out, "{\"resourceSpans\":[{");
	resource(out, service, version, resource_attrs);
	buf_printf(out, ",\"scopeSpans\":[{\"scope\":{\"name\":\"leasegate\",\"version\":");
	json_str(out, version);
	buf_printf(out, "},\"spans\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			PUT(out, ",");
		span_json(out, spans[i]);
	}
	buf_printf(out, "]}]}]}");
}

/* ---- export ---- */

static void export_batch(struct otlp *o);

static void exported(void *arg, const struct http_response *res)
{
	struct otlp *o = arg;
	size_t n = o->inflight_n;
	o->inflight = NULL;
	o->inflight_n = 0;
	bool ok = res->curl_code == 0 && res->status >= 200 && res->status < 300;
	if (ok) {
		o->st.exported += n;
		if (o->failing)
			log_fields(LOG_LVL_INFO, (struct log_field[]){LOG_STR("url", o->url)}, 1,
				   "trace export works again");
		o->failing = false;
		struct tracer_stats ts;
		tracer_stats(o->tracer, &ts);
		if (ts.queued >= o->batch_max) /* a backlog: the next batch now */
			export_batch(o);
		return;
	}
	o->st.export_failed += n;
	if (!o->failing) {
		char why[160];
		if (res->curl_code != 0)
			snprintf(why, sizeof(why), "%s",
				 res->error ? res->error : "transport error");
		else
			snprintf(why, sizeof(why), "HTTP %ld", res->status);
		log_fields(LOG_LVL_WARN,
			   (struct log_field[]){LOG_STR("url", o->url), LOG_STR("error", why)}, 2,
			   "trace export failed: %s; spans are dropped (and counted in "
			   "leasegate_trace_spans_dropped_total) until the collector answers",
			   why);
	}
	o->failing = true;
}

static void export_batch(struct otlp *o)
{
	if (o->inflight != NULL)
		return;
	struct trace_span *spans[512];
	size_t max = o->batch_max < 512 ? o->batch_max : 512;
	size_t n = tracer_take(o->tracer, spans, max);
	if (n == 0)
		return;
	o->body.len = 0;
	otlp_encode(&o->body, o->service, o->version, o->resource, spans, n);
	for (size_t i = 0; i < n; i++)
		trace_free(spans[i]);
	struct http_request req = {
		.method = "POST",
		.url = o->url,
		.headers = o->headers,
		.nheaders = o->nheaders,
		.body = o->body.buf,
		.body_len = o->body.len,
		.timeout_ms = o->timeout_ms,
	};
	if (buf_failed(&o->body) || (o->inflight = http_send(o->http, &req, exported, o)) == NULL) {
		o->st.export_failed += n;
		buf_free(&o->body);
		buf_init(&o->body, 0);
		return;
	}
	o->inflight_n = n;
	o->st.exports++;
}

static void tick(void *arg)
{
	struct otlp *o = arg;
	export_batch(o);
	timer_arm(&o->tick, o->delay_ms);
}

void otlp_flush(struct otlp *o)
{
	if (o != NULL)
		export_batch(o);
}

void otlp_free(struct otlp *o)
{
	if (o == NULL)
		return;
	if (o->ticking)
		timer_cancel(&o->tick);
	if (o->http != NULL)
		http_free(o->http);
	tracer_free(o->tracer);
	buf_free(&o->body);
	free(o);
}
