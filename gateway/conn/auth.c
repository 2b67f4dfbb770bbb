/*
 * auth: principals and the password check (see auth.h).
 */
#include "gateway/conn/auth.h"

#include <stdio.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"

#define DEFAULT_USER "default"

bool auth_required(const struct cfg *cfg)
{
	return cfg->requirepass[0] != '\0';
}

void auth_start(struct conn *c, const struct cfg *cfg)
{
	c->authenticated = !auth_required(cfg);
	c->auth_since_ms = c->last_cmd_ms; /* --auth-timeout counts from here */
	snprintf(c->user, sizeof(c->user), "%s", c->authenticated ? DEFAULT_USER : "");
}

/* Compares in time independent of where the first difference is. */
static bool secret_equal(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	unsigned char d = alen != blen;
	for (size_t i = 0; i < alen; i++)
		d |= (unsigned char)(a[i] ^ b[blen ? i % blen : 0]);
	return d == 0;
}

bool auth_login(struct conn *c, const struct cfg *cfg, const char *user, const char *pass,
		size_t passlen)
{
	if (user != NULL && strcmp(user, DEFAULT_USER) != 0)
		return false;
	if (auth_required(cfg) && !secret_equal(pass, passlen, cfg->requirepass))
		return false;
	c->authenticated = true;
	snprintf(c->user, sizeof(c->user), "%s", DEFAULT_USER);
	return true;
}
