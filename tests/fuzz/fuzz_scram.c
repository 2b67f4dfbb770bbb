/*
 * fuzz_scram: libFuzzer target for the server side of SCRAM-SHA-256
 * (gateway/conn/auth_pg.c), what a client sends before it is
 * authenticated. The input is cut at its first NUL byte into a
 * client-first-message and a client-final-message.
 *
 * Contracts checked: a server-first-message fits its buffer and is
 * "r=<nonce>,s=<salt>,i=4096" with the client's nonce first; no final
 * message passes without the right proof (the fuzzer cannot know the
 * password), and the exchange cannot be finished twice.
 * Build: `make fuzz`, or by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. \
 *     tests/fuzz/fuzz_scram.c gateway/conn/auth_pg.c gateway/config.c \
 *     -lcrypto -o build/fuzz_scram
 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, '\0', size);
	size_t first_len = nul ? (size_t)(nul - p) : size;
	const char *final = nul ? nul + 1 : p + size;
	size_t final_len = size - (size_t)(final - p);
	struct auth_scram x;
	char out[AUTH_SCRAM_MAX_MSG];
	if (!auth_scram_first(users(), &x, "u", p, first_len, "SERVERNONCE", out, sizeof(out)))
		return 0;
	check(strlen(out) < sizeof(out));
	check(strncmp(out, "r=", 2) == 0 && strstr(out, "SERVERNONCE,s=") != NULL);
	check(strstr(out, ",i=4096") != NULL);
	check(!auth_scram_final(&x, final, final_len, out, sizeof(out)));
	check(!auth_scram_final(&x, final, final_len, out, sizeof(out)));
	return 0;
}
