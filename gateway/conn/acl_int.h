/*
 * acl_int: what acl.c (the parser, the users) and acl_check.c (the check
 * point, the listing) share. Not for other modules: they include acl.h.
 */
#ifndef LG_ACL_INT_H
#define LG_ACL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/conn/acl.h"

#define CMD_MAX	 128
#define ALL_CATS 0xffffffffu /* a rule's @all */

struct acl_key {
	unsigned access; /* enum acl_access */
	size_t len;
	char *pat;
};

struct acl_rule {
	bool allow;
	uint32_t cats; /* ALL_CATS: @all; 0: by name */
	char name[CMD_MAX];
};

struct acl_user {
	char name[ACL_USER_MAX + 1];
	bool on, nopass;
	bool all;     /* on, every command, every lock name (acl.c settle_all) */
	bool secrets; /* the file gave it a password (> or #) */
	unsigned char (*pass)[32];
	unsigned npass;
	bool has_pg;
	unsigned char pg_of[32]; /* the digest pg was derived from */
	struct acl_pg_secret pg;
	struct acl_key *keys;
	unsigned nkeys;
	struct acl_rule *rules;
	unsigned nrules;
};

struct acl {
	struct acl_user *users;
	unsigned n;
};

#endif
