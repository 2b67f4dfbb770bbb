/*
 * creds: the AWS credential chain, asynchronous, on the event loop.
 *
 * A provider picks one source when it is created, from the configuration
 * it sees (first match wins, as the AWS SDKs order them):
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY
 *      [+ AWS_SESSION_TOKEN];
 *   2. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN
 *      [+ AWS_ROLE_SESSION_NAME] -> STS AssumeRoleWithWebIdentity (the token
 *      file is read again on every refresh);
 *   3. shared files: the profile (AWS_PROFILE, else "default") of
 *      AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
 *      (~/.aws/config, "[profile x]" sections): static keys, or
 *      web_identity_token_file + role_arn [+ role_session_name], or
 *      role_arn + source_profile (a profile with keys) [+ role_session_name,
 *      duration_seconds]: STS AssumeRole signed with the source's keys.
 *      SSO profiles, credential_process and a source_profile that assumes
 *      a role itself are refused, saying so;
 *   4. container: AWS_CONTAINER_CREDENTIALS_FULL_URI or
 *      AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (http://169.254.170.2), with
 *      AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE] (ECS, EKS Pod Identity);
 *   5. EC2 instance metadata, IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *      off with AWS_EC2_METADATA_DISABLED=true).
 * STS's endpoint is AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else
 * https://sts.<region>.amazonaws.com.
 *
 * Temporary credentials are refreshed in the background before they
 * expire (creds_refresh_at()); a failed fetch is retried with backoff while
 * the old credentials, if still valid, keep being served. Time comes only
 * from the struct clock. Secret keys and tokens never appear in messages.
 *
 * It is not: signing (sigv4.h), the HTTP transport (http.h).
 */
#ifndef LG_CREDS_H
#define LG_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/aws/sigv4.h"

struct clock;
struct event_base;
struct http;
struct creds;

#define CREDS_ERR_MAX	 512   /* error messages, with NUL */
#define CREDS_FILE_MAX	 65536 /* largest shared file or token file read */
#define CREDS_REGION_MAX 64

enum creds_source {
	CREDS_SRC_NONE,
	CREDS_SRC_STATIC, /* given in creds_options.fixed */
	CREDS_SRC_ENV,
	CREDS_SRC_WEB_IDENTITY,
	CREDS_SRC_PROFILE,
	CREDS_SRC_CONTAINER,
	CREDS_SRC_IMDS,
	CREDS_SRC_CUSTOM,      /* creds_options.custom (tests) */
	CREDS_SRC_ASSUME_ROLE, /* a profile's role_arn + source_profile: STS AssumeRole */
	CREDS_SRC_COUNT
};

/* Environment lookup: returns the value or NULL. */
typedef const char *(*creds_getenv_fn)(void *arg, const char *name);

/* A custom source (for tests): fetch starts one fetch and later calls
 * done(done_arg, creds, NULL) or done(done_arg, NULL, error), once, from
 * the loop or the clock; cancel stops a fetch in flight (done not called). */
typedef void (*creds_done_fn)(void *done_arg, const struct aws_credentials *creds,
			      const char *error);
struct creds_custom {
	void (*fetch)(void *arg, creds_done_fn done, void *done_arg);
	void (*cancel)(void *arg);
	void *arg;
};

struct creds_options {
	creds_getenv_fn getenv; /* NULL: getenv(3) */
	void *getenv_arg;
	const struct aws_credentials *fixed; /* use these, no chain */
	const struct creds_custom *custom;   /* use this source, no chain */
	struct http *http;		     /* NULL: the provider makes its own */
	const char *region;		     /* STS region; NULL: creds_region() */
	int64_t refresh_early_ms;	     /* default 5 min before expiry */
	int64_t retry_min_ms;		     /* backoff after a failed fetch, default 1 s */
	int64_t retry_max_ms;		     /* default 60 s */
	int64_t http_timeout_ms;	     /* per credential request, default 5 s */
};

/* Called whenever the provider's state changes: new credentials (creds
 * not NULL, error NULL) or a failed fetch (creds NULL, error says why,
 * without secrets). Always from the loop or a clock timer, never inside a
 * creds_* call. creds is valid during the call only. */
typedef void (*creds_listener)(void *arg, const struct aws_credentials *creds, const char *error);

/* Creates a provider and picks its source (see the top of this file).
 * base may be NULL only when no HTTP source can be picked (fixed, custom,
 * environment or profile keys). Nothing is fetched before creds_start().
 * Returns NULL on out-of-memory or a broken configuration, with the reason
 * in err (errsz bytes). */
struct creds *creds_new(struct event_base *base, struct clock *clock,
			const struct creds_options *opts, char *err, size_t errsz)
	__attribute__((warn_unused_result));

/* Starts the first fetch. Static sources (fixed, environment, profile
 * keys) are available from creds_get() at once; the listener still runs
 * later from the clock. Returns false on out-of-memory. */
bool creds_start(struct creds *c) __attribute__((warn_unused_result));

/* The current credentials, or NULL when none are available yet or the
 * last ones have expired: callers treat NULL as a TRANSIENT error (and may
 * wait for the listener). The pointer is valid until control returns to
 * the loop. */
const struct aws_credentials *creds_get(struct creds *c);

/* Sets the one listener (cb NULL removes it). */
void creds_set_listener(struct creds *c, creds_listener cb, void *arg);

/* Starts a fetch now (unless one is in flight), e.g. after DynamoDB
 * answered ExpiredTokenException. No effect on non-expiring sources. */
void creds_refresh(struct creds *c);

enum creds_source creds_source(const struct creds *c);
const char *creds_source_name(enum creds_source s); /* "environment"... */

/* The last fetch error ("" when the last fetch succeeded). */
const char *creds_last_error(const struct creds *c);

/* What each source of the chain lacked, in order, for a message when no
 * credentials could be had ("1. environment: no AWS_ACCESS_KEY_ID...;
 * ... 5. EC2 instance metadata: <the last error>"). */
void creds_describe_chain(const struct creds *c, char *out, size_t outsz);

/* The source picked, with what names it and no secret, for a log line:
 * "the environment (AWS_ACCESS_KEY_ID)", "shared files (profile dev)",
 * "EC2 instance metadata (IMDSv2 at http://169.254.169.254, role r)"
 * (the role once a fetch has read it)... */
void creds_describe_source(const struct creds *c, char *out, size_t outsz);

/* What the provider is about to try, before anything was found: "trying
 * <source> (...)", and for a source late in the chain the earlier ones
 * that had nothing ("; nothing in the environment, web identity, shared
 * files (profile default) or container"). */
void creds_describe_trying(const struct creds *c, char *out, size_t outsz);

/* Cancels fetches and timers; no listener call afterwards. */
void creds_free(struct creds *c);

/* The region, from AWS_REGION, AWS_DEFAULT_REGION, then the profile's
 * "region" in the config file (getenv as in creds_options, NULL =
 * getenv(3)). Returns false (out = "") when none is set. */
bool creds_region(creds_getenv_fn getenv, void *getenv_arg, char *out, size_t outsz)
	__attribute__((warn_unused_result));

/* When to refresh credentials obtained at wall time obtained_ms that
 * expire at expiration_ms (0 = never: returns INT64_MAX): refresh_early_ms
 * before expiry; credentials that live less than twice that are refreshed
 * halfway through their lifetime instead. Never before obtained_ms. */
int64_t creds_refresh_at(int64_t obtained_ms, int64_t expiration_ms, int64_t refresh_early_ms);

#endif
