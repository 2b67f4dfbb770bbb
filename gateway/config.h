/*
 * config: leasegate's options, as one table (config.c) of name, type,
 * default, validator and help; the environment variable of an option is
 * LEASEGATE_<NAME> (upper case, '-' -> '_').
 *
 * Sources, lowest to highest precedence: the table's default, the config
 * file (--config FILE or LEASEGATE_CONFIG; lines `name value`, `#`
 * comments), the environment, the command line (`--name value`,
 * `--name=value`; a boolean option alone means yes, or takes the
 * next argument when that is yes/no/true/false/on/off/1/0). Durations take ms, s,
 * m, h or d (a bare number is ms); sizes take k, kb, m, mb, g, gb as Redis
 * does. A bad value fails the load with a message naming the option and
 * where the value came from.
 *
 * Not here: what the options mean at run time (server, core).
 */
#ifndef LG_CONFIG_H
#define LG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CFG_WUR __attribute__((warn_unused_result))

#define LG_VERSION "0.1.0"

/* A stop answers what is in flight and releases every lease within this many
 * seconds (after --drain-grace, when set), then exits. */
#define CFG_SHUTDOWN_BOUND_S 5

enum cfg_log_level { CFG_LOG_DEBUG, CFG_LOG_INFO, CFG_LOG_WARN, CFG_LOG_ERROR };
enum cfg_log_format { CFG_LOG_TEXT, CFG_LOG_JSON };
enum cfg_pg_auth { CFG_PG_TRUST, CFG_PG_SCRAM, CFG_PG_MD5, CFG_PG_PASSWORD };
/* TLS (as redis.conf's tls-auth-clients; --pg-tls) */
enum cfg_tls_auth { CFG_TLS_AUTH_NO, CFG_TLS_AUTH_YES, CFG_TLS_AUTH_OPTIONAL };
enum cfg_pg_tls { CFG_PG_TLS_OFF, CFG_PG_TLS_OPTIONAL, CFG_PG_TLS_REQUIRED };
/* --heartbeat: enum lt_heartbeat's order (core/locktable.h) */
enum cfg_heartbeat { CFG_HEARTBEAT_LEASE, CFG_HEARTBEAT_REPLICA };

struct cfg {
	char bind[256];
	int64_t port;
	char unixsocket[108];
	int64_t pg_port;
	char pg_password[512];
	char pg_password_file[512]; /* read into pg_password by cfg_load */
	char pg_users[512];
	int64_t pg_auth;	 /* enum cfg_pg_auth */
	bool pg_cleartext_plain; /* --pg-allow-cleartext-over-plain */
	int64_t admin_port;
	char table[256];
	char partition_key[256];
	char sort_key[256];
	char region[64];
	char endpoint[512];
	bool create_table;
	bool allow_global_table;    /* open a global table (replicas in other regions) */
	int64_t ddb_max_in_flight;  /* DynamoDB requests in flight at most (http max_active) */
	char holder_label[257];	    /* 1..256 characters; default: the host name */
	int64_t heartbeat;	    /* enum cfg_heartbeat */
	char replica_id[65];	    /* --heartbeat replica: 1..64 printable, no '#' */
	int64_t heartbeat_sweep_ms; /* --heartbeat replica: the verification sweep's period */
	char ttl_attribute[256];
	int64_t ttl_retention_ms;
	int64_t memory_retention_ms; /* embedded store: released items kept this long */
	int64_t max_locks;	     /* embedded store: items at most */
	int64_t default_lease_ms;
	int64_t max_lease_ms;
	char requirepass[512];
	char requirepass_file[512]; /* read into requirepass by cfg_load */
	char aclfile[512]; /* users and ACLs (Redis's syntax); empty: requirepass's default */
	int64_t auth_max_delay_ms; /* the slowdown of an address's failed logins, 0 = off */
	int64_t pubsub_poll_ms;	   /* PUBLISH across replicas: the channel reads, 0 = off */
	int64_t drain_grace_ms;	   /* at SIGTERM: adoptable leases kept this long, 0 = off */
	int64_t stop_timeout_ms;   /* SIGTERM to SIGKILL, 0 = unknown (checks the drain) */
	int64_t maxclients;
	int64_t admin_maxclients;
	int64_t tcp_keepalive_ms; /* TCP keepalive idle time, 0 = off */
	int64_t busy_poll_us;	  /* longest poll before the loop sleeps, 0 = off */
	int64_t log_level;	  /* enum cfg_log_level */
	int64_t log_format;	  /* enum cfg_log_format */
	char log_file[512];	  /* empty: stderr */
	int64_t max_query_buffer;
	int64_t max_args;
	int64_t max_bulk;
	int64_t max_inline;
	int64_t max_output_buffer; /* a session stops reading while above this */
	int64_t max_lock_name;
	int64_t max_leases_per_session;
	char fenced_tables[4096]; /* comma list; empty: fenced writes off */
	char config_file[512];
	/* TLS: the Redis TLS port and the PostgreSQL port's SSLRequest */
	int64_t tls_port; /* 0 = off */
	char tls_cert_file[512];
	char tls_key_file[512];
	char tls_ca_cert_file[512];
	int64_t tls_auth_clients; /* enum cfg_tls_auth */
	char tls_protocols[128];
	char tls_ciphers[512];
	char tls_ciphersuites[512];
	int64_t pg_tls; /* enum cfg_pg_tls */
	/* hostile clients (docs/security.md, Protected mode, Bounds and timeouts) */
	bool protected_mode;
	int64_t unixsocketperm;	 /* mode bits of the Unix socket file */
	int64_t auth_timeout_ms; /* 0 = off */
	int64_t timeout_ms;	 /* idle timeout, 0 = off */
	int64_t max_prepared;	 /* PostgreSQL, per session */
	int64_t max_portals;	 /* PostgreSQL, per session */
	bool test_mode;		 /* --test-mode: fake clock, test commands (testclock.h) */
	/* which options a source other than the default set, by the index of
	 * the option in the table (cfg_given) */
	unsigned char given[96];
};

/* TLS is configured: a certificate and its key are given. */
static inline bool cfg_tls(const struct cfg *c)
{
	return c->tls_cert_file[0] != '\0' && c->tls_key_file[0] != '\0';
}

enum cfg_result {
	CFG_OK,	     /* *c is complete and valid */
	CFG_HELP,    /* --help: print cfg_usage() and exit 0 */
	CFG_VERSION, /* --version */
	CFG_OPTIONS, /* --options: print cfg_list() and exit 0 */
	CFG_ERROR,   /* err holds a message naming the option */
};

/* Fills *c from the defaults, the config file, envp (a NULL-terminated
 * "NAME=value" array, as environ) and argv[1..argc). On CFG_ERROR, err
 * (errlen bytes, NUL-terminated) says which option and why; *c is then
 * unspecified. */
enum cfg_result cfg_load(struct cfg *c, int argc, char *const *argv, char *const *envp, char *err,
			 size_t errlen) CFG_WUR;

/* Secret options (--requirepass, --pg-password) given in argv, where every
 * local user can read them (/proc/PID/cmdline): overwrites their values
 * in argv[1..argc) with NUL bytes, so that /proc no longer shows them, and
 * writes a warning for the log into warn (naming each option and how to
 * pass it instead; "" if none). Returns how many it found. Call after
 * cfg_load(), which copied them; argv must be the process's own (main's)
 * for /proc to change. */
size_t cfg_hide_argv_secrets(int argc, char **argv, char *warn, size_t warnlen);

/* Checks that bind (--bind) is an address of this machine, by binding a
 * socket to it; false with a message naming --bind in err otherwise.
 * Separate from cfg_load(), which reads no more than its sources. */
bool cfg_check_bind(const char *bind, char *err, size_t errlen) CFG_WUR;

/* True when the option named name (without "--") was set by the config
 * file, the environment or the command line, not left at its default. */
bool cfg_given(const struct cfg *c, const char *name);

/* Writes the option list (from the table) to f. */
void cfg_usage(FILE *f, const char *prog);

/* Writes the option table to f for programs (the deployment's tests):
 * one line per option, tab-separated: name, type (string, int, duration,
 * size, bool, enum), environment variable, choices (enum: a|b|c; else
 * empty), default as text (empty: none). */
void cfg_list(FILE *f);

/* One option of the table, as the generated documents (the man page, the
 * example configuration: gateway/doc/docgen.h) show it. */
struct cfg_option_info {
	const char *name;	/* without "--" */
	const char *type;	/* as cfg_list: string, int, duration, size, bool, enum... */
	char env[64];		/* LEASEGATE_<NAME> */
	char choices[128];	/* enum: "a|b|c"; else "" */
	const char *def;	/* the default as text; NULL: none */
	const char *no_default; /* words for "no default" ("the host name"), or NULL */
	const char *help;
	bool file_ok; /* a config file may set it (every option but --config) */
	bool secret;  /* a file that sets it must be owner-only */
};

/* Calls fn for every option, in the table's order. */
void cfg_foreach_option(void (*fn)(const struct cfg_option_info *o, void *arg), void *arg);

/* What an option's row says beyond its value (the table in config.c). */
enum cfg_opt_flags {
	/* a secret: CONFIG GET and the reference never show its value (a
	 * config file that sets it must be its owner's alone, its argv copy
	 * is blanked: cfg_hide_argv_secrets) */
	CFG_OPT_SECRET = 1 << 0,
	/* what it names is read again at run time, on SIGHUP (the option's
	 * value itself stays: leasegate has no CONFIG SET) */
	CFG_OPT_RELOAD = 1 << 1,
};

/* The options of the table, by index i < cfg_option_count(), in the
 * table's order (as --help lists them): the name ("max-bulk"), the name
 * Redis gives the same setting ("proto-max-bulk-len", which CONFIG GET
 * answers too) or NULL, the flags (enum cfg_opt_flags). */
size_t cfg_option_count(void);
const char *cfg_option_name(size_t i);
const char *cfg_option_redis_name(size_t i);
unsigned cfg_option_flags(size_t i);

/* The value of option i in c as CONFIG GET shows it, into buf (len
 * bytes): strings as they are, numbers and sizes in decimal, durations
 * with their unit ("30s"), a duration Redis counts in seconds (timeout)
 * in whole seconds, booleans yes/no, choices by name, modes in octal; a
 * secret "(redacted)" when set, "" when not. */
void cfg_option_value(const struct cfg *c, size_t i, char *buf, size_t len);

/* Writes the configuration reference (Markdown: every option, its type
 * and values, default, environment variable, help, whether it is read
 * again at run time, whether it is a secret) to f. */
void cfg_reference(FILE *f);

/* Parses a duration ("250ms", "30s", "5m", "1h", "30d", "100" = ms) into
 * *ms. Returns false on a malformed or overflowing value. */
bool cfg_parse_duration(const char *s, int64_t *ms) CFG_WUR;

/* Parses a size ("1024", "64kb", "1mb", "1g") into *bytes. */
bool cfg_parse_size(const char *s, int64_t *bytes) CFG_WUR;

#endif
