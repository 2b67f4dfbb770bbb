/*
 * it_creds: the credential chain and SigV4 over real HTTP.
 *   - SigV4 against moto with signature checking on ($LG_MOTO, keys
 *     $LG_AK/$LG_SK): a signed DynamoDB call passes, a wrong secret fails;
 *   - web identity against moto's STS: a private moto_server without
 *     signature checks (moto, unlike AWS STS, wants AssumeRoleWithWebIdentity
 *     signed), and a local STS stub that checks the form sent and that the
 *     token file is read again on every refresh;
 *   - container credentials and IMDSv2 against local stubs (libevent's
 *     evhttp in this process) that check the Authorization and IMDS token
 *     headers as ECS, EKS Pod Identity and EC2 do;
 *   - a background refresh of short-lived credentials on the real clock.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/base/clock.h"
#include "lib/aws/creds.h"
#include "lib/http/http.h"
#include "lib/aws/sigv4.h"
#include "tests/support/fake_env.h"

extern char **environ;

static struct event_base *base;
static struct clock *clk;
static int stub_port;
static char dir[128];

/* ---- helpers ---- */

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	*(bool *)arg = true;
}

static bool run_until(bool (*pred)(void *), void *arg, int limit_ms)
{
	bool expired = false;
	struct event *t = evtimer_new(base, on_deadline, &expired);
	struct timeval tv = {limit_ms / 1000, (limit_ms % 1000) * 1000};
	evtimer_add(t, &tv);
	while (!pred(arg) && !expired)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return pred(arg);
}

static const char *path_in_dir(const char *name)
{
	static char paths[8][256];
	static int i;
	char *p = paths[i++ % 8];
	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

struct heard {
	int ok, failed;
	char key[AWS_KEY_ID_MAX + 1];
	char error[CREDS_ERR_MAX];
};

static void listener(void *arg, const struct aws_credentials *c, const char *error)
{
	struct heard *h = arg;
	if (c) {
		h->ok++;
		snprintf(h->key, sizeof h->key, "%s", c->access_key_id);
	} else {
		h->failed++;
		snprintf(h->error, sizeof h->error, "%s", error);
	}
}

static int want_events;
static bool heard_n(void *arg)
{
	struct heard *h = arg;
	return h->ok + h->failed >= want_events;
}

static void iso(int64_t wall_ms, char out[32])
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the local stub: STS, container and IMDS endpoints ---- */

static struct {
	char expect_auth[128]; /* container: required Authorization */
	char imds_token[64];   /* IMDS: token handed out */
	int64_t lifetime_ms;   /* of the credentials handed out */
	int served;	       /* credentials documents served */
	int imds_puts;
	char last_ttl[32];
	char last_sts_form[2048]; /* decoded AssumeRoleWithWebIdentity form */
	bool sts_error;
} stub;

static const char *in_header(struct evhttp_request *req, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(req), name);
}

static void send_text(struct evhttp_request *req, int code, const char *text)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add(b, text, strlen(text));
	evhttp_send_reply(req, code, code == 200 ? "OK" : "Error", b);
	evbuffer_free(b);
}

static void creds_json(char *out, size_t n, bool imds)
{
	char exp[32];
	iso(clock_wall_ms(clk) + stub.lifetime_ms, exp);
	stub.served++;
	snprintf(out, n,
		 "{%s\"AccessKeyId\":\"ASIASTUB%04d\",\"SecretAccessKey\":\"stubsecret\","
		 "\"Token\":\"stubtoken\",\"Expiration\":\"%s\"}",
		 imds ? "\"Code\":\"Success\",\"Type\":\"AWS-HMAC\"," : "", stub.served, exp);
}

static void on_container(struct evhttp_request *req, void *arg)
{
	const char *auth = in_header(req, "Authorization");
	if (!auth || strcmp(auth, stub.expect_auth) != 0) {
		send_text(req, 401, "{\"message\":\"bad token\"}");
		return;
	}
	char doc[512];
	creds_json(doc, sizeof doc, false);
	send_text(req, 200, doc);
}

static void on_imds_token(struct evhttp_request *req, void *arg)
{
	const char *ttl = in_header(req, "X-aws-ec2-metadata-token-ttl-seconds");
	if (evhttp_request_get_command(req) != EVHTTP_REQ_PUT || !ttl) {
		send_text(req, 400, "");
		return;
	}
	stub.imds_puts++;
	snprintf(stub.last_ttl, sizeof stub.last_ttl, "%s", ttl);
	send_text(req, 200, stub.imds_token);
}

static void on_imds_creds(struct evhttp_request *req, void *arg)
{
	const char *tok = in_header(req, "X-aws-ec2-metadata-token");
	if (!tok || strcmp(tok, stub.imds_token) != 0) {
		send_text(req, 401, "");
		return;
	}
	const char *uri = evhttp_request_get_uri(req);
	const char *role = uri + strlen("/latest/meta-data/iam/security-credentials/");
	if (!*role) {
		send_text(req, 200, "leasegate-role\n");
	} else if (strcmp(role, "leasegate-role") == 0) {
		char doc[512];
		creds_json(doc, sizeof doc, true);
		send_text(req, 200, doc);
	} else {
		send_text(req, 404, "");
	}
}

static void on_sts(struct evhttp_request *req, void *arg)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	char form[2048] = "";
	if (n < sizeof form)
		evbuffer_remove(in, form, n);
	char *dec = evhttp_decode_uri(form);
	snprintf(stub.last_sts_form, sizeof stub.last_sts_form, "%s", dec ? dec : "");
	free(dec);
	if (stub.sts_error) {
		send_text(req, 400,
			  "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken"
			  "</Code><Message>No OpenIDConnect provider found</Message></Error>"
			  "</ErrorResponse>");
		return;
	}
	char exp[32], doc[1024];
	iso(clock_wall_ms(clk) + stub.lifetime_ms, exp);
	stub.served++;
	snprintf(doc, sizeof doc,
		 "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>"
		 "<Credentials><AccessKeyId>ASIASTS%04d</AccessKeyId><SecretAccessKey>s"
		 "</SecretAccessKey><SessionToken>t</SessionToken><Expiration>%s</Expiration>"
		 "</Credentials></AssumeRoleWithWebIdentityResult>"
		 "</AssumeRoleWithWebIdentityResponse>",
		 stub.served, exp);
	send_text(req, 200, doc);
}

static void on_other(struct evhttp_request *req, void *arg)
{
	const char *uri = evhttp_request_get_uri(req);
	if (strncmp(uri, "/latest/meta-data/iam/security-credentials/", 43) == 0)
		on_imds_creds(req, arg);
	else
		send_text(req, 404, "");
}

static int stub_reset(void **state)
{
	memset(&stub, 0, sizeof stub);
	stub.lifetime_ms = 3600 * 1000;
	snprintf(stub.imds_token, sizeof stub.imds_token, "IMDSTOKEN-%d", rand());
	return 0;
}

/* ---- SigV4 against moto with signature checking ---- */

struct answer {
	bool done;
	long status;
	char body[512];
};

static void on_answer(void *arg, const struct http_response *res)
{
	struct answer *a = arg;
	a->done = true;
	a->status = res->status;
	snprintf(a->body, sizeof a->body, "%s", res->body);
}

static bool answered(void *arg)
{
	return ((struct answer *)arg)->done;
}

static long signed_list_tables(struct http *h, const char *moto, const char *ak, const char *sk,
			       char *body_out, size_t body_sz)
{
	char host[128];
	snprintf(host, sizeof host, "%s", moto + strlen("http://"));
	const char *body = "{}";
	struct http_header hd[8] = {{"Host", host},
				    {"Content-Type", "application/x-amz-json-1.0"},
				    {"X-Amz-Target", "DynamoDB_20120810.ListTables"}};
	struct aws_credentials c = {0};
	snprintf(c.access_key_id, sizeof c.access_key_id, "%s", ak);
	snprintf(c.secret_access_key, sizeof c.secret_access_key, "%s", sk);
	struct sigv4_request sr = {.method = "POST",
				   .path = "/",
				   .headers = hd,
				   .nheaders = 3,
				   .body = body,
				   .body_len = 2,
				   .region = "us-east-1",
				   .service = "dynamodb"};
	struct sigv4_signed sig;
	assert_true(sigv4_sign(&sr, &c, clock_wall_ms(clk), &sig, NULL));
	size_t n = 3;
	for (size_t i = 0; i < sig.nextra; i++)
		hd[n++] = sig.extra[i];
	char url[160];
	snprintf(url, sizeof url, "%s/", moto);
	struct http_request req = {.method = "POST",
				   .url = url,
				   .headers = hd,
				   .nheaders = n,
				   .body = body,
				   .body_len = 2};
	struct answer a = {0};
	assert_non_null(http_send(h, &req, on_answer, &a));
	assert_true(run_until(answered, &a, 10000));
	snprintf(body_out, body_sz, "%s", a.body);
	return a.status;
}

static void test_sigv4_against_moto(void **state)
{
	const char *moto = getenv("LG_MOTO"), *ak = getenv("LG_AK"), *sk = getenv("LG_SK");
	if (!moto || !ak || !sk)
		fail_msg("LG_MOTO, LG_AK and LG_SK must be set (run through make integration)");
	struct http *h = http_new(base, NULL);
	char body[512];
	long st = signed_list_tables(h, moto, ak, sk, body, sizeof body);
	if (st != 200)
		fail_msg("signed ListTables: HTTP %ld %s", st, body);
	assert_non_null(strstr(body, "TableNames"));
	char wrong[128];
	snprintf(wrong, sizeof wrong, "%sx", sk);
	st = signed_list_tables(h, moto, ak, wrong, body, sizeof body);
	assert_int_not_equal(st, 200);
	assert_non_null(strstr(body, "Signature"));
	http_free(h);
}

/* ---- web identity: moto's STS ---- */

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sin;
	bind(s, (struct sockaddr *)&sin, sizeof sin);
	getsockname(s, (struct sockaddr *)&sin, &sl);
	close(s);
	return ntohs(sin.sin_port);
}

static void test_web_identity_moto(void **state)
{
	int port = free_port();
	char port_s[16], url[64];
	snprintf(port_s, sizeof port_s, "%d", port);
	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	char *argv[] = {"python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", port_s, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	assert_int_equal(posix_spawnp(&pid, "python3", &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);

	struct http *h = http_new(base, NULL);
	char ready[96];
	snprintf(ready, sizeof ready, "%s/moto-api/", url);
	bool up = false;
	for (int i = 0; i < 150 && !up; i++) {
		struct answer a = {0};
		struct http_request req = {.method = "GET", .url = ready};
		assert_non_null(http_send(h, &req, on_answer, &a));
		run_until(answered, &a, 2000);
		up = a.status == 200;
		if (!up)
			usleep(100000);
	}
	http_free(h);
	if (!up) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		fail_msg("private moto_server did not start");
	}

	const char *token_file = path_in_dir("wi-token");
	write_file(token_file, "eyJhbGciOiJSUzI1NiJ9.any-token-moto-accepts\n");
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
	fake_env_set(&e, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/leasegate");
	fake_env_set(&e, "AWS_ROLE_SESSION_NAME", "it-creds");
	fake_env_set(&e, "AWS_ENDPOINT_URL_STS", url);
	struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e, .retry_min_ms = 10};
	char err[CREDS_ERR_MAX];
	struct creds *c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	assert_int_equal(creds_source(c), CREDS_SRC_WEB_IDENTITY);
	struct heard hd = {0};
	creds_set_listener(c, listener, &hd);
	assert_true(creds_start(c));
	want_events = 1;
	assert_true(run_until(heard_n, &hd, 10000));
	if (hd.ok != 1)
		fail_msg("web identity via moto: %s", hd.error);
	const struct aws_credentials *k = creds_get(c);
	assert_non_null(k);
	/* what moto returns: an ASIA key, a secret, a session token, and an
	 * expiry one hour (DurationSeconds default) from now */
	assert_memory_equal(k->access_key_id, "ASIA", 4);
	assert_true(strlen(k->secret_access_key) >= 20);
	assert_true(strlen(k->session_token) > 100);
	int64_t left = k->expiration_ms - clock_wall_ms(clk);
	assert_in_range(left, 3600 * 1000 - 60000, 3600 * 1000 + 60000);
	char first[AWS_KEY_ID_MAX + 1];
	snprintf(first, sizeof first, "%s", k->access_key_id);
	/* a forced refresh gets new keys */
	usleep(20000);
	creds_refresh(c);
	want_events = 2;
	assert_true(run_until(heard_n, &hd, 10000));
	assert_int_equal(hd.ok, 2);
	assert_string_not_equal(creds_get(c)->access_key_id, first);
	creds_free(c);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* ---- assume role: a profile's role_arn + source_profile ---- */

/* AssumeRole against moto's STS with signature checking on: signed with
 * the source profile's keys (the IAM user of tests/moto_setup.py), it
 * gets temporary credentials; with a wrong secret STS refuses the
 * signature and the error says so. */
static void test_assume_role_moto(void **state)
{
	const char *moto = getenv("LG_MOTO");
	if (moto == NULL || getenv("LG_AK") == NULL)
		fail_msg("needs moto (tests/run-integration.sh)");
	char text[1024];
	const char *cred = path_in_dir("ar-credentials"), *conf = path_in_dir("ar-config");
	snprintf(text, sizeof text,
		 "[src]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
		 "[wrong]\naws_access_key_id = %s\naws_secret_access_key = not-the-secret\n",
		 getenv("LG_AK"), getenv("LG_SK"), getenv("LG_AK"));
	write_file(cred, text);
	write_file(conf, "[profile ops]\nrole_arn = arn:aws:iam::123456789012:role/ops\n"
			 "source_profile = src\nrole_session_name = it-assume\n"
			 "duration_seconds = 900\n"
			 "[profile bad]\nrole_arn = arn:aws:iam::123456789012:role/ops\n"
			 "source_profile = wrong\n");
	for (int round = 0; round < 2; round++) {
		struct fake_env e = {0};
		fake_env_set(&e, "AWS_PROFILE", round == 0 ? "ops" : "bad");
		fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", cred);
		fake_env_set(&e, "AWS_CONFIG_FILE", conf);
		fake_env_set(&e, "AWS_ENDPOINT_URL_STS", moto);
		fake_env_set(&e, "AWS_REGION", "us-east-1");
		struct creds_options o = {
			.getenv = fake_env_get, .getenv_arg = &e, .retry_min_ms = 10};
		char err[CREDS_ERR_MAX];
		struct creds *c = creds_new(base, clk, &o, err, sizeof err);
		if (c == NULL)
			fail_msg("creds_new: %s", err);
		assert_int_equal(creds_source(c), CREDS_SRC_ASSUME_ROLE);
		assert_string_equal(creds_source_name(creds_source(c)), "assume role");
		struct heard hd = {0};
		creds_set_listener(c, listener, &hd);
		assert_true(creds_start(c));
		want_events = 1;
		assert_true(run_until(heard_n, &hd, 10000));
		if (round == 0) {
			if (hd.ok != 1)
				fail_msg("assume role via moto: %s", hd.error);
			const struct aws_credentials *k = creds_get(c);
			assert_memory_equal(k->access_key_id, "ASIA", 4);
			assert_true(strlen(k->session_token) > 100);
			int64_t left = k->expiration_ms - clock_wall_ms(clk);
			assert_in_range(left, 900 * 1000 - 60000, 900 * 1000 + 60000);
		} else {
			assert_int_equal(hd.ok, 0);
			if (!strstr(hd.error, "STS answered HTTP 403"))
				fail_msg("a wrong secret: %s", hd.error);
			assert_null(strstr(hd.error, "not-the-secret"));
		}
		creds_free(c);
	}
	unlink(cred);
	unlink(conf);
}

/* ---- web identity: the form sent, token re-read, STS errors ---- */

static void test_web_identity_stub(void **state)
{
	const char *token_file = path_in_dir("wi-token2");
	write_file(token_file, "token-one\n");
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/sts", stub_port);
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
	fake_env_set(&e, "AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/lg");
	fake_env_set(&e, "AWS_ENDPOINT_URL", url); /* the general override, no _STS one */
	struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e, .retry_min_ms = 10};
	char err[CREDS_ERR_MAX];
	struct creds *c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	struct heard hd = {0};
	creds_set_listener(c, listener, &hd);
	assert_true(creds_start(c));
	want_events = 1;
	assert_true(run_until(heard_n, &hd, 5000));
	assert_int_equal(hd.ok, 1);
	assert_string_equal(hd.key, "ASIASTS0001");
	assert_non_null(strstr(stub.last_sts_form, "Action=AssumeRoleWithWebIdentity"));
	assert_non_null(strstr(stub.last_sts_form, "Version=2011-06-15"));
	assert_non_null(strstr(stub.last_sts_form, "RoleArn=arn:aws:iam::123456789012:role/lg"));
	assert_non_null(strstr(stub.last_sts_form, "RoleSessionName=leasegate-"));
	assert_non_null(strstr(stub.last_sts_form, "WebIdentityToken=token-one"));
	/* the token file is read again on every refresh (Kubernetes rotates it) */
	write_file(token_file, "token-two");
	usleep(20000);
	creds_refresh(c);
	want_events = 2;
	assert_true(run_until(heard_n, &hd, 5000));
	assert_string_equal(hd.key, "ASIASTS0002");
	assert_non_null(strstr(stub.last_sts_form, "WebIdentityToken=token-two"));
	/* an STS error: reported with its code, the old keys still served */
	stub.sts_error = true;
	usleep(20000);
	creds_refresh(c);
	want_events = 3;
	assert_true(run_until(heard_n, &hd, 5000));
	assert_int_equal(hd.failed, 1);
	assert_non_null(strstr(hd.error, "InvalidIdentityToken"));
	assert_null(strstr(hd.error, "token-two"));
	assert_string_equal(creds_get(c)->access_key_id, "ASIASTS0002");
	creds_free(c);
}

/* ---- container credentials ---- */

static void test_container(void **state)
{
	const char *tok_file = path_in_dir("container-token");
	write_file(tok_file, "pod-identity-token-1\n");
	snprintf(stub.expect_auth, sizeof stub.expect_auth, "pod-identity-token-1");
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/credentials", stub_port);
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_CONTAINER_CREDENTIALS_FULL_URI", url);
	fake_env_set(&e, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tok_file);
	fake_env_set(&e, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored-when-a-file-is-set");
	fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", "/nonexistent");
	fake_env_set(&e, "AWS_CONFIG_FILE", "/nonexistent");
	struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e, .retry_min_ms = 10};
	char err[CREDS_ERR_MAX];
	struct creds *c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	assert_int_equal(creds_source(c), CREDS_SRC_CONTAINER);
	struct heard hd = {0};
	creds_set_listener(c, listener, &hd);
	assert_true(creds_start(c));
	want_events = 1;
	assert_true(run_until(heard_n, &hd, 5000));
	if (hd.ok != 1)
		fail_msg("container: %s", hd.error);
	assert_string_equal(creds_get(c)->access_key_id, "ASIASTUB0001");
	assert_string_equal(creds_get(c)->session_token, "stubtoken");
	/* the token file is read again: a rotated token is sent */
	write_file(tok_file, "pod-identity-token-2");
	snprintf(stub.expect_auth, sizeof stub.expect_auth, "pod-identity-token-2");
	usleep(20000);
	creds_refresh(c);
	want_events = 2;
	assert_true(run_until(heard_n, &hd, 5000));
	assert_string_equal(hd.key, "ASIASTUB0002");
	/* a refused token: an error without the token, old keys still served */
	snprintf(stub.expect_auth, sizeof stub.expect_auth, "something-else");
	usleep(20000);
	creds_refresh(c);
	want_events = 3;
	assert_true(run_until(heard_n, &hd, 5000));
	assert_int_equal(hd.failed, 1);
	assert_non_null(strstr(hd.error, "401"));
	assert_null(strstr(hd.error, "pod-identity-token"));
	assert_string_equal(creds_get(c)->access_key_id, "ASIASTUB0002");
	creds_free(c);

	/* the token from the environment (ECS style) */
	struct fake_env e2 = {0};
	fake_env_set(&e2, "AWS_CONTAINER_CREDENTIALS_FULL_URI", url);
	fake_env_set(&e2, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-token");
	fake_env_set(&e2, "AWS_SHARED_CREDENTIALS_FILE", "/nonexistent");
	fake_env_set(&e2, "AWS_CONFIG_FILE", "/nonexistent");
	snprintf(stub.expect_auth, sizeof stub.expect_auth, "ecs-token");
	o.getenv_arg = &e2;
	c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	struct heard hd2 = {0};
	creds_set_listener(c, listener, &hd2);
	assert_true(creds_start(c));
	want_events = 1;
	assert_true(run_until(heard_n, &hd2, 5000));
	assert_int_equal(hd2.ok, 1);
	creds_free(c);
}

/* ---- IMDSv2 ---- */

static void test_imds(void **state)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/", stub_port);
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_EC2_METADATA_SERVICE_ENDPOINT", url);
	fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", "/nonexistent");
	fake_env_set(&e, "AWS_CONFIG_FILE", "/nonexistent");
	struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e, .retry_min_ms = 10};
	char err[CREDS_ERR_MAX];
	struct creds *c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	assert_int_equal(creds_source(c), CREDS_SRC_IMDS);
	struct heard hd = {0};
	creds_set_listener(c, listener, &hd);
	assert_true(creds_start(c));
	want_events = 1;
	assert_true(run_until(heard_n, &hd, 5000));
	if (hd.ok != 1)
		fail_msg("imds: %s", hd.error);
	assert_string_equal(creds_get(c)->access_key_id, "ASIASTUB0001");
	assert_int_equal(stub.imds_puts, 1);
	assert_string_equal(stub.last_ttl, "21600");
	/* each refresh asks for a new session token */
	usleep(20000);
	creds_refresh(c);
	want_events = 2;
	assert_true(run_until(heard_n, &hd, 5000));
	assert_int_equal(stub.imds_puts, 2);
	assert_string_equal(hd.key, "ASIASTUB0002");
	creds_free(c);
}

/* ---- background refresh on the real clock ---- */

static bool two_served(void *arg)
{
	return stub.served >= 2;
}

static void test_background_refresh(void **state)
{
	stub.lifetime_ms = 3000; /* short-lived: refreshed halfway, at 1.5 s */
	snprintf(stub.expect_auth, sizeof stub.expect_auth, "t");
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/credentials", stub_port);
	struct fake_env e = {0};
	fake_env_set(&e, "AWS_CONTAINER_CREDENTIALS_FULL_URI", url);
	fake_env_set(&e, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "t");
	fake_env_set(&e, "AWS_SHARED_CREDENTIALS_FILE", "/nonexistent");
	fake_env_set(&e, "AWS_CONFIG_FILE", "/nonexistent");
	struct creds_options o = {.getenv = fake_env_get, .getenv_arg = &e};
	char err[CREDS_ERR_MAX];
	struct creds *c = creds_new(base, clk, &o, err, sizeof err);
	assert_non_null(c);
	assert_true(creds_start(c));
	int64_t t0 = clock_now_ms(clk);
	assert_true(run_until(two_served, NULL, 5000));
	int64_t took = clock_now_ms(clk) - t0;
	assert_in_range(took, 1000, 2500);
	creds_free(c);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/it-creds.XXXXXX",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	srand((unsigned)getpid());
	base = event_base_new();
	clk = clock_real_new(base);
	struct evhttp *srv = evhttp_new(base);
	evhttp_set_allowed_methods(srv, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT);
	evhttp_set_cb(srv, "/v1/credentials", on_container, NULL);
	evhttp_set_cb(srv, "/latest/api/token", on_imds_token, NULL);
	evhttp_set_cb(srv, "/sts", on_sts, NULL);
	evhttp_set_gencb(srv, on_other, NULL);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(srv, "127.0.0.1", 0);
	if (!bs)
		return 1;
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &sl);
	stub_port = ntohs(sin.sin_port);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sigv4_against_moto, stub_reset),
		cmocka_unit_test_setup(test_web_identity_moto, stub_reset),
		cmocka_unit_test_setup(test_assume_role_moto, stub_reset),
		cmocka_unit_test_setup(test_web_identity_stub, stub_reset),
		cmocka_unit_test_setup(test_container, stub_reset),
		cmocka_unit_test_setup(test_imds, stub_reset),
		cmocka_unit_test_setup(test_background_refresh, stub_reset),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	evhttp_free(srv);
	clock_free(clk);
	event_base_free(base);
	static const char *const files[] = {"wi-token", "wi-token2", "container-token"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		unlink(path_in_dir(files[i]));
	rmdir(dir);
	return rc;
}
