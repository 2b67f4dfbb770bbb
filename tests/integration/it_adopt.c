/*
 * it_adopt: leases with a secret (LOCK.ACQUIRE ... ADOPTABLE) on two
 * gateways sharing one moto table, with hiredis: the secret is answered
 * once with the token; from another connection, of this replica or the
 * other, LOCK.RENEW and LOCK.RELEASE by (name, token) need it, or the
 * force-release right; a lease without a secret is renewed and released
 * by its token as before. The users come from an ACL file: "app" may not
 * force a release, "boss" may.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/aclhelp.h"
#include "tests/support/gw.h"

static const char users[] = "user default on nopass +@connection\n"
			    "user app on >apppw ~* +@lock +@leader +@connection\n"
			    "user boss on >bosspw allkeys +@all\n";

struct pair {
	struct gw a, b;
	char acl[256];
};

static void start_two(struct pair *p)
{
	char table[64];
	assert_true(gw_have_moto());
	snprintf(table, sizeof(table), "%s", gw_new_table());
	acl_path(p->acl, sizeof(p->acl), "it-adopt");
	acl_write(p->acl, users, 0600);
	gw_start(&p->a, table, "--holder-label", "gw-a", "--aclfile", p->acl, NULL);
	gw_start(&p->b, table, "--holder-label", "gw-b", "--aclfile", p->acl, NULL);
}

static void stop_two(struct pair *p)
{
	assert_int_equal(gw_signal(&p->a, SIGTERM), 0);
	assert_int_equal(gw_signal(&p->b, SIGTERM), 0);
}

static redisContext *login(const struct gw *g, const char *user, const char *pass)
{
	redisContext *c = gw_connect(g);
	redisReply *r = gw_cmd(c, "AUTH %s %s", user, pass);
	if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)
		fail_msg("AUTH %s: %s", user, r->str);
	freeReplyObject(r);
	return c;
}

/* The integer reply of a command; fails the test on another type. */
static long long int_of(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = redisvCommand(c, fmt, ap);
	va_end(ap);
	assert_non_null(r);
	if (r->type != REDIS_REPLY_INTEGER)
		fail_msg("%s: not an integer: %s", fmt, r->str != NULL ? r->str : "?");
	long long v = r->integer;
	freeReplyObject(r);
	return v;
}

/* LOCK.ACQUIRE name 10000 ADOPTABLE: the token, the secret into secret. */
static long long acquire_adoptable(redisContext *c, const char *name, char *secret, size_t cap)
{
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE %s 10000 ADOPTABLE", name);
	if (r->type != REDIS_REPLY_ARRAY)
		fail_msg("LOCK.ACQUIRE %s ADOPTABLE: %s", name, r->str != NULL ? r->str : "?");
	assert_int_equal(r->elements, 2);
	assert_int_equal(r->element[0]->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r->element[1]->type, REDIS_REPLY_STRING);
	assert_int_equal(r->element[1]->len, 32); /* 128 bits in hex */
	long long token = r->element[0]->integer;
	snprintf(secret, cap, "%s", r->element[1]->str);
	freeReplyObject(r);
	return token;
}

static void secret_guards_renew_and_release_on_the_other_replica(void **state)
{
	struct pair p;
	start_two(&p);
	redisContext *holder = login(&p.a, "app", "apppw");
	redisContext *other = login(&p.b, "app", "apppw");
	redisContext *boss = login(&p.b, "boss", "bosspw");
	char secret[64], other_secret[64];
	long long t = acquire_adoptable(holder, "job", secret, sizeof(secret));
	/* two acquires never share a secret */
	acquire_adoptable(holder, "job2", other_secret, sizeof(other_secret));
	assert_string_not_equal(secret, other_secret);

	assert_int_equal(int_of(other, "LOCK.RENEW job %lld", t), 0);
	assert_int_equal(int_of(other, "LOCK.RENEW job %lld %s", t, other_secret), 0);
	assert_int_equal(int_of(other, "LOCK.RELEASE job %lld", t), 0);
	assert_int_equal(int_of(other, "LOCK.RENEW job %lld %s", t, secret), 1);
	assert_int_equal(int_of(boss, "LOCK.RENEW job %lld", t), 1); /* the right */
	/* still the holder's: its own renewal needs no secret */
	assert_int_equal(int_of(holder, "LOCK.RENEW job"), 1);
	assert_int_equal(int_of(other, "LOCK.RELEASE job %lld %s", t, secret), 1);
	assert_int_equal(int_of(other, "LOCK.ACQUIRE job 10000"), t + 1); /* free now */
	redisFree(holder);
	redisFree(other);
	redisFree(boss);
	stop_two(&p);
}

static void another_connection_of_the_holding_replica_gets_noperm(void **state)
{
	struct pair p;
	start_two(&p);
	redisContext *holder = login(&p.a, "app", "apppw");
	redisContext *other = login(&p.a, "app", "apppw");
	char secret[64];
	long long t = acquire_adoptable(holder, "job", secret, sizeof(secret));
	redisReply *r = gw_cmd(other, "LOCK.RELEASE job %lld", t);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_non_null(strstr(r->str, "NOPERM"));
	assert_non_null(strstr(r->str, "secret"));
	freeReplyObject(r);
	r = gw_cmd(other, "LOCK.RENEW job %lld wrong", t);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	freeReplyObject(r);
	assert_int_equal(int_of(other, "LOCK.RENEW job %lld %s", t, secret), 1);
	assert_int_equal(int_of(other, "LOCK.RELEASE job %lld %s", t, secret), 1);
	assert_int_equal(int_of(holder, "LOCK.RELEASE job"), 0); /* released */
	redisFree(holder);
	redisFree(other);
	stop_two(&p);
}

/* Today's (name, token) users: nothing changes without ADOPTABLE. */
static void a_lease_without_a_secret_works_by_token_as_before(void **state)
{
	struct pair p;
	start_two(&p);
	redisContext *holder = login(&p.a, "app", "apppw");
	redisContext *other = login(&p.b, "app", "apppw");
	long long t = int_of(holder, "LOCK.ACQUIRE job 10000");
	assert_int_equal(int_of(other, "LOCK.RENEW job %lld", t), 1);
	assert_int_equal(int_of(other, "LOCK.RELEASE job %lld", t), 1);
	redisFree(holder);
	redisFree(other);
	stop_two(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(secret_guards_renew_and_release_on_the_other_replica,
					  gw_teardown),
		cmocka_unit_test_teardown(another_connection_of_the_holding_replica_gets_noperm,
					  gw_teardown),
		cmocka_unit_test_teardown(a_lease_without_a_secret_works_by_token_as_before,
					  gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
