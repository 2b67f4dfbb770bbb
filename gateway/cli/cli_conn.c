/*
 * cli_conn: see cli_conn.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "gateway/cli/cli_conn.h"

/* TCP keepalive: a silent peer is given up after IDLE + CNT * INTVL seconds. */
#define KEEPALIVE_IDLE_S  15
#define KEEPALIVE_INTVL_S 5
#define KEEPALIVE_CNT	  3

struct cli_conn {
	redisContext *ctx; /* owns the socket */
	int fd;
	int timeout_ms;
	struct resp_reader *rd;
};

static void keepalive(int fd)
{
	int on = 1, idle = KEEPALIVE_IDLE_S, intvl = KEEPALIVE_INTVL_S, cnt = KEEPALIVE_CNT;
	/* best effort: without it a vanished host is only noticed by the PINGs */
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

struct cli_conn *cli_conn_open(const char *host, int port, const char *socket_path, int timeout_ms,
			       char *err, size_t errlen)
{
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	bool unix_socket = socket_path != NULL && socket_path[0] != '\0';
	redisContext *ctx = unix_socket ? redisConnectUnixWithTimeout(socket_path, tv)
					: redisConnectWithTimeout(host, port, tv);
	char where[512];
	if (unix_socket)
		snprintf(where, sizeof(where), "%s", socket_path);
	else
		snprintf(where, sizeof(where), "%s:%d", host, port);
	if (ctx == NULL || ctx->err) {
		snprintf(err, errlen, "cannot connect to %s: %s", where,
			 ctx ? ctx->errstr : "out of memory");
		redisFree(ctx);
		return NULL;
	}
	struct cli_conn *c = calloc(1, sizeof(*c));
	if (c == NULL || (c->rd = resp_reader_new()) == NULL ||
	    fcntl(ctx->fd, F_SETFD, FD_CLOEXEC) != 0) {
		snprintf(err, errlen, "cannot set up the connection to %s: %s", where,
			 c ? strerror(errno) : "out of memory");
		redisFree(ctx);
		if (c)
			resp_reader_free(c->rd);
		free(c);
		return NULL;
	}
	if (!unix_socket)
		keepalive(ctx->fd);
	c->ctx = ctx;
	c->fd = ctx->fd;
	c->timeout_ms = timeout_ms;
	return c;
}

void cli_conn_close(struct cli_conn *c)
{
	if (c == NULL)
		return;
	redisFree(c->ctx);
	resp_reader_free(c->rd);
	free(c);
}

int cli_conn_fd(const struct cli_conn *c)
{
	return c->fd;
}

bool cli_conn_send(struct cli_conn *c, int argc, const char **argv, char *err, size_t errlen)
{
	char *cmd = NULL;
	int len = redisFormatCommandArgv(&cmd, argc, argv, NULL);
	if (len < 0) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	size_t off = 0;
	bool ok = true;
	while (off < (size_t)len) {
		/* MSG_NOSIGNAL: a gateway gone is an error here, not a SIGPIPE */
		ssize_t w = send(c->fd, cmd + off, (size_t)len - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		struct pollfd p = {c->fd, POLLOUT, 0};
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    poll(&p, 1, c->timeout_ms) > 0)
			continue;
		snprintf(err, errlen, "cannot send %s to the gateway: %s", argv[0],
			 w < 0 && errno != EAGAIN ? strerror(errno) : "timed out");
		ok = false;
		break;
	}
	redisFreeCommand(cmd);
	return ok;
}

enum cli_recv cli_conn_recv(struct cli_conn *c, struct resp_reply **out, char *err, size_t errlen)
{
	for (;;) {
		switch (resp_reader_next(c->rd, out)) {
		case RESP_READ_REPLY:
			return CLI_RECV_REPLY;
		case RESP_READ_ERROR:
			snprintf(err, errlen, "%s", resp_reader_error(c->rd));
			return CLI_RECV_BAD;
		case RESP_READ_MORE:
			break;
		}
		char buf[16384];
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return CLI_RECV_NONE;
		if (n <= 0) {
			snprintf(err, errlen, "%s",
				 n == 0 ? "the gateway closed the connection" : strerror(errno));
			return CLI_RECV_CLOSED;
		}
		if (resp_reader_feed(c->rd, buf, (size_t)n) == RESP_READ_ERROR) {
			snprintf(err, errlen, "%s", resp_reader_error(c->rd));
			return CLI_RECV_BAD;
		}
	}
}
