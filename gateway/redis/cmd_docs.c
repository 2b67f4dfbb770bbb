/*
 * cmd_docs: COMMAND INFO / DOCS's shapes and the command reference, from
 * the command rows themselves (cmd_docs.h).
 */
#include "gateway/redis/cmd_docs.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gateway/conn/acl.h"

/* COMMAND INFO's flags in Redis's order, each from an ACL category or a
 * flag of the row (struct cmd_def says why). */
static const struct flag_word {
	const char *word;
	uint32_t acl;  /* the word when the row has this category */
	unsigned flag; /* or this flag (enum cmd_flags) */
} flag_words[] = {
	{"write", ACL_WRITE, 0},     {"readonly", ACL_READ, 0},	    {"denyoom", 0, CMD_DENYOOM},
	{"admin", ACL_ADMIN, 0},     {"noscript", 0, CMD_NOSCRIPT}, {"blocking", ACL_BLOCKING, 0},
	{"loading", 0, CMD_LOADING}, {"stale", 0, CMD_STALE},	    {"fast", ACL_FAST, 0},
	{"no_auth", 0, CMD_NOAUTH},
};
#define N_FLAG_WORDS (sizeof(flag_words) / sizeof(flag_words[0]))

static const char *const arg_types[] = {
	[CMD_ARG_STRING] = "string",   [CMD_ARG_INTEGER] = "integer",	    [CMD_ARG_KEY] = "key",
	[CMD_ARG_PATTERN] = "pattern", [CMD_ARG_PURE_TOKEN] = "pure-token",
};

size_t cmd_doc_flags(const struct cmd_def *d, const struct cmd_def *parent, const char **words,
		     size_t max)
{
	unsigned flags = d->flags | (parent ? parent->flags : 0); /* as dispatch ORs them */
	size_t n = 0;
	for (size_t i = 0; i < N_FLAG_WORDS && n < max; i++)
		if ((d->acl & flag_words[i].acl) || (flags & flag_words[i].flag))
			words[n++] = flag_words[i].word;
	if (d->key_last == CMD_KEYS_NUMKEYS && n < max)
		words[n++] = "movablekeys";
	return n;
}

static size_t nsubs(const struct cmd_def *d)
{
	size_t n = 0;
	for (const struct cmd_def *s = d->subs; s && s->name; s++)
		n++;
	return n;
}

static size_t nargs(const struct cmd_def *d)
{
	size_t n = 0;
	for (const struct cmd_arg *a = d->args; a && a->name; a++)
		n++;
	return n;
}

static size_t ncats(uint32_t acl)
{
	size_t n = 0;
	for (const struct acl_cat_def *c = acl_cats; c->name; c++)
		n += (acl & c->bit) != 0;
	return n;
}

/* "parent|name" or "name" into buf. */
static void full_name(const struct cmd_def *d, const struct cmd_def *parent, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", parent ? parent->name : "", parent ? "|" : "", d->name);
}

/* Appends s to buf (len bytes, used: *at), cut at the end. */
static void append(char *buf, size_t len, size_t *at, const char *s)
{
	int w = snprintf(buf + *at, len - *at, "%s", s);
	if (w > 0)
		*at += (size_t)w < len - *at ? (size_t)w : len - *at - 1;
}

static void append_upper(char *buf, size_t len, size_t *at, const char *s)
{
	for (; *s && *at + 1 < len; s++)
		buf[(*at)++] = (char)toupper((unsigned char)*s);
	buf[*at] = '\0';
}

/* One argument as a syntax shows it: "WAIT timeout-ms", "DETACH", "name". */
static void append_arg(char *buf, size_t len, size_t *at, const struct cmd_arg *a)
{
	if (a->token)
		append(buf, len, at, a->token);
	if (a->token && a->type != CMD_ARG_PURE_TOKEN)
		append(buf, len, at, " ");
	if (a->type != CMD_ARG_PURE_TOKEN)
		append(buf, len, at, a->name);
}

void cmd_doc_syntax(const struct cmd_def *d, const struct cmd_def *parent, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	if (parent) {
		append_upper(buf, len, &at, parent->name);
		append(buf, len, &at, " ");
	}
	append_upper(buf, len, &at, d->name);
	for (const struct cmd_arg *a = d->args; a && a->name; a++) {
		bool opt = a->flags & CMD_ARG_OPTIONAL, many = a->flags & CMD_ARG_MULTIPLE;
		append(buf, len, &at, opt ? " [" : " ");
		append_arg(buf, len, &at, a);
		if (many) {
			append(buf, len, &at, " [");
			append_arg(buf, len, &at, a);
			append(buf, len, &at, " ...]");
		}
		if (opt)
			append(buf, len, &at, "]");
	}
}

/* One COMMAND INFO entry: name, arity, flags, first key, last key, step,
 * ACL categories, tips, key specs, subcommands. The lock name is the key. */
static void info_entry(struct buf *out, enum resp_proto proto, const struct cmd_def *d,
		       const struct cmd_def *parent)
{
	char name[160];
	const char *flags[N_FLAG_WORDS + 1];
	full_name(d, parent, name, sizeof(name));
	resp_add_array(out, 10);
	resp_add_cstr(out, name);
	resp_add_int(out, d->arity);
	size_t nflags = cmd_doc_flags(d, parent, flags, N_FLAG_WORDS + 1);
	resp_add_set(out, proto, nflags);
	for (size_t i = 0; i < nflags; i++)
		resp_add_simple(out, flags[i], strlen(flags[i]));
	bool movable = d->key_last == CMD_KEYS_NUMKEYS;
	int first = movable ? 0 : d->key;
	int last = movable || d->key == 0 ? 0 : d->key_last == CMD_KEYS_REST ? -1 : d->key;
	resp_add_int(out, first);
	resp_add_int(out, last);
	resp_add_int(out, first ? (d->key_step > 1 ? d->key_step : 1) : 0);
	resp_add_set(out, proto, ncats(d->acl));
	for (const struct acl_cat_def *c = acl_cats; c->name; c++)
		if (d->acl & c->bit) {
			char w[64];
			snprintf(w, sizeof(w), "@%s", c->name);
			resp_add_simple(out, w, strlen(w));
		}
	resp_add_array(out, 0); /* tips */
	resp_add_array(out, 0); /* key specs: first/last/step say it */
	resp_add_array(out, nsubs(d));
	for (const struct cmd_def *s = d->subs; s && s->name; s++)
		info_entry(out, proto, s, d);
}

void cmd_doc_info(struct buf *out, enum resp_proto proto, const struct cmd_def *d)
{
	info_entry(out, proto, d, NULL);
}

/* One argument's map: name, type, token, flags. */
static void add_argument(struct buf *out, enum resp_proto proto, const struct cmd_arg *a)
{
	size_t nflags = ((a->flags & CMD_ARG_OPTIONAL) != 0) + ((a->flags & CMD_ARG_MULTIPLE) != 0);
	resp_add_map(out, proto, 2 + (a->token ? 1 : 0) + (nflags ? 1 : 0));
	resp_add_cstr(out, "name");
	resp_add_cstr(out, a->name);
	resp_add_cstr(out, "type");
	resp_add_cstr(out, arg_types[a->type]);
	if (a->token) {
		resp_add_cstr(out, "token");
		resp_add_cstr(out, a->token);
	}
	if (nflags) {
		resp_add_cstr(out, "flags");
		resp_add_set(out, proto, nflags);
		if (a->flags & CMD_ARG_OPTIONAL)
			resp_add_simple(out, "optional", 8);
		if (a->flags & CMD_ARG_MULTIPLE)
			resp_add_simple(out, "multiple", 8);
	}
}

static void docs_map(struct buf *out, enum resp_proto proto, const struct cmd_def *d)
{
	size_t subs = nsubs(d), n = nargs(d);
	resp_add_map(out, proto, 4 + (n ? 1 : 0) + (subs ? 1 : 0));
	resp_add_cstr(out, "summary");
	resp_add_cstr(out, d->summary ? d->summary : "");
	resp_add_cstr(out, "since");
	resp_add_cstr(out, d->since ? d->since : "");
	resp_add_cstr(out, "group");
	resp_add_cstr(out, d->group ? d->group : "server");
	resp_add_cstr(out, "complexity");
	resp_add_cstr(out, d->complexity ? d->complexity : "O(1)");
	if (n) {
		resp_add_cstr(out, "arguments");
		resp_add_array(out, n);
		for (const struct cmd_arg *a = d->args; a->name; a++)
			add_argument(out, proto, a);
	}
	if (subs) {
		resp_add_cstr(out, "subcommands");
		resp_add_map(out, proto, subs);
		for (const struct cmd_def *s = d->subs; s->name; s++) {
			char name[160];
			full_name(s, d, name, sizeof(name));
			resp_add_cstr(out, name);
			docs_map(out, proto, s);
		}
	}
}

void cmd_doc_docs(struct buf *out, enum resp_proto proto, const struct cmd_def *d)
{
	resp_add_cstr(out, d->name);
	docs_map(out, proto, d);
}

/* ---- the reference (make docs) ---- */

/* One command's (or subcommand's) section. */
static void ref_entry(FILE *f, const struct cmd_def *d, const struct cmd_def *parent)
{
	char syntax[512];
	const char *flags[N_FLAG_WORDS + 1];
	cmd_doc_syntax(d, parent, syntax, sizeof(syntax));
	fprintf(f, "%s `%s`\n\n", parent ? "###" : "##", syntax);
	fprintf(f, "%s\n\n", d->summary ? d->summary : "");
	fprintf(f, "- ACL categories:");
	for (const struct acl_cat_def *c = acl_cats; c->name; c++)
		if (d->acl & c->bit)
			fprintf(f, " `@%s`", c->name);
	size_t nflags = cmd_doc_flags(d, parent, flags, N_FLAG_WORDS + 1);
	fprintf(f, "\n- flags:%s", nflags ? "" : " none");
	for (size_t i = 0; i < nflags; i++)
		fprintf(f, " `%s`", flags[i]);
	fprintf(f, "\n- complexity: %s; group: %s; since %s\n\n",
		d->complexity ? d->complexity : "O(1)", d->group ? d->group : "server",
		d->since ? d->since : "");
	for (const struct cmd_def *s = d->subs; s && s->name; s++)
		ref_entry(f, s, d);
}

static void ref_command(const struct cmd_def *d, void *arg)
{
	ref_entry(arg, d, NULL);
}

static void ref_index_row(FILE *f, const struct cmd_def *d, const struct cmd_def *parent)
{
	char syntax[512];
	cmd_doc_syntax(d, parent, syntax, sizeof(syntax));
	fprintf(f, "| `%s` | %s |\n", syntax, d->summary ? d->summary : "");
}

static void ref_index(const struct cmd_def *d, void *arg)
{
	ref_index_row(arg, d, NULL);
	for (const struct cmd_def *s = d->subs; s && s->name; s++)
		ref_index_row(arg, s, d);
}

void cmd_doc_reference(FILE *f, const struct cmd_table *t)
{
	fprintf(f, "# Redis commands\n\n"
		   "<!-- Generated by `make docs` from the command rows (gateway/redis/*cmds.c,\n"
		   "     cmd_builtin.c): edit those, not this page. -->\n\n"
		   "Every command leasegate answers on its Redis port, as `COMMAND DOCS` and\n"
		   "`COMMAND INFO` describe them. Flags as Redis names them: `write`, `readonly`,\n"
		   "`admin`, `fast`, `blocking` follow the ACL categories; `loading`: answered\n"
		   "while the lock store is not open yet (others answer `-LOADING`); `no_auth`:\n"
		   "answered before `AUTH`, whatever the ACL says.\n\n"
		   "| command | summary |\n|---|---|\n");
	cmd_foreach(t, ref_index, f);
	fprintf(f, "\n");
	cmd_foreach(t, ref_command, f);
}
