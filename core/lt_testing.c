/*
 * lt_testing: the testing helpers, as unconditional writes through the
 * locktable's store (see lt_testing.h).
 */
#include "core/lt_testing.h"

#include "core/lt_internal.h"

#include <stdlib.h>
#include <string.h>

struct helper {
	lt_test_cb cb;
	void *arg;
	bool token;
};

static void on_done(void *arg, const struct store_result *res)
{
	struct helper *h = arg;
	int64_t v = res->status == STORE_OK	   ? (h->token ? res->item.fence : 0)
		    : res->status == STORE_REFUSED ? LT_TEST_NO_ITEM /* only a release is */
						   : -1;
	lt_test_cb cb = h->cb;
	void *cb_arg = h->arg;
	free(h);
	cb(cb_arg, v);
}

static bool submit(struct locktable *t, const struct store_req *req, lt_test_cb cb, void *arg)
{
	struct helper *h = malloc(sizeof(*h));
	if (h == NULL)
		return false;
	h->cb = cb;
	h->arg = arg;
	h->token = req->op == STORE_ACQUIRE;
	if (store_submit(t->store, req, on_done, h) == NULL) {
		free(h);
		return false;
	}
	return true;
}

bool lt_simulate_holder(struct locktable *t, const char *name, int64_t lease_ms, const char *holder,
			lt_test_cb cb, void *arg)
{
	char owner[LT_ID_LEN + 1], rvn[LT_ID_LEN + 1];
	store_new_id(owner);
	store_new_id(rvn);
	struct store_req req = {
		.op = STORE_ACQUIRE,
		.name = name,
		.owner = owner,
		.rvn = rvn,
		.holder = holder,
		.lease_ms = lease_ms,
		.ttl = lt_ttl(t),
		.unconditional = true,
	};
	return submit(t, &req, cb, arg);
}

bool lt_simulate_release(struct locktable *t, const char *name, lt_test_cb cb, void *arg)
{
	struct store_req req = {
		.op = STORE_RELEASE, .name = name, .ttl = lt_ttl(t), .unconditional = true};
	return submit(t, &req, cb, arg);
}

bool lt_simulate_delete(struct locktable *t, const char *name, lt_test_cb cb, void *arg)
{
	struct store_req req = {.op = STORE_DELETE, .name = name};
	return submit(t, &req, cb, arg);
}

bool lt_wait_for_refusal(struct locktable *t, const char *name, lt_test_cb cb, void *arg)
{
	size_t len = strlen(name);
	struct lt_hook *h = malloc(sizeof(*h) + len + 1);
	if (h == NULL)
		return false;
	h->cb = cb;
	h->arg = arg;
	memcpy(h->name, name, len + 1);
	h->next = t->hooks;
	t->hooks = h;
	return true;
}

void lt_wait_for_refusal_cancel(struct locktable *t, lt_test_cb cb, void *arg)
{
	struct lt_hook **p = &t->hooks;
	while (*p != NULL) {
		struct lt_hook *h = *p;
		if (h->cb == cb && h->arg == arg) {
			*p = h->next;
			free(h);
		} else {
			p = &h->next;
		}
	}
}
