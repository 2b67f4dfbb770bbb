/*
 * test_scram_bind: SCRAM-SHA-256-PLUS, the channel binding of
 * gateway/pg/pg_auth.c, as PostgreSQL does it: which mechanisms are
 * offered, a whole exchange bound to tls-server-end-point data (the client
 * side computed here from the password, as libpq would), a binding that
 * differs refused with 28000, and the gs2 flags each mechanism refuses
 * (RFC 5802 section 6) with PostgreSQL's SQLSTATE and message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"

#define PASSWORD "pencil"
#define PLUS	 AUTH_SCRAM_SHA_256_PLUS
#define PLAIN	 AUTH_SCRAM_SHA_256
#define CB_FLAG	 "p=tls-server-end-point,,"

/* A server certificate's end point, as a TLS connection would give. */
static const unsigned char cb32[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
				       12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
				       23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static struct auth_pg *users(void)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate", "--pg-password", PASSWORD, NULL};
	char *env[] = {NULL};
	assert_int_equal(cfg_load(&c, 3, argv, env, err, sizeof(err)), CFG_OK);
	struct auth_pg *a = auth_pg_new(&c, err, sizeof(err));
	assert_non_null(a);
	return a;
}

static void b64(const unsigned char *in, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

/* The client-final-message for server_first (r=,s=,i=), as a client
 * that knows the password and binds cbind_input (the gs2 header and the
 * channel data it saw) computes it. */
static void client_final(const char *bare, const char *server_first,
			 const unsigned char *cbind_input, size_t cbind_len, char *out, size_t n)
{
	char nonce[256], salt64[128];
	int iter = 0;
	assert_int_equal(sscanf(server_first, "r=%255[^,],s=%127[^,],i=%d", nonce, salt64, &iter),
			 3);
	unsigned char salt[96], salted[32], ckey[32], stored[32], sig[32], proof[32];
	int sl = EVP_DecodeBlock(salt, (const unsigned char *)salt64, (int)strlen(salt64));
	sl -= (salt64[strlen(salt64) - 1] == '=') + (salt64[strlen(salt64) - 2] == '=');
	PKCS5_PBKDF2_HMAC(PASSWORD, (int)strlen(PASSWORD), salt, sl, iter, EVP_sha256(), 32,
			  salted);
	unsigned int len = 32;
	HMAC(EVP_sha256(), salted, 32, (const unsigned char *)"Client Key", 10, ckey, &len);
	SHA256(ckey, 32, stored);
	char c64[256], without[600], auth[1400], p64[64];
	b64(cbind_input, cbind_len, c64);
	assert_true((size_t)snprintf(without, sizeof(without), "c=%s,r=%s", c64, nonce) <
		    sizeof(without));
	snprintf(auth, sizeof(auth), "%s,%s,%s", bare, server_first, without);
	HMAC(EVP_sha256(), stored, 32, (const unsigned char *)auth, strlen(auth), sig, &len);
	for (int i = 0; i < 32; i++)
		proof[i] = ckey[i] ^ sig[i];
	b64(proof, 32, p64);
	assert_true((size_t)snprintf(out, n, "%s,p=%s", without, p64) < n);
}

/* One exchange on chan: the client sends first (gs2 header + bare),
 * then binds gs2 + data (data_len bytes). The final verdict. */
static bool exchange(struct auth_pg *a, struct auth_scram *x, const struct auth_scram_chan *chan,
		     const char *gs2, const unsigned char *data, size_t data_len)
{
	const char *bare = "n=,r=clientnonce";
	char first[128], sfirst[AUTH_SCRAM_MAX_MSG], final[AUTH_SCRAM_MAX_MSG];
	char out[AUTH_SCRAM_MAX_MSG];
	snprintf(first, sizeof(first), "%s%s", gs2, bare);
	assert_true(auth_scram_first(a, x, "leasegate", chan, first, strlen(first), NULL, sfirst,
				     sizeof(sfirst)));
	unsigned char input[128];
	memcpy(input, gs2, strlen(gs2));
	if (data_len > 0)
		memcpy(input + strlen(gs2), data, data_len);
	client_final(bare, sfirst, input, strlen(gs2) + data_len, final, sizeof(final));
	return auth_scram_final(x, final, strlen(final), out, sizeof(out));
}

static void test_mechanisms_offered(void **state)
{
	const char *m[2];
	assert_int_equal(auth_scram_mechs(0, m), 1); /* no TLS */
	assert_string_equal(m[0], "SCRAM-SHA-256");
	assert_int_equal(auth_scram_mechs(32, m), 2); /* TLS: PLUS first */
	assert_string_equal(m[0], "SCRAM-SHA-256-PLUS");
	assert_string_equal(m[1], "SCRAM-SHA-256");
}

/* PLUS with the channel's own data gets in; the same password with the
 * data of another certificate (a relay in the middle) is refused. */
static void test_plus_binds_the_channel(void **state)
{
	struct auth_pg *a = users();
	struct auth_scram x;
	const struct auth_scram_chan chan = {PLUS, cb32, sizeof(cb32)};
	assert_true(exchange(a, &x, &chan, CB_FLAG, cb32, sizeof(cb32)));
	assert_null(x.why);
	unsigned char other[32];
	memcpy(other, cb32, sizeof(other));
	other[31] ^= 0x80;
	assert_false(exchange(a, &x, &chan, CB_FLAG, other, sizeof(other)));
	assert_string_equal(x.sqlstate, "28000");
	assert_string_equal(x.why, "SCRAM channel binding check failed");
	/* the header alone, no data */
	assert_false(exchange(a, &x, &chan, CB_FLAG, NULL, 0));
	assert_string_equal(x.why, "SCRAM channel binding check failed");
	/* a 48-byte hash (a SHA-384 certificate) */
	unsigned char cb48[48];
	memset(cb48, 0x5a, sizeof(cb48));
	const struct auth_scram_chan chan48 = {PLUS, cb48, sizeof(cb48)};
	assert_true(exchange(a, &x, &chan48, CB_FLAG, cb48, sizeof(cb48)));
	auth_pg_free(a);
}

/* Without PLUS: "n" binds nothing; "y" only where PLUS was not offered;
 * the c= attribute must repeat the flag the first message had. */
static void test_without_plus(void **state)
{
	struct auth_pg *a = users();
	struct auth_scram x;
	const struct auth_scram_chan tls = {PLAIN, cb32, sizeof(cb32)};
	assert_true(exchange(a, &x, NULL, "n,,", NULL, 0));
	assert_true(exchange(a, &x, NULL, "y,,", NULL, 0)); /* no TLS: nothing to bind */
	assert_true(exchange(a, &x, &tls, "n,,", NULL, 0)); /* TLS, the client chose not to */
	/* first "n", then c= of "y,,": not the flag it sent */
	char sfirst[AUTH_SCRAM_MAX_MSG], final[AUTH_SCRAM_MAX_MSG], out[AUTH_SCRAM_MAX_MSG];
	assert_true(auth_scram_first(a, &x, "leasegate", NULL, "n,,n=,r=abc", 11, NULL, sfirst,
				     sizeof(sfirst)));
	client_final("n=,r=abc", sfirst, (const unsigned char *)"y,,", 3, final, sizeof(final));
	assert_false(auth_scram_final(&x, final, strlen(final), out, sizeof(out)));
	assert_string_equal(x.sqlstate, "08P01");
	assert_string_equal(x.why,
			    "unexpected SCRAM channel-binding attribute in client-final-message");
	auth_pg_free(a);
}

/* The client-first-messages each channel refuses, and how. */
static void test_refusals(void **state)
{
	static const struct {
		const char *mech;
		size_t cb_len; /* 0: no TLS */
		const char *first, *sqlstate, *why;
	} cases[] = {
		{PLAIN, 0, CB_FLAG "n=,r=a", "08P01", "without channel binding, but the SCRAM"},
		{PLAIN, 32, CB_FLAG "n=,r=a", "08P01", "without channel binding, but the SCRAM"},
		{PLAIN, 32, "y,,n=,r=a", "28000", "SCRAM channel binding negotiation error"},
		{PLUS, 32, "n,,n=,r=a", "08P01", "does not include channel binding data"},
		{PLUS, 32, "y,,n=,r=a", "08P01", "does not include channel binding data"},
		{PLUS, 32, "p=tls-unique,,n=,r=a", "08P01",
		 "unsupported SCRAM channel-binding type"},
		{PLUS, 0, CB_FLAG "n=,r=a", "08P01", "invalid SASL authentication mechanism"},
		{"SCRAM-SHA-1", 32, "n,,n=,r=a", "08P01", "invalid SASL authentication mechanism"},
	};
	struct auth_pg *a = users();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct auth_scram x;
		char out[AUTH_SCRAM_MAX_MSG];
		const struct auth_scram_chan chan = {cases[i].mech, cb32, cases[i].cb_len};
		if (auth_scram_first(a, &x, "leasegate", &chan, cases[i].first,
				     strlen(cases[i].first), NULL, out, sizeof(out)))
			fail_msg("case %zu: %s over %s accepted", i, cases[i].first, cases[i].mech);
		if (x.why == NULL || strstr(x.why, cases[i].why) == NULL)
			fail_msg("case %zu: %s", i, x.why ? x.why : "(no reason)");
		assert_string_equal(x.sqlstate, cases[i].sqlstate);
	}
	auth_pg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mechanisms_offered),
		cmocka_unit_test(test_plus_binds_the_channel),
		cmocka_unit_test(test_without_plus),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
