/*
 * sigv4: AWS Signature Version 4 (HMAC-SHA256) for one HTTP request.
 *
 * Pure computation: no I/O, no clock (the caller passes the wall time, from
 * lib/base/clock.h), no globals. Signs only the headers the caller lists, plus
 * x-amz-date and, when the credentials carry one, x-amz-security-token:
 * never list a header that libcurl may add or change on the wire
 * (Content-Length, Accept-Encoding, Expect, Connection, User-Agent...).
 *
 * Canonical URI: the path as sent on the wire, URI-encoded once more per
 * segment (the rule for every service but S3; DynamoDB and STS use "/").
 * Canonical query: pairs decoded, re-encoded, sorted by name then value.
 * Canonical headers: names lower-cased, values trimmed with inner
 * whitespace runs folded to one space, repeated names joined with ','
 * in the order given, sorted by name.
 *
 * It is not: credential loading (creds.h), the HTTP transport (http.h).
 */
#ifndef LG_SIGV4_H
#define LG_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/http/http.h"

#define AWS_KEY_ID_MAX	  128  /* access key id, bytes without NUL */
#define AWS_SECRET_MAX	  128  /* secret access key, bytes without NUL */
#define AWS_TOKEN_MAX	  8192 /* session token, bytes without NUL */
#define SIGV4_HEADERS_MAX 32   /* headers a request may sign */
#define SIGV4_AUTHZ_MAX	  1024 /* Authorization value, with NUL */

/* One set of AWS credentials. Strings are NUL-terminated; session_token is
 * empty for long-term keys. expiration_ms is Unix epoch ms (wall clock),
 * 0 = never expires. Secrets must never be logged: use
 * sigv4_redact_key_id() to name a key in a message. */
struct aws_credentials {
	char access_key_id[AWS_KEY_ID_MAX + 1];
	char secret_access_key[AWS_SECRET_MAX + 1];
	char session_token[AWS_TOKEN_MAX + 1];
	int64_t expiration_ms;
};

/* An optional cache of the derived signing key, which changes only with
 * the date, region, service or secret: with it a signature costs one HMAC
 * instead of five. One per signer, zero-initialised; it holds the secret
 * (a copy of what the credentials hold, to see it change) and the key
 * derived from it, so clear it with sigv4_key_cache_clear() before its
 * memory is reused. */
struct sigv4_key_cache {
	bool valid;
	unsigned char key[32];
	char secret[AWS_SECRET_MAX];
	size_t secret_len;
	char date[9];
	char region[65];
	char service[65];
};

/* What to sign. headers: any case, any order; must include Host. */
struct sigv4_request {
	const char *method; /* "POST" */
	const char *path;   /* as on the wire, e.g. "/"; NULL = "/" */
	const char *query;  /* without '?', NULL or "" = none */
	const struct http_header *headers;
	size_t nheaders;  /* at most SIGV4_HEADERS_MAX (with the added ones) */
	const char *body; /* may be NULL when body_len is 0 */
	size_t body_len;
	const char *region;		   /* "us-east-1" */
	const char *service;		   /* "dynamodb", "sts" */
	struct sigv4_key_cache *key_cache; /* NULL: derive the key every time */
};

/* The result of sigv4_sign(). extra[] are the headers to add to the
 * request as sent (X-Amz-Date, X-Amz-Security-Token when there is a token,
 * Authorization); their values point into this struct and into the
 * credentials passed to sigv4_sign(), so both must outlive their use
 * (http_send() copies them). */
struct sigv4_signed {
	char amz_date[17];		     /* "20150830T123600Z" */
	char authorization[SIGV4_AUTHZ_MAX]; /* the Authorization value */
	struct http_header extra[3];
	size_t nextra;
};

/* The intermediate strings, for tests and debugging (malloc'd; free with
 * sigv4_parts_free()). None of them contains the secret key; the canonical
 * request contains the session token when it is signed. */
struct sigv4_parts {
	char *canonical_request;
	char *string_to_sign;
	char *authorization;
};

/* Signs req with creds at wall time wall_ms (Unix epoch ms): adds
 * x-amz-date and, when creds->session_token is not empty,
 * x-amz-security-token to the signed headers. req->headers must not
 * already contain X-Amz-Date, X-Amz-Security-Token or Authorization.
 * parts may be NULL; when not NULL it receives the intermediate strings
 * (free them even on failure; they are NULL when not computed).
 * Returns false (out is undefined) on bad input (missing Host, too many
 * headers, empty key, a value that does not fit) or out-of-memory. */
bool sigv4_sign(const struct sigv4_request *req, const struct aws_credentials *creds,
		int64_t wall_ms, struct sigv4_signed *out, struct sigv4_parts *parts)
	__attribute__((warn_unused_result));

/* Low level: signs exactly req->headers (which must include Host and
 * X-Amz-Date, and the token header if it is to be signed), with amz_date
 * ("YYYYMMDDTHHMMSSZ") giving the scope date. Fills parts (free with
 * sigv4_parts_free(), even on failure). Returns false on bad input or
 * out-of-memory. */
bool sigv4_sign_parts(const struct sigv4_request *req, const char *access_key_id,
		      const char *secret_access_key, const char *amz_date,
		      struct sigv4_parts *parts) __attribute__((warn_unused_result));

void sigv4_parts_free(struct sigv4_parts *parts);

/* Forgets (and wipes) a cached signing key. */
void sigv4_key_cache_clear(struct sigv4_key_cache *cache);

/* Formats wall_ms (Unix epoch ms) as an x-amz-date, "YYYYMMDDTHHMMSSZ"
 * (17 bytes with NUL). Returns false for a time before 1970 or after 9999. */
bool sigv4_amz_date(int64_t wall_ms, char out[17]) __attribute__((warn_unused_result));

/* Writes a loggable form of an access key id into out (at most outsz
 * bytes): the first 4 and last 4 characters, e.g. "AKID...MPLE"; "***"
 * for ids of 8 characters or fewer. */
void sigv4_redact_key_id(const char *key_id, char *out, size_t outsz);

/* Lower-case hex SHA-256 of data (65 bytes with NUL). */
void sigv4_sha256_hex(const void *data, size_t len, char out[65]);

#endif
