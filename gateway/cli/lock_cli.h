/*
 * gateway/cli: the leasegate binary's client subcommands. `leasegate
 * SUBCOMMAND ...` runs one of them instead of the server (main.c looks at
 * argv[1] before the server reads its options); they talk to a running
 * gateway over the Redis protocol, as any application does, and share
 * nothing with the server but the binary and its duration syntax.
 *
 * lock_cli: `leasegate lock [options] NAME [--] command [args...]` runs a
 * command while holding the lock NAME, as flock(1), `etcdctl lock` and
 * `consul lock` do: connect, AUTH, HELLO 3, LOCK.ACQUIRE; run the command
 * with LEASEGATE_LOCK and LEASEGATE_TOKEN in its environment; keep the
 * connection (the gateway renews the lease while it lives) and watch it; on
 * a lost lease stop the command (SIGTERM, SIGKILL after the grace); at its
 * end LOCK.RELEASE and exit with its status. lock_cli_usage() is the
 * reference of the options and exit codes.
 *
 * Not here: the Redis protocol's bytes (resp_reader, cli_conn), the lease
 * rules (the gateway's).
 */
#ifndef LG_LOCK_CLI_H
#define LG_LOCK_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes besides the command's own status (sysexits.h's numbers). */
enum lock_exit {
	LOCK_EXIT_USAGE = 64,	     /* bad options */
	LOCK_EXIT_UNAVAILABLE = 69,  /* no connection, a protocol or server error */
	LOCK_EXIT_NOT_ACQUIRED = 75, /* held elsewhere (--no-wait), or --wait ran out */
	LOCK_EXIT_LOST = 76,	     /* the lease was lost while the command ran */
	LOCK_EXIT_NOT_EXECUTABLE = 126,
	LOCK_EXIT_NOT_FOUND = 127,
};

struct lock_opts {
	const char *host;     /* -h, LEASEGATE_HOST, 127.0.0.1 */
	int64_t port;	      /* -p, LEASEGATE_PORT, 6379 */
	const char *socket;   /* -s: a Unix socket instead of host:port */
	const char *password; /* -a, LEASEGATE_PASSWORD */
	const char *user;     /* --user: AUTH user password */
	const char *holder;   /* --holder: the item's holder label */
	int64_t lease_ms;     /* --lease, 30 s */
	int64_t wait_ms;      /* --wait: -1 forever (the default), 0 try once */
	int64_t grace_ms;     /* --grace: SIGTERM -> SIGKILL, 10 s */
	const char *name;     /* the lock */
	char **cmd;	      /* the command, NULL-terminated */
};

enum lock_parse {
	LOCK_PARSE_RUN,	  /* *o is complete */
	LOCK_PARSE_HELP,  /* --help */
	LOCK_PARSE_USAGE, /* err says what is wrong */
};

/* Reads argv[1..argc) (argv[0] is "lock") and the fallbacks of envp (a
 * NULL-terminated "NAME=value" array) into *o, whose strings then point
 * into argv and envp. */
enum lock_parse lock_cli_parse(struct lock_opts *o, int argc, char **argv, char *const *envp,
			       char *err, size_t errlen) __attribute__((warn_unused_result));

/* `leasegate lock --help`. */
void lock_cli_usage(FILE *f);

/* The subcommand: argv[0] is "lock". Returns the process's exit status. */
int lock_cli_main(int argc, char **argv, char *const *envp);

#endif
