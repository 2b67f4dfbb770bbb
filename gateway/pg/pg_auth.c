/*
 * pg_auth: PostgreSQL users and their password checks — SCRAM-SHA-256,
 * MD5, cleartext (the auth_pg_* functions declared in gateway/conn/auth.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/conn.h"

#define SCRAM_ITER   4096
#define SCRAM_SALT   16
#define MAX_PG_USERS 10000
#define USER_MAX     63

struct pg_user {
	char name[USER_MAX + 1];
	bool has_scram, has_md5;
	unsigned char salt[64];
	size_t salt_len;
	int iterations;
	unsigned char stored_key[32], server_key[32];
	char md5[36]; /* "md5" + hex of md5(password + user) */
};

struct auth_pg {
	enum auth_pg_method method;
	enum auth_pg_method cfg_method; /* --pg-auth */
	const struct acl *acl;		/* the ACL users, NULL: none */
	char password[512];		/* --pg-password, "" if none */
	struct pg_user any;		/* --pg-password's SCRAM verifier, for every user */
	struct pg_user *users;
	unsigned n;
	unsigned char mock_secret[32];
	bool cleartext_plain; /* --pg-allow-cleartext-over-plain */
};

/* --- base64 --- */

static size_t b64_enc(const unsigned char *in, size_t n, char *out, size_t outlen)
{
	if (outlen < 4 * ((n + 2) / 3) + 1)
		return 0;
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

/* Decodes strict base64 of len characters; returns the byte count or -1. */
static int b64_dec(const char *in, size_t len, unsigned char *out, size_t outlen)
{
	if (len == 0 || len % 4 != 0 || len / 4 * 3 > outlen + 2)
		return -1;
	unsigned char tmp[1024];
	if (len / 4 * 3 > sizeof(tmp))
		return -1;
	int n = EVP_DecodeBlock(tmp, (const unsigned char *)in, (int)len);
	if (n < 0)
		return -1;
	if (in[len - 1] == '=')
		n--;
	if (in[len - 2] == '=')
		n--;
	if ((size_t)n > outlen)
		return -1;
	memcpy(out, tmp, (size_t)n);
	return n;
}

/* --- SCRAM primitives --- */

static void hmac256(const unsigned char *key, size_t klen, const void *msg, size_t len,
		    unsigned char out[32])
{
	unsigned int n = 32;
	HMAC(EVP_sha256(), key, (int)klen, msg, len, out, &n);
}

static void scram_keys(const char *password, const unsigned char *salt, size_t salt_len, int iter,
		       unsigned char stored[32], unsigned char server[32])
{
	unsigned char salted[32], client[32];
	PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)salt_len, iter, EVP_sha256(),
			  32, salted);
	hmac256(salted, 32, "Client Key", 10, client);
	SHA256(client, 32, stored);
	hmac256(salted, 32, "Server Key", 10, server);
	OPENSSL_cleanse(salted, sizeof(salted));
	OPENSSL_cleanse(client, sizeof(client));
}

bool auth_scram_verifier(const char *password, const unsigned char *salt, size_t salt_len,
			 int iterations, char *out, size_t outlen)
{
	unsigned char stored[32], server[32];
	char s64[100], st64[50], sv64[50];
	scram_keys(password, salt, salt_len, iterations, stored, server);
	if (!b64_enc(salt, salt_len, s64, sizeof(s64)))
		return false;
	b64_enc(stored, 32, st64, sizeof(st64));
	b64_enc(server, 32, sv64, sizeof(sv64));
	int n = snprintf(out, outlen, "SCRAM-SHA-256$%d:%s$%s:%s", iterations, s64, st64, sv64);
	return n > 0 && (size_t)n < outlen;
}

/* Parses SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey> into u. */
static bool parse_scram(const char *v, struct pg_user *u)
{
	const char *pfx = "SCRAM-SHA-256$";
	if (strncmp(v, pfx, strlen(pfx)) != 0)
		return false;
	v += strlen(pfx);
	char *end;
	long it = strtol(v, &end, 10);
	if (end == v || *end != ':' || it < 1 || it > 10000000)
		return false;
	const char *salt = end + 1, *d = strchr(salt, '$');
	if (d == NULL)
		return false;
	const char *c = strchr(d + 1, ':');
	if (c == NULL)
		return false;
	int sl = b64_dec(salt, (size_t)(d - salt), u->salt, sizeof(u->salt));
	if (sl <= 0 || b64_dec(d + 1, (size_t)(c - d - 1), u->stored_key, 32) != 32 ||
	    b64_dec(c + 1, strlen(c + 1), u->server_key, 32) != 32)
		return false;
	u->salt_len = (size_t)sl;
	u->iterations = (int)it;
	u->has_scram = true;
	return true;
}

static void md5_hex(const void *a, size_t alen, const void *b, size_t blen, char out[33])
{
	unsigned char d[16];
	unsigned int n = 16;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_md5(), NULL);
	EVP_DigestUpdate(ctx, a, alen);
	EVP_DigestUpdate(ctx, b, blen);
	EVP_DigestFinal_ex(ctx, d, &n);
	EVP_MD_CTX_free(ctx);
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* --- the users --- */

static bool read_users(struct auth_pg *a, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "bad value for --pg-users: cannot read %s", path);
		return false;
	}
	/* an md5 hash logs in as well as the password does: owner only, as
	 * --aclfile and a config file with a secret */
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || (st.st_mode & 077) != 0) {
		snprintf(err, errlen,
			 "bad value for --pg-users: %s holds password hashes and group or others "
			 "may access it (mode %04o): refused; chmod 600 %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		fclose(f);
		return false;
	}
	char line[1024];
	unsigned lineno = 0;
	bool ok = true;
	while (ok && fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		char *colon = strchr(line, ':');
		struct pg_user u = {0};
		if (colon == NULL || colon == line || (size_t)(colon - line) > USER_MAX ||
		    a->n >= MAX_PG_USERS) {
			ok = false;
			break;
		}
		memcpy(u.name, line, (size_t)(colon - line));
		const char *v = colon + 1;
		if (strncmp(v, "md5", 3) == 0 && strlen(v) == 35) {
			snprintf(u.md5, sizeof(u.md5), "%s", v);
			u.has_md5 = true;
		} else if (!parse_scram(v, &u)) {
			ok = false;
			break;
		}
		struct pg_user *nu = realloc(a->users, (a->n + 1) * sizeof(*nu));
		if (nu == NULL) {
			ok = false;
			break;
		}
		a->users = nu;
		a->users[a->n++] = u;
	}
	fclose(f);
	if (!ok)
		snprintf(err, errlen,
			 "bad value for --pg-users: %s line %u is not name:SCRAM-SHA-256$... or "
			 "name:md5<32 hex digits>",
			 path, lineno);
	return ok;
}

struct auth_pg *auth_pg_new(const struct cfg *cfg, char *err, size_t errlen)
{
	struct auth_pg *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (RAND_bytes(a->mock_secret, sizeof(a->mock_secret)) != 1) {
		snprintf(err, errlen, "no random bytes for the PostgreSQL authentication");
		free(a);
		return NULL;
	}
	snprintf(a->password, sizeof(a->password), "%s", cfg->pg_password);
	if (cfg->pg_users[0] && !read_users(a, cfg->pg_users, err, errlen)) {
		auth_pg_free(a);
		return NULL;
	}
	if (a->password[0]) {
		a->any.salt_len = SCRAM_SALT;
		a->any.iterations = SCRAM_ITER;
		RAND_bytes(a->any.salt, SCRAM_SALT);
		scram_keys(a->password, a->any.salt, SCRAM_SALT, SCRAM_ITER, a->any.stored_key,
			   a->any.server_key);
		a->any.has_scram = true;
	}
	a->cfg_method = (enum auth_pg_method)cfg->pg_auth;
	a->cleartext_plain = cfg->pg_cleartext_plain;
	auth_pg_set_acl(a, NULL);
	return a;
}

void auth_pg_set_acl(struct auth_pg *a, const struct acl *acl)
{
	a->acl = acl;
	if (!a->password[0] && a->n == 0 && acl == NULL)
		a->method = AUTH_PG_TRUST;
	else if (a->cfg_method == AUTH_PG_TRUST && acl != NULL && !a->password[0] && a->n == 0)
		a->method = AUTH_PG_SCRAM; /* the ACL file's users need their passwords */
	else
		a->method = a->cfg_method;
}

void auth_pg_free(struct auth_pg *a)
{
	if (a == NULL)
		return;
	if (a->users != NULL)
		OPENSSL_cleanse(a->users, a->n * sizeof(*a->users));
	free(a->users);
	OPENSSL_cleanse(a, sizeof(*a));
	free(a);
}

enum auth_pg_method auth_pg_method(const struct auth_pg *a)
{
	return a->method;
}

unsigned auth_pg_users(const struct auth_pg *a)
{
	return a->n;
}

static const struct pg_user *file_user(const struct auth_pg *a, const char *user)
{
	for (unsigned i = 0; i < a->n; i++)
		if (strcmp(a->users[i].name, user) == 0)
			return &a->users[i];
	return NULL;
}

/* The ACL user called user that is not in --pg-users, NULL if none. */
static const struct acl_user *acl_user(const struct auth_pg *a, const char *user)
{
	if (a->acl == NULL || file_user(a, user) != NULL)
		return NULL;
	return acl_find(a->acl, user, strlen(user));
}

/* The secrets of user: from --pg-users, or derived from the ACL user's
 * >password (an ACL user that is off has none); NULL if none. */
static const struct pg_user *find_user(const struct auth_pg *a, const char *user,
				       struct pg_user *tmp)
{
	const struct pg_user *f = file_user(a, user);
	if (f != NULL)
		return f;
	const struct acl_user *u = acl_user(a, user);
	struct acl_pg_secret sec;
	if (u == NULL || !acl_user_on(u) || !acl_pg_secret(u, &sec))
		return NULL;
	memset(tmp, 0, sizeof(*tmp));
	snprintf(tmp->name, sizeof(tmp->name), "%s", user);
	tmp->has_scram = tmp->has_md5 = true;
	memcpy(tmp->salt, sec.salt, sizeof(sec.salt));
	tmp->salt_len = sizeof(sec.salt);
	tmp->iterations = sec.iterations;
	memcpy(tmp->stored_key, sec.stored_key, 32);
	memcpy(tmp->server_key, sec.server_key, 32);
	memcpy(tmp->md5, sec.md5, sizeof(tmp->md5));
	OPENSSL_cleanse(&sec, sizeof(sec));
	return tmp;
}

bool auth_pg_cleartext_ok(const struct auth_pg *a, const struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (a->cleartext_plain || conn_encrypted(c))
		return true;
	return getsockname(c->fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_UNIX;
}

const char *auth_pg_why_not(const struct auth_pg *a, const char *user, bool cleartext_ok)
{
	if (cleartext_ok || auth_pg_method_for(a, user) != AUTH_PG_PASSWORD)
		return NULL;
	if (a->method != AUTH_PG_PASSWORD) /* the ACL file's #digest-only user */
		return "this user has only SHA-256 password digests (#...) in the ACL file: "
		       "PostgreSQL's SCRAM and MD5 need the password itself, and a cleartext "
		       "password is taken over TLS only (connect with sslmode=require; the "
		       "server needs --tls-cert-file; or --pg-allow-cleartext-over-plain yes); "
		       "or give the user a >password in the ACL file, or a SCRAM verifier in "
		       "--pg-users";
	return "the server asks for a cleartext password (--pg-auth password), which it takes "
	       "over TLS only, as a hostssl line of pg_hba.conf: connect with sslmode=require (the "
	       "server needs --tls-cert-file), or run the server with --pg-auth scram, or with "
	       "--pg-allow-cleartext-over-plain yes";
}

enum auth_pg_method auth_pg_method_for(const struct auth_pg *a, const char *user)
{
	struct pg_user tmp;
	const struct acl_user *au = acl_user(a, user);
	if (au != NULL && acl_user_on(au) && acl_user_nopass(au))
		return AUTH_PG_TRUST; /* nopass: any password would do */
	const struct pg_user *u = find_user(a, user, &tmp);
	if (au != NULL && acl_user_on(au) && u == NULL && acl_user_has_pass(au))
		return AUTH_PG_PASSWORD; /* #digests: cleartext (over TLS) */
	if (a->method == AUTH_PG_TRUST || a->method == AUTH_PG_PASSWORD || u == NULL)
		return a->method;
	if (a->method == AUTH_PG_SCRAM && !u->has_scram)
		return AUTH_PG_MD5;
	if (a->method == AUTH_PG_MD5 && !u->has_md5)
		return AUTH_PG_SCRAM;
	return a->method;
}

/* --- SCRAM --- */

/* The verifier to check user against: its own, --pg-password's, or a
 * made-up one (known false) whose salt depends only on the name. */
static void scram_verifier_of(const struct auth_pg *a, const char *user, struct auth_scram *x)
{
	struct pg_user tmp;
	const struct pg_user *u = find_user(a, user, &tmp);
	if (u == NULL && acl_user(a, user) != NULL)
		u = NULL; /* a user of the ACL file: never --pg-password's */
	else if (u == NULL && a->password[0])
		u = &a->any;
	if (u != NULL && u->has_scram) {
		memcpy(x->salt, u->salt, u->salt_len);
		x->salt_len = u->salt_len;
		x->iterations = u->iterations;
		memcpy(x->stored_key, u->stored_key, 32);
		memcpy(x->server_key, u->server_key, 32);
		x->known = true;
		return;
	}
	unsigned char h[32];
	hmac256(a->mock_secret, sizeof(a->mock_secret), user, strlen(user), h);
	memcpy(x->salt, h, SCRAM_SALT);
	x->salt_len = SCRAM_SALT;
	x->iterations = SCRAM_ITER;
	RAND_bytes(x->stored_key, 32);
	RAND_bytes(x->server_key, 32);
	x->known = false;
}

/* A printable SCRAM value: no ',' and printable ASCII. */
static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e || s[i] == ',')
			return false;
	return n > 0;
}

size_t auth_scram_mechs(size_t cb_len, const char *mechs[2])
{
	size_t n = 0;
	if (cb_len > 0)
		mechs[n++] = AUTH_SCRAM_SHA_256_PLUS;
	mechs[n++] = AUTH_SCRAM_SHA_256;
	return n;
}

static bool refuse(struct auth_scram *x, const char *sqlstate, const char *why)
{
	x->sqlstate = sqlstate;
	x->why = why;
	return false;
}

/* The client's mechanism: PLUS only where it was offered (as PostgreSQL,
 * anything else is a protocol violation). */
static bool select_mech(struct auth_scram *x, const struct auth_scram_chan *chan)
{
	static const struct auth_scram_chan plain = {AUTH_SCRAM_SHA_256, NULL, 0};
	if (chan == NULL)
		chan = &plain;
	if (chan->cb_len > sizeof(x->cb))
		return refuse(x, "XX000", "channel binding data too long");
	x->offered = chan->cb_len > 0;
	if (x->offered && strcmp(chan->mech, AUTH_SCRAM_SHA_256_PLUS) == 0) {
		x->plus = true;
		memcpy(x->cb, chan->cb, chan->cb_len);
		x->cb_len = chan->cb_len;
		return true;
	}
	if (strcmp(chan->mech, AUTH_SCRAM_SHA_256) == 0)
		return true;
	return refuse(x, "08P01", "client selected an invalid SASL authentication mechanism");
}

/* The gs2-cbind-flag at the start of a client-first-message m, against
 * the mechanism (RFC 5802 section 6; PostgreSQL's checks and messages):
 * true with its length, through its ',', in *len. */
static bool read_cbind_flag(struct auth_scram *x, const char *m, size_t *len)
{
	static const char want[] = "p=tls-server-end-point,";
	static const char no_data[] =
		"malformed SCRAM message: the client selected SCRAM-SHA-256-PLUS, but the SCRAM "
		"message does not include channel binding data";
	switch (m[0]) {
	case 'n':
	case 'y':
		if (x->plus)
			return refuse(x, "08P01", no_data);
		/* a client that could bind but saw no PLUS: a downgrade */
		if (m[0] == 'y' && x->offered)
			return refuse(
				x, "28000",
				"SCRAM channel binding negotiation error: the client supports "
				"SCRAM channel binding but thinks the server does not; "
				"however, this server does support channel binding");
		*len = 2;
		return m[1] == ',';
	case 'p':
		if (!x->plus)
			return refuse(x, "08P01",
				      "malformed SCRAM message: the client selected SCRAM-SHA-256 "
				      "without channel binding, but the SCRAM message includes "
				      "channel binding data");
		if (strncmp(m, want, sizeof(want) - 1) != 0)
			return refuse(x, "08P01",
				      "unsupported SCRAM channel-binding type (this server binds "
				      "tls-server-end-point only)");
		*len = sizeof(want) - 1;
		return true;
	default:
		return false;
	}
}

bool auth_scram_first(const struct auth_pg *a, struct auth_scram *x, const char *user,
		      const struct auth_scram_chan *chan, const char *msg, size_t len,
		      const char *server_nonce, char *out, size_t outlen)
{
	memset(x, 0, sizeof(*x));
	if (!select_mech(x, chan))
		return false;
	if (len >= AUTH_SCRAM_MAX_MSG || memchr(msg, '\0', len) != NULL)
		return false;
	char m[AUTH_SCRAM_MAX_MSG];
	memcpy(m, msg, len);
	m[len] = '\0';
	/* gs2-header: the channel-binding flag, then no authzid */
	size_t fl = 0;
	if (!read_cbind_flag(x, m, &fl) || m[fl] != ',')
		return false;
	size_t gl = fl + 1;
	memcpy(x->gs2, m, gl);
	x->gs2[gl] = '\0';
	const char *bare = m + gl;
	snprintf(x->client_first_bare, sizeof(x->client_first_bare), "%s", bare);
	/* n=<user>,r=<nonce>[,extensions]: libpq sends n= empty, the user is
	 * the startup packet's */
	if (strncmp(bare, "n=", 2) != 0)
		return false;
	const char *r = strstr(bare, ",r=");
	if (r == NULL)
		return false;
	r += 3;
	size_t rn = strcspn(r, ",");
	if (!printable(r, rn) || rn > 200)
		return false;
	char snonce[64];
	if (server_nonce == NULL) {
		unsigned char rb[18];
		if (RAND_bytes(rb, sizeof(rb)) != 1)
			return false;
		b64_enc(rb, sizeof(rb), snonce, sizeof(snonce));
		server_nonce = snonce;
	}
	snprintf(x->nonce, sizeof(x->nonce), "%.*s%s", (int)rn, r, server_nonce);
	scram_verifier_of(a, user, x);
	char s64[100];
	b64_enc(x->salt, x->salt_len, s64, sizeof(s64));
	int n = snprintf(x->server_first, sizeof(x->server_first), "r=%s,s=%s,i=%d", x->nonce, s64,
			 x->iterations);
	if (n < 0 || (size_t)n >= sizeof(x->server_first) || (size_t)n >= outlen)
		return false;
	memcpy(out, x->server_first, (size_t)n + 1);
	x->state = 1;
	return true;
}

/* The c= value (cl bytes at cv) of a client-final-message: the base64 of
 * the gs2 header and, under PLUS, the channel's data, exactly. */
static bool binding_ok(struct auth_scram *x, const char *cv, size_t cl)
{
	unsigned char input[sizeof(x->gs2) + AUTH_SCRAM_CB_MAX];
	char c64[4 * (sizeof(input) + 2) / 3 + 1];
	size_t gl = strlen(x->gs2);
	memcpy(input, x->gs2, gl);
	memcpy(input + gl, x->cb, x->cb_len); /* 0 bytes without PLUS */
	size_t n = b64_enc(input, gl + x->cb_len, c64, sizeof(c64));
	if (n > 0 && cl == n && CRYPTO_memcmp(cv, c64, n) == 0)
		return true;
	if (x->plus)
		return refuse(x, "28000", "SCRAM channel binding check failed");
	return refuse(x, "08P01",
		      "unexpected SCRAM channel-binding attribute in client-final-message");
}

bool auth_scram_final(struct auth_scram *x, const char *msg, size_t len, char *out, size_t outlen)
{
	if (x->state != 1 || len >= AUTH_SCRAM_MAX_MSG || memchr(msg, '\0', len) != NULL)
		return false;
	x->state = 2;
	char m[AUTH_SCRAM_MAX_MSG];
	memcpy(m, msg, len);
	m[len] = '\0';
	char *p = strstr(m, ",p=");
	if (p == NULL || strncmp(m, "c=", 2) != 0)
		return false;
	/* c= is the base64 of the gs2 header (and, under PLUS, the channel
	 * binding data); r= the whole nonce */
	if (!binding_ok(x, m + 2, strcspn(m + 2, ",")))
		return false;
	const char *r = strstr(m, ",r=");
	if (r == NULL || r > p)
		return false;
	r += 3;
	size_t rl = strcspn(r, ",");
	if (rl != strlen(x->nonce) || memcmp(r, x->nonce, rl) != 0)
		return false;
	unsigned char proof[32];
	if (b64_dec(p + 3, strlen(p + 3), proof, sizeof(proof)) != 32)
		return false;
	*p = '\0'; /* client-final-message-without-proof */
	char auth_msg[3 * AUTH_SCRAM_MAX_MSG];
	int an = snprintf(auth_msg, sizeof(auth_msg), "%s,%s,%s", x->client_first_bare,
			  x->server_first, m);
	if (an < 0 || (size_t)an >= sizeof(auth_msg))
		return false;
	unsigned char sig[32], key[32], stored[32];
	hmac256(x->stored_key, 32, auth_msg, (size_t)an, sig);
	for (int i = 0; i < 32; i++)
		key[i] = proof[i] ^ sig[i];
	SHA256(key, 32, stored);
	bool ok = CRYPTO_memcmp(stored, x->stored_key, 32) == 0 && x->known;
	if (!ok)
		return false;
	unsigned char ssig[32];
	char s64[50];
	hmac256(x->server_key, 32, auth_msg, (size_t)an, ssig);
	b64_enc(ssig, 32, s64, sizeof(s64));
	int n = snprintf(out, outlen, "v=%s", s64);
	return n > 0 && (size_t)n < outlen;
}

/* --- MD5 and cleartext --- */

bool auth_pg_md5_check(const struct auth_pg *a, const char *user, const unsigned char salt[4],
		       const char *response)
{
	struct pg_user tmp;
	const struct pg_user *u = find_user(a, user, &tmp);
	char inner[36] = "md5", want[36] = "md5";
	bool known = true;
	if (u != NULL && u->has_md5)
		snprintf(inner, sizeof(inner), "%s", u->md5);
	else if (u == NULL && a->password[0] && acl_user(a, user) == NULL)
		md5_hex(a->password, strlen(a->password), user, strlen(user), inner + 3);
	else {
		/* unknown user, or a SCRAM-only one: the same work, refused */
		md5_hex(a->mock_secret, sizeof(a->mock_secret), user, strlen(user), inner + 3);
		known = false;
	}
	md5_hex(inner + 3, 32, salt, 4, want + 3);
	return strlen(response) == 35 && CRYPTO_memcmp(response, want, 35) == 0 && known;
}

bool auth_pg_password_check(const struct auth_pg *a, const char *user, const char *password)
{
	struct pg_user tmp;
	const struct acl_user *au = acl_user(a, user);
	if (au != NULL) /* the ACL file's user: its digests */
		return acl_user_on(au) && acl_user_has_pass(au) &&
		       acl_password_ok(au, password, strlen(password));
	const struct pg_user *u = find_user(a, user, &tmp);
	if (u == NULL && a->password[0])
		u = &a->any;
	if (u != NULL && u->has_md5) {
		char h[33];
		md5_hex(password, strlen(password), user, strlen(user), h);
		return CRYPTO_memcmp(h, u->md5 + 3, 32) == 0;
	}
	struct auth_scram x;
	scram_verifier_of(a, user, &x);
	unsigned char stored[32], server[32];
	scram_keys(password, x.salt, x.salt_len, x.iterations, stored, server);
	return CRYPTO_memcmp(stored, x.stored_key, 32) == 0 && x.known;
}
