/*
 * fuzz_session: libFuzzer target for whole sessions: the bytes a client
 * sends, through the real connection layer, front-end and lease layer on
 * the embedded store, as the gateway runs them. What the parsers' own
 * targets (fuzz_resp, fuzz_pg) cannot reach is here: every command's
 * argument parsing and replies (LOCK.*, LEADER.*, SET/GET/EVALSHA,
 * CLIENT, CONFIG, INFO, HELLO...), the PostgreSQL startup, settings,
 * simple and extended query with statements and portals, and the admin
 * port's HTTP request.
 *
 * The first input byte picks the front-end (Redis, PostgreSQL, admin HTTP);
 * the rest is what the client sends, in one go, then its end of the
 * connection closes. Redis and PostgreSQL sessions come on a socketpair
 * (srv_adopt); the admin port is a real listener on 127.0.0.1. Contracts
 * checked: the process survives (ASan, UBSan), and once the client has
 * gone its session goes too (the registry is empty again), so that no
 * input leaves a session, a wait or a lease behind.
 * Build: `make fuzz` (build/fuzz/fuzz_session).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "gateway/admin.h"
#include "gateway/backend.h"
#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/server.h"
#include "gateway/lease/lsess.h"
#include "gateway/log.h"
#include "gateway/pg/pg_fe.h"
#include "gateway/pg/pg_int.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static struct world {
	struct cfg cfg;
	struct event_base *base;
	struct srv *srv;
	struct redis *redis;
	struct backend backend;
	struct lsvc *leases;
	struct rl_app *rl;
	struct auth_pg *pg_auth;
	struct pg_fe *pg;
	struct admin *admin;
	int admin_port;
	bool ready;
} W;

static void on_ready(void *arg, bool ok, const char *msg)
{
	check(ok);
	W.ready = true;
}

static bool admin_ready(void *arg, const char **why)
{
	return true;
}

static void admin_metrics(void *arg, struct buf *out)
{
	buf_printf(out, "leasegate_fuzz 1\n");
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	check(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	check(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void world_init(void)
{
	char err[512], port[16];
	snprintf(port, sizeof(port), "%d", free_port());
	char *argv[] = {"fuzz", "--port",      "0",	"--pg-port",   "1",  "--admin-port",
			port,	"--log-level", "error", "--max-lease", "1h", "--default-lease",
			"10s",	NULL};
	char *env[] = {NULL};
	check(cfg_load(&W.cfg, 13, argv, env, err, sizeof(err)) == CFG_OK);
	check(log_open("", LOG_LVL_ERROR, false, err, sizeof(err)));
	signal(SIGPIPE, SIG_IGN);
	W.base = event_base_new();
	struct cmd_table *cmds = cmd_table_new();
	check(W.base && cmds && cmd_add_builtins(cmds) == 0);
	W.srv = srv_new(W.base, &W.cfg, W.cfg.maxclients, "--maxclients");
	W.redis = W.srv ? redis_new(W.srv, &W.cfg, cmds) : NULL;
	check(W.redis && cmd_add_builtin_info(cmds, W.redis) == 0);
	check(backend_open(&W.backend, W.base, &W.cfg, on_ready, NULL, err, sizeof(err)));
	while (!W.ready)
		event_base_loop(W.base, EVLOOP_ONCE);
	const struct ls_limits limits = {
		.max_name = W.cfg.max_lock_name,
		.max_leases = W.cfg.max_leases_per_session,
		.max_lease_ms = W.cfg.max_lease_ms,
		.default_lease_ms = W.cfg.default_lease_ms,
	};
	W.leases = lsvc_new(W.backend.lt, &limits);
	W.rl = W.leases ? rl_new(W.leases, &W.backend) : NULL;
	check(W.rl && rl_register(W.rl, cmds, W.redis) == 0);
	W.pg_auth = auth_pg_new(&W.cfg, err, sizeof(err));
	check(W.pg_auth != NULL);
	W.pg = pg_fe_new(W.srv, &W.cfg, W.leases, W.pg_auth);
	check(W.pg != NULL);
	const struct admin_ops ops = {admin_ready, admin_metrics, NULL};
	W.admin = admin_new(W.base, &W.cfg, &ops, err, sizeof(err));
	check(W.admin != NULL);
	W.admin_port = (int)W.cfg.admin_port;
}

/* Runs the loop until the client's end has read everything (EOF), or a
 * bound of turns; what it reads is thrown away. */
static void pump(int fd, int turns)
{
	char sink[65536];
	for (int i = 0; i < turns; i++) {
		event_base_loop(W.base, EVLOOP_NONBLOCK);
		ssize_t r = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (r == 0 && srv_conns(W.srv) == 0)
			return;
	}
}

/* Writes all of data, running the loop while the socket is full. */
static void send_all(int fd, const uint8_t *data, size_t size)
{
	size_t at = 0;
	char sink[65536];
	for (int spins = 0; at < size && spins < 100000; spins++) {
		ssize_t w = send(fd, data + at, size - at, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0)
			at += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return; /* the server closed on us: fine */
		event_base_loop(W.base, EVLOOP_NONBLOCK);
		(void)!recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
	}
}

static void abort_conn(struct conn *c, void *arg)
{
	conn_abort(c, "fuzz: left behind");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (W.base == NULL)
		world_init();
	if (size < 1)
		return 0;
	unsigned which = data[0] % 3;
	data++;
	size--;
	int fd;
	if (which < 2) {
		int sv[2];
		check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
		check(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
		const struct conn_proto *proto = which == 0 ? &W.redis->proto : &W.pg->proto;
		struct conn *c = srv_adopt(W.srv, proto, sv[0], "fuzz:1", "fuzz:0");
		check(c != NULL);
		conn_process(c);
		fd = sv[1];
	} else {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_port = htons((uint16_t)W.admin_port)};
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		check(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	}
	send_all(fd, data, size);
	shutdown(fd, SHUT_WR);
	pump(fd, 2000);
	close(fd);
	if (which < 2) {
		/* the client is gone: so must its session be, soon */
		for (int i = 0; i < 1000 && srv_conns(W.srv) > 0; i++)
			event_base_loop(W.base, EVLOOP_NONBLOCK);
		if (srv_conns(W.srv) > 0) {
			fprintf(stderr, "fuzz_session: a session outlived its client\n");
			srv_foreach(W.srv, NULL, abort_conn, NULL);
			abort();
		}
	} else {
		for (int i = 0; i < 50; i++)
			event_base_loop(W.base, EVLOOP_NONBLOCK);
	}
	return 0;
}
