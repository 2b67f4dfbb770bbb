/*
 * lockhelp: see lockhelp.h.
 */
#include "tests/support/lockhelp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
	static const char *const keys[] = {"held",	    "holder", "lease-ms",
					   "fencing-token", "mine",   "heartbeat"};
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 12)
		fail_msg("LOCK.STATE %s: type %d, %zu elements", name, r->type, r->elements);
	for (int i = 0; i < 6; i++) {
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
	assert_string_equal(v[11]->str, "lease"); /* no gateway holds in session mode */
	long long t = v[7]->integer;
	freeReplyObject(r);
	return t;
}

/* ---- INFO leases ---- */

/* A field of INFO leases. */
long long lh_info_leases(redisContext *c, const char *field)
{
	redisReply *r = gw_cmd(c, "INFO leases");
	char key[64];
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	snprintf(key, sizeof(key), "\n%s:", field);
	const char *p = strstr(r->str, key);
	if (p == NULL)
		fail_msg("INFO leases has no %s", field);
	long long v = strtoll(p + strlen(key), NULL, 10);
	freeReplyObject(r);
	return v;
}

/* Waits (up to 5 s) until INFO leases shows field == want. */
void lh_await_info(redisContext *c, const char *field, long long want)
{
	for (int i = 0; i < 500; i++) {
		if (lh_info_leases(c, field) == want)
			return;
		gw_sleep_ms(10);
	}
	fail_msg("INFO leases %s stayed %lld, wanted %lld", field, lh_info_leases(c, field), want);
}

/* Waits (up to 5 s) until the gateway holds `leases` leases, with no wait,
 * release or store request in flight (one INFO snapshot). */
void lh_await_settled(redisContext *c, long long leases)
{
	for (int i = 0; i < 500; i++) {
		redisReply *r = gw_cmd(c, "INFO leases");
		char want[64];
		snprintf(want, sizeof(want), "\nleases_held:%lld\r\n", leases);
		bool done = r->type == REDIS_REPLY_STRING && strstr(r->str, want) != NULL &&
			    strstr(r->str, "\nwaits:0\r\n") != NULL &&
			    strstr(r->str, "\nreleases_in_flight:0\r\n") != NULL &&
			    strstr(r->str, "\nstore_in_flight:0\r\n") != NULL;
		freeReplyObject(r);
		if (done)
			return;
		gw_sleep_ms(10);
	}
	fail_msg("the gateway did not settle with %lld leases held", leases);
}
