/*
 * sigv4: AWS Signature Version 4, computed with OpenSSL's SHA-256.
 * See sigv4.h for the canonical forms. Every string is built in a growing
 * buffer (struct sbuf) whose error, once set, stays set, so the builders
 * below need no error check per append.
 *
 * Why HMAC is written out here (RFC 2104 over one SHA-256 context) rather
 * than OpenSSL's one-shot HMAC() and SHA256(): in OpenSSL 3 each one-shot
 * call fetches the algorithm from the provider and allocates contexts,
 * which cost more than the hashing of a request. The digest is fetched
 * once and each thread keeps one context for reuse.
 *
 * A DynamoDB request is signed on the hot path (every renewal), so a
 * signature allocates nothing: the canonical request and the string to
 * sign are built in buffers on the stack (struct sbuf moves to the heap
 * only past them), the Authorization value straight into the caller's
 * struct, and the intermediate strings are copied out only when asked.
 */
#include "lib/aws/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ALGORITHM      "AWS4-HMAC-SHA256"
#define SIGV4_LINE_MAX (64u << 10) /* one canonical header or query, bytes */

struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
	bool heap;  /* p was malloc'd (else it is the caller's storage) */
	bool fixed; /* never grows: past cap is a failure */
};

/* A buffer that starts in the caller's storage (cap bytes, cap > 0). */
static void sb_init(struct sbuf *b, char *storage, size_t cap, bool fixed)
{
	*b = (struct sbuf){.p = storage, .cap = cap, .fixed = fixed};
	storage[0] = '\0';
}

static void sb_reserve(struct sbuf *b, size_t more)
{
	if (b->failed)
		return;
	if (b->len + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *p = b->fixed ? NULL : b->heap ? realloc(b->p, cap) : malloc(cap);
	if (!p) {
		b->failed = true;
		return;
	}
	if (!b->heap && b->len)
		memcpy(p, b->p, b->len + 1);
	b->p = p;
	b->cap = cap;
	b->heap = true;
}

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	if (b->failed)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}
static void sb_chr(struct sbuf *b, char c)
{
	sb_add(b, &c, 1);
}

/* Frees what b allocated. */
static void sb_free(struct sbuf *b)
{
	if (b->heap)
		free(b->p);
	b->p = NULL;
	b->heap = false;
}

/* The string of b as a malloc'd copy (NULL if b failed), and b freed. */
static char *sb_take(struct sbuf *b)
{
	char *p = NULL;
	if (!b->failed && b->p) {
		if (b->heap) {
			p = b->p;
			b->heap = false;
		} else if ((p = malloc(b->len + 1)) != NULL) {
			memcpy(p, b->p, b->len + 1);
		}
	}
	sb_free(b);
	return p;
}

static void hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* SHA-256 of the concatenation of n pieces, in this thread's context
 * (its algorithm fetched once; both live until the process ends). */
static bool sha256_v(const void *const *data, const size_t *len, size_t n, unsigned char out[32])
{
	static _Thread_local EVP_MD_CTX *ctx;
	static _Thread_local EVP_MD *md;
	if (!md && !(md = EVP_MD_fetch(NULL, "SHA256", NULL)))
		return false;
	if (!ctx && !(ctx = EVP_MD_CTX_new()))
		return false;
	if (!EVP_DigestInit_ex2(ctx, md, NULL))
		return false;
	for (size_t i = 0; i < n; i++)
		if (len[i] && !EVP_DigestUpdate(ctx, data[i], len[i]))
			return false;
	unsigned int olen = 0;
	return EVP_DigestFinal_ex(ctx, out, &olen) && olen == 32;
}

static bool sha256(const void *data, size_t len, unsigned char out[32])
{
	return sha256_v(&data, &len, 1, out);
}

void sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	if (!sha256(data ? data : (const void *)"", len, md)) {
		/* the process cannot hash: a digest no server accepts */
		memset(md, 0, sizeof md);
	}
	hex(md, sizeof md, out);
}

/* HMAC-SHA256 (RFC 2104) of msg[0..msglen) with key. */
static bool hmac(const void *key, size_t keylen, const char *msg, size_t msglen,
		 unsigned char out[32])
{
	enum { BLOCK = 64 };
	unsigned char k[BLOCK] = {0}, ipad[BLOCK], opad[BLOCK], inner[32];
	if (keylen > BLOCK) {
		if (!sha256(key, keylen, k))
			return false;
	} else {
		memcpy(k, key, keylen);
	}
	for (int i = 0; i < BLOCK; i++) {
		ipad[i] = k[i] ^ 0x36;
		opad[i] = k[i] ^ 0x5c;
	}
	const void *in[2] = {ipad, msg};
	size_t inlen[2] = {BLOCK, msglen};
	const void *outer[2] = {opad, inner};
	size_t outerlen[2] = {BLOCK, sizeof inner};
	bool ok = sha256_v(in, inlen, 2, inner) && sha256_v(outer, outerlen, 2, out);
	OPENSSL_cleanse(k, sizeof k);
	OPENSSL_cleanse(ipad, sizeof ipad);
	OPENSSL_cleanse(opad, sizeof opad);
	OPENSSL_cleanse(inner, sizeof inner);
	return ok;
}

/* RFC 3986 unreserved characters are kept; everything else is %XX. */
static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

static void uri_encode(struct sbuf *b, const char *s, size_t n, bool keep_slash)
{
	static const char digits[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (unreserved(c) || (keep_slash && c == '/')) {
			sb_chr(b, (char)c);
		} else {
			char e[3] = {'%', digits[c >> 4], digits[c & 15]};
			sb_add(b, e, 3);
		}
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes %XX in s[0..n) into out (at least n+1 bytes); returns the length. */
static size_t uri_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return o;
}

struct qpair {
	char *name, *value; /* encoded */
};

static int qpair_cmp(const void *a, const void *b)
{
	const struct qpair *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->value, y->value);
}

static char *encode_part(const char *s, size_t n)
{
	char *dec = malloc(n + 1);
	if (!dec)
		return NULL;
	size_t dn = uri_decode(s, n, dec);
	struct sbuf b = {0};
	uri_encode(&b, dec, dn, false);
	sb_add(&b, "", 0); /* an empty part is "" rather than NULL */
	free(dec);
	return sb_take(&b);
}

static void canonical_query(struct sbuf *out, const char *q)
{
	if (!q || !*q)
		return;
	size_t n = 1;
	for (const char *p = q; *p; p++)
		n += *p == '&';
	struct qpair *pairs = calloc(n, sizeof *pairs);
	if (!pairs) {
		out->failed = true;
		return;
	}
	size_t np = 0;
	const char *p = q;
	while (*p) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			const char *eq = memchr(p, '=', len);
			size_t nl = eq ? (size_t)(eq - p) : len;
			pairs[np].name = encode_part(p, nl);
			pairs[np].value =
				eq ? encode_part(eq + 1, len - nl - 1) : encode_part("", 0);
			if (!pairs[np].name || !pairs[np].value)
				out->failed = true;
			np++;
		}
		p += len + (end != NULL);
	}
	if (!out->failed) {
		qsort(pairs, np, sizeof *pairs, qpair_cmp);
		for (size_t i = 0; i < np; i++) {
			if (i)
				sb_chr(out, '&');
			sb_str(out, pairs[i].name);
			sb_chr(out, '=');
			sb_str(out, pairs[i].value);
		}
	}
	for (size_t i = 0; i < np; i++) {
		free(pairs[i].name);
		free(pairs[i].value);
	}
	free(pairs);
}

struct chdr {
	char name[128];
	const char *value;
	size_t order;
};

static int chdr_cmp(const void *a, const void *b)
{
	const struct chdr *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Appends v trimmed, with inner whitespace runs folded to one space: a
 * run of other characters at a time, not a call per character. */
static void add_trimmed(struct sbuf *b, const char *v)
{
	bool any = false;
	for (;;) {
		while (is_space(*v))
			v++;
		const char *run = v;
		while (*v && !is_space(*v))
			v++;
		if (v == run)
			return; /* the end, maybe after trailing whitespace */
		if (any)
			sb_chr(b, ' ');
		sb_add(b, run, (size_t)(v - run));
		any = true;
	}
}

/* Appends the canonical request to b and the signed header list to sl
 * (both set up by the caller). False on bad input; b or sl may also have
 * failed (out of memory). */
static bool canonical_request(const struct sigv4_request *req, struct sbuf *b, struct sbuf *sl)
{
	struct chdr h[SIGV4_HEADERS_MAX];
	bool has_host = false;
	if (!req->method || req->nheaders > SIGV4_HEADERS_MAX || !req->headers)
		return false;
	for (size_t i = 0; i < req->nheaders; i++) {
		const char *name = req->headers[i].name;
		size_t n = name ? strlen(name) : 0;
		if (n == 0 || n >= sizeof h[i].name || !req->headers[i].value ||
		    strlen(req->headers[i].value) > SIGV4_LINE_MAX)
			return false;
		for (size_t k = 0; k <= n; k++) {
			char c = name[k];
			h[i].name[k] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
		}
		h[i].value = req->headers[i].value;
		h[i].order = i;
		has_host |= strcmp(h[i].name, "host") == 0;
	}
	if (!has_host)
		return false;
	qsort(h, req->nheaders, sizeof h[0], chdr_cmp);

	sb_str(b, req->method);
	sb_chr(b, '\n');
	const char *path = req->path && *req->path ? req->path : "/";
	uri_encode(b, path, strlen(path), true);
	sb_chr(b, '\n');
	canonical_query(b, req->query);
	sb_chr(b, '\n');
	for (size_t i = 0; i < req->nheaders; i++) {
		bool repeat = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
		if (repeat) {
			sb_chr(b, ',');
		} else {
			if (i > 0) {
				sb_chr(b, '\n');
				sb_chr(sl, ';');
			}
			sb_str(b, h[i].name);
			sb_chr(b, ':');
			sb_str(sl, h[i].name);
		}
		add_trimmed(b, h[i].value);
	}
	sb_str(b, "\n\n");
	if (!sl->failed)
		sb_add(b, sl->p, sl->len);
	sb_chr(b, '\n');
	char payload[65];
	sigv4_sha256_hex(req->body, req->body ? req->body_len : 0, payload);
	sb_add(b, payload, 64);
	return true;
}

static bool valid_amz_date(const char *d)
{
	if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && (d[i] < '0' || d[i] > '9'))
			return false;
	return true;
}

static bool simple_token(const char *s)
{
	if (!s || !*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ' ' || *s == '\n' || *s == ',')
			return false;
	return true;
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
 * "aws4_request"), from req->key_cache when it matches. */
static bool signing_key(const struct sigv4_request *req, const char *secret, const char *date,
			unsigned char out[32])
{
	struct sigv4_key_cache *kc = req->key_cache;
	size_t slen = strlen(secret);
	if (kc && kc->valid && strcmp(kc->date, date) == 0 &&
	    strcmp(kc->region, req->region) == 0 && strcmp(kc->service, req->service) == 0 &&
	    kc->secret_len == slen && CRYPTO_memcmp(kc->secret, secret, slen) == 0) {
		memcpy(out, kc->key, 32);
		return true;
	}
	char ksecret[4 + AWS_SECRET_MAX + 1];
	unsigned char k1[32], k2[32], k3[32];
	memcpy(ksecret, "AWS4", 4);
	memcpy(ksecret + 4, secret, slen); /* slen <= AWS_SECRET_MAX (checked) */
	bool ok = hmac(ksecret, 4 + slen, date, strlen(date), k1) &&
		  hmac(k1, 32, req->region, strlen(req->region), k2) &&
		  hmac(k2, 32, req->service, strlen(req->service), k3) &&
		  hmac(k3, 32, "aws4_request", 12, out);
	OPENSSL_cleanse(ksecret, sizeof ksecret);
	OPENSSL_cleanse(k1, sizeof k1);
	OPENSSL_cleanse(k2, sizeof k2);
	OPENSSL_cleanse(k3, sizeof k3);
	if (ok && kc) {
		/* region and service are at most 64 bytes (simple_token) */
		memcpy(kc->key, out, 32);
		memcpy(kc->secret, secret, slen);
		kc->secret_len = slen;
		snprintf(kc->date, sizeof kc->date, "%s", date);
		snprintf(kc->region, sizeof kc->region, "%s", req->region);
		snprintf(kc->service, sizeof kc->service, "%s", req->service);
		kc->valid = true;
	}
	return ok;
}

void sigv4_key_cache_clear(struct sigv4_key_cache *cache)
{
	OPENSSL_cleanse(cache, sizeof *cache);
}

static bool sign_args_ok(const struct sigv4_request *req, const char *access_key_id,
			 const char *secret_access_key, const char *amz_date)
{
	return valid_amz_date(amz_date) && simple_token(req->region) &&
	       simple_token(req->service) && access_key_id && *access_key_id &&
	       strlen(access_key_id) <= AWS_KEY_ID_MAX && secret_access_key && *secret_access_key &&
	       strlen(secret_access_key) <= AWS_SECRET_MAX;
}

/* Signs req (its arguments checked by sign_args_ok()): the Authorization
 * value into authz, set up by the caller; the intermediate strings into
 * parts unless it is NULL. */
static bool sign(const struct sigv4_request *req, const char *access_key_id,
		 const char *secret_access_key, const char *amz_date, struct sbuf *authz,
		 struct sigv4_parts *parts)
{
	char creq_mem[2048], sl_mem[256], sts_mem[256];
	struct sbuf creq, sl, sts;
	sb_init(&creq, creq_mem, sizeof creq_mem, false);
	sb_init(&sl, sl_mem, sizeof sl_mem, false);
	sb_init(&sts, sts_mem, sizeof sts_mem, false);
	bool ok = canonical_request(req, &creq, &sl) && !creq.failed && !sl.failed;

	char date[9];
	memcpy(date, amz_date, 8);
	date[8] = '\0';
	if (ok) {
		char creq_hash[65];
		sigv4_sha256_hex(creq.p, creq.len, creq_hash);
		sb_str(&sts, ALGORITHM "\n");
		sb_str(&sts, amz_date);
		sb_chr(&sts, '\n');
		sb_str(&sts, date);
		sb_chr(&sts, '/');
		sb_str(&sts, req->region);
		sb_chr(&sts, '/');
		sb_str(&sts, req->service);
		sb_str(&sts, "/aws4_request\n");
		sb_add(&sts, creq_hash, 64);
		ok = !sts.failed;
	}
	unsigned char k[32], sig[32];
	ok = ok && signing_key(req, secret_access_key, date, k) && hmac(k, 32, sts.p, sts.len, sig);
	OPENSSL_cleanse(k, sizeof k);
	if (ok) {
		char sighex[65];
		hex(sig, sizeof sig, sighex);
		sb_str(authz, ALGORITHM " Credential=");
		sb_str(authz, access_key_id);
		sb_chr(authz, '/');
		sb_str(authz, date);
		sb_chr(authz, '/');
		sb_str(authz, req->region);
		sb_chr(authz, '/');
		sb_str(authz, req->service);
		sb_str(authz, "/aws4_request, SignedHeaders=");
		sb_add(authz, sl.p, sl.len);
		sb_str(authz, ", Signature=");
		sb_add(authz, sighex, 64);
		ok = !authz->failed;
	}
	if (parts) {
		parts->canonical_request = sb_take(&creq);
		parts->string_to_sign = ok ? sb_take(&sts) : NULL;
		ok = ok && parts->canonical_request && parts->string_to_sign;
	}
	sb_free(&creq);
	sb_free(&sl);
	sb_free(&sts);
	return ok;
}

bool sigv4_sign_parts(const struct sigv4_request *req, const char *access_key_id,
		      const char *secret_access_key, const char *amz_date,
		      struct sigv4_parts *parts)
{
	*parts = (struct sigv4_parts){0};
	if (!sign_args_ok(req, access_key_id, secret_access_key, amz_date))
		return false;
	char mem[SIGV4_AUTHZ_MAX];
	struct sbuf a;
	sb_init(&a, mem, sizeof mem, false);
	bool ok = sign(req, access_key_id, secret_access_key, amz_date, &a, parts);
	parts->authorization = ok ? sb_take(&a) : NULL;
	sb_free(&a);
	return ok && parts->authorization != NULL;
}

void sigv4_parts_free(struct sigv4_parts *parts)
{
	if (!parts)
		return;
	free(parts->canonical_request);
	free(parts->string_to_sign);
	free(parts->authorization);
	*parts = (struct sigv4_parts){0};
}

/* Days since 1970-01-01 to a proleptic Gregorian date: the calendar
 * repeats every 400 years (146,097 days); counting from 0000-03-01 puts
 * the leap day at the end of each year, so months are 153 days every 5. */
static void civil_date(int64_t days, int *year, int *month, int *day)
{
	int64_t z = days + 719468; /* days since 0000-03-01; >= 0 from 1970 */
	int64_t era = z / 146097, doe = z % 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* from March 1 */
	int64_t mp = (5 * doy + 2) / 153;		       /* 0 = March */
	*day = (int)(doy - (153 * mp + 2) / 5 + 1);
	*month = (int)(mp < 10 ? mp + 3 : mp - 9);
	*year = (int)(era * 400 + yoe + (*month <= 2));
}

static void digits(char *out, int v, int n)
{
	while (n-- > 0) {
		out[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

bool sigv4_amz_date(int64_t wall_ms, char out[17])
{
	/* 253402300800 s is 10000-01-01T00:00:00Z. */
	if (wall_ms < 0 || wall_ms / 1000 >= INT64_C(253402300800))
		return false;
	int64_t s = wall_ms / 1000;
	int year, month, day;
	civil_date(s / 86400, &year, &month, &day);
	int sod = (int)(s % 86400);
	digits(out, year, 4);
	digits(out + 4, month, 2);
	digits(out + 6, day, 2);
	out[8] = 'T';
	digits(out + 9, sod / 3600, 2);
	digits(out + 11, sod / 60 % 60, 2);
	digits(out + 13, sod % 60, 2);
	out[15] = 'Z';
	out[16] = '\0';
	return true;
}

static bool name_is(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

bool sigv4_sign(const struct sigv4_request *req, const struct aws_credentials *creds,
		int64_t wall_ms, struct sigv4_signed *out, struct sigv4_parts *parts)
{
	if (parts)
		*parts = (struct sigv4_parts){0};
	bool token = creds->session_token[0] != '\0';
	size_t n = req->nheaders + 1 + token;
	if (!req->headers || n > SIGV4_HEADERS_MAX || !sigv4_amz_date(wall_ms, out->amz_date))
		return false;
	struct http_header h[SIGV4_HEADERS_MAX];
	for (size_t i = 0; i < req->nheaders; i++) {
		const char *name = req->headers[i].name;
		if (!name || name_is(name, "x-amz-date") || name_is(name, "authorization") ||
		    name_is(name, "x-amz-security-token"))
			return false;
		h[i] = req->headers[i];
	}
	h[req->nheaders] = (struct http_header){"X-Amz-Date", out->amz_date};
	if (token)
		h[req->nheaders + 1] =
			(struct http_header){"X-Amz-Security-Token", creds->session_token};
	struct sigv4_request r = *req;
	r.headers = h;
	r.nheaders = n;
	if (!sign_args_ok(&r, creds->access_key_id, creds->secret_access_key, out->amz_date))
		return false;
	struct sbuf a;
	sb_init(&a, out->authorization, sizeof out->authorization, true);
	if (!sign(&r, creds->access_key_id, creds->secret_access_key, out->amz_date, &a, parts))
		return false;
	if (parts && !(parts->authorization = strdup(out->authorization)))
		return false;
	out->nextra = 0;
	out->extra[out->nextra++] = (struct http_header){"X-Amz-Date", out->amz_date};
	if (token)
		out->extra[out->nextra++] =
			(struct http_header){"X-Amz-Security-Token", creds->session_token};
	out->extra[out->nextra++] = (struct http_header){"Authorization", out->authorization};
	return true;
}

void sigv4_redact_key_id(const char *key_id, char *out, size_t outsz)
{
	if (!outsz)
		return;
	size_t n = key_id ? strlen(key_id) : 0;
	if (n <= 8)
		snprintf(out, outsz, "***");
	else
		snprintf(out, outsz, "%.4s...%s", key_id, key_id + n - 4);
}
