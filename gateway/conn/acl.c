/*
 * acl: the ACL file's parser and the users (see acl.h); the check point
 * and the listing are in acl_check.c.
 */
#include "gateway/conn/acl.h"
#include "gateway/conn/acl_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#define MAX_USERS     10000
#define MAX_PASSWORDS 64
#define MAX_KEYS      1024
#define MAX_RULES     1024
#define MAX_TOKENS    4096
#define SCRAM_ITER    4096

const struct acl_cat_def acl_cats[] = {
	{"keyspace", ACL_KEYSPACE, "generic key commands (none in leasegate)"},
	{"read", ACL_READ, "reads a lock (LOCK.STATE, LEADER.WATCH, leasegate.state)"},
	{"write", ACL_WRITE, "takes, renews or releases a lock"},
	{"set", ACL_SET, "Redis data type (none in leasegate)"},
	{"sortedset", ACL_SORTEDSET, "Redis data type (none in leasegate)"},
	{"list", ACL_LIST, "Redis data type (none in leasegate)"},
	{"hash", ACL_HASH, "Redis data type (none in leasegate)"},
	{"string", ACL_STRING, "Redis data type (none in leasegate)"},
	{"bitmap", ACL_BITMAP, "Redis data type (none in leasegate)"},
	{"hyperloglog", ACL_HYPERLOGLOG, "Redis data type (none in leasegate)"},
	{"geo", ACL_GEO, "Redis data type (none in leasegate)"},
	{"stream", ACL_STREAM, "Redis data type (none in leasegate)"},
	{"pubsub", ACL_PUBSUB, "Pub/Sub (none in leasegate)"},
	{"admin", ACL_ADMIN, "administration: CONFIG, ACL, ROLE, forced releases, listings"},
	{"fast", ACL_FAST, "answers at once"},
	{"slow", ACL_SLOW, "may take a while"},
	{"blocking", ACL_BLOCKING, "may wait (WAIT, LEADER.CAMPAIGN, pg_advisory_lock)"},
	{"dangerous", ACL_DANGEROUS, "may disturb other clients or show the server's state"},
	{"connection", ACL_CONNECTION, "the connection's own commands (PING, CLIENT, ...)"},
	{"transaction", ACL_TRANSACTION, "transactions (none in leasegate)"},
	{"scripting", ACL_SCRIPTING, "scripts (none in leasegate)"},
	{"lock", ACL_LOCK, "lock commands (LOCK.*, pg_advisory_*, leasegate.*)"},
	{"leader", ACL_LEADER, "leader elections (LEADER.*)"},
	{NULL, 0, NULL},
};

uint32_t acl_cat_lookup(const char *name, size_t len)
{
	for (const struct acl_cat_def *d = acl_cats; d->name; d++)
		if (strlen(d->name) == len && strncasecmp(d->name, name, len) == 0)
			return d->bit;
	return 0;
}

/* --- users --- */

static void user_clear(struct acl_user *u)
{
	for (unsigned i = 0; i < u->nkeys; i++)
		free(u->keys[i].pat);
	free(u->keys);
	if (u->pass != NULL)
		OPENSSL_cleanse(u->pass, u->npass * sizeof(*u->pass));
	free(u->pass);
	free(u->rules);
	OPENSSL_cleanse(u, sizeof(*u));
}

void acl_free(struct acl *a)
{
	if (a == NULL)
		return;
	for (unsigned i = 0; i < a->n; i++)
		user_clear(&a->users[i]);
	free(a->users);
	free(a);
}

unsigned acl_count(const struct acl *a)
{
	return a->n;
}

const struct acl_user *acl_user_at(const struct acl *a, unsigned i)
{
	return i < a->n ? &a->users[i] : NULL;
}

const struct acl_user *acl_find(const struct acl *a, const char *name, size_t len)
{
	for (unsigned i = 0; i < a->n; i++)
		if (strlen(a->users[i].name) == len && memcmp(a->users[i].name, name, len) == 0)
			return &a->users[i];
	return NULL;
}

const char *acl_user_name(const struct acl_user *u)
{
	return u->name;
}

bool acl_user_on(const struct acl_user *u)
{
	return u->on;
}

bool acl_user_nopass(const struct acl_user *u)
{
	return u->nopass;
}

bool acl_user_has_pass(const struct acl_user *u)
{
	return u->npass > 0;
}

bool acl_has_secrets(const struct acl *a)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->users[i].secrets)
			return true;
	return false;
}

bool acl_pg_secret(const struct acl_user *u, struct acl_pg_secret *out)
{
	if (!u->has_pg)
		return false;
	*out = u->pg;
	return true;
}

bool acl_password_ok(const struct acl_user *u, const char *pass, size_t len)
{
	unsigned char d[32];
	SHA256((const unsigned char *)pass, len, d);
	bool ok = false;
	for (unsigned i = 0; i < u->npass; i++)
		ok |= CRYPTO_memcmp(d, u->pass[i], 32) == 0;
	OPENSSL_cleanse(d, sizeof(d));
	return ok || u->nopass;
}

/* --- rules --- */

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool parse_digest(const char *s, size_t len, unsigned char out[32])
{
	if (len != 64)
		return false;
	for (size_t i = 0; i < 32; i++) {
		int hi = unhex(s[2 * i]), lo = unhex(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

static bool add_digest(struct acl_user *u, const unsigned char d[32], char *err, size_t errlen)
{
	for (unsigned i = 0; i < u->npass; i++)
		if (memcmp(u->pass[i], d, 32) == 0)
			return true;
	if (u->npass >= MAX_PASSWORDS) {
		errf(err, errlen, "more than %d passwords for one user", MAX_PASSWORDS);
		return false;
	}
	unsigned char(*np)[32] = realloc(u->pass, (u->npass + 1) * sizeof(*np));
	if (np == NULL) {
		errf(err, errlen, "out of memory");
		return false;
	}
	u->pass = np;
	memcpy(u->pass[u->npass++], d, 32);
	u->nopass = false;
	return true;
}

static void del_digest(struct acl_user *u, const unsigned char d[32])
{
	for (unsigned i = 0; i < u->npass; i++)
		if (memcmp(u->pass[i], d, 32) == 0) {
			memmove(u->pass[i], u->pass[i + 1], (u->npass - i - 1) * 32);
			u->npass--;
			break;
		}
	if (u->has_pg && memcmp(u->pg_of, d, 32) == 0)
		u->has_pg = false;
}

static void hmac256(const unsigned char *key, size_t klen, const void *msg, size_t len,
		    unsigned char out[32])
{
	unsigned int n = 32;
	HMAC(EVP_sha256(), key, (int)klen, msg, len, out, &n);
}

/* PostgreSQL's secrets of password: a SCRAM-SHA-256 verifier (as
 * PostgreSQL computes one) and md5(password + user). */
static bool derive_pg(struct acl_user *u, const char *pw, size_t len, const unsigned char d[32],
		      const struct acl *prev)
{
	/* the same user with the same password in the set in force: its
	 * derivation again (PBKDF2 costs milliseconds a user, and a reload
	 * runs on the event loop) */
	const struct acl_user *p = prev ? acl_find(prev, u->name, strlen(u->name)) : NULL;
	if (p != NULL && p->has_pg && CRYPTO_memcmp(p->pg_of, d, 32) == 0) {
		u->pg = p->pg;
		memcpy(u->pg_of, d, 32);
		u->has_pg = true;
		return true;
	}
	struct acl_pg_secret *s = &u->pg;
	unsigned char salted[32], client[32], md[16];
	unsigned int mdn = 16;
	if (RAND_bytes(s->salt, sizeof(s->salt)) != 1)
		return false;
	s->iterations = SCRAM_ITER;
	PKCS5_PBKDF2_HMAC(pw, (int)len, s->salt, sizeof(s->salt), SCRAM_ITER, EVP_sha256(), 32,
			  salted);
	hmac256(salted, 32, "Client Key", 10, client);
	SHA256(client, 32, s->stored_key);
	hmac256(salted, 32, "Server Key", 10, s->server_key);
	OPENSSL_cleanse(salted, sizeof(salted));
	OPENSSL_cleanse(client, sizeof(client));
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (ctx == NULL)
		return false;
	EVP_DigestInit_ex(ctx, EVP_md5(), NULL);
	EVP_DigestUpdate(ctx, pw, len);
	EVP_DigestUpdate(ctx, u->name, strlen(u->name));
	EVP_DigestFinal_ex(ctx, md, &mdn);
	EVP_MD_CTX_free(ctx);
	memcpy(s->md5, "md5", 3);
	for (int i = 0; i < 16; i++)
		snprintf(s->md5 + 3 + 2 * i, 3, "%02x", md[i]);
	memcpy(u->pg_of, d, 32);
	u->has_pg = true;
	return true;
}

static void reset_keys(struct acl_user *u)
{
	for (unsigned i = 0; i < u->nkeys; i++)
		free(u->keys[i].pat);
	u->nkeys = 0;
}

static bool add_key(struct acl_user *u, unsigned access, const char *p, size_t len, char *err,
		    size_t errlen)
{
	for (unsigned i = 0; i < u->nkeys; i++)
		if (u->keys[i].len == len && memcmp(u->keys[i].pat, p, len) == 0) {
			u->keys[i].access |= access;
			return true;
		}
	if (u->nkeys >= MAX_KEYS) {
		errf(err, errlen, "more than %d key patterns for one user", MAX_KEYS);
		return false;
	}
	struct acl_key *nk = realloc(u->keys, (u->nkeys + 1) * sizeof(*nk));
	if (nk == NULL) {
		errf(err, errlen, "out of memory");
		return false;
	}
	u->keys = nk;
	char *copy = malloc(len + 1);
	if (copy == NULL) {
		errf(err, errlen, "out of memory");
		return false;
	}
	memcpy(copy, p, len);
	copy[len] = '\0';
	u->keys[u->nkeys++] = (struct acl_key){access, len, copy};
	return true;
}

static bool add_rule(struct acl_user *u, bool allow, uint32_t cats, const char *name, size_t len,
		     char *err, size_t errlen)
{
	if (cats == ALL_CATS)
		u->nrules = 0; /* +@all / -@all decide alone: earlier rules are moot */
	if (u->nrules >= MAX_RULES) {
		errf(err, errlen, "more than %d command rules for one user", MAX_RULES);
		return false;
	}
	struct acl_rule *nr = realloc(u->rules, (u->nrules + 1) * sizeof(*nr));
	if (nr == NULL) {
		errf(err, errlen, "out of memory");
		return false;
	}
	u->rules = nr;
	struct acl_rule *r = &u->rules[u->nrules++];
	memset(r, 0, sizeof(*r));
	r->allow = allow;
	r->cats = cats;
	for (size_t i = 0; i < len; i++)
		r->name[i] = (char)tolower((unsigned char)name[i]);
	return true;
}

static bool same(const char *t, size_t len, const char *word)
{
	return strlen(word) == len && strncasecmp(t, word, len) == 0;
}

/* Applies one rule (t, len bytes) to u; false with the reason in err. */
static bool apply_rule(struct acl_user *u, const char *t, size_t len, unsigned idx,
		       const struct acl *prev, acl_known_fn known, void *known_arg, char *err,
		       size_t errlen)
{
	unsigned char d[32];
	if (same(t, len, "on") || same(t, len, "off")) {
		u->on = len == 2;
		return true;
	}
	if (same(t, len, "nopass")) {
		u->nopass = true;
		if (u->pass != NULL)
			OPENSSL_cleanse(u->pass, u->npass * sizeof(*u->pass));
		u->npass = 0;
		u->has_pg = false;
		return true;
	}
	if (same(t, len, "resetpass")) {
		u->nopass = false;
		if (u->pass != NULL)
			OPENSSL_cleanse(u->pass, u->npass * sizeof(*u->pass));
		u->npass = 0;
		u->has_pg = false;
		return true;
	}
	if (same(t, len, "allkeys"))
		return add_key(u, ACL_KEY_READ | ACL_KEY_WRITE, "*", 1, err, errlen);
	if (same(t, len, "resetkeys")) {
		reset_keys(u);
		return true;
	}
	if (same(t, len, "allcommands"))
		return add_rule(u, true, ALL_CATS, "", 0, err, errlen);
	if (same(t, len, "nocommands"))
		return add_rule(u, false, ALL_CATS, "", 0, err, errlen);
	if (same(t, len, "allchannels") || same(t, len, "resetchannels"))
		return true;
	if (same(t, len, "reset")) {
		(void)apply_rule(u, "resetpass", 9, 0, NULL, NULL, NULL, err, errlen);
		reset_keys(u);
		u->on = false;
		return add_rule(u, false, ALL_CATS, "", 0, err, errlen);
	}
	switch (t[0]) {
	case '>':
	case '<':
		SHA256((const unsigned char *)t + 1, len - 1, d);
		if (t[0] == '<') {
			del_digest(u, d);
			return true;
		}
		u->secrets = true;
		if (!add_digest(u, d, err, errlen))
			return false;
		if (!u->has_pg && !derive_pg(u, t + 1, len - 1, d, prev)) {
			errf(err, errlen, "no random bytes for a SCRAM salt");
			return false;
		}
		return true;
	case '#':
	case '!':
		if (!parse_digest(t + 1, len - 1, d)) {
			errf(err, errlen,
			     "a password digest (%c) is 64 hexadecimal digits of its SHA-256",
			     t[0]);
			return false;
		}
		if (t[0] == '!') {
			del_digest(u, d);
			return true;
		}
		u->secrets = true;
		return add_digest(u, d, err, errlen);
	case '~':
		return add_key(u, ACL_KEY_READ | ACL_KEY_WRITE, t + 1, len - 1, err, errlen);
	case '%': {
		size_t i = 1;
		unsigned access = 0;
		for (; i < len && t[i] != '~'; i++) {
			char c = (char)toupper((unsigned char)t[i]);
			if (c != 'R' && c != 'W')
				break;
			access |= c == 'R' ? ACL_KEY_READ : ACL_KEY_WRITE;
		}
		if (i >= len || t[i] != '~' || access == 0) {
			errf(err, errlen, "a key permission is %%R~, %%W~ or %%RW~ and a pattern");
			return false;
		}
		return add_key(u, access, t + i + 1, len - i - 1, err, errlen);
	}
	case '&':
		return true;
	case '+':
	case '-': {
		bool allow = t[0] == '+';
		if (len > 1 && t[1] == '@') {
			uint32_t cat = same(t + 2, len - 2, "all") ? ALL_CATS
								   : acl_cat_lookup(t + 2, len - 2);
			if (cat == 0) {
				errf(err, errlen, "unknown category '%.*s'", (int)(len - 2), t + 2);
				return false;
			}
			return add_rule(u, allow, cat, "", 0, err, errlen);
		}
		char name[CMD_MAX];
		if (len < 2 || len - 1 >= CMD_MAX) {
			errf(err, errlen, "unknown command '%.*s'", (int)(len > 64 ? 64 : len), t);
			return false;
		}
		for (size_t i = 1; i < len; i++)
			name[i - 1] = (char)tolower((unsigned char)t[i]);
		name[len - 1] = '\0';
		if (known != NULL && !known(name, known_arg)) {
			errf(err, errlen, "unknown command '%s'", name);
			return false;
		}
		return add_rule(u, allow, 0, name, len - 1, err, errlen);
	}
	case '(':
		errf(err, errlen, "selectors '(...)' are not supported");
		return false;
	default:
		/* not echoed: a password with a blank, unquoted, ends up here */
		errf(err, errlen,
		     "rule %u is no rule (not shown: it may be part of a password; one with blanks "
		     "is written \">pass word\")",
		     idx);
		return false;
	}
}

/* --- the file --- */

struct token {
	const char *p;
	size_t len;
};

/* Splits a line into tokens: runs of non-blanks, or "double quoted" with
 * \" and \\ (unquoted in place). false on an open quote. */
static bool split(char *line, struct token *tok, unsigned *n, unsigned max)
{
	char *p = line;
	*n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return true;
		if (*n == max)
			return false;
		if (*p == '"') {
			char *w = ++p, *start = p;
			while (*p && *p != '"') {
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
					p++;
				*w++ = *p++;
			}
			if (*p != '"')
				return false;
			tok[*n] = (struct token){start, (size_t)(w - start)};
			p++;
		} else {
			char *start = p;
			while (*p && *p != ' ' && *p != '\t')
				p++;
			tok[*n] = (struct token){start, (size_t)(p - start)};
			if (*p)
				*p++ = '\0';
		}
		(*n)++;
	}
}

static bool valid_name(const char *s, size_t len)
{
	if (len == 0 || len > ACL_USER_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == ':')
			return false;
	return true;
}

static struct acl_user *new_user(struct acl *a, const char *name, size_t len)
{
	struct acl_user *nu = realloc(a->users, (a->n + 1) * sizeof(*nu));
	if (nu == NULL)
		return NULL;
	a->users = nu;
	struct acl_user *u = &a->users[a->n++];
	memset(u, 0, sizeof(*u));
	memcpy(u->name, name, len);
	return u;
}

static bool add_default(struct acl *a, const char *requirepass, const struct acl *prev)
{
	char err[128];
	struct acl_user *u = new_user(a, "default", 7);
	if (u == NULL)
		return false;
	u->on = true;
	if (requirepass != NULL && requirepass[0]) {
		size_t n = strlen(requirepass);
		unsigned char d[32];
		SHA256((const unsigned char *)requirepass, n, d);
		if (!add_digest(u, d, err, sizeof(err)) || !derive_pg(u, requirepass, n, d, prev))
			return false;
	} else {
		u->nopass = true;
	}
	return add_key(u, ACL_KEY_READ | ACL_KEY_WRITE, "*", 1, err, sizeof(err)) &&
	       add_rule(u, true, ALL_CATS, "", 0, err, sizeof(err));
}

/* Notes which users may run everything on every lock name (the check
 * point's fast path: most deployments have only such a default). */
static void settle_all(struct acl *a)
{
	for (unsigned i = 0; i < a->n; i++) {
		struct acl_user *u = &a->users[i];
		bool cmds = false, keys = false;
		for (unsigned r = 0; r < u->nrules; r++)
			if (u->rules[r].cats == ALL_CATS)
				cmds = u->rules[r].allow;
			else if (!u->rules[r].allow)
				cmds = false;
		for (unsigned k = 0; k < u->nkeys; k++)
			keys |= u->keys[k].len == 1 && u->keys[k].pat[0] == '*' &&
				(u->keys[k].access & (ACL_KEY_READ | ACL_KEY_WRITE)) ==
					(ACL_KEY_READ | ACL_KEY_WRITE);
		u->all = u->on && cmds && keys;
	}
}

struct acl *acl_default(const char *requirepass)
{
	struct acl *a = calloc(1, sizeof(*a));
	if (a != NULL && !add_default(a, requirepass, NULL)) {
		acl_free(a);
		return NULL;
	}
	settle_all(a);
	return a;
}

/* A line holds no control character but tabs (its CRLF's CR is cut
 * before): a CR or an escape inside a rule would be kept in it, and shown
 * by ACL LIST as it is, where a reload cuts a trailing CR again (make fuzz,
 * fuzz_acl: "+ef7*\r\r" lost a CR at each round trip). */
static bool printable_line(const char *line, char *err, size_t errlen)
{
	for (const char *p = line; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c < ' ' && c != '\t') || c == 0x7f) {
			errf(err, errlen, "a control character (0x%02x) at column %zu", c,
			     (size_t)(p - line) + 1);
			return false;
		}
	}
	return true;
}

/* One line (NUL-terminated, modified); false with err (no position). */
static bool parse_line(struct acl *a, char *line, const struct acl *prev, acl_known_fn known,
		       void *known_arg, char *err, size_t errlen)
{
	static struct token tok[MAX_TOKENS];
	unsigned n;
	if (!split(line, tok, &n, MAX_TOKENS)) {
		errf(err, errlen, "unbalanced quotes or too many rules");
		return false;
	}
	if (n == 0 || tok[0].p[0] == '#')
		return true;
	if (!same(tok[0].p, tok[0].len, "user")) {
		errf(err, errlen, "a line is 'user <name> <rules>...', not '%.*s'",
		     (int)(tok[0].len > 32 ? 32 : tok[0].len), tok[0].p);
		return false;
	}
	if (n < 2 || !valid_name(tok[1].p, tok[1].len)) {
		errf(err, errlen, "a user name is 1 to %d printable characters without ':'",
		     ACL_USER_MAX);
		return false;
	}
	if (acl_find(a, tok[1].p, tok[1].len) != NULL) {
		errf(err, errlen, "duplicate user '%.*s'", (int)tok[1].len, tok[1].p);
		return false;
	}
	if (a->n >= MAX_USERS) {
		errf(err, errlen, "more than %d users", MAX_USERS);
		return false;
	}
	struct acl_user *u = new_user(a, tok[1].p, tok[1].len);
	if (u == NULL) {
		errf(err, errlen, "out of memory");
		return false;
	}
	for (unsigned i = 2; i < n; i++)
		if (!apply_rule(u, tok[i].p, tok[i].len, i - 1, prev, known, known_arg, err,
				errlen))
			return false;
	return true;
}

struct acl *acl_parse(const char *text, size_t len, const char *path, const char *requirepass,
		      acl_known_fn known, void *known_arg, char *err, size_t errlen)
{
	return acl_reparse(text, len, path, requirepass, NULL, known, known_arg, err, errlen);
}

struct acl *acl_reparse(const char *text, size_t len, const char *path, const char *requirepass,
			const struct acl *prev, acl_known_fn known, void *known_arg, char *err,
			size_t errlen)
{
	struct acl *a = calloc(1, sizeof(*a));
	char *copy = malloc(len + 1);
	if (a == NULL || copy == NULL) {
		free(a);
		free(copy);
		errf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	char *line = copy;
	unsigned lineno = 0;
	bool ok = true;
	char why[256];
	while (ok && line != NULL && (size_t)(line - copy) < len) {
		char *nl = strchr(line, '\n');
		lineno++;
		if (nl != NULL)
			*nl = '\0';
		size_t ll = strlen(line);
		if ((size_t)(line - copy) + ll < len && nl == NULL) {
			errf(why, sizeof(why), "a NUL byte in the line");
			ok = false;
		} else {
			if (ll && line[ll - 1] == '\r')
				line[ll - 1] = '\0';
			ok = printable_line(line, why, sizeof(why)) &&
			     parse_line(a, line, prev, known, known_arg, why, sizeof(why));
		}
		if (!ok)
			errf(err, errlen, "%s:%u: %s", path, lineno, why);
		line = nl ? nl + 1 : NULL;
	}
	OPENSSL_cleanse(copy, len);
	free(copy);
	if (ok && acl_find(a, "default", 7) == NULL && !add_default(a, requirepass, prev)) {
		errf(err, errlen, "%s: out of memory", path);
		ok = false;
	}
	if (!ok) {
		acl_free(a);
		return NULL;
	}
	settle_all(a);
	return a;
}
