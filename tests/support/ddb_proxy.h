/*
 * ddb_proxy: tests/integration/ddb_proxy.py in front of the suite's moto,
 * as a fixture: a gateway given its URL (--endpoint) reaches DynamoDB
 * through it, and the test cuts DynamoDB off for that gateway alone
 * (open connections reset, new ones reset at once) and brings it back.
 */
#ifndef LG_TEST_DDB_PROXY_H
#define LG_TEST_DDB_PROXY_H

#include <sys/types.h>

struct ddb_proxy {
	pid_t pid;
	int port;
	char url[64]; /* http://127.0.0.1:PORT, for --endpoint */
};

/* Starts the proxy in front of $LG_MOTO and waits until it accepts
 * connections; fails the test when it cannot. */
void ddbp_start(struct ddb_proxy *p);

/* DynamoDB cut off (SIGUSR1), then back (SIGUSR2). */
void ddbp_down(const struct ddb_proxy *p);
void ddbp_up(const struct ddb_proxy *p);

/* Stops and reaps it (nothing when it is not running). */
void ddbp_stop(struct ddb_proxy *p);

#endif
