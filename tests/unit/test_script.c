/*
 * test_script: the Lua of EVAL (gateway/script) — the sandbox, the limits,
 * the conversions between Lua values and replies — and scripts as
 * transactions over the lock keyspace on the embedded store with the fake
 * clock: what they write, that the commit validates every key read (a
 * write skew is refused and re-run), that a key taken gets the next fence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/base/clock.h"
#include "core/locktable.h"
#include "core/obs.h"
#include "core/store/store_kv.h"
#include "core/store/store_memory.h"
#include "gateway/script/script_keys.h"
#include "gateway/script/script_run.h"

static const struct sl_limits limits = {
	.max_instructions = 2000000, .max_ms = 2000, .max_bytes = 8 << 20};

/* No keys: every redis.call answers what the test put in next_reply. */
static struct sv next_reply;

static void fixed_call(void *host, int argc, const char *const *argv, const size_t *lens,
		       struct sv *reply)
{
	*reply = next_reply;
	if (next_reply.s != NULL)
		reply->s = strdup(next_reply.s);
}

/* Runs body with no keys; *out its reply. */
static void run_body(struct sl_vm *vm, const char *body, struct sv *out)
{
	char sha[SL_SHA_HEX + 1], err[256] = "";
	if (!sl_load(vm, body, strlen(body), sha, err, sizeof(err))) {
		sv_errorf(out, "%s", err);
		return;
	}
	struct sl_run r = {.sha = sha, .call = fixed_call};
	sl_exec(vm, &r, out);
}

/* The reply of body is an error starting with want. */
static void expect_error(struct sl_vm *vm, const char *body, const char *want)
{
	struct sv v;
	run_body(vm, body, &v);
	if (v.type != SV_ERROR || v.s == NULL || strncmp(v.s, want, strlen(want)) != 0)
		fail_msg("%s: wanted an error '%s', got type %d '%s'", body, want, v.type,
			 v.s != NULL ? v.s : "");
	sv_clear(&v);
}

static void expect_int(struct sl_vm *vm, const char *body, int64_t want)
{
	struct sv v;
	run_body(vm, body, &v);
	if (v.type != SV_INT || v.i != want)
		fail_msg("%s: wanted %lld, got type %d %lld '%s'", body, (long long)want, v.type,
			 (long long)v.i, v.s != NULL ? v.s : "");
	sv_clear(&v);
}

static void test_sandbox(void **state)
{
	struct sl_vm *vm = sl_new(&limits);
	assert_non_null(vm);
	static const struct {
		const char *body, *error;
	} refused[] = {
		{"x = 1", "ERR user_script:1: Attempt to modify a readonly table"},
		{"return undefined_name",
		 "ERR user_script:1: Script attempted to access nonexistent"},
		{"return io.open('/etc/passwd')", "ERR user_script:1: Script attempted to access"},
		{"return os.execute('true')", "ERR user_script:1: attempt to call field 'execute'"},
		{"return require('os')", "ERR user_script:1: Script attempted to access"},
		{"return dofile('/etc/passwd')", "ERR user_script:1: Script attempted to access"},
		{"return debug.getinfo(1)", "ERR user_script:1: Script attempted to access"},
		{"string.rep = nil", "ERR user_script:1: Attempt to modify a readonly table"},
		{"redis.call = nil", "ERR user_script:1: Attempt to modify a readonly table"},
		{"return string.dump(tostring)", "ERR user_script:1: attempt to call field 'dump'"},
		{"rawset(string, 'rep', nil)", "ERR user_script:1: Script attempted to access"},
		{"setmetatable(string, {})",
		 "ERR user_script:1: cannot change a protected metatable"},
		{"getfenv(1).x = 1", "ERR user_script:1: Script attempted to access"},
		/* a chunk of loadstring reads the run's globals, read-only too */
		{"loadstring('string.rep = nil')()",
		 "ERR [string \"string.rep = nil\"]:1: Attempt"},
		{"return loadstring('\\27Lua')", "ERR"}, /* nil, a message: not a function */
		{"\x1bLua\x51", "ERR Error compiling script: loading bytecode is not allowed"},
		{"return (", "ERR Error compiling script (new function): user_script:1:"},
		{"#!python\nreturn 1", "ERR Unexpected engine in script shebang"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (strcmp(refused[i].body, "return loadstring('\\27Lua')") == 0) {
			/* loadstring answers nil and a message for bytecode */
			expect_int(vm,
				   "local f, e = loadstring('\\27Lua'); return f == nil and 1 or 0",
				   1);
			continue;
		}
		expect_error(vm, refused[i].body, refused[i].error);
	}
	/* what stays: the libraries, unchanged after every attempt above */
	expect_int(vm, "return #string.rep('ab', 3)", 6);
	expect_int(vm, "return getmetatable('') == false and 1 or 0", 1);
	expect_int(vm, "return ('x'):rep(4):len()", 4);
	expect_int(vm, "return math.floor(2.5) + table.getn({1, 2})", 4);
	expect_int(vm, "return os.clock() >= 0 and 1 or 0", 1);
	expect_int(vm, "local ok = pcall(function() y = 1 end); return ok and 1 or 0", 0);
	expect_int(vm, "return loadstring('return 7')()", 7);
	expect_int(vm, "#!lua flags=no-writes\nreturn 5", 5);
	expect_int(vm,
		   "return redis.sha1hex('') == 'da39a3ee5e6b4b0d3255bfef95601890afd80709' "
		   "and 1 or 0",
		   1);
	sl_free(vm);
}

static void test_limits(void **state)
{
	struct sl_vm *vm = sl_new(&limits);
	/* a loop, also one that catches the error it is stopped with */
	expect_error(vm, "while true do end", "BUSY the script ran past its instruction budget");
	expect_error(vm, "while true do pcall(function() while true do end end) end",
		     "BUSY the script ran past its instruction budget");
	expect_error(vm, "return string.rep('x', 100000000)",
		     "BUSY the script ran past its memory limit");
	expect_error(vm, "local t = {} for i = 1, 1e8 do t[i] = i end",
		     "BUSY the script ran past its");
	expect_error(vm, "local function f() return f() + 1 end return f()", "ERR user_script:1:");
	/* a reply that holds itself many times over (make fuzz, fuzz_lua: 90
	 * paths at each of 32 levels, out of memory while converting it): its
	 * elements and strings count against the run's memory limit */
	expect_error(vm, "local t = {} for i = 1, 90 do t[i] = t end return t",
		     "ERR the script's reply is larger than its memory limit (8388608 bytes)");
	expect_error(vm,
		     "local s = string.rep('x', 1000000) local t = {} "
		     "for i = 1, 9 do t[i] = s end return t",
		     "ERR the script's reply is larger than its memory limit");
	/* ... and one of the same size within it is answered whole */
	struct sv v;
	run_body(vm,
		 "local s = string.rep('x', 1000000) local t = {} "
		 "for i = 1, 7 do t[i] = s end return t",
		 &v);
	assert_int_equal(v.type, SV_ARRAY);
	assert_int_equal(v.n, 7);
	assert_int_equal(v.a[6].len, 1000000);
	sv_clear(&v);
	/* and the VM runs scripts after each */
	expect_int(vm, "return 42", 42);
	struct sl_stats st;
	sl_stats(vm, &st);
	assert_true(st.killed >= 4);
	sl_free(vm);
}

static void test_lua_to_reply(void **state)
{
	struct sl_vm *vm = sl_new(&limits);
	struct sv v;
	run_body(vm,
		 "return {1, 'two', {ok='fine'}, {err='ERR bad'}, false, true, 3.9, {1, {2}}, "
		 "{double=1.5}}",
		 &v);
	assert_int_equal(v.type, SV_ARRAY);
	assert_int_equal(v.n, 9);
	assert_int_equal(v.a[0].type, SV_INT);
	assert_int_equal(v.a[0].i, 1);
	assert_int_equal(v.a[1].type, SV_BULK);
	assert_string_equal(v.a[1].s, "two");
	assert_int_equal(v.a[2].type, SV_STATUS);
	assert_string_equal(v.a[2].s, "fine");
	assert_int_equal(v.a[3].type, SV_ERROR);
	assert_string_equal(v.a[3].s, "ERR bad");
	assert_int_equal(v.a[4].type, SV_BOOL);
	assert_int_equal(v.a[4].i, 0);
	assert_int_equal(v.a[5].type, SV_BOOL);
	assert_int_equal(v.a[5].i, 1);
	assert_int_equal(v.a[6].type, SV_INT); /* the fraction cut off, as Redis */
	assert_int_equal(v.a[6].i, 3);
	assert_int_equal(v.a[7].type, SV_ARRAY);
	assert_int_equal(v.a[7].a[1].a[0].i, 2);
	assert_int_equal(v.a[8].type, SV_DOUBLE);
	sv_clear(&v);
	/* an array ends at its first nil; err wins over ok */
	run_body(vm, "return {1, nil, 3}", &v);
	assert_int_equal(v.n, 1);
	sv_clear(&v);
	run_body(vm, "return {ok='a', err='b'}", &v);
	assert_int_equal(v.type, SV_ERROR);
	assert_string_equal(v.s, "b");
	sv_clear(&v);
	run_body(vm, "return nil", &v);
	assert_int_equal(v.type, SV_NIL);
	sv_clear(&v);
	/* a table that holds itself: cut at the depth limit, no crash */
	run_body(vm, "local t = {} t[1] = t return t", &v);
	assert_int_equal(v.type, SV_ARRAY);
	sv_clear(&v);
	sl_free(vm);
}

static void test_reply_to_lua(void **state)
{
	struct sl_vm *vm = sl_new(&limits);
	next_reply = (struct sv){.type = SV_NIL};
	expect_int(vm, "return redis.call('get', 'k') == false and 1 or 0", 1);
	next_reply = (struct sv){.type = SV_INT, .i = 7};
	expect_int(vm, "return redis.call('pttl', 'k') + 1", 8);
	next_reply = (struct sv){.type = SV_STATUS, .s = "OK", .len = 2};
	expect_int(vm, "return redis.call('set', 'k', 'v') .ok == 'OK' and 1 or 0", 1);
	next_reply = (struct sv){.type = SV_ERROR, .s = "ERR nope", .len = 8};
	expect_error(vm, "return redis.call('x')", "ERR nope"); /* raised, as Redis 7 */
	expect_int(vm, "return redis.pcall('x').err == 'ERR nope' and 1 or 0", 1);
	expect_error(vm, "return redis.call({})", "ERR user_script:1: Lua redis lib command");
	expect_int(vm, "return redis.error_reply('E x').err == 'E x' and 1 or 0", 1);
	next_reply = (struct sv){.type = SV_NIL};
	sl_free(vm);
}

/* --- scripts over the lock keyspace, on the embedded store --- */

struct world {
	struct clock *clock;
	struct store *store;
	struct obs obs; /* counters only: no sink */
	struct locktable *lt;
	struct sr_engine *e;
	struct sv reply;
	int answers;
};

static void on_done(void *arg, struct sv *res)
{
	struct world *w = arg;
	sv_clear(&w->reply);
	w->reply = *res;
	*res = (struct sv){.type = SV_NIL};
	w->answers++;
}

static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));
	w->clock = clock_fake_new(1700000000000);
	w->store = store_memory_new(w->clock, "t");
	struct lt_options o = {0};
	w->lt = lt_new(w->clock, w->store, &w->obs, &o);
	struct sr_config cfg = {.limits = limits, .min_lease_ms = 1000, .max_lease_ms = 86400000};
	w->e = sr_new(w->store, w->lt, w->clock, &cfg);
	assert_non_null(w->e);
	return w;
}

static void world_free(struct world *w)
{
	sv_clear(&w->reply);
	sr_free(w->e);
	lt_free(w->lt);
	store_free(w->store);
	clock_free(w->clock);
	free(w);
}

/* Starts body on keys (NULL-ended) and args (NULL-ended). */
static void start(struct world *w, const char *body, const char *const *keys,
		  const char *const *args)
{
	char sha[SL_SHA_HEX + 1], err[256];
	assert_true(sl_load(sr_vm(w->e), body, strlen(body), sha, err, sizeof(err)));
	struct sr_req req = {.sha = sha};
	size_t klens[8], alens[8];
	for (; keys[req.nkeys] != NULL; req.nkeys++)
		klens[req.nkeys] = strlen(keys[req.nkeys]);
	for (; args[req.nargs] != NULL; req.nargs++)
		alens[req.nargs] = strlen(args[req.nargs]);
	req.keys = keys;
	req.args = args;
	req.key_lens = klens;
	req.arg_lens = alens;
	struct sv e = {.type = SV_NIL};
	assert_non_null(sr_start(w->e, &req, on_done, w, &e));
}

static void eval(struct world *w, const char *body, const char *const *keys,
		 const char *const *args)
{
	int before = w->answers;
	start(w, body, keys, args);
	for (int i = 0; i < 100 && w->answers == before; i++)
		clock_fake_advance(w->clock, 1);
	assert_int_equal(w->answers, before + 1);
}

static struct lock_item item_of(struct world *w, const char *name)
{
	struct lock_item it;
	assert_true(store_read_now(w->store, name, &it));
	return it;
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE	  ((const char *const[]){NULL})

static const char *const acquire =
	"return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0";
static const char *const release = "if redis.call('get', KEYS[1]) == ARGV[1] then "
				   "return redis.call('del', KEYS[1]) else return 0 end";

static void test_lock_cycle_and_fence(void **state)
{
	struct world *w = world_new();
	eval(w, acquire, KEYS("a"), KEYS("v1", "5000"));
	assert_int_equal(w->reply.i, 1);
	struct lock_item it = item_of(w, "a");
	assert_string_equal(it.owner, "d:v1"); /* as SET NX PX outside scripts */
	assert_int_equal(it.fence, 1);
	assert_int_equal(it.lease_ms, 5000);
	assert_int_equal(it.expires_at, 1700000000000 + 5000);
	eval(w, acquire, KEYS("a"), KEYS("v2", "5000"));
	assert_int_equal(w->reply.i, 0); /* held */
	/* an extend of the holder keeps its fence */
	eval(w,
	     "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', "
	     "KEYS[1], ARGV[2]) end return 0",
	     KEYS("a"), KEYS("v1", "9000"));
	assert_int_equal(w->reply.i, 1);
	assert_int_equal(item_of(w, "a").fence, 1);
	eval(w, "return redis.call('pttl', KEYS[1])", KEYS("a"), NONE);
	assert_true(w->reply.i > 8900 && w->reply.i <= 9000);
	eval(w, release, KEYS("a"), KEYS("v2"));
	assert_int_equal(w->reply.i, 0);
	eval(w, release, KEYS("a"), KEYS("v1"));
	assert_int_equal(w->reply.i, 1);
	it = item_of(w, "a");
	assert_true(it.exists && !it.has_owner); /* a tombstone keeps the fence */
	assert_int_equal(it.fence, 1);
	/* the next holder gets the next fence, also by a plain SET */
	eval(w,
	     "if redis.call('exists', KEYS[1]) == 0 then return redis.call('set', KEYS[1], "
	     "ARGV[1], 'PX', 3000) end",
	     KEYS("a"), KEYS("v3"));
	assert_int_equal(item_of(w, "a").fence, 2);
	/* expiry: after its lease the key is gone for scripts, and taking
	 * it raises the fence again */
	clock_fake_advance(w->clock, 3001);
	eval(w, "return redis.call('get', KEYS[1])", KEYS("a"), NONE);
	assert_int_equal(w->reply.type, SV_BOOL); /* nil: false in Lua, back as a false */
	eval(w, acquire, KEYS("a"), KEYS("v4", "2000"));
	assert_int_equal(w->reply.i, 1);
	assert_int_equal(item_of(w, "a").fence, 3);
	world_free(w);
}

static struct lease *granted;
static void on_granted(void *arg, struct lease *l, const struct lt_error *err)
{
	granted = l;
}

/* A key a script deletes is free for the lease core's waiters on this
 * replica at once, as after a local release: not at their next poll (a
 * third of the lease later), by which time a lock library's retry would
 * have taken it again. */
static void test_delete_wakes_local_waiters(void **state)
{
	struct world *w = world_new();
	eval(w, acquire, KEYS("a"), KEYS("v1", "6000"));
	assert_int_equal(w->reply.i, 1);
	granted = NULL;
	struct lt_acquire_args args = {.name = "a", .lease_ms = 6000, .wait = true};
	assert_non_null(lt_acquire(w->lt, &args, on_granted, NULL));
	clock_fake_advance(w->clock, 50); /* its write refused: queued, polls in 2 s */
	assert_null(granted);
	eval(w, release, KEYS("a"), KEYS("v1"));
	assert_int_equal(w->reply.i, 1);
	for (int i = 0; i < 10 && granted == NULL; i++)
		clock_fake_advance(w->clock, 1);
	assert_non_null(granted); /* within 10 ms, not at the poll */
	assert_int_equal(lease_token(granted), 2);
	lease_release(granted);
	clock_fake_advance(w->clock, 10);
	world_free(w);
}

static void test_errors_commit_nothing(void **state)
{
	struct world *w = world_new();
	eval(w, "redis.call('set', KEYS[1], 'v', 'PX', 5000) error('boom')", KEYS("b"), NONE);
	assert_int_equal(w->reply.type, SV_ERROR);
	assert_false(item_of(w, "b").exists);
	eval(w, "return redis.call('set', KEYS[1], 'v')", KEYS("b"), NONE);
	assert_int_equal(w->reply.type, SV_ERROR); /* no expiry: no lease */
	eval(w, "return redis.call('set', KEYS[1], 'v', 'PX', 10)", KEYS("b"), NONE);
	assert_int_equal(w->reply.type, SV_ERROR); /* under the shortest lease */
	assert_false(item_of(w, "b").exists);
	world_free(w);
}

/* Read A, write B; and read B, write A: run together, both read the
 * other key absent. Serializable means one sees the other's write, so
 * they cannot both write: the second commit is refused and re-run. */
static void test_no_write_skew(void **state)
{
	struct world *w = world_new();
	static const char *const body =
		"if redis.call('exists', KEYS[1]) == 0 then redis.call('set', KEYS[2], ARGV[1], "
		"'PX', 10000) return 1 end return 0";
	start(w, body, KEYS("x", "y"), KEYS("one"));
	start(w, body, KEYS("y", "x"), KEYS("two"));
	for (int i = 0; i < 200 && w->answers < 2; i++)
		clock_fake_advance(w->clock, 1);
	assert_int_equal(w->answers, 2);
	bool x = item_of(w, "x").has_owner, y = item_of(w, "y").has_owner;
	assert_true(x != y); /* exactly one wrote */
	struct sr_stats st;
	sr_stats(w->e, &st);
	assert_true(st.conflicts >= 1);
	world_free(w);
}

/* The commit's conditions, directly: a key changed since it was read
 * refuses the whole commit. */
struct kv_answer {
	int n;
	struct store_kv_result res;
};

static void kv_done(void *arg, const struct store_kv_result *res)
{
	struct kv_answer *a = arg;
	a->n++;
	a->res = *res;
}

static void test_commit_conditions(void **state)
{
	struct world *w = world_new();
	struct store_kv_op set = {.name = "c",
				  .seen = KV_SEEN_NONE,
				  .write = KV_W_SET,
				  .new_owner = "d:v",
				  .new_rvn = "r1",
				  .lease_ms = 5000,
				  .expires_at = 1700000005000,
				  .raise_fence = true};
	struct store_kv_req req = {.n = 1, .ops = &set};
	struct kv_answer a = {0};
	assert_non_null(store_kv_commit(w->store, &req, kv_done, &a));
	assert_int_equal(a.n, 0); /* never inside the call */
	clock_fake_advance(w->clock, 1);
	assert_int_equal(a.res.status, STORE_OK);
	/* again from "absent": refused, the item unchanged */
	assert_non_null(store_kv_commit(w->store, &req, kv_done, &a));
	clock_fake_advance(w->clock, 1);
	assert_int_equal(a.res.status, STORE_REFUSED);
	assert_string_equal(item_of(w, "c").rvn, "r1");
	/* VERSION with a live expiry: refused once the commit's clock is past it */
	struct store_kv_op chk[2] = {
		{.name = "c", .seen = KV_SEEN_VERSION, .rvn = "r1", .alive_after = 1700000005000},
		{.name = "d", .seen = KV_SEEN_NONE, .write = KV_W_FREE},
	};
	req = (struct store_kv_req){.n = 2, .ops = chk};
	assert_non_null(store_kv_commit(w->store, &req, kv_done, &a));
	clock_fake_advance(w->clock, 1);
	assert_int_equal(a.res.status, STORE_REFUSED);
	assert_int_equal(a.res.index, 0);
	chk[0].alive_after = 1700000004999;
	assert_non_null(store_kv_commit(w->store, &req, kv_done, &a));
	clock_fake_advance(w->clock, 1);
	assert_int_equal(a.res.status, STORE_OK);
	/* a bad request is refused at once */
	chk[1].name = "c";
	assert_null(store_kv_commit(w->store, &req, kv_done, &a));
	world_free(w);
}

/* WATCH's rule (sk_same): which later reads of a key count as a change. */
static void test_watch_same(void **state)
{
	const int64_t now = 1700000000000;
	struct lock_item none = {.exists = false};
	struct lock_item core = {.exists = true,
				 .has_owner = true,
				 .has_rvn = true,
				 .has_lease = true,
				 .has_fence = true,
				 .fence = 4,
				 .lease_ms = 3000,
				 .owner = "o1",
				 .rvn = "r1",
				 .type = "LOCK"};
	struct lock_item script = core;
	snprintf(script.owner, sizeof(script.owner), "d:v");
	script.expires_at = now + 3000;
	snprintf(script.exp_rvn, sizeof(script.exp_rvn), "r1");
	struct lock_item core_beat = core, core_taken = core, core_longer = core;
	snprintf(core_beat.rvn, sizeof(core_beat.rvn), "r2"); /* a heartbeat */
	snprintf(core_taken.owner, sizeof(core_taken.owner), "o2");
	core_taken.fence = 5;
	core_longer.lease_ms = 30000; /* PEXPIRE */
	struct lock_item script_again = script, freed = core;
	snprintf(script_again.rvn, sizeof(script_again.rvn), "r9"); /* rewritten */
	snprintf(script_again.exp_rvn, sizeof(script_again.exp_rvn), "r9");
	freed.has_owner = false;
	freed.owner[0] = '\0';
	static const struct {
		int then, later; /* indexes into items */
		int64_t later_now;
		bool same;
	} cases[] = {
		{0, 0, 0, true},     {0, 1, 0, false}, {1, 2, 0, true}, {1, 3, 0, false},
		{1, 4, 0, false},    {1, 6, 0, false}, {5, 5, 0, true}, {5, 7, 0, false},
		{5, 5, 3000, false}, /* the script's expiry passed: a change */
	};
	const struct lock_item *items[] = {&none,	 &core,	  &core_beat, &core_taken,
					   &core_longer, &script, &freed,     &script_again};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sk_key a, b;
		sk_key_init(&a, "k", items[cases[i].then], 3000, now);
		sk_key_init(&b, "k", items[cases[i].later], 3000 - cases[i].later_now,
			    now + cases[i].later_now);
		if (sk_same(&a, &b) != cases[i].same)
			fail_msg("case %zu: sk_same is %d", i, !cases[i].same);
	}
	/* the keys of a queued command */
	const char *argv[] = {"del", "a", "b", "c"};
	size_t lens[] = {3, 1, 1, 1};
	int first = -1, last = -1, step = 0;
	assert_true(sk_cmd_keys(4, argv, lens, &first, &last, &step));
	assert_int_equal(first, 1);
	assert_int_equal(last, 3);
	argv[0] = "SET";
	assert_true(sk_cmd_keys(4, argv, lens, &first, &last, &step));
	assert_int_equal(last, 1);
	argv[0] = "time";
	lens[0] = 4;
	assert_true(sk_cmd_keys(1, argv, lens, &first, &last, &step));
	assert_int_equal(first, 0);
	argv[0] = "zadd";
	lens[0] = 4;
	assert_false(sk_cmd_keys(2, argv, lens, &first, &last, &step));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_lua_to_reply),
		cmocka_unit_test(test_reply_to_lua),
		cmocka_unit_test(test_lock_cycle_and_fence),
		cmocka_unit_test(test_delete_wakes_local_waiters),
		cmocka_unit_test(test_errors_commit_nothing),
		cmocka_unit_test(test_no_write_skew),
		cmocka_unit_test(test_commit_conditions),
		cmocka_unit_test(test_watch_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
