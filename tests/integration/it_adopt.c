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
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/aclhelp.h"
#include "tests/support/gw.h"
#include "tests/support/rawresp.h"

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

/* LOCK.ADOPT name token secret on c: the token answered, the new secret
 * into secret; 0 when refused (0 answered). */
/* kind.ADOPT name token old on c (kind LOCK or LEADER): the token
 * answered, the new secret into secret; 0 when refused (0 answered). */
static long long adopt(redisContext *c, const char *kind, const char *name, long long token,
		       const char *old, char *secret, size_t cap)
{
	redisReply *r = gw_cmd(c, "%s.ADOPT %s %lld %s", kind, name, token, old);
	long long got = 0;
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
		got = r->element[0]->integer;
		snprintf(secret, cap, "%s", r->element[1]->str);
	} else if (r->type != REDIS_REPLY_INTEGER || r->integer != 0) {
		fail_msg("%s.ADOPT %s: %s", kind, name, r->str != NULL ? r->str : "?");
	}
	freeReplyObject(r);
	return got;
}

/* adopt, again every 50 ms for 3 s while it answers 0: the draining
 * replica marks the lease orphaned as it closes its connections. */
static long long adopt_when_orphaned(redisContext *c, const char *kind, const char *name,
				     long long token, const char *old, char *secret, size_t cap)
{
	long long got = 0;
	for (int tries = 0; tries < 60 && got == 0; tries++) {
		got = adopt(c, kind, name, token, old, secret, cap);
		if (got == 0)
			usleep(50 * 1000);
	}
	return got;
}

/* A command answered [token, secret] (an ADOPTABLE acquire or campaign):
 * the token, the secret into secret. */
static long long take_adoptable(redisContext *c, char *secret, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = redisvCommand(c, fmt, ap);
	va_end(ap);
	assert_non_null(r);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
		fail_msg("%s: not [token, secret]: %s", fmt, r->str != NULL ? r->str : "?");
	long long token = r->element[0]->integer;
	snprintf(secret, cap, "%s", r->element[1]->str);
	freeReplyObject(r);
	return token;
}

/* The waiter c is granted within ms, with token want. */
static void granted(redisContext *c, int ms, long long want)
{
	redisReply *r = gw_reply_within(c, ms);
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r->integer, want);
	freeReplyObject(r);
}

static long long state_token(redisContext *c, const char *name)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	long long t = -1;
	for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
		if (strcmp(r->element[i]->str, "fencing-token") == 0)
			t = r->element[i + 1]->integer;
	freeReplyObject(r);
	return t;
}

#define HOLDERS 20

/* A rolling update: 20 adoptable locks and a leader's term held through
 * replica A, a waiter for two of the locks and a follower on B; SIGTERM A
 * (--drain-grace 4s); the clients adopt 19 locks and the term on B with
 * their tokens, while the waiter and the follower are never granted one;
 * the 20th lock, never adopted, is released when the grace ends and the
 * waiter gets it with the next token; the new leader's resign hands the
 * term to the follower. Before the drain, and with a wrong secret, an
 * adopt answers 0; the secret rotates at the adopt; RESP3 clients are
 * pushed leasegate.draining. */
static void a_drain_hands_the_locks_over(void **state)
{
	struct pair p;
	char table[64];
	assert_true(gw_have_moto());
	snprintf(table, sizeof(table), "%s", gw_new_table());
	acl_path(p.acl, sizeof(p.acl), "it-adopt-drain");
	acl_write(p.acl, users, 0600);
	gw_start(&p.a, table, "--holder-label", "gw-a", "--aclfile", p.acl, "--drain-grace", "4s",
		 NULL);
	gw_start(&p.b, table, "--holder-label", "gw-b", "--aclfile", p.acl, NULL);
	redisContext *held[HOLDERS];
	char name[HOLDERS][16], secret[HOLDERS][64], fresh[64];
	long long token[HOLDERS];
	for (int i = 0; i < HOLDERS; i++) {
		held[i] = login(&p.a, "app", "apppw");
		snprintf(name[i], sizeof(name[i]), "job-%d", i);
		token[i] = take_adoptable(held[i], secret[i], sizeof(secret[i]),
					  "LOCK.ACQUIRE %s 3000 ADOPTABLE", name[i]);
	}
	redisContext *leader = login(&p.a, "app", "apppw"); /* a leader too */
	char term_secret[64];
	long long term = take_adoptable(leader, term_secret, sizeof(term_secret),
					"LEADER.CAMPAIGN lead 3000 ADOPTABLE");
	redisContext *b = login(&p.b, "app", "apppw");
	assert_int_equal(adopt(b, "LOCK", name[0], token[0], secret[0], fresh, sizeof(fresh)), 0);
	redisContext *follower = login(&p.b, "app", "apppw");
	gw_send(follower, "LEADER.CAMPAIGN lead 3000 WAIT 30000");
	struct raw *resp3 = raw_open(p.a.port); /* told of the drain */
	raw_send(resp3, "HELLO 3 AUTH app apppw");
	(void)raw_reply(resp3, 2000);
	redisContext *w0 = login(&p.b, "app", "apppw"), *w19 = login(&p.b, "app", "apppw");
	gw_send(w0, "LOCK.ACQUIRE %s 3000 WAIT 30000", name[0]);
	gw_send(w19, "LOCK.ACQUIRE %s 3000 WAIT 30000", name[HOLDERS - 1]);

	assert_int_equal(kill(p.a.pid, SIGTERM), 0);
	assert_string_equal(raw_reply(resp3, 5000), ">[\"leasegate.draining\", :4]");
	assert_int_equal(raw_read(resp3, 5000), -1); /* then closed */
	raw_close(resp3);
	redisContext *adopter[HOLDERS - 1];
	for (int i = 0; i < HOLDERS - 1; i++) {
		adopter[i] = login(&p.b, "app", "apppw");
		if (i == 1) /* a wrong secret: 0, nothing taken */
			assert_int_equal(adopt(adopter[i], "LOCK", name[i], token[i], secret[0],
					       fresh, sizeof(fresh)),
					 0);
		long long got = adopt_when_orphaned(adopter[i], "LOCK", name[i], token[i],
						    secret[i], fresh, sizeof(fresh));
		assert_int_equal(got, token[i]);	   /* the same token */
		assert_string_not_equal(fresh, secret[i]); /* the secret rotates */
		if (i == 2) { /* the old secret is void now, the new one works */
			redisReply *e =
				gw_cmd(b, "LOCK.RENEW %s %lld %s", name[i], token[i], secret[i]);
			assert_int_equal(e->type, REDIS_REPLY_ERROR);
			assert_non_null(strstr(e->str, "NOPERM"));
			freeReplyObject(e);
			assert_int_equal(
				int_of(b, "LOCK.RENEW %s %lld %s", name[i], token[i], fresh), 1);
		}
	}
	redisContext *new_leader = login(&p.b, "app", "apppw");
	assert_int_equal(adopt_when_orphaned(new_leader, "LEADER", "lead", term, term_secret, fresh,
					     sizeof(fresh)),
			 term); /* the same term goes on */
	assert_int_equal(int_of(new_leader, "LEADER.CAMPAIGN lead 3000"), term); /* leads */
	assert_int_equal(gw_wait(&p.a), 0); /* after the grace */
	for (int i = 0; i < HOLDERS - 1; i++)
		assert_int_equal(state_token(b, name[i]), token[i]); /* held, same token */
	assert_null(gw_reply_within(w0, 500));	    /* never granted while it moved */
	assert_null(gw_reply_within(follower, 10)); /* nor the term */
	assert_int_equal(int_of(new_leader, "LEADER.RESIGN lead"), 1);
	granted(follower, 5000, term + 1);
	granted(w19, 5000, token[HOLDERS - 1] + 1); /* released at the end of the grace */
	assert_int_equal(int_of(adopter[0], "LOCK.RELEASE %s", name[0]), 1);
	granted(w0, 5000, token[0] + 1); /* the adopter's release: now */
	for (int i = 0; i < HOLDERS; i++) {
		redisFree(held[i]);
		if (i < HOLDERS - 1)
			redisFree(adopter[i]);
	}
	redisFree(b);
	redisFree(leader);
	redisFree(follower);
	redisFree(new_leader);
	redisFree(w0);
	redisFree(w19);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
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
		cmocka_unit_test_teardown(a_drain_hands_the_locks_over, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
