/*
 * test_creds_parse: what the credential chain reads, without a network:
 * ISO 8601, the ini of the shared files, the STS XML and credentials JSON,
 * profiles and the region from the shared files (written to a temporary
 * directory), and which source and STS endpoint a (fake) environment picks.
 * The provider's refresh, retry and expiry are test_creds_provider.
 */
#include <event2/event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/base/clock.h"
#include "lib/aws/creds.h"
#include "lib/aws/creds_internal.h" /* the STS URL picked */
#include "lib/aws/creds_parse.h"
#include "tests/support/fake_env.h"

#define T0 1764450000000LL /* 2025-11-29T21:00:00Z */

/* ---- the shared files, in a temporary directory ---- */

static char tmpdir[256];

static void write_file(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *tmp_path(const char *name)
{
	static char paths[8][512];
	static int i;
	char *p = paths[i++ % 8];
	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

/* ---- pure parsers ---- */

static void test_iso8601(void **state)
{
	static const struct {
		const char *s;
		bool ok;
		int64_t ms;
	} cases[] = {
		{"1970-01-01T00:00:00Z", true, 0},
		{"2015-08-30T12:36:00Z", true, 1440938160000},
		{"2015-08-30T12:36:00.5Z", true, 1440938160500},
		{"2026-11-29T21:27:49.000431Z", true, 1795987669000}, /* moto's form */
		{"2015-08-30T14:36:00+02:00", true, 1440938160000},
		{"2015-08-30T10:36:00-0200", true, 1440938160000},
		{"2016-02-29T00:00:00Z", true, 1456704000000},
		{"2015-08-30 12:36:00Z", false, 0},
		{"2015-08-30T12:36:00", false, 0},
		{"2015-13-30T12:36:00Z", false, 0},
		{"2015-08-30T12:36:00Zjunk", false, 0},
		{"2015-08-30T12:36:00.Z", false, 0},
		{"", false, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t ms = -1;
		bool ok = creds_parse_iso8601(cases[i].s, &ms);
		if (ok != cases[i].ok || (ok && ms != cases[i].ms))
			fail_msg("'%s': ok=%d ms=%lld", cases[i].s, ok, (long long)ms);
	}
}

static void test_ini(void **state)
{
	const char *t = "# comment\n"
			"[default]\n"
			"aws_access_key_id = AKIDDEFAULT\n"
			"  nested = ignored\n"
			"; another comment\n"
			"region=eu-west-1\r\n"
			"[profile   dev ]\n"
			"region = us-west-2 \n"
			"s3 =\n"
			"    max_concurrent_requests = 10\n"
			"[other]\n"
			"key = a = b\n";
	char v[64];
	assert_true(creds_ini_get(t, "default", "aws_access_key_id", v, sizeof v));
	assert_string_equal(v, "AKIDDEFAULT");
	assert_true(creds_ini_get(t, "default", "region", v, sizeof v));
	assert_string_equal(v, "eu-west-1");
	assert_false(creds_ini_get(t, "default", "nested", v, sizeof v));
	assert_true(creds_ini_get(t, "profile dev", "region", v, sizeof v));
	assert_string_equal(v, "us-west-2");
	assert_false(creds_ini_get(t, "profile dev", "max_concurrent_requests", v, sizeof v));
	assert_true(creds_ini_get(t, "other", "key", v, sizeof v));
	assert_string_equal(v, "a = b");
	assert_false(creds_ini_get(t, "dev", "region", v, sizeof v));
	assert_false(creds_ini_get(t, "default", "aws_access_key_id", v, 5)); /* too long */
	assert_true(creds_ini_has_section(t, "profile dev"));
	assert_false(creds_ini_has_section(t, "profile other"));
	assert_false(creds_ini_has_section(NULL, "default"));
}

static void test_sts_xml(void **state)
{
	const char *ok = "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/"
			 "2011-06-15/\"><AssumeRoleWithWebIdentityResult><Credentials>"
			 "<AccessKeyId>ASIAEXAMPLE</AccessKeyId>"
			 "<SecretAccessKey>sec&amp;ret</SecretAccessKey>"
			 "<SessionToken>tok/+=</SessionToken>"
			 "<Expiration>2015-08-30T12:36:00.000431Z</Expiration></Credentials>"
			 "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
	struct aws_credentials c;
	char err[CREDS_ERR_MAX];
	assert_true(creds_parse_sts_xml(ok, strlen(ok), &c, err, sizeof err));
	assert_string_equal(c.access_key_id, "ASIAEXAMPLE");
	assert_string_equal(c.secret_access_key, "sec&ret");
	assert_string_equal(c.session_token, "tok/+=");
	assert_int_equal(c.expiration_ms, 1440938160000);

	const char *e = "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
			"<Message>Token expired</Message></Error></ErrorResponse>";
	assert_false(creds_parse_sts_xml(e, strlen(e), &c, err, sizeof err));
	assert_string_equal(err, "STS error InvalidIdentityToken: Token expired");

	static const char *const bad[] = {
		"<Credentials><AccessKeyId>A</AccessKeyId></Credentials>",
		"<Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>S</SecretAccessKey>"
		"<SessionToken>T</SessionToken><Expiration>soon</Expiration></Credentials>",
		"<Credentials><AccessKeyId>A&bogus;</AccessKeyId></Credentials>",
		"not xml",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_false(creds_parse_sts_xml(bad[i], strlen(bad[i]), &c, err, sizeof err));
		assert_int_equal(c.access_key_id[0], 0); /* nothing half-filled */
		assert_null(strstr(err, "S</"));
	}
	char *big = calloc(1, 70000);
	memset(big, ' ', 69999);
	assert_false(creds_parse_sts_xml(big, 69999, &c, err, sizeof err));
	assert_non_null(strstr(err, "too large"));
	free(big);
}

static void test_json(void **state)
{
	struct aws_credentials c;
	char err[CREDS_ERR_MAX];
	const char *container = "{\"RoleArn\":\"arn:aws:iam::1:role/r\",\"AccessKeyId\":\"ASIA1\","
				"\"SecretAccessKey\":\"S1\",\"Token\":\"T1\","
				"\"Expiration\":\"2015-08-30T12:36:00Z\"}";
	assert_true(creds_parse_json(container, strlen(container), &c, err, sizeof err));
	assert_string_equal(c.access_key_id, "ASIA1");
	assert_string_equal(c.secret_access_key, "S1");
	assert_string_equal(c.session_token, "T1");
	assert_int_equal(c.expiration_ms, 1440938160000);

	const char *imds = "{\"Code\":\"Success\",\"LastUpdated\":\"2015-08-30T12:00:00Z\","
			   "\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\"ASIA2\",\"SecretAccessKey\":"
			   "\"S2\",\"Token\":\"T2\",\"Expiration\":\"2015-08-30T18:36:00Z\"}";
	assert_true(creds_parse_json(imds, strlen(imds), &c, err, sizeof err));
	assert_string_equal(c.access_key_id, "ASIA2");

	const char *noexp = "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}";
	assert_true(creds_parse_json(noexp, strlen(noexp), &c, err, sizeof err));
	assert_int_equal(c.expiration_ms, 0);
	assert_string_equal(c.session_token, "");

	static const struct {
		const char *doc, *msg;
	} bad[] = {
		{"{\"Code\":\"Failure\",\"Message\":\"no role\",\"AccessKeyId\":\"A\"}", "Failure"},
		{"{\"AccessKeyId\":\"A\",\"Token\":\"T\"}", "incomplete"},
		{"{\"AccessKeyId\":1,\"SecretAccessKey\":\"S\"}", "incomplete"},
		{"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"SECRETX\",\"Expiration\":\"x\"}",
		 "Expiration"},
		{"[1]", "not a JSON object"},
		{"{", "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_false(creds_parse_json(bad[i].doc, strlen(bad[i].doc), &c, err, sizeof err));
		assert_non_null(strstr(err, bad[i].msg));
		assert_null(strstr(err, "SECRETX"));
		assert_int_equal(c.access_key_id[0], 0);
	}
}

/* ---- profiles and source selection ---- */

static const char CRED_FILE[] = "[default]\n"
				"aws_access_key_id = AKIDFILEDEFAULT\n"
				"aws_secret_access_key = SECRETFILEDEFAULT\n"
				"[dev]\n"
				"aws_access_key_id = AKIDFILEDEV\n"
				"aws_secret_access_key = SECRETFILEDEV\n"
				"aws_session_token = TOKENFILEDEV\n"
				"[half]\n"
				"aws_secret_access_key = SECRETHALF\n";
static const char CONF_FILE[] = "[default]\n"
				"region = eu-central-1\n"
				"aws_access_key_id = AKIDCONFDEFAULT\n"
				"[profile dev]\n"
				"region = us-west-2\n"
				"aws_access_key_id = AKIDCONFDEV\n"
				"[profile confonly]\n"
				"aws_access_key_id = AKIDCONFONLY\n"
				"aws_secret_access_key = SECRETCONFONLY\n"
				"region = ap-south-1\n"
				"[profile wi]\n"
				"web_identity_token_file = /var/run/token\n"
				"role_arn = arn:aws:iam::123456789012:role/wi\n"
				"role_session_name = sess\n"
				"[profile empty]\n"
				"region = sa-east-1\n"
				"[profile sso]\n"
				"sso_session = corp\n"
				"sso_account_id = 123456789012\n"
				"[profile ssolegacy]\n"
				"sso_start_url = https://corp.awsapps.com/start\n"
				"[profile assume]\n"
				"role_arn = arn:aws:iam::123456789012:role/ops\n"
				"source_profile = dev\n"
				"[profile assumeempty]\n"
				"role_arn = arn:aws:iam::123456789012:role/ops\n"
				"source_profile = empty\n"
				"[profile assumenone]\n"
				"role_arn = arn:aws:iam::123456789012:role/ops\n"
				"[profile proc]\n"
				"credential_process = /usr/bin/get-keys\n";

static void files_env(struct fake_env *e)
{
	memset(e, 0, sizeof *e);
	fake_env_set(e, "AWS_SHARED_CREDENTIALS_FILE", tmp_path("credentials"));
	fake_env_set(e, "AWS_CONFIG_FILE", tmp_path("config"));
	fake_env_set(e, "AWS_EC2_METADATA_DISABLED", "true");
}

static void test_profile_load(void **state)
{
	struct fake_env e;
	files_env(&e);
	struct creds_profile p;
	char err[CREDS_ERR_MAX];
	assert_true(creds_profile_load(fake_env_get, &e, NULL, &p, err, sizeof err));
	assert_true(p.exists && p.has_keys);
	/* the credentials file wins over the config file */
	assert_string_equal(p.keys.access_key_id, "AKIDFILEDEFAULT");
	assert_string_equal(p.region, "eu-central-1");

	assert_true(creds_profile_load(fake_env_get, &e, "dev", &p, err, sizeof err));
	assert_string_equal(p.keys.access_key_id, "AKIDFILEDEV");
	assert_string_equal(p.keys.session_token, "TOKENFILEDEV");
	assert_string_equal(p.region, "us-west-2");

	assert_true(creds_profile_load(fake_env_get, &e, "confonly", &p, err, sizeof err));
	assert_true(p.has_keys);
	assert_string_equal(p.keys.secret_access_key, "SECRETCONFONLY");

	assert_true(creds_profile_load(fake_env_get, &e, "wi", &p, err, sizeof err));
	assert_false(p.has_keys);
	assert_string_equal(p.web_identity_token_file, "/var/run/token");
	assert_string_equal(p.role_session_name, "sess");

	assert_true(creds_profile_load(fake_env_get, &e, "nope", &p, err, sizeof err));
	assert_false(p.exists);

	/* half keys: an error that names the keys, never their values */
	assert_false(creds_profile_load(fake_env_get, &e, "half", &p, err, sizeof err));
	assert_non_null(strstr(err, "aws_access_key_id"));
	assert_null(strstr(err, "SECRETHALF"));

	/* AWS_PROFILE picks the profile */
	fake_env_set(&e, "AWS_PROFILE", "confonly");
	assert_true(creds_profile_load(fake_env_get, &e, NULL, &p, err, sizeof err));
	assert_string_equal(p.keys.access_key_id, "AKIDCONFONLY");

	/* defaults under HOME; missing files are no error */
	struct fake_env h = {0};
	fake_env_set(&h, "HOME", tmpdir);
	assert_true(creds_profile_load(fake_env_get, &h, NULL, &p, err, sizeof err));
	assert_false(p.exists);

	/* an oversized file is refused */
	char *big = malloc(CREDS_FILE_MAX + 2);
	memset(big, '#', CREDS_FILE_MAX + 1);
	big[CREDS_FILE_MAX + 1] = '\0';
	write_file("bigconfig", big);
	free(big);
	struct fake_env b = {0};
	fake_env_set(&b, "AWS_CONFIG_FILE", tmp_path("bigconfig"));
	fake_env_set(&b, "AWS_SHARED_CREDENTIALS_FILE", tmp_path("none"));
	assert_false(creds_profile_load(fake_env_get, &b, NULL, &p, err, sizeof err));
	assert_non_null(strstr(err, "too large"));
}

static void test_region(void **state)
{
	struct fake_env e;
	files_env(&e);
	char r[CREDS_REGION_MAX];
	assert_true(creds_region(fake_env_get, &e, r, sizeof r));
	assert_string_equal(r, "eu-central-1");
	fake_env_set(&e, "AWS_PROFILE", "dev");
	assert_true(creds_region(fake_env_get, &e, r, sizeof r));
	assert_string_equal(r, "us-west-2");
	fake_env_set(&e, "AWS_DEFAULT_REGION", "us-east-2");
	assert_true(creds_region(fake_env_get, &e, r, sizeof r));
	assert_string_equal(r, "us-east-2");
	fake_env_set(&e, "AWS_REGION", "us-east-1"); /* wins over AWS_DEFAULT_REGION */
	assert_true(creds_region(fake_env_get, &e, r, sizeof r));
	assert_string_equal(r, "us-east-1");
	struct fake_env none = {0};
	fake_env_set(&none, "AWS_SHARED_CREDENTIALS_FILE", tmp_path("none"));
	fake_env_set(&none, "AWS_CONFIG_FILE", tmp_path("none"));
	assert_false(creds_region(fake_env_get, &none, r, sizeof r));
	assert_string_equal(r, "");
}

struct pick_case {
	const char *env[12][2];
	enum creds_source want; /* CREDS_SRC_NONE: creds_new fails */
	const char *key_id;	/* static sources: the key served */
	const char *err_has;	/* on failure */
};

static void test_source_precedence(void **state)
{
	static const struct pick_case cases[] = {
		/* environment keys beat everything */
		{{{"AWS_ACCESS_KEY_ID", "AKIDENV"},
		  {"AWS_SECRET_ACCESS_KEY", "SECRETENV"},
		  {"AWS_WEB_IDENTITY_TOKEN_FILE", "/t"},
		  {"AWS_ROLE_ARN", "arn:r"},
		  {"AWS_PROFILE", "dev"},
		  {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/c"}},
		 CREDS_SRC_ENV,
		 "AKIDENV",
		 NULL},
		/* half environment keys: an error, without the secret */
		{{{"AWS_SECRET_ACCESS_KEY", "SECRETENV"}},
		 CREDS_SRC_NONE,
		 NULL,
		 "AWS_ACCESS_KEY_ID"},
		/* web identity (environment) beats the shared files */
		{{{"AWS_WEB_IDENTITY_TOKEN_FILE", "/t"},
		  {"AWS_ROLE_ARN", "arn:r"},
		  {"AWS_PROFILE", "dev"}},
		 CREDS_SRC_WEB_IDENTITY,
		 NULL,
		 NULL},
		/* a role ARN alone is not web identity */
		{{{"AWS_ROLE_ARN", "arn:r"}}, CREDS_SRC_PROFILE, "AKIDFILEDEFAULT", NULL},
		{{{"AWS_PROFILE", "dev"}}, CREDS_SRC_PROFILE, "AKIDFILEDEV", NULL},
		{{{"AWS_PROFILE", "wi"}}, CREDS_SRC_WEB_IDENTITY, NULL, NULL},
		{{{"AWS_PROFILE", "missing"}}, CREDS_SRC_NONE, NULL, "missing"},
		{{{"AWS_PROFILE", "missing"}}, CREDS_SRC_NONE, NULL, "profile not found"},
		/* kinds of profile leasegate does not run: refused by name */
		{{{"AWS_PROFILE", "sso"}}, CREDS_SRC_NONE, NULL, "profile sso is an SSO profile"},
		{{{"AWS_PROFILE", "ssolegacy"}}, CREDS_SRC_NONE, NULL, "is an SSO profile"},
		/* role_arn + source_profile: AssumeRole with the source's keys */
		{{{"AWS_PROFILE", "assume"}}, CREDS_SRC_ASSUME_ROLE, NULL, NULL},
		{{{"AWS_PROFILE", "assumeempty"}},
		 CREDS_SRC_NONE,
		 NULL,
		 "which has no aws_access_key_id"},
		{{{"AWS_PROFILE", "assumenone"}}, CREDS_SRC_NONE, NULL, "but no source_profile"},
		{{{"AWS_PROFILE", "proc"}}, CREDS_SRC_NONE, NULL, "credential_process"},
		{{{"AWS_PROFILE", "half"}}, CREDS_SRC_NONE, NULL, "aws_access_key_id"},
		/* a profile without keys falls through to the container */
		{{{"AWS_PROFILE", "empty"}, {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/c"}},
		 CREDS_SRC_CONTAINER,
		 NULL,
		 NULL},
		{{{"AWS_PROFILE", "empty"},
		  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.23/v1/credentials"},
		  {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/t"}},
		 CREDS_SRC_CONTAINER,
		 NULL,
		 NULL},
		{{{"AWS_PROFILE", "empty"},
		  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:8080/creds"}},
		 CREDS_SRC_CONTAINER,
		 NULL,
		 NULL},
		{{{"AWS_PROFILE", "empty"},
		  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "https://creds.example.com/x"}},
		 CREDS_SRC_CONTAINER,
		 NULL,
		 NULL},
		/* plain http elsewhere is refused */
		{{{"AWS_PROFILE", "empty"},
		  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://evil.example.com/creds"}},
		 CREDS_SRC_NONE,
		 NULL,
		 "FULL_URI"},
		{{{"AWS_PROFILE", "empty"},
		  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.evil.com/creds"}},
		 CREDS_SRC_NONE,
		 NULL,
		 "FULL_URI"},
		{{{"AWS_PROFILE", "empty"},
		  {"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.2.evil.com/"}},
		 CREDS_SRC_NONE,
		 NULL,
		 "FULL_URI"},
		/* nothing but instance metadata, disabled (files_env disables it) */
		{{{"AWS_PROFILE", "empty"}}, CREDS_SRC_NONE, NULL, "instance metadata is disabled"},
		{{{"AWS_PROFILE", "empty"}, {"AWS_EC2_METADATA_DISABLED", "false"}},
		 CREDS_SRC_IMDS,
		 NULL,
		 NULL},
	};
	struct event_base *base = event_base_new();
	struct clock *clk = clock_fake_new(T0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fake_env e = {0};
		/* the case's variables first: fake_env_get returns the first match */
		for (size_t k = 0; k < 12 && cases[i].env[k][0]; k++)
			fake_env_set(&e, cases[i].env[k][0], cases[i].env[k][1]);
		fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", tmp_path("credentials"));
		fake_env_set(&e, "AWS_CONFIG_FILE", tmp_path("config"));
		fake_env_set(&e, "AWS_EC2_METADATA_DISABLED", "true");
		struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e};
		char err[CREDS_ERR_MAX] = "";
		struct creds *c = creds_new(base, clk, &o, err, sizeof err);
		if (cases[i].want == CREDS_SRC_NONE) {
			if (c)
				fail_msg("case %zu: expected a failure, got %s", i,
					 creds_source_name(creds_source(c)));
			if (!strstr(err, cases[i].err_has))
				fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].err_has);
			assert_null(strstr(err, "SECRETENV"));
			assert_null(strstr(err, "SECRETHALF"));
			continue;
		}
		if (!c)
			fail_msg("case %zu: %s", i, err);
		if (creds_source(c) != cases[i].want)
			fail_msg("case %zu: got %s, want %s", i, creds_source_name(creds_source(c)),
				 creds_source_name(cases[i].want));
		const struct aws_credentials *k = creds_get(c);
		if (cases[i].key_id) {
			assert_non_null(k);
			assert_string_equal(k->access_key_id, cases[i].key_id);
		} else {
			assert_null(k); /* nothing fetched before creds_start() */
		}
		creds_free(c);
	}
	clock_free(clk);
	event_base_free(base);
}

/* With no credentials anywhere, the message names every source in order
 * and what it lacked. */
static void test_describe_chain(void **state)
{
	struct event_base *base = event_base_new();
	struct clock *clk = clock_fake_new(T0);
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_PROFILE", "empty");
	fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", tmp_path("credentials"));
	fake_env_set(&e, "AWS_CONFIG_FILE", tmp_path("config"));
	struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e};
	char err[CREDS_ERR_MAX] = "", text[1024];
	struct creds *c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	creds_describe_chain(c, text, sizeof text);
	const char *order[] = {"1. environment: no AWS_ACCESS_KEY_ID",
			       "2. web identity: no AWS_WEB_IDENTITY_TOKEN_FILE",
			       "3. shared files: profile empty has no keys in",
			       "4. container: no AWS_CONTAINER_CREDENTIALS_FULL_URI",
			       "5. EC2 instance metadata: no answer yet"};
	const char *at = text;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *p = strstr(at, order[i]);
		if (p == NULL)
			fail_msg("\"%s\" not after the earlier ones in: %s", order[i], text);
		at = p;
	}
	assert_non_null(strstr(text, tmp_path("config")));
	creds_free(c);
	clock_free(clk);
	event_base_free(base);
}

static void test_sts_endpoint(void **state)
{
	static const struct {
		const char *sts, *any, *region, *opt_region, *want;
	} cases[] = {
		{"http://127.0.0.1:5000", "http://other", "us-east-1", NULL,
		 "http://127.0.0.1:5000"},
		{NULL, "http://127.0.0.1:5001", "us-east-1", NULL, "http://127.0.0.1:5001"},
		{NULL, NULL, "eu-west-1", NULL, "https://sts.eu-west-1.amazonaws.com/"},
		{NULL, NULL, "eu-west-1", "ap-south-1", "https://sts.ap-south-1.amazonaws.com/"},
		{NULL, NULL, "cn-north-1", NULL, "https://sts.cn-north-1.amazonaws.com.cn/"},
		{NULL, NULL, NULL, NULL, "https://sts.amazonaws.com/"},
	};
	struct event_base *base = event_base_new();
	struct clock *clk = clock_fake_new(T0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fake_env e = {0};
		fake_env_set(&e, "AWS_WEB_IDENTITY_TOKEN_FILE", "/t");
		fake_env_set(&e, "AWS_ROLE_ARN", "arn:r");
		fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", tmp_path("none"));
		fake_env_set(&e, "AWS_CONFIG_FILE", tmp_path("none"));
		if (cases[i].sts)
			fake_env_set(&e, "AWS_ENDPOINT_URL_STS", cases[i].sts);
		if (cases[i].any)
			fake_env_set(&e, "AWS_ENDPOINT_URL", cases[i].any);
		if (cases[i].region)
			fake_env_set(&e, "AWS_REGION", cases[i].region);
		struct creds_options o = {
			.getenv = fake_env_get, .getenv_arg = &e, .region = cases[i].opt_region};
		char err[CREDS_ERR_MAX];
		struct creds *c = creds_new(base, clk, &o, err, sizeof err);
		assert_non_null(c);
		assert_string_equal(c->sts_url, cases[i].want);
		assert_string_equal(c->session_name, "leasegate-1764450000000");
		creds_free(c);
	}
	clock_free(clk);
	event_base_free(base);
}

static int setup_files(void **state)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/lg-test-creds.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	write_file("credentials", CRED_FILE);
	write_file("config", CONF_FILE);
	return 0;
}

static int teardown_files(void **state)
{
	static const char *const names[] = {"credentials", "config", "bigconfig"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(tmp_path(names[i]));
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iso8601),		  cmocka_unit_test(test_ini),
		cmocka_unit_test(test_sts_xml),		  cmocka_unit_test(test_json),
		cmocka_unit_test(test_profile_load),	  cmocka_unit_test(test_region),
		cmocka_unit_test(test_source_precedence), cmocka_unit_test(test_sts_endpoint),
		cmocka_unit_test(test_describe_chain),
	};
	return cmocka_run_group_tests(tests, setup_files, teardown_files);
}
