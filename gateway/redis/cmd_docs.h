/*
 * cmd_docs: what COMMAND, COMMAND INFO and COMMAND DOCS answer about each
 * command — flags, key positions, ACL categories, a summary, the group and
 * the arguments — as Redis 7 shapes them, so that clients and tools that
 * introspect (redis-cli's hints, cluster-aware clients, GUIs) see real
 * data. Key positions and ACL categories come from the dispatch table
 * itself (struct cmd_def: what the ACL check uses); the rest from one
 * table (cmd_docs.c) keyed by name, "parent|sub" for a subcommand; a command added to the dispatch
 * table without a row here is answered with its arity alone (tests/unit/test_cmd_docs.c finds it).
 *
 * Not here: dispatch (commands.c), the handlers.
 */
#ifndef LG_CMD_DOCS_H
#define LG_CMD_DOCS_H

#include <stdbool.h>

#include "gateway/redis/commands.h"

struct cmd_doc {
	const char *name; /* "lock.acquire", "client|setname" */
	const char *summary;
	const char *group; /* Redis's groups: connection, server, string... */
	const char *complexity;
	const char *flags; /* space-separated: "write fast" */
	/* space-separated arguments: "name:type", "?NAME:type" optional with
	 * its token, "*name:type" repeated, "?NAME" a flag token alone */
	const char *args;
};

/* The row of a command (name as the dispatch table has it, lower case;
 * parent and sub for a subcommand), or NULL. */
const struct cmd_doc *cmd_doc_find(const char *parent, const char *sub);

/* Appends COMMAND INFO's entry of d (sub-commands nested) to out. */
void cmd_doc_info(struct buf *out, enum resp_proto proto, const struct cmd_def *d);

/* Appends COMMAND DOCS's pair (name, map) of d to out. */
void cmd_doc_docs(struct buf *out, enum resp_proto proto, const struct cmd_def *d);

#endif
