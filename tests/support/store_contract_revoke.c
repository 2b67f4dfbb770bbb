/*
 * store_contract_revoke: the contract of core/store/store_revoke.h — the
 * revocations of `--heartbeat replica` — for every store: tests/unit/
 * test_store_contract.c runs it on the embedded store,
 * tests/integration/it_store_dynamodb.c on moto, on a table with a
 * partition key only and on one with a sort key. An ending's three parts
 * are read back (the lock, the entries, the session's revSeq in a
 * heartbeat's answer), not taken from its answer.
 */
#include "tests/support/store_contract_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/store/store_revoke.h"
#include "core/store/store_session.h"

#define HASH1 "1111111111111111111111111111111111111111111111111111111111111111"
#define HASH2 "2222222222222222222222222222222222222222222222222222222222222222"

/* This test's session: replica "rev" and an incarnation new per test. */
struct sess {
	char inc[STORE_SESSION_INC_LEN + 1];
	char key[STORE_SESSION_KEY_MAX + 1];
};

static void sess_init(struct sess *s)
{
	store_new_id(s->inc);
	struct store_session_req r = {.replica = "rev", .incarnation = s->inc};
	store_session_key(&r, s->key);
}

struct sess_answer {
	bool done;
	struct store_session_result res;
};

static void on_sess(void *arg, const struct store_session_result *r)
{
	struct sess_answer *a = arg;
	a->done = true;
	a->res = *r;
}

static struct store_session_result sess_do(struct fixture *fx, const struct sess *s,
					   struct store_session_req r)
{
	static int64_t beats; /* each BEAT's seq above the last (store_session.h) */
	struct sess_answer a = {0};
	r.replica = "rev";
	r.incarnation = s->inc;
	r.rvn = "beat";
	r.max_lease_ms = 30000;
	if (r.op == STORE_SESSION_BEAT)
		r.seq = ++beats;
	assert_non_null(store_session_submit(fx->s, &r, on_sess, &a));
	fx->f->run(fx->f->arg, &a.done);
	if (!a.done)
		fail_msg("%s: no answer to a session request", fx->f->name);
	return a.res;
}

static void sess_create(struct fixture *fx, const struct sess *s)
{
	assert_int_equal(
		sess_do(fx, s, (struct store_session_req){.op = STORE_SESSION_CREATE}).status,
		STORE_OK);
}

/* The session's revSeq as a heartbeat's answer gives it. */
static int64_t rev_seq(struct fixture *fx, const struct sess *s)
{
	struct store_session_result r =
		sess_do(fx, s, (struct store_session_req){.op = STORE_SESSION_BEAT});
	assert_int_equal(r.status, STORE_OK);
	return r.session.rev_seq;
}

struct rev_answer {
	bool done;
	int calls;
	enum store_status status;
	const char *error_type;
	unsigned count;
	struct store_revoke_entry *entries; /* copied, malloc'd */
	char cursor[STORE_REVOKE_KEY_LEN + 1];
};

static void on_rev(void *arg, const struct store_revoke_result *r)
{
	struct rev_answer *a = arg;
	a->done = true;
	a->calls++;
	a->status = r->status;
	a->error_type = r->error_type;
	a->count = r->count;
	a->entries = r->count > 0 ? malloc(r->count * sizeof(*a->entries)) : NULL;
	if (r->count > 0)
		memcpy(a->entries, r->entries, r->count * sizeof(*a->entries));
	snprintf(a->cursor, sizeof(a->cursor), "%s", r->cursor);
	if (r->status != STORE_OK)
		print_message("revocations: %s %s %s\n", store_status_name(r->status),
			      r->error_type ? r->error_type : "", r->message);
}

static void rev_do(struct fixture *fx, struct store_revoke_req r, struct rev_answer *a)
{
	memset(a, 0, sizeof(*a));
	assert_non_null(store_revoke_submit(fx->s, &r, on_rev, a));
	assert_false(a->done); /* never inside the submit */
	fx->f->run(fx->f->arg, &a->done);
	if (!a->done)
		fail_msg("%s: no answer to a revocations request", fx->f->name);
	assert_int_equal(a->calls, 1);
}

/* Every entry of the session, page by page of limit (0: the default),
 * into out (room for max); their count. *pages: the pages read. */
static unsigned read_all(struct fixture *fx, const struct sess *s, unsigned limit,
			 struct store_revoke_entry *out, unsigned max, unsigned *pages)
{
	char cursor[STORE_REVOKE_KEY_LEN + 1] = "";
	unsigned n = 0, np = 0;
	uint64_t reads = fx->s->requests[STORE_READ];
	do {
		struct rev_answer a;
		rev_do(fx,
		       (struct store_revoke_req){.op = STORE_REVOKE_READ,
						 .session = s->key,
						 .cursor = cursor,
						 .limit = limit},
		       &a);
		assert_int_equal(a.status, STORE_OK);
		assert_true(a.count <= (limit != 0 ? limit : STORE_REVOKE_PAGE));
		assert_true(n + a.count <= max);
		if (a.count > 0)
			memcpy(&out[n], a.entries, a.count * sizeof(*out));
		n += a.count;
		free(a.entries);
		snprintf(cursor, sizeof(cursor), "%s", a.cursor);
		assert_true(++np < 1000);
	} while (cursor[0] != '\0');
	assert_int_equal(fx->s->requests[STORE_READ], reads + np); /* a request a page */
	if (pages != NULL)
		*pages = np;
	return n;
}

static unsigned count_entries(struct fixture *fx, const struct sess *s)
{
	static struct store_revoke_entry e[2 * STORE_REVOKE_MAX];
	return read_all(fx, s, 0, e, 2 * STORE_REVOKE_MAX, NULL);
}

static void unrevoke(struct fixture *fx, const struct sess *s, const char *name, int64_t fence)
{
	struct rev_answer a;
	uint64_t deletes = fx->s->requests[STORE_DELETE];
	rev_do(fx,
	       (struct store_revoke_req){
		       .op = STORE_REVOKE_DELETE, .session = s->key, .name = name, .fence = fence},
	       &a);
	assert_int_equal(a.status, STORE_OK);
	assert_int_equal(fx->s->requests[STORE_DELETE], deletes + 1);
}

/* A release from outside of owner's lease of token on name (NULL: the
 * test's), with its revocation for the session. */
static struct store_result end_release(struct fixture *fx, const char *name, const char *owner,
				       int64_t token, bool forced, const struct sess *s)
{
	return store_contract_op(fx, (struct store_req){.op = STORE_RELEASE,
							.name = name,
							.owner = owner,
							.token = token,
							.forced = forced,
							.revoke_session = s->key});
}

/* The session holds exactly the entry (name, fence). */
static void assert_one_entry(struct fixture *fx, const struct sess *s, const char *name,
			     int64_t fence)
{
	struct store_revoke_entry e[4];
	assert_int_equal(read_all(fx, s, 0, e, 4, NULL), 1);
	assert_string_equal(e[0].name, name);
	assert_int_equal(e[0].fence, fence);
}

/* A forced release writes its entry and raises revSeq by one, and the
 * lock is released with its freed marker. */
static void forced_release_revokes(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	assert_int_equal(rev_seq(fx, &s), 0);
	assert_int_equal(sc_acquire(fx, "o1", "o1-r", NULL, "h").status, STORE_OK);
	uint64_t releases = fx->s->requests[STORE_RELEASE];
	struct store_result r = end_release(fx, NULL, "o1", 1, true, &s);
	assert_int_equal(fx->s->requests[STORE_RELEASE], releases + 1); /* one request */
	assert_int_equal(r.status, STORE_OK);
	assert_false(r.session_gone);
	assert_true(r.item.exists);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.fence, 1);
	assert_int_equal(r.item.freed, 1);
	assert_true(r.item.freed_forced);
	r = sc_read_item(fx);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.freed, 1);
	assert_true(r.item.freed_forced);
	assert_int_equal(rev_seq(fx, &s), 1);
	assert_one_entry(fx, &s, fx->name, 1);
}

/* A release by (name, token) likewise, its marker "token". */
static void token_release_revokes(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	assert_int_equal(sc_acquire(fx, "o1", "o1-r", NULL, NULL).status, STORE_OK);
	assert_int_equal(sc_release(fx, "o1").status, STORE_OK);
	assert_int_equal(sc_acquire(fx, "o2", "o2-r", NULL, NULL).status, STORE_OK);
	struct store_result r = end_release(fx, NULL, "o2", 2, false, &s);
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(r.item.freed, 2);
	assert_false(r.item.freed_forced);
	r = sc_read_item(fx);
	assert_false(r.item.has_owner);
	assert_int_equal(r.item.freed, 2);
	assert_false(r.item.freed_forced);
	assert_int_equal(rev_seq(fx, &s), 1);
	assert_one_entry(fx, &s, fx->name, 2);
}

/* An adopt likewise: the new owner, the fence kept. */
static void adopt_revokes(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	struct store_result r = store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
									 .owner = "o1",
									 .rvn = "o1-r",
									 .lease_ms = 30000,
									 .secret_hash = HASH1});
	assert_int_equal(r.status, STORE_OK);
	assert_int_equal(
		store_contract_op(fx, (struct store_req){.op = STORE_ORPHAN, .owner = "o1"}).status,
		STORE_OK);
	r = store_contract_op(fx, (struct store_req){.op = STORE_ADOPT,
						     .owner = "o2",
						     .rvn = "o2-r",
						     .prev_owner = "o1",
						     .prev_secret_hash = HASH1,
						     .secret_hash = HASH2,
						     .holder = "h2",
						     .lease_ms = 20000,
						     .token = 1,
						     .revoke_session = s.key});
	assert_int_equal(r.status, STORE_OK);
	sc_assert_held(&r.item, "o2", "o2-r", 1, 20000, "h2");
	assert_string_equal(r.item.adopted_from, "o1");
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o2", "o2-r", 1, 20000, "h2");
	assert_string_equal(r.item.adopted_from, "o1");
	assert_string_equal(r.item.secret_hash, HASH2);
	assert_int_equal(rev_seq(fx, &s), 1);
	assert_one_entry(fx, &s, fx->name, 1);
}

/* The same entry written again (an adopted lease then forced out, both
 * revoked for one session: name and fence the same) is one entry; revSeq
 * rises at each. */
static void same_entry_once(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .owner = "o1",
								  .rvn = "o1-r",
								  .lease_ms = 30000,
								  .secret_hash = HASH1})
				 .status,
			 STORE_OK);
	assert_int_equal(
		store_contract_op(fx, (struct store_req){.op = STORE_ORPHAN, .owner = "o1"}).status,
		STORE_OK);
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ADOPT,
								  .owner = "o2",
								  .rvn = "o2-r",
								  .prev_owner = "o1",
								  .prev_secret_hash = HASH1,
								  .secret_hash = HASH2,
								  .lease_ms = 20000,
								  .token = 1,
								  .revoke_session = s.key})
				 .status,
			 STORE_OK);
	assert_int_equal(end_release(fx, NULL, "o2", 1, true, &s).status, STORE_OK);
	assert_int_equal(rev_seq(fx, &s), 2);
	assert_one_entry(fx, &s, fx->name, 1);
}

/* The lock's condition failing writes neither the entry nor revSeq: a
 * release by an owner that does not hold it, an adopt of a lease not
 * orphaned. */
static void lock_refusal_writes_nothing(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	assert_int_equal(sc_acquire(fx, "o1", "o1-r", NULL, "h").status, STORE_OK);
	struct store_result r = end_release(fx, NULL, "o9", 1, true, &s);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.session_gone);
	sc_assert_held(&r.item, "o1", "o1-r", 1, 30000, "h");
	r = store_contract_op(fx, (struct store_req){.op = STORE_ADOPT,
						     .owner = "o2",
						     .rvn = "o2-r",
						     .prev_owner = "o1",
						     .prev_secret_hash = HASH1,
						     .secret_hash = HASH2,
						     .lease_ms = 20000,
						     .token = 1,
						     .revoke_session = s.key});
	assert_int_equal(r.status, STORE_REFUSED);
	assert_false(r.session_gone);
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o1", "o1-r", 1, 30000, "h");
	assert_int_equal(rev_seq(fx, &s), 0);
	assert_int_equal(count_entries(fx, &s), 0);
}

/* A session that is not there refuses the whole ending: session_gone,
 * the lock item as it is, and nothing written (no session made either). */
static void absent_session_refuses(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	assert_int_equal(sc_acquire(fx, "o1", "o1-r", NULL, "h").status, STORE_OK);
	struct store_result r = end_release(fx, NULL, "o1", 1, true, &s);
	assert_int_equal(r.status, STORE_REFUSED);
	assert_true(r.session_gone);
	sc_assert_held(&r.item, "o1", "o1-r", 1, 30000, "h");
	r = sc_read_item(fx);
	sc_assert_held(&r.item, "o1", "o1-r", 1, 30000, "h");
	assert_int_equal(r.item.freed, 0);
	assert_int_equal(count_entries(fx, &s), 0);
	struct store_session_result b =
		sess_do(fx, &s, (struct store_session_req){.op = STORE_SESSION_BEAT});
	assert_int_equal(b.status, STORE_REFUSED);
	assert_false(b.session.exists);
	/* without a revocation the release goes through */
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_RELEASE,
								  .owner = "o1",
								  .token = 1,
								  .forced = true})
				 .status,
			 STORE_OK);
}

/* n endings on the locks <test>-<i>, fence 1 each. */
static void end_many(struct fixture *fx, const struct sess *s, unsigned from, unsigned n,
		     size_t len, char (*names)[STORE_NAME_MAX + 1])
{
	for (unsigned i = from; i < from + n; i++) {
		int k = snprintf(names[i], STORE_NAME_MAX + 1, "%s-%u-", fx->name, i);
		while ((size_t)k < len)
			names[i][k++] = 'x';
		names[i][k] = '\0';
		struct store_result r =
			store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								 .name = names[i],
								 .owner = "o",
								 .rvn = "r",
								 .lease_ms = 30000});
		assert_int_equal(r.status, STORE_OK);
		r = end_release(fx, names[i], "o", 1, false, s);
		if (r.status != STORE_OK)
			fail_msg("ending %u: %s %s", i, store_status_name(r.status), r.message);
	}
}

/* Every entry is read, page by page, each once. */
static void reads_every_entry(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	static char names[5][STORE_NAME_MAX + 1];
	end_many(fx, &s, 0, 5, 0, names);
	assert_int_equal(rev_seq(fx, &s), 5);
	struct store_revoke_entry e[8];
	unsigned pages;
	assert_int_equal(read_all(fx, &s, 2, e, 8, &pages), 5);
	assert_true(pages >= 3);
	for (unsigned i = 0; i < 5; i++) {
		int seen = 0;
		for (unsigned j = 0; j < 5; j++)
			seen += strcmp(e[j].name, names[i]) == 0;
		assert_int_equal(seen, 1);
		assert_int_equal(e[i].fence, 1);
	}
	assert_int_equal(read_all(fx, &s, 0, e, 8, &pages), 5);
	assert_int_equal(pages, 1);
}

/* Deleting an entry leaves the others; deleting it again is done too;
 * revSeq stays. */
static void delete_leaves_the_others(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	static char names[3][STORE_NAME_MAX + 1];
	end_many(fx, &s, 0, 3, 0, names);
	unrevoke(fx, &s, names[1], 2); /* no such fence: nothing */
	assert_int_equal(count_entries(fx, &s), 3);
	unrevoke(fx, &s, names[1], 1);
	unrevoke(fx, &s, names[1], 1);
	struct store_revoke_entry e[4];
	assert_int_equal(read_all(fx, &s, 0, e, 4, NULL), 2);
	assert_true(strcmp(e[0].name, names[1]) != 0 && strcmp(e[1].name, names[1]) != 0);
	assert_true(strcmp(e[0].name, e[1].name) != 0);
	unrevoke(fx, &s, names[0], 1);
	unrevoke(fx, &s, names[2], 1);
	assert_int_equal(count_entries(fx, &s), 0);
	unrevoke(fx, &s, names[2], 1); /* none left at all */
	assert_int_equal(rev_seq(fx, &s), 3);
}

/* STORE_REVOKE_MAX entries of names near STORE_NAME_MAX: a bounded store
 * refuses one more (TRANSIENT RevocationsFull, nothing written) until
 * one is deleted; a table with a sort key takes it, and is read in two
 * pages. */
static void bounded_entries(void **state)
{
	struct fixture *fx = *state;
	struct sess s;
	sess_init(&s);
	sess_create(fx, &s);
	static char names[STORE_REVOKE_MAX + 1][STORE_NAME_MAX + 1];
	end_many(fx, &s, 0, STORE_REVOKE_MAX, STORE_NAME_MAX - 10, names);
	static struct store_revoke_entry e[STORE_REVOKE_MAX + 1];
	unsigned pages;
	if (fx->f->revoke_unbounded) {
		end_many(fx, &s, STORE_REVOKE_MAX, 1, STORE_NAME_MAX - 10, names);
		assert_int_equal(read_all(fx, &s, 0, e, STORE_REVOKE_MAX + 1, &pages),
				 STORE_REVOKE_MAX + 1);
		assert_true(pages >= 2);
		return;
	}
	snprintf(names[STORE_REVOKE_MAX], STORE_NAME_MAX + 1, "%s-last", fx->name);
	const char *last = names[STORE_REVOKE_MAX];
	assert_int_equal(store_contract_op(fx, (struct store_req){.op = STORE_ACQUIRE,
								  .name = last,
								  .owner = "o",
								  .rvn = "r",
								  .lease_ms = 30000})
				 .status,
			 STORE_OK);
	struct store_result r = end_release(fx, last, "o", 1, true, &s);
	assert_int_equal(r.status, STORE_TRANSIENT);
	assert_string_equal(r.error_type, "RevocationsFull");
	r = store_contract_op(fx, (struct store_req){.op = STORE_READ, .name = last});
	sc_assert_held(&r.item, "o", "r", 1, 30000, NULL);
	assert_int_equal(rev_seq(fx, &s), STORE_REVOKE_MAX);
	assert_int_equal(read_all(fx, &s, 0, e, STORE_REVOKE_MAX + 1, &pages), STORE_REVOKE_MAX);
	unrevoke(fx, &s, names[5], 1);
	assert_int_equal(end_release(fx, last, "o", 1, true, &s).status, STORE_OK);
	assert_int_equal(read_all(fx, &s, 0, e, STORE_REVOKE_MAX + 1, &pages), STORE_REVOKE_MAX);
	assert_int_equal(rev_seq(fx, &s), STORE_REVOKE_MAX + 1);
}

/* Bad requests are refused at submit (no callback). */
static void bad_requests_refused(void **state)
{
	struct fixture *fx = *state;
	struct rev_answer a = {0};
	struct sess s;
	sess_init(&s);
	char long_name[STORE_NAME_MAX + 2];
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	char key[STORE_REVOKE_KEY_LEN + 1];
	store_revoke_key("x", 7, key);
	char upper[STORE_REVOKE_KEY_LEN + 1];
	memcpy(upper, key, sizeof(upper));
	upper[30] = 'A';
	const char *bad_sessions[] = {
		NULL,
		"",
		"SESSION#",
		"SESSION#rev#0123",
		"SESSION#r v#0123456789abcdef0123456789abcdef",
		"SESSION#rev#0123456789ABCDEF0123456789abcdef",
		"LOCK#rev#0123456789abcdef0123456789abcdef",
		"SESSION##0123456789abcdef0123456789abcdef",
		"SESSION#rev#0123456789abcdef0123456789abcdef0",
	};
	for (size_t i = 0; i < sizeof(bad_sessions) / sizeof(bad_sessions[0]); i++) {
		struct store_revoke_req r = {.op = STORE_REVOKE_READ, .session = bad_sessions[i]};
		if (store_revoke_submit(fx->s, &r, on_rev, &a) != NULL)
			fail_msg("bad session %zu accepted", i);
		struct store_req e = {.op = STORE_RELEASE,
				      .name = fx->name,
				      .owner = "o",
				      .token = 1,
				      .revoke_session = bad_sessions[i]};
		if (bad_sessions[i] != NULL && store_submit(fx->s, &e, NULL, NULL) != NULL)
			fail_msg("an ending for bad session %zu accepted", i);
	}
	const struct store_revoke_req bad[] = {
		{.op = STORE_REVOKE_READ, .session = s.key, .limit = STORE_REVOKE_PAGE + 1},
		{.op = STORE_REVOKE_READ, .session = s.key, .cursor = "abc"},
		{.op = STORE_REVOKE_READ, .session = s.key, .cursor = upper},
		{.op = STORE_REVOKE_DELETE, .session = s.key, .name = "x", .fence = 0},
		{.op = STORE_REVOKE_DELETE, .session = s.key, .name = "x", .fence = -1},
		{.op = STORE_REVOKE_DELETE, .session = s.key, .name = "", .fence = 1},
		{.op = STORE_REVOKE_DELETE, .session = s.key, .name = NULL, .fence = 1},
		{.op = STORE_REVOKE_DELETE, .session = s.key, .name = long_name, .fence = 1},
		{.op = (enum store_revoke_op)5, .session = s.key},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (store_revoke_submit(fx->s, &bad[i], on_rev, &a) != NULL)
			fail_msg("bad revocations request %zu accepted", i);
	/* endings that cannot carry a revocation */
	const struct store_req bad_ends[] = {
		{.op = STORE_RELEASE, .owner = "o", .token = 0, .revoke_session = s.key},
		{.op = STORE_RELEASE, .token = 1, .unconditional = true, .revoke_session = s.key},
		{.op = STORE_ACQUIRE,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000,
		 .revoke_session = s.key},
		{.op = STORE_RENEW,
		 .owner = "o",
		 .rvn = "r",
		 .lease_ms = 1000,
		 .revoke_session = s.key},
		{.op = STORE_ADOPT, .owner = "o", .rvn = "r", .token = 0, .revoke_session = s.key},
		{.op = STORE_CHECK, .owner = "o", .token = 1, .revoke_session = s.key},
	};
	for (size_t i = 0; i < sizeof(bad_ends) / sizeof(bad_ends[0]); i++) {
		struct store_req e = bad_ends[i];
		e.name = fx->name;
		if (store_submit(fx->s, &e, NULL, NULL) != NULL)
			fail_msg("bad ending %zu accepted", i);
	}
	assert_false(a.done);
	/* and the bounds themselves pass */
	struct store_revoke_req ok = {.op = STORE_REVOKE_READ,
				      .session = s.key,
				      .cursor = key,
				      .limit = STORE_REVOKE_PAGE};
	assert_true(store_revoke_valid(&ok));
	long_name[STORE_NAME_MAX] = '\0';
	ok = (struct store_revoke_req){
		.op = STORE_REVOKE_DELETE, .session = s.key, .name = long_name, .fence = 1};
	assert_true(store_revoke_valid(&ok));
	assert_true(store_session_key_valid(s.key));
}

/* The entry's key: 19 digits of the fence, '#', the SHA-256 of the name. */
static void entry_key_form(void **state)
{
	char key[STORE_REVOKE_KEY_LEN + 1];
	store_revoke_key("abc", 42, key);
	assert_string_equal(key,
			    "0000000000000000042#"
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_true(store_revoke_key_valid(key));
}

#define T(fn)                                                                                      \
	cmocka_unit_test_prestate_setup_teardown(fn, store_contract_setup,                         \
						 store_contract_teardown, NULL)

int store_contract_revoke_run(const struct store_factory *f)
{
	struct CMUnitTest tests[] = {
		T(forced_release_revokes),
		T(token_release_revokes),
		T(adopt_revokes),
		T(same_entry_once),
		T(lock_refusal_writes_nothing),
		T(absent_session_refuses),
		T(reads_every_entry),
		T(delete_leaves_the_others),
		T(bounded_entries),
		T(bad_requests_refused),
		T(entry_key_form),
	};
	size_t n = sizeof(tests) / sizeof(tests[0]);
	for (size_t i = 0; i < n; i++)
		tests[i].initial_state = (void *)f;
	char name[128];
	snprintf(name, sizeof(name), "%s, revocations", f->name);
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}
