/*
 * acl_check: the one ACL check point of both front-ends (acl_check), Redis's
 * globs, and a user's rules as ACL LIST shows them (see acl.h).
 */
#include <string.h>

#include "gateway/conn/acl.h"
#include "gateway/conn/acl_int.h"

/* --- the check point --- */

/* One pattern element at p (n bytes left) against c; *adv: its length. */
static bool match_one(const char *p, size_t n, char c, size_t *adv)
{
	if (p[0] == '?') {
		*adv = 1;
		return true;
	}
	if (p[0] == '\\' && n >= 2) {
		*adv = 2;
		return p[1] == c;
	}
	if (p[0] != '[') {
		*adv = 1;
		return p[0] == c;
	}
	size_t i = 1;
	bool neg = i < n && p[i] == '^', hit = false;
	if (neg)
		i++;
	for (; i < n && p[i] != ']'; i++) {
		if (p[i] == '\\' && i + 1 < n) {
			i++;
			hit |= p[i] == c;
		} else if (i + 2 < n && p[i + 1] == '-' && p[i + 2] != ']') {
			char lo = p[i], hi = p[i + 2];
			if (lo > hi) {
				char t = lo;
				lo = hi;
				hi = t;
			}
			hit |= c >= lo && c <= hi;
			i += 2;
		} else {
			hit |= p[i] == c;
		}
	}
	*adv = i < n ? i + 1 : n; /* an open class runs to the pattern's end */
	return hit != neg;
}

bool acl_glob(const char *p, size_t pl, const char *s, size_t sl)
{
	size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;
	while (si < sl) {
		if (pi < pl && p[pi] == '*') {
			while (pi < pl && p[pi] == '*')
				pi++;
			if (pi == pl)
				return true;
			star_p = pi;
			star_s = si;
			continue;
		}
		size_t adv;
		if (pi < pl && match_one(p + pi, pl - pi, s[si], &adv)) {
			pi += adv;
			si++;
			continue;
		}
		if (star_p == (size_t)-1)
			return false;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < pl && p[pi] == '*')
		pi++;
	return pi == pl;
}

static bool rule_names(const struct acl_rule *r, const struct acl_req *q)
{
	if (r->cats != 0)
		return (r->cats & q->cats) != 0;
	size_t n = strlen(r->name);
	return strncmp(q->cmd, r->name, n) == 0 && (q->cmd[n] == '\0' || q->cmd[n] == '|');
}

static bool key_ok(const struct acl_user *u, const char *k, size_t len, unsigned access)
{
	for (unsigned i = 0; i < u->nkeys; i++)
		if ((u->keys[i].access & access) == access &&
		    acl_glob(u->keys[i].pat, u->keys[i].len, k, len))
			return true;
	return false;
}

bool acl_allows_all(const struct acl_user *u)
{
	return u != NULL && u->all;
}

bool acl_may_read(const struct acl_user *u, const char *name, size_t len)
{
	return u != NULL && u->on && key_ok(u, name, len, ACL_KEY_READ);
}

enum acl_verdict acl_check(const struct acl_user *u, const struct acl_req *r, unsigned *bad_key)
{
	bool allow = false;
	if (u != NULL && u->all)
		return ACL_OK;
	if (u == NULL || !u->on)
		return ACL_DENIED_CMD;
	for (unsigned i = 0; i < u->nrules; i++)
		if (rule_names(&u->rules[i], r))
			allow = u->rules[i].allow;
	if (!allow)
		return ACL_DENIED_CMD;
	unsigned access =
		(r->cats & ACL_WRITE ? ACL_KEY_WRITE : 0) | (r->cats & ACL_READ ? ACL_KEY_READ : 0);
	if (access == 0)
		access = ACL_KEY_READ | ACL_KEY_WRITE;
	for (unsigned k = 0; k < r->nkeys; k++)
		if (!key_ok(u, r->keys[k], r->key_lens[k], access)) {
			if (bad_key != NULL)
				*bad_key = k;
			return ACL_DENIED_KEY;
		}
	return ACL_OK;
}

/* --- ACL LIST --- */

static const char *cat_name(uint32_t bit)
{
	for (const struct acl_cat_def *d = acl_cats; d->name; d++)
		if (d->bit == bit)
			return d->name;
	return "?";
}

/* " " + prefix + text, "double quoted" (\" and \\) when text holds a blank
 * or a quote, so that the line parses back to the same rule. */
static void put_rule(struct buf *out, const char *prefix, const char *text)
{
	if (strpbrk(text, " \t\"") == NULL) {
		buf_printf(out, " %s%s", prefix, text);
		return;
	}
	buf_printf(out, " \"%s", prefix);
	for (const char *p = text; *p; p++)
		buf_printf(out, "%s%c", *p == '"' || *p == '\\' ? "\\" : "", *p);
	buf_printf(out, "\"");
}

void acl_describe(const struct acl_user *u, struct buf *out)
{
	buf_printf(out, "user %s %s", u->name, u->on ? "on" : "off");
	if (u->nopass)
		buf_printf(out, " nopass");
	for (unsigned i = 0; i < u->npass; i++) {
		buf_printf(out, " #");
		for (int j = 0; j < 32; j++)
			buf_printf(out, "%02x", u->pass[i][j]);
	}
	for (unsigned i = 0; i < u->nkeys; i++) {
		const struct acl_key *k = &u->keys[i];
		const char *pfx = k->access == ACL_KEY_READ    ? "%R~"
				  : k->access == ACL_KEY_WRITE ? "%W~"
							       : "~";
		put_rule(out, pfx, k->pat);
	}
	if (u->nrules == 0 || u->rules[0].cats != ALL_CATS)
		buf_printf(out, " -@all");
	for (unsigned i = 0; i < u->nrules; i++) {
		const struct acl_rule *r = &u->rules[i];
		char sign = r->allow ? '+' : '-';
		if (r->cats == ALL_CATS)
			buf_printf(out, " %c@all", sign);
		else if (r->cats != 0)
			buf_printf(out, " %c@%s", sign, cat_name(r->cats));
		else
			put_rule(out, r->allow ? "+" : "-", r->name);
	}
}
