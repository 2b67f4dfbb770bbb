/*
 * test_config_secrets: the secret options (--requirepass, --pg-password)
 * kept off the command line: their file options (--requirepass-file,
 * --pg-password-file: one line, owner-only), the environment, and the
 * blanking of those given in argv anyway (cfg_hide_argv_secrets) with
 * the warning that names the alternatives. The gateway's side (the log
 * line, /proc/PID/cmdline): tests/integration/secrets.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway/config.h"

static char *no_env[] = {NULL};

static enum cfg_result load(struct cfg *c, char *const *argv, char *const *envp, char *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return cfg_load(c, argc, argv, envp, err, 300);
}

/* A file of len bytes with mode; its path in path (a mkstemp template). */
static void write_file(char *path, const char *text, size_t len, mode_t mode)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

/* The file's one line is the secret, its newline (\n or \r\n) aside;
 * from argv, the environment or the config file alike. */
static void test_secret_files_read(void **state)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{"s3cret\n", "s3cret"},
		{"s3cret", "s3cret"},
		{"s3cret\r\n", "s3cret"},
		{"with spaces and # \n", "with spaces and # "},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[] = "/tmp/lg-test-secret.XXXXXX", flag[300], err[300];
		write_file(path, cases[i].text, strlen(cases[i].text), 0600);
		snprintf(flag, sizeof(flag), "--requirepass-file=%s", path);
		char *argv[] = {"leasegate", flag, "--pg-password-file", path, NULL};
		struct cfg c;
		assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
		assert_string_equal(c.requirepass, cases[i].want);
		assert_string_equal(c.pg_password, cases[i].want);
		unlink(path);
	}
	/* from the environment, and from a config file (which then holds no
	 * secret itself: any mode) */
	char path[] = "/tmp/lg-test-secret.XXXXXX", conf[] = "/tmp/lg-test-conf.XXXXXX";
	char env1[300], line[300], flag[300], err[300];
	write_file(path, "from-file\n", 10, 0400);
	snprintf(env1, sizeof(env1), "LEASEGATE_PG_PASSWORD_FILE=%s", path);
	char *env[] = {env1, NULL};
	char *bare[] = {"leasegate", NULL};
	struct cfg c;
	assert_int_equal(load(&c, bare, env, err), CFG_OK);
	assert_string_equal(c.pg_password, "from-file");
	assert_string_equal(c.requirepass, "");
	snprintf(line, sizeof(line), "requirepass-file %s\n", path);
	write_file(conf, line, strlen(line), 0644);
	snprintf(flag, sizeof(flag), "--config=%s", conf);
	char *with_conf[] = {"leasegate", flag, NULL};
	assert_int_equal(load(&c, with_conf, no_env, err), CFG_OK);
	assert_string_equal(c.requirepass, "from-file");
	unlink(conf);
	unlink(path);
}

/* Refused, saying which option, which file and why, never the secret:
 * a file group or others may access (as --aclfile), a missing one, an
 * empty one, two lines, too long; and the secret given twice. */
static void test_secret_files_refused(void **state)
{
	static const struct {
		const char *text;
		mode_t mode;
		const char *says;
		size_t len; /* 0: strlen(text) */
	} cases[] = {
		{"hunter2\n", 0640, "accessible by group or others (mode 0640)", 0},
		{"hunter2\n", 0604, "accessible by group or others (mode 0604)", 0},
		{"hunter2\n", 0660, "chmod 600", 0},
		{"", 0600, "must hold one line of 1..511 bytes", 0},
		{"\n", 0600, "must hold one line", 0},
		{"hunter2\nhunter3\n", 0600, "must hold one line", 0},
		{"hunter2\0x", 0600, "must hold one line", 9},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[] = "/tmp/lg-test-secret.XXXXXX", err[300];
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		write_file(path, cases[i].text, len, cases[i].mode);
		char *argv[] = {"leasegate", "--pg-password-file", path, NULL};
		struct cfg c;
		assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
		print_message("%s\n", err);
		assert_non_null(strstr(err, "bad value for --pg-password-file: "));
		assert_non_null(strstr(err, path));
		assert_non_null(strstr(err, cases[i].says));
		assert_null(strstr(err, "hunter"));
		unlink(path);
	}
	char big[600], err[300];
	memset(big, 'a', sizeof(big));
	char path[] = "/tmp/lg-test-secret.XXXXXX";
	write_file(path, big, 512, 0600);
	char *argv[] = {"leasegate", "--requirepass-file", path, NULL};
	struct cfg c;
	assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "--requirepass-file: "));
	unlink(path);
	strcpy(path, "/tmp/lg-test-secret.XXXXXX");
	write_file(path, big, 511, 0600); /* the longest: fits */
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_int_equal(strlen(c.requirepass), 511);
	char *both[] = {"leasegate", "--requirepass", "x", "--requirepass-file", path, NULL};
	assert_int_equal(load(&c, both, no_env, err), CFG_ERROR);
	assert_string_equal(err, "bad value for --requirepass-file: --requirepass is set too "
				 "(give one of them)");
	unlink(path);
	char *missing[] = {"leasegate", "--requirepass-file", "/nonexistent/pw", NULL};
	assert_int_equal(load(&c, missing, no_env, err), CFG_ERROR);
	assert_string_equal(err, "bad value for --requirepass-file: cannot read /nonexistent/pw: "
				 "No such file or directory");
}

/* The environment carries the secrets as any option (LEASEGATE_<NAME>). */
static void test_secrets_from_environment(void **state)
{
	char *env[] = {"LEASEGATE_REQUIREPASS=envpass", "LEASEGATE_PG_PASSWORD=envpg", NULL};
	char *argv[] = {"leasegate", NULL};
	struct cfg c;
	char err[300];
	assert_int_equal(load(&c, argv, env, err), CFG_OK);
	assert_string_equal(c.requirepass, "envpass");
	assert_string_equal(c.pg_password, "envpg");
}

/* The values of secret options in argv become NUL bytes, in every form
 * cfg_load reads (--opt value, --opt=value, after a lone boolean), other
 * arguments stay; the warning names each option and its alternatives. */
static void test_hide_argv_secrets(void **state)
{
	char a0[] = "leasegate", a1[] = "--requirepass", a2[] = "s3cret-one",
	     a3[] = "--protected-mode", a4[] = "--pg-password=s3cret-two", a5[] = "--port",
	     a6[] = "7000", a7[] = "--requirepass-file", a8[] = "/x";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
	char warn[1024];
	assert_int_equal(cfg_hide_argv_secrets(9, argv, warn, sizeof(warn)), 2);
	assert_string_equal(a1, "--requirepass");
	assert_memory_equal(a2, "\0\0\0\0\0\0\0\0\0\0", sizeof(a2));
	assert_string_equal(a3, "--protected-mode");
	assert_memory_equal(a4, "--pg-password=\0\0\0\0\0\0\0\0\0\0", sizeof(a4));
	assert_string_equal(a6, "7000");
	assert_string_equal(a8, "/x");
	assert_non_null(strstr(warn, "--requirepass given on the command line, which every local "
				     "user can read in /proc/PID/cmdline"));
	assert_non_null(strstr(warn, "(--requirepass-file PATH, mode 0600) or in the environment "
				     "(LEASEGATE_REQUIREPASS)"));
	assert_non_null(strstr(warn, "--pg-password-file PATH"));
	assert_non_null(strstr(warn, "LEASEGATE_PG_PASSWORD"));
	assert_null(strstr(warn, "s3cret"));
	/* none: nothing said, nothing changed */
	char b1[] = "--port", b2[] = "1";
	char *plain[] = {a0, b1, b2, NULL};
	assert_int_equal(cfg_hide_argv_secrets(3, plain, warn, sizeof(warn)), 0);
	assert_string_equal(warn, "");
	assert_string_equal(b2, "1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secret_files_read),
		cmocka_unit_test(test_secret_files_refused),
		cmocka_unit_test(test_secrets_from_environment),
		cmocka_unit_test(test_hide_argv_secrets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
