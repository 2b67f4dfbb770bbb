/*
 * help: `leasegate help`, from the command table and its documentation
 * (see help.h).
 */
#include "gateway/doc/help.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gateway/conn/acl.h"
#include "gateway/redis/cmd_docs.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/leases.h"

/* Every command the gateway serves, in a table of its own: the same
 * registrations the gateway makes (builtins, rl_register_commands), no lease
 * service behind them (nothing here calls a handler). */
static struct cmd_table *all_commands(void)
{
	struct cmd_table *t = cmd_table_new();
	if (t == NULL)
		return NULL;
	if (cmd_add_builtins(t) != 0 || rl_register_commands(NULL, t) != 0) {
		cmd_table_free(t);
		return NULL;
	}
	return t;
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

static void upper(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 32);
}

static void fill(struct help_entry *e, const struct cmd_def *d, const struct cmd_def *parent)
{
	snprintf(e->name, sizeof(e->name), "%s%s%s", parent ? parent->name : "", parent ? " " : "",
		 d->name);
	upper(e->name);
	e->summary = d->summary ? d->summary : "";
	e->group = d->group ? d->group : "server";
	cmd_doc_syntax(d, parent, e->syntax, sizeof(e->syntax));
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
		fill(&e, s, d);
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
		       "the lease rules: man leasegate, docs/lease-rules.md):\n\n");
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
