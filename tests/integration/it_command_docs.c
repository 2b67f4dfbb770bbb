/*
 * it_command_docs: what clients and tools introspect, on the real binary:
 * COMMAND, COMMAND INFO and COMMAND DOCS answer real data for every
 * command of COMMAND LIST (a command added without its row in
 * gateway/redis/cmd_docs.c fails here), CONFIG HELP lists CONFIG's
 * subcommands.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/gw.h"

/* The value of key in a flat RESP2 map reply (an array of pairs). */
static const redisReply *map_get(const redisReply *m, const char *key)
{
	for (size_t i = 0; m && m->type == REDIS_REPLY_ARRAY && i + 1 < m->elements; i += 2)
		if (m->element[i]->type == REDIS_REPLY_STRING && !strcmp(m->element[i]->str, key))
			return m->element[i + 1];
	return NULL;
}

static void test_every_command_documented(void **state)
{
	struct gw g;
	gw_start(&g, NULL, NULL);
	redisContext *c = gw_connect(&g);
	redisReply *list = gw_cmd(c, "COMMAND LIST");
	assert_int_equal(list->type, REDIS_REPLY_ARRAY);
	assert_true(list->elements > 20);
	for (size_t i = 0; i < list->elements; i++) {
		const char *name = list->element[i]->str;
		redisReply *info = gw_cmd(c, "COMMAND INFO %s", name);
		assert_int_equal(info->elements, 1);
		const redisReply *e = info->element[0];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 10)
			fail_msg("COMMAND INFO %s: not a 10-element entry", name);
		assert_string_equal(e->element[0]->str, name);
		assert_true(e->element[1]->integer != 0); /* arity */
		/* ACL categories: every command has some (containers aside) */
		redisReply *docs = gw_cmd(c, "COMMAND DOCS %s", name);
		assert_int_equal(docs->elements, 2);
		assert_string_equal(docs->element[0]->str, name);
		const redisReply *summary = map_get(docs->element[1], "summary");
		if (summary == NULL || summary->len < 10)
			fail_msg("COMMAND DOCS %s: no summary (add a row to cmd_docs.c)", name);
		assert_non_null(map_get(docs->element[1], "group"));
		/* lock.*, leader.*: arguments documented; a first argument of type
		 * key (the lock name) is COMMAND INFO's first key */
		const redisReply *args = map_get(docs->element[1], "arguments");
		if (strchr(name, '.') != NULL)
			assert_non_null(args);
		if (args != NULL && args->elements > 0) {
			const redisReply *type = map_get(args->element[0], "type");
			assert_non_null(type);
			if (strcmp(type->str, "key") == 0)
				assert_int_equal(e->element[3]->integer, 1);
		}
		freeReplyObject(docs);
		freeReplyObject(info);
	}
	/* COMMAND: every command's entry; unknown names: nil; DOCS: all */
	redisReply *all = gw_cmd(c, "COMMAND");
	assert_int_equal(all->elements, list->elements);
	freeReplyObject(all);
	redisReply *r = gw_cmd(c, "COMMAND INFO lock.acquire nosuch");
	assert_int_equal(r->elements, 2);
	assert_int_equal(r->element[1]->type, REDIS_REPLY_NIL);
	assert_int_equal(r->element[0]->element[1]->integer, -3);
	freeReplyObject(r);
	r = gw_cmd(c, "COMMAND DOCS");
	assert_int_equal(r->elements, 2 * list->elements);
	freeReplyObject(r);
	/* a subcommand has its own entry, nested in its command's */
	r = gw_cmd(c, "COMMAND INFO client");
	const redisReply *subs = r->element[0]->element[9];
	assert_true(subs->elements >= 5);
	assert_string_equal(subs->element[0]->element[0]->str, "client|id");
	freeReplyObject(r);
	freeReplyObject(list);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

static void test_config_help(void **state)
{
	struct gw g;
	gw_start(&g, NULL, NULL);
	redisContext *c = gw_connect(&g);
	redisReply *r = gw_cmd(c, "CONFIG HELP");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_true(r->elements > 3);
	assert_non_null(strstr(r->element[0]->str, "CONFIG <subcommand>"));
	bool get = false;
	for (size_t i = 0; i < r->elements; i++)
		get |= strncmp(r->element[i]->str, "GET <pattern>", 13) == 0;
	assert_true(get);
	freeReplyObject(r);
	gw_expect_err(c, "ERR unknown subcommand 'NOPE'. Try CONFIG HELP.", "CONFIG NOPE");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_every_command_documented, gw_teardown),
		cmocka_unit_test_teardown(test_config_help, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
