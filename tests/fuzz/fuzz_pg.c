/*
 * fuzz_pg: libFuzzer target for the PostgreSQL reader (protocols/pg) and
 * the statement recogniser (gateway/pg/pg_sql).
 *
 * The first input byte seeds how the rest is cut into feeds, the second
 * picks default or tiny limits and whether the stream starts typed. Every
 * message must lie within the bound and inside what was fed; an error,
 * once set, must stay set; startup packets and Query texts go through
 * their parsers (a query's statements must tile the text).
 * Build: `make fuzz`, or by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_pg.c \
 *     protocols/buf.c protocols/pg/pg_read.c gateway/pg/pg_sql.c -o build/fuzz_pg
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/pg/pg_sql.h"
#include "protocols/pg/pg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct pg_limits tiny = {.max_msg = 40, .max_params = 3};

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static void query(const struct pg_msg *m)
{
	const char *nul = memchr(m->body, '\0', m->len);
	if (nul == NULL)
		return;
	size_t n = (size_t)(nul - m->body);
	char *q = malloc(n + 1);
	if (q == NULL)
		return;
	memcpy(q, m->body, n + 1);
	size_t pos = 0, last = 0;
	struct sql_stmt st;
	while (sql_next(q, n, &pos, &st)) {
		check(pos > last && pos <= n);
		check(st.text >= q && st.text + st.text_len <= q + n);
		check(st.nargs <= SQL_MAX_ARGS);
		check(st.kind != SQL_SELECT || st.fn != NULL);
		if (st.value != NULL)
			check(st.value >= q && st.value + st.value_len <= q + n);
		last = pos;
	}
	free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned seed = data[0];
	const struct pg_limits *lim = (data[1] & 1) ? &tiny : &pg_default_limits;
	struct pg_reader r;
	struct pg_msg m;
	pg_reader_init(&r, lim);
	if (data[1] & 2)
		pg_reader_typed(&r);
	data += 2;
	size -= 2;
	bool failed = false;
	for (size_t off = 0; off < size;) {
		size_t cut = 1 + (seed = seed * 1103515245u + 12345u) % 97;
		if (cut > size - off)
			cut = size - off;
		size_t room = pg_reader_room(&r);
		if (cut > room)
			cut = room;
		if (cut == 0)
			break;
		pg_reader_feed(&r, (const char *)data + off, cut);
		off += cut;
		enum pg_rstatus st;
		while ((st = pg_reader_next(&r, &m)) == PG_MSG) {
			check(!failed);
			check(m.len + 4 <= lim->max_msg);
			check(m.body >= r.buf && m.body + m.len <= r.buf + r.len);
			if (m.type == 0) {
				struct pg_startup su;
				const char *err;
				if (pg_parse_startup(&m, lim->max_params, &su, &err)) {
					check(su.n <= lim->max_params);
					pg_reader_typed(&r);
				}
			} else if (m.type == 'Q') {
				query(&m);
			}
		}
		if (st == PG_ERROR) {
			failed = true;
			check(pg_reader_error(&r) != NULL);
		}
	}
	if (failed)
		check(pg_reader_next(&r, &m) == PG_ERROR);
	pg_reader_free(&r);
	return 0;
}
