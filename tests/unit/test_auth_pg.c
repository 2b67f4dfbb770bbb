/*
 * test_auth_pg: the PostgreSQL password checks of gateway/conn/auth —
 * SCRAM-SHA-256 against RFC 7677's example exchange, verifiers as
 * PostgreSQL stores them, the users file, MD5, cleartext (and where it is
 * asked), and unknown users failing the same way as a wrong password.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/transport.h"

/* RFC 7677, section 3. */
#define RFC_CLIENT_FIRST "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_NONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define RFC_SERVER_FIRST                                                                           \
	"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define RFC_CLIENT_FINAL                                                                           \
	"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+"           \
	"Ute9ytag9zjfMHg"                                                                          \
	"sqmmiz7AndVQ="
#define RFC_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

static char users_path[64];

static struct cfg cfg_with(const char *password, const char *users, int64_t method)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate", NULL};
	char *env[] = {NULL};
	assert_int_equal(cfg_load(&c, 1, argv, env, err, sizeof(err)), CFG_OK);
	snprintf(c.pg_password, sizeof(c.pg_password), "%s", password ? password : "");
	snprintf(c.pg_users, sizeof(c.pg_users), "%s", users ? users : "");
	c.pg_auth = method;
	return c;
}

/* A users file of the given text; its path in users_path. */
static const char *users_file(const char *text)
{
	snprintf(users_path, sizeof(users_path), "/tmp/lg-test-users-XXXXXX");
	int fd = mkstemp(users_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return users_path;
}

/* The verifier of "pencil" with RFC 7677's salt. */
static void rfc_verifier(char *out, size_t n)
{
	unsigned char salt[32];
	int sl = EVP_DecodeBlock(salt, (const unsigned char *)"W22ZaJ0SNY7soEsUEjb6gQ==", 24);
	assert_int_equal(sl, 18); /* 16 bytes and two of padding */
	assert_true(auth_scram_verifier("pencil", salt, 16, 4096, out, n));
}

static struct auth_pg *rfc_users(void)
{
	char v[256], text[400], err[256];
	rfc_verifier(v, sizeof(v));
	snprintf(text, sizeof(text), "# comment\n\nuser:%s\n", v);
	struct cfg c = cfg_with(NULL, users_file(text), CFG_PG_SCRAM);
	struct auth_pg *a = auth_pg_new(&c, err, sizeof(err));
	unlink(users_path);
	assert_non_null(a);
	return a;
}

static void test_rfc7677_exchange(void **state)
{
	struct auth_pg *a = rfc_users();
	struct auth_scram x;
	char out[AUTH_SCRAM_MAX_MSG];
	assert_int_equal(auth_pg_method(a), AUTH_PG_SCRAM);
	assert_int_equal(auth_pg_users(a), 1);
	assert_true(auth_scram_first(a, &x, "user", NULL, RFC_CLIENT_FIRST,
				     strlen(RFC_CLIENT_FIRST), RFC_SERVER_NONCE, out, sizeof(out)));
	assert_string_equal(out, RFC_SERVER_FIRST);
	assert_true(
		auth_scram_final(&x, RFC_CLIENT_FINAL, strlen(RFC_CLIENT_FINAL), out, sizeof(out)));
	assert_string_equal(out, RFC_SERVER_FINAL);
	auth_pg_free(a);
}

static void test_scram_wrong_proof(void **state)
{
	struct auth_pg *a = rfc_users();
	struct auth_scram x;
	char out[AUTH_SCRAM_MAX_MSG];
	char bad[] = RFC_CLIENT_FINAL;
	bad[strlen(bad) - 3] ^= 1; /* one bit of the proof */
	assert_true(auth_scram_first(a, &x, "user", NULL, RFC_CLIENT_FIRST,
				     strlen(RFC_CLIENT_FIRST), RFC_SERVER_NONCE, out, sizeof(out)));
	assert_false(auth_scram_final(&x, bad, strlen(bad), out, sizeof(out)));
	/* another nonce than the one agreed */
	const char *other =
		"c=biws,r=rOprNGfwEbeRWgbNEkqOXX,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
	assert_true(auth_scram_first(a, &x, "user", NULL, RFC_CLIENT_FIRST,
				     strlen(RFC_CLIENT_FIRST), RFC_SERVER_NONCE, out, sizeof(out)));
	assert_false(auth_scram_final(&x, other, strlen(other), out, sizeof(out)));
	/* the final message once only */
	assert_false(
		auth_scram_final(&x, RFC_CLIENT_FINAL, strlen(RFC_CLIENT_FINAL), out, sizeof(out)));
	auth_pg_free(a);
}

/* An unknown user gets a server-first message of the same form, the same
 * salt every time, and fails at the proof like a wrong password. */
static void test_scram_unknown_user(void **state)
{
	struct auth_pg *a = rfc_users();
	struct auth_scram x;
	char first[AUTH_SCRAM_MAX_MSG], again[AUTH_SCRAM_MAX_MSG], out[AUTH_SCRAM_MAX_MSG];
	assert_true(auth_scram_first(a, &x, "nobody", NULL, RFC_CLIENT_FIRST,
				     strlen(RFC_CLIENT_FIRST), RFC_SERVER_NONCE, first,
				     sizeof(first)));
	assert_true(strncmp(first, "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=", 54) ==
		    0);
	assert_non_null(strstr(first, ",i=4096"));
	assert_false(
		auth_scram_final(&x, RFC_CLIENT_FINAL, strlen(RFC_CLIENT_FINAL), out, sizeof(out)));
	assert_true(auth_scram_first(a, &x, "nobody", NULL, RFC_CLIENT_FIRST,
				     strlen(RFC_CLIENT_FIRST), RFC_SERVER_NONCE, again,
				     sizeof(again)));
	assert_string_equal(first, again);
	auth_pg_free(a);
}

static void test_scram_malformed(void **state)
{
	struct auth_pg *a = rfc_users();
	struct auth_scram x;
	char out[AUTH_SCRAM_MAX_MSG];
	static const char *const bad_first[] = {
		"",
		"n",
		"p=tls-server-end-point,,n=,r=abc",
		"n,a=admin,n=,r=abc",
		"n,,r=abc",
		"n,,n=user",
		"n,,n=user,r=",
		"x,,n=user,r=abc",
	};
	for (size_t i = 0; i < sizeof(bad_first) / sizeof(*bad_first); i++)
		assert_false(auth_scram_first(a, &x, "user", NULL, bad_first[i],
					      strlen(bad_first[i]), NULL, out, sizeof(out)));
	/* a random server nonce, then a final message that is not one */
	assert_true(auth_scram_first(a, &x, "user", NULL, RFC_CLIENT_FIRST,
				     strlen(RFC_CLIENT_FIRST), NULL, out, sizeof(out)));
	assert_false(auth_scram_final(&x, "c=biws", 6, out, sizeof(out)));
	char big[AUTH_SCRAM_MAX_MSG + 10];
	memset(big, 'a', sizeof(big));
	assert_false(
		auth_scram_first(a, &x, "user", NULL, big, sizeof(big), NULL, out, sizeof(out)));
	auth_pg_free(a);
}

/* --pg-password: every user, its own SCRAM verifier made at start. */
static void test_password_option(void **state)
{
	char err[256];
	struct cfg c = cfg_with("s3cret", NULL, CFG_PG_SCRAM);
	struct auth_pg *a = auth_pg_new(&c, err, sizeof(err));
	assert_non_null(a);
	assert_int_equal(auth_pg_method(a), AUTH_PG_SCRAM);
	assert_int_equal(auth_pg_users(a), 0);
	assert_true(auth_pg_password_check(a, "leasegate", "s3cret"));
	assert_true(auth_pg_password_check(a, "anyone", "s3cret"));
	assert_false(auth_pg_password_check(a, "leasegate", "wrong"));
	assert_false(auth_pg_password_check(a, "leasegate", ""));
	auth_pg_free(a);
}

static void md5_response(const char *password, const char *user, const unsigned char salt[4],
			 char out[36])
{
	/* md5(md5(password + user) + salt), as libpq computes it */
	char inner[64], hex[33];
	unsigned char d[16];
	unsigned int n;
	snprintf(inner, sizeof(inner), "%s%s", password, user);
	EVP_Digest(inner, strlen(inner), d, &n, EVP_md5(), NULL);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	unsigned char buf[36];
	memcpy(buf, hex, 32);
	memcpy(buf + 32, salt, 4);
	EVP_Digest(buf, 36, d, &n, EVP_md5(), NULL);
	strcpy(out, "md5");
	for (int i = 0; i < 16; i++)
		snprintf(out + 3 + 2 * i, 3, "%02x", d[i]);
}

static void test_md5(void **state)
{
	char err[256], resp[36];
	const unsigned char salt[4] = {1, 2, 3, 4};
	/* --pg-password with --pg-auth md5 */
	struct cfg c = cfg_with("s3cret", NULL, CFG_PG_MD5);
	struct auth_pg *a = auth_pg_new(&c, err, sizeof(err));
	assert_non_null(a);
	assert_int_equal(auth_pg_method(a), AUTH_PG_MD5);
	md5_response("s3cret", "leasegate", salt, resp);
	assert_true(auth_pg_md5_check(a, "leasegate", salt, resp));
	assert_false(auth_pg_md5_check(a, "other", salt, resp)); /* the user is salted in */
	md5_response("wrong", "leasegate", salt, resp);
	assert_false(auth_pg_md5_check(a, "leasegate", salt, resp));
	assert_false(auth_pg_md5_check(a, "leasegate", salt, "md5"));
	auth_pg_free(a);

	/* a users file with an md5 secret, as pg_authid has it: md5(password + user) */
	char line[80], hex[33];
	unsigned char d[16];
	unsigned int n;
	EVP_Digest("pencilbob", 9, d, &n, EVP_md5(), NULL);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	snprintf(line, sizeof(line), "bob:md5%s\n", hex);
	c = cfg_with(NULL, users_file(line), CFG_PG_MD5);
	a = auth_pg_new(&c, err, sizeof(err));
	unlink(users_path);
	assert_non_null(a);
	md5_response("pencil", "bob", salt, resp);
	assert_true(auth_pg_md5_check(a, "bob", salt, resp));
	md5_response("pencil", "alice", salt, resp);
	assert_false(auth_pg_md5_check(a, "alice", salt, resp)); /* unknown */
	assert_true(auth_pg_password_check(a, "bob", "pencil"));
	assert_false(auth_pg_password_check(a, "bob", "pencil2"));
	assert_int_equal(auth_pg_method_for(a, "bob"), AUTH_PG_MD5);
	assert_int_equal(auth_pg_method_for(a, "alice"), AUTH_PG_MD5);
	auth_pg_free(a);
	/* an md5 secret under --pg-auth scram is asked by md5; unknown users
	 * get the configured method */
	c = cfg_with(NULL, users_file(line), CFG_PG_SCRAM);
	a = auth_pg_new(&c, err, sizeof(err));
	unlink(users_path);
	assert_non_null(a);
	assert_int_equal(auth_pg_method_for(a, "bob"), AUTH_PG_MD5);
	assert_int_equal(auth_pg_method_for(a, "alice"), AUTH_PG_SCRAM);
	auth_pg_free(a);
}

/* Cleartext against a SCRAM verifier of the users file. */
static void test_cleartext_scram_user(void **state)
{
	struct auth_pg *a = rfc_users();
	assert_int_equal(auth_pg_method_for(a, "user"), AUTH_PG_SCRAM);
	assert_true(auth_pg_password_check(a, "user", "pencil"));
	assert_false(auth_pg_password_check(a, "user", "pencil "));
	assert_false(auth_pg_password_check(a, "nobody", "pencil"));
	auth_pg_free(a);
}

/* A connection on fd (a socket of the given family), encrypted or not. */
static struct conn conn_on(int family, bool tls, int *fd)
{
	int sv[2];
	if (family == AF_UNIX) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		close(sv[1]);
		*fd = sv[0];
	} else {
		*fd = socket(family, SOCK_STREAM, 0); /* getsockname: its family */
		assert_true(*fd >= 0);
	}
	struct conn c;
	memset(&c, 0, sizeof(c));
	c.fd = *fd;
	c.transport = tls ? &transport_tls : &transport_plain;
	return c;
}

/* A cleartext password (--pg-auth password) is asked over TLS or a Unix
 * socket only, unless --pg-allow-cleartext-over-plain yes; the other
 * methods anywhere. */
static void test_cleartext_needs_tls(void **state)
{
	static const struct {
		int64_t method;
		bool allow, tls;
		int family;
		bool refused;
	} cases[] = {
		{CFG_PG_PASSWORD, false, false, AF_INET, true},
		{CFG_PG_PASSWORD, false, false, AF_INET6, true},
		{CFG_PG_PASSWORD, false, true, AF_INET, false},
		{CFG_PG_PASSWORD, false, false, AF_UNIX, false},
		{CFG_PG_PASSWORD, true, false, AF_INET, false},
		{CFG_PG_SCRAM, false, false, AF_INET, false},
		{CFG_PG_MD5, false, false, AF_INET, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char err[256];
		struct cfg cfg = cfg_with("s3cret", NULL, cases[i].method);
		cfg.pg_cleartext_plain = cases[i].allow;
		struct auth_pg *a = auth_pg_new(&cfg, err, sizeof(err));
		assert_non_null(a);
		int fd;
		struct conn c = conn_on(cases[i].family, cases[i].tls, &fd);
		const char *why = auth_pg_why_not(a, "u", auth_pg_cleartext_ok(a, &c));
		if ((why != NULL) != cases[i].refused)
			fail_msg("case %zu: %s", i, why ? why : "allowed");
		if (why != NULL) {
			assert_non_null(strstr(why, "--pg-auth password"));
			assert_non_null(strstr(why, "sslmode=require"));
			assert_non_null(strstr(why, "--pg-allow-cleartext-over-plain yes"));
		}
		close(fd);
		auth_pg_free(a);
	}
}

static void test_trust_and_bad_files(void **state)
{
	char err[256];
	struct cfg c = cfg_with(NULL, NULL, CFG_PG_SCRAM);
	struct auth_pg *a = auth_pg_new(&c, err, sizeof(err));
	assert_non_null(a);
	assert_int_equal(auth_pg_method(a), AUTH_PG_TRUST);
	auth_pg_free(a);

	c = cfg_with(NULL, "/nonexistent/users", CFG_PG_SCRAM);
	assert_null(auth_pg_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "--pg-users"));

	static const char *const bad[] = {
		"nocolon\n",
		":SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$a:b\n",
		"u:SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$short:short\n",
		"u:SCRAM-SHA-256$x:W22ZaJ0SNY7soEsUEjb6gQ==$a:b\n",
		"u:md5abc\n",
		"u:plaintext\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		c = cfg_with(NULL, users_file(bad[i]), CFG_PG_SCRAM);
		assert_null(auth_pg_new(&c, err, sizeof(err)));
		unlink(users_path);
		assert_non_null(strstr(err, "line 1"));
	}

	/* a good file that group or others may read: refused, no line read */
	static const mode_t refused[] = {0640, 0604, 0660, 0644};
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		c = cfg_with(NULL, users_file("bob:md5d8578edf8458ce06fbc5bb76a58c5ca4\n"),
			     CFG_PG_SCRAM);
		assert_int_equal(chmod(users_path, refused[i]), 0);
		assert_null(auth_pg_new(&c, err, sizeof(err)));
		assert_non_null(strstr(err, "chmod 600"));
		assert_int_equal(chmod(users_path, 0600), 0);
		a = auth_pg_new(&c, err, sizeof(err));
		assert_non_null(a);
		assert_int_equal(auth_pg_users(a), 1);
		auth_pg_free(a);
		unlink(users_path);
	}
}

/* A verifier made here reads back as one (the format PostgreSQL stores). */
static void test_verifier_format(void **state)
{
	char v[256];
	rfc_verifier(v, sizeof(v));
	assert_true(strncmp(v, "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$", 44) == 0);
	char small[20];
	const unsigned char salt[16] = {0};
	assert_false(auth_scram_verifier("pencil", salt, 16, 4096, small, sizeof(small)));
}

static void test_login(void **state)
{
	struct conn c;
	memset(&c, 0, sizeof(c));
	assert_true(auth_pg_login(&c, "leasegate"));
	assert_true(c.authenticated);
	assert_string_equal(c.user, "leasegate");
	/* no ACL file: the rules of default (every right) */
	assert_non_null(c.acl);
	assert_true(c.acl_fallback);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc7677_exchange),
		cmocka_unit_test(test_scram_wrong_proof),
		cmocka_unit_test(test_scram_unknown_user),
		cmocka_unit_test(test_scram_malformed),
		cmocka_unit_test(test_password_option),
		cmocka_unit_test(test_md5),
		cmocka_unit_test(test_cleartext_scram_user),
		cmocka_unit_test(test_cleartext_needs_tls),
		cmocka_unit_test(test_trust_and_bad_files),
		cmocka_unit_test(test_verifier_format),
		cmocka_unit_test(test_login),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
