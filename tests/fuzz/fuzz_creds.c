/*
 * fuzz_creds: libFuzzer target for what the credential chain reads from
 * files and endpoints, and for SigV4's canonical forms of what it is given.
 *
 * The first byte picks the parser: STS XML, credentials JSON, an INI
 * lookup (the rest split into section, key and text at the first two NUL
 * bytes), ISO 8601, or a signature over a fuzzed path, query and header
 * value. Contracts checked: a success fills a key id and a secret that
 * fit their fields; a failure leaves the credentials zeroed with a
 * NUL-terminated message; INI values fit the buffer.
 * Build (not part of the Makefile):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I. \
 *     $(pkg-config --cflags libcjson) tests/fuzz/fuzz_creds.c \
 *     lib/aws/creds_parse.c lib/aws/sigv4.c \
 *     $(pkg-config --libs libcjson openssl) -o build/fuzz_creds
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/aws/creds_parse.h"
#include "lib/aws/sigv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static void check_creds(bool ok, const struct aws_credentials *c, const char *err)
{
	if (ok) {
		check(c->access_key_id[0] && c->secret_access_key[0]);
		check(strlen(c->access_key_id) <= AWS_KEY_ID_MAX);
		check(strlen(c->secret_access_key) <= AWS_SECRET_MAX);
		check(strlen(c->session_token) <= AWS_TOKEN_MAX);
	} else {
		check(!c->access_key_id[0] && !c->secret_access_key[0]);
		check(strlen(err) < CREDS_ERR_MAX);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	size_t len = size - 1;
	struct aws_credentials c;
	char err[CREDS_ERR_MAX] = "";
	switch (data[0] % 5) {
	case 0:
		check_creds(creds_parse_sts_xml(text, len, &c, err, sizeof err), &c, err);
		break;
	case 1:
		check_creds(creds_parse_json(text, len, &c, err, sizeof err), &c, err);
		break;
	case 2: {
		const char *section = text;
		const char *key = section + strlen(section) + 1;
		if (key >= text + size)
			break;
		const char *ini = key + strlen(key) + 1;
		if (ini >= text + size)
			break;
		char out[16];
		if (creds_ini_get(ini, section, key, out, sizeof out))
			check(strlen(out) < sizeof out);
		creds_ini_has_section(ini, section);
		break;
	}
	case 3: {
		int64_t ms;
		if (creds_parse_iso8601(text, &ms))
			check(strlen(text) >= 20);
		break;
	}
	default: {
		/* path, query and a header value, NUL-separated */
		const char *path = text;
		const char *query = path + strlen(path) + 1;
		const char *value = query < text + size ? query + strlen(query) + 1 : NULL;
		if (!value || value >= text + size)
			break;
		struct http_header h[] = {{"Host", "h"}, {"X-Fuzz", value}};
		struct sigv4_request r = {.method = "GET",
					  .path = path,
					  .query = query,
					  .headers = h,
					  .nheaders = 2,
					  .region = "r",
					  .service = "s"};
		struct sigv4_parts p;
		if (sigv4_sign_parts(&r, "AKID", "SECRET", "20150830T123600Z", &p)) {
			check(p.canonical_request && p.string_to_sign && p.authorization);
			check(strstr(p.authorization, "Signature=") != NULL);
		}
		sigv4_parts_free(&p);
		break;
	}
	}
	free(text);
	return 0;
}
