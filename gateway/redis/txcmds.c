/*
 * redis/txcmds: MULTI, EXEC, DISCARD, WATCH and UNWATCH — Redis's
 * transactions over the lock keyspace, on the engine of scripts
 * (gateway/script/script_run.h): EXEC is one serializable transaction, as
 * a script is.
 *
 * Inside MULTI, dispatch (commands.c) hands every command but EXEC,
 * DISCARD, MULTI, WATCH, QUIT and RESET to tx_queue: a command of the
 * lock keyspace (script_keys.h: GET, SET, DEL, PEXPIRE, PTTL...) is kept
 * and answered QUEUED; anything else is refused there, naming it, and the
 * transaction is marked to abort, as are commands dispatch refused
 * (unknown, arity, ACL): EXEC then answers EXECABORT and runs nothing.
 *
 * WATCH reads its keys (a job of the engine whose body keeps what it
 * read). EXEC reads every key of its queue and of WATCH at once, and
 * within one attempt: a watched key that is not the version WATCH read
 * (script_keys.h sk_same: another write, on any replica, or an expiry)
 * answers a null array and runs nothing; else the queued commands run on
 * those reads, and their writes commit together with a condition on every
 * key read or watched. A refused commit runs the attempt again on fresh
 * reads (then a watched key that changed answers nil), as scripts do.
 *
 * Bounds: TX_QUEUE_MAX commands, TX_BYTES_MAX bytes of arguments, and
 * SK_KEYS_MAX distinct keys (watched ones included) per transaction.
 *
 * EXISTS, TYPE, MGET, MSET, MSETNX, PEXPIRETIME, EXPIRETIME, HSET, HGET,
 * HINCRBY, HEXISTS, HDEL, HLEN, HGETALL, INCR and GETRANGE outside MULTI
 * run the same way, each alone (rl_keyspace): its keys read, the command
 * run on them, several keys checked together at a commit (one snapshot,
 * as Redis answers); so do the forms of SET and PEXPIRE/EXPIRE that are
 * not a lock library's (compatcmds.c).
 *
 * Not here: the commands' semantics (script_keys.c), the commit
 * (core/store_kv.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"
#include "gateway/script/script_keys.h"
#include "gateway/script/script_run.h"

#define TX_QUEUE_MAX 1024
#define TX_BYTES_MAX (4u << 20)

/* A queued command: argv pointers into its own copy. */
struct tx_cmd {
	int argc;
	const char **argv;
	size_t *lens;
};

struct rl_tx {
	struct tx_cmd *q;
	size_t nq, cap, bytes;
	/* the distinct keys of the queue and of WATCH (names malloc'd) */
	char *keys[SK_KEYS_MAX];
	int nkeys;
	/* what WATCH read, by key: watch[i] for keys[widx[i]] (malloc'd,
	 * nwatch of wcap: an sk_key is a few KB, most transactions watch
	 * none or one) */
	struct sk_key *watch;
	int widx[SK_KEYS_MAX];
	int nwatch, wcap;
};

static void drop_queue(struct rl_tx *tx)
{
	for (size_t i = 0; i < tx->nq; i++)
		free(tx->q[i].argv);
	free(tx->q);
	tx->q = NULL;
	tx->nq = tx->cap = tx->bytes = 0;
}

void rl_tx_free(struct rl_tx *tx)
{
	if (tx == NULL)
		return;
	drop_queue(tx);
	for (int i = 0; i < tx->nkeys; i++)
		free(tx->keys[i]);
	free(tx->watch);
	free(tx);
}

/* The session's state, made on first use; NULL with the error written. */
static struct rl_tx *tx_of(struct cmd_call *c)
{
	struct rl_tx **slot = rl_tx_slot(c);
	if (slot == NULL)
		return NULL;
	if (*slot == NULL && (*slot = calloc(1, sizeof(**slot))) == NULL)
		resp_add_errorf(c->out, "ERR out of memory");
	return *slot;
}

/* The session's state taken away (the caller owns it now), or NULL. */
static struct rl_tx *tx_take(struct cmd_call *c)
{
	struct rl_tx **slot = rl_tx_slot(c);
	struct rl_tx *tx = slot != NULL ? *slot : NULL;
	if (slot != NULL)
		*slot = NULL;
	return tx;
}

/* The index of key name (len bytes) in tx->keys, or -1. */
static int key_index(const struct rl_tx *tx, const char *name, size_t len)
{
	for (int i = 0; i < tx->nkeys; i++)
		if (strlen(tx->keys[i]) == len && memcmp(tx->keys[i], name, len) == 0)
			return i;
	return -1;
}

/* Adds the keys argv[first], +step... argv[last] to tx->keys; false with the error
 * written (too many keys, a bad key, out of memory): tx->keys as before. */
static bool add_keys(struct cmd_call *c, struct rl_tx *tx, int first, int last, int step)
{
	int n0 = tx->nkeys;
	for (int i = first; first > 0 && i <= last; i += step) {
		const struct resp_arg *a = &c->argv[i];
		if (key_index(tx, a->p, a->len) >= 0)
			continue;
		const char *why = NULL;
		if (a->len == 0 || a->len > STORE_NAME_MAX || memchr(a->p, '\0', a->len) != NULL)
			why = "a key is 1 to 2000 bytes, no NUL";
		else if (tx->nkeys == SK_KEYS_MAX)
			why = "a transaction of leasegate uses at most 25 keys, watched ones "
			      "included";
		else if ((tx->keys[tx->nkeys] = strndup(a->p, a->len)) == NULL)
			why = "out of memory";
		if (why != NULL) {
			while (tx->nkeys > n0)
				free(tx->keys[--tx->nkeys]);
			resp_add_errorf(c->out, "ERR %s", why);
			return false;
		}
		tx->nkeys++;
	}
	return true;
}

/* --- queueing (dispatch's hook inside MULTI) --- */

static bool is_cmd(const struct resp_arg *a, const char *name)
{
	return a->len == strlen(name) && strncasecmp(a->p, name, a->len) == 0;
}

/* A copy of c's arguments, one malloc; false on out-of-memory. */
static bool copy_cmd(const struct cmd_call *c, struct tx_cmd *out, size_t *bytes)
{
	size_t n = (size_t)c->argc * (sizeof(char *) + sizeof(size_t));
	size_t text = 0;
	for (int i = 0; i < c->argc; i++)
		text += c->argv[i].len + 1;
	char *block = malloc(n + text);
	if (block == NULL)
		return false;
	out->argc = c->argc;
	out->argv = (const char **)(void *)block;
	out->lens = (size_t *)(void *)(block + (size_t)c->argc * sizeof(char *));
	char *at = block + n;
	for (int i = 0; i < c->argc; i++) {
		memcpy(at, c->argv[i].p, c->argv[i].len);
		at[c->argv[i].len] = '\0';
		out->argv[i] = at;
		out->lens[i] = c->argv[i].len;
		at += c->argv[i].len + 1;
	}
	*bytes = text;
	return true;
}

static void refuse(struct cmd_call *c)
{
	c->sess->multi_dirty = true;
}

static void tx_queue(struct cmd_call *c)
{
	struct rl_tx *tx = tx_of(c);
	if (tx == NULL) {
		refuse(c);
		return;
	}
	/* sk_cmd_keys reads the name and the count alone */
	const char *argv0[1] = {c->argv[0].p};
	size_t len0[1] = {c->argv[0].len};
	int first = 0, last = -1, step = 1;
	if (!is_cmd(&c->argv[0], "unwatch") &&
	    !sk_cmd_keys(c->argc, argv0, len0, &first, &last, &step)) {
		resp_add_errorf(
			c->out,
			"ERR leasegate's MULTI runs the commands of the lock keyspace (%s); "
			"'%.64s' is not one of them",
			sk_cmd_names(), c->def->name);
		refuse(c);
		return;
	}
	if (tx->nq == TX_QUEUE_MAX || tx->bytes > TX_BYTES_MAX) {
		resp_add_errorf(c->out,
				"ERR a transaction of leasegate queues at most %d commands of %u "
				"bytes",
				TX_QUEUE_MAX, TX_BYTES_MAX);
		refuse(c);
		return;
	}
	if (!add_keys(c, tx, first, last, step)) {
		refuse(c);
		return;
	}
	if (tx->nq == tx->cap) {
		size_t cap = tx->cap ? 2 * tx->cap : 8;
		struct tx_cmd *q = realloc(tx->q, cap * sizeof(*q));
		if (q == NULL) {
			resp_add_errorf(c->out, "ERR out of memory");
			refuse(c);
			return;
		}
		tx->q = q;
		tx->cap = cap;
	}
	size_t bytes = 0;
	if (!copy_cmd(c, &tx->q[tx->nq], &bytes)) {
		resp_add_errorf(c->out, "ERR out of memory");
		refuse(c);
		return;
	}
	tx->nq++;
	tx->bytes += bytes;
	resp_add_simple(c->out, "QUEUED", 6);
}

/* --- MULTI, DISCARD, UNWATCH --- */

static void c_multi(struct cmd_call *c)
{
	if (c->sess->multi) {
		resp_add_errorf(c->out, "ERR MULTI calls can not be nested");
		return;
	}
	c->sess->multi = true;
	c->sess->multi_dirty = false;
	resp_add_simple(c->out, "OK", 2);
}

static void c_discard(struct cmd_call *c)
{
	if (!c->sess->multi) {
		resp_add_errorf(c->out, "ERR DISCARD without MULTI");
		return;
	}
	c->sess->multi = c->sess->multi_dirty = false;
	rl_tx_free(tx_take(c)); /* DISCARD unwatches too */
	resp_add_simple(c->out, "OK", 2);
}

static void c_unwatch(struct cmd_call *c)
{
	/* outside MULTI (inside, it is queued): the state is the watches */
	rl_tx_free(tx_take(c));
	resp_add_simple(c->out, "OK", 2);
}

/* --- WATCH --- */

/* A WATCH in flight: its keys (copies: the job's own are gone when done
 * runs), what it read. */
struct watch_job {
	struct sess *sess;
	struct rl_app *app;
	int n;
	char *names[SK_KEYS_MAX];
	struct sk_key read[]; /* as many as names */
};

static void watch_job_free(struct watch_job *w)
{
	for (int i = 0; i < SK_KEYS_MAX; i++)
		free(w->names[i]);
	free(w);
}

static void watch_body(void *arg, struct sk_space *sp, struct sv *result)
{
	struct watch_job *w = arg;
	for (int i = 0; i < sp->n && i < SK_KEYS_MAX; i++) {
		w->read[i] = sp->keys[i];      /* untouched: nothing to commit */
		w->read[i].name = w->names[i]; /* the keys in the order given */
	}
	w->n = sp->n;
	sv_set_str(result, SV_STATUS, "OK", 2);
}

/* Keeps what a WATCH read in the session's state (its names copied). */
static void watch_keep(struct cmd_call *c, struct watch_job *w, struct rl_tx *tx)
{
	for (int i = 0; i < w->n; i++) {
		int k = key_index(tx, w->read[i].name, w->read[i].len);
		if (k < 0 && tx->nkeys < SK_KEYS_MAX &&
		    (tx->keys[tx->nkeys] = strdup(w->read[i].name)) != NULL)
			k = tx->nkeys++;
		if (k < 0)
			continue; /* out of memory: the key is not watched */
		int slot = tx->nwatch;
		for (int j = 0; j < tx->nwatch; j++)
			if (tx->widx[j] == k)
				slot = j; /* watched again by a client racing itself */
		if (slot == tx->wcap) {
			int cap = tx->wcap ? 2 * tx->wcap : 2;
			struct sk_key *wk = realloc(tx->watch, (size_t)cap * sizeof(*wk));
			if (wk == NULL)
				continue; /* out of memory: the key is not watched */
			tx->watch = wk;
			tx->wcap = cap;
		}
		tx->watch[slot] = w->read[i];
		tx->watch[slot].name = tx->keys[k];
		tx->widx[slot] = k;
		if (slot == tx->nwatch)
			tx->nwatch++;
	}
}

static void watch_done(void *arg, struct sv *result)
{
	struct watch_job *w = arg;
	struct sess *s = w->sess;
	if (!sess_closed(s)) {
		struct cmd_call c = {.sess = s, .out = sess_out(s), .arg = w->app};
		struct rl_tx *tx = result->type == SV_ERROR ? NULL : tx_of(&c);
		if (tx != NULL)
			watch_keep(&c, w, tx);
		rl_render_sv(sess_out(s), sess_proto(s), result);
	}
	watch_job_free(w);
	sess_resume(s);
	sess_unref(s);
}

static void c_watch(struct cmd_call *c)
{
	if (c->sess->multi) {
		resp_add_errorf(c->out, "ERR WATCH inside MULTI is not allowed");
		return;
	}
	struct rl_tx *tx = tx_of(c);
	struct sr_engine *e = tx != NULL ? rl_script_engine(c) : NULL;
	if (e == NULL)
		return;
	/* the keys not watched yet, once each; room for them all */
	const char *keys[SK_KEYS_MAX];
	size_t lens[SK_KEYS_MAX];
	int n = 0, room = SK_KEYS_MAX - tx->nkeys;
	for (int i = 1; i < c->argc; i++) {
		const struct resp_arg *a = &c->argv[i];
		bool dup = key_index(tx, a->p, a->len) >= 0;
		for (int j = 0; j < n && !dup; j++)
			dup = lens[j] == a->len && memcmp(keys[j], a->p, a->len) == 0;
		if (dup)
			continue;
		if (n == room) {
			resp_add_errorf(c->out, "ERR leasegate watches at most %d keys",
					SK_KEYS_MAX);
			return;
		}
		keys[n] = a->p;
		lens[n++] = a->len;
	}
	if (n == 0) {
		resp_add_simple(c->out, "OK", 2);
		return;
	}
	struct watch_job *w = calloc(1, sizeof(*w) + (size_t)n * sizeof(struct sk_key));
	if (w == NULL) {
		resp_add_errorf(c->out, "ERR out of memory");
		return;
	}
	*w = (struct watch_job){.sess = c->sess, .app = c->arg};
	for (int i = 0; i < n; i++)
		if ((w->names[i] = strndup(keys[i], lens[i])) == NULL) {
			resp_add_errorf(c->out, "ERR out of memory");
			watch_job_free(w);
			return;
		}
	struct sr_req req = {
		.body = watch_body, .body_arg = w, .nkeys = n, .keys = keys, .key_lens = lens};
	struct sv err = {.type = SV_NIL};
	if (sr_start(e, &req, watch_done, w, &err) == NULL) {
		rl_render_sv(c->out, c->proto, &err);
		sv_clear(&err);
		watch_job_free(w);
		return;
	}
	sess_ref(c->sess);
	sess_suspend(c->sess);
}

/* --- EXEC --- */

/* An EXEC in flight: the transaction (taken from the session) and, for
 * each watched key, its index among the job's keys. */
struct exec_job {
	struct sess *sess;
	struct rl_tx *tx;
};

/* The watched keys are as WATCH read them; then marks them read, so the
 * commit checks them. */
static bool watched_same(struct rl_tx *tx, struct sk_space *sp)
{
	for (int i = 0; i < tx->nwatch; i++)
		if (!sk_same(&tx->watch[i], &sp->keys[tx->widx[i]]))
			return false;
	for (int i = 0; i < tx->nwatch; i++)
		sp->keys[tx->widx[i]].touched = true;
	return true;
}

static void exec_body(void *arg, struct sk_space *sp, struct sv *result)
{
	struct rl_tx *tx = ((struct exec_job *)arg)->tx;
	if (!watched_same(tx, sp))
		return; /* nil: EXEC aborted by a watched key */
	struct sv *a = calloc(tx->nq > 0 ? tx->nq : 1, sizeof(*a));
	if (a == NULL) {
		sv_errorf(result, "ERR out of memory");
		return;
	}
	for (size_t i = 0; i < tx->nq; i++) {
		const struct tx_cmd *q = &tx->q[i];
		if (q->lens[0] == 7 && strncasecmp(q->argv[0], "unwatch", 7) == 0)
			sv_set_str(&a[i], SV_STATUS, "OK", 2);
		else
			sk_call(sp, q->argc, q->argv, q->lens, &a[i]);
	}
	*result = (struct sv){.type = SV_ARRAY, .a = a, .n = tx->nq};
}

static void exec_done(void *arg, struct sv *result)
{
	struct exec_job *x = arg;
	struct sess *s = x->sess;
	if (!sess_closed(s)) {
		if (result->type == SV_NIL)
			resp_add_null_array(sess_out(s), sess_proto(s));
		else
			rl_render_sv(sess_out(s), sess_proto(s), result);
	}
	rl_tx_free(x->tx);
	free(x);
	sess_resume(s);
	sess_unref(s);
}

static void c_exec(struct cmd_call *c)
{
	struct sess *s = c->sess;
	if (!s->multi) {
		resp_add_errorf(c->out, "ERR EXEC without MULTI");
		return;
	}
	bool dirty = s->multi_dirty;
	s->multi = s->multi_dirty = false;
	struct rl_tx *tx = tx_take(c); /* EXEC unwatches, whatever comes of it */
	if (dirty) {
		rl_tx_free(tx);
		resp_add_errorf(c->out,
				"EXECABORT Transaction discarded because of previous errors.");
		return;
	}
	if (tx == NULL || tx->nkeys + (int)tx->nq == 0) {
		rl_tx_free(tx);
		resp_add_array(c->out, 0);
		return;
	}
	struct sr_engine *e = rl_script_engine(c);
	struct exec_job *x = e != NULL ? calloc(1, sizeof(*x)) : NULL;
	if (x == NULL) {
		if (e != NULL)
			resp_add_errorf(c->out, "ERR out of memory");
		rl_tx_free(tx);
		return;
	}
	*x = (struct exec_job){.sess = s, .tx = tx};
	size_t lens[SK_KEYS_MAX];
	for (int i = 0; i < tx->nkeys; i++)
		lens[i] = strlen(tx->keys[i]);
	struct sr_req req = {.body = exec_body,
			     .body_arg = x,
			     .nkeys = tx->nkeys,
			     .keys = (const char *const *)tx->keys,
			     .key_lens = lens};
	struct sv err = {.type = SV_NIL};
	if (sr_start(e, &req, exec_done, x, &err) == NULL) {
		rl_render_sv(c->out, c->proto, &err);
		sv_clear(&err);
		rl_tx_free(tx);
		free(x);
		return;
	}
	sess_ref(s);
	sess_suspend(s);
}

/* --- keyspace commands outside scripts (EXISTS, TYPE, MGET...) --- */

/* One command of the keyspace run alone as a transaction: its keys read,
 * the command run on them (script_keys.c), its writes committed; several
 * keys read are checked together (one snapshot). */
struct one_job {
	struct sess *sess;
	struct tx_cmd cmd;
};

static void one_body(void *arg, struct sk_space *sp, struct sv *result)
{
	const struct tx_cmd *q = &((struct one_job *)arg)->cmd;
	sk_call(sp, q->argc, q->argv, q->lens, result);
}

static void one_done(void *arg, struct sv *result)
{
	struct one_job *o = arg;
	struct sess *s = o->sess;
	if (!sess_closed(s))
		rl_render_sv(sess_out(s), sess_proto(s), result);
	free(o->cmd.argv);
	free(o);
	sess_resume(s);
	sess_unref(s);
}

void rl_keyspace(struct cmd_call *c)
{
	const char *argv0[1] = {c->argv[0].p};
	size_t len0[1] = {c->argv[0].len};
	int first = 0, last = -1, step = 1;
	if (!sk_cmd_keys(c->argc, argv0, len0, &first, &last, &step)) {
		resp_add_errorf(c->out, "ERR '%s' is no command of the lock keyspace",
				c->def->name);
		return;
	}
	/* the distinct keys, as the engine reads each once */
	const char *keys[SK_KEYS_MAX];
	size_t lens[SK_KEYS_MAX];
	int n = 0;
	for (int i = first; first > 0 && i <= last; i += step) {
		bool dup = false;
		for (int j = 0; j < n && !dup; j++)
			dup = lens[j] == c->argv[i].len &&
			      memcmp(keys[j], c->argv[i].p, lens[j]) == 0;
		if (dup)
			continue;
		if (n == SK_KEYS_MAX) {
			resp_add_errorf(c->out, "ERR leasegate's '%s' takes at most %d keys",
					c->def->name, SK_KEYS_MAX);
			return;
		}
		keys[n] = c->argv[i].p;
		lens[n++] = c->argv[i].len;
	}
	struct sr_engine *e = rl_script_engine(c);
	struct one_job *o = e != NULL ? calloc(1, sizeof(*o)) : NULL;
	size_t bytes;
	if (e == NULL || o == NULL || !copy_cmd(c, &o->cmd, &bytes)) {
		if (e != NULL)
			resp_add_errorf(c->out, "ERR out of memory");
		free(o);
		return;
	}
	o->sess = c->sess;
	struct sr_req req = {
		.body = one_body, .body_arg = o, .nkeys = n, .keys = keys, .key_lens = lens};
	struct sv err = {.type = SV_NIL};
	if (sr_start(e, &req, one_done, o, &err) == NULL) {
		rl_render_sv(c->out, c->proto, &err);
		sv_clear(&err);
		free(o->cmd.argv);
		free(o);
		return;
	}
	sess_ref(c->sess);
	sess_suspend(c->sess);
}

#define TX_CATS (ACL_FAST | ACL_TRANSACTION)

static const struct cmd_def tx_cmds[] = {
	{.name = "multi",
	 .fn = c_multi,
	 .arity = 1,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_IN_MULTI,
	 .acl = TX_CATS,
	 .summary = "Starts a transaction: the commands that follow are queued until EXEC.",
	 .group = "transactions",
	 .complexity = "O(1)",
	 .since = CMD_SINCE},
	{.name = "exec",
	 .fn = c_exec,
	 .arity = 1,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_IN_MULTI,
	 .acl = ACL_SLOW | ACL_TRANSACTION,
	 .summary = "Runs the queued commands as one transaction over the lock keyspace: "
		    "their replies, or nil when a watched key changed.",
	 .group = "transactions",
	 .complexity = "Those of the queued commands",
	 .since = CMD_SINCE},
	{.name = "discard",
	 .fn = c_discard,
	 .arity = 1,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_IN_MULTI,
	 .acl = TX_CATS,
	 .summary = "Forgets the queued commands and the watched keys.",
	 .group = "transactions",
	 .complexity = "O(N) queued commands",
	 .since = CMD_SINCE},
	{.name = "watch",
	 .fn = c_watch,
	 .arity = -2,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_IN_MULTI,
	 .acl = TX_CATS,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .summary = "Reads keys so that the next EXEC runs only if none changed since.",
	 .group = "transactions",
	 .complexity = "O(1) per key (one read of each)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, CMD_ARG_MULTIPLE})},
	{.name = "unwatch",
	 .fn = c_unwatch,
	 .arity = 1,
	 .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
	 .acl = TX_CATS,
	 .summary = "Forgets the watched keys.",
	 .group = "transactions",
	 .complexity = "O(1)",
	 .since = CMD_SINCE},
	{.name = "exists",
	 .fn = rl_keyspace,
	 .arity = -2,
	 .acl = ACL_KEYSPACE | ACL_READ | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .summary = "How many of the keys are held locks (a key named twice counts twice).",
	 .group = "generic",
	 .complexity = "O(N) keys, read together",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, CMD_ARG_MULTIPLE})},
	{.name = "type",
	 .fn = rl_keyspace,
	 .arity = 2,
	 .acl = ACL_KEYSPACE | ACL_READ | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "string while the key is a held lock, none otherwise.",
	 .group = "generic",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "mget",
	 .fn = rl_keyspace,
	 .arity = -2,
	 .acl = ACL_READ | ACL_STRING | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .summary = "The values (holders) of the keys, nil for each not held; one snapshot.",
	 .group = "string",
	 .complexity = "O(N) keys, read together",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, CMD_ARG_MULTIPLE})},
	{.name = "mset",
	 .fn = rl_keyspace,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_STRING | ACL_SLOW | ACL_LOCK,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .key_step = 2,
	 .summary = "Sets keys to values in one commit; a key needs an expiry, so alone it answers "
		    "an error: use it in MULTI or a script, then PEXPIRE.",
	 .group = "string",
	 .complexity = "O(N) keys, written together",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, CMD_ARG_MULTIPLE},
			  {"value", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "msetnx",
	 .fn = rl_keyspace,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_STRING | ACL_SLOW | ACL_LOCK,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .key_step = 2,
	 .summary =
		 "Sets keys to values when none is held: 1, else 0 and nothing written; as MSET, "
		 "in MULTI or a script with PEXPIRE.",
	 .group = "string",
	 .complexity = "O(N) keys, written together",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, CMD_ARG_MULTIPLE},
			  {"value", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "pexpiretime",
	 .fn = rl_keyspace,
	 .arity = 2,
	 .acl = ACL_KEYSPACE | ACL_READ | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "When the key's lease ends, epoch milliseconds; -2 when not held.",
	 .group = "generic",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "expiretime",
	 .fn = rl_keyspace,
	 .arity = 2,
	 .acl = ACL_KEYSPACE | ACL_READ | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "When the key's lease ends, epoch seconds; -2 when not held.",
	 .group = "generic",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "hset",
	 .fn = rl_keyspace,
	 .arity = -4,
	 .acl = ACL_WRITE | ACL_HASH | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "Sets fields of a hash on a lock key (at most 8); a new key needs an expiry in "
		    "the same transaction.",
	 .group = "hash",
	 .complexity = "O(N) fields",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0},
			  {"field", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE},
			  {"value", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "hget",
	 .fn = rl_keyspace,
	 .arity = 3,
	 .acl = ACL_READ | ACL_HASH | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "A field of a hash on a lock key, or nil.",
	 .group = "hash",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0}, {"field", CMD_ARG_STRING, NULL, 0})},
	{.name = "hincrby",
	 .fn = rl_keyspace,
	 .arity = 4,
	 .acl = ACL_WRITE | ACL_HASH | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary =
		 "Adds to a field of a hash on a lock key (a reentrant hold count): the new value.",
	 .group = "hash",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0}, {"field", CMD_ARG_STRING, NULL, 0},
			  {"increment", CMD_ARG_INTEGER, NULL, 0})},
	{.name = "hexists",
	 .fn = rl_keyspace,
	 .arity = 3,
	 .acl = ACL_READ | ACL_HASH | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "1 when the hash on the lock key has the field, else 0.",
	 .group = "hash",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0}, {"field", CMD_ARG_STRING, NULL, 0})},
	{.name = "hdel",
	 .fn = rl_keyspace,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_HASH | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "Removes fields of a hash on a lock key; the last one gone, the key is gone.",
	 .group = "hash",
	 .complexity = "O(N) fields",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0},
			  {"field", CMD_ARG_STRING, NULL, CMD_ARG_MULTIPLE})},
	{.name = "hlen",
	 .fn = rl_keyspace,
	 .arity = 2,
	 .acl = ACL_READ | ACL_HASH | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "The number of fields of the hash on a lock key.",
	 .group = "hash",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "hgetall",
	 .fn = rl_keyspace,
	 .arity = 2,
	 .acl = ACL_READ | ACL_HASH | ACL_SLOW | ACL_LOCK,
	 .key = 1,
	 .summary = "The fields and values of the hash on a lock key.",
	 .group = "hash",
	 .complexity = "O(N) fields",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "incr",
	 .fn = rl_keyspace,
	 .arity = 2,
	 .acl = ACL_WRITE | ACL_STRING | ACL_FAST | ACL_LOCK,
	 .key = 1,
	 .summary = "Adds 1 to a key's value as a number; a new key needs an expiry in the same "
		    "transaction.",
	 .group = "string",
	 .complexity = "O(1)",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0})},
	{.name = "getrange",
	 .fn = rl_keyspace,
	 .arity = 4,
	 .acl = ACL_READ | ACL_STRING | ACL_SLOW | ACL_LOCK,
	 .key = 1,
	 .summary = "A substring of a key's value.",
	 .group = "string",
	 .complexity = "O(N) bytes",
	 .since = CMD_SINCE,
	 .args = CMD_ARGS({"key", CMD_ARG_KEY, NULL, 0}, {"start", CMD_ARG_INTEGER, NULL, 0},
			  {"end", CMD_ARG_INTEGER, NULL, 0})},
};

int rl_txcmds_register(struct rl_app *app, struct cmd_table *cmds)
{
	cmd_table_set_queue(cmds, tx_queue, app);
	return cmd_table_add(cmds, tx_cmds, sizeof(tx_cmds) / sizeof(tx_cmds[0]), app);
}
