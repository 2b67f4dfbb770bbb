/*
 * creds_internal: the provider's state, shared by creds.c (serving,
 * refresh, listener), creds_pick.c (choosing the source) and
 * creds_fetch.c (the HTTP sources). Not for use outside these files.
 */
#ifndef LG_CREDS_INTERNAL_H
#define LG_CREDS_INTERNAL_H

#include "lib/base/clock.h"
#include "lib/aws/creds.h"
#include "lib/aws/creds_parse.h"
#include "lib/http/http.h"

#define CREDS_URL_MAX	     1024
#define CREDS_IMDS_TOKEN_MAX 512

struct creds {
	struct event_base *base;
	struct clock *clock;
	struct creds_options opts; /* defaults applied; fixed/custom/region cleared */
	struct creds_custom custom;
	enum creds_source src;

	/* the source's configuration, from creds_pick() */
	char token_file[CREDS_PATH_MAX]; /* web identity */
	char role_arn[CREDS_ARN_MAX];
	char session_name[CREDS_NAME_MAX];
	char sts_url[CREDS_URL_MAX];
	char container_url[CREDS_URL_MAX];
	char container_token[AWS_TOKEN_MAX + 1]; /* a secret: never in messages */
	char container_token_file[CREDS_PATH_MAX];
	char imds_base[CREDS_URL_MAX];
	/* assume role: the source profile's keys (secret: never in messages),
	 * the region STS is signed for, the session's length */
	struct aws_credentials source_keys;
	char source_profile[CREDS_NAME_MAX];
	char sts_region[CREDS_REGION_MAX];
	char duration_s[16];

	/* state */
	struct aws_credentials cur;
	bool have;
	bool fetching;
	uint64_t fetches;
	int64_t fetch_started_ms; /* monotonic */
	int64_t backoff_ms;
	struct timer refresh, notify;
	bool notify_ok;
	char last_error[CREDS_ERR_MAX];
	creds_listener listener;
	void *listener_arg;

	/* HTTP sources */
	struct http *http;
	bool own_http;
	struct http_req *req;
	int imds_step;
	char imds_token[CREDS_IMDS_TOKEN_MAX];
	char imds_role[256];
};

/* Picks c->src and fills its configuration (creds_pick.c); static
 * sources also fill c->cur. Returns false with err when the configuration
 * is broken or names no source. opts may be NULL. */
bool creds_pick(struct creds *c, const struct creds_options *opts, char *err, size_t errsz);

/* The end of every fetch: got (copied) or error. Arms the refresh or
 * retry timer and the listener notification. */
void creds_fetch_done(struct creds *c, const struct aws_credentials *got, const char *error);
void creds_fetch_done_cb(void *arg, const struct aws_credentials *got, const char *error);

/* creds_fetch.c: start a fetch; each ends in creds_fetch_done(), from
 * the loop (an HTTP callback) or at once on a local error. */
void creds_fetch_web_identity(struct creds *c);
void creds_fetch_assume_role(struct creds *c);
void creds_fetch_container(struct creds *c);
void creds_fetch_imds(struct creds *c);
void creds_fetch_cancel_http(struct creds *c);

#endif
