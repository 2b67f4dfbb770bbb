/*
 * gwproc: see gwproc.h.
 */
#include "tests/support/gwproc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* port on 127.0.0.1 if it is free now (0: the kernel's pick), else -1. */
static int bind_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (fd < 0)
		return -1;
	int got = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
				  getsockname(fd, (struct sockaddr *)&a, &len) == 0
			  ? ntohs(a.sin_port)
			  : -1;
	close(fd);
	return got;
}

/* A port below the kernel's ephemeral range (32768-60999 by default): the
 * kernel's own picks (another bind to port 0, a client's connect) cannot
 * take it between this check and the gateway's bind, as they could take a
 * port the kernel picked. */
int gp_free_port(void)
{
	static unsigned seed;
	if (seed == 0)
		seed = ((unsigned)getpid() * 2654435761u) ^ (unsigned)time(NULL);
	for (int tries = 0; tries < 64; tries++) {
		seed = seed * 1103515245u + 12345u;
		int port = bind_port(GP_PORT_LOW + (int)((seed >> 8) % GP_PORT_SPAN));
		if (port > 0)
			return port;
	}
	return bind_port(0);
}

bool gp_can_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* In a child: stdout and stderr (or only stderr) to log, /dev/null when
 * NULL. */
static void output_to(const char *log, bool stdout_too)
{
	int fd = open(log != NULL ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	dup2(fd, 2);
	if (stdout_too)
		dup2(fd, 1);
	if (fd > 2)
		close(fd);
}

pid_t gp_spawn(const char *const argv[], const char *log, bool moto, long open_files)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	output_to(log, true);
	if (open_files > 0) {
		struct rlimit rl = {(rlim_t)open_files, (rlim_t)open_files};
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(126);
	}
	if (moto) {
		setenv("AWS_ACCESS_KEY_ID", getenv("LG_AK"), 1);
		setenv("AWS_SECRET_ACCESS_KEY", getenv("LG_SK"), 1);
		setenv("AWS_ENDPOINT_URL_DYNAMODB", getenv("LG_MOTO"), 1);
		setenv("AWS_REGION", "us-east-1", 1);
	}
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* True when a PING on 127.0.0.1:port is answered with anything but
 * -LOADING (PONG, or -NOAUTH under --requirepass): the store is open. */
static bool answers_ping(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {1, 0};
	char reply[64] = "";
	bool ok = false;
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && write(fd, "PING\r\n", 6) == 6) {
		ssize_t n = read(fd, reply, sizeof(reply) - 1);
		ok = n > 0 && strncmp(reply, "-LOADING", 8) != 0;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int gp_wait_ready(pid_t pid, int port)
{
	for (int i = 0; i < 400; i++) {
		if (answers_ping(port)) {
			sleep_ms(20); /* let it reap that probe session */
			return 0;
		}
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return 1;
		sleep_ms(25);
	}
	return -1;
}

void gp_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Runs tests/moto_setup.py on endpoint and sets the variables it prints
 * (NAME=value lines); true when it succeeded. */
static bool moto_setup(const char *tests_dir, const char *endpoint, const char *log)
{
	char script[4096];
	int p[2];
	snprintf(script, sizeof(script), "%s/moto_setup.py", tests_dir);
	if (pipe(p) != 0)
		return false;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return false;
	}
	if (pid == 0) {
		output_to(log, false);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execlp("timeout", "timeout", "60", "python3", script, endpoint, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	FILE *in = fdopen(p[0], "r");
	char line[512];
	while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		char *eq = strchr(line, '=');
		if (eq != NULL && eq != line) {
			*eq = '\0';
			setenv(line, eq + 1, 1);
		}
	}
	if (in != NULL)
		fclose(in);
	else
		close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && getenv("LG_AK") != NULL &&
	       getenv("LG_SK") != NULL;
}

pid_t gp_serial_moto(const char *tests_dir, const char *log)
{
	char script[4096], port[16], endpoint[64];
	int n = gp_free_port();
	if (n < 0)
		return 0;
	snprintf(script, sizeof(script), "%s/moto_serial.py", tests_dir);
	snprintf(port, sizeof(port), "%d", n);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", n);
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		output_to(log, true);
		/* signatures are checked after moto_setup.py's 5 unsigned IAM calls */
		setenv("INITIAL_NO_AUTH_ACTION_COUNT", "5", 1);
		execlp("python3", "python3", script, "-H", "127.0.0.1", "-p", port, (char *)NULL);
		_exit(127);
	}
	/* up to 30 s for python3 to import moto and listen */
	bool up = false;
	for (int i = 0; i < 300 && !up; i++) {
		if ((up = gp_can_connect(n)))
			break;
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return 0;
		sleep_ms(100);
	}
	if (!up || !moto_setup(tests_dir, endpoint, log)) {
		gp_stop(pid);
		return 0;
	}
	setenv("LG_MOTO", endpoint, 1);
	return pid;
}
