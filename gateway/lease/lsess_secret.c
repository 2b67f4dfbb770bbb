/*
 * lsess_secret: the secrets of adoptable leases (LOCK.ACQUIRE ... ADOPTABLE).
 *
 * A secret is 128 random bits, given to the client once, as 32 lowercase
 * hex digits; the lock item keeps only its SHA-256 (secretHash, lowercase
 * hex), so that reading the table, or LOCK.STATE, tells nobody how to
 * renew, release or adopt the lease. Not a password store: the secret is
 * random and long, so one unsalted hash is enough.
 */
#include "gateway/lease/lsess_int.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

bool ls_secret_hash(const char *secret, size_t len, char *hash)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	if (secret == NULL || len == 0 || len > LS_SECRET_MAX ||
	    !EVP_Digest(secret, len, md, &n, EVP_sha256(), NULL) || n * 2 != STORE_SECRET_HASH_LEN)
		return false;
	to_hex(md, n, hash);
	return true;
}

bool ls_secret_new(char *secret, char *hash)
{
	unsigned char raw[LS_SECRET_LEN / 2];
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return false;
	to_hex(raw, sizeof(raw), secret);
	return ls_secret_hash(secret, LS_SECRET_LEN, hash);
}
