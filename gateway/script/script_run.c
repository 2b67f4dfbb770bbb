/*
 * script_run: an EVAL's attempts — read KEYS, run, commit, re-run on a
 * conflict (see script_run.h).
 */
#include "gateway/script/script_run.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/clock.h"
#include "core/locktable.h"
#include "core/store/store.h"
#include "core/store/store_kv.h"
#include "gateway/script/script_keys.h"

struct sr_engine {
	struct store *store;
	struct locktable *lt;
	struct clock *clock;
	struct sl_vm *vm;
	struct sr_config cfg;
	struct sr_stats stats;
};

enum job_state { J_READING, J_COMMITTING, J_PAUSED };

struct sr_job;
/* A read's context: the job and the key's index. */
struct read_ctx {
	struct sr_job *j;
	int i;
};

struct sr_job {
	struct sr_engine *e;
	enum job_state state;
	sr_done_fn done;
	void *arg;
	int attempt;
	int pending;			       /* reads not answered */
	struct store_call *calls[SK_KEYS_MAX]; /* reads in flight, or the commit in [0] */
	struct read_ctx ctx[SK_KEYS_MAX];
	/* nkeys of each, in the job's block: a job of one key does not
	 * allocate (and zero) room for SK_KEYS_MAX */
	struct lock_item *items;
	struct sk_key *keys;
	struct sk_space space;
	struct sv result;
	struct timer pause;
	bool failed; /* a read failed: the job answers that */
	struct sv read_err;
	char sha[SL_SHA_HEX + 1];
	sr_body_fn body;
	void *body_arg;
	bool ro;
	int nkeys, nargs;
	const char **keyv, **argv;
	size_t *key_lens, *arg_lens;
	/* then, in the same block: items, keys, keyv/argv, the lengths, and
	 * the keys and arguments, NUL-terminated each */
};

/* Where the block's arrays start after the struct. */
#define JOB_HEAD ((sizeof(struct sr_job) + 15) & ~(size_t)15)

struct sr_engine *sr_new(struct store *store, struct locktable *lt, struct clock *clock,
			 const struct sr_config *cfg)
{
	struct sr_engine *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->store = store;
	e->lt = lt;
	e->clock = clock;
	e->cfg = *cfg;
	if ((e->vm = sl_new(&cfg->limits)) == NULL) {
		free(e);
		return NULL;
	}
	return e;
}

void sr_free(struct sr_engine *e)
{
	if (e == NULL)
		return;
	sl_free(e->vm);
	free(e);
}

struct sl_vm *sr_vm(struct sr_engine *e)
{
	return e->vm;
}

void sr_stats(const struct sr_engine *e, struct sr_stats *out)
{
	*out = e->stats;
}

/* --- the end of a job --- */

static void job_free(struct sr_job *j)
{
	sk_space_free(&j->space);
	sv_clear(&j->result);
	sv_clear(&j->read_err);
	free(j);
}

/* The run committed: the keys it deleted are free for the waiters here. */
static void tell_freed(const struct sr_job *j)
{
	for (int i = 0; i < j->space.n; i++)
		if (j->space.keys[i].dirty && !j->space.keys[i].alive)
			lt_item_freed(j->e->lt, j->space.keys[i].name);
}

/* The run committed (or wrote nothing): its messages go out. */
static void publish_all(struct sr_job *j)
{
	const struct sr_config *c = &j->e->cfg;
	for (int i = 0; c->publish != NULL && i < j->space.npubs; i++) {
		const struct sk_pub *p = &j->space.pubs[i];
		c->publish(c->pub_arg, p->channel, p->channel_len, p->message, p->message_len);
	}
}

static void finish(struct sr_job *j, struct sv *reply)
{
	sr_done_fn done = j->done;
	void *arg = j->arg;
	struct sv r = *reply;
	*reply = (struct sv){.type = SV_NIL};
	job_free(j);
	done(arg, &r);
	sv_clear(&r);
}

static void finish_error(struct sr_job *j, const char *fmt, const char *detail)
{
	struct sv r = {.type = SV_NIL};
	sv_errorf(&r, fmt, detail);
	finish(j, &r);
}

/* --- an attempt --- */

static void read_all(struct sr_job *j);

static void pause_done(void *arg)
{
	read_all(arg);
}

/* A refused commit: run again on fresh reads after a random pause that
 * grows with the attempts (1..2^attempt ms), or give up. */
static void conflict(struct sr_job *j)
{
	j->e->stats.conflicts++;
	if (++j->attempt >= SR_ATTEMPTS) {
		j->e->stats.tryagain++;
		finish_error(j,
			     "TRYAGAIN the script's keys kept changing while it ran (%s): "
			     "nothing was written, run it again",
			     "5 attempts");
		return;
	}
	unsigned char rnd = 0;
	(void)RAND_bytes(&rnd, 1);
	int64_t ms = 1 + (int64_t)(rnd % (1u << j->attempt));
	j->state = J_PAUSED;
	timer_init(&j->pause, j->e->clock, pause_done, j);
	timer_arm(&j->pause, ms);
}

static void on_commit(void *arg, const struct store_kv_result *res)
{
	struct sr_job *j = arg;
	j->calls[0] = NULL;
	switch (res->status) {
	case STORE_OK:
		j->e->stats.commits++;
		tell_freed(j);
		publish_all(j);
		finish(j, &j->result);
		return;
	case STORE_REFUSED:
		sv_clear(&j->result);
		conflict(j);
		return;
	case STORE_TRANSIENT:
		finish_error(j, "TRYAGAIN the script's commit failed, nothing was written: %s",
			     res->message);
		return;
	default:
		finish_error(j, "ERR the script's commit failed: %s", res->message);
		return;
	}
}

static int64_t ttl_now(const struct sr_engine *e)
{
	if (e->cfg.ttl_retention_ms <= 0)
		return 0;
	return (clock_wall_ms(e->clock) + e->cfg.ttl_retention_ms) / 1000;
}

/* Runs the script on the keys read, then commits or answers. */
static void run(struct sr_job *j)
{
	struct sr_engine *e = j->e;
	int64_t now = clock_wall_ms(e->clock);
	sk_space_free(&j->space); /* an earlier attempt's messages */
	for (int i = 0; i < j->nkeys; i++) {
		int64_t left = lt_item_remaining_ms(e->lt, j->keyv[i], &j->items[i]);
		sk_key_init(&j->keys[i], j->keyv[i], &j->items[i], left, now);
	}
	j->space = (struct sk_space){.keys = j->keys,
				     .n = j->nkeys,
				     .now = now,
				     .ro = j->ro,
				     .min_ms = e->cfg.min_lease_ms,
				     .max_ms = e->cfg.max_lease_ms,
				     .subscribers = e->cfg.subscribers,
				     .sub_arg = e->cfg.pub_arg};
	struct sl_run r = {.sha = j->sha,
			   .nkeys = j->nkeys,
			   .nargs = j->nargs,
			   .keys = j->keyv,
			   .args = j->argv,
			   .key_lens = j->key_lens,
			   .arg_lens = j->arg_lens,
			   .ro = j->ro,
			   .call = sk_call,
			   .host = &j->space,
			   .now_ms = now};
	if (j->body != NULL)
		j->body(j->body_arg, &j->space, &j->result);
	else
		sl_exec(e->vm, &r, &j->result);
	if (j->result.type == SV_ERROR) { /* nothing commits */
		finish(j, &j->result);
		return;
	}
	struct sv unfinished = {.type = SV_NIL};
	if (!sk_finish(&j->space, &unfinished)) { /* a key left without expiry */
		finish(j, &unfinished);
		return;
	}
	struct store_kv_op ops[SK_KEYS_MAX];
	unsigned n = 0;
	sk_commit_ops(&j->space, clock_wall_ms(e->clock), ops, &n);
	if (n == 0) {
		publish_all(j);
		finish(j, &j->result);
		return;
	}
	struct store_kv_req req = {.n = n, .ops = ops, .ttl = ttl_now(e)};
	j->state = J_COMMITTING;
	if ((j->calls[0] = store_kv_commit(e->store, &req, on_commit, j)) == NULL)
		finish_error(j, "ERR the script's commit could not be sent: %s", "out of memory");
}

static void read_done(void *arg, const struct store_result *res)
{
	struct read_ctx *c = arg;
	struct sr_job *j = c->j;
	int i = c->i;
	j->calls[i] = NULL;
	if (res->status == STORE_OK) {
		j->items[i] = res->item;
	} else if (!j->failed) {
		j->failed = true;
		sv_errorf(&j->read_err, "%s reading key '%.64s' for a script: %s",
			  res->status == STORE_TRANSIENT ? "TRYAGAIN" : "ERR", j->keyv[i],
			  res->message);
	}
	if (--j->pending > 0)
		return;
	if (j->failed)
		finish(j, &j->read_err);
	else
		run(j);
}

static void read_all(struct sr_job *j)
{
	j->state = J_READING;
	j->pending = j->nkeys;
	if (j->nkeys == 0) { /* nothing to read: a script of ARGV alone */
		run(j);	     /* called from a timer or a callback, never sr_start */
		return;
	}
	j->failed = false;
	for (int i = 0; i < j->nkeys; i++) {
		struct store_req req = {.op = STORE_READ, .name = j->keyv[i]};
		j->ctx[i] = (struct read_ctx){.j = j, .i = i};
		j->calls[i] = store_submit(j->e->store, &req, read_done, &j->ctx[i]);
		if (j->calls[i] == NULL) { /* the reads sent answer later */
			if (!j->failed)
				sv_errorf(&j->read_err,
					  "ERR out of memory reading a script's keys");
			j->failed = true;
			j->pending = i; /* the reads sent; the last answer finishes */
			if (i == 0)
				finish(j, &j->read_err);
			return;
		}
	}
}

/* --- a job --- */

static void first_start(void *arg)
{
	read_all(arg);
}

struct sr_job *sr_start(struct sr_engine *e, const struct sr_req *req, sr_done_fn done, void *arg,
			struct sv *err)
{
	if (req->nkeys > SK_KEYS_MAX) {
		sv_errorf(err, "ERR a script of leasegate takes at most %d keys", SK_KEYS_MAX);
		return NULL;
	}
	size_t bytes =
		JOB_HEAD + (size_t)req->nkeys * (sizeof(struct lock_item) + sizeof(struct sk_key));
	int total = req->nkeys + req->nargs;
	bytes += (size_t)total * (sizeof(char *) + sizeof(size_t));
	for (int i = 0; i < req->nkeys; i++) {
		if (req->key_lens[i] == 0 || req->key_lens[i] > STORE_NAME_MAX ||
		    memchr(req->keys[i], '\0', req->key_lens[i]) != NULL) {
			sv_errorf(err, "ERR a key is 1 to %d bytes, no NUL", STORE_NAME_MAX);
			return NULL;
		}
		bytes += req->key_lens[i] + 1;
	}
	for (int i = 0; i < req->nargs; i++)
		bytes += req->arg_lens[i] + 1;
	struct sr_job *j = calloc(1, bytes);
	if (j == NULL) {
		sv_errorf(err, "ERR out of memory");
		return NULL;
	}
	*j = (struct sr_job){.e = e,
			     .done = done,
			     .arg = arg,
			     .ro = req->ro,
			     .body = req->body,
			     .body_arg = req->body_arg};
	snprintf(j->sha, sizeof(j->sha), "%s", req->sha != NULL ? req->sha : "");
	j->nkeys = req->nkeys;
	j->nargs = req->nargs;
	j->items = (struct lock_item *)(void *)((char *)j + JOB_HEAD);
	j->keys = (struct sk_key *)(void *)(j->items + req->nkeys);
	j->keyv = (const char **)(void *)(j->keys + req->nkeys);
	j->argv = j->keyv + req->nkeys;
	j->key_lens = (size_t *)(void *)(j->argv + req->nargs);
	j->arg_lens = j->key_lens + req->nkeys;
	char *at = (char *)(j->arg_lens + req->nargs);
	for (int i = 0; i < total; i++) {
		bool key = i < req->nkeys;
		const char *src = key ? req->keys[i] : req->args[i - req->nkeys];
		size_t n = key ? req->key_lens[i] : req->arg_lens[i - req->nkeys];
		memcpy(at, src, n);
		at[n] = '\0';
		if (key) {
			j->keyv[i] = at;
			j->key_lens[i] = n;
		} else {
			j->argv[i - req->nkeys] = at;
			j->arg_lens[i - req->nkeys] = n;
		}
		at += n + 1;
	}
	e->stats.jobs++;
	/* from the loop: done never runs inside sr_start */
	j->state = J_PAUSED;
	timer_init(&j->pause, e->clock, first_start, j);
	timer_arm(&j->pause, 0);
	return j;
}

void sr_cancel(struct sr_job *j)
{
	if (j == NULL)
		return;
	if (j->state == J_PAUSED && timer_armed(&j->pause))
		timer_cancel(&j->pause);
	for (int i = 0; i < SK_KEYS_MAX; i++)
		if (j->calls[i] != NULL)
			store_cancel(j->e->store, j->calls[i]);
	job_free(j);
}
