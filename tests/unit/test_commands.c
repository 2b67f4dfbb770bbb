/*
 * test_commands: gateway/commands, the table and dispatch, with a session
 * that has no socket (replies are read from its buffer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/config.h"
#include "gateway/conn/acl.h"
#include "gateway/conn/auth.h"
#include "gateway/redis/commands.h"
#include "gateway/redis/session.h"

static int seen_argc;
static void *seen_arg;
static char seen_last[64];

static void h_record(struct cmd_call *c)
{
	seen_argc = c->argc;
	seen_arg = c->arg;
	snprintf(seen_last, sizeof(seen_last), "%s", c->argv[c->argc - 1].p);
	resp_add_int(c->out, c->argc);
}

/* A command whose TABLE argument needs @admin. */
static void h_listing(struct cmd_call *c)
{
	if (c->argc > 1 && !cmd_acl_require(c, "t.list|table", ACL_ADMIN))
		return;
	resp_add_int(c->out, c->argc);
}

static const struct cmd_def sub_defs[] = {
	{.name = "get", .fn = h_record, .arity = 3, .acl = ACL_READ, .key = 2},
	{.name = "open", .fn = h_record, .arity = -2, .flags = CMD_NOAUTH, .acl = ACL_CONNECTION},
	{.name = NULL},
};

static const struct cmd_def lock_defs[] = {
	{.name = "lock.acquire",
	 .fn = h_record,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_LOCK,
	 .key = 1},
	{.name = "lock.state", .fn = h_record, .arity = 2, .acl = ACL_READ | ACL_LOCK, .key = 1},
	{.name = "thing", .arity = -2, .subs = sub_defs, .acl = ACL_SLOW},
	{.name = "lock.many",
	 .fn = h_record,
	 .arity = -2,
	 .acl = ACL_WRITE | ACL_LOCK,
	 .key = 1,
	 .key_last = CMD_KEYS_REST},
	{.name = "t.mset",
	 .fn = h_record,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_LOCK,
	 .key = 1,
	 .key_last = CMD_KEYS_REST,
	 .key_step = 2},
	{.name = "t.eval",
	 .fn = h_record,
	 .arity = -3,
	 .acl = ACL_WRITE | ACL_SCRIPTING,
	 .key = 2,
	 .key_last = CMD_KEYS_NUMKEYS},
	{.name = "t.list", .fn = h_listing, .arity = -1, .acl = ACL_READ | ACL_LOCK},
};

struct fixture {
	struct cmd_table *t;
	struct sess s;
	int tag;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->t = cmd_table_new();
	assert_non_null(f->t);
	assert_int_equal(cmd_add_builtins(f->t), 0);
	assert_int_equal(
		cmd_table_add(f->t, lock_defs, sizeof(lock_defs) / sizeof(lock_defs[0]), &f->tag),
		0);
	static const struct cfg nopass;
	auth_start(&f->s.c, &nopass); /* no registry: default, every right */
	assert_true(f->s.c.authenticated);
	f->s.proto = RESP2;
	buf_init(&f->s.c.out, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	buf_free(&f->s.c.out);
	free(f->s.name); /* sess_free() does this for a real session */
	cmd_table_free(f->t);
	free(f);
	return 0;
}

/* Runs a command given as space-separated words; returns the reply. */
static const char *run(struct fixture *f, const char *line)
{
	static char copy[512], reply[1024];
	struct resp_arg argv[32];
	int argc = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *tok = strtok(copy, " "); tok && argc < 32; tok = strtok(NULL, " ")) {
		argv[argc].p = tok;
		argv[argc].len = strlen(tok);
		argc++;
	}
	f->s.c.out.len = 0;
	cmd_dispatch(f->t, &f->s, argc, argv);
	snprintf(reply, sizeof(reply), "%.*s", (int)f->s.c.out.len, f->s.c.out.buf);
	return reply;
}

static void test_dispatch_table(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"PING", "+PONG\r\n"},
		{"ping hi", "$2\r\nhi\r\n"},
		{"PiNg a b", "-ERR wrong number of arguments for 'ping' command\r\n"},
		{"ECHO", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"echo x", "$1\r\nx\r\n"},
		{"LOCK.ACQUIRE a 100", ":3\r\n"},
		{"lock.acquire a", "-ERR wrong number of arguments for 'lock.acquire' command\r\n"},
		{"Lock.State a", ":2\r\n"},
		{"lock.state a b", "-ERR wrong number of arguments for 'lock.state' command\r\n"},
		{"thing", "-ERR wrong number of arguments for 'thing' command\r\n"},
		{"thing GET a", ":3\r\n"},
		{"thing get", "-ERR wrong number of arguments for 'thing|get' command\r\n"},
		{"thing nope", "-ERR unknown subcommand 'nope'. Try THING HELP.\r\n"},
		{"nope", "-ERR unknown command 'nope', with args beginning with: \r\n"},
		{"nope a b", "-ERR unknown command 'nope', with args beginning with: 'a' 'b' \r\n"},
		{"SELECT 0", "+OK\r\n"},
		{"ROLE", "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"},
		{"SELECT 01", "-ERR value is not an integer or out of range\r\n"},
		{"SELECT 2", "-ERR DB index is out of range\r\n"},
		{"CLIENT GETNAME", "$-1\r\n"},
		{"CLIENT SETNAME x", "+OK\r\n"},
		{"CLIENT GETNAME", "$1\r\nx\r\n"},
		{"CLIENT SETINFO lib-name redis-py", "+OK\r\n"},
		{"CLIENT SETINFO colour red", "-ERR Unrecognized option 'colour'\r\n"},
		{"HELLO 1", "-NOPROTO unsupported protocol version\r\n"},
		{"HELLO two", "-ERR Protocol version is not an integer or out of range\r\n"},
		{"HELLO 3 SETNAME", "-ERR Syntax error in HELLO option 'SETNAME'\r\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = run(f, cases[i].in);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("%s: got \"%s\", want \"%s\"", cases[i].in, got, cases[i].want);
	}
	assert_ptr_equal(seen_arg, &f->tag); /* handlers get their table's arg */
}

static void test_handler_args(void **state)
{
	struct fixture *f = *state;
	run(f, "lock.acquire name 30000 WAIT 0");
	assert_int_equal(seen_argc, 5);
	assert_string_equal(seen_last, "0");
}

/* CLIENT LIST's cmd= is the last command run, with its subcommand. */
static void test_last_command_recorded(void **state)
{
	struct fixture *f = *state;
	assert_null(f->s.last_cmd);
	run(f, "lock.state a");
	assert_string_equal(f->s.last_cmd->name, "lock.state");
	assert_null(f->s.last_sub);
	run(f, "THING get a");
	assert_string_equal(f->s.last_cmd->name, "thing");
	assert_string_equal(f->s.last_sub->name, "get");
	run(f, "nope");
	assert_string_equal(f->s.last_cmd->name, "thing"); /* unknown: not run */
}

/* total_commands_processed: the commands that ran, not those refused. */
static void test_commands_counted_as_redis_does(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *in;
		int counted;
	} cases[] = {
		{"PING", 1},	    {"lock.state a", 1},
		{"THING get a", 1}, {"SELECT 2", 1},   /* ran, answered an error */
		{"nope", 0},			       /* unknown */
		{"ECHO", 0},			       /* wrong arity */
		{"thing get", 0},   {"thing nope", 0}, /* unknown subcommand */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t before = cmd_dispatched(f->t);
		run(f, cases[i].in);
		if (cmd_dispatched(f->t) - before != (uint64_t)cases[i].counted)
			fail_msg("%s: counted %llu, want %d", cases[i].in,
				 (unsigned long long)(cmd_dispatched(f->t) - before),
				 cases[i].counted);
	}
	f->s.c.authenticated = false;
	uint64_t before = cmd_dispatched(f->t);
	run(f, "PING"); /* refused: NOAUTH */
	assert_int_equal(cmd_dispatched(f->t), before);
}

static bool store_open;
static bool gate(void *arg, const char **why)
{
	*why = "DynamoDB table locks not reachable yet";
	return store_open;
}

/* While the store is not open, commands answer -LOADING with the reason
 * (not counted as run); the connection commands marked CMD_LOADING run. */
static void test_loading_gate(void **state)
{
	struct fixture *f = *state;
	store_open = false;
	cmd_table_set_gate(f->t, gate, NULL);
	assert_false(cmd_table_is_ready(f->t));
	uint64_t before = cmd_dispatched(f->t);
	assert_string_equal(run(f, "lock.state a"),
			    "-LOADING leasegate is not ready: DynamoDB table locks not reachable "
			    "yet\r\n");
	assert_string_equal(run(f, "PING"), "-LOADING leasegate is not ready: DynamoDB table "
					    "locks not reachable yet\r\n");
	assert_int_equal(cmd_dispatched(f->t), before);
	assert_string_equal(run(f, "CLIENT SETNAME w"), "+OK\r\n");
	assert_string_equal(run(f, "SELECT 0"), "+OK\r\n");
	/* arity comes first, as in Redis */
	assert_string_equal(run(f, "lock.state"),
			    "-ERR wrong number of arguments for 'lock.state' command\r\n");
	store_open = true;
	assert_true(cmd_table_is_ready(f->t));
	assert_string_equal(run(f, "lock.state a"), ":2\r\n");
	assert_string_equal(run(f, "PING"), "+PONG\r\n");
}

/* Replies by command and outcome, for /metrics. */
static void count_stat(const char *name, const struct cmd_stat *st, void *arg)
{
	struct cmd_stat *want = arg;
	if (strcmp(name, "select") == 0)
		*want = *st;
}

static void test_replies_counted_by_outcome(void **state)
{
	struct fixture *f = *state;
	run(f, "SELECT 0");
	run(f, "SELECT 0");
	run(f, "SELECT 2"); /* -ERR DB index is out of range */
	struct cmd_stat st = {0};
	cmd_foreach_stat(f->t, count_stat, &st);
	assert_int_equal(st.ok, 2);
	assert_int_equal(st.error, 1);
}

static void test_unknown_command_args_cut(void **state)
{
	struct fixture *f = *state;
	char line[400];
	char a[101];
	memset(a, 'a', 100);
	a[100] = '\0';
	snprintf(line, sizeof(line), "nope %s %s %s", a, a, a);
	const char *got = run(f, line);
	/* Redis stops adding arguments once 128 bytes of them are shown */
	char want[400];
	snprintf(want, sizeof(want),
		 "-ERR unknown command 'nope', with args beginning with: '%s' '%.25s' \r\n", a, a);
	assert_string_equal(got, want);
}

static void test_noauth(void **state)
{
	struct fixture *f = *state;
	f->s.c.authenticated = false;
	assert_string_equal(run(f, "PING"), "-NOAUTH Authentication required.\r\n");
	assert_string_equal(run(f, "lock.state a"), "-NOAUTH Authentication required.\r\n");
	assert_string_equal(run(f, "thing get a"), "-NOAUTH Authentication required.\r\n");
	assert_string_equal(run(f, "thing open"), ":2\r\n"); /* CMD_NOAUTH */
	/* arity is checked before authentication, as Redis does */
	assert_string_equal(run(f, "ECHO"),
			    "-ERR wrong number of arguments for 'echo' command\r\n");
	assert_string_equal(run(f, "nope"),
			    "-ERR unknown command 'nope', with args beginning with: \r\n");
}

/* A RESP2 connection subscribed to a channel runs only SUBSCRIBE,
 * UNSUBSCRIBE, PING, QUIT and RESET, with Redis's error for the rest; a
 * RESP3 one runs everything. */
static void test_subscribed_resp2(void **state)
{
	struct fixture *f = *state;
	f->s.subscriptions = 1;
	assert_string_equal(
		run(f, "lock.state a"),
		"-ERR Can't execute 'lock.state': only (P|S)SUBSCRIBE / "
		"(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n");
	assert_string_equal(
		run(f, "thing get a"),
		"-ERR Can't execute 'thing|get': only (P|S)SUBSCRIBE / "
		"(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n");
	assert_string_equal(run(f, "PING"), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
	f->s.proto = RESP3;
	assert_string_equal(run(f, "lock.state a"), ":2\r\n");
	f->s.subscriptions = 0;
}

/* The dispatch asks the ACL check point with the command's categories and
 * the lock names its key spec points at, after arity and NOAUTH. */
static void test_acl_in_dispatch(void **state)
{
	struct fixture *f = *state;
	static const char text[] = "user u on nopass ~orders:* %R~view:* +@lock +thing|get +ping\n"
				   "user n on nopass ~* +@all -thing\n"
				   "user e on nopass ~orders:* +@scripting\n";
	char err[200];
	struct acl *acl =
		acl_parse(text, strlen(text), "t.acl", "", cmd_acl_known, f->t, err, sizeof(err));
	assert_non_null(acl);
	/* rights that depend on an argument: the handler asks again */
	f->s.c.acl = acl_find(acl, "u", 1);
	snprintf(f->s.c.user, sizeof(f->s.c.user), "u");
	assert_string_equal(run(f, "t.list"), ":1\r\n");
	assert_string_equal(
		run(f, "t.list TABLE"),
		"-NOPERM User u has no permissions to run the 't.list|table' command\r\n");
	f->s.c.acl = acl_find(acl, "n", 1);
	assert_string_equal(run(f, "t.list TABLE"), ":2\r\n");
	f->s.c.acl = acl_find(acl, "u", 1);
	snprintf(f->s.c.user, sizeof(f->s.c.user), "u");
	assert_string_equal(run(f, "lock.acquire orders:1 100"), ":3\r\n");
	assert_string_equal(run(f, "lock.acquire other 100"),
			    "-NOPERM No permissions to access a key\r\n");
	/* %R~: LOCK.STATE (@read) may, LOCK.ACQUIRE (@write) may not */
	assert_string_equal(run(f, "lock.state view:1"), ":2\r\n");
	assert_string_equal(run(f, "lock.acquire view:1 100"),
			    "-NOPERM No permissions to access a key\r\n");
	/* every name of a CMD_KEYS_REST spec, past the first chunk too */
	assert_string_equal(run(f, "lock.many orders:1 orders:2"), ":3\r\n");
	assert_string_equal(run(f,
				"lock.many orders:1 orders:2 orders:3 orders:4 orders:5 orders:6 "
				"orders:7 orders:8 orders:9 orders:10 orders:11 orders:12 "
				"orders:13 orders:14 orders:15 orders:16 orders:17 x"),
			    "-NOPERM No permissions to access a key\r\n");
	/* key_step 2 (MSET): the names, never the values between them */
	assert_string_equal(run(f, "t.mset orders:1 v orders:2 w"), ":5\r\n"); /* argc */
	assert_string_equal(run(f, "t.mset orders:1 v other w"),
			    "-NOPERM No permissions to access a key\r\n");
	assert_string_equal(
		run(f, "CONFIG GET port"),
		"-NOPERM User u has no permissions to run the 'config|get' command\r\n");
	assert_string_equal(run(f, "thing get orders:1"), ":3\r\n");
	assert_string_equal(run(f, "thing get x"), "-NOPERM No permissions to access a key\r\n");
	assert_string_equal(run(f, "PING"), "+PONG\r\n");
	assert_string_equal(run(f, "ECHO a"),
			    "-NOPERM User u has no permissions to run the 'echo' command\r\n");
	/* arity before the ACL, as Redis */
	assert_string_equal(run(f, "CONFIG"),
			    "-ERR wrong number of arguments for 'config' command\r\n");
	/* -thing: every subcommand; CMD_NOAUTH ones run whatever the rules */
	f->s.c.acl = acl_find(acl, "n", 1);
	snprintf(f->s.c.user, sizeof(f->s.c.user), "n");
	assert_string_equal(run(f, "thing get a"),
			    "-NOPERM User n has no permissions to run the 'thing|get' command\r\n");
	assert_string_equal(run(f, "thing open"), ":2\r\n");
	/* no rules at all: nothing runs */
	f->s.c.acl = NULL;
	assert_string_equal(run(f, "PING"),
			    "-NOPERM User n has no permissions to run the 'ping' command\r\n");
	acl_free(acl);
}

/* Rules naming a command that does not exist are refused at load. */
static void test_acl_known_commands(void **state)
{
	struct fixture *f = *state;
	assert_true(cmd_acl_known("lock.acquire", f->t));
	assert_true(cmd_acl_known("config|get", f->t));
	assert_true(cmd_acl_known("acl|whoami", f->t));
	assert_false(cmd_acl_known("config|nope", f->t));
	assert_false(cmd_acl_known("lock.aquire", f->t));
	char err[200];
	static const char text[] = "user u on +lock.aquire\n";
	assert_null(
		acl_parse(text, strlen(text), "t.acl", "", cmd_acl_known, f->t, err, sizeof(err)));
	assert_string_equal(err, "t.acl:1: unknown command 'lock.aquire'");
}

/* A numkeys count names the keys the ACL checks; one that is not a
 * number names none (the handler's error), however many digits follow its
 * first non-digit: those once ran the count down past LLONG_MIN (UBSan). */
static void test_acl_numkeys_count(void **state)
{
	struct fixture *f = *state;
	static const char text[] = "user e on nopass ~orders:* +@scripting\n";
	char err[200];
	struct acl *acl =
		acl_parse(text, strlen(text), "t.acl", "", cmd_acl_known, f->t, err, sizeof(err));
	assert_non_null(acl);
	f->s.c.acl = acl_find(acl, "e", 1);
	snprintf(f->s.c.user, sizeof(f->s.c.user), "e");
	assert_string_equal(run(f, "t.eval s 1 orders:1"), ":4\r\n");
	assert_string_equal(run(f, "t.eval s 1 other"),
			    "-NOPERM No permissions to access a key\r\n");
	assert_string_equal(run(f, "t.eval s 2 orders:1 other"),
			    "-NOPERM No permissions to access a key\r\n");
	assert_string_equal(run(f, "t.eval s x00000000000000000000000000 other"), ":4\r\n");
	assert_string_equal(run(f, "t.eval s 1x9999999999999999999999999 other"), ":4\r\n");
	f->s.c.acl = NULL;
	acl_free(acl);
}

static void test_table_rules(void **state)
{
	struct fixture *f = *state;
	static const struct cmd_def dup[] = {
		{.name = "PING", .fn = h_record, .arity = 1, .acl = ACL_FAST}};
	static const struct cmd_def twice[] = {
		{.name = "x.a", .fn = h_record, .arity = 1, .acl = ACL_FAST},
		{.name = "X.A", .fn = h_record, .arity = 1, .acl = ACL_FAST}};
	size_t before = cmd_count(f->t);
	assert_int_equal(cmd_table_add(f->t, dup, 1, NULL), -1);
	assert_int_equal(cmd_table_add(f->t, twice, 2, NULL), -1);
	/* every command and subcommand declares its ACL categories */
	static const struct cmd_def undeclared[] = {{.name = "x.b", .fn = h_record, .arity = 1}};
	static const struct cmd_def bad_sub[] = {{.name = "get", .fn = h_record, .arity = 2},
						 {.name = NULL}};
	static const struct cmd_def undeclared_sub[] = {
		{.name = "x.c", .arity = -2, .subs = bad_sub, .acl = ACL_FAST}};
	assert_int_equal(cmd_table_add(f->t, undeclared, 1, NULL), -1);
	assert_int_equal(cmd_table_add(f->t, undeclared_sub, 1, NULL), -1);
	assert_int_equal(cmd_count(f->t), before); /* nothing half-added */
	void *arg = NULL;
	assert_non_null(cmd_lookup(f->t, "LOCK.STATE", 10, &arg));
	assert_ptr_equal(arg, &f->tag);
	assert_null(cmd_lookup(f->t, "lock.stat", 9, NULL));

	/* bounded: a table refuses more than it can hold */
	static struct cmd_def many[300];
	static char names[300][16];
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "c%d", i);
		many[i] = (struct cmd_def){
			.name = names[i], .fn = h_record, .arity = 1, .acl = ACL_FAST};
	}
	assert_int_equal(cmd_table_add(f->t, many, 300, NULL), -1);
	assert_int_equal(cmd_count(f->t), before);
}

static void sec_a(struct buf *t, void *arg)
{
	buf_printf(t, "a_key:%d\r\n", *(int *)arg);
}

static void sec_b(struct buf *t, void *arg)
{
	buf_printf(t, "b_key:1\r\n");
}

static void test_info_sections(void **state)
{
	struct fixture *f = *state;
	int v = 7;
	assert_int_equal(cmd_table_add_info(f->t, "leases", sec_a, &v), 0);
	assert_int_equal(cmd_table_add_info(f->t, "store", sec_b, NULL), 0);
	assert_int_equal(cmd_table_add_info(f->t, "LEASES", sec_b, NULL), -1);
	struct resp_arg all[1] = {{"INFO", 4}};
	struct resp_arg one[2] = {{"INFO", 4}, {"Store", 5}};
	struct buf o;
	buf_init(&o, 0);
	cmd_info_text(f->t, &f->s, 1, all, &o);
	assert_int_equal(o.len, strlen("# Leases\r\na_key:7\r\n\r\n# Store\r\nb_key:1\r\n"));
	assert_memory_equal(o.buf, "# Leases\r\na_key:7\r\n\r\n# Store\r\nb_key:1\r\n", o.len);
	o.len = 0;
	cmd_info_text(f->t, &f->s, 2, one, &o);
	assert_int_equal(o.len, strlen("# Store\r\nb_key:1\r\n"));
	buf_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dispatch_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handler_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_command_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands_counted_as_redis_does, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_loading_gate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replies_counted_by_outcome, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_command_args_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_noauth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_subscribed_resp2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acl_in_dispatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acl_known_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_acl_numkeys_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_sections, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
