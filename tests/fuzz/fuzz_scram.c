/*
 * fuzz_scram: libFuzzer target for the server side of SCRAM-SHA-256
 * (gateway/pg/pg_auth.c), what a client sends before it is
 * authenticated. The input is cut at its first NUL byte into a
 * client-first-message and a client-final-message; the final message
 * ends at a second NUL, if any, and the byte after it picks the channel:
 * plain TCP (none, or 0), TLS with SCRAM-SHA-256 selected (1), TLS with
 * SCRAM-SHA-256-PLUS selected (2), PLUS without TLS (3).
 *
 * Contracts checked: a server-first-message fits its buffer and is
 * "r=<nonce>,s=<salt>,i=4096" with the client's nonce first; a refusal
 * with a reason gives an SQLSTATE too; PLUS without TLS, "p=" under
 * SCRAM-SHA-256, "n" or "y" under PLUS, and "y" where PLUS was offered
 * never start an exchange; no final message passes without the right
 * proof (the fuzzer cannot know the password), and the exchange cannot
 * be finished twice.
 * Build: `make fuzz`, or by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. \
 *     tests/fuzz/fuzz_scram.c gateway/pg/pg_auth.c gateway/config.c \
 *     -lcrypto -o build/fuzz_scram
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static struct auth_pg *users(void)
{
	static struct auth_pg *a;
	if (a == NULL) {
		static struct cfg c;
		char err[256];
		char *argv[] = {"fuzz", "--pg-password", "s3cret", NULL};
		char *env[] = {NULL};
		check(cfg_load(&c, 3, argv, env, err, sizeof(err)) == CFG_OK);
		a = auth_pg_new(&c, err, sizeof(err));
		check(a != NULL);
	}
	return a;
}

/* The channel of mode (see above); its binding data is fixed. */
static const struct auth_scram_chan *channel(unsigned mode)
{
	static const unsigned char cb[32] = "tls-server-end-point-of-a-cert!";
	static const struct auth_scram_chan chans[] = {
		{AUTH_SCRAM_SHA_256, NULL, 0},
		{AUTH_SCRAM_SHA_256, cb, sizeof(cb)},
		{AUTH_SCRAM_SHA_256_PLUS, cb, sizeof(cb)},
		{AUTH_SCRAM_SHA_256_PLUS, NULL, 0},
	};
	return &chans[mode % 4];
}

/* What the first message's gs2 flag may not be on chan. */
static void check_flag_rules(const struct auth_scram_chan *chan, const char *first, size_t len)
{
	bool plus = strcmp(chan->mech, AUTH_SCRAM_SHA_256_PLUS) == 0;
	char flag = len > 0 ? first[0] : '\0';
	check(!(plus && chan->cb_len == 0)); /* PLUS never offered without TLS */
	check(!(plus && (flag == 'n' || flag == 'y')));
	check(!(!plus && flag == 'p'));
	check(!(!plus && flag == 'y' && chan->cb_len > 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, '\0', size);
	size_t first_len = nul ? (size_t)(nul - p) : size;
	const char *final = nul ? nul + 1 : p + size;
	size_t final_len = size - (size_t)(final - p);
	const char *nul2 = memchr(final, '\0', final_len);
	unsigned mode = 0;
	if (nul2 != NULL) {
		mode = nul2 + 1 < p + size ? (unsigned char)nul2[1] : 0;
		final_len = (size_t)(nul2 - final);
	}
	const struct auth_scram_chan *chan = channel(mode);
	struct auth_scram x;
	char out[AUTH_SCRAM_MAX_MSG];
	if (!auth_scram_first(users(), &x, "u", chan, p, first_len, "SERVERNONCE", out,
			      sizeof(out))) {
		check(x.why == NULL || x.sqlstate != NULL);
		return 0;
	}
	check_flag_rules(chan, p, first_len);
	check(strlen(out) < sizeof(out));
	check(strncmp(out, "r=", 2) == 0 && strstr(out, "SERVERNONCE,s=") != NULL);
	check(strstr(out, ",i=4096") != NULL);
	check(!auth_scram_final(&x, final, final_len, out, sizeof(out)));
	check(!auth_scram_final(&x, final, final_len, out, sizeof(out)));
	return 0;
}
