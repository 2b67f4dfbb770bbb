/*
 * test_acl: the ACL file's parser (every rule, bad lines and their line
 * numbers), the check point acl_check, Redis's globs, ACL LIST's text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/sha.h>

#include "gateway/conn/acl.h"

static char err[512];

static struct acl *parse(const char *text)
{
	err[0] = '\0';
	return acl_parse(text, strlen(text), "users.acl", "", NULL, NULL, err, sizeof(err));
}

static const struct acl_user *user(const struct acl *a, const char *name)
{
	const struct acl_user *u = acl_find(a, name, strlen(name));
	assert_non_null(u);
	return u;
}

static const char *describe(const struct acl_user *u)
{
	static char text[1024];
	struct buf b;
	buf_init(&b, 0);
	acl_describe(u, &b);
	snprintf(text, sizeof(text), "%.*s", (int)b.len, b.buf);
	buf_free(&b);
	return text;
}

/* acl_check of one command (cats) on one lock name (NULL: none). */
static enum acl_verdict check(const struct acl_user *u, const char *cmd, uint32_t cats,
			      const char *key)
{
	size_t len = key ? strlen(key) : 0;
	struct acl_req r = {
		.cmd = cmd, .cats = cats, .nkeys = key != NULL, .keys = &key, .key_lens = &len};
	return acl_check(u, &r, NULL);
}

#define LOCKW (ACL_WRITE | ACL_LOCK)
#define LOCKR (ACL_READ | ACL_LOCK)

static void test_default_without_file(void **state)
{
	struct acl *a = acl_default("");
	const struct acl_user *d = user(a, "default");
	assert_true(acl_user_on(d) && acl_user_nopass(d));
	assert_int_equal(check(d, "lock.acquire", LOCKW, "any"), ACL_OK);
	assert_int_equal(check(d, "config|get", ACL_ADMIN, NULL), ACL_OK);
	assert_string_equal(describe(d), "user default on nopass ~* +@all");
	acl_free(a);

	/* --requirepass: default's password, never shown, a digest instead */
	a = acl_default("s3cret");
	d = user(a, "default");
	assert_false(acl_user_nopass(d));
	assert_true(acl_password_ok(d, "s3cret", 6));
	assert_false(acl_password_ok(d, "s3cre", 5));
	assert_false(acl_password_ok(d, "s3cret!", 7));
	assert_null(strstr(describe(d), "s3cret"));
	assert_string_equal(describe(d),
			    "user default on "
			    "#1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0"
			    " ~* +@all");
	acl_free(a);
}

static void test_file_users_and_default(void **state)
{
	struct acl *a = parse("# a comment\n"
			      "\n"
			      "   # an indented comment\n"
			      "user alice on >pw ~orders:* +@lock\r\n"
			      "user bob off\n");
	assert_non_null(a);
	assert_int_equal(acl_count(a), 3); /* alice, bob, then the implicit default */
	assert_string_equal(acl_user_name(acl_user_at(a, 0)), "alice");
	assert_string_equal(acl_user_name(acl_user_at(a, 2)), "default");
	assert_true(acl_has_secrets(a));
	assert_false(acl_user_on(user(a, "bob")));
	/* a user starts off, without password, lock or command */
	assert_string_equal(describe(user(a, "bob")), "user bob off -@all");
	assert_null(acl_find(a, "carol", 5));
	acl_free(a);

	/* the file's default wins over --requirepass */
	const char *text = "user default on nopass ~x +ping\n";
	a = acl_parse(text, strlen(text), "f", "rp", NULL, NULL, err, sizeof(err));
	assert_non_null(a);
	assert_true(acl_user_nopass(user(a, "default")));
	assert_false(acl_has_secrets(a));
	acl_free(a);
	/* a file without default: --requirepass is default's password */
	text = "user u on nopass\n";
	a = acl_parse(text, strlen(text), "f", "rp", NULL, NULL, err, sizeof(err));
	assert_true(acl_password_ok(user(a, "default"), "rp", 2));
	assert_false(acl_has_secrets(a)); /* not the file's */
	acl_free(a);
}

static void test_password_rules(void **state)
{
	unsigned char d[32];
	char hex[65];
	SHA256((const unsigned char *)"hashed", 6, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	char text[512];
	snprintf(text, sizeof(text),
		 "user a on >one >two\n"
		 "user b on >one <one\n"
		 "user c on #%s\n"
		 "user d on #%s !%s\n"
		 "user e on >one nopass\n"
		 "user f on nopass >one\n"
		 "user g on >one resetpass\n"
		 "user h on \"> spaced pass\"\n",
		 hex, hex, hex);
	struct acl *a = parse(text);
	assert_non_null(a);
	const struct acl_user *u = user(a, "a");
	assert_true(acl_password_ok(u, "one", 3) && acl_password_ok(u, "two", 3));
	assert_false(acl_password_ok(u, "three", 5));
	assert_false(acl_password_ok(user(a, "b"), "one", 3));
	assert_true(acl_password_ok(user(a, "c"), "hashed", 6));
	assert_false(acl_password_ok(user(a, "c"), "Hashed", 6));
	assert_false(acl_password_ok(user(a, "d"), "hashed", 6));
	assert_true(acl_user_nopass(user(a, "e")));
	assert_true(acl_password_ok(user(a, "e"), "anything", 8));
	assert_false(acl_user_nopass(user(a, "f"))); /* a password ends nopass */
	assert_false(acl_password_ok(user(a, "f"), "anything", 8));
	assert_false(acl_password_ok(user(a, "g"), "one", 3));
	assert_false(acl_user_nopass(user(a, "g")));
	assert_true(acl_password_ok(user(a, "h"), " spaced pass", 12));
	/* the listing: digests, never the password */
	char want[200];
	snprintf(want, sizeof(want), "user c on #%s -@all", hex);
	assert_string_equal(describe(user(a, "c")), want);
	assert_null(strstr(describe(user(a, "a")), "one"));

	/* PostgreSQL's secrets come from the first >password only */
	struct acl_pg_secret s;
	assert_true(acl_pg_secret(user(a, "a"), &s));
	assert_int_equal(s.iterations, 4096);
	assert_memory_equal(s.md5, "md5", 3);
	assert_int_equal(strlen(s.md5), 35);
	assert_false(acl_pg_secret(user(a, "c"), &s)); /* a digest cannot give one */
	assert_false(acl_pg_secret(user(a, "b"), &s)); /* its password removed */
	assert_false(acl_pg_secret(user(a, "e"), &s)); /* nopass */
	acl_free(a);
}

/* A reload keeps the PostgreSQL secrets of unchanged passwords (PBKDF2 is
 * not run again on the event loop), and derives the others anew. */
static void test_reparse_keeps_derivations(void **state)
{
	const char *one = "user a on >x\nuser b on >y\n", *two = "user a on >x\nuser b on >z\n";
	struct acl *a = acl_parse(one, strlen(one), "f", "rp", NULL, NULL, err, sizeof(err));
	struct acl *b = acl_reparse(two, strlen(two), "f", "rp", a, NULL, NULL, err, sizeof(err));
	assert_non_null(a);
	assert_non_null(b);
	struct acl_pg_secret sa, sb;
	assert_true(acl_pg_secret(user(a, "a"), &sa) && acl_pg_secret(user(b, "a"), &sb));
	assert_memory_equal(&sa, &sb, sizeof(sa)); /* the same salt: not derived again */
	assert_true(acl_pg_secret(user(a, "b"), &sa) && acl_pg_secret(user(b, "b"), &sb));
	assert_memory_not_equal(sa.salt, sb.salt, sizeof(sa.salt));
	assert_memory_not_equal(sa.md5, sb.md5, sizeof(sa.md5));
	assert_true(acl_pg_secret(user(a, "default"), &sa) &&
		    acl_pg_secret(user(b, "default"), &sb));
	assert_memory_equal(&sa, &sb, sizeof(sa)); /* --requirepass's too */
	/* the same password under another name: derived (its md5 has the name) */
	const char *three = "user c on >x\n";
	struct acl *c = acl_reparse(three, strlen(three), "f", "", a, NULL, NULL, err, sizeof(err));
	assert_true(acl_pg_secret(user(a, "a"), &sa) && acl_pg_secret(user(c, "c"), &sb));
	assert_memory_not_equal(sa.salt, sb.salt, sizeof(sa.salt));
	acl_free(c);
	acl_free(b);
	acl_free(a);
}

static void test_key_rules(void **state)
{
	struct acl *a = parse("user k on nopass +@all ~orders:* ~jobs:?\n"
			      "user r on nopass +@all %R~view:* %W~feed:* %RW~both:*\n"
			      "user all on nopass +@all allkeys\n"
			      "user none on nopass +@all ~x resetkeys\n");
	assert_non_null(a);
	const struct acl_user *k = user(a, "k");
	assert_int_equal(check(k, "lock.acquire", LOCKW, "orders:1"), ACL_OK);
	assert_int_equal(check(k, "lock.acquire", LOCKW, "jobs:1"), ACL_OK);
	assert_int_equal(check(k, "lock.acquire", LOCKW, "jobs:12"), ACL_DENIED_KEY);
	assert_int_equal(check(k, "lock.acquire", LOCKW, "order:1"), ACL_DENIED_KEY);
	assert_int_equal(check(k, "ping", ACL_CONNECTION, NULL), ACL_OK);
	const struct acl_user *r = user(a, "r");
	assert_int_equal(check(r, "lock.state", LOCKR, "view:1"), ACL_OK);
	assert_int_equal(check(r, "lock.acquire", LOCKW, "view:1"), ACL_DENIED_KEY);
	assert_int_equal(check(r, "lock.acquire", LOCKW, "feed:1"), ACL_OK);
	assert_int_equal(check(r, "lock.state", LOCKR, "feed:1"), ACL_DENIED_KEY);
	assert_int_equal(check(r, "lock.state", LOCKR, "both:1"), ACL_OK);
	assert_int_equal(check(r, "lock.acquire", LOCKW, "both:1"), ACL_OK);
	/* neither @read nor @write: both accesses needed */
	assert_int_equal(check(r, "lock.other", ACL_LOCK, "view:1"), ACL_DENIED_KEY);
	assert_int_equal(check(r, "lock.other", ACL_LOCK, "both:1"), ACL_OK);
	assert_string_equal(describe(r), "user r on nopass %R~view:* %W~feed:* ~both:* +@all");
	/* what a listing may show it */
	assert_true(acl_may_read(r, "view:1", 6));
	assert_false(acl_may_read(r, "feed:1", 6));
	assert_true(acl_may_read(r, "both:1", 6));
	assert_false(acl_may_read(NULL, "both:1", 6));
	assert_int_equal(check(user(a, "all"), "lock.acquire", LOCKW, "anything"), ACL_OK);
	assert_int_equal(check(user(a, "none"), "lock.acquire", LOCKW, "x"), ACL_DENIED_KEY);
	acl_free(a);
}

static void test_command_rules(void **state)
{
	struct acl *a = parse("user lock on nopass ~* +@lock +@connection\n"
			      "user ro on nopass ~* +@all -@write -config\n"
			      "user sub on nopass ~* +config|get +acl -acl|load\n"
			      "user last on nopass ~* +@lock -lock.acquire +@write\n"
			      "user all on nopass ~* allcommands\n"
			      "user no on nopass ~* +@all nocommands +ping\n"
			      "user was on nopass ~* +@all reset\n");
	assert_non_null(a);
	const struct acl_user *u = user(a, "lock");
	assert_int_equal(check(u, "lock.acquire", LOCKW, "a"), ACL_OK);
	assert_int_equal(check(u, "ping", ACL_FAST | ACL_CONNECTION, NULL), ACL_OK);
	assert_int_equal(check(u, "leader.campaign", ACL_WRITE | ACL_LEADER, "a"), ACL_DENIED_CMD);
	u = user(a, "ro");
	assert_int_equal(check(u, "lock.state", LOCKR, "a"), ACL_OK);
	assert_int_equal(check(u, "lock.acquire", LOCKW, "a"), ACL_DENIED_CMD);
	assert_int_equal(check(u, "config|get", ACL_ADMIN, NULL), ACL_DENIED_CMD);
	u = user(a, "sub");
	assert_int_equal(check(u, "config|get", ACL_ADMIN, NULL), ACL_OK);
	assert_int_equal(check(u, "config|resetstat", ACL_ADMIN, NULL), ACL_DENIED_CMD);
	assert_int_equal(check(u, "config", ACL_ADMIN, NULL), ACL_DENIED_CMD);
	assert_int_equal(check(u, "acl|whoami", ACL_SLOW, NULL), ACL_OK);
	assert_int_equal(check(u, "acl|load", ACL_ADMIN, NULL), ACL_DENIED_CMD);
	/* "acl" names acl|... only, not a command that begins the same */
	assert_int_equal(check(u, "aclx", ACL_ADMIN, NULL), ACL_DENIED_CMD);
	/* the last rule that names the command decides */
	u = user(a, "last");
	assert_int_equal(check(u, "lock.acquire", LOCKW, "a"), ACL_OK);
	assert_int_equal(check(u, "lock.state", LOCKR, "a"), ACL_OK);
	assert_string_equal(describe(u),
			    "user last on nopass ~* -@all +@lock -lock.acquire +@write");
	assert_int_equal(check(user(a, "all"), "anything", ACL_ADMIN, NULL), ACL_OK);
	assert_string_equal(describe(user(a, "all")), "user all on nopass ~* +@all");
	u = user(a, "no");
	assert_int_equal(check(u, "lock.state", LOCKR, "a"), ACL_DENIED_CMD);
	assert_int_equal(check(u, "ping", ACL_CONNECTION, NULL), ACL_OK);
	assert_string_equal(describe(u), "user no on nopass ~* -@all +ping");
	u = user(a, "was");
	assert_false(acl_user_on(u));
	assert_string_equal(describe(u), "user was off -@all");
	acl_free(a);

	/* off: nothing runs, whatever the rules */
	a = parse("user off off nopass ~* +@all\n");
	assert_int_equal(check(user(a, "off"), "ping", ACL_CONNECTION, NULL), ACL_DENIED_CMD);
	assert_int_equal(check(NULL, "ping", ACL_CONNECTION, NULL), ACL_DENIED_CMD);
	acl_free(a);
}

/* A pattern with blanks or quotes is listed quoted: the line loads back. */
static void test_quoted_rules_listed_quoted(void **state)
{
	struct acl *a = parse("user q on nopass \"~a b\" \"~x\\\"y\" ~\\* +@all\n");
	assert_non_null(a);
	const struct acl_user *u = user(a, "q");
	assert_int_equal(check(u, "lock.state", LOCKR, "a b"), ACL_OK);
	assert_int_equal(check(u, "lock.state", LOCKR, "x\"y"), ACL_OK);
	assert_int_equal(check(u, "lock.state", LOCKR, "*"), ACL_OK);
	assert_int_equal(check(u, "lock.state", LOCKR, "a"), ACL_DENIED_KEY);
	char line[1100];
	snprintf(line, sizeof(line), "%s\n", describe(u));
	assert_string_equal(line, "user q on nopass \"~a b\" \"~x\\\"y\" ~\\* +@all\n");
	struct acl *b = parse(line);
	assert_non_null(b);
	assert_string_equal(describe(user(b, "q")),
			    "user q on nopass \"~a b\" \"~x\\\"y\" ~\\* +@all");
	acl_free(b);
	acl_free(a);
}

static void test_channels_ignored(void **state)
{
	struct acl *a = parse("user p on nopass ~* &* &news:* allchannels resetchannels +@all\n");
	assert_non_null(a);
	assert_string_equal(describe(user(a, "p")), "user p on nopass ~* +@all");
	acl_free(a);
}

/* A bad line refuses the whole file, naming the file and the line. */
static void test_bad_lines(void **state)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{"user a on\nuser b on +@nope\n", "users.acl:2: unknown category 'nope'"},
		{"\n\n\nusr a on\n", "users.acl:4: a line is 'user <name> <rules>...', not 'usr'"},
		{"user\n", "users.acl:1: a user name is 1 to 63 printable characters without ':'"},
		{"user a:b on\n",
		 "users.acl:1: a user name is 1 to 63 printable characters without ':'"},
		{"user a on\nuser a off\n", "users.acl:2: duplicate user 'a'"},
		{"user a on #abc\n",
		 "users.acl:1: a password digest (#) is 64 hexadecimal digits of its SHA-256"},
		{"user a on !zz\n",
		 "users.acl:1: a password digest (!) is 64 hexadecimal digits of its SHA-256"},
		{"user a on %X~k\n",
		 "users.acl:1: a key permission is %R~, %W~ or %RW~ and a pattern"},
		{"user a on %R\n",
		 "users.acl:1: a key permission is %R~, %W~ or %RW~ and a pattern"},
		{"user a on onn\n",
		 "users.acl:1: rule 2 is no rule (not shown: it may be part of a "
		 "password; one with blanks is written \">pass word\")"},
		/* a password with a blank, unquoted: no part of it is shown */
		{"user a on >my secret\n", "users.acl:1: rule 3 is no rule (not shown: it may be "
					   "part of a password; one with "
					   "blanks is written \">pass word\")"},
		{"user a on (~x +get)\n", "users.acl:1: selectors '(...)' are not supported"},
		{"user a on \"unclosed\n", "users.acl:1: unbalanced quotes or too many rules"},
		{"user a on +\n", "users.acl:1: unknown command '+'"},
		/* control characters (make fuzz, fuzz_acl: a CR kept in a rule
		 * was lost at each ACL LIST and reload); the CR of a CRLF line
		 * ending is not one */
		{"user a on\r\nuser b on +get\r\r\n",
		 "users.acl:2: a control character (0x0d) at column 15"},
		{"user a on ~k\x1b[0m\n", "users.acl:1: a control character (0x1b) at column 13"},
		{"user a on >\"pass\x7f\"\n",
		 "users.acl:1: a control character (0x7f) at column 17"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct acl *a = parse(cases[i].text);
		if (a != NULL)
			fail_msg("case %zu: parsed", i);
		if (strcmp(err, cases[i].err) != 0)
			fail_msg("case %zu: '%s', want '%s'", i, err, cases[i].err);
	}
	/* CRLF line endings and tabs between rules are no control characters */
	struct acl *a = parse("user a on\t+get ~k\r\nuser b on\r\n");
	assert_non_null(a);
	assert_int_equal(acl_count(a), 3);
	acl_free(a);
	/* a NUL byte in the middle of a line */
	char nul[] = "user a on\nuser b\0 on\n";
	assert_null(acl_parse(nul, sizeof(nul) - 1, "users.acl", "", NULL, NULL, err, sizeof(err)));
	assert_string_equal(err, "users.acl:2: a NUL byte in the line");
}

static bool known(const char *name, void *arg)
{
	return strcmp(name, "ping") == 0 || strcmp(name, "config|get") == 0;
}

static void test_unknown_commands(void **state)
{
	const char *ok = "user a on +ping +config|get -PING\n";
	struct acl *a = acl_parse(ok, strlen(ok), "f", "", known, NULL, err, sizeof(err));
	assert_non_null(a);
	assert_string_equal(describe(user(a, "a")), "user a on -@all +ping +config|get -ping");
	acl_free(a);
	const char *bad = "user a on +ping\nuser b on +pong\n";
	assert_null(acl_parse(bad, strlen(bad), "f", "", known, NULL, err, sizeof(err)));
	assert_string_equal(err, "f:2: unknown command 'pong'");
}

static void test_glob(void **state)
{
	static const struct {
		const char *pattern, *s;
		bool match;
	} cases[] = {
		{"*", "", true},
		{"*", "anything", true},
		{"orders:*", "orders:", true},
		{"orders:*", "orders:1:2", true},
		{"orders:*", "order:1", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"*:lock", "x:y:lock", true},
		{"[abc]x", "bx", true},
		{"[abc]x", "dx", false},
		{"[^abc]x", "dx", true},
		{"[^abc]x", "ax", false},
		{"[a-c]", "b", true},
		{"[c-a]", "b", true},
		{"[a-c]", "d", false},
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"[\\]]", "]", true},
		{"pg:app:*", "pg:app:42", true},
		{"pg:app:*", "pg:other:42", false},
		{"[ab", "a", true}, /* an open class runs to the end */
		{"**x", "yx", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool m = acl_glob(cases[i].pattern, strlen(cases[i].pattern), cases[i].s,
				  strlen(cases[i].s));
		if (m != cases[i].match)
			fail_msg("'%s' on '%s': %d", cases[i].pattern, cases[i].s, m);
	}
}

static void test_categories(void **state)
{
	assert_int_equal(acl_cat_lookup("lock", 4), ACL_LOCK);
	assert_int_equal(acl_cat_lookup("LEADER", 6), ACL_LEADER);
	assert_int_equal(acl_cat_lookup("admin", 5), ACL_ADMIN);
	assert_int_equal(acl_cat_lookup("all", 3), 0); /* a rule's word, not a category */
	assert_int_equal(acl_cat_lookup("nope", 4), 0);
	size_t n = 0;
	for (; acl_cats[n].name; n++)
		assert_int_equal(acl_cat_lookup(acl_cats[n].name, strlen(acl_cats[n].name)),
				 acl_cats[n].bit);
	assert_int_equal(n, 23);
}

/* The bad key's index, for a front-end that names it. */
static void test_bad_key_index(void **state)
{
	struct acl *a = parse("user k on nopass +@all ~a:*\n");
	const char *keys[] = {"a:1", "a:2", "b:1"};
	size_t lens[] = {3, 3, 3};
	struct acl_req r = {
		.cmd = "del", .cats = ACL_WRITE, .nkeys = 3, .keys = keys, .key_lens = lens};
	unsigned bad = 99;
	assert_int_equal(acl_check(user(a, "k"), &r, &bad), ACL_DENIED_KEY);
	assert_int_equal(bad, 2);
	acl_free(a);
}

/* The fast path: only a user that may run everything on every name skips
 * the rules; any narrowing keeps it on the slow, checked path. */
static void test_allows_all(void **state)
{
	struct acl *a = parse("user a on nopass ~* +@all\n"
			      "user b on nopass ~* +@all -lock.acquire\n"
			      "user c on nopass ~orders:* +@all\n"
			      "user d off nopass ~* +@all\n"
			      "user e on nopass %R~* +@all\n"
			      "user f on nopass ~* -@all +@all\n"
			      "user g on nopass ~* +@all -@write\n");
	assert_non_null(a);
	assert_true(acl_allows_all(user(a, "a")));
	assert_true(acl_allows_all(user(a, "f")));
	assert_true(acl_allows_all(user(a, "default"))); /* no file's default */
	const char *narrow[] = {"b", "c", "d", "e", "g"};
	for (unsigned i = 0; i < sizeof(narrow) / sizeof(narrow[0]); i++)
		assert_false(acl_allows_all(user(a, narrow[i])));
	assert_int_equal(check(user(a, "b"), "lock.acquire", LOCKW, "x"), ACL_DENIED_CMD);
	assert_int_equal(check(user(a, "c"), "lock.acquire", LOCKW, "x"), ACL_DENIED_KEY);
	assert_int_equal(check(user(a, "e"), "lock.acquire", LOCKW, "x"), ACL_DENIED_KEY);
	assert_int_equal(check(user(a, "g"), "lock.acquire", LOCKW, "x"), ACL_DENIED_CMD);
	assert_int_equal(check(user(a, "a"), "lock.acquire", LOCKW, "x"), ACL_OK);
	acl_free(a);
	struct acl *d = acl_default("secret");
	assert_true(acl_allows_all(acl_find(d, "default", 7)));
	acl_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_without_file),
		cmocka_unit_test(test_file_users_and_default),
		cmocka_unit_test(test_password_rules),
		cmocka_unit_test(test_reparse_keeps_derivations),
		cmocka_unit_test(test_key_rules),
		cmocka_unit_test(test_command_rules),
		cmocka_unit_test(test_quoted_rules_listed_quoted),
		cmocka_unit_test(test_channels_ignored),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_unknown_commands),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_categories),
		cmocka_unit_test(test_bad_key_index),
		cmocka_unit_test(test_allows_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
