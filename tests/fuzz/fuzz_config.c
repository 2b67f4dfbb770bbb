/*
 * fuzz_config: libFuzzer target for the files leasegate reads at start:
 * the configuration file (--config) and the PostgreSQL users file
 * (--pg-users, pg_authid-style verifiers).
 *
 * The first input byte picks the file; the rest is its content, written
 * to a private file (mode 0600, as a file with a secret must be) that
 * cfg_load, then auth_pg_new, read by path as the gateway does. Contracts
 * checked: a load either succeeds with a configuration that holds its own
 * invariants (every string NUL-terminated in its field, numbers within
 * their options' ranges, the lease bounds ordered) or fails with a
 * non-empty, NUL-terminated message; a users file either gives a users
 * table that answers for any name or fails with a message.
 * Build: `make fuzz` (build/fuzz/fuzz_config).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

/* The private file every input is written to (made once). */
static const char *scratch(void)
{
	static char path[64];
	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/lg-fuzz-config.XXXXXX");
		int fd = mkstemp(path);
		check(fd >= 0);
		close(fd);
	}
	return path;
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "w");
	check(f != NULL);
	check(fwrite(data, 1, size, f) == size);
	check(fclose(f) == 0);
}

static int nul_within(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *path = scratch();
	write_file(path, data + 1, size - 1);
	char *env[] = {NULL};
	char err[512];
	memset(err, 'x', sizeof(err));
	static struct cfg c;
	if ((data[0] & 1) == 0) {
		char *argv[] = {"fuzz", "--config", (char *)path, NULL};
		enum cfg_result r = cfg_load(&c, 3, argv, env, err, sizeof(err));
		check(r == CFG_OK || r == CFG_ERROR);
		if (r == CFG_ERROR) {
			check(nul_within(err, sizeof(err)) && err[0] != '\0');
			return 0;
		}
		check(nul_within(c.bind, sizeof(c.bind)) && c.bind[0] != '\0');
		check(nul_within(c.requirepass, sizeof(c.requirepass)));
		check(nul_within(c.holder_label, sizeof(c.holder_label)) && c.holder_label[0]);
		check(nul_within(c.fenced_tables, sizeof(c.fenced_tables)));
		check(c.port >= 0 && c.port <= 65535 && c.pg_port >= 0 && c.pg_port <= 65535);
		check(c.default_lease_ms <= c.max_lease_ms && c.max_bulk <= c.max_query_buffer);
		check(c.unixsocketperm >= 0 && c.unixsocketperm <= 0777);
		check(c.timeout_ms >= 0 && c.auth_timeout_ms >= 0);
		check(c.max_prepared >= 1 && c.max_portals >= 1);
		return 0;
	}
	char *argv[] = {"fuzz", "--pg-users", (char *)path, NULL};
	check(cfg_load(&c, 3, argv, env, err, sizeof(err)) == CFG_OK);
	struct auth_pg *a = auth_pg_new(&c, err, sizeof(err));
	if (a == NULL) {
		check(nul_within(err, sizeof(err)) && err[0] != '\0');
		return 0;
	}
	enum auth_pg_method m = auth_pg_method_for(a, "postgres");
	check(m == AUTH_PG_TRUST || m == AUTH_PG_SCRAM || m == AUTH_PG_MD5 ||
	      m == AUTH_PG_PASSWORD);
	(void)auth_pg_users(a);
	auth_pg_free(a);
	return 0;
}
