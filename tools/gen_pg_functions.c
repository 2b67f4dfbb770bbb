/*
 * gen_pg_functions: prints the reference page of the PostgreSQL functions
 * (docs/reference/functions.md) from their table (gateway/pg/pg_fns.c):
 * `make docs-pg` runs it. Not part of the server.
 */
#include <stdio.h>

#include "gateway/pg/pg_fe.h"
#include "protocols/buf.h"

int main(void)
{
	struct buf out;
	buf_init(&out, 0);
	pg_fn_doc_markdown(&out);
	int ok = !buf_failed(&out) && fwrite(out.buf, 1, out.len, stdout) == out.len &&
		 fflush(stdout) == 0;
	buf_free(&out);
	if (!ok)
		fprintf(stderr, "gen_pg_functions: out of memory or cannot write\n");
	return ok ? 0 : 1;
}
