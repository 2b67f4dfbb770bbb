/*
 * store_contract_batch: the contract of core/store/store_batch.h — many
 * lock items read in one request — for every store: tests/unit/
 * test_store_contract.c runs it on the embedded store,
 * tests/integration/it_store_dynamodb.c on moto (a table with a partition
 * key only and one with a sort key), tests/integration/
 * it_standin_contract.c on the benchmarks' DynamoDB stand-in.
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_batch.h"

struct batch_answer {
	bool done;
	int calls;
};

static void on_batch(void *arg)
{
	struct batch_answer *a = arg;
	a->done = true;
	a->calls++;
}

/* The names of a batch of n: "<fx->name>-<i>". */
struct names {
	char name[STORE_BATCH_MAX + 1][128];
	struct store_batch_entry e[STORE_BATCH_MAX + 1];
};

static struct names *names_new(struct fixture *fx, unsigned n)
{
	struct names *nm = calloc(1, sizeof(*nm));
	assert_non_null(nm);
	for (unsigned i = 0; i < n; i++) {
		snprintf(nm->name[i], sizeof(nm->name[i]), "%s-%u", fx->name, i);
		nm->e[i].name = nm->name[i];
	}
	return nm;
}

/* One batch read of entries[0..n), run to its answer; the READ requests
 * it cost into *reads. */
static void batch(struct fixture *fx, struct store_batch_entry *e, unsigned n,
		  struct store_batch_result *res, uint64_t *reads)
{
	struct batch_answer a = {0};
	memset(res, 0, sizeof(*res));
	res->entries = e;
	res->count = n;
	uint64_t before = fx->s->requests[STORE_READ];
	struct store_call *c = store_batch_read(fx->s, res, on_batch, &a);
	assert_non_null(c);
	assert_false(a.done); /* never inside the call */
	fx->f->run(fx->f->arg, &a.done);
	if (!a.done)
		fail_msg("%s: no answer to a batch read", fx->f->name);
	assert_int_equal(a.calls, 1);
	if (res->status != STORE_OK)
		print_message("%s: %s %s\n", fx->f->name, store_status_name(res->status),
			      res->message);
	if (reads != NULL)
		*reads = fx->s->requests[STORE_READ] - before;
}

/* The bound (100 keys) in one request, counted as one READ: held locks
 * (per lease, in session mode), a released one and absent ones each read
 * as a READ of it gives. */
static void reads_a_hundred_items(void **state)
{
	struct fixture *fx = *state;
	struct names *nm = names_new(fx, STORE_BATCH_MAX);
	char session[64];
	snprintf(session, sizeof(session), "SESSION#rep#%032x", 7);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .name = nm->name[0],
								  .owner = "o0",
								  .rvn = "r0",
								  .lease_ms = 30000})
				 .status,
			 STORE_OK);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .name = nm->name[57],
								  .owner = "o57",
								  .rvn = "r57",
								  .lease_ms = 20000,
								  .session = session})
				 .status,
			 STORE_OK);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .name = nm->name[99],
								  .owner = "o99",
								  .rvn = "r99",
								  .lease_ms = 30000})
				 .status,
			 STORE_OK);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_RELEASE,
								  .name = nm->name[99],
								  .owner = "o99"})
				 .status,
			 STORE_OK);
	struct store_batch_result res;
	uint64_t reads;
	batch(fx, nm->e, STORE_BATCH_MAX, &res, &reads);
	assert_int_equal(res.status, STORE_OK);
	assert_int_equal(reads, 1);
	for (unsigned i = 0; i < STORE_BATCH_MAX; i++) {
		const struct store_batch_entry *e = &nm->e[i];
		assert_true(e->read);
		assert_string_equal(e->name, nm->name[i]); /* left where it was */
		if (i != 0 && i != 57 && i != 99)
			assert_false(e->item.exists);
	}
	sc_assert_held(&nm->e[0].item, "o0", "r0", 1, 30000, NULL);
	assert_string_equal(nm->e[0].item.session, "");
	sc_assert_held(&nm->e[57].item, "o57", "r57", 1, STORE_SESSION_LOCK_LEASE_MS, NULL);
	assert_string_equal(nm->e[57].item.session, session);
	assert_int_equal(nm->e[57].item.slease_ms, 20000);
	assert_true(nm->e[99].item.exists);
	assert_false(nm->e[99].item.has_owner);
	assert_int_equal(nm->e[99].item.fence, 1);
	free(nm);
}

/* What a read sees is the item now: a delete, a takeover and a release
 * between two reads show in the second. */
static void reads_the_item_as_it_is(void **state)
{
	struct fixture *fx = *state;
	struct names *nm = names_new(fx, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
									  .name = nm->name[i],
									  .owner = "o1",
									  .rvn = "r1",
									  .lease_ms = 30000})
					 .status,
				 STORE_OK);
	struct store_batch_result res;
	batch(fx, nm->e, 3, &res, NULL);
	assert_int_equal(res.status, STORE_OK);
	for (unsigned i = 0; i < 3; i++)
		sc_assert_held(&nm->e[i].item, "o1", "r1", 1, 30000, NULL);
	assert_int_equal(
		store_contract_op(fx, (struct store_req){.op = STORE_DELETE, .name = nm->name[0]})
			.status,
		STORE_OK);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .name = nm->name[1],
								  .owner = "o2",
								  .rvn = "r2",
								  .seen_rvn = "r1",
								  .lease_ms = 30000})
				 .status,
			 STORE_OK);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_RELEASE,
								  .name = nm->name[2],
								  .owner = "o1"})
				 .status,
			 STORE_OK);
	batch(fx, nm->e, 3, &res, NULL);
	assert_int_equal(res.status, STORE_OK);
	assert_true(nm->e[0].read && nm->e[1].read && nm->e[2].read);
	assert_false(nm->e[0].item.exists);
	sc_assert_held(&nm->e[1].item, "o2", "r2", 2, 30000, NULL);
	assert_true(nm->e[2].item.exists);
	assert_false(nm->e[2].item.has_owner);
	free(nm);
}

/* Requests out of bounds are refused at once (no callback): no entry,
 * more than STORE_BATCH_MAX, a name empty, too long or twice. */
static void bad_batches_refused(void **state)
{
	struct fixture *fx = *state;
	struct names *nm = names_new(fx, STORE_BATCH_MAX + 1);
	struct batch_answer a = {0};
	struct store_batch_result res = {.entries = nm->e, .count = 0};
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	res.count = STORE_BATCH_MAX + 1;
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	res.count = 3;
	nm->e[1].name = nm->name[2];
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	nm->e[1].name = "";
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	nm->e[1].name = NULL;
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	char *long_name = malloc(STORE_NAME_MAX + 2);
	assert_non_null(long_name);
	memset(long_name, 'n', STORE_NAME_MAX + 1);
	long_name[STORE_NAME_MAX + 1] = '\0';
	nm->e[1].name = long_name;
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	res.entries = NULL;
	assert_null(store_batch_read(fx->s, &res, on_batch, &a));
	assert_false(a.done);
	/* the bounds themselves pass */
	long_name[STORE_NAME_MAX] = '\0';
	res.entries = nm->e;
	assert_true(store_batch_valid(&res));
	res.count = STORE_BATCH_MAX;
	nm->e[1].name = nm->name[1];
	assert_true(store_batch_valid(&res));
	/* the first and the last the same name, or two in the middle */
	nm->e[STORE_BATCH_MAX - 1].name = nm->name[0];
	assert_false(store_batch_valid(&res));
	nm->e[STORE_BATCH_MAX - 1].name = nm->name[STORE_BATCH_MAX - 1];
	nm->e[60].name = nm->name[41];
	assert_false(store_batch_valid(&res));
	nm->e[60].name = nm->name[60];
	assert_true(store_batch_valid(&res));
	free(long_name);
	free(nm);
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

int store_contract_batch_run(const struct store_factory *f)
{
	struct CMUnitTest tests[] = {
		T(reads_a_hundred_items),
		T(reads_the_item_as_it_is),
		T(bad_batches_refused),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	char name[128];
	snprintf(name, sizeof(name), "%s, batch reads", f->name);
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}
