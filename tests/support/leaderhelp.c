/*
 * leaderhelp: see leaderhelp.h.
 */
#include "tests/support/leaderhelp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

const struct ldh_param ldh_embedded = {false};
const struct ldh_param ldh_moto = {true};

const struct ldh_param *ldh_setup_param(void **state)
{
	const struct ldh_param *p = *state;
	/* A missing emulator fails: a skip here was counted as a pass. */
	if (p->moto && !gw_have_moto())
		fail_msg("LG_MOTO is not set: the moto tests need tests/run-integration.sh");
	return p;
}

static void parse_leader(const redisReply *r, struct leader *out)
{
	memset(out, 0, sizeof(*out));
	if (r->type == REDIS_REPLY_NIL)
		return;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 6)
		fail_msg("LEADER.WATCH: wanted nil or 6 elements, got type %d (%s)", r->type,
			 r->str ? r->str : "");
	out->held = true;
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *k = r->element[i]->str;
		const redisReply *v = r->element[i + 1];
		if (strcmp(k, "holder") == 0 && v->type == REDIS_REPLY_STRING)
			snprintf(out->holder, sizeof(out->holder), "%s", v->str);
		else if (strcmp(k, "fencing-token") == 0)
			out->token = v->integer;
		else if (strcmp(k, "lease-ms") == 0)
			out->lease_ms = v->integer;
	}
}

void ldh_watch_now(redisContext *c, const char *name, struct leader *out)
{
	redisReply *r = gw_cmd(c, "LEADER.WATCH %s", name);
	parse_leader(r, out);
	freeReplyObject(r);
}

void ldh_watcher_start(struct watcher *w, const struct gw *g, const char *name)
{
	memset(w, 0, sizeof(*w));
	w->c = gw_connect(g);
	redisReply *r = gw_cmd(w->c, "LEADER.WATCH %s", name);
	parse_leader(r, &w->seen[0]);
	freeReplyObject(r);
	w->at[0] = gw_now_ms();
	w->after = w->seen[0].token;
	w->n = 1;
	gw_send(w->c, "LEADER.WATCH %s AFTER %lld", name, w->after);
}

bool ldh_watcher_pump(struct watcher *w, const char *name, int ms, long long until)
{
	long long end = gw_now_ms() + ms;
	for (;;) {
		long long left = end - gw_now_ms();
		redisReply *r = gw_reply_within(w->c, left > 0 ? (int)left : 0);
		if (r == NULL)
			return false;
		assert_true(w->n < 32);
		parse_leader(r, &w->seen[w->n]);
		freeReplyObject(r);
		w->at[w->n] = gw_now_ms();
		/* It answers only a change. */
		assert_true(w->seen[w->n].token != w->after);
		w->after = w->seen[w->n].token;
		w->n++;
		gw_send(w->c, "LEADER.WATCH %s AFTER %lld", name, w->after);
		if (until != 0 && w->after == until)
			return true;
	}
}

void ldh_watcher_check(const struct watcher *w, const long long *want, const char **holders, int n)
{
	int k = 0;
	for (int i = 0; i < w->n; i++) {
		printf("  watch %d: %s token %lld holder %s\n", i,
		       w->seen[i].held ? "leader" : "none", w->seen[i].token, w->seen[i].holder);
		if (!w->seen[i].held)
			continue;
		if (k >= n || w->seen[i].token != want[k])
			fail_msg("watch %d: token %lld, wanted %lld", i, w->seen[i].token,
				 k < n ? want[k] : -1);
		assert_string_equal(w->seen[i].holder, holders[k]);
		k++;
	}
	assert_int_equal(k, n);
}
