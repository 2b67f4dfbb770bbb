/*
 * server_int: what server.c shares with server_guard.c (the registry's
 * timeouts and protected mode), not for other modules: they use server.h.
 */
#ifndef LG_SERVER_INT_H
#define LG_SERVER_INT_H

#include "gateway/conn/server.h"

struct srv_guard;

/* server_guard.c: the sweep of --auth-timeout and --timeout (a timer
 * while either is on) and protected mode's counts. NULL on out of memory.
 * Freed by srv_guard_free (NULL is fine). */
struct srv_guard *srv_guard_new(struct srv *srv);
void srv_guard_free(struct srv_guard *g);

/* server.c: the registry's guard; one more client refused (INFO stats
 * rejected_connections). */
struct srv_guard *srv_guard_of(const struct srv *srv);
void srv_count_rejected(struct srv *srv);

#endif
