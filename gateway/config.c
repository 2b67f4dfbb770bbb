/*
 * config: the option table and the loader (see config.h).
 *
 * Every option is one row of `options`; the loader, the validators, the
 * environment names and --help are all driven by it. Values are parsed
 * from text the same way whatever their source, defaults included.
 */
#include "gateway/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <netdb.h>
#include <sys/socket.h>

/* T_SECONDS: a duration whose bare number is seconds (Redis's `timeout 300`);
 * T_MODE: file permission bits in octal, as Redis's unixsocketperm. */
enum opt_type { T_STR, T_INT, T_DURATION, T_SIZE, T_BOOL, T_ENUM, T_SECONDS, T_MODE };

struct option_def {
	const char *name;
	enum opt_type type;
	size_t offset;
	size_t size;		    /* T_STR: capacity of the char array */
	const char *def;	    /* default, as text; NULL = empty / off */
	long long min, max;	    /* numbers: range; T_STR: length range */
	const char *const *choices; /* T_ENUM: index = value */
	const char *help;
	const char *no_default; /* --help's words for an empty default */
	unsigned flags;		/* enum cfg_opt_flags */
	const char *redis_name; /* the name Redis gives it, CONFIG GET's alias; or NULL */
};

static const char *const log_levels[] = {"debug", "info", "warn", "error", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
static const char *const pg_auths[] = {"trust", "scram", "md5", "password", NULL};
static const char *const tls_auths[] = {"no", "yes", "optional", NULL};
static const char *const pg_tlss[] = {"off", "optional", "required", NULL};
static const char *const heartbeats[] = {"lease", "replica", NULL};

#define DAY_MS	  (24LL * 3600 * 1000)
#define STR(f)	  T_STR, offsetof(struct cfg, f), sizeof(((struct cfg *)0)->f)
#define NUM(t, f) t, offsetof(struct cfg, f), 0

/* Only options with no default value give no_default (the last field). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct option_def options[] = {
	{"bind", STR(bind), "127.0.0.1", 1, 255, NULL, "address of every listener"},
	{"port", NUM(T_INT, port), "6379", 0, 65535, NULL, "Redis protocol port, 0 = off"},
	{"unixsocket", STR(unixsocket), NULL, 0, 107, NULL, "Redis protocol on a Unix socket"},
	{"pg-port", NUM(T_INT, pg_port), "5432", 0, 65535, NULL,
	 "PostgreSQL protocol port, 0 = off"},
	{"pg-password", STR(pg_password), NULL, 0, 511, NULL,
	 "PostgreSQL port: every user authenticates with this password (SCRAM-SHA-256 by "
	 "default; none and no --pg-users: trust); on the command line every local user can "
	 "read it: prefer --pg-password-file or LEASEGATE_PG_PASSWORD",
	 .flags = CFG_OPT_SECRET},
	{"pg-password-file", STR(pg_password_file), NULL, 0, 511, NULL,
	 "file holding --pg-password (one line; refused when group or others may access it)"},
	{"pg-users", STR(pg_users), NULL, 0, 511, NULL,
	 "PostgreSQL port: file of `name:SCRAM-SHA-256$...` or `name:md5...` lines, as in "
	 "pg_authid (read at start)"},
	{"pg-auth", NUM(T_ENUM, pg_auth), "scram", 0, 0, pg_auths,
	 "PostgreSQL port's method when a password or users are set: scram, md5 or password "
	 "(cleartext); trust: no password asked"},
	{"pg-allow-cleartext-over-plain", NUM(T_BOOL, pg_cleartext_plain), "no", 0, 1, NULL,
	 "PostgreSQL port: take a cleartext password (--pg-auth password, or an ACL user with "
	 "#digests only) over plain TCP too; no: over TLS (or a Unix socket) only, as a "
	 "hostssl line of pg_hba.conf, others refused with 28000"},
	{"admin-port", NUM(T_INT, admin_port), "9464", 0, 65535, NULL,
	 "admin HTTP port (/metrics, /healthz, /readyz), 0 = off"},
	{"table", STR(table), NULL, 0, 255, NULL, "DynamoDB table of the locks",
	 "none: the embedded store"},
	{"partition-key", STR(partition_key), NULL, 0, 255, NULL, "partition key attribute",
	 "from DescribeTable"},
	{"sort-key", STR(sort_key), NULL, 0, 255, NULL, "sort key attribute", "from DescribeTable"},
	{"region", STR(region), NULL, 0, 63, NULL, "AWS region",
	 "AWS_REGION, AWS_DEFAULT_REGION, then the profile's region"},
	{"endpoint", STR(endpoint), NULL, 0, 511, NULL, "DynamoDB endpoint URL",
	 "AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, else "
	 "https://dynamodb.<region>.amazonaws.com"},
	{"create-table", NUM(T_BOOL, create_table), "no", 0, 1, NULL,
	 "create the table if it is missing"},
	{"allow-global-table", NUM(T_BOOL, allow_global_table), "no", 0, 1, NULL,
	 "open a DynamoDB global table all the same: a conditional write is checked in one "
	 "region only, so locks are then as safe as one region, if every replica of "
	 "leasegate uses the endpoint of the same region (docs/dynamodb.md, Global tables)"},
	{"ddb-max-in-flight", NUM(T_INT, ddb_max_in_flight), "256", 1, 4096, NULL,
	 "most DynamoDB requests at once (one keep-alive connection each); more wait, "
	 "renewals and releases first, and past as many again waiting an acquire or a read "
	 "is answered TRYAGAIN. 256 carries 100,000 leases of 30 s at 10 ms per request "
	 "(docs/performance.md, Sizing a replica)"},
	{"holder-label", STR(holder_label), NULL, 0, 256, NULL,
	 "written as `holder`, 1-256 characters", "the host name"},
	{"heartbeat", NUM(T_ENUM, heartbeat), "lease", 0, 0, heartbeats,
	 "how a replica proves alive the holders of the locks it holds: lease, each lease "
	 "renews its own item every third of its lease (one write each); replica, one session "
	 "item per replica renewed for all its exclusive locks (a few writes a second however "
	 "many locks). Turn replica on only once every replica on the table runs a release "
	 "that reads such locks (docs/dynamodb.md, One heartbeat per replica)"},
	{"replica-id", STR(replica_id), NULL, 0, 64, NULL,
	 "--heartbeat replica: this replica's name in its session item "
	 "(SESSION#<id>#<incarnation>), 1-64 printable characters, no '#'",
	 "--holder-label's first 64 characters, '#' as '_'"},
	{"heartbeat-sweep", NUM(T_DURATION, heartbeat_sweep_ms), "5m", 1000, DAY_MS, NULL,
	 "--heartbeat replica: every lock held so is read back once in this period (one "
	 "BatchGetItem per 100 locks), so that one rewritten or deleted by another tool is "
	 "found lost within it"},
	{"ttl-attribute", STR(ttl_attribute), NULL, 0, 255, NULL, "TTL attribute of lock items",
	 "off"},
	{"ttl-retention", NUM(T_DURATION, ttl_retention_ms), "30d", DAY_MS, 3650 * DAY_MS, NULL,
	 "lock item expiry after the last write, >= 1d"},
	{"memory-retention", NUM(T_DURATION, memory_retention_ms), "1h", 0, 3650 * DAY_MS, NULL,
	 "embedded store: forget a released lock after this (its token starts at 1 again; "
	 "0: never)"},
	{"drain-grace", NUM(T_DURATION, drain_grace_ms), "0", 0, 600000, NULL,
	 "at SIGTERM, keep the leases acquired ADOPTABLE of the connections it closes this "
	 "long, renewed, for their clients to LOCK.ADOPT on another replica, then release "
	 "the rest (0: release everything at once). At most --max-lease (a drained lock never "
	 "waits for its client longer than a crashed holder's lock waits for a takeover), and "
	 "with --stop-timeout, below it minus the shutdown's bound of 5 s (docs/kubernetes.md)"},
	{"stop-timeout", NUM(T_DURATION, stop_timeout_ms), "0", 0, 3600000, NULL,
	 "the time from SIGTERM to SIGKILL (in Kubernetes terminationGracePeriodSeconds minus "
	 "the preStop hook's; podman stop --time), so that a --drain-grace that would leave "
	 "leases to SIGKILL is refused at start (0: unknown, not checked)"},
	{"pubsub-poll", NUM(T_DURATION, pubsub_poll_ms), "100ms", 0, 10000, NULL,
	 "PUBLISH reaches the subscribers of other replicas: a message is written to the "
	 "table, and a replica with subscribers reads each of their channels this often "
	 "(0: PUBLISH reaches this replica's subscribers only, and writes nothing)"},
	{"max-locks", NUM(T_INT, max_locks), "1000000", 1, 1000000000, NULL,
	 "embedded store: most lock items at once (new names refused past it)"},
	{"test-mode", NUM(T_BOOL, test_mode), "no", 0, 1, NULL,
	 "for application tests (docs/testing.md): the lease core's monotonic and wall clock "
	 "move only with DEBUG.CLOCK ADVANCE (leasegate.clock_advance), and the commands that "
	 "simulate other holders exist; refused unless --bind is loopback and the store is the "
	 "embedded one or an emulator's --endpoint (not amazonaws.com)"},
	{"default-lease", NUM(T_DURATION, default_lease_ms), "30s", 1000, DAY_MS, NULL,
	 "lease when a client gives none"},
	{"max-lease", NUM(T_DURATION, max_lease_ms), "1d", 1000, DAY_MS, NULL,
	 "longest lease a client may ask for"},
	{"requirepass", STR(requirepass), NULL, 0, 511, NULL,
	 "password clients must give with AUTH; on the command line every local user can read "
	 "it: prefer --requirepass-file or LEASEGATE_REQUIREPASS",
	 "none", CFG_OPT_SECRET},
	{"requirepass-file", STR(requirepass_file), NULL, 0, 511, NULL,
	 "file holding --requirepass (one line; refused when group or others may access it)"},
	/* users and ACLs (gateway/conn/acl.h, auth.h) */
	{"aclfile", STR(aclfile), NULL, 0, 511, NULL,
	 "users and their rules, one `user NAME rules...` a line in Redis's ACL syntax, for "
	 "both protocols (re-read on SIGHUP and ACL LOAD; refused when it holds passwords and "
	 "group or others may read it)",
	 "none: one user, with --requirepass", CFG_OPT_RELOAD},
	{"auth-max-delay", NUM(T_DURATION, auth_max_delay_ms), "5s", 0, 60000, NULL,
	 "after failed logins from an address, its next attempts are answered 100ms late, "
	 "doubling per failure up to this, until a success (0: off)"},
	{"maxclients", NUM(T_INT, maxclients), "10000", 1, 1000000, NULL,
	 "most client connections at once, every protocol port together (lowered at "
	 "start to what the open-files limit allows, with a warning)"},
	{"admin-maxclients", NUM(T_INT, admin_maxclients), "16", 1, 1000, NULL,
	 "most connections at once on the admin port (not counted in --maxclients)"},
	{"tcp-keepalive", NUM(T_DURATION, tcp_keepalive_ms), "300s", 0, DAY_MS, NULL,
	 "probe a silent client connection after this, so a vanished client's leases go "
	 "(0: off)"},
	{"busy-poll-us", NUM(T_INT, busy_poll_us), "100", 0, 1000, NULL,
	 "poll up to this many microseconds for the next request before sleeping, while "
	 "requests come that close together (spares clients the cost of waking the "
	 "server; never polls longer than the work just done; 0: off)"},
	{"log-level", NUM(T_ENUM, log_level), "info", 0, 0, log_levels,
	 "debug, info, warn or error"},
	{"log-format", NUM(T_ENUM, log_format), "text", 0, 0, log_formats, "text or json"},
	{"log-file", STR(log_file), NULL, 0, 511, NULL, "log to this file (reopened on SIGHUP)",
	 "stderr", CFG_OPT_RELOAD},
	{"max-query-buffer", NUM(T_SIZE, max_query_buffer), "1mb", 1024, 1LL << 30, NULL,
	 "bytes a client may have sent and not yet had parsed",
	 .redis_name = "client-query-buffer-limit"},
	{"max-args", NUM(T_INT, max_args), "1024", 1, 1 << 20, NULL, "arguments of one command"},
	{"max-bulk", NUM(T_SIZE, max_bulk), "512kb", 16, 1LL << 29, NULL, "bytes of one argument",
	 .redis_name = "proto-max-bulk-len"},
	{"max-inline", NUM(T_SIZE, max_inline), "64kb", 16, 1LL << 20, NULL,
	 "bytes of one inline command line"},
	{"max-output-buffer", NUM(T_SIZE, max_output_buffer), "1mb", 1024, 1LL << 30, NULL,
	 "a client's unsent replies past which its reading pauses"},
	{"max-lock-name", NUM(T_INT, max_lock_name), "1024", 1, 2000, NULL,
	 "bytes of a lock name (<= 2000)"},
	{"max-leases-per-session", NUM(T_INT, max_leases_per_session), "1000", 1, 1000000, NULL,
	 "leases one connection may hold"},
	{"fenced-tables", STR(fenced_tables), NULL, 0, 4095, NULL,
	 "DynamoDB tables LOCK.TRANSACT, LEADER.TRANSACT and leasegate.transact() may "
	 "write, comma-separated",
	 "none, fenced writes off"},
	{"config", STR(config_file), NULL, 0, 511, NULL, "read options from this file first"},
	/* TLS, named as in redis.conf */
	{"tls-port", NUM(T_INT, tls_port), "0", 0, 65535, NULL,
	 "Redis protocol over TLS on this port, beside --port, 0 = off (needs "
	 "--tls-cert-file and --tls-key-file)"},
	{"tls-cert-file", STR(tls_cert_file), NULL, 0, 511, NULL,
	 "server certificate (PEM, with its chain) of the TLS port and the PostgreSQL port's "
	 "SSLRequest; reread on SIGHUP",
	 .flags = CFG_OPT_RELOAD},
	{"tls-key-file", STR(tls_key_file), NULL, 0, 511, NULL,
	 "private key (PEM) of --tls-cert-file; reread on SIGHUP", .flags = CFG_OPT_RELOAD},
	{"tls-ca-cert-file", STR(tls_ca_cert_file), NULL, 0, 511, NULL,
	 "CA certificates (PEM) that client certificates must chain to; reread on SIGHUP",
	 .flags = CFG_OPT_RELOAD},
	{"tls-auth-clients", NUM(T_ENUM, tls_auth_clients), "yes", 0, 0, tls_auths,
	 "TLS port: yes, clients must present a certificate of --tls-ca-cert-file; optional, "
	 "one is checked if presented; no, none is asked (as Redis: yes and optional need "
	 "--tls-ca-cert-file)"},
	{"tls-protocols", STR(tls_protocols), "TLSv1.2 TLSv1.3", 1, 127, NULL,
	 "TLS versions accepted, among TLSv1 TLSv1.1 TLSv1.2 TLSv1.3"},
	{"tls-ciphers", STR(tls_ciphers), NULL, 0, 511, NULL,
	 "TLSv1.2 and older cipher list, OpenSSL syntax", "OpenSSL's"},
	{"tls-ciphersuites", STR(tls_ciphersuites), NULL, 0, 511, NULL,
	 "TLSv1.3 ciphersuites, OpenSSL syntax", "OpenSSL's"},
	{"pg-tls", NUM(T_ENUM, pg_tls), "optional", 0, 0, pg_tlss,
	 "PostgreSQL port, once a certificate is configured: optional (SSLRequest answered S), "
	 "required (plaintext sessions refused, 28000), off (answered N)"},
	/* hostile clients: protected mode, timeouts, per-session bounds, the
	 * Unix socket's permissions (as redis.conf names those it has) */
	{"protected-mode", NUM(T_BOOL, protected_mode), "yes", 0, 1, NULL,
	 "as Redis: while a port lets clients in without a password (Redis: no --requirepass "
	 "or ACL password; PostgreSQL: trust), only loopback and Unix socket clients are "
	 "served on it; others get an error saying how to change that"},
	{"unixsocketperm", NUM(T_MODE, unixsocketperm), "770", 0, 0777, NULL,
	 "permissions of the --unixsocket file, octal (owner and group: grant access by "
	 "group, e.g. Kubernetes fsGroup; never to others by default)"},
	{"auth-timeout", NUM(T_DURATION, auth_timeout_ms), "10s", 0, 3600000, NULL,
	 "a connection that has not authenticated this long after it came (Redis, when a "
	 "password is needed; PostgreSQL: its whole startup) is closed (0: off)"},
	{"timeout", NUM(T_SECONDS, timeout_ms), "0", 0, 3650 * DAY_MS, NULL,
	 "as Redis: close a client idle this long (a bare number is seconds), unless it holds "
	 "a lease or waits for one (0: off)"},
	{"max-prepared-statements", NUM(T_INT, max_prepared), "1000", 1, 1000000, NULL,
	 "PostgreSQL: named prepared statements of one session (Parse past it: 54000)"},
	{"max-portals", NUM(T_INT, max_portals), "1000", 1, 1000000, NULL,
	 "PostgreSQL: named portals of one session (Bind past it: 54000)"},
};
#pragma GCC diagnostic pop

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))
_Static_assert(N_OPTIONS <= sizeof(((struct cfg *)0)->given), "cfg.given too small");

static const struct option_def *find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
			return &options[i];
	return NULL;
}

/* LEASEGATE_<NAME>: upper case, '-' -> '_'. */
static void env_name(const struct option_def *o, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "LEASEGATE_");
	for (const char *s = o->name; *s && n + 1 < len; s++)
		buf[n++] = *s == '-' ? '_' : (char)toupper((unsigned char)*s);
	buf[n] = '\0';
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

static bool parse_ll(const char *s, long long *v, char **end)
{
	if (!isdigit((unsigned char)*s) && *s != '-')
		return false;
	errno = 0;
	*v = strtoll(s, end, 10);
	return errno == 0 && *end != s;
}

/* Multiplies v by unit into *out, false on overflow. */
static bool scale(long long v, long long unit, int64_t *out)
{
	if (v < 0 || (unit && v > LLONG_MAX / unit))
		return false;
	*out = v * unit;
	return true;
}

static const struct unit {
	const char *suffix;
	long long factor;
} duration_units[] =
	{
		{"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", DAY_MS},
},
  size_units[] = {
	  {"", 1},	     {"b", 1},
	  {"k", 1000},	     {"kb", 1024},
	  {"m", 1000000},    {"mb", 1024 * 1024},
	  {"g", 1000000000}, {"gb", 1024LL * 1024 * 1024},
};

static bool parse_with_units(const char *s, const struct unit *u, size_t n, int64_t *out)
{
	long long v;
	char *end;
	if (!parse_ll(s, &v, &end))
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(end, u[i].suffix) == 0)
			return scale(v, u[i].factor, out);
	return false;
}

bool cfg_parse_duration(const char *s, int64_t *ms)
{
	return parse_with_units(s, duration_units,
				sizeof(duration_units) / sizeof(duration_units[0]), ms);
}

bool cfg_parse_size(const char *s, int64_t *bytes)
{
	return parse_with_units(s, size_units, sizeof(size_units) / sizeof(size_units[0]), bytes);
}

static bool parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*b = true;
			return true;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*b = false;
			return true;
		}
	}
	return false;
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A number of o's type as a value would be written: "1s", "64kb", "10". */
static void format_value(const struct option_def *o, long long v, char *out, size_t len)
{
	bool duration = o->type == T_DURATION || o->type == T_SECONDS; /* both held in ms */
	const struct unit *u = duration ? duration_units : size_units;
	size_t n = duration ? sizeof(duration_units) / sizeof(duration_units[0])
			    : sizeof(size_units) / sizeof(size_units[0]);
	const char *best = "";
	long long factor = 1;
	if (o->type == T_MODE) {
		snprintf(out, len, "%04llo", v);
		return;
	}
	if (duration || o->type == T_SIZE)
		for (size_t i = 0; i < n; i++)
			/* the largest exact unit; sizes in powers of 1024 */
			if (u[i].factor > factor && v % u[i].factor == 0 && v != 0 &&
			    (duration || strchr(u[i].suffix, 'b'))) {
				best = u[i].suffix;
				factor = u[i].factor;
			}
	if (duration && factor == 1)
		best = "ms";
	snprintf(out, len, "%lld%s", v / factor, best);
}

/* Sets option o from text v; `from` names the source for the message. */
static bool apply(struct cfg *c, const struct option_def *o, const char *v, const char *from,
		  char *err, size_t errlen)
{
	char *field = (char *)c + o->offset;
	int64_t n = 0;
	size_t idx = (size_t)(o - options);
	if (strcmp(from, "default") != 0 && idx < sizeof(c->given))
		c->given[idx] = 1;
	bool ok = true;
	const char *want = NULL;
	char choices[128] = "one of:";

	switch (o->type) {
	case T_STR: {
		size_t len = strlen(v);
		if ((long long)len < o->min || (long long)len > o->max || len >= o->size) {
			errf(err, errlen, "bad value for --%s (%s): length must be %lld..%lld",
			     o->name, from, o->min, o->max);
			return false;
		}
		memcpy(field, v, len + 1);
		return true;
	}
	case T_BOOL:
		ok = parse_bool(v, (bool *)field);
		want = "yes or no";
		break;
	case T_ENUM:
		ok = false;
		for (int64_t i = 0; o->choices[i]; i++)
			if (strcasecmp(v, o->choices[i]) == 0) {
				*(int64_t *)field = i;
				ok = true;
			}
		for (int64_t i = 0; o->choices[i]; i++)
			snprintf(choices + strlen(choices), sizeof(choices) - strlen(choices),
				 " %s", o->choices[i]);
		want = choices;
		break;
	case T_INT: {
		long long ll;
		char *end;
		ok = parse_ll(v, &ll, &end) && *end == '\0';
		n = ll;
		want = "an integer";
		break;
	}
	case T_DURATION:
		ok = cfg_parse_duration(v, &n);
		want = "a duration (ms, s, m, h, d)";
		break;
	case T_SIZE:
		ok = cfg_parse_size(v, &n);
		want = "a size (bytes, kb, mb, gb)";
		break;
	case T_SECONDS: {
		size_t d = strspn(v, "0123456789");
		ok = d > 0 && v[d] == '\0' ? cfg_parse_duration(v, &n) && scale(n, 1000, &n)
					   : cfg_parse_duration(v, &n);
		want = "a duration (seconds, or with ms, s, m, h, d)";
		break;
	}
	case T_MODE: {
		char *end;
		errno = 0;
		long m = strtol(v, &end, 8);
		ok = *v >= '0' && *v <= '7' && *end == '\0' && errno == 0;
		n = m;
		want = "an octal mode (e.g. 700)";
		break;
	}
	}
	if (!ok) {
		errf(err, errlen, "bad value for --%s (%s): '%s' is not %s", o->name, from, v,
		     want);
		return false;
	}
	if (o->type == T_INT || o->type == T_DURATION || o->type == T_SIZE ||
	    o->type == T_SECONDS || o->type == T_MODE) {
		if (n < o->min || n > o->max) {
			char lo[32], hi[32];
			format_value(o, o->min, lo, sizeof(lo));
			format_value(o, o->max, hi, sizeof(hi));
			errf(err, errlen, "bad value for --%s (%s): '%s' is out of range %s..%s",
			     o->name, from, v, lo, hi);
			return false;
		}
		*(int64_t *)field = n;
	}
	return true;
}

/* One `name value` setting from the command line, kept until applied. */
struct setting {
	const struct option_def *o;
	const char *value;
};

/* Options whose value is a secret: a config file that sets one must be
 * readable by its owner alone (as ssh wants of a key; --aclfile alike), and
 * so must the file option that holds it instead (the command line shows
 * it to every local user). */
static const struct secret_option {
	const char *name, *file_option;
	size_t offset, file_offset, size;
} secret_options[] = {
	{"requirepass", "requirepass-file", offsetof(struct cfg, requirepass),
	 offsetof(struct cfg, requirepass_file), sizeof(((struct cfg *)0)->requirepass)},
	{"pg-password", "pg-password-file", offsetof(struct cfg, pg_password),
	 offsetof(struct cfg, pg_password_file), sizeof(((struct cfg *)0)->pg_password)},
};
#define N_SECRETS (sizeof(secret_options) / sizeof(secret_options[0]))

static bool is_secret(const struct option_def *o)
{
	return (o->flags & CFG_OPT_SECRET) != 0;
}

/* Reads the file of secret option so (its file option set) into the
 * secret: one line, its newline aside; refused unless only its owner may
 * access it, or when the secret is given as well. */
static bool read_secret_file(struct cfg *c, const struct secret_option *so, char *err,
			     size_t errlen)
{
	const char *path = (const char *)c + so->file_offset;
	char *secret = (char *)c + so->offset;
	char buf[sizeof(c->requirepass) + 2];
	_Static_assert(sizeof(c->requirepass) == sizeof(c->pg_password), "buf fits both");
	if (secret[0] != '\0') {
		errf(err, errlen, "bad value for --%s: --%s is set too (give one of them)",
		     so->file_option, so->name);
		return false;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		errf(err, errlen, "bad value for --%s: cannot read %s: %s", so->file_option, path,
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
		errf(err, errlen,
		     "bad value for --%s: %s holds a secret and is %s (mode %04o): refused, as "
		     "ssh refuses such a key; chmod 600 %s",
		     so->file_option, path,
		     S_ISREG(st.st_mode) ? "accessible by group or others" : "not a regular file",
		     (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return false;
	}
	size_t n = 0;
	ssize_t r = 1;
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += (size_t)r;
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	bool ok = r >= 0 && n > 0 && n < so->size && memchr(buf, '\n', n) == NULL &&
		  memchr(buf, '\0', n) == NULL;
	if (ok) {
		memcpy(secret, buf, n);
		secret[n] = '\0';
	} else {
		errf(err, errlen, "bad value for --%s: %s must hold one line of 1..%zu bytes",
		     so->file_option, path, so->size - 1);
	}
	explicit_bzero(buf, sizeof(buf));
	return ok;
}

static bool read_secret_files(struct cfg *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < N_SECRETS; i++)
		if (((const char *)c + secret_options[i].file_offset)[0] != '\0' &&
		    !read_secret_file(c, &secret_options[i], err, errlen))
			return false;
	return true;
}

size_t cfg_hide_argv_secrets(int argc, char **argv, char *warn, size_t warnlen)
{
	size_t found = 0, at = 0;
	bool b;
	warn[0] = '\0';
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			continue;
		char *eq = strchr(argv[i] + 2, '=');
		size_t nlen = eq ? (size_t)(eq - argv[i] - 2) : strlen(argv[i] + 2);
		const struct option_def *o = find_option(argv[i] + 2, nlen);
		if (o == NULL)
			continue;
		/* as cfg_load reads them: a boolean may stand alone */
		char *v =
			eq ? eq + 1
			: o->type != T_BOOL
				? (i + 1 < argc ? argv[++i] : NULL)
				: (i + 1 < argc && parse_bool(argv[i + 1], &b) ? argv[++i] : NULL);
		if (v == NULL || !is_secret(o))
			continue;
		memset(v, 0, strlen(v));
		char env[64];
		env_name(o, env, sizeof(env));
		if (at < warnlen)
			at += (size_t)snprintf(
				warn + at, warnlen - at,
				"%s--%s given on the command line, which every local user can read "
				"in "
				"/proc/PID/cmdline (blanked there now, not before): pass it in a "
				"file "
				"(--%s-file PATH, mode 0600) or in the environment (%s)",
				found ? "; " : "", o->name, o->name, env);
		found++;
	}
	return found;
}

/* Reads the config file: `name value` lines, blank lines and # comments. */
static bool load_file(struct cfg *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		errf(err, errlen, "cannot open config file %s: %s", path, strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		errf(err, errlen, "cannot read config file %s: %s", path, strerror(errno));
		fclose(f);
		return false;
	}
	const char *secret = NULL; /* the first secret option the file sets */
	char line[1024];
	int lineno = 0;
	bool ok = true;
	while (ok && fgets(line, sizeof(line), f)) {
		lineno++;
		size_t len = strlen(line);
		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			errf(err, errlen, "%s:%d: line too long", path, lineno);
			ok = false;
			break;
		}
		while (len && isspace((unsigned char)line[len - 1]))
			line[--len] = '\0';
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0' || *s == '#')
			continue;
		char *name = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		size_t nlen = (size_t)(s - name);
		while (isspace((unsigned char)*s))
			s++;
		const struct option_def *o = find_option(name, nlen);
		if (!o || o->offset == offsetof(struct cfg, config_file)) {
			errf(err, errlen, "%s:%d: unknown option '%.*s'", path, lineno, (int)nlen,
			     name);
			ok = false;
			break;
		}
		char from[600];
		snprintf(from, sizeof(from), "%s:%d", path, lineno);
		ok = apply(c, o, s, from, err, errlen);
		if (ok && !secret && is_secret(o) && *s)
			secret = o->name;
	}
	fclose(f);
	if (ok && secret && (st.st_mode & 077) != 0) {
		errf(err, errlen,
		     "config file %s sets %s, a secret, and group or others may access it (mode "
		     "%04o): refused; chmod 600 %s (or pass the secret in LEASEGATE_%s)",
		     path, secret, (unsigned)(st.st_mode & 07777), path,
		     strcmp(secret, "requirepass") == 0 ? "REQUIREPASS" : "PG_PASSWORD");
		return false;
	}
	return ok;
}

/* TLS options that only make sense together. */
/* --drain-grace against the lease and the process's own end: a drain keeps a
 * lock from its waiters no longer than a crashed holder would (--max-lease),
 * and, when the time to SIGKILL is known (--stop-timeout), it ends with the
 * shutdown's bound to spare, so that what nobody adopted is released rather
 * than left to run out. */
static bool check_drain(const struct cfg *c, char *err, size_t errlen)
{
	if (c->drain_grace_ms > c->max_lease_ms) {
		errf(err, errlen,
		     "bad value for --drain-grace: longer than --max-lease (a drained lock would "
		     "wait for its client longer than a crashed holder's lock waits for a "
		     "takeover)");
		return false;
	}
	if (c->stop_timeout_ms > 0 &&
	    c->drain_grace_ms + CFG_SHUTDOWN_BOUND_S * 1000 >= c->stop_timeout_ms) {
		errf(err, errlen,
		     "bad value for --drain-grace: %lld ms + the shutdown's bound of %d s is not "
		     "below --stop-timeout %lld ms (SIGKILL would come before the leases nobody "
		     "adopted are released)",
		     (long long)c->drain_grace_ms, CFG_SHUTDOWN_BOUND_S,
		     (long long)c->stop_timeout_ms);
		return false;
	}
	return true;
}

static bool finish_tls(struct cfg *c, char *err, size_t errlen)
{
	if ((c->tls_cert_file[0] != '\0') != (c->tls_key_file[0] != '\0')) {
		errf(err, errlen,
		     "bad value for --%s: --tls-cert-file and --tls-key-file go together",
		     c->tls_cert_file[0] ? "tls-key-file" : "tls-cert-file");
		return false;
	}
	if (c->tls_port != 0 && !cfg_tls(c)) {
		errf(err, errlen,
		     "bad value for --tls-port: needs --tls-cert-file and --tls-key-file");
		return false;
	}
	if (c->tls_port != 0 && c->tls_port == c->port) {
		errf(err, errlen, "bad value for --tls-port: the same port as --port");
		return false;
	}
	/* as Redis refuses to start: a client certificate needs a CA to check it */
	if (c->tls_port != 0 && c->tls_auth_clients != CFG_TLS_AUTH_NO &&
	    c->tls_ca_cert_file[0] == '\0') {
		errf(err, errlen,
		     "bad value for --tls-auth-clients: %s needs --tls-ca-cert-file (the CA of the "
		     "client certificates), or --tls-auth-clients no",
		     c->tls_auth_clients == CFG_TLS_AUTH_YES ? "yes" : "optional");
		return false;
	}
	if (c->pg_tls == CFG_PG_TLS_REQUIRED && !cfg_tls(c)) {
		errf(err, errlen,
		     "bad value for --pg-tls: required needs --tls-cert-file and --tls-key-file");
		return false;
	}
	return true;
}

/* --bind must be an address of this machine: checked here, so that the
 * first listener to open (the admin port) is not blamed for it. */
/* Binds fd to port 0 of the address (any free port) to see whether the
 * address is this machine's. */
static int bind_probe(int fd, const struct addrinfo *ai)
{
	return bind(fd, ai->ai_addr, ai->ai_addrlen);
}

bool cfg_given(const struct cfg *c, const char *name)
{
	const struct option_def *o = find_option(name, strlen(name));
	return o != NULL && c->given[o - options] != 0;
}

bool cfg_check_bind(const char *bind, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL;
	bool numeric = strspn(bind, "0123456789.") == strlen(bind);
	int rc = getaddrinfo(bind, NULL, &hints, &res);
	if (rc != 0) {
		errf(err, errlen, "bad value for --bind: '%s' is %s", bind,
		     numeric ? "not an IPv4 address"
			     : "neither an IP address nor a host name that resolves");
		return false;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int saved = 0;
	if (fd >= 0 && bind_probe(fd, res) != 0)
		saved = errno;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	if (saved == EADDRNOTAVAIL) {
		errf(err, errlen,
		     "bad value for --bind: %s is not an address of this machine (127.0.0.1 for "
		     "local clients, 0.0.0.0 for every interface)",
		     bind);
		return false;
	}
	return true;
}

/* --replica-id: given, printable without '#' (the '#' separates the session
 * key's parts); else the holder label's first 64 characters with '#' and
 * anything not printable as '_'. Checked in either mode, so that a typo is
 * refused before the mode is turned on. */
static bool finish_replica_id(struct cfg *c, char *err, size_t errlen)
{
	if (c->replica_id[0] != '\0') {
		for (const char *p = c->replica_id; *p; p++)
			if (*p == '#' || !isgraph((unsigned char)*p)) {
				errf(err, errlen,
				     "bad value for --replica-id: '%s' holds %s (printable "
				     "characters other than '#' only, no spaces)",
				     c->replica_id, *p == '#' ? "'#'" : "a space or control byte");
				return false;
			}
		return true;
	}
	size_t n = strnlen(c->holder_label, sizeof(c->replica_id) - 1);
	memcpy(c->replica_id, c->holder_label, n);
	c->replica_id[n] = '\0';
	for (char *p = c->replica_id; *p; p++)
		if (*p == '#' || !isgraph((unsigned char)*p))
			*p = '_';
	return true;
}

static bool finish(struct cfg *c, char *err, size_t errlen)
{
	if (c->port == 0 && c->tls_port == 0 && c->pg_port == 0 && c->unixsocket[0] == '\0' &&
	    c->admin_port == 0) {
		errf(err, errlen,
		     "bad value for --port: 0, and --tls-port, --pg-port, --unixsocket and "
		     "--admin-port are off too: nothing could reach this gateway (give at least "
		     "one "
		     "of them)");
		return false;
	}

	if (c->holder_label[0] == '\0') {
		if (gethostname(c->holder_label, sizeof(c->holder_label) - 1) != 0 ||
		    c->holder_label[0] == '\0')
			snprintf(c->holder_label, sizeof(c->holder_label), "leasegate");
		c->holder_label[sizeof(c->holder_label) - 1] = '\0';
	}
	if (!finish_replica_id(c, err, errlen))
		return false;
	if (c->default_lease_ms > c->max_lease_ms) {
		errf(err, errlen, "bad value for --default-lease: longer than --max-lease");
		return false;
	}
	if (!check_drain(c, err, errlen))
		return false;
	if (c->max_bulk > c->max_query_buffer) {
		errf(err, errlen, "bad value for --max-bulk: larger than --max-query-buffer");
		return false;
	}
	return finish_tls(c, err, errlen);
}

enum cfg_result cfg_load(struct cfg *c, int argc, char *const *argv, char *const *envp, char *err,
			 size_t errlen)
{
	struct setting *flags = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*flags));
	size_t nflags = 0;
	enum cfg_result res = CFG_ERROR;
	if (!flags) {
		errf(err, errlen, "out of memory");
		return CFG_ERROR;
	}
	memset(c, 0, sizeof(*c));

	/* 1. the command line's syntax, kept for last */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			res = CFG_HELP;
			goto out;
		}
		if (!strcmp(a, "--version") || !strcmp(a, "-v")) {
			res = CFG_VERSION;
			goto out;
		}
		if (!strcmp(a, "--options")) {
			res = CFG_OPTIONS;
			goto out;
		}
		if (strncmp(a, "--", 2) != 0) {
			errf(err, errlen, "unexpected argument '%s' (options start with --)", a);
			goto out;
		}
		const char *eq = strchr(a + 2, '=');
		size_t nlen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		const struct option_def *o = find_option(a + 2, nlen);
		if (!o) {
			errf(err, errlen, "unknown option '--%.*s' (see --help)", (int)nlen, a + 2);
			goto out;
		}
		const char *v = eq ? eq + 1 : NULL;
		bool b;
		/* a boolean alone is yes; `--protected-mode no` as Redis writes it */
		if (!v && o->type == T_BOOL)
			v = i + 1 < argc && parse_bool(argv[i + 1], &b) ? argv[++i] : "yes";
		if (!v) {
			if (i + 1 >= argc) {
				errf(err, errlen, "option --%s needs a value", o->name);
				goto out;
			}
			v = argv[++i];
		}
		flags[nflags].o = o;
		flags[nflags].value = v;
		nflags++;
	}

	/* 2. defaults, 3. file, 4. environment, 5. flags */
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].def &&
		    !apply(c, &options[i], options[i].def, "default", err, errlen))
			goto out;
	const char *file = env_get(envp, "LEASEGATE_CONFIG");
	for (size_t i = 0; i < nflags; i++)
		if (flags[i].o->offset == offsetof(struct cfg, config_file))
			file = flags[i].value;
	if (file && *file) {
		if (!apply(c, find_option("config", 6), file, "command line", err, errlen) ||
		    !load_file(c, file, err, errlen))
			goto out;
	}
	for (size_t i = 0; i < N_OPTIONS; i++) {
		char name[64];
		env_name(&options[i], name, sizeof(name));
		const char *v = env_get(envp, name);
		if (v && !apply(c, &options[i], v, name, err, errlen))
			goto out;
	}
	for (size_t i = 0; i < nflags; i++)
		if (!apply(c, flags[i].o, flags[i].value, "command line", err, errlen))
			goto out;
	if (read_secret_files(c, err, errlen) && finish(c, err, errlen))
		res = CFG_OK;
out:
	free(flags);
	return res;
}

void cfg_usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [--option value | --option=value]...\n\n", prog);
	fprintf(f,
		"leasegate %s: leases on named locks over the Redis and PostgreSQL\n"
		"protocols, stored in DynamoDB. Precedence: command line, environment,\n"
		"config file, default.\n\n",
		LG_VERSION);
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_def *o = &options[i];
		char env[64];
		env_name(o, env, sizeof(env));
		fprintf(f, "  --%-24s %s\n  %-26s default: %s; env %s\n", o->name, o->help, "",
			o->def		? o->def
			: o->no_default ? o->no_default
					: "none",
			env);
	}
	fprintf(f, "  --%-24s %s\n  --%-24s %s\n  --%-24s %s\n", "help", "this text", "version",
		"print the version", "options", "the option table, one tab-separated line each");
}

void cfg_list(FILE *f)
{
	static const char *const types[] = {
		[T_STR] = "string",	 [T_INT] = "int",   [T_DURATION] = "duration",
		[T_SIZE] = "size",	 [T_BOOL] = "bool", [T_ENUM] = "enum",
		[T_SECONDS] = "seconds", [T_MODE] = "mode"};
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_def *o = &options[i];
		char env[64];
		env_name(o, env, sizeof(env));
		fprintf(f, "%s\t%s\t%s\t", o->name, types[o->type], env);
		for (size_t k = 0; o->choices && o->choices[k]; k++)
			fprintf(f, "%s%s", k ? "|" : "", o->choices[k]);
		fprintf(f, "\t%s\n", o->def ? o->def : "");
	}
}

void cfg_foreach_option(void (*fn)(const struct cfg_option_info *o, void *arg), void *arg)
{
	static const char *const types[] = {
		[T_STR] = "string",	 [T_INT] = "int",   [T_DURATION] = "duration",
		[T_SIZE] = "size",	 [T_BOOL] = "bool", [T_ENUM] = "enum",
		[T_SECONDS] = "seconds", [T_MODE] = "mode"};
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_def *o = &options[i];
		struct cfg_option_info info = {
			.name = o->name,
			.type = types[o->type],
			.def = o->def,
			.no_default = o->no_default,
			.help = o->help,
			.file_ok = o->offset != offsetof(struct cfg, config_file),
			.secret = is_secret(o),
		};
		env_name(o, info.env, sizeof(info.env));
		for (size_t k = 0, at = 0; o->choices && o->choices[k]; k++)
			at += (size_t)snprintf(info.choices + at, sizeof(info.choices) - at, "%s%s",
					       k ? "|" : "", o->choices[k]);
		fn(&info, arg);
	}
}

size_t cfg_option_count(void)
{
	return N_OPTIONS;
}

const char *cfg_option_name(size_t i)
{
	return i < N_OPTIONS ? options[i].name : NULL;
}

const char *cfg_option_redis_name(size_t i)
{
	return i < N_OPTIONS ? options[i].redis_name : NULL;
}

unsigned cfg_option_flags(size_t i)
{
	return i < N_OPTIONS ? options[i].flags : 0;
}

void cfg_option_value(const struct cfg *c, size_t i, char *buf, size_t len)
{
	buf[0] = '\0';
	if (i >= N_OPTIONS)
		return;
	const struct option_def *o = &options[i];
	const char *field = (const char *)c + o->offset;
	int64_t n = o->type == T_STR || o->type == T_BOOL ? 0 : *(const int64_t *)field;
	switch (o->type) {
	case T_STR:
		snprintf(buf, len, "%s", is_secret(o) ? (*field ? "(redacted)" : "") : field);
		break;
	case T_INT:
	case T_SIZE:
		snprintf(buf, len, "%lld", (long long)n);
		break;
	case T_DURATION:
		if (n == 0)
			snprintf(buf, len, "0");
		else
			format_value(o, n, buf, len);
		break;
	case T_SECONDS: /* as Redis: whole seconds */
		snprintf(buf, len, "%lld", (long long)n / 1000);
		break;
	case T_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "yes" : "no");
		break;
	case T_ENUM:
		snprintf(buf, len, "%s", o->choices[n]);
		break;
	case T_MODE:
		snprintf(buf, len, "%llo", (unsigned long long)n);
		break;
	}
}

/* The reference's words for o's type and the values it takes. */
static void ref_type(const struct option_def *o, char *buf, size_t len)
{
	char lo[32], hi[32];
	format_value(o, o->min, lo, sizeof(lo));
	format_value(o, o->max, hi, sizeof(hi));
	switch (o->type) {
	case T_STR:
		snprintf(buf, len, "string, %lld..%lld bytes", o->min, o->max);
		break;
	case T_BOOL:
		snprintf(buf, len, "yes or no");
		break;
	case T_ENUM: {
		size_t at = (size_t)snprintf(buf, len, "one of");
		for (size_t k = 0; o->choices[k] && at < len; k++)
			at += (size_t)snprintf(buf + at, len - at, " `%s`", o->choices[k]);
		break;
	}
	case T_INT:
		snprintf(buf, len, "integer, %s..%s", lo, hi);
		break;
	case T_SIZE:
		snprintf(buf, len, "size (bytes, kb, mb, gb), %s..%s", lo, hi);
		break;
	case T_DURATION:
		snprintf(buf, len, "duration (ms, s, m, h, d; bare: ms), %s..%s", lo, hi);
		break;
	case T_SECONDS:
		snprintf(buf, len, "duration (bare: seconds), %s..%s", lo, hi);
		break;
	case T_MODE:
		snprintf(buf, len, "octal mode, %s..%s", lo, hi);
		break;
	}
}

/* Writes s to f with Markdown table cells' '|' escaped. */
static void ref_cell(FILE *f, const char *s)
{
	for (; *s; s++)
		fprintf(f, *s == '|' ? "\\|" : "%c", *s);
}

void cfg_reference(FILE *f)
{
	fprintf(f, "# Configuration\n\n"
		   "<!-- Generated by `make docs` from the option table (gateway/config.c):\n"
		   "     edit that, not this page. -->\n\n"
		   "Every option of leasegate, as `leasegate --help` lists them. Each is set\n"
		   "by, lowest to highest precedence: its default, the config file (`--config\n"
		   "FILE` or `LEASEGATE_CONFIG`; lines `name value`), its environment variable,\n"
		   "the command line (`--name value` or `--name=value`). `CONFIG GET` answers\n"
		   "every option (secrets redacted); `CONFIG SET` is not supported: options are\n"
		   "set at start; what some of them name (files) is read again on `SIGHUP`.\n\n"
		   "| option | type and values | default | environment | at run time | help |\n"
		   "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_def *o = &options[i];
		char env[64], type[160];
		env_name(o, env, sizeof(env));
		ref_type(o, type, sizeof(type));
		fprintf(f, "| `--%s`%s | ", o->name, is_secret(o) ? " (secret)" : "");
		ref_cell(f, type);
		fprintf(f, " | ");
		if (o->def)
			fprintf(f, "`%s`", o->def);
		else
			ref_cell(f, o->no_default ? o->no_default : "none");
		fprintf(f, " | `%s` | %s | ", env,
			o->flags & CFG_OPT_RELOAD ? "read again on SIGHUP" : "fixed at start");
		ref_cell(f, o->help);
		if (o->redis_name)
			fprintf(f, " (Redis: `%s`)", o->redis_name);
		fprintf(f, " |\n");
	}
}
