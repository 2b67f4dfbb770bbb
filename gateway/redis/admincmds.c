/*
 * redis/admincmds: the operators' lock commands, over the lease-session
 * layer —
 *   LOCK.LIST [MATCH pattern] [COUNT n]
 *       this replica's leases, terms and waits (no request);
 *   LOCK.LIST TABLE [CURSOR c] [MATCH pattern] [COUNT n]
 *       one page of the table's lock items, replied as SCAN is (a Scan
 *       page of COUNT items on DynamoDB: it costs reads), the names the
 *       user's patterns hide left out, the cursor sealed (list_cursor.h);
 *   LOCK.FORCE-RELEASE name
 *       releases whatever holds the lock, on whatever replica; its holder
 *       answers -LOST forced. An administrative command (ACLs will guard
 *       it when there are some).
 *
 * Not here: the commands of a lease's own holder (lockcmds.c), the listing
 * and the scan themselves (gateway/lease).
 */
#include <stdio.h>
#include <string.h>

#include "core/store/store.h"
#include "core/store/store_shared.h"
#include "gateway/redis/leases.h"
#include "gateway/redis/list_cursor.h"
#include "gateway/redis/session.h"

#define LIST_DEFAULT_COUNT  1000
#define LIST_MAX_COUNT	    100000
#define TABLE_DEFAULT_COUNT 100
/* A glob costs time per name it is tried on; a pattern as long as the
 * longest name says all a pattern can. */
#define MATCH_MAX STORE_NAME_MAX

static const char list_usage[] = "ERR syntax error. Usage: LOCK.LIST [MATCH pattern] [COUNT n] | "
				 "LOCK.LIST TABLE [CURSOR cursor] [MATCH pattern] [COUNT n]";

/* What LOCK.LIST's arguments say. */
struct list_args {
	bool table;
	const char *cursor; /* TABLE: NULL from the start; sealed (list_cursor.h) */
	size_t cursor_len;
	const char *pattern; /* NULL: all */
	int64_t count;
};

/* The options, as data: which form takes each, and where it goes. */
enum list_field { OPT_CURSOR, OPT_MATCH, OPT_COUNT };
static const struct list_opt {
	const char *name;
	size_t len;
	enum list_field field;
	bool table_only;
} list_opts[] = {
	{"CURSOR", 6, OPT_CURSOR, true},
	{"MATCH", 5, OPT_MATCH, false},
	{"COUNT", 5, OPT_COUNT, false},
};

static bool arg_is(const struct resp_arg *a, const char *s, size_t len)
{
	return a->len == len && strncasecmp(a->p, s, len) == 0;
}

/* A cursor as LOCK.LIST TABLE gives them: printable ASCII, bounded. */
static bool valid_cursor(const struct resp_arg *a)
{
	if (a->len == 0 || a->len > LC_SEALED_MAX)
		return false;
	for (size_t i = 0; i < a->len; i++)
		if (a->p[i] < '!' || a->p[i] > '~')
			return false;
	return true;
}

/* Parses LOCK.LIST's arguments; writes the error and returns false when
 * bad. */
static bool parse_list(struct cmd_call *c, struct list_args *la)
{
	memset(la, 0, sizeof(*la));
	int i = 1;
	if (c->argc > 1 && arg_is(&c->argv[1], "TABLE", 5)) {
		la->table = true;
		i = 2;
	}
	int64_t max = la->table ? STORE_SCAN_MAX : LIST_MAX_COUNT;
	la->count = la->table ? TABLE_DEFAULT_COUNT : LIST_DEFAULT_COUNT;
	for (; i < c->argc; i += 2) {
		const struct list_opt *o = NULL;
		for (size_t k = 0; k < sizeof(list_opts) / sizeof(list_opts[0]); k++)
			if (arg_is(&c->argv[i], list_opts[k].name, list_opts[k].len) &&
			    (la->table || !list_opts[k].table_only))
				o = &list_opts[k];
		if (o == NULL || i + 1 >= c->argc) {
			resp_add_errorf(c->out, "%s", list_usage);
			return false;
		}
		const struct resp_arg *v = &c->argv[i + 1];
		switch (o->field) {
		case OPT_CURSOR:
			if (!valid_cursor(v)) {
				resp_add_errorf(c->out, "ERR invalid cursor");
				return false;
			}
			/* "0" starts, as SCAN's: sealed cursors are never "0" */
			la->cursor = arg_is(v, "0", 1) ? NULL : v->p;
			la->cursor_len = v->len;
			break;
		case OPT_MATCH:
			if (v->len == 0 || v->len > MATCH_MAX || memchr(v->p, '\0', v->len)) {
				resp_add_errorf(c->out,
						"ERR MATCH must be a glob pattern of 1 to %d "
						"bytes",
						MATCH_MAX);
				return false;
			}
			la->pattern = v->p;
			break;
		case OPT_COUNT:
			if (!rl_parse_int(v, &la->count) || la->count < 1 || la->count > max) {
				resp_add_errorf(c->out, "ERR COUNT must be 1 to %lld",
						(long long)max);
				return false;
			}
			break;
		}
	}
	return true;
}

/* --- LOCK.LIST: this replica's leases and waits --- */

static const char *const kind_name[] = {
	[LS_KIND_LOCK] = "lock", [LS_KIND_LEADER] = "leader", [LS_KIND_SHARED] = "shared"};

struct list_out {
	struct buf *out;
	enum resp_proto proto;
	const struct acl_user *who; /* only the names its patterns let it read */
	unsigned want, done;
};

static bool visible(const struct acl_user *who, const char *name)
{
	return acl_may_read(who, name, strlen(name));
}

static void count_entry(void *arg, const struct ls_entry *e)
{
	struct list_out *lo = arg;
	if (lo->done < lo->want && visible(lo->who, e->name))
		lo->done++;
}

static void add_int_or_null(struct buf *out, enum resp_proto proto, int64_t v)
{
	if (v > 0)
		resp_add_int(out, v);
	else
		resp_add_null(out, proto);
}

static void add_entry(void *arg, const struct ls_entry *e)
{
	struct list_out *lo = arg;
	struct buf *out = lo->out;
	if (lo->done >= lo->want || !visible(lo->who, e->name))
		return;
	lo->done++;
	resp_add_map(out, lo->proto, 7);
	resp_add_cstr(out, "name");
	resp_add_cstr(out, e->name);
	resp_add_cstr(out, "kind");
	resp_add_cstr(out, kind_name[e->kind]);
	resp_add_cstr(out, "state");
	resp_add_cstr(out, e->state);
	resp_add_cstr(out, "token");
	add_int_or_null(out, lo->proto, e->token);
	resp_add_cstr(out, "lease-ms");
	add_int_or_null(out, lo->proto, e->lease_ms);
	resp_add_cstr(out, "holder");
	if (e->holder != NULL)
		resp_add_cstr(out, e->holder);
	else
		resp_add_null(out, lo->proto);
	resp_add_cstr(out, "session");
	if (e->proto != NULL && e->proto[0] != '\0') {
		char label[64];
		snprintf(label, sizeof(label), "%s:%llu", e->proto, (unsigned long long)e->id);
		resp_add_cstr(out, label);
	} else {
		resp_add_null(out, lo->proto);
	}
}

static void list_local(struct cmd_call *c, struct rl_app *app, const struct list_args *la)
{
	/* Twice: the array's length comes first. Nothing runs in between.
	 * COUNT counts the entries shown: those the user's ACL patterns let
	 * it read (so no bound is given to the walk itself). */
	struct list_out lo = {c->out, c->proto, c->sess->c.acl, (unsigned)la->count, 0};
	(void)lsvc_list(app->svc, la->pattern, 0, count_entry, &lo);
	resp_add_array(c->out, lo.done);
	lo.want = lo.done;
	lo.done = 0;
	if (lo.want > 0)
		(void)lsvc_list(app->svc, la->pattern, 0, add_entry, &lo);
}

/* --- LOCK.LIST TABLE: a page of the table's items --- */

static void add_item(struct buf *out, enum resp_proto proto, const struct lt_scan_entry *e)
{
	const struct lt_state *st = &e->st;
	resp_add_map(out, proto, 8);
	resp_add_cstr(out, "name");
	resp_add_cstr(out, e->name);
	resp_add_cstr(out, "held");
	resp_add_int(out, st->held);
	resp_add_cstr(out, "holder");
	if (st->held && st->holder[0] != '\0')
		resp_add_cstr(out, st->holder);
	else
		resp_add_null(out, proto);
	resp_add_cstr(out, "lease-ms");
	resp_add_int(out, st->lease_ms);
	resp_add_cstr(out, "token");
	resp_add_int(out, st->token);
	resp_add_cstr(out, "detached");
	resp_add_int(out, st->held && ls_detached(st));
	resp_add_cstr(out, "shared"); /* readers or semaphore holders now */
	resp_add_int(out, st->shared);
	/* how its holder proves it alive: "replica" when the item names its
	 * session (lease-ms is then its sleaseMs), else "lease" */
	resp_add_cstr(out, "heartbeat");
	resp_add_cstr(out, st->held && st->session ? "replica" : "lease");
}

/* Whom a cursor is sealed for: the session's user. */
static const char *cursor_user(const struct sess *s)
{
	return s->c.user[0] != '\0' ? s->c.user : "default";
}

static void scan_done(void *arg, const struct ls_result *res, const struct lt_scan_entry *entries,
		      unsigned count, const char *next)
{
	struct sess *s = arg;
	if (sess_closed(s)) {
		sess_resume(s);
		return;
	}
	struct buf *out = sess_out(s);
	enum resp_proto proto = sess_proto(s);
	if (res->status != LS_OK) {
		rl_render(out, proto, res, rl_shape_flag); /* an error status */
	} else {
		/* the names the user's ACL patterns let it read (a page may
		 * then show fewer than COUNT, or none: carry on from the
		 * cursor, which is sealed so that it tells no name) */
		unsigned shown = 0;
		char sealed[LC_SEALED_MAX + 1] = "0";
		for (unsigned i = 0; i < count; i++)
			shown += visible(s->c.acl, entries[i].name);
		if (next != NULL && next[0] != '\0' && !lc_seal(cursor_user(s), next, sealed)) {
			resp_add_errorf(out, "ERR cannot seal the cursor (OpenSSL failed)");
			sess_resume(s);
			return;
		}
		resp_add_array(out, 2);
		resp_add_cstr(out, sealed);
		resp_add_array(out, shown);
		for (unsigned i = 0; i < count; i++)
			if (visible(s->c.acl, entries[i].name))
				add_item(out, proto, &entries[i]);
	}
	sess_resume(s);
}

static void list_table(struct cmd_call *c, const struct list_args *la)
{
	struct ls_result now;
	char cursor[STORE_CURSOR_MAX + 1];
	if (la->cursor != NULL &&
	    !lc_open(cursor_user(c->sess), la->cursor, la->cursor_len, cursor)) {
		resp_add_errorf(c->out,
				"ERR invalid cursor: a LOCK.LIST TABLE cursor is good only on the "
				"replica that gave it, for the same user, until it restarts; start "
				"again with CURSOR 0");
		return;
	}
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	enum ls_status st = ls_scan(ls, la->cursor != NULL ? cursor : NULL, (unsigned)la->count,
				    la->pattern, &now, scan_done, c->sess);
	if (st == LS_PENDING)
		sess_suspend(c->sess);
	else if (st == LS_OK) /* the layer answers a page through its callback */
		resp_add_errorf(c->out, "ERR internal error: a scan answered at once");
	else
		rl_render(c->out, c->proto, &now, rl_shape_flag);
}

static void cmd_list(struct cmd_call *c)
{
	struct list_args la;
	if (!parse_list(c, &la))
		return;
	/* the table's items, of every replica: an operator's (@admin) */
	if (la.table &&
	    !cmd_acl_require(c, "lock.list|table", ACL_ADMIN | ACL_SLOW | ACL_DANGEROUS))
		return;
	if (la.table)
		list_table(c, &la);
	else
		list_local(c, c->arg, &la);
}

/* --- LOCK.FORCE-RELEASE name --- */

static void force_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

/* LOCK.FORCE-RELEASE name SLOT k: the shared holder in slot k. */
static void force_slot(struct cmd_call *c)
{
	struct ls_result now;
	int64_t k;
	if (c->argc != 4) { /* name, or name SLOT k */
		resp_add_errorf(c->out,
				"ERR wrong number of arguments for 'lock.force-release' command");
		return;
	}
	if (c->argv[2].len != 4 || strncasecmp(c->argv[2].p, "SLOT", 4) != 0) {
		resp_add_errorf(c->out,
				"ERR syntax error. Usage: LOCK.FORCE-RELEASE name [SLOT k]");
		return;
	}
	if (!rl_parse_int(&c->argv[3], &k) || k >= STORE_SH_CAP) {
		resp_add_errorf(c->out, "ERR SLOT must be an integer from 0 to %d",
				STORE_SH_CAP - 1);
		return;
	}
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	rl_answer(c,
		  ls_shared_force(ls, c->argv[1].p, c->argv[1].len, (unsigned)k, &now, force_done,
				  c->sess),
		  &now, rl_shape_flag);
}

static void cmd_force_release(struct cmd_call *c)
{
	struct ls_result now;
	if (c->argc > 2) {
		force_slot(c);
		return;
	}
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	struct ls_foreign_req req = {
		.name = c->argv[1].p,
		.name_len = c->argv[1].len,
		.op = LS_FX_FORCE,
	};
	rl_answer(c, ls_foreign(ls, &req, &now, force_done, c->sess), &now, rl_shape_flag);
}

static const struct cmd_def admin_cmds[] = {
	/* LOCK.LIST shows only the names the user may read; its TABLE form
	 * is @admin (cmd_list asks) */
	{.name = "lock.list",
	 .fn = cmd_list,
	 .arity = -1,
	 .acl = ACL_READ | ACL_LOCK | ACL_SLOW,
	 .summary = "Lists this replica's leases, terms and waits; with TABLE, a page of the "
		    "table's lock items, as SCAN.",
	 .group = "generic",
	 .complexity = "O(N) locks",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"table", CMD_ARG_PURE_TOKEN, "TABLE", CMD_ARG_OPTIONAL},
			  {"cursor", CMD_ARG_STRING, "CURSOR", CMD_ARG_OPTIONAL},
			  {"pattern", CMD_ARG_PATTERN, "MATCH", CMD_ARG_OPTIONAL},
			  {"count", CMD_ARG_INTEGER, "COUNT", CMD_ARG_OPTIONAL})},
	/* any holder's lease: @admin only (not @lock or @write), on a name
	 * its patterns give read and write */
	{.name = "lock.force-release",
	 .fn = cmd_force_release,
	 .arity = -2,
	 .acl = ACL_ADMIN | ACL_DANGEROUS | ACL_SLOW,
	 .key = 1,
	 .summary = "Releases whatever holds the lock, on whatever replica (with SLOT, the "
		    "shared holder in that slot); its holder answers -LOST forced.",
	 .group = "generic",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"name", CMD_ARG_KEY, NULL, 0},
			  {"k", CMD_ARG_INTEGER, "SLOT", CMD_ARG_OPTIONAL})},
};

int rl_admincmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, admin_cmds, sizeof(admin_cmds) / sizeof(admin_cmds[0]), app);
}
