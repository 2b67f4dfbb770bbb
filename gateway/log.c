/*
 * log: the sink (see log.h). Lines are formatted into one buffer and
 * written with one write(2), so concurrent writers to the same file
 * (replicas sharing a volume) do not interleave within a line.
 */
#include "gateway/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static struct {
	int fd; /* 2 = stderr */
	char path[512];
	enum log_level min;
	bool json;
} sink = {2, "", LOG_LVL_INFO, false};

static const char *const level_names[] = {"debug", "info", "warn", "error"};

static int open_path(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

bool log_open(const char *path, enum log_level min_level, bool json, char *err, size_t errlen)
{
	int fd = 2;
	if (path && *path) {
		if (strlen(path) >= sizeof(sink.path)) {
			snprintf(err, errlen, "the path is longer than %zu bytes",
				 sizeof(sink.path) - 1);
			return false;
		}
		fd = open_path(path);
		if (fd < 0) {
			snprintf(err, errlen, "cannot open %s for appending: %s%s", path,
				 strerror(errno),
				 errno == ENOENT	 ? " (create its directory first)"
				 : errno == EACCES ? " (this user may not write there)"
						   : "");
			return false;
		}
	}
	if (sink.fd != 2)
		close(sink.fd);
	sink.fd = fd;
	snprintf(sink.path, sizeof(sink.path), "%s", path ? path : "");
	sink.min = min_level;
	sink.json = json;
	return true;
}

bool log_reopen(void)
{
	if (!sink.path[0])
		return true;
	int fd = open_path(sink.path);
	if (fd < 0)
		return false;
	if (sink.fd != 2)
		close(sink.fd);
	sink.fd = fd;
	return true;
}

void log_close(void)
{
	if (sink.fd != 2)
		close(sink.fd);
	sink.fd = 2;
	sink.path[0] = '\0';
}

bool log_enabled(enum log_level level)
{
	return level >= sink.min;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (!log_enabled(level) || level > LOG_LVL_ERROR)
		return;
	char msg[1024], line[2300], ts[40];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	struct timeval tv;
	struct tm tm;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%03dZ", (int)(tv.tv_usec / 1000));

	size_t len = (size_t)snprintf(line, sizeof(line),
				      sink.json ? "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\""
						: "%s %-5s ",
				      ts, level_names[level]);
	for (const char *s = msg; *s && len < sizeof(line) - 16; s++) {
		unsigned char c = (unsigned char)*s;
		if (sink.json && (c == '"' || c == '\\')) {
			line[len++] = '\\';
			line[len++] = (char)c;
		} else if (c < 0x20) {
			len += (size_t)snprintf(line + len, 8, sink.json ? "\\u%04x" : " ", c);
		} else {
			line[len++] = (char)c;
		}
	}
	if (sink.json) {
		line[len++] = '"';
		line[len++] = '}';
	}
	line[len++] = '\n';
	ssize_t w = write(sink.fd, line, len);
	(void)w; /* nowhere to report a failed log write */
}
