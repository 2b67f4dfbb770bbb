/*
 * store_contract_shared: the contract of core/store/store_shared.h — the
 * header and slots of a name held shared — for every store:
 * tests/unit/test_store_contract.c runs it on the embedded store,
 * tests/integration/it_store_dynamodb.c on moto, on a table with a
 * partition key only and on one with a sort key. Each condition of
 * store_shared.h has a
 * case that fails it, and what a later reader sees is read back, not taken
 * from the answer.
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_shared.h"

/* An answer copied out of its callback. */
struct sh_answer {
	bool done;
	int calls;
	enum store_status status;
	unsigned index;
	struct store_sh_header header;
	unsigned nslots;
	struct lock_item slots[STORE_SH_CAP];
	char message[STORE_MSG_MAX];
};

static void on_sh(void *arg, const struct store_sh_result *r)
{
	struct sh_answer *a = arg;
	a->done = true;
	a->calls++;
	a->status = r->status;
	a->index = r->index;
	a->header = r->header;
	a->nslots = r->nslots;
	memcpy(a->slots, r->slots, r->nslots * sizeof(r->slots[0]));
	snprintf(a->message, sizeof(a->message), "%s", r->message);
}

/* One request on fx's name, run to its answer (static: one at a time). */
static struct sh_answer *sh(struct fixture *fx, struct store_sh_req r)
{
	static struct sh_answer a;
	memset(&a, 0, sizeof(a));
	r.name = fx->name;
	struct store_call *c = store_sh_submit(fx->s, &r, on_sh, &a);
	assert_non_null(c);
	assert_false(a.done); /* never inside the submit */
	fx->f->run(fx->f->arg, &a.done);
	if (!a.done)
		fail_msg("%s: no answer to a shared request", fx->f->name);
	assert_int_equal(a.calls, 1);
	if (a.status == STORE_TRANSIENT || a.status == STORE_FATAL)
		print_message("%s: %s %s\n", fx->f->name, store_status_name(a.status), a.message);
	return &a;
}

/* A grant of slot by owner (rvn "<owner>-r"), seeing the fences given. */
static struct sh_answer *grant(struct fixture *fx, enum store_sh_mode mode, unsigned cap,
			       unsigned slot, const char *owner, bool first, int64_t seen_fence,
			       int64_t seen_slot_fence)
{
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s-r", owner);
	return sh(fx, (struct store_sh_req){.op = STORE_SH_GRANT,
					    .mode = mode,
					    .cap = cap,
					    .slot = slot,
					    .owner = owner,
					    .rvn = rvn,
					    .first = first,
					    .seen_fence = seen_fence,
					    .seen_slot_fence = seen_slot_fence,
					    .holder = "h",
					    .lease_ms = 30000,
					    .ttl = 2000000000});
}

static struct sh_answer *end(struct fixture *fx, enum store_sh_op op, unsigned cap, unsigned slot,
			     const char *owner, const char *seen_rvn)
{
	return sh(fx, (struct store_sh_req){.op = op,
					    .cap = cap,
					    .slot = slot,
					    .owner = owner,
					    .seen_rvn = seen_rvn,
					    .ttl = 2000000000});
}

/* The header and every slot. */
static struct sh_answer *read_all(struct fixture *fx, unsigned cap)
{
	struct sh_answer *a = sh(fx, (struct store_sh_req){.op = STORE_SH_READ, .cap = cap});
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->nslots, cap);
	return a;
}

static void assert_count(struct fixture *fx, unsigned cap, int64_t scount)
{
	struct sh_answer *a = read_all(fx, cap);
	assert_true(a->header.has_scount);
	assert_int_equal(a->header.scount, scount);
}

/* Readers: the first grant creates the header and a phase's group token;
 * the next reader of the phase gets the same token; a reader reads back
 * every slot. */
static void readers_share_a_group_token(void **state)
{
	struct fixture *fx = *state;
	struct sh_answer *a = read_all(fx, 4);
	assert_false(a->header.lock.exists);
	for (unsigned k = 0; k < 4; k++)
		assert_false(a->slots[k].exists);
	a = grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0);
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->header.lock.fence, 1);
	assert_int_equal(a->slots[0].fence, 1);
	a = grant(fx, STORE_SH_SHARED, 4, 2, "r2", false, 1, 0);
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->header.lock.fence, 1);
	a = read_all(fx, 4);
	assert_int_equal(a->header.scount, 2);
	assert_string_equal(a->header.smode, "SHARED");
	assert_int_equal(a->header.lock.fence, 1);
	assert_string_equal(a->header.lock.type, "LOCK");
	assert_false(a->header.lock.has_owner);
	assert_string_equal(a->slots[0].owner, "r1");
	assert_string_equal(a->slots[0].rvn, "r1-r");
	assert_string_equal(a->slots[0].holder, "h");
	assert_string_equal(a->slots[0].type, "SLOT");
	assert_int_equal(a->slots[0].lease_ms, 30000);
	assert_int_equal(a->slots[0].ttl, 2000000000); /* both items expire */
	assert_int_equal(a->header.lock.ttl, 2000000000);
	assert_false(a->slots[1].exists);
	assert_string_equal(a->slots[2].owner, "r2");
	assert_false(a->slots[3].exists);
	/* a window: slots 2 and 3 alone */
	a = sh(fx, (struct store_sh_req){.op = STORE_SH_READ, .cap = 4, .slot = 2, .count = 2});
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->nslots, 2);
	assert_string_equal(a->slots[0].owner, "r2");
	assert_false(a->slots[1].exists);
	assert_int_equal(a->header.scount, 2);
}

/* An exclusive acquire is refused while one slot is held, and granted
 * (the token above the readers') once the last reader released. */
static void exclusive_waits_for_every_reader(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 1, 0)->status, STORE_OK);
	struct store_result r = sc_acquire(fx, "x", "x-r", NULL, NULL);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_int_equal(r.item.scount, 2); /* the refusal shows why */
	assert_int_equal(sc_read_item(fx).item.scount, 2);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 0, "r1", NULL)->status, STORE_OK);
	assert_count(fx, 4, 1);
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_REFUSED);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 1, "r2", NULL)->status, STORE_OK);
	assert_count(fx, 4, 0);
	assert_int_equal(sc_read_item(fx).item.scount, 0);
	r = sc_acquire(fx, "x", "x-r", NULL, NULL);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.fence, 2);
}

/* A shared grant is refused while an exclusive holds (the header, index
 * 0), and a group token seen before an exclusive hold is no longer
 * current: the first reader after it gets a new one. */
static void readers_wait_for_the_exclusive(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_OK); /* fence 1 */
	struct sh_answer *a = grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 1, 0);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	assert_true(a->header.lock.has_owner);
	assert_int_equal(sc_release(fx, "x").status, STORE_OK);
	a = grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0); /* a stale fence: 0 */
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	a = grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 1, 0);
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->header.lock.fence, 2);
	/* a later reader seeing a fence of another phase is refused */
	a = grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 1, 0);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 2, 0)->status, STORE_OK);
}

/* A held slot refuses a grant (index 1, the slot as it is); a first
 * grant is refused once the phase began. */
static void a_held_slot_is_refused(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	struct sh_answer *a = grant(fx, STORE_SH_SHARED, 4, 0, "r2", false, 1, 0);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 1);
	assert_string_equal(a->slots[0].owner, "r1");
	a = grant(fx, STORE_SH_SHARED, 4, 1, "r2", true, 1, 0);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	assert_count(fx, 4, 1);
}

/* A semaphore: its limit is stored by the first grant, an acquire with
 * another limit is refused, each slot has its own fence, and the count
 * never passes the limit. */
static void semaphore_slots_and_limit(void **state)
{
	struct fixture *fx = *state;
	struct sh_answer *a = grant(fx, STORE_SH_LIMIT, 2, 0, "s1", true, 0, 0);
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->slots[0].fence, 1);
	assert_int_equal(a->header.lock.fence, 0); /* semaphores raise no header fence */
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 3, 2, "s9", false, 0, 0)->status, STORE_REFUSED);
	assert_int_equal(grant(fx, STORE_SH_SHARED, 2, 1, "s9", false, 0, 0)->status,
			 STORE_REFUSED);
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 2, 1, "s2", false, 0, 0)->status, STORE_OK);
	a = read_all(fx, 2);
	assert_int_equal(a->header.scount, 2);
	assert_string_equal(a->header.smode, "LIMIT");
	assert_int_equal(a->header.slimit, 2);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 2, 0, "s1", NULL)->status, STORE_OK);
	a = grant(fx, STORE_SH_LIMIT, 2, 0, "s3", false, 0, 1);
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(a->slots[0].fence, 2); /* slot 0's second grant */
	a = read_all(fx, 2);
	assert_int_equal(a->slots[0].fence, 2);
	assert_int_equal(a->slots[1].fence, 1);
	assert_int_equal(a->header.scount, 2);
	/* a grant on a slot fence it did not see is refused */
	assert_int_equal(end(fx, STORE_SH_RELEASE, 2, 1, "s2", NULL)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 2, 1, "s4", false, 0, 0)->status, STORE_REFUSED);
}

/* A renewal touches its slot only, on the rvn it last wrote (or its own,
 * an applied attempt); another's or a stale one is refused. */
static void renew_a_slot(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	struct store_sh_req r = {.op = STORE_SH_RENEW,
				 .cap = 4,
				 .slot = 0,
				 .owner = "r1",
				 .rvn = "r1-r2",
				 .seen_rvn = "r1-r",
				 .lease_ms = 20000};
	struct sh_answer *a = sh(fx, r);
	assert_int_equal(a->status, STORE_OK);
	assert_string_equal(a->slots[0].rvn, "r1-r2");
	assert_int_equal(a->slots[0].lease_ms, 20000);
	assert_int_equal(sh(fx, r)->status, STORE_OK); /* an attempt that applied */
	r.rvn = "r1-r3";
	a = sh(fx, r); /* seen_rvn r1-r is stale now */
	assert_int_equal(a->status, STORE_REFUSED);
	assert_string_equal(a->slots[0].rvn, "r1-r2");
	r.owner = "r2";
	r.seen_rvn = "r1-r2";
	assert_int_equal(sh(fx, r)->status, STORE_REFUSED);
	a = read_all(fx, 4);
	assert_int_equal(a->header.scount, 1);
	assert_string_equal(a->slots[0].rvn, "r1-r2");
}

/* A crashed reader is removed on the rvn watched (one slot, the count
 * lowered), or taken over with the slot filled in one write (the count
 * unchanged); a removal on another rvn, or a release by another owner,
 * changes nothing. */
static void crashed_holders_removed_or_replaced(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 1, 0)->status, STORE_OK);
	struct sh_answer *a = end(fx, STORE_SH_REMOVE, 4, 0, "r1", "old-rvn");
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 1);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 0, "r2", NULL)->status, STORE_REFUSED);
	assert_count(fx, 4, 2);
	assert_int_equal(end(fx, STORE_SH_REMOVE, 4, 0, "r1", "r1-r")->status, STORE_OK);
	a = read_all(fx, 4);
	assert_int_equal(a->header.scount, 1);
	assert_false(a->slots[0].has_owner);
	assert_int_equal(a->slots[0].fence, 1); /* kept */

	/* slot 1's holder crashed: a new reader takes it over and fills it */
	struct store_sh_req t = {.op = STORE_SH_GRANT,
				 .mode = STORE_SH_SHARED,
				 .cap = 4,
				 .slot = 1,
				 .owner = "r3",
				 .rvn = "r3-r",
				 .seen_rvn = "r2-r",
				 .seen_fence = 1,
				 .seen_slot_fence = 1,
				 .lease_ms = 30000};
	assert_int_equal(sh(fx, t)->status, STORE_OK);
	a = read_all(fx, 4);
	assert_int_equal(a->header.scount, 1);
	assert_string_equal(a->slots[1].owner, "r3");
	assert_int_equal(a->slots[1].fence, 2);
	assert_false(a->slots[1].holder[0] != '\0'); /* no holder given: removed */
	t.owner = "r4";
	t.rvn = "r4-r"; /* r2's rvn is gone: refused */
	t.seen_slot_fence = 2;
	assert_int_equal(sh(fx, t)->status, STORE_REFUSED);
}

static struct sh_answer *xannounce(struct fixture *fx, const char *writer, const char *rvn)
{
	return sh(fx, (struct store_sh_req){.op = STORE_SH_XANNOUNCE,
					    .cap = 4,
					    .owner = writer,
					    .rvn = rvn,
					    .lease_ms = 1000});
}

static struct sh_answer *xclear(struct fixture *fx, const char *seen)
{
	return sh(fx, (struct store_sh_req){.op = STORE_SH_XCLEAR, .cap = 4, .seen_rvn = seen});
}

/* A writer waiting for readers announces itself on the header (only while
 * a slot is held), refreshes it with a new rvn, and no other writer can
 * replace it; new grants are refused while it stands; it is cleared on
 * the rvn last seen only. */
static void announced_writer_stops_new_readers(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(xannounce(fx, "w", "w1")->status, STORE_REFUSED); /* no reader */
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	assert_int_equal(xannounce(fx, "w", "w1")->status, STORE_OK);
	struct sh_answer *a = grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 1, 0);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	a = read_all(fx, 4);
	assert_string_equal(a->header.xwait, "w");
	assert_string_equal(a->header.xwait_rvn, "w1");
	assert_int_equal(a->header.xwait_ms, 1000);
	assert_int_equal(xannounce(fx, "w9", "x1")->status, STORE_REFUSED);
	assert_int_equal(xannounce(fx, "w", "w2")->status, STORE_OK); /* refreshed */
	assert_int_equal(xclear(fx, "w1")->status, STORE_REFUSED);    /* a stale view */
	assert_int_equal(xclear(fx, "w2")->status, STORE_OK);
	assert_string_equal(read_all(fx, 4)->header.xwait, "");
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 1, 0)->status, STORE_OK);
}

/* A reader ends a crashed exclusive holder on the rvn it watched: refused
 * on another rvn or owner; then the lock is free (fence kept) and readers
 * may come. */
static void reader_takes_a_crashed_writer(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_OK);
	struct store_sh_req t = {.op = STORE_SH_XTAKE, .cap = 4, .owner = "x", .seen_rvn = "old"};
	assert_int_equal(sh(fx, t)->status, STORE_REFUSED);
	t.owner = "y";
	t.seen_rvn = "x-r";
	assert_int_equal(sh(fx, t)->status, STORE_REFUSED);
	t.owner = "x";
	struct sh_answer *a = sh(fx, t);
	assert_int_equal(a->status, STORE_OK);
	struct store_result r = sc_read_item(fx);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 1);
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 1, 0)->status, STORE_OK);
	assert_int_equal(sc_renew(fx, "x", "x-r2", NULL).status, STORE_REFUSED); /* taken */
}

/* ---- phase-fair admission (RWAIT, RUNWAIT, RCLEAR in store_shared.h) ---- */

/* A reader's grant as a registered reader (admitted: past the writer's
 * announcement, on its entry in radmit), cap 4. */
static struct sh_answer *grant_reg(struct fixture *fx, unsigned slot, const char *owner, bool first,
				   int64_t seen_fence, bool admitted)
{
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s-r", owner);
	return sh(fx, (struct store_sh_req){.op = STORE_SH_GRANT,
					    .mode = STORE_SH_SHARED,
					    .cap = 4,
					    .slot = slot,
					    .owner = owner,
					    .rvn = rvn,
					    .first = first,
					    .admitted = admitted,
					    .registered = true,
					    .seen_fence = seen_fence,
					    .lease_ms = 30000});
}

static struct sh_answer *readers_op(struct fixture *fx, enum store_sh_op op, const char *owner)
{
	return sh(fx, (struct store_sh_req){.op = op, .cap = 4, .owner = owner});
}

static struct sh_answer *rclear(struct fixture *fx, unsigned n, const char *const *ids)
{
	struct store_sh_set *seen = calloc(1, sizeof(*seen));
	assert_non_null(seen);
	for (unsigned i = 0; i < n; i++)
		snprintf(seen->id[seen->n++], sizeof(seen->id[0]), "%s", ids[i]);
	struct sh_answer *a =
		sh(fx, (struct store_sh_req){.op = STORE_SH_RCLEAR, .cap = 4, .seen_set = seen});
	free(seen); /* the request was copied */
	return a;
}

/* Readers register only behind an exclusive holder (or an announcement);
 * its release moves them to radmit in its own write; an exclusive acquire
 * is refused while radmit stands; the readers admitted pass a writer's
 * announcement (which radmit allows), another is refused by it, and each
 * admitted grant takes its entry away: the last one's empties radmit and
 * the writer may acquire. */
static void release_admits_registered_readers(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r1")->status, STORE_REFUSED); /* none */
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_OK);     /* fence 1 */
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r1")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r2")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r1")->status, STORE_OK); /* a set */
	struct sh_answer *a = read_all(fx, 4);
	assert_int_equal(a->header.rwaiters.n, 2);
	assert_true(store_sh_set_has(&a->header.rwaiters, "r1"));
	assert_true(store_sh_set_has(&a->header.rwaiters, "r2"));
	assert_int_equal(a->header.radmit.n, 0);
	assert_true(sc_renew(fx, "x", "x-r2", NULL).item.rwaiters); /* the holder sees them */
	assert_int_equal(sc_release(fx, "x").status, STORE_OK);
	a = read_all(fx, 4);
	assert_int_equal(a->header.rwaiters.n, 0);
	assert_int_equal(a->header.radmit.n, 2);
	assert_true(store_sh_set_has(&a->header.radmit, "r2"));
	struct store_result r = sc_acquire(fx, "y", "y-r", NULL, NULL);
	assert_int_equal(r.status, STORE_REFUSED); /* the readers admitted go first */
	assert_true(r.item.radmit);
	assert_false(r.item.rwaiters);
	assert_int_equal(xannounce(fx, "y", "y1")->status, STORE_OK); /* no slot held yet */
	a = grant(fx, STORE_SH_SHARED, 4, 2, "r3", true, 1, 0);
	assert_int_equal(a->status, STORE_REFUSED); /* not admitted: behind y */
	assert_int_equal(a->index, 0);
	a = grant_reg(fx, 2, "r3", true, 1, true);
	assert_int_equal(a->status, STORE_REFUSED); /* admitted it is not */
	assert_int_equal(a->index, 0);
	assert_int_equal(grant_reg(fx, 0, "r1", true, 1, true)->status, STORE_OK);
	a = read_all(fx, 4);
	assert_int_equal(a->header.radmit.n, 1);
	assert_true(store_sh_set_has(&a->header.radmit, "r2"));
	assert_int_equal(a->header.lock.fence, 2); /* a new phase */
	assert_int_equal(grant_reg(fx, 1, "r2", false, 2, true)->status, STORE_OK);
	assert_int_equal(read_all(fx, 4)->header.radmit.n, 0);
	assert_false(sc_read_item(fx).item.radmit);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 0, "r1", NULL)->status, STORE_OK);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 1, "r2", NULL)->status, STORE_OK);
	assert_int_equal(sc_acquire(fx, "y", "y-r", NULL, NULL).status, STORE_OK);
}

/* A release with nobody registered admits nobody (radmit is no set: an
 * acquire goes on at once); XTAKE of a crashed holder admits as a
 * release does. */
static void release_without_readers_admits_nobody(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_release(fx, "x").status, STORE_OK);
	struct store_result r = sc_read_item(fx);
	assert_false(r.item.radmit);
	assert_false(r.item.rwaiters);
	assert_int_equal(sc_acquire(fx, "y", "y-r", NULL, NULL).status, STORE_OK);
	assert_int_equal(read_all(fx, 4)->header.radmit.n, 0);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r1")->status, STORE_OK);
	struct store_sh_req t = {.op = STORE_SH_XTAKE, .cap = 4, .owner = "y", .seen_rvn = "y-r"};
	assert_int_equal(sh(fx, t)->status, STORE_OK);
	struct sh_answer *a = read_all(fx, 4);
	assert_int_equal(a->header.radmit.n, 1);
	assert_true(store_sh_set_has(&a->header.radmit, "r1"));
	assert_int_equal(a->header.rwaiters.n, 0);
}

/* A writer drops the admissions of crashed readers on the very set it
 * saw (in any order), never on another; a reader that gives up takes its
 * entry out of both sets, and never makes an item. */
static void admitted_set_cleared_on_the_set_seen(void **state)
{
	struct fixture *fx = *state;
	static const char *const one[] = {"r1"}, *const both[] = {"r2", "r1"};
	assert_int_equal(readers_op(fx, STORE_SH_RUNWAIT, "r1")->status, STORE_REFUSED);
	assert_false(sc_read_item(fx).item.exists);		     /* no item made */
	assert_int_equal(rclear(fx, 1, one)->status, STORE_REFUSED); /* no set */
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r1")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r2")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r3")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RUNWAIT, "r3")->status, STORE_OK);
	assert_int_equal(read_all(fx, 4)->header.rwaiters.n, 2);
	assert_int_equal(sc_release(fx, "x").status, STORE_OK);
	assert_int_equal(rclear(fx, 1, one)->status, STORE_REFUSED); /* another set */
	assert_int_equal(read_all(fx, 4)->header.radmit.n, 2);
	assert_int_equal(rclear(fx, 2, both)->status, STORE_OK);
	assert_int_equal(read_all(fx, 4)->header.radmit.n, 0);
	assert_int_equal(sc_acquire(fx, "y", "y-r", NULL, NULL).status, STORE_OK);
}

/* Readers register behind a writer's announcement too (readers hold); a
 * registered reader's grant takes its entry out of rwaiters; the set is
 * bounded. */
static void registered_behind_an_announcement(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r2")->status, STORE_REFUSED);
	assert_int_equal(xannounce(fx, "w", "w1")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r2")->status, STORE_OK);
	assert_int_equal(grant_reg(fx, 1, "r2", false, 1, false)->status, STORE_REFUSED);
	assert_int_equal(xclear(fx, "w1")->status, STORE_OK);
	assert_int_equal(grant_reg(fx, 1, "r2", false, 1, false)->status, STORE_OK);
	assert_int_equal(read_all(fx, 4)->header.rwaiters.n, 0);
	assert_int_equal(xannounce(fx, "w", "w2")->status, STORE_OK);
	char id[16];
	for (unsigned i = 0; i < STORE_SH_SET_MAX; i++) {
		snprintf(id, sizeof(id), "q%u", i);
		assert_int_equal(readers_op(fx, STORE_SH_RWAIT, id)->status, STORE_OK);
	}
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "q-over")->status, STORE_REFUSED);
	assert_int_equal(read_all(fx, 4)->header.rwaiters.n, STORE_SH_SET_MAX);
}

/* The same after an exclusive lease released with nobody waiting (its
 * release left radmit "-", a string, not a set): a registered reader's
 * grant, and a reader giving up, delete its entry from the sets that are
 * sets (DynamoDB refused both, ValidationException, when they deleted
 * from radmit too: the stress harness found it on moto). */
static void registered_grant_after_a_lone_release(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(sc_acquire(fx, "x", "x-r", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_release(fx, "x").status, STORE_OK);
	int64_t fence = sc_read_item(fx).item.fence;
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, fence, 0)->status, STORE_OK);
	assert_int_equal(xannounce(fx, "w", "w1")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r3")->status, STORE_OK);
	assert_int_equal(readers_op(fx, STORE_SH_RUNWAIT, "r3")->status, STORE_OK); /* gives up */
	assert_int_equal(readers_op(fx, STORE_SH_RWAIT, "r2")->status, STORE_OK);
	assert_int_equal(xclear(fx, "w1")->status, STORE_OK);
	struct sh_answer *a = grant_reg(fx, 1, "r2", false, fence + 1, false);
	assert_int_equal(a->status, STORE_OK);
	assert_int_equal(read_all(fx, 4)->header.rwaiters.n, 0);
	assert_count(fx, 4, 2);
}

/* A semaphore's grant on the waiter's own announcement (.announced): a
 * place freed while it stands goes to that waiter, not to another
 * (store_shared.h GRANT); an announced grant needs its own standing. */
static struct sh_answer *grant_turn(struct fixture *fx, const char *owner, int64_t slot_fence)
{
	char rvn[STORE_ID_MAX + 1];
	snprintf(rvn, sizeof(rvn), "%s-r", owner);
	return sh(fx, (struct store_sh_req){.op = STORE_SH_GRANT,
					    .mode = STORE_SH_LIMIT,
					    .cap = 2,
					    .slot = 0,
					    .owner = owner,
					    .rvn = rvn,
					    .announced = true,
					    .seen_slot_fence = slot_fence,
					    .lease_ms = 30000});
}

static void semaphore_turn_announced(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 2, 0, "a", true, 0, 0)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 2, 1, "b", false, 0, 0)->status, STORE_OK);
	assert_int_equal(sh(fx, (struct store_sh_req){.op = STORE_SH_XANNOUNCE,
						      .mode = STORE_SH_LIMIT,
						      .cap = 2,
						      .owner = "c",
						      .rvn = "c1",
						      .lease_ms = 1000})
				 ->status,
			 STORE_OK);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 2, 0, "a", NULL)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 2, 0, "d", false, 0, 1)->status, STORE_REFUSED);
	assert_int_equal(grant_turn(fx, "e", 1)->status, STORE_REFUSED); /* not e's turn */
	assert_int_equal(grant_turn(fx, "c", 1)->status, STORE_OK);
	assert_count(fx, 2, 2);
	assert_int_equal(xclear(fx, "c1")->status, STORE_OK);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 2, 0, "c", NULL)->status, STORE_OK);
	assert_int_equal(grant_turn(fx, "f", 2)->status, STORE_REFUSED); /* no turn stands */
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 2, 0, "f", false, 0, 2)->status, STORE_OK);
}

/* A fenced write's check of a shared holder (CHECK) on slot by owner
 * with token. */
static struct sh_answer *check(struct fixture *fx, enum store_sh_mode mode, unsigned slot,
			       const char *owner, int64_t token)
{
	return sh(fx, (struct store_sh_req){.op = STORE_SH_CHECK,
					    .mode = mode,
					    .cap = 4,
					    .slot = slot,
					    .owner = owner,
					    .token = token});
}

/* An exclusive owner written over the header by hand (the slots stay),
 * keeping fence. */
static void owner_on_header(struct fixture *fx, int64_t fence)
{
	struct lock_item x = {.has_owner = true,
			      .has_rvn = true,
			      .has_lease = true,
			      .has_fence = true,
			      .fence = fence,
			      .lease_ms = 30000};
	snprintf(x.type, sizeof(x.type), "LOCK");
	snprintf(x.owner, sizeof(x.owner), "x");
	snprintf(x.rvn, sizeof(x.rvn), "x-r");
	assert_true(fx->f->put_raw(fx->f->arg, fx->s, fx->name, &x));
}

/* A reader's check passes while it holds its slot in the phase of its
 * group token; it is refused on another token (the header, index 0), for
 * another owner, after a takeover of its slot and after its release (the
 * slot, index 1, as it is), and while an exclusive owner is on the header
 * (index 0) though its slot is still its own. */
static void reader_check(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(check(fx, STORE_SH_SHARED, 0, "r1", 1)->status, STORE_REFUSED); /* none */
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 0, "r1", true, 0, 0)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_SHARED, 4, 1, "r2", false, 1, 0)->status, STORE_OK);
	assert_int_equal(check(fx, STORE_SH_SHARED, 0, "r1", 1)->status, STORE_OK);
	struct sh_answer *a = check(fx, STORE_SH_SHARED, 0, "r1", 2);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	assert_int_equal(a->header.lock.fence, 1);
	a = check(fx, STORE_SH_SHARED, 0, "r2", 1);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 1);
	assert_string_equal(a->slots[0].owner, "r1");
	/* r1 crashed: r3 takes its slot over */
	struct store_sh_req t = {.op = STORE_SH_GRANT,
				 .name = fx->name,
				 .mode = STORE_SH_SHARED,
				 .cap = 4,
				 .slot = 0,
				 .owner = "r3",
				 .rvn = "r3-r",
				 .seen_rvn = "r1-r",
				 .seen_fence = 1,
				 .seen_slot_fence = 1,
				 .lease_ms = 30000};
	assert_int_equal(sh(fx, t)->status, STORE_OK);
	a = check(fx, STORE_SH_SHARED, 0, "r1", 1);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 1);
	assert_string_equal(a->slots[0].owner, "r3");
	assert_int_equal(check(fx, STORE_SH_SHARED, 0, "r3", 1)->status, STORE_OK);
	/* released */
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 0, "r3", NULL)->status, STORE_OK);
	a = check(fx, STORE_SH_SHARED, 0, "r3", 1);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 1);
	assert_true(a->slots[0].exists);
	assert_false(a->slots[0].has_owner);
	/* an exclusive owner on the header, r2's slot still its own */
	assert_int_equal(check(fx, STORE_SH_SHARED, 1, "r2", 1)->status, STORE_OK);
	owner_on_header(fx, 1);
	a = check(fx, STORE_SH_SHARED, 1, "r2", 1);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	assert_string_equal(a->header.lock.owner, "x");
}

/* A semaphore holder's check is its slot's owner and fence (its token);
 * the header's fence is not its token, and only an exclusive owner there
 * refuses it. */
static void semaphore_holder_check(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 4, 0, "s1", true, 0, 0)->status, STORE_OK);
	assert_int_equal(end(fx, STORE_SH_RELEASE, 4, 0, "s1", NULL)->status, STORE_OK);
	assert_int_equal(grant(fx, STORE_SH_LIMIT, 4, 0, "s2", true, 0, 1)->status, STORE_OK);
	assert_int_equal(check(fx, STORE_SH_LIMIT, 0, "s2", 2)->status, STORE_OK);
	struct sh_answer *a = check(fx, STORE_SH_LIMIT, 0, "s2", 1); /* s1's token */
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 1);
	assert_int_equal(a->slots[0].fence, 2);
	assert_int_equal(check(fx, STORE_SH_LIMIT, 0, "s1", 2)->status, STORE_REFUSED);
	owner_on_header(fx, 5);
	a = check(fx, STORE_SH_LIMIT, 0, "s2", 2);
	assert_int_equal(a->status, STORE_REFUSED);
	assert_int_equal(a->index, 0);
	assert_true(a->header.lock.has_owner);
}

/* Bad requests are refused at submit (no callback). */
static void bad_requests_refused(void **state)
{
	struct fixture *fx = *state;
	struct sh_answer a = {0};
	const struct store_sh_req bad[] = {
		{.op = STORE_SH_READ, .name = fx->name, .cap = 0},
		{.op = STORE_SH_READ, .name = fx->name, .cap = STORE_SH_CAP + 1},
		{.op = STORE_SH_READ, .name = fx->name, .cap = 4, .slot = 3, .count = 2},
		{.op = STORE_SH_GRANT,
		 .name = fx->name,
		 .cap = 2,
		 .slot = 2,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000},
		{.op = STORE_SH_GRANT,
		 .name = fx->name,
		 .cap = 2,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000,
		 .first = true,
		 .seen_rvn = "x"},
		{.op = STORE_SH_GRANT, .name = fx->name, .cap = 2, .owner = "o", .rvn = "r"},
		{.op = STORE_SH_RENEW,
		 .name = fx->name,
		 .cap = 2,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000},
		{.op = STORE_SH_REMOVE, .name = fx->name, .cap = 2, .owner = "o"},
		{.op = STORE_SH_RELEASE, .name = "", .cap = 2, .owner = "o"},
		{.op = STORE_SH_XANNOUNCE, .name = fx->name, .cap = 2, .owner = "w", .rvn = "r"},
		{.op = STORE_SH_XCLEAR, .name = fx->name, .cap = 2},
		{.op = STORE_SH_XTAKE, .name = fx->name, .cap = 2, .owner = "x"},
		{.op = STORE_SH_RWAIT, .name = fx->name, .cap = 2},
		{.op = STORE_SH_RUNWAIT, .name = fx->name, .cap = 2, .owner = ""},
		{.op = STORE_SH_RCLEAR, .name = fx->name, .cap = 2},
		{.op = STORE_SH_GRANT,
		 .name = fx->name,
		 .cap = 2,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000,
		 .admitted = true},
		{.op = STORE_SH_CHECK, .name = fx->name, .cap = 2, .owner = "o"},
		{.op = STORE_SH_CHECK, .name = fx->name, .cap = 2, .token = 1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (store_sh_submit(fx->s, &bad[i], on_sh, &a) != NULL)
			fail_msg("bad shared request %zu accepted", i);
	assert_false(a.done);
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

int store_contract_shared_run(const struct store_factory *f)
{
	struct CMUnitTest tests[] = {
		T(readers_share_a_group_token),
		T(exclusive_waits_for_every_reader),
		T(readers_wait_for_the_exclusive),
		T(a_held_slot_is_refused),
		T(semaphore_slots_and_limit),
		T(renew_a_slot),
		T(crashed_holders_removed_or_replaced),
		T(announced_writer_stops_new_readers),
		T(reader_takes_a_crashed_writer),
		T(bad_requests_refused),
		T(release_admits_registered_readers),
		T(release_without_readers_admits_nobody),
		T(admitted_set_cleared_on_the_set_seen),
		T(registered_behind_an_announcement),
		T(registered_grant_after_a_lone_release),
		T(semaphore_turn_announced),
		T(reader_check),
		T(semaphore_holder_check),
		T(bad_requests_refused),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	char name[128];
	snprintf(name, sizeof(name), "%s, shared names", f->name);
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}
