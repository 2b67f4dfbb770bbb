/*
 * test_ddb_fast_batch: the fast reader of BatchGetItem answers (the
 * sweep's reads, ddb_fast_batch in ddb_json_fast.c, through
 * ddb_batch_answer in ddb_batch.c) reads the plain form without cJSON,
 * leaves every other body to cJSON, and every body reads exactly as
 * cJSON's reader alone reads it: the same verdict, message, "done", read
 * marks and items, byte for byte. Real shapes (every lock attribute,
 * missing ones, items not asked for, UnprocessedKeys, escapes, numbers),
 * every cut of an answer, and a loop of mutated answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/store/dynamodb/ddb_json_int.h"
#include "core/store/store_batch.h"

#define NAMES 4

static const char *const names[NAMES] = {"a", "b", "jobs/42", "c"};
static const struct ddb_keys keys = {.table = "locks", .pk = "pk", .sk = "sk", .ttl_attr = "exp"};

/* Every lock attribute leasegate reads, as strings and numbers. */
#define FULL_A                                                                                     \
	"{\"pk\":{\"S\":\"LOCK#a\"},\"sk\":{\"S\":\"LOCK\"},\"_type\":{\"S\":\"LOCK\"},"           \
	"\"owner\":{\"S\":\"o1\"},\"rvn\":{\"S\":\"r1\"},\"fence\":{\"N\":\"3\"},"                 \
	"\"leaseMs\":{\"N\":\"30000\"},\"holder\":{\"S\":\"pod-1\"},\"exp\":{\"N\":\"99\"},"       \
	"\"waiter\":{\"S\":\"w1\"},\"waiterMs\":{\"N\":\"5000\"},\"freed\":{\"N\":\"17\"},"        \
	"\"freedBy\":{\"S\":\"force\"},\"expAt\":{\"N\":\"123\"},\"expRvn\":{\"S\":\"x9\"},"       \
	"\"secretHash\":{\"S\":\""                                                                 \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"},"                     \
	"\"orphan\":{\"S\":\"o0\"},\"adoptedFrom\":{\"S\":\"o2\"},\"hfields\":{\"S\":\"h\"},"      \
	"\"scount\":{\"N\":\"2\"},\"session\":{\"S\":\"s1\"},\"sleaseMs\":{\"N\":\"10000\"},"      \
	"\"other\":{\"BOOL\":\"x\"}}"
/* only a key and an owner */
#define THIN_B "{\"pk\":{\"S\":\"LOCK#b\"},\"owner\":{\"S\":\"o2\"},\"rvn\":{\"S\":\"r2\"}}"
#define ITEM_J "{\"owner\":{\"S\":\"o3\"},\"pk\":{\"S\":\"LOCK#jobs/42\"},\"fence\":{\"N\":\"-1\"}}"
#define SWEPT                                                                                      \
	"{\"Responses\":{\"locks\":[" FULL_A "," THIN_B "," ITEM_J "]},\"UnprocessedKeys\":{}}"

/* A result asking for the NAMES names, read marks as given, items
 * poisoned (so a byte left unwritten by one reader shows). */
static void init(struct store_batch_result *res, struct store_batch_entry *e, unsigned preread)
{
	memset(e, 0x5a, NAMES * sizeof *e);
	for (unsigned i = 0; i < NAMES; i++) {
		e[i].name = names[i];
		e[i].read = (preread >> i) & 1;
	}
	*res = (struct store_batch_result){.entries = e, .count = NAMES};
}

static bool say_yes(void *arg, const struct ddb_attr *attrs, unsigned n, char *err)
{
	return true;
}

/* Reads body both ways, from the same start (entries in preread already
 * read), and checks they agree; returns the fast reader's form verdict
 * (DDB_FAST_OTHER, or DDB_FAST_OK when in its form). */
static enum ddb_fast same_batch(const char *body, size_t len, unsigned preread, bool *ok)
{
	struct store_batch_entry ea[NAMES], eb[NAMES];
	struct store_batch_result ra, rb;
	char erra[DDB_ERR_MAX] = "", errb[DDB_ERR_MAX] = "";
	bool da = false, db = false;
	init(&ra, ea, preread);
	init(&rb, eb, preread);
	bool oka = ddb_batch_answer(&ra, &keys, body, len, true, &da, erra);
	bool okb = ddb_batch_answer(&rb, &keys, body, len, false, &db, errb);
	if (oka != okb || da != db)
		fail_msg("fast %d/%d, cJSON %d/%d (%s / %s) on %.*s", oka, da, okb, db, erra, errb,
			 (int)len, body);
	if (!okb)
		assert_string_equal(erra, errb);
	for (unsigned i = 0; i < NAMES; i++) {
		assert_int_equal(ea[i].read, eb[i].read);
		assert_memory_equal(&ea[i].item, &eb[i].item, sizeof ea[i].item);
	}
	if (ok)
		*ok = okb;
	char ignored[DDB_ERR_MAX];
	enum ddb_fast f = ddb_fast_batch(body, len, keys.table, say_yes, NULL, ignored);
	return f == DDB_FAST_OTHER ? f : DDB_FAST_OK;
}

static void test_sweep_answer_is_fast(void **state)
{
	bool ok;
	assert_int_equal(same_batch(SWEPT, strlen(SWEPT), 0, &ok), DDB_FAST_OK);
	assert_true(ok);
	/* and what it read, field by field */
	struct store_batch_entry e[NAMES];
	struct store_batch_result res;
	init(&res, e, 0);
	for (unsigned i = 0; i < NAMES; i++) /* as store_batch_read does */
		memset(&e[i].item, 0, sizeof e[i].item);
	bool done = false;
	char err[DDB_ERR_MAX] = "";
	assert_true(ddb_batch_answer(&res, &keys, SWEPT, strlen(SWEPT), true, &done, err));
	assert_true(done);
	for (unsigned i = 0; i < NAMES; i++)
		assert_true(e[i].read);
	const struct lock_item *a = &e[0].item;
	assert_true(a->exists && a->has_owner && a->has_rvn && a->has_lease && a->has_fence);
	assert_string_equal(a->owner, "o1");
	assert_string_equal(a->rvn, "r1");
	assert_string_equal(a->holder, "pod-1");
	assert_string_equal(a->type, "LOCK");
	assert_int_equal(a->fence, 3);
	assert_int_equal(a->lease_ms, 30000);
	assert_int_equal(a->ttl, 99);
	assert_string_equal(a->waiter, "w1");
	assert_int_equal(a->waiter_ms, 5000);
	assert_int_equal(a->freed, 17);
	assert_true(a->freed_forced);
	assert_int_equal(a->expires_at, 123);
	assert_string_equal(a->exp_rvn, "x9");
	assert_string_equal(a->orphan, "o0");
	assert_string_equal(a->adopted_from, "o2");
	assert_int_equal(a->scount, 2);
	assert_string_equal(a->session, "s1");
	assert_int_equal(a->slease_ms, 10000);
	assert_string_equal(e[1].item.owner, "o2");
	assert_false(e[1].item.has_lease);
	assert_int_equal(e[2].item.fence, -1);
	/* "c" did not come back: read, and no item */
	assert_false(e[3].item.exists);
}

/* Answers in the plain form, and answers that are not (left to cJSON). */
static void test_shapes(void **state)
{
	static const struct {
		const char *body;
		unsigned preread;
		enum ddb_fast f;
		bool ok;
	} cases[] = {
		{"{\"Responses\":{\"locks\":[]},\"UnprocessedKeys\":{}}", 0, DDB_FAST_OK, true},
		{"{\"UnprocessedKeys\":{},\"Responses\":{\"locks\":[" THIN_B "]}}", 0, DDB_FAST_OK,
		 true},
		{" {\n\t\"Responses\" : { \"locks\" : [ " THIN_B " ] } } \r\n", 0, DDB_FAST_OK,
		 true},
		/* in another order than asked */
		{"{\"Responses\":{\"locks\":[" ITEM_J "," THIN_B "," FULL_A "]}}", 0, DDB_FAST_OK,
		 true},
		{"{\"Responses\":{\"locks\":[" THIN_B "," ITEM_J "," FULL_A "," THIN_B "]}}", 0,
		 DDB_FAST_OK, false},
		/* a second round: "b" was read before, "a" comes now */
		{"{\"Responses\":{\"locks\":[" FULL_A "]}}", 2, DDB_FAST_OK, true},
		/* refused items: one not asked for, one twice, one read before,
		 * a bad number, a key of another type, no key */
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK#zz\"}}]}}", 0, DDB_FAST_OK,
		 false},
		{"{\"Responses\":{\"locks\":[" THIN_B "," THIN_B "]}}", 0, DDB_FAST_OK, false},
		{"{\"Responses\":{\"locks\":[" THIN_B "]}}", 2, DDB_FAST_OK, false},
		{"{\"Responses\":{\"locks\":[" THIN_B ",{\"pk\":{\"S\":\"LOCK#a\"},\"leaseMs\":{"
		 "\"N\":\"1e3\"}}]}}",
		 0, DDB_FAST_OK, false},
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"N\":\"1\"}}]}}", 0, DDB_FAST_OK, false},
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"N\":\"LOCK#a\"}}]}}", 0, DDB_FAST_OK,
		 false},
		{"{\"Responses\":{\"locks\":[{\"owner\":{\"S\":\"o\"}}]}}", 0, DDB_FAST_OK, false},
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK\"}}]}}", 0, DDB_FAST_OK, false},
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK#b\"},\"pk\":{\"S\":\"LOCK#a\"}}]"
		 "}}",
		 0, DDB_FAST_OK, true},
		/* keys left unprocessed: cJSON's */
		{"{\"Responses\":{\"locks\":[" THIN_B
		 "]},\"UnprocessedKeys\":{\"locks\":{\"Keys\":["
		 "{\"pk\":{\"S\":\"LOCK#a\"},\"sk\":{\"S\":\"LOCK\"}}],\"ConsistentRead\":true}}}",
		 0, DDB_FAST_OTHER, true},
		/* escapes, sets, other members, other tables, twice a member */
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK#\\u0061\"}}]}}", 0,
		 DDB_FAST_OTHER, true},
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK#a\"},\"owner\":{\"S\":\"o\\\"\"}"
		 "}]}}",
		 0, DDB_FAST_OTHER, true},
		{"{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK#a\"},\"rwaiters\":{\"SS\":["
		 "\"x\"]}}"
		 "]}}",
		 0, DDB_FAST_OTHER, true},
		{"{\"Responses\":{\"locks\":[]},\"ConsumedCapacity\":[]}", 0, DDB_FAST_OTHER, true},
		{"{\"Responses\":{\"other\":[]}}", 0, DDB_FAST_OTHER, false},
		{"{\"Responses\":{\"locks\":[],\"other\":[]}}", 0, DDB_FAST_OTHER, true},
		{"{\"Responses\":{\"locks\":[" THIN_B "]},\"Responses\":{\"locks\":[]}}", 0,
		 DDB_FAST_OTHER, true},
		{"{\"Responses\":{\"locks\":{}}}", 0, DDB_FAST_OTHER, false},
		{"{\"Responses\":{\"locks\":[1]}}", 0, DDB_FAST_OTHER, false},
		{"{\"Responses\":{\"locks\":[]}}trailing", 0, DDB_FAST_OTHER, true},
		{"{\"UnprocessedKeys\":{}}", 0, DDB_FAST_OTHER, false},
		{"{}", 0, DDB_FAST_OTHER, false},
		{"", 0, DDB_FAST_OTHER, false},
		{"oops", 0, DDB_FAST_OTHER, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *b = cases[i].body;
		bool ok = !cases[i].ok;
		if (same_batch(b, strlen(b), cases[i].preread, &ok) != cases[i].f)
			fail_msg("case %zu: not %d: %s", i, cases[i].f, b);
		if (ok != cases[i].ok)
			fail_msg("case %zu: read %d: %s", i, ok, b);
	}
	/* NULL body, and one item of more attributes than the fast reader holds */
	bool ok = true;
	assert_int_equal(same_batch(NULL, 0, 0, &ok), DDB_FAST_OTHER);
	assert_false(ok);
	char body[8192];
	size_t n = (size_t)snprintf(body, sizeof body,
				    "{\"Responses\":{\"locks\":[{\"pk\":{\"S\":\"LOCK#a\"}");
	for (int i = 0; i < DDB_FAST_ATTRS; i++)
		n += (size_t)snprintf(body + n, sizeof body - n, ",\"x%d\":{\"S\":\"v\"}", i);
	n += (size_t)snprintf(body + n, sizeof body - n, "}]}}");
	assert_int_equal(same_batch(body, n, 0, &ok), DDB_FAST_OTHER);
	assert_true(ok);
}

/* Cut anywhere, an answer is no plain form, and reads as cJSON reads it. */
static void test_truncated(void **state)
{
	size_t n = strlen(SWEPT);
	for (size_t len = 0; len < n; len++) {
		char *cut = malloc(len + 1); /* no NUL past the cut to lean on */
		assert_non_null(cut);
		memcpy(cut, SWEPT, len);
		if (same_batch(cut, len, 0, NULL) != DDB_FAST_OTHER)
			fail_msg("fast at %zu bytes", len);
		free(cut);
	}
}

/* Mutated answers: one, two or three bytes of SWEPT replaced by bytes
 * that matter to JSON (or any byte), or deleted; both readers agree. */
static void test_mutations(void **state)
{
	static const char alphabet[] = "{}[]\":,\\ 0aS#N\t\x01\x7f\xc3";
	size_t n = strlen(SWEPT);
	char *b = malloc(n + 1);
	assert_non_null(b);
	unsigned seed = 31, fast = 0;
	for (unsigned round = 0; round < 20000; round++) {
		memcpy(b, SWEPT, n + 1);
		size_t len = n;
		unsigned edits = 1 + round % 3;
		for (unsigned k = 0; k < edits; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			unsigned pick = (seed >> 20) % (sizeof alphabet);
			if (pick == sizeof alphabet - 1) { /* delete the byte */
				memmove(b + at, b + at + 1, len - at);
				len--;
			} else {
				b[at] = alphabet[pick];
			}
		}
		fast += same_batch(b, len, round % 5 == 0 ? 2 : 0, NULL) != DDB_FAST_OTHER;
	}
	free(b);
	/* some stay in the plain form (a value's byte changed): both kinds
	 * were compared */
	assert_true(fast > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_answer_is_fast),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
