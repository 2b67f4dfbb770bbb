/*
 * log: the sink (see log.h). Lines are formatted into one buffer and
 * written with one write(2), so concurrent writers to the same file
 * (replicas sharing a volume) do not interleave within a line.
 */
#include "gateway/obs/log.h"

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
				 errno == ENOENT   ? " (create its directory first)"
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

/* Appends s to line (escaped for JSON, or with control bytes as spaces;
 * in text, quoted when quote and it holds a space, '=' or '"'). */
static size_t put_str(char *line, size_t len, size_t cap, const char *s, bool json, bool quote)
{
	bool q = !json && quote && (s[0] == '\0' || strpbrk(s, " =\"") != NULL);
	if (q && len < cap)
		line[len++] = '"';
	for (; *s && len + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if ((json || q) && (c == '"' || c == '\\')) {
			line[len++] = '\\';
			line[len++] = (char)c;
		} else if (c < 0x20) {
			len += (size_t)snprintf(line + len, 8, json ? "\\u%04x" : " ", c);
		} else {
			line[len++] = (char)c;
		}
	}
	if (q && len < cap)
		line[len++] = '"';
	return len;
}

size_t log_format_line(char *line, size_t cap, bool json, enum log_level level, const char *ts,
		       const char *msg, const struct log_field *f, size_t n)
{
	/* room kept for the closing bytes: "}\n" */
	size_t end = cap - 4, len;
	len = (size_t)snprintf(line, end,
			       json ? "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"" : "%s %-5s ", ts,
			       level_names[level]);
	if (len >= end)
		len = end - 1;
	len = put_str(line, len, end, msg, json, false);
	if (json && len < end)
		line[len++] = '"';
	for (size_t i = 0; i < n && len + 16 < end; i++) {
		if (f[i].key[0] == '?' && f[i].str == NULL && f[i].num == 0)
			continue;
		const char *key = f[i].key[0] == '?' ? f[i].key + 1 : f[i].key;
		len += (size_t)snprintf(line + len, end - len, json ? ",\"%s\":" : " %s=", key);
		if (len >= end)
			break;
		if (f[i].str != NULL) {
			if (json)
				line[len++] = '"';
			len = put_str(line, len, end, f[i].str, json, true);
			if (json && len < end)
				line[len++] = '"';
		} else {
			len += (size_t)snprintf(line + len, end - len, "%lld", f[i].num);
		}
		if (len >= end)
			len = end - 1;
	}
	if (json)
		line[len++] = '}';
	line[len++] = '\n';
	line[len] = '\0';
	return len;
}

static void timestamp(char *ts, size_t n)
{
	struct timeval tv;
	struct tm tm;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	size_t k = strftime(ts, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + k, n - k, ".%03dZ", (int)(tv.tv_usec / 1000));
}

static void vlog(enum log_level level, const struct log_field *f, size_t n, const char *fmt,
		 va_list ap)
{
	char msg[1024], line[4096], ts[40];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	timestamp(ts, sizeof(ts));
	size_t len = log_format_line(line, sizeof(line), sink.json, level, ts, msg, f, n);
	ssize_t w = write(sink.fd, line, len);
	(void)w; /* nowhere to report a failed log write */
}

void log_fields(enum log_level level, const struct log_field *f, size_t n, const char *fmt, ...)
{
	if (!log_enabled(level) || level > LOG_LVL_ERROR)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, f, n, fmt, ap);
	va_end(ap);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (!log_enabled(level) || level > LOG_LVL_ERROR)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, NULL, 0, fmt, ap);
	va_end(ap);
}
