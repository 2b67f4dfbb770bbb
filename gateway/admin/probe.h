/*
 * probe: `leasegate --probe [PATH] [options]`, a health check of a running
 * gateway from inside its container, for images without curl or a shell
 * (the Dockerfile's HEALTHCHECK). It reads the configuration as the
 * server does (flags, LEASEGATE_* variables, --config), sends `GET PATH`
 * (default /readyz) to the admin port on --bind (127.0.0.1 when --bind is
 * a wildcard address), and exits 0 when the answer is 200, 1 otherwise
 * (refused, another status, no answer within PROBE_TIMEOUT_MS), saying
 * why on stderr; the status line goes to stdout.
 *
 * Not here: the admin port itself (admin.c).
 */
#ifndef LG_PROBE_H
#define LG_PROBE_H

#define PROBE_TIMEOUT_MS 3000

/* argv[0] is "--probe"; argv[1], when it starts with '/', is the path;
 * the rest are server options. Returns the process's exit status. */
int probe_main(int argc, char **argv, char **envp);

#endif
