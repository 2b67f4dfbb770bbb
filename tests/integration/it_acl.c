/*
 * it_acl: users and ACLs on the Redis port, with hiredis against the real
 * binary and --aclfile: every lock and leader command allowed and refused
 * by a lock name pattern and by a category, Redis's replies (-NOAUTH,
 * -WRONGPASS, -NOPERM), AUTH user pass and HELLO 2 AUTH, ACL WHOAMI /
 * USERS / CAT / LIST (digests, never a password), ACL LOAD after editing
 * the file (a bad line and a group-readable file refused, the old rules
 * kept; a removed user's connection closed), SIGHUP, a world-readable
 * file stopping the start, failed logins logged and counted in /metrics,
 * and the slowdown of repeated failures (measured loosely). PostgreSQL's
 * side is it_acl_pg.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/aclhelp.h"
#include "tests/support/gw.h"

static const char users[] = "# leasegate's users\n"
			    "user default off\n"
			    "user app on >apppw ~orders:* +@lock +@leader +@connection\n"
			    "user reader on >readpw ~* +@read +@connection +acl|whoami\n"
			    "user boss on >bosspw allkeys +@all\n"
			    "user sleepy off >sleepypw ~* +@all\n";

struct agw {
	struct gw g;
	struct gw_port admin;
	char path[256];
};

static void start(struct agw *a, const char *text)
{
	acl_path(a->path, sizeof(a->path), "it-acl");
	acl_write(a->path, text, 0600);
	a->admin = gw_free_port_arg();
	gw_start(&a->g, NULL, "--aclfile", a->path, "--admin-port", a->admin.arg, NULL);
}

static redisContext *login(const struct agw *a, const char *user, const char *pass)
{
	redisContext *c = gw_connect(&a->g);
	redisReply *r = gw_cmd(c, "AUTH %s %s", user, pass);
	if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)
		fail_msg("AUTH %s: %s", user, r->str);
	freeReplyObject(r);
	return c;
}

static void expect_str(redisContext *c, const char *want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	redisReply *r = redisvCommand(c, fmt, ap);
	va_end(ap);
	assert_non_null(r);
	if ((r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) ||
	    strcmp(r->str, want) != 0)
		fail_msg("%s: type %d '%s', want '%s'", fmt, r->type, r->str ? r->str : "", want);
	freeReplyObject(r);
}

#define NOKEY "NOPERM No permissions to access a key"

static void test_lock_commands_by_pattern(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = login(&a, "app", "apppw");
	/* a name the patterns cover: every command runs */
	redisReply *r = gw_cmd(c, "LOCK.ACQUIRE orders:1 10000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long token = r->integer;
	freeReplyObject(r);
	gw_expect_int(c, 1, "LOCK.RENEW orders:1");
	gw_expect_int(c, 1, "LOCK.RENEW orders:1 %lld", token);
	r = gw_cmd(c, "LOCK.STATE orders:1");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	freeReplyObject(r);
	gw_expect_int(c, 1, "LOCK.RELEASE orders:1");
	gw_expect_int(c, 0, "LOCK.RELEASE orders:1");
	r = gw_cmd(c, "LEADER.CAMPAIGN orders:lead 10000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	r = gw_cmd(c, "LEADER.WATCH orders:lead");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	freeReplyObject(r);
	gw_expect_int(c, 1, "LEADER.RESIGN orders:lead");
	/* fenced writes: by the lock's name */
	r = gw_cmd(c, "LOCK.ACQUIRE orders:f 10000");
	long long ft = r->integer;
	freeReplyObject(r);
	gw_expect_int(c, 1, "LOCK.CHECK orders:f %lld", ft);
	gw_expect_err(c, "ERR fenced writes are off", "LOCK.TRANSACT orders:f %lld []", ft);
	gw_expect_err(c, "ERR fenced writes are off", "LEADER.TRANSACT orders:lead []");
	gw_expect_err(c, NOKEY, "LOCK.CHECK invoices:f %lld", ft);
	gw_expect_err(c, NOKEY, "LOCK.TRANSACT invoices:f %lld []", ft);
	gw_expect_err(c, NOKEY, "LEADER.TRANSACT invoices:lead []");
	/* a name they do not: refused before anything is asked of the store */
	gw_expect_err(c, NOKEY, "LOCK.ACQUIRE invoices:1 10000");
	gw_expect_err(c, NOKEY, "LOCK.RENEW invoices:1");
	gw_expect_err(c, NOKEY, "LOCK.RELEASE invoices:1 7");
	gw_expect_err(c, NOKEY, "LOCK.STATE invoices:1");
	gw_expect_err(c, NOKEY, "LEADER.CAMPAIGN invoices:lead 10000");
	gw_expect_err(c, NOKEY, "LEADER.RESIGN invoices:lead");
	gw_expect_err(c, NOKEY, "LEADER.WATCH invoices:lead");
	/* the pattern is a glob: orders:* is not orders */
	gw_expect_err(c, NOKEY, "LOCK.ACQUIRE orders 10000");
	/* what another user holds there is untouched */
	redisContext *boss = login(&a, "boss", "bosspw");
	r = gw_cmd(boss, "LOCK.ACQUIRE invoices:1 10000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	gw_expect_err(c, NOKEY, "LOCK.RELEASE invoices:1 %lld", r->integer);
	freeReplyObject(r);
	gw_expect_int(boss, 1, "LOCK.RELEASE invoices:1");
	redisFree(boss);
	redisFree(c);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

/* The commands of Redis lock libraries name locks too. */
static void test_lock_library_commands_by_pattern(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = login(&a, "app", "apppw");
	expect_str(c, "OK", "SET orders:lib v1 NX PX 10000");
	expect_str(c, "v1", "GET orders:lib");
	gw_expect_int(c, 1, "PEXPIRE orders:lib 20000");
	gw_expect_err(c, NOKEY, "SET invoices:lib v1 NX PX 10000");
	gw_expect_err(c, NOKEY, "GET invoices:lib");
	gw_expect_err(c, NOKEY, "PTTL invoices:lib");
	gw_expect_err(c, NOKEY, "DEL orders:lib invoices:lib"); /* every key of DEL */
	/* EVALSHA: the numkeys keys (redis-py Lock's release script) */
	gw_expect_err(c, NOKEY,
		      "EVALSHA c3f8721cbb97f72bc19e972846bd7aaf91901658 1 invoices:lib v1");
	gw_expect_int(c, 1, "EVALSHA c3f8721cbb97f72bc19e972846bd7aaf91901658 1 orders:lib v1");
	/* reader: @read, not @write */
	redisContext *r = login(&a, "reader", "readpw");
	gw_expect_nil(r, "GET orders:lib");
	gw_expect_err(r, "NOPERM User reader has no permissions to run the 'set' command",
		      "SET orders:lib v NX PX 1000");
	gw_expect_err(r, "NOPERM User reader has no permissions to run the 'evalsha' command",
		      "EVALSHA c3f8721cbb97f72bc19e972846bd7aaf91901658 1 orders:lib v1");
	redisFree(r);
	redisFree(c);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

/* DEL and PEXPIRE end or stretch a lease taken by value (SET NX PX) from
 * any connection, as Redis; a lease another session took with
 * LOCK.ACQUIRE (DETACH too) needs the force-release right (@admin). */
static void test_del_needs_force_release(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *holder = login(&a, "app", "apppw");
	redisContext *other = login(&a, "app", "apppw");
	redisContext *boss = login(&a, "boss", "bosspw");
	redisReply *r = gw_cmd(holder, "LOCK.ACQUIRE orders:s 10000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	const char *why = "NOPERM DEL of a lease another session took with LOCK.ACQUIRE needs "
			  "the force-release right";
	gw_expect_err(other, why, "DEL orders:s");
	gw_expect_err(other, "NOPERM PEXPIRE of a lease another session took",
		      "PEXPIRE orders:s 1000");
	gw_expect_err(other, "NOPERM PEXPIRE of a lease", "EXPIRE orders:s 1");
	gw_expect_int(holder, 1, "LOCK.RENEW orders:s"); /* not lost */
	r = gw_cmd(holder, "LOCK.STATE orders:s");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->element[5]->integer, 10000); /* lease-ms untouched */
	freeReplyObject(r);
	/* a DETACH lease is no session's: its token, or the right */
	r = gw_cmd(holder, "LOCK.ACQUIRE orders:d 10000 DETACH");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long td = r->integer;
	freeReplyObject(r);
	gw_expect_err(other, why, "DEL orders:d");
	gw_expect_err(holder, why, "DEL orders:d");
	gw_expect_int(other, 1, "LOCK.RELEASE orders:d %lld", td);
	/* taken by value: any connection, as Redis */
	expect_str(holder, "OK", "SET orders:v val NX PX 10000");
	gw_expect_int(other, 1, "PEXPIRE orders:v 20000");
	gw_expect_int(other, 1, "DEL orders:v");
	gw_expect_int(other, 0, "DEL orders:v");
	/* the session's own lease: its DEL ends it */
	r = gw_cmd(other, "LOCK.ACQUIRE orders:own 10000");
	freeReplyObject(r);
	gw_expect_int(other, 1, "PEXPIRE orders:own 20000");
	gw_expect_int(other, 1, "DEL orders:own");
	/* with the right (boss: +@all): DEL ends it, its holder hears LOST */
	gw_expect_int(boss, 1, "DEL orders:s");
	gw_expect_err(holder, "LOST forced", "LOCK.RENEW orders:s");
	redisFree(boss);
	redisFree(other);
	redisFree(holder);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

/* LOCK.LIST TABLE's cursor tells no name the user's patterns hide: paging
 * one item at a time shows only the names allowed, and the cursors are
 * sealed (no hex of a name); another user's or an altered cursor is
 * refused. */
static void test_table_cursor_is_sealed(void **state)
{
	struct agw a;
	start(&a, "user boss on >bosspw allkeys +@all\n"
		  "user spy on >spypw ~public:* +@all\n"
		  "user spy2 on >spypw ~public:* +@all\n");
	redisContext *boss = login(&a, "boss", "bosspw");
	redisContext *spy = login(&a, "spy", "spypw");
	redisContext *spy2 = login(&a, "spy2", "spypw");
	const char *names[] = {"secret:alpha", "public:1", "secret:beta", "public:2"};
	for (size_t i = 0; i < 4; i++) {
		redisReply *r = gw_cmd(boss, "LOCK.ACQUIRE %s 30000", names[i]);
		assert_int_equal(r->type, REDIS_REPLY_INTEGER);
		freeReplyObject(r);
	}
	char cursor[8192] = "0", first[8192] = "";
	unsigned pages = 0, shown = 0;
	do {
		redisReply *r = gw_cmd(spy, "LOCK.LIST TABLE CURSOR %s COUNT 1", cursor);
		assert_int_equal(r->type, REDIS_REPLY_ARRAY);
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		/* "secret" in hex, "secret" itself */
		assert_null(strstr(cursor, "736563726574"));
		assert_null(strstr(cursor, "secret"));
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			assert_string_equal(r->element[1]->element[i]->element[0]->str, "name");
			assert_non_null(
				strstr(r->element[1]->element[i]->element[1]->str, "public:"));
			shown++;
		}
		freeReplyObject(r);
		if (first[0] == '\0' && strcmp(cursor, "0") != 0)
			snprintf(first, sizeof(first), "%s", cursor);
		assert_true(++pages < 20);
	} while (strcmp(cursor, "0") != 0);
	assert_int_equal(shown, 2);
	assert_true(pages >= 4);
	/* another user's cursor, an altered one, a name's hex: refused */
	gw_expect_err(spy2,
		      "ERR invalid cursor: a LOCK.LIST TABLE cursor is good only on the "
		      "replica that gave it, for the same user",
		      "LOCK.LIST TABLE CURSOR %s COUNT 1", first);
	first[5] = first[5] == 'A' ? 'B' : 'A';
	gw_expect_err(spy, "ERR invalid cursor", "LOCK.LIST TABLE CURSOR %s COUNT 1", first);
	gw_expect_err(spy, "ERR invalid cursor", "LOCK.LIST TABLE CURSOR %s COUNT 1",
		      "7365637265743a616c706861"); /* secret:alpha */
	redisFree(spy2);
	redisFree(spy);
	redisFree(boss);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

/* LOCK.LIST shows a user the names its patterns let it read; its TABLE
 * form and LOCK.FORCE-RELEASE are @admin. */
static void test_listing_and_forced_release(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *boss = login(&a, "boss", "bosspw");
	redisContext *app = login(&a, "app", "apppw");
	redisReply *r = gw_cmd(boss, "LOCK.ACQUIRE invoices:1 10000");
	freeReplyObject(r);
	r = gw_cmd(app, "LOCK.ACQUIRE orders:1 10000");
	freeReplyObject(r);
	r = gw_cmd(boss, "LOCK.LIST");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 2);
	freeReplyObject(r);
	r = gw_cmd(app, "LOCK.LIST");
	assert_int_equal(r->elements, 1); /* not invoices:1 */
	assert_string_equal(r->element[0]->element[1]->str, "orders:1");
	freeReplyObject(r);
	r = gw_cmd(app, "LOCK.LIST COUNT 1");
	assert_int_equal(r->elements, 1);
	freeReplyObject(r);
	gw_expect_err(app,
		      "NOPERM User app has no permissions to run the 'lock.list|table' command",
		      "LOCK.LIST TABLE");
	r = gw_cmd(boss, "LOCK.LIST TABLE");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->element[1]->elements, 2);
	freeReplyObject(r);
	gw_expect_err(app,
		      "NOPERM User app has no permissions to run the 'lock.force-release' command",
		      "LOCK.FORCE-RELEASE orders:1");
	gw_expect_int(boss, 1, "LOCK.FORCE-RELEASE orders:1");
	redisFree(app);
	redisFree(boss);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

static void test_lock_commands_by_category(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = login(&a, "reader", "readpw");
	/* @read: LOCK.STATE and LEADER.WATCH */
	gw_expect_nil(c, "LOCK.STATE orders:1");
	gw_expect_nil(c, "LEADER.WATCH orders:lead");
	gw_expect_int(c, 0, "LOCK.CHECK orders:1 1");
	/* not @write, @lock alone or @leader alone */
	static const char *const refused[][2] = {
		{"LOCK.ACQUIRE orders:1 10000", "lock.acquire"},
		{"LOCK.RENEW orders:1", "lock.renew"},
		{"LOCK.RELEASE orders:1", "lock.release"},
		{"LEADER.CAMPAIGN orders:lead 10000", "leader.campaign"},
		{"LEADER.RESIGN orders:lead", "leader.resign"},
		{"LOCK.TRANSACT orders:1 1 []", "lock.transact"},
		{"LEADER.TRANSACT orders:lead []", "leader.transact"},
		{"CONFIG GET port", "config|get"},
		{"ACL LIST", "acl|list"},
		{"ACL LOAD", "acl|load"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char want[200];
		snprintf(want, sizeof(want),
			 "NOPERM User reader has no permissions to run the '%s' command",
			 refused[i][1]);
		redisReply *r = gw_cmd(c, refused[i][0]);
		if (r->type != REDIS_REPLY_ERROR || strcmp(r->str, want) != 0)
			fail_msg("%s: '%s'", refused[i][0], r->str ? r->str : "(not an error)");
		freeReplyObject(r);
	}
	/* +acl|whoami: that subcommand only */
	expect_str(c, "reader", "ACL WHOAMI");
	/* app: @lock and @leader but no @admin */
	redisContext *app = login(&a, "app", "apppw");
	gw_expect_err(app, "NOPERM User app has no permissions to run the 'config|get' command",
		      "CONFIG GET port");
	gw_expect_err(app, "NOPERM User app has no permissions to run the 'acl|whoami' command",
		      "ACL WHOAMI");
	redisFree(app);
	redisFree(c);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

static void test_auth_replies(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = gw_connect(&a.g);
	/* default is off: nothing before AUTH */
	gw_expect_err(c, "NOAUTH Authentication required.", "PING");
	gw_expect_err(c, "NOAUTH Authentication required.", "LOCK.STATE orders:1");
	gw_expect_err(c, "WRONGPASS invalid username-password pair or user is disabled.",
		      "AUTH app wrong");
	gw_expect_err(c, "WRONGPASS invalid username-password pair or user is disabled.",
		      "AUTH sleepy sleepypw"); /* off */
	gw_expect_err(c, "WRONGPASS invalid username-password pair or user is disabled.",
		      "AUTH nobody x");
	gw_expect_err(c, "WRONGPASS invalid username-password pair or user is disabled.",
		      "AUTH apppw"); /* default, off */
	/* HELLO 3 AUTH user pass */
	gw_expect_err(c, "WRONGPASS", "HELLO 2 AUTH app wrong"); /* RESP3: acl_clients.sh */
	redisReply *r = gw_cmd(c, "HELLO 2 AUTH app apppw");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	freeReplyObject(r);
	gw_expect_err(c, "NOPERM User app has no permissions to run the 'acl|whoami' command",
		      "ACL WHOAMI");
	/* AUTH switches user; a failed AUTH keeps the one there was */
	expect_str(c, "OK", "AUTH boss bosspw");
	expect_str(c, "boss", "ACL WHOAMI");
	gw_expect_err(c, "WRONGPASS", "AUTH reader nope");
	expect_str(c, "boss", "ACL WHOAMI");
	/* CLIENT LIST shows the user */
	r = gw_cmd(c, "CLIENT INFO");
	assert_non_null(strstr(r->str, " user=boss "));
	freeReplyObject(r);
	/* +@connection: CLIENT INFO (its own), not CLIENT LIST (everyone's:
	 * @admin) */
	redisContext *app = login(&a, "app", "apppw");
	r = gw_cmd(app, "CLIENT INFO");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_non_null(strstr(r->str, " user=app "));
	assert_null(strstr(r->str, "boss"));
	freeReplyObject(r);
	gw_expect_err(app, "NOPERM User app has no permissions to run the 'client|list' command",
		      "CLIENT LIST");
	redisFree(app);
	/* RESET: back to default (off: NOAUTH again) */
	expect_str(c, "RESET", "RESET");
	gw_expect_err(c, "NOAUTH", "PING");
	redisFree(c);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

static void test_acl_listing(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = login(&a, "boss", "bosspw");
	redisReply *r = gw_cmd(c, "ACL USERS");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 5);
	const char *sorted[] = {"app", "boss", "default", "reader", "sleepy"};
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(r->element[i]->str, sorted[i]);
	freeReplyObject(r);
	r = gw_cmd(c, "ACL LIST");
	assert_int_equal(r->elements, 5);
	/* sha256("apppw"): the digest, never the password */
	assert_string_equal(r->element[0]->str,
			    "user app on "
			    "#71d3d4e36cf4bc4309fd7390ba79fc6a1d03d8d7b45ef26f04bcdff3ff116868 "
			    "~orders:* -@all +@lock +@leader +@connection");
	for (size_t i = 0; i < r->elements; i++) {
		assert_null(strstr(r->element[i]->str, "pw"));
		assert_null(strstr(r->element[i]->str, ">"));
	}
	assert_string_equal(r->element[2]->str, "user default off -@all");
	freeReplyObject(r);
	r = gw_cmd(c, "ACL CAT");
	assert_true(r->elements >= 6);
	bool lock = false, leader = false;
	for (size_t i = 0; i < r->elements; i++) {
		lock |= strcmp(r->element[i]->str, "lock") == 0;
		leader |= strcmp(r->element[i]->str, "leader") == 0;
	}
	assert_true(lock && leader);
	freeReplyObject(r);
	r = gw_cmd(c, "ACL CAT leader");
	assert_int_equal(r->elements, 5); /* campaign, adopt, resign, watch, transact */
	assert_string_equal(r->element[0]->str, "leader.campaign");
	freeReplyObject(r);
	r = gw_cmd(c, "ACL CAT admin");
	bool config = false, acl = false, list = false;
	for (size_t i = 0; i < r->elements; i++) {
		config |= strcmp(r->element[i]->str, "config") == 0;
		acl |= strcmp(r->element[i]->str, "acl") == 0;
		list |= strcmp(r->element[i]->str, "client|list") == 0;
	}
	assert_true(config && acl && list);
	freeReplyObject(r);
	gw_expect_err(c, "ERR Unknown category 'nope'", "ACL CAT nope");
	/* nor in CONFIG GET or INFO */
	r = gw_cmd(c, "CONFIG GET *");
	for (size_t i = 0; i < r->elements; i++)
		assert_null(strstr(r->element[i]->str, "pw"));
	freeReplyObject(r);
	r = gw_cmd(c, "INFO everything");
	assert_null(strstr(r->str, "bosspw"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

static void test_acl_load(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *boss = login(&a, "boss", "bosspw");
	redisContext *app = login(&a, "app", "apppw");
	redisContext *reader = login(&a, "reader", "readpw");
	gw_expect_err(app, NOKEY, "LOCK.ACQUIRE invoices:1 10000");
	/* the file edited: app moves to invoices, reader goes */
	acl_write(a.path,
		  "user app on >apppw ~invoices:* +@lock\n"
		  "user boss on >bosspw allkeys +@all\n",
		  0600);
	expect_str(boss, "OK", "ACL LOAD");
	redisReply *r = gw_cmd(app, "LOCK.ACQUIRE invoices:1 10000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER); /* the same connection, new rules */
	freeReplyObject(r);
	gw_expect_err(app, NOKEY, "LOCK.ACQUIRE orders:1 10000");
	/* reader's connection was closed: its user is gone */
	r = redisCommand(reader, "PING");
	assert_true(r == NULL || r->type == REDIS_REPLY_ERROR);
	if (r)
		freeReplyObject(r);
	redisFree(reader);
	redisContext *c = gw_connect(&a.g);
	gw_expect_err(c, "WRONGPASS", "AUTH reader readpw");
	/* the file no longer has default: on, nopass */
	expect_str(c, "PONG", "PING");
	redisFree(c);
	/* a bad line: refused whole, the rules stay */
	acl_write(a.path,
		  "user app on >apppw ~* +@all\n"
		  "user boss on >bosspw allkeys +@all\n"
		  "user bad on +@nope\n",
		  0600);
	char want[400];
	snprintf(want, sizeof(want),
		 "ERR %s:3: unknown category 'nope'. WARNING: ACL errors detected, no change to "
		 "the previously active ACL rules was performed",
		 a.path);
	gw_expect_err(boss, want, "ACL LOAD");
	gw_expect_err(app, NOKEY, "LOCK.ACQUIRE orders:1 10000");
	/* group-readable with passwords: refused, as ssh does */
	acl_write(a.path, "user app on >apppw ~* +@all\nuser boss on >bosspw allkeys +@all\n",
		  0640);
	r = gw_cmd(boss, "ACL LOAD");
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_non_null(strstr(r->str, "accessible by group or others (mode 0640)"));
	freeReplyObject(r);
	gw_expect_err(app, NOKEY, "LOCK.ACQUIRE orders:1 10000");
	assert_true(gw_log_count(&a.g, "ACL LOAD refused") >= 2);
	redisFree(app);
	redisFree(boss);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

/* Sends a command without reading its answer (a wait). */
static void send_only(redisContext *c, const char *cmd)
{
	int done = 0;
	assert_int_equal(redisAppendCommand(c, cmd), REDIS_OK);
	while (!done)
		assert_int_equal(redisBufferWrite(c, &done), REDIS_OK);
}

/* Waits (up to 5 s) until LOCK.LIST shows n entries in state. */
static void await_listed(redisContext *boss, const char *state, size_t n)
{
	size_t seen = 0;
	for (int i = 0; i < 500; i++) {
		redisReply *r = gw_cmd(boss, "LOCK.LIST");
		seen = 0;
		for (size_t e = 0; e < r->elements; e++)
			seen += strcmp(r->element[e]->element[5]->str, state) == 0;
		freeReplyObject(r);
		if (seen == n)
			return;
		usleep(10000);
	}
	fail_msg("LOCK.LIST shows %zu entries %s, want %zu", seen, state, n);
}

/* A reload reaches the work queued before it: a wait or a campaign the
 * new rules refuse ends with -NOPERM (it is not granted afterwards); a
 * lease already held stays held (the holder can no longer name it, its
 * connection's close releases it); a user disabled by the reload has its
 * connection closed and its wait is never granted. */
static void test_reload_ends_queued_waits(void **state)
{
	struct agw a;
	start(&a, "user app on >apppw ~orders:* ~secret:* +@lock +@leader +@connection\n"
		  "user temp on >temppw ~orders:* +@lock\n"
		  "user boss on >bosspw allkeys +@all\n");
	redisContext *boss = login(&a, "boss", "bosspw");
	redisContext *waiter = login(&a, "app", "apppw");
	redisContext *campaigner = login(&a, "app", "apppw");
	redisContext *holder = login(&a, "app", "apppw");
	redisContext *keeps = login(&a, "app", "apppw");
	redisContext *temp = login(&a, "temp", "temppw");
	redisReply *r = gw_cmd(boss, "LOCK.ACQUIRE secret:1 30000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	r = gw_cmd(boss, "LEADER.CAMPAIGN secret:lead 30000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	r = gw_cmd(boss, "LOCK.ACQUIRE orders:x 30000");
	freeReplyObject(r);
	r = gw_cmd(holder, "LOCK.ACQUIRE secret:held 30000");
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long held = r->integer;
	freeReplyObject(r);
	send_only(waiter, "LOCK.ACQUIRE secret:1 10000 WAIT 0");
	send_only(keeps, "LOCK.ACQUIRE orders:x 10000 WAIT 0"); /* still allowed */
	send_only(temp, "LOCK.ACQUIRE orders:x 10000 WAIT 0");
	send_only(campaigner, "LEADER.CAMPAIGN secret:lead 10000 WAIT 0");
	await_listed(boss, "waiting", 3);
	await_listed(boss, "campaigning", 1);
	/* app loses secret:*, temp is disabled */
	acl_write(a.path,
		  "user app on >apppw ~orders:* +@lock +@leader +@connection\n"
		  "user temp off >temppw ~orders:* +@lock\n"
		  "user boss on >bosspw allkeys +@all\n",
		  0600);
	expect_str(boss, "OK", "ACL LOAD");
	/* the locks come free: nothing goes to what the rules now refuse */
	gw_expect_int(boss, 1, "LOCK.RELEASE secret:1");
	gw_expect_int(boss, 1, "LEADER.RESIGN secret:lead");
	assert_int_equal(redisGetReply(waiter, (void **)&r), REDIS_OK);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_string_equal(r->str, "NOPERM the ACL rules reloaded while this waited no longer "
				    "allow it on 'secret:1'");
	freeReplyObject(r);
	assert_int_equal(redisGetReply(campaigner, (void **)&r), REDIS_OK);
	assert_int_equal(r->type, REDIS_REPLY_ERROR);
	assert_non_null(strstr(r->str, "NOPERM the ACL rules reloaded"));
	freeReplyObject(r);
	r = gw_cmd(boss, "LOCK.STATE secret:1");
	assert_int_equal(r->element[1]->integer, 0); /* free: not granted */
	freeReplyObject(r);
	/* temp's connection is closed, its wait gone; app's allowed wait
	 * on orders:x goes on and is granted */
	r = redisCommand(temp, "PING");
	assert_true(r == NULL || r->type == REDIS_REPLY_ERROR);
	if (r)
		freeReplyObject(r);
	gw_expect_int(boss, 1, "LOCK.RELEASE orders:x");
	assert_int_equal(redisGetReply(keeps, (void **)&r), REDIS_OK);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	freeReplyObject(r);
	/* a lease held before the reload stays held; the holder cannot name
	 * it any more, its close releases it */
	r = gw_cmd(boss, "LOCK.STATE secret:held");
	assert_int_equal(r->element[1]->integer, 1);
	assert_int_equal(r->element[7]->integer, held);
	freeReplyObject(r);
	gw_expect_err(holder, NOKEY, "LOCK.RELEASE secret:held");
	gw_expect_err(holder, NOKEY, "LOCK.RENEW secret:held");
	redisFree(holder);
	for (int i = 0; i < 500; i++) {
		r = gw_cmd(boss, "LOCK.STATE secret:held");
		long long h = r->element[1]->integer;
		freeReplyObject(r);
		if (h == 0)
			break;
		assert_true(i < 499);
		usleep(10000);
	}
	/* secret:1, secret:lead, and temp's (its connection closing) */
	assert_int_equal(gw_log_count(&a.g, "ACL reload: 3 waits the new rules refuse ended"), 1);
	redisFree(temp);
	redisFree(keeps);
	redisFree(campaigner);
	redisFree(waiter);
	redisFree(boss);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

static void test_sighup_reloads(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *app = login(&a, "app", "apppw");
	gw_expect_err(app, NOKEY, "LOCK.STATE invoices:1");
	acl_write(a.path, "user app on >apppw ~invoices:* +@lock\n", 0600);
	assert_int_equal(gw_signal(&a.g, SIGHUP), 0);
	for (int i = 0; i < 100 && gw_log_count(&a.g, "loaded: 2 users") == 0; i++)
		gw_sleep_ms(20);
	gw_expect_nil(app, "LOCK.STATE invoices:1");
	gw_expect_err(app, NOKEY, "LOCK.STATE orders:1");
	/* a bad file on SIGHUP: logged, the rules stay */
	acl_write(a.path, "user app on >apppw ~* +@all\nnonsense\n", 0600);
	assert_int_equal(gw_signal(&a.g, SIGHUP), 0);
	for (int i = 0; i < 100 && gw_log_count(&a.g, "SIGHUP: ACL file refused") == 0; i++)
		gw_sleep_ms(20);
	assert_int_equal(gw_log_count(&a.g, "SIGHUP: ACL file refused"), 1);
	assert_true(gw_log_count(&a.g, ":2: a line is 'user <name> <rules>...'") >= 1);
	gw_expect_err(app, NOKEY, "LOCK.STATE orders:1");
	redisFree(app);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

static void test_world_readable_file_refused(void **state)
{
	struct gw g;
	char path[256];
	acl_path(path, sizeof(path), "it-acl-open");
	acl_write(path, users, 0644);
	gw_spawn(&g, NULL, "--aclfile", path, NULL);
	assert_int_equal(gw_wait(&g), 1);
	assert_true(gw_log_count(&g, "holds passwords and is accessible by group or others "
				     "(mode 0644)") >= 1);
	/* a bad line stops the start too, naming it */
	acl_write(path, "user a on\nuser b on +@nope\n", 0600);
	gw_spawn(&g, NULL, "--aclfile", path, NULL);
	assert_int_equal(gw_wait(&g), 1);
	char want[300];
	snprintf(want, sizeof(want), "%s:2: unknown category 'nope'", path);
	assert_true(gw_log_count(&g, want) >= 1);
	unlink(path);
}

/* Failed logins: logged without the password, counted, slowed. */
static void test_failures_counted_and_slowed(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = gw_connect(&a.g);
	long long took[5];
	for (int i = 0; i < 5; i++) {
		long long t0 = gw_now_ms();
		gw_expect_err(c, "WRONGPASS", "AUTH app wrong-secret-%d", i);
		took[i] = gw_now_ms() - t0;
	}
	print_message("failed AUTHs answered in %lld %lld %lld %lld %lld ms\n", took[0], took[1],
		      took[2], took[3], took[4]);
	/* 0, 100, 200, 400, 800 ms: loosely */
	assert_true(took[0] < 300);
	assert_true(took[4] >= 600 && took[4] < 4000);
	assert_true(took[4] > took[1]);
	/* a client that leaves while its answer waits is no trouble */
	redisContext *gone = gw_connect(&a.g);
	gw_send(gone, "AUTH app wrong-and-gone");
	gw_sleep_ms(50);
	redisFree(gone);
	gw_sleep_ms(1700); /* its answer, held 1.6 s, goes nowhere */
	/* another connection from the same address waits as long, success too */
	redisContext *c2 = gw_connect(&a.g);
	long long t0 = gw_now_ms();
	expect_str(c2, "OK", "AUTH app apppw");
	assert_true(gw_now_ms() - t0 >= 1000);
	/* the success reset the address */
	t0 = gw_now_ms();
	gw_expect_err(c2, "WRONGPASS", "AUTH app wrong-again");
	assert_true(gw_now_ms() - t0 < 300);
	expect_str(c2, "OK", "AUTH app apppw");
	const char *m = acl_metrics(a.admin.n);
	assert_int_equal(acl_metric(m, "leasegate_auth_failures_total{protocol=\"redis\"}"), 7);
	assert_int_equal(acl_metric(m, "leasegate_auth_failures_total{protocol=\"postgresql\"}"),
			 0);
	assert_null(strstr(m, "apppw"));
	assert_int_equal(gw_log_count(&a.g, "authentication failed: user \"app\" from 127.0.0.1"),
			 7);
	assert_int_equal(gw_log_count(&a.g, "wrong-secret"), 0);
	assert_int_equal(gw_log_count(&a.g, "apppw"), 0);
	redisFree(c);
	redisFree(c2);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	unlink(a.path);
}

/* SIGTERM while a login's answer is held: a clean exit (no connection
 * left behind; the sanitizers' build checks the leaks). */
static void test_stop_while_answer_held(void **state)
{
	struct agw a;
	start(&a, users);
	redisContext *c = gw_connect(&a.g);
	for (int i = 0; i < 5; i++)
		gw_expect_err(c, "WRONGPASS", "AUTH app wrong");
	gw_send(c, "AUTH app apppw"); /* held 1.6 s */
	gw_sleep_ms(100);
	assert_int_equal(gw_signal(&a.g, SIGTERM), 0);
	redisFree(c);
	unlink(a.path);
}

/* Without --aclfile, --requirepass is default's password, as before. */
static void test_requirepass_without_file(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--requirepass", "rp", NULL);
	redisContext *c = gw_connect(&g);
	gw_expect_err(c, "NOAUTH", "PING");
	gw_expect_err(c, "WRONGPASS", "AUTH default nope");
	expect_str(c, "OK", "AUTH rp");
	expect_str(c, "default", "ACL WHOAMI");
	gw_expect_err(c, "ERR This Redis instance is not configured to use an ACL file",
		      "ACL LOAD");
	redisReply *r = gw_cmd(c, "ACL LIST");
	assert_int_equal(r->elements, 1);
	/* sha256("rp") */
	assert_non_null(strstr(r->element[0]->str, "user default on #"));
	assert_null(strstr(r->element[0]->str, " rp"));
	freeReplyObject(r);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lock_commands_by_pattern, gw_teardown),
		cmocka_unit_test_teardown(test_lock_library_commands_by_pattern, gw_teardown),
		cmocka_unit_test_teardown(test_listing_and_forced_release, gw_teardown),
		cmocka_unit_test_teardown(test_table_cursor_is_sealed, gw_teardown),
		cmocka_unit_test_teardown(test_del_needs_force_release, gw_teardown),
		cmocka_unit_test_teardown(test_lock_commands_by_category, gw_teardown),
		cmocka_unit_test_teardown(test_auth_replies, gw_teardown),
		cmocka_unit_test_teardown(test_acl_listing, gw_teardown),
		cmocka_unit_test_teardown(test_acl_load, gw_teardown),
		cmocka_unit_test_teardown(test_reload_ends_queued_waits, gw_teardown),
		cmocka_unit_test_teardown(test_sighup_reloads, gw_teardown),
		cmocka_unit_test_teardown(test_world_readable_file_refused, gw_teardown),
		cmocka_unit_test_teardown(test_failures_counted_and_slowed, gw_teardown),
		cmocka_unit_test_teardown(test_stop_while_answer_held, gw_teardown),
		cmocka_unit_test_teardown(test_requirepass_without_file, gw_teardown),
	};
	return cmocka_run_group_tests_name("acl", tests, NULL, NULL);
}
