/*
 * help: `leasegate help`, from the command table and its documentation
 * (see help.h).
 */
#include "gateway/help.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gateway/conn/acl.h"
#include "gateway/redis/cmd_docs.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/leases.h"

/* Every command the gateway serves, in a table of its own: the same
 * registrations main.c makes, with no lease service behind them (nothing
 * here calls a handler). */
static struct cmd_table *all_commands(void)
{
	struct cmd_table *t = cmd_table_new();
	if (t == NULL)
		return NULL;
	if (cmd_add_builtins(t) != 0 || rl_lockcmds_register(NULL, t) != 0 ||
	    rl_leadercmds_register(NULL, t) != 0 || rl_compatcmds_register(NULL, t) != 0 ||
	    rl_scriptcmds_register(NULL, t) != 0 || rl_fencecmds_register(NULL, t) != 0 ||
	    rl_admincmds_register(NULL, t) != 0) {
		cmd_table_free(t);
		return NULL;
	}
	return t;
}

/* What COMMAND DOCS says of d (sub of parent, or a command when parent is
 * NULL): its summary, group and argument spec ("name:key ?WAIT:integer",
 * cmd_docs.h's syntax). The one place that reads the documentation. */
static void doc_of(const struct cmd_def *d, const char *parent, const char **summary,
		   const char **group, const char **args)
{
	const struct cmd_doc *doc =
		parent ? cmd_doc_find(parent, d->name) : cmd_doc_find(d->name, NULL);
	*summary = doc ? doc->summary : "";
	*group = doc ? doc->group : "server";
	*args = doc ? doc->args : "";
}

/* Appends s to out (size n), truncating. */
static void add(char *out, size_t n, const char *s, size_t len)
{
	size_t at = strlen(out);
	if (at + 1 >= n)
		return;
	if (len > n - at - 1)
		len = n - at - 1;
	memcpy(out + at, s, len);
	out[at + len] = '\0';
}

/* One argument word of the spec as syntax: "name:key" -> "name",
 * "?WAIT:integer" -> "[WAIT integer]", "?DETACH" -> "[DETACH]",
 * "*key:key" -> "[key ...]", or "key [key ...]" when required. */
static void add_arg(char *out, size_t n, const char *w, size_t len, bool required)
{
	bool optional = w[0] == '?', multiple = w[0] == '*';
	if (optional || multiple) {
		w++;
		len--;
	}
	const char *colon = memchr(w, ':', len);
	size_t nlen = colon ? (size_t)(colon - w) : len;
	bool token = nlen > 0 && w[0] >= 'A' && w[0] <= 'Z';
	char one[160];
	if (token && colon)
		snprintf(one, sizeof(one), "%.*s %.*s", (int)nlen, w, (int)(len - nlen - 1),
			 colon + 1);
	else
		snprintf(one, sizeof(one), "%.*s", (int)nlen, w);
	char text[400];
	if (multiple)
		snprintf(text, sizeof(text), required ? " %s [%s ...]" : " [%s ...]", one, one);
	else
		snprintf(text, sizeof(text), optional ? " [%s]" : " %s", one);
	add(out, n, text, strlen(text));
}

/* The syntax line: the name, then the arguments of the spec. A repeated
 * argument is required when the arity asks for more arguments than the
 * others give. */
static void syntax(char *out, size_t n, const char *name, int arity, int words_in_name,
		   const char *args)
{
	snprintf(out, n, "%s", name);
	int given = 0;
	for (const char *p = args; *p;) {
		p += strspn(p, " ");
		size_t len = strcspn(p, " ");
		given += len > 0 && p[0] != '?' && p[0] != '*';
		p += len;
	}
	int min = (arity < 0 ? -arity : arity) - words_in_name;
	for (const char *p = args; *p;) {
		p += strspn(p, " ");
		size_t len = strcspn(p, " ");
		if (len == 0)
			break;
		add_arg(out, n, p, len, min > given);
		p += len;
	}
}

static void upper(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 32);
}

static void fill(struct help_entry *e, const struct cmd_def *d, const char *parent)
{
	const char *args;
	snprintf(e->name, sizeof(e->name), "%s%s%s", parent ? parent : "", parent ? " " : "",
		 d->name);
	upper(e->name);
	doc_of(d, parent, &e->summary, &e->group, &args);
	syntax(e->syntax, sizeof(e->syntax), e->name, d->arity, parent ? 2 : 1, args);
	e->acl[0] = '\0';
	for (const struct acl_cat_def *c = acl_cats; c->name; c++)
		if (d->acl & c->bit) {
			char w[80];
			snprintf(w, sizeof(w), "%s@%s", e->acl[0] ? " " : "", c->name);
			add(e->acl, sizeof(e->acl), w, strlen(w));
		}
}

struct walk {
	void (*fn)(const struct help_entry *e, void *arg);
	void *arg;
};

static void each(const struct cmd_def *d, void *arg)
{
	struct walk *w = arg;
	struct help_entry e;
	fill(&e, d, NULL);
	w->fn(&e, w->arg);
	for (const struct cmd_def *s = d->subs; s && s->name; s++) {
		fill(&e, s, d->name);
		w->fn(&e, w->arg);
	}
}

int help_foreach(void (*fn)(const struct help_entry *e, void *arg), void *arg)
{
	struct cmd_table *t = all_commands();
	if (t == NULL)
		return -1;
	struct walk w = {fn, arg};
	cmd_foreach(t, each, &w);
	cmd_table_free(t);
	return 0;
}

static void print_short(const struct help_entry *e, void *arg)
{
	printf("  %s\n      %s\n", e->syntax, e->summary);
}

/* The entry named by want ("LOCK.ACQUIRE", "CLIENT SETNAME"), any case. */
struct find {
	const char *want;
	bool found;
};

static void print_one(const struct help_entry *e, void *arg)
{
	struct find *f = arg;
	if (strcasecmp(e->name, f->want) != 0)
		return;
	f->found = true;
	printf("\n  %s\n  summary: %s\n  group: %s\n  ACL categories: %s\n\n", e->syntax,
	       e->summary, e->group, e->acl);
}

int help_main(int argc, char **argv)
{
	if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: leasegate help [COMMAND [SUBCOMMAND]]\n");
		return 64;
	}
	if (argc == 1) {
		printf("The Redis commands of leasegate (`leasegate help COMMAND` for one;\n"
		       "the lease rules: man leasegate, README):\n\n");
		return help_foreach(print_short, NULL) == 0 ? 0 : 1;
	}
	char want[160];
	snprintf(want, sizeof(want), "%s%s%s", argv[1], argc == 3 ? " " : "",
		 argc == 3 ? argv[2] : "");
	struct find f = {want, false};
	if (help_foreach(print_one, &f) != 0) {
		fprintf(stderr, "leasegate help: out of memory\n");
		return 1;
	}
	if (!f.found) {
		fprintf(stderr,
			"leasegate help: no command '%s' in leasegate (`leasegate help` lists "
			"them)\n",
			want);
		return 1;
	}
	return 0;
}
