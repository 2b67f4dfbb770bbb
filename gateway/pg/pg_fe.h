/*
 * pg_fe: the PostgreSQL front-end — the protocol 3.0 on the connection
 * layer (gateway/conn) and the lease-session layer (gateway/lease):
 * startup and authentication (trust, SCRAM-SHA-256, MD5, cleartext, through
 * gateway/conn/auth.h), CancelRequest, simple and extended query, and the
 * small SQL subset of pg_sql.h run as lease operations. The only part of
 * the gateway that includes protocols/pg.
 *
 * Not here: lease rules (gateway/lease), sockets (gateway/conn), password
 * verification (gateway/conn/auth).
 */
#ifndef LG_PG_FE_H
#define LG_PG_FE_H

#include <stdbool.h>
#include <stddef.h>

struct srv;
struct cfg;
struct lsvc;
struct auth_pg;
struct pg_fe;
struct buf;

/* A front-end on the registry srv (its connections count against the
 * registry's maxclients), with leases from svc and users from auth (all
 * must outlive it). NULL on out-of-memory. */
struct pg_fe *pg_fe_new(struct srv *srv, const struct cfg *cfg, struct lsvc *svc,
			const struct auth_pg *auth) __attribute__((warn_unused_result));
/* Listens on cfg's bind:pg_port. false with err. */
bool pg_fe_listen(struct pg_fe *fe, char *err, size_t errlen) __attribute__((warn_unused_result));
/* While ready(arg, &why) is false (the lock store is not open yet), a
 * session's startup is refused with FATAL 57P03 ("the database system is
 * starting up", which drivers and pools retry), naming why. */
void pg_fe_set_gate(struct pg_fe *fe, bool (*ready)(void *arg, const char **why), void *arg);
/* The bound port, 0 if none. */
int pg_fe_port(const struct pg_fe *fe);
/* The server stops (SIGTERM): every idle session (ready, no statement in
 * flight) is ended at once with FATAL 57P01 "terminating connection due
 * to administrator command", as PostgreSQL ends its backends at a fast
 * shutdown, and its locks are released; a session with a statement in
 * flight is answered first (a wait is cancelled with 57P01). Returns how
 * many were ended. */
size_t pg_fe_terminate(struct pg_fe *fe);
/* After srv_free (which closes the sessions). */
void pg_fe_free(struct pg_fe *fe);

/* name (lower case) is a PostgreSQL function whose calls the ACL check
 * names so ("pg_advisory_lock", "leasegate.acquire"): an ACL file's
 * +name/-name rule on it is taken (gateway/conn/acl.h's acl_known_fn,
 * beside the Redis command table's). */
bool pg_fn_acl_known(const char *name);
/* Appends the reference page of the PostgreSQL functions (Markdown, one
 * table row per function and argument list, from the function table):
 * docs/reference/functions.md. */
void pg_fn_doc_markdown(struct buf *out);

#endif
