/*
 * list_cursor: LOCK.LIST TABLE's cursors, sealed with AES-256-GCM under
 * the process's random key (see list_cursor.h).
 */
#include "gateway/redis/list_cursor.h"

#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#define KEY_LEN 32
#define RAW_MAX (LC_NONCE + STORE_CURSOR_MAX + LC_TAG)

/* The key, made at the first use (the process's own; never leaves it). */
static const unsigned char *key(void)
{
	static unsigned char k[KEY_LEN];
	static bool made;
	if (!made)
		made = RAND_bytes(k, KEY_LEN) == 1;
	return made ? k : NULL;
}

/* Runs AES-256-GCM over in (n bytes) into out, with nonce and user as
 * associated data; tag is written (seal) or checked (open). */
static bool gcm(bool seal, const char *user, const unsigned char *nonce, const unsigned char *in,
		int n, unsigned char *out, unsigned char *tag)
{
	const unsigned char *k = key();
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int len = 0, fin = 0;
	bool ok = k != NULL && x != NULL &&
		  EVP_CipherInit_ex(x, EVP_aes_256_gcm(), NULL, NULL, NULL, seal) == 1 &&
		  EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_IVLEN, LC_NONCE, NULL) == 1 &&
		  EVP_CipherInit_ex(x, NULL, NULL, k, nonce, seal) == 1 &&
		  EVP_CipherUpdate(x, NULL, &len, (const unsigned char *)user, (int)strlen(user)) ==
			  1 &&
		  EVP_CipherUpdate(x, out, &len, in, n) == 1 &&
		  (seal || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, LC_TAG, tag) == 1) &&
		  EVP_CipherFinal_ex(x, out + len, &fin) == 1 &&
		  (!seal || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, LC_TAG, tag) == 1);
	EVP_CIPHER_CTX_free(x);
	return ok && len + fin == n;
}

bool lc_seal(const char *user, const char *cursor, char out[LC_SEALED_MAX + 1])
{
	unsigned char raw[RAW_MAX];
	size_t n = strlen(cursor);
	if (n == 0 || n > STORE_CURSOR_MAX || RAND_bytes(raw, LC_NONCE) != 1 ||
	    !gcm(true, user, raw, (const unsigned char *)cursor, (int)n, raw + LC_NONCE,
		 raw + LC_NONCE + n))
		return false;
	EVP_EncodeBlock((unsigned char *)out, raw, (int)(LC_NONCE + n + LC_TAG));
	return true;
}

bool lc_open(const char *user, const char *sealed, size_t len, char cursor[STORE_CURSOR_MAX + 1])
{
	unsigned char raw[RAW_MAX + 3];
	if (len == 0 || len % 4 != 0 || len > LC_SEALED_MAX)
		return false;
	int got = EVP_DecodeBlock(raw, (const unsigned char *)sealed, (int)len);
	if (got < 0)
		return false;
	/* EVP_DecodeBlock counts the padding's bytes as zeros */
	size_t n = (size_t)got - (sealed[len - 1] == '=') - (sealed[len - 2] == '=');
	if (n <= LC_NONCE + LC_TAG || n > RAW_MAX)
		return false;
	/* one spelling per cursor: base64 leaves bits unused at its end */
	char canon[LC_SEALED_MAX + 1];
	EVP_EncodeBlock((unsigned char *)canon, raw, (int)n);
	if (strlen(canon) != len || memcmp(canon, sealed, len) != 0)
		return false;
	n -= LC_NONCE + LC_TAG;
	if (!gcm(false, user, raw, raw + LC_NONCE, (int)n, (unsigned char *)cursor,
		 raw + LC_NONCE + n))
		return false;
	cursor[n] = '\0';
	return strlen(cursor) == n; /* no NUL inside */
}
