/*
 * lock_int: what lock_cli.c (options, connecting, acquiring) and
 * lock_run.c (running the command while the lease lasts) share. Not for
 * other modules: lock_cli.h is the interface.
 */
#ifndef LG_LOCK_INT_H
#define LG_LOCK_INT_H

#include <signal.h>
#include <stdint.h>

#include "gateway/cli/cli_conn.h"
#include "gateway/cli/lock_cli.h"

#define LOCK_MSG_PREFIX "leasegate lock: "

struct lock_ctx {
	const struct lock_opts *o;
	struct cli_conn *conn; /* NULL once closed */
	int sigfd;	       /* signalfd of the signals below, blocked */
	sigset_t old_mask;     /* the mask before; the command gets it back */
	int64_t token;
};

/* The signals the subcommand takes through sigfd. */
void lock_signals(sigset_t *set);

enum lock_wait {
	LOCK_WAIT_REPLY,   /* *rep: the next reply (pushes too) */
	LOCK_WAIT_SIGNAL,  /* *sig: SIGINT, SIGTERM or SIGHUP came */
	LOCK_WAIT_TIMEOUT, /* nothing within timeout_ms */
	LOCK_WAIT_FAILED,  /* the connection closed or broke: err */
};

/* Waits up to timeout_ms (-1: no limit) for the next reply on x->conn,
 * or for a signal to stop for (SIGCHLD is not one). */
enum lock_wait lock_await(struct lock_ctx *x, int timeout_ms, struct resp_reply **rep, int *sig,
			  char *err, size_t errlen);

/* Runs the command while the lease lasts, releases it, and returns the
 * exit status (the command's, or LOCK_EXIT_*). */
int lock_run(struct lock_ctx *x);

/* Milliseconds on the monotonic clock. */
int64_t lock_now_ms(void);

#endif
