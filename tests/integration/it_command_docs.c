/*
 * it_command_docs: what clients and tools introspect, on the real binary:
 * COMMAND, COMMAND INFO and COMMAND DOCS answer real data for every
 * command of COMMAND LIST (a row without a summary or arguments fails
 * here), and flags that say what dispatch does (fast: the @fast category;
 * loading: answered before the store opens); CONFIG HELP lists CONFIG's
 * subcommands and every option; CONFIG GET * answers every option of the
 * table (leasegate --options), secrets redacted.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
			fail_msg("COMMAND DOCS %s: no summary (give its row one)", name);
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

/* The flags (a set) of COMMAND INFO's entry e hold word. */
static bool has_flag(const redisReply *e, const char *word)
{
	const redisReply *flags = e->element[2];
	for (size_t i = 0; i < flags->elements; i++)
		if (strcmp(flags->element[i]->str, word) == 0)
			return true;
	return false;
}

static bool has_cat(const redisReply *e, const char *cat)
{
	const redisReply *cats = e->element[6];
	for (size_t i = 0; i < cats->elements; i++)
		if (strcmp(cats->element[i]->str, cat) == 0)
			return true;
	return false;
}

/* fast in COMMAND INFO is the @fast category dispatch checks, and loading
 * the commands dispatch answers before the store opens: the ones the old
 * documentation table said otherwise of first, then every command and
 * subcommand. */
static void test_flags_follow_dispatch(void **state)
{
	struct gw g;
	gw_start(&g, NULL, NULL);
	redisContext *c = gw_connect(&g);
	static const char *const fast[] = {"lock.renew", "lock.state", "lock.check",
					   "leader.resign"};
	static const char *const loading[] = {"hello", "auth", "select", "quit", "reset"};
	for (size_t i = 0; i < sizeof(fast) / sizeof(fast[0]); i++) {
		redisReply *r = gw_cmd(c, "COMMAND INFO %s", fast[i]);
		if (!has_flag(r->element[0], "fast"))
			fail_msg("COMMAND INFO %s: no fast flag", fast[i]);
		freeReplyObject(r);
	}
	for (size_t i = 0; i < sizeof(loading) / sizeof(loading[0]); i++) {
		redisReply *r = gw_cmd(c, "COMMAND INFO %s", loading[i]);
		if (!has_flag(r->element[0], "loading"))
			fail_msg("COMMAND INFO %s: no loading flag", loading[i]);
		freeReplyObject(r);
	}
	redisReply *all = gw_cmd(c, "COMMAND");
	for (size_t i = 0; i < all->elements; i++) {
		const redisReply *e = all->element[i];
		const redisReply *subs = e->element[9];
		for (size_t k = 0; k <= subs->elements; k++) {
			const redisReply *x = k == 0 ? e : subs->element[k - 1];
			if (has_flag(x, "fast") != has_cat(x, "@fast"))
				fail_msg("%s: fast flag and @fast disagree", x->element[0]->str);
			if (has_flag(x, "readonly") != has_cat(x, "@read"))
				fail_msg("%s: readonly and @read disagree", x->element[0]->str);
		}
	}
	freeReplyObject(all);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* The option names of the table ($LG_BIN --options: one tab-separated
 * line each, the name first), into names (max); their count. */
static size_t option_names(char names[][64], size_t max)
{
	char cmd[1100];
	snprintf(cmd, sizeof(cmd), "'%s' --options", getenv("LG_BIN"));
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[4096];
	size_t n = 0;
	while (n < max && fgets(line, sizeof(line), p))
		snprintf(names[n++], 64, "%.*s", (int)strcspn(line, "\t"), line);
	assert_int_equal(pclose(p), 0);
	return n;
}

/* CONFIG GET * answers every option of the table, secrets redacted (their
 * values set here: neither shows); CONFIG GET takes several patterns. */
static void test_config_get_every_option(void **state)
{
	struct gw g;
	gw_start(&g, NULL, "--requirepass", "Rq-s3cret", "--pg-password", "Pg-s3cret", NULL);
	redisContext *c = gw_connect(&g);
	redisReply *r = gw_cmd(c, "AUTH Rq-s3cret");
	freeReplyObject(r);
	static char names[128][64];
	size_t n = option_names(names, 128);
	assert_true(n > 50);
	r = gw_cmd(c, "CONFIG GET *");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	for (size_t i = 0; i < n; i++) {
		const redisReply *v = map_get(r, names[i]);
		if (v == NULL)
			fail_msg("CONFIG GET * has no %s", names[i]);
	}
	for (size_t i = 1; i < r->elements; i += 2)
		if (strstr(r->element[i]->str, "s3cret") != NULL)
			fail_msg("CONFIG GET * shows the secret of %s", r->element[i - 1]->str);
	assert_string_equal(map_get(r, "requirepass")->str, "(redacted)");
	assert_string_equal(map_get(r, "pg-password")->str, "(redacted)");
	assert_string_equal(map_get(r, "timeout")->str, "0");	      /* seconds, as Redis */
	assert_string_equal(map_get(r, "default-lease")->str, "30s"); /* with its unit */
	assert_string_equal(map_get(r, "proto-max-bulk-len")->str, "524288"); /* Redis's name */
	freeReplyObject(r);
	r = gw_cmd(c, "CONFIG GET aclfile TIMEOUT");
	assert_int_equal(r->elements, 4);
	assert_string_equal(r->element[0]->str, "aclfile");
	assert_string_equal(r->element[2]->str, "timeout");
	freeReplyObject(r);
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
	char text[8192] = "";
	for (size_t i = 0; i < r->elements; i++) {
		get |= strncmp(r->element[i]->str, "GET <pattern>", 13) == 0;
		strncat(text, r->element[i]->str, sizeof(text) - strlen(text) - 2);
		strcat(text, "\n");
		/* as the old text had it: timeout is an option, not a fixed answer */
		assert_null(strstr(r->element[i]->str, "fixed answers"));
	}
	assert_true(get);
	freeReplyObject(r);
	/* every option, by its name as a word of the list */
	static char names[128][64];
	size_t n = option_names(names, 128);
	for (size_t i = 0; i < n; i++) {
		char word[80];
		snprintf(word, sizeof(word), " %s,", names[i]);
		char last[80];
		snprintf(last, sizeof(last), " %s\n", names[i]);
		if (!strstr(text, word) && !strstr(text, last))
			fail_msg("CONFIG HELP does not name %s", names[i]);
	}
	gw_expect_err(c, "ERR unknown subcommand 'NOPE'. Try CONFIG HELP.", "CONFIG NOPE");
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_every_command_documented, gw_teardown),
		cmocka_unit_test_teardown(test_flags_follow_dispatch, gw_teardown),
		cmocka_unit_test_teardown(test_config_get_every_option, gw_teardown),
		cmocka_unit_test_teardown(test_config_help, gw_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
