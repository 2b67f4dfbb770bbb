/*
 * creds_parse: the pure parts of the credential chain, no I/O but file
 * reads: shared-file (INI) lookups, profiles, ISO 8601 times, the STS XML
 * answer, the container/IMDS JSON answer. Used by creds.c, tested alone.
 * Messages never contain a secret key or a token.
 */
#ifndef LG_CREDS_PARSE_H
#define LG_CREDS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/aws/creds.h"

#define CREDS_PATH_MAX 1024
#define CREDS_ARN_MAX  2048
#define CREDS_NAME_MAX 128

/* Looks key up in [section] of an INI text (the AWS shared files): '#'
 * and ';' comments, whitespace trimmed around names and values, section
 * names with inner whitespace runs folded ("profile  x" = "profile x"),
 * indented lines (nested settings) ignored. Returns true and the value in
 * out when found and it fits. */
bool creds_ini_get(const char *text, const char *section, const char *key, char *out, size_t outsz);

/* True when text has a [section] header. */
bool creds_ini_has_section(const char *text, const char *section);

/* Parses "YYYY-MM-DDTHH:MM:SS[.fff...](Z|+HH:MM|-HH:MM|+HHMM)" into Unix
 * epoch ms. Returns false for anything else. */
bool creds_parse_iso8601(const char *s, int64_t *ms) __attribute__((warn_unused_result));

/* Parses an STS answer (AssumeRoleWithWebIdentityResponse, or any with a
 * <Credentials> element) into out. On an <ErrorResponse> or a malformed
 * answer returns false with err saying why (STS's Code and Message). */
bool creds_parse_sts_xml(const char *body, size_t len, struct aws_credentials *out, char *err,
			 size_t errsz) __attribute__((warn_unused_result));

/* Parses a container (ECS, EKS Pod Identity) or IMDS credentials document:
 * AccessKeyId, SecretAccessKey, Token, Expiration; "Code", when present,
 * must be "Success". */
bool creds_parse_json(const char *body, size_t len, struct aws_credentials *out, char *err,
		      size_t errsz) __attribute__((warn_unused_result));

/* Reads a whole file of at most max bytes into a malloc'd NUL-terminated
 * buffer. Returns NULL with err on failure (missing, too large...). */
char *creds_read_file(const char *path, size_t max, size_t *len, char *err, size_t errsz);

/* What a profile of the shared files says. */
struct creds_profile {
	bool exists;   /* in either file */
	bool has_keys; /* aws_access_key_id + aws_secret_access_key */
	struct aws_credentials keys;
	char web_identity_token_file[CREDS_PATH_MAX];
	char role_arn[CREDS_ARN_MAX];
	char role_session_name[CREDS_NAME_MAX];
	char region[CREDS_REGION_MAX];
	/* kinds of profile leasegate does not run, read to refuse them by name */
	char source_profile[CREDS_NAME_MAX]; /* role_arn + source_profile: AssumeRole */
	char sso_session[CREDS_NAME_MAX];
	char sso_start_url[CREDS_PATH_MAX];
	char credential_process[CREDS_PATH_MAX];
	char duration_seconds[16]; /* assume role: the session's length */
};

/* Loads profile name (NULL: AWS_PROFILE, else "default") from
 * AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
 * (~/.aws/config, "[profile name]" sections, "[default]"); the
 * credentials file wins for keys. Missing files are not an error.
 * Returns false with err on an unreadable or oversized file, or keys
 * half given. */
bool creds_profile_load(creds_getenv_fn getenv, void *getenv_arg, const char *name,
			struct creds_profile *out, char *err, size_t errsz)
	__attribute__((warn_unused_result));

/* The environment lookup behind a NULL creds_getenv_fn. */
const char *creds_default_getenv(void *arg, const char *name);

/* Expands a leading "~/" with HOME into out. False when it does not fit. */
bool creds_expand_home(creds_getenv_fn getenv, void *getenv_arg, const char *path, char *out,
		       size_t outsz);

#endif
