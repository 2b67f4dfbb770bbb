/*
 * commands: the Redis command table and dispatch.
 *
 * One table maps a case-insensitive name to its row (struct cmd_def:
 * handler, arity, flags, subcommands, ACL categories, key spec, and the
 * documentation COMMAND DOCS and docs/reference/commands.md are made
 * from; tests/unit/test_cmd_rows.c checks every row). The connection
 * commands real clients send on connect (PING, ECHO, HELLO, AUTH, CLIENT,
 * SELECT, INFO, COMMAND, CONFIG, QUIT, RESET) are built in
 * (cmd_builtin.c), and ACL (aclcmds.c); more tables are added with
 * cmd_table_add() — that is how LOCK.* and LEADER.* come in — and more
 * INFO sections with cmd_table_add_info().
 *
 * Dispatch follows Redis's order: unknown command, then arity, then
 * authentication (NOAUTH), then the ACL (acl_check, gateway/conn/acl.h:
 * the command's categories and the lock names its key spec points at;
 * -NOPERM), then the handler. Every command declares its ACL categories
 * (cmd_table_add refuses one that does not) and which arguments are lock
 * names, so that a new command is checked by declaring them. The commands
 * that authenticate (CMD_AUTHENTICATES: AUTH, HELLO) are answered after
 * the client address's penalty (auth_delay_ms), success or not.
 *
 * A handler gets a struct cmd_call and must, before it returns, either
 *   - write exactly one reply to call->out (resp_add_*(call->out, ...)), or
 *   - call sess_suspend(call->sess) and later, from its completion, write
 *     the one reply to sess_out(sess) and call sess_resume(sess).
 * argv is only valid during the call (copy what a completion needs). If the
 * session closes while a reply is deferred, the front-end's on_close hook
 * (redis_set_hooks) runs: cancel or detach the operation there, or hold the
 * session with sess_ref() and check sess_closed() on completion.
 */
#ifndef LG_COMMANDS_H
#define LG_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "gateway/conn/acl.h"
#include "protocols/resp/resp.h"

struct sess;
struct cmd_def;

/* Replies of one command, by outcome: an error reply (-ERR, -LOCKED...)
 * or any other. */
struct cmd_stat {
	uint64_t ok, error;
};

struct cmd_call {
	struct sess *sess;
	int argc; /* argv[0] is the command name (argv[1] the subcommand, if any) */
	const struct resp_arg *argv;
	struct buf *out;       /* == sess_out(sess) */
	enum resp_proto proto; /* RESP2 or RESP3: how to shape maps, nulls */
	void *arg;	       /* the arg given to cmd_table_add() */
	const struct cmd_def *def;
};

typedef void (*cmd_fn)(struct cmd_call *call);

enum cmd_flags {
	CMD_NOAUTH = 1 << 0,	    /* runs before AUTH, and whatever the ACL says */
	CMD_AUTHENTICATES = 1 << 1, /* checks a password: answered after the penalty */
	CMD_LOADING = 1 << 2,	    /* runs while the store is not open yet (as Redis's
				     * ok-loading: HELLO, AUTH, CLIENT, INFO...) */
	/* Told to clients in COMMAND INFO, as Redis's flags of the same
	 * names; dispatch does not read them. */
	CMD_NOSCRIPT = 1 << 3, /* "noscript" */
	CMD_STALE = 1 << 4,    /* "stale" */
	CMD_DENYOOM = 1 << 5,  /* "denyoom" */
	/* Runs at once inside MULTI (EXEC, DISCARD, MULTI, WATCH, QUIT,
	 * RESET); any other command is handed to the queue hook
	 * (cmd_table_set_queue) there. */
	CMD_IN_MULTI = 1 << 6,
	/* Runs on a RESP2 connection subscribed to channels (SUBSCRIBE,
	 * UNSUBSCRIBE, PING, QUIT, RESET); any other answers Redis's error
	 * there (a RESP3 connection runs everything). */
	CMD_IN_SUBSCRIBED = 1 << 7,
};

/* An argument's type, as COMMAND DOCS names them. */
enum cmd_arg_type {
	CMD_ARG_STRING,
	CMD_ARG_INTEGER,
	CMD_ARG_KEY, /* a lock name: the command's key spec points at it */
	CMD_ARG_PATTERN,
	CMD_ARG_PURE_TOKEN, /* the token alone (DETACH, NX) */
};

enum cmd_arg_flags {
	CMD_ARG_OPTIONAL = 1 << 0,
	CMD_ARG_MULTIPLE = 1 << 1, /* one or more; with CMD_ARG_OPTIONAL zero or more */
};

/* One argument of a command, in order (the command name and subcommand
 * not counted). */
struct cmd_arg {
	const char *name; /* lower case: "lease-ms" */
	enum cmd_arg_type type;
	const char *token; /* the word before the value ("WAIT"), or NULL */
	unsigned flags;	   /* enum cmd_arg_flags */
};

/* The last lock name of a key spec: every argument from key on; or
 * argv[key] is a count (EVAL's numkeys) of the names that follow it. */
#define CMD_KEYS_REST	 (-1)
#define CMD_KEYS_NUMKEYS (-2)

/* One Redis command: everything dispatch, COMMAND INFO/DOCS/COUNT/LIST,
 * ACL categories and the reference (docs/reference/commands.md, make docs)
 * know of it, declared once, next to its handler. The fields dispatch
 * reads come first. COMMAND INFO's flags are derived: write, readonly,
 * admin, fast and blocking from the ACL categories (@write, @read,
 * @admin, @fast, @blocking: Redis derives these categories from those
 * flags), noauth and loading from flags (a subcommand's include its
 * command's, as dispatch has it), movablekeys from key_last. */
struct cmd_def {
	const char *name;	    /* lower case, as errors show it: "ping", "lock.acquire" */
	cmd_fn fn;		    /* NULL for a container whose subcommands do the work */
	int arity;		    /* N > 0: exactly N args (name included); -N: at least N */
	unsigned flags;		    /* enum cmd_flags */
	const struct cmd_def *subs; /* subcommands, ended by a {NULL} row, or NULL */
	uint32_t acl;		    /* ACL categories (enum acl_cat), at least one */
	int key;		    /* argv index of the lock name; 0: none */
	int key_last;		    /* 0: key alone; CMD_KEYS_REST, CMD_KEYS_NUMKEYS */
	int key_step;		    /* names every key_step-th argument (0: 1); MSET's 2 */
	/* documentation (COMMAND DOCS, the reference) */
	const char *summary;
	const char *group;	    /* Redis's groups: connection, server, generic, string... */
	const char *complexity;	    /* "O(1)" */
	const char *since;	    /* the leasegate version that added it */
	const struct cmd_arg *args; /* ended by a {NULL} row; NULL: none */
};

/* The version of the first release, the since of the commands it had. */
#define CMD_SINCE "0.1.0"

/* The argument list of a cmd_def: CMD_ARGS({"name", CMD_ARG_KEY}, ...). */
#define CMD_ARGS(...) ((const struct cmd_arg[]){__VA_ARGS__, {NULL, CMD_ARG_STRING, NULL, 0}})

struct cmd_table;

/* An empty table. NULL on out-of-memory. */
struct cmd_table *cmd_table_new(void) __attribute__((warn_unused_result));
void cmd_table_free(struct cmd_table *t);

/* Adds n definitions (kept by pointer: static storage) whose handlers get
 * arg. Returns -1, adding none, on a duplicate name, a full table, or a
 * command or subcommand without ACL categories. */
int cmd_table_add(struct cmd_table *t, const struct cmd_def *defs, size_t n, void *arg)
	__attribute__((warn_unused_result));

/* Commands that exist in some configurations only (the test mode's): n
 * rows (static storage) that are not in t, whose name dispatch answers
 * as an unknown command followed by why ("it exists with ... only"). One
 * set per table: a later call replaces it. */
void cmd_table_note_absent(struct cmd_table *t, const struct cmd_def *defs, size_t n,
			   const char *why);

/* Adds the built-in connection commands (cmd_builtin.c) and ACL. */
int cmd_add_builtins(struct cmd_table *t) __attribute__((warn_unused_result));
/* Adds ACL WHOAMI, LIST, USERS, CAT, LOAD, HELP (aclcmds.c). */
int cmd_add_acl(struct cmd_table *t) __attribute__((warn_unused_result));

/* Adds the INFO sections server, clients, persistence, stats and
 * replication of the front-end r. Call it before adding others: sections
 * show in the order added. */
struct redis;
int cmd_add_builtin_info(struct cmd_table *t, struct redis *r) __attribute__((warn_unused_result));

/* An INFO section: fn appends "key:value\r\n" lines (buf_printf) to
 * text. name is lower case ("leases"); INFO shows it as "# Leases". */
typedef void (*cmd_info_fn)(struct buf *text, void *arg);
int cmd_table_add_info(struct cmd_table *t, const char *name, cmd_info_fn fn, void *arg)
	__attribute__((warn_unused_result));

/* Finds a command by name, any case; NULL if none. */
const struct cmd_def *cmd_lookup(const struct cmd_table *t, const char *name, size_t len,
				 void **arg);

/* For a command whose rights depend on an argument (LOCK.LIST TABLE is
 * @admin, LOCK.LIST is not): asks the ACL check point again, for name
 * ("lock.list|table": +lock.list allows it, -lock.list|table denies it)
 * of categories cats, no lock name. false with -NOPERM written. */
bool cmd_acl_require(struct cmd_call *c, const char *name, uint32_t cats)
	__attribute__((warn_unused_result));

/* The session's user may still run its command in progress (the one
 * that suspended it: s->last_cmd, s->last_sub) on the lock name (len
 * bytes): asked again after an ACL reload, for the waits queued before
 * it. false too when the session has no user now or is closing. */
bool cmd_acl_still(const struct sess *s, const char *name, size_t len)
	__attribute__((warn_unused_result));

/* An ACL rule's command exists: "name" or "name|sub" (acl_known_fn; arg:
 * the table). */
bool cmd_acl_known(const char *name, void *table);

/* Number of commands (COMMAND COUNT). */
size_t cmd_count(const struct cmd_table *t);

/* Commands cmd_dispatch ran (as Redis counts total_commands_processed: not
 * unknown commands, wrong arity or refused for want of AUTH), since the
 * table was made. */
uint64_t cmd_dispatched(const struct cmd_table *t);

/* Calls fn for every command with its counts of replies (subcommands
 * counted under their command), in the order added. */
void cmd_foreach_stat(const struct cmd_table *t,
		      void (*fn)(const char *name, const struct cmd_stat *st, void *arg),
		      void *arg);

/* Calls fn for every command, in the order added. */
void cmd_foreach(const struct cmd_table *t, void (*fn)(const struct cmd_def *d, void *arg),
		 void *arg);

/* Appends the INFO sections named in argv (none, "all", "default",
 * "everything": every section) to text. */
void cmd_info_text(const struct cmd_table *t, struct sess *s, int argc, const struct resp_arg *argv,
		   struct buf *text);

/* While ready(arg, &why) is false (the lock store is not open yet), a
 * command without CMD_LOADING is answered "-LOADING <why>", Redis's error
 * for "not ready yet", which clients retry. NULL: always ready. */
void cmd_table_set_gate(struct cmd_table *t, bool (*ready)(void *arg, const char **why), void *arg);

/* While a session is inside MULTI (s->multi), a command without
 * CMD_IN_MULTI that passed the checks of dispatch (known, arity, auth,
 * ACL, the gate) goes to queue instead of its handler (call->arg: arg;
 * call->def the command run): queue answers QUEUED, or refuses it with an
 * error and sets s->multi_dirty. A command refused by those checks sets
 * s->multi_dirty too (EXEC then answers EXECABORT, as Redis). */
void cmd_table_set_queue(struct cmd_table *t, cmd_fn queue, void *arg);

/* True unless the gate says the store is not open yet. */
bool cmd_table_is_ready(const struct cmd_table *t);

/* Runs one command for s: looks it up, checks arity and auth, calls it. */
void cmd_dispatch(struct cmd_table *t, struct sess *s, int argc, const struct resp_arg *argv);

#endif
