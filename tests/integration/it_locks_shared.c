/*
 * it_locks_shared: LOCK.ACQUIRE ... SHARED (readers of a reader-writer
 * lock) and LIMIT n (a counting semaphore) over hiredis, as a Redis client
 * sees them: the [token, slot] answer, the group token, LOCK.STATE with
 * every holder, release and renewal of the connection's hold, LOCK.LIST,
 * LOCK.LIST TABLE, errors; on the embedded store and on moto, then two
 * gateways on one moto table (what one client may conclude from an answer
 * is checked from the other gateway).
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

#include "tests/support/gw.h"
#include "tests/support/lockhelp.h"
#include "tests/support/rawresp.h"

struct hold {
	long long token, slot;
};

/* A shared acquire answered [token, slot]; else fails. */
static struct hold sh_acquire(redisContext *c, const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	redisReply *r = gw_cmd(c, cmd); /* no '%' in the tests' commands */
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER)
		fail_msg("%s: type %d %s", cmd, r->type, r->str != NULL ? r->str : "");
	struct hold h = {r->element[0]->integer, r->element[1]->integer};
	freeReplyObject(r);
	assert_true(h.token > 0);
	assert_true(h.slot >= 0 && h.slot < 99);
	return h;
}

/* A detached shared acquire answered [token, slot, secret]; else fails. */
static struct hold sh_detached(redisContext *c, char *secret, size_t cap, const char *cmd)
{
	redisReply *r = gw_cmd(c, cmd);
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[2]->type != REDIS_REPLY_STRING)
		fail_msg("%s: type %d %s", cmd, r->type, r->str != NULL ? r->str : "");
	struct hold h = {r->element[0]->integer, r->element[1]->integer};
	snprintf(secret, cap, "%s", r->element[2]->str);
	freeReplyObject(r);
	return h;
}

/* The value of key in a RESP2 flat-pairs reply (NULL when absent). */
static const redisReply *field(const redisReply *m, const char *key)
{
	for (size_t i = 0; i + 1 < m->elements; i += 2)
		if (strcmp(m->element[i]->str, key) == 0)
			return m->element[i + 1];
	return NULL;
}

static long long int_field(const redisReply *m, const char *key)
{
	const redisReply *v = field(m, key);
	if (v == NULL || v->type != REDIS_REPLY_INTEGER)
		fail_msg("no integer field %s", key);
	return v->integer;
}

/* LOCK.STATE of a name held shared: checks mode, limit, held, and that
 * its holders are exactly want (n of them, any order: slot and token),
 * mine the slot this connection holds (-1: none). Returns the reply. */
static redisReply *expect_shared_state(redisContext *c, const char *name, const char *mode,
				       long long limit, const struct hold *want, size_t n,
				       long long mine)
{
	redisReply *r = gw_cmd(c, "LOCK.STATE %s", name);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_string_equal(field(r, "mode")->str, mode);
	assert_int_equal(int_field(r, "limit"), limit);
	assert_int_equal(int_field(r, "held"), n > 0);
	assert_int_equal(int_field(r, "mine"), mine >= 0);
	const redisReply *hs = field(r, "holders");
	assert_non_null(hs);
	assert_int_equal(hs->elements, n);
	for (size_t i = 0; i < n; i++) {
		const redisReply *h = hs->element[i];
		long long slot = int_field(h, "slot");
		size_t k = 0;
		while (k < n && want[k].slot != slot)
			k++;
		if (k == n)
			fail_msg("%s: slot %lld is no holder of the test's", name, slot);
		assert_int_equal(int_field(h, "fencing-token"), want[k].token);
		assert_int_equal(int_field(h, "mine"), slot == mine);
		assert_true(int_field(h, "lease-ms") > 0);
	}
	return r;
}

/* ---- on one gateway, both stores ---- */

/* Readers hold at once with one group token; an exclusive waits for the
 * last to go, and the next readers' token is above the exclusive's. */
static void test_readers_then_writer(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g), *w = gw_connect(&g);
	struct hold ra = sh_acquire(a, "LOCK.ACQUIRE rw 5000 SHARED HOLDER reader-a");
	struct hold rb = sh_acquire(b, "LOCK.ACQUIRE rw 5000 SHARED");
	assert_int_equal(ra.token, rb.token); /* one phase, one token */
	assert_int_not_equal(ra.slot, rb.slot);
	gw_expect_nil(w, "LOCK.ACQUIRE rw 5000");
	struct hold both[] = {ra, rb};
	freeReplyObject(expect_shared_state(a, "rw", "shared", 99, both, 2, ra.slot));
	gw_send(w, "LOCK.ACQUIRE rw 5000 WAIT 10000");
	gw_expect_no_reply(w, 300, "a writer while readers hold");
	gw_expect_int(a, 1, "LOCK.RELEASE rw");
	gw_expect_int(a, 0, "LOCK.RELEASE rw"); /* once */
	gw_expect_no_reply(w, 300, "a writer while one reader holds");
	gw_expect_int(b, 1, "LOCK.RELEASE rw %lld", rb.token);
	long long tw = gw_token_within(w, 5000, "the writer after the last reader");
	assert_true(tw > ra.token);
	lh_expect_state(a, "rw", 1, "gw-a", 5000, tw, 0);
	gw_expect_nil(a, "LOCK.ACQUIRE rw 5000 SHARED"); /* the writer holds */
	gw_expect_int(w, 1, "LOCK.RELEASE rw");
	struct hold next = sh_acquire(a, "LOCK.ACQUIRE rw 5000 SHARED");
	assert_true(next.token > tw); /* a new phase: above the writer's */
	redisFree(a);
	redisFree(b);
	redisFree(w);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LIMIT n: n holders at once, the (n+1)th waits for a slot; tokens are
 * their slots' own; another n is refused while any holds. */
static void test_semaphore(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g), *c = gw_connect(&g);
	struct hold ha = sh_acquire(a, "LOCK.ACQUIRE sem 5000 LIMIT 2");
	struct hold hb = sh_acquire(b, "LOCK.ACQUIRE sem 5000 LIMIT 2");
	assert_int_not_equal(ha.slot, hb.slot);
	gw_expect_nil(c, "LOCK.ACQUIRE sem 5000 LIMIT 2");
	gw_expect_err(c, "ERR", "LOCK.ACQUIRE sem 5000 LIMIT 3");
	gw_expect_err(c, "ERR", "LOCK.ACQUIRE sem 5000 SHARED");
	gw_expect_nil(c, "LOCK.ACQUIRE sem 5000"); /* exclusive: not while any holds */
	struct hold two[] = {ha, hb};
	freeReplyObject(expect_shared_state(c, "sem", "limit", 2, two, 2, -1));
	gw_send(c, "LOCK.ACQUIRE sem 5000 LIMIT 2 WAIT 10000");
	gw_expect_no_reply(c, 300, "a third holder of LIMIT 2");
	gw_expect_int(a, 1, "LOCK.RELEASE sem");
	redisReply *r = gw_reply_within(c, 5000);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->element[1]->integer, ha.slot);	/* the slot a freed */
	assert_int_equal(r->element[0]->integer, ha.token + 1); /* its fence, raised */
	freeReplyObject(r);
	redisFree(a);
	redisFree(b);
	redisFree(c);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* The connection's own hold: not reentrant, renewed and released by name
 * or by its token, given back at close; LOCK.LIST shows it. */
static void test_own_hold(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), "--holder-label", "gw-a", NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	struct hold h = sh_acquire(a, "LOCK.ACQUIRE o 4000 SHARED HOLDER me");
	gw_expect_err(a, "ERR this connection holds 'o' shared already",
		      "LOCK.ACQUIRE o 4000 SHARED");
	gw_expect_err(a, "ERR", "LOCK.ACQUIRE o 4000"); /* exclusive beside it */
	gw_expect_int(a, 1, "LOCK.RENEW o");
	gw_expect_int(a, 1, "LOCK.RENEW o %lld", h.token);
	gw_expect_int(a, 0, "LOCK.RELEASE o %lld", h.token + 1);
	redisReply *l = gw_cmd(a, "LOCK.LIST MATCH o");
	assert_int_equal(l->elements, 1);
	assert_string_equal(field(l->element[0], "kind")->str, "shared");
	assert_string_equal(field(l->element[0], "state")->str, "held");
	assert_int_equal(int_field(l->element[0], "token"), h.token);
	assert_int_equal(int_field(l->element[0], "lease-ms"), 4000);
	assert_string_equal(field(l->element[0], "holder")->str, "me");
	freeReplyObject(l);
	redisReply *t = gw_cmd(b, "LOCK.LIST TABLE MATCH o");
	assert_int_equal(t->element[1]->elements, 1);
	assert_int_equal(int_field(t->element[1]->element[0], "shared"), 1);
	assert_int_equal(int_field(t->element[1]->element[0], "held"), 0);
	freeReplyObject(t);
	gw_expect_int(a, 1, "LOCK.RELEASE o %lld", h.token);
	gw_expect_int(a, 0, "LOCK.RENEW o");
	struct hold h2 = sh_acquire(a, "LOCK.ACQUIRE o 4000 LIMIT 1");
	redisFree(a); /* its hold goes with it */
	lh_await_settled(b, 0);
	long long tx = lh_acquire(b, "o", 4000);
	assert_true(tx > 0);
	(void)h2;
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Bad arguments get clear errors and change nothing. */
static void test_bad_input(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), NULL);
	redisContext *a = gw_connect(&g);
	gw_expect_err(a, "ERR LIMIT must be an integer from 1 to 99",
		      "LOCK.ACQUIRE x 4000 LIMIT 0");
	gw_expect_err(a, "ERR LIMIT must be an integer from 1 to 99",
		      "LOCK.ACQUIRE x 4000 LIMIT 100");
	gw_expect_err(a, "ERR LIMIT must be an integer from 1 to 99",
		      "LOCK.ACQUIRE x 4000 LIMIT -1");
	gw_expect_err(a, "ERR syntax error", "LOCK.ACQUIRE x 4000 LIMIT");
	gw_expect_err(a, "ERR SHARED and LIMIT exclude each other",
		      "LOCK.ACQUIRE x 4000 SHARED LIMIT 2");
	gw_expect_err(a, "ERR a shared hold is not adoptable",
		      "LOCK.ACQUIRE x 4000 SHARED ADOPTABLE");
	gw_expect_err(a, "ERR", "LOCK.ACQUIRE x 0 SHARED");
	gw_expect_err(a, "ERR syntax error", "LEADER.CAMPAIGN x 4000 SHARED");
	redisReply *r = gw_cmd(a, "LOCK.STATE x");
	assert_int_equal(r->type, REDIS_REPLY_NIL); /* nothing written */
	freeReplyObject(r);
	redisFree(a);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* DETACH: a hold no connection owns, told its secret once, renewed and
 * released by (name, token, secret) from any connection; it outlives its
 * connection and, not renewed, runs out after its lease. */
static void test_detached(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	char sec[64], other[64], forged[64];
	struct hold h = sh_detached(a, sec, sizeof(sec), "LOCK.ACQUIRE dt 2000 SHARED DETACH");
	long long granted = gw_now_ms();
	struct hold h2 = sh_detached(a, other, sizeof(other), "LOCK.ACQUIRE dt 2000 SHARED DETACH");
	assert_int_equal(h.token, h2.token); /* one phase */
	assert_string_not_equal(sec, other);
	redisFree(a); /* they outlive their connection */
	redisReply *st = gw_cmd(b, "LOCK.STATE dt");
	const redisReply *hs = field(st, "holders");
	assert_int_equal(hs->elements, 2);
	assert_string_equal(field(hs->element[0], "mine")->str, "detached");
	freeReplyObject(st);
	gw_expect_int(b, 1, "LOCK.RENEW dt %lld %s", h.token, sec);
	gw_expect_int(b, 0, "LOCK.RENEW dt %lld %s", h.token + 1, sec); /* another token */
	snprintf(forged, sizeof(forged), "%lld:0123456789abcdef0123456789abcdef", h.slot);
	gw_expect_int(b, 0, "LOCK.RELEASE dt %lld %s", h.token, forged); /* another secret */
	gw_expect_int(b, 0, "LOCK.RELEASE dt");				 /* no connection's */
	gw_expect_int(b, 1, "LOCK.RELEASE dt %lld %s", h.token, sec);
	gw_expect_int(b, 0, "LOCK.RELEASE dt %lld %s", h.token, sec); /* once */
	/* the other, never renewed, runs out: the writer waits its lease */
	gw_send(b, "LOCK.ACQUIRE dt 2000 WAIT 10000");
	long long tw = gw_token_within(b, 10000, "a writer after a detached reader ran out");
	long long ms = gw_now_ms() - granted;
	printf("# a detached reader, never renewed, ended %lld ms after its grant (lease 2000)\n",
	       ms);
	assert_true(tw > h.token);
	assert_true(ms >= 2000);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.FORCE-RELEASE name SLOT k ends one holder, whose connection is
 * told -LOST forced at its next command; the others hold on. */
static void test_force_one_holder(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g), *op = gw_connect(&g);
	struct hold ha = sh_acquire(a, "LOCK.ACQUIRE fr 3000 SHARED");
	struct hold hb = sh_acquire(b, "LOCK.ACQUIRE fr 3000 SHARED");
	gw_expect_err(op, "ERR SLOT must be an integer from 0 to 98",
		      "LOCK.FORCE-RELEASE fr SLOT 99");
	gw_expect_err(op, "ERR syntax error", "LOCK.FORCE-RELEASE fr SLOTS 1");
	gw_expect_int(op, 1, "LOCK.FORCE-RELEASE fr SLOT %lld", ha.slot);
	gw_expect_int(op, 0, "LOCK.FORCE-RELEASE fr SLOT %lld", ha.slot);
	struct hold one[] = {hb};
	freeReplyObject(expect_shared_state(op, "fr", "shared", 99, one, 1, -1));
	gw_sleep_ms(1500); /* a's next renewal (a third of its lease) is refused */
	gw_expect_err(a, "LOST forced", "LOCK.RELEASE fr");
	gw_expect_int(a, 0, "LOCK.RELEASE fr"); /* told once */
	gw_expect_int(b, 1, "LOCK.RELEASE fr");
	redisFree(a);
	redisFree(b);
	redisFree(op);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* Lock libraries' commands and scripts see a name held shared as held
 * (before, a script's SET took it over the readers: the stress harness
 * found it): SET NX refused, a script's write refused as on a lease, a
 * script's GET answers a value no client has, its PTTL -1; free again once
 * the readers go. */
static void test_scripts_see_shared(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g);
	(void)sh_acquire(a, "LOCK.ACQUIRE sc 5000 SHARED");
	gw_expect_nil(b, "SET sc v1 NX PX 5000");
	/* as on a name held exclusively: the script is told it is a lease */
	gw_expect_err(b, "ERR key 'sc' is a lease", "EVAL %s 1 sc v1",
		      "return redis.call('set',KEYS[1],ARGV[1],'NX','PX',5000)");
	redisReply *r = gw_cmd(b, "EVAL %s 1 sc", "return redis.call('get',KEYS[1])");
	assert_int_equal(r->type, REDIS_REPLY_STRING);
	assert_string_equal(r->str, "leasegate:shared");
	freeReplyObject(r);
	gw_expect_int(b, -1, "EVAL %s 1 sc", "return redis.call('pttl',KEYS[1])");
	gw_expect_int(a, 1, "LOCK.RELEASE sc");
	gw_expect_ok(b, "SET sc v1 NX PX 5000");
	gw_expect_nil(a, "LOCK.ACQUIRE sc 5000 SHARED"); /* and the other way round */
	redisFree(a);
	redisFree(b);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* LOCK.CHECK of a shared hold: 1 while the connection's hold (by its slot
 * and owner) holds, 0 once released or forced; from another connection,
 * 1 while a holder with that token holds. */
static void test_check(void **state)
{
	struct gw g;
	gw_start(&g, lh_mode_table(), NULL);
	redisContext *a = gw_connect(&g), *b = gw_connect(&g), *op = gw_connect(&g);
	struct hold ra = sh_acquire(a, "LOCK.ACQUIRE ck 3000 SHARED");
	struct hold rb = sh_acquire(b, "LOCK.ACQUIRE ck 3000 SHARED");
	gw_expect_int(a, 1, "LOCK.CHECK ck %lld", ra.token);
	gw_expect_int(op, 1, "LOCK.CHECK ck %lld", ra.token); /* a reader of that phase */
	gw_expect_int(a, 0, "LOCK.CHECK ck %lld", ra.token + 1);
	gw_expect_int(op, 1, "LOCK.FORCE-RELEASE ck SLOT %lld", ra.slot);
	gw_expect_int(a, 0, "LOCK.CHECK ck %lld", ra.token); /* its own slot is gone */
	gw_expect_int(b, 1, "LOCK.CHECK ck %lld", rb.token);
	gw_expect_int(b, 1, "LOCK.RELEASE ck");
	gw_expect_int(op, 0, "LOCK.CHECK ck %lld", ra.token); /* no reader left */
	struct hold s1 = sh_acquire(a, "LOCK.ACQUIRE cs 3000 LIMIT 2");
	gw_expect_int(op, 1, "LOCK.CHECK cs %lld", s1.token);
	gw_expect_int(op, 0, "LOCK.CHECK cs %lld", s1.token + 1);
	redisFree(a);
	redisFree(b);
	redisFree(op);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* ---- two gateways on one moto table ---- */

struct pair {
	struct gw a, b;
};

static void pair_up(struct pair *p)
{
	assert_true(gw_have_moto());
	const char *table = gw_new_table();
	gw_start(&p->a, table, "--holder-label", "gw-a", NULL);
	gw_start(&p->b, table, "--holder-label", "gw-b", NULL);
}

static void pair_down(struct pair *p)
{
	assert_int_equal(gw_signal(&p->a, SIGTERM), 0);
	assert_int_equal(gw_signal(&p->b, SIGTERM), 0);
}

/* Readers on both gateways hold at once, with one token; a writer on one
 * waits for the reader on the other, and its waiting stops new readers
 * there. */
static void test_pair_readers_writer(void **state)
{
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a), *b = gw_connect(&p.b);
	redisContext *w = gw_connect(&p.a), *late = gw_connect(&p.b);
	struct hold ha = sh_acquire(a, "LOCK.ACQUIRE x 3000 SHARED");
	struct hold hb = sh_acquire(b, "LOCK.ACQUIRE x 3000 SHARED");
	assert_int_equal(ha.token, hb.token);
	struct hold both[] = {ha, hb};
	freeReplyObject(expect_shared_state(b, "x", "shared", 99, both, 2, hb.slot));
	gw_send(w, "LOCK.ACQUIRE x 3000 WAIT 15000");
	gw_expect_no_reply(w, 1500, "a writer while readers on both gateways hold");
	redisReply *st = gw_cmd(late, "LOCK.STATE x");
	assert_int_equal(int_field(st, "writer-waiting"), 1);
	freeReplyObject(st);
	gw_expect_nil(late, "LOCK.ACQUIRE x 3000 SHARED"); /* behind the writer */
	gw_expect_int(a, 1, "LOCK.RELEASE x");
	gw_expect_no_reply(w, 1200, "a writer while gw-b's reader holds");
	long long t0 = gw_now_ms();
	gw_expect_int(b, 1, "LOCK.RELEASE x");
	long long tw = gw_token_within(w, 5000, "the writer after gw-b's reader left");
	printf("# writer on gw-a granted %lld ms after the last reader left on gw-b\n",
	       gw_now_ms() - t0);
	assert_true(tw > ha.token);
	lh_expect_state(late, "x", 1, "gw-a", 3000, tw, 0);
	redisFree(a);
	redisFree(b);
	redisFree(w);
	redisFree(late);
	pair_down(&p);
}

/* A semaphore across gateways: n holders in all; a holder's gateway
 * killed, the waiter on the other takes its slot after a whole lease. */
static void test_pair_semaphore_takeover(void **state)
{
	enum { LEASE = 2000 };
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a), *b = gw_connect(&p.b), *c = gw_connect(&p.b);
	struct hold ha = sh_acquire(a, "LOCK.ACQUIRE s 2000 LIMIT 2");
	struct hold hb = sh_acquire(b, "LOCK.ACQUIRE s 2000 LIMIT 2");
	gw_expect_nil(c, "LOCK.ACQUIRE s 2000 LIMIT 2");
	struct hold two[] = {ha, hb};
	freeReplyObject(expect_shared_state(c, "s", "limit", 2, two, 2, -1));
	gw_send(c, "LOCK.ACQUIRE s 2000 LIMIT 2 WAIT 15000");
	gw_expect_no_reply(c, 800, "a third holder");
	long long t0 = gw_now_ms();
	assert_int_equal(gw_signal(&p.a, SIGKILL), 128 + SIGKILL);
	redisReply *r = gw_reply_within(c, 10000);
	long long ms = gw_now_ms() - t0;
	printf("# LIMIT 2: gw-a killed, its slot taken on gw-b after %lld ms (lease %d)\n", ms,
	       LEASE);
	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_int_equal(r->element[1]->integer, ha.slot);
	assert_int_equal(r->element[0]->integer, ha.token + 1);
	freeReplyObject(r);
	assert_true(ms >= LEASE - LEASE / 3); /* never before its lease on the waiter's clock */
	struct hold now[] = {{ha.token + 1, ha.slot}, hb};
	freeReplyObject(expect_shared_state(b, "s", "limit", 2, now, 2, hb.slot));
	redisFree(a);
	redisFree(b);
	redisFree(c);
	assert_int_equal(gw_signal(&p.b, SIGTERM), 0);
}

/* A detached semaphore hold taken on one gateway is renewed and released
 * from the other, and seen released there. */
static void test_pair_detached(void **state)
{
	struct pair p;
	pair_up(&p);
	redisContext *a = gw_connect(&p.a), *b = gw_connect(&p.b);
	char sec[64];
	struct hold h = sh_detached(a, sec, sizeof(sec), "LOCK.ACQUIRE pd 3000 LIMIT 1 DETACH");
	gw_expect_nil(b, "LOCK.ACQUIRE pd 3000 LIMIT 1");
	gw_expect_int(b, 1, "LOCK.RENEW pd %lld %s", h.token, sec);
	gw_expect_int(b, 1, "LOCK.RELEASE pd %lld %s", h.token, sec);
	struct hold again = sh_acquire(a, "LOCK.ACQUIRE pd 3000 LIMIT 1");
	assert_int_equal(again.token, h.token + 1); /* its slot's fence, raised */
	redisFree(a);
	redisFree(b);
	pair_down(&p);
}

/* Readers admitted by a writer's release go first, before a lock
 * library's script too: with the admitted reader's gateway stopped, a
 * script's take of the name is refused; once it runs again its reader is
 * granted, then the script's take goes through after it. */
static void test_pair_admitted_before_scripts(void **state)
{
	struct pair p;
	pair_up(&p);
	redisContext *w = gw_connect(&p.a), *s = gw_connect(&p.a), *r = gw_connect(&p.b);
	long long tw = lh_acquire(w, "ad", 3000);
	gw_send(r, "LOCK.ACQUIRE ad 3000 SHARED WAIT 20000");
	gw_expect_no_reply(r, 1500, "a reader behind the writer"); /* it registers */
	assert_int_equal(gw_signal(&p.b, SIGSTOP), 0);
	gw_expect_int(w, 1, "LOCK.RELEASE ad"); /* admits the reader */
	gw_expect_err(s, "ERR key 'ad' is a lease", "EVAL %s 1 ad v",
		      "return redis.call('set',KEYS[1],ARGV[1],'NX','PX',3000)");
	assert_int_equal(gw_signal(&p.b, SIGCONT), 0);
	redisReply *g = gw_reply_within(r, 5000);
	assert_int_equal(g->type, REDIS_REPLY_ARRAY);
	assert_true(g->element[0]->integer > tw);
	freeReplyObject(g);
	gw_expect_int(r, 1, "LOCK.RELEASE ad");
	gw_expect_ok(s, "SET ad v NX PX 3000");
	redisFree(w);
	redisFree(s);
	redisFree(r);
	pair_down(&p);
}

#define T(f) cmocka_unit_test_teardown(f, gw_teardown)

int main(void)
{
	const struct CMUnitTest one[] = {
		T(test_readers_then_writer), T(test_semaphore), T(test_own_hold),
		T(test_bad_input),	     T(test_detached),	T(test_force_one_holder),
		T(test_scripts_see_shared),  T(test_check),
	};
	const struct CMUnitTest pair[] = {
		T(test_pair_readers_writer),
		T(test_pair_semaphore_takeover),
		T(test_pair_detached),
		T(test_pair_admitted_before_scripts),
	};
	int fails = cmocka_run_group_tests_name("embedded store", one, lh_group_embedded, NULL);
	fails += cmocka_run_group_tests_name("moto", one, lh_group_moto, NULL);
	fails += cmocka_run_group_tests_name("two gateways on moto", pair, NULL, NULL);
	return fails;
}
