/*
 * redis/scriptcmds: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT — Lua
 * scripts run over the lock keyspace by the engine of gateway/script (a
 * script is one serializable transaction: its KEYS read, the script run,
 * its reads validated and its writes committed at once), their replies
 * rendered here as RESP2 or RESP3 as Redis converts Lua values.
 *
 * Scripts are cached by SHA1 in this process (SCRIPT LOAD, EVAL) and in
 * the table (core/store_blob.h, items SCRIPT#<sha1>), so that a script
 * loaded on one replica runs by EVALSHA on every other: SCRIPT LOAD
 * answers once the table has it, EVAL of a script new here writes it in
 * the background, and EVALSHA of a SHA1 not cached here reads the table
 * once (GetItem) and caches what it finds (NOSCRIPT only when the table
 * has none). SCRIPT FLUSH forgets this replica's copies only. An EVALSHA
 * of a SHA1 not cached that is one of the lock scripts leasegate knew
 * before it ran Lua (redis-py's Lock, redlock 4) still runs as that
 * script's lease operation, as before, without reading the table.
 *
 * Not here: the key commands outside scripts (compatcmds.c), the lease
 * rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/redis/leases.h"
#include "gateway/config.h"
#include "gateway/redis/session.h"
#include "core/locktable.h"
#include "core/store/store_blob.h"
#include "gateway/obs/log.h"
#include "gateway/script/script_run.h"

#define BLOB_SCRIPT "SCRIPT" /* the kind of the table's script items */

#define SHA1_HEX 40

/* What a script does to the lock KEYS[1], with ARGV[1] the library's
 * value for its lease. */
enum sc_op {
	SC_ACQUIRE, /* a detached lease with value, lease ARGV[ms]: 1, or 0 when held */
	SC_RELEASE, /* release the lease of value: 1, or 0 (not its lease) */
	SC_RENEW,   /* renew the lease of value, lease ARGV[ms] (or what remains
		       plus it, when ARGV[add] is "0"): 1, or 0 (not its lease) */
};

struct known_script {
	const char *sha1; /* of the script's exact bytes, lower-case hex */
	const char *library;
	const char *name;
	enum sc_op op;
	int nargs;   /* ARGV count (KEYS: always 1) */
	int ms_arg;  /* ARGV index (from 1) of the lease in ms; 0: none */
	int add_arg; /* ARGV index of the "0" (add to what remains) / "1"
			(replace) flag; 0: none (replace) */
};

/*
 * The scripts, read from each library's own source (never copied here):
 *
 * redis-py 4.3.4, redis/lock.py (the same in redis/asyncio/lock.py), class
 * Lock; called through Script objects: EVALSHA, and on NOSCRIPT a SCRIPT
 * LOAD then EVALSHA again.
 *   LUA_RELEASE_SCRIPT   KEYS[1] lock, ARGV[1] token: if GET key is the
 *                        token, DEL it and return 1, else 0.
 *   LUA_EXTEND_SCRIPT    ARGV[1] token, ARGV[2] ms, ARGV[3] "0" (add to the
 *                        PTTL) or "1" (replace): if GET is the token and the
 *                        key has a TTL, PEXPIRE it and return 1, else 0.
 *   LUA_REACQUIRE_SCRIPT ARGV[1] token, ARGV[2] ms: if GET is the token,
 *                        PEXPIRE key ms and return 1, else 0.
 *
 * redlock 4.2.0 (npm), redlock.js; called with EVALSHA, and on NOSCRIPT
 * EVAL with the body. KEYS are the resources: one runs as below, several
 * (NOSCRIPT, see fits) as Lua.
 *   lockScript    ARGV[1] value, ARGV[2] ms: 0 if any key exists, else SET
 *                 each key to value PX ms and return #KEYS.
 *   unlockScript  ARGV[1] value: DEL each key whose GET is value, return
 *                 how many.
 *   extendScript  ARGV[1] value, ARGV[2] ms: 0 if a key's GET is not
 *                 value, else SET each key value PX ms, return #KEYS.
 */
static const struct known_script scripts[] = {
	{"c3f8721cbb97f72bc19e972846bd7aaf91901658", "redis-py Lock", "release", SC_RELEASE, 1, 0,
	 0},
	{"a4e8783852e6b949f9ef3a97212805108459a890", "redis-py Lock", "extend", SC_RENEW, 3, 2, 3},
	{"1cac51482acf5858da00f6d685d68f886cd6b6b2", "redis-py Lock", "reacquire", SC_RENEW, 2, 2,
	 0},
	{"e5a322e2634ef59a516e8ea150cb085afafee684", "redlock", "lock", SC_ACQUIRE, 2, 2, 0},
	{"0f0f23b9048b36752b5be114f357ba083449f908", "redlock", "unlock", SC_RELEASE, 1, 0, 0},
	{"ce46f80993d5dac20dd066eb301a4e37994bdbed", "redlock", "extend", SC_RENEW, 2, 2, 0},
};

#define NSCRIPTS (sizeof(scripts) / sizeof(scripts[0]))

static const struct known_script *find_sha(const char *hex, size_t len)
{
	if (len != SHA1_HEX)
		return NULL;
	for (size_t i = 0; i < NSCRIPTS; i++)
		if (strncasecmp(scripts[i].sha1, hex, SHA1_HEX) == 0)
			return &scripts[i];
	return NULL;
}

/* --- running a script: one lease operation --- */

static void flag_done(void *arg, const struct ls_result *res)
{
	rl_done(arg, res, rl_shape_flag);
}

/* A script's ms argument; false writes the error. */
static bool script_ms(struct cmd_call *c, const struct resp_arg *a, int64_t *ms)
{
	if (rl_parse_int(a, ms))
		return true;
	resp_add_errorf(c->out, "ERR value is not an integer or out of range");
	return false;
}

static void run(struct cmd_call *c, const struct known_script *k, const struct resp_arg *key,
		const struct resp_arg *args)
{
	const struct resp_arg *value = &args[0];
	int64_t ms = 0;
	bool add =
		k->add_arg > 0 && args[k->add_arg - 1].len == 1 && args[k->add_arg - 1].p[0] == '0';
	if (k->ms_arg > 0) {
		if (!script_ms(c, &args[k->ms_arg - 1], &ms))
			return;
		/* a lease is checked whole; time added to what remains is
		 * checked by the layer, with the sum */
		if (add && ms > rl_max_lease_ms(c)) {
			(void)rl_check_expiry(c, ms, 1, "the time added");
			return;
		}
		if (!add && !rl_check_expiry(c, ms, 1, "the lock's time"))
			return;
	}
	if (!rl_value_ok(value)) {
		if (k->op == SC_ACQUIRE)
			resp_add_errorf(c->out,
					"ERR a lock's value must be 1 to %d printable ASCII "
					"characters, no space "
					"(leasegate keeps it as the lease's owner)",
					LS_VALUE_MAX);
		else
			resp_add_int(c->out, 0); /* no lease has that value */
		return;
	}
	if (k->op == SC_ACQUIRE) {
		rl_acquire_detached(c, key, value, ms, rl_shape_flag, flag_done);
		return;
	}
	struct ls_foreign_req req = {
		.name = key->p,
		.name_len = key->len,
		.op = k->op == SC_RELEASE ? LS_FX_RELEASE : LS_FX_RENEW,
		.value = value->p,
		.value_len = value->len,
		.lease_ms = ms,
		.add_remaining = add,
	};
	rl_foreign_flag(c, &req);
}

/* EVALSHA's "numkeys key... arg..." are k's shape: one key (one lock)
 * and k->nargs arguments. Any other call of that SHA1 (redlock on several
 * resources) answers NOSCRIPT, as for a script not loaded, and the library
 * sends EVAL with the body, which runs as Lua over all its keys. */
static bool fits(const struct cmd_call *c, const struct known_script *k)
{
	const struct resp_arg *nk = &c->argv[2];
	return nk->len == 1 && nk->p[0] == '1' && c->argc - 4 == k->nargs;
}

/* --- running Lua --- */

#define SCRIPT_MAX_MS	 500	    /* wall clock of one run */
#define SCRIPT_MAX_INSTR 50000000   /* instructions of one run */
#define SCRIPT_MAX_BYTES (32 << 20) /* memory one run may add */

struct sr_engine *rl_script_engine(struct cmd_call *c)
{
	struct rl_app *app = c->arg;
	if (app->scripts != NULL)
		return app->scripts;
	const struct cfg *cfg = sess_fe(c->sess)->cfg;
	struct sr_config sc = {
		.limits = {.max_instructions = SCRIPT_MAX_INSTR,
			   .max_ms = SCRIPT_MAX_MS,
			   .max_bytes = SCRIPT_MAX_BYTES},
		.min_lease_ms = LT_MIN_LEASE_MS,
		.max_lease_ms = rl_max_lease_ms(c),
		.ttl_retention_ms = cfg->ttl_attribute[0] != '\0' ? cfg->ttl_retention_ms : 0,
		.subscribers = rl_pubsub_count,
		.publish = rl_pubsub_publish,
		.pub_arg = app,
	};
	app->scripts = sr_new(app->store, app->lt, lt_clock(app->lt), &sc);
	if (app->scripts == NULL)
		resp_add_errorf(c->out, "ERR out of memory starting the script engine");
	return app->scripts;
}

static struct sr_engine *engine(struct cmd_call *c)
{
	return rl_script_engine(c);
}

void rl_render_sv(struct buf *out, enum resp_proto proto, const struct sv *v)
{
	switch (v->type) {
	case SV_INT:
		resp_add_int(out, v->i);
		break;
	case SV_BULK:
		resp_add_bulk(out, v->s, v->len);
		break;
	case SV_STATUS:
		resp_add_simple(out, v->s, v->len);
		break;
	case SV_ERROR:
		if (v->s == NULL)
			resp_add_errorf(out, "ERR out of memory");
		else
			resp_add_error(out, v->s, v->len);
		break;
	case SV_ARRAY:
		resp_add_array(out, v->n);
		for (size_t i = 0; i < v->n; i++)
			rl_render_sv(out, proto, &v->a[i]);
		break;
	case SV_BOOL: /* RESP2: true is 1, false nil; RESP3: a boolean */
		if (proto == RESP3)
			resp_add_bool(out, proto, v->i != 0);
		else if (v->i)
			resp_add_int(out, 1);
		else
			resp_add_null(out, proto);
		break;
	case SV_DOUBLE:
		resp_add_double(out, proto, v->d);
		break;
	case SV_NIL:
	default:
		resp_add_null(out, proto);
		break;
	}
}

static void script_done(void *arg, struct sv *result)
{
	struct sess *s = arg;
	if (!sess_closed(s))
		rl_render_sv(sess_out(s), sess_proto(s), result);
	sess_resume(s);
	sess_unref(s);
}

/* "numkeys key... arg..." of EVAL and its kin: false with the error. */
static bool numkeys(struct cmd_call *c, int *n)
{
	int64_t v;
	struct resp_arg nk = c->argv[2];
	if (nk.len > 1 && nk.p[0] == '-') {
		resp_add_errorf(c->out, "ERR Number of keys can't be negative");
		return false;
	}
	if (!rl_parse_int(&nk, &v)) {
		resp_add_errorf(c->out, "ERR value is not an integer or out of range");
		return false;
	}
	if (v > c->argc - 3) {
		resp_add_errorf(c->out, "ERR Number of keys can't be greater than number of args");
		return false;
	}
	*n = (int)v;
	return true;
}

/* Runs the cached script sha with c's keys and arguments. */
/* Runs the cached script sha with c's keys and arguments: true when a job
 * started (it answers, resumes and unrefs the session), false with the
 * reply written. suspended: the caller has suspended and referenced the
 * session already (the job takes both over). */
static bool run_lua_job(struct cmd_call *c, struct sr_engine *e, const char *sha, bool ro,
			bool suspended)
{
	int nk;
	if (!numkeys(c, &nk))
		return false;
	int na = c->argc - 3 - nk;
	const char *ptrs[2 * 1024];
	size_t lens[2 * 1024];
	if (nk + na > 2 * 1024) {
		resp_add_errorf(c->out,
				"ERR a script of leasegate takes at most %d keys and "
				"arguments",
				2 * 1024);
		return false;
	}
	for (int i = 0; i < nk + na; i++) {
		ptrs[i] = c->argv[3 + i].p;
		lens[i] = c->argv[3 + i].len;
	}
	struct sr_req req = {.sha = sha,
			     .nkeys = nk,
			     .nargs = na,
			     .keys = ptrs,
			     .args = ptrs + nk,
			     .key_lens = lens,
			     .arg_lens = lens + nk,
			     .ro = ro || sl_script_ro(sr_vm(e), sha)};
	struct sv err = {.type = SV_NIL};
	if (sr_start(e, &req, script_done, c->sess, &err) == NULL) {
		rl_render_sv(c->out, c->proto, &err);
		sv_clear(&err);
		return false;
	}
	if (!suspended) {
		sess_ref(c->sess);
		sess_suspend(c->sess);
	}
	return true;
}

static void run_lua(struct cmd_call *c, struct sr_engine *e, const char *sha, bool ro)
{
	(void)run_lua_job(c, e, sha, ro, false);
}

/* --- the script cache in the table (core/store_blob.h) --- */

/* A put nobody waits for (EVAL of a script new here): logged if it fails. */
static void put_logged(void *arg, const struct store_blob_result *res)
{
	if (res->status != STORE_OK)
		log_msg(LOG_LVL_WARN, "script cache: writing a script to the table failed: %s",
			res->message);
}

/* Writes the cached script sha to the table, nobody waiting. */
static void put_background(struct rl_app *app, struct sr_engine *e, const char *sha)
{
	size_t len = 0;
	const char *body = sl_body(sr_vm(e), sha, &len);
	if (body != NULL &&
	    store_blob_put(app->store, BLOB_SCRIPT, sha, body, len, put_logged, NULL) == NULL)
		log_msg(LOG_LVL_WARN, "script cache: script %s not written to the table", sha);
}

/* An EVALSHA or SCRIPT LOAD waiting for the table: the session (held),
 * the command's arguments copied (EVALSHA runs them once the script is
 * read). */
struct table_wait {
	struct sess *sess;
	struct rl_app *app;
	bool ro;
	char sha[SL_SHA_HEX + 1];
	int argc;
	struct resp_arg *argv;
	char text[];
};

static struct table_wait *wait_new(struct cmd_call *c, const char *sha)
{
	size_t bytes = sizeof(struct table_wait) + (size_t)c->argc * sizeof(struct resp_arg);
	for (int i = 0; i < c->argc; i++)
		bytes += c->argv[i].len + 1;
	struct table_wait *w = malloc(bytes);
	if (w == NULL)
		return NULL;
	*w = (struct table_wait){.sess = c->sess, .app = c->arg, .argc = c->argc};
	snprintf(w->sha, sizeof(w->sha), "%s", sha);
	w->argv = (struct resp_arg *)(void *)w->text;
	char *at = w->text + (size_t)c->argc * sizeof(struct resp_arg);
	for (int i = 0; i < c->argc; i++) {
		memcpy(at, c->argv[i].p, c->argv[i].len);
		at[c->argv[i].len] = '\0';
		w->argv[i] = (struct resp_arg){.p = at, .len = c->argv[i].len};
		at += c->argv[i].len + 1;
	}
	return w;
}

static void wait_end(struct table_wait *w)
{
	struct sess *s = w->sess;
	free(w);
	sess_resume(s);
	sess_unref(s);
}

/* SCRIPT LOAD's put answered: the SHA1 once the table has the script. */
static void load_put_done(void *arg, const struct store_blob_result *res)
{
	struct table_wait *w = arg;
	struct sess *s = w->sess;
	if (sess_closed(s))
		;
	else if (res->status == STORE_OK)
		resp_add_bulk(sess_out(s), w->sha, SL_SHA_HEX);
	else
		resp_add_errorf(sess_out(s),
				"%s the script is cached on this replica, but writing it to the "
				"table for the other replicas failed: %s",
				res->status == STORE_TRANSIENT ? "TRYAGAIN" : "ERR", res->message);
	wait_end(w);
}

/* EVALSHA's read of the table answered: the script compiled and run, or
 * NOSCRIPT when the table has none. */
static void evalsha_get_done(void *arg, const struct store_blob_result *res)
{
	struct table_wait *w = arg;
	struct sess *s = w->sess;
	if (sess_closed(s)) {
		wait_end(w);
		return;
	}
	struct cmd_call c = {.sess = s,
			     .argc = w->argc,
			     .argv = w->argv,
			     .out = sess_out(s),
			     .proto = sess_proto(s),
			     .arg = w->app};
	struct sr_engine *e = w->app->scripts;
	char sha[SL_SHA_HEX + 1], err[256];
	if (res->status != STORE_OK) {
		resp_add_errorf(c.out, "%s reading script %s from the table: %s",
				res->status == STORE_TRANSIENT ? "TRYAGAIN" : "ERR", w->sha,
				res->message);
	} else if (!res->found) {
		resp_add_errorf(c.out, "NOSCRIPT No matching script. Please use EVAL.");
	} else if (!sl_load(sr_vm(e), res->data, res->len, sha, err, sizeof(err)) ||
		   strcmp(sha, w->sha) != 0) {
		log_msg(LOG_LVL_WARN, "script cache: the table's script %s is not that script",
			w->sha);
		resp_add_errorf(c.out, "NOSCRIPT No matching script. Please use EVAL.");
	} else if (run_lua_job(&c, e, sha, w->ro, true)) {
		free(w); /* the job answers, resumes and unrefs */
		return;
	}
	wait_end(w);
}

/* Reads sha from the table for c (EVALSHA of a script not cached here),
 * holding the session until it runs; false when the read could not be
 * sent (the caller answers). */
static bool evalsha_from_table(struct cmd_call *c, const char *sha, bool ro)
{
	struct rl_app *app = c->arg;
	struct table_wait *w = wait_new(c, sha);
	if (w == NULL)
		return false;
	w->ro = ro;
	if (store_blob_get(app->store, BLOB_SCRIPT, sha, evalsha_get_done, w) == NULL) {
		free(w);
		return false;
	}
	sess_ref(c->sess);
	sess_suspend(c->sess);
	return true;
}

static void eval(struct cmd_call *c, bool ro)
{
	struct sr_engine *e = engine(c);
	if (e == NULL)
		return;
	char sha[SL_SHA_HEX + 1], err[256];
	size_t before = sl_count(sr_vm(e));
	if (!sl_load(sr_vm(e), c->argv[1].p, c->argv[1].len, sha, err, sizeof(err))) {
		resp_add_error(c->out, err, strlen(err));
		return;
	}
	if (sl_count(sr_vm(e)) > before) /* new here: the other replicas may lack it */
		put_background(c->arg, e, sha);
	run_lua(c, e, sha, ro);
}

static void evalsha(struct cmd_call *c, bool ro)
{
	struct sr_engine *e = engine(c);
	if (e == NULL)
		return;
	const struct resp_arg *a = &c->argv[1];
	if (sl_exists(sr_vm(e), a->p, a->len)) {
		char sha[SL_SHA_HEX + 1];
		for (size_t i = 0; i < SL_SHA_HEX; i++)
			sha[i] = (char)(a->p[i] >= 'A' && a->p[i] <= 'F' ? a->p[i] + 32 : a->p[i]);
		sha[SL_SHA_HEX] = '\0';
		run_lua(c, e, sha, ro);
		return;
	}
	const struct known_script *k = find_sha(a->p, a->len);
	if (k != NULL && !ro && fits(c, k)) { /* not loaded here: the lease operation */
		run(c, k, &c->argv[3], &c->argv[4]);
		return;
	}
	char sha[SL_SHA_HEX + 1];
	bool hex = a->len == SL_SHA_HEX;
	for (size_t i = 0; hex && i < SL_SHA_HEX; i++) {
		char ch = (char)(a->p[i] >= 'A' && a->p[i] <= 'F' ? a->p[i] + 32 : a->p[i]);
		hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
		sha[i] = ch;
	}
	sha[SL_SHA_HEX] = '\0';
	/* loaded on another replica (SCRIPT LOAD, EVAL): the table has it */
	if (!hex || !evalsha_from_table(c, sha, ro))
		resp_add_errorf(c->out, "NOSCRIPT No matching script. Please use EVAL.");
}

static void cmd_evalsha(struct cmd_call *c)
{
	evalsha(c, false);
}

static void cmd_evalsha_ro(struct cmd_call *c)
{
	evalsha(c, true);
}

static void cmd_eval(struct cmd_call *c)
{
	eval(c, false);
}

static void cmd_eval_ro(struct cmd_call *c)
{
	eval(c, true);
}

/* --- SCRIPT LOAD | EXISTS | FLUSH | KILL | HELP --- */

static void c_script_load(struct cmd_call *c)
{
	struct sr_engine *e = engine(c);
	if (e == NULL)
		return;
	char sha[SL_SHA_HEX + 1], err[256];
	if (!sl_load(sr_vm(e), c->argv[2].p, c->argv[2].len, sha, err, sizeof(err))) {
		resp_add_error(c->out, err, strlen(err));
		return;
	}
	/* answered once the table has it: an EVALSHA on another replica
	 * right after finds it */
	struct table_wait *w = wait_new(c, sha);
	if (w == NULL || store_blob_put(((struct rl_app *)c->arg)->store, BLOB_SCRIPT, sha,
					c->argv[2].p, c->argv[2].len, load_put_done, w) == NULL) {
		free(w);
		resp_add_errorf(c->out, "ERR out of memory writing the script to the table");
		return;
	}
	sess_ref(c->sess);
	sess_suspend(c->sess);
}

static void c_script_exists(struct cmd_call *c)
{
	struct sr_engine *e = engine(c);
	if (e == NULL)
		return;
	resp_add_array(c->out, (size_t)(c->argc - 2));
	for (int i = 2; i < c->argc; i++)
		resp_add_int(c->out, sl_exists(sr_vm(e), c->argv[i].p, c->argv[i].len) ||
					     find_sha(c->argv[i].p, c->argv[i].len) != NULL);
}

static void c_script_flush(struct cmd_call *c)
{
	if (c->argc > 3 || (c->argc == 3 && strcasecmp(c->argv[2].p, "ASYNC") != 0 &&
			    strcasecmp(c->argv[2].p, "SYNC") != 0)) {
		resp_add_errorf(c->out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
		return;
	}
	struct sr_engine *e = engine(c);
	if (e == NULL)
		return;
	sl_flush(sr_vm(e));
	resp_add_simple(c->out, "OK", 2);
}

/* A script runs within one turn of the loop: none is ever running when
 * a command is read. */
static void c_script_kill(struct cmd_call *c)
{
	resp_add_errorf(c->out, "NOTBUSY No scripts in execution right now.");
}

static void c_script_help(struct cmd_call *c)
{
	static const char *const lines[] = {
		"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"EXISTS <sha1> [<sha1> ...]",
		"    1 for each script cached here (or one of the lock scripts leasegate knows).",
		"FLUSH [ASYNC|SYNC]",
		"    Forgets the scripts cached on this replica (not those in the table).",
		"KILL",
		"    NOTBUSY: a script runs within its command, under a time limit.",
		"LOAD <script>",
		"    Compiles and caches the script; answers its SHA1.",
		"HELP",
		"    Prints this help.",
	};
	resp_add_array(c->out, sizeof(lines) / sizeof(lines[0]));
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		resp_add_simple(c->out, lines[i], strlen(lines[i]));
}

static const struct cmd_def script_subs[] = {
	{.name = "load",
	 .fn = c_script_load,
	 .arity = 3,
	 .flags = CMD_NOSCRIPT | CMD_STALE,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "Compiles and caches a Lua script, here and in the table for every "
		    "replica: its SHA1.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"script", CMD_ARG_STRING, NULL, 0})},
	{.name = "exists",
	 .fn = c_script_exists,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "Says which SHA1s name cached scripts.",
	 .group = "scripting",
	 .complexity = "O(N) scripts",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"sha1", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "flush",
	 .fn = c_script_flush,
	 .arity = -2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "Forgets the scripts cached on this replica; the table keeps its copies.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"async", CMD_ARG_PURE_TOKEN, "ASYNC", CMD_ARG_OPTIONAL},
			  {"sync", CMD_ARG_PURE_TOKEN, "SYNC", CMD_ARG_OPTIONAL})},
	{.name = "kill",
	 .fn = c_script_kill,
	 .arity = 2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "NOTBUSY: a script runs within its command.",
	 .group = "scripting",
	 .since = CMD_SINCE},
	{.name = "help",
	 .fn = c_script_help,
	 .arity = 2,
	 .flags = CMD_STALE,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "Lists the SCRIPT subcommands.",
	 .group = "scripting",
	 .since = CMD_SINCE},
	{.name = NULL},
};

#define SCRIPT_CATS (ACL_SLOW | ACL_SCRIPTING | ACL_WRITE | ACL_LOCK)

/* The arguments of EVAL and its kin: the script or its SHA1 (first), then
 * numkeys, the keys and the arguments. */
#define SCRIPT_ARGS(first)                                                                         \
	CMD_ARGS({first, CMD_ARG_STRING, NULL, 0}, {"numkeys", CMD_ARG_INTEGER, NULL, 0},          \
		 {"key", CMD_ARG_KEY, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE},                  \
		 {"arg", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})

/* Kept together, to ease merges: the script commands of lock libraries. */
static const struct cmd_def script_cmds[] = {
	/* the scripts take, renew and release locks: @write @lock, and their
	 * lock names are the numkeys keys */
	{.name = "evalsha",
	 .fn = cmd_evalsha,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = SCRIPT_CATS,
	 .key = 2,
	 .key_last = CMD_KEYS_NUMKEYS,
	 .summary = "Runs a cached Lua script over the lock keyspace by its SHA1.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = SCRIPT_ARGS("sha1")},
	{.name = "eval",
	 .fn = cmd_eval,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = SCRIPT_CATS,
	 .key = 2,
	 .key_last = CMD_KEYS_NUMKEYS,
	 .summary = "Runs a Lua script over the lock keyspace, as one transaction.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = SCRIPT_ARGS("script")},
	{.name = "evalsha_ro",
	 .fn = cmd_evalsha_ro,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING | ACL_READ | ACL_LOCK,
	 .key = 2,
	 .key_last = CMD_KEYS_NUMKEYS,
	 .summary = "Runs a cached Lua script that only reads, by its SHA1.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = SCRIPT_ARGS("sha1")},
	{.name = "eval_ro",
	 .fn = cmd_eval_ro,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING | ACL_READ | ACL_LOCK,
	 .key = 2,
	 .key_last = CMD_KEYS_NUMKEYS,
	 .summary = "Runs a Lua script that only reads the lock keyspace.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = SCRIPT_ARGS("script")},
	{.name = "script",
	 .arity = -2,
	 .subs = script_subs,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "A container for script commands.",
	 .group = "scripting",
	 .since = CMD_SINCE},
};

int rl_scriptcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	return cmd_table_add(cmds, script_cmds, sizeof(script_cmds) / sizeof(script_cmds[0]), app);
}
