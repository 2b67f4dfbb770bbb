/*
 * trace: span recording, sampling and the export queue (trace.h).
 */
#include "core/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct tracer {
	struct tracer_options o;
	uint64_t threshold; /* keep a new trace when its id's low 63 bits < this */
	struct trace_span *head, *tail;
	size_t queued;
	uint64_t started, dropped;
	uint8_t pool[4096]; /* random bytes for ids */
	size_t pool_left;
};

static void random_bytes(struct tracer *t, uint8_t *out, size_t n)
{
	if (t->pool_left < n) {
		if (getrandom(t->pool, sizeof(t->pool), 0) != (ssize_t)sizeof(t->pool)) {
			/* getrandom(2) of 4 KiB does not fail on Linux >= 3.17;
			 * ids must still differ, so fall back to a counter mix */
			static uint64_t x = 0x9E3779B97F4A7C15ull;
			for (size_t i = 0; i < sizeof(t->pool); i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				t->pool[i] = (uint8_t)x;
			}
		}
		t->pool_left = sizeof(t->pool);
	}
	memcpy(out, t->pool + sizeof(t->pool) - t->pool_left, n);
	t->pool_left -= n;
}

static bool nonzero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return true;
	return false;
}

struct tracer *tracer_new(const struct tracer_options *o)
{
	struct tracer *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->o = *o;
	if (t->o.queue_max == 0)
		t->o.queue_max = 2048;
	double r = o->ratio < 0 ? 0 : o->ratio > 1 ? 1 : o->ratio;
	t->threshold = r >= 1 ? UINT64_MAX : (uint64_t)(r * 9223372036854775808.0);
	return t;
}

void tracer_free(struct tracer *t)
{
	if (t == NULL)
		return;
	struct trace_span *s = t->head;
	while (s != NULL) {
		struct trace_span *next = s->next;
		free(s);
		s = next;
	}
	free(t);
}

/* The sampling decision of a new trace, from its id (as OpenTelemetry's
 * TraceIdRatioBased: the same id gives the same answer everywhere). */
static bool keep(const struct tracer *t, const uint8_t *trace_id)
{
	if (t->threshold == UINT64_MAX)
		return true;
	uint64_t v = 0;
	for (int i = 8; i < 16; i++)
		v = v << 8 | trace_id[i];
	return (v & 0x7FFFFFFFFFFFFFFFull) < t->threshold;
}

struct trace_span *trace_start(struct tracer *t, const char *name, enum trace_kind kind,
			       const struct trace_ctx *parent)
{
	if (t == NULL)
		return NULL;
	struct trace_ctx ctx = {.valid = true};
	bool has_parent = parent != NULL && parent->valid;
	if (has_parent) {
		if (!parent->sampled)
			return NULL;
		memcpy(ctx.trace_id, parent->trace_id, 16);
	} else {
		do
			random_bytes(t, ctx.trace_id, 16);
		while (!nonzero(ctx.trace_id, 16));
		if (!keep(t, ctx.trace_id))
			return NULL;
	}
	ctx.sampled = true;
	/* not calloc: the attributes (most of the size) are written as added */
	struct trace_span *s = malloc(sizeof(*s));
	if (s == NULL)
		return NULL;
	s->next = NULL;
	s->link.valid = false;
	s->error = false;
	s->status[0] = '\0';
	s->nattrs = 0;
	s->end_ns = 0;
	do
		random_bytes(t, ctx.span_id, 8);
	while (!nonzero(ctx.span_id, 8));
	s->tr = t;
	s->name = name;
	s->kind = kind;
	s->ctx = ctx;
	s->has_parent = has_parent;
	if (has_parent)
		memcpy(s->parent_id, parent->span_id, 8);
	s->start_ns = t->o.now_ns(t->o.now_arg);
	t->started++;
	return s;
}

struct trace_span *trace_child(const struct trace_span *parent, const char *name,
			       enum trace_kind kind)
{
	if (parent == NULL)
		return NULL;
	return trace_start(parent->tr, name, kind, &parent->ctx);
}

struct trace_ctx trace_ctx_of(const struct trace_span *s)
{
	struct trace_ctx none = {.valid = false};
	return s != NULL ? s->ctx : none;
}

static struct trace_attr *attr(struct trace_span *s, const char *key)
{
	if (s == NULL || s->nattrs == TRACE_ATTRS_MAX)
		return NULL;
	struct trace_attr *a = &s->attrs[s->nattrs++];
	a->key = key;
	return a;
}

void trace_str(struct trace_span *s, const char *key, const char *v)
{
	struct trace_attr *a = v != NULL ? attr(s, key) : NULL;
	if (a != NULL) {
		size_t n = strnlen(v, sizeof(a->s) - 1);
		a->type = TRACE_STR;
		memcpy(a->s, v, n);
		a->s[n] = '\0';
	}
}

void trace_int(struct trace_span *s, const char *key, int64_t v)
{
	struct trace_attr *a = attr(s, key);
	if (a != NULL) {
		a->type = TRACE_INT;
		a->i = v;
	}
}

void trace_bool(struct trace_span *s, const char *key, bool v)
{
	struct trace_attr *a = attr(s, key);
	if (a != NULL) {
		a->type = TRACE_BOOL;
		a->i = v;
	}
}

void trace_link(struct trace_span *s, const struct trace_ctx *ctx)
{
	if (s != NULL && ctx != NULL && ctx->valid)
		s->link = *ctx;
}

void trace_fail(struct trace_span *s, const char *msg)
{
	if (s == NULL)
		return;
	s->error = true;
	snprintf(s->status, sizeof(s->status), "%s", msg != NULL ? msg : "");
}

void trace_end(struct trace_span *s)
{
	if (s == NULL)
		return;
	struct tracer *t = s->tr;
	s->end_ns = t->o.now_ns(t->o.now_arg);
	if (t->queued >= t->o.queue_max) {
		t->dropped++;
		free(s);
		return;
	}
	s->next = NULL;
	if (t->tail != NULL)
		t->tail->next = s;
	else
		t->head = s;
	t->tail = s;
	t->queued++;
}

void trace_finish(struct trace_span **sp, const char *why)
{
	if (*sp == NULL)
		return;
	if (why != NULL)
		trace_fail(*sp, why);
	trace_end(*sp);
	*sp = NULL;
}

size_t tracer_take(struct tracer *t, struct trace_span **out, size_t max)
{
	size_t n = 0;
	while (t != NULL && n < max && t->head != NULL) {
		struct trace_span *s = t->head;
		t->head = s->next;
		if (t->head == NULL)
			t->tail = NULL;
		t->queued--;
		s->next = NULL;
		out[n++] = s;
	}
	return n;
}

void trace_free(struct trace_span *s)
{
	free(s);
}

void tracer_stats(const struct tracer *t, struct tracer_stats *out)
{
	*out = (struct tracer_stats){0};
	if (t == NULL)
		return;
	out->started = t->started;
	out->dropped = t->dropped;
	out->queued = t->queued;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1; /* W3C: lower case only */
}

static bool unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

bool trace_parse_traceparent(const char *s, struct trace_ctx *out)
{
	/* 00-<32>-<16>-<2>: 55 bytes */
	struct trace_ctx c = {0};
	uint8_t flags;
	if (s == NULL || strlen(s) != 55 || strncmp(s, "00-", 3) != 0 || s[35] != '-' ||
	    s[52] != '-' || !unhex(s + 3, c.trace_id, 16) || !unhex(s + 36, c.span_id, 8) ||
	    !unhex(s + 53, &flags, 1) || !nonzero(c.trace_id, 16) || !nonzero(c.span_id, 8))
		return false;
	c.sampled = flags & 1;
	c.valid = true;
	*out = c;
	return true;
}

void trace_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}
