/*
 * test_lsess_replica: what the gateway shows of locks held in session mode
 * (`--heartbeat replica`, docs/design/replica-heartbeat.md, "What else must
 * hold in this mode"), on the embedded store and the fake clock: no test
 * sleeps. The lease service runs on a locktable in LT_HEARTBEAT_REPLICA
 * (the gateway's --heartbeat replica); another replica in the same mode and
 * one in per-lease mode hold locks beside it.
 *
 * - LOCK.STATE (rl_shape_state) and leasegate.state (its fill): the
 *   heartbeat field, and confirmed-ms-ago when this replica holds the lock
 *   in session mode — how long ago its session's last heartbeat answered
 *   in time was sent, on the fake clock to the millisecond.
 * - The loss `session` (the session marked dead by a waiter): the lease's
 *   next use answers -LOST with the gateway's words, the log line of
 *   event 40 says them too, and the counters see the refused heartbeat.
 * - /metrics' session gauges (metrics_session).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lt_session.h"
#include "core/store/store_memory.h"
#include "core/store/store_session.h"
#include "gateway/obs/events.h"
#include "gateway/obs/metrics.h"
#include "gateway/pg/pg_fn.h"
#include "gateway/pg/pg_int.h"
#include "gateway/redis/leases.h"
#include "tests/support/ls_fixture.h"

#define LEASE 3000 /* a beat every LEASE / 3 */

struct env {
	struct fx *f;
	struct lsvc *svc;
	struct lsess *s;
	struct lsf_lost_log lost;
};

static void on_lost(void *arg, enum ls_kind kind, const char *name, int64_t token,
		    enum lt_loss reason)
{
	struct lsf_lost_log *l = arg;
	l->n++;
	l->kind = kind;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->token = token;
	l->reason = reason;
}

static const struct ls_sess_ops ops = {.lost = on_lost};

/* A locktable in session mode as replica id (fx slot i), its session's
 * CREATE answered. */
static void replica_table(struct fx *f, int i, const char *id)
{
	struct lt_options o = {
		.holder_label = id, .heartbeat = LT_HEARTBEAT_REPLICA, .replica_id = id};
	f->lt[i] = lt_new(f->clock, f->store, &f->obs, &o);
	assert_non_null(f->lt[i]);
	fx_run(f);
	struct lt_session_view v;
	lt_session_view(lt_session_of(f->lt[i]), &v);
	assert_int_equal(v.state, LT_SESSION_LIVE);
}

/* lt[0] per lease (the fixture's), lt[1] in session mode "r1" with the
 * lease service and one client session on it. */
static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->f = fx_new(1, true);
	replica_table(e->f, 1, "r1");
	e->svc = lsvc_new(e->f->lt[1], &lsf_limits);
	assert_non_null(e->svc);
	e->s = lsess_new(e->svc, &ops, &e->lost);
	assert_non_null(e->s);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	lsess_free(e->s);
	fx_run(e->f);
	lsvc_free(e->svc);
	fx_free(e->f);
	free(e);
	return 0;
}

static int64_t take(struct env *e, const char *name)
{
	struct ls_acquire_req r = lsf_req_of(name, LEASE, -1);
	struct ls_result now;
	struct lsf_box b = {0};
	enum ls_status st = ls_acquire(e->s, &r, &now, lsf_got, &b);
	if (st == LS_OK)
		return now.token;
	assert_int_equal(st, LS_PENDING);
	fx_run(e->f);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.last.status, LS_OK);
	return b.last.token;
}

/* LOCK.STATE name as the lease layer answers it (the embedded store: at
 * once). */
static struct ls_result state_of(struct env *e, const char *name)
{
	struct ls_result now;
	struct lsf_box b = {0};
	enum ls_status st = ls_state(e->s, name, strlen(name), &now, lsf_got, &b);
	if (st == LS_PENDING) {
		fx_run(e->f);
		assert_int_equal(b.calls, 1);
		now = b.last;
	}
	assert_int_equal(now.status, LS_OK);
	return now;
}

/* The Redis reply to LOCK.STATE for res, NUL-terminated in out. */
static const char *redis_reply(const struct ls_result *res, enum resp_proto proto, struct buf *out)
{
	buf_init(out, 1 << 16);
	rl_shape_state(out, proto, res);
	buf_printf(out, "%c", '\0');
	assert_false(buf_failed(out));
	return out->buf;
}

static void expect_in(const char *text, const char *want)
{
	if (strstr(text, want) == NULL)
		fail_msg("no \"%s\" in \"%s\"", want, text);
}

/* leasegate.state's row for res: its 7 columns. */
static void pg_row(const struct ls_result *res, struct val *v)
{
	const struct pg_fn *fn = pg_fn_lookup("leasegate.state", 15, 1);
	assert_non_null(fn);
	assert_int_equal(fn->ncols, 7);
	assert_string_equal(fn->cols[5].name, "heartbeat");
	assert_string_equal(fn->cols[6].name, "confirmed_ms_ago");
	memset(v, 0, 7 * sizeof(*v));
	assert_true(fn->fill(NULL, 0, res, v));
}

/* Held here in session mode: heartbeat replica, and confirmed-ms-ago is
 * the time since the lease was last confirmed — its acquire's send (here
 * with the CREATE's) until the first BEAT (a third of the lease after the
 * lock was taken), then that BEAT's. */
static void held_here_says_when_its_session_was_confirmed(void **state)
{
	struct env *e = *state;
	take(e, "job");
	struct ls_result r = state_of(e, "job");
	assert_true(r.st.held && r.st.session && r.st.session_here && r.mine);
	assert_int_equal(r.st.confirmed_ago_ms, 0); /* the CREATE, sent now */
	fx_advance(e->f, 500);
	r = state_of(e, "job");
	assert_int_equal(r.st.confirmed_ago_ms, 500);
	fx_advance(e->f, LEASE / 3); /* the BEAT at LEASE / 3, answered at once */
	r = state_of(e, "job");
	assert_int_equal(r.st.confirmed_ago_ms, 500);

	struct buf out;
	const char *t = redis_reply(&r, RESP3, &out);
	assert_memory_equal(t, "%7\r\n", 4);
	expect_in(t, "$9\r\nheartbeat\r\n$7\r\nreplica\r\n$16\r\nconfirmed-ms-ago\r\n:500\r\n");
	buf_free(&out);
	t = redis_reply(&r, RESP2, &out);
	assert_memory_equal(t, "*14\r\n", 5);
	expect_in(t, "$16\r\nconfirmed-ms-ago\r\n:500\r\n");
	buf_free(&out);

	struct val v[7];
	pg_row(&r, v);
	assert_false(v[5].null);
	assert_string_equal(v[5].s, "replica");
	assert_int_equal(v[5].len, 7);
	assert_false(v[6].null);
	assert_int_equal(v[6].i, 500);
}

/* A lock taken in a session idle for long (its last heartbeat, the
 * CREATE, long before) is confirmed by its own write, as its end is
 * counted from it: confirmed-ms-ago runs from the acquire's send, then
 * from each heartbeat answered in time, and from an explicit renewal's
 * send. It never shows a lease held now as confirmed longer ago than its
 * lease. */
static void taken_in_an_idle_session_is_confirmed_by_its_write(void **state)
{
	struct env *e = *state;
	fx_advance(e->f, 10 * LEASE); /* idle: no BEAT after the CREATE */
	int64_t token = take(e, "job");
	struct ls_result r = state_of(e, "job");
	assert_true(r.st.session_here);
	assert_int_equal(r.st.confirmed_ago_ms, 0);
	fx_advance(e->f, 500);
	assert_int_equal(state_of(e, "job").st.confirmed_ago_ms, 500);
	fx_advance(e->f, LEASE / 3); /* the BEAT at LEASE / 3, answered at once */
	assert_int_equal(state_of(e, "job").st.confirmed_ago_ms, 500);

	fx_advance(e->f, 200);
	struct ls_result out;
	struct lsf_box bx = {0};
	if (ls_renew(e->s, "job", token, &out, lsf_got, &bx) == LS_PENDING) {
		fx_run(e->f);
		out = bx.last;
	}
	assert_int_equal(out.status, LS_OK);
	fx_advance(e->f, 100);
	assert_int_equal(state_of(e, "job").st.confirmed_ago_ms, 100);
}

/* Held by another replica in session mode: heartbeat replica, no
 * confirmed-ms-ago (this replica cannot know it); held per lease:
 * heartbeat lease; no item: null, and NULL columns. */
static void held_elsewhere_or_per_lease(void **state)
{
	struct env *e = *state;
	replica_table(e->f, 2, "r2");
	struct lease *other = fx_take(e->f, 2, "other", LEASE);
	struct lease *plain = fx_take(e->f, 0, "plain", LEASE);
	fx_advance(e->f, 700);

	struct ls_result r = state_of(e, "other");
	assert_true(r.st.held && r.st.session);
	assert_false(r.st.session_here);
	assert_false(r.mine);
	struct buf out;
	const char *t = redis_reply(&r, RESP3, &out);
	assert_memory_equal(t, "%6\r\n", 4);
	expect_in(t, "$9\r\nheartbeat\r\n$7\r\nreplica\r\n");
	assert_null(strstr(t, "confirmed-ms-ago"));
	buf_free(&out);
	struct val v[7];
	pg_row(&r, v);
	assert_string_equal(v[5].s, "replica");
	assert_true(v[6].null);

	r = state_of(e, "plain");
	assert_true(r.st.held);
	assert_false(r.st.session || r.st.session_here);
	t = redis_reply(&r, RESP2, &out);
	assert_memory_equal(t, "*12\r\n", 5);
	expect_in(t, "$9\r\nheartbeat\r\n$5\r\nlease\r\n");
	buf_free(&out);
	pg_row(&r, v);
	assert_string_equal(v[5].s, "lease");
	assert_true(v[6].null);

	r = state_of(e, "none");
	assert_false(r.st.exists);
	t = redis_reply(&r, RESP3, &out);
	assert_string_equal(t, "_\r\n");
	buf_free(&out);
	pg_row(&r, v);
	assert_true(v[5].null && v[6].null);

	lease_release(other);
	lease_release(plain);
	fx_run(e->f);
}

static void got_sess(void *arg, const struct store_session_result *res)
{
	*(enum store_status *)arg = res->status;
}

/* A waiter marks this replica's session dead (KILL on the rvn it
 * watched), as after missing its heartbeats. */
static void kill_session(struct env *e)
{
	struct lt_session_view v;
	lt_session_view(lt_session_of(e->f->lt[1]), &v);
	char replica[64], inc[64];
	assert_int_equal(sscanf(v.key, "SESSION#%63[^#]#%63s", replica, inc), 2);
	enum store_status st = STORE_FATAL;
	struct store_session_req req = {.op = STORE_SESSION_KILL,
					.replica = replica,
					.incarnation = inc,
					.seen_rvn = v.rvn,
					.by = "a-waiter"};
	assert_non_null(store_session_submit(e->f->store, &req, got_sess, &st));
	fx_run(e->f);
	assert_int_equal(st, STORE_OK);
}

#define SESSION_WORDS                                                                              \
	"session (this replica's heartbeat session was marked dead or deleted: every lease held "  \
	"in it is lost)"

/* The session marked dead: its next BEAT is refused, the lease is lost
 * (session), told in the gateway's words; the item still names the ended
 * session, which this replica no longer holds it by. */
static void session_marked_dead_is_told_in_words(void **state)
{
	struct env *e = *state;
	int64_t token = take(e, "job");
	kill_session(e);
	/* the lost lease's release (carried by the table, sent a lease after
	 * the loss: the latest its end may be) takes 100 ms */
	store_memory_set_op_latency(e->f->store, STORE_RELEASE, 100);
	fx_advance(e->f, LEASE / 3); /* the BEAT, refused */
	assert_int_equal(e->lost.n, 1);
	assert_int_equal(e->lost.reason, LT_SESSION);
	assert_int_equal(obs_get(&e->f->obs.session_answers, "refused"), 1);
	assert_int_equal(obs_get(&e->f->obs.losses, "session"), 1);

	/* the log line of event 40 */
	const struct fx_event *ev = fx_last(e->f, OBS_LEASE_LOST);
	assert_non_null(ev);
	assert_string_equal(ev->reason, "session");
	struct obs_event oe = {.id = OBS_LEASE_LOST, .lock = "job", .reason = ev->reason};
	struct event_line line;
	events_describe(&oe, NULL, &line);
	expect_in(line.msg, "lost its lease on job: this replica's heartbeat session was marked "
			    "dead or deleted");

	/* until that release lands, the item names the ended session: held,
	 * in session mode, but no longer by this replica */
	struct ls_result r = state_of(e, "job");
	assert_true(r.st.held && r.st.session);
	assert_false(r.st.session_here);
	assert_int_equal(r.st.confirmed_ago_ms, -1);
	fx_advance(e->f, LEASE + 99);
	assert_true(state_of(e, "job").st.held);
	fx_advance(e->f, 1);
	assert_false(state_of(e, "job").st.held);

	/* its next use: -LOST with the words */
	struct ls_result out;
	struct lsf_box bx = {0};
	if (ls_renew(e->s, "job", token, &out, lsf_got, &bx) == LS_PENDING) {
		fx_run(e->f);
		assert_int_equal(bx.calls, 1);
		out = bx.last;
	}
	assert_int_equal(out.status, LS_LOST);
	assert_int_equal(out.loss, LT_SESSION);
	assert_string_equal(out.message, SESSION_WORDS);
	struct buf b;
	buf_init(&b, 1 << 12);
	rl_render(&b, RESP3, &out, rl_shape_state);
	buf_printf(&b, "%c", '\0');
	assert_string_equal(b.buf, "-LOST " SESSION_WORDS "\r\n");
	buf_free(&b);
}

/* /metrics' session gauges from this replica's session: its members and
 * their lease lengths; nothing in per-lease mode. */
static void metrics_show_the_session(void **state)
{
	struct env *e = *state;
	take(e, "a");
	take(e, "b");
	struct ls_acquire_req r = lsf_req_of("c", 2 * LEASE, -1);
	struct ls_result now;
	struct lsf_box b = {0};
	if (ls_acquire(e->s, &r, &now, lsf_got, &b) == LS_PENDING)
		fx_run(e->f);
	struct metrics_src m = {0};
	metrics_session(&m, lt_session_of(e->f->lt[1]));
	assert_true(m.replica_session);
	assert_int_equal(m.session_members, 3);
	assert_int_equal(m.session_groups, 2);
	metrics_session(&m, lt_session_of(e->f->lt[0]));
	assert_false(m.replica_session);
	assert_int_equal(m.session_members, 0);
}

/* The words of every other reason are its name alone (their -LOST, which
 * clients match, is unchanged). */
static void other_reasons_keep_their_names(void **state)
{
	(void)state;
	for (int l = 0; l < LT_LOSS_COUNT; l++)
		if (l != LT_SESSION)
			assert_string_equal(ls_loss_text((enum lt_loss)l),
					    lt_loss_name((enum lt_loss)l));
	assert_string_equal(ls_loss_text(LT_SESSION), SESSION_WORDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(held_here_says_when_its_session_was_confirmed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(taken_in_an_idle_session_is_confirmed_by_its_write,
						setup, teardown),
		cmocka_unit_test_setup_teardown(held_elsewhere_or_per_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(session_marked_dead_is_told_in_words, setup,
						teardown),
		cmocka_unit_test_setup_teardown(metrics_show_the_session, setup, teardown),
		cmocka_unit_test(other_reasons_keep_their_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
