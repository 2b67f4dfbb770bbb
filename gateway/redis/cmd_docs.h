/*
 * cmd_docs: what COMMAND, COMMAND INFO and COMMAND DOCS answer about each
 * command — flags, key positions, ACL categories, a summary, the group and
 * the arguments — as Redis 7 shapes them, so that clients and tools that
 * introspect (redis-cli's hints, cluster-aware clients, GUIs) see real
 * data; and the command reference (docs/reference/commands.md, written by
 * make docs). All of it comes from the command's own row (struct cmd_def,
 * next to its handler): the one dispatch uses, so the two cannot disagree.
 *
 * Not here: dispatch (commands.c), the handlers.
 */
#ifndef LG_CMD_DOCS_H
#define LG_CMD_DOCS_H

#include <stdbool.h>
#include <stdio.h>

#include "gateway/redis/commands.h"

/* COMMAND INFO's flags of d (parent: its command, or NULL for a command),
 * derived as struct cmd_def says: up to max words into words. Returns
 * how many. */
size_t cmd_doc_flags(const struct cmd_def *d, const struct cmd_def *parent, const char **words,
		     size_t max);

/* The syntax of d (parent: its command, or NULL) built from its arguments,
 * "LOCK.ACQUIRE name lease-ms [WAIT timeout-ms] [DETACH]", into buf
 * (len bytes, cut if longer). */
void cmd_doc_syntax(const struct cmd_def *d, const struct cmd_def *parent, char *buf, size_t len);

/* Appends COMMAND INFO's entry of d (sub-commands nested) to out. */
void cmd_doc_info(struct buf *out, enum resp_proto proto, const struct cmd_def *d);

/* Appends COMMAND DOCS's pair (name, map) of d to out. */
void cmd_doc_docs(struct buf *out, enum resp_proto proto, const struct cmd_def *d);

/* Writes the command reference of t (Markdown: every command and
 * subcommand, its syntax, summary, ACL categories, flags, since) to f. */
void cmd_doc_reference(FILE *f, const struct cmd_table *t);

#endif
