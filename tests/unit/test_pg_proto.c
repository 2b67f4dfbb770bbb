/*
 * protocols/pg: the reader (startup packets, typed messages, split feeds,
 * the length bound, an error that stays set, startup parameters) and the
 * builders (exact bytes of the backend messages).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/pg/pg.h"

static const struct pg_limits small = {.max_msg = 64, .max_params = 2};

static void startup_then_typed_in_any_cut(void **state)
{
	/* SSLRequest, StartupMessage(user=u, database=d), Query "SELECT 1" */
	static const char in[] = "\0\0\0\x08\x04\xd2\x16\x2f"
				 "\0\0\0\x1b\0\x03\0\0user\0u\0database\0d\0\0"
				 "Q\0\0\0\x0dSELECT 1\0";
	size_t len = sizeof(in) - 1;
	for (size_t cut = 1; cut <= len; cut++) {
		struct pg_reader r;
		struct pg_msg m;
		int got = 0;
		pg_reader_init(&r, &pg_default_limits);
		for (size_t off = 0; off < len; off += cut) {
			size_t n = len - off < cut ? len - off : cut;
			assert_true(pg_reader_feed(&r, in + off, n));
			while (pg_reader_next(&r, &m) == PG_MSG) {
				if (got == 0) {
					assert_int_equal(m.type, 0);
					assert_int_equal(m.code, PG_SSL_REQUEST);
					assert_int_equal(m.len, 0);
				} else if (got == 1) {
					struct pg_startup su;
					const char *err;
					assert_int_equal(m.code, PG_PROTO_30);
					assert_true(pg_parse_startup(&m, 8, &su, &err));
					assert_string_equal(pg_startup_get(&su, "user"), "u");
					assert_string_equal(pg_startup_get(&su, "database"), "d");
					assert_null(pg_startup_get(&su, "options"));
					pg_reader_typed(&r);
				} else {
					assert_int_equal(m.type, 'Q');
					assert_int_equal(m.len, 9);
					assert_string_equal(m.body, "SELECT 1");
				}
				got++;
			}
		}
		assert_int_equal(got, 3);
		assert_int_equal(pg_reader_buffered(&r), 0);
		pg_reader_free(&r);
	}
}

/* A startup packet is at most 10000 bytes, as PostgreSQL reads one,
 * however large a message may be once typed. */
static void startup_packet_bound(void **state)
{
	struct pg_reader r;
	struct pg_msg m;
	/* fuzz_session's first finding: asked before any byte came, the
	 * reader did arithmetic on its NULL buffer (UBSan, make check) */
	pg_reader_init(&r, &pg_default_limits);
	assert_int_equal(pg_reader_next(&r, &m), PG_NEED_MORE);
	pg_reader_typed(&r);
	assert_int_equal(pg_reader_next(&r, &m), PG_NEED_MORE);
	pg_reader_free(&r);
	pg_reader_init(&r, &pg_default_limits);
	assert_true(pg_reader_feed(&r, "\0\0\x27\x11", 4)); /* 10001 */
	assert_int_equal(pg_reader_next(&r, &m), PG_ERROR);
	assert_string_equal(pg_reader_error(&r), "invalid length of startup packet");
	pg_reader_free(&r);
	pg_reader_init(&r, &pg_default_limits);
	assert_true(pg_reader_feed(&r, "\0\0\x27\x10", 4)); /* 10000: waits for it */
	assert_int_equal(pg_reader_next(&r, &m), PG_NEED_MORE);
	pg_reader_free(&r);
}

static void bounds_and_sticky_errors(void **state)
{
	struct pg_reader r;
	struct pg_msg m;
	pg_reader_init(&r, &small);
	pg_reader_typed(&r);
	assert_true(pg_reader_room(&r) > 0);
	assert_true(pg_reader_feed(&r, "Q\0\0\0\x41", 5)); /* 65 > 64 */
	assert_int_equal(pg_reader_next(&r, &m), PG_ERROR);
	assert_string_equal(pg_reader_error(&r), "message too long");
	assert_false(pg_reader_feed(&r, "S\0\0\0\x04", 5));
	assert_int_equal(pg_reader_next(&r, &m), PG_ERROR); /* stays set */
	pg_reader_free(&r);

	pg_reader_init(&r, &small);
	pg_reader_typed(&r);
	assert_true(pg_reader_feed(&r, "S\0\0\0\x03", 5)); /* below the length word */
	assert_int_equal(pg_reader_next(&r, &m), PG_ERROR);
	pg_reader_free(&r);

	pg_reader_init(&r, &small);
	assert_true(pg_reader_feed(&r, "\0\0\0\x04", 4)); /* a startup packet < 8 */
	assert_int_equal(pg_reader_next(&r, &m), PG_ERROR);
	pg_reader_free(&r);
}

static void startup_parameters_checked(void **state)
{
	struct pg_startup su;
	const char *err;
	struct pg_msg m = {0, PG_PROTO_30, "a\0b\0c\0d\0e\0f\0\0", 13};
	assert_false(pg_parse_startup(&m, small.max_params, &su, &err)); /* 3 > 2 */
	m.body = "a\0b\0";
	m.len = 4; /* no terminator */
	assert_false(pg_parse_startup(&m, 8, &su, &err));
	m.body = "a\0b\0\0x";
	m.len = 6; /* bytes after it */
	assert_false(pg_parse_startup(&m, 8, &su, &err));
	m.body = "a\0b";
	m.len = 3; /* a value without its NUL */
	assert_false(pg_parse_startup(&m, 8, &su, &err));
}

static void cursor_stays_bad(void **state)
{
	struct pg_msg m = {'B', 0, "p\0s\0\0\x01", 6};
	struct pg_cur c = pg_cur_of(&m);
	assert_string_equal(pg_get_str(&c), "p");
	assert_string_equal(pg_get_str(&c), "s");
	assert_int_equal(pg_get_i16(&c), 1);
	assert_false(c.bad);
	assert_int_equal(pg_get_i32(&c), 0);
	assert_true(c.bad);
	assert_null(pg_get_str(&c));
	assert_null(pg_get_bytes(&c, 0));
}

static void expect_bytes(struct buf *o, const char *want, size_t n)
{
	assert_false(buf_failed(o));
	assert_int_equal(o->len, n);
	assert_memory_equal(o->buf, want, n);
	o->len = 0;
}

static void builders_write_exact_bytes(void **state)
{
	struct buf o;
	buf_init(&o, 0);
	pg_auth_ok(&o);
	expect_bytes(&o, "R\0\0\0\x08\0\0\0\0", 9);
	static const char *const scram[] = {"SCRAM-SHA-256"};
	pg_auth_sasl(&o, scram, 1);
	expect_bytes(&o, "R\0\0\0\x17\0\0\0\x0aSCRAM-SHA-256\0\0", 24);
	static const char *const both[] = {"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"};
	pg_auth_sasl(&o, both, 2);
	expect_bytes(&o, "R\0\0\0\x2a\0\0\0\x0aSCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0", 43);
	pg_auth_sasl_continue(&o, "r=x", 3);
	expect_bytes(&o, "R\0\0\0\x0b\0\0\0\x0br=x", 12);
	pg_auth_sasl_final(&o, "v=y", 3);
	expect_bytes(&o, "R\0\0\0\x0b\0\0\0\x0cv=y", 12);
	const unsigned char salt[4] = {1, 2, 3, 4};
	pg_auth_md5(&o, salt);
	expect_bytes(&o, "R\0\0\0\x0c\0\0\0\x05\x01\x02\x03\x04", 13);
	pg_parameter_status(&o, "a", "b");
	expect_bytes(&o,
		     "S\0\0\0\x08"
		     "a\0b\0",
		     9);
	pg_backend_key(&o, 7, 0x01020304);
	expect_bytes(&o, "K\0\0\0\x0c\0\0\0\x07\x01\x02\x03\x04", 13);
	pg_ready(&o, 'I');
	expect_bytes(&o, "Z\0\0\0\x05I", 6);
	struct pg_col col = {"x", PG_OID_VOID, 4, 0};
	pg_row_description(&o, 1, &col);
	expect_bytes(&o, "T\0\0\0\x1a\0\x01x\0\0\0\0\0\0\0\0\0\x08\xe6\0\x04\xff\xff\xff\xff\0\0",
		     27);
	const char *vals[2] = {"t", NULL};
	pg_data_row(&o, 2, vals, NULL);
	expect_bytes(&o, "D\0\0\0\x0f\0\x02\0\0\0\x01t\xff\xff\xff\xff", 16);
	uint32_t oids[1] = {PG_OID_INT8};
	pg_param_description(&o, 1, oids);
	expect_bytes(&o, "t\0\0\0\x0a\0\x01\0\0\0\x14", 11);
	pg_command_complete(&o, "SELECT 1");
	expect_bytes(&o, "C\0\0\0\x0dSELECT 1\0", 14);
	pg_parse_complete(&o);
	pg_bind_complete(&o);
	pg_close_complete(&o);
	pg_no_data(&o);
	pg_empty_query(&o);
	pg_portal_suspended(&o);
	expect_bytes(&o,
		     "1\0\0\0\x04"
		     "2\0\0\0\x04"
		     "3\0\0\0\x04"
		     "n\0\0\0\x04"
		     "I\0\0\0\x04"
		     "s\0\0\0\x04",
		     30);
	pg_error(&o, 'E', "ERROR", "0A000", "m", "h");
	expect_bytes(&o, "E\0\0\0\x20SERROR\0VERROR\0C0A000\0Mm\0Hh\0\0", 33);
	const char *opts[1] = {"_pq_.x"};
	pg_negotiate_version(&o, PG_PROTO_30, 1, opts);
	expect_bytes(&o, "v\0\0\0\x13\0\x03\0\0\0\0\0\x01_pq_.x\0", 20);
	buf_free(&o);
}

static void a_failed_buffer_stays_failed(void **state)
{
	struct buf o;
	buf_init(&o, 8);
	pg_command_complete(&o, "SELECT 1");
	assert_true(buf_failed(&o));
	pg_ready(&o, 'I');
	assert_true(buf_failed(&o));
	buf_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(startup_then_typed_in_any_cut),
		cmocka_unit_test(bounds_and_sticky_errors),
		cmocka_unit_test(startup_packet_bound),
		cmocka_unit_test(startup_parameters_checked),
		cmocka_unit_test(cursor_stays_bad),
		cmocka_unit_test(builders_write_exact_bytes),
		cmocka_unit_test(a_failed_buffer_stays_failed),
	};
	return cmocka_run_group_tests_name("postgresql protocol", tests, NULL, NULL);
}
