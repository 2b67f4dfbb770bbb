/*
 * lg_assert: what a failed LG_ASSERT does (see lg_assert.h).
 */
#include "lib/base/lg_assert.h"

#include <stdio.h>
#include <stdlib.h>

static lg_assert_handler handler;
static void (*reporter)(const char *file, int line, const char *cond, const char *detail);

lg_assert_handler lg_assert_set_handler(lg_assert_handler h)
{
	lg_assert_handler old = handler;
	handler = h;
	return old;
}

void lg_assert_set_reporter(void (*report)(const char *file, int line, const char *cond,
					   const char *detail))
{
	reporter = report;
}

bool lg_assert_aborts(void)
{
#ifdef LG_ASSERT_ABORT
	return true;
#else
	return false;
#endif
}

static void to_stderr(const char *file, int line, const char *cond, const char *detail)
{
	fprintf(stderr, "%s:%d: assertion failed: %s%s%s%s\n", file, line, cond,
		detail != NULL ? " (" : "", detail != NULL ? detail : "",
		detail != NULL ? ")" : "");
}

void lg_assert_failed(bool *reported, const char *file, int line, const char *cond,
		      const char *detail)
{
	if (handler != NULL) {
		handler(file, line, cond, detail);
		return;
	}
	if (lg_assert_aborts()) {
		to_stderr(file, line, cond, detail);
		abort();
	}
	if (*reported)
		return;
	*reported = true;
	(reporter != NULL ? reporter : to_stderr)(file, line, cond, detail);
}
