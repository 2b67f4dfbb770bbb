/*
 * test_cmd_rows: every row of the Redis command table (the one the gateway
 * builds: the built-ins, ACL, LOCK.*, LEADER.*, the lock libraries')
 * carries its documentation — a summary, a group, since, arguments that
 * agree with its arity and its key position — and COMMAND INFO's flags
 * derive from what dispatch reads (fast from @fast, loading from
 * CMD_LOADING, a subcommand's from its command's too). The configuration
 * side: the secrets are marked, CONFIG GET's values redact them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/config.h"
#include "gateway/conn/acl.h"
#include "gateway/redis/cmd_docs.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/leases.h"

static int setup(void **state)
{
	struct cmd_table *t = cmd_table_new();
	assert_non_null(t);
	assert_int_equal(cmd_add_builtins(t), 0);
	assert_int_equal(rl_register_commands(NULL, t), 0);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	cmd_table_free(*state);
	return 0;
}

/* Words the arguments take at least: a value 1, a token and its value 2,
 * an optional one 0; a multiple one counts once. */
static int min_words(const struct cmd_def *d)
{
	int n = 0;
	for (const struct cmd_arg *a = d->args; a && a->name; a++)
		if (!(a->flags & CMD_ARG_OPTIONAL))
			n += a->token && a->type != CMD_ARG_PURE_TOKEN ? 2 : 1;
	return n;
}

static bool open_ended(const struct cmd_def *d)
{
	for (const struct cmd_arg *a = d->args; a && a->name; a++)
		if (a->flags & (CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE))
			return true;
	return false;
}

/* The argv index of d's first argument of type key, 0 if none. */
static int key_index(const struct cmd_def *d, const struct cmd_def *parent)
{
	int i = parent ? 2 : 1;
	for (const struct cmd_arg *a = d->args; a && a->name; a++, i++)
		if (a->type == CMD_ARG_KEY)
			return i;
	return 0;
}

static void check_row(const struct cmd_def *d, const struct cmd_def *parent)
{
	char name[160];
	snprintf(name, sizeof(name), "%s%s%s", parent ? parent->name : "", parent ? "|" : "",
		 d->name);
	if (d->summary == NULL || strlen(d->summary) < 10 || strchr(d->summary, '|'))
		fail_msg("%s: no summary (or one with '|', which breaks the reference's table)",
			 name);
	if (d->group == NULL || d->since == NULL || d->acl == 0)
		fail_msg("%s: no group, since or ACL category", name);
	int base = parent ? 2 : 1; /* the words of the name */
	if (d->subs != NULL) {	   /* a container: its subcommands say the rest */
		if (d->args != NULL || d->arity > -1)
			fail_msg("%s: a container with arguments or a fixed arity", name);
		return;
	}
	int want = base + min_words(d);
	if (d->arity > 0 ? d->arity != want || open_ended(d) : -d->arity != want)
		fail_msg("%s: arity %d, its arguments say %s%d", name, d->arity,
			 open_ended(d) ? "at least " : "", want);
	int k = key_index(d, parent);
	int declared = d->key_last == CMD_KEYS_NUMKEYS ? d->key + 1 : d->key;
	if (k != declared)
		fail_msg("%s: the first key argument is argv[%d], the key spec says %d", name, k,
			 declared);
}

static void check_command(const struct cmd_def *d, void *arg)
{
	size_t *n = arg;
	check_row(d, NULL);
	for (const struct cmd_def *s = d->subs; s && s->name; s++) {
		check_row(s, d);
		(*n)++;
	}
	(*n)++;
}

static void test_every_row_documented(void **state)
{
	size_t n = 0;
	cmd_foreach(*state, check_command, &n);
	assert_true(n > 50); /* commands and subcommands */
}

static bool flag_of(const struct cmd_table *t, const char *cmd, const char *sub, const char *word)
{
	const struct cmd_def *d = cmd_lookup(t, cmd, strlen(cmd), NULL), *parent = NULL;
	assert_non_null(d);
	if (sub != NULL) {
		parent = d;
		for (d = parent->subs; d->name && strcmp(d->name, sub) != 0; d++)
			;
		assert_non_null(d->name);
	}
	const char *words[16];
	size_t n = cmd_doc_flags(d, parent, words, 16);
	for (size_t i = 0; i < n; i++)
		if (strcmp(words[i], word) == 0)
			return true;
	return false;
}

/* The flags the old documentation table had wrong, now derived. */
static void test_flags_derived(void **state)
{
	const struct cmd_table *t = *state;
	static const char *const fast[] = {"lock.renew", "lock.state", "lock.check",
					   "leader.resign", "ping"};
	for (size_t i = 0; i < sizeof(fast) / sizeof(fast[0]); i++)
		if (!flag_of(t, fast[i], NULL, "fast"))
			fail_msg("%s: not fast", fast[i]);
	static const char *const loading[] = {"hello", "auth", "select", "quit", "reset", "info"};
	for (size_t i = 0; i < sizeof(loading) / sizeof(loading[0]); i++)
		if (!flag_of(t, loading[i], NULL, "loading"))
			fail_msg("%s: not loading", loading[i]);
	assert_true(flag_of(t, "client", "id", "loading")); /* its command's */
	assert_false(flag_of(t, "client", "id", "fast"));   /* @slow */
	assert_false(flag_of(t, "lock.acquire", NULL, "loading"));
	assert_true(flag_of(t, "lock.acquire", NULL, "blocking"));
	assert_true(flag_of(t, "hello", NULL, "no_auth"));
	assert_true(flag_of(t, "eval", NULL, "movablekeys"));
	assert_true(flag_of(t, "set", NULL, "denyoom"));
}

static void syntax_is(const struct cmd_table *t, const char *cmd, const char *want)
{
	const struct cmd_def *d = cmd_lookup(t, cmd, strlen(cmd), NULL);
	char buf[256];
	assert_non_null(d);
	cmd_doc_syntax(d, NULL, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_syntax(void **state)
{
	syntax_is(
		*state, "lock.acquire",
		"LOCK.ACQUIRE name lease-ms [WAIT timeout-ms] [HOLDER label] [DETACH] [ADOPTABLE] "
		"[SHARED] [LIMIT n] [TRACEPARENT traceparent]");
	syntax_is(*state, "del", "DEL key [key ...]");
	syntax_is(*state, "eval", "EVAL script numkeys [key [key ...]] [arg [arg ...]]");
	syntax_is(*state, "lock.renew", "LOCK.RENEW name [token] [secret]");
	/* cut to the buffer, NUL-terminated */
	const struct cmd_def *d = cmd_lookup(*state, "lock.acquire", 12, NULL);
	char small[16];
	cmd_doc_syntax(d, NULL, small, sizeof(small));
	assert_string_equal(small, "LOCK.ACQUIRE na");
}

static size_t option_index(const char *name)
{
	for (size_t i = 0; i < cfg_option_count(); i++)
		if (strcmp(cfg_option_name(i), name) == 0)
			return i;
	fail_msg("no option %s", name);
	return 0;
}

/* The secrets are marked on their rows and CONFIG GET's values redact
 * them (set or not: "(redacted)" or ""); other values as Redis or the
 * loader writes them. */
static void test_config_values(void **state)
{
	static struct cfg c;
	char err[256], v[600];
	char *argv[] = {"leasegate", "--requirepass",	 "pw1", "--timeout",
			"300",	     "--unixsocketperm", "700", NULL};
	char *envp[] = {NULL};
	assert_int_equal(cfg_load(&c, 7, argv, envp, err, sizeof(err)), CFG_OK);
	size_t rp = option_index("requirepass"), pg = option_index("pg-password");
	assert_true(cfg_option_flags(rp) & CFG_OPT_SECRET);
	assert_true(cfg_option_flags(pg) & CFG_OPT_SECRET);
	cfg_option_value(&c, rp, v, sizeof(v));
	assert_string_equal(v, "(redacted)");
	cfg_option_value(&c, pg, v, sizeof(v));
	assert_string_equal(v, "");
	cfg_option_value(&c, option_index("timeout"), v, sizeof(v));
	assert_string_equal(v, "300");
	cfg_option_value(&c, option_index("unixsocketperm"), v, sizeof(v));
	assert_string_equal(v, "700");
	cfg_option_value(&c, option_index("ttl-retention"), v, sizeof(v));
	assert_string_equal(v, "30d");
	cfg_option_value(&c, option_index("log-level"), v, sizeof(v));
	assert_string_equal(v, "info");
	assert_string_equal(cfg_option_redis_name(option_index("max-bulk")), "proto-max-bulk-len");
	assert_true(cfg_option_flags(option_index("aclfile")) & CFG_OPT_RELOAD);
	assert_false(cfg_option_flags(option_index("port")) & CFG_OPT_RELOAD);
	/* only the passwords are secrets: the rest CONFIG GET shows */
	size_t secrets = 0;
	for (size_t i = 0; i < cfg_option_count(); i++)
		secrets += (cfg_option_flags(i) & CFG_OPT_SECRET) != 0;
	assert_int_equal(secrets, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_documented),
		cmocka_unit_test(test_flags_derived),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_config_values),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
