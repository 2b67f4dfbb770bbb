/*
 * probe: one HTTP/1.0 GET to the admin port, its status line checked
 * (probe.h). Blocking sockets with a deadline: this is a process of its
 * own, not the server's event loop.
 */
#include "gateway/admin/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gateway/config.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for events or the deadline passes. */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, (int)left);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* A wildcard --bind is reached on the loopback address of its family. */
static const char *probe_host(const char *bind)
{
	if (bind[0] == '\0' || strcmp(bind, "0.0.0.0") == 0 || strcmp(bind, "*") == 0)
		return "127.0.0.1";
	if (strcmp(bind, "::") == 0)
		return "::1";
	return bind;
}

static int connect_to(const char *host, int port, long long deadline, char *err, size_t errlen)
{
	char service[16];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	snprintf(service, sizeof(service), "%d", port);
	int rc = getaddrinfo(host, service, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (rc != 0 && errno == EINPROGRESS) {
		int soerr = 0;
		socklen_t len = sizeof(soerr);
		if (wait_fd(fd, POLLOUT, deadline) <= 0)
			soerr = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
			soerr = errno;
		errno = soerr;
		rc = soerr == 0 ? 0 : -1;
	}
	if (rc != 0) {
		snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends the request and reads up to the end of the status line into line. */
static bool exchange(int fd, const char *path, long long deadline, char *line, size_t len,
		     char *err, size_t errlen)
{
	char req[1200];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
	size_t sent = 0;
	while (sent < (size_t)n) {
		if (wait_fd(fd, POLLOUT, deadline) <= 0) {
			snprintf(err, errlen, "request not sent within %d ms", PROBE_TIMEOUT_MS);
			return false;
		}
		ssize_t w = send(fd, req + sent, (size_t)n - sent, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(err, errlen, "send: %s", strerror(errno));
			return false;
		}
		sent += w > 0 ? (size_t)w : 0;
	}
	size_t got = 0;
	while (got + 1 < len && memchr(line, '\n', got) == NULL) {
		if (wait_fd(fd, POLLIN, deadline) <= 0) {
			snprintf(err, errlen, "no answer within %d ms", PROBE_TIMEOUT_MS);
			return false;
		}
		ssize_t r = recv(fd, line + got, len - 1 - got, 0);
		if (r == 0)
			break;
		if (r < 0 && errno != EAGAIN && errno != EINTR) {
			snprintf(err, errlen, "recv: %s", strerror(errno));
			return false;
		}
		got += r > 0 ? (size_t)r : 0;
	}
	line[got] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (line[0] == '\0') {
		snprintf(err, errlen, "the connection closed without an answer");
		return false;
	}
	return true;
}

int probe_main(int argc, char **argv, char **envp)
{
	static struct cfg cfg;
	char err[512], line[256];
	const char *path = "/readyz";
	if (argc > 1 && argv[1][0] == '/') {
		path = argv[1];
		argv++;
		argc--;
	}
	if (strlen(path) > 1024 || strpbrk(path, " \r\n") != NULL) {
		fprintf(stderr, "leasegate --probe: bad path\n");
		return 1;
	}
	/* argv[0] stands for the program name cfg_load skips */
	switch (cfg_load(&cfg, argc, argv, envp, err, sizeof(err))) {
	case CFG_OK:
		break;
	case CFG_ERROR:
		fprintf(stderr, "leasegate --probe: %s\n", err);
		return 1;
	default:
		fprintf(stderr, "usage: leasegate --probe [/path] [server options]\n");
		return 1;
	}
	if (cfg.admin_port == 0) {
		fprintf(stderr, "leasegate --probe: the admin port is off (--admin-port 0)\n");
		return 1;
	}
	long long deadline = now_ms() + PROBE_TIMEOUT_MS;
	const char *host = probe_host(cfg.bind);
	int fd = connect_to(host, (int)cfg.admin_port, deadline, err, sizeof(err));
	bool ok = fd >= 0 && exchange(fd, path, deadline, line, sizeof(line), err, sizeof(err));
	if (fd >= 0)
		close(fd);
	if (!ok) {
		fprintf(stderr, "leasegate --probe: %s\n", err);
		return 1;
	}
	printf("%s\n", line);
	int major, minor, status;
	if (sscanf(line, "HTTP/%d.%d %d", &major, &minor, &status) != 3 || status != 200) {
		fprintf(stderr, "leasegate --probe: GET %s on %s:%lld answered: %s\n", path, host,
			(long long)cfg.admin_port, line);
		return 1;
	}
	return 0;
}
