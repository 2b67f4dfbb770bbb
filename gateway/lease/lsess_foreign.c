/*
 * lsess_foreign: leases by what their item shows, wherever they are held
 * — (name, token) of a lease another replica holds or a detached one, a
 * Redis lock library's value, an operator's forced release (ls_foreign,
 * and the fallback of ls_renew and ls_release) — and the listings of
 * LOCK.LIST (lsvc_list, ls_scan). See lsess.h.
 */
#include "gateway/lease/lsess_int.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

bool ls_value_ok(const char *value, size_t len)
{
	if (value == NULL || len == 0 || len > LS_VALUE_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (value[i] < 0x21 || value[i] > 0x7e)
			return false;
	return true;
}

bool ls_by_value(const struct lt_state *st)
{
	return st->held && strncmp(st->owner, LS_VALUE_PREFIX, 2) == 0;
}

bool ls_detached(const struct lt_state *st)
{
	return ls_by_value(st) || (st->held && strncmp(st->owner, LS_ACQUIRED_PREFIX, 2) == 0);
}

const char *ls_owner_value(const struct lt_state *st)
{
	return ls_detached(st) ? st->owner + 2 : st->owner;
}

/* --- renew, release, force --- */

static void foreign_done(void *arg, int done, const struct lt_state *st, const struct lt_error *err)
{
	struct ls_op *op = arg;
	struct ls_result res;
	ls_res_init(&res, done > 0 ? LS_OK : LS_NONE);
	if (err != NULL) {
		ls_res_err(&res, err);
	} else {
		res.st = *st;
		res.detached = ls_detached(st);
		res.token = st->token;
	}
	if (done > 0 && op->token != 0) /* a release: watchers here read */
		ls_changed(op->svc, op->name);
	ls_op_finish(op, op->sess != NULL ? &res : NULL);
}

enum ls_status ls_foreign_start(struct lsess *s, const char *name, size_t len,
				const struct lt_foreign_req *fr, struct ls_result *now,
				ls_done_cb cb, void *arg)
{
	/* op->token marks a release (watchers are woken when it is done) */
	struct ls_op *op =
		ls_op_new(s->svc, s, cb, arg, name, len, fr->op != LT_FOREIGN_RENEW ? 1 : 0);
	if (op == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	struct lt_foreign_req r = *fr;
	r.name = op->name;
	if (!lt_foreign(s->svc->lt, &r, foreign_done, op)) {
		ls_op_finish(op, NULL);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	return now->status = LS_PENDING;
}

static const enum lt_foreign_op fx_ops[] = {
	[LS_FX_RENEW] = LT_FOREIGN_RENEW,
	[LS_FX_RELEASE] = LT_FOREIGN_RELEASE,
	[LS_FX_FORCE] = LT_FOREIGN_FORCE,
};

enum ls_status ls_foreign(struct lsess *s, const struct ls_foreign_req *req, struct ls_result *now,
			  ls_done_cb cb, void *arg)
{
	char name[STORE_NAME_MAX + 1];
	char owner[STORE_ID_MAX + 1];
	const struct ls_limits *lim = &s->svc->lim;
	ls_res_init(now, LS_OK);
	if (!ls_name_ok(s->svc, req->name, req->name_len, name, now))
		return now->status;
	if ((unsigned)req->op > LS_FX_FORCE || req->token < 0)
		return ls_res_msg(now, LS_INVALID, "bad request");
	/* without detached_only, the caller holds the force-release right,
	 * which waives a lease's secret (LOCK.ACQUIRE ... ADOPTABLE) */
	struct lt_foreign_req fr = {
		.op = fx_ops[req->op], .token = req->token, .secret_waived = !req->detached_only};
	if (req->value != NULL) {
		if (!ls_value_ok(req->value, req->value_len))
			return ls_res_msg(now, LS_INVALID,
					  "a lock value must be 1 to %d printable ASCII bytes",
					  LS_VALUE_MAX);
		memcpy(owner, LS_VALUE_PREFIX, 2);
		memcpy(owner + 2, req->value, req->value_len);
		owner[2 + req->value_len] = '\0';
		fr.owner = owner;
	}
	if (req->op == LS_FX_RENEW) {
		int64_t min = req->add_remaining ? 1 : LT_MIN_LEASE_MS;
		if (req->lease_ms != 0 &&
		    (req->lease_ms < min || req->lease_ms > lim->max_lease_ms))
			return ls_res_msg(now, LS_INVALID, "lease must be %lld ms to %lld ms",
					  (long long)min, (long long)lim->max_lease_ms);
		fr.lease_ms = req->lease_ms;
		fr.add_remaining = req->add_remaining && req->lease_ms > 0;
	}
	/* another session's lease is not this one's to end or stretch: only
	 * one taken by value (owner "d:...") matches, or the acquire s holds */
	int64_t mine = 0;
	if (req->detached_only && req->token == 0 && req->value == NULL) {
		if (ls_held(s, name, req->name_len, &mine, NULL))
			fr.token = mine;
		else
			fr.owner_prefix = LS_VALUE_PREFIX;
	}
	/* a lease of this replica's sessions by token: as the session would */
	if (req->token > 0 && req->value == NULL && req->op != LS_FX_FORCE &&
	    (req->op == LS_FX_RELEASE || req->lease_ms == 0))
		return req->op == LS_FX_RELEASE
			       ? ls_release(s, name, req->token, LS_SCOPE_SESSION, now, cb, arg)
			       : ls_renew(s, name, req->token, now, cb, arg);
	return ls_foreign_start(s, name, req->name_len, &fr, now, cb, arg);
}

/* --- listings --- */

void lsess_set_label(struct lsess *s, const char *proto, uint64_t id)
{
	s->proto = proto != NULL ? proto : "";
	s->id = id;
}

static const char *const rec_states[] = {
	[LS_REC_CAMPAIGNING] = "campaigning",
	[LS_REC_HELD] = "held",
	[LS_REC_LOST] = "lost",
};

static bool wanted(const char *pattern, const char *name)
{
	return pattern == NULL || fnmatch(pattern, name, 0) == 0;
}

/* Calls each for s's leases, terms and wait whose name matches pattern,
 * while n < max (0: no bound); returns the new n. */
static unsigned list_session(const struct lsess *s, const char *pattern, unsigned max, unsigned n,
			     void (*each)(void *arg, const struct ls_entry *e), void *arg)
{
	for (const struct ls_rec *rec = s->recs; rec != NULL; rec = rec->next) {
		if (!wanted(pattern, rec->name))
			continue;
		if (max != 0 && n == max)
			return n;
		bool lost = ls_rec_loss(rec) != LT_HELD && rec->state != LS_REC_CAMPAIGNING;
		struct ls_entry e = {
			.name = rec->name,
			.kind = rec->kind,
			.state = lost ? "lost" : rec_states[rec->state],
			.token = rec->token,
			.proto = s->proto,
			.id = s->id,
		};
		if (!lost && rec->state == LS_REC_HELD && rec->lease != NULL) {
			e.lease_ms = lease_duration_ms(rec->lease);
			e.holder = lease_holder(rec->lease);
		} else if (!lost && rec->state == LS_REC_HELD && rec->sh != NULL) {
			e.lease_ms = sh_lease_duration_ms(rec->sh);
			e.holder = sh_lease_holder(rec->sh);
		}
		each(arg, &e);
		n++;
	}
	const char *waits = s->wait_kind == LS_WAIT_ACQUIRE && s->acq != NULL ? lt_wait_name(s->acq)
			    : s->wait_kind == LS_WAIT_SHARED && s->sh_acq != NULL
				    ? sh_wait_name(s->sh_acq)
				    : NULL;
	if (waits != NULL && wanted(pattern, waits)) {
		if (max != 0 && n == max)
			return n;
		struct ls_entry e = {
			.name = waits,
			.kind = s->wait_kind == LS_WAIT_SHARED ? LS_KIND_SHARED : LS_KIND_LOCK,
			.state = "waiting",
			.proto = s->proto,
			.id = s->id,
		};
		each(arg, &e);
		n++;
	}
	return n;
}

unsigned lsvc_list(struct lsvc *svc, const char *pattern, unsigned max,
		   void (*each)(void *arg, const struct ls_entry *e), void *arg)
{
	unsigned n = 0;
	for (struct lsess *s = svc->all; s != NULL; s = s->all_next) {
		n = list_session(s, pattern, max, n, each, arg);
		if (max != 0 && n == max)
			return n;
	}
	return n;
}

unsigned lsess_list(const struct lsess *s, void (*each)(void *arg, const struct ls_entry *e),
		    void *arg)
{
	return list_session(s, NULL, 0, 0, each, arg);
}

/* A page being read for a session (its op keeps the session's place). */
struct ls_scan {
	struct ls_op *op;
	ls_scan_cb cb;
	void *arg;
	char pattern[];
};

static void page_read(void *arg, const struct lt_scan_entry *entries, unsigned count,
		      const char *next, const struct lt_error *err)
{
	struct ls_scan *sc = arg;
	struct ls_op *op = sc->op;
	if (op->sess != NULL) {
		struct ls_result res;
		ls_res_init(&res, LS_OK);
		struct lt_scan_entry *kept = NULL;
		unsigned n = 0;
		if (err != NULL) {
			ls_res_err(&res, err);
		} else if (sc->pattern[0] != '\0' && count > 0) {
			if ((kept = malloc(count * sizeof(*kept))) == NULL) {
				ls_res_msg(&res, LS_FAILED, "out of memory");
			} else {
				for (unsigned i = 0; i < count; i++)
					if (wanted(sc->pattern, entries[i].name))
						kept[n++] = entries[i];
				entries = kept;
				count = n;
			}
		}
		if (res.status == LS_OK)
			sc->cb(sc->arg, &res, entries, count, next);
		else
			sc->cb(sc->arg, &res, NULL, 0, "");
		free(kept);
	}
	ls_op_finish(op, NULL);
	free(sc);
}

enum ls_status ls_scan(struct lsess *s, const char *cursor, unsigned limit, const char *pattern,
		       struct ls_result *now, ls_scan_cb cb, void *arg)
{
	ls_res_init(now, LS_OK);
	if (limit == 0 || limit > STORE_SCAN_MAX)
		return ls_res_msg(now, LS_INVALID, "COUNT must be 1 to %d", STORE_SCAN_MAX);
	size_t clen = cursor != NULL ? strnlen(cursor, STORE_CURSOR_MAX + 1) : 0;
	bool cursor_ok = clen <= STORE_CURSOR_MAX;
	for (size_t i = 0; cursor_ok && i < clen; i++)
		cursor_ok = cursor[i] >= 0x20 && cursor[i] <= 0x7e;
	if (!cursor_ok)
		return ls_res_msg(now, LS_INVALID, "invalid cursor");
	size_t plen = pattern != NULL ? strlen(pattern) : 0;
	struct ls_scan *sc = malloc(sizeof(*sc) + plen + 1);
	if (sc == NULL)
		return ls_res_msg(now, LS_FAILED, "out of memory");
	memcpy(sc->pattern, pattern != NULL ? pattern : "", plen + 1);
	sc->cb = cb;
	sc->arg = arg;
	sc->op = ls_op_new(s->svc, s, NULL, NULL, "*", 1, 0);
	if (sc->op == NULL) {
		free(sc);
		return ls_res_msg(now, LS_FAILED, "out of memory");
	}
	if (lt_scan(s->svc->lt, cursor, limit, page_read, sc) == NULL) {
		ls_op_finish(sc->op, NULL);
		free(sc);
		/* the store could not read the cursor (or out of memory) */
		return ls_res_msg(now, LS_INVALID, "invalid cursor");
	}
	return now->status = LS_PENDING;
}
