/*
 * auth: who a connection is (its principal, in struct conn: the user name
 * and the user's rules, gateway/conn/acl.h) and the one password check of
 * every front-end: Redis's AUTH and HELLO ... AUTH, and PostgreSQL's
 * startup authentication, ask here.
 *
 * Users (struct auth, one per process, reached through the connection
 * registry: srv_set_auth) come from --aclfile, in Redis's ACL syntax, or
 * without one from --requirepass: the user "default", whose password is
 * --requirepass (when the file does not define default either). A file
 * that holds passwords and is accessible by group or others is refused,
 * as ssh refuses such a key. auth_reload (ACL LOAD, SIGHUP) reads it
 * again: a bad file changes nothing; a good one applies to every
 * connection at once, and closes those whose user is gone or off; the
 * waits already queued are checked again (auth_on_reload).
 *
 * Failed authentications are logged (user, address; never a password) and
 * counted by protocol; the failures of a user name from an address slow
 * the next attempts as that user from there: each is answered after
 * 100 ms doubling per failure, at most --auth-max-delay (5 s; 0: no
 * slowdown) (success answered late too, so that not waiting for the
 * answer gives nothing away), until a success of that user from there or
 * 10 minutes without a failure. The (user, address) pairs are a fixed
 * table: the oldest is forgotten when it is full.
 *
 * PostgreSQL (struct auth_pg, made once at start): users and secrets from
 * --pg-password (every user, that password) and --pg-users (a file of
 * pg_authid-style verifiers), then the ACL users (auth_pg_set_acl): a
 * >password gives a SCRAM verifier at load; a user with only #digests can
 * use cleartext only, and a cleartext password (that user's, or every
 * user's under --pg-auth password) is taken over TLS or a Unix socket
 * only, unless --pg-allow-cleartext-over-plain (refused otherwise:
 * auth_pg_why_not); nopass
 * users are let in. Checked by SCRAM-SHA-256 (RFC 5802/7677, as
 * PostgreSQL stores verifiers: SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:
 * <ServerKey>), MD5 (md5 + md5(md5(password + user) + salt)) or cleartext.
 * An unknown user goes through the same computation against a made-up
 * verifier (salt derived from the name and a secret of the process), so
 * the answer, its delay and its message do not tell whether the user
 * exists. No password, no users and no ACL file: trust.
 */
#ifndef LG_AUTH_H
#define LG_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/conn/acl.h"

struct cfg;
struct conn;
struct srv;
struct event_base;

enum auth_proto { AUTH_REDIS, AUTH_PG, AUTH_PROTO_COUNT };

struct auth;

/* The users of cfg: --aclfile read now (refused when bad, or holding
 * passwords and accessible by group/other), else --requirepass's default.
 * known (may be NULL) says which +command rules name a command. NULL with
 * a message in err. */
struct auth *auth_new(const struct cfg *cfg, struct event_base *base, acl_known_fn known,
		      void *known_arg, char *err, size_t errlen)
	__attribute__((warn_unused_result));
void auth_free(struct auth *a);

/* Reads --aclfile again (ACL LOAD, SIGHUP). false, changing nothing, with
 * "file:line: why" (or why the file is refused) in err, or when there is
 * no file. Else the new users rule every connection of srv from now on;
 * those whose user is gone or off are closed. */
bool auth_reload(struct auth *a, struct srv *srv, char *err, size_t errlen)
	__attribute__((warn_unused_result));
/* fn(arg) runs after each reload that applied (NULL: none), once every
 * connection has its new rules: the lease layer then ends the waits
 * queued under the old rules that the new ones refuse. */
void auth_on_reload(struct auth *a, void (*fn)(void *arg), void *arg);
/* PostgreSQL's users (NULL: none) learn the ACL users, now and after
 * every reload. */
struct auth_pg;
void auth_set_pg(struct auth *a, struct auth_pg *pg);
/* --aclfile is set. */
bool auth_has_file(const struct auth *a);
const struct acl *auth_acl(const struct auth *a);
/* Failed authentications of proto since the start. */
uint64_t auth_failures(const struct auth *a, enum auth_proto proto);

/* The registry's users (NULL: none set, as in unit tests — "default"
 * with --requirepass and every right). */
struct auth *auth_of(const struct conn *c);

/* A new (or reset) connection's principal: "default" and authenticated
 * when that user is on and needs no password, else nobody yet. */
void auth_start(struct conn *c, const struct cfg *cfg);

/* The default user takes any password (AUTH <password> then says so). */
bool auth_default_nopass(const struct conn *c, const struct cfg *cfg);

/* Checks user (NULL: "default") and the password pass (passlen bytes):
 * the user exists, is on and has that password (in time independent of
 * where a digest differs). On success c is authenticated as user; on
 * failure it is logged and counted (auth_note). */
bool auth_login(struct conn *c, const struct cfg *cfg, const char *user, const char *pass,
		size_t passlen) __attribute__((warn_unused_result));

/* Protected mode (cfg->protected_mode) refuses a login as user (NULL:
 * "default") from c: c is not local and user is an ACL user that is on
 * and needs no password (nopass), as the PostgreSQL port refuses such a
 * user's trust login from beyond loopback. Asked before auth_login. */
bool auth_protected_nopass(const struct conn *c, const struct cfg *cfg, const char *user)
	__attribute__((warn_unused_result));

/* How long to hold the answer of c's authentication attempt as user
 * (NULL: "default") now: the penalty of the past failures of that user
 * name from c's address (0: none). Read it before the check (which
 * changes it). */
int64_t auth_delay_ms(const struct conn *c, const char *user);

/* An attempt's outcome for the log, the counters and the slowdown. */
void auth_note(struct conn *c, enum auth_proto proto, const char *user, bool ok);

/* Runs fn(c, arg) after ms, even when c closed meanwhile (fn checks
 * conn_closed and frees arg); c is kept valid (conn_ref) until then.
 * false: out of memory (nothing scheduled). */
bool auth_later(struct conn *c, int64_t ms, void (*fn)(struct conn *c, void *arg), void *arg)
	__attribute__((warn_unused_result));
/* Runs every held answer now (before the registry is freed at exit: the
 * connections they hold can go then). */
void auth_flush_held(struct auth *a);

/* --- PostgreSQL --- */

enum auth_pg_method { AUTH_PG_TRUST, AUTH_PG_SCRAM, AUTH_PG_MD5, AUTH_PG_PASSWORD };

struct auth_pg;

/* The PostgreSQL users of cfg (--pg-password, --pg-users read now,
 * --pg-auth). NULL with a message in err when the file cannot be read or a
 * line is bad. */
struct auth_pg *auth_pg_new(const struct cfg *cfg, char *err, size_t errlen)
	__attribute__((warn_unused_result));
void auth_pg_free(struct auth_pg *a);
enum auth_pg_method auth_pg_method(const struct auth_pg *a);
/* The method to ask user for: auth_pg_method(a), except that a user of
 * the file whose secret can only be checked the other way gets that way
 * (an md5 secret under scram, a SCRAM verifier under md5, as PostgreSQL
 * does for the latter). Unknown users get auth_pg_method(a): the answer
 * does not tell who exists. */
enum auth_pg_method auth_pg_method_for(const struct auth_pg *a, const char *user);
/* Users configured (0 with --pg-password alone: any user). */
unsigned auth_pg_users(const struct auth_pg *a);
/* The ACL users PostgreSQL clients may log in as too (NULL: none); kept
 * by pointer: set it again when they change. */
void auth_pg_set_acl(struct auth_pg *a, const struct acl *acl);
/* Whether c may carry a cleartext password: it is on TLS, or on a Unix
 * socket (local, as pg_hba.conf's "local" lines), or
 * --pg-allow-cleartext-over-plain yes. Plain TCP, loopback included, may
 * not (as under hostssl lines only: a loopback peer can be a relay or a
 * sidecar whose other side is the network). */
bool auth_pg_cleartext_ok(const struct auth_pg *a, const struct conn *c);
/* Why user cannot authenticate over a connection that may (cleartext_ok:
 * auth_pg_cleartext_ok) or may not carry a cleartext password: NULL if it
 * can; else a message for the client. The method asked of user
 * (auth_pg_method_for) is a cleartext password: --pg-auth password, or a
 * user of the ACL file with #digests only. */
const char *auth_pg_why_not(const struct auth_pg *a, const char *user, bool cleartext_ok);

#define AUTH_SCRAM_MAX_MSG 512
#define AUTH_SCRAM_CB_MAX  64 /* the longest hash: SHA-512 */

#define AUTH_SCRAM_SHA_256	"SCRAM-SHA-256"
#define AUTH_SCRAM_SHA_256_PLUS "SCRAM-SHA-256-PLUS"

/* The channel a SCRAM exchange runs on, as PostgreSQL binds it: over TLS,
 * the tls-server-end-point data of RFC 5929 (the hash of the server
 * certificate the client was shown, transport.h); without TLS, none. */
struct auth_scram_chan {
	const char *mech; /* the mechanism the client selected */
	const unsigned char *cb;
	size_t cb_len; /* 0: no channel binding here (SCRAM-SHA-256-PLUS not offered) */
};

/* The mechanisms to offer in AuthenticationSASL, best first, into
 * mechs[2]: SCRAM-SHA-256-PLUS only where there is channel binding data
 * (cb_len > 0), then SCRAM-SHA-256. Returns how many. */
size_t auth_scram_mechs(size_t cb_len, const char *mechs[2]);

/* One SCRAM-SHA-256(-PLUS) exchange (server side). */
struct auth_scram {
	int state; /* 0 new, 1 server-first sent, 2 done */
	unsigned char salt[64];
	size_t salt_len;
	int iterations;
	unsigned char stored_key[32], server_key[32];
	bool known;   /* the user exists (false: a made-up verifier) */
	bool plus;    /* SCRAM-SHA-256-PLUS: the client's c= must carry cb */
	bool offered; /* SCRAM-SHA-256-PLUS was offered: a 'y' client is refused */
	unsigned char cb[AUTH_SCRAM_CB_MAX];
	size_t cb_len;
	char gs2[64];
	char client_first_bare[AUTH_SCRAM_MAX_MSG];
	char server_first[AUTH_SCRAM_MAX_MSG];
	char nonce[AUTH_SCRAM_MAX_MSG];
	/* Why the exchange was refused when it is not the usual "password
	 * authentication failed" (a wrong proof, an unknown user, a message
	 * that does not parse): PostgreSQL's SQLSTATE and message for the
	 * mechanism and channel-binding checks; NULL otherwise. */
	const char *sqlstate, *why;
};

/* Starts an exchange for user on chan (NULL: SCRAM-SHA-256 without TLS)
 * from the client-first-message (len bytes); writes the
 * server-first-message to out (NUL-terminated). server_nonce: NULL for a
 * random one (tests give RFC 7677's). False on a refusal: x->why says
 * why when it is a mechanism or channel-binding rule (an unknown
 * mechanism, PLUS where it was not offered, "p=" under SCRAM-SHA-256, "n"
 * or "y" under PLUS, "y" where PLUS was offered, a binding type other
 * than tls-server-end-point), else the message is malformed (the client
 * gets the usual error). */
bool auth_scram_first(const struct auth_pg *a, struct auth_scram *x, const char *user,
		      const struct auth_scram_chan *chan, const char *msg, size_t len,
		      const char *server_nonce, char *out, size_t outlen)
	__attribute__((warn_unused_result));
/* Checks the client-final-message; true when its channel binding (c=) is
 * the gs2 header of the first message followed, under PLUS, by the
 * channel's data, and the proof is right (and the user exists), with the
 * server-final-message in out. A wrong binding sets x->why. */
bool auth_scram_final(struct auth_scram *x, const char *msg, size_t len, char *out, size_t outlen)
	__attribute__((warn_unused_result));

/* A SCRAM-SHA-256 verifier of password, as PostgreSQL stores it, with the
 * given salt and iterations. False if out is too small. */
bool auth_scram_verifier(const char *password, const unsigned char *salt, size_t salt_len,
			 int iterations, char *out, size_t outlen)
	__attribute__((warn_unused_result));

/* MD5: the response ("md5" + 32 hex digits) to salt. */
bool auth_pg_md5_check(const struct auth_pg *a, const char *user, const unsigned char salt[4],
		       const char *response) __attribute__((warn_unused_result));
/* Cleartext password. */
bool auth_pg_password_check(const struct auth_pg *a, const char *user, const char *password)
	__attribute__((warn_unused_result));

/* Marks c authenticated as user (after one of the checks above, or
 * trust), with the rules of the ACL user of that name, or of "default"
 * for a user of --pg-users or --pg-password alone. False, c left
 * unauthenticated, when the ACL user of that name is off. */
bool auth_pg_login(struct conn *c, const char *user) __attribute__((warn_unused_result));

#endif
