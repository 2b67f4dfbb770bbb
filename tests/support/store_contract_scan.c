/*
 * store_contract_scan.c: the part of the store contract suite (see
 * store_contract.h) that leases beyond one connection need: the freed
 * marker a release from outside the holding replica leaves (store.h,
 * RELEASE with .token), and store_scan().
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct store_result op(struct fixture *fx, struct store_req r)
{
	return store_contract_op(fx, r);
}

/* A release by owner (NULL: unconditional) that marks token (0: none). */
static struct store_result release_marked(struct fixture *fx, const char *owner, int64_t token,
					  bool forced)
{
	return op(fx, (struct store_req){.op = STORE_RELEASE,
					 .owner = owner,
					 .token = token,
					 .forced = forced,
					 .unconditional = owner == NULL});
}

static void assert_freed(const struct lock_item *it, int64_t freed, bool forced)
{
	if (it->freed != freed || it->freed_forced != forced)
		fail_msg("freed %lld forced %d, want %lld forced %d", (long long)it->freed,
			 it->freed_forced, (long long)freed, forced);
}

/* ... and as a read finds it */
static void assert_freed_read(struct fixture *fx, int64_t freed, bool forced)
{
	struct store_result r = op(fx, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, freed, forced);
}

/* ---- the freed marker ---- */

/* A release by (name, token) from outside the holding replica leaves the
 * fence it ended and "token"; acquires, renewals and releases without a
 * token leave the marker as it is; a refused release writes nothing. */
static void freed_marker_by_token(void **state)
{
	struct fixture *fx = *state;
	struct store_result r = sc_acquire(fx, "A", "r1", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 0, false);
	r = release_marked(fx, "A", 1, false);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	assert_freed(&r.item, 1, false);
	assert_freed_read(fx, 1, false);
	/* the next holder's writes keep it */
	r = sc_acquire(fx, "B", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
	assert_freed(&r.item, 1, false);
	r = op(fx,
	       (struct store_req){.op = STORE_RENEW, .owner = "B", .rvn = "r3", .lease_ms = 30000});
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, false);
	/* a release that is refused marks nothing */
	r = release_marked(fx, "X", 2, false);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_freed(&r.item, 1, false);
	assert_freed_read(fx, 1, false);
	/* nor does the holder's own release, without a token */
	r = release_marked(fx, "B", 0, false);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, false);
	r = sc_acquire(fx, "C", "r4", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, false);
}

/* An operator's forced release (unconditional here) says "force"; a later
 * release by token says "token" again. */
static void freed_marker_by_force(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "A", "r1", NULL, NULL).status, STORE_OK);
	struct store_result r = release_marked(fx, NULL, 1, true);
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.item.has_owner);
	assert_freed(&r.item, 1, true);
	assert_freed_read(fx, 1, true);
	r = sc_acquire(fx, "B", "r2", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 1, true);
	/* a takeover keeps it too */
	r = sc_acquire(fx, "C", "r3", "r2", NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 3);
	assert_freed(&r.item, 1, true);
	r = release_marked(fx, "C", 3, false);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 3, false);
	assert_freed_read(fx, 3, false);
	/* a forced release by owner marks it too */
	assert_int_equal(sc_acquire(fx, "D", "r5", NULL, NULL).status, STORE_OK);
	r = release_marked(fx, "D", 4, true);
	assert_int_equal(r.status, STORE_OK);
	assert_freed(&r.item, 4, true);
}

/* ---- store_scan() ---- */

struct page {
	struct store_scan_result res;
	bool done;
	int calls;
};

static struct page *page_new(unsigned cap)
{
	struct page *p = calloc(1, sizeof *p);
	assert_non_null(p);
	p->res.entries = calloc(cap, sizeof *p->res.entries);
	assert_non_null(p->res.entries);
	return p;
}

static void page_free(struct page *p)
{
	free(p->res.entries);
	free(p);
}

static void on_page(void *arg)
{
	struct page *p = arg;
	p->calls++;
	p->done = true;
}

/* One page from cursor, run to completion: its status. */
static enum store_status scan_once(struct fixture *fx, struct page *p, const char *cursor,
				   unsigned limit)
{
	p->done = false;
	p->calls = 0;
	struct store_call *c = store_scan(fx->s, cursor, limit, &p->res, on_page, p);
	assert_non_null(c);
	assert_false(p->done); /* never inside store_scan() */
	fx->f->run(fx->f->arg, &p->done);
	if (!p->done)
		fail_msg("%s: no answer to a scan", fx->f->name);
	assert_int_equal(p->calls, 1);
	assert_true(p->res.count <= limit);
	assert_true(strlen(p->res.cursor) <= STORE_CURSOR_MAX);
	for (const char *c2 = p->res.cursor; *c2; c2++)
		assert_true(*c2 >= 0x20 && *c2 <= 0x7e);
	if (p->res.status != STORE_OK)
		print_message("%s scan: %s %s %s\n", fx->f->name, store_status_name(p->res.status),
			      p->res.error_type ? p->res.error_type : "", p->res.message);
	return p->res.status;
}

void store_contract_scan_page(struct fixture *fx)
{
	struct page *p = page_new(5);
	assert_int_equal(scan_once(fx, p, NULL, 5), STORE_OK);
	page_free(p);
}

/* Scans the whole table, limit items a page, and calls seen(arg, entry) for
 * each item of this test (its name starts with fx->name). Returns the
 * number of pages. A store may share its table with other tests. */
static unsigned scan_all(struct fixture *fx, unsigned limit,
			 void (*seen)(void *arg, const struct store_scan_entry *e), void *arg)
{
	struct page *p = page_new(limit);
	char cursor[STORE_CURSOR_MAX + 1] = "";
	size_t len = strlen(fx->name);
	unsigned pages = 0;
	uint64_t before = fx->s->requests[STORE_SCAN];
	do {
		assert_int_equal(scan_once(fx, p, cursor, limit), STORE_OK);
		if (++pages > 10000)
			fail_msg("%s: the scan does not end", fx->f->name);
		for (unsigned i = 0; i < p->res.count; i++)
			if (strncmp(p->res.entries[i].name, fx->name, len) == 0)
				seen(arg, &p->res.entries[i]);
		if (p->res.cursor[0] != '\0' && strcmp(p->res.cursor, cursor) == 0)
			fail_msg("%s: a page gave its own cursor back", fx->f->name);
		strcpy(cursor, p->res.cursor);
	} while (cursor[0] != '\0');
	assert_int_equal(fx->s->requests[STORE_SCAN] - before, pages);
	assert_int_equal(fx->s->in_flight, 0);
	page_free(p);
	return pages;
}

static void count_entry(void *arg, const struct store_scan_entry *e)
{
	(*(unsigned *)arg)++;
}

/* Nothing of this test's (nothing at all in a store of its own): the scan
 * completes without any. */
static void scan_without_items(void **state)
{
	struct fixture *fx = *state;
	unsigned n = 0;
	scan_all(fx, STORE_SCAN_MAX, count_entry, &n);
	assert_int_equal(n, 0);
	scan_all(fx, 1, count_entry, &n);
	assert_int_equal(n, 0);
}

#define SCAN_ITEMS 25

struct seen_items {
	struct fixture *fx;
	unsigned times[SCAN_ITEMS];
	struct lock_item item[SCAN_ITEMS];
};

static void item_name(const struct fixture *fx, int i, char *buf, size_t size)
{
	snprintf(buf, size, "%s-%02d", fx->name, i);
}

static void note_entry(void *arg, const struct store_scan_entry *e)
{
	struct seen_items *s = arg;
	for (int i = 0; i < SCAN_ITEMS; i++) {
		char name[128];
		item_name(s->fx, i, name, sizeof name);
		if (strcmp(e->name, name) == 0) {
			s->times[i]++;
			s->item[i] = e->item;
			return;
		}
	}
	fail_msg("scan: an item of this test that it never wrote: %s", e->name);
}

/* An entry's item is the item as a read gives it. */
static void assert_as_read(const char *name, const struct lock_item *a, const struct lock_item *b)
{
	if (a->exists != b->exists || a->has_owner != b->has_owner || a->has_rvn != b->has_rvn ||
	    a->has_lease != b->has_lease || a->has_fence != b->has_fence ||
	    a->fence_bad != b->fence_bad || a->fence != b->fence || a->lease_ms != b->lease_ms ||
	    a->ttl != b->ttl || a->has_waiter != b->has_waiter || a->waiter_ms != b->waiter_ms ||
	    a->freed != b->freed || a->freed_forced != b->freed_forced ||
	    strcmp(a->owner, b->owner) != 0 || strcmp(a->rvn, b->rvn) != 0 ||
	    strcmp(a->holder, b->holder) != 0 || strcmp(a->type, b->type) != 0 ||
	    strcmp(a->waiter, b->waiter) != 0)
		fail_msg("%s: scanned owner '%s' fence %lld freed %lld, read owner '%s' fence %lld "
			 "freed %lld",
			 name, a->owner, (long long)a->fence, (long long)a->freed, b->owner,
			 (long long)b->fence, (long long)b->freed);
}

/* 25 items of all kinds, 10 a page: every one once, as a read gives it. */
static void scan_pages_every_item_once(void **state)
{
	struct fixture *fx = *state;
	char name[128];
	for (int i = 0; i < SCAN_ITEMS; i++) {
		item_name(fx, i, name, sizeof name);
		struct store_req a = {.op = STORE_ACQUIRE,
				      .name = name,
				      .owner = "A",
				      .rvn = "r1",
				      .holder = i % 2 ? "pod-a" : NULL,
				      .lease_ms = 30000,
				      .ttl = 1900000000 + i};
		assert_int_equal(op(fx, a).status, STORE_OK);
		if (i % 5 == 1) {
			struct store_req w = {.op = STORE_ANNOUNCE,
					      .name = name,
					      .waiter = "W",
					      .waiter_ms = 700};
			assert_int_equal(op(fx, w).status, STORE_OK);
		}
		if (i % 3 == 0) {
			struct store_req r = {.op = STORE_RELEASE,
					      .name = name,
					      .owner = "A",
					      .token = 1,
					      .forced = i % 2 == 0};
			assert_int_equal(op(fx, r).status, STORE_OK);
		}
	}
	struct lock_item job = {.exists = true, .has_rvn = true, .has_fence = true, .fence = 3};
	strcpy(job.type, "JOB");
	strcpy(job.rvn, "r0");
	item_name(fx, SCAN_ITEMS - 1, name, sizeof name);
	assert_true(fx->f->put_raw(fx->f->arg, fx->s, name, &job)); /* reported as it is */

	struct seen_items seen = {.fx = fx};
	unsigned pages = scan_all(fx, 10, note_entry, &seen);
	assert_true(pages >= 3);
	for (int i = 0; i < SCAN_ITEMS; i++) {
		item_name(fx, i, name, sizeof name);
		if (seen.times[i] != 1)
			fail_msg("%s: seen %u times", name, seen.times[i]);
		struct store_result r = op(fx, (struct store_req){.op = STORE_READ, .name = name});
		assert_int_equal(r.status, STORE_OK);
		assert_as_read(name, &seen.item[i], &r.item);
	}
	assert_string_equal(seen.item[SCAN_ITEMS - 1].type, "JOB");
	assert_freed(&seen.item[3], 1, false);
	assert_freed(&seen.item[6], 1, true);
	assert_true(seen.item[1].has_waiter);
}

/* A bad limit or cursor: NULL, no callback, nothing counted. */
static void scan_bad_input_refused(void **state)
{
	struct fixture *fx = *state;
	struct page *p = page_new(STORE_SCAN_MAX + 1);
	char *longest = malloc(STORE_CURSOR_MAX + 2);
	assert_non_null(longest);
	memset(longest, 'a', STORE_CURSOR_MAX + 1);
	longest[STORE_CURSOR_MAX + 1] = '\0';
	const struct {
		const char *cursor;
		unsigned limit;
	} bad[] = {
		{NULL, 0},	  {"", STORE_SCAN_MAX + 1},
		{"", UINT32_MAX}, {"61\n", 10},
		{"6\x7f", 10},	  {"\xc3\xa9", 10},
		{longest, 10},	  {"zz", 10},
		{"abc", 10},	  {"6G", 10},
		{"0061", 10},	  {"~", 10},
		{"6 1", 10},
	};
	uint64_t before = fx->s->requests[STORE_SCAN];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (store_scan(fx->s, bad[i].cursor, bad[i].limit, &p->res, on_page, p) != NULL)
			fail_msg("accepted: cursor '%.20s' limit %u",
				 bad[i].cursor ? bad[i].cursor : "", bad[i].limit);
	struct store_scan_result no_entries = {0};
	assert_null(store_scan(fx->s, NULL, 10, &no_entries, on_page, p));
	assert_int_equal(fx->s->requests[STORE_SCAN], before);
	assert_int_equal(fx->s->in_flight, 0);
	/* the largest page is allowed */
	assert_int_equal(scan_once(fx, p, "", STORE_SCAN_MAX), STORE_OK);
	/* and the store still answers, without a late callback */
	assert_int_equal(op(fx, (struct store_req){.op = STORE_READ}).status, STORE_OK);
	assert_int_equal(p->calls, 1);
	free(longest);
	page_free(p);
}

static void never_paged(void *arg)
{
	fail_msg("the callback of a cancelled scan ran");
}

/* A cancelled scan neither calls back nor writes its page, which the
 * caller may free at once (under the sanitizers, a write would show). */
static void scan_cancelled(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(op(fx, (struct store_req){.op = STORE_ACQUIRE,
						   .owner = "A",
						   .rvn = "r1",
						   .lease_ms = 30000})
				 .status,
			 STORE_OK);
	for (int i = 0; i < 2; i++) {
		struct page *p = page_new(10);
		struct store_call *c =
			store_scan(fx->s, i ? "61" : NULL, 10, &p->res, never_paged, p);
		assert_non_null(c);
		store_cancel(fx->s, c);
		page_free(p);
	}
	assert_int_equal(fx->s->in_flight, 0);
	struct store_result r = op(fx, (struct store_req){.op = STORE_READ});
	assert_int_equal(r.status, STORE_OK);
	assert_true(r.item.has_owner);
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

const struct CMUnitTest store_contract_scan_tests[STORE_CONTRACT_SCAN_TESTS] = {
	T(freed_marker_by_token),      T(freed_marker_by_force),  T(scan_without_items),
	T(scan_pages_every_item_once), T(scan_bad_input_refused), T(scan_cancelled),
};
