/*
 * cmd_builtin: the connection commands, answered as Redis 7.0 answers them
 * so that unmodified clients connect, plus the INFO sections of the
 * gateway itself (server, clients, persistence).
 *
 * Not here: lock and leader commands (added by the command layer with
 * cmd_table_add), ACL (aclcmds.c), the key space (leasegate has none: CONFIG and COMMAND
 * answer harmlessly).
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/server.h"
#include "gateway/conn/loop.h"
#include "gateway/redis/cmd_docs.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/session.h"

/* The Redis version leasegate answers as (HELLO, INFO). */
#define COMPAT_VERSION "7.0.0"

static void ok(struct cmd_call *c)
{
	resp_add_simple(c->out, "OK", 2);
}

static bool arg_is(const struct resp_arg *a, const char *s)
{
	return strcasecmp(a->p, s) == 0 && strlen(s) == a->len;
}

/* Strict decimal, as Redis's string2ll: no spaces, no '+', no leading 0. */
static bool parse_int(const struct resp_arg *a, long long *v)
{
	if (a->len == 0 || a->len > 20 || (a->len > 1 && a->p[0] == '0') ||
	    (a->p[0] != '-' && (a->p[0] < '0' || a->p[0] > '9')))
		return false;
	char *end;
	errno = 0;
	*v = strtoll(a->p, &end, 10);
	return errno == 0 && end == a->p + a->len && !(a->p[0] == '-' && *v == 0);
}

/* ---- PING, ECHO, SELECT, QUIT, RESET ---- */

static void c_ping(struct cmd_call *c)
{
	if (c->argc > 2) {
		resp_add_errorf(c->out, "ERR wrong number of arguments for 'ping' command");
		return;
	}
	if (c->sess->subscriptions > 0 && c->proto == RESP2) {
		/* a subscribed RESP2 connection: Redis answers as a message */
		resp_add_array(c->out, 2);
		resp_add_bulk(c->out, "pong", 4);
		resp_add_bulk(c->out, c->argc == 2 ? c->argv[1].p : "",
			      c->argc == 2 ? c->argv[1].len : 0);
	} else if (c->argc == 2) {
		resp_add_bulk(c->out, c->argv[1].p, c->argv[1].len);
	} else {
		resp_add_simple(c->out, "PONG", 4);
	}
}

static void c_echo(struct cmd_call *c)
{
	resp_add_bulk(c->out, c->argv[1].p, c->argv[1].len);
}

/* ROLE, as a Redis primary without replicas answers it (see INFO
 * replication). */
static void c_role(struct cmd_call *c)
{
	resp_add_array(c->out, 3);
	resp_add_cstr(c->out, "master");
	resp_add_int(c->out, 0);
	resp_add_array(c->out, 0);
}

static void c_select(struct cmd_call *c)
{
	long long db;
	if (!parse_int(&c->argv[1], &db))
		resp_add_errorf(c->out, "ERR value is not an integer or out of range");
	else if (db != 0)
		resp_add_errorf(c->out, "ERR DB index is out of range");
	else
		ok(c);
}

static void c_quit(struct cmd_call *c)
{
	ok(c);
	sess_close(c->sess, "QUIT");
}

static void c_reset(struct cmd_call *c)
{
	struct sess *s = c->sess;
	const struct sess_hooks *h = &sess_fe(s)->hooks;
	bool answered = h->on_reset != NULL && h->on_reset(s, h->arg);
	s->multi = s->multi_dirty = false; /* the hook dropped the queue */
	s->proto = RESP2;
	free(s->name);
	s->name = NULL;
	auth_start(&s->c, sess_fe(s)->cfg);
	if (!answered) /* else the hook answers once the session's leases are released */
		resp_add_simple(c->out, "RESET", 5);
}

/* ---- AUTH, HELLO ---- */

/* AUTH's and HELLO's check (the one in auth.c); logs s in on success.
 * false with the error written: -WRONGPASS, or protected mode's -DENIED
 * (a user without a password, from beyond loopback: the connection
 * closes, as one that needs no password at all). */
static bool login(struct cmd_call *c, const struct resp_arg *user, const struct resp_arg *pass)
{
	struct sess *s = c->sess;
	const char *name = user ? user->p : NULL;
	if (auth_protected_nopass(&s->c, sess_fe(s)->cfg, name)) {
		char who[ACL_USER_MAX + 16], msg[1200] = "DENIED ";
		snprintf(who, sizeof(who), "the user '%s'", name ? name : "default");
		srv_protected_text(msg + 7, sizeof(msg) - 7, who,
				   "give that user a password in --aclfile (>password)");
		resp_add_error(c->out, msg, strlen(msg));
		srv_note_protected(s->c.srv, &s->c);
		sess_close(s, "protected mode");
		return false;
	}
	if (auth_login(&s->c, sess_fe(s)->cfg, name, pass->p, pass->len))
		return true;
	resp_add_errorf(c->out, "WRONGPASS invalid username-password pair or user is disabled.");
	return false;
}

static void c_auth(struct cmd_call *c)
{
	struct sess *s = c->sess;
	if (c->argc > 3) {
		resp_add_errorf(c->out, "ERR syntax error");
		return;
	}
	if (c->argc == 2 && auth_default_nopass(&s->c, sess_fe(s)->cfg)) {
		resp_add_errorf(c->out, "ERR AUTH <password> called without any password "
					"configured for the default user. Are you sure your "
					"configuration is correct?");
		return;
	}
	const struct resp_arg *user = c->argc == 3 ? &c->argv[1] : NULL;
	if (login(c, user, &c->argv[c->argc - 1]))
		ok(c);
}

/* A client name: printable ASCII without spaces, as Redis allows. */
static bool valid_name(const struct resp_arg *a)
{
	for (size_t i = 0; i < a->len; i++)
		if (a->p[i] < '!' || a->p[i] > '~')
			return false;
	return true;
}

static void bad_name(struct cmd_call *c)
{
	resp_add_errorf(c->out,
			"ERR Client names cannot contain spaces, newlines or special characters.");
}

static bool set_name(struct sess *s, const struct resp_arg *a)
{
	char *n = NULL;
	if (a->len) {
		n = malloc(a->len + 1);
		if (!n)
			return false;
		memcpy(n, a->p, a->len + 1);
	}
	free(s->name);
	s->name = n;
	return true;
}

static void c_hello(struct cmd_call *c)
{
	struct sess *s = c->sess;
	long long ver = s->proto;
	const struct resp_arg *user = NULL, *pass = NULL, *name = NULL;
	if (c->argc >= 2) {
		if (!parse_int(&c->argv[1], &ver)) {
			resp_add_errorf(c->out,
					"ERR Protocol version is not an integer or out of range");
			return;
		}
		if (ver < 2 || ver > 3) {
			resp_add_errorf(c->out, "NOPROTO unsupported protocol version");
			return;
		}
	}
	for (int j = 2; j < c->argc; j++) {
		int more = c->argc - j - 1;
		if (arg_is(&c->argv[j], "auth") && more >= 2) {
			user = &c->argv[j + 1];
			pass = &c->argv[j + 2];
			j += 2;
		} else if (arg_is(&c->argv[j], "setname") && more >= 1) {
			name = &c->argv[j + 1];
			j += 1;
		} else {
			resp_add_errorf(c->out, "ERR Syntax error in HELLO option '%.128s'",
					c->argv[j].p);
			return;
		}
	}
	if (user && !login(c, user, pass))
		return;
	if (!s->c.authenticated) {
		resp_add_errorf(
			c->out,
			"NOAUTH HELLO must be called with the client already authenticated, "
			"otherwise the HELLO <proto> AUTH <user> <pass> option can be used to "
			"authenticate the client and select the RESP protocol version at the "
			"same time");
		return;
	}
	if (name && !valid_name(name)) {
		bad_name(c);
		return;
	}
	if (name && !set_name(s, name)) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	s->proto = (enum resp_proto)ver;
	c->proto = s->proto;
	resp_add_map(c->out, c->proto, 7);
	resp_add_cstr(c->out, "server");
	resp_add_cstr(c->out, "redis");
	resp_add_cstr(c->out, "version");
	resp_add_cstr(c->out, COMPAT_VERSION);
	resp_add_cstr(c->out, "proto");
	resp_add_int(c->out, ver);
	resp_add_cstr(c->out, "id");
	resp_add_int(c->out, (long long)s->c.id);
	resp_add_cstr(c->out, "mode");
	resp_add_cstr(c->out, "standalone");
	resp_add_cstr(c->out, "role");
	resp_add_cstr(c->out, "master");
	resp_add_cstr(c->out, "modules");
	resp_add_array(c->out, 0);
}

/* ---- CLIENT ---- */

static void c_client_id(struct cmd_call *c)
{
	resp_add_int(c->out, (long long)c->sess->c.id);
}

static void c_client_setname(struct cmd_call *c)
{
	if (!valid_name(&c->argv[2])) {
		bad_name(c);
		return;
	}
	if (!set_name(c->sess, &c->argv[2])) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	ok(c);
}

static void c_client_getname(struct cmd_call *c)
{
	if (c->sess->name)
		resp_add_cstr(c->out, c->sess->name);
	else
		resp_add_null(c->out, c->proto);
}

static void c_client_setinfo(struct cmd_call *c)
{
	struct sess *s = c->sess;
	char *field;
	if (arg_is(&c->argv[2], "lib-name"))
		field = s->lib_name;
	else if (arg_is(&c->argv[2], "lib-ver"))
		field = s->lib_ver;
	else {
		resp_add_errorf(c->out, "ERR Unrecognized option '%.128s'", c->argv[2].p);
		return;
	}
	if (!valid_name(&c->argv[3]) || c->argv[3].len >= sizeof(s->lib_name)) {
		resp_add_errorf(c->out,
				"ERR %s cannot contain spaces, newlines or special "
				"characters.",
				field == s->lib_name ? "lib-name" : "lib-ver");
		return;
	}
	memcpy(field, c->argv[3].p, c->argv[3].len + 1);
	ok(c);
}

/* One CLIENT LIST line, with the fields Redis 7 shows. */
static void client_line(struct sess *s, void *arg)
{
	struct buf *text = arg;
	int64_t now = srv_turn_ms(s->c.srv);
	buf_printf(text,
		   "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=N db=0 "
		   "sub=0 psub=0 ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 "
		   "multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=%zu tot-mem=0 events=r "
		   "cmd=%s%s%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s\n",
		   (unsigned long long)s->c.id, s->c.addr, s->c.laddr, s->c.fd,
		   s->name ? s->name : "", (long long)(now - s->c.created_ms) / 1000,
		   (long long)(now - s->c.last_cmd_ms) / 1000, resp_parser_buffered(s->parser),
		   resp_parser_room(s->parser), s->c.out.len,
		   s->last_cmd ? s->last_cmd->name : "NULL", s->last_sub ? "|" : "",
		   s->last_sub ? s->last_sub->name : "", s->c.user[0] ? s->c.user : "default",
		   (int)s->proto, s->lib_name, s->lib_ver);
}

static void reply_text(struct cmd_call *c, struct buf *text)
{
	if (buf_failed(text))
		resp_add_errorf(c->out, "ERR out of memory");
	else
		resp_add_verbatim(c->out, c->proto, "txt", text->buf, text->len);
	buf_free(text);
}

static void c_client_list(struct cmd_call *c)
{
	struct buf text;
	buf_init(&text, 64 << 20);
	redis_foreach(sess_fe(c->sess), client_line, &text);
	reply_text(c, &text);
}

static void c_client_info(struct cmd_call *c)
{
	struct buf text;
	buf_init(&text, 0);
	client_line(c->sess, &text);
	reply_text(c, &text);
}

static const char *const client_help[] = {
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"LIST",
	"    Return information about client connections.",
	"SETINFO <option> <value>",
	"    Set client meta attr (lib-name, lib-ver).",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"HELP",
	"    Print this help.",
};

static void c_client_help(struct cmd_call *c)
{
	size_t n = sizeof(client_help) / sizeof(client_help[0]);
	resp_add_array(c->out, n);
	for (size_t i = 0; i < n; i++)
		resp_add_simple(c->out, client_help[i], strlen(client_help[i]));
}

#define CONN_CATS  (ACL_SLOW | ACL_CONNECTION)
#define ADMIN_CATS (ACL_ADMIN | ACL_SLOW | ACL_DANGEROUS)

static const struct cmd_def client_subs[] = {
	{.name = "id",
	 .fn = c_client_id,
	 .arity = 2,
	 .acl = CONN_CATS,
	 .summary = "Returns the connection's id (the session id of the logs).",
	 .group = "connection",
	 .since = CMD_SINCE},
	{.name = "setname",
	 .fn = c_client_setname,
	 .arity = 3,
	 .acl = CONN_CATS,
	 .summary = "Names the connection (the client_name of the logs).",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"connection-name", CMD_ARG_STRING, NULL, 0})},
	{.name = "getname",
	 .fn = c_client_getname,
	 .arity = 2,
	 .acl = CONN_CATS,
	 .summary = "Returns the connection's name.",
	 .group = "connection",
	 .since = CMD_SINCE},
	{.name = "setinfo",
	 .fn = c_client_setinfo,
	 .arity = 4,
	 .acl = CONN_CATS,
	 .summary = "Sets the client library's name (LIB-NAME) or version (LIB-VER).",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"attr", CMD_ARG_STRING, NULL, 0}, {"value", CMD_ARG_STRING, NULL, 0})},
	/* other users' names, addresses, last commands: @admin only, so
	 * that +@connection does not grant it (CLIENT INFO: the caller's own) */
	{.name = "list",
	 .fn = c_client_list,
	 .arity = -2,
	 .acl = ADMIN_CATS,
	 .summary = "Lists the client connections.",
	 .group = "connection",
	 .complexity = "O(N) connections",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"type", CMD_ARG_STRING, "TYPE", CMD_ARG_OPTIONAL},
			  {"client-id", CMD_ARG_INTEGER, "ID", CMD_ARG_OPTIONAL})},
	{.name = "info",
	 .fn = c_client_info,
	 .arity = 2,
	 .acl = CONN_CATS,
	 .summary = "Returns this connection's line of CLIENT LIST.",
	 .group = "connection",
	 .since = CMD_SINCE},
	{.name = "help",
	 .fn = c_client_help,
	 .arity = 2,
	 .flags = CMD_STALE,
	 .acl = CONN_CATS,
	 .summary = "Lists the CLIENT subcommands.",
	 .group = "connection",
	 .since = CMD_SINCE},
	{.name = NULL},
};

/* ---- COMMAND, CONFIG ---- */

struct each_ctx {
	struct buf *out;
	enum resp_proto proto;
};

static void add_info(const struct cmd_def *d, void *arg)
{
	struct each_ctx *x = arg;
	cmd_doc_info(x->out, x->proto, d);
}

static void add_docs(const struct cmd_def *d, void *arg)
{
	struct each_ctx *x = arg;
	cmd_doc_docs(x->out, x->proto, d);
}

/* COMMAND: COMMAND INFO of every command. */
static void c_command(struct cmd_call *c)
{
	const struct cmd_table *t = sess_fe(c->sess)->cmds;
	struct each_ctx x = {c->out, c->proto};
	resp_add_array(c->out, cmd_count(t));
	cmd_foreach(t, add_info, &x);
}

static void c_command_count(struct cmd_call *c)
{
	resp_add_int(c->out, (long long)cmd_count(sess_fe(c->sess)->cmds));
}

/* COMMAND DOCS [name...]: a map of name to its documentation; every
 * command without names, the known ones among the names given. */
static void c_command_docs(struct cmd_call *c)
{
	const struct cmd_table *t = sess_fe(c->sess)->cmds;
	struct each_ctx x = {c->out, c->proto};
	if (c->argc == 2) {
		resp_add_map(c->out, c->proto, cmd_count(t));
		cmd_foreach(t, add_docs, &x);
		return;
	}
	size_t n = 0;
	for (int i = 2; i < c->argc; i++)
		n += cmd_lookup(t, c->argv[i].p, c->argv[i].len, NULL) != NULL;
	resp_add_map(c->out, c->proto, n);
	for (int i = 2; i < c->argc; i++) {
		const struct cmd_def *d = cmd_lookup(t, c->argv[i].p, c->argv[i].len, NULL);
		if (d != NULL)
			cmd_doc_docs(c->out, c->proto, d);
	}
}

/* COMMAND INFO [name...]: an entry per name (nil for an unknown one);
 * every command without names, as Redis 7. */
static void c_command_info(struct cmd_call *c)
{
	const struct cmd_table *t = sess_fe(c->sess)->cmds;
	if (c->argc == 2) {
		c_command(c);
		return;
	}
	resp_add_array(c->out, (size_t)(c->argc - 2));
	for (int i = 2; i < c->argc; i++) {
		const struct cmd_def *d = cmd_lookup(t, c->argv[i].p, c->argv[i].len, NULL);
		if (d != NULL)
			cmd_doc_info(c->out, c->proto, d);
		else
			resp_add_null_array(c->out, c->proto);
	}
}

static void add_name(const struct cmd_def *d, void *arg)
{
	resp_add_cstr(arg, d->name);
}

static void c_command_list(struct cmd_call *c)
{
	const struct cmd_table *t = sess_fe(c->sess)->cmds;
	resp_add_array(c->out, cmd_count(t));
	cmd_foreach(t, add_name, c->out);
}

static const struct cmd_def command_subs[] = {
	{.name = "count",
	 .fn = c_command_count,
	 .arity = 2,
	 .acl = CONN_CATS,
	 .summary = "Returns the number of commands.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = "docs",
	 .fn = c_command_docs,
	 .arity = -2,
	 .acl = CONN_CATS,
	 .summary = "Returns the documentation of the commands named, or of all.",
	 .group = "server",
	 .complexity = "O(N) commands",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS(
		 {"command-name", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})},
	{.name = "info",
	 .fn = c_command_info,
	 .arity = -2,
	 .acl = CONN_CATS,
	 .summary = "Returns the details of the commands named, or of all.",
	 .group = "server",
	 .complexity = "O(N) commands",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS(
		 {"command-name", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})},
	{.name = "list",
	 .fn = c_command_list,
	 .arity = -2,
	 .acl = CONN_CATS,
	 .summary = "Returns the names of every command (FILTERBY is accepted and ignored).",
	 .group = "server",
	 .complexity = "O(N) commands",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"filter", CMD_ARG_STRING, "FILTERBY", CMD_ARG_OPTIONAL})},
	{.name = NULL},
};

/* CONFIG GET answers every option of the configuration (gateway/config.c's
 * table, secrets redacted), under its name and the name Redis gives it
 * if any, and these Redis parameters leasegate has no option for, which
 * clients read on connect: fixed answers. */
static const struct fixed_param {
	const char *name, *value;
} fixed_params[] = {
	{"databases", "1"},
	{"appendonly", "no"},
	{"save", ""},
};
#define N_FIXED	   (sizeof(fixed_params) / sizeof(fixed_params[0]))
#define MAX_PARAMS (2 * 128 + N_FIXED)

/* Parameter p: option p, the Redis name of option p - n, or a fixed one
 * (n options); NULL for an option without a Redis name. */
static const char *param_name(size_t p, size_t n)
{
	if (p < n)
		return cfg_option_name(p);
	if (p < 2 * n)
		return cfg_option_redis_name(p - n);
	return fixed_params[p - 2 * n].name;
}

static void param_value(const struct cfg *cfg, size_t p, size_t n, char *buf, size_t len)
{
	if (p < 2 * n)
		cfg_option_value(cfg, p % n, buf, len);
	else
		snprintf(buf, len, "%s", fixed_params[p - 2 * n].value);
}

static void c_config_get(struct cmd_call *c)
{
	size_t n = cfg_option_count(), total = 2 * n + N_FIXED, hits = 0;
	bool hit[MAX_PARAMS] = {false};
	if (total > MAX_PARAMS) { /* a table grown past the array: a bug, not input */
		resp_add_errorf(c->out, "ERR too many configuration parameters");
		return;
	}
	for (int a = 2; a < c->argc; a++)
		for (size_t p = 0; p < total; p++) {
			const char *name = param_name(p, n);
			if (name && !hit[p] && fnmatch(c->argv[a].p, name, FNM_CASEFOLD) == 0) {
				hit[p] = true;
				hits++;
			}
		}
	resp_add_map(c->out, c->proto, hits);
	for (size_t p = 0; p < total; p++) {
		if (!hit[p])
			continue;
		char v[4200]; /* the longest string option (fenced-tables) */
		param_value(sess_fe(c->sess)->cfg, p, n, v, sizeof(v));
		resp_add_cstr(c->out, param_name(p, n));
		resp_add_cstr(c->out, v);
	}
}

/* CONFIG HELP's lines, built from the option table. */
struct help_lines {
	char line[48][96];
	size_t n;
};

static void help_add(struct help_lines *h, const char *s)
{
	if (h->n < sizeof(h->line) / sizeof(h->line[0]))
		snprintf(h->line[h->n++], sizeof(h->line[0]), "%s", s);
}

/* Appends word to the lines, "    a, b, c" wrapped at the line's width. */
static void help_word(struct help_lines *h, const char *word, bool first)
{
	char *l = h->n ? h->line[h->n - 1] : NULL;
	size_t room = 76; /* columns */
	if (first || l == NULL || strlen(l) + strlen(word) + 2 >= room) {
		if (!first && l != NULL)
			strcat(l, ",");
		help_add(h, "   ");
		l = h->line[h->n - 1];
	} else {
		strcat(l, ",");
	}
	if (strlen(l) + strlen(word) + 2 < sizeof(h->line[0])) {
		strcat(l, " ");
		strcat(l, word);
	}
}

static void c_config_help(struct cmd_call *c)
{
	static struct help_lines h; /* the same every time: built once */
	if (h.n == 0) {
		size_t n = cfg_option_count();
		help_add(&h, "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
		help_add(&h, "GET <pattern> [<pattern> ...]");
		help_add(&h, "    Return parameters matching the glob-like patterns and their");
		help_add(&h, "    values (a secret's: (redacted)), among:");
		bool first = true;
		for (size_t p = 0; p < 2 * n + N_FIXED; p++)
			if (param_name(p, n) != NULL) {
				help_word(&h, param_name(p, n), first);
				first = false;
			}
		help_add(&h, "RESETSTAT");
		help_add(&h, "    Accepted; resets nothing.");
		help_add(&h, "HELP");
		help_add(&h, "    Print this help.");
		help_add(&h,
			 "leasegate's options are set at start (--help lists them): CONFIG SET");
		help_add(&h, "and CONFIG REWRITE are not supported. SIGHUP reads again what these");
		help_add(&h, "name:");
		first = true;
		for (size_t i = 0; i < n; i++)
			if (cfg_option_flags(i) & CFG_OPT_RELOAD) {
				help_word(&h, cfg_option_name(i), first);
				first = false;
			}
	}
	resp_add_array(c->out, h.n);
	for (size_t i = 0; i < h.n; i++)
		resp_add_simple(c->out, h.line[i], strlen(h.line[i]));
}

static const struct cmd_def config_subs[] = {
	{.name = "get",
	 .fn = c_config_get,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = ADMIN_CATS,
	 .summary = "Returns the configuration parameters matching the patterns (every option "
		    "of --help; secrets redacted).",
	 .group = "server",
	 .complexity = "O(N) parameters",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"parameter", CMD_ARG_PATTERN, NULL, CMD_ARG_MULTIPLE})},
	{.name = "resetstat",
	 .fn = ok,
	 .arity = 2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ADMIN_CATS,
	 .summary = "Accepted; resets nothing.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = "help",
	 .fn = c_config_help,
	 .arity = 2,
	 .acl = ACL_SLOW,
	 .summary = "Lists the CONFIG subcommands and the parameters CONFIG GET knows.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = NULL},
};

/* ---- INFO ---- */

static void c_info(struct cmd_call *c)
{
	struct buf text;
	buf_init(&text, 16 << 20);
	cmd_info_text(sess_fe(c->sess)->cmds, c->sess, c->argc, c->argv, &text);
	reply_text(c, &text);
}

static void info_server(struct buf *t, void *arg)
{
	const struct redis *r = arg;
	struct utsname u;
	int64_t up = (srv_now_ms() - srv_started_ms(r->srv)) / 1000;
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	buf_printf(t,
		   "redis_version:%s\r\nleasegate_version:%s\r\nredis_mode:standalone\r\n"
		   "os:%s %s %s\r\narch_bits:%d\r\nmultiplexing_api:libevent\r\n"
		   "process_id:%ld\r\ntcp_port:%d\r\nuptime_in_seconds:%lld\r\n"
		   "uptime_in_days:%lld\r\nconfig_file:%s\r\n",
		   COMPAT_VERSION, LG_VERSION, u.sysname, u.release, u.machine,
		   (int)(sizeof(void *) * 8), (long)getpid(), redis_port(r), (long long)up,
		   (long long)up / 86400, r->cfg->config_file);
	/* the TLS port, and whether its clients must present a certificate
	 * (no TLS port: none is asked) */
	static const char *const auth[] = {"no", "yes", "optional"};
	int tls_port = redis_tls_port(r);
	buf_printf(t, "tls_port:%d\r\ntls_auth_clients:%s\r\n", tls_port,
		   tls_port ? auth[r->cfg->tls_auth_clients] : "no");
}

static void info_clients(struct buf *t, void *arg)
{
	const struct redis *r = arg;
	/* closing_clients: counted in connected_clients until their socket is
	 * closed (they hold it and a slot), at most the close linger */
	buf_printf(t,
		   "connected_clients:%zu\r\nmaxclients:%lld\r\nblocked_clients:%zu\r\n"
		   "closing_clients:%zu\r\n",
		   srv_conns(r->srv), (long long)srv_maxclients(r->srv), srv_blocked_conns(r->srv),
		   srv_closing_conns(r->srv));
	/* the bounds of what one session may make the server keep, and the
	 * largest buffers now (Redis's names where it has them) */
	size_t in, out;
	srv_largest_buffers(r->srv, &in, &out);
	const struct cfg *cfg = r->cfg;
	buf_printf(t,
		   "client_recent_max_input_buffer:%zu\r\nclient_recent_max_output_buffer:%zu\r\n"
		   "client_query_buffer_limit:%lld\r\nclient_output_buffer_limit:%lld\r\n"
		   "max_leases_per_session:%lld\r\nmax_waits_per_session:1\r\n"
		   "pg_max_prepared_statements:%lld\r\npg_max_portals:%lld\r\n"
		   "protected_mode:%s\r\nauth_timeout_ms:%lld\r\ntimeout_ms:%lld\r\n",
		   in, out, (long long)cfg->max_query_buffer, (long long)cfg->max_output_buffer,
		   (long long)cfg->max_leases_per_session, (long long)cfg->max_prepared,
		   (long long)cfg->max_portals, cfg->protected_mode ? "yes" : "no",
		   (long long)cfg->auth_timeout_ms, (long long)cfg->timeout_ms);
}

/* loading:1 while the lock store is not open (commands answer -LOADING). */
static void info_persistence(struct buf *t, void *arg)
{
	const struct redis *r = arg;
	buf_printf(t, "loading:%d\r\nasync_loading:0\r\n", cmd_table_is_ready(r->cmds) ? 0 : 1);
}

/* Redis's counters that monitoring reads (redis_exporter, Datadog), then
 * the event loop's poll before sleeping (loop.h): its window now, the
 * sleeps it spared and the sleeps taken. */
static void info_stats(struct buf *t, void *arg)
{
	static const struct loop_poll off;
	const struct redis *r = arg;
	const struct srv *srv = r->srv;
	const struct loop_poll *lp = srv_poll(srv) ? srv_poll(srv) : &off;
	buf_printf(t,
		   "total_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
		   "rejected_connections:%llu\r\nauth_timeout_closed:%llu\r\n"
		   "idle_timeout_closed:%llu\r\nclose_linger_dropped:%llu\r\n",
		   (unsigned long long)srv_connections_received(srv),
		   (unsigned long long)cmd_dispatched(r->cmds),
		   (unsigned long long)srv_connections_rejected(srv),
		   (unsigned long long)srv_expired(srv, CONN_EXPIRE_AUTH),
		   (unsigned long long)srv_expired(srv, CONN_EXPIRE_IDLE),
		   (unsigned long long)srv_lingered(srv));
	buf_printf(t,
		   "busy_poll_max_us:%lld\r\nbusy_poll_window_us:%lld\r\n"
		   "busy_poll_hits:%llu\r\neventloop_sleeps:%llu\r\n",
		   (long long)(lp->max_ns / 1000), (long long)(lp->window_ns / 1000),
		   (unsigned long long)lp->poll_hits, (unsigned long long)lp->sleeps);
}

/* Tools read role from here (StackExchange.Redis, exporters, probes): every
 * replica is a primary of its own; none replicates (the state is in the
 * store). */
static void info_replication(struct buf *t, void *arg)
{
	buf_printf(t, "role:master\r\nconnected_slaves:0\r\n"
		      "master_failover_state:no-failover\r\nmaster_repl_offset:0\r\n");
}

/* ACL categories as Redis 7 gives them (AUTH, HELLO, QUIT and RESET run
 * whatever the ACL says, as they must to change user). */
static const struct cmd_def builtins[] = {
	{.name = "ping",
	 .fn = c_ping,
	 .arity = -1,
	 .flags = CMD_IN_SUBSCRIBED,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Returns PONG, or the message given.",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"message", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL})},
	{.name = "echo",
	 .fn = c_echo,
	 .arity = 2,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Returns the message given.",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"message", CMD_ARG_STRING, NULL, 0})},
	{.name = "hello",
	 .fn = c_hello,
	 .arity = -1,
	 .flags = CMD_NOAUTH | CMD_AUTHENTICATES | CMD_LOADING,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Handshakes: the protocol version (2 or 3), authentication, the client name.",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"protover", CMD_ARG_INTEGER, NULL, CMD_ARG_OPTIONAL},
			  {"username password", CMD_ARG_STRING, "AUTH", CMD_ARG_OPTIONAL},
			  {"clientname", CMD_ARG_STRING, "SETNAME", CMD_ARG_OPTIONAL})},
	{.name = "auth",
	 .fn = c_auth,
	 .arity = -2,
	 .flags = CMD_NOAUTH | CMD_AUTHENTICATES | CMD_LOADING,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Authenticates the connection (--requirepass, or a user of --aclfile).",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"username", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL},
			  {"password", CMD_ARG_STRING, NULL, 0})},
	{.name = "client",
	 .arity = -2,
	 .flags = CMD_LOADING,
	 .subs = client_subs,
	 .acl = CONN_CATS,
	 .summary = "A container for client connection commands.",
	 .group = "connection",
	 .since = CMD_SINCE},
	{.name = "select",
	 .fn = c_select,
	 .arity = 2,
	 .flags = CMD_LOADING,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Selects database 0, the only one.",
	 .group = "connection",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"index", CMD_ARG_INTEGER, NULL, 0})},
	{.name = "role",
	 .fn = c_role,
	 .arity = 1,
	 .flags = CMD_LOADING | CMD_NOSCRIPT | CMD_STALE,
	 .acl = ACL_ADMIN | ACL_FAST | ACL_DANGEROUS,
	 .summary = "Returns master: every replica is a primary of its own.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = "info",
	 .fn = c_info,
	 .arity = -1,
	 .flags = CMD_LOADING | CMD_STALE,
	 .acl = ACL_SLOW | ACL_DANGEROUS,
	 .summary = "Returns the server's figures (server, clients, stats, leases, store...).",
	 .group = "server",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"section", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})},
	{.name = "command",
	 .fn = c_command,
	 .arity = -1,
	 .flags = CMD_LOADING | CMD_STALE,
	 .subs = command_subs,
	 .acl = CONN_CATS,
	 .summary = "Returns the commands' details (COMMAND INFO of every command).",
	 .group = "server",
	 .complexity = "O(N) commands",
	 .since = CMD_SINCE},
	{.name = "config",
	 .arity = -2,
	 .flags = CMD_LOADING | CMD_STALE,
	 .subs = config_subs,
	 .acl = ADMIN_CATS,
	 .summary = "A container for configuration commands.",
	 .group = "server",
	 .since = CMD_SINCE},
	{.name = "quit",
	 .fn = c_quit,
	 .arity = -1,
	 .flags = CMD_NOAUTH | CMD_LOADING | CMD_IN_MULTI | CMD_IN_SUBSCRIBED,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Closes the connection, releasing its leases.",
	 .group = "connection",
	 .since = CMD_SINCE},
	{.name = "reset",
	 .fn = c_reset,
	 .arity = 1,
	 .flags = CMD_NOAUTH | CMD_LOADING | CMD_IN_MULTI | CMD_IN_SUBSCRIBED,
	 .acl = ACL_FAST | ACL_CONNECTION,
	 .summary = "Resets the connection: releases its leases, clears its name.",
	 .group = "connection",
	 .since = CMD_SINCE},
};

int cmd_add_builtins(struct cmd_table *t)
{
	if (cmd_table_add(t, builtins, sizeof(builtins) / sizeof(builtins[0]), NULL) != 0)
		return -1;
	return cmd_add_acl(t);
}

int cmd_add_builtin_info(struct cmd_table *t, struct redis *r)
{
	if (cmd_table_add_info(t, "server", info_server, r) != 0 ||
	    cmd_table_add_info(t, "clients", info_clients, r) != 0 ||
	    cmd_table_add_info(t, "persistence", info_persistence, r) != 0 ||
	    cmd_table_add_info(t, "stats", info_stats, r) != 0 ||
	    cmd_table_add_info(t, "replication", info_replication, r) != 0)
		return -1;
	return 0;
}
