/*
 * auth: who a connection is (its principal, in struct conn) and the one
 * password check of every front-end: Redis's AUTH and HELLO ... AUTH, and
 * PostgreSQL's startup authentication, ask here. ACLs on lock names will
 * read the principal set here.
 *
 * Today there is one user, "default", whose password is --requirepass;
 * without one, every connection starts authenticated as "default".
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

#endif
