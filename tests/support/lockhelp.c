/*
 * lockhelp: see lockhelp.h.
 */
#include "tests/support/lockhelp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "tests/support/gw.h"

bool lh_on_moto;
static char table_name[64];

const char *lh_mode_table(void)
{
	if (!lh_on_moto)
		return NULL;
	snprintf(table_name, sizeof(table_name), "%s", gw_new_table());
	return table_name;
}

int lh_group_embedded(void **state)
{
	lh_on_moto = false;
	return 0;
}

int lh_group_moto(void **state)
{
	lh_on_moto = true;
	if (!gw_have_moto())
		fprintf(stderr, "LG_MOTO is not set: every moto test fails\n");
	return 0;
}

long long lh_acquire(redisContext *c, const char *name, int lease_ms)
{
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE %s %d", name, lease_ms);
	if (r->type != REDIS_REPLY_INTEGER || r->integer <= 0)
		fail_msg("LOCK.ACQUIRE %s: type %d %s", name, r->type, r->str ? r->str : "");
	long long t = r->integer;
	freeReplyObject(r);
	return t;
}

long long lh_expect_state(redisContext *c, const char *name, long long held, const char *holder,
			  long long lease_ms, long long token, long long mine)
{
	static const char *const keys[] = {"held", "holder", "lease-ms", "fencing-token", "mine"};
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 10)
		fail_msg("LOCK.STATE %s: type %d, %zu elements", name, r->type, r->elements);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r->element[2 * i]->type, REDIS_REPLY_STRING);
		assert_string_equal(r->element[2 * i]->str, keys[i]);
	}
	redisReply **v = r->element;
	assert_int_equal(v[1]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v[1]->integer, held);
	if (holder == NULL) {
		assert_int_equal(v[3]->type, REDIS_REPLY_NIL);
	} else {
		assert_int_equal(v[3]->type, REDIS_REPLY_STRING);
		assert_string_equal(v[3]->str, holder);
	}
	assert_int_equal(v[5]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v[5]->integer, lease_ms);
	assert_int_equal(v[7]->type, REDIS_REPLY_INTEGER);
	if (token != 0)
		assert_int_equal(v[7]->integer, token);
	else
		assert_true(v[7]->integer > 0);
	assert_int_equal(v[9]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(v[9]->integer, mine);
	long long t = v[7]->integer;
	freeReplyObject(r);
	return t;
}
