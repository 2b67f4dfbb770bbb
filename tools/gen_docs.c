/*
 * gen_docs: writes the reference pages, docs/reference/commands.md,
 * configuration.md and functions.md, from the command rows, the option
 * table and the PostgreSQL function table (make docs;
 * tests/integration/docs_fresh.sh fails when the checked-in pages differ
 * from what this writes).
 *
 *   gen_docs DIR      writes DIR/commands.md, configuration.md, functions.md
 *
 * Not here: what the pages say (gateway/redis/cmd_docs.c, gateway/config.c,
 * gateway/pg/pg_fn.c).
 */
#include <stdio.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/pg/pg_fe.h"
#include "gateway/redis/cmd_docs.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/leases.h"
#include "protocols/buf.h"

/* Writes DIR/name with fn; false with a message on stderr. */
static bool write_page(const char *dir, const char *name, void (*fn)(FILE *f, void *arg), void *arg)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return false;
	}
	fn(f, arg);
	if (ferror(f) | (fclose(f) != 0)) {
		fprintf(stderr, "gen_docs: cannot write %s\n", path);
		return false;
	}
	return true;
}

static void commands_page(FILE *f, void *arg)
{
	cmd_doc_reference(f, arg);
}

static void configuration_page(FILE *f, void *arg)
{
	cfg_reference(f);
}

/* The PostgreSQL functions (pg_fn_doc_markdown writes into a buffer). */
static void functions_page(FILE *f, void *arg)
{
	bool *ok = arg;
	struct buf out;
	buf_init(&out, 0);
	pg_fn_doc_markdown(&out);
	if (buf_failed(&out) || fwrite(out.buf, 1, out.len, f) != out.len)
		*ok = false;
	buf_free(&out);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	/* the table the gateway builds (gateway/main.c, rl_register), without
	 * a server: no handler runs */
	struct cmd_table *t = cmd_table_new();
	if (t == NULL || cmd_add_builtins(t) != 0 || rl_register_commands(NULL, t) != 0) {
		fprintf(stderr, "gen_docs: cannot build the command table\n");
		return 1;
	}
	bool fn_ok = true;
	bool ok = write_page(argv[1], "commands.md", commands_page, t) &&
		  write_page(argv[1], "configuration.md", configuration_page, NULL) &&
		  write_page(argv[1], "functions.md", functions_page, &fn_ok) && fn_ok;
	cmd_table_free(t);
	return ok ? 0 : 1;
}
