/*
 * redis/compatcmds: the Redis key commands that lock libraries send —
 * SET key value NX PX ms (a detached lease whose owner is the library's
 * value), GET, DEL, PEXPIRE/EXPIRE, PTTL/TTL — each on a lock, and only on
 * a lock: a key is a lock name, its value is the lease's value, its TTL
 * what remains of the lease. The other forms of SET (XX, GET, KEEPTTL,
 * PXAT, EXAT, without NX) and of PEXPIRE/EXPIRE (NX, XX, GT, LT) run as a
 * script's would, on the keyspace's engine (rl_keyspace, txcmds.c).
 *
 * A key "exists" while its item shows a lease this replica would not yet
 * take over (lt_state.held with remaining_ms > 0), which is what a lock
 * library reading GET or PTTL after a lease ran out expects.
 *
 * Not here: the scripts of the libraries (scriptcmds.c), the lease rules
 * (gateway/lease, core/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/config.h"
#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"
#include "gateway/script/script_keys.h"

/* --- shared with scriptcmds.c (leases.h) --- */

int64_t rl_max_lease_ms(const struct cmd_call *c)
{
	int64_t max = sess_fe(c->sess)->cfg->max_lease_ms;
	return max > 0 && max < LT_MAX_LEASE_MS ? max : LT_MAX_LEASE_MS;
}

bool rl_check_expiry(struct cmd_call *c, int64_t ms, int64_t scale, const char *what)
{
	int64_t max = rl_max_lease_ms(c);
	if (ms >= LT_MIN_LEASE_MS && ms <= max)
		return true;
	if (scale == 1000)
		resp_add_errorf(c->out,
				"ERR %s must be %lld to %lld seconds: a lease runs 1 s to "
				"--max-lease",
				what, (long long)(LT_MIN_LEASE_MS / 1000), (long long)(max / 1000));
	else
		resp_add_errorf(c->out,
				"ERR %s must be %lld to %lld milliseconds: a lease runs 1 s "
				"to --max-lease",
				what, (long long)LT_MIN_LEASE_MS, (long long)max);
	return false;
}

bool rl_value_ok(const struct resp_arg *v)
{
	if (v->len == 0 || v->len > LS_VALUE_MAX)
		return false;
	for (size_t i = 0; i < v->len; i++)
		if (v->p[i] < 0x21 || v->p[i] > 0x7e)
			return false;
	return true;
}

static void flag_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

void rl_foreign_flag(struct cmd_call *c, const struct ls_foreign_req *req)
{
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls != NULL)
		rl_answer(c, ls_foreign(ls, req, &now, flag_done, c->sess), &now, rl_shape_flag);
}

/* What Redis answers a SET NX of a key that exists: a lock this session
 * holds (LOCK.ACQUIRE) is one, not an error. */
static void conflict_is_held(struct ls_result *res)
{
	if (res->status == LS_CONFLICT)
		res->status = LS_NONE;
}

void rl_acquire_detached(struct cmd_call *c, const struct resp_arg *key,
			 const struct resp_arg *value, int64_t ms, rl_shape_fn shape,
			 ls_done_cb done)
{
	struct ls_acquire_req req = {
		.name = key->p,
		.name_len = key->len,
		.lease_ms = ms,
		.wait_ms = -1,
		.scope = LS_SCOPE_SESSION,
		.detach = true,
		.owner = value->p,
		.owner_len = value->len,
	};
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	enum ls_status st = ls_acquire(ls, &req, &now, done, c->sess);
	conflict_is_held(&now);
	rl_answer(c, st, &now, shape);
}

/* --- another session's lease: the force-release right --- */

/* The right of LOCK.FORCE-RELEASE on key (its command or @admin, and a
 * pattern giving the name): what ending or stretching a lease another
 * session took with LOCK.ACQUIRE asks. */
bool rl_may_force(const struct sess *s, const struct resp_arg *key)
{
	const char *keys[1] = {key->p};
	size_t lens[1] = {key->len};
	struct acl_req r = {.cmd = "lock.force-release",
			    .cats = ACL_ADMIN | ACL_DANGEROUS | ACL_SLOW,
			    .nkeys = 1,
			    .keys = keys,
			    .key_lens = lens};
	return acl_check(s->c.acl, &r, NULL) == ACL_OK;
}

/* res of a detached_only request left alone a lease another session took
 * (LOCK.ACQUIRE, DETACH too): that is a refusal, not "no such key". */
static void deny_others(struct ls_result *res, const char *cmd)
{
	if (res->status != LS_NONE || !res->st.held || ls_by_value(&res->st))
		return;
	res->status = LS_DENIED;
	snprintf(res->message, sizeof(res->message),
		 "%s of a lease another session took with LOCK.ACQUIRE needs the force-release "
		 "right (LOCK.FORCE-RELEASE, @admin)",
		 cmd);
}

/* --- integers as Redis reads them --- */

/* A signed integer (Redis's string2ll: no spaces, no '+', no leading 0);
 * false writes Redis's own error. */
static bool parse_ll(struct cmd_call *c, const struct resp_arg *a, int64_t *out)
{
	struct resp_arg digits = *a;
	bool neg = a->len > 1 && a->p[0] == '-';
	if (neg) {
		digits.p++;
		digits.len--;
	}
	if (!rl_parse_int(&digits, out)) {
		resp_add_errorf(c->out, "ERR value is not an integer or out of range");
		return false;
	}
	if (neg)
		*out = -*out;
	return true;
}

/* v units of scale ms, as ms; past any lease (or below) when it would
 * overflow. */
static int64_t to_ms(int64_t v, int64_t scale)
{
	if (v > LT_MAX_LEASE_MS / scale)
		return LT_MAX_LEASE_MS + 1;
	return v < 0 ? 0 : v * scale;
}

static bool is(const struct resp_arg *a, const char *word)
{
	return a->len == strlen(word) && strncasecmp(a->p, word, a->len) == 0;
}

/* --- SET --- */

static void shape_set(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	if (res->status == LS_OK)
		resp_add_simple(out, "OK", 2);
	else
		resp_add_null(out, proto);
}

static void set_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_set);
}

/* SET key value NX PX ms (or EX s; the options in any order): the lock
 * libraries' form, run as a detached lease. *exp is the time, *unit
 * "PX" or "EX". */
static bool lock_form(const struct cmd_call *c, const struct resp_arg **exp, const char **unit)
{
	bool nx = false;
	*exp = NULL;
	if (c->argc != 6)
		return false;
	for (int i = 3; i < c->argc; i++) {
		const struct resp_arg *o = &c->argv[i];
		if (is(o, "NX") && !nx) {
			nx = true;
		} else if ((is(o, "PX") || is(o, "EX")) && *exp == NULL && i + 1 < c->argc) {
			*unit = is(o, "PX") ? "PX" : "EX";
			*exp = &c->argv[++i];
		} else {
			return false;
		}
	}
	return nx && *exp != NULL;
}

/* Any other SET (XX, GET, KEEPTTL, PXAT, EXAT, no NX: an overwrite, no
 * expiry: an error) runs on the keyspace's engine, as in a script. */
static void cmd_set(struct cmd_call *c)
{
	const struct resp_arg *exp;
	const char *unit = NULL;
	int64_t expiry;
	if (!lock_form(c, &exp, &unit)) {
		rl_keyspace(c);
		return;
	}
	if (!parse_ll(c, exp, &expiry))
		return;
	if (expiry <= 0) {
		resp_add_errorf(c->out, "ERR invalid expire time in 'set' command");
		return;
	}
	int64_t scale = unit[0] == 'E' ? 1000 : 1;
	if (!rl_value_ok(&c->argv[2])) {
		resp_add_errorf(
			c->out,
			"ERR a lock's value must be 1 to %d printable ASCII characters, no space "
			"(leasegate keeps it as the lease's owner)",
			LS_VALUE_MAX);
		return;
	}
	if (!rl_check_expiry(c, to_ms(expiry, scale), scale, unit))
		return;
	rl_acquire_detached(c, &c->argv[1], &c->argv[2], expiry * scale, shape_set, set_done);
}

/* --- GET key, PTTL key, TTL key: what the item shows --- */

/* The item shows a lease this replica would not take over yet. */
static bool key_exists(const struct ls_result *res)
{
	return res->status == LS_OK && res->st.exists && res->st.held && res->st.remaining_ms > 0;
}

static void shape_get(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	if (!key_exists(res))
		resp_add_null(out, proto);
	else if (strncmp(res->st.owner, SK_HASHED, 2) == 0) /* a hash: as Redis */
		resp_add_errorf(out, "WRONGTYPE Operation against a key holding the wrong kind of "
				     "value");
	else
		resp_add_cstr(out, ls_owner_value(&res->st));
}

static void shape_pttl(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_int(out, key_exists(res) ? res->st.remaining_ms : -2);
}

/* As Redis rounds a TTL: to the nearest second. */
static void shape_ttl(struct buf *out, enum resp_proto proto, const struct ls_result *res)
{
	resp_add_int(out, key_exists(res) ? (res->st.remaining_ms + 500) / 1000 : -2);
}

static void get_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_get);
}

static void pttl_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_pttl);
}

static void ttl_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, shape_ttl);
}

static void read_key(struct cmd_call *c, ls_done_cb cb, rl_shape_fn shape)
{
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls != NULL)
		rl_answer(c, ls_state(ls, c->argv[1].p, c->argv[1].len, &now, cb, c->sess), &now,
			  shape);
}

static void cmd_get(struct cmd_call *c)
{
	read_key(c, get_done, shape_get);
}

static void cmd_pttl(struct cmd_call *c)
{
	read_key(c, pttl_done, shape_pttl);
}

static void cmd_ttl(struct cmd_call *c)
{
	read_key(c, ttl_done, shape_ttl);
}

/* --- PEXPIRE key ms, EXPIRE key s: renew whatever holds the lock --- */

static void expire_done(void *arg, const struct ls_result *res)
{
	struct ls_result r = *res;
	deny_others(&r, "PEXPIRE");
	rl_done(arg, &r, rl_shape_flag);
}

static void expire(struct cmd_call *c, int64_t scale)
{
	int64_t v;
	if (c->argc > 3) { /* NX, XX, GT, LT: as in a script */
		rl_keyspace(c);
		return;
	}
	if (!parse_ll(c, &c->argv[2], &v))
		return;
	if (!rl_check_expiry(c, to_ms(v, scale), scale,
			     scale == 1 ? "PEXPIRE's time" : "EXPIRE's time"))
		return;
	struct ls_foreign_req req = {
		.name = c->argv[1].p,
		.name_len = c->argv[1].len,
		.op = LS_FX_RENEW,
		.lease_ms = v * scale,
		.detached_only = !rl_may_force(c->sess, &c->argv[1]),
	};
	struct ls_result now;
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	enum ls_status st = ls_foreign(ls, &req, &now, expire_done, c->sess);
	deny_others(&now, "PEXPIRE");
	rl_answer(c, st, &now, rl_shape_flag);
}

static void cmd_pexpire(struct cmd_call *c)
{
	expire(c, 1);
}

static void cmd_expire(struct cmd_call *c)
{
	expire(c, 1000);
}

/* --- DEL key [key ...]: a forced release of each held one ---
 *
 * As Redis for a lock taken by value (SET NX PX, a script's): any
 * connection's DEL ends it. A lease another session took with
 * LOCK.ACQUIRE is ended only with the force-release right; without it
 * DEL answers -NOPERM at that key (the keys before it are released). */

struct del_ctx {
	struct sess *sess;
	struct lsess *ls;
	int n, next;	       /* keys, the next to release */
	long long count;       /* released */
	bool suspended;	       /* answered through sess_out, then resumed */
	struct resp_arg key[]; /* copies, in the same block */
};

static void del_done(void *arg, const struct ls_result *res);

/* Ends DEL: frees d, answers err (an error status) or, when NULL, the
 * count. */
static void del_end(struct del_ctx *d, const struct ls_result *err)
{
	struct sess *s = d->sess;
	bool suspended = d->suspended;
	long long count = d->count;
	free(rl_drop_ctx(s)); /* d */
	if (!suspended || !sess_closed(s)) {
		if (err != NULL)
			rl_render(sess_out(s), sess_proto(s), err, rl_shape_flag);
		else
			resp_add_int(sess_out(s), count);
	}
	if (suspended)
		sess_resume(s);
}

/* Releases the keys from d->next on until one answers later or all have
 * answered; then replies. res: the answer of the key before, or NULL. */
static void del_run(struct del_ctx *d, const struct ls_result *res)
{
	struct ls_result now;
	for (;;) {
		if (res != NULL) {
			struct ls_result r = *res;
			deny_others(&r, "DEL");
			if (r.status > LS_NONE) { /* an error: stop there */
				del_end(d, &r);
				return;
			}
			d->count += r.status == LS_OK;
		}
		if (d->next == d->n)
			break;
		const struct resp_arg *k = &d->key[d->next++];
		struct ls_foreign_req req = {.name = k->p,
					     .name_len = k->len,
					     .op = LS_FX_FORCE,
					     .detached_only = !rl_may_force(d->sess, k)};
		enum ls_status st = ls_foreign(d->ls, &req, &now, del_done, d);
		if (st == LS_PENDING) {
			if (!d->suspended)
				sess_suspend(d->sess);
			d->suspended = true;
			return;
		}
		res = &now;
	}
	del_end(d, NULL);
}

static void del_done(void *arg, const struct ls_result *res)
{
	del_run(arg, res);
}

static void cmd_del(struct cmd_call *c)
{
	struct lsess *ls = rl_lsess(c->arg, c);
	if (ls == NULL)
		return;
	int n = c->argc - 1;
	size_t bytes = sizeof(struct del_ctx) + (size_t)n * sizeof(struct resp_arg);
	for (int i = 1; i < c->argc; i++)
		bytes += c->argv[i].len + 1;
	struct del_ctx *d = malloc(bytes);
	if (d == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	*d = (struct del_ctx){.sess = c->sess, .ls = ls, .n = n};
	char *names = (char *)&d->key[n];
	for (int i = 0; i < n; i++) {
		memcpy(names, c->argv[i + 1].p, c->argv[i + 1].len + 1);
		d->key[i] = (struct resp_arg){.p = names, .len = c->argv[i + 1].len};
		names += c->argv[i + 1].len + 1;
	}
	rl_keep_ctx(c->sess, d);
	del_run(d, NULL);
}

/* Kept together, to ease merges: the key commands of lock libraries. */
/* ACL categories as Redis gives these commands, and @lock: they act on
 * locks. */
#define KEYW (ACL_KEYSPACE | ACL_WRITE | ACL_LOCK)
#define KEYR (ACL_KEYSPACE | ACL_READ | ACL_LOCK)
static const struct cmd_def compat_cmds[] = {
	{.name = "set",
	 .fn = cmd_set,
	 .arity = -3,
	 .flags = CMD_DENYOOM,
	 .acl = ACL_WRITE | ACL_STRING | ACL_SLOW | ACL_LOCK,
	 .key = 1,
	 .summary = "Sets a lock key: SET key value NX PX ms takes a lock; XX, GET, KEEPTTL, "
		    "PXAT, EXAT as Redis, a key needs an expiry.",
	 .group = "string",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0}, {"value", CMD_ARG_STRING, NULL, 0},
			  {"nx", CMD_ARG_PURE_TOKEN, "NX", CMD_ARG_OPTIONAL},
			  {"xx", CMD_ARG_PURE_TOKEN, "XX", CMD_ARG_OPTIONAL},
			  {"get", CMD_ARG_PURE_TOKEN, "GET", CMD_ARG_OPTIONAL},
			  {"milliseconds", CMD_ARG_INTEGER, "PX", CMD_ARG_OPTIONAL},
			  {"seconds", CMD_ARG_INTEGER, "EX", CMD_ARG_OPTIONAL},
			  {"unix-time-milliseconds", CMD_ARG_INTEGER, "PXAT", CMD_ARG_OPTIONAL},
			  {"unix-time-seconds", CMD_ARG_INTEGER, "EXAT", CMD_ARG_OPTIONAL},
			  {"keepttl", CMD_ARG_PURE_TOKEN, "KEEPTTL", CMD_ARG_OPTIONAL})},
	{.name = "get",
	 .fn = cmd_get,
	 .arity = 2,
	 .acl = ACL_READ | ACL_STRING | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "Returns the lock library value of a lock held through SET.",
	 .group = "string",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "del",
	 .fn = cmd_del,
	 .arity = -2,
	 .acl = KEYW | ACL_SLOW,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .summary = "Releases locks held through SET.",
	 .group = "keyspace",
	 .complexity = "O(N) keys",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, CMD_ARG_MULTIPLE})},
	{.name = "pexpire",
	 .fn = cmd_pexpire,
	 .arity = -3,
	 .acl = KEYW | ACL_FAST,
	 .key = 1,
	 .summary = "Sets a lock's lease in milliseconds.",
	 .group = "keyspace",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0},
			  {"milliseconds", CMD_ARG_INTEGER, NULL, 0})},
	{.name = "expire",
	 .fn = cmd_expire,
	 .arity = -3,
	 .acl = KEYW | ACL_FAST,
	 .key = 1,
	 .summary = "Sets a lock's lease in seconds.",
	 .group = "keyspace",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0}, {"seconds", CMD_ARG_INTEGER, NULL, 0})},
	{.name = "pttl",
	 .fn = cmd_pttl,
	 .arity = 2,
	 .acl = KEYR | ACL_FAST,
	 .key = 1,
	 .summary = "Returns a lock's lease left in milliseconds.",
	 .group = "keyspace",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "ttl",
	 .fn = cmd_ttl,
	 .arity = 2,
	 .acl = KEYR | ACL_FAST,
	 .key = 1,
	 .summary = "Returns a lock's lease left in seconds.",
	 .group = "keyspace",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
};

int rl_compatcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, compat_cmds, sizeof(compat_cmds) / sizeof(compat_cmds[0]), app);
}
