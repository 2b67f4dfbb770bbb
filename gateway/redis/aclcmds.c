/*
 * redis/aclcmds: the ACL command as Redis 7 answers it — WHOAMI, LIST
 * (rules with password digests, never a password), USERS, CAT [category],
 * LOAD (re-reads --aclfile: all or nothing), HELP — over the process's
 * users (gateway/conn/auth.h). Not here: the rules themselves (acl.c),
 * the check of each command (commands.c's dispatch).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/conn/auth.h"
#include "gateway/conn/server.h"
#include "gateway/obs/log.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/session.h"

static void c_whoami(struct cmd_call *c)
{
	const char *u = c->sess->c.user;
	resp_add_cstr(c->out, u[0] ? u : "default");
}

/* Users sorted by name, as Redis lists them. */
static int by_name(const void *a, const void *b)
{
	return strcmp(acl_user_name(*(const struct acl_user *const *)a),
		      acl_user_name(*(const struct acl_user *const *)b));
}

static const struct acl_user **sorted_users(const struct acl *acl, unsigned *n)
{
	*n = acl_count(acl);
	const struct acl_user **v = calloc(*n ? *n : 1, sizeof(*v));
	if (v == NULL)
		return NULL;
	for (unsigned i = 0; i < *n; i++)
		v[i] = acl_user_at(acl, i);
	qsort(v, *n, sizeof(*v), by_name);
	return v;
}

static const struct acl *users(struct cmd_call *c)
{
	const struct auth *a = auth_of(&c->sess->c);
	return a != NULL ? auth_acl(a) : NULL;
}

static void list(struct cmd_call *c, bool rules)
{
	const struct acl *acl = users(c);
	unsigned n = 0;
	const struct acl_user **v = acl ? sorted_users(acl, &n) : NULL;
	if (acl != NULL && v == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	resp_add_array(c->out, n);
	for (unsigned i = 0; i < n; i++) {
		if (!rules) {
			resp_add_cstr(c->out, acl_user_name(v[i]));
			continue;
		}
		struct buf line;
		buf_init(&line, 0);
		acl_describe(v[i], &line);
		resp_add_bulk(c->out, line.buf ? line.buf : "", line.len);
		buf_free(&line);
	}
	free(v);
}

static void c_list(struct cmd_call *c)
{
	list(c, true);
}

static void c_users(struct cmd_call *c)
{
	list(c, false);
}

struct cat_walk {
	uint32_t cat;
	struct buf names; /* NUL-separated */
	size_t n;
};

static void add_if(const struct cmd_def *d, void *arg)
{
	struct cat_walk *w = arg;
	if (d->acl & w->cat) {
		buf_printf(&w->names, "%s", d->name);
		buf_raw(&w->names, "", 1);
		w->n++;
	}
	for (const struct cmd_def *sub = d->subs; sub && sub->name; sub++)
		if ((sub->acl & w->cat) && !(d->acl & w->cat)) {
			buf_printf(&w->names, "%s|%s", d->name, sub->name);
			buf_raw(&w->names, "", 1);
			w->n++;
		}
}

static void c_cat(struct cmd_call *c)
{
	if (c->argc > 3) {
		resp_add_errorf(c->out, "ERR wrong number of arguments for 'acl|cat' command");
		return;
	}
	if (c->argc == 2) {
		size_t n = 0;
		while (acl_cats[n].name)
			n++;
		resp_add_array(c->out, n);
		for (size_t i = 0; i < n; i++)
			resp_add_cstr(c->out, acl_cats[i].name);
		return;
	}
	struct cat_walk w = {.cat = acl_cat_lookup(c->argv[2].p, c->argv[2].len)};
	if (w.cat == 0) {
		resp_add_errorf(c->out, "ERR Unknown category '%.128s'", c->argv[2].p);
		return;
	}
	buf_init(&w.names, 0);
	cmd_foreach(sess_fe(c->sess)->cmds, add_if, &w);
	if (buf_failed(&w.names)) {
		buf_free(&w.names);
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	resp_add_array(c->out, w.n);
	for (size_t off = 0, i = 0; i < w.n; i++) {
		const char *name = w.names.buf + off;
		resp_add_cstr(c->out, name);
		off += strlen(name) + 1;
	}
	buf_free(&w.names);
}

static void c_load(struct cmd_call *c)
{
	struct auth *a = auth_of(&c->sess->c);
	char err[600];
	if (a == NULL || !auth_has_file(a)) {
		resp_add_errorf(c->out, "ERR This Redis instance is not configured to use an ACL "
					"file (leasegate: --aclfile).");
		return;
	}
	if (!auth_reload(a, c->sess->c.srv, err, sizeof(err))) {
		log_msg(LOG_LVL_WARN, "ACL LOAD refused: %s", err);
		resp_add_errorf(c->out,
				"ERR %s. WARNING: ACL errors detected, no change to the "
				"previously active ACL rules was performed",
				err);
		return;
	}
	resp_add_simple(c->out, "OK", 2);
}

static const char *const acl_help[] = {
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Print this help.",
};

static void c_help(struct cmd_call *c)
{
	size_t n = sizeof(acl_help) / sizeof(acl_help[0]);
	resp_add_array(c->out, n);
	for (size_t i = 0; i < n; i++)
		resp_add_simple(c->out, acl_help[i], strlen(acl_help[i]));
}

#define ADMIN (ACL_ADMIN | ACL_SLOW | ACL_DANGEROUS)

static const struct cmd_def acl_subs[] = {
	{.name = "whoami",
	 .fn = c_whoami,
	 .arity = 2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW,
	 .summary = "Returns the user this connection is authenticated as.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = "list",
	 .fn = c_list,
	 .arity = 2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ADMIN,
	 .summary = "Lists the users and their rules (password digests, never passwords).",
	 .group = "server",
	 .complexity = "O(N) users",
	 .since = CMD_SINCE},
	{.name = "users",
	 .fn = c_users,
	 .arity = 2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ADMIN,
	 .summary = "Lists the user names.",
	 .group = "server",
	 .complexity = "O(N) users",
	 .since = CMD_SINCE},
	{.name = "cat",
	 .fn = c_cat,
	 .arity = -2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW,
	 .summary = "Lists the ACL categories, or the commands of one.",
	 .group = "server",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"category", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL})},
	{.name = "load",
	 .fn = c_load,
	 .arity = 2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ADMIN,
	 .summary = "Reloads the users from --aclfile (all or nothing).",
	 .group = "server",
	 .complexity = "O(N) users",
	 .since = CMD_SINCE},
	{.name = "help",
	 .fn = c_help,
	 .arity = 2,
	 .acl = ACL_SLOW,
	 .summary = "Lists the ACL subcommands.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = NULL},
};

static const struct cmd_def acl_cmd[] = {
	{.name = "acl",
	 .arity = -2,
	 .flags = CMD_STALE,
	 .subs = acl_subs,
	 .acl = ADMIN,
	 .summary = "A container for the ACL commands.",
	 .group = "server",
	 .since = CMD_SINCE},
};

int cmd_add_acl(struct cmd_table *t)
{
	return cmd_table_add(t, acl_cmd, 1, NULL);
}
