/*
 * help: `leasegate help [COMMAND [SUBCOMMAND]]`, the Redis commands of
 * the gateway as redis-cli's `help` shows Redis's: without an argument
 * every command (subcommands too) with its syntax and summary; with one,
 * that command's syntax, summary, group and ACL categories. It reads what
 * COMMAND DOCS answers (the command table and gateway/redis/cmd_docs.h),
 * offline: no gateway needs to run. The man page's COMMANDS section comes
 * from the same walk (help_foreach).
 *
 * Not here: the commands themselves (gateway/redis/).
 */
#ifndef LG_HELP_H
#define LG_HELP_H

#include <stddef.h>

/* One command as help shows it. */
struct help_entry {
	char name[160];	  /* "LOCK.ACQUIRE", "CLIENT SETNAME" */
	char syntax[512]; /* name and arguments: "LOCK.RENEW name [token]" */
	const char *summary;
	const char *group; /* Redis's groups: connection, server, generic... */
	char acl[256];	   /* "@write @slow" */
};

/* Calls fn for every command and subcommand, in the command table's
 * order. Returns -1 (having called fn for none) on out-of-memory. */
int help_foreach(void (*fn)(const struct help_entry *e, void *arg), void *arg)
	__attribute__((warn_unused_result));

/* `leasegate help ...`: argv[0] is "help". Exit status: 0, or 1 for a
 * command that does not exist (the message on stderr), 64 for a usage
 * error. */
int help_main(int argc, char **argv);

#endif
