/*
 * creds: the provider: picks a source (creds_pick.c), fetches from it,
 * serves and refreshes what it got. Fetching is a table of sources
 * (srcs[]); the HTTP ones (web identity, container, IMDSv2) are in
 * creds_fetch.c. Every listener call goes through one zero-delay timer
 * (notify), so none runs inside a creds_* call.
 */
#include "lib/aws/creds_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/clock.h"

#define DEFAULT_EARLY_MS	(5 * 60 * 1000)
#define DEFAULT_RETRY_MIN_MS	1000
#define DEFAULT_RETRY_MAX_MS	60000
#define DEFAULT_HTTP_TIMEOUT_MS 5000

static const char *const src_names[CREDS_SRC_COUNT] = {
	[CREDS_SRC_NONE] = "none",
	[CREDS_SRC_STATIC] = "static",
	[CREDS_SRC_ENV] = "environment",
	[CREDS_SRC_WEB_IDENTITY] = "web identity",
	[CREDS_SRC_PROFILE] = "shared files",
	[CREDS_SRC_CONTAINER] = "container",
	[CREDS_SRC_IMDS] = "instance metadata",
	[CREDS_SRC_CUSTOM] = "custom",
	[CREDS_SRC_ASSUME_ROLE] = "assume role",
};

const char *creds_source_name(enum creds_source s)
{
	return s < CREDS_SRC_COUNT ? src_names[s] : "?";
}

int64_t creds_refresh_at(int64_t obtained_ms, int64_t expiration_ms, int64_t refresh_early_ms)
{
	if (expiration_ms <= 0)
		return INT64_MAX;
	int64_t lifetime = expiration_ms - obtained_ms;
	int64_t early = refresh_early_ms;
	if (lifetime < 2 * refresh_early_ms)
		early = lifetime / 2;
	int64_t at = expiration_ms - early;
	return at < obtained_ms ? obtained_ms : at;
}

static void custom_fetch(struct creds *c)
{
	c->custom.fetch(c->custom.arg, creds_fetch_done_cb, c);
}

static void custom_cancel(struct creds *c)
{
	if (c->custom.cancel)
		c->custom.cancel(c->custom.arg);
}

/* How each source fetches; NULL fetch = static, fetched once at creds_new. */
static const struct {
	void (*fetch)(struct creds *c);
	void (*cancel)(struct creds *c);
} srcs[CREDS_SRC_COUNT] = {
	[CREDS_SRC_WEB_IDENTITY] = {creds_fetch_web_identity, creds_fetch_cancel_http},
	[CREDS_SRC_CONTAINER] = {creds_fetch_container, creds_fetch_cancel_http},
	[CREDS_SRC_IMDS] = {creds_fetch_imds, creds_fetch_cancel_http},
	[CREDS_SRC_CUSTOM] = {custom_fetch, custom_cancel},
	[CREDS_SRC_ASSUME_ROLE] = {creds_fetch_assume_role, creds_fetch_cancel_http},
};

static bool dynamic(const struct creds *c)
{
	return srcs[c->src].fetch != NULL;
}

static void on_notify(void *arg)
{
	struct creds *c = arg;
	if (!c->listener)
		return;
	const struct aws_credentials *cur = creds_get(c);
	if (c->notify_ok && cur)
		c->listener(c->listener_arg, cur, NULL);
	else
		c->listener(c->listener_arg, NULL,
			    c->last_error[0] ? c->last_error : "no credentials");
}

static void notify(struct creds *c, bool ok)
{
	c->notify_ok = ok;
	timer_arm(&c->notify, 0);
}

static void start_fetch(struct creds *c)
{
	c->fetching = true;
	c->fetches++;
	c->fetch_started_ms = clock_now_ms(c->clock);
	srcs[c->src].fetch(c);
}

static void on_refresh_timer(void *arg)
{
	struct creds *c = arg;
	if (!c->fetching)
		start_fetch(c);
}

void creds_fetch_done(struct creds *c, const struct aws_credentials *got, const char *error)
{
	if (!c->fetching)
		return; /* a late answer from a cancelled custom fetch */
	c->fetching = false;
	int64_t now = clock_wall_ms(c->clock);
	if (got && (got->expiration_ms == 0 || got->expiration_ms > now)) {
		c->cur = *got;
		c->have = true;
		c->last_error[0] = '\0';
		c->backoff_ms = 0;
		int64_t at = creds_refresh_at(now, got->expiration_ms, c->opts.refresh_early_ms);
		if (at == INT64_MAX)
			timer_cancel(&c->refresh);
		else
			timer_arm(&c->refresh, at - now);
		notify(c, true);
		return;
	}
	if (got)
		error = "fetched credentials have already expired";
	snprintf(c->last_error, sizeof c->last_error, "%s credentials: %s",
		 creds_source_name(c->src), error ? error : "failed");
	c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : c->opts.retry_min_ms;
	if (c->backoff_ms > c->opts.retry_max_ms)
		c->backoff_ms = c->opts.retry_max_ms;
	timer_arm(&c->refresh, c->backoff_ms);
	notify(c, false);
}

void creds_fetch_done_cb(void *arg, const struct aws_credentials *got, const char *error)
{
	creds_fetch_done(arg, got, error);
}

struct creds *creds_new(struct event_base *base, struct clock *clock,
			const struct creds_options *opts, char *err, size_t errsz)
{
	struct creds *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	c->base = base;
	c->clock = clock;
	if (opts)
		c->opts = *opts;
	if (!c->opts.getenv)
		c->opts.getenv = creds_default_getenv;
	if (c->opts.refresh_early_ms <= 0)
		c->opts.refresh_early_ms = DEFAULT_EARLY_MS;
	if (c->opts.retry_min_ms <= 0)
		c->opts.retry_min_ms = DEFAULT_RETRY_MIN_MS;
	if (c->opts.retry_max_ms < c->opts.retry_min_ms)
		c->opts.retry_max_ms = c->opts.retry_min_ms > DEFAULT_RETRY_MAX_MS
					       ? c->opts.retry_min_ms
					       : DEFAULT_RETRY_MAX_MS;
	if (c->opts.http_timeout_ms <= 0)
		c->opts.http_timeout_ms = DEFAULT_HTTP_TIMEOUT_MS;
	if (opts && opts->custom)
		c->custom = *opts->custom;
	c->opts.fixed = NULL; /* not kept: copied by creds_pick() */
	c->opts.custom = NULL;
	c->opts.region = NULL;
	timer_init(&c->refresh, clock, on_refresh_timer, c);
	timer_init(&c->notify, clock, on_notify, c);
	if (!creds_pick(c, opts, err, errsz)) {
		creds_free(c);
		return NULL;
	}
	if (srcs[c->src].fetch && srcs[c->src].cancel == creds_fetch_cancel_http) {
		if (opts && opts->http) {
			c->http = opts->http;
		} else {
			struct http_options ho = {.max_active = 4,
						  .max_queued = 16,
						  .connect_timeout_ms = 1000,
						  .timeout_ms = c->opts.http_timeout_ms};
			c->http = base ? http_new(base, &ho) : NULL;
			c->own_http = c->http != NULL;
		}
		if (!c->http) {
			snprintf(err, errsz, "%s credentials need HTTP: %s",
				 creds_source_name(c->src),
				 base ? "out of memory" : "no event base");
			creds_free(c);
			return NULL;
		}
	}
	return c;
}

bool creds_start(struct creds *c)
{
	if (dynamic(c))
		start_fetch(c);
	else
		notify(c, true);
	return true;
}

const struct aws_credentials *creds_get(struct creds *c)
{
	if (!c->have)
		return NULL;
	if (c->cur.expiration_ms && clock_wall_ms(c->clock) >= c->cur.expiration_ms)
		return NULL;
	return &c->cur;
}

void creds_set_listener(struct creds *c, creds_listener cb, void *arg)
{
	c->listener = cb;
	c->listener_arg = arg;
}

void creds_refresh(struct creds *c)
{
	if (!dynamic(c) || c->fetching)
		return;
	/* many failing requests may ask at once: at most one fetch per
	 * retry_min_ms */
	int64_t since = clock_now_ms(c->clock) - c->fetch_started_ms;
	if (c->fetches && since < c->opts.retry_min_ms) {
		int64_t wait = c->opts.retry_min_ms - since;
		if (!timer_armed(&c->refresh) || c->refresh.due_ms > clock_now_ms(c->clock) + wait)
			timer_arm(&c->refresh, wait);
		return;
	}
	timer_cancel(&c->refresh);
	start_fetch(c);
}

enum creds_source creds_source(const struct creds *c)
{
	return c->src;
}

const char *creds_last_error(const struct creds *c)
{
	return c->last_error;
}

void creds_free(struct creds *c)
{
	if (!c)
		return;
	timer_cancel(&c->refresh);
	timer_cancel(&c->notify);
	if (c->fetching && srcs[c->src].cancel)
		srcs[c->src].cancel(c);
	c->fetching = false;
	if (c->own_http)
		http_free(c->http);
	explicit_bzero(c, sizeof *c);
	free(c);
}
