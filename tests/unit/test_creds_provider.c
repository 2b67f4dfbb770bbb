/*
 * test_creds_provider: the credential provider over time, on the fake
 * clock: the refresh schedule (creds_refresh_at), then refresh, retry with
 * backoff, expiry and forced refresh against a custom source the test
 * answers by hand, and the static sources (fixed keys, environment keys).
 * Parsing and source selection are test_creds_parse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/base/clock.h"
#include "lib/aws/creds.h"
#include "tests/support/fake_env.h"

#define HOUR_MS (3600 * 1000LL)
#define MIN_MS	(60 * 1000LL)
#define T0	1764450000000LL /* 2025-11-29T21:00:00Z */

/* ---- the refresh schedule ---- */

static void test_refresh_at(void **state)
{
	static const struct {
		int64_t obtained, expiration, early, want;
	} cases[] = {
		{0, 0, 5 * MIN_MS, INT64_MAX},	       /* never expires */
		{0, HOUR_MS, 5 * MIN_MS, 55 * MIN_MS}, /* 5 min early */
		{0, 6 * HOUR_MS, 5 * MIN_MS, 6 * HOUR_MS - 5 * MIN_MS},
		{0, 4 * MIN_MS, 5 * MIN_MS, 2 * MIN_MS}, /* short: halfway */
		{1000, 1000 + 9 * MIN_MS, 5 * MIN_MS, 1000 + 4 * MIN_MS + 30000},
		{5000, 4000, 5 * MIN_MS, 5000}, /* already expired: now */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(
			creds_refresh_at(cases[i].obtained, cases[i].expiration, cases[i].early),
			cases[i].want);
}

/* ---- the provider on the fake clock ---- */

struct fake_src {
	int fetches, cancels;
	creds_done_fn done;
	void *done_arg;
};

static void fake_fetch(void *arg, creds_done_fn done, void *done_arg)
{
	struct fake_src *f = arg;
	f->fetches++;
	f->done = done;
	f->done_arg = done_arg;
}

static void fake_cancel(void *arg)
{
	((struct fake_src *)arg)->cancels++;
}

static void answer(struct fake_src *f, const char *key, int64_t expiration, const char *error)
{
	creds_done_fn done = f->done;
	f->done = NULL;
	assert_non_null(done);
	if (error) {
		done(f->done_arg, NULL, error);
		return;
	}
	struct aws_credentials c = {.expiration_ms = expiration};
	snprintf(c.access_key_id, sizeof c.access_key_id, "%s", key);
	snprintf(c.secret_access_key, sizeof c.secret_access_key, "secret-%s", key);
	snprintf(c.session_token, sizeof c.session_token, "token-%s", key);
	done(f->done_arg, &c, NULL);
}

struct heard {
	int ok, failed;
	char last_key[AWS_KEY_ID_MAX + 1], last_error[CREDS_ERR_MAX];
};

static void listener(void *arg, const struct aws_credentials *c, const char *error)
{
	struct heard *h = arg;
	if (c) {
		h->ok++;
		snprintf(h->last_key, sizeof h->last_key, "%s", c->access_key_id);
	} else {
		h->failed++;
		snprintf(h->last_error, sizeof h->last_error, "%s", error);
	}
}

struct rig {
	struct clock *clk;
	struct fake_src src;
	struct creds_custom custom;
	struct creds *c;
	struct heard heard;
};

static struct rig *rig_new(void)
{
	struct rig *r = calloc(1, sizeof *r);
	r->clk = clock_fake_new(T0);
	r->custom = (struct creds_custom){fake_fetch, fake_cancel, &r->src};
	struct creds_options o = {.custom = &r->custom};
	char err[CREDS_ERR_MAX];
	r->c = creds_new(NULL, r->clk, &o, err, sizeof err);
	assert_non_null(r->c);
	assert_int_equal(creds_source(r->c), CREDS_SRC_CUSTOM);
	creds_set_listener(r->c, listener, &r->heard);
	return r;
}

static void rig_free(struct rig *r)
{
	creds_free(r->c);
	assert_int_equal(clock_armed(r->clk), 0);
	clock_free(r->clk);
	free(r);
}

static void test_provider_refresh_schedule(void **state)
{
	struct rig *r = rig_new();
	assert_null(creds_get(r->c));
	assert_true(creds_start(r->c));
	assert_int_equal(r->src.fetches, 1);
	assert_null(creds_get(r->c)); /* not yet: a transient error for callers */
	answer(&r->src, "K1", T0 + HOUR_MS, NULL);
	/* the listener runs from the clock, not inside the answer */
	assert_int_equal(r->heard.ok, 0);
	clock_fake_advance(r->clk, 0);
	assert_int_equal(r->heard.ok, 1);
	assert_string_equal(r->heard.last_key, "K1");
	assert_string_equal(creds_get(r->c)->access_key_id, "K1");

	/* refreshed 5 minutes before expiry, not earlier */
	clock_fake_advance(r->clk, 55 * MIN_MS - 1);
	assert_int_equal(r->src.fetches, 1);
	clock_fake_advance(r->clk, 1);
	assert_int_equal(r->src.fetches, 2);
	/* the old credentials are served while the refresh runs */
	assert_string_equal(creds_get(r->c)->access_key_id, "K1");
	answer(&r->src, "K2", clock_wall_ms(r->clk) + 10 * MIN_MS, NULL);
	clock_fake_advance(r->clk, 0);
	assert_string_equal(creds_get(r->c)->access_key_id, "K2");
	assert_int_equal(r->heard.ok, 2);
	/* short-lived (10 min < 2 x 5 min early... = 10): refreshed at 5 min */
	clock_fake_advance(r->clk, 5 * MIN_MS - 1);
	assert_int_equal(r->src.fetches, 2);
	clock_fake_advance(r->clk, 1);
	assert_int_equal(r->src.fetches, 3);
	answer(&r->src, "K3", clock_wall_ms(r->clk) + 2 * MIN_MS, NULL);
	clock_fake_advance(r->clk, MIN_MS - 1); /* halfway through 2 minutes */
	assert_int_equal(r->src.fetches, 3);
	clock_fake_advance(r->clk, 1);
	assert_int_equal(r->src.fetches, 4);
	answer(&r->src, "K4", 0, NULL); /* never expires: no more refreshes */
	clock_fake_advance(r->clk, 100 * HOUR_MS);
	assert_int_equal(r->src.fetches, 4);
	assert_string_equal(creds_get(r->c)->access_key_id, "K4");
	rig_free(r);
}

static void test_provider_retry_and_expiry(void **state)
{
	struct rig *r = rig_new();
	assert_true(creds_start(r->c));
	answer(&r->src, NULL, 0, "endpoint down");
	clock_fake_advance(r->clk, 0);
	assert_int_equal(r->heard.failed, 1);
	assert_non_null(strstr(r->heard.last_error, "endpoint down"));
	assert_non_null(strstr(creds_last_error(r->c), "custom credentials: endpoint down"));
	assert_null(creds_get(r->c));
	/* backoff: 1 s, 2 s, 4 s... capped at 60 s */
	static const int64_t waits[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
	for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
		int before = r->src.fetches;
		clock_fake_advance(r->clk, waits[i] - 1);
		assert_int_equal(r->src.fetches, before);
		clock_fake_advance(r->clk, 1);
		assert_int_equal(r->src.fetches, before + 1);
		answer(&r->src, NULL, 0, "still down");
	}
	clock_fake_advance(r->clk, 60000);
	answer(&r->src, "K1", clock_wall_ms(r->clk) + HOUR_MS, NULL);
	clock_fake_advance(r->clk, 0);
	assert_string_equal(creds_last_error(r->c), "");
	int64_t got_at = clock_wall_ms(r->clk);

	/* refresh fails from 55 min on: the old keys are served until they
	 * expire, then none; the backoff started over at 1 s */
	clock_fake_advance(r->clk, 55 * MIN_MS);
	int before = r->src.fetches;
	answer(&r->src, NULL, 0, "down again");
	clock_fake_advance(r->clk, 999);
	assert_int_equal(r->src.fetches, before);
	clock_fake_advance(r->clk, 1);
	assert_int_equal(r->src.fetches, before + 1);
	answer(&r->src, NULL, 0, "down again");
	assert_non_null(creds_get(r->c));
	clock_fake_advance(r->clk, got_at + HOUR_MS - 1 - clock_wall_ms(r->clk));
	if (r->src.done)
		answer(&r->src, NULL, 0, "down");
	assert_non_null(creds_get(r->c));
	clock_fake_advance(r->clk, 1);
	assert_null(creds_get(r->c));
	/* already-expired credentials are a failure */
	clock_fake_advance(r->clk, 60000);
	if (!r->src.done)
		clock_fake_advance(r->clk, 60000);
	answer(&r->src, "OLD", clock_wall_ms(r->clk) - 1, NULL);
	assert_null(creds_get(r->c));
	assert_non_null(strstr(creds_last_error(r->c), "expired"));
	rig_free(r);
}

static void test_provider_forced_refresh(void **state)
{
	struct rig *r = rig_new();
	assert_true(creds_start(r->c));
	creds_refresh(r->c); /* in flight: no second fetch */
	assert_int_equal(r->src.fetches, 1);
	answer(&r->src, "K1", T0 + HOUR_MS, NULL);
	/* within retry_min (1 s) of the last fetch: deferred, once */
	creds_refresh(r->c);
	creds_refresh(r->c);
	assert_int_equal(r->src.fetches, 1);
	clock_fake_advance(r->clk, 1000);
	assert_int_equal(r->src.fetches, 2);
	answer(&r->src, "K2", T0 + HOUR_MS, NULL);
	clock_fake_advance(r->clk, 5000);
	creds_refresh(r->c); /* now at once */
	assert_int_equal(r->src.fetches, 3);
	/* freeing with a fetch in flight cancels it */
	assert_int_equal(r->src.cancels, 0);
	struct fake_src *src = &r->src;
	creds_free(r->c);
	assert_int_equal(src->cancels, 1);
	r->c = NULL;
	clock_free(r->clk);
	free(r);
}

static void test_static_sources(void **state)
{
	struct clock *clk = clock_fake_new(T0);
	struct aws_credentials k = {0};
	snprintf(k.access_key_id, sizeof k.access_key_id, "AKIDSTATIC");
	snprintf(k.secret_access_key, sizeof k.secret_access_key, "S");
	struct creds_options o = {.fixed = &k};
	char err[CREDS_ERR_MAX];
	struct creds *c = creds_new(NULL, clk, &o, err, sizeof err);
	assert_non_null(c);
	struct heard h = {0};
	creds_set_listener(c, listener, &h);
	assert_true(creds_start(c));
	assert_string_equal(creds_get(c)->access_key_id, "AKIDSTATIC");
	assert_int_equal(h.ok, 0); /* never inside creds_start() */
	clock_fake_advance(clk, 0);
	assert_int_equal(h.ok, 1);
	creds_refresh(c); /* no effect */
	clock_fake_advance(clk, 100 * HOUR_MS);
	assert_int_equal(h.ok, 1);
	assert_int_equal(clock_armed(clk), 0);
	creds_free(c);

	/* environment, with a session token */
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_ACCESS_KEY_ID", "AKIDENV");
	fake_env_set(&e, "AWS_SECRET_ACCESS_KEY", "SECRETENV");
	fake_env_set(&e, "AWS_SESSION_TOKEN", "TOKENENV");
	struct creds_options eo = {.getenv = fake_env_get, .getenv_arg = &e};
	c = creds_new(NULL, clk, &eo, err, sizeof err);
	assert_non_null(c);
	assert_string_equal(creds_source_name(creds_source(c)), "environment");
	assert_string_equal(creds_get(c)->session_token, "TOKENENV");
	assert_int_equal(creds_get(c)->expiration_ms, 0);
	creds_free(c);

	struct aws_credentials empty = {0};
	struct creds_options eo2 = {.fixed = &empty};
	assert_null(creds_new(NULL, clk, &eo2, err, sizeof err));
	/* HTTP sources need an event base */
	struct fake_env w = {0};
	fake_env_set(&w, "AWS_WEB_IDENTITY_TOKEN_FILE", "/t");
	fake_env_set(&w, "AWS_ROLE_ARN", "arn:r");
	struct creds_options wo = {.getenv = fake_env_get, .getenv_arg = &w};
	assert_null(creds_new(NULL, clk, &wo, err, sizeof err));
	assert_non_null(strstr(err, "event base"));
	clock_free(clk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refresh_at),
		cmocka_unit_test(test_provider_refresh_schedule),
		cmocka_unit_test(test_provider_retry_and_expiry),
		cmocka_unit_test(test_provider_forced_refresh),
		cmocka_unit_test(test_static_sources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
