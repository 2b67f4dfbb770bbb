/*
 * test_config: gateway/config, the option table and its sources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway/config.h"

static char *no_env[] = {NULL};

static enum cfg_result load(struct cfg *c, char *const *argv, char *const *envp, char *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return cfg_load(c, argc, argv, envp, err, 256);
}

static void test_defaults(void **state)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate", NULL};
	char host[257] = "";
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_string_equal(c.bind, "127.0.0.1");
	assert_int_equal(c.port, 6379);
	assert_int_equal(c.pg_port, 5432);
	assert_int_equal(c.admin_port, 9464);
	assert_string_equal(c.table, "");
	assert_false(c.create_table);
	assert_int_equal(c.ttl_retention_ms, 30LL * 24 * 3600 * 1000);
	assert_int_equal(c.default_lease_ms, 30000);
	assert_int_equal(c.max_lease_ms, 24LL * 3600 * 1000);
	assert_int_equal(c.maxclients, 10000);
	assert_int_equal(c.busy_poll_us, 100);
	assert_int_equal(c.tcp_keepalive_ms, 300000);
	assert_int_equal(c.log_level, CFG_LOG_INFO);
	assert_int_equal(c.log_format, CFG_LOG_TEXT);
	assert_int_equal(c.max_query_buffer, 1024 * 1024);
	assert_int_equal(c.max_bulk, 512 * 1024);
	assert_int_equal(c.max_lock_name, 1024);
	gethostname(host, sizeof(host) - 1);
	assert_string_equal(c.holder_label, host);
}

static void test_flag_forms(void **state)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate",
			"--port",
			"7000",
			"--bind=0.0.0.0",
			"--create-table",
			"--log-format",
			"JSON",
			"--requirepass=s3cret",
			NULL};
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_int_equal(c.port, 7000);
	assert_string_equal(c.bind, "0.0.0.0");
	assert_true(c.create_table);
	assert_int_equal(c.log_format, CFG_LOG_JSON);
	assert_string_equal(c.requirepass, "s3cret");
}

static void test_help_version(void **state)
{
	struct cfg c;
	char err[256];
	char *h[] = {"leasegate", "--port", "1", "--help", NULL};
	char *v[] = {"leasegate", "--version", NULL};
	assert_int_equal(load(&c, h, no_env, err), CFG_HELP);
	assert_int_equal(load(&c, v, no_env, err), CFG_VERSION);
	char buf[8192] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	cfg_usage(f, "leasegate");
	fclose(f);
	/* generated from the table: every option with its variable */
	assert_non_null(strstr(buf, "--ttl-retention"));
	assert_non_null(strstr(buf, "LEASEGATE_TTL_RETENTION"));
	assert_null(strstr(buf, "--max-waits-per-session")); /* a connection waits once at a time */
}

/* --options: the table for programs, one tab-separated line per option */
static void test_options_list(void **state)
{
	struct cfg c;
	char err[256];
	char *o[] = {"leasegate", "--port", "1", "--options", NULL};
	assert_int_equal(load(&c, o, no_env, err), CFG_OPTIONS);
	char buf[16384] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	cfg_list(f);
	fclose(f);
	assert_non_null(strstr(buf, "port\tint\tLEASEGATE_PORT\t\t6379\n"));
	assert_non_null(strstr(buf, "\nadmin-port\tint\tLEASEGATE_ADMIN_PORT\t\t9464\n"));
	assert_non_null(strstr(buf, "\ntable\tstring\tLEASEGATE_TABLE\t\t\n"));
	assert_non_null(strstr(buf, "\ncreate-table\tbool\tLEASEGATE_CREATE_TABLE\t\tno\n"));
	assert_non_null(strstr(buf, "\nttl-retention\tduration\tLEASEGATE_TTL_RETENTION\t\t30d\n"));
	assert_non_null(strstr(buf, "\nlog-format\tenum\tLEASEGATE_LOG_FORMAT\ttext|json\ttext\n"));
	assert_non_null(strstr(buf, "\ntimeout\tseconds\tLEASEGATE_TIMEOUT\t\t0\n"));
	assert_non_null(strstr(buf, "\nunixsocketperm\tmode\tLEASEGATE_UNIXSOCKETPERM\t\t770\n"));
	/* every line has five fields */
	int lines = 0;
	for (char *l = buf; *l; l = strchr(l, '\n') + 1) {
		int tabs = 0;
		for (char *p = l; *p != '\n'; p++)
			tabs += *p == '\t';
		assert_int_equal(tabs, 4);
		lines++;
	}
	assert_true(lines > 40);
}

static void test_durations_and_sizes(void **state)
{
	static const struct {
		const char *in;
		int64_t ms;
		bool ok;
	} d[] = {
		{"250ms", 250, true},
		{"30s", 30000, true},
		{"5m", 300000, true},
		{"2h", 7200000, true},
		{"30d", 2592000000LL, true},
		{"100", 100, true},
		{"1.5s", 0, false},
		{"s", 0, false},
		{"-1s", 0, false},
		{"10x", 0, false},
		{"99999999999999999999d", 0, false},
		{"999999999999999d", 0, false},
	};
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		int64_t v = -1;
		bool ok = cfg_parse_duration(d[i].in, &v);
		if (ok != d[i].ok || (ok && v != d[i].ms))
			fail_msg("duration %s: ok=%d v=%lld", d[i].in, ok, (long long)v);
	}
	int64_t b;
	assert_true(cfg_parse_size("64kb", &b));
	assert_int_equal(b, 65536);
	assert_true(cfg_parse_size("1k", &b));
	assert_int_equal(b, 1000);
	assert_true(cfg_parse_size("2MB", &b));
	assert_int_equal(b, 2 * 1024 * 1024);
	assert_false(cfg_parse_size("12q", &b));
}

/* Each bad value stops the load with a message naming the option. */
static void test_bad_values(void **state)
{
	static const struct {
		const char *arg, *val, *want;
	} bad[] = {
		{"--port", "70000", "--port"},
		{"--port", "abc", "--port"},
		{"--ttl-retention", "12h", "--ttl-retention"},
		{"--default-lease", "10ms", "--default-lease"},
		{"--max-lease", "2d", "--max-lease"},
		{"--default-lease", "2h", "--default-lease"}, /* with --max-lease 1h below */
		{"--max-lock-name", "2001", "--max-lock-name"},
		{"--log-level", "loud", "--log-level"},
		{"--create-table=maybe", NULL, "--create-table"},
		{"--maxclients", "0", "--maxclients"},
		{"--tcp-keepalive", "-1", "--tcp-keepalive"},
		{"--tcp-keepalive", "2d", "--tcp-keepalive"},
		{"--busy-poll-us", "1001", "--busy-poll-us"},
		{"--busy-poll-us", "-1", "--busy-poll-us"},
		{"--holder-label",
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		 "--holder-label"},
		{"--nope", "1", "--nope"},
		{"--port", NULL, "--port"},
		{"stray", NULL, "stray"},
		{"--max-bulk", "2mb", "--max-bulk"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cfg c;
		char err[256] = "";
		char *argv[6] = {"leasegate", (char *)bad[i].arg, (char *)bad[i].val, NULL};
		if (!strcmp(bad[i].val ? bad[i].val : "", "2h")) {
			argv[3] = "--max-lease";
			argv[4] = "1h";
		}
		assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
		if (!strstr(err, bad[i].want))
			fail_msg("%s %s: message \"%s\" does not name %s", bad[i].arg,
				 bad[i].val ? bad[i].val : "", err, bad[i].want);
	}
}

/* --drain-grace is checked at start against --max-lease and, when known,
 * the time to SIGKILL: refused with a message naming both options. */
static void test_drain_grace_bounds(void **state)
{
	static const struct {
		const char *a, *av, *b, *bv, *want; /* want NULL: accepted */
	} cases[] = {
		{"--drain-grace", "2m", "--max-lease", "1m", "--max-lease"},
		{"--drain-grace", "1m", "--max-lease", "1m", NULL},
		{"--drain-grace", "15s", "--stop-timeout", "20s", "--stop-timeout"},
		{"--drain-grace", "15s", "--stop-timeout", "21s", NULL},
		{"--drain-grace", "15s", "--stop-timeout", "0", NULL},
		{"--drain-grace", "0", "--stop-timeout", "5s", "--stop-timeout"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c;
		char err[256] = "";
		char *argv[] = {"leasegate",	    (char *)cases[i].a,	 (char *)cases[i].av,
				(char *)cases[i].b, (char *)cases[i].bv, NULL};
		enum cfg_result r = load(&c, argv, no_env, err);
		if (!cases[i].want) {
			if (r != CFG_OK)
				fail_msg("%s %s %s %s refused: %s", cases[i].a, cases[i].av,
					 cases[i].b, cases[i].bv, err);
			continue;
		}
		assert_int_equal(r, CFG_ERROR);
		if (!strstr(err, "--drain-grace") || !strstr(err, cases[i].want))
			fail_msg("%s %s %s %s: \"%s\" does not name --drain-grace and %s",
				 cases[i].a, cases[i].av, cases[i].b, cases[i].bv, err,
				 cases[i].want);
	}
}

/* --heartbeat lease by default; replica with --replica-id (printable, no
 * '#', refused otherwise in either mode) or the holder label's first 64
 * characters, '#' and spaces as '_'; --heartbeat-sweep 5 min, 1s..1d. */
static void test_heartbeat_options(void **state)
{
	struct cfg c;
	char err[256] = "";
	char *dflt[] = {"leasegate", "--holder-label", "web 7#blue", NULL};
	assert_int_equal(load(&c, dflt, no_env, err), CFG_OK);
	assert_int_equal(c.heartbeat, CFG_HEARTBEAT_LEASE);
	assert_string_equal(c.replica_id, "web_7_blue");
	assert_int_equal(c.heartbeat_sweep_ms, 300000);

	char *on[] = {"leasegate", "--heartbeat",	"replica", "--replica-id",
		      "pod-3",	   "--heartbeat-sweep", "90s",	   NULL};
	assert_int_equal(load(&c, on, no_env, err), CFG_OK);
	assert_int_equal(c.heartbeat, CFG_HEARTBEAT_REPLICA);
	assert_string_equal(c.replica_id, "pod-3");
	assert_int_equal(c.heartbeat_sweep_ms, 90000);

	char long_label[201];
	memset(long_label, 'x', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = '\0';
	char *cut[] = {"leasegate", "--holder-label", long_label, NULL};
	assert_int_equal(load(&c, cut, no_env, err), CFG_OK);
	assert_int_equal(strlen(c.replica_id), 64);

	static const char *const bad[][2] = {
		{"--replica-id", "a#b"},     {"--replica-id", "a b"},
		{"--heartbeat", "session"},  {"--heartbeat-sweep", "500ms"},
		{"--heartbeat-sweep", "2d"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = {"leasegate", (char *)bad[i][0], (char *)bad[i][1], NULL};
		err[0] = '\0';
		assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
		if (!strstr(err, bad[i][0] + 2))
			fail_msg("%s %s: \"%s\" does not name the option", bad[i][0], bad[i][1],
				 err);
	}
}

/* An out-of-range value gives the range, in the option's own units. */
static void test_range_messages(void **state)
{
	static const struct {
		const char *arg, *val, *want;
	} cases[] = {
		{"--max-lease", "2d", "'2d' is out of range 1s..1d"},
		{"--port", "70000", "out of range 0..65535"},
		{"--max-query-buffer", "10", "out of range 1kb..1gb"},
		{"--ttl-retention", "12h", "out of range 1d..3650d"},
		{"--default-lease", "10ms", "out of range 1s..1d"},
		{"--max-bulk", "1", "out of range 16..512mb"},
		{"--unixsocketperm", "1777", "out of range 0000..0777"},
		{"--timeout", "4000d", "out of range 0ms..3650d"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c;
		char err[256] = "";
		char *argv[] = {"leasegate", (char *)cases[i].arg, (char *)cases[i].val, NULL};
		assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
		if (!strstr(err, cases[i].want))
			fail_msg("%s %s: \"%s\" lacks \"%s\"", cases[i].arg, cases[i].val, err,
				 cases[i].want);
	}
}

/* Every Redis and PostgreSQL listener off: refused, not a silent start. */
static void test_no_listener(void **state)
{
	struct cfg c;
	char err[256] = "";
	char *off[] = {"leasegate", "--port", "0", "--pg-port", "0", "--admin-port", "0", NULL};
	assert_int_equal(load(&c, off, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "--port"));
	assert_non_null(strstr(err, "give at least one"));
	char *unix_only[] = {"leasegate", "--port",	  "0",		 "--pg-port",
			     "0",	  "--unixsocket", "/tmp/x.sock", NULL};
	assert_int_equal(load(&c, unix_only, no_env, err), CFG_OK);
	/* the admin port alone (a probe's target): allowed, with a warning at start */
	char *admin_only[] = {"leasegate", "--port", "0", "--pg-port", "0", NULL};
	assert_int_equal(load(&c, admin_only, no_env, err), CFG_OK);
}

/* --bind: a malformed address and one of another machine name --bind. */
static void test_bind_check(void **state)
{
	char err[256] = "";
	assert_false(cfg_check_bind("999.1.1.1", err, sizeof(err)));
	assert_non_null(strstr(err, "--bind"));
	assert_non_null(strstr(err, "not an IPv4 address"));
	assert_false(cfg_check_bind("192.0.2.77", err, sizeof(err))); /* TEST-NET-1 */
	assert_non_null(strstr(err, "not an address of this machine"));
	assert_true(cfg_check_bind("127.0.0.1", err, sizeof(err)));
}

/* --help says each option's default once: from the default column. */
static void test_help_one_default(void **state)
{
	static char buf[65536];
	memset(buf, 0, sizeof(buf));
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	cfg_usage(f, "leasegate");
	fclose(f);
	/* each option takes two lines: help, then "default: ...; env ..." */
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *d = strstr(line, "default");
		if (d && strstr(d + 1, "default"))
			fail_msg("two defaults: %s", line);
		if (strncmp(line, "  --", 4) == 0 && strstr(line, "(default"))
			fail_msg("a default in the help text: %s", line);
	}
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	cfg_usage(f, "leasegate");
	fclose(f);
	assert_non_null(strstr(buf, "default: from DescribeTable; env LEASEGATE_PARTITION_KEY"));
	assert_null(strstr(buf, "(none)"));
}

/* The PostgreSQL port's authentication options. */
static void test_pg_auth_options(void **state)
{
	struct cfg c;
	char err[256];
	char *none[] = {"leasegate", NULL};
	assert_int_equal(load(&c, none, no_env, err), CFG_OK);
	assert_string_equal(c.pg_password, "");
	assert_string_equal(c.pg_users, "");
	assert_int_equal(c.pg_auth, CFG_PG_SCRAM);
	char *argv[] = {"leasegate",  "--pg-port",     "0",	    "--pg-password", "s3cret",
			"--pg-users", "/etc/lg-users", "--pg-auth", "md5",	     NULL};
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_int_equal(c.pg_port, 0);
	assert_string_equal(c.pg_password, "s3cret");
	assert_string_equal(c.pg_users, "/etc/lg-users");
	assert_int_equal(c.pg_auth, CFG_PG_MD5);
	char *env[] = {"LEASEGATE_PG_AUTH=password", NULL};
	assert_int_equal(load(&c, none, env, err), CFG_OK);
	assert_int_equal(c.pg_auth, CFG_PG_PASSWORD);
	char *bad[] = {"leasegate", "--pg-auth", "gss", NULL};
	assert_int_equal(load(&c, bad, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "pg-auth"));
	/* cleartext over plain TCP: off unless asked */
	assert_int_equal(load(&c, none, no_env, err), CFG_OK);
	assert_false(c.pg_cleartext_plain);
	char *allow[] = {"LEASEGATE_PG_ALLOW_CLEARTEXT_OVER_PLAIN=yes", NULL};
	assert_int_equal(load(&c, none, allow, err), CFG_OK);
	assert_true(c.pg_cleartext_plain);
}

static void test_acl_options(void **state)
{
	struct cfg c;
	char err[256];
	char *none[] = {"leasegate", NULL};
	assert_int_equal(load(&c, none, no_env, err), CFG_OK);
	assert_string_equal(c.aclfile, "");
	assert_int_equal(c.auth_max_delay_ms, 5000);
	char *argv[] = {"leasegate", "--aclfile", "/etc/users.acl", "--auth-max-delay", "2s", NULL};
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_string_equal(c.aclfile, "/etc/users.acl");
	assert_int_equal(c.auth_max_delay_ms, 2000);
	char *env[] = {"LEASEGATE_ACLFILE=/x.acl", "LEASEGATE_AUTH_MAX_DELAY=0", NULL};
	assert_int_equal(load(&c, none, env, err), CFG_OK);
	assert_string_equal(c.aclfile, "/x.acl");
	assert_int_equal(c.auth_max_delay_ms, 0);
	char *bad[] = {"leasegate", "--auth-max-delay", "2m", NULL};
	assert_int_equal(load(&c, bad, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "auth-max-delay"));
}

static void test_fenced_tables(void **state)
{
	struct cfg c;
	char err[256];
	char *none[] = {"leasegate", NULL};
	assert_int_equal(load(&c, none, no_env, err), CFG_OK);
	assert_string_equal(c.fenced_tables, ""); /* off */
	char *argv[] = {"leasegate", "--fenced-tables", "orders,ledger", NULL};
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_string_equal(c.fenced_tables, "orders,ledger");
	char *env[] = {"LEASEGATE_FENCED_TABLES=audit", NULL};
	assert_int_equal(load(&c, none, env, err), CFG_OK);
	assert_string_equal(c.fenced_tables, "audit");
	char path[] = "/tmp/lg-test-fenced.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "fenced-tables orders\n");
	fclose(f);
	char cfgflag[300];
	snprintf(cfgflag, sizeof(cfgflag), "--config=%s", path);
	char *argv2[] = {"leasegate", cfgflag, NULL};
	assert_int_equal(load(&c, argv2, no_env, err), CFG_OK);
	assert_string_equal(c.fenced_tables, "orders");
	unlink(path);
	char buf[16384];
	FILE *h = fmemopen(buf, sizeof(buf), "w");
	cfg_usage(h, "leasegate");
	fclose(h);
	assert_non_null(strstr(buf, "--fenced-tables"));
	assert_non_null(strstr(buf, "LOCK.TRANSACT"));
}

/* Protected mode, the timeouts, the PostgreSQL caps, --unixsocketperm. */
static void test_hostile_client_options(void **state)
{
	struct cfg c;
	char err[256];
	char *argv[] = {"leasegate", NULL};
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_true(c.protected_mode);
	assert_int_equal(c.unixsocketperm, 0770);
	assert_int_equal(c.auth_timeout_ms, 10000);
	assert_int_equal(c.timeout_ms, 0);
	assert_int_equal(c.max_prepared, 1000);
	assert_int_equal(c.max_portals, 1000);

	/* --timeout 300 is 300 seconds, as Redis reads it; units as elsewhere */
	char *argv2[] = {"leasegate", "--protected-mode", "no",	 "--unixsocketperm",
			 "700",	      "--timeout",	  "300", "--auth-timeout",
			 "250ms",     "--max-portals",	  "3",	 NULL};
	assert_int_equal(load(&c, argv2, no_env, err), CFG_OK);
	assert_false(c.protected_mode);
	assert_int_equal(c.unixsocketperm, 0700);
	assert_int_equal(c.timeout_ms, 300000);
	assert_int_equal(c.auth_timeout_ms, 250);
	assert_int_equal(c.max_portals, 3);
	/* a boolean takes a following yes/no, and leaves an option alone */
	char *argv3[] = {"leasegate", "--create-table", "--protected-mode", "off", "--table", "t",
			 NULL};
	assert_int_equal(load(&c, argv3, no_env, err), CFG_OK);
	assert_true(c.create_table);
	assert_false(c.protected_mode);
	assert_string_equal(c.table, "t");
	char *envp[] = {"LEASEGATE_TIMEOUT=2m", "LEASEGATE_PROTECTED_MODE=no", NULL};
	assert_int_equal(load(&c, argv, envp, err), CFG_OK);
	assert_int_equal(c.timeout_ms, 120000);
	assert_false(c.protected_mode);

	static const char *const bad[][2] = {
		{"--unixsocketperm", "800"}, {"--unixsocketperm", "1777"},
		{"--unixsocketperm", "rw"},  {"--timeout", "-1"},
		{"--timeout", "5x"},	     {"--max-prepared-statements", "0"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *a[] = {"leasegate", (char *)bad[i][0], (char *)bad[i][1], NULL};
		assert_int_equal(load(&c, a, no_env, err), CFG_ERROR);
		assert_non_null(strstr(err, bad[i][0]));
	}
}

/* A config file that sets a secret is refused while group or others may
 * read it, and the message says why and how, without the secret. */
static void test_config_file_with_secret_mode(void **state)
{
	char path[] = "/tmp/lg-test-config.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "port 1111\nrequirepass hunter2-secret\n");
	fclose(f);
	char flag[300];
	snprintf(flag, sizeof(flag), "--config=%s", path);
	char *argv[] = {"leasegate", flag, NULL};
	struct cfg c;
	char err[256];
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	assert_string_equal(c.requirepass, "hunter2-secret");
	static const mode_t refused[] = {0640, 0604, 0644, 0660};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(chmod(path, refused[i]), 0);
		assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
		assert_non_null(strstr(err, "requirepass"));
		assert_non_null(strstr(err, "chmod 600"));
		assert_null(strstr(err, "hunter2"));
	}
	/* no secret in it: any mode */
	f = fopen(path, "w");
	fprintf(f, "port 1111\npg-password \n");
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(load(&c, argv, no_env, err), CFG_OK);
	f = fopen(path, "w");
	fprintf(f, "pg-password pg-secret\n");
	fclose(f);
	assert_int_equal(load(&c, argv, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "pg-password"));
	unlink(path);
}

static void test_precedence(void **state)
{
	char path[] = "/tmp/lg-test-config.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "# a comment\n\nport 1111\nbind 10.0.0.1\n  table   locks  \n"
		   "maxclients 5\n");
	fclose(f);
	char cfgenv[300];
	snprintf(cfgenv, sizeof(cfgenv), "LEASEGATE_CONFIG=%s", path);
	char *envp[] = {cfgenv,
			"LEASEGATE_PORT=2222",
			"LEASEGATE_MAXCLIENTS=6",
			"LEASEGATE_HOLDER_LABEL=from-env",
			"OTHER=1",
			NULL};
	char *argv[] = {"leasegate", "--maxclients", "7", NULL};
	struct cfg c;
	char err[256];
	assert_int_equal(load(&c, argv, envp, err), CFG_OK);
	assert_string_equal(c.bind, "10.0.0.1"); /* file over default */
	assert_string_equal(c.table, "locks");
	assert_int_equal(c.port, 2222);	   /* env over file */
	assert_int_equal(c.maxclients, 7); /* flag over env */
	assert_string_equal(c.holder_label, "from-env");

	/* --config on the command line; a bad line names file and option */
	f = fopen(path, "w");
	fprintf(f, "port 99999\n");
	fclose(f);
	char cfgflag[300];
	snprintf(cfgflag, sizeof(cfgflag), "--config=%s", path);
	char *argv2[] = {"leasegate", cfgflag, NULL};
	assert_int_equal(load(&c, argv2, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "--port"));
	assert_non_null(strstr(err, path));

	f = fopen(path, "w");
	fprintf(f, "colour blue\n");
	fclose(f);
	assert_int_equal(load(&c, argv2, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "colour"));
	unlink(path);
	assert_int_equal(load(&c, argv2, no_env, err), CFG_ERROR);
	assert_non_null(strstr(err, "cannot open"));

	char *badenv[] = {"LEASEGATE_LOG_LEVEL=loud", NULL};
	char *argv3[] = {"leasegate", NULL};
	assert_int_equal(load(&c, argv3, badenv, err), CFG_ERROR);
	assert_non_null(strstr(err, "LEASEGATE_LOG_LEVEL"));
}

/* The TLS options: their defaults, their sources, and the combinations
 * that refuse a start, each naming the option. */
static void test_tls_options(void **state)
{
	struct cfg c;
	char err[256];
	char *none[] = {"leasegate", NULL};
	assert_int_equal(load(&c, none, no_env, err), CFG_OK);
	assert_int_equal(c.tls_port, 0);
	assert_int_equal(c.tls_auth_clients, CFG_TLS_AUTH_YES);
	assert_string_equal(c.tls_protocols, "TLSv1.2 TLSv1.3");
	assert_int_equal(c.pg_tls, CFG_PG_TLS_OPTIONAL);
	assert_false(cfg_tls(&c));

	char *env[] = {"LEASEGATE_TLS_PORT=6380",	"LEASEGATE_TLS_CERT_FILE=/c.pem",
		       "LEASEGATE_TLS_KEY_FILE=/k.pem", "LEASEGATE_TLS_AUTH_CLIENTS=no",
		       "LEASEGATE_PG_TLS=required",	NULL};
	assert_int_equal(load(&c, none, env, err), CFG_OK);
	assert_int_equal(c.tls_port, 6380);
	assert_true(cfg_tls(&c));
	assert_int_equal(c.tls_auth_clients, CFG_TLS_AUTH_NO);
	assert_int_equal(c.pg_tls, CFG_PG_TLS_REQUIRED);

	static const struct {
		const char *args[8];
		const char *want;
	} bad[] = {
		{{"--tls-port", "6380"}, "--tls-port: needs --tls-cert-file"},
		{{"--tls-cert-file", "/c.pem"}, "--tls-key-file"},
		{{"--tls-key-file", "/k.pem"}, "--tls-cert-file"},
		{{"--tls-port", "6380", "--tls-cert-file", "/c", "--tls-key-file", "/k"},
		 "--tls-auth-clients: yes needs --tls-ca-cert-file"},
		{{"--tls-port", "6380", "--tls-cert-file", "/c", "--tls-key-file", "/k",
		  "--tls-auth-clients", "optional"},
		 "--tls-auth-clients: optional needs --tls-ca-cert-file"},
		{{"--tls-port", "6379", "--tls-cert-file", "/c", "--tls-key-file", "/k"},
		 "--tls-port: the same port as --port"},
		{{"--pg-tls", "required"}, "--pg-tls: required needs --tls-cert-file"},
		{{"--tls-auth-clients", "maybe"}, "--tls-auth-clients"},
		{{"--pg-tls", "prefer"}, "--pg-tls"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[10] = {"leasegate"};
		int n = 1;
		for (int j = 0; j < 8 && bad[i].args[j]; j++)
			argv[n++] = (char *)bad[i].args[j];
		argv[n] = NULL;
		if (load(&c, argv, no_env, err) != CFG_ERROR || strstr(err, bad[i].want) == NULL)
			fail_msg("case %zu: want an error with '%s', got '%s'", i, bad[i].want,
				 err);
	}
	/* with no client certificates asked, no CA is needed */
	char *ok[] = {"leasegate", "--tls-port",
		      "6380",	   "--tls-cert-file",
		      "/c",	   "--tls-key-file",
		      "/k",	   "--tls-auth-clients",
		      "no",	   NULL};
	assert_int_equal(load(&c, ok, no_env, err), CFG_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_flag_forms),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_durations_and_sizes),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_drain_grace_bounds),
		cmocka_unit_test(test_heartbeat_options),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_hostile_client_options),
		cmocka_unit_test(test_config_file_with_secret_mode),
		cmocka_unit_test(test_pg_auth_options),
		cmocka_unit_test(test_tls_options),
		cmocka_unit_test(test_acl_options),
		cmocka_unit_test(test_fenced_tables),
		cmocka_unit_test(test_options_list),
		cmocka_unit_test(test_range_messages),
		cmocka_unit_test(test_no_listener),
		cmocka_unit_test(test_bind_check),
		cmocka_unit_test(test_help_one_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
