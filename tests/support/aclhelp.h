/*
 * aclhelp: what it_acl and it_acl_pg share — an ACL file written with a
 * given mode, the gateway's /metrics fetched, one counter read from it.
 */
#ifndef LG_ACLHELP_H
#define LG_ACLHELP_H

#include <stddef.h>
#include <sys/types.h>

/* Writes text to path (a new file each time: replaced by rename, as an
 * editor saving it would) with mode. Fails the test when it cannot. */
void acl_write(const char *path, const char *text, mode_t mode);

/* A path for this test's ACL file (under $TMPDIR or /tmp). */
void acl_path(char *out, size_t n, const char *name);

/* The body of GET /metrics on 127.0.0.1:port (static storage). */
const char *acl_metrics(int port);

/* The value of the sample line starting with series in /metrics text;
 * -1 when there is none. */
long long acl_metric(const char *text, const char *series);

#endif
