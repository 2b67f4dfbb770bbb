/*
 * fuzz_session: libFuzzer target for whole sessions: the bytes a client
 * sends, through the real connection layer, users and ACLs, front-end and
 * lease layer on the embedded store, as the gateway runs them. What the
 * parsers' own targets (fuzz_resp, fuzz_pg) cannot reach is here: every
 * command's argument parsing, ACL checks and replies (LOCK.*, LEADER.*,
 * SET/GET/EVAL, CLIENT, CONFIG, ACL, INFO, HELLO...), the PostgreSQL
 * startup, authentication, settings, simple and extended query with
 * statements, portals, format codes and parameters, and the admin port's
 * HTTP request.
 *
 * The gateway has an ACL file of several users (passwords, lock name
 * patterns, commands allowed and refused; see `users`). The first input
 * byte picks a mode of `modes`; a logged-in mode takes the user from the
 * second byte (one of `logins`, a wrong password among them) and sends
 * the login itself first (Redis: AUTH; PostgreSQL: the startup and a
 * cleartext password), so that the fuzzer spends its time past it. In the
 * framed PostgreSQL mode the rest is messages written as a type byte, a
 * 16-bit big-endian body length and the body: the harness writes each
 * message's real length, so mutations of a body (a Bind's format codes)
 * keep the stream in step. The rest of the input follows in one go, then
 * the client's end closes. Redis and PostgreSQL sessions come on a
 * socketpair (srv_adopt); the admin port is a real listener on 127.0.0.1.
 *
 * Contracts checked: the process survives (ASan, UBSan: any report
 * aborts), once the client has gone its session goes too (the registry is
 * empty again), so that no input leaves a session, a wait or a lease
 * behind; and at start, that every login of `logins` is answered as
 * intended (else the fuzzer would silently stay outside the sessions).
 * Build and run: `make fuzz` (build/fuzz/fuzz_session); seeds in
 * tests/fuzz/corpus/fuzz_session, written by tests/fuzz/session_seeds.py.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "gateway/admin/admin.h"
#include "gateway/lease/backend.h"
#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/server.h"
#include "gateway/lease/lsess.h"
#include "gateway/obs/log.h"
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

/* The users: each kind of rule the check point has (key patterns, %R~
 * read-only patterns, categories, single commands, subcommands, off, a
 * nopass default that may do little). Mode 0600: it holds passwords. */
static const char users[] =
	"user default on nopass ~pub:* +@read +@connection -client|setname\n"
	"user admin on >adminpw allkeys +@all\n"
	"user app on >apppw ~orders:* ~jobs:* ~pg:d:1* %R~view:* +@lock +@leader +@connection "
	"+@scripting -lock.release\n"
	"user reader on >readpw ~* +@read +@connection +acl|whoami\n"
	"user locker on >lockpw ~l* +lock.acquire +lock.release +lock.renew +ping\n"
	"user gone off >gonepw ~* +@all\n";

/* The logins the logged-in modes send (the second byte picks one). */
static const struct login {
	const char *user, *pass; /* pass NULL: none sent (nopass) */
	bool ok;		 /* the gateway must take it */
} logins[] = {
	{"admin", "adminpw", true}, {"app", "apppw", true},  {"reader", "readpw", true},
	{"locker", "lockpw", true}, {"default", NULL, true}, {"app", "wrong", false},
	{"gone", "gonepw", false},
};
#define N_LOGINS (sizeof(logins) / sizeof(logins[0]))

enum proto { P_REDIS, P_PG, P_ADMIN };

/* What the first byte picks. */
static const struct mode {
	enum proto proto;
	bool login;  /* the harness logs in first, as logins[second byte] */
	bool framed; /* PostgreSQL messages framed by the harness (see top) */
} modes[] = {
	{P_REDIS, false, false}, /* raw, as the default user */
	{P_PG, false, false},	 /* raw: startup and authentication too */
	{P_ADMIN, false, false}, {P_REDIS, true, false}, {P_PG, true, true}, {P_PG, true, false},
};
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

static struct world {
	struct cfg cfg;
	struct event_base *base;
	struct srv *srv;
	struct redis *redis;
	struct backend backend;
	struct lsvc *leases;
	struct rl_app *rl;
	struct auth *auth;
	struct auth_pg *pg_auth;
	struct pg_fe *pg;
	struct admin *admin;
	int admin_port;
	bool ready;
	char aclfile[64];
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

/* The ACL file, owner-only, in the temporary directory (removed at exit). */
static void write_users(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(W.aclfile, sizeof(W.aclfile), "%.40s/fuzz_acl.XXXXXX", tmp ? tmp : "/tmp");
	int fd = mkstemp(W.aclfile);
	check(fd >= 0 && fchmod(fd, 0600) == 0);
	check(write(fd, users, sizeof(users) - 1) == (ssize_t)(sizeof(users) - 1));
	close(fd);
}

static void remove_users(void)
{
	unlink(W.aclfile);
}

static void world_init(void)
{
	char err[512], port[16];
	snprintf(port, sizeof(port), "%d", free_port());
	write_users();
	atexit(remove_users);
	/* the ports: Redis and PostgreSQL sessions are adopted (no listener) */
	const char *flags[][2] = {
		{"--port", "0"},
		{"--pg-port", "1"},
		{"--admin-port", port},
		{"--log-level", "error"},
		{"--max-lease", "1h"},
		{"--default-lease", "10s"},
		{"--aclfile", W.aclfile},
		{"--pg-auth", "password"},  /* the login is sent, not negotiated */
		{"--auth-max-delay", "0"},  /* no held answers after a wrong password */
		{"--protected-mode", "no"}, /* the nopass default serves the raw modes */
		{"--max-locks", "10000"},   /* random names do not grow the store for ever */
	};
	enum { NF = sizeof(flags) / sizeof(flags[0]) };
	char *argv[2 * NF + 2] = {"fuzz"};
	for (int i = 0; i < NF; i++) {
		argv[1 + 2 * i] = (char *)flags[i][0];
		argv[2 + 2 * i] = (char *)flags[i][1];
	}
	char *env[] = {NULL};
	check(cfg_load(&W.cfg, 2 * NF + 1, argv, env, err, sizeof(err)) == CFG_OK);
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
	/* after the commands: the rules name them */
	W.auth = auth_new(&W.cfg, W.base, cmd_acl_known, cmds, err, sizeof(err));
	if (W.auth == NULL)
		fprintf(stderr, "fuzz_session: %s\n", err);
	check(W.auth != NULL);
	srv_set_auth(W.srv, W.auth);
	W.pg_auth = auth_pg_new(&W.cfg, err, sizeof(err));
	check(W.pg_auth != NULL);
	auth_set_pg(W.auth, W.pg_auth);
	W.pg = pg_fe_new(W.srv, &W.cfg, W.leases, W.pg_auth);
	check(W.pg != NULL);
	const struct admin_ops ops = {admin_ready, admin_metrics, NULL};
	W.admin = admin_new(W.base, &W.cfg, &ops, err, sizeof(err));
	check(W.admin != NULL);
	W.admin_port = (int)W.cfg.admin_port;
}

/* A growing byte string: what the harness sends. */
struct out {
	uint8_t *p;
	size_t len, cap;
};

static void out_put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2 + 64;
		o->p = realloc(o->p, o->cap);
		check(o->p != NULL);
	}
	if (n > 0)
		memcpy(o->p + o->len, p, n);
	o->len += n;
}

static void out_be32(struct out *o, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	out_put(o, b, 4);
}

/* A PostgreSQL message: type (0: the startup, which has none), body. */
static void pg_msg(struct out *o, char type, const void *body, size_t len)
{
	if (type)
		out_put(o, &type, 1);
	out_be32(o, (uint32_t)len + 4);
	out_put(o, body, len);
}

/* The login of l first in o, as a client sends it. */
static void put_login(struct out *o, enum proto proto, const struct login *l)
{
	char b[256];
	int n;
	if (proto == P_REDIS && l->pass == NULL)
		return; /* a nopass default: logged in from the start */
	if (proto == P_REDIS) {
		n = snprintf(b, sizeof(b), "*3\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
			     strlen(l->user), l->user, strlen(l->pass), l->pass);
		out_put(o, b, (size_t)n);
		return;
	}
	n = snprintf(b, sizeof(b), "%c%c%c%cuser%c%s%cdatabase%cfuzz%c", 0, 3, 0, 0, 0, l->user, 0,
		     0, 0);
	b[n++] = '\0'; /* the parameters' end */
	pg_msg(o, 0, b, (size_t)n);
	if (l->pass != NULL)
		pg_msg(o, 'p', l->pass, strlen(l->pass) + 1);
}

/* The framed PostgreSQL mode's input (see top) as messages in o. */
static void put_framed(struct out *o, const uint8_t *d, size_t n)
{
	while (n > 0) {
		size_t len = n >= 3 ? (size_t)d[1] << 8 | d[2] : 0;
		size_t head = n >= 3 ? 3 : n;
		if (len > n - head)
			len = n - head;
		pg_msg(o, (char)d[0], d + head, len);
		d += head + len;
		n -= head + len;
	}
}

/* What the client's end reads: kept in got (up to cap - 1 bytes,
 * NUL-ended) when got is not NULL, else thrown away. */
struct replies {
	char *got;
	size_t cap, have;
};

/* One turn of the loop, then what the client's end can read: recv's
 * result. */
static ssize_t turn(int fd, struct replies *r)
{
	char sink[65536];
	event_base_loop(W.base, EVLOOP_NONBLOCK);
	ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
	if (n > 0 && r->got != NULL && r->have + 1 < r->cap) {
		size_t k = (size_t)n < r->cap - 1 - r->have ? (size_t)n : r->cap - 1 - r->have;
		memcpy(r->got + r->have, sink, k);
		r->have += k;
		r->got[r->have] = '\0';
	}
	return n;
}

/* Runs the loop until the client's end has read everything (EOF), or a
 * bound of turns. */
static void pump(int fd, int turns, struct replies *r)
{
	for (int i = 0; i < turns; i++)
		if (turn(fd, r) == 0 && srv_conns(W.srv) == 0)
			return;
}

/* Writes all of data, running the loop while the socket is full. */
static void send_all(int fd, const uint8_t *data, size_t size, struct replies *r)
{
	size_t at = 0;
	for (int spins = 0; at < size && spins < 100000; spins++) {
		ssize_t w = send(fd, data + at, size - at, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0)
			at += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return; /* the server closed on us: fine */
		(void)turn(fd, r);
	}
}

static void abort_conn(struct conn *c, void *arg)
{
	conn_abort(c, "fuzz: left behind");
}

/* A client connection to proto's front-end: the client's end. */
static int open_client(enum proto proto)
{
	if (proto != P_ADMIN) {
		int sv[2];
		check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
		check(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
		const struct conn_proto *cp = proto == P_REDIS ? &W.redis->proto : &W.pg->proto;
		struct conn *c = srv_adopt(W.srv, cp, sv[0], "fuzz:1", "fuzz:0");
		check(c != NULL);
		conn_process(c);
		return sv[1];
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)W.admin_port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	check(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	return fd;
}

/* One client: sends o, closes its end, reads the replies (into got, see
 * pump) and checks that its session went with it. */
static size_t run_client(enum proto proto, const struct out *o, char *got, size_t cap)
{
	struct replies r = {got, cap, 0};
	int fd = open_client(proto);
	if (got != NULL)
		got[0] = '\0';
	send_all(fd, o->p, o->len, &r);
	shutdown(fd, SHUT_WR);
	pump(fd, 2000, &r);
	close(fd);
	size_t have = r.have;
	if (proto == P_ADMIN) {
		for (int i = 0; i < 50; i++)
			event_base_loop(W.base, EVLOOP_NONBLOCK);
		return have;
	}
	/* the client is gone: so must its session be, soon */
	for (int i = 0; i < 1000 && srv_conns(W.srv) > 0; i++)
		event_base_loop(W.base, EVLOOP_NONBLOCK);
	if (srv_conns(W.srv) > 0) {
		fprintf(stderr, "fuzz_session: a session outlived its client\n");
		srv_foreach(W.srv, NULL, abort_conn, NULL);
		abort();
	}
	return have;
}

/* Every login is answered as logins[] says, on both protocols: else the
 * logged-in modes would fuzz a login failure (a changed ACL syntax, a
 * method) and nothing past it. */
static void check_logins(void)
{
	static const char auth_ok[] = "R\0\0\0\x08\0\0\0\0"; /* AuthenticationOk */
	char got[4096];
	for (size_t i = 0; i < N_LOGINS; i++) {
		const struct login *l = &logins[i];
		struct out o = {0};
		put_login(&o, P_REDIS, l);
		out_put(&o, "PING\r\n", 6);
		const char *want = l->pass == NULL ? "+PONG\r\n" : l->ok ? "+OK\r\n" : "-WRONGPASS";
		size_t n = run_client(P_REDIS, &o, got, sizeof(got));
		bool redis_ok = strncmp(got, want, strlen(want)) == 0;
		if (!redis_ok)
			fprintf(stderr, "fuzz_session: Redis login of %s: %.*s\n", l->user,
				(int)(n < 200 ? n : 200), got);
		o.len = 0;
		put_login(&o, P_PG, l);
		n = run_client(P_PG, &o, got, sizeof(got));
		bool pg_ok = (memmem(got, n, auth_ok, sizeof(auth_ok) - 1) != NULL) == l->ok;
		free(o.p);
		if (!redis_ok || !pg_ok) {
			fprintf(stderr,
				"fuzz_session: the login of %s is not answered as meant (%s)\n",
				l->user, redis_ok ? "PostgreSQL" : "Redis");
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (W.base == NULL) {
		world_init();
		check_logins();
	}
	if (size < 1)
		return 0;
	const struct mode *m = &modes[data[0] % N_MODES];
	data++;
	size--;
	struct out o = {0};
	if (m->login) {
		if (size < 1)
			return 0;
		put_login(&o, m->proto, &logins[data[0] % N_LOGINS]);
		data++;
		size--;
	}
	if (m->framed)
		put_framed(&o, data, size);
	else
		out_put(&o, data, size);
	/* FUZZ_SESSION_REPLIES=1: the replies on stderr (to see where a seed
	 * gets: ./fuzz_session SEED) */
	static char got[65536];
	bool show = getenv("FUZZ_SESSION_REPLIES") != NULL;
	size_t n = run_client(m->proto, &o, show ? got : NULL, sizeof(got));
	for (size_t i = 0; show && i < n; i++)
		fputc(got[i] == '\0' ? '.' : got[i], stderr);
	free(o.p);
	return 0;
}
