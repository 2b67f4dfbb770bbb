/*
 * commands: the table, lookup and dispatch (see commands.h). The built-in
 * handlers are in cmd_builtin.c.
 *
 * Lookup is a small open-addressing hash on the lower-cased name, built as
 * tables are added, so a pipelined PING costs one hash and one compare.
 * The hash reads a few bytes of the name, not all (ASCII case folding, as
 * strncasecmp in the C locale): the compare reads them all anyway, against
 * the entry's lower-cased copy, once the lengths agree.
 */
#include "gateway/redis/commands.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/conn/auth.h"
#include "gateway/redis/session.h"

#define MAX_COMMANDS 192
#define SLOTS	     512 /* power of two, > 2 * MAX_COMMANDS */
#define MAX_NAME     64
#define MAX_INFO     16

struct entry {
	const struct cmd_def *def;
	void *arg;
	struct cmd_stat stat;			       /* calls answered, by outcome (/metrics) */
	size_t len;				       /* of def->name */
	char lname[MAX_NAME + 1], uname[MAX_NAME + 1]; /* def->name in lower, upper case */
};

struct info_section {
	const char *name;
	cmd_info_fn fn;
	void *arg;
};

struct cmd_table {
	struct entry cmds[MAX_COMMANDS]; /* in the order added */
	size_t n;
	int16_t slot[SLOTS]; /* index into cmds, -1 = empty */
	struct info_section info[MAX_INFO];
	size_t ninfo;
	uint64_t dispatched;			    /* commands run (INFO stats) */
	bool (*ready)(void *arg, const char **why); /* cmd_table_set_gate */
	void *ready_arg;
	/* commands this process has not (cmd_table_note_absent) */
	const struct cmd_def *absent;
	size_t nabsent;
	const char *absent_why;
	cmd_fn queue; /* cmd_table_set_queue */
	void *queue_arg;
};

void cmd_table_note_absent(struct cmd_table *t, const struct cmd_def *defs, size_t n,
			   const char *why)
{
	t->absent = defs;
	t->nabsent = n;
	t->absent_why = why;
}

/* Why the command argv[0] is absent, or NULL when it is no command. */
static const char *absent_why(const struct cmd_table *t, const struct resp_arg *name)
{
	for (size_t i = 0; i < t->nabsent; i++)
		if (strlen(t->absent[i].name) == name->len &&
		    strncasecmp(t->absent[i].name, name->p, name->len) == 0)
			return t->absent_why;
	return NULL;
}

void cmd_table_set_queue(struct cmd_table *t, cmd_fn queue, void *arg)
{
	t->queue = queue;
	t->queue_arg = arg;
}

/* A command refused before it ran: inside MULTI, EXEC then aborts (as
 * Redis flags the transaction). */
static void refused_in_multi(struct sess *s)
{
	if (s->multi)
		s->multi_dirty = true;
}

bool cmd_table_is_ready(const struct cmd_table *t)
{
	const char *why;
	return t->ready == NULL || t->ready(t->ready_arg, &why);
}

void cmd_table_set_gate(struct cmd_table *t, bool (*ready)(void *arg, const char **why), void *arg)
{
	t->ready = ready;
	t->ready_arg = arg;
}

/* A hash of the name (len >= 1) that case does not change: its length
 * and its first, middle and last bytes, the 0x20 bit (ASCII case) set
 * (LOCK.ACQUIRE and LOCK.RELEASE differ in the middle only). */
static inline uint32_t name_hash(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t h = (uint32_t)len * 0x9E3779B1u;
	h ^= (uint32_t)(u[0] | 0x20) * 0x85EBCA77u;
	h ^= (uint32_t)(u[len / 2] | 0x20) * 0x27D4EB2Fu;
	h ^= (uint32_t)(u[len - 1] | 0x20) * 0xC2B2AE3Du;
	return h ^ (h >> 15);
}

/* Is s (len bytes) e's name, case aside? Commands come in lower or upper
 * case: those are two memcmp; strncasecmp for the rest. */
static bool entry_is(const struct entry *e, const char *s, size_t len)
{
	return e->len == len && (memcmp(s, e->uname, len) == 0 || memcmp(s, e->lname, len) == 0 ||
				 strncasecmp(s, e->lname, len) == 0);
}

struct cmd_table *cmd_table_new(void)
{
	struct cmd_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	for (size_t i = 0; i < SLOTS; i++)
		t->slot[i] = -1;
	return t;
}

void cmd_table_free(struct cmd_table *t)
{
	free(t);
}

static bool same_name(const char *def, const char *s, size_t len)
{
	return strlen(def) == len && strncasecmp(def, s, len) == 0;
}

/* The entry of the command name (len bytes, any case), or NULL. */
static struct entry *find_entry(const struct cmd_table *t, const char *name, size_t len)
{
	if (len == 0 || len > MAX_NAME)
		return NULL;
	for (uint32_t i = name_hash(name, len) & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
		int16_t k = t->slot[i];
		if (k < 0)
			return NULL;
		if (entry_is(&t->cmds[k], name, len))
			return (struct entry *)&t->cmds[k];
	}
}

const struct cmd_def *cmd_lookup(const struct cmd_table *t, const char *name, size_t len,
				 void **arg)
{
	const struct entry *e = find_entry(t, name, len);
	if (e == NULL)
		return NULL;
	if (arg)
		*arg = e->arg;
	return e->def;
}

int cmd_table_add(struct cmd_table *t, const struct cmd_def *defs, size_t n, void *arg)
{
	if (t->n + n > MAX_COMMANDS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(defs[i].name);
		if (len == 0 || len > MAX_NAME || cmd_lookup(t, defs[i].name, len, NULL) ||
		    defs[i].acl == 0)
			return -1;
		for (const struct cmd_def *sub = defs[i].subs; sub && sub->name; sub++)
			if (sub->acl == 0)
				return -1;
		for (size_t j = 0; j < i; j++)
			if (same_name(defs[j].name, defs[i].name, len))
				return -1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(defs[i].name);
		uint32_t h = name_hash(defs[i].name, len) & (SLOTS - 1);
		while (t->slot[h] >= 0)
			h = (h + 1) & (SLOTS - 1);
		struct entry *e = &t->cmds[t->n];
		e->def = &defs[i];
		e->arg = arg;
		e->len = len;
		for (size_t j = 0; j <= len; j++) {
			e->lname[j] = (char)tolower((unsigned char)defs[i].name[j]);
			e->uname[j] = (char)toupper((unsigned char)defs[i].name[j]);
		}
		t->slot[h] = (int16_t)t->n;
		t->n++;
	}
	return 0;
}

int cmd_table_add_info(struct cmd_table *t, const char *name, cmd_info_fn fn, void *arg)
{
	if (t->ninfo == MAX_INFO)
		return -1;
	for (size_t i = 0; i < t->ninfo; i++)
		if (strcasecmp(t->info[i].name, name) == 0)
			return -1;
	t->info[t->ninfo].name = name;
	t->info[t->ninfo].fn = fn;
	t->info[t->ninfo].arg = arg;
	t->ninfo++;
	return 0;
}

bool cmd_acl_known(const char *name, void *table)
{
	const char *bar = strchr(name, '|');
	size_t len = bar ? (size_t)(bar - name) : strlen(name);
	const struct cmd_def *d = cmd_lookup(table, name, len, NULL);
	if (d == NULL || bar == NULL)
		return d != NULL;
	for (const struct cmd_def *sub = d->subs; sub && sub->name; sub++)
		if (strcmp(sub->name, bar + 1) == 0)
			return true;
	return false;
}

uint64_t cmd_dispatched(const struct cmd_table *t)
{
	return t->dispatched;
}

size_t cmd_count(const struct cmd_table *t)
{
	return t->n;
}

void cmd_foreach(const struct cmd_table *t, void (*fn)(const struct cmd_def *d, void *arg),
		 void *arg)
{
	for (size_t i = 0; i < t->n; i++)
		fn(t->cmds[i].def, arg);
}

static bool wants_all(int argc, const struct resp_arg *argv)
{
	if (argc <= 1)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcasecmp(argv[i].p, "all") || !strcasecmp(argv[i].p, "default") ||
		    !strcasecmp(argv[i].p, "everything"))
			return true;
	return false;
}

void cmd_info_text(const struct cmd_table *t, struct sess *s, int argc, const struct resp_arg *argv,
		   struct buf *text)
{
	bool all = wants_all(argc, argv);
	bool first = true;
	for (size_t i = 0; i < t->ninfo; i++) {
		const struct info_section *sec = &t->info[i];
		bool want = all;
		for (int a = 1; !want && a < argc; a++)
			want = strcasecmp(argv[a].p, sec->name) == 0;
		if (!want)
			continue;
		buf_printf(text, "%s# %c%s\r\n", first ? "" : "\r\n",
			   toupper((unsigned char)sec->name[0]), sec->name + 1);
		sec->fn(text, sec->arg);
		first = false;
	}
}

/* "-ERR unknown command 'x', with args beginning with: 'a' 'b' ", as Redis 7
 * words it: the name cut at 128 bytes, arguments until 128 bytes of them. */
static void unknown_command(const struct cmd_table *t, struct buf *out, int argc,
			    const struct resp_arg *argv)
{
	const char *why = absent_why(t, &argv[0]);
	char args[256];
	size_t n = 0;
	args[0] = '\0';
	for (int i = 1; i < argc && n < 128; i++) {
		int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ", (int)(128 - n), argv[i].p);
		if (w < 0)
			break;
		n += (size_t)w;
		if (n >= sizeof(args))
			n = sizeof(args) - 1;
	}
	resp_add_errorf(out, "ERR unknown command '%.128s', with args beginning with: %s%s%s",
			argv[0].p, args, why != NULL ? "; " : "", why != NULL ? why : "");
}

/* The ACL check point (acl_check) for d (parent: the command of the
 * subcommand d, or NULL) and the lock names d's key spec points at;
 * false with -NOPERM written. */
static bool acl_allows(struct sess *s, const struct cmd_def *d, const struct cmd_def *parent,
		       int argc, const struct resp_arg *argv)
{
	if (acl_allows_all(s->c.acl)) /* the common case: nothing to check */
		return true;
	char sub[2 * MAX_NAME + 2];
	enum { CHUNK = 16 };
	const char *keys[CHUNK], *full = d->name;
	size_t lens[CHUNK];
	if (parent != NULL) { /* "config|get" (no formatting on the common path) */
		snprintf(sub, sizeof(sub), "%s|%s", parent->name, d->name);
		full = sub;
	}
	struct acl_req r = {.cmd = full, .cats = d->acl, .keys = keys, .key_lens = lens};
	int k = d->key > 0 ? d->key : argc;
	int last = d->key_last == CMD_KEYS_REST ? argc - 1 : d->key_last > 0 ? d->key_last : d->key;
	if (d->key_last == CMD_KEYS_NUMKEYS && k < argc) {
		/* a bad count is the handler's error: no name to check then */
		long long n = 0;
		const struct resp_arg *a = &argv[k];
		/* n >= 0: after a non-digit (-1), more digits would run it down
		 * past LLONG_MIN */
		for (size_t i = 0; i < a->len && n >= 0 && n <= argc; i++)
			n = a->p[i] >= '0' && a->p[i] <= '9' ? n * 10 + (a->p[i] - '0') : -1;
		last = a->len && n >= 0 && n <= argc ? k + (int)n : k;
		k++;
	}
	if (last >= argc)
		last = argc - 1;
	int step = d->key_step > 1 ? d->key_step : 1; /* MSET: key value key value */
	enum acl_verdict v;
	do { /* the command alone, then the names a chunk at a time */
		r.nkeys = 0;
		for (; k <= last && r.nkeys < CHUNK; k += step, r.nkeys++) {
			keys[r.nkeys] = argv[k].p;
			lens[r.nkeys] = argv[k].len;
		}
		v = acl_check(s->c.acl, &r, NULL);
	} while (v == ACL_OK && k <= last);
	if (v == ACL_DENIED_CMD)
		resp_add_errorf(sess_out(s),
				"NOPERM User %s has no permissions to run the '%s' command",
				s->c.user[0] ? s->c.user : "default", full);
	else if (v == ACL_DENIED_KEY)
		resp_add_errorf(sess_out(s), "NOPERM No permissions to access a key");
	return v == ACL_OK;
}

bool cmd_acl_require(struct cmd_call *c, const char *name, uint32_t cats)
{
	struct acl_req r = {.cmd = name, .cats = cats};
	if (acl_check(c->sess->c.acl, &r, NULL) == ACL_OK)
		return true;
	resp_add_errorf(c->out, "NOPERM User %s has no permissions to run the '%s' command",
			c->sess->c.user[0] ? c->sess->c.user : "default", name);
	return false;
}

bool cmd_acl_still(const struct sess *s, const char *name, size_t len)
{
	const struct cmd_def *d = s->last_sub != NULL ? s->last_sub : s->last_cmd;
	if (sess_closed(s) || s->c.acl == NULL || d == NULL)
		return false;
	char sub[2 * MAX_NAME + 2];
	const char *full = d->name;
	if (s->last_sub != NULL) {
		snprintf(sub, sizeof(sub), "%s|%s", s->last_cmd->name, d->name);
		full = sub;
	}
	struct acl_req r = {
		.cmd = full, .cats = d->acl, .nkeys = 1, .keys = &name, .key_lens = &len};
	return acl_check(s->c.acl, &r, NULL) == ACL_OK;
}

/* The answer of an authentication held back: now in the session's output. */
static void release_answer(struct conn *c, void *arg)
{
	struct buf *held = arg;
	if (!conn_closed(c)) {
		buf_raw(&c->out, held->buf, held->len);
		conn_resume(c);
	}
	buf_free(held);
	free(held);
}

/* The user an authenticating command logs in as: AUTH [user] pass, HELLO
 * ver ... AUTH user pass ...; NULL: "default" (or none given). */
static const char *auth_user(const struct cmd_call *call)
{
	if (strcasecmp(call->argv[0].p, "auth") == 0)
		return call->argc == 3 ? call->argv[1].p : NULL;
	for (int j = 2; j + 1 < call->argc; j++) { /* as c_hello reads them */
		if (strcasecmp(call->argv[j].p, "auth") == 0)
			return j + 2 < call->argc ? call->argv[j + 1].p : NULL;
		if (strcasecmp(call->argv[j].p, "setname") == 0)
			j++;
	}
	return NULL;
}

/* An authenticating command as a user with failures from this address
 * behind it: run now, answered after auth_delay_ms (read first: the check
 * changes it). false when there is no delay (run it as usual). */
static bool hold_answer(struct cmd_call *call)
{
	int64_t ms = auth_delay_ms(&call->sess->c, auth_user(call));
	struct buf *held = ms > 0 ? malloc(sizeof(*held)) : NULL;
	if (held == NULL)
		return false;
	buf_init(held, 0);
	struct buf *out = call->out;
	call->out = held;
	call->def->fn(call);
	call->out = out;
	if (!auth_later(&call->sess->c, ms, release_answer, held)) {
		buf_raw(out, held->buf, held->len);
		buf_free(held);
		free(held);
		return true;
	}
	sess_suspend(call->sess);
	return true;
}

static bool arity_ok(int arity, int argc)
{
	return arity > 0 ? argc == arity : argc >= -arity;
}

/* The gates a command passes once it is known, in Redis's order:
 * authentication, the ACL, the store being open, a RESP2 connection's
 * subscribed mode. False with the refusal written. */
static bool admitted(struct cmd_table *t, struct sess *s, const struct cmd_def *d, unsigned flags,
		     int argc, const struct resp_arg *argv)
{
	struct buf *out = sess_out(s);
	if (!s->c.authenticated && !(flags & CMD_NOAUTH)) {
		resp_add_error(out, "NOAUTH Authentication required.", 31);
		return false;
	}
	if (!(flags & CMD_NOAUTH) &&
	    !acl_allows(s, d, s->last_sub ? s->last_cmd : NULL, argc, argv))
		return false;
	const char *why = "the lock store is not open yet";
	if (t->ready != NULL && !(flags & CMD_LOADING) && !t->ready(t->ready_arg, &why)) {
		resp_add_errorf(out, "LOADING leasegate is not ready: %s", why);
		return false;
	}
	if (s->subscriptions > 0 && sess_proto(s) == RESP2 && !(flags & CMD_IN_SUBSCRIBED)) {
		resp_add_errorf(
			out,
			"ERR Can't execute '%s%s%s': only (P|S)SUBSCRIBE / "
			"(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
			s->last_cmd->name, s->last_sub ? "|" : "",
			s->last_sub ? s->last_sub->name : "");
		return false;
	}
	return true;
}

void cmd_dispatch(struct cmd_table *t, struct sess *s, int argc, const struct resp_arg *argv)
{
	struct cmd_call call = {
		.sess = s,
		.argc = argc,
		.argv = argv,
		.out = sess_out(s),
		.proto = sess_proto(s),
	};
	struct entry *top = find_entry(t, argv[0].p, argv[0].len);
	if (top == NULL) {
		unknown_command(t, call.out, argc, argv);
		refused_in_multi(s);
		return;
	}
	const struct cmd_def *d = top->def;
	call.arg = top->arg;
	s->last_cmd = d;
	s->last_sub = NULL;
	if (!arity_ok(d->arity, argc)) {
		resp_add_errorf(call.out, "ERR wrong number of arguments for '%s' command",
				d->name);
		refused_in_multi(s);
		return;
	}
	unsigned flags = d->flags;
	if (d->subs && argc >= 2) {
		const struct cmd_def *sub = NULL;
		for (const struct cmd_def *c = d->subs; c->name; c++)
			if (same_name(c->name, argv[1].p, argv[1].len))
				sub = c;
		if (!sub) {
			char upper[MAX_NAME + 1];
			size_t i;
			for (i = 0; d->name[i] && i < MAX_NAME; i++)
				upper[i] = (char)toupper((unsigned char)d->name[i]);
			upper[i] = '\0';
			resp_add_errorf(call.out, "ERR unknown subcommand '%.128s'. Try %s HELP.",
					argv[1].p, upper);
			refused_in_multi(s);
			return;
		}
		s->last_sub = sub;
		if (!arity_ok(sub->arity, argc)) {
			resp_add_errorf(call.out,
					"ERR wrong number of arguments for '%s|%s' command",
					d->name, sub->name);
			refused_in_multi(s);
			return;
		}
		flags |= sub->flags;
		d = sub;
	}
	if (!admitted(t, s, d, flags, argc, argv)) {
		refused_in_multi(s);
		return;
	}
	call.def = d;
	if (s->multi && !(flags & CMD_IN_MULTI) && t->queue != NULL) {
		call.arg = t->queue_arg;
		t->queue(&call); /* QUEUED, or refused (the transaction then aborts) */
		return;
	}
	t->dispatched++;
	if ((flags & CMD_AUTHENTICATES) && hold_answer(&call))
		return;
	/* the outcome is the first byte of the reply: now, or at sess_resume */
	struct cmd_stat *stat = &top->stat;
	size_t at = call.out->len;
	uint64_t flushes = s->c.flushes;
	d->fn(&call);
	if (s->c.state == CONN_BLOCKED)
		sess_expect_reply(s, stat, at, flushes);
	else
		sess_count_reply(s, stat, at, flushes);
}

void cmd_foreach_stat(const struct cmd_table *t,
		      void (*fn)(const char *name, const struct cmd_stat *st, void *arg), void *arg)
{
	for (size_t i = 0; i < t->n; i++)
		fn(t->cmds[i].lname, &t->cmds[i].stat, arg);
}
