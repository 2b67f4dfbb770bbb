/*
 * test_auth: the process's users (auth.c) — --aclfile read and refused
 * (bad line, group/other-readable with passwords), reloads all or
 * nothing, logins, the failures' counters and slowdown per (user,
 * address) —
 * and PostgreSQL's view of the ACL users (gateway/pg/pg_auth.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <openssl/evp.h>

#include "gateway/config.h"
#include "gateway/conn/acl.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"
#include "gateway/obs/log.h"

struct world {
	struct cfg cfg;
	struct event_base *base;
	struct srv *srv;
	struct auth *auth;
	char path[64];
};

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	char err[256];
	assert_true(log_open(NULL, LOG_LVL_ERROR, false, err,
			     sizeof(err))); /* not a line per failure */
	snprintf(w->path, sizeof(w->path), "/tmp/lg-test-auth-%d.acl", (int)getpid());
	write_file(w->path,
		   "user default off\n"
		   "user alice on >alicepw ~orders:* +@lock\n"
		   "user bob on #6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b "
		   "~* +@all\n"
		   "user nopw on nopass ~* +@all\n"
		   "user gone off >x ~* +@all\n",
		   0600);
	char *argv[] = {"t", "--aclfile", w->path, NULL};
	char *envp[] = {NULL};
	assert_int_equal(cfg_load(&w->cfg, 3, argv, envp, err, sizeof(err)), CFG_OK);
	w->base = event_base_new();
	w->srv = srv_new(w->base, &w->cfg, w->cfg.maxclients, "--maxclients");
	assert_non_null(w->srv);
	w->auth = auth_new(&w->cfg, w->base, NULL, NULL, err, sizeof(err));
	if (w->auth == NULL)
		fail_msg("%s", err);
	srv_set_auth(w->srv, w->auth);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	srv_free(w->srv);
	auth_free(w->auth);
	event_base_free(w->base);
	unlink(w->path);
	free(w);
	return 0;
}

/* A connection of the registry, as a front-end's would be (not listed). */
static void conn_at(struct world *w, struct conn *c, const char *addr)
{
	memset(c, 0, sizeof(*c));
	c->srv = w->srv;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	auth_start(c, &w->cfg);
}

static void test_logins(void **state)
{
	struct world *w = *state;
	struct conn c;
	conn_at(w, &c, "10.0.0.1:5000");
	/* default is off: nobody until AUTH */
	assert_false(c.authenticated);
	assert_null(c.acl);
	assert_false(auth_default_nopass(&c, &w->cfg));
	assert_true(auth_login(&c, &w->cfg, "alice", "alicepw", 7));
	assert_string_equal(c.user, "alice");
	assert_ptr_equal(c.acl, acl_find(auth_acl(w->auth), "alice", 5));
	assert_true(auth_login(&c, &w->cfg, "bob", "1", 1)); /* sha256("1") */
	assert_true(auth_login(&c, &w->cfg, "nopw", "whatever", 8));
	/* a failure leaves the connection as it was */
	assert_false(auth_login(&c, &w->cfg, "alice", "nope", 4));
	assert_string_equal(c.user, "nopw");
	assert_false(auth_login(&c, &w->cfg, "gone", "x", 1)); /* off */
	assert_false(auth_login(&c, &w->cfg, "nobody", "x", 1));
	assert_false(auth_login(&c, &w->cfg, NULL, "x", 1)); /* default, off */
	assert_int_equal(auth_failures(w->auth, AUTH_REDIS), 4);
	assert_int_equal(auth_failures(w->auth, AUTH_PG), 0);
}

static void test_slowdown(void **state)
{
	struct world *w = *state;
	struct conn a, a2, b;
	conn_at(w, &a, "10.0.0.1:5000");
	conn_at(w, &a2, "10.0.0.1:6000"); /* the same host, another port */
	conn_at(w, &b, "10.0.0.2:5000");
	assert_int_equal(auth_delay_ms(&a, "alice"), 0);
	int64_t want[] = {100, 200, 400, 800, 1600, 3200, 5000, 5000};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_false(auth_login(&a, &w->cfg, "alice", "bad", 3));
		assert_int_equal(auth_delay_ms(&a, "alice"), want[i]);
		assert_int_equal(auth_delay_ms(&a2, "alice"), want[i]);
	}
	assert_int_equal(auth_delay_ms(&b, "alice"), 0); /* another address */
	auth_note(&b, AUTH_PG, "x", false);
	assert_int_equal(auth_delay_ms(&b, "x"), 100);
	assert_int_equal(auth_failures(w->auth, AUTH_PG), 1);
	/* a success resets the (user, address) */
	assert_true(auth_login(&a2, &w->cfg, "alice", "alicepw", 7));
	assert_int_equal(auth_delay_ms(&a, "alice"), 0);
	assert_int_equal(auth_delay_ms(&b, "x"), 100);
	/* --auth-max-delay 0: no slowdown */
	w->cfg.auth_max_delay_ms = 0;
	assert_int_equal(auth_delay_ms(&b, "x"), 0);
}

/* Counted per (user, address): one good login from an address does not
 * forgive the guesses at another user's password from it. */
static void test_slowdown_per_user(void **state)
{
	struct world *w = *state;
	struct conn a;
	conn_at(w, &a, "10.0.0.9:5000");
	for (int i = 0; i < 4; i++)
		assert_false(auth_login(&a, &w->cfg, "bob", "guess", 5));
	assert_int_equal(auth_delay_ms(&a, "bob"), 800);
	assert_int_equal(auth_delay_ms(&a, "alice"), 0); /* alice has no failure there */
	assert_true(auth_login(&a, &w->cfg, "alice", "alicepw", 7));
	assert_int_equal(auth_delay_ms(&a, "bob"), 800); /* still */
	assert_false(auth_login(&a, &w->cfg, "bob", "guess2", 6));
	assert_int_equal(auth_delay_ms(&a, "bob"), 1600);
	/* NULL is default */
	assert_false(auth_login(&a, &w->cfg, NULL, "nope", 4));
	assert_int_equal(auth_delay_ms(&a, NULL), 100);
	assert_int_equal(auth_delay_ms(&a, "default"), 100);
	/* bob's own success forgives bob's */
	assert_true(auth_login(&a, &w->cfg, "bob", "1", 1));
	assert_int_equal(auth_delay_ms(&a, "bob"), 0);
}

/* Many addresses: a fixed table, the oldest forgotten. */
static void test_slowdown_bounded(void **state)
{
	struct world *w = *state;
	struct conn c;
	char addr[64];
	for (int i = 0; i < 20000; i++) {
		snprintf(addr, sizeof(addr), "10.%d.%d.%d:1", i >> 16, (i >> 8) & 255, i & 255);
		conn_at(w, &c, addr);
		auth_note(&c, AUTH_REDIS, "x", false);
	}
	assert_int_equal(auth_failures(w->auth, AUTH_REDIS), 20000);
	conn_at(w, &c, "10.0.78.31:1"); /* the last one is remembered */
	assert_int_equal(auth_delay_ms(&c, "x"), 100);
	unsigned remembered = 0;
	for (int i = 0; i < 20000; i++) {
		snprintf(addr, sizeof(addr), "10.%d.%d.%d:1", i >> 16, (i >> 8) & 255, i & 255);
		conn_at(w, &c, addr);
		remembered += auth_delay_ms(&c, "x") > 0;
	}
	assert_true(remembered <= 4096);
	assert_true(remembered > 1000);
}

static void test_reload(void **state)
{
	struct world *w = *state;
	struct conn c;
	char err[512];
	conn_at(w, &c, "10.0.0.3:1");
	assert_true(auth_login(&c, &w->cfg, "alice", "alicepw", 7));
	/* a bad line: nothing changes */
	write_file(w->path, "user alice on >newpw ~* +@all\nuser x on +@bogus\n", 0600);
	assert_false(auth_reload(w->auth, w->srv, err, sizeof(err)));
	char want[300];
	snprintf(want, sizeof(want), "%s:2: unknown category 'bogus'", w->path);
	assert_string_equal(err, want);
	assert_true(auth_login(&c, &w->cfg, "alice", "alicepw", 7));
	/* readable by others, with passwords: refused as ssh refuses a key */
	write_file(w->path, "user alice on >newpw ~* +@all\n", 0644);
	assert_false(auth_reload(w->auth, w->srv, err, sizeof(err)));
	assert_non_null(strstr(err, "accessible by group or others (mode 0644)"));
	assert_non_null(strstr(err, "chmod 600"));
	write_file(w->path, "user alice on >newpw ~* +@all\n", 0640);
	assert_false(auth_reload(w->auth, w->srv, err, sizeof(err)));
	/* without passwords, any mode will do */
	write_file(w->path, "user alice on nopass ~* +@all\n", 0644);
	assert_true(auth_reload(w->auth, w->srv, err, sizeof(err)));
	write_file(w->path, "user alice on >newpw ~* +@all\n", 0600);
	assert_true(auth_reload(w->auth, w->srv, err, sizeof(err)));
	assert_false(auth_login(&c, &w->cfg, "alice", "alicepw", 7));
	assert_true(auth_login(&c, &w->cfg, "alice", "newpw", 5));
	/* the file no longer defines default: on, nopass (no --requirepass) */
	conn_at(w, &c, "10.0.0.3:2");
	assert_true(c.authenticated);
	assert_string_equal(c.user, "default");
}

static void test_file_refused_at_start(void **state)
{
	struct world *w = *state;
	char err[512];
	write_file(w->path,
		   "user a on #6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b\n",
		   0604);
	assert_null(auth_new(&w->cfg, w->base, NULL, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "holds passwords and is accessible by group or others"));
	write_file(w->path, "user a on\nuser b bad\n", 0600);
	assert_null(auth_new(&w->cfg, w->base, NULL, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, ":2: rule 1 is no rule"));
	unlink(w->path);
	assert_null(auth_new(&w->cfg, w->base, NULL, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "bad value for --aclfile: cannot read"));
}

/* Without --aclfile: default, --requirepass. */
static void test_requirepass_default(void **state)
{
	struct world *w = *state;
	struct cfg cfg = w->cfg;
	char err[256];
	cfg.aclfile[0] = '\0';
	snprintf(cfg.requirepass, sizeof(cfg.requirepass), "rp");
	struct auth *a = auth_new(&cfg, w->base, NULL, NULL, err, sizeof(err));
	assert_non_null(a);
	assert_false(auth_has_file(a));
	srv_set_auth(w->srv, a);
	struct conn c;
	conn_at(w, &c, "10.0.0.4:1");
	assert_false(c.authenticated);
	assert_false(auth_login(&c, &cfg, "default", "nope", 4));
	assert_true(auth_login(&c, &cfg, NULL, "rp", 2));
	assert_false(auth_reload(a, w->srv, err, sizeof(err))); /* no file to load */
	srv_set_auth(w->srv, w->auth);
	auth_free(a);
}

/* --- PostgreSQL --- */

static void test_pg_acl_users(void **state)
{
	struct world *w = *state;
	char err[256];
	struct cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.pg_auth = CFG_PG_SCRAM;
	struct auth_pg *pg = auth_pg_new(&cfg, err, sizeof(err));
	assert_non_null(pg);
	assert_int_equal(auth_pg_method(pg), AUTH_PG_TRUST); /* no users at all */
	auth_set_pg(w->auth, pg);
	assert_int_equal(auth_pg_method(pg), AUTH_PG_SCRAM);
	/* >password: SCRAM from the verifier derived at load */
	assert_int_equal(auth_pg_method_for(pg, "alice"), AUTH_PG_SCRAM);
	assert_null(auth_pg_why_not(pg, "alice", false));
	assert_true(auth_pg_password_check(pg, "alice", "alicepw"));
	assert_false(auth_pg_password_check(pg, "alice", "nope"));
	/* MD5 from the same derivation */
	unsigned char salt[4] = {1, 2, 3, 4}, d[16];
	char inner[33], resp[36] = "md5";
	unsigned int n;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_md5(), NULL);
	EVP_DigestUpdate(ctx, "alicepwalice", 12);
	EVP_DigestFinal_ex(ctx, d, &n);
	for (int i = 0; i < 16; i++)
		snprintf(inner + 2 * i, 3, "%02x", d[i]);
	EVP_DigestInit_ex(ctx, EVP_md5(), NULL);
	EVP_DigestUpdate(ctx, inner, 32);
	EVP_DigestUpdate(ctx, salt, 4);
	EVP_DigestFinal_ex(ctx, d, &n);
	EVP_MD_CTX_free(ctx);
	for (int i = 0; i < 16; i++)
		snprintf(resp + 3 + 2 * i, 3, "%02x", d[i]);
	assert_true(auth_pg_md5_check(pg, "alice", salt, resp));
	assert_false(auth_pg_md5_check(pg, "bob", salt, resp));
	/* #digest only: cleartext, over TLS only */
	assert_int_equal(auth_pg_method_for(pg, "bob"), AUTH_PG_PASSWORD);
	assert_non_null(strstr(auth_pg_why_not(pg, "bob", false), "over TLS only"));
	assert_null(auth_pg_why_not(pg, "bob", true));
	assert_true(auth_pg_password_check(pg, "bob", "1"));
	assert_false(auth_pg_password_check(pg, "bob", "2"));
	/* nopass: let in */
	assert_int_equal(auth_pg_method_for(pg, "nopw"), AUTH_PG_TRUST);
	/* off and unknown: the usual method, and refused */
	assert_int_equal(auth_pg_method_for(pg, "gone"), AUTH_PG_SCRAM);
	assert_false(auth_pg_password_check(pg, "gone", "x"));
	assert_int_equal(auth_pg_method_for(pg, "nobody"), AUTH_PG_SCRAM);
	assert_null(auth_pg_why_not(pg, "nobody", false));
	/* the principal: the ACL user's rules; off refused */
	struct conn c;
	conn_at(w, &c, "10.0.0.5:1");
	assert_true(auth_pg_login(&c, "alice"));
	assert_ptr_equal(c.acl, acl_find(auth_acl(w->auth), "alice", 5));
	assert_false(c.acl_fallback);
	conn_at(w, &c, "10.0.0.5:1");
	assert_false(auth_pg_login(&c, "gone"));
	assert_false(c.authenticated);
	/* a user of --pg-users alone: default's rules (here off: nothing) */
	assert_true(auth_pg_login(&c, "pguser"));
	assert_true(c.acl_fallback);
	assert_ptr_equal(c.acl, acl_find(auth_acl(w->auth), "default", 7));
	auth_set_pg(w->auth, NULL);
	auth_pg_free(pg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_logins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slowdown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slowdown_per_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slowdown_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_refused_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requirepass_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pg_acl_users, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
