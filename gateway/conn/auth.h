/*
 * auth: who a connection is (its principal, in struct conn) and the one
 * password check of every front-end: Redis's AUTH and HELLO ... AUTH, and
 * PostgreSQL's startup authentication, ask here. ACLs on lock names will
 * read the principal set here.
 *
 * Redis: one user, "default", whose password is --requirepass; without
 * one, every connection starts authenticated as "default".
 *
 * PostgreSQL (struct auth_pg, made once at start): users and secrets from
 * --pg-password (every user, that password) and --pg-users (a file of
 * pg_authid-style verifiers), checked by SCRAM-SHA-256 (RFC 5802/7677, as
 * PostgreSQL stores verifiers: SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:
 * <ServerKey>), MD5 (md5 + md5(md5(password + user) + salt)) or cleartext.
 * An unknown user goes through the same computation against a made-up
 * verifier (salt derived from the name and a secret of the process), so
 * the answer, its delay and its message do not tell whether the user
 * exists. No password and no users: trust.
 */
#ifndef LG_AUTH_H
#define LG_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct cfg;
struct conn;

/* A new (or reset) connection's principal: "default" and authenticated
 * when no password is configured, else nobody yet. */
void auth_start(struct conn *c, const struct cfg *cfg);

/* True when cfg requires a password. */
bool auth_required(const struct cfg *cfg);

/* Checks user (NULL: "default") and the password pass (passlen bytes);
 * on success c is authenticated as user. Compares in time independent of
 * where the first difference is. */
bool auth_login(struct conn *c, const struct cfg *cfg, const char *user, const char *pass,
		size_t passlen) __attribute__((warn_unused_result));

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

#define AUTH_SCRAM_MAX_MSG 512

/* One SCRAM-SHA-256 exchange (server side). */
struct auth_scram {
	int state; /* 0 new, 1 server-first sent, 2 done */
	unsigned char salt[64];
	size_t salt_len;
	int iterations;
	unsigned char stored_key[32], server_key[32];
	bool known; /* the user exists (false: a made-up verifier) */
	char gs2[64];
	char client_first_bare[AUTH_SCRAM_MAX_MSG];
	char server_first[AUTH_SCRAM_MAX_MSG];
	char nonce[AUTH_SCRAM_MAX_MSG];
};

/* Starts an exchange for user from the client-first-message (len bytes);
 * writes the server-first-message to out (NUL-terminated). server_nonce:
 * NULL for a random one (tests give RFC 7677's). False on a malformed
 * message (the client gets the usual error). */
bool auth_scram_first(const struct auth_pg *a, struct auth_scram *x, const char *user,
		      const char *msg, size_t len, const char *server_nonce, char *out,
		      size_t outlen) __attribute__((warn_unused_result));
/* Checks the client-final-message; true when the proof is right (and the
 * user exists), with the server-final-message in out. */
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

/* Marks c authenticated as user (after one of the checks above, or trust). */
void auth_pg_login(struct conn *c, const char *user);

#endif
