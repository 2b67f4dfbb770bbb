/*
 * lock_cli: `leasegate lock`'s options, its connection and acquire; the
 * run of the command is lock_run.c's. See lock_cli.h.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "gateway/cli/lock_int.h"
#include "gateway/config.h"

/* How long connecting, AUTH and HELLO may take. */
#define CONNECT_TIMEOUT_MS 5000
/* How much later than --wait the gateway's nil may come before we give up. */
#define WAIT_MARGIN_MS 10000
/* The gateway's bounds on lease-ms (docs/redis.md: LOCK.ACQUIRE). */
#define MIN_LEASE_MS 1000
#define MAX_LEASE_MS (24LL * 3600 * 1000)

/* --- options --- */

enum opt_kind { OPT_STRING, OPT_PORT, OPT_DURATION, OPT_NO_WAIT };

static const struct opt_def {
	const char *shortname; /* "-h", or NULL */
	const char *longname;  /* "--host" */
	enum opt_kind kind;
	size_t off; /* in struct lock_opts */
	const char *env;
	const char *arg;
	const char *help;
} options[] = {
	{"-h", "--host", OPT_STRING, offsetof(struct lock_opts, host), "LEASEGATE_HOST", "HOST",
	 "the gateway's host (default 127.0.0.1)"},
	{"-p", "--port", OPT_PORT, offsetof(struct lock_opts, port), "LEASEGATE_PORT", "PORT",
	 "its Redis protocol port (default 6379)"},
	{"-s", "--socket", OPT_STRING, offsetof(struct lock_opts, socket), NULL, "PATH",
	 "its Unix socket instead of host and port"},
	{"-a", "--password", OPT_STRING, offsetof(struct lock_opts, password), "LEASEGATE_PASSWORD",
	 "PASSWORD", "AUTH with this password (--requirepass)"},
	{NULL, "--user", OPT_STRING, offsetof(struct lock_opts, user), NULL, "USER",
	 "AUTH as this user (with -a)"},
	{NULL, "--lease", OPT_DURATION, offsetof(struct lock_opts, lease_ms), NULL, "DURATION",
	 "the lease (default 30s; 1s to 1d)"},
	{NULL, "--wait", OPT_DURATION, offsetof(struct lock_opts, wait_ms), NULL, "DURATION",
	 "give up after this long (default: wait forever; 0: try once)"},
	{NULL, "--no-wait", OPT_NO_WAIT, offsetof(struct lock_opts, wait_ms), NULL, NULL,
	 "try once: exit 75 at once when another holder has the lock"},
	{NULL, "--holder", OPT_STRING, offsetof(struct lock_opts, holder), NULL, "LABEL",
	 "holder label (default: the gateway's --holder-label)"},
	{NULL, "--grace", OPT_DURATION, offsetof(struct lock_opts, grace_ms), NULL, "DURATION",
	 "lease lost: SIGKILL this long after SIGTERM (default 10s)"},
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static const struct {
	int code;
	const char *what;
} exit_codes[] = {
	{LOCK_EXIT_USAGE, "bad options"},
	{LOCK_EXIT_UNAVAILABLE,
	 "cannot connect to the gateway, or a protocol or server error (the message says)"},
	{LOCK_EXIT_NOT_ACQUIRED, "not acquired: --no-wait found it held, or --wait ran out"},
	{LOCK_EXIT_LOST, "the lease was lost while the command ran (it was sent SIGTERM)"},
	{LOCK_EXIT_NOT_EXECUTABLE, "the command cannot be executed"},
	{LOCK_EXIT_NOT_FOUND, "the command was not found"},
};

void lock_cli_usage(FILE *f)
{
	fprintf(f,
		"usage: leasegate lock [options] NAME [--] command [args...]\n\n"
		"Runs the command while holding the leasegate lock NAME, taken from a running\n"
		"gateway over the Redis protocol (LOCK.ACQUIRE). The command gets LEASEGATE_LOCK\n"
		"(NAME) and LEASEGATE_TOKEN (the fencing token) in its environment. The gateway\n"
		"renews the lease while the connection lives; this process keeps it open, PINGs\n"
		"every third of the lease and forwards SIGINT, SIGTERM and SIGHUP sent to it. A\n"
		"lost lease (pushed by the gateway, or the connection gone, which releases it)\n"
		"sends the command SIGTERM, then SIGKILL after --grace. At the command's end the\n"
		"lock is released.\n\n"
		"options (durations take ms, s, m, h, d; a bare number is ms):\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct opt_def *d = &options[i];
		char left[64];
		snprintf(left, sizeof(left), "%s%s%s%s%s", d->shortname ? d->shortname : "",
			 d->shortname ? ", " : "    ", d->longname, d->arg ? " " : "",
			 d->arg ? d->arg : "");
		fprintf(f, "  %-26s %s%s%s\n", left, d->help, d->env ? "; env " : "",
			d->env ? d->env : "");
	}
	fprintf(f,
		"  %-26s %s\n\nexit status: the command's own (128+N when killed by signal N), "
		"or\n",
		"    --help", "this text");
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++)
		fprintf(f, "  %3d  %s\n", exit_codes[i].code, exit_codes[i].what);
	fprintf(f,
		"\nexample: leasegate lock --wait 10m nightly-report -- /usr/local/bin/report\n");
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* Stores value into the option's field; false with err when bad. `from`
 * names where it came from, for the message. */
static bool set_option(struct lock_opts *o, const struct opt_def *d, const char *value,
		       const char *from, char *err, size_t errlen)
{
	char *field = (char *)o + d->off;
	int64_t v;
	char *end;
	switch (d->kind) {
	case OPT_STRING:
		*(const char **)(void *)field = value;
		return true;
	case OPT_PORT:
		errno = 0;
		v = strtoll(value, &end, 10);
		if (errno || end == value || *end || v < 1 || v > 65535) {
			snprintf(err, errlen, "bad value for %s: '%s' is not a port (1-65535)",
				 from, value);
			return false;
		}
		*(int64_t *)(void *)field = v;
		return true;
	case OPT_DURATION:
		if (!cfg_parse_duration(value, &v)) {
			snprintf(
				err, errlen,
				"bad value for %s: '%s' is not a duration (250ms, 30s, 5m, 1h, 1d)",
				from, value);
			return false;
		}
		*(int64_t *)(void *)field = v;
		return true;
	case OPT_NO_WAIT:
		*(int64_t *)(void *)field = 0;
		return true;
	}
	return false;
}

/* The option argv[*i] names (and its value: inline after '=', or the next
 * argument). */
static enum lock_parse take_option(struct lock_opts *o, int argc, char **argv, int *i,
				   bool *waits_set, bool *no_wait, char *err, size_t errlen)
{
	const char *a = argv[*i];
	const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	for (size_t k = 0; k < N_OPTIONS; k++) {
		const struct opt_def *d = &options[k];
		bool is_short = d->shortname && strcmp(a, d->shortname) == 0;
		if (!is_short && (strlen(d->longname) != n || strncmp(a, d->longname, n) != 0))
			continue;
		const char *value = NULL;
		if (d->arg == NULL) {
			if (eq) {
				snprintf(err, errlen, "%s takes no value", d->longname);
				return LOCK_PARSE_USAGE;
			}
		} else if (eq) {
			value = eq + 1;
		} else if (*i + 1 < argc) {
			value = argv[++*i];
		} else {
			snprintf(err, errlen, "%s needs a value (%s)",
				 is_short ? d->shortname : d->longname, d->arg);
			return LOCK_PARSE_USAGE;
		}
		if (d->kind == OPT_NO_WAIT)
			*no_wait = true;
		if (d->off == offsetof(struct lock_opts, wait_ms) && d->kind == OPT_DURATION)
			*waits_set = true;
		return set_option(o, d, value, is_short ? d->shortname : d->longname, err, errlen)
			       ? LOCK_PARSE_RUN
			       : LOCK_PARSE_USAGE;
	}
	snprintf(err, errlen, "unknown option %s (leasegate lock --help lists them)", a);
	return LOCK_PARSE_USAGE;
}

/* Bounds across options, once they are all read. */
static enum lock_parse check(const struct lock_opts *o, bool waits_set, bool no_wait, char *err,
			     size_t errlen)
{
	if (waits_set && no_wait)
		snprintf(err, errlen, "--wait and --no-wait exclude each other");
	else if (o->lease_ms < MIN_LEASE_MS || o->lease_ms > MAX_LEASE_MS)
		snprintf(err, errlen,
			 "--lease must be from 1s to 1d (the gateway's bounds), not %lldms",
			 (long long)o->lease_ms);
	else if (o->user && !o->password)
		snprintf(err, errlen, "--user needs a password (-a or LEASEGATE_PASSWORD)");
	else if (o->holder && (o->holder[0] == '\0' || strlen(o->holder) > 256))
		snprintf(err, errlen, "--holder must be 1 to 256 characters");
	else if (o->name == NULL)
		snprintf(err, errlen,
			 "no lock name (usage: leasegate lock [options] NAME -- command)");
	else if (o->name[0] == '\0')
		snprintf(err, errlen, "the lock name is empty");
	else if (o->cmd == NULL || o->cmd[0] == NULL)
		snprintf(err, errlen,
			 "no command to run (usage: leasegate lock [options] NAME -- "
			 "command [args...])");
	else
		return LOCK_PARSE_RUN;
	return LOCK_PARSE_USAGE;
}

enum lock_parse lock_cli_parse(struct lock_opts *o, int argc, char **argv, char *const *envp,
			       char *err, size_t errlen)
{
	*o = (struct lock_opts){
		.host = "127.0.0.1",
		.port = 6379,
		.lease_ms = 30000,
		.wait_ms = -1,
		.grace_ms = 10000,
	};
	err[0] = '\0';
	for (size_t k = 0; k < N_OPTIONS; k++) {
		const char *v = options[k].env ? env_get(envp, options[k].env) : NULL;
		if (v && v[0] && !set_option(o, &options[k], v, options[k].env, err, errlen))
			return LOCK_PARSE_USAGE;
	}
	bool waits_set = false, no_wait = false;
	int i = 1;
	/* options, NAME, more options, then the command: after `--`, or from
	 * the first argument after NAME that is not an option */
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0)
			return LOCK_PARSE_HELP;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] == '-' && a[1] != '\0') {
			enum lock_parse r =
				take_option(o, argc, argv, &i, &waits_set, &no_wait, err, errlen);
			if (r != LOCK_PARSE_RUN)
				return r;
		} else if (o->name == NULL) {
			o->name = a;
		} else {
			break;
		}
	}
	if (o->name == NULL && i < argc)
		o->name = argv[i++]; /* NAME after `--` */
	o->cmd = i < argc ? &argv[i] : NULL;
	return check(o, waits_set, no_wait, err, errlen);
}

/* --- the connection and the acquire --- */

int64_t lock_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void lock_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
}

enum lock_wait lock_await(struct lock_ctx *x, int timeout_ms, struct resp_reply **rep, int *sig,
			  char *err, size_t errlen)
{
	int64_t deadline = timeout_ms < 0 ? -1 : lock_now_ms() + timeout_ms;
	for (;;) {
		switch (cli_conn_recv(x->conn, rep, err, errlen)) {
		case CLI_RECV_REPLY:
			return LOCK_WAIT_REPLY;
		case CLI_RECV_CLOSED:
		case CLI_RECV_BAD:
			return LOCK_WAIT_FAILED;
		case CLI_RECV_NONE:
			break;
		}
		int left = -1;
		if (deadline >= 0) {
			int64_t now = lock_now_ms();
			if (now >= deadline)
				return LOCK_WAIT_TIMEOUT;
			left = (int)(deadline - now);
		}
		struct pollfd p[2] = {{cli_conn_fd(x->conn), POLLIN, 0}, {x->sigfd, POLLIN, 0}};
		if (poll(p, 2, left) < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return LOCK_WAIT_FAILED;
		}
		struct signalfd_siginfo si;
		if ((p[1].revents & POLLIN) && read(x->sigfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo != SIGCHLD) {
			*sig = (int)si.ssi_signo;
			return LOCK_WAIT_SIGNAL;
		}
	}
}

/* Sends argv and waits for its reply (pushes skipped). Returns 0 with *rep
 * set, or the exit status after saying why. */
static int ask(struct lock_ctx *x, int argc, const char **argv, int timeout_ms,
	       struct resp_reply **rep)
{
	char err[512];
	int sig = 0;
	if (!cli_conn_send(x->conn, argc, argv, err, sizeof(err))) {
		fprintf(stderr, LOCK_MSG_PREFIX "%s\n", err);
		return LOCK_EXIT_UNAVAILABLE;
	}
	for (;;) {
		switch (lock_await(x, timeout_ms, rep, &sig, err, sizeof(err))) {
		case LOCK_WAIT_REPLY:
			if ((*rep)->type != RESP_REPLY_PUSH)
				return 0;
			resp_reply_free(*rep);
			*rep = NULL;
			continue;
		case LOCK_WAIT_SIGNAL:
			/* leaving closes the connection, which ends a wait */
			fprintf(stderr, LOCK_MSG_PREFIX "%s while waiting for %s\n", strsignal(sig),
				argv[0]);
			return 128 + sig;
		case LOCK_WAIT_TIMEOUT:
			fprintf(stderr, LOCK_MSG_PREFIX "no answer to %s within %d ms\n", argv[0],
				timeout_ms);
			return LOCK_EXIT_UNAVAILABLE;
		case LOCK_WAIT_FAILED:
			fprintf(stderr, LOCK_MSG_PREFIX "%s: %s\n", argv[0], err);
			return LOCK_EXIT_UNAVAILABLE;
		}
	}
}

/* Reports a reply that is not what `what` expects; returns the status. */
static int unexpected(const char *what, const struct resp_reply *rep, const char *hint)
{
	char text[512];
	fprintf(stderr, LOCK_MSG_PREFIX "%s: %s%s%s\n", what,
		rep->type == RESP_REPLY_ERROR ? "" : "unexpected reply ",
		resp_reply_text(rep, text, sizeof(text)), hint);
	return LOCK_EXIT_UNAVAILABLE;
}

/* AUTH when asked to, then HELLO 3 (so that a lost lease is pushed). */
static int handshake(struct lock_ctx *x)
{
	const struct lock_opts *o = x->o;
	struct resp_reply *rep = NULL;
	int rc;
	if (o->password) {
		const char *auth[] = {"AUTH", o->user ? o->user : o->password, o->password};
		if ((rc = ask(x, o->user ? 3 : 2, auth, CONNECT_TIMEOUT_MS, &rep)) != 0)
			return rc;
		rc = rep->type == RESP_REPLY_STATUS ? 0 : unexpected("AUTH", rep, "");
		resp_reply_free(rep);
		if (rc != 0)
			return rc;
	}
	const char *hello[] = {"HELLO", "3"};
	if ((rc = ask(x, 2, hello, CONNECT_TIMEOUT_MS, &rep)) != 0)
		return rc;
	if (rep->type != RESP_REPLY_MAP)
		rc = unexpected("HELLO 3", rep,
				rep->type == RESP_REPLY_ERROR && strncmp(rep->str, "NOAUTH", 6) == 0
					? " (give the password with -a or LEASEGATE_PASSWORD)"
					: "");
	resp_reply_free(rep);
	return rc;
}

/* LOCK.ACQUIRE; 0 with x->token set, or the exit status. */
static int acquire(struct lock_ctx *x)
{
	const struct lock_opts *o = x->o;
	char lease[24], wait[24], text[512];
	const char *argv[8] = {"LOCK.ACQUIRE", o->name, lease};
	int argc = 3, timeout = -1, rc;
	snprintf(lease, sizeof(lease), "%lld", (long long)o->lease_ms);
	if (o->wait_ms != 0) {
		/* WAIT 0 is the gateway's "forever" */
		snprintf(wait, sizeof(wait), "%lld", (long long)(o->wait_ms < 0 ? 0 : o->wait_ms));
		argv[argc++] = "WAIT";
		argv[argc++] = wait;
		if (o->wait_ms > 0)
			timeout = (int)(o->wait_ms < INT32_MAX - WAIT_MARGIN_MS
						? o->wait_ms + WAIT_MARGIN_MS
						: INT32_MAX);
	} else {
		timeout = CONNECT_TIMEOUT_MS + WAIT_MARGIN_MS;
	}
	if (o->holder) {
		argv[argc++] = "HOLDER";
		argv[argc++] = o->holder;
	}
	struct resp_reply *rep = NULL;
	if ((rc = ask(x, argc, argv, timeout, &rep)) != 0)
		return rc;
	switch (rep->type) {
	case RESP_REPLY_INT:
		x->token = rep->num;
		rc = 0;
		break;
	case RESP_REPLY_NULL:
		if (o->wait_ms == 0)
			fprintf(stderr, LOCK_MSG_PREFIX "lock %s is held by another holder\n",
				o->name);
		else
			fprintf(stderr, LOCK_MSG_PREFIX "lock %s not acquired within %lld ms\n",
				o->name, (long long)o->wait_ms);
		rc = LOCK_EXIT_NOT_ACQUIRED;
		break;
	default:
		snprintf(text, sizeof(text), "LOCK.ACQUIRE %s", o->name);
		rc = unexpected(text, rep, "");
		break;
	}
	resp_reply_free(rep);
	return rc;
}

int lock_cli_main(int argc, char **argv, char *const *envp)
{
	struct lock_opts o;
	char err[512];
	switch (lock_cli_parse(&o, argc, argv, envp, err, sizeof(err))) {
	case LOCK_PARSE_HELP:
		lock_cli_usage(stdout);
		return 0;
	case LOCK_PARSE_USAGE:
		fprintf(stderr, LOCK_MSG_PREFIX "%s\n", err);
		return LOCK_EXIT_USAGE;
	case LOCK_PARSE_RUN:
		break;
	}
	/* Signals come through a descriptor polled with the connection;
	 * blocked from here, so none is lost before the poll. */
	struct lock_ctx x = {.o = &o, .sigfd = -1};
	sigset_t set;
	lock_signals(&set);
	if (sigprocmask(SIG_BLOCK, &set, &x.old_mask) != 0 ||
	    (x.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		fprintf(stderr, LOCK_MSG_PREFIX "cannot take signals: %s\n", strerror(errno));
		return LOCK_EXIT_UNAVAILABLE;
	}
	x.conn = cli_conn_open(o.host, (int)o.port, o.socket, CONNECT_TIMEOUT_MS, err, sizeof(err));
	if (x.conn == NULL) {
		fprintf(stderr, LOCK_MSG_PREFIX "%s\n", err);
		close(x.sigfd);
		return LOCK_EXIT_UNAVAILABLE;
	}
	int rc = handshake(&x);
	if (rc == 0)
		rc = acquire(&x);
	if (rc == 0)
		rc = lock_run(&x);
	cli_conn_close(x.conn);
	close(x.sigfd);
	return rc;
}
