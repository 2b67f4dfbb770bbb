/*
 * test_pg_bind: the PostgreSQL front-end's Bind message on a real session
 * (socketpair, event loop, embedded store, trust): the parameter format
 * codes as PostgreSQL reads them, big-endian int16 from bytes of any
 * value. A code other than 0 (text) and 1 (binary) is 22023 "unsupported
 * format code", a NULL's too, as PostgreSQL 15 answers; a code byte
 * >= 0x80 was once shifted as a negative char (UBSan under make check).
 * A length below -1 and format counts that match nothing are 08P01. And
 * what PostgreSQL refuses at Parse: a call its types do not resolve
 * (42883), a statement leasegate does not run (0A000, not a statement of
 * no parameters); a Query with bytes past its text's NUL (08P01).
 * Not here: the rest of the extended protocol (tests/integration/it_pg.c
 * with libpq).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "gateway/lease/backend.h"
#include "gateway/config.h"
#include "gateway/conn/server.h"
#include "gateway/lease/lsess.h"
#include "gateway/obs/log.h"
#include "gateway/pg/pg_fe.h"
#include "gateway/pg/pg_int.h"

struct world {
	struct cfg cfg;
	struct event_base *base;
	struct srv *srv;
	struct backend backend;
	struct lsvc *leases;
	struct auth_pg *auth;
	struct pg_fe *pg;
	bool ready;
	int fd; /* the client's end of the session */
};

static void on_ready(void *arg, bool ok, const char *msg)
{
	assert_true(ok);
	((struct world *)arg)->ready = true;
}

/* One typed message (type, body) appended to out at *at. */
static void put_msg(char *out, size_t *at, char type, const void *body, size_t len)
{
	uint32_t n = (uint32_t)len + 4;
	out[(*at)++] = type;
	for (int k = 3; k >= 0; k--)
		out[(*at)++] = (char)(n >> (8 * k));
	if (len > 0)
		memcpy(out + *at, body, len);
	*at += len;
}

/* Sends len bytes and reads the replies until ReadyForQuery: the message
 * types in order into types (NUL-ended), the SQLSTATE and text of the
 * first ErrorResponse into code and text ("" if none). */
static void exchange(struct world *w, const char *req, size_t len, char *types, char *code,
		     char *text)
{
	char in[8192];
	size_t have = 0, nt = 0;
	assert_int_equal(send(w->fd, req, len, 0), (ssize_t)len);
	for (int turn = 0; turn < 100000; turn++) {
		event_base_loop(w->base, EVLOOP_NONBLOCK);
		ssize_t r = recv(w->fd, in + have, sizeof(in) - have, MSG_DONTWAIT);
		if (r > 0)
			have += (size_t)r;
		types[0] = '\0';
		size_t at = 0;
		nt = 0;
		code[0] = text[0] = '\0';
		while (have - at >= 5) {
			const unsigned char *u = (const unsigned char *)in + at;
			size_t n =
				(size_t)u[1] << 24 | (size_t)u[2] << 16 | (size_t)u[3] << 8 | u[4];
			if (have - at < n + 1)
				break;
			bool first_error = u[0] == 'E' && strchr(types, 'E') == NULL;
			types[nt++] = (char)u[0];
			types[nt] = '\0';
			for (size_t f = at + 5; first_error && f < at + 1 + n && in[f];
			     f += strlen(in + f) + 1)
				if (in[f] == 'C' || in[f] == 'M')
					snprintf(in[f] == 'C' ? code : text, 100, "%s", in + f + 1);
			if (u[0] == 'Z')
				return;
			at += n + 1;
		}
	}
	fail_msg("no ReadyForQuery");
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	char err[512];
	char *argv[] = {"t", "--port", "0", "--pg-port", "1", "--admin-port", "0", NULL};
	char *env[] = {NULL};
	assert_int_equal(cfg_load(&w->cfg, 7, argv, env, err, sizeof(err)), CFG_OK);
	assert_true(log_open("", LOG_LVL_ERROR, false, err, sizeof(err)));
	w->base = event_base_new();
	w->srv = srv_new(w->base, &w->cfg, 16, "--maxclients");
	assert_non_null(w->srv);
	assert_true(backend_open(&w->backend, w->base, &w->cfg, on_ready, w, err, sizeof(err)));
	while (!w->ready)
		event_base_loop(w->base, EVLOOP_ONCE);
	const struct ls_limits limits = {.max_name = 64,
					 .max_leases = 8,
					 .max_lease_ms = w->cfg.max_lease_ms,
					 .default_lease_ms = w->cfg.default_lease_ms};
	w->leases = lsvc_new(w->backend.lt, &limits);
	w->auth = auth_pg_new(&w->cfg, err, sizeof(err));
	w->pg = w->auth && w->leases ? pg_fe_new(w->srv, &w->cfg, w->leases, w->auth) : NULL;
	assert_non_null(w->pg);
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	struct conn *c = srv_adopt(w->srv, &w->pg->proto, sv[0], "test", "test");
	assert_non_null(c);
	conn_process(c);
	w->fd = sv[1];
	/* the startup: protocol 3.0, user and database; trust answers at once */
	static const char startup[] = "\0\0\0\x1b\0\x03\0\0user\0u\0database\0d\0";
	char types[64], code[100], text[100];
	exchange(w, startup, sizeof(startup), types, code, text);
	assert_int_equal(types[0], 'R');
	assert_string_equal(code, "");
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	close(w->fd);
	srv_free(w->srv);
	pg_fe_free(w->pg);
	auth_pg_free(w->auth);
	lsvc_free(w->leases);
	backend_close(&w->backend, NULL, NULL);
	event_base_free(w->base);
	log_close();
	free(w);
	return 0;
}

/* One Bind case: the format codes (nf of them, as bytes) and the values
 * (len -1: NULL) of a two-parameter statement, and what must come back. */
static const struct bind_case {
	const char *what;
	int nf;
	unsigned char fmts[6];
	int32_t len[2];
	const char *types; /* the replies: 1 ParseComplete, 2 BindComplete */
	const char *code, *text;
} bind_cases[] = {
	{"text for all", 0, {0}, {1, 1}, "12Z", "", ""},
	{"one text code for all", 1, {0, 0}, {1, 1}, "12Z", "", ""},
	{"0x8000 for all", 1, {0x80, 0}, {1, 1}, "1EZ", "22023", "unsupported format code: -32768"},
	{"0xff01 for all",
	 1,
	 {0xff, 0x01},
	 {1, 1},
	 "1EZ",
	 "22023",
	 "unsupported format code: -255"},
	{"0x0100 (256)", 1, {0x01, 0x00}, {1, 1}, "1EZ", "22023", "unsupported format code: 256"},
	{"the second of two is 0x8001",
	 2,
	 {0, 0, 0x80, 0x01},
	 {1, 1},
	 "1EZ",
	 "22023",
	 "unsupported format code: -32767"},
	{"0xffff on a NULL (refused all the same, as PostgreSQL 15)",
	 2,
	 {0, 0, 0xff, 0xff},
	 {1, -1},
	 "1EZ",
	 "22023",
	 "unsupported format code: -1"},
	{"a length of -2", 0, {0}, {1, -2}, "1EZ", "08P01", "insufficient data left in message"},
	{"a length of -1: NULL", 0, {0}, {1, -1}, "12Z", "", ""},
	{"3 format codes for 2 parameters",
	 3,
	 {0, 0, 0, 0, 0, 0},
	 {1, 1},
	 "1EZ",
	 "08P01",
	 "bind message has 3 parameter formats but 2 parameters"},
};

static void bind_format_codes(void **state)
{
	struct world *w = *state;
	static const char parse[] = "\0select pg_advisory_unlock($1, $2)\0\0\0";
	for (size_t i = 0; i < sizeof(bind_cases) / sizeof(bind_cases[0]); i++) {
		const struct bind_case *k = &bind_cases[i];
		char req[256], body[64], types[64], code[100], text[100];
		size_t at = 0, b = 0;
		put_msg(req, &at, 'P', parse, sizeof(parse) - 1);
		memcpy(body, "\0\0", 2); /* the unnamed portal and statement */
		b = 2;
		body[b++] = 0;
		body[b++] = (char)k->nf;
		memcpy(body + b, k->fmts, (size_t)k->nf * 2);
		b += (size_t)k->nf * 2;
		body[b++] = 0;
		body[b++] = 2;
		for (int p = 0; p < 2; p++) {
			for (int s = 3; s >= 0; s--)
				body[b++] = (char)((uint32_t)k->len[p] >> (8 * s));
			if (k->len[p] > 0)
				body[b++] = (char)('1' + p);
		}
		body[b++] = 0; /* no result format codes */
		body[b++] = 0;
		put_msg(req, &at, 'B', body, b);
		put_msg(req, &at, 'S', NULL, 0);
		exchange(w, req, at, types, code, text);
		print_message("%s: %s %s %s\n", k->what, types, code, text);
		assert_string_equal(types, k->types);
		assert_string_equal(code, k->code);
		assert_string_equal(text, k->text);
	}
}

/* One Parse (its text and declared parameter types) and its answer up to
 * Sync. */
static const struct parse_case {
	const char *sql;
	int ntypes;
	uint32_t types[2];
	const char *replies, *code, *text;
} parse_cases[] = {
	{"select pg_advisory_lock(true)",
	 0,
	 {0},
	 "EZ",
	 "42883",
	 "function pg_advisory_lock(boolean) does not exist"},
	{"select pg_advisory_lock(1::text)",
	 0,
	 {0},
	 "EZ",
	 "42883",
	 "function pg_advisory_lock(text) does not exist"},
	{"select pg_try_advisory_lock(1, 3000000000)",
	 0,
	 {0},
	 "EZ",
	 "42883",
	 "function pg_try_advisory_lock(integer, bigint) does not exist"},
	{"select pg_advisory_lock($1)",
	 1,
	 {PG_OID_BOOL},
	 "EZ",
	 "42883",
	 "function pg_advisory_lock(boolean) does not exist"},
	{"select leasegate.acquire(1, 1000)",
	 0,
	 {0},
	 "EZ",
	 "42883",
	 "function leasegate.acquire(integer, integer) does not exist"},
	{"select pg_advisory_lock(1, 2, 3)",
	 0,
	 {0},
	 "EZ",
	 "42883",
	 "function pg_advisory_lock(integer, integer, integer) does not exist"},
	/* implicit casts PostgreSQL makes: int2 -> int8, unknown -> any */
	{"select pg_advisory_lock($1)", 1, {PG_OID_INT2}, "1Z", "", ""},
	{"select pg_advisory_lock($1, '2')", 1, {0}, "1Z", "", ""},
	{"select pg_advisory_lock(NULL::bigint)", 0, {0}, "1Z", "", ""},
	/* asyncpg describes what it prepares: the real error, at Parse */
	{"SELECT relname FROM pg_class WHERE oid = $1",
	 0,
	 {0},
	 "EZ",
	 "0A000",
	 "leasegate serves locks only: SELECT relname FROM pg_class WHERE oid = $1"},
	{"SELECT t.oid, t.typelem AS elemtype FROM pg_catalog.pg_type AS t\n  WHERE t.oid = $1 "
	 "AND t.typtype = 'b' AND t.typname <> 'x' ORDER BY 1",
	 0,
	 {0},
	 "EZ",
	 "0A000",
	 "leasegate serves locks only: SELECT t.oid, t.typelem AS elemtype FROM pg_catalog.pg_type "
	 "..."},
};

static void parse_refusals(void **state)
{
	struct world *w = *state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *k = &parse_cases[i];
		char req[512], body[400], types[64], code[100], text[100];
		size_t at = 0, b = 0, n = strlen(k->sql);
		body[b++] = 0; /* the unnamed statement */
		memcpy(body + b, k->sql, n + 1);
		b += n + 1;
		body[b++] = 0;
		body[b++] = (char)k->ntypes;
		for (int t = 0; t < k->ntypes; t++)
			for (int s = 3; s >= 0; s--)
				body[b++] = (char)(k->types[t] >> (8 * s));
		put_msg(req, &at, 'P', body, b);
		put_msg(req, &at, 'D', "S", 2); /* skipped after an error */
		put_msg(req, &at, 'S', NULL, 0);
		exchange(w, req, at, types, code, text);
		print_message("%s: %s %s %s\n", k->sql, types, code, text);
		if (k->replies[0] == '1') /* ParseComplete, then Describe's answer */
			assert_int_equal(types[0], '1');
		else
			assert_string_equal(types, k->replies);
		assert_string_equal(code, k->code);
		assert_string_equal(text, k->text);
	}
}

/* A Query is one NUL-ended text: bytes after it are 08P01, as PostgreSQL's
 * pq_getmsgend has it; the session goes on. */
static void query_with_nul(void **state)
{
	struct world *w = *state;
	static const char two[] = "SELECT 1\0SELECT 2";
	char req[64], types[64], code[100], text[100];
	size_t at = 0;
	put_msg(req, &at, 'Q', two, sizeof(two));
	exchange(w, req, at, types, code, text);
	assert_string_equal(types, "EZ");
	assert_string_equal(code, "08P01");
	assert_string_equal(text, "invalid message format");
	at = 0;
	put_msg(req, &at, 'Q', "SELECT 1", 9);
	exchange(w, req, at, types, code, text);
	assert_string_equal(types, "TDCZ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bind_format_codes, setup, teardown),
		cmocka_unit_test_setup_teardown(parse_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(query_with_nul, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
