/*
 * store_contract.c: the store contract suite (see store_contract.h). Every
 * test states what store.h promises; none knows which store it runs on.
 */
#include "core/store_tx.h"
#include "tests/support/store_contract_int.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static unsigned name_seq;

int store_contract_setup(void **state)
{
	const struct store_factory *f = *state;
	struct fixture *fx = calloc(1, sizeof *fx);
	if (!fx)
		return -1;
	fx->f = f;
	fx->s = f->make(f->arg);
	if (!fx->s) {
		free(fx);
		return -1;
	}
	char id[33];
	store_new_id(id);
	snprintf(fx->name, sizeof fx->name, "contract-%u-%.8s", ++name_seq, id);
	*state = fx;
	return 0;
}

int store_contract_teardown(void **state)
{
	struct fixture *fx = *state;
	fx->f->destroy(fx->f->arg, fx->s);
	*state = (void *)fx->f;
	free(fx);
	return 0;
}

struct wait {
	bool done;
	int calls;
	struct store_result res;
};

static void on_result(void *arg, const struct store_result *res)
{
	struct wait *w = arg;
	w->calls++;
	w->done = true;
	w->res = *res;
}

bool store_contract_do(const struct store_factory *f, struct store *s, const struct store_req *req,
		       struct store_result *out)
{
	struct wait w = {0};
	struct store_call *c = store_submit(s, req, on_result, &w);
	assert_non_null(c);
	assert_false(w.done); /* never inside store_submit() */
	f->run(f->arg, &w.done);
	if (!w.done)
		fail_msg("%s: no answer to %s", f->name, store_op_name(req->op));
	assert_int_equal(w.calls, 1);
	*out = w.res;
	return true;
}

/* ---- one line per operation ---- */

struct store_result store_contract_op(struct fixture *fx, struct store_req r)
{
	struct store_result res;
	r.name = r.name ? r.name : fx->name;
	store_contract_do(fx->f, fx->s, &r, &res);
	if (res.status == STORE_TRANSIENT || res.status == STORE_FATAL ||
	    res.status == STORE_NO_TABLE)
		print_message("%s %s: %s %s %s\n", fx->f->name, store_op_name(r.op),
			      store_status_name(res.status), res.error_type ? res.error_type : "",
			      res.message);
	return res;
}

static struct store_result op(struct fixture *fx, struct store_req r)
{
	return store_contract_op(fx, r);
}

static struct store_result acquire(struct fixture *fx, const char *owner, const char *rvn,
				   const char *seen, const char *holder)
{
	return op(fx, (struct store_req){.op = STORE_ACQUIRE,
					 .owner = owner,
					 .rvn = rvn,
					 .seen_rvn = seen,
					 .holder = holder,
					 .lease_ms = 30000});
}

static struct store_result renew(struct fixture *fx, const char *owner, const char *rvn,
				 const char *holder)
{
	return op(fx, (struct store_req){.op = STORE_RENEW,
					 .owner = owner,
					 .rvn = rvn,
					 .holder = holder,
					 .lease_ms = 20000});
}

static struct store_result release(struct fixture *fx, const char *owner)
{
	return op(fx, (struct store_req){.op = STORE_RELEASE, .owner = owner});
}

static struct store_result read_item(struct fixture *fx)
{
	return op(fx, (struct store_req){.op = STORE_READ});
}

static struct store_result del(struct fixture *fx)
{
	return op(fx, (struct store_req){.op = STORE_DELETE});
}

static struct store_result check(struct fixture *fx, const char *owner, int64_t token)
{
	return op(fx, (struct store_req){.op = STORE_CHECK, .owner = owner, .token = token});
}

static struct store_result announce(struct fixture *fx, const char *waiter, int64_t ms)
{
	return op(fx, (struct store_req){.op = STORE_ANNOUNCE, .waiter = waiter, .waiter_ms = ms});
}

static struct store_result withdraw(struct fixture *fx, const char *waiter)
{
	return op(fx, (struct store_req){.op = STORE_WITHDRAW, .waiter = waiter});
}

/* An acquire that may take the announcement of waiter (and removes it). */
static struct store_result acquire_w(struct fixture *fx, const char *owner, const char *rvn,
				     const char *seen, const char *waiter)
{
	return op(fx, (struct store_req){.op = STORE_ACQUIRE,
					 .owner = owner,
					 .rvn = rvn,
					 .seen_rvn = seen,
					 .waiter = waiter,
					 .lease_ms = 30000});
}

static void assert_waiter(const struct lock_item *it, const char *waiter, int64_t ms)
{
	if (waiter == NULL) {
		assert_false(it->has_waiter);
		assert_string_equal(it->waiter, "");
		return;
	}
	assert_true(it->has_waiter);
	assert_string_equal(it->waiter, waiter);
	assert_int_equal(it->waiter_ms, ms);
}

static void assert_held(const struct lock_item *it, const char *owner, const char *rvn,
			int64_t fence, int64_t lease_ms, const char *holder)
{
	assert_true(it->exists);
	assert_true(it->has_owner);
	assert_true(it->has_rvn);
	assert_true(it->has_lease);
	assert_true(it->has_fence);
	assert_string_equal(it->owner, owner);
	assert_string_equal(it->rvn, rvn);
	assert_int_equal(it->fence, fence);
	assert_int_equal(it->lease_ms, lease_ms);
	assert_string_equal(it->holder, holder ? holder : "");
	assert_string_equal(it->type, "LOCK");
}

/* ---- the contract ---- */

static void acquire_free(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = acquire(fx, "A", "r1", NULL, "pod-a");
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	r = read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
}

static void acquire_refused_with_item(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = acquire(fx, "B", "r2", NULL, "pod-b");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	/* a stale seen rvn is no takeover */
	r = acquire(fx, "B", "r2", "r0", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
}

static void acquire_takeover_of_seen_rvn(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = acquire(fx, "B", "r2", "r1", "pod-b");
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "B", "r2", 2, 30000, "pod-b");
	/* the old holder's renewal finds it taken over */
	r = renew(fx, "A", "r3", "pod-a");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "B", "r2", 2, 30000, "pod-b");
}

static void acquire_retry_of_own_owner(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	/* the answer was lost; the retry finds its own owner and succeeds */
	struct store_result r = acquire(fx, "A", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "A", "r2", 2, 30000, NULL);
}

static void fence_increments_from_1(void **state)
{
	struct fixture *fx = *state;
	for (int64_t i = 1; i <= 3; i++) {
		char owner[8];
		snprintf(owner, sizeof owner, "o%d", (int)i);
		struct store_result r = acquire(fx, owner, owner, NULL, NULL);
		assert_int_equal(r.status, STORE_OK);
		assert_int_equal(r.item.fence, i);
		assert_int_equal(release(fx, owner).status, STORE_OK);
	}
	/* deleting the item starts the token at 1 again */
	assert_int_equal(del(fx).status, STORE_OK);
	struct store_result r = acquire(fx, "X", "rx", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 1);
}

static void holder_removed_when_null(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = acquire(fx, "A", "r1", NULL, "pod-a");
	assert_string_equal(r.item.holder, "pod-a");
	r = renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.holder, "");
	r = renew(fx, "A", "r3", "pod-a2");
	assert_string_equal(r.item.holder, "pod-a2");
	/* an acquire without a label removes the label of the holder before */
	r = acquire(fx, "B", "r4", "r3", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_string_equal(r.item.holder, "");
	assert_string_equal(read_item(fx).item.holder, "");
}

static void renew_ok(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, "h").status, STORE_OK);
	struct store_result r = renew(fx, "A", "r2", "h");
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "A", "r2", 1, 20000, "h");
	r = read_item(fx);
	assert_held(&r.item, "A", "r2", 1, 20000, "h");
}

static void renew_refused_taken_over(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_req u = {.op = STORE_ACQUIRE,
			      .owner = "B",
			      .rvn = "rb",
			      .holder = "other",
			      .lease_ms = 5000,
			      .unconditional = true};
	assert_int_equal(op(fx, u).status, STORE_OK);
	struct store_result r = renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "B", "rb", 2, 5000, "other");
}

static void renew_refused_deleted_never_creates(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(del(fx).status, STORE_OK);
	struct store_result r = renew(fx, "A", "r2", "h");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.exists);
	r = read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
}

static void renew_after_release_refused(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(release(fx, "A").status, STORE_OK);
	struct store_result r = renew(fx, "A", "r2", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
}

static void release_keeps_item(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_result r = release(fx, "A");
	assert_int_equal(r.status, STORE_OK);
	for (int i = 0; i < 2; i++) {
		assert_true(r.item.exists);
		assert_false(r.item.has_owner);
		assert_false(r.item.has_lease);
		assert_string_equal(r.item.holder, "");
		assert_true(r.item.has_fence);
		assert_int_equal(r.item.fence, 1);
		assert_true(r.item.has_rvn);
		assert_string_equal(r.item.rvn, "r1");
		assert_string_equal(r.item.type, "LOCK");
		r = read_item(fx);
		assert_int_equal(r.status, STORE_OK);
	}
	/* free again: the next acquire needs no takeover */
	r = acquire(fx, "B", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
}

static void release_refused(void **state)
{
	struct fixture *fx = *state;
	/* no item: refused, and none is made */
	struct store_result r = release(fx, "A");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.exists);
	assert_false(read_item(fx).item.exists);
	/* somebody else's lock is left alone */
	assert_int_equal(acquire(fx, "B", "rb", NULL, "pod-b").status, STORE_OK);
	r = release(fx, "A");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "B", "rb", 1, 30000, "pod-b");
	r = read_item(fx);
	assert_held(&r.item, "B", "rb", 1, 30000, "pod-b");
}

static void read_absent(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = read_item(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
}

static void delete_item(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(del(fx).status, STORE_OK); /* nothing to delete is fine */
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_result r = del(fx);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.exists);
	assert_false(read_item(fx).item.exists);
}

static void check_ok_and_refused(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = check(fx, "A", 1);
	assert_int_equal(r.status, STORE_REFUSED); /* no item */
	assert_false(r.item.exists);
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(check(fx, "A", 1).status, STORE_OK);
	r = check(fx, "A", 2); /* wrong token */
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	r = check(fx, "B", 1); /* wrong owner */
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	assert_int_equal(release(fx, "A").status, STORE_OK);
	r = check(fx, "A", 1); /* released */
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
}

static void ttl_written(void **state)
{
	struct fixture *fx = *state;
	struct store_req a = {.op = STORE_ACQUIRE,
			      .owner = "A",
			      .rvn = "r1",
			      .lease_ms = 1000,
			      .ttl = 1900000000};
	struct store_result r = op(fx, a);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.ttl, 1900000000);
	struct store_req n = {
		.op = STORE_RENEW, .owner = "A", .rvn = "r2", .lease_ms = 1000, .ttl = 1900000100};
	r = op(fx, n);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.ttl, 1900000100);
	struct store_req l = {.op = STORE_RELEASE, .owner = "A", .ttl = 1900000200};
	r = op(fx, l);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.ttl, 1900000200);
	assert_int_equal(read_item(fx).item.ttl, 1900000200);
}

static void unconditional_acquire_and_release(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	struct store_req u = {.op = STORE_ACQUIRE,
			      .owner = "B",
			      .rvn = "rb",
			      .lease_ms = 2000,
			      .unconditional = true};
	struct store_result r = op(fx, u);
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "B", "rb", 2, 2000, NULL);
	struct store_req rel = {.op = STORE_RELEASE, .unconditional = true};
	r = op(fx, rel);
	assert_int_equal(r.status, STORE_OK);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 2);
	/* an unconditional release makes no item where there is none */
	assert_int_equal(del(fx).status, STORE_OK);
	r = op(fx, rel);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.exists);
	assert_false(read_item(fx).item.exists);
}

static void requests_counted(void **state)
{
	struct fixture *fx = *state;
	uint64_t before[STORE_OP_COUNT];
	memcpy(before, fx->s->requests, sizeof before);
	acquire(fx, "A", "r1", NULL, NULL);
	renew(fx, "A", "r2", NULL);
	read_item(fx);
	check(fx, "A", 1);
	announce(fx, "W", 1000);
	withdraw(fx, "W");
	release(fx, "A");
	del(fx);
	store_contract_scan_page(fx);
	for (int i = 0; i < STORE_OP_COUNT; i++)
		if (i != STORE_TRANSACT) /* transact_counted */
			assert_int_equal(fx->s->requests[i] - before[i], 1);
	assert_int_equal(fx->s->in_flight, 0);
}

struct tx_box {
	bool done;
	enum store_status status;
};

static void tx_done(void *arg, const struct store_tx_result *res)
{
	struct tx_box *b = arg;
	b->done = true;
	b->status = res->status;
}

/* A fenced transaction is one STORE_TRANSACT request, answered later
 * (never inside the call), whatever the store makes of it: the embedded
 * store refuses it, DynamoDB refuses a table that does not exist. */
static void transact_counted(void **state)
{
	struct fixture *fx = *state;
	static const char items[] =
		"[{\"Put\":{\"TableName\":\"lg-no-such-table\",\"Item\":{\"id\":{\"S\":\"1\"}}}}]";
	uint64_t before = fx->s->requests[STORE_TRANSACT];
	acquire(fx, "A", "r1", NULL, NULL);
	struct tx_box b = {0};
	struct store_tx_req req = {.name = fx->name,
				   .owner = "A",
				   .token = 1,
				   .items = items,
				   .items_len = sizeof(items) - 1};
	struct store_call *c = store_transact(fx->s, &req, tx_done, &b);
	assert_non_null(c);
	assert_false(b.done);
	assert_int_equal(fx->s->requests[STORE_TRANSACT] - before, 1);
	fx->f->run(fx->f->arg, &b.done);
	assert_true(b.done);
	assert_int_equal(b.status, STORE_FATAL);
	assert_int_equal(fx->s->in_flight, 0);
}

static void never_called(void *arg, const struct store_result *res)
{
	fail_msg("the callback of a cancelled request ran");
}

static void cancel_means_no_callback(void **state)
{
	struct fixture *fx = *state;
	struct store_req r = {.op = STORE_READ, .name = fx->name};
	struct store_call *c = store_submit(fx->s, &r, never_called, NULL);
	assert_non_null(c);
	store_cancel(fx->s, c);
	store_cancel(fx->s, NULL);
	assert_int_equal(fx->s->in_flight, 0);
	/* the store still works, and the cancelled call stays silent */
	assert_int_equal(read_item(fx).status, STORE_OK);
}

static void request_strings_copied(void **state)
{
	struct fixture *fx = *state;
	char owner[8] = "A", rvn[8] = "r1", holder[8] = "h";
	struct store_req r = {.op = STORE_ACQUIRE,
			      .name = fx->name,
			      .owner = owner,
			      .rvn = rvn,
			      .holder = holder,
			      .lease_ms = 30000};
	struct wait w = {0};
	struct store_call *c = store_submit(fx->s, &r, on_result, &w);
	assert_non_null(c);
	strcpy(owner, "X");
	strcpy(rvn, "X");
	strcpy(holder, "X");
	fx->f->run(fx->f->arg, &w.done);
	assert_true(w.done);
	assert_int_equal(w.res.status, STORE_OK);
	assert_held(&w.res.item, "A", "r1", 1, 30000, "h");
}

/* ---- items that are not locks a write may raise (store.h's guard) ---- */

static struct lock_item raw_item(const char *type, const char *owner, const char *rvn, bool lease,
				 bool fence, bool fence_bad, int64_t fence_v)
{
	struct lock_item it = {.exists = true, .has_lease = lease, .lease_ms = lease ? 30000 : 0};
	snprintf(it.type, sizeof it.type, "%s", type);
	it.has_owner = owner != NULL;
	snprintf(it.owner, sizeof it.owner, "%s", owner ? owner : "");
	it.has_rvn = rvn != NULL;
	snprintf(it.rvn, sizeof it.rvn, "%s", rvn ? rvn : "");
	it.has_fence = fence;
	it.fence_bad = fence_bad;
	it.fence = fence_v;
	return it;
}

/* The attributes a guard looks at, as read back. */
static void assert_same_item(const char *what, const struct lock_item *a, const struct lock_item *b)
{
	if (a->exists != b->exists || a->has_owner != b->has_owner || a->has_rvn != b->has_rvn ||
	    a->has_lease != b->has_lease || a->has_fence != b->has_fence ||
	    a->fence_bad != b->fence_bad || a->fence != b->fence || a->lease_ms != b->lease_ms ||
	    strcmp(a->owner, b->owner) != 0 || strcmp(a->rvn, b->rvn) != 0 ||
	    strcmp(a->type, b->type) != 0)
		fail_msg("%s: the item changed: owner '%s' -> '%s', fence %lld -> %lld", what,
			 a->owner, b->owner, (long long)a->fence, (long long)b->fence);
}

/* Another application's item, an owner without rvn or leaseMs, a fence
 * that is negative, at the top of int64 or past it: the acquire is refused
 * (a free-lock write, a takeover of the item's rvn and a retry of its
 * owner alike), the item comes back as it is and is not written on. */
static void acquire_refused_on_items_not_locks(void **state)
{
	struct fixture *fx = *state;
	const struct {
		const char *what;
		struct lock_item it;
	} cases[] = {
		{"another application's item", raw_item("", NULL, "r0", false, false, false, 0)},
		{"another application's held item", raw_item("", "o0", "r0", true, true, false, 3)},
		{"another _type", raw_item("JOB", NULL, "r0", false, true, false, 3)},
		{"an owner without rvn", raw_item("LOCK", "o0", NULL, true, true, false, 3)},
		{"an owner without leaseMs", raw_item("LOCK", "o0", "r0", false, true, false, 3)},
		{"fence -5", raw_item("LOCK", NULL, "r0", false, true, false, -5)},
		{"fence INT64_MAX", raw_item("LOCK", NULL, "r0", false, true, false, INT64_MAX)},
		{"fence 2^64 + 5", raw_item("LOCK", NULL, "r0", false, true, true, 0)},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *what = cases[i].what;
		assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &cases[i].it));
		struct store_result before = read_item(fx);
		assert_int_equal(before.status, STORE_OK);
		assert_same_item(what, &cases[i].it, &before.item); /* read as written */
		const char *owners[] = {"A", "o0", "A"}, *seen[] = {NULL, NULL, "r0"};
		for (int k = 0; k < 3; k++) {
			struct store_result r = acquire(fx, owners[k], "r1", seen[k], NULL);
			if (r.status != STORE_REFUSED)
				fail_msg("%s (%d): %s", what, k, store_status_name(r.status));
			assert_same_item(what, &before.item, &r.item);
			struct store_result after = read_item(fx);
			assert_same_item(what, &before.item, &after.item);
		}
	}
}

/* What is a lock keeps working: a free lock after a release, a lock item
 * without a fence yet (ADD starts it at 1), and the last token. */
static void acquire_on_lock_items(void **state)
{
	struct fixture *fx = *state;
	const struct {
		const char *what;
		struct lock_item it;
		int64_t token;
	} cases[] = {
		{"released", raw_item("LOCK", NULL, "r0", false, true, false, 3), 4},
		{"no fence yet", raw_item("LOCK", NULL, NULL, false, false, false, 0), 1},
		{"fence 0", raw_item("LOCK", NULL, "r0", false, true, false, 0), 1},
		{"the last token", raw_item("LOCK", NULL, "r0", false, true, false, INT64_MAX - 1),
		 INT64_MAX},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &cases[i].it));
		struct store_result r = acquire(fx, "A", "r1", NULL, NULL);
		if (r.status != STORE_OK)
			fail_msg("%s: %s", cases[i].what, store_status_name(r.status));
		assert_held(&r.item, "A", "r1", cases[i].token, 30000, NULL);
	}
	/* and past the last token, nothing is written */
	struct store_result r = acquire(fx, "B", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "A", "r1", INT64_MAX, 30000, NULL);
}

/* ---- announcements (Fair across replicas) ---- */

/* An announcement goes on a held item only, beside the holder: rvn, owner,
 * fence and leaseMs stay as they are, renewals keep it, one at a time. */
static void announce_on_held_leaves_rvn(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = announce(fx, "W1", 1000);
	assert_int_equal(r.status, STORE_REFUSED); /* no item: none made */
	assert_false(r.item.exists);
	assert_false(read_item(fx).item.exists);
	assert_int_equal(acquire(fx, "A", "r1", NULL, "pod-a").status, STORE_OK);
	r = announce(fx, "W1", 1000);
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	assert_waiter(&r.item, "W1", 1000);
	r = read_item(fx);
	assert_held(&r.item, "A", "r1", 1, 30000, "pod-a");
	assert_waiter(&r.item, "W1", 1000);
	/* the holder sees it in its renewal's answer */
	r = renew(fx, "A", "r2", "pod-a");
	assert_int_equal(r.status, STORE_OK);
	assert_waiter(&r.item, "W1", 1000);
	/* one slot: a second waiter is refused and shown the first */
	r = announce(fx, "W2", 500);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_waiter(&r.item, "W1", 1000);
	assert_held(&r.item, "A", "r2", 1, 20000, "pod-a");
	/* a hand-off (takeover of the holder's own rvn) keeps it */
	r = acquire(fx, "B", "r3", "r2", "pod-a");
	assert_int_equal(r.status, STORE_OK);
	assert_waiter(&r.item, "W1", 1000);
}

/* A released item keeps the announcement: it is reserved for that waiter.
 * Others' acquires are refused; the waiter's takes it and removes it. */
static void announced_free_item_is_reserved(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(announce(fx, "W1", 700).status, STORE_OK);
	struct store_result r = release(fx, "A");
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	assert_waiter(&r.item, "W1", 700);
	r = announce(fx, "W2", 700); /* not on a free item */
	assert_int_equal(r.status, STORE_REFUSED);
	assert_waiter(&r.item, "W1", 700);
	r = acquire(fx, "B", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.item.has_owner);
	assert_waiter(&r.item, "W1", 700);
	r = acquire_w(fx, "B", "r2", NULL, "W2"); /* another waiter's id */
	assert_int_equal(r.status, STORE_REFUSED);
	r = acquire_w(fx, "B", "r2", NULL, "W1");
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "B", "r2", 2, 30000, NULL);
	assert_waiter(&r.item, NULL, 0);
	r = read_item(fx);
	assert_waiter(&r.item, NULL, 0);
}

/* An acquire that names a waiter never removes another's announcement,
 * even by a takeover or its own retry; one that names none keeps it. */
static void acquire_keeps_other_announcements(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(announce(fx, "W1", 700).status, STORE_OK);
	struct store_result r = acquire_w(fx, "B", "r2", "r1", "W2");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	/* a takeover naming no waiter: done, the announcement stays */
	r = acquire(fx, "B", "r2", "r1", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_waiter(&r.item, "W1", 700);
	/* the announced waiter's takeover: done, and removed */
	r = acquire_w(fx, "C", "r3", "r2", "W1");
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "C", "r3", 3, 30000, NULL);
	assert_waiter(&r.item, NULL, 0);
	/* naming a waiter that is not there is allowed */
	r = acquire_w(fx, "C", "r4", NULL, "W9");
	assert_int_equal(r.status, STORE_OK);
	assert_held(&r.item, "C", "r4", 4, 30000, NULL);
}

/* A withdrawal removes only its own announcement; the slot is free again. */
static void withdraw_own_only(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	assert_int_equal(announce(fx, "W1", 700).status, STORE_OK);
	struct store_result r = withdraw(fx, "W2");
	assert_int_equal(r.status, STORE_REFUSED);
	assert_waiter(&r.item, "W1", 700);
	r = withdraw(fx, "W1");
	assert_int_equal(r.status, STORE_OK);
	assert_waiter(&r.item, NULL, 0);
	assert_held(&r.item, "A", "r1", 1, 30000, NULL);
	r = withdraw(fx, "W1");
	assert_int_equal(r.status, STORE_REFUSED);
	r = announce(fx, "W2", 900);
	assert_int_equal(r.status, STORE_OK);
	assert_waiter(&r.item, "W2", 900);
	/* a free item that was announced: withdrawn, it is free for all */
	assert_int_equal(release(fx, "A").status, STORE_OK);
	assert_int_equal(withdraw(fx, "W2").status, STORE_OK);
	assert_int_equal(acquire(fx, "B", "r2", NULL, NULL).status, STORE_OK);
}

/* Not on another application's item. */
static void announce_refused_on_items_not_locks(void **state)
{
	struct fixture *fx = *state;
	struct lock_item it = raw_item("ORDER", "X", "r0", true, true, false, 1);
	assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &it));
	struct store_result r = announce(fx, "W1", 700);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_waiter(&r.item, NULL, 0);
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

int store_contract_run(const struct store_factory *f)
{
	struct CMUnitTest tests[64 + STORE_CONTRACT_SCAN_TESTS] = {
		T(acquire_free),
		T(acquire_refused_with_item),
		T(acquire_takeover_of_seen_rvn),
		T(acquire_retry_of_own_owner),
		T(fence_increments_from_1),
		T(holder_removed_when_null),
		T(renew_ok),
		T(renew_refused_taken_over),
		T(renew_refused_deleted_never_creates),
		T(renew_after_release_refused),
		T(release_keeps_item),
		T(release_refused),
		T(read_absent),
		T(delete_item),
		T(check_ok_and_refused),
		T(ttl_written),
		T(unconditional_acquire_and_release),
		T(requests_counted),
		T(transact_counted),
		T(cancel_means_no_callback),
		T(request_strings_copied),
		T(acquire_refused_on_items_not_locks),
		T(acquire_on_lock_items),
		T(announce_on_held_leaves_rvn),
		T(announced_free_item_is_reserved),
		T(acquire_keeps_other_announcements),
		T(withdraw_own_only),
		T(announce_refused_on_items_not_locks),
	};
	size_t n = 0;
	while (n < sizeof tests / sizeof tests[0] && tests[n].name != NULL)
		n++;
	for (size_t i = 0; i < STORE_CONTRACT_SCAN_TESTS; i++)
		tests[n++] = store_contract_scan_tests[i];
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	return _cmocka_run_group_tests(f->name, tests, n, NULL, NULL);
}
