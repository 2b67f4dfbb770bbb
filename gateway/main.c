/*
 * main: leasegate's process. Reads the configuration, opens the log and
 * the listeners, runs the event loop; SIGTERM/SIGINT stop accepting, close
 * every session after its pending replies and exit 0 within a bounded time;
 * SIGHUP reopens the log file, reloads --aclfile (a bad file is logged and
 * the users stay as they were) and rereads the TLS certificate, key and CA
 * (for new sessions; live ones keep theirs). `leasegate lock ...` runs the
 * client subcommand of gateway/cli/ instead, `leasegate --probe` the health
 * check of probe.h, `leasegate help` the command reference of help.h,
 * `--man` and `--example-config` the documents of docgen.h.
 *
 * Not here: anything a test would want to drive without a process (that is
 * in server.c, session.c, commands.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "gateway/admin/admin.h"
#include "gateway/lease/backend.h"
#include "gateway/cli/lock_cli.h"
#include "gateway/redis/commands.h"
#include "gateway/config.h"
#include "gateway/doc/docgen.h"
#include "gateway/doc/help.h"
#include "gateway/lease/lsess.h"
#include "gateway/obs/log.h"
#include "gateway/conn/loop.h"
#include "gateway/obs/metrics.h"
#include "gateway/obs/otlp.h"
#include "gateway/conn/server.h"
#include "gateway/redis/leases.h"
#include "gateway/redis/session.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/tls.h"
#include "gateway/pg/pg_fe.h"
#include "gateway/admin/probe.h"
#include "gateway/lease/testclock.h"

extern char **environ;

/* Descriptors kept for the process itself (as Redis keeps 32), on top
 * of the admin port's clients. */
#define RESERVED_FDS 32

struct app {
	struct event_base *base;
	struct srv *srv;     /* the connections of every front-end */
	struct redis *redis; /* the Redis front-end */
	struct cmd_table *cmds;
	struct pg_fe *pg; /* the PostgreSQL front-end (NULL: --pg-port 0) */
	struct auth_pg *pg_auth;
	struct auth *auth;   /* users and ACLs of both protocols */
	struct tls_srv *tls; /* NULL: no certificate configured */
	struct backend backend;
	struct lsvc *leases;	     /* the lease-session layer */
	struct rl_app *redis_leases; /* its Redis front-end */
	const struct cfg *cfg;
	struct event *wait_releases;
	struct admin *admin;
	struct otlp *otlp; /* NULL: tracing off */
	struct event *ev_term, *ev_int, *ev_hup;
	struct loop_poll poll; /* the busy poll of the loop (--busy-poll-us) */
	bool ready;	       /* the store is open, the listeners are up */
	bool stopping;
	struct event *drain_timer; /* the grace of a drain (--drain-grace) */
	int64_t drain_end_ms;	   /* when it ends, monotonic */
	/* at the stop signal: leases held, sessions open, failed releases */
	uint64_t stop_leases, stop_sessions, stop_release_failed;
	int exit_code;
};

/* After the sessions are gone, their releases are still in flight: leave
 * once they are answered (or the shutdown bound passes). */
static void check_releases(evutil_socket_t fd, short what, void *arg)
{
	struct app *a = arg;
	struct lt_stats st;
	lt_stats(a->backend.lt, &st);
	if (st.releases_in_flight == 0 && a->backend.store->in_flight == 0) {
		event_base_loopbreak(a->base);
		return;
	}
	struct timeval tv = {0, 10000};
	event_add(a->wait_releases, &tv);
}

static void drained(void *arg)
{
	struct app *a = arg;
	check_releases(-1, 0, a);
}

/* A drain's grace (--drain-grace): every 100 ms, until no orphan is left
 * (all adopted) or the grace ends; then the rest are released. */
static void drain_tick(evutil_socket_t fd, short what, void *arg)
{
	struct app *a = arg;
	struct lsvc_drain_stats ds;
	lsvc_drain_stats(a->leases, &ds);
	if (ds.held > 0 && clock_now_ms(a->backend.io_clock) < a->drain_end_ms) {
		struct timeval tv = {0, 100000};
		event_add(a->drain_timer, &tv);
		return;
	}
	unsigned n = lsvc_release_orphans(a->leases);
	log_fields(LOG_LVL_INFO,
		   (struct log_field[]){LOG_NUM("orphaned", (long long)ds.orphaned),
					LOG_NUM("adopted", (long long)ds.adopted),
					LOG_NUM("released", (long long)n)},
		   3,
		   "drain over: %llu leases kept for adoption, %llu known adopted elsewhere, %u "
		   "released (one adopted since its last renewal refuses it: it stays adopted)",
		   (unsigned long long)ds.orphaned, (unsigned long long)ds.adopted, n);
	check_releases(-1, 0, a);
}

/* The connections are closed, the adoptable leases kept: the grace runs. */
static void drain_closed(void *arg)
{
	struct app *a = arg;
	drain_tick(-1, 0, a);
}

/* A start that failed: err once on stderr, as the log line when the log
 * is stderr (no --log-file), else in the log and on stderr. False. */
static bool fail_start(const struct cfg *cfg, const char *err)
{
	log_msg(LOG_LVL_ERROR, "%s", err);
	if (cfg->log_file[0] != '\0')
		fprintf(stderr, "leasegate: %s\n", err);
	return false;
}

/* The store is open: take clients. */
static void on_ready(void *arg, bool ok, const char *msg)
{
	struct app *a = arg;
	char err[512];
	if (!ok) {
		log_msg(LOG_LVL_ERROR, "%s", msg);
		fprintf(stderr, "leasegate: %s\n", msg);
		a->exit_code = 1;
		event_base_loopbreak(a->base);
		return;
	}
	if (!lsvc_set_fenced(a->leases, a->cfg->fenced_tables,
			     a->cfg->table[0] ? a->cfg->table : NULL, backend_lock_pk(&a->backend),
			     err, sizeof(err))) {
		log_msg(LOG_LVL_ERROR, "%s", err);
		fprintf(stderr, "leasegate: %s\n", err);
		a->exit_code = 1;
		event_base_loopbreak(a->base);
		return;
	}
	const struct cfg *cfg = a->cfg;
	if (cfg->table[0])
		log_msg(LOG_LVL_INFO, "locks in DynamoDB table %s (region %s, endpoint %s)",
			cfg->table, a->backend.region, a->backend.endpoint);
	else
		log_msg(LOG_LVL_INFO, "no --table: running on the embedded store (locks are "
				      "shared by the clients of this process only)");
	if (a->pg != NULL)
		log_msg(LOG_LVL_INFO, "PostgreSQL protocol on %s:%d, %s", cfg->bind,
			pg_fe_port(a->pg),
			auth_pg_method(a->pg_auth) == AUTH_PG_TRUST
				? (cfg->protected_mode
					   ? "trust: no --pg-password or --pg-users, every "
					     "loopback "
					     "and Unix socket client is accepted (protected mode)"
					   : "trust: no --pg-password or --pg-users, every client "
					     "is "
					     "accepted")
				: "password authentication");
	if (a->tls != NULL) {
		char cert[512];
		tls_srv_describe(a->tls, cert, sizeof(cert));
		log_msg(LOG_LVL_INFO,
			"TLS: Redis TLS port %d (client certificates %s), PostgreSQL "
			"SSLRequest %s; certificate %s",
			redis_tls_port(a->redis),
			cfg->tls_port == 0				 ? "-"
			: cfg->tls_auth_clients == CFG_TLS_AUTH_YES	 ? "required"
			: cfg->tls_auth_clients == CFG_TLS_AUTH_OPTIONAL ? "optional"
									 : "not asked",
			a->pg == NULL			     ? "-"
			: cfg->pg_tls == CFG_PG_TLS_OFF	     ? "answered N (--pg-tls off)"
			: cfg->pg_tls == CFG_PG_TLS_REQUIRED ? "required"
							     : "answered S",
			cert);
	}
	a->ready = true;
	/* ready for good: the commands need not ask any more */
	if (a->cmds != NULL)
		cmd_table_set_gate(a->cmds, NULL, NULL);
	if (redis_port(a->redis) != 0 || cfg->unixsocket[0])
		log_msg(LOG_LVL_INFO, "leasegate %s ready: redis protocol on %s:%d%s%s (pid %ld)",
			LG_VERSION, cfg->bind, redis_port(a->redis),
			cfg->unixsocket[0] ? " and " : "", cfg->unixsocket, (long)getpid());
	else
		log_msg(LOG_LVL_INFO, "leasegate %s ready: no Redis port%s (pid %ld)", LG_VERSION,
			a->pg != NULL ? ", PostgreSQL protocol only" : "", (long)getpid());
}

static void free_otlp(void *arg)
{
	otlp_free(arg);
}

/* The protocol ports' gate: commands and sessions wait for the store
 * (-LOADING, 57P03) until it is open, with the reason. */
static bool store_ready(void *arg, const char **why)
{
	const struct app *a = arg;
	if (!a->ready)
		*why = a->backend.not_ready[0] ? a->backend.not_ready
					       : "the lock store is not open yet";
	return a->ready;
}

/* /readyz: ready once the store is open, until shutdown starts. */
static bool admin_ready(void *arg, const char **why)
{
	const struct app *a = arg;
	if (a->stopping)
		*why = "shutting down";
	else if (!a->ready)
		*why = a->backend.not_ready[0] ? a->backend.not_ready
					       : "the lock store is not open yet";
	return a->ready && !a->stopping;
}

static void admin_metrics(void *arg, struct buf *out)
{
	const struct app *a = arg;
	struct store_dynamodb_stats ddb;
	struct metrics_src m = {
		.sessions = srv_conns(a->srv),
		.version = LG_VERSION,
		.connections_received = srv_connections_received(a->srv),
		.connections_rejected = srv_connections_rejected(a->srv),
		.cmds = a->cmds,
		.process = true,
	};
	m.auth_failures_redis = auth_failures(a->auth, AUTH_REDIS);
	m.auth_failures_pg = auth_failures(a->auth, AUTH_PG);
	struct otlp_stats ot;
	if (a->otlp != NULL) {
		otlp_stats(a->otlp, &ot);
		m.traces = &ot;
	}
	struct tls_stats tls;
	if (a->tls != NULL) {
		tls_srv_stats(a->tls, &tls);
		m.tls = &tls;
	}
	backend_metrics(&a->backend, &m, &ddb);
	metrics_render(&m, out);
}

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct app *a = arg;
	if (a->stopping) {
		log_msg(LOG_LVL_WARN, "second signal %d: exiting now", (int)sig);
		event_base_loopbreak(a->base);
		return;
	}
	a->stopping = true;
	struct lt_stats st;
	lt_stats(a->backend.lt, &st);
	a->stop_leases = st.leases;
	a->stop_sessions = srv_conns(a->srv);
	a->stop_release_failed = a->backend.obs.events[OBS_RELEASE_FAILED - OBS_FIRST_ID];
	log_fields(LOG_LVL_INFO,
		   (struct log_field[]){LOG_NUM("signal", (int)sig),
					LOG_NUM("sessions", (long long)a->stop_sessions),
					LOG_NUM("leases", (long long)st.leases)},
		   3,
		   "signal %d: shutting down: closing %llu client sessions, releasing %llu leases",
		   (int)sig, (unsigned long long)a->stop_sessions, (unsigned long long)st.leases);
	int64_t grace = a->cfg->drain_grace_ms;
	struct timeval bound = {CFG_SHUTDOWN_BOUND_S + grace / 1000, 0};
	event_base_loopexit(a->base, &bound);
	lsvc_cancel_waits(a->leases, "server is shutting down");
	pg_fe_terminate(a->pg); /* idle PostgreSQL sessions: 57P01, as PostgreSQL */
	otlp_flush(a->otlp);
	if (grace > 0 && (a->drain_timer = evtimer_new(a->base, drain_tick, a)) != NULL) {
		log_msg(LOG_LVL_INFO,
			"draining: the adoptable leases of the connections closed now are kept "
			"%lld ms "
			"for LOCK.ADOPT on another replica",
			(long long)grace);
		a->drain_end_ms = clock_now_ms(a->backend.io_clock) + grace;
		lsvc_drain(a->leases);
		rl_push_draining(a->redis, grace);
		srv_shutdown(a->srv, drain_closed, a);
		return;
	}
	srv_shutdown(a->srv, drained, a);
}

/* An ACL reload applied: the waits queued under the old rules that the
 * new ones refuse end (-NOPERM, 42501). */
/* The names an ACL file's +name/-name rules may give: a Redis command (or
 * command|subcommand) of the table cmds, or a PostgreSQL function. */
static bool acl_known(const char *name, void *cmds)
{
	return cmd_acl_known(name, cmds) || pg_fn_acl_known(name);
}

static void acl_reloaded(void *arg)
{
	unsigned n = lsvc_recheck_waits(arg);
	if (n > 0)
		log_msg(LOG_LVL_INFO, "ACL reload: %u waits the new rules refuse ended", n);
}

static void on_hup(evutil_socket_t sig, short what, void *arg)
{
	struct app *a = arg;
	if (!log_reopen())
		log_msg(LOG_LVL_ERROR, "SIGHUP: cannot reopen the log file");
	else
		log_msg(LOG_LVL_INFO, "SIGHUP: log reopened");
	char acl_err[600];
	if (auth_has_file(a->auth) && !auth_reload(a->auth, a->srv, acl_err, sizeof(acl_err)))
		log_msg(LOG_LVL_ERROR, "SIGHUP: ACL file refused, the users stay as they were: %s",
			acl_err);
	if (a->tls != NULL) {
		char err[512], cert[512];
		if (!tls_srv_reload(a->tls, err, sizeof(err))) {
			log_msg(LOG_LVL_ERROR,
				"SIGHUP: TLS files not reloaded, the previous ones stay in use: %s",
				err);
			return;
		}
		tls_srv_describe(a->tls, cert, sizeof(cert));
		log_msg(LOG_LVL_INFO, "SIGHUP: TLS reloaded for new sessions: certificate %s",
			cert);
	}
}

/* The subcommands and documents that run instead of the server: their
 * exit code, or -1 when argv asks for the server. */
static int run_instead(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "lock") == 0)
		return lock_cli_main(argc - 1, argv + 1, environ);
	if (argc > 1 && strcmp(argv[1], "--probe") == 0)
		return probe_main(argc - 1, argv + 1, environ);
	if (argc > 1 && strcmp(argv[1], "help") == 0)
		return help_main(argc - 1, argv + 1);
	/* the generated documents (make install): --man [SYSCONFDIR] */
	if (argc > 1 && strcmp(argv[1], "--man") == 0)
		return doc_man(stdout, argc > 2 ? argv[2] : "/usr/local/etc") == 0 ? 0 : 1;
	if (argc > 1 && strcmp(argv[1], "--example-config") == 0) {
		doc_example_config(stdout);
		return 0;
	}
	return -1;
}

static void usage(const char *prog)
{
	cfg_usage(stdout, prog);
	printf("\nsubcommand:\n  %s lock [options] NAME -- command [args...]\n"
	       "      run a command while holding a lock of a running gateway\n"
	       "      (%s lock --help)\n"
	       "  %s --probe [/readyz] [options]\n"
	       "      GET the path on the admin port of a running gateway (the same\n"
	       "      options and LEASEGATE_* variables): exit 0 on 200, else 1\n"
	       "  %s help [COMMAND]\n"
	       "      the Redis commands, or one, with syntax and summary\n"
	       "  %s --man, %s --example-config\n"
	       "      the man page (roff), the example configuration file\n",
	       prog, prog, prog, prog, prog, prog);
}

/* Reads the options into cfg: -1 to start the server, else the exit code
 * (--help, --version, --list-options answered, or a bad option said). */
static int parse_config(struct cfg *cfg, int argc, char **argv)
{
	char err[512];
	switch (cfg_load(cfg, argc, argv, environ, err, sizeof(err))) {
	case CFG_HELP:
		usage(argv[0]);
		return 0;
	case CFG_VERSION:
		printf("leasegate %s\n", LG_VERSION);
		return 0;
	case CFG_OPTIONS:
		cfg_list(stdout);
		return 0;
	case CFG_ERROR:
		fprintf(stderr, "leasegate: %s\n", err);
		return 1;
	case CFG_OK:
		break;
	}
	if (!cfg_check_bind(cfg->bind, err, sizeof(err)) ||
	    (cfg->test_mode && !tclock_check_bind(cfg->bind, err, sizeof(err)))) {
		fprintf(stderr, "leasegate: %s\n", err);
		return 1;
	}
	return -1;
}

/* Opens the log, blanks the secrets of argv. False: said on stderr. */
static bool open_logs(const struct cfg *cfg, int argc, char **argv)
{
	char err[512];
	if (!log_open(cfg->log_file, (enum log_level)cfg->log_level,
		      cfg->log_format == CFG_LOG_JSON, err, sizeof(err))) {
		fprintf(stderr, "leasegate: bad value for --log-file: %s\n", err);
		return false;
	}
	/* a secret on the command line: blanked in /proc/PID/cmdline from now
	 * on, but every local user could read it there until now */
	char warn[1024];
	if (cfg_hide_argv_secrets(argc, argv, warn, sizeof(warn)) > 0)
		log_msg(LOG_LVL_WARN, "%s", warn);
	signal(SIGPIPE, SIG_IGN);
	return true;
}

static bool out_of_memory(void)
{
	fprintf(stderr, "leasegate: out of memory\n");
	return false;
}

/* The event loop, the command table, the connection registry (with TLS)
 * and the Redis front-end. False: said. */
static bool open_server(struct app *a, struct cfg *cfg)
{
	char err[512];
	struct cmd_table *cmds = cmd_table_new();
	a->base = event_base_new();
	if (!cmds || !a->base || cmd_add_builtins(cmds) != 0)
		return out_of_memory();
	/* What the process needs besides its clients: listeners, stdio and
	 * logs, DynamoDB's HTTP connections, the admin port's clients. */
	int64_t reserved = RESERVED_FDS + cfg->admin_maxclients;
	if (!srv_fit_nofile(&cfg->maxclients, reserved, err, sizeof(err)))
		return fail_start(cfg, err);
	if (err[0] != '\0')
		log_msg(LOG_LVL_WARN, "%s", err);
	a->srv = srv_new(a->base, cfg, cfg->maxclients, "--maxclients");
	if (a->srv != NULL && cfg_tls(cfg)) {
		a->tls = tls_srv_new(cfg, err, sizeof(err));
		if (a->tls == NULL)
			return fail_start(cfg, err);
		srv_set_tls(a->srv, a->tls);
	}
	a->redis = a->srv ? redis_new(a->srv, cfg, cmds) : NULL;
	if (!a->redis || cmd_add_builtin_info(cmds, a->redis) != 0)
		return out_of_memory();
	a->cfg = cfg;
	a->cmds = cmds;
	a->wait_releases = evtimer_new(a->base, check_releases, a);
	return true;
}

/* The store and the lock table (opened in the background: on_ready),
 * the trace exporter, the lease-session layer and its Redis commands.
 * False: said. */
static bool open_store(struct app *a, const struct cfg *cfg)
{
	char err[512];
	if (!backend_open(&a->backend, a->base, cfg, on_ready, a, err, sizeof(err)))
		return fail_start(cfg, err);
	const struct ls_limits limits = {
		.max_name = cfg->max_lock_name,
		.max_leases = cfg->max_leases_per_session,
		.max_lease_ms =
			cfg->max_lease_ms < LT_MAX_LEASE_MS ? cfg->max_lease_ms : LT_MAX_LEASE_MS,
		.default_lease_ms = cfg->default_lease_ms,
	};
	/* traces: on when OTEL_EXPORTER_OTLP_ENDPOINT names a collector */
	a->otlp = otlp_new(a->base, a->backend.io_clock, environ, LG_VERSION, err, sizeof(err));
	if (a->otlp == NULL && err[0] != '\0')
		return fail_start(cfg, err);
	if (a->otlp != NULL) {
		lt_set_tracer(a->backend.lt, otlp_tracer(a->otlp));
		log_msg(LOG_LVL_INFO, "%s", otlp_describe(a->otlp));
	}
	a->leases = lsvc_new(a->backend.lt, &limits);
	a->backend.who = lsvc_who;
	if (a->leases != NULL && a->backend.tclock != NULL) {
		lsvc_set_test(a->leases, a->backend.tclock);
		log_msg(LOG_LVL_WARN,
			"test mode (--test-mode): the lease clock moves only with DEBUG.CLOCK "
			"ADVANCE / leasegate.clock_advance, and any client may simulate other "
			"holders; for application tests, never for locks in use");
	}
	a->redis_leases = a->leases ? rl_new(a->leases, &a->backend) : NULL;
	if (a->redis_leases != NULL) {
		/* the embedded store serves one replica: nothing to reach */
		bool shared = strcmp(a->backend.kind, "embedded") != 0;
		a->redis_leases->pubsub_poll_ms = shared ? cfg->pubsub_poll_ms : 0;
		a->redis_leases->pubsub_ttl_ms =
			cfg->ttl_attribute[0] != '\0' ? cfg->ttl_retention_ms : 0;
	}
	if (!a->wait_releases || !a->redis_leases ||
	    rl_register(a->redis_leases, a->cmds, a->redis) != 0)
		return out_of_memory();
	return true;
}

/* The users and ACLs of both protocols, and the PostgreSQL front-end
 * (unless --pg-port 0). False: said. */
static bool open_auth(struct app *a, const struct cfg *cfg)
{
	char err[512];
	a->auth = auth_new(cfg, a->base, acl_known, a->cmds, err, sizeof(err));
	if (a->auth == NULL)
		return fail_start(cfg, err);
	srv_set_auth(a->srv, a->auth);
	auth_on_reload(a->auth, acl_reloaded, a->leases);
	if (auth_has_file(a->auth))
		log_msg(LOG_LVL_INFO, "users from %s: %u", cfg->aclfile,
			acl_count(auth_acl(a->auth)));
	if (cfg->pg_port == 0)
		return true;
	a->pg_auth = auth_pg_new(cfg, err, sizeof(err));
	if (a->pg_auth == NULL)
		return fail_start(cfg, err);
	auth_set_pg(a->auth, a->pg_auth);
	a->pg = pg_fe_new(a->srv, cfg, a->leases, a->pg_auth);
	if (a->pg == NULL)
		return out_of_memory();
	return true;
}

/* Opens the protocol ports, the admin port, and catches the signals.
 * False: said. */
static bool listen_all(struct app *a, const struct cfg *cfg)
{
	char err[512];
	if (cfg->port == 0 && cfg->tls_port == 0 && cfg->pg_port == 0 && cfg->unixsocket[0] == '\0')
		log_msg(LOG_LVL_WARN,
			"no protocol port (--port, --tls-port, --pg-port and "
			"--unixsocket are off): only the admin port is open, no client "
			"can take a lock");
	/* The protocol ports open now, before the store: a client that comes
	 * early is told -LOADING (57P03 on PostgreSQL) and why, rather than
	 * refused; a port taken stops the start at once. */
	if (!a->ready)
		cmd_table_set_gate(a->cmds, store_ready, a);
	if (a->pg != NULL)
		pg_fe_set_gate(a->pg, store_ready, a);
	if (!redis_listen(a->redis, err, sizeof(err)) ||
	    (a->pg != NULL && !pg_fe_listen(a->pg, err, sizeof(err))))
		return fail_start(cfg, err);
	if (cfg->admin_port > 0) {
		const struct admin_ops ops = {admin_ready, admin_metrics, a};
		a->admin = admin_new(a->base, cfg, &ops, err, sizeof(err));
		if (a->admin == NULL)
			return fail_start(cfg, err);
		log_msg(LOG_LVL_INFO, "admin HTTP on %s:%d (/healthz, /readyz, /metrics)",
			cfg->bind, admin_port(a->admin));
	}
	a->ev_term = evsignal_new(a->base, SIGTERM, on_stop, a);
	a->ev_int = evsignal_new(a->base, SIGINT, on_stop, a);
	a->ev_hup = evsignal_new(a->base, SIGHUP, on_hup, a);
	if (!a->ev_term || !a->ev_int || !a->ev_hup || event_add(a->ev_term, NULL) ||
	    event_add(a->ev_int, NULL) || event_add(a->ev_hup, NULL)) {
		fprintf(stderr, "leasegate: cannot install signal handlers\n");
		return false;
	}
	return true;
}

/* Runs the event loop until the stop signal's shutdown breaks it. */
static void run(struct app *a)
{
	loop_poll_init(&a->poll, a->cfg->busy_poll_us);
	srv_set_poll(a->srv, &a->poll);
	if (loop_run(a->base, &a->poll) != 0) {
		log_msg(LOG_LVL_ERROR, "event loop failed");
		a->exit_code = 1;
	}
}

/* The last line of the log: what the shutdown did, leases released and
 * those whose release failed or did not finish in time (free once their
 * lease runs out). */
static void log_stopped(const struct app *a)
{
	if (!a->stopping) {
		log_msg(LOG_LVL_INFO, "stopped");
		return;
	}
	struct lt_stats st;
	lt_stats(a->backend.lt, &st);
	uint64_t failed =
		a->backend.obs.events[OBS_RELEASE_FAILED - OBS_FIRST_ID] - a->stop_release_failed;
	uint64_t left = st.leases + failed;
	uint64_t released = a->stop_leases > left ? a->stop_leases - left : 0;
	log_fields(LOG_LVL_INFO,
		   (struct log_field[]){LOG_NUM("sessions", (long long)a->stop_sessions),
					LOG_NUM("leases_released", (long long)released),
					LOG_NUM("leases_not_released", (long long)left)},
		   3, "stopped: %llu client sessions closed, %llu leases released%s",
		   (unsigned long long)a->stop_sessions, (unsigned long long)released,
		   left ? "; some not released are free once their lease runs out" : "");
}

static void shut_down(struct app *a)
{
	admin_free(a->admin);
	auth_flush_held(a->auth); /* held login answers let their connections go */
	srv_free(a->srv);
	redis_free(a->redis);
	pg_fe_free(a->pg);
	auth_pg_free(a->pg_auth);
	tls_srv_free(a->tls);
	auth_free(a->auth);
	rl_free(a->redis_leases);
	lsvc_free(a->leases);
	/* the exporter after the lock table, whose last spans end there, and
	 * before the clock its timers are on */
	backend_close(&a->backend, free_otlp, a->otlp);
	event_free(a->wait_releases);
	if (a->drain_timer != NULL)
		event_free(a->drain_timer);
	event_free(a->ev_term);
	event_free(a->ev_int);
	event_free(a->ev_hup);
	cmd_table_free(a->cmds);
	event_base_free(a->base);
	log_close();
}

int main(int argc, char **argv)
{
	static struct cfg cfg;
	int rc = run_instead(argc, argv);
	if (rc >= 0)
		return rc;
	if ((rc = parse_config(&cfg, argc, argv)) >= 0)
		return rc;
	if (!open_logs(&cfg, argc, argv))
		return 1;
	/* static: a start that fails returns at once, leaving what it opened
	 * to the exit (reachable, so the sanitizer build reports no leak) */
	static struct app a;
	if (!open_server(&a, &cfg) || !open_store(&a, &cfg) || !open_auth(&a, &cfg) ||
	    !listen_all(&a, &cfg))
		return 1;
	run(&a);
	log_stopped(&a);
	shut_down(&a);
	return a.exit_code;
}
