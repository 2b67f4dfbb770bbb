/*
 * script_keys: the lock keyspace of scripts (see script_keys.h): the view
 * of each key, its commands (a table), and the commit of a run.
 */
#include "gateway/script/script_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BY_VALUE "d:" /* the owner prefix of a lease taken by value (gateway/lease) */

/* --- a key's view --- */

static void sk_reset_key(struct sk_key *k);

static bool item_is_lock(const struct lock_item *it)
{
	if (!it->exists)
		return true;
	return strcmp(it->type, "LOCK") == 0 && !it->fence_bad &&
	       (!it->has_owner || (it->has_rvn && it->has_lease));
}

void sk_key_init(struct sk_key *k, const char *name, const struct lock_item *item,
		 int64_t remaining_ms, int64_t now)
{
	memset(k, 0, sizeof(*k));
	k->name = name;
	k->len = strlen(name);
	k->item = *item;
	k->not_lock = !item_is_lock(item);
	if (k->not_lock || !item->exists || !item->has_owner) {
		k->writable0 = !k->not_lock;
	} else {
		const char *o = item->owner;
		bool by_value = strncmp(o, BY_VALUE, 2) == 0;
		bool detached = by_value || strncmp(o, "a:", 2) == 0;
		snprintf(k->value0, sizeof(k->value0), "%s", detached ? o + 2 : o);
		k->script_exp0 = item->exp_rvn[0] != '\0' && strcmp(item->exp_rvn, item->rvn) == 0;
		k->expires0 = k->script_exp0 ? item->expires_at : now + remaining_ms;
		k->alive0 = k->expires0 > now;
		k->writable0 = by_value || !k->alive0;
	}
	sk_reset_key(k);
}

static void sk_reset_key(struct sk_key *k)
{
	k->alive = k->alive0;
	snprintf(k->value, sizeof(k->value), "%s", k->alive0 ? k->value0 : "");
	k->expires_at = k->alive0 ? k->expires0 : 0;
	k->touched = k->dirty = false;
}

void sk_reset(struct sk_space *sp)
{
	for (int i = 0; i < sp->n; i++)
		sk_reset_key(&sp->keys[i]);
	sp->writes = false;
}

/* --- arguments --- */

static bool is(const char *a, size_t len, const char *word)
{
	return len == strlen(word) && strncasecmp(a, word, len) == 0;
}

/* A signed integer as Redis reads one (no spaces, no '+'). */
static bool parse_ll(const char *a, size_t len, int64_t *out)
{
	if (len == 0 || len > 20)
		return false;
	size_t i = a[0] == '-' ? 1 : 0;
	if (i == len)
		return false;
	uint64_t v = 0;
	for (; i < len; i++) {
		if (a[i] < '0' || a[i] > '9')
			return false;
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(a[i] - '0');
	}
	if (a[0] == '-') {
		if (v > (uint64_t)INT64_MAX + 1)
			return false;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)v;
	}
	return true;
}

static void not_int(struct sv *r)
{
	sv_errorf(r, "ERR value is not an integer or out of range");
}

/* The key named a among KEYS, touched; NULL with the error in r. */
static struct sk_key *key_of(struct sk_space *sp, const char *a, size_t len, struct sv *r)
{
	for (int i = 0; i < sp->n; i++) {
		struct sk_key *k = &sp->keys[i];
		if (k->len == len && memcmp(k->name, a, len) == 0) {
			if (k->not_lock) {
				sv_errorf(r,
					  "WRONGTYPE key '%.64s' is an item of another application "
					  "in the lock table, no lock",
					  k->name);
				return NULL;
			}
			k->touched = true;
			return k;
		}
	}
	sv_errorf(r,
		  "ERR script tried accessing a key not passed in KEYS: '%.*s' (leasegate reads "
		  "a script's KEYS before it runs; pass every key it uses)",
		  len > 64 ? 64 : (int)len, a);
	return NULL;
}

/* A write of k is allowed: the key is free, or a lease taken by value. */
static bool may_write(struct sk_space *sp, struct sk_key *k, struct sv *r)
{
	if (sp->ro) {
		sv_errorf(r, "ERR Write commands are not allowed from read-only scripts.");
		return false;
	}
	if (!k->dirty && k->alive && !k->writable0) {
		sv_errorf(r,
			  "ERR key '%.64s' is a lease a session took with LOCK.ACQUIRE: scripts "
			  "do not write it (LOCK.RELEASE, or LOCK.FORCE-RELEASE, end it)",
			  k->name);
		return false;
	}
	return true;
}

/* An expiry at abs ms is a lease the gateway grants; else the error. */
static bool lease_ok(struct sk_space *sp, int64_t abs, const char *cmd, struct sv *r)
{
	int64_t ms = abs - sp->now;
	if (ms >= sp->min_ms && ms <= sp->max_ms)
		return true;
	sv_errorf(r,
		  "ERR %s: a key of leasegate is a lease of %lld to %lld milliseconds (got %lld "
		  "from now)",
		  cmd, (long long)sp->min_ms, (long long)sp->max_ms, (long long)ms);
	return false;
}

static bool value_ok(const char *v, size_t len)
{
	if (len == 0 || len > SK_VALUE_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return false;
	return true;
}

static void write_key(struct sk_space *sp, struct sk_key *k, bool alive, const char *value,
		      int64_t expires_at)
{
	k->alive = alive;
	if (alive && value != k->value)
		snprintf(k->value, sizeof(k->value), "%s", value);
	if (!alive)
		k->value[0] = '\0';
	k->expires_at = alive ? expires_at : 0;
	k->dirty = true;
	sp->writes = true;
}

/* --- commands --- */

typedef void (*sk_fn)(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r);

static void c_get(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		  struct sv *r)
{
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k != NULL && k->alive)
		sv_set_str(r, SV_BULK, k->value, strlen(k->value));
}

static void c_mget(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	struct sv *a = calloc((size_t)argc - 1, sizeof(*a));
	if (a == NULL) {
		sv_errorf(r, "ERR out of memory");
		return;
	}
	for (int i = 1; i < argc; i++) {
		struct sk_key *k = key_of(sp, argv[i], lens[i], r);
		if (k == NULL) {
			for (int j = 0; j < i - 1; j++)
				sv_clear(&a[j]);
			free(a);
			return;
		}
		if (k->alive)
			sv_set_str(&a[i - 1], SV_BULK, k->value, strlen(k->value));
	}
	*r = (struct sv){.type = SV_ARRAY, .a = a, .n = (size_t)argc - 1};
}

static void c_exists(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		     struct sv *r)
{
	int64_t n = 0;
	for (int i = 1; i < argc; i++) {
		struct sk_key *k = key_of(sp, argv[i], lens[i], r);
		if (k == NULL)
			return;
		n += k->alive;
	}
	*r = (struct sv){.type = SV_INT, .i = n};
}

static void c_type(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k != NULL)
		sv_set_str(r, SV_STATUS, k->alive ? "string" : "none", k->alive ? 6 : 4);
}

static void c_del(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		  struct sv *r)
{
	int64_t n = 0;
	for (int i = 1; i < argc; i++) {
		struct sk_key *k = key_of(sp, argv[i], lens[i], r);
		if (k == NULL || !may_write(sp, k, r))
			return;
		if (k->alive) {
			write_key(sp, k, false, NULL, 0);
			n++;
		}
	}
	*r = (struct sv){.type = SV_INT, .i = n};
}

/* What PTTL, TTL, PEXPIRETIME and EXPIRETIME answer. */
enum ttl_kind { TTL_MS, TTL_S, TTL_AT_MS, TTL_AT_S };

static void ttl_of(struct sk_space *sp, const char *const *argv, const size_t *lens, struct sv *r,
		   enum ttl_kind kind)
{
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k == NULL)
		return;
	int64_t left = k->expires_at - sp->now, v = -2;
	if (k->alive)
		v = kind == TTL_MS	? left
		    : kind == TTL_S	? (left + 500) / 1000
		    : kind == TTL_AT_MS ? k->expires_at
					: k->expires_at / 1000;
	*r = (struct sv){.type = SV_INT, .i = v};
}

static void c_pttl(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	ttl_of(sp, argv, lens, r, TTL_MS);
}

static void c_ttl(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		  struct sv *r)
{
	ttl_of(sp, argv, lens, r, TTL_S);
}

static void c_pexpiretime(struct sk_space *sp, int argc, const char *const *argv,
			  const size_t *lens, struct sv *r)
{
	ttl_of(sp, argv, lens, r, TTL_AT_MS);
}

static void c_expiretime(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
			 struct sv *r)
{
	ttl_of(sp, argv, lens, r, TTL_AT_S);
}

/* EXPIRE and its kin: the unit (ms per unit) and relative or absolute. */
static void expire(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r, int64_t unit, bool at)
{
	int64_t t;
	if (!parse_ll(argv[2], lens[2], &t)) {
		not_int(r);
		return;
	}
	bool nx = false, xx = false, gt = false, lt = false;
	for (int i = 3; i < argc; i++) {
		nx |= is(argv[i], lens[i], "NX");
		xx |= is(argv[i], lens[i], "XX");
		gt |= is(argv[i], lens[i], "GT");
		lt |= is(argv[i], lens[i], "LT");
		if (!is(argv[i], lens[i], "NX") && !is(argv[i], lens[i], "XX") &&
		    !is(argv[i], lens[i], "GT") && !is(argv[i], lens[i], "LT")) {
			sv_errorf(r, "ERR Unsupported option %.*s",
				  (int)(lens[i] > 32 ? 32 : lens[i]), argv[i]);
			return;
		}
	}
	if ((nx && (xx || gt || lt)) || (gt && lt)) {
		sv_errorf(r, "ERR NX and XX, GT or LT options at the same time are not compatible");
		return;
	}
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k == NULL || !may_write(sp, k, r))
		return;
	if (t > INT64_MAX / 1000 / 4 || t < -(INT64_MAX / 1000 / 4)) {
		sv_errorf(r, "ERR invalid expire time in '%s' command", argv[0]);
		return;
	}
	int64_t abs = at ? t * unit : sp->now + t * unit;
	/* every key has an expiry: NX never applies, XX always does */
	if (!k->alive || nx || (gt && abs <= k->expires_at) || (lt && abs >= k->expires_at)) {
		*r = (struct sv){.type = SV_INT, .i = 0};
		return;
	}
	if (abs <= sp->now) {
		write_key(sp, k, false, NULL, 0); /* an expiry in the past deletes */
	} else {
		if (!lease_ok(sp, abs, "EXPIRE", r))
			return;
		write_key(sp, k, true, k->value, abs);
	}
	*r = (struct sv){.type = SV_INT, .i = 1};
}

static void c_pexpire(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r)
{
	expire(sp, argc, argv, lens, r, 1, false);
}

static void c_expire(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		     struct sv *r)
{
	expire(sp, argc, argv, lens, r, 1000, false);
}

static void c_pexpireat(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
			struct sv *r)
{
	expire(sp, argc, argv, lens, r, 1, true);
}

static void c_expireat(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		       struct sv *r)
{
	expire(sp, argc, argv, lens, r, 1000, true);
}

/* SET's options, as read. */
struct set_opts {
	bool nx, xx, get, keepttl;
	int64_t abs; /* the expiry, epoch ms; 0: none given */
};

static bool set_parse(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct set_opts *o, struct sv *r)
{
	static const struct {
		const char *word;
		int64_t unit;
		bool at;
	} units[] = {
		{"EX", 1000, false}, {"PX", 1, false}, {"EXAT", 1000, true}, {"PXAT", 1, true}};
	bool unit_given = false;
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];
		size_t n = lens[i];
		size_t u = 0;
		for (; u < 4 && !is(a, n, units[u].word); u++)
			;
		if (is(a, n, "NX") && !o->xx) {
			o->nx = true;
		} else if (is(a, n, "XX") && !o->nx) {
			o->xx = true;
		} else if (is(a, n, "GET")) {
			o->get = true;
		} else if (is(a, n, "KEEPTTL") && !unit_given) {
			o->keepttl = true;
		} else if (u < 4 && !unit_given && !o->keepttl && i + 1 < argc) {
			int64_t t;
			i++;
			if (!parse_ll(argv[i], lens[i], &t)) {
				not_int(r);
				return false;
			}
			if (t <= 0 || t > INT64_MAX / 1000 / 4) {
				sv_errorf(r, "ERR invalid expire time in 'set' command");
				return false;
			}
			o->abs = units[u].at ? t * units[u].unit : sp->now + t * units[u].unit;
			unit_given = true;
		} else {
			sv_errorf(r, "ERR syntax error");
			return false;
		}
	}
	return true;
}

static void c_set(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		  struct sv *r)
{
	struct set_opts o = {0};
	if (!set_parse(sp, argc, argv, lens, &o, r))
		return;
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k == NULL || !may_write(sp, k, r))
		return;
	if (!value_ok(argv[2], lens[2])) {
		sv_errorf(r,
			  "ERR leasegate keeps a key's value as its lock's owner: 1 to %d "
			  "printable ASCII characters, no space",
			  SK_VALUE_MAX);
		return;
	}
	int64_t abs = o.keepttl ? (k->alive ? k->expires_at : 0) : o.abs;
	if (abs == 0) {
		sv_errorf(r, "ERR a key of leasegate is a lease, it needs an expiry: SET key value "
			     "PX milliseconds (EX, PXAT, EXAT; KEEPTTL on a key that exists)");
		return;
	}
	bool apply = !(o.nx && k->alive) && !(o.xx && !k->alive);
	if (apply && !o.keepttl && !lease_ok(sp, abs, "SET", r))
		return;
	if (o.get) {
		if (k->alive)
			sv_set_str(r, SV_BULK, k->value, strlen(k->value));
	} else if (apply) {
		sv_set_str(r, SV_STATUS, "OK", 2);
	}
	if (apply)
		write_key(sp, k, true, argv[2], abs);
}

static void c_time(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	char s[24], us[24];
	snprintf(s, sizeof(s), "%lld", (long long)(sp->now / 1000));
	snprintf(us, sizeof(us), "%lld", (long long)(sp->now % 1000) * 1000);
	struct sv *a = calloc(2, sizeof(*a));
	if (a == NULL) {
		sv_errorf(r, "ERR out of memory");
		return;
	}
	sv_set_str(&a[0], SV_BULK, s, strlen(s));
	sv_set_str(&a[1], SV_BULK, us, strlen(us));
	*r = (struct sv){.type = SV_ARRAY, .a = a, .n = 2};
}

static void c_ping(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	if (argc > 1)
		sv_set_str(r, SV_BULK, argv[1], lens[1]);
	else
		sv_set_str(r, SV_STATUS, "PONG", 4);
}

struct sk_cmd {
	const char *name;
	int arity; /* as the command table's: N exactly, -N at least */
	sk_fn fn;
	int first, last; /* the keys: argv[first..last]; last -1: to the end; 0: none */
};

static const struct sk_cmd cmds[] = {
	{"get", 2, c_get, 1, 1},
	{"set", -3, c_set, 1, 1},
	{"del", -2, c_del, 1, -1},
	{"unlink", -2, c_del, 1, -1},
	{"exists", -2, c_exists, 1, -1},
	{"mget", -2, c_mget, 1, -1},
	{"type", 2, c_type, 1, 1},
	{"pttl", 2, c_pttl, 1, 1},
	{"ttl", 2, c_ttl, 1, 1},
	{"pexpiretime", 2, c_pexpiretime, 1, 1},
	{"expiretime", 2, c_expiretime, 1, 1},
	{"pexpire", -3, c_pexpire, 1, 1},
	{"expire", -3, c_expire, 1, 1},
	{"pexpireat", -3, c_pexpireat, 1, 1},
	{"expireat", -3, c_expireat, 1, 1},
	{"time", 1, c_time, 0, 0},
	{"ping", -1, c_ping, 0, 0},
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct sk_cmd *find_cmd(const char *name, size_t len)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (is(name, len, cmds[i].name))
			return &cmds[i];
	return NULL;
}

bool sk_cmd_keys(int argc, const char *const *argv, const size_t *lens, int *first, int *last)
{
	const struct sk_cmd *c = find_cmd(argv[0], lens[0]);
	if (c == NULL)
		return false;
	*first = c->first;
	*last = c->first == 0 ? -1 : c->last < 0 ? argc - 1 : c->last;
	if (*last >= argc)
		*last = argc - 1; /* a wrong arity: the run answers it */
	return true;
}

const char *sk_cmd_names(void)
{
	return "GET, SET, DEL, UNLINK, EXISTS, MGET, TYPE, PTTL, TTL, PEXPIRE, EXPIRE, PEXPIREAT, "
	       "EXPIREAT, PEXPIRETIME, EXPIRETIME, TIME, PING";
}

/* Commands of lock libraries leasegate's keyspace does not have yet, with
 * what needs them: named in the error. */
static const struct {
	const char *name, *why;
} later[] = {
	{"hset", "hashes on lock keys (Redisson-style reentrant locks)"},
	{"hget", "hashes on lock keys (Redisson-style reentrant locks)"},
	{"hincrby", "hashes on lock keys (Redisson-style reentrant locks)"},
	{"hexists", "hashes on lock keys (Redisson-style reentrant locks)"},
	{"hdel", "hashes on lock keys (Redisson-style reentrant locks)"},
	{"hlen", "hashes on lock keys (Redisson-style reentrant locks)"},
	{"publish", "the wake-up channels of Redisson-style locks"},
	{"zadd", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"zrange", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"zrangebyscore", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"zremrangebyscore", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"zcard", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"zrank", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"zrem", "sorted-set semaphores (redis-semaphore's Semaphore)"},
	{"lpush", "lists (python-redis-lock's signal list)"},
	{"rpush", "lists (python-redis-lock's signal list)"},
	{"blpop", "lists (python-redis-lock's signal list)"},
	{"incr", "numbers as values (a key's value is a lock's owner)"},
	{"mset", "several keys set at once (not yet)"},
	{"msetnx", "several keys set at once (not yet)"},
	{"getrange", "substrings of values (not yet)"},
};

static void unknown(const char *name, size_t len, struct sv *r)
{
	int n = len > 64 ? 64 : (int)len;
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
		if (is(name, len, later[i].name)) {
			sv_errorf(r,
				  "ERR leasegate's scripts run the commands of the lock keyspace; "
				  "'%.*s' is not one yet (needed for %s)",
				  n, name, later[i].why);
			return;
		}
	sv_errorf(r,
		  "ERR Unknown Redis command called from script: '%.*s' (leasegate's scripts run "
		  "GET, SET, DEL, UNLINK, EXISTS, MGET, TYPE, PTTL, TTL, PEXPIRE, EXPIRE, "
		  "PEXPIREAT, EXPIREAT, PEXPIRETIME, EXPIRETIME, TIME, PING on lock keys)",
		  n, name);
}

void sk_call(void *host, int argc, const char *const *argv, const size_t *lens, struct sv *reply)
{
	struct sk_space *sp = host;
	const struct sk_cmd *c = find_cmd(argv[0], lens[0]);
	if (c == NULL) {
		unknown(argv[0], lens[0], reply);
		return;
	}
	if ((c->arity > 0 && argc != c->arity) || (c->arity < 0 && argc < -c->arity)) {
		sv_errorf(reply, "ERR wrong number of arguments for '%s' command", c->name);
		return;
	}
	c->fn(sp, argc, argv, lens, reply);
}

bool sk_same(const struct sk_key *then, const struct sk_key *now)
{
	const struct lock_item *a = &then->item, *b = &now->item;
	if (then->alive0 != now->alive0 || a->exists != b->exists)
		return false;
	if (!a->exists)
		return true;
	if (a->has_owner != b->has_owner || a->has_fence != b->has_fence || a->fence != b->fence)
		return false;
	if (!a->has_owner)
		return true;
	if (strcmp(a->owner, b->owner) != 0 || a->lease_ms != b->lease_ms)
		return false;
	/* a script's write, or a lease seen ended: the exact version; a lease
	 * of the lease core held: owner, fence and lease (its heartbeats
	 * change rvn alone) */
	if (then->script_exp0 || !then->alive0)
		return strcmp(a->rvn, b->rvn) == 0;
	return true;
}

/* --- the commit --- */

static void seen_of(const struct sk_key *k, int64_t commit_now, struct store_kv_op *op)
{
	const struct lock_item *it = &k->item;
	if (!it->exists) {
		op->seen = KV_SEEN_NONE;
	} else if (!it->has_owner) {
		op->seen = KV_SEEN_FREE;
		op->has_fence = it->has_fence;
		op->fence = it->fence;
	} else if (k->script_exp0 || !k->alive0) {
		/* the exact version: a script's, alive until its expAt; or
		 * a lease seen ended, which a renewal must not revive */
		op->seen = KV_SEEN_VERSION;
		op->rvn = it->rvn;
		op->alive_after = k->script_exp0 && k->alive0 ? commit_now : 0;
	} else {
		op->seen = KV_SEEN_HOLDER; /* the lease core's, held: not its rvn */
		op->owner = it->owner;
		op->fence = it->fence;
	}
}

void sk_commit_ops(struct sk_space *sp, int64_t commit_now, struct store_kv_op *ops, unsigned *n)
{
	unsigned m = 0, touched = 0;
	for (int i = 0; i < sp->n; i++) {
		struct sk_key *k = &sp->keys[i];
		if (!k->touched)
			continue;
		touched++;
		struct store_kv_op *op = &ops[m++];
		*op = (struct store_kv_op){.name = k->name, .write = KV_W_CHECK};
		seen_of(k, commit_now, op);
		if (!k->dirty || (!k->alive && !k->alive0))
			continue;
		if (!k->alive) {
			op->write = KV_W_FREE;
			continue;
		}
		store_new_id(k->new_rvn);
		snprintf(k->new_owner, sizeof(k->new_owner), BY_VALUE "%.*s", SK_VALUE_MAX,
			 k->value);
		op->write = KV_W_SET;
		op->new_owner = k->new_owner;
		op->new_rvn = k->new_rvn;
		op->expires_at = k->expires_at;
		op->lease_ms = k->expires_at - sp->now > 0 ? k->expires_at - sp->now : 1;
		/* a new holder gets the next fence: from absent or ended, or
		 * another value */
		op->raise_fence = !k->alive0 || strcmp(k->value0, k->value) != 0;
	}
	bool writes = false;
	for (unsigned i = 0; i < m; i++)
		writes |= ops[i].write != KV_W_CHECK;
	*n = writes || touched > 1 ? m : 0;
}
