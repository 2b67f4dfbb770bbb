/*
 * creds_parse: shared files, profiles, ISO 8601, the STS XML and the
 * credentials JSON. See creds_parse.h. The XML reader is not a general
 * XML parser: it finds the first <Name>text</Name> of a few known
 * elements inside a bounded document and decodes the five predefined
 * entities, which is all an STS answer holds.
 */
#include "lib/aws/creds_parse.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CREDS_DOC_MAX (64u << 10) /* largest XML/JSON credentials answer */

const char *creds_default_getenv(void *arg, const char *name)
{
	return getenv(name);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* [s, e) trimmed */
static void trim(const char **s, const char **e)
{
	while (*s < *e && is_blank(**s))
		(*s)++;
	while (*e > *s && is_blank((*e)[-1]))
		(*e)--;
}

/* Compares the section header text [s, e) with name, whitespace runs
 * in the header counting as one space. */
static bool section_is(const char *s, const char *e, const char *name)
{
	trim(&s, &e);
	while (s < e && *name) {
		if (is_blank(*s)) {
			if (*name != ' ')
				return false;
			while (s < e && is_blank(*s))
				s++;
			name++;
			continue;
		}
		if (*s++ != *name++)
			return false;
	}
	return s == e && !*name;
}

/* Calls visit for every key line of [section]; stops when it returns true. */
static bool ini_scan(const char *text, const char *section,
		     bool (*visit)(void *, const char *, const char *, const char *, const char *),
		     void *arg, bool *section_seen)
{
	bool in = false;
	const char *p = text;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		const char *e = eol ? eol : p + strlen(p);
		const char *s = p;
		bool indented = s < e && is_blank(*s);
		trim(&s, &e);
		if (s < e && *s == '[') {
			const char *close = memchr(s, ']', (size_t)(e - s));
			in = close && section_is(s + 1, close, section);
			if (in && section_seen)
				*section_seen = true;
		} else if (in && !indented && s < e && *s != '#' && *s != ';') {
			const char *eq = memchr(s, '=', (size_t)(e - s));
			if (eq) {
				const char *ks = s, *ke = eq, *vs = eq + 1, *ve = e;
				trim(&ks, &ke);
				trim(&vs, &ve);
				if (visit(arg, ks, ke, vs, ve))
					return true;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return false;
}

struct lookup {
	const char *key;
	char *out;
	size_t outsz;
	bool found;
};

static bool visit_lookup(void *arg, const char *ks, const char *ke, const char *vs, const char *ve)
{
	struct lookup *l = arg;
	size_t kn = (size_t)(ke - ks), vn = (size_t)(ve - vs);
	if (kn != strlen(l->key) || memcmp(ks, l->key, kn) != 0)
		return false;
	if (vn >= l->outsz)
		return true; /* found but does not fit: stop, not found */
	memcpy(l->out, vs, vn);
	l->out[vn] = '\0';
	l->found = true;
	return true;
}

static bool visit_none(void *arg, const char *ks, const char *ke, const char *vs, const char *ve)
{
	return false;
}

bool creds_ini_get(const char *text, const char *section, const char *key, char *out, size_t outsz)
{
	struct lookup l = {key, out, outsz, false};
	if (!text || !outsz)
		return false;
	ini_scan(text, section, visit_lookup, &l, NULL);
	return l.found;
}

bool creds_ini_has_section(const char *text, const char *section)
{
	bool seen = false;
	if (text)
		ini_scan(text, section, visit_none, NULL, &seen);
	return seen;
}

static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

bool creds_parse_iso8601(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, sec;
	if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &sec))
		return false;
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60)
		return false;
	const char *p = s + 19;
	int frac_ms = 0;
	if (*p == '.') {
		p++;
		int n = 0;
		while (*p >= '0' && *p <= '9') {
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
			n++;
			p++;
		}
		if (n == 0)
			return false;
		for (; n < 3; n++)
			frac_ms *= 10;
	}
	int64_t offset_s = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		int sign = *p == '-' ? -1 : 1;
		if (!digits(p + 1, 2, &oh))
			return false;
		p += 3;
		if (*p == ':')
			p++;
		if (!digits(p, 2, &om) || oh > 23 || om > 59)
			return false;
		p += 2;
		offset_s = sign * (oh * 3600 + om * 60);
	} else {
		return false;
	}
	if (*p)
		return false;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_s;
	*ms = secs * 1000 + frac_ms;
	return true;
}

/* Decodes the predefined XML entities of [s, e) into out. */
static bool xml_text(const char *s, const char *e, char *out, size_t outsz)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = {
		{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	size_t o = 0;
	while (s < e) {
		char c = *s;
		size_t adv = 1;
		if (c == '&') {
			size_t i;
			for (i = 0; i < sizeof ents / sizeof ents[0]; i++) {
				size_t n = strlen(ents[i].ent);
				if ((size_t)(e - s) >= n && memcmp(s, ents[i].ent, n) == 0) {
					c = ents[i].c;
					adv = n;
					break;
				}
			}
			if (i == sizeof ents / sizeof ents[0])
				return false;
		}
		if (o + 1 >= outsz)
			return false;
		out[o++] = c;
		s += adv;
	}
	out[o] = '\0';
	return true;
}

/* Finds <tag>text</tag> in [s, e); sets [*ts, *te) to the text. */
static bool xml_find(const char *s, const char *e, const char *tag, const char **ts,
		     const char **te)
{
	char open[64], close[64];
	snprintf(open, sizeof open, "<%s>", tag);
	snprintf(close, sizeof close, "</%s>", tag);
	size_t on = strlen(open), cn = strlen(close);
	const char *o = memmem(s, (size_t)(e - s), open, on);
	if (!o)
		return false;
	const char *c = memmem(o + on, (size_t)(e - o - on), close, cn);
	if (!c)
		return false;
	*ts = o + on;
	*te = c;
	return true;
}

static bool xml_get(const char *s, const char *e, const char *tag, char *out, size_t outsz)
{
	const char *ts, *te;
	return xml_find(s, e, tag, &ts, &te) && xml_text(ts, te, out, outsz);
}

bool creds_parse_sts_xml(const char *body, size_t len, struct aws_credentials *out, char *err,
			 size_t errsz)
{
	*out = (struct aws_credentials){0};
	if (len > CREDS_DOC_MAX) {
		snprintf(err, errsz, "STS answer too large (%zu bytes)", len);
		return false;
	}
	const char *e = body + len, *cs, *ce;
	if (!xml_find(body, e, "Credentials", &cs, &ce)) {
		char code[128] = "", msg[160] = "";
		if (xml_get(body, e, "Code", code, sizeof code)) {
			xml_get(body, e, "Message", msg, sizeof msg);
			snprintf(err, errsz, "STS error %s: %s", code, msg);
		} else {
			snprintf(err, errsz, "STS answer without credentials");
		}
		return false;
	}
	char expiration[64];
	if (!xml_get(cs, ce, "AccessKeyId", out->access_key_id, sizeof out->access_key_id) ||
	    !xml_get(cs, ce, "SecretAccessKey", out->secret_access_key,
		     sizeof out->secret_access_key) ||
	    !xml_get(cs, ce, "SessionToken", out->session_token, sizeof out->session_token) ||
	    !xml_get(cs, ce, "Expiration", expiration, sizeof expiration) ||
	    !out->access_key_id[0] || !out->secret_access_key[0]) {
		*out = (struct aws_credentials){0};
		snprintf(err, errsz, "STS credentials incomplete or oversized");
		return false;
	}
	if (!creds_parse_iso8601(expiration, &out->expiration_ms)) {
		*out = (struct aws_credentials){0};
		snprintf(err, errsz, "STS credentials with a bad Expiration '%.40s'", expiration);
		return false;
	}
	return true;
}

static bool json_str(const cJSON *o, const char *name, char *out, size_t outsz, bool required)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!v)
		return !required;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= outsz)
		return false;
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return true;
}

bool creds_parse_json(const char *body, size_t len, struct aws_credentials *out, char *err,
		      size_t errsz)
{
	*out = (struct aws_credentials){0};
	if (len > CREDS_DOC_MAX) {
		snprintf(err, errsz, "credentials answer too large (%zu bytes)", len);
		return false;
	}
	cJSON *root = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		snprintf(err, errsz, "credentials answer is not a JSON object");
		return false;
	}
	char code[64] = "", expiration[64] = "";
	bool ok = true;
	if (json_str(root, "Code", code, sizeof code, false) && code[0] &&
	    strcmp(code, "Success") != 0) {
		char msg[128] = "";
		json_str(root, "Message", msg, sizeof msg, false);
		snprintf(err, errsz, "credentials endpoint answered Code %s: %s", code, msg);
		ok = false;
	} else if (!json_str(root, "AccessKeyId", out->access_key_id, sizeof out->access_key_id,
			     true) ||
		   !json_str(root, "SecretAccessKey", out->secret_access_key,
			     sizeof out->secret_access_key, true) ||
		   !json_str(root, "Token", out->session_token, sizeof out->session_token, false) ||
		   !json_str(root, "Expiration", expiration, sizeof expiration, false) ||
		   !out->access_key_id[0] || !out->secret_access_key[0]) {
		snprintf(err, errsz, "credentials answer incomplete or oversized");
		ok = false;
	} else if (expiration[0] && !creds_parse_iso8601(expiration, &out->expiration_ms)) {
		snprintf(err, errsz, "credentials answer with a bad Expiration '%.40s'",
			 expiration);
		ok = false;
	}
	cJSON_Delete(root);
	if (!ok)
		*out = (struct aws_credentials){0};
	return ok;
}

char *creds_read_file(const char *path, size_t max, size_t *len, char *err, size_t errsz)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errsz, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = malloc(max + 1);
	size_t n = buf ? fread(buf, 1, max + 1, f) : 0;
	bool bad = ferror(f);
	fclose(f);
	if (!buf || bad || n > max) {
		free(buf);
		snprintf(err, errsz, "%s: %s", path,
			 !buf  ? "out of memory"
			 : bad ? "read error"
			       : "file too large");
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

bool creds_expand_home(creds_getenv_fn getenv_fn, void *arg, const char *path, char *out,
		       size_t outsz)
{
	int n;
	if (path[0] == '~' && path[1] == '/') {
		const char *home = getenv_fn(arg, "HOME");
		if (!home || !*home)
			return false;
		n = snprintf(out, outsz, "%s%s", home, path + 1);
	} else {
		n = snprintf(out, outsz, "%s", path);
	}
	return n >= 0 && (size_t)n < outsz;
}

/* Reads the shared file named by env (default dflt); NULL text when it
 * does not exist. Returns false on other errors. */
static bool read_shared(creds_getenv_fn getenv_fn, void *arg, const char *env, const char *dflt,
			char **text, char *err, size_t errsz)
{
	*text = NULL;
	const char *p = getenv_fn(arg, env);
	char path[CREDS_PATH_MAX];
	if (!creds_expand_home(getenv_fn, arg, p && *p ? p : dflt, path, sizeof path)) {
		if (!(p && *p))
			return true; /* no HOME: no default file */
		snprintf(err, errsz, "%s: path too long", env);
		return false;
	}
	struct stat st;
	if (stat(path, &st) != 0 && errno == ENOENT)
		return true;
	*text = creds_read_file(path, CREDS_FILE_MAX, NULL, err, errsz);
	return *text != NULL;
}

struct profile_keys {
	const char *key;
	size_t off, size;
};

#define PK(k, field)                                                                               \
	{                                                                                          \
		k, offsetof(struct creds_profile, field),                                          \
			sizeof(((struct creds_profile *)0)->field)                                 \
	}
static const struct profile_keys pkeys[] = {
	PK("aws_access_key_id", keys.access_key_id),
	PK("aws_secret_access_key", keys.secret_access_key),
	PK("aws_session_token", keys.session_token),
	PK("web_identity_token_file", web_identity_token_file),
	PK("role_arn", role_arn),
	PK("role_session_name", role_session_name),
	PK("region", region),
	PK("source_profile", source_profile),
	PK("sso_session", sso_session),
	PK("sso_start_url", sso_start_url),
	PK("credential_process", credential_process),
	PK("duration_seconds", duration_seconds),
};

bool creds_profile_load(creds_getenv_fn getenv_fn, void *arg, const char *name,
			struct creds_profile *out, char *err, size_t errsz)
{
	*out = (struct creds_profile){0};
	if (!getenv_fn)
		getenv_fn = creds_default_getenv;
	if (!name) {
		name = getenv_fn(arg, "AWS_PROFILE");
		if (!name || !*name)
			name = "default";
	}
	char *cred = NULL, *conf = NULL;
	if (!read_shared(getenv_fn, arg, "AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials", &cred,
			 err, errsz) ||
	    !read_shared(getenv_fn, arg, "AWS_CONFIG_FILE", "~/.aws/config", &conf, err, errsz)) {
		free(cred);
		return false;
	}
	char conf_section[CREDS_NAME_MAX + 16];
	snprintf(conf_section, sizeof conf_section, "profile %s", name);
	/* the config file names the default profile [default] (or [profile default]) */
	const char *conf_sections[2] = {conf_section,
					strcmp(name, "default") == 0 ? "default" : NULL};
	out->exists = creds_ini_has_section(cred, name);
	for (size_t s = 0; s < 2; s++)
		out->exists |= conf_sections[s] && creds_ini_has_section(conf, conf_sections[s]);
	/* credentials file first: it wins for every key it has */
	for (size_t i = 0; i < sizeof pkeys / sizeof pkeys[0]; i++) {
		char *field = (char *)out + pkeys[i].off;
		if (creds_ini_get(cred, name, pkeys[i].key, field, pkeys[i].size))
			continue;
		for (size_t s = 0; s < 2; s++)
			if (conf_sections[s] && creds_ini_get(conf, conf_sections[s], pkeys[i].key,
							      field, pkeys[i].size))
				break;
	}
	free(cred);
	free(conf);
	bool has_id = out->keys.access_key_id[0], has_secret = out->keys.secret_access_key[0];
	if (has_id != has_secret) {
		snprintf(err, errsz, "profile %s has %s but no %s", name,
			 has_id ? "aws_access_key_id" : "aws_secret_access_key",
			 has_id ? "aws_secret_access_key" : "aws_access_key_id");
		*out = (struct creds_profile){0};
		return false;
	}
	out->has_keys = has_id && has_secret;
	return true;
}
