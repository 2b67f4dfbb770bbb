/*
 * acl: users and their rules, in Redis's ACL file syntax, and the one
 * check point of every front-end: may this user run a command of these
 * categories on these lock names (acl_check)? The Redis front-end calls
 * it from its dispatch with the lock names its command table points at;
 * the PostgreSQL front-end with the name of the lock a function takes
 * (pg:<database>:<key>, or the text of a leasegate.* call).
 *
 * The file: one user a line, `user NAME rule...`; blank lines and lines
 * starting with # are comments. Rules, applied left to right:
 *   on | off                 the user may (not) authenticate
 *   >password  <password     add / remove a password (kept as SHA-256)
 *   #<64 hex>  !<64 hex>     add / remove a password by its SHA-256
 *   nopass | resetpass       any password works / no password does
 *   ~pattern %R~p %W~p %RW~p lock names (read, write, both), Redis globs
 *   allkeys | resetkeys      ~* / no lock name
 *   +cmd -cmd +cmd|sub       allow / deny a command (or a subcommand)
 *   +@cat -@cat              allow / deny every command of a category
 *   allcommands nocommands   +@all / -@all
 *   reset                    off, no password, no lock, no command
 *   &pat allchannels resetchannels   accepted and ignored (no Pub/Sub)
 * A file with any bad line is refused as a whole ("file:line: why").
 *
 * Passwords are kept only as SHA-256 digests, compared with
 * CRYPTO_memcmp; a user's first >password also yields, at load, a
 * SCRAM-SHA-256 verifier (random salt) and PostgreSQL's MD5 secret, so
 * that PostgreSQL clients can log in as the same user. Nothing here
 * prints a secret: acl_describe shows digests (#...) only.
 *
 * Not here: reading who a connection is (auth.h), the files' permissions
 * (auth.c refuses a group/other-readable file), the command tables.
 */
#ifndef LG_ACL_H
#define LG_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/buf.h"

/* Categories: Redis's, and leasegate's lock and leader. */
enum acl_cat {
	ACL_KEYSPACE = 1u << 0,
	ACL_READ = 1u << 1,
	ACL_WRITE = 1u << 2,
	ACL_SET = 1u << 3,
	ACL_SORTEDSET = 1u << 4,
	ACL_LIST = 1u << 5,
	ACL_HASH = 1u << 6,
	ACL_STRING = 1u << 7,
	ACL_BITMAP = 1u << 8,
	ACL_HYPERLOGLOG = 1u << 9,
	ACL_GEO = 1u << 10,
	ACL_STREAM = 1u << 11,
	ACL_PUBSUB = 1u << 12,
	ACL_ADMIN = 1u << 13,
	ACL_FAST = 1u << 14,
	ACL_SLOW = 1u << 15,
	ACL_BLOCKING = 1u << 16,
	ACL_DANGEROUS = 1u << 17,
	ACL_CONNECTION = 1u << 18,
	ACL_TRANSACTION = 1u << 19,
	ACL_SCRIPTING = 1u << 20,
	ACL_LOCK = 1u << 21,
	ACL_LEADER = 1u << 22,
};

/* The categories' names (without '@'), in bit order, and what each
 * holds; NULL-terminated. */
struct acl_cat_def {
	const char *name;
	uint32_t bit;
	const char *about;
};
extern const struct acl_cat_def acl_cats[];

/* The bit of a category name (no '@'); 0 if unknown. */
uint32_t acl_cat_lookup(const char *name, size_t len);

/* What a command does to a lock name it is given. */
enum acl_access { ACL_KEY_READ = 1, ACL_KEY_WRITE = 2 };

#define ACL_USER_MAX 63 /* bytes of a user name */

struct acl_user;
struct acl;

/* Tells whether a +command/-command rule names a command that exists
 * ("name" or "name|sub", lower case). NULL: any name is taken. */
typedef bool (*acl_known_fn)(const char *name, void *arg);

/* Parses a whole ACL file's text (len bytes; `path` names it in
 * messages). On success a new set of users: those of the text, plus
 * "default" when the text does not define it — `on nopass ~* +@all`, or
 * with requirepass (non-empty) that password instead of nopass. NULL on a
 * bad line, with "path:line: why" in err. */
struct acl *acl_parse(const char *text, size_t len, const char *path, const char *requirepass,
		      acl_known_fn known, void *known_arg, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* acl_parse for a reload: a user of prev (the set in force, may be NULL)
 * with the same name and first >password keeps its PostgreSQL secrets
 * instead of deriving them again (PBKDF2: milliseconds a user, on the
 * event loop), salt included. */
struct acl *acl_reparse(const char *text, size_t len, const char *path, const char *requirepass,
			const struct acl *prev, acl_known_fn known, void *known_arg, char *err,
			size_t errlen) __attribute__((warn_unused_result));

/* The set without a file: default only, as above. NULL on out-of-memory. */
struct acl *acl_default(const char *requirepass) __attribute__((warn_unused_result));

/* A password (>password or #digest) was given in the text parsed. */
bool acl_has_secrets(const struct acl *a);

/* Frees the set (its secrets are wiped). */
void acl_free(struct acl *a);

unsigned acl_count(const struct acl *a);
/* The i-th user, in file order (default last if it was added). */
const struct acl_user *acl_user_at(const struct acl *a, unsigned i);
/* The user called name (len bytes), NULL if none. */
const struct acl_user *acl_find(const struct acl *a, const char *name, size_t len);

const char *acl_user_name(const struct acl_user *u);
bool acl_user_on(const struct acl_user *u);
bool acl_user_nopass(const struct acl_user *u);
/* The user has a password (>password or #digest). */
bool acl_user_has_pass(const struct acl_user *u);

/* True when pass (len bytes) is one of u's passwords (or u is nopass).
 * Its time does not depend on where a digest differs. Does not look at
 * on/off. */
bool acl_password_ok(const struct acl_user *u, const char *pass, size_t len)
	__attribute__((warn_unused_result));

/* What PostgreSQL can check u's password by: the SCRAM verifier and MD5
 * secret derived from u's first >password at load. False when u has none
 * (only #digests, or nopass). */
struct acl_pg_secret {
	unsigned char salt[16];
	int iterations;
	unsigned char stored_key[32], server_key[32];
	char md5[36]; /* "md5" + hex of md5(password + user name) */
};
bool acl_pg_secret(const struct acl_user *u, struct acl_pg_secret *out);

/* --- the check point --- */

enum acl_verdict { ACL_OK, ACL_DENIED_CMD, ACL_DENIED_KEY };

/* A request, as a front-end describes it. */
struct acl_req {
	const char *cmd; /* "lock.acquire", "config|get", "pg_advisory_lock" (lower case) */
	uint32_t cats;	 /* enum acl_cat of the command */
	unsigned nkeys;	 /* lock names it acts on */
	const char *const *keys;
	const size_t *key_lens;
};

/* May u run r? ACL_DENIED_CMD when u's command rules refuse r->cmd (by
 * its name, the name before '|', or one of its categories: the last rule
 * that names it decides, none refuses); ACL_DENIED_KEY when a lock name is
 * matched by none of u's patterns allowing the access the categories ask
 * for (@write: W, @read: R, else both), with its index in *bad_key (may be
 * NULL). A disabled user (off) may run nothing. */
enum acl_verdict acl_check(const struct acl_user *u, const struct acl_req *r, unsigned *bad_key)
	__attribute__((warn_unused_result));

/* u may run every command on every lock name (acl_check answers ACL_OK
 * to anything): the check point's fast path. */
bool acl_allows_all(const struct acl_user *u);

/* u's patterns let it read the lock name (len bytes): for listings
 * (LOCK.LIST) that show only the names a user may use. */
bool acl_may_read(const struct acl_user *u, const char *name, size_t len);

/* Redis's glob (* ? [abc] [^a] [a-z] \x) of pattern on s (slen bytes). */
bool acl_glob(const char *pattern, size_t plen, const char *s, size_t slen);

/* Appends u as ACL LIST shows it: "user NAME on #<digest> ~pat +@all"
 * (never a password; digests, as Redis). */
void acl_describe(const struct acl_user *u, struct buf *out);

#endif
