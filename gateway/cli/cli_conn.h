/*
 * cli_conn: a client subcommand's one connection to a leasegate gateway
 * (gateway/cli/). hiredis connects (TCP or a Unix socket, with a timeout)
 * and formats the commands; the replies, RESP2 or RESP3, are read by
 * resp_reader. The socket is close-on-exec, so a command the subcommand runs
 * never holds the connection (and so the lease) open after it, and has TCP
 * keepalive on, so that a gateway host that vanished is noticed while a
 * command waits.
 *
 * Not here: what is sent and what the replies mean (lock_cli).
 */
#ifndef LG_CLI_CONN_H
#define LG_CLI_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include "protocols/resp/resp_reader.h"

struct cli_conn;

/* Connects to socket_path when it is not empty, else to host:port, within
 * timeout_ms. NULL with err (errlen bytes) saying why. */
struct cli_conn *cli_conn_open(const char *host, int port, const char *socket_path, int timeout_ms,
			       char *err, size_t errlen) RESP_READER_WUR;

/* Closes the connection (the gateway then releases its leases). NULL is fine. */
void cli_conn_close(struct cli_conn *c);

/* The socket, to poll for POLLIN. */
int cli_conn_fd(const struct cli_conn *c);

/* Sends one command (argv[0..argc), NUL-terminated strings). False with
 * err when the connection is gone or the send does not go through within
 * the connect timeout. */
bool cli_conn_send(struct cli_conn *c, int argc, const char **argv, char *err,
		   size_t errlen) RESP_READER_WUR;

enum cli_recv {
	CLI_RECV_NONE = 0,    /* no whole reply has come yet */
	CLI_RECV_REPLY = 1,   /* *out: the caller's to free (resp_reply_free) */
	CLI_RECV_CLOSED = -1, /* the gateway closed the connection, or it broke: err */
	CLI_RECV_BAD = -2,    /* a reply that is not RESP: err */
};

/* The next reply, reading what the socket has now without blocking when
 * none is buffered (call again while it answers REPLY; poll when NONE). */
enum cli_recv cli_conn_recv(struct cli_conn *c, struct resp_reply **out, char *err,
			    size_t errlen) RESP_READER_WUR;

#endif
