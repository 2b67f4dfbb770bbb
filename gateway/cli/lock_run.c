/*
 * lock_run: the command run while the lease lasts (see lock_cli.h). One
 * poll loop watches the connection (a lock.lost push, the connection
 * closing, PING answers) and the signal descriptor (the command's end,
 * signals to forward), with one timer: the next PING, or, once the lease
 * is lost, the SIGKILL after the grace.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gateway/cli/lock_int.h"

/* How long LOCK.RELEASE may take before we leave (closing the connection
 * releases the lock too). */
#define RELEASE_TIMEOUT_MS 10000

struct run {
	struct lock_ctx *x;
	pid_t pid;
	int status; /* the command's, once reaped */
	bool exited;
	bool lost;
	bool killed;
	bool ping_out;	 /* a PING sent, not answered yet */
	int64_t timer;	 /* the next PING; once lost, the SIGKILL */
	int64_t ping_ms; /* a third of the lease */
};

/* The child: the signal mask from before, then the command. */
static void __attribute__((noreturn)) exec_command(struct lock_ctx *x)
{
	sigprocmask(SIG_SETMASK, &x->old_mask, NULL);
	execvp(x->o->cmd[0], x->o->cmd);
	int e = errno;
	fprintf(stderr, LOCK_MSG_PREFIX "%s: %s\n", x->o->cmd[0],
		e == ENOENT ? "command not found" : strerror(e));
	_exit(e == ENOENT ? LOCK_EXIT_NOT_FOUND : LOCK_EXIT_NOT_EXECUTABLE);
}

/* Stops the command: the lease is gone. Closing the connection tells a
 * gateway that still runs to release what it may still hold. */
static void lose(struct run *r, const char *why)
{
	const struct lock_opts *o = r->x->o;
	if (r->lost)
		return;
	r->lost = true;
	fprintf(stderr,
		LOCK_MSG_PREFIX "lost the lock %s (token %lld): %s; stopping the command "
				"(SIGTERM, SIGKILL after %lld ms)\n",
		o->name, (long long)r->x->token, why, (long long)o->grace_ms);
	cli_conn_close(r->x->conn);
	r->x->conn = NULL;
	if (!r->exited)
		kill(r->pid, SIGTERM);
	r->timer = lock_now_ms() + o->grace_ms;
}

/* A lock.lost push about our lease? Then reason is its reason. */
static bool lost_push(const struct run *r, const struct resp_reply *rep, const char **reason)
{
	if (rep->type != RESP_REPLY_PUSH || rep->n < 4)
		return false;
	const struct resp_reply *e = rep->elem;
	if (e[0].type != RESP_REPLY_STRING || strcmp(e[0].str, "lock.lost") != 0 ||
	    e[1].type != RESP_REPLY_STRING || strcmp(e[1].str, r->x->o->name) != 0 ||
	    e[2].type != RESP_REPLY_INT || e[2].num != r->x->token)
		return false;
	*reason = e[3].type == RESP_REPLY_STRING ? e[3].str : "?";
	return true;
}

static void on_conn(struct run *r)
{
	struct resp_reply *rep;
	char err[512], why[600];
	const char *reason;
	for (;;) {
		switch (cli_conn_recv(r->x->conn, &rep, err, sizeof(err))) {
		case CLI_RECV_NONE:
			return;
		case CLI_RECV_CLOSED:
			snprintf(why, sizeof(why),
				 "%s (the gateway releases a lease whose connection closes)", err);
			lose(r, why);
			return;
		case CLI_RECV_BAD:
			lose(r, err);
			return;
		case CLI_RECV_REPLY:
			break;
		}
		if (lost_push(r, rep, &reason)) {
			snprintf(why, sizeof(why), "the gateway says LOST %s", reason);
			resp_reply_free(rep);
			lose(r, why);
			return;
		}
		if (rep->type != RESP_REPLY_PUSH)
			r->ping_out = false; /* the only command in flight is PING */
		resp_reply_free(rep);
	}
}

static void on_timer(struct run *r)
{
	char err[512], why[600];
	if (r->lost) {
		if (!r->killed && !r->exited)
			kill(r->pid, SIGKILL);
		r->killed = true;
		return;
	}
	if (r->ping_out) {
		/* a gateway that cannot answer cannot renew either */
		snprintf(why, sizeof(why), "no answer to PING within %lld ms",
			 (long long)r->ping_ms);
		lose(r, why);
		return;
	}
	const char *ping[] = {"PING"};
	if (!cli_conn_send(r->x->conn, 1, ping, err, sizeof(err))) {
		lose(r, err);
		return;
	}
	r->ping_out = true;
	/* from now, not from the last deadline: a pause of this process (^Z)
	 * is not the gateway's silence */
	r->timer = lock_now_ms() + r->ping_ms;
}

static void on_signal(struct run *r)
{
	struct signalfd_siginfo si;
	while (read(r->x->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (!r->exited && waitpid(r->pid, &r->status, WNOHANG) == r->pid)
				r->exited = true;
		} else if ((int)si.ssi_code <= 0 && !r->exited) {
			/* Sent by a process (kill, timeout, a supervisor): forwarded.
			 * One the kernel sent (a terminal's ^C, a hangup) went to
			 * the whole foreground process group, the command too. */
			kill(r->pid, (int)si.ssi_signo);
		}
	}
}

/* LOCK.RELEASE at the command's end; 0, or LOCK_EXIT_LOST when the reply
 * says the lease had ended before it. */
static int release(struct run *r)
{
	struct lock_ctx *x = r->x;
	char token[24], err[512], text[512];
	const char *reason;
	snprintf(token, sizeof(token), "%lld", (long long)x->token);
	const char *argv[] = {"LOCK.RELEASE", x->o->name, token};
	if (!cli_conn_send(x->conn, 3, argv, err, sizeof(err))) {
		fprintf(stderr, LOCK_MSG_PREFIX "LOCK.RELEASE: %s\n", err);
		return 0;
	}
	int64_t deadline = lock_now_ms() + RELEASE_TIMEOUT_MS;
	for (;;) {
		struct resp_reply *rep = NULL;
		int sig;
		int64_t left = deadline - lock_now_ms();
		enum lock_wait w =
			lock_await(x, left > 0 ? (int)left : 0, &rep, &sig, err, sizeof(err));
		if (w == LOCK_WAIT_SIGNAL)
			continue; /* the command is gone: nothing to forward to */
		if (w != LOCK_WAIT_REPLY) {
			/* leaving closes the connection, and that releases */
			fprintf(stderr, LOCK_MSG_PREFIX "LOCK.RELEASE %s: %s\n", x->o->name,
				w == LOCK_WAIT_TIMEOUT ? "no answer" : err);
			return 0;
		}
		int rc = -1;
		if (lost_push(r, rep, &reason)) {
			fprintf(stderr,
				LOCK_MSG_PREFIX
				"lost the lock %s (token %lld) before the command ended: LOST %s\n",
				x->o->name, (long long)x->token, reason);
			rc = LOCK_EXIT_LOST;
		} else if (rep->type == RESP_REPLY_INT && rep->num == 1) {
			rc = 0;
		} else if ((rep->type == RESP_REPLY_INT && rep->num == 0) ||
			   (rep->type == RESP_REPLY_ERROR && strncmp(rep->str, "LOST", 4) == 0)) {
			/* the lease had ended before the command did */
			fprintf(stderr,
				LOCK_MSG_PREFIX "lock %s (token %lld) was no longer held when the "
						"command ended: LOCK.RELEASE answered %s\n",
				x->o->name, (long long)x->token,
				resp_reply_text(rep, text, sizeof(text)));
			rc = LOCK_EXIT_LOST;
		} else if (rep->type != RESP_REPLY_PUSH) {
			/* leaving closes the connection, and that releases */
			fprintf(stderr, LOCK_MSG_PREFIX "LOCK.RELEASE %s: %s\n", x->o->name,
				resp_reply_text(rep, text, sizeof(text)));
			rc = 0;
		}
		resp_reply_free(rep);
		if (rc >= 0)
			return rc;
	}
}

static int exit_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int lock_run(struct lock_ctx *x)
{
	const struct lock_opts *o = x->o;
	char token[24];
	snprintf(token, sizeof(token), "%lld", (long long)x->token);
	if (setenv("LEASEGATE_LOCK", o->name, 1) != 0 || setenv("LEASEGATE_TOKEN", token, 1) != 0) {
		fprintf(stderr, LOCK_MSG_PREFIX "cannot set the environment: %s\n",
			strerror(errno));
		return LOCK_EXIT_UNAVAILABLE;
	}
	fflush(NULL);
	struct run r = {.x = x, .ping_ms = o->lease_ms / 3};
	r.pid = fork();
	if (r.pid < 0) {
		fprintf(stderr, LOCK_MSG_PREFIX "cannot start %s: %s\n", o->cmd[0],
			strerror(errno));
		return LOCK_EXIT_UNAVAILABLE;
	}
	if (r.pid == 0)
		exec_command(x);
	r.timer = lock_now_ms() + r.ping_ms;
	while (!r.exited) {
		int64_t left = r.timer - lock_now_ms();
		bool timer_on = !(r.lost && r.killed);
		struct pollfd p[2] = {{x->sigfd, POLLIN, 0},
				      {x->conn ? cli_conn_fd(x->conn) : -1, POLLIN, 0}};
		int n = poll(p, 2, !timer_on ? -1 : left > 0 ? (int)left : 0);
		if (n < 0 && errno != EINTR) {
			lose(&r, strerror(errno));
			continue;
		}
		if (p[0].revents & POLLIN)
			on_signal(&r);
		if (x->conn && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			on_conn(&r);
		if (timer_on && lock_now_ms() >= r.timer)
			on_timer(&r);
	}
	if (r.lost)
		return LOCK_EXIT_LOST;
	int rc = release(&r);
	return rc != 0 ? rc : exit_status(r.status);
}
