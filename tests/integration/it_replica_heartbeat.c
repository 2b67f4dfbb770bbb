/*
 * it_replica_heartbeat: two gateway processes on one moto table (signature
 * checking on) with `--heartbeat replica` (docs/design/replica-heartbeat.md):
 * each replica proves its exclusive locks alive by one session item. What a
 * client may conclude is checked where another replica (or the table) can
 * see it:
 *
 * - a lock held in session mode: LOCK.STATE on both replicas, the session
 *   item and the lock item naming it, held over 3+ leases while only the
 *   session is renewed (the lock item's rvn stands still, the session's
 *   moves) and the other replica's waiter times out;
 * - the holder SIGKILLed: the other replica's waiter takes it over no
 *   earlier than a lease after the session's last heartbeat was first seen
 *   in the table, within the rules' bound, with a higher token; the holder
 *   restarted at once with the same --replica-id makes a new incarnation
 *   and does not keep the old lock alive;
 * - mixed modes (the rollout): a replica-mode and a lease-mode gateway each
 *   wait out the other's live lock (timing out), take each other's released
 *   or crashed locks;
 * - endings from outside: LOCK.FORCE-RELEASE and a release by (name, token)
 *   on the other replica end that lease only; the holder's client is told,
 *   a third client takes it, the session's other locks stay held;
 * - the holder SIGSTOPped past its lease: taken over; once continued its
 *   client learns the loss and it writes nothing over the new holder;
 * - a hand-off granted in a session already marked dead: its client is
 *   told the loss, and the next waiter is granted no earlier than a lease
 *   after the hand-off's write;
 * - LEADER.CAMPAIGN: a follower on the other replica leads after the
 *   leader's gateway is killed.
 *
 * Every test runs on a table with a partition key only; those whose
 * requests differ with the key schema (the session item's key, the
 * takeover's transaction and kill, a lease-mode waiter's read of the
 * session, the revocations: a Query on a table with a sort key) also on
 * one with a sort key (custom key names), as the store contracts do; the
 * paused replica and the leader's takeover make the same requests as the
 * crash's, so they run once (the whole stays near a minute). Without
 * LG_MOTO every test fails.
 *
 * Lower time bounds are the rules' own: a takeover comes a lease after
 * the holder's last heartbeat landed in the table (the test watches the
 * session item to know when), a wait times out no earlier than asked; a
 * rougher one counts from the holder's stop, less a heartbeat's interval
 * and its lateness on a loaded machine (LATE_MS). Upper bounds add
 * SLACK_MS for a shared machine. Measured times are printed.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "tests/support/ddbpeek.h"
#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

enum { LEASE = 1500, POLL = LEASE / 3, LATE_MS = 300, SLACK_MS = 2000 };

/* The clocks' truncation to milliseconds (the gateway's, the table
 * reader's and the test's are one CLOCK_MONOTONIC). */
enum { CLOCK_GRAIN_MS = 5 };
#define TEN_YEARS_MS 315360000000LL /* leaseMs of a lock held in session mode */

/* A test's prestate: the key schema of its table. */
struct schema {
	const char *pk, *sk; /* names given to --create-table; NULL: the defaults */
};
static const struct schema pk_only = {NULL, NULL}, with_sk = {"Id", "Kind"};

/* The running test's schema and table reader (closed by teardown). */
static const struct schema *schema;
static struct ddbpeek peek;
static char table[64];

/* A new table name for the test, on its key schema (*state). */
static void new_table(void **state)
{
	assert_true(gw_have_moto());
	schema = *state;
	snprintf(table, sizeof(table), "%s", gw_new_table());
}

/* Starts a gateway on the test's table, labelled label, in mode ("replica"
 * or "lease") with replica id id. */
static void start_gw(struct gw *g, const char *label, const char *mode, const char *id)
{
	gw_start(g, table, "--holder-label", label, "--heartbeat", mode, "--replica-id", id,
		 schema->pk != NULL ? "--partition-key" : NULL, schema->pk, "--sort-key",
		 schema->sk, NULL);
}

/* Two gateways in replica mode, gw-a (replica id ra) and gw-b (rb), and the
 * table's reader. */
static void start_two(struct gw *a, struct gw *b)
{
	peek_open(&peek, table);
	start_gw(a, "gw-a", "replica", "ra");
	start_gw(b, "gw-b", "replica", "rb");
}

static int teardown(void **state)
{
	peek_close(&peek);
	return gw_teardown(state);
}

/* ---- what LOCK.STATE and the table say ---- */

/* LOCK.STATE of an exclusive lock (RESP2 flat pairs), by key. */
struct state {
	long long held, lease_ms, token, mine, confirmed_ago;
	char holder[64], heartbeat[16];
	bool confirmed; /* confirmed-ms-ago given, and an integer */
};

static void read_state(redisContext *c, const char *name, struct state *out)
{
	memset(out, 0, sizeof(*out));
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	if (r->type != REDIS_REPLY_ARRAY || (r->elements != 12 && r->elements != 14))
		fail_msg("LOCK.STATE %s: type %d, %zu elements", name, r->type, r->elements);
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *k = r->element[i]->str;
		const redisReply *v = r->element[i + 1];
		long long n = v->type == REDIS_REPLY_INTEGER ? v->integer : -1;
		if (strcmp(k, "held") == 0)
			out->held = n;
		else if (strcmp(k, "lease-ms") == 0)
			out->lease_ms = n;
		else if (strcmp(k, "fencing-token") == 0)
			out->token = n;
		else if (strcmp(k, "mine") == 0)
			out->mine = n;
		else if (strcmp(k, "holder") == 0 && v->type == REDIS_REPLY_STRING)
			snprintf(out->holder, sizeof(out->holder), "%s", v->str);
		else if (strcmp(k, "heartbeat") == 0 && v->type == REDIS_REPLY_STRING)
			snprintf(out->heartbeat, sizeof(out->heartbeat), "%s", v->str);
		else if (strcmp(k, "confirmed-ms-ago") == 0) {
			out->confirmed = v->type == REDIS_REPLY_INTEGER;
			out->confirmed_ago = n;
		}
	}
	freeReplyObject(r);
}

/* Whose lock LOCK.STATE shows, as seen from one connection. */
enum whose {
	OTHERS,	      /* another replica's */
	THIS_REPLICA, /* this replica's, another connection's */
	MINE,	      /* this connection's */
};

/* LOCK.STATE name on c shows it held by holder with token, whose it is, how
 * its holder proves it alive (heartbeat), and confirmed-ms-ago exactly when
 * this replica holds it in session mode. */
static void expect_state(redisContext *c, const char *name, const char *holder, long long token,
			 enum whose whose, const char *heartbeat)
{
	struct state st;
	read_state(c, name, &st);
	assert_int_equal(st.held, 1);
	assert_string_equal(st.holder, holder);
	assert_int_equal(st.lease_ms, LEASE);
	assert_int_equal(st.token, token);
	assert_int_equal(st.mine, whose == MINE);
	assert_string_equal(st.heartbeat, heartbeat);
	assert_int_equal(st.confirmed, whose != OTHERS && strcmp(heartbeat, "replica") == 0);
}

/* The lock item of name, read from the table (freed by the caller). */
static cJSON *lock_item(const char *name)
{
	char pk[128];
	snprintf(pk, sizeof(pk), "LOCK#%s", name);
	return peek_item(&peek, pk);
}

/* The lock item of name is held in session mode by a session of replica
 * id with fence token: its real lease in sleaseMs, leaseMs no client counts
 * to. Writes the session's key to key. */
static void expect_session_lock(const char *name, const char *id, long long token, char *key,
				size_t cap)
{
	char prefix[32];
	cJSON *it = lock_item(name);
	const char *s = peek_str(it, "session");
	snprintf(prefix, sizeof(prefix), "SESSION#%s#", id);
	if (s == NULL || strncmp(s, prefix, strlen(prefix)) != 0)
		fail_msg("lock %s: session %s, wanted one of replica %s", name, s ? s : "none", id);
	assert_int_equal(strlen(s), strlen(prefix) + 32); /* 128 random bits */
	assert_non_null(peek_str(it, "owner"));
	assert_int_equal(peek_num(it, "fence"), token);
	assert_int_equal(peek_num(it, "sleaseMs"), LEASE);
	assert_true(peek_num(it, "leaseMs") == TEN_YEARS_MS);
	snprintf(key, cap, "%s", s);
	cJSON_Delete(it);
}

/* The lock item of name is held per lease with fence token: no session. */
static void expect_lease_lock(const char *name, long long token)
{
	cJSON *it = lock_item(name);
	assert_null(peek_str(it, "session"));
	assert_non_null(peek_str(it, "owner"));
	assert_int_equal(peek_num(it, "fence"), token);
	assert_int_equal(peek_num(it, "leaseMs"), LEASE);
	cJSON_Delete(it);
}

/* rvn of the item at pk (into out), as the table holds it now. */
static void item_rvn(const char *pk, char *out, size_t cap)
{
	cJSON *it = peek_item(&peek, pk);
	const char *rvn = peek_str(it, "rvn");
	if (rvn == NULL)
		fail_msg("%s: no item, or no rvn", pk);
	snprintf(out, cap, "%s", rvn);
	cJSON_Delete(it);
}

/* ---- waiting for a grant ---- */

/* The token a waiter's LOCK.ACQUIRE ... WAIT is granted within ms. */
static long long grant_within(redisContext *w, int ms, const char *what)
{
	return gw_token_within(w, ms, what);
}

/* The waiter on w times out (nil), no earlier than wait_ms after sent_ms. */
static void expect_timeout(redisContext *w, long long sent_ms, int wait_ms, const char *what)
{
	redisReply *r = gw_reply_within(w, wait_ms + SLACK_MS);
	if (r == NULL)
		fail_msg("%s: no answer within %d ms", what, wait_ms + SLACK_MS);
	if (r->type != REDIS_REPLY_NIL)
		fail_msg("%s: wanted nil (timed out), got type %d (%lld, %s)", what, r->type,
			 r->integer, r->str ? r->str : "");
	freeReplyObject(r);
	long long ms = gw_now_ms() - sent_ms;
	printf("# %s: timed out after %lld ms (WAIT %d)\n", what, ms, wait_ms);
	assert_true(ms >= wait_ms - CLOCK_GRAIN_MS);
}

/* Waits (up to a lease and SLACK_MS) until the watched session item
 * changed since its watch began: a heartbeat landed while watched, so that
 * the watch knows when the last one before a stop landed. */
static void await_beat(void)
{
	struct peek_seen seen;
	long long end = gw_now_ms() + LEASE + SLACK_MS;
	for (;;) {
		peek_watched(&peek, &seen);
		if (seen.changes >= 1)
			return;
		if (gw_now_ms() > end)
			fail_msg("no heartbeat of the watched session within %d ms",
				 LEASE + SLACK_MS);
		gw_sleep_ms(50);
	}
}

/* A takeover granted at grant_ms, after the holder stopped at stop_ms;
 * seen is the watch of the holder's session item: its last heartbeat
 * landed after seen->landed_after_ms, and the holder's own clock counts
 * its lease from that heartbeat's send, earlier. The grant comes no
 * earlier than a lease after that landing (the takeover's rule: the
 * session's rvn stood still a whole lease from the first read that showed
 * it), and within the rules' bound of the stop. */
static void expect_takeover_time(long long stop_ms, const struct peek_seen *seen,
				 long long grant_ms, const char *what)
{
	long long after_stop = grant_ms - stop_ms, after_beat = grant_ms - seen->landed_after_ms;
	printf("# %s: granted %lld ms after the holder stopped, %lld ms after its last "
	       "heartbeat landed at the earliest (%lld ms after it was first seen; lease %d)\n",
	       what, after_stop, after_beat, grant_ms - seen->first_seen_ms, LEASE);
	assert_true(seen->landed_after_ms >= 0); /* a heartbeat landed while watched */
	assert_true(after_beat >= LEASE - CLOCK_GRAIN_MS);
	assert_true(after_stop >= LEASE - POLL - LATE_MS);
	assert_true(after_stop <= LEASE + 2 * POLL + SLACK_MS);
}

/* ---- 1. a lock held in session mode ---- */

/* A lock taken on A: both replicas say it is proven alive by A's replica
 * heartbeat (A, holding it, says how long ago it was confirmed); the table
 * holds A's session item and the lock names it; A holds it over three
 * leases with its session's heartbeats only (the lock item's rvn stands
 * still, the session's moves), while B's waiter times out. */
static void test_held_by_session(void **state)
{
	struct gw ga, gb;
	char key[128], rvn[64], srvn[64], now_rvn[64];
	new_table(state);
	start_two(&ga, &gb);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb), *wb = gw_connect(&gb);
	/* confirmed by its own write, not by a heartbeat from before it */
	long long sent = gw_now_ms();
	long long t = lh_acquire(ca, "x", LEASE);
	struct state st;
	read_state(ca, "x", &st);
	long long since = gw_now_ms() - sent;
	printf("# LOCK.STATE on the holder's replica: confirmed-ms-ago %lld, %lld ms after the "
	       "acquire was sent\n",
	       st.confirmed_ago, since);
	assert_true(st.confirmed && st.confirmed_ago <= since + 5);
	gw_sleep_ms(POLL + 200); /* the session's first heartbeat for it */
	read_state(ca, "x", &st);
	printf("# and after its first heartbeat: %lld\n", st.confirmed_ago);
	expect_state(ca, "x", "gw-a", t, MINE, "replica");
	assert_true(st.confirmed_ago >= 0 && st.confirmed_ago < LEASE);
	expect_state(cb, "x", "gw-a", t, OTHERS, "replica");

	expect_session_lock("x", "ra", t, key, sizeof(key));
	cJSON *sess = peek_sessions(&peek, "ra");
	assert_int_equal(cJSON_GetArraySize(sess), 1);
	assert_string_equal(cJSON_GetArrayItem(sess, 0)->valuestring, key);
	cJSON_Delete(sess);
	sess = peek_item(&peek, key);
	assert_string_equal(peek_str(sess, "holder"), "gw-a");
	assert_true(peek_num(sess, "maxLeaseMs") >= LEASE);
	assert_null(peek_str(sess, "dead"));
	cJSON_Delete(sess);

	/* three leases: B's waiter times out, only the session is written */
	item_rvn("LOCK#x", rvn, sizeof(rvn));
	item_rvn(key, srvn, sizeof(srvn));
	sent = gw_now_ms();
	gw_send(wb, "LOCK.ACQUIRE x %d WAIT %d", LEASE, 3 * LEASE);
	for (int i = 0; i < 3; i++) {
		gw_sleep_ms(LEASE);
		item_rvn("LOCK#x", now_rvn, sizeof(now_rvn));
		assert_string_equal(now_rvn, rvn);
		item_rvn(key, now_rvn, sizeof(now_rvn));
		assert_string_not_equal(now_rvn, srvn); /* a heartbeat since */
		snprintf(srvn, sizeof(srvn), "%s", now_rvn);
	}
	expect_timeout(wb, sent, 3 * LEASE, "B's waiter on A's live lock");
	expect_state(ca, "x", "gw-a", t, MINE, "replica");
	expect_state(cb, "x", "gw-a", t, OTHERS, "replica");

	/* released: the item names no session; B takes it at once */
	gw_expect_int(ca, 1, "LOCK.RELEASE x");
	cJSON *it = lock_item("x");
	assert_null(peek_str(it, "session"));
	cJSON_Delete(it);
	assert_int_equal(lh_acquire(cb, "x", LEASE), t + 1);
	expect_session_lock("x", "rb", t + 1, key, sizeof(key));
	redisFree(ca);
	redisFree(cb);
	redisFree(wb);
	assert_int_equal(gw_signal(&ga, SIGTERM), 0);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

/* ---- 2. the holder crashes ---- */

/* A is SIGKILLed holding k and restarted at once with the same replica id:
 * B's waiter takes k over a lease after A's session last beat, with a
 * higher token; the restarted A has a new session (another incarnation)
 * and does not keep k alive nor claim it. */
static void test_crash_takeover(void **state)
{
	struct gw ga, gb, ga2;
	char old[128], key[128];
	struct peek_seen seen;
	new_table(state);
	start_two(&ga, &gb);
	redisContext *ca = gw_connect(&ga), *wb = gw_connect(&gb);
	long long t = lh_acquire(ca, "k", LEASE);
	expect_session_lock("k", "ra", t, old, sizeof(old));
	gw_send(wb, "LOCK.ACQUIRE k %d WAIT 0", LEASE);
	gw_expect_no_reply(wb, POLL, "B's waiter while A beats");
	peek_watch(&peek, old);
	await_beat();
	long long killed = gw_now_ms();
	assert_int_equal(gw_signal(&ga, SIGKILL), 128 + SIGKILL);
	redisFree(ca);
	start_gw(&ga2, "gw-a", "replica", "ra");

	long long got = grant_within(wb, LEASE + 2 * POLL + SLACK_MS, "the takeover");
	long long granted = gw_now_ms();
	peek_watched(&peek, &seen);
	expect_takeover_time(killed, &seen, granted, "SIGKILL takeover");
	assert_true(got > t);
	expect_session_lock("k", "rb", got, key, sizeof(key));

	/* the restarted A: a new incarnation of ra, which holds nothing */
	cJSON *sess = peek_sessions(&peek, "ra");
	assert_int_equal(cJSON_GetArraySize(sess), 2);
	const char *s0 = cJSON_GetArrayItem(sess, 0)->valuestring;
	const char *s1 = cJSON_GetArrayItem(sess, 1)->valuestring;
	assert_true(strcmp(s0, old) == 0 || strcmp(s1, old) == 0);
	cJSON_Delete(sess);
	redisContext *ca2 = gw_connect(&ga2), *cb = gw_connect(&gb);
	expect_state(ca2, "k", "gw-b", got, OTHERS, "replica");
	gw_expect_nil(ca2, "LOCK.ACQUIRE k %d", LEASE);
	gw_sleep_ms(LEASE); /* the old session is not revived: k stays B's */
	expect_state(cb, "k", "gw-b", got, THIS_REPLICA, "replica");
	expect_session_lock("k", "rb", got, key, sizeof(key));
	cJSON *o = peek_item(&peek, old);
	printf("# the crashed session: %s\n",
	       peek_str(o, "dead") != NULL ? "marked dead" : "not marked dead");
	cJSON_Delete(o);
	redisFree(ca2);
	redisFree(cb);
	redisFree(wb);
	assert_int_equal(gw_signal(&ga2, SIGTERM), 0);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

/* ---- 3. mixed modes: the rollout ---- */

/* A in replica mode, B in lease mode (the default) on one table: each
 * waits out the other's live lock (its WAIT times out), takes the other's
 * lock once released, and B takes over A's locks after A crashes. */
static void test_mixed_modes(void **state)
{
	struct gw ga, gb;
	char key[128];
	new_table(state);
	peek_open(&peek, table);
	start_gw(&ga, "gw-a", "replica", "ra");
	start_gw(&gb, "gw-b", "lease", "rb");
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb);
	redisContext *wa = gw_connect(&ga), *wb = gw_connect(&gb), *wb2 = gw_connect(&gb);
	long long t1 = lh_acquire(ca, "m1", LEASE), t2 = lh_acquire(cb, "m2", LEASE);
	expect_session_lock("m1", "ra", t1, key, sizeof(key));
	expect_lease_lock("m2", t2);
	expect_state(cb, "m1", "gw-a", t1, OTHERS, "replica");
	expect_state(ca, "m2", "gw-b", t2, OTHERS, "lease");

	/* neither takes a live lock over: both waits (over two leases) time out */
	long long sent = gw_now_ms();
	gw_send(wa, "LOCK.ACQUIRE m2 %d WAIT %d", LEASE, 2 * LEASE + POLL);
	gw_send(wb, "LOCK.ACQUIRE m1 %d WAIT %d", LEASE, 2 * LEASE + POLL);
	expect_timeout(wa, sent, 2 * LEASE + POLL, "A (replica) waiting on B's per-lease lock");
	expect_timeout(wb, sent, 2 * LEASE + POLL, "B (lease) waiting on A's session lock");
	expect_state(ca, "m1", "gw-a", t1, MINE, "replica");
	expect_state(cb, "m2", "gw-b", t2, MINE, "lease");

	/* B releases m2: A's waiter takes it, in session mode */
	gw_send(wa, "LOCK.ACQUIRE m2 %d WAIT 0", LEASE);
	gw_expect_no_reply(wa, 200, "A's waiter before B's release");
	gw_expect_int(cb, 1, "LOCK.RELEASE m2");
	assert_int_equal(grant_within(wa, POLL + SLACK_MS, "A's waiter on m2"), t2 + 1);
	expect_session_lock("m2", "ra", t2 + 1, key, sizeof(key));

	/* A crashes: B (lease mode) takes both over, per lease */
	struct peek_seen seen;
	peek_watch(&peek, key);
	gw_send(wb, "LOCK.ACQUIRE m1 %d WAIT 0", LEASE);
	gw_send(wb2, "LOCK.ACQUIRE m2 %d WAIT 0", LEASE);
	gw_expect_no_reply(wb, POLL, "B's waiter while A beats");
	await_beat();
	long long killed = gw_now_ms();
	assert_int_equal(gw_signal(&ga, SIGKILL), 128 + SIGKILL);
	assert_int_equal(grant_within(wb, LEASE + 2 * POLL + SLACK_MS, "m1's takeover"), t1 + 1);
	long long granted = gw_now_ms();
	peek_watched(&peek, &seen);
	expect_takeover_time(killed, &seen, granted, "mixed: SIGKILL takeover");
	assert_int_equal(grant_within(wb2, 2 * POLL + SLACK_MS, "m2's takeover"), t2 + 2);
	expect_lease_lock("m1", t1 + 1);
	expect_lease_lock("m2", t2 + 2);
	expect_state(cb, "m1", "gw-b", t1 + 1, THIS_REPLICA, "lease");
	redisFree(ca);
	redisFree(wa);
	redisFree(cb);
	redisFree(wb);
	redisFree(wb2);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

/* ---- 4. endings from outside ---- */

/* A RESP3 connection to g, its replies rendered as rawresp.h says. */
static struct raw *r3_open(const struct gw *g)
{
	struct raw *r = raw_open(g->port);
	raw_send(r, "HELLO 3");
	assert_non_null(strstr(raw_reply(r, 5000), "\"proto\": :3"));
	return r;
}

/* Waits up to ms until LOCK.LIST on c (its replica's leases) no longer
 * shows name. */
static void await_unlisted(redisContext *c, const char *name, int ms)
{
	long long end = gw_now_ms() + ms;
	for (;;) {
		redisReply *r = gw_cmd(c, "LOCK.LIST MATCH %s", name);
		assert_int_equal(r->type, REDIS_REPLY_ARRAY);
		size_t n = r->elements;
		freeReplyObject(r);
		if (n == 0)
			return;
		if (gw_now_ms() > end)
			fail_msg("%s still listed after %d ms", name, ms);
		gw_sleep_ms(50);
	}
}

/* On B, LOCK.FORCE-RELEASE of e1 and a release by (name, token) of e2, two
 * of the locks A's session holds: A's client is told at its next command
 * (and a RESP3 client is pushed the forced loss), a third client takes each
 * at once, and A's session still holds the others (e3 on the same
 * connection, e4 on another) past a lease while B's waiter times out. */
static void test_endings_from_outside(void **state)
{
	struct gw ga, gb;
	char want[128], key[128];
	new_table(state);
	start_two(&ga, &gb);
	struct raw *ha = r3_open(&ga);
	redisContext *ca = gw_connect(&ga), *cb = gw_connect(&gb), *c3 = gw_connect(&ga);
	long long t1 = raw_int(ha, "LOCK.ACQUIRE e1 1500");
	long long t2 = raw_int(ha, "LOCK.ACQUIRE e2 1500");
	long long t3 = raw_int(ha, "LOCK.ACQUIRE e3 1500");
	long long t4 = lh_acquire(ca, "e4", LEASE);
	expect_session_lock("e1", "ra", t1, key, sizeof(key));

	/* e2 released by token on B; e1 forced: A learns of both from the
	 * revocations they wrote, read at its session's next heartbeat */
	gw_expect_int(cb, 1, "LOCK.RELEASE e2 %lld", t2);
	long long t0 = gw_now_ms();
	gw_expect_int(cb, 1, "LOCK.FORCE-RELEASE e1");
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"e1\", :%lld, \"forced\"]", t1);
	assert_string_equal(raw_reply(ha, POLL + SLACK_MS), want);
	printf("# A's holder pushed B's forced release after %lld ms\n", gw_now_ms() - t0);
	raw_expect(ha, "LOCK.RENEW e1", "-LOST forced");
	raw_expect(ha, "LOCK.RENEW e1", ":0"); /* told once */
	assert_int_equal(lh_acquire(c3, "e1", LEASE), t1 + 1);
	/* e2: released, not lost (no push): A's session has no such lease */
	await_unlisted(ca, "e2", POLL + SLACK_MS);
	raw_expect(ha, "LOCK.RELEASE e2", ":0");
	assert_int_equal(lh_acquire(c3, "e2", LEASE), t2 + 1);

	/* A's session keeps e3 and e4 */
	cJSON *s = peek_item(&peek, key);
	printf("# A's session after two endings: revSeq %lld\n", peek_num(s, "revSeq"));
	assert_int_equal(peek_num(s, "revSeq"), 2);
	cJSON_Delete(s);
	long long sent = gw_now_ms();
	gw_send(cb, "LOCK.ACQUIRE e3 %d WAIT %d", LEASE, LEASE + POLL);
	expect_timeout(cb, sent, LEASE + POLL, "B's waiter on e3");
	assert_true(raw_quiet(ha, 0)); /* no loss pushed */
	expect_session_lock("e3", "ra", t3, key, sizeof(key));
	expect_session_lock("e4", "ra", t4, key, sizeof(key));
	expect_state(ca, "e4", "gw-a", t4, MINE, "replica");
	expect_state(cb, "e3", "gw-a", t3, OTHERS, "replica");
	raw_expect(ha, "LOCK.RENEW e3", ":1");
	raw_expect(ha, "LOCK.RELEASE e3", ":1");
	gw_expect_int(ca, 1, "LOCK.RELEASE e4");
	assert_true(raw_quiet(ha, 100));
	raw_close(ha);
	redisFree(ca);
	redisFree(cb);
	redisFree(c3);
	assert_int_equal(gw_signal(&ga, SIGTERM), 0);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

/* ---- 5. a paused replica ---- */

/* The reason of a rendered loss push for (name, token), or NULL when the
 * reply is not one. */
static const char *lost_reason(const char *reply, const char *name, long long token)
{
	char head[128];
	snprintf(head, sizeof(head), ">[\"lock.lost\", \"%s\", :%lld, \"", name, token);
	return strncmp(reply, head, strlen(head)) == 0 ? reply + strlen(head) : NULL;
}

/* A is SIGSTOPped past its lease holding s: B takes it over; continued, A's
 * client is pushed the loss (expired: its own clock ran out; or session:
 * its session was marked dead) and its next command about s answers it;
 * A writes nothing over B's lock (the item and both replicas' LOCK.STATE
 * still show B's token a lease later), and A's next lock is held in a
 * session of its own again. */
static void test_paused_replica(void **state)
{
	struct gw ga, gb;
	char key[128], akey[128], owner[128], cmd[64];
	struct peek_seen seen;
	new_table(state);
	start_two(&ga, &gb);
	struct raw *ha = r3_open(&ga);
	redisContext *wb = gw_connect(&gb), *cb = gw_connect(&gb);
	long long t = raw_int(ha, "LOCK.ACQUIRE s 1500");
	expect_session_lock("s", "ra", t, akey, sizeof(akey));
	gw_send(wb, "LOCK.ACQUIRE s %d WAIT 0", LEASE);
	peek_watch(&peek, akey);
	gw_expect_no_reply(wb, POLL + 100, "B's waiter while A beats");
	await_beat();
	long long stopped = gw_now_ms();
	assert_int_equal(gw_signal(&ga, SIGSTOP), 0);
	long long got = grant_within(wb, LEASE + 2 * POLL + SLACK_MS, "the takeover");
	long long granted = gw_now_ms();
	peek_watched(&peek, &seen);
	expect_takeover_time(stopped, &seen, granted, "SIGSTOP takeover");
	assert_true(got > t);
	expect_session_lock("s", "rb", got, key, sizeof(key));
	cJSON *it = lock_item("s");
	snprintf(owner, sizeof(owner), "%s", peek_str(it, "owner"));
	cJSON_Delete(it);

	assert_int_equal(gw_signal(&ga, SIGCONT), 0);
	const char *reply = raw_reply(ha, 5000);
	const char *why = lost_reason(reply, "s", t);
	if (why == NULL)
		fail_msg("A's client: wanted a loss of s, got %s", reply);
	char reason[32];
	snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(why, "\""), why);
	printf("# A's client told of the loss: %s\n", reason);
	assert_true(strcmp(reason, "expired") == 0 || strcmp(reason, "session") == 0);
	snprintf(cmd, sizeof(cmd), "-LOST %s", reason);
	raw_expect(ha, "LOCK.RENEW s", cmd);
	raw_expect(ha, "LOCK.RENEW s", ":0");

	/* A a lease later: nothing written over B's lock */
	gw_sleep_ms(LEASE);
	expect_state(cb, "s", "gw-b", got, THIS_REPLICA, "replica");
	redisContext *ca = gw_connect(&ga);
	expect_state(ca, "s", "gw-b", got, OTHERS, "replica");
	it = lock_item("s");
	assert_string_equal(peek_str(it, "owner"), owner);
	assert_int_equal(peek_num(it, "fence"), got);
	cJSON_Delete(it);
	long long t2 = lh_acquire(ca, "s2", LEASE);
	expect_session_lock("s2", "ra", t2, key, sizeof(key));
	printf("# A's next lock: %s session\n", strcmp(key, akey) == 0 ? "the same" : "a new");
	gw_expect_int(ca, 1, "LOCK.RELEASE s2");
	assert_true(raw_quiet(ha, 100));
	raw_close(ha);
	redisFree(ca);
	redisFree(cb);
	redisFree(wb);
	assert_int_equal(gw_signal(&ga, SIGTERM), 0);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

/* A hand-off granted in a session already marked dead (a waiter of B
 * killed it while A's beats were late in the network; here the table's
 * reader makes B's KILL, just after a beat landed, so that A learns of it
 * only at its next beat): c1 releases y on A and A hands it to c2 with a
 * write of its own. The next beat is refused and c2 is told the loss
 * ("session"), but c2 may have believed it held y until a lease after that
 * write was sent: A keeps y's item that long, so c3, waiting on A behind
 * c2, is granted no earlier, on a new session of A (make stress, mixed,
 * seed 396990: A released the item at once and granted the next waiter
 * 130 ms after the loss). */
static void test_handoff_in_a_dead_session(void **state)
{
	struct gw ga, gb;
	char akey[128], key[128];
	new_table(state);
	start_two(&ga, &gb);
	redisContext *c1 = gw_connect(&ga), *c3 = gw_connect(&ga), *cb = gw_connect(&gb);
	struct raw *h2 = r3_open(&ga);
	long long t1 = lh_acquire(c1, "y", LEASE);
	expect_session_lock("y", "ra", t1, akey, sizeof(akey));
	raw_send(h2, "LOCK.ACQUIRE y 1500 WAIT 0");
	gw_sleep_ms(100); /* c2 queued first */
	gw_send(c3, "LOCK.ACQUIRE y %d WAIT 0", LEASE);
	gw_sleep_ms(100);
	peek_watch(&peek, akey);
	await_beat();
	assert_true(peek_kill(&peek, akey, "waiter-of-b"));
	long long handed = gw_now_ms();
	gw_expect_int(c1, 1, "LOCK.RELEASE y");
	long long t2 = raw_int_of(raw_reply(h2, 2000));
	assert_true(t2 > t1);
	long long granted2 = gw_now_ms();
	expect_session_lock("y", "ra", t2, key, sizeof(key));
	assert_string_equal(key, akey); /* handed off in the dead session */
	const char *reply = raw_reply(h2, LEASE + SLACK_MS);
	const char *why = lost_reason(reply, "y", t2);
	if (why == NULL || strncmp(why, "session\"", 8) != 0)
		fail_msg("c2: wanted the loss of y (session), got %s", reply);
	long long lost = gw_now_ms();
	long long t3 = grant_within(c3, LEASE + 2 * POLL + SLACK_MS, "c3 after c2's loss");
	long long granted3 = gw_now_ms();
	printf("# hand-off granted %lld ms after the release was sent; lost %lld ms after; "
	       "c3 granted %lld ms after the release, %lld ms after the loss (lease %d)\n",
	       granted2 - handed, lost - handed, granted3 - handed, granted3 - lost, LEASE);
	assert_true(granted3 - handed >= LEASE - CLOCK_GRAIN_MS);
	assert_true(t3 > t2);
	expect_session_lock("y", "ra", t3, key, sizeof(key));
	assert_string_not_equal(key, akey); /* a new session of A */
	expect_state(cb, "y", "gw-a", t3, OTHERS, "replica");
	raw_close(h2);
	redisFree(c1);
	redisFree(c3);
	redisFree(cb);
	assert_int_equal(gw_signal(&ga, SIGTERM), 0);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

/* ---- 6. leader election ---- */

/* A leads L (its term a member of A's session); a follower campaigning on
 * B leads after A is killed, a lease after A's session last beat, with a
 * higher token, and LEADER.WATCH on B says so. */
static void test_leader_takeover(void **state)
{
	struct gw ga, gb;
	char key[128];
	struct peek_seen seen;
	new_table(state);
	start_two(&ga, &gb);
	redisContext *ca = gw_connect(&ga), *fb = gw_connect(&gb), *cb = gw_connect(&gb);
	redisReply *r = gw_cmd(ca, "LEADER.CAMPAIGN L %d", LEASE);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	long long t = r->integer;
	freeReplyObject(r);
	expect_session_lock("L", "ra", t, key, sizeof(key));
	gw_send(fb, "LEADER.CAMPAIGN L %d WAIT 0", LEASE);
	peek_watch(&peek, key);
	gw_expect_no_reply(fb, POLL + 100, "B's follower while A leads");
	r = gw_cmd(cb, "LEADER.WATCH L");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->elements, 6);
	assert_string_equal(r->element[1]->str, "gw-a");
	assert_int_equal(r->element[3]->integer, t);
	freeReplyObject(r);
	await_beat();

	long long killed = gw_now_ms();
	assert_int_equal(gw_signal(&ga, SIGKILL), 128 + SIGKILL);
	long long got = grant_within(fb, LEASE + 2 * POLL + SLACK_MS, "B's campaign");
	long long granted = gw_now_ms();
	peek_watched(&peek, &seen);
	expect_takeover_time(killed, &seen, granted, "leader after SIGKILL");
	assert_true(got > t);
	expect_session_lock("L", "rb", got, key, sizeof(key));
	r = gw_cmd(cb, "LEADER.WATCH L");
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_string_equal(r->element[1]->str, "gw-b");
	assert_int_equal(r->element[3]->integer, got);
	freeReplyObject(r);
	redisFree(ca);
	redisFree(fb);
	redisFree(cb);
	assert_int_equal(gw_signal(&gb, SIGTERM), 0);
}

#define T(f, schema) cmocka_unit_test_prestate_setup_teardown(f, NULL, teardown, (void *)&schema)

/* ---- 7. an item another tool deleted ---- */

/* gw-a sweeps every second: a held lock whose item another tool deleted
 * is found by the sweep within two periods and lost as "deleted" (pushed
 * to its holder), the other lock held is kept, and INFO leases counts the
 * sweep's reads and the loss. Without the sweep nothing would tell: the
 * session keeps beating. */
static void test_sweep_finds_a_deleted_item(void **state)
{
	struct gw ga;
	char want[128];
	new_table(state);
	peek_open(&peek, table);
	gw_start(&ga, table, "--holder-label", "gw-a", "--heartbeat", "replica", "--replica-id",
		 "ra", "--heartbeat-sweep", "1s", schema->pk != NULL ? "--partition-key" : NULL,
		 schema->pk, "--sort-key", schema->sk, NULL);
	struct raw *ha = r3_open(&ga);
	redisContext *ca = gw_connect(&ga);
	long long t1 = raw_int(ha, "LOCK.ACQUIRE d1 1500");
	long long t2 = raw_int(ha, "LOCK.ACQUIRE d2 1500");
	peek_delete(&peek, "LOCK#d1");
	long long t0 = gw_now_ms();
	snprintf(want, sizeof(want), ">[\"lock.lost\", \"d1\", :%lld, \"deleted\"]", t1);
	assert_string_equal(raw_reply(ha, 2000 + SLACK_MS), want);
	printf("# the sweep found the deleted item after %lld ms\n", gw_now_ms() - t0);
	raw_expect(ha, "LOCK.RENEW d1", "-LOST deleted");
	raw_expect(ha, "LOCK.RENEW d2", ":1"); /* the other is kept */
	expect_session_lock("d2", "ra", t2, want, sizeof(want));
	redisReply *r = redisCommand(ca, "INFO leases");
	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	printf("# INFO leases: %s\n", strstr(r->str, "sweep_periods"));
	assert_non_null(strstr(r->str, "sweep_losses:1\r\n"));
	assert_null(strstr(r->str, "sweep_items:0\r\n"));
	assert_null(strstr(r->str, "sweep_periods:0\r\n"));
	assert_non_null(strstr(r->str, "sweep_reads_failed:0\r\n"));
	freeReplyObject(r);
	redisFree(ca);
	assert_int_equal(gw_signal(&ga, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_held_by_session, pk_only),
		T(test_crash_takeover, pk_only),
		T(test_mixed_modes, pk_only),
		T(test_endings_from_outside, pk_only),
		T(test_paused_replica, pk_only),
		T(test_handoff_in_a_dead_session, pk_only),
		T(test_leader_takeover, pk_only),
		T(test_held_by_session, with_sk),
		T(test_crash_takeover, with_sk),
		T(test_mixed_modes, with_sk),
		T(test_endings_from_outside, with_sk),
		T(test_sweep_finds_a_deleted_item, pk_only),
		T(test_sweep_finds_a_deleted_item, with_sk),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("moto: two gateways with --heartbeat replica", tests,
					   NULL, NULL) != 0;
}
