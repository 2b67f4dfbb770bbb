/*
 * test_config_pool: the --ddb-max-in-flight option (gateway/config): its
 * default, its bounds, its sources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/config.h"

static enum cfg_result load(struct cfg *c, char *const *argv, char *const *envp, char *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return cfg_load(c, argc, argv, envp, err, 256);
}

static char *no_env[] = {NULL};

static void test_default(void **state)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate", NULL};
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_int_equal(c.ddb_max_in_flight, 256);
}

static void test_bounds(void **state)
{
	static const struct {
		const char *val;
		bool ok;
		long long want;
	} cases[] = {
		{"1", true, 1},	    {"4096", true, 4096}, {"64", true, 64},   {"0", false, 0},
		{"4097", false, 0}, {"-5", false, 0},	  {"many", false, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c;
		char err[256] = "";
		char *argv[] = {"leasegate", "--ddb-max-in-flight", (char *)cases[i].val, NULL};
		enum cfg_result r = load(&c, argv, no_env, err);
		if (cases[i].ok) {
			assert_int_equal(r, CFG_OK);
			assert_int_equal(c.ddb_max_in_flight, cases[i].want);
		} else {
			assert_int_equal(r, CFG_ERROR);
			if (!strstr(err, "--ddb-max-in-flight"))
				fail_msg("%s: message \"%s\" does not name the option",
					 cases[i].val, err);
		}
	}
}

static void test_environment(void **state)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate", NULL};
	char *env[] = {"LEASEGATE_DDB_MAX_IN_FLIGHT=512", NULL};
	assert_int_equal(load(&c, argv, env, err), CFG_OK);
	assert_int_equal(c.ddb_max_in_flight, 512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
