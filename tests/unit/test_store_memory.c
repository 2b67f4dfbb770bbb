/*
 * test_store_memory: what the embedded store adds to the store contract
 * (which test_store_contract runs on it): completions come in submission
 * order, from the loop, a cancelled one never; a call made by a callback
 * completes after those already queued; released items are forgotten
 * after the retention, and new names refused past the most items; an
 * announced waiter's bytes are counted and given back, and so are those
 * of the fields few items have (kept out of the item); a
 * scan's pages are exact, complete across the table's growth, and queued
 * with the other calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/base/clock.h"
#include "core/store/store_kv.h"
#include "core/store/store_memory.h"
#include "core/store/store_shared.h"

struct order {
	struct store *s;
	char seen[16];
	size_t n;
	bool submit_more; /* the first callback submits 'd' */
};

static struct order *order;

static void done(void *arg, const struct store_result *res)
{
	const char *tag = arg;
	assert_int_equal(res->status, STORE_OK);
	order->seen[order->n++] = tag[0];
	if (order->submit_more) {
		order->submit_more = false;
		struct store_req r = {.op = STORE_READ, .name = "d"};
		assert_non_null(store_submit(order->s, &r, done, "d"));
		assert_int_equal(order->n, 1); /* never inside store_submit */
	}
}

static void submit(struct store *s, const char *tag, struct store_call **call)
{
	struct store_req r = {.op = STORE_READ, .name = tag};
	*call = store_submit(s, &r, done, (void *)tag);
	assert_non_null(*call);
}

static void test_completions_in_order_cancel_and_later_calls(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct order o = {.s = s, .submit_more = true};
	struct store_call *a, *b, *x;
	order = &o;
	submit(s, "a", &a);
	submit(s, "b", &b);
	submit(s, "c", &x);
	store_cancel(s, b);
	assert_int_equal(o.n, 0); /* nothing before the loop runs */
	assert_int_equal(s->in_flight, 2);
	clock_fake_advance(c, 0);
	assert_string_equal(o.seen, "acd");
	assert_int_equal(s->in_flight, 0);
	assert_int_equal(s->requests[STORE_READ], 4); /* the cancelled one was sent */

	/* calls still queued when the store is freed are dropped */
	submit(s, "e", &x);
	store_free(s);
	clock_fake_advance(c, 0);
	assert_string_equal(o.seen, "acd");
	assert_int_equal(clock_armed(c), 0);
	clock_free(c);
}

/* With latency, calls complete on their own timers, still in order. */
static void test_latency_keeps_order(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct order o = {.s = s};
	struct store_call *x;
	order = &o;
	store_memory_set_latency(s, 5);
	submit(s, "a", &x);
	submit(s, "b", &x);
	clock_fake_advance(c, 4);
	assert_int_equal(o.n, 0);
	clock_fake_advance(c, 1);
	assert_string_equal(o.seen, "ab");
	store_free(s);
	clock_free(c);
}

/* One request, run to its answer on the fake clock. */
static struct store_result last;
static void keep(void *arg, const struct store_result *res)
{
	last = *res;
}

static enum store_status run(struct clock *c, struct store *s, enum store_op op, const char *name,
			     const char *owner)
{
	static unsigned n;
	char rvn[16]; /* each request its own, as the core's: an acquire is
			 refused by the arvn of its own (store.h) */
	snprintf(rvn, sizeof rvn, "r%u", ++n);
	struct store_req r = {.op = op, .name = name, .owner = owner, .rvn = rvn, .lease_ms = 1000};
	last.status = -1;
	assert_non_null(store_submit(s, &r, keep, NULL));
	clock_fake_advance(c, 0);
	return last.status;
}

#define HOUR 3600000LL

/* Released items are forgotten after the retention (as DynamoDB's TTL
 * deletes them), counted from their release, never before it and at most
 * a quarter of it later (the sweep ticks every eighth), with or without
 * requests: held items never, a name acquired again is kept; the memory
 * goes back to nothing; a forgotten lock starts its token at 1 again. */
static void test_released_items_forgotten_after_retention(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct store_memory_stats st;
	store_memory_limit(s, HOUR, 0);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "held", "o2"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "again", "o3"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "again", "o3"), STORE_OK);
	clock_fake_advance(c, HOUR / 2);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "again", "o4"), STORE_OK); /* kept */
	assert_int_equal(run(c, s, STORE_RELEASE, "again", "o4"), STORE_OK);
	clock_fake_advance(c, HOUR / 2 - 1);
	assert_int_equal(store_memory_items(s), 3); /* a: released an hour less 1 ms ago */
	clock_fake_advance(c, HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 2); /* a forgotten; "again" released 45 minutes ago */
	assert_int_equal(st.forgotten, 1);
	clock_fake_advance(c, 10 * HOUR);
	assert_int_equal(store_memory_items(s), 1); /* the held one stays */
	assert_int_equal(run(c, s, STORE_READ, "held", NULL), STORE_OK);
	assert_true(last.item.exists);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o5"), STORE_OK);
	assert_int_equal(last.item.fence, 1); /* a new item: its token starts again */
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o5"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "held", "o2"), STORE_OK);
	clock_fake_advance(c, HOUR + HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 0);
	assert_int_equal(st.bytes, 0);	     /* every byte counted is given back */
	assert_int_equal(clock_armed(c), 0); /* and the sweep stops with nothing to do */
	store_free(s);
	clock_free(c);
}

static struct store_sh_result sh_last;
static struct lock_item sh_slot0;
static void sh_keep(void *arg, const struct store_sh_result *res)
{
	sh_last = *res;
	sh_slot0 = res->slots[0];
	sh_last.slots = NULL;
}

static enum store_status sh_run(struct clock *c, struct store *s, struct store_sh_req r)
{
	sh_last.status = -1;
	assert_non_null(store_sh_submit(s, &r, sh_keep, NULL));
	clock_fake_advance(c, 0);
	return sh_last.status;
}

/* A shared name's header (the lock item, store_shared.h) is never
 * forgotten while a slot of it is held, however long, so its group token
 * never starts again under its readers; once the last slot is released it
 * is forgotten after the retention as any released lock, its slots with
 * it, every byte given back. */
static void test_shared_header_kept_while_held(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct store_memory_stats st;
	store_memory_limit(s, HOUR, 0);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "rw", "x"), STORE_OK); /* fence 1 */
	assert_int_equal(run(c, s, STORE_RELEASE, "rw", "x"), STORE_OK);
	struct store_sh_req g = {.op = STORE_SH_GRANT,
				 .name = "rw",
				 .mode = STORE_SH_SHARED,
				 .cap = 4,
				 .owner = "r1",
				 .rvn = "r1-r",
				 .first = true,
				 .seen_fence = 1,
				 .lease_ms = 1000};
	assert_int_equal(sh_run(c, s, g), STORE_OK);
	assert_int_equal(sh_last.header.lock.fence, 2);
	clock_fake_advance(c, 10 * HOUR);
	assert_int_equal(store_memory_items(s), 1);
	struct store_sh_req rd = {.op = STORE_SH_READ, .name = "rw", .cap = 4};
	assert_int_equal(sh_run(c, s, rd), STORE_OK);
	assert_int_equal(sh_last.header.scount, 1);
	assert_int_equal(sh_last.header.lock.fence, 2);
	assert_string_equal(sh_slot0.owner, "r1");
	struct store_sh_req rel = {.op = STORE_SH_RELEASE, .name = "rw", .cap = 4, .owner = "r1"};
	assert_int_equal(sh_run(c, s, rel), STORE_OK);
	clock_fake_advance(c, HOUR + HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(clock_armed(c), 0);
	store_free(s);
	clock_free(c);
}

/* An acquire leaves its item in the list of its earlier release
 * (store_memory_int.h): released again, it is still forgotten after the
 * retention from its last release, never before it and at most a quarter
 * later; held when its list comes due, it stays; deleted, it leaves its
 * list; the last one forgotten, the sweep stops. */
static void test_acquired_again_forgotten_on_time(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct store_memory_stats st;
	store_memory_limit(s, HOUR, 0);
	const char *names[] = {"a", "b", "d"};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(run(c, s, STORE_ACQUIRE, names[i], "o1"), STORE_OK);
		assert_int_equal(run(c, s, STORE_RELEASE, names[i], "o1"), STORE_OK);
	}
	clock_fake_advance(c, HOUR / 2);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o2"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o2"), STORE_OK); /* again */
	assert_int_equal(run(c, s, STORE_ACQUIRE, "b", "o2"), STORE_OK); /* held */
	assert_int_equal(run(c, s, STORE_DELETE, "d", NULL), STORE_OK);
	assert_int_equal(store_memory_items(s), 2);
	clock_fake_advance(c, HOUR - 1); /* a released an hour less 1 ms ago */
	assert_int_equal(store_memory_items(s), 2);
	clock_fake_advance(c, HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 1); /* a forgotten, b held */
	assert_int_equal(st.forgotten, 1);
	assert_int_equal(run(c, s, STORE_READ, "b", NULL), STORE_OK);
	assert_true(last.item.has_owner);
	assert_int_equal(run(c, s, STORE_RELEASE, "b", "o2"), STORE_OK);
	clock_fake_advance(c, HOUR - 1);
	assert_int_equal(store_memory_items(s), 1);
	clock_fake_advance(c, HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(clock_armed(c), 0);
	store_free(s);
	clock_free(c);
}

/* Without a retention nothing is forgotten (the default, for tests). */
/* A waiter's announcement, as a replica's (store.h STORE_ANNOUNCE). */
static enum store_status announce(struct clock *c, struct store *s, enum store_op op,
				  const char *name, const char *waiter)
{
	struct store_req r = {.op = op, .name = name, .waiter = waiter, .waiter_ms = 500};
	last.status = -1;
	assert_non_null(store_submit(s, &r, keep, NULL));
	clock_fake_advance(c, 0);
	return last.status;
}

/* An announced waiter is kept out of the item (few items ever have one):
 * its bytes are counted while it is there and given back when it is
 * withdrawn, taken by the waiter's acquire, or deleted with its item. */
static void test_waiter_bytes_counted_and_given_back(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct store_memory_stats st;
	store_memory_limit(s, HOUR, 0);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o1"), STORE_OK);
	store_memory_stats(s, &st);
	size_t held = st.bytes;
	assert_int_equal(announce(c, s, STORE_ANNOUNCE, "a", "waiter-1"), STORE_OK);
	assert_true(last.item.has_waiter);
	assert_string_equal(last.item.waiter, "waiter-1");
	assert_int_equal(last.item.waiter_ms, 500);
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, held + sizeof("waiter-1"));
	assert_int_equal(announce(c, s, STORE_ANNOUNCE, "a", "waiter-2"), STORE_REFUSED);
	assert_int_equal(announce(c, s, STORE_WITHDRAW, "a", "waiter-2"), STORE_REFUSED);
	assert_int_equal(announce(c, s, STORE_WITHDRAW, "a", "waiter-1"), STORE_OK);
	assert_false(last.item.has_waiter);
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, held);
	/* announced again, then taken by that waiter once released */
	assert_int_equal(announce(c, s, STORE_ANNOUNCE, "a", "waiter-1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o2"), STORE_REFUSED); /* reserved */
	struct store_req take = {.op = STORE_ACQUIRE,
				 .name = "a",
				 .owner = "o3",
				 .rvn = "r",
				 .lease_ms = 1000,
				 .waiter = "waiter-1"};
	assert_non_null(store_submit(s, &take, keep, NULL));
	clock_fake_advance(c, 0);
	assert_int_equal(last.status, STORE_OK);
	assert_false(last.item.has_waiter);
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, held);
	/* deleted with its announcement: everything given back */
	assert_int_equal(announce(c, s, STORE_ANNOUNCE, "a", "waiter-1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_DELETE, "a", NULL), STORE_OK);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 0);
	assert_int_equal(st.bytes, 0);
	store_free(s);
	clock_free(c);
}

/* A request with the fields few items have: a secret hash, and ADOPT's. */
static enum store_status run_rare(struct clock *c, struct store *s, struct store_req r)
{
	r.lease_ms = 1000;
	last.status = -1;
	assert_non_null(store_submit(s, &r, keep, NULL));
	clock_fake_advance(c, 0);
	return last.status;
}

static struct store_kv_result kv_last;
static void kv_keep(void *arg, const struct store_kv_result *res)
{
	kv_last = *res;
}

/* A script's commit of one key: SET with an expiry and a hash, or FREE. */
static enum store_status kv_run(struct clock *c, struct store *s, const char *name,
				enum store_kv_write w, const char *hash)
{
	struct store_kv_op op = {.name = name,
				 .seen = KV_SEEN_NONE,
				 .write = w,
				 .new_owner = "script",
				 .new_rvn = "kv-rvn",
				 .lease_ms = 1000,
				 .expires_at = 1700000009000,
				 .hash = hash};
	if (w == KV_W_FREE) {
		op.seen = KV_SEEN_HOLDER;
		op.owner = "script";
		op.fence = 0;
	}
	struct store_kv_req req = {.n = 1, .ops = &op};
	kv_last.status = -1;
	assert_non_null(store_kv_commit(s, &req, kv_keep, NULL));
	clock_fake_advance(c, 0);
	return kv_last.status;
}

#define SH1 "1111111111111111111111111111111111111111111111111111111111111111"
#define SH2 "2222222222222222222222222222222222222222222222222222222222222222"

/* The fields few items have (a lease's secret hash, the adopt markers, a
 * script's expiry and hash) are kept out of the item: a lock without them
 * costs its item (at most 264 bytes before its name; 560 when they were
 * in it) and its name; with any of them it costs one block more, counted
 * while one is set and given back when the last is cleared (a release, a
 * script's FREE), the item deleted or forgotten. */
static void test_rare_fields_bytes_counted_and_given_back(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct store_memory_stats st;
	store_memory_limit(s, HOUR, 0);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o1"), STORE_OK);
	store_memory_stats(s, &st);
	size_t plain = st.bytes; /* "a": no label, none of the rare fields */
	assert_true(plain <= 264 + sizeof("a"));
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o1"), STORE_OK);
	/* an adoptable lease: its secret hash costs the block */
	struct store_req acq = {
		.op = STORE_ACQUIRE, .name = "a", .owner = "o2", .rvn = "ra", .secret_hash = SH1};
	assert_int_equal(run_rare(c, s, acq), STORE_OK);
	assert_string_equal(last.item.secret_hash, SH1);
	store_memory_stats(s, &st);
	assert_true(st.bytes > plain);
	size_t rare = st.bytes - plain;
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o2"), STORE_OK);
	assert_string_equal(last.item.secret_hash, "");
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, plain); /* the last one cleared: given back */
	/* orphaned and adopted: the one block keeps all three */
	acq.rvn = "rb";
	assert_int_equal(run_rare(c, s, acq), STORE_OK);
	int64_t fence = last.item.fence;
	struct store_req orphan = {.op = STORE_ORPHAN, .name = "a", .owner = "o2", .rvn = "rc"};
	assert_int_equal(run_rare(c, s, orphan), STORE_OK);
	assert_string_equal(last.item.orphan, "o2");
	struct store_req adopt = {.op = STORE_ADOPT,
				  .name = "a",
				  .owner = "o3",
				  .rvn = "rd",
				  .token = fence,
				  .prev_owner = "o2",
				  .prev_secret_hash = SH1,
				  .secret_hash = SH2};
	assert_int_equal(run_rare(c, s, adopt), STORE_OK);
	assert_string_equal(last.item.adopted_from, "o2");
	assert_string_equal(last.item.orphan, "");
	assert_string_equal(last.item.secret_hash, SH2);
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, plain + rare);
	/* released, the adopt marker stays (and its block) */
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o3"), STORE_OK);
	assert_string_equal(last.item.adopted_from, "o2");
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, plain + rare);
	/* a script's key: its expiry and hash (counted too) */
	assert_int_equal(kv_run(c, s, "b", KV_W_SET, "f1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_READ, "b", NULL), STORE_OK);
	assert_int_equal(last.item.expires_at, 1700000009000);
	assert_string_equal(last.item.exp_rvn, "kv-rvn");
	assert_string_equal(last.item.hash, "f1");
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, 2 * plain + 2 * rare + sizeof("f1"));
	assert_int_equal(kv_run(c, s, "b", KV_W_FREE, NULL), STORE_OK);
	assert_int_equal(run(c, s, STORE_READ, "b", NULL), STORE_OK);
	assert_int_equal(last.item.expires_at, 0);
	assert_string_equal(last.item.hash, "");
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, 2 * plain + rare);
	/* deleted with its block */
	acq.name = "c";
	assert_int_equal(run_rare(c, s, acq), STORE_OK);
	assert_int_equal(run(c, s, STORE_DELETE, "c", NULL), STORE_OK);
	store_memory_stats(s, &st);
	assert_int_equal(st.bytes, 2 * plain + rare);
	/* forgotten with its block ("a", released with its adopt marker) */
	clock_fake_advance(c, HOUR + HOUR / 4 + 1);
	store_memory_stats(s, &st);
	assert_int_equal(st.items, 0);
	assert_int_equal(st.bytes, 0);
	/* a held one freed with the store (the sanitizer build sees a leak) */
	assert_int_equal(run_rare(c, s, acq), STORE_OK);
	store_free(s);
	clock_free(c);
}

static void test_no_retention_keeps_items(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	assert_int_equal(run(c, s, STORE_ACQUIRE, "a", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_RELEASE, "a", "o1"), STORE_OK);
	clock_fake_advance(c, 1000 * HOUR);
	assert_int_equal(run(c, s, STORE_READ, "x", NULL), STORE_OK);
	assert_int_equal(store_memory_items(s), 1);
	store_free(s);
	clock_free(c);
}

/* At max_items a new name is refused with a clear error; names that have
 * an item go on; once one is forgotten a new name fits again. */
static void test_max_items_refuses_new_names(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	store_memory_limit(s, HOUR, 2);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "x", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "y", "o2"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "z", "o3"), STORE_FATAL);
	assert_string_equal(last.error_type, "LockLimitExceeded");
	assert_non_null(strstr(last.message, "most locks (2)"));
	assert_int_equal(store_memory_items(s), 2);
	assert_int_equal(run(c, s, STORE_RELEASE, "x", "o1"), STORE_OK);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "x", "o4"), STORE_OK); /* has an item */
	assert_int_equal(run(c, s, STORE_RELEASE, "x", "o4"), STORE_OK);
	clock_fake_advance(c, HOUR + HOUR / 4 + 1);
	assert_int_equal(run(c, s, STORE_ACQUIRE, "z", "o3"), STORE_OK); /* x forgotten */
	assert_int_equal(store_memory_items(s), 2);
	store_free(s);
	clock_free(c);
}

/* ---- scan ---- */

struct page {
	struct store_scan_result res;
	int calls;
};

static void paged(void *arg)
{
	((struct page *)arg)->calls++;
}

static struct page *page_new(unsigned cap)
{
	struct page *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->res.entries = calloc(cap, sizeof(*p->res.entries));
	assert_non_null(p->res.entries);
	return p;
}

static void page_free(struct page *p)
{
	free(p->res.entries);
	free(p);
}

/* One page, completed by the fake clock. */
static void scan(struct clock *c, struct store *s, struct page *p, const char *cursor,
		 unsigned limit)
{
	p->calls = 0;
	assert_non_null(store_scan(s, cursor, limit, &p->res, paged, p));
	clock_fake_advance(c, 0);
	assert_int_equal(p->calls, 1);
	assert_int_equal(p->res.status, STORE_OK);
}

static void put(struct store *s, const char *fmt, int i)
{
	char name[64];
	struct lock_item it = {.exists = true, .has_fence = true, .fence = i + 1};
	strcpy(it.type, "LOCK");
	snprintf(name, sizeof(name), fmt, i);
	assert_true(store_memory_put_raw(s, name, &it));
}

/* Pages are full until the last, whose cursor is ""; a cursor is the hex
 * of the last name of its page. */
static void test_scan_pages_exact(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct page *p = page_new(10);
	scan(c, s, p, NULL, 10);
	assert_int_equal(p->res.count, 0);
	assert_string_equal(p->res.cursor, "");
	for (int i = 0; i < 25; i++)
		put(s, "lock-%d", i);
	char cursor[STORE_CURSOR_MAX + 1] = "", hex[STORE_CURSOR_MAX + 1];
	const unsigned want[] = {10, 10, 5};
	for (int k = 0; k < 3; k++) {
		scan(c, s, p, cursor, 10);
		assert_int_equal(p->res.count, want[k]);
		if (k < 2) {
			store_cursor_of(p->res.entries[9].name, hex);
			assert_string_equal(p->res.cursor, hex);
		} else {
			assert_string_equal(p->res.cursor, "");
		}
		strcpy(cursor, p->res.cursor);
	}
	assert_int_equal(s->requests[STORE_SCAN], 4);
	assert_string_equal(store_op_name(STORE_SCAN), "scan"); /* INFO's store_requests_scan */
	page_free(p);
	store_free(s);
	clock_free(c);
}

static void acquired(void *arg, const struct store_result *res)
{
	assert_int_equal(res->status, STORE_OK);
	(*(int *)arg)++;
}

static void acquire_new(struct clock *c, struct store *s, int n)
{
	int ok = 0;
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "new-%d", i);
		struct store_req a = {.op = STORE_ACQUIRE,
				      .name = name,
				      .owner = "o",
				      .rvn = "r",
				      .lease_ms = 1000};
		assert_non_null(store_submit(s, &a, acquired, &ok));
	}
	clock_fake_advance(c, 0);
	assert_int_equal(ok, n);
}

/* Items there from the first page to the last are listed once each even
 * when the table grows (1024 buckets to 4096) between pages, and no item
 * twice. */
static void test_scan_complete_across_growth(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	enum { OLD = 1000, NEW = 3000 };
	for (int i = 0; i < OLD; i++)
		put(s, "old-%d", i);
	static unsigned char seen_old[OLD];
	memset(seen_old, 0, sizeof(seen_old));
	unsigned seen_new = 0, pages = 0;
	struct page *p = page_new(300);
	char cursor[STORE_CURSOR_MAX + 1] = "";
	do {
		scan(c, s, p, cursor, 300);
		for (unsigned i = 0; i < p->res.count; i++) {
			int k;
			if (sscanf(p->res.entries[i].name, "old-%d", &k) == 1)
				seen_old[k]++;
			else
				seen_new++;
		}
		if (pages++ == 0) /* acquires grow the table, twice */
			acquire_new(c, s, NEW);
		strcpy(cursor, p->res.cursor);
	} while (cursor[0] != '\0');
	for (int i = 0; i < OLD; i++)
		if (seen_old[i] != 1)
			fail_msg("old-%d seen %u times", i, seen_old[i]);
	assert_true(seen_new <= NEW);
	assert_int_equal(store_memory_items(s), OLD + NEW);
	page_free(p);
	store_free(s);
	clock_free(c);
}

/* A scan completes in its place among the other calls, sees what they
 * wrote, fails when the test injects a failure, waits for the latency. */
static void test_scan_queued_with_other_calls(void **state)
{
	struct clock *c = clock_fake_new(1700000000000);
	struct store *s = store_memory_new(c, "t");
	struct page *p = page_new(10);
	struct order o = {.s = s};
	order = &o;
	struct store_req a = {
		.op = STORE_ACQUIRE, .name = "a", .owner = "o", .rvn = "r", .lease_ms = 1000};
	assert_non_null(store_submit(s, &a, done, "a"));
	assert_non_null(store_scan(s, NULL, 10, &p->res, paged, p));
	clock_fake_advance(c, 0);
	assert_int_equal(p->calls, 1);
	assert_int_equal(p->res.count, 1);
	assert_string_equal(p->res.entries[0].name, "a");
	assert_string_equal(p->res.entries[0].item.owner, "o");
	assert_int_equal(p->res.entries[0].item.fence, 1);

	store_memory_fail(s, 1, STORE_TRANSIENT, "Throttling");
	p->calls = 0;
	assert_non_null(store_scan(s, NULL, 10, &p->res, paged, p));
	clock_fake_advance(c, 0);
	assert_int_equal(p->calls, 1);
	assert_int_equal(p->res.status, STORE_TRANSIENT);
	assert_string_equal(p->res.error_type, "Throttling");
	assert_int_equal(p->res.count, 0);
	assert_string_equal(p->res.cursor, "");

	store_memory_set_op_latency(s, STORE_SCAN, 50);
	p->calls = 0;
	assert_non_null(store_scan(s, NULL, 10, &p->res, paged, p));
	clock_fake_advance(c, 49);
	assert_int_equal(p->calls, 0);
	clock_fake_advance(c, 1);
	assert_int_equal(p->calls, 1);
	assert_int_equal(p->res.status, STORE_OK);
	assert_int_equal(p->res.count, 1);
	page_free(p);
	store_free(s);
	clock_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completions_in_order_cancel_and_later_calls),
		cmocka_unit_test(test_latency_keeps_order),
		cmocka_unit_test(test_released_items_forgotten_after_retention),
		cmocka_unit_test(test_shared_header_kept_while_held),
		cmocka_unit_test(test_acquired_again_forgotten_on_time),
		cmocka_unit_test(test_waiter_bytes_counted_and_given_back),
		cmocka_unit_test(test_rare_fields_bytes_counted_and_given_back),
		cmocka_unit_test(test_no_retention_keeps_items),
		cmocka_unit_test(test_max_items_refuses_new_names),
		cmocka_unit_test(test_scan_pages_exact),
		cmocka_unit_test(test_scan_complete_across_growth),
		cmocka_unit_test(test_scan_queued_with_other_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
