/*
 * ddb_proxy: see ddb_proxy.h.
 */
#include "tests/support/ddb_proxy.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/gw.h"

static const char script_rel[] = "tests/integration/ddb_proxy.py";

/* The script: next to the sources, found from the working directory or
 * from $LG_BIN upwards. */
static void script_path(char *out, size_t cap)
{
	char dir[512];
	if (access(script_rel, R_OK) == 0) {
		snprintf(out, cap, "%s", script_rel);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", getenv("LG_BIN") ? getenv("LG_BIN") : "");
	char *slash;
	while ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		snprintf(out, cap, "%s/%s", dir, script_rel);
		if (access(out, R_OK) == 0)
			return;
	}
	fail_msg("cannot find %s", script_rel);
}

static int moto_port(void)
{
	const char *m = getenv("LG_MOTO");
	const char *colon = m != NULL ? strrchr(m, ':') : NULL;
	assert_non_null(colon);
	return atoi(colon + 1);
}

void ddbp_start(struct ddb_proxy *p)
{
	char script[600], port[16], target[16];
	script_path(script, sizeof(script));
	p->port = gw_free_port();
	snprintf(port, sizeof(port), "%d", p->port);
	snprintf(target, sizeof(target), "%d", moto_port());
	snprintf(p->url, sizeof(p->url), "http://127.0.0.1:%d", p->port);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		execlp("python3", "python3", script, port, "127.0.0.1", target, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		if (gw_can_connect(p->port))
			return;
		gw_sleep_ms(25);
	}
	ddbp_stop(p);
	fail_msg("ddb_proxy.py did not start");
}

void ddbp_down(const struct ddb_proxy *p)
{
	assert_int_equal(kill(p->pid, SIGUSR1), 0);
}

void ddbp_up(const struct ddb_proxy *p)
{
	assert_int_equal(kill(p->pid, SIGUSR2), 0);
}

void ddbp_stop(struct ddb_proxy *p)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, SIGTERM);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}
