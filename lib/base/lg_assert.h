/*
 * lg_assert: invariants of the core, checked in every build.
 *
 * LG_ASSERT(cond) evaluates cond always (a compare; nothing is formatted
 * unless it fails). When cond is false:
 *  - a handler set with lg_assert_set_handler() runs and the code carries
 *    on (tests count failures this way, the simulator turns them into
 *    violations of its seed);
 *  - else, built with -DLG_ASSERT_ABORT (make check's SAN=1 build and the
 *    fuzz build), it prints "file:line: assertion failed: cond (detail)"
 *    to stderr and aborts;
 *  - else (production) it reports once per call site, through the reporter
 *    set with lg_assert_set_reporter() (the gateway's log) or to stderr,
 *    and carries on: a broken invariant is a bug to fix, not a reason to
 *    drop every client.
 * Not for bad input or out-of-memory: those are errors the caller answers.
 */
#ifndef LG_ASSERT_H
#define LG_ASSERT_H

#include <stdbool.h>

/* What a failed assertion does instead of the default (tests). */
typedef void (*lg_assert_handler)(const char *file, int line, const char *cond, const char *detail);

/* Sets the handler (NULL: the default of this build); returns the previous. */
lg_assert_handler lg_assert_set_handler(lg_assert_handler h);

/* Where production builds report a failure once per site (NULL: stderr). */
void lg_assert_set_reporter(void (*report)(const char *file, int line, const char *cond,
					   const char *detail));

/* true when this build aborts on a failed assertion (LG_ASSERT_ABORT). */
bool lg_assert_aborts(void);

/* The failure path of LG_ASSERT; *reported is the call site's flag. detail
 * may be NULL. */
void lg_assert_failed(bool *reported, const char *file, int line, const char *cond,
		      const char *detail) __attribute__((cold));

#define LG_ASSERT_MSG(cond, detail)                                                                \
	do {                                                                                       \
		if (__builtin_expect(!(cond), 0)) {                                                \
			static bool lg_assert_reported_;                                           \
			lg_assert_failed(&lg_assert_reported_, __FILE__, __LINE__, #cond,          \
					 (detail));                                                \
		}                                                                                  \
	} while (0)

#define LG_ASSERT(cond) LG_ASSERT_MSG(cond, NULL)

#endif
