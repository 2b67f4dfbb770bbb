/*
 * fake_env: a process environment for tests of code that takes a
 * creds_getenv_fn (the credential chain): name/value pairs set by the test,
 * read through fake_env_get. Not the real environment: nothing is copied
 * and the strings are the caller's, which must outlive the fake_env.
 */
#ifndef LG_FAKE_ENV_H
#define LG_FAKE_ENV_H

#include <stddef.h>

#define FAKE_ENV_MAX 32

struct fake_env {
	const char *kv[FAKE_ENV_MAX][2];
	size_t n;
};

/* A creds_getenv_fn: the value of the first pair named name (arg is the
 * struct fake_env), NULL when there is none. */
const char *fake_env_get(void *arg, const char *name);

/* Appends name=value; an earlier pair of the same name still wins. More
 * than FAKE_ENV_MAX pairs fail the cmocka test. */
void fake_env_set(struct fake_env *e, const char *name, const char *value);

#endif
