/*
 * fuzz_acl: libFuzzer target for the ACL file's parser and the check point
 * (gateway/conn/acl.c, acl_check.c).
 *
 * The input is an ACL file. A parse either succeeds — then every user is
 * described (ACL LIST) and, with a second parse of that description (the
 * digests stand for the passwords), must give the same text — or fails
 * with "f:<line>: why", the line within the input. Every user is then
 * asked about a few commands and names, and globs are matched both ways.
 * Build: `make fuzz`, or by hand:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_acl.c \
 *     protocols/buf.c gateway/conn/acl.c gateway/conn/acl_check.c -lcrypto -o build/fuzz_acl
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/conn/acl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static unsigned lines_of(const uint8_t *d, size_t n)
{
	unsigned k = 1;
	for (size_t i = 0; i < n; i++)
		k += d[i] == '\n';
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	if (size > 64 * 1024)
		return 0;
	struct acl *a = acl_parse((const char *)data, size, "f", "", NULL, NULL, err, sizeof(err));
	if (a == NULL) {
		unsigned line;
		check(sscanf(err, "f:%u:", &line) == 1 || strcmp(err, "f: out of memory") == 0);
		if (strncmp(err, "f:", 2) == 0 && err[2] != ' ')
			check(line >= 1 && line <= lines_of(data, size));
		return 0;
	}
	check(acl_find(a, "default", 7) != NULL);
	struct buf all;
	buf_init(&all, 0);
	for (unsigned i = 0; i < acl_count(a); i++) {
		const struct acl_user *u = acl_user_at(a, i);
		acl_describe(u, &all);
		buf_printf(&all, "\n");
		const char *names[] = {"orders:1", "", "*", "pg:db:1:2"};
		const char *cmds[] = {"lock.acquire", "config|get", "ping"};
		for (size_t c = 0; c < 3; c++)
			for (size_t k = 0; k < 4; k++) {
				size_t len = strlen(names[k]);
				struct acl_req r = {.cmd = cmds[c],
						    .cats = (uint32_t)(1u << (k * 5)),
						    .nkeys = 1,
						    .keys = &names[k],
						    .key_lens = &len};
				enum acl_verdict v = acl_check(u, &r, NULL);
				check(v == ACL_OK || v == ACL_DENIED_CMD || v == ACL_DENIED_KEY);
			}
	}
	/* what ACL LIST shows loads back to the same rules */
	if (!buf_failed(&all)) {
		struct acl *b = acl_parse(all.buf, all.len, "g", "", NULL, NULL, err, sizeof(err));
		if (b != NULL) {
			struct buf again;
			buf_init(&again, 0);
			for (unsigned i = 0; i < acl_count(b); i++) {
				acl_describe(acl_user_at(b, i), &again);
				buf_printf(&again, "\n");
			}
			check(buf_failed(&again) ||
			      (again.len == all.len && memcmp(again.buf, all.buf, all.len) == 0));
			buf_free(&again);
			acl_free(b);
		}
	}
	buf_free(&all);
	/* globs: never past either end */
	size_t half = size / 2;
	(void)acl_glob((const char *)data, half, (const char *)data + half, size - half);
	acl_free(a);
	return 0;
}
