/*
 * redis/scriptcmds: EVALSHA, EVAL and SCRIPT for the Lua scripts of Redis
 * lock libraries. leasegate runs no Lua: it knows a few scripts by the
 * SHA1 of their exact bytes (as Redis names a script) and does what each
 * one does to a lock, as one lease operation — a release or a renewal by
 * the library's value (ls_foreign), or a detached acquire (ls_acquire).
 * Any other script is refused: EVALSHA with NOSCRIPT (so that a library
 * falls back to SCRIPT LOAD or EVAL, which then say what is supported),
 * EVAL and SCRIPT LOAD with an error naming the libraries.
 *
 * The known scripts are always "loaded": SCRIPT EXISTS answers 1 for
 * them, SCRIPT FLUSH forgets nothing.
 *
 * Not here: the key commands (compatcmds.c), the lease rules.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

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
 * EVAL with the body. KEYS are the resources (leasegate: exactly one).
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

#define SUPPORTED                                                                                  \
	"leasegate runs no Lua; it knows the lock scripts of redis-py's Lock (release, extend, "   \
	"reacquire) and of redlock 4 for Node.js (lock, unlock, extend; one resource per lock), "  \
	"see docs/guides/redis-lock-libraries.md"

static const struct known_script *find_sha(const char *hex, size_t len)
{
	if (len != SHA1_HEX)
		return NULL;
	for (size_t i = 0; i < NSCRIPTS; i++)
		if (strncasecmp(scripts[i].sha1, hex, SHA1_HEX) == 0)
			return &scripts[i];
	return NULL;
}

/* The SHA1 of body in lower-case hex, as Redis names a script. False on
 * an OpenSSL failure. */
static bool sha1_hex(const struct resp_arg *body, char out[SHA1_HEX + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(body->p, body->len, md, &n, EVP_sha1(), NULL) || n * 2 != SHA1_HEX)
		return false;
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return true;
}

/* The known script whose bytes are body; NULL when none (or SHA1 failed:
 * *hex is then ""). */
static const struct known_script *find_body(const struct resp_arg *body, char hex[SHA1_HEX + 1])
{
	if (!sha1_hex(body, hex)) {
		hex[0] = '\0';
		return NULL;
	}
	return find_sha(hex, SHA1_HEX);
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

/* EVAL/EVALSHA's "numkeys key... arg...": checks them against k, then runs
 * it. */
static void eval_known(struct cmd_call *c, const struct known_script *k)
{
	int64_t numkeys;
	struct resp_arg nk = c->argv[2];
	if (nk.len > 1 && nk.p[0] == '-') {
		resp_add_errorf(c->out, "ERR Number of keys can't be negative");
		return;
	}
	if (!rl_parse_int(&nk, &numkeys)) {
		resp_add_errorf(c->out, "ERR value is not an integer or out of range");
		return;
	}
	if (numkeys > c->argc - 3) {
		resp_add_errorf(c->out, "ERR Number of keys can't be greater than number of args");
		return;
	}
	int nargs = c->argc - 3 - (int)numkeys;
	if (numkeys != 1 || nargs != k->nargs) {
		resp_add_errorf(c->out,
				"ERR leasegate runs %s's %s script with 1 key (one lock) and %d "
				"argument%s; got %lld key%s and %d argument%s",
				k->library, k->name, k->nargs, k->nargs == 1 ? "" : "s",
				(long long)numkeys, numkeys == 1 ? "" : "s", nargs,
				nargs == 1 ? "" : "s");
		return;
	}
	run(c, k, &c->argv[3], &c->argv[4]);
}

static void cmd_evalsha(struct cmd_call *c)
{
	const struct known_script *k = find_sha(c->argv[1].p, c->argv[1].len);
	if (k == NULL) {
		resp_add_errorf(c->out,
				"NOSCRIPT No matching script. Please use EVAL. (" SUPPORTED ")");
		return;
	}
	eval_known(c, k);
}

static void cmd_eval(struct cmd_call *c)
{
	char hex[SHA1_HEX + 1];
	const struct known_script *k = find_body(&c->argv[1], hex);
	if (k == NULL) {
		resp_add_errorf(c->out, "ERR unknown script (sha1 %s): " SUPPORTED, hex);
		return;
	}
	eval_known(c, k);
}

/* --- SCRIPT LOAD | EXISTS | FLUSH | HELP --- */

static void c_script_load(struct cmd_call *c)
{
	char hex[SHA1_HEX + 1];
	if (find_body(&c->argv[2], hex) == NULL)
		resp_add_errorf(c->out, "ERR unknown script (sha1 %s): " SUPPORTED, hex);
	else
		resp_add_bulk(c->out, hex, SHA1_HEX);
}

static void c_script_exists(struct cmd_call *c)
{
	resp_add_array(c->out, (size_t)(c->argc - 2));
	for (int i = 2; i < c->argc; i++)
		resp_add_int(c->out, find_sha(c->argv[i].p, c->argv[i].len) != NULL);
}

static void c_script_flush(struct cmd_call *c)
{
	if (c->argc > 3 || (c->argc == 3 && strcasecmp(c->argv[2].p, "ASYNC") != 0 &&
			    strcasecmp(c->argv[2].p, "SYNC") != 0)) {
		resp_add_errorf(c->out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
		return;
	}
	resp_add_simple(c->out, "OK", 2); /* the known scripts stay known */
}

static void c_script_help(struct cmd_call *c)
{
	static const char *const lines[] = {
		"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"EXISTS <sha1> [<sha1> ...]",
		"    1 for each script leasegate knows (the lock scripts of known libraries).",
		"FLUSH [ASYNC|SYNC]",
		"    OK: the known scripts stay known.",
		"LOAD <script>",
		"    The script's SHA1 when it is one leasegate knows; it runs no Lua.",
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
	 .summary = "Loads a known lock library script: its SHA1.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"script", CMD_ARG_STRING, NULL, 0})},
	{.name = "exists",
	 .fn = c_script_exists,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "Says which SHA1s name known scripts.",
	 .group = "scripting",
	 .complexity = "O(N) scripts",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"sha1", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "flush",
	 .fn = c_script_flush,
	 .arity = -2,
	 .flags = CMD_NOSCRIPT,
	 .acl = ACL_SLOW | ACL_SCRIPTING,
	 .summary = "Accepted; the known scripts stay.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"async", CMD_ARG_PURE_TOKEN, "ASYNC", CMD_ARG_OPTIONAL},
			  {"sync", CMD_ARG_PURE_TOKEN, "SYNC", CMD_ARG_OPTIONAL})},
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
	 .summary = "Runs a known lock library script by its SHA1.",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"sha1", CMD_ARG_STRING, NULL, 0}, {"numkeys", CMD_ARG_INTEGER, NULL, 0},
			  {"key", CMD_ARG_KEY, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE},
			  {"arg", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})},
	{.name = "eval",
	 .fn = cmd_eval,
	 .arity = -3,
	 .flags = CMD_NOSCRIPT,
	 .acl = SCRIPT_CATS,
	 .key = 2,
	 .key_last = CMD_KEYS_NUMKEYS,
	 .summary = "Runs a known lock library script (redis-py's Lock, redlock).",
	 .group = "scripting",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"script", CMD_ARG_STRING, NULL, 0},
			  {"numkeys", CMD_ARG_INTEGER, NULL, 0},
			  {"key", CMD_ARG_KEY, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE},
			  {"arg", CMD_ARG_STRING, NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE})},
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
