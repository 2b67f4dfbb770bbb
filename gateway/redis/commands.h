/*
 * commands: the Redis command table and dispatch.
 *
 * One table maps a case-insensitive name to (handler, arity, flags,
 * subcommands). The connection commands real clients send on connect
 * (PING, ECHO, HELLO, AUTH, CLIENT, SELECT, INFO, COMMAND, CONFIG, QUIT,
 * RESET) are built in (cmd_builtin.c); more tables are added with
 * cmd_table_add() — that is how LOCK.* and LEADER.* come in — and more
 * INFO sections with cmd_table_add_info().
 *
 * Dispatch follows Redis's order: unknown command, then arity, then
 * authentication (NOAUTH), then the handler.
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
	CMD_NOAUTH = 1 << 0,  /* runs before AUTH when requirepass is set */
	CMD_LOADING = 1 << 1, /* runs while the store is not open yet (as Redis's
			       * ok-loading: HELLO, AUTH, CLIENT, INFO...) */
};

struct cmd_def {
	const char *name;	    /* lower case, as errors show it: "ping", "lock.acquire" */
	cmd_fn fn;		    /* NULL for a container whose subcommands do the work */
	int arity;		    /* N > 0: exactly N args (name included); -N: at least N */
	unsigned flags;		    /* enum cmd_flags */
	const struct cmd_def *subs; /* subcommands, ended by a {NULL} row, or NULL */
};

struct cmd_table;

/* An empty table. NULL on out-of-memory. */
struct cmd_table *cmd_table_new(void) __attribute__((warn_unused_result));
void cmd_table_free(struct cmd_table *t);

/* Adds n definitions (kept by pointer: static storage) whose handlers get
 * arg. Returns -1, adding none, on a duplicate name or a full table. */
int cmd_table_add(struct cmd_table *t, const struct cmd_def *defs, size_t n, void *arg)
	__attribute__((warn_unused_result));

/* Adds the built-in connection commands (cmd_builtin.c). */
int cmd_add_builtins(struct cmd_table *t) __attribute__((warn_unused_result));

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

/* Number of commands (COMMAND COUNT). */
size_t cmd_count(const struct cmd_table *t);

/* Commands cmd_dispatch ran (as Redis counts total_commands_processed: not
 * unknown commands, wrong arity or refused for want of AUTH), since the
 * table was made. */
uint64_t cmd_dispatched(const struct cmd_table *t);

/* Calls fn for every command with its counts of replies (subcommands
 * counted under their command), in the order added. */
void cmd_foreach_stat(const struct cmd_table *t,
		      void (*fn)(const char *name, const struct cmd_stat *st, void *arg), void *arg);

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
void cmd_table_set_gate(struct cmd_table *t, bool (*ready)(void *arg, const char **why),
			void *arg);

/* True unless the gate says the store is not open yet. */
bool cmd_table_is_ready(const struct cmd_table *t);

/* Runs one command for s: looks it up, checks arity and auth, calls it. */
void cmd_dispatch(struct cmd_table *t, struct sess *s, int argc, const struct resp_arg *argv);

#endif
