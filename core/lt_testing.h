/*
 * lt_testing: what other processes do to a lock, for tests (the reference's
 * DynaSharp.Coordination.Testing). They write through the locktable's store
 * without a condition, so they work on the embedded store and on DynamoDB
 * alike. Not for a table in production.
 */
#ifndef LG_LT_TESTING_H
#define LG_LT_TESTING_H

#include "core/locktable.h"

/* value: the fencing token (simulate_holder), 0 (others), -1 on an error
 * of the store, or LT_TEST_NO_ITEM (simulate_release of a lock without an
 * item: nothing was written). */
#define LT_TEST_NO_ITEM (-2)
typedef void (*lt_test_cb)(void *arg, int64_t value);

/* Another process holds name, acquired now and never renewed. */
bool lt_simulate_holder(struct locktable *t, const char *name, int64_t lease_ms, const char *holder,
			lt_test_cb cb, void *arg);
/* The holder, whoever it was, released name. */
bool lt_simulate_release(struct locktable *t, const char *name, lt_test_cb cb, void *arg);
/* The item of name is deleted (TTL, an operator). */
bool lt_simulate_delete(struct locktable *t, const char *name, lt_test_cb cb, void *arg);
/* cb runs when a try or a poll of t next finds name held and is turned
 * away (value 0). One registration per call; runs once. */
bool lt_wait_for_refusal(struct locktable *t, const char *name, lt_test_cb cb, void *arg);
/* Takes back every registration of lt_wait_for_refusal with cb and arg
 * that has not run: none of them will. */
void lt_wait_for_refusal_cancel(struct locktable *t, lt_test_cb cb, void *arg);

#endif
