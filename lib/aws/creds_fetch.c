/*
 * creds_fetch: the HTTP credential sources over http.c.
 *   web identity: POST AssumeRoleWithWebIdentity to STS (unsigned, as the
 *     API allows), the token file read again each time;
 *   assume role: POST AssumeRole to STS, signed (SigV4, service sts) with
 *     the source profile's keys;
 *   container: GET the URI with the authorization token (file read again
 *     each time), JSON answer;
 *   IMDSv2: PUT /latest/api/token, GET .../security-credentials/ (the
 *     role), GET .../security-credentials/<role> (JSON).
 * Each fetch ends in exactly one creds_fetch_done(). Error messages name
 * URLs and statuses, never a token or a key.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/aws/creds_internal.h"

#define IMDS_TOKEN_TTL	"21600"
#define IMDS_CREDS_PATH "/latest/meta-data/iam/security-credentials/"

static void fail(struct creds *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct creds *c, const char *fmt, ...)
{
	char msg[CREDS_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	creds_fetch_done(c, NULL, msg);
}

static void trim_end(char *s, size_t *len)
{
	size_t n = len ? *len : strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	if (len)
		*len = n;
}

/* Sends one request; on a refusal (queue full, out of memory) the fetch
 * fails at once. */
static void send_req(struct creds *c, const char *method, const char *url,
		     const struct http_header *h, size_t nh, const char *body, size_t len,
		     http_cb cb)
{
	/* STS may sit behind the environment's proxy; link-local agents not */
	struct http_request r = {.method = method,
				 .url = url,
				 .headers = h,
				 .nheaders = nh,
				 .body = body,
				 .body_len = len,
				 .timeout_ms = c->opts.http_timeout_ms,
				 .no_proxy = c->src != CREDS_SRC_WEB_IDENTITY &&
					     c->src != CREDS_SRC_ASSUME_ROLE};
	c->req = http_send(c->http, &r, cb, c);
	if (!c->req)
		fail(c, "cannot send to %s", url);
}

/* True for a 200 answer; otherwise ends the fetch with the transport
 * error or the status. */
static bool res_ok(struct creds *c, const struct http_response *res, const char *what)
{
	c->req = NULL;
	if (res->curl_code != 0) {
		fail(c, "%s: %s", what, res->error ? res->error : "failed");
		return false;
	}
	if (res->status != 200) {
		fail(c, "%s answered HTTP %ld", what, res->status);
		return false;
	}
	return true;
}

void creds_fetch_cancel_http(struct creds *c)
{
	if (c->req)
		http_cancel(c->http, c->req);
	c->req = NULL;
}

/* ---- web identity ---- */

static void form_add(char **p, const char *name, const char *value)
{
	static const char hexd[] = "0123456789ABCDEF";
	char *o = *p;
	if (o[-1] != '\0')
		*o++ = '&';
	o += sprintf(o, "%s=", name);
	for (const unsigned char *v = (const unsigned char *)value; *v; v++) {
		if ((*v >= 'A' && *v <= 'Z') || (*v >= 'a' && *v <= 'z') ||
		    (*v >= '0' && *v <= '9') || *v == '-' || *v == '.' || *v == '_' || *v == '~') {
			*o++ = (char)*v;
		} else {
			*o++ = '%';
			*o++ = hexd[*v >> 4];
			*o++ = hexd[*v & 15];
		}
	}
	*o = '\0';
	*p = o;
}

static void on_sts(void *arg, const struct http_response *res)
{
	struct creds *c = arg;
	c->req = NULL;
	if (res->curl_code != 0) {
		fail(c, "STS %s: %s", c->sts_url, res->error);
		return;
	}
	struct aws_credentials got;
	char err[CREDS_ERR_MAX];
	bool ok = creds_parse_sts_xml(res->body, res->body_len, &got, err, sizeof err);
	if (ok && res->status == 200) {
		creds_fetch_done(c, &got, NULL);
	} else {
		fail(c, "STS answered HTTP %ld: %s", res->status,
		     ok ? "credentials with an error status" : err);
	}
	explicit_bzero(&got, sizeof got);
}

void creds_fetch_web_identity(struct creds *c)
{
	char err[CREDS_ERR_MAX];
	size_t len;
	char *token = creds_read_file(c->token_file, CREDS_FILE_MAX, &len, err, sizeof err);
	if (!token) {
		fail(c, "web identity token: %s", err);
		return;
	}
	trim_end(token, &len);
	if (len == 0) {
		free(token);
		fail(c, "web identity token file %s is empty", c->token_file);
		return;
	}
	/* every byte may become %XX */
	size_t cap = 3 * (len + strlen(c->role_arn) + strlen(c->session_name)) + 256;
	char *body = malloc(cap);
	if (!body) {
		explicit_bzero(token, len);
		free(token);
		fail(c, "out of memory");
		return;
	}
	body[0] = '\0';
	char *p = body + 1; /* form_add looks at p[-1] for the separator */
	form_add(&p, "Action", "AssumeRoleWithWebIdentity");
	form_add(&p, "Version", "2011-06-15");
	form_add(&p, "RoleArn", c->role_arn);
	form_add(&p, "RoleSessionName", c->session_name);
	form_add(&p, "WebIdentityToken", token);
	explicit_bzero(token, len);
	free(token);
	static const struct http_header h[] = {
		{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
		{"Accept", "application/xml"},
	};
	send_req(c, "POST", c->sts_url, h, sizeof h / sizeof h[0], body + 1, strlen(body + 1),
		 on_sts);
	explicit_bzero(body, cap);
	free(body);
}

/* ---- assume role ---- */

/* host[:port] and the path of an http(s) URL, into host and path. */
static bool url_parts(const char *url, char *host, size_t hostsz, char *path, size_t pathsz)
{
	const char *p = strstr(url, "://");
	if (p == NULL)
		return false;
	p += 3;
	size_t hl = strcspn(p, "/?#");
	if (hl == 0 || hl >= hostsz)
		return false;
	memcpy(host, p, hl);
	host[hl] = '\0';
	const char *rest = p + hl;
	size_t pl = strcspn(rest, "?#");
	snprintf(path, pathsz, "%.*s", (int)(pl ? pl : 1), pl ? rest : "/");
	return true;
}

void creds_fetch_assume_role(struct creds *c)
{
	char host[256], path[256];
	if (!url_parts(c->sts_url, host, sizeof host, path, sizeof path)) {
		fail(c, "STS endpoint %s is not an http(s) URL", c->sts_url);
		return;
	}
	size_t cap = 3 * (strlen(c->role_arn) + strlen(c->session_name)) + 256;
	char *body = malloc(cap);
	if (!body) {
		fail(c, "out of memory");
		return;
	}
	body[0] = '\0';
	char *p = body + 1; /* form_add looks at p[-1] for the separator */
	form_add(&p, "Action", "AssumeRole");
	form_add(&p, "Version", "2011-06-15");
	form_add(&p, "RoleArn", c->role_arn);
	form_add(&p, "RoleSessionName", c->session_name);
	if (c->duration_s[0])
		form_add(&p, "DurationSeconds", c->duration_s);
	struct http_header h[8] = {
		{"Host", host},
		{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
	};
	struct sigv4_request sr = {
		.method = "POST",
		.path = path,
		.headers = h,
		.nheaders = 2,
		.body = body + 1,
		.body_len = strlen(body + 1),
		.region = c->sts_region,
		.service = "sts",
	};
	struct sigv4_signed sig;
	if (!sigv4_sign(&sr, &c->source_keys, clock_wall_ms(c->clock), &sig, NULL)) {
		free(body);
		fail(c, "AssumeRole of %s could not be signed with the keys of profile %s",
		     c->role_arn, c->source_profile);
		return;
	}
	size_t n = 2;
	h[n++] = (struct http_header){"Accept", "application/xml"};
	for (size_t i = 0; i < sig.nextra; i++)
		h[n++] = sig.extra[i];
	send_req(c, "POST", c->sts_url, h, n, body + 1, strlen(body + 1), on_sts);
	free(body);
}

/* ---- container ---- */

/* Ends a fetch whose answer is the JSON of the container endpoint and
 * IMDS (AccessKeyId, SecretAccessKey, Token, Expiration). */
static void done_json(struct creds *c, const struct http_response *res)
{
	struct aws_credentials got;
	char err[CREDS_ERR_MAX];
	if (creds_parse_json(res->body, res->body_len, &got, err, sizeof err))
		creds_fetch_done(c, &got, NULL);
	else
		creds_fetch_done(c, NULL, err);
	explicit_bzero(&got, sizeof got);
}

static void on_container(void *arg, const struct http_response *res)
{
	struct creds *c = arg;
	if (res_ok(c, res, "container credentials endpoint"))
		done_json(c, res);
}

void creds_fetch_container(struct creds *c)
{
	char *tok = NULL;
	const char *auth = c->container_token[0] ? c->container_token : NULL;
	if (c->container_token_file[0]) {
		char err[CREDS_ERR_MAX];
		size_t len;
		tok = creds_read_file(c->container_token_file, AWS_TOKEN_MAX, &len, err,
				      sizeof err);
		if (!tok) {
			fail(c, "container authorization token: %s", err);
			return;
		}
		trim_end(tok, &len);
		auth = tok;
	}
	struct http_header h[] = {{"Accept", "application/json"}, {"Authorization", auth}};
	send_req(c, "GET", c->container_url, h, auth ? 2 : 1, NULL, 0, on_container);
	if (tok) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
}

/* ---- IMDSv2 ---- */

static void imds_step(struct creds *c);

static void on_imds(void *arg, const struct http_response *res)
{
	struct creds *c = arg;
	static const char *const what[] = {"IMDS token", "IMDS role list", "IMDS credentials"};
	if (!res_ok(c, res, what[c->imds_step]))
		return;
	if (c->imds_step == 0 || c->imds_step == 1) {
		char *dst = c->imds_step == 0 ? c->imds_token : c->imds_role;
		size_t cap = c->imds_step == 0 ? sizeof c->imds_token : sizeof c->imds_role;
		size_t n = c->imds_step == 0 ? res->body_len : strcspn(res->body, "\r\n");
		if (n == 0 || n >= cap || (c->imds_step == 1 && strchr(res->body, '/'))) {
			fail(c, "%s: unexpected answer (%ld bytes)", what[c->imds_step],
			     (long)res->body_len);
			return;
		}
		memcpy(dst, res->body, n);
		dst[n] = '\0';
		trim_end(dst, NULL);
		c->imds_step++;
		imds_step(c);
		return;
	}
	done_json(c, res);
	explicit_bzero(c->imds_token, sizeof c->imds_token);
}

static void imds_step(struct creds *c)
{
	char url[CREDS_URL_MAX + 300];
	if (c->imds_step == 0) {
		static const struct http_header h[] = {
			{"X-aws-ec2-metadata-token-ttl-seconds", IMDS_TOKEN_TTL}};
		snprintf(url, sizeof url, "%s/latest/api/token", c->imds_base);
		send_req(c, "PUT", url, h, 1, NULL, 0, on_imds);
		return;
	}
	struct http_header h[] = {{"X-aws-ec2-metadata-token", c->imds_token}};
	snprintf(url, sizeof url, "%s" IMDS_CREDS_PATH "%s", c->imds_base,
		 c->imds_step == 2 ? c->imds_role : "");
	send_req(c, "GET", url, h, 1, NULL, 0, on_imds);
}

void creds_fetch_imds(struct creds *c)
{
	c->imds_step = 0;
	imds_step(c);
}
