/*
 * creds_pick: which source a provider uses, from the environment and the
 * shared files, in the order of creds.h (the AWS SDKs' order); and the
 * region. Reads the shared files (small, bounded) but never the network.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/aws/creds_internal.h"

#define CONTAINER_HOST "http://169.254.170.2"
#define IMDS_HOST      "http://169.254.169.254"

static const char *env(const struct creds *c, const char *name)
{
	const char *v = c->opts.getenv(c->opts.getenv_arg, name);
	return v && *v ? v : NULL;
}

static bool copy(char *dst, size_t dstsz, const char *src)
{
	size_t n = strlen(src);
	if (n >= dstsz)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

static bool too_long(char *err, size_t errsz, const char *what)
{
	snprintf(err, errsz, "%s is too long", what);
	return false;
}

bool creds_region(creds_getenv_fn getenv_fn, void *arg, char *out, size_t outsz)
{
	if (!getenv_fn)
		getenv_fn = creds_default_getenv;
	static const char *const vars[] = {"AWS_REGION", "AWS_DEFAULT_REGION"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv_fn(arg, vars[i]);
		if (v && *v && copy(out, outsz, v))
			return true;
	}
	struct creds_profile p;
	char err[CREDS_ERR_MAX];
	if (creds_profile_load(getenv_fn, arg, NULL, &p, err, sizeof err) && p.region[0] &&
	    copy(out, outsz, p.region)) {
		explicit_bzero(&p, sizeof p);
		return true;
	}
	explicit_bzero(&p, sizeof p);
	if (outsz)
		out[0] = '\0';
	return false;
}

static bool set_keys(struct creds *c, const char *id, const char *secret, const char *token,
		     char *err, size_t errsz)
{
	if (!copy(c->cur.access_key_id, sizeof c->cur.access_key_id, id) ||
	    !copy(c->cur.secret_access_key, sizeof c->cur.secret_access_key, secret) ||
	    !copy(c->cur.session_token, sizeof c->cur.session_token, token ? token : ""))
		return too_long(err, errsz, "a credential value");
	c->cur.expiration_ms = 0;
	c->have = true;
	return true;
}

static bool pick_sts(struct creds *c, const struct creds_options *opts, const char *session,
		     char *err, size_t errsz);

static bool pick_web_identity(struct creds *c, const struct creds_options *opts, const char *file,
			      const char *arn, const char *session, char *err, size_t errsz)
{
	c->src = CREDS_SRC_WEB_IDENTITY;
	if (!creds_expand_home(c->opts.getenv, c->opts.getenv_arg, file, c->token_file,
			       sizeof c->token_file) ||
	    !copy(c->role_arn, sizeof c->role_arn, arn))
		return too_long(err, errsz, "the web identity token file or role ARN");
	return pick_sts(c, opts, session, err, errsz);
}

/* The role session's name and STS's endpoint and region (AssumeRole and
 * AssumeRoleWithWebIdentity). */
static bool pick_sts(struct creds *c, const struct creds_options *opts, const char *session,
		     char *err, size_t errsz)
{
	if (session) {
		if (!copy(c->session_name, sizeof c->session_name, session))
			return too_long(err, errsz, "the role session name");
	} else {
		snprintf(c->session_name, sizeof c->session_name, "leasegate-%lld",
			 (long long)clock_wall_ms(c->clock));
	}
	if (opts && opts->region)
		snprintf(c->sts_region, sizeof c->sts_region, "%s", opts->region);
	else if (!creds_region(c->opts.getenv, c->opts.getenv_arg, c->sts_region,
			       sizeof c->sts_region))
		snprintf(c->sts_region, sizeof c->sts_region,
			 "us-east-1"); /* the global endpoint's */
	const char *url = env(c, "AWS_ENDPOINT_URL_STS");
	if (!url)
		url = env(c, "AWS_ENDPOINT_URL");
	int n;
	if (url) {
		n = snprintf(c->sts_url, sizeof c->sts_url, "%s", url);
	} else {
		char region[CREDS_REGION_MAX] = "";
		if (opts && opts->region)
			snprintf(region, sizeof region, "%s", opts->region);
		else if (!creds_region(c->opts.getenv, c->opts.getenv_arg, region, sizeof region))
			region[0] = '\0'; /* no region: the global endpoint */
		/* the China partition has its own domain */
		const char *dns =
			strncmp(region, "cn-", 3) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
		n = region[0]
			    ? snprintf(c->sts_url, sizeof c->sts_url, "https://sts.%s.%s/", region,
				       dns)
			    : snprintf(c->sts_url, sizeof c->sts_url, "https://sts.amazonaws.com/");
	}
	if (n < 0 || (size_t)n >= sizeof c->sts_url)
		return too_long(err, errsz, "the STS endpoint");
	return true;
}

/* The hosts a plain-http container endpoint may name (as the SDKs allow):
 * loopback, the ECS and EKS Pod Identity agents. */
static const char *const container_http_hosts[] = {
	"127.", "localhost", "[::1]", "169.254.170.2", "169.254.170.23", "[fd00:ec2::23]",
};

static bool container_url_allowed(const char *url)
{
	if (strncasecmp(url, "https://", 8) == 0)
		return true;
	if (strncasecmp(url, "http://", 7) != 0)
		return false;
	const char *host = url + 7;
	size_t hl = host[0] == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":/?#");
	for (size_t i = 0; i < sizeof container_http_hosts / sizeof container_http_hosts[0]; i++) {
		const char *a = container_http_hosts[i];
		size_t al = strlen(a);
		if (a[al - 1] == '.') { /* 127.0.0.0/8: digits and dots only */
			if (hl <= al || strncmp(host, a, al) != 0 ||
			    strspn(host + al, "0123456789.") != hl - al)
				continue;
			return true;
		}
		if (hl == al && strncasecmp(host, a, al) == 0)
			return true;
	}
	return false;
}

static bool pick_container(struct creds *c, const char *full, const char *rel, char *err,
			   size_t errsz)
{
	c->src = CREDS_SRC_CONTAINER;
	int n = full ? snprintf(c->container_url, sizeof c->container_url, "%s", full)
		     : snprintf(c->container_url, sizeof c->container_url, "%s%s", CONTAINER_HOST,
				rel);
	if (n < 0 || (size_t)n >= sizeof c->container_url)
		return too_long(err, errsz, "the container credentials URI");
	if (full && !container_url_allowed(full)) {
		snprintf(err, errsz,
			 "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https or name a loopback "
			 "or container agent address");
		return false;
	}
	const char *file = env(c, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = env(c, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	if (file && !copy(c->container_token_file, sizeof c->container_token_file, file))
		return too_long(err, errsz, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	if (!file && tok && !copy(c->container_token, sizeof c->container_token, tok))
		return too_long(err, errsz, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	return true;
}

/* The shared files' paths, as creds_profile_load reads them. */
static void shared_paths(const struct creds *c, char *cred, char *conf)
{
	const char *v = env(c, "AWS_SHARED_CREDENTIALS_FILE");
	if (!creds_expand_home(c->opts.getenv, c->opts.getenv_arg, v ? v : "~/.aws/credentials",
			       cred, CREDS_PATH_MAX))
		snprintf(cred, CREDS_PATH_MAX, "~/.aws/credentials");
	v = env(c, "AWS_CONFIG_FILE");
	if (!creds_expand_home(c->opts.getenv, c->opts.getenv_arg, v ? v : "~/.aws/config", conf,
			       CREDS_PATH_MAX))
		snprintf(conf, CREDS_PATH_MAX, "~/.aws/config");
}

void creds_describe_chain(const struct creds *c, char *out, size_t outsz)
{
	char cred[CREDS_PATH_MAX], conf[CREDS_PATH_MAX];
	const char *profile = env(c, "AWS_PROFILE");
	shared_paths(c, cred, conf);
	snprintf(out, outsz,
		 "1. environment: no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; 2. web identity: "
		 "no AWS_WEB_IDENTITY_TOKEN_FILE+AWS_ROLE_ARN; 3. shared files: profile %s has no "
		 "keys in %s or %s; 4. container: no AWS_CONTAINER_CREDENTIALS_FULL_URI or "
		 "_RELATIVE_URI; 5. EC2 instance metadata: %s",
		 profile ? profile : "default", cred, conf,
		 c->src == CREDS_SRC_IMDS ? (c->last_error[0] ? c->last_error : "no answer yet")
					  : "not tried");
}

void creds_describe_source(const struct creds *c, char *out, size_t outsz)
{
	const char *profile = env(c, "AWS_PROFILE");
	profile = profile ? profile : "default";
	switch (c->src) {
	case CREDS_SRC_ENV:
		snprintf(out, outsz, "the environment (AWS_ACCESS_KEY_ID%s)",
			 c->cur.session_token[0] ? ", AWS_SESSION_TOKEN" : "");
		break;
	case CREDS_SRC_WEB_IDENTITY:
		snprintf(out, outsz, "web identity (role %.200s, token file %.200s, STS at %.200s)",
			 c->role_arn, c->token_file, c->sts_url);
		break;
	case CREDS_SRC_PROFILE:
		snprintf(out, outsz, "shared files (keys of profile %.100s)", profile);
		break;
	case CREDS_SRC_ASSUME_ROLE:
		snprintf(out, outsz,
			 "profile %.100s (role %.200s assumed with the keys of profile %.100s, STS "
			 "at "
			 "%.200s)",
			 profile, c->role_arn, c->source_profile, c->sts_url);
		break;
	case CREDS_SRC_CONTAINER:
		snprintf(out, outsz, "the container endpoint %.300s", c->container_url);
		break;
	case CREDS_SRC_IMDS:
		snprintf(out, outsz, "EC2 instance metadata (IMDSv2 at %.300s%s%.200s)",
			 c->imds_base, c->imds_role[0] ? ", role " : "", c->imds_role);
		break;
	default:
		snprintf(out, outsz, "%s credentials", creds_source_name(c->src));
	}
}

void creds_describe_trying(const struct creds *c, char *out, size_t outsz)
{
	/* the chain's order (creds.h): what a source late in it passed over */
	static const char *const before[CREDS_SRC_COUNT] = {
		[CREDS_SRC_WEB_IDENTITY] = "the environment",
		[CREDS_SRC_PROFILE] = "the environment or web identity",
		[CREDS_SRC_ASSUME_ROLE] = "the environment or web identity",
		[CREDS_SRC_CONTAINER] = "the environment, web identity or shared files",
		[CREDS_SRC_IMDS] = "the environment, web identity, shared files or container",
	};
	char src[CREDS_ERR_MAX];
	creds_describe_source(c, src, sizeof(src));
	snprintf(out, outsz, "trying %s%s%s", src, before[c->src] ? "; nothing in " : "",
		 before[c->src] ? before[c->src] : "");
}

/* A profile with role_arn and source_profile: AssumeRole signed with the
 * keys of the source profile, which must have keys itself (a chain of
 * roles, SSO or credential_process there is refused, saying so). */
static bool pick_assume_role(struct creds *c, const struct creds_options *opts, const char *pname,
			     const struct creds_profile *p, char *err, size_t errsz)
{
	if (!p->source_profile[0]) {
		snprintf(err, errsz,
			 "profile %s has role_arn but no source_profile (credential_source is "
			 "not supported): name the profile whose keys assume the role",
			 pname);
		return false;
	}
	struct creds_profile *sp = calloc(1, sizeof(*sp));
	if (sp == NULL) {
		snprintf(err, errsz, "out of memory");
		return false;
	}
	bool ok = creds_profile_load(c->opts.getenv, c->opts.getenv_arg, p->source_profile, sp, err,
				     errsz);
	if (ok && (!sp->exists || !sp->has_keys)) {
		snprintf(err, errsz,
			 "profile %s assumes role %s with the keys of profile %s, which %s "
			 "(a chain of roles, SSO or credential_process there is not supported)",
			 pname, p->role_arn, p->source_profile,
			 sp->exists ? "has no aws_access_key_id/aws_secret_access_key"
				    : "is in no shared file");
		ok = false;
	}
	if (ok) {
		c->src = CREDS_SRC_ASSUME_ROLE;
		c->source_keys = sp->keys;
		c->source_keys.expiration_ms = 0;
		snprintf(c->source_profile, sizeof c->source_profile, "%s", p->source_profile);
		snprintf(c->duration_s, sizeof c->duration_s, "%s", p->duration_seconds);
		ok = copy(c->role_arn, sizeof c->role_arn, p->role_arn) ||
		     too_long(err, errsz, "the role ARN");
		ok = ok && pick_sts(c, opts, p->role_session_name[0] ? p->role_session_name : NULL,
				    err, errsz);
	}
	explicit_bzero(sp, sizeof(*sp));
	free(sp);
	return ok;
}

bool creds_pick(struct creds *c, const struct creds_options *opts, char *err, size_t errsz)
{
	if (opts && opts->fixed) {
		c->src = CREDS_SRC_STATIC;
		if (!opts->fixed->access_key_id[0] || !opts->fixed->secret_access_key[0]) {
			snprintf(err, errsz, "static credentials without a key id or secret");
			return false;
		}
		c->cur = *opts->fixed;
		c->have = true;
		return true;
	}
	if (opts && opts->custom) {
		c->src = CREDS_SRC_CUSTOM;
		return true;
	}

	const char *id = env(c, "AWS_ACCESS_KEY_ID"), *secret = env(c, "AWS_SECRET_ACCESS_KEY");
	if (id || secret) {
		c->src = CREDS_SRC_ENV;
		if (!id || !secret) {
			snprintf(err, errsz,
				 "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be "
				 "set together");
			return false;
		}
		return set_keys(c, id, secret, env(c, "AWS_SESSION_TOKEN"), err, errsz);
	}

	const char *wi_file = env(c, "AWS_WEB_IDENTITY_TOKEN_FILE");
	const char *wi_arn = env(c, "AWS_ROLE_ARN");
	if (wi_file && wi_arn)
		return pick_web_identity(c, opts, wi_file, wi_arn, env(c, "AWS_ROLE_SESSION_NAME"),
					 err, errsz);

	struct creds_profile p;
	const char *profile = env(c, "AWS_PROFILE");
	if (!creds_profile_load(c->opts.getenv, c->opts.getenv_arg, profile, &p, err, errsz))
		return false;
	if (profile && !p.exists) {
		char cred[CREDS_PATH_MAX], conf[CREDS_PATH_MAX];
		shared_paths(c, cred, conf);
		snprintf(
			err, errsz,
			"profile not found: AWS_PROFILE names '%s', a profile in neither %s nor %s",
			profile, cred, conf);
		return false;
	}
	bool ok = true;
	const char *pname = profile ? profile : "default";
	if (!p.has_keys && (p.sso_session[0] || p.sso_start_url[0])) {
		snprintf(
			err, errsz,
			"profile %s is an SSO profile (sso_session/sso_start_url), which leasegate "
			"does not support: export its credentials (aws configure "
			"export-credentials --profile %s --format env) or use a profile with keys",
			pname, pname);
		ok = false;
	} else if (!p.has_keys && p.role_arn[0] && !p.web_identity_token_file[0]) {
		ok = pick_assume_role(c, opts, pname, &p, err, errsz);
	} else if (!p.has_keys && p.credential_process[0]) {
		snprintf(err, errsz,
			 "profile %s gets its keys from credential_process, which leasegate does "
			 "not run: export them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
			 pname);
		ok = false;
	} else if (p.web_identity_token_file[0] && p.role_arn[0]) {
		ok = pick_web_identity(c, opts, p.web_identity_token_file, p.role_arn,
				       p.role_session_name[0] ? p.role_session_name : NULL, err,
				       errsz);
	} else if (p.has_keys) {
		c->src = CREDS_SRC_PROFILE;
		ok = set_keys(c, p.keys.access_key_id, p.keys.secret_access_key,
			      p.keys.session_token, err, errsz);
	}
	explicit_bzero(&p, sizeof p);
	if (!ok || c->src != CREDS_SRC_NONE)
		return ok;

	const char *full = env(c, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *rel = env(c, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	if (full || rel)
		return pick_container(c, full, rel, err, errsz);

	const char *off = env(c, "AWS_EC2_METADATA_DISABLED");
	if (off && strcasecmp(off, "true") == 0) {
		snprintf(err, errsz,
			 "no AWS credentials: none in the environment or shared files, "
			 "no web identity or container endpoint, and instance metadata "
			 "is disabled");
		return false;
	}
	c->src = CREDS_SRC_IMDS;
	const char *ep = env(c, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (!copy(c->imds_base, sizeof c->imds_base, ep ? ep : IMDS_HOST))
		return too_long(err, errsz, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	size_t n = strlen(c->imds_base);
	if (n && c->imds_base[n - 1] == '/') /* paths below start with '/' */
		c->imds_base[n - 1] = '\0';
	return true;
}
