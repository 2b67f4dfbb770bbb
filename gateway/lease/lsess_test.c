/*
 * lsess_test: the test mode's operations of a session (lsess.h, "test
 * mode"): the clock (through gateway/lease/testclock.h), the simulated other
 * holders and the wait for a refusal (core/lt_testing.h).
 *
 * A test wait (struct ls_test_wait) is the session's one wait while an
 * advance or a wait for a refusal is in progress; it is freed by whichever
 * ends it first: its answer, or ls_test_drop (cancel, close, shutdown).
 */
#include <stdlib.h>
#include <string.h>

#include "core/lt_testing.h"
#include "gateway/lease/lsess_int.h"
#include "gateway/lease/testclock.h"

struct ls_test_wait {
	struct lsess *s;
	struct tclock_adv *adv; /* an advance in progress, or NULL */
	bool refusal;		/* a wait for a refusal: hooked in the lock table */
	struct timer timeout;	/* the refusal's TIMEOUT, on the test clock */
	char name[];
};

static void refused(void *arg, int64_t value);
static void refusal_timed_out(void *arg);

void lsvc_set_test(struct lsvc *svc, struct tclock *tc)
{
	svc->tclock = tc;
}

bool lsvc_test_mode(const struct lsvc *svc)
{
	return svc->tclock != NULL;
}

/* LS_INVALID when svc has no test mode; else LS_OK. */
static enum ls_status need_test_mode(const struct lsvc *svc, struct ls_result *r)
{
	if (svc->tclock != NULL)
		return LS_OK;
	return ls_res_msg(r, LS_INVALID, "this needs leasegate --test-mode (docs/testing.md)");
}

static void clock_result(const struct lsvc *svc, struct ls_result *r)
{
	ls_res_init(r, LS_OK);
	r->clock_ms = tclock_now_ms(svc->tclock);
	r->wall_ms = tclock_wall_ms(svc->tclock);
}

enum ls_status ls_test_now(struct lsess *s, struct ls_result *now)
{
	if (need_test_mode(s->svc, now) != LS_OK)
		return LS_INVALID;
	clock_result(s->svc, now);
	return LS_OK;
}

/* --- the session's test wait --- */

static struct ls_test_wait *test_wait_new(struct lsess *s, const char *name, size_t len)
{
	struct ls_test_wait *w = calloc(1, sizeof(*w) + len + 1);
	if (w == NULL)
		return NULL;
	w->s = s;
	memcpy(w->name, name, len);
	timer_init(&w->timeout, s->svc->clock, refusal_timed_out, w);
	return w;
}

/* Unhooks and frees w, the wait of its session. */
static void test_wait_free(struct ls_test_wait *w)
{
	if (w->refusal)
		lt_wait_for_refusal_cancel(w->s->svc->lt, refused, w);
	timer_cancel(&w->timeout);
	tclock_cancel(w->adv);
	w->s->test = NULL;
	free(w);
}

/* Ends w's wait answering res (its fields but the status set by the
 * caller). */
static void test_wait_answer(struct ls_test_wait *w, struct ls_result *res)
{
	struct lsess *s = w->s;
	ls_done_cb cb;
	void *arg;
	w->adv = NULL; /* answered: nothing to take back */
	test_wait_free(w);
	ls_wait_end(s, &cb, &arg);
	cb(arg, res); /* last: it may free the session */
}

void ls_test_drop(struct lsess *s)
{
	if (s->test != NULL)
		test_wait_free(s->test);
}

const char *ls_test_wait_name(const struct lsess *s)
{
	return s->test != NULL && s->test->refusal ? s->test->name : NULL;
}

/* --- the clock --- */

static void advanced(void *arg, int64_t now_ms)
{
	struct ls_test_wait *w = arg;
	struct ls_result res;
	clock_result(w->s->svc, &res);
	test_wait_answer(w, &res);
}

enum ls_status ls_test_advance(struct lsess *s, int64_t ms, struct ls_result *now, ls_done_cb cb,
			       void *arg)
{
	if (need_test_mode(s->svc, now) != LS_OK)
		return LS_INVALID;
	if (ms < 0 || ms > TCLOCK_MAX_ADVANCE_MS)
		return ls_res_msg(now, LS_INVALID, "ms must be 0 to %lld (a year)",
				  (long long)TCLOCK_MAX_ADVANCE_MS);
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	struct ls_test_wait *w = test_wait_new(s, "", 0);
	int64_t at;
	if (w == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	switch (tclock_advance(s->svc->tclock, ms, advanced, w, &w->adv, &at)) {
	case TCLOCK_DONE:
		free(w);
		clock_result(s->svc, now);
		return LS_OK;
	case TCLOCK_PENDING:
		s->test = w;
		ls_wait_begin(s, LS_WAIT_TEST, cb, arg);
		return LS_PENDING;
	default:
		free(w);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
}

/* --- other holders --- */

static void simulated(void *arg, int64_t value)
{
	struct ls_op *op = arg;
	struct ls_result res;
	if (value >= 0) {
		ls_res_init(&res, LS_OK);
		res.token = value;
	} else if (value == LT_TEST_NO_ITEM) {
		ls_res_msg(&res, LS_NONE, "'%s' has no item: nothing to release", op->name);
	} else {
		ls_res_msg(&res, LS_FAILED, "the store failed to write '%s' (see the log)",
			   op->name);
	}
	ls_op_finish(op, &res);
}

/* The lease and label of a HOLDER, checked as an acquire's. */
static bool holder_ok(const struct ls_sim_req *req, const char *name, char *holder,
		      struct ls_result *r)
{
	char msg[LS_MSG_MAX];
	if (req->holder != NULL) {
		if (req->holder_len == 0 || req->holder_len > STORE_HOLDER_MAX ||
		    memchr(req->holder, 0, req->holder_len) != NULL) {
			ls_res_msg(r, LS_INVALID, "a holder label is 1 to %d characters",
				   STORE_HOLDER_MAX);
			return false;
		}
		memcpy(holder, req->holder, req->holder_len);
		holder[req->holder_len] = '\0';
	}
	struct lt_acquire_args a = {
		.name = name, .lease_ms = req->lease_ms, .holder = req->holder ? holder : NULL};
	if (!lt_args_valid(&a, msg, sizeof(msg))) {
		ls_res_msg(r, LS_INVALID, "%s", msg);
		return false;
	}
	return true;
}

enum ls_status ls_test_simulate(struct lsess *s, const struct ls_sim_req *req,
				struct ls_result *now, ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1], holder[STORE_HOLDER_MAX + 1];
	struct lsvc *svc = s->svc;
	if (need_test_mode(svc, now) != LS_OK)
		return LS_INVALID;
	if (!ls_name_ok(svc, req->name, req->name_len, name, now))
		return now->status;
	if (req->op == LS_SIM_HOLDER && !holder_ok(req, name, holder, now))
		return LS_INVALID;
	struct ls_op *op = ls_op_new(svc, s, cb, arg, name, req->name_len, 0);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	bool sent = req->op == LS_SIM_HOLDER
			    ? lt_simulate_holder(svc->lt, name, req->lease_ms,
						 req->holder ? holder : NULL, simulated, op)
		    : req->op == LS_SIM_RELEASE ? lt_simulate_release(svc->lt, name, simulated, op)
						: lt_simulate_delete(svc->lt, name, simulated, op);
	if (!sent) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return LS_PENDING;
}

/* --- the wait for a refusal --- */

static void refused(void *arg, int64_t value)
{
	struct ls_test_wait *w = arg;
	struct ls_result res;
	w->refusal = false; /* the lock table has dropped its hook */
	ls_res_init(&res, LS_OK);
	test_wait_answer(w, &res);
}

static void refusal_timed_out(void *arg)
{
	struct ls_test_wait *w = arg;
	struct ls_result res;
	ls_res_init(&res, LS_NONE);
	test_wait_answer(w, &res);
}

enum ls_status ls_test_wait_refusal(struct lsess *s, const char *name, size_t name_len,
				    int64_t timeout_ms, struct ls_result *now, ls_done_cb cb,
				    void *arg)
{
	char buf[STORE_NAME_MAX + 1];
	struct lsvc *svc = s->svc;
	if (need_test_mode(svc, now) != LS_OK)
		return LS_INVALID;
	if (!ls_name_ok(svc, name, name_len, buf, now))
		return now->status;
	if (timeout_ms < 0)
		return ls_res_msg(now, LS_INVALID, "TIMEOUT must not be negative (0: none)");
	if (s->wait_kind != LS_WAIT_NONE)
		return ls_res_msg(now, LS_INVALID, "this connection waits already");
	struct ls_test_wait *w = test_wait_new(s, buf, name_len);
	if (w == NULL || !lt_wait_for_refusal(svc->lt, buf, refused, w)) {
		free(w);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	w->refusal = true;
	if (timeout_ms > 0)
		timer_arm(&w->timeout, timeout_ms);
	s->test = w;
	ls_wait_begin(s, LS_WAIT_TEST, cb, arg);
	return LS_PENDING;
}
