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
	if (!k->not_lock && item->exists && !item->has_owner &&
	    (item->scount > 0 || item->radmit)) {
		/* held shared (readers, a semaphore's holders), or readers
		 * admitted by the last exclusive release (phase-fair: they go
		 * before any exclusive taker, a script's too): alive, no one's
		 * value, no expiry a script could read; never written over */
		k->alive0 = true;
		snprintf(k->value0, sizeof(k->value0), "%s", SK_SHARED_VALUE);
	} else if (k->not_lock || !item->exists || !item->has_owner) {
		k->writable0 = !k->not_lock;
	} else {
		const char *o = item->owner;
		bool by_value = strncmp(o, BY_VALUE, 2) == 0;
		bool detached = by_value || strncmp(o, "a:", 2) == 0;
		k->hash0 = strncmp(o, SK_HASHED, 2) == 0;
		snprintf(k->value0, sizeof(k->value0), "%s", k->hash0 ? "" : detached ? o + 2 : o);
		k->script_exp0 = item->exp_rvn[0] != '\0' && strcmp(item->exp_rvn, item->rvn) == 0;
		k->expires0 = k->script_exp0 ? item->expires_at : now + remaining_ms;
		k->alive0 = k->expires0 > now;
		k->writable0 = by_value || k->hash0 || !k->alive0;
	}
	sk_reset_key(k);
}

/* The fields of text ("field value ..."), at most SK_FIELDS_MAX. */
static int parse_fields(const char *text, struct sk_field *f)
{
	int n = 0;
	const char *p = text;
	while (*p != '\0' && n < SK_FIELDS_MAX) {
		size_t a = strcspn(p, " ");
		const char *v = p[a] == ' ' ? p + a + 1 : p + a;
		size_t b = strcspn(v, " ");
		if (a == 0 || a > SK_FIELD_MAX || b == 0 || b > SK_FIELD_MAX)
			break; /* not written by leasegate: what was read so far */
		snprintf(f[n].name, sizeof(f[n].name), "%.*s", (int)a, p);
		snprintf(f[n].value, sizeof(f[n].value), "%.*s", (int)b, v);
		n++;
		p = v[b] == ' ' ? v + b + 1 : v + b;
	}
	return n;
}

static void sk_reset_key(struct sk_key *k)
{
	k->alive = k->alive0;
	snprintf(k->value, sizeof(k->value), "%s", k->alive0 ? k->value0 : "");
	k->expires_at = k->alive0 ? k->expires0 : 0;
	k->hash = k->alive0 && k->hash0;
	k->nfields = k->hash ? parse_fields(k->item.hash, k->fields) : 0;
	k->touched = k->dirty = false;
}

void sk_reset(struct sk_space *sp)
{
	for (int i = 0; i < sp->n; i++)
		sk_reset_key(&sp->keys[i]);
	sp->writes = false;
	sp->npubs = 0;
	sp->pub_len = 0;
}

void sk_space_free(struct sk_space *sp)
{
	free(sp->pub_buf);
	sp->pub_buf = NULL;
	sp->npubs = 0;
	sp->pub_len = 0;
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
	if (!alive) {
		k->value[0] = '\0';
		k->hash = false;
		k->nfields = 0;
	}
	k->expires_at = alive ? expires_at : 0;
	k->dirty = true;
	sp->writes = true;
}

/* k becomes a string of value (SET, MSET, INCR), expiring at expires_at
 * (0: none yet). */
static void write_string(struct sk_space *sp, struct sk_key *k, const char *value,
			 int64_t expires_at)
{
	k->hash = false;
	k->nfields = 0;
	write_key(sp, k, true, value, expires_at);
}

static void wrongtype(struct sv *r)
{
	sv_errorf(r, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

/* --- commands --- */

typedef void (*sk_fn)(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r);

static void c_get(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		  struct sv *r)
{
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k != NULL && k->hash)
		wrongtype(r);
	else if (k != NULL && k->alive)
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
		if (k->alive && !k->hash) /* MGET answers nil for a hash */
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
	const char *t = k == NULL ? NULL : k->hash ? "hash" : k->alive ? "string" : "none";
	if (t != NULL)
		sv_set_str(r, SV_STATUS, t, strlen(t));
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
	if (k->alive && k->expires_at == 0)
		v = -1; /* no expiry yet (HSET...): until the script gives one */
	else if (k->alive)
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
	/* a key without an expiry yet (HSET...) counts as infinite */
	bool none = k->expires_at == 0;
	if (!k->alive || (nx && !none) || (xx && none) || (gt && (none || abs <= k->expires_at)) ||
	    (lt && !none && abs >= k->expires_at)) {
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
	if (o.get && k->hash) {
		wrongtype(r);
		return;
	}
	if (o.get) {
		if (k->alive)
			sv_set_str(r, SV_BULK, k->value, strlen(k->value));
	} else if (apply) {
		sv_set_str(r, SV_STATUS, "OK", 2);
	}
	if (apply)
		write_string(sp, k, argv[2], abs);
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

/* --- MSET, MSETNX, INCR, GETRANGE --- */

static const char value_rule[] = "ERR leasegate keeps a key's value as its lock's owner: 1 to %d "
				 "printable ASCII characters, no space";

/* MSET and MSETNX: every key a string without an expiry (a lease needs
 * one before the script ends: PEXPIRE). */
static void mset(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		 struct sv *r, bool nx)
{
	if (argc % 2 == 0) {
		sv_errorf(r, "ERR wrong number of arguments for '%s' command",
			  nx ? "msetnx" : "mset");
		return;
	}
	bool any = false;
	for (int i = 1; i < argc; i += 2) {
		struct sk_key *k = key_of(sp, argv[i], lens[i], r);
		if (k == NULL || !may_write(sp, k, r))
			return;
		if (!value_ok(argv[i + 1], lens[i + 1])) {
			sv_errorf(r, value_rule, SK_VALUE_MAX);
			return;
		}
		any |= k->alive;
	}
	if (nx && any) {
		*r = (struct sv){.type = SV_INT, .i = 0};
		return;
	}
	for (int i = 1; i < argc; i += 2) {
		struct sk_key *k = key_of(sp, argv[i], lens[i], r);
		write_string(sp, k, argv[i + 1], 0);
	}
	if (nx)
		*r = (struct sv){.type = SV_INT, .i = 1};
	else
		sv_set_str(r, SV_STATUS, "OK", 2);
}

static void c_mset(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	mset(sp, argc, argv, lens, r, false);
}

static void c_msetnx(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		     struct sv *r)
{
	mset(sp, argc, argv, lens, r, true);
}

/* INCR: the value as a number; a new key has no expiry yet, an existing
 * one keeps its own (as Redis). */
static void c_incr(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k == NULL || !may_write(sp, k, r))
		return;
	if (k->hash) {
		wrongtype(r);
		return;
	}
	int64_t v = 0;
	if (k->alive && !parse_ll(k->value, strlen(k->value), &v)) {
		not_int(r);
		return;
	}
	if (v == INT64_MAX) {
		sv_errorf(r, "ERR increment or decrement would overflow");
		return;
	}
	char num[24];
	snprintf(num, sizeof(num), "%lld", (long long)++v);
	write_string(sp, k, num, k->alive ? k->expires_at : 0);
	*r = (struct sv){.type = SV_INT, .i = v};
}

static void c_getrange(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		       struct sv *r)
{
	int64_t a, b;
	if (!parse_ll(argv[2], lens[2], &a) || !parse_ll(argv[3], lens[3], &b)) {
		not_int(r);
		return;
	}
	struct sk_key *k = key_of(sp, argv[1], lens[1], r);
	if (k == NULL)
		return;
	if (k->hash) {
		wrongtype(r);
		return;
	}
	int64_t n = k->alive ? (int64_t)strlen(k->value) : 0;
	if (a < 0)
		a = n + a < 0 ? 0 : n + a;
	if (b < 0)
		b = n + b;
	if (b >= n)
		b = n - 1;
	if (n == 0 || a > b || (a < 0 && b < 0))
		sv_set_str(r, SV_BULK, "", 0);
	else
		sv_set_str(r, SV_BULK, k->value + a, (size_t)(b - a + 1));
}

/* --- PUBLISH: kept, sent after the commit --- */

/* Copies s (n bytes) into the run's buffer, NUL-terminated; NULL when
 * the bounds or memory are out. */
static const char *pub_copy(struct sk_space *sp, const char *s, size_t n)
{
	if (sp->pub_len + n + 1 > SK_PUB_BYTES_MAX)
		return NULL;
	if (sp->pub_buf == NULL && (sp->pub_buf = malloc(SK_PUB_BYTES_MAX)) == NULL)
		return NULL;
	char *at = sp->pub_buf + sp->pub_len;
	memcpy(at, s, n);
	at[n] = '\0';
	sp->pub_len += n + 1;
	return at;
}

static void c_publish(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r)
{
	if (sp->ro) {
		sv_errorf(r, "ERR Write commands are not allowed from read-only scripts.");
		return;
	}
	struct sk_pub *p = sp->npubs < SK_PUBS_MAX ? &sp->pubs[sp->npubs] : NULL;
	size_t len0 = sp->pub_len;
	if (p == NULL || (p->channel = pub_copy(sp, argv[1], lens[1])) == NULL ||
	    (p->message = pub_copy(sp, argv[2], lens[2])) == NULL) {
		sp->pub_len = len0;
		sv_errorf(r, "ERR a script of leasegate publishes at most %d messages of %d bytes",
			  SK_PUBS_MAX, SK_PUB_BYTES_MAX);
		return;
	}
	p->channel_len = lens[1];
	p->message_len = lens[2];
	sp->npubs++;
	/* what Redis answers, the receivers: those of this replica now */
	size_t n = sp->subscribers != NULL ? sp->subscribers(sp->sub_arg, argv[1], lens[1]) : 0;
	*r = (struct sv){.type = SV_INT, .i = (int64_t)n};
}

/* --- hashes (Redisson-style reentrant locks) --- */

static bool field_ok(const char *s, size_t len)
{
	if (len == 0 || len > SK_FIELD_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* The hash key named a (a hash, or not alive); NULL with the error. write:
 * the command writes it. */
static struct sk_key *hash_key(struct sk_space *sp, const char *a, size_t len, bool write,
			       struct sv *r)
{
	struct sk_key *k = key_of(sp, a, len, r);
	if (k == NULL || (write && !may_write(sp, k, r)))
		return NULL;
	if (k->alive && !k->hash) {
		wrongtype(r);
		return NULL;
	}
	return k;
}

static int field_index(const struct sk_key *k, const char *name, size_t len)
{
	for (int i = 0; i < k->nfields; i++)
		if (strlen(k->fields[i].name) == len && memcmp(k->fields[i].name, name, len) == 0)
			return i;
	return -1;
}

/* Sets field name to value (both checked), adding it; -1 with the error
 * when the hash is full, else 1 added / 0 replaced. */
static int field_set(struct sk_space *sp, struct sk_key *k, const char *name, size_t nlen,
		     const char *value, size_t vlen, struct sv *r)
{
	int i = field_index(k, name, nlen);
	if (i < 0 && k->nfields == SK_FIELDS_MAX) {
		sv_errorf(r, "ERR leasegate keeps at most %d fields in a hash on a lock key",
			  SK_FIELDS_MAX);
		return -1;
	}
	int added = i < 0;
	if (i < 0)
		i = k->nfields++;
	snprintf(k->fields[i].name, sizeof(k->fields[i].name), "%.*s", (int)nlen, name);
	snprintf(k->fields[i].value, sizeof(k->fields[i].value), "%.*s", (int)vlen, value);
	if (!k->alive)
		k->expires_at = 0; /* a new key: no expiry until the script gives one */
	k->hash = true;
	write_key(sp, k, true, "", k->expires_at);
	return added;
}

static void c_hset(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	if (argc % 2 != 0) {
		sv_errorf(r, "ERR wrong number of arguments for 'hset' command");
		return;
	}
	struct sk_key *k = hash_key(sp, argv[1], lens[1], true, r);
	if (k == NULL)
		return;
	for (int i = 2; i < argc; i++)
		if (!field_ok(argv[i], lens[i])) {
			sv_errorf(r,
				  "ERR a hash on a lock key holds fields and values of 1 to %d "
				  "printable ASCII characters, no space, quote or backslash",
				  SK_FIELD_MAX);
			return;
		}
	int64_t added = 0;
	for (int i = 2; i < argc; i += 2) {
		int a = field_set(sp, k, argv[i], lens[i], argv[i + 1], lens[i + 1], r);
		if (a < 0)
			return;
		added += a;
	}
	*r = (struct sv){.type = SV_INT, .i = added};
}

static void c_hincrby(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r)
{
	int64_t by, v = 0;
	if (!parse_ll(argv[3], lens[3], &by)) {
		not_int(r);
		return;
	}
	struct sk_key *k = hash_key(sp, argv[1], lens[1], true, r);
	if (k == NULL)
		return;
	if (!field_ok(argv[2], lens[2])) {
		sv_errorf(r,
			  "ERR a hash field is 1 to %d printable ASCII characters, no space, "
			  "quote or backslash",
			  SK_FIELD_MAX);
		return;
	}
	int i = field_index(k, argv[2], lens[2]);
	if (i >= 0 && !parse_ll(k->fields[i].value, strlen(k->fields[i].value), &v)) {
		sv_errorf(r, "ERR hash value is not an integer");
		return;
	}
	if ((by > 0 && v > INT64_MAX - by) || (by < 0 && v < INT64_MIN - by)) {
		sv_errorf(r, "ERR increment or decrement would overflow");
		return;
	}
	v += by;
	char num[24];
	snprintf(num, sizeof(num), "%lld", (long long)v);
	if (field_set(sp, k, argv[2], lens[2], num, strlen(num), r) < 0)
		return;
	*r = (struct sv){.type = SV_INT, .i = v};
}

static void c_hget(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	struct sk_key *k = hash_key(sp, argv[1], lens[1], false, r);
	int i = k != NULL ? field_index(k, argv[2], lens[2]) : -1;
	if (i >= 0)
		sv_set_str(r, SV_BULK, k->fields[i].value, strlen(k->fields[i].value));
}

static void c_hexists(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r)
{
	struct sk_key *k = hash_key(sp, argv[1], lens[1], false, r);
	if (k != NULL)
		*r = (struct sv){.type = SV_INT, .i = field_index(k, argv[2], lens[2]) >= 0};
}

static void c_hlen(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	struct sk_key *k = hash_key(sp, argv[1], lens[1], false, r);
	if (k != NULL)
		*r = (struct sv){.type = SV_INT, .i = k->nfields};
}

static void c_hgetall(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		      struct sv *r)
{
	struct sk_key *k = hash_key(sp, argv[1], lens[1], false, r);
	if (k == NULL)
		return;
	struct sv *a = calloc((size_t)k->nfields * 2 + 1, sizeof(*a));
	if (a == NULL) {
		sv_errorf(r, "ERR out of memory");
		return;
	}
	for (int i = 0; i < k->nfields; i++) {
		sv_set_str(&a[2 * i], SV_BULK, k->fields[i].name, strlen(k->fields[i].name));
		sv_set_str(&a[2 * i + 1], SV_BULK, k->fields[i].value, strlen(k->fields[i].value));
	}
	*r = (struct sv){.type = SV_ARRAY, .a = a, .n = (size_t)k->nfields * 2};
}

/* HDEL: the last field gone, the key is gone (as Redis's empty hash). */
static void c_hdel(struct sk_space *sp, int argc, const char *const *argv, const size_t *lens,
		   struct sv *r)
{
	struct sk_key *k = hash_key(sp, argv[1], lens[1], true, r);
	if (k == NULL)
		return;
	int64_t n = 0;
	for (int j = 2; j < argc; j++) {
		int i = field_index(k, argv[j], lens[j]);
		if (i < 0)
			continue;
		k->fields[i] = k->fields[--k->nfields];
		n++;
	}
	if (n > 0 && k->nfields == 0)
		write_key(sp, k, false, NULL, 0);
	else if (n > 0)
		write_key(sp, k, true, "", k->expires_at);
	*r = (struct sv){.type = SV_INT, .i = n};
}

struct sk_cmd {
	const char *name;
	int arity; /* as the command table's: N exactly, -N at least */
	sk_fn fn;
	int first, last, step; /* the keys: argv[first], +step.. argv[last];
				  last -1: to the end; first 0: none */
};

static const struct sk_cmd cmds[] = {
	{"get", 2, c_get, 1, 1, 1},
	{"set", -3, c_set, 1, 1, 1},
	{"del", -2, c_del, 1, -1, 1},
	{"unlink", -2, c_del, 1, -1, 1},
	{"exists", -2, c_exists, 1, -1, 1},
	{"mget", -2, c_mget, 1, -1, 1},
	{"mset", -3, c_mset, 1, -1, 2},
	{"msetnx", -3, c_msetnx, 1, -1, 2},
	{"incr", 2, c_incr, 1, 1, 1},
	{"getrange", 4, c_getrange, 1, 1, 1},
	{"type", 2, c_type, 1, 1, 1},
	{"pttl", 2, c_pttl, 1, 1, 1},
	{"ttl", 2, c_ttl, 1, 1, 1},
	{"pexpiretime", 2, c_pexpiretime, 1, 1, 1},
	{"expiretime", 2, c_expiretime, 1, 1, 1},
	{"pexpire", -3, c_pexpire, 1, 1, 1},
	{"expire", -3, c_expire, 1, 1, 1},
	{"pexpireat", -3, c_pexpireat, 1, 1, 1},
	{"expireat", -3, c_expireat, 1, 1, 1},
	{"hset", -4, c_hset, 1, 1, 1},
	{"hget", 3, c_hget, 1, 1, 1},
	{"hincrby", 4, c_hincrby, 1, 1, 1},
	{"hexists", 3, c_hexists, 1, 1, 1},
	{"hdel", -3, c_hdel, 1, 1, 1},
	{"hlen", 2, c_hlen, 1, 1, 1},
	{"hgetall", 2, c_hgetall, 1, 1, 1},
	{"publish", 3, c_publish, 0, 0, 1},
	{"time", 1, c_time, 0, 0, 1},
	{"ping", -1, c_ping, 0, 0, 1},
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct sk_cmd *find_cmd(const char *name, size_t len)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (is(name, len, cmds[i].name))
			return &cmds[i];
	return NULL;
}

bool sk_cmd_keys(int argc, const char *const *argv, const size_t *lens, int *first, int *last,
		 int *step)
{
	const struct sk_cmd *c = find_cmd(argv[0], lens[0]);
	if (c == NULL)
		return false;
	*first = c->first;
	*step = c->step;
	*last = c->first == 0 ? -1 : c->last < 0 ? argc - 1 : c->last;
	if (*last >= argc)
		*last = argc - 1; /* a wrong arity: the run answers it */
	return true;
}

const char *sk_cmd_names(void)
{
	return "GET, SET, DEL, UNLINK, EXISTS, MGET, MSET, MSETNX, INCR, GETRANGE, TYPE, PTTL, "
	       "TTL, "
	       "PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT, PEXPIRETIME, EXPIRETIME, HSET, HGET, "
	       "HINCRBY, "
	       "HEXISTS, HDEL, HLEN, HGETALL, PUBLISH, TIME, PING";
}

/* Commands of lock libraries leasegate's keyspace does not have yet, with
 * what needs them: named in the error. */
static const struct {
	const char *name, *why;
} later[] = {
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
		  "%s on lock keys)",
		  n, name, sk_cmd_names());
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

/* The owner the commit writes for k, and its hash: "d:<value>" for a
 * string; "h:" and the SHA1 of the sorted field names for a hash (its
 * holders: a count changing keeps it), new_hash its fields. */
static void owner_of(struct sk_key *k)
{
	if (!k->hash) {
		snprintf(k->new_owner, sizeof(k->new_owner), BY_VALUE "%.*s", SK_VALUE_MAX,
			 k->value);
		return;
	}
	const struct sk_field *order[SK_FIELDS_MAX];
	for (int i = 0; i < k->nfields; i++) { /* insertion sort by name */
		int j = i;
		for (; j > 0 && strcmp(order[j - 1]->name, k->fields[i].name) > 0; j--)
			order[j] = order[j - 1];
		order[j] = &k->fields[i];
	}
	char names[SK_FIELDS_MAX * (SK_FIELD_MAX + 1) + 1] = "";
	size_t at = 0, hat = 0;
	k->new_hash[0] = '\0';
	for (int i = 0; i < k->nfields; i++) {
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s", i ? " " : "",
				       order[i]->name);
		hat += (size_t)snprintf(k->new_hash + hat, sizeof(k->new_hash) - hat, "%s%s %s",
					i ? " " : "", order[i]->name, order[i]->value);
	}
	char sha[SL_SHA_HEX + 1];
	sl_sha1_hex(names, at, sha);
	snprintf(k->new_owner, sizeof(k->new_owner), SK_HASHED "%s", sha);
}

bool sk_finish(const struct sk_space *sp, struct sv *err)
{
	for (int i = 0; i < sp->n; i++) {
		const struct sk_key *k = &sp->keys[i];
		if (k->dirty && k->alive && k->expires_at <= 0) {
			sv_errorf(err,
				  "ERR key '%.64s' has no expiry at the end of the script (or "
				  "transaction, or command): a key of leasegate is a lease "
				  "(PEXPIRE it in the same script or transaction); nothing was "
				  "written",
				  k->name);
			return false;
		}
	}
	return true;
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
		owner_of(k);
		op->write = KV_W_SET;
		op->new_owner = k->new_owner;
		op->new_rvn = k->new_rvn;
		op->hash = k->hash ? k->new_hash : NULL;
		op->expires_at = k->expires_at;
		op->lease_ms = k->expires_at - sp->now > 0 ? k->expires_at - sp->now : 1;
		/* a new holder gets the next fence: from absent or ended, or
		 * another owner (another value, another hash's fields) */
		op->raise_fence = !k->alive0 || strcmp(k->item.owner, k->new_owner) != 0;
	}
	bool writes = false;
	for (unsigned i = 0; i < m; i++)
		writes |= ops[i].write != KV_W_CHECK;
	*n = writes || touched > 1 ? m : 0;
}
