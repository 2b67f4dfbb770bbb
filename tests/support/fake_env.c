/*
 * fake_env: see fake_env.h.
 */
#include "tests/support/fake_env.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

const char *fake_env_get(void *arg, const char *name)
{
	struct fake_env *e = arg;
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->kv[i][0], name) == 0)
			return e->kv[i][1];
	return NULL;
}

void fake_env_set(struct fake_env *e, const char *name, const char *value)
{
	assert_true(e->n < FAKE_ENV_MAX);
	e->kv[e->n][0] = name;
	e->kv[e->n][1] = value;
	e->n++;
}
