/*
 * test_lock_cli: the options of `leasegate lock` (gateway/cli/lock_cli.c):
 * defaults, forms, environment fallbacks, where NAME and the command
 * start, and the refusals, each with its message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/cli/lock_cli.h"

static char *no_env[] = {NULL};

/* Parses a NULL-terminated argv (argv[0] = "lock"). */
static enum lock_parse parse(struct lock_opts *o, char **argv, char **envp, char *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return lock_cli_parse(o, argc, argv, envp, err, 256);
}

static void test_defaults(void **state)
{
	struct lock_opts o;
	char err[256];
	char *argv[] = {"lock", "job", "--", "echo", "hi", NULL};
	assert_int_equal(parse(&o, argv, no_env, err), LOCK_PARSE_RUN);
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.port, 6379);
	assert_null(o.socket);
	assert_null(o.password);
	assert_null(o.user);
	assert_null(o.holder);
	assert_int_equal(o.lease_ms, 30000);
	assert_int_equal(o.wait_ms, -1);
	assert_int_equal(o.grace_ms, 10000);
	assert_string_equal(o.name, "job");
	assert_string_equal(o.cmd[0], "echo");
	assert_string_equal(o.cmd[1], "hi");
	assert_null(o.cmd[2]);
}

static void test_every_option(void **state)
{
	struct lock_opts o;
	char err[256];
	char *argv[] = {"lock",		"-h", "db1",	  "-p",	      "7000",	 "-s",
			"/run/lg.sock", "-a", "pw",	  "--user",   "ops",	 "--lease=2m",
			"--wait",	"1h", "--holder", "cron@db1", "--grace", "500ms",
			"job",		"--", "-x",	  NULL};
	assert_int_equal(parse(&o, argv, no_env, err), LOCK_PARSE_RUN);
	assert_string_equal(o.host, "db1");
	assert_int_equal(o.port, 7000);
	assert_string_equal(o.socket, "/run/lg.sock");
	assert_string_equal(o.password, "pw");
	assert_string_equal(o.user, "ops");
	assert_int_equal(o.lease_ms, 120000);
	assert_int_equal(o.wait_ms, 3600000);
	assert_string_equal(o.holder, "cron@db1");
	assert_int_equal(o.grace_ms, 500);
	/* after `--`, an argument that looks like an option is the command */
	assert_string_equal(o.cmd[0], "-x");
}

static void test_no_wait_and_wait_zero(void **state)
{
	struct lock_opts o;
	char err[256];
	char *a1[] = {"lock", "--no-wait", "job", "true", NULL};
	assert_int_equal(parse(&o, a1, no_env, err), LOCK_PARSE_RUN);
	assert_int_equal(o.wait_ms, 0);
	char *a2[] = {"lock", "--wait", "0", "job", "true", NULL};
	assert_int_equal(parse(&o, a2, no_env, err), LOCK_PARSE_RUN);
	assert_int_equal(o.wait_ms, 0);
}

/* Without `--`: options after NAME too, the command from the first
 * argument that is not one; its own options stay its own. */
static void test_command_without_dashes(void **state)
{
	struct lock_opts o;
	char err[256];
	char *argv[] = {"lock", "job", "--lease", "5s", "ls", "-l", "--wait", NULL};
	assert_int_equal(parse(&o, argv, no_env, err), LOCK_PARSE_RUN);
	assert_string_equal(o.name, "job");
	assert_int_equal(o.lease_ms, 5000);
	assert_int_equal(o.wait_ms, -1);
	assert_string_equal(o.cmd[0], "ls");
	assert_string_equal(o.cmd[1], "-l");
	assert_string_equal(o.cmd[2], "--wait");
}

static void test_environment(void **state)
{
	struct lock_opts o;
	char err[256];
	char *env[] = {"LEASEGATE_HOST=gw.internal", "LEASEGATE_PORT=7001",
		       "LEASEGATE_PASSWORD=s3cret", "LEASEGATE_TABLE=x", NULL};
	char *a1[] = {"lock", "job", "true", NULL};
	assert_int_equal(parse(&o, a1, env, err), LOCK_PARSE_RUN);
	assert_string_equal(o.host, "gw.internal");
	assert_int_equal(o.port, 7001);
	assert_string_equal(o.password, "s3cret");
	/* the command line wins */
	char *a2[] = {"lock", "-p", "7002", "-h", "other", "-a", "pw", "job", "true", NULL};
	assert_int_equal(parse(&o, a2, env, err), LOCK_PARSE_RUN);
	assert_string_equal(o.host, "other");
	assert_int_equal(o.port, 7002);
	assert_string_equal(o.password, "pw");
	/* an empty variable is no value */
	char *empty[] = {"LEASEGATE_PORT=", NULL};
	assert_int_equal(parse(&o, a1, empty, err), LOCK_PARSE_RUN);
	assert_int_equal(o.port, 6379);
}

static void test_help(void **state)
{
	struct lock_opts o;
	char err[256];
	char *argv[] = {"lock", "-p", "1", "--help", NULL};
	assert_int_equal(parse(&o, argv, no_env, err), LOCK_PARSE_HELP);
}

static const struct {
	const char *args[8];
	const char *env;
	const char *want;
} refusals[] = {
	{{NULL}, NULL, "no lock name (usage: leasegate lock [options] NAME -- command)"},
	{{"job"},
	 NULL,
	 "no command to run (usage: leasegate lock [options] NAME -- command [args...])"},
	{{"job", "--"},
	 NULL,
	 "no command to run (usage: leasegate lock [options] NAME -- command [args...])"},
	{{"", "true"}, NULL, "the lock name is empty"},
	{{"--bogus", "job", "true"},
	 NULL,
	 "unknown option --bogus (leasegate lock --help lists them)"},
	{{"-p"}, NULL, "-p needs a value (PORT)"},
	{{"-p", "0", "job", "true"}, NULL, "bad value for -p: '0' is not a port (1-65535)"},
	{{"--port=6379x", "job", "true"},
	 NULL,
	 "bad value for --port: '6379x' is not a port (1-65535)"},
	{{"job", "true"},
	 "LEASEGATE_PORT=http",
	 "bad value for LEASEGATE_PORT: 'http' is not a port (1-65535)"},
	{{"--lease", "soon", "job", "true"},
	 NULL,
	 "bad value for --lease: 'soon' is not a duration (250ms, 30s, 5m, 1h, 1d)"},
	{{"--lease", "999", "job", "true"},
	 NULL,
	 "--lease must be from 1s to 1d (the gateway's bounds), not 999ms"},
	{{"--lease", "2d", "job", "true"},
	 NULL,
	 "--lease must be from 1s to 1d (the gateway's bounds), not 172800000ms"},
	{{"--wait", "1s", "--no-wait", "job", "true"},
	 NULL,
	 "--wait and --no-wait exclude each other"},
	{{"--no-wait=1", "job", "true"}, NULL, "--no-wait takes no value"},
	{{"--user", "ops", "job", "true"},
	 NULL,
	 "--user needs a password (-a or LEASEGATE_PASSWORD)"},
	{{"--holder", "", "job", "true"}, NULL, "--holder must be 1 to 256 characters"},
};

static void test_refusals(void **state)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		char *argv[10] = {"lock"};
		int n = 1;
		while (n - 1 < 8 && refusals[i].args[n - 1]) {
			argv[n] = (char *)refusals[i].args[n - 1];
			n++;
		}
		argv[n] = NULL;
		char *env[] = {(char *)refusals[i].env, NULL};
		struct lock_opts o;
		char err[256];
		if (parse(&o, argv, env, err) != LOCK_PARSE_USAGE)
			fail_msg("case %zu: accepted", i);
		if (strcmp(err, refusals[i].want) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err, refusals[i].want);
	}
}

/* --help names every option and exit status. */
static void test_usage_text(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	lock_cli_usage(f);
	fclose(f);
	static const char *const want[] = {"--host HOST",
					   "--port PORT",
					   "--socket PATH",
					   "--password PASSWORD",
					   "--user USER",
					   "--lease DURATION",
					   "--wait DURATION",
					   "--no-wait",
					   "--holder LABEL",
					   "--grace DURATION",
					   "LEASEGATE_HOST",
					   "LEASEGATE_PORT",
					   "LEASEGATE_PASSWORD",
					   "LEASEGATE_LOCK",
					   "LEASEGATE_TOKEN",
					   "   64  ",
					   "   69  ",
					   "   75  ",
					   "   76  ",
					   "  126  ",
					   "  127  "};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(text, want[i]) == NULL)
			fail_msg("--help does not say '%s'", want[i]);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_no_wait_and_wait_zero),
		cmocka_unit_test(test_command_without_dashes),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_usage_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
